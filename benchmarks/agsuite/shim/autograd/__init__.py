"""A stand-in for HIPS autograd's public API, mapped onto jittape (harness only).

autograd's test files import this package; every name they use either maps to a jittape
function (``grad``, ``value_and_grad``, ``jacobian``, ``elementwise_grad`` and the VJP/JVP
makers through ``jittape.record(...).vjp`` and ``jittape.jvp``) or raises
:class:`agsuite_checks.OutOfScope` with the reason there is no jittape equivalent.
``tuple``, ``list`` and ``dict`` are Python's own containers.
"""

import builtins

import numpy as _np

import jittape
from agsuite_checks import argnums_of, count_call, is_complex, out_of_scope, STATE

tuple = builtins.tuple
list = builtins.list
dict = builtins.dict



def _real_only(args, what):
    if is_complex(args):
        out_of_scope(f"complex numbers ({what} of a complex argument)")


def _note_nested(args):
    from jittape.numpy.active import Active
    if any(isinstance(a, Active) for a in args):
        STATE["nested"] = True


def grad(fun, argnum=0):
    """autograd.grad -> jittape.grad(fun, argnums)."""
    g = jittape.grad(fun, argnums=argnums_of(argnum))

    def grad_fun(*args, **kwargs):
        _real_only(args, "grad")
        _note_nested(args)
        count_call()
        return g(*args, **kwargs)
    return grad_fun


def value_and_grad(fun, argnum=0):
    """autograd.value_and_grad -> jittape.value_and_grad(fun, argnums)."""
    vg = jittape.value_and_grad(fun, argnums=argnums_of(argnum))

    def value_and_grad_fun(*args, **kwargs):
        _real_only(args, "value_and_grad")
        _note_nested(args)
        count_call()
        return vg(*args, **kwargs)
    return value_and_grad_fun


def jacobian(fun, argnum=0):
    """autograd.jacobian -> jittape.jacobian(fun, argnums)."""
    jac = jittape.jacobian(fun, argnums=argnums_of(argnum))

    def jacobian_fun(*args, **kwargs):
        _real_only(args, "jacobian")
        _note_nested(args)
        count_call()
        return jac(*args, **kwargs)
    return jacobian_fun


def _xs(args, argnum):
    nums = argnums_of(argnum)
    return (args[nums],) if isinstance(nums, int) else builtins.tuple(args[n] for n in nums)


def _of_differentiated(fun, args, kwargs, nums):
    """``fun`` as a function of its differentiated arguments only (the others fixed)."""
    idx = (nums,) if isinstance(nums, int) else nums

    def g(*dargs):
        a = builtins.list(args)
        for n, d in zip(idx, dargs):
            a[n] = d
        return fun(*a, **kwargs)
    return g


def make_vjp(fun, argnum=0):
    """autograd.make_vjp -> jittape.record(fun, ..., argnums).vjp: returns (vjp, value).
    Inside a recording (an active argument or cotangent: nested differentiation), the
    pullback of jittape.vjp, which records there."""
    nums = argnums_of(argnum)

    def vjp_maker(*args, **kwargs):
        _real_only(args, "make_vjp")
        _note_nested(args)
        count_call()
        xs = _xs(args, argnum)
        g = _of_differentiated(fun, args, kwargs, nums)

        def nested(w):
            gs = jittape.vjp(g, *xs)[1](w)
            return gs[0] if isinstance(nums, int) else gs
        if _active(args):
            return nested, jittape.vjp(g, *xs)[0]
        tape = jittape.record(fun, *args, argnums=nums, **kwargs)
        return (lambda w: nested(w) if _active([w]) else tape.vjp(xs, w)[1]), tape.value(*xs)
    return vjp_maker


def _active(values):
    from jittape.numpy.active import Active
    stack = builtins.list(values)
    while stack:
        v = stack.pop()
        if isinstance(v, Active):
            return True
        if isinstance(v, (builtins.tuple, builtins.list)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
    return False


def make_jvp(fun, argnum=0):
    """autograd.make_jvp -> jittape.jvp: ``make_jvp(f)(x)(v)`` is ``(f(x), J v)``."""
    nums = argnums_of(argnum)

    def jvp_maker(*args, **kwargs):
        _real_only(args, "make_jvp")
        g = _of_differentiated(fun, args, kwargs, nums)

        def jvp(v):
            count_call()
            return jittape.jvp(g, _xs(args, nums), (v,) if isinstance(nums, int) else v)
        return jvp
    return jvp_maker


def elementwise_grad(fun, argnum=0):
    """autograd.elementwise_grad: the VJP with a cotangent of ones (jittape.record().vjp)."""
    def egrad(*args, **kwargs):
        vjp, value = make_vjp(fun, argnum)(*args, **kwargs)
        return vjp(_np.ones(_np.shape(value)))
    return egrad


def tensor_jacobian_product(fun, argnum=0):
    """autograd.tensor_jacobian_product: the Jacobian of ``tensordot(V, fun(*args), ndim(V))``
    (``V`` the last positional argument), here with jittape.jacobian."""
    def vector_dot_fun(*args, **kwargs):
        *fargs, vector = args
        return _np.tensordot(vector, fun(*fargs, **kwargs), axes=_np.ndim(vector))
    return jacobian(vector_dot_fun, argnum)


vector_jacobian_product = tensor_jacobian_product


def _no_equivalent(name, reason):
    def stub(*args, **kwargs):
        out_of_scope(f"autograd.{name}: {reason}")
    stub.__name__ = name
    return stub


# autograd's second-order operators, by autograd's own definitions in terms of the first-order
# ones above (jittape nests them: jittape.api.nesting)
def hessian(fun, argnum=0):
    """autograd.hessian: jacobian(jacobian(fun))."""
    return jacobian(jacobian(fun, argnum), argnum)


def make_hvp(fun, argnum=0):
    """autograd.make_hvp: the VJP of grad(fun) at x, and grad(fun)(x)."""
    return make_vjp(grad(fun, argnum), argnum)


def hessian_tensor_product(fun, argnum=0):
    """autograd.hessian_tensor_product: grad of tensordot(grad(fun)(*args), V, ndim(V))."""
    fun_grad = grad(fun, argnum)

    def vector_dot_grad(*args, **kwargs):
        *fargs, vector = args
        return _np.tensordot(fun_grad(*fargs, **kwargs), vector, _np.ndim(vector))
    return grad(vector_dot_grad, argnum)


hessian_vector_product = hessian_tensor_product


def make_ggnvp(f, g=lambda x: 1.0 / 2 * _np.sum(x ** 2, axis=-1), f_argnum=0):
    """autograd.make_ggnvp: v -> J^T H_g J v, J the Jacobian of f (vjp of the vjp: a jvp)."""
    def maker(*args, **kwargs):
        f_vjp, f_x = make_vjp(f, f_argnum)(*args, **kwargs)
        g_hvp, grad_g_x = make_vjp(grad(g))(f_x)
        f_jvp, _ = make_vjp(f_vjp)(_np.zeros_like(grad_g_x))
        return lambda v: f_vjp(g_hvp(f_jvp(v)))
    return maker


grad_and_aux = _no_equivalent("grad_and_aux", "no jittape equivalent (no has_aux option)")
checkpoint = _no_equivalent("checkpoint", "no jittape equivalent (tapes keep every value)")
holomorphic_grad = _no_equivalent("holomorphic_grad", "complex numbers")
multigrad_dict = _no_equivalent("multigrad_dict", "no jittape equivalent")
deriv = grad
primitive = _no_equivalent("primitive", "no jittape API for user-defined derivative rules")
defvjp = _no_equivalent("defvjp", "no jittape API for user-defined derivative rules")
defjvp = _no_equivalent("defjvp", "no jittape API for user-defined derivative rules")

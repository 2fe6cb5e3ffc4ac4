"""Complex arguments and outputs of ``grad``, ``value_and_grad``, ``jvp`` and ``vjp``, with
JAX's conventions.

A complex argument ``z = x + iy`` is differentiated as the real pair ``(x, y)``: the
function is called with ``pair[..., 0] + 1j * pair[..., 1]`` (an active complex value,
:mod:`jittape.numpy.complex_values`) and the real machinery differentiates the pair.

* ``grad`` of a real-valued ``f`` returns ``df/dx - i df/dy``, JAX's convention (the
  conjugate of the steepest-ascent direction: descend along ``conj(grad)``; JAX's FAQ,
  "Complex numbers and differentiation").
* ``grad(f, holomorphic=True)`` of a complex-valued holomorphic ``f`` returns ``f'(z)``:
  the same formula applied to ``Re f``, which equals ``f'`` by the Cauchy-Riemann
  equations. Without ``holomorphic`` a complex output raises, as in JAX.
* ``jvp`` pushes a complex tangent ``dz`` forward as ``(Re dz, Im dz)``; a complex output's
  tangent is ``t_re + i t_im``.
* ``vjp``'s pullback of a complex cotangent ``c`` sweeps the real cotangent
  ``(Re c, -Im c)`` and returns ``g_x - i g_y`` for complex arguments, so that
  ``pullback(c) = c f'(z)`` for holomorphic ``f`` and ``grad = pullback(1.0)``, as JAX's.
"""

import numpy as np

from ..numpy.complex_values import ComplexActive
from ..numpy.active import Active
from .recording import complex_output_error, normalize_argnums


def is_complex(v):
    """Whether ``v`` is plain complex data (a complex number or complex array)."""
    return not isinstance(v, (Active, ComplexActive, tuple, list, dict)) and \
        np.iscomplexobj(v)


def to_pair(z):
    """A complex array or number as a real array of shape ``z.shape + (2,)``."""
    a = np.asarray(z, dtype=np.complex128)
    return np.stack([a.real, a.imag], axis=-1)


def from_pair(p):
    """``p[..., 0] + 1j p[..., 1]`` (active pairs give active complex values)."""
    return p[..., 0] + 1j * p[..., 1]


def _number_or_array(v):
    """A 0-d complex result as a Python ``complex``, as NumPy's scalars convert."""
    return complex(v) if np.ndim(v) == 0 else v


def _pairs(args, cplx):
    """``args`` with the complex ones (indices ``cplx``) as real pairs."""
    return tuple(to_pair(a) if n in cplx else a for n, a in enumerate(args))


def conj_gradient(g):
    """The real gradient of a pair, ``(g_x, g_y)`` (last axis), as ``g_x - i g_y``."""
    g = np.asarray(g)
    return _number_or_array(g[..., 0] - 1j * g[..., 1])


def primal_complex(out):
    """The value of an output (real or complex, active or not) as NumPy's."""
    def primal(v):
        return v._v if isinstance(v, Active) else v
    if isinstance(out, ComplexActive):
        return _number_or_array(np.asarray(primal(out.re)) + 1j * np.asarray(primal(out.im)))
    return primal(out)


class Realified:
    """``f`` as a function of real arguments: the complex arguments ``cplx`` (indices)
    passed as pairs. ``output`` chooses what the real function returns: ``"real"`` (a
    complex output raises unless ``holomorphic``, whose real part is taken) or
    ``"pairs"`` (a complex output as its pair, for ``jvp``/``vjp``). After a call,
    ``complex_output`` says whether ``f`` returned a complex value and ``value`` holds its
    primal."""

    def __init__(self, f, cplx, output, holomorphic=False):
        self.f, self.cplx, self.output, self.holomorphic = f, frozenset(cplx), output, \
            holomorphic
        self.complex_output, self.value = False, None

    def __call__(self, *args, **kwargs):
        args = [from_pair(a) if n in self.cplx else a for n, a in enumerate(args)]
        out = self.f(*args, **kwargs)
        self.complex_output = isinstance(out, ComplexActive) or is_complex(out)
        if not self.complex_output:
            if self.holomorphic and self.output == "real":
                raise TypeError("grad with holomorphic=True requires a complex output; "
                                f"{_name(self.f)} returned a real value")
            return out
        self.value = primal_complex(out)
        if self.output == "pairs":
            return np.stack([np.real(out), np.imag(out)], axis=-1)
        if not self.holomorphic:
            raise complex_output_error(self.f)
        return np.real(out)


def _name(f):
    return getattr(f, "__name__", "f")


def complex_argnums(args, nums):
    return [n for n in nums if is_complex(args[n])]


def differentiates_complex(args, argnums):
    """Whether an argument ``argnums`` differentiates is plain complex data (a complex
    constant argument is not: it reaches ``f`` unchanged). Cheap when no argument is
    complex: this is on every eager call."""
    if not any_complex(args):
        return False
    return bool(complex_argnums(args, normalize_argnums(argnums, len(args))[1]))


def any_complex(values):
    """Cheap test, on every eager call: is any of ``values`` plain complex data?"""
    for v in values:
        t = type(v)
        if t is complex or t is np.ndarray and v.dtype.kind == "c" or \
                isinstance(v, np.complexfloating):
            return True
    return False


def value_and_grad(vg, f, args, kwargs, single, nums, holomorphic):
    """``value_and_grad`` through the real pair form; ``vg(g, args, kwargs)`` is the real
    ``(value, gradient(s))`` of ``g``, one gradient (``single``) or a tuple in the order of
    ``nums``."""
    cplx = complex_argnums(args, nums)
    if holomorphic and len(cplx) != len(nums):
        raise TypeError("grad with holomorphic=True requires complex inputs: every "
                        "differentiated argument must be complex (e.g. z + 0j)")
    g = Realified(f, cplx, "real", holomorphic)
    value, grads = vg(g, _pairs(args, cplx), kwargs)
    glist = [grads] if single else list(grads)
    glist = [conj_gradient(gr) if n in cplx else gr for gr, n in zip(glist, nums)]
    return (g.value if g.complex_output else value), (glist[0] if single else tuple(glist))


def complex_cotangent(cotangent):
    """A complex output's cotangent ``c`` as the real pair ``(Re c, -Im c)``."""
    c = np.asarray(cotangent, dtype=np.complex128)
    return np.stack([c.real, -c.imag], axis=-1)


def complex_value(pair):
    """A real pair (last axis 2) as NumPy's complex value."""
    return _number_or_array(from_pair(np.asarray(pair)))


def jvp(jvp_real, f, primals, tangents):
    """``jvp`` through the real pair form (``jvp_real`` the real ``jvp``)."""
    cplx = complex_argnums(primals, range(len(primals)))
    for n, t in enumerate(tangents):
        if is_complex(t) and n not in cplx:
            raise TypeError(f"jvp: tangent {n} is complex but its primal is real; give the "
                            f"primal a complex dtype (x + 0j)")
    g = Realified(f, cplx, "pairs")
    out, tan = jvp_real(g, _pairs(primals, cplx), _pairs(tangents, cplx))
    if g.complex_output:
        return g.value, complex_value(tan)
    return out, tan


def vjp(vjp_real, f, primals):
    """``vjp`` through the real pair form (``vjp_real`` the real ``vjp``)."""
    cplx = complex_argnums(primals, range(len(primals)))
    g = Realified(f, cplx, "pairs")
    out, pullback_real = vjp_real(g, *_pairs(primals, cplx))

    def pullback(cotangent):
        if g.complex_output:
            cotangent = complex_cotangent(cotangent)
        elif is_complex(cotangent):
            raise TypeError("vjp: a complex cotangent for a real output")
        grads = pullback_real(cotangent)
        return tuple(conj_gradient(gr) if n in cplx else gr for n, gr in enumerate(grads))
    return (g.value if g.complex_output else out), pullback


def split_output_pair(j, in_ndim):
    """A Jacobian of a complex output's pair (shape ``out + (2,) + in``) as a complex
    Jacobian ``d Re f + i d Im f`` of shape ``out + in``."""
    axis = np.ndim(j) - 1 - in_ndim
    return np.take(j, 0, axis=axis) + 1j * np.take(j, 1, axis=axis)


def jacobian(jacobian_real, f, args, kwargs, argnum, mode, holomorphic):
    """``jacobian`` with complex arguments (``holomorphic=True``: ``f'(z)``, JAX's
    convention; complex arguments of a non-holomorphic ``f`` raise, as in JAX)."""
    cplx = complex_argnums(args, (argnum,))
    if not cplx:
        raise TypeError("jacobian with holomorphic=True requires a complex argument")
    if not holomorphic:
        raise TypeError("jacobian of a complex argument requires holomorphic=True (then it "
                        "is f'(z)); for a non-holomorphic function differentiate the real "
                        "pair (z.real, z.imag)")
    g = Realified(f, cplx, "pairs")
    j = jacobian_real(g, _pairs(args, cplx), kwargs)
    if not g.complex_output:
        raise TypeError("jacobian with holomorphic=True requires a complex output")
    j = np.take(j, 0, axis=-1)  # d/dx: for holomorphic f, f' = d Re f/dx + i d Im f/dx
    return split_output_pair(j, np.ndim(args[argnum]))


def hessian(hessian_real, f, args, kwargs, argnum):
    """``hessian(f, holomorphic=True)``: ``f''(z) = u_xx - i u_xy`` for ``u = Re f``."""
    cplx = complex_argnums(args, (argnum,))
    if not cplx:
        raise TypeError("hessian with holomorphic=True requires a complex argument")
    g = Realified(f, cplx, "real", holomorphic=True)
    h = hessian_real(g, _pairs(args, cplx), kwargs)
    return conj_gradient(np.take(h, 0, axis=np.ndim(args[argnum])))  # u_x. (pair axis: x)

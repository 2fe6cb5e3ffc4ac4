"""Second order of a function: :func:`hvp`, :func:`hessian` and :func:`sparse_hessian`.

Each records the function once (:func:`jittape.record`) and runs the tape-level second-order
sweeps of :mod:`jittape.derivatives.second_order` (forward over reverse: Griewank & Walther,
"Evaluating Derivatives", 2nd ed., sec. 5.2-5.4).
"""

from . import complex_args, nesting
from .gradients import grad
from .recording import normalize_argnums
from .tape import record
from ..derivatives.second_order import tape_hvp


def hvp(f, argnums=0):
    """Return ``hvp_f(*args, v)``: the Hessian of scalar ``f`` times ``v``, without forming
    the Hessian (JAX's name; here ``v`` is the last positional argument). For SciPy's
    ``minimize(..., hessp=)``, which calls ``hessp(x, p, *args)``, use :func:`hessp`.

    Records ``f`` at ``args`` once, then runs one tangent and one second-order sweep
    (forward over reverse). ``v`` has the structure and shapes of the differentiated
    argument(s) (a tuple of them for several ``argnums``); the result likewise, float64
    (float for a float argument).

    Raises
    ------
    NotDifferentiableError
        The tape holds an op with no second-order rule (the message names it).
    jittape.NonScalarOutputError
        ``f`` does not return a scalar.
    """
    def hvp_f(*args_and_v, **kwargs):
        *args, v = args_and_v
        return nesting.route(args_and_v, lambda: _nested_hvp(f, args, kwargs, argnums, v),
                             lambda: _hvp(f, args, kwargs, argnums, v))
    return hvp_f


def hessp(f, argnums=0):
    """Return ``hessp_f(x, p, *args)``: the Hessian of scalar ``f`` with respect to ``x``
    times ``p``, in the argument order ``scipy.optimize.minimize`` calls its ``hessp``
    (``hessp(x, p, *args)``; ``args`` are ``minimize``'s ``args``, passed on to ``f`` after
    ``x``). :func:`hvp` takes ``v`` last instead: ``hvp(f)(x, *args, v)``, which given to
    SciPy with ``args`` would take ``p`` for an argument of ``f``.

    ``x`` and ``p``: float64 arrays of one shape (or floats); the result has that shape.
    One recording and one forward-over-reverse sweep per call (see :func:`hvp`).

    Raises
    ------
    NotDifferentiableError
        The tape holds an op with no second-order rule (the message names it).
    TypeError
        ``argnums`` is not 0: SciPy's ``hessp`` differentiates the first argument.
    """
    if argnums != 0:
        raise TypeError("hessp differentiates f's first argument, as SciPy's hessp(x, p, "
                        "*args); for others use hvp(f, argnums)(*args, v)")
    h = hvp(f, 0)

    def hessp_f(x, p, *args, **kwargs):
        return h(x, *args, p, **kwargs)
    hessp_f.__name__ = f"hessp_{getattr(f, '__name__', 'f')}"
    hessp_f.__doc__ = hessp.__doc__
    return hessp_f


def _hvp(f, args, kwargs, argnums, v):
    tape = record(f, *args, argnums=argnums, **kwargs)
    tangents = tape._flat(v if isinstance(v, tuple) and not tape.single else (v,))
    return tape_hvp(tape, tape.arrays.val, tangents)[1]


def _nested_hvp(f, args, kwargs, argnums, v):
    """Inside a recording: the JVP of the gradient, recorded there."""
    single, nums = normalize_argnums(argnums, len(args))
    g = grad(f, argnums)
    if single:
        return nesting.jvp_record(g, args, kwargs, nums, (v,))
    return tuple(nesting.jvp_record(lambda *a: g(*a)[q], args, kwargs, nums, tuple(v))
                 for q in range(len(nums)))


def hessian(f, argnums=0, holomorphic=False):
    """Return ``hess_f(*args)``: the dense Hessian of scalar ``f`` w.r.t. one argument.

    ``n`` HVPs with the unit vectors over one recording (``n`` the argument's size); the
    result has shape ``x.shape + x.shape`` (a float for a float argument), float64, and is
    symmetric up to rounding.

    Raises
    ------
    NotDifferentiableError
        The tape holds an op with no second-order rule.
    TypeError
        ``argnums`` names more than one argument; a complex argument without
        ``holomorphic=True``, with which a holomorphic ``f`` of a complex argument gives the
        complex ``f''(z)`` (JAX's convention).
    """
    if not isinstance(argnums, int):
        raise TypeError("hessian(f, argnums) takes one argument index (an int)")

    def hess_f(*args, **kwargs):
        if holomorphic:
            return complex_args.hessian(lambda g, a, kw: hessian(g, argnums)(*a, **kw), f,
                                        args, kwargs, argnums)
        return nesting.route(  # inside a recording: the jacobian of the gradient there
            args, lambda: nesting.jacobian(grad(f, argnums), args, kwargs, argnums, "reverse"),
            lambda: _hessian(f, args, kwargs, argnums))
    return hess_f


def _hessian(f, args, kwargs, argnums):
    tape = record(f, *args, argnums=argnums, **kwargs)
    return tape.hessian(_val=tape.arrays.val)


def sparse_hessian(f, argnums=0):
    """Return ``hess_f(*args)``: the Hessian of scalar ``f`` w.r.t. one argument as a
    ``scipy.sparse`` CSR float64 array of shape ``(x.size, x.size)`` (flattened).

    Records ``f`` once, propagates the Hessian sparsity pattern over the tape
    (:mod:`jittape.derivatives.hessian_sparsity`), star-colors it and runs one HVP per color
    (:meth:`jittape.Tape.sparse_hessian`): a banded Hessian costs a few HVPs, not
    ``x.size``. To evaluate at many points, record once (:func:`jittape.record`) and call
    the tape's ``sparse_hessian``, which keeps the pattern and the coloring.

    Raises
    ------
    NotDifferentiableError
        The tape holds an op with no second-order rule.
    jittape.NonScalarOutputError
        ``f`` does not return a scalar.
    TypeError
        ``argnums`` selects several arguments, or a structured one.
    """
    if not isinstance(argnums, int):
        raise TypeError("sparse_hessian(f, argnums) takes one argument index (an int)")

    def hess_f(*args, **kwargs):
        tape = record(f, *args, argnums=argnums, **kwargs)
        return tape.sparse_hessian(_val=tape.arrays.val)
    return hess_f

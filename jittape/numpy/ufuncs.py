"""NumPy's (and SciPy's) ufuncs on active values: the handler of each ufunc.

Every elementwise op of the table handles the ufuncs its entry lists (generated from the
table); the ufuncs that are other ops in disguise (``reciprocal``, ``deg2rad``, ...) and the
predicates built from comparisons (``isnan``, ``signbit``, ...) are listed here. SciPy's
ufuncs are resolved by name on first use, so importing jittape does not import SciPy.
Importing this module fills :data:`jittape.numpy.dispatch.UFUNCS`.
"""

import math

import numpy as np

from . import complex_special, dispatch, ties
from .active import (Active, Predicate, as_node, check_const, logical, new_active, tape_of, binary,
                     compare, guard, unary)
from .selection import where
from .._base.errors import NotDifferentiableError
from .._base.imports import loaded
from .primal_values import UFUNC_OF, scalar_primal
from ..optable.table import OPS, SCIPY_UFUNC_OPCODES, UFUNC_OPCODES
from ..optable.table import codes as K
from ..optable.entry import COMPARE, TERNARY, UNARY
from .products import matmul


def _handler(opc):
    """The handler recording op ``opc`` (any elementwise kind), refusing active values for
    the arguments its entry lists as ``constant``."""
    op = OPS[opc]
    if op.kind == UNARY:
        h = _unary_handler(opc)
    elif op.kind == COMPARE and opc in (K.EQ, K.NE):  # np.equal in user or library code
        h = lambda x, y: ties.checked(compare(opc, x, y), opc == K.EQ)  # noqa: E731
    elif op.kind == COMPARE:
        h = lambda x, y: compare(opc, x, y)  # noqa: E731
    elif op.kind == TERNARY:
        h = lambda x, y, q: ternary(opc, x, y, q)  # noqa: E731
    else:
        h = lambda x, y: binary(opc, x, y)  # noqa: E731
    return _constants_checked(op, h) if op.constant else h


def _unary_handler(opc):
    """``unary(opc, x)``, with an active scalar's record made here (scalar loops call
    ``np.exp(r)`` per element): the table's ``scalar`` function, NumPy's inf/nan where
    :mod:`math` raises, as :func:`jittape.numpy.active.unary` does."""
    f = OPS[opc].scalar
    if f is None:
        return lambda x: unary(opc, x)

    def h(x):
        if type(x) is Active and type(x._v) is float:
            v = x._v
            try:
                z = f(v)
            except (ValueError, OverflowError, ZeroDivisionError):
                z = scalar_primal(None, UFUNC_OF[opc], v)  # resolved here: SciPy only if needed
            t = x._t
            return Active(t, t.push_scalar(opc, x._i, -1, 0, 0.0, z), z)
        return unary(opc, x)
    return h


op_handler = _handler  # for the wrappers of SciPy's non-ufunc functions (scipy_special)


def _constants_checked(op, handler):
    """``handler`` behind a check that no argument listed in ``op.constant`` is active: no
    derivative rule exists for it, and a silent zero would be a wrong derivative."""
    fname = op.numpy[0] if isinstance(op.numpy[0], str) else f"numpy.{op.numpy[0].__name__}"
    constant = [(i, a) for i, a in enumerate(op.args) if a in op.constant]
    free = ", ".join(a for a in op.args if a not in op.constant)

    def checked(*xs):
        for i, a in constant:
            if isinstance(xs[i], Active):
                raise NotDifferentiableError(
                    f"{fname}({', '.join(op.args)}): argument {a} is active, but jittape has "
                    f"no derivative with respect to {a}, only with respect to {free}. Pass "
                    f"{a} as a constant: a number or array, or jittape.primal({a}) for its "
                    f"current value (a replayed tape records again where it changes).")
        return handler(*xs)
    return checked


def ternary(opc, x, y, q):
    """Record the elementwise ternary op ``opc`` on ``x``, ``y``, ``q`` (one is active): all
    three broadcast to the result's shape as a binary op's operands do; the third record's id
    goes into the record's ``k``, as a select's condition."""
    t = tape_of(x, y, q)
    vals = [a._v if isinstance(a, Active) else check_const(a) for a in (x, y, q)]
    with np.errstate(all="ignore"):
        z = UFUNC_OF[opc](*vals)
    shape = np.shape(z)
    xn, yn, qn = (as_node(t, a, shape) for a in (x, y, q))
    return new_active(Active, t, opc, xn._i, yn._i, qn._i, 0.0, z if shape else float(z))


def _resolve(ufunc):
    """The handler of an op-table ufunc met for the first time: one of an op registered after
    import (jittape.ops.register), or a SciPy ufunc (resolved by name; a few are composed,
    :data:`SCIPY_COMPOSED`)."""
    opc = UFUNC_OPCODES.get(ufunc)
    if opc is None:
        name = getattr(ufunc, "__name__", None)
        opc = SCIPY_UFUNC_OPCODES.get(name)
        if opc is None:
            special = loaded("scipy.special")
            composed = SCIPY_COMPOSED.get(name)
            return composed if getattr(special, name, None) is ufunc else None
        if UFUNC_OF[opc] is not ufunc:
            return None
    return _handler(opc)


def _gammasgn(x):
    """``scipy.special.gammasgn``: SciPy's values, piecewise constant (zero derivative).

    1 for x > 0 and +0, -1 for -0, ``(-1)^n`` on ``(-n, -n + 1)`` (the sign of Gamma, DLMF 5.2.1
    and the
    reflection formula 5.5.3), NaN at the poles -1, -2, ..., -inf and NaN, as SciPy's."""
    fl = unary(K.FLOOR, x)
    alternating = 1.0 - 2.0 * binary(K.REMAINDER, fl, 2.0)
    return where(compare(K.GT, x, 0.0), 1.0, where(
        compare(K.EQ, x, 0.0), binary(K.COPYSIGN, 1.0, x),
        where(compare(K.EQ, x, fl), math.nan, alternating)))


# SciPy ufuncs without an op of their own: composed of ops (name -> handler); wofz of a real
# value is complex (its complex values' pair of ops)
SCIPY_COMPOSED = {"gammasgn": _gammasgn, "wofz": complex_special.wofz}


def _heaviside(x, h0):
    """0 for x < 0, h0 at 0, 1 for x > 0: piecewise constant in x (zero derivative)."""
    return where(compare(K.GT, x, 0.0), 1.0, where(compare(K.EQ, x, 0.0), h0, 0.0))


def _core_checked(gufunc, core_ndims, handler):
    """``handler`` behind NumPy's core-dimension checks of ``gufunc`` (vecdot, matvec,
    vecmat): the compositions would broadcast a 0-D operand or a length-1 core axis that
    NumPy refuses. The gufunc runs on zero-stride probes of the core shapes only (O(1))."""
    def checked(*xs):
        probes = []
        for x, k in zip(xs, core_ndims):
            shape = np.shape(x._v if isinstance(x, Active) else x)
            probes.append(np.broadcast_to(np.float64(0.0), shape[-k:] if len(shape) >= k
                                          else shape))
        gufunc(*probes)  # raises NumPy's own ValueError on a mismatch
        return handler(*xs)
    return checked


def _ufunc_handlers():
    h = {f: _handler(opc) for f, opc in UFUNC_OPCODES.items()}
    # ufuncs that are other ops in disguise
    h[np.positive] = lambda x: +x
    h[np.fabs] = lambda x: unary(K.ABS, x)
    h[np.reciprocal] = lambda x: binary(K.DIV, 1.0, x)
    h[np.float_power] = lambda x, y: binary(K.POW, x, y)
    h[np.deg2rad] = h[np.radians] = lambda x: x * (math.pi / 180.0)
    h[np.rad2deg] = h[np.degrees] = lambda x: x * (180.0 / math.pi)
    h[np.conjugate] = lambda x: +x  # real values only
    h[np.divmod] = lambda x, y: (binary(K.FLOORDIV, x, y), binary(K.REMAINDER, x, y))
    # predicates built from comparisons, so they replay (and guard when used as a mask)
    h[np.isnan] = lambda x: compare(K.NE, x, x)
    h[np.isinf] = lambda x: compare(K.EQ, unary(K.ABS, x), math.inf)
    h[np.isfinite] = lambda x: compare(K.LT, unary(K.ABS, x), math.inf)
    h[np.signbit] = lambda x: compare(K.LT, binary(K.COPYSIGN, 1.0, x), 0.0)
    h[np.logical_not] = lambda x: compare(K.EQ, x, 0.0)
    h[np.logical_xor] = lambda x, y: compare(K.NE, compare(K.NE, x, 0.0),
                                             compare(K.NE, y, 0.0))
    h[np.heaviside] = _heaviside
    h[np.vecdot] = _core_checked(np.vecdot, (1, 1),
                                 lambda x, y: np.sum(x * y, axis=-1))
    h[np.matvec] = _core_checked(np.matvec, (2, 1), lambda a, v: np.squeeze(
        np.matmul(a, np.expand_dims(v, -1)), -1))
    h[np.vecmat] = _core_checked(np.vecmat, (1, 2), lambda v, a: np.squeeze(
        np.matmul(np.expand_dims(v, -2), a), -2))
    h[np.logical_and] = lambda x, y: logical(K.MUL, *((x, y) if isinstance(x, Predicate)
                                                        else (y, x)))
    h[np.logical_or] = lambda x, y: logical(K.MAXIMUM, *((x, y) if isinstance(x, Predicate)
                                                           else (y, x)))
    # & | ^ ~ of an active comparison and a NumPy bool array (cond0 & (scale > 0) in SciPy)
    h[np.bitwise_and] = _bitwise("bitwise_and", lambda p, q: logical(K.MUL, p, q),
                                 lambda p, q: binary(K.MUL, p, q))
    h[np.bitwise_or] = _bitwise("bitwise_or", lambda p, q: logical(K.MAXIMUM, p, q),
                                lambda p, q: binary(K.MAXIMUM, p, q))
    h[np.bitwise_xor] = _bitwise("bitwise_xor", lambda p, q: compare(K.NE, p, q))
    h[np.invert] = _bitwise("invert", lambda p: ~p)

    h[np.matmul] = matmul
    return h


def _bitwise(name, combine, on_ints=None):
    """NumPy's bitwise ufunc ``name`` on booleans: active comparisons (:class:`Predicate`)
    and bool arrays, combined as masks. With an integer constant of 0s and 1s (SciPy's
    ``_argcheck()`` of no shape parameters is the int 1) the result is NumPy's 0/1 integers,
    as an active float array (``on_ints``: no mask, as NumPy's int array is none). Other
    operands get NumPy's TypeError."""
    def h(*args):
        ints = False
        for v in args:
            if isinstance(v, Predicate):
                continue
            kind = "f" if isinstance(v, Active) else np.asarray(v).dtype.kind
            if kind in "iu" and on_ints is not None and np.all((np.asarray(v) == 0) |
                                                             (np.asarray(v) == 1)):
                ints = True
            elif kind != "b":
                raise TypeError(f"ufunc '{name}' not supported for the input types: jittape "
                                f"combines active comparisons with bool arrays (and 0/1 "
                                f"integers for & and |) only; an active float array is "
                                f"not a mask: compare it first")
        if len(args) == 2 and not isinstance(args[0], Predicate):
            args = args[::-1]
        if ints:
            p, q = args
            return on_ints(Active(p._t, p._i, np.asarray(p._v, dtype=np.float64) if
                                  np.ndim(p._v) else float(p._v)), np.asarray(q, float))
        return combine(*args)
    return h


def _finite(v):
    """Which elements of ``v`` are finite, as a bool array; for an active ``v`` guarded (a
    replay where the pattern differs records again)."""
    if isinstance(v, Active):
        p = compare(K.LT, unary(K.ABS, v), math.inf)
        guard(p)
        return np.asarray(p._v, dtype=bool)
    return np.isfinite(v)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``np.isclose`` of active values: NumPy's test ``|a - b| <= atol + rtol |b|``
    recorded as a comparison (no derivative; guarded where control flow uses it). Where an
    element is not finite, NumPy's answer there is kept while the same elements stay
    non-finite (a guard on the pattern). NumPy's ``isclose`` documents the formula."""
    close = compare(K.LE, abs(a - b), atol + rtol * abs(b))
    fin = _finite(a) & _finite(b)
    if fin.all():
        return close
    av = a._v if isinstance(a, Active) else a
    bv = b._v if isinstance(b, Active) else b
    z = np.isclose(av, bv, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return compare(K.NE, where(np.broadcast_to(fin, np.shape(z)), close, z.astype(float)),
                   0.0)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``np.allclose``: a Python bool, as NumPy's; guarded (control flow depends on it)."""
    return bool(isclose(a, b, rtol, atol, equal_nan).all())


dispatch.FUNCTIONS.update({np.isclose: isclose, np.allclose: allclose})
UFUNC_HANDLERS = dispatch.UFUNCS  # the table tests and docs read
UFUNC_HANDLERS.update(_ufunc_handlers())
dispatch.RESOLVERS.append(_resolve)



def _object_loop_methods():
    """NumPy applies a ufunc to an object array (``np.sin(np.array([a, b]))`` of active
    scalars) by calling the method of that name on each element (``a.sin()``): give the
    active type those methods, each the ufunc's handler, so the result is an object array of
    actives that jittape turns into an active array where it meets it."""
    for ufunc, handler in list(UFUNC_HANDLERS.items()):
        name = getattr(ufunc, "__name__", None)
        if name and not hasattr(Active, name) and isinstance(ufunc, np.ufunc):
            setattr(Active, name, handler)


_object_loop_methods()

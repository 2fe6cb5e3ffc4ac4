"""NumPy's (and SciPy's) ufuncs on active values: the handler of each ufunc.

Every elementwise op of the table handles the ufuncs its entry lists (generated from the
table); the ufuncs that are other ops in disguise (``reciprocal``, ``deg2rad``, ...) and the
predicates built from comparisons (``isnan``, ``signbit``, ...) are listed here. SciPy's
ufuncs are resolved by name on first use, so importing jittape does not import SciPy.
Importing this module fills :data:`jittape.dispatch.UFUNCS`.
"""

import math

import numpy as np

from . import dispatch
from .active import Active, Predicate, _logical, binary, compare, unary, where
from .primals import _NP
from .ops import OPS, SCIPY_UFUNC_OPCODES, UFUNC_OPCODES
from .ops import codes as K
from .optable import COMPARE, UNARY
from .products import matmul


def _handler(opc):
    kind = OPS[opc].kind
    if kind == UNARY:
        return lambda x: unary(opc, x)
    if kind == COMPARE:
        return lambda x, y: compare(opc, x, y)
    return lambda x, y: binary(opc, x, y)


def _resolve(ufunc):
    """The handler of an op-table ufunc met for the first time: one of an op registered after
    import (jittape.ops.register), or a SciPy ufunc (resolved by name)."""
    opc = UFUNC_OPCODES.get(ufunc)
    if opc is None:
        opc = SCIPY_UFUNC_OPCODES.get(getattr(ufunc, "__name__", None))
        if opc is None or _NP[opc] is not ufunc:
            return None
    return _handler(opc)


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
    h[np.logical_and] = lambda x, y: _logical(K.MUL, *((x, y) if isinstance(x, Predicate)
                                                        else (y, x)))
    h[np.logical_or] = lambda x, y: _logical(K.MAXIMUM, *((x, y) if isinstance(x, Predicate)
                                                           else (y, x)))

    h[np.matmul] = matmul
    return h


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

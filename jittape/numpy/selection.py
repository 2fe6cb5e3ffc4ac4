"""``np.where(cond, x, y)`` on active values: one WHERE record (a select), its condition a
recorded comparison or a constant; ``np.where(cond)`` of an active condition: NumPy's index
arrays, guarded; ``x[mask] = v`` as a select where the result's shape does not depend on the
mask (:func:`masked_select`, for item assignment)."""

import numpy as np

from . import dispatch
from .active import Active, Predicate, as_node, compare, guard, new_active, tape_of
from ..optable.table import codes as K


def truth(x):
    """``x != 0`` (a bool array, or NumPy's bool for a 0-d value) for control flow and
    indices: an active ``x`` (a comparison, or any value: its comparison with 0 is recorded)
    is guarded, so a replay where it differs fails the guard; a constant is NumPy's
    ``np.asarray(x).astype(bool)``."""
    if not isinstance(x, Active):
        return np.asarray(x).astype(bool)
    p = x if isinstance(x, Predicate) else compare(K.NE, x, 0.0)
    guard(p)
    return np.asarray(p._v, dtype=bool)


def where(cond, x=None, y=None):
    """``np.where(cond, x, y)``: one WHERE record; the condition (a comparison, active or
    constant) carries no derivative, so it stays valid at any replayed point.

    ``np.where(cond)`` (one argument) is ``np.nonzero(cond)``: integer index arrays that
    depend on the condition's value, so an active condition is guarded (:func:`truth`).
    """
    if x is None and y is None:
        return np.where(truth(cond))  # NumPy's (and its error for a 0-d condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    t = tape_of(cond, x, y)
    cv = cond._v if isinstance(cond, Active) else np.asarray(cond, dtype=bool)
    xv = x._v if isinstance(x, Active) else x
    yv = y._v if isinstance(y, Active) else y
    z = np.where(cv, xv, yv).astype(np.float64)
    shape = z.shape
    cn, xn, yn = (as_node(t, q, shape) for q in (cond, x, y))
    return new_active(Active, t, K.WHERE, xn._i, yn._i, cn._i, 0.0, z if shape else float(z))


def masked_select(x, mask, value):
    """``x[mask] = value`` for an active comparison ``mask`` as ``np.where(mask, value, x)``
    (JAX's ``where``, CppAD's ``CondExp``): a select on the recorded comparison, valid at any
    replayed point. Only where NumPy's result does not depend on which elements are
    selected: ``mask`` covers ``x``'s leading axes and ``value`` broadcasts to the rest
    (a scalar, or one row); else None (the mask is guarded and the positions gathered)."""
    ms, xs = np.shape(mask._v), np.shape(x._v)
    vs = np.shape(value._v) if isinstance(value, Active) else np.shape(value)
    rest = xs[len(ms):]
    if xs[:len(ms)] != ms or len(vs) > len(rest) and not (
            len(vs) == len(rest) + 1 and vs[0] == 1):
        return None
    try:
        if np.broadcast_shapes(vs, rest) != rest:
            return None
    except ValueError:
        return None
    if not isinstance(value, Active):
        value = np.asarray(value, dtype=np.float64)
    cond = np.reshape(mask, ms + (1,) * len(rest)) if rest else mask
    return where(cond, np.reshape(value, vs[1:]) if len(vs) > len(rest) else value, x)


dispatch.FUNCTIONS[np.where] = where

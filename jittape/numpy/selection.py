"""``np.where(cond, x, y)`` on active values: one WHERE record (a select), its condition a
recorded comparison or a constant; ``np.where(cond)`` of an active condition: NumPy's index
arrays, guarded."""

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


dispatch.FUNCTIONS[np.where] = where

"""``np.where(cond, x, y)`` on active values: one WHERE record (a select), its condition a
recorded comparison or a constant."""

import numpy as np

from . import dispatch
from .active import Active, as_node, new_active, tape_of
from .._base.errors import NotDifferentiableError
from ..optable.table import codes as K


def where(cond, x=None, y=None):
    """``np.where(cond, x, y)``: one WHERE record; the condition (a comparison, active or
    constant) carries no derivative, so it stays valid at any replayed point."""
    if x is None and y is None:
        raise NotDifferentiableError(
            "np.where(cond) with one argument returns indices, which have no derivative. "
            "Use np.where(cond, a, b), or np.nonzero(jittape.primal(cond)).")
    t = tape_of(cond, x, y)
    cv = cond._v if isinstance(cond, Active) else np.asarray(cond, dtype=bool)
    xv = x._v if isinstance(x, Active) else x
    yv = y._v if isinstance(y, Active) else y
    z = np.where(cv, xv, yv).astype(np.float64)
    shape = z.shape
    cn, xn, yn = (as_node(t, q, shape) for q in (cond, x, y))
    return new_active(Active, t, K.WHERE, xn._i, yn._i, cn._i, 0.0, z if shape else float(z))


dispatch.FUNCTIONS[np.where] = where

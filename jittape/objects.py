"""Object arrays of active scalars as active arrays.

An active scalar's ``__array__`` is a 0-d object array holding it, so ``np.array([a, b])``,
``np.asarray`` of nested lists of actives and numbers, ``np.r_``, ``np.c_`` and ``np.block``
give object arrays. :func:`to_active` turns them into active arrays wherever jittape meets
them: the operands of an active operation and of NumPy functions, and a function's output.
"""

import numpy as np

from . import dispatch
from .active import Active, _new, _tape_of, const, gather
from .errors import NotDifferentiableError
from .ops import codes as K


def from_objects(a):
    """The object array ``a`` (``np.array([s, 1.0])`` of active scalars and numbers) as one
    active array of ``a``'s shape: its active elements and one constant of the numbers are
    concatenated (one CONCAT), then gathered into place (one GATHER). An object array
    without actives becomes a float array."""
    flat = a.ravel()
    acts = [e for e in flat if isinstance(e, Active)]
    if not acts:
        return np.asarray(a, dtype=np.float64)
    if any(type(e._v) is not float for e in acts):
        raise NotDifferentiableError(
            "an object array holding active arrays: build it with np.stack / np.concatenate")
    t = _tape_of(*acts)
    value = np.array([e._v if isinstance(e, Active) else float(e) for e in flat])
    idx, consts, n = np.empty(flat.size, dtype=np.intp), [], 0
    for p, e in enumerate(flat):
        if isinstance(e, Active):
            idx[p], n = n, n + 1
        else:
            idx[p] = len(acts) + len(consts)
            consts.append(float(e))
    parts = acts + ([const(t, np.array(consts))] if consts else [])
    layout = [len(parts), 1]
    for q in parts:
        layout += [q._i, np.size(q._v)]
    cat = _new(Active, t, K.CONCAT, parts[0]._i, -1, t.push_pool(layout), 0.0,
               np.concatenate([np.ravel(q._v) for q in parts]))
    return gather(cat, idx.reshape(a.shape), value.reshape(a.shape))


def to_active(v):
    """Object arrays of actives as active arrays, also inside the lists, tuples and dicts
    of a call's arguments (``np.concatenate([objarr, x])``); anything else unchanged."""
    if type(v) is np.ndarray and v.dtype == object:
        return from_objects(v)
    if type(v) in (list, tuple):
        return type(v)(to_active(e) for e in v)
    if type(v) is dict:
        return {k: to_active(e) for k, e in v.items()}
    return v


dispatch.OPERATORS["from_objects"] = to_active

"""NumPy functions that write into an array, or select by a mask, with active values.

``np.copyto``, ``np.putmask``, ``np.place`` and ``np.fill_diagonal`` write into their first
argument, as NumPy's do. It may be an active array (the write is recorded and every alias
of it sees it: :func:`jittape.numpy.views.assign`), an array created while recording (a
:class:`~jittape.numpy.prealloc.Prealloc`, active from the first active value written), or
a plain NumPy array when what is written is constant (NumPy's own function runs). An active
value written into a plain float array that jittape cannot follow (created outside the
recorded function) raises :class:`NotDifferentiableError`; into an integer or bool array it
is NumPy's conversion (guarded).

A mask that only chooses, position by position, between the old and the new value
(``np.copyto(where=)``, ``np.putmask``) is recorded as a select (WHERE) when it is an active
comparison: correct at any replayed point. Where the mask decides which value goes where
(``np.place``: the k-th True position gets the k-th value) or the result's shape
(``np.extract``), an active mask is guarded. :func:`active_fill` is ``np.full`` /
``np.full_like`` of an active fill value, called by the creation functions of
:mod:`jittape.numpy.prealloc`. NumPy's checks and errors come from NumPy's own function run
on plain arrays of the same shapes and dtypes.
"""

import numpy as np

from . import dispatch
from .active import Active, Predicate, compare, const, reshape
from .._base.errors import NotDifferentiableError
from ..optable.table import codes as K
from .object_arrays import as_operand
from .prealloc import WRITES, Prealloc, resolve
from .selection import truth, where as select
from .shaping import as_float, cyclic, filled, take_flat
from .views import assign, setitem


def _current(a):
    """The value of the written array ``a``: an active array, or a plain ndarray (a
    Prealloc that holds no active value yet: a view of its memory)."""
    return resolve(a) if type(a) is Prealloc else a


def _primal(x):
    """``x``'s value as an ndarray, for NumPy's checks."""
    if isinstance(x, Active):
        return np.asarray(x._v, dtype=bool if isinstance(x, Predicate) else np.float64)
    return np.asarray(x)


def _records(a, *args):
    """Whether the write into ``a`` is recorded: ``a`` is active, or a Prealloc given an
    active argument (it becomes active); otherwise NumPy's function writes plain memory."""
    cur = _current(a)
    return isinstance(cur, Active) or type(a) is Prealloc and any(
        isinstance(v, Active) for v in args)


def _plain(fname, dst, v):
    """``v`` as what NumPy writes into the plain array ``dst``: an active ``v`` converted
    by NumPy's rule for an integer or bool ``dst`` (guarded), refused for a float one
    (jittape could not follow the array)."""
    if not isinstance(v, Active):
        return v
    if dst.dtype.kind in "biu":
        return dispatch.OPERATORS["to_array"](as_float(v), dst.dtype)
    raise NotDifferentiableError(
        f"np.{fname} writes an active value into a NumPy array of dtype {dst.dtype} that "
        f"jittape cannot follow: one created outside the recorded function, or by a "
        f"function bound before recording (`from numpy import full`). Create it inside "
        f"the recorded function (np.empty, np.zeros, np.full, ...) or as np.zeros_like(x) "
        f"of an active x.")


def _target(fname, a):
    if isinstance(a, Predicate):
        raise NotDifferentiableError(
            f"np.{fname} into an active comparison result (a boolean mask) is not "
            f"supported: build the mask with np.where or logical operators instead")
    return a


def _write(fname, a, new):
    """Make ``new`` (an active value of ``a``'s shape) the value of ``a`` for every alias."""
    if type(a) is Prealloc:
        a[...] = new
    else:
        assign(_target(fname, a), as_float(new))


def _write_flat(fname, a, pos, vals):
    """``a.flat[pos] = vals`` (``vals`` of ``pos``'s shape), ``a`` active or a Prealloc."""
    if type(a) is Prealloc:
        a[np.unravel_index(pos, a.shape) if a.ndim else ()] = vals
    elif np.ndim(a._v) == 0:
        setitem(_target(fname, a), (), vals)
    else:
        setitem(_target(fname, a), np.unravel_index(pos, np.shape(a._v)), vals)


def _mask(mask, shape):
    """``mask`` as a bool condition of ``shape`` (same size): an active comparison (recorded
    if ``mask`` is another active value: ``mask != 0``) or a constant bool array."""
    if isinstance(mask, Active):
        p = mask if isinstance(mask, Predicate) else compare(K.NE, mask, 0.0)
        return reshape(p, shape)
    return np.reshape(np.asarray(mask).astype(bool), shape)


def _as_array(t, v, shape):
    """``v`` broadcast to ``shape`` as an active array on tape ``t`` (a new object)."""
    if isinstance(v, Active):
        return filled(v, shape)
    return const(t, np.broadcast_to(np.asarray(v, dtype=np.float64), shape))


def copyto(dst, src, casting="same_kind", where=True):
    """``np.copyto(dst, src, casting, where)``: ``src`` written into ``dst``.

    ``src`` broadcast to ``dst``'s shape, written where ``where`` is True. ``dst`` active or
    created while recording: one record, a select (WHERE) when ``where`` is given (an active
    comparison stays data); ``dst`` a plain array: NumPy's own (an active ``where``
    guarded). Returns None."""
    src, where = as_operand(src), as_operand(where)
    cur = _current(dst)
    dt = _primal(cur).dtype
    np.copyto(np.empty(np.shape(_primal(cur)), dt), _primal(src), casting=casting,
              where=_primal(where))  # NumPy's broadcasting and casting checks
    if not _records(dst, src, where):
        w = truth(where) if isinstance(where, Active) else where
        return np.copyto(cur, _plain("copyto", cur, src), casting=casting, where=w)
    if where is True:
        t = cur._t if isinstance(cur, Active) else src._t
        new = _as_array(t, src, np.shape(_primal(cur)))
    else:
        new = select(where, src, cur)  # where broadcast to dst's shape: NumPy checked
    _write("copyto", dst, new)


def putmask(a, mask, values):
    """``np.putmask(a, mask, values)``: ``values`` by position where ``mask`` holds.

    ``a.flat[n] = values.flat[n % values.size]`` where ``mask.flat[n]`` (``mask`` of ``a``'s
    size); ``a`` active or created while recording: one select (WHERE), an active mask
    staying data; ``a`` plain: NumPy's own (an active mask guarded). Empty ``values`` write
    nothing. Returns None."""
    mask, values = as_operand(mask), as_operand(values)
    cur = _current(a)
    shape = np.shape(_primal(cur))
    np.putmask(np.zeros(shape, _primal(cur).dtype), _primal(mask),
               _primal(values))  # NumPy's checks (sizes)
    if np.size(_primal(values)) == 0:
        return None
    if not _records(a, mask, values):
        m = truth(mask) if isinstance(mask, Active) else mask
        return np.putmask(cur, m, _plain("putmask", cur, values))
    _write("putmask", a, select(_mask(mask, shape), cyclic(values, shape), cur))


def place(arr, mask, vals):
    """``np.place(arr, mask, vals)``: ``vals`` in turn at ``mask``'s True positions.

    The k-th True position of ``mask`` (of ``arr``'s size) gets ``vals.flat[k %
    vals.size]``. Which value goes where depends on the mask, so an active mask is guarded;
    one scatter into ``arr`` (active or created while recording), NumPy's own for a plain
    ``arr`` and constant ``vals``. Returns None.

    Raises NumPy's errors: TypeError if ``arr`` is not an array, ValueError for a mask of
    another size or for empty ``vals`` with a True mask element."""
    if not isinstance(arr, (np.ndarray, Active)):
        raise TypeError(f"place() argument 1 must be numpy.ndarray, not {type(arr).__name__}")
    cur = _current(arr)
    m = truth(as_operand(mask))
    vals = as_operand(vals)
    if m.size != np.size(_primal(cur)):
        raise ValueError("place: mask and data must be the same size")
    pos = np.flatnonzero(m)
    if not pos.size:
        return None
    if np.size(_primal(vals)) == 0:
        raise ValueError("Cannot insert from an empty array!")
    if not _records(arr, vals):
        return np.place(cur, m, _plain("place", cur, vals))
    _write_flat("place", arr, pos, cyclic(vals, pos.shape))


def extract(condition, arr):
    """``np.extract(condition, arr)``: the elements where ``condition``, a 1-D gather.

    The elements of ``arr.ravel()`` where ``condition.ravel()`` is nonzero. An active
    condition is guarded (the result's length depends on it); NumPy's IndexError for a
    condition longer than ``arr`` with a True element beyond it."""
    m = truth(as_operand(condition))
    arr = as_operand(arr)
    idx = np.take(np.arange(np.size(_primal(arr))), np.nonzero(np.ravel(m))[0])
    if isinstance(arr, Active):
        return take_flat(arr, idx)
    return np.extract(m, arr)


def fill_diagonal(a, val, wrap=False):
    """``np.fill_diagonal(a, val, wrap)``: ``val`` written on the diagonal of ``a``.

    NumPy's diagonal positions of ``a`` (2-D, or N-D with equal dimensions; ``wrap`` for
    tall matrices) get ``val`` raveled, repeated or cut as by NumPy's flat assignment; one
    scatter into ``a`` (active or created while recording), NumPy's own for a plain ``a``
    and constant ``val``. Returns None."""
    val = as_operand(val)
    cur = _current(a)
    sel = np.zeros(np.shape(_primal(cur)), dtype=bool)
    np.fill_diagonal(sel, True, wrap=wrap)  # NumPy's positions and errors
    if not _records(a, val):
        return np.fill_diagonal(cur, _plain("fill_diagonal", cur, val), wrap=wrap)
    pos = np.flatnonzero(sel)
    if pos.size and np.size(_primal(val)):
        _write_flat("fill_diagonal", a, pos, cyclic(val, pos.shape))


def active_fill(f, args, kwargs, fill):
    """``np.full(shape, fill, ...)`` or ``np.full_like(a, fill, ...)`` (NumPy's own ``f``
    with its arguments) for an active ``fill``: NumPy's array made with a constant fill
    gives shape, dtype, memory order and errors; a float64 result is a Prealloc holding
    ``fill`` broadcast (an active array that is an ndarray, as np.full's), a bool or
    integer one NumPy's converted values (guarded), an object one NumPy's, holding the
    active; other dtypes raise (see :func:`jittape.numpy.shaping.filled`)."""
    args, kwargs = list(args), dict(kwargs)
    at = (args, 1) if len(args) > 1 else (kwargs, "fill_value")
    at[0][at[1]] = np.zeros((), bool if isinstance(fill, Predicate) else np.float64)
    proto = f(*args, **kwargs)
    if type(proto) not in (np.ndarray, Prealloc) or proto.dtype == object:
        at[0][at[1]] = fill  # full_like of an active array (its handler), or objects
        return f(*args, **kwargs)
    if proto.dtype != np.float64:
        return filled(fill, proto.shape, proto.dtype)
    r = proto.view(np.ndarray).view(Prealloc)  # a root of its own
    r[...] = fill
    return r


_WRITERS = {np.copyto: copyto, np.putmask: putmask, np.place: place,
            np.fill_diagonal: fill_diagonal}
WRITES.update(_WRITERS)
dispatch.FUNCTIONS.update(_WRITERS)
dispatch.FUNCTIONS[np.extract] = extract
dispatch.OPERATORS["active_fill"] = active_fill

"""Composite NumPy functions on active values, built from the existing primitives only.

No new opcodes: every function here records SLICE/GATHER, CONCAT, WHERE, the reductions,
MATMUL and elementwise records, so the Numba sweeps, replay and the compiler need nothing
new.

* **Rearrangements** (``swapaxes``, ``flip``, ``roll``, ``repeat``, ``take``, ``diagonal``,
  ``split``, ``pad`` with an index mode, ...) apply the NumPy function itself to the flat index
  array of the input (``np.arange(size).reshape(shape)``) and record one GATHER by the
  result. NumPy thus decides the semantics (argument parsing, negative axes, errors, result
  shape) and the adjoint is the scatter-add of the gather. A result that is the input in
  C order is a free reshape.
* **Values that are not in the input** (the zeros of ``np.diag(v)``, the constants of
  ``np.pad``, the right-hand side of an item assignment) come from one concatenation of the
  raveled input with a constant (or active) record, gathered from there.
* **Statistics and linear algebra** (``var``, ``std``, ``average``, ``linalg.norm``,
  ``inner``, ``outer``, ``vdot``, ``tensordot``, ``einsum``, ``kron``) are compositions of
  reductions, broadcasting products and 2-D ``matmul``.

Anything outside the supported arguments raises :class:`NotDifferentiableError` naming the
function and the argument.

**In-place updates and views** follow NumPy. Item assignment (``x[key] = v``,
:func:`setitem`) and the in-place operators (``+= -= *= /= **= //= %= @=``, and ``&= |=``
on masks) record a functional update and rebind the active object ``x`` itself, so every
name bound to it sees the write. The functions for which NumPy returns a view (basic
indexing, ``reshape``/``ravel``, ``transpose``/``.T``, ``swapaxes``, ``moveaxis``,
``squeeze``, ``expand_dims``, ``atleast_*d``, ``flip``/``fliplr``/``flipud``/``rot90``,
the ``split`` family, ``einsum`` without a sum; read-only: ``diagonal``, ``diag`` of a
matrix, ``broadcast_to``) link their result to the base array whenever NumPy's result is
a view (NumPy itself decides, on a probe array: ``x.T.reshape(-1)`` is a copy). A write
into a view is scattered into its base, and every live view of the base is re-gathered, so
writes propagate in both directions through views of views; a write into a read-only view
raises NumPy's ``ValueError``. Copies (``x.copy()``, ``np.copy``, ``+x``, ``x.flatten()``,
advanced indexing, every other function) are new objects and never see later writes. An
active scalar is immutable like a NumPy scalar (``s += 1`` rebinds ``s``), except a 0-d
view such as ``x[..., 0]``. See :func:`assign`.

Importing this module registers the handlers in :data:`jittape.functions.FUNCTIONS`.
"""

import math
import string
import warnings
import weakref

import numpy as np

from . import functions as F
from .active import Active, Predicate, _check_const, _tape_of, const, guard
from .errors import NotDifferentiableError

try:  # NumPy >= 2
    from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple
except ImportError:  # NumPy 1.x
    from numpy.core.multiarray import normalize_axis_index
    from numpy.core.numeric import normalize_axis_tuple

_NOVALUE = np._NoValue


# --- helpers -----------------------------------------------------------------------------
def _has_active(v):
    if isinstance(v, Active):
        return True
    if isinstance(v, (list, tuple)):
        return any(_has_active(e) for e in v)
    return False


def _refuse_active(fname, **args):
    """Raise if an index/count/shape argument is active (it has no derivative)."""
    for name, v in args.items():
        if _has_active(v):
            raise NotDifferentiableError(
                f"np.{fname}: argument '{name}' cannot be an active value (an index, count or "
                f"shape has no derivative). Use jittape.primal(...) for its current value.")


def _unsupported(fname, arg, detail=""):
    raise NotDifferentiableError(
        f"np.{fname} with {arg} on active values is not supported" + (f": {detail}" if detail
                                                                      else "."))


def _check_out(fname, out):
    if out is not None:
        _unsupported(fname, "out=...", "in-place output is not recorded; assign the result")


def _check_dtype(fname, dtype):
    if dtype is not None and np.dtype(dtype) != np.float64:
        _unsupported(fname, f"dtype={dtype!r}", "only float64 carries derivatives")


def _val(x):
    """The primal of ``x`` as an ndarray (active or not)."""
    return np.asarray(x._v if isinstance(x, Active) else x)


def _const_array(x):
    return np.asarray(_check_const(x), dtype=np.float64)


def _shape_probe(shape):
    """A zero-stride array of ``shape``: NumPy shape functions on it cost O(1)."""
    return np.broadcast_to(np.float64(0.0), shape)


def _alias(x, shape):
    """A new active object for the same record, viewed with ``shape`` (no record)."""
    if isinstance(x, Predicate):  # a rearranged comparison result is still a mask
        v = np.asarray(x._v, dtype=bool).reshape(shape)
        return Predicate(x._t, x._i, bool(v) if v.ndim == 0 else v)
    v = np.asarray(x._v, dtype=np.float64).reshape(shape)
    return Active(x._t, x._i, float(v) if v.ndim == 0 else v)


def _take(x, idx):
    """Record ``x.flat[idx]``; free (a reshape) when ``idx`` is all of ``x`` in order."""
    idx = np.asarray(idx, dtype=np.intp)
    xv = np.ravel(np.asarray(x._v, dtype=np.float64))
    flat = idx.ravel()
    if flat.size == xv.size and flat.size and flat[0] == 0 and (
            flat.size == 1 or bool(np.all(np.diff(flat) == 1))):
        return _alias(x, idx.shape)
    r = F._gather(x, idx, xv[idx])
    if isinstance(x, Predicate):  # 0/1 values gathered: still a mask
        v = np.asarray(r._v) != 0.0
        return Predicate(r._t, r._i, bool(v) if v.ndim == 0 else v)
    return r


def _rearrange(x, fn):
    """Record ``fn(x)`` for a NumPy function ``fn`` that only moves/selects elements."""
    return _take(x, fn(F._flat_index(x)))


def _view(x, fn):
    """:func:`_rearrange`, and the result is linked to ``x`` when NumPy's ``fn`` returns a
    view (see :func:`track`): writes through it reach ``x``, and writes to ``x`` reach it."""
    return track(x, _rearrange(x, fn), fn)


def _ravel_any(x):
    return _alias(x, (-1,)) if isinstance(x, Active) else np.ravel(_const_array(x))


def _reshape_any(x, shape):
    return _alias(x, shape) if isinstance(x, Active) else np.reshape(_const_array(x), shape)


def _transpose_any(x, perm):
    perm = tuple(int(p) for p in perm)
    if perm == tuple(range(len(perm))):
        return x
    return F.transpose(x, perm) if isinstance(x, Active) else np.transpose(x, perm)


def _sum_any(x, axis=None, keepdims=False):
    if isinstance(x, Active):
        return F.sum_(x, axis=axis, keepdims=keepdims)
    return np.sum(x, axis=axis, keepdims=keepdims)


def _with_extra(x, extra):
    """The raveled active ``x`` followed by the raveled ``extra`` (constant or active): one
    CONCAT record; ``x``'s elements keep their flat numbers, ``extra``'s start at x.size."""
    return F.concatenate([_alias(x, (-1,)), _ravel_any(extra)])


# --- shape ---------------------------------------------------------------------------------
def swapaxes(a, axis1, axis2):
    """``np.swapaxes`` as a gather."""
    _refuse_active("swapaxes", axis1=axis1, axis2=axis2)
    return _view(a, lambda i: np.swapaxes(i, axis1, axis2))


def moveaxis(a, source, destination):
    """``np.moveaxis`` as a gather."""
    _refuse_active("moveaxis", source=source, destination=destination)
    return _view(a, lambda i: np.moveaxis(i, source, destination))


def squeeze(a, axis=None):
    """``np.squeeze`` (free: a reshape)."""
    _refuse_active("squeeze", axis=axis)
    return track(a, _alias(a, np.squeeze(_shape_probe(a.shape), axis=axis).shape),
                 lambda p: np.squeeze(p, axis=axis))


def expand_dims(a, axis):
    """``np.expand_dims`` with an int or tuple axis (free: a reshape)."""
    _refuse_active("expand_dims", axis=axis)
    return track(a, _alias(a, np.expand_dims(_shape_probe(a.shape), axis).shape),
                 lambda p: np.expand_dims(p, axis))


def _atleast(npf, arys):
    out = []
    for a in arys:
        if isinstance(a, Active):
            out.append(track(a, _alias(a, npf(_shape_probe(a.shape)).shape), npf))
        else:
            out.append(npf(a))
    if len(out) == 1:
        return out[0]
    return tuple(out) if isinstance(np.atleast_1d(0, 0), tuple) else out


def atleast_1d(*arys):
    """``np.atleast_1d`` (free: reshapes)."""
    return _atleast(np.atleast_1d, arys)


def atleast_2d(*arys):
    """``np.atleast_2d`` (free: reshapes)."""
    return _atleast(np.atleast_2d, arys)


def atleast_3d(*arys):
    """``np.atleast_3d`` (free: reshapes)."""
    return _atleast(np.atleast_3d, arys)


def repeat(a, repeats, axis=None):
    """``np.repeat`` with int or per-element repeats, as a gather."""
    _refuse_active("repeat", repeats=repeats, axis=axis)
    return _rearrange(a, lambda i: np.repeat(i, repeats, axis=axis))


def tile(A, reps):
    """``np.tile`` as a gather."""
    _refuse_active("tile", reps=reps)
    return _rearrange(A, lambda i: np.tile(i, reps))


def flip(m, axis=None):
    """``np.flip`` (axis None, int or tuple) as a gather."""
    _refuse_active("flip", axis=axis)
    return _view(m, lambda i: np.flip(i, axis=axis))


def fliplr(m):
    """``np.fliplr`` as a gather."""
    return _view(m, np.fliplr)


def flipud(m):
    """``np.flipud`` as a gather."""
    return _view(m, np.flipud)


def rot90(m, k=1, axes=(0, 1)):
    """``np.rot90`` as a gather."""
    _refuse_active("rot90", k=k, axes=axes)
    return _view(m, lambda i: np.rot90(i, k, axes))


def roll(a, shift, axis=None):
    """``np.roll`` (shift int or tuple, axis None/int/tuple) as a gather."""
    _refuse_active("roll", shift=shift, axis=axis)
    return _rearrange(a, lambda i: np.roll(i, shift, axis=axis))


def _split_with(npf, fname):
    def split_(ary, indices_or_sections, axis=0):
        _refuse_active(fname, indices_or_sections=indices_or_sections, axis=axis)
        pieces = [_take(ary, p) for p in npf(F._flat_index(ary), indices_or_sections, axis)]
        probes = npf(_probe_of(ary), indices_or_sections, axis)
        return [_link(ary, r, q) for r, q in zip(pieces, probes)]
    split_.__name__ = fname
    split_.__doc__ = f"``np.{fname}``: a list of slices/gathers."
    return split_


split = _split_with(np.split, "split")
array_split = _split_with(np.array_split, "array_split")


def _split_fixed(npf, fname):
    def split_(ary, indices_or_sections):
        _refuse_active(fname, indices_or_sections=indices_or_sections)
        pieces = [_take(ary, p) for p in npf(F._flat_index(ary), indices_or_sections)]
        probes = npf(_probe_of(ary), indices_or_sections)
        return [_link(ary, r, q) for r, q in zip(pieces, probes)]
    split_.__name__ = fname
    split_.__doc__ = f"``np.{fname}``: a list of slices/gathers."
    return split_


hsplit = _split_fixed(np.hsplit, "hsplit")
vsplit = _split_fixed(np.vsplit, "vsplit")
dsplit = _split_fixed(np.dsplit, "dsplit")


def _stack_check(fname, tup, dtype):
    _check_dtype(fname, dtype)
    return list(tup)


def hstack(tup, *, dtype=None, casting="same_kind"):
    """``np.hstack``: one CONCAT record."""
    arrs = list(_as_tuple(atleast_1d(*_stack_check("hstack", tup, dtype))))
    if arrs and np.ndim(_val(arrs[0])) == 1:
        return F.concatenate(arrs, axis=0)
    return F.concatenate(arrs, axis=1)


def vstack(tup, *, dtype=None, casting="same_kind"):
    """``np.vstack``: one CONCAT record."""
    arrs = list(_as_tuple(atleast_2d(*_stack_check("vstack", tup, dtype))))
    return F.concatenate(arrs, axis=0)


def dstack(tup):
    """``np.dstack``: one CONCAT record."""
    arrs = list(_as_tuple(atleast_3d(*_stack_check("dstack", tup, None))))
    return F.concatenate(arrs, axis=2)


def column_stack(tup):
    """``np.column_stack``: 1-D inputs become columns; one CONCAT record."""
    arrays = []
    for v in _stack_check("column_stack", tup, None):
        if isinstance(v, Active):
            if v.ndim < 2:
                v = _alias(v, (-1, 1))
        else:
            v = np.asanyarray(v)
            if v.ndim < 2:
                v = np.atleast_2d(v).T
        arrays.append(v)
    return F.concatenate(arrays, axis=1)


def _as_tuple(r):
    return r if isinstance(r, (tuple, list)) else (r,)


def append(arr, values, axis=None):
    """``np.append``: one CONCAT record."""
    _refuse_active("append", axis=axis)
    if axis is None:
        return F.concatenate([_ravel_any(arr), _ravel_any(values)], axis=0)
    return F.concatenate([arr, values], axis=axis)


def delete(arr, obj, axis=None):
    """``np.delete`` (obj an int, slice, int or bool array) as a gather."""
    _refuse_active("delete", obj=obj, axis=axis)
    return _rearrange(arr, lambda i: np.delete(i, obj, axis=axis))


def copy(a, order="K", subok=False):
    """``np.copy``: a new active object for the same record (no record), not a view.

    Later writes to ``a`` or to the copy are not seen by the other.
    """
    if order not in ("K", "A", "C", "F"):
        raise ValueError("order must be one of 'C', 'F', 'A', or 'K' (got %r)" % (order,))
    return _alias(a, a.shape)


# --- indexing ------------------------------------------------------------------------------
def take(a, indices, axis=None, out=None, mode="raise"):
    """``np.take`` (any mode) as a gather."""
    _check_out("take", out)
    _refuse_active("take", indices=indices, axis=axis)
    return _rearrange(a, lambda i: np.take(i, indices, axis=axis, mode=mode))


def take_along_axis(arr, indices, axis=-1):
    """``np.take_along_axis`` as a gather."""
    _refuse_active("take_along_axis", indices=indices, axis=axis)
    return _rearrange(arr, lambda i: np.take_along_axis(i, indices, axis))


def diagonal(a, offset=0, axis1=0, axis2=1):
    """``np.diagonal`` as a gather (a copy, not a read-only view)."""
    _refuse_active("diagonal", offset=offset, axis1=axis1, axis2=axis2)
    return _view(a, lambda i: np.diagonal(i, offset, axis1, axis2))


def diag(v, k=0):
    """``np.diag`` (k): 1-D to 2-D by a gather with a zero constant; 2-D to its diagonal.

    A 1-D input gives the matrix with zeros off the k-th diagonal (a gather from the input
    concatenated with one zero constant); a 2-D input gives its k-th diagonal (a gather).
    """
    _refuse_active("diag", k=k)
    vv = _val(v)
    if vv.ndim == 1:
        n = vv.size
        idx = np.diag(np.arange(1, n + 1, dtype=np.intp), k) - 1
        idx[idx < 0] = n
        return _take(_with_extra(v, np.zeros(1)), idx)
    if vv.ndim == 2:
        return _view(v, lambda i: np.diag(i, k))  # a read-only view, as NumPy's
    np.diag(vv, k)  # NumPy's error for other ranks
    raise ValueError("Input must be 1- or 2-d.")


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """``np.trace``: the sum of ``np.diagonal`` along its last axis."""
    _check_out("trace", out)
    _check_dtype("trace", dtype)
    d = diagonal(a, offset, axis1, axis2)
    return F.sum_(d, axis=-1)


def _tri(fname, m, k, lower):
    _refuse_active(fname, k=k)
    mv = _val(m)
    (np.tril if lower else np.triu)(_shape_probe(mv.shape), k)  # NumPy's errors
    if lower:
        mask = np.tri(*mv.shape[-2:], k=k, dtype=bool)
    else:
        mask = ~np.tri(*mv.shape[-2:], k=k - 1, dtype=bool)
    return F.where(mask, m, 0.0)


def tril(m, k=0):
    """``np.tril``: a WHERE with a constant mask (0 above the k-th diagonal)."""
    return _tri("tril", m, k, True)


def triu(m, k=0):
    """``np.triu``: a WHERE with a constant mask (0 below the k-th diagonal)."""
    return _tri("triu", m, k, False)


def diff(a, n=1, axis=-1, prepend=_NOVALUE, append=_NOVALUE):
    """``np.diff`` (n, axis, prepend, append): slices and subtractions."""
    _refuse_active("diff", n=n, axis=axis)
    if n == 0:
        return a
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    av = _val(a)
    nd = av.ndim
    if nd == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = normalize_axis_index(axis, nd)
    combined = []
    for extra, last in ((prepend, False), (append, True)):
        if extra is _NOVALUE:
            continue
        if not isinstance(extra, Active):
            extra = np.asanyarray(extra)
        if np.ndim(_val(extra)) == 0:
            shape = list(av.shape)
            shape[axis] = 1
            extra = (F.broadcast_to(extra, tuple(shape)) if isinstance(extra, Active)
                     else np.broadcast_to(extra, tuple(shape)))
        combined.append((last, extra))
    if combined:
        parts = [e for last, e in combined if not last] + [a] + \
                [e for last, e in combined if last]
        a = F.concatenate(parts, axis=axis)
    if not isinstance(a, Active):
        return np.diff(a, n, axis)
    hi = [slice(None)] * nd
    lo = [slice(None)] * nd
    hi[axis] = slice(1, None)
    lo[axis] = slice(None, -1)
    hi, lo = tuple(hi), tuple(lo)
    for _ in range(n):
        a = a[hi] - a[lo]
    return a


_PAD_INDEX_MODES = ("edge", "reflect", "symmetric", "wrap")


def pad(array, pad_width, mode="constant", **kwargs):
    """``np.pad``, modes 'constant', 'edge', 'wrap', 'reflect', 'symmetric': a gather.

    Mode 'constant' takes any constant_values NumPy accepts (constants, not active values):
    the gather reads from the input concatenated with the constants. 'reflect' and
    'symmetric' need reflect_type='even' (the default). Other modes are refused.
    """
    _refuse_active("pad", pad_width=pad_width)
    if not isinstance(mode, str):
        _unsupported("pad", "a callable mode")
    x = array
    if mode == "constant":
        bad = set(kwargs) - {"constant_values"}
        if bad:
            raise ValueError(f"unsupported keyword arguments for mode '{mode}': {bad}")
        cv = kwargs.get("constant_values", 0)
        if _has_active(cv):
            _unsupported("pad", "active constant_values")
        nd = x.ndim
        cvs = np.broadcast_to(_const_array(cv), (nd, 2))
        marks = x.size + np.arange(2 * nd, dtype=np.intp).reshape(nd, 2)
        idx = np.pad(F._flat_index(x), pad_width, mode="constant", constant_values=marks)
        if idx.size == x.size:  # no padding
            return _take(x, idx)
        return _take(_with_extra(x, cvs), idx)
    if mode in _PAD_INDEX_MODES:
        if kwargs.get("reflect_type", "even") != "even":
            _unsupported("pad", f"reflect_type={kwargs['reflect_type']!r}",
                         "only reflect_type='even' is a pure rearrangement")
        return _rearrange(x, lambda i: np.pad(i, pad_width, mode=mode, **kwargs))
    _unsupported("pad", f"mode={mode!r}",
                 "supported modes are 'constant', 'edge', 'reflect', 'symmetric', 'wrap'")


# --- views, item assignment and in-place updates ------------------------------------------
# NumPy's aliasing, reproduced at the recording level. Records are immutable; what NumPy
# shares between a view and its base is modelled by linking active objects:
#
# * A view-producing function (basic indexing, reshape/ravel, transpose/.T, swapaxes,
#   moveaxis, squeeze, expand_dims, atleast_*d, flip*, rot90, split*, broadcast_to,
#   diagonal/diag of a matrix, einsum without a sum) records its result as usual, then asks
#   NumPy whether it would have returned a view: the same function is applied to a *probe*,
#   an uninitialised uint8 array of the base's shape (never read; O(1) for views). If the
#   probe's result shares memory with the probe, the result is linked (``_base``) to the
#   *root* (the base that is not itself a view) with that probe view, whose offset and
#   strides give the flat position of each element in the root. So NumPy decides, e.g.
#   ``x.T.reshape(-1)`` is a copy, ``x[1:3]`` a view, ``x[[1, 2]]`` a copy, diagonal and
#   broadcast_to are read-only views.
# * A write (item assignment, in-place operator) into an active computes the new value
#   functionally, then :func:`assign` rebinds the object in place (its ``_i``/``_v``) and,
#   when it is a view, scatters the new elements into its root (one CONCAT + GATHER); every
#   live view of the root is then re-gathered from the new root value. Every alias (the
#   same object under another name, views, views of views) thus sees the write; copies
#   (``x.copy()``, ``np.copy``, ``+x``, ``x.flatten()``, advanced indexing) are other
#   objects and do not.
# * The root keeps weak references to its views; a view keeps its root alive.
class _Root:
    """View bookkeeping of a root that has (had) views: its probe, weak refs to views."""

    __slots__ = ("probe", "views", "limit")

    def __init__(self, shape):
        self.probe = np.empty(shape, np.uint8)  # never read: only its addresses matter
        self.views = []
        self.limit = 8


class _Link:
    """A view's link to its root: ``probe`` is the view of the root's probe NumPy made."""

    __slots__ = ("root", "probe")

    def __init__(self, root, probe):
        self.root, self.probe = root, probe


def _probe_of(x):
    b = x._base
    if isinstance(b, _Link):
        return b.probe
    if b is None:
        b = x._base = _Root(np.shape(x._v))
    return b.probe


def track(x, r, fn):
    """Return ``r``, the active result of the NumPy function ``fn`` applied to active ``x``,
    linked to ``x``'s root if NumPy's ``fn(x)`` is a view of ``x`` (decided on a probe)."""
    if not isinstance(r, Active) or r is x:
        return r
    return _link(x, r, fn(_probe_of(x)))


def _link(x, r, q):
    b = x._base
    root = b.root if isinstance(b, _Link) else x
    reg = root._base
    if not isinstance(q, np.ndarray) or not (q.base is reg.probe or
                                             np.may_share_memory(q, reg.probe)):
        return r  # NumPy made a copy (or a scalar)
    r._base = _Link(root, q)
    views = reg.views
    views.append(weakref.ref(r))
    if len(views) >= reg.limit:  # drop dead views, amortised
        reg.views = views = [w for w in views if w() is not None]
        reg.limit = max(8, 2 * len(views))
    return r


def _positions(q, probe):
    """The flat positions in the root of the elements of the probe view ``q`` (its itemsize
    is 1, so byte offsets are element numbers)."""
    start = q.__array_interface__["data"][0] - probe.__array_interface__["data"][0]
    pos = np.full(q.shape, start, dtype=np.intp)
    for k, (n, step) in enumerate(zip(q.shape, q.strides)):
        pos += (np.arange(n, dtype=np.intp) * step).reshape((n,) + (1,) * (q.ndim - k - 1))
    return pos


def _rebind(x, rec):
    """Point the object ``x`` at record ``rec`` (same size), keeping its shape and class."""
    v = np.reshape(rec._v, np.shape(x._v))
    if isinstance(x, Predicate):
        v = v != 0
    x._i, x._v = rec._i, (v.item() if v.ndim == 0 else v)


def writable(x, what="assignment destination"):
    """Raise NumPy's error if ``x`` is a read-only view (diagonal, broadcast_to)."""
    b = x._base
    if isinstance(b, _Link) and not b.probe.flags.writeable:
        raise ValueError(f"{what} is read-only")


def assign(x, new):
    """Make ``new`` (an active of ``x``'s shape) the value of ``x`` for every alias.

    ``x`` is rebound in place; a view's elements are scattered into its root, and all other
    live views of the root are re-gathered from the root's new record.
    """
    writable(x)
    b = x._base
    if isinstance(b, _Link):
        root = b.root
        n = root.size
        idx = F._flat_index(root)
        pos = _positions(b.probe, root._base.probe).ravel()
        idx.flat[pos] = n + np.arange(pos.size, dtype=idx.dtype)
        _rebind(root, _take(_with_extra(root, new), idx))
    else:
        root = x
    _rebind(x, new)
    reg = root._base
    if isinstance(reg, _Root):
        live = []
        for w in reg.views:
            v = w()
            if v is None:
                continue
            live.append(w)
            if v is not x:
                _rebind(v, _take(root, _positions(v._base.probe, reg.probe)))
        reg.views = live


def _written_in_place(x, key, value):
    """True if ``value`` is the view ``x[key]`` itself (``x[key] += v`` already wrote)."""
    b = getattr(value, "_base", None)
    if not isinstance(b, _Link):
        return False
    xb = x._base
    if b.root is not (xb.root if isinstance(xb, _Link) else x):
        return False
    q = _probe_of(x)[key]
    return (isinstance(q, np.ndarray) and q.shape == b.probe.shape
            and q.strides == b.probe.strides
            and q.__array_interface__["data"][0] == b.probe.__array_interface__["data"][0])


def setitem(x, key, value):
    """``x[key] = value`` (this is ``Active.__setitem__``), seen by every alias of ``x``.

    The new value of ``x`` is ``concat(x.ravel(), value.ravel())[idx]`` (one CONCAT and one
    GATHER), ``idx`` being the flat index array of ``x`` with ``idx[key]`` overwritten by
    the positions of ``value``; NumPy's own assignment on ``idx`` decides broadcasting,
    repeated indices and errors. Overwritten positions of the old ``x`` receive no adjoint.
    Then :func:`assign` rebinds ``x`` in place and carries the write to its root and the
    root's other views (see the comment above). Keys: basic (ints, slices, None, Ellipsis),
    integer arrays, boolean masks (an active comparison used as a mask is guarded).
    ``value`` is a constant or active (any shape broadcastable to ``x[key]``).
    """
    if not isinstance(x, Active):
        raise TypeError("setitem: x must be an active value")
    xv = x._v
    if type(xv) in (float, bool) or np.ndim(xv) == 0:
        raise TypeError("an active scalar cannot be indexed")
    _tape_of(x, value)
    writable(x)
    key = F._concrete_key(key)
    if _written_in_place(x, key, value):
        return  # NumPy copies the view onto itself: nothing changes
    if isinstance(x, Predicate):
        raise NotDifferentiableError(
            "item assignment into an active comparison result (a mask) is not supported; "
            "build the mask with np.where or logical operators (m &= c, m |= c) instead")
    if isinstance(value, Active):
        vshape = np.shape(value._v)
    else:
        value = _const_array(value)
        vshape = value.shape
    n = x.size
    idx = F._flat_index(x)
    idx[key] = n + np.arange(math.prod(vshape), dtype=idx.dtype).reshape(vshape)
    if not np.any(idx >= n):
        return  # nothing selected: x is unchanged
    assign(x, _take(_with_extra(x, value), idx))


# --- statistics ----------------------------------------------------------------------------
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NOVALUE, *, where=_NOVALUE,
        mean=_NOVALUE, correction=_NOVALUE, _fname="var"):
    """``np.var`` (axis, ddof or correction, keepdims, mean): sum((x - mean)^2) / (N - ddof).

    Its gradient ``2 (x - mean) / (N - ddof)`` is exact everywhere, also for one element
    (0). Where ``N - ddof <= 0`` NumPy divides by 0 (inf, or nan for 0/0) and warns
    "Degrees of freedom <= 0 for slice"; so does this, and the gradient there is inf/nan,
    never a finite number.
    """
    _check_out(_fname, out)
    _check_dtype(_fname, dtype)
    if where is not _NOVALUE:
        _unsupported(_fname, "where=...")
    if correction is not _NOVALUE:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    _refuse_active(_fname, axis=axis, ddof=ddof)
    keepdims = False if keepdims is _NOVALUE else bool(keepdims)
    if not isinstance(a, Active):
        a = const(_tape_of(a, mean), np.asarray(a, dtype=np.float64))
    av = np.asarray(a._v)
    axes = F._axes(axis, av.ndim)
    count = math.prod(av.shape[ax] for ax in axes)
    m = F.mean(a, axis, keepdims=True) if mean is _NOVALUE else mean
    d = a - m
    s = F.sum_(d ** 2, axis, keepdims=keepdims)
    if count - ddof <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
    return s / float(max(count - ddof, 0))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NOVALUE, *, where=_NOVALUE,
        mean=_NOVALUE, correction=_NOVALUE):
    """``np.std``: the square root of ``np.var`` (same arguments, same value as NumPy).

    Where the variance is 0 (one element, constant data) the square root is not
    differentiable; its gradient there is 0, a subgradient (std is a norm of the deviations,
    and 0 is in the subdifferential of a norm at 0), not the nan of sqrt'(0) * 0. Recorded as
    ``where(v == 0, 0, sqrt(where(v == 0, 1, v)))``, so a replayed tape applies the same rule
    at any point. Where ``N - ddof <= 0`` the value is inf/nan as NumPy's, with its warning,
    and the gradient is nan.
    """
    v = var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
            correction=correction, _fname="std")
    zero = v == 0.0
    return F.where(zero, 0.0, np.sqrt(F.where(zero, 1.0, v)))


def average(a, axis=None, weights=None, returned=False, *, keepdims=_NOVALUE):
    """``np.average`` (axis, weights of a's shape or along axis, returned, keepdims)."""
    _refuse_active("average", axis=axis)
    t = _tape_of(a, weights)
    if not isinstance(a, Active):
        a = const(t, np.asarray(a, dtype=np.float64))
    av = np.asarray(a._v)
    if axis is not None:
        axis = normalize_axis_tuple(axis, av.ndim, argname="axis")
    keep = False if keepdims is _NOVALUE else bool(keepdims)
    if weights is None:
        avg = F.mean(a, axis, keepdims=keep)
        scl = np.float64(av.size / max(np.size(avg._v), 1))
    else:
        w = weights if isinstance(weights, Active) else _const_array(weights)
        wv = _val(w)
        if av.shape != wv.shape:
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            if wv.shape != tuple(av.shape[ax] for ax in axis):
                raise ValueError("Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            w = _transpose_any(w, np.argsort(axis))
            w = _reshape_any(w, tuple(s if ax in axis else 1 for ax, s in enumerate(av.shape)))
        scl = _sum_any(w, axis=axis, keepdims=keep)
        if isinstance(scl, Active):
            zero = scl == 0.0
            guard(zero)  # the error below is control flow on the weights
            is_zero = bool(np.any(zero._v))
        else:
            is_zero = bool(np.any(scl == 0.0))
        if is_zero:
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = F.sum_(a * w, axis, keepdims=keep) / scl
    if returned:
        if np.shape(_val(scl)) != np.shape(avg._v):
            scl = (F.broadcast_to(scl, np.shape(avg._v)) if isinstance(scl, Active)
                   else np.broadcast_to(scl, np.shape(avg._v)).copy())
        return avg, scl
    return avg


def norm(x, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm``: vector ords None/2/1/inf/-inf/0/p, matrix None/'fro'/1/-1/inf/-inf.

    Axis None, int or 2-tuple, keepdims, as NumPy. Matrix ords 2, -2 and 'nuc' need singular
    values and are refused. The derivative of the 2-norm (and 'fro') at x = 0 is nan here:
    sqrt's derivative at 0 is infinite, times 0 (the true subgradient set contains 0).
    """
    _refuse_active("linalg.norm", ord=ord, axis=axis)
    if not isinstance(x, Active):
        raise TypeError("norm: x must be an active value")
    xv = np.asarray(x._v)
    nd = xv.ndim
    is_str = isinstance(ord, str)
    if axis is None:
        if ord is None or (is_str and ord in ("f", "fro") and nd == 2) or (
                not is_str and ord == 2 and nd == 1):
            ret = np.sqrt(F.sum_(_alias(x, (-1,)) ** 2))
            if keepdims:
                ret = _alias(ret, nd * [1])
            return ret
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = int(axis)
        except Exception as e:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from e
        axis = (axis,)
    if len(axis) == 1:
        if not is_str and ord == np.inf:
            ax = normalize_axis_index(axis[0], nd)
            if xv.shape[ax] == 0:  # NumPy's initial=0
                return np.linalg.norm(xv, ord, axis, keepdims)
            return F.max_(abs(x), axis=axis, keepdims=keepdims)
        if not is_str and ord == -np.inf:
            return F.min_(abs(x), axis=axis, keepdims=keepdims)
        if not is_str and ord == 0:
            return F.sum_(x != 0.0, axis=axis, keepdims=keepdims)
        if not is_str and ord == 1:
            return F.sum_(abs(x), axis=axis, keepdims=keepdims)
        if ord is None or (not is_str and ord == 2):
            return np.sqrt(F.sum_(x ** 2, axis=axis, keepdims=keepdims))
        if is_str:
            raise ValueError(f"Invalid norm order '{ord}' for vectors")
        p = float(ord)
        return F.sum_(abs(x) ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)
    if len(axis) == 2:
        row, col = (normalize_axis_index(a, nd) for a in axis)
        if row == col:
            raise ValueError("Duplicate axes given.")
        if (not is_str and ord in (2, -2)) or ord == "nuc":
            _unsupported("linalg.norm", f"ord={ord!r} for matrices",
                         "it needs singular values; use ord='fro', 1, -1, inf or -inf")
        if not is_str and ord in (1, -1):
            red = F.max_ if ord == 1 else F.min_
            ret = red(F.sum_(abs(x), axis=row), axis=col - 1 if col > row else col)
        elif not is_str and ord in (np.inf, -np.inf):
            red = F.max_ if ord == np.inf else F.min_
            ret = red(F.sum_(abs(x), axis=col), axis=row - 1 if row > col else row)
        elif ord is None or ord in ("fro", "f"):
            ret = np.sqrt(F.sum_(x ** 2, axis=axis))
        else:
            raise ValueError("Invalid norm order for matrices.")
        if keepdims:
            shape = list(xv.shape)
            shape[axis[0]] = 1
            shape[axis[1]] = 1
            ret = _alias(ret, shape)
        return ret
    raise ValueError("Improper number of dimensions to norm.")


# --- linear algebra ------------------------------------------------------------------------
def outer(a, b, out=None):
    """``np.outer``: a broadcasting product of the raveled operands."""
    _check_out("outer", out)
    return _reshape_any(_ravel_any(a), (-1, 1)) * _reshape_any(_ravel_any(b), (1, -1))


def vdot(a, b):
    """``np.vdot`` of real arrays: sum of the elementwise product of the raveled operands."""
    if np.size(_val(a)) != np.size(_val(b)):
        np.vdot(_val(a), _val(b))  # NumPy's error
    return F.sum_(_ravel_any(a) * _ravel_any(b))


def inner(a, b):
    """``np.inner``: tensordot over the last axes (a product for scalars)."""
    if np.ndim(_val(a)) == 0 or np.ndim(_val(b)) == 0:
        return a * b
    if np.shape(_val(a))[-1] != np.shape(_val(b))[-1]:
        np.inner(_shape_probe(np.shape(_val(a))), _shape_probe(np.shape(_val(b))))  # raises
    return tensordot(a, b, axes=([-1], [-1]))


def tensordot(a, b, axes=2):
    """``np.tensordot`` (axes int or pair of sequences): transposes, reshapes, a 2-D matmul.

    The same reduction to one matrix product as NumPy's own implementation.
    """
    _refuse_active("tensordot", axes=axes)
    if not isinstance(a, Active) and not isinstance(b, Active):  # (einsum's constant pairs)
        return np.tensordot(_const_array(a), _const_array(b), axes)
    try:
        iter(axes)
    except Exception:
        axes_a = list(range(-axes, 0))
        axes_b = list(range(0, axes))
    else:
        axes_a, axes_b = axes
    try:
        na = len(axes_a)
        axes_a = list(axes_a)
    except TypeError:
        axes_a = [axes_a]
        na = 1
    try:
        nb = len(axes_b)
        axes_b = list(axes_b)
    except TypeError:
        axes_b = [axes_b]
        nb = 1
    as_, bs = np.shape(_val(a)), np.shape(_val(b))
    nda, ndb = len(as_), len(bs)
    equal = na == nb
    if equal:
        for k in range(na):
            if as_[axes_a[k]] != bs[axes_b[k]]:
                equal = False
                break
            if axes_a[k] < 0:
                axes_a[k] += nda
            if axes_b[k] < 0:
                axes_b[k] += ndb
    if not equal:
        raise ValueError("shape-mismatch for sum")
    notin_a = [k for k in range(nda) if k not in axes_a]
    notin_b = [k for k in range(ndb) if k not in axes_b]
    n2 = math.prod(as_[ax] for ax in axes_a)
    at = _reshape_any(_transpose_any(a, notin_a + axes_a),
                      (math.prod(as_[ax] for ax in notin_a), n2))
    bt = _reshape_any(_transpose_any(b, axes_b + notin_b),
                      (n2, math.prod(bs[ax] for ax in notin_b)))
    res = F.matmul(at, bt)
    return _reshape_any(res, [as_[ax] for ax in notin_a] + [bs[ax] for ax in notin_b])


def kron(a, b):
    """``np.kron``: a broadcasting product of interleaved reshapes."""
    av, bv = _val(a), _val(b)
    nda, ndb = av.ndim, bv.ndim
    if nda == 0 or ndb == 0:
        return a * b
    nd = max(nda, ndb)
    as_ = (1,) * (nd - nda) + av.shape
    bs = (1,) * (nd - ndb) + bv.shape
    a2 = _reshape_any(a, tuple(d for s in as_ for d in (s, 1)))
    b2 = _reshape_any(b, tuple(d for s in bs for d in (1, s)))
    return _reshape_any(a2 * b2, tuple(p * q for p, q in zip(as_, bs)))


def _einsum_explicit(subs, shapes):
    """NumPy's subscript rules made explicit: ``(input subscripts, output subscripts)`` with
    each ellipsis replaced by unused letters (broadcast dimensions, right-aligned) and an
    implicit output (no '->') replaced by NumPy's: the ellipsis dimensions, then the labels
    that appear once, in ASCII order."""
    ins_s, arrow, out_s = subs.partition("->")
    ins = ins_s.split(",")
    free = [c for c in string.ascii_letters if c not in subs]
    n_ell = max([len(shp) - (len(s) - 3) for s, shp in zip(ins, shapes) if "..." in s] or [0])
    ell = "".join(free[:n_ell])
    ins = [s.replace("...", ell[n_ell - (len(shp) - (len(s) - 3)):]) if "..." in s else s
           for s, shp in zip(ins, shapes)]
    if not arrow:
        letters = ins_s.replace(",", "").replace(".", "")
        return ins, ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if "..." in out_s:
        return ins, out_s.replace("...", ell)
    if n_ell:
        raise ValueError("output has more dimensions than subscripts given in einstein sum, "
                         "but no '...' ellipsis provided to broadcast the extra dimensions.")
    return ins, out_s


def _einsum_check_args(operands, out, kwargs):
    """NumPy's checks of einsum's keywords; refusals of what is not recorded."""
    _check_out("einsum", out)
    _check_dtype("einsum", kwargs.get("dtype"))
    if not operands or not isinstance(operands[0], str):
        _unsupported("einsum", "the sublist form einsum(op0, sublist0, ...)",
                     "pass a subscripts string")
    bad = set(kwargs) - {"dtype", "order", "casting"}
    if bad:
        raise TypeError(f"einsum() got an unexpected keyword argument {sorted(bad)[0]!r}")
    if kwargs.get("order", "K") not in ("K", "A", "C", "F"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {kwargs['order']!r})")
    if kwargs.get("casting", "safe") not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError("casting must be one of 'no', 'equiv', 'safe', 'same_kind', or "
                         "'unsafe'")


def einsum(*operands, out=None, optimize=False, **kwargs):
    """``np.einsum`` with subscripts (explicit or implicit output, ellipses broadcast).

    Operands are combined left to right: each is aligned to the running index space
    (repeated labels within an operand take its diagonal, by a gather), multiplied in by
    broadcasting, and every label no later operand or the output needs is summed out at
    once. A pair whose shared labels are all summed there goes through tensordot (one
    2-D matmul). ``optimize`` is accepted and ignored (the result is the same).
    """
    _einsum_check_args(operands, out, kwargs)
    subs = operands[0].replace(" ", "")
    ops = list(operands[1:])
    # NumPy checks the subscripts, the operand count and the shapes (without computing)
    shapes = [np.shape(_val(op)) for op in ops]
    np.einsum_path(subs, *[_shape_probe(s) for s in shapes], optimize=False)
    ins, out_s = _einsum_explicit(subs, shapes)
    out_letters = list(out_s)
    terms = []
    for s, op in zip(ins, ops):
        if not isinstance(op, Active):
            op = _const_array(op)
        letters = list(dict.fromkeys(s))
        if len(letters) < len(s):  # a repeated label: its diagonal
            sub = s + "->" + "".join(letters)
            op = (_rearrange(op, lambda i, sub=sub: np.einsum(sub, i)) if isinstance(
                op, Active) else np.einsum(sub, op).copy())
        terms.append((letters, op))

    def needed(j):
        keep = set(out_letters)
        for letters, _ in terms[j + 1:]:
            keep.update(letters)
        return keep

    def sum_out(op, letters, keep):
        drop = tuple(i for i, c in enumerate(letters) if c not in keep)
        if drop:
            op = _sum_any(op, axis=drop)
            letters = [c for c in letters if c in keep]
        return op, letters

    acc_letters, acc = terms[0]
    acc, acc_letters = sum_out(acc, acc_letters, needed(0))
    for j in range(1, len(terms)):
        letters, op = terms[j]
        keep = needed(j)
        op, letters = sum_out(op, letters, keep | set(acc_letters))
        shared = [c for c in acc_letters if c in letters]
        acc_shape, op_shape = np.shape(_val(acc)), np.shape(_val(op))
        if shared and not any(c in keep for c in shared) and all(
                acc_shape[acc_letters.index(c)] == op_shape[letters.index(c)] for c in shared):
            acc = tensordot(acc, op, axes=([acc_letters.index(c) for c in shared],
                                           [letters.index(c) for c in shared]))
            acc_letters = ([c for c in acc_letters if c not in shared]
                           + [c for c in letters if c not in shared])
            continue
        new = [c for c in letters if c not in acc_letters]
        space = acc_letters + new
        a2 = _reshape_any(acc, tuple(acc_shape) + (1,) * len(new))
        sub = [c for c in space if c in letters]
        op_t = _transpose_any(op, [letters.index(c) for c in sub])
        op_t_shape = np.shape(_val(op_t))
        b2 = _reshape_any(op_t, tuple(op_t_shape[sub.index(c)] if c in letters else 1
                                      for c in space))
        acc, acc_letters = sum_out(a2 * b2, space, keep)
    acc = _transpose_any(acc, [acc_letters.index(c) for c in out_letters])
    if not isinstance(acc, Active):
        return acc
    acc = _alias(acc, np.shape(acc._v))  # a new object: never the input itself
    if len(ops) == 1 and isinstance(ops[0], Active) and set(out_s) == set(ins[0]):
        # NumPy returns a writeable view when nothing is summed ('ij->ji', 'ii->i')
        acc = track(ops[0], acc, lambda p: np.einsum(subs, p))
    return acc


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """``np.cross`` (2- and 3-vectors, any axes, broadcasting): component products, one CONCAT.

    The components are gathered along the vector axis and combined in NumPy's order
    (``a1*b2 - a2*b1``, ...; a missing third component of a 2-vector contributes nothing, as
    in NumPy), so the primal is NumPy's.
    """
    _refuse_active("cross", axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)
    if axis is not None:
        axisa = axisb = axisc = axis
    av, bv = _val(a), _val(b)
    # NumPy's argument checks, errors and warnings on zero-stride probes (O(1))
    np.cross(_shape_probe(av.shape), _shape_probe(bv.shape), axisa, axisb, axisc)

    def last(x, ax):
        if isinstance(x, Active):
            return moveaxis(x, ax, -1)
        return np.moveaxis(_const_array(x), ax, -1)

    a, b = last(a, axisa), last(b, axisb)
    da, db = np.shape(_val(a))[-1], np.shape(_val(b))[-1]
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    c2 = a0 * b1 - a1 * b0
    if da == 2 and db == 2:
        return c2
    if da == 2:  # a2 = 0
        b2 = b[..., 2]
        c0, c1 = a1 * b2, -(a0 * b2)
    elif db == 2:  # b2 = 0
        a2 = a[..., 2]
        c0, c1 = -(a2 * b1), a2 * b0
    else:
        a2, b2 = a[..., 2], b[..., 2]
        c0, c1 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2
    cp = np.stack([c0, c1, c2], axis=-1)  # the three have one (broadcast) shape
    return moveaxis(cp, -1, axisc) if isinstance(cp, Active) else np.moveaxis(cp, -1, axisc)


FUNCTIONS = {
    np.swapaxes: swapaxes, np.moveaxis: moveaxis, np.squeeze: squeeze,
    np.expand_dims: expand_dims, np.atleast_1d: atleast_1d, np.atleast_2d: atleast_2d,
    np.atleast_3d: atleast_3d, np.repeat: repeat, np.tile: tile, np.flip: flip,
    np.fliplr: fliplr, np.flipud: flipud, np.rot90: rot90, np.roll: roll, np.split: split,
    np.array_split: array_split, np.hsplit: hsplit, np.vsplit: vsplit, np.dsplit: dsplit,
    np.hstack: hstack, np.vstack: vstack, np.dstack: dstack, np.column_stack: column_stack,
    np.append: append, np.delete: delete, np.copy: copy, np.pad: pad, np.take: take,
    np.take_along_axis: take_along_axis, np.diag: diag, np.diagonal: diagonal,
    np.trace: trace, np.tril: tril, np.triu: triu, np.diff: diff, np.var: var, np.std: std,
    np.average: average, np.linalg.norm: norm, np.outer: outer, np.inner: inner,
    np.vdot: vdot, np.tensordot: tensordot, np.einsum: einsum, np.kron: kron,
    np.cross: cross,
}
F.FUNCTIONS.update(FUNCTIONS)

"""NumPy's shape and indexing functions on active values: gathers of flat indices.

``swapaxes``, ``moveaxis``, ``rollaxis``, ``squeeze``, ``expand_dims``, ``atleast_*d``, ``repeat``,
``tile``, the flips and rolls, the ``split`` and ``stack`` families, ``append``, ``delete``,
``copy``, ``take``, ``take_along_axis``, ``diag``, ``diagonal``, ``trace``, ``tril``,
``triu``, ``diff`` and ``pad``: each applies the NumPy function to the input's flat index
array and records one GATHER (:func:`jittape.numpy.shaping.rearrange`), or one STRIDED record
when the selected positions are a view's (offset, shape, strides: flips, rot90, swapaxes,
moveaxis, split pieces, diagonals), linked to the input when NumPy's result is a view
(:mod:`jittape.numpy.views`). Arguments that are indices, counts or
shapes must be constants (an active one raises :class:`NotDifferentiableError`).
"""

import numpy as np

from . import dispatch
from .active import Active, broadcast_to, const, flat_index
from .selection import where
from .reductions import sum_
from .shaping import (NOVALUE, alias, check_dtype, check_out, const_array, filled,
                      has_active, ravel_any, rearrange, refuse_active, shape_probe, take_flat,
                      unsupported, primal_array, reshape_any, with_extra, concatenate,
                      normalize_axis_index, stack)
from .object_arrays import as_operand
from .views import link_view, probe_of, rearranged_view, track


def swapaxes(a, axis1, axis2):
    """``np.swapaxes`` as a strided view."""
    refuse_active("swapaxes", axis1=axis1, axis2=axis2)
    return rearranged_view(a, lambda i: np.swapaxes(i, axis1, axis2))


def moveaxis(a, source, destination):
    """``np.moveaxis`` as a strided view."""
    refuse_active("moveaxis", source=source, destination=destination)
    return rearranged_view(a, lambda i: np.moveaxis(i, source, destination))


def rollaxis(a, axis, start=0):
    """``np.rollaxis`` as a strided view (as NumPy's transpose)."""
    refuse_active("rollaxis", axis=axis, start=start)
    return rearranged_view(a, lambda i: np.rollaxis(i, axis, start))


def real_if_close(a, tol=100):
    """``np.real_if_close`` of a real (active) array: ``a`` itself, as NumPy returns it."""
    refuse_active("real_if_close", tol=tol)
    return a


def squeeze(a, axis=None):
    """``np.squeeze`` (free: a reshape)."""
    refuse_active("squeeze", axis=axis)
    return track(a, alias(a, np.squeeze(shape_probe(a.shape), axis=axis).shape),
                 lambda p: np.squeeze(p, axis=axis))


def expand_dims(a, axis):
    """``np.expand_dims`` with an int or tuple axis (free: a reshape)."""
    refuse_active("expand_dims", axis=axis)
    return track(a, alias(a, np.expand_dims(shape_probe(a.shape), axis).shape),
                 lambda p: np.expand_dims(p, axis))


def _atleast(npf, arys):
    out = []
    for a in arys:
        if isinstance(a, Active):
            out.append(track(a, alias(a, npf(shape_probe(a.shape)).shape), npf))
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
    refuse_active("repeat", repeats=repeats, axis=axis)
    return rearrange(a, lambda i: np.repeat(i, repeats, axis=axis))


def tile(A, reps):
    """``np.tile`` as a gather."""
    refuse_active("tile", reps=reps)
    return rearrange(A, lambda i: np.tile(i, reps))


def flip(m, axis=None):
    """``np.flip`` (axis None, int or tuple) as a strided view."""
    refuse_active("flip", axis=axis)
    return rearranged_view(m, lambda i: np.flip(i, axis=axis))


def fliplr(m):
    """``np.fliplr`` as a strided view."""
    return rearranged_view(m, np.fliplr)


def flipud(m):
    """``np.flipud`` as a strided view."""
    return rearranged_view(m, np.flipud)


def rot90(m, k=1, axes=(0, 1)):
    """``np.rot90`` as a strided view."""
    refuse_active("rot90", k=k, axes=axes)
    return rearranged_view(m, lambda i: np.rot90(i, k, axes))


def roll(a, shift, axis=None):
    """``np.roll`` (shift int or tuple, axis None/int/tuple) as a gather."""
    refuse_active("roll", shift=shift, axis=axis)
    return rearrange(a, lambda i: np.roll(i, shift, axis=axis))


def _split_pieces(npf, fname, ary, indices_or_sections, *axis):
    """``npf(ary, ...)`` as slices/gathers, each linked to ``ary`` like NumPy's views."""
    refuse_active(fname, indices_or_sections=indices_or_sections, axis=axis)
    pieces = [take_flat(ary, p) for p in npf(flat_index(ary), indices_or_sections, *axis)]
    probes = npf(probe_of(ary), indices_or_sections, *axis)
    return [link_view(ary, r, q) for r, q in zip(pieces, probes)]


def _splitter(npf, fname, has_axis):
    if has_axis:
        def split_(ary, indices_or_sections, axis=0):
            return _split_pieces(npf, fname, ary, indices_or_sections, axis)
    else:  # hsplit, vsplit, dsplit
        def split_(ary, indices_or_sections):
            return _split_pieces(npf, fname, ary, indices_or_sections)
    split_.__name__ = fname
    split_.__doc__ = f"``np.{fname}``: a list of slices/gathers."
    return split_


split = _splitter(np.split, "split", True)
array_split = _splitter(np.array_split, "array_split", True)
hsplit = _splitter(np.hsplit, "hsplit", False)
vsplit = _splitter(np.vsplit, "vsplit", False)
dsplit = _splitter(np.dsplit, "dsplit", False)


def _stack_check(fname, tup, dtype):
    check_dtype(fname, dtype)
    return [as_operand(a) for a in tup]  # (mixed lists: [x[0], 2.0])


def hstack(tup, *, dtype=None, casting="same_kind"):
    """``np.hstack``: one CONCAT record."""
    arrs = list(_as_tuple(atleast_1d(*_stack_check("hstack", tup, dtype))))
    if arrs and np.ndim(primal_array(arrs[0])) == 1:
        return concatenate(arrs, axis=0)
    return concatenate(arrs, axis=1)


def vstack(tup, *, dtype=None, casting="same_kind"):
    """``np.vstack``: one CONCAT record."""
    arrs = list(_as_tuple(atleast_2d(*_stack_check("vstack", tup, dtype))))
    return concatenate(arrs, axis=0)


def dstack(tup):
    """``np.dstack``: one CONCAT record."""
    arrs = list(_as_tuple(atleast_3d(*_stack_check("dstack", tup, None))))
    return concatenate(arrs, axis=2)


def column_stack(tup):
    """``np.column_stack``: 1-D inputs become columns; one CONCAT record."""
    arrays = []
    for v in _stack_check("column_stack", tup, None):
        if isinstance(v, Active):
            if v.ndim < 2:
                v = alias(v, (-1, 1))
        else:
            v = np.asanyarray(v)
            if v.ndim < 2:
                v = np.atleast_2d(v).T
        arrays.append(v)
    return concatenate(arrays, axis=1)


def block(arrays):
    """``np.block``: the innermost lists' blocks concatenated along the last axis, the next
    lists' along the second-last, and so on, every block first given the result's rank by
    leading axes of length 1 (NumPy's rule, ``numpy.block`` docs); one CONCAT record per
    list. Blocks may be actives, arrays, numbers or lists mixing them."""
    arrays = _blocks(arrays, as_operand)  # each block once (as_operand records a list's)
    expected = np.block(_blocks(arrays, primal_array))  # NumPy's checks and errors
    depth = 0
    inner = arrays
    while type(inner) is list:
        depth, inner = depth + 1, inner[0]

    def build(a, level):
        if type(a) is list:
            return concatenate([build(e, level + 1) for e in a], axis=level - depth)
        shape = np.shape(primal_array(a))
        return reshape_any(a, (1,) * (expected.ndim - len(shape)) + shape)
    out = build(arrays, 0)
    return out if isinstance(out, Active) else expected


def _blocks(a, fn):
    """``np.block``'s nested lists with ``fn`` applied to each block."""
    return [_blocks(e, fn) for e in a] if type(a) is list else fn(a)


def _as_tuple(r):
    return r if isinstance(r, (tuple, list)) else (r,)


def append(arr, values, axis=None):
    """``np.append``: one CONCAT record."""
    refuse_active("append", axis=axis)
    if axis is None:
        return concatenate([ravel_any(arr), ravel_any(values)], axis=0)
    return concatenate([arr, values], axis=axis)


def delete(arr, obj, axis=None):
    """``np.delete`` (obj an int, slice, int or bool array) as a gather."""
    refuse_active("delete", obj=obj, axis=axis)
    return rearrange(arr, lambda i: np.delete(i, obj, axis=axis))


def copy(a, order="K", subok=False):
    """``np.copy``: a new active object for the same record (no record), not a view.

    Later writes to ``a`` or to the copy are not seen by the other.
    """
    if order not in ("K", "A", "C", "F"):
        raise ValueError("order must be one of 'C', 'F', 'A', or 'K' (got %r)" % (order,))
    return alias(a, a.shape)


def take(a, indices, axis=None, out=None, mode="raise"):
    """``np.take`` (any mode) as a gather."""
    check_out("take", out)
    refuse_active("take", indices=indices, axis=axis)
    return rearrange(a, lambda i: np.take(i, indices, axis=axis, mode=mode))


def take_along_axis(arr, indices, axis=-1):
    """``np.take_along_axis`` as a gather."""
    refuse_active("take_along_axis", indices=indices, axis=axis)
    return rearrange(arr, lambda i: np.take_along_axis(i, indices, axis))


def diagonal(a, offset=0, axis1=0, axis2=1):
    """``np.diagonal`` as a strided view (stride n + 1), linked as NumPy's read-only view."""
    refuse_active("diagonal", offset=offset, axis1=axis1, axis2=axis2)
    return rearranged_view(a, lambda i: np.diagonal(i, offset, axis1, axis2))


def diag(v, k=0):
    """``np.diag`` (k): 1-D to 2-D by a gather with a zero constant; 2-D to its diagonal.

    A 1-D input gives the matrix with zeros off the k-th diagonal (a gather from the input
    concatenated with one zero constant); a 2-D input gives its k-th diagonal (a gather).
    """
    refuse_active("diag", k=k)
    vv = primal_array(v)
    if vv.ndim == 1:
        n = vv.size
        idx = np.diag(np.arange(1, n + 1, dtype=np.intp), k) - 1
        idx[idx < 0] = n
        return take_flat(with_extra(v, np.zeros(1)), idx)
    if vv.ndim == 2:
        return rearranged_view(v, lambda i: np.diag(i, k))  # a read-only view, as NumPy's
    np.diag(vv, k)  # NumPy's error for other ranks
    raise ValueError("Input must be 1- or 2-d.")


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """``np.trace``: the sum of ``np.diagonal`` along its last axis."""
    check_out("trace", out)
    check_dtype("trace", dtype)
    d = diagonal(a, offset, axis1, axis2)
    return sum_(d, axis=-1)


def _tri(fname, m, k, lower):
    refuse_active(fname, k=k)
    mv = primal_array(m)
    (np.tril if lower else np.triu)(shape_probe(mv.shape), k)  # NumPy's errors
    if lower:
        mask = np.tri(*mv.shape[-2:], k=k, dtype=bool)
    else:
        mask = ~np.tri(*mv.shape[-2:], k=k - 1, dtype=bool)
    return where(mask, m, 0.0)


def tril(m, k=0):
    """``np.tril``: a WHERE with a constant mask (0 above the k-th diagonal)."""
    return _tri("tril", m, k, True)


def triu(m, k=0):
    """``np.triu``: a WHERE with a constant mask (0 below the k-th diagonal)."""
    return _tri("triu", m, k, False)


def diff(a, n=1, axis=-1, prepend=NOVALUE, append=NOVALUE):
    """``np.diff`` (n, axis, prepend, append): slices and subtractions."""
    refuse_active("diff", n=n, axis=axis)
    if n == 0:
        return a
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    av = primal_array(a)
    nd = av.ndim
    if nd == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = normalize_axis_index(axis, nd)
    combined = []
    for extra, last in ((prepend, False), (append, True)):
        if extra is NOVALUE:
            continue
        if not isinstance(extra, Active):
            extra = np.asanyarray(extra)
        if np.ndim(primal_array(extra)) == 0:
            shape = list(av.shape)
            shape[axis] = 1
            extra = (broadcast_to(extra, tuple(shape)) if isinstance(extra, Active)
                     else np.broadcast_to(extra, tuple(shape)))
        combined.append((last, extra))
    if combined:
        parts = [e for last, e in combined if not last] + [a] + \
                [e for last, e in combined if last]
        a = concatenate(parts, axis=axis)
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
    refuse_active("pad", pad_width=pad_width)
    if not isinstance(mode, str):
        unsupported("pad", "a callable mode")
    x = array
    if mode == "constant":
        bad = set(kwargs) - {"constant_values"}
        if bad:
            raise ValueError(f"unsupported keyword arguments for mode '{mode}': {bad}")
        cv = kwargs.get("constant_values", 0)
        if has_active(cv):
            unsupported("pad", "active constant_values")
        nd = x.ndim
        cvs = np.broadcast_to(const_array(cv), (nd, 2))
        marks = x.size + np.arange(2 * nd, dtype=np.intp).reshape(nd, 2)
        idx = np.pad(flat_index(x), pad_width, mode="constant", constant_values=marks)
        if idx.size == x.size:  # no padding
            return take_flat(x, idx)
        return take_flat(with_extra(x, cvs), idx)
    if mode in _PAD_INDEX_MODES:
        if kwargs.get("reflect_type", "even") != "even":
            unsupported("pad", f"reflect_type={kwargs['reflect_type']!r}",
                         "only reflect_type='even' is a pure rearrangement")
        return rearrange(x, lambda i: np.pad(i, pad_width, mode=mode, **kwargs))
    unsupported("pad", f"mode={mode!r}",
                 "supported modes are 'constant', 'edge', 'reflect', 'symmetric', 'wrap'")


_FULL_LIKE = np.full_like  # NumPy's (a recording replaces the name: jittape.numpy.prealloc)


def _like(fill, name=None):
    def like(a, *args, dtype=None, order="K", subok=True, shape=None, **kw):
        fv = kw.pop("fill_value", args[0] if args else None)
        primal = [fv._v if isinstance(fv, Active) else fv] if fill is _FULL_LIKE else []
        value = fill(np.asarray(a._v), *primal, dtype=dtype, shape=shape, **kw)
        if isinstance(fv, Active):  # full_like(x, s): s broadcast to the shape
            return filled(fv, value.shape, value.dtype)
        if value.dtype != np.float64:
            return value  # an integer or boolean array: a constant, as NumPy's
        return const(a._t, value)
    like.__name__ = name or fill.__name__
    like.__doc__ = (f"``np.{like.__name__}`` of an active array: an active constant of its "
                    f"shape (so that item assignment of actives into it records), or the "
                    f"fill value broadcast if that is active" +
                    (" (zeros: jittape records no uninitialised memory)" if name else "") + ".")
    return like


zeros_like, ones_like, full_like = _like(np.zeros_like), _like(np.ones_like), _like(np.full_like)
empty_like = _like(np.zeros_like, "empty_like")


dispatch.FUNCTIONS.update({
    np.zeros_like: zeros_like, np.ones_like: ones_like, np.full_like: full_like,
    np.empty_like: empty_like,
    np.swapaxes: swapaxes, np.moveaxis: moveaxis, np.rollaxis: rollaxis,
    np.real_if_close: real_if_close, np.squeeze: squeeze,
    np.expand_dims: expand_dims, np.atleast_1d: atleast_1d, np.atleast_2d: atleast_2d,
    np.atleast_3d: atleast_3d, np.repeat: repeat, np.tile: tile, np.flip: flip,
    np.fliplr: fliplr, np.flipud: flipud, np.rot90: rot90, np.roll: roll, np.split: split,
    np.array_split: array_split, np.hsplit: hsplit, np.vsplit: vsplit, np.dsplit: dsplit,
    np.hstack: hstack, np.vstack: vstack, np.dstack: dstack, np.column_stack: column_stack,
    np.append: append, np.delete: delete, np.copy: copy, np.pad: pad, np.take: take,
    np.take_along_axis: take_along_axis, np.diag: diag, np.diagonal: diagonal,
    np.trace: trace, np.tril: tril, np.triu: triu, np.diff: diff,
    np.concatenate: concatenate, np.stack: stack, np.block: block,
})

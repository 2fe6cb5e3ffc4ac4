"""Rearranging and joining records: the shape primitives the NumPy functions compose.

Rearrangements (transpose, flips, rolls, ``take``, ...) apply the NumPy function itself to
the flat index array of the input (``np.arange(size).reshape(shape)``) and record one GATHER
by the result (:func:`rearrange`), or one STRIDED record when the result's positions are a
view's (:func:`strided`): NumPy decides the semantics (argument parsing, negative axes,
errors, result shape) and the adjoint is the scatter-add. A result that is
the input in C order is a free reshape (:func:`alias`). Values that are not in the input
(constants, the right-hand side of an item assignment) come from one concatenation with the
raveled input (:func:`with_extra`). Also here: the argument checks shared by the handlers
(every refusal names the function and the argument).
"""

import numpy as np

from . import dispatch
from .active import (Active, Predicate, broadcast_to, check_const, new_active,  # noqa: F401
                     tape_of, const, flat_index, gather, guard, reshape, strided)  # (for views)
from .._base.errors import NotDifferentiableError
from .object_arrays import as_operand
from ..optable.table import codes as K

try:  # NumPy >= 2
    from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple
except ImportError:  # NumPy 1.x
    from numpy.core.multiarray import normalize_axis_index
    from numpy.core.numeric import normalize_axis_tuple

__all__ = ["normalize_axis_index", "normalize_axis_tuple"]  # re-exported for the handlers


NOVALUE = np._NoValue


def has_active(v):
    """Whether ``v`` is active or holds an active value (lists, tuples, dicts at any depth)."""
    if isinstance(v, Active):
        return True
    if isinstance(v, (list, tuple)):
        return any(has_active(e) for e in v)
    if isinstance(v, dict):
        return any(has_active(e) for e in v.values())
    return False


def refuse_active(fname, **args):
    """Raise if an index/count/shape argument is active (it has no derivative)."""
    for name, v in args.items():
        if has_active(v):
            raise NotDifferentiableError(
                f"np.{fname}: argument '{name}' cannot be an active value (an index, count or "
                f"shape has no derivative). Use jittape.primal(...) for its current value.")


def unsupported(fname, arg, detail=""):
    raise NotDifferentiableError(
        f"np.{fname} with {arg} on active values is not supported" + (f": {detail}" if detail
                                                                      else "."))


def check_out(fname, out):
    if out is not None:
        unsupported(fname, "out=...", "in-place output is not recorded; assign the result")


def check_dtype(fname, dtype):
    if dtype is not None and np.dtype(dtype) != np.float64:
        unsupported(fname, f"dtype={dtype!r}", "only float64 carries derivatives")


def primal_array(x):
    """The primal of ``x`` as an ndarray (active or not)."""
    return np.asarray(x._v if isinstance(x, Active) else x)


def const_array(x):
    return np.asarray(check_const(x), dtype=np.float64)


def shape_probe(shape):
    """A zero-stride array of ``shape``: NumPy shape functions on it cost O(1)."""
    return np.broadcast_to(np.float64(0.0), shape)


def normalize_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(a, ndim)
        out.append(a % ndim)
    return tuple(sorted(set(out)))


def concrete_key(key):
    """Replace predicates in an index by bool arrays (guarded); refuse active indices."""
    if isinstance(key, tuple):
        return tuple(concrete_key(k) for k in key)
    if isinstance(key, Predicate):
        guard(key)
        return np.asarray(key._v, dtype=bool)
    if isinstance(key, Active):
        raise NotDifferentiableError(
            "An active float value cannot be an index: an index has no derivative. Use "
            "jittape.primal(x) to index by its current value (the tape then depends on it), "
            "or np.where / a boolean mask.")
    return key


def ravel(x, order="C"):
    return reshape(x, -1, order)


def transpose(x, axes=None):
    if x.ndim < 2 and axes is None:
        return x
    return view(x, np.transpose(probe(np.shape(x._v)), axes), np.transpose(x._v, axes))


# --- strided views ------------------------------------------------------------------------
# What NumPy returns as a view of x (basic slicing with steps, columns, transposes, flips,
# broadcasting) is one STRIDED record: the offset, shape and strides of the view in x's
# flat value, a few integers in the pool, never an index array (which would cost the pool
# 8 bytes per element and every sweep a load per element). NumPy computes the geometry:
# the same indexing or function applied to a *probe*, a uint8 array of x's shape over one
# byte of memory (never read), whose byte offsets and strides are element numbers.
_BYTE = np.zeros(1, np.uint8)


def probe(shape):
    """A C-ordered uint8 array of ``shape`` whose addresses are element numbers; O(1)."""
    shape = tuple(int(e) for e in shape)
    strides, step = [], 1
    for e in reversed(shape):
        strides.append(step)
        step *= max(e, 1)
    return np.lib.stride_tricks.as_strided(_BYTE, shape, tuple(reversed(strides)),
                                           writeable=False)


def view(x, q, value):
    """Record ``value``, the view ``q`` of :func:`probe` ``(x.shape)`` read from ``x``."""
    start = q.__array_interface__["data"][0] - _BYTE.__array_interface__["data"][0]
    return strided(x, start, q.shape, q.strides, value)


def affine(idx):
    """``(start, strides)`` if the integer array ``idx`` is ``start + sum_d i_d *
    strides[d]`` over its multi-index (a view's flat positions), else None."""
    flat = idx.ravel()
    start = int(flat[0])
    strides, expect = [], np.full(idx.shape, start, dtype=np.intp)
    for d, e in enumerate(idx.shape):
        s = int(idx[(0,) * d + (1,) + (0,) * (idx.ndim - d - 1)]) - start if e > 1 else 0
        strides.append(s)
        expect += (np.arange(e, dtype=np.intp) * s).reshape((e,) + (1,) * (idx.ndim - d - 1))
    return (start, strides) if np.array_equal(expect, idx) else None


def alias(x, shape):
    """A new active object for the same record, viewed with ``shape`` (no record)."""
    if isinstance(x, Predicate):  # a rearranged comparison result is still a mask
        v = np.asarray(x._v, dtype=bool).reshape(shape)
        return Predicate(x._t, x._i, bool(v) if v.ndim == 0 else v)
    v = np.asarray(x._v, dtype=np.float64).reshape(shape)
    return Active(x._t, x._i, float(v) if v.ndim == 0 else v)


def take_flat(x, idx):
    """Record ``x.flat[idx]``; free (a reshape) when ``idx`` is all of ``x`` in order."""
    idx = np.asarray(idx, dtype=np.intp)
    xv = np.ravel(np.asarray(x._v, dtype=np.float64))
    flat = idx.ravel()
    if flat.size == xv.size and flat.size and flat[0] == 0 and (
            flat.size == 1 or bool(np.all(np.diff(flat) == 1))):
        return alias(x, idx.shape)
    lay = affine(idx) if idx.size > 1 else None
    r = strided(x, lay[0], idx.shape, lay[1], xv[idx]) if lay else gather(x, idx, xv[idx])
    if isinstance(x, Predicate):  # 0/1 values gathered: still a mask
        v = np.asarray(r._v) != 0.0
        return Predicate(r._t, r._i, bool(v) if v.ndim == 0 else v)
    return r


def cyclic(values, shape):
    """An array of ``shape`` holding ``values.flat[k % values.size]`` at flat position ``k``:
    how NumPy's flat assignments (``a.flat[k] = v``, ``np.putmask``, ``np.place``,
    ``np.fill_diagonal``) repeat a shorter value and cut a longer one. ``values`` active (a
    gather, free when it is already that array) or constant (a float64 array); it must not
    be empty unless ``shape`` is."""
    n = int(np.prod(shape))
    if not isinstance(values, Active):
        return np.resize(np.asarray(check_const(values), dtype=np.float64), shape)
    m = np.size(values._v)
    return take_flat(values, (np.arange(n, dtype=np.intp) % m).reshape(shape))


def as_float(a):
    """An active comparison (bool values) as the active float array of its 0/1 values (the
    same record); any other value unchanged."""
    if not isinstance(a, Predicate):
        return a
    v = a._v
    return Active(a._t, a._i, float(v) if type(v) is bool else np.asarray(v, np.float64))


def filled(fill, shape, dtype=None):
    """``np.full(shape, fill, dtype)`` for an active ``fill`` broadcast to ``shape``
    (NumPy's broadcasting errors): float64 (or ``dtype`` None) a new active array, floats
    even for a comparison; bool of a comparison a comparison result; a bool or integer
    dtype otherwise NumPy's array of the converted values (guarded: a replay where they
    differ records again); complex128 an active complex value. Other dtypes raise
    :class:`NotDifferentiableError`."""
    dt = np.dtype(np.float64 if dtype is None else dtype)
    shape = tuple(shape) if np.ndim(shape) else (int(shape),)
    b = broadcast_to(fill, shape)
    if b is fill:
        b = alias(fill, shape)  # a new object: a write into the result leaves fill alone
    if dt.kind == "b" and isinstance(b, Predicate):
        return b
    b = as_float(b)
    if dt == np.float64:
        return b
    if dt.kind in "biu":
        return dispatch.OPERATORS["to_array"](b, dt)
    if dt == np.complex128:
        return dispatch.COMPLEX(b, 0.0)
    raise NotDifferentiableError(
        f"an array of dtype {dt} filled with an active value: only float64 carries "
        f"derivatives. Use dtype=float64 (the default), or jittape.primal(value) for a "
        f"constant fill.")


def rearrange(x, fn):
    """Record ``fn(x)`` for a NumPy function ``fn`` that only moves/selects elements."""
    return take_flat(x, fn(flat_index(x)))


def ravel_any(x):
    x = as_operand(x)
    return alias(x, (-1,)) if isinstance(x, Active) else np.ravel(const_array(x))


def reshape_any(x, shape):
    x = as_operand(x)
    return alias(x, shape) if isinstance(x, Active) else np.reshape(const_array(x), shape)


def transpose_any(x, perm):
    perm = tuple(int(p) for p in perm)
    if perm == tuple(range(len(perm))):
        return x
    return transpose(x, perm) if isinstance(x, Active) else np.transpose(x, perm)


def concatenate(arrays, axis=0, out=None, **kw):
    """``np.concatenate`` of active and constant arrays (axis None: raveled); one CONCAT
    record whose adjoint hands each part its slice."""
    if out is not None or kw.get("dtype") is not None:
        raise NotDifferentiableError("np.concatenate(out=/dtype=) on active values")
    arrays = [as_operand(a) for a in arrays]  # (mixed lists: [x[0] - 1.0, 2.0])
    t = tape_of(*arrays)
    if len(arrays) == 1 and isinstance(arrays[0], Active) and np.ndim(arrays[0]._v):
        np.concatenate([shape_probe(np.shape(arrays[0]._v))], axis=axis)  # NumPy's checks
        return alias(arrays[0], (-1,) if axis is None else np.shape(arrays[0]._v))  # a copy
    if axis is None:
        arrays, axis = [np.ravel(a) for a in arrays], 0
    vals = [a._v if isinstance(a, Active) else np.asarray(a, dtype=np.float64) for a in arrays]
    z = np.concatenate(vals, axis=axis)
    axis = axis % z.ndim
    parts = [a if isinstance(a, Active) else const(t, a) for a in arrays]
    outer = int(np.prod(z.shape[:axis]))
    layout = [len(parts), outer]
    for p, pv in zip(parts, vals):
        layout += [p._i, int(np.prod(pv.shape[axis:]))]
    return new_active(Active, t, K.CONCAT, parts[0]._i, -1, t.push_pool(layout), 0.0, z)


def stack(arrays, axis=0, out=None, **kw):
    """``np.stack``: a concatenation of the arrays with a new axis."""
    arrays = [as_operand(a) for a in arrays]
    shape = np.shape(arrays[0]._v if isinstance(arrays[0], Active) else arrays[0])
    axis = axis % (len(shape) + 1)
    new = shape[:axis] + (1,) + shape[axis:]
    return concatenate([reshape(a, new) if isinstance(a, Active) else np.reshape(a, new)
                        for a in arrays], axis=axis, out=out, **kw)


def with_extra(x, extra):
    """The raveled active ``x`` followed by the raveled ``extra`` (constant or active): one
    CONCAT record; ``x``'s elements keep their flat numbers, ``extra``'s start at x.size."""
    return concatenate([alias(x, (-1,)), ravel_any(extra)])


dispatch.OPERATORS["as_float"] = as_float

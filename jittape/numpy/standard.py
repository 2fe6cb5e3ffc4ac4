"""NumPy functions of the array API standard not covered elsewhere, on active values.

NumPy 2 added the standard's spellings (``astype``, ``matrix_transpose``, ``unstack``,
``cumulative_sum``, ``unique_values``, ...) beside its own; SciPy's array-API code calls
them (:mod:`jittape.numpy.array_api`). Each is built from jittape's existing records, so it
needs no rule of its own. The functions that answer with integers or booleans (``any``,
``all``, ``argsort``, ``nonzero``, ``count_nonzero``, ``searchsorted``) give NumPy's result
and record a GUARD on what it depends on: a replay where it would differ records again.
"""

import numpy as np

from . import dispatch
from .active import Active, compare, guard
from .selection import truth
from .._base.errors import NotDifferentiableError
from ..optable.table import codes as K


def _guarded(x):
    """The primal of active ``x``, guarded (a replay where it differs records again)."""
    guard(x)
    return np.asarray(x._v)


def any_(x, axis=None, out=None, keepdims=False, *, where=True):
    """``np.any`` of an active value: NumPy's bool, guarded."""
    return np.any(truth(x), axis=axis, out=out, keepdims=keepdims, where=where)


def all_(x, axis=None, out=None, keepdims=False, *, where=True):
    """``np.all`` of an active value: NumPy's bool, guarded."""
    return np.all(truth(x), axis=axis, out=out, keepdims=keepdims, where=where)


def count_nonzero(x, axis=None, *, keepdims=False):
    """``np.count_nonzero``: NumPy's integers, guarded."""
    return np.count_nonzero(truth(x), axis=axis, keepdims=keepdims)


def nonzero(x):
    """``np.nonzero``: NumPy's index arrays, guarded."""
    return np.nonzero(truth(x))


def argsort(x, axis=-1, kind=None, order=None, *, stable=None):
    """``np.argsort``: NumPy's permutation (its own tie order for ``kind``). The guard is on
    the stable permutation of ``np.sort``'s record, so a replay whose order differs records
    again."""
    if order is not None:
        raise NotDifferentiableError("np.argsort(order=...) (structured arrays) on active "
                                     "values")
    from .reductions import sort_record
    guard(sort_record(x, axis)[1])
    return np.argsort(np.asarray(x._v), axis=axis, kind=kind, stable=stable)


def searchsorted(a, v, side="left", sorter=None):
    """``np.searchsorted``: NumPy's indices, guarded on the comparisons that decide them
    (every element of ``v`` against every element of ``a``)."""
    av = a._v if isinstance(a, Active) else a
    vv = v._v if isinstance(v, Active) else v
    if isinstance(a, Active) or isinstance(v, Active):
        cmp = K.LE if side == "left" else K.LT
        a1 = np.ravel(a if sorter is None else np.take(a, sorter))
        guard(compare(cmp, np.expand_dims(a1, 0), np.expand_dims(np.ravel(v), 1)))
    return np.searchsorted(np.asarray(av), vv, side=side, sorter=sorter)


def astype(x, dtype, /, *, copy=True, device=None):
    """``np.astype`` (the standard's spelling of ``x.astype``)."""
    if device not in (None, "cpu"):
        raise ValueError(f"astype: device {device!r}: jittape's arrays live on 'cpu'")
    return x.astype(dtype, copy=copy)


def matrix_transpose(x, /):
    """``np.matrix_transpose``: the last two axes swapped (a view)."""
    if np.ndim(x) < 2:
        raise ValueError(f"matrix_transpose needs at least 2 dimensions, got {np.ndim(x)}")
    return np.swapaxes(x, -1, -2)


def unstack(x, /, *, axis=0):
    """``np.unstack``: the views ``x[..., i, ...]`` along ``axis``, as a tuple."""
    moved = np.moveaxis(x, axis, 0)
    return tuple(moved[i] for i in range(np.shape(moved)[0]))


def broadcast_arrays(*args, subok=False):
    """``np.broadcast_arrays``: every argument broadcast to the common shape (views)."""
    shape = np.broadcast_shapes(*(np.shape(a) for a in args))
    return tuple(np.broadcast_to(a, shape) for a in args)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """``np.meshgrid``: NumPy's shapes, built by reshaping and broadcasting."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    nd = len(xi)
    out = [np.reshape(x, (1,) * i + (-1,) + (1,) * (nd - i - 1)) for i, x in enumerate(xi)]
    if indexing == "xy" and nd > 1:
        out[0] = np.reshape(out[0], (1, -1) + (1,) * (nd - 2))
        out[1] = np.reshape(out[1], (-1, 1) + (1,) * (nd - 2))
    if not sparse:
        out = list(broadcast_arrays(*out))
        out = [+o if copy else o for o in out]
    return tuple(out)


def _cumulative(scan, name):
    def cumulative(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        if axis is None:
            if np.ndim(x) > 1:
                raise ValueError(f"{name}: axis must be given for arrays of more than "
                                 f"one dimension")
            axis = 0
        z = scan(x, axis=axis, dtype=dtype, out=out)
        if not include_initial:
            return z
        shape = list(np.shape(z))
        shape[axis] = 1
        first = np.zeros(shape) if scan is np.cumsum else np.ones(shape)
        return np.concatenate([first, z], axis=axis)
    cumulative.__name__ = name
    cumulative.__doc__ = f"``np.{name}``: ``np.{scan.__name__}``, with NumPy's " \
                         f"``include_initial``."
    return cumulative


def unique_values(x, /):
    """``np.unique_values``: the distinct values, sorted; the pattern of equal elements is
    guarded, each value's adjoint goes to its first occurrence."""
    v = np.ravel(np.asarray(x._v))
    _, first = np.unique(v, return_index=True)
    flat = np.ravel(x)
    guard(compare(K.EQ, np.expand_dims(flat, 0), np.expand_dims(flat, 1)))
    sorted_first = first[np.argsort(v[first], kind="stable")]
    return flat[sorted_first]


def _fftshift(sign, name):
    def shift(x, axes=None):
        nd = np.ndim(x)
        axes = tuple(range(nd)) if axes is None else (axes,) if np.ndim(axes) == 0 else \
            tuple(axes)
        shape = np.shape(x)
        return np.roll(x, [sign * (shape[a] // 2) for a in axes], axis=axes)
    shift.__name__ = name
    shift.__doc__ = f"``np.fft.{name}``: ``np.roll`` by half of each axis (NumPy's shifts)."
    return shift


def linalg_outer(x1, x2, /):
    """``np.linalg.outer``: ``np.outer`` of two vectors (NumPy's error for other ranks)."""
    if np.ndim(x1) != 1 or np.ndim(x2) != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={np.ndim(x1)} and x2.ndim={np.ndim(x2)}.")
    return np.outer(x1, x2)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """``np.linalg.vector_norm``: the vector ``ord``-norm over ``axis`` (None: all
    elements; a tuple: those axes together), through ``np.linalg.norm`` of the merged axes."""
    nd = np.ndim(x)
    axes = tuple(range(nd)) if axis is None else (axis,) if np.ndim(axis) == 0 else \
        tuple(axis)
    axes = tuple(a % nd for a in axes) if nd else ()
    rest = [a for a in range(nd) if a not in axes]
    moved = np.transpose(x, rest + list(axes)) if nd else x
    shape = np.shape(moved)[:len(rest)]
    flat = np.reshape(moved, shape + (-1,))
    out = np.linalg.norm(flat, ord=ord, axis=-1)
    if keepdims:
        out = np.reshape(out, tuple(1 if a in axes else np.shape(x)[a] for a in range(nd)))
    return out


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """``np.linalg.matrix_norm``: ``np.linalg.norm`` over the last two axes."""
    return np.linalg.norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def _chain_order(shapes):
    """The split points of the cheapest parenthesization of a matrix chain (the textbook
    dynamic programme, Cormen et al., "Introduction to Algorithms", sec. 15.2; NumPy's
    ``multi_dot`` runs the same one, strict ``<``, so ties break alike)."""
    p = [shapes[0][0]] + [sh[1] for sh in shapes]
    n = len(shapes)
    m = [[0.0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            m[i][j] = float("inf")
            for k in range(i, j):
                q = m[i][k] + m[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if q < m[i][j]:
                    m[i][j], split[i][j] = q, k
    return split


def multi_dot(arrays, *, out=None):
    """``np.linalg.multi_dot``: NumPy's parenthesization (by shapes), each product a
    recorded ``np.dot``; vectors at the ends as NumPy treats them."""
    if out is not None:
        raise NotDifferentiableError("np.linalg.multi_dot(out=...) on active values")
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    if len(arrays) == 2:
        return np.dot(arrays[0], arrays[1])
    first, last = np.ndim(arrays[0]), np.ndim(arrays[-1])
    if first == 1:
        arrays[0] = np.reshape(arrays[0], (1, -1))
    if last == 1:
        arrays[-1] = np.reshape(arrays[-1], (-1, 1))
    if any(np.ndim(a) != 2 for a in arrays):
        raise np.linalg.LinAlgError("multi_dot: every array but the first and last must be "
                                    "two-dimensional")
    split = _chain_order([np.shape(a) for a in arrays])

    def product(i, j):
        return arrays[i] if i == j else np.dot(product(i, split[i][j]),
                                               product(split[i][j] + 1, j))
    result = product(0, len(arrays) - 1)
    if first == 1 and last == 1:
        return result[0, 0]
    return np.ravel(result) if first == 1 or last == 1 else result


def cond(x, p=None):
    """``np.linalg.cond``: ``s_max / s_min`` of the singular values for ``p`` None, 2 (and
    ``s_min / s_max`` for -2), else ``norm(x, p) norm(inv(x), p)`` (NumPy's definitions)."""
    if p is None or p == 2 or p == -2:
        s = np.linalg.svdvals(x)
        return s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    return np.linalg.norm(x, p, axis=(-2, -1)) * np.linalg.norm(np.linalg.inv(x), p,
                                                              axis=(-2, -1))


dispatch.FUNCTIONS.update({
    np.linalg.multi_dot: multi_dot, np.linalg.cond: cond,
    np.linalg.outer: linalg_outer, np.linalg.vector_norm: vector_norm,
    np.linalg.matrix_norm: matrix_norm,
    np.fft.fftshift: _fftshift(1, "fftshift"), np.fft.ifftshift: _fftshift(-1, "ifftshift"),
    np.any: any_, np.all: all_, np.count_nonzero: count_nonzero, np.nonzero: nonzero,
    np.argsort: argsort, np.searchsorted: searchsorted, np.astype: astype,
    np.matrix_transpose: matrix_transpose, np.unstack: unstack,
    np.broadcast_arrays: broadcast_arrays, np.meshgrid: meshgrid,
    np.cumulative_sum: _cumulative(np.cumsum, "cumulative_sum"),
    np.cumulative_prod: _cumulative(np.cumprod, "cumulative_prod"),
    np.unique_values: unique_values,
})

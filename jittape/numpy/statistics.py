"""Order statistics of active values: ``median``, ``percentile``, ``quantile``, ``partition``.

Each is a composition around one SORT record (:func:`jittape.numpy.reductions.sort`), whose
permutation a replay recomputes: NumPy's quantile of a slice is a fixed linear combination
of two order statistics, ``lerp(s[i], s[i + 1], g)``, whose positions ``i`` and weights ``g``
depend only on the slice length, ``q`` and the method, so they are constants of the tape
and the derivative is the interpolation weights carried back through sort's adjoint. NumPy
decides the semantics: it is called on the primal first (its errors, warnings and result
shape), and the positions and weights come from its own table of methods
(``numpy.lib._function_base_impl._QuantileMethods``, H&F 1996), evaluated as
``np.quantile`` evaluates it (``_quantile``, ``_get_indexes``, ``_get_gamma``, ``_lerp``).
A slice holding a NaN gives NaN, as NumPy's (its last sorted element, NaN, is copied).
"""

import numpy as np

from . import dispatch
from .active import Active, tape_of, const
from .selection import where
from .reductions import mean, sort
from .shaping import (alias, rearrange, refuse_active, take_flat, transpose_any, unsupported,
                      primal_array, normalize_axis_tuple)

try:  # NumPy >= 2
    from numpy.lib._function_base_impl import _QuantileMethods
except ImportError:
    try:  # NumPy 1.22-1.26
        from numpy.lib.function_base import _QuantileMethods
    except ImportError:  # a NumPy without the table: its documented default only
        _QuantileMethods = {"linear": {"get_virtual_index": lambda n, q: (n - 1) * q,
                                       "fix_gamma": lambda gamma, _: gamma}}


def _as_active(a, *others):
    if isinstance(a, Active):
        return a
    return const(tape_of(*others), np.asarray(a, dtype=np.float64))


def _to_last(a, axis):
    """``a`` with the reduced axes merged into one last axis (NumPy's ``_ureduce``):
    ``(kept shape + (n,))``; axis None reduces everything."""
    v = primal_array(a)
    if axis is None:
        return alias(a, (v.size,))
    axes = normalize_axis_tuple(axis, v.ndim)
    keep = [i for i in range(v.ndim) if i not in axes]
    a = transpose_any(a, keep + list(axes))
    return alias(a, tuple(v.shape[i] for i in keep) + (-1,))


def _order_stat(s, idx):
    """``s[..., idx]`` with the axes of ``idx`` first (NumPy's ``take(arr, idx, axis=0)``
    on the axis-first layout): shape ``idx.shape + s.shape[:-1]``."""
    idx = np.asarray(idx)
    rest = np.ndim(s._v) - 1

    def pick(i):
        t = np.take(i, idx, axis=-1)
        return np.moveaxis(t, list(range(rest, t.ndim)), list(range(idx.ndim)))
    return rearrange(s, pick)


def _nan_slices(s, result):
    """NumPy's NaN rule: where a slice's last sorted element is NaN, the result is it."""
    last = _order_stat(s, np.asarray(-1))
    return where(last != last, last, result)


def _lerp(a, b, t):
    """NumPy's ``_lerp``: ``a + (b - a) t``, or ``b - (b - a)(1 - t)`` where ``t >= 0.5``
    (the same rounding as NumPy's); ``t`` is a constant."""
    d = b - a
    up = np.asarray(t) >= 0.5
    if not up.any():
        return a + d * t
    if up.all():
        return b - d * (1 - t)
    return where(up, b - d * (1 - t), a + d * t)


def _positions(n, q, method):
    """``(prev, next, gamma)`` of NumPy's ``_quantile`` for ``n`` values (``gamma`` None:
    a plain take of ``prev``)."""
    try:
        props = _QuantileMethods[method]
    except KeyError:
        raise ValueError(f"{method!r} is not a valid method. Use one of: "
                         f"{_QuantileMethods.keys()}") from None
    virtual = np.asanyarray(props["get_virtual_index"](n, q))
    if props["fix_gamma"] is None or (method == "linear" and
                                      np.issubdtype(virtual.dtype, np.integer)):
        return virtual, None, None
    prev = np.array(np.floor(virtual))  # 0-d arrays, not scalars: assigned into below
    nxt = np.array(prev + 1)
    for mask, at in ((virtual >= n - 1, -1), (virtual < 0, 0), (np.isnan(virtual), -1)):
        prev[mask] = at
        nxt[mask] = at
    prev, nxt = prev.astype(np.intp), nxt.astype(np.intp)
    gamma = props["fix_gamma"](np.asanyarray(virtual - prev), virtual)
    return prev, nxt, np.asanyarray(gamma, dtype=virtual.dtype)


def _quantile(a, q, axis, method, keepdims, expected, weak_q):
    a = _as_active(a)
    s = sort(_to_last(a, axis), axis=-1)
    sv = np.asarray(s._v)
    if sv.size == 0:  # NumPy's answer had no element to read (or raised already)
        return expected
    prev, nxt, gamma = _positions(sv.shape[-1], q, method)
    if gamma is None:
        r = _order_stat(s, prev)
    else:
        g = float(gamma) if weak_q else gamma.reshape(gamma.shape + (1,) * (sv.ndim - 1))
        r = _lerp(_order_stat(s, prev), _order_stat(s, nxt), g)
    r = _nan_slices(s, r)
    return alias(r, np.shape(expected)) if keepdims else r


def _quantile_args(fname, a, q, out, weights, kw):
    if out is not None:
        unsupported(fname, "out=...", "in-place output is not recorded; assign the result")
    if weights is not None:
        unsupported(fname, "weights=...", "weighted quantiles pick order statistics by "
                     "the data's permutation; call it on jittape.primal(a) for no derivative")
    refuse_active(fname, q=q)
    if kw:
        raise TypeError(f"{fname}() got an unexpected keyword argument {sorted(kw)[0]!r}")


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, **kw):
    """``np.quantile``: interpolated order statistics of one SORT record, every method.

    ``q`` scalar or array, axis int/tuple/None, keepdims, every unweighted method (default
    'linear'); shape ``q.shape + reduced shape``.

    ``lerp(s[i], s[i+1], g)`` of the sorted slice ``s`` (NumPy's positions and weights), so
    the gradient is ``1 - g`` at the i-th order statistic and ``g`` at the next, through the
    sort's permutation (recomputed on replay). A slice with a NaN gives NaN. ``q`` must be
    constant; ``out=`` and ``weights=`` are refused.
    """
    _quantile_args("quantile", a, q, out, weights, kw)
    expected = np.quantile(primal_array(a), q, axis=axis, method=method, keepdims=keepdims)
    weak_q = type(q) in (int, float)
    return _quantile(a, np.asanyarray(q), axis, method, keepdims, expected, weak_q)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, **kw):
    """``np.percentile``: :func:`quantile` at ``q / 100`` (NumPy's own division)."""
    _quantile_args("percentile", a, q, out, weights, kw)
    expected = np.percentile(primal_array(a), q, axis=axis, method=method, keepdims=keepdims)
    weak_q = type(q) in (int, float)
    return _quantile(a, np.true_divide(q, 100), axis, method, keepdims, expected,
                     weak_q)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``np.median``: the middle order statistic(s) of one SORT record.

    Axis int/tuple/None, keepdims: the middle order statistic, or the mean of the two
    middle ones (NumPy's ``_median``: ``(s[i-1] + s[i]) / 2``).

    The gradient goes to the middle element(s) of the sort's permutation (1, or 1/2 each).
    A slice with a NaN gives NaN, as NumPy's.
    """
    if out is not None:
        unsupported("median", "out=...", "in-place output is not recorded; assign the result")
    refuse_active("median", axis=axis)
    expected = np.median(primal_array(a), axis=axis, keepdims=keepdims)  # errors, empty warnings
    a = _as_active(a)
    s = sort(_to_last(a, axis), axis=-1)
    n = np.shape(s._v)[-1]
    if np.size(s._v) == 0 or n == 0:
        return expected
    h = n // 2
    r = mean(s[..., h:h + 1] if n % 2 else s[..., h - 1:h + 1], axis=-1)
    r = _nan_slices(s, r)
    return alias(r, np.shape(expected)) if keepdims else r


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """``np.partition``: NumPy's values, as a gather of one SORT record's values.

    NumPy's result ``z`` is recorded as ``sort(a)[rank]`` with ``rank`` the positions of
    ``z``'s elements in sorted order (one SORT and one GATHER record), so the gradient goes
    through sort's permutation and a replay recomputes it: at any point the k-th elements
    are the k-th order statistics and each side holds the smaller/larger ones. NumPy leaves
    the order within each side undefined; a replay keeps the recorded arrangement of ranks,
    which is NumPy's wherever the data's order is the recorded one.
    """
    if order is not None:
        unsupported("partition", "order=...", "structured arrays have no derivative")
    refuse_active("partition", kth=kth, axis=axis)
    z = np.partition(primal_array(a), kth, axis=axis, kind=kind)  # NumPy's values and errors
    ax = -1 if axis is None else axis
    s = sort(_as_active(a), axis=axis)
    rank = np.argsort(np.argsort(z, axis=ax, kind="stable"), axis=ax, kind="stable")
    return take_flat(s, np.take_along_axis(np.reshape(np.arange(z.size), z.shape), rank, ax))


dispatch.FUNCTIONS.update({
    np.quantile: quantile, np.percentile: percentile, np.median: median,
    np.partition: partition,
})

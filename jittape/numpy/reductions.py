"""Reductions, scans, sorting and statistics of active values.

``sum``, ``prod``, ``max``, ``min`` record one reduction per reduced axis (or one over
everything), ``argmax``/``argmin`` are guarded integers, ``cumsum``/``cumprod``/``sort``
work along one axis (a replayed SORT recomputes its permutation). ``mean``, ``var``,
``std``, ``average``, ``clip``, ``round``, ``sinc`` and SciPy's ``logsumexp`` are
compositions of recorded ops.
"""

import math
import warnings

import numpy as np

from . import dispatch
from .active import Active, new_active, tape_of, broadcast_to, const, guard, reshape
from .selection import where
from .._base.errors import NotDifferentiableError
from ..optable.table import codes as K
from .shaping import (NOVALUE, normalize_axes, check_dtype, check_out, const_array, refuse_active,
                      reshape_any, transpose_any, unsupported, primal_array, normalize_axis_tuple,
                      ravel)


def _reduce(opc, npf, x, axis=None, keepdims=False, **kw):
    bad = {k: v for k, v in kw.items() if v is not None and k not in ("dtype",)}
    if bad or kw.get("dtype") not in (None, float, np.float64):
        raise NotDifferentiableError(
            f"np.{npf.__name__} with {sorted(bad) or 'dtype'} on active values is not supported")
    if not isinstance(x, Active):
        return npf(x, axis=axis, keepdims=keepdims)
    v = np.asarray(x._v)
    axes = normalize_axes(axis, v.ndim)
    t = x._t
    if len(axes) == v.ndim:  # everything: one record over (1, size, 1)
        layout = (1, v.size, 1)
        r = new_active(Active, t, opc, x._i, -1, t.push_pool(layout), 0.0,
                 npf(v) if v.size else _empty_reduce(npf))
    else:  # one record per axis, highest axis first so the others keep their numbers
        r, cur = x, v
        for ax in reversed(axes):
            shp = cur.shape
            layout = (int(np.prod(shp[:ax])), shp[ax], int(np.prod(shp[ax + 1:])))
            cur = npf(cur, axis=ax)
            r = new_active(Active, t, opc, r._i, -1, t.push_pool(layout), 0.0, cur)
    if keepdims:
        r = reshape(r, npf(v, axis=axis, keepdims=True).shape)
    return r


def _empty_reduce(npf):
    if npf in (np.max, np.min):
        raise ValueError(f"zero-size array to reduction operation {npf.__name__} which has no "
                         f"identity")
    return npf(np.zeros(0))


def sum_(x, axis=None, dtype=None, out=None, keepdims=False, **kw):
    """``np.sum`` (axis: int, tuple or None; keepdims): adjoint broadcast back."""
    return _reduce(K.SUM, np.sum, x, axis, keepdims, dtype=dtype, out=out, **kw)


def mean(x, axis=None, dtype=None, out=None, keepdims=False, **kw):
    """``np.mean``: the sum divided by the count of reduced elements."""
    s = sum_(x, axis, dtype, out, keepdims, **kw)
    count = np.size(x._v) // max(np.size(s._v), 1)
    return s / float(count)


def prod(x, axis=None, dtype=None, out=None, keepdims=False, **kw):
    """``np.prod``: adjoint exact with zero factors (products of the others)."""
    return _reduce(K.PROD, np.prod, x, axis, keepdims, dtype=dtype, out=out, **kw)


def max_(x, axis=None, out=None, keepdims=False, **kw):
    """``np.max``/``np.amax``: the adjoint goes to the maximal elements (ties share it)."""
    return _reduce(K.MAX, np.max, x, axis, keepdims, out=out, **kw)


def min_(x, axis=None, out=None, keepdims=False, **kw):
    """``np.min``/``np.amin``: the adjoint goes to the minimal elements (ties share it)."""
    return _reduce(K.MIN, np.min, x, axis, keepdims, out=out, **kw)


def _argext(opc, npf, x, axis=None, out=None, keepdims=False):
    """``np.argmax``/``np.argmin``: plain integers, guarded (control flow may use them)."""
    if out is not None:
        raise NotDifferentiableError(f"np.{npf.__name__}(out=...) on active values")
    v = np.asarray(x._v)
    z = npf(v, axis=axis, keepdims=keepdims)
    if axis is None:
        layout = (1, v.size, 1)
    else:
        ax = normalize_axes(axis, v.ndim)[0]
        layout = (int(np.prod(v.shape[:ax])), v.shape[ax], int(np.prod(v.shape[ax + 1:])))
    t = x._t
    r = new_active(Active, t, opc, x._i, -1, t.push_pool(layout), 0.0,
             z.astype(np.float64) if np.ndim(z) else float(z))
    guard(r)
    return z


def argmax(x, axis=None, out=None, keepdims=False):
    """``np.argmax``: NumPy integers, guarded on replay."""
    return _argext(K.ARGMAX, np.argmax, x, axis, out, keepdims)


def argmin(x, axis=None, out=None, keepdims=False):
    """``np.argmin``: NumPy integers, guarded on replay."""
    return _argext(K.ARGMIN, np.argmin, x, axis, out, keepdims)


def sum_any(x, axis=None, keepdims=False):
    if isinstance(x, Active):
        return sum_(x, axis=axis, keepdims=keepdims)
    return np.sum(x, axis=axis, keepdims=keepdims)


def _along_axis(x, axis):
    """``(x, (outer, n, inner), value, axis)`` for an op along ``axis`` (None: flattened)."""
    if axis is None:
        x, axis = ravel(x), 0
    v = np.asarray(x._v)
    if v.ndim == 0:
        x, v, axis = reshape(x, (1,)), v.reshape(1), 0
    ax = normalize_axes(axis, v.ndim)[0]
    layout = (int(np.prod(v.shape[:ax])), v.shape[ax], int(np.prod(v.shape[ax + 1:])))
    return x, layout, v, ax


def _scan(opc, npf, x, axis, dtype, out):
    if out is not None or dtype not in (None, float, np.float64):
        raise NotDifferentiableError(f"np.{npf.__name__}(out=/dtype=) on active values")
    x, layout, v, ax = _along_axis(x, axis)
    t = x._t
    return new_active(Active, t, opc, x._i, -1, t.push_pool(layout), 0.0, npf(v, axis=ax))


def cumsum(x, axis=None, dtype=None, out=None):
    """``np.cumsum`` along one axis (None: flattened); the adjoint is a reversed cumsum."""
    return _scan(K.CUMSUM, np.cumsum, x, axis, dtype, out)


def cumprod(x, axis=None, dtype=None, out=None):
    """``np.cumprod`` along one axis (None: flattened); adjoint exact with zeros, O(n)."""
    return _scan(K.CUMPROD, np.cumprod, x, axis, dtype, out)


def sort(x, axis=-1, kind=None, order=None, stable=None):
    """``np.sort``: one SORT record (values, then the permutation) and a slice of it.

    On replay the permutation is recomputed, so the adjoint follows the new order.
    """
    if order is not None:
        raise NotDifferentiableError("np.sort(order=...) (structured arrays) on active values")
    return sort_record(x, axis)[0]


def sort_record(x, axis):
    """One SORT record of ``x`` along ``axis`` (None: flattened): ``(sorted values, stable
    permutation)``, two actives sliced from it (the permutation as float64)."""
    x, layout, v, ax = _along_axis(x, axis)
    t = x._t
    perm = np.argsort(v, axis=ax, kind="stable")
    z = np.take_along_axis(v, perm, axis=ax)
    both = np.concatenate([z.ravel(), perm.ravel().astype(np.float64)])
    rec = new_active(Active, t, K.SORT, x._i, -1, t.push_pool(layout), 0.0, both)
    values = new_active(Active, t, K.SLICE, rec._i, -1, 0, 0.0, z.ravel())
    p = new_active(Active, t, K.SLICE, rec._i, -1, z.size, 0.0, both[z.size:])
    return reshape(values, z.shape), p


def clip(x, a_min=None, a_max=None, out=None, **kw):
    """``np.clip`` as maximum/minimum (active or constant bounds; NaN propagates)."""
    if out is not None:
        raise NotDifferentiableError("np.clip(out=...) on active values")
    a_min = kw.pop("min", a_min)
    a_max = kw.pop("max", a_max)
    if kw:
        raise NotDifferentiableError(f"np.clip with {sorted(kw)} on active values")
    from .active import binary
    if a_min is not None:
        x = binary(K.MAXIMUM, x, a_min)
    if a_max is not None:
        x = binary(K.MINIMUM, x, a_max)
    return x


def round_(x, decimals=0, out=None):
    """``np.round``: RINT (zero derivative), scaled when ``decimals`` is not 0."""
    from .active import unary
    if out is not None:
        raise NotDifferentiableError("np.round(out=...) on active values")
    if decimals == 0:
        return unary(K.RINT, x)
    scale = 10.0 ** decimals
    return unary(K.RINT, x * scale) / scale


def sinc(x):
    """``np.sinc``: sin(pi x) / (pi x), 1 at 0 (np.where keeps 0/0 out of the derivative)."""
    px = x * math.pi
    return where(x == 0.0, 1.0, np.sin(px) / where(x == 0.0, 1.0, px))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``scipy.special.logsumexp`` for active values: ``m + log(sum(b exp(a - m)))``.

    ``m`` is the maximum along ``axis`` (0 where it is not finite), recorded as a
    stop-gradient value: it cancels in the derivative, and a replay recomputes it, so the
    shift keeps ``exp`` in range at every point. Arguments and result as SciPy's; with
    ``return_sign`` the pair ``(log |sum|, sign of sum)``, the sign an active value with
    zero derivative (``np.sign``).
    """
    from .active import unary
    m = np.max(a, axis=axis, keepdims=True)
    if isinstance(m, Active):
        m = unary(K.STOPGRAD, m)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(a - m)
    if b is not None:
        e = e * b
    total = np.sum(e, axis=axis, keepdims=keepdims)
    sign = np.sign(total) if return_sign else None
    out = np.log(np.abs(total) if return_sign else total)
    if not keepdims:
        m = np.reshape(m, np.shape(out))
    return (out + m, sign) if return_sign else out + m


_mean, _where = mean, where  # var's and std's parameters shadow them


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NOVALUE, *, where=NOVALUE,
        mean=NOVALUE, correction=NOVALUE, _fname="var"):
    """``np.var`` (axis, ddof or correction, keepdims, mean): sum((x - mean)^2) / (N - ddof).

    Its gradient ``2 (x - mean) / (N - ddof)`` is exact everywhere, also for one element
    (0). Where ``N - ddof <= 0`` NumPy divides by 0 (inf, or nan for 0/0) and warns
    "Degrees of freedom <= 0 for slice"; so does this, and the gradient there is inf/nan,
    never a finite number.
    """
    check_out(_fname, out)
    check_dtype(_fname, dtype)
    if where is not NOVALUE:
        unsupported(_fname, "where=...")
    if correction is not NOVALUE:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    refuse_active(_fname, axis=axis, ddof=ddof)
    keepdims = False if keepdims is NOVALUE else bool(keepdims)
    if not isinstance(a, Active):
        a = const(tape_of(a, mean), np.asarray(a, dtype=np.float64))
    av = np.asarray(a._v)
    axes = normalize_axes(axis, av.ndim)
    count = math.prod(av.shape[ax] for ax in axes)
    m = _mean(a, axis, keepdims=True) if mean is NOVALUE else mean
    d = a - m
    s = sum_(d ** 2, axis, keepdims=keepdims)
    if count - ddof <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
    return s / float(max(count - ddof, 0))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NOVALUE, *, where=NOVALUE,
        mean=NOVALUE, correction=NOVALUE):
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
    return _where(zero, 0.0, np.sqrt(_where(zero, 1.0, v)))


def average(a, axis=None, weights=None, returned=False, *, keepdims=NOVALUE):
    """``np.average`` (axis, weights of a's shape or along axis, returned, keepdims)."""
    refuse_active("average", axis=axis)
    t = tape_of(a, weights)
    if not isinstance(a, Active):
        a = const(t, np.asarray(a, dtype=np.float64))
    av = np.asarray(a._v)
    if axis is not None:
        axis = normalize_axis_tuple(axis, av.ndim, argname="axis")
    keep = False if keepdims is NOVALUE else bool(keepdims)
    if weights is None:
        avg = mean(a, axis, keepdims=keep)
        scl = np.float64(av.size / max(np.size(avg._v), 1))
    else:
        w = weights if isinstance(weights, Active) else const_array(weights)
        wv = primal_array(w)
        if av.shape != wv.shape:
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            if wv.shape != tuple(av.shape[ax] for ax in axis):
                raise ValueError("Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            w = transpose_any(w, np.argsort(axis))
            w = reshape_any(w, tuple(s if ax in axis else 1 for ax, s in enumerate(av.shape)))
        scl = sum_any(w, axis=axis, keepdims=keep)
        if isinstance(scl, Active):
            zero = scl == 0.0
            guard(zero)  # the error below is control flow on the weights
            is_zero = bool(np.any(zero._v))
        else:
            is_zero = bool(np.any(scl == 0.0))
        if is_zero:
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = sum_(a * w, axis, keepdims=keep) / scl
    if returned:
        if np.shape(primal_array(scl)) != np.shape(avg._v):
            scl = (broadcast_to(scl, np.shape(avg._v)) if isinstance(scl, Active)
                   else np.broadcast_to(scl, np.shape(avg._v)).copy())
        return avg, scl
    return avg


dispatch.FUNCTIONS.update({
    np.sum: sum_, np.mean: mean, np.prod: prod, np.max: max_, np.amax: max_, np.min: min_,
    np.amin: min_, np.argmax: argmax, np.argmin: argmin, np.cumsum: cumsum,
    np.cumprod: cumprod, np.sort: sort, np.clip: clip, np.round: round_, np.around: round_,
    np.sinc: sinc, np.var: var, np.std: std, np.average: average,
})

"""``scipy.spatial.distance``'s ``pdist``, ``cdist`` and ``squareform`` of active values.

SciPy computes distances in C after ``np.asarray``, which would drop the derivative, so
jittape wraps the three functions in ``scipy.spatial.distance`` (:mod:`.composed` installs
them): given an active argument (``X``, ``XA``, ``XB`` or a metric's ``w``, ``V``, ``VI``) the
wrapper first calls SciPy's own function on the values (SciPy's errors and result shape),
then computes the distances of every pair at once with NumPy functions jittape records:
``pdist`` gathers the pairs ``i < j`` in SciPy's order (``np.triu_indices``), ``cdist``
broadcasts ``XA[:, None]`` against ``XB[None]``. Values equal SciPy's to rounding; the tape
holds ``O(pairs * features)`` values.

Metrics with derivatives (SciPy's names and aliases, and SciPy's own metric functions passed
as callables): ``euclidean``, ``sqeuclidean``, ``cityblock``, ``chebyshev``, ``minkowski``
(``p``), ``seuclidean`` (``V``; by default the sample variance of the rows, ``ddof=1``, a
function of ``X`` that is differentiated too), ``cosine``, ``correlation``, ``mahalanobis``
(``VI``; by default ``inv(cov(X.T)).T``, differentiated too), ``canberra``, ``braycurtis``,
each with SciPy's weights ``w`` where SciPy takes them; a callable ``metric(u, v, **kwargs)``
is called for each pair on active rows, as SciPy does. Another metric raises
:class:`jittape.NotDifferentiableError` naming the function and the metric.

Conventions where the distance is not differentiable: at a zero distance (a pair of equal
rows, the diagonal of ``cdist(X, X)``) ``euclidean``, ``seuclidean``, ``minkowski`` and
``mahalanobis`` take the subgradient 0 (never nan: ``sqrt`` and ``s ** (1/p)`` are evaluated
at 1 there and not selected); ``|u_k - v_k|`` at 0 has derivative 0, and so has
``|d| ** p`` for ``1 < p < 2`` to second order too (its true second derivative there is
infinite); ``chebyshev`` at ties takes one of the largest components (as ``np.max``);
``cosine``/``correlation`` are clipped to ``[0, 2]`` as SciPy's (derivative 0 where clipped)
and are nan for a zero (or constant) row, as SciPy's; ``canberra``'s ``0 / 0`` terms are 0,
as SciPy's; ``braycurtis`` is ``0 / 0 = nan`` for two zero rows, as SciPy's.
"""

import numpy as np

from .._base.errors import NotDifferentiableError
from ..numpy.active import Active, guard


def _value(x):
    return x._v if isinstance(x, Active) else np.asarray(x)


def _scipy(name):
    """SciPy's own ``scipy.spatial.distance.<name>`` (not jittape's wrapper)."""
    import scipy.spatial.distance
    f = getattr(scipy.spatial.distance, name)
    return getattr(f, "__wrapped_by_jittape__", f)


def _sum(x):
    return np.sum(x, axis=-1)


def _weighted(x, w):
    return x if w is None else x * w


def _safe_sqrt(s):
    """``sqrt(s)`` whose derivative at ``s = 0`` is 0 (nan stays nan, a negative ``s``
    gives nan as SciPy's)."""
    zero = s == 0.0
    return np.where(zero, 0.0, np.sqrt(np.where(zero, 1.0, s)))


def _safe_power(s, c):
    """``s ** c`` (``s >= 0``) with value and derivatives 0 at ``s = 0``."""
    zero = s == 0.0
    return np.where(zero, 0.0, np.where(zero, 1.0, s) ** c)


def euclidean(u, v, w=None):
    return _safe_sqrt(_sum(_weighted((u - v) ** 2, w)))


def sqeuclidean(u, v, w=None):
    return _sum(_weighted((u - v) ** 2, w))


def cityblock(u, v, w=None):
    return _sum(_weighted(np.abs(u - v), w))


def chebyshev(u, v, w=None):
    d = np.abs(u - v)
    if w is not None:  # SciPy's weights only select the components w > 0
        d = d[..., np.flatnonzero(_value(w) > 0)]
    return np.max(d, axis=-1)


def minkowski(u, v, p=2, w=None):
    if isinstance(p, Active):
        raise NotDifferentiableError("scipy.spatial.distance: minkowski's p must be a "
                                     "number, not an active value")
    p = float(p)
    if p == 1.0:
        return cityblock(u, v, w)
    if p == 2.0:
        return euclidean(u, v, w)
    if p == np.inf:
        return chebyshev(u, v, w)
    d = np.abs(u - v)
    return _safe_power(_sum(_weighted(d ** p if p > 2.0 else _safe_power(d, p), w)), 1.0 / p)


def seuclidean(u, v, V):
    return _safe_sqrt(_sum((u - v) ** 2 / V))


def mahalanobis(u, v, VI):
    d = u - v
    return _safe_sqrt(_sum(d * (d @ np.transpose(VI))))


def _cosine_of(u, v, w):
    if w is None:  # SciPy's C code: 1 - clip(u.v / (|u| |v|), -1, 1)
        cos = _sum(u * v) / (np.sqrt(_sum(u * u)) * np.sqrt(_sum(v * v)))
        return 1.0 - np.clip(cos, -1.0, 1.0)
    # SciPy's scipy.spatial.distance.correlation (weights normalised), clipped to [0, 2]
    return np.clip(1.0 - _sum(u * v * w) / np.sqrt(_sum(u * u * w) * _sum(v * v * w)),
                   0.0, 2.0)


def cosine(u, v, w=None):
    return _cosine_of(u, v, None if w is None else w / np.sum(w))


def correlation(u, v, w=None):
    if w is None:
        return _cosine_of(u - np.mean(u, axis=-1, keepdims=True),
                          v - np.mean(v, axis=-1, keepdims=True), None)
    w = w / np.sum(w)
    return _cosine_of(u - _sum(u * w)[..., None], v - _sum(v * w)[..., None], w)


def canberra(u, v, w=None):
    den = np.abs(u) + np.abs(v)
    zero = den == 0.0
    return _sum(_weighted(np.where(zero, 0.0, np.abs(u - v) / np.where(zero, 1.0, den)), w))


def braycurtis(u, v, w=None):
    return _sum(_weighted(np.abs(u - v), w)) / _sum(_weighted(np.abs(u + v), w))


#: The metrics jittape differentiates, by SciPy's canonical name: ``f(u, v, **kwargs)``
#: over the last axis of broadcast ``u``, ``v``.
METRICS = {f.__name__: f for f in (euclidean, sqeuclidean, cityblock, chebyshev, minkowski,
                                   seuclidean, cosine, correlation, mahalanobis, canberra,
                                   braycurtis)}


def _metric(where, metric):
    """The canonical name of a supported ``metric`` (a name, an alias, ``'test_<name>'``
    or SciPy's own function of it), None for another callable; else
    :class:`NotDifferentiableError`."""
    from scipy.spatial.distance import _METRIC_ALIAS
    if callable(metric):
        info = _METRIC_ALIAS.get(getattr(metric, "__name__", ""))
        if info is None or getattr(info.dist_func, "__wrapped_by_jittape__",
                                   info.dist_func) is not metric:
            return None
        name = info.canonical_name
    else:
        mstr = metric.lower()
        info = _METRIC_ALIAS.get(mstr[5:] if mstr.startswith("test_") else mstr)
        name = info.canonical_name if info is not None else mstr
    if name not in METRICS:
        raise NotDifferentiableError(
            f"scipy.spatial.distance.{where}(metric={metric!r}) on active values is not "
            f"supported: jittape differentiates the metrics {', '.join(METRICS)} and "
            f"callables metric(u, v); pass jittape.primal(X) for no derivative")
    return name


def _plain_kwargs(kwargs):
    return {k: _value(v) for k, v in kwargs.items()}


def _defaults(name, rows, kwargs):
    """``kwargs`` with SciPy's defaults of ``seuclidean``'s ``V`` and ``mahalanobis``'s
    ``VI`` computed from the stacked ``rows`` (recorded: they depend on ``X``)."""
    kwargs = dict(kwargs)
    if name == "seuclidean" and kwargs.get("V") is None:
        kwargs["V"] = np.var(rows, axis=0, ddof=1)
    elif name == "mahalanobis" and kwargs.get("VI") is None:
        centered = rows - np.mean(rows, axis=0)
        cov = (np.transpose(centered) @ centered) / (np.shape(_value(rows))[0] - 1)
        kwargs["VI"] = np.transpose(np.linalg.inv(cov))
    for k in ("w", "V", "VI"):
        if k in kwargs and not isinstance(kwargs[k], Active):
            kwargs[k] = np.asarray(kwargs[k], dtype=np.float64)
    return kwargs


def _refuse_out(where, out):
    if out is not None:
        raise NotDifferentiableError(f"scipy.spatial.distance.{where}(..., out=...) on active "
                                     f"values: the output array is not recorded; use the "
                                     f"returned array")


def pdist(X, metric="euclidean", *, out=None, **kwargs):
    """``scipy.spatial.distance.pdist``: the distances of the pairs ``i < j``, all at once.

    The condensed distances ``d(X[i], X[j])`` for ``i < j`` in SciPy's order, float64, shape
    ``(m (m - 1) / 2,)`` for ``X`` ``(m, n)``.

    ``metric`` and its keywords as SciPy's (see the module's list and conventions); errors
    are SciPy's (ValueError for a non-2-D ``X``, an unknown metric, bad weights); an
    unsupported metric or ``out=`` raises :class:`jittape.NotDifferentiableError`."""
    _refuse_out("pdist", out)
    if callable(metric) and _metric("pdist", metric) is None:
        if np.ndim(_value(X)) != 2:
            raise ValueError(f"A 2-dimensional array must be passed. (Shape was "
                             f"{np.shape(_value(X))}).")
        i, j = np.triu_indices(np.shape(_value(X))[0], 1)
        if i.size == 0:
            return np.zeros(0)
        return np.stack([metric(X[a], X[b], **kwargs) for a, b in zip(i, j)]) * 1.0
    ref = _scipy("pdist")(_value(X), metric, **_plain_kwargs(kwargs))
    name = _metric("pdist", metric)
    if ref.size == 0:
        return ref
    i, j = np.triu_indices(np.shape(_value(X))[0], 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return METRICS[name](X[i], X[j], **_defaults(name, X, kwargs))


def cdist(XA, XB, metric="euclidean", *, out=None, **kwargs):
    """``scipy.spatial.distance.cdist``: the distances of ``XA[i]`` and ``XB[j]``, broadcast.

    ``d(XA[i], XB[j])``, float64, shape ``(mA, mB)`` for ``XA`` ``(mA, n)`` and ``XB``
    ``(mB, n)``; metrics, keywords, defaults (of the rows of both, stacked) and errors as
    :func:`pdist`'s. ``cdist(X, X)`` has zero distances on its diagonal: their derivative is
    0 (see the module's conventions)."""
    _refuse_out("cdist", out)
    if callable(metric) and _metric("cdist", metric) is None:
        a, b = np.shape(_value(XA)), np.shape(_value(XB))
        if len(a) != 2 or len(b) != 2 or a[1] != b[1]:
            raise ValueError(f"XA {a} and XB {b} must be 2-dimensional arrays with the same "
                             f"number of columns")
        pairs = [metric(XA[i], XB[j], **kwargs) for i in range(a[0]) for j in range(b[0])]
        if not pairs:
            return np.zeros((a[0], b[0]))
        return np.reshape(np.stack(pairs) * 1.0, (a[0], b[0]))
    ref = _scipy("cdist")(_value(XA), _value(XB), metric, **_plain_kwargs(kwargs))
    name = _metric("cdist", metric)
    if ref.size == 0:
        return ref
    kw = _defaults(name, np.concatenate([XA, XB], axis=0)
                   if name in ("seuclidean", "mahalanobis") else None, kwargs)
    with np.errstate(divide="ignore", invalid="ignore"):
        return METRICS[name](XA[:, None, :], XB[None, :, :], **kw)


def squareform(X, force="no", checks=True):
    """``scipy.spatial.distance.squareform``, both directions, float64.

    A condensed vector of ``d (d - 1) / 2`` distances gives the symmetric ``(d, d)`` matrix
    with zeros on the diagonal (constants) and each distance in its two places (an empty
    vector gives ``[[0.]]``); a square matrix gives its upper triangle, row by row (the
    lower triangle and the diagonal are not read: derivative 0), an empty one for ``d <=
    1``. With ``checks`` SciPy's checks (exact symmetry, zero diagonal) are made on the
    values, ValueError as SciPy's, and recorded as guards: a replay at values that fail
    them fails its guard (a ``taped`` function records again and raises SciPy's error).
    ``force`` and the other errors as SciPy's."""
    ref = _scipy("squareform")(_value(X), force=force, checks=checks)
    v = _value(X)
    if ref.size == 0 or ref.ndim == 2 and v.size == 0:
        return ref
    if v.ndim == 1:
        d = ref.shape[0]
        i, j = np.triu_indices(d, 1)
        idx = np.full((d, d), v.size)  # the appended zero
        idx[i, j] = idx[j, i] = np.arange(v.size)
        return np.concatenate([X, np.zeros(1)])[idx]
    i, j = np.triu_indices(v.shape[0], 1)
    if checks:
        k = np.arange(v.shape[0])
        guard(X[i, j] == X[j, i])
        guard(X[k, k] == 0.0)
    return X[i, j]


#: The wrappers :mod:`.composed` installs in ``scipy.spatial.distance``.
SCIPY_DISTANCE = {"pdist": pdist, "cdist": cdist, "squareform": squareform}

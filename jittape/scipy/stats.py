"""``scipy.stats`` densities of active values: ``logpdf``/``pdf`` (``logpmf``/``pmf``) and,
where the derivative is available, ``logcdf``/``cdf``/``logsf``/``sf``.

SciPy's distribution methods start with ``np.asarray`` and write into float arrays, which
would drop the derivative. When SciPy's ``stats`` module is loaded, :func:`install` wraps the
methods of the distribution classes below (on the class, so that frozen distributions,
``scipy.stats.norm(loc, scale).logpdf(x)``, are covered too): given an active argument they
evaluate the density's closed form with NumPy (so jittape records it); otherwise SciPy's own
method runs unchanged. Outside the support the log-density is ``-inf``, as SciPy's.
Formulas: the densities in SciPy's ``scipy.stats`` documentation (continuous and discrete
distributions pages); the log-normal-CDF is ``scipy.special.log_ndtr``. The distribution
functions (``cdf``/``sf``, their logs the logs of them) of ``gamma``, ``chi2``, ``beta``,
``t`` and ``poisson`` are the regularized incomplete gamma and beta functions (DLMF 8.2.4,
8.17.2; A & S 26.7.1 for t; SciPy's ``pdtr`` for poisson), differentiated with respect to
``x``, ``loc``, ``scale`` (poisson: ``mu``); an active shape parameter raises
:class:`~jittape._base.errors.NotDifferentiableError`. ``multivariate_normal`` with
``allow_singular=True`` and its ``entropy`` follow SciPy's pseudo-determinant (``_PSD``:
eigenvalues below ``1e6 eps max|w|`` dropped, ``-inf`` off the support).
"""

import math

import numpy as np

from .._base.imports import loaded

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_installed = []


def _gammaln(x):
    import scipy.special
    return scipy.special.gammaln(x)


def _standard(x, loc, scale):
    return (x - loc) / scale, np.log(scale)


def _norm_logpdf(x, loc=0.0, scale=1.0):
    z, ls = _standard(x, loc, scale)
    return -0.5 * z * z - _LOG_SQRT_2PI - ls


def _norm_logcdf(x, loc=0.0, scale=1.0):
    import scipy.special
    return scipy.special.log_ndtr((x - loc) / scale)


def _norm_logsf(x, loc=0.0, scale=1.0):
    import scipy.special
    return scipy.special.log_ndtr((loc - x) / scale)


def _norm_cdf(x, loc=0.0, scale=1.0):
    """Phi(z) itself, not exp(log Phi(z)): at z = -inf that is 0 * inf in the derivative,
    where the limit is 0 (ndtr's partial, the density, is 0 there)."""
    import scipy.special
    return scipy.special.ndtr((x - loc) / scale)


def _norm_sf(x, loc=0.0, scale=1.0):
    import scipy.special
    return scipy.special.ndtr((loc - x) / scale)


def _t_logpdf(x, df, loc=0.0, scale=1.0):
    z, ls = _standard(x, loc, scale)
    return (_gammaln((df + 1.0) / 2.0) - _gammaln(df / 2.0) - 0.5 * np.log(df * math.pi)
            - (df + 1.0) / 2.0 * np.log1p(z * z / df) - ls)


def _positive_support(z, logp):
    """``logp`` where ``z > 0``, ``-inf`` elsewhere (the argument kept away from logs)."""
    return np.where(z > 0.0, logp, -np.inf)


def _gamma_logpdf(x, a, loc=0.0, scale=1.0):
    z, ls = _standard(x, loc, scale)
    zs = np.where(z > 0.0, z, 1.0)
    return _positive_support(z, (a - 1.0) * np.log(zs) - zs - _gammaln(a) - ls)


def _chi2_logpdf(x, df, loc=0.0, scale=1.0):
    return _gamma_logpdf(x, df / 2.0, loc, 2.0 * scale)


def _expon_logpdf(x, loc=0.0, scale=1.0):
    z, ls = _standard(x, loc, scale)
    return np.where(z >= 0.0, -z - ls, -np.inf)


def _beta_logpdf(x, a, b, loc=0.0, scale=1.0):
    z, ls = _standard(x, loc, scale)
    inside = (z > 0.0) & (z < 1.0)
    zs = np.where(inside, z, 0.5)
    betaln = _gammaln(a) + _gammaln(b) - _gammaln(a + b)
    return np.where(inside, (a - 1.0) * np.log(zs) + (b - 1.0) * np.log1p(-zs) - betaln - ls,
                    -np.inf)


def _poisson_logpmf(k, mu, loc=0):
    import scipy.special
    k = k - loc
    return scipy.special.xlogy(k, mu) - mu - _gammaln(k + 1.0)


def _mvn_logpdf(x, mean=None, cov=1, allow_singular=False):
    x = x if np.ndim(x) else np.reshape(x, (1,))
    d = np.shape(x)[-1]
    mean, cov = _mvn_params(mean, cov, d)
    diff = x - mean
    dev = np.reshape(diff, (-1, d))
    if allow_singular:
        out = _mvn_logpdf_psd(dev, cov)
    else:
        chol = np.linalg.cholesky(cov)
        sol = np.linalg.solve(chol, dev.T)  # L^-1 (x - mean)
        maha = np.sum(sol * sol, axis=0)
        logdet = 2.0 * np.sum(np.log(np.diagonal(chol)))
        out = -0.5 * (d * math.log(2.0 * math.pi) + logdet + maha)
    return np.reshape(out, np.shape(diff)[:-1])


def _mvn_params(mean, cov, d):
    mean = np.zeros(d) if mean is None else mean
    cov = cov * np.eye(d) if np.ndim(cov) == 0 else (np.diag(cov) if np.ndim(cov) == 1
                                                     else cov)
    return mean, cov


def _psd(cov):
    """SciPy's ``_PSD`` of ``cov`` (``scipy.stats._multivariate``): eigenvalues above
    ``eps = 1e6 * machine eps * max |eigenvalue|`` count; returns the eigenvectors, the
    mask of those that count, its rank, the pseudo-inverse eigenvalues, the log
    pseudo-determinant and ``eps``. Masks are comparisons of active values where ``cov`` is
    active (``np.where`` data, so a replay re-evaluates them)."""
    s, u = np.linalg.eigh(cov)
    eps = 1e6 * np.finfo(np.float64).eps * np.max(np.abs(s))
    if np.min(s) < -eps:
        raise ValueError("The input matrix must be symmetric positive semidefinite.")
    keep = s > eps
    s_safe = np.where(keep, s, 1.0)
    return (u, keep, np.sum(keep), np.where(keep, 1.0 / s_safe, 0.0),
            np.sum(np.where(keep, np.log(s_safe), 0.0)), eps)


def _mvn_logpdf_psd(dev, cov):
    """``allow_singular=True``: SciPy's pseudo-determinant density, ``-inf`` off the
    support (a deviation outside the range of ``cov`` by more than ``1e3 eps``)."""
    u, keep, rank, s_pinv, log_pdet, eps = _psd(cov)
    proj2 = np.square(dev @ u)
    maha = np.sum(proj2 * s_pinv, axis=-1)
    off = np.sum(np.where(keep, 0.0, proj2), axis=-1)  # squared residual off the range
    out = -0.5 * (rank * math.log(2.0 * math.pi) + log_pdet + maha)
    return np.where(off < np.square(1e3 * eps), out, -np.inf)


def _mvn_entropy(mean=None, cov=1):
    d = np.shape(mean)[-1] if np.ndim(mean) else (np.shape(cov)[-1] if np.ndim(cov) else 1)
    _, _, rank, _, log_pdet, _ = _psd(_mvn_params(mean, cov, d)[1])
    return 0.5 * (rank * (math.log(2.0 * math.pi) + 1.0) + log_pdet)


def _dirichlet_logpdf(x, alpha):
    return (np.sum((alpha - 1.0) * np.log(x), axis=0) + _gammaln(np.sum(alpha))
            - np.sum(_gammaln(alpha)))


def _special():
    import scipy.special
    return scipy.special


def _constant(where, **params):
    """The parameters as float arrays; refuse an active one (the closed form has no
    derivative for it)."""
    from ..numpy.active import Active
    from ..numpy.dispatch import PROXIES
    from .._base.errors import NotDifferentiableError
    for name, v in params.items():
        if type(v) in PROXIES:  # a preallocated array filled with actives
            params[name] = v = PROXIES[type(v)](v)
        if isinstance(v, Active):
            raise NotDifferentiableError(
                f"scipy.stats.{where}: jittape has no derivative with respect to {name} (the "
                f"special function's rule covers x only). Pass {name} as a constant, or "
                f"jittape.primal({name}) for its current value.")
    return [np.asarray(v, dtype=np.float64) for v in params.values()]


def _gamma_cdf(x, a, loc=0.0, scale=1.0, upper=False):
    """P(a, z) (Q(a, z) for the sf), 0 (1) for z <= 0: DLMF 8.2.4."""
    a, = _constant("gamma.cdf/sf", a=a)
    z = (x - loc) / scale
    zs = np.where(z > 0.0, z, 1.0)  # keeps the unused branch's adjoint finite
    sp = _special()
    return np.where(z > 0.0, (sp.gammaincc if upper else sp.gammainc)(a, zs),
                    1.0 if upper else 0.0)


def _chi2_cdf(x, df, loc=0.0, scale=1.0, upper=False):
    df, = _constant("chi2.cdf/sf", df=df)
    return _gamma_cdf(x, df / 2.0, loc, 2.0 * scale, upper)


def _beta_cdf(x, a, b, loc=0.0, scale=1.0, upper=False):
    """I_z(a, b) (1 - I_z(a, b) for the sf), clipped to [0, 1] outside the support."""
    a, b = _constant("beta.cdf/sf", a=a, b=b)
    z = (x - loc) / scale
    inside = (z > 0.0) & (z < 1.0)
    zs = np.where(inside, z, 0.5)
    sp = _special()
    below, above = (1.0, 0.0) if upper else (0.0, 1.0)
    return np.where(inside, (sp.betaincc if upper else sp.betainc)(a, b, zs),
                    np.where(z <= 0.0, below, above))


def _t_cdf(x, df, loc=0.0, scale=1.0, upper=False):
    """Student's t: tail = I_{df/(df+z^2)}(df/2, 1/2) / 2 (A & S 26.7.1), cdf = 1 - tail
    for z > 0 and tail otherwise (sf: z -> -z). At z = 0 the form's derivative is 0 * inf;
    there the value 1/2 + z pdf(0) gives the exact derivative."""
    df, = _constant("t.cdf/sf", df=df)
    z = (x - loc) / scale
    z = -z if upper else z
    zs = np.where(z == 0.0, 1.0, z)
    tail = 0.5 * _special().betainc(df / 2.0, 0.5, df / (df + zs * zs))
    pdf0 = np.exp(_t_logpdf(0.0, df))
    return np.where(z == 0.0, 0.5 + z * pdf0, np.where(z > 0.0, 1.0 - tail, tail))


def _poisson_cdf(k, mu, loc=0, upper=False):
    """Q(floor(k) + 1, mu) (P(...) for the sf), SciPy's pdtr; 0 (1) for k < 0."""
    k, loc = _constant("poisson.cdf/sf", k=k, loc=loc)
    kk = np.floor(k - loc)
    a = np.where(kk >= 0.0, kk, 0.0) + 1.0
    sp = _special()
    return np.where(kk >= 0.0, (sp.gammainc if upper else sp.gammaincc)(a, mu),
                    1.0 if upper else 0.0)


def _sf(cdf):
    return lambda *a, **kw: cdf(*a, **kw, upper=True)


def _log(f):
    return lambda *a, **kw: np.log(f(*a, **kw))


def _exp(logf):
    return lambda *a, **kw: np.exp(logf(*a, **kw))


# distribution name -> {method: closed form}; the pdf/pmf/cdf/sf are exp of the log forms
_FORMS = {
    "norm": {"logpdf": _norm_logpdf, "logcdf": _norm_logcdf, "logsf": _norm_logsf,
             "cdf": _norm_cdf, "sf": _norm_sf},
    "t": {"logpdf": _t_logpdf, "cdf": _t_cdf, "sf": _sf(_t_cdf)},
    "gamma": {"logpdf": _gamma_logpdf, "cdf": _gamma_cdf, "sf": _sf(_gamma_cdf)},
    "chi2": {"logpdf": _chi2_logpdf, "cdf": _chi2_cdf, "sf": _sf(_chi2_cdf)},
    "expon": {"logpdf": _expon_logpdf},
    "beta": {"logpdf": _beta_logpdf, "cdf": _beta_cdf, "sf": _sf(_beta_cdf)},
    "poisson": {"logpmf": _poisson_logpmf, "cdf": _poisson_cdf, "sf": _sf(_poisson_cdf)},
    "multivariate_normal": {"logpdf": _mvn_logpdf, "entropy": _mvn_entropy},
    "dirichlet": {"logpdf": _dirichlet_logpdf},
}
# the plain method is exp of the log one, or the log one log of the plain one
_EXP_OF = {"pdf": "logpdf", "pmf": "logpmf", "cdf": "logcdf", "sf": "logsf"}


def _wrap(cls, method, form):
    from ..numpy.active import Active
    from ..numpy.dispatch import resolved
    original = getattr(cls, method)

    def wrapper(self, *args, **kwargs):
        args, kwargs = resolved(args, kwargs)  # a preallocated array filled with actives
        if any(isinstance(a, Active) for a in args) or any(
                isinstance(v, Active) for v in kwargs.values()):
            return form(*args, **kwargs)
        return original(self, *args, **kwargs)
    wrapper.__name__, wrapper.__doc__ = method, original.__doc__
    wrapper.__wrapped_by_jittape__ = original
    setattr(cls, method, wrapper)


def install():
    """Wrap the methods of :data:`_FORMS` if ``scipy.stats`` is loaded (idempotent)."""
    if _installed:  # checked first: this runs at every recording
        return
    stats = loaded("scipy.stats")
    if stats is None:
        return
    from . import stats_helpers
    stats_helpers.install()
    for name, forms in _FORMS.items():
        cls = type(getattr(stats, name))
        methods = dict(forms)
        for plain, log in _EXP_OF.items():
            if log in forms and plain not in forms:
                methods[plain] = _exp(forms[log])
            elif plain in forms and log not in forms:
                methods[log] = _log(forms[plain])
        for method, form in methods.items():
            _wrap(cls, method, form)
    _installed.append(True)

"""``scipy.stats`` densities of active values: ``logpdf``/``pdf`` (``logpmf``/``pmf``) and,
where the derivative is available, ``logcdf``/``cdf``/``logsf``/``sf``.

SciPy's distribution methods start with ``np.asarray`` and write into float arrays, which
would drop the derivative. When SciPy's ``stats`` module is loaded, :func:`install` wraps the
methods of the distribution classes below (on the class, so that frozen distributions,
``scipy.stats.norm(loc, scale).logpdf(x)``, are covered too): given an active argument they
evaluate the density's closed form with NumPy (so jittape records it); otherwise SciPy's own
method runs unchanged. Outside the support the log-density is ``-inf``, as SciPy's.
Formulas: the densities in SciPy's ``scipy.stats`` documentation (continuous and discrete
distributions pages); the log-normal-CDF is ``scipy.special.log_ndtr``.
"""

import math
import sys

import numpy as np

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
    mean = np.zeros(d) if mean is None else mean
    cov = cov * np.eye(d) if np.ndim(cov) == 0 else (np.diag(cov) if np.ndim(cov) == 1
                                                     else cov)
    chol = np.linalg.cholesky(cov)
    diff = x - mean
    sol = np.linalg.solve(chol, np.reshape(diff, (-1, d)).T)  # L^-1 (x - mean)
    maha = np.sum(sol * sol, axis=0)
    logdet = 2.0 * np.sum(np.log(np.diagonal(chol)))
    out = -0.5 * (d * math.log(2.0 * math.pi) + logdet + maha)
    return np.reshape(out, np.shape(diff)[:-1])


def _dirichlet_logpdf(x, alpha):
    return (np.sum((alpha - 1.0) * np.log(x), axis=0) + _gammaln(np.sum(alpha))
            - np.sum(_gammaln(alpha)))


def _exp(logf):
    return lambda *a, **kw: np.exp(logf(*a, **kw))


# distribution name -> {method: closed form}; the pdf/pmf/cdf/sf are exp of the log forms
_FORMS = {
    "norm": {"logpdf": _norm_logpdf, "logcdf": _norm_logcdf, "logsf": _norm_logsf},
    "t": {"logpdf": _t_logpdf},
    "gamma": {"logpdf": _gamma_logpdf},
    "chi2": {"logpdf": _chi2_logpdf},
    "expon": {"logpdf": _expon_logpdf},
    "beta": {"logpdf": _beta_logpdf},
    "poisson": {"logpmf": _poisson_logpmf},
    "multivariate_normal": {"logpdf": _mvn_logpdf},
    "dirichlet": {"logpdf": _dirichlet_logpdf},
}
_EXP_OF = {"pdf": "logpdf", "pmf": "logpmf", "cdf": "logcdf", "sf": "logsf"}


def _wrap(cls, method, form):
    from .active import Active
    original = getattr(cls, method)

    def wrapper(self, *args, **kwargs):
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
    stats = sys.modules.get("scipy.stats")
    if stats is None:
        return
    for name, forms in _FORMS.items():
        cls = type(getattr(stats, name))
        methods = dict(forms)
        for plain, log in _EXP_OF.items():
            if log in forms:
                methods[plain] = _exp(forms[log])
        for method, form in methods.items():
            _wrap(cls, method, form)
    _installed.append(True)

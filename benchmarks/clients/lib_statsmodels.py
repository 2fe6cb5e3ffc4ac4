"""statsmodels: the log-likelihoods of its models, differentiated as the user calls them.

Per model: ``jittape.grad(model.loglike)(params)`` against ``model.score(params)`` and
``jittape.hessian(model.loglike)(params)`` against ``model.hessian(params)`` where statsmodels
derives them analytically; where it has none (its own are numerical differences:
``GenericLikelihoodModel`` subclasses such as OrderedModel, SARIMAX, WLS/GLS), central
differences of ``loglike`` (of the analytic score, for a Hessian, when there is one). Where
statsmodels' analytic derivative is not the derivative of its own ``loglike`` (AutoReg's
score omits 1/sigma^2), the check falls back to central differences and says so. Simulated
data, fixed seeds, n = 400; parameters at the simulation's true values (not at the optimum,
where the score is near zero), the replay point 2 % away.
"""

import numpy as np

from benchmarks.clients.harness import Case, Problem

LIBRARY = "statsmodels"
N, SEED = 400, 7
BETA = np.array([0.3, -0.5, 0.8])
QUICK = {"Logit", "Poisson", "GLM-Gaussian", "OLS", "PHReg"}


def _rng(offset=0):
    return np.random.default_rng(SEED + offset)


def _design(n=N, k=3, const=True):
    X = _rng(1).normal(size=(n, k))
    if const:
        X[:, 0] = 1.0
    return X


def _p2(p):
    return p * 1.02 + 0.01


# --- models: name -> () -> (model, params, loglike, score, hessian, notes) -------------------
# score / hessian are the library's analytic derivatives or None (no analytic one).
def _binary(cls):
    def build():
        import statsmodels.api as sm
        from scipy.stats import norm
        X = _design()
        eta = X @ BETA
        p = 1 / (1 + np.exp(-eta)) if cls == "Logit" else norm.cdf(eta)
        y = (_rng(2).uniform(size=N) < p).astype(float)
        m = getattr(sm, cls)(y, X)
        return m, BETA.copy(), m.loglike, m.score, m.hessian
    return build


def _count(cls, extra=None, **kw):
    def build():
        import statsmodels.api as sm
        X = _design()
        mu = np.exp(X @ BETA)
        if cls == "NegativeBinomial":
            alpha = 0.5
            y = _rng(2).negative_binomial(1 / alpha, 1 / (1 + alpha * mu))
        else:
            y = _rng(2).poisson(mu)
        m = getattr(sm, cls)(y.astype(float), X, **kw)
        params = BETA.copy() if extra is None else np.append(BETA, extra)
        return m, params, m.loglike, m.score, m.hessian
    return build


def _zip():
    import statsmodels.api as sm
    X = _design()
    y = _rng(2).poisson(np.exp(X @ BETA)) * (_rng(3).uniform(size=N) > 0.25)
    m = sm.ZeroInflatedPoisson(y.astype(float), X, exog_infl=np.ones((N, 1)))
    params = np.append(-1.0, BETA)
    return m, params, m.loglike, m.score, m.hessian


def _mnlogit():
    import statsmodels.api as sm
    X = _design()
    B = np.column_stack([BETA, [-0.2, 0.4, 0.1]])
    eta = np.column_stack([np.zeros(N), X @ B])
    p = np.exp(eta) / np.exp(eta).sum(1, keepdims=True)
    u = _rng(2).uniform(size=N)
    y = (u[:, None] > np.cumsum(p, 1)).sum(1).astype(float)
    m = sm.MNLogit(y, X)
    return m, B.ravel(order="F"), m.loglike, m.score, m.hessian


def _ordered(distr):
    def build():
        from statsmodels.miscmodels.ordinal_model import OrderedModel
        X = _design(const=False)
        latent = X @ BETA + _rng(2).logistic(size=N)
        y = np.digitize(latent, [-0.5, 0.7])
        m = OrderedModel(y, X, distr=distr)
        params = np.append(BETA, [-0.5, np.log(1.2)])   # thresholds: first, log increments
        return m, params, m.loglike, None, None        # its score/hessian are numerical
    return build


def _glm(family):
    def build():
        import statsmodels.api as sm
        fam = sm.families
        X = _design()
        eta = X @ (BETA * 0.5)
        rng = _rng(2)
        if family == "Binomial":
            f, y = fam.Binomial(), (rng.uniform(size=N) < 1 / (1 + np.exp(-eta))) * 1.0
        elif family == "Poisson":
            f, y = fam.Poisson(), rng.poisson(np.exp(eta)) * 1.0
        elif family == "Gamma":
            f = fam.Gamma(fam.links.Log())
            y = rng.gamma(2.0, np.exp(eta) / 2.0)
        elif family == "Gaussian":
            f, y = fam.Gaussian(), eta + rng.normal(size=N)
        elif family == "InverseGaussian":
            f, y = fam.InverseGaussian(fam.links.Log()), rng.wald(np.exp(eta), 4.0)
        else:  # Tweedie, var_power 1.5: compound Poisson-gamma
            f = fam.Tweedie(fam.links.Log(), var_power=1.5)
            mu = np.exp(eta)
            counts = rng.poisson(mu ** 0.5 / 0.5)
            y = np.array([rng.gamma(1.0, 0.5 * m ** 0.5, size=c).sum()
                          for m, c in zip(mu, counts)])
        m = sm.GLM(y, X, family=f)
        scale = float(m.fit().scale)
        params = BETA * 0.5
        return (m, params, lambda b: m.loglike(b, scale=scale),
                lambda b: m.score(b, scale=scale), lambda b: m.hessian(b, scale=scale))
    return build


def _linear(cls):
    def build():
        import statsmodels.api as sm
        X = _design()
        y = X @ BETA + _rng(2).normal(size=N) * np.linspace(0.5, 1.5, N)
        if cls == "OLS":
            m = sm.OLS(y, X)
            return m, BETA.copy(), m.loglike, m.score, m.hessian
        if cls == "WLS":
            m = sm.WLS(y, X, weights=1 / np.linspace(0.5, 1.5, N) ** 2)
        else:
            i = np.arange(N)
            m = sm.GLS(y, X, sigma=0.5 ** np.abs(i[:, None] - i[None, :]))  # AR(1) errors
        return m, BETA.copy(), m.loglike, None, None
    return build


def _phreg():
    import statsmodels.api as sm
    X = _design(const=False)
    t = _rng(2).exponential(np.exp(-(X @ BETA)))
    status = (_rng(3).uniform(size=N) < 0.8).astype(float)
    m = sm.PHReg(t, X, status=status)
    return m, BETA.copy(), m.loglike, m.score, m.hessian


def _mixedlm():
    import statsmodels.api as sm
    groups = np.repeat(np.arange(40), N // 40)
    X = _design()
    Z = np.column_stack([np.ones(N), X[:, 1]])
    b = _rng(2).normal(size=(40, 2)) * [0.8, 0.4]
    y = X @ BETA + (Z * b[groups]).sum(1) + _rng(3).normal(size=N)
    m = sm.MixedLM(y, X, groups, exog_re=Z)
    m.fit()   # loglike reads what fit sets up (the covariance penalty)
    # packed covariance parameters (Cholesky factor of cov_re / scale, use_sqrt=True)
    params = np.array([0.8, 0.1, 0.4])
    return m, params, m.loglike, m.score, None     # its hessian is in another parameterization


def _autoreg():
    from statsmodels.tsa.ar_model import AutoReg
    e = _rng(2).normal(size=N + 50)
    y = np.zeros(N + 50)
    for t in range(2, N + 50):
        y[t] = 0.5 * y[t - 1] - 0.3 * y[t - 2] + e[t]
    m = AutoReg(y[50:], lags=2)
    return m, np.array([0.1, 0.45, -0.25]), m.loglike, m.score, None


def _holt_winters(trend, seasonal):
    def build():
        import warnings
        from statsmodels.tsa.holtwinters import ExponentialSmoothing
        t = np.arange(120)
        y = 10 + 0.05 * t + 2 * np.sin(2 * np.pi * t / 12) + _rng(2).normal(size=120) * 0.5
        m = ExponentialSmoothing(y, trend=trend, seasonal=seasonal,
                                 seasonal_periods=12 if seasonal else None,
                                 initialization_method="estimated")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = dict(m.fit().params)
        keys = ["smoothing_level"] + (["smoothing_trend"] if trend else []) + \
            (["smoothing_seasonal"] if seasonal else [])
        params = np.array([0.3, 0.1, 0.2][:len(keys)])

        def sse(p):   # the fit's objective: in-sample one-step predictions' squared errors
            pars = dict(fitted, **{k: p[i] for i, k in enumerate(keys)})
            return np.sum((y - m.predict(pars, start=0, end=len(y) - 1)) ** 2)
        return m, params, sse, None, None
    return build


def _sarimax():
    from statsmodels.tsa.statespace.sarimax import SARIMAX
    e = _rng(2).normal(size=N + 1)
    y = np.zeros(N)
    for t in range(1, N):
        y[t] = 0.6 * y[t - 1] + e[t] + 0.3 * e[t - 1]
    m = SARIMAX(y, order=(1, 0, 1))
    return m, np.array([0.55, 0.25, 1.1]), m.loglike, None, None   # its score is numerical


MODELS = {
    "Logit": _binary("Logit"), "Probit": _binary("Probit"), "Poisson": _count("Poisson"),
    "NegativeBinomial": _count("NegativeBinomial", extra=0.5),
    "GeneralizedPoisson": _count("GeneralizedPoisson", extra=0.1),
    "ZeroInflatedPoisson": _zip, "MNLogit": _mnlogit,
    "OrderedModel-logit": _ordered("logit"), "OrderedModel-probit": _ordered("probit"),
    **{f"GLM-{fam}": _glm(fam) for fam in ("Binomial", "Poisson", "Gamma", "Gaussian",
                                           "InverseGaussian", "Tweedie")},
    "OLS": _linear("OLS"), "WLS": _linear("WLS"), "GLS": _linear("GLS"),
    "PHReg": _phreg, "MixedLM": _mixedlm, "AutoReg": _autoreg,
    "SimpleExpSmoothing": _holt_winters(None, None), "Holt": _holt_winters("add", None),
    "HoltWinters-add": _holt_winters("add", "add"),
    "HoltWinters-mul": _holt_winters("add", "mul"),
    "SARIMAX": _sarimax,
}
#: models whose analytic score is not the gradient of their loglike: no Hessian reference
#: from differences of it
INCONSISTENT_SCORE = {"AutoReg"}


def _problem(name, what):
    model, params, loglike, score, hessian = MODELS[name]()
    p2 = _p2(params)
    if what == "score":
        p = Problem(loglike, params, p2, analytic=score,
                    analytic_name="model.score" if score else "")
        if name == "Logit":
            p.extra = _logit_figures(p)
        return p
    hess_from = score if name not in INCONSISTENT_SCORE else None
    return Problem(loglike, params, p2, analytic=hessian, order=2, hess_from=hess_from,
                   analytic_name="model.hessian" if hessian else "")


def _logit_figures(problem):
    """Logit at n = 400: tape records, and eager and replayed gradient time over
    ``model.score``'s, measured side by side (the row's ``extra``)."""
    def extra():
        import jittape
        from benchmarks.clients.harness import side_by_side
        tape = jittape.record(problem.f, problem.x)
        g = jittape.grad(problem.f)
        for _ in range(20):
            tape.gradient(problem.x2)
        jittape.wait_compiled()
        t = side_by_side({"score": lambda: problem.analytic(problem.x),
                          "eager": lambda: g(problem.x),
                          "replay": lambda: tape.gradient(problem.x2)}, 0.01, 15)
        return dict(records=int(tape.n_records), n=N, score_s=t["score"],
                    eager_s=t["eager"], replay_s=t["replay"],
                    eager_over_score=t["eager"] / t["score"],
                    replay_over_score=t["replay"] / t["score"])
    return extra


def cases():
    out = []
    for name in MODELS:
        for what in ("score", "hessian"):
            out.append(Case(LIBRARY, f"statsmodels/{name}/{what}",
                            lambda n=name, w=what: _problem(n, w),
                            quick=name in QUICK, group=name, check=what))
    return out

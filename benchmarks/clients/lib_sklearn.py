"""scikit-learn: objectives its estimators optimise, differentiated as scikit-learn wrote them.

* ``GaussianProcessRegressor(kernel=k, optimizer=None).fit(X, y)``, then
  ``jittape.grad(gpr.log_marginal_likelihood)(gpr.kernel_.theta)`` against
  ``gpr.log_marginal_likelihood(theta, eval_gradient=True)[1]`` (``optimizer=None``: the
  kernel's own hyperparameters, away from the optimum where the gradient vanishes).
* MLPRegressor / MLPClassifier: the loss of ``_loss_grad_lbfgs`` (what the lbfgs solver
  minimises) as a function of the packed coefficients, against the gradient it returns; and
  the loss of the forward pass alone (``_forward_pass`` and scikit-learn's
  ``LOSS_FUNCTIONS`` plus the L2 term of ``_backprop``).
* ``_huber_loss_and_gradient`` (HuberRegressor), ``LinearModelLoss(...).loss`` with the
  losses of LogisticRegression (binomial, multinomial, both the Cython and the array API
  versions), PoissonRegressor, GammaRegressor, TweedieRegressor and squared error, against
  ``loss_gradient``; NMF's objective ``_beta_divergence`` (W and H) against central
  differences.
* ReLU MLP: ``jittape.taped(loss)`` called at 20 new points: its ``stats.recordings``
  (target 1) and the gradients against scikit-learn's.
"""

import numpy as np

from benchmarks.clients.harness import Case, Problem

LIBRARY = "sklearn"
SEED = 3
QUICK = {"gpr/RBF", "gpr/C*RBF+White", "huber", "mlp/regressor-tanh/lbfgs-loss",
         "nmf/frobenius-W", "taped-relu-mlp"}


def _rng(k=0):
    return np.random.default_rng(SEED + k)


# --- Gaussian processes ----------------------------------------------------------------------
def _kernels():
    from sklearn.gaussian_process import kernels as K
    C, W = K.ConstantKernel, K.WhiteKernel
    return {
        "RBF": lambda: K.RBF(0.7),
        "RBF-anisotropic": lambda: K.RBF([0.7, 1.6]),
        "Matern0.5": lambda: K.Matern(0.8, nu=0.5),
        "Matern1.5": lambda: K.Matern(0.8, nu=1.5),
        "Matern2.5": lambda: K.Matern(0.8, nu=2.5),
        "RationalQuadratic": lambda: K.RationalQuadratic(0.9, alpha=1.5),
        "ExpSineSquared": lambda: K.ExpSineSquared(1.2, periodicity=2.5),
        "DotProduct": lambda: K.DotProduct(0.5) + W(0.3),
        "C*RBF+White": lambda: C(1.5) * K.RBF(0.7) + W(0.2),
        "C*Matern1.5+White": lambda: C(1.5) * K.Matern(0.8, nu=1.5) + W(0.2),
        "RBF+RationalQuadratic": lambda: K.RBF(0.7) + K.RationalQuadratic(0.9, 1.5),
        "C*ExpSineSquared*RBF": lambda: C(1.2) * K.ExpSineSquared(1.2, 2.5) * K.RBF(2.0),
        "C*DotProduct**2+White": lambda: C(0.8) * K.Exponentiation(K.DotProduct(0.5), 2)
        + W(0.3),
    }


def _gpr(name):
    from sklearn.gaussian_process import GaussianProcessRegressor
    X = _rng().uniform(-2, 2, size=(30, 2))
    y = np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.1 * _rng(1).normal(size=30)
    if "ExpSineSquared" in name:   # positive definite on one-dimensional inputs only
        X = X[:, :1]
    gpr = GaussianProcessRegressor(kernel=_kernels()[name](), optimizer=None,
                                   alpha=1e-2).fit(X, y)
    theta = gpr.kernel_.theta.copy()
    return Problem(gpr.log_marginal_likelihood, theta, theta + 0.05,
                   analytic=lambda t: gpr.log_marginal_likelihood(t, eval_gradient=True)[1],
                   analytic_name="log_marginal_likelihood(eval_gradient=True)")


# --- multilayer perceptrons ------------------------------------------------------------------
def _mlp(kind, activation):
    """A fitted (a few lbfgs iterations) MLP and a ``(loss, loss_grad, forward_loss,
    w0)`` quadruple over its packed coefficients."""
    import warnings
    from sklearn.neural_network import MLPClassifier, MLPRegressor
    from sklearn.neural_network._multilayer_perceptron import _pack
    from sklearn.neural_network._base import LOSS_FUNCTIONS
    X = _rng().normal(size=(60, 4))
    if kind == "regressor":
        y = np.tanh(X @ [0.5, -1.0, 0.3, 0.8]) + 0.1 * _rng(1).normal(size=60)
        mlp = MLPRegressor(hidden_layer_sizes=(8,), activation=activation, solver="lbfgs",
                           max_iter=3, alpha=1e-3, random_state=0)
    else:
        z = X @ [1.0, -0.5, 0.3, 0.8]
        y = (z > 0).astype(int) if kind == "classifier" else np.digitize(z, [-0.5, 0.5])
        mlp = MLPClassifier(hidden_layer_sizes=(8,), activation=activation, solver="lbfgs",
                            max_iter=3, alpha=1e-3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mlp.fit(X, y)
    Y = (y.reshape(-1, 1).astype(float) if kind == "regressor"
         else mlp._label_binarizer.transform(y).astype(float))
    sizes = [X.shape[1], 8, Y.shape[1]]

    def buffers():
        return ([X] + [None] * (len(sizes) - 1), [None] * (len(sizes) - 1),
                [np.empty((a, b)) for a, b in zip(sizes[:-1], sizes[1:])],
                [np.empty(b) for b in sizes[1:]])

    def loss(w):
        return mlp._loss_grad_lbfgs(w, X, Y, None, *buffers())[0]

    def loss_grad(w):
        return mlp._loss_grad_lbfgs(w, X, Y, None, *buffers())[1]

    def forward_loss(w):
        mlp._unpack(w)
        activations = mlp._forward_pass(buffers()[0])
        name = mlp.loss
        if name == "log_loss" and mlp.out_activation_ == "logistic":
            name = "binary_log_loss"
        value = LOSS_FUNCTIONS[name](Y, activations[-1])
        l2 = sum(np.dot(c.ravel(), c.ravel()) for c in mlp.coefs_)
        return value + 0.5 * mlp.alpha * l2 / X.shape[0]

    w0 = _pack(mlp.coefs_, mlp.intercepts_)
    return loss, loss_grad, forward_loss, w0


def _mlp_problem(kind, activation, which):
    loss, loss_grad, forward_loss, w0 = _mlp(kind, activation)
    f = loss if which == "lbfgs-loss" else forward_loss
    return Problem(f, w0, w0 + 0.01 * _rng(5).normal(size=w0.size), analytic=loss_grad,
                   analytic_name="_loss_grad_lbfgs gradient")


def _taped_relu():
    """``jittape.taped`` of the forward-pass loss of a ReLU MLP at 20 new points."""
    import jittape
    from benchmarks.clients.harness import cause, compare, tolerance, RTOL_EXACT
    _, loss_grad, forward_loss, w0 = _mlp("regressor", "relu")
    row = dict(name="sklearn/taped-relu-mlp", check="taped-recordings", n=int(w0.size))
    points = [w0 + 0.05 * _rng(10 + i).normal(size=w0.size) for i in range(20)]
    refs = [loss_grad(w) for w in points]
    try:
        taped = jittape.taped(forward_loss)
        grads = [taped.grad(w) for w in points]
    except Exception as exc:
        return [dict(row, status="error", cause=cause(exc))]
    bad = [i for i, (got, ref) in enumerate(zip(grads, refs))
           if compare(got, ref, tolerance(ref, RTOL_EXACT))[0] is not None]
    s = taped.stats
    row["extra"] = dict(recordings=s.recordings, replays=s.replays,
                        guard_failures=s.guard_failures, points=len(points),
                        wrong_points=bad, target_recordings=1)
    row["status"] = "wrong" if bad else "pass"
    if bad:
        row["wrong"] = "derivative"
    row["note"] = f"{s.recordings} recording(s) for {len(points)} points (target 1)"
    return [row]


# --- linear-model losses, Huber, NMF ---------------------------------------------------------
def _huber():
    from sklearn.linear_model._huber import _huber_loss_and_gradient
    X = _rng().normal(size=(80, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.3 + _rng(1).standard_t(2, size=80)
    w = np.array([0.9, -1.8, 0.4, 0.2, 1.3])          # coef, intercept, scale
    sw = np.ones(80)
    return Problem(lambda w: _huber_loss_and_gradient(w, X, y, 1.35, 1e-3, sw)[0], w,
                   w * 1.01, analytic=lambda w: _huber_loss_and_gradient(w, X, y, 1.35,
                                                                         1e-3, sw)[1],
                   analytic_name="_huber_loss_and_gradient gradient")


LINEAR_LOSSES = ("binomial", "binomial-array-api", "multinomial", "multinomial-array-api",
                 "poisson", "gamma", "tweedie1.5", "squared")


def _linear_loss(name):
    from sklearn._loss import loss as L
    from sklearn.linear_model._linear_loss import LinearModelLoss
    X = _rng().normal(size=(100, 3))
    eta = X @ [0.5, -0.4, 0.3] + 0.2
    rng = _rng(1)
    n_classes = 3 if name.startswith("multinomial") else None
    if name.startswith("binomial"):
        y = (rng.uniform(size=100) < 1 / (1 + np.exp(-eta))).astype(float)
    elif n_classes:
        y = np.digitize(eta + rng.logistic(size=100), [-0.4, 0.6]).astype(float)
    elif name in ("poisson", "tweedie1.5"):
        y = rng.poisson(np.exp(eta)).astype(float)
    elif name == "gamma":
        y = rng.gamma(2.0, np.exp(eta) / 2)
    else:
        y = eta + rng.normal(size=100)
    if name.endswith("array-api"):
        from sklearn.utils._array_api import get_namespace
        xp, _ = get_namespace(X)
        cls = L.HalfBinomialLossArrayAPI if n_classes is None else L.HalfMultinomialLossArrayAPI
        base = cls(xp=xp) if n_classes is None else cls(n_classes=n_classes, xp=xp)
    else:
        base = {"binomial": L.HalfBinomialLoss, "poisson": L.HalfPoissonLoss,
                "gamma": L.HalfGammaLoss, "squared": L.HalfSquaredError}.get(name)
        base = (L.HalfMultinomialLoss(n_classes=n_classes) if n_classes else
                L.HalfTweedieLoss(power=1.5) if name == "tweedie1.5" else base())
    lml = LinearModelLoss(base_loss=base, fit_intercept=True)
    coef = 0.1 * _rng(2).normal(size=4 * (n_classes or 1))
    sw = np.ones(100)
    return Problem(lambda c: lml.loss(c, X, y, sw, l2_reg_strength=0.1), coef, coef * 1.02,
                   analytic=lambda c: lml.loss_gradient(c, X, y, sw, l2_reg_strength=0.1)[1],
                   analytic_name="LinearModelLoss.loss_gradient")


NMF_BETAS = {"frobenius": "frobenius", "kullback-leibler": "kullback-leibler",
             "itakura-saito": "itakura-saito", "beta1.5": 1.5}


def _nmf(beta, wrt):
    from sklearn.decomposition._nmf import _beta_divergence
    X = _rng().uniform(0.5, 2.0, size=(10, 8))
    W = _rng(1).uniform(0.3, 1.0, size=(10, 3))
    H = _rng(2).uniform(0.3, 1.0, size=(3, 8))
    b = NMF_BETAS[beta]
    if wrt == "W":
        def f(w):
            return _beta_divergence(X, w.reshape(W.shape), H, b)
        x = W.ravel()
    else:
        def f(h):
            return _beta_divergence(X, W, h.reshape(H.shape), b)
        x = H.ravel()
    return Problem(f, x, x * 1.01)


def cases():
    out = []

    def add(name, build, group, check):
        out.append(Case(LIBRARY, f"sklearn/{name}", build, quick=name in QUICK, group=group,
                        check=check))
    for k in _kernels():
        add(f"gpr/{k}", lambda k=k: _gpr(k), "GaussianProcessRegressor", k)
    for kind, act in [("regressor", "tanh"), ("regressor", "logistic"), ("regressor", "relu"),
                      ("regressor", "identity"), ("classifier", "tanh"),
                      ("classifier", "relu"), ("multiclass", "tanh")]:
        for which in ("lbfgs-loss", "forward-loss"):
            add(f"mlp/{kind}-{act}/{which}", lambda k=kind, a=act, w=which:
                _mlp_problem(k, a, w), "MLP", f"{kind}-{act}/{which}")
    add("huber", _huber, "HuberRegressor", "_huber_loss_and_gradient")
    for name in LINEAR_LOSSES:
        add(f"linear-loss/{name}", lambda n=name: _linear_loss(n), "LinearModelLoss", name)
    for beta in NMF_BETAS:
        for wrt in ("W", "H"):
            add(f"nmf/{beta}-{wrt}", lambda b=beta, w=wrt: _nmf(b, w), "NMF", f"{beta}-{wrt}")
    out.append(Case(LIBRARY, "sklearn/taped-relu-mlp", run=_taped_relu, quick=True,
                    group="MLP", check="taped-recordings"))
    return out

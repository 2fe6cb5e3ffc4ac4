"""L2-regularized logistic regression: ``mean_i log(1 + exp(-y_i x_i.w)) + lam/2 |w|^2``.

X is a fixed 10 000 x 100 standard-normal design (seeded), labels ``y = +-1`` from a planted
weight vector with 10 % of them flipped, lam = 1e-2. The parameters are the 100 weights: one
matrix-vector product dominates, the rest is elementwise over 10 000 values.
"""

import math

import numba
import numpy as np

from . import Problem

LAM = 1e-2


def data(n_samples, n_features, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features))
    w_true = rng.standard_normal(n_features) / math.sqrt(n_features)
    y = np.where(X @ w_true + 0.1 * rng.standard_normal(n_samples) > 0, 1.0, -1.0)
    flip = rng.random(n_samples) < 0.1
    y[flip] = -y[flip]
    return X, y


def make_numpy(X, y):
    def logreg_objective(w):
        z = X @ w
        return np.mean(np.logaddexp(0.0, -y * z)) + 0.5 * LAM * np.dot(w, w)
    return logreg_objective


def make_grad_numpy(X, y):
    n = X.shape[0]

    def grad(w):
        z = X @ w
        s = -y / (1.0 + np.exp(y * z))  # d/dz log(1 + exp(-y z)) = -y expit(-y z)
        return X.T @ s / n + LAM * w
    return grad


@numba.njit(cache=True)
def logreg_grad_njit(w, X, y):
    n, p = X.shape
    g = np.zeros(p)
    for i in range(n):
        z = 0.0
        for j in range(p):
            z += X[i, j] * w[j]
        yz = y[i] * z
        if yz > 0:
            e = math.exp(-yz)
            s = -y[i] * e / (1.0 + e)
        else:
            s = -y[i] / (1.0 + math.exp(yz))
        for j in range(p):
            g[j] += s * X[i, j]
    for j in range(p):
        g[j] = g[j] / n + LAM * w[j]
    return g


@numba.njit(cache=True)
def logreg_grad_blas_njit(w, X, y):
    """The same gradient with its two products through BLAS (Numba's ``np.dot`` calls
    gemv for ``X @ w`` and ``X.T @ s``), the loop over samples in between."""
    n = X.shape[0]
    z = np.dot(X, w)
    s = np.empty(n)
    for i in range(n):
        yz = y[i] * z[i]
        if yz > 0:
            e = math.exp(-yz)
            s[i] = -y[i] * e / (1.0 + e)
        else:
            s[i] = -y[i] / (1.0 + math.exp(yz))
    return np.dot(s, X) / n + LAM * w


def build(arg, key):
    n_samples, n_features = arg
    X, y = data(n_samples, n_features)
    w0 = np.random.default_rng(1).standard_normal(n_features) * 0.1

    def jax_version(jax, jnp):
        def fun(w, Xj, yj):
            return jnp.mean(jnp.logaddexp(0.0, -yj * (Xj @ w))) + 0.5 * LAM * jnp.dot(w, w)
        return fun, (jnp.asarray(X), jnp.asarray(y))

    def torch_version(torch):
        Xt, yt = torch.from_numpy(X), torch.from_numpy(y)

        def fun(w):
            return (torch.nn.functional.softplus(-yt * (Xt @ w)).mean()
                    + 0.5 * LAM * torch.dot(w, w))
        return fun

    def autograd_version(anp):
        def fun(w):
            return anp.mean(anp.logaddexp(0.0, -y * anp.dot(X, w))) + 0.5 * LAM * anp.dot(w, w)
        return fun

    return Problem(
        key=key, family="Logistic regression",
        label=f"X {n_samples:,} x {n_features}", x0=w0, f=make_numpy(X, y),
        grad_numpy=make_grad_numpy(X, y), grad_numba=lambda w: logreg_grad_njit(w, X, y),
        jax=jax_version, torch=torch_version, autograd=autograd_version, fd=True,
        notes=[f"X {n_samples:,} x {n_features} standard normal (seed 0), y = +-1, "
               f"lam = {LAM:g}; {n_features} parameters"])

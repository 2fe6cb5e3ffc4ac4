"""ADBench's Gaussian mixture model objective (Srajer, Kukelova, Fitzgibbon 2018, sec. 3.1).

Parameters (the flat vector ``theta``, differentiated as one): K mixture weights ``alpha``
(log-space), K means ``mu_k`` (d each) and K inverse-covariance factors ``icf_k`` (d(d+1)/2
each: d log-diagonal entries ``q``, then the strictly lower part of ``Q`` column by column).
``Q_k = diag(exp(q_k)) + L_k`` (lower triangular; as in ADBench's code, whose ``Q`` is the
transpose of the paper's). With n data points ``x_i`` and ``y_ik = Q_k (x_i - mu_k)``::

    f = -n d/2 log(2 pi)
        + sum_i logsumexp_k (alpha_k + sum(q_k) - |y_ik|^2 / 2)
        - n logsumexp(alpha)
        + sum_k [gamma^2/2 (|exp(q_k)|^2 + |L_k|_F^2) - m sum(q_k)]
        - K (n' d log(gamma / sqrt 2) - log Gamma_d(n'/2)),     n' = d + m + 1

which is ADBench's code: the log-likelihood PLUS its ``log_wishart_prior`` term, i.e. the
negative log-prior (gradbench ``evals/gmm/README.md`` notes the same). On ADBench's unit-test
input ``gmm/test.txt`` it gives 8.07380408004975791 (checked by the suite).

The NumPy objective uses a max-shifted log-sum-exp with an active ``np.max``, so a replayed
tape recomputes the shift at every point; the peers use their libraries' ``logsumexp``.
"""

import math

import numba
import numpy as np
from scipy.special import multigammaln

from . import Problem

DATA = __import__("pathlib").Path(__file__).resolve().parent.parent / "data" / "gmm"
TEST_VALUE = 8.07380408004975791


def read(path):
    """ADBench's GMM file: ``(alphas, means, icf, x, gamma, m)``."""
    lines = [ln.split() for ln in path.read_text().splitlines() if ln.strip()]
    d, K, n = (int(v) for v in lines[0])
    alphas = np.array([float(ln[0]) for ln in lines[1:1 + K]])
    means = np.array(lines[1 + K:1 + 2 * K], dtype=np.float64)
    icf = np.array(lines[1 + 2 * K:1 + 3 * K], dtype=np.float64)
    x = np.array(lines[1 + 3 * K:1 + 3 * K + n], dtype=np.float64)
    gamma, m = float(lines[1 + 3 * K + n][0]), int(lines[1 + 3 * K + n][1])
    assert means.shape == (K, d) and icf.shape == (K, d * (d + 1) // 2) and x.shape == (n, d)
    return alphas, means, icf, x, gamma, m


def q_index(d):
    """``idx`` with ``Q_k = ext_k[idx]``, ``ext_k = [exp(q_k), L-part of icf_k, 0]``: the
    diagonal from ``exp(q)``, the strictly lower part column by column, zeros above."""
    zero = d + d * (d - 1) // 2
    idx = np.full((d, d), zero, dtype=np.intp)
    idx[np.arange(d), np.arange(d)] = np.arange(d)
    pos = d
    for c in range(d):
        for r in range(c + 1, d):
            idx[r, c] = pos
            pos += 1
    return idx


def constant(d, K, n, gamma, m):
    """The parameter-free terms: ``-n d/2 log 2pi - K (n' d log(gamma/sqrt 2) - log
    Gamma_d(n'/2))``."""
    nn = d + m + 1
    c = nn * d * math.log(gamma / math.sqrt(2.0))
    return -n * d * 0.5 * math.log(2.0 * math.pi) - K * (c - multigammaln(0.5 * nn, d))


def make_numpy(x, gamma, m, K):
    """The objective in plain NumPy, ``f(theta)`` (data closed over)."""
    n, d = x.shape
    idx = q_index(d)
    const = constant(d, K, n, gamma, m)
    X = x[None, :, :]

    def gmm_objective(theta):
        alphas = theta[:K]
        means = theta[K:K + K * d].reshape(K, d)
        icf = theta[K + K * d:].reshape(K, d * (d + 1) // 2)
        q, lower = icf[:, :d], icf[:, d:]
        qdiag = np.exp(q)
        sum_qs = np.sum(q, axis=1)
        ext = np.concatenate([qdiag, lower, np.zeros((K, 1))], axis=1)
        Q = ext[:, idx]                                          # (K, d, d)
        xc = X - means[:, None, :]                               # (K, n, d)
        Qx = xc @ np.swapaxes(Q, 1, 2)                           # rows: Q_k (x_i - mu_k)
        main = (alphas + sum_qs)[:, None] - 0.5 * np.sum(Qx ** 2, axis=2)   # (K, n)
        mx = np.max(main, axis=0)
        lse = np.log(np.sum(np.exp(main - mx), axis=0)) + mx
        amx = np.max(alphas)
        lse_alpha = np.log(np.sum(np.exp(alphas - amx))) + amx
        prior = (0.5 * gamma * gamma * (np.sum(qdiag ** 2) + np.sum(lower ** 2))
                 - m * np.sum(sum_qs))
        return const + np.sum(lse) - n * lse_alpha + prior

    return gmm_objective


def make_grad_numpy(x, gamma, m, K):
    """Hand-derived gradient, vectorized NumPy.

    With ``P_ik`` the softmax over k of the inner term and ``W_ik = P_ik y_ik``:
    ``df/dalpha = sum_i P_i - n softmax(alpha)``, ``df/dQ_k = -sum_i W_ik (x_i - mu_k)^T``,
    ``df/dmu_k = Q_k^T sum_i W_ik``, ``df/dq_k = sum_i P_ik + diag(df/dQ_k) exp(q_k) +
    gamma^2 exp(2 q_k) - m``, ``df/dL_k = (df/dQ_k)_lower + gamma^2 L_k``.
    """
    n, d = x.shape
    idx = q_index(d)
    rows, cols = np.nonzero(np.tril(np.ones((d, d), dtype=bool), -1))  # strictly lower ...
    order = np.argsort(idx[rows, cols])  # ... in icf order (column by column)
    rows, cols = rows[order], cols[order]
    X = x[None, :, :]

    def grad(theta):
        alphas = theta[:K]
        means = theta[K:K + K * d].reshape(K, d)
        icf = theta[K + K * d:].reshape(K, d * (d + 1) // 2)
        q, lower = icf[:, :d], icf[:, d:]
        qdiag = np.exp(q)
        ext = np.concatenate([qdiag, lower, np.zeros((K, 1))], axis=1)
        Q = ext[:, idx]
        xc = X - means[:, None, :]
        Qx = xc @ np.swapaxes(Q, 1, 2)
        main = (alphas + q.sum(axis=1))[:, None] - 0.5 * np.sum(Qx ** 2, axis=2)
        mx = main.max(axis=0)
        e = np.exp(main - mx)
        P = e / e.sum(axis=0)                                    # (K, n)
        W = P[:, :, None] * Qx                                   # (K, n, d)
        dQ = -(np.swapaxes(W, 1, 2) @ xc)                        # (K, d, d)
        sa = np.exp(alphas - alphas.max())
        g_alpha = P.sum(axis=1) - n * sa / sa.sum()
        g_means = np.einsum("kd,kde->ke", W.sum(axis=1), Q)
        Psum = P.sum(axis=1)
        g_q = (Psum[:, None] + np.diagonal(dQ, axis1=1, axis2=2) * qdiag
               + gamma * gamma * qdiag ** 2 - m)
        g_lower = dQ[:, rows, cols] + gamma * gamma * lower
        return np.concatenate([g_alpha, g_means.ravel(),
                               np.concatenate([g_q, g_lower], axis=1).ravel()])

    return grad


@numba.njit(cache=True)
def gmm_grad_njit(theta, x, K, gamma, m):
    """Hand-derived gradient, loops: one pass over the points, O(K d^2) per point."""
    n, d = x.shape
    nq = d * (d + 1) // 2
    g = np.zeros(theta.shape[0])
    om, oi = K, K + K * d  # offsets of the means and of icf in theta
    qd = np.empty((K, d))
    base = np.empty(K)
    for k in range(K):
        s = 0.0
        for j in range(d):
            qd[k, j] = math.exp(theta[oi + k * nq + j])
            s += theta[oi + k * nq + j]
        base[k] = theta[k] + s
    xc = np.empty((K, d))
    y = np.empty((K, d))
    main = np.empty(K)
    for i in range(n):
        mx = -np.inf
        for k in range(K):
            for j in range(d):
                xc[k, j] = x[i, j] - theta[om + k * d + j]
                y[k, j] = qd[k, j] * xc[k, j]
            pos = oi + k * nq + d
            for c in range(d):
                for r in range(c + 1, d):
                    y[k, r] += theta[pos] * xc[k, c]
                    pos += 1
            s = 0.0
            for j in range(d):
                s += y[k, j] * y[k, j]
            main[k] = base[k] - 0.5 * s
            mx = max(mx, main[k])
        se = 0.0
        for k in range(K):
            se += math.exp(main[k] - mx)
        lse = mx + math.log(se)
        for k in range(K):
            p = math.exp(main[k] - lse)
            g[k] += p
            for j in range(d):
                g[oi + k * nq + j] += p - p * y[k, j] * xc[k, j] * qd[k, j]
            pos = oi + k * nq + d
            for c in range(d):
                t = qd[k, c] * y[k, c]  # (Q^T y)_c
                for r in range(c + 1, d):
                    g[pos] -= p * y[k, r] * xc[k, c]
                    t += theta[pos] * y[k, r]
                    pos += 1
                g[om + k * d + c] += p * t
    amx = -np.inf
    for k in range(K):
        amx = max(amx, theta[k])
    sa = 0.0
    for k in range(K):
        sa += math.exp(theta[k] - amx)
    for k in range(K):
        g[k] -= n * math.exp(theta[k] - amx) / sa
        for j in range(d):
            g[oi + k * nq + j] += gamma * gamma * qd[k, j] * qd[k, j] - m
        for j in range(d, nq):
            g[oi + k * nq + j] += gamma * gamma * theta[oi + k * nq + j]
    return g


def _peer_body(xp, lse, theta, X, idx, d, K, n, gamma, m, const):
    """The objective for NumPy-like array libraries (jax.numpy, autograd.numpy)."""
    alphas = theta[:K]
    means = theta[K:K + K * d].reshape(K, d)
    icf = theta[K + K * d:].reshape(K, d * (d + 1) // 2)
    q, lower = icf[:, :d], icf[:, d:]
    qdiag = xp.exp(q)
    sum_qs = xp.sum(q, axis=1)
    ext = xp.concatenate([qdiag, lower, xp.zeros((K, 1))], axis=1)
    Q = ext[:, idx]
    xc = X[None, :, :] - means[:, None, :]
    Qx = xp.matmul(xc, xp.swapaxes(Q, 1, 2))
    main = (alphas + sum_qs)[:, None] - 0.5 * xp.sum(Qx ** 2, axis=2)
    prior = 0.5 * gamma * gamma * (xp.sum(qdiag ** 2) + xp.sum(lower ** 2)) - m * xp.sum(sum_qs)
    return const + xp.sum(lse(main, axis=0)) - n * lse(alphas) + prior


def build(arg, key):
    folder, d, K = arg
    name = f"gmm_d{d}_K{K}.txt"
    alphas, means, icf, x, gamma, m = read(DATA / folder / name)
    n = x.shape[0]
    theta0 = np.concatenate([alphas, means.ravel(), icf.ravel()])
    idx = q_index(d)
    const = constant(d, K, n, gamma, m)

    def jax_version(jax, jnp):
        from jax.scipy.special import logsumexp

        def fun(theta, X):
            return _peer_body(jnp, logsumexp, theta, X, idx, d, K, n, gamma, m, const)
        return fun, (jnp.asarray(x),)

    def torch_version(torch):
        X = torch.from_numpy(x)
        idx_t = torch.from_numpy(idx.astype(np.int64))
        zeros = torch.zeros((K, 1), dtype=torch.float64)

        def fun(theta):
            alphas = theta[:K]
            means = theta[K:K + K * d].reshape(K, d)
            icf = theta[K + K * d:].reshape(K, d * (d + 1) // 2)
            q, lower = icf[:, :d], icf[:, d:]
            qdiag = torch.exp(q)
            sum_qs = q.sum(1)
            Q = torch.cat([qdiag, lower, zeros], 1)[:, idx_t]
            xc = X[None, :, :] - means[:, None, :]
            Qx = torch.matmul(xc, Q.transpose(1, 2))
            main = (alphas + sum_qs)[:, None] - 0.5 * (Qx ** 2).sum(2)
            prior = (0.5 * gamma * gamma * ((qdiag ** 2).sum() + (lower ** 2).sum())
                     - m * sum_qs.sum())
            return (const + torch.logsumexp(main, 0).sum() - n * torch.logsumexp(alphas, 0)
                    + prior)
        return fun

    def autograd_version(anp):
        from autograd.scipy.special import logsumexp

        def fun(theta):
            return _peer_body(anp, logsumexp, theta, x, idx, d, K, n, gamma, m, const)
        return fun

    nd = int(theta0.size)
    return Problem(
        key=key, family="GMM", label=f"d={d} K={K} n={n // 1000}k", x0=theta0,
        f=make_numpy(x, gamma, m, K), grad_numpy=make_grad_numpy(x, gamma, m, K),
        grad_numba=lambda th: gmm_grad_njit(th, x, K, gamma, m),
        jax=jax_version, torch=torch_version, autograd=autograd_version,
        fd=nd <= 100,
        notes=[f"ADBench `gmm/{folder}/{name}`: d={d}, K={K}, n={n:,} points; "
               f"{nd:,} parameters"])


def reference_check():
    """The objective on ADBench's ``gmm/test.txt`` against its unit test's value."""
    alphas, means, icf, x, gamma, m = read(DATA / "test.txt")
    K, d = means.shape
    theta = np.concatenate([alphas, means.ravel(), icf.ravel()])
    v = make_numpy(x, gamma, m, K)(theta)
    assert abs(v - TEST_VALUE) <= 1e-12 * abs(TEST_VALUE), (v, TEST_VALUE)
    g1 = make_grad_numpy(x, gamma, m, K)(theta)
    g2 = gmm_grad_njit(theta, x, K, gamma, m)
    err = float(np.max(np.abs(g1 - g2)) / np.max(np.abs(g2)))
    assert err < 1e-12, err
    return [f"GMM `gmm/test.txt` (d={d}, K={K}, n={x.shape[0]}): objective {float(v)!r}, ADBench "
            f"8.07380408004975791 (relative difference {abs(v - TEST_VALUE) / TEST_VALUE:.1e})"]

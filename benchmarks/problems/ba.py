"""ADBench's bundle adjustment objective (Srajer, Kukelova, Fitzgibbon 2018, sec. 3.2).

Parameters (the flat vector ``theta``): n cameras of 11 values (Rodrigues rotation r, centre
C, focal length f, principal point x0, radial distortion kappa), m 3-D points X and p
weights w. Observation i pairs camera ``i mod n`` with point ``i mod m`` and feature
``feat_i``. ADBench's residuals (its ``compute_reproj_err`` / ``compute_w_err``)::

    Y = R(r) (X - C)                 Rodrigues: Y = Xc cos t + (u x Xc) sin t + u (u.Xc)(1 - cos t)
    u2 = Y[:2] / Y[2]                (t = |r|, u = r / t)
    proj = f * u2 * (1 + k1 s + k2 s^2) + x0,   s = |u2|^2
    reproj_i = w_i (proj - feat_i)   (2 values),   werr_i = 1 - w_i^2

ADBench differentiates the residual vector (a sparse Jacobian); here the scalar objective
is the sum of squares of all residuals, ``sum |reproj_i|^2 + sum werr_i^2``, and every tool
computes its gradient. ADBench's Rodrigues function switches to ``X + r x X`` at ``t = 0``;
every ADBench instance has ``t != 0``, and the vectorized objectives here use the ``t != 0``
branch only (the suite checks that the data has no zero rotation).
"""

import numba
import numpy as np

from . import Problem

DATA = __import__("pathlib").Path(__file__).resolve().parent.parent / "data" / "ba"
NCAM = 11
TEST_REPROJ0 = (-0.269048849235189402, 0.259944792677901881)
TEST_WERR0 = 0.826092651515999976


def read(path):
    """ADBench's BA file, tiled as ADBench's reader does: ``(cams, X, w, obs, feats)``."""
    lines = [ln.split() for ln in path.read_text().splitlines() if ln.strip()]
    n, m, p = (int(v) for v in lines[0])
    cam = np.array(lines[1], dtype=np.float64)
    pt = np.array(lines[2], dtype=np.float64)
    w = float(lines[3][0])
    feat = np.array(lines[4], dtype=np.float64)
    obs = np.stack([np.arange(p) % n, np.arange(p) % m], axis=1).astype(np.intp)
    return (np.tile(cam, (n, 1)), np.tile(pt, (m, 1)), np.full(p, w), obs,
            np.tile(feat, (p, 1)))


def unpack(theta, n, m):
    cams = theta[:NCAM * n].reshape(n, NCAM)
    X = theta[NCAM * n:NCAM * n + 3 * m].reshape(m, 3)
    w = theta[NCAM * n + 3 * m:]
    return cams, X, w


def residuals(theta, n, m, obs, feats):
    """ADBench's reprojection residuals ``(p, 2)`` and weight residuals ``(p,)``, NumPy."""
    cams, X, w = unpack(theta, n, m)
    cam = cams[obs[:, 0]]                       # (p, 11) gathers
    Xc = X[obs[:, 1]] - cam[:, 3:6]
    rot = cam[:, 0:3]
    theta_ = np.sqrt(np.sum(rot ** 2, axis=1))
    cos, sin = np.cos(theta_), np.sin(theta_)
    u = rot / theta_[:, None]
    Y = (Xc * cos[:, None] + np.cross(u, Xc) * sin[:, None]
         + u * (np.sum(u * Xc, axis=1) * (1.0 - cos))[:, None])
    u2 = Y[:, 0:2] / Y[:, 2:3]
    s = np.sum(u2 ** 2, axis=1)
    distort = 1.0 + cam[:, 9] * s + cam[:, 10] * s * s
    proj = u2 * (distort * cam[:, 6])[:, None] + cam[:, 7:9]
    return w[:, None] * (proj - feats), 1.0 - w ** 2


def residual_vector(n, m, obs, feats):
    """ADBench's residual vector of ``x = [cams (11n), points (3m), weights (p)]``: the
    reprojection errors row-interleaved (observation ``i`` at ``2i, 2i + 1``), then the
    weight errors, as ADBench's ``BASparseMat`` orders its rows."""
    def ba_residuals(x):
        reproj, werr = residuals(x, n, m, obs, feats)
        return np.concatenate([reproj.ravel(), werr])
    return ba_residuals


def jacobian_pattern(n, m, p, obs):
    """ADBench's Jacobian structure (its ``BASparseMat``: 15 columns per reprojection row,
    1 per weight row) without the two structural zeros per observation, ``d proj_x / d x0_y``
    and ``d proj_y / d x0_x``: 29p nonzeros, boolean CSR."""
    import scipy.sparse as sp
    cam = NCAM * obs[:, 0:1] + np.arange(NCAM)
    pt = NCAM * n + 3 * obs[:, 1:2] + np.arange(3)
    wt = (NCAM * n + 3 * m + np.arange(p))[:, None]
    row_x = np.concatenate([np.delete(cam, 8, axis=1), pt, wt], axis=1)  # no x0_y
    row_y = np.concatenate([np.delete(cam, 7, axis=1), pt, wt], axis=1)  # no x0_x
    cols = np.concatenate([np.stack([row_x, row_y], axis=1).reshape(2 * p, 14).ravel(),
                           wt.ravel()])
    indptr = np.concatenate([np.arange(0, 28 * p + 1, 14), 28 * p + np.arange(1, p + 1)])
    out = sp.csr_array((np.ones(cols.size, bool), cols, indptr),
                       shape=(3 * p, NCAM * n + 3 * m + p))
    out.sort_indices()
    return out


def make_numpy(n, m, obs, feats):
    def ba_objective(theta):
        reproj, werr = residuals(theta, n, m, obs, feats)
        return np.sum(reproj ** 2) + np.sum(werr ** 2)
    return ba_objective


def _cross(a, b):
    """Row-wise cross product (for the hand gradient; NumPy's np.cross on rows)."""
    return np.stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1],
                     a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                     a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]], axis=1)


def make_grad_numpy(n, m, obs, feats):
    """Hand-derived gradient, vectorized NumPy: the reverse pass of :func:`residuals` per
    observation, written out (see the module docstring for the names), then scatter-added
    into the cameras and points with ``np.add.at``."""
    p = obs.shape[0]

    def grad(theta):
        cams, X, w = unpack(theta, n, m)
        cam = cams[obs[:, 0]]
        Xc = X[obs[:, 1]] - cam[:, 3:6]
        r = cam[:, 0:3]
        t = np.sqrt(np.sum(r * r, axis=1))
        cs, sn = np.cos(t), np.sin(t)
        u = r / t[:, None]
        uxX = _cross(u, Xc)
        ud = np.sum(u * Xc, axis=1)
        Y = Xc * cs[:, None] + uxX * sn[:, None] + u * (ud * (1.0 - cs))[:, None]
        u2 = Y[:, 0:2] / Y[:, 2:3]
        s = np.sum(u2 * u2, axis=1)
        k1, k2, fl = cam[:, 9], cam[:, 10], cam[:, 6]
        Lr = 1.0 + k1 * s + k2 * s * s
        dist = u2 * Lr[:, None]
        proj = dist * fl[:, None] + cam[:, 7:9]
        e = w[:, None] * (proj - feats)
        # reverse
        ebar = 2.0 * e
        gw = np.sum(ebar * (proj - feats), axis=1) - 4.0 * w * (1.0 - w * w)
        pbar = w[:, None] * ebar
        gcam = np.zeros((p, NCAM))
        gcam[:, 6] = np.sum(pbar * dist, axis=1)
        gcam[:, 7:9] = pbar
        dbar = fl[:, None] * pbar
        Lbar = np.sum(dbar * u2, axis=1)
        gcam[:, 9] = Lbar * s
        gcam[:, 10] = Lbar * s * s
        sbar = Lbar * (k1 + 2.0 * k2 * s)
        u2bar = Lr[:, None] * dbar + 2.0 * sbar[:, None] * u2
        Ybar = np.empty((p, 3))
        Ybar[:, 0:2] = u2bar / Y[:, 2:3]
        Ybar[:, 2] = -np.sum(u2bar * u2, axis=1) / Y[:, 2]
        uY = np.sum(u * Ybar, axis=1)
        Xcbar = (Ybar * cs[:, None] + _cross(Ybar, u) * sn[:, None]
                 + u * ((1.0 - cs) * uY)[:, None])
        ubar = (_cross(Xc, Ybar) * sn[:, None] + Ybar * (ud * (1.0 - cs))[:, None]
                + Xc * ((1.0 - cs) * uY)[:, None])
        csbar = np.sum(Ybar * Xc, axis=1) - ud * uY
        snbar = np.sum(Ybar * uxX, axis=1)
        tbar = -sn * csbar + cs * snbar - np.sum(ubar * r, axis=1) / (t * t)
        gcam[:, 0:3] = ubar / t[:, None] + (tbar / t)[:, None] * r
        gcam[:, 3:6] = -Xcbar
        gcams = np.zeros((n, NCAM))
        np.add.at(gcams, obs[:, 0], gcam)
        gX = np.zeros((m, 3))
        np.add.at(gX, obs[:, 1], Xcbar)
        return np.concatenate([gcams.ravel(), gX.ravel(), gw])

    return grad


@numba.njit(cache=True)
def ba_grad_njit(theta, n, m, obs, feats):
    """Hand-derived gradient, one loop over the observations (same algebra as the NumPy
    version, scalars in registers)."""
    p = obs.shape[0]
    oX, ow = NCAM * n, NCAM * n + 3 * m
    g = np.zeros(theta.shape[0])
    Xc = np.empty(3)
    u = np.empty(3)
    uxX = np.empty(3)
    Y = np.empty(3)
    Yb = np.empty(3)
    for i in range(p):
        oc = NCAM * obs[i, 0]
        op = oX + 3 * obs[i, 1]
        w = theta[ow + i]
        tt = 0.0
        for j in range(3):
            Xc[j] = theta[op + j] - theta[oc + 3 + j]
            tt += theta[oc + j] * theta[oc + j]
        t = np.sqrt(tt)
        cs, sn = np.cos(t), np.sin(t)
        ud = 0.0
        for j in range(3):
            u[j] = theta[oc + j] / t
            ud += u[j] * Xc[j]
        uxX[0] = u[1] * Xc[2] - u[2] * Xc[1]
        uxX[1] = u[2] * Xc[0] - u[0] * Xc[2]
        uxX[2] = u[0] * Xc[1] - u[1] * Xc[0]
        for j in range(3):
            Y[j] = Xc[j] * cs + uxX[j] * sn + u[j] * ud * (1.0 - cs)
        a0, a1 = Y[0] / Y[2], Y[1] / Y[2]
        s = a0 * a0 + a1 * a1
        k1, k2, fl = theta[oc + 9], theta[oc + 10], theta[oc + 6]
        Lr = 1.0 + k1 * s + k2 * s * s
        d0, d1 = a0 * Lr, a1 * Lr
        r0 = fl * d0 + theta[oc + 7] - feats[i, 0]
        r1 = fl * d1 + theta[oc + 8] - feats[i, 1]
        e0, e1 = w * r0, w * r1
        # reverse
        g[ow + i] += 2.0 * e0 * r0 + 2.0 * e1 * r1 - 4.0 * w * (1.0 - w * w)
        pb0, pb1 = 2.0 * w * e0, 2.0 * w * e1
        g[oc + 6] += pb0 * d0 + pb1 * d1
        g[oc + 7] += pb0
        g[oc + 8] += pb1
        db0, db1 = fl * pb0, fl * pb1
        Lb = db0 * a0 + db1 * a1
        g[oc + 9] += Lb * s
        g[oc + 10] += Lb * s * s
        sb = Lb * (k1 + 2.0 * k2 * s)
        ab0 = Lr * db0 + 2.0 * sb * a0
        ab1 = Lr * db1 + 2.0 * sb * a1
        Yb[0] = ab0 / Y[2]
        Yb[1] = ab1 / Y[2]
        Yb[2] = -(ab0 * a0 + ab1 * a1) / Y[2]
        uY = u[0] * Yb[0] + u[1] * Yb[1] + u[2] * Yb[2]
        csb = Yb[0] * Xc[0] + Yb[1] * Xc[1] + Yb[2] * Xc[2] - ud * uY
        snb = Yb[0] * uxX[0] + Yb[1] * uxX[1] + Yb[2] * uxX[2]
        # Xc adjoint: Yb cs + (Yb x u) sn + u (1 - cs) uY
        xb0 = Yb[0] * cs + (Yb[1] * u[2] - Yb[2] * u[1]) * sn + u[0] * (1.0 - cs) * uY
        xb1 = Yb[1] * cs + (Yb[2] * u[0] - Yb[0] * u[2]) * sn + u[1] * (1.0 - cs) * uY
        xb2 = Yb[2] * cs + (Yb[0] * u[1] - Yb[1] * u[0]) * sn + u[2] * (1.0 - cs) * uY
        # u adjoint: (Xc x Yb) sn + Yb ud (1 - cs) + Xc (1 - cs) uY
        ub0 = (Xc[1] * Yb[2] - Xc[2] * Yb[1]) * sn + Yb[0] * ud * (1.0 - cs) \
            + Xc[0] * (1.0 - cs) * uY
        ub1 = (Xc[2] * Yb[0] - Xc[0] * Yb[2]) * sn + Yb[1] * ud * (1.0 - cs) \
            + Xc[1] * (1.0 - cs) * uY
        ub2 = (Xc[0] * Yb[1] - Xc[1] * Yb[0]) * sn + Yb[2] * ud * (1.0 - cs) \
            + Xc[2] * (1.0 - cs) * uY
        r0_, r1_, r2_ = theta[oc], theta[oc + 1], theta[oc + 2]
        tb = -sn * csb + cs * snb - (ub0 * r0_ + ub1 * r1_ + ub2 * r2_) / (t * t)
        g[oc] += ub0 / t + tb * r0_ / t
        g[oc + 1] += ub1 / t + tb * r1_ / t
        g[oc + 2] += ub2 / t + tb * r2_ / t
        g[oc + 3] -= xb0
        g[oc + 4] -= xb1
        g[oc + 5] -= xb2
        g[op] += xb0
        g[op + 1] += xb1
        g[op + 2] += xb2
    return g


def _peer_body(xp, cross, theta, obs0, obs1, feats, n, m):
    """The objective for NumPy-like array libraries (jax.numpy, autograd.numpy)."""
    cams = theta[:NCAM * n].reshape(n, NCAM)
    X = theta[NCAM * n:NCAM * n + 3 * m].reshape(m, 3)
    w = theta[NCAM * n + 3 * m:]
    cam = cams[obs0]
    Xc = X[obs1] - cam[:, 3:6]
    rot = cam[:, 0:3]
    t = xp.sqrt(xp.sum(rot ** 2, axis=1))
    cos, sin = xp.cos(t), xp.sin(t)
    u = rot / t[:, None]
    Y = (Xc * cos[:, None] + cross(u, Xc) * sin[:, None]
         + u * (xp.sum(u * Xc, axis=1) * (1.0 - cos))[:, None])
    u2 = Y[:, 0:2] / Y[:, 2:3]
    s = xp.sum(u2 ** 2, axis=1)
    distort = 1.0 + cam[:, 9] * s + cam[:, 10] * s * s
    proj = u2 * (distort * cam[:, 6])[:, None] + cam[:, 7:9]
    reproj = w[:, None] * (proj - feats)
    return xp.sum(reproj ** 2) + xp.sum((1.0 - w ** 2) ** 2)


def build(name, key):
    cams, X, w, obs, feats = read(DATA / f"{name}.txt")
    n, m, p = cams.shape[0], X.shape[0], w.shape[0]
    assert np.all(np.sum(cams[:, :3] ** 2, axis=1) > 0), "a zero rotation: t = 0 branch"
    theta0 = np.concatenate([cams.ravel(), X.ravel(), w])
    obs0, obs1 = np.ascontiguousarray(obs[:, 0]), np.ascontiguousarray(obs[:, 1])

    def jax_version(jax, jnp):
        def fun(theta, o0, o1, ft):
            return _peer_body(jnp, lambda a, b: jnp.cross(a, b), theta, o0, o1, ft, n, m)
        return fun, (jnp.asarray(obs0), jnp.asarray(obs1), jnp.asarray(feats))

    def torch_version(torch):
        o0, o1 = torch.from_numpy(obs0.astype(np.int64)), torch.from_numpy(obs1.astype(np.int64))
        ft = torch.from_numpy(feats)

        def fun(theta):
            cam = theta[:NCAM * n].reshape(n, NCAM)[o0]
            Xc = theta[NCAM * n:NCAM * n + 3 * m].reshape(m, 3)[o1] - cam[:, 3:6]
            wt = theta[NCAM * n + 3 * m:]
            rot = cam[:, 0:3]
            t = torch.sqrt((rot ** 2).sum(1))
            cos, sin = torch.cos(t), torch.sin(t)
            u = rot / t[:, None]
            Y = (Xc * cos[:, None] + torch.linalg.cross(u, Xc, dim=1) * sin[:, None]
                 + u * ((u * Xc).sum(1) * (1.0 - cos))[:, None])
            u2 = Y[:, 0:2] / Y[:, 2:3]
            s = (u2 ** 2).sum(1)
            distort = 1.0 + cam[:, 9] * s + cam[:, 10] * s * s
            proj = u2 * (distort * cam[:, 6])[:, None] + cam[:, 7:9]
            reproj = wt[:, None] * (proj - ft)
            return (reproj ** 2).sum() + ((1.0 - wt ** 2) ** 2).sum()
        return fun

    def autograd_version(anp):
        def fun(theta):
            return _peer_body(anp, anp.cross, theta, obs0, obs1, feats, n, m)
        return fun

    return Problem(
        key=key, family="BA", label=f"{name.split('_')[0]} (n={n}, m={m:,}, p={p:,})",
        x0=theta0, f=make_numpy(n, m, obs, feats), grad_numpy=make_grad_numpy(n, m, obs, feats),
        grad_numba=lambda th: ba_grad_njit(th, n, m, obs, feats), jax=jax_version,
        torch=torch_version, autograd=autograd_version, fd=False,
        notes=[f"ADBench `ba/{name}.txt`: {n} cameras, {m:,} points, {p:,} observations; "
               f"{theta0.size:,} parameters"])


def reference_check():
    """Residuals on ADBench's ``ba/test.txt`` against its unit test's values."""
    cams, X, w, obs, feats = read(DATA / "test.txt")
    n, m = cams.shape[0], X.shape[0]
    theta = np.concatenate([cams.ravel(), X.ravel(), w])
    reproj, werr = residuals(theta, n, m, obs, feats)
    want = np.array(TEST_REPROJ0)
    assert np.allclose(reproj[0], want, rtol=1e-12, atol=0), (reproj[0], want)
    assert abs(werr[0] - TEST_WERR0) <= 1e-12 * TEST_WERR0, (werr[0], TEST_WERR0)
    g1 = make_grad_numpy(n, m, obs, feats)(theta)
    g2 = ba_grad_njit(theta, n, m, obs, feats)
    err = float(np.max(np.abs(g1 - g2)) / np.max(np.abs(g2)))
    assert err < 1e-12, err
    return [f"BA `ba/test.txt`: first reprojection residual ({float(reproj[0, 0])!r}, "
            f"{float(reproj[0, 1])!r}), ADBench (-0.269048849235189402, 0.259944792677901881); "
            f"first weight residual {float(werr[0])!r}, ADBench 0.826092651515999976"]

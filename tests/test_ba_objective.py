"""ADBench's bundle-adjustment residuals (``benchmarks/problems/ba.py``, timed by
``benchmarks/bench_ba.py``) and their sparse Jacobian.

ADBench (Srajer, Kukelova & Fitzgibbon 2018; github.com/microsoft/ADBench, MIT licence):
the residuals of ``src/cpp/shared/ba.h`` (``computeReprojError``, ``computeZachWeightError``)
on its unit-test instance ``data/ba/test.txt``, whose five lines are copied below, must give
the values of its unit test (``test/cpp/modules/common/BaTests.cpp``). The instance is tiled
as ADBench reads it: n = 2 cameras, m = 10 points, p = 10 observations, observation ``i``
pairing camera ``i mod n`` with point ``i mod m``. Nothing here reads files outside the
repository.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import jittape

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the benchmarks package sits beside tests/ (its
    sys.path.insert(0, str(ROOT))  # problems need NumPy and Numba only)
ba = pytest.importorskip("benchmarks.problems.ba")

N, M, P = 2, 10, 10  # ADBench data/ba/test.txt, first line
CAM = [1.797201, 0.590697, -0.635786, 90.859550, 29.361415, 28.777534, 211.628116,
       -0.284531, -14.762924, 0.058931, 0.069976]
POINT = [4.173048, 5.586898, 1.403869]
WEIGHT = 0.417022
FEAT = [-525.672849, 161.811929]
REPROJ0 = (-0.269048849235189402, 0.259944792677901881)  # ADBench's BaTests.cpp
WERR0 = 0.826092651515999976


def instance():
    obs = np.stack([np.arange(P) % N, np.arange(P) % M], axis=1)
    x = np.concatenate([np.tile(CAM, N), np.tile(POINT, M), np.full(P, WEIGHT)])
    return x, obs, np.tile(FEAT, (P, 1))


def residuals_one_by_one(x, obs, feats):
    """ADBench's ba.h read literally: one observation at a time, scalar arithmetic, both
    branches of its rodrigues_rotate_point. The reference for the vectorized version."""
    cams = x[:11 * N].reshape(N, 11)
    pts = x[11 * N:11 * N + 3 * M].reshape(M, 3)
    w = x[11 * N + 3 * M:]
    out = np.empty(3 * P)
    for i, (c, q) in enumerate(obs):
        cam, X = cams[c], pts[q] - cams[c][3:6]
        rot = cam[0:3]
        sq = float(rot @ rot)
        if sq != 0.0:
            t = np.sqrt(sq)
            u = rot / t
            Y = X * np.cos(t) + np.cross(u, X) * np.sin(t) + u * (u @ X) * (1.0 - np.cos(t))
        else:
            Y = X + np.cross(rot, X)
        proj = Y[0:2] / Y[2]
        rsq = proj @ proj
        proj = proj * (1.0 + cam[9] * rsq + cam[10] * rsq * rsq)
        proj = proj * cam[6] + cam[7:9]
        out[2 * i:2 * i + 2] = w[i] * (proj - feats[i])
        out[2 * P + i] = 1.0 - w[i] * w[i]
    return out


def test_residuals_match_adbench_unit_test():
    x, obs, feats = instance()
    r = ba.residual_vector(N, M, obs, feats)(x)
    assert r.shape == (3 * P,)
    np.testing.assert_allclose(r[0:2], REPROJ0, rtol=1e-12)
    np.testing.assert_allclose(r[2 * P], WERR0, rtol=1e-12)
    np.testing.assert_allclose(r, residuals_one_by_one(x, obs, feats), rtol=1e-12)


def central_differences(f, x, h=1e-6):
    jac = np.empty((f(x).size, x.size))
    for j in range(x.size):
        step = h * max(1.0, abs(x[j]))
        xp, xm = x.copy(), x.copy()
        xp[j] += step
        xm[j] -= step
        jac[:, j] = (f(xp) - f(xm)) / (2.0 * step)
    return jac


def test_sparse_jacobian_equals_dense_and_central_differences():
    x, obs, feats = instance()
    f = ba.residual_vector(N, M, obs, feats)
    tf = jittape.taped(f)
    rng = np.random.default_rng(0)
    for point in (x, x * (1.0 + 1e-2 * rng.standard_normal(x.size))):
        sparse = tf.sparse_jacobian(point)
        assert sparse.shape == (3 * P, 11 * N + 3 * M + P)
        dense = jittape.record(f, point).jacobian(point)
        np.testing.assert_allclose(sparse.toarray(), dense, rtol=1e-12, atol=1e-12)
        fd = central_differences(f, point)
        scale = np.max(np.abs(dense))
        assert np.max(np.abs(dense - fd)) <= 1e-6 * scale
    assert tf.stats.recordings == 1 and tf.stats.replays == 1


def test_pattern_is_adbenchs_structure_in_14_colors():
    x, obs, feats = instance()
    tape = jittape.record(ba.residual_vector(N, M, obs, feats), x)
    pattern = tape.jacobian_sparsity()
    want = ba.jacobian_pattern(N, M, P, obs)
    assert pattern.nnz == 29 * P
    assert (pattern.toarray() == want.toarray()).all()
    tape.sparse_jacobian(x)
    assert tape._jac_colors.max() + 1 == 14  # the longest row: the least possible


def test_vectorized_residuals_agree_with_loop_at_random_points():
    x, obs, feats = instance()
    rng = np.random.default_rng(1)
    f = ba.residual_vector(N, M, obs, feats)
    for _ in range(3):
        y = x * (1.0 + 0.1 * rng.standard_normal(x.size))
        np.testing.assert_allclose(f(y), residuals_one_by_one(y, obs, feats), rtol=1e-10,
                                   atol=1e-10)

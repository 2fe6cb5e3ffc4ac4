"""scipy.linalg's factorizations and triangular solves (jittape/scipy/factorizations.py) and
scipy.spatial.distance's pdist, cdist and squareform (jittape/scipy/distance.py) on active
arrays: every function in every mode (tests/modes.py), SciPy's values, shapes and triangle
semantics (non-symmetric inputs), closed forms, the pivots' guards, the zero-distance
convention, the import order, and scikit-learn's Gaussian process log marginal likelihood
against its own analytic gradient."""

import os
import subprocess
import sys
import zlib

import numpy as np
import pytest
import scipy.linalg as sl
import scipy.spatial.distance as D

import jittape
from jittape.numpy import stand_ins
from jittape.testing import check_grads
from modes import check_every_mode

jittape.grad(lambda x: x * 1.0)(1.0)  # a recording installs the SciPy wrappers

RNG = np.random.default_rng(11)


@pytest.fixture(autouse=True)
def _seeded(request):
    """Each test's random data depend on its name only, not on the tests run before."""
    global RNG
    RNG = np.random.default_rng(zlib.crc32(request.node.name.encode()))


def R(*shape):
    return RNG.standard_normal(shape)


def _pivoted(m, n):
    """A well-conditioned ``(m, n)`` matrix whose rows LAPACK's partial pivoting reorders:
    a dominant diagonal block, rows shuffled."""
    a = R(m, n)
    k = min(m, n)
    a[:k, :k] += 4.0 * np.eye(k)
    return a[np.roll(np.arange(m), 1)]


def _spd(n, garbage=0.0):
    """A symmetric positive definite matrix, its strict lower triangle replaced by
    ``garbage`` times noise (a non-symmetric input whose upper triangle is that of the SPD
    matrix)."""
    b = R(n, n)
    a = b @ b.T + n * np.eye(n)
    return a + garbage * np.tril(R(n, n), -1)


def _every_mode(f, x, tmp_path, x2=None):
    x = np.asarray(x, dtype=float)
    v = np.cos(np.arange(x.size) + 0.5).reshape(x.shape)
    check_every_mode(f, x, v, x * (1 + 1e-3) if x2 is None else x2, tmp_path)


def _weights(shape):
    return np.cos(np.arange(int(np.prod(shape))) * 0.7 + 0.3).reshape(shape)


def _scalar(g):
    """``sum(sin(g(...)) * w)``: a scalar of every element of the result."""
    def f(*args):
        out = g(*args)
        return np.sum(np.sin(out) * _weights(np.shape(out)))
    return f


# --- scipy.linalg: values and triangles against SciPy --------------------------------

N4 = _spd(4, garbage=5.0)  # upper triangle SPD, lower triangle garbage


@pytest.mark.parametrize("lower", [False, True])
def test_cholesky_reads_one_triangle_as_scipy(lower, tmp_path):
    a = N4.T if lower else N4  # the triangle read is SPD, the other one garbage
    got = jittape.record(lambda a: sl.cholesky(a, lower=lower), a).value(a)
    np.testing.assert_allclose(got, sl.cholesky(a, lower=lower), rtol=1e-13, atol=1e-14)
    g = jittape.grad(_scalar(lambda a: sl.cholesky(a, lower=lower)))(a)
    unread = np.triu(g, 1) if lower else np.tril(g, -1)
    assert np.all(unread == 0.0) and np.all(np.isfinite(g))
    _every_mode(_scalar(lambda a: sl.cholesky(a, lower=lower)), a, tmp_path)


@pytest.mark.parametrize("lower", [False, True])
def test_cho_factor_keeps_the_inputs_other_triangle_as_scipy(lower, tmp_path):
    a = N4.T if lower else N4
    c, flag = sl.cho_factor(a, lower=lower)
    rec = jittape.record(lambda a: sl.cho_factor(a, lower=lower)[0], a)
    np.testing.assert_allclose(rec.value(a), c, rtol=1e-13, atol=1e-14)
    other = np.triu(c, 1) if lower else np.tril(c, -1)
    np.testing.assert_array_equal(other, np.triu(a, 1) if lower else np.tril(a, -1))
    seen = []
    jittape.grad(lambda a: (seen.append(sl.cho_factor(a, lower=lower)[1]), a[0, 0])[1])(a)
    assert seen == [flag]
    _every_mode(_scalar(lambda a: sl.cho_factor(a, lower=lower)[0]), a, tmp_path)


@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("bshape", [(4,), (4, 2)], ids=str)
def test_cho_solve_reads_the_lower_side_triangle_only(lower, bshape, tmp_path):
    a = _spd(4)
    c = sl.cho_factor(a, lower=lower)[0] + (np.triu if lower else np.tril)(R(4, 4), 1 if
                                                                              lower else -1)
    b = R(*bshape)
    np.testing.assert_allclose(sl.cho_solve((c, lower), b), np.linalg.solve(a, b),
                               rtol=1e-12)  # (SciPy ignores the other triangle)

    def f(x):
        return _scalar(lambda c, b: sl.cho_solve((c, lower), b))(x[:16].reshape(4, 4),
                                                                 x[16:].reshape(bshape))
    x = np.concatenate([c.ravel(), b.ravel()])
    gc = jittape.grad(f)(x)[:16].reshape(4, 4)
    assert np.all((np.triu(gc, 1) if lower else np.tril(gc, -1)) == 0.0)
    _every_mode(f, x, tmp_path)


TRANS = [0, 1, 2, "N", "T", "C"]


@pytest.mark.parametrize("trans", TRANS, ids=str)
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular_every_mode(trans, lower, unit, tmp_path):
    a = R(3, 3) + 4 * np.eye(3)  # both triangles set: only one is read
    b = R(3, 2)

    def g(a, b):
        return sl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit)

    def f(x):
        return _scalar(g)(x[:9].reshape(3, 3), x[9:].reshape(3, 2))
    x = np.concatenate([a.ravel(), b.ravel()])
    np.testing.assert_allclose(jittape.record(lambda a: g(a, b), a).value(a), g(a, b),
                               rtol=1e-13, atol=1e-14)
    ga = jittape.grad(f)(x)[:9].reshape(3, 3)
    unread = np.triu(ga, 1 - unit) if lower else np.tril(ga, unit - 1)
    assert np.all(unread == 0.0)
    _every_mode(f, x, tmp_path)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)], ids=str)
def test_lu_factor_every_mode(shape, tmp_path):
    a = _pivoted(*shape)
    lu, piv = sl.lu_factor(a)
    assert np.any(piv != np.arange(piv.size))  # pivots
    tape = jittape.record(lambda a: sl.lu_factor(a)[0], a)
    np.testing.assert_allclose(tape.value(a), lu, rtol=1e-12, atol=1e-14)
    seen = []
    jittape.grad(lambda a: (seen.append(sl.lu_factor(a)[1]), a[0, 0])[1])(a)
    np.testing.assert_array_equal(seen[0], piv)
    assert seen[0].dtype == piv.dtype
    _every_mode(_scalar(lambda a: sl.lu_factor(a)[0]), a, tmp_path)


@pytest.mark.parametrize("trans", [0, 1, 2])
@pytest.mark.parametrize("bshape", [(4,), (4, 3)], ids=str)
def test_lu_solve_every_mode(trans, bshape, tmp_path):
    a, b = _pivoted(4, 4), R(*bshape)

    def f(x):
        a, b = x[:16].reshape(4, 4), x[16:].reshape(bshape)
        return _scalar(lambda a, b: sl.lu_solve(sl.lu_factor(a), b, trans=trans))(a, b)
    want = np.linalg.solve(a.T if trans else a, b)
    np.testing.assert_allclose(sl.lu_solve(sl.lu_factor(a), b, trans=trans), want,
                               rtol=1e-12)
    _every_mode(f, np.concatenate([a.ravel(), b.ravel()]), tmp_path)
    lu, piv = sl.lu_factor(a)  # a constant factorization, b active
    _every_mode(_scalar(lambda b: sl.lu_solve((lu, piv), b, trans=trans)), b, tmp_path)


def test_lu_pivots_are_guarded():
    """A replay at values that LAPACK pivots otherwise fails its guard (ties included:
    LAPACK takes the first largest magnitude in its current row order); taped records again."""
    m = np.array([[1.0, 0.0, 3.0], [2.0, 1.0, 1.0], [-2.0, 4.0, 1.0]])
    f = _scalar(lambda a: sl.lu_factor(a)[0])
    tape = jittape.record(f, m)
    assert tape.value(m * 1.5) == pytest.approx(f(m * 1.5), rel=1e-13)  # same pivots
    for i, j, v in [(0, 0, 3.0),  # row 0 now largest
                    (0, 0, 2.0),  # a tie with the pivot row 1, which LAPACK sees later
                    (2, 0, -2.5)]:  # row 2 largest
        other = m.copy()
        other[i, j] = v
        assert not np.array_equal(sl.lu_factor(other)[1], sl.lu_factor(m)[1])
        with pytest.raises(jittape.GuardFailure):
            tape.value(other)
        taped = jittape.taped(f)
        taped(m)
        assert taped(other) == pytest.approx(f(other), rel=1e-13)


def test_batches_and_scipys_result_types():
    a = np.stack([_spd(3), _spd(3)])
    b = R(3)
    np.testing.assert_allclose(jittape.record(sl.cholesky, a).value(a), sl.cholesky(a),
                               rtol=1e-13)
    seen = []

    def f(a):
        r = sl.cho_factor(a, lower=True)
        seen.append(type(r))
        return np.sum(sl.cho_solve((r[0], True), b))
    jittape.grad(f)(a)
    assert seen == [type(sl.cho_factor(a, lower=True))] == [list]
    np.testing.assert_allclose(jittape.record(f, a).value(a), f(a), rtol=1e-13)
    m = np.stack([_pivoted(3, 3), _pivoted(3, 3)])
    g = _scalar(lambda m: sl.lu_solve(sl.lu_factor(m), b))
    assert type(sl.lu_factor(m)) is list
    np.testing.assert_allclose(jittape.record(g, m).value(m), g(m), rtol=1e-12)
    check_grads(g, (m,))
    rhs = R(2, 3, 2)
    t = _scalar(lambda a: sl.solve_triangular(a, rhs, lower=True))
    check_grads(t, (a,))


def test_closed_forms():
    a = _spd(4)
    inv = np.linalg.inv(a)
    # log det A = 2 sum log diag(chol): its gradient over the triangle read is A^-1, the
    # off-diagonal elements counted twice (they stand for both A_ij and A_ji)
    for lower, tri in ((False, np.triu), (True, np.tril)):
        g = jittape.grad(lambda a: 2 * np.sum(np.log(np.diag(sl.cholesky(a, lower=lower)))))(a)
        np.testing.assert_allclose(g, 2 * tri(inv) - np.diag(np.diag(inv)), rtol=1e-12)
    w, b = R(4), R(4)
    low = sl.cholesky(a, lower=True)
    np.testing.assert_allclose(jittape.grad(lambda b: w @ sl.cho_solve((low, True), b))(b),
                               inv @ w, rtol=1e-12)
    t = np.tril(R(4, 4)) + 4 * np.eye(4)
    x = np.linalg.solve(t, b)
    gt, gb = jittape.grad(lambda t, b: w @ sl.solve_triangular(t, b, lower=True),
                          (0, 1))(t, b)
    np.testing.assert_allclose(gb, np.linalg.solve(t.T, w), rtol=1e-12)
    np.testing.assert_allclose(gt, -np.tril(np.outer(np.linalg.solve(t.T, w), x)),
                               rtol=1e-12, atol=1e-15)
    # LU with fixed P: Ldot = L tril(L^-1 P E U^-1, -1), Udot = triu(L^-1 P E U^-1) U
    m, e = _pivoted(4, 4), R(4, 4)
    lu, piv = sl.lu_factor(m)
    lo, up = np.tril(lu, -1) + np.eye(4), np.triu(lu)
    p = np.eye(4)[_rows(piv, 4)]  # P A = A[rows]
    k = np.linalg.solve(lo, p @ e) @ np.linalg.inv(up)
    want = lo @ np.tril(k, -1) + np.triu(k) @ up
    np.testing.assert_allclose(jittape.jvp(lambda m: sl.lu_factor(m)[0], (m,), (e,))[1], want,
                               rtol=1e-10, atol=1e-12)
    # sqeuclidean: d/dx_i sum_{i<j} |x_i - x_j|^2 = 2 (n x_i - sum_j x_j)
    xs = R(5, 3)
    np.testing.assert_allclose(jittape.grad(lambda x: np.sum(D.pdist(x, "sqeuclidean")))(xs),
                               2 * (5 * xs - xs.sum(0)), rtol=1e-12)


def _rows(piv, n):
    order = np.arange(n)
    for k, p in enumerate(piv):
        order[k], order[p] = order[p], order[k]
    return order


def test_scipys_errors_and_plain_calls():
    with pytest.raises(np.linalg.LinAlgError, match="leading minor"):
        jittape.grad(lambda a: np.sum(sl.cholesky(a)))(-np.eye(2))
    with pytest.raises(ValueError, match="square"):
        jittape.grad(lambda a: np.sum(sl.cholesky(a)))(np.ones((2, 3)))
    with pytest.raises(ValueError, match="infs or NaNs"):
        jittape.grad(lambda a: np.sum(sl.cho_factor(a)[0]))(np.array([[1, np.inf], [0, 1]]))
    with pytest.raises(np.linalg.LinAlgError, match="diagonal 1"):
        jittape.grad(lambda a: np.sum(sl.solve_triangular(a, np.ones(2))))(
            np.array([[1.0, 2], [0, 0]]))
    with pytest.raises(jittape.NotDifferentiableError, match="piv"):
        jittape.grad(lambda p: np.sum(sl.lu_solve((np.eye(2), p), np.ones(2))))(np.zeros(2))
    for name in ("cholesky", "cho_factor", "cho_solve", "solve_triangular", "lu_factor",
                 "lu_solve"):
        w = getattr(sl, name)
        assert stand_ins._BY_ID[id(w.__wrapped_by_jittape__)][1] is w
    for name in ("pdist", "cdist", "squareform"):
        w = getattr(D, name)
        assert stand_ins._BY_ID[id(w.__wrapped_by_jittape__)][1] is w
    a = _spd(3)
    np.testing.assert_array_equal(sl.cholesky(a), sl.cholesky.__wrapped_by_jittape__(a))
    # keywords reach the wrappers too, the (matrix, flag) tuple included
    c = sl.cho_factor(a)
    g = jittape.grad(lambda b: np.sum(sl.cho_solve(c_and_lower=c, b=b)))(np.ones(3))
    np.testing.assert_allclose(g, np.linalg.solve(a, np.ones(3)), rtol=1e-12)


# --- scipy.spatial.distance ------------------------------------------------------------

METRICS = [("euclidean", {}), ("sqeuclidean", {}), ("cityblock", {}), ("chebyshev", {}),
           ("minkowski", {"p": 3}), ("minkowski", {"p": 1.5}), ("minkowski", {"p": 0.7}),
           ("minkowski", {"p": np.inf}), ("seuclidean", {}),
           ("seuclidean", {"V": np.array([0.5, 1.0, 2.0])}), ("cosine", {}),
           ("correlation", {}), ("mahalanobis", {}),
           ("mahalanobis", {"VI": np.array([[2.0, 0.3, 0], [0.3, 1, 0.1], [0, 0.1, 0.5]])}),
           ("canberra", {}), ("braycurtis", {}),
           ("euclidean", {"w": np.array([1.0, 0.5, 2.0])}),
           ("sqeuclidean", {"w": np.array([1.0, 0.5, 2.0])}),
           ("cityblock", {"w": np.array([1.0, 0.5, 2.0])}),
           ("chebyshev", {"w": np.array([1.0, 0.0, 2.0])}),
           ("minkowski", {"p": 3, "w": np.array([1.0, 0.5, 2.0])}),
           ("cosine", {"w": np.array([1.0, 0.5, 2.0])}),
           ("correlation", {"w": np.array([1.0, 0.5, 2.0])}),
           ("canberra", {"w": np.array([1.0, 0.5, 2.0])}),
           ("braycurtis", {"w": np.array([1.0, 0.5, 2.0])})]
IDS = [f"{m}-{','.join(kw)}" for m, kw in METRICS]
X6 = R(6, 3) + np.array([2.0, 0.0, -1.0])  # (off zero: canberra and braycurtis are smooth)
Y4 = R(4, 3) + np.array([2.0, 0.0, -1.0])


@pytest.mark.parametrize("metric, kw", METRICS, ids=IDS)
def test_pdist_every_mode(metric, kw, tmp_path):
    ref = D.pdist(X6, metric, **kw)
    got = jittape.record(lambda x: D.pdist(x, metric, **kw), X6).value(X6)
    assert got.shape == ref.shape == (15,) and got.dtype == ref.dtype
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-15)
    _every_mode(_scalar(lambda x: D.pdist(x, metric, **kw)), X6, tmp_path)


@pytest.mark.parametrize("metric, kw", METRICS, ids=IDS)
def test_cdist_every_mode(metric, kw, tmp_path):
    ref = D.cdist(X6, Y4, metric, **kw)
    got = jittape.record(lambda a, b: D.cdist(a, b, metric, **kw), X6, Y4,
                         argnums=(0, 1)).value(X6, Y4)
    assert got.shape == ref.shape == (6, 4)
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-15)

    def f(x):
        return _scalar(lambda a, b: D.cdist(a, b, metric, **kw))(x[:18].reshape(6, 3),
                                                                 x[18:].reshape(4, 3))
    _every_mode(f, np.concatenate([X6.ravel(), Y4.ravel()]), tmp_path)


@pytest.mark.parametrize("metric, key, value", [
    ("minkowski", "w", np.array([1.0, 0.5, 2.0])), ("seuclidean", "V", np.array([0.5, 1, 2])),
    ("mahalanobis", "VI", np.array([[2.0, 0.3, 0], [0.3, 1, 0.1], [0, 0.1, 0.5]])),
    ("canberra", "w", np.array([1.0, 0.5, 2.0]))])
def test_active_metric_parameters(metric, key, value, tmp_path):
    _every_mode(_scalar(lambda p: D.pdist(X6, metric, **{key: p})), value, tmp_path)
    _every_mode(_scalar(lambda p: D.cdist(X6, Y4, metric, **{key: p})), value, tmp_path)


@pytest.mark.parametrize("metric, kw", [("euclidean", {}), ("minkowski", {"p": 3}),
                                        ("minkowski", {"p": 1.5}), ("seuclidean", {}),
                                        ("mahalanobis", {}), ("cityblock", {}),
                                        ("sqeuclidean", {})], ids=str)
def test_zero_distances_have_gradient_zero_not_nan(metric, kw):
    """cdist(X, X)'s diagonal: 0, with derivative 0 (sqrt at 0 is not differentiated), so
    the gradient is that of the pairs i != j: twice pdist's."""
    x = R(8, 3)
    full = jittape.grad(lambda x: np.sum(D.cdist(x, x, metric, **kw)))(x)
    half = jittape.grad(lambda x: np.sum(D.pdist(x, metric, **kw)))(x)
    if metric not in ("seuclidean", "mahalanobis"):  # (their V, VI differ: 2n rows)
        np.testing.assert_allclose(full, 2 * half, rtol=1e-12, atol=1e-14)
    assert np.all(np.isfinite(full))
    v = np.cos(np.arange(x.size)).reshape(x.shape)
    assert np.all(np.isfinite(jittape.hvp(lambda x: np.sum(D.cdist(x, x, metric, **kw)))(x, v)))
    dup = np.concatenate([x[:3], x[:1]])  # equal rows in pdist
    assert np.all(np.isfinite(jittape.grad(lambda x: np.sum(D.pdist(x, metric, **kw)))(dup)))


def test_callable_metrics(tmp_path):
    def quartic(u, v):
        return np.sum((u - v) ** 4)
    _every_mode(_scalar(lambda x: D.pdist(x, quartic)), X6, tmp_path)
    np.testing.assert_allclose(jittape.record(lambda x: D.cdist(x, Y4, quartic), X6).value(X6),
                               D.cdist(X6, Y4, quartic), rtol=1e-13)
    _every_mode(_scalar(lambda x: D.cdist(x, Y4, quartic)), X6, tmp_path)
    # SciPy's own metric functions run vectorized
    _every_mode(_scalar(lambda x: D.pdist(x, D.cityblock)), X6, tmp_path)
    _every_mode(_scalar(lambda x: D.cdist(x, Y4, D.euclidean)), X6, tmp_path)


@pytest.mark.parametrize("direction", ["tomatrix", "tovector"])
def test_squareform_both_directions(direction, tmp_path):
    v = D.pdist(X6)
    if direction == "tomatrix":
        _every_mode(_scalar(lambda v: D.squareform(v)), v, tmp_path)
        got = jittape.record(D.squareform, v).value(v)
        np.testing.assert_array_equal(got, D.squareform(v))
        assert got.shape == (6, 6)
        return
    m = D.squareform(v)
    # (checks=False: the differences step off symmetric matrices)
    _every_mode(_scalar(lambda m: D.squareform(m, force="tovector", checks=False)), m,
                tmp_path)
    g = jittape.grad(_scalar(D.squareform))(m)
    assert np.all(np.tril(g) == 0.0)  # the upper triangle is read
    np.testing.assert_array_equal(jittape.record(D.squareform, m).value(m), v)


def test_squareform_checks_and_edges():
    m = D.squareform(D.pdist(X6))
    f = _scalar(D.squareform)
    bad = m.copy()
    bad[0, 1] += 1.0
    with pytest.raises(ValueError, match="symmetric"):
        jittape.grad(f)(bad)
    with pytest.raises(ValueError, match="diagonal"):
        jittape.grad(f)(m + np.eye(6))
    jittape.grad(lambda m: np.sum(D.squareform(m, checks=False)))(bad)
    tape = jittape.record(f, m)
    with pytest.raises(jittape.GuardFailure):  # the checks are guards
        tape.value(bad)
    taped = jittape.taped(f)
    taped(m)
    with pytest.raises(ValueError, match="symmetric"):
        taped(bad)
    with pytest.raises(ValueError, match="binomial"):
        jittape.grad(lambda v: np.sum(D.squareform(v)))(np.ones(4))
    assert jittape.grad(lambda v: np.sum(D.squareform(v)) + np.sum(v))(np.zeros(0)).shape == (0,)
    assert jittape.grad(lambda x: np.sum(D.pdist(x)) + np.sum(x))(R(1, 3)).shape == (1, 3)


def test_distance_errors_name_the_function_and_metric():
    with pytest.raises(jittape.NotDifferentiableError,
                       match=r"scipy\.spatial\.distance\.pdist\(metric='hamming'\)"):
        jittape.grad(lambda x: np.sum(D.pdist(x, "hamming")))(X6)
    with pytest.raises(jittape.NotDifferentiableError,
                       match=r"scipy\.spatial\.distance\.cdist\(metric='jensenshannon'\)"):
        jittape.grad(lambda x: np.sum(D.cdist(x, x, "jensenshannon")))(np.abs(X6))
    with pytest.raises(ValueError, match="Unknown Distance Metric"):
        jittape.grad(lambda x: np.sum(D.pdist(x, "nope")))(X6)
    with pytest.raises(ValueError, match="non-negative"):
        jittape.grad(lambda x: np.sum(D.pdist(x, "cityblock", w=-np.ones(3))))(X6)
    with pytest.raises(jittape.NotDifferentiableError, match="out="):
        jittape.grad(lambda x: np.sum(D.pdist(x, out=np.zeros(15))))(X6)
    with pytest.raises(ValueError, match="2-dimensional"):
        jittape.grad(lambda x: np.sum(D.pdist(x)))(X6[0])


# --- import order ------------------------------------------------------------------------

_AFTER = """
import sys, numpy as np, jittape
assert "scipy.spatial" not in sys.modules and "scipy.linalg" not in sys.modules
def f(x):  # scipy.spatial.distance first imported inside the recording
    from scipy.spatial.distance import pdist
    return np.sum(pdist(x.reshape(3, 2), "sqeuclidean"))
x = np.arange(6.0) ** 2
print(repr(jittape.grad(f)(x).tolist()))
from scipy.linalg import cholesky, cho_solve, solve_triangular  # bound after jittape
from scipy.spatial.distance import cdist, squareform
a = np.array([[4.0, 1.0], [1.0, 3.0]])
def g(a):
    low = cholesky(a, lower=True)
    return (np.sum(cho_solve((low, True), np.ones(2))) + np.sum(solve_triangular(low, a))
            + np.sum(squareform(cdist(a, a + 1.0) * (1 - np.eye(2)) + 0.0, checks=False)))
print(repr(jittape.grad(g)(a).ravel().tolist()))
"""

_BEFORE = """
import numpy as np
from scipy.linalg import cholesky  # bound before jittape: SciPy's own function
import jittape, scipy.linalg
a = np.array([[4.0, 1.0], [1.0, 3.0]])
print(jittape.grad(lambda a: np.sum(scipy.linalg.cholesky(a)))(a).ravel().tolist())
print(jittape.grad(lambda a: np.sum(cholesky(a)))(a).ravel().tolist())
"""


def _run(program):
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=600, env=dict(os.environ, JITTAPE_QUIET="1"),
                          cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_names_bound_after_jittape_and_modules_imported_in_a_recording():
    p = _run(_AFTER)
    assert p.returncode == 0, p.stderr
    first, second = (np.array(eval(s)) for s in p.stdout.splitlines()[-2:])
    x = (np.arange(6.0) ** 2).reshape(3, 2)
    np.testing.assert_allclose(first.reshape(3, 2), 2 * (3 * x - x.sum(0)), rtol=1e-12)
    a = np.array([[4.0, 1.0], [1.0, 3.0]])

    def g(a):
        low = sl.cholesky(a, lower=True)
        return (np.sum(sl.cho_solve((low, True), np.ones(2))) + np.sum(
            sl.solve_triangular(low, a)) + np.sum(D.squareform(
                D.cdist(a, a + 1.0) * (1 - np.eye(2)) + 0.0, checks=False)))
    np.testing.assert_allclose(second, jittape.grad(g)(a).ravel(), rtol=1e-12)


def test_names_bound_before_jittape_are_differentiated():
    """``from scipy.linalg import cholesky`` before ``import jittape`` (as sklearn's GP
    module does when imported first) is rebound to jittape's wrapper while recording
    (jittape/numpy/stand_ins.py)."""
    p = _run(_BEFORE)
    assert p.returncode == 0, p.stderr
    a = np.array([[4.0, 1.0], [1.0, 3.0]])
    want = jittape.grad(lambda a: np.sum(sl.cholesky(a)))(a).ravel()
    for line in p.stdout.splitlines()[-2:]:
        np.testing.assert_allclose(eval(line), want, rtol=1e-12)


# --- scikit-learn's Gaussian process -------------------------------------------------------

def _kernels():
    k = pytest.importorskip("sklearn.gaussian_process.kernels")
    return {"rbf+white": k.RBF() + k.WhiteKernel(),
            "matern0.5": k.Matern(nu=0.5) + k.WhiteKernel(),
            "matern1.5": k.Matern(nu=1.5) + k.WhiteKernel(),
            "matern2.5": k.Matern(nu=2.5) + k.WhiteKernel(),
            "rationalquadratic": k.RationalQuadratic() + k.WhiteKernel(),
            "expsinesquared+white": k.ExpSineSquared() + k.WhiteKernel(),
            "dotproduct+white": k.DotProduct() + k.WhiteKernel(),
            "rbf*dotproduct+white": k.RBF() * k.DotProduct() + k.WhiteKernel(),
            "constant*rbf+white": k.ConstantKernel() * k.RBF([1.0, 2.0]) + k.WhiteKernel(),
            "constant+rbf": k.ConstantKernel() + k.RBF()}


GP_CASES = ["rbf+white", "matern0.5", "matern1.5", "matern2.5", "rationalquadratic",
            "expsinesquared+white", "dotproduct+white", "rbf*dotproduct+white",
            "constant*rbf+white", "constant+rbf"]


def _gp_check(name):
    gp = pytest.importorskip("sklearn.gaussian_process")
    rng = np.random.default_rng(3)
    x = rng.normal(size=(10, 2))
    y = np.sin(x[:, 0]) + 0.1 * rng.normal(size=10)
    gpr = gp.GaussianProcessRegressor(kernel=_kernels()[name]).fit(x, y)
    theta = gpr.kernel_.theta + 0.3 * np.cos(np.arange(gpr.kernel_.theta.size))
    value, want = gpr.log_marginal_likelihood(theta, eval_gradient=True)
    got_value, got = jittape.value_and_grad(gpr.log_marginal_likelihood)(theta)
    assert got_value == pytest.approx(value, rel=1e-12)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("name", GP_CASES)
def test_gaussian_process_log_marginal_likelihood_gradient(name):
    """scikit-learn's own code (kernels' np.fill_diagonal and np.full, pdist, cdist,
    squareform, cholesky, cho_solve, solve_triangular, K[np.diag_indices_from(K)] += alpha)
    against its analytic gradient (eval_gradient=True)."""
    _gp_check(name)

"""Sparse Jacobians: patterns propagated over the tape, column coloring, compressed sweeps.

A pattern that misses a nonzero is a silently wrong Jacobian, so every op's test spec
(``test_ops.SPECS``) is checked: at random points the dense Jacobian's nonzeros must lie
inside the pattern, and the sparse Jacobian must equal the dense one.
"""

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp

import jittape
from jittape.derivatives.coloring import color_columns
from jittape._base.errors import GuardFailure
from jittape.ops import OPS

from test_ops import SPECS

pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")


def broyden(x):
    """Broyden tridiagonal residuals (Moré, Garbow & Hillstrom 1981, problem 30)."""
    r = (3.0 - 2.0 * x) * x + 1.0
    r[1:] -= x[:-1]
    r[:-1] -= 2.0 * x[1:]
    return r


def broyden_jac(x):
    n = x.size
    return sp.diags([-np.ones(n - 1), 3.0 - 4.0 * x, -2.0 * np.ones(n - 1)], [-1, 0, 1],
                    format="csr")


def check_against_dense(f, x, points=()):
    """Record f at x; at x and each point the dense Jacobian's nonzeros lie in the
    pattern and the sparse Jacobian equals the dense one. Returns the tape."""
    tape = jittape.record(f, x)
    pattern = tape.jacobian_sparsity()
    assert pattern.dtype == bool and sp.issparse(pattern)
    for p in (x, *points):
        try:
            dense = tape.jacobian(p).reshape(pattern.shape)
        except GuardFailure:
            continue  # the recorded control flow does not hold there
        missing = (dense != 0) & ~pattern.toarray()
        assert not missing.any(), f"pattern misses {np.argwhere(missing)[:5]}"
        sparse = tape.sparse_jacobian(p)
        assert sparse.format == "csr" and sparse.dtype == np.float64
        np.testing.assert_allclose(sparse.toarray(), dense, rtol=1e-12, atol=1e-14)
    return tape


def _flat(spec):
    sizes = [int(np.prod(s)) for s in spec.shapes]
    cuts = np.cumsum([0] + sizes)

    def f(x):
        args = [x[a:b].reshape(s) for a, b, s in zip(cuts[:-1], cuts[1:], spec.shapes)]
        return np.ravel(spec.fn(*args)) * 1.0
    return f, int(cuts[-1])


def flat_spec_points(spec, rng):
    """The spec's function of one flat input and three random points in its domain; skips
    the test if the spec's function cannot be written so, or has no float output."""
    f, n = _flat(spec)
    pts = [rng.uniform(spec.lo, spec.hi, n) for _ in range(3)]
    try:
        out = f(pts[0])
    except Exception:  # noqa: BLE001 - not a function of one flat input
        pytest.skip("not expressible on one flat input")
    if not np.issubdtype(np.asarray(out).dtype, np.floating) or n == 0:
        pytest.skip("no float output")
    return f, pts


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_pattern_of_every_op_spec_holds_the_dense_nonzeros(spec):
    f, pts = flat_spec_points(spec, np.random.default_rng(0))
    check_against_dense(f, pts[0], pts[1:])


def test_structured_ops_with_pattern_rules():
    names = {op.name for op in OPS if op.pattern is not None}
    assert {"slice", "gather", "concat", "sum", "cumsum", "matmul", "max", "min",
            "sort"} <= names


def test_banded_tridiagonal_three_colors_and_exact():
    n = 1000
    x = np.linspace(-1.0, 1.0, n)
    tape = check_against_dense(broyden, x, [x * 0.5 + 0.1])
    pattern = tape.jacobian_sparsity()
    assert pattern.nnz == 3 * n - 2
    assert tape.jacobian_sparsity() is pattern  # cached on the tape
    jac = tape.sparse_jacobian(x)
    assert tape._jac_colors.max() + 1 == 3
    np.testing.assert_allclose(jac.toarray(), broyden_jac(x).toarray(), rtol=0, atol=1e-15)
    np.testing.assert_allclose(jittape.sparse_jacobian(broyden)(x).toarray(),
                               broyden_jac(x).toarray(), atol=1e-15)


def test_block_diagonal_matmul_and_reductions():
    blocks = np.arange(12.0).reshape(4, 3) / 7.0

    def f(x):
        b = x.reshape(4, 3)
        return np.concatenate([np.sum(b ** 2, axis=1), (b * blocks).max(axis=1),
                               np.cumsum(b, axis=1).ravel(), np.prod(b, axis=1)])
    x = np.random.default_rng(1).uniform(-1, 1, 12)
    tape = check_against_dense(f, x, [x[::-1].copy()])
    dense = tape.jacobian_sparsity().toarray()
    assert dense[:4].sum() == 12 and dense[4:8].sum() == 12  # one block per row


def test_gather_slice_heavy():
    idx = np.random.default_rng(2).permutation(40)

    def f(x):
        y = x[idx] * x[::-1]
        z = np.stack([y[::2], np.sin(y[1::2])], axis=1)
        return np.concatenate([z.T.ravel(), np.sort(x.reshape(8, 5), axis=1)[:, 0],
                               x[3] * x[5:9]])
    x = np.random.default_rng(3).uniform(-1, 1, 40)
    tape = check_against_dense(f, x, [np.cos(x)])
    assert tape.jacobian_sparsity().nnz < 0.15 * 40 * tape.jacobian_sparsity().shape[0]


def test_matmul_with_constant_banded_matrix_keeps_its_band():
    n = 50
    lap = np.diag(-2.0 * np.ones(n)) + np.diag(np.ones(n - 1), 1) + np.diag(np.ones(n - 1), -1)

    def f(x):
        m = x.reshape(10, 5)
        return np.concatenate([lap @ x + x ** 3, (m @ m.T).ravel(), m.T @ m[:, 0]])
    x = np.random.default_rng(4).uniform(-1, 1, n)
    tape = check_against_dense(f, x, [x + 0.3])
    assert tape.jacobian_sparsity()[:n].nnz == 3 * n - 2


def test_op_without_pattern_rule_is_dense_and_exact():
    assert OPS[jittape.ops.codes.SOLVE].pattern is None
    a = np.eye(4) * 3.0 + 0.1

    def f(x):
        return np.concatenate([x[:4] ** 2, np.linalg.solve(a + np.diag(x[4:]), x[:4])])
    x = np.random.default_rng(5).uniform(0.5, 1, 8)
    tape = check_against_dense(f, x, [x * 1.1])
    dense = tape.jacobian_sparsity().toarray()
    assert dense[4:].all() and dense[:4].sum() == 4


def test_no_dependence_and_scalar_output():
    tape = jittape.record(lambda x: np.zeros(3) + 1.0, np.ones(4))
    assert tape.jacobian_sparsity().shape == (3, 4) and tape.jacobian_sparsity().nnz == 0
    assert tape.sparse_jacobian(np.ones(4)).nnz == 0
    check_against_dense(lambda x: np.sum(x[:2] ** 2), np.ones(5))


def test_coloring_is_structurally_orthogonal():
    rng = np.random.default_rng(6)
    p = sp.random_array((60, 80), density=0.05, rng=rng, format="csr") != 0
    colors = color_columns(p)
    dense = p.toarray()
    for c in range(colors.max() + 1):
        assert (dense[:, colors == c].sum(axis=1) <= 1).all()
    assert (color_columns(p, max_graph=0) == np.arange(80)).all()


def _greedy_over_graph(p):
    """The coloring as first written: greedy over the formed graph ``P^T P``."""
    p = sp.csr_array(p, dtype=bool)
    g = sp.csr_array(p.T @ p)
    colors = np.full(p.shape[1], -1, np.int64)
    for j in range(p.shape[1]):
        nb = colors[g.indices[g.indptr[j]:g.indptr[j + 1]]]
        used = np.zeros(colors.max() + 2, bool)
        used[nb[nb >= 0]] = True
        colors[j] = int(np.argmin(used))
    return colors


def test_coloring_kernel_equals_greedy_over_the_intersection_graph():
    rng = np.random.default_rng(7)
    for _ in range(25):
        m, n = rng.integers(1, 70, 2)
        p = sp.random_array((m, n), density=rng.uniform(0.0, 0.4), rng=rng, format="csr") != 0
        np.testing.assert_array_equal(color_columns(p), _greedy_over_graph(p))
    assert (color_columns(sp.csr_array(np.ones((2, 5)))) == np.arange(5)).all()  # full row
    assert color_columns(sp.csr_array((0, 4), dtype=bool)).tolist() == [0, 0, 0, 0]


def test_many_short_rows_are_compressed():
    """Bundle-adjustment-like rows (an 8-column camera block, a 3-column point block, a
    weight): 400 000 rows of 12 give sum nnz(row)^2 = 57.6e6, which the first version's
    bound (5e7 graph entries, meant for long rows) answered with one color per column."""
    obs = np.arange(200_000)
    cams, pts = obs % 50, obs % 9001
    cols = np.concatenate([8 * cams[:, None] + np.arange(8),
                           400 + 3 * pts[:, None] + np.arange(3),
                           (400 + 3 * 9001 + obs)[:, None]], axis=1)
    cols = np.repeat(cols, 2, axis=0)  # two residuals per observation
    p = sp.csr_array((np.ones(cols.size, bool), cols.ravel(), np.arange(0, cols.size + 1, 12)),
                     shape=(cols.shape[0], 400 + 3 * 9001 + obs.size))
    colors = color_columns(p)
    assert colors.max() + 1 == 12
    per_row = np.sort(colors[cols], axis=1)
    assert (np.diff(per_row, axis=1) > 0).all()  # structurally orthogonal


def test_several_inputs_refused():
    tape = jittape.record(lambda x, y: x * y, np.ones(2), np.ones(2), argnums=(0, 1))
    with pytest.raises(TypeError, match="sparse_jacobian"):
        tape.sparse_jacobian(np.ones(2), np.ones(2))


def test_least_squares_sparse_matches_scipy_with_analytic_jacobian():
    n = 1000
    x0 = -np.ones(n)
    ref = so.least_squares(broyden, x0, jac=broyden_jac, tr_solver="lsmr")
    res = jittape.least_squares(broyden, x0)
    assert sp.issparse(res.jac)
    np.testing.assert_allclose(res.x, ref.x, atol=1e-8)
    assert res.cost < 1e-12 and res.nfev == ref.nfev
    dense = jittape.least_squares(broyden, x0[:50], jac_sparsity=False)
    assert not sp.issparse(dense.jac) and dense.cost < 1e-12
    small = jittape.least_squares(broyden, x0[:50])  # n <= 100: dense
    assert not sp.issparse(small.jac)


def test_least_squares_jac_sparsity_errors():
    with pytest.raises(ValueError, match="jac_sparsity"):
        jittape.least_squares(broyden, np.ones(5), jac_sparsity=np.eye(5))
    with pytest.raises(ValueError, match="lsmr"):
        jittape.least_squares(broyden, np.ones(5), jac_sparsity=True, method="lm")

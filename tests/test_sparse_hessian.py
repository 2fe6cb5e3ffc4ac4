"""Sparse Hessians: Hessian patterns propagated over the tape, star coloring, compressed HVPs.

A pattern that misses a nonzero is a silently wrong Hessian, so every op's test spec
(``test_ops.SPECS``) is checked: at random points the dense Hessian of a random weighted sum
of the outputs must have its nonzeros inside the pattern, agree with central differences of
the weighted gradient, be symmetric, and equal the sparse Hessian.
"""

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp

import jittape
from jittape.sweeps.codegen import has_second_order
from jittape.derivatives.coloring import color_columns, star_coloring, symmetric_recovery
from jittape._base.errors import GuardFailure
from jittape.ops import OPS

from test_ops import SPECS
from test_second_order import op_without_second_order_rule
from test_sparse_jacobian import flat_spec_points

pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")


def _weighted_gradient(tape, x, w):
    return np.ravel(tape.vjp((x,), w.reshape(tape.out_shape))[1])


def check_hessian(tape, x, w=None, fd=True):
    """At ``x``: the dense Hessian (of ``w . f``) is symmetric, matches central differences
    of the gradient, has its nonzeros inside the pattern and equals the sparse Hessian."""
    pattern = tape.hessian_sparsity()
    assert pattern.dtype == bool and sp.issparse(pattern)
    assert (pattern != pattern.T).nnz == 0, "pattern not symmetric"
    n = x.size
    dense = np.reshape(tape.hessian(x, weights=w), (n, n))
    np.testing.assert_allclose(dense, dense.T, rtol=1e-9, atol=1e-9)
    if w is not None and fd:  # (not for stop_gradient: FD sees what it hides)
        h, e = 1e-5, np.random.default_rng(5).standard_normal(n)
        fd = (_weighted_gradient(tape, x + h * e, w) -
              _weighted_gradient(tape, x - h * e, w)) / (2 * h)
        np.testing.assert_allclose(dense @ e, fd, rtol=1e-5, atol=1e-5 * (1 + abs(fd).max()))
    missing = (dense != 0) & ~pattern.toarray()
    assert not missing.any(), f"pattern misses {np.argwhere(missing)[:5]}"
    sparse = tape.sparse_hessian(x, weights=w)
    assert sparse.format == "csr" and sparse.dtype == np.float64
    np.testing.assert_allclose(sparse.toarray(), dense, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_hessian_pattern_of_every_op_spec_holds_the_dense_nonzeros(spec):
    rng = np.random.default_rng(0)
    f, pts = flat_spec_points(spec, rng)
    tape = jittape.record(f, pts[0])
    w = rng.standard_normal(tape.out_shape)
    if not all(has_second_order(OPS[c]) for c in set(tape.arrays.op.tolist())):
        with pytest.raises(jittape.NotDifferentiableError, match="second-order"):
            tape.sparse_hessian(pts[0], weights=w)
        return
    for p in pts:
        try:
            check_hessian(tape, p, w, fd=spec.hand is None)
        except GuardFailure:
            continue  # the recorded control flow does not hold there


def rosen(x):
    """scipy.optimize.rosen's formula (it calls np.asarray on its argument)."""
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def chained(x):
    """A chained Rosenbrock plus a pentadiagonal coupling: a Hessian of half-band 2."""
    return (np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
            + np.sum(np.cos(x[2:] * x[:-2])))


def test_rosenbrock_tridiagonal_three_colors_and_exact():
    n = 1000
    x = np.linspace(-1.2, 1.1, n)
    tape = jittape.record(rosen, x)
    pattern = tape.hessian_sparsity()
    assert pattern.nnz == 3 * n - 2
    assert tape.hessian_sparsity() is pattern  # cached on the tape
    for p in (x, np.cos(x)):
        np.testing.assert_allclose(tape.sparse_hessian(p).toarray(), so.rosen_hess(p),
                                   rtol=1e-13, atol=1e-10)
    assert tape._hess_colors[0].max() + 1 == 3
    np.testing.assert_allclose(jittape.sparse_hessian(rosen)(x).toarray(),
                               so.rosen_hess(x), rtol=1e-13, atol=1e-10)


def test_pentadiagonal_and_dense_agree():
    x = np.random.default_rng(1).uniform(-1, 1, 40)
    tape = jittape.record(chained, x)
    check_hessian(tape, x)
    assert tape.hessian_sparsity().nnz == 5 * 40 - 6
    assert tape._hess_colors[0].max() + 1 == 5


def test_arrowhead_needs_few_colors():
    def f(x):
        return x[0] * np.sum(x[1:] ** 2) + np.sum(np.sin(x))
    x = np.linspace(0.1, 1.0, 60)
    tape = jittape.record(f, x)
    check_hessian(tape, x)
    assert tape.hessian_sparsity().nnz == 60 + 2 * 59
    # a distance-2 (Jacobian) coloring needs one color per column here; a star coloring 2
    assert tape._hess_colors[0].max() + 1 == 2
    assert color_columns(tape.hessian_sparsity()).max() + 1 == 60


def test_bilinear_matmul_pairs_only_across_operands():
    n = 30
    lap = np.diag(-2.0 * np.ones(n)) + np.diag(np.ones(n - 1), 1) + np.diag(np.ones(n - 1), -1)

    def f(x):
        return x @ (lap @ x) + np.sum(x[:10].reshape(2, 5) @ x[10:20].reshape(5, 2))
    x = np.random.default_rng(2).uniform(-1, 1, n)
    tape = jittape.record(f, x)
    check_hessian(tape, x)
    dense = tape.hessian(x)
    np.testing.assert_allclose(dense[20:, 20:], (lap + lap.T)[20:, 20:], atol=1e-13)
    # exact: no pair within one factor of a product (a constant factor adds none)
    np.testing.assert_array_equal(tape.hessian_sparsity().toarray(), dense != 0)


def test_weighted_hessian_of_a_vector_function():
    def c(x):
        return np.stack([x[0] * x[1], np.sum(x ** 2), np.exp(x[2])])
    x, w = np.array([0.3, -0.5, 0.7]), np.array([2.0, -1.0, 0.5])
    tape = jittape.record(c, x)
    expected = np.array([[-2.0, 2.0, 0.0], [2.0, -2.0, 0.0], [0.0, 0.0, -2.0 + 0.5 * np.exp(0.7)]])
    np.testing.assert_allclose(tape.hessian(x, weights=w), expected, rtol=1e-14)
    np.testing.assert_allclose(tape.sparse_hessian(x, weights=w).toarray(), expected, rtol=1e-14)
    check_hessian(tape, x, w)


def test_errors():
    tape = jittape.record(lambda x: x ** 2, np.ones(3))
    with pytest.raises(jittape.NonScalarOutputError):
        tape.sparse_hessian(np.ones(3))
    with pytest.raises(ValueError, match="weights have shape"):
        tape.hessian(np.ones(3), weights=np.ones(2))
    with pytest.raises(jittape.NonScalarOutputError):
        jittape.hessian(lambda x: x ** 2)(np.ones(3))
    with pytest.raises(TypeError, match="one argument index"):
        jittape.sparse_hessian(lambda x, y: np.sum(x * y), argnums=(0, 1))
    name, f = op_without_second_order_rule()
    tape = jittape.record(f, np.arange(9.0) ** 2 / 7 + np.eye(3).ravel())
    with pytest.raises(jittape.NotDifferentiableError, match=f"'{name}'"):
        tape.sparse_hessian(np.arange(9.0) ** 2 / 7 + np.eye(3).ravel())


def test_float_argument_and_no_dependence():
    assert jittape.hessian(lambda x: x ** 3)(2.0) == pytest.approx(12.0)
    tape = jittape.record(lambda x: 3.0 + 0.0 * np.sum(x > 0), np.ones(4))
    assert tape.hessian_sparsity().nnz == 0
    assert tape.sparse_hessian(np.ones(4)).nnz == 0


@pytest.mark.parametrize("seed", range(10))
def test_star_coloring_allows_direct_recovery(seed):
    r = sp.random(80, 80, density=0.04, random_state=seed)
    pattern = sp.csr_array((r + r.T + sp.eye(80)) != 0)
    colors = star_coloring(pattern)
    rows, cols = symmetric_recovery(pattern, colors)
    h = sp.csr_array(pattern, dtype=float)
    h.data = np.random.default_rng(seed).standard_normal(h.nnz)
    h = (h + h.T) * 0.5
    ncolors = colors.max() + 1
    seeds = np.zeros((80, ncolors))
    seeds[np.arange(80), colors] = 1.0
    b = h @ seeds
    np.testing.assert_allclose(b[rows, cols], h[pattern.nonzero()].ravel(), rtol=1e-14)
    assert ncolors < color_columns(pattern).max() + 1  # fewer than a distance-2 coloring

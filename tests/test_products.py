"""The tape compiler's row-summed adjoints of products (jittape.compiler.products): in
``(C - S) @ W`` with S a view broadcast along the rows, the kernel sums the product's
adjoint over the rows before multiplying, and its gradients equal the interpreter's within
reassociation and central differences."""

import numpy as np
import pytest

import jittape
from jittape.compiler.kernel import kernel_source
from jittape.testing import check_gradient

RNG = np.random.default_rng(7)
K, N, D = 3, 7, 4
X = RNG.normal(size=(N, D))
W = RNG.normal(size=(K, D, D))


def centred(theta):  # GMM's quadratic forms: mu_k broadcast along the points, minus
    mu, w = theta[:K * D].reshape(K, D), theta[K * D:].reshape(K, D, D)
    return np.sum(np.tanh((X[None] - mu[:, None, :]) @ w) ** 2)


X_LONG = RNG.normal(size=(1100, D))  # 1100 x 4 adjoints: the row sums are a BLAS gemv


def centred_long(theta):
    mu, w = theta[:K * D].reshape(K, D), theta[K * D:].reshape(K, D, D)
    return np.sum(np.tanh(0.3 * ((X_LONG[None] - mu[:, None, :]) @ w)) ** 2)


def shifted(theta):  # plus, the view first, one matrix, a matrix-vector product
    mu, w = theta[:D], theta[D:D + D * D].reshape(D, D)
    return np.sum(np.sin((mu + X) @ w)) + np.sum(np.cos((mu[None, :] - X) @ w[:, 0]))


def gathered(theta):  # the broadcast as an index array (a gather)
    mu, w = theta[:D], theta[D:D + D * D].reshape(D, D)
    return np.sum(np.exp(0.1 * ((2.0 * X - mu[np.tile(np.arange(D), (N, 1))]) @ w)))


def active_both(theta):  # the other operand is active: the full adjoint is needed
    mu, w = theta[:D], theta[D:D + D * D].reshape(D, D)
    return np.sum(((theta[-1] * X - mu) @ w) ** 2)


def per_row(theta):  # a different mu per row: no broadcast, nothing to sum first
    mu, w = theta[:N * D].reshape(N, D), theta[N * D:N * D + D * D].reshape(D, D)
    return np.sum(((X - mu) @ w) ** 2)


def used_twice(theta):  # the difference feeds the product and a sum: the full adjoint
    mu, w = theta[:D], theta[D:D + D * D].reshape(D, D)
    c = X - mu
    return np.sum((c @ w) ** 2) + np.sum(c ** 3)


CASES = [(centred, K * D + K * D * D, 1), (centred_long, K * D + K * D * D, 1),
         (shifted, D + D * D, 2), (gathered, D + D * D, 1),
         (active_both, D + D * D + 1, 0), (per_row, N * D + D * D, 0),
         (used_twice, D + D * D, 0)]


# one tape (one compile) holds the cases that sum first, each on its own slice of the
# inputs (the others compile as every product does)
SUMMED = [c for c in CASES if c[2]]
CUTS = np.cumsum([0] + [n for _, n, _ in SUMMED])


def every_case(theta):
    return sum(f(theta[a:b]) for (f, _, _), a, b in zip(SUMMED, CUTS[:-1], CUTS[1:]))


@pytest.mark.parametrize("case", range(len(CASES)), ids=[c[0].__name__ for c in CASES])
def test_which_products_sum_the_adjoint_first(case):
    f, n, summed = CASES[case]
    assert kernel_source(jittape.record(f, RNG.normal(size=n))).count(
        "matmul_row_reverse(") == summed


def test_row_broadcast_operands_sum_the_adjoint_first():
    """The compiled tape against the interpreter and central differences (``centred`` is
    GMM's form; compiling GMM itself as well cost the suite 10 s more)."""
    theta = RNG.normal(size=CUTS[-1]) * 0.5
    tape = jittape.record(every_case, theta)
    compiled = jittape.record(every_case, theta).compile()
    assert compiled.compiled
    for y in (theta, theta[::-1] * 0.7):
        for _ in range(2):  # the work buffers are reused: nothing stale is read
            v, g = compiled.value_and_gradient(y)
            assert v == pytest.approx(every_case(y), rel=1e-13)
            np.testing.assert_allclose(g, tape.gradient(y), rtol=1e-11, atol=1e-12)
    check_gradient(every_case, compiled.gradient, (theta,))


def test_the_gmm_kernel_forms_no_adjoint_of_its_centred_points():
    """ADBench's GMM objective: the (K, n, d) adjoint of x_i - mu_k is never formed nor
    zeroed; the mu gradient comes from the row sums (their values: the test above, and
    the benchmark's gradient check against the hand gradient)."""
    from benchmarks.problems import build
    p = build("gmm-d2-K5-1k")
    src = kernel_source(jittape.record(p.f, p.x0))
    assert src.count("matmul_row_reverse(") == 1
    assert "True, False)" in src.split("matmul_reverse(val, adj")[1].split("\n")[0]

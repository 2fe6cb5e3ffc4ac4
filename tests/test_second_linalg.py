"""Second-order rules of dense linear algebra (jittape.optable.rules.linalg) against closed forms.

tests/test_ops.py checks every rule against central differences of the gradient (stacks
included) and the interpreted tier against the compiled one; here Hessians and HVPs are
compared with known formulas: the Hessian of log det, of x^T A^-1 x, of det, of functions
of eigenvalues and of matrix functions built from eigh and cholesky.
"""

import numpy as np
import pytest

import jittape

RNG = np.random.default_rng(5)
A = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
STACK = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
X = RNG.standard_normal(3)


def _bilinear(f, a, e, g):
    """``H[e, g]`` of scalar ``f`` at ``a``, from one HVP: <H e, g>."""
    return float(np.sum(jittape.hvp(f)(a, e) * g))


def test_logdet_hessian_closed_form():
    # d2 log|det A| [E, F] = -tr(A^-1 E A^-1 F): H[i,j,k,l] = -Ai[l,i] Ai[j,k]
    ai = np.linalg.inv(A)
    h = jittape.hessian(lambda a: np.linalg.slogdet(a)[1])(A)
    np.testing.assert_allclose(h, -np.einsum("li,jk->ijkl", ai, ai), rtol=1e-10, atol=1e-13)


def test_logdet_of_a_stack_is_block_diagonal():
    h = jittape.hessian(lambda a: np.sum(np.linalg.slogdet(a)[1]))(STACK)
    for p in range(2):
        ai = np.linalg.inv(STACK[p])
        np.testing.assert_allclose(h[p, :, :, p], -np.einsum("li,jk->ijkl", ai, ai),
                                   rtol=1e-10, atol=1e-13)
        np.testing.assert_array_equal(h[p, :, :, 1 - p], 0.0)


def test_det_hvp_closed_form():
    # d2 det A [E, F] = det A (tr(A^-1 E) tr(A^-1 F) - tr(A^-1 E A^-1 F))
    ai = np.linalg.inv(A)
    e, g = RNG.standard_normal((2, 3, 3))
    want = np.linalg.det(A) * (np.trace(ai @ e) * np.trace(ai @ g) -
                               np.trace(ai @ e @ ai @ g))
    np.testing.assert_allclose(_bilinear(np.linalg.det, A, e, g), want, rtol=1e-10)


@pytest.mark.parametrize("quad", [lambda a, x: x @ np.linalg.inv(a) @ x,
                                  lambda a, x: x @ np.linalg.solve(a, x)],
                         ids=["inv", "solve"])
def test_quadratic_form_of_the_inverse(quad):
    # x^T A^-1 x: Hessian A^-1 + A^-T in x; in A, H[E, F] = x^T A^-1 (E A^-1 F + F A^-1 E)
    # A^-1 x
    ai = np.linalg.inv(A)
    hx = jittape.hessian(lambda x: quad(A, x))(X)
    np.testing.assert_allclose(hx, ai + ai.T, rtol=1e-12)
    e, g = RNG.standard_normal((2, 3, 3))
    want = X @ ai @ (e @ ai @ g + g @ ai @ e) @ ai @ X
    np.testing.assert_allclose(_bilinear(lambda a: quad(a, X), A, e, g), want, rtol=1e-10)
    # both arguments: d/dx of <grad_A, E> = -(A^-1 E A^-1 + A^-T E^T A^-T) x
    ha, hx = jittape.hvp(quad, (0, 1))(A, X, (e, np.zeros(3)))
    np.testing.assert_allclose(hx, -(ai @ e @ ai + ai.T @ e.T @ ai.T) @ X, rtol=1e-10)


def test_sum_of_inverse_entries_on_a_stack():
    # sum(inv(A)) = 1^T A^-1 1, per matrix of the stack
    one = np.ones(3)
    e, g = RNG.standard_normal((2, 2, 3, 3))
    want = 0.0
    for p in range(2):
        ai = np.linalg.inv(STACK[p])
        want += one @ ai @ (e[p] @ ai @ g[p] + g[p] @ ai @ e[p]) @ ai @ one
    got = _bilinear(lambda a: np.sum(np.linalg.inv(a)), STACK, e, g)
    np.testing.assert_allclose(got, want, rtol=1e-10)


def _sym(x):
    return x + np.swapaxes(x, -1, -2)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigenvalue_sums(uplo):
    # sum(w) = tr(S) is linear: Hessian 0; sum(w^2) = ||S||_F^2 with S = x + x^T:
    # H[i,j,k,l] = 4 (d_ik d_jl + d_il d_jk)
    x = RNG.standard_normal((2, 3, 3))
    h = jittape.hessian(lambda x: np.sum(np.linalg.eigh(_sym(x), UPLO=uplo)[0]))(x)
    np.testing.assert_allclose(h, 0.0, atol=1e-12)
    h = jittape.hessian(lambda x: np.sum(np.linalg.eigvalsh(_sym(x), UPLO=uplo) ** 2))(x)
    d = np.eye(3)
    block = 4 * (np.einsum("ik,jl->ijkl", d, d) + np.einsum("il,jk->ijkl", d, d))
    want = np.zeros((2, 3, 3, 2, 3, 3))
    for p in range(2):
        want[p, :, :, p] = block
    np.testing.assert_allclose(h, want, atol=1e-10)


def test_eigenvectors_matrix_function():
    # V diag(w^3) V^T = S^3: the same Hessian as the product of matrices
    x = RNG.standard_normal((3, 3))
    c = RNG.standard_normal((3, 3))

    def by_eigh(x):
        w, v = np.linalg.eigh(_sym(x))
        return np.sum(c * ((v * w ** 3) @ v.T))

    def by_products(x):
        s = _sym(x)
        return np.sum(c * (s @ s @ s))
    np.testing.assert_allclose(jittape.hessian(by_eigh)(x), jittape.hessian(by_products)(x),
                               rtol=1e-9, atol=1e-10)


def test_eigh_at_repeated_eigenvalues_raises():
    f = lambda x: np.sum(np.linalg.eigvalsh(_sym(x)) ** 2)  # noqa: E731
    with pytest.raises(jittape.NotDifferentiableError, match="repeated eigenvalues"):
        jittape.hvp(f)(np.eye(3), np.ones((3, 3)))


def test_cholesky_closed_forms():
    # L L^T = A: a linear function of it has Hessian 0; 2 sum(log diag L) = log det A, read
    # from the lower triangle: H[E, F] = -tr(A^-1 P(E) A^-1 P(F)), P(E) = the symmetric
    # matrix of E's lower triangle
    s = A @ A.T
    c = RNG.standard_normal((3, 3))

    def product(a):
        low = np.linalg.cholesky(a)
        return np.sum(c * (low @ low.T))
    h = jittape.hessian(product)(s)
    np.testing.assert_allclose(h, 0.0, atol=1e-10)
    p = lambda e: np.tril(e) + np.tril(e, -1).T  # noqa: E731
    si = np.linalg.inv(s)
    e, g = RNG.standard_normal((2, 3, 3))
    f = lambda a: 2 * np.sum(np.log(np.diagonal(np.linalg.cholesky(a))))  # noqa: E731
    want = -np.trace(si @ p(e) @ si @ p(g))
    np.testing.assert_allclose(_bilinear(f, s, e, g), want, rtol=1e-9)


# --- decompositions (jittape.optable.rules.decomp) and expm (jittape.optable.rules.matfuncs)
# --------------
def test_svd_sum_of_squared_singular_values():
    # sum(s^2) = ||A||_F^2: Hessian 2 I, on a stack of non-square matrices too
    for shape in ((3, 3), (2, 4, 3)):
        x = RNG.standard_normal(shape)
        h = jittape.hessian(lambda a: np.sum(np.linalg.svd(a, compute_uv=False) ** 2))(x)
        np.testing.assert_allclose(h.reshape(x.size, x.size), 2 * np.eye(x.size),
                                   atol=1e-10)


def test_svd_vectors_and_qr_reassemble():
    # U diag(s) V^T = A and Q R = A: a linear function of them has Hessian 0; R^T R = A^T A
    x = RNG.standard_normal((4, 3))
    c = RNG.standard_normal((4, 3))
    d = RNG.standard_normal((3, 3))

    def by_svd(a):
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return np.sum(c * ((u * s) @ vh))

    def by_qr(a):
        q, r = np.linalg.qr(a)
        return np.sum(c * (q @ r)) + np.sum(d * (r.T @ r))
    np.testing.assert_allclose(jittape.hessian(by_svd)(x), 0.0, atol=1e-10)
    np.testing.assert_allclose(jittape.hessian(by_qr)(x),
                               jittape.hessian(lambda a: np.sum(d * (a.T @ a)))(x),
                               rtol=1e-9, atol=1e-10)


def test_pinv_of_full_column_rank_is_a_composition():
    # A^+ = (A^T A)^-1 A^T for a tall matrix of full column rank
    x = RNG.standard_normal((4, 3))
    c = RNG.standard_normal((3, 4))
    h = jittape.hessian(lambda a: np.sum(c * np.linalg.pinv(a)))(x)
    want = jittape.hessian(lambda a: np.sum(c * (np.linalg.inv(a.T @ a) @ a.T)))(x)
    np.testing.assert_allclose(h, want, rtol=1e-9, atol=1e-10)


def test_expm_against_its_taylor_series():
    # exp(A) = sum_k A^k / k!, 30 terms: exact to rounding for ||A|| ~ 1
    import scipy.linalg
    x = 0.3 * RNG.standard_normal((2, 3, 3))
    c = RNG.standard_normal((2, 3, 3))

    def series(a):
        term, total = a, np.eye(3) + a
        for k in range(2, 30):
            term = term @ a / k
            total = total + term
        return np.sum(c * total)
    e, g = RNG.standard_normal((2, 2, 3, 3))
    got = _bilinear(lambda a: np.sum(c * scipy.linalg.expm(a)), x, e, g)
    np.testing.assert_allclose(got, _bilinear(series, x, e, g), rtol=1e-9)

"""Second-order rules of prod, cumprod, interp, correlate and the special functions whose
derivatives are SciPy's (digamma, gamma, rgamma, beta(ln), gammainc(c), betainc(c), spence,
multigammaln): Hessians and HVPs against closed forms (DLMF section numbers in
jittape/optable/scalar_special.py). test_ops.py checks every rule against central differences."""

import itertools

import numpy as np
import pytest
import scipy.special as sp

import jittape


def _diag_hessian(f, x):
    """The Hessian of sum(f(x)), which is diagonal for an elementwise f."""
    return np.diag(jittape.hessian(lambda v: np.sum(f(v)))(x))


# --- prod and cumprod, with zero factors -----------------------------------------------------
def _prod_hessian(x):
    # d2 prod / dx_i dx_j = the product of the other entries (i != j), 0 on the diagonal
    n = len(x)
    return np.array([[0.0 if i == j else np.prod(np.delete(x, [i, j])) for j in range(n)]
                     for i in range(n)])


@pytest.mark.parametrize("x", [[1.5, -2.0, 0.5, 3.0], [2.0, 0.0, 3.0, 5.0],
                               [0.0, 4.0, 0.0, -3.0], [0.0, 0.0, 0.0, 2.0]],
                         ids=["no zero", "one zero", "two zeros", "three zeros"])
def test_prod_hessian_with_zeros(x):
    x = np.array(x)
    want = _prod_hessian(x)
    if not np.any(x == 0.0):  # the textbook form prod / (x_i x_j) where it applies
        np.testing.assert_allclose(want, np.prod(x) / np.outer(x, x) * (1 - np.eye(4)))
    np.testing.assert_allclose(jittape.hessian(np.prod)(x), want, rtol=1e-14, atol=1e-14)
    v = np.array([0.3, -1.0, 2.0, 0.7])
    np.testing.assert_allclose(jittape.hvp(np.prod)(x, v), want @ v, rtol=1e-14, atol=1e-14)


def test_prod_along_an_axis_hessian_is_block_diagonal():
    x = np.array([2.0, 0.0, 3.0, -1.0, 0.5, 4.0])
    h = jittape.hessian(lambda v: np.sum(np.prod(v.reshape(3, 2), axis=0)))(x)
    want = np.zeros((6, 6))
    for c in range(2):  # column c of the (3, 2) view: elements c, c + 2, c + 4
        idx = [c, c + 2, c + 4]
        want[np.ix_(idx, idx)] = _prod_hessian(x[idx])
    np.testing.assert_allclose(h, want, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("x", [[1.5, -2.0, 0.5, 3.0], [2.0, 0.0, 3.0, 5.0],
                               [0.0, 4.0, 0.0, -3.0]], ids=["no zero", "one zero", "two zeros"])
def test_cumprod_hessian_with_zeros(x):
    # f = w . cumprod(x): d2 f / dx_i dx_j = sum_{t >= max(i, j)} w_t prod_{s <= t, s != i, j} x_s
    x, w = np.array(x), np.array([0.5, -1.0, 2.0, 1.5])
    want = np.zeros((4, 4))
    for i, j in itertools.permutations(range(4), 2):
        want[i, j] = sum(w[t] * np.prod(np.delete(x[:t + 1], [i, j]))
                         for t in range(max(i, j), 4))
    h = jittape.hessian(lambda v: np.dot(w, np.cumprod(v)))(x)
    np.testing.assert_allclose(h, want, rtol=1e-14, atol=1e-14)


# --- interp and correlate: the cross terms ----------------------------------------------------
def test_interp_hessian_cross_terms_with_the_table():
    # z = fp[j] + (fp[j+1] - fp[j]) (x - xp[j]) / h: d2z/dx dfp[j] = -1/h, dx dfp[j+1] = 1/h,
    # d2z/dfp dfp = 0 and d2z/dx2 = 0 (linear in x within a segment)
    xp = np.array([0.0, 1.0, 3.0, 4.0])
    v = np.array([2.2, 1.0, -1.0, 0.5, 2.0])  # x, then fp
    h = jittape.hessian(lambda u: np.interp(u[0], xp, u[1:]))(v)
    want = np.zeros((5, 5))
    want[0, 2], want[0, 3] = -0.5, 0.5  # x = 2.2 is in segment [1, 3]
    want[2:4, 0] = want[0, 2:4]
    np.testing.assert_allclose(h, want, atol=1e-15)


def test_interp_hessian_in_the_knots():
    # one segment, fp constant: z = fp0 + df (x - a) / L, L = b - a, in (x, a, b) = (x, xp0,
    # xp1): z_xa = df/L^2, z_xb = -df/L^2, z_aa = 2 df (x-b)/L^3, z_ab = df (a+b-2x)/L^3,
    # z_bb = 2 df (x-a)/L^3 (rows sum to 0: z is invariant under shifting x, a, b together)
    x, a, b, df = 0.5, 0.0, 2.0, 2.0
    h = jittape.hessian(lambda u: np.interp(u[0], u[1:], np.array([1.0, 3.0])))(
        np.array([x, a, b]))
    L = b - a
    want = np.array([[0.0, df / L ** 2, -df / L ** 2],
                     [df / L ** 2, 2 * df * (x - b) / L ** 3, df * (a + b - 2 * x) / L ** 3],
                     [-df / L ** 2, df * (a + b - 2 * x) / L ** 3, 2 * df * (x - a) / L ** 3]])
    np.testing.assert_allclose(h, want, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("mode", ["valid", "full"])
def test_correlate_hessian_is_the_bilinear_form(mode):
    rng = np.random.default_rng(5)
    a0, v0 = rng.standard_normal(6), rng.standard_normal(3)
    w = rng.standard_normal(len(np.correlate(a0, v0, mode)))
    f = lambda u: np.dot(w, np.correlate(u[:6], u[6:], mode))  # noqa: E731
    h = jittape.hessian(f)(np.concatenate([a0, v0]))
    eye_a, eye_v = np.eye(6), np.eye(3)
    cross = np.array([[np.dot(w, np.correlate(eye_a[m], eye_v[p], mode)) for p in range(3)]
                      for m in range(6)])
    want = np.block([[np.zeros((6, 6)), cross], [cross.T, np.zeros((3, 3))]])
    np.testing.assert_allclose(h, want, rtol=1e-14, atol=1e-15)


# --- special functions ------------------------------------------------------------------------
X = np.array([0.3, 1.7, 4.2, 9.0, -0.4, -1.5])


@pytest.mark.parametrize("f", [sp.digamma, sp.psi], ids=["digamma", "psi"])
def test_digamma_second_derivative_is_polygamma_2(f):
    np.testing.assert_allclose(_diag_hessian(f, X), sp.polygamma(2, X), rtol=1e-13)


def test_gammaln_second_derivative_is_trigamma():
    x = X[:4]
    np.testing.assert_allclose(_diag_hessian(sp.gammaln, x), sp.polygamma(1, x), rtol=1e-11)


def test_gamma_and_rgamma_second_derivatives():
    psi, psi1 = sp.digamma(X), sp.polygamma(1, X)
    np.testing.assert_allclose(_diag_hessian(sp.gamma, X), sp.gamma(X) * (psi ** 2 + psi1),
                               rtol=1e-13)
    np.testing.assert_allclose(_diag_hessian(sp.rgamma, X), sp.rgamma(X) * (psi ** 2 - psi1),
                               rtol=1e-12)


def test_rgamma_second_derivative_at_the_poles():
    # 1/Gamma(-n + e) = (-1)^n n! (e - psi(n + 1) e^2 + ...)
    n = np.array([0.0, 1.0, 2.0, 3.0])
    want = -2.0 * (-1.0) ** n * sp.factorial(n) * sp.digamma(n + 1.0)
    np.testing.assert_allclose(_diag_hessian(sp.rgamma, -n), want, rtol=1e-14)


def test_beta_and_betaln_hessians():
    a, b = 1.3, 2.6
    t, ta, tb = sp.polygamma(1, a + b), sp.polygamma(1, a), sp.polygamma(1, b)
    want = np.array([[ta - t, -t], [-t, tb - t]])
    h = jittape.hessian(lambda u: sp.betaln(u[0], u[1]))(np.array([a, b]))
    np.testing.assert_allclose(h, want, rtol=1e-13)
    # B = exp(betaln): H = B (g g^T + H_ln), g the gradient of betaln
    g = np.array([sp.digamma(a), sp.digamma(b)]) - sp.digamma(a + b)
    hb = jittape.hessian(lambda u: sp.beta(u[0], u[1]))(np.array([a, b]))
    np.testing.assert_allclose(hb, sp.beta(a, b) * (np.outer(g, g) + want), rtol=1e-13)


def test_multigammaln_second_derivative():
    a = np.array([1.2, 2.5, 7.0])
    want = sum(sp.polygamma(1, a - 0.5 * j) for j in range(3))
    np.testing.assert_allclose(_diag_hessian(lambda u: sp.multigammaln(u, 3), a), want,
                               rtol=1e-13)


@pytest.mark.parametrize("a", [0.5, 1.0, 2.0, 7.5])
def test_gammainc_second_derivative_in_x(a):
    # d2P/dx2 = d/dx x^(a-1) e^-x / Gamma(a) = x^(a-2) e^-x (a - 1 - x) / Gamma(a)
    x = np.array([0.2, 1.0, 2.5, 6.0])
    want = x ** (a - 2) * np.exp(-x) * (a - 1 - x) / sp.gamma(a)
    np.testing.assert_allclose(_diag_hessian(lambda u: sp.gammainc(a, u), x), want,
                               rtol=1e-13)
    np.testing.assert_allclose(_diag_hessian(lambda u: sp.gammaincc(a, u), x), -want,
                               rtol=1e-13)


@pytest.mark.parametrize("a, b", [(0.5, 3.0), (2.0, 3.0), (5.0, 0.7)])
def test_betainc_second_derivative_in_x(a, b):
    x = np.array([0.05, 0.3, 0.6, 0.95])
    dens = x ** (a - 1) * (1 - x) ** (b - 1) / sp.beta(a, b)
    want = dens * ((a - 1) / x - (b - 1) / (1 - x))
    np.testing.assert_allclose(_diag_hessian(lambda u: sp.betainc(a, b, u), x), want,
                               rtol=1e-12)
    np.testing.assert_allclose(_diag_hessian(lambda u: sp.betaincc(a, b, u), x), -want,
                               rtol=1e-12)


def test_spence_second_derivative():
    # d/dx log x / (1 - x) = 1 / (x (1 - x)) + log x / (1 - x)^2; 1/2 at x = 1 (the limit)
    x = np.array([0.1, 0.5, 1.5, 3.0, 40.0])
    want = 1 / (x * (1 - x)) + np.log(x) / (1 - x) ** 2
    np.testing.assert_allclose(_diag_hessian(sp.spence, x), want, rtol=1e-13)
    near = np.array([1.0, 1.0 + 1e-9, 1.0 - 1e-6])
    t = near - 1  # the series 1/2 - 2t/3 + 3t^2/4 - ... there
    np.testing.assert_allclose(_diag_hessian(sp.spence, near), 0.5 - 2 * t / 3 + 0.75 * t * t,
                               rtol=1e-14)


def test_an_active_shape_parameter_is_still_refused():
    with pytest.raises(jittape.NotDifferentiableError):
        jittape.hessian(lambda u: sp.gammainc(u[0], u[1]))(np.array([1.5, 2.0]))

"""The scipy.special functions SciPy's distributions and libraries call
(jittape.optable.rules.special_more, special_complex).

The generic checker (tests/test_ops.py) runs every entry's own spec in every mode. Here:
replayed values against SciPy's own output (bit for bit: the rules call SciPy's C kernels;
shapes and dtypes), a closed form of each derivative (known values; tolerances that hold
across summation order), the complex functions (wofz for lmfit's Voigt profile, loggamma for
its Pearson IV), the refusal of active constant arguments, the names in the errors of the
functions that still have no rule, and the distributions' own formulas in SciPy's source.
"""

import math

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as st

import jittape
from jittape import NotDifferentiableError
from jittape.ops import BY_NAME
from jittape.optable.rules.special_complex import COMPLEX_SPECIAL_OPS
from jittape.optable.rules.special_more import MORE_SPECIAL_OPS

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

_WIDE = np.concatenate([-np.geomspace(1e-300, 1e300, 31), np.geomspace(1e-300, 1e300, 31),
                        np.linspace(-6.0, 6.0, 25), [0.0, -0.0, -1.0, 1.0, np.inf, -np.inf,
                                                     np.nan, 1e-17, 720.0]])
_POS = np.concatenate([np.geomspace(1e-6, 1e4, 21), [0.0, 0.5, 1.0, np.inf, np.nan]])
_CONST = np.array([0.0, 0.5, 1.0, 2.0, 7.5, 30.0])
_UNIT = np.concatenate([np.linspace(0.0, 1.0, 21), [1e-300, 1e-10, 1 - 1e-10]])


def _replayed(f, *args):
    """f at ``args`` by the forward sweep: recorded at ``args`` and replayed there."""
    tape = jittape.record(f, *args, argnums=tuple(range(len(args))))
    return tape.value(*args)


def _scipy(op):
    return getattr(sp, op.numpy[0].rsplit(".", 1)[1])


def _grid(op):
    """(f of the op's continuous arguments, those arguments): a wide grid per kind."""
    f = _scipy(op)
    if op.kind == "unary":
        return f, (_WIDE,)
    continuous = [i for i, a in enumerate(op.args) if a not in op.constant]
    points = _UNIT if op.name.endswith(("inv", "it", "tri")) else _POS
    if len(continuous) == 1:  # constants: a grid of them against the argument
        cols = np.meshgrid(*[_CONST if i not in continuous else
                             np.concatenate([-points[:3], points]) for i in range(op.arity)])
        cols = [c.ravel() for c in cols]
        k = continuous[0]
        return (lambda x: f(*cols[:k], x, *cols[k + 1:])), (cols[k],)
    if op.kind == "binary":
        a, b = (m.ravel() for m in np.meshgrid(_WIDE[::3], _WIDE[::3]))
        return f, (a, b)
    x, nc = (m.ravel() for m in np.meshgrid(_POS, _POS))  # chndtr(x, df, nc)
    return (lambda x, nc: f(x, 3.0, nc)), (x, nc)


_REAL = MORE_SPECIAL_OPS + [BY_NAME["log_ndtr"]]


@pytest.mark.parametrize("op", _REAL, ids=[op.name for op in _REAL])
def test_replayed_values_equal_scipy(op):
    """SciPy's own C kernels: bit for bit, NaNs and infinities included."""
    f, args = _grid(op)
    want = f(*args)
    got = _replayed(f, *args)
    assert got.dtype == want.dtype == np.float64 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_recorded_values_shapes_and_dtypes_are_scipys():
    x = np.linspace(0.5, 2.0, 3)
    lmbda = np.array([[0.0], [0.5]])
    for f in (lambda x: sp.boxcox(x, lmbda), lambda x: sp.log1p(x), lambda x: sp.cosm1(x),
              lambda x: sp.stdtr(np.array([[2.0], [5.0]]), x),
              lambda x: sp.log_wright_bessel(0.5, 1.5, x), lambda x: sp.wofz(x + 0.5j),
              lambda x: sp.loggamma(x - 1j * x)):
        want = f(x)
        got = _replayed(lambda x: f(x).real + f(x).imag if np.iscomplexobj(want) else f(x), x)
        plain = want.real + want.imag if np.iscomplexobj(want) else want
        assert got.shape == plain.shape and got.dtype == plain.dtype
        np.testing.assert_array_equal(got, plain)
    # wofz of a real active value is complex, as SciPy's complex128 result
    shape = []
    jittape.grad(lambda x: shape.append((np.shape(sp.wofz(x)), np.iscomplexobj(sp.wofz(x))))
                 or np.sum(x))(x)
    assert shape == [((3,), True)]


def _grad(f, x):
    return jittape.grad(lambda x: np.sum(f(x)))(x)


def test_functions_that_had_rules_already():
    """The rest of the functions SciPy's distributions call most (xlogy, xlog1py, logsumexp,
    expit, logit, log_expit, ndtr, log_ndtr, erf, erfc, gammaln, psi, digamma, betaln):
    closed forms of their derivatives, and replayed values. Those whose entries compute
    their value with jittape's own helpers (math.erf, math.lgamma, a digamma series; the
    others call SciPy's kernels) agree with SciPy's to rounding, not to the bit."""
    x = np.array([0.2, 0.7, 1.5, 4.0])
    y = x[::-1].copy()
    phi = np.exp(-x * x / 2) / np.sqrt(2 * np.pi)
    cases = [(lambda v: sp.xlogy(y, v), y / x), (lambda v: sp.xlog1py(y, v), y / (1 + x)),
             (lambda v: sp.logsumexp(v), np.exp(x) / np.sum(np.exp(x))),
             (sp.expit, sp.expit(x) * sp.expit(-x)), (lambda v: sp.logit(v / 5), 0.2 / (
                 x / 5 * (1 - x / 5))), (sp.log_expit, sp.expit(-x)), (sp.ndtr, phi),
             (sp.log_ndtr, phi / sp.ndtr(x)), (sp.erf, 2 / np.sqrt(np.pi) * np.exp(-x * x)),
             (sp.erfc, -2 / np.sqrt(np.pi) * np.exp(-x * x)), (sp.gammaln, sp.psi(x)),
             (sp.psi, sp.polygamma(1, x)), (sp.digamma, sp.polygamma(1, x)),
             (lambda v: sp.betaln(v, y), sp.psi(x) - sp.psi(x + y))]
    for f, want in cases:
        np.testing.assert_allclose(_grad(f, x), want, rtol=1e-13)
        np.testing.assert_allclose(_replayed(lambda v: f(v) + 0.0, x * 1.1), f(x * 1.1),
                                   rtol=2e-14, atol=1e-15)


def _partials(f, *args):
    """The gradient of f with respect to each of its (scalar) arguments."""
    return jittape.grad(f, tuple(range(len(args))))(*args)


E = math.e


def test_derivatives_of_unary_functions():
    x = np.array([0.1, 0.5, 1.0, 2.0, 7.0])
    np.testing.assert_allclose(_grad(sp.log1p, x), 1 / (1 + x), rtol=1e-15)
    np.testing.assert_allclose(_grad(sp.expm1, x), np.exp(x), rtol=1e-15)
    np.testing.assert_allclose(_grad(sp.cosm1, x), -np.sin(x), rtol=1e-15)
    assert jittape.grad(sp.exprel)(0.0) == 0.5 and jittape.grad(sp.exprel)(1.0) == \
        pytest.approx(1.0, rel=1e-15)  # (x e^x - e^x + 1) / x^2
    t = np.array([-2.0, -0.5, -1e-6, 1e-9, 0.3, 0.99, 1.5])
    np.testing.assert_allclose(_grad(sp.exprel, t),
                               np.where(np.abs(t) > 0.1, (t * np.exp(t) - np.expm1(t)) / t ** 2,
                                        0.5 + t / 3 + t ** 2 / 8 + t ** 3 / 30), rtol=1e-14)
    assert tuple(_grad(sp.loggamma, np.array([1.0, 2.0]))) == pytest.approx(
        (-np.euler_gamma, 1 - np.euler_gamma), rel=1e-15)
    assert jittape.grad(sp.ndtri_exp)(math.log(0.5)) == pytest.approx(
        0.5 * math.sqrt(2 * math.pi), rel=1e-15)  # ndtri(1/2) = 0
    assert jittape.grad(sp.erfi)(0.0) == pytest.approx(2 / math.sqrt(math.pi), rel=1e-15)
    assert jittape.grad(sp.dawsn)(0.0) == 1.0
    assert jittape.grad(sp.exp1)(1.0) == pytest.approx(-1 / E, rel=1e-15)
    assert jittape.grad(sp.expi)(1.0) == pytest.approx(E, rel=1e-15)


def test_derivatives_of_box_cox_and_powm1():
    x = np.array([0.3, 1.0, 2.5])
    # at lambda = 0: d/dl (x^l - 1)/l = log(x)^2 / 2, d/dx = 1/x; boxcox(x, 1) = x - 1
    gx, gl = jittape.grad(lambda x, l: np.sum(sp.boxcox(x, l)), (0, 1))(x, np.zeros(3))
    np.testing.assert_allclose(gx, 1 / x, rtol=1e-15)
    np.testing.assert_allclose(gl, np.log(x) ** 2 / 2, rtol=1e-15)
    np.testing.assert_allclose(_grad(lambda x: sp.boxcox(x, 1.0), x), 1.0, rtol=1e-15)
    _, gl = jittape.grad(lambda x, l: np.sum(sp.boxcox1p(x, l)), (0, 1))(x, np.zeros(3))
    np.testing.assert_allclose(gl, np.log1p(x) ** 2 / 2, rtol=1e-15)
    # inv_boxcox(y, 0) = e^y: d/dy = e^y, d/dl = -e^y y^2 / 2; inv_boxcox(1, 1) = 2
    y = np.array([-0.5, 0.2, 1.5])
    gy, gl = jittape.grad(lambda y, l: np.sum(sp.inv_boxcox(y, l)), (0, 1))(y, np.zeros(3))
    np.testing.assert_allclose(gy, np.exp(y), rtol=1e-15)
    np.testing.assert_allclose(gl, -np.exp(y) * y ** 2 / 2, rtol=1e-15)
    gy, gl = _partials(sp.inv_boxcox, 1.0, 1.0)  # d/dl (1 + l)^(1/l) = 2 (1/2 - log 2)
    assert (gy, gl) == pytest.approx((1.0, 1 - 2 * math.log(2)), rel=1e-14)
    gy, gl = jittape.grad(lambda y, l: np.sum(sp.inv_boxcox1p(y, l)), (0, 1))(y, np.zeros(3))
    np.testing.assert_allclose(gy, np.exp(y), rtol=1e-15)
    np.testing.assert_allclose(gl, -np.exp(y) * y ** 2 / 2, rtol=1e-15)
    assert _partials(sp.powm1, 2.0, 3.0) == pytest.approx((12.0, 8 * math.log(2)), rel=1e-15)
    assert _partials(sp.powm1, 1.0, 1e-20) == pytest.approx((1e-20, 0.0), abs=1e-30)


def test_derivatives_of_losses():
    assert _partials(sp.kl_div, 1.5, 1.5) == (0.0, 0.0)
    assert _partials(sp.kl_div, 2.0, 1.0) == pytest.approx((math.log(2), -1.0), rel=1e-15)
    assert _partials(sp.huber, 1.0, 0.5) == (0.0, 0.5)
    assert _partials(sp.huber, 1.0, -3.0) == (2.0, -1.0)
    r2 = math.sqrt(2)  # pseudo_huber(1, 1) = sqrt 2 - 1
    assert _partials(sp.pseudo_huber, 1.0, 1.0) == pytest.approx((1.5 * r2 - 2, 1 / r2),
                                                                 rel=1e-15)
    assert _partials(sp.pseudo_huber, 0.0, -2.0) == pytest.approx((2.0, 0.0), rel=1e-15)
    # T(0, a) = atan(a) / (2 pi); T(h, 1) = Phi(h) (1 - Phi(h)) / 2
    assert _partials(sp.owens_t, 0.0, 2.0) == pytest.approx((0.0, 1 / (10 * math.pi)),
                                                            rel=1e-15)
    h = 0.7
    gh, _ = _partials(sp.owens_t, h, 1.0)
    assert gh == pytest.approx(st.norm.pdf(h) * (1 - 2 * sp.ndtr(h)) / 2, rel=1e-14)


def test_derivatives_of_distribution_functions():
    t = np.array([-2.0, 0.3, 4.0])
    p = np.array([0.05, 0.5, 0.9])
    # df = 1: the Cauchy distribution, CDF 1/2 + atan(t)/pi, quantile tan(pi (p - 1/2))
    np.testing.assert_allclose(_grad(lambda t: sp.stdtr(1.0, t), t), 1 / (np.pi * (1 + t * t)),
                               rtol=1e-14)
    np.testing.assert_allclose(_grad(lambda p: sp.stdtrit(1.0, p), p),
                               np.pi / np.cos(np.pi * (p - 0.5)) ** 2, rtol=1e-12)
    x = np.array([0.2, 1.0, 5.0])
    # v = 2: the exponential distribution of mean 2
    np.testing.assert_allclose(_grad(lambda x: sp.chdtr(2.0, x), x), np.exp(-x / 2) / 2,
                               rtol=1e-14)
    np.testing.assert_allclose(_grad(lambda x: sp.chdtrc(2.0, x), x), -np.exp(-x / 2) / 2,
                               rtol=1e-14)
    np.testing.assert_allclose(_grad(lambda p: sp.chdtri(2.0, p), p), -2 / p, rtol=1e-13)
    np.testing.assert_allclose(_grad(lambda m: sp.pdtr(0.0, m), x), -np.exp(-x), rtol=1e-14)
    np.testing.assert_allclose(_grad(lambda m: sp.pdtrc(0.0, m), x), np.exp(-x), rtol=1e-14)
    np.testing.assert_allclose(_grad(lambda m: sp.pdtr(2.7, m), x), -x ** 2 * np.exp(-x) / 2,
                               rtol=1e-14)
    np.testing.assert_allclose(_grad(lambda y: sp.gammaincinv(1.0, y), p), 1 / (1 - p),
                               rtol=1e-13)
    np.testing.assert_allclose(_grad(lambda y: sp.gammainccinv(1.0, y), p), -1 / p, rtol=1e-13)
    # F(2, 2): CDF x / (1 + x)
    np.testing.assert_allclose(_grad(lambda x: sp.fdtr(2.0, 2.0, x), x), 1 / (1 + x) ** 2,
                               rtol=1e-14)
    np.testing.assert_allclose(_grad(lambda x: sp.fdtrc(2.0, 2.0, x), x), -1 / (1 + x) ** 2,
                               rtol=1e-14)
    assert jittape.grad(lambda x: sp.fdtr(2.0, 5.0, x))(0.0) == 1.0  # the density at 0
    np.testing.assert_allclose(_grad(lambda y: sp.betaincinv(1.0, 1.0, y), p), 1.0, rtol=1e-14)
    np.testing.assert_allclose(_grad(lambda y: sp.betaincinv(2.0, 1.0, y), p),
                               0.5 / np.sqrt(p), rtol=1e-13)
    np.testing.assert_allclose(_grad(lambda y: sp.betainccinv(1.0, 1.0, y), p), -1.0,
                               rtol=1e-14)


def test_derivatives_of_the_noncentral_chi_square_cdf():
    """d/dx is the density (SciPy's own, scipy.special._ufuncs._ncx2_pdf); d/dnc is
    -f(x; df + 2, nc), against central differences of SciPy's chndtr."""
    from scipy.special import _ufuncs
    x = np.array([0.3, 2.0, 6.0, 40.0])
    for df, nc in ((0.5, 1.5), (3.0, 0.2), (7.0, 30.0)):
        gx, gnc = jittape.grad(lambda x, nc: np.sum(sp.chndtr(x, df, nc)), (0, 1))(
            x, np.full(4, nc))
        np.testing.assert_allclose(gx, _ufuncs._ncx2_pdf(x, df, nc), rtol=1e-12)
        h = 1e-5
        fd = (sp.chndtr(x, df, nc + h) - sp.chndtr(x, df, nc - h)) / (2 * h)
        np.testing.assert_allclose(gnc, fd, rtol=1e-6, atol=1e-10)  # (FD of a CDF near 1)
        np.testing.assert_allclose(gnc, -_ufuncs._ncx2_pdf(x, df + 2, nc), rtol=1e-12)
    # nc = 0: the chi-square density
    np.testing.assert_allclose(_grad(lambda x: sp.chndtr(x, 3.0, 0.0), x), st.chi2.pdf(x, 3.0),
                               rtol=1e-13)


def test_derivatives_of_the_wright_function():
    """Phi(0, b, x) = e^x / Gamma(b): d/dx log Phi = 1; Tweedie's log density (statsmodels)
    against central differences of SciPy's log_wright_bessel."""
    x = np.array([0.1, 1.0, 4.0])
    np.testing.assert_allclose(_grad(lambda x: sp.wright_bessel(0.0, 2.5, x), x),
                               np.exp(x) / math.gamma(2.5), rtol=1e-13)
    np.testing.assert_allclose(_grad(lambda x: sp.log_wright_bessel(0.0, 2.5, x), x), 1.0,
                               rtol=1e-12)
    a, b, h = 0.6, 0.2, 1e-6
    x = np.array([0.05, 0.8, 3.0, 30.0])
    g = _grad(lambda x: sp.log_wright_bessel(a, b, x), x)
    fd = (sp.log_wright_bessel(a, b, x + h) - sp.log_wright_bessel(a, b, x - h)) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-7)


def test_private_beta_pdf():
    """scipy.special._ufuncs._beta_pdf (Boost's, which scipy.stats.beta._pdf calls): replayed
    values SciPy's bit for bit, its derivatives in x, a and b in closed form."""
    from scipy.special import _ufuncs
    x, a, b = (m.ravel() for m in np.meshgrid(np.concatenate([_UNIT, [-0.5, 1.5, np.nan]]),
                                              _CONST[1:], _CONST[1:]))
    f = _ufuncs._beta_pdf
    np.testing.assert_array_equal(_replayed(f, x, a, b), f(x, a, b))
    u = np.array([0.1, 0.4, 0.75])
    np.testing.assert_allclose(_grad(lambda x: f(x, 2.0, 1.0), u), 2.0, rtol=1e-14)  # 2x
    np.testing.assert_allclose(_grad(lambda x: f(x, 1.0, 3.0), u), -6 * (1 - u), rtol=1e-14)
    # d/da of a x^(a-1) (Beta(a, 1)) at a = 1: 1 + log x
    np.testing.assert_allclose(_grad(lambda a: f(u, a, 1.0), np.ones(3)), 1 + np.log(u),
                               rtol=1e-14)
    np.testing.assert_allclose(_grad(lambda b: f(u, 1.0, b), np.ones(3)), 1 + np.log1p(-u),
                               rtol=1e-14)
    assert tuple(_grad(lambda x: st.beta._pdf(x, 2.0, 1.0), u)) == pytest.approx((2.0,) * 3)


def test_private_noncentral_chi_square_density_and_sf():
    """scipy.special._ufuncs._ncx2_pdf and _ncx2_sf (Boost's, ncx2's _pdf and _sf): replayed
    values SciPy's; d/dx sf = -pdf; the pdf's derivatives against central differences of
    SciPy's own pdf."""
    from scipy.special import _ufuncs
    x, nc = (m.ravel() for m in np.meshgrid(_POS, _POS))
    for f in (_ufuncs._ncx2_pdf, _ufuncs._ncx2_sf):
        np.testing.assert_array_equal(_replayed(lambda x, nc: f(x, 3.5, nc), x, nc),
                                      f(x, 3.5, nc))
    x = np.array([0.3, 2.0, 6.0, 15.0])
    for df, nc in ((1.5, 0.7), (3.0, 2.0), (8.0, 12.0)):
        gx, gnc = jittape.grad(lambda x, nc: np.sum(_ufuncs._ncx2_sf(x, df, nc)), (0, 1))(
            x, np.full(4, nc))
        np.testing.assert_allclose(gx, -_ufuncs._ncx2_pdf(x, df, nc), rtol=1e-12)
        np.testing.assert_allclose(gnc, _ufuncs._ncx2_pdf(x, df + 2, nc), rtol=1e-12)
        gx, gnc = jittape.grad(lambda x, nc: np.sum(_ufuncs._ncx2_pdf(x, df, nc)), (0, 1))(
            x, np.full(4, nc))
        h = 1e-6
        pdf = _ufuncs._ncx2_pdf
        np.testing.assert_allclose(gx, (pdf(x + h, df, nc) - pdf(x - h, df, nc)) / (2 * h),
                                   rtol=1e-6, atol=1e-10)
        np.testing.assert_allclose(gnc, (pdf(x, df, nc + h) - pdf(x, df, nc - h)) / (2 * h),
                                   rtol=1e-6, atol=1e-10)


def test_tukey_lambda_cdf():
    """tklmbda (tukeylambda's _cdf): l = 0 is the logistic CDF, l = 1 the uniform on
    [-1, 1]; d/dl at l = 1 from x = (F^l - (1-F)^l)/l at fixed F."""
    x = np.array([-3.0, -0.4, 0.0, 1.2])
    np.testing.assert_allclose(_grad(lambda x: sp.tklmbda(x, 0.0), x),
                               sp.expit(x) * sp.expit(-x), rtol=1e-12)
    np.testing.assert_allclose(_grad(lambda x: sp.tklmbda(x, 1.0), x[1:3]), 0.5, rtol=1e-12)
    f = 0.75  # tklmbda(0.5, 1)
    gx, gl = _partials(sp.tklmbda, 0.5, 1.0)
    assert (gx, gl) == pytest.approx(
        (0.5, -(f * math.log(f) - (1 - f) * math.log(1 - f) + 1 - 2 * f) / 2), rel=1e-12)
    assert _partials(sp.tklmbda, 3.0, 0.5) == (0.0, 0.0)  # off the support |x| <= 1/l


# --- complex arguments -----------------------------------------------------------------------
def _voigt(x, center, sigma, gamma):
    """lmfit's Voigt profile (lmfit.lineshapes.voigt, amplitude 1)."""
    z = (x - center + 1j * gamma) / (sigma * math.sqrt(2))
    return sp.wofz(z).real / (sigma * math.sqrt(2 * math.pi))


def test_wofz_values_and_derivatives():
    re, im = (m.ravel() for m in np.meshgrid(np.linspace(-30, 30, 41),
                                             np.concatenate([-np.geomspace(1e-3, 30, 10),
                                                             [0.0], np.geomspace(1e-3, 30, 10)])))
    w = sp.wofz(re + 1j * im)
    np.testing.assert_array_equal(_replayed(lambda a, b: sp.wofz(a + 1j * b).real, re, im),
                                  w.real)
    np.testing.assert_array_equal(_replayed(lambda a, b: sp.wofz(a + 1j * b).imag, re, im),
                                  w.imag)
    # w'(0) = 2i / sqrt(pi); on the real line Re w = e^(-x^2), Im w = 2 dawsn(x) / sqrt(pi)
    g = jittape.grad(lambda y: sp.wofz(1j * y).imag)(0.0)
    assert g == 0.0
    x = np.array([-1.5, 0.0, 0.4, 2.0])
    np.testing.assert_allclose(_grad(lambda x: sp.wofz(x).real, x), -2 * x * np.exp(-x * x),
                               rtol=1e-14, atol=1e-16)
    np.testing.assert_allclose(_grad(lambda x: sp.wofz(x).imag, x),
                               2 / math.sqrt(math.pi) * (1 - 2 * x * sp.dawsn(x)), rtol=1e-14)
    assert jittape.grad(lambda y: sp.wofz(1j * y).real)(0.0) == pytest.approx(
        -2 / math.sqrt(math.pi), rel=1e-15)  # d/dy w(iy) = i w'(iy)
    # second order: d^2/dx^2 e^(-x^2) = (4 x^2 - 2) e^(-x^2)
    h = jittape.hessian(lambda x: np.sum(sp.wofz(x).real))(x)
    np.testing.assert_allclose(np.diag(h), (4 * x * x - 2) * np.exp(-x * x), rtol=1e-13,
                               atol=1e-16)


def test_lmfit_voigt_profile_gradient():
    """The Voigt profile through wofz equals SciPy's voigt_profile, and its gradient in
    (center, sigma, gamma) equals central differences of voigt_profile."""
    x = np.linspace(-4.0, 5.0, 23)
    p = np.array([0.4, 0.8, 0.6])
    np.testing.assert_allclose(_voigt(x, *p), sp.voigt_profile(x - p[0], p[1], p[2]),
                               rtol=1e-14, atol=1e-17)
    w = np.cos(x)

    def f(p):
        return np.sum(w * _voigt(x, p[0], p[1], p[2]))
    g = jittape.grad(f)(p)
    h = 1e-6
    fd = [(np.sum(w * sp.voigt_profile(x - q[0], q[1], q[2])) -
           np.sum(w * sp.voigt_profile(x - r[0], r[1], r[2]))) / (2 * h)
          for q, r in ((p + h * e, p - h * e) for e in np.eye(3))]
    np.testing.assert_allclose(g, fd, rtol=1e-7)
    tape = jittape.record(f, p)
    np.testing.assert_allclose(tape.gradient(p * 1.3), jittape.grad(f)(p * 1.3), rtol=1e-13)


def test_complex_loggamma_values_and_derivatives():
    re, im = (m.ravel() for m in np.meshgrid(np.linspace(-9.5, 30, 41),
                                             np.concatenate([-np.geomspace(1e-3, 50, 8), [0.0],
                                                             np.geomspace(1e-3, 50, 8)])))
    lg = sp.loggamma(re + 1j * im)
    np.testing.assert_array_equal(_replayed(lambda a, b: sp.loggamma(a + 1j * b).real, re, im),
                                  lg.real)
    np.testing.assert_array_equal(_replayed(lambda a, b: sp.loggamma(a + 1j * b).imag, re, im),
                                  lg.imag)
    z = np.array([0.5 + 0.5j, 2.0 - 1.0j, -2.5 + 0.3j, 10.0 + 40.0j])
    psi = sp.psi(z)  # d/dz log Gamma = psi: Cauchy-Riemann
    ga, gb = jittape.grad(lambda a, b: np.sum(sp.loggamma(a + 1j * b).real), (0, 1))(z.real,
                                                                                      z.imag)
    np.testing.assert_allclose(ga + 1j * gb, np.conj(psi), rtol=1e-14)
    ga, gb = jittape.grad(lambda a, b: np.sum(sp.loggamma(a + 1j * b).imag), (0, 1))(z.real,
                                                                                      z.imag)
    np.testing.assert_allclose(ga + 1j * gb, psi.imag + 1j * psi.real, rtol=1e-14)
    # second order: on the real line d^2/dx^2 log Gamma = psi'(x)
    x = np.array([0.5, 1.0, 3.5])
    h = jittape.hessian(lambda x: np.sum(sp.loggamma(x + 0j).real))(x)
    np.testing.assert_allclose(np.diag(h), sp.polygamma(1, x), rtol=1e-13)
    # off it, psi' = d psi / dz against central differences of SciPy's complex psi
    from jittape.optable.scalar_special import trigamma_complex
    for w in z:
        step = 1e-6
        fd = (sp.psi(w + step) - sp.psi(w - step)) / (2 * step)
        assert complex(trigamma_complex(w.real, w.imag)) == pytest.approx(fd, rel=1e-8)


def test_lmfit_pearson4_log_normalization_gradient():
    """lmfit's Pearson IV normalization uses |Gamma(m + i nu/2)|^2 = exp(2 Re loggamma)."""
    def lognorm(p):
        m, nu = p[0], p[1]
        return 2 * np.real(sp.loggamma(m + 0.5j * nu)) - sp.gammaln(m) - sp.betaln(m - 0.5, 0.5)
    p = np.array([1.7, 0.9])
    g = jittape.grad(lognorm)(p)
    h = 1e-6
    fd = [(lognorm(p + h * e) - lognorm(p - h * e)) / (2 * h) for e in np.eye(2)]
    np.testing.assert_allclose(g, fd, rtol=1e-8)


# --- refusals ----------------------------------------------------------------------------------
REFUSED = [  # (function of the active value t, the argument named in the error)
    (lambda t: sp.stdtr(t, 1.0), "df"), (lambda t: sp.chdtr(t, 1.0), "v"),
    (lambda t: sp.pdtr(t, 1.0), "k"), (lambda t: sp.gammaincinv(t, 0.5), "a"),
    (lambda t: sp.fdtr(2.0, t, 1.0), "dfd"), (lambda t: sp.betaincinv(t, 2.0, 0.5), "a"),
    (lambda t: sp.chndtr(1.0, t, 2.0), "df"), (lambda t: sp.log_wright_bessel(t, 1.0, 1.0), "a"),
    (lambda t: sp.wright_bessel(0.5, t, 1.0), "b"),
]


@pytest.mark.parametrize("f, arg", REFUSED, ids=[f"{i}-{a}" for i, (_, a) in
                                                   enumerate(REFUSED)])
def test_active_constant_arguments_are_refused(f, arg):
    with pytest.raises(NotDifferentiableError, match=rf"argument {arg} is active") as e:
        jittape.grad(lambda t: np.sum(f(t)))(2.0)
    assert "scipy.special." in str(e.value)


@pytest.mark.parametrize("f, name", [
    (lambda t: sp.psi(t + 1j).real, "scipy.special.psi"),  # complex psi
    (lambda t: sp.erf(t * 1j).real, "scipy.special.erf"),
    (lambda t: sp.xlogy(t, 1j).real, "scipy.special.xlogy"),
])
def test_refusals_name_the_scipy_function(f, name):
    with pytest.raises(NotDifferentiableError) as e:
        jittape.grad(f)(0.3)
    assert str(e.value).startswith(name) and "numpy." + name.rsplit(".")[-1] not in str(e.value)


# --- the distributions' formulas in SciPy's source ---------------------------------------------
# (distribution, method, shape parameters, domain): SciPy's private methods of the
# distributions, which call sc.log1p, sc.expm1, sc.xlogy, sc.chndtr, ... on the argument
DISTRIBUTIONS = [
    ("lomax", "_logpdf", (2.5,), (0.1, 3.0)), ("lomax", "_logsf", (2.5,), (0.1, 3.0)),
    ("genpareto", "_logpdf", (0.3,), (0.1, 3.0)), ("genpareto", "_cdf", (0.3,), (0.1, 3.0)),
    ("genpareto", "_cdf", (-0.4,), (0.1, 2.0)),
    ("gompertz", "_logpdf", (1.5,), (0.1, 2.0)), ("gompertz", "_logsf", (1.5,), (0.1, 2.0)),
    ("burr12", "_logpdf", (2.0, 3.0), (0.1, 2.0)), ("burr12", "_cdf", (2.0, 3.0), (0.1, 2.0)),
    ("weibull_min", "_logpdf", (1.7,), (0.1, 3.0)), ("weibull_min", "_cdf", (1.7,), (0.1, 3.0)),
    ("genextreme", "_cdf", (0.3,), (-1.0, 2.0)), ("genextreme", "_cdf", (-0.4,), (-1.0, 2.0)),
    ("genlogistic", "_logpdf", (1.5,), (-2.0, 2.1)),  # (|x| in it: x = 0 is a kink there)
    ("logistic", "_logpdf", (), (-3.0, 3.0)), ("logistic", "_cdf", (), (-3.0, 3.0)),
    ("halflogistic", "_logpdf", (), (0.1, 3.0)), ("gumbel_r", "_logcdf", (), (-2.0, 2.0)),
    ("chi2", "_cdf", (3.5,), (0.2, 6.0)), ("chi2", "_sf", (3.5,), (0.2, 6.0)),
    ("ncx2", "_cdf", (3.0, 1.5), (0.2, 6.0)), ("ncx2", "_pdf", (3.0, 1.5), (0.2, 6.0)),
    ("ncx2", "_sf", (3.0, 1.5), (0.2, 6.0)), ("beta", "_pdf", (2.0, 3.5), (0.1, 0.9)),
    ("tukeylambda", "_cdf", (0.3,), (-2.0, 2.0)), ("t", "_cdf", (4.5,), (-3.0, 3.0)),
    ("f", "_cdf", (3.0, 7.0), (0.2, 4.0)), ("vonmises", "_pdf", (2.0,), (-3.0, 3.0)),
    ("powerlaw", "_logpdf", (1.7,), (0.1, 0.9)), ("kappa3", "_logpdf", (1.5,), (0.1, 3.0)),
    ("norm", "_logcdf", (), (-5.0, 5.0)), ("expon", "_logsf", (), (0.1, 3.0)),
]


@pytest.mark.parametrize("name, method, shapes, domain", DISTRIBUTIONS,
                         ids=[f"{d[0]}.{d[1]}{d[2]}" for d in DISTRIBUTIONS])
def test_distribution_formulas(name, method, shapes, domain):
    """The gradient of SciPy's own formula (the distribution's private method, on active
    values) against central differences of the same method on floats."""
    f = getattr(getattr(st, name), method)
    x = np.linspace(*domain, 7)
    w = np.linspace(0.5, 1.5, 7)
    g = jittape.grad(lambda x: np.sum(w * f(x, *shapes)))(x)
    h = 1e-6
    fd = w * (f(x + h, *shapes) - f(x - h, *shapes)) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


PROGRAM = """
import numpy as np, scipy.special as sp, jittape
f = lambda x: np.sum(sp.wofz(x + 1j * x[::-1]).real + sp.loggamma(x + 0.5j).imag)
x = np.linspace(0.5, 2.0, 4)
t = jittape.record(f, x)
print(float(t.value(x)), *t.gradient(x))
"""


@pytest.mark.compiled
def test_sweeps_calling_complex_kernels_are_cached_on_disk(tmp_path):
    """The complex kernels are called by symbol through a Numba intrinsic: a second process
    with the same cache directories compiles nothing (as for the float64 kernels,
    tests/test_special.py)."""
    from test_special import cold_then_warm
    cold, warm = cold_then_warm(tmp_path, PROGRAM)
    mine = lambda p: [ln for ln in p.stdout.splitlines() if not ln.startswith("[cache]")]  # noqa
    assert mine(cold) == mine(warm)

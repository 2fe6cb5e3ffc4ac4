"""A quick smoke subset of the clients suite (``benchmarks/clients``, ``python -m
benchmarks.clients``): libraries' own functions differentiated unchanged, a few cases per
library that pass, each gradient asserted against the library's analytic derivative (or,
where the library has none, a closed form or central differences of the library's own
function, as the suite does). A missing library skips its tests. Marked ``clients``; a few
seconds once the sweeps are warm.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import jittape

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the benchmarks package sits beside tests/
    sys.path.insert(0, str(ROOT))
harness = pytest.importorskip("benchmarks.clients.harness")

pytestmark = pytest.mark.clients


def _against_differences(problem):
    """jittape's gradient and central differences of the library's function (the suite's
    reference, two step sizes agreeing)."""
    x = np.asarray(problem.x, dtype=float)
    f0 = float(problem.f(x))
    ref, tol = harness.fd_reference(problem, x, f0)
    assert ref is not None, tol
    value, got = jittape.value_and_grad(problem.f)(x)
    assert value == pytest.approx(f0, rel=1e-10)
    assert np.all(np.abs(got - ref) <= tol), (got, ref)
    return got


# --- scipy.stats -----------------------------------------------------------------------------
def test_stats_norm_logpdf_closed_form():
    st = pytest.importorskip("scipy.stats")
    x = np.random.default_rng(0).normal(0.5, 2.0, size=50)

    def f(theta):
        return np.sum(st.norm.logpdf(x, loc=theta[0], scale=theta[1]))
    loc, scale = 0.4, 1.8
    z = (x - loc) / scale
    want = [np.sum(z) / scale, np.sum(z * z - 1) / scale]
    np.testing.assert_allclose(jittape.grad(f)(np.array([loc, scale])), want, rtol=1e-10)
    tape = jittape.record(f, np.array([loc, scale]))
    z2 = (x - 0.5) / 2.0
    np.testing.assert_allclose(tape.gradient(np.array([0.5, 2.0])),
                               [np.sum(z2) / 2.0, np.sum(z2 * z2 - 1) / 2.0], rtol=1e-10)


def test_stats_expon_logpdf_wrt_data():
    st = pytest.importorskip("scipy.stats")
    x = st.expon.rvs(loc=0.5, scale=2.0, size=50, random_state=1)
    g = jittape.grad(lambda x: np.sum(st.expon.logpdf(x, loc=0.5, scale=2.0)))(x)
    np.testing.assert_allclose(g, np.full(50, -0.5), rtol=1e-12)


@pytest.mark.parametrize("name,shapes,what", [("norm", (), "nnlf"),
                                              ("gamma", (1.99,), "logpdf"),
                                              ("t", (2.74,), "logpdf")])
def test_stats_against_differences(name, shapes, what):
    pytest.importorskip("scipy.stats")
    from benchmarks.clients import lib_stats
    _against_differences(lib_stats._theta_problem(name, shapes, what))


# --- statsmodels ---------------------------------------------------------------------------
@pytest.mark.parametrize("model", ["Logit", "Poisson", "GLM-Gaussian", "PHReg"])
def test_statsmodels_score(model):
    pytest.importorskip("statsmodels")
    from benchmarks.clients import lib_statsmodels
    p = lib_statsmodels._problem(model, "score")
    want = p.analytic(p.x)
    np.testing.assert_allclose(jittape.grad(p.f)(p.x), want, rtol=1e-7,
                               atol=1e-9 * np.max(np.abs(want)))
    np.testing.assert_allclose(jittape.record(p.f, p.x).gradient(p.x2), p.analytic(p.x2),
                               rtol=1e-7, atol=1e-9 * np.max(np.abs(want)))


def test_statsmodels_logit_hessian():
    pytest.importorskip("statsmodels")
    from benchmarks.clients import lib_statsmodels
    p = lib_statsmodels._problem("Logit", "hessian")
    want = p.analytic(p.x)
    np.testing.assert_allclose(jittape.hessian(p.f)(p.x), want, rtol=1e-7,
                               atol=1e-9 * np.max(np.abs(want)))


# --- scikit-learn --------------------------------------------------------------------------
def test_sklearn_huber_loss():
    pytest.importorskip("sklearn")
    from benchmarks.clients import lib_sklearn
    p = lib_sklearn._huber()
    np.testing.assert_allclose(jittape.grad(p.f)(p.x), p.analytic(p.x), rtol=1e-7,
                               atol=1e-10)


def test_sklearn_mlp_lbfgs_loss():
    pytest.importorskip("sklearn")
    from benchmarks.clients import lib_sklearn
    p = lib_sklearn._mlp_problem("classifier", "tanh", "lbfgs-loss")
    np.testing.assert_allclose(jittape.grad(p.f)(p.x), p.analytic(p.x), rtol=1e-7,
                               atol=1e-10)


def test_sklearn_nmf_kullback_leibler():
    pytest.importorskip("sklearn")
    from benchmarks.clients import lib_sklearn
    _against_differences(lib_sklearn._nmf("kullback-leibler", "W"))


# --- lmfit ---------------------------------------------------------------------------------
def test_lmfit_gaussian_closed_form():
    L = pytest.importorskip("lmfit.lineshapes")
    x = np.linspace(0.1, 5.0, 60)
    a, c, s = 2.0, 1.5, 0.8
    g = jittape.grad(lambda p: np.sum(L.gaussian(x, *p) ** 2))(np.array([a, c, s]))
    y = L.gaussian(x, a, c, s)
    dy = [y / a, y * (x - c) / s ** 2, y * ((x - c) ** 2 / s ** 3 - 1 / s)]
    np.testing.assert_allclose(g, [np.sum(2 * y * d) for d in dy], rtol=1e-10)


@pytest.mark.parametrize("shape,form", [("step", "erf"), ("split_lorentzian", None),
                                        ("skewed_gaussian", None)])
def test_lmfit_lineshapes_against_differences(shape, form):
    pytest.importorskip("lmfit")
    from benchmarks.clients import lib_lmfit
    _against_differences(lib_lmfit._shape_problem(shape, form))

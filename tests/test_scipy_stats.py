"""scipy.stats densities of active values: each method against SciPy's own value, central
differences and replay; SciPy's methods unchanged on plain arrays; -inf outside the support."""

import numpy as np
import pytest
import scipy.stats as st

import jittape
from jittape.testing import check_grads

X = np.array([0.3, 0.7, 1.5])
CASES = {
    "norm.logpdf": lambda x: np.sum(st.norm.logpdf(x, 0.5, 2.0)),
    "norm.pdf, active loc and scale": lambda x: np.sum(st.norm.pdf(1.0, loc=x, scale=x[0] + 1)),
    "norm.cdf": lambda x: np.sum(st.norm.cdf(x)),
    "norm.logcdf": lambda x: np.sum(st.norm.logcdf(x, 1.0)),
    "norm.sf": lambda x: np.sum(st.norm.sf(x, 1.0)),
    "norm.logsf": lambda x: np.sum(st.norm.logsf(x, 1.0, 0.5)),
    "frozen norm": lambda x: np.sum(st.norm(0.2, 1.5).logpdf(x)),
    "t.logpdf": lambda x: np.sum(st.t.logpdf(x, 3.5, 0.1, 2.0)),
    "t.pdf, active df": lambda x: np.sum(st.t.pdf(0.5, x + 1)),
    "gamma.logpdf": lambda x: np.sum(st.gamma.logpdf(x, 2.5)),
    "gamma.pdf, active shape": lambda x: np.sum(st.gamma.pdf(1.2, x + 0.5)),
    "chi2.logpdf": lambda x: np.sum(st.chi2.logpdf(x, 3.0)),
    "expon.logpdf": lambda x: np.sum(st.expon.logpdf(x, scale=2.0)),
    "beta.logpdf": lambda x: np.sum(st.beta.logpdf(x / 2, 2.0, 3.0)),
    "beta.pdf, active shapes": lambda x: np.sum(st.beta.pdf(0.3, x + 1, x[0] + 1)),
    "poisson.logpmf": lambda x: np.sum(st.poisson.logpmf(np.array([0, 2, 5]), x + 1)),
    "poisson.pmf": lambda x: np.sum(st.poisson.pmf(np.array([0, 2, 5]), x + 1)),
    "multivariate_normal.logpdf": lambda x: st.multivariate_normal.logpdf(
        x, np.zeros(3), np.diag([1.0, 2.0, 3.0]) + 0.1),
    "multivariate_normal.pdf, rows": lambda x: np.sum(st.multivariate_normal.pdf(
        np.stack([x, x * 0.5]), np.ones(3))),
    "dirichlet.logpdf": lambda x: st.dirichlet.logpdf(x / np.sum(x), np.array([1.5, 2.0, 3.0])),
    # cdf/sf through scipy.special's gammainc, betainc, gammaincc (autograd's test_*_cdf)
    "chi2.cdf and sf": lambda x: np.sum(st.chi2.cdf(x, 3.0) + st.chi2.sf(x * 2, 1.5, 0.1)),
    "gamma.cdf and logsf, active loc": lambda x: np.sum(st.gamma.cdf(2.0, [1.5, 2.0, 3.0],
                                                                     x - 1)) + np.sum(
        st.gamma.logsf(x, 2.5, scale=1.5)),
    "beta.cdf and sf": lambda x: np.sum(st.beta.cdf(x / 2, 2.0, [3.0, 0.5, 1.5])) + np.sum(
        st.beta.sf(x / 2 - 0.1, 0.7, 2.0)),
    "t.cdf, active x and loc": lambda x: np.sum(st.t.cdf(x, 3.5, x[::-1] - 0.5, 2.0)),
    "t.logcdf and logsf": lambda x: np.sum(st.t.logcdf(x - 1, [2.5, 4.0, 9.0]) +
                                           st.t.logsf(2 * x, 3.0, 0.5)),
    "t.cdf at its centre": lambda x: np.sum(st.t.cdf(x, 3.0, loc=X) * x),
    "poisson.cdf and sf, active mu": lambda x: np.sum(st.poisson.cdf([[0, 2, 5], [1, -1, 7]],
                                                                     x + 1) + st.poisson.sf(
        [3, 0, 2.5], x * 3)),
    # pseudo-determinant density (allow_singular) and entropy (autograd's test_mvn_*)
    "multivariate_normal, singular cov": lambda x: np.sum(st.multivariate_normal.logpdf(
        np.stack([np.r_[x[:2], 0.0], np.r_[x[1:], 0.0]]), np.r_[x[2], 0.3, 0.0],
        np.diag([1.0, 2.0, 0.0]), allow_singular=True)),
    "multivariate_normal, allow_singular, active cov": lambda x: st.multivariate_normal.pdf(
        x[::-1], x, _spd(x), allow_singular=True),
    "multivariate_normal.entropy": lambda x: st.multivariate_normal.entropy(x, _spd(x)),
}


def _spd(x):
    a = np.outer(x, x[::-1]) + np.diag(x)
    return a @ a.T + np.eye(3)


@pytest.mark.parametrize("name", list(CASES))
def test_density_value_gradient_and_replay(name):
    f = CASES[name]
    value, _ = jittape.value_and_grad(f)(X)
    np.testing.assert_allclose(value, f(X), rtol=1e-12)
    check_grads(f, (X,))
    x2 = X * 1.05
    np.testing.assert_allclose(jittape.record(f, X).gradient(x2), jittape.grad(f)(x2),
                               rtol=1e-12)


def test_outside_the_support_is_minus_inf_like_scipy():
    f = lambda x: st.gamma.logpdf(x, 2.0) + st.beta.logpdf(x, 2.0, 2.0)  # noqa: E731
    rec = jittape.record(f, np.array([-1.0, 0.5, 2.0]))
    np.testing.assert_array_equal(rec.value(np.array([-1.0, 0.5, 2.0])),
                                  f(np.array([-1.0, 0.5, 2.0])))


def test_plain_arguments_reach_scipy_unchanged():
    assert st.norm.logpdf.__wrapped_by_jittape__ is not None
    np.testing.assert_array_equal(st.norm.logpdf(X, 1.0), st.norm.logpdf.__wrapped_by_jittape__(
        st.norm, X, 1.0))
    with pytest.raises(ValueError):  # SciPy's own argument checks still run for plain input
        st.dirichlet.logpdf(np.array([0.2, 0.2]), np.array([1.0, 1.0]))


def test_singular_multivariate_normal_off_its_support_is_minus_inf_like_scipy():
    cov, mean = np.diag([1.0, 0.0, 2.0]), np.zeros(3)
    f = lambda x: st.multivariate_normal.logpdf(x, mean, cov, allow_singular=True)  # noqa
    for x in (np.array([0.5, 0.0, 1.0]), np.array([0.5, 0.1, 1.0])):
        value, g = jittape.value_and_grad(f)(x)
        assert value == pytest.approx(f(x), rel=1e-13) or value == f(x) == -np.inf
    with pytest.raises(np.linalg.LinAlgError):  # allow_singular=False refuses, as SciPy
        jittape.grad(lambda x: st.multivariate_normal.logpdf(x, mean, cov))(np.ones(3))


@pytest.mark.parametrize("call", [lambda x: st.t.cdf(0.5, x), lambda x: st.gamma.sf(1.0, x),
                                  lambda x: st.beta.cdf(0.5, 2.0, x),
                                  lambda x: st.poisson.cdf(x, 2.0)])
def test_cdf_parameters_without_a_derivative_are_refused_by_name(call):
    with pytest.raises(jittape.NotDifferentiableError, match=r"scipy\.stats\.\w+\.cdf/sf"):
        jittape.grad(lambda x: np.sum(call(x)))(X + 1)


@pytest.mark.parametrize("shapes", [(-1.1, 2.7), (0.1, 2.0), (-3.0, -0.5)],
                         ids=["central", "right tail", "left tail"])
def test_truncnorm_nnlf_through_scipys_complex_log_helpers(shapes):
    # scipy.stats._continuous_distns._log_gauss_mass: logsumexp of complex logs, replaced
    # by its real form while recording (jittape/scipy/stats_helpers.py)
    data = st.truncnorm.rvs(*shapes, loc=0.1, scale=1.3, size=30, random_state=3)
    theta = np.array(list(shapes) + [0.1, 1.3])
    f = lambda th: st.truncnorm.nnlf(th, data)  # noqa: E731
    value, g = jittape.value_and_grad(f)(theta)
    assert value == pytest.approx(f(theta), rel=1e-12)
    check_grads(f, theta)
    moved = theta * np.array([1.02, 0.98, 1.0, 1.0])  # the case of each limit may change
    assert jittape.record(f, theta).gradient(moved) == pytest.approx(
        jittape.grad(f)(moved), rel=1e-9)


def test_pearson3_writes_into_a_copy_of_a_broadcast_constant():
    # ans, x, skew = np.broadcast_arrays(1.0, x, skew); ans = ans.copy(); ans[m] = ...
    data = st.pearson3.rvs(0.5, size=30, random_state=4)
    f = lambda th: st.pearson3.nnlf(th, data)  # noqa: E731
    check_grads(f, np.array([0.5, 0.1, 1.2]))

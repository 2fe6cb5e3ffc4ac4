"""jittape.hessp: SciPy's hessp(x, p, *args) order (jittape/api/hessians.py)."""

import numpy as np
import pytest
import scipy.optimize as so

import jittape

W = np.array([0.5, 1.0, 1.5, 2.0])
X0 = np.array([1.0, -0.5, 0.8, 1.2])


def f(x, w):
    return np.sum(w ** 2 * x ** 4) / 4 + np.sum((x - 1.0) ** 2)


def test_hessp_takes_scipys_argument_order():
    p = np.array([1.0, 0.0, 2.0, -1.0])
    h = np.diag(3 * W ** 2 * X0 ** 2 + 2.0)  # the closed form
    assert jittape.hessp(f)(X0, p, W) == pytest.approx(h @ p, rel=1e-12)
    assert jittape.hvp(f)(X0, W, p) == pytest.approx(h @ p, rel=1e-12)  # hvp: v last


@pytest.mark.parametrize("method", ["Newton-CG", "trust-ncg", "trust-krylov", "trust-constr"])
def test_every_hessp_method_of_minimize_with_args(method):
    res = so.minimize(f, X0, args=(W,), jac=jittape.grad(f), hessp=jittape.hessp(f),
                      method=method, tol=1e-12, options={"maxiter": 200})
    ref = so.minimize(f, X0, args=(W,), method="BFGS", options={"gtol": 1e-10})
    assert res.x == pytest.approx(ref.x, abs=1e-6)


@pytest.mark.parametrize("method", ["Newton-CG", "dogleg", "trust-exact", "trust-ncg",
                                    "trust-krylov", "trust-constr"])
def test_every_hess_method_of_minimize_with_args(method):
    res = so.minimize(f, X0, args=(W,), jac=jittape.grad(f), hess=jittape.hessian(f),
                      method=method, tol=1e-12, options={"maxiter": 200})
    ref = so.minimize(f, X0, args=(W,), method="BFGS", options={"gtol": 1e-10})
    assert res.x == pytest.approx(ref.x, abs=1e-6)


def test_hessp_of_another_argument_is_refused_by_name():
    with pytest.raises(TypeError, match="hessp differentiates f's first argument"):
        jittape.hessp(f, argnums=1)

"""jittape.minimize feeding SciPy's second-order methods and IPOPT exact derivatives."""

import sys

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp

import jittape
from jittape.optimize import method_table


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def convex(x):
    """Strictly convex (dogleg needs a positive definite Hessian): minimum at 0.5."""
    return np.sum((x - 0.5) ** 4 + (x - 0.5) ** 2) + 0.5 * np.sum((x[1:] - x[:-1]) ** 2)


@pytest.mark.parametrize("method", ["Newton-CG", "trust-ncg", "trust-krylov", "trust-exact",
                                    "trust-constr"])
def test_second_order_methods_solve_rosenbrock(method):
    x0 = np.full(20, -0.5)
    res = jittape.minimize(rosen, x0, method=method, options={"maxiter": 3000})
    np.testing.assert_allclose(res.x, np.ones(20), atol=1e-4)
    assert res.replay_stats.recordings == 1
    assert res.nhev > 0  # SciPy called the Hessian (or hessp) jittape gave it


def test_dogleg_on_a_convex_function():
    res = jittape.minimize(convex, np.linspace(-2, 2, 30), method="dogleg")
    assert res.success
    np.testing.assert_allclose(res.x, 0.5, atol=1e-6)


def test_what_each_method_is_given():
    tf = jittape.taped(rosen)
    x0 = np.linspace(-1, 1, 200)
    assert set(method_table.objective_kwargs(tf, "newton-cg", x0, ())) == {"jac", "hessp"}
    assert set(method_table.objective_kwargs(tf, "trust-exact", x0, ())) == {"jac", "hess"}
    assert set(method_table.objective_kwargs(tf, "bfgs", x0, ())) == {"jac"}
    assert method_table.objective_kwargs(tf, "nelder-mead", x0, ()) == {}
    kw = method_table.objective_kwargs(tf, "trust-constr", x0, ())  # n = 200, tridiagonal: sparse
    h = kw["hess"](x0)
    assert sp.issparse(h)
    np.testing.assert_allclose(h.toarray(), so.rosen_hess(x0), rtol=1e-13, atol=1e-10)
    p = np.cos(x0)
    hessp = method_table.objective_kwargs(tf, "newton-cg", x0, ())["hessp"]
    np.testing.assert_allclose(hessp(x0, p), so.rosen_hess_prod(x0, p), rtol=1e-13, atol=1e-10)


def test_trust_constr_gets_constraint_jacobians_and_hessians():
    n = 150

    def c(x):  # a chain of equality constraints: sparse Jacobian, diagonal Hessians
        return x[1:] ** 2 - x[:-1]
    con = method_table.with_derivatives(so.NonlinearConstraint(c, 0.0, 0.0), "trust-constr",
                              np.ones(n) * 0.3)
    x, v = np.linspace(0.1, 1, n), np.linspace(-1, 1, n - 1)
    jac = con.jac(x)
    assert sp.issparse(jac)
    np.testing.assert_allclose(jac.toarray(), jittape.jacobian(c)(x), rtol=1e-14)
    h = con.hess(x, v)
    assert sp.issparse(h)
    np.testing.assert_allclose(h.diagonal(), np.concatenate([[0.0], 2 * v]), rtol=1e-14)
    dict_con = method_table.with_derivatives({"type": "ineq", "fun": lambda x: x[0] * x[1] - 1.0},
                                   "trust-constr", np.ones(2))
    assert isinstance(dict_con, so.NonlinearConstraint) and dict_con.lb == 0.0
    np.testing.assert_allclose(dict_con.hess(np.ones(2), np.array([2.0])),
                               [[0.0, 2.0], [2.0, 0.0]])


def test_trust_constr_and_slsqp_agree_with_constraints():
    def f(x):
        return np.sum((x - np.arange(4.0)) ** 2)
    cons = [{"type": "ineq", "fun": lambda x: 2.0 - np.sum(x ** 2)},
            so.NonlinearConstraint(lambda x: x[0] * x[1], 0.1, np.inf)]
    x0 = np.full(4, 0.5)
    a = jittape.minimize(f, x0, method="trust-constr", constraints=cons,
                         options={"gtol": 1e-11, "xtol": 1e-12, "maxiter": 5000})
    b = jittape.minimize(f, x0, method="SLSQP", constraints=cons, options={"ftol": 1e-13})
    assert a.success and b.success
    np.testing.assert_allclose(a.x, b.x, atol=1e-6)


def test_user_derivatives_refused():
    with pytest.raises(ValueError, match="supplies hessp itself"):
        jittape.minimize(rosen, np.zeros(3), method="Newton-CG", hessp=lambda x, p: p)
    with pytest.raises(ValueError, match="'bfgs' uses no Hessian"):
        jittape.minimize(rosen, np.zeros(3), method="BFGS", hess=lambda x: np.eye(3))
    with pytest.raises(ValueError, match="supplies the gradient"):
        jittape.minimize(rosen, np.zeros(3), jac=lambda x: x)


# --- IPOPT ------------------------------------------------------------------------------
def hs071(x):
    return x[0] * x[3] * np.sum(x[:3]) + x[2]


HS071_CONS = [{"type": "ineq", "fun": lambda x: x[0] * x[1] * x[2] * x[3] - 25.0},
              so.NonlinearConstraint(lambda x: np.sum(x ** 2), 40.0, 40.0)]


def test_ipopt_hs071():
    pytest.importorskip("cyipopt")
    res = jittape.minimize(hs071, [1.0, 5.0, 5.0, 1.0], method="ipopt",
                           constraints=HS071_CONS, bounds=[(1, 5)] * 4)
    assert res.success and res.status == 0
    # Hock & Schittkowski problem 71: f* = 17.0140173
    np.testing.assert_allclose(res.fun, 17.0140173, rtol=1e-7)
    np.testing.assert_allclose(res.x, [1.0, 4.7429994, 3.8211503, 1.3794082], atol=1e-5)
    assert res.nit > 0 and res.replay_stats.recordings == 1


def test_ipopt_large_sparse_problem_with_linear_and_equality_constraints():
    pytest.importorskip("cyipopt")
    n = 500
    a = sp.diags([np.ones(n), np.ones(n - 1)], [0, 1], shape=(n - 1, n))
    cons = [so.LinearConstraint(a, -np.inf, 1.5),
            {"type": "eq", "fun": lambda x: x[0] + x[-1] - 2.0}]
    res = jittape.minimize(rosen, np.zeros(n), method="ipopt", constraints=cons,
                           bounds=so.Bounds(-2.0, 2.0))
    assert res.success
    ref = jittape.minimize(rosen, np.zeros(n), method="ipopt", constraints=cons,
                           bounds=so.Bounds(-2.0, 2.0),
                           options={"hessian_approximation": "limited-memory",
                                    "max_iter": 3000})
    np.testing.assert_allclose(res.fun, ref.fun, rtol=1e-6, atol=1e-8)
    assert (a @ res.x <= 1.5 + 1e-7).all() and abs(res.x[0] + res.x[-1] - 2) < 1e-7


def test_ipopt_errors_are_raised_not_swallowed(monkeypatch):
    pytest.importorskip("cyipopt")

    def bad(x):
        raise ZeroDivisionError("from the objective")
    with pytest.raises(ZeroDivisionError, match="from the objective"):
        jittape.minimize(lambda x: np.sum(x ** 2) if x is None else bad(x), np.ones(2),
                         method="ipopt")
    with pytest.raises(TypeError, match="does not take callback"):
        jittape.minimize(rosen, np.ones(2), method="ipopt", callback=print)


def test_ipopt_missing_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "cyipopt", None)
    with pytest.raises(ImportError, match=r"jittape\[ipopt\]"):
        jittape.minimize(rosen, np.ones(2), method="ipopt")


def test_ipopt_callbacks_are_exact_on_their_structures():
    """The Lagrangian's Hessian values on IPOPT's lower-triangle structure against central
    differences of its gradient; the constraint Jacobian against jittape.jacobian."""
    pytest.importorskip("cyipopt")
    from jittape.optimize.ipopt import _Block, _Problem
    x0 = np.array([1.0, 5.0, 5.0, 1.0])
    blocks = [_Block(c, x0) for c in HS071_CONS]
    prob = _Problem(hs071, (), blocks, x0)
    x, lam, sigma = np.array([1.3, 4.1, 3.7, 1.6]), np.array([-0.7, 0.4]), 1.5
    rows, cols = prob.hessianstructure()
    assert (rows >= cols).all()
    h = np.zeros((4, 4))
    h[rows, cols] = prob.hessian(x, lam, sigma)
    h = h + np.tril(h, -1).T

    def grad_lagrangian(z):
        g = sigma * prob.gradient(z)
        jr, jc = prob.jacobianstructure()
        jac = np.zeros((2, 4))
        jac[jr, jc] = prob.jacobian(z)
        return g + lam @ jac
    eps = 1e-6
    fd = np.array([(grad_lagrangian(x + eps * e) - grad_lagrangian(x - eps * e)) / (2 * eps)
                   for e in np.eye(4)])
    np.testing.assert_allclose(h, fd, rtol=1e-7, atol=1e-6)
    jr, jc = prob.jacobianstructure()
    jac = np.zeros((2, 4))
    jac[jr, jc] = prob.jacobian(x)
    np.testing.assert_allclose(jac[1], 2 * x, rtol=1e-14)
    np.testing.assert_allclose(jac[0], np.prod(x) / x, rtol=1e-14)

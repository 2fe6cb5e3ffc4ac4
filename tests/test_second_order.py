"""Hessian-vector products (forward over reverse) and dense Hessians against closed forms;
every op's rule is checked against central differences of its gradient in test_ops.py."""

import numpy as np
import pytest
import scipy.optimize as so

import jittape


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


X = np.linspace(-1.2, 1.5, 9)
V = np.cos(np.arange(9.0))


def test_rosenbrock_hvp_eager_and_replayed():
    np.testing.assert_allclose(jittape.hvp(rosen)(X, V), so.rosen_hess_prod(X, V), rtol=1e-13)
    tape = jittape.record(rosen, X)
    for x in (X + 0.1, X * 0.5):  # replayed at new points
        np.testing.assert_allclose(tape.hvp(x, v=V), so.rosen_hess_prod(x, V), rtol=1e-13)


def test_dense_hessians():
    np.testing.assert_allclose(jittape.hessian(rosen)(X), so.rosen_hess(X), rtol=1e-13)
    a = np.random.default_rng(0).standard_normal((4, 4))
    h = jittape.hessian(lambda x: x @ a @ x)(np.arange(4.0))  # both matmul operands active
    np.testing.assert_allclose(h, a + a.T, rtol=1e-14)
    h = jittape.hessian(lambda m: np.sum(np.sin(m) * m[::-1]))(np.ones((2, 3)))
    assert h.shape == (2, 3, 2, 3)
    np.testing.assert_allclose(h.reshape(6, 6), h.reshape(6, 6).T, atol=1e-14)


def test_several_arguments():
    f = lambda x, y: np.sum(np.exp(x) * y ** 2)  # noqa: E731
    x, y = np.array([0.1, 0.2]), np.array([1.0, 2.0])
    vx, vy = np.array([1.0, -1.0]), np.array([0.5, 0.25])
    hx, hy = jittape.hvp(f, (0, 1))(x, y, (vx, vy))
    np.testing.assert_allclose(hx, np.exp(x) * y ** 2 * vx + 2 * np.exp(x) * y * vy)
    np.testing.assert_allclose(hy, 2 * np.exp(x) * y * vx + 2 * np.exp(x) * vy)


# functions of a 9-vector recording one op each, for ops that may lack a second-order rule
WITHOUT_RULE_CANDIDATES = {
    "svd": lambda x: np.sum(np.linalg.svd(x.reshape(3, 3))[0]),
    "qr": lambda x: np.sum(np.linalg.qr(x.reshape(3, 3))[0]),
    "pinv": lambda x: np.sum(np.linalg.pinv(x.reshape(3, 3))),
}


def op_without_second_order_rule():
    """``(name, f)`` for an op that has no second-order rule, or a skip if all have one."""
    from jittape.sweeps.codegen import has_second_order
    from jittape.ops import OPS
    missing = {op.name for op in OPS if op.differentiable and not has_second_order(op)}
    for name, f in WITHOUT_RULE_CANDIDATES.items():
        if name in missing:
            return name, f
    pytest.skip("every op has a second-order rule")


def test_op_without_second_order_rule_is_named():
    name, f = op_without_second_order_rule()
    x = np.array([3.0, 0.2, 0.1, 0.4, 2.0, 0.3, 0.5, 0.7, 1.0])
    with pytest.raises(jittape.NotDifferentiableError, match=f"'{name}'"):
        jittape.hvp(f)(x, np.ones(9))

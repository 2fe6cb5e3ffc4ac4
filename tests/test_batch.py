"""Batched replays (jittape.api.batch): a tape's value and gradient at a stack of points in
one native call, against replaying the points one by one."""

import numpy as np
import pytest

import jittape
from jittape.custom.examples import checkpoint_example

RNG = np.random.default_rng(5)


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def two(a, x):
    return a * np.sum(np.sin(x) * x) + a ** 2


@pytest.mark.parametrize("threads", [1, 3])
def test_batch_equals_point_by_point(threads):
    X = RNG.standard_normal((37, 6))
    t = jittape.record(rosen, X[0])
    values, grads = t.value_and_gradient(X, batch=True, threads=threads)
    assert values.shape == (37,) and grads.shape == (37, 6)
    for p in range(37):
        v, g = t.value_and_gradient(X[p])
        assert values[p] == pytest.approx(v, rel=1e-14)
        np.testing.assert_allclose(grads[p], g, rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(t.gradient(X, batch=True, threads=threads), grads)
    np.testing.assert_allclose(t.value(X, batch=True), values, rtol=1e-14)
    assert t.compiled


def test_several_arguments_stack_each():
    A, X = RNG.standard_normal(9), RNG.standard_normal((9, 4))
    t = jittape.record(two, 0.5, X[0], argnums=(0, 1))
    values, (ga, gx) = t.value_and_gradient(A, X, batch=True)
    assert ga.shape == (9,) and gx.shape == (9, 4)
    for p in range(9):
        v, (a1, x1) = t.value_and_gradient(A[p], X[p])
        assert values[p] == pytest.approx(v, rel=1e-14)
        assert ga[p] == pytest.approx(a1, rel=1e-14)
        np.testing.assert_allclose(gx[p], x1, rtol=1e-14)


def test_a_guard_failure_names_the_point():
    def f(x):
        return np.sum(x ** 2) if x[0] > 0 else np.sum(x)
    X = np.abs(RNG.standard_normal((5, 3)))
    X[3, 0] = -1.0
    t = jittape.record(f, X[0])
    with pytest.raises(jittape.GuardFailure, match="point 3 of the batch"):
        t.value_and_gradient(X, batch=True)


def test_a_tape_the_compiler_refuses_replays_point_by_point():
    X = RNG.standard_normal((4, 3))
    t = jittape.record(checkpoint_example, X[0], 0.5)
    values, grads = t.value_and_gradient(X, batch=True)
    for p in range(4):
        v, g = t.value_and_gradient(X[p])
        assert values[p] == v
        np.testing.assert_array_equal(grads[p], g)


def test_bad_stacks_are_refused():
    t = jittape.record(rosen, np.zeros(4))
    with pytest.raises(ValueError, match=r"\(m,\) \+ \(4,\)"):
        t.value_and_gradient(np.zeros(4), batch=True)
    with pytest.raises(ValueError, match="shape"):
        t.value_and_gradient(np.zeros((3, 5)), batch=True)
    s = jittape.record(two, 0.5, np.zeros(2), argnums=(0, 1))
    with pytest.raises(ValueError, match=r"\(3,\)"):
        s.value_and_gradient(np.zeros(3), np.zeros((4, 2)), batch=True)
    with pytest.raises(TypeError, match="2 differentiated"):
        s.value_and_gradient(np.zeros(3), batch=True)


def loss(w, x, y):
    return (np.tanh(x @ w) - y) ** 2 + 0.1 * np.sum(w ** 2)


def test_per_sample_gradients():
    """batch_value_and_grad: vmap(value_and_grad(loss), in_axes=(None, 0, 0)) in effect."""
    w, X, y = RNG.standard_normal(4), RNG.standard_normal((25, 4)), RNG.standard_normal(25)
    values, grads = jittape.batch_value_and_grad(loss, 0, (None, 0, 0))(w, X, y)
    assert values.shape == (25,) and grads.shape == (25, 4)
    for i in range(25):
        v, g = jittape.value_and_grad(loss)(w, X[i], y[i])
        assert values[i] == pytest.approx(v, rel=1e-13)
        np.testing.assert_allclose(grads[i], g, rtol=1e-13, atol=1e-15)
    gw, gx = jittape.batch_grad(loss, (0, 1), (None, 0, 0), threads=2)(w, X, y)
    np.testing.assert_allclose(gw, grads, rtol=1e-14)
    for i in range(25):
        np.testing.assert_allclose(gx[i], jittape.grad(loss, 1)(w, X[i], y[i]), rtol=1e-13)


def test_per_sample_gradients_record_again_where_a_guard_fails():
    def f(w, x):
        return np.sum(w * x) if x[0] > 0 else np.sum(w ** 2 * x)
    w, X = RNG.standard_normal(3), RNG.standard_normal((12, 3))
    X[:, 0] = np.where(np.arange(12) % 3 == 0, -1.0, 1.0)
    values, grads = jittape.batch_value_and_grad(f, 0, (None, 0))(w, X)
    for i in range(12):
        v, g = jittape.value_and_grad(f)(w, X[i])
        assert values[i] == pytest.approx(v, rel=1e-14)
        np.testing.assert_allclose(grads[i], g, rtol=1e-14)
    with pytest.raises(ValueError, match="in_axes"):
        jittape.batch_grad(f, 0, (None, None))(w, X)
    with pytest.raises(ValueError, match="different lengths"):
        jittape.batch_grad(f)(X, X[:3])


def test_batched_jvp_and_hvp_stack_per_point_results():
    X, V = RNG.standard_normal((6, 5)), RNG.standard_normal((6, 5))
    t = jittape.record(rosen, X[0])
    values, tangents = t.jvp(X, tangents=V, batch=True)
    hv = t.hvp(X, v=V, batch=True)
    assert values.shape == (6,) and tangents.shape == (6,) and hv.shape == (6, 5)
    for p in range(6):
        v, jv = t.jvp(X[p], tangents=V[p])  # the tangent sweep, point by point
        assert values[p] == v and tangents[p] == pytest.approx(jv, rel=1e-13, abs=1e-13)
        np.testing.assert_array_equal(hv[p], t.hvp(X[p], v=V[p]))
    with pytest.raises(ValueError, match="stacked as the points"):
        t.hvp(X, v=V[:3], batch=True)
    with pytest.raises(ValueError, match="6 points but 3 tangents"):
        t.jvp(X, tangents=V[:3], batch=True)


def test_a_batched_jvp_of_a_scalar_output_is_one_native_reverse_sweep(monkeypatch):
    """``<grad f, v>`` per row from the batched kernel (two arguments, threads), never the
    point-by-point loop; a non-scalar output takes the loop."""
    from jittape.api import batch
    A, X = RNG.standard_normal(7), RNG.standard_normal((7, 4))
    dA, dX = RNG.standard_normal(7), RNG.standard_normal((7, 4))
    t = jittape.record(two, A[0], X[0], argnums=(0, 1))
    monkeypatch.setattr(batch, "pointwise", None)  # (called: a TypeError)
    values, jv = t.jvp(A, X, tangents=(dA, dX), batch=True, threads=2)
    for p in range(7):
        g = jittape.grad(two, argnums=(0, 1))(A[p], X[p])
        assert values[p] == pytest.approx(two(A[p], X[p]), rel=1e-14)
        assert jv[p] == pytest.approx(g[0] * dA[p] + g[1] @ dX[p], rel=1e-13)
    monkeypatch.undo()
    v = jittape.record(np.sin, X[0])  # a vector output: the tangent sweep per point
    np.testing.assert_allclose(v.jvp(X, tangents=dX, batch=True)[1], np.cos(X) * dX,
                               rtol=1e-14)


def test_a_structured_tape_is_refused():
    t = jittape.record(lambda p: np.sum(p["w"] ** 2), {"w": np.ones(3)})
    with pytest.raises(ValueError, match="structured"):
        t.value_and_gradient(np.ones((2, 3)), batch=True)

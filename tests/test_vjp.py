"""jittape.vjp (JAX's convention): pullbacks against finite differences of <cotangent, f>,
against the Jacobian, with structured outputs, and one recording for many cotangents."""

import numpy as np
import pytest

import jittape
from jittape.api import transforms
from jittape.testing import check_gradient

RNG = np.random.default_rng(5)
X = RNG.uniform(0.2, 1.5, 4)
A = RNG.standard_normal((3, 4))


def f(x):
    return np.tanh(A @ x) * np.sum(np.log(x))


def test_pullback_is_the_gradient_of_the_cotangent_weighted_output():
    for _ in range(3):
        w = RNG.standard_normal(3)
        out, pullback = jittape.vjp(f, X)
        np.testing.assert_allclose(out, f(X), rtol=1e-14)
        (g,) = pullback(w)
        check_gradient(lambda x: np.dot(w, f(x)), lambda x: g, (X,))
        np.testing.assert_allclose(g, w @ jittape.jacobian(f)(X), rtol=1e-12, atol=1e-14)


def test_several_primals_and_structured_output():
    def h(x, y):
        return {"a": np.sin(x) * y, "b": (np.sum(x ** 2), y ** 3)}
    y = np.float32(1.5)
    out, pullback = jittape.vjp(h, X, y)
    assert set(out) == {"a", "b"} and out["a"].shape == (4,) and isinstance(out["b"], tuple)
    gx, gy = pullback({"a": np.ones(4), "b": (2.0, 0.5)})
    np.testing.assert_allclose(gx, np.cos(X) * 1.5 + 4.0 * X, rtol=1e-12)
    assert gy.dtype == np.float32  # a float32 primal gets a float32 cotangent (JAX)
    np.testing.assert_allclose(gy, np.sum(np.sin(X)) + 0.5 * 3 * 1.5 ** 2, rtol=1e-6)
    with pytest.raises(ValueError, match="cotangent"):
        pullback({"a": np.ones(3), "b": (2.0, 0.5)})


def test_many_cotangents_one_recording(monkeypatch):
    jac = jittape.jacobian(f)(X)
    calls = []
    real = transforms.record_tape
    monkeypatch.setattr(transforms, "record_tape",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    _, pullback = jittape.vjp(f, X)
    rows = np.array([pullback(e)[0] for e in np.eye(3)])
    np.testing.assert_allclose(rows, jac, rtol=1e-12, atol=1e-14)
    assert calls == [1]


def test_wrong_cotangent_shape_is_refused():
    _, pullback = jittape.vjp(f, X)
    with pytest.raises(ValueError, match="cotangent shape"):
        pullback(np.ones(4))

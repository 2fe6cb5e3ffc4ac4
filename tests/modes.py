"""One check of a scalar function in every mode, shared by the tests of NumPy idioms."""

import numpy as np
import pytest

import jittape
from jittape.testing import check_grads


def check_every_mode(f, x, v, x2, tmp_path, h=1e-5):
    """``f`` (array -> float) at ``x``: jittape's value against NumPy's (``f`` on plain
    arrays), the gradient against central differences, the JVP along ``v`` and the HVP
    against differences of the gradient, and a recorded tape, saved and loaded, replayed at
    ``x2`` (where the tape's guards hold) against a fresh recording."""
    value, _ = jittape.value_and_grad(f)(x)
    assert value == pytest.approx(f(x), rel=1e-13)
    check_grads(f, (x,))
    tangent = jittape.jvp(f, (x,), (v,))[1]
    assert tangent == pytest.approx((f(x + h * v) - f(x - h * v)) / (2 * h), rel=1e-6)
    grad = jittape.grad(f)
    np.testing.assert_allclose(jittape.hvp(f)(x, v), (grad(x + h * v) - grad(x - h * v)) /
                               (2 * h), rtol=1e-5, atol=1e-6)
    tape = jittape.record(f, x)
    tape.save(tmp_path / "t.npz")
    for t in (tape, jittape.load(tmp_path / "t.npz")):
        v2, g2 = t.value_and_gradient(x2)
        assert v2 == pytest.approx(f(x2), rel=1e-13)
        np.testing.assert_allclose(g2, grad(x2), rtol=1e-13)

"""Rules for libraries' own helpers that convert to float (jittape/numpy/library_rules.py)."""

import numpy as np
import pytest

import jittape

lineshapes = pytest.importorskip("lmfit.lineshapes")
X = np.linspace(0.1, 5.0, 41)


def _central(f, p, h=1e-6):
    return np.array([(f(p + h * e) - f(p - h * e)) / (2 * h) for e in np.eye(p.size)])


@pytest.mark.parametrize("shape, p", [
    (lambda p: lineshapes.exponential(X, p[0], p[1]), [2.0, 1.5]),
    (lambda p: lineshapes.thermal_distribution(X, p[0], p[1], p[2], form="fermi"),
     [1.2, 2.03, 0.7]),
    (lambda p: lineshapes.thermal_distribution(X, p[0], p[1], p[2], form="bose"),
     [1.2, 0.03, 0.7])], ids=["exponential", "fermi", "bose"])
def test_lmfit_not_zero_keeps_the_derivative_and_replays(shape, p):
    f = lambda p: np.sum(shape(p) ** 2)  # noqa: E731
    p = np.array(p)
    assert jittape.grad(f)(p) == pytest.approx(_central(f, p), rel=1e-6)
    tape = jittape.record(f, p)
    assert tape.gradient(p * 1.1) == pytest.approx(_central(f, p * 1.1), rel=1e-6)


def test_not_zero_below_tiny_is_a_constant_and_outside_recording_lmfits_own():
    g = jittape.grad(lambda v: lineshapes.not_zero(v) * 2.0 + v)(1e-300)
    assert g == 1.0  # the constant tiny: only v's own term
    assert lineshapes.not_zero(0.0) == lineshapes.tiny
    assert type(lineshapes.not_zero(np.float64(3.0))) is float

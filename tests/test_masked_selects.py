"""Data-dependent masks recorded as selects (jittape/numpy/selection.py: masked_select):
``x[x < 0] = 0`` replays at points where the mask differs; mask-dependent shapes keep the
guard."""

import numpy as np
import pytest

import jittape
from jittape import GuardFailure

RNG = np.random.default_rng(3)
DATA = RNG.standard_normal((30, 4))
TARGET = RNG.standard_normal(30)


def relu_loss(w):
    """One hidden ReLU layer written as scikit-learn writes it: a masked write."""
    W1, W2 = w[:12].reshape(4, 3), w[12:15]
    H = DATA @ W1
    H[H < 0] = 0.0
    return np.mean((H @ W2 - TARGET) ** 2)


def row_mask(w):
    A = np.outer(w, np.arange(1.0, 4.0))  # (n, 3)
    A[w > 0.1] = np.array([1.0, w[0], 2.0])  # one row broadcast into the selected rows
    return np.sum(A ** 2)


def numpy_value_and_grad(f, w, h=1e-6):
    fd = np.array([(f(w + h * e) - f(w - h * e)) / (2 * h) for e in np.eye(w.size)])
    return f(w), fd


@pytest.mark.parametrize("f, n", [(relu_loss, 15), (row_mask, 5)])
def test_a_masked_write_replays_where_the_mask_differs(f, n):
    w0 = RNG.standard_normal(n)
    tape = jittape.record(f, w0)
    for _ in range(5):
        w = RNG.standard_normal(n)
        value, grad = tape.value_and_gradient(w)
        ref_value, ref_grad = numpy_value_and_grad(f, w)
        assert value == pytest.approx(ref_value, rel=1e-12)
        np.testing.assert_allclose(grad, ref_grad, rtol=1e-6, atol=1e-7)
        v = RNG.standard_normal(n)
        np.testing.assert_allclose(tape.jvp(w, tangents=v)[1], ref_grad @ v, rtol=1e-6,
                                   atol=1e-7)
        fd_hvp = (jittape.grad(f)(w + 1e-5 * v) - jittape.grad(f)(w - 1e-5 * v)) / 2e-5
        np.testing.assert_allclose(tape.hvp(w, v=v), fd_hvp, rtol=1e-5, atol=1e-6)


@pytest.mark.compiled
def test_a_masked_write_compiles_and_taped_records_once():
    tape = jittape.record(relu_loss, RNG.standard_normal(15)).compile()
    fast = jittape.taped(relu_loss)
    for _ in range(20):
        w = RNG.standard_normal(15)
        np.testing.assert_allclose(tape.gradient(w), jittape.grad(relu_loss)(w), rtol=1e-12)
        fast.value_and_grad(w)
    assert fast.stats.recordings == 1 and fast.stats.guard_failures == 0


def test_the_sparsity_pattern_keeps_both_branches():
    def f(x):
        y = x * 2.0
        y[x > 0] = 0.0
        return y
    tape = jittape.record(f, np.array([-1.0, 1.0, -2.0]))  # one element selected
    pattern = tape.jacobian_sparsity().toarray()
    np.testing.assert_array_equal(pattern, np.eye(3, dtype=bool))  # any may be either


def test_mask_dependent_shapes_keep_the_guard():
    def read(x):
        return np.sum(x[x > 0] ** 2)

    def write_k(x):
        y = x.copy()
        y[x > 0] = y[x > 0] * 2.0  # one value per selected element
        return np.sum(y)
    for f in (read, write_k):
        tape = jittape.record(f, np.array([1.0, -1.0, 2.0]))
        tape.gradient(np.array([3.0, -2.0, 1.0]))  # the same mask: replays
        with pytest.raises(GuardFailure):
            tape.gradient(np.array([-3.0, 2.0, 1.0]))

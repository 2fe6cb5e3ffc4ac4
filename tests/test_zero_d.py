"""0-d values: an active scalar indexes like a NumPy 0-d array (x[()], x[None], x[..., None])
and advanced indexing is a copy that never links to its base."""

import numpy as np
import pytest

import jittape
from jittape.testing import check_grads


@pytest.mark.parametrize("key", [(), None, (Ellipsis, None), (None, None)])
def test_scalar_indexing_follows_numpy(key):
    f = lambda x: np.sum(np.sin(x)[key] * np.arange(1.0, 2.0))  # noqa: E731
    x = 0.7
    assert np.shape(np.asarray(np.sin(x))[key]) == np.shape(jittape.record(
        lambda x: np.sin(x)[key], x).value(x))
    check_grads(f, (x,))
    np.testing.assert_allclose(jittape.grad(f)(x), np.cos(x), rtol=1e-12)


def test_scalar_reshape_and_bad_keys():
    g = jittape.grad(lambda x: np.sum(np.reshape(x * x, (1, 1))))(3.0)
    assert g == 6.0
    with pytest.raises(IndexError, match="0-d"):
        jittape.grad(lambda x: (x * 2.0)[0])(1.0)


def test_advanced_indexing_is_a_copy():
    def f(x):
        y = x[[0, 1]]       # advanced: a copy
        y[0] = 100.0        # must not reach x
        return np.sum(x * x) + np.sum(y)
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(jittape.grad(f)(x), [2.0, 5.0, 6.0])
    assert jittape.record(f, x).value(x) == pytest.approx(f(x.copy()))


@pytest.mark.parametrize("x", [np.ones(3, np.float32), np.float32(2.0), np.array(2.0),
                               np.array(2.0, np.float32), 2.0, np.ones(3)],
                         ids=["f32 array", "f32 scalar", "0-d f64", "0-d f32", "float", "f64"])
def test_gradient_takes_the_form_of_its_argument(x):
    """JAX's convention: float32 in, float32 gradient (float64 accumulation inside); a 0-d
    array's gradient is a 0-d array; eager and replayed alike."""
    f = lambda x: np.sum(x ** 3)  # noqa: E731
    for g in (jittape.grad(f)(x), jittape.record(f, x).gradient(x)):
        assert type(g) is type(x)
        assert np.shape(g) == np.shape(x)
        assert getattr(g, "dtype", None) == getattr(x, "dtype", None)
        np.testing.assert_allclose(g, 3 * np.asarray(x, np.float64) ** 2, rtol=1e-7)


def test_all_and_any_of_a_comparison_are_guarded():
    f = lambda x: np.sum(x ** 2) if (x > 0).all() else -np.sum(x)  # noqa: E731
    np.testing.assert_array_equal(jittape.grad(f)(np.ones(3)), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(jittape.grad(f)(np.array([1.0, -1.0])), [-1.0, -1.0])
    with pytest.raises(jittape.GuardFailure):
        jittape.record(f, np.ones(3)).gradient(np.array([1.0, -1.0, 1.0]))
    g = lambda x: x[0] if (x < 0).any() else 2.0 * x[1]  # noqa: E731
    np.testing.assert_array_equal(jittape.grad(g)(np.ones(2)), [0.0, 2.0])

"""Arrays built from active values, NumPy's way: np.array / np.asarray of (nested) lists of
actives and numbers, np.r_, np.c_, np.block, zeros_like & co. filled by item assignment, a
size-1 output taken as a scalar, float() of a comparison. Each against NumPy's value and
central differences, and replayed."""

import numpy as np
import pytest

import jittape
from jittape import ActiveConversionError
from jittape.testing import check_grads

X = np.array([0.5, 2.0, 3.0])

CASES = {
    "array of scalars": lambda x: np.sum(np.array([x[0] * x[1], 1.0, x[2] ** 2]) * [1, 2, 3]),
    "nested asarray": lambda x: np.sum(np.asarray([[x[0], 2.0], [3.0, x[1] * x[2]]]) ** 2),
    "r_ and c_": lambda x: np.sum(np.r_[[x[0]], [x[1]]] ** 2) + np.sum(np.c_[[x[2]], [x[0]]]),
    "block": lambda x: np.sum(np.block([[np.array([x[0]]), np.array([x[2]])]]) ** 3),
    "object array meets active": lambda x: np.sum(np.array([x[0], 1.0]) * x[1:]),
    "ufunc of object array and active": lambda x: np.sum(np.maximum(np.array([x[0], 1.0]),
                                                                    x[:2])),
    "concatenate with object array": lambda x: np.sum(np.concatenate([np.array([x[0], 1.0]),
                                                                      x]) ** 2),
    "zeros_like filled": lambda x: _filled(x),
    "full_like of an active": lambda x: np.sum(np.full_like(x, x[0]) * x),
    "size-1 output": lambda x: x[:1] * 3.0 + x[1:2] ** 2,
    "ufunc of an object array": lambda x: np.sum(np.sin(np.array([x[0], x[1] * 2])) +
                                                 np.arctan2(np.array([x[0], x[2]]), 2.0)),
    "float of a comparison": lambda x: x[0] * float(x[0] >= 0) + x[1] * int(x[1] < 0),
}


def _filled(x):
    g = np.zeros_like(x)
    g[0] = x[0] * x[1]
    g[2] = 5.0
    e = np.empty_like(x)
    e[0] = 1.0
    e[1:] = x[1:]
    return np.sum(g * g) + np.sum(np.ones_like(x) * x) + np.sum(e)


@pytest.mark.parametrize("name", list(CASES))
def test_built_arrays(name):
    f = CASES[name]
    np.testing.assert_allclose(jittape.value_and_grad(f)(X)[0], np.sum(f(X)), rtol=1e-14)
    check_grads(f, (X,))
    tape = jittape.record(f, X)
    x2 = X + 0.1
    np.testing.assert_allclose(tape.gradient(x2), jittape.grad(f)(x2), rtol=1e-13)


def test_returned_object_array_is_an_active_array():
    f = lambda x: np.array([[x[0], 2.0], [3.0, x[1]]])  # noqa: E731
    J = jittape.jacobian(f)(X)
    assert J.shape == (2, 2, 3)
    np.testing.assert_array_equal(J[0, 0], [1, 0, 0])
    np.testing.assert_array_equal(J[1, 1], [0, 1, 0])
    assert not J[0, 1].any()


def test_like_functions_keep_numpy_dtypes():
    seen = {}

    def f(x):
        seen["int"] = np.zeros_like(x, dtype=int)
        return np.sum(x)
    jittape.grad(f)(X)
    assert type(seen["int"]) is np.ndarray and seen["int"].dtype == np.int_


def test_conversions_that_drop_the_derivative_are_named():
    with pytest.raises(ActiveConversionError, match="np.stack"):
        jittape.grad(lambda x: np.sum(np.asarray(x)))(X)
    with pytest.raises(ActiveConversionError, match="float"):
        jittape.grad(lambda x: np.sum(np.array([x[0], x[1]], dtype=float)))(X)
    with pytest.raises(ActiveConversionError, match="zeros_like"):
        jittape.grad(lambda x: float(x[0]))(X)

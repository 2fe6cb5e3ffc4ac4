"""Arrays built from active values, NumPy's way: np.array / np.asarray of (nested) lists of
actives and numbers, np.r_, np.c_, np.block, zeros_like & co. filled by item assignment, a
size-1 output taken as a scalar, float() of a comparison. Each against NumPy's value and
central differences, and replayed."""

import numpy as np
import pytest
import scipy.special
import scipy.stats

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
    # active arrays inside np.array / np.asarray (autograd's test_array_from_arrays{,_2})
    "array of active arrays": lambda x: np.sum(np.sin(np.array([x, 2 * x])) * C32.T),
    "nested array of arrays": lambda x: np.sum(np.array([[2 * x, x + 1], [x, x]]) ** 2),
    "array of arrays and constants": lambda x: np.sum(np.array([x, C32[:, 0], x ** 2]) ** 3),
    "asarray of an active array": lambda x: np.sum(np.asarray(x) * np.arange(3.0)),
    "ndarray method given an active": lambda x: np.sum(np.ones((2, 3)).dot(x) ** 2),
    # np.r_ / np.c_ of active arrays (autograd's test_r_*, test_c_*)
    "r_ of arrays": lambda x: np.sum(np.sin(np.r_[x, x[::-1]]) * np.arange(6.0)),
    "r_ with constants and a slice": lambda x: np.sum(np.cos(np.r_[x, C32[0, 0], 1:4]) * 2.0),
    "r_ of 2-d and directive": lambda x: np.sum(np.r_["1,2,0", x, x * 2] ** 2) + np.sum(
        np.r_["0,2", x, C32[:, 0]] ** 3),
    "c_ of 1-d and 2-d": lambda x: np.sum(np.c_[x, C32[:, 0], x ** 2] * np.sin(np.c_[
        np.reshape(x, (3, 1)), C32[:, 1], 1:4])),
    # NumPy's statistics of Python lists of actives (autograd's test_*_list_of_boxes)
    "mean of a list": lambda x: np.mean([x[0], x[1] + 2]) * np.mean((x, x ** 2)),
    "std and var of lists": lambda x: np.std([x[0], x[1] + 2, x[2]]) + np.var((x, 3 * x),
                                                                                 axis=0)[1],
    "append to a list": lambda x: np.sum(np.append([1.0, x[0], 3.0], x[1:]) ** 2),
    # SciPy's functions given object arrays and lists of actives (issue 27, item 3)
    "scipy logsumexp of an object array": lambda x: scipy.special.logsumexp(
        np.array([x[0], 2 * x[1], 1.0])),
    "scipy logsumexp of a list": lambda x: scipy.special.logsumexp([x[0], x[1] * x[2]]),
    "scipy stats of a list": lambda x: np.sum(scipy.stats.norm.logpdf([x[0], x[1] - 1.0])),
    # sequences mixing active arrays, active scalars, arrays and numbers (issue 27, item 2)
    "concatenate an array and a list of scalars": lambda x: np.sum(np.concatenate(
        [x[1:] ** 2 - x[:-1], [x[0] - 1.0, x[-1] + 1.0]]) ** 2),
    "concatenate nested tuples": lambda x: np.sum(np.concatenate(([x[0]], (x[1], 2.0), x))
                                                  ** 3),
    "concatenate without a top-level active": lambda x: np.sum(np.concatenate(
        [[x[0], 1.0], C32[:, 0]]) ** 2),
    "stack of scalars and lists": lambda x: np.sum(np.stack([x[:2], [x[2], 1.0]]) ** 3) +
    np.sum(np.stack([x[0], 1.0, x[1] * x[2]]) ** 2),
    "hstack, vstack, dstack of mixed lists": lambda x: np.sum(np.hstack([x, [x[0], 2.0], 3.0])
                                                              ** 2) + np.sum(np.vstack(
        [x[:2], [x[1], 2.0]]) ** 3) + np.sum(np.dstack([x[:2], (1.0, x[2])]) ** 2),
    "column_stack of mixed lists": lambda x: np.sum(np.column_stack([x[:2], [x[1], 2.0]]) ** 3),
    "block of mixed leaves": lambda x: np.sum(np.block([[np.outer(x[:2], x), C32[:2, :1]],
                                                        [x, 5.0]]) ** 3),
    "append a list of actives": lambda x: np.sum(np.append(x, [x[0] * x[1], 2.0]) ** 2),
    # object arrays and nested lists of actives given to np.linalg (issue 27, item 3)
    "det of an object array": lambda x: np.linalg.det(np.asarray([[x[0], x[1]], [x[2], 1.0]])),
    "det of a nested list": lambda x: np.linalg.det([[x[0], x[1]], [x[2], 1.0]]),
    "inv and solve of object arrays": lambda x: np.sum(np.linalg.inv(np.array(
        [[x[0], 1.0], [x[2], 3.0]]))) + np.sum(np.linalg.solve([[x[0], 1.0], [x[1], 3.0]],
                                                              [x[2], 1.0])),
    "norm and slogdet of object arrays": lambda x: np.linalg.norm(np.array([x[0], x[1], 2.0]))
    + np.linalg.slogdet(np.array([[x[0], x[1]], [x[2], 4.0]]))[1],
    # an integer cast has NumPy's value and no derivative (autograd's test_cast_to_int)
    "cast to int": lambda x: np.sum(np.array([x, x ** 2])[np.int64(x * 0.6)]) + np.sum(
        (x * 0.7).astype(int) * x),
}
C32 = np.array([[0.3, -1.2], [2.0, 0.7], [1.1, -0.4]])


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


def test_elements_of_an_active_array_cost_no_record_per_element():
    """np.array([x, x]) of an active array: one gather from x, not a record per element;
    np.r_[x] and np.asarray(x) give x itself back (no record)."""
    tapes = [jittape.record(lambda x: np.array([x, x]), X), jittape.record(
        lambda x: np.r_[x], X), jittape.record(lambda x: np.asarray(x), X)]
    assert [len(t.arrays.op) for t in tapes] == [2, 1, 1]


def test_a_write_into_asarray_of_an_active_changes_it_as_numpys():
    """In NumPy np.asarray(x) of a float64 array is x: a write into it changes x. So it
    is here (np.asarray of an active array is the array); np.array(x) is a copy."""
    def f(x):
        a = np.asarray(x)
        a[0] = 5.0
        return np.sum(x)
    np.testing.assert_allclose(jittape.grad(f)(X), np.r_[0.0, np.ones(X.size - 1)])
    assert jittape.value_and_grad(f)(X)[0] == pytest.approx(f(X.copy()))

    def h(x):
        a = np.array(x)
        a[0] = 5.0
        return np.sum(x) + np.sum(a)
    np.testing.assert_allclose(jittape.grad(h)(X), np.r_[1.0, 2.0 * np.ones(X.size - 1)])

    def g(x):
        a = np.array([x, x])
        a[0] = 5.0
        return np.sum(a)
    np.testing.assert_allclose(jittape.grad(g)(X), np.ones_like(X))


def test_cast_to_int_is_guarded():
    f = lambda x: np.sum(x * np.int64(x))  # noqa: E731
    tape = jittape.record(f, X)
    np.testing.assert_allclose(tape.gradient(X + 0.1), np.int64(X + 0.1))
    with pytest.raises(jittape.GuardFailure):
        tape.gradient(X + 1.0)


def test_conversions_that_drop_the_derivative_are_named():
    with pytest.raises(ActiveConversionError, match="np.stack"):
        jittape.grad(lambda x: np.sum(np.asarray(x, dtype=np.float32)))(X)
    with pytest.raises(ActiveConversionError, match="float"):
        jittape.grad(lambda x: np.sum(np.array([x[0], x[1]], dtype=np.float16)))(X)
    with pytest.raises(ActiveConversionError, match="zeros_like"):
        jittape.grad(lambda x: float(x[0]))(X)


def test_an_object_array_np_linalg_has_no_rule_for_gets_jittapes_error():
    """NumPy's own error would be a UFuncTypeError from the gufunc (no object loop)."""
    from jittape import NotDifferentiableError
    with pytest.raises(NotDifferentiableError, match="numpy.linalg.tensorinv"):
        jittape.grad(lambda x: np.sum(np.linalg.tensorinv(np.array([[x[0], x[1]],
                                                                     [x[2], 4.0]]))))(X)


def test_np_linalg_outside_a_recording_is_numpys():
    import pickle
    a = np.array([[2.0, 1.0], [0.5, 3.0]])
    assert np.linalg.det(a) == np.linalg.det.__wrapped_by_jittape__(a)
    assert pickle.loads(pickle.dumps(np.linalg.det)) is np.linalg.det
    np.testing.assert_array_equal(np.linalg.inv(a), np.linalg.inv.__wrapped_by_jittape__(a))


_ISSUE_27 = [name for name in CASES if any(w in name for w in (
    "concatenate", "stack", "block", "append a list", "det ", "inv and", "norm and",
    "scipy"))]


@pytest.mark.parametrize("name", _ISSUE_27)
def test_mixed_sequences_and_linalg_objects_in_forward_and_second_order(name):
    """The sequences of mixed lists and np.linalg's object arrays (issue 27) in the other
    modes: the JVP against central differences of f, the HVP against central differences
    of the gradient."""
    f, h = CASES[name], 1e-5
    v = np.array([0.3, -0.7, 0.5])
    tangent = jittape.jvp(lambda x: np.sum(f(x)), (X,), (v,))[1]
    np.testing.assert_allclose(tangent, (np.sum(f(X + h * v)) - np.sum(f(X - h * v))) / (2 * h),
                               rtol=1e-6, atol=1e-8)
    g = jittape.grad(lambda x: np.sum(f(x)))
    np.testing.assert_allclose(jittape.hvp(lambda x: np.sum(f(x)))(X, v),
                               (g(X + h * v) - g(X - h * v)) / (2 * h), rtol=1e-5, atol=1e-6)

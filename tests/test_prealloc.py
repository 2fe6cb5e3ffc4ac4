"""Preallocated arrays (issue 27, item 1): np.zeros / np.empty / np.ones / np.full (and the
*_like forms of plain arrays) created inside a recorded function and filled with active
values by item and slice assignment, views, out=, np.copyto, np.put, np.putmask,
np.fill_diagonal, .flat and in-place operators. Each case against NumPy's own value (the
function run on plain arrays), central differences in reverse and forward mode, the HVP
against differences of the gradient, replay at a new point, a saved and loaded tape, and the
sparsity pattern of a residual vector."""

import threading

import numba
import numpy as np
import pytest

import jittape
from modes import check_every_mode

X = np.array([0.5, -1.2, 2.0, 0.8])
V = np.array([0.3, -0.7, 0.5, 0.2])


def _residual(p):  # the idiom of least-squares residuals (Rosenbrock's)
    r = np.zeros(2 * p.size - 2)
    r[0::2] = 10.0 * (p[1:] - p[:-1] ** 2)
    r[1::2] = 1.0 - p[:-1]
    return r


def _rows(p):  # J[i][j] = ...: a write into a row view
    J = np.zeros((p.size, p.size))
    for i in range(p.size):
        J[i][i] = p[i] ** 2
        J[i, (i + 1) % p.size] = np.sin(p[i])
    return np.sum(J @ p)


def _view_taken_first(p):  # a view taken before the first active write still aliases
    r = np.ones(p.size)
    tail = r[1:]
    r[0] = p[0] * p[1]
    tail[:] = p[1:] * r[0]
    tail[-1] += 1.0
    return np.sum(r * r)


def _ode_rhs(p):  # an ODE right-hand side filled component by component, 2-d and F order
    dy = np.empty((2, p.size), order="F")
    dy[0] = p * p[::-1]
    dy[1, :] = np.cos(p)
    dy[:, 0] *= 3.0
    return np.sum(dy.T[:, 1] * dy[0]) + np.sum(dy)


def _out_arguments(p):
    r = np.empty(p.size)
    np.multiply(p, 2.0, out=r)
    np.add(r, p ** 2, out=r)
    r += np.exp(p)
    r[1:] -= r[:-1]
    s = np.zeros(p.size)
    np.sin(r, s)  # out given positionally
    return np.sum(s * r)


def _functions_that_write(p):
    a = np.ones(5)
    np.copyto(a, np.concatenate([p, [2.0]]))
    b = np.full(6, 0.5)
    np.put(b, [0, 5, 2], p[1:])
    np.putmask(b, np.arange(6) % 2 == 1, p[:2] ** 2)
    c = np.zeros((3, 3))
    np.fill_diagonal(c, p[0])
    c.flat[1] = p[2]
    d = np.zeros(4)
    d.fill(p[3])
    return np.sum(a ** 3) + np.sum(b * np.arange(6.0)) + np.sum(c @ p[:3]) + np.sum(d * p)


def _arithmetic_of_preallocations(p):  # 2.0 * np.ones(n) is a preallocation too
    r = 2.0 * np.ones(p.size) + np.zeros_like(np.arange(4.0))
    r[::2] = p[::2] ** 3
    q = r.reshape(2, 2)
    return np.dot(r, p) + np.sum(q.T @ q) + r.max() + np.linalg.norm(r)


def _guarded(p):
    r = np.zeros(p.size)
    r[:] = p
    r[r < 0] = 0.0  # a mask of an active comparison: guarded
    return np.sum(r ** 2) if r[0] > 0 else np.sum(r)


def _scatter_add(p):  # np.add.at / np.subtract.at: repeated indices accumulate (assembly)
    r = np.zeros(4)
    np.add.at(r, [0, 2, 0, 3, 0, 2], p[[0, 1, 2, 3, 1, 0]] ** 2)
    np.subtract.at(r, [1, 1], p[:2])
    row = np.ones((2, 3))[1]
    np.add.at(row, [0, 0, 2], np.sin(p[:3]))
    g = np.zeros_like(p)
    np.add.at(g, ([3, 3, 1],), 1.5 * p[0])
    return np.sum(r * np.arange(1.0, 5.0)) + np.sum(row ** 3) + np.sum(g ** 2)


CASES = {
    "residual": lambda p: np.sum(_residual(p) ** 2),
    "rows": _rows,
    "view taken first": _view_taken_first,
    "ode rhs": _ode_rhs,
    "out arguments": _out_arguments,
    "functions that write": _functions_that_write,
    "arithmetic of preallocations": _arithmetic_of_preallocations,
    "guarded": _guarded,
    "scatter add": _scatter_add,
}


@pytest.mark.parametrize("name", list(CASES))
def test_preallocated_arrays_in_every_mode(name, tmp_path):
    check_every_mode(CASES[name], X, V, X + 0.05, tmp_path)


def test_residual_sparsity_pattern_and_jacobian():
    jac = jittape.sparse_jacobian(_residual)(X)
    dense = jittape.jacobian(_residual)(X)
    np.testing.assert_allclose(jac.toarray(), dense, rtol=1e-14)
    assert jac.nnz == 3 * (X.size - 1)  # 2 entries per r[0::2], 1 per r[1::2]
    expected = np.zeros_like(dense)
    for k in range(X.size - 1):
        expected[2 * k, k] = -20.0 * X[k]
        expected[2 * k, k + 1] = 10.0
        expected[2 * k + 1, k] = -1.0
    np.testing.assert_allclose(dense, expected, rtol=1e-14)


def test_numpy_functions_are_numpys_outside_a_recording():
    zeros = np.zeros
    seen = []
    jittape.grad(lambda x: seen.append(np.zeros) or np.sum(x))(X)
    assert np.zeros is zeros and type(np.zeros(3)) is np.ndarray
    assert seen[0] is not zeros  # replaced while recording, restored after
    assert np.zeros.__doc__ == seen[0].__doc__ and seen[0].__wrapped__ is zeros


def test_other_threads_get_plain_arrays_while_recording():
    kinds = []
    started, release = threading.Event(), threading.Event()

    def other():
        started.wait(10)
        kinds.append(type(np.zeros(3)))
        release.set()

    def f(x):
        started.set()
        release.wait(10)
        kinds.append(type(np.zeros(3)).__name__)
        return np.sum(x)
    th = threading.Thread(target=other)
    th.start()
    jittape.grad(f)(X)
    th.join()
    assert kinds == [np.ndarray, "Prealloc"]


@numba.njit(cache=False)
def _numba_fill(n):
    a = np.zeros(n)
    b = np.empty((n, 2))
    b[:] = 1.0
    return a.sum() + b.sum() + np.ones(n).sum() + np.full(n, 2.0).sum()


def test_numba_functions_compiled_while_recording_see_numpys_functions():
    f = lambda x: np.sum(x) * _numba_fill(3)  # noqa: E731  (compiled inside the recording)
    np.testing.assert_allclose(jittape.grad(f)(X), np.full(4, 15.0))


def test_raw_memory_behind_jittapes_back_is_nan_never_a_stale_constant():
    def f(x):
        r = np.zeros(2)
        r[0] = x[0]
        seen.append(r.view(np.ndarray).copy())  # C code reading the memory directly
        seen.append(np.asarray(r))  # library code converting it: its active value
        return np.sum(r)
    seen = []
    jittape.grad(f)(X)
    assert np.isnan(seen[0]).all()
    assert isinstance(seen[1], jittape.numpy.active.Active)


def test_methods_active_arrays_lack_are_refused_once_active():
    def f(x):
        r = np.zeros(3)
        r.sort()  # fine while plain
        r[0] = x[0]
        r.sort()
        return np.sum(r)
    with pytest.raises(jittape.NotDifferentiableError, match=r"ndarray\.sort"):
        jittape.grad(f)(X)


def test_plain_preallocations_stay_numpy_arrays_in_results():
    def f(x):
        r = np.zeros(3)
        r[1] = 2.0  # no active value: NumPy's array throughout
        seen.append(np.array_repr(r))
        return np.sum(x) * r[1]
    seen = []
    assert jittape.grad(f)(X) == pytest.approx(np.full(4, 2.0))
    assert seen == ["array([0., 2., 0.])"]
    out = jittape.jacobian(lambda x: np.zeros(2) + 0.0 * x[0])(X)
    assert type(out) is np.ndarray and out.shape == (2, 4) and not out.any()


def test_add_at_sums_in_numpys_order():
    """np.add.at's repeated indices add in the order they come: the recorded value is
    NumPy's to the last bit (values whose sum depends on the order)."""
    b = np.array([1e16, 1.0, -1e16, 1.0, 3.0])
    idx = [0, 0, 0, 1, 0]

    def f(z):
        r = np.zeros(2)
        np.add.at(r, idx, b * z)
        return r[0] * 3.0 + r[1]
    x = np.ones(5)
    assert jittape.value_and_grad(f)(x)[0] == f(x)
    np.testing.assert_array_equal(jittape.grad(f)(x), b * np.where(np.array(idx) == 0, 3.0, 1.0))
    outside = np.zeros(2)
    with pytest.raises(jittape.NotDifferentiableError, match="add.at writes active values"):
        jittape.grad(lambda z: np.add.at(outside, [0, 1], z[:2]) or np.sum(z))(x)


def test_what_active_preallocations_refuse():
    """ufunc.at beyond add and subtract, and pickling an array holding active values."""
    import pickle

    def multiply_at(z):
        r = np.ones(3)
        np.multiply.at(r, [0, 1], z[:2])
        return np.sum(r)

    def pickled(z):
        r = np.zeros(3)
        r[0] = z[0]
        pickle.dumps(r)
        return np.sum(r)

    def plain(z):
        r = np.zeros(3)
        r[0] = 2.0
        assert pickle.loads(pickle.dumps(r)).tolist() == [2.0, 0.0, 0.0]  # NumPy's array
        return np.sum(z)
    with pytest.raises(jittape.NotDifferentiableError, match="only np.add.at"):
        jittape.grad(multiply_at)(X)
    with pytest.raises(jittape.NotDifferentiableError, match="pickling"):
        jittape.grad(pickled)(X)
    jittape.grad(plain)(X)

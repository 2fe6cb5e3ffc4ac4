"""The array API namespace of active values and SciPy by any import order (issue 27, item 4).

``x.__array_namespace__()`` of an active ``x`` is :mod:`jittape.numpy.array_api`; the
standard's functions that NumPy 2 added (``astype``, ``cumulative_sum``, ``unstack``, ...)
are checked in every mode against NumPy's values and central differences, the guarded ones
(``any``, ``argsort``, ...) against NumPy's answers and on replay. SciPy's array-API
functions are checked in fresh interpreters with the names bound before and after
``import jittape`` (SciPy's switch is set only while a recording runs)."""

import json
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jittape
from jittape.numpy import array_api
from jittape.testing import check_grads
from modes import check_every_mode
from jittape import NotDifferentiableError

X = np.array([0.5, -1.2, 2.0, 0.8, 1.4, -0.3])
V = np.array([0.3, -0.7, 0.5, 0.2, -0.1, 0.4])


def _namespace_calls(x):  # SciPy's style: xp from the array, then xp's functions
    xp = x.__array_namespace__()
    a = xp.reshape(x, (2, 3))
    s = xp.sum(xp.exp(a), axis=1) + xp.max(a, axis=0)[:2]
    t = xp.asarray([s[0], s[1] * 2.0, 1.0])  # a list mixing actives and a number
    return xp.sum(t ** 2) + xp.mean(xp.matrix_transpose(a) @ a) + xp.sum(a.mT[0])


CASES = {
    "namespace calls": _namespace_calls,
    "cumulative_sum": lambda x: np.sum(np.cumulative_sum(x, include_initial=True) ** 2),
    "cumulative_prod": lambda x: np.sum(np.cumulative_prod(np.reshape(x, (2, 3)), axis=1)),
    "astype": lambda x: np.sum(np.astype(x, np.float64) * x),
    "unstack": lambda x: np.sum(np.unstack(np.reshape(x, (3, 2)), axis=1)[1] ** 3),
    "broadcast_arrays": lambda x: np.sum(np.broadcast_arrays(x[:3, None], x[3:])[0] *
                                         np.broadcast_arrays(x[:3, None], x[3:])[1]),
    "meshgrid": lambda x: np.sum(np.meshgrid(x[:2], x[2:5])[0] * np.meshgrid(x[:2], x[2:5])[1]
                                 ** 2) + np.sum(np.meshgrid(x[:2], x[2:], indexing="ij")[1]),
    "fftshift": lambda x: np.sum(np.fft.fftshift(np.reshape(x, (2, 3))) * np.arange(6.0)
                                 .reshape(2, 3)) + np.sum(np.fft.ifftshift(x, axes=0) * X),
    "linalg.outer and norms": lambda x: np.sum(np.linalg.outer(x[:3], x[3:]) ** 2) +
    np.linalg.vector_norm(np.reshape(x, (2, 3)), axis=(0, 1)) +
    np.sum(np.linalg.vector_norm(np.reshape(x, (2, 3)), axis=1, ord=3, keepdims=True)) +
    np.linalg.matrix_norm(np.reshape(x, (2, 3))) +
    np.linalg.matrix_norm(np.reshape(x, (2, 3)), ord=1),
    "multi_dot and cond": lambda x: np.linalg.multi_dot([x[:2], np.ones((2, 3)) + x[2],
                                                          np.reshape(x, (3, 2)), x[4:]]) +
    np.linalg.cond(np.reshape(x[:4], (2, 2)) + 3.0 * np.eye(2)) +
    np.linalg.cond(np.reshape(x[2:], (2, 2)) + 3.0 * np.eye(2), 1),
    "unique_values": lambda x: np.sum(np.unique_values(np.round(x * 0.0) + x) ** 2),
    "guarded": lambda x: (np.sum(x[np.argsort(x)] * np.arange(6.0))
                          + np.count_nonzero(x > 0) * x[0] + np.any(x > 1.5) * x[1]
                          + np.all(x > -2.0) * x[2] + np.sum(x[np.nonzero(x > 0)]) +
                          x[np.searchsorted(np.sort(x), 0.7)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_standard_functions_in_every_mode(name, tmp_path):
    check_every_mode(CASES[name], X, V, X * 1.01, tmp_path)  # the guards hold at X * 1.01


def test_guarded_answers_are_numpys_and_a_changed_answer_records_again():
    f = CASES["guarded"]
    tf = jittape.taped(f)
    for x in (X, X * 1.01, -X, X[::-1].copy()):  # argsort, any and nonzero change
        np.testing.assert_allclose(tf.grad(x), jittape.grad(f)(x), rtol=1e-13)
        assert tf(x) == pytest.approx(f(x), rel=1e-13)
    assert tf.stats.recordings >= 3  # three orders met: recorded again, not replayed wrong


def test_namespace_asarray_and_attributes():
    seen = {}

    def f(x):
        xp = x.__array_namespace__(api_version="2024.12")  # NumPy's for plain calls
        if not isinstance(x, np.ndarray):
            seen["xp"], seen["device"] = xp, x.device
        assert x.to_device("cpu") is x
        a = xp.asarray([x[0], 2.0, x[1]])  # a list mixing actives and numbers
        b = xp.asarray(x, copy=True)
        b[0] = 0.0  # a copy: x is unchanged
        assert xp.asarray(np.ones(2)).dtype == np.float64  # plain data: NumPy's
        return xp.sum(a * a) + xp.sum(b) + x[0]
    check_grads(f, (X[:3],))
    assert seen["xp"] is array_api and seen["device"] == "cpu"
    assert array_api.__array_api_version__ == np.__array_api_version__
    assert array_api.exp is np.exp and array_api.__array_namespace_info__().devices()


def test_namespace_errors():
    def dtype(x):
        return array_api.asarray(x, dtype=np.float32)

    def version(x):
        return x.__array_namespace__(api_version="1999.01")

    def no_view(x):
        return array_api.asarray([x[0], x[1]], copy=False)
    with pytest.raises(NotDifferentiableError, match="float64"):
        jittape.grad(lambda x: np.sum(dtype(x)))(X)
    with pytest.raises(ValueError, match="api_version"):
        jittape.grad(lambda x: version(x) and x[0])(X)
    with pytest.raises(NotDifferentiableError, match="copy=False"):
        jittape.grad(lambda x: np.sum(no_view(x)))(X)
    with pytest.raises(ValueError, match="device"):
        array_api.asarray(X, device="gpu")
    with pytest.raises(AttributeError, match="no attribute 'no_such_function'"):
        array_api.no_such_function


_SCRIPT = """
import json, pickle, sys
import numpy as np
ORDER = sys.argv[1]
if ORDER == "before":
    from scipy.special import logsumexp, softmax, log_softmax, xlogy
    from scipy.stats import zscore, skew, variation, norm
    from scipy.linalg import expm
    import scipy.linalg as sla
    import jittape
else:
    import jittape
    from scipy.special import logsumexp, softmax, log_softmax, xlogy
    from scipy.stats import zscore, skew, variation, norm
    from scipy.linalg import expm
    import scipy.linalg as sla
import scipy._lib._array_api_override as override
x = np.array([0.3, 1.2, -0.5, 0.7])
w = np.array([1.0, 2.0, 3.0, 0.5])
cases = {
    "logsumexp": lambda x: logsumexp(x),
    "logsumexp with NumPy weights": lambda x: logsumexp(x, b=w),
    "logsumexp return_sign": lambda x: logsumexp(x, return_sign=True)[0],
    "softmax": lambda x: softmax(x)[0],
    "log_softmax": lambda x: log_softmax(x)[1],
    "xlogy": lambda x: np.sum(xlogy(x, x * x + 1.0)),
    "zscore": lambda x: zscore(x)[0],
    "skew": lambda x: skew(x),
    "variation": lambda x: variation(x * x + 1.0),
    "norm.logpdf": lambda x: np.sum(norm.logpdf(w, loc=x)),
    "sla.expm": lambda x: np.sum(sla.expm(np.reshape(x, (2, 2)))),
}
out = {}
for name, f in cases.items():
    g = jittape.grad(f)(x)
    e = np.eye(4) * 1e-6
    fd = [(f(x + e[i]) - f(x - e[i])) / 2e-6 for i in range(4)]
    out[name] = float(np.max(np.abs(g - fd)))
try:
    jittape.grad(lambda x: np.sum(expm(np.reshape(x, (2, 2)))))(x)
    out["expm error"] = "none"
except jittape.NotDifferentiableError as e:
    out["expm error"] = str(e)
out["flag after"] = bool(override.SCIPY_ARRAY_API)
import scipy.special
out["pickles"] = pickle.loads(pickle.dumps(scipy.special.logsumexp)) is scipy.special.logsumexp
print(json.dumps(out))
"""


@pytest.mark.parametrize("order", ["before", "after"])
def test_scipy_by_any_import_order(order, tmp_path):
    script = tmp_path / "orders.py"
    script.write_text(textwrap.dedent(_SCRIPT))
    env = {k: v for k, v in os.environ.items() if k != "SCIPY_ARRAY_API"}
    run = subprocess.run([sys.executable, str(script), order], capture_output=True, text=True,
                         env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    errors = {k: v for k, v in out.items() if isinstance(v, float)}
    assert len(errors) == 11 and max(errors.values()) < 1e-6, errors
    assert out["flag after"] is False and out["pickles"] is True
    # a name bound before jittape's import is rebound to jittape's wrapper while recording
    assert out["expm error"] == "none"


def test_scipy_wrappers_pickle_as_scipys_names():
    import scipy.linalg
    import scipy.signal
    import scipy.special
    for f in (scipy.special.polygamma, scipy.linalg.expm, scipy.signal.convolve):
        assert pickle.loads(pickle.dumps(f)) is f


def test_object_array_into_scipy_is_jittapes_error():
    import scipy.linalg
    original = getattr(scipy.linalg.solve_banded, "__wrapped_by_jittape__")

    def f(x):
        ab = np.array([[1.0, 2.0, 3.0], [x[0], x[1], 0.0]])  # an object array of actives
        return np.sum(original((1, 0), ab, np.ones(3)))
    with pytest.raises(NotDifferentiableError, match="solve_banded.*jittape.primal"):
        jittape.grad(f)(X)


def test_logsumexp_return_sign_with_negative_weights():
    import scipy.special
    b = np.array([1.0, -2.0, -3.0, -0.1, 0.5, -1.0])

    def f(x):
        out, sign = scipy.special.logsumexp(x, b=b, return_sign=True)
        return out * sign
    value, _ = jittape.value_and_grad(f)(X)
    assert value == pytest.approx(f(X), rel=1e-13)
    check_grads(f, (X,))
    assert f(X) < 0  # the sum is negative here: the sign matters


def test_multi_dot_is_numpys_to_the_bit():
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=3), rng.normal(size=(3, 7)), rng.normal(size=(7, 2)),
              rng.normal(size=(2, 5)), rng.normal(size=(5, 4)), rng.normal(size=4)]
    for chain in (arrays[1:4], arrays[1:5], arrays, arrays[:3], arrays[1:]):
        seen = {}

        def f(s):
            seen["r"] = np.linalg.multi_dot([chain[0] * s] + chain[1:])
            return np.sum(seen["r"])
        jittape.grad(f)(1.0)
        want = np.linalg.multi_dot(chain)
        got = jittape.primal(seen["r"])
        assert np.shape(got) == np.shape(want) and np.array_equal(got, want)


@pytest.mark.parametrize("f, error, match", [
    (lambda x: np.sum(x.to_device("gpu")), ValueError, "cpu"),
    (lambda x: np.sum(np.astype(x, np.float64, device="gpu")), ValueError, "device"),
    (lambda x: np.sum(x[np.argsort(x, order="a")]), NotDifferentiableError, "order"),
    (lambda x: np.sum(np.matrix_transpose(x)), ValueError, "2 dimensions"),
    (lambda x: np.sum(np.cumulative_sum(np.reshape(x, (2, 3)))), ValueError, "axis"),
    (lambda x: np.sum(np.meshgrid(x, x, indexing="xz")[0]), ValueError, "indexing"),
    (lambda x: np.sum(np.linalg.outer(np.reshape(x, (2, 3)), x)), ValueError,
     "one-dimensional"),
    (lambda x: np.linalg.multi_dot([x]), ValueError, "two arrays"),
    (lambda x: np.sum(np.linalg.multi_dot([x, np.ones((6, 2, 1)), np.ones(1)])),
     np.linalg.LinAlgError, "two-dimensional"),
    (lambda x: np.sum(np.linalg.multi_dot([x, np.ones((6, 2))], out=np.empty(2))),
     NotDifferentiableError, "out="),
])
def test_standard_error_paths(f, error, match):
    with pytest.raises(error, match=match):
        jittape.grad(f)(X)


def test_writing_into_a_0d_comparison_is_refused():
    def f(x):
        m = x[0] > 0.0
        m[()] = 1.0
        return x[0]
    with pytest.raises(NotDifferentiableError, match="comparison"):
        jittape.grad(f)(X)

"""np.asarray and its family on active values, as library code calls them
(jittape/numpy/conversions.py, jittape/numpy/stand_ins.py)."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jittape
from jittape import NotDifferentiableError
from jittape.numpy.active import Active

X = np.array([0.3, -1.2, 2.0, 0.7])


def _records(f, x=X):
    return jittape.record(f, x).n_records


@pytest.mark.parametrize("convert", [  # looked up when called, as library code does
    lambda x: np.asarray(x), lambda x: np.asanyarray(x), lambda x: np.ascontiguousarray(x),
    lambda x: np.asfortranarray(x),
    lambda x: np.asarray(x, dtype=float), lambda x: np.asarray(x, np.float64),
    lambda x: np.require(x, dtype=float), lambda x: np.require(x, float, ["C", "A"]),
    lambda x: np.array(x), lambda x: np.array(x, copy=False), lambda x: np.array(x, dtype=float),
    lambda x: np.asarray_chkfinite(x)], ids=["asarray", "asanyarray", "ascontiguous", "asfortran",
                                "asarray-float", "asarray-f64", "require", "require-reqs",
                                "array", "array-nocopy", "array-float", "chkfinite"])
def test_a_conversion_of_an_active_array_records_nothing(convert):
    f = lambda x: np.sum(np.sin(convert(x * 2.0)))  # noqa: E731
    np.testing.assert_allclose(jittape.grad(f)(X), 2.0 * np.cos(2.0 * X), rtol=1e-14)
    assert _records(f) == _records(lambda x: np.sum(np.sin(x * 2.0)))


def test_asarray_is_the_array_and_array_is_a_copy_as_in_numpy():
    seen = {}

    def f(x):
        y = x * 1.5
        seen["asarray"] = np.asarray(y) is y
        seen["array"] = np.array(y) is y
        seen["ndmin"] = np.shape(np.array(y[0], ndmin=2))
        return np.sum(y)
    jittape.grad(f)(X)
    assert seen == {"asarray": True, "array": False, "ndmin": (1, 1)}


def test_asarray_chkfinite_raises_numpys_error():
    with pytest.raises(ValueError, match="infs or NaNs"):
        jittape.grad(lambda x: np.sum(np.asarray_chkfinite(np.log(x))))(X)


def test_lists_and_object_arrays_of_actives_become_one_active_array():
    f = lambda x: np.sum(np.asarray([x[0] * x[1], x[2], 3.0]) ** 2)  # noqa: E731
    g = jittape.grad(f)(X)
    np.testing.assert_allclose(g, [2 * X[0] * X[1] ** 2, 2 * X[0] ** 2 * X[1], 2 * X[2], 0.0])
    seen = []
    jittape.grad(lambda x: seen.append(type(np.array([x[0], 1.0], dtype=float))) or x[0])(X)
    assert seen == [Active]


def test_a_comparison_converts_to_its_mask_or_to_floats():
    seen = {}

    def f(x):
        c = x > 0.5
        seen["mask"] = np.asarray(c)
        return np.sum(np.asarray(c, dtype=float) * x)
    np.testing.assert_allclose(jittape.grad(f)(X), (X > 0.5).astype(float))
    assert seen["mask"].dtype == bool and np.array_equal(seen["mask"], X > 0.5)


def test_integer_and_other_float_dtypes_keep_their_rules():
    seen = []
    jittape.grad(lambda x: seen.append(np.asarray(x * 3.0, dtype=int)) or np.sum(x))(X)
    np.testing.assert_array_equal(seen[0], (X * 3.0).astype(int))
    with pytest.raises(jittape.ActiveConversionError, match="float32"):
        jittape.grad(lambda x: np.sum(np.asarray(x, dtype=np.float32)))(X)


def test_a_preallocated_array_holding_actives_converts_to_its_active_value():
    def f(x):
        r = np.zeros(3)
        r[1] = x[0] ** 2
        return np.sum(np.asarray(r) * 2.0)
    np.testing.assert_allclose(jittape.grad(f)(X), [4 * X[0], 0, 0, 0])


def test_numba_functions_compiled_while_recording_see_numpys_asarray():
    import numba

    @numba.njit
    def twice(a):
        return np.asarray(a) * 2.0
    f = lambda x: np.sum(x) * twice(np.ones(2))[0]  # noqa: E731
    np.testing.assert_allclose(jittape.grad(f)(X), np.full(4, 2.0))


LIBRARY = '''
import numpy as np
from numpy import asarray, empty, zeros

def loglike(params, data):
    p = asarray(params)
    out = empty(len(data))
    out[:] = data * p[0] - np.exp(p[1])
    return out.sum()

def names():
    return asarray, empty
'''


def test_names_a_library_bound_before_jittape_are_rebound_while_recording(tmp_path):
    """The library imports before jittape (from numpy import asarray, empty): from the
    first recording on its names are the stand-ins, which are NumPy's functions outside
    recordings."""
    (tmp_path / "somelib.py").write_text(LIBRARY)
    script = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np
        import somelib
        import jittape
        data = np.array([1.0, 2.0, 3.0])
        g = jittape.grad(somelib.loglike)(np.array([0.5, 0.2]), data)
        assert np.allclose(g, [6.0, -3 * np.exp(0.2)]), g
        asarray, empty = somelib.names()  # stand-ins from now on, NumPy's own outside
        assert asarray.__wrapped__ is np.asarray and empty.__wrapped__ is np.empty
        assert type(empty(2)) is np.ndarray and type(asarray([1.0])) is np.ndarray
        print("ok", jittape.record(somelib.loglike, np.array([0.5, 0.2]), data).n_records)
        """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split()[0] == "ok" and int(run.stdout.split()[1]) < 15, run.stdout


def test_compiled_code_given_an_active_array_is_named():
    import scipy.linalg
    with pytest.raises(NotDifferentiableError, match=r"bandwidth.*compiled code.*primal"):
        jittape.grad(lambda x: float(scipy.linalg.bandwidth(np.outer(x, x))[0]) + x[0])(X)


def test_statsmodels_logit_records_a_few_array_records():
    """statsmodels' loglike starts with np.asarray(params): one record per array operation,
    not one per element (2,805 records at n = 400 before)."""
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(0)
    exog = sm.add_constant(rng.standard_normal((400, 3)))
    beta = np.array([0.3, -0.5, 0.8, 0.2])
    endog = (rng.random(400) < 1 / (1 + np.exp(-exog @ beta))).astype(float)
    model = sm.Logit(endog, exog)
    np.testing.assert_allclose(jittape.grad(model.loglike)(beta), model.score(beta),
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(jittape.hessian(model.loglike)(beta), model.hessian(beta),
                               rtol=1e-9, atol=1e-9)
    assert jittape.record(model.loglike, beta).n_records <= 20


def test_numpys_copy_modes_are_taken():
    seen = []

    def f(x):
        for mode in (np._CopyMode.IF_NEEDED, np._CopyMode.ALWAYS, np._CopyMode.NEVER, None):
            seen.append(np.asarray(x, copy=mode) is x)
        return np.sum(x)
    jittape.grad(f)(X)
    assert seen == [True, False, True, True]


def test_comparisons_combine_with_bool_arrays_by_bitwise_operators():
    plain = np.array([True, False, True, True])

    def f(x):
        c = x > 0.5
        m = (plain & c) | (~c ^ plain)  # ndarray.__and__ etc. reach NumPy's bitwise ufuncs
        return np.sum(np.where(m, x, 2.0 * x))
    m = (plain & (X > 0.5)) | (~(X > 0.5) ^ plain)
    np.testing.assert_allclose(jittape.grad(f)(X), np.where(m, 1.0, 2.0))
    with pytest.raises(TypeError, match="bitwise_and"):
        jittape.grad(lambda x: np.sum(np.bitwise_and(x, plain)))(X)


def test_an_integer_one_and_a_comparison_give_numpys_integers():
    """SciPy's _argcheck() of no shape parameters is the int 1: 1 & (x > 0) is NumPy's
    0/1 integers, an active float array here (a mask only through place/extract)."""
    def f(x):
        cond = np.int64(1) & (x > 0.5)
        return np.sum(cond * x)
    np.testing.assert_allclose(jittape.grad(f)(X), (X > 0.5).astype(float))


def test_tolist_gives_active_scalars_and_a_comparison_its_bools():
    def f(x):
        rows = [1.0] + x[1:].tolist()          # statsmodels' formatted += s[:m].tolist()
        return np.sum(np.array(rows) ** 2) + np.array(x.reshape(2, 2).tolist())[1, 0]
    g = jittape.grad(f)(X)
    assert g == pytest.approx(np.array([0, 2 * X[1], 2 * X[2] + 1, 2 * X[3]]), rel=1e-12)
    seen = []
    jittape.grad(lambda x: seen.append((x > 0).tolist()) or np.sum(x))(X)
    assert seen == [(X > 0).tolist()]


def test_rows_of_strings_and_actives_stay_numpys_object_array():
    # pandas' DataFrame([[name, value, flag], ...]) and its object blocks (Holt-Winters)
    def f(x):
        table = np.array([["a", x[0], True], ["b", x[1], False]])
        assert table.dtype == object and np.asarray(table) is table
        return table[0, 1] * table[1, 1]
    assert jittape.grad(f)(X[:2]) == pytest.approx([X[1], X[0]], rel=1e-12)


def test_rows_of_strings_and_actives_to_float_are_refused():
    # not one float64 array (a string): NumPy's own conversion, which meets the active
    # value first and gets jittape's conversion error
    def f(x):
        np.asarray([["a", x[0]]], dtype=float)
        return x[0]
    with pytest.raises(jittape.ActiveConversionError, match="dtype float64"):
        jittape.grad(f)(X)

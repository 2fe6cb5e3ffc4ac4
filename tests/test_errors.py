"""Bad input gets a clear error; NaN/inf propagate as in NumPy and never crash a sweep."""

import math
import warnings

import numpy as np
import pytest

import jittape
from jittape import (ActiveConversionError, NonScalarOutputError, NotDifferentiableError)

X = np.array([0.5, -1.0, 2.0])


def test_non_scalar_output_names_the_shape():
    with pytest.raises(NonScalarOutputError, match=r"shape \(3,\)"):
        jittape.grad(lambda x: x * 2)(X)


def test_non_scalar_plain_output():
    with pytest.raises(NonScalarOutputError, match="list"):
        jittape.grad(lambda x: [1.0, 2.0])(X)


def test_constant_output_gives_zero_gradient():
    np.testing.assert_array_equal(jittape.grad(lambda x: 3.0)(X), np.zeros(3))


@pytest.mark.parametrize("conv", [float, int, complex])
def test_float_int_of_active_value_explain_and_point_to_primal(conv):
    with pytest.raises(ActiveConversionError, match="jittape.primal"):
        jittape.grad(lambda x: conv(x[0]))(X)


def test_math_module_cannot_see_active_values():
    with pytest.raises(ActiveConversionError, match="derivative"):
        jittape.grad(lambda x: math.sin(x[0]))(X)


def test_np_asarray_with_a_float_dtype_other_than_float64_points_to_stack():
    # float64 (or no dtype) is the active array itself (tests/test_conversions.py)
    with pytest.raises(ActiveConversionError, match=r"np\.asarray.*np\.stack"):
        jittape.grad(lambda x: np.sum(np.asarray(x * 2.0, dtype=np.longdouble)))(X)
    with pytest.raises(ActiveConversionError, match="dtype float32"):
        jittape.grad(lambda x: np.sum(np.asarray(x, dtype=np.float32)))(X)


def test_writing_an_active_into_a_float_array_gets_jittape_error():
    """NumPy turns the ActiveConversionError of float() into "setting an array element
    with a sequence"; the recording gives jittape's back, saying where to create the array.
    (An array created inside the recorded function records instead: test_prealloc.py.)"""
    g = np.zeros(3)  # created outside the recording

    def f(x):
        g[0] = x[0]
        return np.sum(g)

    def fi(x):
        z = np.zeros(3, dtype=np.int64)  # a dtype that cannot hold a derivative
        z[0] = x[0]
        return np.sum(x * z)
    for h, match in ((f, "inside the recorded function"), (fi, r"int\(\)")):
        with pytest.raises(ActiveConversionError, match=match):
            jittape.grad(h)(X)
        with pytest.raises(ActiveConversionError, match=match):
            jittape.jvp(h, (X,), (X,))


def test_ufunc_out_argument_of_a_plain_array_is_refused():
    y = np.empty(3)  # created outside the recording

    def f(x):
        np.sin(x, out=y)
        return np.sum(y)
    with pytest.raises(ActiveConversionError, match="out="):
        jittape.grad(f)(X)
    with pytest.raises(NotDifferentiableError, match="keyword"):
        jittape.grad(lambda x: np.sum(np.sin(x, where=x > 0)))(X)


def test_active_index_is_refused():
    with pytest.raises(NotDifferentiableError, match="index"):
        jittape.grad(lambda x: x[x[0]])(X)


def test_ambiguous_truth_value_of_active_array():
    with pytest.raises(ValueError, match="ambiguous"):
        jittape.grad(lambda x: x[0] if x > 0 else x[1])(X)


def test_bad_argument_types():
    with pytest.raises(TypeError, match="complex"):
        jittape.grad(lambda x: x[0])(np.array([1j, 2.0]))
    with pytest.raises(TypeError, match="float or an array"):
        jittape.grad(lambda x: x)("abc")
    with pytest.raises(ValueError, match="argnums"):
        jittape.grad(lambda x: x, argnums=2)(1.0)


def test_integer_input_is_converted_and_user_array_untouched():
    x = np.array([1, 2, 3])
    g = jittape.grad(lambda x: np.sum(x ** 2))(x)
    assert g.dtype == np.float64
    np.testing.assert_array_equal(g, [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(x, [1, 2, 3])


def test_scalar_input_gives_float_gradient():
    g = jittape.grad(lambda x: x ** 3)(2)
    assert isinstance(g, float) and g == 12.0


def test_nan_and_inf_propagate_as_numpy():
    x = np.array([np.nan, np.inf, 1.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v, g = jittape.value_and_grad(lambda x: np.sum(np.log(x) + np.sqrt(x) + x ** 2))(x)
        expect = np.sum(np.log(x) + np.sqrt(x) + x ** 2)
    assert np.isnan(v) and np.isnan(expect)
    assert np.isnan(g[0]) and g[2] == 1.0 + 0.5 + 2.0
    assert np.isinf(g[3])  # 1/x and 0.5/sqrt(x) at 0


def test_scalar_domain_errors_follow_numpy_not_math():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v, g = jittape.value_and_grad(lambda x: np.log(x[0]) + 1.0 / x[1] + x[2] ** 0.5)(
            np.array([0.0, 0.0, -1.0]))
    assert v == -np.inf or np.isnan(v)
    assert g[0] == np.inf and g[1] == -np.inf and np.isnan(g[2])


def test_two_recordings_do_not_mix():
    inner = {}

    def f(x):
        inner["x"] = x
        return np.sum(x)
    jittape.grad(f)(X)
    with pytest.raises(NotDifferentiableError, match="two different recordings"):
        jittape.grad(lambda y: np.sum(y * inner["x"]))(X)


def test_scalar_records_cost_the_documented_bytes():
    """tape.py's layout: 40 bytes per scalar record, value included (one extra offset)."""
    from jittape.tape.arrays import BYTES_PER_SCALAR_RECORD

    def f(x):
        s = x
        for _ in range(50):
            s = np.sin(s) * x + 1.0
        return s
    t = jittape.record(f, 0.3)
    assert len(t.arrays.pool) == 0 and not t.arrays.shapes  # scalars only
    assert BYTES_PER_SCALAR_RECORD <= 40
    assert t.nbytes == t.n_records * BYTES_PER_SCALAR_RECORD + 8


@pytest.mark.parametrize("f, match", [
    (lambda x: np.sum(np.sort(x, order="a")), "order"),
    (lambda x: np.sum(np.cumsum(x, dtype=np.float32)), "cumsum"),
    (lambda x: np.sum(np.cumprod(x, out=np.empty(4))), "cumprod"),
    (lambda x: np.sum(np.round(x, out=np.empty(4))), "round"),
    (lambda x: np.sum(np.clip(x, 0, 1, out=np.empty(4))), "clip"),
])
def test_unsupported_arguments_of_supported_functions_are_named(f, match):
    with pytest.raises(NotDifferentiableError, match=match):
        jittape.grad(f)(np.array([0.1, 0.2, 0.3, 0.4]))


def test_linalg_of_a_non_square_matrix():
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        jittape.grad(lambda x: np.sum(np.linalg.inv(x.reshape(2, 3))))(np.ones(6))


def test_matmul_of_a_scalar_is_refused_as_numpy_does():
    with pytest.raises(ValueError, match="enough dimensions"):
        jittape.grad(lambda x: np.sum(np.matmul(x[0], x)))(np.ones(3))


def test_scipy_code_converting_to_float_names_the_scipy_function():
    """scipy.integrate.odeint converts its y0 with a float dtype: the refusal names it."""
    import scipy.integrate

    def f(y0):
        return np.sum(scipy.integrate.odeint(lambda y, t: -y, y0, np.linspace(0, 1, 3)))
    with pytest.raises(jittape.NotDifferentiableError, match="scipy.integrate.*odeint"):
        jittape.grad(f)(np.ones(2))


def test_a_compiled_routine_converting_an_active_result_gets_jittapes_error():
    """scipy.optimize.brentq's C code converts its callback's result with float() without
    checking for an error: Python's SystemError becomes jittape's error."""
    import scipy.optimize
    with pytest.raises(ActiveConversionError, match="compiled routine.*custom_vjp"):
        jittape.grad(lambda z: scipy.optimize.brentq(lambda t: t - z[0], -5, 5))(X)

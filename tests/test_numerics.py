"""Order statistics, interpolation, convolution, sequences and the other numerical routines
(jittape.numpy.statistics, jittape.numpy.numerics, jittape.numpy.sequences), and
einsum/trace/diff/cumsum/sort along every axis, in every mode.

Every case runs a plain NumPy function ``fn`` on random inputs and checks
  * the primal recorded against NumPy's (value and shape),
  * the gradient of ``sum(W * fn(x))`` (random W) against central differences,
  * the JVP (tangent sweep, ``jittape.jvp``) against ``<gradient, v>``, and the tangent of
    ``fn``'s whole output against central differences along ``v``,
  * a tape replayed at a nearby point against recording there (interpreter), and the
    compiled tape (``Tape.compile``) against the interpreter.
"""

import warnings

import numpy as np
import pytest

import jittape
from jittape import NotDifferentiableError
from jittape.numpy.active import Active
from jittape.testing import check_grads

RNG = np.random.default_rng(20250101)


def A(*shape, lo=None, hi=None):
    """A random float64 array: standard normal, or uniform(lo, hi)."""
    if lo is not None:
        return RNG.uniform(lo, lo + 1.5 if hi is None else hi, shape)
    return RNG.standard_normal(shape)


def _pieces(r):
    return list(r) if isinstance(r, (list, tuple)) else [r]


def _primal(r):
    return np.asarray(r._v if isinstance(r, Active) else r, dtype=np.float64)


def _flat_out(fn, args):
    return np.concatenate([np.ravel(p) for p in _pieces(fn(*args))])


def check_modes(fn, args, compiled=True, step=0.01, rtol=1e-6):
    """Every mode for ``fn`` differentiated in all of ``args`` (see the module docstring)."""
    args = tuple(np.asarray(a, dtype=np.float64) for a in args)
    nums = tuple(range(len(args)))
    expected = fn(*[a.copy() for a in args])
    weights = [RNG.standard_normal(np.shape(e)) for e in _pieces(expected)]
    seen = {}

    def obj(*a):
        r = fn(*a)
        seen["r"] = r
        return sum(np.sum(w * p) for w, p in zip(weights, _pieces(r)))

    value, grads = jittape.value_and_grad(obj, nums)(*args)
    got = _pieces(seen["r"])
    assert len(got) == len(_pieces(expected))
    for g, e in zip(got, _pieces(expected)):
        assert _primal(g).shape == np.shape(e), (_primal(g).shape, np.shape(e))
        np.testing.assert_allclose(_primal(g), e, rtol=1e-12, atol=1e-12)
    check_grads(obj, args, nums, rtol=rtol)
    # tangent sweep: against the gradient, and fn's whole tangent against differences
    v = tuple(RNG.standard_normal(np.shape(a)) for a in args)
    _, jv = jittape.jvp(obj, args, v)
    dot = sum(float(np.sum(g * d)) for g, d in zip(grads, v))
    terms = sum(float(np.sum(np.abs(g * d))) for g, d in zip(grads, v))
    assert abs(jv - dot) <= 1e-12 + 1e-10 * terms, (jv, dot)
    flat = lambda *a: _flat_out(fn, a)  # noqa: E731
    _, tan = jittape.jvp(flat, args, v)
    h = 1e-6
    fd = (flat(*(a + h * d for a, d in zip(args, v))) -
          flat(*(a - h * d for a, d in zip(args, v)))) / (2 * h)
    np.testing.assert_allclose(tan, fd, rtol=1e-5, atol=1e-6 * (1 + np.max(np.abs(fd),
                                                                          initial=0.0)))
    # replay at a nearby point against recording there; the compiled tape against both
    tape = jittape.record(obj, *args, argnums=nums)
    args2 = tuple(a + step * RNG.standard_normal(np.shape(a)) for a in args)
    v1, g1 = tape.value_and_gradient(*args2)
    v2, g2 = jittape.value_and_grad(obj, nums)(*args2)
    np.testing.assert_allclose(v1, v2, rtol=1e-12, atol=1e-12)
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    if compiled and tape.out_id >= 0:
        ctape = jittape.record(obj, *args, argnums=nums).compile()
        v3, g3 = ctape.value_and_gradient(*args2)
        np.testing.assert_allclose(v3, v1, rtol=1e-12, atol=1e-12)
        for a, b in zip(g3, g1):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def case(name, fn, *args, compiled=False):
    return pytest.param(fn, args, compiled, id=name)


def _with_nan(x, where):
    x = np.array(x)
    x[where] = np.nan
    return x


# --- order statistics ---------------------------------------------------------------------------
STAT_CASES = [
    case("median-odd", lambda x: np.median(x), A(7), compiled=True),
    case("median-even", lambda x: np.median(x), A(6)),
    case("median-axis0", lambda x: np.median(x, axis=0), A(4, 3)),
    case("median-axis-neg-keepdims", lambda x: np.median(x, axis=-1, keepdims=True), A(3, 5)),
    case("median-tuple", lambda x: np.median(x, axis=(0, 2)), A(2, 3, 4)),
    case("median-none-3d-keepdims", lambda x: np.median(x, keepdims=True), A(2, 3, 2)),
    case("median-scalar", lambda x: np.median(x[1]), A(3)),
    case("quantile", lambda x: np.quantile(x, 0.3), A(9), compiled=True),
    case("quantile-q-array", lambda x: np.quantile(x, [0.0, 0.1, 0.5, 0.93, 1.0]), A(8)),
    case("quantile-q-2d-axis", lambda x: np.quantile(x, np.array([[0.2, 0.7], [0.5, 0.9]]),
                                                     axis=1), A(3, 5)),
    case("quantile-axis-keepdims", lambda x: np.quantile(x, [0.25, 0.75], axis=0,
                                                         keepdims=True), A(6, 3)),
    case("quantile-tuple-axis", lambda x: np.quantile(x, 0.6, axis=(2, 0)), A(3, 2, 4)),
    case("quantile-int-q", lambda x: np.quantile(x, 1), A(5)),
    case("quantile-one-element", lambda x: np.quantile(x, 0.4, axis=1), A(3, 1)),
    case("percentile", lambda x: np.percentile(x, 37.5), A(9), compiled=True),
    case("percentile-array-axis", lambda x: np.percentile(x, [5, 50, 95], axis=-1), A(2, 7)),
    case("percentile-keepdims", lambda x: np.percentile(x, 80, axis=0, keepdims=True),
         A(5, 2)),
    case("partition", lambda x: np.partition(x, 3), A(8), compiled=True),
    case("partition-many-kth", lambda x: np.partition(x, [1, -2]), A(7)),
    case("partition-axis0", lambda x: np.partition(x, 1, axis=0), A(4, 3)),
    case("partition-none", lambda x: np.partition(x, 4, axis=None), A(3, 3)),
    case("partition-smallest-sum", lambda x: np.sum(np.partition(x, 2)[:3]), A(9)),
    case("sort-axis0", lambda x: np.sort(x, axis=0), A(3, 4, 2)),
    case("sort-axis1", lambda x: np.sort(x, axis=1), A(3, 4, 2), compiled=True),
    case("sort-axis2", lambda x: np.sort(x, axis=2), A(3, 4, 2)),
    case("sort-axis-neg2", lambda x: np.sort(x, axis=-2), A(3, 4, 2)),
    case("sort-none", lambda x: np.sort(x, axis=None), A(3, 4, 2)),
    case("sort-kind", lambda x: np.sort(x, kind="stable"), A(5)),
]
_METHODS = ["inverted_cdf", "averaged_inverted_cdf", "closest_observation",
            "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
            "normal_unbiased", "lower", "higher", "midpoint", "nearest"]
STAT_CASES += [case(f"quantile-{m}", lambda x, m=m: np.quantile(
    x, [0.0, 0.13, 0.5, 0.62, 1.0], axis=0, method=m), A(7, 2)) for m in _METHODS]


@pytest.mark.parametrize("fn, args, compiled", STAT_CASES)
def test_statistics(fn, args, compiled):
    check_modes(fn, args, compiled)


@pytest.mark.parametrize("method", _METHODS)
@pytest.mark.parametrize("n", [1, 2, 3, 10])
def test_quantile_every_method_is_numpys(method, n):
    x = A(n, 3)
    q = np.linspace(0.0, 1.0, 23)
    got = jittape.record(lambda x: np.quantile(x, q, axis=0, method=method) * 1.0, x)
    np.testing.assert_array_equal(got.arrays.val[got.arrays.off[got.out_id]:
                                                 got.arrays.off[got.out_id + 1]],
                                  np.quantile(x, q, axis=0, method=method).ravel())


def test_quantile_weights_are_the_interpolation_weights():
    x = np.array([4.0, 1.0, 3.0, 2.0, 5.0])  # sorted: 1 2 3 4 5 at positions 1 3 2 0 4
    g = jittape.grad(lambda x: np.quantile(x, 0.3))(x)  # index 1.2: 0.8 s[1] + 0.2 s[2]
    np.testing.assert_allclose(g, [0.0, 0.0, 0.2, 0.8, 0.0], atol=1e-15)
    g = jittape.grad(lambda x: np.median(x[:4]))(x)  # (2 + 3) / 2
    np.testing.assert_allclose(g, [0.0, 0.0, 0.5, 0.5, 0.0])


def eager(fn, *args):
    """The primal jittape records for ``fn(*args)`` (all arguments active)."""
    return jittape.jvp(fn, args, tuple(np.zeros_like(a) for a in args))[0]


def test_nan_slices_give_nan_eagerly_and_on_replay():
    x = A(3, 5)
    xn = _with_nan(x, (1, 3))
    fns = [lambda x: np.median(x, axis=1), lambda x: np.quantile(x, [0.2, 0.9], axis=1),
           lambda x: np.percentile(x, 50, axis=1, method="lower"),
           lambda x: np.partition(x, 2, axis=1), lambda x: np.sort(x, axis=1)]
    for fn in fns:
        expect = fn(xn)
        np.testing.assert_array_equal(eager(fn, xn), expect)
        np.testing.assert_array_equal(jittape.record(fn, x).value(xn), expect)
    # a NaN result's gradient: the slice's NaN element carries it (NumPy copies it there)
    g = jittape.grad(lambda x: np.sum(np.median(x, axis=1)))(xn)
    assert g[1, 3] == 1.0 and np.all(g[1, np.arange(5) != 3] == 0.0)


def test_replayed_median_follows_the_new_order():
    f = lambda x: np.median(x) * 2.0  # noqa: E731
    tape = jittape.record(f, np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    x2 = np.array([9.0, -1.0, 4.0, 0.0, 7.0])
    v, g = tape.value_and_gradient(x2)
    assert v == 8.0
    np.testing.assert_array_equal(g, [0.0, 0.0, 2.0, 0.0, 0.0])


def test_replayed_partition_is_a_partition_anywhere():
    tape = jittape.record(lambda x: np.partition(x, [2, 6]), A(9))
    for seed in range(5):
        x2 = np.random.default_rng(seed).standard_normal(9)
        z, s = tape.value(x2), np.sort(x2)
        assert z[2] == s[2] and z[6] == s[6]
        assert np.all(z[:2] <= s[2]) and np.all(z[3:6] <= s[6]) and np.all(z[7:] >= s[6])
        np.testing.assert_array_equal(np.sort(z), s)


# --- interp ---------------------------------------------------------------------------------
XP = np.array([-1.5, -0.4, 0.3, 0.35, 1.2, 2.0])
FP = np.array([0.5, -1.0, 2.0, 1.5, 0.3, -0.7])
XQ = np.array([-2.3, -1.1, -0.2, 0.32, 0.7, 1.9, 2.6, 0.0])  # off the knots, both ends


def _knots(d):
    return np.cumsum(d) - 2.0  # increasing for positive d


INTERP_CASES = [
    case("interp-x", lambda x: np.interp(x, XP, FP), XQ, compiled=True),
    case("interp-x-2d", lambda x: np.interp(x, XP, FP), XQ.reshape(2, 4)),
    case("interp-x-scalar", lambda x: np.interp(x[2], XP, FP) * x, XQ),
    case("interp-fp", lambda f: np.interp(XQ, XP, f), FP),
    case("interp-xp", lambda d: np.interp(XQ, _knots(d), FP), A(6, lo=0.2, hi=0.9),
         compiled=True),
    case("interp-all", lambda x, d, f: np.interp(x, _knots(d), f), XQ,
         A(6, lo=0.2, hi=0.9), FP),
    case("interp-left-right", lambda x: np.interp(x, XP, FP, left=-3.0, right=4.0), XQ),
    case("interp-active-left-right", lambda x, e: np.interp(x, XP, FP, left=e[0],
                                                             right=e[1]), XQ, A(2)),
    case("interp-period", lambda x, f: np.interp(x, [350.0, 10.0, 90.0, 180.0], f,
                                                 period=360.0), A(5, lo=-400, hi=700),
         A(4), compiled=True),
    case("interp-one-knot", lambda x, f: np.interp(x, [0.25], f), XQ, A(1)),
    case("interp-list-knots", lambda x: np.interp(x, list(XP), list(FP)), XQ),
]


@pytest.mark.parametrize("fn, args, compiled", INTERP_CASES)
def test_interp(fn, args, compiled):
    check_modes(fn, args, compiled)


def test_interp_at_knots_nan_and_inf():
    """NumPy's values at knots, NaN queries and infinite values; the derivative at a knot is
    that of the segment to its right, 0 at the last knot and outside."""
    xp = np.array([0.0, 1.0, 1.0, 2.0, 4.0])
    fp = np.array([1.0, 3.0, -1.0, 0.0, np.inf])
    x = np.array([0.0, 1.0, 2.0, 4.0, 3.0, -1.0, 5.0, np.nan, 0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(eager(lambda x: np.interp(x, xp, fp), x),
                                      np.interp(x, xp, fp))
        np.testing.assert_array_equal(jittape.record(lambda x: np.interp(x, xp, fp), x + 0.1)
                                      .value(x), np.interp(x, xp, fp))
    fp = np.array([1.0, 3.0, -1.0, 0.0, 4.0])
    jac = jittape.jacobian(lambda x: np.interp(x, xp, fp))(x[:7])
    #  slopes of the segments to the right: [0,1): 2, [1,2) (after the repeated knot): 1,
    #  [2,4): 2; the last knot and outside: 0
    np.testing.assert_array_equal(np.diag(jac), [2.0, 1.0, 2.0, 0.0, 2.0, 0.0, 0.0])
    gfp = jittape.grad(lambda f: np.interp(1.0, xp, f))(fp)
    np.testing.assert_array_equal(gfp, [0.0, 0.0, 1.0, 0.0, 0.0])
    gxp = jittape.grad(lambda k: np.interp(1.5, k, fp))(xp)  # u = 1/2 in [1, 2): s = 1
    np.testing.assert_array_equal(gxp, [0.0, 0.0, -0.5, -0.5, 0.0])


def test_interp_refusals():
    x = A(3)
    with pytest.raises(NotDifferentiableError, match="'xp' must be increasing"):
        jittape.grad(lambda x: np.sum(np.interp(x, [0.0, 2.0, 1.0], [1.0, 2.0, 3.0])))(x)
    with pytest.raises(NotDifferentiableError, match="active 'xp' with period"):
        jittape.grad(lambda k: np.sum(np.interp(x, k, [1.0, 2.0, 3.0], period=3.0)))(
            np.array([0.0, 1.0, 2.0]))
    with pytest.raises(NotDifferentiableError, match="period"):
        jittape.grad(lambda v: np.sum(np.interp(v[:2], [0.0, 1.0], [1.0, 2.0],
                                                period=v[2])))(np.array([0.1, 0.2, 2.0]))
    with pytest.raises(ValueError, match="same length"):
        jittape.grad(lambda x: np.sum(np.interp(x, [0.0, 1.0], [1.0, 2.0, 3.0])))(x)


# --- convolve, correlate --------------------------------------------------------------------
CONV_CASES = [
    case("convolve", lambda a, v: np.convolve(a, v), A(7), A(3), compiled=True),
    case("convolve-same", lambda a, v: np.convolve(a, v, "same"), A(6), A(4)),
    case("convolve-valid", lambda a, v: np.convolve(a, v, mode="valid"), A(6), A(3)),
    case("convolve-longer-v", lambda a, v: np.convolve(a, v, "same"), A(3), A(6)),
    case("convolve-const-kernel", lambda a: np.convolve(a, [0.25, 0.5, 0.25], "same"), A(8)),
    case("convolve-const-signal", lambda v: np.convolve(np.arange(5.0), v), A(2)),
    case("convolve-scalar", lambda a, v: np.convolve(a[0], v), A(2), A(3)),
    case("correlate", lambda a, v: np.correlate(a, v), A(7), A(3), compiled=True),
    case("correlate-full", lambda a, v: np.correlate(a, v, "full"), A(4), A(5)),
    case("correlate-same-even", lambda a, v: np.correlate(a, v, "same"), A(6), A(4)),
    case("correlate-same-shorter-a", lambda a, v: np.correlate(a, v, "same"), A(3), A(6)),
    case("correlate-valid-shorter-a", lambda a, v: np.correlate(a, v, 0), A(2), A(5)),
    case("correlate-self", lambda a: np.correlate(a, a, "full"), A(5)),
]


@pytest.mark.parametrize("fn, args, compiled", CONV_CASES)
def test_convolve(fn, args, compiled):
    check_modes(fn, args, compiled)


@pytest.mark.parametrize("mode", ["valid", "same", "full", 0, 1, 2])
def test_correlate_and_convolve_are_numpys_for_all_lengths(mode):
    for na in range(1, 7):
        for nv in range(1, 7):
            a, v = A(na), A(nv)
            for f in (np.correlate, np.convolve):
                got = eager(lambda a, v: f(a, v, mode), a, v)
                np.testing.assert_allclose(got, f(a, v, mode), rtol=1e-13, atol=1e-14)
                tape = jittape.record(lambda a, v: f(a, v, mode), a, v, argnums=(0, 1))
                a2, v2 = A(na), A(nv)
                np.testing.assert_allclose(tape.value(a2, v2), f(a2, v2, mode), rtol=1e-13,
                                           atol=1e-14)


# --- polyval, gradient ----------------------------------------------------------------------
NUMERIC_CASES = [
    case("polyval-p", lambda p: np.polyval(p, np.array([0.5, -1.2, 2.0])), A(4),
         compiled=True),
    case("polyval-x", lambda x: np.polyval([1.5, -2.0, 0.3, 4.0], x), A(2, 3)),
    case("polyval-both", lambda p, x: np.polyval(p, x), A(3), A(5)),
    case("polyval-scalar-x", lambda p, x: np.polyval(p, x[1]), A(3), A(2)),
    case("polyval-2d-p", lambda p, x: np.polyval(p, x), A(3, 2), A(2)),
    case("gradient", lambda f: np.gradient(f), A(6), compiled=True),
    case("gradient-scalar-dx", lambda f: np.gradient(f, 0.3), A(5)),
    case("gradient-coords", lambda f: np.gradient(f, np.array([0.0, 0.5, 1.5, 1.7, 3.0])),
         A(5)),
    case("gradient-uniform-coords", lambda f: np.gradient(f, np.arange(5.0) * 0.5), A(5)),
    case("gradient-active-coords", lambda f, d: np.gradient(f, np.cumsum(d)), A(5),
         A(5, lo=0.2, hi=1.0)),
    case("gradient-active-dx", lambda f, h: np.gradient(f, h[0]), A(4), A(1, lo=0.5)),
    case("gradient-2d", lambda f: np.gradient(f), A(3, 4)),
    case("gradient-2d-axis", lambda f: np.gradient(f, 0.5, axis=1), A(3, 4)),
    case("gradient-2d-spacings", lambda f: np.gradient(f, 2.0, [0.0, 1.0, 1.5, 3.0]),
         A(3, 4)),
    case("gradient-axis-tuple-neg", lambda f: np.gradient(f, axis=(-1, 0)), A(3, 2, 4)),
    case("gradient-edge2", lambda f: np.gradient(f, edge_order=2), A(6)),
    case("gradient-edge2-coords", lambda f: np.gradient(f, [0.0, 0.3, 1.0, 1.2, 2.0],
                                                        edge_order=2), A(5)),
    case("gradient-edge2-2d", lambda f: np.gradient(f, 0.7, 1.3, edge_order=2), A(3, 4)),
    case("gradient-edge2-active-coords", lambda f, d: np.gradient(f, np.cumsum(d),
                                                                  edge_order=2),
         A(4), A(4, lo=0.2, hi=1.0)),
]


@pytest.mark.parametrize("fn, args, compiled", NUMERIC_CASES)
def test_numerics(fn, args, compiled):
    check_modes(fn, args, compiled)


def test_polyval_and_gradient_primals_are_numpys():
    x = np.array([np.inf, -np.inf, 2.0, np.nan])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(eager(lambda x: np.polyval([1.0, 2.0], x), x),
                                      np.polyval([1.0, 2.0], x))  # 0 * inf = nan, as NumPy
    f, d = A(7), np.array([0.0, 0.1, 0.5, 0.55, 2.0, 2.1, 3.5])
    for kw in ({}, {"edge_order": 2}):
        np.testing.assert_array_equal(eager(lambda f: np.gradient(f, d, **kw), f),
                                      np.gradient(f, d, **kw))
    assert isinstance(jittape.jvp(lambda f: np.gradient(f)[0] * 1.0, (A(2, 3),),
                                  (np.ones((2, 3)),))[0], np.ndarray)


def test_gradient_of_active_coordinates_guards_the_uniform_test():
    f = A(4)
    tape = jittape.record(lambda d: np.sum(np.gradient(f, d) ** 2), np.arange(4.0))
    with pytest.raises(jittape.GuardFailure):
        tape.value(np.array([0.0, 1.0, 2.5, 3.0]))


# --- linspace, logspace, geomspace -----------------------------------------------------------
SEQ_CASES = [
    case("linspace", lambda a, b: np.linspace(a[0], b[0], 7), A(1), A(1), compiled=True),
    case("linspace-start", lambda a: np.linspace(a[0], 3.0, 5), A(1)),
    case("linspace-stop-no-endpoint", lambda b: np.linspace(-1.0, b[0], 6, endpoint=False),
         A(1)),
    case("linspace-arrays-axis", lambda a, b: np.linspace(a, b, 4, axis=-1), A(2, 3), A(3)),
    case("linspace-arrays-axis1", lambda a, b: np.linspace(a, b, 5, axis=1), A(3), A(3)),
    case("linspace-num1", lambda a, b: np.linspace(a[0], b[0], 1), A(1), A(1)),
    case("linspace-num2", lambda a, b: np.linspace(a[0], b[0], 2), A(1), A(1)),
    case("linspace-retstep", lambda a, b: np.linspace(a[0], b[0], 4, retstep=True), A(1),
         A(1)),
    case("linspace-retstep-array", lambda a, b: np.linspace(a, b, 3, retstep=True,
                                                            endpoint=False), A(2), A(2)),
    case("logspace", lambda a, b: np.logspace(a[0], b[0], 5), A(1), A(1), compiled=True),
    case("logspace-base", lambda a, b: np.logspace(a[0], 1.0, 4, base=b[0]), A(1),
         A(1, lo=1.5)),
    case("logspace-array-base", lambda a: np.logspace(a, 1.0, 3, base=[2.0, 3.0], axis=-1),
         A(2)),
    case("geomspace", lambda a, b: np.geomspace(a[0], b[0], 6), A(1, lo=0.5),
         A(1, lo=2.0), compiled=True),
    case("geomspace-negative", lambda a, b: np.geomspace(-a[0], -b[0], 5, endpoint=False),
         A(1, lo=0.5), A(1, lo=2.0)),
    case("geomspace-arrays-axis", lambda a, b: np.geomspace(a, b, 3, axis=1),
         A(2, lo=0.5), A(2, lo=2.0)),
    case("geomspace-num1", lambda a: np.geomspace(a[0], 5.0, 1), A(1, lo=0.5)),
]


@pytest.mark.parametrize("fn, args, compiled", SEQ_CASES)
def test_sequences(fn, args, compiled):
    check_modes(fn, args, compiled)


def test_sequence_ends_and_guards():
    # the last sample is stop itself, the first of geomspace start itself
    y = eager(lambda a, b: np.geomspace(a, b, 7), 0.3, 7.1)
    assert y[0] == 0.3 and y[-1] == 7.1
    np.testing.assert_array_equal(y, np.geomspace(0.3, 7.1, 7))
    np.testing.assert_array_equal(eager(lambda a, b: np.linspace(a, b, 7), 0.3, 7.1),
                                  np.linspace(0.3, 7.1, 7))
    # NumPy's branch for a zero step is guarded
    tape = jittape.record(lambda a: np.sum(np.linspace(a, 1.0, 4) ** 2), 0.0)
    with pytest.raises(jittape.GuardFailure):
        tape.value(1.0)
    np.testing.assert_array_equal(eager(lambda a: np.linspace(a, 1.0, 4), 1.0), np.ones(4))
    with pytest.raises(ValueError, match="cannot include zero"):
        jittape.grad(lambda a: np.sum(np.geomspace(a, 1.0, 4)))(0.0)
    with pytest.raises(NotDifferentiableError, match="dtype"):
        jittape.grad(lambda a: np.sum(np.linspace(a, 9.0, 4, dtype=int)))(0.0)


# --- nan_to_num, select, real, imag, angle ---------------------------------------------------
def _finite_mix(x):
    return np.where(x > 1.0, np.inf, np.where(x < -1.0, -np.inf, x))


ELEM_CASES = [
    case("nan_to_num", lambda x: np.nan_to_num(x), A(6), compiled=True),
    case("nan_to_num-replaced", lambda x: np.nan_to_num(_finite_mix(x) / (x != 0.5),
                                                        posinf=7.0, neginf=-8.0),
         np.array([1.5, -1.7, 0.3, -0.2, 2.5, 0.9])),
    case("nan_to_num-active-values", lambda x, v: np.nan_to_num(
        np.where(x > 1.8, -np.inf, np.log(x)), nan=v[0], neginf=v[1]),
         np.array([1.5, -1.7, 0.3, 2.0]), A(2)),
    case("nan_to_num-no-copy", lambda x: np.nan_to_num(x * 1.0, copy=False) + x, A(3)),
    case("select", lambda x: np.select([x < -0.5, x > 0.5], [x ** 2, -x], 0.25), A(8),
         compiled=True),
    case("select-active-default", lambda x, d: np.select([x > 0], [np.sin(x)], d), A(2, 3),
         A(3)),
    case("select-broadcast", lambda x, y: np.select([x > 0, y < 0], [x, y]), A(2, 1), A(3)),
    case("select-const-choices", lambda x: np.select([x > 0], [2.0], default=x), A(5)),
    case("real", lambda x: np.real(x) * 2.0, A(2, 3)),
    case("imag", lambda x: np.imag(x) + x, A(4)),
    case("angle", lambda x: np.angle(x) * x, A(5)),
    case("angle-deg", lambda x: np.angle(x, deg=True) + x, A(5)),
]


@pytest.mark.parametrize("fn, args, compiled", ELEM_CASES)
def test_elementwise(fn, args, compiled):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check_modes(fn, args, compiled)


def test_nan_to_num_values_and_zero_derivative_where_replaced():
    x = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0])
    np.testing.assert_array_equal(eager(np.nan_to_num, x), np.nan_to_num(x))
    g = jittape.grad(lambda x: np.sum(np.nan_to_num(x, nan=1.0, posinf=2.0) * 3.0))(x)
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.0, 3.0, 3.0])
    tape = jittape.record(lambda x: np.nan_to_num(x) * 1.0, np.ones(5))
    np.testing.assert_array_equal(tape.value(x), np.nan_to_num(x))
    assert eager(lambda x: np.nan_to_num(x[0]), x[3:]) == 1.5


def test_real_imag_angle_of_real_values():
    x = np.array([-0.0, 0.0, -1.0, 1.0, np.nan, -np.inf, np.inf])
    np.testing.assert_array_equal(eager(np.angle, x), np.angle(x))
    np.testing.assert_array_equal(eager(lambda x: np.angle(x, True), x), np.angle(x, True))
    np.testing.assert_array_equal(jittape.record(lambda x: np.angle(x) * 1.0, np.ones(7))
                                  .value(x), np.angle(x))
    np.testing.assert_array_equal(jittape.grad(lambda x: np.sum(np.angle(x)))(x[:4]),
                                  np.zeros(4))

    def same_object(x):
        assert np.real(x) is x
        z = np.imag(x)
        assert not isinstance(z, Active) and not z.flags.writeable and z.shape == (3,)
        assert np.imag(x[0]) == 0.0
        assert x.real is x and not x.imag.flags.writeable
        return np.sum(x)
    jittape.grad(same_object)(A(3))


# --- einsum, trace, diff, cumsum, cumprod -------------------------------------------------------
MORE_CASES = [
    case("einsum-sublist", lambda a, b: np.einsum(a, [0, 1], b, [1, 2], [0, 2]), A(2, 3),
         A(3, 4), compiled=True),
    case("einsum-sublist-implicit", lambda a, b: np.einsum(a, [27, 1], b, [1, 26]), A(2, 3),
         A(3, 4)),
    case("einsum-sublist-ellipsis", lambda a: np.einsum(a, [Ellipsis, 0, 1],
                                                        [Ellipsis, 1, 0]), A(2, 3, 4)),
    case("einsum-sublist-trace", lambda a: np.einsum(a, [5, 5]), A(3, 3)),
    case("einsum-trace", lambda a: np.einsum("ii->", a), A(4, 4)),
    case("einsum-diag", lambda a: np.einsum("ii->i", a), A(3, 3)),
    case("einsum-iij", lambda a: np.einsum("iij->j", a), A(3, 3, 2)),
    case("einsum-iji-implicit", lambda a: np.einsum("iji", a), A(2, 3, 2)),
    case("einsum-diag-times", lambda a, b: np.einsum("ii,i->i", a, b), A(3, 3), A(3)),
    case("einsum-ellipsis", lambda a, b: np.einsum("...ij,...jk->...ik", a, b), A(2, 2, 3),
         A(3, 2)),
    case("einsum-ellipsis-implicit", lambda a: np.einsum("...ij", a), A(2, 3, 4)),
    case("einsum-implicit", lambda a, b: np.einsum("kj,ji", a, b), A(2, 3), A(3, 4)),
    case("trace", lambda a: np.trace(a), A(3, 3)),
    case("trace-offsets", lambda a: np.stack([np.trace(a, k) for k in (-2, -1, 1, 3)]),
         A(3, 4)),
    case("trace-out-of-range", lambda a: np.trace(a, 7) + np.trace(a, -5) + a[0, 0], A(3, 4)),
    case("trace-axes", lambda a: np.trace(a, 1, axis1=2, axis2=0), A(3, 2, 4)),
    case("trace-method", lambda a: a.trace(-1), A(4, 3)),
    case("diff-n3-axis0", lambda a: np.diff(a, 3, axis=0), A(5, 2)),
    case("diff-prepend-append-arrays", lambda a, p: np.diff(a, axis=-1, prepend=p,
                                                            append=np.zeros((2, 1))),
         A(2, 3), A(2, 2)),
    case("diff-n-too-large", lambda a: [np.diff(a, 4), np.diff(a.reshape(3, 1), 2, axis=1),
                                        a * 1.0], A(3)),
    case("diff-n-equals-length", lambda a: np.diff(a, 2, axis=0, prepend=a[:1] * 2.0),
         A(1, 3)),
    case("cumsum-axes", lambda a: np.stack([np.cumsum(a, axis=k) for k in (0, 1, 2, -1)]),
         A(2, 3, 4), compiled=True),
    case("cumsum-none", lambda a: np.cumsum(a), A(2, 3, 4)),
    case("cumprod-axes", lambda a: np.stack([np.cumprod(a, axis=k) for k in (0, 1, 2, -2)]),
         A(2, 3, 4, lo=0.5)),
    case("cumprod-none", lambda a: np.cumprod(a), A(2, 3, lo=0.5)),
]


@pytest.mark.parametrize("fn, args, compiled", MORE_CASES)
def test_more(fn, args, compiled):
    check_modes(fn, args, compiled)


def test_einsum_sublist_errors_are_numpys():
    a = A(2, 2)
    with pytest.raises(ValueError):
        jittape.grad(lambda a: np.sum(np.einsum(a, [0, 60])))(a)
    with pytest.raises(ValueError):
        jittape.grad(lambda a: np.sum(np.einsum(a, [0, 1, 2])))(a)


# --- refusals --------------------------------------------------------------------------------
@pytest.mark.parametrize("fn, arg, pattern", [
    (lambda x: np.quantile(x, x[0] * 0 + 0.5), A(4), "np.quantile: argument 'q'"),
    (lambda x: np.percentile(x, 50, weights=np.ones(4), method="inverted_cdf"), A(4),
     "np.percentile with weights"),
    (lambda x: np.median(x, out=np.zeros(())), A(4), "np.median with out"),
    (lambda x: np.partition(x, [x[0]]), A(4), "np.partition: argument 'kth'"),
    (lambda x: np.convolve(x, [1.0, 2.0], mode=x[0]), A(3), "np.convolve: argument 'mode'"),
    (lambda x: np.gradient(x, edge_order=x[0]), A(4), "np.gradient: argument 'edge_order'"),
    (lambda x: np.interp(x, [0.0, 1.0], [1j, 2.0]), A(3), "np.interp with complex"),
])
def test_refusals_name_the_function_and_argument(fn, arg, pattern):
    with pytest.raises(NotDifferentiableError, match=pattern):
        jittape.grad(lambda x: np.sum(fn(x)))(arg)


def test_tapes_with_interp_and_correlate_save_load_and_validate(tmp_path):
    def f(x, k):
        return np.sum(np.interp(x, np.cumsum(k), np.sin(k)) * np.convolve(x, k, "same")[:3])
    x, k = A(3), A(3, lo=0.5)
    tape = jittape.record(f, x, k, argnums=(0, 1))
    tape.save(tmp_path / "t.npz")
    loaded = jittape.load(tmp_path / "t.npz")
    x2, k2 = A(3), A(3, lo=0.5)
    assert loaded.value(x2, k2) == pytest.approx(f(x2, k2), rel=1e-13)
    from jittape.ops import codes as K
    from jittape.tape.file import validate
    t = loaded.arrays
    for opc in (K.INTERP, K.CORRELATE):
        i = int(np.flatnonzero(t.op == opc)[0])
        good = int(t.k[i]) if opc == K.INTERP else int(t.pool[t.k[i]])
        if opc == K.INTERP:
            t.k[i] = good + 1
        else:
            t.pool[t.k[i]] = good + 1
        with pytest.raises(jittape.TapeFormatError, match="does not match"):
            validate(t, loaded.out_id, loaded.out_shape)
        if opc == K.INTERP:
            t.k[i] = good
        else:
            t.pool[t.k[i]] = good
    validate(t, loaded.out_id, loaded.out_shape)

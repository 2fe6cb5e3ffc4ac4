"""NumPy functions that libraries call on active arrays (SciPy's distributions, scikit-learn's
kernels, statsmodels, lmfit): one-argument np.where and the nonzero family, np.isnan & co.
as masks, np.iscomplex / np.isreal, astype, np.copyto, np.fill_diagonal,
np.diag_indices_from, np.extract, np.place, np.putmask, np.full / np.full_like of an active
fill value, and reshape / ravel / flatten in the orders 'F', 'A' and 'K'.

NumPy's semantics are the specification: each value against NumPy's own (the function run
on plain arrays: value, shape, dtype), writes against NumPy's aliasing, and each library
idiom in every mode (:func:`modes.check_every_mode`: gradient, JVP and HVP against central
differences, a saved tape replayed). Index results are constants under a guard: a replay
where the mask differs fails it; masks that only select between values are selects, correct
at any replayed point."""

import numpy as np
import pytest

import jittape
from jittape import GuardFailure, NotDifferentiableError
from jittape.numpy.active import Active, Predicate
from jittape.numpy.prealloc import Prealloc, resolve
from modes import check_every_mode

X = np.array([0.5, -1.2, 2.0, 0.8])
V = np.array([0.3, -0.7, 0.5, 0.2])
X2 = X + 0.05  # the same signs: every mask and guard holds
FLIPPED = np.array([-0.5, 1.2, 2.0, -0.8])  # other signs: masks differ
_NUMPY_FULL = np.full  # NumPy's own function (bound outside a recording)
OUTSIDE = np.zeros(4)  # an array created outside the recorded function


def primal(r):
    """What a recorded function computed, as NumPy's value (float64 for active arrays)."""
    if type(r) is Prealloc:
        r = resolve(r)
    if isinstance(r, Predicate):
        return np.asarray(r._v, dtype=bool)
    if isinstance(r, Active):
        return np.asarray(r._v, dtype=np.float64)
    return np.asarray(r)


def every_mode(cases):
    """A test of each function of ``cases`` (name -> f) in every mode, at X."""
    @pytest.mark.parametrize("name", list(cases))
    def test(name, tmp_path):
        check_every_mode(cases[name], X, V, X2, tmp_path)
    return test


def like_numpy(fns):
    """A test that each ``fn(active X)`` of ``fns`` has NumPy's value, shape and dtype."""
    @pytest.mark.parametrize("k", range(len(fns)))
    def test(k):
        fn, seen = fns[k], []

        def f(p):
            seen.append(primal(fn(p)))
            return np.sum(p)
        jittape.grad(f)(X)
        ref = np.asarray(fn(X))
        assert seen[0].shape == ref.shape and seen[0].dtype == ref.dtype
        np.testing.assert_array_equal(seen[0], ref)
    return test


def raises(exc, match, fn):
    """``fn`` of the active X (summed) raises ``exc`` matching ``match``."""
    with pytest.raises(exc, match=match):
        jittape.grad(lambda p: np.sum(fn(p)))(X)


# === indices: one-argument np.where, np.nonzero & co., np.isnan & co., np.isreal & co. ===
def _lmfit_pattern(p):  # lmfit's bose[np.where(np.isnan(bose))] = tiny, on an active bose
    with np.errstate(invalid="ignore"):
        bose = np.log(p) * p
    bose[np.where(np.isnan(bose))] = 1e-3
    return np.sum(bose * p)


def _indices(p):
    m = p > 0
    s = np.sum(p[np.where(m)] ** 2) + np.sum(p[np.nonzero(m)]) + np.sum(p[m.nonzero()])
    s = s + np.sum(p[np.argwhere(m)[:, 0]] * 2.0) + np.sum(p[np.flatnonzero(m)] ** 3)
    q = np.outer(p, p)
    r = q[np.where(q > 0.5)]  # two index arrays
    fin = p[np.isfinite(p) & ~np.signbit(p) & ~np.isinf(p) & ~np.isnan(p)]
    return s + np.sum(r) + np.sum(fin ** 2)


test_index_idioms_in_every_mode = every_mode({"lmfit": _lmfit_pattern, "indices": _indices})
test_index_values_are_numpys = like_numpy([
    lambda p: np.where(p > 0), lambda p: np.where(np.outer(p, p) > 0),
    lambda p: np.nonzero(p < 0), lambda p: (p < 0).nonzero(),
    lambda p: np.argwhere(np.outer(p, p) > 0.5), lambda p: np.flatnonzero(p),
    lambda p: np.isnan(p), lambda p: np.isinf(p), lambda p: np.isfinite(p),
    lambda p: np.signbit(p), lambda p: np.iscomplex(p), lambda p: np.isreal(p),
    lambda p: np.iscomplex(p[0]), lambda p: np.isreal(p[0]), lambda p: np.iscomplexobj(p),
    lambda p: np.isrealobj(p), lambda p: np.diag_indices_from(np.outer(p, p)),
    lambda p: np.diag_indices(4)])


def test_index_functions_of_an_active_comparison_are_guarded():
    fns = [lambda m: np.where(m), np.nonzero, lambda m: m.nonzero(), np.argwhere,
           np.flatnonzero]
    for fn in fns:
        def f(p, fn=fn):
            return np.sum(p[fn(p > 0)] ** 2)
        tape = jittape.record(f, X)
        assert tape.value(X2) == pytest.approx(f(X2), rel=1e-13)
        with pytest.raises(GuardFailure):
            tape.value(FLIPPED)


def test_queries_of_shape_and_dtype_record_nothing():
    def f(p):
        m, p0 = np.outer(p, p), p[0]
        n = p._t.n
        got = [np.iscomplex(p), np.isreal(p), np.iscomplexobj(p), np.isrealobj(p),
               np.iscomplex(p0), np.isreal(p0), np.diag_indices_from(m), np.diag_indices(4)]
        assert p._t.n == n
        ref = [np.iscomplex(X), np.isreal(X), np.iscomplexobj(X), np.isrealobj(X),
               np.iscomplex(X[0]), np.isreal(X[0]), np.diag_indices_from(np.outer(X, X)),
               np.diag_indices(4)]
        for g, r in zip(got, ref):
            assert type(g) is type(r)
            np.testing.assert_array_equal(g, r)
        return np.sum(p)
    jittape.grad(f)(X)


def test_index_errors_are_numpys():
    raises(ValueError, "0d", lambda p: np.where(p[0] > 0))
    raises(ValueError, "both or neither", lambda p: np.where(p > 0, p))
    raises(ValueError, "at least 2-d", lambda p: np.diag_indices_from(p))


# === astype ===============================================================================
def _astype(p):
    a = p.astype(float)
    b = p.astype(np.float64, copy=False)
    m = (p > 0).astype(float) + (p > 0.6).astype(np.float64)  # 0/1 floats: 2 where both
    k = (p * 3.1).astype(int)  # guarded integers, no derivative
    c = p.astype(float)
    c[0] = -5.0  # a copy: p is unchanged
    return np.sum(a * b) + np.sum(m * p) + np.sum(k * p) + np.sum(c) + np.sum(p)


test_astype_in_every_mode = every_mode({"astype": _astype})
test_astype_values_are_numpys = like_numpy([
    lambda p: p.astype(float), lambda p: p.astype(int), lambda p: (p > 0).astype(float),
    lambda p: (p > 0).astype(bool), lambda p: p.astype(bool), lambda p: p[0].astype(float),
    lambda p: np.astype(p, np.int32), lambda p: p.astype(float, order="C", casting="safe")])


def test_astype_copies_as_numpy():
    def f(p):
        assert p.astype(float) is not p and p.astype(float, copy=False) is p
        m = p > 0
        assert m.astype(bool) is not m and m.astype(bool, copy=False) is m
        assert type(m.astype(float)) is Active  # floats, not a mask
        return np.sum(p)
    jittape.grad(f)(X)


def test_astype_refusals():
    raises(NotDifferentiableError, "float32", lambda p: p.astype(np.float32))
    raises(TypeError, "safe", lambda p: p.astype(int, casting="safe"))
    raises(ValueError, "order", lambda p: p.astype(float, order="X"))


# === writes: np.copyto, np.putmask, np.place, np.fill_diagonal; np.extract ================
def _copyto(p):
    out = np.zeros(4)
    np.copyto(out, p ** 2, where=p > 0)  # a select: correct wherever it is replayed
    act = np.exp(np.outer(p[:2], p))  # (2, 4)
    np.copyto(act, p[1:3].reshape(2, 1) * 2.0 + 1.0, where=np.array([True, False, True, True]))
    row = np.ones((2, 4))
    np.copyto(row, np.sin(p))  # broadcast over the rows
    return np.sum(out * p) + np.sum(act @ p) + np.sum(row @ p)


def _fill_diagonal(p):
    a = np.zeros((4, 4))
    np.fill_diagonal(a, p[:2] * 3.0)  # shorter: repeated, as NumPy's flat assignment
    b = np.outer(p, p)  # an active array
    np.fill_diagonal(b, 1.0)
    c = np.outer(p, p[:2]) + 0.5
    np.fill_diagonal(c, np.cos(p), wrap=True)  # tall: wraps every columns + 1 rows
    d = np.zeros((5, 2)) + 0.25
    np.fill_diagonal(d, p[3], wrap=True)
    e = np.outer(p, p)
    e[np.diag_indices_from(e)] = np.exp(p)
    return np.sum(a @ p) + np.sum(b @ p) + np.sum(c * c) + np.sum(d) * p[0] + np.sum(e @ p)


def _scipy_distribution(p):  # scipy.stats' rv_continuous.pdf: place(output, cond, ...)
    cond = (p > 0) & (p < 3.0)
    out = np.zeros(p.size) - 1.5
    goodp = np.extract(cond, p)
    np.place(out, cond, np.log(goodp) * goodp)
    return np.sum(out * p)


def _place_and_extract(p):
    a = np.zeros((2, 3))
    np.place(a, np.array([[1, 0, 1], [1, 1, 0]]), p[:2] ** 2)  # 2 values over 4 positions
    b = np.cos(np.arange(6.0)) * p[3]
    np.place(b, b > 0, p[1:3])
    e = np.extract([True, False, True, True], p) + np.extract(p[:3] != 0, p[:3] * 2.0)
    return np.sum(a * a) + np.sum(b * p[0]) + np.sum(e ** 3)


def _putmask(p):
    a = np.ones(4)
    np.putmask(a, p > 0, p ** 2)  # an active mask: a select, no guard
    b = np.sin(p)
    np.putmask(b, [True, False, False, True], [10.0, p[1]])  # values repeated by position
    c = np.outer(p, p)
    np.putmask(c, c > 0.5, 0.5)
    return np.sum(a * p) + np.sum(b * p) + np.sum(c @ p)


def _writes_into_views(p):  # the functions write through views into their base
    out = np.zeros(5)
    np.copyto(out[1:], p * 2.0)  # a view of a preallocated array
    m = np.outer(p, p)
    np.fill_diagonal(m[1:3, 1:3], p[:2])  # a view of an active array
    np.putmask(m.T[0], p > 0, -p)  # a strided view (a column)
    np.place(m[3], m[3] > 0.5, p[0])
    np.copyto(m[:, ::2], 1.0, where=np.array([True, False]))
    return np.sum(out * out) + np.sum(m @ p)


test_writes_in_every_mode = every_mode({
    "copyto": _copyto, "fill_diagonal": _fill_diagonal,
    "scipy distribution": _scipy_distribution, "place and extract": _place_and_extract,
    "putmask": _putmask, "writes into views": _writes_into_views})
test_extract_values_are_numpys = like_numpy([
    lambda p: np.extract(p > 0, p), lambda p: np.extract([1, 0, 1], p),
    lambda p: np.extract(p > 0, np.arange(4.0)), lambda p: np.extract(p > 0, p > 1)])


def test_masks_that_select_are_not_guarded():
    """np.copyto(where=) and np.putmask with an active comparison: one select, so a tape
    replayed where the mask differs is still right (value and gradient)."""
    def f(p):
        out = np.zeros(4)
        np.copyto(out, p ** 2, where=p > 0)
        a = np.sin(p)
        np.putmask(a, a < 0, p ** 3)
        return np.sum(out * p) + np.sum(a * p)
    tape = jittape.record(f, X)
    value, grad = tape.value_and_gradient(FLIPPED)
    assert value == pytest.approx(f(FLIPPED), rel=1e-13)
    np.testing.assert_allclose(grad, jittape.grad(f)(FLIPPED), rtol=1e-13)


def test_place_and_extract_guard_their_mask():
    tape = jittape.record(_scipy_distribution, X)
    assert tape.value(X2) == pytest.approx(_scipy_distribution(X2), rel=1e-13)
    with pytest.raises(GuardFailure):
        tape.value(FLIPPED)


def test_plain_destinations_take_converted_values():
    """An active value written into a plain integer or bool array: NumPy's conversion
    (guarded), as NumPy writes a float into such an array."""
    def f(p):
        ints = np.zeros(4, dtype=int)
        np.copyto(ints, p * 3.0, casting="unsafe")
        np.testing.assert_array_equal(ints, (X * 3.0).astype(int))
        flags = np.zeros(4, dtype=bool)
        np.putmask(flags, [True, True, False, False], p > 0)
        np.testing.assert_array_equal(flags, [True, False, False, False])
        return np.sum(p * ints)
    np.testing.assert_allclose(jittape.grad(f)(X), (X * 3.0).astype(int))


def test_write_errors_and_refusals():
    raises(NotDifferentiableError, "copyto", lambda p: np.copyto(OUTSIDE, p) or p)
    raises(NotDifferentiableError, "place", lambda p: np.place(OUTSIDE, p > 0, p) or p)
    raises(NotDifferentiableError, "comparison",
           lambda p: np.copyto(p > 0, p, casting="unsafe") or p)
    raises(TypeError, "same_kind", lambda p: np.copyto(np.zeros(4, int), p) or p)
    raises(TypeError, "argument 1 must be numpy.ndarray",
           lambda p: np.place([1.0, 2.0], [True, False], p) or p)
    raises(ValueError, "same size", lambda p: np.place(np.zeros(3), p > 0, p) or p)
    raises(ValueError, "empty array", lambda p: np.place(np.zeros(4), p > 0, []) or p)
    raises(ValueError, "same size", lambda p: np.putmask(p * 1.0, [True, False], p) or p)
    raises(ValueError, "broadcast", lambda p: np.copyto(p * 1.0, p[:3]) or p)
    raises(ValueError, "at least 2-d", lambda p: np.fill_diagonal(p * 1.0, 1.0) or p)
    raises(IndexError, "out of bounds", lambda p: np.extract(np.ones(5), p))


# === np.full and np.full_like of an active fill value =====================================
def _constant_kernel(p):  # scikit-learn's ConstantKernel + WhiteKernel, in its own idiom
    c = p[0] ** 2  # constant_value, a hyperparameter
    K = np.full((3, 3), c, dtype=np.array(1.0).dtype)
    K += np.outer(p[1:], p[1:])
    np.fill_diagonal(K, np.diag(K) + p[3] ** 2)
    diag = np.full(3, c)
    return np.sum(K @ p[1:]) + np.sum(diag * p[1:]) + np.sum(np.full_like(p, p[2]) * p)


def _full_forms(p):
    a = np.full((2, 4), p)  # an active row broadcast
    a[1, ::2] = 3.0  # a write into the result: a writable array of its own
    b = np.full(4, p[1], order="F")
    c = np.full_like(np.ones((2, 2)), p[3])  # of a plain array created while recording
    d = np.full((2, 2), p[1] > 0)  # a comparison as the fill: a mask
    k = np.full(3, p[1])
    k[0] = 0.0  # the fill value is not changed
    return np.sum(a * p) + np.sum(b ** 3) + np.sum(c @ p[:2]) + np.sum(d * p[:2]) + \
        np.sum(k) + p[1]


def _scipy_logpdf(p):  # scipy.stats: out = empty; out.fill(-inf); place(out, cond, ...)
    out = np.empty(p.size)
    out.fill(-1.5)
    np.place(out, p > 0, np.log(np.extract(p > 0, p)))
    return np.sum(out * p)


test_full_in_every_mode = every_mode({
    "constant kernel": _constant_kernel, "full forms": _full_forms,
    "scipy logpdf": _scipy_logpdf})
test_full_values_are_numpys = like_numpy([
    lambda p: np.full((2, 3), p[0]), lambda p: np.full(3, p[1], dtype=float),
    lambda p: np.full((2, 4), p), lambda p: np.full_like(np.ones(3), p[0]),
    lambda p: np.full_like(p, p[3]), lambda p: np.full(3, p[0] * 2.7, dtype=int),
    lambda p: np.full_like(np.arange(3), p[0] * 2.7), lambda p: np.full(2, p[1], dtype=bool),
    lambda p: np.full_like(p, p[0] * 2.7, dtype=np.int32), lambda p: np.full(3, p[1] > 0),
    lambda p: np.full((2, 4), p > 0), lambda p: np.full(2, p[0] > 0, dtype=float)])


def test_full_with_an_active_fill_is_a_preallocated_array():
    def f(p):
        k = np.full((2, 2), p[0])
        assert type(k) is Prealloc and k.dtype == np.float64 and k is not np.full(2, p[0])
        f_order = np.full((2, 3), p[1], order="F")
        assert f_order.flags.f_contiguous and not f_order.flags.c_contiguous
        return np.sum(k) + np.sum(f_order * np.arange(6.0).reshape(2, 3))
    assert jittape.grad(f)(X) == pytest.approx([4.0, 15.0, 0.0, 0.0])


def test_full_of_other_fills_is_numpys():
    def f(p):
        objects = np.full(2, np.array([{}, "a"], dtype=object))  # no active: NumPy's
        assert objects.dtype == object and objects[0] == {}
        mixed = np.full(3, [p[0], 1.0, p[1]])  # a list holding actives: one active array
        assert type(mixed) is Prealloc or not isinstance(p, Active)
        return np.sum(mixed * p[1:]) + np.sum(np.full(3, 2.5))
    assert jittape.value_and_grad(f)(X)[0] == pytest.approx(f(X), rel=1e-14)
    np.testing.assert_allclose(jittape.grad(f)(X), [-1.2, 1.3, 1.0, -1.2], rtol=1e-14)


def test_place_into_minus_infinity():
    """The idiom of SciPy's logpdf, summed: -inf, and the gradient of the placed values."""
    def f(p):
        out = np.empty(p.size)
        out.fill(-np.inf)
        np.place(out, p > 0, np.log(np.extract(p > 0, p)))
        return out.sum()
    value, grad = jittape.value_and_grad(f)(X)
    assert value == f(X) == -np.inf
    np.testing.assert_allclose(grad, np.where(X > 0, 1.0 / X, 0.0), rtol=1e-14)


def test_full_refusals():
    # NumPy's own np.full bound outside a recording is rebound to the stand-in inside one
    np.testing.assert_allclose(jittape.grad(lambda p: np.sum(_NUMPY_FULL(3, p[0] ** 2)))(X),
                               np.r_[6 * X[0], np.zeros(X.size - 1)])
    raises(NotDifferentiableError, "float32", lambda p: np.full(3, p[0], dtype=np.float32))
    raises(ValueError, "broadcast", lambda p: np.full(3, p))


# === reshape, ravel and flatten in the orders 'F', 'A' and 'K' ============================
def _mnlogit(p):  # statsmodels' MNLogit: params.reshape(K, -1, order="F")
    params = p.reshape(2, -1, order="F")  # (K, J - 1) in column-major order
    exog = np.array([[1.0, 0.3], [1.0, -0.8], [1.0, 1.5]])
    xb = exog @ params
    exb = np.column_stack((np.ones(3), np.exp(xb)))
    return np.sum(np.log(exb.sum(1))) - np.sum(xb[:, 0])


def _orders(p):
    m = np.outer(p, p[:3])  # (4, 3)
    w = np.arange(12.0)
    s = np.sum(m.ravel(order="F") * w) + np.sum(np.ravel(m, order="K") * w)
    s = s + np.sum(m.T.ravel(order="K") * w) + np.sum(m.T.flatten("A") * w)
    s = s + np.sum(np.reshape(m, (2, 6), order="F") * w.reshape(2, 6))
    s = s + np.sum(m.T.reshape(2, 6, order="A") * w.reshape(2, 6))
    s = s + np.sum(m[::-1, ::2].T.ravel("K") * w[:8])
    return s + np.sum(m.flatten("F") ** 2)


def _order_aliasing(p):
    q = p * 1.0
    y = q.reshape(2, 2, order="F")  # a view of a vector: writes reach q
    y[0, 1] = 7.0 * p[0]
    z = np.outer(p, p[:2])
    z.T.ravel("K")[0] = p[3]  # memory order of z: a view, the write reaches z
    c = z.ravel("F")  # not contiguous in F order: a copy
    c[1] = 100.0
    return np.sum(q * p) + np.sum(z * z)


def _fortran_ordered(p):  # arrays created in Fortran order keep NumPy's memory layout
    r = np.empty((2, 3), order="F")
    r[0] = p[:3]
    r[1] = p[1:] * 2.0
    a = r.ravel("K")  # F memory order (a view in NumPy)
    b = r.T.reshape(-1)  # r.T is C-contiguous: a view, the write below reaches r
    b[0] = 10.0 * p[3]
    c = r.reshape(3, 2, order="A")
    k = np.full((2, 3), p[0], order="F")
    k[1] = p[1:]
    return np.sum(a * np.arange(6.0)) + np.sum(r * r) + np.sum(c * np.arange(6.0).reshape(
        3, 2)) + np.sum(k.ravel("K") * np.arange(6.0)) + np.sum(k.T.ravel() * np.arange(6.0))


test_orders_in_every_mode = every_mode({
    "mnlogit": _mnlogit, "orders": _orders, "aliasing": _order_aliasing,
    "fortran ordered": _fortran_ordered})
test_order_values_are_numpys = like_numpy([
    lambda p: p.reshape(2, 2, order="F"), lambda p: np.reshape(p, (2, 2), order="A"),
    lambda p: np.outer(p, p[:3]).ravel("F"), lambda p: np.outer(p, p[:3]).T.ravel("K"),
    lambda p: np.outer(p, p[:3]).T.ravel("A"), lambda p: np.outer(p, p[:3]).flatten("K"),
    lambda p: np.outer(p, p[:3])[:, ::-2].ravel("K"),
    lambda p: np.broadcast_to(p, (3, 4)).T.ravel("K"),
    lambda p: np.reshape(np.outer(p, p[:3]), (3, 2, 2), order="F"),
    lambda p: (np.outer(p, p) > 0).reshape(-1, order="F")])


def test_order_views_are_linked_as_numpys():
    def f(p):
        q = p * 1.0
        assert q.reshape(2, 2, order="F")._base is not None  # a view of q
        assert np.outer(p, p).ravel("F")._base is None  # a copy
        return np.sum(q)
    jittape.grad(f)(X)


def test_order_errors_are_numpys():
    raises(ValueError, "order 'K' is not permitted", lambda p: p.reshape(2, 2, order="K"))
    raises(ValueError, "copy", lambda p: np.outer(p, p).reshape(-1, order="F", copy=False))

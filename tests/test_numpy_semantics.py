"""NumPy's semantics are the specification (issue 10, "silent wrong results").

Every value is compared with NumPy's own (shape and value, rtol 1e-10) and every gradient
with central differences of the plain NumPy function (:func:`jittape.testing.check_grads`).
Sections: products (dot, matmul, vdot, inner, outer, tensordot, einsum, kron, vecdot, ...),
the triangle that eigh/eigvalsh/cholesky read, std/var edge cases, in-place updates and views.
"""

import warnings

import numpy as np
import pytest

import jittape
from jittape import NotDifferentiableError
from jittape.numpy.active import Active
from jittape.testing import check_grads

RNG = np.random.default_rng(10)


def A(*shape):
    return RNG.standard_normal(shape) if shape else float(RNG.standard_normal())


def _weights(shape):
    """Fixed, distinct weights: sum(W * f(x)) exercises the whole Jacobian of f."""
    return np.cos(np.arange(1.0, 1.0 + np.prod(shape, dtype=int)).reshape(shape))


def recorded(fn, *args):
    """The primal jittape records for ``fn(*args)`` (all arguments active)."""
    out = []

    def f(*xs):
        r = fn(*xs)
        out.append(np.asarray(r._v if isinstance(r, Active) else r, dtype=np.float64))
        return np.sum(r * _weights(np.shape(out[-1])))
    jittape.value_and_grad(f, tuple(range(len(args))))(*args)
    return out[-1]


def assert_like_numpy(fn, *args, argnums=None):
    """jittape's value of fn equals NumPy's; its gradient matches central differences."""
    ref = np.asarray(fn(*args), dtype=np.float64)
    got = recorded(fn, *args)
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)
    W = _weights(ref.shape)
    argnums = tuple(range(len(args))) if argnums is None else argnums
    check_grads(lambda *xs: np.sum(fn(*xs) * W), args, argnums=argnums)


# --- products ----------------------------------------------------------------------------
SHAPES_A = [(), (3,), (2, 3), (4, 2, 3), (2, 4, 2, 3)]
SHAPES_B = [(), (3,), (3, 2), (4, 3, 2), (2, 1, 3, 2)]


@pytest.mark.parametrize("sa", SHAPES_A, ids=str)
@pytest.mark.parametrize("sb", SHAPES_B, ids=str)
def test_dot_all_ranks(sa, sb):
    """np.dot sums the last axis of a with the second-to-last of b (not matmul's batch)."""
    assert_like_numpy(np.dot, A(*sa), A(*sb))


@pytest.mark.parametrize("sa,sb", [((2, 3), (4, 3, 2)), ((4, 2, 3), (4, 3, 2)),
                                   ((3, 3), (3, 3, 3)), ((2, 3, 3), (2, 3, 3))])
def test_dot_nd_was_matmul(sa, sb):
    # these gave matmul's shape or values before (e.g. (4, 2, 2) for (4,2,3)·(4,3,2))
    a, b = A(*sa), A(*sb)
    assert_like_numpy(np.dot, a, b)
    assert_like_numpy(lambda x, y: x.dot(y), a, b)


@pytest.mark.parametrize("argnum", [0, 1])
def test_dot_nd_one_constant_operand(argnum):
    a, b = A(2, 4, 3), A(3, 3, 2)
    assert_like_numpy(np.dot, a, b, argnums=argnum)


def test_dot_shape_mismatch_is_numpys_error():
    a, b = A(2, 3), A(4, 2, 2)
    with pytest.raises(ValueError, match="not aligned"):
        np.dot(a, b)
    with pytest.raises(ValueError, match="not aligned"):
        jittape.grad(lambda x: np.sum(np.dot(x, b)))(a)


PRODUCTS = {
    "matmul": np.matmul, "vdot": np.vdot, "inner": np.inner, "outer": np.outer,
    "kron": np.kron, "tensordot1": lambda a, b: np.tensordot(a, b, 1),
    "tensordot0": lambda a, b: np.tensordot(a, b, 0),
}
RANK_PAIRS = [(sa, sb) for sa in SHAPES_A for sb in SHAPES_B]


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_products_all_ranks(name):
    """Every rank pair 0-D..4-D: NumPy's value, or NumPy's error, and correct gradients."""
    fn = PRODUCTS[name]
    for sa, sb in RANK_PAIRS:
        a, b = A(*sa), A(*sb)
        try:
            fn(a, b)
        except (ValueError, IndexError) as e:  # NumPy's error: jittape raises the same type
            with pytest.raises(type(e)):
                recorded(fn, a, b)
            continue
        assert_like_numpy(fn, a, b)


@pytest.mark.parametrize("fn,sa,sb", [
    (np.vecdot, (3,), ()), (np.vecdot, (), (2, 3)), (np.vecdot, (2, 3), (1,)),
    (np.matvec, (3,), (3,)), (np.vecmat, (3,), (3,)), (np.matvec, (2, 3), (1,))])
def test_vecdot_matvec_core_dims_refused_like_numpy(fn, sa, sb):
    # the compositions would broadcast where NumPy's gufuncs refuse
    a, b = A(*sa), A(*sb)
    with pytest.raises(ValueError):
        fn(a, b)
    with pytest.raises(ValueError):
        recorded(fn, a, b)


@pytest.mark.parametrize("fn,sa,sb", [
    (np.vecdot, (4, 3), (2, 1, 3)), (np.matvec, (2, 4, 3), (3,)), (np.vecmat, (3,), (2, 3, 4))])
def test_vecdot_matvec_values(fn, sa, sb):
    assert_like_numpy(fn, A(*sa), A(*sb))


EINSUMS = [
    ("ij,jk", [(2, 3), (3, 4)]), ("...ij,...jk->...ik", [(2, 2, 3), (2, 3, 4)]),
    ("...ij,...jk", [(2, 1, 2, 3), (5, 3, 4)]), ("i...,i...->...", [(3, 2), (3, 1)]),
    ("i...", [(2, 3)]), ("...ii->...i", [(2, 3, 3)]), ("ii...", [(3, 3, 2)]),
    ("aB", [(2, 3)]), ("Ba,cb", [(2, 3), (3, 3)]), ("ii", [(3, 3)]),
    ("ij,ij->", [(1, 3), (2, 3)]), ("abcd,dcba->", [(2, 3, 2, 3), (3, 2, 3, 2)]),
    ("abcd,cd->ab", [(2, 3, 2, 3), (2, 3)]), ("...i,...i->...", [(3,), (2, 3)]),
    (",i->i", [(), (3,)]), ("i,i,i->", [(3,), (3,), (3,)]),
]


@pytest.mark.parametrize("subs,shapes", EINSUMS, ids=[s for s, _ in EINSUMS])
def test_einsum_implicit_ellipsis_broadcast(subs, shapes):
    assert_like_numpy(lambda *xs: np.einsum(subs, *xs), *[A(*s) for s in shapes])


@pytest.mark.parametrize("subs,shapes", [("...->", [(2, 3)]), ("i...->i", [(2, 3)]),
                                         ("ij...,jk...->ik", [(2, 3, 1), (3, 4, 1)])])
def test_einsum_missing_output_ellipsis_is_numpys_error(subs, shapes):
    ops = [A(*s) for s in shapes]
    with pytest.raises(ValueError, match="ellipsis"):
        np.einsum(subs, *ops)
    with pytest.raises(ValueError, match="ellipsis"):
        recorded(lambda *xs: np.einsum(subs, *xs), *ops)


# --- which triangle linear algebra reads -------------------------------------------------
def _nonsymmetric(n=4, seed=0):
    """A non-symmetric matrix whose lower and upper triangles both give positive definite
    symmetric matrices (so eigh and cholesky see different matrices for 'L' and 'U')."""
    rng = np.random.default_rng(seed)
    b = rng.standard_normal((n, n))
    m = b @ b.T + n * np.eye(n)
    m[np.tril_indices(n, -1)] += rng.uniform(-0.5, 0.5, n * (n - 1) // 2)
    return m


M = _nonsymmetric()
W4 = _weights((4, 4))


def _eig_fn(uplo):
    # eigenvalues and squared eigenvectors: invariant to the eigenvectors' signs
    def f(x):
        w, v = np.linalg.eigh(x, UPLO=uplo)
        return np.sum(w * W4[0]) + np.sum(v ** 2 * W4)
    return f


@pytest.mark.parametrize("uplo", ["L", "U", "l", "u"])
def test_eigh_reads_one_triangle(uplo):
    assert not np.allclose(M, M.T)
    for k in range(2):  # eigenvalues and eigenvectors are NumPy's
        np.testing.assert_allclose(recorded(lambda x: np.linalg.eigh(x, UPLO=uplo)[k], M),
                                   np.linalg.eigh(M, UPLO=uplo)[k], rtol=1e-10, atol=1e-12)
    g = jittape.grad(_eig_fn(uplo))(M)
    unread = np.triu(g, 1) if uplo in "Ll" else np.tril(g, -1)
    assert np.all(unread == 0.0)  # the triangle NumPy does not read has no influence
    check_grads(_eig_fn(uplo), (M,))


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigvalsh_reads_one_triangle(uplo):
    assert_like_numpy(lambda x: np.linalg.eigvalsh(x, UPLO=uplo), M)
    assert_like_numpy(lambda x: np.linalg.eigvalsh(x, uplo), M)


def test_eigh_bad_uplo_is_numpys_error():
    with pytest.raises(ValueError, match="UPLO"):
        jittape.grad(lambda x: np.sum(np.linalg.eigh(x, UPLO="X")[0]))(M)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_replays_on_the_read_triangle(uplo):
    f = _eig_fn(uplo)
    tape = jittape.record(f, M)
    m2 = _nonsymmetric(seed=1)
    v, g = tape.value_and_gradient(m2)
    v_ref, g_ref = jittape.value_and_grad(f)(m2)
    np.testing.assert_allclose(v, f(m2), rtol=1e-10)
    np.testing.assert_allclose(g, g_ref, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_reads_one_triangle(upper):
    fn = (lambda x: np.linalg.cholesky(x, upper=True)) if upper else np.linalg.cholesky
    assert_like_numpy(fn, M)
    g = jittape.grad(lambda x: np.sum(fn(x) * W4))(M)
    unread = np.tril(g, -1) if upper else np.triu(g, 1)
    assert np.all(unread == 0.0)


@pytest.mark.parametrize("name,fn", [
    ("inv", np.linalg.inv), ("det", np.linalg.det),
    ("slogdet", lambda x: np.linalg.slogdet(x)[1]),
    ("solve", lambda x: np.linalg.solve(x, np.arange(1.0, 5.0))),
    ("solve-matrix", lambda x: np.linalg.solve(x, np.ones((4, 2))))])
def test_full_matrix_routines_read_both_triangles(name, fn):
    assert_like_numpy(fn, M)
    g = jittape.grad(lambda x: np.sum(fn(x) * _weights(np.shape(fn(M)))))(M)
    assert np.any(np.triu(g, 1) != 0.0) and np.any(np.tril(g, -1) != 0.0)


# --- std / var edge cases ----------------------------------------------------------------
@pytest.mark.parametrize("fn", [np.std, np.var], ids=["std", "var"])
@pytest.mark.parametrize("x,axis", [(np.array([2.0]), None), (np.array([[1.0, 2.0, 3.0]]), 0),
                                    (np.array([[1.0], [5.0]]), 1), (2.5, None)],
                         ids=["size1", "axis-len1", "axis-len1-col", "scalar"])
def test_std_var_of_one_element_have_zero_gradient(fn, x, axis):
    """A spread of one element is 0 whatever it is: derivative 0 (std gave nan)."""
    v, g = jittape.value_and_grad(lambda y: np.sum(fn(y, axis=axis)))(x)
    np.testing.assert_array_equal(v, np.sum(fn(x, axis=axis)))
    assert np.all(np.asarray(g) == 0.0)
    check_grads(lambda y: np.sum(fn(y, axis=axis)), (x,))


def test_std_of_constant_data_has_subgradient_zero():
    # std is a norm of the deviations: 0 is a subgradient at 0 (and the central difference)
    x = np.full(4, 1.5)
    v, g = jittape.value_and_grad(np.std)(x)
    assert v == np.std(x) == 0.0 and np.all(g == 0.0)
    check_grads(np.std, (x,))


@pytest.mark.parametrize("fn", [np.std, np.var], ids=["std", "var"])
@pytest.mark.parametrize("ddof,axis", [(0, None), (1, None), (1, 0), (2, (0, 1)), (1, -1)])
def test_std_var_ddof_axes(fn, ddof, axis):
    assert_like_numpy(lambda y: fn(y, axis=axis, ddof=ddof), A(3, 4))
    assert_like_numpy(lambda y: fn(y, axis=axis, ddof=ddof, keepdims=True), A(3, 4))


@pytest.mark.parametrize("fn", [np.std, np.var], ids=["std", "var"])
@pytest.mark.parametrize("x,ddof", [(np.array([2.0]), 1), (np.array([1.0, 2.0]), 2),
                                    (np.array([1.0, 2.0]), 5), (np.array([3.0, 3.0]), 2)])
def test_std_var_without_degrees_of_freedom(fn, x, ddof):
    """N - ddof <= 0: NumPy's inf/nan and warning; the gradient is not a finite number."""
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"), \
            np.errstate(divide="ignore", invalid="ignore"):
        ref = fn(x, ddof=ddof)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
            v, g = jittape.value_and_grad(lambda y: fn(y, ddof=ddof))(x)
    np.testing.assert_array_equal(v, ref)
    assert not np.any(np.isfinite(g))


def test_std_replays_from_zero_spread_to_nonzero():
    # recorded where std is 0 (the where-branch taken there), replayed elsewhere: exact
    f = lambda y: np.std(y, axis=0)[1] + np.std(y)
    x0 = np.ones((3, 2))
    x1 = A(3, 2)
    tape = jittape.record(f, x0)
    v, g = tape.value_and_gradient(x1)
    v_ref, g_ref = jittape.value_and_grad(f)(x1)
    np.testing.assert_allclose(v, f(x1), rtol=1e-10)
    np.testing.assert_allclose(g, g_ref, rtol=1e-10, atol=1e-12)
    check_grads(f, (x1,))


# --- in-place updates, aliases and views -------------------------------------------------
# Each function is plain NumPy code run on arrays (NumPy's aliasing gives the reference
# value and the central differences) and on active values (jittape must do the same).
X = RNG.standard_normal((3, 4))


def _alias_inplace(x):
    v = x.copy()
    w = v
    w += 1.0  # v sees it: w is v
    w *= v[0]
    return v


def _transpose_write(x):
    v = x.copy()
    w = v.T
    w[0] = 0.0  # v[:, 0] = 0
    w[1] = w[2] * v[0, 0]
    return v


def _slice_write(x):
    v = x.ravel().copy()
    s = v[1:3]
    s[0] = 5.0
    s *= v[4:6]
    v[2:5] += s[1]
    return v


def _reshape_write(x):
    v = x.copy()
    r = v.reshape(4, 3)
    r[1] = np.sin(r[2])
    r -= 0.5
    return v * 2.0


def _view_of_view(x):
    v = x.copy()
    a = v[:, 1:]  # (3, 3) view
    b = a.T[::2]  # view of a view: rows 0 and 2 of a.T are columns 1 and 3 of v
    b[1] = b[0] ** 2
    b /= 3.0
    c = b[0, 1:]  # deeper still
    c += a[0, :2]
    return v


def _siblings_and_base_write(x):
    v = x.copy()
    row, col = v[1], v[:, 2]  # two views of v
    row[2] = 10.0  # col[1] sees it
    v *= col[1]  # row and col see it
    col -= row[0]
    return np.concatenate([v.ravel(), row, col])


def _copies_do_not_see_writes(x):
    v = x.copy()
    c, d, e, f = v.copy(), v[[0, 2]], v.flatten(), v.T.reshape(-1)  # copies (as NumPy)
    g = +v
    v += 100.0
    v[0] = 0.0
    c *= 2.0  # v does not see writes to a copy either
    return np.concatenate([v.ravel(), c.ravel(), d.ravel(), e, f, g.ravel()])


def _augmented_item_assignment(x):
    v = x.copy()
    v[1:, 1] += v[:2, 0] * 2.0  # view in place, then setitem of the view itself
    v[0, :] *= 3.0
    v[[0, 2], 3] -= 1.0  # advanced: a copy updated, then written back
    v.T[2] **= 2  # through a temporary view
    return v


def _more_view_functions(x):
    v = x.copy()
    p, q = np.split(v, [1])  # views
    p[0, 0] = q[0, 0]
    np.fliplr(v)[0] = 1.0  # v[0, ::-1] = 1
    s = np.swapaxes(v, 0, 1)
    s[0] *= 2.0
    np.squeeze(v[None])[2] -= 1.0
    np.atleast_2d(v)[1, 1] = 3.0  # the object itself in NumPy
    e = np.einsum("ij->ji", v)  # a writeable view in NumPy
    e[3] = -e[3]
    m = np.moveaxis(v[None], 0, 2)
    m[0, 0, 0] += 1.0
    return v


def _inplace_ops(x):
    v = x.copy() + 2.0
    v **= 2
    v //= 0.7  # zero derivative, NumPy's value
    v %= 1.3
    v -= x
    v /= (x * x + 1.0)
    m = v[:, :3].copy()
    m @= np.eye(3) * 2.0 + x[:, :3]
    return np.concatenate([v.ravel(), m.ravel()])


def _zero_d_view(x):
    v = x[0].copy()
    a = v[..., 1]  # a 0-d view in NumPy (v[1] would be a scalar copy)
    v[1] = 3.0 * v[0]  # a sees it
    a += v[2]  # v sees it
    s = v[3]
    t = s
    t += 1.0  # a scalar: t is rebound, s and v unchanged
    return np.concatenate([v, np.stack([a, s, t])])


INPLACE = [_alias_inplace, _transpose_write, _slice_write, _reshape_write, _view_of_view,
           _siblings_and_base_write, _copies_do_not_see_writes, _augmented_item_assignment,
           _more_view_functions, _inplace_ops, _zero_d_view]


@pytest.mark.parametrize("fn", INPLACE, ids=[f.__name__[1:] for f in INPLACE])
def test_inplace_and_views_follow_numpy(fn):
    assert_like_numpy(fn, X)


@pytest.mark.parametrize("fn", INPLACE, ids=[f.__name__[1:] for f in INPLACE])
def test_inplace_and_views_replay(fn):
    W = _weights(np.shape(fn(X)))
    f = lambda x: np.sum(fn(x) * W)
    x2 = RNG.standard_normal(X.shape)
    v, g = jittape.record(f, X).value_and_gradient(x2)
    v_ref, g_ref = jittape.value_and_grad(f)(x2)
    np.testing.assert_allclose(v, f(x2), rtol=1e-10)
    np.testing.assert_allclose(g, g_ref, rtol=1e-10, atol=1e-12)


def test_alias_sees_inplace_update_and_copy_does_not():
    seen = {}

    def f(x):
        v = x * 1.0
        w, c = v, v.copy()
        w += 1.0
        seen["v"], seen["c"] = v._v.copy(), c._v.copy()
        return np.sum(v)
    jittape.grad(f)(np.zeros(3))
    np.testing.assert_array_equal(seen["v"], np.ones(3))
    np.testing.assert_array_equal(seen["c"], np.zeros(3))


@pytest.mark.parametrize("write", [
    lambda v: v.__setitem__(0, 1.0), lambda v: v.__iadd__(1.0)], ids=["setitem", "iadd"])
@pytest.mark.parametrize("view", [
    lambda v: np.diagonal(v), lambda v: np.diag(v), lambda v: np.broadcast_to(v[0], (2, 4))],
    ids=["diagonal", "diag", "broadcast_to"])
def test_read_only_views_refuse_writes_like_numpy(view, write):
    with pytest.raises(ValueError, match="read-only"):
        write(view(X.copy()))
    with pytest.raises(ValueError, match="read-only"):
        jittape.grad(lambda x: np.sum(write(view(x * 1.0))))(X)


def test_read_only_views_see_writes_to_their_base():
    def f(x):
        v = x.copy()
        d, b = np.diagonal(v), np.broadcast_to(v[1], (2, 4))
        v[1] = v[0] ** 2
        return np.concatenate([d, b.ravel()])
    assert_like_numpy(f, X)


@pytest.mark.parametrize("f", [lambda v: v.__iadd__(np.ones((2, 3, 4))),
                               lambda v: v.__imatmul__(np.ones((4, 2)))],
                         ids=["broadcast-grows", "matmul-shape"])
def test_inplace_shape_change_is_numpys_error(f):
    with pytest.raises(ValueError):
        f(X.copy())
    with pytest.raises(ValueError):
        jittape.grad(lambda x: np.sum(f(x * 1.0)))(X)


def test_inplace_on_masks():
    def f(x):
        v = x.copy()
        m = v > 0.0
        alias = m
        alias &= v < 1.0  # m sees it
        n = (v < -0.5).reshape(4, 3)
        n.T[0] |= True
        return np.where(m, v, 0.0) + np.where(n.reshape(3, 4), 2.0 * v, 0.0)
    assert_like_numpy(f, X)
    with pytest.raises(NotDifferentiableError, match="mask"):
        def g(x):
            m = x > 0.0
            m += 1.0
        jittape.grad(g)(X)


def test_rows_of_an_iteration_are_views_and_inputs_can_be_updated():
    def f(x):
        for row in x:  # rows are views: NumPy updates x through them
            row *= row[0]
        x += 1.0  # the argument itself (jittape's input is a copy of the caller's)
        return x
    assert_like_numpy(lambda x: f(x.copy()), X)
    x = X.copy()
    jittape.grad(lambda y: np.sum(f(y)))(x)
    np.testing.assert_array_equal(x, X)  # the caller's array is never written


_FUZZ_VIEWS = [
    lambda a: a.T, lambda a: a[1:], lambda a: a[::-1], lambda a: a.reshape(-1),
    lambda a: a[0] if a.ndim > 1 else a[:2], lambda a: np.expand_dims(a, 0),
    lambda a: np.squeeze(a), lambda a: a[..., ::2], lambda a: np.swapaxes(a, 0, -1),
    lambda a: a.copy(), lambda a: a.ravel(), lambda a: np.flip(a),
    lambda a: a[None, ..., None][0, ..., 0]]


def _fuzz_program(x, seed):
    """A random chain of views, copies and in-place writes (NumPy decides what aliases)."""
    import random
    rnd = random.Random(seed)
    arrs = [x.copy()]
    for _ in range(12):
        a = rnd.choice(arrs)
        if rnd.random() < 0.45:
            try:
                arrs.append(rnd.choice(_FUZZ_VIEWS)(a))
            except ValueError:  # e.g. swapaxes of a 0-d result: NumPy refuses too
                pass
        elif a.ndim >= 1 and a.size:
            src, kind = rnd.choice(arrs), rnd.randrange(3)
            if kind == 0:
                a += 0.3 * np.tanh(np.sum(src))
            elif kind == 1:
                a *= 1.1
            else:
                a[0] = np.sin(np.sum(src))
    return sum(np.sum(np.cos(a) * (i + 1)) for i, a in enumerate(arrs))


@pytest.mark.parametrize("seed", range(40))
def test_random_view_and_write_programs_match_numpy(seed):
    x = np.random.default_rng(seed).standard_normal((3, 4))
    assert_like_numpy(lambda y: _fuzz_program(y, seed), x)


def test_ndarray_methods_with_an_active_argument_convert_to_objects_or_refuse():
    # ndarray.dot does not dispatch to jittape: it converts x to an object array of
    # actives (NumPy's object loops record on them); a float conversion is refused
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(jittape.grad(lambda x: np.sum(a.dot(x) ** 2))(np.ones(3)),
                               2 * a.T @ (a @ np.ones(3)))
    buf = np.zeros(3)  # created outside the recording: a plain float array

    def into_floats(x):
        buf[:] = x
        return np.sum(buf)
    with pytest.raises(jittape.ActiveConversionError, match=r"np\.dot\(a, x\)"):
        jittape.grad(into_floats)(np.ones(3))


def test_eigh_upper_triangle_eigenvectors_replay_numpys():
    """NumPy's eigh(a, 'U') eigenvectors come from LAPACK's upper-triangle routine, whose
    signs differ from the lower one's: the replay calls that same routine (syevd with
    uplo='U'), so replayed values and gradients are NumPy's (found by running HIPS
    autograd's test_linalg against jittape), for single matrices and stacks."""
    rs = np.random.RandomState(0)
    for shape in [(5, 5), (2, 3, 4, 4)]:
        a, w = rs.randn(*shape), rs.randn(*shape)
        g = lambda x: np.sum(np.linalg.eigh(x, 'U')[1] * w)  # noqa: E731
        tape = jittape.record(g, a)
        for k in range(3):
            x = a + 0.3 * rs.randn(*shape)
            v, grad = tape.value_and_gradient(x)
            assert v == pytest.approx(g(x), rel=1e-12)
            np.testing.assert_allclose(grad, jittape.grad(g)(x), rtol=1e-12, atol=1e-12)


def test_dtype_questions_about_active_values_are_numpys_answers():
    """np.result_type, np.iscomplexobj, ... of an active value (SciPy's array-API code asks
    them) answer for its float64 primal instead of refusing."""
    seen = []

    def f(x):
        seen.append((np.result_type(x, 1), np.result_type(x[0], np.float32), np.iscomplexobj(x),
                     np.isrealobj(x), np.can_cast(x, np.float32), np.min_scalar_type(x)))
        return np.sum(x)
    jittape.grad(f)(np.ones(3))
    x = np.ones(3)
    assert seen == [(np.result_type(x, 1), np.result_type(x[0], np.float32), False, True,
                     np.can_cast(x, np.float32), np.min_scalar_type(x))]


def test_isclose_and_allclose_are_numpys_comparisons_and_replay():
    """np.isclose records NumPy's test |a - b| <= atol + rtol |b| (no derivative), with
    NumPy's answer where elements are not finite; np.allclose is a guarded bool."""
    b = np.array([np.inf, -1.2, 1.0])

    def f(z):
        return np.sum(np.isclose(z, 0.3) * z) + z[1] * float(np.allclose(z, z + 1e-12)) + \
            np.sum(np.isclose(z, b, rtol=1e-3) * z ** 2)
    x = np.array([0.3, -1.2, 2.0])
    tape = jittape.record(f, x)
    for p in (x, np.array([0.5, -1.2, 2.0]), np.array([0.3, -1.2001, 1.0])):
        v, g = tape.value_and_gradient(p)
        assert v == pytest.approx(f(p), rel=1e-13)
        w = np.isclose(p, 0.3)
        np.testing.assert_allclose(g, w + [0.0, 1.0, 0.0] + 2 * p * np.isclose(p, b, rtol=1e-3))
    with pytest.raises(jittape.GuardFailure):  # an element becomes infinite
        tape.value_and_gradient(np.array([np.inf, -1.2, 2.0]))
    xi = np.array([np.inf, -1.2, 2.0])
    np.testing.assert_array_equal(jittape.grad(lambda z: np.sum(np.isclose(z, b) * z))(xi),
                                  np.isclose(xi, b).astype(float))


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("fn", [np.sum, np.max, np.min])
def test_reductions_over_leading_axes_are_numpys_bit_for_bit(fn, axis):
    """A sum or extremum over axes that are not the last adds (or compares) whole rows in
    memory order, as NumPy's reduction does: the recorded value, the interpreted replay's
    and the compiled one's equal NumPy's exactly (a sum of -0.0s included)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((25, 7, 40)) * 10.0 ** rng.integers(-8, 8, (25, 7, 40))
    x[:, 0, 0] = -0.0
    x[3, 1, 2] = np.nan

    def f(x):
        return np.sum(np.sin(fn(x, axis=axis)) * np.arange(np.size(fn(x.real, axis=axis)))
                      .reshape(np.shape(fn(x.real, axis=axis))))
    with np.errstate(invalid="ignore"):
        want = fn(x, axis=axis)
        y = x * 1.5
        assert np.array_equal(jittape.record(lambda x: fn(x, axis=axis), x).value(y),
                              fn(y, axis=axis), equal_nan=True)
        assert np.array_equal(jittape.record(lambda x: fn(x, axis=axis), x).value(x), want,
                              equal_nan=True)
        for compiled in (False, True) if axis == 0 else (False,):  # (one rule: 3 compiles)
            tape = jittape.record(f, x)
            if compiled:
                tape.compile()
            assert np.array_equal(tape.value(y), f(y), equal_nan=True)

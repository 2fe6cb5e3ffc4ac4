"""Linear algebra on stacks of matrices (issue 10): NumPy's values, shapes and dtypes for 0, 1
and 2 leading (batch) dimensions, derivatives against central differences and closed forms.

The op-by-op checker (tests/test_ops.py) covers every mode (reverse, tangent, replay) from
the table entries' specs; here each NumPy function is compared with NumPy itself.
"""

import numpy as np
import pytest

import jittape
from jittape.numpy.active import Active
from jittape.testing import check_grads

RNG = np.random.default_rng(11)
BATCHES = [(), (2,), (2, 3)]


def _weights(shape):
    return np.cos(np.arange(1.0, 1.0 + np.prod(shape, dtype=int)).reshape(shape))


def _pieces(r):
    return list(r) if isinstance(r, tuple) else [r]


def recorded(fn, *args):
    """The primals jittape records for ``fn(*args)`` (all arguments active), as a list."""
    out = []

    def f(*xs):
        rs = _pieces(fn(*xs))
        out.append([np.asarray(r._v if isinstance(r, Active) else r) for r in rs])
        return sum(np.sum(r * _weights(np.shape(v))) for r, v in zip(rs, out[-1]))
    jittape.record(f, *args, argnums=tuple(range(len(args))))
    return out[-1]


def assert_like_numpy(fn, *args, grad=True):
    """Values, shapes and dtypes of fn equal NumPy's; the gradient of a weighted sum of every
    output matches central differences."""
    refs = _pieces(fn(*args))
    gots = recorded(fn, *args)
    assert len(gots) == len(refs)
    for got, ref in zip(gots, refs):
        ref = np.asarray(ref)
        assert got.shape == ref.shape and got.dtype == ref.dtype
        np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)
    if grad:
        ws = [_weights(np.shape(r)) for r in refs]
        check_grads(lambda *xs: sum(np.sum(r * w) for r, w in
                                    zip(_pieces(fn(*xs)), ws)), args,
                    argnums=tuple(range(len(args))))


def well_conditioned(*shape):
    return RNG.standard_normal(shape) + 3 * np.eye(shape[-1])


def spd(*shape):
    b = RNG.standard_normal(shape)
    return b @ np.swapaxes(b, -1, -2) + shape[-1] * np.eye(shape[-1])


def nonsymmetric_spd(*shape):
    """Both triangles give positive definite matrices, different ones."""
    m = spd(*shape)
    return m + np.tril(RNG.uniform(-0.5, 0.5, shape), -1)


# --- inv, solve, det, slogdet, cholesky, eigh on stacks ---------------------------------
@pytest.mark.parametrize("batch", BATCHES, ids=str)
@pytest.mark.parametrize("name,fn,make", [
    ("inv", np.linalg.inv, well_conditioned),
    ("det", np.linalg.det, well_conditioned),
    ("slogdet", np.linalg.slogdet, well_conditioned),
    ("cholesky", np.linalg.cholesky, nonsymmetric_spd),
    ("cholesky-upper", lambda x: np.linalg.cholesky(x, upper=True), nonsymmetric_spd),
    ("eigvalsh", np.linalg.eigvalsh, nonsymmetric_spd),
    ("eigvalsh-U", lambda x: np.linalg.eigvalsh(x, "U"), nonsymmetric_spd),
    # eigenvectors up to sign: their squares
    ("eigh", lambda x: (np.linalg.eigh(x)[0], np.linalg.eigh(x)[1] ** 2), nonsymmetric_spd),
    ("eigh-U", lambda x: np.linalg.eigh(x, UPLO="U")[1] ** 2, nonsymmetric_spd),
])
def test_square_routines_on_stacks(name, fn, make, batch):
    assert_like_numpy(fn, make(*batch, 3, 3))


def test_stack_results_are_numpys_types():
    a = well_conditioned(2, 3, 3)
    seen = {}

    def f(x):
        seen["slogdet"] = np.linalg.slogdet(x)
        seen["eigh"] = np.linalg.eigh(x @ np.swapaxes(x, -1, -2))
        return np.sum(seen["slogdet"].logabsdet)
    jittape.grad(f)(a)
    assert type(seen["slogdet"]).__name__ == "SlogdetResult"
    assert type(seen["eigh"]).__name__ == "EighResult"
    assert seen["eigh"].eigenvectors.shape == (2, 3, 3)


@pytest.mark.parametrize("sa,sb", [
    ((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (3,)), ((2, 3, 3), (2, 3, 2)),
    ((2, 3, 3), (3, 4)), ((2, 1, 3, 3), (3, 3, 1)), ((3, 3), (2, 4, 3, 1)),
    ((4, 2, 3, 3), (2, 3, 2))], ids=str)
def test_solve_broadcasts_like_numpy(sa, sb):
    assert_like_numpy(np.linalg.solve, well_conditioned(*sa), RNG.standard_normal(sb))


def test_solve_shape_errors_are_numpys():
    with pytest.raises(ValueError):
        jittape.grad(lambda a: np.sum(np.linalg.solve(a, np.ones((2, 3, 2)))))(
            well_conditioned(4, 3, 3))
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        jittape.grad(lambda a: np.sum(np.linalg.inv(a)))(np.ones((2, 2, 3)))
    with pytest.raises(np.linalg.LinAlgError, match="two-dimensional"):
        jittape.grad(lambda a: np.sum(np.linalg.inv(a)))(np.ones(3))


@pytest.mark.parametrize("batch", BATCHES, ids=str)
def test_det_gradient_is_det_times_inverse_transpose(batch):
    a = well_conditioned(*batch, 4, 4)
    g = jittape.grad(lambda x: np.sum(np.linalg.det(x)))(a)
    want = np.linalg.det(a)[..., None, None] * np.swapaxes(np.linalg.inv(a), -1, -2)
    np.testing.assert_allclose(g, want, rtol=1e-10)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_stacked_triangle_read_and_replay(uplo):
    a = nonsymmetric_spd(2, 3, 4, 4)
    w = _weights(a.shape)
    f = lambda x: np.sum(np.linalg.eigh(x, uplo)[1] ** 2 * w) + np.sum(  # noqa: E731
        np.linalg.cholesky(x, upper=uplo == "U") * w)
    g = jittape.grad(f)(a)
    unread = np.triu(g, 1) if uplo == "L" else np.tril(g, -1)
    assert np.all(unread == 0.0)
    tape = jittape.record(f, a)
    b = nonsymmetric_spd(2, 3, 4, 4)
    v, g2 = tape.value_and_gradient(b)
    assert v == pytest.approx(f(b), rel=1e-12)
    np.testing.assert_allclose(g2, jittape.grad(f)(b), rtol=1e-10, atol=1e-12)


# --- svd and matrix norms -------------------------------------------------------------------
SVD_SHAPES = [(3, 3), (4, 3), (3, 4), (2, 4, 3), (2, 3, 2, 4)]


def _svd_fixed_sign(full):
    """U, s, Vh with U scaled by the sign of its first row: NumPy's signs, but
    comparable (the checker's weights see every element)."""
    def f(x):
        u, s, vh = np.linalg.svd(x, full_matrices=full)
        k = s.shape[-1]
        return u[..., :k] ** 2, s, vh[..., :k, :] * vh[..., :k, :]
    return f


@pytest.mark.parametrize("shape", SVD_SHAPES, ids=str)
def test_svd_like_numpy(shape):
    a = RNG.standard_normal(shape)
    assert_like_numpy(lambda x: tuple(np.linalg.svd(x, full_matrices=False)), a)
    assert_like_numpy(_svd_fixed_sign(True), a)
    assert_like_numpy(lambda x: np.linalg.svd(x, compute_uv=False), a)
    assert_like_numpy(np.linalg.svdvals, a)
    # full_matrices=True values and shapes, completion columns included (no derivative)
    assert_like_numpy(lambda x: tuple(np.linalg.svd(x)), a, grad=False)


def test_svd_result_type():
    seen = []
    jittape.grad(lambda x: seen.append(np.linalg.svd(x)) or np.sum(seen[0].S))(
        RNG.standard_normal((3, 2)))
    assert type(seen[0]).__name__ == "SVDResult" and seen[0].U.shape == (3, 3)


@pytest.mark.parametrize("batch", BATCHES, ids=str)
@pytest.mark.parametrize("ord", [2, -2, "nuc"])
def test_matrix_norms_from_singular_values(batch, ord):
    a = RNG.standard_normal(batch + (4, 3))
    assert_like_numpy(lambda x: np.linalg.norm(x, ord, axis=(-2, -1)), a)
    assert_like_numpy(lambda x: np.linalg.norm(x, ord, axis=(-1, -2), keepdims=True), a)


def test_nuclear_norm_gradient_is_u_vt():
    a = RNG.standard_normal((2, 5, 3))
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    g = jittape.grad(lambda x: np.sum(np.linalg.norm(x, "nuc", axis=(1, 2))))(a)
    np.testing.assert_allclose(g, u @ vh, rtol=1e-12, atol=1e-14)
    g2 = jittape.grad(lambda x: np.linalg.norm(x, 2))(a[0])  # u_1 v_1^T
    np.testing.assert_allclose(g2, np.outer(u[0, :, 0], vh[0, 0]), rtol=1e-12, atol=1e-14)


SVD_UNDEFINED = [
    # repeated singular values (identity), vectors used
    ("repeated", lambda x: np.sum(np.linalg.svd(x)[0] * np.arange(3.0)), np.eye(3)),
    # the completion columns of U of a tall matrix
    ("completion", lambda x: np.sum(np.linalg.svd(x)[0][:, 3:]), np.arange(12.0).reshape(4, 3)
     ** 1.5),
    # a zero singular value of a non-square matrix
    ("zero", lambda x: np.sum(np.linalg.svd(x, full_matrices=False)[2] * np.arange(6.0)
                              .reshape(2, 3)), np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]])),
]


@pytest.mark.parametrize("name,f,x", SVD_UNDEFINED, ids=[c[0] for c in SVD_UNDEFINED])
def test_svd_undefined_vector_derivatives_raise_in_every_mode(name, f, x):
    with pytest.raises(jittape.NotDifferentiableError, match=r"np\.linalg\.svd"):
        jittape.grad(f)(x)
    with pytest.raises(jittape.NotDifferentiableError, match=r"np\.linalg\.svd"):
        jittape.record(f, x).gradient(x + 0.0)
    with pytest.raises(jittape.NotDifferentiableError, match=r"np\.linalg\.svd.*undefined"):
        jittape.jvp(f, (x,), (np.ones_like(x),))
    with pytest.raises(jittape.NotDifferentiableError, match=r"np\.linalg\.svd.*undefined"):
        jittape.jacobian(f, mode="forward")(x)


def test_svd_values_at_repeated_singular_values_are_differentiated():
    """Only the vectors lack a derivative: functions of the values (here the sum, the
    nuclear norm, whose gradient at the identity is U V^T = I) work in every mode, and so
    do the vectors of distinct singular values next to a zero one of a square matrix."""
    f = lambda x: np.sum(np.linalg.svd(x)[1])  # noqa: E731
    np.testing.assert_allclose(jittape.grad(f)(np.eye(3)), np.eye(3), atol=1e-15)
    assert jittape.jvp(f, (np.eye(3),), (np.ones((3, 3)),))[1] == pytest.approx(3.0)
    sq = np.diag([3.0, 1.0, 0.0])
    g = lambda x: np.sum(np.linalg.svd(x)[0] * np.arange(9.0).reshape(3, 3))  # noqa: E731
    check_grads(g, (sq + 0.01 * RNG.standard_normal((3, 3)),))


# --- qr -------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SVD_SHAPES + [(2, 3, 5)], ids=str)
def test_qr_like_numpy(shape):
    a = RNG.standard_normal(shape)
    assert_like_numpy(lambda x: tuple(np.linalg.qr(x)), a)
    assert_like_numpy(lambda x: np.linalg.qr(x, mode="r"), a)
    m, n = shape[-2:]
    assert_like_numpy(lambda x: tuple(np.linalg.qr(x, mode="complete")), a, grad=m <= n)
    k = min(m, n)
    assert_like_numpy(lambda x: np.linalg.qr(x, mode="complete")[0][..., :k], a)


def test_qr_result_and_errors():
    seen = []
    jittape.grad(lambda x: seen.append(np.linalg.qr(x)) or np.sum(seen[0].R))(np.eye(3) + 1)
    assert type(seen[0]).__name__ == "QRResult"
    with pytest.raises(jittape.NotDifferentiableError, match="mode='raw'"):
        jittape.grad(lambda x: np.sum(np.linalg.qr(x, mode="raw")[0]))(np.eye(3))
    with pytest.raises(ValueError, match="Unrecognized mode"):
        jittape.grad(lambda x: np.sum(np.linalg.qr(x, mode="x")[0]))(np.eye(3))
    tall = RNG.standard_normal((4, 2))
    f = lambda x: np.sum(np.linalg.qr(x, mode="complete")[0])  # noqa: E731
    with pytest.raises(jittape.NotDifferentiableError, match="completion"):
        jittape.grad(f)(tall)
    with pytest.raises(jittape.NotDifferentiableError, match=r"np\.linalg\.qr.*undefined"):
        jittape.jvp(f, (tall,), (np.ones_like(tall),))


def test_qr_closed_form_for_r_diagonal():
    """d log|R_ii| summed is d log|det A| for a square A: the gradient is A^-T."""
    a = well_conditioned(2, 4, 4)
    g = jittape.grad(lambda x: np.sum(np.log(np.abs(np.diagonal(np.linalg.qr(x, "r"), 0, -2,
                                                                     -1)))))(a)
    np.testing.assert_allclose(g, np.swapaxes(np.linalg.inv(a), -1, -2), rtol=1e-10)


# --- pinv, lstsq, matrix_power ----------------------------------------------------------------
@pytest.mark.parametrize("shape", SVD_SHAPES, ids=str)
def test_pinv_like_numpy(shape):
    a = RNG.standard_normal(shape)
    assert_like_numpy(np.linalg.pinv, a)
    assert_like_numpy(lambda x: np.linalg.pinv(x, rtol=None), a)
    assert_like_numpy(lambda x: np.linalg.pinv(x, 1e-3), a)


def test_pinv_of_repeated_singular_values_and_low_rank():
    """pinv's rule needs no distinct singular values (the identity), and a rank-deficient
    matrix gets the derivative of the constant-rank pseudo-inverse (A^+ A A^+ = A^+ kept)."""
    assert_like_numpy(np.linalg.pinv, np.eye(3) * 2.0)
    low = RNG.standard_normal((4, 2)) @ RNG.standard_normal((2, 3))
    d = RNG.standard_normal(low.shape)
    d = d - (np.eye(4) - low @ np.linalg.pinv(low)) @ d @ (np.eye(3) - np.linalg.pinv(low) @ low)
    # along the rank-2 manifold; it curves, so NumPy's cut-off must drop the O(h^2) values
    pinv = lambda x: np.linalg.pinv(x, 1e-8)  # noqa: E731
    _, t = jittape.jvp(pinv, (low,), (d,))
    h = 1e-6
    fd = (pinv(low + h * d) - pinv(low - h * d)) / (2 * h)
    np.testing.assert_allclose(t, fd, rtol=1e-5, atol=1e-6)


def test_pinv_refusals():
    with pytest.raises(jittape.NotDifferentiableError, match="hermitian"):
        jittape.grad(lambda x: np.sum(np.linalg.pinv(x, hermitian=True)))(np.eye(2))
    with pytest.raises(jittape.NotDifferentiableError, match="array rcond"):
        jittape.grad(lambda x: np.sum(np.linalg.pinv(x, rcond=np.array([1e-3, 1e-4]))))(
            RNG.standard_normal((2, 3, 3)))


@pytest.mark.parametrize("sa,sb", [((5, 3), (5,)), ((5, 3), (5, 2)), ((3, 5), (3,)),
                                   ((3, 3), (3, 2))], ids=str)
def test_lstsq_returns_numpys_tuple(sa, sb):
    a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
    ref = np.linalg.lstsq(a, b)
    got = []
    jittape.grad(lambda x, y: got.append(np.linalg.lstsq(x, y)) or np.sum(got[0][0]),
                 (0, 1))(a, b)
    assert len(got[0]) == 4 and type(got[0][2]) is type(ref[2]) and got[0][2] == ref[2]
    for x, y in zip(got[0][:2] + got[0][3:], ref[:2] + ref[3:]):
        xv = x._v if isinstance(x, Active) else x
        assert np.shape(xv) == y.shape
        np.testing.assert_allclose(xv, y, rtol=1e-10, atol=1e-12)
    assert_like_numpy(lambda x, y: np.linalg.lstsq(x, y)[0], a, b)
    assert_like_numpy(lambda x, y: np.linalg.lstsq(x, y, rcond=1e-3)[3], a, b)
    if sa[0] > sa[1]:
        assert_like_numpy(lambda x, y: np.linalg.lstsq(x, y)[1], a, b)


@pytest.mark.parametrize("batch", BATCHES, ids=str)
@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 3, 6, 13])
def test_matrix_power_like_numpy(n, batch):
    a = RNG.standard_normal(batch + (3, 3)) * 0.4 + np.eye(3)
    assert_like_numpy(lambda x: np.linalg.matrix_power(x, n), a, grad=n != 0)
    with pytest.raises(TypeError, match="integer"):
        jittape.grad(lambda x: np.sum(np.linalg.matrix_power(x, 1.5)))(a)


# --- scipy.linalg.expm ------------------------------------------------------------------------
@pytest.mark.parametrize("batch", BATCHES, ids=str)
@pytest.mark.parametrize("scale", [0.01, 0.5, 4.0])
def test_expm_like_scipy(batch, scale):
    import scipy.linalg
    a = RNG.standard_normal(batch + (3, 3)) * scale
    assert_like_numpy(lambda x: scipy.linalg.expm(x), a)  # looked up once recording
    f = lambda x: np.sum(scipy.linalg.expm(x) * _weights(a.shape))  # noqa: E731
    v, g = jittape.record(f, a).value_and_gradient(a + 0.01)  # the replay: Pade in Numba
    # equal to SciPy's to rounding, relative to the size of exp(a)'s entries
    assert abs(v - f(a + 0.01)) <= 1e-13 * np.sum(np.abs(scipy.linalg.expm(a + 0.01)))


def test_expm_gradient_of_trace_is_expm_transpose():
    import scipy.linalg
    a = RNG.standard_normal((2, 4, 4))
    g = jittape.grad(lambda x: np.sum(np.trace(scipy.linalg.expm(x), axis1=-2, axis2=-1)))(a)
    np.testing.assert_allclose(g, np.swapaxes(scipy.linalg.expm(a), -1, -2), rtol=1e-12)
    assert jittape.grad(lambda x: scipy.linalg.expm(x)[0, 0])(np.array([0.7])) == \
        pytest.approx(np.exp(0.7))  # a size-1 input: [[exp(a)]], as SciPy
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        jittape.grad(lambda x: np.sum(scipy.linalg.expm(x)))(np.ones((2, 3)))

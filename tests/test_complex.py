"""Complex numbers (issue 27, item 6): active complex values as pairs of real parts.

Every complex operation is checked in every mode by the generic checker through a real
function of real inputs, ``x -> sum(a Re f(z) + b Im f(z))`` with ``z = x[:n] + i x[n:]``
(value against NumPy's, gradient against central differences, JVP, HVP, replay, a saved and
loaded tape), and with complex arguments in JAX's conventions (``grad = df/dx - i df/dy``,
``holomorphic=True`` gives ``f'(z)``) against closed forms. The FFTs are checked against
NumPy's for odd and even lengths, cropping, padding, axes and norms."""

import numpy as np
import pytest

import jittape
from jittape import ActiveConversionError, NotDifferentiableError
from jittape.numpy.complex_values import ComplexActive
from jittape.testing import check_grads
from modes import check_every_mode

Z = np.array([0.7 + 0.4j, -1.1 + 0.9j, 0.3 - 1.3j, 1.6 + 0.2j])
W = np.array([0.5 - 0.3j, 1.2 + 0.8j, -0.4 + 0.6j, 0.9 - 1.1j])
A, B = np.array([0.3, -1.2, 0.8, 0.5]), np.array([-0.7, 0.4, 1.1, -0.2])
N = Z.size


def _real_form(g):
    """``x -> sum(A Re g(z) + B Im g(z))``, ``z = x[:N] + i x[N:]``: a real function of a
    real vector through complex values."""
    def f(x):
        return _weighted(g(x[:N] + 1j * x[N:]))
    return f


def _weighted(w):
    """``sum(a Re w + b Im w)`` with fixed weights of ``w``'s size."""
    w = np.ravel(w)
    return np.sum(np.resize(A, np.size(w)) * np.real(w) + np.resize(B, np.size(w)) *
                  np.imag(w))


X = np.concatenate([Z.real, Z.imag])
V = np.linspace(-0.5, 0.6, 2 * N)

#: name -> (f, f') for holomorphic functions (f' None where f is not holomorphic)
ELEMENTWISE = {
    "add constant": (lambda z: z + (2 - 1j), lambda z: np.ones_like(z)),
    "sub": (lambda z: (1 + 3j) - z, lambda z: -np.ones_like(z)),
    "mul": (lambda z: z * (1.2 + 0.8j), lambda z: np.full_like(z, 1.2 + 0.8j)),
    "mul array": (lambda z: z * W, None),
    "div": (lambda z: (0.5 - 0.3j) / z, lambda z: -(0.5 - 0.3j) / z ** 2),
    "div array": (lambda z: z / W, None),
    "square": (np.square, lambda z: 2 * z),
    "cube": (lambda z: z ** 3, lambda z: 3 * z ** 2),
    "inverse power": (lambda z: z ** -2, lambda z: -2 * z ** -3),
    "real power": (lambda z: z ** 1.5, lambda z: 1.5 * z ** 0.5),
    "complex power": (lambda z: z ** (0.5 + 0.5j), lambda z: (0.5 + 0.5j) * z ** (-0.5 + 0.5j)),
    "reciprocal": (np.reciprocal, lambda z: -1 / z ** 2),
    "exp": (np.exp, np.exp),
    "log": (np.log, lambda z: 1 / z),
    "log2": (np.log2, lambda z: 1 / (z * np.log(2))),
    "log10": (np.log10, lambda z: 1 / (z * np.log(10))),
    "sqrt": (np.sqrt, lambda z: 0.5 / np.sqrt(z)),
    "sin": (np.sin, np.cos),
    "cos": (np.cos, lambda z: -np.sin(z)),
    "tan": (np.tan, lambda z: 1 / np.cos(z) ** 2),
    "sinh": (np.sinh, np.cosh),
    "cosh": (np.cosh, np.sinh),
    "tanh": (np.tanh, lambda z: 1 / np.cosh(z) ** 2),
    "negative": (np.negative, lambda z: -np.ones_like(z)),
    "conjugate": (np.conjugate, None),
    "abs": (np.abs, None),
    "angle": (np.angle, None),
    "real and imag": (lambda z: np.real(z) * np.imag(z), None),
}

FUNCTIONS = {
    "sum and mean": lambda z: np.sum(z * z) + np.mean(z, keepdims=True),
    "cumsum": lambda z: np.cumsum(z[::-1]),
    "reshape transpose": lambda z: np.reshape(z, (2, 2)).T @ np.reshape(W, (2, 2)),
    "matmul with complex constant": lambda z: np.reshape(z, (2, 2)) @ (np.eye(2) * 1j + 1),
    "dot": lambda z: np.dot(z, W) * z,
    "vdot": lambda z: np.vdot(z, W * z),
    "einsum": lambda z: np.einsum("i,i->", z, z),
    "concatenate": lambda z: np.concatenate([z[:2], np.real(z[2:]), z[::-1]]),
    "stack and where": lambda z: np.where([True, False, True, False],
                                           np.stack([z, 2 * z])[1], np.conj(z)),
    "getitem and setitem": lambda z: _setitem(z),
    "astype": lambda z: np.real(z).astype(complex) * (1 - 2j),
    "norm": lambda z: np.linalg.norm(z) * z,
    "fft": lambda z: np.fft.fft(z),
    "ifft ortho": lambda z: np.fft.ifft(z, norm="ortho"),
    "fft padded": lambda z: np.fft.fft(z, n=7),
    "rfft": lambda z: np.fft.rfft(np.real(z) * np.imag(z), n=5),
    "irfft": lambda z: np.fft.irfft(z, n=6),
    "irfft odd": lambda z: np.fft.irfft(z, n=5, norm="forward"),
    "fft of a matrix along axis 0": lambda z: np.fft.fft(np.reshape(z, (2, 2)), axis=0),
    "fft2 and ifftn": lambda z: np.fft.fft2(np.reshape(z, (2, 2))) +
    np.fft.ifftn(np.reshape(z * W, (2, 2)), axes=(0,)),
    "rfft2 and irfft2": lambda z: np.ravel(np.fft.irfft2(np.fft.rfft2(
        np.reshape(np.real(z) * np.imag(z), (2, 2))) * (1 + 1j), s=(2, 2))),
    "hfft and ihfft": lambda z: np.concatenate([np.fft.hfft(z, n=5),
                                                np.fft.ihfft(np.real(z), norm="ortho")]),
}


def _setitem(z):
    w = z * (1 + 1j)
    w[0] = z[1] * 3j
    tail = w[2:]  # a view: writes reach w as in NumPy
    tail[0] = 5.0
    return w


@pytest.mark.parametrize("name", list(ELEMENTWISE) + list(FUNCTIONS))
def test_complex_operations_in_every_mode(name, tmp_path):
    g = ELEMENTWISE[name][0] if name in ELEMENTWISE else FUNCTIONS[name]
    check_every_mode(_real_form(g), X, V, X * 1.01, tmp_path)


@pytest.mark.parametrize("name", list(ELEMENTWISE) + list(FUNCTIONS))
def test_complex_arguments_against_central_differences(name):
    g = ELEMENTWISE[name][0] if name in ELEMENTWISE else FUNCTIONS[name]

    def f(z):
        return _weighted(g(z))
    check_grads(f, (Z,))
    value = jittape.value_and_grad(f)(Z)[0]
    assert value == pytest.approx(f(Z), rel=1e-12)


@pytest.mark.parametrize("name", [k for k, v in ELEMENTWISE.items() if v[1] is not None])
def test_holomorphic_derivatives_are_the_closed_forms(name):
    f, df = ELEMENTWISE[name]
    for z in Z:
        d = jittape.grad(lambda z: f(z), holomorphic=True)(z)
        np.testing.assert_allclose(d, df(z), rtol=1e-12)
        out, tangent = jittape.jvp(f, (z,), (0.3 - 0.2j,))
        np.testing.assert_allclose(out, f(z), rtol=1e-13)
        np.testing.assert_allclose(tangent, df(z) * (0.3 - 0.2j), rtol=1e-12)
        out, pullback = jittape.vjp(f, z)
        np.testing.assert_allclose(pullback(1.5 + 0.5j)[0], (1.5 + 0.5j) * df(z), rtol=1e-12)


def test_jax_conventions_closed_forms():
    # |z|^2 = x^2 + y^2: df/dx - i df/dy = 2 conj(z)
    np.testing.assert_allclose(jittape.grad(lambda z: np.sum(np.abs(z) ** 2))(Z), 2 * np.conj(Z))
    assert jittape.grad(lambda z: np.abs(z) ** 2)(3 + 4j) == pytest.approx(6 - 8j)
    g = jittape.grad(lambda z, w: np.abs(z * w) ** 2, argnums=(0, 1))(1 + 1j, 2.0)
    assert g[0] == pytest.approx(8 - 8j) and g[1] == pytest.approx(8.0)
    value, d = jittape.value_and_grad(np.exp, holomorphic=True)(0.5 + 0.3j)
    assert value == pytest.approx(np.exp(0.5 + 0.3j)) and d == pytest.approx(value)
    # a real input with a complex output: the pullback of c is Re(c J)
    x = np.array([1.0, 2.0, 0.5])
    out, pullback = jittape.vjp(np.fft.fft, x)
    np.testing.assert_allclose(out, np.fft.fft(x), rtol=1e-13)
    c = np.array([1 + 1j, 0.5j, 2.0])
    np.testing.assert_allclose(pullback(c)[0], np.real(c @ np.fft.fft(np.eye(3))), atol=1e-14)
    out, tangent = jittape.jvp(np.fft.fft, (x,), (np.ones(3),))
    np.testing.assert_allclose(tangent, np.fft.fft(np.ones(3)), atol=1e-14)


def test_complex_step_derivatives_differentiate_again():
    """The complex-step derivative Im f(x + ih) / h (Squire & Trapp 1998) inside a recorded
    function: its gradient is f''(x)."""
    def f(x):
        return np.exp(x) * np.sin(x) / (1 + x * x)

    def complex_step(x, h=1e-20):
        return np.imag(f(x + 1j * h)) / h

    x0 = 0.7
    assert complex_step(x0) == pytest.approx(jittape.grad(f)(x0), rel=1e-14)
    np.testing.assert_allclose(jittape.grad(complex_step)(x0), jittape.hessian(f)(x0),
                               rtol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_fft_values_are_numpys(n, norm):
    rng = np.random.default_rng(n)
    x = rng.normal(size=(3, 6))
    z = x + 1j * rng.normal(size=(3, 6))
    cases = [(np.fft.fft, z), (np.fft.ifft, z), (np.fft.rfft, x), (np.fft.irfft, z)]
    for fn, data in cases:
        for axis in (-1, 0):
            want = fn(data, n=n, axis=axis, norm=norm)
            outs = {}

            def f(x):
                outs["v"] = fn(x[0] + 1j * x[1] if np.iscomplexobj(data) else x[0], n=n,
                               axis=axis, norm=norm)
                return np.sum(np.abs(outs["v"]))
            jittape.grad(f)(np.stack([data.real, data.imag]))
            got = jittape.primal(np.real(outs["v"])) + 1j * jittape.primal(np.imag(outs["v"]))
            np.testing.assert_allclose(got, want, atol=1e-12 * max(1.0, np.abs(want).max()))


def test_sparsity_of_an_elementwise_complex_map():
    def residual(x):
        z = np.exp(x[:N] + 1j * x[N:]) * (1 + 2j)
        return np.concatenate([np.real(z), np.imag(z)])
    jac = jittape.sparse_jacobian(residual)(X)
    dense = jittape.jacobian(residual)(X)
    assert jac.nnz == 4 * N  # each output depends on its own x[k] and x[N + k]
    np.testing.assert_allclose(jac.toarray(), dense, rtol=1e-14)


def test_errors_name_the_fix():
    with pytest.raises(TypeError, match="holomorphic=True"):
        jittape.grad(lambda z: z * z)(1 + 1j)
    with pytest.raises(TypeError, match="requires complex inputs"):
        jittape.grad(lambda x: x * x, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match="requires a complex output"):
        jittape.grad(lambda z: np.abs(z), holomorphic=True)(1 + 1j)
    with pytest.raises(ActiveConversionError, match="z.real"):
        jittape.grad(lambda x: float(x * 1j))(1.0)
    with pytest.raises(NotDifferentiableError, match="arcsinh"):
        jittape.grad(lambda x: np.abs(np.arcsinh(x + 1j)))(1.0)
    with pytest.raises(NotDifferentiableError, match="real parts"):
        jittape.grad(lambda x: np.abs(np.prod(x + 1j)))(np.ones(2))
    with pytest.raises(TypeError, match="complex cotangent"):
        jittape.vjp(lambda x: x * 2.0, 1.0)[1](1j)
    with pytest.raises(TypeError, match="primal is real"):
        jittape.jvp(lambda x: x, (1.0,), (1j,))
    with pytest.raises(NotDifferentiableError, match="real parts"):
        jittape.grad(lambda x: float(x < 1j) * x)(1.0)
    with pytest.raises(TypeError, match="real-valued output"):  # a real argument
        jittape.grad(lambda x: x * 1j)(1.0)


def test_complex_constant_arguments_are_not_differentiated():
    # a complex argument that argnums leaves out reaches f unchanged (it recursed before)
    assert jittape.grad(lambda x, c: np.abs(x * c) ** 2)(1.5, 1 + 1j) == pytest.approx(6.0)
    g = jittape.grad(lambda z, c: np.abs(z * c) ** 2)(1 + 1j, 2 + 0j)
    assert g == pytest.approx(2 * np.conj(1 + 1j) * 4)
    np.testing.assert_allclose(jittape.jacobian(lambda x, c: np.abs(x * c))(
        np.array([1.5, 2.0]), 1 + 1j), np.sqrt(2.0) * np.eye(2), rtol=1e-14)
    check_grads(lambda x, c: np.sum(np.real(np.exp(x * c))), (X, 0.3 - 0.2j))


def test_jacobian_and_hessian_in_jaxs_conventions():
    # holomorphic: the complex derivative matrices, against the closed forms
    np.testing.assert_allclose(jittape.jacobian(lambda z: z ** 3, holomorphic=True)(Z),
                               np.diag(3 * Z ** 2), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(jittape.jacobian(lambda z: np.sum(np.sin(z)),
                                                holomorphic=True)(Z), np.cos(Z), rtol=1e-13)
    np.testing.assert_allclose(jittape.hessian(lambda z: np.sum(z ** 3 * W),
                                               holomorphic=True)(Z), np.diag(6 * Z * W),
                               rtol=1e-12, atol=1e-14)
    assert jittape.hessian(lambda z: np.exp(2 * z), holomorphic=True)(0.5 + 0.2j) == \
        pytest.approx(4 * np.exp(1.0 + 0.4j), rel=1e-12)
    # a real argument with a complex output: d Re f/dx + i d Im f/dx, in both modes
    x = np.array([1.0, 2.0, -0.5])
    for mode in ("forward", "reverse"):
        np.testing.assert_allclose(jittape.jacobian(lambda x: np.exp(1j * x) * x[0],
                                                    mode=mode)(x),
                                   np.diag(1j * np.exp(1j * x) * x[0]) +
                                   np.outer(np.exp(1j * x), [1, 0, 0]), rtol=1e-13)
    with pytest.raises(TypeError, match="holomorphic=True"):
        jittape.jacobian(lambda z: z * z)(Z)
    with pytest.raises(TypeError, match="complex output"):
        jittape.jacobian(lambda z: np.abs(z), holomorphic=True)(Z)
    with pytest.raises(TypeError, match="complex argument"):
        jittape.hessian(lambda x: np.sum(x ** 3), holomorphic=True)(x)


def _eig_loss(x):
    w, v = np.linalg.eig(np.reshape(x, (3, 3)))
    return np.sum(np.abs(v) ** 2 * np.arange(9.0).reshape(3, 3)) + np.sum(
        np.real(w) * np.arange(3.0)) + np.sum(np.imag(w) ** 3) + np.sum(
        np.abs(np.linalg.eigvals(np.reshape(x, (3, 3)) * 2.0)))


EIG_POINTS = {  # a complex pair and a real eigenvalue; three real eigenvalues
    "complex": np.array([[0.3, 3.0, 0.2], [-3.0, 2.5, 0.4], [0.1, -0.2, 6.0]]).ravel(),
    "real": np.array([[1.0, 0.5, 0.2], [0.3, 3.0, 0.4], [0.1, -0.2, 6.0]]).ravel(),
}


@pytest.mark.parametrize("kind", list(EIG_POINTS))
def test_eig_in_every_first_order_mode(kind, tmp_path):
    x = EIG_POINTS[kind]
    w, v = np.linalg.eig(x.reshape(3, 3))
    seen = {}

    def probe(x):
        seen["eig"] = np.linalg.eig(np.reshape(x, (3, 3)))
        return _eig_loss(x)
    value, _ = jittape.value_and_grad(probe)(x)
    assert value == pytest.approx(_eig_loss(x), rel=1e-13)
    got_w, got_v = seen["eig"]
    assert isinstance(got_w, ComplexActive) == np.iscomplexobj(w)  # NumPy's dtype
    np.testing.assert_array_equal(jittape.primal(np.real(got_w)), w.real)
    np.testing.assert_array_equal(jittape.primal(np.imag(got_v)), v.imag)
    check_grads(_eig_loss, (x,), n_directions=5)
    h, d = 1e-6, np.linspace(-1.0, 1.0, 9)
    tangent = jittape.jvp(_eig_loss, (x,), (d,))[1]
    assert tangent == pytest.approx((_eig_loss(x + h * d) - _eig_loss(x - h * d)) / (2 * h),
                                    rel=1e-6)
    tape = jittape.record(_eig_loss, x)
    tape.save(tmp_path / "eig.npz")
    for t in (tape, jittape.load(tmp_path / "eig.npz")):
        v2, g2 = t.value_and_gradient(x * 1.01)
        assert v2 == pytest.approx(_eig_loss(x * 1.01), rel=1e-12)
        np.testing.assert_allclose(g2, jittape.grad(_eig_loss)(x * 1.01), rtol=1e-10)
    with pytest.raises(NotDifferentiableError, match="second-order"):
        jittape.hvp(_eig_loss)(x, d)


def test_eig_closed_forms_and_guard():
    # [[a, -b], [b, a]] has eigenvalues a +- ib: d Re w / da = 1, d Im w_0 / db = 1
    def first(p, part):
        w = np.linalg.eigvals(np.array([[p[0], -p[1]], [p[1], p[0]]]) + 0.0 * p[0])
        return part(w[0])
    p = np.array([0.7, 1.3])
    np.testing.assert_allclose(jittape.grad(lambda p: first(p, np.real))(p), [1.0, 0.0],
                               atol=1e-14)
    np.testing.assert_allclose(jittape.grad(lambda p: first(p, np.imag))(p), [0.0, 1.0],
                               atol=1e-14)
    # a replay where real eigenvalues turn complex records again (NumPy's dtype changes)
    def g(x):
        return np.sum(np.abs(np.linalg.eigvals(np.array([[1.0, x[0]], [x[1], 2.0]]) +
                                               0.0 * x[0])))
    f = jittape.taped(g)
    for x in (np.array([1.0, 1.0]), np.array([1.0, -3.0]), np.array([2.0, 1.5])):
        np.testing.assert_allclose(f.grad(x), jittape.grad(g)(x), rtol=1e-12)
        w = np.linalg.eigvals(np.array([[1.0, x[0]], [x[1], 2.0]]))
        assert f(x) == pytest.approx(np.sum(np.abs(w)), rel=1e-13)
    assert f.stats.guard_failures >= 1


def test_sqrt_is_differentiable_on_the_real_axis():
    # the fuzzer's case: sqrt(v * 1j + 1.5) at v = 0 gave NaN (an infinite partial times 0)
    def f(p):
        s = np.sqrt(p[0] + 1j * p[1])
        return np.real(s) + 3.0 * np.imag(s)
    for x in (1.5, 0.25):
        np.testing.assert_allclose(jittape.grad(f)(np.array([x, 0.0])),
                                   [0.5 / np.sqrt(x), 1.5 / np.sqrt(x)], rtol=1e-14)
    np.testing.assert_allclose(jittape.grad(lambda z: np.sqrt(z), holomorphic=True)(2.0 + 0j),
                               0.5 / np.sqrt(2.0), rtol=1e-14)


@pytest.mark.parametrize("name, kw, real_input", [
    ("fftn", {}, False), ("ifftn", {"axes": (0, 2)}, False), ("rfftn", {}, True),
    ("irfftn", {"s": (4, 6), "axes": (1, 2)}, False), ("fft2", {"norm": "ortho"}, False),
    ("ifft2", {}, False), ("rfft2", {"s": (3, 6)}, True), ("irfft2", {}, False),
    ("hfft", {"n": 7}, False), ("ihfft", {"norm": "forward"}, True),
    ("fftn", {"s": (2, 3), "axes": (0, 1)}, False)])
def test_n_dimensional_fft_values_are_numpys(name, kw, real_input):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3, 4, 5))
    data = x if real_input else x + 1j * rng.normal(size=(3, 4, 5))
    fn = getattr(np.fft, name)
    want, outs = fn(data, **kw), {}

    def f(p):
        outs["v"] = fn(p[0] if real_input else p[0] + 1j * p[1], **kw)
        return np.sum(np.abs(outs["v"]))
    jittape.grad(f)(np.stack([data.real, data.imag]))
    got = jittape.primal(np.real(outs["v"])) + 1j * jittape.primal(np.imag(outs["v"]))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=1e-12 * np.abs(want).max())


@pytest.mark.parametrize("f, error, match", [
    (lambda x: np.sum(np.abs(np.einsum("i,i,i->", x * 1j, x, x))), NotDifferentiableError,
     "two operands"),
    (lambda x: np.linalg.norm(x * 1j, ord=1), NotDifferentiableError, "ord=1"),
    (lambda x: np.sum(np.abs(x * 1j + np.array([object()] * 4))), NotDifferentiableError,
     "object array"),
    (lambda x: np.sum((x * 1j).astype(np.float64)), NotDifferentiableError, "imaginary"),
    (lambda x: np.sum(np.abs((x * 1j)[x * 1j])), IndexError, "index"),
    (lambda x: float(bool(x * 1j)), ValueError, "ambiguous"),
    (lambda x: np.sum(np.abs(np.asarray(x * 1j))), ActiveConversionError, "np.asarray"),
    (lambda x: np.sum(np.abs(x % 1j)), NotDifferentiableError, "complex value"),
    (lambda x: np.sum(np.abs(np.fft.fft(x, norm="sideways"))), ValueError, "norm"),
    (lambda x: np.sum(np.abs(np.fft.fft(x, n=0))), ValueError, "FFT data points"),
    (lambda x: np.sum(np.abs(np.fft.irfft(x * 1j, n=0))), ValueError, "FFT data points"),
    (lambda x: np.sum(np.abs(np.fft.rfft(x * 1j))), TypeError, "complex input"),
    (lambda x: np.sum(np.abs(np.fft.fft(x, out=np.empty(4, complex)))), NotDifferentiableError,
     "out="),
    (lambda x: np.sum(np.abs(np.fft.fftn(np.reshape(x, (2, 2)), s=(2, 2), axes=(0,)))),
     ValueError, "different lengths"),
])
def test_complex_error_paths(f, error, match):
    with pytest.raises(error, match=match):
        jittape.grad(f)(Z.real.copy())


def test_real_and_imaginary_parts_are_strided_views_as_in_numpy():
    """Found by the fuzzer: NumPy's z.real is a strided view of z's buffer, so its ravel is
    a copy, and a write through that copy leaves z.real alone; jittape's real part was a
    contiguous root, whose ravel was a view. Writes into z.real itself reach z, as NumPy's."""
    def f(x):
        v1 = np.real(np.exp(x * (0.3 + 0.7j)))
        v2 = v1.ravel()
        v2[v2 > 0.25] += -1.25
        return np.sum(np.sin(v2)) + np.sum(v1 ** 2)

    def g(x):
        z = np.exp(x * (0.3 + 0.7j))
        r = z.real
        r[0, 0] = 5.0 * x[0, 1]
        return np.sum(np.abs(z) ** 2) + np.sum(z.imag.reshape(-1)[:3])
    def h(x):  # (fuzzer) a strided view of the real part, written in place: its positions
        z = np.exp(x * (0.3 + 0.7j))  # are every other float of z, not z's elements
        r = np.real(z)
        r[-1, -4:-1:2] += -1.25
        r[0, ::2] *= 2.0
        return np.sum(np.abs(z) ** 2) + np.sum(np.imag(z) * np.sin(r))
    x = np.array([[-0.94, -0.79, 1.38, 1.54], [-0.089, -1.43, -1.36, -1.86]])
    for fn in (f, g, h):
        value, grad = jittape.value_and_grad(fn)(x)
        assert value == pytest.approx(fn(x), rel=1e-13)
        check_grads(fn, (x,))

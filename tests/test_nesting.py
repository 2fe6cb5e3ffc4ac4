"""Nested differentiation (issue 27, item 5): grad, vjp, jvp, jacobian, hessian and hvp
called inside a recorded function. Each composition against the forward-over-reverse
hessian/hvp of the same function and against central differences; closures over outer
values (perturbation confusion), replay at new points with guards, saved tapes; third and
fourth derivatives (the recorded reverse sweep), and the clear error where an op has no
recorded rule."""

import numpy as np
import pytest

import jittape
from jittape.ops import codes as K
from jittape.testing import check_grads

X = np.array([0.3, -1.2, 2.0])
V = np.array([0.5, 0.1, -0.3])
H_STEP = 1e-5

FUNCTIONS = {
    "elementwise": lambda x: np.sum(np.sin(x) * x ** 2) + np.prod(np.exp(0.3 * x)),
    "matrix": lambda x: x @ (np.outer(x, x) + np.eye(3)) @ np.tanh(x),
    "linalg": lambda x: np.linalg.slogdet(np.outer(x, x) + 4 * np.eye(3))[1] + np.sum(
        np.linalg.solve(np.diag(x ** 2 + 1.0) + 0.5, x)),
    "reductions and guards": lambda x: (np.max(x) ** 2 + np.logaddexp(x[0], x[0]) +
                                        (np.sum(np.cumsum(x) ** 3) if x[2] > 0 else 0.0)),
    "indexing": lambda x: np.sum(np.concatenate([x[::-1], x[1:] * x[:-1]]) ** 3),
}


def _fd_jacobian(g, x):
    return np.stack([(np.asarray(g(x + H_STEP * e)) - np.asarray(g(x - H_STEP * e))) /
                     (2 * H_STEP) for e in np.eye(x.size)], axis=-1)


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_compositions_agree_with_the_hessian(name):
    f = FUNCTIONS[name]
    H = jittape.hessian(f)(X)
    np.testing.assert_allclose(H, _fd_jacobian(jittape.grad(f), X), rtol=1e-5, atol=1e-6)
    hv = H @ V
    np.testing.assert_allclose(jittape.jacobian(jittape.grad(f))(X), H, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jittape.jacobian(jittape.grad(f), mode="forward")(X), H,
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jittape.grad(lambda z: jittape.jvp(f, (z,), (V,))[1])(X), hv,
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jittape.jvp(jittape.grad(f), (X,), (V,))[1], hv, rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(jittape.grad(lambda z: np.vdot(jittape.grad(f)(z), V))(X), hv,
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jittape.hvp(f)(X, V), hv, rtol=1e-12, atol=1e-12)


def test_grad_of_grad_of_a_scalar_function_is_its_second_derivative():
    d2 = jittape.grad(jittape.grad(lambda s: s ** 3 * np.sin(s)))(0.7)
    assert d2 == pytest.approx(6 * 0.7 * np.sin(0.7) + 6 * 0.49 * np.cos(0.7) -
                               0.343 * np.sin(0.7), rel=1e-13)


def test_size_one_outputs_are_scalars_at_every_level():
    """grad takes a (1, 1) output as a scalar (autograd's convention), nested too (found
    by autograd's test_logsumexp6: the nested gradient was zero)."""
    from scipy.special import logsumexp
    x = np.array([[0.3, -1.2, 2.0, 0.1, 0.5]])
    f = lambda a: logsumexp(a, axis=1, keepdims=True)  # noqa: E731
    g = jittape.grad(f)(x)
    np.testing.assert_allclose(g, np.exp(x - logsumexp(x)), rtol=1e-13)
    w = np.arange(5.0).reshape(1, 5)
    check_grads(lambda a: np.sum(jittape.grad(f)(a) * w), (x,))


def test_perturbations_are_not_confused():
    """Siskind & Pearlmutter's example: d/dx [x * d/dy (x + y)] = 1 (not 2), and closures
    over outer values get their derivatives."""
    assert jittape.grad(lambda x: x * jittape.grad(lambda y: x + y)(1.0))(2.0) == 1.0
    assert jittape.grad(lambda a: jittape.grad(lambda b: a * b ** 2)(3.0))(1.5) == \
        pytest.approx(6.0)  # d/da (2 a b) at b = 3
    assert jittape.grad(lambda a: jittape.grad(lambda b: a * b ** 2)(a))(1.5) == \
        pytest.approx(6.0)  # d/da (2 a^2): the argument is also the closure
    p = np.array([0.7, -0.2, 1.1])

    def outer(q):
        return np.sum(jittape.grad(lambda z: np.sum(np.sin(z * q) * q))(X) ** 2)
    check_grads(outer, (p,))


def test_second_order_checks_of_vjp_and_jvp_functions():
    """autograd's check_grads(order=2): (x, w) -> J^T w and (x, v) -> J v, each checked with
    respect to both arguments in both modes."""
    g = lambda z: np.array([np.sum(z ** 3), np.prod(np.cos(z))])  # noqa: E731
    w = np.array([0.8, -1.3])
    vjp_f = lambda x, w: jittape.vjp(g, x)[1](w)[0]  # noqa: E731
    jvp_f = lambda x, v: jittape.jvp(g, (x,), (v,))[1]  # noqa: E731
    for fn, args in ((vjp_f, (X, w)), (jvp_f, (X, V))):
        for argnum in (0, 1):
            jac = jittape.jacobian(fn, argnum)(*args)
            fd = _fd_jacobian(lambda a: fn(*[a if k == argnum else b for k, b in
                                            enumerate(args)]), args[argnum])
            np.testing.assert_allclose(jac, fd, rtol=1e-5, atol=1e-6)
            jac_fwd = jittape.jacobian(fn, argnum, mode="forward")(*args)
            np.testing.assert_allclose(jac_fwd, jac, rtol=1e-12, atol=1e-12)


def test_replayed_and_saved_tapes_differentiate_the_inner_derivative(tmp_path):
    f = FUNCTIONS["reductions and guards"]
    outer = lambda z: np.sum(jittape.grad(f)(z) ** 2)  # noqa: E731
    tape = jittape.record(outer, X)
    tape.save(tmp_path / "nested.npz")
    loaded = jittape.load(tmp_path / "nested.npz")
    for t in (tape, loaded):
        for x in (X + 0.1, X - 0.05):
            v, g = t.value_and_gradient(x)
            assert v == pytest.approx(outer(x), rel=1e-13)
            np.testing.assert_allclose(g, 2 * jittape.hessian(f)(x) @ jittape.grad(f)(x),
                                       rtol=1e-12, atol=1e-12)
    with pytest.raises(jittape.GuardFailure):
        tape.value_and_gradient(np.array([0.3, -1.2, -2.0]))  # the inner `if` flips
    taped = jittape.taped(outer)
    x = np.array([0.3, -1.2, -2.0])
    np.testing.assert_allclose(taped.grad(x), 2 * jittape.hessian(f)(x) @ jittape.grad(f)(x),
                               rtol=1e-12, atol=1e-12)


def test_derivatives_nest_to_any_order():
    """The recorded reverse sweep: third and fourth derivatives against closed forms."""
    s = 0.7
    d3 = jittape.grad(jittape.grad(jittape.grad(lambda z: np.sin(z) * z ** 2)))(s)
    assert d3 == pytest.approx(-s * s * np.cos(s) - 6 * s * np.sin(s) + 6 * np.cos(s),
                               rel=1e-13)
    d4 = jittape.grad(jittape.grad(jittape.grad(jittape.grad(lambda z: np.exp(2 * z)))))(s)
    assert d4 == pytest.approx(16 * np.exp(2 * s), rel=1e-13)
    assert jittape.grad(jittape.grad(jittape.grad(jittape.grad(lambda z: z ** 4))))(s) == \
        pytest.approx(24.0, rel=1e-13)
    # hvp and hessian (second-order sweeps) of a function that calls grad: third order
    g = lambda z: np.sum(jittape.grad(lambda y: np.sum(y ** 4))(z) * V)  # noqa: E731
    np.testing.assert_allclose(jittape.hvp(g)(X, V), 24 * X * V * V, rtol=1e-13)
    np.testing.assert_allclose(jittape.hessian(g)(X), np.diag(24 * X * V), rtol=1e-13)
    # the third derivative tensor of sum(x_i^2 x_j) = |x|^2 sum(x)
    f = lambda z: np.sum(z ** 2) * np.sum(z)  # noqa: E731
    T = jittape.jacobian(jittape.hessian(f))(X)
    e = np.eye(3)
    want = 2 * (e[:, :, None] + e[:, None, :] + e[None, :, :])
    np.testing.assert_allclose(T, want, rtol=1e-13, atol=1e-13)
    # a JVP of a JVP of a gradient: v^T T(x) v along v
    jj = jittape.jvp(lambda z: jittape.jvp(jittape.grad(f), (z,), (V,))[1], (X,), (V,))[1]
    np.testing.assert_allclose(jj, np.einsum("ijk,j,k->i", want, V, V), rtol=1e-13,
                               atol=1e-13)


@pytest.mark.parametrize("name", ["matrix", "linalg", "reductions and guards", "indexing"])
def test_third_derivatives_against_central_differences(name):
    """d/dx <v, H(x) v> by nesting three levels (grad of grad of grad), against central
    differences of the forward-over-reverse hvp; the nested levels record no call records
    (the recorded reverse sweep), and the tape of the third derivative replays."""
    f = FUNCTIONS[name]
    k = lambda z: np.vdot(jittape.grad(lambda y: np.vdot(jittape.grad(f)(y), V))(z), V)  # noqa
    assert {K.NESTED_VJP, K.NESTED_JVP}.isdisjoint(jittape.record(k, X).arrays.op.tolist())
    third = jittape.grad(k)(X)
    hvv = lambda z: np.vdot(jittape.hvp(f)(z, V), V)  # noqa: E731
    np.testing.assert_allclose(k(X), hvv(X), rtol=1e-12)
    np.testing.assert_allclose(third, _fd_jacobian(hvv, X), rtol=1e-5, atol=1e-6)
    taped = jittape.taped(k)
    x2 = X + 0.01
    np.testing.assert_allclose(taped.grad(X), third, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(taped.grad(x2), jittape.grad(k)(x2), rtol=1e-12, atol=1e-12)


def test_third_derivatives_through_an_op_without_a_recorded_rule_raise_a_clear_error():
    """np.interp has no recorded reverse rule: its nested derivative is a call record, and
    the third order through it raises jittape's error naming the op."""
    f = lambda s: np.sum(np.interp(s, [-3.0, 3.0], [-1.0, 2.0]) ** 2 * s)  # noqa: E731
    k = lambda z: np.vdot(jittape.grad(lambda y: np.vdot(jittape.grad(f)(y), V))(z), V)  # noqa
    np.testing.assert_allclose(k(X), np.vdot(jittape.hvp(f)(X, V), V), rtol=1e-12)
    with pytest.raises(jittape.NotDifferentiableError, match="runs through interp"):
        jittape.grad(k)(X)
    with pytest.raises(jittape.NotDifferentiableError, match="second-order"):
        jittape.hvp(lambda z: np.sum(jittape.grad(f)(z)))(X, V)


def test_logaddexp_hessian_at_a_tie():
    """Found by the nested checks: logaddexp's partial had a constant branch at x == y, so
    its second derivative there was 0."""
    for fn, c in ((np.logaddexp, 0.25), (np.logaddexp2, 0.25 * np.log(2))):
        H = jittape.hessian(lambda z: fn(z[0], z[1]))(np.array([0.4, 0.4]))
        np.testing.assert_allclose(H, c * np.array([[1.0, -1.0], [-1.0, 1.0]]), rtol=1e-12)
        g = jittape.grad(lambda z: fn(z[0], z[1]))(np.array([np.inf, np.inf]))
        np.testing.assert_array_equal(g, [0.5, 0.5])


def test_structured_arguments_nest():
    """Tuples, lists and dicts of arguments (constant leaves stay constants, their gradient
    None, as at the top level)."""
    g = lambda p: np.sum(p[0] ** 2 * p[1]) + p[2]  # noqa: E731
    x = np.array([1.0, 2.0])
    inner = jittape.grad(lambda z: np.sum(jittape.grad(g)((z, 2.0 * z, 3))[0]))(x)
    np.testing.assert_allclose(inner, 8.0 * x, rtol=1e-13)  # d/dz sum(4 z^2)
    assert jittape.grad(lambda a: jittape.grad(lambda q: q["a"] * q["b"] ** 2)(
        {"a": a, "b": 3.0})["b"])(1.5) == pytest.approx(6.0)
    seen = []
    jittape.grad(lambda z: seen.append(jittape.grad(g)((z, z, 3))) or np.sum(z))(x)
    assert seen[0][2] is None and isinstance(seen[0], tuple)


def test_nested_calls_refuse_what_they_cannot_differentiate():
    """Each error of the nested path, raised from inside a recording."""
    def inside(fn):
        return jittape.grad(lambda x: fn(x) + np.sum(x))(X)
    with pytest.raises(jittape.NonScalarOutputError, match="must return a scalar"):
        inside(lambda x: np.sum(jittape.grad(lambda z: z * 2.0)(x)))
    with pytest.raises(ValueError, match="cotangent of shape"):
        inside(lambda x: np.sum(jittape.vjp(lambda z: z * 2.0, x)[1](np.ones(2))[0]))
    with pytest.raises(ValueError, match="tangent of shape"):
        inside(lambda x: np.sum(jittape.jvp(lambda z: z * 2.0, (x,), (np.ones(2),))[1]))
    with pytest.raises(ValueError, match="tangents' structure"):
        inside(lambda x: np.sum(jittape.jvp(lambda z, w: z * w[0] * w[1], (x, (x, x)),
                                            (np.ones(3), np.ones(3)))[1]))
    with pytest.raises(TypeError, match="nothing to differentiate"):
        inside(lambda x: jittape.grad(lambda p: p[0] * np.sum(x))((1, 2))[0] or 0.0)
    with pytest.raises(TypeError, match="real floats or arrays"):
        inside(lambda x: np.sum(jittape.grad(lambda a, b: np.sum(a * x), (0, 1))(x, True)[0]))
    with pytest.raises(TypeError, match="returned str"):
        inside(lambda x: np.sum(jittape.vjp(lambda z: "no", x)[1](1.0)[0]))
    with pytest.raises(TypeError, match="float or an array argument"):
        inside(lambda x: np.sum(jittape.jacobian(lambda p: p[0] * x)((x,))))


def test_sparsity_sees_through_a_recorded_inner_gradient():
    """The recorded route leaves ordinary records, so sparsity patterns and sparse
    Hessians see through them: h(x) = sum(grad(f)(x)^2) with f separable has a diagonal
    Hessian, and the sparse Hessian equals the dense one."""
    f = lambda z: np.sum(np.sin(z) * z ** 3)  # noqa: E731
    h = lambda z: np.sum(jittape.grad(f)(z) ** 2)  # noqa: E731
    x = np.linspace(-1.0, 1.3, 6)
    tape = jittape.record(h, x)
    assert {K.NESTED_VJP, K.NESTED_JVP}.isdisjoint(tape.arrays.op.tolist())
    np.testing.assert_array_equal(tape.hessian_sparsity().toarray(), np.eye(6, dtype=bool))
    H = jittape.hessian(h)(x)
    np.testing.assert_allclose(jittape.sparse_hessian(h)(x).toarray(), H, rtol=1e-13,
                               atol=1e-13)
    np.testing.assert_allclose(H, _fd_jacobian(jittape.grad(h), x), rtol=1e-6, atol=1e-6)


def test_a_scatter_too_wide_to_record_takes_the_second_order_route():
    """A gather whose adjoint would pad one target's many sources into a huge table
    (jittape.optable.rules.array_vjps.PAD_LIMIT) makes the recorded sweep give up and undo
    what it recorded (Recorder rolled back): the nested derivative is then the call record,
    with the same values."""
    idx = np.concatenate([np.zeros(3000, dtype=int), np.arange(200)])
    f = lambda z: np.sum(np.sin(z[idx]) * z[idx])  # noqa: E731
    x = np.linspace(-1.0, 1.0, 200)
    h = lambda z: np.vdot(jittape.grad(f)(z), np.cos(z))  # noqa: E731
    tape = jittape.record(h, x)
    assert K.NESTED_VJP in tape.arrays.op.tolist()  # the call record, not recorded records
    g1 = jittape.grad(h)(x)
    g2 = jittape.grad(lambda z: np.vdot(jittape.grad(f)(z), np.cos(z)))(x)
    np.testing.assert_allclose(tape.gradient(x), g1, rtol=1e-12)
    np.testing.assert_allclose(g1, g2, rtol=1e-12)
    # d/dx <grad f(x), cos x> = H(x) cos x - grad f(x) sin x
    np.testing.assert_allclose(jittape.hvp(f)(x, np.cos(x)) - jittape.grad(f)(x) * np.sin(x),
                               g1, rtol=1e-10, atol=1e-10)


def test_second_derivatives_through_an_op_without_a_second_order_rule_name_it():
    """eig has first-order rules only: a gradient of a gradient through it (the call
    record's second-order sweep meets it) raises jittape's error naming eig, not a
    misleading third-derivative message."""
    def f(z):
        a = np.array([[z[0], z[1]], [z[2], 2.0]])
        return np.sum(np.linalg.eig(a)[0] ** 2)
    x = np.array([1.0, 0.3, 0.2])
    with pytest.raises(jittape.NotDifferentiableError, match="second derivatives through eig"):
        jittape.grad(lambda z: np.vdot(jittape.grad(f)(z), V))(x)

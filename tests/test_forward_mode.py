"""Forward mode: jvp (JAX's convention), Tape.jvp replayed at new points, jacobian modes."""

import numpy as np
import pytest

import jittape
from jittape.derivatives import jacobians


def r(x, y):
    return np.sin(x) * y[:3] + np.sum(y ** 2) * np.exp(-x)


def central(f, args, dirs, h=1e-6):
    plus = f(*(a + h * d for a, d in zip(args, dirs)))
    minus = f(*(a - h * d for a, d in zip(args, dirs)))
    return (np.asarray(plus) - np.asarray(minus)) / (2 * h)


RNG = np.random.default_rng(3)
X, Y = RNG.standard_normal(3), RNG.standard_normal(4)


def test_jvp_of_an_array_valued_function_matches_central_differences():
    v = (RNG.standard_normal(3), RNG.standard_normal(4))
    out, tangent = jittape.jvp(r, (X, Y), v)
    np.testing.assert_allclose(out, r(X, Y), rtol=1e-14)
    np.testing.assert_allclose(tangent, central(r, (X, Y), v), rtol=1e-7, atol=1e-9)


def test_jvp_of_a_scalar_function_is_the_directional_derivative():
    f = lambda x: np.sum(np.tanh(x) ** 2)  # noqa: E731
    v = RNG.standard_normal(3)
    out, tangent = jittape.jvp(f, (X,), (v,))
    assert isinstance(out, float) and isinstance(tangent, float)
    assert tangent == pytest.approx(float(np.dot(jittape.grad(f)(X), v)), rel=1e-13)
    assert jittape.jvp(lambda s: s ** 3, (2.0,), (1.0,)) == pytest.approx((8.0, 12.0))


def test_jvp_argument_errors():
    with pytest.raises(TypeError, match="tuples"):
        jittape.jvp(np.sin, X, np.ones(3))
    with pytest.raises(TypeError, match="tangent"):
        jittape.jvp(r, (X, Y), (np.ones(3),))
    with pytest.raises(ValueError, match="tangent shape"):
        jittape.jvp(r, (X, Y), (np.ones(2), np.ones(4)))


def test_tape_jvp_replays_at_new_points():
    tape = jittape.record(r, X, Y, argnums=(0, 1))
    for _ in range(3):
        x2, y2 = RNG.standard_normal(3), RNG.standard_normal(4)
        v = (RNG.standard_normal(3), RNG.standard_normal(4))
        out, tangent = tape.jvp(x2, y2, tangents=v)
        out_ref, tan_ref = jittape.jvp(r, (x2, y2), v)
        np.testing.assert_allclose(out, out_ref, rtol=1e-13)
        np.testing.assert_allclose(tangent, tan_ref, rtol=1e-12, atol=1e-14)


def test_tape_jvp_checks_guards():
    f = lambda x: x[0] ** 2 if x[0] > 0 else -x  # noqa: E731
    tape = jittape.record(f, np.array([1.0, 2.0]))
    assert tape.jvp(np.array([3.0, 1.0]), tangents=np.array([1.0, 0.0]))[1] == 6.0
    with pytest.raises(jittape.GuardFailure):
        tape.jvp(np.array([-3.0, 1.0]), tangents=np.array([1.0, 0.0]))


@pytest.mark.parametrize("shape_in, m", [((2,), 5), ((5,), 2), ((2, 3), 6)])
def test_jacobian_modes_agree_with_each_other_and_with_differences(shape_in, m):
    a = RNG.standard_normal((m, int(np.prod(shape_in))))

    def g(x):
        return np.tanh(a @ x.ravel()) * np.sum(x ** 2)
    x = RNG.standard_normal(shape_in)
    jf = jittape.jacobian(g, mode="forward")(x)
    jr = jittape.jacobian(g, mode="reverse")(x)
    ja = jittape.jacobian(g)(x)
    assert jf.shape == (m,) + shape_in
    np.testing.assert_allclose(jf, jr, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ja, jr, rtol=1e-12, atol=1e-14)
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = 1.0
        np.testing.assert_allclose(jf.reshape(m, -1)[:, j],
                                   central(g, (x,), (e.reshape(shape_in),)), rtol=1e-6,
                                   atol=1e-8)


def test_auto_mode_picks_the_cheaper_side():
    wide = jittape.record(lambda x: np.sum(x ** 2) * np.ones(2), np.ones(5))
    tall = jittape.record(lambda x: np.tile(x, 3), np.ones(2))
    assert jacobians.choose_mode(wide, "auto") == "reverse"
    assert jacobians.choose_mode(tall, "auto") == "forward"
    with pytest.raises(ValueError, match="mode"):
        jittape.jacobian(np.sin, mode="sideways")


def test_jvp_of_a_structured_output_keeps_its_structure():
    """JAX's convention: tuple/list/dict outputs give tangents of the same structure."""
    x, v = np.array([0.3, -0.8, 1.5]), np.array([1.0, 0.5, -2.0])

    def f(x):
        return np.sin(x), {"s": np.sum(x ** 2), "m": [np.outer(x, x), 3.0]}
    out, tan = jittape.jvp(f, (x,), (v,))
    ref = f(x)
    assert isinstance(out, tuple) and isinstance(tan[1], dict) and isinstance(tan[1]["m"], list)
    np.testing.assert_allclose(out[0], ref[0], rtol=1e-15)
    np.testing.assert_allclose(out[1]["m"][0], ref[1]["m"][0], rtol=1e-15)
    np.testing.assert_allclose(tan[0], np.cos(x) * v, rtol=1e-14)
    np.testing.assert_allclose(tan[1]["s"], 2 * x @ v, rtol=1e-14)
    np.testing.assert_allclose(tan[1]["m"][0], np.outer(v, x) + np.outer(x, v), rtol=1e-14)
    assert tan[1]["m"][1] == 0.0 and out[1]["m"][1] == 3.0

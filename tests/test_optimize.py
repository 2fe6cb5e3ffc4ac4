"""The tape optimizer (jittape.tape.optimize, Tape.optimize): each pass on a tape built to
need it, the report, and values and derivatives of optimized tapes against the originals
(the generic checker in test_ops.py and the fuzzer run it on every op and program)."""

import numpy as np
import pytest

import jittape
from jittape.ops import codes as K


def _same(t, o, x, v):
    """Values, gradients, JVPs and HVPs of tapes t and o agree at x (to reassociation)."""
    v1, g1 = t.value_and_gradient(x)
    v2, g2 = o.value_and_gradient(x)
    assert v2 == v1
    np.testing.assert_allclose(g2, g1, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(o.jvp(x, tangents=v)[1], t.jvp(x, tangents=v)[1], rtol=1e-13)
    np.testing.assert_allclose(o.hvp(x, v=v), t.hvp(x, v=v), rtol=1e-13, atol=1e-14)


X = np.array([0.3, -1.2, 2.0, 0.7])
V = np.array([0.5, 0.1, -0.3, 1.0])


def test_common_subexpressions_identities_and_dead_records():
    def f(x):
        y = -(-(x * 1.0)) / 1.0
        dead = np.cos(x) * 3.0  # noqa: F841  (read by nothing)
        s = np.sum(np.sin(x)) + np.sum(np.sin(x))  # the same records twice
        return s + x[0] * x[1] + x[0] * x[1] + np.sum(y ** 1.0)
    t = jittape.record(f, X)
    o = t.optimize()
    r = o.optimization
    assert r.identities == 4 and r.merged >= 5 and r.dead >= 2, str(r)
    assert o.n_records == r.records_after < t.n_records == r.records_before
    assert {K.NEG, K.MULC, K.DIVC, K.POWC, K.COS}.isdisjoint(o.arrays.op.tolist())
    for x in (X, X + 0.3):
        _same(t, o, x, V)
    assert "records ->" in str(r) and "v0" in str(o)


def test_x_plus_zero_is_kept_and_minus_zero_survives():
    """x + 0.0 turns -0.0 into +0.0, so it is not an identity; x + (-0.0) is."""
    def f(x):
        return np.sum(np.copysign(1.0, x + 0.0) + np.copysign(1.0, x + (-0.0)) * x)
    x = np.array([-0.0, 1.0])
    t = jittape.record(f, x)
    o = t.optimize()
    assert o.optimization.identities == 1
    assert K.ADDC in o.arrays.op.tolist()
    assert o.value(x) == t.value(x) == f(x)


def test_constant_records_fold_and_their_guards_go():
    """Records of constants only (here from a nested derivative's recorded sweep, which
    seeds with constants) fold into constants; a guard on a constant value can never fail
    and is removed, one on an input-dependent value stays (and still fails)."""
    def f(x):
        g = jittape.grad(lambda z: np.sum(z ** 3))(x)
        return np.sum(g * x) if x[0] > 0 else np.sum(x)
    t = jittape.record(f, X)
    o = t.optimize()
    assert o.optimization.folded > 0
    assert K.GUARD in o.arrays.op.tolist()
    for x in (X, X + 0.1):
        _same(t, o, x, V)
    with pytest.raises(jittape.GuardFailure):
        o.value_and_gradient(-X)


def test_the_compiled_kernel_is_generated_from_the_optimized_tape():
    def f(x):
        s = 0.0
        for i in range(x.size - 1):
            s = s + (x[i + 1] - x[i] ** 2) ** 2 + (x[i + 1] - x[i] ** 2) ** 2
        return s if x[0] > 0 else -s
    t = jittape.record(f, X)
    from jittape.compiler.kernel import kernel_source, optimized
    arrays, out, report = optimized(t)
    assert report.records_after < report.records_before and arrays.n_records == \
        report.records_after
    assert f"] = {int(np.flatnonzero(t.arrays.op == K.GUARD)[0])}\n" in kernel_source(t)
    c = jittape.record(f, X).compile()
    for x in (X, X + 0.05):
        v1, g1 = t.value_and_gradient(x)
        v2, g2 = c.value_and_gradient(x)
        assert v2 == pytest.approx(v1, rel=1e-14)
        np.testing.assert_allclose(g2, g1, rtol=1e-13)
    with pytest.raises(jittape.GuardFailure) as e:
        c.value_and_gradient(-X)
    assert e.value.record == int(np.flatnonzero(t.arrays.op == K.GUARD)[0])


def _columns_of_rows(x):
    P = x.reshape(4, 3)
    rows = P[np.array([0, 2, 2, 3, 1, 0])]         # a gather read only through views
    other = P[np.array([1, 3])]                    # a gather read by an op too
    return np.sum(rows[:, 0] * np.sin(rows[:, 1:].T)) + np.sum(rows[1:4, 2] ** 2) + \
        np.sum(np.exp(other) + other[:, ::2].ravel()[0])


def test_views_of_a_gather_become_gathers_and_the_gathered_array_goes():
    x = np.linspace(-1.0, 1.2, 12)
    t = jittape.record(_columns_of_rows, x)
    o = t.optimize()
    r = o.optimization
    assert r.views == 3, str(r)  # rows[:, 0], rows[:, 1:].T, rows[1:4, 2]; not other's
    gathers = lambda tape: int(np.sum(tape.arrays.op == K.GATHER))  # noqa: E731
    assert gathers(o) == gathers(t) + 3 - 1  # the first gather is dead
    assert "views of gathers composed" in str(r)
    v = np.cos(np.arange(12.0))
    for y in (x, x[::-1].copy()):
        _same(t, o, y, v)
    c = jittape.record(_columns_of_rows, x).compile()
    v1, g1 = c.value_and_gradient(x[::-1].copy())
    assert v1 == pytest.approx(_columns_of_rows(x[::-1]), rel=1e-14)
    np.testing.assert_allclose(g1, t.gradient(x[::-1].copy()), rtol=1e-13)


def test_tapes_with_regions_are_left_as_they_are():
    from jittape.custom.examples import checkpoint_example
    t = jittape.record(checkpoint_example, X[:3], 0.5)
    o = t.optimize()
    assert "regions" in str(o.optimization) and o.n_records == t.n_records


# --- absolute zeros (Tape.optimize(absolute_zero=True), jittape.derivatives.zeros) ---------
def _rk4_last(x):
    """cmpad's an_ode (benchmarks/problems/cmpad.py) at a small size: y' = f(y), f_0 = x_0,
    f_i = x_i y_{i-1}, y(0) = 0, 2 RK4 steps of 0.25; only y_0 .. y_7 are then non-zero."""
    from benchmarks.problems.cmpad import ode_last
    return ode_last(x, np.zeros, np.concatenate, ns=2, tf=0.5)


def test_absolute_zeros_fold_an_identically_zero_output():
    """y_11 after 2 steps is a chain of products with exact zeros: folded, the tape is its
    input and one constant, interpreted and compiled; IEEE's nan * 0 is where they differ."""
    x = np.linspace(0.5, 1.5, 12)
    t = jittape.record(_rk4_last, x)
    plain = t.optimize()
    o = t.optimize(absolute_zero=True)
    assert plain.optimization.zeros == 0 and plain.n_records > 50
    assert o.n_records == 2 and o.optimization.zeros >= 2, str(o.optimization)
    assert "absolute zeros folded" in str(o.optimization)
    rng = np.random.default_rng(3)
    for y in (x, rng.normal(size=12) * 100.0):
        v, g = o.value_and_gradient(y)
        assert v == t.value(y) == _rk4_last(y) == 0.0
        np.testing.assert_array_equal(g, t.gradient(y))
        np.testing.assert_array_equal(g, np.zeros(12))
    o.compile()
    for _ in range(3):  # (the second compiled replay makes the one-vector closure)
        v, g = o.value_and_gradient(x * 2.0)
        assert v == 0.0 and g.shape == (12,) and not g.any()
    assert o.gradient(x) is not o.gradient(x)  # a new array each call
    with pytest.raises(ValueError, match="shape"):
        o.gradient(np.ones(5))
    bad = x.copy()
    bad[-1] = np.inf  # NumPy: inf * 0 is nan; the folded tape keeps its zero (documented)
    with np.errstate(invalid="ignore"):
        assert np.isnan(_rk4_last(bad)) and np.isnan(t.value(bad)) and o.value(bad) == 0.0


def test_absolute_zeros_inside_a_tape_keep_its_values_and_derivatives():
    """Products with constant zeros fold (x * 0, x * zeros, a matrix with zero columns),
    what depends on the inputs stays: values, gradients, JVPs and HVPs as before."""
    zeros = np.array([0.0, 2.0, 0.0, 0.0])
    A = np.array([[1.0, 0.0, 2.0, 0.0], [0.0, 0.0, 3.0, 0.0]])

    def f(x):
        dead = np.sin(x * zeros)[0] + np.sum(np.exp(x[2:] * 0.0)) + (A @ x)[1] * 0.0
        return np.sum(x ** 2 * zeros) + dead + np.sum(A.T @ (A @ np.cos(x)))
    t = jittape.record(f, X)
    o = t.optimize(absolute_zero=True)
    assert o.optimization.zeros >= 3 and o.n_records < t.optimize().n_records
    for x in (X, X[::-1] * 1.7):
        _same(t, o, x, V)
        assert o.value(x) == pytest.approx(f(x), rel=1e-14)


def test_absolute_zeros_never_freeze_a_value_that_moves():
    """A piecewise-constant value (floor: its partial is 0.0, its value moves), a sort
    (its stored permutation follows the values) and a product with a non-zero constant are
    not folded; the values follow NumPy's at points where they change."""
    def f(x):
        low = np.sort(np.concatenate([x, np.zeros(1)]))[0]
        return np.sum(np.floor(x)) + low + np.sum(x * np.array([0.0, 1.0, 0.0, 1.0]))
    from jittape.derivatives.zeros import absolute_zeros
    t = jittape.record(f, X)
    assert absolute_zeros(t.arrays) == []
    o = t.optimize(absolute_zero=True)
    for x in (X, -X, X + 1.0):
        assert o.value(x) == pytest.approx(f(x), rel=1e-14)
        np.testing.assert_allclose(o.gradient(x), t.gradient(x), rtol=1e-14)


def test_absolute_zeros_remove_guards_on_folded_values_only():
    """A branch on ``x[0] * 0.0`` reads a folded value: its guard goes; a branch on x[1]
    keeps its guard, which fails as on the recorded tape."""
    def f(x):
        s = np.sum(x ** 2) if x[0] * 0.0 < 1.0 else 0.0
        return s + x[1] if x[1] > 0 else s - x[1]
    t = jittape.record(f, X)
    guards = lambda tape: int(np.sum(tape.arrays.op == K.GUARD))  # noqa: E731
    o = t.optimize(absolute_zero=True)
    assert guards(t.optimize()) == 2 and guards(o) == 1
    assert o.optimization.guards_removed == 1
    y = X * 1.5
    assert o.value(y) == t.value(y) == f(y)
    np.testing.assert_array_equal(o.gradient(y), t.gradient(y))
    for tape in (t, o):
        with pytest.raises(jittape.GuardFailure):
            tape.value(-X)

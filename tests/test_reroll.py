"""Rerolled loops (jittape.compiler.reroll): long scalar tapes compile into loops over index
tables and
agree with the interpreter, op by op and on whole programs."""

import math

import numpy as np
import pytest

import jittape
from jittape.compiler.kernel import MAX_STATEMENTS, _Gen, kernel_source
from jittape.demo import lj_energy_loops
from jittape.ops import OPS

from test_ops import S, _point

# one spec per differentiable elementwise op of the table (its domain, its NumPy callable)
ELEMENTWISE = []
for _op in OPS:
    if _op.kind in ("unary", "binary", "ternary") and _op.numpy and not _op.uses_c and \
            _op.differentiable:
        _f = _op.spec.function or _op.numpy[0]
        if callable(_f):  # as many 24-vectors as its spec has arguments
            ELEMENTWISE.append(S(_op.name, _f, *([(24,)] * len(_op.spec.shapes[0])),
                                 lo=_op.spec.lo, hi=_op.spec.hi))


def _loop_of(fn):
    """A Python loop applying ``fn`` to the i-th elements: 24 reps of one body."""
    def f(*args):
        s = 0.0
        for i in range(len(args[0])):
            s = s * 0.75 + fn(*(a[i] for a in args))
        return s
    return f


def _segments(tape):
    return _Gen(tape.arrays, tape.out_id).segments


def _agree(f, args, points, rtol=1e-12):
    """Compiled (rerolled) and interpreted replays agree at ``points``; returns the tape."""
    nums = tuple(range(len(args)))
    interp = jittape.record(f, *args, argnums=nums)
    compiled = jittape.record(f, *args, argnums=nums).compile()
    for new in points:
        v1, g1 = interp.value_and_gradient(*new)
        v2, g2 = compiled.value_and_gradient(*new)
        scale = sum(float(np.sum(np.abs(g))) for g in g1) + 1.0
        assert v2 == pytest.approx(v1, rel=rtol, abs=rtol)
        for a, b in zip(g2, g1):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale)
        assert compiled.value(*new) == pytest.approx(v1, rel=rtol, abs=rtol)
    return compiled


@pytest.mark.parametrize("spec", ELEMENTWISE, ids=[s.op for s in ELEMENTWISE])
def test_each_elementwise_op_in_a_rerolled_loop_equals_the_interpreter(spec):
    rng = np.random.default_rng(0)
    args = _point(spec, rng)
    f = _loop_of(spec.fn)
    tape = jittape.record(f, *args, argnums=tuple(range(len(args))))
    if not _segments(tape):
        pytest.skip(f"{spec.op}: its spec gives an array per element (no scalar body)")
    _agree(f, args, [_point(spec, np.random.default_rng(s)) for s in (1, 2)], rtol=1e-11)


def _lj_hand(x):
    n = len(x) // 3
    X = x.reshape(n, 3)
    g = np.zeros_like(X)
    for i in range(n):
        d = X[i] - X[i + 1:]
        r2 = np.sum(d * d, axis=1)
        s = (24.0 / r2 ** 4 - 48.0 / r2 ** 7)[:, None] * d
        g[i] += s.sum(axis=0)
        g[i + 1:] -= s
    return g.ravel()


@pytest.mark.parametrize("n_atoms", [13, 38])
def test_lennard_jones_loops_reroll_into_one_body(n_atoms):
    rng = np.random.default_rng(3)
    x = rng.uniform(-2.0, 2.0, 3 * n_atoms) + np.repeat(np.arange(n_atoms), 3)
    tape = jittape.record(lj_energy_loops, x)
    assert tape.n_records > MAX_STATEMENTS or n_atoms == 13
    gen = _Gen(tape.arrays, tape.out_id)
    gen.emit()
    assert len(gen.bodies) == 1 and len(gen.bodies[0].key) == 18  # one pair, 18 records
    covered = sum(s.length * s.reps for s in gen.segments)
    assert covered > 0.95 * tape.n_records
    assert gen.n_statements < 400  # not one statement per record
    tape.compile()
    x2 = x + 0.01 * rng.standard_normal(x.size)
    np.testing.assert_allclose(tape.gradient(x2), _lj_hand(x2), rtol=1e-10,
                               atol=1e-10 * np.abs(_lj_hand(x2)).max())
    assert tape.value(x2) == pytest.approx(lj_energy_loops(x2), rel=1e-12)


def _two_sums(x):
    """Two running sums in one body, each with an exp: a preaccumulated body storing two
    values per rep, both read later by array code."""
    a, b = 0.0, 1.0
    for i in range(len(x) - 1):
        a = a + np.exp(0.3 * x[i]) * x[i + 1]
        b = b * 0.9 + np.sin(x[i] * a)
    return np.sum(np.array([a, b]) * np.array([2.0, -1.5])) + a * b


def test_a_body_storing_two_values_with_calls_is_preaccumulated():
    x = np.linspace(-1.0, 1.0, 40)
    tape = _agree(_two_sums, (x,), [(x * 0.9,), (np.cos(x),)])
    gen = _Gen(tape.arrays, tape.out_id)
    gen.emit()
    assert gen.bodies and all(b.preacc and len(b.stored) == 2 for b in gen.bodies)
    g = jittape.grad(_two_sums)(np.cos(x))
    np.testing.assert_allclose(tape.gradient(np.cos(x))[0], g, rtol=1e-12, atol=1e-12)


def _terms_then_arrays(x):
    """Loop values used outside the loop by array code (stored and loaded), a constant
    inside the body, and reps reading values of reps far before them."""
    terms = []
    for i in range(len(x)):
        prev = terms[i // 2] if i else 1.0
        terms.append(x[i] * prev + 2.0 / (1.0 + x[i] * x[i]))
    t = np.array(terms)
    return np.sum(t * t) + t[3] * t[-1]


def test_loop_values_used_by_array_code_and_far_reps():
    x = np.linspace(0.1, 0.9, 48)
    tape = jittape.record(_terms_then_arrays, x)
    _agree(_terms_then_arrays, (x,), [(x + 0.05,), (np.sqrt(x),)])
    assert "rb0_f" in kernel_source(tape)


def _guarded(x):
    s = 0.0
    for i in range(len(x)):
        s = s + (x[i] * x[i] if x[i] > 0 else -x[i])
    return s


def test_guards_break_bodies_and_still_fail_on_replay():
    # a guard is not part of a body: a loop with one per iteration stays straight-line
    x = np.linspace(0.5, 1.5, 20)
    tape = jittape.record(_guarded, x).compile()
    assert tape.value(x * 1.1) == pytest.approx(_guarded(x * 1.1))
    with pytest.raises(jittape.GuardFailure):
        tape.gradient(-x)


def test_a_long_tape_without_repeats_is_left_to_the_interpreter():
    funcs = [np.sin, np.cos, np.tanh, np.arctan, lambda s: np.exp(-s * s)]
    order = np.random.default_rng(5).integers(0, len(funcs), MAX_STATEMENTS)

    def chaos(x):
        s = 0.0
        for i, k in enumerate(order):
            s = funcs[k](s + x[i % len(x)])
        return s
    tape = jittape.record(chaos, np.linspace(0, 1, 7))
    with pytest.raises(ValueError, match="MAX_STATEMENTS"):
        tape.compile()
    assert not tape.compiled and math.isfinite(tape.value(np.linspace(0, 1, 7)))


# --- column modes (jittape.compiler.reroll.assign_modes): fixed columns and carried running
# sums ---
def _modes(tape):
    gen = _Gen(tape.arrays, tape.out_id)
    gen.emit()
    return [b.modes for b in gen.bodies]


def _pairs_with_self(x):
    """An inner loop over every j, i included: the fixed column (x[i], and a value computed
    from it outside the body) and a per-rep column read the same element when j == i; a
    product carried from rep to rep, whose partials need the carried value."""
    n, s, p = len(x), 0.0, 1.0
    for i in range(0, n, 10):
        xi, wi = x[i], np.sin(x[i])
        for j in range(n):
            d = xi - 0.5 * x[j]
            s = s + wi * d * d
            p = p * (1.0 + 0.01 * d)
    return s + 3.0 * p


def _sum_read_twice(x):
    """The running value read four times per rep (four columns carrying it) and by array
    code after the loop."""
    s, seen = 0.25, []
    for i in range(len(x)):
        s = 0.5 * s + s * x[i] * 0.01 + x[i] * x[i] + s * s * 0.001
        seen.append(s)
    return s * np.sum(np.array(seen[::5]))


def _reread(x):
    """x[j] read anew at each use, xi several times: columns repeating a per-rep one and a
    fixed one."""
    n, s = len(x), 0.0
    for i in range(0, n, 8):
        xi = x[i] * 1.5
        for j in range(n):
            s = s + xi * x[j] + 0.5 * xi * xi * x[j] - x[j] * x[j] * 0.1
    return s


def _gaussians(x):
    """A preaccumulated body (exp) with fixed columns and a carried sum."""
    n, e = len(x) // 2, 0.0
    for i in range(n):
        xi, yi = x[2 * i], x[2 * i + 1]
        for j in range(i + 1, n):
            e = e + np.exp(-((xi - x[2 * j]) ** 2 + (yi - x[2 * j + 1]) ** 2))
    return e


@pytest.mark.parametrize("f, n, kinds", [
    (_pairs_with_self, 30, {"row", "fixed", "carry"}),
    (_sum_read_twice, 40, {"row", "carry", "same"}),
    (_reread, 32, {"row", "fixed", "carry", "same"}),
    (_gaussians, 24, {"row", "fixed", "carry"}),
    (_two_sums, 40, {"row", "carry", "same"})], ids=["self", "twice", "reread", "preacc",
                                                     "preacc-same"])
def test_fixed_carried_and_repeated_columns_equal_the_interpreter(f, n, kinds):
    x = np.linspace(-0.8, 1.1, n) + 0.1 * np.sin(np.arange(n))
    tape = _agree(f, (x,), [(x * 0.9 + 0.05,), (np.cos(x),)])
    modes = [m for ms in _modes(tape) for m in ms]
    assert {m if isinstance(m, str) else m[0] for m in modes} == kinds


def test_lennard_jones_pairs_read_the_outer_atom_once_carry_the_sum_save_the_division():
    x = np.arange(39.0) * 0.7
    tape = jittape.record(lj_energy_loops, x)
    gen = _Gen(tape.arrays, tape.out_id)
    gen.emit()
    (body,) = gen.bodies
    # columns: x[3j], x[3i], x[3j+1], x[3i+1], x[3j+2], x[3i+2], the sum of the previous pair
    assert body.modes == ("row", "fixed", "row", "fixed", "row", "fixed", ("carry", 17))
    # the reverse loop reads 1 / r^2 (position 11) from the forward loop, recomputes the rest
    assert not body.preacc and body.saved() == [11]


def _pairs_two_values(x):
    """Two running values with calls (a preaccumulated body) over the pairs of a double
    loop: one segment per i, all called from one loop; each inner loop's last value read
    by array code after all loops (loads from several segments of one run)."""
    n, a, b, seen = len(x), 0.0, 1.0, []
    for i in range(n):
        xi = x[i]
        for j in range(i + 1, n):
            a = a + np.exp(0.3 * (xi - x[j]))
            b = b * 0.9 + np.sin(xi * a * 0.01)
        seen.append(a)
    return np.sum(np.array(seen) * np.linspace(1.0, 2.0, n)) + a * b


@pytest.mark.parametrize("f, n", [(_pairs_two_values, 14), (lj_energy_loops, 27)],
                         ids=["preaccumulated", "lj"])
def test_segments_of_one_body_are_called_from_one_loop(f, n):
    x = np.linspace(-0.6, 0.7, n) + 0.05 * np.cos(np.arange(n)) + 1.3 * np.arange(n) // 3
    tape = _agree(f, (x,), [(x * 1.01 + 0.01,), (x - 0.02 * np.sin(x),)])
    gen = _Gen(tape.arrays, tape.out_id)
    src = gen.emit()
    (run,) = [r for r in gen.runs.values() if len(r) > 1]
    assert len(run) > 5 and src.count(f"rb{run[0].body}_r(") == 1
    if f is _pairs_two_values:
        assert gen.bodies[run[0].body].preacc
        assert sum(i in gen.loaded for seg in run for i in range(seg.start, seg.stop)) > 5

"""Compiled tapes (jittape.compiler.kernel) agree with the interpreter, opcode by opcode."""

import gc

import numpy as np
import pytest

import jittape
from jittape import GuardFailure
from jittape.sweeps import tiers
from jittape.compiler.kernel import kernel_source
from jittape.testing import check_gradient
from jittape.ops import OPS

from test_ops import SPECS, _objective, _point

# one spec per opcode (the first in the table), so every code path of the generator runs
ONE_PER_OP = list({s.op: s for s in reversed(SPECS)}.values())


def _alone(spec):
    """Whether ``spec`` compiles on a tape of its own: a region or call op (which must be
    refused), a tape with a guard (a failed guard at a new point would hide the others of
    a group), an output that does not depend on the inputs."""
    rng = np.random.default_rng(0)
    args = _point(spec, rng)
    with np.errstate(all="ignore"):  # (at collection: the test itself reports warnings)
        t = jittape.record(_objective(spec, rng), *args, argnums=tuple(range(len(args))))
    kinds = {OPS[c].kind for c in set(t.arrays.op.tolist())}
    return t.out_id < 0 or bool(kinds & {"region", "call"}) or any(
        OPS[c].checks for c in set(t.arrays.op.tolist()))


#: specs compiled together, GROUP to a tape (146 specs on 46 tapes: 202 -> 169 s of CPU
#: from empty kernel caches, Numba's fixed cost per compile), and the specs compiled alone
GROUP = 4
_TOGETHER = [s for s in ONE_PER_OP if not _alone(s)]
CASES = [tuple(_TOGETHER[i:i + GROUP]) for i in range(0, len(_TOGETHER), GROUP)] + [
    (s,) for s in ONE_PER_OP if _alone(s)]


def _group(specs):
    """``(f, args, objectives, cuts)``: the sum of the specs' objectives (each of its own
    arguments ``args[cuts[i]:cuts[i + 1]]``, so each spec's gradient is its own) and their
    points."""
    objectives, points = [], []
    for spec in specs:
        rng = np.random.default_rng(0)
        points.append(_point(spec, rng))
        objectives.append(_objective(spec, rng))
    cuts = np.cumsum([0] + [len(p) for p in points])

    def f(*args):
        return sum(g(*args[a:b]) for g, a, b in zip(objectives, cuts[:-1], cuts[1:]))
    return f, sum(points, ()), objectives, cuts


@pytest.mark.parametrize("specs", CASES, ids=["+".join(s.id for s in c) for c in CASES])
def test_compiled_replay_equals_interpreter(specs):
    """The compiled kernel against the interpreter at two new points, GROUP specs to a
    tape (their gradients are separate arguments')."""
    f, args, objectives, cuts = _group(specs)
    nums = tuple(range(len(args)))
    interp = jittape.record(f, *args, argnums=nums)
    if interp.out_id < 0:
        pytest.skip("output does not depend on the inputs")
    if any(OPS[c].kind in ("region", "call") for c in set(interp.arrays.op.tolist())):
        with pytest.raises(ValueError, match="custom derivative rule"):
            jittape.record(f, *args, argnums=nums).compile()  # replays interpreted
        return
    compiled = jittape.record(f, *args, argnums=nums).compile()
    assert compiled.compiled and not interp.compiled
    for seed in (1, 2):
        new = sum((_point(s, np.random.default_rng(seed)) for s in specs), ())
        try:
            v1, g1 = interp.value_and_gradient(*new)
        except GuardFailure:
            with pytest.raises(GuardFailure):
                compiled.value_and_gradient(*new)
            continue
        v2, g2 = compiled.value_and_gradient(*new)
        scale = sum(abs(g(*new[a:b])) for g, a, b in zip(objectives, cuts[:-1], cuts[1:]))
        np.testing.assert_allclose(v2, v1, rtol=1e-13, atol=1e-13 * (1.0 + scale))
        for a, b in zip(g2, g1):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        assert compiled.value(*new) == pytest.approx(v1, rel=1e-13, abs=1e-13 * (1 + scale))


def test_every_opcode_reaches_the_compiler():
    assert {s.op for s in ONE_PER_OP} == {s.name for s in OPS}


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def test_elementwise_records_fuse_into_one_loop_each_way():
    src = kernel_source(jittape.record(rosen, np.zeros(50)))
    # one forward loop and one reverse loop over the 49 pairs, nothing stored in between
    assert src.count("for j in range(49)") == 2
    assert "val[" not in src and "adj[" not in src  # no
    # intermediate needs a buffer slot


def _row_sums(x):
    X = x.reshape(4, 2, 3)
    r = np.sum(np.sin(X) * X, axis=(1, 2))  # rows of 3, then a sum over the rows of 2
    s = np.sum(np.exp(X[:, 0]) ** 2, axis=-1, keepdims=True)  # rows of 3, kept
    return np.sum(r ** -3.0) + np.sum(np.cos(s) * r[:, None]) + np.sum(r)


@pytest.mark.parametrize("f, nested, flat", [
    (_row_sums, 2, 0), (lambda x: np.sum(np.sum(x.reshape(6, 4) ** 2, 1) ** -1), 1, 1),
    (lambda x: np.sum(np.sum(np.sin(np.tile(x, 12).reshape(72, 4)), 1) ** 2), 1, 1)])
def test_a_sum_over_the_last_axes_nests_into_its_loop(f, nested, flat):
    """A sum over the trailing axes of a fused group's last member closes that loop as one
    accumulator per row (LJ's ``np.sum(d**2, axis=-1)``): no call of the sum's kernel. The
    reverse loop of rows of FLAT_ROWS or more is flat, each element reading its row's
    adjoint; of shorter rows, nested too."""
    x = np.linspace(0.3, 1.2, 24)
    t = jittape.record(f, x)
    src = kernel_source(t)
    # (NumPy's sum over axes (1, 2) is two records: the second follows no loop)
    assert src.count("for jo in range(") == 2 * nested - flat
    assert src.count(" + j // ") == flat
    compiled = jittape.record(f, x).compile()
    for y in (x, 0.9 * x):
        v, g = compiled.value_and_gradient(y)
        assert v == pytest.approx(f(y), rel=1e-13)
        np.testing.assert_allclose(g, jittape.grad(f)(y), rtol=1e-12)


def _adjoint_writers(x):
    a = np.sin(x)                          # its adjoint: written by every consumer below
    b = np.sum(a[1:] * 2.0)                # a slice of it, earlier
    c = np.cumsum(a)                       # an op's own kernel, earlier
    d = np.sum(np.cos(a) + a[::-1])        # another loop, a strided view of it too
    e = np.sum(np.exp(a) * a)              # the last loop: written first in reverse, "="
    return b + np.sum(c ** 2) + d + e


def test_the_loop_that_writes_an_adjoint_first_assigns_it_and_it_is_not_zeroed():
    x = np.linspace(-1.0, 2.0, 9)
    src = kernel_source(jittape.record(_adjoint_writers, x))
    # a's adjoint (slots 0 to 8): assigned by the exp loop, then added to by the others
    assert src.count("adj[0 + j] = g") == 1 and src.count("adj[0 + j] += g") == 1, src
    assert "adj[0 + 8 + j * -1] += g" in src and "adj[0 + 1 + j] += g" in src
    assert "= 0.0  #" not in src  # (the two array adjoints are assigned: nothing to zero)
    compiled = jittape.record(_adjoint_writers, x).compile()
    for y in (x, np.sqrt(np.abs(x)) + 0.1):
        for _ in range(2):  # the work buffers are reused: nothing stale is read
            v, g = compiled.value_and_gradient(y)
            assert v == pytest.approx(_adjoint_writers(y), rel=1e-13)
            np.testing.assert_allclose(g, jittape.grad(_adjoint_writers)(y), rtol=1e-12)


@pytest.mark.parametrize("c", [3.0, -1.0, -2.0, -3.0])
def test_integer_powers_differentiate_by_multiplication_as_pow_does(c):
    """``pow_dx``'s branch-free integer exponents (no pow() call for LLVM to vectorize into
    every element) agree with ``c x^(c-1)`` by pow(), at zeros of either sign and inf."""
    from jittape.optable.scalar_math import pow_dx, powc
    for x in (0.7, -1.3, 0.0, -0.0, np.inf, -np.inf, 1e-200, 3e120):
        with np.errstate(all="ignore"):
            want = c * np.power(x, c - 1.0)
            got = pow_dx(np.float64(x), c, powc(np.float64(x), c))
        assert got == pytest.approx(want, rel=1e-15) or (got == want), (x, got, want)
        assert np.signbit(got) == np.signbit(want) or want == 0.0


def test_compiled_guard_failure_and_scalar_inputs():
    def f(x, y):
        return x * y if x > 0 else x - y
    tape = jittape.record(f, 2.0, 3.0, argnums=(0, 1)).compile()
    assert tape.value_and_gradient(1.5, 4.0) == (6.0, (4.0, 1.5))
    with pytest.raises(GuardFailure):
        tape.gradient(-1.0, 4.0)


def _nan_or_branch(x):
    return np.sum(np.log(x)) if x[1] > 0 else np.sum(x)


def test_a_nan_value_is_no_guard_failure_and_a_failed_guard_is():
    """The kernel returns nan for a failed guard (its id in the adjoint buffer's last
    slot): a nan the function computes, with or without guards, is a value."""
    x = np.array([0.5, 2.0, 3.0])
    tape = jittape.record(_nan_or_branch, x).compile()
    plain = jittape.record(lambda x: np.sum(np.log(x)), x).compile()
    for _ in range(2):
        y = np.array([-1.0, 2.0, 3.0])
        with np.errstate(invalid="ignore"):
            for t in (tape, plain):
                v, g = t.value_and_gradient(y)
                assert np.isnan(v) and g[0] == -1.0 and g[1] == 0.5  # (1 / x)
                values, grads = t.value_and_gradient(np.stack([y, x]), batch=True)
                assert np.isnan(values[0]) and values[1] == pytest.approx(_nan_or_branch(x))
        with pytest.raises(GuardFailure):
            tape.value_and_gradient(np.array([1.0, -2.0, 3.0]))


def _guarded_sum(x):
    return np.sum(x * x) if x[0] > 0 else np.sum(x)


@pytest.mark.parametrize("holds_gil", [True, False])
def test_the_compiled_replay_of_one_vector_is_one_closure(monkeypatch, holds_gil):
    """After its first compiled replays the tape answers one float64 vector through a closure
    (``kernel_call.plain_call``): the same values and gradients as the interpreter, a guard
    still fails, every other input takes the general path (which checks it), and so does
    another thread unless the kernel holds the GIL (a small one: its callers take turns on
    one set of buffers)."""
    import pickle
    import threading
    from jittape.compiler import kernel
    monkeypatch.setattr(kernel, "HOLD_GIL_SLOTS", 4096 if holds_gil else 0)
    x = np.array([0.5, 2.0, -3.0])
    tape = jittape.record(_guarded_sum, x).compile()
    assert tape._kernel[0].targetoptions["nogil"] is not holds_gil
    ref = jittape.record(_guarded_sum, x)
    ref.auto_compile = False
    assert tape._plain is not None  # (compile() makes it; a tier-up, the second replay)
    assert tape.__dict__["gradient"].__doc__ == jittape.Tape.gradient.__doc__
    y = np.array([1.5, -1.0, 4.0])
    assert tape.value(y) == ref.value(y) == 1.5 ** 2 + 1 + 16
    np.testing.assert_array_equal(tape.gradient(y), 2 * y)
    v, g = tape.value_and_gradient(y)
    assert v == ref.value(y) and g is not tape.gradient(y)  # a new array per call
    with pytest.raises(GuardFailure):
        tape.gradient(-y)
    for z in (y.astype(np.float32), y.tolist(), np.repeat(y, 2)[::2]):  # (strided)
        np.testing.assert_array_equal(tape.gradient(z), 2 * y)
    with pytest.raises(ValueError, match="shape"):
        tape.gradient(np.ones(4))
    out, plain = [], tape._plain
    th = threading.Thread(target=lambda: out.append((plain(y, True), tape.gradient(y))))
    th.start()
    th.join()
    assert (out[0][0] is None) is not holds_gil and np.array_equal(out[0][1], 2 * y)
    again = pickle.loads(pickle.dumps(tape))
    assert again._plain is None and again.value(y) == v and "gradient" not in again.__dict__
    bound = jittape.Tape.gradient.__get__(tape)  # the class's method: the same answers
    np.testing.assert_array_equal(bound(y), 2 * y)
    assert tape.value_and_gradient(y, _val=None)[0] == v


def _det3(x):  # scalar code without a guard: its kernel reads no work buffer
    return (x[0] * (x[4] * x[8] - x[5] * x[7]) - x[1] * (x[3] * x[8] - x[5] * x[6])
            + x[2] * (x[3] * x[7] - x[4] * x[6]))


def test_a_kernel_reading_no_buffer_takes_its_input_and_gradient_only():
    """cmpad det's kind of kernel: ``tape_kernel(xin, gx)``, called one vector at a time,
    batched, and with inputs the one-vector call refuses (the kernel itself refuses a wrong
    size or stride: jittape.compiler.frame.input_check). The gradient of det(A) is its
    cofactor matrix, det(A) A^-T."""
    from jittape.compiler.kernel import kernel_source
    rng = np.random.default_rng(5)
    x = rng.normal(size=9)
    tape = jittape.record(_det3, x).compile()
    assert kernel_source(tape).startswith("def tape_kernel(xin, gx):")
    assert tape._kernel[0].py_func.__code__.co_argcount == 2
    for y in (x, rng.normal(size=9), rng.normal(size=9)):
        A = y.reshape(3, 3)
        v, g = tape.value_and_gradient(y)
        assert v == pytest.approx(np.linalg.det(A), rel=1e-12, abs=1e-14)
        np.testing.assert_allclose(g, (np.linalg.det(A) * np.linalg.inv(A).T).ravel(),
                                   rtol=1e-10, atol=1e-12)
    assert tape._plain is not None
    want = tape.gradient(y)
    assert tape.gradient(y) is not tape.gradient(y)
    for z in (np.repeat(y, 2)[::2], y.tolist()):  # strided (the kernel refuses it); a list
        np.testing.assert_array_equal(tape.gradient(z), want)
    for bad in (np.ones(10), np.ones(8), np.ones((9, 2)), y.reshape(3, 3)):
        with pytest.raises(ValueError, match="shape"):
            tape.gradient(bad)
    values, grads = tape.value_and_gradient(np.stack([y, 2 * y]), batch=True)
    np.testing.assert_allclose(values, [tape.value(y), 8 * tape.value(y)], rtol=1e-13)
    np.testing.assert_allclose(grads[1], 4 * want, rtol=1e-13)
    nan = y.copy()
    nan[0] = np.nan
    assert np.isnan(tape.value(nan))  # the function's nan: no guard failure
    grad = jittape.record(_det3, x).compile().gradient  # the tape's own method, kept alone
    gc.collect()
    np.testing.assert_array_equal(grad(y.tolist()), want)  # (the class's method: the tape)


def test_taped_compiles_once_replays_have_cost_more_than_compiling(compiles):
    tf = jittape.taped(rosen)
    x = np.linspace(-1, 1, 30)
    tf.grad(x)  # records
    tf.grad(x)  # replays through the interpreter (not counted: may compile sweeps)
    tf.grad(x)  # replays, and compiles (estimate 0 s)
    tiers.wait_compiled()  # in the background
    tf.grad(x)
    assert tf.stats.compilations == 1
    np.testing.assert_allclose(tf.grad(x * 0.5), jittape.grad(rosen)(x * 0.5), rtol=1e-12)
    assert tf.stats.compilations == 1
    never = jittape.taped(rosen, compile=False)
    for _ in range(3):
        never.grad(x)
    assert never.stats.compilations == 0


def test_the_compile_estimate_counts_statements_of_the_rerolled_kernel(tmp_path, monkeypatch):
    from jittape.compiler import kernel
    from jittape.demo import lj_energy_loops
    monkeypatch.setenv("JITTAPE_CACHE_DIR", str(tmp_path))  # nothing compiled before
    tape = jittape.record(lj_energy_loops, np.arange(114.0) * 0.9)
    assert tape.n_records > 12000 and kernel.kernel_statements(tape) < 400
    assert kernel.MIN_COMPILE_SECONDS < kernel.compile_seconds(tape) < 4.0
    assert kernel.compile_seconds(jittape.record(lambda x: x * 1.0, np.ones(3))) == np.inf
    # a tape of its own: a kernel module another test imported already is on another cache
    small = jittape.record(lambda x: np.sum(np.sqrt(x) * x[1:4].sum()), np.ones(7))
    small.compile()
    assert kernel.compile_seconds(small) == kernel.CACHED_SECONDS


def test_the_compile_estimate_counts_loops(tmp_path, monkeypatch):
    # each fused loop costs LLVM far more than its statements (cmpad's ode: 230 s for 154
    # loops, which a 2 ms-per-statement estimate put at 4 s)
    from jittape.compiler import kernel
    monkeypatch.setenv("JITTAPE_CACHE_DIR", str(tmp_path))

    def steps(x):
        y = np.zeros_like(x)
        for _ in range(10):  # each concatenate splits the fused loops
            y = 0.5 * y + np.concatenate([x[:1], x[1:] * y[:-1]])
        return y[-1]
    tape = jittape.record(steps, np.linspace(0.1, 1.0, 50))
    plain = kernel.MIN_COMPILE_SECONDS + 0.002 * kernel.kernel_statements(tape)
    assert kernel.compile_seconds(tape) >= plain + 20 * kernel.LOOP_SECONDS


# --- the auto-compile policy: a tape compiles itself once hot (jittape.api.fastpath) ----------
REAL_END_TRIAL = jittape.api.fastpath.FastReplay._end_trial


@pytest.fixture
def compiles(monkeypatch):
    """Every call of compile_tape, in a list; compiling is due at the second replay."""
    import jittape.compiler.kernel as C
    import jittape.api.fastpath as F
    calls, real = [], C.compile_tape

    def counting(tape):
        calls.append(tape)
        return real(tape)
    monkeypatch.setattr(C, "compile_tape", counting)
    monkeypatch.setattr(F, "compile_seconds", lambda tape: 0.0)
    monkeypatch.setattr(F, "CACHED_SECONDS", -1.0)
    monkeypatch.setattr(F, "EARLY_SECONDS", -1.0)
    monkeypatch.setattr(F, "TRIAL", 1)  # hot at the second replay, a kernel tried once
    monkeypatch.setattr(F.FastReplay, "_end_trial",  # and kept (timing is not tested here)
                        lambda tape, trial: setattr(tape, "_trial", None))
    return calls


@pytest.mark.parametrize("background", [True, False])
def test_a_hot_recorded_tape_compiles_itself_and_agrees(compiles, monkeypatch, background):
    monkeypatch.setattr(tiers, "_enabled", [background])
    x = np.linspace(-1, 1, 30)
    tape = jittape.record(rosen, x)
    interp = jittape.record(rosen, x)
    interp.auto_compile = False
    tape.gradient(x)  # interpreted, not counted (the first replay may compile sweeps)
    tape.gradient(x)  # interpreted; past the (zero) estimate: compiles
    tiers.wait_compiled()
    assert tape.compiled and not interp.compiled and len(compiles) == 1
    for y in (0.5 * x, x + 0.1):
        v, g = tape.value_and_gradient(y)
        vi, gi = interp.value_and_gradient(y)
        np.testing.assert_allclose(g, gi, rtol=1e-13)
        assert v == pytest.approx(vi, rel=1e-13) and tape.value(y) == pytest.approx(v)
    assert len(compiles) == 1


@pytest.mark.parametrize("interpreter_time, kept", [(1e-12, False), (np.inf, True)])
def test_a_tape_keeps_the_faster_tier(compiles, monkeypatch, interpreter_time, kept):
    from jittape.api.fastpath import TRIAL, FastReplay
    monkeypatch.setattr(FastReplay, "_end_trial", REAL_END_TRIAL)
    x = np.linspace(-1, 1, 30)
    tape = jittape.record(rosen, x)
    tape.gradient(x)
    tape.gradient(x)
    tiers.wait_compiled()
    assert tape.compiled
    tape._best = (interpreter_time, interpreter_time)  # as if it had replayed that fast
    for k in range(TRIAL + 2):
        y = x + 0.01 * k
        np.testing.assert_allclose(tape.gradient(y), jittape.grad(rosen)(y), rtol=1e-12)
        assert tape.value(y) == pytest.approx(rosen(y), rel=1e-13)
    tiers.wait_compiled()
    assert tape.compiled is kept and (tape.lost_trial is None) is kept
    assert len(compiles) == 1  # decided once
    forced = jittape.record(rosen, x).compile()  # asked for: no trial
    forced._best = (1e-12, 1e-12)
    for _ in range(TRIAL + 1):
        forced.gradient(x)
    assert forced.compiled


def test_a_tape_the_compiler_refuses_is_tried_once(compiles, monkeypatch):
    import jittape.compiler.kernel as C

    def refuse(tape):
        compiles.append(tape)
        raise ValueError("too many statements")
    monkeypatch.setattr(C, "compile_tape", refuse)
    x = np.linspace(-1, 1, 30)
    tape = jittape.record(rosen, x)
    tf = jittape.taped(rosen)
    for _ in range(4):
        g = tape.gradient(x)
        tf.grad(x)
        tiers.wait_compiled()
    assert len(compiles) == 2 and not tape.compiled and tf.stats.compilations == 0
    np.testing.assert_allclose(g, jittape.grad(rosen)(x), rtol=1e-13)
    with pytest.raises(ValueError, match="too many"):
        tape.compile()  # an explicit compile still tries, and says why it cannot
    fresh = jittape.record(rosen, x)
    with pytest.raises(ValueError):
        fresh.compile()  # refused when asked: not tried again when hot
    fresh.gradient(x)
    tiers.wait_compiled()
    assert len(compiles) == 4


def test_compile_false_and_auto_compile_false_never_compile(compiles):
    x = np.linspace(-1, 1, 30)
    tf = jittape.taped(rosen, compile=False)
    tape = jittape.record(rosen, x)
    tape.auto_compile = False
    for _ in range(4):
        tf.grad(x)
        tf.value_and_grad(x)
        tape.gradient(x)
        tiers.wait_compiled()
    assert compiles == [] and tf.stats.compilations == 0 and not tape.compiled
    assert not tf._entries[0].tape.compiled


def test_an_unpickled_compiled_tape_compiles_again_when_hot(compiles):
    import pickle
    x = np.linspace(-1, 1, 30)
    tape = pickle.loads(pickle.dumps(jittape.record(rosen, x).compile()))
    assert not tape.compiled and tape.auto_compile
    tape.gradient(x)
    tape.gradient(x)
    tiers.wait_compiled()
    assert tape.compiled and len(compiles) == 2


def test_a_kernel_whose_compile_process_failed_stays_interpreted_with_a_notice(
        compiles, monkeypatch, capfd):
    from concurrent.futures import Future
    from jittape.sweeps import compile_process, disk_cache

    def failing(job, low=False):
        out = Future()
        out.set_exception(compile_process.CompileProcessError("planted"))
        return out
    monkeypatch.setattr(compile_process, "submit", failing)
    monkeypatch.setattr(compile_process, "cores", lambda: 2)
    monkeypatch.setattr(tiers, "_enabled", [True])
    monkeypatch.setattr(disk_cache, "_quiet", [False])
    monkeypatch.setattr(disk_cache, "compiled_once", lambda module, what: False)  # cold
    monkeypatch.setattr(disk_cache, "compiling_elsewhere", lambda path, what: None)
    x = np.linspace(-1, 1, 30)
    tape = jittape.record(rosen, x)
    for k in range(4):
        np.testing.assert_allclose(tape.gradient(x + k), jittape.grad(rosen)(x + k), rtol=1e-12)
    assert not tape.compiled and len(compiles) == 1
    assert "failed in the compile process (planted); it stays interpreted" in \
        capfd.readouterr().err


def test_a_tape_hot_in_several_threads_at_once_tiers_up_once(compiles, monkeypatch):
    import threading
    import time
    import jittape.api.fastpath as F

    def slow_hot(tape):  # every thread finds the tape hot before any of them claims it
        time.sleep(0.05)
        return True
    monkeypatch.setattr(F.FastReplay, "_hot", slow_hot)
    x = np.linspace(-1, 1, 30)
    tape = jittape.record(rosen, x)
    tape.gradient(x)  # the uncounted first replay
    start = threading.Barrier(8)

    def replay():
        start.wait()
        for _ in range(3):
            tape.gradient(x)
    threads = [threading.Thread(target=replay) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    tiers.wait_compiled()
    assert len(compiles) == 1 and tape.compiled
    np.testing.assert_allclose(tape.gradient(x), jittape.grad(rosen)(x), rtol=1e-12)


def test_the_bound_kernel_path_raises_guards_and_takes_any_layout():
    """``value_and_gradient``/``gradient`` of one float64 array call the kernel bound in the
    thread directly once its trial is over: a failed guard still raises GuardFailure naming
    its record, and 2-D or strided arrays still give NumPy-shaped gradients."""
    def f(x):
        return np.sum(np.sin(x) * x) if x.ravel()[0] > 0 else np.sum(x)
    x = np.linspace(0.2, 1.4, 6)
    t = jittape.record(f, x).compile()
    for _ in range(20):  # past the kernel's timed trial
        v, g = t.value_and_gradient(x)
    assert t._trial is None and t.compiled
    np.testing.assert_allclose(g, np.sin(x) + x * np.cos(x), rtol=1e-14)
    with pytest.raises(GuardFailure) as e:
        t.value_and_gradient(-x)
    assert e.value.record == int(np.flatnonzero(t.arrays.op == jittape.ops.codes.GUARD)[0])
    with pytest.raises(GuardFailure):
        t.gradient(-x)
    wide = np.linspace(0.2, 2.6, 12)[::2]  # a strided view: copied for the kernel
    np.testing.assert_allclose(t.gradient(wide), np.sin(wide) + wide * np.cos(wide),
                               rtol=1e-14)
    m = jittape.record(f, x.reshape(2, 3)).compile()
    for _ in range(20):
        g2 = m.gradient(x.reshape(2, 3))
    assert g2.shape == (2, 3)
    np.testing.assert_allclose(g2.ravel(), g, rtol=1e-14)


def test_a_size_one_view_of_a_size_one_record_compiles():
    """Regression (found by the fuzzer once tapes tier up at their second replay): the median
    of one element is a slice of a slice of its sort, both of size 1; the kernel read the
    inner one from a buffer slot it does not have (KeyError while generating)."""
    def f(x):
        return np.sum(np.sin(np.median(np.sin(x), axis=None)))
    for x in (np.array([0.55]), np.array([0.3, 0.9, 0.1])):
        compiled = jittape.record(f, x).compile()
        np.testing.assert_allclose(compiled.gradient(1.1 * x), jittape.grad(f)(1.1 * x),
                                   rtol=1e-13)


def test_a_broadcast_scalar_fused_into_a_loop_compiles():
    """Regression (found by nesting, whose recorded adjoints broadcast scalar seeds): a
    strided view (np.broadcast_to) of a scalar record inside a fused loop read the scalar
    from a buffer slot it does not have (KeyError while generating), so the tape stayed
    interpreted."""
    def f(x):
        b = np.broadcast_to(x[0] * x[1], (5,))
        return np.sum(np.sin(b * x[2:7]) + b ** 2)
    x = np.linspace(0.1, 0.9, 7)
    compiled = jittape.record(f, x).compile()
    for y in (x, 1.1 * x):
        v, g = compiled.value_and_gradient(y)
        assert v == pytest.approx(f(y), rel=1e-13)
        np.testing.assert_allclose(g, jittape.grad(f)(y), rtol=1e-13)


def _moves(x, s):
    """Concatenations of every block layout: a row of two parts (cmpad ode's
    ``concatenate([x[:1], x[1:] * y[:-1]])``), rows side by side with a constant part,
    a stack of scalars, a stack of columns, and one of more parts than MAX_BLOCKS."""
    a = np.concatenate([x[:1], x[1:] * x[:-1]])
    m = x[:6].reshape(2, 3)
    b = np.concatenate([m, np.ones((2, 2)), np.sin(m)], axis=1)
    c = np.stack([s * x[0], x[1] + s, x[2]])
    d = np.stack([x[:4], np.cos(x[:4])], axis=1)
    e = np.concatenate([x[i:i + 1] * (i + 1) for i in range(9)])
    return np.sum(a * a[::-1]) + np.sum(b ** 2 * np.arange(16).reshape(2, 8)) + np.prod(c) \
        + np.sum(d[:, 0] * d[:, 1] + d[:, 1]) + np.sum(np.tanh(e))


def test_concatenations_compile_to_literal_copies_bit_identical(monkeypatch):
    """A record that only moves elements (``copies`` in its entry) compiles to loops of
    literal bounds, its reverse their transpose: the same values and gradients as the
    kernel that calls the op's kernel instead (bit for bit: the same additions in the same
    order), the gradient the finite differences'; a concatenation of more than MAX_BLOCKS
    parts keeps the op's kernel."""
    from jittape.compiler import copies
    x, s = np.linspace(0.2, 1.1, 9), 0.7
    tape = jittape.record(_moves, x, s, argnums=(0, 1))
    src = kernel_source(tape)
    assert src.count("concat_forward(") == 1 and src.count("concat_reverse(") == 1
    assert copies.MAX_BLOCKS < 9 and "for r in range(2):" in src
    tape.compile()
    monkeypatch.setattr(copies, "MAX_BLOCKS", 0)
    calls = jittape.record(_moves, x, s, argnums=(0, 1))
    assert kernel_source(calls).count("concat_forward(") == 5
    calls.compile()
    for y, t in ((x, s), (x[::-1] * 1.3, -0.4)):
        v, (gx, gs) = tape.value_and_gradient(y, t)
        rv, (rgx, rgs) = calls.value_and_gradient(y, t)
        assert v == rv and gs == rgs and np.array_equal(gx, rgx)
        assert v == pytest.approx(_moves(y, t), rel=1e-14)
    check_gradient(_moves, lambda y, t: tape.gradient(y, t), (x, s), argnums=(0, 1))


def _polyfit_loss(x):
    """cmpad llsq's kind: a model built coefficient by coefficient over 50 points (scalar
    loads of x between array records), then the squared residual."""
    t = np.linspace(-1.0, 1.0, 50)
    ti, model = t ** 0, x[0] * t ** 0
    for i in range(1, x.size):
        ti = ti * t
        model = model + x[i] * ti
    r = model - np.sign(t)
    return 0.5 * np.sum(r * r)


def test_a_long_chain_fuses_into_one_loop_and_its_end_is_stored(monkeypatch):
    """Scalar loads of the inputs and constant arrays do not split a fused loop, and the
    reverse loop loads a member whose recomputation would recompute more than
    RECOMPUTE_CONE members (the residual) instead: the same values and gradients, bit for
    bit, as the kernel recomputing it; the gradient V^T (V x - q) in closed form."""
    from jittape.compiler import fusion
    x = np.linspace(-0.5, 0.7, 9)
    tape = jittape.record(_polyfit_loss, x)
    src = kernel_source(tape)
    assert src.count("for j in range(50):") == 2  # one forward, one reverse loop
    tape.compile()
    monkeypatch.setattr(fusion, "RECOMPUTE_CONE", 10 ** 6)
    again = jittape.record(_polyfit_loss, x)
    assert kernel_source(again) != src and kernel_source(again).count("for j in") == 2
    again.compile()
    t = np.linspace(-1.0, 1.0, 50)
    V = np.vander(t, 9, increasing=True)
    for y in (x, x[::-1] * 1.7):
        v, g = tape.value_and_gradient(y)
        rv, rg = again.value_and_gradient(y)
        assert v == rv and np.array_equal(g, rg)
        assert v == pytest.approx(_polyfit_loss(y), rel=1e-13)
        np.testing.assert_allclose(g, V.T @ (V @ y - np.sign(t)), rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("where", ["estimate", "compile"])
def test_a_tape_whose_compile_raises_stays_interpreted_with_a_notice(monkeypatch, capfd, where):
    import jittape.api.fastpath as F
    import jittape.compiler.kernel as C
    from jittape.sweeps import disk_cache

    def broken(tape):
        raise RuntimeError("planted")
    monkeypatch.setattr(disk_cache, "_quiet", [False])
    monkeypatch.setattr(F, "CACHED_SECONDS", -1.0)
    monkeypatch.setattr(F, "EARLY_SECONDS", -1.0)
    if where == "estimate":
        monkeypatch.setattr(F, "compile_seconds", broken)
    else:
        monkeypatch.setattr(F, "compile_seconds", lambda tape: 0.0)
        monkeypatch.setattr(C, "compile_tape", broken)
    x = np.linspace(-1, 1, 30)
    tape = jittape.record(rosen, x)
    for k in range(4):
        np.testing.assert_allclose(tape.gradient(x + k), jittape.grad(rosen)(x + k), rtol=1e-12)
    tiers.wait_compiled()
    assert not tape.compiled
    assert "(RuntimeError: planted); it stays interpreted" in capfd.readouterr().err


def test_linalg_kernels_are_shared_not_copied(tmp_path, monkeypatch):
    """The kernels of the ops that call LAPACK come from one cached module
    (jittape.compiler.shared), called with int64 offsets: one machine code for every call
    site of every kernel; a kernel module generated for other helpers (another jittape
    version) is refused. Other structured ops keep their own copies."""
    import sys
    from jittape.compiler import shared
    monkeypatch.setenv("JITTAPE_CACHE_DIR", str(tmp_path))  # kernels compiled, not loaded
    fs = [lambda x: np.sum(np.linalg.eigh(x.reshape(3, 3) + x.reshape(3, 3).T)[0] ** 3),
          lambda x: np.sin(x[0]) * np.sum(np.linalg.eigh(x.reshape(3, 3) @ x.reshape(3, 3).T)[0])]
    x = np.linspace(0.1, 0.9, 9)
    tapes = [jittape.record(f, x).compile() for f in fs]
    eigh = [op for op in OPS if op.name == "eigh"][0]
    assert shared.calls_lapack(eigh) and not shared.calls_lapack(
        [op for op in OPS if op.name == "matmul"][0])
    ma, mb = (sys.modules[t._kernel[0].py_func.__module__] for t in tapes)
    name = eigh.forward.__name__
    assert ma is not mb and getattr(ma, name) is getattr(mb, name)
    assert len(getattr(ma, name).signatures) == 1
    assert "int64(" in kernel_source(tapes[0]) and "def matmul_forward" in open(mb.__file__).read()
    assert f"def {name}" not in open(ma.__file__).read()
    for t, f in zip(tapes, fs):
        check_gradient(f, t.gradient, (np.linspace(-0.3, 0.4, 9),))
    with pytest.raises(ImportError, match="compile its tape again"):
        shared.helpers("0" * 20, name)

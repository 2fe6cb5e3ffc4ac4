"""Tiered sweeps (jittape.sweeps.tiers): a small tape runs interpreted while its Numba sweep
compiles
in the background; a large tape, or an interpreted run that raises, waits for the machine
code. Every op's interpreted sweeps are checked against the compiled ones in test_ops.py."""

import os
import subprocess
import sys
import threading
import time
from concurrent.futures import Future

import numpy as np
import pytest

import jittape
from jittape.sweeps import compile_process, disk_cache, numpy_tier, opsets, tiers


@pytest.fixture
def fresh(monkeypatch):
    """A Sweeps object whose machine code counts as not ready (in this process or in the
    cache), and a gate that holds its compile in the compile process until the test opens
    it."""
    gate = threading.Event()
    real_submit = compile_process.submit

    def held(job, low=False):
        out = Future()

        def relay():
            gate.wait()
            done = real_submit(job)
            error = done.exception()
            out.set_exception(error) if error else out.set_result(done.result())
        threading.Thread(target=relay, daemon=True).start()
        return out
    monkeypatch.setattr(compile_process, "submit", held)
    monkeypatch.setattr(opsets.Sweeps, "_ready", lambda self, what: False)
    monkeypatch.setattr(disk_cache, "compiling_elsewhere", lambda path, what: None)  # (the
    # other test process may be compiling the same module: the gate must hold this one)
    monkeypatch.setattr(tiers, "_enabled", [True])
    monkeypatch.setattr(compile_process, "cores", lambda: 2)

    def make(tape):
        t = tape.arrays
        s = opsets.Sweeps(opsets.with_leaves(t.op.tolist()))
        t.sweeps = s
        return s
    yield make, gate
    gate.set()
    tiers.wait_compiled()


def test_small_tape_runs_interpreted_until_the_machine_code_is_ready(fresh):
    make, gate = fresh
    f = lambda x: np.sum(np.sin(x) * np.exp(-x))  # noqa: E731
    x = np.linspace(0.1, 1.0, 7)
    tape = jittape.record(f, x)
    want = jittape.record(f, x).value_and_gradient(x + 0.2)
    s = make(tape)
    v, g = tape.value_and_gradient(x + 0.2)  # the compile is held: this ran interpreted
    assert not s._jobs["reverse_sweep"].done()
    assert type(s.reverse_sweep).__name__ == "function"
    np.testing.assert_allclose(v, want[0], rtol=1e-14)
    np.testing.assert_allclose(g, want[1], rtol=1e-13)
    gate.set()
    tiers.wait_compiled()
    assert hasattr(s.reverse_sweep, "signatures")  # now the Numba dispatcher
    np.testing.assert_allclose(tape.value_and_gradient(x + 0.2)[1], want[1], rtol=1e-13)


def test_large_tape_waits_for_the_machine_code(fresh, monkeypatch):
    make, gate = fresh
    monkeypatch.setattr(tiers, "SMALL_VALUES", 5)
    monkeypatch.setattr(numpy_tier, "MAX_RECORDS", 0)  # (too many records for NumPy's tier)
    ran = []
    monkeypatch.setattr(tiers, "run", lambda *a: ran.append(a))
    x = np.linspace(0.1, 1.0, 7)
    tape = jittape.record(lambda x: np.sum(np.tanh(x)), x)
    make(tape)
    gate.set()
    np.testing.assert_allclose(tape.gradient(x), 1 - np.tanh(x) ** 2, rtol=1e-13)
    assert ran == []


def _array_program(x):
    return np.sum(np.tanh(x) * x[::-1]) + np.max(x[[0, 2, 2]]) + np.sum(x[:3] @ x[3:6])


@pytest.mark.parametrize("raises", [False, True])
def test_a_large_tape_runs_its_reverse_sweep_in_numpy_until_compiled(fresh, monkeypatch,
                                                                      raises):
    """Too many values for the interpreted tier: the reverse sweep runs the op table's NumPy
    rules (jittape.sweeps.numpy_tier) while it compiles; one that raises is undone, and the
    call waits for the machine code."""
    make, gate = fresh
    monkeypatch.setattr(tiers, "SMALL_VALUES", 5)
    ran = []
    real = numpy_tier.reverse_sweep

    def spy(*args):
        ran.append(args[-3].copy())
        if raises:
            args[-3][:] = 7.0
            threading.Timer(0.2, gate.set).start()
            raise numpy_tier.Unsupported("scatter-add too wide")
        return real(*args)
    monkeypatch.setattr(numpy_tier, "reverse_sweep", spy)
    x = np.linspace(0.1, 1.0, 7)
    y = x + 0.2
    hand = (1 - np.tanh(y) ** 2) * y[::-1] + np.tanh(y)[::-1] + np.r_[y[3:6], y[:3], 0.0]
    hand[2] += 1.0  # the max of (y0, y2, y2): the two y2 share it
    want = _array_program(y), hand
    tape = jittape.record(_array_program, x)
    s = make(tape)
    v, g = tape.value_and_gradient(x + 0.2)
    assert len(ran) == 1 and s._jobs["reverse_sweep"].done() == raises
    np.testing.assert_allclose(v, want[0], rtol=1e-14)
    np.testing.assert_allclose(g, want[1], rtol=1e-13)
    gate.set()
    s._jobs["reverse_sweep"].result()  # (prefetched by the forward sweep: nothing to load)
    np.testing.assert_allclose(tape.value_and_gradient(x + 0.2)[1], want[1], rtol=1e-13)
    assert len(ran) == 1  # the machine code ran


def test_a_taped_function_records_again_while_its_forward_sweep_compiles(fresh, monkeypatch):
    """A large tape's replay would wait for its cold forward sweep: ``taped`` answers by
    recording again (eager: no forward sweep) until the compile process is done."""
    make, gate = fresh
    monkeypatch.setattr(tiers, "SMALL_VALUES", 5)
    x = np.linspace(0.1, 1.0, 7)
    tf = jittape.taped(_array_program, compile=False)
    tf.value_and_grad(x)
    s = make(tf._entries[0].tape)
    for k in (1, 2):
        v, g = tf.value_and_grad(x + 0.1 * k)
        np.testing.assert_allclose(g, jittape.grad(_array_program)(x + 0.1 * k), rtol=1e-13)
        assert tf.stats.recorded_while_compiling == k and tf.stats.replays == 0
    assert not s._jobs["forward_sweep"].done()
    gate.set()
    s._jobs["forward_sweep"].result()
    v, g = tf.value_and_grad(x + 0.3)
    np.testing.assert_allclose(g, jittape.grad(_array_program)(x + 0.3), rtol=1e-13)
    assert tf.stats.recorded_while_compiling == 2 and tf.stats.replays == 1
    assert tf.stats.recordings == 1


def test_interpreted_run_that_raises_is_undone_and_repeated_compiled(fresh):
    """CPython's math.exp overflows where Numba's gives inf: the replay still gives NumPy's
    inf (after waiting for the compile), and nothing of the failed run is left behind."""
    make, gate = fresh
    f = lambda x: np.sum(np.exp(x) + x)  # noqa: E731
    tape = jittape.record(f, np.array([1.0, 2.0]))
    make(tape)
    threading.Timer(0.2, gate.set).start()
    with np.errstate(over="ignore"):
        v, g = tape.value_and_gradient(np.array([1000.0, 2.0]))
    assert v == np.inf and g[0] == np.inf and g[1] == pytest.approx(np.exp(2.0) + 1.0)


def test_switches_off(monkeypatch):
    monkeypatch.setattr(tiers, "_enabled", [None])
    monkeypatch.setenv("JITTAPE_BACKGROUND", "0")
    assert not tiers.enabled()
    monkeypatch.setenv("JITTAPE_BACKGROUND", "1")
    assert tiers.enabled()
    with tiers.foreground():
        assert not tiers.enabled()
    jittape.set_background(False)
    assert not tiers.enabled()


COLD = """
import time, numpy as np, jittape
from jittape.sweeps import tiers
f = lambda x: np.sum(np.arctan(x) * np.cosh(x)) / x.size
x = np.linspace(-1.0, 1.0, 6)
g = jittape.grad(f)(x)
pending = len(tiers._pending)
assert np.allclose(g, (np.cosh(x) / (1 + x * x) + np.arctan(x) * np.sinh(x)) / 6, rtol=1e-13)
jittape.wait_compiled()
print(pending, len(tiers._pending))
"""


def test_cold_process_answers_before_its_compile_finishes(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "nb"),
               JITTAPE_CACHE_DIR=str(tmp_path / "jt"), JITTAPE_QUIET="1")
    env.pop("JITTAPE_BACKGROUND", None)
    p = subprocess.run([sys.executable, "-c", COLD], env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["1", "0"]  # a compile under way at the first gradient
    assert list((tmp_path / "jt").glob("*.reverse_sweep.ok"))  # and finished, cached


# --- the compile process (jittape.sweeps.compile_process) ----------------------------------
def _generated(tmp_path, source):
    """A module file named as disk_cache names generated ones (the hash of its source)."""
    path = tmp_path / f"jittape_sweeps_{disk_cache.digest(source)}.py"
    path.write_text(source)
    return path


def test_a_job_that_raises_in_the_compile_process_is_reported(tmp_path):
    tiers.wait_compiled()
    bad = _generated(tmp_path, "raise ImportError('planted failure')\n")
    job = compile_process.submit({"kind": "sweep", "path": str(bad), "what": "reverse_sweep"})
    with pytest.raises(compile_process.CompileProcessError, match="planted failure"):
        job.result(timeout=120)
    odd = compile_process.submit({"kind": "nonsense", "path": str(bad)})
    with pytest.raises(compile_process.CompileProcessError, match="nonsense"):
        odd.result(timeout=120)


def test_the_compile_process_runs_no_file_whose_name_is_not_the_hash_of_its_source(tmp_path):
    tiers.wait_compiled()
    good = _generated(tmp_path, "raise ImportError('was run')\n")
    planted = good.with_name(good.name.replace("jittape_sweeps_", "jittape_sweeps_0"))
    good.rename(planted)  # as if another process had edited or planted it
    job = compile_process.submit({"kind": "sweep", "path": str(planted), "what": "reverse_sweep"})
    with pytest.raises(compile_process.CompileProcessError, match="not a module jittape gen"):
        job.result(timeout=120)


def test_a_compile_process_that_dies_fails_its_jobs_and_the_next_job_starts_another(tmp_path):
    import signal
    import time
    tiers.wait_compiled()
    slow = _generated(tmp_path, "import time\ntime.sleep(120)\n")
    job = compile_process.submit({"kind": "sweep", "path": str(slow), "what": "reverse_sweep"})
    pid = compile_process.pid()
    time.sleep(0.5)
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(compile_process.CompileProcessError, match="died"):
        job.result(timeout=120)
    bad = _generated(tmp_path, "raise ImportError('second worker')\n")
    again = compile_process.submit({"kind": "sweep", "path": str(bad), "what": "reverse_sweep"})
    with pytest.raises(compile_process.CompileProcessError, match="second worker"):
        again.result(timeout=120)
    assert compile_process.pid() not in (None, pid)


def test_a_sweep_whose_compile_process_failed_compiles_here_with_a_notice(fresh, monkeypatch,
                                                                         capfd):
    make, gate = fresh

    def failing(job, low=False):
        out = Future()
        out.set_exception(compile_process.CompileProcessError("planted"))
        return out
    monkeypatch.setattr(compile_process, "submit", failing)
    monkeypatch.setattr(disk_cache, "_quiet", [False])
    f = lambda x: np.sum(np.cos(x) * x)  # noqa: E731
    x = np.linspace(0.1, 1.0, 7)
    tape = jittape.record(f, x)
    s = make(tape)
    np.testing.assert_allclose(tape.gradient(x), np.cos(x) - x * np.sin(x), rtol=1e-13)
    assert hasattr(s.reverse_sweep, "signatures")  # compiled (loaded) here, after the failure
    assert "the compile process failed on the reverse sweep (planted)" in capfd.readouterr().err
    np.testing.assert_allclose(tape.gradient(x + 1), np.cos(x + 1) - (x + 1) * np.sin(x + 1),
                               rtol=1e-13)


def test_one_core_and_an_unwritable_cache_compile_in_the_foreground(monkeypatch):
    monkeypatch.setattr(tiers, "_enabled", [True])
    monkeypatch.setattr(compile_process, "cores", lambda: 2)
    assert tiers.in_process()
    monkeypatch.setattr(compile_process, "cores", lambda: 1)
    assert not tiers.in_process()
    monkeypatch.setattr(compile_process, "cores", lambda: 2)
    monkeypatch.setattr(disk_cache, "_memory_only", [True])
    assert not tiers.in_process()


def test_a_compile_another_process_is_doing_is_waited_for_not_repeated(tmp_path, monkeypatch):
    """A .busy file naming a live process (here this one) makes tiers.submit watch for that
    compile's marker instead of sending the job again."""
    sent = []
    monkeypatch.setattr(compile_process, "submit", lambda job, low=False: sent.append(job))
    path = tmp_path / "jittape_sweeps_x.py"
    disk_cache.busy_file(path, "reverse_sweep").write_text(str(os.getpid()))
    loaded = []
    future = tiers.submit({"kind": "sweep", "path": str(path), "what": "reverse_sweep"},
                          lambda: loaded.append(True), "a sweep")
    assert not future.done()
    threading.Timer(0.2, disk_cache.ok_file(path, "reverse_sweep").write_text, ["1.0\n"]).start()
    assert future.result(timeout=30) is None and sent == []
    tiers.wait_compiled()
    assert loaded == [True]


# --- BLAS-sized products: the interpreted tier's BLAS twins give the compiled kernels' bits
_RNG = np.random.default_rng(3)
_A, _B, _V = _RNG.standard_normal((20, 30)), _RNG.standard_normal((30, 25)), \
    _RNG.standard_normal(30)


@pytest.mark.parametrize("f, x0", [
    (lambda x: np.sum(np.sin(x.reshape(20, 30) @ _B)), _A.ravel()),  # gemm, both adjoints
    (lambda x: np.sum(np.sin(_A @ x.reshape(30, 25))), _B.ravel()),
    (lambda x: np.sum(np.sin(x[:600].reshape(20, 30) @ x[600:].reshape(30, 25))),
     np.concatenate([_A.ravel(), _B.ravel()])),
    (lambda x: np.sum(np.sin(x.reshape(20, 30) @ _V)) + np.sum(np.cos(_V @ x.reshape(20, 30).T)),
     _A.ravel()),  # gemv both ways
    (lambda x: np.sum(np.sin(x.reshape(2, 20, 30) @ np.stack([_B, _B]))),
     np.concatenate([_A.ravel(), _A.ravel()])),  # a batch of products
], ids=["x@B", "A@x", "x@y", "gemv", "batched"])
def test_blas_products_are_bit_identical_between_tiers(f, x0, monkeypatch):
    """matmul's kernels call BLAS by symbol (jittape.optable.externals.BLAS); the interpreted
    tier runs NumPy twins of those calls. Forward, reverse, tangent and HVP sweeps of both
    tiers agree to the bit."""
    monkeypatch.setattr(tiers, "_enabled", [False])  # the compiled sweeps: the foreground
    tape = jittape.record(f, x0)
    t = tape.arrays
    codes = opsets.with_leaves(set(t.op.tolist()))
    compiled = opsets.for_codes(codes)
    lo, hi = t.off[t.inputs[0]], t.off[t.inputs[0] + 1]
    results = []
    for get in (lambda what: tiers.interpreted(codes, what),
                lambda what: getattr(compiled, what)):
        val = t.val.copy()
        val[lo:hi] = x0 * 1.3
        get("forward_sweep")(*t.columns, val, 0, t.n_records)
        adj, dot = np.zeros_like(val), np.zeros_like(val)
        adj[t.off[tape.out_id]] = 1.0
        get("reverse_sweep")(*t.columns, val, adj, 0, tape.out_id + 1)
        dot[lo:hi] = np.cos(x0)
        get("tangent_sweep")(*t.columns, val, dot, 0, t.n_records)
        results.append((val, adj, dot))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_a_compile_another_process_holds_has_one_waiter_however_often_it_is_asked(tmp_path):
    # a fuzzer submitting the same short programs while another process compiled them
    # once started a polling thread per submit (1,000 threads in two minutes)
    path = tmp_path / "jittape_sweeps_0123456789abcdef0123.py"
    job = {"path": str(path), "what": "reverse_sweep"}
    disk_cache.busy_file(path, "reverse_sweep").write_text(str(os.getpid()))  # alive
    before = threading.active_count()
    futures = {id(tiers.submit(job)) for _ in range(1000)}
    assert len(futures) == 1 and threading.active_count() <= before + 1
    future = tiers.submit(job)
    disk_cache.ok_file(path, "reverse_sweep").write_text("")  # the other process is done
    assert future.result(timeout=5) is None
    deadline = time.monotonic() + 5
    while tiers._WATCHER[0] is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert tiers._WATCHER[0] is None  # nothing left to watch: the thread ended

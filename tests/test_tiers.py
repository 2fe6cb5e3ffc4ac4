"""Tiered sweeps (jittape.sweeps.tiers): a small tape runs interpreted while its Numba sweep
compiles
in the background; a large tape, or an interpreted run that raises, waits for the machine
code. Every op's interpreted sweeps are checked against the compiled ones in test_ops.py."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import jittape
from jittape.sweeps import opsets
from jittape.sweeps import tiers


@pytest.fixture
def fresh(monkeypatch):
    """A Sweeps object whose machine code counts as not ready in this process, and a gate
    that holds its background compile until the test opens it."""
    gate = threading.Event()
    real_submit = tiers.submit
    monkeypatch.setattr(tiers, "submit",
                        lambda fn, *a: real_submit(lambda: (gate.wait(), fn(*a))[1]))
    monkeypatch.setattr(opsets, "_ready_in_process", lambda codes, what: False)
    monkeypatch.setattr(tiers, "_enabled", [True])

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
    ran = []
    monkeypatch.setattr(tiers, "run", lambda *a: ran.append(a))
    x = np.linspace(0.1, 1.0, 7)
    tape = jittape.record(lambda x: np.sum(np.tanh(x)), x)
    make(tape)
    gate.set()
    np.testing.assert_allclose(tape.gradient(x), 1 - np.tanh(x) ** 2, rtol=1e-13)
    assert ran == []


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

"""Sweeps composed of pieces compiled once per machine (jittape.sweeps.composed): a runner
shared by every op set and a part per op give the generated sweeps' results to the bit, and
an op set made of ops compiled before (in another set) compiles nothing."""

import os
import subprocess
import sys

import numpy as np
import pytest

import jittape
from jittape.sweeps import composed, opsets
from jittape.sweeps.parts_runtime import Composed


def f(x):  # ops of the runner (exp, mul, sin, slice, ...) and parts (tanh, cumsum, where, max)
    a = np.outer(np.arange(1.0, 4.0), np.ones(3))
    y = np.tanh(x) * np.exp(-x) + np.where(x > 0.5, x ** 2, -np.sin(x))
    return np.sum(np.cumsum(y) * np.abs(x)) + np.max(a @ x[:3])


def _buffers(t, what, rng):
    n = t.val.shape[0]
    extra = {"forward_sweep": 0, "reverse_sweep": 1, "tangent_sweep": 1, "hvp_sweep": 3}[what]
    return [t.val.copy()] + [rng.standard_normal(n) for _ in range(extra)]


@pytest.mark.parametrize("what", opsets.FUNCTIONS)
def test_a_composed_sweep_equals_the_generated_one_to_the_bit(what):
    x = np.linspace(0.1, 1.0, 6)
    t = jittape.record(f, x).arrays
    codes = opsets.with_leaves(t.op.tolist())
    sweep = getattr(composed.namespace(codes, what), what)
    assert isinstance(sweep, Composed) and composed.piece_ops(codes, what)  # parts in use
    generated = getattr(opsets.for_tape(t), what)
    outs = []
    for fn in (sweep, generated):
        bufs = _buffers(t, what, np.random.default_rng(5))
        ret = fn(*t.columns, *bufs, 0, t.n_records)
        outs.append((ret, bufs))
    (r1, b1), (r2, b2) = outs
    assert r1 == r2
    for u, v in zip(b1, b2):
        np.testing.assert_array_equal(u, v)


PROGRAM = """
import sys, numpy as np, jittape
from jittape.sweeps import opsets
x = np.linspace(0.1, 1.0, 3000)
if sys.argv[1] == "a":
    f = lambda x: np.sum(np.cumsum(np.tanh(x) * np.exp(-x)) / (1.0 + np.abs(x))) + np.max(x)
else:  # a subset of those ops: the first set's compiled sweep serves it
    f = lambda x: np.sum(np.abs(np.cumsum(np.exp(-x)))) + np.max(np.tanh(x))
g = jittape.grad(f)(x)
h = 1e-4  # (f is about 3e3: rounding 1e-8, truncation 1e-8 of the central difference)
for k in (0, 1500, 2999):
    e = np.zeros_like(x); e[k] = h
    assert abs(g[k] - (f(x + e) - f(x - e)) / (2 * h)) < 1e-5 * (1 + abs(g[k])), (k, g[k])
t = jittape.record(f, x).arrays
print(type(opsets.for_tape(t).reverse_sweep).__name__)
"""


def test_an_op_set_inside_one_compiled_before_compiles_nothing(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "nb"),
               JITTAPE_CACHE_DIR=str(tmp_path / "jt"))
    env.pop("JITTAPE_QUIET", None)
    env.pop("JITTAPE_BACKGROUND", None)

    def run(which):  # (capture waits for the compile process: it holds the stderr pipe)
        p = subprocess.run([sys.executable, "-c", PROGRAM, which], env=env,
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr
        return p
    first = run("a")
    assert "compiling reverse sweep" in first.stderr
    assert list((tmp_path / "jt").glob("jittape_runner_*.reverse_sweep_run.ok"))
    second = run("b")  # a new op set inside the first run's: its sweep is reused
    assert "compiling" not in second.stderr, second.stderr
    assert second.stdout.split() == ["Bound"]


def test_two_op_sets_composed_in_one_process_share_the_runner():
    """The runner every composed set shares is compiled once, then its compiling disabled:
    a second set's sweep of the same kind raised 'compilation disabled' (Numba's compile of
    a disabled dispatcher raises before it looks for the signature)."""
    x = np.linspace(0.1, 1.0, 6)
    t1 = jittape.record(f, x).arrays
    t2 = jittape.record(lambda x: np.sum(np.tanh(x) * np.cumsum(x)), x).arrays
    for what in ("forward_sweep", "reverse_sweep"):
        outs = []
        for t in (t1, t2):
            codes = opsets.with_leaves(t.op.tolist())
            sweep = getattr(composed.namespace(codes, what), what)
            bufs = _buffers(t, what, np.random.default_rng(2))
            sweep(*t.columns, *bufs, 0, t.n_records)
            outs.append(bufs)
        assert all(np.isfinite(b).all() for bufs in outs for b in bufs)


PIECES = """
import sys, time, numpy as np, jittape
from jittape.sweeps import opsets
x = np.linspace(0.1, 1.0, 5)
f = {"a": lambda x: np.sum(np.tanh(x) * np.exp(x)),
     "c": lambda x: np.sum(np.arctan2(x, 2.0) * np.log(x)),
     "b": lambda x: np.sum(np.tanh(x) * np.arctan2(x, 2.0))}[sys.argv[1]]  # a's and c's ops
g = jittape.grad(f)(x)
sweeps = opsets.for_tape(jittape.record(f, x).arrays)
print(type(sweeps.reverse_sweep).__name__)
deadline = time.monotonic() + 300
while type(sweeps.reverse_sweep).__name__ == "function" and time.monotonic() < deadline:
    time.sleep(0.2)
    jittape.grad(f)(x)
print(type(sweeps.reverse_sweep).__name__)
"""


def test_a_composed_sweep_gives_way_to_its_sets_own_compiled_meanwhile(tmp_path):
    """A new op set of ops compiled in two other sets runs composed of their pieces at once,
    while its own sweep compiles in the compile process, then switches to it (composed
    sweeps of ops the runner does not inline ran 3.5-8x slower: results/composed.md)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "nb"),
               JITTAPE_CACHE_DIR=str(tmp_path / "jt"))
    env.pop("JITTAPE_QUIET", None)
    env.pop("JITTAPE_BACKGROUND", None)

    def run(which):
        p = subprocess.run([sys.executable, "-c", PIECES, which], env=env,
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr
        return p
    run("a"), run("c")
    b = run("b")
    assert all("in a background process" in ln for ln in b.stderr.splitlines()
               if "compiling" in ln), b.stderr
    assert b.stdout.split() == ["function", "CPUDispatcher"], (b.stdout, b.stderr)

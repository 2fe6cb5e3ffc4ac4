"""Sweeps split into part functions (jittape.sweeps.parts_source): the same results as one function,
a dispatch that reaches every op, small op sets unchanged."""

import numpy as np
import pytest

from jittape import demo
from jittape.sweeps import codegen
from jittape.sweeps import disk_cache
from jittape.sweeps import parts_runtime
from jittape.sweeps import parts_source
from jittape.ops import OPS
from jittape.api.tape import record
from jittape.sweeps.opsets import FUNCTIONS, with_leaves


def _f(x):  # (7 ops, 4 parts of each sweep at PART_LINES = 12: few, for a short compile)
    return np.sum(np.tanh(np.sin(x) * x)) + np.dot(x, x) + np.max(x)


def _module(ops, part_lines, monkeypatch, python=False):
    monkeypatch.setattr(codegen, "PART_LINES", part_lines)
    if python:  # the interpreted tier's module
        return _exec(codegen.sweep_source(ops, cache=False, python=True))
    return disk_cache.load("jittape_sweeps", lambda cache: codegen.sweep_source(ops, cache=cache))


def _exec(source):
    import types
    module = types.ModuleType("jittape_sweeps_test")
    exec(compile(source, "<test sweeps>", "exec"), module.__dict__)
    return module


def _run(module, t, out_id):
    """Values, gradient, tangent and HVP buffers of all four sweeps on tape ``t``."""
    n = t.off[-1]
    val = np.zeros(n)
    for i in t.inputs:
        val[t.off[i]:t.off[i + 1]] = np.linspace(-0.7, 0.9, t.off[i + 1] - t.off[i])
    assert module.forward_sweep(*t.columns, val, 0, t.n_records) == -1
    adj = np.zeros(n)
    adj[t.off[out_id]] = 1.0
    module.reverse_sweep(*t.columns, val, adj, 0, out_id + 1)
    dot = np.zeros(n)
    for i in t.inputs:
        dot[t.off[i]:t.off[i + 1]] = 1.0
    module.tangent_sweep(*t.columns, val, dot, 0, t.n_records)
    adj2, adjdot = np.zeros(n), np.zeros(n)
    adj2[t.off[out_id]] = 1.0
    assert module.hvp_sweep(*t.columns, val, dot, adj2, adjdot, 0, out_id + 1) == -1
    return val, adj, dot, adj2, adjdot


def _tape():
    tape = record(_f, np.linspace(-0.5, 0.5, 6))
    t = tape.arrays
    return tape, t, [OPS[c] for c in sorted(with_leaves(t.op.tolist()))]


@pytest.mark.parametrize("python", [False, True], ids=["compiled", "interpreted"])
def test_parts_give_the_results_of_one_function(monkeypatch, python):
    tape, t, ops = _tape()
    whole = _module(ops, 10 ** 6, monkeypatch, python)
    split = _module(ops, 12, monkeypatch, python)
    for what in FUNCTIONS:
        assert len(codegen.sweep_parts(what[:-len("_sweep")], ops)) > 2, what
    if not python:
        assert isinstance(split.reverse_sweep, parts_runtime.Partwise)
        assert not isinstance(whole.reverse_sweep, parts_runtime.Partwise)
    with np.errstate(all="ignore"):
        for a, b in zip(_run(whole, t, tape.out_id), _run(split, t, tape.out_id)):
            np.testing.assert_array_equal(a, b)
    if not python:  # the runner calls its parts by address: their code is not in its module
        ir = "".join(split.hvp_sweep.run.inspect_llvm().values())
        assert "hvp_sweep_run" in ir
        for m, part in enumerate(split.hvp_sweep.parts):
            assert f"hvp_sweep_{m}" in "".join(part.inspect_llvm().values())
            assert f"hvp_sweep_{m}" not in ir


def test_part_dispatch_covers_every_op():
    ops = sorted(OPS, key=lambda op: op.code)
    const = codegen.const_code(ops)
    for sweep in ("forward", "reverse", "tangent", "hvp"):
        hot, parts = codegen._parts(sweep, ops, const)
        assert len(parts) == len(codegen.sweep_parts(sweep, ops)) > 1
        with_branch = [op for op in ops if codegen.branch(op, sweep, const) is not None]
        assert sorted(hot + [op for p, _ in parts for op in p], key=lambda op: op.code) == \
            with_branch  # each op in the runner or in one part
        assert {op.name for op in hot} == set(codegen.HOT)
        assert all(w <= codegen.PART_LINES for p, w in parts if len(p) > 1)
        firsts = [p[0].code for p, _ in parts]
        lines = parts_source.dispatch_lines(lambda m: f"r = {m}", firsts)
        pick = _exec("def pick(opc):\n" + "".join(f"    {ln}\n" for ln in lines) +
                     "    return r\n").pick
        for m, (part, _) in enumerate(parts):
            for op in part:
                assert pick(op.code) == m, (sweep, op.name)


def _rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


@pytest.mark.parametrize("f", [_rosen, demo.lj_energy, demo.lj_energy_loops],
                         ids=["rosenbrock", "lj", "lj_loops"])
def test_small_op_sets_stay_one_function(f):
    """A typical tape's op set: each sweep one function, no parts (compiles as before)."""
    t = record(f, np.linspace(0.1, 1.3, 12)).arrays
    ops = [OPS[c] for c in sorted(with_leaves(t.op.tolist()))]
    source = codegen.sweep_source(ops)
    assert "Partwise" not in source and "call_part" not in source
    for what in FUNCTIONS:
        assert source.count(f"def {what}(") == 1
        assert len(codegen.sweep_parts(what[:-len("_sweep")], ops)) == 1


def test_a_partwise_sweep_compiles_once_when_two_threads_call_it(monkeypatch):
    """The compile thread of jittape.sweeps.tiers and the caller may both make the first call."""
    import threading
    tape, t, ops = _tape()
    split = _module(ops, 12, monkeypatch)
    barrier, out = threading.Barrier(2), []

    def first():
        barrier.wait()
        val = t.val.copy()
        out.append(split.forward_sweep(*t.columns, val, 0, t.n_records))
    threads = [threading.Thread(target=first) for _ in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert out == [-1, -1]


def test_an_op_set_of_scalar_code_alone_is_one_function():
    # every op the runner keeps (codegen.HOT) and no other: over PART_LINES, yet no part
    # to call (this raised IndexError in the part dispatch)
    import jittape
    from jittape.ops import BY_NAME
    ops = [BY_NAME[n] for n in codegen.HOT] + [BY_NAME["const"], BY_NAME["input"]]
    assert sum(codegen.sweep_parts("reverse", ops)) > codegen.PART_LINES
    assert len(codegen.sweep_parts("reverse", ops)) == 1

    def f(x):
        a, b = x[0], x[1]
        return (-a + np.exp(a) + np.log(b) + np.sqrt(b) + a ** 2 + np.sin(a) * np.cos(b)
                + (a + 1.0) * 2.0 / 3.0 - (1.0 - b) + 2.0 / b + b ** 1.5 + a * b - a / b)
    x = np.array([0.3, 1.7])
    g = jittape.grad(f)(x)
    a, b = x
    want = [-1 + np.exp(a) + 2 * a + np.cos(a) * np.cos(b) + 2 / 3 + b - 1 / b,
            1 / b + 0.5 / np.sqrt(b) - np.sin(a) * np.sin(b) + 1 - 2 / b ** 2
            + 1.5 * np.sqrt(b) + a + a / b ** 2]
    np.testing.assert_allclose(g, want, rtol=1e-12)


@pytest.mark.parametrize("count", [2, 3])
def test_warmup_shares_split_the_parts_once_and_evenly(count):
    """pytest -n N (tests/conftest.py): each worker compiles one share of the all-op sweeps'
    parts (jittape.sweeps.warmup.compile_share); every part in exactly one share, the shares'
    lines of rules within the heaviest part of one another (greedy, heaviest first)."""
    from jittape.sweeps import warmup as warmjobs
    codes = with_leaves([op.code for op in OPS])
    parts = warmjobs._parts(codes, FUNCTIONS)
    got = warmjobs.shares(codes, FUNCTIONS, count)
    flat = [p for share in got for p in share]
    assert len(parts) > count and sorted(flat) == sorted((what, m) for _, what, m in parts)
    weight = {(what, m): w for w, what, m in parts}
    loads = [sum(weight[p] for p in share) for share in got]
    assert max(loads) - min(loads) <= max(weight.values())

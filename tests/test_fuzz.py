"""Random NumPy programs checked against NumPy, central differences, JVPs and replay: the
fast profile of jittape's fuzzing (programs from tests/fuzzprog.py, checks from
tests/fuzzcheck.py). On a failure Hypothesis shrinks the program and prints its source.

The long profile (documented in tests/fuzzcheck.py)::

    JITTAPE_FUZZ_EXAMPLES=10000 python -m pytest tests/test_fuzz.py -q   # stops at a failure
    python tests/fuzzcheck.py -n 10000       # collects, groups and shrinks every failure
"""

import collections
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import jittape
import fuzzcheck
import fuzzprog
from fuzzops import Stmt

EXAMPLES = int(os.environ.get("JITTAPE_FUZZ_EXAMPLES", "400"))


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(fuzzprog.programs())
def test_random_programs(p):
    fuzzcheck.check(p, collections.Counter())


def test_program_source_is_plain_numpy():
    stmts = fuzzprog.rebuild(np.array([0.5, -1.0, 2.0]), [
        Stmt("copy", "v1", ("x",)), Stmt("update", "v1", ("::-1", "+=", "np.sin({})", "x")),
        Stmt("clip", "v3", ("v1", "-0.5", "0.5"))])
    assert fuzzprog.Program(np.array([0.5, -1.0, 2.0]), stmts, 0).source == (
        "def f(x):\n    v1 = x.copy()\n    v1[::-1] += np.sin(x)\n"
        "    v3 = np.clip(v1, -0.5, 0.5)\n    return np.sum(np.sin(v3))")


def test_checks_catch_a_wrong_gradient(monkeypatch):
    """The checker itself is tested: a gradient off by 0.1% fails check 2."""
    right = jittape.value_and_grad

    def wrong(f):
        return lambda x: (lambda vg: (vg[0], vg[1] * 1.001))(right(f)(x))
    monkeypatch.setattr(fuzzcheck.jittape, "value_and_grad", wrong)
    x = np.array([0.3, -0.8])
    p = fuzzprog.Program(x, fuzzprog.rebuild(x, [Stmt("tanh", "v1", ("x",))]), 0)
    with pytest.raises(fuzzcheck.Failure, match="gradient"):
        fuzzcheck.check(p, collections.Counter())


def test_checks_catch_a_wrong_optimization(monkeypatch):
    """The optimized-tape check is tested: an optimizer taking x ** 3 for x fails it."""
    from jittape.tape import optimize
    monkeypatch.setitem(optimize.IDENTITIES, jittape.ops.codes.POWC, 3.0)
    x = np.array([0.3, -0.8])
    p = fuzzprog.Program(x, fuzzprog.rebuild(x, [Stmt("cube", "v1", ("x",))]), 0)
    with pytest.raises(fuzzcheck.Failure, match="optimized"):
        fuzzcheck.check(p, collections.Counter())


def test_a_step_across_a_jump_is_not_a_failure():
    """At x[0] == 0.5, np.where(x < 0.5, sin(x), 0.5) jumps: the probe sees the step cross."""
    x = np.array([0.5, -1.0])
    p = fuzzprog.Program(x, fuzzprog.rebuild(x, [Stmt("where", "v1", ("x", "0.5"))]), 0)
    stats = collections.Counter()
    fuzzcheck.check(p, stats)
    assert stats["gradient check crossed a kink"] == 1

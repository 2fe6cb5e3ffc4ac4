"""Composed sweeps against an op set's own sweep (issue 41, item 3): ``results/composed.md``.

Run::

    python benchmarks/bench_composed.py     # compiles both forms once (a minute or two)

A composed sweep (:mod:`jittape.sweeps.composed`) is a shared runner calling one piece per
op through an address table; the runner inlines the branches of the common scalar ops only.
This times, on the sweep alone and side by side in one process, the four sweeps of scalar
loop tapes whose ops the runner does not inline (``tanh``, ``arctan2``) and of one whose ops
it does, in both forms: the op set's own compiled module and the composed namespace. The
issue's rule: keep the pieces only if every ratio is within 1.2x.
"""

import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import jittape  # noqa: E402
from benchmarks.common import median_time, table  # noqa: E402
from jittape.sweeps import composed, opsets  # noqa: E402

N = 2000  # loop trips: records of the tape about 5 N


def not_inlined(x):
    s = 0.0
    for i in range(N):
        s = s + np.tanh(x[i % 3]) * np.arctan2(x[(i + 1) % 3], 1.5)
    return s


def inlined(x):
    s = 0.0
    for i in range(N):
        s = s + np.sin(x[i % 3]) * x[(i + 1) % 3]
    return s


def _args(t, what):
    val, n = t.val.copy(), t.val.shape[0]
    adj, dot, adjdot = np.zeros(n), np.ones(n), np.zeros(n)
    lo, hi = 0, t.n_records
    return {"forward_sweep": (*t.columns, val, lo, hi),
            "reverse_sweep": (*t.columns, val, adj, lo, hi),
            "tangent_sweep": (*t.columns, val, dot, lo, hi),
            "hvp_sweep": (*t.columns, val, dot, adj, adjdot, lo, hi)}[what]


def rows():
    out = []
    x = np.array([0.3, -0.7, 1.1])
    for name, f in (("tanh, arctan2 (not inlined)", not_inlined), ("sin, mul (inlined)", inlined)):
        t = jittape.record(f, x).arrays
        codes = opsets.with_leaves(set(t.op.tolist()))
        own = opsets.module(codes)
        for what in opsets.FUNCTIONS:
            forms = {"own": getattr(own, what), "composed": getattr(composed.namespace(codes,
                                                                                      what), what)}
            times = {}
            for form, fn in forms.items():
                fn(*_args(t, what))  # compile or load
                times[form] = median_time(lambda fn=fn: fn(*_args(t, what)))
            base = median_time(lambda: _args(t, what))  # the buffers' copies, taken off
            own_s, comp_s = times["own"] - base, times["composed"] - base
            out.append((name, what, t.n_records, own_s, comp_s, comp_s / own_s))
    return out


def main():
    t0 = time.perf_counter()
    results = rows()
    body = [[name, what.replace("_sweep", ""), n, f"{own * 1e6:.0f} µs", f"{comp * 1e6:.0f} µs",
             f"{r:.2f}x"] for name, what, n, own, comp, r in results]
    worst = max(r for *_, r in results)
    text = "\n".join([
        "# Composed sweeps against an op set's own sweep", "",
        f"`python benchmarks/bench_composed.py`; one process, medians of 7; "
        f"{time.perf_counter() - t0:.0f} s. Worst ratio {worst:.2f}x (the issue's bar: "
        f"1.2x).", "",
        table(["tape", "sweep", "records", "own set", "composed", "composed ÷ own"], body),
        ""])
    (HERE / "results" / "composed.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()

"""Custom rules: cold compile time with and without a rule, and the cost of a call record.

Run::

    python benchmarks/bench_custom_compile.py [--repeat 2] [--output benchmarks/results/custom.md]

1. Cold compile, side by side: the README's softplus example (a ``custom_vjp``) against a
   function recording the same ops without the rule (its ``fwd`` and ``bwd`` inlined), each
   in a NEW process with FRESH cache directories and ``JITTAPE_BACKGROUND=0`` (every figure
   includes its compile), alternating, ``--repeat`` times: the first gradient of a recorded
   tape (forward and reverse sweeps) and then its Hessian (tangent and second-order sweeps:
   all four sweeps).
2. Per call: a tape holding ``K`` calls of the custom function against the same records
   without the rule, warm; the difference of ``tape.gradient`` per call is what a call
   record costs (the Python rule between the compiled sweeps, :mod:`jittape.sweeps.regions`, and
   the forward sweep over its region).
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.common import RESULTS, ROOT, run_in_fresh_interpreter, table  # noqa: E402

_DEFS = '''
import json, time
import numpy as np
import jittape

@jittape.custom_vjp
def softplus(x):
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))

softplus.defvjp(lambda x: (softplus(x), x),
                lambda x, ybar: (ybar * 0.5 * (1.0 + np.tanh(0.5 * x)),))

def plain(x):  # the same records without the rule: fwd's and bwd's ops inlined
    y = np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))
    return np.sum(y * 0.5 * (1.0 + np.tanh(0.5 * x)))

def custom(x):
    return np.sum(softplus(x))
'''

_COLD = _DEFS + '''
f = {which}
x = np.array([-1000.0, 0.0, 1000.0])
tape = jittape.record(f, x)
t0 = time.perf_counter()
tape.gradient(x)
t1 = time.perf_counter()
tape.hessian(x)
t2 = time.perf_counter()
print(json.dumps({{"grad": t1 - t0, "all": t2 - t0,
                   "ops": jittape.sweeps.opsets.for_tape(tape.arrays).names}}))
'''

_CALLS = _DEFS + '''
K = {k}
def many(fn):
    return lambda x: sum(fn(x[i:i + 2]) for i in range(K))
x = np.linspace(-2.0, 2.0, K + 1)
out = {{}}
for name, fn in (("plain", plain), ("custom", custom)):
    tape = jittape.record(many(fn), x)
    tape.auto_compile = False  # the interpreter's sweeps on both (no tape kernel)
    tape.gradient(x)
    best = 1e9
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(20):
            tape.gradient(x)
        best = min(best, (time.perf_counter() - t0) / 20)
    out[name] = best
    out[name + "_records"] = tape.n_records
print(json.dumps(out))
'''


def cold(repeat, baseline=None):
    """Cold figures per variant: ``plain`` and ``custom`` of this checkout, and of the
    checkout ``baseline`` (another version of jittape) if given; alternating."""
    roots = [("", ROOT)] + ([("baseline ", Path(baseline))] if baseline else [])
    rows, ops = {}, {}
    for _ in range(repeat):
        for tag, root in roots:
            for which in ("plain", "custom"):  # alternating: the same load for all
                with tempfile.TemporaryDirectory() as d:
                    out = run_in_fresh_interpreter(_COLD.format(which=which), root, d)
                rows.setdefault(tag + which, []).append((out["grad"], out["all"]))
                ops[tag + which] = out["ops"]
    return rows, ops


def per_call(k):
    with tempfile.TemporaryDirectory() as d:
        run_in_fresh_interpreter(_CALLS.format(k=2), ROOT, d)  # compile
        return run_in_fresh_interpreter(_CALLS.format(k=k), ROOT, d)


def _fmt(xs):
    return f"{statistics.median(xs):.1f} ({min(xs):.1f}-{max(xs):.1f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--baseline", help="another checkout of jittape, measured alongside")
    ap.add_argument("--output", default=str(RESULTS / "custom.md"))
    args = ap.parse_args()
    t0 = time.time()
    rows, ops = cold(args.repeat, args.baseline)
    calls = per_call(args.calls)
    p, c = rows["plain"], rows["custom"]
    base = []
    if args.baseline:
        bp, bc = rows["baseline plain"], rows["baseline custom"]
        base = [["baseline: without the rule", _fmt([g for g, _ in bp]),
                 _fmt([a for _, a in bp])],
                ["baseline: custom_vjp", _fmt([g for g, _ in bc]), _fmt([a for _, a in bc])]]
    lines = [
        "# Custom rules: compile time and per-call cost",
        "",
        f"`python benchmarks/bench_custom_compile.py --repeat {args.repeat}` "
        f"({time.time() - t0:.0f} s; the machine is shared: same-run figures compare).",
        "",
        "Cold compile (new process, fresh caches, `JITTAPE_BACKGROUND=0`), seconds, median "
        "(min-max):",
        "",
        table(["tape", "first gradient (forward + reverse)", "all four sweeps"],
              [["softplus without the rule", _fmt([g for g, _ in p]), _fmt([a for _, a in p])],
               ["softplus as a custom_vjp", _fmt([g for g, _ in c]), _fmt([a for _, a in c])],
               ["ratio (medians)",
                f"{statistics.median([g for g, _ in c]) / statistics.median([g for g, _ in p]):.2f}",
                f"{statistics.median([a for _, a in c]) / statistics.median([a for _, a in p]):.2f}"]]
              + base),
        "",
        f"Baseline: {args.baseline}." if args.baseline else "",
        "",
        f"Op sets compiled: without the rule {', '.join(ops['plain'])}; with it "
        f"{', '.join(ops['custom'])}.",
        "",
        f"Per call record (warm, `tape.gradient` of {args.calls} calls on 2-element slices, "
        f"best of 7 x 20):",
        "",
        table(["tape", "records", "gradient (ms)"],
              [["without the rule", calls["plain_records"], f"{calls['plain'] * 1e3:.3f}"],
               ["custom_vjp", calls["custom_records"], f"{calls['custom'] * 1e3:.3f}"],
               ["per call", "",
                f"{(calls['custom'] - calls['plain']) / args.calls * 1e6:.1f} us"]]),
        "",
    ]
    text = "\n".join(lines)
    print(text)
    Path(args.output).write_text(text)


if __name__ == "__main__":
    main()

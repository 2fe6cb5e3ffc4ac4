"""Rerolled scalar loops (LJ and Morse pair loops) against hand Numba, before/after a change.

Run::

    PYTHONPATH=. python benchmarks/bench_loops.py --before /tmp/jittape-base   # ~10 minutes
    PYTHONPATH=. python benchmarks/bench_loops.py --before /tmp/jittape-base --quick

``--before PATH``: a checkout holding the old ``jittape`` (``git archive`` of the commit
before a change, say). This checkout and that one each run in a worker process; the
coordinator asks them for samples in turn, round-robin (one sample of every candidate of a
problem per round and worker), so both are measured side by side under the same load. The
problems and the hand references are this checkout's (``benchmarks/problems/lj.py``,
``morse.py``) in both workers. Without ``--before``, this checkout alone.

Per problem (``lj_energy_loops`` at N = 13 and 38 atoms, ``morse_energy_loops`` likewise):

* **hand**: the problem's hand-written Numba gradient (``lj_grad_njit``, ``morse_grad_njit``);
* **kernel**: the compiled tape's kernel called directly (value and gradient), what
  ``tape.gradient`` calls; **value**: the same kernel without the gradient;
* **gradient**: ``tape.gradient(x)`` on the compiled tape (the kernel plus the Python of
  the replay).

Every figure is the minimum over the rounds of per-call times (each sample: the best of two
loops of calls) and, in brackets, the median: on a loaded machine the minimum is the
steadier figure. Ratios are to the same worker's hand Numba. Gradients are checked against
the hand ones at two points first (relative error below 1e-8).

Compile times: ``tape.compile()`` of the N = 38 tapes in fresh interpreters with empty
``NUMBA_CACHE_DIR`` and ``JITTAPE_CACHE_DIR`` (cold) and again on the directories the cold
run filled (warm), before and after alternating; medians of the trials.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "loops_before_after.md"
PROBLEMS = ("lj13", "lj38", "morse13", "morse38")
CANDIDATES = ("hand", "kernel", "value", "gradient")

WORKER = r'''
import json, sys, timeit
jittape_root, root = sys.argv[1], sys.argv[2]
sys.path.insert(0, jittape_root)
import jittape  # from the checkout under test
sys.path.remove(jittape_root)
sys.path.insert(0, root)
import numpy as np
from benchmarks.problems import lj, morse
from jittape.demo import lj_energy_loops

cands, info = {}, {}
for key in sys.argv[3:]:
    kind, n = key.rstrip("0123456789"), int(key.lstrip("ljmorse"))
    mod = lj if kind == "lj" else morse
    f = lj_energy_loops if kind == "lj" else morse.morse_energy_loops
    hand = lj.lj_grad_njit if kind == "lj" else morse.morse_grad_njit
    x = mod.start(n)
    tape = jittape.record(f, x).compile()
    x2 = x + 0.01 * np.sin(np.arange(x.size))
    err = max(float(np.max(np.abs(tape.gradient(p) - hand(p))) / np.max(np.abs(hand(p))))
              for p in (x, x2))
    assert err < 1e-8, (key, err)
    kernel, val0, pool, nadj = tape._kernel[:4]  # what Tape.gradient calls; private
    val, adj = val0.copy(), np.empty(nadj)
    order = (lambda v, a, x, p, w: (v, a, p, x, w)) if len(tape._kernel) > 4 else \
        (lambda *args: args)  # (the kernel takes (val, adj, pool, x) since 2026-11-27)
    if "gx" in kernel.py_func.__code__.co_varnames[:5]:  # (its gradient array: 11-27 too)
        order = (lambda v, a, x, p, w: (v, a, p, x, np.empty(x.size if w else 0)))
    cands[key] = {"hand": lambda h=hand, x=x: h(x),
                  "kernel": lambda k=kernel, v=val, a=adj, x=x, p=pool, o=order: k(
                      *o(v, a, x, p, True)),
                  "value": lambda k=kernel, v=val, a=adj, x=x, p=pool, o=order: k(
                      *o(v, a, x, p, False)),
                  "gradient": lambda t=tape, x=x: t.gradient(x)}
    info[key] = {"error": err, "records": tape.n_records}
print(json.dumps(info), flush=True)
for line in sys.stdin:
    key, number = line.split()
    print(json.dumps({c: min(timeit.repeat(fn, number=int(number), repeat=2)) / int(number)
                      for c, fn in cands[key].items()}), flush=True)
'''

COMPILE = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
import jittape
sys.path.remove(sys.argv[1])
sys.path.insert(0, sys.argv[2])
from benchmarks.problems import lj, morse
from jittape.demo import lj_energy_loops
kind, n = sys.argv[3].rstrip("0123456789"), int(sys.argv[3].lstrip("ljmorse"))
x = (lj if kind == "lj" else morse).start(n)
tape = jittape.record(lj_energy_loops if kind == "lj" else morse.morse_energy_loops, x)
t0 = time.perf_counter()
tape.compile()
print(json.dumps(time.perf_counter() - t0))
'''


def sample(checkouts, problems, rounds):
    """{(checkout, problem): {candidate: [seconds per call, one per round]}} and the workers'
    check results."""
    env = dict(os.environ, JITTAPE_QUIET="1", JITTAPE_BACKGROUND="0")
    workers, info = {}, {}
    for c in checkouts:
        workers[c] = subprocess.Popen([sys.executable, "-c", WORKER, str(c), str(ROOT),
                                       *problems], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True, env=env)
        info[c] = json.loads(workers[c].stdout.readline())
    out = {(c, p): {k: [] for k in CANDIDATES} for c in checkouts for p in problems}
    for _ in range(rounds):
        for p in problems:
            number = 1000 if p.endswith("13") else 200
            for c in checkouts:
                workers[c].stdin.write(f"{p} {number}\n")
                workers[c].stdin.flush()
                for k, v in json.loads(workers[c].stdout.readline()).items():
                    out[c, p][k].append(v)
    for w in workers.values():
        w.stdin.close()
        w.wait()
    return out, info


def compile_times(checkouts, problems, trials):
    """{(checkout, problem): (cold, warm)} medians of ``trials`` pairs of fresh processes."""
    runs = {(c, p): ([], []) for c in checkouts for p in problems}
    for _ in range(trials):
        for p in problems:
            for c in checkouts:
                with tempfile.TemporaryDirectory() as jd, tempfile.TemporaryDirectory() as nd:
                    env = dict(os.environ, JITTAPE_CACHE_DIR=jd, NUMBA_CACHE_DIR=nd,
                               JITTAPE_QUIET="1", JITTAPE_BACKGROUND="0")
                    for times in runs[c, p]:
                        proc = subprocess.run([sys.executable, "-c", COMPILE, str(c),
                                               str(ROOT), p], env=env, capture_output=True,
                                              text=True, check=True)
                        times.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return {k: (statistics.median(cold), statistics.median(warm))
            for k, (cold, warm) in runs.items()}


def _us(s):
    return f"{s * 1e6:.2f} µs"


def report(samples, info, ctimes, checkouts, names, command, elapsed):
    lines = [f"# Rerolled scalar loops: before and after", "",
             f"- command: `{command}`", f"- wall time {elapsed:.0f} s; "
             f"{time.strftime('%Y-%m-%d %H:%M')}; load average at the end "
             f"{', '.join(f'{v:.2f}' for v in os.getloadavg())}",
             "- " + "; ".join(f"{names[c]}: `{c}`" for c in checkouts), "",
             "Minimum per-call time over the interleaved rounds (median in brackets); "
             "ratios to the same worker's hand Numba. `kernel`: the compiled tape's kernel "
             "called directly (value and gradient), `value`: without the gradient, "
             "`gradient`: `tape.gradient(x)`. See the docstring of `benchmarks/bench_loops.py`.",
             "", "| problem | checkout | hand Numba | kernel | ÷ hand | value | ÷ hand | "
             "tape.gradient | ÷ hand |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for p in PROBLEMS:
        for c in checkouts:
            s = samples.get((c, p))
            if s is None:
                continue
            lo = {k: min(v) for k, v in s.items()}
            med = {k: statistics.median(v) for k, v in s.items()}
            cells = [p, names[c], f"{_us(lo['hand'])} ({_us(med['hand'])})"]
            for k in ("kernel", "value", "gradient"):
                cells += [f"{_us(lo[k])} ({_us(med[k])})",
                          f"**{lo[k] / lo['hand']:.2f}** ({med[k] / med['hand']:.2f})"]
            lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Gradient checks (max relative error against the hand gradient at two "
              "points): " + "; ".join(f"{names[c]} {p} {i['error']:.1e}"
                                      for c in checkouts for p, i in info[c].items()), ""]
    if ctimes:
        lines += ["## `tape.compile()`, fresh interpreters", "",
                  "| problem | checkout | cold | warm |", "|---|---|---:|---:|"]
        lines += [f"| {p} | {names[c]} | {cold:.2f} s | {warm:.2f} s |"
                  for (c, p), (cold, warm) in sorted(ctimes.items(), key=lambda kv: kv[0][1])]
        lines.append("")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, help="a checkout holding the old jittape")
    parser.add_argument("--quick", action="store_true", help="fewer rounds, one compile trial")
    parser.add_argument("--no-compile-times", action="store_true")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    t0 = time.perf_counter()
    checkouts = ([args.before.resolve()] if args.before else []) + [ROOT]
    names = {ROOT: "after" if args.before else "this"}
    if args.before:
        names[args.before.resolve()] = "before"
    samples, info = sample(checkouts, PROBLEMS, 10 if args.quick else 40)
    ctimes = None if args.no_compile_times else compile_times(
        checkouts, ("lj38", "morse38"), 1 if args.quick else 3)
    command = "python benchmarks/bench_loops.py " + " ".join(sys.argv[1:])
    text = report(samples, info, ctimes, checkouts, names, command, time.perf_counter() - t0)
    args.output.write_text(text)
    print(text)


if __name__ == "__main__":
    main()

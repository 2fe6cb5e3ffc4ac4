"""Foundation benchmark: what a jittape gradient costs next to the plain NumPy objective.

Run::

    python benchmarks/bench_foundation.py            # full run, a few minutes on 2 cores
    python benchmarks/bench_foundation.py --quick    # smoke run, under a minute

Workloads
---------
* ``rosen``: extended Rosenbrock ``np.sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)`` for
  n = 10, 1 000 and 100 000. A dozen array records whatever n: it measures per-record
  overhead at n = 10 and per-element throughput at n = 100 000.
* ``chain``: a Frenkel-Kontorova chain energy written as a Python loop over the scalars
  ``x[i]`` of a 1 000-element x, ``s += 0.5*(x[i]-x[i-1])**2 + (1 - cos(x[i]))``: about
  10 000 scalar records, the worst case for a tape recorded from Python.

Every gradient (eager and replayed) is checked against a reference first (Rosenbrock:
``scipy.optimize.rosen_der``; chain: its hand-written gradient); the script aborts if one
is wrong.

What is measured
----------------
All in-process times are medians of ``timeit`` samples taken round-robin: one sample of
each of the five functions below per round, so they are measured side by side.

* ``f(x)``: the plain NumPy objective.
* ``grad`` (eager): ``jittape.grad(f)(x)``: record the tape, freeze it, reverse sweep.
  ``grad/f`` is its ratio to ``f(x)``: the price of one gradient in objective evaluations.
  ``us/record`` is the eager time divided by the number of records.
* ``replay``: ``tape.gradient(x)`` on a tape from ``jittape.record(f, x)``: Numba forward
  sweep + reverse sweep, no Python recording. ``replay/f`` is its ratio to ``f(x)``.
* ``record``: ``jittape.record(f, x)`` alone (record + freeze): the Python side of ``grad``.
* ``sweep``: ``regions.adjoints(tape.arrays, tape.out_id)`` alone (adjoint buffer allocation and the
  Numba reverse sweep), also as records per second, nanoseconds per tape element (array
  records) and as a share of eager ``grad``.
* ``B/record``: ``tape.nbytes / tape.n_records`` (columns, values and integer pool).
* Start-up, each in a fresh interpreter (``sys.executable -c``): ``import numpy``, then
  ``import numba``, then ``import jittape`` (cumulative), and the first eager gradient and
  the first replay of a tiny function. *cold*: ``NUMBA_CACHE_DIR`` is a new empty directory
  so Numba compiles the sweeps; *warm*: the same directory after the cold run filled it,
  run twice and the second run reported, so Numba loads them from its on-disk cache. The warm first
  gradient still pays Numba's one-time start (loading the cache index, setting up the
  LLVM JIT), once per process.

How to read the numbers
-----------------------
The machines these run on are shared and noisy, so absolute times move from run to run.
Everything in one table is measured side by side in one process and one run, and the
ratios (``grad/f``, ``replay/f``) are the figures to compare across runs and machines: they
cancel most of the machine's speed. Medians, not means, so that a stray slow sample does
not move them. ``record`` and ``sweep`` are timed on their own, so with noise their shares
of ``grad`` need not add up to exactly 100 %.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import textwrap
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import numba  # noqa: E402
import numpy as np  # noqa: E402
import scipy  # noqa: E402
from scipy.optimize import rosen_der  # noqa: E402

import jittape  # noqa: E402
from benchmarks.common import cold_and_warm_startup, cpu_info  # noqa: E402
from jittape.sweeps import regions  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "foundation.md"


# --- workloads ---------------------------------------------------------------------------
def rosen(x):
    """Extended Rosenbrock function, vectorised."""
    return np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def chain(x):
    """Frenkel-Kontorova chain energy as a scalar Python loop (about 10 records per i)."""
    s = 0.0
    for i in range(1, len(x)):
        d = x[i] - x[i - 1]
        s = s + 0.5 * d ** 2 + (1 - np.cos(x[i]))
    return s


def chain_grad(x):
    """Hand-written gradient of :func:`chain`."""
    g = np.zeros_like(x)
    d = np.diff(x)
    g[1:] += d + np.sin(x[1:])
    g[:-1] -= d
    return g


def workloads():
    """(label, f, x, reference gradient function) for every benchmarked case."""
    rng = np.random.default_rng(0)
    cases = [(f"rosen n={n:,}", rosen, rng.uniform(-1.5, 1.5, n), rosen_der)
             for n in (10, 1_000, 100_000)]
    cases.append(("chain loop n=1,000", chain, rng.uniform(-1.0, 1.0, 1_000), chain_grad))
    return cases


# --- correctness -------------------------------------------------------------------------
def check_gradient(label, how, got, want):
    """Abort the run loudly if ``got`` is not ``want`` to rounding."""
    got, want = np.asarray(got), np.asarray(want)
    scale = max(1.0, float(np.max(np.abs(want))))
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-9, atol=1e-9 * scale):
        err = np.max(np.abs(got - want)) if got.shape == want.shape else "shape mismatch"
        sys.exit(f"WRONG GRADIENT for {label} ({how}): max abs error {err}, "
                 f"shape {got.shape} vs {want.shape}. Not benchmarking a wrong result.")


def verify(label, f, x, ref):
    """Check the eager gradient and the replayed one (at x and at a second point)."""
    check_gradient(label, "eager grad", jittape.grad(f)(x), ref(x))
    tape = jittape.record(f, x)
    check_gradient(label, "replay at x", tape.gradient(x), ref(x))
    x2 = x + 0.01 * np.cos(np.arange(x.size))
    check_gradient(label, "replay at x'", tape.gradient(x2), ref(x2))
    value = tape.value(x2)
    if not np.isclose(value, f(x2), rtol=1e-10):
        sys.exit(f"WRONG VALUE for {label} (replay): {value} vs {f(x2)}")


# --- timing ------------------------------------------------------------------------------
def calibrate(fn, target):
    """Calls of ``fn`` per sample so that one sample lasts about ``target`` seconds."""
    fn()  # warm-up: caches, lazy imports, first-touch allocation
    t0 = timeit.default_timer()
    fn()
    once = max(timeit.default_timer() - t0, 1e-7)
    return max(1, int(target / once)), once


def median_times(fns, quick):
    """Median seconds per call of each ``fns[name]()``, sampled round-robin.

    Each sample loops a function enough times to last about ``target`` seconds (so timer
    resolution does not matter for microsecond calls). The samples of all functions are
    interleaved, one per function per round, so a burst of load from other processes on a
    shared machine hits all of them alike. The number of rounds is chosen from the size of
    the workload: as many as fit in ``budget`` seconds, between ``min_rounds`` and
    ``max_rounds``.
    """
    target, budget, min_rounds, max_rounds = ((0.01, 1.0, 3, 7) if quick
                                              else (0.05, 12.0, 5, 41))
    numbers = {}
    round_time = 0.0
    for name, fn in fns.items():
        number, once = calibrate(fn, target)
        numbers[name] = number
        round_time += number * once
    rounds = int(min(max_rounds, max(min_rounds, budget / round_time)))
    samples = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            samples[name].append(timeit.timeit(fn, number=numbers[name]) / numbers[name])
    return {name: statistics.median(s) for name, s in samples.items()}


def measure(label, f, x, quick):
    """All in-process measurements of one workload, side by side."""
    g = jittape.grad(f)
    tape = jittape.record(f, x)
    arrays, out = tape.arrays, tape.out_id
    r = {"label": label, "n_records": tape.n_records, "elements": arrays.val.size,
         "nbytes": tape.nbytes}
    r.update(median_times({"f": lambda: f(x),
                           "grad": lambda: g(x),
                           "replay": lambda: tape.gradient(x),
                           "record": lambda: jittape.record(f, x),
                           "sweep": lambda: regions.adjoints(arrays, out)}, quick))
    return r


# --- start-up in fresh interpreters ------------------------------------------------------
STARTUP_SNIPPET = textwrap.dedent("""
    import json, time
    t0 = time.perf_counter()
    import numpy as np
    t1 = time.perf_counter()
    import numba
    t2 = time.perf_counter()
    import jittape
    t3 = time.perf_counter()
    f = lambda x: np.sum(np.sin(x) * x) + x[0] * x[1]
    x = np.array([0.5, 1.5, 2.5])
    jittape.grad(f)(x)
    t4 = time.perf_counter()
    tape = jittape.record(f, x)
    t5 = time.perf_counter()
    tape.gradient(x)
    t6 = time.perf_counter()
    print(json.dumps({"numpy": t1 - t0, "numba": t2 - t0, "jittape": t3 - t0,
                      "first_grad": t4 - t3, "first_replay": t6 - t5}))
""")


# --- report ------------------------------------------------------------------------------
def fmt_time(s):
    """Seconds in the unit that reads best."""
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    if s < 1.0:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def table(header, rows):
    """A Markdown table, numbers right-aligned."""
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(out)


def timing_table(results):
    header = ["workload", "records", "f(x)", "grad (eager)", "grad/f", "us/record",
              "replay", "replay/f"]
    rows = [[r["label"], f"{r['n_records']:,}", fmt_time(r["f"]), fmt_time(r["grad"]),
             f"{r['grad'] / r['f']:,.1f}", f"{r['grad'] / r['n_records'] * 1e6:,.2f}",
             fmt_time(r["replay"]), f"{r['replay'] / r['f']:,.1f}"] for r in results]
    return table(header, rows)


def tape_table(results):
    header = ["workload", "elements", "B/record", "record (+freeze)", "record % of grad",
              "sweep", "sweep % of grad", "sweep records/s", "sweep ns/element"]
    rows = [[r["label"], f"{r['elements']:,}", f"{r['nbytes'] / r['n_records']:,.1f}",
             fmt_time(r["record"]), f"{100 * r['record'] / r['grad']:.0f} %",
             fmt_time(r["sweep"]), f"{100 * r['sweep'] / r['grad']:.0f} %",
             f"{r['n_records'] / r['sweep']:,.3g}",
             f"{r['sweep'] / r['elements'] * 1e9:.2f}"] for r in results]
    return table(header, rows)


def startup_table(cold, warm):
    header = ["start-up (fresh interpreter)", "cold cache", "warm cache"]
    labels = [("numpy", "`import numpy`"),
              ("numba", "`import numpy, numba` (cumulative)"),
              ("jittape", "`import jittape` (cumulative, total import)"),
              ("first_grad", "first `grad(f)(x)`, tiny f (reverse sweep compiled/loaded)"),
              ("first_replay", "then first `tape.gradient(x)` (+ forward sweep)")]
    rows = [[text, fmt_time(cold[k]), fmt_time(warm[k])] for k, text in labels]
    total = lambda r: r["jittape"] + r["first_grad"] + r["first_replay"]
    rows.append(["**total: import + first grad + first replay**",
                 f"**{fmt_time(total(cold))}**", f"**{fmt_time(total(warm))}**"])
    return table(header, rows)


def machine_info():
    cpu, cpus_usable = cpu_info()
    return [f"- date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
            f"- platform: {platform.platform()}",
            f"- CPU: {cpu}; {os.cpu_count()} logical CPUs, {cpus_usable} usable",
            f"- python {platform.python_version()}, numpy {np.__version__}, "
            f"numba {numba.__version__}, scipy {scipy.__version__}, "
            f"jittape {jittape.__version__}"]


def report(results, cold, warm, trials, quick):
    mode = "quick (`--quick`)" if quick else "full"
    return "\n".join([
        "# jittape foundation benchmark", "",
        *machine_info(), f"- mode: {mode}", "",
        "Times are medians of repeated samples, measured side by side in one run (shared, "
        "noisy machines): compare the ratios across runs, not the absolute times. "
        "`grad/f` = eager `jittape.grad(f)(x)` (record + reverse sweep) over plain `f(x)`; "
        "`replay/f` = `tape.gradient(x)` (native forward + reverse sweep of a recorded "
        "tape) over `f(x)`. All gradients were checked against references first.", "",
        "## Gradient cost", "", timing_table(results), "",
        "## Where the eager time goes, tape size", "", tape_table(results), "",
        f"## Start-up (median of {trials} fresh interpreter(s) each)", "",
        startup_table(cold, warm), "",
        "Cold: `NUMBA_CACHE_DIR` is a new empty directory (Numba compiles the sweeps). "
        "Warm: the same directory after the cold run filled it, run twice, the second "
        "reported; its first gradient still pays Numba's one-time start in the process "
        "(cache index, LLVM JIT set-up).", ""])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer and shorter samples (under a minute)")
    parser.add_argument("--output", type=Path, default=RESULTS,
                        help=f"Markdown file to write (default {RESULTS.relative_to(ROOT)})")
    args = parser.parse_args()

    cases = workloads()
    for label, f, x, ref in cases:
        verify(label, f, x, ref)
    print("gradients verified; timing ...", file=sys.stderr)
    results = []
    for label, f, x, _ in cases:
        results.append(measure(label, f, x, args.quick))
        print(f"  {label}: done", file=sys.stderr)
    cold, warm, trials = cold_and_warm_startup(STARTUP_SNIPPET, ROOT, args.quick)

    text = report(results, cold, warm, trials, args.quick)
    print(text)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    print(f"written to {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()

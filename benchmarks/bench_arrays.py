"""Array tapes at memory speed: replayed gradients against hand-written Numba, before/after.

Run::

    PYTHONPATH=. python benchmarks/bench_arrays.py                  # about 2 minutes
    PYTHONPATH=. python benchmarks/bench_arrays.py --quick
    PYTHONPATH=. python benchmarks/bench_arrays.py --before /tmp/jittape-base

``--before PATH`` also times the jittape of another checkout (PATH holds its ``jittape``
package, e.g. ``git worktree add`` or ``git archive`` of the commit before a change) in a
child process, with the same problems and hand references from this checkout, and reports
both runs' ratios side by side. Results go to ``benchmarks/results/arrays.md`` (or
``--output``) and stdout.

What is measured, per problem (Rosenbrock n = 1e3 and 1e5, ``benchmarks/problems/
rosenbrock.py``; logistic regression X 1e4 x 100, ``benchmarks/problems/logreg.py``;
strided views of 1e6 values, here: :func:`steps`, basic slices with steps forward and
backward, and :func:`blocks`, 2-D slices with steps and columns of a 1000 x 1000 matrix),
all candidates timed side by side, round-robin (``benchmarks.common.sample_times``), every
BLAS limited to one thread (threadpoolctl; NumPy's and SciPy's OpenBLAS):

* **hand loops**: the problem's ``*_grad_njit``, one hand-written Numba loop;
* **hand BLAS** (logistic regression): ``logreg_grad_blas_njit``, its products through
  Numba's ``np.dot`` (BLAS gemv); the reference of the ratios is the faster hand version;
* **interpreted**: ``tape.gradient(x)`` on ``tape = jittape.record(f, x)``;
* **compiled**: the same on a second tape after ``tape.compile()``.

Every gradient is checked against the hand one first (relative error below 1e-8). Tape
sizes: ``tape.nbytes`` of the recorded tape and its integer pool alone (where index arrays
of gathers are kept: 8 bytes per gathered element). Memory:
resident set size (``VmRSS``) before and after 100 000 compiled and 100 000 interpreted
replays of Rosenbrock n = 1e3 (after a warm-up of 1 000), and 1 000 of each large problem:
it must stay flat (no per-call buffer that is kept).
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_OTHER = os.environ.get("BENCH_ARRAYS_JITTAPE")  # the child of --before: jittape from there
if _OTHER:
    sys.path.insert(0, _OTHER)
    import jittape  # noqa: E402,F401  (from the other checkout, before ROOT joins the path)
    sys.path.remove(_OTHER)
sys.path.insert(0, str(ROOT))

import numba  # noqa: E402
import numpy as np  # noqa: E402

import jittape  # noqa: E402,F811
from benchmarks.common import (Settings, fmt_ratio, fmt_time, machine_info, rel_error,  # noqa
                               sample_times, stats, table)
from benchmarks.problems import logreg, rosenbrock  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "arrays.md"
TOL = 1e-8
M = 1_000  # strided views of a 1000 x 1000 array
TARGETS = ("rosen100000", "logreg")  # the targets: best replay <= 1.5x hand


# --- strided views: steps, 2-D slices, columns ------------------------------------------
def steps(x):
    """Basic slices with steps (forward and backward) of a vector."""
    return np.sum(x[::2] ** 2 * x[1::2]) + np.sum(x[::-3])


@numba.njit(cache=True)
def steps_grad_njit(x):
    n = x.shape[0]
    g = np.zeros(n)
    for i in range(0, n - 1, 2):
        g[i] += 2.0 * x[i] * x[i + 1]
        g[i + 1] += x[i] * x[i]
    for i in range(n - 1, -1, -3):
        g[i] += 1.0
    return g


def blocks(x):
    """2-D basic slices of a 1000 x 1000 matrix: strided blocks and columns."""
    A = x.reshape(M, M)
    return (np.sum(np.sin(A[1:, ::2]) * A[:-1, 1::2])
            + np.sum((A[:, 3] - A[::-1, -1]) ** 2))


@numba.njit(cache=True)
def blocks_grad_njit(x):
    A = x.reshape((M, M))
    g = np.zeros((M, M))
    for i in range(M - 1):
        for j in range(0, M, 2):
            g[i + 1, j] += np.cos(A[i + 1, j]) * A[i, j + 1]
            g[i, j + 1] += np.sin(A[i + 1, j])
    for i in range(M):
        d = A[i, 3] - A[M - 1 - i, M - 1]
        g[i, 3] += 2.0 * d
        g[M - 1 - i, M - 1] -= 2.0 * d
    return g.ravel()


def problems():
    """``(key, label, f, x, {hand name: gradient function})``."""
    out = []
    for n in (1_000, 100_000):
        x = rosenbrock.start(n)
        out.append((f"rosen{n}", f"Rosenbrock n = {n:,}", rosenbrock.rosen, x,
                    {"hand loops": rosenbrock.rosen_grad_njit}))
    x = np.cos(np.arange(M * M) * 0.37)
    out.append(("steps", f"Strided slices n = {M * M:,}", steps, x,
                {"hand loops": steps_grad_njit}))
    out.append(("blocks", f"2-D slices and columns {M:,} x {M:,}", blocks, x,
                {"hand loops": blocks_grad_njit}))
    X, y = logreg.data(10_000, 100)
    w = np.random.default_rng(1).standard_normal(100) * 0.1
    out.append(("logreg", "Logistic regression X 10,000 x 100", logreg.make_numpy(X, y), w,
                {"hand loops": lambda w: logreg.logreg_grad_njit(w, X, y),
                 "hand BLAS": lambda w: logreg.logreg_grad_blas_njit(w, X, y)}))
    return out


def blas_one_thread():
    """Limit every BLAS to one thread. threadpoolctl limits the libraries loaded when it is
    called: SciPy's OpenBLAS, which Numba's ``np.dot`` calls, is loaded first (else it runs
    two threads that spin between calls and slow every other candidate down)."""
    import scipy.linalg.cython_blas  # noqa: F401
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    return threadpool_limits(limits=1, user_api="blas")


def tapes(f, x):
    """The interpreted and the compiled tape of ``f`` at ``x``."""
    return jittape.record(f, x), jittape.record(f, x).compile()


def verify(label, f, x, hands, interp, comp):
    x2 = x + 0.01 * np.cos(np.arange(x.size))
    for pt in (x, x2):
        ref = next(iter(hands.values()))(pt)
        for name, g in [*hands.items(), ("interpreted", interp.gradient),
                        ("compiled", comp.gradient)]:
            err = rel_error(g(pt), ref)
            if not err < TOL:
                sys.exit(f"*** wrong gradient: {label}, {name}: relative error {err:.2e}")


def measure(quick):
    """``{key: {"label", "n", candidate: median seconds}}`` of every problem."""
    settings = Settings(quick)
    out = {}
    for key, label, f, x, hands in problems():
        interp, comp = tapes(f, x)
        verify(label, f, x, hands, interp, comp)
        fns = {name: (lambda g=g: g(x)) for name, g in hands.items()}
        fns["interpreted"] = lambda: interp.gradient(x)
        fns["compiled"] = lambda: comp.gradient(x)
        samples = sample_times(fns, settings)
        out[key] = {"label": label, "n": int(x.size), "tape bytes": int(interp.nbytes),
                    "pool bytes": int(np.asarray(interp.arrays.pool).nbytes),
                    **{name: stats(s)["median"] for name, s in samples.items()}}
        print(f"  {label}: done", file=sys.stderr, flush=True)
    return out


def rss():
    """Resident set size of this process, bytes (Linux ``/proc``; None elsewhere)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def memory(quick):
    """Rows ``(problem, replay, calls, RSS before, RSS after)``."""
    rows = []
    for key, label, f, x, _ in problems():
        calls = (10_000 if quick else 100_000) if key == "rosen1000" else \
            (100 if quick else 1_000)
        for name, tape in zip(("interpreted", "compiled"), tapes(f, x)):
            for _ in range(1_000 if key == "rosen1000" else 10):
                tape.gradient(x)
            before = rss()
            for _ in range(calls):
                tape.gradient(x)
            rows.append((label, name, calls, before, rss()))
    return rows


def ratio_rows(res):
    rows = []
    for r in res.values():
        hand = min(v for k, v in r.items() if k.startswith("hand"))
        rows.append([r["label"], fmt_time(hand), fmt_time(r["interpreted"]),
                     fmt_ratio(r["interpreted"] / hand), fmt_time(r["compiled"]),
                     fmt_ratio(r["compiled"] / hand)])
    return rows


def before_after(after, before):
    header = ["problem", "interpreted ÷ hand, before", "after", "compiled ÷ hand, before",
              "after", "target (best replay)", "met?"]
    rows = []
    for key, r in after.items():
        hand = lambda d: min(v for k, v in d.items() if k.startswith("hand"))
        b = before.get(key) if before else None
        best = min(r["interpreted"], r["compiled"]) / hand(r)
        target = "≤ 1.5" if key in TARGETS else "—"
        met = ("yes" if best <= 1.5 else f"**no** ({best:.2f}x)") if key in TARGETS \
            else "—"
        rows.append([r["label"], fmt_ratio(b["interpreted"] / hand(b)) if b else "—",
                     fmt_ratio(r["interpreted"] / hand(r)),
                     fmt_ratio(b["compiled"] / hand(b)) if b else "—",
                     fmt_ratio(r["compiled"] / hand(r)), target, met])
    return table(header, rows)


def size_rows(after, before):
    """The recorded tapes' sizes: all columns, and the integer pool (index arrays) alone."""
    def mib(r, k):
        return f"{r[k] / 2**20:.2f} MiB" if r and k in r else "—"
    rows = []
    for key, r in after.items():
        b = before.get(key) if before else None
        rows.append([r["label"], mib(b, "tape bytes"), mib(r, "tape bytes"),
                     mib(b, "pool bytes"), mib(r, "pool bytes")])
    return table(["problem", "tape, before", "after", "of it the pool, before", "after"],
                 rows)


def hand_rows(res):
    rows = []
    for r in res.values():
        rows.append([r["label"], fmt_time(r["hand loops"]),
                     fmt_time(r["hand BLAS"]) if "hand BLAS" in r else "—"])
    return table(["problem", "hand loops", "hand BLAS"], rows)


def run_before(path, quick):
    """The measurements of the jittape in ``path``, from a child process."""
    env = dict(os.environ, BENCH_ARRAYS_JITTAPE=str(Path(path).resolve()))
    args = [sys.executable, __file__, "--child"] + (["--quick"] if quick else [])
    out = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def report(after, before, before_path, mem, quick, elapsed):
    header = ["problem", "hand Numba (faster)", "interpreted", "÷ hand", "compiled", "÷ hand"]
    parts = ["# Array tapes at memory speed: replayed gradients ÷ hand Numba", "",
             *machine_info("python benchmarks/bench_arrays.py" + (" --quick" if quick else "")
                           + (f" --before {before_path}" if before_path else ""), 1,
                           elapsed, quick), "",
             "All candidates of a problem timed side by side in one run, round-robin, BLAS on "
             "one thread: medians; compare the ratios, not the absolute times. `hand` = the "
             "faster of the hand-written Numba gradients (loops; for logistic regression also "
             "the BLAS variant, `np.dot` in Numba). Definitions: the docstring of "
             "`benchmarks/bench_arrays.py`.", "",
             "## Ratios before and after", "", before_after(after, before), "",
             (f"Before: jittape from `{before_path}`, measured in a child process of the same "
              "run (its own hand references timed beside it)." if before else
              "No before run (`--before PATH`)."), "",
             "## Tape sizes", "", size_rows(after, before), "",
             "## After: times", "", table(header, ratio_rows(after)), "",
             "## Hand references", "", hand_rows(after), ""]
    if before:
        parts += ["## Before: times", "", table(header, ratio_rows(before)), ""]
    if mem:
        rows = [[p, name, f"{calls:,}", f"{b / 2**20:.1f} MiB", f"{a / 2**20:.1f} MiB",
                 f"{(a - b) / 2**20:+.1f} MiB"] for p, name, calls, b, a in mem]
        parts += ["## Memory over many replays (after)", "",
                  table(["problem", "replay", "calls", "RSS before", "RSS after", "change"],
                        rows), ""]
    return "\n".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--before", type=Path, help="a checkout holding the old jittape")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    t0 = time.perf_counter()
    limit = blas_one_thread()
    if args.child:
        print(json.dumps(measure(args.quick)))
        return
    before = run_before(args.before, args.quick) if args.before else None
    after = measure(args.quick)
    mem = memory(args.quick)
    text = report(after, before, args.before, mem, args.quick, time.perf_counter() - t0)
    del limit
    print(text)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)


if __name__ == "__main__":
    main()

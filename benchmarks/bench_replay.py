"""Replay benchmark: "record once, replay natively" against hand-written Numba and SciPy.

Run::

    PYTHONPATH=. python benchmarks/bench_replay.py            # full, a few minutes on 2 cores
    PYTHONPATH=. python benchmarks/bench_replay.py --quick    # smoke run, about a minute
    PYTHONPATH=. python benchmarks/bench_replay.py --output /tmp/replay.md

The results go to ``benchmarks/results/replay.md`` (or ``--output``) and to stdout.

What is measured
----------------
Two replays of every problem, each ``tape.gradient(x)`` on its own ``tape =
jittape.record(f, x)``:

* **interpreted**: the tape as recorded. The Numba forward sweep (recomputes every record
  from x) and reverse sweep of the tape interpreter (the sweeps generated for the tape's op
  set), plus the Python around them;
* **compiled**: a second tape recorded the same way, then ``tape.compile()``
  (:mod:`jittape.compiler.kernel`): one generated Numba function for the whole tape (scalar records
  as locals, elementwise array records fused into loops), which ``tape.gradient`` then
  calls. The scalar-loop LJ tapes are *rerolled* (:mod:`jittape.compiler.reroll`: the pair loop's
  body emitted once, as a loop over an index table). ``compile()`` refuses
  (``ValueError``) tapes whose kernel would still exceed
  ``jittape.compiler.kernel.MAX_STATEMENTS`` statements; those are reported as "not compilable
  (N statements)", N read from the error message, and only the interpreter replays them.

Quality bars, one row each in the first table:

1. **Replay vs hand-written Numba.** The reference is an analytic gradient written in this
   file as a ``@numba.njit(cache=True)`` loop (the fastest thing a user could write by
   hand): extended Rosenbrock ``np.sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)`` at
   n = 1 000 and 100 000; the Lennard-Jones cluster energy of N = 13 and N = 38 atoms
   (n = 3N coordinates), both as vectorized NumPy (``jittape.demo.lj_energy``: a dozen array
   records) and as scalar Python loops (``jittape.demo.lj_energy_loops``: about 18 scalar
   records per pair). Bar: replay <= 3x the hand-written gradient, applied to the best
   available replay (compiled where the tape compiles, else interpreted); both ratios are
   shown.
2. **Replay vs eager.** Eager is ``jittape.grad(f)(x)`` (runs f in Python, recording every
   operation, then the reverse sweep). Bar on the scalar-loop LJ form: replay >= 10x faster,
   i.e. replay/eager <= 0.1. The vectorized forms are reported without a bar. ("met?"
   uses the best available replay here too.)
3. **Per-call overhead.** ``tape.gradient(x)`` on Rosenbrock n = 10, where the arithmetic is
   negligible, interpreted and compiled; bar: <= 5 microseconds (absolute) for the best of
   the two, the hand-written gradient beside them.
4. **Optimizer.** ``jittape.minimize(rosen, x0, method="BFGS")`` vs
   ``scipy.optimize.minimize(scipy.optimize.rosen, x0, jac=scipy.optimize.rosen_der,
   method="BFGS")`` at n = 100, ``x0 = np.linspace(-1.2, 1, 100)``: whole-call wall time
   (jittape's includes recording its tape once per call; its ``taped`` objective compiles
   only once interpreting has cost more than a compile would, which never happens within
   one call here, so this row is interpreted only); bar <= 1.5x. Details: iterations,
   evaluations, distance between the two solutions, how many leading iterates (from
   ``callback``) agree to 1e-8, and the first call in this process (Numba start, SciPy
   imports) reported separately from the timed, warmed-up calls. BLAS is limited to one
   thread during these runs if ``threadpoolctl`` is installed (BFGS makes small BLAS calls
   whose threading is pure noise on a busy 2-core machine).
5. **Tapes and start-up.** Records, value elements and bytes of every replayed tape; the
   time from a fresh interpreter to the first replayed gradient and the first
   ``jittape.minimize``, with Numba's on-disk cache empty (cold: compiles the sweeps) and
   filled (warm), each with its own temporary ``NUMBA_CACHE_DIR``.
6. **Compile time.** For every tape that compiles, the time of ``tape.compile()`` in a
   fresh interpreter (the tape recorded first, untimed), cold: ``JITTAPE_CACHE_DIR`` (where
   the generated source goes) and ``NUMBA_CACHE_DIR`` each a new empty temporary directory,
   so the source is generated and written and Numba compiles the kernel and the rules it
   calls; warm: a second fresh interpreter reusing the same two directories (source present,
   machine code loaded from Numba's cache). One pair of directories per tape and trial. The
   code generation alone (``jittape.compiler.kernel.kernel_source``; for the refused tapes, the
   time ``compile()`` takes to raise) is timed in this process.

A breakdown table splits each interpreted replay: the Python wrapper (``tape.gradient``
minus a direct ``jittape.sweeps.opsets.replay_gradient`` call), the forward sweep alone, the reverse
sweep alone (with its adjoint buffer), and the buffer copy/zeroing that every replay does.
Another splits each compiled replay: the Python wrapper (``tape.gradient`` minus a direct
call of the compiled kernel, ``tape._kernel``) and the kernel with ``want_grad=False``
(forward only: the value).

Every gradient is checked first: the hand-written Numba gradients against NumPy/SciPy
references (``scipy.optimize.rosen_der``, ``jittape.demo.lj_gradient_hand``), then eager
and replayed gradients, interpreted and compiled (at the recording point and at a second
point) against them, with relative error ``max|g - ref| / max|ref| < 1e-8``, and the replayed
values at the second point. The script exits non-zero on a mismatch.

How to read the numbers
-----------------------
Times are medians of samples taken round-robin: in each round one sample of every
candidate of a problem (each sample loops the call long enough for the timer), so load from
other processes on a shared machine hits all candidates alike. Each sample starts with one
untimed call, so it measures the steady state of back-to-back calls: replay allocates two
buffers the size of the tape's values per call (17.6 MB at Rosenbrock n = 100 000), and the
first call after another candidate has freed a lot of memory (eager) takes fresh pages from
the kernel, about 4 400 page faults, 2.4x the steady time. Compare the **ratios**
across runs and machines (``ratio = replay / reference``: below 1 means replay is faster);
compile times in fresh interpreters are single wall-clock measurements (medians of a few
trials in the full mode) and move more with the load on the machine;
absolute times move with the machine. "met?" compares the ratio (or, for the overhead row,
the absolute time) with the bar.
"""

import argparse
import contextlib
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import numba  # noqa: E402
import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.optimize  # noqa: E402

import jittape  # noqa: E402
from jittape.compiler import kernel as C  # noqa: E402
from jittape.sweeps.opsets import for_tape  # noqa: E402
from jittape.demo import lj_energy, lj_energy_loops, lj_gradient_hand  # noqa: E402
from benchmarks.common import cold_and_warm_startup, cpu_info, kernel_call  # noqa: E402
from benchmarks.problems.lj import lj_grad_njit  # noqa: E402
from benchmarks.problems.lj import start as lj_start  # noqa: E402
from benchmarks.problems.rosenbrock import rosen_grad_njit  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "replay.md"
REL_TOL = 1e-8  # gradient check: max|g - ref| / max|ref|
BFGS_N = 100


# --- workloads ---------------------------------------------------------------------------
def rosen(x):
    """Extended Rosenbrock function, vectorized NumPy (what jittape records)."""
    return np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def workloads():
    """(key, label, f, x, hand-njit gradient, NumPy/SciPy reference gradient)."""
    cases = []
    for n in (10, 1_000, 100_000):
        cases.append((f"rosen{n}", "Rosenbrock", rosen, np.linspace(-1.2, 1.0, n),
                      rosen_grad_njit, scipy.optimize.rosen_der))
    for form, f in (("vectorized", lj_energy), ("loops", lj_energy_loops)):
        for n_atoms in (13, 38):
            cases.append((f"lj{n_atoms}-{form}", f"LJ{n_atoms} {form}", f, lj_start(n_atoms),
                          lj_grad_njit, lj_gradient_hand))
    return cases


# --- compiled tapes ----------------------------------------------------------------------
def compiled_tape(f, x):
    """A second tape of ``f`` at ``x``, compiled; or why not.

    Returns a dict: ``tape`` (compiled ``Tape`` or None), ``statements`` (kernel statements:
    source lines if it compiled, the count from the ``ValueError`` message if refused),
    ``reason`` (the message, or None), ``codegen`` (seconds: ``kernel_source`` for a tape
    that compiles, the refused ``compile()`` call otherwise) and ``compile_here`` (seconds
    of ``compile()`` in this process, whatever the state of the default caches).
    """
    tape = jittape.record(f, x)
    t0 = time.perf_counter()
    try:
        tape.compile()
    except ValueError as exc:
        elapsed = time.perf_counter() - t0
        msg = str(exc)
        m = re.search(r"(\d+) statements", msg)
        if m is None:
            raise  # not the "too long" refusal: a different failure, report it as is
        return dict(tape=None, statements=int(m.group(1)), reason=msg, codegen=elapsed,
                    compile_here=None)
    compile_here = time.perf_counter() - t0
    if not tape.compiled:
        sys.exit("\n*** tape.compile() returned but tape.compiled is False")
    t0 = time.perf_counter()
    src = C.kernel_source(tape)
    codegen = time.perf_counter() - t0
    return dict(tape=tape, statements=len(src.splitlines()), reason=None, codegen=codegen,
                compile_here=compile_here)


def not_compilable(c):
    return f"not compilable ({c['statements']:,} statements)"


# --- correctness -------------------------------------------------------------------------
def rel_error(got, want):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return np.inf
    return float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-300))


def check(label, how, got, want, tol=REL_TOL):
    err = rel_error(got, want)
    if not err < tol:  # also catches NaN
        sys.exit(f"\n*** WRONG GRADIENT for {label} ({how}): relative error {err:.3e} "
                 f"(tolerance {tol:g}), shapes {np.shape(got)} vs {np.shape(want)}.\n"
                 f"*** Not benchmarking a wrong result: aborting.")
    return err


def verify(label, f, x, hand, ref, ctape=None):
    """Check hand-njit vs the NumPy/SciPy reference, then eager and replay (interpreted,
    and compiled if ``ctape``) vs hand-njit at the recording point and at a second point;
    return the worst replay error."""
    x2 = x + 0.01 * np.cos(np.arange(x.size))
    worst = 0.0
    for pt, name in ((x, "x"), (x2, "x'")):
        check(label, f"hand njit at {name} vs NumPy reference", hand(pt), ref(pt), 1e-10)
        check(label, f"eager grad at {name}", jittape.grad(f)(pt), hand(pt))
    tape = jittape.record(f, x)
    for how, tp in (("replay", tape), ("compiled replay", ctape)):
        if tp is None:
            continue
        for pt, name in ((x, "x (recording point)"), (x2, "x' (new point)")):
            worst = max(worst, check(label, f"{how} at {name}", tp.gradient(pt), hand(pt)))
        v = tp.value(x2)
        if not abs(v - f(x2)) <= 1e-10 * max(1.0, abs(f(x2))):
            sys.exit(f"\n*** WRONG VALUE for {label} ({how} at x'): {v!r} vs {f(x2)!r}")
    return worst


# --- timing ------------------------------------------------------------------------------
def calibrate(fn, target):
    """Calls of ``fn`` per sample so that one sample lasts about ``target`` seconds."""
    fn()  # warm-up
    t0 = timeit.default_timer()
    fn()
    once = max(timeit.default_timer() - t0, 1e-7)
    return max(1, int(target / once)), once


def median_times(fns, quick, budget=None):
    """Median seconds per call of each ``fns[name]()``, sampled round-robin.

    One sample = ``number`` back-to-back calls lasting about ``target`` seconds; one round
    = one sample of every function. As many rounds as fit in ``budget`` seconds, between
    ``min_rounds`` and ``max_rounds``.
    """
    target, default_budget, min_rounds, max_rounds = ((0.005, 1.2, 5, 9) if quick
                                                      else (0.03, 9.0, 9, 51))
    budget = default_budget if budget is None else budget
    numbers, round_time = {}, 0.0
    for name, fn in fns.items():
        numbers[name], once = calibrate(fn, target)
        round_time += numbers[name] * once
    rounds = int(min(max_rounds, max(min_rounds, budget / round_time)))
    samples = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            fn()  # untimed: the sample measures back-to-back calls (see the docstring)
            samples[name].append(timeit.timeit(fn, number=numbers[name]) / numbers[name])
    return {name: statistics.median(s) for name, s in samples.items()}, rounds


def measure(key, label, f, x, hand, quick, comp):
    """Replay (interpreted and compiled), hand-njit, eager and the replay breakdowns of one
    workload, side by side. ``comp`` is the :func:`compiled_tape` dict."""
    tape = jittape.record(f, x)
    t = tape.arrays
    cols = (t.op, t.a, t.b, t.k, t.c, t.off, t.pool)
    in_ids = np.asarray(t.inputs, dtype=np.int64)
    out = tape.out_id
    o_out = int(t.off[out])
    nval = t.val.size
    buf = t.val.copy()
    buf[t.off[in_ids[0]]:t.off[in_ids[0] + 1]] = x
    grad = jittape.grad(f)
    sw = for_tape(t)

    def reverse_only():
        adj = np.zeros(nval)
        adj[o_out] = 1.0
        sw.reverse_sweep(*cols, buf, adj, 0, out + 1)

    def sweeps_only():  # what tape.gradient runs, without its Python around the sweeps
        val = t.val.copy()
        val[t.off[in_ids[0]]:t.off[in_ids[0] + 1]] = x
        sw.forward_sweep(*cols, val, 0, t.n_records)
        adj = np.zeros(nval)
        adj[o_out] = 1.0
        sw.reverse_sweep(*cols, val, adj, 0, out + 1)

    fns = {
        "replay": lambda: tape.gradient(x),
        "hand": lambda: hand(x),
        "eager": lambda: grad(x),
        "numba_call": sweeps_only,
        "forward": lambda: sw.forward_sweep(*cols, buf, 0, t.n_records),
        "reverse": reverse_only,
        "buffers": lambda: (t.val.copy(), np.zeros(nval), np.zeros(x.size)),
    }
    ctape = comp["tape"]
    if ctape is not None:
        fns["compiled"] = lambda: ctape.gradient(x)  # (the kernel: what Tape._fast calls)
        fns["kernel_call"] = kernel_call(ctape._kernel, x, True)
        fns["kernel_fwd"] = kernel_call(ctape._kernel, x, False)
    times, rounds = median_times(fns, quick)
    return dict(key=key, label=label, n=x.size, records=tape.n_records, elements=nval,
                pool=t.pool.size, nbytes=tape.nbytes, rounds=rounds, comp=comp,
                kernel_elements=None if ctape is None else int(ctape._kernel[1].size),
                **times)


# --- the optimizer -----------------------------------------------------------------------
def blas_one_thread():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext(), "BLAS threads not limited (no threadpoolctl)"
    return (threadpool_limits(limits=1, user_api="blas"),
            "BLAS limited to 1 thread (threadpoolctl)")


def bfgs_x0():
    return np.linspace(-1.2, 1.0, BFGS_N)


def run_jittape(x0, **kw):
    return jittape.minimize(rosen, x0, method="BFGS", **kw)


def run_scipy(x0, **kw):
    return scipy.optimize.minimize(scipy.optimize.rosen, x0, jac=scipy.optimize.rosen_der,
                                   method="BFGS", **kw)


def first_calls():
    """The first minimize of each kind in this process (before any other jittape work)."""
    x0 = bfgs_x0()
    t0 = time.perf_counter()
    run_jittape(x0)
    t1 = time.perf_counter()
    run_scipy(x0)
    t2 = time.perf_counter()
    return {"jittape": t1 - t0, "scipy": t2 - t1}


def measure_minimize(quick):
    x0 = bfgs_x0()
    ctx, note = blas_one_thread()
    with ctx:
        iters = {"jittape": [], "scipy": []}
        rj = run_jittape(x0, callback=lambda xk: iters["jittape"].append(np.copy(xk)))
        rs = run_scipy(x0, callback=lambda xk: iters["scipy"].append(np.copy(xk)))
        times, rounds = median_times({"jittape": lambda: run_jittape(x0),
                                      "scipy": lambda: run_scipy(x0)}, quick,
                                     budget=3.0 if quick else 25.0)
    agree = 0
    for a, b in zip(iters["jittape"], iters["scipy"]):
        if np.max(np.abs(a - b)) > 1e-8:
            break
        agree += 1
    ones = np.ones(BFGS_N)
    return dict(times=times, rounds=rounds, note=note, agree=agree,
                iters=(len(iters["jittape"]), len(iters["scipy"])),
                nit=(rj.nit, rs.nit), nfev=(rj.nfev, rs.nfev), njev=(rj.njev, rs.njev),
                fun=(rj.fun, rs.fun), success=(rj.success, rs.success),
                dist=float(np.linalg.norm(rj.x - rs.x)),
                err=(float(np.linalg.norm(rj.x - ones)), float(np.linalg.norm(rs.x - ones))),
                stats=rj.replay_stats)


# --- start-up in fresh interpreters ------------------------------------------------------
STARTUP_SNIPPET = textwrap.dedent("""
    import json, time
    t0 = time.perf_counter()
    import numpy as np
    import jittape
    t1 = time.perf_counter()
    rosen = lambda x: np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    tape = jittape.record(rosen, np.linspace(-1.2, 1.0, 10))
    t2 = time.perf_counter()
    tape.gradient(np.linspace(-1.0, 1.0, 10))
    t3 = time.perf_counter()
    x0 = np.linspace(-1.2, 1.0, 100)
    jittape.minimize(rosen, x0, method="BFGS")
    t4 = time.perf_counter()
    jittape.minimize(rosen, x0, method="BFGS")
    t5 = time.perf_counter()
    print(json.dumps({"import": t1 - t0, "record": t2 - t1, "first_replay": t3 - t2,
                      "first_minimize": t4 - t3, "second_minimize": t5 - t4}))
""")


# --- compile time in fresh interpreters --------------------------------------------------
COMPILE_SNIPPET = textwrap.dedent("""
    import json, sys, time
    sys.path.insert(0, sys.argv[1])
    import bench_replay as B
    import jittape
    case = next(c for c in B.workloads() if c[0] == sys.argv[2])
    f, x = case[2], case[3]
    tape = jittape.record(f, x)
    t0 = time.perf_counter()
    tape.compile()
    t1 = time.perf_counter()
    tape.gradient(x)
    t2 = time.perf_counter()
    print(json.dumps({"compile": t1 - t0, "first_gradient": t2 - t1,
                      "compiled": tape.compiled}))
""")


def run_compile(key, jittape_dir, numba_dir):
    env = dict(os.environ, JITTAPE_CACHE_DIR=str(jittape_dir), NUMBA_CACHE_DIR=str(numba_dir),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT),
                                                        os.environ.get("PYTHONPATH")])))
    proc = subprocess.run([sys.executable, "-c", COMPILE_SNIPPET,
                           str(ROOT / "benchmarks"), key], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        sys.exit(f"compile subprocess ({key}) failed:\n{proc.stderr}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if not out["compiled"]:
        sys.exit(f"compile subprocess ({key}): tape.compiled is False after compile()")
    return out


def measure_compile(keys, quick):
    """Cold and warm ``tape.compile()`` of each tape in ``keys``: {key: (cold, warm)}, the
    medians over ``trials`` pairs of fresh directories."""
    trials = 1 if quick else 3
    runs = {k: ([], []) for k in keys}
    for _ in range(trials):
        for k in keys:
            with tempfile.TemporaryDirectory(prefix="jittape-src-cache-") as jd, \
                    tempfile.TemporaryDirectory(prefix="jittape-numba-cache-") as nd:
                runs[k][0].append(run_compile(k, jd, nd))
                runs[k][1].append(run_compile(k, jd, nd))
    med = lambda rs: {f: statistics.median(r[f] for r in rs) for f in ("compile",
                                                                        "first_gradient")}
    return {k: (med(c), med(w)) for k, (c, w) in runs.items()}, trials


# --- report ------------------------------------------------------------------------------
def fmt_time(s):
    if s < 1e-3:
        return f"{s * 1e6:.2f} us" if s < 1e-5 else f"{s * 1e6:.1f} us"
    if s < 1.0:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def fmt_ratio(r):
    return f"{r:.3f}" if r < 0.1 else f"{r:.2f}" if r < 10 else f"{r:.1f}"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def bars_table(res, mini):
    rows = []

    def row(problem, r, ref_time, bar_text, bar, absolute=False):
        interp, comp = r["replay"], r.get("compiled")
        best, which = ((comp, "compiled") if comp is not None and comp < interp
                       else (interp, "interpreted"))
        ratio = best / ref_time
        met = (best <= bar) if absolute else (ratio <= bar) if bar else None
        rows.append([problem, f"{r['n']:,}", fmt_time(interp),
                     not_compilable(r["comp"]) if comp is None else fmt_time(comp),
                     fmt_time(ref_time), fmt_ratio(interp / ref_time),
                     "—" if comp is None else fmt_ratio(comp / ref_time), bar_text,
                     "—" if met is None else f"{'yes' if met else '**no**'} ({which})"])

    for key in ("rosen1000", "rosen100000", "lj13-vectorized", "lj38-vectorized",
                "lj13-loops", "lj38-loops"):
        r = res[key]
        row(f"1. {r['label']}: replay / hand njit", r, r["hand"], "≤ 3", 3.0)
    for key in ("lj13-loops", "lj38-loops"):
        r = res[key]
        row(f"2. {r['label']}: replay / eager", r, r["eager"], "≤ 0.1 (10x faster)", 0.1)
    for key in ("lj13-vectorized", "lj38-vectorized", "rosen1000", "rosen100000"):
        r = res[key]
        row(f"2. {r['label']}: replay / eager", r, r["eager"], "—", None)
    r = res["rosen10"]
    row("3. Rosenbrock per-call overhead: replay / hand njit", r, r["hand"], "replay ≤ 5 us",
        5e-6, absolute=True)
    tj, ts = mini["times"]["jittape"], mini["times"]["scipy"]
    ratio = tj / ts
    rows.append(["4. BFGS Rosenbrock: jittape.minimize / scipy (rosen_der)", f"{BFGS_N:,}",
                 fmt_time(tj), "— (not compiled, see below)", fmt_time(ts),
                 fmt_ratio(ratio), "—", "≤ 1.5", "yes" if ratio <= 1.5 else "**no**"])
    return table(["problem", "n", "interpreted replay", "compiled replay", "reference",
                  "ratio interpreted", "ratio compiled", "bar", "met? (on the best)"], rows)


def wrapper(diff, total):
    """The Python wrapper's share: a difference of two medians, lost in noise when small."""
    return fmt_time(diff) if diff > 0.02 * total else "≈ 0 (noise)"


def breakdown_table(results):
    header = ["problem", "records", "elements", "tape.gradient", "Python wrapper",
              "replay_gradient (1 Numba call)", "forward sweep", "reverse sweep (+adj)",
              "buffers (copy+zero)", "hand njit", "ns/element (fwd+rev)"]
    rows = []
    for r in results:
        rows.append([r["label"] + f" n={r['n']:,}", f"{r['records']:,}", f"{r['elements']:,}",
                     fmt_time(r["replay"]), wrapper(r["replay"] - r["numba_call"], r["replay"]),
                     fmt_time(r["numba_call"]), fmt_time(r["forward"]), fmt_time(r["reverse"]),
                     fmt_time(r["buffers"]), fmt_time(r["hand"]),
                     f"{(r['forward'] + r['reverse']) / r['elements'] * 1e9:.2f}"])
    return table(header, rows)


def compiled_table(results):
    header = ["problem", "kernel source lines", "kernel buffer elements",
              "interpreted tape.gradient", "compiled tape.gradient", "Python wrapper",
              "kernel call", "kernel forward only", "hand njit", "compiled / hand",
              "interpreted / compiled"]
    rows = []
    for r in results:
        c = r["comp"]
        name = r["label"] + f" n={r['n']:,}"
        if c["tape"] is None:
            rows.append([name, not_compilable(c), "—", fmt_time(r["replay"])] + ["—"] * 4
                        + [fmt_time(r["hand"]), "—", "—"])
            continue
        rows.append([name, f"{c['statements']:,}", f"{r['kernel_elements']:,}",
                     fmt_time(r["replay"]), fmt_time(r["compiled"]),
                     wrapper(r["compiled"] - r["kernel_call"], r["compiled"]),
                     fmt_time(r["kernel_call"]), fmt_time(r["kernel_fwd"]),
                     fmt_time(r["hand"]), fmt_ratio(r["compiled"] / r["hand"]),
                     fmt_ratio(r["replay"] / r["compiled"])])
    return table(header, rows)


def compile_time_table(results, ctimes):
    header = ["tape", "records", "kernel source lines", "code generation (this process)",
              "cold `compile()`", "warm `compile()`", "cold / warm",
              "first gradient after compile (cold / warm)"]
    rows = []
    for r in results:
        c = r["comp"]
        name = r["label"] + f" n={r['n']:,}"
        if c["tape"] is None:
            rows.append([name, f"{r['records']:,}", not_compilable(c),
                         fmt_time(c["codegen"]) + " (to refuse)", "—", "—", "—", "—"])
            continue
        cold, warm = ctimes[r["key"]]
        rows.append([name, f"{r['records']:,}", f"{c['statements']:,}",
                     fmt_time(c["codegen"]), fmt_time(cold["compile"]),
                     fmt_time(warm["compile"]), fmt_ratio(cold["compile"] / warm["compile"]),
                     f"{fmt_time(cold['first_gradient'])} / "
                     f"{fmt_time(warm['first_gradient'])}"])
    return table(header, rows)


def tape_table(results):
    header = ["problem", "n", "records", "value elements", "pool entries", "tape bytes",
              "B/record", "eager grad", "rounds"]
    rows = [[r["label"], f"{r['n']:,}", f"{r['records']:,}", f"{r['elements']:,}",
             f"{r['pool']:,}", f"{r['nbytes']:,}", f"{r['nbytes'] / r['records']:,.1f}",
             fmt_time(r["eager"]), r["rounds"]] for r in results]
    return table(header, rows)


def minimize_table(mini, first):
    j, s = 0, 1
    rows = [
        ["wall time per call (median, warmed up)", fmt_time(mini["times"]["jittape"]),
         fmt_time(mini["times"]["scipy"])],
        ["first call in this process", fmt_time(first["jittape"]), fmt_time(first["scipy"])],
        ["iterations (nit)", mini["nit"][j], mini["nit"][s]],
        ["function evaluations (nfev / njev)", f"{mini['nfev'][j]} / {mini['njev'][j]}",
         f"{mini['nfev'][s]} / {mini['njev'][s]}"],
        ["final f", f"{mini['fun'][j]:.3e}", f"{mini['fun'][s]:.3e}"],
        ["success", mini["success"][j], mini["success"][s]],
        ["‖x − 1‖ (distance to the minimizer)", f"{mini['err'][j]:.2e}",
         f"{mini['err'][s]:.2e}"],
        ["callback iterates", mini["iters"][j], mini["iters"][s]],
    ]
    st = mini["stats"]
    return "\n".join([
        table(["BFGS, Rosenbrock n=100, x0 = linspace(-1.2, 1, 100)", "jittape.minimize",
               "scipy + rosen_der"], rows), "",
        f"- distance between the two solutions ‖x_jittape − x_scipy‖ = {mini['dist']:.2e}",
        f"- leading iterates that agree to 1e-8 (max-norm): {mini['agree']} of "
        f"{min(mini['iters'])}",
        f"- jittape replay stats per call: {st.recordings} recording(s), {st.replays} "
        f"replays, {st.guard_failures} guard failures, {st.compilations} compilations "
        f"(`taped`'s default `compile=\"auto\"`)",
        f"- {mini['note']}; {mini['rounds']} interleaved rounds",
        "- the first jittape call also loads the Numba sweeps from the cache (or compiles "
        "them if the cache is stale); the first scipy call pays SciPy's lazy set-up."])


def startup_table(cold, warm):
    labels = [("import", "`import numpy, jittape`"),
              ("record", "first `jittape.record` (rosen n=10)"),
              ("first_replay", "first `tape.gradient` (Numba sweeps loaded/compiled)"),
              ("first_minimize", "first `jittape.minimize` (BFGS n=100, imports SciPy)"),
              ("second_minimize", "second `jittape.minimize` (steady state)")]
    rows = [[text, fmt_time(cold[k]), fmt_time(warm[k])] for k, text in labels]
    total = lambda r: r["import"] + r["record"] + r["first_replay"] + r["first_minimize"]
    rows.append(["**import to first minimize done**", f"**{fmt_time(total(cold))}**",
                 f"**{fmt_time(total(warm))}**"])
    return table(["fresh interpreter", "cold Numba cache", "warm Numba cache"], rows)


def code_state():
    """Which jittape code is in the checkout: commit and files with uncommitted changes."""
    try:  # other work may be in progress in the checkout: say which code was measured
        git = lambda *a: subprocess.run(["git", *a], cwd=ROOT, capture_output=True,
                                        text=True, timeout=30).stdout.rstrip("\n")
        dirty = [ln[3:] for ln in git("status", "--porcelain", "--", "jittape").splitlines()
                 if len(ln) > 3]
        return (f"jittape at commit {git('rev-parse', '--short', 'HEAD') or '?'}"
                + (f", uncommitted changes in {', '.join(dirty)}" if dirty else ""))
    except (OSError, subprocess.SubprocessError):
        return "jittape commit unknown (no git)"


def machine_info(code_start):
    code_end = code_state()
    code = code_start if code_end == code_start else (
        f"{code_start} at the start; the checkout changed during the run, at the end: "
        f"{code_end}")
    cpu, usable = cpu_info()
    return [f"- date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
            f"- code: {code}",
            f"- platform: {platform.platform()}",
            f"- CPU: {cpu}; {os.cpu_count()} logical CPUs, {usable} usable",
            f"- python {platform.python_version()}, numpy {np.__version__}, "
            f"numba {numba.__version__}, scipy {scipy.__version__}, "
            f"jittape {jittape.__version__}"]


def report(results, worst, mini, first, cold, warm, trials, ctimes, ctrials, quick,
           elapsed, code_start):
    res = {r["key"]: r for r in results}
    return "\n".join([
        "# jittape replay benchmark: record once, replay natively", "",
        *machine_info(code_start), f"- mode: {'quick (`--quick`)' if quick else 'full'}; "
        f"run time {elapsed:.0f} s", "",
        "Medians of round-robin samples, all candidates of a problem measured side by side "
        "in one run on a shared, noisy machine: compare the ratios, not the absolute times. "
        "`interpreted replay` = `tape.gradient(x)` on `tape = jittape.record(f, x)`; "
        "`compiled replay` = the same on a second tape after `tape.compile()` "
        "(`jittape.compiler.kernel`; tapes whose kernel would exceed "
        f"`MAX_STATEMENTS` = {C.MAX_STATEMENTS} statements are refused and stay "
        "interpreted); `ratio` = replay / reference (below 1: replay is faster); the bars "
        "apply to the best available replay. Every gradient was verified first "
        f"(worst replay relative error, interpreted and compiled, {worst:.1e}, tolerance "
        f"{REL_TOL:g}). See the docstring of `benchmarks/bench_replay.py` for the "
        "definitions.", "",
        "## Quality bars", "", bars_table(res, mini), "",
        "## Compiled replay", "", compiled_table(results), "",
        "`Python wrapper` = compiled `tape.gradient` − a direct call of the compiled kernel "
        "(`kernel(val, adj, x, pool, True)` on reused work buffers, as a replay calls it: "
        "runs the forward and the reverse code and returns the gradient); `kernel forward only` "
        "= the same call with `want_grad=False` (the value alone). `kernel buffer elements` "
        "= size of the compact value buffer (the interpreter's is `elements` in the next "
        "table); `kernel source lines` = lines of `jittape.compiler.kernel.kernel_source(tape)` "
        "(what `compile()` counts as statements, give or take a line); for the refused "
        "tapes, the statement count from `compile()`'s `ValueError`.", "",
        f"## Compile time (median of {ctrials} fresh interpreter(s) each)", "",
        compile_time_table(results, ctimes), "",
        "Cold: `JITTAPE_CACHE_DIR` and `NUMBA_CACHE_DIR` new empty directories (source "
        "generated and written, the kernel and the element rules it calls compiled by "
        "Numba). Warm: a second fresh interpreter with the same two directories (source "
        "found, machine code loaded from Numba's cache). Only `tape.compile()` is timed "
        "(it ends with one call of the kernel); the tape is recorded first. `code "
        "generation` is `jittape.compiler.kernel.kernel_source` in this process (part of every "
        "`compile()`, cold or warm); for refused tapes, the time `compile()` takes to "
        "raise its `ValueError`.", "",
        "## Where the interpreted replay time goes", "", breakdown_table(results), "",
        "`Python wrapper` = `tape.gradient` − the two sweep calls it makes, done directly "
        "(copy the value buffer, load x, forward sweep, seed and reverse sweep). `forward sweep` and `reverse sweep` are timed alone, each a "
        "separate Numba call (the reverse one allocating and seeding its adjoint buffer); "
        "`buffers` is what every replay allocates (`val.copy()`, `np.zeros` of the adjoints "
        "and of the gradient). Timed separately, so the parts need not add up exactly.", "",
        "## Optimizer: BFGS on Rosenbrock", "", minimize_table(mini, first), "",
        "## Tapes", "", tape_table(results), "",
        f"## Start-up (median of {trials} fresh interpreter(s) each)", "",
        startup_table(cold, warm), "",
        "Cold: a new empty `NUMBA_CACHE_DIR` (Numba compiles the sweeps). Warm: the same "
        "directory after the cold run filled it, the second run after it reported.", ""])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer and shorter samples, one trial of each fresh-interpreter "
                             "measurement (about a minute, mostly the cold start-up)")
    parser.add_argument("--output", type=Path, default=RESULTS,
                        help=f"Markdown file to write (default {RESULTS.relative_to(ROOT)})")
    args = parser.parse_args()
    t_start = time.perf_counter()
    code_start = code_state()

    ctx, _ = blas_one_thread()
    with ctx:
        first = first_calls()  # before anything else: includes Numba's start in-process
    cases = workloads()
    comps = {}
    for key, label, f, x, _, _ in cases:
        comps[key] = compiled_tape(f, x)
        c = comps[key]
        print(f"  {label} n={x.size}: " + (not_compilable(c) if c["tape"] is None else
              f"compiled in {fmt_time(c['compile_here'])} (default caches)"), file=sys.stderr)
    worst = 0.0
    for key, label, f, x, hand, ref in cases:
        worst = max(worst, verify(label, f, x, hand, ref, comps[key]["tape"]))
    print(f"gradients verified (worst replay relative error {worst:.1e}); timing ... "
          f"[{time.perf_counter() - t_start:.0f} s]", file=sys.stderr)
    results = []
    for key, label, f, x, hand, _ in cases:
        results.append(measure(key, label, f, x, hand, args.quick, comps[key]))
        print(f"  {label} n={x.size}: done", file=sys.stderr)
    mini = measure_minimize(args.quick)
    print(f"  BFGS: done [{time.perf_counter() - t_start:.0f} s]", file=sys.stderr)
    cold, warm, trials = cold_and_warm_startup(STARTUP_SNIPPET, ROOT, args.quick)
    print(f"  start-up: done [{time.perf_counter() - t_start:.0f} s]", file=sys.stderr)
    ctimes, ctrials = measure_compile([k for k, c in comps.items() if c["tape"] is not None],
                                      args.quick)
    print(f"  compile time: done [{time.perf_counter() - t_start:.0f} s]", file=sys.stderr)

    text = report(results, worst, mini, first, cold, warm, trials, ctimes, ctrials,
                  args.quick, time.perf_counter() - t_start, code_start)
    print(text)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    print(f"written to {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()

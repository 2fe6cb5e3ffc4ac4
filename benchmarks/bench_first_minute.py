"""The first minute of a user's program: what it sees without ``jittape.wait_compiled()``.

Run::

    python benchmarks/bench_first_minute.py [--quick] [--cases loop,runs,script]
        [--jittape PATH] [--output benchmarks/results/first_minute.md] [--repeat R]

(issue 25, item 6). scipy.optimize calls the gradient in a tight loop from the first second;
a benchmarking script warms up with a few calls and starts its timer. Every figure comes
from a NEW Python process (this script with ``--child KIND``), run with:

* **cache** ``cold``: ``NUMBA_CACHE_DIR`` and ``JITTAPE_CACHE_DIR`` are new empty temporary
  directories; ``warm``: the same directories after one earlier run of the same case (the
  cold run, whose compile worker is waited for: see *linger*);
* **mode** ``default`` (``JITTAPE_BACKGROUND`` unset) or ``foreground``
  (``JITTAPE_BACKGROUND=0``);
* ``JITTAPE_QUIET=1``; ``--jittape PATH`` (default: this repository) first on ``PYTHONPATH``,
  so that an older checkout can be measured (the problems are always this repository's);
  its ``git rev-parse --short HEAD`` and uncommitted changes go into the report.

The child's stdout and stderr go to files (jittape's compile worker inherits stderr and may
outlive the child; a pipe would make the parent wait for it). Times in the child are
``time.perf_counter()`` minus ``T0``, the first statement of this file (before NumPy and
jittape are imported); the parent's clock is the same (CLOCK_MONOTONIC on Linux), so
**start-up** = the child's T0 minus the parent's spawn time (the interpreter's start), and
**wall** = spawn to exit as the parent's ``wait()`` sees it. **linger** = how long processes
of the child's session (the compile worker) outlived it; the parent waits for them before
the next run. The problems' objectives and starts are read from ``benchmarks/problems`` by
source (:func:`problem_source`) in the loop and run cases, which a user's program would
write without Numba: importing those modules imports Numba (their hand gradients) and would
hide Numba's import from jittape's first calls.

Cases and figures:

1. **loop**: Rosenbrock n = 10 (the classic start), ``tape = jittape.record(rosen, x)``,
   then ``tape.gradient(x)`` back to back. *first gradient*: T0 to the return of the first
   ``tape.gradient``. The calls are timed one by one (difference of consecutive
   ``perf_counter`` stamps: each includes a stamp and a list append, ~0.1 us) and binned by
   start time into 50 ms bins; a bin's figure is the median of its calls. *steady*: the
   median of the bin medians over the last second. *machine code by*: the end of the first
   bin after which the replays run machine code (compiled sweeps, or the tape's own kernel;
   before it, tier 0 interprets the sweeps in CPython). *tier 1 at*: the start (since T0) of
   the first bin from which every bin's median is <= 3x steady (with a steady kernel replay
   of 1.2 us, compiled sweeps at 3.6 us do not count: this is then the kernel's arrival).
   The loop runs until the tape has *settled* (its compiled kernel is in, or it lost its
   trial to the interpreter: ``tape.compiled`` / ``tape.lost_trial``) for 1 s, or until
   30 s since T0 (the cap: "not reached", its tier-1 figure then meaningless). *calls*:
   gradients in the loop.
   *busy*: the loop starts right after the first gradient; *idle*: the main thread sleeps
   5 s (10 ms steps) after the first gradient, then loops (the compile worker, or thread,
   has the time to itself).
2. **runs**: whole programs: ``jittape.minimize(rosen, start(n), method="L-BFGS-B")`` at
   n = 10, 100, 1000 and ``jittape.minimize(lj_energy_loops, lj.start(13), method="BFGS")``
   (LJ13). *wall* is the median over ``--repeat`` fresh cold/warm pairs; *ratio* =
   default wall / foreground wall (target <= 1.1); *first iteration*: T0 to scipy's first
   callback. *first gradient*: a separate child per cell timing
   ``jittape.value_and_grad(f)(x0)`` from T0 (target <= 3 s cold).
3. **script**: the way a benchmarking script times: ``tf = jittape.taped(f)``, 3 warm-up
   calls of ``tf.grad(x)``, then 3 blocks of 1,000 calls, each call timed by stamps as in
   the loop; the hand-written Numba gradient of the problem (``rosen_grad_njit``,
   ``morse_grad_njit``, ``logreg_grad_blas_njit`` on ``logreg.data(10_000, 100)``) warmed
   up first (its compile excluded), then timed the same way in the same child after
   jittape's blocks. *warm-ups*: the 3 warm-up calls (seconds from the first call of
   ``tf.grad``; the hand gradient's compile is before it). *first 1,000*: the median per
   call of the first block; *best*: the least block median. *ratio* = jittape / hand
   (targets <= 3x, <= 1.5x logistic regression); *-ovh*: the same ratio with the empty
   stamp loop's median per call (measured in the child) taken off both. Problems:
   Rosenbrock n = 10, 1e3, 1e5; Morse loops N = 12, 27, 38; logistic regression
   10,000 x 100. *kernel*: whether the tape ran its compiled kernel after the warm-ups and
   after each block (``k`` yes, ``-`` no).

``--quick``: the busy loop, runs at n = 10 and 100 (one repeat), the script case on
Rosenbrock n = 10 and 1e3 in the default mode. Results go to ``--output`` (Markdown) and the
same name with ``.json`` (every number, the loop's bins included) and ``.png`` (per-call time
against time since start in the loop case, if matplotlib is installed).
"""

import time

T0 = time.perf_counter()  # a child's process start: the first statement, before any import

import argparse  # noqa: E402
import ast  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

SCRIPT = Path(__file__).resolve()
ROOT = SCRIPT.parent.parent
if "--child" not in sys.argv:  # the parent's helpers; a child imports nothing of benchmarks/
    sys.path.insert(0, str(ROOT))
    from benchmarks.children import (blas_line, child_env, code_line, describe_code,  # noqa
                                     log, spawn, temp_work, write_results)
PROBLEMS_DIR = ROOT / "benchmarks" / "problems"
BIN, HOLD, CAP, IDLE = 0.05, 1.0, 30.0, 5.0  # loop: bin width, settled hold, cap, idle (s)
TIER = 3.0  # a bin is at tier 1 when its median per call is at most TIER x the steady one
CALLS = 1000  # script case: calls per block
RUNS = [("rosen", 10, "L-BFGS-B"), ("rosen", 100, "L-BFGS-B"), ("rosen", 1000, "L-BFGS-B"),
        ("lj", 13, "BFGS")]
SCRIPTS = [("rosen", 10), ("rosen", 1000), ("rosen", 100_000), ("morse", 12), ("morse", 27),
           ("morse", 38), ("logreg", [10_000, 100])]
MODES = ("default", "foreground")


# --- the child: one case in a new process ----------------------------------------------------
def problem_source(module, names):
    """The functions ``names`` of ``benchmarks/problems/<module>.py``, executed from its
    source alone with NumPy as ``np`` (the module would import Numba)."""
    import numpy as np
    path = PROBLEMS_DIR / f"{module}.py"
    defs = [node for node in ast.parse(path.read_text()).body
            if isinstance(node, ast.FunctionDef) and node.name in names]
    space = {"np": np}
    exec(compile(ast.Module(body=defs, type_ignores=[]), str(path), "exec"), space)
    return [space[name] for name in names]


def objective(spec):
    """``(f, x0)`` of a loop or run case, without Numba."""
    if spec["problem"] == "rosen":
        rosen, start = problem_source("rosenbrock", ("rosen", "start"))
        return rosen, start(spec["n"])
    from jittape.demo import lj_energy_loops
    (start,) = problem_source("lj", ("start",))
    return lj_energy_loops, start(spec["n"])


def since():
    return time.perf_counter() - T0


def settled(tape):
    """Whether the tape's tiering is over: its kernel is in, or lost its trial."""
    return bool(getattr(tape, "compiled", False)) or getattr(tape, "lost_trial", None) is not None


def machine_code(tape):
    """Whether the tape's replays run machine code: its kernel, or compiled sweeps (tier 0
    runs them interpreted until the compile process is done)."""
    sweeps = getattr(tape.arrays, "sweeps", None)
    return bool(tape.compiled) or hasattr(getattr(sweeps, "reverse_sweep", None), "signatures")


def gradient_loop(tape, x, cap):
    """``tape.gradient(x)`` back to back, binned: ``([[start since T0, calls, median, min,
    seconds], ...], settled at)``, until settled for :data:`HOLD` s or ``cap`` s since T0."""
    import numpy as np
    grad, pc, bins, settled_at = tape.gradient, time.perf_counter, [], None
    while True:
        t = start = pc()
        end, times = start + BIN, []
        add = times.append
        while t < end:
            grad(x)
            t2 = pc()
            add(t2 - t)
            t = t2
        a = np.array(times)
        bins.append([start - T0, a.size, float(np.median(a)), float(a.min()), t - start,
                     machine_code(tape)])
        now = t - T0
        if settled_at is None and settled(tape):
            settled_at = now
        if now >= cap or (settled_at is not None and now - settled_at >= HOLD):
            return bins, settled_at


def child_loop(spec):
    import jittape
    f, x = objective(spec)
    out = {"import": since()}
    tape = jittape.record(f, x)
    tape.gradient(x)
    out["first"] = since()
    until = time.perf_counter() + spec["idle"]
    while time.perf_counter() < until:
        time.sleep(0.01)
    out["bins"], out["settled"] = gradient_loop(tape, x, spec["cap"])
    return out


def child_first(spec):
    import jittape
    f, x = objective(spec)
    out = {"import": since()}
    jittape.value_and_grad(f)(x)
    out["first"] = since()
    return out


def child_minimize(spec):
    import jittape
    f, x = objective(spec)
    out = {"import": since(), "first_iteration": None}

    def callback(xk, *rest):
        if out["first_iteration"] is None:
            out["first_iteration"] = since()
    res = jittape.minimize(f, x, method=spec["method"], callback=callback)
    out.update(nit=int(res.nit), nfev=int(res.nfev), fun=float(res.fun),
               success=bool(res.success), solved=since())
    return out


def script_problem(spec):
    """``(f, hand Numba gradient, x0)`` from this repository's ``benchmarks/problems``."""
    import importlib
    sys.path.insert(0, str(ROOT))  # (jittape is imported already: from --jittape's PATH)
    name, size = spec["problem"], spec["n"]
    module = importlib.import_module("benchmarks.problems." + {"rosen": "rosenbrock"}.get(
        name, name))
    if name == "logreg":
        X, y = module.data(*size)
        p = module.build(tuple(size), name)
        return p.f, lambda w: module.logreg_grad_blas_njit(w, X, y), p.x0
    p = module.build(size, name)
    return p.f, p.grad_numba, p.x0


def stamped(fn, x, calls=CALLS):
    """``[median, mean, min, max]`` per call of ``calls`` back-to-back ``fn(x)``, each timed
    as the difference of consecutive ``perf_counter`` stamps."""
    pc, times = time.perf_counter, []
    add = times.append
    t = pc()
    for _ in range(calls):
        fn(x)
        t2 = pc()
        add(t2 - t)
        t = t2
    return [statistics.median(times), sum(times) / calls, min(times), max(times)]


def kernel_in(tf):
    return "".join("k" if getattr(e.tape, "compiled", False) else "-"
                   for e in getattr(tf, "_entries", [])) or "?"


def child_script(spec):
    import numpy as np
    import jittape
    out = {"import": since()}
    f, hand, x = script_problem(spec)
    hand(x), hand(x)  # its compile (or cache load) excluded
    out["hand_ready"] = since()
    tf = jittape.taped(f)
    for _ in range(3):
        tf.grad(x)
    out["warmups"], out["kernel"] = since(), [kernel_in(tf)]
    out["jittape"] = []
    for _ in range(3):
        out["jittape"].append(stamped(tf.grad, x))
        out["kernel"].append(kernel_in(tf))
    out["hand"] = [stamped(hand, x) for _ in range(3)]
    out["overhead"] = stamped(lambda v: None, x)[0]
    g, h = tf.grad(x), hand(x)
    out["rel_error"] = float(np.max(np.abs(g - h)) / np.max(np.abs(h)))
    return out


CHILDREN = {"loop": child_loop, "first": child_first, "minimize": child_minimize,
            "script": child_script}


def child_main(kind, spec, result):
    out = CHILDREN[kind](json.loads(spec))
    import jittape
    out.update(t0=T0, end=since(), jittape_file=jittape.__file__)
    Path(result).write_text(json.dumps(out))


# --- the parent: processes (benchmarks/children.py) ---------------------------------------
def cold_warm(kind, spec, mode, args):
    """The case in fresh cache directories (cold), then again in them (warm)."""
    with temp_work("jittape-fm-") as work:
        env = child_env(args.jittape, work, mode, args.blas_threads)
        cold = spawn(SCRIPT, kind, spec, env, work)
        warm = spawn(SCRIPT, kind, spec, env, work)
    for cache, data in (("cold", cold), ("warm", warm)):
        data.update(mode=mode, cache=cache)
        log(f"  {kind} {spec} {mode} {cache}: wall {data['wall']:.2f} s, linger "
            f"{data['linger']:.2f} s")
    return [cold, warm]


# --- the cases ----------------------------------------------------------------------------------
def loop_summary(run):
    """Steady per-call time, tier-1 time, calls, from a loop child's bins."""
    bins = run.get("bins") or [[0, 0, float("nan"), 0, 0]]
    end = bins[-1][0] + bins[-1][4]
    steady = statistics.median(b[2] for b in bins if b[0] >= end - HOLD) if len(bins) > 1 \
        else bins[-1][2]
    k = len(bins)
    while k > 0 and bins[k - 1][2] <= TIER * steady:
        k -= 1
    machine = [b[0] + b[4] for b in bins if len(b) > 5 and b[5]]  # (end of the bin)
    run.update(steady=steady, tier1=bins[k][0] if k < len(bins) else None,
               machine=machine[0] if machine else None,
               calls=sum(b[1] for b in bins), capped=run.get("settled") is None,
               first_bin=bins[0][2])
    return run


def case_loop(args):
    runs = []
    for idle in ((0.0,) if args.quick else (0.0, IDLE)):
        for mode in MODES:
            spec = dict(problem="rosen", n=10, idle=idle, cap=args.cap)
            runs += [loop_summary(r) for r in cold_warm("loop", spec, mode, args)]
    return runs


def case_runs(args):
    out = {"minimize": [], "first": []}
    for problem, n, method in RUNS[:2] if args.quick else RUNS:
        for _ in range(args.repeat):
            for mode in MODES:
                spec = dict(problem=problem, n=n, method=method)
                out["minimize"] += cold_warm("minimize", spec, mode, args)
                out["first"] += cold_warm("first", dict(problem=problem, n=n), mode,
                                          args)
    return out


def case_script(args):
    runs = []
    for problem, n in SCRIPTS[:2] if args.quick else SCRIPTS:
        for mode in MODES[:1] if args.quick else MODES:
            runs += cold_warm("script", dict(problem=problem, n=n), mode, args)
    return runs


CASES = {"loop": case_loop, "runs": case_runs, "script": case_script}


# --- the report ---------------------------------------------------------------------------------
def fmt(s, unit="s"):
    from benchmarks.common import fmt_time
    return "—" if s is None else (f"{s:.2f} s" if unit == "s" else fmt_time(s))


def loop_table(runs):
    from benchmarks.common import fmt_int, table
    rows = [["idle 5 s" if r["spec"]["idle"] else "busy", r["mode"], r["cache"],
             fmt(r.get("startup")), fmt(r.get("first")),
             fmt(r.get("machine")),
             "not reached (cap)" if r["capped"] else fmt(r["tier1"]), fmt(r.get("settled")),
             fmt(r["first_bin"], "t"), fmt(r["steady"], "t"), fmt_int(r["calls"]),
             fmt(r["wall"]), fmt(r["linger"])] for r in runs]
    return table(["main thread", "mode", "cache", "start-up", "first gradient",
                  "machine code by", "tier 1 at", "settled at", "first bin /call",
                  "steady /call", "calls", "wall", "linger"], rows, ["---"] * 3 + ["---:"] * 10)


def median_of(runs, key, **match):
    vals = [r[key] for r in runs if r.get(key) is not None
            and all(r["spec"].get(k, r.get(k)) == v for k, v in match.items())]
    return (statistics.median(vals), min(vals), max(vals)) if vals else (None, None, None)


def spread(m):
    return "—" if m[0] is None else f"{m[0]:.2f} s ({m[1]:.2f}-{m[2]:.2f})"


def runs_table(out):
    from benchmarks.common import fmt_ratio, table
    rows = []
    for problem, n, method in RUNS:
        for cache in ("cold", "warm"):
            m = {mode: median_of(out["minimize"], "wall", problem=problem, n=n, mode=mode,
                                 cache=cache) for mode in MODES}
            if m["default"][0] is None:
                continue
            f = {mode: median_of(out["first"], "first", problem=problem, n=n, mode=mode,
                                 cache=cache) for mode in MODES}
            it = {mode: median_of(out["minimize"], "first_iteration", problem=problem, n=n,
                                  mode=mode, cache=cache) for mode in MODES}
            rows.append([f"{'LJ' if problem == 'lj' else 'Rosenbrock'} {n} ({method})", cache,
                         spread(m["default"]), spread(m["foreground"]),
                         fmt_ratio(m["default"][0] / m["foreground"][0]),
                         fmt(f["default"][0]), fmt(f["foreground"][0]),
                         fmt(it["default"][0]), fmt(it["foreground"][0]),
                         fmt(median_of(out["minimize"], "linger", problem=problem, n=n,
                                       mode="default", cache=cache)[0])])
    return table(["problem", "cache", "wall default", "wall foreground", "ratio d/f",
                  "first gradient d", "first gradient f", "first iteration d",
                  "first iteration f", "linger d"], rows, ["---", "---"] + ["---:"] * 8)


def script_row(r):
    from benchmarks.common import fmt_ratio, fmt_time
    jt, hd, ovh = r["jittape"], r["hand"], r["overhead"]
    best_j, best_h = min(b[0] for b in jt), min(b[0] for b in hd)
    n = r["spec"]["n"]
    label = {"rosen": "Rosenbrock n = {:,}", "morse": "Morse loops N = {}"}.get(
        r["spec"]["problem"], "logreg {0[0]:,} x {0[1]}").format(n)
    return [label, r["mode"], r["cache"], fmt(r["warmups"] - r["hand_ready"]), fmt_time(jt[0][0]),
            fmt_time(best_j), fmt_time(hd[0][0]), fmt_time(best_h),
            fmt_ratio(jt[0][0] / hd[0][0]), fmt_ratio(best_j / best_h),
            fmt_ratio((best_j - ovh) / max(best_h - ovh, 1e-9)),
            " ".join(r["kernel"]), f"{r['rel_error']:.0e}"]


def script_table(runs):
    from benchmarks.common import table
    rows = [script_row(r) for r in runs if "jittape" in r]
    return table(["problem", "mode", "cache", "warm-ups", "jittape first 1,000",
                  "jittape best", "hand first 1,000", "hand best", "ratio first",
                  "ratio best", "ratio best -ovh", "kernel", "error"], rows,
                 ["---"] * 3 + ["---:"] * 10)


def report(args, results, code, elapsed):
    from benchmarks.common import machine_info
    command = "python benchmarks/bench_first_minute.py " + " ".join(sys.argv[1:])
    info = [ln for ln in machine_info(command, "-", elapsed, args.quick)
            if not ln.startswith(("- code:", "- threads:"))]
    text = ["# The first minute: jittape as a user's program meets it", ""] + info + [
        f"- measured: {describe_code(*code)}",
        f"- BLAS threads in the children: {blas_line(args.blas_threads)}",
        "- each figure from a new process; figures are defined in the script's docstring", ""]
    if "loop" in results:
        text += ["## Gradients in a loop from process start (Rosenbrock n = 10)", "",
                 loop_table(results["loop"]), ""]
    if "runs" in results:
        text += [f"## Whole runs (median (min-max) of {args.repeat})", "",
                 runs_table(results["runs"]), ""]
    if "script" in results:
        text += ["## A benchmarking script: 3 warm-ups, then 3 x 1,000 timed calls", "",
                 script_table(results["script"]), "",
                 "Stamp-loop overhead per call (included in both): "
                 + ", ".join(sorted({f"{r['overhead'] * 1e9:.0f} ns"
                                     for r in results["script"] if "overhead" in r})), ""]
    return "\n".join(text)


def plot(loop_runs, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(9, 5))
    for r in loop_runs:
        bins = r.get("bins") or []
        label = f"{'idle' if r['spec']['idle'] else 'busy'}, {r['mode']}, {r['cache']}"
        ax.plot([b[0] for b in bins], [b[2] * 1e6 for b in bins], label=label)
    ax.set(yscale="log", xlabel="time since process start (s)",
           ylabel="median per call in 50 ms bins (µs)",
           title="tape.gradient(x), Rosenbrock n = 10, from process start")
    ax.legend(fontsize=8)
    fig.savefig(path, dpi=120, bbox_inches="tight")


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--cases", default="loop,runs,script",
                   help="comma-separated, of: " + ", ".join(CASES))
    p.add_argument("--jittape", type=Path, default=ROOT,
                   help="checkout whose jittape is measured (default: this one)")
    p.add_argument("--output", type=Path, default=ROOT / "benchmarks/results/first_minute.md")
    p.add_argument("--repeat", type=int, default=None,
                   help="cold/warm pairs per whole-run cell (default 3, quick 1)")
    p.add_argument("--cap", type=float, default=CAP, help="loop case: seconds at most")
    p.add_argument("--blas-threads", type=int, default=None,
                   help="set OPENBLAS/OMP/MKL_NUM_THREADS in the children (default: unset)")
    args = p.parse_args()
    args.repeat = args.repeat or (1 if args.quick else 3)
    args.jittape = args.jittape.resolve()
    return args


def main():
    args = parse()
    start, t = code_line(args.jittape), time.perf_counter()
    results = {}
    for case in args.cases.split(","):
        log(f"{case}:")
        results[case] = CASES[case](args)
    code = (start, code_line(args.jittape))
    text = report(args, results, code, time.perf_counter() - t)
    write_results(args.output, text, {"code": code, "results": results})
    if "loop" in results:
        plot(results["loop"], args.output.with_suffix(".png"))
    print(text)


if __name__ == "__main__":
    if "--child" in sys.argv:
        a = sys.argv
        child_main(a[a.index("--child") + 1], a[a.index("--spec") + 1], a[a.index("--result") + 1])
    else:
        main()

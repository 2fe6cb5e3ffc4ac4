"""Call overhead and eager recording speed, before and after: ``results/overhead.md``.

Run::

    python benchmarks/bench_overhead.py            # full run, a few minutes on 2 cores
    python benchmarks/bench_overhead.py --quick    # smoke run, about a minute

Two versions of jittape are measured: this checkout (*after*) and a baseline commit
(*before*, default ``67381a0``, exported with ``git archive`` into a temporary directory).
They cannot share a process (same package name), so each is measured by a worker process
(``--worker ROOT``), alternating before/after for several rounds; each figure is the median
over the rounds of the worker's own median. PyTorch and HIPS autograd are timed inside every
*after* worker, so the eager ratios are side by side in one process.

What is measured (Rosenbrock ``np.sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)``, n = 10)
-------------------------------------------------------------------------------------------
* ``sweeps``: the two Numba calls an interpreted replay makes, on preallocated buffers
  (``forward_sweep(*cols, val)``, ``reverse_sweep(*cols, val, adj, out)``); ``kernel``: one
  call of a compiled tape's kernel (``kernel(val, adj, x, pool, True)``).
* ``tape.gradient(x)`` of an interpreted tape (``auto_compile`` off) and of a compiled one;
  ``taped(f).grad(x)`` with ``compile=False`` and with ``compile=True``.
* overhead = that call minus the Numba call(s) it makes (``sweeps`` or ``kernel``): the
  Python around them, buffers included.
* the default path: ``record(f, x).gradient(x)`` and ``taped(f).grad(x)`` with no option,
  after 3 s of calls (past the auto-compile estimate, 1.02 s of replay for this tape; then the
  compile waited for): *before*, a recorded tape never compiled itself.

Eager (``jittape.grad(f)(x)``: record, freeze, reverse sweep)
-------------------------------------------------------------
* ``jittape.demo.lj_energy_loops`` (Lennard-Jones, Python loops over ``x[i]``) and the Morse
  cluster of ``benchmarks/problems/morse.py`` written the same way (``** 0.5`` and ``np.exp``
  of active scalars), N = 13 and 38 atoms: µs per scalar record, and the same code differentiated eagerly by PyTorch
  (``torch.autograd.grad``, 0-d tensors, one thread) and HIPS autograd.
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

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "overhead.md"
sys.path.insert(0, str(ROOT))  # benchmarks.common, from a checkout without installing
BASE = "67381a0"
from benchmarks.problems.morse import morse_energy_loops  # noqa: E402 (after the path)


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


# --- the worker: one version of jittape ----------------------------------------------------
def cluster(n_atoms):
    rng = np.random.default_rng(n_atoms)
    return (np.arange(3 * n_atoms) % 7 + rng.uniform(-0.2, 0.2, 3 * n_atoms)) * 1.1


def replay_fns(jittape):
    from benchmarks.common import kernel_call  # this checkout's
    from jittape.sweeps import tiers
    x = np.linspace(-1.0, 1.0, 10)
    tape = jittape.record(rosen, x)
    tape.auto_compile = False  # an attribute nobody reads before the change: harmless
    tape.gradient(x)
    tiers.wait_compiled()
    t = tape.arrays
    cols, val, adj, out = t.columns, t.val.copy(), np.zeros_like(t.val), tape.out_id
    n = t.n_records
    sw = t.sweeps
    fw, rv = sw.forward_sweep, sw.reverse_sweep
    ctape = jittape.record(rosen, x).compile()
    call = kernel_call(ctape._kernel, x, True)
    tf = jittape.taped(rosen, compile=False)
    tc = jittape.taped(rosen, compile=True)
    for f in (tf, tc):
        f.grad(x), f.grad(x)
    ref = jittape.grad(rosen)(x)
    for g in (tape.gradient(x), ctape.gradient(x), tf.grad(x), tc.grad(x)):
        assert np.allclose(g, ref, rtol=1e-12, atol=0), "wrong gradient"
    assert tc.stats.compilations == 1 and ctape.compiled

    code = getattr(fw, "func", fw).py_func.__code__  # a multi-part sweep: its bound runner
    # (the sweeps take a record range since the custom rules)
    if "lo" in code.co_varnames[:code.co_argcount]:
        def sweeps():
            fw(*cols, val, 0, n)
            rv(*cols, val, adj, 0, out + 1)
    else:
        def sweeps():
            fw(*cols, val)
            rv(*cols, val, adj, out)
    return {"sweeps": sweeps, "gradient": lambda: tape.gradient(x),
            "taped": lambda: tf.grad(x), "kernel": call,
            "gradient compiled": lambda: ctape.gradient(x),
            "taped compiled": lambda: tc.grad(x)}


def default_fns(jittape):
    """The default path after 3 s of calls: past the auto-compile estimate."""
    from jittape.sweeps import tiers
    x = np.linspace(-1.0, 1.0, 10)
    tape, tf = jittape.record(rosen, x), jittape.taped(rosen)
    for f in (tape.gradient, tf.grad):
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 3.0:
            f(x)
        tiers.wait_compiled()
        f(x)
    return ({"default gradient": lambda: tape.gradient(x), "default taped": lambda: tf.grad(x)},
            {"default gradient compiled": bool(tape._kernel is not None),
             "default taped compiled": bool(tf._entries[0].tape._kernel is not None)})


def eager_fns(jittape, peers):
    from jittape import demo
    fns, records = {}, {}
    for n_atoms in (13, 38):
        x = cluster(n_atoms)
        for name, f in (("LJ", demo.lj_energy_loops), ("Morse", morse_energy_loops)):
            key = f"{name}{n_atoms}"
            g = jittape.grad(f)
            records[key] = jittape.record(f, x).n_records
            fns[f"{key} jittape"] = (lambda g=g, x=x: g(x))
            want = g(x)
            if not peers:
                continue
            import autograd
            import autograd.numpy as anp
            import torch
            xt = torch.tensor(x, requires_grad=True)
            if name == "LJ":
                tf_, af = f, f
            else:
                tf_ = lambda z: morse_energy_loops(z, torch.exp)  # noqa: E731
                af = lambda z: morse_energy_loops(z, anp.exp)  # noqa: E731
            tg = (lambda tf_=tf_, xt=xt: torch.autograd.grad(tf_(xt), xt)[0])
            ag = autograd.grad(af)
            assert np.allclose(tg().numpy(), want, rtol=1e-10), key
            assert np.allclose(ag(x), want, rtol=1e-10), key
            fns[f"{key} torch"] = tg
            fns[f"{key} autograd"] = (lambda ag=ag, x=x: ag(x))
    return fns, records


def worker(root, quick, peers):
    from benchmarks.common import Settings, sample_times, stats  # this checkout's
    sys.path.insert(0, str(root))
    import jittape
    if peers:
        import torch
        torch.set_num_threads(1)
    settings = Settings(quick)
    out = {}
    for fns in (replay_fns(jittape),):
        for k, v in sample_times(fns, settings).items():
            out[k] = stats(v)["median"]
    dfns, flags = default_fns(jittape)
    for k, v in sample_times(dfns, settings).items():
        out[k] = stats(v)["median"]
    efns, records = eager_fns(jittape, peers)
    for k, v in sample_times(efns, settings).items():
        out[k] = stats(v)["median"]
    print(json.dumps({"times": out, "records": records, "flags": flags}))


# --- the driver ----------------------------------------------------------------------------
def export(commit, into):
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)


def run_worker(root, quick, peers):
    env = dict(os.environ, PYTHONPATH=str(ROOT), JITTAPE_QUIET="1")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(root)]
    cmd += ["--quick"] if quick else []
    cmd += [] if peers else ["--no-peers"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        sys.exit(f"worker for {root} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def median_of(runs, key):
    return statistics.median(r["times"][key] for r in runs)


def report(before, after, base, rounds, quick, elapsed, peers):
    from benchmarks.common import fmt_ratio, fmt_time, machine_info, table
    us = lambda s: f"{s * 1e6:.2f} µs"  # noqa: E731
    b = {k: median_of(before, k) for k in before[0]["times"]}
    a = {k: median_of(after, k) for k in after[0]["times"]}
    rows = []
    for label, call, numba, bar in (
            ("`tape.gradient(x)`, interpreted", "gradient", "sweeps", 2e-6),
            ("`taped(f, compile=False).grad(x)`", "taped", "sweeps", 3e-6),
            ("`tape.gradient(x)`, compiled", "gradient compiled", "kernel", 2e-6),
            ("`taped(f, compile=True).grad(x)`", "taped compiled", "kernel", 3e-6)):
        ob, oa = b[call] - b[numba], a[call] - a[numba]
        rows.append([label, us(b[call]), us(a[call]), us(b[numba]), us(a[numba]), us(ob), us(oa),
                     f"≤ {bar * 1e6:.0f} µs", "yes" if oa <= bar else "**no**"])
    flags_b, flags_a = before[-1]["flags"], after[-1]["flags"]
    default_rows = [[label, fmt_time(b[k]), fmt_time(a[k]),
                     "compiled" if flags_b[k + " compiled"] else "interpreted",
                     "compiled" if flags_a[k + " compiled"] else "interpreted"]
                    for label, k in (("`record(f, x).gradient(x)`", "default gradient"),
                                     ("`taped(f).grad(x)`", "default taped"))]
    rec = after[-1]["records"]
    eager_rows = []
    for key in rec:
        jb, ja = b[f"{key} jittape"], a[f"{key} jittape"]
        row = [key, f"{rec[key]:,}", fmt_time(jb), fmt_time(ja),
               f"{jb / before[-1]['records'][key] * 1e6:.2f}", f"{ja / rec[key] * 1e6:.2f}"]
        if peers:
            torch_t, ag_t = a[f"{key} torch"], a[f"{key} autograd"]
            row += [fmt_time(torch_t), fmt_time(ag_t), fmt_ratio(torch_t / ja),
                    fmt_ratio(ag_t / ja)]
        eager_rows.append(row)
    eager_head = ["workload", "records", "eager before", "eager after", "µs/record before",
                  "µs/record after"]
    if peers:
        eager_head += ["PyTorch eager", "HIPS autograd", "PyTorch / jittape after",
                       "autograd / jittape after"]
    lines = ["# jittape call overhead and eager recording: before and after", ""]
    lines += machine_info(f"python benchmarks/bench_overhead.py{' --quick' if quick else ''}",
                          1, elapsed, quick)
    lines += [f"- before: commit {base}; after: this checkout. {rounds} round(s) of one worker "
              f"process each, alternating; each figure the median over the rounds of the "
              f"worker's median.", "",
              "Shared, noisy 2-core machine: compare the ratios and differences within a "
              "column pair, not absolute times across runs. Definitions in the docstring of "
              "`benchmarks/bench_overhead.py`.", "",
              "## Call overhead (Rosenbrock n = 10)", "",
              "overhead = the call minus the Numba call(s) it makes (`sweeps`: the interpreted "
              "forward and reverse sweep on preallocated buffers; `kernel`: the compiled "
              "tape's kernel). Bars from issue 12.", "",
              table(["call", "before", "after", "Numba before", "Numba after",
                     "overhead before", "overhead after", "bar", "met (after)?"], rows), "",
              "## The default path (no option), after 3 s of calls", "",
              table(["call", "before", "after", "before runs", "after runs"], default_rows), "",
              "## Eager gradients of scalar loops (`jittape.grad(f)(x)`)", "",
              table(eager_head, eager_rows), ""]
    RESULTS.write_text("\n".join(lines))
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--base", default=BASE, help="baseline commit (default %(default)s)")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--no-peers", action="store_true", help="skip PyTorch and autograd")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    peers = not args.no_peers
    if args.worker:
        return worker(Path(args.worker), args.quick, peers)
    rounds = args.rounds or (1 if args.quick else 3)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="jittape-base-") as d:
        export(args.base, d)
        before, after = [], []
        for r in range(rounds):
            print(f"round {r + 1}/{rounds}", file=sys.stderr, flush=True)
            before.append(run_worker(Path(d), args.quick, False))  # peers: once, below
            after.append(run_worker(ROOT, args.quick, peers))
    report(before, after, args.base, rounds, args.quick, time.perf_counter() - t0, peers)

if __name__ == "__main__":
    main()

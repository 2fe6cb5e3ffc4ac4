"""jittape benchmark suite: gradients of NumPy objectives, jittape against hand-written
gradients and other AD tools.

Run from the repository root::

    python -m benchmarks --quick          # all problems, under 3 minutes on 2 cores
    python -m benchmarks                  # full: more samples, compile times of every tape
    python benchmarks/run.py --only gmm-d2-K5-1k,ba1 --tools jittape-replay,jax-jit
    python -m benchmarks --list           # the problem and tool keys

Writes ``benchmarks/results/latest.md`` (tables, machine info, command),
``benchmarks/results/latest.json`` (every number) and ``benchmarks/results/latest.png``
(needs matplotlib; skipped with a note otherwise), or into ``--output-dir``.

Problems (``benchmarks/problems``): extended Rosenbrock n = 10, 1 000, 100 000; ADBench's
GMM objective on its inputs (d, K, n) = (2, 5, 1k), (10, 25, 1k), (2, 25, 10k); ADBench's
bundle adjustment (sum of squared residuals) on ba1 and ba5; L2-regularized logistic
regression (X 10 000 x 100); the Lennard-Jones cluster energy of N = 13 and 38 atoms,
vectorized and as scalar loops; the Morse cluster energy (rho = 6) of N = 13 and 38 atoms as
scalar loops; cmpad's three problems (``det_by_minor`` 3 x 3, ``llsq_obj`` with 9
coefficients and 100 points, ``an_ode`` with 100 components and 9 RK4 steps); and ``scipy.optimize.minimize(method="BFGS")`` on Rosenbrock
n = 100 (total time to converge, :mod:`benchmarks.bfgs`). Each problem has an analytic
gradient derived by hand in NumPy and one in ``@numba.njit`` (the reference limit); the two
are checked against each other, and the GMM and BA objectives against ADBench's unit-test
values, before anything is timed.

Tools (:mod:`benchmarks.tools`): hand NumPy, hand Numba, jittape eager
(``jittape.grad(f)``), jittape replay (``jittape.record(f, x0)`` then ``tape.gradient``),
jittape compiled (the same after ``tape.compile()``, where it compiles), SciPy finite
differences (``scipy.optimize.approx_fprime``, small n only), and when installed JAX
(``jax.jit(jax.grad(f))`` and eager ``jax.grad(f)``, float64), PyTorch eager (float64, CPU,
``torch.autograd.grad``), HIPS autograd and CasADi (the objective built as an ``SX``
expression, ``casadi.gradient``, run by the SX virtual machine and as gcc-compiled generated
C; scalar-loop and cmpad problems only). Every gradient is checked against the hand
Numba one at x0 and at a second point (relative error ``max|g - ref| / max|ref|`` below
1e-8; SciPy FD below 1e-4, its truncation error) before it is timed; a wrong one is reported
and not timed.

Figures: first call (building the tool's function plus its first gradient: tracing, taping,
compiling included), steady-state median per gradient with its interquartile range, the
ratios of that median to the NumPy objective and to the hand Numba gradient measured in the
same rounds; a headline table (jittape's best replay ÷ hand Numba and ÷ the fastest of JAX
jit, CasADi and PyTorch); cmpad's problems in gradients per second beside CppAD's published
rates; CasADi's graph sizes and code-generation/gcc build times; for jittape also tape records and bytes, the compiled kernel's size, and
``tape.compile()`` in fresh interpreters with empty ``NUMBA_CACHE_DIR`` and
``JITTAPE_CACHE_DIR`` (cold) and again with the directories it filled (warm).

Every tool runs on ``--threads`` threads (default 1, as ADBench measured: BLAS, PyTorch's
intra-op pool and XLA's CPU backend are limited; Numba code is single-threaded anyway).
"""

import os
import sys


def _early_threads(argv):
    """Thread limits must be in the environment before NumPy, PyTorch or JAX load."""
    threads = 1
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            threads = int(argv[i + 1])
        elif a.startswith("--threads="):
            threads = int(a.split("=", 1)[1])
    n = str(threads)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
        os.environ[var] = n
    if threads == 1:
        flags = os.environ.get("XLA_FLAGS", "")
        if "xla_cpu_multi_thread_eigen" not in flags:
            os.environ["XLA_FLAGS"] = (flags + " --xla_cpu_multi_thread_eigen=false "
                                       "intra_op_parallelism_threads=1").strip()
    return threads


_NUMPY_WAS_LOADED = "numpy" in sys.modules
THREADS = _early_threads(sys.argv[1:])

if __package__ in (None, ""):  # python benchmarks/run.py: make the package importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import argparse  # noqa: E402
import contextlib  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import shlex  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import textwrap  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from benchmarks import bfgs  # noqa: E402
from benchmarks import common as C  # noqa: E402
from benchmarks import problems as P  # noqa: E402
from benchmarks import report as R  # noqa: E402
from benchmarks import tools as T  # noqa: E402

#: tapes whose cold/warm compile times --quick measures (full mode: every compilable tape)
QUICK_COMPILE_KEYS = ("ba1",)


# --- one problem ---------------------------------------------------------------------------
def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def run_problem(key, env, settings, tool_keys):
    """Verify, then time every tool on one problem; returns the result dict."""
    prob = P.build(key)
    x0, x1 = prob.x0, prob.second_point()
    out = dict(key=key, family=prob.family, label=prob.label, n=prob.n, notes=prob.notes,
               tools={})
    _, f_first = _timed(lambda: prob.f(x0))
    _, f_once = _timed(lambda: prob.f(x0))
    out["objective_first"] = f_first

    # the references: hand Numba, checked against hand NumPy (their true first calls)
    ref0, first_numba = _timed(lambda: prob.grad_numba(x0))
    _, first_numpy = _timed(lambda: prob.grad_numpy(x0))
    ref1 = prob.grad_numba(x1)
    for pt, ref, name in ((x0, ref0, "x0"), (x1, ref1, "x1")):
        err = C.rel_error(prob.grad_numpy(pt), ref)
        if not err < C.HAND_TOL:
            sys.exit(f"\n*** {key}: the hand NumPy and hand Numba gradients differ at {name} "
                     f"(relative error {err:.2e}): the suite's references are wrong.")
    grads, once = {}, {"objective": f_once}
    for tool in tool_keys:
        r = out["tools"][tool] = dict(status="ok", note="", first=None, err=None)
        if settings.quick and tool in prob.quick_skip:
            r.update(status="skip", note=f"skipped in --quick: {prob.quick_skip[tool]}")
            continue
        try:
            t0 = time.perf_counter()
            grad, info = T.make(tool, prob, env, f_once)
            g0 = grad(x0)
            r["first"] = time.perf_counter() - t0
            g1, t_second = _timed(lambda: grad(x1))
        except C.Skip as exc:
            r.update(status="skip", note=str(exc))
            continue
        except Exception as exc:  # a tool that fails on this problem: report, go on
            r.update(status="error", note=f"{type(exc).__name__}: {str(exc)[:300]}")
            C.log(f"    {tool}: ERROR {r['note']}")
            continue
        tol = C.FD_TOL if tool == "scipy-fd" else C.REL_TOL
        err = max(C.rel_error(g0, ref0), C.rel_error(g1, ref1))
        r["err"] = err
        if not err < tol:
            r.update(status="wrong", note=f"WRONG GRADIENT: relative error {err:.2e} "
                     f"(tolerance {tol:g}); not timed")
            C.log(f"    {tool}: {r['note']}")
            continue
        if tool == "scipy-fd":
            r["note"] = f"relative error {err:.1e} (forward differences)"
        r["info"] = info
        if t_second > settings.too_slow:
            r["single"] = t_second
            r["note"] = (r["note"] + "; " if r["note"] else "") + \
                f"one call of {C.fmt_time(t_second)}: timed once"
            continue
        grads[tool] = grad
        once[tool] = t_second
    for tool, t in (("hand-numba", first_numba), ("hand-numpy", first_numpy)):
        if out["tools"].get(tool, {}).get("first") is not None:
            out["tools"][tool]["first"] = t  # their true first calls were the references

    cands = {"objective": lambda: prob.f(x0)}
    cands.update({tool: (lambda g=g: g(x0)) for tool, g in grads.items()})
    samples = C.sample_times(cands, settings, once=once)
    out["objective"] = C.stats(samples.pop("objective"))
    for tool, s in samples.items():
        out["tools"][tool]["stats"] = C.stats(s)
    for tool, r in out["tools"].items():
        if "single" in r:
            r["stats"] = C.stats([r.pop("single")])
    out["jittape"] = jittape_profile(prob, out, settings)
    for r in out["tools"].values():
        info = r.pop("info", None)
        if info and "instructions" in info:  # CasADi: its graph size and build times
            r["casadi"] = info
    return out


def jittape_profile(prob, out, settings):
    """Tape sizes, the opcode mix, and where replay/eager time goes (timed side by side)."""
    import jittape
    from jittape.compiler import kernel as JC
    from jittape.sweeps.opsets import for_tape
    from jittape.ops import OPS
    x0 = prob.x0
    rr = out["tools"].get("jittape-replay", {})
    if rr.get("status") != "ok":
        return None
    tape = rr["info"]["tape"]
    t = tape.arrays
    size = np.diff(t.off)
    ops = {}
    for opc, sz in zip(t.op.tolist(), size.tolist()):
        name = OPS[opc].name
        c, e = ops.get(name, (0, 0))
        ops[name] = (c + 1, e + sz)
    prof = dict(records=tape.n_records, nbytes=tape.nbytes, elements=int(t.val.size),
                pool=int(t.pool.size), ops=sorted(ops.items(), key=lambda kv: -kv[1][1]))
    rc = out["tools"].get("jittape-compiled", {})
    ctape = rc.get("info", {}).get("tape") if rc.get("status") == "ok" else None
    if ctape is not None:
        src = JC.kernel_source(ctape)
        lines = src.splitlines()
        prof["statements"] = len(lines)
        prof["kernel_elements"] = int(ctape._kernel[1].size)
        fwd = lines[:next((i for i, ln in enumerate(lines) if "if not want_grad" in ln),
                          len(lines))]
        prof["loops"] = sum(1 for ln in fwd if ln.strip().startswith("for j in range"))
    else:
        prof["statements"] = None
    cols = (t.op, t.a, t.b, t.k, t.c, t.off, t.pool)
    buf = t.val.copy()
    in_lo, in_hi = t.off[t.inputs[0]], t.off[t.inputs[0] + 1]
    buf[in_lo:in_hi] = x0.ravel()
    out_id, o_out = tape.out_id, int(t.off[tape.out_id])
    nval = t.val.size

    sw = for_tape(t)

    def reverse_only():
        adj = np.zeros(nval)
        adj[o_out] = 1.0
        sw.reverse_sweep(*cols, buf, adj, 0, out_id + 1)

    cands = {"record": lambda: jittape.record(prob.f, x0),
             "forward": lambda: sw.forward_sweep(*cols, buf, 0, t.n_records),
             "reverse": reverse_only,
             "replay": lambda: tape.gradient(x0)}
    if ctape is not None:
        cands["compiled_value"] = lambda: ctape.value(x0)
        cands["compiled"] = lambda: ctape.gradient(x0)
    ps = C.Settings(True)  # a short pass: known per-call times, no calibration calls
    ps.budget = 0.3 if settings.quick else 2.0
    ps.min_rounds, ps.max_rounds = (3, 3) if settings.quick else (5, 9)
    ps.slow, ps.slow_samples = (0.05, 1) if settings.quick else (0.5, 3)
    eager = out["tools"].get("jittape-eager", {}).get("stats", {}).get("median")
    rep = rr["stats"]["median"]
    once = {"record": eager or rep, "forward": rep / 2, "reverse": rep / 2, "replay": rep}
    if ctape is not None:
        c = rc["stats"]["median"]
        once.update(compiled_value=c / 2, compiled=c)
    samples = C.sample_times(cands, ps, once=once)
    prof["times"] = {k: statistics.median(v) for k, v in samples.items()}
    return prof


# --- BFGS ----------------------------------------------------------------------------------
def run_bfgs(env, settings, tool_keys):
    """Every tool's BFGS run on Rosenbrock n = 100, checked, then timed side by side."""
    from benchmarks.problems.rosenbrock import rosen_grad_njit
    x0 = bfgs.x0()
    x1 = x0 + 1e-3 * np.cos(np.arange(x0.size))
    out = dict(key="bfgs", family="BFGS", label=f"Rosenbrock n = {bfgs.N}", n=bfgs.N,
               tools={})
    runs, once = {}, {}
    for tool in tool_keys:
        r = out["tools"][tool] = dict(status="ok", note="", first=None, err=None)
        try:
            t0 = time.perf_counter()
            run, vg = bfgs.make(tool, env)
            res = run()
            r["first"] = once[tool] = time.perf_counter() - t0
        except C.Skip as exc:
            r.update(status="skip", note=str(exc))
            continue
        except Exception as exc:
            r.update(status="error", note=f"{type(exc).__name__}: {str(exc)[:300]}")
            continue
        if vg is not None:
            err = max(C.rel_error(vg(pt)[1], rosen_grad_njit(pt)) for pt in (x0, x1))
            r["err"] = err
            if not err < C.REL_TOL:
                r.update(status="wrong", note=f"WRONG GRADIENT: relative error {err:.2e}")
                continue
        r["result"] = bfgs.summary(res)
        if not (res.success or r["result"]["dist"] < 1e-4):
            r["note"] = f"did not converge: {res.message}"
        runs[tool] = run
    s = C.Settings(settings.quick)  # one run per sample; a slow tool (a run over s.slow)
    s.target = 1e-9                 # gets s.slow_samples samples
    s.min_rounds, s.max_rounds = (3, 5) if settings.quick else (7, 15)
    s.budget = 3.0 if settings.quick else 30.0
    s.slow, s.slow_samples = (1.0, 1) if settings.quick else (5.0, 3)
    samples = C.sample_times(runs, s, once={t: once[t] for t in runs})
    for tool, v in samples.items():
        out["tools"][tool]["stats"] = C.stats(v)
    return out


# --- compile times in fresh interpreters ---------------------------------------------------
COMPILE_SNIPPET = textwrap.dedent("""
    import json, sys, time
    sys.path.insert(0, sys.argv[1])
    from benchmarks.problems import build
    import jittape
    p = build(sys.argv[2])
    tape = jittape.record(p.f, p.x0)
    t0 = time.perf_counter()
    tape.compile()
    t1 = time.perf_counter()
    tape.gradient(p.x0)
    t2 = time.perf_counter()
    print(json.dumps({"compile": t1 - t0, "first_gradient": t2 - t1,
                      "compiled": tape.compiled}))
""")


def _compile_once(key, jd, nd):
    env = dict(os.environ, JITTAPE_CACHE_DIR=str(jd), NUMBA_CACHE_DIR=str(nd))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(C.ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, "-c", COMPILE_SNIPPET, str(C.ROOT), key], env=env,
                          cwd=C.ROOT, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def compile_times(keys, trials):
    """``{key: {"cold": {...}, "warm": {...}}}``: medians over ``trials`` pairs of fresh
    cache directories (cold: empty; warm: a second interpreter on what the cold one wrote)."""
    out = {}
    for key in keys:
        runs = {"cold": [], "warm": []}
        try:
            for _ in range(trials):
                with tempfile.TemporaryDirectory(prefix="jittape-src-") as jd, \
                        tempfile.TemporaryDirectory(prefix="numba-cache-") as nd:
                    runs["cold"].append(_compile_once(key, jd, nd))
                    runs["warm"].append(_compile_once(key, jd, nd))
        except (RuntimeError, subprocess.SubprocessError) as exc:
            out[key] = {"error": str(exc)[:200]}
            continue
        out[key] = {w: {f: statistics.median(r[f] for r in rs)
                        for f in ("compile", "first_gradient")} for w, rs in runs.items()}
        out[key]["trials"] = trials
        C.log(f"  compile {key}: cold {C.fmt_time(out[key]['cold']['compile'])}, warm "
              f"{C.fmt_time(out[key]['warm']['compile'])}")
    return out


# --- main ------------------------------------------------------------------------------------
def parse_args(argv):
    ap = argparse.ArgumentParser(prog="python -m benchmarks",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="fewer samples, the compile time of one tape only (under 3 minutes)")
    ap.add_argument("--only", default="",
                    help="comma-separated problem keys (and/or 'bfgs'); default all")
    ap.add_argument("--tools", default="", help="comma-separated tool keys; default all")
    ap.add_argument("--threads", type=int, default=1, help="threads per tool (default 1)")
    ap.add_argument("--no-compile-times", action="store_true",
                    help="skip the cold/warm tape.compile() subprocesses")
    ap.add_argument("--output-dir", type=Path, default=C.RESULTS,
                    help="where latest.md/.json/.png go (default benchmarks/results)")
    ap.add_argument("--list", action="store_true", help="list problem and tool keys")
    return ap.parse_args(argv)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.list:
        print("problems:", ", ".join(list(P.REGISTRY) + ["bfgs"]))
        print("tools:", ", ".join(k for k, _, _ in T.TOOLS))
        return 0
    command = "python -m benchmarks" + ("" if not argv else " " + shlex.join(argv))
    t_start = time.perf_counter()
    settings = C.Settings(args.quick)
    keys = [k for k in args.only.split(",") if k] or list(P.REGISTRY) + ["bfgs"]
    for k in keys:
        if k not in P.REGISTRY and k != "bfgs":
            sys.exit(f"unknown problem {k!r}; --list shows the keys")
    tool_keys = [k for k in args.tools.split(",") if k] or [k for k, _, _ in T.TOOLS]
    for k in tool_keys:
        if k not in T.LABEL:
            sys.exit(f"unknown tool {k!r}; --list shows the keys")
    if "hand-numba" not in tool_keys:
        tool_keys.insert(0, "hand-numba")  # the reference every ratio is taken to

    try:
        from threadpoolctl import threadpool_limits
        blas = threadpool_limits(limits=args.threads, user_api="blas")
    except ImportError:
        blas = contextlib.nullcontext()
    with blas:
        C.log("reference values (ADBench unit tests) ...")
        checks = P.reference_checks()
        t0 = time.perf_counter()
        env = T.Env(args.threads, settings)
        import_time = time.perf_counter() - t0
        C.log(f"peers imported in {import_time:.1f} s"
              + "".join(f"; {v}" for v in env.missing.values()))
        results = []
        for key in keys:
            if key == "bfgs":
                continue
            C.log(f"{key} ... [{time.perf_counter() - t_start:.0f} s]")
            results.append(run_problem(key, env, settings, tool_keys))
            gc.collect()
        bres = None
        if "bfgs" in keys:
            C.log(f"bfgs ... [{time.perf_counter() - t_start:.0f} s]")
            bres = run_bfgs(env, settings, tool_keys)
    ctimes = {}
    if not args.no_compile_times and "jittape-compiled" in tool_keys:
        ckeys = [r["key"] for r in results
                 if r["tools"].get("jittape-compiled", {}).get("status") == "ok"
                 and (not args.quick or r["key"] in QUICK_COMPILE_KEYS)]
        C.log(f"compile times ({len(ckeys)} tapes) ... [{time.perf_counter() - t_start:.0f} s]")
        ctimes = compile_times(ckeys, 1 if args.quick else 3)
    elapsed = time.perf_counter() - t_start
    info = C.machine_info(command, args.threads, elapsed, args.quick)
    if _NUMPY_WAS_LOADED:
        info.append("- note: NumPy was imported before the suite set its thread limits; "
                    "BLAS was limited through threadpoolctl only")
    args.output_dir.mkdir(parents=True, exist_ok=True)
    png = args.output_dir / "latest.png"
    plot_note = R.plot(results, bres, png)
    text = R.markdown(results, bres, ctimes, checks, info, settings, plot_note, env,
                      QUICK_COMPILE_KEYS)
    (args.output_dir / "latest.md").write_text(text)
    (args.output_dir / "latest.json").write_text(json.dumps(
        dict(info=info, checks=checks, results=results, bfgs=bres, compile_times=ctimes),
        indent=1, default=lambda o: o.item() if hasattr(o, "item") else str(o)))
    print(text)
    C.log(f"written to {args.output_dir}/latest.md, latest.json"
          + ("" if plot_note else ", latest.png") + f" in {elapsed:.0f} s")
    bad = [(r["key"], t) for r in results + ([bres] if bres else [])
           for t, v in r["tools"].items() if v["status"] in ("wrong", "error")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

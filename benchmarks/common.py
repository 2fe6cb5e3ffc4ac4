"""Shared pieces of the benchmark suite: timing, gradient checks, formatting, machine info.

Timing follows ``bench_replay.py``: the candidates of one problem are sampled round-robin
(one sample of each per round, so load from other processes hits them alike), every sample
loops its call long enough for the timer and starts with one untimed call (steady state of
back-to-back calls), and the figures are medians with the interquartile range of the
samples. Only ratios measured side by side in one run mean much on a shared machine.
"""

import datetime
import os
import platform
import statistics
import subprocess
import sys
import time
import timeit
from pathlib import Path

import numpy as np

# Benchmarks time machine code and what compiling it costs: no sweep runs interpreted while
# it compiles in the background (jittape.sweeps.tiers) unless a benchmark asks for it.
os.environ.setdefault("JITTAPE_BACKGROUND", "0")

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
RESULTS = Path(__file__).resolve().parent / "results"
REL_TOL = 1e-8       # gradient check: max|g - ref| / max|ref|
FD_TOL = 1e-4        # finite differences cannot reach REL_TOL; their own (looser) check
HAND_TOL = 1e-10     # hand NumPy against hand Numba (the two references)


class Skip(Exception):
    """A tool that does not run on a problem; the message goes into the table."""


# --- timing ------------------------------------------------------------------------------
class Settings:
    """Sampling parameters of one mode."""

    def __init__(self, quick):
        self.quick = quick
        self.target = 0.004 if quick else 0.025       # seconds per sample
        self.budget = 1.0 if quick else 10.0          # seconds of samples per problem
        self.min_rounds, self.max_rounds = (5, 7) if quick else (9, 41)
        self.heavy_round = 1.0 if quick else None     # a round above this (s): 3 rounds
        self.warm_limit = 0.02 if quick else 1.0      # untimed call before a sample below it
        self.slow = 0.25 if quick else 2.0            # a call above this: a "slow" tool
        self.slow_samples = 3 if quick else 5         # samples of a slow tool
        self.too_slow = 1.5 if quick else 60.0        # a warm call above this: timed once
        self.fd_limit = 0.5 if quick else 3.0         # finite differences: s per gradient


def _one(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def round_robin(fns, rounds, warm=0):
    """``{name: [seconds of each call]}``: ``warm`` untimed calls of each ``fns[name]()``,
    then ``rounds`` rounds of one timed call of each in turn, so that load from other
    processes hits them alike (for calls long enough to time one by one)."""
    for fn in fns.values():
        for _ in range(warm):
            fn()
    times = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            times[name].append(_one(fn))
    return times


def sample_times(fns, settings, budget=None, once=None):
    """Per-call seconds of each ``fns[name]()``: ``{name: [per-call time of each sample]}``.

    Round-robin: a round takes one sample of every function that still needs samples. A
    sample is ``number`` back-to-back calls lasting about ``settings.target`` seconds,
    after one untimed call (for calls shorter than ``settings.warm_limit``; a long call
    allocates fresh pages every time anyway). Functions slower than ``settings.slow`` per call take only
    ``settings.slow_samples`` samples of one call each (no untimed call before them).
    ``once[name]``, if given, is a known time of one (warm) call: no calibration calls.
    """
    budget = settings.budget if budget is None else budget
    once = dict(once or {})
    numbers, round_time = {}, 0.0
    for name, fn in fns.items():
        if name not in once:
            fn()  # warm-up
            once[name] = max(_one(fn), 1e-7)
        t = once[name]
        numbers[name] = max(1, int(settings.target / t))
        if t <= settings.slow:
            round_time += numbers[name] * t * 2
    min_rounds = settings.min_rounds
    if settings.heavy_round is not None and round_time > settings.heavy_round:
        min_rounds = 3
    rounds = int(min(settings.max_rounds,
                     max(min_rounds, budget / max(round_time, 1e-9))))
    samples = {name: [] for name in fns}
    for r in range(rounds):
        for name, fn in fns.items():
            if once[name] > settings.slow:
                if r < settings.slow_samples:
                    samples[name].append(_one(fn))
                continue
            if once[name] < settings.warm_limit:
                fn()  # untimed: the sample measures back-to-back calls
            samples[name].append(timeit.timeit(fn, number=numbers[name]) / numbers[name])
    return samples


def median_time(fn, repeat=7):
    """Median seconds per call of ``fn`` over ``repeat`` runs of about 20 ms of calls each,
    after one warm-up call (the scripts that time a few calls side by side in one process)."""
    fn()
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        if time.perf_counter() - t0 >= 0.02:
            break
        number *= 2
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        runs.append((time.perf_counter() - t0) / number)
    return statistics.median(runs)


def stats(samples):
    """Median, first and third quartile of a list of per-call times."""
    s = sorted(samples)
    if len(s) == 1:
        return dict(median=s[0], q1=s[0], q3=s[0], n=1)
    q = statistics.quantiles(s, n=4, method="inclusive")
    return dict(median=statistics.median(s), q1=q[0], q3=q[2], n=len(s))


# --- gradient checks ---------------------------------------------------------------------
def kernel_call(kernel, x, want_grad=True):
    """A call, without arguments, of a compiled tape's kernel (``tape._kernel``, private) on
    work buffers of its own, for the tuple of each jittape version measured: ``(kernel,
    val0, pool, nadj, entry)`` takes ``(val, adj, pool, x, gx)`` or, reading no buffer, ``(x,
    gx)``; before, ``(val, adj, pool, x, want_grad)``; ``(kernel, val0,
    pool, nadj)`` took ``(val, adj, x, pool, want_grad)``; ``(kernel, val0, pool)`` took
    ``(val0, x, pool, want_grad)``."""
    fn, val0, pool = kernel[:3]
    if len(kernel) == 3:
        return lambda: fn(val0, x, pool, want_grad)
    val, adj = val0.copy(), np.empty(kernel[3])
    if fn.py_func.__code__.co_argcount == 2:  # (x, gx): a kernel reading no buffer, 2026-11-28
        return lambda: fn(x, np.empty(x.shape[0] if want_grad else 0))
    if "gx" in fn.py_func.__code__.co_varnames[:5]:  # (val, adj, pool, x, gx) since 2026-11-27
        return lambda: fn(val, adj, pool, x, np.empty(x.shape[0] if want_grad else 0))
    if len(kernel) >= 5:
        return lambda: fn(val, adj, pool, x, want_grad)
    return lambda: fn(val, adj, x, pool, want_grad)


def rel_error(got, want):
    """``max|got - want| / max|want|`` (inf for a shape mismatch or a non-finite value)."""
    try:
        got = np.asarray(got, dtype=np.float64).reshape(np.shape(want))
    except (ValueError, TypeError):
        return np.inf
    want = np.asarray(want, dtype=np.float64)
    err = float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-300))
    return err if np.isfinite(err) else np.inf


# --- formatting ----------------------------------------------------------------------------
def fmt_time(s):
    if s is None:
        return "—"
    if s < 1e-3:
        return f"{s * 1e6:.2f} µs" if s < 1e-5 else f"{s * 1e6:.1f} µs"
    if s < 1.0:
        return f"{s * 1e3:.2f} ms" if s < 1e-2 else f"{s * 1e3:.1f} ms"
    return f"{s:.2f} s"


def fmt_ratio(r):
    if r is None or not np.isfinite(r):
        return "—"
    return f"{r:.3f}" if r < 0.1 else f"{r:.2f}" if r < 10 else f"{r:.1f}" if r < 1000 \
        else f"{r:,.0f}"


def fmt_int(n):
    return "—" if n is None else f"{n:,}"


def table(header, rows, align=None):
    align = align or ["---"] + ["---:"] * (len(header) - 1)
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


# --- environment ---------------------------------------------------------------------------
def versions():
    """Versions of every library the suite may use (``None``: not installed)."""
    import importlib.metadata as md
    out = {}
    for name in ("numpy", "numba", "scipy", "jax", "jaxlib", "torch", "autograd",
                 "casadi", "matplotlib", "threadpoolctl"):
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            out[name] = None
    return out


def cpu_info():
    """``(cpu model, usable CPU count)`` of this machine."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh
                       if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return cpu, usable


def run_in_fresh_interpreter(snippet, root, numba_cache_dir, with_stderr=False,
                             background=False):
    """Run ``snippet`` in a new interpreter with ``numba_cache_dir`` as Numba's cache (and so
    jittape's, ``$NUMBA_CACHE_DIR/jittape``) and ``root`` importable; return the JSON object
    its last output line holds (and its stderr, if ``with_stderr``). ``background``: jittape's
    default, small tapes interpreted while their sweeps compile (:mod:`jittape.sweeps.tiers`);
    otherwise every compile is waited for, so that the figures are compile times."""
    import json
    env = dict(os.environ, NUMBA_CACHE_DIR=str(numba_cache_dir),
               JITTAPE_BACKGROUND="1" if background else "0",
               PYTHONPATH=os.pathsep.join(filter(None, [str(root),
                                                        os.environ.get("PYTHONPATH")])))
    for var in ("JITTAPE_CACHE_DIR", "JITTAPE_QUIET"):
        env.pop(var, None)
    proc = subprocess.run([sys.executable, "-c", snippet], env=env, cwd=root,
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        sys.exit(f"start-up subprocess failed:\n{proc.stderr}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return (out, proc.stderr) if with_stderr else out


def cold_and_warm_startup(snippet, root, quick):
    """Medians of ``snippet``'s timings with an empty Numba cache (cold) and with the cache
    that cold run filled (warm: the second run after it, so Numba's own first-load of the
    index is paid once before); 1 trial in quick mode, 3 otherwise. Returns
    ``(cold, warm, trials)``."""
    import tempfile
    trials = 1 if quick else 3
    cold, warm = [], []
    for _ in range(trials):
        with tempfile.TemporaryDirectory(prefix="jittape-numba-cache-") as d:
            cold.append(run_in_fresh_interpreter(snippet, root, d))
            run_in_fresh_interpreter(snippet, root, d)
            warm.append(run_in_fresh_interpreter(snippet, root, d))
    med = lambda runs: {k: statistics.median(r[k] for r in runs) for k in runs[0]}  # noqa
    return med(cold), med(warm), trials


def machine_info(command, threads, elapsed, quick):
    cpu, usable = cpu_info()
    try:
        load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        load = "?"
    try:  # other work may be in progress in the checkout: say which code was measured
        git = lambda *a: subprocess.run(["git", *a], cwd=ROOT, capture_output=True,
                                        text=True, timeout=30).stdout.rstrip("\n")
        dirty = [ln[3:] for ln in git("status", "--porcelain", "--", "jittape").splitlines()
                 if len(ln) > 3]
        code = (f"jittape at commit {git('rev-parse', '--short', 'HEAD') or '?'}"
                + (f", uncommitted changes in {', '.join(dirty)}" if dirty else ""))
    except (OSError, subprocess.SubprocessError):
        code = "jittape commit unknown (no git)"
    v = versions()
    libs = ", ".join(f"{k} {v[k]}" for k in v if v[k]) + "".join(
        f"; {k} not installed" for k in v if not v[k])
    return [f"- command: `{command}`",
            f"- mode: {'quick' if quick else 'full'}; wall time {elapsed:.0f} s",
            f"- date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
            f"- code: {code}",
            f"- platform: {platform.platform()}; python {platform.python_version()}",
            f"- CPU: {cpu}; {os.cpu_count()} logical CPUs, {usable} usable; load average "
            f"at the end {load}",
            f"- threads: {threads} per tool (BLAS, PyTorch intra-op, XLA CPU)",
            f"- libraries: {libs}"]


def log(msg):
    print(msg, file=sys.stderr, flush=True)

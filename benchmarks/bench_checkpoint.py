"""Checkpointed time integration: tape memory and gradient time, plain loop vs
``jittape.checkpoint_loop``.

Run::

    python benchmarks/bench_checkpoint.py [--steps 1000] [--size 64] [--output benchmarks/results/checkpoint.md]

The problem: ``--steps`` explicit RK4 steps (h = 0.01) of the Lorenz-96 system with
``--size`` variables (``dx_i/dt = (x_{i+1} - x_{i-2}) x_{i-1} - x_i + F``, ``np.roll``), the
objective ``sum(x_n^2)``, differentiated w.r.t. ``x_0``. Tapes: the plain loop (every step
recorded) and the checkpointed loop with the default budget (each step recomputed at most
twice), every state kept (each step run once more in the reverse sweep) and 32 snapshots
(binomial schedule), and
``jittape.checkpoint(rk4)`` called in the Python loop (one step's records shared by the
calls, each call's input and output kept). Figures in
one process, warm (sweeps compiled first), interleaved: tape bytes (``Tape.nbytes``: the
tape's columns, pool and value buffer), ``tape.gradient`` at a new point (forward and
reverse sweeps; the tape compiler off, the interpreter's sweeps on both: the tape compiler
leaves tapes with regions alone), the median of ``--repeat`` rounds, each the best of 3.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.common import RESULTS, table  # noqa: E402


def l96(x, forcing):
    return (np.roll(x, -1) - np.roll(x, 2)) * np.roll(x, 1) - x + forcing


def rk4(x, forcing):
    h = 0.01
    k1 = l96(x, forcing)
    k2 = l96(x + 0.5 * h * k1, forcing)
    k3 = l96(x + 0.5 * h * k2, forcing)
    k4 = l96(x + h * k3, forcing)
    return x + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--output", default=str(RESULTS / "checkpoint.md"))
    args = ap.parse_args()
    import jittape
    from jittape.sweeps import tiers
    n, forcing = args.steps, 8.0
    x0 = forcing + np.sin(np.arange(float(args.size)))
    x1 = x0[::-1].copy()

    def plain(x):
        for _ in range(n):
            x = rk4(x, forcing)
        return np.sum(x * x)

    step = jittape.checkpoint(rk4)

    def stepped(x):
        for _ in range(n):
            x = step(x, forcing)
        return np.sum(x * x)

    variants = {"plain loop": plain,
                "checkpoint_loop (default budget: 44 snapshots)":
                    lambda x: np.sum(jittape.checkpoint_loop(rk4, n, x, forcing) ** 2),
                "checkpoint_loop, every state (999 snapshots)":
                    lambda x: np.sum(jittape.checkpoint_loop(rk4, n, x, forcing,
                                                             snapshots=n - 1) ** 2),
                "checkpoint_loop, 32 snapshots":
                    lambda x: np.sum(jittape.checkpoint_loop(rk4, n, x, forcing,
                                                             snapshots=32) ** 2),
                "checkpoint(rk4) called in a Python loop": stepped}
    tapes, t_record = {}, {}
    for name, f in variants.items():
        t0 = time.perf_counter()
        tapes[name] = jittape.record(f, x0)
        t_record[name] = time.perf_counter() - t0
        tapes[name].auto_compile = False
        tapes[name].gradient(x1)  # compile (or load) the sweeps
    tiers.wait_compiled()
    ref = tapes["plain loop"].gradient(x1)
    for name, tape in tapes.items():
        np.testing.assert_allclose(tape.gradient(x1), ref, rtol=1e-10)
    times = {name: [] for name in tapes}
    for _ in range(args.repeat):
        for name, tape in tapes.items():  # interleaved: the same load for all
            best = 1e9
            for _ in range(3):
                t0 = time.perf_counter()
                tape.gradient(x1)
                best = min(best, time.perf_counter() - t0)
            times[name].append(best)
    base_bytes = tapes["plain loop"].nbytes
    base_time = statistics.median(times["plain loop"])
    rows = []
    for name, tape in tapes.items():
        tm = statistics.median(times[name])
        rows.append([name, tape.n_records, f"{tape.nbytes / 1e6:.3f}",
                     f"{base_bytes / tape.nbytes:.1f}x", f"{tm * 1e3:.2f}",
                     f"{tm / base_time:.2f}x", f"{t_record[name]:.2f}"])
    text = "\n".join([
        "# Checkpointed time integration",
        "",
        f"`python benchmarks/bench_checkpoint.py --steps {n} --size {args.size}`: {n} RK4 "
        f"steps of Lorenz-96 with {args.size} variables, gradient of sum(x_n^2) w.r.t. x_0 "
        f"(warm; median of {args.repeat} interleaved rounds, each the best of 3; the "
        "machine is shared: compare within the table).",
        "",
        table(["tape", "records", "tape MB", "memory saving", "gradient (ms)",
               "time vs plain", "record (s)"], rows),
        "",
    ])
    print(text)
    Path(args.output).write_text(text)


if __name__ == "__main__":
    main()

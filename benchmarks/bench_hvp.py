"""Second-order benchmark: a replayed Hessian-vector product against a replayed gradient.

Run::

    PYTHONPATH=. python benchmarks/bench_hvp.py [--n 100000] [--repeat 15]

Rosenbrock (``scipy.optimize.rosen`` written in NumPy) at n = 1e5, recorded once; the
gradient (forward + reverse sweep) and the HVP (forward + tangent + second-order sweep,
forward over reverse) are timed alternately in one process, so that both see the same
machine load; medians are reported with their ratio (issue 11's target: HVP <= 3x a
gradient) and the HVP's largest deviation from ``scipy.optimize.rosen_hess_prod``.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402
import scipy.optimize as so  # noqa: E402

from benchmarks.common import RESULTS  # noqa: E402  (also: sweeps compile in the foreground)
import jittape  # noqa: E402


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--output", type=Path, default=RESULTS / "hvp.md")
    args = ap.parse_args()
    x = np.linspace(-1.0, 1.5, args.n)
    v = np.cos(np.arange(args.n, dtype=float))
    tape = jittape.record(rosen, x)
    tape.gradient(x)
    tape.hvp(x, v=v)
    grad, hvp = [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        tape.gradient(x)
        t1 = time.perf_counter()
        tape.hvp(x, v=v)
        grad.append(t1 - t0)
        hvp.append(time.perf_counter() - t1)
    g, h = statistics.median(grad), statistics.median(hvp)
    err = float(np.max(np.abs(tape.hvp(x, v=v) - so.rosen_hess_prod(x, v))))
    text = (f"# Replayed HVP vs replayed gradient (Rosenbrock, n = {args.n})\n\n"
            f"- command: `python benchmarks/bench_hvp.py --n {args.n} --repeat {args.repeat}`\n"
            f"- gradient: {g * 1e3:.2f} ms (median of {args.repeat})\n"
            f"- HVP: {h * 1e3:.2f} ms\n- ratio HVP / gradient: {h / g:.2f} (target <= 3)\n"
            f"- max |HVP - scipy.optimize.rosen_hess_prod|: {err:.1e}\n")
    args.output.write_text(text)
    print(text)


if __name__ == "__main__":
    main()

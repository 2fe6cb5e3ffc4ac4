"""Start-up benchmark: how long a new user waits before the first derivative.

Run::

    python benchmarks/bench_startup.py [--repeat 3] [--output benchmarks/results/startup.md]

Compile time is a product figure: jittape generates its sweeps for the ops a tape uses and
compiles each on first use, cached on disk. Each figure is taken in a NEW Python process
with FRESH cache directories (``NUMBA_CACHE_DIR`` set to a new temporary directory, which
also holds jittape's cache); the warm figures come from a second process on the same
directories. The machine is shared, so the cold/warm cycle is repeated ``--repeat`` times
with new directories and the median (min-max) is reported. What the process printed on
stderr (jittape's one-line compile notices) is shown verbatim: it is what a user sees.

Figures, each measured with ``time.perf_counter`` inside the child:

1. ``import jittape``;
2. the first gradient of a ~10-op vectorized program (``jittape.grad(f)(x)``);
3. the first replay: ``jittape.record(f, x).gradient(x2)``;
4. a second program with different ops (tanh, sqrt, matmul, max, cumsum): its first
   gradient and first replay;
5. the same in a warm-cache new process;
6. how long after that the machine code of every sweep used is ready
   (``jittape.wait_compiled()``).

jittape's default runs a small tape's sweeps interpreted while Numba compiles them in the
background (:mod:`jittape.sweeps.tiers`); each cycle is also run with ``JITTAPE_BACKGROUND=0``,
where every figure includes its compile, so that compile times stay in the report.
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.common import RESULTS, ROOT, machine_info, run_in_fresh_interpreter, table  # noqa

CHILD = r"""
import json, time
t0 = time.perf_counter()
import numpy as np
import jittape
t1 = time.perf_counter()
def f(x):
    return np.sum(np.sin(x) ** 2 + np.exp(-x) * x) / x.size + np.log1p(x[0] ** 2)
def h(x):
    a = np.outer(x, x[::-1])
    return np.max(np.cumsum(np.tanh(a @ x))) + np.sqrt(np.sum(x ** 2))
x = np.linspace(0.1, 1.0, 10)
jittape.grad(f)(x)
t2 = time.perf_counter()
jittape.record(f, x).gradient(x + 0.1)
t3 = time.perf_counter()
jittape.grad(h)(x)
jittape.record(h, x).gradient(x + 0.1)
t4 = time.perf_counter()
jittape.wait_compiled()
t5 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first gradient": t2 - t1, "first replay": t3 - t2,
                  "second program": t4 - t3, "compiled": t5 - t4}))
"""

# (label, process: 0 cold / 1 warm, figure: a key of the child's output or a sum, target s)
ROWS = [("import jittape", 0, ("import",), None),
        ("import + first gradient", 0, ("import", "first gradient"), 3.0),
        ("first replay (after the first gradient)", 0, ("first replay",), 2.0),
        ("second program: first gradient + replay", 0, ("second program",), 2.0),
        ("import + first gradient (warm)", 1, ("import", "first gradient"), 0.5),
        ("first replay (warm)", 1, ("first replay",), None),
        ("second program (warm)", 1, ("second program",), None),
        ("then: machine code of all sweeps ready", 0, ("compiled",), None),
        ("then: machine code ready (warm)", 1, ("compiled",), None)]


def one_cycle(root, background):
    with tempfile.TemporaryDirectory(prefix="jittape-startup-") as d:
        cold, err = run_in_fresh_interpreter(CHILD, root, d, True, background)
        warm, werr = run_in_fresh_interpreter(CHILD, root, d, True, background)
    return cold, warm, err, werr


def _cell(cycles, which, keys):
    vals = [sum(c[which][k] for k in keys) for c in cycles]
    return f"{statistics.median(vals):.2f} s ({min(vals):.2f}-{max(vals):.2f})"


def summarize(default, foreground):
    rows = [[label, _cell(default, which, keys), _cell(foreground, which, keys),
             f"≤ {target:.1f} s" if target else ""] for label, which, keys, target in ROWS]
    return table(["figure", "default: median (min-max)",
                  "JITTAPE_BACKGROUND=0: median (min-max)", "target"], rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="cold/warm cycles (default 3)")
    parser.add_argument("--output", type=Path, default=RESULTS / "startup.md")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="checkout whose jittape is measured (e.g. an older commit's "
                             "worktree, for before/after figures)")
    args = parser.parse_args()
    t0 = time.perf_counter()
    cycles = [one_cycle(args.root, True) for _ in range(args.repeat)]
    foreground = [one_cycle(args.root, False) for _ in range(args.repeat)]
    text = "\n".join(
        ["# jittape start-up: from a new process to the first derivative", ""]
        + machine_info("python benchmarks/bench_startup.py --repeat %d" % args.repeat, "default",
                       time.perf_counter() - t0, False)
        + ["", f"Fresh temporary cache directories for each of {args.repeat} cold/warm "
           "cycles; each figure measured inside a new process (see the module docstring).",
           "", summarize(cycles, foreground), "",
           "What a new user sees on stderr (first cycle, cold):",
           "", "```", cycles[0][2].rstrip() or "(nothing)", "```", "",
           "Warm process stderr:", "", "```", cycles[0][3].rstrip() or "(nothing)", "```", ""])
    args.output.write_text(text)
    print(text)


if __name__ == "__main__":
    main()

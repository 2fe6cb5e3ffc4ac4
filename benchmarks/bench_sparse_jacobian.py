"""Sparse Jacobian benchmark: Broyden tridiagonal residuals, n = 10 000, one process.

Run::

    PYTHONPATH=. python benchmarks/bench_sparse_jacobian.py [--n 10000] [--dense-n 10000]

Figures (medians of ``--repeat`` runs after one warm-up, Numba sweeps compiled first):

* **pattern + coloring**: ``tape.jacobian_sparsity()`` (index sets propagated over the
  tape, :mod:`jittape.derivatives.sparsity`) and the Curtis-Powell-Reid column coloring
  (:mod:`jittape.derivatives.coloring`), on a fresh tape: paid once per tape;
* **sparse Jacobian**: ``tape.sparse_jacobian(x)`` with the pattern and coloring cached:
  one forward sweep, one tangent sweep per color (3), decompression into CSR;
* **dense Jacobian**: ``tape.jacobian(x)`` (``n`` tangent or reverse sweeps, an
  ``n x n`` array: 800 MB at n = 10 000), once, at ``--dense-n``;
* **gradient**: ``tape.gradient(x)`` of ``sum(r**2)`` recorded the same way (one forward
  and one reverse sweep), the unit the issue's targets are stated in.

The results go to ``benchmarks/results/sparse_jacobian.md`` and stdout.
"""

import argparse
import os
import statistics
import time

import numpy as np

import jittape


def broyden(x):
    r = (3.0 - 2.0 * x) * x + 1.0
    r[1:] -= x[:-1]
    r[:-1] -= 2.0 * x[1:]
    return r


def timed(fn, repeat):
    fn()  # warm-up (compiles the sweeps)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--dense-n", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "results",
                                                     "sparse_jacobian.md"))
    a = ap.parse_args()
    jittape.set_background(False)
    x = np.linspace(-1.0, 1.0, a.n)
    tape = jittape.record(broyden, x)
    tape.sparse_jacobian(x)  # compiles
    fresh = jittape.record(broyden, x)
    t0 = time.perf_counter()
    pattern = fresh.jacobian_sparsity()
    t_pattern = time.perf_counter() - t0
    from jittape.derivatives.sparsity import jacobian_coloring
    t0 = time.perf_counter()
    _, colors = jacobian_coloring(fresh)
    t_color = time.perf_counter() - t0
    t_sparse = timed(lambda: tape.sparse_jacobian(x), a.repeat)
    gtape = jittape.record(lambda x: np.sum(broyden(x) ** 2), x)
    t_grad = timed(lambda: gtape.gradient(x), a.repeat)
    xd = np.linspace(-1.0, 1.0, a.dense_n)
    dtape = jittape.record(broyden, xd)
    t_dense = timed(lambda: dtape.jacobian(xd), 1)
    check = abs(tape.sparse_jacobian(x).toarray()[:50, :50]
                - jittape.record(broyden, x[:50]).jacobian(x[:50])).max() if a.n >= 50 else 0
    rows = [("n", f"{a.n}"), ("pattern nonzeros", f"{pattern.nnz}"),
            ("colors", f"{int(colors.max()) + 1}"),
            ("pattern propagation (once)", f"{t_pattern * 1e3:.1f} ms"),
            ("column coloring (once)", f"{t_color * 1e3:.1f} ms"),
            ("sparse Jacobian (replayed)", f"{t_sparse * 1e3:.2f} ms"),
            (f"dense Jacobian (n = {a.dense_n})", f"{t_dense * 1e3:.0f} ms"),
            ("gradient of sum(r**2) (replayed)", f"{t_grad * 1e3:.3f} ms"),
            ("sparse Jacobian / gradient", f"{t_sparse / t_grad:.1f}x"),
            ("dense / sparse Jacobian", f"{t_dense / t_sparse:.0f}x"),
            ("check: max |sparse - dense| on the 50x50 corner", f"{check:.1e}")]
    text = ("# Sparse Jacobian: Broyden tridiagonal\n\n"
            "`PYTHONPATH=. python benchmarks/bench_sparse_jacobian.py` (one process, "
            f"medians of {a.repeat}).\n\n| figure | value |\n|---|---|\n"
            + "\n".join(f"| {k} | {v} |" for k, v in rows) + "\n")
    print(text)
    with open(a.output, "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()

"""Second-order benchmark: sparse vs dense Hessians, Newton-type methods vs BFGS, IPOPT.

Run::

    PYTHONPATH=. python benchmarks/bench_second_order.py [--n 10000] [--dense-n 10000]

One process, figures side by side (medians of alternating samples):

1. Hessians of banded functions at n = 1e4 (Rosenbrock: tridiagonal; a chained function
   with half-band 2): the pattern and its star coloring (once per tape), the sparse Hessian
   (one forward sweep + one HVP per color) against a replayed gradient (issue 11's target:
   <= 10 gradients), the dense Hessian (n HVPs) once, and SciPy's hand-written
   ``rosen_hess`` (sparse, from a formula) as a reference point.
2. ``jittape.minimize`` on Rosenbrock n = 1000 from x0 = -1.2 / 1 alternating (Moré,
   Garbow & Hillstrom 1981): Newton-CG and trust-krylov (exact HVPs), trust-constr (sparse
   Hessian) against BFGS and L-BFGS-B (gradients only): time, iterations, evaluations.
3. IPOPT (``method="ipopt"``, cyipopt): Hock & Schittkowski 71 and a CUTEst-style large
   sparse problem (Lukšan & Vlček 1999, problem 5.1, chained Rosenbrock with
   trigonometric-exponential equality constraints; CUTEst's LUKVLE1 family) at n = 1000,
   exact sparse Hessians against IPOPT's own limited-memory quasi-Newton.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402
import scipy.optimize as so  # noqa: E402

from benchmarks.common import RESULTS, round_robin  # noqa: E402  (also: sweeps compile in the foreground)
import jittape  # noqa: E402


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def chained(x):
    """Rosenbrock plus cos(x_i x_{i+2}): a Hessian of half-band 2."""
    return rosen(x) + np.sum(np.cos(x[2:] * x[:-2]))


def hessian_rows(n, dense_n, repeat):
    rows = []
    for name, f in (("Rosenbrock (tridiagonal)", rosen), ("chained, half-band 2", chained)):
        x = np.linspace(-1.0, 1.5, n)
        tape = jittape.record(f, x)
        tape.gradient(x)
        tape.hvp(x, v=x)  # the sweeps compiled before anything is timed
        t0 = time.perf_counter()
        pattern = tape.hessian_sparsity()
        t1 = time.perf_counter()
        tape.sparse_hessian(x)
        t2 = time.perf_counter()
        ncolors = int(tape._hess_colors[0].max()) + 1
        fns = {"grad": lambda: tape.gradient(x), "sparse": lambda: tape.sparse_hessian(x)}
        if f is rosen:
            fns["scipy"] = lambda: so.rosen_hess(x)
        med = {k: statistics.median(v) for k, v in round_robin(fns, repeat).items()}
        err = ""
        if f is rosen:
            err = f"{abs(tape.sparse_hessian(x) - so.rosen_hess(x)).max():.1e}"
        xd = x[:dense_n]
        td = jittape.record(f, xd)
        t3 = time.perf_counter()
        td.hessian(xd)
        dense = time.perf_counter() - t3
        rows.append((name, n, pattern.nnz, t1 - t0, t2 - t1, ncolors, med["grad"],
                     med["sparse"], med["sparse"] / med["grad"], med.get("scipy"), dense_n,
                     dense, err))
    return rows


def minimize_rows(n, bfgs=True):
    x0 = np.where(np.arange(n) % 2 == 0, -1.2, 1.0)
    rows = []
    methods = ("BFGS",) * bfgs + ("L-BFGS-B", "Newton-CG", "trust-krylov", "trust-constr")
    for method in methods:
        opts = {"maxiter": 20000} if method != "L-BFGS-B" else {"maxiter": 20000,
                                                                 "maxfun": 40000}
        t0 = time.perf_counter()
        res = jittape.minimize(rosen, x0, method=method, options=opts)
        dt = time.perf_counter() - t0
        rows.append((method, dt, res.nit, res.nfev, getattr(res, "nhev", 0) or 0,
                     float(np.max(np.abs(res.x - 1.0))), res.success))
    return rows


def hs071(x):
    return x[0] * x[3] * np.sum(x[:3]) + x[2]


def lukvle1_cons(x):
    """c_k, k = 1..n-2 (Lukšan & Vlček 1999, problem 5.1), in 0-based slices."""
    a, b, c = x[:-2], x[1:-1], x[2:]
    return (3 * b ** 3 + 2 * c - 5 + np.sin(b - c) * np.sin(b + c) + 4 * b
            - a * np.exp(a - b) - 3)


def ipopt_rows(n):
    try:
        import cyipopt  # noqa: F401
    except ImportError:
        return None
    hs_cons = [{"type": "ineq", "fun": lambda x: x[0] * x[1] * x[2] * x[3] - 25.0},
               so.NonlinearConstraint(lambda x: np.sum(x ** 2), 40.0, 40.0)]
    x0 = np.where(np.arange(n) % 2 == 0, -1.2, 1.0)
    problems = [("HS071 (n = 4)", hs071, np.array([1.0, 5.0, 5.0, 1.0]), hs_cons,
                 [(1, 5)] * 4),
                (f"LUKVLE1-style (n = {n})", rosen, x0,
                 [so.NonlinearConstraint(lukvle1_cons, 0.0, 0.0)], None)]
    rows = []
    for name, f, x0, cons, bounds in problems:
        jittape.minimize(f, x0, method="ipopt", constraints=cons, bounds=bounds,
                         options={"max_iter": 2})  # compiles the sweeps: not timed
        for hess in ("exact", "limited-memory"):
            t0 = time.perf_counter()
            res = jittape.minimize(f, x0, method="ipopt", constraints=cons, bounds=bounds,
                                   options={"hessian_approximation": hess, "max_iter": 3000})
            rows.append((name, hess, time.perf_counter() - t0, res.nit, res.fun, res.status))
    return rows


def _fmt_hessians(rows):
    out = ["| function | n | nnz | pattern | coloring + first | colors | gradient | "
           "sparse Hessian | ratio | SciPy rosen_hess | dense (n HVPs) | max err |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for (name, n, nnz, tp, tc, nc, g, s, r, sc, dn, dense, err) in rows:
        out.append(f"| {name} | {n} | {nnz} | {tp * 1e3:.1f} ms | {tc * 1e3:.1f} ms | {nc} | "
                   f"{g * 1e3:.2f} ms | {s * 1e3:.2f} ms | **{r:.1f}x** | "
                   f"{'' if sc is None else f'{sc * 1e3:.2f} ms'} | {dense:.2f} s (n = {dn}) "
                   f"| {err} |")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--dense-n", type=int, default=10_000)
    ap.add_argument("--opt-n", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=21)
    ap.add_argument("--no-bfgs", action="store_true",
                    help="skip BFGS (SciPy's dense n x n update: minutes at n = 1000)")
    ap.add_argument("--output", type=Path, default=RESULTS / "second_order.md")
    args = ap.parse_args()
    lines = ["# Second order: sparse Hessians, Newton-type methods, IPOPT", "",
             f"- command: `python benchmarks/bench_second_order.py --n {args.n} --dense-n "
             f"{args.dense_n} --opt-n {args.opt_n}{' --no-bfgs' * args.no_bfgs}` (one process; medians of "
             f"{args.repeat} alternating samples)", "", "## Hessians", ""]
    lines += _fmt_hessians(hessian_rows(args.n, args.dense_n, args.repeat))
    lines += ["", f"## Rosenbrock n = {args.opt_n} with jittape.minimize", "",
              "| method | time | iterations | f evaluations | Hessian (or HVP) evaluations "
              "| max abs(x - 1) | success |", "|---|---:|---:|---:|---:|---:|---|"]
    for m, dt, nit, nfev, nhev, err, ok in minimize_rows(args.opt_n, not args.no_bfgs):
        lines.append(f"| {m} | {dt:.2f} s | {nit} | {nfev} | {nhev} | {err:.1e} | {ok} |")
    ip = ipopt_rows(args.opt_n)
    lines += ["", "## IPOPT (method='ipopt')", ""]
    if ip is None:
        lines.append("cyipopt is not installed (`pip install 'jittape[ipopt]'`): skipped.")
    else:
        lines += ["| problem | Hessian | time | iterations | objective | status |",
                  "|---|---|---:|---:|---:|---:|"]
        lines += [f"| {p} | {h} | {dt:.2f} s | {nit} | {fun:.10g} | {st} |"
                  for p, h, dt, nit, fun, st in ip]
    text = "\n".join(lines) + "\n"
    args.output.write_text(text)
    print(text)


if __name__ == "__main__":
    main()

"""Reverse-sweep kernel cost of each array op against NumPy's forward op, 10^6 elements.

For every op the script records a tape ``[input(s), op]`` on arrays of ``N`` elements, seeds
the op's output adjoint with ones, and times the reverse sweep over the op alone
(``jittape.sweeps.opsets.reverse_sweep`` with ``last`` = the op's record). Beside it, in the same
round-robin loop, it times the NumPy call that computes the op's primal on the same inputs.
The ratio (reverse kernel / NumPy forward) is the quality bar of issue 4: about 2 or less.
Medians of interleaved repeats: the machine is shared and noisy, so only the ratios measured
side by side mean anything.

    python benchmarks/bench_ops.py [--n 1000000] [--repeat 15] [--output PATH]
"""

import argparse
import datetime
import platform
import statistics
import time
from pathlib import Path

import numba
import numpy as np
import scipy.special as sp

import jittape
from jittape.sweeps.opsets import for_tape

RNG = np.random.default_rng(0)


def cases(n):
    """(label, f on plain arrays, inputs) for every array op worth a kernel."""
    pos = RNG.uniform(0.5, 2.0, n)
    sym = RNG.uniform(-0.9, 0.9, n)
    other = RNG.uniform(0.5, 2.0, n)
    side = int(np.sqrt(n))
    mat = RNG.standard_normal((side, side)) / side
    unary = [np.negative, np.abs, np.exp, np.log, np.sqrt, np.square, np.sin, np.cos, np.tan,
             np.tanh, np.sinh, np.cosh, np.arcsin, np.arccos, np.arctan, np.log1p, np.expm1,
             np.exp2, np.log2, np.log10, np.cbrt, np.arcsinh, np.arctanh, sp.expit, sp.erf,
             sp.erfc, sp.gammaln, sp.digamma, sp.log_ndtr]
    out = [(f.__name__, f, (sym if f in (np.arcsin, np.arccos, np.arctanh) else pos,))
           for f in unary]
    out += [(f"{name} c", f, (pos,)) for name, f in [
        ("add", lambda x: x + 1.5), ("mul", lambda x: x * 1.5), ("div", lambda x: x / 1.5),
        ("rsub", lambda x: 1.5 - x), ("rdiv", lambda x: 1.5 / x),
        ("pow", lambda x: x ** 2.5), ("rpow", lambda x: 1.5 ** x)]]
    binary = [np.add, np.subtract, np.multiply, np.divide, np.power, np.arctan2, np.maximum,
              np.minimum, np.logaddexp, np.logaddexp2, np.hypot, np.fmax, np.fmin, sp.xlogy]
    out += [(f.__name__, f, (pos, other)) for f in binary]
    out += [
        ("sum", np.sum, (pos,)), ("sum axis 0", lambda x: np.sum(x.reshape(side, -1), axis=0),
                                  (pos[:side * side],)),
        ("prod", lambda x: np.prod(x.reshape(-1, 10), axis=1), (pos,)),
        ("max", np.max, (pos,)), ("cumsum", np.cumsum, (pos,)),
        ("cumprod", lambda x: np.cumprod(x.reshape(-1, 10), axis=1), (pos,)),
        ("sort", np.sort, (pos,)),
        # NumPy returns views here; the forward op compared is the copy a tape record makes
        ("slice x[1:]", lambda x: x[1:].copy(), (pos,)),
        ("gather x[::2]", lambda x: x[::2].copy(), (pos,)),
        ("transpose", lambda x: x.reshape(side, -1).T.copy(), (pos[:side * side],)),
        ("where", lambda x, y: np.where(x > 1.0, x, y), (pos, other)),
        ("concatenate", lambda x, y: np.concatenate([x, y]), (pos, other)),
        ("matvec", lambda x: mat @ x[:side], (pos,)),
    ]
    return out


def _median_times(fns, repeat):
    times = [[] for _ in fns]
    for _ in range(repeat):
        for k, f in enumerate(fns):
            t0 = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


def measure(label, f, inputs, repeat):
    nums = tuple(range(len(inputs)))
    tape = jittape.record(f, *inputs, argnums=nums)
    t = tape.arrays
    last = tape.out_id
    adj = np.zeros_like(t.val)
    adj[t.off[last]:t.off[last + 1]] = 1.0
    sw = for_tape(t)
    sw.reverse_sweep(*t.columns, t.val, adj, 0, last + 1)  # warm up

    def rev():
        sw.reverse_sweep(*t.columns, t.val, adj, 0, last + 1)

    def fwd():
        f(*inputs)
    t_np, t_rev = _median_times([fwd, rev], repeat)
    return label, t_np, t_rev


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="elements per array")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--output", default=str(Path(__file__).parent / "results" / "ops.md"))
    args = ap.parse_args(argv)
    rows = [measure(label, f, inputs, args.repeat) for label, f, inputs in cases(args.n)]
    head = (f"# Reverse kernels vs NumPy forward, {args.n:,} elements\n\n"
            f"{datetime.date.today()}, {platform.platform()}, {platform.processor() or 'cpu'}, "
            f"python {platform.python_version()}, numpy {np.__version__}, numba "
            f"{numba.__version__}. Medians of {args.repeat} interleaved repeats.\n\n"
            "| op | NumPy forward | jittape reverse kernel | ratio | bar <= 2 |\n"
            "|---|---:|---:|---:|:---:|\n")
    body = "".join(f"| {lab} | {a * 1e3:.2f} ms | {b * 1e3:.2f} ms | {b / a:.2f} | "
                   f"{'yes' if b / a <= 2.0 else 'no'} |\n" for lab, a, b in rows)
    text = head + body
    print(text)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(text)


if __name__ == "__main__":
    main()

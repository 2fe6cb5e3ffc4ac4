"""ADBench bundle adjustment: jittape's sparse Jacobian of the BA residuals.

ADBench (Srajer, Kukelova & Fitzgibbon, "A benchmark of selected algorithmic
differentiation tools on some problems in computer vision and machine learning",
Optimization Methods & Software 33(4-6), 2018; github.com/microsoft/ADBench) times the
Jacobian of the BA residual vector: ``2p`` reprojection residuals ``w_i (proj_i - feat_i)``
and ``p`` weight residuals ``1 - w_i^2`` (ADBench's ``computeReprojError`` and
``computeZachWeightError``, ``src/cpp/shared/ba.h``), with respect to ``11n + 3m + p``
parameters (cameras, points, weights), a ``3p x (11n + 3m + p)`` sparse matrix
(ADBench's ``BASparseMat``: rows of observation ``i`` are ``2i, 2i + 1``, its weight row is
``2p + i``). The residuals here are the vectorized NumPy of
:func:`benchmarks.problems.ba.residuals` (checked against ADBench's unit-test values before
anything is timed), flattened in that row order.

Run (from the repository root; reads ADBench's inputs from ``../shared/adbench/ba`` or
``--data``)::

    PYTHONPATH=. python benchmarks/bench_ba.py [--instances ba1,ba2,ba3,ba4,ba5] [--quick]

Figures per instance:

* **pattern**: ``tape.jacobian_sparsity()`` on a fresh tape (index sets over the records,
  :mod:`jittape.derivatives.sparsity`), and **coloring**: the greedy column coloring of it
  (:mod:`jittape.derivatives.coloring`) and its number of colors: both paid once per tape;
* **first call**: ``jittape.taped(residuals).sparse_jacobian(x)`` the first time: recording,
  pattern, coloring, the sweeps' compile or cache load;
* **objective** (the NumPy residuals) and **sparse J** (the same ``taped`` function called
  again at a new point: one forward sweep, one tangent sweep per color, decompression into
  CSR), sampled side by side (:func:`benchmarks.common.sample_times`, medians), and their
  ratio, the figure ADBench's relative runtimes give;
* **forward replay**: ``tape.value(x)`` alone (the part of sparse J that is not tangents).

Checks per instance, before timing: the pattern is ADBench's structure (14 nonzeros per
reprojection row: ADBench stores 15, the 15th being the structural zero
``d proj_x / d x0_y`` or ``d proj_y / d x0_x``; one per weight row), and random columns of
the sparse Jacobian (cameras, points, weights) equal Jacobian-vector products
(``tape.jvp``) with unit tangents, at a point other than the recorded one.

Results: ``benchmarks/results/ba.md`` and stdout, with ADBench's published figures.
"""

import argparse
import os
import resource
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # python benchmarks/bench_ba.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from benchmarks import common as C  # noqa: E402
from benchmarks.problems import ba as B  # noqa: E402

DATA = C.ROOT.parent / "shared" / "adbench" / "ba"
DEFAULT = "ba1,ba2,ba3,ba4,ba5"
NCAM = B.NCAM

#: ADBench's published BA Jacobian runtimes, seconds (Srajer et al. 2018, Table "Absolute
#: runtimes for BA", Documents/ms.tex of microsoft/ADBench at commit 38cb7931; Xeon
#: E5-1620 3.6 GHz, Windows 10). Columns are p = 3.18e4 (ba1) and 2.04e5 (ba4), the two of
#: our instances the table has.
PUBLISHED_ABS = {
    "Manual (C++, Eigen)": (1.96e-02, 1.32e-01),
    "Tapenade (C)": (2.43e-02, 1.55e-01),
    "Finite differences (C++)": (4.25e-02, 2.77e-01),
    "Adept (C++)": (6.79e-02, 4.38e-01),
    "Ceres (C++)": (2.26e-01, 1.62e+00),
    "ADOL-C (C++)": (8.50e-01, 5.25e+00),
    "Autograd (Python)": (1.73e+02, 1.00e+03),
}
#: Jacobian / objective in the tool's language, same two instances: the "Relative runtimes
#: for BA" table, commented out in the same ms.tex (the paper shows these as a figure).
PUBLISHED_REL = {
    "Manual (C++, Eigen)": (6.72, 7.23), "Tapenade (C)": (8.78, 8.68),
    "Finite differences (C++)": (16.0, 16.0), "Adept (C++)": (25.4, 25.2),
    "Ceres (C++)": (86.2, 87.9), "ADOL-C (C++)": (288.0, 306.0),
    "Autograd (Python)": (67.2, 58.4),
}


def data_dir(path):
    """The folder of ADBench's BA inputs, or exit naming what is missing."""
    d = Path(path)
    if not (d / "test.txt").is_file():
        sys.exit(f"bench_ba: ADBench's BA inputs not found in {d} (expected test.txt and "
                 f"baN_n*_m*_p*.txt, the data/ba folder of github.com/microsoft/ADBench); "
                 f"pass --data DIR")
    return d


def instance_file(d, name):
    files = sorted(d.glob(f"{name}_n*_m*_p*.txt"))
    if not files:
        sys.exit(f"bench_ba: no {name}_n*_m*_p*.txt in {d}")
    return files[0]


def load(path):
    """``(x, n, m, p, obs, feats)`` of an ADBench BA file (tiled as ADBench reads it)."""
    cams, X, w, obs, feats = B.read(path)
    x = np.concatenate([cams.ravel(), X.ravel(), w])
    return x, cams.shape[0], X.shape[0], w.shape[0], obs, feats


def reference_check(d):
    """ADBench's unit-test values on ``test.txt`` (test/cpp/modules/common/BaTests.cpp)."""
    x, n, m, p, obs, feats = load(d / "test.txt")
    r = B.residual_vector(n, m, obs, feats)(x)
    want = np.array([*B.TEST_REPROJ0, B.TEST_WERR0])
    got = np.array([r[0], r[1], r[2 * p]]).tolist()
    want = want.tolist()
    if not np.allclose(got, want, rtol=1e-12, atol=0):
        sys.exit(f"bench_ba: residuals on test.txt {got} differ from ADBench's {want}")
    return (f"`test.txt`: first reprojection residual ({got[0]!r}, {got[1]!r}), first "
            f"weight residual {got[2]!r}; ADBench's unit test: ({want[0]!r}, {want[1]!r}), "
            f"{want[2]!r}")


def check_columns(tape, J, x1, n, m, p, rng, k=4):
    """Max relative difference between ``k`` random columns of each block (cameras,
    points, weights) of ``J`` and ``tape.jvp`` with the unit tangents."""
    blocks = [(0, NCAM * n), (NCAM * n, NCAM * n + 3 * m), (NCAM * n + 3 * m, x1.size)]
    cols = np.concatenate([rng.integers(lo, hi, k) for lo, hi in blocks])
    err = 0.0
    for j in cols:
        v = np.zeros_like(x1)
        v[j] = 1.0
        _, jv = tape.jvp(x1, tangents=v)
        col = J[:, [j]].toarray().ravel()
        err = max(err, C.rel_error(col, jv))
    return err, cols.size


def second_point(x):
    return x * (1.0 + 1e-3 * np.cos(np.arange(x.size)))


def once(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def run_instance(path, settings):
    """Check, then time one instance; returns a dict of figures."""
    import jittape
    from jittape.derivatives.sparsity import jacobian_coloring
    x, n, m, p, obs, feats = load(path)
    res = B.residual_vector(n, m, obs, feats)
    out = dict(name=path.stem.split("_")[0], n=n, m=m, p=p, cols=x.size, rows=3 * p)
    tf = jittape.taped(res)
    _, out["first"] = once(lambda: tf.sparse_jacobian(x))
    tape, out["record"] = once(lambda: jittape.record(res, x))
    pattern, out["pattern"] = once(tape.jacobian_sparsity)
    (_, colors), out["coloring"] = once(lambda: jacobian_coloring(tape))
    out.update(nnz=int(pattern.nnz), colors=int(colors.max()) + 1,
               records=tape.n_records, tape_mb=tape.nbytes / 2**20)
    want = B.jacobian_pattern(n, m, p, obs)
    out["pattern_ok"] = bool(want.shape == pattern.shape and want.nnz == pattern.nnz
                             and (want.indptr == pattern.indptr).all()
                             and (want.indices == pattern.indices).all())
    x1 = second_point(x)
    J1 = tf.sparse_jacobian(x1)
    out["jvp_err"], out["jvp_cols"] = check_columns(tape, J1, x1, n, m, p,
                                                     np.random.default_rng(p))
    out["value_err"] = C.rel_error(tape.value(x1), res(x1))
    samples = C.sample_times({"objective": lambda: res(x1),
                              "sparse J": lambda: tf.sparse_jacobian(x1),
                              "forward replay": lambda: tape.value(x1)}, settings)
    for key, s in samples.items():
        out[key] = C.stats(s)["median"]
    out["ratio"] = out["sparse J"] / out["objective"]
    out["replays"] = tf.stats.replays
    out["recordings"] = tf.stats.recordings
    out["peak_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return out


# --- report --------------------------------------------------------------------------------
def tables(results):
    T, I = C.fmt_time, C.fmt_int
    once_rows = [(r["name"], I(r["n"]), I(r["m"]), I(r["p"]), f"{I(r['rows'])} x {I(r['cols'])}",
                  I(r["nnz"]), r["colors"], I(r["records"]), f"{r['tape_mb']:.0f} MB",
                  T(r["record"]), T(r["pattern"]), T(r["coloring"]), T(r["first"]))
                 for r in results]
    call_rows = [(r["name"], T(r["objective"]), T(r["sparse J"]), C.fmt_ratio(r["ratio"]),
                  T(r["forward replay"]), f"{r['peak_rss_gb']:.1f} GB") for r in results]
    check_rows = [(r["name"], "yes" if r["pattern_ok"] else "**no**",
                   f"{r['jvp_err']:.1e} ({r['jvp_cols']} columns)", f"{r['value_err']:.1e}",
                   f"{r['recordings']} / {r['replays']}") for r in results]
    return "\n\n".join([
        "### Once per tape\n\n" + C.table(
            ["instance", "n", "m", "p", "J (rows x cols)", "nnz", "colors", "records",
             "tape", "record", "pattern", "coloring", "first call"], once_rows),
        "### Per call (medians, sampled side by side)\n\n" + C.table(
            ["instance", "objective (NumPy)", "sparse J (replayed)", "J / objective",
             "forward replay", "peak RSS so far"], call_rows),
        "### Checks (at a point other than the recorded one)\n\n" + C.table(
            ["instance", "pattern = ADBench's", "sparse J vs tape.jvp (max rel.)",
             "replayed value vs NumPy", "recordings / replays"], check_rows)])


def published(results):
    """ADBench's published figures beside ours on the instances its table has."""
    ours = {r["name"]: r for r in results}
    names = [k for k in ("ba1", "ba4") if k in ours]
    if not names:
        return "(ADBench's table has ba1 and ba4 of the instances run here; neither ran.)"
    head = ["tool"] + [f"{k}: J" for k in names] + [f"{k}: J / objective" for k in names]
    idx = {"ba1": 0, "ba4": 1}
    rows = [("**jittape** (this machine)", *[C.fmt_time(ours[k]["sparse J"]) for k in names],
             *[C.fmt_ratio(ours[k]["ratio"]) for k in names])]
    for tool, ab in PUBLISHED_ABS.items():
        rel = PUBLISHED_REL[tool]
        rows.append((tool, *[C.fmt_time(ab[idx[k]]) for k in names],
                     *[C.fmt_ratio(rel[idx[k]]) for k in names]))
    return C.table(head, rows)


NOTES = """\
- Residuals: ADBench's `ba.h` formulation (Rodrigues rotation of X - C, its `sqtheta != 0`
  branch: no instance has a zero rotation; p2e; radial distortion `1 + k1 r^2 + k2 r^4`;
  focal length and principal point; `w (proj - feat)`, `1 - w^2`), vectorized over the
  observations (`benchmarks/problems/ba.py`); checked against ADBench's unit-test values.
- Jacobian: `jittape.taped(residuals).sparse_jacobian(x)`; pattern and coloring are kept on
  the tape, so later calls are one forward sweep, one tangent sweep per color and the CSR
  decompression. ADBench's Jacobian stores 31 entries per observation; 2 of them are
  structural zeros (`proj_x` does not depend on `x0_y`, nor `proj_y` on `x0_x`), which the
  propagated pattern leaves out: 29p nonzeros. 14 colors = the longest row, the least any
  column coloring can use.
- ADBench's figures (Srajer et al. 2018, `Documents/ms.tex` of microsoft/ADBench): absolute
  times on a Xeon E5-1620 3.6 GHz under Windows 10, so only the ratios compare across
  machines, and the ratios divide by each language's own objective (C++ for the C++ tools,
  Python for Autograd; ours by the vectorized NumPy residuals). The relative table is the
  one left commented out in the paper's source (the published paper plots these figures);
  the paper's table has only ba1 and ba4 of ba1-ba5 (its other columns are ba7, ba10, ba13,
  ba16, ba19, ba20). ADBench's per-observation tools compute 15-column dense blocks and
  place them; jittape finds the pattern and colors it from the vectorized code.
"""


def report(results, ref_line, command, elapsed, quick):
    return ("# ADBench bundle adjustment: sparse Jacobian\n\n"
            + "\n".join(C.machine_info(command, 1, elapsed, quick)) + "\n\n"
            + f"Reference check: {ref_line}.\n\n" + tables(results)
            + "\n\n### ADBench's published BA Jacobian figures beside jittape's\n\n"
            + published(results) + "\n\n### Notes\n\n" + NOTES)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instances", default=DEFAULT, help=f"comma-separated (default {DEFAULT})")
    ap.add_argument("--data", default=str(DATA), help="ADBench's data/ba folder")
    ap.add_argument("--quick", action="store_true", help="fewer samples")
    ap.add_argument("--output", default=str(C.RESULTS / "ba.md"))
    a = ap.parse_args(argv)
    import jittape
    jittape.set_background(False)
    t_start = time.perf_counter()
    d = data_dir(a.data)
    ref_line = reference_check(d)
    settings = C.Settings(a.quick)
    results = []
    for name in [s for s in a.instances.split(",") if s]:
        path = instance_file(d, name)
        C.log(f"{name}: {path.name}")
        results.append(run_instance(path, settings))
        r = results[-1]
        C.log(f"  J {C.fmt_time(r['sparse J'])}, objective {C.fmt_time(r['objective'])}, "
              f"ratio {C.fmt_ratio(r['ratio'])}, colors {r['colors']}, "
              f"pattern ok {r['pattern_ok']}, jvp err {r['jvp_err']:.1e}")
    command = "PYTHONPATH=. python benchmarks/bench_ba.py " + " ".join(
        argv if argv is not None else sys.argv[1:])
    text = report(results, ref_line, command.strip(), time.perf_counter() - t_start, a.quick)
    print(text)
    Path(a.output).write_text(text)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())

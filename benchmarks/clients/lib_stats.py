"""scipy.stats: every continuous distribution of SciPy's own test list
(``scipy.stats._distr_params.distcont``, its example shape parameters) and the discrete ones
of ``distdiscrete`` with continuous parameters.

Per continuous distribution, with data drawn from it (n = 50, fixed seed, loc = 0.5, scale =
2): the gradient with respect to theta = (shapes, loc, scale) of ``dist.nnlf(theta, data)``
and of ``np.sum(dist.M(data, *shapes, loc=loc, scale=scale))`` for M in logpdf, logcdf,
logsf, cdf, sf; of ``np.sum(dist.ppf(q, ...))`` (q = 0.05 ... 0.95); and of
``np.sum(dist.logpdf(x, ...))`` with respect to the data x. Per discrete distribution: the
gradient of ``np.sum(dist.logpmf(k, *shapes))`` with respect to its continuous shapes. The
reference is always central differences of SciPy's own function (SciPy has no analytic
derivatives). ``import-style`` cases run in new interpreters: the methods bound before
``import jittape`` (``logpdf = st.norm.logpdf``), and jittape imported before SciPy.
"""

import json
import subprocess
import sys

import numpy as np

from benchmarks.clients.harness import Case, Problem

LIBRARY = "stats"
N, SEED, LOC, SCALE = 50, 20240601, 0.5, 2.0
Q = np.linspace(0.05, 0.95, 7)
THETA_CHECKS = ("nnlf", "logpdf", "logcdf", "logsf", "cdf", "sf", "ppf")
QUICK = {"norm", "gamma", "beta", "t", "lognorm", "weibull_min", "expon", "poisson", "binom",
         "nbinom"}
#: the continuous parameters (indices into the shapes) of SciPy's discrete distributions;
#: the others (counts, population sizes) are integers
DISCRETE_CONTINUOUS = {
    "bernoulli": [0], "betabinom": [1, 2], "betanbinom": [1, 2], "binom": [1],
    "boltzmann": [0], "dlaplace": [0], "geom": [0], "nchypergeom_fisher": [3],
    "nchypergeom_wallenius": [3], "logser": [0], "nbinom": [0, 1], "planck": [0],
    "poisson": [0], "poisson_binom": [0], "skellam": [0, 1], "zipf": [0], "zipfian": [0],
    "yulesimon": [0],
}
IMPORT_DISTS = {"norm": (), "gamma": (2.5,), "t": (4.0,), "beta": (2.0, 3.0),
                "expon": (), "lognorm": (0.6,)}


def _named(entries):
    """``(case name, distribution name, shapes)`` with repeated names numbered."""
    seen, out = {}, []
    for name, shapes in entries:
        seen[name] = seen.get(name, 0) + 1
        out.append((name if seen[name] == 1 else f"{name}#{seen[name]}", name, shapes))
    return out


def _data(dist, shapes, discrete=False):
    rng = np.random.default_rng(SEED)
    z = np.asarray(dist.rvs(*shapes, size=N, random_state=rng))
    # loc and scale applied here: some rvs ignore them (wrapcauchy's, in SciPy 1.17)
    return z if discrete else LOC + SCALE * z.astype(float)


def _second(theta, k):
    """The replay point: shapes up 0.3 %, loc down and scale up a little (the data stay in
    a support that starts at loc + a scale, a <= 1)."""
    t2 = np.array(theta, dtype=float)
    t2[:k] *= 1.003
    t2[k] -= 0.003 * t2[k + 1]
    t2[k + 1] *= 1.003
    return t2


def _theta_problem(dname, shapes, what):
    import scipy.stats as st
    dist = getattr(st, dname)
    k = len(shapes)
    theta = np.array([*shapes, LOC, SCALE], dtype=float)
    if what == "ppf":
        def f(t):
            return np.sum(dist.ppf(Q, *t[:k], loc=t[k], scale=t[k + 1]))
        return Problem(f, theta, _second(theta, k))
    data = _data(dist, shapes)
    if what == "nnlf":
        def f(t):
            return dist.nnlf(t, data)
    else:
        def f(t):   # the method looked up at each call, as user code does
            return np.sum(getattr(dist, what)(data, *t[:k], loc=t[k], scale=t[k + 1]))
    return Problem(f, theta, _second(theta, k))


def _x_problem(dname, shapes):
    import scipy.stats as st
    dist = getattr(st, dname)
    data = _data(dist, shapes)
    mid = np.median(data)

    def fvec(x):
        return dist.logpdf(x, *shapes, loc=LOC, scale=SCALE)

    def f(x):
        return np.sum(dist.logpdf(x, *shapes, loc=LOC, scale=SCALE))
    return Problem(f, data, mid + (data - mid) * 0.999, fvec=fvec)


def _discrete_problem(dname, shapes):
    import scipy.stats as st
    dist = getattr(st, dname)
    k = _data(dist, shapes, discrete=True)
    idx = DISCRETE_CONTINUOUS[dname]
    if dname == "poisson_binom":   # one shape: the vector of success probabilities
        p0 = np.asarray(shapes[0], dtype=float)

        def f(p):
            return np.sum(dist.logpmf(k, p))
        return Problem(f, p0, p0 * 0.997)
    theta = np.array([shapes[i] for i in idx], dtype=float)

    def f(t):
        full = list(shapes)
        for j, i in enumerate(idx):
            full[i] = t[j]
        return np.sum(dist.logpmf(k, *full))
    return Problem(f, theta, theta * 0.997)


# --- import styles (new interpreters) ------------------------------------------------------
_SNIPPET = r'''
import json, sys
import numpy as np
VARIANT = sys.argv[1]
DISTS = json.loads(sys.argv[2])
if VARIANT == "bound-before-import":
    import scipy.stats as st
    METHODS = {d: getattr(st, d).logpdf for d in DISTS}   # bound before jittape is imported
    import jittape
else:                                                      # jittape first, then SciPy
    import jittape
    import scipy.stats as st
    METHODS = {d: getattr(st, d).logpdf for d in DISTS}
from benchmarks.clients.harness import Problem, check
rows = []
for d, shapes in DISTS.items():
    k = len(shapes)
    data = LOC + SCALE * np.asarray(getattr(st, d).rvs(*shapes, size=N,
                                    random_state=np.random.default_rng(SEED)), dtype=float)
    logpdf = METHODS[d]
    def f(t, logpdf=logpdf, data=data, k=k):
        return np.sum(logpdf(data, *t[:k], loc=t[k], scale=t[k + 1]))
    theta = np.array([*shapes, LOC, SCALE])
    row = check(Problem(f, theta), timing=False)
    row["name"] = f"stats/import/{VARIANT}/{d}"
    rows.append(row)
print("ROWS " + json.dumps(rows, default=str))
'''


def _import_rows(variant):
    from benchmarks.clients.runner import ROOT, _worker_env
    head = f"N, SEED, LOC, SCALE = {N}, {SEED}, {LOC}, {SCALE}\n"
    proc = subprocess.run([sys.executable, "-c", head + _SNIPPET, variant,
                           json.dumps(IMPORT_DISTS)], cwd=ROOT, env=_worker_env(),
                          capture_output=True, text=True, timeout=100)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("ROWS ")), None)
    if line is None:
        return [dict(name=f"stats/import/{variant}/{d}", status="crash",
                     note=f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
                for d in IMPORT_DISTS]
    return [dict(r, check=f"import:{variant}") for r in json.loads(line[5:])]


def cases():
    from scipy.stats._distr_params import distcont, distdiscrete
    out = []
    for cname, dname, shapes in _named(distcont):
        quick = cname in QUICK
        for what in THETA_CHECKS:
            out.append(Case(LIBRARY, f"stats/{cname}/{what}",
                            lambda d=dname, s=shapes, w=what: _theta_problem(d, s, w),
                            quick=quick and what in ("nnlf", "logpdf", "cdf"), group=cname,
                            check=what))
        out.append(Case(LIBRARY, f"stats/{cname}/logpdf-x",
                        lambda d=dname, s=shapes: _x_problem(d, s), quick=quick,
                        group=cname, check="logpdf-x"))
    for cname, dname, shapes in _named(distdiscrete):
        if dname in DISCRETE_CONTINUOUS:
            out.append(Case(LIBRARY, f"stats/{cname}/logpmf",
                            lambda d=dname, s=shapes: _discrete_problem(d, s),
                            quick=cname in QUICK, group=cname, check="logpmf"))
    for variant in ("bound-before-import", "jittape-first"):
        # one case (one new interpreter) for all its distributions; the rows are per
        # distribution, named stats/import/<variant>/<dist>
        out.append(Case(LIBRARY, f"stats/import/{variant}", run=lambda v=variant:
                        _import_rows(v), quick=True, group="import-style",
                        check=f"import:{variant}"))
    return out

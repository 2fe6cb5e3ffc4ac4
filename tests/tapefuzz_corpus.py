"""The corpus of tests/tapefuzz.py: valid tape files of programs that cover the structured
ops and their pool layouts, and programs of the program fuzzer (tests/fuzzprog.py).

Each program is source text defining ``f(x) -> scalar`` and its input ``x``; the corpus
records it with :func:`jittape.record`, saves the tape and keeps what the mutator needs to
aim at the records that matter (structured records, their pool entries and values).
"""

import json

import numpy as np

#: name -> (source of f, input). Together: sort, gather, take, concatenate, strided views,
#: reshape and transpose, matmul, reductions over an axis, scans, linear algebra and
#: decompositions, where and select, maximum, clip, a loop with guards, argmax, norms,
#: einsum, interp and correlate, special functions, checkpoints and custom rules, nested
#: derivatives and a preallocated array, and
#: records of empty arrays (whose layouts bound nothing by their size).
FIXED = {
    "sort": ("""def f(x):
    w = np.linspace(-1.0, 2.0, x.size)
    return np.sum(np.sort(x) * w) + np.median(x) + np.percentile(x, 30.0)
""", [0.3, -0.5, 1.2, 0.8, -1.1, 0.05]),
    "gather": ("""def f(x):
    i = np.array([4, 1, 0, 3, 2])
    return (np.sum(x[i] * np.arange(x.size)) + np.sum(x[[0, 2, 2, 4]] ** 2)
            + np.sum(x[x > 0.1]) + np.sum(np.take_along_axis(x, i, 0)))
""", [0.3, -0.5, 1.2, 0.8, -1.1]),
    "take": ("""def f(x):
    y = np.concatenate([x[:2], x[::-1], np.take(x, [3, 1, 0])])
    z = np.stack([x, x ** 2])
    return np.sum(y * np.arange(y.size)) + np.sum(z[:, 1:] ** 2) + np.sum(np.take(x, [4, 0]))
""", [0.3, -0.5, 1.2, 0.8, -1.1]),
    "shape": ("""def f(x):
    a = x.reshape(2, 3)
    b = a.T @ a + np.transpose(a)[::-1] @ np.ones((2, 3))
    return np.sum(np.sum(b, axis=0) ** 2) + np.sum(np.mean(a, axis=1)) + np.sum(a[:, ::2] * 3)
""", [0.3, -0.5, 1.2, 0.8, -1.1, 0.7]),
    "scan": ("""def f(x):
    return (np.sum(np.cumsum(x) ** 2) + np.prod(1.0 + 0.1 * x)
            + np.sum(np.cumprod(1.0 + 0.1 * x)) + np.sum(np.diff(x) ** 2))
""", [0.3, -0.5, 1.2, 0.8, -1.1]),
    "linalg": ("""def f(x):
    a = x.reshape(3, 3) + 4.0 * np.eye(3)
    b = np.array([1.0, -2.0, 0.5])
    return (np.sum(np.linalg.solve(a, b)) + np.linalg.det(a) + np.sum(np.linalg.inv(a) ** 2)
            + np.linalg.slogdet(a)[1])
""", [0.9, -0.5, 0.3, 0.2, 1.1, -0.4, 0.6, 0.1, 1.3]),
    "select": ("""def f(x):
    y = np.where(x > 0.0, x ** 2, -x) + np.maximum(x, 0.1) + np.clip(x, -0.5, 0.5)
    z = np.select([x < -1.0, x < 1.0], [x ** 3, np.sin(x)], default=x)
    return np.sum(y) + np.sum(z) + np.sum(np.minimum(x, np.abs(x)))
""", [0.3, -0.5, 1.2, 0.8, -1.7]),
    "loop": ("""def f(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0.5:
            s = s + x[i] ** 2
        else:
            s = s - 3.0 * x[i]
    return s * np.max(x) + np.min(x) + x[np.argmax(x)] * x[np.argmin(x)]
""", [0.3, -0.5, 1.2, 0.8, -1.1]),
    "norm": ("""def f(x):
    a = x.reshape(2, 3)
    return (np.linalg.norm(x) + np.linalg.norm(a, axis=0).sum() + np.linalg.norm(x, 1)
            + np.einsum("ij,kj->ik", a, a).sum() + np.einsum("i,i->", x, x)
            + np.sum(np.max(a, axis=1)) + np.std(x) + np.var(a, axis=0).sum())
""", [0.3, -0.5, 1.2, 0.8, -1.1, 0.7]),
    "strided": ("""def f(x):
    a = x.reshape(3, 4)
    b = a[::2, 1:] * a[1:, ::-2].sum() + np.broadcast_to(a[0], (3, 4))[:2, :3]
    return np.sum(b ** 2) + np.sum(np.flip(a, 0)[:, 1] * np.rot90(a)[1, :3])
""", list(np.linspace(-1.0, 1.5, 12))),
    "signal": ("""def f(x):
    xp = np.array([-2.0, -0.5, 0.5, 2.0])
    return (np.sum(np.interp(x, xp, np.array([1.0, 0.0, 2.0, 1.0])))
            + np.sum(np.interp(0.3, xp, x[:4]))
            + np.sum(np.correlate(x, np.array([1.0, -0.5, 0.25]), "full"))
            + np.sum(np.convolve(x, x[:3])))
""", [0.3, -0.5, 1.2, 0.8, -1.1]),
    "special": ("""def f(x):
    y = scipy.special.logsumexp(x) + np.sum(scipy.special.gammaln(2.0 + x ** 2))
    return (y + np.sum(scipy.special.erf(x)) + np.sum(np.arctan2(x, 1.0 + x ** 2))
            + np.sum(np.hypot(x, 0.5)))
""", [0.3, -0.5, 1.2, 0.8, -1.1]),
    "empty": ("""def f(x):
    e = x[x > 5.0]
    return (np.sum(np.sort(e)) + np.sum(np.cumsum(e)) + np.sum(np.cumprod(e)) + np.sum(e)
            + np.sum(np.concatenate([e, x[:2]]) ** 2) + np.sum(np.concatenate([e, e]))
            + np.sum(np.ones((0, 0)) @ e) + np.sum(np.outer(e, x)) + np.sum(x))
""", [0.3, -0.5, 1.2, 0.8]),
    "decomp": ("""def f(x):
    a = x.reshape(3, 3)
    s = a @ a.T + 3.0 * np.eye(3)
    w, v = np.linalg.eigh(s)
    return (np.sum(np.linalg.cholesky(s)) + np.sum(w) + np.sum(v[:, 0] ** 2)
            + np.sum(np.linalg.svd(a, compute_uv=False)) + np.sum(np.linalg.qr(a)[1] ** 2)
            + np.sum(np.linalg.pinv(a) ** 2) + np.sum(scipy.linalg.expm(0.1 * a)))
""", [0.9, -0.5, 0.3, 0.2, 1.1, -0.4, 0.6, 0.1, 1.3]),
    "custom": ("""def f(x):
    from jittape.custom.examples import sin_mul, step
    g = jittape.checkpoint(step)
    y = jittape.checkpoint_loop(step, 3, x, 0.5, snapshots=2)
    return np.sum(g(g(x, 0.5), 0.5) * x) + np.sum(y) + np.sum(sin_mul(x, x[::-1]))
""", [0.3, -0.5, 1.2]),
    "complex": ("""def f(x):
    z = x[:4] * (0.5 + 1j) + np.exp(1j * x[4:8])
    w = np.linalg.eigvals(np.reshape(x[:9], (3, 3)) + np.diag([0.0, 3.0, 6.0]))
    s = np.fft.irfft(np.fft.rfft(x) * (1.0 - 0.5j), n=x.size)
    return np.sum(np.abs(np.fft.fft(z)) ** 2) + np.sum(np.real(w)) + np.sum(s * x) + np.sum(
        np.imag(np.sqrt(z + 2.0)))
""", [0.3, -0.5, 1.2, 0.8, 0.1, -0.7, 0.4, 0.9, 1.1]),
    "nested": ("""def f(x):
    g = jittape.grad(lambda z: np.sum(np.sin(z) * z ** 2))(x)
    t = jittape.jvp(lambda z: np.exp(0.3 * z) * z, (x,), (x[::-1],))[1]
    r = np.zeros(x.size)
    r[1:] = x[:-1] * 2.0
    return np.sum(g * t) + np.sum(r ** 2)
""", [0.3, -0.5, 1.2]),
}

#: The in-suite test's programs: the cheap-to-compile structured ops (the long profile adds
#: decompositions, special functions and custom rules).
SUITE = ("sort", "gather", "take", "shape", "scan", "linalg", "select", "loop", "norm",
         "strided", "signal", "empty", "nested")


def function(source):
    """``f`` of a program's source (it may use np, scipy and jittape)."""
    import scipy.linalg  # programs call scipy.linalg, .special and .stats: loaded before
    import scipy.special  # a recording, which wraps scipy.stats only if it is loaded then
    import scipy.stats

    import jittape
    ns = {"np": np, "scipy": scipy, "jittape": jittape}
    exec(source, ns)  # noqa: S102  (the corpus's own programs)
    return ns["f"]


def fuzz_programs(count, seed):
    """``count`` programs of tests/fuzzprog.py, the same for the same seed: ``[(source,
    x)]``. Hypothesis draws them (seeded, generation only: nothing shrinks)."""
    import fuzzprog
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed
    out = []

    @hypothesis_seed(seed)
    @settings(max_examples=4 * count, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(fuzzprog.programs())
    def collect(p):
        if len(out) < count and all(p.source != s for s, _ in out):  # (Hypothesis repeats)
            out.append((p.source, p.x))
    collect()
    return out


def targets(tape):
    """What the mutator aims at in a tape: record ids of structured records (and custom
    rules' regions and calls), every record's k and value span (lists of ints)."""
    from jittape.ops import OPS
    t = tape.arrays
    kinds = [OPS[c].kind for c in t.op.tolist()]
    return dict(n=int(t.n_records), structured=[i for i, kd in enumerate(kinds)
                                                if kd in ("structured", "region", "call")],
                consts=[i for i, c in enumerate(t.op.tolist()) if OPS[c].name == "const"],
                k=t.k.tolist(), off=t.off.tolist(), pool=len(t.pool), val=len(t.val),
                ops=sorted({OPS[c].name for c in t.op.tolist()}))


def build(directory, names=tuple(FIXED), n_fuzz=0, fuzz_seed=0):
    """Record and save the corpus in ``directory``: a list of entries (dicts: id, source,
    x, shape, path, targets), also written to ``directory/corpus.json``."""
    import jittape
    programs = [(name, FIXED[name][0], np.array(FIXED[name][1], dtype=float)) for name in names]
    for j, (source, x) in enumerate(fuzz_programs(n_fuzz, fuzz_seed) if n_fuzz else []):
        programs.append((f"fuzz{j:02d}", source, np.asarray(x, dtype=float)))
    corpus = []
    for pid, source, x in programs:
        try:
            tape = jittape.record(function(source), x.copy() if x.ndim else float(x))
            if tape.out_shape not in ((), (1,)) or tape.out_id < 0:
                continue  # (vector or constant outputs: no gradient to compare)
            path = directory / f"{pid}.npz"
            tape.save(path)
        except Exception as e:  # (a fuzz program jittape cannot record: left out)
            if not pid.startswith("fuzz"):
                raise RuntimeError(f"corpus program {pid} does not record: {e}") from e
            continue
        corpus.append(dict(id=pid, source=source, x=x.ravel().tolist(), shape=list(x.shape),
                           path=str(path), targets=targets(jittape.load(path))))
    (directory / "corpus.json").write_text(json.dumps(corpus))
    return corpus

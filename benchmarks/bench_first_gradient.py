"""The first gradient of a large program, cold and when its ops were compiled before.

Run::

    python benchmarks/bench_first_gradient.py [--quick] [--repeat N] [--programs lstm,gmm,ba]
        [--jittape PATH] [--output benchmarks/results/first_gradient.md]

(issue 25, item 4: "a new op set costs little when its ops were compiled before"; targets:
the first gradient of a 10^4-record array program with ~15 distinct ops <= 1 s when its ops
were compiled before in any sets, <= 5 s from empty caches, on 2 cores). A tape's op set
selects the Numba sweeps compiled for that set (``jittape.sweeps.opsets``); a set no
compiled set contains whose per-op pieces are all in the cache is composed of them and
compiles nothing (``jittape.sweeps.composed``; the pieces compile in the compile process,
at low priority, whenever a set compiles cold with background compiles on).

Programs, each ``f(x) -> float`` in plain NumPy on a flat float64 vector:

* **LSTM**: ADBench's LSTM objective (:func:`lstm_objective`) with l = 2 layers, hidden
  size b = 14 (ADBench's), a sequence of c = 116 steps of seeded random data: about 10^4
  records, the tape of a loop;
* **GMM**: ADBench's GMM d = 10, K = 25, n = 1,000 (``benchmarks/problems/gmm.py``);
* **BA**: ADBench's bundle adjustment ba1 (``benchmarks/problems/ba.py``): vectorized
  programs of few records over large arrays.

Every figure comes from a NEW Python process (this script with ``--child gradient``), run
as ``bench_first_minute.py`` runs its children (``benchmarks/children.py``: caches in
temporary directories, ``JITTAPE_BACKGROUND`` unset (*default*) or ``0`` (*foreground*),
a new session the parent waits for), but with ``JITTAPE_QUIET`` unset so that compile
notices can be counted. Cells (the cache directories of each line are new and empty at its
start):

* **cold**: the program from empty caches, default mode, then **warm, same program**: the
  same program again in the caches the cold run left (its op set compiled);
* **cold** in **foreground** mode: from empty caches, ``JITTAPE_BACKGROUND=0``;
* **warm, new set of compiled ops**: two preparatory children, *prep A* the program plus
  ``0.0 * np.sum(np.sinh(x[:2]))`` and *prep B* the program plus the same term of
  ``np.cosh`` (recorded: ``mulc``, ``sinh``, ``cosh`` records), each waited for to the end
  of its session, so that their compile worker has compiled the pieces; then the program
  plus both terms: its set is the union, in neither compiled set, every op compiled before.

Figures of a child (``time.perf_counter()`` minus ``T0``, this file's first statement,
before NumPy and jittape are imported):

* *import*: T0 to ``import numpy, jittape`` done;
* *build*: T0 to the program built (GMM and BA: importing their ``benchmarks/problems``
  modules, which import Numba and SciPy for their hand gradients, and reading ADBench's
  file; so their *first call* does not include Numba's import, LSTM's does);
* *first gradient since start*: T0 to the return of the first
  ``jittape.value_and_grad(f)(x0)``; *first call*: that call alone;
* *compiled-all*: T0 to the return of ``jittape.wait_compiled()``, called right after;
* *steady*: the median of the next 20 calls, each timed alone (eager gradients: recording
  and one reverse sweep);
* *composed*: whether the reverse sweep the set ran is bound to the runner of
  ``jittape.sweeps.composed`` (read off ``jittape.sweeps.opsets``: the set's ``Sweeps``);
* *compiles announced*: lines of the child's and its compile worker's stderr starting with
  ``jittape: compil`` (a compile never finished in this cache, or one that took over 1 s);
* *records*, *distinct ops*: ``jittape.record(f, x0)`` after the timings: ``n_records``
  and the opcodes in its op column (the leaves ``input`` and ``const`` included);
* *error*: the gradient's max|g - ref| / max|ref|, ref the hand NumPy gradient (GMM, BA;
  the extra terms' gradients are exact zeros), or central differences on 5 coordinates
  (LSTM, h = 1e-6 max(1, |x_i|)).

The parent's figure *linger* is how long the child's session (the compile worker) outlived
the child; the interpreter's start before T0 (about 30 ms) is in the JSON only (*startup*).
A line gives the median (min-max) over ``--repeat`` runs of the first gradient, medians of
the rest, the largest error. ``--quick``: LSTM only, one repeat. Results go to ``--output``
(Markdown) and the same name with ``.json`` (every child's figures, preps included).
"""

import time

T0 = time.perf_counter()  # a child's process start: the first statement, before any import

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

SCRIPT = Path(__file__).resolve()
ROOT = SCRIPT.parent.parent
if "--child" not in sys.argv:  # the parent's helpers; a child imports nothing of benchmarks/
    sys.path.insert(0, str(ROOT))
    from benchmarks.children import (child_env, code_line, describe_code, log,  # noqa
                                     spawn, temp_work, write_results)
PROGRAMS = ("lstm", "gmm", "ba")
LABELS = {"lstm": "LSTM l=2 b=14 c=116", "gmm": "GMM d=10 K=25 n=1k", "ba": "BA ba1"}
LSTM = (2, 14, 116)  # layers, hidden size, sequence length: about 10^4 records
STEADY = 20  # calls timed after wait_compiled()
TIMEOUT = 900.0  # seconds a child may take (a cold compile of a large set on a busy machine)
TARGET_NEW, TARGET_COLD = 1.0, 5.0  # issue 25 item 4 (s)
CELLS = ("cold", "warm, same program", "warm, new set of compiled ops")
EXTRA_NEW = ["sinh", "cosh"]  # the new set's extra terms; prep A and B take one each


# --- the child: one first gradient in a new process -------------------------------------
def since():
    return time.perf_counter() - T0


def lstm_objective(layers, b, c, seed=0):
    """ADBench's LSTM objective: ``(f, x0)``, ``x = [main (2l x 4b), extra (3 x b)]``
    flattened; the initial state (2l x b) and the sequence (c x b) seeded constants."""
    import numpy as np
    rng = np.random.default_rng(seed)
    state, seq = rng.uniform(-1, 1, (2 * layers, b)), rng.uniform(-1, 1, (c, b))
    n_main = 2 * layers * 4 * b

    def sigmoid(z):
        return 1.0 / (1.0 + np.exp(-z))

    def f(theta):
        main = theta[:n_main].reshape(2 * layers, 4 * b)
        extra = theta[n_main:].reshape(3, b)
        hidden = [state[2 * i] for i in range(layers)]
        cell = [state[2 * i + 1] for i in range(layers)]
        total = 0.0
        for t in range(c - 1):
            x = seq[t] * extra[0]
            for i in range(layers):
                w, bias = main[2 * i], main[2 * i + 1]
                forget = sigmoid(x * w[:b] + bias[:b])
                ingate = sigmoid(hidden[i] * w[b:2 * b] + bias[b:2 * b])
                outgate = sigmoid(x * w[2 * b:3 * b] + bias[2 * b:3 * b])
                change = np.tanh(hidden[i] * w[3 * b:] + bias[3 * b:])
                cell[i] = cell[i] * forget + ingate * change
                hidden[i] = outgate * np.tanh(cell[i])
                x = hidden[i]
            ypred = x * extra[1] + extra[2]
            ynorm = ypred - np.log(np.sum(np.exp(ypred)))
            total = total + np.sum(seq[t + 1] * ynorm)
        return -total / ((c - 1) * b)
    return f, rng.uniform(-1, 1, n_main + 3 * b)


def with_terms(f, names):
    """``f`` plus ``0.0 * np.sum(np.<name>(x[:2]))`` per name: ops added, value unchanged."""
    import numpy as np
    fns = [getattr(np, name) for name in names]

    def g(x):
        out = f(x)
        for fn in fns:
            out = out + 0.0 * np.sum(fn(x[:2]))
        return out
    return g


def central_error(f, x, g, count=5):
    """max|g_i - fd_i| / max|fd_i| over ``count`` coordinates spread over ``x``."""
    import numpy as np
    idx = np.linspace(0, x.size - 1, count).astype(int)
    fd = []
    for i in idx:
        h, e = 1e-6 * max(1.0, abs(x[i])), np.zeros_like(x)
        e[i] = h
        fd.append((f(x + e) - f(x - e)) / (2 * h))
    fd = np.array(fd)
    return float(np.max(np.abs(g[idx] - fd)) / np.max(np.abs(fd)))


def program(spec):
    """``(f, x0, error)`` of the spec's program with its extra terms; ``error(g)``: the
    gradient's relative error (see the module docstring)."""
    import numpy as np
    if spec["program"] == "lstm":
        f, x0 = lstm_objective(*LSTM)
        return with_terms(f, spec["extra"]), x0, lambda g: central_error(f, x0, g)
    import importlib
    sys.path.insert(0, str(ROOT))  # (jittape is imported already: from --jittape's PATH)
    module = importlib.import_module(f"benchmarks.problems.{spec['program']}")
    p = module.build(("1k", 10, 25), "gmm-d10-K25-1k") if spec["program"] == "gmm" else \
        module.build("ba1_n49_m7776_p31843", "ba1")
    ref = p.grad_numpy(p.x0)
    return (with_terms(p.f, spec["extra"]), p.x0,
            lambda g: float(np.max(np.abs(g - ref)) / np.max(np.abs(ref))))


def op_set(f, x0):
    """Records, opcode names and whether the set's reverse sweep ran composed."""
    import numpy as np
    import jittape
    from jittape.optable.table import OPS
    from jittape.sweeps import opsets
    tape = jittape.record(f, x0)
    sw = opsets.for_tape(tape.arrays)
    ns = opsets._COMPOSED.get((sw.codes, "reverse_sweep"))  # noqa: SLF001 (a benchmark)
    bound = getattr(sw.reverse_sweep, "func", None)
    return {"records": int(tape.n_records),
            "ops": [OPS[c].name for c in np.unique(tape.arrays.op)],
            "composed": ns is not None and bound is ns.reverse_sweep.run}


def child_gradient(spec):
    import numpy as np
    import jittape
    out = {"import": since()}
    f, x0, error = program(spec)
    out["build"] = since()
    vg = jittape.value_and_grad(f)
    t = time.perf_counter()
    _, g = vg(x0)
    out["first_call"], out["first"] = time.perf_counter() - t, since()
    jittape.wait_compiled()
    out["compiled_all"] = since()
    times = []
    for _ in range(STEADY):
        t = time.perf_counter()
        vg(x0)
        times.append(time.perf_counter() - t)
    out["steady"] = statistics.median(times)
    out["error"] = error(np.asarray(g))
    out.update(op_set(f, x0))
    return out


def child_main(kind, spec, result):
    out = {"gradient": child_gradient}[kind](json.loads(spec))
    import jittape
    out.update(t0=T0, end=since(), jittape_file=jittape.__file__)
    Path(result).write_text(json.dumps(out))


# --- the parent: the cells of a program ------------------------------------------------------
def run(name, extra, cell, mode, env, work):
    """One child, its figures tagged with the cell and mode."""
    data = spawn(SCRIPT, "gradient", {"program": name, "extra": extra}, env, work, TIMEOUT)
    data.update(program=name, cell=cell, mode=mode)
    log(f"  {name} {cell} ({mode}): first gradient {data.get('first', float('nan')):.2f} s, "
        f"composed {data.get('composed')}, {len(data['notices'])} compile notices, linger "
        f"{data['linger']:.2f} s")
    return data


def program_cells(name, args):
    """Every cell of one program once, each line in new cache directories."""
    runs = []
    with temp_work("jittape-fg-") as work:
        env = child_env(args.jittape, work, "default", quiet=False)
        runs.append(run(name, [], CELLS[0], "default", env, work))
        runs.append(run(name, [], CELLS[1], "default", env, work))
    with temp_work("jittape-fg-") as work:
        env = child_env(args.jittape, work, "foreground", quiet=False)
        runs.append(run(name, [], CELLS[0], "foreground", env, work))
    with temp_work("jittape-fg-") as work:
        env = child_env(args.jittape, work, "default", quiet=False)
        for prep, term in zip("AB", EXTRA_NEW):
            runs.append(run(name, [term], f"prep {prep} (+{term})", "default", env, work))
        runs.append(run(name, EXTRA_NEW, CELLS[2], "default", env, work))
    return runs


# --- the report ----------------------------------------------------------------------------------
def med(runs, key):
    vals = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def spread(runs, key):
    vals = [r[key] for r in runs if r.get(key) is not None]
    if not vals:
        return "—"
    m = statistics.median(vals)
    return f"{m:.2f} s" if len(vals) == 1 else f"{m:.2f} s ({min(vals):.2f}-{max(vals):.2f})"


def groups(runs):
    """``{(program, cell, mode): [runs]}`` of the table's lines, in table order."""
    out = {}
    for name in PROGRAMS:
        for cell, mode in ((CELLS[0], "default"), (CELLS[0], "foreground"),
                           (CELLS[1], "default"), (CELLS[2], "default")):
            got = [r for r in runs if (r["program"], r["cell"], r["mode"]) == (name, cell, mode)]
            if got:
                out[name, cell, mode] = got
    return out


def row(name, cell, mode, runs):
    from benchmarks.common import fmt_time
    ok = [r for r in runs if r["rc"] == 0 and "first" in r]
    s = lambda key: "—" if med(ok, key) is None else f"{med(ok, key):.2f} s"  # noqa: E731
    composed = sum(bool(r.get("composed")) for r in ok)
    failed = f" ({len(runs) - len(ok)} failed)" if len(ok) < len(runs) else ""
    return [LABELS[name] + failed, f"{ok[0]['records']:,}" if ok else "—",
            str(len(ok[0]["ops"])) if ok else "—", cell, mode, s("import"), s("build"),
            spread(ok, "first"), s("first_call"), s("compiled_all"), fmt_time(med(ok, "steady")),
            "yes" if ok and composed == len(ok) else "no" if not composed else
            f"{composed} of {len(ok)}", ", ".join(str(len(r["notices"])) for r in runs),
            s("linger"),
            "—" if med(ok, "error") is None else f"{max(r['error'] for r in ok):.0e}"]


def target_line(lines):
    """The median first gradients of the target cells against the targets."""
    parts = []
    for cell, mode, target in ((CELLS[2], "default", TARGET_NEW), (CELLS[0], "default",
                                                                   TARGET_COLD)):
        got = []
        for name in PROGRAMS:
            runs = [r for r in lines.get((name, cell, mode), []) if "first" in r]
            if runs:
                first, call = med(runs, "first"), med(runs, "first_call")
                got.append(f"{LABELS[name].split()[0]} {first:.2f} s "
                           f"({'met' if first <= target else 'NOT met'}; first call "
                           f"{call:.2f} s)")
        parts.append(f"{cell} <= {target:.0f} s: " + ", ".join(got))
    return ("Against the targets (issue 25 item 4; first gradient since start, median): "
            + "; ".join(parts) + ".")


def report(args, runs, code, elapsed):
    from benchmarks.common import machine_info, table
    command = " ".join(["python benchmarks/bench_first_gradient.py"] + sys.argv[1:])
    info = [ln for ln in machine_info(command, "-", elapsed, args.quick)
            if not ln.startswith(("- code:", "- threads:"))]
    lines = groups(runs)
    header = ["program", "records", "distinct ops", "cell", "mode", "import", "build",
              "first gradient since start", "first call", "compiled-all", "steady /gradient",
              "composed", "compiles announced", "linger", "error"]
    ops = {r["program"]: r["ops"] for r in runs if r["cell"] == CELLS[0] and "ops" in r}
    text = ["# The first gradient of a large program: cold, warm, a new set of compiled ops",
            ""] + info + [
        f"- measured: {describe_code(*code)}",
        f"- repeats: {args.repeat} (first gradient: median (min-max); the rest: medians; "
        "compiles announced: each run's count)",
        "- each figure from a new process; figures are defined in the script's docstring", "",
        table(header, [row(*key, rs) for key, rs in lines.items()],
              ["---"] + ["---:"] * 2 + ["---"] * 2 + ["---:"] * 10), "",
        target_line(lines), ""]
    text += [f"- {LABELS[n]} ops: {', '.join(o)}" for n, o in ops.items()]
    text += ["- the new set adds `mulc`, `sinh`, `cosh` (`0.0 * np.sum(np.sinh(x[:2]))` and "
             "the same of `np.cosh`); prep A and B (in the JSON) compiled the program with "
             "one term each", ""]
    return "\n".join(text)


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="LSTM only, one repeat")
    p.add_argument("--repeat", type=int, default=None, help="runs of every cell (default 2)")
    p.add_argument("--programs", default=None,
                   help="comma-separated, of: " + ", ".join(PROGRAMS))
    p.add_argument("--jittape", type=Path, default=ROOT,
                   help="checkout whose jittape is measured (default: this one)")
    p.add_argument("--output", type=Path,
                   default=ROOT / "benchmarks/results/first_gradient.md")
    args = p.parse_args()
    args.repeat = args.repeat or (1 if args.quick else 2)
    args.programs = (args.programs or ("lstm" if args.quick else ",".join(PROGRAMS))).split(",")
    args.jittape = args.jittape.resolve()
    return args


def main():
    args = parse()
    start, t = code_line(args.jittape), time.perf_counter()
    runs = []
    for k in range(args.repeat):
        for name in args.programs:
            log(f"{name}, run {k + 1} of {args.repeat}:")
            runs += program_cells(name, args)
    code = (start, code_line(args.jittape))
    text = report(args, runs, code, time.perf_counter() - t)
    write_results(args.output, text, {"code": code, "runs": runs})
    print(text)


if __name__ == "__main__":
    if "--child" in sys.argv:
        a = sys.argv
        child_main(a[a.index("--child") + 1], a[a.index("--spec") + 1], a[a.index("--result") + 1])
    else:
        main()

"""The suite's Markdown report and plot (from the result dicts of :mod:`benchmarks.run`)."""

import numpy as np

from .common import FD_TOL, REL_TOL, fmt_int, fmt_ratio, fmt_time, table
from .tools import KIND, LABEL, TOOLS

BAR_N = 100_000  # bar 1 applies to problems of at most this many inputs
BAR_HAND = 3.0   # bar 2: replay within this factor of hand Numba
PEER_LABELS = ("jax-jit", "jax-eager", "torch", "autograd", "casadi-sx", "casadi-c", "scipy-fd")
HEADLINE_PEERS = ("jax-jit", "casadi-sx", "casadi-c", "torch")  # the headline's "fastest peer"


def med(r, tool):
    v = r["tools"].get(tool)
    if not v or v.get("status") != "ok" or "stats" not in v:
        return None
    return v["stats"]["median"]


def status_cell(v):
    """A table cell for a tool without a median: why (``not installed``, ``skip``, ...)."""
    if v.get("status") == "skip" and "not installed" in v.get("note", ""):
        return "not installed"
    return {"skip": "skip", "wrong": "WRONG", "error": "error"}.get(v.get("status"), "—")


def best_replay(r):
    """(time, which) of the faster of interpreted and compiled replay (BFGS: minimize)."""
    cands = [(med(r, t), t) for t in ("jittape-replay", "jittape-compiled")]
    cands = [c for c in cands if c[0] is not None]
    return min(cands) if cands else (None, None)


def _which(t):
    return "compiled" if t == "jittape-compiled" else "interpreted"


def _pname(r):
    return f"{r['family']} {r['label']}"


# --- quality bars ----------------------------------------------------------------------------
def bars(results, bres):
    rows1, rows2, rows3 = [], [], []
    met = {1: [0, 0], 2: [0, 0], 3: [0, 0]}
    allres = results + ([bres] if bres else [])
    for r in allres:
        rep, which = best_replay(r)
        hand = med(r, "hand-numba")
        name = _pname(r)
        if rep is None:
            continue
        if r["n"] <= BAR_N:
            peers = [(med(r, p), p) for p in PEER_LABELS if med(r, p) is not None]
            faster = sorted((t, p) for t, p in peers if t <= rep)
            if peers:
                fastest = min(peers)
                ok = not faster
                met[1][0] += ok
                met[1][1] += 1
                rows1.append([name, fmt_int(r["n"]), f"{fmt_time(rep)} ({_which(which)})",
                              f"{LABEL[fastest[1]]} {fmt_time(fastest[0])}",
                              fmt_ratio(rep / fastest[0]),
                              "yes" if ok else "**no**: " + ", ".join(
                                  f"{LABEL[p]} {fmt_ratio(rep / t)}x faster" for t, p in faster)])
        if hand is not None:
            ratio = rep / hand
            ok = ratio <= BAR_HAND
            met[2][0] += ok
            met[2][1] += 1
            interp, comp = med(r, "jittape-replay"), med(r, "jittape-compiled")
            rows2.append([name, fmt_int(r["n"]), fmt_time(hand),
                          fmt_time(interp), fmt_ratio(interp / hand) if interp else "—",
                          fmt_time(comp) if comp else "—",
                          fmt_ratio(comp / hand) if comp else "—",
                          "yes" if ok else f"**no** ({fmt_ratio(ratio)}x)"])
        eager = med(r, "jittape-eager")
        ag, to = med(r, "autograd"), med(r, "torch")
        if eager is not None and (ag is not None or to is not None):
            ok = all(eager < t for t in (ag, to) if t is not None)
            met[3][0] += ok
            met[3][1] += 1
            rows3.append([name, fmt_int(r["n"]), fmt_time(eager), fmt_time(ag),
                          fmt_ratio(eager / ag) if ag else "—", fmt_time(to),
                          fmt_ratio(eager / to) if to else "—",
                          "yes" if ok else "**no**"])
    return rows1, rows2, rows3, met


def bars_section(results, bres):
    rows1, rows2, rows3, met = bars(results, bres)
    out = ["## Quality bars", "",
           "Best replay = the faster of interpreted (`tape.gradient`) and compiled "
           "(`tape.compile()`) replay; for BFGS, `jittape.minimize` (interpreted) and the "
           "compiled tape's `value_and_gradient`. Ratios below 1: jittape is faster.", "",
           f"**1. Replay faster than every peer** (JAX jit, JAX eager, PyTorch eager, autograd, "
           f"CasADi SX and C, SciPy FD), problems of at most {BAR_N:,} inputs: met on {met[1][0]} of "
           f"{met[1][1]}.", "",
           table(["problem", "n", "best replay", "fastest peer", "replay ÷ fastest peer",
                  "met?"], rows1), "",
           f"**2. Replay within {BAR_HAND:g}x of hand Numba**, every problem: met on "
           f"{met[2][0]} of {met[2][1]}.", "",
           table(["problem", "n", "hand Numba", "interpreted replay", "÷ hand",
                  "compiled replay", "÷ hand", "met? (best)"], rows2), "",
           f"**3. Eager faster than autograd and PyTorch eager**, every problem: met on "
           f"{met[3][0]} of {met[3][1]}.", "",
           table(["problem", "n", "jittape eager", "autograd", "eager ÷ autograd",
                  "PyTorch eager", "eager ÷ PyTorch", "met?"], rows3), ""]
    return out


# --- headline, cmpad, CasADi --------------------------------------------------------------------
def headline_rows(results, bres):
    """Per problem: jittape's best replay ÷ hand Numba and ÷ the fastest of JAX jit, CasADi
    (SX or C) and PyTorch."""
    rows = []
    for r in results + ([bres] if bres else []):
        rep, which = best_replay(r)
        hand = med(r, "hand-numba")
        if rep is None or hand is None:
            continue
        peers = [(med(r, p), p) for p in HEADLINE_PEERS if med(r, p) is not None]
        fastest = min(peers) if peers else None
        rows.append([_pname(r), fmt_int(r["n"]), f"{fmt_time(rep)} ({_which(which)})",
                     fmt_ratio(rep / hand),
                     f"{LABEL[fastest[1]]} {fmt_time(fastest[0])}" if fastest
                     else _no_peer(r),
                     fmt_ratio(rep / fastest[0]) if fastest else "—"])
    return rows


def _no_peer(r):
    cells = {status_cell(r["tools"].get(p, {})) for p in HEADLINE_PEERS}
    return "not installed" if cells == {"not installed"} else "—"


def headline_section(results, bres):
    return ["## Headline", "",
            "For README's Performance section. jittape's best replay (the faster of "
            "`tape.gradient` interpreted and after `tape.compile()`, the tape recorded once) "
            "divided by the hand-written Numba gradient, and by the fastest of JAX "
            "(`jit(grad)`), CasADi (SX virtual machine or generated C) and PyTorch eager "
            "measured in the same rounds. Below 1: jittape is faster.", "",
            table(["problem", "n", "jittape best replay", "÷ hand Numba",
                   "fastest of JAX jit, CasADi, PyTorch", "÷ fastest peer"],
                  headline_rows(results, bres)), ""]


def _rate(t):
    return "—" if t is None else f"{1.0 / t:.2g}"


CMPAD_TOOLS = ("hand-numba", "jittape-eager", "jittape-replay", "jittape-compiled", "jax-jit",
               "torch", "autograd", "casadi-sx", "casadi-c")


def cmpad_section(results):
    """cmpad's problems in its own unit, gradients per second, beside CppAD's published rates."""
    from .problems.cmpad import PUBLISHED
    rows = []
    for r in results:
        pub = PUBLISHED.get(r["key"])
        if pub is None:
            continue
        rep, _ = best_replay(r)
        row = [_pname(r), _rate(r["objective"]["median"])]
        row += [_rate(med(r, t)) if med(r, t) is not None
                else status_cell(r["tools"].get(t, {})) for t in CMPAD_TOOLS]
        row += [f"{pub['cppad']:.2g} ({pub['cppad_csv']:.2g})",
                fmt_ratio(pub["cppad"] * rep) if rep else "—", f"{pub['jittape_issue']:.2g}"]
        rows.append(row)
    if not rows:
        return []
    header = (["problem", "NumPy f(x)"] + [LABEL[t] for t in CMPAD_TOOLS]
              + ["CppAD published", "CppAD ÷ jittape best", "jittape in issue 12"])
    return ["## cmpad: gradients per second", "",
            "cmpad's unit (https://github.com/bradbell/cmpad): gradients per second with the "
            "AD function set up once (cmpad's `time_setup=false`; jittape: `record` once, "
            "then `tape.gradient`), one thread, measured here side by side; `NumPy f(x)`: "
            "objective evaluations per second. CppAD published: the rate quoted in issue 12 "
            "(in brackets cmpad's own `xam_main.csv` of 2024-09-14, `package=cppad`, "
            "`time_setup=false`, another machine, C++). `CppAD ÷ jittape best`: how many times "
            "faster CppAD's published rate is than jittape's best replay here. The ODE's "
            "gradient is identically zero at cmpad's size (see the notes): CppAD and CasADi "
            "fold it away while taping, the others compute on zeros.", "",
            table(header, rows), ""]


def casadi_section(results):
    rows = []
    for r in results:
        sx = r["tools"].get("casadi-sx", {})
        cc = r["tools"].get("casadi-c", {})
        info = cc.get("casadi") or sx.get("casadi")
        if not info:
            continue
        cinfo = cc.get("casadi") or {}
        hand = med(r, "hand-numba")
        ratio = lambda t: fmt_ratio(med(r, t) / hand) if med(r, t) and hand else "—"  # noqa
        rows.append([_pname(r), fmt_int(info["instructions"]), fmt_time(info["symbolic"]),
                     fmt_time(cinfo.get("codegen")), fmt_time(cinfo.get("gcc")),
                     fmt_int(cinfo.get("c_bytes")),
                     fmt_time(med(r, "casadi-sx")), ratio("casadi-sx"),
                     fmt_time(med(r, "casadi-c")) if med(r, "casadi-c") else
                     status_cell(cc), ratio("casadi-c")])
    if not rows:
        return []
    from .tools import CASADI_CFLAGS
    return ["## CasADi: graph size and build times", "",
            "Symbolic: `SX.sym`, the problem's Python code run on the symbols, `casadi.gradient` "
            "and `casadi.Function`. Code generation: `CodeGenerator` writing the C source; gcc: "
            f"`gcc {CASADI_CFLAGS}` building the shared library that `casadi.external` loads "
            "(the C column's first call includes both). Instructions: the SX gradient "
            "function's `n_instructions()`. Both are called through `Function.buffer()` (arrays "
            "bound once; about 0.5 µs per call), not `Function.__call__` (NumPy to `DM` and "
            "back: about 20 µs per call here, which would swamp the small problems).", "",
            table(["problem", "SX instructions", "symbolic build", "code generation", "gcc",
                   "C source bytes", "SX VM gradient", "÷ hand Numba", "C gradient",
                   "÷ hand Numba"], rows), ""]


# --- tables ------------------------------------------------------------------------------------
def summary_matrix(results, bres):
    tools = [k for k, _, _ in TOOLS]
    header = ["problem", "n", "NumPy f(x)"] + [LABEL[t] for t in tools]
    rows = []
    for r in results + ([bres] if bres else []):
        hand = med(r, "hand-numba")
        row = [_pname(r), fmt_int(r["n"]),
               fmt_ratio(r["objective"]["median"] / hand) if "objective" in r and hand
               else "—"]
        for t in tools:
            v = r["tools"].get(t)
            m = med(r, t)
            if t == "hand-numba" and m is not None:
                row.append(f"**{fmt_time(m)}**")
            elif m is not None and hand:
                row.append(fmt_ratio(m / hand))
            elif v is None:
                row.append("")
            else:
                row.append(status_cell(v))
        rows.append(row)
    return table(header, rows)


def results_table(results):
    header = ["problem", "tool", "first call", "median", "IQR", "samples", "÷ f(x)",
              "÷ hand Numba", "rel. error", "note"]
    rows = []
    for r in results:
        hand = med(r, "hand-numba")
        f = r["objective"]["median"]
        name = _pname(r) + f" (n={r['n']:,})"
        o = r["objective"]
        rows.append([name, "NumPy objective f(x)", fmt_time(r["objective_first"]),
                     fmt_time(f), f"{fmt_time(o['q1'])} – {fmt_time(o['q3'])}", o["n"],
                     "1.00", fmt_ratio(f / hand) if hand else "—", "—", ""])
        for t, _, _ in TOOLS:
            v = r["tools"].get(t)
            if v is None:
                continue
            s = v.get("stats")
            m = med(r, t)
            rows.append(["", LABEL[t], fmt_time(v.get("first")),
                         fmt_time(m) if m is not None else v["status"],
                         f"{fmt_time(s['q1'])} – {fmt_time(s['q3'])}" if s and s["n"] > 1
                         else "—", s["n"] if s else "—",
                         fmt_ratio(m / f) if m is not None else "—",
                         fmt_ratio(m / hand) if m is not None and hand else "—",
                         f"{v['err']:.1e}" if v.get("err") is not None else "—",
                         v.get("note", "")])
    return table(header, rows, ["---", "---"] + ["---:"] * 7 + ["---"])


def bfgs_table(bres):
    header = ["tool", "first call", "median total time", "IQR", "samples", "÷ hand Numba",
              "nit", "nfev", "final f", "‖x − 1‖", "note"]
    rows = []
    hand = med(bres, "hand-numba")
    for t, _, _ in TOOLS:
        v = bres["tools"].get(t)
        if v is None:
            continue
        s, m, res = v.get("stats"), med(bres, t), v.get("result", {})
        rows.append([LABEL[t] + (" (`jittape.minimize`)" if t == "jittape-replay" else ""),
                     fmt_time(v.get("first")),
                     fmt_time(m) if m is not None else v["status"],
                     f"{fmt_time(s['q1'])} – {fmt_time(s['q3'])}" if s and s["n"] > 1
                     else "—", s["n"] if s else "—",
                     fmt_ratio(m / hand) if m is not None and hand else "—",
                     res.get("nit", "—"), res.get("nfev", "—"),
                     f"{res['fun']:.2e}" if res else "—",
                     f"{res['dist']:.1e}" if res else "—", v.get("note", "")])
    return table(header, rows, ["---"] + ["---:"] * 9 + ["---"])


def tape_table(results, ctimes, quick_keys):
    header = ["problem", "records", "tape bytes", "value elements", "pool entries",
              "kernel statements", "kernel buffer elements", "loops in its forward part",
              "compiled in this process (first call)",
              "cold `compile()`", "warm `compile()`", "first gradient after compile "
              "(cold / warm)"]
    rows = []
    for r in results:
        p = r.get("jittape")
        if not p:
            continue
        comp = r["tools"].get("jittape-compiled", {})
        c = ctimes.get(r["key"])
        if comp.get("status") != "ok":
            stmts = "refused: " + comp.get("note", "—").split(": ", 1)[-1]
            cold = warm = first = "—"
            kbuf = loops = "—"
        else:
            stmts = fmt_int(p.get("statements"))
            kbuf, loops = fmt_int(p.get("kernel_elements")), fmt_int(p.get("loops"))
            if c is None:
                cold = warm = first = "(full mode)" if r["key"] not in quick_keys else "—"
            elif "error" in c:
                cold = warm = first = f"error: {c['error']}"
            else:
                cold, warm = fmt_time(c["cold"]["compile"]), fmt_time(c["warm"]["compile"])
                first = (f"{fmt_time(c['cold']['first_gradient'])} / "
                         f"{fmt_time(c['warm']['first_gradient'])}")
        rows.append([_pname(r), fmt_int(p["records"]), fmt_int(p["nbytes"]),
                     fmt_int(p["elements"]), fmt_int(p["pool"]), stmts, kbuf, loops,
                     fmt_time(comp.get("first")) if comp.get("status") == "ok" else "—",
                     cold, warm, first])
    return table(header, rows)


def profile_table(results):
    header = ["problem", "records by elements (top 4: opcode ×count = elements)",
              "eager = record + reverse", "interpreted = forward + reverse",
              "compiled: value only / value + gradient", "hand Numba"]
    rows = []
    for r in results:
        p = r.get("jittape")
        if not p:
            continue
        tm = p["times"]
        total = sum(e for _, (_, e) in p["ops"])
        top = ", ".join(f"`{name}` ×{c} = {e / total:.0%}" for name, (c, e) in p["ops"][:4])
        eager = med(r, "jittape-eager")
        rows.append([
            _pname(r), top,
            f"{fmt_time(eager)} = {fmt_time(tm['record'])} + ~{fmt_time(tm['reverse'])}"
            if eager else "—",
            f"{fmt_time(tm['replay'])} ≈ {fmt_time(tm['forward'])} + {fmt_time(tm['reverse'])}",
            f"{fmt_time(tm['compiled_value'])} / {fmt_time(tm['compiled'])}"
            if "compiled" in tm else "—",
            fmt_time(med(r, "hand-numba"))])
    return table(header, rows, ["---", "---", "---:", "---:", "---:", "---:"])


def notes_section(results, bres, env, settings, checks, plot_note):
    lines = ["## Notes", ""]
    lines += [f"- Reference values: {c}" for c in checks]
    for r in results:
        for n in r.get("notes", []):
            lines.append(f"- {_pname(r)}: {n}")
    lines.append(f"- Gradient checks: relative error `max|g − ref| / max|ref|` against the hand "
                 f"Numba gradient at x0 and at a second point, below {REL_TOL:g} (SciPy FD: "
                 f"below {FD_TOL:g}; forward differences with SciPy's default step cannot do "
                 f"better). The column `rel. error` is the worse of the two points.")
    lines.append("- First call: building the tool's gradient function plus its first call at "
                 "x0 in this process: JAX tracing and XLA compilation, jittape recording (and "
                 "`compile()`), Numba loading the hand gradient from its cache (compiling it "
                 "if the cache is empty). jittape's interpreter sweeps were loaded earlier in "
                 "the process; compiled kernels come from the default caches "
                 "(`~/.cache/jittape`, Numba's `__pycache__`), warm if the suite ran before: "
                 "the cold and warm columns of the tape table are the controlled figures.")
    lines.append(f"- Tools slower than {settings.slow:g} s per call are sampled "
                 f"{settings.slow_samples} times; a second call above {settings.too_slow:g} s "
                 f"is reported as a single sample.")
    lines.append("- Allocation: every jittape replay allocates a value buffer (the tape's "
                 "constants included) and an adjoint buffer of the tape's size, per call "
                 "(`value elements` / `kernel buffer elements` in the tape table). Whether "
                 "those page-fault on every call depends on glibc's malloc state (its dynamic "
                 "mmap and trim thresholds, raised by earlier large frees): this long-running "
                 "process measures them mostly warm, and a short-lived process calling the "
                 "same tape can be several times slower per call on the large tapes. NumPy-"
                 "based tools (hand NumPy, autograd, jittape eager) are exposed the same way; "
                 "PyTorch and XLA keep caching allocators.")
    for k, v in env.missing.items():
        lines.append(f"- {v}: its columns say `skip`.")
    if plot_note:
        lines.append(f"- Plot: {plot_note}")
    return lines


def markdown(results, bres, ctimes, checks, info, settings, plot_note, env, quick_keys):
    out = ["# jittape benchmark suite", "", *info, "",
           "All candidates of a problem are timed side by side in one run, round-robin "
           "(interleaved rounds), on one thread each: medians of the samples, IQR = "
           "interquartile range. The machine is shared and noisy: compare the ratios "
           "(`÷ hand Numba`, `÷ f(x)`), not the absolute times. `python -m benchmarks "
           "--help` and the docstrings of `benchmarks/run.py` and `benchmarks/problems/*.py` "
           "define every figure.", ""]
    out += headline_section(results, bres)
    out += bars_section(results, bres)
    out += ["## Summary: gradient time ÷ hand Numba gradient time", "",
            "Hand Numba's own median in bold; `skip`: the tool does not run there (reason in "
            "the full table).", "", summary_matrix(results, bres), ""]
    out += cmpad_section(results)
    out += casadi_section(results)
    out += ["## All results", "", results_table(results), ""]
    if bres:
        out += ["## BFGS on Rosenbrock n = 100: total time to converge", "",
                "`scipy.optimize.minimize(method='BFGS')` from (-1.2, 1, -1.2, ...), value "
                "and gradient from each tool (`jac=True`); SciPy FD: no `jac` (2-point "
                "differences). First call: building the function plus the first whole "
                "minimization (jit compile, recording, `compile()`).", "",
                bfgs_table(bres), ""]
    out += ["## jittape tapes and compile times", "", tape_table(results, ctimes, quick_keys),
            "",
            "Cold: a fresh interpreter with empty `NUMBA_CACHE_DIR` and `JITTAPE_CACHE_DIR` "
            "(the kernel source generated and written, the kernel and the rules it calls "
            "compiled by Numba); warm: a second fresh interpreter on the directories the cold "
            "one filled (source found, machine code loaded). Only `tape.compile()` is timed, "
            "after an untimed `jittape.record`. Kernel buffer elements: the compiled "
            "kernel's compact value buffer (copied from the tape's constants and zeroed for "
            "the adjoints on every call, like the interpreter's `value elements`); loops: the "
            "`for` loops of its forward part (fused elementwise groups and gathers). "
            + ("Quick mode measures one tape; the full mode all of them (median of 3)."
               if settings.quick else "Medians of 3 trials, each with new directories."), ""]
    out += ["## Profile: where jittape's time goes", "", profile_table(results), "",
            "Records by elements: the share of the tape's value elements each opcode holds "
            "(memory traffic of the interpreter, roughly its time; `const` elements are not "
            "computed but are copied into the value buffer of every replay). Eager = `jittape.record` "
            "(Python: NumPy primal and one record per operation) + the reverse sweep; "
            "interpreted replay = the Numba forward sweep + the reverse sweep (each timed "
            "alone, so the parts need not add up); compiled: `tape.value` (forward only) and "
            "`tape.gradient`. Timed side by side in a short extra pass.", ""]
    out += notes_section(results, bres, env, settings, checks, plot_note)
    out += ["", "![ratios to hand Numba and first-call times](latest.png)" if not plot_note
            else ""]
    return "\n".join(out) + "\n"


# --- plot --------------------------------------------------------------------------------------
def plot(results, bres, path):
    """Write the figure; return None, or a note saying why there is none."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "not drawn: matplotlib is not installed (`pip install matplotlib`)"
    allres = results + ([bres] if bres else [])
    names = [f"{r['family']}\n{r['label'].split(' (')[0]}".replace("Logistic regression",
                                                                   "Logistic\nregression")
             for r in allres]
    tools = [k for k, _, _ in TOOLS]
    markers = dict(zip(tools, "sDo^v*PXhp<>d"))
    colors = dict(zip(tools, plt.get_cmap("tab20").colors[::2] + plt.get_cmap("tab20").colors[1::2]))
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(max(12, 1.1 * len(allres)), 10),
                                   sharex=True)
    xs = np.arange(len(allres))
    off = np.linspace(-0.3, 0.3, len(tools))
    for j, t in enumerate(tools):
        r1x, r1y, r2x, r2y = [], [], [], []
        for i, r in enumerate(allres):
            hand, m = med(r, "hand-numba"), med(r, t)
            if m is not None and hand:
                r1x.append(xs[i] + off[j])
                r1y.append(m / hand)
            v = r["tools"].get(t, {})
            if v.get("first") is not None and v.get("status") == "ok":
                r2x.append(xs[i] + off[j])
                r2y.append(v["first"])
        kw = dict(marker=markers[t], color=colors[t], linestyle="none", markersize=7,
                  label=LABEL[t])
        ax1.plot(r1x, r1y, **kw)
        ax2.plot(r2x, r2y, **kw)
    ax1.axhline(1.0, color="k", lw=0.8)
    ax1.axhline(3.0, color="gray", lw=0.8, ls="--")
    ax1.set_yscale("log")
    ax1.set_ylabel("steady gradient time ÷ hand Numba\n(median; dashed: 3x)")
    ax1.legend(ncol=12, fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0),
               frameon=False)
    ax1.grid(True, which="major", axis="y", alpha=0.3)
    ax2.set_yscale("log")
    ax2.set_ylabel("first call (s)\n(build + first gradient; BFGS: whole run)")
    ax2.grid(True, which="major", axis="y", alpha=0.3)
    ax2.set_xticks(xs)
    ax2.set_xticklabels(names, fontsize=7, rotation=0)
    for ax in (ax1, ax2):
        for i in range(len(allres) - 1):
            ax.axvline(i + 0.5, color="k", lw=0.3, alpha=0.3)
    fig.suptitle("jittape benchmark suite (one thread per tool; ratios measured side by side)",
                 y=0.995)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None

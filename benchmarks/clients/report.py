"""The clients suite's report: ``clients.md`` (tables) and ``clients.json`` (every row)."""

import statistics
from collections import Counter, defaultdict

from benchmarks.common import fmt_ratio, fmt_time, table

ORDER = ("stats", "statsmodels", "sklearn", "lmfit")
SYMBOL = dict(**{"pass": "✓", "error": "E", "wrong": "**W**", "unreliable": "?",
                 "setup": "S", "timeout": "T", "crash": "C"})
JUDGED = ("pass", "error", "wrong", "timeout", "crash")   # the pass rate's denominator


def summary(rows):
    """Counts by status and the pass rate (pass over judged: reference-unreliable and
    library-setup rows are not jittape's and are left out)."""
    c = Counter(r["status"] for r in rows)
    judged = sum(c[s] for s in JUDGED)
    replays = [r["replay"] for r in rows if r.get("replay")]
    rc = Counter(r["status"] for r in replays)
    warned = sum(1 for r in rows if r["status"] == "wrong" and r.get("warned"))
    return dict(rows=len(rows), judged=judged, **{s: c[s] for s in SYMBOL},
                silent=c["wrong"] - warned, warned=warned,
                pass_rate=c["pass"] / judged if judged else None,
                replay_pass=rc["pass"], replay_judged=sum(rc[s] for s in ("pass", "error",
                                                                          "wrong")),
                replay_error=rc["error"], replay_wrong=rc["wrong"])


def _pct(s):
    return "—" if s["pass_rate"] is None else f"{100 * s['pass_rate']:.1f} %"


def causes(rows, replay=False):
    """Failure causes: ``(type, normalised message)`` with counts per library, the library
    frames and jittape frames they were raised through, and example cases."""
    groups = defaultdict(list)
    for r in rows:
        src = r.get("replay") if replay else r
        if src and src.get("status") == "error" and src.get("cause"):
            c = src["cause"]
            groups[(c["type"], c["message"])].append((r, c))
    out = []
    for (typ, msg), items in groups.items():
        libs = Counter(r["library"] for r, _ in items)
        frames = Counter(c.get("library_frame") or "—" for _, c in items)
        jt = Counter(c.get("jittape_frame") or "—" for _, c in items)
        out.append(dict(count=len(items), type=typ, message=msg, libraries=dict(libs),
                        library_frames=dict(frames.most_common()),
                        jittape_frames=dict(jt.most_common()),
                        examples=[r["name"] for r, _ in items[:5]]))
    return sorted(out, key=lambda d: (-d["count"], d["type"], d["message"]))


def silent_wrong(rows):
    out = []
    for r in rows:
        for where, src in (("eager", r), ("replay", r.get("replay"))):
            if src and src.get("status") == "wrong":
                out.append(dict(name=r["name"], where=where, kind=src.get("wrong"),
                                warned=src.get("warned", ""),
                                reference=src.get("reference", ""), err=src.get("err"),
                                value=src.get("value"), library_value=src.get("library_value"),
                                note=r.get("note", "") if where == "eager" else ""))
    return out


def _ratio(t, a, b):
    return t[a] / t[b] if t and a in t and b in t and t[b] > 0 else None


def _median(xs):
    xs = [x for x in xs if x is not None]
    return (statistics.median(xs), len(xs)) if xs else (None, 0)


def _frames(d, k=2):
    items = list(d.items())
    s = "; ".join(f"`{f}` ({n})" if len(items) > 1 else f"`{f}`" for f, n in items[:k])
    return s + (f"; {len(items) - k} more" if len(items) > k else "")


def markdown(result):
    meta, libs, rows = result["meta"], result["libraries"], result["rows"]
    out = ["# Clients suite: libraries' own code differentiated by jittape", ""]
    out += [f"- {k}: {v}" for k, v in meta.items()] + [""]
    out += ["Each case is one derivative of a library's public function, differentiated "
            "unchanged (`python -m benchmarks.clients`; `benchmarks/clients/` defines every "
            "case). Reference: the library's analytic derivative, or central differences of "
            "the library's own function at two step sizes (a case whose two disagree is "
            "*reference unreliable* and is left out of the rates, as are cases where the "
            "library itself fails, *setup*). Pass rate = pass / (pass + error + wrong "
            "+ timeout + crash). *Wrong, warned*: a wrong derivative for which jittape issued "
            "a `TieWarning` (an exact tie in an equality comparison: a branch defined at one "
            "point); *silent wrong*: every other wrong one.", ""]
    out += ["## Pass rates", ""]
    head = ["library", "cases", "pass", "error", "silent wrong", "wrong, warned", "timeout/crash",
            "ref. unreliable", "setup", "pass rate", "dev half", "held-out half",
            "replay pass"]
    body, everything = [], []
    for lib in ORDER:
        if lib not in libs:
            continue
        info = libs[lib]
        if info.get("skipped"):
            body.append([lib] + ["—"] * 8 + [f"skipped: {info['skipped']}"] + ["—"] * 3)
            continue
        lr = [r for r in rows if r["library"] == lib]
        everything += lr
        s = summary(lr)
        dev = summary([r for r in lr if r["split"] == "dev"])
        held = summary([r for r in lr if r["split"] == "held-out"])
        body.append([lib, s["rows"], s["pass"], s["error"], s["silent"], s["warned"],
                     s["timeout"] + s["crash"], s["unreliable"], s["setup"], _pct(s),
                     _pct(dev), _pct(held), f"{s['replay_pass']}/{s['replay_judged']}"])
    if len(body) > 1:
        s = summary(everything)
        dev = summary([r for r in everything if r["split"] == "dev"])
        held = summary([r for r in everything if r["split"] == "held-out"])
        body.append(["**total**", s["rows"], s["pass"], s["error"], s["silent"], s["warned"],
                     s["timeout"] + s["crash"], s["unreliable"], s["setup"], _pct(s),
                     _pct(dev), _pct(held), f"{s['replay_pass']}/{s['replay_judged']}"])
    out += [table(head, body), ""]
    out += ["Replay: `jittape.record(f, x)` then `tape.gradient(x2)` (`tape.hessian` for "
            "Hessian cases) at a second point, against the reference there; judged = "
            "replays of cases that recorded, with a reliable reference at x2.", ""]

    sw = silent_wrong(rows)
    out += ["## Wrong results", "",
            "A finite value or derivative that disagrees with the reference, or nan/inf where "
            "the reference is finite. `err` is the largest |jittape - reference| / tolerance "
            "(above 1 fails); `warned` names the warning jittape issued (none: silent).", ""]
    out += [table(["case", "where", "kind", "warned", "reference", "err", "note"],
                  [[f"`{w['name']}`", w["where"], w["kind"], w["warned"] or "— (silent)",
                    w["reference"],
                    "inf" if w["err"] in (None, float("inf")) else f"{w['err']:.3g}",
                    (w["note"] or "")[:120]] for w in sw], ["---"] * 7)
            if sw else "None.", ""]

    cs = result["causes"]
    out += [f"## Failure causes ({sum(c['count'] for c in cs)} errors, {len(cs)} causes)", "",
            "Exception type and the first line of its message with numbers replaced by N; "
            "the library frame is the innermost traceback frame in the library's package "
            "(through chained exceptions), with how many cases came through it.", ""]
    out += [table(["#", "cases", "exception", "message", "libraries", "library frame",
                   "jittape frame"],
                  [[i + 1, c["count"], c["type"], c["message"][:160].replace("|", "\\|"),
                    ", ".join(f"{k} {v}" for k, v in c["libraries"].items()),
                    _frames(c["library_frames"]), _frames(c["jittape_frames"], 1)]
                   for i, c in enumerate(cs[:30])], ["---:", "---:"] + ["---"] * 5), ""]
    if len(cs) > 30:
        out += [f"{len(cs) - 30} rarer causes are in the JSON.", ""]
    rcs = result["replay_causes"]
    if rcs:
        out += ["### Replay failures (the eager derivative of these cases may pass)", ""]
        out += [table(["cases", "exception", "message", "libraries"],
                      [[c["count"], c["type"], c["message"][:160].replace("|", "\\|"),
                        ", ".join(f"{k} {v}" for k, v in c["libraries"].items())]
                       for c in rcs], ["---:", "---", "---", "---"]), ""]
    slow = [r for r in rows if r["status"] in ("timeout", "crash")]
    if slow:
        out += ["### Timeouts and crashes", ""]
        out += [f"- `{r['name']}`: {r['status']} ({r.get('note', '')[:200]})" for r in slow]
        out += [""]

    out += _timing_section(rows) + _extras_section(rows) + _matrices(rows)
    return "\n".join(out) + "\n"


def _timing_section(rows):
    out = ["## Timings", "",
           "Seconds per call measured side by side in one process (round-robin samples, "
           "medians): the library's function, jittape's eager derivative (`jittape.grad(f)"
           "(x)`: records and sweeps every call), the replay (`tape.gradient(x2)` of "
           "`jittape.record(f, x)`, after warm-up and `jittape.wait_compiled()`) and the "
           "library's analytic derivative. Cases that pass only.", ""]
    body = []
    for lib in ORDER:
        t = [r["times"] for r in rows if r["library"] == lib and r.get("times")]
        if not t:
            continue
        cells = [lib, len(t)]
        for a, b in (("eager", "function"), ("replay", "function"), ("eager", "analytic"),
                     ("replay", "analytic")):
            m, n = _median([_ratio(x, a, b) for x in t])
            cells.append("—" if m is None else f"{fmt_ratio(m)} ({n})")
        body.append(cells)
    out += [table(["library", "timed", "eager / function", "replay / function",
                   "eager / analytic", "replay / analytic"], body), "",
            "(Medians over cases, with how many cases had the figure.)", ""]
    body = [[f"`{r['name']}`", r.get("n", ""), (r.get("replay") or {}).get("records", "—"),
             fmt_time(r["times"].get("function")), fmt_time(r["times"].get("analytic")),
             fmt_time(r["times"].get("eager")), fmt_time(r["times"].get("replay")),
             fmt_ratio(_ratio(r["times"], "eager", "analytic")),
             fmt_ratio(_ratio(r["times"], "replay", "analytic"))]
            for r in rows if r.get("times") and "analytic" in r["times"]]
    if body:
        out += ["### Cases with an analytic derivative", ""]
        out += [table(["case", "n", "records", "function", "analytic", "eager", "replay",
                       "eager / analytic", "replay / analytic"], body), ""]
    return out


def _extras_section(rows):
    out = []
    logit = next((r for r in rows if r["name"] == "statsmodels/Logit/score"), None)
    if logit and isinstance(logit.get("extra"), dict) and "records" in logit["extra"]:
        e = logit["extra"]
        out += ["## statsmodels Logit, n = 400", "",
                f"- tape records (`jittape.record(model.loglike, params).n_records`): "
                f"{e['records']:,}",
                f"- `model.score`: {fmt_time(e['score_s'])}; eager `jittape.grad`: "
                f"{fmt_time(e['eager_s'])} (**{fmt_ratio(e['eager_over_score'])}x** score); "
                f"replay `tape.gradient`: {fmt_time(e['replay_s'])} "
                f"(**{fmt_ratio(e['replay_over_score'])}x** score)", ""]
    relu = next((r for r in rows if r["name"] == "sklearn/taped-relu-mlp"), None)
    if relu:
        e = relu.get("extra") or {}
        out += ["## scikit-learn ReLU MLP under `jittape.taped`", ""]
        if "recordings" in e:
            out += [f"- `jittape.taped(loss).grad` at {e['points']} new points: "
                    f"`stats.recordings` = **{e['recordings']}** (target "
                    f"{e['target_recordings']}), replays {e['replays']}, guard failures "
                    f"{e['guard_failures']}; gradients wrong at points {e['wrong_points']}", ""]
        else:
            out += [f"- {relu['status']}: {(relu.get('cause') or {}).get('message', '')}", ""]
    imp = [r for r in rows if r["name"].startswith("stats/import/")]
    if imp:
        out += ["## scipy.stats import styles (new interpreters)", ""]
        usual = {r["name"]: r["status"] for r in rows}
        out += ["The same logpdf check (theta = shapes, loc, scale) with the methods bound "
                "before `import jittape` (`logpdf = st.norm.logpdf`), and with jittape "
                "imported before SciPy; the last column is the suite's usual order (SciPy, "
                "then jittape, methods looked up at the call), at SciPy's example shapes.", ""]
        out += [table(["case", "status", "usual import", "cause"],
                      [[f"`{r['name']}`", r["status"],
                        usual.get(f"stats/{r['name'].rsplit('/', 1)[1]}/logpdf", "—"),
                        (r.get("cause") or {}).get("message", r.get("note", ""))[:140]]
                       for r in imp], ["---"] * 4), ""]
    return out


def _matrices(rows):
    out = ["## Every case", "",
           "✓ pass, E error, **W** silent wrong, ? reference unreliable, S setup (the "
           "library fails), T timeout, C crash; after the slash, the replay's.", ""]
    stats = [r for r in rows if r["library"] == "stats" and r["group"] != "import-style"]
    for title, part in (("scipy.stats, continuous distributions",
                         [r for r in stats if r["check"] != "logpmf"]),
                        ("scipy.stats, discrete distributions (logpmf)",
                         [r for r in stats if r["check"] == "logpmf"])):
        if not part:
            continue
        checks = list(dict.fromkeys(r["check"] for r in part))
        grid = defaultdict(dict)
        for r in part:
            rp = (r.get("replay") or {}).get("status")
            grid[r["group"]][r["check"]] = SYMBOL[r["status"]] + (
                "/" + SYMBOL[rp] if rp and rp != r["status"] else "")
        out += [f"### {title}", ""]
        if len(checks) > 1:
            out += [table(["distribution"] + checks,
                          [[g] + [grid[g].get(c, "") for c in checks] for g in grid],
                          ["---"] + [":---:"] * len(checks)), ""]
        else:
            out += [", ".join(f"{g} {grid[g][checks[0]]}" for g in grid), ""]
    for lib in ORDER[1:]:
        lr = [r for r in rows if r["library"] == lib]
        if not lr:
            continue
        out += [f"### {lib}", ""]
        body = []
        for r in lr:
            rp = r.get("replay") or {}
            why = (r.get("cause") or {}).get("message") or r.get("note") or ""
            if rp.get("status") == "error" and r["status"] == "pass":
                why = "replay: " + rp["cause"]["message"]
            body.append([f"`{r['name']}`", SYMBOL[r["status"]],
                         SYMBOL.get(rp.get("status"), "—"), why[:110].replace("|", "\\|")])
        out += [table(["case", "eager", "replay", "cause / note"], body, ["---"] * 4), ""]
    return out

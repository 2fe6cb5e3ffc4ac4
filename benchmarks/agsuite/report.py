"""The markdown (and JSON) results of an autograd-suite run: counts, wrong results first."""

from collections import Counter, defaultdict

from .classify import (AUTOGRAD_ONLY, CATEGORIES, COMPLEX, FEATURES, INVALID, ORDER2, PASS,
                       WRONG_GRADIENT, WRONG_VALUE, classify, feature)


def _cell(text, limit=220):
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def classified(rows):
    """Each row with its ``in_scope``, ``category``, ``detail`` and (failing) ``feature``."""
    out = []
    for row in rows:
        in_scope, category, detail = classify(row)
        row = dict(row, in_scope=in_scope, category=category, detail=detail)
        if in_scope and category != PASS:
            row["feature"] = feature(row)
        out.append(row)
    return out


def summary(rows):
    """Counts of the run: in scope, pass, each failure category, out of scope by group."""
    ins = [r for r in rows if r["in_scope"]]
    passes = [r for r in ins if r["category"] == PASS]
    return {
        "collected": len(rows), "in_scope": len(ins), "pass": len(passes),
        "pass_order1_only": sum(1 for r in passes if r["state"]["order2"]),
        "pass_order2": sum(1 for r in passes if r["state"].get("order2_checked")),
        "pass_complex_skipped": sum(1 for r in passes if r["state"]["complex_skipped"]
                                    or "complex" in r["detail"]),
        "pass_structured": sum(1 for r in passes if r["state"]["structured"]),
        "pass_no_differentiation": sum(1 for r in passes if "no differentiation" in r["detail"]),
        "fail": {c: sum(1 for r in ins if r["category"] == c) for c in CATEGORIES},
        "out_of_scope": dict(Counter(r["category"] for r in rows if not r["in_scope"])),
    }


def _summary_lines(s):
    pct = 100.0 * s["pass"] / s["in_scope"] if s["in_scope"] else 0.0
    lines = ["| | tests |", "|---|---:|",
             f"| collected | {s['collected']} |",
             f"| out of scope | {s['collected'] - s['in_scope']} |",
             f"| **in scope** | **{s['in_scope']}** |",
             f"| **pass** | **{s['pass']}** ({pct:.1f} %) |",
             f"| ... of which pass order-2 checks (derivatives of derivatives) | "
             f"{s.get('pass_order2', 0)} |",
             f"| ... of which pass at order 1, order 2 requested but not checked | "
             f"{s['pass_order1_only']} |",
             f"| ... of which had complex checks not run | {s['pass_complex_skipped']} |",
             f"| ... of which had tuple/list outputs (checked concatenated) | "
             f"{s['pass_structured']} |",
             f"| ... of which differentiate nothing | {s['pass_no_differentiation']} |"]
    for c in CATEGORIES:
        bold = "**" if c in (WRONG_VALUE, WRONG_GRADIENT) else ""
        lines.append(f"| fail: {bold}{c}{bold} | {bold}{s['fail'][c]}{bold} |")
    for group in (ORDER2, COMPLEX, AUTOGRAD_ONLY, INVALID):
        lines.append(f"| out of scope: {group} | {s['out_of_scope'].get(group, 0)} |")
    return lines


def _file_lines(rows):
    files = sorted({r["nodeid"].split("::")[0] for r in rows})
    lines = ["| file | collected | in scope | pass | fail | out of scope |",
             "|---|---:|---:|---:|---:|---:|"]
    for f in files:
        mine = [r for r in rows if r["nodeid"].startswith(f + "::")]
        ins = [r for r in mine if r["in_scope"]]
        ok = sum(1 for r in ins if r["category"] == PASS)
        lines.append(f"| {f} | {len(mine)} | {len(ins)} | {ok} | {len(ins) - ok} | "
                     f"{len(mine) - len(ins)} |")
    return lines + [""]


def _wrong_lines(rows):
    wrong = [r for r in rows if r["in_scope"] and r["category"] in (WRONG_VALUE, WRONG_GRADIENT)]
    lines = ["## WRONG VALUES AND WRONG GRADIENTS (the worst defects)", ""]
    if not wrong:
        return lines + ["None: no in-scope test got a wrong value or a wrong derivative.", ""]
    lines += [f"{len(wrong)} test(s). A wrong result is worse than any error: fix these first.",
              "", "| test | category | what differs | failing check |", "|---|---|---|---|"]
    for r in wrong:
        lines.append(f"| `{r['nodeid']}` | **{r['category']}** | {_cell(r['detail'], 400)} | "
                     f"{_cell(r['state']['last_check'])} |")
    return lines + [""]


def _feature_lines(rows):
    groups = defaultdict(list)
    for r in rows:
        if r["in_scope"] and r["category"] != PASS:
            groups[(r["feature"], r["category"])].append(r["nodeid"].split("::")[-1])
    lines = ["## Failures by missing feature", "",
             "| feature | category | tests | which |", "|---|---|---:|---|"]
    for (feat, cat), names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        lines.append(f"| {_cell(feat, 90)} | {cat} | {len(names)} | "
                     f"{_cell(', '.join(names), 300)} |")
    return lines + [""]


def _failure_lines(rows):
    order = {c: i for i, c in enumerate(CATEGORIES)}
    failing = sorted((r for r in rows if r["in_scope"] and r["category"] != PASS),
                     key=lambda r: (order[r["category"]], r["nodeid"]))
    lines = ["## Every failing in-scope test", "",
             "| test | category | error (first line) | where | failing check |",
             "|---|---|---|---|---|"]
    for r in failing:
        where = r.get("caller") or r.get("frame", "")
        where = where.split("site-packages/")[-1]
        where = "tests/" + where.split("/tests/")[-1] if "/tests/" in where else where
        lines.append(f"| `{r['nodeid']}` | {r['category']} | {r.get('exc_type', '')}: "
                     f"{_cell(r['detail'], 160)} | {_cell(where, 80)} | "
                     f"{_cell(r['state']['last_check'], 120)} |")
    return lines + [""]


def _scope_lines(rows):
    groups = defaultdict(list)
    for r in rows:
        if not r["in_scope"]:
            groups[(r["category"], _cell(r["detail"], 200))].append(r["nodeid"].split("::")[-1])
    lines = ["## Out of scope", "", "| group | reason | tests | which |", "|---|---|---:|---|"]
    for (cat, reason), names in sorted(groups.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
        lines.append(f"| {cat} | {reason} | {len(names)} | {_cell(', '.join(names), 400)} |")
    return lines + [""]


def _adaptation_lines(rows):
    structured = [r for r in rows if r["state"]["structured"]]
    native = Counter(r["state"]["structured_native_fail"] for r in structured)
    lines = ["## What the harness adapts", "",
             "- **Order 2.** `check_grads` defaults to `order=2`, which the harness checks "
             "as autograd does: `(x, v) -> J v` (`jittape.jvp`) and `(x, w) -> J^T w` "
             "(`jittape.vjp`) are checked in turn at order 1 with respect to both arguments "
             "(nested differentiation). With `AGSUITE_MAX_ORDER=1` every check runs at order "
             "1 and the tests that asked for more are counted above.",
             "- **Complex numbers.** A check with a complex input or output is not run and is "
             "counted; a test whose checks are all complex is out of scope.",
             f"- **Tuple/list outputs** (`np.split`, `np.gradient`, `eigh`, `svd`): a jittape tape "
             f"has one output array, so {len(structured)} test(s) were checked through the "
             "concatenation of the raveled outputs. `jittape.jvp` on the tuple/list itself "
             "gives: " + "; ".join(f"`{_cell(k or 'works', 140)}` ({n})"
                                   for k, n in native.items()),
             "- **Reverse mode is checked twice**: eagerly (`jittape.value_and_grad` of "
             "`<f(x), w>`) and replayed (`jittape.record(f, x).vjp(x, w)`, which reruns the "
             "tape's forward sweep); forward mode with `jittape.jvp`. Each also checks "
             "jittape's value against NumPy's (relative 1e-7).", "",
             "### autograd's API in the shim", "", "| autograd | jittape |", "|---|---|"]
    lines += [f"| `{a}` | {b} |" for a, b in FEATURES]
    return lines + [""]


def markdown(rows, meta):
    """The whole results file."""
    s = summary(rows)
    head = ["# autograd's test suite against jittape", "",
            "HIPS autograd's own tests, unmodified, run against jittape through a shim "
            "(`benchmarks/agsuite/`): `autograd.numpy` is NumPy, `autograd.scipy` is SciPy, "
            "and autograd's gradient checks are done with jittape. See benchmarks/README.md.",
            ""] + [f"- {k}: {v}" for k, v in meta.items()] + ["", "## Summary", ""]
    body = (_summary_lines(s) + [""] + _file_lines(rows) + _wrong_lines(rows)
            + _feature_lines(rows) + _failure_lines(rows) + _scope_lines(rows)
            + _adaptation_lines(rows))
    return "\n".join(head + body)


def compact(rows, meta):
    """The JSON results: the summary and one short entry per test (for diffs between runs)."""
    tests = []
    for r in rows:
        entry = {"nodeid": r["nodeid"], "in_scope": r["in_scope"], "category": r["category"],
                 "detail": r["detail"]}
        if r["in_scope"] and r["category"] != PASS:
            entry.update(exc_type=r.get("exc_type"), feature=r.get("feature"),
                         check=r["state"]["last_check"])
        tests.append(entry)
    return {"meta": meta, "summary": summary(rows), "tests": tests}

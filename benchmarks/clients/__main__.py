"""``python -m benchmarks.clients``: run the clients suite and write its report.

    python -m benchmarks.clients                     # everything (both halves and the total)
    python -m benchmarks.clients --quick             # a small subset (under 2 minutes)
    python -m benchmarks.clients --library stats     # one library (or a comma list)
    python -m benchmarks.clients --held-out          # the held-out half alone

Writes ``benchmarks/results/clients.md`` and ``clients.json`` (``--output`` elsewhere).
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.clients import report
from benchmarks.clients.runner import LIBRARIES, ROOT, load_cases, missing, run_library, split

RESULTS = ROOT / "benchmarks" / "results"


def _versions():
    import importlib.metadata as md
    out = []
    for name in ("numpy", "scipy", "numba", "statsmodels", "scikit-learn", "lmfit"):
        try:
            out.append(f"{name} {md.version(name)}")
        except md.PackageNotFoundError:
            out.append(f"{name} not installed")
    return ", ".join(out)


def _commit():
    git = lambda *a: subprocess.run(["git", *a], cwd=ROOT, capture_output=True,  # noqa
                                    text=True).stdout.strip()
    dirty = git("status", "--porcelain", "--", "jittape")
    last = git("log", "-1", "--format=%h", "--", "jittape") or "unknown"
    return (f"{last} (the last commit changing jittape/; checkout at "
            f"{git('rev-parse', '--short', 'HEAD') or 'unknown'})"
            + (", uncommitted changes in jittape/" if dirty else ""))


def _json(result):
    """The result as JSON with one row (case) per line, for diffs between runs."""
    head = {k: v for k, v in result.items() if k != "rows"}
    text = json.dumps(head, indent=1, default=str)
    rows = ",\n".join(json.dumps(r, default=str) for r in result["rows"])
    return text[:-2] + ',\n "rows": [\n' + rows + "\n ]\n}\n"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.clients",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--library", default=",".join(LIBRARIES),
                        help="comma list of: " + ", ".join(LIBRARIES))
    parser.add_argument("--quick", action="store_true", help="the small subset")
    parser.add_argument("--held-out", action="store_true",
                        help="run and report the held-out half only")
    parser.add_argument("--output", default=str(RESULTS / "clients.md"),
                        help="markdown report; the JSON goes beside it")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds per case (default 120, quick 60)")
    parser.add_argument("--no-timing", action="store_true", help="checks only")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    args = parser.parse_args(argv)
    libraries = [s.strip() for s in args.library.split(",") if s.strip()]
    for lib in libraries:
        if lib not in LIBRARIES:
            parser.error(f"unknown library {lib!r} (choose from {', '.join(LIBRARIES)})")
    timeout = args.timeout or (60.0 if args.quick else 120.0)
    target, rounds = (0.002, 3) if args.quick else (0.004, 5)

    t0 = time.perf_counter()
    libs, rows = {}, []
    for lib in libraries:
        why = missing(lib)
        if why:
            libs[lib] = dict(skipped=why)
            log(f"{lib}: skipped ({why})")
            continue
        cases = [c for c in load_cases(lib) if (c.quick or not args.quick)
                 and (split(c.name) == "held-out" or not args.held_out)]
        if args.list:
            print("\n".join(f"{c.name}  [{split(c.name)}{', quick' if c.quick else ''}]"
                            for c in cases))
            continue
        log(f"{lib}: {len(cases)} cases")
        lib_rows, seconds = run_library(lib, cases, timeout, not args.no_timing, target,
                                        rounds, log)
        libs[lib] = dict(cases=len(cases), seconds=round(seconds, 1))
        rows += lib_rows
    if args.list:
        return 0
    for lib, info in libs.items():
        if not info.get("skipped"):
            info["summary"] = report.summary([r for r in rows if r["library"] == lib])
    elapsed = time.perf_counter() - t0
    command = "python -m benchmarks.clients " + " ".join(sys.argv[1:] if argv is None
                                                           else argv)
    meta = {
        "command": f"`{command.strip()}`",
        "mode": ("quick" if args.quick else "full") + (", held-out half only" if
                                                       args.held_out else ", both halves"),
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "code": f"jittape at commit {_commit()}",
        "libraries": _versions() + f"; python {platform.python_version()}",
        "machine": f"{os.cpu_count()} logical CPUs; load average at the end "
                   + ", ".join(f"{v:.2f}" for v in os.getloadavg()),
        "wall time": f"{elapsed:.0f} s ("
                     + ", ".join(f"{k} {v['seconds']:.0f} s" for k, v in libs.items()
                                 if "seconds" in v) + ")",
        "per-case limit": f"{timeout:.0f} s",
    }
    result = dict(meta=meta, libraries=libs, causes=report.causes(rows),
                  replay_causes=report.causes(rows, replay=True),
                  silent_wrong=report.silent_wrong(rows), rows=rows)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report.markdown(result))
    out.with_suffix(".json").write_text(_json(result))
    for lib, info in libs.items():
        s = info.get("summary")
        log(f"{lib}: " + (f"skipped ({info['skipped']})" if s is None else
                          f"{s['pass']}/{s['judged']} pass, {s['error']} errors, "
                          f"{s['silent']} silent wrong, {s['warned']} wrong and warned, {s['unreliable']} unreliable"))
    log(f"{elapsed:.0f} s; results in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Run data-apis' ``array-api-tests`` against jittape's array API namespace.

    python benchmarks/array_api_suite.py --suite DIR [--max-examples 10]

DIR is a checkout of https://github.com/data-apis/array-api-tests with its ``array-api``
submodule (the standard's stubs). The suite is run unmodified under pytest, three times in
one go, and the pass counts are written side by side to ``results/array_api_suite.md``:

* ``numpy``: NumPy 2's own namespace, the reference (jittape's namespace is NumPy's);
* ``jittape.numpy.array_api`` on the NumPy arrays the suite builds;
* the same namespace on **active arrays** (``benchmarks/apisuite/active_xp.py``): every
  float64 array the suite creates is an input of a recording, so the functions under test
  meet active values as in a recorded function. This is the figure for jittape.

A test that fails in the active run and passes on NumPy is listed with its error's first
line. Nothing of the suite is copied into this repository.
"""

import argparse
import datetime
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNS = {"numpy": "numpy", "namespace on NumPy arrays": "jittape.numpy.array_api",
        "namespace on active arrays": "benchmarks.apisuite.active_xp"}


def run(suite, module, max_examples):
    """``(counts, {test id: first error line})`` of one pytest run of the suite."""
    env = dict(os.environ, ARRAY_API_TESTS_MODULE=module, COLUMNS="400",
               PYTHONPATH=os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-m", "pytest", "array_api_tests", "-q", "-p", "no:cacheprovider",
           "-p", "benchmarks.apisuite.plugin", f"--max-examples={max_examples}", "-rf",
           "--disable-warnings", "-n", "2"]
    out = subprocess.run(cmd, cwd=suite, env=env, capture_output=True, text=True).stdout
    counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|skipped)", out)}
    failed = dict(re.findall(r"^FAILED (\S+)(?: - (.*))?$", out, re.M))
    return counts, failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", required=True, help="array-api-tests checkout")
    ap.add_argument("--max-examples", type=int, default=10)
    args = ap.parse_args()
    results = {name: run(args.suite, module, args.max_examples) for name, module in RUNS.items()}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=args.suite,
                            capture_output=True, text=True).stdout.strip()
    lines = [f"# array-api-tests against jittape's namespace ({datetime.date.today()})", "",
             f"Suite commit {commit}, `--max-examples={args.max_examples}`, "
             f"`python benchmarks/array_api_suite.py`.", "",
             "| run | passed | failed | skipped | pass rate |", "|---|---:|---:|---:|---:|"]
    for name, (counts, _) in results.items():
        p, f = counts.get("passed", 0), counts.get("failed", 0)
        lines.append(f"| {name} | {p} | {f} | {counts.get('skipped', 0)} | "
                     f"{100 * p / max(p + f, 1):.1f} % |")
    numpy_failed = results["numpy"][1]
    extra = {k: v for k, v in results["namespace on active arrays"][1].items()
             if k not in numpy_failed}
    lines += ["", f"## Failing on active arrays, passing on NumPy ({len(extra)})", ""]
    lines += [f"- `{k}`: {(v or '')[:160]}" for k, v in sorted(extra.items())]
    out = HERE / "results" / "array_api_suite.md"
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:10]))


if __name__ == "__main__":
    main()

"""Run HIPS autograd's own tests against jittape and write the categorised results.

    python benchmarks/autograd_suite.py --autograd-tests DIR     # autograd's tests/ folder
    python benchmarks/autograd_suite.py --download               # autograd's sdist from PyPI

The tests run unmodified under pytest, in a subprocess whose ``sys.path`` starts with the
shim in ``benchmarks/agsuite/shim`` (a stand-in ``autograd`` package: NumPy, SciPy and
jittape underneath) and then the jittape checkout to test (``--jittape-root``, by default
this one). autograd's code is never copied into this repository: it is read from DIR, or
downloaded into a temporary directory. Writes ``results/autograd_suite.md`` (counts, wrong
values and gradients first, every failing test with its error's first line, the scope
decisions) and ``results/autograd_suite.json`` (the same per test, for diffs).
"""

import argparse
import datetime
import hashlib
import json
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.agsuite import report  # noqa: E402

FILES = ["test_numpy.py", "test_systematic.py", "test_linalg.py", "test_scipy.py",
         "test_wrappers.py"]
AUTOGRAD_VERSION = "1.9.1"  # for --download


def find_tests(path):
    """DIR itself or DIR/tests, whichever holds autograd's test files."""
    path = Path(path).resolve()
    for cand in (path, path / "tests"):
        if (cand / FILES[0]).is_file():
            return cand
    sys.exit(f"{path}: no {FILES[0]} there or in its tests/ folder")


def download(workdir):
    """autograd's sdist from PyPI (pip's own client), unpacked in ``workdir``."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary",
                    ":all:", f"autograd=={AUTOGRAD_VERSION}", "-d", str(workdir)], check=True)
    sdist = next(Path(workdir).glob("autograd-*.tar.gz"))
    with tarfile.open(sdist) as tar:
        try:
            tar.extractall(workdir, filter="data")
        except TypeError:  # Python < 3.11.4: no extraction filters
            tar.extractall(workdir)
    return find_tests(next(p for p in Path(workdir).iterdir() if p.is_dir()))


def source_info(tests):
    """Where the tests came from: version (PKG-INFO or git), sha256 over the files run."""
    digest = hashlib.sha256()
    for name in FILES + ["numpy_utils.py", "conftest.py"]:
        if (tests / name).is_file():
            digest.update((tests / name).read_bytes())
    version = "unknown"
    pkg = tests.parent / "PKG-INFO"
    if pkg.is_file():
        version = next((ln.split(":", 1)[1].strip() for ln in pkg.read_text().splitlines()
                        if ln.startswith("Version:")), version)
    else:
        git = subprocess.run(["git", "-C", str(tests), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True)
        version = f"git {git.stdout.strip()}" if git.returncode == 0 else version
    return f"autograd {version}, {len(FILES)} files, sha256 {digest.hexdigest()[:16]}"


def git_commit(root):
    run = lambda *a: subprocess.run(["git", "-C", str(root), *a], capture_output=True,  # noqa
                                    text=True).stdout.strip()
    commit = run("rev-parse", "--short", "HEAD") or "unknown"
    dirty = run("status", "--porcelain", "--", "jittape")
    return commit + (" (jittape/ modified)" if dirty else "")


def run_pytest(tests, jittape_root, out, pytest_args, max_order=2):
    """pytest over the test files with the shim first on sys.path; returns seconds taken."""
    shim = HERE / "agsuite" / "shim"
    env = dict(os.environ, AGSUITE_OUT=str(out), JITTAPE_QUIET="1",
               AGSUITE_MAX_ORDER=str(max_order),
               PYTHONPATH=os.pathsep.join([str(shim), str(jittape_root)]
                                          + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    ini = out.parent / "pytest.ini"
    ini.write_text("[pytest]\n")  # not autograd's own configuration (coverage, xdist)
    cmd = [sys.executable, "-m", "pytest", "-c", str(ini), "--rootdir", str(tests),
           "-p", "agsuite_plugin", "-p", "no:cacheprovider", "-q", "--tb=no", "-o",
           "console_output_style=classic", *[str(tests / f) for f in FILES], *pytest_args]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=tests, env=env, stdout=subprocess.PIPE, text=True)
    if proc.returncode not in (0, 1):  # 1: some tests failed, as expected
        sys.exit(f"pytest exited with {proc.returncode}:\n{proc.stdout[-3000:]}")
    return time.perf_counter() - t0


def read_rows(out):
    meta, rows = {}, []
    for line in out.read_text().splitlines():
        row = json.loads(line)
        if "meta" in row:
            meta = row["meta"]
        else:
            rows.append(row)
    return meta, rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--autograd-tests", metavar="DIR", help="autograd's tests/ (or its root)")
    src.add_argument("--download", action="store_true",
                     help=f"pip download autograd {AUTOGRAD_VERSION}'s sdist to a temporary dir")
    parser.add_argument("--jittape-root", default=str(HERE.parent),
                        help="the jittape checkout to test (default: this one)")
    parser.add_argument("--output", default=str(HERE / "results" / "autograd_suite.md"),
                        help="markdown results; the JSON goes next to it")
    parser.add_argument("--max-order", type=int, choices=(1, 2), default=2,
                        help="2 (autograd's default): check_grads(order=2) also checks the "
                             "derivatives of jvp and vjp; 1: count those, do not check")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agsuite-") as tmp:
        tests = download(Path(tmp)) if args.download else find_tests(args.autograd_tests)
        out = Path(tmp) / "rows.jsonl"
        seconds = run_pytest(tests, Path(args.jittape_root).resolve(), out, args.pytest_args,
                             args.max_order)
        env_meta, rows = read_rows(out)
        source = source_info(tests)
    rows = report.classified(rows)
    command = "python benchmarks/autograd_suite.py " + " ".join(sys.argv[1:])
    meta = {"command": f"`{command}`", "tests": source,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "jittape": f"commit {git_commit(args.jittape_root)} ({env_meta.get('jittape')})",
            "libraries": f"python {platform.python_version()}, numpy {env_meta.get('numpy')}, "
                         f"scipy {env_meta.get('scipy')}",
            "self-check (the checks catch a dropped derivative and a wrong value)":
                env_meta.get("self_check", "not run"),
            "checks up to order": str(args.max_order),
            "wall time": f"{seconds:.0f} s"}
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(report.markdown(rows, meta))
    output.with_suffix(".json").write_text(json.dumps(report.compact(rows, meta), indent=1) + "\n")
    s = report.summary(rows)
    print(f"{s['pass']} of {s['in_scope']} in-scope tests pass ({s['collected']} collected); "
          f"fail: {s['fail']}; results in {output}")


if __name__ == "__main__":
    main()

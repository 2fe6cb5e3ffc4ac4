"""pytest plugin of the autograd-suite harness: one JSON line per test in $AGSUITE_OUT.

Each line has the test's id, its outcome, the exception (type, classes, first line, the
innermost frame and the innermost one outside jittape and the harness) and the harness
counts of :data:`agsuite_checks.STATE`.
"""

import json
import os
import time
import traceback

import pytest

import agsuite_checks


def pytest_sessionstart(session):
    import numpy
    import scipy

    import jittape
    failure = agsuite_checks.self_check()
    if failure:
        pytest.exit(f"agsuite self-check failed: {failure}", returncode=3)
    meta = {"jittape": os.path.dirname(jittape.__file__), "numpy": numpy.__version__,
            "scipy": scipy.__version__, "self_check": "passed"}
    with open(os.environ["AGSUITE_OUT"], "a") as fh:
        fh.write(json.dumps({"meta": meta}) + "\n")


def pytest_runtest_setup(item):
    agsuite_checks.reset()
    item._agsuite_t0 = time.perf_counter()


def _frames(excinfo):
    """Where it was raised: the innermost frame; the innermost outside jittape and this
    harness, with its source line; the entry into NumPy/SciPy (the outermost frame of the
    library calls that end in the innermost frames)."""
    tb = traceback.extract_tb(excinfo.tb)
    fmt = lambda f: f"{f.filename}:{f.lineno} ({f.name})"  # noqa: E731
    outside = [f for f in tb if "/jittape/" not in f.filename and "/agsuite/" not in f.filename]
    entry = ""
    for f in reversed(tb):
        if "/jittape/" in f.filename:
            continue
        if "site-packages/" not in f.filename:
            break
        entry = fmt(f)
    return {"frame": fmt(tb[-1]) if tb else "", "caller": fmt(outside[-1]) if outside else "",
            "caller_line": (outside[-1].line or "") if outside else "", "entry": entry}


def _record(item, report, call):
    exc = call.excinfo
    row = {"nodeid": item.nodeid, "outcome": report.outcome, "when": call.when,
           "seconds": round(time.perf_counter() - getattr(item, "_agsuite_t0", 0.0), 3),
           "state": dict(agsuite_checks.STATE)}
    if exc is not None:
        value = exc.value
        text = str(value).strip()
        row.update(exc_type=type(value).__name__, exc_module=type(value).__module__,
                   exc_mro=[c.__name__ for c in type(value).__mro__],
                   message=text.splitlines()[0] if text else "",
                   **_frames(exc),
                   in_jittape=any("/jittape/" in f.filename
                                  for f in traceback.extract_tb(exc.tb)))
        if isinstance(value, pytest.skip.Exception):
            row["outcome"] = "skipped"
    with open(os.environ["AGSUITE_OUT"], "a") as fh:
        fh.write(json.dumps(row) + "\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.when == "call" or (call.when == "setup" and report.outcome != "passed"):
        _record(item, report, call)

"""Running the cases: one worker process per library, watched by the parent.

The worker (``python -m benchmarks.clients.runner LIBRARY NAMES_FILE OUT_FILE ...``) runs the
named cases in turn, each under a soft time limit (``SIGALRM`` raising
:class:`~benchmarks.clients.harness.CaseTimeout`), and appends one JSON line per event to
OUT_FILE: ``{"start": name}`` before a case, its result row after. The parent reads the file
as it grows. A case past the hard limit (soft + a margin: code that never returns to Python)
or a worker that dies (a crash in compiled code) becomes a ``timeout`` or ``crash`` row, and a
new worker goes on with the cases left; after a soft timeout the worker exits too, so that no
case runs in a process whose state an interrupted case may have left half done. No case can
stop the run.
"""

import hashlib
import importlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: library key -> (module of its cases, the distribution it needs, its import name)
LIBRARIES = {
    "stats": ("benchmarks.clients.lib_stats", "scipy", "scipy.stats"),
    "statsmodels": ("benchmarks.clients.lib_statsmodels", "statsmodels", "statsmodels"),
    "sklearn": ("benchmarks.clients.lib_sklearn", "scikit-learn", "sklearn"),
    "lmfit": ("benchmarks.clients.lib_lmfit", "lmfit", "lmfit"),
}
HARD_MARGIN = 60.0   # seconds past the soft limit before the parent kills the worker


def split(name):
    """``dev`` or ``held-out``: a fixed half of the cases by a hash of the case name."""
    return "held-out" if hashlib.sha256(name.encode()).digest()[0] & 1 else "dev"


def missing(library):
    """Why ``library`` cannot run here (None: it can)."""
    _, dist, mod = _entry(library)
    try:
        importlib.import_module(mod)
    except Exception as exc:  # not installed, or broken
        return f"{dist} not importable ({type(exc).__name__}: {exc})"
    return None


def _entry(library):
    """``LIBRARIES[library]``; another name is taken as a module of cases needing only
    NumPy (the runner's own tests)."""
    return LIBRARIES.get(library, (library, "numpy", "numpy"))


def load_cases(library):
    cases = importlib.import_module(_entry(library)[0]).cases()
    names = [c.name for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise RuntimeError(f"duplicate case names: {sorted(dup)[:5]}")
    return cases


# --- the worker ----------------------------------------------------------------------------
def _alarm(signum, frame):
    from benchmarks.clients.harness import CaseTimeout
    raise CaseTimeout()


def worker(library, names, out, timeout, timing, target, rounds):
    import warnings
    warnings.simplefilter("ignore")
    importlib.import_module(_entry(library)[2])  # the library first, then jittape, as a
    import jittape  # noqa: F401                   # user's script would (see lib_stats)
    from benchmarks.clients import harness
    by_name = {c.name: c for c in load_cases(library)}
    signal.signal(signal.SIGALRM, _alarm)
    with open(out, "a") as fh:
        def emit(obj):
            fh.write(json.dumps(obj, default=_jsonable) + "\n")
            fh.flush()
        for name in names:
            case = by_name[name]
            emit({"start": name})
            t0 = time.perf_counter()
            timed_out = False
            signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                if case.run is not None:
                    rows = case.run()
                else:
                    try:
                        problem = case.build()
                    except Exception as exc:
                        rows = [dict(status="setup", cause=harness.cause(exc))]
                    else:
                        rows = [harness.check(problem, timing, target, rounds)]
            except harness.CaseTimeout:
                rows, timed_out = [dict(status="timeout", note=f"over {timeout:.0f} s")], True
            except Exception as exc:  # a fault of the harness itself: still a row
                rows = [dict(status="setup", cause=harness.cause(exc), note="harness error")]
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            seconds = time.perf_counter() - t0
            for row in rows:
                full = dict(library=library, name=row.pop("name", name), group=case.group,
                            check=row.pop("check", case.check), seconds=round(seconds, 3))
                full.update(row)
                full["split"] = split(name)   # the case's half, for all its rows
                emit(full)
            emit({"done": name})
            if timed_out:
                return 3


def _jsonable(obj):
    import numpy as np
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)


# --- the parent ----------------------------------------------------------------------------
def _worker_env():
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
        env[var] = "1"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    from benchmarks.clients import USER_BACKGROUND
    env.pop("JITTAPE_BACKGROUND", None)   # jittape's default, unless the user set one
    if USER_BACKGROUND is not None:
        env["JITTAPE_BACKGROUND"] = USER_BACKGROUND
    return env


def run_library(library, cases, timeout, timing, target, rounds, log):
    """Result rows of ``cases`` (one library), each case run once whatever happens."""
    remaining = [c.name for c in cases]
    info = {c.name: c for c in cases}
    rows, total, started_at = [], len(remaining), time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="clients-") as tmp:
        attempt = 0
        while remaining:
            attempt += 1
            before = len(remaining)
            names_file, out = Path(tmp) / f"names{attempt}", Path(tmp) / f"out{attempt}.jsonl"
            names_file.write_text("\n".join(remaining))
            out.touch()
            errlog = open(Path(tmp) / f"stderr{attempt}", "w+")
            proc = subprocess.Popen(
                [sys.executable, "-m", "benchmarks.clients.runner", library, str(names_file),
                 str(out), str(timeout), "1" if timing else "0", str(target), str(rounds)],
                cwd=ROOT, env=_worker_env(), stdout=errlog, stderr=errlog,
                start_new_session=True)
            current, since, offset = None, time.perf_counter(), 0
            while True:
                time.sleep(0.05)
                with open(out) as fh:
                    fh.seek(offset)
                    chunk = fh.read()
                lines = chunk.split("\n")
                offset += len(chunk) - len(lines[-1])
                for line in lines[:-1]:
                    ev = json.loads(line)
                    if "start" in ev:
                        current, since = ev["start"], time.perf_counter()
                    elif "done" in ev:
                        remaining.remove(ev["done"])
                        current = None
                    else:
                        rows.append(ev)
                        log(f"[{library} {total - len(remaining) + 1}/{total}] {ev['name']}: "
                            f"{ev['status']} ({ev['seconds']:.1f} s)")
                if lines[:-1]:
                    continue
                ended = proc.poll() is not None
                late = current is not None and time.perf_counter() - since > timeout + \
                    HARD_MARGIN
                if not (ended or late):
                    continue
                if late:
                    os.killpg(proc.pid, signal.SIGKILL)  # the worker's own process group
                    proc.wait()
                if current is not None:
                    errlog.seek(0)
                    tail = errlog.read()[-600:]
                    c = info[current]
                    status = "timeout" if late else "crash"
                    note = (f"killed after {timeout + HARD_MARGIN:.0f} s" if late else
                            f"worker exited with {proc.returncode}: {tail.strip()[-300:]}")
                    rows.append(dict(library=library, name=current, group=c.group,
                                     check=c.check, status=status, note=note,
                                     seconds=round(time.perf_counter() - since, 1),
                                     split=split(current)))
                    log(f"[{library}] {current}: {status}")
                    remaining.remove(current)
                elif remaining and proc.returncode not in (0, 3):
                    errlog.seek(0)
                    raise RuntimeError(f"the {library} worker failed:\n{errlog.read()[-3000:]}")
                break
            errlog.close()
            if len(remaining) == before:
                raise RuntimeError(f"the {library} worker made no progress")
    return rows, time.perf_counter() - started_at


if __name__ == "__main__":
    lib, names_file, out, timeout, timing, target, rounds = sys.argv[1:8]
    sys.exit(worker(lib, Path(names_file).read_text().split("\n"), out, float(timeout),
                    timing == "1", float(target), int(rounds)) or 0)

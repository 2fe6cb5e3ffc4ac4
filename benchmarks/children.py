"""The parent side of benchmarks that measure new Python processes (``bench_first_minute.py``,
``bench_first_gradient.py``): their environment, running one, waiting for its session, and
saying which code was measured.

A child is the benchmark script itself run as ``SCRIPT --child KIND --spec JSON --result
FILE``; it writes its figures to FILE as JSON. Its stdout and stderr go to files, not pipes:
jittape's compile worker inherits stderr and may outlive the child, and a pipe would make
the parent wait for it. The child starts a new session, so that the parent can wait for
every process of it (the compile worker) before the next run.

Only the parent imports this module (a child imports nothing of ``benchmarks/`` before its
figures are taken), so it imports the standard library alone.
"""

import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BLAS_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
_COUNT = itertools.count()


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def child_env(jittape_root, cache, mode, blas_threads=None, quiet=True):
    """The environment of a child: caches under ``cache`` (``numba/``, ``jittape/``),
    ``jittape_root`` first on ``PYTHONPATH``, ``JITTAPE_BACKGROUND=0`` for ``mode``
    ``"foreground"`` (unset otherwise), ``JITTAPE_QUIET=1`` if ``quiet`` (unset otherwise),
    the BLAS thread variables set to ``blas_threads`` if given."""
    drop = ("JITTAPE_BACKGROUND",) + (() if quiet else ("JITTAPE_QUIET",))
    env = {k: v for k, v in os.environ.items() if k not in drop}
    if blas_threads:
        env.update({k: str(blas_threads) for k in BLAS_VARS})
    env.update(NUMBA_CACHE_DIR=str(cache / "numba"), JITTAPE_CACHE_DIR=str(cache / "jittape"),
               PYTHONPATH=os.pathsep.join(
                   filter(None, [str(jittape_root), os.environ.get("PYTHONPATH")])))
    if quiet:
        env["JITTAPE_QUIET"] = "1"
    if mode == "foreground":
        env["JITTAPE_BACKGROUND"] = "0"
    return env


def session_alive(sid):
    """Whether a live process of session ``sid`` remains (Linux ``/proc``; else False)."""
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return False
    for entry in entries:
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == sid and fields[0] not in "ZX":
            return True
    return False


def wait_session(sid, limit=300.0):
    """Seconds until the child's session (its compile worker) is gone; killed after
    ``limit``."""
    t = time.perf_counter()
    while session_alive(sid):
        if time.perf_counter() - t > limit:
            os.killpg(sid, signal.SIGKILL)
            break
        time.sleep(0.02)
    return time.perf_counter() - t


def spawn(script, kind, spec, env, work, timeout=180.0):
    """Run ``script --child kind`` with ``spec`` in ``work``; its figures (the JSON it wrote)
    with the parent's: wall (spawn to exit), start-up (spawn to the child's ``t0``), exit
    (the child's ``end`` to exit), linger (exit to the end of its session), load, rc and the
    tail of its stderr, and ``notices``: its lines announcing a compile (``jittape: compil...``,
    printed unless ``JITTAPE_QUIET`` is set, by the child or its compile worker)."""
    tag = f"{kind}-{next(_COUNT)}"
    result = work / f"{tag}.json"
    cmd = [sys.executable, str(script), "--child", kind, "--spec", json.dumps(spec),
           "--result", str(result)]
    with open(work / f"{tag}.out", "w") as out, open(work / f"{tag}.err", "w") as err:
        load = os.getloadavg()[0]
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                env=env, cwd=work, start_new_session=True)
        try:
            rc = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
        end = time.perf_counter()
    linger = wait_session(proc.pid)
    data = json.loads(result.read_text()) if result.exists() else {}
    stderr = (work / f"{tag}.err").read_text()
    data.update(kind=kind, spec=spec, rc=rc, wall=end - t, linger=linger, load=load,
                stderr=stderr[-2000:], notices=[
                    ln for ln in stderr.splitlines() if ln.startswith("jittape: compil")])
    if "t0" in data:
        data.update(startup=data["t0"] - t, exit=end - data["t0"] - data["end"])
    if rc != 0 or "t0" not in data:
        log(f"  child {kind} {spec} failed (rc {rc}):\n{stderr[-1500:]}")
    return data


@contextlib.contextmanager
def temp_work(prefix):
    """A new temporary directory (the children's caches and files), removed afterwards."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def code_line(root):
    """Which jittape ``root`` holds: its commit, the files of ``jittape/`` with uncommitted
    changes and a hash of their diff (other work may be in progress in the checkout)."""
    git = lambda *a: subprocess.run(["git", "-C", str(root), *a], capture_output=True,  # noqa
                                    text=True, timeout=30).stdout.rstrip("\n")
    dirty = [ln[3:] for ln in git("status", "--porcelain", "--", "jittape").splitlines()]
    diff = subprocess.run(f"git -C {root} diff HEAD -- jittape | sha256sum", shell=True,
                          capture_output=True, text=True).stdout[:12]
    return {"root": str(root), "commit": git("rev-parse", "--short", "HEAD") or "?",
            "dirty": dirty, "diff_sha": diff if dirty else None}


def describe_code(start, end):
    """:func:`code_line` at the start and end of a run, as a sentence."""
    text = f"jittape from `{start['root']}` at commit {start['commit']}"
    if start["dirty"]:
        text += (f", uncommitted changes in {', '.join(start['dirty'])} (diff sha256 "
                 f"{start['diff_sha']} at the start, "
                 f"{end['diff_sha'] or 'a clean tree'} at the end)")
    else:
        text += ", clean tree" + (f" (at the end: uncommitted changes in "
                                  f"{', '.join(end['dirty'])})" if end["dirty"] else "")
    if end["commit"] != start["commit"]:  # another commit landed during the run
        text += f"; commit {end['commit']} at the end"
    return text


def blas_line(blas_threads):
    """The children's BLAS threads, as a sentence."""
    if blas_threads:
        return f"{blas_threads} ({', '.join(BLAS_VARS)} set)"
    set_ = [f"{k}={os.environ[k]}" for k in BLAS_VARS if k in os.environ]
    return ", ".join(set_) if set_ else "the libraries' default (none of " \
        f"{', '.join(BLAS_VARS)} set)"


def write_results(output, text, payload):
    """The report ``text`` to ``output`` (Markdown) and ``payload`` (every number, with the
    command) to the same name with ``.json``."""
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text)
    output.with_suffix(".json").write_text(json.dumps({"command": sys.argv, **payload},
                                                      indent=1))

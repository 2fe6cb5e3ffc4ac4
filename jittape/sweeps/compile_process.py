"""Compiles in another process, so that the caller's thread never waits for the GIL.

Numba compiles under the GIL. A compile on a thread of the caller's process shares the GIL
with a caller that calls gradients in a tight loop, and gets it once per switch interval:
measured on 2 cores, a sweep that compiles in 1.5 s idle took over 90 s that way, and
loading cached machine code (1.3 s idle) 17 s. Here one worker process per caller
(:mod:`jittape.sweeps.compile_worker`, started on first need and kept) compiles generated
modules of the cache directory into Numba's disk cache, one job at a time; the caller loads
the result in its own thread when it next calls (a cache hit: tens of milliseconds, 0.4 s
with Numba's import). A job's :class:`concurrent.futures.Future` fails with
:class:`CompileProcessError` if the worker raised or died; the caller then compiles in its
own process, as without a worker.

:func:`jittape.sweeps.tiers.in_process` decides when to use it.
"""

import atexit
import functools
import json
import os
import subprocess
import sys
import threading
from collections import deque
from concurrent.futures import Future
from pathlib import Path


class CompileProcessError(RuntimeError):
    """A job of the compile process failed: the worker raised, or it died."""


_lock = threading.Lock()
_worker = []  # [(Popen, deque of its futures in job order)] while a worker runs
_low = deque()  # (job, Future) of low-priority jobs, sent when the worker has nothing else


def marker_name(job):
    """The name of what ``job`` compiles, as its ``.ok`` and ``.busy`` files say it."""
    return job.get("marker") or job.get("what") or "tape_kernel"


@functools.lru_cache(maxsize=None)
def cores():
    """The cores this process may run on (asked once: a replay's tier-up check reads it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not on Linux)
        return os.cpu_count() or 1


def _start():
    root = str(Path(__file__).resolve().parents[2])  # the directory holding jittape
    env = dict(os.environ, JITTAPE_QUIET="1", JITTAPE_BACKGROUND="0")
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen([sys.executable, "-m", "jittape.sweeps.compile_worker"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True,
                            bufsize=1)  # (stderr: the caller's, for Numba's own messages)
    futures = deque()
    threading.Thread(target=_read, args=(proc, futures), daemon=True,
                     name="jittape-compile-reader").start()
    _worker[:] = [(proc, futures)]
    return proc, futures


def _read(proc, futures):
    """Resolve the worker's futures from its answers, in order; fail the rest if it dies."""
    for line in proc.stdout:
        with _lock:
            future = futures.popleft() if futures else None
        if future is None:
            continue
        try:
            answer = json.loads(line)
        except ValueError:
            answer = {"ok": False, "error": f"unreadable answer {line!r}"}
        if answer.get("ok"):
            future.set_result(answer.get("seconds"))
        else:
            future.set_exception(CompileProcessError(answer.get("error", "failed")))
        with _lock:
            _pump()
    code = proc.wait()
    with _lock:
        if _worker and _worker[0][0] is proc:
            _worker.clear()
        left = list(futures)
        futures.clear()
    for future in left:
        future.set_exception(CompileProcessError(
            f"the compile process died (exit status {code}) before finishing the job"))


def submit(job, low=False):
    """Send ``job`` (a dict, see :mod:`jittape.sweeps.compile_worker`) to the worker,
    starting it if needed; return its Future (result: the seconds the compile took).
    ``low``: sent only once the worker has no other job (pieces for later op sets wait
    behind the compiles that a caller is waiting for)."""
    future = Future()
    with _lock:
        if low:
            _low.append((job, future))
            _pump()
        else:
            _send(job, future)
    return future


@atexit.register
def _hand_over():
    """At exit, send the low-priority jobs still held here to the worker, which goes on with
    them after this process ends (:mod:`jittape.sweeps.compile_worker`)."""
    with _lock:
        while _low and _worker:
            job, future = _low.popleft()
            _send(job, future)


def _pump():
    """Send the next low-priority job if the worker is idle (with the lock held)."""
    if _low and not (_worker and _worker[0][1]):
        _send(*_low.popleft())


def _send(job, future):
    """Write ``job`` to the worker (with the lock held), starting one if needed."""
    proc, futures = _worker[0] if _worker else _start()
    futures.append(future)
    try:
        proc.stdin.write(json.dumps(job) + "\n")
        proc.stdin.flush()
    except OSError as e:  # the worker is gone: its reader fails the futures it holds
        futures.remove(future)
        future.set_exception(CompileProcessError(f"the compile process is gone ({e})"))


def pid():
    """The worker's process id, or None (for tests)."""
    with _lock:
        return _worker[0][0].pid if _worker else None

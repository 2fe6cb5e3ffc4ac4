"""Tiered sweeps: a small tape runs interpreted while Numba compiles in another process.

The first call of a sweep in a process waits for Numba: about 0.4 s to import it and load
cached machine code, 1-2 s to compile the sweeps of a new op set. Machine code in the cache
is loaded at once, in the caller's thread (no tier below it: the load is shorter than any
tier-0 run would gain, and a script that warms up with one call then times the next ones
finds them loaded). A cold sweep compiles in the compile process
(:mod:`jittape.sweeps.compile_process`), never on a thread of the caller's: Numba compiles
under the GIL, and a caller calling gradients in a tight loop starves such a thread (a 1.5 s
compile took over 90 s, measured). Meanwhile a tape of at most :data:`SMALL_VALUES` values
and :data:`SMALL_RECORDS` records runs the same generated source
(:func:`jittape.sweeps.codegen.sweep_source` with ``python=True``) by CPython (tier 0);
once the process is done, the next call loads the machine code (tier 1). A larger tape
of at most :data:`jittape.sweeps.numpy_tier.MAX_RECORDS` records runs its reverse sweep
(an eager gradient's one sweep) in NumPy meanwhile, whole arrays at a time
(:mod:`jittape.sweeps.numpy_tier`). This is how tiered
JIT compilers (HotSpot, V8) hide compile latency. Other tapes compile in the foreground,
as does a tier-0 run that raises (CPython's ``math`` raises where Numba returns inf or nan):
its output buffer is restored and the call repeated compiled. Both tiers run the same
rules; tests/test_tiers.py checks that they agree for every op. Above them, a tape replayed
often compiles into one kernel of its own (:mod:`jittape.api.fastpath`), in the same
compile process.

``JITTAPE_BACKGROUND=0`` (or :func:`set_background`), a machine with one core (where a
second process halves the caller's speed: compiling in the foreground is as fast) and an
unwritable cache directory turn tier 0 off: every first call waits for its compile.
:func:`wait_compiled` waits for the compiles under way and loads their machine code (timings
should start after it). A compile the process leaves under way at exit finishes there, so
that its machine code is in the cache for the next run.
"""

import contextlib
import os
import threading
import time
import types
from concurrent.futures import Future
from pathlib import Path

import numpy as np

from . import compile_process, disk_cache, numpy_tier
from .codegen import sweep_source
from ..optable.externals import INTERPRETED_LAPACK, LAPACK
from ..optable.table import OPS

#: A tape runs interpreted while its sweep compiles if it has at most this many values...
SMALL_VALUES = 4096
#: ... and at most this many records (CPython: about 1 microsecond per value and op).
SMALL_RECORDS = 2048
#: Positions of the buffers each sweep writes, in its arguments (restored if tier 0 fails).
_OUTPUT = {"forward_sweep": (-3,), "reverse_sweep": (-3,), "tangent_sweep": (-3,),
           "hvp_sweep": (-4, -3)}
_enabled = [None]  # None: as $JITTAPE_BACKGROUND says (read at each first call)
#: ``JITTAPE_TIER=interpreted``: every sweep runs its generated source in CPython and no
#: tape compiles a kernel on its own (the contributors' quick loop: no Numba compile for
#: the generic checker; read at import). A sweep CPython cannot run (``math`` raising
#: where Numba gives inf or nan, LAPACK by symbol) still compiles.
INTERPRETED_ONLY = os.environ.get("JITTAPE_TIER", "") == "interpreted"
_pending = {}  # Future of the compile process -> what loads its result here
_interpreted = {}  # frozenset of opcodes -> module of interpreted sweeps


def njit(*args, **kwargs):
    """The decorator of the interpreted sweeps' source: leaves the function as it is."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda f: f


def set_background(on=True):
    """Turn background compiles on or off: cold sweeps and hot tapes compile in the compile
    process while small tapes run interpreted (tier 0), or, off, in the foreground. Same as
    ``JITTAPE_BACKGROUND=1``/``0``."""
    _enabled[0] = bool(on)


def enabled():
    if _enabled[0] is None:
        return os.environ.get("JITTAPE_BACKGROUND", "1") not in ("0", "")
    return _enabled[0]


@contextlib.contextmanager
def foreground():
    """Within this block every sweep waits for its machine code (``warmup`` uses it)."""
    was = _enabled[0]
    _enabled[0] = False
    try:
        yield
    finally:
        _enabled[0] = was


def small(args):
    """Whether the tape of a sweep call (``args`` as the sweep takes them) runs interpreted
    fast enough: its records and values (the last offset) are few."""
    return args[0].shape[0] <= SMALL_RECORDS and args[5][-1] <= SMALL_VALUES


def in_process():
    """Whether cold compiles go to the compile process while small tapes run interpreted
    (see the module docstring for when they do not)."""
    return enabled() and compile_process.cores() >= 2 and not disk_cache.memory_only()


def submit(job, finish=None, describe=None, low=False):
    """Send ``job`` to the compile process (:mod:`jittape.sweeps.compile_worker`), or wait for
    another process compiling the same; return its Future. ``finish()`` loads the result into
    the caller's process: the next call that finds the future done runs it (and :func:`done`),
    or :func:`wait_compiled` does (None: nothing to load here, nothing to wait for).
    ``describe``: what compiles, for the notice on stderr (None: no notice); ``low``: after
    the jobs that callers wait for (:func:`jittape.sweeps.compile_process.submit`)."""
    path = Path(job["path"])
    what = compile_process.marker_name(job)
    pid = disk_cache.compiling_elsewhere(path, what)
    if pid is None:
        if describe:
            disk_cache.notice(f"compiling {describe} in a background process (once; cached "
                              f"in {disk_cache.cache_dir()})")
        future = compile_process.submit(job, low)
        try:  # at once: a process started meanwhile waits for this compile
            disk_cache.busy_file(path, what).write_text(str(compile_process.pid()))
        except OSError:
            pass
    else:
        future = _watched(path, what, job)
    if finish is not None:
        _pending[future] = finish
    return future


_WATCHED = {}  # (module path, what) -> (Future, job): compiles another process is running
_WATCH_LOCK = threading.Lock()
_WATCHER = [None]  # the one thread polling them


def _watched(path, what, job):
    """The Future of another process's compile of ``what``: one per job however often it
    is asked for, all resolved by one polling thread (:func:`_watch`)."""
    with _WATCH_LOCK:
        key = (str(path), what)
        if key not in _WATCHED:
            _WATCHED[key] = (Future(), job)
        if _WATCHER[0] is None or not _WATCHER[0].is_alive():
            _WATCHER[0] = threading.Thread(target=_watch, daemon=True,
                                           name="jittape-compile-watch")
            _WATCHER[0].start()
        return _WATCHED[key][0]


def _watch():
    """Resolve each watched Future when the other process's compile is on disk; submit the
    job here if that process ended without it. Polls every 50 ms (no GIL held meanwhile)
    until nothing is watched."""
    while True:
        with _WATCH_LOCK:
            if not _WATCHED:
                _WATCHER[0] = None
                return
            items = list(_WATCHED.items())
        for key, (future, job) in items:
            path, what = Path(key[0]), key[1]
            if disk_cache.ok_file(path, what).exists():
                future.set_result(None)
            elif disk_cache.compiling_elsewhere(path, what) is None:
                _chain(compile_process.submit(job), future)
            else:
                continue
            with _WATCH_LOCK:
                _WATCHED.pop(key, None)
        time.sleep(0.05)


def _chain(done, future):
    done.add_done_callback(lambda f: future.set_exception(f.exception()) if f.exception()
                           else future.set_result(f.result()))


def done(future):
    """Forget ``future``: its result was loaded (or its failure reported)."""
    _pending.pop(future, None)


def wait_compiled():
    """Wait until the compiles under way are done and load their machine code in this
    thread (a failed compile is reported by the next call of what it compiled, which then
    compiles in this process)."""
    while _pending:
        try:
            future, finish = _pending.popitem()
        except KeyError:  # (emptied by another thread)
            break
        if future.exception() is None:
            finish()


def snapshot(args):
    """Copies of a sweep call's arrays, for the background compile to run on."""
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def interpreted(codes, what):
    """The interpreted sweep ``what`` for the op set ``codes``, or None if its rules call
    LAPACK drivers by symbol that only machine code runs (:data:`jittape.optable.externals.
    LAPACK` less :data:`~jittape.optable.externals.INTERPRETED_LAPACK`)."""
    if codes not in _interpreted:
        source = sweep_source([OPS[c] for c in codes], cache=False, python=True)
        module = None
        if not any(name in source for name in LAPACK if name not in INTERPRETED_LAPACK):
            module = types.ModuleType("jittape_sweeps_interpreted")
            exec(compile(source, "<jittape interpreted sweeps>", "exec"), module.__dict__)
        _interpreted[codes] = module
    module = _interpreted[codes]
    return None if module is None else getattr(module, what)


def tier0(codes, what, args):
    """The tier-0 sweep for the sweep call ``args``, or None: the interpreted sweep for a
    small tape, the NumPy reverse sweep (:mod:`jittape.sweeps.numpy_tier`) for a reverse
    sweep of few records over large arrays."""
    if small(args):
        return interpreted(codes, what)
    if what == "reverse_sweep" and numpy_tier.usable(codes, args):
        return numpy_tier.reverse_sweep
    return None


def run(codes, what, args, fn=None):
    """``(True, result)`` of the tier-0 sweep (``fn``, by default :func:`tier0`'s), or
    ``(False, None)`` with its output buffer as it was if it raised or there is none (the
    caller then runs the compiled sweep)."""
    fn = tier0(codes, what, args) if fn is None else fn
    if fn is None:
        return False, None
    saved = [(args[i], args[i].copy()) for i in _OUTPUT[what]]
    try:
        with np.errstate(all="ignore"):
            return True, fn(*args)
    except Exception:  # noqa: BLE001 (math domain and overflow errors: Numba gives nan/inf)
        for out, was in saved:
            out[...] = was
        return False, None

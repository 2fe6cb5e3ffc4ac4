"""Tiered sweeps: a small tape runs interpreted while Numba compiles in the background.

The first call of a sweep in a process waits for Numba: about 0.4 s to import it and load
cached machine code, 1-2 s to compile the sweeps of a new op set. The same generated source
(:func:`jittape.sweeps.codegen.sweep_source` with ``python=True``) run by CPython needs
milliseconds on a small tape. So a sweep whose Numba code is not ready in this process runs
interpreted (tier 0) on a tape of at most :data:`SMALL_VALUES` values and
:data:`SMALL_RECORDS` records, while one background thread imports Numba and loads or
compiles the sweep (tier 1) on copies of the call's arguments; calls after that use the
machine code. This is how tiered JIT compilers (HotSpot, V8) hide compile latency. Larger
tapes wait for tier 1, as does a tier-0 run that raises (CPython's ``math`` raises where
Numba returns inf or nan): its output buffer is restored and the call repeated compiled.
Both tiers run the same rules; tests/test_tiers.py checks that they agree for every op.
Above them, a tape replayed often compiles into one kernel of its own (:func:`tier_up`,
called by :class:`jittape.Tape` once its interpreted replays have cost more than the
compile would), on the same thread.

``JITTAPE_BACKGROUND=0`` (or :func:`set_background`) turns tier 0 off: every first call
waits for its compile. :func:`wait_compiled` waits for the compiles under way (timings
should start after it). At exit the interpreter waits for them too, so that their machine
code is in the cache for the next process.
"""

import contextlib
import os
import threading
import types
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .codegen import sweep_source
from ..optable.externals import LAPACK
from ..optable.table import OPS

#: A tape runs interpreted while its sweep compiles if it has at most this many values...
SMALL_VALUES = 4096
#: ... and at most this many records (CPython: about 1 microsecond per value and op).
SMALL_RECORDS = 2048
#: Positions of the buffers each sweep writes, in its arguments (restored if tier 0 fails).
_OUTPUT = {"forward_sweep": (-3,), "reverse_sweep": (-3,), "tangent_sweep": (-3,),
           "hvp_sweep": (-4, -3)}
_enabled = [None]  # None: as $JITTAPE_BACKGROUND says (read at each first call)
_executor = []
_THREAD = "jittape-compile"
_pending = set()
_interpreted = {}  # frozenset of opcodes -> module of interpreted sweeps


def njit(*args, **kwargs):
    """The decorator of the interpreted sweeps' source: leaves the function as it is."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda f: f


def set_background(on=True):
    """Turn tier 0 (interpreted sweeps while Numba compiles in the background) on or off."""
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


def submit(fn, *args):
    """Run ``fn(*args)`` on the one compile thread (Numba compiles one thing at a time)."""
    if not _executor:
        _executor.append(ThreadPoolExecutor(1, thread_name_prefix=_THREAD))
    future = _executor[0].submit(fn, *args)
    _pending.add(future)
    future.add_done_callback(_pending.discard)
    return future


def on_compile_thread():
    return threading.current_thread().name.startswith(_THREAD)


def wait_compiled():
    """Wait until the sweeps compiling in the background are ready (a failed compile is
    reported by the next call of its sweep, which compiles it again in the foreground)."""
    for future in list(_pending):
        future.exception()


def snapshot(args):
    """Copies of a sweep call's arrays, for the background compile to run on."""
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def interpreted(codes, what):
    """The interpreted sweep ``what`` for the op set ``codes``, or None if its rules call
    LAPACK drivers by symbol (:data:`jittape.optable.externals.LAPACK`: machine code only)."""
    if codes not in _interpreted:
        source = sweep_source([OPS[c] for c in codes], cache=False, python=True)
        module = None
        if not any(name in source for name in LAPACK):
            module = types.ModuleType("jittape_sweeps_interpreted")
            exec(compile(source, "<jittape interpreted sweeps>", "exec"), module.__dict__)
        _interpreted[codes] = module
    module = _interpreted[codes]
    return None if module is None else getattr(module, what)


def run(codes, what, args):
    """``(True, result)`` of the interpreted sweep, or ``(False, None)`` with its output
    buffer as it was if it raised (the caller then runs the compiled sweep)."""
    fn = interpreted(codes, what)
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


# --- compiled tapes: the tier above the sweeps ---------------------------------------------
def tier_up(compile_fn, *args, what="a tape", now=False):
    """Run ``compile_fn(*args)`` (a hot tape's compile, :mod:`jittape.api.fastpath`) once: on
    the compile thread while the tape's replays go on interpreted, or ``now`` (also when
    background compiles are off, :func:`enabled`). A tape the compiler refuses (ValueError:
    too long) stays interpreted; another failure is reported on stderr, naming ``what``."""
    if enabled() and not now:
        submit(_compile_hot, compile_fn, args, what)
    else:
        _compile_hot(compile_fn, args, what)


def _compile_hot(compile_fn, args, what):
    try:
        compile_fn(*args)
    except ValueError:  # refused by the compiler (too many statements): stays interpreted
        pass
    except Exception as e:  # noqa: BLE001 (a replay must not fail because a compile did)
        from .disk_cache import notice
        notice(f"compiling {what} failed ({type(e).__name__}: {e}); it stays interpreted")

"""Generated Numba modules on disk: one cache directory, keyed by a hash of the source.

Every module jittape generates (the sweeps of an op set, a compiled tape) is written to
``<cache>/<prefix>_<sha256 of its source>.py`` and imported from there, so Numba's
``cache=True`` keeps its machine code across processes. The cache directory is
``$JITTAPE_CACHE_DIR``, else ``$NUMBA_CACHE_DIR/jittape``, else ``~/.cache/jittape``: one
place, which honours ``NUMBA_CACHE_DIR`` (Numba's own cache files go where Numba puts them:
under ``NUMBA_CACHE_DIR`` when set, else beside the module, so also in this directory).

A file whose content no longer hashes to its name (a torn write, an edit) is rewritten; a
directory that cannot be written falls back to an in-memory module compiled without disk
cache, with one warning. Compiles that take long say so on stderr: one line before a
compile that has never finished in this cache directory, one after a compile that took over
:data:`NOTICE_SECONDS`. ``JITTAPE_QUIET=1`` (or :func:`set_quiet`) silences them.
"""

import hashlib
import os
import sys
import time
import types
import warnings
from pathlib import Path

from . import trust

NOTICE_SECONDS = 1.0
_quiet = [os.environ.get("JITTAPE_QUIET", "") not in ("", "0")]
_memory_only = []  # set once the cache directory proved unwritable


def set_quiet(quiet=True):
    """Silence (or restore) the one-line compile notices on stderr."""
    _quiet[0] = bool(quiet)


def memory_only():
    """Whether generated modules are compiled in memory (the cache directory proved
    unwritable): nothing of them reaches the disk, or another process."""
    return bool(_memory_only)


def cache_dir():
    """The directory holding jittape's generated modules (created on first use)."""
    env = os.environ.get("JITTAPE_CACHE_DIR")
    if env:
        return Path(env)
    numba_dir = os.environ.get("NUMBA_CACHE_DIR")
    if numba_dir:
        return Path(numba_dir) / "jittape"
    return Path.home() / ".cache" / "jittape"


def digest(source):
    return hashlib.sha256(source.encode()).hexdigest()[:20]


def notice(message):
    if not _quiet[0]:
        print(f"jittape: {message}", file=sys.stderr, flush=True)


write_atomic = trust.write_atomic


def _write(path, source):
    """Write ``source`` to ``path`` unless it is there intact; False if not writable."""
    try:
        if path.read_text() == source:
            return True
    except (OSError, UnicodeDecodeError):
        pass  # absent or damaged: written anew
    try:
        write_atomic(path, source)
        return True
    except OSError:
        return False


def write(prefix, source):
    """Write the module ``load(prefix, ...)`` would import from ``source`` without importing
    it (for the compile process); return its path.

    Raises
    ------
    OSError
        The cache directory is not writable."""
    path = cache_dir() / f"{prefix}_{digest(source)}.py"
    if not _write(path, source):
        raise OSError(f"cannot write {path}")
    return path


def load(prefix, source_for):
    """Import the module that ``source_for(cache)`` generates; reuse it if imported.

    ``source_for(True)`` is the source with disk caching, ``source_for(False)`` without
    (for the in-memory fallback). Returns the module.
    """
    source = source_for(True)
    name = f"{prefix}_{digest(source)}"
    module = sys.modules.get(name)
    if module is not None:
        return module
    path = cache_dir() / f"{name}.py"
    on_disk = not _memory_only and _trusted() and _write(path, source)
    if on_disk and _own_files(path):
        module = trust.exec_source(name, path, source)
    else:
        if not on_disk and not _memory_only:
            _fall_back(f"cache directory {cache_dir()} is not writable", "a writable directory")
        module = types.ModuleType(name)
        exec(compile(source_for(False), f"<jittape {name}>", "exec"), module.__dict__)
        path = None
    module.__jittape_path__ = path
    sys.modules[name] = module
    return module


def _fall_back(why, fix):
    """Compile in memory from now on, saying once why and what to do."""
    _memory_only.append(True)
    warnings.warn(f"jittape: {why}; compiling in memory (set JITTAPE_CACHE_DIR and "
                  f"NUMBA_CACHE_DIR to {fix} to keep compiled code across runs)",
                  RuntimeWarning, stacklevel=4)


_checked = {}  # (cache directory, Numba's) -> whether they may hold code this process runs


def _trusted():
    """Whether the cache directories belong to this user alone (:mod:`.trust`); else one
    warning, and every module compiles in memory."""
    dirs = (cache_dir(), trust.numba_root())
    if dirs not in _checked:
        why = next(((d, r) for d in dirs if d is not None
                    for r in [trust.untrusted(d)] if r), None)
        _checked[dirs] = why is None
        if why is not None:
            _fall_back(f"not loading compiled code from {why[0]}: {why[1]}",
                       f"directories only you can write (or chmod go-w {why[0]})")
    return _checked[dirs]


def _own_files(path):
    """Whether the files of the module at ``path`` are this user's alone; else a notice,
    and this module compiles in memory."""
    bad = trust.foreign_files(path)
    if bad:
        notice(f"not loading {bad[0]}: it is not yours alone (owner or permissions); "
               f"compiling {path.stem} in memory. Remove the file (or chmod go-w it)")
    return not bad


def marker(module, what):
    """The file that records that ``what`` of ``module`` compiled once in this cache."""
    path = getattr(module, "__jittape_path__", None)
    return None if path is None else ok_file(path, what)


def ok_file(path, what):
    """The marker file of ``what`` of the generated module at ``path``."""
    return path.with_name(f"{path.stem}.{what}.ok")


def busy_file(path, what):
    """The file that says a process is compiling ``what`` of the module at ``path`` (it
    holds the process id: :mod:`jittape.sweeps.compile_worker`)."""
    return path.with_name(f"{path.stem}.{what}.busy")


def compiling_elsewhere(path, what):
    """The id of a live process compiling ``what`` of the module at ``path``, or None."""
    try:
        pid = int(busy_file(path, what).read_text())
        os.kill(pid, 0)  # (signal 0: only whether it exists)
    except (OSError, ValueError):
        return None
    return pid


def compiled_before(prefix, source, what):
    """Whether ``what`` of the module ``load(prefix, ...)`` would import from ``source``
    compiled once in this cache (its machine code is then on disk)."""
    return (cache_dir() / f"{prefix}_{digest(source)}.{what}.ok").exists()


def compiled_once(module, what):
    m = marker(module, what)
    return m is not None and m.exists()


class FirstCall:
    """Wraps a Numba dispatcher until its first call, announcing a cold compile.

    After the first call the owner replaces the wrapper by the dispatcher itself, so steady
    state pays nothing. ``describe`` says what is compiled, for the notice.
    """

    def __init__(self, module, what, describe):
        self.module, self.what, self.describe = module, what, describe

    def __call__(self, *args):
        fn = getattr(self.module, self.what)
        cold = not compiled_once(self.module, self.what)
        if cold:
            notice(f"compiling {self.describe} (once; cached in {cache_dir()})")
        t0 = time.perf_counter()
        try:
            out = fn(*args)
        except Exception as e:  # a corrupted Numba cache entry: drop it and compile again
            if not _numba_cache_error(e):
                raise
            notice(f"the cached {self.describe} was corrupted; compiling it again")
            _drop_numba_cache(self.module)
            out = fn(*args)
        seconds = time.perf_counter() - t0
        if seconds > NOTICE_SECONDS and not cold and _compiled_now(fn):
            notice(f"compiled {self.describe} in {seconds:.1f} s (cached in {cache_dir()})")
        m = marker(self.module, self.what)
        if m is not None and not m.exists():
            try:
                m.write_text(f"{seconds:.3f}\n")
            except OSError:
                pass
        return out


def _compiled_now(fn):
    """Whether the Numba dispatcher ``fn`` compiled (missed its disk cache) in this process:
    a slow load from the cache on a busy machine is not a compile to announce."""
    stats = getattr(fn, "stats", None)
    misses = getattr(stats, "cache_misses", None)
    return True if misses is None else sum(misses.values()) > 0


def _numba_cache_error(e):
    """Whether ``e`` was raised while Numba read its on-disk cache (a corrupted entry)."""
    tb = e.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename.replace("\\", "/")
        if name.endswith("numba/core/caching.py"):
            return True
        tb = tb.tb_next
    return False


def _drop_numba_cache(module):
    """Delete Numba's index and data files of ``module`` so that it compiles afresh."""
    path = getattr(module, "__jittape_path__", None)
    if path is None:
        return
    roots = [path.parent / "__pycache__"]
    if os.environ.get("NUMBA_CACHE_DIR"):
        roots.append(Path(os.environ["NUMBA_CACHE_DIR"]))
    for root in roots:
        for f in root.rglob(f"{path.stem}*.nb*") if root.exists() else ():
            f.unlink(missing_ok=True)

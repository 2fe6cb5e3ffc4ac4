"""The compile cache is data, not code, unless it is yours.

Loading Numba's cached machine code unpickles its index (``.nbi``) and links its object
files (``.nbc``): whoever can write them runs code in the next process that loads them. So,
as ssh does with its keys, jittape loads compiled artifacts only from cache directories that
belong to the current user and that no one else can write (:func:`untrusted`), and only
files of the module being loaded that are the user's (:func:`foreign_files`); otherwise the
module compiles in memory, with one notice naming the directory and the fix. Generated
Python is never imported through a ``.pyc``: :func:`exec_source` runs the source text jittape
has just generated (and compared with the file, whose name is its hash), through bytecode
bound to that text's hash.

Where a platform has no owners (``os.getuid`` missing: Windows), nothing is checked.
"""

import hashlib
import importlib.util
import marshal
import os
import sys
import types
from pathlib import Path

#: Permission bits that let others than the owner change a directory's entries.
_OTHERS_WRITE = 0o022


def numba_root():
    """Where Numba keeps the machine code of the generated modules: ``NUMBA_CACHE_DIR``
    when set, else ``__pycache__`` beside them (Numba's own rule, ``numba.core.caching``)."""
    env = os.environ.get("NUMBA_CACHE_DIR")
    return Path(env) if env else None


def untrusted(directory):
    """Why ``directory`` may not hold code this process loads (a sentence), or None: it
    must be owned by this user and writable by no one else. A missing directory is created
    readable by its owner alone."""
    if not hasattr(os, "getuid"):
        return None
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = directory.stat()
    except OSError:
        return None  # not writable: the caller's in-memory fallback deals with it
    if st.st_uid != os.getuid():
        return f"it belongs to user id {st.st_uid}, not to this user ({os.getuid()})"
    if st.st_mode & _OTHERS_WRITE:
        return f"others can write to it (mode {st.st_mode & 0o777:o})"
    return None


def foreign_files(path):
    """The files of the generated module at ``path`` (its source, Numba's index and data
    files of it) that are not this user's own or that others may write, if any; a file in
    a directory that others cannot even enter (mode ``0o700``) may be group-writable."""
    if not hasattr(os, "getuid"):
        return []
    numba_dir = _numba_dir(path)
    files = _files_of(path.parent, path.stem) + (  # (the .py too)
        _files_of(numba_dir, path.stem) if numba_dir != numba_root()
        else list(numba_dir.rglob(f"{path.stem}.*")))
    private = _private(path.parent)
    bad = []
    for f in files:
        try:
            st = f.stat()
        except OSError:
            continue
        if st.st_uid != os.getuid() or (st.st_mode & _OTHERS_WRITE and not private):
            bad.append(f)
    return bad


_listed = {}  # directory -> {module stem: [its files]}, as first seen in this process


def _files_of(directory, stem):
    """The files ``<stem>.*`` of ``directory``. Each directory is listed once per process
    (a module load must not list the cache again: thousands of entries, milliseconds each
    time); files added later are this user's own, since only this user can write to the
    directories (:func:`untrusted`, checked first)."""
    if directory not in _listed:
        found = {}
        try:
            with os.scandir(directory) as entries:
                for e in entries:
                    found.setdefault(e.name.split(".", 1)[0], []).append(e.name)
        except OSError:
            pass
        _listed[directory] = found
    return [directory / name for name in _listed[directory].get(stem, ())]


def _numba_dir(path):
    """The directory of Numba's index and data files of the module at ``path``: Numba's
    own rule (``numba.core.caching``: ``__pycache__`` beside it, or a subdirectory of
    ``NUMBA_CACHE_DIR`` named after the module's directory), found by Numba's locator; if
    Numba renamed it, the whole ``NUMBA_CACHE_DIR`` (then searched as a tree)."""
    root = numba_root()
    if root is None:
        return path.parent / "__pycache__"
    try:
        from numba.core.caching import _CacheLocator
        return root / _CacheLocator.get_suitable_cache_subpath(str(path))
    except (ImportError, AttributeError):
        return root


def _private(directory):
    try:
        st = directory.stat()
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & 0o077


def exec_source(name, path, source):
    """A new module ``name`` run from ``source`` (the text of the file ``path``, which
    Numba's cache locates by the functions' ``co_filename``). Python's ``.pyc`` files are
    never read or written (a planted one is never run); the bytecode is kept beside the
    module in a file of jittape's own (:func:`code_file`), used only when it begins with the
    SHA-256 of ``source`` and this interpreter's magic number, and only from a cache that
    proved to be the user's (:func:`untrusted`, :func:`foreign_files`): compiling the source
    of the sweeps of every op takes 70 ms a process, loading its bytecode 0.5 ms."""
    module = types.ModuleType(name)
    module.__file__ = str(path)
    exec(_code(path, source), module.__dict__)
    return module


def code_file(path):
    """Where the bytecode of the generated module at ``path`` is kept."""
    return path.with_name(f"{path.stem}.{sys.implementation.cache_tag}.code")


def _code(path, source):
    key = hashlib.sha256(source.encode()).digest() + importlib.util.MAGIC_NUMBER
    cached = code_file(path)
    try:
        data = cached.read_bytes()
        if data[:len(key)] == key:
            return marshal.loads(data[len(key):])
    except (OSError, ValueError, EOFError, TypeError):
        pass  # absent or damaged: compiled again and rewritten
    code = compile(source, str(path), "exec")
    try:
        write_atomic(cached, key + marshal.dumps(code))
    except OSError:
        pass
    return code


def write_atomic(path, data):
    """Replace ``path``'s content by ``data`` (bytes or text): other processes see the old
    file or the new one, never a part. Raises ``OSError``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    if isinstance(data, bytes):
        tmp.write_bytes(data)
    else:
        tmp.write_text(data)
    os.replace(tmp, path)

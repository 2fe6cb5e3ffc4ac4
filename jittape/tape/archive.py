"""Bounded reading of a tape file's ``.npz`` archive.

Only the members the format defines are read (an unknown or repeated member is refused), and
each member's size is checked against its own ``.npy`` header before a byte of its data is
read: the header gives the shape and dtype, hence the exact size the data must have. The
members' declared sizes together may not exceed :data:`MAX_RATIO` times the archive's own
size (``np.savez`` stores members uncompressed: 1x), so a small file cannot make the reader
decompress gigabytes. Object dtypes are refused (no pickle is ever read). Every failure is a
:class:`jittape.TapeFormatError`. Format: NumPy's NEP 1 (``numpy.lib.format``).
"""

import os
import tokenize
import zipfile
import zlib

import numpy as np
from numpy.lib import format as npy

from .._base.errors import TapeFormatError

#: Declared member bytes allowed per byte of the archive (a deflated archive of a tape's
#: columns compresses them a few times; a zip bomb thousands of times).
MAX_RATIO = 64
_READ_ERRORS = (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, TypeError,
                KeyError, MemoryError, NotImplementedError, OverflowError, SyntaxError,
                tokenize.TokenError)  # (the last two: NumPy parses a .npy header as Python)


def read_members(path, names, marker="magic"):
    """``{name: ndarray}`` of the members ``names`` (without ``.npy``) found in the archive
    at ``path`` (a path or a binary file object). Absent members are left out (the caller
    says which it needs); an archive without the ``marker`` member is no tape file.

    Raises
    ------
    TapeFormatError
        Not a zip archive, an unknown or repeated member, a member whose size disagrees
        with its header, sizes over the bound, an object dtype, a damaged member."""
    allowed = {f"{n}.npy": n for n in names}
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            if f"{marker}.npy" not in {i.filename for i in infos}:
                raise TapeFormatError(f"{path} is not a jittape tape (no '{marker}' member)")
            _check_names(infos, allowed, path)
            budget = MAX_RATIO * max(_archive_bytes(path), 1 << 16)
            if sum(i.file_size for i in infos) > budget:
                raise TapeFormatError(f"{path}: its members declare "
                                      f"{sum(i.file_size for i in infos)} bytes, over "
                                      f"{budget} for an archive of its size")
            return {allowed[i.filename]: _read_array(zf, i, path) for i in infos}
    except TapeFormatError:
        raise
    except _READ_ERRORS as e:
        raise TapeFormatError(f"{path} is not a readable tape archive "
                              f"({type(e).__name__}: {e})") from None


def _check_names(infos, allowed, path):
    seen = set()
    for info in infos:
        if info.filename not in allowed:
            raise TapeFormatError(f"{path}: unknown member {info.filename!r} (a tape file "
                                  f"holds only {', '.join(sorted(allowed))})")
        if info.filename in seen:
            raise TapeFormatError(f"{path}: member {info.filename!r} appears twice")
        seen.add(info.filename)


def _archive_bytes(path):
    if isinstance(path, (str, os.PathLike)):
        return os.path.getsize(path)
    here = path.tell()
    end = path.seek(0, os.SEEK_END)
    path.seek(here)
    return end


def _read_array(zf, info, path):
    """The array of member ``info``, its data read only once its header proved the size."""
    with zf.open(info) as f:
        version = npy.read_magic(f)
        header = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        shape, fortran, dtype = header(f)
        if dtype.hasobject:
            raise TapeFormatError(f"{path}: member {info.filename!r} holds Python objects")
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if count < 0 or f.tell() + count * dtype.itemsize != info.file_size:
            raise TapeFormatError(f"{path}: member {info.filename!r} is {info.file_size} "
                                  f"bytes, its header says {shape} of {dtype}")
        data = f.read(count * dtype.itemsize)
    arr = np.frombuffer(data, dtype=dtype, count=count)
    return arr.reshape(shape, order="F" if fortran else "C").copy()

"""Tapes as data: save to and read from ``.npz`` files, with full validation on reading.

A loaded tape is swept by Numba kernels that do no bounds checking, so :func:`read` checks every
record before accepting the file: opcodes in range, operands recorded earlier, value offsets
increasing, and every index, pool layout and size consistent with the records it refers to
(elementwise records by kind, structured ones by their op entry's ``check``). A file that fails
any check raises :class:`TapeFormatError`, never a crash in the sweep. Loading uses
``np.load(allow_pickle=False)``: no code from the file is run.
"""

import numpy as np

from .._base.errors import TapeFormatError
from ..optable.table import BY_NAME, OPS, codes
from ..optable.entry import BINARY, CALL, COMPARE, LEAF, REGION, SELECT, STRUCTURED, TERNARY, UNARY
from .archive import read_members
from .arrays import TapeArrays
from .v1_opcodes import V1_NAMES

MAGIC = "jittape-tape"
#: Version 2 stores the names of the ops it uses (``opnames``) and opcodes as positions in
#: that list, so a file means the same program whatever the op table's order; version 1
#: stored opcodes of the table itself (read through :data:`V1_NAMES`).
VERSION = 2
_COLUMNS = ("op", "a", "b", "k", "c", "off", "pool", "val")
#: Every member of a tape file (``save`` writes them all; ``read`` refuses any other).
_MEMBERS = ("magic", "version", "opnames") + _COLUMNS + (
    "inputs", "shape_ids", "shape_dims", "shape_data", "out", "out_shape", "out_value")


def save(tape, path):
    """Write ``tape`` (a :class:`jittape.Tape`) to ``path`` in NumPy's ``.npz`` format."""
    t = tape.arrays
    shaped = sorted(t.shapes)
    dims = [len(t.shapes[i]) for i in shaped]
    out_value = np.asarray(0.0 if tape.out_value is None else tape.out_value, dtype=np.float64)
    used, op = np.unique(t.op, return_inverse=True)
    columns = {name: getattr(t, name) for name in _COLUMNS}
    columns["op"] = op.astype(np.int32)
    np.savez(path, magic=np.array(MAGIC), version=np.array(VERSION),
             opnames=np.array([OPS[c].name for c in used.tolist()], dtype=str), **columns,
             inputs=np.asarray(t.inputs, dtype=np.int64),
             shape_ids=np.asarray(shaped, dtype=np.int64),
             shape_dims=np.asarray(dims, dtype=np.int64),
             shape_data=np.asarray([d for i in shaped for d in t.shapes[i]], dtype=np.int64),
             out=np.array([tape.out_id, int(tape.single)], dtype=np.int64),
             out_shape=np.asarray(tape.out_shape, dtype=np.int64), out_value=out_value)


def read(path):
    """Read and validate a tape file: ``(arrays, out_id, out_shape, out_value, single)``,
    the arguments of :class:`jittape.Tape` (:func:`jittape.load` builds it).

    Raises
    ------
    TapeFormatError
        The file is not a jittape tape, has another format version, or is corrupted
        (nothing else escapes: the archive is read by :func:`jittape.tape.archive.read_members`,
        bounded, and every record is validated before a sweep may run).
    """
    try:
        return _read(path)
    except TapeFormatError:
        raise
    except (ValueError, TypeError, IndexError, OverflowError, MemoryError) as e:
        raise TapeFormatError(f"{path}: corrupted tape ({type(e).__name__}: {e})") from None


def _read(path):
    data = read_members(path, _MEMBERS)
    if str(data.get("magic", "")) != MAGIC:
        raise TapeFormatError(f"{path} is not a jittape tape (no '{MAGIC}' marker)")
    version = data.get("version", np.array(-1))
    if version.dtype.kind not in "iu" or version.shape != () or int(version) not in (1, 2):
        raise TapeFormatError(f"{path} has tape format version {version}; this jittape reads "
                              f"versions 1 and {VERSION}")
    try:
        dtypes = dict(op=np.int32, a=np.int32, b=np.int32, k=np.int32, c=np.float64,
                      off=np.int64, pool=np.int64, val=np.float64)
        cols = {}
        for name, dt in dtypes.items():
            arr = data[name]
            if arr.dtype != dt or arr.ndim != 1:
                raise TapeFormatError(f"column {name!r} must be a 1-D {np.dtype(dt)} array")
            cols[name] = np.ascontiguousarray(arr)
        for name in ("inputs", "shape_ids", "shape_dims", "shape_data", "out", "out_shape"):
            if data[name].dtype != np.int64 or data[name].ndim != 1:
                raise TapeFormatError(f"member {name!r} must be a 1-D int64 array")
        ids, dims, flat = data["shape_ids"], data["shape_dims"], data["shape_data"]
        if len(ids) != len(dims) or dims.sum() != len(flat) or (dims < 0).any() or \
                len(np.unique(ids)) != len(ids):
            raise TapeFormatError("inconsistent shape table")
        shapes, pos = {}, 0
        for i, d in zip(ids.tolist(), dims.tolist()):
            shapes[i] = tuple(flat[pos:pos + d].tolist())
            pos += d
        out_id, single = (int(v) for v in data["out"])
        out_shape = tuple(int(v) for v in data["out_shape"])
        inputs = [int(i) for i in data["inputs"]]
        out_value = data["out_value"]
    except KeyError as e:
        raise TapeFormatError(f"{path} lacks the entry {e}") from None
    cols["op"] = _opcodes(cols["op"], _names(data, int(version)))
    arrays = TapeArrays(cols["op"], cols["a"], cols["b"], cols["k"], cols["c"], cols["off"],
                        cols["pool"], cols["val"], shapes, inputs)
    validate(arrays, out_id, out_shape)
    return (arrays, out_id, out_shape, float(out_value) if out_value.ndim == 0 else out_value,
            bool(single))


def opcodes(members):
    """Today's opcodes of a tape file's records, from its ``members`` (``{name: ndarray}``,
    as ``np.load`` gives them): the ``op`` column mapped through the file's op names.
    Raises :class:`TapeFormatError` as :func:`read` does."""
    return _opcodes(members["op"], _names(members, int(members["version"])))


def _names(data, version):
    """The op names a file's opcodes index: its own ``opnames`` (version 2), or the frozen
    version-1 table."""
    if version == 1:
        if "opnames" in data:
            raise TapeFormatError("a version-1 tape has no member 'opnames'")
        return V1_NAMES
    if "opnames" not in data:
        raise TapeFormatError("a version-2 tape lacks the member 'opnames'")
    names = data["opnames"]
    if names.dtype.kind != "U" or names.ndim != 1 or len(names) > len(OPS):
        raise TapeFormatError("'opnames' must be a 1-D array of at most "
                              f"{len(OPS)} op names")
    names = names.tolist()
    if len(set(names)) != len(names):
        raise TapeFormatError("'opnames' names an op twice")
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        raise TapeFormatError(f"the tape uses op(s) {', '.join(map(repr, unknown))}, unknown to "
                              f"this jittape (saved by a newer version?)")
    return names


def _opcodes(op, names):
    """Today's opcodes of a file's ``op`` column, whose entries index ``names``."""
    bad = (op < 0) | (op >= len(names))
    if bad.any():
        _fail(int(np.argmax(bad)), f"field op: {int(op[np.argmax(bad)])} names no op of the "
                                   f"file's {len(names)}")
    today = np.array([BY_NAME[n].code if n in BY_NAME else -1 for n in names] + [-1],
                     dtype=np.int32)[op]
    if (today < 0).any():  # (version 1 only: its table names an op this jittape lacks)
        i = int(np.argmax(today < 0))
        _fail(i, f"field op: op {names[op[i]]!r} is unknown to this jittape")
    return today


def _fail(i, why):
    raise TapeFormatError(f"corrupted tape: record {i}: {why}")


def _kinds(op):
    return np.array([o.kind for o in OPS] + ["?"])[np.clip(op, -1, len(OPS))]


def validate(t, out_id=-1, out_shape=()):
    """Check that the sweeps can run over ``t`` (a TapeArrays) without reading out of bounds.

    Elementwise records are checked by kind, structured ones (and the regions and calls of
    custom rules) by their op's own ``check``.
    Raises :class:`TapeFormatError` naming the first bad record.
    """
    n = len(t.op)
    if not (len(t.a) == len(t.b) == len(t.k) == len(t.c) == n and len(t.off) == n + 1):
        raise TapeFormatError("corrupted tape: columns have different lengths")
    if n == 0 or t.off[0] != 0 or t.off[-1] != len(t.val):
        raise TapeFormatError("corrupted tape: value offsets do not span the value buffer")
    down = t.off[1:] < t.off[:-1]  # compared, not subtracted: offsets of 2**63 - 1 overflow
    if down.any():
        _fail(int(np.argmax(down)), "negative size")
    size = np.diff(t.off)  # (every offset now lies in [0, len(val)]: no overflow)
    op = t.op
    if ((op < 0) | (op >= len(OPS))).any():
        _fail(int(np.argmax((op < 0) | (op >= len(OPS)))), "unknown opcode")
    kind = _kinds(op)
    _check_operands(t, n, kind, size)
    for i in np.flatnonzero(np.isin(kind, [STRUCTURED, REGION, CALL])).tolist():
        sa = int(size[t.a[i]]) if t.a[i] >= 0 else 0
        sb = int(size[t.b[i]]) if t.b[i] >= 0 else 0
        why = OPS[int(op[i])].check(t, i, int(size[i]), sa, sb)
        if why:
            _fail(i, why)
    _check_outputs(t, n, out_id, out_shape, size)


def _check_operands(t, n, kind, size):
    """Operands are earlier records, and elementwise operand sizes fit the result's."""
    ids = np.arange(n)
    arity = np.array([OPS[c].arity for c in t.op.tolist()])
    three = np.isin(kind, [SELECT, TERNARY])  # the third operand's id in k
    for name, col, needed in (("a", t.a, (kind != LEAF) & (arity != 0)),
                              ("b", t.b, (arity == 2) | three),
                              ("k", t.k, three)):
        bad = needed & ((col < 0) | (col >= ids))
        if bad.any():
            _fail(int(np.argmax(bad)), f"operand {name} is not an earlier record")
    for name, col in (("a", t.a), ("b", t.b)):  # every sweep reads off[a], off[b] if >= 0
        bad = (col < -1) | (col >= ids)
        if bad.any():
            _fail(int(np.argmax(bad)), f"operand {name} is neither -1 nor an earlier record")
    bad = (kind != LEAF) & (arity == 0) & (t.a != -1)  # no operand: the sweeps read none
    if bad.any():
        _fail(int(np.argmax(bad)), "a record without operands names one")
    if len(t.pool) and ((t.pool < -(2 ** 40)) | (t.pool > 2 ** 40)).any():
        raise TapeFormatError("corrupted tape: integer pool out of range")
    sa = np.where(t.a >= 0, size[np.clip(t.a, 0, n - 1)], 0)
    sb = np.where(t.b >= 0, size[np.clip(t.b, 0, n - 1)], 0)
    sq = np.where(three, size[np.clip(t.k, 0, n - 1)], 1)
    bad = (kind == UNARY) & (sa != size)
    if bad.any():
        _fail(int(np.argmax(bad)), "operand size differs from the result's")
    fits = lambda s: (s == size) | (s == 1)  # noqa: E731  (size-1 operands broadcast)
    bad = np.isin(kind, [BINARY, COMPARE, SELECT, TERNARY]) & ~(fits(sa) & fits(sb) & fits(sq))
    if bad.any():
        _fail(int(np.argmax(bad)), "operand sizes do not broadcast to the result's")


def _check_outputs(t, n, out_id, out_shape, size):
    if not t.inputs or len(set(t.inputs)) != len(t.inputs):
        raise TapeFormatError("corrupted tape: 'inputs' is empty or names a record twice")
    for i in t.inputs:
        if not (0 <= i < n and t.op[i] == codes.INPUT):
            raise TapeFormatError(f"corrupted tape: input {i} is not an INPUT record")
    if out_id >= n or out_id < -1:
        raise TapeFormatError("corrupted tape: output record out of range")
    if out_id >= 0 and int(np.prod(out_shape)) != size[out_id]:
        raise TapeFormatError("corrupted tape: output shape does not match its record")
    for i, shp in t.shapes.items():
        if not 0 <= i < n or min(shp, default=0) < 0 or int(np.prod(shp)) != size[i]:
            raise TapeFormatError(f"corrupted tape: shape of record {i} does not match")
    unshaped = (size != 1) & ~np.isin(np.arange(n), list(t.shapes))
    if unshaped.any():  # (a record without a shape is a scalar: one value)
        _fail(int(np.argmax(unshaped)), f"{int(size[np.argmax(unshaped)])} values and no shape")

"""Tapes as data: save to and load from ``.npz`` files, with full validation on load.

A loaded tape is swept by Numba kernels that do no bounds checking, so :func:`load` checks
every record before accepting the file: opcodes in range, operands recorded earlier, value
offsets increasing, and every index, pool layout and size consistent with the records it
refers to. A file that fails any check raises :class:`TapeFormatError`, never a crash in
the sweep. Loading uses ``np.load(allow_pickle=False)``: no code from the file is run.
"""

import numpy as np

from . import sweeps as K
from .errors import TapeFormatError
from .tape import TapeArrays

MAGIC = "jittape-tape"
VERSION = 1
_COLUMNS = ("op", "a", "b", "k", "c", "off", "pool", "val")


def save(tape, path):
    """Write ``tape`` (a :class:`jittape.Tape`) to ``path`` in NumPy's ``.npz`` format."""
    t = tape.arrays
    shaped = sorted(t.shapes)
    dims = [len(t.shapes[i]) for i in shaped]
    out_value = np.asarray(0.0 if tape.out_value is None else tape.out_value, dtype=np.float64)
    np.savez(path, magic=np.array(MAGIC), version=np.array(VERSION),
             **{name: getattr(t, name) for name in _COLUMNS},
             inputs=np.asarray(t.inputs, dtype=np.int64),
             shape_ids=np.asarray(shaped, dtype=np.int64),
             shape_dims=np.asarray(dims, dtype=np.int64),
             shape_data=np.asarray([d for i in shaped for d in t.shapes[i]], dtype=np.int64),
             out=np.array([tape.out_id, int(tape.single)], dtype=np.int64),
             out_shape=np.asarray(tape.out_shape, dtype=np.int64), out_value=out_value)


def load(path):
    """Load a tape written by :meth:`jittape.Tape.save`.

    Raises
    ------
    TapeFormatError
        The file is not a jittape tape, has another format version, or is corrupted.
    """
    from .replay import Tape

    try:
        with np.load(path, allow_pickle=False) as z:
            data = {name: z[name] for name in z.files}
    except (OSError, ValueError, EOFError) as e:
        raise TapeFormatError(f"{path} is not a readable .npz file: {e}") from None
    if str(data.get("magic", "")) != MAGIC:
        raise TapeFormatError(f"{path} is not a jittape tape (no '{MAGIC}' marker)")
    if int(data.get("version", -1)) != VERSION:
        raise TapeFormatError(f"{path} has tape format version {data.get('version')}; this "
                              f"jittape reads version {VERSION}")
    try:
        dtypes = dict(op=np.int32, a=np.int32, b=np.int32, k=np.int32, c=np.float64,
                      off=np.int64, pool=np.int64, val=np.float64)
        cols = {}
        for name, dt in dtypes.items():
            arr = data[name]
            if arr.dtype != dt or arr.ndim != 1:
                raise TapeFormatError(f"column {name!r} must be a 1-D {np.dtype(dt)} array")
            cols[name] = np.ascontiguousarray(arr)
        ids, dims, flat = data["shape_ids"], data["shape_dims"], data["shape_data"]
        if len(ids) != len(dims) or dims.sum() != len(flat) or (dims < 0).any():
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
    arrays = TapeArrays(cols["op"], cols["a"], cols["b"], cols["k"], cols["c"], cols["off"],
                        cols["pool"], cols["val"], shapes, inputs)
    validate(arrays, out_id, out_shape)
    return Tape(arrays, out_id, out_shape, float(out_value) if out_value.ndim == 0 else
                out_value, bool(single))


def _fail(i, why):
    raise TapeFormatError(f"corrupted tape: record {i}: {why}")


def validate(t, out_id=-1, out_shape=()):
    """Check that the sweeps can run over ``t`` (a TapeArrays) without reading out of bounds.

    Raises :class:`TapeFormatError` naming the first bad record.
    """
    n = len(t.op)
    if not (len(t.a) == len(t.b) == len(t.k) == len(t.c) == n and len(t.off) == n + 1):
        raise TapeFormatError("corrupted tape: columns have different lengths")
    if n == 0 or t.off[0] != 0 or t.off[-1] != len(t.val):
        raise TapeFormatError("corrupted tape: value offsets do not span the value buffer")
    size = np.diff(t.off)
    if (size < 0).any():
        _fail(int(np.argmax(size < 0)), "negative size")
    op = t.op
    if ((op < 0) | (op >= K.NUM_OPCODES)).any():
        _fail(int(np.argmax((op < 0) | (op >= K.NUM_OPCODES))), "unknown opcode")
    ids = np.arange(n)
    kind = K.KIND[op]
    leaf = kind == K.LEAF
    binary = (kind == K.BINARY) | (kind == K.COMPARE)
    for name, col, needed in (("a", t.a, ~leaf),
                              ("b", t.b, binary | (op == K.WHERE) | (op == K.MATMUL)
                               | (op == K.SOLVE))):
        bad = needed & ((col < 0) | (col >= ids))
        if bad.any():
            _fail(int(np.argmax(bad)), f"operand {name} is not an earlier record")
    if len(t.pool) and ((t.pool < -(2 ** 40)) | (t.pool > 2 ** 40)).any():
        raise TapeFormatError("corrupted tape: integer pool out of range")
    sa = np.where(t.a >= 0, size[np.clip(t.a, 0, n - 1)], 0)
    sb = np.where(t.b >= 0, size[np.clip(t.b, 0, n - 1)], 0)
    bad = (kind == K.UNARY) & (sa != size)
    if bad.any():
        _fail(int(np.argmax(bad)), "operand size differs from the result's")
    bad = binary & (((sa != size) & (sa != 1)) | ((sb != size) & (sb != 1)))
    if bad.any():
        _fail(int(np.argmax(bad)), "operand sizes do not broadcast to the result's")
    for i in np.flatnonzero(kind == K.OTHER).tolist():
        _check_record(t, i, int(op[i]), int(size[i]), int(sa[i]), int(sb[i]))
    for i in t.inputs:
        if not (0 <= i < n and op[i] == K.INPUT):
            raise TapeFormatError(f"corrupted tape: input {i} is not an INPUT record")
    if out_id >= n or out_id < -1:
        raise TapeFormatError("corrupted tape: output record out of range")
    if out_id >= 0 and int(np.prod(out_shape)) != size[out_id]:
        raise TapeFormatError("corrupted tape: output shape does not match its record")
    for i, shp in t.shapes.items():
        if not 0 <= i < n or int(np.prod(shp)) != size[i]:
            raise TapeFormatError(f"corrupted tape: shape of record {i} does not match")


def _pool(t, i, p, count):
    if p < 0 or p + count > len(t.pool):
        _fail(i, "pool offset out of range")
    return t.pool[p:p + count]


def _check_record(t, i, opc, n, sa, sb):
    k = int(t.k[i])
    if opc == K.WHERE:
        if not 0 <= k < i:
            _fail(i, "condition is not an earlier record")
        sq = int(t.off[k + 1] - t.off[k])
        if any(s not in (1, n) for s in (sa, sb, sq)):
            _fail(i, "operand sizes do not broadcast")
    elif opc == K.SLICE:
        if k < 0 or k + n > sa:
            _fail(i, "slice out of range")
    elif opc == K.GATHER:
        idx = _pool(t, i, k, n)
        if n and (idx.min() < 0 or idx.max() >= sa):
            _fail(i, "gather index out of range")
    elif opc == K.CONCAT:
        head = _pool(t, i, k, 2)
        nparts, outer = int(head[0]), int(head[1])
        if nparts < 1 or outer < 0:
            _fail(i, "bad concat layout")
        parts = _pool(t, i, k + 2, 2 * nparts).reshape(nparts, 2)
        total = 0
        for rid, w in parts.tolist():
            if not 0 <= rid < i or w < 0 or outer * w != t.off[rid + 1] - t.off[rid]:
                _fail(i, "concat part does not match its record")
            total += outer * w
        if total != n:
            _fail(i, "concat size mismatch")
    elif opc in (K.SUM, K.PROD, K.MAX, K.MIN, K.ARGMAX, K.ARGMIN):
        outer, m, inner = (int(v) for v in _pool(t, i, k, 3))
        if min(outer, m, inner) < 0 or outer * m * inner != sa or outer * inner != n or \
                (m == 0 and opc != K.SUM and opc != K.PROD):
            _fail(i, "reduction layout does not match the operand")
    elif opc in (K.CUMSUM, K.CUMPROD, K.SORT):
        outer, m, inner = (int(v) for v in _pool(t, i, k, 3))
        if min(outer, m, inner) < 0 or outer * m * inner != sa or \
                n != (2 * sa if opc == K.SORT else sa):
            _fail(i, "scan layout does not match the operand")
        if opc == K.SORT:  # the stored permutation is read back as indices
            perm = t.val[t.off[i] + sa:t.off[i] + n]
            if len(perm) and (perm.min() < 0 or perm.max() >= max(m, 1)):
                _fail(i, "sort permutation out of range")
    elif opc == K.MATMUL:
        m, kk, nn, batch = (int(v) for v in _pool(t, i, k, 4))
        if min(m, kk, nn, batch) < 0 or batch * m * kk != sa or batch * kk * nn != sb or \
                batch * m * nn != n:
            _fail(i, "matmul layout does not match the operands")
    elif opc in (K.INV, K.SOLVE, K.SLOGDET, K.CHOLESKY, K.EIGH):
        nn, m = (int(v) for v in _pool(t, i, k, 2))
        expect = {K.INV: nn * nn, K.SOLVE: nn * m, K.SLOGDET: 2, K.CHOLESKY: nn * nn,
                  K.EIGH: nn + nn * nn}[opc]
        if nn < 0 or m < 0 or sa != nn * nn or n != expect or \
                (opc == K.SOLVE and sb != nn * m):
            _fail(i, "matrix sizes do not match the record")
    elif opc == K.GUARD:
        if sa != n:
            _fail(i, "guard size differs from its operand's")

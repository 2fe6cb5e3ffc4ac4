"""The Wengert tape: a flat, append-only struct of arrays, one record per operation.

Record ``i`` defines one value ``v_i = phi_i(v_a, v_b)``; leaves (inputs, constants) are
records too, so record id == node id. Columns (meaning in :mod:`jittape.optable.entry`)::

    column  dtype    bytes per record
    op      int32    4
    a       int32    4
    b       int32    4
    k       int32    4
    c       float64  8
    off     int64    8
    val     float64  8 per element
                     --
                     40 bytes for a scalar record, values included

Integer data that array ops need (gather indices, reduction and matmul shapes) goes to one
``int64`` pool, 8 bytes per entry, shared by all records. Adjoints are not stored on the
tape: the reverse sweep allocates them, 8 bytes per element.

While recording, a scalar record is one packed 32-byte entry (op, a, b, k, c and its value)
appended to a ``bytearray``: one ``struct`` pack and one amortised append per record, less
than half the time of appending to seven :class:`array.array` columns. Array values are kept
aside (record id -> bytes). :meth:`Recorder.freeze` turns the entries into the NumPy columns
with a few vectorized copies.

There is no global recording state: each call of :func:`jittape.grad` records into its own
``Recorder`` and every active value carries a reference to it, so two threads can record at
the same time without sharing anything.
"""

import struct
from array import array

import numpy as np

from ..optable.table import OPS, call_arguments
from ..optable.entry import CALL, SELECT

BYTES_PER_SCALAR_RECORD = 4 * 4 + 8 + 8 + 8


#: One recorded entry: op, a, b, k (int32), c and the scalar value (float64); 32 bytes.
ENTRY = struct.Struct("<iiiidd")
ENTRY_DTYPE = np.dtype([("op", "<i4"), ("a", "<i4"), ("b", "<i4"), ("k", "<i4"),
                         ("c", "<f8"), ("v", "<f8")])


class Recorder:
    """An open tape being recorded (packed entries in a :class:`bytearray`)."""

    __slots__ = ("entries", "arrays", "pool", "shapes", "inputs", "first_order", "depth",
                 "has_calls")

    def __init__(self, first_order=False):
        self.entries = bytearray()  # ENTRY per record; an array record's value slot is 0
        self.arrays = {}  # record id -> its value (bytes of float64), for array records
        self.pool = array("q")
        self.shapes = {}  # record id -> shape, for records that are not scalars
        self.inputs = []  # record ids of INPUT records, in argument order
        # only first-order sweeps will run over this tape (an eager gradient), and how many
        # nested derivatives are being recorded on it now (jittape.api.nesting)
        self.first_order, self.depth = first_order, 0
        self.has_calls = False  # a call record was pushed (push_call)

    @property
    def n(self):
        """Number of records so far."""
        return len(self.entries) >> 5

    def push_scalar(self, opc, a, b, k, c, value, _pack=ENTRY.pack):
        """Append a scalar record (``value`` a float); return its id."""
        entries = self.entries
        i = len(entries) >> 5
        entries += _pack(opc, a, b, k, c, value)
        return i

    def push_array(self, opc, a, b, k, c, value):
        """Append a record whose value is the float64 C-contiguous ndarray ``value``."""
        entries = self.entries
        i = len(entries) >> 5
        entries += ENTRY.pack(opc, a, b, k, c, 0.0)
        self.arrays[i] = value.tobytes()  # a copy: the caller may write to value later
        if value.ndim != 0:
            self.shapes[i] = value.shape
        return i

    def push_pool(self, ints):
        """Append integer data to the pool; return its offset (the k of a record)."""
        p = len(self.pool)
        self.pool.frombytes(memoryview(np.ascontiguousarray(ints, dtype=np.int64)).cast("B"))
        return p

    def push_call(self, ints):
        """:meth:`push_pool` for a call record's pool entries (custom rules, nested
        derivatives, checkpoints): the frozen tape then looks for call records."""
        self.has_calls = True
        return self.push_pool(ints)

    def freeze(self):
        """The records as a :class:`TapeArrays` (NumPy arrays, sweep-ready).

        A few whole-buffer copies, whatever the tape's length: an eager gradient freezes
        every tape it records, most of them short."""
        n = len(self.entries) >> 5
        if n == 0:
            ints, c, v = np.zeros((4, 0), np.int32), np.zeros(0), np.zeros(0)
        else:
            ints = np.frombuffer(self.entries, np.int32).reshape(n, 8)[:, :4].T.copy()
            e64 = np.frombuffer(self.entries, np.float64).reshape(n, 4)
            c, v = e64[:, 2].copy(), e64[:, 3].copy()
            del e64  # releases the export of the bytearray
        if not self.arrays:
            off, val = np.arange(n + 1, dtype=np.int64), v
        else:
            off, val = self._values(n, v)
        pool = np.frombuffer(self.pool, dtype=np.int64) if len(self.pool) else \
            np.zeros(0, np.int64)
        t = TapeArrays(ints[0], ints[1], ints[2], ints[3], c, off, pool, val,
                       dict(self.shapes), list(self.inputs))
        if not self.has_calls:
            t.calls = ()  # none to look for (jittape.sweeps.regions.calls)
        return t

    def _values(self, n, v):
        """Offsets and the value buffer: the scalar values between array records, each
        array record's bytes, joined once."""
        ids = sorted(self.arrays)
        sizes = np.ones(n, dtype=np.int64)
        sizes[ids] = [len(self.arrays[i]) >> 3 for i in ids]
        off = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(sizes, out=off[1:])
        scalars, pieces, prev = v.tobytes(), [], 0
        for i in ids:
            pieces.append(scalars[prev << 3:i << 3])
            pieces.append(self.arrays[i])
            prev = i + 1
        pieces.append(scalars[prev << 3:])
        return off, np.frombuffer(bytearray().join(pieces), dtype=np.float64)  # writable


class TapeArrays:
    """A finished tape as NumPy arrays (the layout of :mod:`jittape.tape.arrays`)."""

    __slots__ = ("op", "a", "b", "k", "c", "off", "pool", "val", "shapes", "inputs", "sweeps",
                 "calls", "opd")

    def __init__(self, op, a, b, k, c, off, pool, val, shapes, inputs):
        self.op, self.a, self.b, self.k, self.c, self.off = op, a, b, k, c, off
        self.pool, self.val, self.shapes, self.inputs = pool, val, shapes, inputs
        self.sweeps = None  # the compiled sweeps of this tape's op set, found on first use
        # its custom rules' records (jittape.sweeps.regions.calls), found likewise
        self.calls = None
        self.opd = None  # every record's operands (jittape.optable.registry.operands)

    def __getstate__(self):  # compiled sweeps are machine code: found again after unpickling
        return {s: getattr(self, s) for s in self.__slots__
                if s not in ("sweeps", "calls", "opd")}

    def __setstate__(self, state):
        for name, v in state.items():
            setattr(self, name, v)
        self.sweeps = self.calls = self.opd = None

    @property
    def columns(self):
        """The tape columns in the order the sweeps take them."""
        return self.op, self.a, self.b, self.k, self.c, self.off, self.pool

    @property
    def n_records(self):
        return self.op.shape[0]

    @property
    def nbytes(self):
        """Bytes held by the tape: all columns, the value buffer and the integer pool."""
        return sum(x.nbytes for x in (self.op, self.a, self.b, self.k, self.c, self.off,
                                      self.pool, self.val))

    def shape(self, i):
        return self.shapes.get(i, ())

    def value(self, i):
        """The primal value of record ``i`` (float or ndarray of the record's shape)."""
        v = self.val[self.off[i]:self.off[i + 1]]
        return float(v[0]) if i not in self.shapes else v.reshape(self.shapes[i])

    def format(self, adj=None, names=None, max_elements=3):
        """The tape as text, one line per record: ``v3 = mul(v1, v2)  value  adjoint``.

        ``adj`` is an adjoint buffer from :meth:`reverse`; ``names`` maps record ids to
        labels (e.g. the input names).
        """
        names = names or {}

        def show(buf, i):
            v = buf[self.off[i]:self.off[i + 1]]
            if v.size == 1 and i not in self.shapes:
                return f"{v[0]:.6g}"
            body = ", ".join(f"{x:.4g}" for x in v[:max_elements])
            return f"[{body}{', ...' if v.size > max_elements else ''}]"

        def operation(i):
            opc, a, b = int(self.op[i]), int(self.a[i]), int(self.b[i])
            size = int(self.off[i + 1] - self.off[i])
            spec = OPS[opc]
            if spec.fusion == "slice":  # contiguous indexing reads as indexing
                k = int(self.k[i])
                return f"v{a}[{k}]" if size == 1 and i not in self.shapes else \
                    f"v{a}[{k}:{k + size}]"
            if spec.kind == CALL:  # a custom rule: its function and arguments
                return f"{spec.name} {spec.label(self, i)}(" + ", ".join(
                    f"v{x}" for x in call_arguments(self, i)) + ")"
            args = [f"v{x}" for x in (a, b) if x >= 0]
            if spec.uses_c:
                args.append(f"{self.c[i]:g}")
            if spec.kind == SELECT:  # where(cond, x, y)
                args.insert(0, f"v{int(self.k[i])}")
            elif spec.arity == 3:  # a ternary function's third argument
                args.append(f"v{int(self.k[i])}")
            return f"{spec.name}({', '.join(args)})"

        rows = [(f"v{i}", names.get(i) or operation(i), show(self.val, i),
                 show(adj, i) if adj is not None else "") for i in range(self.n_records)]
        head = ("record", "operation", "value", "adjoint" if adj is not None else "")
        widths = [max(len(r[j]) for r in rows + [head]) for j in range(4)]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
                         for r in [head] + rows)

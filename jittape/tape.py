"""The Wengert tape: a flat, append-only struct of arrays, one record per operation.

Record ``i`` defines one value ``v_i = phi_i(v_a, v_b)``; leaves (inputs, constants) are
records too, so record id == node id. Columns (meaning in :mod:`jittape.optable`)::

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

While recording, the columns are :class:`array.array` buffers: ``append`` is the cheapest
way to grow an array from Python and grows by amortised over-allocation, like a list. The
finished tape is frozen into NumPy arrays that the Numba sweeps read without copying.

There is no global recording state: each call of :func:`jittape.grad` records into its own
``Recorder`` and every active value carries a reference to it, so two threads can record at
the same time without sharing anything.
"""

from array import array

import numpy as np

from .ops import OPS
from .optable import SELECT

BYTES_PER_SCALAR_RECORD = 4 * 4 + 8 + 8 + 8


class Recorder:
    """An open tape being recorded (columns as growable :class:`array.array` buffers)."""

    __slots__ = ("op", "a", "b", "k", "c", "off", "val", "pool", "n", "shapes", "inputs",
                 "_op", "_a", "_b", "_k", "_c", "_off", "_val")

    def __init__(self):
        self.op = array("i")
        self.a = array("i")
        self.b = array("i")
        self.k = array("i")
        self.c = array("d")
        self.off = array("q", [0])
        self.val = array("d")
        self.pool = array("q")
        self.n = 0
        self.shapes = {}  # record id -> shape, for records that are not scalars
        self.inputs = []  # record ids of INPUT records, in argument order
        # bound appends: the recording hot path avoids an attribute lookup per column
        self._op, self._a, self._b = self.op.append, self.a.append, self.b.append
        self._k, self._c, self._off = self.k.append, self.c.append, self.off.append
        self._val = self.val.append

    def push_scalar(self, opc, a, b, k, c, value):
        """Append a scalar record; return its id."""
        self._op(opc)
        self._a(a)
        self._b(b)
        self._k(k)
        self._c(c)
        self._val(value)
        self._off(len(self.val))
        i = self.n
        self.n = i + 1
        return i

    def push_array(self, opc, a, b, k, c, value):
        """Append a record whose value is the float64 C-contiguous ndarray ``value``."""
        self._op(opc)
        self._a(a)
        self._b(b)
        self._k(k)
        self._c(c)
        self.val.frombytes(memoryview(value).cast("B"))
        self._off(len(self.val))
        i = self.n
        self.n = i + 1
        if value.ndim != 0:
            self.shapes[i] = value.shape
        return i

    def push_pool(self, ints):
        """Append integer data to the pool; return its offset (the k of a record)."""
        p = len(self.pool)
        self.pool.frombytes(memoryview(np.ascontiguousarray(ints, dtype=np.int64)).cast("B"))
        return p

    def freeze(self):
        """The columns as a :class:`TapeArrays` (NumPy arrays, sweep-ready).

        The arrays are views of the recording buffers, not copies: a frozen recorder is never
        appended to again (and ``array.array`` refuses to resize while views exist).
        """
        def np_(buf, dtype):
            return np.frombuffer(buf, dtype=dtype) if len(buf) else np.zeros(0, dtype)
        return TapeArrays(np_(self.op, np.int32), np_(self.a, np.int32),
                          np_(self.b, np.int32), np_(self.k, np.int32),
                          np_(self.c, np.float64), np_(self.off, np.int64),
                          np_(self.pool, np.int64), np_(self.val, np.float64),
                          dict(self.shapes), list(self.inputs))


class TapeArrays:
    """A finished tape as NumPy arrays (the layout of :mod:`jittape.tape`)."""

    __slots__ = ("op", "a", "b", "k", "c", "off", "pool", "val", "shapes", "inputs", "sweeps")

    def __init__(self, op, a, b, k, c, off, pool, val, shapes, inputs):
        self.op, self.a, self.b, self.k, self.c, self.off = op, a, b, k, c, off
        self.pool, self.val, self.shapes, self.inputs = pool, val, shapes, inputs
        self.sweeps = None  # the compiled sweeps of this tape's op set, found on first use

    def __getstate__(self):  # compiled sweeps are machine code: found again after unpickling
        return {s: getattr(self, s) for s in self.__slots__ if s != "sweeps"}

    def __setstate__(self, state):
        for name, v in state.items():
            setattr(self, name, v)
        self.sweeps = None

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

    def reverse(self, seed_record, seed=1.0):
        """Run the reverse sweep seeded at ``seed_record``; return the adjoint buffer."""
        adj = np.zeros_like(self.val)
        lo, hi = self.off[seed_record], self.off[seed_record + 1]
        adj[lo:hi] = seed
        sw = self.sweeps
        if sw is None:
            from .sweeps import for_tape  # the layer above: imported when first needed
            sw = for_tape(self)
        sw.reverse_sweep(*self.columns, self.val, adj, seed_record)
        return adj

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

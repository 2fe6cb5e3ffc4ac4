"""The layout half of the tape compiler (:mod:`jittape.compiler.kernel`): which records fuse into
one elementwise loop (:meth:`Layout._partition`), which values need a slot in the kernel's
compact value and adjoint buffers and where (:meth:`Layout._layout`), and which constants
need no adjoint (laid out behind the adjoint buffer, so that it is never zeroed or copied).
What the layout knows of an op is read from the op table (its ``fusion`` and
``elementwise`` fields), never from its name.
"""

import dis

import numpy as np

from ..optable.table import OPS, codes, operands
from .reroll import forwards


class _Kind:
    """The opcodes of the ops that ``pred`` selects, read from the op table when first
    asked and again after ops are registered at run time
    (:func:`jittape.optable.registry.register`)."""

    def __init__(self, pred):
        self.pred, self.n, self.codes = pred, -1, frozenset()

    def __contains__(self, code):
        if self.n != len(OPS):
            self.codes, self.n = frozenset(op.code for op in OPS if self.pred(op)), len(OPS)
        return code in self.codes


# what the compiler needs to know of an op, read from the table (never from its name)
ELEMENTWISE_KIND = _Kind(lambda op: op.elementwise or op.fusion == "slice")
_GATHER = _Kind(lambda op: op.fusion in ("gather", "strided"))  # loads of another size
_SUM = _Kind(lambda op: op.fusion == "sum")
#: join a fused loop as an (indexed) load from the buffer
_LOADS = _Kind(lambda op: op.fusion in ("slice", "gather", "strided"))


def _reads(fn):
    """The local names (arguments included) that function ``fn`` reads."""
    return {ins.argval for ins in dis.get_instructions(fn) if ins.opname.startswith("LOAD_FAST")}


class Layout:
    """Fusion groups and buffer layout of one tape's kernel (a mixin of the compiler's
    generator, which sets ``t``, ``size``, ``consumers`` and the rerolling attributes)."""

    def _operands(self, i):
        return operands(self.t, i)

    def _is_member(self, i, n, cur=()):
        opc = int(self.t.op[i])
        if (opc not in ELEMENTWISE_KIND and opc not in _GATHER) or self.size[i] != n or n <= 1:
            return False
        if opc in _GATHER and int(self.t.a[i]) in cur:
            return False  # a permutation of a record of this loop needs all of it first
        return all(self.size[j] in (1, n) or (opc in _LOADS and j == self.t.a[i])
                   for j in self._operands(i))

    def _partition(self):
        t = self.t
        cur, n = [], 0
        # leaves between members (the 0 of logaddexp(0, x), a data array) and scalar loads of
        # leaves (cmpad llsq's x[i] in `model + x[i] * t ** i`) do not split a loop: they are
        # emitted before everything else (at most a few in a row: far fewer than a rerolled
        # segment covers, so none of them is in one)
        self.hoisted, leaves = [], []
        for i in range(t.n_records):
            if cur and self._is_member(i, n, cur):
                cur.append(i)
                self.hoisted += leaves
                leaves = []
                continue
            if cur and len(leaves) < 8 and self._leaf_like(i):
                leaves.append(i)
                continue
            leaves = []
            fused_sum = -1
            if cur and int(t.op[i]) in _SUM and int(t.a[i]) in cur:
                # a sum over all elements, or over the last axes (rows of a C-ordered
                # operand: the loop nests, one accumulator per row) that something reads
                p = int(t.k[i])
                if int(t.pool[p + 2]) == 1 and (int(t.pool[p]) == 1 or self.consumers[i]):
                    fused_sum = i
            if cur:
                self._close(cur, fused_sum)
                cur = []
            if fused_sum < 0 and self._is_member(i, int(self.size[i])):
                cur, n = [i], int(self.size[i])
        if cur:
            self._close(cur, -1)

    def _leaf_like(self, i):
        """Whether record ``i`` may be emitted before everything else: a constant, a scalar
        input, or a scalar load (a slice) of a leaf."""
        opc = int(self.t.op[i])
        if opc == codes.CONST or (opc == codes.INPUT and self.size[i] == 1):
            return True
        return self.size[i] == 1 and opc in _LOADS and int(self.t.op[self.t.a[i]]) in (
            codes.INPUT, codes.CONST)

    def _layout(self):
        """Compact buffer offsets ``bo`` for the records whose values are read from memory.

        Inputs are read from ``xin`` (and their adjoints accumulated into ``gx``) directly;
        they get a buffer slot too only where a kernel reads them from the buffer.
        """
        t = self.t
        self.bo, self.xp = {}, {}
        pos = 0
        for i in t.inputs:
            self.xp[i] = pos
            pos += int(self.size[i])
        pos = self.njac = 0
        for i in range(t.n_records):
            seg = self.seg_at.get(i)
            if seg is not None:  # stored values: one block of S slots per rep
                pos = self._segment_slots(seg, pos)
            if i in self.seg_of:
                continue
            opc = int(t.op[i])
            if opc == codes.INPUT:
                need = any(self.group_of.get(c) is None and int(t.op[c]) not in ELEMENTWISE_KIND
                           for c in self.consumers[i])
            elif OPS[opc].checks:
                need = self.size[i] > 1  # a scalar guard's expected value is a literal
            elif opc in ELEMENTWISE_KIND or i in self.group_of or opc == codes.CONST:
                need = bool(self._buffer_consumers(i)) or i in self.stored or (
                    opc == codes.CONST and not self._scalar(i))
            else:
                need = True  # computed by a kernel into the buffer
            if need:
                self.bo[i] = pos
                pos += int(self.size[i])
        self.nbuf = pos

    def _constants_last(self):
        """Move the slots of constants that get no adjoint (and of values stored for the
        reverse loops only) behind all others, so that the adjoint buffer (``nadj``
        elements, zeroed per replay) ends before them: a data matrix costs no adjoint memory
        and no zeroing."""
        t = self.t
        tail = {i for i in self.bo if int(t.op[i]) == codes.CONST and self._no_adjoint(i)}
        tail |= {i for i in self.stored if not self._buffer_consumers(i)}  # values only
        pos, bo = 0, {}
        for i in sorted(self.bo, key=lambda i: (i in tail, self.bo[i])):
            bo[i] = pos
            pos += int(self.size[i])
        self.bo = bo
        self.nadj = pos - sum(int(self.size[i]) for i in tail)
        for seg in self.segments:  # a segment's stored slots moved as one block
            slots = self.bodies[seg.body].slots()
            if slots:
                seg.vb = bo[seg.start + slots[0]]

    def _no_adjoint(self, i):
        """Whether no code writes an adjoint of constant ``i``: the generated elementwise
        code skips constants, and an op's kernel is trusted to when its reverse rule reads
        the flag (``ca``, ``cb``) that says its operand is a constant."""
        t = self.t
        for c in self.consumers[i]:
            if c in self.seg_of or (forwards(t, c, self.size) and
                                    any(d in self.seg_of for d in self.consumers[c])):
                return False  # rerolled loops accumulate into every operand they read
            if c in self.group_of or int(t.op[c]) in ELEMENTWISE_KIND:
                continue
            op = OPS[int(t.op[c])]
            if op.arity not in (1, 2):
                return False
            flags = {"ca"} if i == int(t.a[c]) else set()
            flags |= {"cb"} if i == int(t.b[c]) else set()
            if not flags or not (op.reverse is None or flags <= _reads(op.reverse)):
                return False
        return True

    def first_written(self, members):
        """Records whose adjoint a fused loop of ``members`` may write first: every other
        consumer's code runs later in the reverse sweep (its record or loop comes earlier in
        the tape), none reads through a rerolled loop or a forwarded scalar slice, and the
        record has slots in the adjoint buffer (not an input, not a constant)."""
        here, pos = set(members), members[0]
        found, roots = [], {b.root for b in self.biases.values()}  # (added to at a product)
        for r in {j for m in members for j in self._operands(m)} - here:
            if r not in self.bo or r in self.xp or self.is_const(r) or self.size[r] <= 1 or \
                    r in roots:
                continue
            if all(c in here or (c not in self.seg_of and not forwards(self.t, c, self.size)
                                 and self._position(c) < pos) for c in self.consumers[r]):
                found.append(r)
        return found

    def _position(self, c):
        """Where record c's code is emitted: its fused loop's first member, or itself."""
        g = self.group_of.get(c)
        return c if g is None else self.groups[g][0][0]

    def zeroing(self):
        """The lines zeroing the adjoint buffer before the reverse sweep, without the slots
        that fused loops assign first (:meth:`first_written`) or that no code writes (the
        row-broadcast operands of :mod:`jittape.compiler.products`)."""
        keep, a = [], 0
        skip = self.assigned | {b.biased for b in self.biases.values()}
        for r in sorted(skip, key=self.bo.get):
            if self.bo[r] > a:
                keep.append((a, self.bo[r]))
            a = max(a, self.bo[r] + int(self.size[r]))
        if a < self.nadj:
            keep.append((a, self.nadj))
        if not self.nadj:
            return []
        if not skip or len(keep) > 16:  # (a statement each: ~2 ms of compile time)
            return [f"adj[:{self.nadj}] = 0.0  # the adjoints (constants are behind)"]
        return [f"adj[{a}:{b}] = 0.0  # (the others: assigned first, or never written)"
                for a, b in keep]

    def is_const(self, i):
        return int(self.t.op[i]) == codes.CONST

    def initial_values(self):
        """The compact value buffer before a replay: constants and guard values in place."""
        v = np.zeros(self.nbuf)
        for i, b in self.bo.items():
            v[b:b + self.size[i]] = self.t.val[self.t.off[i]:self.t.off[i + 1]]
        return v

    def V(self, i, idx):
        """Where the value of buffer-resident record ``i`` at ``idx`` is read from."""
        if i in self.xp:
            return f"xin[{self.xp[i]} + {idx}]"
        return f"val[{self.bo[i]} + {idx}]"

    def A(self, i, idx):
        """Where the adjoint of buffer-resident record ``i`` at ``idx`` accumulates."""
        if i in self.xp:
            return f"gx[{self.xp[i]} + {idx}]"
        return f"adj[{self.bo[i]} + {idx}]"

    def _close(self, members, fused_sum):
        gid = len(self.groups)
        for m in members:
            self.group_of[m] = gid
        if fused_sum >= 0:
            self.group_of[fused_sum] = gid
        self.groups.append((members, fused_sum))

    def _scalar(self, i):
        """Size-1 records live in locals ``v<i>``/``g<i>`` (group members have size > 1)."""
        return self.size[i] == 1

    def _buffer_consumers(self, i):
        """Consumers that read record i from the value buffer (and so accumulate its adjoint
        in the adjoint buffer) rather than from a local."""
        out = []
        for c in self.consumers[i]:
            if c in self.seg_of:  # a rerolled loop reads its operands through its table
                if not forwards(self.t, i, self.size):  # (a slice: from its array)
                    out.append(c)
                continue
            gc = self.group_of.get(c)
            if self._scalar(i) and (gc is not None or int(self.t.op[c]) in ELEMENTWISE_KIND):
                continue  # elementwise code and fused loops read a scalar as the local v<i>
            if gc is not None and gc == self.group_of.get(i):
                continue  # same fused group: a per-element local
            out.append(c)
        return out

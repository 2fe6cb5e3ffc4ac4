"""Reroll long scalar tapes: repeated record patterns become loops over an index table.

A Python loop over ``x[i]`` records the same few scalar records once per iteration (the
Lennard-Jones pair loop: 18 records per pair, 12,768 records at N = 38). Straight-line
code for such a tape is one statement per record, and Numba's compile time grows with the
length of a function (about 2 ms per statement), so the tape compiler would spend longer
compiling than the interpreter spends replaying. Rerolling finds the *body* of each such
loop in the tape and emits it once, as a Numba loop whose iteration ``r`` reads the
operands that come from outside the body (``x[3*j]``, the running sum of the previous
iteration) through row ``r`` of an integer table of buffer positions. This is the
"rerolling" of decompilers and of trace-compressing JITs; compare the loop recovery of
tracing JITs (Gal et al., "Trace-based just-in-time type specialization for dynamic
languages", PLDI 2009) and CasADi's ``map``/``fold`` of a repeated function.

What may be in a body: scalar (size-1) elementwise records, scalar slices (``x[i]``: the
element's position goes into the table) and scalar constants. Within one *repetition*
(rep) of a body, an operand is *internal* (a record of the same rep, kept in a register)
or *external* (anything earlier: a table column). Two reps match when, position by
position, their records have the same opcode and immediate and their operands the same
classes, internal ones at the same position. A run of matching adjacent reps is a
*segment*; segments of one body share its generated code and differ only in their table.

Values that a rep's record hands to code outside the rep (the running sum, the output) are
*stored* in the compact value buffer, ``S`` slots per rep; their adjoints are read back
from the adjoint buffer by the reverse loop, which recomputes the rep's cheap primals
(additions, multiplications) and reads the others (divisions, calls) from a scratch buffer
that the forward loop filled: the classic choice between storing and recomputing (Griewank
& Walther, "Evaluating Derivatives", 2nd ed., sec. 12.1), made per op from its value
expression (:func:`cheap`).

How a segment's reps read a column is its *mode* (:func:`assign_modes`): per rep from its
table row; once for the whole segment (``x[3*i]`` in the inner loop over j: the adjoint
summed in a register, added once after the loop); from the previous rep in a register (the
running sum; its adjoint handed back likewise); or as an earlier column that reads the same
place (``x[i]`` written twice in the body). Adjacent segments of one body (one per outer
iteration i) are called from one loop over their arguments, so that the kernel holds one
copy of each loop function, whatever the number of segments.
"""

import ast
import bisect

from ..optable.table import OPS, codes, in_regions, operands

#: Tapes with at least this many scalar records are searched for loop bodies to reroll.
REROLL_RECORDS = 64
#: A segment must cover at least this many records, in at least three reps...
MIN_COVER = 32
#: ... with a body of at most this many records.
MAX_BODY = 256
#: Bodies storing at most this many values preaccumulate their partials (:func:`body_source`).
MAX_PREACCUMULATED = 4
#: Column modes (:func:`assign_modes`): a table column read per rep; one read by every rep
#: of a segment at the same place (``FIXED``); ``(CARRY, u)``: rep r > 0 reads the value of
#: position u of rep r - 1 (a running sum); ``(SAME, c)``: every rep reads it where it reads
#: the earlier column c (``x[i]`` written twice in the loop body).
ROW, FIXED, CARRY, SAME = "row", "fixed", "carry", "same"


_CHEAP = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Name, ast.Constant, ast.Load, ast.Add,
          ast.Sub, ast.Mult, ast.USub, ast.UAdd)


def cheap(op):
    """Whether a record of ``op`` is cheaper to recompute than to store and load: a leaf or
    slice, or an elementwise value that only adds, subtracts and multiplies (its table
    expression; a division, a comparison or a call is not cheap)."""
    if not op.elementwise:
        return True
    return all(isinstance(n, _CHEAP) for n in ast.walk(ast.parse(op.value, mode="eval")))


def forwards(t, i, size):
    """Whether record i is a scalar slice ``x[k]`` of an array: a body reading it reads
    (and accumulates the adjoint of) the array's element instead."""
    return size[i] == 1 and OPS[int(t.op[i])].fusion == "slice" and size[int(t.a[i])] > 1


def _resolve(t, j, size):
    """(record, element) where the value of record j lives (through scalar slices)."""
    k = 0
    while forwards(t, j, size):
        j, k = int(t.a[j]), k + int(t.k[j])
    return j, k

def column_kind(m):
    """The kind of column mode ``m``: ``ROW``, ``FIXED``, ``CARRY`` or ``SAME``."""
    return m if isinstance(m, str) else m[0]


class Segment:
    """``reps`` adjacent reps of a body of ``length`` records starting at record ``start``.

    ``body`` is the index of its :class:`Body`; ``vb`` (compact buffer slot of its first
    stored value), ``jb`` (of its first preaccumulated partial in the kernel's scratch
    buffer) and ``tb`` (position of its first table row in the kernel's int array) are set
    by the compiler once the buffers and the table are laid out."""

    __slots__ = ("start", "length", "reps", "body", "vb", "tb", "jb")

    def __init__(self, start, length, reps):
        self.start, self.length, self.reps = start, length, reps
        self.body = self.vb = self.tb = self.jb = -1

    @property
    def stop(self):
        return self.start + self.length * self.reps


class Body:
    """The code shared by the segments of one signature: ``key`` (per position, the record's
    signature and the classes of its operands), ``stored`` (positions whose value leaves
    the rep), ``width`` (table columns: external operands, in position order) and ``modes``
    (per column, how its segments read it: :func:`assign_modes`)."""

    def __init__(self, key, index, modes=None):
        self.key, self.index = key, index
        self.stored = set()
        self.width = sum(1 for _, opd in key for cls in opd if cls[0] != "i")
        self.modes = tuple(modes) if modes is not None else (ROW,) * self.width

    def slots(self):
        return sorted(self.stored)

    @property
    def preacc(self):
        """Whether the forward loop preaccumulates the rep's partials: two to
        :data:`MAX_PREACCUMULATED` stored values, and a record calling a function
        (``math.exp``...). Otherwise the reverse loop recomputes the rep's cheap values and
        reads the others from the forward loop (:meth:`saved`). Measured (gradient kernels,
        preaccumulated vs recomputed with saved values): one stored value, recomputed wins:
        Morse pairs at N = 38 (an exp and a square root each) 13.2 vs 10.7 us, Lennard-Jones
        8.4 vs 6.2 us, loops of softplus, of exp(-p^2) with p a polynomial, of a polynomial
        by 5 to 15%; two running values with an exp and a sin (``_two_sums`` of the tests),
        preaccumulated wins, 12.4 vs 13.4 us."""
        calls = any("math." in OPS[sig[0]].value for sig, _ in self.key
                    if OPS[sig[0]].elementwise)
        return calls and 2 <= len(self.stored) <= MAX_PREACCUMULATED

    def saved(self):
        """Positions whose values the forward loop of a body that is not preaccumulated
        stores in the scratch buffer for the reverse loop, which reads them instead of
        recomputing them: the results of ops that are not cheap (:func:`cheap`). Measured
        on the Lennard-Jones pairs at N = 38 (a division each): the gradient kernel in
        6.2 us instead of 7.2 us, 1.7x hand Numba: the reverse loop's chain of dependent
        operations no longer passes through a division."""
        if self.preacc:
            return []
        return [u for u, (sig, _) in enumerate(self.key) if not cheap(OPS[sig[0]])]

    @property
    def jac_stride(self):
        """Scratch slots per rep: the partials a preaccumulating body stores, the saved
        values of another."""
        return len(self.stored) * len(self.live()) if self.preacc else len(self.saved())

    def columns(self):
        """The operand class of each table column."""
        return [cls for _, opd in self.key for cls in opd if cls[0] != "i"]

    def live(self):
        """The columns that are loaded and get adjoints: all but ``SAME`` ones."""
        return [c for c, m in enumerate(self.modes) if column_kind(m) != SAME]

    def canon(self, c):
        """The column whose load and adjoint column c shares."""
        m = self.modes[c]
        return m[1] if column_kind(m) == SAME else c


class _Tape:
    """Python lists of what the search compares (list indexing beats NumPy's per item)."""

    def __init__(self, t, size):
        n = t.n_records
        self.n = n
        op = t.op.tolist()
        inner = in_regions(t).tolist()  # custom rules' regions: run by their rule, never looped
        self.opd = [operands(t, i) if not inner[i] and self._eligible(t, i, op[i], size) else
                    None for i in range(n)]
        self.kind = ["in" if o == codes.INPUT else "v" for o in op]
        for i in range(n):  # a scalar slice is read where its element lives
            if forwards(t, i, size):
                self.kind[i] = self.kind[int(t.a[i])]
        self.sig = [self._sig(t, i, op[i]) if self.opd[i] is not None else None
                    for i in range(n)]
        self.end = [0] * (n + 1)  # end[i]: first ineligible record at or after i
        self.end[n] = n
        for i in range(n - 1, -1, -1):
            self.end[i] = self.end[i + 1] if self.opd[i] is not None else i
        self.where = {}  # signature -> sorted positions
        for i, s in enumerate(self.sig):
            if s is not None:
                self.where.setdefault(s, []).append(i)

    @staticmethod
    def _eligible(t, i, opc, size):
        if size[i] != 1:
            return False
        op = OPS[opc]
        if opc == codes.CONST:
            return True
        if not op.elementwise and op.fusion != "slice" or op.checks:
            return False
        return op.fusion != "slice" or forwards(t, i, size)

    @staticmethod
    def _sig(t, i, opc):
        if opc == codes.CONST:
            return (opc, float(t.val[t.off[i]]))
        if OPS[opc].fusion == "slice":
            return (opc,)  # the element's position goes into the table
        return (opc, float(t.c[i]), len(operands(t, i)))

    def key(self, s, length):
        """The signature of the rep of ``length`` records at s (what its code depends on)."""
        return tuple((self.sig[i], self.classes(s, i)) for i in range(s, s + length))

    def classes(self, s, i):
        """Operand classes of record i in a rep starting at s."""
        return tuple(("i", j - s) if j >= s else ("x", self.kind[j]) for j in self.opd[i])

    def same(self, s1, s2, length):
        """Whether the reps at s1 and s2 of a body of ``length`` records match."""
        sig, opd, kind = self.sig, self.opd, self.kind
        for u in range(length):
            i1, i2 = s1 + u, s2 + u
            if sig[i1] != sig[i2]:
                return False
            for j1, j2 in zip(opd[i1], opd[i2]):
                in1, in2 = j1 >= s1, j2 >= s2
                if in1 != in2 or (j1 - s1 != j2 - s2 if in1 else kind[j1] != kind[j2]):
                    return False
        return True

    def best_period(self, p):
        """(score, length, reps) of the best segment starting at p, or None. The score,
    ``length * (reps - 2)``, prefers short bodies with many reps: code size is what
    rerolling saves, and a body of two reps saves little of it."""
        end, best = self.end[p], None
        pos = self.where[self.sig[p]]
        for idx in range(bisect.bisect_right(pos, p), len(pos)):
            length = pos[idx] - p
            if length > MAX_BODY or p + 2 * length > end:
                break
            if best is not None and best[0] >= end - p - 2 * length:
                break  # no body this long or longer can score more (reps <= (end-p)/length)
            if not self.same(p, p + length, length):
                continue
            reps = 2
            while p + (reps + 1) * length <= end and self.same(p, p + reps * length, length):
                reps += 1
            score = length * (reps - 2)  # records saved beyond a second copy of the body
            if best is None or score > best[0]:
                best = (score, length, reps)
        return best


def find_segments(t, size):
    """Search the tape arrays ``t`` (record sizes ``size``) for segments. Returns
    ``(segments, bodies)``, segments in tape order.

    A greedy pass from left to right: at each eligible record, the candidate body lengths
    are the distances to the next records of the same signature, and the best scored one
    (:meth:`_Tape.best_period`) wins, the shortest on a tie. A second pass gives the
    stretches left between segments to the bodies found, one or two reps at a time (the
    last, short trips of a triangular loop)."""
    tp = _Tape(t, size)
    segments, bodies, p = [], {}, 0
    while p < tp.n:
        best = tp.best_period(p) if tp.sig[p] is not None else None
        if best is None or best[0] <= 0 or best[1] * best[2] < MIN_COVER:
            p += 1
            continue
        seg = Segment(p, best[1], best[2])
        key = tp.key(p, best[1])
        seg.body = bodies.setdefault(key, Body(key, len(bodies))).index
        segments.append(seg)
        p = seg.stop
    segments += _fill_gaps(tp, segments, bodies)
    segments.sort(key=lambda seg: seg.start)
    return segments, sorted(bodies.values(), key=lambda b: b.index)


def _fill_gaps(tp, segments, bodies):
    by_length = {}
    for key, body in bodies.items():
        by_length.setdefault(len(key), {})[key] = body
    starts = [seg.start for seg in segments] + [tp.n]
    stops = [0] + [seg.stop for seg in segments]
    extra = []
    for lo, hi in zip(stops, starts):
        p = lo
        while p < hi:
            seg = _match(tp, p, hi, by_length)
            if seg is None:
                p += 1
                continue
            extra.append(seg)
            p = seg.stop
    return extra


def _match(tp, p, hi, by_length):
    """A segment at p, within [p, hi), of one of the known bodies, or None."""
    for length, known in by_length.items():
        if p + length > min(hi, tp.end[p]):
            continue
        body = known.get(tp.key(p, length))
        if body is None:
            continue
        seg = Segment(p, length, 1)
        while seg.stop + length <= min(hi, tp.end[p]) and tp.same(p, seg.stop, length):
            seg.reps += 1
        seg.body = body.index
        return seg
    return None


def mark_stored(segments, bodies, consumers, out):
    """Add to each body's ``stored`` the positions whose value some rep hands outside it
    (a consumer outside the rep, or the tape's output)."""
    for seg in segments:
        body = bodies[seg.body]
        for r in range(seg.reps):
            lo = seg.start + r * seg.length
            hi = lo + seg.length
            for u in range(seg.length):
                i = lo + u
                if i == out or any(c < lo or c >= hi for c in consumers[i]):
                    body.stored.add(u)


def _columns(t, seg, size):
    """Per rep of ``seg``, per table column: (the operand's offset from the rep's start,
    where its value lives: (record, element) through scalar slices)."""
    out = []
    for r in range(seg.reps):
        lo = seg.start + r * seg.length
        out.append([(j - lo, _resolve(t, i if forwards(t, i, size) else j, size))
                    for i in range(lo, lo + seg.length) for j in operands(t, i) if j < lo])
    return out


def table_rows(t, seg, size, loc):
    """The table rows of ``seg``: per rep, the buffer position of each external operand
    (``loc(j)`` for the record j holding it, plus the element's index for a slice)."""
    return [loc(j) + k for row in _columns(t, seg, size) for _, (j, k) in row]


_ANY = "any"


def _capabilities(t, seg, size):
    """Per column of ``seg``: (whether every rep reads it at one place, the position u of
    the previous rep that reps r > 0 read there, ``_ANY`` for one rep, or None; the earlier
    columns that every rep reads at the same place)."""
    cols = _columns(t, seg, size)
    caps = []
    for c, (_, first) in enumerate(cols[0]):
        same = {e for e in range(c) if all(row[e][1] == row[c][1] for row in cols)}
        fixed = all(row[c][1] == first for row in cols[1:])
        carry = _ANY if seg.reps == 1 else None
        if seg.reps > 1:  # the same position of the previous rep, read as itself
            u = cols[1][c][0] + seg.length
            lo = seg.start - seg.length  # (of rep r - 1, for rep r)
            if 0 <= u < seg.length and all(row[c][1] == (lo + r * seg.length + u, 0)
                                           for r, row in enumerate(cols) if r):
                carry = u
        caps.append((fixed, carry, same))
    return caps


def _compatible(modes, caps):
    def fits(m, fixed, carry, same):
        kind = column_kind(m)
        return (kind == ROW or (kind == FIXED and fixed) or (kind == SAME and m[1] in same)
                or (kind == CARRY and carry in (_ANY, m[1])))
    return all(fits(m, *cap) for m, cap in zip(modes, caps))


def _preferred(caps, reps):
    modes = []
    for fixed, carry, same in caps:
        if same:  # (a fixed or carried column's duplicate is fixed or carried alike)
            modes.append((SAME, min(same)))
        elif reps == 1:
            modes.append(ROW)
        else:
            modes.append(FIXED if fixed else ROW if carry is None else (CARRY, carry))
    return modes


def assign_modes(t, size, segments, bodies):
    """Give each segment a body whose column modes it satisfies, making new bodies (variants
    of a signature) where none does; returns the new list of bodies.

    A column that every rep of a segment reads at one place (``x[3 * i]`` in an inner loop
    over j) is ``FIXED``: loaded once before the loop, its adjoint summed in a register and
    added once after it. A column through which rep r > 0 reads a value of rep r - 1 (a
    running sum) is ``CARRY``: the value passes in a register from one iteration to the next,
    and its adjoint back in the reverse loop (the values are stored still, for other readers
    and the reverse loop's recomputation). Big segments choose first; one-rep segments fit
    any variant."""
    variants, out = {}, []
    for seg in sorted(segments, key=lambda seg: -seg.length * seg.reps):
        key = bodies[seg.body].key
        caps = _capabilities(t, seg, size)
        body = next((b for b in variants.get(key, ()) if _compatible(b.modes, caps)), None)
        if body is None:
            body = Body(key, len(out), _preferred(caps, seg.reps))
            variants.setdefault(key, []).append(body)
            out.append(body)
        seg.body = body.index
    return out

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
from the adjoint buffer by the reverse loop, which recomputes the rep's primals first (no
stored intermediates: Griewank & Walther, "Evaluating Derivatives", 2nd ed., sec. 12.1).
"""

import bisect

import numpy as np

from .codegen import literal, rule_args
from .ops import OPS, codes, in_regions, operands

#: Tapes with at least this many scalar records are searched for loop bodies to reroll.
REROLL_RECORDS = 64
#: A segment must cover at least this many records, in at least three reps...
MIN_COVER = 32
#: ... with a body of at most this many records.
MAX_BODY = 256
#: Bodies storing at most this many values preaccumulate their partials (:func:`body_source`).
MAX_PREACCUMULATED = 4


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
    the rep) and ``width`` (table columns: external operands, in position order)."""

    def __init__(self, key, index):
        self.key, self.index = key, index
        self.stored = set()
        self.width = sum(1 for _, opd in key for cls in opd if cls[0] != "i")

    def slots(self):
        return sorted(self.stored)

    @property
    def preacc(self):
        """Whether the forward loop preaccumulates the rep's partials: few stored values,
        and a record calling a function (``math.exp``...) that recomputation would repeat.
        Measured on the pair loops at N = 38: 2.2x hand Numba preaccumulated against 2.6x
        recomputed for Morse (an exp and a sqrt per pair), but 4.0x against 3.2x for
        Lennard-Jones (arithmetic only: storing and reloading the partials costs more)."""
        calls = any("math." in OPS[sig[0]].value for sig, _ in self.key
                    if OPS[sig[0]].elementwise)
        return calls and len(self.stored) <= MAX_PREACCUMULATED

    @property
    def jac_stride(self):
        """Slots per rep of the partials a preaccumulating body stores (0 if not)."""
        return len(self.stored) * self.width if self.preacc else 0

    def columns(self):
        """The operand class of each table column."""
        return [cls for _, opd in self.key for cls in opd if cls[0] != "i"]


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


def table_rows(t, seg, size, loc):
    """The table rows of ``seg``: per rep, the buffer position of each external operand
    (``loc(j)`` for the record j holding it, plus the element's index for a slice)."""
    rows = []
    for r in range(seg.reps):
        lo = seg.start + r * seg.length
        for i in range(lo, lo + seg.length):
            for j in operands(t, i):
                if j < lo:
                    j, k = _resolve(t, i if forwards(t, i, size) else j, size)
                    rows.append(loc(j) + k)
    return rows



class Rerolling:
    """The rerolling part of the tape compiler's generator (``jittape.compiler._Gen``):
    finds the segments, lays out their stored values and tables, emits their calls. Uses
    the generator's ``t``, ``size``, ``consumers``, ``out``, ``bo``, ``xp``, ``F`` and ``R``."""

    def _reroll(self):
        """Find the loop bodies of long scalar stretches (:mod:`jittape.reroll`)."""
        self.segments, self.bodies = [], []
        if int(np.count_nonzero(self.size == 1)) >= REROLL_RECORDS:
            self.segments, self.bodies = find_segments(self.t, self.size)
            mark_stored(self.segments, self.bodies, self.consumers, self.out)
        self.seg_at = {seg.start: seg for seg in self.segments}
        self.seg_of = {}  # record of a rerolled rep -> its segment
        for seg in self.segments:
            self.seg_of.update(dict.fromkeys(range(seg.start, seg.stop), seg))
        # body records whose value straight-line code reads from a local v<i>
        self.loaded = {i for i, seg in self.seg_of.items()
                       if i == self.out or any(c not in self.seg_of for c in self.consumers[i])}
        # scalar slices read by rerolled loops alone (the loops read their arrays)
        self.unused = {i for i in range(self.t.n_records)
                       if i not in self.seg_of and i != self.out and self.consumers[i]
                       and forwards(self.t, i, self.size)
                       and all(c in self.seg_of for c in self.consumers[i])}

    def _local(self, i):
        """Whether scalar record i has the locals ``v<i>``/``g<i>`` in the kernel."""
        return self._scalar(i) and i not in self.unused and (i not in self.seg_of or
                                                             i in self.loaded)

    def _segment_slots(self, seg, pos):
        body = self.bodies[seg.body]
        seg.vb, seg.jb = pos, self.njac
        slots = body.slots()
        for r in range(seg.reps):
            for m, u in enumerate(slots):
                self.bo[seg.start + r * seg.length + u] = pos + r * len(slots) + m
        self.njac += seg.reps * body.jac_stride
        return pos + seg.reps * len(slots)

    def tables(self, base):
        """The index tables of the segments, laid out from position ``base`` of the kernel's
        int array (sets each segment's ``tb``)."""
        rows = []
        for seg in self.segments:
            seg.tb = base + len(rows)
            rows += table_rows(self.t, seg, self.size,
                               lambda j: self.xp[j] if j in self.xp else self.bo[j])
        return np.asarray(rows, dtype=np.int64)

    def _segment(self, seg):
        """A rerolled segment: one call of its body's forward loop, one of its reverse loop;
        values that straight-line code reads are loaded into locals after it."""
        # np.int64(): Numba compiles a callee once per distinct *literal* int argument
        args = (f"pool, np.int64({seg.tb}), np.int64({seg.reps}), np.int64({seg.vb}), "
                f"np.int64({seg.jb})")
        call = f"(val, jac, xin, {args})"
        if self.bodies[seg.body].preacc:  # not one loop with a branch: that halves its speed
            self.F("if want_grad:")
            self.F(f"rb{seg.body}_g{call}", 1)
            self.F("else:")
            self.F(f"rb{seg.body}_f{call}", 1)
        else:
            self.F(f"rb{seg.body}_f{call}")
        loads = [i for i in range(seg.start, seg.stop) if i in self.loaded]
        for i in loads:
            self.F(f"v{i} = val[{self.bo[i]}]")
        self.R([(0, f"adj[{self.bo[i]}] += g{i}") for i in loads] +
               [(0, f"rb{seg.body}_r(val, jac, xin, adj, gx, {args})")])


def _read(cls, col):
    """An operand of class ``cls``: a register, or column ``col``'s load ``x<col>``."""
    return f"u{cls[1]}" if cls[0] == "i" else f"x{col}"


def _loads(body):
    """The rep's external operands, loaded once into ``x<col>`` (loads written out again
    after the adjoint stores of a reverse loop could not be reordered by LLVM)."""
    return [f"x{c} = {'xin' if cls[1] == 'in' else 'val'}[tab[q + {c}]]"
            for c, cls in enumerate(body.columns())]


def _stores(body):
    """The reverse loop's adjoint contributions ``a<col>``, stored at the end of the rep."""
    return [f"{'gx' if cls[1] == 'in' else 'adj'}[tab[q + {c}]] += a{c}"
            for c, cls in enumerate(body.columns())]


def _forward_lines(body):
    """Per position: (line computing u<pos>, [(operand code, column or None, class)])."""
    lines, col = [], 0
    for u, (sig, classes) in enumerate(body.key):
        op = OPS[sig[0]]
        refs = []
        for cls in classes:
            refs.append((cls, None if cls[0] == "i" else col))
            col += cls[0] != "i"
        reads = [_read(cls, c) for cls, c in refs]
        if sig[0] == codes.CONST:
            lines.append((f"u{u} = {literal(sig[1])}", refs))
        elif op.fusion == "slice":
            lines.append((f"u{u} = {reads[0]}", refs))
        else:
            x, y, q3 = (reads + ["0.0", "0.0"])[:3]
            lines.append((f"u{u} = f_{op.name}({rule_args(op, x, y, q3, sig[1])})", refs))
    return lines


def _target(cls, col):
    """Where the adjoint of an operand accumulates in the reverse loop."""
    return f"h{cls[1]}" if cls[0] == "i" else f"a{col}"


def _partial(cls, col):
    """Where it accumulates in a preaccumulating forward loop: a local per column."""
    return f"h{cls[1]}" if cls[0] == "i" else f"p{col}"


def _reverse_lines(body, fwd, target):
    """The adjoint code of one rep, last record first (``h<u>``: adjoint of ``u<u>``)."""
    out = []
    for u in range(len(body.key) - 1, -1, -1):
        sig, _ = body.key[u]
        op, refs = OPS[sig[0]], fwd[u][1]
        if sig[0] == codes.CONST:
            continue
        if op.fusion == "slice":
            out.append(f"{target(*refs[0])} += h{u}")
            continue
        if not op.differentiable:
            continue
        reads = [_read(cls, c) for cls, c in refs]
        x, y, q3 = (reads + ["0.0", "0.0"])[:3]
        out.append(f"d0, d1, d2 = d_{op.name}({rule_args(op, x, y, q3, sig[1])}, u{u})")
        for n, (cls, c) in enumerate(refs):
            if n < len(op.partials) and op.partials[n] != "0.0":
                out.append(f"{target(cls, c)} += h{u} * d{n}")
    return out


def _preaccumulate(body, fwd):
    """Lines of a forward loop that store, after the rep's values, the partials of each
    stored value with respect to each table column (one local reverse sweep per stored
    value, seeded with 1)."""
    slots, w, n = body.slots(), body.width, len(body.key)
    lines = []
    for m, u in enumerate(slots):
        lines += [f"h{v} = {'1.0' if v == u else '0.0'}" for v in range(n)]
        lines += [f"p{c} = 0.0" for c in range(w)]
        lines += _reverse_lines(body, fwd, _partial)
        lines += [f"jac[p + {m * w + c}] = p{c}" for c in range(w)]
    return lines


def body_source(body):
    """The loop functions of ``body``: forward ``rb<b>_f(val, jac, xin, tab, tb, R, vb,
    jb)``, forward with preaccumulation ``rb<b>_g`` (same arguments; for a preaccumulating
    body only) and reverse ``rb<b>_r(val, jac, xin, adj, gx, tab, tb, R, vb, jb)``. They run
    reps 0..R-1 (the reverse one backwards) of a segment whose table starts at ``tab[tb]``,
    whose stored values start at ``val[vb]`` (one slot per stored value and rep) and whose
    preaccumulated partials start at ``jac[jb]`` (``body.jac_stride`` per rep). Returns
    ``(source, number of lines)``.

    A body with few stored values is *preaccumulated* (statement-level preaccumulation,
    Griewank & Walther, sec. 10.2; ADIFOR and Tapenade do it per statement): with ``grad``
    its forward loop ``rb<b>_g`` also stores each stored value's partials with respect to the table
    columns (in ``jac``, a scratch buffer that is never copied or zeroed), so the reverse
    loop is one multiply-add per column and stored value, with no recomputation. Otherwise
    the reverse loop recomputes the rep's values and runs its adjoints."""
    b, w, slots = body.index, body.width, body.slots()
    fwd = _forward_lines(body)
    head = [f"        q = tb + r * {w}", f"        s = vb + r * {len(slots)}",
            f"        p = jb + r * {body.jac_stride}"]
    args = "val, jac, xin, tab, tb, R, vb, jb"
    values = ["        " + line for line in _loads(body) + [line for line, _ in fwd]]
    values += [f"        val[s + {m}] = u{u}" for m, u in enumerate(slots)]
    f = [f"def rb{b}_f({args}):", "    for r in range(R):", *head, *values]
    r = [f"def rb{b}_r(val, jac, xin, adj, gx, tab, tb, R, vb, jb):",
         "    for r in range(R - 1, -1, -1):", *head]
    g = []
    if body.preacc:
        g = [f"def rb{b}_g({args}):", "    for r in range(R):", *head, *values]
        g += ["        " + x for x in _preaccumulate(body, fwd)]
        r += [f"        h{m} = adj[s + {m}]" for m in range(len(slots))]
        for c in range(w):
            terms = " + ".join(f"h{m} * jac[p + {m * w + c}]" for m in range(len(slots)))
            r.append(f"        a{c} = {terms}")
    else:
        r += values[:len(values) - len(slots)]  # the values, not their stores
        seeded = dict((u, m) for m, u in enumerate(slots))
        r += [f"        h{u} = " + (f"adj[s + {seeded[u]}]" if u in seeded else "0.0")
              for u in range(len(body.key))]
        r += [f"        a{c} = 0.0" for c in range(w)]
        r += ["        " + line for line in _reverse_lines(body, fwd, _target)]
    r += ["        " + line for line in _stores(body)]
    deco = '@njit(nogil=True, error_model="numpy")\n'
    src = "\n\n\n".join(deco + "\n".join(x) for x in (g, f, r) if x)
    return src + "\n", len(f) + len(g) + len(r)

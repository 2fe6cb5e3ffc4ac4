"""Fused loops of the tape compiler (:mod:`jittape.compiler.kernel`): consecutive elementwise array
records of one size become one forward and one reverse loop over their elements."""

import re

from ..sweeps.codegen import rule_args as _args
from ..optable.table import OPS, operands

_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*)\s*\(")
_CHEAP_CALLS = {"abs", "max", "min"}
#: A reverse loop over rows of at least this many elements (a sum over the last axes) runs
#: flat (an AVX2 vector of doubles: a shorter row unrolls, a longer one vectorizes only in
#: the flat loop)
FLAT_ROWS = 4
#: A member whose recomputation would recompute more members than this (cmpad llsq's
#: residual, the end of a chain of 18 products and sums over the points) is stored by the
#: forward loop and loaded by the reverse loop instead
RECOMPUTE_CONE = 8


def _costly(op):
    """Whether recomputing op's value costs more than storing and loading it: the value
    calls a function (exp, log1p, a helper) or raises to a power."""
    value = op.value or ""
    return "**" in value or any(f not in _CHEAP_CALLS for f in _CALL.findall(value))


def _uses(op, name):
    """Whether a partial derivative of elementwise ``op`` reads the variable ``name``."""
    return any(p != "0.0" and re.search(rf"\b{name}\b", p) for p in op.partials)


def plan(t, members):
    """Which members' values the reverse loop of a fused group needs, and which of those it
    loads from the buffer (stored by the forward loop) instead of recomputing: the costly
    ones (Griewank & Walther, "Evaluating Derivatives", 2nd ed., sec. 12: recompute what is
    cheap, store what is not). A member nobody's partial reads, directly or through a
    recomputed member, is not recomputed at all. Returns ``(needed, stored)``."""
    mset = set(members)
    cone = {}  # member -> members its recomputation reads, at most RECOMPUTE_CONE + 1
    for m in members:
        cone[m] = min(RECOMPUTE_CONE + 1, 1 + sum(cone.get(j, 0) for j in operands(t, m)))
    needed, stored = set(), set()
    for m in reversed(members):
        op = OPS[int(t.op[m])]
        ids = operands(t, m)
        if op.elementwise and op.differentiable:
            if _uses(op, "z"):
                needed.add(m)
            for name, j in zip("xyq", ids):
                if j in mset and _uses(op, name):
                    needed.add(j)
        if m in needed:
            if op.elementwise and (_costly(op) or cone[m] > RECOMPUTE_CONE):
                stored.add(m)
            else:  # recomputed from its operands
                needed.update(j for j in ids if j in mset)
    return needed, stored


def strided_at(pool, k):
    """The position of element j of a strided view (layout at ``pool[k]``) in its operand, as
    an expression with the layout's integers as literals (LLVM turns the divisions by
    constants into multiplications)."""
    nd, start = int(pool[k]), int(pool[k + 1])
    shape = [int(e) for e in pool[k + 2:k + 2 + nd]]
    strides = [int(s) for s in pool[k + 2 + nd:k + 2 + 2 * nd]]
    terms, span = [str(start)], 1
    for d in range(nd - 1, -1, -1):
        at = "j" if span == 1 else f"(j // {span})"
        if d > 0:
            at = f"({at} % {shape[d]})"
        if strides[d]:
            terms.append(f"{at} * {strides[d]}")
        span *= shape[d]
    return " + ".join(terms)


def load_at(op, pool, k):
    """The position of element j of an indexed load (a ``gather`` or ``strided`` op's record,
    layout at ``pool[k]``) in its operand, as an expression."""
    return f"pool[{k} + j]" if op.fusion == "gather" else strided_at(pool, k)


def partial_calls(op, args, z, prefix, const):
    """Lines setting ``<prefix>0``, ``<prefix>1``, ``<prefix>2`` to op's partials at ``args``
    (``f_<op>``'s arguments) and result ``z``: one call of ``d_<op>`` returning all, or,
    when some operand is a constant (``const[k]``: no adjoint), of ``d<k>_<op>`` for each
    of the others: a partial nobody needs is not computed (the exp of logaddexp(0, x)'s
    constant side; LLVM does not remove it from an opaque call)."""
    live = [n for n, p in enumerate(op.partials) if p != "0.0"]
    need = [n for n in live if not const[n]]
    if len(need) == len(live) or len(op.partials) == 1:
        return [f"{prefix}0, {prefix}1, {prefix}2 = d_{op.name}({args}, {z})"]
    return [f"{prefix}{n} = d{n}_{op.name}({args}, {z})" for n in need]


class Fused:
    """The code of one fused group: consecutive elementwise records of one size, element j
    of each in a local ``v<m>``, loads of other records from the buffer, an optional full
    ``sum`` closing the loop."""

    def __init__(self, gen, members, fsum):
        self.gen, self.members, self.fsum = gen, members, fsum
        self.mset = set(members)
        self.n = int(gen.size[members[0]])
        self.stores, self.accs, self.writes = {}, set(), {}
        # a sum over the last axes of rows of m elements (pool layout (outer, m, inner=1)):
        # the loops nest, rows outside; 0 for a flat loop (no sum, or a sum over all)
        self.rows = self.m = 0
        if fsum >= 0 and int(gen.size[fsum]) > 1:
            p = int(gen.t.k[fsum])
            self.rows, self.m = int(gen.t.pool[p]), int(gen.t.pool[p + 1])

    def loop_head(self, per_row):
        """``(lines, depth)``: the loop header over the group's elements (``(indent, line)``
        pairs setting ``j``) and the indent of its body. With a sum over the last axes, rows
        outside, ``per_row`` run at the start of each, the row's elements inside."""
        if not self.rows:
            return [(0, f"for j in range({self.n}):")], 1
        return [(0, f"for jo in range({self.rows}):"), (1, per_row),
                (1, f"for ji in range({self.m}):"), (2, f"j = jo * {self.m} + ji")], 2

    def ex(self, j, reverse=False):
        """Operand record j at element j of the loop (in the reverse loop, ``0.0`` for a
        member whose value is not recomputed there: no partial reads it)."""
        if reverse and j in self.mset and j not in self.gen.needed:
            return "0.0"
        if j in self.mset or self.gen.size[j] == 1:
            return f"v{j}"  # per-element local, or a scalar local
        return self.gen.V(j, "j")

    def _fields(self, m):
        t = self.gen.t
        return (OPS[int(t.op[m])], int(t.a[m]), int(t.b[m]), int(t.k[m]), float(t.c[m]))

    def element(self, m):
        """The line computing member m's element j."""
        op, a, b, k, c = self._fields(m)
        if op.fusion in ("slice", "gather", "strided") and a not in self.mset and \
                self.gen.size[a] == 1:
            return f"v{m} = v{a}"  # every element reads a scalar local (a broadcast)
        if op.fusion == "slice":
            return f"v{m} = {self.gen.V(a, f'{k} + j')}" if a not in self.mset \
                else f"v{m} = v{a}"
        if op.fusion in ("gather", "strided"):  # the operand is never in the group: it has
            # another size, or a permutation of it needs all of it first
            return f"v{m} = {self.gen.V(a, load_at(op, self.gen.t.pool, k))}"
        return f"v{m} = f_{op.name}({_args(op, self.ex(a), self.ex(b), self.ex(k), c)})"

    def store(self, rec, target, order, expr):
        """Contribution ``expr`` to the adjoint of buffer record ``rec`` at ``target``."""
        self.stores.setdefault(target, [order, []])[1].append(expr)
        self.writes.setdefault(rec, set()).add(target)

    def assigns(self):
        """The adjoint targets ``A(r, "j")`` that this loop writes before any other code
        (:meth:`Layout.first_written`) and are r's only store here: ``=`` instead of ``+=``,
        and the kernel does not zero r's slots (a pass over memory fewer, GMM's 250,000)."""
        gen, done = self.gen, set()
        for r in gen.first_written(self.members):
            if self.writes.get(r) == {gen.A(r, "j")}:
                done.add(gen.A(r, "j"))
                gen.assigned.add(r)
        return done

    def acc(self, j, expr):
        """Adjoint contribution ``expr`` to operand j of a member (None: stored later)."""
        gen = self.gen
        if j in self.mset:
            return f"g{j} += {expr}"
        if gen.is_const(j):
            return None  # constants get no adjoint
        if gen.size[j] == 1:
            self.accs.add(j)
            return f"acc{j} += {expr}"
        self.store(j, gen.A(j, "j"), (gen.xp.get(j, gen.bo.get(j)), 0), expr)
        return None

    def _member_reverse(self, m):
        gen = self.gen
        op, a, b, k, c = self._fields(m)
        if op.fusion in ("slice", "gather", "strided") and a not in self.mset and \
                gen.size[a] == 1:
            return [line for line in [self.acc(a, f"g{m}")] if line]  # a broadcast scalar
        if op.fusion == "slice":
            if a in self.mset:
                return [f"g{a} += g{m}"]
            if gen.is_const(a):
                return []
            self.store(a, gen.A(a, f"{k} + j"), (gen.xp.get(a, gen.bo.get(a)), k), f"g{m}")
            return []
        if op.fusion in ("gather", "strided"):  # indirect: stored last, in member order
            if gen.is_const(a):
                return []
            self.store(a, gen.A(a, load_at(op, gen.t.pool, k)), (-1, -len(self.stores)),
                       f"g{m}")
            return []
        if not op.differentiable:
            return []
        args = _args(op, self.ex(a, True), self.ex(b, True), self.ex(k, True), c)
        const = [gen.is_const(j) for j in (a, b, k)]  # constants get no adjoint
        lines = partial_calls(op, args, self.ex(m, True), f"d{m}_", const)
        for p, j in enumerate((a, b, k)):  # k: a ternary's third operand
            if p < len(op.partials) and op.partials[p] != "0.0" and not const[p]:
                lines.append(self.acc(j, f"g{m} * d{m}_{p}"))
        return lines

    def reverse(self, body):
        """Reverse loop: recompute the primals of the element, then adjoints backwards."""
        gen, fsum = self.gen, self.fsum
        rev = []
        if not self.rows and fsum >= 0 and gen._buffer_consumers(fsum):
            rev.append((0, f"g{fsum} += adj[{gen.bo[fsum]}]"))
        if self.m >= FLAT_ROWS:  # flat, each element reading its row's adjoint: 2.7x
            # faster than nested loops on GMM's rows of 10 (which LLVM did not vectorize)
            head, d = [(0, f"for j in range({self.n}):"),
                       (1, f"g{fsum} = adj[{gen.bo[fsum]} + j // {self.m}]")], 1
        else:  # (rows of 2 or 3 unroll; LJ's, flat, measured no faster)
            head, d = self.loop_head(f"g{fsum} = adj[{gen.bo[fsum]} + jo]" if self.rows
                                     else None)
        rev += head
        for m, line in zip(self.members, body):  # the primals the partials read
            if m in gen.stored:
                rev.append((d, f"v{m} = {gen.V(m, 'j')}"))
            elif m in gen.needed:
                rev.append((d, line))
        live = [m for m in self.members if m not in gen.skip_reverse]  # (products.py)
        if not live:
            return []
        for m in live:
            init = f"adj[{gen.bo[m]} + j]" if gen._buffer_consumers(m) else "0.0"
            rev.append((d, f"g{m} = {init}"))
        if fsum >= 0:
            rev.append((d, f"g{int(gen.t.a[fsum])} += g{fsum}"))
        for m in reversed(live):
            rev += [(d, line) for line in self._member_reverse(m) if line is not None]
        # Contributions to buffer adjoints are merged per slot and stored at the end of the
        # loop body, highest offset first: with x[j+1] stored before x[j], LLVM sees no
        # loop-carried dependence and vectorizes the loop (measured 2x on Rosenbrock).
        assigns = self.assigns()
        for target, (order, exprs) in sorted(self.stores.items(), key=lambda kv: kv[1][0],
                                             reverse=True):
            op = "=" if target in assigns else "+="
            rev.append((d, f"{target} {op} {' + '.join(exprs)}"))
        head = [(0, f"acc{j} = 0.0") for j in sorted(self.accs)]
        tail = [(0, f"g{j} += acc{j}") for j in sorted(self.accs)]
        return head + rev + tail

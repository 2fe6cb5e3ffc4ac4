"""The tape optimizer: a shorter tape with the same values and derivatives.

Run on a finished tape (:class:`jittape.tape.arrays.TapeArrays`), as CppAD's ``optimize``
runs on an ``ADFun`` and CasADi simplifies its expression graphs (Bell, "CppAD: a package
for C++ algorithmic differentiation", 2012; Griewank & Walther, "Evaluating Derivatives",
2nd ed., sec. 6.1 on activity). One forward pass over the records, then one backward pass:

* **constant folding**: a record whose operands are all input-independent (constants, or
  records computed from constants only) becomes a constant holding its recorded value; a
  guard on such a value can never fail and goes;
* **algebraic identities** exact in IEEE arithmetic: ``x * 1``, ``x / 1``, ``x ** 1``,
  ``x + (-0.0)`` and ``-(-x)`` are ``x`` (``x + 0.0`` is not: it turns -0.0 into +0.0);
* **common subexpressions**: a record with the same op, the same (already merged)
  operands and the same immediates as an earlier one is that one (a constant: the same
  value);
* **views of gathers**: a slice or strided view of a gather whose readers are all such
  views is a gather of the gather's operand (its index table composed with the view's
  positions), so the gathered array is never materialized: ``params[idx][:, 3:6]`` reads
  ``params`` once (bundle adjustment's camera columns);
* **dead records**: records that neither the output nor a guard reads, directly or not,
  go (the inputs stay, as the tape's interface);
* **absolute zeros**, on request only (``fold``): records that no input changes once
  ``0 * v`` is ``0`` for every ``v`` (:mod:`jittape.derivatives.zeros`, CppAD's and
  CasADi's rule) become constants of their recorded values, exact for finite values only.

Values, guards and derivatives are bit-identical to the original's except where common
subexpressions merge: a merged record's adjoint is then the sum of its copies' adjoints,
added before being propagated rather than after (within reassociation). Tapes holding
regions (custom rules, checkpoints, nested derivatives' second-order records) are left as
they are.
"""

import dis
from dataclasses import dataclass

import numpy as np

from ..optable.entry import CALL, LEAF, REGION, SELECT, TERNARY
from ..optable.registry import OPS, codes as K, operand_lists
from ..optable.rules.patterns import strided_positions
from .arrays import TapeArrays


@dataclass
class Optimization:
    """What :func:`optimize` did: record counts before and after, and per pass how many
    records it removed or rewrote."""

    records_before: int
    records_after: int
    folded: int = 0  # records that became constants
    guards_removed: int = 0  # guards on input-independent values
    identities: int = 0  # x * 1, x / 1, x ** 1, x + (-0.0), -(-x)
    merged: int = 0  # common subexpressions
    views: int = 0  # views of gathers that became gathers
    dead: int = 0  # records nothing reads
    zeros: int = 0  # records folded as absolute zeros (asked for: optimize's fold)
    skipped: str = ""  # why the tape was left as it is
    kept: list = None  # the optimized tape's records' ids in the original (None: all)

    def __str__(self):
        if self.skipped:
            return f"tape not optimized: {self.skipped}"
        return (f"{self.records_before} records -> {self.records_after}: {self.folded} folded "
                f"into constants, {self.guards_removed} constant guards removed, "
                f"{self.identities} identities, {self.merged} common subexpressions merged, "
                f"{self.views} views of gathers composed, {self.dead} dead records removed"
                + (f", {self.zeros} absolute zeros folded" if self.zeros else ""))


#: ``op: c`` for the unary ops that are the identity at that immediate (exact in IEEE
#: arithmetic: x * 1.0, x / 1.0, x ** 1.0 and x + (-0.0) are x, NaNs and -0.0 included).
IDENTITIES = {K.MULC: 1.0, K.DIVC: 1.0, K.POWC: 1.0, K.ADDC: -0.0}


def optimize(t, out, fold=()):
    """``(arrays, out, report)``: the optimized tape arrays of ``t`` (record ids renumbered;
    its inputs in the same order), the new id of output record ``out`` (-1 stays -1) and an
    :class:`Optimization` report. ``t`` itself is not changed. ``fold``: ids of records to
    fold into constants of their recorded values besides those of constants only (the
    absolute zeros of :func:`jittape.derivatives.zeros.absolute_zeros`)."""
    n = t.n_records
    report = Optimization(n, n)
    kinds = {OPS[c].kind for c in set(t.op.tolist())}
    if kinds & {REGION, CALL}:
        report.skipped = "it holds regions (custom rules, checkpoints or nested derivatives)"
        return t, out, report
    reads = operand_lists(t)
    composed = _compose_views(t, reads, report)
    if composed is not t:  # (the views now read the gathers' operands)
        t, reads = composed, operand_lists(composed)
    rep, const, folded = _forward_pass(t, reads, report, set(fold))
    live = _live(t, out, reads, rep, const)
    return _rebuild(t, out, rep, folded, live, report)


def _compose_views(t, reads, report):
    """The tape with every view (slice, strided) of a gather that only views read turned
    into a gather of that gather's operand, its index table appended to the pool (the
    gather itself is then dead). ``t`` if there is none."""
    n, op, size = t.n_records, t.op.tolist(), np.diff(t.off)
    readers = [[] for _ in range(n)]
    for i in range(n):
        for j in reads[i]:
            readers[j].append(i)
    views = {K.SLICE, K.STRIDED}
    gathers = [g for g in range(n) if op[g] == K.GATHER and readers[g] and all(
        op[r] in views and size[r] > 1 for r in readers[g])]
    if not gathers:
        return t
    cols = {name: getattr(t, name).copy() for name in ("op", "a", "k")}
    extra, at = [], len(t.pool)
    for g in gathers:
        table = t.pool[t.k[g]:t.k[g] + size[g]]
        for r in readers[g]:
            pos = strided_positions(t.pool, int(t.k[r])) if op[r] == K.STRIDED else \
                int(t.k[r]) + np.arange(size[r])
            extra.append(table[pos])
            cols["op"][r], cols["a"][r], cols["k"][r] = K.GATHER, t.a[g], at
            at += int(size[r])
            report.views += 1
    return TapeArrays(cols["op"], cols["a"], t.b, cols["k"], t.c, t.off,
                      np.concatenate([t.pool] + extra), t.val, t.shapes, t.inputs)


_POOL_USERS = {}


def _uses_pool(code):
    """Whether op ``code``'s forward kernel reads the pool (its ``k`` is a pool offset)."""
    if code not in _POOL_USERS:
        f = OPS[code].forward
        _POOL_USERS[code] = f is not None and "pool" in {
            ins.argval for ins in dis.get_instructions(f) if ins.opname.startswith("LOAD_FAST")}
    return _POOL_USERS[code]


def _pool_segments(t, op, k):
    """``{k: (start, end)}``: each pool offset of a record whose op reads the pool, with the
    pool entries up to the next such offset (its layout, for comparing records)."""
    starts = sorted({k[i] for i in range(len(op)) if _uses_pool(op[i])})
    ends = starts[1:] + [len(t.pool)]
    return dict(zip(starts, zip(starts, ends)))


def _forward_pass(t, reads, report, fold):
    """Per record: its representative (itself, or the earlier record it equals), whether it
    is input-independent, and whether it is folded into a constant (``fold``: records to
    fold whatever they read)."""
    n = t.n_records
    op, a, b, k, c = (col.tolist() for col in (t.op, t.a, t.b, t.k, t.c))
    off, val = t.off.tolist(), t.val
    rep, const, folded = list(range(n)), [False] * n, [False] * n
    seen, segments, pool = {}, _pool_segments(t, op, k), t.pool
    for i in range(n):
        code = op[i]
        spec = OPS[code]
        ids = [rep[j] for j in reads[i]]
        if spec.kind == LEAF:
            const[i] = code == K.CONST
            if const[i]:
                key = ("const", t.shapes.get(i), val[off[i]:off[i + 1]].tobytes())
                rep[i] = seen.setdefault(key, i)
                report.merged += rep[i] != i
            continue
        if i in fold:
            const[i] = folded[i] = True
            report.zeros += 1
            continue
        if ids and all(const[j] for j in ids):
            if spec.checks:  # a guard on a constant: it can never fail
                report.guards_removed += 1
                rep[i] = -1
                continue
            const[i] = folded[i] = True
            report.folded += 1
            continue
        if code in IDENTITIES and c[i] == IDENTITIES[code] and \
                (code != K.ADDC or np.signbit(c[i])):
            rep[i] = ids[0]
            report.identities += 1
            continue
        if code == K.NEG and op[ids[0]] == K.NEG and not folded[ids[0]]:
            rep[i] = rep[a[ids[0]]]
            report.identities += 1
            continue
        kk = k[i] if spec.kind not in (SELECT, TERNARY) else rep[k[i]]
        if spec.arity < 0:
            kk = _pool_parts(t, i, rep)
        elif _uses_pool(code):  # the layout, wherever in the pool it was put
            lo, hi = segments[k[i]]
            kk = pool[lo:hi].tobytes()
        key = (code, tuple(ids), kk, c[i], off[i + 1] - off[i], t.shapes.get(i))
        rep[i] = seen.setdefault(key, i)
        report.merged += rep[i] != i
    return rep, const, folded


def _pool_parts(t, i, rep):
    """An n-ary record's layout with its parts' representatives (for merging)."""
    p = int(t.k[i])
    count = int(t.pool[p])
    lay = t.pool[p:p + 2 + 2 * count].tolist()
    for q in range(count):
        lay[2 + 2 * q] = rep[lay[2 + 2 * q]]
    return tuple(lay)


def _live(t, out, reads, rep, const):
    """Records the output, the guards left and the inputs read (representatives only)."""
    n = t.n_records
    live = [False] * n
    for i in t.inputs:
        live[i] = True
    stack = [rep[out]] if out >= 0 else []
    checks = {op.code for op in OPS if op.checks}
    stack += [i for i, code in enumerate(t.op.tolist()) if code in checks and rep[i] == i]
    while stack:
        i = stack.pop()
        if live[i] and i not in t.inputs:
            continue
        live[i] = True
        if const[i]:  # a folded record reads nothing any more
            continue
        stack.extend(j for j in (rep[j] for j in reads[i]) if not live[j])
    return live


def _rebuild(t, out, rep, folded, live, report):
    keep = [i for i in range(t.n_records) if live[i]]
    new = {old: j for j, old in enumerate(keep)}
    remap = lambda j: new[rep[j]] if j >= 0 else -1  # noqa: E731
    pool = t.pool.copy()
    cols = {name: getattr(t, name)[keep].copy() for name in ("op", "a", "b", "k", "c")}
    rewritten = set()
    for j, i in enumerate(keep):
        spec = OPS[int(t.op[i])]
        if folded[i]:
            cols["op"][j], cols["a"][j], cols["b"][j], cols["k"][j], cols["c"][j] = \
                K.CONST, -1, -1, 0, 0.0
            continue
        if spec.kind == LEAF:
            continue
        cols["a"][j] = remap(int(t.a[i]))
        cols["b"][j] = remap(int(t.b[i]))
        if spec.arity < 0:
            p = int(t.k[i])
            if p not in rewritten:
                rewritten.add(p)
                for q in range(int(t.pool[p])):
                    pool[p + 2 + 2 * q] = remap(int(t.pool[p + 2 + 2 * q]))
            continue
        if spec.kind in (SELECT, TERNARY):
            cols["k"][j] = remap(int(t.k[i]))
    sizes = np.diff(t.off)[keep]
    off = np.zeros(len(keep) + 1, dtype=np.int64)
    np.cumsum(sizes, out=off[1:])
    val = np.concatenate([t.val[t.off[i]:t.off[i + 1]] for i in keep]) if keep else \
        np.zeros(0)
    shapes = {new[i]: s for i, s in t.shapes.items() if i in new}
    arrays = TapeArrays(cols["op"], cols["a"], cols["b"], cols["k"], cols["c"], off, pool, val,
                        shapes, [new[i] for i in t.inputs])
    report.records_after, report.kept = len(keep), keep
    report.dead = t.n_records - len(keep) - report.merged - report.identities - \
        report.guards_removed
    return arrays, (remap(out) if out >= 0 else -1), report

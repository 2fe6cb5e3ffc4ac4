"""The recorded reverse sweep: a VJP computed by NumPy calls on active values, so that its
operations are ordinary records on the tape being recorded (nesting to any order).

:func:`reverse` walks records ``lo..y`` of an open tape backwards, as the compiled reverse
sweep does, but each record's adjoint rule is the op table's NumPy rule
(:func:`jittape.optable.recorded.vjp_of`) called on the records' values as active values.
Its results are active values of the same tape: differentiate them again (any number of
times), replay them at new inputs (guards and all), save them. Only records that depend on
the ``seeds`` are visited (activity analysis, Griewank & Walther, "Evaluating Derivatives",
2nd ed., sec. 6.1), so a record without a rule there stops nothing unless the derivative
runs through it.
"""

import numpy as np

from ..numpy.active import Active, guard
from ..optable.recorded import Rec, Scatter, Unsupported, vjp_of
from ..optable.registry import OPS, operand_lists


class _Records:
    """The frozen tape's records as Python lists (fast reads one record at a time), and
    the active values of the records read so far (each made once)."""

    def __init__(self, frozen, t):
        self.frozen, self.t = frozen, t
        self.op, self.k, self.c = frozen.op.tolist(), frozen.k.tolist(), frozen.c.tolist()
        self.off = frozen.off.tolist()
        self.reads = operand_lists(frozen)
        self.values = {}

    def operands(self, i):
        return self.reads[i]

    def size(self, i):
        return self.off[i + 1] - self.off[i]

    def scalar(self, i):
        return self.off[i + 1] - self.off[i] == 1 and i not in self.frozen.shapes

    def primal(self, i):
        return self.frozen.val[self.off[i]:self.off[i + 1]]

    def value(self, i, scalar):
        """Record ``i`` as an active value: a float for a scalar record if ``scalar`` (the
        elementwise rules then record scalar records), else flat."""
        key = (i, scalar and self.scalar(i))
        v = self.values.get(key)
        if v is None:
            p = self.primal(i)
            v = self.values[key] = Active(self.t, i, float(p[0]) if key[1] else p)
        return v


def _guarded(a):
    """``a``'s value as a plain array, guarded (a rule's constant, :class:`Rec`)."""
    if isinstance(a, Active):
        guard(a)
        return np.array(a._v, dtype=np.float64)
    return np.asarray(a, dtype=np.float64)


def _active_records(recs, lo, hi, seeds):
    """Boolean per record ``lo..hi``: it depends on a record in ``seeds``."""
    active = [False] * (hi + 1 - lo)
    for s in seeds:
        active[s - lo] = True
    for i in range(lo, hi + 1):
        if not active[i - lo]:
            active[i - lo] = any(j >= lo and active[j - lo] for j in recs.operands(i))
    return active


def _fit(d, scalar):
    """Adjoint ``d`` (active or plain, any shape of the right size) as a float if
    ``scalar``, else flat: the same record either way."""
    if isinstance(d, Active):
        v = d._v
        if scalar:
            return d if type(v) is float else Active(d._t, d._i, float(np.ravel(v)[0]))
        return d if type(v) is not float and v.ndim == 1 else Active(d._t, d._i, np.ravel(v))
    return float(np.ravel(d)[0]) if scalar else np.ravel(d)


def rollback(t, n, pool):
    """Drop the records from ``n`` on and the pool from ``pool`` on (an attempt undone)."""
    del t.entries[n << 5:]
    for d in (t.arrays, t.shapes):
        for i in [i for i in d if i >= n]:
            del d[i]
    del t.pool[pool:]


def reverse(t, lo, seeds, outputs):
    """The adjoints of ``seeds`` (record ids >= ``lo``) in ``sum <w, v_y>`` over the
    ``outputs`` ``(y, w)`` (``w`` the cotangent of record ``y``: its size, any shape, active
    or plain), recorded on the open tape ``t``: one flat active value per seed (None where no
    derivative reaches it), or None if a record between them has no NumPy rule (nothing is
    then recorded)."""
    frozen = t.freeze()
    frozen.pool = frozen.pool.copy()  # a view of t's pool would stop it growing
    recs = _Records(frozen, t)
    y = max(i for i, _ in outputs)
    active = _active_records(recs, lo, y, seeds)
    seeds_set = set(seeds)
    visit = [i for i in range(y, lo - 1, -1) if active[i - lo] and i not in seeds_set]
    rules = {recs.op[i]: vjp_of(recs.op[i]) for i in visit}
    if any(r is None for r in rules.values()):
        return None
    n, pool = t.n, len(t.pool)
    try:
        with np.errstate(all="ignore"):  # both branches of a where are computed
            adj = _Sweep(recs, lo, active).run(visit, rules, outputs, seeds)
    except Unsupported:
        rollback(t, n, pool)
        return None
    return [adj.get(s) for s in seeds]


class _Sweep:
    """One recorded reverse sweep: the adjoints so far, by record (dense ones, and the
    :class:`Scatter` parts of indexed ones, added when the record is reached)."""

    def __init__(self, recs, lo, active):
        self.recs, self.lo, self.active = recs, lo, active
        self.adj, self.scattered = {}, {}

    def run(self, visit, rules, outputs, seeds):
        recs, lo, active = self.recs, self.lo, self.active
        for i, w in outputs:
            self.add(i, w)
        for i in visit:
            g = self.take(i)
            if g is None:
                continue
            code, ids = recs.op[i], recs.operands(i)
            scalar = OPS[code].elementwise
            r = Rec([recs.value(j, scalar) for j in ids], [recs.size(j) for j in ids],
                    [lo <= j and active[j - lo] for j in ids], recs.value(i, scalar),
                    recs.size(i), recs.k[i], recs.c[i], recs.frozen.pool,
                    [recs.primal(j) for j in ids], _guarded)
            for j, d in zip(ids, rules[code](r, g if scalar else _fit(g, False))):
                if d is None or j < lo or not active[j - lo]:
                    continue  # (a record before lo is a constant of this derivative)
                if isinstance(d, Scatter):
                    self.scattered.setdefault(j, []).append(d)
                else:
                    self.add(j, d)
        return {s: self.take(s) for s in seeds}

    def add(self, j, d):
        d = _fit(d, self.recs.scalar(j))
        self.adj[j] = d if j not in self.adj else self.adj[j] + d

    def take(self, i):
        """Record i's adjoint (None: zero), its scattered parts added now."""
        parts = self.scattered.pop(i, None)
        if parts:
            self.add(i, Scatter.total(parts, self.recs.size(i)))
        return self.adj.pop(i, None)

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

from ..numpy.active import Active
from ..optable.recorded import Rec, Unsupported, vjp_of
from ..optable.registry import operands


def _active_records(frozen, lo, hi, seeds):
    """Boolean per record ``lo..hi``: it depends on a record in ``seeds``."""
    active = np.zeros(hi + 1 - lo, bool)
    for s in seeds:
        active[s - lo] = True
    for i in range(lo, hi + 1):
        if not active[i - lo]:
            active[i - lo] = any(j >= lo and active[j - lo] for j in operands(frozen, i))
    return active


def _value(frozen, t, i):
    return Active(t, i, frozen.val[frozen.off[i]:frozen.off[i + 1]])


def rollback(t, n, pool):
    """Drop the records from ``n`` on and the pool from ``pool`` on (an attempt undone)."""
    del t.entries[n << 5:]
    for d in (t.arrays, t.shapes):
        for i in [i for i in d if i >= n]:
            del d[i]
    del t.pool[pool:]


def reverse(t, lo, seeds, outputs):
    """The adjoints of ``seeds`` (record ids >= ``lo``) in ``sum <w, v_y>`` over the
    ``outputs`` ``(y, w)`` (``w`` the cotangent of record ``y``: flat, its size, active or
    plain), recorded on the open tape ``t``: one flat active value per seed (None where no
    derivative reaches it), or None if a record between them has no NumPy rule (nothing is
    then recorded)."""
    frozen = t.freeze()
    frozen.pool = frozen.pool.copy()  # a view of t's pool would stop it growing
    y = max(i for i, _ in outputs)
    active = _active_records(frozen, lo, y, seeds)
    visit = [i for i in range(y, lo - 1, -1) if active[i - lo]]
    rules = {int(frozen.op[i]): vjp_of(int(frozen.op[i])) for i in visit if i not in seeds}
    if any(r is None for r in rules.values()):
        return None
    n, pool = t.n, len(t.pool)
    try:
        with np.errstate(all="ignore"):  # both branches of a where are computed
            adj = _sweep(t, frozen, lo, visit, rules, outputs, active, set(seeds))
    except Unsupported:
        rollback(t, n, pool)
        return None
    return [adj.get(s) for s in seeds]


def _sweep(t, frozen, lo, visit, rules, outputs, active, seeds):
    adj = {}
    for i, w in outputs:
        adj[i] = w if i not in adj else adj[i] + w
    for i in visit:
        if i in seeds:  # the seeds keep their adjoints: the sweep stops there
            continue
        g = adj.pop(i, None)
        if g is None:
            continue
        ids, off = operands(frozen, i), frozen.off
        need = [lo <= j and active[j - lo] for j in ids]
        r = Rec([_value(frozen, t, j) for j in ids], [int(off[j + 1] - off[j]) for j in ids],
                need, _value(frozen, t, i), int(off[i + 1] - off[i]), int(frozen.k[i]),
                float(frozen.c[i]), frozen.pool,
                [frozen.val[off[j]:off[j + 1]] for j in ids])
        for j, d in zip(ids, rules[int(frozen.op[i])](r, g)):
            if d is None or j < lo or not active[j - lo]:
                continue  # (a record before lo is a constant of this derivative)
            adj[j] = d if j not in adj else adj[j] + d
    return adj

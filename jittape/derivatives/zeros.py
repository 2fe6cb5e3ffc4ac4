"""Absolute zeros: the records of a tape that no input changes once ``0 * v`` is taken to be
``0`` for every ``v``.

CppAD records ``x * p`` as the parameter zero when ``p`` is identically zero (and offers
``azmul``, its *absolute zero multiplication*: Bell, CppAD documentation, "azmul"); CasADi's
SX graphs simplify ``x * 0`` to ``0`` while they are built. Both are exact for finite ``v``
only: in IEEE arithmetic ``inf * 0`` and ``nan * 0`` are nan. cmpad's ``an_ode`` shows what
it buys: its output is a chain of such products, identically zero at cmpad's size, and a
tape that folds them needs no sweep at all (:meth:`jittape.Tape.optimize` with
``absolute_zero=True``, which folds the records found here into constants).

The analysis propagates, per record, which of its elements may change with the inputs (the
*value* dependence, forward over the records; Griewank & Walther, "Evaluating
Derivatives", 2nd ed., sec. 7.1, index domains, with values in place of derivatives):

* an INPUT's elements all may, a CONST's none;
* an elementwise op's element may if one of its operands' elements may, except an operand
  whose partial derivative is another operand ``r`` by name (``mul``: ``dz/dx = y``) where
  ``r``'s element is input-independent and recorded as zero, or the immediate ``c`` (``x *
  c``) at ``c == 0``: a zero partial for every input means the element does not change
  with that operand (``z = x r + g(r)``). Partials equal to ``"0.0"`` do not make an
  operand irrelevant here: a piecewise-constant value (``floor``, a comparison) still
  changes;
* a structured op's elements follow its ``pattern`` rule where the entry says the rule
  bounds values too (:attr:`jittape.optable.entry.Op.value_pattern`: slices, gathers,
  concatenations, reductions, scans, views, matrix products with a constant's zeros); any
  other structured op's elements all may change if any operand element may.

A record none of whose elements may change, and that reads an element that may (records of
constants only are constant folding's), is returned: its value is its recorded one for
every finite input, up to the sign of a zero.
"""

import numpy as np

from ..optable.registry import OPS, operand_lists
from ..optable.entry import CALL, LEAF, REGION

_NAMES = "xyq"  # elementwise operands' names in the partial expressions, in operand order


def absolute_zeros(t):
    """The ids of the records of tape arrays ``t`` (:class:`jittape.tape.arrays.TapeArrays`)
    whose values no input changes when ``0 * v`` is ``0`` (see the module docstring), in
    record order; guards are never listed (the optimizer removes those whose operands it
    folds). Nothing for a tape holding regions (custom rules, checkpoints), which the optimizer
    leaves as they are."""
    if {OPS[c].kind for c in set(t.op.tolist())} & {REGION, CALL}:
        return []
    reads, off = operand_lists(t), t.off
    may = [None] * t.n_records  # per record: bool array of the elements that may change
    for i in t.inputs:
        may[i] = np.ones(int(off[i + 1] - off[i]), bool)
    found = []
    for i in range(t.n_records):
        op = OPS[int(t.op[i])]
        ids = reads[i]
        if op.kind == LEAF or all(may[j] is None for j in ids):
            continue
        size = int(off[i + 1] - off[i])
        if op.elementwise:
            m = _elementwise(t, i, op, ids, may, size)
        elif op.value_pattern:
            m = _patterned(t, i, op, ids, may, size)
        else:
            m = np.ones(size, bool)
        if m.any() or size == 0:
            may[i] = m
        elif not op.checks:
            found.append(i)
    return found


def _values(t, j, size):
    """Record ``j``'s recorded value broadcast to ``size`` elements (size-1 operands)."""
    v = t.val[t.off[j]:t.off[j + 1]]
    return np.broadcast_to(v, (size,)) if v.shape[0] != size else v


def _elementwise(t, i, op, ids, may, size):
    masks = [np.zeros(size, bool) if may[j] is None else
             np.broadcast_to(may[j], (size,)) for j in ids]
    out = np.zeros(size, bool)
    for q, j in enumerate(ids):  # (a select's condition has no partial: it still counts)
        partial = op.partials[q] if q < len(op.partials) else "0.0"
        if may[j] is None or (partial == "c" and op.uses_c and t.c[i] == 0.0):
            continue
        m = masks[q]
        r = _NAMES.find(partial) if len(partial) == 1 else -1
        if 0 <= r < len(ids) and r != q:  # dz/dx = r: no change where r is a constant zero
            m = m & (masks[r] | (_values(t, ids[r], size) != 0.0))
        out |= m
    return out


def _patterned(t, i, op, ids, may, size):
    sizes = [int(t.off[j + 1] - t.off[j]) for j in ids]
    consts = [t.val[t.off[j]:t.off[j + 1]] if may[j] is None else None for j in ids]
    pairs = op.pattern(size, sizes, int(t.k[i]), t.pool, consts)
    out = np.zeros(size, bool)
    for j, pq in zip(ids, pairs):
        if pq is not None and may[j] is not None:
            rows, cols = pq
            out[np.asarray(rows)[may[j][np.asarray(cols, dtype=np.int64)]]] = True
    return out

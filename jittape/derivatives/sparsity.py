"""Jacobian sparsity patterns of recorded tapes, propagated as index sets over the records.

Each record's elements get the set of input elements they depend on, the forward
index-domain propagation of ADOL-C's and CppAD's ``for_jac_sparsity`` (Griewank & Walther,
"Evaluating Derivatives", 2nd ed., SIAM 2008, sec. 7.1). The sets of record ``i`` form a
boolean ``scipy.sparse`` CSR array ``S_i`` of shape ``(size_i, n_inputs)`` (row = element,
column = input element), and a record's sets are sparse products of its op's local
pattern with its operands' sets, ``S_z = sum_q P_q @ S_q`` (boolean: sums are unions), so
the work is vectorised per record, not per element. The local patterns come from the op
table only:

* leaves: an INPUT's element ``j`` depends on ``{j}`` (columns of all inputs concatenated
  in input order); a CONST on nothing;
* elementwise ops (every kind): each result element depends on the corresponding element
  of each operand whose partial is not the literal ``"0.0"`` (compare ops contribute
  nothing); a size-1 operand broadcasts;
* structured ops: the entry's ``pattern`` rule (:mod:`jittape.optable.rules.patterns`); an op
  without one is dense (every result element depends on every element of its operands),
  which may be pessimistic but never misses a dependency; an op with no tangent rule
  (guards, argmax) contributes nothing, as its derivative is zero.

A record whose set is empty (``None`` here) has a value that no input changes, so rules may
use it (a constant matrix's zeros in a product).
"""

import numpy as np

from ..optable.table import OPS, operands


def scipy_sparse():
    import scipy.sparse as sp  # here, not at import: SciPy doubles `import jittape`
    return sp


def _union(mats):
    mats = [s for s in mats if s is not None]
    if not mats:
        return None
    out = mats[0]
    for s in mats[1:]:
        out = out + s
    return out if out.nnz else None


def broadcast_rows(s, n):
    """``s`` (one row, or rows to be merged) repeated as ``n`` rows: every row the union of
    ``s``'s rows (exact for a size-1 operand, conservative otherwise)."""
    sp = scipy_sparse()
    cols = np.unique(s.indices)
    rows = np.repeat(np.arange(n), cols.size)
    return sp.csr_array((np.ones(rows.size, bool), (rows, np.tile(cols, n))),
                        shape=(n, s.shape[1]))


def _elementwise(op, n, ids, sets):
    parts = []
    for j, partial in zip(ids, op.partials):
        s = sets[j]
        if partial == "0.0" or s is None:
            continue
        parts.append(s if s.shape[0] == n else broadcast_rows(s, n))
    return _union(parts)


def _structured(op, t, i, n, ids, sets):
    if op.tangent is None:  # no derivative flows (guards, argmax)
        return None
    if op.pattern is None:  # no rule: dense over every operand, never missing a pair
        return _union([broadcast_rows(sets[j], n) for j in ids if sets[j] is not None])
    sizes = [int(t.off[j + 1] - t.off[j]) for j in ids]
    consts = [t.val[t.off[j]:t.off[j + 1]] if sets[j] is None else None for j in ids]
    pairs = op.pattern(n, sizes, int(t.k[i]), t.pool, consts)
    sp, parts = scipy_sparse(), []
    for j, size, pq in zip(ids, sizes, pairs):
        if pq is None or sets[j] is None:
            continue
        rows, cols = pq
        p = sp.csr_array((np.ones(len(rows), bool), (rows, cols)), shape=(n, size))
        parts.append(p @ sets[j])
    return _union(parts)


def _needed(t, out_id):
    """Which records the output depends on (a backward reachability pass)."""
    need = np.zeros(out_id + 1, bool)
    need[out_id] = True
    for i in range(out_id, -1, -1):
        if need[i]:
            for j in operands(t, i):
                need[j] = True
    return need


def index_sets(tape):
    """Every needed record's index set: a list, by record id up to the output, of ``(size_i,
    n_in)`` boolean CSR arrays (None for a record no input changes or the output does not
    need), and ``n_in`` (all inputs' elements, concatenated in input order)."""
    sp, t = scipy_sparse(), tape.arrays
    sizes = [int(t.off[i + 1] - t.off[i]) for i in t.inputs]
    n_in = int(sum(sizes))
    if tape.out_id < 0:
        return [], n_in
    sets = [None] * (tape.out_id + 1)
    start = 0
    for i, size in zip(t.inputs, sizes):
        if i <= tape.out_id:
            sets[i] = sp.csr_array((np.ones(size, bool), np.arange(start, start + size),
                                    np.arange(size + 1)), shape=(size, n_in))
        start += size
    need = _needed(t, tape.out_id)
    for i in range(tape.out_id + 1):
        op = OPS[int(t.op[i])]
        if not need[i] or op.kind == "leaf":
            continue
        n, ids = int(t.off[i + 1] - t.off[i]), operands(t, i)
        sets[i] = (_elementwise(op, n, ids, sets) if op.elementwise
                   else _structured(op, t, i, n, ids, sets))
    return sets, n_in


def canonical(s, shape):
    """``s`` (or an empty pattern for None) as a boolean CSR array with sorted, unique
    indices."""
    sp = scipy_sparse()
    if s is None:
        return sp.csr_array(shape, dtype=bool)
    s = sp.csr_array(s, dtype=bool)
    s.sum_duplicates()
    s.sort_indices()
    return s


def propagate(tape):
    """The ``(m, n)`` boolean CSR pattern of the tape's flattened output w.r.t. all its
    inputs (concatenated in input order): entry ``(i, j)`` is True where output element
    ``i`` may depend on input element ``j``. Not cached (see :func:`jacobian_sparsity`)."""
    sets, n_in = index_sets(tape)
    m = int(np.prod(tape.out_shape))
    return canonical(sets[tape.out_id] if sets else None, (m, n_in))


def jacobian_sparsity(tape):
    """The tape's Jacobian pattern (:func:`propagate`), computed once and kept on the tape."""
    if getattr(tape, "_jac_pattern", None) is None:
        tape._jac_pattern = propagate(tape)
    return tape._jac_pattern


def jacobian_coloring(tape):
    """``(pattern, colors)``: the pattern and its column coloring
    (:func:`jittape.derivatives.coloring.color_columns`), both computed once and kept on the
    tape."""
    from .coloring import color_columns
    pattern = jacobian_sparsity(tape)
    if getattr(tape, "_jac_colors", None) is None:
        tape._jac_colors = color_columns(pattern)
    return pattern, tape._jac_colors

"""Hessian sparsity patterns of recorded tapes: nonlinear interactions of the index sets.

The Hessian of a weighted sum of the outputs, ``w^T f(x)`` (any ``w``: the Lagrangian's
constraint part too), can have a nonzero at ``(j, l)`` only if some record is nonlinear in a way
that couples a value depending on input ``j`` with one depending on input ``l``. So the pattern
is the union, over the records the output needs, of their nonlinear interactions between the
index sets of :mod:`jittape.derivatives.sparsity` (Walther, "Computing sparse Hessians with
automatic differentiation", ACM TOMS 34(1), 2008, art. 3; Griewank & Walther, "Evaluating
Derivatives", 2nd ed., SIAM 2008, sec. 7.2). Per record, from the op table only:

* elementwise ops: operands ``a`` and ``b`` (``a == b`` allowed) interact where the second
  partial ``d^2 z / da db`` is not identically zero, found by differentiating the entry's
  partial expressions (:mod:`jittape.optable.symbolic`; the total derivative, through ``z`` too).
  Element ``e`` adds ``S_a[e]^T S_b[e]``: ``S_a^T S_b`` for the record (``x * y`` pairs
  ``x``'s inputs with ``y``'s, ``x + y`` nothing). An op whose partials call a function of
  unknown derivative pairs every two operands;
* structured ops: ``second == "linear"`` (slices, sums, sorts) adds nothing; a bilinear
  op's ``second_pattern`` gives the operand elements that pair (matmul: ``X[:, t]`` with
  ``Y[t, :]``); any other op adds ``S_z^T S_z`` (every two inputs one result element
  depends on), which may be pessimistic but never misses a pair; ops with no tangent
  (guards, argmax) add nothing.

The result is symmetric, with the diagonal where ``d^2 / dx_j^2`` may be nonzero.
"""

import functools

import numpy as np

from ..optable import symbolic
from ..optable.table import OPS, operands
from .sparsity import broadcast_rows, scipy_sparse, canonical, index_sets


@functools.lru_cache(maxsize=None)
def _rules():
    return symbolic.call_rules(OPS)


def _nonzero(p, var):
    return p != "0.0" and symbolic.partial(p, var, _rules()) is not None


@functools.lru_cache(maxsize=None)
def elementwise_pairs(code):
    """The operand positions ``(a, b)``, ``a <= b``, whose second partial of the elementwise
    op ``code`` may be nonzero: ``d p_a / d b + d p_a / d z * p_b`` not identically 0."""
    op = OPS[code]
    ps, names = op.partials, "xyq"
    pairs = []
    for a in range(len(ps)):
        for b in range(a, len(ps)):
            try:
                hit = (_nonzero(ps[a], names[b]) or _nonzero(ps[b], names[a]) or
                       (ps[b] != "0.0" and _nonzero(ps[a], "z")) or
                       (ps[a] != "0.0" and _nonzero(ps[b], "z")))
            except symbolic.NoRule:  # unknown derivative: assume they interact
                hit = ps[a] != "0.0" and ps[b] != "0.0"
            if hit:
                pairs.append((a, b))
    return tuple(pairs)


def _outer(sa, sb, n):
    """``sum_e S_a[e]^T S_b[e]`` over the record's ``n`` elements, a size-1 operand
    broadcasting (its one row against the union of the other's rows)."""
    if sa.shape[0] == sb.shape[0]:
        return sa.T @ sb
    if sa.shape[0] == 1:
        return sa.T @ broadcast_rows(sb, 1)
    if sb.shape[0] == 1:
        return broadcast_rows(sa, 1).T @ sb
    return broadcast_rows(sa, n).T @ broadcast_rows(sb, n)


def _elementwise(op, n, ids, sets):
    out = []
    for a, b in elementwise_pairs(op.code):
        sa, sb = sets[ids[a]], sets[ids[b]]
        if sa is not None and sb is not None:
            out.append(_outer(sa, sb, n))
    return out


def _grouped(op, t, i, ids, sets):
    """A bilinear op: the elements of its operands that share a group pair."""
    sp = scipy_sparse()
    sizes = [int(t.off[j + 1] - t.off[j]) for j in ids]
    ngroups, members = op.second_pattern(int(t.off[i + 1] - t.off[i]), sizes, int(t.k[i]),
                                         t.pool, [None] * len(ids))
    unions = []
    for j, size, (groups, elements) in zip(ids, sizes, members):
        if sets[j] is None:
            unions.append(None)
            continue
        g = sp.csr_array((np.ones(len(groups), bool), (groups, elements)),
                         shape=(ngroups, size))
        unions.append(g @ sets[j])
    if unions[0] is None or unions[1] is None:
        return []
    return [unions[0].T @ unions[1]]


def _structured(op, t, i, ids, sets):
    if op.tangent is None or op.second == "linear" or sets[i] is None:
        return []
    if op.second_pattern is not None:
        return _grouped(op, t, i, ids, sets)
    return [sets[i].T @ sets[i]]


def hessian_pattern(tape):
    """The ``(n, n)`` symmetric boolean CSR pattern of the Hessian of any weighted sum of
    the tape's outputs w.r.t. all its inputs (flattened, concatenated in input order).
    Not cached (see :func:`hessian_sparsity`)."""
    sp, t = scipy_sparse(), tape.arrays
    sets, n_in = index_sets(tape)
    rows, cols = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for i, s in enumerate(sets):
        op = OPS[int(t.op[i])]
        if s is None or op.kind == "leaf":
            continue
        ids = operands(t, i)
        parts = (_elementwise(op, int(t.off[i + 1] - t.off[i]), ids, sets) if op.elementwise
                 else _structured(op, t, i, ids, sets))
        for h in parts:
            h = sp.coo_array(h)
            rows += [h.row, h.col]
            cols += [h.col, h.row]  # symmetric: (j, l) and (l, j)
    r, c = np.concatenate(rows), np.concatenate(cols)
    h = sp.csr_array((np.ones(r.size, bool), (r, c)), shape=(n_in, n_in))
    return canonical(h, (n_in, n_in))


def hessian_sparsity(tape):
    """The tape's Hessian pattern (:func:`hessian_pattern`), computed once, kept on the tape."""
    if getattr(tape, "_hess_pattern", None) is None:
        tape._hess_pattern = hessian_pattern(tape)
    return tape._hess_pattern


def hessian_coloring(tape):
    """``(pattern, colors, recovery)``: the Hessian pattern, its star coloring
    (:func:`jittape.derivatives.coloring.star_coloring`) and where each nonzero is read in the
    compressed Hessian (:func:`jittape.derivatives.coloring.symmetric_recovery`), computed once and
    kept on the tape."""
    from .coloring import star_coloring, symmetric_recovery
    pattern = hessian_sparsity(tape)
    if getattr(tape, "_hess_colors", None) is None:
        colors = star_coloring(pattern)
        tape._hess_colors = colors, symmetric_recovery(pattern, colors)
    return (pattern,) + tape._hess_colors

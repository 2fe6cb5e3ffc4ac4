"""Jacobian sparsity rules of structured ops: the ``pattern`` of their op table entries.

A rule ``pattern(n, sizes, k, pool, consts)`` (convention in :mod:`jittape.optable.entry`)
lists, per operand, the pairs ``(rows, cols)`` (result element, operand element) whose partial
derivative may be nonzero at some point: a superset of the nonzeros of the record's local
Jacobian, never missing one, independent of the operands' values except those in ``consts``
(operands whose value does not depend on the inputs, fixed on replay). This is the index-domain
propagation of ADOL-C's and CppAD's ``for_jac_sparsity`` (Griewank & Walther, "Evaluating
Derivatives", 2nd ed., SIAM 2008, sec. 7.1), written per op over whole arrays.
:mod:`jittape.derivatives.sparsity` turns the pairs into sparse matrices and propagates.
"""

import numpy as np


def _layout(pool, k, count):
    return [int(v) for v in pool[k:k + count]]


def slice_pattern(n, sizes, k, pool, consts):
    """z[j] = x[k + j]."""
    j = np.arange(n)
    return [(j, k + j)]


def gather_pattern(n, sizes, k, pool, consts):
    """z[j] = x[pool[k + j]]."""
    return [(np.arange(n), np.asarray(pool[k:k + n], dtype=np.int64))]


def strided_positions(pool, k):
    """The positions in the operand of the elements of a strided view (C order)."""
    nd, start = _layout(pool, k, 2)
    shape, strides = _layout(pool, k + 2, nd), _layout(pool, k + 2 + nd, nd)
    pos = np.full(shape, start, dtype=np.int64)
    for d, (e, s) in enumerate(zip(shape, strides)):
        pos += (np.arange(e, dtype=np.int64) * s).reshape((e,) + (1,) * (nd - d - 1))
    return pos.ravel()


def strided_pattern(n, sizes, k, pool, consts):
    """z[j] = x[start + sum_d i_d(j) * strides[d]]."""
    return [(np.arange(n), strided_positions(pool, k))]


def concat_pattern(n, sizes, k, pool, consts):
    """Part ``q`` (width ``w``, offset ``s`` in a result row of ``total``): z[r, s + j] =
    part[r, j] for each of the ``outer`` rows."""
    nparts, outer = _layout(pool, k, 2)
    widths = np.asarray(pool[k + 3:k + 2 + 2 * nparts:2], dtype=np.int64)
    total, starts = int(widths.sum()), np.cumsum(widths) - widths
    pairs = []
    for w, s in zip(widths.tolist(), starts.tolist()):
        r, j = np.divmod(np.arange(outer * w), max(w, 1))
        pairs.append((r * total + s + j, r * w + j))
    return pairs


def _lines(outer, m, inner):
    """``(outer * inner, m)`` operand indices of the lines along the middle axis of an
    ``(outer, m, inner)`` C-ordered block: row ``r * inner + q`` is ``x[r, :, q]``."""
    r, q = np.divmod(np.arange(outer * inner), max(inner, 1))
    return (r * m * inner + q)[:, None] + np.arange(m)[None, :] * inner


def reduction_pattern(n, sizes, k, pool, consts):
    """z[r, q] depends on x[r, t, q] for all t (sum, prod, max, min: ties and zeros move
    with the point, so the whole line)."""
    outer, m, inner = _layout(pool, k, 3)
    idx = _lines(outer, m, inner)
    return [(np.repeat(np.arange(outer * inner), m), idx.ravel())]


def scan_pattern(n, sizes, k, pool, consts):
    """cumsum, cumprod: z[r, t, q] depends on x[r, s, q] for s <= t."""
    outer, m, inner = _layout(pool, k, 3)
    idx = _lines(outer, m, inner)
    t, s = np.tril_indices(m)
    return [(idx[:, t].ravel(), idx[:, s].ravel())]


def sort_pattern(n, sizes, k, pool, consts):
    """z[r, t, q] depends on every x[r, s, q] (the permutation moves with the point); the
    stored permutation (the second half of the value) on nothing."""
    outer, m, inner = _layout(pool, k, 3)
    idx = _lines(outer, m, inner)
    t, s = (a.ravel() for a in np.indices((m, m)))
    return [(idx[:, t].ravel(), idx[:, s].ravel())]


def matmul_pattern(n, sizes, k, pool, consts):
    """Z[q, i, j] = sum_t X[q, i, t] Y[q, t, j]: dZ[i, j]/dX[i, t] = Y[t, j] and
    dZ[i, j]/dY[t, j] = X[i, t], so with a constant operand only its nonzeros count
    (``A @ x`` with a banded constant ``A`` has a banded Jacobian)."""
    m, kk, nn, batch = _layout(pool, k, 4)
    q, i, t, j = (a.ravel() for a in np.indices((batch, m, kk, nn)))
    rows = (q * m + i) * nn + j
    xa, yb = (q * m + i) * kk + t, (q * kk + t) * nn + j
    x, y = (list(consts) + [None, None])[:2]
    keep_x = np.ones(rows.size, bool) if y is None else y[yb] != 0.0
    keep_y = np.ones(rows.size, bool) if x is None else x[xa] != 0.0
    return [(rows[keep_x], xa[keep_x]), (rows[keep_y], yb[keep_y])]


def matmul_pairs(n, sizes, k, pool, consts):
    """Z = X Y is bilinear: its second derivatives pair X[q, i, t] with Y[q, t, j] only (all
    ``i``, ``j``), never two elements of one operand. Returns the number of groups and, per
    operand, the ``(groups, elements)`` membership: group ``(q, t)`` holds X[q, :, t] and
    Y[q, t, :], and the elements of the two operands in one group pair."""
    m, kk, nn, batch = _layout(pool, k, 4)
    q, i, t = (a.ravel() for a in np.indices((batch, m, kk)))
    xs = (q * kk + t, (q * m + i) * kk + t)
    q, t, j = (a.ravel() for a in np.indices((batch, kk, nn)))
    ys = (q * kk + t, (q * kk + t) * nn + j)
    return batch * kk, [xs, ys]

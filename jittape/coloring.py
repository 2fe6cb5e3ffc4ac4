"""Column coloring of a Jacobian sparsity pattern, for compressed Jacobian evaluation.

Columns of the same color share no row (they are *structurally orthogonal*), so one
Jacobian-vector product with the seed ``sum of the color's unit vectors`` yields all of
their columns at once: entry ``(i, j)`` is row ``i`` of the product of ``j``'s color.
The coloring is the sequential greedy algorithm of Curtis, Powell & Reid, "On the
estimation of sparse Jacobian matrices", J. Inst. Math. Appl. 13 (1974) 117-119: columns
in their natural order, each given the smallest color not used by a column it shares a
row with, i.e. a greedy coloring of the column intersection graph ``P^T P`` (Coleman &
Moré, "Estimation of sparse Jacobian matrices and graph coloring problems", SIAM J. Numer.
Anal. 20 (1983) 187-209). The natural order is optimal for banded patterns (a band of
width ``w`` gets ``w`` colors: 3 for a tridiagonal Jacobian).
"""

import numpy as np

MAX_GRAPH = 50_000_000  # entries of P^T P beyond which every column gets its own color


def color_columns(pattern, max_graph=MAX_GRAPH):
    """Colors of the columns of a sparsity pattern.

    Parameters
    ----------
    pattern : scipy.sparse array or matrix, shape (m, n)
        The nonzeros (any dtype; explicit entries count as nonzero).
    max_graph : int
        A bound on the size of the column intersection graph: when ``sum_i nnz(row_i)^2``
        exceeds it (long rows, which force as many colors as their length anyway), the
        graph is not formed and column ``j`` gets color ``j`` (no compression).

    Returns
    -------
    ndarray of int64, shape (n,)
        ``colors[j]`` in ``0 .. ncolors-1``; no two columns sharing a row have the same
        color. Columns with no nonzero get color 0.
    """
    import scipy.sparse as sp
    p = sp.csr_array(pattern, dtype=bool)
    n = p.shape[1]
    row_len = np.diff(p.indptr).astype(np.float64)
    if float(row_len @ row_len) > max_graph:
        return np.arange(n, dtype=np.int64)
    g = sp.csr_array(p.T @ p)  # columns j, l adjacent when they share a row
    indptr, indices = g.indptr, g.indices
    colors = np.full(n, -1, dtype=np.int64)
    ncolors = 0
    for j in range(n):
        nb = colors[indices[indptr[j]:indptr[j + 1]]]
        used = np.zeros(ncolors + 1, bool)
        used[nb[nb >= 0]] = True
        c = int(np.argmin(used))  # the smallest free color (used[ncolors] is False)
        colors[j] = c
        ncolors = max(ncolors, c + 1)
    return colors

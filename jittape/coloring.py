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

The graph is never formed: a small Numba kernel visits, for column ``j``, the rows of
``j`` and the columns of those rows (distance-2 neighbours in the bipartite row/column
graph, as ColPack's ``PartialD2Coloring`` does; Gebremedhin, Manne & Pothen, SIAM Review
47 (2005) 629-705), marking their colors in one array stamped with ``j``. Memory is the
pattern's plus ``O(n)``; time is ``sum_i nnz(row_i)^2`` visits (about 1-3 ns each).
"""

import numpy as np

from . import jitcache

#: ``sum_i nnz(row_i)^2`` beyond which the coloring is not tried (every column its own
#: color): about half a minute of coloring at the kernel's rate
MAX_GRAPH = 10_000_000_000

_KERNEL = '''
import numpy as np
from numba import njit


@njit(cache={cache}, nogil=True)
def greedy_columns(row_ptr, row_cols, col_ptr, col_rows, n):
    """Greedy distance-2 column coloring in natural order (jittape.coloring)."""
    colors = np.full(n, -1, np.int64)
    stamp = np.full(n + 1, -1, np.int64)  # stamp[c] == j: a neighbour of j has color c
    for j in range(n):
        for a in range(col_ptr[j], col_ptr[j + 1]):
            r = col_rows[a]
            for b in range(row_ptr[r], row_ptr[r + 1]):
                c = colors[row_cols[b]]
                if c >= 0:
                    stamp[c] = j
        c = 0
        while stamp[c] == j:
            c += 1
        colors[j] = c
    return colors
'''


def _kernel():
    module = jitcache.load("jittape_coloring", lambda cache: _KERNEL.format(cache=cache))
    fn = module.greedy_columns
    if fn.signatures:
        return fn
    return jitcache.FirstCall(module, "greedy_columns", "the column-coloring kernel")


def color_columns(pattern, max_graph=MAX_GRAPH):
    """Colors of the columns of a sparsity pattern.

    Parameters
    ----------
    pattern : scipy.sparse array or matrix, shape (m, n)
        The nonzeros (any dtype; explicit entries count as nonzero).
    max_graph : int
        A bound on the coloring's work, the size of the column intersection graph
        ``sum_i nnz(row_i)^2``: beyond it column ``j`` gets color ``j`` (no
        compression), as it does when a row is full (the greedy coloring then gives
        every column its own color anyway).

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
    if n == 0 or float(row_len @ row_len) > max_graph or row_len.max(initial=0) >= n:
        return np.arange(n, dtype=np.int64)
    p.sum_duplicates()
    c = sp.csc_array(p)
    return _kernel()(p.indptr.astype(np.int64), p.indices.astype(np.int64),
                     c.indptr.astype(np.int64), c.indices.astype(np.int64), n)

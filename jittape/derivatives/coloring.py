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

from ..sweeps import disk_cache

#: ``sum_i nnz(row_i)^2`` beyond which the coloring is not tried (every column its own
#: color): about half a minute of coloring at the kernel's rate
MAX_GRAPH = 10_000_000_000
#: ``sum of degree^2`` beyond which :func:`star_coloring` (Python) colors as a Jacobian's
STAR_MAX_WORK = 20_000_000

_KERNEL = '''
import numpy as np
from numba import njit


@njit(cache={cache}, nogil=True)
def greedy_columns(row_ptr, row_cols, col_ptr, col_rows, n):
    """Greedy distance-2 column coloring in natural order (jittape.derivatives.coloring)."""
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
    module = disk_cache.load("jittape_coloring", lambda cache: _KERNEL.format(cache=cache))
    fn = module.greedy_columns
    if fn.signatures:
        return fn
    return disk_cache.FirstCall(module, "greedy_columns", "the column-coloring kernel")


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


def _star_forbidden(v, adj, color, counts):
    """Colors ``v`` may not take in a star coloring, given the colored vertices: its
    neighbors' colors (distance 1), and every color that would close a two-colored path on
    four vertices through ``v``: as an end, ``v - w - x - y`` with ``x`` of the candidate
    color and ``x`` having a second neighbor of ``w``'s color; in the middle, ``x - v - w - y``
    with ``x`` and ``w`` of one color and ``y`` of the candidate color."""
    forbidden, seen = set(), {}
    for w in adj[v]:
        a = color[w]
        if a < 0:
            continue
        forbidden.add(a)
        seen.setdefault(a, []).append(w)
        for x in adj[w]:
            if x != v and color[x] >= 0 and counts[x].get(a, 0) >= 2:
                forbidden.add(color[x])
    for ws in seen.values():
        if len(ws) >= 2:  # v would be the middle of a path x - v - w - y
            for w in ws:
                forbidden.update(color[y] for y in adj[w] if y != v and color[y] >= 0)
    return forbidden


def star_coloring(pattern, max_work=STAR_MAX_WORK):
    """A star coloring of the adjacency graph of a symmetric sparsity pattern, for
    compressed Hessian evaluation with direct recovery.

    A star coloring is a distance-1 coloring in which every path on four vertices uses at least
    three colors; then every nonzero ``H[i, j]`` is read directly from one product ``H s_c`` of
    ``H`` with a color's seed (Coleman & Moré, "Estimation of sparse Hessian matrices and graph
    coloring problems", Math. Program. 28 (1984) 243-270; Gebremedhin, Manne & Pothen, "What
    color is your Jacobian? Graph coloring for computing derivatives", SIAM Rev. 47 (2005)
    629-705, sec. 4). Greedy, vertices in natural order, each given the smallest color that
    closes no two-colored four-vertex path among the vertices colored so far (a band of
    half-width ``w`` gets ``2w + 1`` colors, 3 when tridiagonal, as a distance-2 coloring does;
    irregular patterns get fewer: 11-13 instead of 17-18 on random symmetric 60 x 60 patterns of
    5 % density). The result is checked (:func:`symmetric_recovery`); should the check fail, or
    the graph be too large (``sum of degree^2 > max_work``), the columns are colored as a
    Jacobian's instead (:func:`color_columns`: distance-2, always direct).

    Parameters
    ----------
    pattern : scipy.sparse array, shape (n, n)
        A symmetric pattern (the diagonal may be present or not).

    Returns
    -------
    ndarray of int64, shape (n,)
    """
    import scipy.sparse as sp
    p = sp.csr_array(pattern, dtype=bool)
    n = p.shape[0]
    deg = np.diff(p.indptr).astype(np.float64)
    if float(deg @ deg) > max_work:
        return color_columns(p)
    adj = [[int(u) for u in p.indices[p.indptr[v]:p.indptr[v + 1]] if u != v]
           for v in range(n)]
    color = [-1] * n
    counts = [{} for _ in range(n)]  # per vertex: colored neighbors per color
    for v in range(n):
        forbidden = _star_forbidden(v, adj, color, counts)
        c = 0
        while c in forbidden:
            c += 1
        color[v] = c
        for w in adj[v]:
            counts[w][c] = counts[w].get(c, 0) + 1
    colors = np.asarray(color, dtype=np.int64)
    if symmetric_recovery(p, colors) is None:
        return color_columns(p)
    return colors


def symmetric_recovery(pattern, colors):
    """Where each nonzero of a symmetric pattern is read in the compressed Hessian
    ``B = H S`` (``S[:, c]`` the seed of color ``c``), or None if ``colors`` does not allow
    direct recovery.

    ``H[i, j]`` is ``B[i, colors[j]]`` when ``j`` is the only column of its color in row
    ``i``, else ``B[j, colors[i]]`` when ``i`` is the only one of its color in row ``j``
    (Coleman & Moré 1984, sec. 2; always one of the two for a star coloring).

    Returns
    -------
    (rows, cols) : two ndarrays of int64, shape (nnz,)
        For the nonzeros in the CSR order of ``pattern``: their entries of ``B``.
    """
    import scipy.sparse as sp
    p = sp.csr_array(pattern, dtype=bool)
    n = p.shape[0]
    ncolors = int(colors.max()) + 1 if n else 0
    onehot = sp.csr_array((np.ones(n), (np.arange(n), colors)), shape=(n, ncolors))
    count = (p.astype(np.float64) @ onehot).toarray() if n else np.zeros((0, 0))
    i = np.repeat(np.arange(n), np.diff(p.indptr))
    j = p.indices.astype(np.int64)
    direct = count[i, colors[j]] == 1
    if not (direct | (count[j, colors[i]] == 1)).all():
        return None
    return np.where(direct, i, j), np.where(direct, colors[j], colors[i])

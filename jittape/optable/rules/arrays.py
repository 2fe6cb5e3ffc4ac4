"""Op table entries: indexing, guards, reductions, scans and sorting (structured ops).

Each op's forward, tangent and reverse kernels sit side by side; the reverse kernel is the
transpose of the tangent map. Kernel signatures and argument meanings are explained once in
:mod:`jittape.optable.entry`. Reductions, scans and sorts view their operand as
``(outer, m, inner)`` and work along the middle axis; the layout is ``pool[k:k+3]``.
"""

import math

import numpy as np

from . import patterns as P
from .array_vjps import (concat_vjp, cumprod_vjp, cumsum_vjp, extremum_vjp, gather_vjp,
                         prod_vjp, slice_vjp, sort_vjp, strided_vjp, sum_vjp)
from .prod_kernels import (cumprod_forward, cumprod_hvp, cumprod_reverse, cumprod_tangent,
                           prod_forward, prod_hvp, prod_reverse, prod_tangent)
from ..entry import Spec, bounded, pool_at, structured


# --- indexing: linear maps, so the tangent is the forward kernel applied to tangents ------
def slice_forward(val, o, n, ia, ib, k, c, pool, off):
    for j in range(n):  # z = x[k:k+n]
        val[o + j] = val[ia + k + j]


def slice_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    slice_forward(dot, o, n, ia, ib, k, c, pool, off)


def slice_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    for j in range(n):
        adj[ia + k + j] += adj[o + j]


def gather_forward(val, o, n, ia, ib, k, c, pool, off):
    for j in range(n):  # z = x[pool[k:k+n]]
        val[o + j] = val[ia + pool[k + j]]


def gather_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    gather_forward(dot, o, n, ia, ib, k, c, pool, off)


def gather_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    for j in range(n):  # the adjoint of a gather is a scatter-add
        adj[ia + pool[k + j]] += adj[o + j]


# --- strided views: z = the view of x at an offset, with a shape and strides ---------------
# pool[k:] = nd, start, shape[0:nd], strides[0:nd], in elements of x's flat value (negative
# and zero strides too: flips, broadcasting). Basic slices with steps, columns, transposes
# and flips record this (:func:`jittape.numpy.shaping.strided`), never an index array. The kernels
# walk the view in C order, one row of the last axis at a time.
def strided_row(pool, k, r):
    # the position in x of the first element of row r (rows numbered in C order)
    nd = pool[k]
    p = pool[k + 1]
    for d in range(nd - 2, -1, -1):
        ext = pool[k + 2 + d]
        p += (r % ext) * pool[k + 2 + nd + d]
        r //= ext
    return p


def strided_forward(val, o, n, ia, ib, k, c, pool, off):
    nd = pool[k]
    w, s = pool[k + 1 + nd], pool[k + 1 + 2 * nd]  # the last axis: extent and stride
    if n == 0:
        return
    for r in range(n // w):
        p = ia + strided_row(pool, k, r)
        q = o + r * w
        for j in range(w):
            val[q + j] = val[p + j * s]


def strided_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    strided_forward(dot, o, n, ia, ib, k, c, pool, off)


def strided_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    # the adjoint scattered back into the view (+=: a zero stride accumulates)
    if ca or n == 0:
        return
    nd = pool[k]
    w, s = pool[k + 1 + nd], pool[k + 1 + 2 * nd]
    for r in range(n // w):
        p = ia + strided_row(pool, k, r)
        q = o + r * w
        for j in range(w):
            adj[p + j * s] += adj[q + j]


def concat_width(pool, k):
    """The width of a concatenation's result rows: its parts' widths added."""
    total = 0
    for q in range(pool[k]):
        total += pool[k + 3 + 2 * q]
    return total


def concat_forward(val, o, n, ia, ib, k, c, pool, off):
    # pool[k:] = nparts, outer, (record, width) * nparts: rows of the parts side by side.
    # Part by part, its rows inside: the pool is read once per part, not once per row
    # (np.stack of columns has parts of width 1: BA's np.cross, 3x faster)
    nparts, outer, total = pool[k], pool[k + 1], concat_width(pool, k)
    at = o
    for q in range(nparts):
        src, w = off[pool[k + 2 + 2 * q]], pool[k + 3 + 2 * q]
        for r in range(outer):
            for j in range(w):
                val[at + r * total + j] = val[src + r * w + j]
        at += w


def concat_copies(pool, k):
    """The blocks a concatenation moves (its entry's ``copies``): ``(record, at, width,
    rows, stride)`` per part, ``z[at + r * stride + j] = part[r * width + j]``."""
    nparts, outer, total = int(pool[k]), int(pool[k + 1]), int(concat_width(pool, k))
    blocks, at = [], 0
    for q in range(nparts):
        w = int(pool[k + 3 + 2 * q])
        blocks.append((int(pool[k + 2 + 2 * q]), at, w, outer, total))
        at += w
    return blocks


def concat_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    concat_forward(dot, o, n, ia, ib, k, c, pool, off)


def concat_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    nparts, outer, total = pool[k], pool[k + 1], concat_width(pool, k)
    at = o
    for q in range(nparts):
        src, w = off[pool[k + 2 + 2 * q]], pool[k + 3 + 2 * q]
        for r in range(outer):
            for j in range(w):
                adj[src + r * w + j] += adj[at + r * total + j]
        at += w


def guard_forward(val, o, n, ia, ib, k, c, pool, off):
    # True (a failed check) when x no longer has the value the control flow was recorded at
    for j in range(n):
        if val[ia + j] != val[o + j]:
            return True
    return False


# --- reductions over the middle axis of (outer, m, inner) ---------------------------------
def sum_forward(val, o, n, ia, ib, k, c, pool, off):
    outer, m, inner = pool[k], pool[k + 1], pool[k + 2]
    for r in range(outer):
        if inner == 1 or m == 0:
            for q in range(inner):
                base = ia + r * m * inner + q
                acc = 0.0  # empty sums are 0 (and a sum of -0.0s is 0.0, as NumPy's)
                for t in range(m):
                    acc += val[base + t * inner]
                val[o + r * inner + q] = acc
            continue
        # x's rows added into z's row in memory order, the same additions in the same order
        # for each element (GMM's sum over 25 components of 1,000: 8.9 -> 1.9 us)
        z = o + r * inner
        for q in range(inner):
            val[z + q] = 0.0 + val[ia + r * m * inner + q]
        for t in range(1, m):
            base = ia + (r * m + t) * inner
            for q in range(inner):
                val[z + q] += val[base + q]


def sum_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    sum_forward(dot, o, n, ia, ib, k, c, pool, off)


def sum_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    outer, m, inner = pool[k], pool[k + 1], pool[k + 2]
    if inner == 1:  # over all elements or the last axis
        for r in range(outer):
            g = adj[o + r]
            for t in range(m):
                adj[ia + r * m + t] += g
        return
    for r in range(outer):  # xbar[r, t, q] += zbar[r, q], walking x in memory order
        for t in range(m):
            base = ia + (r * m + t) * inner
            for q in range(inner):
                adj[base + q] += adj[o + r * inner + q]


def extremum_forward(val, o, ia, k, pool, is_max):
    # NaN propagates, as np.max; empty axes are refused when recording
    outer, m, inner = pool[k], pool[k + 1], pool[k + 2]
    for r in range(outer):  # rows in memory order into z's row, as sum_forward
        z, base = o + r * inner, ia + r * m * inner
        for q in range(inner):
            val[z + q] = val[base + q]
        for t in range(1, m):
            base = ia + (r * m + t) * inner
            for q in range(inner):
                x = val[base + q]
                if x != x or (x > val[z + q] if is_max else x < val[z + q]):
                    val[z + q] = x


def extremum_spread(val, src, dst, o, ia, k, pool, to_operand):
    # the elements attaining the extremum share its derivative evenly: to_operand=False
    # gathers the tangent (src: operand tangents), True scatters the adjoint (src: result)
    outer, m, inner = pool[k], pool[k + 1], pool[k + 2]
    for r in range(outer):
        for q in range(inner):
            base = ia + r * m * inner + q
            y = val[o + r * inner + q]
            ties = 0.0
            for t in range(m):
                ties += 1.0 if val[base + t * inner] == y else 0.0
            if ties == 0.0:
                continue
            if to_operand:
                share = src[o + r * inner + q] / ties
                for t in range(m):
                    dst[base + t * inner] += share if val[base + t * inner] == y else 0.0
            else:
                acc = 0.0
                for t in range(m):
                    acc += src[base + t * inner] if val[base + t * inner] == y else 0.0
                dst[o + r * inner + q] = acc / ties


def max_forward(val, o, n, ia, ib, k, c, pool, off):
    extremum_forward(val, o, ia, k, pool, True)


def min_forward(val, o, n, ia, ib, k, c, pool, off):
    extremum_forward(val, o, ia, k, pool, False)


def extremum_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    extremum_spread(val, dot, dot, o, ia, k, pool, False)


def extremum_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    extremum_spread(val, adj, adj, o, ia, k, pool, True)


def argext_forward(val, o, ia, k, pool, is_max):
    # NumPy's convention: the first extremum wins; a NaN is the extremum
    outer, m, inner = pool[k], pool[k + 1], pool[k + 2]
    for r in range(outer):
        for q in range(inner):
            base = ia + r * m * inner + q
            best = 0
            bv = val[base]
            for t in range(1, m):
                x = val[base + t * inner]
                if bv != bv:
                    break
                if x != x or (x > bv if is_max else x < bv):
                    best = t
                    bv = x
            val[o + r * inner + q] = best


def argmax_forward(val, o, n, ia, ib, k, c, pool, off):
    argext_forward(val, o, ia, k, pool, True)


def argmin_forward(val, o, n, ia, ib, k, c, pool, off):
    argext_forward(val, o, ia, k, pool, False)


# --- scans and sorting --------------------------------------------------------------------
def cumsum_forward(val, o, n, ia, ib, k, c, pool, off):
    outer, m, inner = pool[k], pool[k + 1], pool[k + 2]
    for r in range(outer):
        for q in range(inner):
            base = r * m * inner + q
            acc = 0.0
            for t in range(m):
                acc += val[ia + base + t * inner]
                val[o + base + t * inner] = acc


def cumsum_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    cumsum_forward(dot, o, n, ia, ib, k, c, pool, off)


def cumsum_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    outer, m, inner = pool[k], pool[k + 1], pool[k + 2]
    for r in range(outer):
        for q in range(inner):
            base = r * m * inner + q
            acc = 0.0  # xbar[t] = sum_{s >= t} zbar[s]: a reversed cumsum
            for t in range(m - 1, -1, -1):
                acc += adj[o + base + t * inner]
                adj[ia + base + t * inner] += acc


def sort_forward(val, o, n, ia, ib, k, c, pool, off):
    # value layout: the sorted values (outer, m, inner), then the permutation, as floats
    outer, m, inner = pool[k], pool[k + 1], pool[k + 2]
    size = outer * m * inner
    tmp = np.empty(m)
    for r in range(outer):
        for q in range(inner):
            base = r * m * inner + q
            for t in range(m):
                tmp[t] = val[ia + base + t * inner]
            perm = np.argsort(tmp, kind="mergesort")
            for t in range(m):
                val[o + base + t * inner] = tmp[perm[t]]
                val[o + size + base + t * inner] = perm[t]


def sort_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    outer, m, inner = pool[k], pool[k + 1], pool[k + 2]
    size = outer * m * inner
    for r in range(outer):
        for q in range(inner):
            base = r * m * inner + q
            for t in range(m):
                src = int(val[o + size + base + t * inner])
                dot[o + base + t * inner] = dot[ia + base + src * inner]


def sort_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    outer, m, inner = pool[k], pool[k + 1], pool[k + 2]
    size = outer * m * inner
    for r in range(outer):
        for q in range(inner):
            base = r * m * inner + q
            for t in range(m):
                src = int(val[o + size + base + t * inner])
                adj[ia + base + src * inner] += adj[o + base + t * inner]


# --- checks of loaded tapes: why a record would make its kernel read out of bounds ---------
def slice_check(t, i, n, sa, sb):
    k = int(t.k[i])
    return "slice out of range" if k < 0 or k + n > sa else None


def strided_check(t, i, n, sa, sb):
    head = pool_at(t, int(t.k[i]), 2)
    if head is None or not 1 <= head[0] <= 64:
        return "bad strided layout"
    nd, start = head
    lay = pool_at(t, int(t.k[i]) + 2, 2 * nd)
    if lay is None:
        return "pool offset out of range"
    shape, strides = lay[:nd], lay[nd:]
    if min(shape) < 1 or math.prod(shape) != n:
        return "strided shape does not match the record"
    lo = start + sum((e - 1) * s for e, s in zip(shape, strides) if s < 0)
    hi = start + sum((e - 1) * s for e, s in zip(shape, strides) if s > 0)
    return "strided view out of range" if lo < 0 or hi >= sa else None


def gather_check(t, i, n, sa, sb):
    idx = pool_at(t, int(t.k[i]), n)
    if idx is None:
        return "pool offset out of range"
    return "gather index out of range" if n and (min(idx) < 0 or max(idx) >= sa) else None


def concat_check(t, i, n, sa, sb):
    k = int(t.k[i])
    head = pool_at(t, k, 2)
    if head is None or head[0] < 1 or head[1] < 0:
        return "bad concat layout"
    parts = pool_at(t, k + 2, 2 * head[0])
    if parts is None:
        return "pool offset out of range"
    total = 0
    for rid, w in zip(parts[::2], parts[1::2]):
        if not 0 <= rid < i or w < 0 or head[1] * w != t.off[rid + 1] - t.off[rid]:
            return "concat part does not match its record"
        total += head[1] * w
    if total != n:
        return "concat size mismatch"
    return None if bounded(t, head[1], head[0]) else "concat loops over too many parts"


def layout_check(empty_ok, factor=1):
    """A check of the (outer, m, inner) layout of a reduction (``factor`` 0) or of a scan
    whose result has ``factor`` times the operand's size."""
    def check(t, i, n, sa, sb):
        lay = pool_at(t, int(t.k[i]), 3)
        if lay is None:
            return "pool offset out of range"
        outer, m, inner = lay
        out = outer * inner if factor == 0 else factor * sa
        if min(lay) < 0 or outer * m * inner != sa or n != out or (m == 0 and not empty_ok):
            return "layout does not match the operand"
        return None if bounded(t, outer, m, inner) else "layout loops over too many elements"
    return check


def sort_check(t, i, n, sa, sb):
    why = layout_check(True, 2)(t, i, n, sa, sb)
    if why is None:  # the stored permutation is read back as indices
        perm = t.val[t.off[i] + sa:t.off[i] + n]
        m = pool_at(t, int(t.k[i]), 3)[1]
        ok = (perm >= 0) & (perm < max(m, 1)) & (perm == np.floor(perm))  # (NaN: False)
        if not ok.all():
            why = "sort permutation not of integers in range"
    return why


def guard_check(t, i, n, sa, sb):
    return "guard size differs from its operand's" if sa != n else None


_NONE = "no derivative (integer result); guarded when used"

INDEXING_OPS = [
    structured("slice", [], "z = x[k:k+n] (contiguous indexing); xbar[k:k+n] += zbar",
               slice_forward, slice_tangent, slice_reverse, fusion="slice", check=slice_check,
               second="linear", pattern=P.slice_pattern, value_pattern=True, vjp=slice_vjp),
    structured("gather", [np.take],
               "z = x[idx] (integer-array indexing, np.take); xbar[idx] += zbar "
               "(scatter-add)", gather_forward, gather_tangent, gather_reverse,
               fusion="gather", check=gather_check, second="linear",
               pattern=P.gather_pattern, value_pattern=True, vjp=gather_vjp),
    structured("concat", [np.concatenate, np.stack], "each part's xbar += its block of zbar",
               concat_forward, concat_tangent, concat_reverse, arity=-1, check=concat_check,
               second="linear", pattern=P.concat_pattern, value_pattern=True, vjp=concat_vjp,
               copies=concat_copies),
]

REDUCTION_OPS = [
    structured("sum", [np.sum, np.mean], "xbar[r, t, q] += zbar[r, q]", sum_forward,
               sum_tangent, sum_reverse, fusion="sum", check=layout_check(True, 0),
               second="linear", pattern=P.reduction_pattern, value_pattern=True, vjp=sum_vjp),
    structured("prod", [np.prod], "xbar += zbar * prod of the other factors (exact with zeros)",
               prod_forward, prod_tangent, prod_reverse, check=layout_check(True, 0),
               second=prod_hvp, pattern=P.reduction_pattern, value_pattern=True, vjp=prod_vjp),
    structured("max", [np.max, np.amax], "the maximal elements share zbar evenly",
               max_forward, extremum_tangent, extremum_reverse, check=layout_check(False, 0),
               second="linear", pattern=P.reduction_pattern, value_pattern=True, vjp=extremum_vjp),
    structured("min", [np.min, np.amin], "the minimal elements share zbar evenly",
               min_forward, extremum_tangent, extremum_reverse, check=layout_check(False, 0),
               second="linear", pattern=P.reduction_pattern, value_pattern=True, vjp=extremum_vjp),
]

CONTROL_OPS = [
    structured("guard", [], "no derivative; the forward sweep checks x still has the recorded "
               "value (the outcome of a comparison that Python control flow used)",
               guard_forward, checks=True, check=guard_check),
    structured("argmax", [np.argmax], _NONE, argmax_forward, check=layout_check(False, 0)),
    structured("argmin", [np.argmin], _NONE, argmin_forward, check=layout_check(False, 0)),
]

SCAN_OPS = [
    structured("cumsum", [np.cumsum], "xbar[t] += sum_{s >= t} zbar[s] (a reversed cumsum)",
               cumsum_forward, cumsum_tangent, cumsum_reverse, check=layout_check(True),
               second="linear", pattern=P.scan_pattern, value_pattern=True, vjp=cumsum_vjp),
    structured("cumprod", [np.cumprod],
               "xbar[t] += z[t-1] R[t], R[t] = zbar[t] + x[t+1] R[t+1] (exact with zeros)",
               cumprod_forward, cumprod_tangent, cumprod_reverse, check=layout_check(True),
               spec=Spec(lo=0.5), second=cumprod_hvp, pattern=P.scan_pattern, value_pattern=True,
               vjp=cumprod_vjp),
    structured("sort", [np.sort], "z = x[perm]; xbar[perm] += zbar (the adjoint follows the "
               "permutation, recomputed on replay)", sort_forward, sort_tangent, sort_reverse,
               check=sort_check, second="linear", pattern=P.sort_pattern, vjp=sort_vjp),
]


VIEW_OPS = [
    structured("strided", [np.transpose, np.broadcast_to],
               "z = x viewed at an offset with a shape and strides (steps, columns, "
               "transposes, flips, broadcasting: no index array); xbar at those positions "
               "+= zbar (summed over broadcast axes)",
               strided_forward, strided_tangent, strided_reverse, fusion="strided",
               check=strided_check, second="linear", pattern=P.strided_pattern, value_pattern=True,
               vjp=strided_vjp),
]

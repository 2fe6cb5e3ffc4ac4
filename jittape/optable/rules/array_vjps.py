"""Recorded reverse rules (NumPy code, :mod:`jittape.optable.recorded`) of the indexing,
reduction and scan entries of :mod:`jittape.optable.rules.arrays`.

Each is the transpose of its op's tangent map, as the compiled reverse kernel beside the
entry, but written with NumPy calls on flat arrays, so that on active values it records
ordinary ops whose own rules are again in this table (a scatter-add becomes a gather with
distinct indices and a sum; a broadcast a strided view): the set of ops these rules record is
closed, so the recorded sweep nests to any order.
"""

import numpy as np

from ..entry import Unsupported

#: A scatter-add pads each target's sources to the widest one; beyond this many table
#: entries per value it gives up (nesting then takes its second-order route).
PAD_LIMIT = 16


def scatter_add(g, pos, size):
    """``out`` of ``size`` with ``out[pos[j]] += g[j]`` in ``j`` order (the adjoint of a
    gather), as one gather with distinct indices (each target's sources padded with
    distinct zeros to the same count) and a sum over the padding axis."""
    m = pos.size
    counts = np.bincount(pos, minlength=size)
    width = int(counts.max()) if m else 1
    if size * width > PAD_LIMIT * (m + size) + 1024:
        raise Unsupported("scatter-add too wide")
    order = np.argsort(pos, kind="stable")
    starts = np.cumsum(counts) - counts
    table = np.full(size * width, -1, np.int64)
    table[pos[order] * width + np.arange(m) - starts[pos[order]]] = order
    holes = table < 0
    nholes = int(holes.sum())
    table[holes] = m + np.arange(nholes)
    src = np.concatenate([g, np.zeros(nholes)]) if nholes else g
    out = src[table]
    return out if width == 1 else np.sum(np.reshape(out, (size, width)), axis=1)


def strided_positions(pool, k):
    """The positions in the operand of a strided view's elements, in C order."""
    nd, start = int(pool[k]), int(pool[k + 1])
    pos = np.array(start, np.int64)
    for d in range(nd):
        pos = pos[..., None] + np.arange(pool[k + 2 + d]) * pool[k + 2 + nd + d]
    return pos.ravel()


class Scatter:
    """An adjoint that is ``g`` added at positions ``pos`` of a zero operand: the recorded
    sweep collects these per record and adds them all in one :func:`scatter_add` when it
    reaches the record (a loop reading ``x[i]`` n times then costs one scatter, not n
    arrays of zeros)."""

    __slots__ = ("pos", "g")

    def __init__(self, pos, g):
        self.pos, self.g = pos, g

    @staticmethod
    def total(parts, size):
        """The sum of the Scatters ``parts`` as an array of ``size``."""
        if len(parts) == 1 and parts[0].pos.size == size and \
                np.array_equal(parts[0].pos, np.arange(size)):
            return parts[0].g
        gs = [np.reshape(p.g, (-1,)) for p in parts]
        g = gs[0] if len(gs) == 1 else np.concatenate(gs)
        return scatter_add(g, np.concatenate([p.pos for p in parts]), size)


def slice_vjp(r, g):
    return [Scatter(np.arange(r.k, r.k + r.n), g)]


def gather_vjp(r, g):
    return [Scatter(np.asarray(r.pool[r.k:r.k + r.n], np.int64), g)]


def strided_vjp(r, g):
    return [Scatter(strided_positions(r.pool, r.k), g)]


def concat_vjp(r, g):
    nparts, outer = int(r.pool[r.k]), int(r.pool[r.k + 1])
    widths = [int(r.pool[r.k + 3 + 2 * q]) for q in range(nparts)]
    rows = np.reshape(g, (outer, sum(widths))) if outer != 1 else g
    out, at = [], 0
    for w, need in zip(widths, r.need):
        part = None
        if need:
            part = rows[at:at + w] if outer == 1 else np.ravel(rows[:, at:at + w])
        out.append(part)
        at += w
    return out


def _layout(r):
    return int(r.pool[r.k]), int(r.pool[r.k + 1]), int(r.pool[r.k + 2])


def sum_vjp(r, g):
    outer, m, inner = _layout(r)
    return [np.ravel(np.broadcast_to(np.reshape(g, (outer, 1, inner)), (outer, m, inner)))]


def extremum_vjp(r, g):
    # the elements equal to the extremum share its adjoint evenly (the compiled rule's
    # convention); the comparison is recorded, so a replay finds the new maximisers
    outer, m, inner = _layout(r)
    hit = np.where(np.reshape(r.x, (outer, m, inner)) == np.reshape(r.z, (outer, 1, inner)),
                   1.0, 0.0)
    ties = np.maximum(np.sum(hit, axis=1, keepdims=True), 1.0)  # none: a NaN extremum
    return [np.ravel(hit * (np.reshape(g, (outer, 1, inner)) / ties))]


def cumsum_vjp(r, g):
    outer, m, inner = _layout(r)
    rev = np.reshape(g, (outer, m, inner))[:, ::-1, :]
    return [np.ravel(np.cumsum(rev, axis=1)[:, ::-1, :])]


#: prod's and cumprod's rules build the (m, m) products of "all factors but one" per
#: reduced line (exact with zeros, as the compiled rules); beyond this many values they give
#: up (nesting then takes its second-order route).
PRODUCTS_LIMIT = 1 << 20


def _all_but_one(r):
    """``(outer, m, m, inner)``: row ``t`` holds x with its ``t``-th factor set to 1."""
    outer, m, inner = _layout(r)
    if outer * m * m * inner > PRODUCTS_LIMIT:
        raise Unsupported("products too large to record")
    eye = np.eye(m, dtype=bool)[None, :, :, None]
    return np.where(eye, 1.0, np.reshape(r.x, (outer, 1, m, inner))), eye


def prod_vjp(r, g):
    # xbar_t = zbar * prod_{u != t} x_u
    outer, m, inner = _layout(r)
    others = np.prod(_all_but_one(r)[0], axis=2)
    return [np.ravel(others * np.reshape(g, (outer, 1, inner)))]


def cumprod_vjp(r, g):
    # xbar_t = sum_{s >= t} zbar_s prod_{u <= s, u != t} x_u
    outer, m, inner = _layout(r)
    rows, eye = _all_but_one(r)
    later = np.triu(np.ones((m, m), dtype=bool))[None, :, :, None]
    terms = np.cumprod(rows, axis=2) * np.reshape(g, (outer, 1, m, inner))
    return [np.ravel(np.sum(np.where(later, terms, 0.0), axis=2))]


def sort_vjp(r, g):
    # the value holds the sorted values, then the permutation (as floats): the adjoint of the
    # values goes back through the permutation, taken as a constant under a guard (a replay
    # where the order changes records again, as the compiled rule recomputes it)
    outer, m, inner = _layout(r)
    size = outer * m * inner
    perm = r.constant(r.z[size:]).astype(np.int64).reshape(outer, m, inner)
    base = (np.arange(outer)[:, None, None] * m * inner + np.arange(inner)[None, None, :])
    return [Scatter(np.ravel(base + perm * inner), g[:size])]

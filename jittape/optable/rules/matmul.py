"""Op table entry: the (batched) matrix product ``matmul`` (``np.matmul``, ``np.dot``), its
kernels and its second-order rule side by side.

Tangent ``Zdot = Xdot Y + X Ydot`` and adjoint ``Xbar += Zbar Y^T``, ``Ybar += X^T Zbar``, the
transpose of the tangent map (Giles, "Collected matrix derivative results for forward and
reverse mode algorithmic differentiation", 2008). Matrices are C-ordered blocks of ``val``;
``pool[k:]`` holds their sizes.
"""

import numpy as np

from . import patterns as P
from ..entry import bounded, pool_at, structured


# --- (batched) matrix product, pool[k:] = m, kk, n, batch ---------------------------------
# Products of at least BLAS_MIN multiply-adds go to BLAS (gemm, or gemv for a matrix-vector
# product: the routines and arguments Numba's np.dot uses, called by symbol, BLAS in
# jittape.optable.externals, so that they compile in a fraction of np.dot's time); smaller
# ones loop, where a BLAS call's overhead (about a microsecond, and a temporary) would
# dominate. Rank-1 updates (the adjoint of the matrix in a matrix-vector product) always
# loop: they are memory-bound and BLAS offers nothing Numba can call for them.
BLAS_MIN = 4096.0  # a float: generated modules copy float constants only
#: Compiled once per module instead of inlined into each branch (fewer copies to compile).
OUTLINED = ("matmul_into", "matmul_transposed")


def gemm_rows(x, ia, y, ib, out, io, m, kk, nn, ta, tb, ab):
    # out[io:io + m * nn] = op(X) op(Y) as C-ordered blocks: op(X) (m, kk) at x[ia], stored
    # (kk, m) if ta; op(Y) (kk, nn) at y[ib], stored (nn, kk) if tb; ab = [1, 0] (alpha,
    # beta). BLAS sees row-major blocks as their column-major transposes: out^T = op(Y)^T
    # op(X)^T, Numba's np.dot's own call
    blas_gemm(100, 84 if tb else 78, 84 if ta else 78, nn, m, kk, ab[0:].ctypes,  # noqa: F821
              y[ib:].ctypes, kk if tb else nn, x[ia:].ctypes, m if ta else kk,
              ab[1:].ctypes, out[io:].ctypes, nn)


def gemv_rows(a, ia, rows, cols, v, iv, out, io, trans, ab):
    # out[io:] = A v (trans: A^T v) for the (rows, cols) C-ordered block A at a[ia]: BLAS
    # sees A as the column-major A^T, so A v is its transposed product
    blas_gemv(100, 78 if trans else 84, cols, rows, ab[0:].ctypes, a[ia:].ctypes,  # noqa
              cols, v[iv:].ctypes, ab[1:].ctypes, out[io:].ctypes)


def mat_product(x, qa, y, qb, z, qz, m, kk, nn, ab):
    # z[qz:] = X @ Y for the (m, kk) block X at x[qa], the (kk, nn) block Y at y[qb]
    if nn == 1:
        gemv_rows(x, qa, m, kk, y, qb, z, qz, False, ab)
    elif m == 1:
        gemv_rows(y, qb, kk, nn, x, qa, z, qz, True, ab)
    else:
        gemm_rows(x, qa, y, qb, z, qz, m, kk, nn, False, False, ab)


def matmul_forward(val, o, n, ia, ib, k, c, pool, off):
    m, kk, nn, batch = pool[k], pool[k + 1], pool[k + 2], pool[k + 3]
    matmul_into(val, val, val, o, ia, ib, m, kk, nn, batch, True)


def matmul_into(out, x, y, o, ia, ib, m, kk, nn, batch, overwrite):
    # out[o] (+)= X @ Y for a stack of (m, kk) @ (kk, nn) products
    if m * kk * nn >= BLAS_MIN:
        ab = np.zeros(2)
        ab[0] = 1.0
        z = out if overwrite else np.empty(m * nn)  # straight into the buffer: no temporary
        for q in range(batch):  # (its page faults cost a third of a memory-bound gemv)
            qa, qb, qo = ia + q * m * kk, ib + q * kk * nn, o + q * m * nn
            mat_product(x, qa, y, qb, z, qo if overwrite else 0, m, kk, nn, ab)
            if not overwrite:
                for j in range(m * nn):
                    out[qo + j] += z[j]
        return
    if overwrite:
        for j in range(batch * m * nn):
            out[o + j] = 0.0
    for q in range(batch):
        qa, qb, qo = ia + q * m * kk, ib + q * kk * nn, o + q * m * nn
        if nn == 1:  # matrix @ vector: dot products (an innermost loop of one is slow)
            for i in range(m):
                acc = 0.0
                for t in range(kk):
                    acc += x[qa + i * kk + t] * y[qb + t]
                out[qo + i] += acc
            continue
        for i in range(m):
            for t in range(kk):
                s = x[qa + i * kk + t]
                for j in range(nn):
                    out[qo + i * nn + j] += s * y[qb + t * nn + j]


def matmul_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    # Zdot = Xdot Y + X Ydot (a constant operand has a zero tangent)
    m, kk, nn, batch = pool[k], pool[k + 1], pool[k + 2], pool[k + 3]
    for j in range(n):
        dot[o + j] = 0.0
    if not ca:
        matmul_into(dot, dot, val, o, ia, ib, m, kk, nn, batch, False)
    if not cb:
        matmul_into(dot, val, dot, o, ia, ib, m, kk, nn, batch, False)


def matmul_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    # Xbar += Zbar Y^T, Ybar += X^T Zbar; a constant operand gets no adjoint (half the work
    # of a product with a data matrix)
    m, kk, nn, batch = pool[k], pool[k + 1], pool[k + 2], pool[k + 3]
    matmul_transposed(val, val, adj, adj, o, ia, ib, m, kk, nn, batch, ca, cb)


def matmul_transposed(xv, yv, g, out, o, ia, ib, m, kk, nn, batch, ca, cb):
    # out[ia] += G Y^T unless ca, out[ib] += X^T G unless cb: X, Y read from xv, yv at ia,
    # ib, G from g at o (the reverse rule, and the cross terms of its tangent)
    blas = m * kk * nn >= BLAS_MIN
    ab = np.zeros(2)
    ab[0] = 1.0
    # the products' results, as np.dot allocated them: only those computed (a data
    # matrix's own adjoint, m * kk values, is not: allocating it cost a third of a gemv)
    za = np.empty(m * kk if blas and not ca and nn > 1 else 0)
    zb = np.empty(kk * nn if blas and not cb and m > 1 else 0)
    for q in range(batch):
        qa, qb, qo = ia + q * m * kk, ib + q * kk * nn, o + q * m * nn
        if not ca:
            if blas and nn > 1:  # a rank-1 update (nn == 1) loops
                if m == 1:
                    gemv_rows(yv, qb, kk, nn, g, qo, za, 0, False, ab)
                else:
                    gemm_rows(g, qo, yv, qb, za, 0, m, nn, kk, False, True, ab)
                for j in range(m * kk):
                    out[qa + j] += za[j]
            elif nn == 1:  # matrix @ vector: Xbar is the outer product G y^T
                for i in range(m):
                    gi = g[qo + i]
                    for t in range(kk):
                        out[qa + i * kk + t] += gi * yv[qb + t]
            else:
                for i in range(m):
                    for t in range(kk):
                        s = 0.0
                        for j in range(nn):
                            s += g[qo + i * nn + j] * yv[qb + t * nn + j]
                        out[qa + i * kk + t] += s
        if not cb:
            if blas and m > 1:  # a rank-1 update (m == 1) loops
                if nn == 1:
                    gemv_rows(xv, qa, m, kk, g, qo, zb, 0, True, ab)
                else:
                    gemm_rows(xv, qa, g, qo, zb, 0, kk, m, nn, True, False, ab)
                for j in range(kk * nn):
                    out[qb + j] += zb[j]
            elif nn == 1:  # ybar += X^T g, a row of X at a time
                for i in range(m):
                    gi = g[qo + i]
                    for t in range(kk):
                        out[qb + t] += xv[qa + i * kk + t] * gi
            else:
                for i in range(m):
                    for t in range(kk):
                        x = xv[qa + i * kk + t]
                        for j in range(nn):
                            out[qb + t * nn + j] += x * g[qo + i * nn + j]


def matmul_hvp(val, dot, adj, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb):
    # Z = X Y: Xbar += Zbar Y^T, and its tangent Xbar' += Zbar' Y^T + Zbar Ydot^T (Ybar
    # likewise): the reverse rule on adj, on adjdot, and the bilinear cross terms
    m, kk, nn, batch = pool[k], pool[k + 1], pool[k + 2], pool[k + 3]
    matmul_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb)
    matmul_reverse(val, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb)
    matmul_transposed(dot, dot, adj, adjdot, o, ia, ib, m, kk, nn, batch, ca, cb)


def matmul_blocks(pool, k):
    """``(batch, rows, cols)``: operand X's stack of (m, kk) matrices."""
    return int(pool[k + 3]), int(pool[k]), int(pool[k + 1])


def matmul_row_reverse(val, adj, o, n, ia, ib, k, c, pool, off, out):
    # out[q * kk + t] = sum_i Xbar[q, i, t] with Xbar = Zbar Y^T: (1^T Zbar) Y^T, the column
    # sums of Zbar times Y^T, one pass over Zbar instead of a product per row (the tape
    # compiler's row-broadcast operands: jittape.compiler.products)
    m, kk, nn, batch = pool[k], pool[k + 1], pool[k + 2], pool[k + 3]
    s, ones, ab = np.zeros(nn), np.ones(m), np.zeros(2)
    ab[0] = 1.0
    for q in range(batch):
        qb, qo = ib + q * kk * nn, o + q * m * nn
        if m * nn >= BLAS_MIN:  # Zbar^T 1 by gemv: 5x the loop below at (1000, 10)
            gemv_rows(adj, qo, m, nn, ones, 0, s, 0, True, ab)
        else:
            for j in range(nn):
                s[j] = 0.0
            for i in range(m):
                for j in range(nn):
                    s[j] += adj[qo + i * nn + j]
        for t in range(kk):
            acc = 0.0
            for j in range(nn):
                acc += s[j] * val[qb + t * nn + j]
            out[q * kk + t] = acc


def matmul_check(t, i, n, sa, sb):
    lay = pool_at(t, int(t.k[i]), 4)
    if lay is None:
        return "pool offset out of range"
    m, kk, nn, batch = lay
    if min(lay) < 0 or batch * m * kk != sa or batch * kk * nn != sb or batch * m * nn != n:
        return "matmul layout does not match the operands"
    if m * kk * nn == 0 and not bounded(t, *lay):  # (else the sizes bound the loops)
        return "matmul layout loops over too many elements"
    return None


def matmul_vjp(r, g):
    # the reverse rule in NumPy (jittape.optable.recorded): Xbar = G Y^T, Ybar = X^T G
    m, kk, nn, batch = (int(v) for v in r.pool[r.k:r.k + 4])
    shape = (m, kk, nn) if batch == 1 else (batch, m, kk, nn)
    G = np.reshape(g, shape[:-3] + (m, nn))
    out = [None, None]
    if r.need[0]:
        Y = np.reshape(r.y, shape[:-3] + (kk, nn))
        out[0] = np.ravel(np.matmul(G, np.swapaxes(Y, -1, -2)))
    if r.need[1]:
        X = np.reshape(r.x, shape[:-3] + (m, kk))
        out[1] = np.ravel(np.matmul(np.swapaxes(X, -1, -2), G))
    return out


MATMUL = structured("matmul", [np.matmul, np.dot],
                    "Z = X @ Y; Zdot = Xdot Y + X Ydot; Xbar += Zbar Y^T; Ybar += X^T Zbar",
                    matmul_forward, matmul_tangent, matmul_reverse, arity=2,
                    check=matmul_check, second=matmul_hvp, pattern=P.matmul_pattern,
                    value_pattern=True, second_pattern=P.matmul_pairs, vjp=matmul_vjp,
                    row_reverse=(matmul_blocks, matmul_row_reverse))

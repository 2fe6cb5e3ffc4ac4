"""Op table entry: the (batched) matrix product ``matmul`` (``np.matmul``, ``np.dot``), its
kernels and its second-order rule side by side.

Tangent ``Zdot = Xdot Y + X Ydot`` and adjoint ``Xbar += Zbar Y^T``, ``Ybar += X^T Zbar``, the
transpose of the tangent map (Giles, "Collected matrix derivative results for forward and
reverse mode algorithmic differentiation", 2008). Matrices are C-ordered blocks of ``val``;
``pool[k:]`` holds their sizes.
"""

import numpy as np

from . import patterns as P
from ..entry import pool_at, structured


# --- (batched) matrix product, pool[k:] = m, kk, n, batch ---------------------------------
# Products of at least BLAS_MIN multiply-adds go to BLAS (Numba's np.dot on C-ordered
# views of the flat buffers: gemm, or gemv for a matrix-vector product); smaller ones loop,
# where a BLAS call's overhead (about a microsecond, and a temporary) would dominate.
# Rank-1 updates (the adjoint of the matrix in a matrix-vector product) always loop: they
# are memory-bound and BLAS offers nothing Numba can call for them.
BLAS_MIN = 4096.0  # a float: generated modules copy float constants only
#: Compiled once per module instead of inlined into each branch: inlined, their np.dot
#: calls made the tangent and HVP sweeps of a set with matmul compile 3x longer.
OUTLINED = ("matmul_into", "matmul_transposed")


def mat(buf, i, r, c):
    # the (r, c) C-ordered block of buf at i, as a view
    return buf[i:i + r * c].reshape((r, c))


def matmul_forward(val, o, n, ia, ib, k, c, pool, off):
    m, kk, nn, batch = pool[k], pool[k + 1], pool[k + 2], pool[k + 3]
    matmul_into(val, val, val, o, ia, ib, m, kk, nn, batch, True)


def matmul_into(out, x, y, o, ia, ib, m, kk, nn, batch, overwrite):
    # out[o] (+)= X @ Y for a stack of (m, kk) @ (kk, nn) products
    if m * kk * nn >= BLAS_MIN:
        for q in range(batch):
            qa, qb, qo = ia + q * m * kk, ib + q * kk * nn, o + q * m * nn
            if overwrite:  # straight into the buffer: no temporary (its page faults cost
                # as much as a third of a memory-bound gemv)
                if nn == 1:
                    np.dot(mat(x, qa, m, kk), y[qb:qb + kk], out[qo:qo + m])
                elif m == 1:
                    np.dot(x[qa:qa + kk], mat(y, qb, kk, nn), out[qo:qo + nn])
                else:
                    np.dot(mat(x, qa, m, kk), mat(y, qb, kk, nn), mat(out, qo, m, nn))
                continue
            if nn == 1:
                z = np.dot(mat(x, qa, m, kk), y[qb:qb + kk])
            elif m == 1:
                z = np.dot(x[qa:qa + kk], mat(y, qb, kk, nn))
            else:
                z = np.dot(mat(x, qa, m, kk), mat(y, qb, kk, nn)).ravel()
            out[qo:qo + m * nn] += z
        return
    if overwrite:
        for j in range(batch * m * nn):
            out[o + j] = 0.0
    for q in range(batch):
        qa, qb, qo = ia + q * m * kk, ib + q * kk * nn, o + q * m * nn
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
    for q in range(batch):
        qa, qb, qo = ia + q * m * kk, ib + q * kk * nn, o + q * m * nn
        if not ca:
            if blas and nn > 1:  # a rank-1 update (nn == 1) loops
                if m == 1:
                    out[qa:qa + kk] += np.dot(mat(yv, qb, kk, nn), g[qo:qo + nn])
                else:
                    out[qa:qa + m * kk] += np.dot(mat(g, qo, m, nn),
                                                  mat(yv, qb, kk, nn).T).ravel()
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
                    out[qb:qb + kk] += np.dot(g[qo:qo + m], mat(xv, qa, m, kk))
                else:
                    out[qb:qb + kk * nn] += np.dot(mat(xv, qa, m, kk).T,
                                                   mat(g, qo, m, nn)).ravel()
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


def matmul_check(t, i, n, sa, sb):
    lay = pool_at(t, int(t.k[i]), 4)
    if lay is None:
        return "pool offset out of range"
    m, kk, nn, batch = lay
    if min(lay) < 0 or batch * m * kk != sa or batch * kk * nn != sb or batch * m * nn != n:
        return "matmul layout does not match the operands"
    return None


MATMUL = structured("matmul", [np.matmul, np.dot],
                    "Z = X @ Y; Zdot = Xdot Y + X Ydot; Xbar += Zbar Y^T; Ybar += X^T Zbar",
                    matmul_forward, matmul_tangent, matmul_reverse, arity=2,
                    check=matmul_check, second=matmul_hvp, pattern=P.matmul_pattern,
                    second_pattern=P.matmul_pairs)

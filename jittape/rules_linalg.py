"""Op table entries: matrix products and dense linear algebra (structured ops).

Tangent and adjoint rules side by side, the adjoint being the transpose of the tangent map:
Giles, "Collected matrix derivative results for forward and reverse mode algorithmic
differentiation" (2008) for products, inv, solve and det; Murray, "Differentiation of the
Cholesky decomposition" (2016); Magnus & Neudecker, "Matrix Differential Calculus", ch. 8
for eigh. Matrices are C-ordered blocks of ``val``; ``pool[k:]`` holds their sizes. A
symmetric input's adjoint is symmetrised (the tangent reads the symmetric part), which is
the derivative of the routine applied to the symmetric matrix its input stands for.
"""

import numpy as np

from . import rules_patterns as P
from .optable import Spec, pool_at, structured


# --- (batched) matrix product, pool[k:] = m, kk, n, batch ---------------------------------
def matmul_forward(val, o, n, ia, ib, k, c, pool, off):
    m, kk, nn, batch = pool[k], pool[k + 1], pool[k + 2], pool[k + 3]
    matmul_into(val, val, val, o, ia, ib, m, kk, nn, batch, True)


def matmul_into(out, x, y, o, ia, ib, m, kk, nn, batch, overwrite):
    # out[o] (+)= X @ Y for a stack of (m, kk) @ (kk, nn) products
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
    for q in range(batch):
        qa, qb, qo = ia + q * m * kk, ib + q * kk * nn, o + q * m * nn
        for i in range(m):
            if nn == 1:  # matrix-vector: rows of X in memory order
                g = adj[qo + i]
                if not cb:
                    for t in range(kk):
                        adj[qb + t] += val[qa + i * kk + t] * g
                if not ca:
                    for t in range(kk):
                        adj[qa + i * kk + t] += g * val[qb + t]
                continue
            for t in range(kk):
                x = val[qa + i * kk + t]
                s = 0.0
                for j in range(nn):
                    g = adj[qo + i * nn + j]
                    s += g * val[qb + t * nn + j]
                    if not cb:
                        adj[qb + t * nn + j] += x * g
                if not ca:
                    adj[qa + i * kk + t] += s


# --- dense linear algebra on (n, n) matrices, pool[k:] = n, m -----------------------------
def square(buf, i, n):
    return buf[i:i + n * n].reshape((n, n))


def sym(a):
    return 0.5 * (a + a.T)


def inv_forward(val, o, n, ia, ib, k, c, pool, off):
    nn = pool[k]
    val[o:o + nn * nn] = np.linalg.inv(square(val, ia, nn)).ravel()


def inv_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn = pool[k]  # Ydot = -Y Adot Y
    y = np.ascontiguousarray(square(val, o, nn))
    dot[o:o + nn * nn] = -(y @ np.ascontiguousarray(square(dot, ia, nn)) @ y).ravel()


def inv_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn = pool[k]  # Abar += -Y^T Ybar Y^T
    yt = np.ascontiguousarray(square(val, o, nn).T)
    g = square(adj, o, nn).copy()
    adj[ia:ia + nn * nn] -= (yt @ g @ yt).ravel()


def solve_forward(val, o, n, ia, ib, k, c, pool, off):
    nn, m = pool[k], pool[k + 1]
    b = val[ib:ib + nn * m].reshape((nn, m)).copy()
    val[o:o + nn * m] = np.linalg.solve(square(val, ia, nn), b).ravel()


def solve_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn, m = pool[k], pool[k + 1]  # Xdot = A^-1 (Bdot - Adot X)
    x = np.ascontiguousarray(val[o:o + nn * m].reshape((nn, m)))
    rhs = dot[ib:ib + nn * m].reshape((nn, m)) - np.ascontiguousarray(
        square(dot, ia, nn)) @ x
    dot[o:o + nn * m] = np.linalg.solve(square(val, ia, nn), rhs).ravel()


def solve_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn, m = pool[k], pool[k + 1]  # Bbar += A^-T Xbar; Abar += -Bbar X^T
    x = val[o:o + nn * m].reshape((nn, m))
    g = adj[o:o + nn * m].reshape((nn, m)).copy()
    bbar = np.linalg.solve(np.ascontiguousarray(square(val, ia, nn).T), g)
    adj[ib:ib + nn * m] += bbar.ravel()
    adj[ia:ia + nn * nn] -= (bbar @ np.ascontiguousarray(x.T)).ravel()


def slogdet_forward(val, o, n, ia, ib, k, c, pool, off):
    sign, logdet = np.linalg.slogdet(square(val, ia, pool[k]))
    val[o] = sign
    val[o + 1] = logdet


def slogdet_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn = pool[k]  # ldot = tr(A^-1 Adot); the sign is piecewise constant
    dot[o] = 0.0
    dot[o + 1] = np.trace(np.linalg.solve(square(val, ia, nn),
                                          np.ascontiguousarray(square(dot, ia, nn))))


def slogdet_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn = pool[k]  # Abar += lbar A^-T
    g = adj[o + 1]
    if g != 0.0:
        inv = np.linalg.inv(square(val, ia, nn))
        adj[ia:ia + nn * nn] += g * np.ascontiguousarray(inv.T).ravel()


def cholesky_forward(val, o, n, ia, ib, k, c, pool, off):
    nn = pool[k]
    val[o:o + nn * nn] = np.linalg.cholesky(square(val, ia, nn)).ravel()


def lower_half(p):
    # Phi: the lower triangle with the diagonal halved (Murray 2016, eq. 10)
    for i in range(p.shape[0]):
        p[i, i] *= 0.5
        for j in range(i + 1, p.shape[0]):
            p[i, j] = 0.0
    return p


def cholesky_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn = pool[k]  # Ldot = L Phi(L^-1 S L^-T), S = sym(Adot)
    low = np.ascontiguousarray(square(val, o, nn))
    s = sym(np.ascontiguousarray(square(dot, ia, nn)))
    t1 = np.linalg.solve(low, s)
    p = np.linalg.solve(low, np.ascontiguousarray(t1.T)).T
    dot[o:o + nn * nn] = (low @ lower_half(np.ascontiguousarray(p))).ravel()


def cholesky_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn = pool[k]  # Abar += sym(L^-T Phi(L^T Lbar) L^-1)
    low = square(val, o, nn)
    lt = np.ascontiguousarray(low.T)
    p = lower_half(lt @ np.ascontiguousarray(square(adj, o, nn)))
    t1 = np.linalg.solve(lt, p)
    sm = np.linalg.solve(lt, np.ascontiguousarray(t1.T)).T
    adj[ia:ia + nn * nn] += sym(sm).ravel()


def eigh_forward(val, o, n, ia, ib, k, c, pool, off):
    # value: the nn eigenvalues (ascending), then the eigenvectors V (nn x nn, C order)
    nn = pool[k]
    w, v = np.linalg.eigh(square(val, ia, nn))
    val[o:o + nn] = w
    val[o + nn:o + nn + nn * nn] = np.ascontiguousarray(v).ravel()


def eigh_gaps(w, inner, diag):
    # inner[i, j] / (w_j - w_i) off the diagonal (0 for equal eigenvalues), diag on it
    nn = w.shape[0]
    for i in range(nn):
        for j in range(nn):
            inner[i, j] = diag[i] if i == j else (
                inner[i, j] / (w[j] - w[i]) if w[j] != w[i] else 0.0)
    return inner


def eigh_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn = pool[k]  # wdot_i = v_i^T S v_i; Vdot = V (F o (V^T S V)), S = sym(Adot)
    w = val[o:o + nn]
    v = np.ascontiguousarray(val[o + nn:o + nn + nn * nn].reshape((nn, nn)))
    vs = np.ascontiguousarray(v.T) @ sym(np.ascontiguousarray(square(dot, ia, nn))) @ v
    wd = np.diag(vs).copy()
    dot[o:o + nn] = wd
    dot[o + nn:o + nn + nn * nn] = (v @ eigh_gaps(w, vs, np.zeros(nn))).ravel()


def eigh_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn = pool[k]  # Abar += sym(V (diag(wbar) + F o (V^T Vbar)) V^T)
    w = val[o:o + nn]
    v = np.ascontiguousarray(val[o + nn:o + nn + nn * nn].reshape((nn, nn)))
    vbar = np.ascontiguousarray(adj[o + nn:o + nn + nn * nn].reshape((nn, nn)))
    inner = eigh_gaps(w, np.ascontiguousarray(v.T) @ vbar, adj[o:o + nn].copy())
    adj[ia:ia + nn * nn] += sym(v @ inner @ np.ascontiguousarray(v.T)).ravel()


def matmul_check(t, i, n, sa, sb):
    lay = pool_at(t, int(t.k[i]), 4)
    if lay is None:
        return "pool offset out of range"
    m, kk, nn, batch = lay
    if min(lay) < 0 or batch * m * kk != sa or batch * kk * nn != sb or batch * m * nn != n:
        return "matmul layout does not match the operands"
    return None


def matrix_check(result_size, uses_b=False):
    """A check that the (nn, nn) operand, the right side (nn, m) and the result fit."""
    def check(t, i, n, sa, sb):
        lay = pool_at(t, int(t.k[i]), 2)
        if lay is None:
            return "pool offset out of range"
        nn, m = lay
        if nn < 0 or m < 0 or sa != nn * nn or n != result_size(nn, m) or \
                (uses_b and sb != nn * m):
            return "matrix sizes do not match the record"
        return None
    return check


_SQ = Spec(shapes=(((3, 3),),))

MATMUL = structured("matmul", [np.matmul, np.dot],
                    "Z = X @ Y; Zdot = Xdot Y + X Ydot; Xbar += Zbar Y^T; Ybar += X^T Zbar",
                    matmul_forward, matmul_tangent, matmul_reverse, arity=2,
                    check=matmul_check, pattern=P.matmul_pattern)

LINALG_OPS = [
    structured("inv", [np.linalg.inv], "Y = A^-1; Ydot = -Y Adot Y; Abar += -Y^T Ybar Y^T",
               inv_forward, inv_tangent, inv_reverse,
               check=matrix_check(lambda nn, m: nn * nn), spec=_SQ),
    structured("solve", [np.linalg.solve],
               "X = A^-1 B; Xdot = A^-1 (Bdot - Adot X); Bbar += A^-T Xbar; Abar += -Bbar X^T",
               solve_forward, solve_tangent, solve_reverse, arity=2,
               check=matrix_check(lambda nn, m: nn * m, True), spec=_SQ),
    structured("slogdet", [np.linalg.slogdet, np.linalg.det],
               "(s, l) = (sign, log|det A|); ldot = tr(A^-1 Adot); Abar += lbar A^-T; "
               "det = s e^l", slogdet_forward, slogdet_tangent, slogdet_reverse,
               check=matrix_check(lambda nn, m: 2), spec=_SQ),
    structured("cholesky", [np.linalg.cholesky],
               "Ldot = L Phi(L^-1 Adot L^-T); Abar += sym(L^-T Phi(L^T Lbar) L^-1), Phi = "
               "lower triangle, half diagonal (Murray 2016)", cholesky_forward,
               cholesky_tangent, cholesky_reverse, check=matrix_check(lambda nn, m: nn * nn),
               spec=_SQ),
    structured("eigh", [np.linalg.eigh, np.linalg.eigvalsh],
               "wdot = diag(V^T Adot V); Abar += sym(V (diag(wbar) + F o (V^T Vbar)) V^T), "
               "F_ij = 1/(w_j - w_i)", eigh_forward, eigh_tangent, eigh_reverse,
               check=matrix_check(lambda nn, m: nn + nn * nn), spec=_SQ),
]

"""The kernels of dense linear algebra (structured ops): inv, solve, slogdet, cholesky, eigh.

Tangent and adjoint rules side by side, the adjoint being the transpose of the tangent map:
Giles, "Collected matrix derivative results for forward and reverse mode algorithmic
differentiation" (2008) for inv, solve and det; Murray, "Differentiation of the
Cholesky decomposition" (2016); Magnus & Neudecker, "Matrix Differential Calculus", ch. 8
for eigh. Matrices are C-ordered blocks of ``val``; ``pool[k:]`` holds their sizes. A
symmetric input's adjoint is symmetrised (the tangent reads the symmetric part), which is
the derivative of the routine applied to the symmetric matrix its input stands for. The
entries of inv, solve, slogdet, cholesky and eigh, with their second-order rules, are in
:mod:`jittape.optable.rules.linalg`.
"""

import numpy as np

from ..entry import pool_at


# --- dense linear algebra on stacks of (n, n) matrices, pool[k:] = n, m --------------------
# A record holds ``batch`` matrices one after another (NumPy's leading dimensions, C order);
# batch is the record's size over one matrix's result size, so a stack needs no pool entry
# of its own and the layout of a single matrix is that of a stack of one. Outputs of two
# kinds (slogdet's sign and log, eigh's values and vectors) store all of the first kind,
# then all of the second, so that each is a contiguous slice of the record.
def stack_count(n, per):
    return n // per if per > 0 else 0


def square(buf, i, n):
    return buf[i:i + n * n].reshape((n, n))


def sym(a):
    return 0.5 * (a + a.T)


def inv_forward(val, o, n, ia, ib, k, c, pool, off):
    nn = pool[k]
    for q in range(stack_count(n, nn * nn)):
        s = q * nn * nn
        val[o + s:o + s + nn * nn] = np.linalg.inv(square(val, ia + s, nn)).ravel()


def inv_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn = pool[k]  # Ydot = -Y Adot Y
    for q in range(stack_count(n, nn * nn)):
        s = q * nn * nn
        y = np.ascontiguousarray(square(val, o + s, nn))
        dot[o + s:o + s + nn * nn] = -(
            y @ np.ascontiguousarray(square(dot, ia + s, nn)) @ y).ravel()


def inv_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn = pool[k]  # Abar += -Y^T Ybar Y^T
    for q in range(stack_count(n, nn * nn)):
        s = q * nn * nn
        yt = np.ascontiguousarray(square(val, o + s, nn).T)
        g = square(adj, o + s, nn).copy()
        adj[ia + s:ia + s + nn * nn] -= (yt @ g @ yt).ravel()


def solve_forward(val, o, n, ia, ib, k, c, pool, off):
    nn, m = pool[k], pool[k + 1]  # a stack of A (nn, nn) and of B (nn, m), same count
    for q in range(stack_count(n, nn * m)):
        sa, sb = q * nn * nn, q * nn * m
        b = val[ib + sb:ib + sb + nn * m].reshape((nn, m)).copy()
        val[o + sb:o + sb + nn * m] = np.linalg.solve(square(val, ia + sa, nn), b).ravel()


def solve_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn, m = pool[k], pool[k + 1]  # Xdot = A^-1 (Bdot - Adot X)
    for q in range(stack_count(n, nn * m)):
        sa, sb = q * nn * nn, q * nn * m
        x = np.ascontiguousarray(val[o + sb:o + sb + nn * m].reshape((nn, m)))
        rhs = dot[ib + sb:ib + sb + nn * m].reshape((nn, m)) - np.ascontiguousarray(
            square(dot, ia + sa, nn)) @ x
        dot[o + sb:o + sb + nn * m] = np.linalg.solve(square(val, ia + sa, nn), rhs).ravel()


def solve_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn, m = pool[k], pool[k + 1]  # Bbar += A^-T Xbar; Abar += -Bbar X^T
    for q in range(stack_count(n, nn * m)):
        sa, sb = q * nn * nn, q * nn * m
        x = val[o + sb:o + sb + nn * m].reshape((nn, m))
        g = adj[o + sb:o + sb + nn * m].reshape((nn, m)).copy()
        bbar = np.linalg.solve(np.ascontiguousarray(square(val, ia + sa, nn).T), g)
        adj[ib + sb:ib + sb + nn * m] += bbar.ravel()
        adj[ia + sa:ia + sa + nn * nn] -= (bbar @ np.ascontiguousarray(x.T)).ravel()


def slogdet_forward(val, o, n, ia, ib, k, c, pool, off):
    nn, nb = pool[k], n // 2  # value: the nb signs, then the nb logs
    for q in range(nb):
        sign, logdet = np.linalg.slogdet(square(val, ia + q * nn * nn, nn))
        val[o + q] = sign
        val[o + nb + q] = logdet


def slogdet_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn, nb = pool[k], n // 2  # ldot = tr(A^-1 Adot); the sign is piecewise constant
    for q in range(nb):
        s = ia + q * nn * nn
        dot[o + q] = 0.0
        dot[o + nb + q] = np.trace(np.linalg.solve(
            square(val, s, nn), np.ascontiguousarray(square(dot, s, nn)))) if nn else 0.0


def slogdet_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn, nb = pool[k], n // 2  # Abar += lbar A^-T
    for q in range(nb):
        g = adj[o + nb + q]
        if g != 0.0:
            s = ia + q * nn * nn
            inv = np.linalg.inv(square(val, s, nn))
            adj[s:s + nn * nn] += g * np.ascontiguousarray(inv.T).ravel()


def cholesky_forward(val, o, n, ia, ib, k, c, pool, off):
    nn = pool[k]
    for q in range(stack_count(n, nn * nn)):
        s = q * nn * nn
        val[o + s:o + s + nn * nn] = np.linalg.cholesky(square(val, ia + s, nn)).ravel()


def lower_half(p):
    # Phi: the lower triangle with the diagonal halved (Murray 2016, eq. 10)
    for i in range(p.shape[0]):
        p[i, i] *= 0.5
        for j in range(i + 1, p.shape[0]):
            p[i, j] = 0.0
    return p


def cholesky_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn = pool[k]  # Ldot = L Phi(L^-1 S L^-T), S = sym(Adot)
    for q in range(stack_count(n, nn * nn)):
        s = q * nn * nn
        low = np.ascontiguousarray(square(val, o + s, nn))
        sm = sym(np.ascontiguousarray(square(dot, ia + s, nn)))
        t1 = np.linalg.solve(low, sm)
        p = np.linalg.solve(low, np.ascontiguousarray(t1.T)).T
        dot[o + s:o + s + nn * nn] = (low @ lower_half(np.ascontiguousarray(p))).ravel()


def cholesky_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn = pool[k]  # Abar += sym(L^-T Phi(L^T Lbar) L^-1)
    for q in range(stack_count(n, nn * nn)):
        s = q * nn * nn
        lt = np.ascontiguousarray(square(val, o + s, nn).T)
        p = lower_half(lt @ np.ascontiguousarray(square(adj, o + s, nn)))
        t1 = np.linalg.solve(lt, p)
        sm = np.linalg.solve(lt, np.ascontiguousarray(t1.T)).T
        adj[ia + s:ia + s + nn * nn] += sym(sm).ravel()


def eigh_lapack(a, upper):
    # NumPy's eigh: LAPACK's syevd on the lower or the upper triangle of a. Numba's eigh
    # reads the lower one only, and the two routines' eigenvectors differ (signs, rounding),
    # so the upper one is called directly (lapack_syevd: jittape.optable.externals.LAPACK).
    nn = a.shape[0]
    f = a.T.copy()  # C order of a.T: a in Fortran order; overwritten by V (Fortran order)
    w = np.empty(nn)
    if nn and lapack_syevd(100, 86, 85 if upper else 76, nn, f.ctypes, nn, w.ctypes):  # noqa
        raise np.linalg.LinAlgError("Eigenvalues did not converge")  # 'd', 'V', 'U'/'L'
    return w, f.T


def eigh_forward(val, o, n, ia, ib, k, c, pool, off):
    # value: the eigenvalues of every matrix (ascending), then every V (nn x nn, C order);
    # pool[k + 1] == 1: NumPy's routine for the upper triangle (UPLO='U')
    nn = pool[k]
    nb = stack_count(n, nn + nn * nn)
    for q in range(nb):
        w, v = eigh_lapack(square(val, ia + q * nn * nn, nn), pool[k + 1] == 1)
        val[o + q * nn:o + q * nn + nn] = w
        s = o + nb * nn + q * nn * nn
        val[s:s + nn * nn] = np.ascontiguousarray(v).ravel()


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
    nb = stack_count(n, nn + nn * nn)
    for q in range(nb):
        ow, ov = o + q * nn, o + nb * nn + q * nn * nn
        w = val[ow:ow + nn]
        v = np.ascontiguousarray(square(val, ov, nn))
        vs = np.ascontiguousarray(v.T) @ sym(
            np.ascontiguousarray(square(dot, ia + q * nn * nn, nn))) @ v
        dot[ow:ow + nn] = np.diag(vs).copy()
        dot[ov:ov + nn * nn] = (v @ eigh_gaps(w, vs, np.zeros(nn))).ravel()


def eigh_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn = pool[k]  # Abar += sym(V (diag(wbar) + F o (V^T Vbar)) V^T)
    nb = stack_count(n, nn + nn * nn)
    for q in range(nb):
        ow, ov, s = o + q * nn, o + nb * nn + q * nn * nn, ia + q * nn * nn
        w = val[ow:ow + nn]
        v = np.ascontiguousarray(square(val, ov, nn))
        vbar = np.ascontiguousarray(square(adj, ov, nn))
        inner = eigh_gaps(w, np.ascontiguousarray(v.T) @ vbar, adj[ow:ow + nn].copy())
        adj[s:s + nn * nn] += sym(v @ inner @ np.ascontiguousarray(v.T)).ravel()


def matrix_check(result_size, uses_b=False, operand_size=lambda nn, m: nn * nn):
    """A check that a stack of (nn, nn) operands (``operand_size`` elements each), of right
    sides (nn, m) and the result fit: the record's size is a whole number of results, one
    per matrix of the stack."""
    def check(t, i, n, sa, sb):
        lay = pool_at(t, int(t.k[i]), 2)
        if lay is None:
            return "pool offset out of range"
        nn, m = lay
        per = result_size(nn, m) if nn >= 0 and m >= 0 else -1
        if per < 0 or (per == 0 and n != 0) or (per > 0 and n % per):
            return "matrix sizes do not match the record"
        nb = n // per if per else 0
        if sa != nb * operand_size(nn, m) or (uses_b and sb != nb * nn * m):
            return "matrix sizes do not match the record"
        return None
    return check

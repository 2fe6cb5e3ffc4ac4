"""The kernels of matrix decompositions (svd, qr, pinv) on stacks of (m, n) matrices.

Tangent and adjoint rules side by side, the adjoint the transpose of the tangent map. The
forward kernels call the LAPACK drivers NumPy calls, with NumPy's options
(:data:`jittape.optable.externals.LAPACK`), so replayed values are NumPy's. Sources: Townsend,
"Differentiating the Singular Value Decomposition" (2016) for svd; Walter & Lehmann,
"Algorithmic differentiation of linear algebra functions with application in optimum
experimental design" (2018) and Seeger et al., "Auto-differentiating linear algebra" (2017) for
qr. Layout as in :mod:`jittape.optable.rules.linalg_kernels`: a record holds a stack, the batch
count is its size over one matrix's result, and each kind of output (all singular values, then
all U, then all Vh) is one contiguous part. The entries, with the second-order rules, are in
:mod:`jittape.optable.rules.decomp`.
"""

import numpy as np

from ..._base.errors import NotDifferentiableError
from ..entry import pool_at
from .linalg_kernels import stack_count

#: Singular values closer than this times the largest are taken as equal: the singular
#: vectors there (and, for a non-square matrix, those of a zero singular value) have no
#: derivative, and a sweep that needs one raises (Townsend 2016, sec. 2: the rule divides
#: by s_j^2 - s_i^2 and by s_i).
SVD_RTOL = 1e-12


# --- svd: pool[k:] = m, n, flags (1: vectors, 2: full matrices) ---------------------------
def svd_lapack(a, jobz):
    # NumPy's svd: gesdd with jobz 'N' (78: values), 'S' (83: reduced) or 'A' (65: full);
    # the C order of a.T is a in Fortran order, U and Vh come back in Fortran order
    m, n = a.shape
    kk = min(m, n)
    f = a.T.copy()
    s = np.empty(kk)
    ldu, ucol, ldvt = (1, 1, 1) if jobz == 78 else ((m, m, n) if jobz == 65 else (m, kk, kk))
    u = np.empty((ucol, ldu))
    vt = np.empty((1 if jobz == 78 else n, ldvt))
    if kk and lapack_gesdd(100, jobz, m, n, f.ctypes, m, s.ctypes, u.ctypes, ldu,  # noqa
                           vt.ctypes, ldvt):
        raise np.linalg.LinAlgError("SVD did not converge")
    return s, u.T, vt.T


def svd_layout(pool, k, n):
    # (m, n, vectors?, min(m, n), columns of U, rows of Vh, matrices in the stack)
    m, nc, flags = pool[k], pool[k + 1], pool[k + 2]
    kk = min(m, nc)
    ku, kv = (m, nc) if flags & 2 else (kk, kk)
    uv = flags & 1 == 1
    return m, nc, uv, kk, ku, kv, stack_count(n, kk + (m * ku + kv * nc if uv else 0))


def svd_parts(val, o, q, nb, m, nc, kk, ku, kv):
    # offsets of matrix q's s, U and Vh in a record of nb matrices
    os = o + q * kk
    ou = o + nb * kk + q * m * ku
    return os, ou, o + nb * (kk + m * ku) + q * kv * nc


def svd_forward(val, o, n, ia, ib, k, c, pool, off):
    m, nc, uv, kk, ku, kv, nb = svd_layout(pool, k, n)
    jobz = (65 if pool[k + 2] & 2 else 83) if uv else 78
    for q in range(nb):
        s, u, vt = svd_lapack(val[ia + q * m * nc:ia + (q + 1) * m * nc].reshape((m, nc)), jobz)
        os, ou, ov = svd_parts(val, o, q, nb, m, nc, kk, ku, kv)
        val[os:os + kk] = s
        if uv:
            val[ou:ou + m * ku] = np.ascontiguousarray(u).ravel()
            val[ov:ov + kv * nc] = np.ascontiguousarray(vt).ravel()


def svd_gaps(s, m, n):
    # F_ij = 1 / (s_j^2 - s_i^2) off the diagonal; bad[i]: the i-th singular vectors have no
    # derivative (s_i repeated, or zero in a non-square matrix); F is 0 between equal ones
    kk = s.shape[0]
    tol = SVD_RTOL * (s[0] if kk else 0.0)  # s is in descending order
    f = np.zeros((kk, kk))
    bad = np.zeros(kk, dtype=np.bool_)
    for i in range(kk):
        if m != n and s[i] <= tol:
            bad[i] = True
        for j in range(kk):
            if i != j:
                if abs(s[i] - s[j]) <= tol:
                    bad[i] = True
                else:
                    f[i, j] = 1.0 / ((s[j] - s[i]) * (s[j] + s[i]))
    return f, bad, np.where(bad, 1.0, s).reshape((1, kk))


def svd_matrices(val, ia, q, m, nc, os, ou, ov, kk, ku, kv, uv):
    # A, s, U1 (m, kk) and V1 (nc, kk) of matrix q (recomputed when the record has no vectors)
    a = np.ascontiguousarray(val[ia + q * m * nc:ia + (q + 1) * m * nc].reshape((m, nc)))
    if not uv:
        s, u, vt = svd_lapack(a, 83)
        return a, s, np.ascontiguousarray(u), np.ascontiguousarray(vt.T)
    u = val[ou:ou + m * ku].reshape((m, ku))[:, :kk]
    vt = val[ov:ov + kv * nc].reshape((kv, nc))[:kk]
    return a, val[os:os + kk].copy(), np.ascontiguousarray(u), np.ascontiguousarray(vt.T)


def svd_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    # sdot = diag(P), P = U^T Adot V; Udot = U (F o (P S + S P^T)) + (I - U U^T) Adot V S^-1,
    # Vdot = V (F o (S P + P^T S)) + (I - V V^T) Adot^T U S^-1 (Townsend 2016, eqs. 3-4);
    # nan where undefined (repeated or zero singular values, U's and Vh's completions)
    m, nc, uv, kk, ku, kv, nb = svd_layout(pool, k, n)
    for q in range(nb):
        os, ou, ov = svd_parts(val, o, q, nb, m, nc, kk, ku, kv)
        a, s, u, v = svd_matrices(val, ia, q, m, nc, os, ou, ov, kk, ku, kv, uv)
        da = np.ascontiguousarray(dot[ia + q * m * nc:ia + (q + 1) * m * nc].reshape((m, nc)))
        p = u.T @ da @ v
        dot[os:os + kk] = np.diag(p).copy()
        if not uv:
            continue
        f, bad, sp = svd_gaps(s, m, nc)
        sr, sc = s.reshape((1, kk)), s.reshape((kk, 1))
        moved = np.any(da != 0.0)
        du = np.full((m, ku), np.nan if moved else 0.0)  # the completions: no derivative
        dv = np.full((nc, kv), np.nan if moved else 0.0)
        du[:, :kk] = u @ (f * (p * sr + sc * p.T))
        dv[:, :kk] = v @ (f * (sc * p + p.T * sr))
        if m > kk:
            du[:, :kk] += (da @ v - u @ p) / sp
        if nc > kk:
            dv[:, :kk] += (da.T @ u - v @ p.T) / sp
        for i in range(kk):
            if bad[i] and moved:
                du[:, i] = np.nan
                dv[:, i] = np.nan
        dot[ou:ou + m * ku] = du.ravel()
        dot[ov:ov + kv * nc] = np.ascontiguousarray(dv.T).ravel()


def svd_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    # Abar += U (J S + diag(sbar) + S K) V^T + (I - U U^T) Ubar S^-1 V^T
    #         + U S^-1 Vbar^T (I - V V^T),  J = F o (U^T Ubar - Ubar^T U),
    #         K = F o (V^T Vbar - Vbar^T V)  (Townsend 2016, eq. 7)
    m, nc, uv, kk, ku, kv, nb = svd_layout(pool, k, n)
    for q in range(nb):
        os, ou, ov = svd_parts(val, o, q, nb, m, nc, kk, ku, kv)
        a, s, u, v = svd_matrices(val, ia, q, m, nc, os, ou, ov, kk, ku, kv, uv)
        inner = np.diag(adj[os:os + kk].copy())
        abar = np.zeros((m, nc))
        if uv:
            ubar = adj[ou:ou + m * ku].reshape((m, ku))
            vtbar = adj[ov:ov + kv * nc].reshape((kv, nc))
            if np.any(ubar[:, kk:] != 0.0) or np.any(vtbar[kk:] != 0.0):
                raise NotDifferentiableError(
                    "np.linalg.svd(full_matrices=True) of a non-square matrix: the last "
                    "columns of U (rows of Vh) are any orthonormal completion and have no "
                    "derivative; use full_matrices=False")
            ub = np.ascontiguousarray(ubar[:, :kk])
            vb = np.ascontiguousarray(vtbar[:kk].T)
            f, bad, sp = svd_gaps(s, m, nc)
            for i in range(kk):
                if bad[i] and (np.any(ub[:, i] != 0.0) or np.any(vb[:, i] != 0.0)):
                    raise NotDifferentiableError(
                        "np.linalg.svd: the singular vectors of repeated singular values "
                        "(equal within 1e-12 relative), or of a zero singular value of a "
                        "non-square matrix, have no derivative; differentiate functions of "
                        "the singular values (compute_uv=False) or of the vectors of "
                        "distinct ones")
            sr, sc = s.reshape((1, kk)), s.reshape((kk, 1))
            inner += (f * (u.T @ ub - ub.T @ u)) * sr + sc * (f * (v.T @ vb - vb.T @ v))
            if m > kk:
                abar += ((ub - u @ (u.T @ ub)) / sp) @ v.T
            if nc > kk:
                abar += u @ ((vb - v @ (v.T @ vb)) / sp).T
        abar += u @ inner @ v.T
        adj[ia + q * m * nc:ia + (q + 1) * m * nc] += abar.ravel()


def decomp_check(name, per_matrix):
    """A loader check for a stack of (m, n) operands, pool[k:] = m, n, flags, whose record
    holds ``per_matrix(m, n, flags)`` values per matrix."""
    def check(t, i, n, sa, sb):
        lay = pool_at(t, int(t.k[i]), 3)
        if lay is None:
            return "pool offset out of range"
        m, nc, flags = lay
        if min(lay) < 0 or flags > 3:
            return f"{name} layout out of range"
        per = per_matrix(m, nc, flags)
        nb = n // per if per else 0
        if (per == 0 and n) or (per and n % per) or sa != nb * m * nc:
            return f"{name} sizes do not match the record"
        return None
    return check


def svd_size(m, nc, flags):
    kk = min(m, nc)
    ku, kv = (m, nc) if flags & 2 else (kk, kk)
    return kk + (m * ku + kv * nc if flags & 1 else 0)


# --- qr: pool[k:] = m, n, flags (1: Q, 2: complete Q of a tall matrix) -------------------
def qr_lapack(a, mc):
    # NumPy's qr: geqrf, R = its upper triangle, then orgqr for Q's first mc columns (0: R
    # only); Fortran order as in svd_lapack
    m, nc = a.shape
    kk = min(m, nc)
    f = a.T.copy()
    tau = np.empty(kk)
    if kk and lapack_geqrf(100, m, nc, f.ctypes, m, tau.ctypes):  # noqa: F821
        raise np.linalg.LinAlgError("QR factorization failed")
    q = np.zeros((mc, m))
    if mc:
        q[:min(mc, nc), :] = f[:min(mc, nc), :]
        if lapack_orgqr(100, m, mc, kk, q.ctypes, m, tau.ctypes):  # noqa: F821
            raise np.linalg.LinAlgError("QR factorization failed")
    return q.T, np.triu(f.T)


def qr_layout(pool, k, n):
    # (m, n, Q stored?, min(m, n), columns of Q, rows of R, matrices in the stack)
    m, nc, flags = pool[k], pool[k + 1], pool[k + 2]
    kk = min(m, nc)
    kq = m if flags & 2 else kk
    hasq = flags & 1 == 1
    return m, nc, hasq, kk, kq, kq, stack_count(n, (m * kq if hasq else 0) + kq * nc)


def qr_forward(val, o, n, ia, ib, k, c, pool, off):
    m, nc, hasq, kk, kq, kr, nb = qr_layout(pool, k, n)
    oq = nb * m * kq if hasq else 0  # all Q, then all R
    for q in range(nb):
        qq, r = qr_lapack(val[ia + q * m * nc:ia + (q + 1) * m * nc].reshape((m, nc)),
                          kq if hasq else 0)
        if hasq:
            val[o + q * m * kq:o + (q + 1) * m * kq] = np.ascontiguousarray(qq).ravel()
        val[o + oq + q * kr * nc:o + oq + (q + 1) * kr * nc] = np.ascontiguousarray(
            r[:kr]).ravel()


def right_solve(z, r):
    # z R^-1
    return np.linalg.solve(np.ascontiguousarray(r.T), np.ascontiguousarray(z.T)).T


def qr_matrices(val, ia, q, o, nb, m, nc, kk, kq, kr, hasq):
    # A, Q1 (m, kk) and R1 (kk, kk) of matrix q (recomputed when the record has no Q)
    a = np.ascontiguousarray(val[ia + q * m * nc:ia + (q + 1) * m * nc].reshape((m, nc)))
    if hasq:
        q1 = val[o + q * m * kq:o + (q + 1) * m * kq].reshape((m, kq))[:, :kk]
        r0 = o + nb * m * kq + q * kr * nc
        r1 = val[r0:r0 + kr * nc].reshape((kr, nc))[:kk, :kk]
    else:
        q1, r = qr_lapack(a, kk)
        r1 = r[:kk, :kk]
    return a, np.ascontiguousarray(q1), np.ascontiguousarray(r1)


def qr_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    # A = [X | Y], X (m, kk): C = Q^T Xdot R1^-1, W = tril(C, -1) - tril(C, -1)^T,
    # R1dot = (C - W) R1, Qdot = Q W + (I - Q Q^T) Xdot R1^-1 (Walter & Lehmann 2018);
    # R's right block Q^T Y: Qdot^T Y + Q^T Ydot (Liao et al. 2019); Q's completion: nan
    m, nc, hasq, kk, kq, kr, nb = qr_layout(pool, k, n)
    oq = nb * m * kq if hasq else 0
    for q in range(nb):
        a, q1, r1 = qr_matrices(val, ia, q, o, nb, m, nc, kk, kq, kr, hasq)
        da = np.ascontiguousarray(dot[ia + q * m * nc:ia + (q + 1) * m * nc].reshape((m, nc)))
        qtdx = q1.T @ np.ascontiguousarray(da[:, :kk])
        cm = right_solve(qtdx, r1)
        w = np.tril(cm, -1) - np.tril(cm, -1).T
        dr = np.zeros((kr, nc))
        dr[:kk, :kk] = (cm - w) @ r1
        dq1 = q1 @ w + right_solve(np.ascontiguousarray(da[:, :kk]) - q1 @ qtdx, r1)
        if nc > kk:
            dr[:kk, kk:] = (np.ascontiguousarray(dq1.T) @ np.ascontiguousarray(a[:, kk:]) +
                            q1.T @ np.ascontiguousarray(da[:, kk:]))
        if hasq:
            dq = np.full((m, kq), np.nan if np.any(da != 0.0) else 0.0)
            dq[:, :kk] = dq1
            dot[o + q * m * kq:o + (q + 1) * m * kq] = dq.ravel()
        dot[o + oq + q * kr * nc:o + oq + (q + 1) * kr * nc] = dr.ravel()


def qr_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    # the transpose: Ybar = Q Vbar, Qbar += Y Vbar^T (V = R's right block);
    # Cbar = Rbar R1^T + tril(N - N^T, -1), N = Q^T Qbar - Rbar R1^T;
    # Xbar = (Q Cbar + (I - Q Q^T) Qbar) R1^-T
    m, nc, hasq, kk, kq, kr, nb = qr_layout(pool, k, n)
    oq = nb * m * kq if hasq else 0
    for q in range(nb):
        a, q1, r1 = qr_matrices(val, ia, q, o, nb, m, nc, kk, kq, kr, hasq)
        r0 = o + oq + q * kr * nc
        rbar = adj[r0:r0 + kr * nc].reshape((kr, nc))
        qbar = np.zeros((m, kk))
        if hasq:
            qb = adj[o + q * m * kq:o + (q + 1) * m * kq].reshape((m, kq))
            if np.any(qb[:, kk:] != 0.0):
                raise NotDifferentiableError(
                    "np.linalg.qr(mode='complete') of a tall matrix: the last columns of Q "
                    "are any orthonormal completion and have no derivative; use "
                    "mode='reduced'")
            qbar += qb[:, :kk]
        abar = np.zeros((m, nc))
        if nc > kk:
            vbar = np.ascontiguousarray(rbar[:kk, kk:])
            abar[:, kk:] = q1 @ vbar
            qbar += np.ascontiguousarray(a[:, kk:]) @ vbar.T
        m1 = np.ascontiguousarray(rbar[:kk, :kk]) @ r1.T
        nm = q1.T @ qbar - m1
        cbar = m1 + np.tril(nm - nm.T, -1)
        abar[:, :kk] = right_solve(q1 @ cbar + qbar - q1 @ (q1.T @ qbar), r1.T)
        adj[ia + q * m * nc:ia + (q + 1) * m * nc] += abar.ravel()


def qr_size(m, nc, flags):
    kq = m if flags & 2 else min(m, nc)
    return (m * kq if flags & 1 else 0) + kq * nc


QR_UNDEFINED = ("np.linalg.qr(mode='complete') of a tall matrix: a derivative of the last "
                "columns of Q (any orthonormal completion) is undefined; use mode='reduced'")


# --- pinv: pool[k:] = m, n; c = rcond -----------------------------------------------------
def pinv_one(a, rcond):
    # NumPy's pinv: V diag(1/s, 0 at s <= rcond max(s)) U^T from the reduced svd
    s, u, vt = svd_lapack(a, 83)
    cutoff = rcond * (np.max(s) if s.shape[0] else 0.0)
    sinv = np.where(s > cutoff, 1.0 / np.where(s > cutoff, s, 1.0), 0.0)
    return np.ascontiguousarray(vt.T) @ (sinv.reshape((-1, 1)) * np.ascontiguousarray(u.T))


def pinv_forward(val, o, n, ia, ib, k, c, pool, off):
    m, nc = pool[k], pool[k + 1]
    for q in range(stack_count(n, m * nc)):
        s = q * m * nc
        val[o + s:o + s + m * nc] = pinv_one(val[ia + s:ia + s + m * nc].reshape((m, nc)),
                                             c).ravel()


def pinv_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    # Xdot = -X Adot X + X X^T Adot^T (I - A X) + (I - X A) Adot^T X^T X, X = A^+ (Golub &
    # Pereyra 1973: A of locally constant rank)
    m, nc = pool[k], pool[k + 1]
    for q in range(stack_count(n, m * nc)):
        s = q * m * nc
        a = np.ascontiguousarray(val[ia + s:ia + s + m * nc].reshape((m, nc)))
        x = np.ascontiguousarray(val[o + s:o + s + m * nc].reshape((nc, m)))
        da = np.ascontiguousarray(dot[ia + s:ia + s + m * nc].reshape((m, nc)))
        dat = np.ascontiguousarray(da.T)
        xdot = (-(x @ da @ x) + x @ (x.T @ (dat - dat @ (a @ x))) +
                (dat - x @ (a @ dat)) @ (x.T @ x))
        dot[o + s:o + s + m * nc] = xdot.ravel()


def pinv_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    # the transpose: Abar += -X^T G X^T + (I - A X) G^T X X^T + X^T X G^T (I - X A)
    m, nc = pool[k], pool[k + 1]
    for q in range(stack_count(n, m * nc)):
        s = q * m * nc
        a = np.ascontiguousarray(val[ia + s:ia + s + m * nc].reshape((m, nc)))
        x = np.ascontiguousarray(val[o + s:o + s + m * nc].reshape((nc, m)))
        gt = np.ascontiguousarray(adj[o + s:o + s + m * nc].reshape((nc, m)).T)
        xt = np.ascontiguousarray(x.T)
        abar = (-(xt @ np.ascontiguousarray(gt.T) @ xt) + (gt - a @ (x @ gt)) @ (x @ xt) +
                (xt @ x) @ (gt - (gt @ x) @ a))
        adj[ia + s:ia + s + m * nc] += abar.ravel()


SVD_UNDEFINED = (
    "np.linalg.svd: a derivative of singular vectors is undefined here: those of repeated "
    "singular values (equal within 1e-12 relative), of a zero singular value of a "
    "non-square matrix, and the completion columns of U (rows of Vh) that "
    "full_matrices=True adds to a non-square matrix have none; differentiate functions of "
    "the singular values (compute_uv=False), of the vectors of distinct ones, or use "
    "full_matrices=False")

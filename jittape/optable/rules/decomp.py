"""Op table entries: matrix decompositions (svd, qr, pinv) with their second-order rules.

The first-order kernels are in :mod:`jittape.optable.rules.decomp_kernels`; as in
:mod:`jittape.optable.rules.linalg`, each ``*_hvp`` kernel runs the op's reverse rule on the
adjoints and on their tangents, then adds the tangent of the reverse rule with respect to
the values (the product rule through the formulas cited for each first-order rule, with the
decomposition's tangents recomputed from the operand's tangent, so that records without
vectors are served too). Where the first derivative is undefined (repeated singular values,
a zero one of a non-square matrix) an HVP that needs it raises, as the reverse rule does.
"""

import numpy as np

from ..._base.errors import NotDifferentiableError
from ..entry import Spec, structured
from .decomp_kernels import (QR_UNDEFINED, SVD_UNDEFINED, decomp_check, pinv_forward, pinv_reverse,
                             pinv_tangent, qr_forward, qr_layout, qr_matrices, qr_reverse, qr_size,
                             qr_tangent, right_solve, svd_forward, svd_gaps, svd_layout,
                             svd_matrices, svd_parts, svd_reverse, svd_size, svd_tangent)
from .linalg_kernels import matrix_check, stack_count


def svd_dots(u, s, v, da, f, m, nc):
    # sdot, U1dot, V1dot (svd_tangent's formulas: Townsend 2016, eqs. 3-4)
    kk = s.shape[0]
    p = u.T @ da @ v
    sr, sc = s.reshape((1, kk)), s.reshape((kk, 1))
    du = u @ (f * (p * sr + sc * p.T))
    dv = v @ (f * (sc * p + p.T * sr))
    if m > kk:
        du += (da @ v - u @ p) / sr
    if nc > kk:
        dv += (da.T @ u - v @ p.T) / sr
    return np.diag(p).copy(), du, dv


def svd_skew_dot(u, du, ub, f, df):
    # the tangent of J = F o (U^T Ubar - Ubar^T U) with Ubar fixed
    w = u.T @ ub
    dw = du.T @ ub
    return df * (w - w.T) + f * (dw - dw.T)


def svd_cross(u, s, v, du, sd, dv, ub, sb, vb, f, m, nc):
    # the tangent, at fixed adjoints, of svd_reverse's Abar = U (J S + diag(sbar) + S K) V^T
    # + (I - U U^T) Ubar S^-1 V^T + U S^-1 Vbar^T (I - V V^T) (Townsend 2016, eq. 7), with
    # dF_ij = -2 (s_j sd_j - s_i sd_i) F_ij^2
    kk = s.shape[0]
    sr, sc = s.reshape((1, kk)), s.reshape((kk, 1))
    dr, dc = sd.reshape((1, kk)), sd.reshape((kk, 1))
    ssd = s * sd
    df = -2.0 * f * f * (ssd.reshape((1, kk)) - ssd.reshape((kk, 1)))
    j = f * (u.T @ ub - ub.T @ u)
    kv = f * (v.T @ vb - vb.T @ v)
    inner = j * sr + np.diag(sb) + sc * kv
    dinner = (svd_skew_dot(u, du, ub, f, df) * sr + j * dr + dc * kv +
              sc * svd_skew_dot(v, dv, vb, f, df))
    vt = np.ascontiguousarray(v.T)
    out = (du @ inner + u @ dinner) @ vt + u @ inner @ np.ascontiguousarray(dv.T)
    if m > kk:  # (I - U U^T) Ubar S^-1 V^T
        y = ub - u @ (u.T @ ub)
        dy = -(du @ (u.T @ ub) + u @ (du.T @ ub))
        out += (dy / sr - y * dr / (sr * sr)) @ vt + (y / sr) @ np.ascontiguousarray(dv.T)
    if nc > kk:  # U S^-1 Vbar^T (I - V V^T)
        z = vb - v @ (v.T @ vb)
        dz = -(dv @ (v.T @ vb) + v @ (dv.T @ vb))
        out += du @ np.ascontiguousarray((z / sr).T) + u @ np.ascontiguousarray(
            (dz / sr - z * dr / (sr * sr)).T)
    return out


def svd_hvp(val, dot, adj, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb):
    # the reverse rule on adj and adjdot, plus svd_cross with the tangents of s, U1, V1
    svd_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb)
    svd_reverse(val, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb)
    if ca:
        return
    m, nc, uv, kk, ku, kv, nb = svd_layout(pool, k, n)
    for q in range(nb):
        os, ou, ov = svd_parts(val, o, q, nb, m, nc, kk, ku, kv)
        sb = adj[os:os + kk].copy()
        ub = np.zeros((m, kk))
        vb = np.zeros((nc, kk))
        if uv:
            ub[:, :] = adj[ou:ou + m * ku].reshape((m, ku))[:, :kk]
            vb[:, :] = adj[ov:ov + kv * nc].reshape((kv, nc))[:kk].T
        if not (np.any(sb != 0.0) or np.any(ub != 0.0) or np.any(vb != 0.0)):
            continue  # no cross terms
        a, s, u, v = svd_matrices(val, ia, q, m, nc, os, ou, ov, kk, ku, kv, uv)
        f, bad, sp = svd_gaps(s, m, nc)
        if np.any(bad):
            raise NotDifferentiableError(
                "np.linalg.svd: second derivatives (hvp, hessian) at repeated singular "
                "values (equal within 1e-12 relative), or at a zero singular value of a "
                "non-square matrix, are not available; gradients and JVPs of the singular "
                "values work")
        s0 = ia + q * m * nc
        da = np.ascontiguousarray(dot[s0:s0 + m * nc].reshape((m, nc)))
        sd, du, dv = svd_dots(u, s, v, da, f, m, nc)
        adjdot[s0:s0 + m * nc] += svd_cross(u, s, v, du, sd, dv, ub, sb, vb, f, m,
                                            nc).ravel()


def qr_cross(a, q1, r1, da, qbar, rbar, kk, nc):
    # the tangent, at fixed adjoints, of qr_reverse (Walter & Lehmann 2018; Liao et al.
    # 2019 for R's right block V = Q^T Y): with Qbar_t = Qbar + Y Vbar^T, M = Rbar1 R1^T,
    # N = Q^T Qbar_t - M, Cbar = M + tril(N - N^T, -1), Z = Q Cbar + (I - Q Q^T) Qbar_t:
    # Xbar = Z R1^-T, so Xbar' = (Z' - Xbar R1'^T) R1^-T; Ybar = Q Vbar, Ybar' = Q' Vbar.
    # Q', R1': qr_tangent's formulas
    m = a.shape[0]
    dx = np.ascontiguousarray(da[:, :kk])
    qtdx = q1.T @ dx
    cm = right_solve(qtdx, r1)
    w = np.tril(cm, -1) - np.tril(cm, -1).T
    dr1 = (cm - w) @ r1
    dq = q1 @ w + right_solve(dx - q1 @ qtdx, r1)
    qb = qbar.copy()
    dqb = np.zeros((m, kk))
    out = np.zeros((m, nc))
    if nc > kk:
        vbar = np.ascontiguousarray(rbar[:, kk:])
        out[:, kk:] = dq @ vbar
        qb += np.ascontiguousarray(a[:, kk:]) @ vbar.T
        dqb += np.ascontiguousarray(da[:, kk:]) @ vbar.T
    rb1 = np.ascontiguousarray(rbar[:, :kk])
    m1 = rb1 @ r1.T
    dm1 = rb1 @ dr1.T
    nm = q1.T @ qb - m1
    dn = dq.T @ qb + q1.T @ dqb - dm1
    cbar = m1 + np.tril(nm - nm.T, -1)
    dcbar = dm1 + np.tril(dn - dn.T, -1)
    qtqb = q1.T @ qb
    z = q1 @ cbar + qb - q1 @ qtqb
    dz = (dq @ cbar + q1 @ dcbar + dqb - dq @ qtqb - q1 @ (dq.T @ qb) -
          q1 @ (q1.T @ dqb))
    xbar = right_solve(z, np.ascontiguousarray(r1.T))
    out[:, :kk] = right_solve(dz - xbar @ dr1.T, np.ascontiguousarray(r1.T))
    return out


def qr_hvp(val, dot, adj, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb):
    # the reverse rule on adj and adjdot, plus qr_cross
    qr_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb)
    qr_reverse(val, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb)
    if ca:
        return
    m, nc, hasq, kk, kq, kr, nb = qr_layout(pool, k, n)
    oq = nb * m * kq if hasq else 0
    for q in range(nb):
        r0 = o + oq + q * kr * nc
        rbar = np.ascontiguousarray(adj[r0:r0 + kr * nc].reshape((kr, nc))[:kk])
        qbar = np.zeros((m, kk))
        if hasq:
            qbar += adj[o + q * m * kq:o + (q + 1) * m * kq].reshape((m, kq))[:, :kk]
        if not (np.any(rbar != 0.0) or np.any(qbar != 0.0)):
            continue  # no cross terms
        a, q1, r1 = qr_matrices(val, ia, q, o, nb, m, nc, kk, kq, kr, hasq)
        s0 = ia + q * m * nc
        da = np.ascontiguousarray(dot[s0:s0 + m * nc].reshape((m, nc)))
        adjdot[s0:s0 + m * nc] += qr_cross(a, q1, r1, da, qbar, rbar, kk, nc).ravel()


def pinv_hvp(val, dot, adj, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb):
    # pinv_reverse's Abar = -X^T G X^T + (I - A X) G^T X X^T + X^T X G^T (I - X A) is a
    # polynomial in A and X = A^+ (Golub & Pereyra 1973): its tangent by the product rule,
    # with Xd the result's tangent
    pinv_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb)
    pinv_reverse(val, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb)
    if ca:
        return
    m, nc = pool[k], pool[k + 1]
    for q in range(stack_count(n, m * nc)):
        s = q * m * nc
        a = np.ascontiguousarray(val[ia + s:ia + s + m * nc].reshape((m, nc)))
        da = np.ascontiguousarray(dot[ia + s:ia + s + m * nc].reshape((m, nc)))
        x = np.ascontiguousarray(val[o + s:o + s + m * nc].reshape((nc, m)))
        xd = np.ascontiguousarray(dot[o + s:o + s + m * nc].reshape((nc, m)))
        g = np.ascontiguousarray(adj[o + s:o + s + m * nc].reshape((nc, m)))
        gt = np.ascontiguousarray(g.T)
        xt, xdt = np.ascontiguousarray(x.T), np.ascontiguousarray(xd.T)
        xgt, gtx = x @ gt, gt @ x
        t1 = -(xdt @ g @ xt + xt @ g @ xdt)
        t2 = (-(da @ xgt + a @ (xd @ gt)) @ (x @ xt) +
              (gt - a @ xgt) @ (xd @ xt + x @ xdt))
        t3 = ((xdt @ x + xt @ xd) @ (gt - gtx @ a) -
              (xt @ x) @ ((gt @ xd) @ a + gtx @ da))
        adjdot[ia + s:ia + s + m * nc] += (t1 + t2 + t3).ravel()


def _svd_all(x):
    u, s, vh = np.linalg.svd(x, full_matrices=False)
    return np.concatenate([u.ravel(), s.ravel(), vh.ravel()])


def _qr_all(x):
    q, r = np.linalg.qr(x)
    return np.concatenate([q.ravel(), r.ravel()])


DECOMP_OPS = [
    structured("svd", [np.linalg.svd, np.linalg.svdvals],
               "P = U^T Adot V; sdot = diag(P); Udot = U (F o (P S + S P^T)) + (I - UU^T) "
               "Adot V S^-1; Abar += U (J S + diag(sbar) + S K) V^T + projections, "
               "F_ij = 1/(s_j^2 - s_i^2) (Townsend 2016); vectors of repeated singular values: "
               "no derivative (raises)", svd_forward, svd_tangent, svd_reverse,
               check=decomp_check("svd", svd_size), undefined=SVD_UNDEFINED,
               spec=Spec(shapes=(((3, 3),), ((4, 3),), ((2, 2, 3),)), fn=_svd_all),
               second=svd_hvp),
    structured("qr", [np.linalg.qr],
               "A = [X|Y]: C = Q^T Xdot R1^-1, W = tril(C,-1) - tril(C,-1)^T, R1dot = (C - W) "
               "R1, Qdot = Q W + (I - QQ^T) Xdot R1^-1, (Q^T Y)dot = Qdot^T Y + Q^T Ydot; "
               "Abar: the transpose (Walter & Lehmann 2018, Liao et al. 2019)",
               qr_forward, qr_tangent, qr_reverse, check=decomp_check("qr", qr_size),
               undefined=QR_UNDEFINED, second=qr_hvp,
               spec=Spec(shapes=(((3, 3),), ((4, 3),), ((2, 3, 4),)), fn=_qr_all)),
    structured("pinv", [np.linalg.pinv],
               "X = A^+; Xdot = -X Adot X + X X^T Adot^T (I - A X) + (I - X A) Adot^T X^T X; "
               "Abar += -X^T G X^T + (I - A X) G^T X X^T + X^T X G^T (I - X A) (Golub & "
               "Pereyra 1973, constant rank)", pinv_forward, pinv_tangent, pinv_reverse,
               check=matrix_check(lambda m, nc: m * nc, operand_size=lambda m, nc: m * nc),
               spec=Spec(shapes=(((3, 3),), ((4, 3),), ((2, 2, 3),)), fn=np.linalg.pinv),
               second=pinv_hvp),
]

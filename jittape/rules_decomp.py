"""Op table entries: matrix decompositions (svd, qr) on stacks of (m, n) matrices.

Tangent and adjoint rules side by side, the adjoint the transpose of the tangent map. The
forward kernels call the LAPACK drivers NumPy calls, with NumPy's options
(:data:`jittape.externals.LAPACK`), so replayed values are NumPy's. Sources: Townsend,
"Differentiating the Singular Value Decomposition" (2016) for svd; Walter & Lehmann,
"Algorithmic differentiation of linear algebra functions with application in optimum
experimental design" (2018) and Seeger et al., "Auto-differentiating linear algebra" (2017)
for qr. Layout as in :mod:`jittape.rules_linalg`: a record holds a stack, the batch count
is its size over one matrix's result, and each kind of output (all singular values, then
all U, then all Vh) is one contiguous part.
"""

import numpy as np

from .errors import NotDifferentiableError
from .optable import Spec, pool_at, structured
from .rules_linalg import stack_count  # noqa: F401 (a helper the kernels call by name)

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


def svd_check(t, i, n, sa, sb):
    lay = pool_at(t, int(t.k[i]), 3)
    if lay is None:
        return "pool offset out of range"
    m, nc, flags = lay
    if min(lay) < 0 or flags > 3:
        return "svd layout out of range"
    kk = min(m, nc)
    ku, kv = (m, nc) if flags & 2 else (kk, kk)
    per = kk + (m * ku + kv * nc if flags & 1 else 0)
    nb = n // per if per else 0
    if (per == 0 and n) or (per and n % per) or sa != nb * m * nc:
        return "svd sizes do not match the record"
    return None


SVD_UNDEFINED = (
    "np.linalg.svd: a derivative of singular vectors is undefined here: those of repeated "
    "singular values (equal within 1e-12 relative), of a zero singular value of a "
    "non-square matrix, and the completion columns of U (rows of Vh) that "
    "full_matrices=True adds to a non-square matrix have none; differentiate functions of "
    "the singular values (compute_uv=False), of the vectors of distinct ones, or use "
    "full_matrices=False")


def _svd_all(x):
    u, s, vh = np.linalg.svd(x, full_matrices=False)
    return np.concatenate([u.ravel(), s.ravel(), vh.ravel()])


DECOMP_OPS = [
    structured("svd", [np.linalg.svd, np.linalg.svdvals],
               "P = U^T Adot V; sdot = diag(P); Udot = U (F o (P S + S P^T)) + (I - UU^T) "
               "Adot V S^-1; Abar += U (J S + diag(sbar) + S K) V^T + projections, "
               "F_ij = 1/(s_j^2 - s_i^2) (Townsend 2016); vectors of repeated singular values: "
               "no derivative (raises)", svd_forward, svd_tangent, svd_reverse,
               check=svd_check, undefined=SVD_UNDEFINED,
               spec=Spec(shapes=(((3, 3),), ((4, 3),), ((2, 2, 3),)), fn=_svd_all)),
]

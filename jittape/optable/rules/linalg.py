"""Op table entries: dense linear algebra (inv, solve, slogdet, cholesky, eigh) on stacks.

The first-order kernels are in :mod:`jittape.optable.rules.linalg_kernels`; this module adds
each op's second-order rule (``Op.second``: the tangent of the reverse rule, for HVPs by forward
over reverse) and holds the entries. Every ``*_hvp`` kernel runs the op's reverse rule on the
adjoints and on their tangents, then adds the cross terms: the tangent of the reverse rule with
respect to the values, from the operands' and the result's tangents (``dot``). Sources as for
the first order: Giles, "An extended collection of matrix derivative results for forward and
reverse mode algorithmic differentiation" (2008) for inv, solve and det; Murray,
"Differentiation of the Cholesky decomposition" (2016); Magnus & Neudecker, "Matrix Differential
Calculus", ch. 8 for eigh. A constant operand (``ca``) gets no cross terms.
"""

import numpy as np

from ..._base.errors import NotDifferentiableError
from ..entry import Spec, structured
from .linalg_vjps import cholesky_vjp, eigh_vjp, inv_vjp, slogdet_vjp, solve_vjp
from .linalg_kernels import (cholesky_forward, cholesky_reverse, cholesky_tangent, eigh_forward,
                             eigh_reverse, eigh_tangent, inv_forward, inv_reverse, inv_tangent,
                             lower_half, matrix_check, slogdet_forward, slogdet_reverse,
                             slogdet_tangent, solve_forward, solve_reverse, solve_tangent, square,
                             stack_count, sym)

#: Eigenvalues closer than this times the largest magnitude are taken as equal: the second
#: derivative there needs terms one HVP cannot see (Lewis & Sendov, "Twice differentiable
#: spectral functions", 2001: the limit of (wbar_j - wbar_i) / (w_j - w_i)), so an HVP
#: through them raises. The same tolerance as svd's (rules_decomp.SVD_RTOL).
EIGH_RTOL = 1e-12


def inv_hvp(val, dot, adj, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb):
    # Abar = -Y^T G Y^T (Giles 2008, sec. 3.3), so with Yd the tangent of Y = A^-1:
    # Abar' = -(Y^T G' Y^T + Yd^T G Y^T + Y^T G Yd^T)
    inv_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb)
    inv_reverse(val, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb)
    if ca:
        return
    nn = pool[k]
    for q in range(stack_count(n, nn * nn)):
        s = q * nn * nn
        yt = np.ascontiguousarray(square(val, o + s, nn).T)
        ydt = np.ascontiguousarray(square(dot, o + s, nn).T)
        g = np.ascontiguousarray(square(adj, o + s, nn))
        adjdot[ia + s:ia + s + nn * nn] -= (ydt @ g @ yt + yt @ g @ ydt).ravel()


def solve_hvp(val, dot, adj, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb):
    # Bbar = A^-T G, Abar = -Bbar X^T (Giles 2008, sec. 3.4); their tangents:
    # Bbar' = A^-T (G' - Ad^T Bbar), Abar' = -Bbar' X^T - Bbar Xd^T. With a constant A
    # (Ad = 0) the cross terms vanish.
    solve_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb)
    solve_reverse(val, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb)
    if ca:
        return
    nn, m = pool[k], pool[k + 1]
    for q in range(stack_count(n, nn * m)):
        sa, sb = q * nn * nn, q * nn * m
        at = np.ascontiguousarray(square(val, ia + sa, nn).T)
        x = val[o + sb:o + sb + nn * m].reshape((nn, m))
        xdt = np.ascontiguousarray(dot[o + sb:o + sb + nn * m].reshape((nn, m)).T)
        g = adj[o + sb:o + sb + nn * m].reshape((nn, m)).copy()
        bbar = np.linalg.solve(at, g)
        e = np.linalg.solve(at, np.ascontiguousarray(square(dot, ia + sa, nn).T) @ bbar)
        if not cb:
            adjdot[ib + sb:ib + sb + nn * m] -= e.ravel()
        adjdot[ia + sa:ia + sa + nn * nn] += (e @ np.ascontiguousarray(x.T) -
                                              bbar @ xdt).ravel()


def slogdet_hvp(val, dot, adj, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb):
    # Abar = lbar A^-T (Giles 2008, sec. 3.1), so Abar' = lbar' A^-T - lbar A^-T Ad^T A^-T;
    # the sign is piecewise constant (no adjoint)
    slogdet_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb)
    slogdet_reverse(val, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb)
    if ca:
        return
    nn, nb = pool[k], n // 2
    for q in range(nb):
        g = adj[o + nb + q]
        if g != 0.0 and nn:
            s = ia + q * nn * nn
            zt = np.ascontiguousarray(np.linalg.inv(square(val, s, nn)).T)
            adt = np.ascontiguousarray(square(dot, s, nn).T)
            adjdot[s:s + nn * nn] -= g * (zt @ adt @ zt).ravel()


def cholesky_hvp(val, dot, adj, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb):
    # Abar = sym(W), W = L^-T P L^-1, P = Phi(L^T G) (Murray 2016, eq. 10); its tangent
    # (Phi linear, d(L^-1) = -L^-1 Ld L^-1): Abar' = sym(L^-T Phi(L^T G' + Ld^T G) L^-1
    # - L^-T Ld^T W - W Ld L^-1); the G' term is the reverse rule on adjdot
    cholesky_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb)
    cholesky_reverse(val, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb)
    if ca:
        return
    nn = pool[k]
    for q in range(stack_count(n, nn * nn)):
        s = q * nn * nn
        low = np.ascontiguousarray(square(val, o + s, nn))
        ld = np.ascontiguousarray(square(dot, o + s, nn))
        ldt = np.ascontiguousarray(ld.T)
        g = np.ascontiguousarray(square(adj, o + s, nn))
        li = np.linalg.inv(low)
        lit = np.ascontiguousarray(li.T)
        w = lit @ lower_half(np.ascontiguousarray(low.T) @ g) @ li
        wd = lit @ lower_half(ldt @ g) @ li - lit @ ldt @ w - w @ ld @ li
        adjdot[ia + s:ia + s + nn * nn] += sym(wd).ravel()


def eigh_cross(w, m, kk, wbar):
    # The cross terms of d(V C V^T) in the eigenbasis, with Omega = F o M (Vd = V Omega),
    # K = V^T Vbar, C = diag(wbar) + F o K (eigh_reverse), F_ij = 1 / (w_j - w_i):
    # Omega C + C Omega^T + F' o K + F o (Omega^T K), F'_ij = -(wd_j - wd_i) F_ij^2,
    # wd = diag(M). The diag(wbar) part of Omega C + C Omega^T is the divided difference
    # M_ij (wbar_j - wbar_i) / (w_j - w_i): exact for sum(w^2), however close w_i, w_j.
    nn = w.shape[0]
    f = np.zeros((nn, nn))
    for i in range(nn):
        for j in range(nn):
            if i != j:
                f[i, j] = 1.0 / (w[j] - w[i])
    om = f * m
    e = f * kk
    x = om @ e + e @ np.ascontiguousarray(om.T) + f * (np.ascontiguousarray(om.T) @ kk)
    for i in range(nn):
        for j in range(nn):
            if i != j:
                x[i, j] += f[i, j] * (m[i, j] * (wbar[j] - wbar[i]) -
                                      (m[j, j] - m[i, i]) * f[i, j] * kk[i, j])
    return x


def eigh_tied(w):
    # whether two of the ascending eigenvalues w are equal to EIGH_RTOL relative
    nn = w.shape[0]
    tol = EIGH_RTOL * max(abs(w[0]), abs(w[nn - 1])) if nn else 0.0
    for i in range(nn - 1):
        if w[i + 1] - w[i] <= tol:
            return True
    return False


def eigh_hvp(val, dot, adj, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb):
    # Abar = sym(V C V^T) (Magnus & Neudecker ch. 8; eigh_reverse); its tangent is
    # sym(V (Omega C + C Omega^T + C') V^T) with Vd = V Omega, Omega = F o (V^T S V),
    # S = sym(Ad): the reverse rule on (wbar', Vbar') plus the cross terms (eigh_cross)
    eigh_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb)
    eigh_reverse(val, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb)
    if ca:
        return
    nn = pool[k]
    nb = stack_count(n, nn + nn * nn)
    for q in range(nb):
        ow, ov, s = o + q * nn, o + nb * nn + q * nn * nn, ia + q * nn * nn
        wbar = adj[ow:ow + nn].copy()
        vbar = np.ascontiguousarray(square(adj, ov, nn))
        if not (np.any(wbar != 0.0) or np.any(vbar != 0.0)):
            continue  # no cross terms
        w = val[ow:ow + nn]
        if eigh_tied(w):
            raise NotDifferentiableError(
                "np.linalg.eigh: second derivatives (hvp, hessian) at repeated eigenvalues "
                "(equal within 1e-12 relative) are not available; gradients and JVPs work")
        v = np.ascontiguousarray(square(val, ov, nn))
        vt = np.ascontiguousarray(v.T)
        m = vt @ sym(np.ascontiguousarray(square(dot, s, nn))) @ v
        x = eigh_cross(w, m, vt @ vbar, wbar)
        adjdot[s:s + nn * nn] += sym(v @ x @ vt).ravel()


def _eye(x):
    return np.eye(x.shape[-1])


def _sym(x):
    return x + np.swapaxes(x, -1, -2)


# the generic checker's cases for stacks (tests/test_ops.py adds the single-matrix ones)
_STACKS = (((2, 3, 3),), ((2, 1, 2, 2),))
_INV = Spec(shapes=_STACKS, fn=lambda x: np.linalg.inv(x + 3 * _eye(x)))
_SOLVE = Spec(shapes=(((2, 3, 3), (3,)), ((2, 3, 3), (2, 3, 2)), ((2, 1, 3, 3), (3, 3, 1))),
              fn=lambda a, b: np.linalg.solve(a + 3 * _eye(a), b))
_DET = Spec(shapes=_STACKS, fn=lambda x: np.linalg.det(x + 2 * _eye(x)))
_CHOL = Spec(shapes=_STACKS, fn=lambda x: np.linalg.cholesky(x @ np.swapaxes(x, -1, -2) +
                                                             _eye(x)))
_EIGH = Spec(shapes=_STACKS, fn=lambda x: np.linalg.eigh(
    _sym(x) + np.diag(3.0 * np.arange(x.shape[-1])))[1] ** 2)

LINALG_OPS = [
    structured("inv", [np.linalg.inv], "Y = A^-1; Ydot = -Y Adot Y; Abar += -Y^T Ybar Y^T",
               inv_forward, inv_tangent, inv_reverse,
               check=matrix_check(lambda nn, m: nn * nn), spec=_INV, second=inv_hvp,
               vjp=inv_vjp),
    structured("solve", [np.linalg.solve],
               "X = A^-1 B; Xdot = A^-1 (Bdot - Adot X); Bbar += A^-T Xbar; Abar += -Bbar X^T",
               solve_forward, solve_tangent, solve_reverse, arity=2,
               check=matrix_check(lambda nn, m: nn * m, True), spec=_SOLVE, second=solve_hvp,
               vjp=solve_vjp),
    structured("slogdet", [np.linalg.slogdet, np.linalg.det],
               "(s, l) = (sign, log|det A|); ldot = tr(A^-1 Adot); Abar += lbar A^-T; "
               "det = s e^l", slogdet_forward, slogdet_tangent, slogdet_reverse,
               check=matrix_check(lambda nn, m: 2), spec=_DET, second=slogdet_hvp,
               vjp=slogdet_vjp),
    structured("cholesky", [np.linalg.cholesky],
               "Ldot = L Phi(L^-1 Adot L^-T); Abar += sym(L^-T Phi(L^T Lbar) L^-1), Phi = "
               "lower triangle, half diagonal (Murray 2016)", cholesky_forward,
               cholesky_tangent, cholesky_reverse, check=matrix_check(lambda nn, m: nn * nn),
               spec=_CHOL, second=cholesky_hvp, vjp=cholesky_vjp),
    structured("eigh", [np.linalg.eigh, np.linalg.eigvalsh],
               "wdot = diag(V^T Adot V); Abar += sym(V (diag(wbar) + F o (V^T Vbar)) V^T), "
               "F_ij = 1/(w_j - w_i)", eigh_forward, eigh_tangent, eigh_reverse,
               check=matrix_check(lambda nn, m: nn + nn * nn), spec=_EIGH, second=eigh_hvp,
               vjp=eigh_vjp),
]

"""Op table entries: matrix functions (``scipy.linalg.expm``) on stacks of (n, n) matrices.

The forward kernel is the scaling and squaring method with Padé approximants of degree 3 to 13
(Higham, "The scaling and squaring method for the matrix exponential revisited", SIAM J. Matrix
Anal. Appl. 26, 2005, Algorithm 2.3). SciPy's ``expm`` refines it (Al-Mohy & Higham 2009) in C,
so a replayed value agrees with SciPy's to rounding, not bit for bit; a recorded value is
SciPy's own. The derivative is the Fréchet derivative ``L(A, E)``, the upper right block of
``exp([[A, E], [0, A]])`` (Higham, "Functions of Matrices", SIAM 2008, eq. 3.16 and sec. 10.6),
and its adjoint is ``L(A^T, G)`` (ibid., sec. 3.6), so tangent and reverse use the same kernel;
the second-order rule adds the second Fréchet derivative, from a 4n x 4n block exponential
(Higham & Relton 2014). Layout as in :mod:`jittape.optable.rules.linalg_kernels` (a stack,
pool[k] = n).
"""

import numpy as np

from ..entry import Spec, structured
from .linalg_vjps import expm_vjp
from .linalg_kernels import matrix_check, square, stack_count

# Padé degrees and their 1-norm bounds theta_m (Higham 2005, Table 2.3)
EXPM_THETA3 = 1.495585217958292e-2
EXPM_THETA5 = 2.539398330063230e-1
EXPM_THETA7 = 9.504178996162932e-1
EXPM_THETA9 = 2.097847961257068
EXPM_THETA13 = 5.371920351148152


def expm_coefficients(m):
    # the numerator coefficients b_0..b_m of the [m/m] Padé approximant of exp
    if m == 3:
        return np.array([120.0, 60.0, 12.0, 1.0])
    if m == 5:
        return np.array([30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0])
    if m == 7:
        return np.array([17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0,
                         1.0])
    if m == 9:
        return np.array([17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0,
                         2162160.0, 110880.0, 3960.0, 90.0, 1.0])
    return np.array([64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
                     1187353796428800.0, 129060195264000.0, 10559470521600.0,
                     670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0,
                     16380.0, 182.0, 1.0])


def expm_pade(a, m):
    # U (odd part) and V (even part) of the degree-m Padé approximant, exp(a) ~ (V-U)^-1 (V+U)
    b = expm_coefficients(m)
    n = a.shape[0]
    ident = np.eye(n)
    a2 = a @ a
    if m == 13:
        a4 = a2 @ a2
        a6 = a4 @ a2
        u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 +
                 b[3] * a2 + b[1] * ident)
        v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + \
            b[2] * a2 + b[0] * ident
        return u, v
    u = b[1] * ident
    v = b[0] * ident
    p = ident
    for j in range(1, m // 2 + 1):
        p = p @ a2
        u = u + b[2 * j + 1] * p
        v = v + b[2 * j] * p
    return a @ u, v


def expm_one(a):
    # exp(a) by scaling and squaring (Higham 2005, Algorithm 2.3)
    a = np.ascontiguousarray(a)
    norm = np.max(np.sum(np.abs(a), axis=0)) if a.shape[0] else 0.0
    s = 0
    m = 13
    if norm <= EXPM_THETA3:
        m = 3
    elif norm <= EXPM_THETA5:
        m = 5
    elif norm <= EXPM_THETA7:
        m = 7
    elif norm <= EXPM_THETA9:
        m = 9
    elif norm > EXPM_THETA13:
        s = max(0, int(np.ceil(np.log2(norm / EXPM_THETA13))))
        a = a / 2.0 ** s
    u, v = expm_pade(a, m)
    r = np.ascontiguousarray(np.linalg.solve(v - u, v + u))
    for _ in range(s):
        r = r @ r
    return r


def expm_frechet(a, e):
    # L(a, e): the upper right block of exp([[a, e], [0, a]]); e scaled to a's norm so that
    # it does not decide the scaling (and the Padé degree) alone
    n = a.shape[0]
    na = np.max(np.sum(np.abs(a), axis=0))
    ne = np.max(np.sum(np.abs(e), axis=0))
    if ne == 0.0:
        return np.zeros((n, n))
    f = (na if na > 0.0 else 1.0) / ne
    big = np.zeros((2 * n, 2 * n))
    big[:n, :n] = a
    big[n:, n:] = a
    big[:n, n:] = e * f
    return expm_one(big)[:n, n:] / f


def expm_forward(val, o, n, ia, ib, k, c, pool, off):
    nn = pool[k]
    for q in range(stack_count(n, nn * nn)):
        s = q * nn * nn
        val[o + s:o + s + nn * nn] = expm_one(square(val, ia + s, nn)).ravel()


def expm_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn = pool[k]  # Ydot = L(A, Adot)
    for q in range(stack_count(n, nn * nn)):
        s = q * nn * nn
        dot[o + s:o + s + nn * nn] = expm_frechet(
            np.ascontiguousarray(square(val, ia + s, nn)),
            np.ascontiguousarray(square(dot, ia + s, nn))).ravel()


def expm_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn = pool[k]  # Abar += L(A^T, Ybar)
    for q in range(stack_count(n, nn * nn)):
        s = q * nn * nn
        adj[ia + s:ia + s + nn * nn] += expm_frechet(
            np.ascontiguousarray(square(val, ia + s, nn).T),
            np.ascontiguousarray(square(adj, o + s, nn))).ravel()


def expm_frechet2(a, e1, e2):
    # L2(a, e1, e2), the second Frechet derivative (d/dt L(a + t e2, e1)): the (1, 4) block
    # of exp([[a, e1, e2, 0], [0, a, 0, e2], [0, 0, a, e1], [0, 0, 0, a]]) (Higham & Relton,
    # "Higher order Frechet derivatives of matrix functions and the level-2 condition
    # number", SIAM J. Matrix Anal. Appl. 35, 2014, Thm. 3.5); e1, e2 scaled as in
    # expm_frechet (L2 is bilinear in them)
    n = a.shape[0]
    na = np.max(np.sum(np.abs(a), axis=0))
    n1 = np.max(np.sum(np.abs(e1), axis=0))
    n2 = np.max(np.sum(np.abs(e2), axis=0))
    if n1 == 0.0 or n2 == 0.0:
        return np.zeros((n, n))
    f1 = (na if na > 0.0 else 1.0) / n1
    f2 = (na if na > 0.0 else 1.0) / n2
    big = np.zeros((4 * n, 4 * n))
    for b in range(4):
        big[b * n:(b + 1) * n, b * n:(b + 1) * n] = a
    big[:n, n:2 * n] = e1 * f1
    big[2 * n:3 * n, 3 * n:] = e1 * f1
    big[:n, 2 * n:3 * n] = e2 * f2
    big[n:2 * n, 3 * n:] = e2 * f2
    return expm_one(big)[:n, 3 * n:] / (f1 * f2)


def expm_hvp(val, dot, adj, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb):
    # Abar = L(A^T, G), so Abar' = L(A^T, G') + L2(A^T, G, Ad^T): the reverse rule on
    # adjdot plus the second Frechet derivative (expm_frechet2)
    expm_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb)
    expm_reverse(val, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb)
    if ca:
        return
    nn = pool[k]
    for q in range(stack_count(n, nn * nn)):
        s = q * nn * nn
        adjdot[ia + s:ia + s + nn * nn] += expm_frechet2(
            np.ascontiguousarray(square(val, ia + s, nn).T),
            np.ascontiguousarray(square(adj, o + s, nn)),
            np.ascontiguousarray(square(dot, ia + s, nn).T)).ravel()


MATFUNC_OPS = [
    structured("expm", ["scipy.linalg.expm"],
               "Y = exp(A) (scaling and squaring, Pade 3-13); Ydot = L(A, Adot), the upper "
               "right block of exp([[A, Adot], [0, A]]); Abar += L(A^T, Ybar) (Higham 2008)",
               expm_forward, expm_tangent, expm_reverse,
               check=matrix_check(lambda nn, m: nn * nn), second=expm_hvp, vjp=expm_vjp,
               spec=Spec(lo=-1.0, hi=1.0, shapes=(((3, 3),), ((2, 2, 2),)),
                         fn=lambda x: __import__("scipy.linalg").linalg.expm(x * 3.0))),
]

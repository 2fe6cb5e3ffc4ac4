"""Recorded reverse rules (NumPy code, :mod:`jittape.optable.recorded`) of the entries of
:mod:`jittape.optable.rules.linalg` and :mod:`jittape.optable.rules.matfuncs` that have one:
inv, solve and slogdet (Giles, "An extended collection of matrix derivative results for
forward and reverse mode algorithmic differentiation", 2008, sec. 3.1-3.4), eigh, cholesky
and expm (sources at each rule). They record ops whose rules are here or in
:mod:`jittape.optable.rules.matmul` and :mod:`jittape.optable.rules.array_vjps`, so
derivatives through them nest to any order. Operands are stacks of matrices, flat;
``pool[k]`` is the matrix order."""

import numpy as np

from .linalg_kernels import stack_count


def _stack(v, count, shape):
    return np.reshape(v, shape if count == 1 else (count,) + shape)


def _t(a):
    return np.swapaxes(a, -1, -2)


def _square(r):
    """``(nn, count)``: the matrix order of a rule's record and how many ``nn x nn``
    matrices its value holds."""
    nn = int(r.pool[r.k])
    return nn, stack_count(r.n, nn * nn)


def inv_vjp(r, g):
    # Abar = -Y^T G Y^T, Y = A^-1 (the record's value)
    nn, count = _square(r)
    y = _stack(r.z, count, (nn, nn))
    return [np.ravel(-(_t(y) @ _stack(g, count, (nn, nn)) @ _t(y)))]


def solve_vjp(r, g):
    # X = A^-1 B: Bbar = A^-T G, Abar = -Bbar X^T
    nn, m = int(r.pool[r.k]), int(r.pool[r.k + 1])
    count = stack_count(r.n, nn * m)
    a = _stack(r.x, count, (nn, nn))
    bbar = np.linalg.solve(_t(a), _stack(g, count, (nn, m)))
    abar = -(bbar @ _t(_stack(r.z, count, (nn, m)))) if r.need[0] else None
    return [None if abar is None else np.ravel(abar), np.ravel(bbar) if r.need[1] else None]


def slogdet_vjp(r, g):
    # value: the signs, then the logs of |det A|; Abar = lbar A^-T (the sign: no adjoint)
    nn, nb = int(r.pool[r.k]), r.n // 2
    a = _stack(r.x, nb, (nn, nn))
    lbar = np.reshape(g[nb:], (nb, 1, 1)) if nb != 1 else g[nb:]
    return [np.ravel(lbar * _t(np.linalg.inv(a)))]


def eigh_vjp(r, g):
    # value: every matrix's eigenvalues, then every V; Abar = sym(V (diag(wbar) + F o (V^T
    # Vbar)) V^T), F_ij = 1 / (w_j - w_i) off the diagonal and 0 for equal eigenvalues (the
    # compiled rule's convention; Magnus & Neudecker, "Matrix Differential Calculus", ch. 8)
    nn = int(r.pool[r.k])
    nb = stack_count(r.n, nn + nn * nn)
    w = np.reshape(r.z[:nb * nn], (nb, nn, 1))
    v = np.reshape(r.z[nb * nn:], (nb, nn, nn))
    inner = _t(v) @ np.reshape(g[nb * nn:], (nb, nn, nn))
    gap = _t(w) - w  # [i, j] = w_j - w_i
    eye = np.eye(nn, dtype=bool)
    tie = gap == 0.0
    mid = np.where(eye, np.reshape(g[:nb * nn], (nb, nn, 1)),
                   np.where(tie, 0.0, inner / np.where(tie, 1.0, gap)))
    a = v @ mid @ _t(v)
    return [np.ravel(0.5 * (a + _t(a)))]


def cholesky_vjp(r, g):
    # Abar = sym(L^-T Phi(L^T Lbar) L^-1), Phi: the lower triangle, diagonal halved
    # (Murray, "Differentiation of the Cholesky decomposition", 2016, eq. 10)
    nn, count = _square(r)
    lt = _t(_stack(r.z, count, (nn, nn)))
    p = lt @ _stack(g, count, (nn, nn))
    phi = p * (np.tril(np.ones((nn, nn)), -1) + 0.5 * np.eye(nn))
    s = _t(np.linalg.solve(lt, _t(np.linalg.solve(lt, phi))))
    return [np.ravel(0.5 * (s + _t(s)))]


def expm_vjp(r, g):
    # Abar = L(A^T, G), the Frechet derivative: the upper right block of
    # exp([[A^T, G], [0, A^T]]) (Mathias 1996; Higham, "Functions of Matrices", 2008, 3.2)
    import scipy.linalg
    nn, count = _square(r)
    at = _t(_stack(r.x, count, (nn, nn)))
    gb = _stack(g, count, (nn, nn))
    top = np.concatenate([at, gb], axis=-1)
    bottom = np.concatenate([np.zeros(np.shape(at)), at], axis=-1)
    e = scipy.linalg.expm(np.concatenate([top, bottom], axis=-2))
    return [np.ravel(e[..., :nn, nn:])]

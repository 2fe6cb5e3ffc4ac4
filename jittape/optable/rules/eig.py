"""Op table entry: ``np.linalg.eig`` and ``eigvals`` of general real matrices (stacks).

Value: LAPACK's ``geev`` as NumPy calls it (``jobvr='V'`` for ``eig``, ``'N'`` for
``eigvals``; the pool's second entry), through Numba's own binding (``lapack_geev``,
:mod:`jittape.optable.externals`), and NumPy's conversion of its output to complex
eigenvectors (a conjugate pair ``VR[:, j] +- i VR[:, j + 1]``). Layout of a record of a
stack of ``nb`` matrices ``nn x nn``: ``Re w`` (nb nn), ``Im w`` (nb nn), then, for ``eig``,
``Re V`` and ``Im V`` (nb nn^2 each, C order).

Derivatives (first order; an HVP raises), with ``W = V^-1`` and ``G = W Adot V``
(Magnus & Neudecker, "Matrix Differential Calculus", ch. 8; Boeddeker et al. 2017,
arXiv:1701.00392): ``wdot = diag(G)``; ``Vdot = Y + V diag(alpha + i theta)``,
``Y = V (F o G)``, ``F_ij = 1 / (w_j - w_i)`` (0 for equal eigenvalues), where ``alpha``
and ``theta`` keep LAPACK's normalization of each column (unit 2-norm, its largest
component real): ``alpha = -Re(v^H y)``, ``theta = -Im(y_m) / v_m``. The adjoint is the
transpose of that R-linear map: with ``wbar``, ``Vbar`` complex (real and imaginary
adjoints), ``z_k = vbar_k - Re(vbar_k^H v_k) v_k + i Im(vbar_k^H v_k) / v_mk e_m``,
``Q = diag(wbar) + conj(F) o (V^H Z)`` and ``Abar += Re((V Q^H W)^T)``.
"""

import numpy as np

from ..entry import Spec, structured
from .linalg_kernels import matrix_check, square, stack_count


def eig_lapack(a, vectors):
    # NumPy's eig / eigvals: geev(kind 'd', jobvl 'N', jobvr 'V' / 'N') on a (Fortran order)
    nn = a.shape[0]
    f = a.T.copy()
    wr = np.empty(nn)
    wi = np.empty(nn)
    vl = np.empty(1)
    vr = np.zeros((nn, nn))  # Fortran order: vr[j] is column j
    if nn and lapack_geev(100, 78, 86 if vectors else 78, nn, f.ctypes, nn, wr.ctypes,  # noqa
                          wi.ctypes, vl.ctypes, 1, vr.ctypes, nn):
        raise np.linalg.LinAlgError("Eigenvalues did not converge")
    return wr, wi, vr


def eig_complex_vectors(wi, vr):
    # NumPy's eigenvectors from geev's VR: real columns, and conjugate pairs for wi != 0
    nn = wi.shape[0]
    v = np.zeros((nn, nn), dtype=np.complex128)
    j = 0
    while j < nn:
        if wi[j] == 0.0 or j == nn - 1:
            v[:, j] = vr[j]
            j += 1
        else:
            v[:, j] = vr[j] + 1j * vr[j + 1]
            v[:, j + 1] = vr[j] - 1j * vr[j + 1]
            j += 2
    return v


def eig_per(nn, vectors):
    return 2 * nn + (2 * nn * nn if vectors else 0)


def eig_forward(val, o, n, ia, ib, k, c, pool, off):
    nn, vectors = pool[k], pool[k + 1] == 1
    nb = stack_count(n, eig_per(nn, vectors))
    for q in range(nb):
        wr, wi, vr = eig_lapack(square(val, ia + q * nn * nn, nn), vectors)
        val[o + q * nn:o + q * nn + nn] = wr
        val[o + nb * nn + q * nn:o + nb * nn + q * nn + nn] = wi
        if vectors:
            v = eig_complex_vectors(wi, vr)
            s = o + 2 * nb * nn + q * nn * nn
            val[s:s + nn * nn] = np.ascontiguousarray(v.real).ravel()
            s += nb * nn * nn
            val[s:s + nn * nn] = np.ascontiguousarray(v.imag).ravel()


def eig_parts(val, o, nb, nn, q, vectors, ia):
    # (w, V, W = V^-1) of matrix q as complex arrays; for eigvals V is computed again
    w = val[o + q * nn:o + q * nn + nn] + 1j * val[o + nb * nn + q * nn:o + nb * nn + q * nn
                                                   + nn]
    if vectors:
        s = o + 2 * nb * nn + q * nn * nn
        v = square(val, s, nn) + 1j * square(val, s + nb * nn * nn, nn)
    else:
        wr, wi, vr = eig_lapack(square(val, ia + q * nn * nn, nn), True)
        v = eig_complex_vectors(wi, vr)
    v = np.ascontiguousarray(v)
    return w, v, np.linalg.inv(v)


def eig_gaps(w):
    # F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it and for equal eigenvalues
    nn = w.shape[0]
    f = np.zeros((nn, nn), dtype=np.complex128)
    for i in range(nn):
        for j in range(nn):
            if i != j and w[j] != w[i]:
                f[i, j] = 1.0 / (w[j] - w[i])
    return f


def eig_largest(v, j):
    # the row LAPACK made real in column j: the first largest |v_ij|^2
    m, best = 0, -1.0
    for i in range(v.shape[0]):
        a = v[i, j].real ** 2 + v[i, j].imag ** 2
        if a > best:
            m, best = i, a
    return m


def eig_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    nn, vectors = pool[k], pool[k + 1] == 1
    nb = stack_count(n, eig_per(nn, vectors))
    for q in range(nb):
        w, v, winv = eig_parts(val, o, nb, nn, q, vectors, ia)
        g = winv @ (square(dot, ia + q * nn * nn, nn) + 0j) @ v
        d = np.diag(g).copy()
        dot[o + q * nn:o + q * nn + nn] = d.real
        dot[o + nb * nn + q * nn:o + nb * nn + q * nn + nn] = d.imag
        if vectors:
            y = v @ (eig_gaps(w) * g)
            for j in range(nn):
                alpha = -np.sum(np.conj(v[:, j]) * y[:, j]).real
                m = eig_largest(v, j)
                theta = -y[m, j].imag / v[m, j].real if v[m, j].real != 0.0 else 0.0
                y[:, j] += (alpha + 1j * theta) * v[:, j]
            s = o + 2 * nb * nn + q * nn * nn
            dot[s:s + nn * nn] = np.ascontiguousarray(y.real).ravel()
            s += nb * nn * nn
            dot[s:s + nn * nn] = np.ascontiguousarray(y.imag).ravel()


def eig_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    if ca:
        return
    nn, vectors = pool[k], pool[k + 1] == 1
    nb = stack_count(n, eig_per(nn, vectors))
    for q in range(nb):
        w, v, winv = eig_parts(val, o, nb, nn, q, vectors, ia)
        wbar = adj[o + q * nn:o + q * nn + nn] + 1j * adj[o + nb * nn + q * nn:
                                                          o + nb * nn + q * nn + nn]
        qm = np.diag(wbar)
        if vectors:
            s = o + 2 * nb * nn + q * nn * nn
            vbar = square(adj, s, nn) + 1j * square(adj, s + nb * nn * nn, nn)
            z = vbar.copy()
            for j in range(nn):
                p = np.sum(np.conj(vbar[:, j]) * v[:, j])
                z[:, j] -= p.real * v[:, j]
                m = eig_largest(v, j)
                if v[m, j].real != 0.0:
                    z[m, j] += 1j * p.imag / v[m, j].real
            qm = qm + np.conj(eig_gaps(w)) * (np.conj(v.T) @ z)
        abar = (v @ np.conj(qm.T) @ winv).real.T
        s = ia + q * nn * nn
        adj[s:s + nn * nn] += np.ascontiguousarray(abar).ravel()


def _spec_fn(x):
    # a smooth function of eig's outputs at matrices whose eigenvalues stay distinct, with a
    # complex pair from the block [[0, 3], [-3, 3]] (and a real one, 6, for n = 3)
    nn = x.shape[-1]
    base = np.diag(3.0 * np.arange(nn))
    base[0, 1], base[1, 0] = 3.0, -3.0
    w, v = np.linalg.eig(0.3 * x + base)
    return np.abs(v) ** 2 + np.real(w[..., None, :]) * np.imag(v)


EIG_OPS = [
    structured("eig", [np.linalg.eig, np.linalg.eigvals],
               "A V = V diag(w) (LAPACK geev, NumPy's normalization); wdot = diag(G), "
               "Vdot = V (F o G) + V diag(alpha + i theta), G = V^-1 Adot V, F_ij = "
               "1/(w_j - w_i); first order only", eig_forward, eig_tangent, eig_reverse,
               check=matrix_check(lambda nn, m: eig_per(nn, m == 1)),
               spec=Spec(shapes=(((3, 3),), ((2, 2, 2),)), fn=_spec_fn)),
]

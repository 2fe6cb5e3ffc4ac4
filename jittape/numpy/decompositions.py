"""Matrix decompositions and what is built on them, on active values: ``numpy.linalg``
``svd``, ``svdvals``, ``qr`` and ``pinv`` (one record each, rules in
:mod:`jittape.optable.rules.decomp_kernels`), ``lstsq`` and ``matrix_power`` (compositions), on
matrices
and stacks, with NumPy's values, shapes and result types."""

import operator

import numpy as np

from . import dispatch
from .._base.errors import NotDifferentiableError
from .linalg import linalg_record, flat_part, square_stack, value_of
from ..optable.table import codes as K
from .shaping import refuse_active


def _matrices(name, a):
    v = value_of(a)
    if np.ndim(v) < 2:
        raise np.linalg.LinAlgError(f"np.linalg.{name}: {np.ndim(v)}-dimensional array "
                                    f"given. Array must be at least two-dimensional")
    if v.size == 0:
        raise NotDifferentiableError(f"np.linalg.{name} of an empty matrix (shape {v.shape}) "
                                     f"on active values is not supported")
    return v


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """``np.linalg.svd`` of a matrix or a stack (..., m, n): ``SVDResult(U, S, Vh)`` (or the
    singular values, descending, with ``compute_uv=False``), NumPy's values bit for bit.

    Derivatives (Townsend, "Differentiating the Singular Value Decomposition", 2016): the
    singular values' always (at repeated values, that of the basis LAPACK returns); the vectors'
    where the singular values are distinct (within 1e-12 relative,
    :data:`jittape.optable.rules.decomp_kernels.SVD_RTOL`) and, for a non-square matrix,
    nonzero. Elsewhere the vectors have no derivative: a reverse sweep whose adjoint reaches
    them raises :class:`NotDifferentiableError`, a tangent sweep makes those tangents nan and
    ``jvp`` raises if they reach its result. The same holds for the completion columns of U
    (rows of Vh) that ``full_matrices=True`` adds to a non-square matrix (any orthonormal basis
    of the complement). ``hermitian=True`` is refused (NumPy then uses eigh)."""
    if hermitian:
        raise NotDifferentiableError("np.linalg.svd(hermitian=True) on active values is not "
                                     "supported; use hermitian=False or np.linalg.eigh")
    v = _matrices("svd", a)
    m, n = v.shape[-2:]
    if not compute_uv:
        s = np.linalg.svd(v, compute_uv=False)
        return linalg_record(K.SVD, a, value=s, pool=(m, n, 0))
    u, s, vh = np.linalg.svd(v, full_matrices=full_matrices)
    rec = linalg_record(K.SVD, a, value=np.concatenate([s.ravel(), u.ravel(), vh.ravel()]),
                  pool=(m, n, 1 + 2 * bool(full_matrices and m != n)))
    return np.linalg._linalg.SVDResult(flat_part(rec, s.size, u), flat_part(rec, 0, s),
                                       flat_part(rec, s.size + u.size, vh))


def svdvals(x, /):
    """``np.linalg.svdvals``: :func:`svd` with ``compute_uv=False``."""
    return svd(x, compute_uv=False)


def qr(a, mode="reduced"):
    """``np.linalg.qr`` of a matrix or a stack (..., m, n), NumPy's values bit for bit:
    ``QRResult(Q, R)`` for mode 'reduced' (Q (..., m, k), R (..., k, n), k = min(m, n)) and
    'complete' (Q (..., m, m), R (..., m, n)); R alone for 'r'. Tall, square and wide.

    Derivatives: Walter & Lehmann (2018) for the square part ``X = A[..., :k]`` (R's
    diagonal must be nonzero, A of full rank k), and for a wide matrix R's right block
    ``Q^T Y`` (Liao et al., "Differentiable programming tensor networks", 2019). The last
    m - n columns of Q in mode 'complete' for a tall matrix are any orthonormal completion
    with no derivative: a reverse sweep whose adjoint reaches them raises
    :class:`NotDifferentiableError`, and so does ``jvp`` if their (nan) tangents reach its
    result. Mode 'raw' (Householder reflectors) is refused."""
    if mode not in ("reduced", "complete", "r"):
        if mode == "raw":
            raise NotDifferentiableError("np.linalg.qr(mode='raw') on active values is not "
                                         "supported; use mode='reduced', 'complete' or 'r'")
        raise ValueError(f"Unrecognized mode '{mode}'")
    v = _matrices("qr", a)
    m, n = v.shape[-2:]
    complete = mode == "complete" and m > n
    if mode == "r":
        r = np.linalg.qr(v, mode="r")
        return linalg_record(K.QR, a, value=r, pool=(m, n, 0))
    q, r = np.linalg.qr(v, mode=mode)
    rec = linalg_record(K.QR, a, value=np.concatenate([q.ravel(), r.ravel()]),
                  pool=(m, n, 1 + 2 * complete))
    return np.linalg._linalg.QRResult(flat_part(rec, 0, q), flat_part(rec, q.size, r))


def pinv(a, rcond=None, hermitian=False, *, rtol=np._NoValue):
    """``np.linalg.pinv`` of a matrix or a stack (..., m, n): (..., n, m), NumPy's values
    (its svd, singular values at most ``rcond * max(s)`` dropped; ``rcond``/``rtol`` as
    NumPy: 1e-15 by default, ``max(m, n) eps`` for ``rtol=None``; a scalar).

    Derivative (Golub & Pereyra, "The differentiation of pseudo-inverses and nonlinear least
    squares problems", 1973), exact where the rank is locally constant:
    ``Xdot = -X Adot X + X X^T Adot^T (I - A X) + (I - X A) Adot^T X^T X``, ``X = A^+``.
    ``hermitian=True`` and an array ``rcond`` are refused."""
    refuse_active("linalg.pinv", rcond=rcond, rtol=rtol)
    if hermitian:
        raise NotDifferentiableError("np.linalg.pinv(hermitian=True) on active values is not "
                                     "supported; use hermitian=False")
    v = _matrices("pinv", a)
    z = np.linalg.pinv(v, rcond=rcond, rtol=rtol)  # NumPy's value and argument errors
    if rcond is None:
        rcond = 1e-15 if rtol is np._NoValue else (
            max(v.shape[-2:]) * np.finfo(np.float64).eps if rtol is None else rtol)
    if np.ndim(rcond):
        raise NotDifferentiableError("np.linalg.pinv with an array rcond/rtol on active "
                                     "values is not supported; pass a scalar")
    m, n = v.shape[-2:]
    return linalg_record(K.PINV, a, value=z, pool=(m, n), c=float(rcond))


def lstsq(a, b, rcond=None):
    """``np.linalg.lstsq``: ``(x, residuals, rank, s)`` exactly as NumPy returns them (x of
    b's kind, residuals (k,) or (1,) when the rank is n < m, else empty; rank NumPy's;
    s the singular values), with ``x = pinv(a, rcond) @ b``, the minimum-norm solution NumPy
    computes (gelsd: the same cut-off, ``rcond`` default ``eps * max(m, n)``), so its
    derivative is :func:`pinv`'s (constant rank). Residuals are ``sum((a x - b)^2)``."""
    refuse_active("linalg.lstsq", rcond=rcond)
    av, bv = value_of(a), value_of(b)
    _, resid, rank, _ = np.linalg.lstsq(av, bv, rcond)  # NumPy's checks, rank and types
    m, n = av.shape
    rc = np.finfo(np.float64).eps * max(m, n) if rcond is None else rcond
    x = np.matmul(np.linalg.pinv(a, rcond=rc), b)
    if resid.size:
        r = np.sum((np.matmul(a, x) - b) ** 2, axis=0)
        resid = np.reshape(r, (1,)) if bv.ndim == 1 else r
    s = np.linalg.svd(a, compute_uv=False)
    return x, resid, rank, s


def matrix_power(a, n):
    """``np.linalg.matrix_power`` of a matrix or a stack: NumPy's own sequence of products
    (binary decomposition; ``inv`` first for ``n < 0``), so values are NumPy's; ``n = 0``
    gives the identity, a constant. ``n`` must be a Python integer."""
    refuse_active("linalg.matrix_power", n=n)
    v = square_stack("matrix_power", a)
    try:
        n = operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e
    if n == 0:
        return np.broadcast_to(np.eye(v.shape[-1]), v.shape).copy()
    if n < 0:
        a, n = np.linalg.inv(a), -n
    if n <= 3:
        return a if n == 1 else (a @ a if n == 2 else (a @ a) @ a)
    z = result = None
    while n > 0:
        z = a if z is None else z @ z
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else result @ z
    return result


dispatch.FUNCTIONS.update({np.linalg.svd: svd, np.linalg.qr: qr, np.linalg.pinv: pinv,
                           np.linalg.lstsq: lstsq, np.linalg.matrix_power: matrix_power})
if hasattr(np.linalg, "svdvals"):  # NumPy >= 2
    dispatch.FUNCTIONS[np.linalg.svdvals] = svdvals

"""Dense linear algebra of active values: ``numpy.linalg`` ``inv``, ``solve``, ``slogdet``,
``det``, ``cholesky``, ``eigh``, ``eigvalsh`` (one record each, rules in
:mod:`jittape.optable.rules.linalg_kernels`) and ``norm`` (a composition). Each takes a matrix
or a stack of matrices (leading dimensions, NumPy's broadcasting for ``solve``), one record for
the whole stack. Routines that read one triangle (``cholesky``, ``eigh``) see, and
differentiate, only
that triangle, as NumPy's do."""

import numpy as np

from . import dispatch
from .active import Active, new_active, tape_of, const, reshape
from ..optable.table import codes as K
from .reductions import max_, min_, sum_
from .shaping import alias, refuse_active, take_flat, normalize_axis_index
from .views import getitem


def value_of(a):
    return a._v if isinstance(a, Active) else np.asarray(a, dtype=np.float64)


def square_stack(name, a):
    """``a``'s value, a (stack of) square matrices (..., n, n), else NumPy's LinAlgError."""
    v = value_of(a)
    if np.ndim(v) < 2:
        raise np.linalg.LinAlgError(f"np.linalg.{name}: {np.ndim(v)}-dimensional array "
                                    f"given. Array must be at least two-dimensional")
    if v.shape[-1] != v.shape[-2]:
        raise np.linalg.LinAlgError(f"np.linalg.{name}: expected square matrices (last 2 "
                                    f"dimensions of the array must be square), got shape "
                                    f"{np.shape(v)}")
    return v


def linalg_record(opc, a, b=None, value=None, pool=None, c=0.0):
    t = tape_of(a, b)
    an = a if isinstance(a, Active) else const(t, a)
    bn = (b if isinstance(b, Active) else const(t, b)) if b is not None else None
    return new_active(Active, t, opc, an._i, -1 if bn is None else bn._i, t.push_pool(pool), c,
                value)


def flat_part(rec, start, value):
    """The contiguous part ``rec.flat[start:start + value.size]``, shaped like ``value``."""
    if value.ndim == 0:
        return getitem(rec, start)
    part = new_active(Active, rec._t, K.SLICE, rec._i, -1, start, 0.0, value.ravel())
    return reshape(part, value.shape)


def inv(a):
    """``np.linalg.inv`` of a matrix or a stack (..., n, n): NumPy's values, shape, errors.

    Tangent ``-Y Adot Y``, adjoint ``-Y^T Ybar Y^T`` per matrix (Giles 2008)."""
    v = square_stack("inv", a)
    return linalg_record(K.INV, a, value=np.linalg.inv(v), pool=(v.shape[-1], 0))


def _broadcast(x, shape):
    return x if np.shape(value_of(x)) == tuple(shape) else np.broadcast_to(x, shape)


def solve(a, b):
    """``np.linalg.solve(a, b)`` with NumPy 2's rules: ``a`` (..., n, n); ``b`` (n,) is one
    vector for every matrix, else ``b`` (..., n, k) is a stack of right sides whose leading
    dimensions broadcast with ``a``'s. Result: NumPy's shape and values.

    The operands are broadcast to one stack first (a GATHER, whose adjoint sums over the
    broadcast dimensions); tangent ``A^-1 (Bdot - Adot X)``, adjoints ``Bbar = A^-T Xbar``,
    ``Abar = -Bbar X^T`` (Giles 2008)."""
    v = square_stack("solve", a)
    bv = value_of(b)
    z = np.linalg.solve(v, bv)  # NumPy's value and its errors for mismatched shapes
    n = v.shape[-1]
    if bv.ndim == 1:
        batch, m = v.shape[:-2], 1
        b = reshape(b, (n, 1)) if isinstance(b, Active) else bv.reshape(n, 1)
    else:
        batch, m = np.broadcast_shapes(v.shape[:-2], bv.shape[:-2]), bv.shape[-1]
    a = _broadcast(a, batch + (n, n))
    b = _broadcast(b, batch + (n, m))
    rec = linalg_record(K.SOLVE, a, b, value=z.reshape(batch + (n, m)), pool=(n, m))
    return reshape(rec, z.shape)


def slogdet(a):
    """``np.linalg.slogdet``: ``SlogdetResult(sign, logabsdet)`` of a matrix or a stack, both
    active (the sign has a zero derivative; it replays). ``dlog|det A| = tr(A^-1 dA)``."""
    v = square_stack("slogdet", a)
    sign, logdet = np.linalg.slogdet(v)
    sign, logdet = np.asarray(sign, np.float64), np.asarray(logdet, np.float64)
    rec = linalg_record(K.SLOGDET, a, value=np.concatenate([sign.ravel(), logdet.ravel()]),
                  pool=(v.shape[-1], 0))
    return np.linalg._linalg.SlogdetResult(flat_part(rec, 0, sign),
                                           flat_part(rec, sign.size, logdet))


def det(a):
    """``np.linalg.det`` as ``sign * exp(logabsdet)`` of :func:`slogdet` (stacks too)."""
    sign, logdet = slogdet(a)
    return sign * np.exp(logdet)


def _read_triangle(a, uplo):
    """The symmetric matrices that a LAPACK routine reading one triangle of ``a`` sees.

    ``uplo`` 'L': ``S[i, j] = a[max(i, j), min(i, j)]``, 'U' the mirror image, per matrix of
    a stack; one GATHER, whose adjoint (a scatter-add) lands on the triangle that is read
    only: the other one does not change the result, and its derivative is 0, as for NumPy's
    routine.
    """
    shape = np.shape(a._v)
    n = shape[-1]
    i, j = np.indices((n, n))
    lo, hi = np.maximum(i, j), np.minimum(i, j)
    idx = lo * n + hi if uplo == "L" else hi * n + lo
    nb = int(np.prod(shape[:-2], dtype=np.int64))
    idx = (np.arange(nb)[:, None, None] * (n * n) + idx).reshape(shape)
    return take_flat(a, idx)


def _uplo(name, UPLO):
    u = UPLO.upper() if isinstance(UPLO, str) else UPLO
    if u not in ("L", "U"):
        raise ValueError(f"np.linalg.{name}: UPLO argument must be 'L' or 'U'")
    return u


def cholesky(a, upper=False):
    """``np.linalg.cholesky`` of a matrix or a stack: reads the lower triangle of each (the
    upper one with ``upper=True``, which returns the upper factor U, ``a = U^T U``), like
    NumPy. Tangent and adjoint: Murray, "Differentiation of the Cholesky decomposition"
    (2016)."""
    v = square_stack("cholesky", a)
    z = np.linalg.cholesky(v, upper=True) if upper else np.linalg.cholesky(v)
    s = _read_triangle(a, "U" if upper else "L")
    low = np.ascontiguousarray(np.swapaxes(z, -1, -2)) if upper else z
    r = linalg_record(K.CHOLESKY, s, value=low, pool=(v.shape[-1], 0))
    return np.swapaxes(r, -1, -2) if upper else r


def eigh(a, UPLO="L"):
    """Eigenvalues (ascending, shape (..., n)) and eigenvectors (..., n, n) of the symmetric
    matrices whose lower (UPLO='L', the default) or upper (UPLO='U') triangles are those of
    ``a`` (a matrix or a stack); the other triangle is not read, as in NumPy. Rule: Magnus &
    Neudecker, "Matrix Differential Calculus", ch. 8; eigenvector derivatives are defined
    where the eigenvalues are distinct (equal ones contribute 0)."""
    uplo = _uplo("eigh", UPLO)
    v = square_stack("eigh", a)
    n = v.shape[-1]
    w, vec = np.linalg.eigh(v, UPLO=uplo)  # NumPy's own values
    rec = linalg_record(K.EIGH, _read_triangle(a, uplo), value=np.concatenate([w.ravel(),
                                                                         vec.ravel()]),
                  pool=(n, int(uplo == "U")))
    return np.linalg._linalg.EighResult(flat_part(rec, 0, w), flat_part(rec, w.size, vec))


def eigvalsh(a, UPLO="L"):
    """The eigenvalues of :func:`eigh` (same triangle rule)."""
    return eigh(a, UPLO)[0]


def norm(x, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm``: vector ords None/2/1/inf/-inf/0/p, matrix None/'fro'/1/-1/inf/-inf
    and 2/-2/'nuc' (largest, smallest, sum of the singular values:
    :func:`jittape.numpy.decompositions.svd` with ``compute_uv=False``, whose derivative is ``U
    diag(sbar) V^T``, e.g. ``d||A||_nuc = U V^T``).

    Axis None, int or 2-tuple, keepdims, as NumPy. The derivative of the 2-norm (and 'fro')
    at x = 0 is nan here: sqrt's derivative at 0 is infinite, times 0 (the true subgradient
    set contains 0). At repeated largest (smallest) singular values, ord=2 (-2) takes one
    of them, as ``max`` does at ties (a subgradient).
    """
    refuse_active("linalg.norm", ord=ord, axis=axis)
    if not isinstance(x, Active):
        raise TypeError("norm: x must be an active value")
    xv = np.asarray(x._v)
    nd = xv.ndim
    is_str = isinstance(ord, str)
    if axis is None:
        if ord is None or (is_str and ord in ("f", "fro") and nd == 2) or (
                not is_str and ord == 2 and nd == 1):
            ret = np.sqrt(sum_(alias(x, (-1,)) ** 2))
            if keepdims:
                ret = alias(ret, nd * [1])
            return ret
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = int(axis)
        except Exception as e:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from e
        axis = (axis,)
    if len(axis) == 1:
        if not is_str and ord == np.inf:
            ax = normalize_axis_index(axis[0], nd)
            if xv.shape[ax] == 0:  # NumPy's initial=0
                return np.linalg.norm(xv, ord, axis, keepdims)
            return max_(abs(x), axis=axis, keepdims=keepdims)
        if not is_str and ord == -np.inf:
            return min_(abs(x), axis=axis, keepdims=keepdims)
        if not is_str and ord == 0:
            return sum_(x != 0.0, axis=axis, keepdims=keepdims)
        if not is_str and ord == 1:
            return sum_(abs(x), axis=axis, keepdims=keepdims)
        if ord is None or (not is_str and ord == 2):
            return np.sqrt(sum_(x ** 2, axis=axis, keepdims=keepdims))
        if is_str:
            raise ValueError(f"Invalid norm order '{ord}' for vectors")
        p = float(ord)
        return sum_(abs(x) ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)
    if len(axis) == 2:
        row, col = (normalize_axis_index(a, nd) for a in axis)
        if row == col:
            raise ValueError("Duplicate axes given.")
        if (not is_str and ord in (2, -2)) or ord == "nuc":
            # NumPy's _multi_svd_norm: the singular values of the matrices in the last axes
            s = np.linalg.svd(np.moveaxis(x, (row, col), (-2, -1)), compute_uv=False)
            ret = sum_(s, axis=-1) if ord == "nuc" else (max_ if ord == 2 else min_)(s, axis=-1)
        elif not is_str and ord in (1, -1):
            red = max_ if ord == 1 else min_
            ret = red(sum_(abs(x), axis=row), axis=col - 1 if col > row else col)
        elif not is_str and ord in (np.inf, -np.inf):
            red = max_ if ord == np.inf else min_
            ret = red(sum_(abs(x), axis=col), axis=row - 1 if row > col else row)
        elif ord is None or ord in ("fro", "f"):
            ret = np.sqrt(sum_(x ** 2, axis=axis))
        else:
            raise ValueError("Invalid norm order for matrices.")
        if keepdims:
            shape = list(xv.shape)
            shape[axis[0]] = 1
            shape[axis[1]] = 1
            ret = alias(ret, shape)
        return ret
    raise ValueError("Improper number of dimensions to norm.")


dispatch.FUNCTIONS.update({
    np.linalg.inv: inv, np.linalg.solve: solve, np.linalg.slogdet: slogdet,
    np.linalg.det: det, np.linalg.cholesky: cholesky, np.linalg.eigh: eigh,
    np.linalg.eigvalsh: eigvalsh, np.linalg.norm: norm,
})

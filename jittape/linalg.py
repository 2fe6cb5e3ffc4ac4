"""Dense linear algebra of active values: ``numpy.linalg`` ``inv``, ``solve``, ``slogdet``,
``det``, ``cholesky``, ``eigh``, ``eigvalsh`` (one record each, rules in
:mod:`jittape.rules_linalg`) and ``norm`` (a composition). Routines that read one triangle
(``cholesky``, ``eigh``) see, and differentiate, only that triangle, as NumPy's do."""

import numpy as np

from . import dispatch
from .active import Active, _new, _tape_of, const, reshape
from .errors import NotDifferentiableError
from .ops import codes as K
from .reductions import max_, min_, sum_
from .shaping import _alias, _refuse_active, _take, _unsupported, normalize_axis_index, transpose
from .views import getitem


def _square(name, a):
    v = a._v if isinstance(a, Active) else np.asarray(a, dtype=np.float64)
    if np.ndim(v) != 2 or v.shape[0] != v.shape[1]:
        if np.ndim(v) > 2:
            raise NotDifferentiableError(
                f"np.linalg.{name} of a stack of matrices (shape {np.shape(v)}) is not "
                f"supported; loop over the matrices")
        raise np.linalg.LinAlgError(f"np.linalg.{name}: expected a square matrix, got shape "
                                    f"{np.shape(v)}")
    return v


def _linalg(opc, a, b=None, value=None, pool=None):
    t = _tape_of(a, b)
    an = a if isinstance(a, Active) else const(t, a)
    bn = (b if isinstance(b, Active) else const(t, b)) if b is not None else None
    return _new(Active, t, opc, an._i, -1 if bn is None else bn._i, t.push_pool(pool), 0.0,
                value)


def inv(a):
    """``np.linalg.inv`` of a square matrix: adjoint ``-A^-T Abar A^-T``."""
    v = _square("inv", a)
    return _linalg(K.INV, a, value=np.linalg.inv(v), pool=(v.shape[0], 0))


def solve(a, b):
    """``np.linalg.solve(a, b)``, ``b`` a vector or a matrix of right-hand sides."""
    v = _square("solve", a)
    bv = b._v if isinstance(b, Active) else np.asarray(b, dtype=np.float64)
    z = np.linalg.solve(v, bv)
    if np.ndim(bv) not in (1, 2):
        raise NotDifferentiableError("np.linalg.solve with a stacked right side is not "
                                     "supported")
    m = 1 if np.ndim(bv) == 1 else bv.shape[1]
    return _linalg(K.SOLVE, a, b, value=z, pool=(v.shape[0], m))


def slogdet(a):
    """``(sign, logabsdet)``: both active (sign has no derivative; it replays)."""
    v = _square("slogdet", a)
    sign, logdet = np.linalg.slogdet(v)
    rec = _linalg(K.SLOGDET, a, value=np.array([sign, logdet]), pool=(v.shape[0], 0))
    return getitem(rec, 0), getitem(rec, 1)


def det(a):
    """``np.linalg.det`` as ``sign * exp(logabsdet)`` of :func:`slogdet`."""
    sign, logdet = slogdet(a)
    return sign * np.exp(logdet)


def _read_triangle(a, uplo):
    """The symmetric matrix that a LAPACK routine reading one triangle of ``a`` sees.

    ``uplo`` 'L': ``S[i, j] = a[max(i, j), min(i, j)]``, 'U' the mirror image; one GATHER,
    whose adjoint (a scatter-add) lands on the triangle that is read only: the other one
    does not change the result, and its derivative is 0, as for NumPy's routine.
    """
    n = np.shape(a._v)[0]
    i, j = np.indices((n, n))
    lo, hi = np.maximum(i, j), np.minimum(i, j)
    idx = lo * n + hi if uplo == "L" else hi * n + lo
    return _take(a, idx)


def _uplo(name, UPLO):
    u = UPLO.upper() if isinstance(UPLO, str) else UPLO
    if u not in ("L", "U"):
        raise ValueError(f"np.linalg.{name}: UPLO argument must be 'L' or 'U'")
    return u


def cholesky(a, upper=False):
    """``np.linalg.cholesky``: reads the lower triangle of ``a`` (the upper one with
    ``upper=True``, which returns the upper factor U, ``a = U.T @ U``), like NumPy."""
    v = _square("cholesky", a)
    z = np.linalg.cholesky(v, upper=True) if upper else np.linalg.cholesky(v)
    s = _read_triangle(a, "U" if upper else "L")
    low = np.ascontiguousarray(z.T) if upper else z
    r = _linalg(K.CHOLESKY, s, value=low, pool=(v.shape[0], 0))
    return transpose(r) if upper else r


def eigh(a, UPLO="L", _vectors=True):
    """Eigenvalues (ascending) and eigenvectors of the symmetric matrix whose lower (UPLO='L',
    the default) or upper (UPLO='U') triangle is that of ``a``; the other triangle is not
    read, as in NumPy. Eigenvector adjoints are defined where the eigenvalues are distinct."""
    uplo = _uplo("eigh", UPLO)
    v = _square("eigh", a)
    n = v.shape[0]
    w, vec = np.linalg.eigh(v, UPLO=uplo)  # NumPy's own values
    rec = _linalg(K.EIGH, _read_triangle(a, uplo), value=np.concatenate([w, vec.ravel()]),
                  pool=(n, int(uplo == "U" and _vectors)))  # 1: not replayable (replay.py)
    t = rec._t
    wr = _new(Active, t, K.SLICE, rec._i, -1, 0, 0.0, w)
    vr = reshape(_new(Active, t, K.SLICE, rec._i, -1, n, 0.0, vec.ravel()), (n, n))
    return np.linalg._linalg.EighResult(wr, vr)


def eigvalsh(a, UPLO="L"):
    """The eigenvalues of :func:`eigh` (same triangle rule)."""
    return eigh(a, UPLO, _vectors=False)[0]  # eigenvalues replay for either triangle


def norm(x, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm``: vector ords None/2/1/inf/-inf/0/p, matrix None/'fro'/1/-1/inf/-inf.

    Axis None, int or 2-tuple, keepdims, as NumPy. Matrix ords 2, -2 and 'nuc' need singular
    values and are refused. The derivative of the 2-norm (and 'fro') at x = 0 is nan here:
    sqrt's derivative at 0 is infinite, times 0 (the true subgradient set contains 0).
    """
    _refuse_active("linalg.norm", ord=ord, axis=axis)
    if not isinstance(x, Active):
        raise TypeError("norm: x must be an active value")
    xv = np.asarray(x._v)
    nd = xv.ndim
    is_str = isinstance(ord, str)
    if axis is None:
        if ord is None or (is_str and ord in ("f", "fro") and nd == 2) or (
                not is_str and ord == 2 and nd == 1):
            ret = np.sqrt(sum_(_alias(x, (-1,)) ** 2))
            if keepdims:
                ret = _alias(ret, nd * [1])
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
            _unsupported("linalg.norm", f"ord={ord!r} for matrices",
                         "it needs singular values; use ord='fro', 1, -1, inf or -inf")
        if not is_str and ord in (1, -1):
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
            ret = _alias(ret, shape)
        return ret
    raise ValueError("Improper number of dimensions to norm.")


dispatch.FUNCTIONS.update({
    np.linalg.inv: inv, np.linalg.solve: solve, np.linalg.slogdet: slogdet,
    np.linalg.det: det, np.linalg.cholesky: cholesky, np.linalg.eigh: eigh,
    np.linalg.eigvalsh: eigvalsh, np.linalg.norm: norm,
})

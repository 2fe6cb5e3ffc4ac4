"""``scipy.linalg``'s Cholesky and LU factorizations and triangular solves of active values.

``cholesky``, ``cho_factor``, ``cho_solve``, ``solve_triangular``, ``lu_factor`` and
``lu_solve`` start with ``np.asarray``, which would drop the derivative, so jittape wraps
them in ``scipy.linalg`` (:mod:`.composed` installs them): given an active argument the
wrapper first calls SciPy's own function on the values (SciPy's errors, warnings, shapes
and ``lu_factor``'s pivots), then composes the result from ops jittape records, so every
mode (gradients, JVPs, HVPs, replay) works:

* ``cholesky``/``cho_factor``: ``np.linalg.cholesky`` of the triangle LAPACK's potrf reads
  (the CHOLESKY op, Murray, "Differentiation of the Cholesky decomposition", 2016);
* triangular solves (``solve_triangular``, ``cho_solve``, ``lu_solve``): ``np.linalg.solve``
  of the triangle read, zeros elsewhere (the SOLVE op; Giles, "Collected matrix derivative
  results for forward and reverse mode algorithmic differentiation", 2008: ``Xdot = T^-1 (Bdot - Tdot X)``,
  ``Bbar = T^-T Xbar``, ``Tbar = -Bbar X^T`` restricted to the triangle). That costs
  ``O(n^3)`` per solve where LAPACK's trtrs costs ``O(n^2 k)``; the values equal SciPy's to
  rounding;
* ``lu_factor``: SciPy's pivots, recorded as constants under guards, and the elimination
  without pivoting of the permuted matrix, one step per column (Doolittle), which is the
  factorization LAPACK's getrf computes, to rounding. The tape holds ``O(m n min(m, n))``
  values.

Batches (leading dimensions, SciPy's ``_apply_over_batch``) are supported, with SciPy's
result types (a batched ``cho_factor`` or ``lu_factor`` returns a list, as SciPy's does). The
``overwrite_*`` flags are accepted and ignored: an active input is never overwritten.

A name bound before jittape was imported (``from scipy.linalg import cholesky`` in a module
imported first, as scikit-learn's ``_gpr`` does) is rebound to the wrapper while a recording
runs (:mod:`jittape.numpy.stand_ins`).
"""

import numpy as np

from .._base.errors import NotDifferentiableError
from ..numpy.active import Active, guard


def _value(x):
    return x._v if isinstance(x, Active) else np.asarray(x)


def _scipy(name):
    """SciPy's own ``scipy.linalg.<name>`` (not jittape's wrapper)."""
    import scipy.linalg
    f = getattr(scipy.linalg, name)
    return getattr(f, "__wrapped_by_jittape__", f)


def _atleast_2d(a):
    return a if np.ndim(_value(a)) >= 2 else np.reshape(a, (1, -1))


def _flag(lower):
    # a batched cho_factor returns its flags as an array: SciPy passes it on to LAPACK
    return bool(np.ravel(lower)[0]) if np.ndim(lower) else bool(lower)


def _triangle(a, lower, unit_diagonal=False):
    """The triangle of (a stack of) matrices ``a`` that LAPACK reads, zeros elsewhere (ones
    on the diagonal with ``unit_diagonal``): constant masks, so the unread elements get a
    zero derivative."""
    if not unit_diagonal:
        return np.tril(a) if lower else np.triu(a)
    t = np.tril(a, -1) if lower else np.triu(a, 1)
    return t + np.eye(np.shape(_value(a))[-1])


def _transpose(a):
    return np.swapaxes(a, -1, -2)


def _solve(t, b):
    """``np.linalg.solve(t, b)`` with SciPy's rule for ``b``: 1-D is one vector (for every
    matrix of a stack ``t``), else ``(..., n, k)``."""
    if np.ndim(_value(b)) == 1:
        return np.linalg.solve(t, np.reshape(b, (-1, 1)))[..., 0]
    return np.linalg.solve(t, b)


def _column(b):
    """``b`` with 1-D made ``(n, 1)``, and whether it was."""
    vec = np.ndim(_value(b)) == 1
    return (np.reshape(b, (-1, 1)) if vec else b), vec


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """``scipy.linalg.cholesky``: the upper (default) or lower factor, one triangle read.

    The upper factor ``U`` (``a = U^T U``, zeros below the diagonal) by default, the lower
    one ``L`` (``a = L L^T``) with ``lower=True``, of a matrix or a stack ``(..., n, n)``;
    the result has ``a``'s shape, float64.

    Only the triangle potrf reads is read: the upper one by default, the lower one with
    ``lower=True``; the derivative with respect to the other is 0. Derivative: Murray,
    "Differentiation of the Cholesky decomposition" (2016). Errors are SciPy's
    (``LinAlgError`` "k-th leading minor of the array is not positive definite",
    ``ValueError`` for non-square input or, with ``check_finite``, infs and NaNs)."""
    ref = _scipy("cholesky")(_value(a), lower=lower, check_finite=check_finite)
    if ref.size == 0:
        return ref
    return np.linalg.cholesky(_atleast_2d(a), upper=not _flag(lower))


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """``scipy.linalg.cho_factor``: ``(c, lower)``, ``c``'s other triangle ``a``'s own.

    ``(c, lower)`` (a list ``[c, lowers]`` for a stack, as SciPy's), ``c`` holding
    :func:`cholesky`'s factor in the ``lower`` (default upper) triangle and, as SciPy's
    (potrf leaves it untouched), ``a``'s own elements in the other, strict triangle, whose
    derivative is the identity (they pass through). Same errors as :func:`cholesky`."""
    ref = _scipy("cho_factor")(_value(a), lower=lower, check_finite=check_finite)
    if ref[0].size == 0:
        return ref
    low = _flag(lower)
    a = _atleast_2d(a)
    c = np.linalg.cholesky(a, upper=not low) + (np.triu(a, 1) if low else np.tril(a, -1))
    return (c, ref[1]) if isinstance(ref, tuple) else [c, ref[1]]


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """``scipy.linalg.cho_solve``: two solves with the ``lower``-side triangle of ``c``.

    ``cho_solve((c, lower), b)`` is ``x`` with ``A x = b``, ``A = L L^T`` (``lower``, ``L``
    the lower triangle of ``c``) or ``U^T U`` (``U`` its upper triangle); the other triangle
    of ``c`` is not read (derivative 0). ``b`` is ``(n,)`` or ``(n, k)`` (with batches:
    SciPy's rule); the result has ``b``'s shape broadcast with ``c``'s batch. Two triangular
    solves (see the module's note on their cost); errors are SciPy's."""
    c, lower = c_and_lower
    ref = _scipy("cho_solve")((_value(c), lower), _value(b), check_finite=check_finite)
    if ref.size == 0:
        return ref
    t = _triangle(c, _flag(lower))
    b2, vec = _column(b)
    if _flag(lower):
        x = np.linalg.solve(_transpose(t), np.linalg.solve(t, b2))
    else:
        x = np.linalg.solve(t, np.linalg.solve(_transpose(t), b2))
    return x[..., 0] if vec else x


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    """``scipy.linalg.solve_triangular``: ``np.linalg.solve`` of the triangle read.

    ``x`` with ``op(T) x = b``, ``T`` the upper (or, with ``lower``, lower) triangle of
    ``a``, its diagonal taken as ones with ``unit_diagonal`` (then not read), ``op`` the
    identity for ``trans`` 0/'N' and the transpose for 1/'T' and 2/'C' (the same for real
    values; as SciPy's for a C-ordered ``a``, any other true ``trans`` is taken as 1).
    Elements of ``a`` that are not read have a zero derivative. Shapes: ``a (..., n, n)``,
    ``b (n,)`` or ``(..., n, k)``; the result has ``b``'s shape (broadcast with ``a``'s
    batch). Errors are SciPy's (``LinAlgError`` "singular matrix: resolution failed at
    diagonal i" for a zero on the diagonal)."""
    ref = _scipy("solve_triangular")(_value(a), _value(b), trans=trans, lower=lower,
                                     unit_diagonal=unit_diagonal, check_finite=check_finite)
    if ref.size == 0:
        return ref
    t = _triangle(a, _flag(lower), bool(unit_diagonal))
    if {"N": 0, "T": 1, "C": 2}.get(trans, trans):  # (SciPy's: any other true value of
        t = _transpose(t)  # trans, for a C-ordered a, solves the transposed system too)
    return _solve(t, b)


def _order(piv, m):
    """The rows of the factored matrix in the order LAPACK's interchanges ``piv`` (0-based:
    row k swapped with row piv[k], k = 0, 1, ...) leave them, and per step k the mask of
    the rows below k that come before the pivot row in LAPACK's order at that step (the
    pivot search takes the first largest magnitude: a tie with such a row moves the
    pivot)."""
    order = np.arange(m)
    final = np.arange(m)
    for k, p in enumerate(piv):
        final[k], final[p] = final[p], final[k]
    before = []
    for k, p in enumerate(piv):
        pos = np.empty(m, dtype=np.intp)
        pos[order] = np.arange(m)
        before.append(pos[final[k + 1:]] < p)
        order[k], order[p] = order[p], order[k]
    return final, before


def _assemble(parts, nb, m, n):
    """The ``(nb, m, n)`` LU matrices from the steps' rows of U and columns of L (each part
    ``(nb, length)``): one concatenation, one gather."""
    src = np.empty((nb, m, n), dtype=np.intp)
    off, q = 0, np.arange(nb)[:, None]
    for k, (u, low) in enumerate(parts):
        src[:, k, k:] = off + q * (n - k) + np.arange(n - k)
        off += nb * (n - k)
        if low is not None:
            src[:, k + 1:, k] = off + q * (m - k - 1) + np.arange(m - k - 1)
            off += nb * (m - k - 1)
    flat = np.concatenate([np.reshape(p, (-1,)) for part in parts for p in part
                           if p is not None])
    return flat[src]


def lu_factor(a, overwrite_a=False, check_finite=True):
    """``scipy.linalg.lu_factor``: SciPy's pivots, guarded, and the elimination recorded.

    ``(lu, piv)`` of a matrix ``(m, n)`` or a stack (a list ``[lu, piv]`` then, as SciPy's):
    ``lu`` holds U and, below the diagonal, L's multipliers; ``piv`` (int32, ``min(m, n)``)
    are SciPy's 0-based row interchanges.

    The pivots are SciPy's, constants guarded by the comparisons LAPACK's pivot search made
    (``|pivot| >= |other|`` in each column, ``>`` against the rows LAPACK sees first), so a
    replay at values that pivot otherwise fails its guard (``taped`` functions record
    again). ``lu`` is the elimination of the permuted matrix ``P A`` with those pivots,
    recorded step by step: its derivative is that of ``L U = P A`` with ``P`` fixed
    (``Ldot = L tril(L^-1 P Adot U^-1, -1)``, ``Udot = triu(L^-1 P Adot U^-1) U``; de Hoog,
    Anderssen & Lukas, "Differentiation of matrix functionals using triangular
    factorization", Math. Comp. 2011). A zero pivot (an exactly singular matrix, SciPy's
    ``LinAlgWarning``) leaves its column as it is, as LAPACK does; that column's derivative
    is then not meaningful."""
    ref = _scipy("lu_factor")(_value(a), check_finite=check_finite)
    lu_ref, piv = ref
    if lu_ref.size == 0:
        return ref
    shape = lu_ref.shape
    m, n = shape[-2:]
    nb = int(np.prod(shape[:-2], dtype=np.int64))
    pv = np.reshape(piv, (nb, -1))
    orders = [_order(p, m) for p in pv]
    rows = np.stack([o[0] for o in orders])  # (nb, m)
    src = (np.arange(nb)[:, None, None] * (m * n) + rows[:, :, None] * n + np.arange(n))
    s = np.reshape(a, (-1,))[src]  # P A, (nb, m, n)
    parts = []
    for k in range(min(m, n)):
        u = s[:, 0, :]
        if m - k == 1:
            parts.append((u, None))
            break
        col = s[:, :, 0]
        mag = np.abs(col)
        before = np.stack([o[1][k] for o in orders])
        guard(np.where(before, mag[:, :1] > mag[:, 1:], mag[:, :1] >= mag[:, 1:]))
        head = col[:, :1]
        low = col[:, 1:] / np.where(head == 0.0, 1.0, head)  # (0 / 1 for a zero pivot)
        parts.append((u, low))
        if n - k > 1:
            s = s[:, 1:, 1:] - low[:, :, None] * u[:, None, 1:]
    lu = np.reshape(_assemble(parts, nb, m, n), shape)
    return (lu, piv) if isinstance(ref, tuple) else [lu, piv]


def _permutation(piv, n):
    """``P`` (..., n, n) with ``P @ b = b`` in the order of LAPACK's interchanges ``piv``."""
    pv = np.asarray(piv)
    flat = np.reshape(pv, (-1, pv.shape[-1]))
    out = np.zeros((flat.shape[0], n, n))
    for q, p in enumerate(flat):
        out[q, np.arange(n), _order(p, n)[0]] = 1.0
    return np.reshape(out, pv.shape[:-1] + (n, n))


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """``scipy.linalg.lu_solve``: a permutation and two solves with ``lu``'s triangles.

    ``lu_solve((lu, piv), b, trans)`` is ``x`` with ``A x = b`` (``trans`` 0), ``A^T x = b``
    (1, and 2 for real values), ``A = P L U`` as :func:`lu_factor` gives it (``L`` the unit
    lower triangle of ``lu``, its diagonal not read, ``U`` the upper one). ``piv`` must be
    constant (integers). ``b`` is ``(n,)`` or ``(n, k)`` (batches: SciPy's rule); the result
    has ``b``'s shape. Two triangular solves and a permutation; errors are SciPy's."""
    lu, piv = lu_and_piv
    if isinstance(piv, Active):
        raise NotDifferentiableError("scipy.linalg.lu_solve: the pivots piv must be constant "
                                     "integers (lu_factor's), not an active value")
    ref = _scipy("lu_solve")((_value(lu), piv), _value(b), trans=trans,
                             check_finite=check_finite)
    if ref.size == 0:
        return ref
    n = np.shape(_value(lu))[-1]
    low, up = _triangle(lu, True, True), _triangle(lu, False)
    p = _permutation(piv, n)
    b2, vec = _column(b)
    if trans == 0:
        x = np.linalg.solve(up, np.linalg.solve(low, p @ b2))
    else:
        x = _transpose(p) @ np.linalg.solve(_transpose(low),
                                            np.linalg.solve(_transpose(up), b2))
    return x[..., 0] if vec else x


def _factored(name):
    """``active_arguments`` of a function whose first argument ``name`` is a ``(matrix, flag
    or pivots)`` tuple (``cho_solve``, ``lu_solve``): the tuple is looked into, its matrix
    made an active array if it is a list of actives; active if the matrix or another
    argument is."""
    def active_arguments(args, kwargs):
        from .special import top_level
        pair, where = (args[0], 0) if args else (kwargs.get(name), name)
        if type(pair) not in (tuple, list) or len(pair) != 2:
            return top_level(args, kwargs)  # (SciPy raises for it)
        rest, kwargs, active = top_level(args[1:], {k: v for k, v in kwargs.items()
                                                    if k != name})
        (mat,), _, mat_active = top_level(tuple(pair[:1]), {})
        pair = (mat, pair[1])
        mat_active = mat_active or isinstance(pair[1], Active)  # (refused by name)
        if where == 0:
            return (pair,) + rest, kwargs, active or mat_active
        return rest, {**kwargs, name: pair}, active or mat_active
    return active_arguments


cho_solve.active_arguments = _factored("c_and_lower")
lu_solve.active_arguments = _factored("lu_and_piv")

#: The wrappers :mod:`.composed` installs in ``scipy.linalg``.
SCIPY_LINALG = {"cholesky": cholesky, "cho_factor": cho_factor, "cho_solve": cho_solve,
                "solve_triangular": solve_triangular, "lu_factor": lu_factor,
                "lu_solve": lu_solve}

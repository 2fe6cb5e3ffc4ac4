"""SciPy functions that are plain Python over LAPACK or C, composed for active values.

``scipy.signal.convolve``, ``scipy.linalg.solve_banded`` and ``scipy.linalg.solve_sylvester``
convert their arguments with ``np.asarray``, which would drop the derivative. When SciPy's
``signal``/``linalg`` module is loaded, :func:`install` replaces the module's attribute by a
wrapper (as :mod:`jittape.scipy.special` does): given an active argument it evaluates the
composition below with NumPy functions that jittape records; otherwise SciPy's own function
runs unchanged. A reference taken with ``from scipy.signal import convolve`` before jittape is
imported and before a recording starts still points to SciPy's function (which then refuses
active values by name).

:data:`SCIPY_FUNCTIONS` also holds, and :func:`install` installs, the factorizations and
triangular solves of :mod:`.factorizations` and the distances of :mod:`.distance`.
"""

import numpy as np

from .distance import SCIPY_DISTANCE
from .factorizations import SCIPY_LINALG
from .special import wrap, loaded

_installed = set()


def convolve(in1, in2, mode="full", method="auto"):
    """``scipy.signal.convolve`` of N-D arrays, either or both active: the direct sum.

    ``method`` is ignored (the result is SciPy's ``method='direct'``).

    Shape: ``full`` ``s1 + s2 - 1``, ``valid`` ``max(s1, s2) - min(s1, s2) + 1`` (one input
    at least as large as the other in every axis, else SciPy's ValueError), ``same``
    ``s1``, each the window of the full convolution SciPy takes (``_centered``). 1-D
    arrays use ``np.convolve`` (one CORRELATE record); N-D ones gather the patches of
    ``in1`` for the output window (``in1`` padded with one zero) and multiply them by the
    flattened ``in2``: ``out[n] = sum_k in1[n - k] in2[k]``, one GATHER and one product,
    ``O(out size * in2 size)`` time and tape."""
    s1, s2 = np.shape(in1), np.shape(in2)
    if len(s1) != len(s2):
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in ("full", "valid", "same"):
        raise ValueError("acceptable mode flags are 'valid', 'same', or 'full'")
    if len(s1) == 0:
        return in1 * in2
    full = tuple(a + b - 1 for a, b in zip(s1, s2))
    if mode == "full":
        start, shape = (0,) * len(full), full
    elif mode == "same":
        start, shape = tuple((b - 1) // 2 for b in s2), s1
    else:
        if not (all(a >= b for a, b in zip(s1, s2)) or all(b >= a for a, b in zip(s1, s2))):
            raise ValueError("For 'valid' mode, one must be at least as large as the other "
                             "in every dimension")
        start = tuple(min(a, b) - 1 for a, b in zip(s1, s2))
        shape = tuple(max(a, b) - min(a, b) + 1 for a, b in zip(s1, s2))
    if 0 in s1 or 0 in s2:  # SciPy's (empty) result: nothing to differentiate
        import scipy.signal
        return scipy.signal.convolve(np.zeros(s1), np.zeros(s2), mode)
    if len(s1) == 1:
        out = np.convolve(in1, in2, "full")
        return out[start[0]:start[0] + shape[0]]
    # patch index: in1's flat index of n - k, or its size (the appended zero) off in1
    n = np.indices(shape).reshape(len(shape), -1, 1) + np.reshape(start, (-1, 1, 1))
    k = np.indices(s2).reshape(len(s2), 1, -1)
    src = n - k
    inside = np.all((src >= 0) & (src < np.reshape(s1, (-1, 1, 1))), axis=0)
    idx = np.where(inside, np.ravel_multi_index(tuple(np.where(inside, src, 0)), s1),
                   int(np.prod(s1)))
    patches = np.concatenate([np.ravel(in1), np.zeros(1)])[idx]
    return np.reshape(patches @ np.ravel(in2), shape)


def solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    """``scipy.linalg.solve_banded`` as a dense solve of the band gathered from ``ab``.

    The dense matrix ``a[i, j] = ab[u + i - j, j]`` (zero off the band; the unused corners
    of ``ab`` are not read, as in LAPACK's band storage) is gathered from ``ab`` in one
    record, then ``np.linalg.solve(a, b)``.

    ``ab`` has shape ``(l + u + 1, n)``, ``b`` ``(n,)`` or ``(n, k)``; the result has ``b``'s
    shape. Raises SciPy's ValueError for mismatched shapes and NumPy's LinAlgError for a
    singular matrix."""
    low, up = (int(v) for v in l_and_u)
    rows, n = np.shape(ab)
    if rows != low + up + 1:
        raise ValueError(f"invalid values for the number of lower and upper diagonals: "
                         f"l+u+1 ({low + up + 1}) does not equal ab.shape[0] ({rows})")
    if np.shape(b)[0] != n:
        raise ValueError("shapes of ab and b are not compatible.")
    i, j = np.indices((n, n))
    band = (i - j <= low) & (j - i <= up)
    idx = np.where(band, (up + i - j) * n + j, rows * n)
    a = np.concatenate([np.ravel(ab), np.zeros(1)])[idx]
    return np.linalg.solve(a, b)


def solve_sylvester(a, b, q):
    """``scipy.linalg.solve_sylvester`` as one linear system of Kronecker products.

    ``X`` with ``A X + X B = Q`` solves ``(A kron I + I kron B^T) vec(X) = vec(Q)``
    (row-major ``vec``) with ``np.linalg.solve``: exact derivatives in ``A``, ``B`` and
    ``Q``, but ``O((n m)^3)`` time for ``A`` ``(n, n)``, ``B`` ``(m, m)`` (SciPy's
    Bartels-Stewart is ``O(n^3 + m^3)``). Shapes: ``Q`` and the result ``(n, m)``; a
    mismatch raises ValueError, a singular system NumPy's LinAlgError."""
    n, m = np.shape(q)
    if np.shape(a) != (n, n) or np.shape(b) != (m, m):
        raise ValueError(f"solve_sylvester: a {np.shape(a)}, b {np.shape(b)} and q "
                         f"{np.shape(q)} do not fit A X + X B = Q")
    system = np.kron(a, np.eye(m)) + np.kron(np.eye(n), np.transpose(b))
    return np.reshape(np.linalg.solve(system, np.ravel(q)), (n, m))


SCIPY_FUNCTIONS = {"scipy.signal": {"convolve": convolve},
                   "scipy.linalg": {"solve_banded": solve_banded,
                                    "solve_sylvester": solve_sylvester, **SCIPY_LINALG},
                   "scipy.spatial.distance": SCIPY_DISTANCE}


def install():
    """Wrap the functions of the SciPy modules that are loaded (idempotent, cheap)."""
    if len(_installed) == len(SCIPY_FUNCTIONS):
        return
    for modname, functions in SCIPY_FUNCTIONS.items():
        module = loaded(modname)
        if module is None or modname in _installed:
            continue
        for name, active_version in functions.items():
            wrap(module, name, active_version)
        _installed.add(modname)

"""``scipy.linalg.expm`` of active values.

SciPy's ``expm`` starts with ``np.asarray``, which would drop the derivative, so jittape
wraps it in ``scipy.linalg`` (as :mod:`jittape.scipy.special` does for SciPy's special
functions): given an active argument the wrapper records the ``expm`` op (rules in
:mod:`jittape.optable.rules.matfuncs`); otherwise SciPy's own function runs. The wrapper is
installed when jittape is imported after ``scipy.linalg``, or when a recording starts; a
reference taken with ``from scipy.linalg import expm`` before then still points to SciPy's
function (call ``scipy.linalg.expm``).
"""

import numpy as np

_installed = False


def expm(A):
    """``scipy.linalg.expm`` of a matrix or a stack (..., n, n) of active values.

    The value is SciPy's (a replay computes it with the scaling and squaring method, equal
    to rounding); a size-1 input of fewer than 2 dimensions gives ``[[exp(a)]]`` as SciPy's.
    Derivative: the Fréchet derivative ``L(A, E)``, upper right block of
    ``exp([[A, E], [0, A]])``; adjoint ``L(A^T, G)`` (Higham, "Functions of Matrices", 2008).
    Raises ``LinAlgError`` like SciPy for fewer than 2 dimensions or non-square matrices."""
    import scipy.linalg

    from ..numpy.linalg import linalg_record, square_stack
    from ..optable.table import codes

    original = getattr(scipy.linalg.expm, "__wrapped_by_jittape__", scipy.linalg.expm)
    v = A._v if hasattr(A, "_v") else np.asarray(A, dtype=np.float64)
    if np.size(v) == 1 and np.ndim(v) < 2:
        return np.reshape(np.exp(A), (1, 1))
    v = square_stack("expm", A)
    return linalg_record(codes.EXPM, A, value=original(v), pool=(v.shape[-1], 0))


def install():
    """Wrap ``scipy.linalg.expm`` if SciPy's linalg module is loaded (idempotent; this runs
    at every recording, so the flag is tested first)."""
    global _installed
    if _installed:
        return
    from .special import wrap, loaded
    linalg = loaded("scipy.linalg")
    if linalg is not None:
        wrap(linalg, "expm", expm)
        _installed = True

"""NumPy functions that answer with indices or booleans about an active array.

Indices have no derivative. Where they depend on the values (``np.argwhere``,
``np.flatnonzero``; ``np.nonzero`` and one-argument ``np.where`` are in
:mod:`jittape.numpy.standard` and :mod:`jittape.numpy.selection`) the condition is guarded
(:func:`jittape.numpy.selection.truth`): a replay where it differs fails the guard. Where
they depend on the shape and dtype alone (``np.diag_indices_from``, ``np.iscomplex``,
``np.isreal``) they are NumPy's constants for a float64 array of that shape, and nothing is
recorded.
"""

import numpy as np

from . import dispatch
from .active import Active
from .selection import truth
from .shaping import shape_probe


def argwhere(a):
    """``np.argwhere``: NumPy's int array of the nonzero positions, guarded.

    Shape ``(N, a.ndim)``; the guard is on ``a != 0`` (a comparison: itself)."""
    return np.argwhere(truth(a))


def flatnonzero(a):
    """``np.flatnonzero``: NumPy's 1-D int array of the flat nonzero positions, guarded."""
    return np.flatnonzero(truth(a))


def _float64(x):
    """The primal of ``x`` as NumPy's float64 array (0-d for an active scalar)."""
    return np.asarray(x._v if isinstance(x, Active) else x, dtype=np.float64)


def iscomplex(x):
    """``np.iscomplex`` of a real active: all False; no record.

    A bool array of the shape (NumPy's ``np.False_`` for a 0-d value)."""
    return np.iscomplex(_float64(x))


def isreal(x):
    """``np.isreal`` of a real active: all True (a bool array of its shape); no record."""
    return np.isreal(_float64(x))


def diag_indices_from(arr):
    """``np.diag_indices_from``: NumPy's index arrays, from the shape (no record).

    A tuple of ``arr.ndim`` int arrays for a square ``arr``, NumPy's errors otherwise."""
    return np.diag_indices_from(shape_probe(np.shape(arr._v)))


dispatch.FUNCTIONS.update({
    np.argwhere: argwhere, np.flatnonzero: flatnonzero, np.iscomplex: iscomplex,
    np.isreal: isreal, np.diag_indices_from: diag_indices_from,
})

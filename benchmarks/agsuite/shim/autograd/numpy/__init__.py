"""autograd.numpy is plain NumPy here: jittape differentiates NumPy's own functions.

Every NumPy name is re-exported (``__version__`` too; missing names go to NumPy's own
``__getattr__``). ``random`` and ``fft`` are NumPy's modules; ``linalg`` is NumPy's plus two
autograd-only helpers. ``make_diagonal`` is autograd-only: written here with NumPy.
"""

import sys as _sys

import numpy as _np

globals().update({k: v for k, v in vars(_np).items()
                  if not k.startswith("__") or k == "__version__"})

from . import linalg  # noqa: E402  (after the update: NumPy's linalg would shadow it)

_sys.modules[__name__ + ".random"] = _np.random
_sys.modules[__name__ + ".fft"] = _np.fft


def __getattr__(name):
    return getattr(_np, name)


def make_diagonal(D, offset=0, axis1=0, axis2=1):
    """autograd's ``make_diagonal`` for a new last pair of axes, in NumPy:
    ``D[..., None] * eye(n)`` (``A[..., i, i] = D[..., i]``)."""
    from agsuite_checks import out_of_scope
    nd = _np.ndim(D) + 1
    if offset != 0 or sorted((axis1 % nd, axis2 % nd)) != [nd - 2, nd - 1]:
        out_of_scope("autograd's make_diagonal with an offset or other axes (not NumPy)")
    return D[..., None] * _np.eye(_np.shape(D)[-1])

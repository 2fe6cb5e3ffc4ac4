"""NumPy's linalg, plus autograd's helpers ``T`` and ``_dot`` written with NumPy."""

import numpy as _np
import numpy.linalg as _la

globals().update({k: v for k, v in vars(_la).items() if not k.startswith("__")})


def __getattr__(name):
    return getattr(_la, name)


def T(x):
    """Swap the last two axes (autograd.numpy.linalg.T)."""
    return _np.swapaxes(x, -1, -2)


def _dot(a, b):
    """Batched matrix product over the last two axes (autograd.numpy.linalg._dot)."""
    return _np.einsum("...ij,...jk->...ik", a, b)

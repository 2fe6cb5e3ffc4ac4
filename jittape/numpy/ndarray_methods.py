"""The ndarray methods of the active type, each the NumPy function of the same name.

:class:`jittape.numpy.active.Active` inherits them; every method calls ``np.<name>(self, ...)``,
which dispatches back to jittape's handler (``__array_function__``), so a method and its
function record the same ops.
"""

import numpy as np

from . import dispatch
from .._base.errors import NotDifferentiableError


class NdarrayMethods:
    """``x.sum()``, ``x.reshape(...)``, ``x.T``, ``x[key] = v``, ... of an active ``x``."""

    __slots__ = ()

    def sum(self, axis=None, keepdims=False):
        return np.sum(self, axis=axis, keepdims=keepdims)

    def mean(self, axis=None, keepdims=False):
        return np.mean(self, axis=axis, keepdims=keepdims)

    def prod(self, axis=None, keepdims=False):
        return np.prod(self, axis=axis, keepdims=keepdims)

    def max(self, axis=None, keepdims=False):
        return np.max(self, axis=axis, keepdims=keepdims)

    def min(self, axis=None, keepdims=False):
        return np.min(self, axis=axis, keepdims=keepdims)

    def dot(self, y):
        return np.dot(self, y)

    def argmax(self, axis=None):
        return np.argmax(self, axis=axis)

    def argmin(self, axis=None):
        return np.argmin(self, axis=axis)

    def nonzero(self):
        """NumPy's index arrays of the nonzero elements, guarded (``np.nonzero``)."""
        return np.nonzero(self)

    def reshape(self, *shape, order="C", copy=None):
        shape = shape[0] if len(shape) == 1 else shape
        if copy is None:
            return np.reshape(self, shape, order=order)
        return np.reshape(self, shape, order=order, copy=copy)

    def ravel(self, order="C"):
        return np.ravel(self, order=order)

    def flatten(self, order="C"):
        """A raveled copy (never a view, as NumPy's)."""
        return np.ravel(self, order=order).copy()

    def transpose(self, *axes):
        return np.transpose(self, axes[0] if len(axes) == 1 else (axes or None))

    # --- the array API standard's attributes (https://data-apis.org/array-api/) ---
    def __array_namespace__(self, *, api_version=None):
        """jittape's namespace (:mod:`jittape.numpy.array_api`: NumPy's functions, which
        dispatch active values to jittape). Any ``api_version`` NumPy supports is accepted;
        another raises ValueError."""
        if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12"):
            raise ValueError(f"jittape's array API namespace: unknown api_version "
                             f"{api_version!r}")
        return dispatch.OPERATORS["namespace"]

    @property
    def device(self):
        return "cpu"

    def to_device(self, device, /, *, stream=None):
        if device != "cpu":
            raise ValueError(f"to_device({device!r}): jittape's arrays live on 'cpu'")
        return self

    @property
    def mT(self):
        """The transpose of the last two axes (``np.matrix_transpose``)."""
        return np.matrix_transpose(self)

    @property
    def T(self):
        return np.transpose(self)

    @property
    def real(self):
        """The value itself (real values): ``np.real``."""
        return np.real(self)

    @property
    def imag(self):
        """Read-only zeros (real values): ``np.imag``."""
        return np.imag(self)

    def copy(self, order="C"):
        # same record, new object: y = x.copy(); y[0] = 0 must leave x alone
        return type(self)(self._t, self._i, self._v)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        """``x.astype(dtype)`` as NumPy's: float64 an active value (a new object unless
        ``copy=False``; a comparison's 0/1 values as floats, always a new array as NumPy's
        bool-to-float cast), complex128 an active complex value, an integer dtype NumPy's
        values (no derivative; guarded: see :func:`jittape.numpy.object_arrays.to_array`),
        bool a comparison result (a copy of a comparison, else ``x != 0`` guarded).
        TypeError if ``casting`` forbids the cast; other float dtypes (float32, ...) raise
        :class:`NotDifferentiableError`."""
        dt = np.dtype(dtype)
        mask = _is_mask(self._v)
        src = np.dtype(bool) if mask else np.dtype(np.float64)
        if order not in ("K", "A", "C", "F"):
            raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
        if not np.can_cast(src, dt, casting):
            raise TypeError(f"Cannot cast array data from {src!r} to {dt!r} according to "
                            f"the rule {casting!r}")
        if mask and dt.kind == "b":
            return self.copy() if copy else self
        x = dispatch.OPERATORS["as_float"](self)
        if dt.kind in "biu":
            return dispatch.OPERATORS["to_array"](x, dt)
        if dt == np.complex128:
            return dispatch.COMPLEX(x.copy() if copy else x, 0.0)
        if dt != np.float64:
            raise NotDifferentiableError(
                f"astype({dt}) of an active value: only float64 carries derivatives. Use "
                f"x.astype(np.float64), or jittape.primal(x).astype({dt}) for a constant "
                f"copy.")
        return x.copy() if copy and x is self else x

    def __setitem__(self, key, value):
        """``x[key] = value``: recorded as a functional update (overwritten elements get no
        adjoint) that every alias and view of ``x`` sees (:func:`jittape.numpy.views.setitem`)."""
        dispatch.OPERATORS["setitem"](self, key, value)

    def swapaxes(self, axis1, axis2):
        return np.swapaxes(self, axis1, axis2)

    def squeeze(self, axis=None):
        return np.squeeze(self, axis=axis)

    def repeat(self, repeats, axis=None):
        return np.repeat(self, repeats, axis=axis)

    def take(self, indices, axis=None, out=None, mode="raise"):
        return np.take(self, indices, axis=axis, out=out, mode=mode)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return np.diagonal(self, offset, axis1, axis2)

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        return np.trace(self, offset, axis1, axis2, dtype, out)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        return np.var(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims,
                      **kw)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        return np.std(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims,
                      **kw)

    def cumsum(self, axis=None):
        return np.cumsum(self, axis=axis)

    def cumprod(self, axis=None):
        return np.cumprod(self, axis=axis)

    def clip(self, min=None, max=None):
        return np.clip(self, min, max)

    def round(self, decimals=0):
        return np.round(self, decimals)


def _is_mask(v):
    """Whether the primal ``v`` is a comparison result's (``bool`` or a bool array)."""
    return type(v) is bool or getattr(v, "dtype", None) == np.bool_

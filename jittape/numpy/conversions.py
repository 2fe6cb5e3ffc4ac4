"""``np.asarray`` and its family on active values, as library code calls them.

Library code starts with a conversion (``np.asarray(params)``, ``asarray(x)`` bound by
``from numpy import asarray``, ``np.require(x, dtype=float)``, ``np.array(x, copy=False)``).
NumPy performs these in C without asking jittape, and the most ``__array__`` can give it is
an object array of per-element actives: one record per element, and a failure where plain
floats mix in. While a recording runs these functions are :class:`Conversion` stand-ins
(:mod:`jittape.numpy.stand_ins`, wherever the library bound them): the conversion of an
active array to float64 (or to no dtype in particular) *is* the active array, as NumPy's
``asarray`` of a float64 array is the array itself, so nothing is recorded; a copying
conversion (``np.array(x)``) is a new active object on the same record (later writes into
either do not reach the other, as with NumPy's copy). Lists and object arrays holding
actives become one active array (:func:`jittape.numpy.object_arrays.from_objects`), and a
preallocated array holding actives (:mod:`jittape.numpy.prealloc`) its active value.
Everything else, and every conversion jittape's own code makes, is NumPy's own. An integer
or boolean dtype keeps NumPy's value under a guard, a comparison converts to its bool mask
under a guard (:mod:`jittape.numpy.object_arrays`), and any other dtype (float32, complex)
raises :class:`~jittape._base.errors.ActiveConversionError`.
"""

import sys
from numbers import Number

import numpy as np

from . import dispatch, stand_ins
from .active import Active, Predicate
from .object_arrays import from_objects, holds_active
from .stand_ins import THREAD, StandIn, internal

_F64 = np.dtype(np.float64)
_CHKFINITE = np.asarray_chkfinite
_ALWAYS = getattr(getattr(np, "_CopyMode", None), "ALWAYS", True)


def _float_target(dtype):
    """Whether a conversion to ``dtype`` keeps an active value active (None or float64)."""
    return dtype is None or dtype is float or np.dtype(dtype) == _F64


def convert(a, dtype, copy):
    """The active array that converting ``a`` to ``dtype`` gives, or None for NumPy's own
    conversion (``a`` holds no active value, or the dtype is not float64)."""
    t = type(a)
    if t in dispatch.PROXIES:
        a = dispatch.PROXIES[t](a)  # a preallocated array: active, or plain (NumPy's)
        t = type(a)
    if isinstance(a, Active):
        if not _float_target(dtype) or t is Predicate and dtype is None:
            return None  # NumPy's: __array__ guards or refuses (object_arrays.to_array)
        if t is not Active:
            return Active(a._t, a._i, float(a._v) if type(a._v) is bool else
                          a._v.astype(np.float64) if t is Predicate else a._v)
        return +a if copy else a
    if (t is list or t is tuple) and _float_target(dtype):
        try:
            objects = np.array(a, dtype=object)
        except ValueError:  # ragged: NumPy's error
            return None
        if not holds_active(objects):
            return None
        if not _numeric(objects):  # rows such as ["alpha", x[0], True]: NumPy's object array
            return objects if dtype is None else None
        return from_objects(objects)
    if dtype is not None and _float_target(dtype) and holds_active(a) and _numeric(a):
        return from_objects(a)  # no dtype: NumPy's object array is itself (pandas' blocks)
    return None


def _numeric(objects):
    """Whether every element of the object array is a number or an active value (what
    one float64 array can hold); strings and other objects keep NumPy's object array."""
    return all(isinstance(e, (Number, Active)) for e in objects.flat)


class Conversion(StandIn):
    """``np.asarray``-like function ``f(a, dtype=None, ...)`` (see the module docstring).

    ``copies`` says whether ``f`` copies by default (``np.array``); the dtype is ``f``'s
    second argument, as in all of them."""

    __slots__ = ("copies",)

    def __init__(self, f, copies=False):
        super().__init__(f)
        self.copies = copies

    def __call__(self, a, *args, **kwargs):
        if not THREAD.depth:  # no recording on this thread: NumPy's, at one call's cost
            return self._f(a, *args, **kwargs)
        t = type(a)
        if (isinstance(a, Active) or t in dispatch.PROXIES or t is list or t is tuple or
                t is np.ndarray and a.dtype == object) and not internal(sys._getframe(1)):
            dtype = args[0] if args else kwargs.get("dtype")
            copy = kwargs.get("copy", self.copies)  # True, False, None or NumPy's _CopyMode
            r = convert(a, dtype, copy is True or copy is _ALWAYS)
            if r is not None:
                return self._shaped(r, kwargs)
        return self._f(a, *args, **kwargs)

    def _shaped(self, r, kwargs):
        ndmin = kwargs.get("ndmin", 0)
        if np.ndim(r) < ndmin:
            r = np.reshape(r, (1,) * (ndmin - np.ndim(r)) + np.shape(r))
        if self._f is _CHKFINITE and not np.all(np.isfinite(r._v)):
            raise ValueError("array must not contain infs or NaNs")  # NumPy's error
        return r


for _name, _copies in (("asarray", False), ("asanyarray", False), ("array", True),
                       ("ascontiguousarray", False), ("asfortranarray", False),
                       ("require", False), ("asarray_chkfinite", False)):
    stand_ins.register(_name, Conversion(getattr(np, _name), _copies))
del _name, _copies

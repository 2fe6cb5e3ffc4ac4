"""Conversions of the active type to plain Python and NumPy values.

:class:`jittape.numpy.active.Active` inherits them. ``float(x)``, ``int(x)``, ``complex(x)``
and ``x.item()`` would drop the derivative: they raise
:class:`~jittape._base.errors.ActiveConversionError`, naming the SciPy function when SciPy's
code converted. ``x.tolist()`` gives active scalars and ``x.__array__`` NumPy an object array
of actives (or a guarded integer/bool value), which jittape turns back into one active array
wherever it meets it.
"""

import sys

import numpy as np

from . import dispatch
from .._base.errors import ActiveConversionError


class ConversionMethods:
    """``float(x)``, ``int(x)``, ``complex(x)``, ``x.item()``, ``x.tolist()``,
    ``np.asarray(x)`` of an active ``x``."""

    __slots__ = ()

    def _lost(self, what):
        dispatch.OPERATORS["refuse_in_scipy"](sys._getframe(2), True)  # a SciPy name
        raise ActiveConversionError(
            f"{what} of an active value would drop its derivative. Keep computing with the "
            f"active value, or use jittape.primal(x) to take its current value as an explicit "
            f"constant (no derivative flows through it; a replayed tape re-records if it "
            f"changes).")

    def __float__(self):
        self._lost("float() (also what NumPy calls to write an active value into a float "
                   "array, g[i] = x[0], when g was created outside the recorded function or "
                   "is not float64: create g inside the recorded function (g = np.zeros(n) "
                   "then records), or as np.zeros_like(x), or build it with np.array([...]) / "
                   "np.stack)")

    def __int__(self):
        self._lost("int()")

    def __complex__(self):
        self._lost("complex()")

    def item(self, *args):
        self._lost(".item()")

    def tolist(self):
        """NumPy's nested lists, of active scalars where NumPy gives Python floats (so
        ``formatted += s[:m].tolist()`` keeps recording; one record per element read)."""
        return self if np.ndim(self._v) == 0 else [e.tolist() for e in self]

    def __array__(self, dtype=None, copy=None):
        """What NumPy gets when it converts an active value (``np.array([x, y])``,
        ``np.asarray(x)``, ``np.int64(x)``): an object array of actives, which jittape turns
        into one active array wherever it meets it, or NumPy's integer/bool value (guarded);
        a float dtype raises. See :mod:`jittape.numpy.object_arrays`."""
        return dispatch.OPERATORS["to_array"](self, dtype)

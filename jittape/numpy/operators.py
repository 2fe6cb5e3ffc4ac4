"""Python's operators on active values: ``+ - * / ** % //`` (plain, reflected, in-place) and
``x[i]``, with a short path for the scalar code of Python loops.

Each binary operator is the elementwise op of the table with the same meaning
(:func:`jittape.numpy.active.binary` records it in general). Eager gradients of scalar loops
(``dx = x[i] - x[j]``, ``1.0 / r2``) spend their time here, so the two commonest cases skip
the general function: two active scalars of one tape, and an active scalar with a Python
``float``/``int`` constant (the constant goes into the record's ``c`` immediate, as
:func:`binary` puts it). Both compute the primal with the op table's ``scalar`` function
and fall back to NumPy's inf/nan conventions where :mod:`math` raises, exactly as
:func:`binary` does; anything else (arrays, NumPy scalars, bools, the ``x**2`` and
``s + 0.0`` special forms) goes through :func:`binary`. ``x[i]`` of a 1-D active array with
an in-range Python ``int`` is one SLICE record; other keys go to
:func:`jittape.numpy.views.getitem`.

The in-place forms update the object itself (NumPy's semantics: every alias and view sees
it), except for an active scalar that is not a view: immutable like NumPy's scalars, rebound.
Importing this module installs the operators on :class:`jittape.numpy.active.Active`.
"""

import numpy as np

from . import dispatch
from .active import Active, binary
from ..optable.table import OPS
from ..optable.table import codes as K
from .primal_values import C_FORMS, UFUNC_OF, scalar_primal
from .views import getitem as _getitem

_BINARY_OPERATORS = {"add": K.ADD, "sub": K.SUB, "mul": K.MUL, "truediv": K.DIV,
                     "pow": K.POW, "mod": K.REMAINDER, "floordiv": K.FLOORDIV}
_MATH_ERRORS = (ValueError, OverflowError, ZeroDivisionError)  # as primals._scalar catches


def _operators(opc):
    """``(op, rop, iop)``: ``x OP y``, ``y OP x`` and ``x OP= y`` for opcode ``opc``."""
    f = OPS[opc].scalar
    npf = UFUNC_OF[opc]
    right, left = C_FORMS.get((opc, True)), C_FORMS.get((opc, False))
    negate = opc == K.SUB  # x - c is recorded as x + (-c)

    def op(self, y):
        xv = self._v
        if type(xv) is float and f is not None:
            ty = type(y)
            if ty is Active:
                yv, t = y._v, self._t
                if type(yv) is float and y._t is t:
                    try:
                        z = f(xv, yv)
                    except _MATH_ERRORS:
                        z = scalar_primal(None, npf, xv, yv)
                    return Active(t, t.push_scalar(opc, self._i, y._i, 0, 0.0, z), z)
            elif (ty is float or ty is int) and right is not None:
                c = float(y)
                if not (right == K.POWC and c == 2.0 or c == 0.0 and opc == K.ADD):
                    try:
                        z = f(xv, c)
                    except _MATH_ERRORS:
                        z = scalar_primal(None, npf, xv, c)
                    t = self._t
                    return Active(t, t.push_scalar(right, self._i, -1, 0, -c if negate else c,
                                                   z), z)
        return binary(opc, self, y)

    def rop(self, y):
        xv, ty = self._v, type(y)
        if type(xv) is float and (ty is float or ty is int) and left is not None and \
                f is not None:
            c = float(y)
            if not (c == 0.0 and opc == K.ADD):
                try:
                    z = f(c, xv)
                except _MATH_ERRORS:
                    z = scalar_primal(None, npf, c, xv)
                t = self._t
                return Active(t, t.push_scalar(left, self._i, -1, 0, c, z), z)
        return binary(opc, y, self)

    def iop(self, y):
        if type(self._v) is float and self._base is None:  # scalar: rebinds (fast path)
            return op(self, y)
        return dispatch.OPERATORS["inplace"](self, y, op)
    return op, rop, iop


def getitem(self, key):
    """``x[key]``; ``x[i]`` of a 1-D active array with an in-range ``int`` directly."""
    v = self._v
    if type(key) is int and type(v) is np.ndarray and v.ndim == 1:
        n = v.shape[0]
        i = key + n if key < 0 else key
        if 0 <= i < n:
            z = float(v.item(i))  # a bool of a mask too: its 0/1 value, as views.getitem
            t = self._t
            return Active(t, t.push_scalar(K.SLICE, self._i, -1, i, 0.0, z), z)
    return _getitem(self, key)  # also the IndexError of an index out of range


for _name, _opc in _BINARY_OPERATORS.items():
    for _prefix, _f in zip(("", "r", "i"), _operators(_opc)):
        _f.__name__ = f"__{_prefix}{_name}__"
        setattr(Active, _f.__name__, _f)
del _name, _opc, _prefix, _f
Active.__getitem__ = getitem

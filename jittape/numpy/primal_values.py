"""Primal values while recording: each op's ``scalar`` (a :mod:`math` function, fast on
Python floats) and its NumPy/SciPy callable (arrays, and NumPy's inf/nan conventions on
domain errors), both taken from the op table."""

import numpy as np

from .._base.errors import NotDifferentiableError
from ..optable.table import OPS
from ..optable.table import codes as K


def _ufunc_of(opc):
    """The NumPy or SciPy ufunc computing opcode ``opc``'s primal (from the op table)."""
    f = OPS[opc].numpy[0] if OPS[opc].numpy else np.positive
    if isinstance(f, str):  # "scipy.special.<name>", "scipy.special._ufuncs.<name>"
        import importlib
        module, name = f.rsplit(".", 1)
        f = getattr(importlib.import_module(module), name)
        f = getattr(f, "__wrapped_by_jittape__", f)  # SciPy's own, not jittape's wrapper
    return f


class _UfuncTable(dict):
    """opcode -> primal ufunc, resolved on first use (SciPy is imported only if needed)."""

    def __missing__(self, opc):
        f = self[opc] = _ufunc_of(opc)
        return f


UFUNC_OF = _UfuncTable()


# (opcode, constant on the right?) -> the opcode that keeps the constant in the c immediate
C_FORMS = {(K.ADD, True): K.ADDC, (K.ADD, False): K.ADDC, (K.MUL, True): K.MULC,
            (K.MUL, False): K.MULC, (K.SUB, True): K.ADDC, (K.SUB, False): K.RSUBC,
            (K.DIV, True): K.DIVC, (K.DIV, False): K.RDIVC, (K.POW, True): K.POWC,
            (K.POW, False): K.RPOWC}


NUMBER = (float, int)


def scalar_primal(f, npf, *xs):
    """A scalar primal with :mod:`math`, falling back to NumPy's inf/nan conventions."""
    if f is not None:
        try:
            return f(*xs)
        except (ValueError, OverflowError, ZeroDivisionError):
            pass
    with np.errstate(all="ignore"):
        return float(npf(*xs))


def check_const(x):
    """``x``, a real constant operand of an operation with an active value; else
    :class:`NotDifferentiableError` (complex constants reach the arithmetic of
    :mod:`jittape.numpy.complex_values` before this; here they are comparisons and the like)."""
    if isinstance(x, (np.ndarray, float, int, complex, np.number, np.bool_, bool, list,
                      tuple)):
        if np.iscomplexobj(x):
            raise NotDifferentiableError(
                "this operation of an active value with a complex value is not supported "
                "(complex values support + - * / ** and the functions of README's 'Complex "
                "numbers'); compare or select with real parts: z.real, np.abs(z)")
        return x
    raise NotDifferentiableError(
        f"unsupported operand of type {type(x).__name__} in an operation with an active value")

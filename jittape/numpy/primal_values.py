"""Primal values while recording: each op's ``scalar`` (a :mod:`math` function, fast on
Python floats) and its NumPy/SciPy callable (arrays, and NumPy's inf/nan conventions on
domain errors), both taken from the op table."""

import numpy as np

from ..optable.table import OPS
from ..optable.table import codes as K


def _ufunc_of(opc):
    """The NumPy or SciPy ufunc computing opcode ``opc``'s primal (from the op table)."""
    f = OPS[opc].numpy[0] if OPS[opc].numpy else np.positive
    if isinstance(f, str):
        import scipy.special
        f = getattr(scipy.special, f.rsplit(".", 1)[1])
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

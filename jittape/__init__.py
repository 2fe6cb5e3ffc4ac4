"""jittape: reverse-mode automatic differentiation of plain NumPy code.

Operations on active values are recorded on a flat Wengert tape; a Numba-compiled reverse
sweep applies the chain rule over it. See README.md and ``python -m jittape ops``.
"""

from .api import Tape, grad, primal, record, stop_gradient, value_and_grad
from .errors import (ActiveConversionError, GuardFailure, JittapeError, NonScalarOutputError,
                     NotDifferentiableError, TapeFormatError)

__version__ = "0.1.0"

__all__ = ["grad", "value_and_grad", "record", "Tape", "primal", "stop_gradient",
           "ActiveConversionError", "GuardFailure", "JittapeError", "NonScalarOutputError",
           "NotDifferentiableError", "TapeFormatError"]

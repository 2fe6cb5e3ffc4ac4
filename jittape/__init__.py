"""jittape: reverse-mode automatic differentiation of plain NumPy code.

Operations on active values are recorded on a flat Wengert tape; a Numba-compiled reverse
sweep applies the chain rule over it, and a Numba forward sweep replays a recorded tape at
new inputs. See README.md and ``python -m jittape ops``.
"""

from .api import grad, primal, stop_gradient, value_and_grad
from .errors import (ActiveConversionError, GuardFailure, JittapeError, NonScalarOutputError,
                     NotDifferentiableError, TapeFormatError)
from .optimize import minimize
from .replay import ReplayStats, Tape, TapedFunction, record, taped
from .tapefile import load
from .functions import logsumexp
from . import scipy_special as _scipy_special

_scipy_special.install()  # only if SciPy's special module is loaded already

__version__ = "0.1.0"


def jacobian(f, argnums=0):
    """Return ``J(*args)``: the Jacobian of an array-valued ``f`` w.r.t. one argument.

    Records ``f`` once, then runs one reverse sweep per output element. The result has
    shape ``f(x).shape + x.shape``.
    """
    def jac_f(*args, **kwargs):
        tape = record(f, *args, argnums=argnums, **kwargs)
        return tape.jacobian(_val=tape.arrays.val)
    return jac_f


__all__ = ["grad", "value_and_grad", "jacobian", "logsumexp", "record", "taped", "minimize", "load",
           "Tape", "TapedFunction", "ReplayStats", "primal", "stop_gradient",
           "ActiveConversionError", "GuardFailure", "JittapeError", "NonScalarOutputError",
           "NotDifferentiableError", "TapeFormatError"]

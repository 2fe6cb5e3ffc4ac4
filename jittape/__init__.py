"""jittape: reverse-mode automatic differentiation of plain NumPy code.

Operations on active values are recorded on a flat Wengert tape; Numba sweeps generated from the
op table run over it: the reverse sweep (gradients, VJPs), the forward sweep (replay at new
inputs) and the tangent sweep (JVPs, forward-mode Jacobians). See README.md and ``python -m
jittape ops``.
"""

from .api.gradients import grad, primal, stop_gradient, value_and_grad
from .custom.checkpoint import checkpoint, checkpoint_loop
from .custom.custom_rules import custom_jvp, custom_vjp
from ._base.errors import (ActiveConversionError, GuardFailure, JittapeError, NonScalarOutputError,
                           NotDifferentiableError, TapeFormatError, TieWarning)
from .optimize.minimize import least_squares, minimize
from .api.tape import Tape, load, record
from .api.per_sample import batch_grad, batch_value_and_grad
from .api.taped import ReplayStats, TapedFunction, taped
from .api.transforms import jacobian, jvp, sparse_jacobian, vjp
from .api.hessians import hessian, hessp, hvp, sparse_hessian
from .sweeps.disk_cache import set_quiet
from .sweeps.tiers import set_background, wait_compiled
from .numpy.all_handlers import logsumexp
from . import ops  # noqa: F401  (the op table under its public name)
from .scipy import special as _scipy_special
from .scipy import stats as _scipy_stats
from .scipy import composed as _scipy_composed
from .scipy import linalg as _scipy_linalg

_scipy_special.install()  # only if SciPy's special module is loaded already
_scipy_stats.install()  # likewise scipy.stats
_scipy_composed.install()  # and scipy.signal, scipy.linalg
_scipy_linalg.install()  # and scipy.linalg's expm

__version__ = "0.1.0"


def __getattr__(name):
    """``jittape.dask`` imported on first use: ``import jittape`` never imports Dask."""
    if name == "dask":
        import importlib
        return importlib.import_module(".dask", __name__)
    raise AttributeError(f"module 'jittape' has no attribute {name!r}")


__all__ = ["grad", "value_and_grad", "jvp", "vjp", "jacobian", "sparse_jacobian", "hvp", "hessp", "hessian",
           "sparse_hessian", "set_quiet", "set_background", "wait_compiled",
           "logsumexp", "record", "taped", "minimize", "least_squares", "load",
           "Tape", "TapedFunction", "ReplayStats", "primal", "stop_gradient", "custom_vjp",
           "custom_jvp",
           "checkpoint", "checkpoint_loop", "batch_grad", "batch_value_and_grad",
           "ActiveConversionError", "GuardFailure", "JittapeError", "NonScalarOutputError",
           "NotDifferentiableError", "TapeFormatError", "TieWarning"]

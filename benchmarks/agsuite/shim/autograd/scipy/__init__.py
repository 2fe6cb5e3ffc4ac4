"""autograd.scipy is plain SciPy here (``signal.convolve`` keeps SciPy's signature only)."""

import sys as _sys

import scipy.integrate
import scipy.linalg
import scipy.special
import scipy.stats

special = scipy.special
stats = scipy.stats
integrate = scipy.integrate
linalg = scipy.linalg
for _name in ("special", "stats", "integrate", "linalg"):
    _sys.modules[f"{__name__}.{_name}"] = getattr(scipy, _name)
for _dist in ("multivariate_normal", "norm", "t", "gamma", "beta", "chi2", "poisson",
              "dirichlet"):
    _sys.modules[f"{__name__}.stats.{_dist}"] = getattr(scipy.stats, _dist)

from . import signal  # noqa: E402

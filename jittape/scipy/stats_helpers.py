"""SciPy's private ``scipy.stats`` helpers that compute in complex logarithms, as real
formulas for active arguments.

``scipy.stats.truncnorm`` takes the log of a Gaussian mass, ``log(Phi(b) - Phi(a))``, as
``logsumexp([log Phi(b), log Phi(a) + pi i])`` (``-exp(q) = exp(q + pi i)``) written into a
complex array: no rule of jittape's covers that, and a complex log-sum-exp of a mass in
(0, 1] is real anyway. From the first recording on, these helpers are replaced
(:func:`jittape.numpy.stand_ins.substitute`, wherever SciPy bound them) by wrappers that,
given an active argument, compute the same quantities in real arithmetic (``log(e^p - e^q) = p + log(-expm1(q - p))``, the
left tail mirrored, the central case ``log1p(-Phi(a) - Phi(-b))`` as SciPy's), equal to
SciPy's to rounding; with plain arguments SciPy's own run.
"""

import numpy as np

from ..numpy import stand_ins
from ..numpy.active import Active
from .._base.imports import loaded


_INSTALLED = []  # (the helpers are substituted once)


def _active(*args):
    return any(isinstance(a, Active) for a in args)


def _log_diff(log_p, log_q):
    """``log(exp(log_p) - exp(log_q))`` for ``log_p >= log_q`` (a mass or a difference of
    probabilities; SciPy's version is complex where ``log_p < log_q``)."""
    return log_p + np.log(-np.expm1(log_q - log_p))


def _log_gauss_mass(a, b):
    """``log(Phi(b) - Phi(a))``, SciPy's three cases: both limits in the left tail, both
    in the right (mirrored into the left), the centre through ``log1p``. Each case sees
    harmless values where another is taken (no inf or nan partial reaches a ``where``)."""
    import scipy.special as sc
    a, b = np.broadcast_arrays(a, b)
    left, right = b <= 0, a > 0  # recorded comparisons: the selects replay at new limits
    tail = left | right
    lo = np.where(left, a, np.where(right, -b, -2.0))  # the left-tail form's limits
    hi = np.where(left, b, np.where(right, -a, -1.0))
    ca, cb = np.where(tail, -1.0, a), np.where(tail, 1.0, b)
    return np.where(tail, _log_diff(sc.log_ndtr(hi), sc.log_ndtr(lo)),
                    sc.log1p(-sc.ndtr(ca) - sc.ndtr(-cb)))


def _replacing(original, real):
    def helper(*args):
        return real(*args) if _active(*args) else original(*args)
    helper.__name__ = helper.__qualname__ = original.__name__
    helper.__doc__, helper.__wrapped__ = real.__doc__, original
    return helper


def install():
    """Substitute the helpers of ``scipy.stats._continuous_distns`` if it is loaded."""
    distns = loaded("scipy.stats._continuous_distns")
    if distns is None or _INSTALLED:
        return
    for name, real in (("_log_diff", _log_diff), ("_log_gauss_mass", _log_gauss_mass)):
        original = getattr(distns, name, None)
        if original is not None:
            stand_ins.substitute(original, _replacing(original, real))
    _INSTALLED.append(True)


"""SciPy's array-API dispatch, switched on while a recording runs: SciPy by any import order.

SciPy functions written against the array API standard (``logsumexp``, ``softmax``,
``log_softmax``, ``xlogy``, ``entr``, ``scipy.stats.zscore``, ``skew``, ``moment``, ...)
start with ``xp = array_namespace(a, b)`` and compute with ``xp``. An active value names
jittape's namespace (:mod:`jittape.numpy.array_api`), so these functions differentiate as
SciPy wrote them, whichever names the caller bound and whenever (``from scipy.special
import logsumexp`` before ``import jittape`` included): nothing of SciPy is replaced.

Two things stand between SciPy's default configuration and that route, and this module
sets both only while some recording runs (the first recording to start sets them, the
last to end restores them; :data:`jittape.numpy.prealloc.SWITCHES`):

* SciPy reads its ``SCIPY_ARRAY_API`` switch (``scipy._lib._array_api_override``) when each
  call asks for a namespace; unset, every call gets NumPy's. It is set to true. SciPy's
  array-API mode gives NumPy inputs NumPy's results (SciPy's own test suite runs both).
* An active value met with a NumPy array in one call (``logsumexp(z, b=weights)``) is a
  "Multiple namespaces" error for ``array_api_compat``, whose rule is that a call's arrays
  share one namespace. jittape's namespace takes NumPy arrays as NumPy does, so SciPy's
  vendored ``array_api_compat.array_namespace`` answers it for any call with an active
  argument, and NumPy's compat namespace otherwise, as before.

The switch is process-wide: during a recording, other threads' SciPy calls also run in
SciPy's array-API mode. SciPy functions that start with ``np.asarray`` instead (the
legacy ``scipy.stats`` distributions, ``scipy.linalg``) are reached through the wrappers
of :mod:`jittape.scipy.special`, :mod:`.stats`, :mod:`.composed` and :mod:`.linalg`.
"""

import sys

from .._base.imports import loaded
from ..numpy import prealloc
from ..numpy.active import Active
from ..numpy.array_api import __name__ as _NAMESPACE

_SAVED = []  # (module, attribute, SciPy's value) while switched on
_FOUND = {}  # SciPy's two modules with jittape's array_namespace, once both are loaded


def _namespace_for(original, namespace):
    def array_namespace(*xs, **kwargs):
        for x in xs:
            if isinstance(x, Active):
                return namespace
        return original(*xs, **kwargs)
    array_namespace.__wrapped__ = original
    return array_namespace


def _find():
    override = loaded("scipy._lib._array_api_override")
    compat = loaded("scipy._lib.array_api_compat")
    if override is not None and compat is not None:
        _FOUND.update(override=override, compat=compat, array_namespace=_namespace_for(
            compat.array_namespace, sys.modules[_NAMESPACE]))


def switch(on):
    """Set (``on`` true) or restore SciPy's two settings; nothing if SciPy's array-API
    layer is not loaded. This runs when every eager recording starts and ends."""
    if not on:
        while _SAVED:
            module, name, value = _SAVED.pop()
            setattr(module, name, value)
        return
    if not _FOUND:
        if "scipy._lib.array_api_compat" not in sys.modules:  # SciPy not loaded: no cost
            return
        _find()
        if not _FOUND or _SAVED:
            return
    override, compat = _FOUND["override"], _FOUND["compat"]
    _SAVED.append((override, "SCIPY_ARRAY_API", override.SCIPY_ARRAY_API))
    _SAVED.append((compat, "array_namespace", compat.array_namespace))
    override.SCIPY_ARRAY_API = True
    compat.array_namespace = _FOUND["array_namespace"]


prealloc.SWITCHES.append(switch)

"""SciPy's special functions that are plain Python, on active values.

SciPy's special functions that are ufuncs (``expit``, ``erf``, ``iv``, ...) reach jittape
through ``__array_ufunc__`` like NumPy's. A few are plain Python that start with
``np.asarray``, which would drop the derivative, so jittape wraps them in ``scipy.special``:
a wrapper records the op when an argument is active and calls SciPy's own function
otherwise. They are

* the op table's entries whose NumPy mapping names a ``scipy.special`` function that is not
  a ufunc (``polygamma``, ``multigammaln``): the wrapper calls the op's dispatch handler;
* ``logsumexp``, composed by :func:`jittape.numpy.all_handlers.logsumexp`.

They are installed when jittape is imported after SciPy or when a recording starts, without
importing SciPy itself (that would cost about 0.15 s per import). A wrapper pickles as a
reference to ``scipy.special.<name>``. A reference taken with ``from scipy.special import
logsumexp`` before either moment still points to SciPy's function, which differentiates
through SciPy's array-API route (:mod:`jittape.scipy.array_api`); ``polygamma`` and
``multigammaln`` have none: call them as ``scipy.special.polygamma``.
"""

import functools
import inspect

from .._base.imports import loaded
from ..numpy import stand_ins

_installed = False


def top_level(args, kwargs):
    """``(args, kwargs, active)``: the arguments that stand for active arrays made active
    (:func:`jittape.numpy.dispatch.resolved`) and whether one of them is active."""
    from ..numpy.active import Active
    from ..numpy.dispatch import resolved

    args, kwargs = resolved(args, kwargs)  # a preallocated array filled with actives
    return args, kwargs, any(isinstance(v, Active) for v in (*args, *kwargs.values()))


def wrap(special, name, active_version):
    """Replace ``special.<name>`` by a wrapper calling ``active_version`` (same arguments)
    when an argument is active (as ``active_version.active_arguments(args, kwargs)`` tells,
    :func:`top_level` by default: a function taking a ``(matrix, flag)`` tuple looks inside
    it). From the first recording on, it also replaces SciPy's function wherever a library
    bound that (:func:`jittape.numpy.stand_ins.substitute`)."""
    from ..numpy.dispatch import SCIPY_WRAPPED

    original = getattr(special, name)
    signature = inspect.signature(original)
    active_arguments = getattr(active_version, "active_arguments", top_level)

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        args, kwargs, active = active_arguments(args, kwargs)
        if active:
            bound = signature.bind(*args, **kwargs)  # SciPy's errors for wrong arguments
            return active_version(*bound.args, **bound.kwargs)
        return original(*args, **kwargs)

    wrapper.__wrapped_by_jittape__ = original
    # pickled by reference as ``<module>.<name>``, which unpickles as SciPy's own function
    # where jittape is not imported (functools.wraps named SciPy's private module)
    wrapper.__module__, wrapper.__qualname__ = special.__name__, name
    SCIPY_WRAPPED[f"{original.__module__}.{original.__qualname__}"] = f"{special.__name__}.{name}"
    setattr(special, name, wrapper)
    stand_ins.substitute(original, wrapper)  # where a library bound SciPy's, from a recording on


def install():
    """Install the wrappers if SciPy's special module is loaded (idempotent)."""
    global _installed
    if _installed:  # checked first: this runs at every recording
        return
    special = loaded("scipy.special")
    if special is None:
        return
    import numpy as np

    from ..numpy.all_handlers import logsumexp
    from ..optable.table import OPS
    from ..numpy.ufuncs import op_handler

    for op in OPS:
        for f in op.numpy:
            if isinstance(f, str) and f.rsplit(".", 1)[0] == "scipy.special":  # (public)
                name = f.rsplit(".", 1)[1]
                if not isinstance(getattr(special, name), np.ufunc):
                    wrap(special, name, op_handler(op.code))
    wrap(special, "logsumexp", logsumexp)
    _installed = True

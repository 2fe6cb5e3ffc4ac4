"""``scipy.special.logsumexp`` on active values.

SciPy's special functions that are ufuncs (``expit``, ``erf``, ``gammaln``, ...) reach
jittape through ``__array_ufunc__`` like NumPy's. ``logsumexp`` is plain Python that starts with
``np.asarray``, which would drop the derivative, so jittape wraps it: the wrapper calls
:func:`jittape.functions.logsumexp` when an argument is active and SciPy's own function
otherwise. It is installed in ``scipy.special`` when jittape is imported after SciPy or when
a recording starts, without importing SciPy itself (that would cost about 0.15 s per import).
A reference taken with ``from scipy.special import logsumexp`` before either moment still
points to SciPy's function: call ``scipy.special.logsumexp`` or ``jittape.logsumexp``.
"""

import functools
import sys

_installed = False


def install():
    """Wrap ``scipy.special.logsumexp`` if SciPy's special module is loaded (idempotent)."""
    global _installed
    if _installed:  # checked first: this runs at every recording
        return
    special = sys.modules.get("scipy.special")
    if special is None:
        return
    from .active import Active
    from .functions import logsumexp as active_logsumexp

    original = special.logsumexp

    @functools.wraps(original)
    def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
        if isinstance(a, Active) or isinstance(b, Active):
            return active_logsumexp(a, axis=axis, b=b, keepdims=keepdims,
                                    return_sign=return_sign)
        return original(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)

    logsumexp.__wrapped_by_jittape__ = original
    special.logsumexp = logsumexp
    _installed = True

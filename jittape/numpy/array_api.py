"""jittape's array API namespace: what ``x.__array_namespace__()`` of an active value gives.

The Python array API standard (https://data-apis.org/array-api/2024.12/) lets a library
ask an array for its namespace (``xp = x.__array_namespace__()``) and write
``xp.exp(x)``, ``xp.sum(x, axis=0)``, ... for any conforming array type. SciPy's array-API
paths (``logsumexp``, ``softmax``, ``log_softmax``, much of ``scipy.special`` and
``scipy.stats``) do exactly that, so they reach active values through this namespace.

Its semantics are NumPy's, and so are its functions: NumPy 2's main namespace implements
the standard (``np.__array_api_version__``), and each of its functions reaches jittape for
active arguments through ``__array_ufunc__`` and ``__array_function__``. So every name not
defined here is NumPy's own (module ``__getattr__``, PEP 562), and an argument may be an
active value or a NumPy array, mixed as NumPy mixes them. What this module adds is what
NumPy's functions cannot dispatch: :func:`asarray` keeps active values (and lists or object
arrays of them) active.

Active values are float64; integer and boolean results (``argmax``, comparisons used as
masks) are NumPy arrays. ``device`` is ``"cpu"``.
"""

import numpy as np

from . import dispatch
from .active import Active
from .._base.errors import NotDifferentiableError

__array_api_version__ = np.__array_api_version__


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """The standard's ``asarray``: ``obj`` as an array of this namespace.

    An active value, a preallocated array written with actives, or a (nested) list, tuple
    or object array holding active values gives one active float64 array (a copy if
    ``copy`` is true); anything else is NumPy's ``np.asarray(obj, dtype=dtype, copy=copy)``.

    Raises:
        NotDifferentiableError: ``dtype`` other than float64 for an active value (use
            ``jittape.primal(x)`` for a constant copy); ``copy=False`` for a list of actives
            (it cannot be a view).
        ValueError: ``device`` other than ``"cpu"`` or None.
    """
    if device not in (None, "cpu"):
        raise ValueError(f"asarray: device {device!r}: jittape's arrays live on 'cpu'")
    a = dispatch.OPERATORS["as_operand"](obj)
    if not isinstance(a, Active):
        return np.asarray(obj, dtype=dtype, copy=copy)
    if dtype is not None and np.dtype(dtype) != np.float64:
        raise NotDifferentiableError(
            f"asarray(..., dtype={np.dtype(dtype)}) of an active value: only float64 carries "
            f"derivatives. Use jittape.primal(x) for a constant array.")
    if a is not obj and copy is False:
        raise NotDifferentiableError(
            "asarray(..., copy=False) of a list or object array of active values: it can "
            "only be built as a new array (copy=None or True)")
    return a.copy() if copy and a is obj else a


def __array_namespace_info__():
    """NumPy's inspection object (devices, dtypes, capabilities)."""
    return np.__array_namespace_info__()


def __getattr__(name):
    """Every other name of the standard is NumPy's own (see the module docstring)."""
    try:
        return getattr(np, name)
    except AttributeError:
        raise AttributeError(
            f"jittape's array API namespace has no attribute {name!r} (nor has NumPy)"
        ) from None


def __dir__():
    return sorted(set(dir(np)) | set(globals()))


dispatch.OPERATORS["namespace"] = __import__(__name__, fromlist=["_"])

"""NumPy functions that build arrays from their arguments without dispatching to jittape.

``np.r_[...]``/``np.c_[...]`` (an index expression, not a function) and ``np.mean``/
``np.var``/``np.std`` of a Python list (NumPy only asks the list, not its elements, for
``__array_function__``) convert active arguments with ``np.asarray``, giving object arrays
(:mod:`jittape.numpy.object_arrays`) that NumPy cannot finish with: a mix of actives and floats that
later ufuncs cannot loop over, or a mean divided by ``np.float64(active)``. At import,
jittape wraps ``AxisConcatenator.__getitem__`` (the class of ``np.r_`` and ``np.c_``) and
NumPy's internal ``_mean``/``_var``/``_std`` (what ``np.mean`` & co. call for a list):
given an active argument, the wrapper builds one active array and calls the NumPy function
that dispatches to jittape; otherwise NumPy's own code runs unchanged. The functions of
``np.linalg`` are wrapped likewise (as attributes of ``numpy.linalg``: a name imported from
it before ``import jittape`` is NumPy's own), for object arrays of actives, which NumPy's
linear-algebra gufuncs have no loop for.
"""

import functools

import numpy as np

from .active import Active
from .._base.errors import NotDifferentiableError
from .object_arrays import as_operand, from_objects, holds_active, to_active
from .shaping import has_active

try:  # NumPy >= 2
    from numpy.lib import _index_tricks_impl as _index_tricks
    from numpy._core import _methods
except ImportError:  # NumPy 1.x
    from numpy.lib import index_tricks as _index_tricks
    from numpy.core import _methods


def _active_item(item):
    if isinstance(item, Active):
        return True
    if type(item) is np.ndarray:
        return holds_active(item)
    return type(item) in (list, tuple) and as_operand(item) is not item


def _concatenator_item(item, ndmin, trans1d):
    """One non-directive item of ``np.r_``/``np.c_`` as NumPy's ``AxisConcatenator`` turns
    it into an array: a slice into ``arange``/``linspace``, anything else raised to
    ``ndmin`` dimensions with the new axes placed by ``trans1d``."""
    if isinstance(item, slice):
        start = 0 if item.start is None else item.start
        step = 1 if item.step is None else item.step
        if isinstance(step, (np.complexfloating, complex)):
            obj = np.linspace(start, item.stop, num=int(abs(step)))
        else:
            obj = np.arange(start, item.stop, step)
        obj = np.array(obj, ndmin=ndmin)
        return obj.swapaxes(-1, trans1d) if ndmin > 1 and trans1d != -1 else obj
    item = to_active(as_operand(item))
    if not isinstance(item, Active):
        item = np.array(item, dtype=np.float64)
    nd = np.ndim(item)
    if nd >= ndmin:
        return item
    obj = np.reshape(item, (1,) * (ndmin - nd) + np.shape(item))
    if trans1d == -1:
        return obj
    k2, k1 = ndmin - nd, trans1d if trans1d >= 0 else trans1d + ndmin - nd + 1
    axes = list(range(ndmin))
    return np.transpose(obj, axes[:k1] + axes[k2:] + axes[k1:k2])


def concatenator_getitem(self, key):
    """``AxisConcatenator.__getitem__`` (NumPy's code, same semantics) with active items:
    one concatenation of active and constant pieces. Matrix directives ('r', 'c') refuse."""
    key = key if isinstance(key, tuple) else (key,)
    axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
    objs = []
    for k, item in enumerate(key):
        if isinstance(item, str):
            if k != 0:
                raise ValueError("special directives must be the first entry.")
            if item in ("r", "c") or self.matrix:
                raise NotDifferentiableError(
                    "np.r_/np.c_ building a np.matrix ('r'/'c' directive) of active values is "
                    "not supported: np.matrix is not differentiated; drop the directive.")
            vec = [int(v) for v in item.split(",")]
            axis = vec[0]
            if len(vec) > 1:
                ndmin = vec[1]
            if len(vec) > 2:
                trans1d = vec[2]
            continue
        objs.append(_concatenator_item(item, ndmin, trans1d))
    return np.concatenate(tuple(objs), axis=axis)


def _wrap_concatenator():
    cls = _index_tricks.AxisConcatenator
    original = cls.__getitem__

    @functools.wraps(original)
    def getitem(self, key):
        items = key if isinstance(key, tuple) else (key,)
        if any(_active_item(item) for item in items):
            return concatenator_getitem(self, key)
        return original(self, key)
    getitem.__wrapped_by_jittape__ = original
    cls.__getitem__ = getitem


def _wrap_statistic(name, public):
    """Wrap ``_methods.<name>`` so that a list or object array holding actives becomes one
    active array, handed to ``public`` (``np.mean``, ...), which dispatches to jittape."""
    original = getattr(_methods, name)

    @functools.wraps(original)
    def statistic(a, *args, **kwargs):
        if type(a) is not np.ndarray:
            a = np.asanyarray(a)  # what NumPy's own code does first
        if holds_active(a):
            return public(from_objects(a), *args, **kwargs)
        return original(a, *args, **kwargs)
    statistic.__wrapped_by_jittape__ = original
    setattr(_methods, name, statistic)


def _objects(a):
    """Whether ``a`` is an object array or a list or tuple holding actives (what reaches
    NumPy's gufuncs without dispatching to jittape); records nothing."""
    if type(a) is np.ndarray:
        return holds_active(a)
    return isinstance(a, (list, tuple)) and has_active(a)


def _wrap_linalg(name):
    """Wrap ``np.linalg.<name>`` so that an object array (or a nested list) of actives
    becomes one active array first: ``np.linalg.det(np.asarray([[x[0], x[1]], [x[2], 1.0]]))``
    then dispatches to jittape (its rule, or its error naming the function) instead of
    failing in NumPy's gufunc, which has no object loop. Other calls: one type test."""
    original = getattr(np.linalg, name)

    @functools.wraps(original)
    def linalg(*args, **kwargs):
        if args:
            converts = [_objects(a) for a in args]
            if any(converts):  # (each converted once: as_operand records the array)
                args = tuple(as_operand(a) if c else a for a, c in zip(args, converts))
        return original(*args, **kwargs)
    linalg.__wrapped_by_jittape__ = original
    setattr(np.linalg, name, linalg)


def install():
    """Install the wrappers (once; at import of jittape)."""
    if getattr(_index_tricks.AxisConcatenator.__getitem__, "__wrapped_by_jittape__", None):
        return
    _wrap_concatenator()
    for name, public in (("_mean", np.mean), ("_var", np.var), ("_std", np.std)):
        _wrap_statistic(name, public)


def install_linalg():
    """Wrap the functions of ``np.linalg`` (once; at the end of jittape's import, after the
    handlers are registered under NumPy's own functions, which the wrappers call)."""
    for name in np.linalg.__all__:
        f = getattr(np.linalg, name)
        if callable(f) and not isinstance(f, type) and name != "multi_dot" and \
                not hasattr(f, "__wrapped_by_jittape__"):  # (multi_dot: a list of arrays)
            _wrap_linalg(name)


install()

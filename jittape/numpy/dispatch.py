"""The registries between the active type and the NumPy functions built on it.

:class:`jittape.numpy.active.Active` answers NumPy's protocols (``__array_ufunc__``,
``__array_function__``) and a few Python operators by looking the handler up here; the modules
that implement the handlers (:mod:`jittape.numpy.ufuncs`, :mod:`jittape.numpy.views`,
:mod:`jittape.numpy.products`, ...) sit above :mod:`jittape.numpy.active` and fill these tables
when they are imported (:mod:`jittape.numpy.all_handlers` imports them all). So the active type
never imports the functions built on it, and the layers stay acyclic.
"""

import numpy as np

#: ufunc -> handler(*inputs) (NEP 13).
UFUNCS = {}
#: NumPy function -> handler(*args, **kwargs) (NEP 18).
FUNCTIONS = {}
#: Python-level operations of the active type implemented above it: ``"getitem"``,
#: ``"setitem"``, ``"inplace"`` (``x op= y``: handler(x, y, op)) and ``"matmul"``.
OPERATORS = {}
#: Array types that stand for an active value (``type -> resolve(a)``, the active value or a
#: plain array): :class:`jittape.numpy.prealloc.Prealloc`.
PROXIES = {}
#: SciPy functions jittape wraps in their public module: ``"<module>.<qualname>"`` of SciPy's
#: function -> the public name whose wrapper differentiates it (``"scipy.linalg.expm"``).
SCIPY_WRAPPED = {}
#: The type of active complex values (:class:`jittape.numpy.complex_values.ComplexActive`),
#: whose handlers take precedence in NumPy functions that mix it with active values.
COMPLEX = None
#: Callables ``ufunc -> handler or None`` asked about a ufunc missing from :data:`UFUNCS`
#: (SciPy's ufuncs, resolved by name on first use; ops registered after import).
RESOLVERS = []


def ufunc_name(ufunc):
    """The public name of ``ufunc`` for messages: ``numpy.<name>``, ``scipy.special.<name>``
    (SciPy's private ones, which its Python functions call: ``scipy.special._ufuncs.<name>``),
    else ``ufunc <name>``."""
    from .._base.imports import loaded
    name = getattr(ufunc, "__name__", str(ufunc))
    if getattr(np, name, None) is ufunc:
        return f"numpy.{name}"
    for module in ("scipy.special", "scipy.special._ufuncs"):
        if getattr(loaded(module), name, None) is ufunc:
            return f"{module}.{name}"
    return f"ufunc {name} (neither NumPy's nor scipy.special's)"


def ufunc_handler(ufunc):
    """The handler of ``ufunc``, or None if jittape has no rule for it."""
    h = UFUNCS.get(ufunc)
    if h is None:
        for resolve in RESOLVERS:
            h = resolve(ufunc)
            if h is not None:
                UFUNCS[ufunc] = h
                break
    return h


def _convertible(v):
    t = type(v)
    return t in PROXIES or t is list or t is tuple or t is np.ndarray and v.dtype == object


def resolved(args, kwargs):
    """``(args, kwargs)`` with the arguments that stand for active arrays made active arrays
    (top level): :data:`PROXIES` arrays, object arrays and lists or tuples holding actives
    (``OPERATORS["as_operand"]``). For wrappers of functions that jittape dispatches on
    ``isinstance(v, Active)`` (SciPy's)."""
    if not any(_convertible(v) for v in (*args, *kwargs.values())):
        return args, kwargs
    res = OPERATORS["as_operand"]
    return tuple(res(v) for v in args), {k: res(v) for k, v in kwargs.items()}


def may_hold_objects(values):
    """Whether an argument is an object array, or a list/tuple that may hold one, or a
    complex one (checked without a call per argument: this is on every NumPy function's
    path)."""
    for v in values:
        t = type(v)
        if t is list or t is tuple or t is dict or t is np.ndarray and v.dtype.kind in "Oc" \
                or t in PROXIES or t is complex or t is np.complex128:
            return True
    return False


def has_complex(values):
    """Whether a top-level argument is complex (a constant or an active complex value)."""
    return any(type(v) is complex or getattr(getattr(v, "dtype", None), "kind", "") == "c"
               for v in values)

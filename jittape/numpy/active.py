"""The active type: a value being recorded on a tape, with Python operators and NumPy hooks.

An :class:`Active` holds its tape (a :class:`jittape.tape.arrays.Recorder`), its record id and its
current primal value: a Python ``float`` for scalars (so scalar code runs on fast float
arithmetic) or a float64 ``ndarray``. Every operation computes its primal value with NumPy or
:mod:`math` and appends one record. Comparisons give a :class:`Predicate`, an active 0/1 value:
``np.where`` uses it as data (correct at any point on replay), while Python control flow
(``if``, ``bool``, masks used for indexing) records a GUARD on it.

This module also holds the recording primitives the NumPy functions are built from:
elementwise records (:func:`unary`, :func:`binary`, :func:`compare`, :func:`where`), the
GATHER/SLICE by flat indices (:func:`gather`, :func:`broadcast_to`) and the free C-order
:func:`reshape`. NumPy functions reach the active type through ``__array_ufunc__`` (NEP 13)
and ``__array_function__`` (NEP 18); their handlers are looked up in :mod:`jittape.numpy.dispatch`.
"""

import math
import sys

import numpy as np

from . import dispatch, ties
from .._base.errors import MixedRecordings, NotDifferentiableError, check_ufunc_call
from .conversion_methods import ConversionMethods
from .ndarray_methods import NdarrayMethods
from ..optable.table import OPS
from .primal_values import C_FORMS, UFUNC_OF, NUMBER, check_const, scalar_primal
from ..optable.table import codes as K


class Active(ConversionMethods, NdarrayMethods):
    """A primal value that is being recorded; create one with :func:`jittape.grad`.

    Attributes are private: ``_t`` the recorder, ``_i`` the record id, ``_v`` the primal
    (``float`` or ``ndarray`` of float64), ``_base`` (unset unless views are involved) the
    view link of :mod:`jittape.numpy.views`. Shapes follow NumPy's.

    Writes follow NumPy's aliasing: ``x[key] = v`` and the in-place operators
    (``+= -= *= /= **= //= %= @=``) update the object itself, so every name bound to it sees
    the change, and so do the views of it (basic slices, ``.T``, ``reshape``, ...) and the
    array it is a view of. Copies (``x.copy()``, ``+x``, ``x.flatten()``, advanced indexing)
    do not. An active scalar is immutable like a NumPy scalar: ``s += 1`` rebinds ``s``.
    """

    __slots__ = ("_t", "_i", "_v", "_base", "__weakref__")
    __array_priority__ = 1000.0  # our reflected operators win over ndarray's

    def __init__(self, t, i, v):
        self._t = t
        self._i = i
        self._v = v
        self._base = None

    # --- shape queries (no record) ---
    @property
    def shape(self):
        return np.shape(self._v)

    @property
    def ndim(self):
        return np.ndim(self._v)

    @property
    def size(self):
        return np.size(self._v)

    @property
    def dtype(self):
        return np.dtype(np.float64)

    def __len__(self):
        if type(self._v) is float:
            raise TypeError("len() of an active scalar")
        return len(self._v)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self):
        return f"Active(v{self._i}, {self._v!r})"

    # --- conversions (the others, which refuse: jittape.numpy.conversion_methods) ---
    def __index__(self):
        """An integral active value used as an index (``a[n]``, ``range(n)``): guarded.

        The tape records that the control flow depended on the value, so a replay where it
        differs records again. Non-integral values are refused, as NumPy refuses floats.
        """
        v = self._v
        if type(v) is float and v == math.floor(v) and math.isfinite(v):
            guard(self)
            return int(v)
        self._lost("Using a non-integral value as an index (int conversion)")

    def __bool__(self):
        return bool(compare(K.NE, self, 0.0))

    def __hash__(self):
        return id(self)

    # --- arithmetic: + - * / ** % // and x[i] are set by jittape.numpy.operators ---
    def __divmod__(self, y):
        return binary(K.FLOORDIV, self, y), binary(K.REMAINDER, self, y)

    def __rdivmod__(self, y):
        return binary(K.FLOORDIV, y, self), binary(K.REMAINDER, y, self)

    def __matmul__(self, y):
        if dispatch.has_complex((y,)):  # x @ complex constant
            return dispatch.OPERATORS["complex_call"](np.matmul, (self, y), {})
        return dispatch.OPERATORS["matmul"](self, dispatch.OPERATORS["from_objects"](y))

    def __rmatmul__(self, y):
        if dispatch.has_complex((y,)):
            return dispatch.OPERATORS["complex_call"](np.matmul, (y, self), {})
        return dispatch.OPERATORS["matmul"](dispatch.OPERATORS["from_objects"](y), self)

    def __imatmul__(self, y):
        return dispatch.OPERATORS["inplace"](self, y, dispatch.OPERATORS["matmul"])

    def __neg__(self):
        return unary(K.NEG, self)

    def __pos__(self):
        return Active(self._t, self._i, self._v)  # a new object: item assignment mutates

    def __abs__(self):
        return unary(K.ABS, self)

    def __lt__(self, y):
        return compare(K.LT, self, y)

    def __le__(self, y):
        return compare(K.LE, self, y)

    def __gt__(self, y):
        return compare(K.GT, self, y)

    def __ge__(self, y):
        return compare(K.GE, self, y)

    def __eq__(self, y):
        return ties.checked(compare(K.EQ, self, y), True)

    def __ne__(self, y):
        return ties.checked(compare(K.NE, self, y), False)

    # --- NumPy protocols ---
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs:
            if method == "__call__" and kwargs.get("out") is not None:
                return dispatch.OPERATORS["ufunc_out"](ufunc, inputs, kwargs)
            if method == "at" and not kwargs:  # np.add.at(a, idx, b): a written in place
                return dispatch.OPERATORS["ufunc_at"](ufunc, *inputs)
            check_ufunc_call(ufunc, method, kwargs)
        handler = dispatch.UFUNCS.get(ufunc) or dispatch.ufunc_handler(ufunc)
        if handler is None:
            name = dispatch.ufunc_name(ufunc)
            raise NotDifferentiableError(
                f"{name} has no derivative rule in jittape. `python -m jittape ops` lists "
                f"the supported operations; compose it from those, or apply it to "
                f"jittape.primal(x) if you want no derivative through it.")
        if (len(inputs) != 1 or type(inputs[0]) is not Active) and \
                dispatch.may_hold_objects(inputs):
            if dispatch.has_complex(inputs):  # a complex constant: the complex values' handler
                return dispatch.OPERATORS["complex_call"](ufunc, inputs, {})
            inputs = dispatch.OPERATORS["from_objects"](inputs)
        return handler(*inputs)

    def __array_function__(self, func, types, args, kwargs):
        if dispatch.COMPLEX in types:  # np.concatenate([x, z]): the complex value's handler
            return NotImplemented
        handler = dispatch.FUNCTIONS.get(func)
        if handler is None:
            name = f"{getattr(func, '__module__', None) or 'numpy'}.{func.__name__}"
            raise NotDifferentiableError(
                f"{name} has no derivative rule in jittape. "
                f"`python -m jittape ops` lists the supported operations; compose it from "
                f"those, or apply it to jittape.primal(x) if you want no derivative through it.")
        if dispatch.may_hold_objects(args) or kwargs and dispatch.may_hold_objects(kwargs.values()):
            if dispatch.has_complex(args) or dispatch.has_complex(kwargs.values()):
                return dispatch.OPERATORS["complex_call"](func, args, kwargs)
            args = dispatch.OPERATORS["from_objects"](args)
            kwargs = dispatch.OPERATORS["from_objects"](kwargs)
        r = handler(*args, **kwargs)
        if type(r) in _SEQUENCES:  # NumPy's arrays made here may be written into later
            return dispatch.OPERATORS["fresh"](r, args, sys._getframe(1))
        return r


_PROXIES = dispatch.PROXIES
_SEQUENCES = (np.ndarray, tuple, list)


class Predicate(Active):
    """An active comparison result: value ``bool`` or bool ``ndarray``, recorded as 1.0/0.0.

    Used as data (``np.where``, arithmetic) it stays on the tape. Converted to a Python
    ``bool`` (``if``, ``while``, ``and``) or used as an index mask, it records a GUARD.
    """

    __slots__ = ()

    def __bool__(self):
        if np.size(self._v) != 1:
            raise ValueError(
                "The truth value of an active array with more than one element is ambiguous. "
                "Use np.where(cond, a, b) for a selection that stays differentiable, or "
                "a.any() / a.all() on jittape.primal(...) values.")
        guard(self)
        return bool(self._v)

    def __array__(self, dtype=None, copy=None):
        guard(self)  # used as a plain mask: the control flow depends on every element
        return np.asarray(self._v, dtype=dtype)

    def tolist(self):
        return self.__array__().tolist()  # its bools, guarded

    def __float__(self):
        """A comparison has no derivative to lose: its 0/1 value, guarded (a replay whose
        comparison comes out differently records again)."""
        return float(bool(self))

    def __int__(self):
        return int(bool(self))

    def __and__(self, y):
        return logical(K.MUL, self, y)

    __rand__ = __and__

    def __or__(self, y):
        return logical(K.MAXIMUM, self, y)

    __ror__ = __or__

    def __iand__(self, y):
        return dispatch.OPERATORS["inplace"](self, y, lambda p, q: logical(K.MUL, p, q))

    def __ior__(self, y):
        return dispatch.OPERATORS["inplace"](self, y, lambda p, q: logical(K.MAXIMUM, p, q))

    def all(self, axis=None):
        """``m.all()`` of an active comparison: NumPy's bool, guarded (control flow uses it)."""
        guard(self)
        return np.all(self._v, axis=axis)

    def any(self, axis=None):
        """``m.any()``: NumPy's bool, guarded."""
        guard(self)
        return np.any(self._v, axis=axis)

    def __invert__(self):
        v = ~np.asarray(self._v) if self.ndim else (not self._v)
        return new_active(Predicate, self._t, K.RSUBC, self._i, -1, 0, 1.0, v)


def guard(p):
    """Record that Python control flow depended on the current value of active ``p``.

    On replay the forward sweep checks that record ``p`` still has this value.
    """
    v = p._v
    if type(v) is bool or type(v) is float or np.ndim(v) == 0:
        p._t.push_scalar(K.GUARD, p._i, -1, 0, 0.0, float(v))
    else:
        p._t.push_array(K.GUARD, p._i, -1, 0, 0.0,
                        np.ascontiguousarray(v, dtype=np.float64))


def new_active(cls, t, opc, a, b, k, c, v):
    """Append a record with primal ``v`` and return the active value for it."""
    if type(v) is float or type(v) is bool:
        return cls(t, t.push_scalar(opc, a, b, k, c, float(v)), v)
    if isinstance(v, np.ndarray) and v.ndim:
        if v.dtype != np.float64 or not v.flags.c_contiguous:
            v = np.ascontiguousarray(v, dtype=bool if cls is Predicate else np.float64)
        store = v if v.dtype == np.float64 else v.astype(np.float64)
        if store.size == 0 and store.ndim > 1:  # memoryview refuses (0, n): push it flat
            i = t.push_array(opc, a, b, k, c, store.reshape(0))
            t.shapes[i] = store.shape
            return cls(t, i, v)
        return cls(t, t.push_array(opc, a, b, k, c, store), v)
    v = v.item() if hasattr(v, "item") else v  # NumPy scalar or 0-d array
    return cls(t, t.push_scalar(opc, a, b, k, c, float(v)), bool(v) if cls is Predicate else
               float(v))


def const(t, v):
    """Record the constant ``v`` (array-like) as a CONST leaf; return its active value."""
    v = np.asarray(v, dtype=np.float64)
    return new_active(Active, t, K.CONST, -1, -1, 0, 0.0, v if v.ndim else float(v))


def tape_of(*xs):
    t = None
    for x in xs:
        if isinstance(x, Active):
            if t is None:
                t = x._t
            elif x._t is not t:
                raise MixedRecordings(
                    "Active values from two different recordings meet in one operation: a "
                    "value of a finished recording (kept from an earlier jittape.grad, say) "
                    "used in a new one. Compute it inside the function being differentiated "
                    "(derivatives nest there: grad(grad(f)), closures included).")
    return t


def as_node(t, x, shape):
    """``x`` as a record of size 1 or of the broadcast ``shape`` (gathers as needed)."""
    if not isinstance(x, Active):
        x = np.asarray(x, dtype=np.float64)
        if x.size != 1 and x.shape != shape:
            x = np.broadcast_to(x, shape)
        return const(t, x)
    if np.size(x._v) == 1 or np.shape(x._v) == shape:
        return x
    return broadcast_to(x, shape)


def gather(x, idx, value):
    """Record ``value = x.flat[idx]`` (``idx`` an int array of value's shape).

    A gather of a comparison result is still a :class:`Predicate` (usable as a mask).
    """
    t = x._t
    flat = np.ravel(idx)
    if flat.size == 0:
        return const(t, value)
    cls = Predicate if isinstance(x, Predicate) else Active
    start = int(flat[0])
    if flat.size == 1 or np.all(np.diff(flat) == 1):
        return new_active(cls, t, K.SLICE, x._i, -1, start, 0.0, value)
    return new_active(cls, t, K.GATHER, x._i, -1, t.push_pool(flat), 0.0, value)


def flat_index(x):
    return np.arange(np.size(x._v)).reshape(np.shape(x._v))


def broadcast_to(x, shape):
    """``np.broadcast_to`` as a STRIDED record with zero strides on the broadcast axes (its
    adjoint sums over them): a view, never an index array."""
    shape = tuple(shape) if np.ndim(shape) else (int(shape),)
    if not isinstance(x, Active):
        return np.broadcast_to(x, shape)
    xs = np.shape(x._v)
    if xs == shape:
        return x
    value = np.broadcast_to(x._v, shape)  # NumPy's checks
    own = np.cumprod((1,) + xs[::-1][:-1])[::-1] if xs else ()  # C strides, in elements
    pad = len(shape) - len(xs)
    strides = [0] * pad + [0 if e == 1 else int(s) for e, s in zip(xs, own)]
    return strided(x, 0, shape, strides, value.copy())


def strided(x, start, shape, strides, value):
    """Record ``value = x.ravel()[start + sum_d i_d * strides[d]]`` over the multi-index
    ``i`` of ``shape`` (strides in elements): a SLICE when contiguous, else one STRIDED
    record with its axes normalised (axes of extent 1 dropped, axes that continue each
    other merged: a 2-D block of whole rows is one axis). A view of a comparison result is
    still a :class:`Predicate`."""
    t = x._t
    cls = Predicate if isinstance(x, Predicate) else Active
    dims = []
    for e, s in zip(shape, strides):
        if e == 0:
            return const(t, value)
        if e == 1:
            continue
        if dims and dims[-1][1] == e * s:  # the previous axis steps over this one whole
            dims[-1] = (dims[-1][0] * e, s)
        else:
            dims.append((int(e), int(s)))
    if not dims or len(dims) == 1 and dims[0][1] == 1:
        return new_active(cls, t, K.SLICE, x._i, -1, int(start), 0.0, value)
    layout = [len(dims), int(start)] + [e for e, _ in dims] + [s for _, s in dims]
    return new_active(cls, t, K.STRIDED, x._i, -1, t.push_pool(layout), 0.0, value)


def reshape(x, shape, order="C"):
    if order != "C":
        raise NotDifferentiableError("reshape of an active value supports order='C' only")
    z = np.reshape(x._v, shape)
    if isinstance(x, Predicate):
        return Predicate(x._t, x._i, bool(z) if z.ndim == 0 else z)
    return Active(x._t, x._i, float(z) if z.ndim == 0 else z)


def unary(opc, x):
    """Record the elementwise op ``opc`` on active ``x``."""
    v = x._v
    if type(v) is float:
        z = scalar_primal(OPS[opc].scalar, UFUNC_OF[opc], v)
        return Active(x._t, x._t.push_scalar(opc, x._i, -1, 0, 0.0, z), z)
    return new_active(Active, x._t, opc, x._i, -1, 0, 0.0, UFUNC_OF[opc](v))


def binary(opc, x, y):
    """Record the elementwise binary op ``opc`` (ADD, SUB, ..., MINIMUM) on ``x``, ``y``.

    At least one operand is active. A scalar constant operand of + - * / ** goes into the
    record's ``c`` immediate (no record for it); other constants become CONST leaves.
    """
    xa, ya = isinstance(x, Active), isinstance(y, Active)
    if xa and ya:
        t = tape_of(x, y)
        xv, yv = x._v, y._v
        if type(xv) is float and type(yv) is float:
            z = scalar_primal(OPS[opc].scalar, UFUNC_OF[opc], xv, yv)
            return Active(t, t.push_scalar(opc, x._i, y._i, 0, 0.0, z), z)
    else:
        act, cst = (x, y) if xa else (y, x)
        if type(cst) is np.ndarray and cst.dtype == object or type(cst) in _PROXIES:
            cst = dispatch.OPERATORS["from_objects"](cst)  # np.array([a, b]) * x
            return binary(opc, *((act, cst) if xa else (cst, act)))
        t = act._t
        if type(cst) in NUMBER or (np.ndim(cst) == 0 and np.isrealobj(cst)):
            copc = C_FORMS.get((opc, xa))
            if copc is not None:
                c = float(cst)
                if copc == K.POWC and c == 2.0:  # x**2: NumPy's fast path too, and no pow()
                    return unary(K.SQUARE, act)
                if copc == K.ADDC and c == 0.0 and type(act._v) is float and opc == K.ADD:
                    return act  # s = 0.0; s = s + x[i]: no identity record
                av = act._v
                xv, yv = (av, c) if xa else (c, av)
                if type(av) is float:
                    z = scalar_primal(OPS[opc].scalar, UFUNC_OF[opc], xv, yv)
                else:
                    with np.errstate(all="ignore"):
                        z = UFUNC_OF[opc](xv, yv)
                return new_active(Active, t, copc, act._i, -1, 0, -c if opc == K.SUB and xa else c,
                            z)
        if dispatch.has_complex((cst,)):  # x + 1j: complex values
            return dispatch.OPERATORS["complex_binary"](opc, x, y)
        xv = x._v if xa else check_const(x)
        yv = y._v if ya else check_const(y)
    with np.errstate(all="ignore"):
        z = UFUNC_OF[opc](xv, yv)
    shape = np.shape(z)
    xn, yn = as_node(t, x, shape), as_node(t, y, shape)
    return new_active(Active, t, opc, xn._i, yn._i, 0, 0.0, z)


def compare(opc, x, y):
    """Record a comparison; the result is a :class:`Predicate` (1.0/0.0 on the tape)."""
    if type(y) in _PROXIES:  # x < r, r a preallocated array (r < x comes as a ufunc)
        y = _PROXIES[type(y)](y)
    xa = isinstance(x, Active)
    t = tape_of(x, y)
    if xa and type(x._v) is float and type(y) in NUMBER:  # scalar fast path: if x[i] > 0
        z = OPS[opc].scalar(x._v, y)
        yi = t.push_scalar(K.CONST, -1, -1, 0, 0.0, float(y))
        return Predicate(t, t.push_scalar(opc, x._i, yi, 0, 0.0, float(z)), z)
    xv = x._v if xa else check_const(x)
    yv = y._v if isinstance(y, Active) else check_const(y)
    z = UFUNC_OF[opc](xv, yv)
    shape = np.shape(z)
    xn, yn = as_node(t, x, shape), as_node(t, y, shape)
    return new_active(Predicate, t, opc, xn._i, yn._i, 0, 0.0, z if shape else bool(z))


def logical(opc, p, q):
    """``p & q`` (MUL of 0/1) and ``p | q`` (MAXIMUM of 0/1) on predicates."""
    if not isinstance(q, Active):
        q = np.asarray(q, dtype=bool)
    z = (np.logical_and if opc == K.MUL else np.logical_or)(p._v, q._v if isinstance(
        q, Active) else q)
    t = p._t
    shape = np.shape(z)
    pn, qn = as_node(t, p, shape), as_node(t, q, shape)
    return new_active(Predicate, t, opc, pn._i, qn._i, 0, 0.0, z if shape else bool(z))

"""The active type: a value being recorded on a tape, with Python operators and NumPy hooks.

An :class:`Active` holds its tape (a :class:`jittape.tape.Recorder`), its record id and its
current primal value: a Python ``float`` for scalars (so scalar code runs on fast float
arithmetic) or a float64 ``ndarray``. Every operation computes its primal value with NumPy or
:mod:`math` and appends one record. Comparisons give a :class:`Predicate`, an active 0/1 value:
``np.where`` uses it as data (correct at any point on replay), while Python control flow
(``if``, ``bool``, masks used for indexing) records a GUARD on it.

NumPy functions reach this module through ``__array_ufunc__`` (NEP 13) and
``__array_function__`` (NEP 18); the handlers for non-ufunc functions are in
:mod:`jittape.functions`.
"""

import math
import operator

import numpy as np

from .ops import codes as K
from .errors import ActiveConversionError, NotDifferentiableError
from .ops import OPS, SCIPY_UFUNC_OPCODES, UFUNC_OPCODES
from .optable import COMPARE, UNARY


class Active:
    """A primal value that is being recorded; create one with :func:`jittape.grad`.

    Attributes are private: ``_t`` the recorder, ``_i`` the record id, ``_v`` the primal
    (``float`` or ``ndarray`` of float64), ``_base`` (unset unless views are involved) the
    view link of :mod:`jittape.composite`. Shapes follow NumPy's.

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

    # --- conversions that would lose the derivative ---
    def _lost(self, what):
        raise ActiveConversionError(
            f"{what} of an active value would drop its derivative. Keep computing with the "
            f"active value, or use jittape.primal(x) to take its current value as an explicit "
            f"constant (no derivative flows through it; a replayed tape re-records if it "
            f"changes).")

    def __float__(self):
        self._lost("float()")

    def __int__(self):
        self._lost("int()")

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

    def __complex__(self):
        self._lost("complex()")

    def item(self, *args):
        self._lost(".item()")

    def tolist(self):
        self._lost(".tolist()")

    def __array__(self, dtype=None, copy=None):
        raise ActiveConversionError(
            "Converting an active value to a NumPy array (np.asarray, np.array, or "
            "np.array([a, b]) of active scalars) would drop its derivative. To build an array "
            "from active values use np.stack([a, b]) or np.concatenate; for the current value "
            "as a constant use jittape.primal(x). A method of a plain ndarray given an active "
            "argument (a.dot(x), out[...] = x) converts it too: write np.dot(a, x) or a @ x, "
            "and build arrays functionally.")

    def __bool__(self):
        return bool(compare(K.NE, self, 0.0))

    def __hash__(self):
        return id(self)

    # --- arithmetic ---
    def __add__(self, y):
        return binary(K.ADD, self, y)

    def __radd__(self, y):
        return binary(K.ADD, y, self)

    def __sub__(self, y):
        return binary(K.SUB, self, y)

    def __rsub__(self, y):
        return binary(K.SUB, y, self)

    def __mul__(self, y):
        return binary(K.MUL, self, y)

    def __rmul__(self, y):
        return binary(K.MUL, y, self)

    def __truediv__(self, y):
        return binary(K.DIV, self, y)

    def __rtruediv__(self, y):
        return binary(K.DIV, y, self)

    def __pow__(self, y):
        return binary(K.POW, self, y)

    def __rpow__(self, y):
        return binary(K.POW, y, self)

    def __mod__(self, y):
        return binary(K.REMAINDER, self, y)

    def __rmod__(self, y):
        return binary(K.REMAINDER, y, self)

    def __floordiv__(self, y):
        return binary(K.FLOORDIV, self, y)

    def __rfloordiv__(self, y):
        return binary(K.FLOORDIV, y, self)

    def __divmod__(self, y):
        return binary(K.FLOORDIV, self, y), binary(K.REMAINDER, self, y)

    def __rdivmod__(self, y):
        return binary(K.FLOORDIV, y, self), binary(K.REMAINDER, y, self)

    def __matmul__(self, y):
        return _functions.matmul(self, y)

    def __rmatmul__(self, y):
        return _functions.matmul(y, self)

    # in-place operators: the object itself is updated (every alias and view sees it)
    def __iadd__(self, y):
        if type(self._v) is float and self._base is None:  # scalar: rebinds (fast path)
            return binary(K.ADD, self, y)
        return _inplace(self, y, lambda x, y: binary(K.ADD, x, y))

    def __isub__(self, y):
        if type(self._v) is float and self._base is None:  # scalar: rebinds (fast path)
            return binary(K.SUB, self, y)
        return _inplace(self, y, lambda x, y: binary(K.SUB, x, y))

    def __imul__(self, y):
        if type(self._v) is float and self._base is None:  # scalar: rebinds (fast path)
            return binary(K.MUL, self, y)
        return _inplace(self, y, lambda x, y: binary(K.MUL, x, y))

    def __itruediv__(self, y):
        if type(self._v) is float and self._base is None:  # scalar: rebinds (fast path)
            return binary(K.DIV, self, y)
        return _inplace(self, y, lambda x, y: binary(K.DIV, x, y))

    def __ipow__(self, y):
        if type(self._v) is float and self._base is None:  # scalar: rebinds (fast path)
            return binary(K.POW, self, y)
        return _inplace(self, y, lambda x, y: binary(K.POW, x, y))

    def __ifloordiv__(self, y):
        if type(self._v) is float and self._base is None:  # scalar: rebinds (fast path)
            return binary(K.FLOORDIV, self, y)
        return _inplace(self, y, lambda x, y: binary(K.FLOORDIV, x, y))

    def __imod__(self, y):
        if type(self._v) is float and self._base is None:  # scalar: rebinds (fast path)
            return binary(K.REMAINDER, self, y)
        return _inplace(self, y, lambda x, y: binary(K.REMAINDER, x, y))

    def __imatmul__(self, y):
        return _inplace(self, y, _functions.matmul)

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
        return compare(K.EQ, self, y)

    def __ne__(self, y):
        return compare(K.NE, self, y)

    def __getitem__(self, key):
        return _functions.getitem(self, key)

    # --- NumPy-style methods ---
    def sum(self, axis=None, keepdims=False):
        return np.sum(self, axis=axis, keepdims=keepdims)

    def mean(self, axis=None, keepdims=False):
        return np.mean(self, axis=axis, keepdims=keepdims)

    def prod(self, axis=None, keepdims=False):
        return np.prod(self, axis=axis, keepdims=keepdims)

    def max(self, axis=None, keepdims=False):
        return np.max(self, axis=axis, keepdims=keepdims)

    def min(self, axis=None, keepdims=False):
        return np.min(self, axis=axis, keepdims=keepdims)

    def dot(self, y):
        return np.dot(self, y)

    def argmax(self, axis=None):
        return np.argmax(self, axis=axis)

    def argmin(self, axis=None):
        return np.argmin(self, axis=axis)

    def reshape(self, *shape, order="C"):
        shape = shape[0] if len(shape) == 1 else shape
        return np.reshape(self, shape, order=order)

    def ravel(self, order="C"):
        return np.ravel(self, order=order)

    def flatten(self, order="C"):
        """A raveled copy (never a view, as NumPy's)."""
        return _functions.reshape(self, -1, order)

    def transpose(self, *axes):
        return np.transpose(self, axes[0] if len(axes) == 1 else (axes or None))

    @property
    def T(self):
        return np.transpose(self)

    def copy(self, order="C"):
        # same record, new object: y = x.copy(); y[0] = 0 must leave x alone
        return type(self)(self._t, self._i, self._v)

    def astype(self, dtype, copy=True):
        if np.dtype(dtype) != np.float64:
            raise NotDifferentiableError(
                f"astype({dtype}) of an active value: only float64 carries derivatives. "
                f"Use jittape.primal(x).astype(...) for a constant copy.")
        return self.copy() if copy else self

    def __setitem__(self, key, value):
        """``x[key] = value``: recorded as a functional update (overwritten elements get no
        adjoint) that every alias and view of ``x`` sees (:func:`jittape.composite.setitem`)."""
        _functions.composite.setitem(self, key, value)

    def swapaxes(self, axis1, axis2):
        return np.swapaxes(self, axis1, axis2)

    def squeeze(self, axis=None):
        return np.squeeze(self, axis=axis)

    def repeat(self, repeats, axis=None):
        return np.repeat(self, repeats, axis=axis)

    def take(self, indices, axis=None, out=None, mode="raise"):
        return np.take(self, indices, axis=axis, out=out, mode=mode)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return np.diagonal(self, offset, axis1, axis2)

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        return np.trace(self, offset, axis1, axis2, dtype, out)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        return np.var(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims,
                      **kw)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        return np.std(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims,
                      **kw)

    def cumsum(self, axis=None):
        return np.cumsum(self, axis=axis)

    def cumprod(self, axis=None):
        return np.cumprod(self, axis=axis)

    def clip(self, min=None, max=None):
        return np.clip(self, min, max)

    def round(self, decimals=0):
        return np.round(self, decimals)

    # --- NumPy protocols ---
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        name = f"numpy.{ufunc.__name__}"
        if method != "__call__":
            raise NotDifferentiableError(
                f"{name}.{method} on active values is not supported; use the equivalent "
                f"function (e.g. np.sum for np.add.reduce).")
        if kwargs.get("out") is not None:
            raise NotDifferentiableError(
                f"{name}(..., out=...) on active values: in-place output is not recorded; "
                f"assign the result instead (y = {ufunc.__name__}(...)).")
        extra = {k: v for k, v in kwargs.items() if k != "out" and v is not None}
        if extra:
            raise NotDifferentiableError(
                f"{name} with keyword(s) {sorted(extra)} on active values is not supported.")
        handler = UFUNC_HANDLERS.get(ufunc) or _table_handler(ufunc)
        if handler is None:
            if getattr(np, ufunc.__name__, None) is not ufunc:
                name = f"ufunc {ufunc.__name__} (not NumPy's; e.g. scipy.special)"
            raise NotDifferentiableError(
                f"{name} has no derivative rule in jittape. `python -m jittape ops` lists "
                f"the supported operations; compose it from those, or apply it to "
                f"jittape.primal(x) if you want no derivative through it.")
        return handler(*inputs)

    def __array_function__(self, func, types, args, kwargs):
        handler = _functions.FUNCTIONS.get(func)
        if handler is None:
            name = f"{getattr(func, '__module__', None) or 'numpy'}.{func.__name__}"
            raise NotDifferentiableError(
                f"{name} has no derivative rule in jittape. "
                f"`python -m jittape ops` lists the supported operations; compose it from "
                f"those, or apply it to jittape.primal(x) if you want no derivative through it.")
        return handler(*args, **kwargs)


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

    def __and__(self, y):
        return _logical(K.MUL, self, y)

    __rand__ = __and__

    def __or__(self, y):
        return _logical(K.MAXIMUM, self, y)

    __ror__ = __or__

    def __iand__(self, y):
        return _inplace(self, y, lambda p, q: _logical(K.MUL, p, q))

    def __ior__(self, y):
        return _inplace(self, y, lambda p, q: _logical(K.MAXIMUM, p, q))

    def __invert__(self):
        v = ~np.asarray(self._v) if self.ndim else (not self._v)
        return _new(Predicate, self._t, K.RSUBC, self._i, -1, 0, 1.0, v)


def _inplace(x, y, op):
    """``x op= y``: ``op(x, y)`` written into the object ``x`` (NumPy's in-place semantics).

    An active scalar that is not a view of an array is immutable, like NumPy's scalars: the
    result is a new object and only the name is rebound.
    """
    if type(x._v) in (float, bool) and x._base is None:
        return op(x, y)
    _functions.composite.writable(x, "output array")
    r = op(x, y)
    if isinstance(x, Predicate) and not isinstance(r, Predicate):
        raise NotDifferentiableError(
            "in-place arithmetic on an active comparison result (a boolean mask): NumPy "
            "cannot cast the result to bool. Write m = m + y (a new float array) instead.")
    if np.shape(r._v) != np.shape(x._v):
        raise ValueError(f"non-broadcastable output operand with shape {np.shape(x._v)} "
                         f"doesn't match the broadcast shape {np.shape(r._v)}")
    _functions.composite.assign(x, r)
    return x


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


def _new(cls, t, opc, a, b, k, c, v):
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
    return _new(Active, t, K.CONST, -1, -1, 0, 0.0, v if v.ndim else float(v))


def _tape_of(*xs):
    t = None
    for x in xs:
        if isinstance(x, Active):
            if t is None:
                t = x._t
            elif x._t is not t:
                raise NotDifferentiableError(
                    "Active values from two different recordings meet in one operation "
                    "(a value from an outer jittape.grad used inside an inner one). Nested "
                    "differentiation is not supported yet.")
    return t


def _as_node(t, x, shape):
    """``x`` as a record of size 1 or of the broadcast ``shape`` (gathers as needed)."""
    if not isinstance(x, Active):
        x = np.asarray(x, dtype=np.float64)
        if x.size != 1 and x.shape != shape:
            x = np.broadcast_to(x, shape)
        return const(t, x)
    if np.size(x._v) == 1 or np.shape(x._v) == shape:
        return x
    return _functions.broadcast_to(x, shape)


# --- primal functions while recording: each op's `scalar` (math, fast on floats) and its
# NumPy/SciPy callable (arrays, and NumPy's inf/nan conventions on domain errors)
def _ufunc_of(opc):
    """The NumPy or SciPy ufunc computing opcode ``opc``'s primal (from the op table)."""
    f = OPS[opc].numpy[0] if OPS[opc].numpy else np.positive
    if isinstance(f, str):
        import scipy.special
        f = getattr(scipy.special, f.rsplit(".", 1)[1])
    return f


class _UfuncTable(dict):
    """opcode -> primal ufunc, resolved on first use (SciPy is imported only if needed)."""

    def __missing__(self, opc):
        f = self[opc] = _ufunc_of(opc)
        return f


_NP = _UfuncTable()
# (opcode, constant on the right?) -> the opcode that keeps the constant in the c immediate
_C_FORMS = {(K.ADD, True): K.ADDC, (K.ADD, False): K.ADDC, (K.MUL, True): K.MULC,
            (K.MUL, False): K.MULC, (K.SUB, True): K.ADDC, (K.SUB, False): K.RSUBC,
            (K.DIV, True): K.DIVC, (K.DIV, False): K.RDIVC, (K.POW, True): K.POWC,
            (K.POW, False): K.RPOWC}
_NUMBER = (float, int)


def _scalar(f, npf, *xs):
    """A scalar primal with :mod:`math`, falling back to NumPy's inf/nan conventions."""
    if f is not None:
        try:
            return f(*xs)
        except (ValueError, OverflowError, ZeroDivisionError):
            pass
    with np.errstate(all="ignore"):
        return float(npf(*xs))


def unary(opc, x):
    """Record the elementwise op ``opc`` on active ``x``."""
    v = x._v
    if type(v) is float:
        z = _scalar(OPS[opc].scalar, _NP[opc], v)
        return Active(x._t, x._t.push_scalar(opc, x._i, -1, 0, 0.0, z), z)
    return _new(Active, x._t, opc, x._i, -1, 0, 0.0, _NP[opc](v))


def binary(opc, x, y):
    """Record the elementwise binary op ``opc`` (ADD, SUB, ..., MINIMUM) on ``x``, ``y``.

    At least one operand is active. A scalar constant operand of + - * / ** goes into the
    record's ``c`` immediate (no record for it); other constants become CONST leaves.
    """
    xa, ya = isinstance(x, Active), isinstance(y, Active)
    if xa and ya:
        t = _tape_of(x, y)
        xv, yv = x._v, y._v
        if type(xv) is float and type(yv) is float:
            z = _scalar(OPS[opc].scalar, _NP[opc], xv, yv)
            return Active(t, t.push_scalar(opc, x._i, y._i, 0, 0.0, z), z)
    else:
        act, cst = (x, y) if xa else (y, x)
        t = act._t
        if type(cst) in _NUMBER or (np.ndim(cst) == 0 and np.isrealobj(cst)):
            copc = _C_FORMS.get((opc, xa))
            if copc is not None:
                c = float(cst)
                if copc == K.POWC and c == 2.0:  # x**2: NumPy's fast path too, and no pow()
                    return unary(K.SQUARE, act)
                if copc == K.ADDC and c == 0.0 and type(act._v) is float and opc == K.ADD:
                    return act  # s = 0.0; s = s + x[i]: no identity record
                av = act._v
                xv, yv = (av, c) if xa else (c, av)
                if type(av) is float:
                    z = _scalar(OPS[opc].scalar, _NP[opc], xv, yv)
                else:
                    with np.errstate(all="ignore"):
                        z = _NP[opc](xv, yv)
                return _new(Active, t, copc, act._i, -1, 0, -c if opc == K.SUB and xa else c,
                            z)
        xv = x._v if xa else _check_const(x)
        yv = y._v if ya else _check_const(y)
    with np.errstate(all="ignore"):
        z = _NP[opc](xv, yv)
    shape = np.shape(z)
    xn, yn = _as_node(t, x, shape), _as_node(t, y, shape)
    return _new(Active, t, opc, xn._i, yn._i, 0, 0.0, z)


def _check_const(x):
    if isinstance(x, (np.ndarray, float, int, np.floating, np.integer, np.bool_, bool, list,
                      tuple)):
        if np.iscomplexobj(x):
            raise NotDifferentiableError("complex values are not supported by jittape")
        return x
    raise NotDifferentiableError(
        f"unsupported operand of type {type(x).__name__} in an operation with an active value")


def compare(opc, x, y):
    """Record a comparison; the result is a :class:`Predicate` (1.0/0.0 on the tape)."""
    xa = isinstance(x, Active)
    t = _tape_of(x, y)
    if xa and type(x._v) is float and type(y) in _NUMBER:  # scalar fast path: if x[i] > 0
        z = OPS[opc].scalar(x._v, y)
        yi = t.push_scalar(K.CONST, -1, -1, 0, 0.0, float(y))
        return Predicate(t, t.push_scalar(opc, x._i, yi, 0, 0.0, float(z)), z)
    xv = x._v if xa else _check_const(x)
    yv = y._v if isinstance(y, Active) else _check_const(y)
    z = _NP[opc](xv, yv)
    shape = np.shape(z)
    xn, yn = _as_node(t, x, shape), _as_node(t, y, shape)
    return _new(Predicate, t, opc, xn._i, yn._i, 0, 0.0, z if shape else bool(z))


def _logical(opc, p, q):
    """``p & q`` (MUL of 0/1) and ``p | q`` (MAXIMUM of 0/1) on predicates."""
    if not isinstance(q, Active):
        q = np.asarray(q, dtype=bool)
    z = (np.logical_and if opc == K.MUL else np.logical_or)(p._v, q._v if isinstance(
        q, Active) else q)
    t = p._t
    shape = np.shape(z)
    pn, qn = _as_node(t, p, shape), _as_node(t, q, shape)
    return _new(Predicate, t, opc, pn._i, qn._i, 0, 0.0, z if shape else bool(z))


def _handler(opc):
    kind = OPS[opc].kind
    if kind == UNARY:
        return lambda x: unary(opc, x)
    if kind == COMPARE:
        return lambda x, y: compare(opc, x, y)
    return lambda x, y: binary(opc, x, y)


def _table_handler(ufunc):
    """The handler of an op-table ufunc met for the first time: a SciPy ufunc (resolved by
    name) or one of an op registered after import (jittape.ops.register)."""
    opc = UFUNC_OPCODES.get(ufunc)
    if opc is not None:
        h = UFUNC_HANDLERS[ufunc] = _handler(opc)
        return h
    return _scipy_handler(ufunc)


def _scipy_handler(ufunc):
    """The handler of a SciPy ufunc of the op table (resolved by name on first use)."""
    opc = SCIPY_UFUNC_OPCODES.get(getattr(ufunc, "__name__", None))
    if opc is None or _NP[opc] is not ufunc:
        return None
    h = UFUNC_HANDLERS[ufunc] = _handler(opc)
    return h


def _heaviside(x, h0):
    """0 for x < 0, h0 at 0, 1 for x > 0: piecewise constant in x (zero derivative)."""
    return _functions.where(compare(K.GT, x, 0.0), 1.0,
                            _functions.where(compare(K.EQ, x, 0.0), h0, 0.0))


def _core_checked(gufunc, core_ndims, handler):
    """``handler`` behind NumPy's core-dimension checks of ``gufunc`` (vecdot, matvec,
    vecmat): the compositions would broadcast a 0-D operand or a length-1 core axis that
    NumPy refuses. The gufunc runs on zero-stride probes of the core shapes only (O(1))."""
    def checked(*xs):
        probes = []
        for x, k in zip(xs, core_ndims):
            shape = np.shape(x._v if isinstance(x, Active) else x)
            probes.append(np.broadcast_to(np.float64(0.0), shape[-k:] if len(shape) >= k
                                          else shape))
        gufunc(*probes)  # raises NumPy's own ValueError on a mismatch
        return handler(*xs)
    return checked


def _ufunc_handlers():
    h = {f: _handler(opc) for f, opc in UFUNC_OPCODES.items()}
    # ufuncs that are other ops in disguise
    h[np.positive] = lambda x: +x
    h[np.fabs] = lambda x: unary(K.ABS, x)
    h[np.reciprocal] = lambda x: binary(K.DIV, 1.0, x)
    h[np.float_power] = lambda x, y: binary(K.POW, x, y)
    h[np.deg2rad] = h[np.radians] = lambda x: x * (math.pi / 180.0)
    h[np.rad2deg] = h[np.degrees] = lambda x: x * (180.0 / math.pi)
    h[np.conjugate] = lambda x: +x  # real values only
    h[np.divmod] = lambda x, y: (binary(K.FLOORDIV, x, y), binary(K.REMAINDER, x, y))
    # predicates built from comparisons, so they replay (and guard when used as a mask)
    h[np.isnan] = lambda x: compare(K.NE, x, x)
    h[np.isinf] = lambda x: compare(K.EQ, unary(K.ABS, x), math.inf)
    h[np.isfinite] = lambda x: compare(K.LT, unary(K.ABS, x), math.inf)
    h[np.signbit] = lambda x: compare(K.LT, binary(K.COPYSIGN, 1.0, x), 0.0)
    h[np.logical_not] = lambda x: compare(K.EQ, x, 0.0)
    h[np.logical_xor] = lambda x, y: compare(K.NE, compare(K.NE, x, 0.0),
                                             compare(K.NE, y, 0.0))
    h[np.heaviside] = _heaviside
    h[np.vecdot] = _core_checked(np.vecdot, (1, 1),
                                 lambda x, y: np.sum(x * y, axis=-1))
    h[np.matvec] = _core_checked(np.matvec, (2, 1), lambda a, v: np.squeeze(
        np.matmul(a, np.expand_dims(v, -1)), -1))
    h[np.vecmat] = _core_checked(np.vecmat, (1, 2), lambda v, a: np.squeeze(
        np.matmul(np.expand_dims(v, -2), a), -2))
    h[np.logical_and] = lambda x, y: _logical(K.MUL, *((x, y) if isinstance(x, Predicate)
                                                        else (y, x)))
    h[np.logical_or] = lambda x, y: _logical(K.MAXIMUM, *((x, y) if isinstance(x, Predicate)
                                                           else (y, x)))

    h[np.matmul] = lambda x, y: _functions.matmul(x, y)
    return h


UFUNC_HANDLERS = _ufunc_handlers()

from . import functions as _functions  # noqa: E402  (functions.py builds on this module)

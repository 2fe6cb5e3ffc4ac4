"""Object arrays of actives as active arrays, and what ``np.asarray`` of an active gives.

NumPy builds arrays (``np.array``, ``np.asarray``, ``np.r_``, ``np.c_``, ``np.block``, the
``np.asanyarray`` at the start of many NumPy and SciPy functions) without asking jittape: it
calls each active's ``__array__``. An active scalar gives a 0-d object array holding itself;
an active array gives an object array of its shape holding its elements (:func:`elements`,
each an :class:`Element`: an active scalar that records its gather only if it is computed
with). So ``np.array([x, 2 * x])`` is an object array of NumPy's shape whose elements are
actives, and NumPy's object loops (``np.sin``, ``+``, ``np.sum`` of it) record on them.
:func:`to_active` turns such arrays into one active array wherever jittape meets them: the
operands of an active operation and of NumPy functions, and a function's output; elements
of one active array are gathered from it in one record (:func:`from_objects`).

An integer or boolean dtype (``np.int64(x)``, ``np.asarray(x, dtype=int)``) gives NumPy's
value with no derivative (piecewise constant), guarded so that a replay where it changes
records again. A float dtype would drop the derivative and raises
:class:`~jittape._base.errors.ActiveConversionError`.
"""

import sys

import numpy as np

from . import dispatch
from .active import Active, new_active, tape_of, compare, const, gather, guard, unary
from .._base.errors import ActiveConversionError, NotDifferentiableError
from ..optable.table import codes as K


class Element(Active):
    """Element ``k`` (flat, C order) of the value of record ``src`` (an active array), as an
    active scalar. Its SLICE record is pushed when its id is first needed, so an array built
    from elements and met by jittape (:func:`from_objects`) costs no record per element."""

    __slots__ = ("_src", "_k", "_j")

    def __init__(self, t, src, k, v):
        self._t, self._src, self._k, self._j, self._v, self._base = t, src, k, -1, v, None

    @property
    def _i(self):
        if self._j < 0:
            self._j = self._t.push_scalar(K.SLICE, self._src[0], -1, self._k, 0.0, self._v)
        return self._j

    @_i.setter
    def _i(self, i):
        self._j = i


def elements(x):
    """``x`` (an active array) as an object array of its shape holding its elements."""
    src = (x._i, np.ravel(x._v))  # the record, not the object: a later write rebinds x
    t = x._t
    return np.fromiter((Element(t, src, k, v) for k, v in enumerate(src[1].tolist())),
                       dtype=object, count=src[1].size).reshape(np.shape(x._v))


def to_array(x, dtype=None):
    """``x.__array__(dtype)`` of an active ``x`` (see the module docstring)."""
    dt = None if dtype is None else np.dtype(dtype)
    if dt is None or dt == object:
        _refuse_in_scipy(sys._getframe(2))  # the frame that asked NumPy for the array
        if type(x._v) is float:
            box = np.empty((), dtype=object)
            box[()] = x
            return box
        # read-only: np.asarray(x) of an ndarray is x itself in NumPy, so a write into it
        # would change x there; here it could not, so it raises instead of diverging
        out = elements(x)
        out.flags.writeable = False
        return out
    if dt.kind == "b":
        guard(compare(K.NE, x, 0.0))
        return np.asarray(x._v, dtype=dt)
    if dt.kind in "iu":
        guard(unary(K.TRUNC, x))  # the integer cast truncates toward zero
        return np.asarray(x._v).astype(dt)
    _refuse_in_scipy(sys._getframe(2))  # SciPy code (odeint): name the SciPy function
    raise ActiveConversionError(
        f"Converting an active value to a NumPy array of dtype {dt} (np.asarray(x, "
        f"dtype=float), x.astype(float), writing into a float array: out[...] = x) would "
        f"drop its derivative. Keep x as it is (it behaves as an array), build arrays with "
        f"np.stack / np.concatenate / np.zeros_like(x), or take the current value as a "
        f"constant with jittape.primal(x). A method of a plain ndarray given an active "
        f"argument converts it too: write np.dot(a, x) or a @ x rather than a.dot(x).")


def _refuse_in_scipy(frame, wrapped_only=False):
    """Raise if SciPy's Python code converts an active: an object array would fail there
    with an error naming some internal step, or be written into a float array. The error
    names the outermost SciPy function of the calls (NumPy's helpers and SciPy's private
    ``scipy._lib`` decorators in between are looked through). With ``wrapped_only``, only
    for a function jittape wraps under its public name (``int()`` of an active in SciPy's
    code: a compiled routine's ``float()`` of a callback's result has SciPy's frame too)."""
    where = None
    while frame is not None:
        module, code = frame.f_globals.get("__name__", ""), frame.f_code
        if module.startswith("scipy._lib"):  # a decorator: name the function it wraps
            f = frame.f_locals.get("f", frame.f_locals.get("func"))
            if callable(f) and getattr(f, "__module__", "").startswith("scipy."):
                where = f"{f.__module__}.{f.__qualname__}"
            elif where is None:
                where = f"{module}.{getattr(code, 'co_qualname', code.co_name)}"
        elif module.startswith("scipy."):
            where = f"{module}.{getattr(code, 'co_qualname', code.co_name)}"
        elif not module.startswith(("scipy.", "numpy.")):
            break
        frame = frame.f_back
    public = dispatch.SCIPY_WRAPPED.get(where)
    if public is not None:
        name = public.rsplit(".", 1)
        raise NotDifferentiableError(
            f"{where} (SciPy) was called directly, not as {public} (which jittape wraps): "
            f"a name bound before jittape was imported (`from {name[0]} import {name[1]}` "
            f"before `import jittape`) is SciPy's own function, which converts active "
            f"arguments with NumPy. Call it as {public}, or import jittape first.")
    if where is not None and not wrapped_only:
        raise NotDifferentiableError(
            f"{where} (SciPy) converts an active argument with np.asarray, which would drop "
            f"its derivative: jittape has no rule for this function. `python -m jittape ops` "
            f"lists what jittape differentiates; compose the function from those, or pass "
            f"jittape.primal(x) if you want no derivative through it.")


dispatch.OPERATORS["refuse_in_scipy"] = _refuse_in_scipy


def from_objects(a):
    """The object array ``a`` (``np.array([s, 1.0])`` of active scalars and numbers) as one
    active array of ``a``'s shape: its active elements and one constant of the numbers are
    concatenated (one CONCAT), then gathered into place (one GATHER). Elements of active
    arrays (:class:`Element`) are taken from their array, which enters the concatenation
    once; if ``a`` is one such array in order, it is that array (no record). An object array
    without actives becomes a float array."""
    flat = a.ravel()
    parts, consts, where = [], [], {}  # where: source record id -> its part's offset
    idx, n = np.empty(flat.size, dtype=np.intp), 0
    for p, e in enumerate(flat):
        if type(e) is Element:
            src = e._src
            if src[0] not in where:
                where[src[0]] = n
                parts.append(Active(e._t, src[0], src[1]))
                n += src[1].size
            idx[p] = where[src[0]] + e._k
        elif isinstance(e, Active):
            if type(e._v) is not float:
                raise NotDifferentiableError(
                    "an object array holding active arrays (a[i] = x into an object array): "
                    "build it with np.stack / np.concatenate")
            parts.append(e)
            idx[p], n = n, n + 1
        else:
            idx[p] = -1 - len(consts)
            consts.append(float(e))
    if not parts:
        return np.asarray(a, dtype=np.float64)
    t = tape_of(*parts)
    idx[idx < 0] = n - 1 - idx[idx < 0]  # constants go after the actives
    if consts:
        parts.append(const(t, np.array(consts)))
    if len(parts) == 1 and np.array_equal(idx, np.arange(n)):
        v = np.reshape(parts[0]._v, a.shape)
        return Active(t, parts[0]._i, float(v) if v.ndim == 0 else v)
    vals = np.concatenate([np.ravel(q._v) for q in parts])
    if len(parts) == 1:
        cat = parts[0]
    else:
        layout = [len(parts), 1]
        for q in parts:
            layout += [q._i, np.size(q._v)]
        cat = new_active(Active, t, K.CONCAT, parts[0]._i, -1, t.push_pool(layout), 0.0, vals)
    value = vals[idx].reshape(a.shape)
    return gather(cat, idx.reshape(a.shape), value if value.ndim else float(value))


def holds_active(a):
    """Whether ``a`` is an object array holding an active value (records nothing)."""
    return type(a) is np.ndarray and a.dtype == object and any(
        isinstance(e, Active) for e in a.flat)


def to_active(v):
    """Object arrays of actives as active arrays, also inside the lists, tuples and dicts
    of a call's arguments (``np.concatenate([objarr, x])``); anything else unchanged."""
    if type(v) is np.ndarray and v.dtype == object:
        return from_objects(v)
    if type(v) in (list, tuple):
        return type(v)(to_active(e) for e in v)
    if type(v) in dispatch.PROXIES:  # a preallocated array: its active value, or plain
        return dispatch.PROXIES[type(v)](v)
    if type(v) is dict:
        return {k: to_active(e) for k, e in v.items()}
    return v


def as_operand(x):
    """``x`` where a NumPy function takes one array: a list or tuple holding actives (at
    any depth), or an object array of them, as one active array, NumPy's ``np.asarray`` of
    it; anything else unchanged."""
    if type(x) in (list, tuple) and _holds_active(x):
        return from_objects(np.array(x, dtype=object))
    if type(x) is np.ndarray and x.dtype == object:
        return from_objects(x)
    if type(x) in dispatch.PROXIES:
        return dispatch.PROXIES[type(x)](x)
    return x


def _holds_active(v):
    if isinstance(v, Active):
        return True
    return type(v) in (list, tuple) and any(_holds_active(e) for e in v)


dispatch.OPERATORS["from_objects"] = to_active
dispatch.OPERATORS["as_operand"] = as_operand
dispatch.OPERATORS["to_array"] = to_array

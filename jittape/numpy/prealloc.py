"""Preallocated arrays: ``r = np.zeros(n); r[0] = x[0] - 1.0`` inside a recorded function.

Real code fills arrays it allocated itself: residual vectors, ODE right-hand sides, Jacobian
rows. While a function is recorded on a thread, NumPy's creation functions (``np.zeros``,
``np.empty``, ``np.ones``, ``np.full`` and their ``*_like`` forms given plain arrays) called
from that thread's code return a :class:`Prealloc` of float64: an ndarray subclass that is
the plain array until an active value is written into it (item or slice assignment,
``out=``, ``np.copyto``, ``np.put``, ``np.putmask``, ``np.fill_diagonal``, ``.flat``, ``+=``,
``np.add.at``...). From that write on, the array and the views taken of it are one active
array: every read records, and NumPy's semantics (which elements a view shares,
broadcasting, repeated indices: last write wins) hold because NumPy evaluates each index.

How: the array a creation function returned (the *root*) and every view of it share one
:class:`_Cell`. The first active write records the root's current contents as a CONST, which
becomes the cell's active value; each later read or write of the root or of a view goes to
that active value (a view finds its elements by their memory offsets in the root). The raw
memory is then filled with NaN, so code that reads it behind jittape's back (C code given
``np.asarray(r)``) sees NaN, never a stale value without a derivative.

The creation functions are replaced only while some recording runs, in the ``numpy``
namespace and wherever a loaded library bound them (``from numpy import zeros``;
:mod:`jittape.numpy.stand_ins`), so other code pays nothing the rest of the time; meanwhile
other threads, jittape's own code and calls outside a recording get NumPy's plain arrays.
"""

import sys
import threading
import weakref

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import dispatch, float_warnings, stand_ins
from .active import Active, const, gather
from .object_arrays import as_operand, holds_active
from .shaping import concrete_key, cyclic, filled, has_active
from .stand_ins import StandIn, internal
from .views import lay_out
from .._base.errors import ActiveConversionError, NotDifferentiableError

_F64 = np.dtype(np.float64)
_CREATORS = ("zeros", "empty", "ones", "full", "zeros_like", "empty_like", "ones_like",
             "full_like")


_THREAD = stand_ins.THREAD
_LOCK = threading.Lock()
_USERS = [0]  # recordings running on any thread
#: Callables ``switch(on)`` called when the first recording starts (True) and when the last
#: one ends (False), under the lock: settings that hold while any recording runs
#: (:mod:`jittape.scipy.array_api`).
SWITCHES = []


class _Creation(StandIn):
    # NumPy's creation function ``f``, giving a Prealloc to recorded code
    __slots__ = ()

    def __call__(self, *args, **kwargs):
        if not _THREAD.depth:  # no recording on this thread: NumPy's own
            return self._f(*args, **kwargs)
        return _made(self._f(*args, **kwargs), sys._getframe(1))


class _Filling(_Creation):
    # np.full / np.full_like: NumPy's own code would write an active fill value into a plain
    # array (np.copyto), so an active one goes to OPERATORS["active_fill"] (an active array)
    __slots__ = ()

    def __call__(self, *args, **kwargs):
        if not _THREAD.depth:
            return self._f(*args, **kwargs)
        fill = _active_fill(args[1] if len(args) > 1 else kwargs.get("fill_value"))
        if fill is not None:
            return dispatch.OPERATORS["active_fill"](self._f, args, kwargs, fill)
        return _made(self._f(*args, **kwargs), sys._getframe(1))


def _active_fill(v):
    """The fill value ``v`` as one active value if it is or holds one (a list or object
    array of actives, a Prealloc holding active values), else None."""
    t = type(v)
    if t is float or t is int:
        return None
    if t is np.ndarray:
        held = holds_active(v)
    else:
        held = isinstance(v, Active) or t is Prealloc or t in (list, tuple) and has_active(v)
    v = as_operand(v) if held else None
    return v if isinstance(v, Active) else None


def _made(a, frame):
    """What a creation function gives recorded code (``frame`` its caller's): NumPy's
    float64 array ``a`` as a :class:`Prealloc`, or ``a`` itself."""
    if _THREAD.depth and type(a) is np.ndarray and a.dtype == _F64 and \
            not internal(frame):
        return a.view(Prealloc)
    return a


for _name in _CREATORS:
    stand_ins.register(_name, (_Filling if _name.startswith("full") else _Creation)(
        getattr(np, _name)))


class recording:
    """``with recording(rec):`` around the call of a function being recorded on this thread
    on the recorder ``rec`` (:func:`current` gives it meanwhile)."""

    __slots__ = ("rec", "errors")

    def __init__(self, rec):
        self.rec = rec
        self.errors = None

    def __enter__(self):
        with _LOCK:
            if not _USERS[0]:
                stand_ins.enter()
                for switch in SWITCHES:
                    switch(True)
            _USERS[0] += 1
        _THREAD.depth += 1
        _THREAD.stack.append(self.rec)
        self.errors = float_warnings.enter()  # NumPy's warnings at the caller's line

    def __exit__(self, *exc):
        float_warnings.leave(self.errors)
        _THREAD.stack.pop()
        _THREAD.depth -= 1
        with _LOCK:
            _USERS[0] -= 1
            if not _USERS[0]:
                stand_ins.leave()
                for switch in SWITCHES:
                    switch(False)


def current():
    """The recorder of the innermost recording running on this thread, or None."""
    stack = _THREAD.stack
    return stack[-1] if stack else None


def _data(a):
    return a.__array_interface__["data"][0]


class _Cell:
    """What a preallocated root and its views share: the root's memory (``memory``, a plain
    view of it), a weak reference to the root object, and once an active value was written
    (``active``) the root's value as an active array of the root's shape."""

    __slots__ = ("memory", "root", "active")

    def __init__(self, root):
        self.memory = root.view(np.ndarray)
        self.root = weakref.ref(root)
        self.active = None

    def activate(self, t, whole=None):
        """Record the root's contents as a CONST on tape ``t`` (or take ``whole``, a new
        active object of the root's shape, when the first write covers the root: nothing
        of the old contents is read then); poison the raw memory."""
        m = self.memory
        if whole is None:
            whole = const(t, np.array(m, order="C"))  # a copy: then poisoned
        if not m.flags.c_contiguous:  # (np.empty(..., order="F")): views follow NumPy's
            lay_out(whole, np.empty_like(m, dtype=np.uint8))
        self.active = whole
        m[...] = np.nan

    def positions(self, a):
        """The C-order flat index in the root of each element of ``a`` (a view of it)."""
        m = self.memory
        mem = np.arange(m.size, dtype=np.intp)  # memory order (the root is contiguous)
        pos = as_strided(mem[(_data(a) - _data(m)) // m.itemsize:], a.shape, a.strides)
        if not m.flags.c_contiguous:  # memory position -> C-order index
            c = np.empty(m.size, dtype=np.intp)
            c[as_strided(mem, m.shape, m.strides).ravel()] = mem
            pos = c[pos]
        return np.array(pos)

    def is_root(self, a):
        m = self.memory
        return self.root() is a and a.shape == m.shape or (
            a.shape == m.shape and a.strides == m.strides and _data(a) == _data(m))


def resolve(a):
    """A :class:`Prealloc` as what jittape computes with: its active value once an active
    value was written into its root (a view gathers its elements), else a plain array."""
    cell = a._cell
    act = cell.active
    if act is None:
        return a.view(np.ndarray)
    if cell.is_root(a):
        return act
    pos = cell.positions(a)
    v = act._v.ravel()[pos]
    return gather(act, pos, v if v.ndim else float(v))


def _resolved(v):
    """Arguments with every :class:`Prealloc` resolved (inside lists, tuples, dicts)."""
    t = type(v)
    if t is Prealloc:
        return resolve(v)
    if t is list or t is tuple:
        return t(_resolved(e) for e in v)
    if t is dict:
        return {k: _resolved(e) for k, e in v.items()}
    return v


def fresh(r, args, frame):
    """A handler's result on this thread's recording with plain float64 arrays that NumPy
    made (``np.broadcast_arrays(1.0, x, skew)``'s first, ``ans = ans.copy()`` next): those
    arrays as :class:`Prealloc`, so active values written into them later record. Views of
    the caller's own arrays (their base chain ends at an argument) stay NumPy's."""
    if not _THREAD.depth or internal(frame):
        return r
    if type(r) is np.ndarray:
        return r.view(Prealloc) if _made_here(r, args) else r
    if any(type(q) is np.ndarray for q in r):
        return type(r)(q.view(Prealloc) if type(q) is np.ndarray and _made_here(q, args)
                       else q for q in r)
    return r


def _made_here(a, args):
    if a.dtype != _F64:
        return False
    while a.base is not None:
        a = a.base
    return type(a) is np.ndarray and not any(a is b for b in args)


def _wrap(r):
    """A float64 array computed from preallocations is one too (``2.0 * np.ones(n)``)."""
    if type(r) is np.ndarray and r.dtype == _F64 and r.ndim:
        return r.view(Prealloc)
    return r


class Prealloc(np.ndarray):
    """A float64 array created while a function is recorded (see the module docstring).

    It is NumPy's array until an active value is written into it or into a view of it;
    from then on it records like an active array of its shape. Methods that active arrays
    do not have (``sort``, ``tobytes``, ...) raise :class:`NotDifferentiableError` then.
    """

    def __array_finalize__(self, obj):
        cell = getattr(obj, "_cell", None)
        if cell is None or not np.may_share_memory(self.view(np.ndarray), cell.memory):
            cell = _Cell(self)  # a new array (a copy): its own root
        self._cell = cell

    def __setitem__(self, key, value):
        cell = self._cell
        value = as_operand(_resolved(value))
        if cell.active is None:
            if not isinstance(value, Active) or self.dtype != _F64:
                return np.ndarray.__setitem__(self, key, value)
            if _covers(key) and cell.is_root(self) and \
                    _broadcasts(np.shape(value._v), self.shape):
                return cell.activate(value._t, filled(value, self.shape))  # r.fill(x)
            cell.activate(value._t)
        act = cell.active
        if cell.is_root(self):
            act[key] = value
        else:
            pos = cell.positions(self)[concrete_key(key)]
            act[np.unravel_index(pos, act.shape)] = value

    def __getitem__(self, key):
        if self._cell.active is None:
            return np.ndarray.__getitem__(self, key)
        return resolve(self)[key]

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if method == "at" and inputs and type(inputs[0]) is Prealloc:
            return _ufunc_at(ufunc, inputs[0], _resolved(inputs[1:]))
        ins = _resolved(inputs)
        if has_active(ins) or any(type(o) is Prealloc and o._cell.active is not None
                                   for o in out or ()):
            if out is None:
                return getattr(ufunc, method)(*ins, **kwargs)
            return write_out(getattr(ufunc, method)(*ins, **kwargs), out)
        if out is not None:
            kwargs["out"] = tuple(o.view(np.ndarray) if type(o) is Prealloc else o
                                  for o in out)
        r = getattr(ufunc, method)(*ins, **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return tuple(_wrap(q) for q in r) if type(r) is tuple else _wrap(r)

    def __array_function__(self, func, types, args, kwargs):
        write = WRITES.get(func)
        if write is not None:
            return write(*args, **kwargs)
        a, k = _resolved(args), _resolved(kwargs)
        if has_active(a) or has_active(k) or func in _AS_PLAIN:
            return func(*a, **k)
        return super().__array_function__(func, types, args, kwargs)

    @property
    def flat(self):
        """``r.flat``: a flat iterator whose item assignment may write active values."""
        return _Flat(self)

    def fill(self, value):
        self[...] = value

    def put(self, ind, v, mode="raise"):
        """``ndarray.put``: values go to the flat (C-order) indices ``ind``, ``v`` repeated."""
        v = as_operand(_resolved(v))
        if self._cell.active is None and not isinstance(v, Active):
            return np.ndarray.put(self, ind, v, mode)
        ind = np.ravel(ind)
        if mode == "wrap":
            ind = ind % self.size
        elif mode == "clip":
            ind = np.clip(ind, 0, self.size - 1)
        if ind.size:
            vals = np.ravel(v)[np.arange(ind.size) % np.size(v)]
            self.flat[ind] = vals

    def __repr__(self):
        return repr(resolve(self))

    def __str__(self):
        return str(resolve(self))

    def __reduce__(self):
        act = self._cell.active
        if act is not None:
            _refuse("pickling")
        return self.view(np.ndarray).__reduce__()


def _covers(key):
    """Whether the key ``...`` or ``:`` (all of an array) is ``key``."""
    return key is Ellipsis or type(key) is slice and key == slice(None)


def _broadcasts(shape, to):
    """Whether NumPy broadcasts an array of ``shape`` to ``to`` (np.broadcast_to's rule)."""
    return len(shape) <= len(to) and all(
        e == 1 or e == f for e, f in zip(shape[::-1], to[::-1]))


class _Flat:
    """``r.flat`` of a :class:`Prealloc`: NumPy's flat iterator, except that writes of
    active values (``a.flat[k] = x``, what ``np.fill_diagonal`` does) and reads after one
    go through the array's index."""

    __slots__ = ("_a",)

    def __init__(self, a):
        self._a = a

    def _at(self, key):
        a = self._a
        return np.unravel_index(np.arange(a.size)[concrete_key(key)], a.shape)

    def __getitem__(self, key):
        a = self._a
        if a._cell.active is None:
            return np.ndarray.flat.__get__(a)[key]
        return resolve(a)[self._at(key)]

    def __setitem__(self, key, value):
        """``a.flat[key] = value``: NumPy's flat assignment, which repeats a shorter
        ``value`` (raveled) over the selected elements and cuts a longer one."""
        a = self._a
        value = as_operand(_resolved(value))
        if a._cell.active is None and not isinstance(value, Active):
            np.ndarray.flat.__get__(a)[key] = value
            return
        at = self._at(key)
        if np.size(value) == 0:
            return  # NumPy: nothing is written
        if np.size(value) != 1 and np.size(at[0]):
            value = cyclic(value, np.shape(at[0]))
        a[at] = value

    def __iter__(self):
        a = self._a
        return iter(np.ndarray.flat.__get__(a) if a._cell.active is None else
                    resolve(a).reshape(-1))

    def __len__(self):
        return self._a.size

    def __array__(self, dtype=None, copy=None):
        return np.asarray(np.ndarray.flat.__get__(self._a), dtype=dtype)


def _refuse(what):
    raise NotDifferentiableError(
        f"{what} of a preallocated array holding active values (np.zeros(...) filled "
        f"with active values while recording) is not supported: active arrays have no such "
        f"method. Use the NumPy function (np.sort(r), ...), or jittape.primal(...) for a "
        f"constant copy.")


def _method(name):
    plain = getattr(np.ndarray, name)
    active = getattr(Active, name, None)

    def method(self, *args, **kwargs):
        if self._cell.active is None:
            return plain(self, *args, **kwargs)
        if active is None:
            _refuse(f"ndarray.{name}")
        return getattr(resolve(self), name)(*args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = plain.__doc__
    return method


def _property(name):
    plain = getattr(np.ndarray, name)
    return property(lambda self: plain.__get__(self) if self._cell.active is None else
                    getattr(resolve(self), name), doc=plain.__doc__)


_OWN = {"view", "setflags", "to_device", "fill", "put", "getfield", "setfield", "dump",
        "dumps", "__array_finalize__", "__array_function__", "__array_ufunc__"}
for _name in dir(np.ndarray):
    if _name in _OWN or _name in Prealloc.__dict__ or _name.startswith("__") and _name not in (
            "__iter__", "__float__", "__int__", "__index__", "__bool__", "__copy__",
            "__deepcopy__", "__contains__", "__format__", "__complex__", "__array__"):
        continue
    _attr = getattr(np.ndarray, _name)
    if callable(_attr):
        setattr(Prealloc, _name, _method(_name))
    elif _name in ("T", "mT", "real", "imag"):
        setattr(Prealloc, _name, _property(_name))
del _name, _attr


def _ufunc_at(ufunc, target, rest):
    """``np.add.at(r, idx, b)`` into a preallocated ``r``: NumPy's own while nothing active
    is involved; else ``r`` becomes active and the write is recorded (``views.ufunc_at``)."""
    cell = target._cell
    if cell.active is None:
        if not has_active(rest) or target.dtype != _F64:
            return getattr(ufunc, "at")(target.view(np.ndarray), *rest)
        cell.activate(next(v for v in rest if isinstance(v, Active))._t)
    act = resolve(target)  # the root's own active value, or a view's elements (a copy)
    dispatch.OPERATORS["ufunc_at"](ufunc, act, *rest)
    if not cell.is_root(target):
        target[...] = act


def write_out(result, out):
    """``ufunc(..., out=out)`` with an active ``result``: written into each output array
    (active, or a preallocation), as NumPy does; returns ``out`` as NumPy's ufuncs do."""
    res = result if type(result) is tuple else (result,)
    for o, r in zip(out, res):
        if o is None:
            continue
        if not (isinstance(o, Active) or type(o) is Prealloc):
            raise ActiveConversionError(
                f"out= is a plain {getattr(o, 'dtype', type(o).__name__)} array that cannot "
                f"hold an active result: create it inside the recorded function (np.zeros, "
                f"np.empty, ...) or with np.zeros_like(x) of an active x, or assign the result "
                f"(y = ufunc(...)).")
        o[...] = r
    return out[0] if len(out) == 1 else out


def _ufunc_out(ufunc, inputs, kwargs):
    out = kwargs.pop("out")
    return write_out(ufunc(*inputs, **kwargs), out if type(out) is tuple else (out,))


def _put(a, ind, v, mode="raise"):
    if type(a) is Prealloc:
        return a.put(ind, v, mode)
    return np.put(_resolved(a), ind, _resolved(v), mode)


#: NumPy functions that write into their first argument, given a :class:`Prealloc` there:
#: handler(*args, **kwargs), called with the Prealloc itself (not resolved). Filled here
#: and by :mod:`jittape.numpy.array_writes` (``np.copyto``, ``np.putmask``, ``np.place``,
#: ``np.fill_diagonal``).
WRITES = {np.put: _put,
          # NumPy's Python code writes through r[...], which records:
          np.put_along_axis: np.put_along_axis._implementation}
_AS_PLAIN = {np.array_repr, np.array_str, np.array2string}  # print as NumPy's arrays
dispatch.PROXIES[Prealloc] = resolve
dispatch.OPERATORS["ufunc_out"] = _ufunc_out
dispatch.OPERATORS["fresh"] = fresh

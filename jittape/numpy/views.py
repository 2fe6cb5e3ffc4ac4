"""Views, item assignment and in-place updates, following NumPy's aliasing.

Item assignment (``x[key] = v``, :func:`setitem`) and the in-place operators
(``+= -= *= /= **= //= %= @=``, and ``&= |=`` on masks, :func:`_inplace`) record a
functional update and rebind the active object ``x`` itself, so every name bound to it sees
the write. The functions for which NumPy returns a view (basic indexing, ``reshape``/
``ravel``, ``transpose``/``.T``, ``swapaxes``, ``moveaxis``, ``squeeze``, ``expand_dims``,
``atleast_*d``, ``flip``/``fliplr``/``flipud``/``rot90``, the ``split`` family, ``einsum``
without a sum; read-only: ``diagonal``, ``diag`` of a matrix, ``broadcast_to``) link their
result to the base array whenever NumPy's result is a view (NumPy itself decides, on a probe
array: ``x.T.reshape(-1)`` is a copy), through :func:`track`. A write into a view is
scattered into its base, and every live view of the base is re-gathered, so writes
propagate in both directions through views of views; a write into a read-only view raises
NumPy's ``ValueError``. Copies (``x.copy()``, ``np.copy``, ``+x``, ``x.flatten()``,
advanced indexing, every other function) are new objects and never see later writes. An
active scalar is immutable like a NumPy scalar (``s += 1`` rebinds ``s``), except a 0-d
view such as ``x[..., 0]``. See :func:`assign`.
"""

import math
import weakref

import numpy as np

from . import dispatch
from .selection import masked_select
from .active import (Active, Predicate, new_active, const, tape_of, broadcast_to, flat_index,
                     gather, reshape)
from .._base.errors import NotDifferentiableError
from ..optable.table import codes as K
from .shaping import (concrete_key, const_array, rearrange, take_flat, with_extra, probe, strided,
                      transpose, view)


# NumPy's aliasing, reproduced at the recording level. Records are immutable; what NumPy
# shares between a view and its base is modelled by linking active objects:
#
# * A view-producing function (basic indexing, reshape/ravel, transpose/.T, swapaxes,
#   moveaxis, squeeze, expand_dims, atleast_*d, flip*, rot90, split*, broadcast_to,
#   diagonal/diag of a matrix, einsum without a sum) records its result as usual, then asks
#   NumPy whether it would have returned a view: the same function is applied to a *probe*,
#   an uninitialised uint8 array of the base's shape (never read; O(1) for views). If the
#   probe's result shares memory with the probe, the result is linked (``_base``) to the
#   *root* (the base that is not itself a view) with that probe view, whose offset and
#   strides give the flat position of each element in the root. So NumPy decides, e.g.
#   ``x.T.reshape(-1)`` is a copy, ``x[1:3]`` a view, ``x[[1, 2]]`` a copy, diagonal and
#   broadcast_to are read-only views.
# * A write (item assignment, in-place operator) into an active computes the new value
#   functionally, then :func:`assign` rebinds the object in place (its ``_i``/``_v``) and,
#   when it is a view, scatters the new elements into its root (one CONCAT + GATHER); every
#   live view of the root is then re-gathered from the new root value. Every alias (the
#   same object under another name, views, views of views) thus sees the write; copies
#   (``x.copy()``, ``np.copy``, ``+x``, ``x.flatten()``, advanced indexing) are other
#   objects and do not.
# * The root keeps weak references to its views; a view keeps its root alive.
class _Root:
    """View bookkeeping of a root that has (had) views: its probe, weak refs to views."""

    __slots__ = ("shape", "_probe", "views", "limit")

    def __init__(self, shape):
        self.shape, self._probe = shape, None
        self.views = []
        self.limit = 8

    @property
    def probe(self):
        if self._probe is None:  # made when first needed; never read, only its addresses
            self._probe = np.empty(self.shape, np.uint8)
        return self._probe

    @property
    def contiguous(self):
        return self._probe is None or self._probe.flags.c_contiguous


def lay_out(a, probe):
    """Give the active root ``a`` (not a view) NumPy's memory layout of ``probe``, a uint8
    array of ``a``'s shape: views of ``a``, and the orders 'A' and 'K', follow it (an array
    created in Fortran order). Returns ``a``."""
    root = a._base = _Root(np.shape(a._v))
    root._probe = probe
    return a


def complex_part(a):
    """``a``, an active real or imaginary part of a complex value, laid out as NumPy's
    ``z.real``/``z.imag``: every other float of the complex buffer, not contiguous, so that
    ``ravel`` and ``reshape`` copy where NumPy's do (a write then stays out of ``z``)."""
    if isinstance(a, Active) and a._base is None and np.size(a._v) > 1:
        lay_out(a, np.empty(np.shape(a._v) + (2,), np.uint8)[..., 0])
    return a


class _Link:
    """A view's link to its root: ``probe`` is the view of the root's probe NumPy made
    (for a view known to be one, basic indexing, made on first use from its parent's)."""

    __slots__ = ("root", "_probe", "_make")

    def __init__(self, root, probe, make=None):
        self.root, self._probe, self._make = root, probe, make

    @property
    def probe(self):
        if self._probe is None:
            parent, fn = self._make
            self._probe, self._make = fn(probe_of(parent)), None
        return self._probe


def probe_of(x):
    b = x._base
    if isinstance(b, _Link):
        return b.probe
    if b is None:
        b = x._base = _Root(np.shape(x._v))
    return b.probe


def layout_probe(x):
    """A uint8 array with NumPy's memory layout of the active ``x``: its view of its root's
    probe (offset and strides in the root's memory), or a root's own layout
    (:func:`lay_out`); None for a C-ordered root."""
    b = x._base
    if isinstance(b, _Link):
        return b.probe
    return b._probe if isinstance(b, _Root) else None


def track(x, r, fn):
    """Return ``r``, the active result of the NumPy function ``fn`` applied to active ``x``,
    linked to ``x``'s root if NumPy's ``fn(x)`` is a view of ``x`` (decided on a probe)."""
    if not isinstance(r, Active) or r is x:
        return r
    return link_view(x, r, fn(probe_of(x)))


def track_view(x, r, fn):
    """:func:`track` for a result that NumPy's ``fn(x)`` makes a view of ``x`` whatever the
    shapes (basic indexing): linked without asking NumPy now, the probe made when a write
    first needs it (the hot path of ``x[1:] - x[:-1]``)."""
    b = x._base
    if isinstance(b, _Link):
        root = b.root
    else:
        root = x
        if b is None:
            x._base = _Root(np.shape(x._v))
    return _register(root, r, _Link(root, None, (x, fn)))


def link_view(x, r, q):
    b = x._base
    root = b.root if isinstance(b, _Link) else x
    reg = root._base
    if not isinstance(q, np.ndarray) or not (q.base is reg.probe or
                                             np.may_share_memory(q, reg.probe)):
        return r  # NumPy made a copy (or a scalar)
    return _register(root, r, _Link(root, q))


def _register(root, r, link):
    r._base = link
    reg = root._base
    views = reg.views
    views.append(weakref.ref(r))
    if len(views) >= reg.limit:  # drop dead views, amortised
        reg.views = views = [w for w in views if w() is not None]
        reg.limit = max(8, 2 * len(views))
    return r


def _offsets(q, probe):
    """The byte offsets from ``probe``'s first byte of the elements of its view ``q``."""
    start = q.__array_interface__["data"][0] - probe.__array_interface__["data"][0]
    pos = np.full(q.shape, start, dtype=np.intp)
    for k, (n, step) in enumerate(zip(q.shape, q.strides)):
        pos += (np.arange(n, dtype=np.intp) * step).reshape((n,) + (1,) * (q.ndim - k - 1))
    return pos


def _positions(q, probe):
    """The flat positions in the root of the elements of the probe view ``q``: byte offsets
    (the itemsize is 1), mapped through the root probe's own where that is not C-ordered
    (a complex value's real part: every other byte; a Fortran-ordered array)."""
    pos = _offsets(q, probe)
    if probe.flags.c_contiguous:
        return pos
    off = _offsets(probe, probe).ravel()  # the root's C order -> its memory: inverted
    c_order = np.empty(int(off.max()) + 1 if off.size else 0, dtype=np.intp)
    c_order[off] = np.arange(off.size, dtype=np.intp)
    return c_order[pos]


def _rebind(x, rec):
    """Point the object ``x`` at record ``rec`` (same size), keeping its shape and class."""
    v = np.reshape(rec._v, np.shape(x._v))
    if isinstance(x, Predicate):
        v = v != 0
    x._i, x._v = rec._i, (v.item() if v.ndim == 0 else v)


def writable(x, what="assignment destination"):
    """Raise NumPy's error if ``x`` is a read-only view (diagonal, broadcast_to)."""
    b = x._base
    if isinstance(b, _Link) and not b.probe.flags.writeable:
        raise ValueError(f"{what} is read-only")


def assign(x, new):
    """Make ``new`` (an active of ``x``'s shape) the value of ``x`` for every alias.

    ``x`` is rebound in place; a view's elements are scattered into its root, and all other
    live views of the root are re-gathered from the root's new record.
    """
    writable(x)
    b = x._base
    if isinstance(b, _Link):
        root = b.root
        n = root.size
        idx = flat_index(root)
        pos = _positions(b.probe, root._base.probe).ravel()
        idx.flat[pos] = n + np.arange(pos.size, dtype=idx.dtype)
        _rebind(root, take_flat(with_extra(root, new), idx))
    else:
        root = x
    _rebind(x, new)
    reg = root._base
    if isinstance(reg, _Root):
        live = []
        for w in reg.views:
            v = w()
            if v is None:
                continue
            live.append(w)
            if v is not x:
                _rebind(v, take_flat(root, _positions(v._base.probe, reg.probe)))
        reg.views = live


def _written_in_place(x, key, value):
    """True if ``value`` is the view ``x[key]`` itself (``x[key] += v`` already wrote)."""
    b = getattr(value, "_base", None)
    if not isinstance(b, _Link):
        return False
    xb = x._base
    if b.root is not (xb.root if isinstance(xb, _Link) else x):
        return False
    q = probe_of(x)[key]
    return (isinstance(q, np.ndarray) and q.shape == b.probe.shape
            and q.strides == b.probe.strides
            and q.__array_interface__["data"][0] == b.probe.__array_interface__["data"][0])


def setitem(x, key, value):
    """``x[key] = value`` (this is ``Active.__setitem__``), seen by every alias of ``x``.

    The new value of ``x`` is ``concat(x.ravel(), value.ravel())[idx]`` (one CONCAT and one
    GATHER), ``idx`` being the flat index array of ``x`` with ``idx[key]`` overwritten by
    the positions of ``value``; NumPy's own assignment on ``idx`` decides broadcasting,
    repeated indices and errors. Overwritten positions of the old ``x`` receive no adjoint.
    Then :func:`assign` rebinds ``x`` in place and carries the write to its root and the
    root's other views (see the comment above). Keys: basic (ints, slices, None, Ellipsis),
    integer arrays, boolean masks (an active comparison used as a mask is guarded).
    ``value`` is a constant or active (any shape broadcastable to ``x[key]``).
    """
    if not isinstance(x, Active):
        raise TypeError("setitem: x must be an active value")
    if type(value) in dispatch.PROXIES:  # x[k] = r, r a preallocated array
        value = dispatch.PROXIES[type(value)](value)
    xv = x._v
    if type(xv) in (float, bool) or np.ndim(xv) == 0:
        return _set_0d(x, key, value)
    tape_of(x, value)
    writable(x)
    if isinstance(key, Predicate) and not isinstance(x, Predicate):
        new = masked_select(x, key, value)
        if new is not None:  # the result's shape does not depend on the mask: no guard
            return assign(x, new)
    key = concrete_key(key)
    if _written_in_place(x, key, value):
        return  # NumPy copies the view onto itself: nothing changes
    if isinstance(x, Predicate):
        raise NotDifferentiableError(
            "item assignment into an active comparison result (a mask) is not supported; "
            "build the mask with np.where or logical operators (m &= c, m |= c) instead")
    if isinstance(value, Active):
        vshape = np.shape(value._v)
    else:
        value = const_array(value)
        vshape = value.shape
    n = x.size
    idx = flat_index(x)
    idx[key] = n + np.arange(math.prod(vshape), dtype=idx.dtype).reshape(vshape)
    if not np.any(idx >= n):
        return  # nothing selected: x is unchanged
    assign(x, take_flat(with_extra(x, value), idx))


def _inplace(x, y, op):
    """``x op= y``: ``op(x, y)`` written into the object ``x`` (NumPy's in-place semantics).

    An active scalar that is not a view of an array is immutable, like NumPy's scalars: the
    result is a new object and only the name is rebound.
    """
    if type(x._v) in (float, bool) and x._base is None:
        return op(x, y)
    writable(x, "output array")
    r = op(x, y)
    if isinstance(x, Predicate) and not isinstance(r, Predicate):
        raise NotDifferentiableError(
            "in-place arithmetic on an active comparison result (a boolean mask): NumPy "
            "cannot cast the result to bool. Write m = m + y (a new float array) instead.")
    if np.shape(r._v) != np.shape(x._v):
        raise ValueError(f"non-broadcastable output operand with shape {np.shape(x._v)} "
                         f"doesn't match the broadcast shape {np.shape(r._v)}")
    assign(x, r)
    return x


def _set_0d(x, key, value):
    """``x[()] = v`` and ``x[mask] = v`` (a 0-d mask) of a 0-d active value, as NumPy writes
    a 0-d array: ``v`` must have one element; a False mask changes nothing."""
    if isinstance(x, Predicate):
        raise NotDifferentiableError("item assignment into an active comparison result")
    if isinstance(key, Active):
        key = np.asarray(key)  # an active mask: guarded
    if not np.ones((), dtype=bool)[key].any():  # NumPy's checks of the key; a False mask
        return
    tape_of(x, value)
    if np.size(value) != 1:
        raise ValueError(f"could not broadcast input array from shape {np.shape(value)} "
                         f"into shape ()")
    new = np.reshape(value, ()) if isinstance(value, Active) else \
        const(x._t, float(np.reshape(value, ())))
    writable(x)
    assign(x, new)


def getitem(x, key):
    """``x[key]`` for basic slices, integers, integer arrays, boolean masks, None, Ellipsis.

    As in NumPy, basic indexing that leaves an array gives a view (linked to ``x``, see
    :func:`track`); an element (``x[i]`` of a vector) is a scalar copy, and
    advanced indexing a copy.
    """
    v = x._v
    if type(v) is float:  # a 0-d value: x[()], x[None], x[..., None] as NumPy's
        if isinstance(key, Active) or np.ndim(key) == 0 and np.asarray(key).dtype == bool:
            key = np.asarray(key)  # a 0-d mask (NumPy: shape (1,) or (0,)); guarded
            if key.dtype == bool and key.ndim == 0:
                return gather(x, flat_index(x)[key], np.asarray(v)[key])
        if key is Ellipsis or type(key) is tuple and key and all(k is Ellipsis for k in key):
            return x  # NumPy's x[...] of a 0-d array is a view of all of it: x itself
        if not _basic(key) or np.asarray(v)[key].ndim == 0 and key != ():
            raise IndexError("an active scalar (0-d) can be indexed by (), None and ... only")
        v = np.asarray(v)
        return gather(x, flat_index(x)[key], v[key].copy())
    if type(key) is int and v.ndim == 1:  # the scalar-loop fast path: x[i]
        n = v.shape[0]
        i = key + n if key < 0 else key
        if not 0 <= i < n:
            raise IndexError(f"index {key} is out of bounds for axis 0 with size {n}")
        z = float(v[i])
        return Active(x._t, x._t.push_scalar(K.SLICE, x._i, -1, i, 0.0, z), z)
    if type(key) is slice and v.ndim == 1:  # x[1:], x[:-1], x[::2]: the hot paths
        start, stop, step = key.indices(v.shape[0])
        if step == 1 and stop > start:
            r = new_active(Active, x._t, K.SLICE, x._i, -1, start, 0.0, v[start:stop])
            return track_view(x, r, lambda p: p[start:stop])
        n = len(range(start, stop, step))
        if n > 1:
            r = strided(x, start, (n,), (step,), v[key])
            return track_view(x, r, lambda p: p[key])
    key = concrete_key(key)
    if not _basic(key):  # advanced indexing: always a copy, by an index array
        return gather(x, flat_index(x)[key], v[key])
    z = v[key]  # NumPy's result (and errors)
    q = probe(v.shape)[key]  # its geometry: a view (offset, shape, strides), no index array
    r = view(x, q, z) if isinstance(q, np.ndarray) else \
        strided(x, _element(key, v.shape), (), (), z)
    return track_view(x, r, lambda p: p[key]) if isinstance(r, Active) and np.ndim(r._v) \
        else track(x, r, lambda p: p[key])  # an element: a copy, unless 0-d (NumPy decides)


def _element(key, shape):
    """The flat position of the element that the basic ``key`` (ints, None, ...) selects."""
    ints = [int(k) for k in (key if type(key) is tuple else (key,))
            if k is not None and k is not Ellipsis]
    pos = 0
    for k, e in zip(ints, shape):
        pos = pos * e + (k + e if k < 0 else k)
    return pos


def _basic(key):
    """Whether indexing by ``key`` is NumPy's basic indexing (ints, slices, None, ...), the
    kind that gives views; advanced indexing (arrays, lists, masks, bools) copies."""
    for k in key if type(key) is tuple else (key,):
        if not (k is None or k is Ellipsis or type(k) is slice or
                (isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)))):
            return False
    return True


def rearranged_view(x, fn):
    """:func:`rearrange`, and the result is linked to ``x`` when NumPy's ``fn`` returns a
    view (see :func:`track`): writes through it reach ``x``, and writes to ``x`` reach it."""
    return track(x, rearrange(x, fn), fn)


# NumPy's view-producing functions: the recorded result is linked to its base when NumPy
# would return a view (:func:`track`). The functions above stay unlinked for
# jittape's internal use (their results never escape to user code as views).
def reshape_view(x, shape=None, order="C", *, newshape=None, copy=None):
    """``np.reshape``/``x.reshape``: free (same record); a view of ``x`` when NumPy's is."""
    shape = newshape if shape is None else shape
    r = reshape(x, shape, order)
    if copy:
        return r
    if (x._base is None or isinstance(x._base, _Root) and x._base.contiguous) and \
            isinstance(r, Active) and np.ndim(r._v):
        # a C-order reshape of a root (contiguous) is always a view: no need to ask NumPy
        return track_view(x, r, lambda p: np.reshape(p, shape))
    return track(x, r, lambda p: np.reshape(p, shape))


def ravel_view(x, order="C"):
    """``np.ravel``/``x.ravel()``: a view when NumPy's is (``x.flatten()`` is a copy)."""
    return track(x, reshape(x, -1, order), np.ravel)  # ravel != reshape(-1)


def transpose_view(x, axes=None):
    """``np.transpose``/``x.T``: a STRIDED record, linked to ``x`` as NumPy's view is."""
    return track(x, transpose(x, axes), lambda p: np.transpose(p, axes))


def broadcast_to_view(x, shape, subok=False):
    """``np.broadcast_to``: a STRIDED record (zero strides), a read-only view of ``x``."""
    if not isinstance(x, Active):
        return broadcast_to(x, shape)
    shape = tuple(shape) if np.ndim(shape) else (int(shape),)
    q = np.broadcast_to(probe(np.shape(x._v)), shape)  # NumPy's checks; strides 0
    r = x if q.shape == np.shape(x._v) else view(x, q, np.broadcast_to(x._v, shape))
    if r is x:  # NumPy's result is still a new (read-only) view
        r = reshape(x, np.shape(x._v))
    return track(x, r, lambda p: np.broadcast_to(p, shape))


def _occurrences(pos):
    """For each entry of the flat positions ``pos``, how many equal ones come before it."""
    order = np.argsort(pos, kind="stable")
    ranked = pos[order]
    first = np.r_[True, ranked[1:] != ranked[:-1]] if ranked.size else np.zeros(0, bool)
    start = np.maximum.accumulate(np.where(first, np.arange(ranked.size), 0))
    occ = np.empty(pos.size, dtype=np.intp)
    occ[order] = np.arange(ranked.size) - start
    return occ


def ufunc_at(ufunc, a, indices, b=None):
    """``np.add.at(a, indices, b)`` and ``np.subtract.at``: unbuffered, so repeated indices
    accumulate, in the order they come (NumPy's ``ufunc.at``), written into ``a`` for every
    alias. Recorded in rounds: round ``j`` adds the ``j``-th occurrence of every selected
    position, one gather, one add and one functional write each, so the values are NumPy's
    sums in NumPy's order. ``a`` must be active (or a preallocated array)."""
    name = f"numpy.{ufunc.__name__}.at"
    if ufunc not in (np.add, np.subtract) or b is None:
        raise NotDifferentiableError(f"{name} on active values: only np.add.at and "
                                     f"np.subtract.at are supported")
    if not isinstance(a, Active) or type(a._v) is float:
        raise NotDifferentiableError(
            f"{name} writes active values into an array that is not active (created outside "
            f"the recorded function, or not float64): create it inside the recorded function "
            f"(np.zeros(n)) or as np.zeros_like(x)")
    writable(a, "output array")
    sel = flat_index(a)[concrete_key(indices)]  # NumPy's selection, and its errors
    pos = np.ravel(sel)
    if isinstance(b, Active):
        vals = broadcast_to(b, np.shape(sel)) if np.shape(b._v) != np.shape(sel) else b
    else:
        vals = np.broadcast_to(const_array(b), np.shape(sel))
    cur, n, occ = a, a.size, _occurrences(pos)
    for j in range(int(occ.max()) + 1 if occ.size else 0):
        at = np.flatnonzero(occ == j)
        part = take_flat(vals, at) if isinstance(vals, Active) else np.ravel(vals)[at]
        old = take_flat(cur, pos[at])
        new = old + part if ufunc is np.add else old - part
        idx = flat_index(cur)
        idx.flat[pos[at]] = n + np.arange(at.size)
        cur = take_flat(with_extra(cur, new), idx)
    if cur is not a:
        assign(a, cur)


dispatch.OPERATORS.update(getitem=getitem, setitem=setitem, inplace=_inplace,
                          ufunc_at=ufunc_at, complex_part=complex_part)
dispatch.FUNCTIONS.update({np.transpose: transpose_view, np.broadcast_to: broadcast_to_view})
# np.reshape and np.ravel: reshape_view and ravel_view (order 'C') through
# jittape.numpy.memory_order, which adds NumPy's other orders

"""``np.reshape`` and ``np.ravel`` (so ``x.reshape``, ``x.ravel``, ``x.flatten``) in every
order NumPy has: 'C', 'F', 'A' and 'K'.

An active array holds its elements in C order; the memory layout of the array it stands for
is known too: an array jittape computed is C-contiguous, a view (``x.T``, ``x[:, ::2]``) has
the offset and strides of NumPy's view (its probe in :mod:`jittape.numpy.views`), and so
does an array created in Fortran order while recording (:mod:`jittape.numpy.prealloc`). NumPy
itself decides which element goes where: ``np.reshape``/``np.ravel`` with the order asked
are applied to an integer array of that layout holding the elements' C-order positions
(:func:`_laid_out`), and the result is the positions to read. So 'A' and 'K' read in C order
for a C-contiguous array, and in memory order for a transposed view. Reading the positions
is free or one STRIDED record when they are a view's (``params.reshape(k, -1, order="F")``
of a vector); an 'F' reading that is not is a transpose, a free C reshape and a transpose
(strided views, no index array); anything else a GATHER. The result is linked as a view of
the input when NumPy's is (:func:`jittape.numpy.views.track`).
"""

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import dispatch
from .active import flat_index, reshape as c_reshape
from .shaping import affine, take_flat, transpose
from .views import layout_probe, ravel_view, reshape_view, track


def _laid_out(x):
    """An intp array of ``x``'s shape with NumPy's memory layout of ``x`` (the strides of
    :func:`jittape.numpy.views.layout_probe`), holding ``x``'s C-order flat positions.
    Elements that share memory (a broadcast view) hold one of their positions: their
    values are the same."""
    idx = flat_index(x)
    q = layout_probe(x) if idx.size > 1 else None
    if q is None or q.flags.c_contiguous:
        return idx
    ext = [(e - 1) * s for e, s in zip(q.shape, q.strides)]
    lo, hi = sum(min(0, d) for d in ext), sum(max(0, d) for d in ext)
    buf = np.empty(hi - lo + 1, dtype=np.intp)
    lay = as_strided(buf[-lo:], q.shape, tuple(s * buf.itemsize for s in q.strides))
    lay[...] = idx
    return lay


def _read(x, idx):
    """Record ``x``'s elements at the C-order positions ``idx`` (the result's shape)."""
    idx = np.asarray(idx)
    if idx.size < 2 or affine(idx) is not None:
        return take_flat(x, idx)  # free, a SLICE or one STRIDED record
    if np.array_equal(idx, np.reshape(flat_index(x), idx.shape, order="F")):
        return transpose(c_reshape(transpose(x), idx.shape[::-1]))
    return take_flat(x, idx)


def reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    """``np.reshape`` / ``a.reshape`` in NumPy's orders 'C', 'F' and 'A'.

    'C' is free, 'F' and 'A' read the elements in that order (see the module docstring);
    'K' raises NumPy's ValueError. A view of ``a`` when NumPy's is (``copy=False`` raises
    NumPy's error when it cannot)."""
    if order == "C":
        return reshape_view(a, shape, order, newshape=newshape, copy=copy)
    shape = newshape if shape is None else shape
    r = _read(a, np.reshape(_laid_out(a), shape, order=order))  # NumPy's errors
    if copy:
        return r
    return track(a, r, lambda p: np.reshape(p, shape, order=order, copy=copy))


def ravel(a, order="C"):
    """``np.ravel`` / ``a.ravel`` in NumPy's orders 'C', 'F', 'A' and 'K'.

    'K' reads in memory order, as NumPy does; a view of ``a`` when NumPy's is.
    ``a.flatten(order)`` is its copy."""
    if order == "C":
        return ravel_view(a)
    r = _read(a, np.ravel(_laid_out(a), order=order))  # NumPy's errors
    return track(a, r, lambda p: np.ravel(p, order=order))


dispatch.FUNCTIONS.update({np.reshape: reshape, np.ravel: ravel})

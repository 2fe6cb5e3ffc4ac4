"""``np.linspace``, ``np.logspace`` and ``np.geomspace`` with active ``start``/``stop`` (and
``base``): NumPy's own arithmetic repeated on active values, so the samples are NumPy's to
the last bit and each is an affine (or exponential) function of the ends.

NumPy's data-dependent branches (a zero step in ``linspace``, a zero end in ``geomspace``)
are comparisons of active values converted to ``bool``, i.e. guarded: a replay where one
flips raises :class:`jittape.GuardFailure` (:func:`jittape.taped` records again).
"""

import operator

import numpy as np

from . import dispatch
from .active import Active, broadcast_to, reshape, unary
from ..optable.table import codes as K
from .shape_functions import moveaxis
from .shaping import check_dtype, has_active, refuse_active, primal_array, concatenate


def _float(x):
    return x if isinstance(x, Active) else np.asarray(x, dtype=np.float64)


def _any(p):
    """``bool(np.any(p))`` for a comparison result, guarded when it is active."""
    return bool(np.any(np.asarray(p)))  # Predicate.__array__ records the guard


def _with_ends(y, first, last, shape):
    """``y`` with ``y[0] = first`` (unless None) and ``y[-1] = last`` (unless None), each
    broadcast to ``shape`` (one row): NumPy's item assignments, as one CONCAT."""
    def row(v):
        v = broadcast_to(v, shape) if isinstance(v, Active) else np.broadcast_to(v, shape)
        return reshape(v, (1,) + shape) if isinstance(v, Active) else v.reshape((1,) + shape)
    lo = 0 if first is None else 1
    hi = len(primal_array(y)) - (0 if last is None else 1)
    parts = ([row(first)] if first is not None else []) + [y[lo:hi]] + \
        ([row(last)] if last is not None else [])
    return concatenate(parts, axis=0) if has_active(parts) else np.concatenate(parts)


def _to_axis(y, axis):
    if axis == 0:
        return y
    return moveaxis(y, 0, axis) if isinstance(y, Active) else np.moveaxis(y, 0, axis)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """``np.linspace`` with active ``start``/``stop``: NumPy's arithmetic, composed.

    ``start``/``stop`` scalars or arrays; num, endpoint, retstep, axis: ``arange(num) * step
    + start``, the last sample ``stop`` itself, as NumPy computes them. Shape ``(num,) +
    broadcast(start, stop).shape`` with the new axis at ``axis``; ``retstep`` also returns
    the (active) step. NumPy's branch for a zero step (``y / div * delta``) is taken by a
    guarded test. Only float64 ``dtype``."""
    refuse_active("linspace", num=num, axis=axis)
    expected = np.linspace(primal_array(start), primal_array(stop), num, endpoint, retstep,
                           dtype, axis, device=device)  # NumPy's errors and shapes
    check_dtype("linspace", dtype)
    num = operator.index(num)
    if num == 0:
        return expected
    div = (num - 1) if endpoint else num
    start, stop = _float(start), _float(stop)
    delta = stop - start
    shape = np.shape(primal_array(delta))
    y = np.arange(0, num, dtype=np.float64).reshape((-1,) + (1,) * len(shape))
    if div > 0:
        step = delta / div
        if _any(step == 0):  # NumPy: denormal steps
            y = (y / div) * delta
        else:
            y = y * step
    else:
        step = np.nan
        y = y * delta
    y = y + start
    if endpoint and num > 1:
        y = _with_ends(y, None, stop, shape)
    y = _to_axis(y, axis)
    return (y, step) if retstep else y


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``np.logspace``: ``base ** linspace(start, stop, ...)``, any of them active.

    ``base`` a scalar, or an array that broadcasts as in NumPy."""
    refuse_active("logspace", num=num, axis=axis)
    np.logspace(primal_array(start), primal_array(stop), num, endpoint, primal_array(base), dtype,
                axis)
    check_dtype("logspace", dtype)
    if not isinstance(base, (float, int)) and np.ndim(primal_array(base)):
        nd = np.broadcast(primal_array(start), primal_array(stop), primal_array(base)).ndim
        start, stop, base = (_ndmin(a, nd) for a in (start, stop, base))
        base = reshape(base, _ins(np.shape(base._v), axis)) if isinstance(base, Active) \
            else np.expand_dims(base, axis=axis)
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    return np.power(base, y)


def _ndmin(a, nd):
    shape = np.shape(primal_array(a))
    shape = (1,) * (nd - len(shape)) + shape
    return reshape(a, shape) if isinstance(a, Active) else np.asarray(a).reshape(shape)


def _ins(shape, axis):
    return np.expand_dims(np.empty(shape, dtype=np.uint8), axis).shape


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``np.geomspace`` with active ``start``/``stop`` of either sign, composed.

    NumPy's ``sign * logspace(log10(start / sign), log10(stop / sign))`` with the ends set to
    ``start`` and ``stop`` exactly (so their derivatives are exact there). A zero end raises
    NumPy's ValueError (the test is guarded). Only float64 ``dtype``."""
    refuse_active("geomspace", num=num, axis=axis)
    expected = np.geomspace(primal_array(start), primal_array(stop), num, endpoint, dtype, axis)
    check_dtype("geomspace", dtype)
    start, stop = _float(start), _float(stop)
    if _any(start == 0) or _any(stop == 0):
        raise ValueError('Geometric sequence cannot include zero')
    if num == 0:
        return expected
    sign = unary(K.SIGN, start) if isinstance(start, Active) else np.sign(start)
    start = start / sign
    stop = stop / sign
    result = logspace(np.log10(start), np.log10(stop), num=num, endpoint=endpoint,
                      base=10.0)
    shape = np.shape(primal_array(result))[1:]
    result = _with_ends(result, start, stop if num > 1 and endpoint else None, shape)
    result = result * sign
    return _to_axis(result, axis)


dispatch.FUNCTIONS.update({np.linspace: linspace, np.logspace: logspace,
                           np.geomspace: geomspace})

"""Numerical routines on active values: ``interp``, ``convolve``, ``correlate``, ``polyval``,
``gradient``, ``nan_to_num``, ``select``, ``real``, ``imag``, ``angle``.

``interp`` and ``correlate``/``convolve`` are one record each (INTERP, CORRELATE: the
segment search must be redone on replay, and a composition of correlate would record
``len(a) * len(v)`` values); the others are compositions that repeat NumPy's own arithmetic
step by step, so the primal is NumPy's to the last bit. Every handler calls NumPy on the
primal first, so arguments, errors and shapes are NumPy's (numpy.org/doc/stable/reference).
"""

import math

import numpy as np

from . import dispatch
from .active import Active, Predicate, new_active, tape_of, const, reshape
from .selection import where
from .._base.errors import NotDifferentiableError
from ..optable.table import codes as K
from .shaping import (alias, const_array, has_active, rearrange, refuse_active, unsupported,
                      primal_array, concatenate, normalize_axis_tuple)
from .views import assign


def _node(t, x):
    """``x`` as a record: itself if active, else a CONST leaf."""
    return x if isinstance(x, Active) else const(t, np.asarray(x, dtype=np.float64))


def _where(cond, x, y):
    """``np.where`` for any mix of active and constant operands."""
    if has_active([cond, x, y]):
        return where(cond, x, y)
    return np.where(cond, x, y)


def _record(opc, t, a, b, k, value):
    v = value if np.ndim(value) else float(value)
    return new_active(Active, t, opc, a._i, b._i, k, 0.0, v)


# --- interp --------------------------------------------------------------------------------
def _interp_period(x, xp, fp, period):
    """NumPy's periodic normalisation (constant knots): x and xp modulo the period, the knots
    sorted and extended by one period on each side."""
    if isinstance(xp, Active):
        unsupported("interp", "active 'xp' with period=...", "the knots are re-sorted by "
                     "value; pass constant knots (jittape.primal(xp))")
    period = abs(period)
    x = x % period
    xpv = np.asarray(xp, dtype=np.float64) % period
    order = np.argsort(xpv)
    xpv = xpv[order]
    fp = rearrange(fp, lambda i: i[order]) if isinstance(fp, Active) else primal_array(fp)[order]
    xpv = np.concatenate((xpv[-1:] - period, xpv, xpv[0:1] + period))
    ends = [fp[-1:], fp, fp[0:1]]
    fp = concatenate(ends) if isinstance(fp, Active) else np.concatenate(ends)
    return x, xpv, fp


def interp(x, xp, fp, left=None, right=None, period=None):
    """``np.interp``: active query points, knots, values and ends; one INTERP record.

    Active ``x`` (query points), ``xp`` (knots), ``fp`` (values), ``left``/``right``
    (scalars); ``period`` (constant knots). Shape: ``x``'s.

    One INTERP record (NumPy's search and formula, redone on replay) for the default ends,
    then ``where(x < xp[0], left, ...)``, ``where(x > xp[-1], right, ...)``. Derivatives:
    ``d/dx`` the slope ``s`` of the segment, ``d/dfp[j], d/dfp[j+1] = 1 - u, u`` and
    ``d/dxp[j], d/dxp[j+1] = s (u - 1), -s u`` (``u = (x - xp[j]) / (xp[j+1] - xp[j])``).
    At a knot ``x == xp[j]`` the value is NumPy's ``fp[j]`` and the derivative is one-sided:
    that of the segment to the right (NumPy's search puts the knot there); at the last knot
    and outside the knots it is that of the constant (0 in ``x``). ``xp`` must be
    increasing (NumPy does not check and then returns meaningless values): recording
    raises otherwise; a replay does not check active knots again.
    """
    refuse_active("interp", period=period)
    if np.iscomplexobj(primal_array(fp)):
        unsupported("interp", "complex 'fp'", "interpolate the real and imaginary parts")
    prim = [None if v is None else primal_array(v) for v in (left, right)]
    expected = np.interp(primal_array(x), primal_array(xp), primal_array(fp),  # NumPy's errors
                         *prim, period)
    t = tape_of(x, xp, fp, left, right)
    if period is not None:
        x, xp, fp = _interp_period(x, xp, fp, period)
        left = right = None
    xpv = np.asarray(primal_array(xp), dtype=np.float64)
    if not np.all(xpv[1:] >= xpv[:-1]):
        raise NotDifferentiableError(
            "np.interp: argument 'xp' must be increasing (NumPy does not check it and its "
            "result is then meaningless); sort the knots: i = np.argsort(xp); "
            "np.interp(x, xp[i], fp[i])")
    table = concatenate([_ravel(xp), _ravel(fp)]) if has_active([xp, fp]) else \
        const(t, np.concatenate([xpv, np.ravel(primal_array(fp))]))
    value = expected if left is None and right is None and period is None else \
        np.interp(primal_array(x), xpv, primal_array(fp))
    r = _record(K.INTERP, t, _node(t, x), table, xpv.size, value)
    if left is not None:
        r = _where(x < xp[0], left, r)
    if right is not None:
        r = _where(x > xp[-1], right, r)
    return r


def _ravel(x):
    return alias(x, (-1,)) if isinstance(x, Active) else np.ravel(const_array(x))


# --- correlate, convolve ---------------------------------------------------------------------
_MODES = {"valid": 0, "same": 1, "full": 2}


def _correlation(a, v, mode, expected):
    """One CORRELATE record ``z[i] = sum_p a[i + lag + p] v[p]`` giving NumPy's
    ``correlate(a, v, mode)`` (``a``, ``v`` 1-D; ``expected`` its value)."""
    na, nv = np.size(primal_array(a)), np.size(primal_array(v))
    mode = _MODES[mode] if isinstance(mode, str) else int(mode)
    short = min(na, nv)
    lag = (0, -(short // 2), -(short - 1))[mode]  # of the longer against the shorter
    if na < nv:  # NumPy correlates v with a and reverses the result
        lag = -(expected.size - 1) - lag
    t = tape_of(a, v)
    return new_active(Active, t, K.CORRELATE, _node(t, a)._i, _node(t, v)._i,
                t.push_pool((na, nv, lag)), 0.0, expected)


def correlate(a, v, mode="valid"):
    """``np.correlate`` of 1-D arrays, either or both active: one CORRELATE record.

    Modes 'valid' (default), 'same', 'full': ``z[k] = sum_n a[n + k] v[n]``.

    Its adjoint is a correlation again: ``abar[i + l + p] += zbar[i] v[p]``,
    ``vbar[p] += zbar[i] a[i + l + p]``; O(len(a) len(v)) time, O(len(a) + len(v)) tape.
    """
    refuse_active("correlate", mode=mode)
    expected = np.correlate(primal_array(a), primal_array(v), mode)  # NumPy's errors
    return _correlation(a, v, mode, expected)


def convolve(a, v, mode="full"):
    """``np.convolve`` of 1-D arrays, either or both active: one CORRELATE record.

    Modes 'full' (default), 'same', 'valid'; scalars are 1-element arrays. NumPy's
    correlation of the longer input with the reversed shorter one."""
    refuse_active("convolve", mode=mode)
    expected = np.convolve(primal_array(a), primal_array(v), mode)  # NumPy's errors
    a, v = _ravel(a), _ravel(v)
    if np.size(primal_array(v)) > np.size(primal_array(a)):
        a, v = v, a
    v = rearrange(v, lambda i: i[::-1]) if isinstance(v, Active) else v[::-1]
    return _correlation(a, v, mode, expected)


# --- polyval ---------------------------------------------------------------------------------
def polyval(p, x):
    """``np.polyval`` with active coefficients and/or points: NumPy's Horner scheme.

    ``y = y * x + p[i]`` from ``y = zeros_like(x)`` (so ``inf`` gives NaN as in
    NumPy). Shape: ``x``'s broadcast with ``p.shape[1:]``."""
    if isinstance(x, np.poly1d):
        unsupported("polyval", "a poly1d 'x'", "pass its coefficients")
    pv = np.asarray(primal_array(p))
    if pv.ndim == 0:
        np.polyval(pv, primal_array(x))  # NumPy's error for a 0-d p
    y = np.zeros(np.shape(primal_array(x)))
    for i in range(len(pv)):
        y = y * x + p[i]
    return y


# --- gradient --------------------------------------------------------------------------------
def _spacing(d, n):
    """One axis' spacing as NumPy uses it: a scalar, or the differences of 1-D coordinates,
    reduced to their first when all are equal (a guarded test for active coordinates)."""
    if np.ndim(primal_array(d)) == 0:
        return d
    if not isinstance(d, Active):
        d = np.asarray(d, dtype=np.float64)
    diffx = d[1:] - d[:-1]
    same = diffx == diffx[0]
    return diffx[0] if np.asarray(same).all() else diffx  # Predicate.__array__ guards


def _pick(f, axis, sl):
    key = [slice(None)] * np.ndim(primal_array(f))
    key[axis] = sl
    return f[tuple(key)]


def _axis_gradient(f, axis, dx, edge_order):
    """NumPy's formulas along ``axis``: central differences inside, one-sided (first or
    second order) at the ends, the same arithmetic in the same order."""
    nd = np.ndim(primal_array(f))
    f0, f1, f2 = (_pick(f, axis, slice(i, -2 + i or None)) for i in range(3))
    uniform = np.ndim(primal_array(dx)) == 0
    if uniform:
        inner = (f2 - f0) / (2. * dx)
    else:
        shape = [1] * nd
        shape[axis] = -1
        dx1, dx2 = dx[0:-1], dx[1:]
        a = reshape_any(-(dx2) / (dx1 * (dx1 + dx2)), shape)
        b = reshape_any((dx2 - dx1) / (dx1 * dx2), shape)
        c = reshape_any(dx1 / (dx2 * (dx1 + dx2)), shape)
        inner = a * f0 + b * f1 + c * f2
    e = [_pick(f, axis, slice(i, i + 1 or None)) for i in (0, 1, 2, -3, -2, -1)]
    if edge_order == 1:
        first = (e[1] - e[0]) / (dx if uniform else dx[0])
        last = (e[5] - e[4]) / (dx if uniform else dx[-1])
    else:
        if uniform:
            a, b, c = -1.5 / dx, 2. / dx, -0.5 / dx
        else:
            dx1, dx2 = dx[0], dx[1]
            a = -(2. * dx1 + dx2) / (dx1 * (dx1 + dx2))
            b = (dx1 + dx2) / (dx1 * dx2)
            c = - dx1 / (dx2 * (dx1 + dx2))
        first = a * e[0] + b * e[1] + c * e[2]
        if uniform:
            a, b, c = 0.5 / dx, -2. / dx, 1.5 / dx
        else:
            dx1, dx2 = dx[-2], dx[-1]
            a = (dx2) / (dx1 * (dx1 + dx2))
            b = - (dx2 + dx1) / (dx1 * dx2)
            c = (2. * dx2 + dx1) / (dx2 * (dx1 + dx2))
        last = a * e[3] + b * e[4] + c * e[5]
    return concatenate([first, inner, last], axis=axis)


def reshape_any(x, shape):
    """``x`` reshaped, active (a free reshape) or constant."""
    return reshape(x, shape) if isinstance(x, Active) else np.reshape(x, shape)


def gradient(f, *varargs, axis=None, edge_order=1):
    """``np.gradient`` of active values and/or spacings: NumPy's differences, composed.

    Active ``f`` and/or active spacings (scalars or 1-D coordinates per axis), ``axis``
    (int, tuple, None), ``edge_order`` 1 or 2: NumPy's second-order central differences
    inside and one-sided differences at the ends, composed of slices, arithmetic and one
    CONCAT per axis. One array for one axis, else a tuple.

    NumPy treats equally spaced coordinates as a scalar spacing; for active coordinates that
    test is guarded (a replay where it changes records again).
    """
    refuse_active("gradient", axis=axis, edge_order=edge_order)
    expected = np.gradient(primal_array(f), *[primal_array(v) for v in varargs], axis=axis,
                           edge_order=edge_order)  # NumPy's errors
    if not isinstance(f, Active):
        f = const(tape_of(*varargs), np.asarray(f, dtype=np.float64))
    nd = np.ndim(f._v)
    axes = tuple(range(nd)) if axis is None else normalize_axis_tuple(axis, nd)
    if len(varargs) == 0:
        dx = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(primal_array(varargs[0])) == 0:
        dx = list(varargs) * len(axes)
    else:
        dx = [_spacing(d, f.shape[ax]) for d, ax in zip(varargs, axes)]
    out = [_axis_gradient(f, ax, d, edge_order) for ax, d in zip(axes, dx)]
    return out[0] if len(axes) == 1 else type(expected)(out)


# --- nan_to_num, select ------------------------------------------------------------------------
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``np.nan_to_num``: non-finite values replaced; zero derivative where replaced.

    NaN, +inf, -inf are replaced by ``nan``, ``posinf``, ``neginf`` (by default 0 and the
    largest/smallest float64), as nested WHEREs on comparisons, so a replay replaces what is
    non-finite there. The derivative is 1 where ``x`` is kept and 0 where it is replaced
    (the replacements may be active scalars: theirs is 1 there). ``copy=False`` writes the
    result into ``x`` (NumPy's in-place update)."""
    np.nan_to_num(primal_array(x), True, *[primal_array(v) if v is not None else None
                                   for v in (nan, posinf, neginf)])  # NumPy's errors
    info = np.finfo(np.float64)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    r = _where(x != x, nan, _where(x == math.inf, hi, _where(x == -math.inf, lo, x)))
    if not copy and np.ndim(primal_array(x)):
        assign(x, r)
        return x
    return r


def select(condlist, choicelist, default=0):
    """``np.select``: the first true condition's choice, else ``default`` (nested WHEREs).

    Conditions are comparisons of active values (or boolean arrays), choices and default active or
    constant. Recorded as nested WHEREs (NumPy fills in the same reverse order), so the
    derivative is that of the chosen branch; shape and errors are NumPy's."""
    prim = [np.asarray(c._v, dtype=bool) if isinstance(c, Predicate) else primal_array(c)
            for c in condlist]
    expected = np.select(prim, [primal_array(c) for c in choicelist], primal_array(default))
    r = default
    for cond, choice in zip(condlist[::-1], choicelist[::-1]):
        r = _where(cond, choice, r)
    if np.shape(primal_array(r)) != expected.shape:
        r = np.broadcast_to(r, expected.shape)
    return r


# --- real, imag, angle -------------------------------------------------------------------------
def real(val):
    """``np.real`` of a real active value: the value itself (NumPy returns the same array)."""
    return val


def imag(val):
    """``np.imag`` of a real active value: read-only constant zeros, as NumPy's."""
    if np.ndim(val._v) == 0:
        return 0.0
    z = np.zeros(np.shape(val._v))
    z.flags.writeable = False
    return z


def angle(z, deg=False):
    """``np.angle`` of real active values: 0 or pi (times 180/pi), zero derivative.

    ``arctan2(0, x)``, i.e. pi where the sign bit is set (negative numbers, -0.0), 0
    elsewhere, NaN for NaN (times 180/pi with ``deg``). Piecewise constant: zero derivative
    everywhere (also at 0, where it jumps)."""
    a = where(z != z, math.nan, where(np.signbit(z), math.pi, 0.0))
    if deg:
        a = a * (180 / math.pi)
    return a


dispatch.FUNCTIONS.update({
    np.interp: interp, np.correlate: correlate, np.convolve: convolve, np.polyval: polyval,
    np.gradient: gradient, np.nan_to_num: nan_to_num, np.select: select, np.real: real,
    np.imag: imag, np.angle: angle,
})

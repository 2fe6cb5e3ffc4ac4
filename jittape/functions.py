"""NumPy functions on active values: indexing, shape, reductions, dot/matmul, where.

Each handler computes the primal with NumPy and records one op of :mod:`jittape.ops`;
:data:`FUNCTIONS` maps NumPy callables to handlers for ``Active.__array_function__``.
Index-based ops (indexing, transpose, broadcasting) share one primitive: a GATHER by flat
indices (a SLICE when the indices are a contiguous run), whose adjoint is a scatter-add.
Reshape is free: a C-ordered record keeps its values and gets a new shape.
"""

import math

import numpy as np

from .ops import codes as K
from .active import Active, Predicate, _new, _tape_of, const, guard
from .errors import NotDifferentiableError


def _gather(x, idx, value):
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
        return _new(cls, t, K.SLICE, x._i, -1, start, 0.0, value)
    return _new(cls, t, K.GATHER, x._i, -1, t.push_pool(flat), 0.0, value)


def _flat_index(x):
    return np.arange(np.size(x._v)).reshape(np.shape(x._v))


def getitem(x, key):
    """``x[key]`` for basic slices, integers, integer arrays, boolean masks, None, Ellipsis.

    As in NumPy, basic indexing that leaves an array gives a view (linked to ``x``, see
    :func:`jittape.composite.track`); an element (``x[i]`` of a vector) is a scalar copy, and
    advanced indexing a copy.
    """
    v = x._v
    if type(v) is float:
        raise TypeError("an active scalar cannot be indexed")
    if type(key) is int and v.ndim == 1:  # the scalar-loop fast path: x[i]
        n = v.shape[0]
        i = key + n if key < 0 else key
        if not 0 <= i < n:
            raise IndexError(f"index {key} is out of bounds for axis 0 with size {n}")
        z = float(v[i])
        return Active(x._t, x._t.push_scalar(K.SLICE, x._i, -1, i, 0.0, z), z)
    if type(key) is slice and v.ndim == 1:  # x[1:], x[:-1]: no index array needed
        start, stop, step = key.indices(v.shape[0])
        if step == 1 and stop > start:
            r = _new(Active, x._t, K.SLICE, x._i, -1, start, 0.0, v[start:stop])
            return composite.track(x, r, lambda p: p[start:stop])
    key = _concrete_key(key)
    return composite.track(x, _gather(x, _flat_index(x)[key], v[key]), lambda p: p[key])


def _concrete_key(key):
    """Replace predicates in an index by bool arrays (guarded); refuse active indices."""
    if isinstance(key, tuple):
        return tuple(_concrete_key(k) for k in key)
    if isinstance(key, Predicate):
        guard(key)
        return np.asarray(key._v, dtype=bool)
    if isinstance(key, Active):
        raise NotDifferentiableError(
            "An active float value cannot be an index: an index has no derivative. Use "
            "jittape.primal(x) to index by its current value (the tape then depends on it), "
            "or np.where / a boolean mask.")
    return key


def broadcast_to(x, shape):
    """``np.broadcast_to`` as a GATHER (its adjoint sums over the broadcast axes)."""
    shape = tuple(shape) if np.ndim(shape) else (int(shape),)
    if not isinstance(x, Active):
        return np.broadcast_to(x, shape)
    if np.shape(x._v) == shape:
        return x
    idx = np.broadcast_to(_flat_index(x), shape)
    return _gather(x, idx, np.broadcast_to(x._v, shape).copy())


def reshape(x, shape, order="C"):
    if order != "C":
        raise NotDifferentiableError("reshape of an active value supports order='C' only")
    z = np.reshape(x._v, shape)
    if isinstance(x, Predicate):
        return Predicate(x._t, x._i, bool(z) if z.ndim == 0 else z)
    return Active(x._t, x._i, float(z) if z.ndim == 0 else z)


def ravel(x, order="C"):
    return reshape(x, -1, order)


def transpose(x, axes=None):
    if x.ndim < 2 and axes is None:
        return x
    return _gather(x, np.transpose(_flat_index(x), axes), np.transpose(x._v, axes).copy())


# NumPy's view-producing functions: the recorded result is linked to its base when NumPy
# would return a view (jittape.composite.track). The functions above stay unlinked for
# jittape's internal use (their results never escape to user code as views).
def reshape_view(x, shape=None, order="C", *, newshape=None, copy=None):
    """``np.reshape``/``x.reshape``: free (same record); a view of ``x`` when NumPy's is."""
    shape = newshape if shape is None else shape
    r = reshape(x, shape, order)
    if copy:
        return r
    return composite.track(x, r, lambda p: np.reshape(p, shape))


def ravel_view(x, order="C"):
    """``np.ravel``/``x.ravel()``: a view when NumPy's is (``x.flatten()`` is a copy)."""
    return composite.track(x, reshape(x, -1, order), np.ravel)  # ravel != reshape(-1)


def transpose_view(x, axes=None):
    """``np.transpose``/``x.T``: a GATHER, linked to ``x`` as NumPy's view is."""
    return composite.track(x, transpose(x, axes), lambda p: np.transpose(p, axes))


def broadcast_to_view(x, shape, subok=False):
    """``np.broadcast_to``: a GATHER, a read-only view of ``x`` (as NumPy's)."""
    r = broadcast_to(x, shape)
    if not isinstance(x, Active):
        return r
    if r is x:  # NumPy's result is still a new (read-only) view
        r = reshape(x, np.shape(x._v))
    return composite.track(x, r, lambda p: np.broadcast_to(p, shape))


# --- reductions --------------------------------------------------------------------------
def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(a, ndim)
        out.append(a % ndim)
    return tuple(sorted(set(out)))


def _reduce(opc, npf, x, axis=None, keepdims=False, **kw):
    bad = {k: v for k, v in kw.items() if v is not None and k not in ("dtype",)}
    if bad or kw.get("dtype") not in (None, float, np.float64):
        raise NotDifferentiableError(
            f"np.{npf.__name__} with {sorted(bad) or 'dtype'} on active values is not supported")
    if not isinstance(x, Active):
        return npf(x, axis=axis, keepdims=keepdims)
    v = np.asarray(x._v)
    axes = _axes(axis, v.ndim)
    t = x._t
    if len(axes) == v.ndim:  # everything: one record over (1, size, 1)
        layout = (1, v.size, 1)
        r = _new(Active, t, opc, x._i, -1, t.push_pool(layout), 0.0,
                 npf(v) if v.size else _empty_reduce(npf))
    else:  # one record per axis, highest axis first so the others keep their numbers
        r, cur = x, v
        for ax in reversed(axes):
            shp = cur.shape
            layout = (int(np.prod(shp[:ax])), shp[ax], int(np.prod(shp[ax + 1:])))
            cur = npf(cur, axis=ax)
            r = _new(Active, t, opc, r._i, -1, t.push_pool(layout), 0.0, cur)
    if keepdims:
        r = reshape(r, npf(v, axis=axis, keepdims=True).shape)
    return r


def _empty_reduce(npf):
    if npf in (np.max, np.min):
        raise ValueError(f"zero-size array to reduction operation {npf.__name__} which has no "
                         f"identity")
    return npf(np.zeros(0))


def sum_(x, axis=None, dtype=None, out=None, keepdims=False, **kw):
    return _reduce(K.SUM, np.sum, x, axis, keepdims, dtype=dtype, out=out, **kw)


def mean(x, axis=None, dtype=None, out=None, keepdims=False, **kw):
    s = sum_(x, axis, dtype, out, keepdims, **kw)
    count = np.size(x._v) // max(np.size(s._v), 1)
    return s / float(count)


def prod(x, axis=None, dtype=None, out=None, keepdims=False, **kw):
    return _reduce(K.PROD, np.prod, x, axis, keepdims, dtype=dtype, out=out, **kw)


def max_(x, axis=None, out=None, keepdims=False, **kw):
    return _reduce(K.MAX, np.max, x, axis, keepdims, out=out, **kw)


def min_(x, axis=None, out=None, keepdims=False, **kw):
    return _reduce(K.MIN, np.min, x, axis, keepdims, out=out, **kw)


def _argext(opc, npf, x, axis=None, out=None, keepdims=False):
    """``np.argmax``/``np.argmin``: plain integers, guarded (control flow may use them)."""
    if out is not None:
        raise NotDifferentiableError(f"np.{npf.__name__}(out=...) on active values")
    v = np.asarray(x._v)
    z = npf(v, axis=axis, keepdims=keepdims)
    if axis is None:
        layout = (1, v.size, 1)
    else:
        ax = _axes(axis, v.ndim)[0]
        layout = (int(np.prod(v.shape[:ax])), v.shape[ax], int(np.prod(v.shape[ax + 1:])))
    t = x._t
    r = _new(Active, t, opc, x._i, -1, t.push_pool(layout), 0.0,
             z.astype(np.float64) if np.ndim(z) else float(z))
    guard(r)
    return z


def argmax(x, axis=None, out=None, keepdims=False):
    return _argext(K.ARGMAX, np.argmax, x, axis, out, keepdims)


def argmin(x, axis=None, out=None, keepdims=False):
    return _argext(K.ARGMIN, np.argmin, x, axis, out, keepdims)


# --- joining -----------------------------------------------------------------------------
def concatenate(arrays, axis=0, out=None, **kw):
    if out is not None or kw.get("dtype") is not None:
        raise NotDifferentiableError("np.concatenate(out=/dtype=) on active values")
    arrays = list(arrays)
    t = _tape_of(*arrays)
    if axis is None:
        arrays, axis = [np.ravel(a) for a in arrays], 0
    vals = [a._v if isinstance(a, Active) else np.asarray(a, dtype=np.float64) for a in arrays]
    z = np.concatenate(vals, axis=axis)
    axis = axis % z.ndim
    parts = [a if isinstance(a, Active) else const(t, a) for a in arrays]
    outer = int(np.prod(z.shape[:axis]))
    layout = [len(parts), outer]
    for p, pv in zip(parts, vals):
        layout += [p._i, int(np.prod(pv.shape[axis:]))]
    return _new(Active, t, K.CONCAT, parts[0]._i, -1, t.push_pool(layout), 0.0, z)


def stack(arrays, axis=0, out=None, **kw):
    arrays = list(arrays)
    shape = np.shape(arrays[0]._v if isinstance(arrays[0], Active) else arrays[0])
    axis = axis % (len(shape) + 1)
    new = shape[:axis] + (1,) + shape[axis:]
    return concatenate([reshape(a, new) if isinstance(a, Active) else np.reshape(a, new)
                        for a in arrays], axis=axis, out=out, **kw)


# --- selection ---------------------------------------------------------------------------
def where(cond, x=None, y=None):
    if x is None and y is None:
        raise NotDifferentiableError(
            "np.where(cond) with one argument returns indices, which have no derivative. "
            "Use np.where(cond, a, b), or np.nonzero(jittape.primal(cond)).")
    t = _tape_of(cond, x, y)
    from .active import _as_node
    cv = cond._v if isinstance(cond, Active) else np.asarray(cond, dtype=bool)
    xv = x._v if isinstance(x, Active) else x
    yv = y._v if isinstance(y, Active) else y
    z = np.where(cv, xv, yv).astype(np.float64)
    shape = z.shape
    cn, xn, yn = (_as_node(t, q, shape) for q in (cond, x, y))
    return _new(Active, t, K.WHERE, xn._i, yn._i, cn._i, 0.0, z if shape else float(z))


# --- linear algebra ----------------------------------------------------------------------
def matmul(x, y):
    """``x @ y`` with NumPy's matmul rules: 1-D operands, 2-D, and stacks of matrices with
    broadcast batch dimensions (broadcast operands are gathered to the full batch first)."""
    t = _tape_of(x, y)
    xv = x._v if isinstance(x, Active) else np.asarray(x, dtype=np.float64)
    yv = y._v if isinstance(y, Active) else np.asarray(y, dtype=np.float64)
    if np.ndim(xv) == 0 or np.ndim(yv) == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions "
                         "(use * for scalars)")
    z = np.matmul(xv, yv)  # NumPy checks the shapes
    xn = x if isinstance(x, Active) else const(t, xv)
    yn = y if isinstance(y, Active) else const(t, yv)
    if xv.ndim <= 2 and yv.ndim <= 2:
        m = xv.shape[0] if xv.ndim == 2 else 1
        n = yv.shape[1] if yv.ndim == 2 else 1
        layout = (m, xv.shape[-1], n, 1)
    else:  # (..., m, k) @ (..., k, n): vectors become matrices, batch dims broadcast
        x2 = xv if xv.ndim > 1 else xv[None, :]
        y2 = yv if yv.ndim > 1 else yv[:, None]
        batch = np.broadcast_shapes(x2.shape[:-2], y2.shape[:-2])
        xn = broadcast_to(reshape(xn, x2.shape), batch + x2.shape[-2:])
        yn = broadcast_to(reshape(yn, y2.shape), batch + y2.shape[-2:])
        layout = (x2.shape[-2], x2.shape[-1], y2.shape[-1], int(np.prod(batch)))
    return _new(Active, t, K.MATMUL, xn._i, yn._i, t.push_pool(layout), 0.0,
                z if np.ndim(z) else float(z))


def dot(x, y, out=None):
    """``np.dot``: a product for 0-D operands, matmul for operands of at most 2 dimensions,
    otherwise a sum over the last axis of ``x`` and the second-to-last of ``y`` (the last if
    ``y`` is 1-D), result shape ``x.shape[:-1] + y.shape[:-2] + y.shape[-1:]`` (not matmul's
    batch broadcasting), recorded as a tensordot (one 2-D MATMUL)."""
    if out is not None:
        raise NotDifferentiableError("np.dot(out=...) on active values: in-place output is "
                                     "not recorded; assign the result")
    xs = np.shape(x._v if isinstance(x, Active) else x)
    ys = np.shape(y._v if isinstance(y, Active) else y)
    if len(xs) == 0 or len(ys) == 0:
        return x * y
    yax = len(ys) - 2 if len(ys) >= 2 else 0
    if xs[-1] != ys[yax]:
        raise ValueError(f"shapes {xs} and {ys} not aligned: {xs[-1]} (dim {len(xs) - 1}) != "
                         f"{ys[yax]} (dim {yax})")
    if len(xs) <= 2 and len(ys) <= 2:
        return matmul(x, y)
    return composite.tensordot(x, y, axes=([len(xs) - 1], [yax]))


# --- scans and sorting -------------------------------------------------------------------
def _along_axis(x, axis):
    """``(x, (outer, n, inner), value, axis)`` for an op along ``axis`` (None: flattened)."""
    if axis is None:
        x, axis = ravel(x), 0
    v = np.asarray(x._v)
    if v.ndim == 0:
        x, v, axis = reshape(x, (1,)), v.reshape(1), 0
    ax = _axes(axis, v.ndim)[0]
    layout = (int(np.prod(v.shape[:ax])), v.shape[ax], int(np.prod(v.shape[ax + 1:])))
    return x, layout, v, ax


def _scan(opc, npf, x, axis, dtype, out):
    if out is not None or dtype not in (None, float, np.float64):
        raise NotDifferentiableError(f"np.{npf.__name__}(out=/dtype=) on active values")
    x, layout, v, ax = _along_axis(x, axis)
    t = x._t
    return _new(Active, t, opc, x._i, -1, t.push_pool(layout), 0.0, npf(v, axis=ax))


def cumsum(x, axis=None, dtype=None, out=None):
    return _scan(K.CUMSUM, np.cumsum, x, axis, dtype, out)


def cumprod(x, axis=None, dtype=None, out=None):
    return _scan(K.CUMPROD, np.cumprod, x, axis, dtype, out)


def sort(x, axis=-1, kind=None, order=None, stable=None):
    """``np.sort``: one SORT record (values, then the permutation) and a slice of it.

    On replay the permutation is recomputed, so the adjoint follows the new order.
    """
    if order is not None:
        raise NotDifferentiableError("np.sort(order=...) (structured arrays) on active values")
    x, layout, v, ax = _along_axis(x, axis)
    t = x._t
    perm = np.argsort(v, axis=ax, kind="stable")
    z = np.take_along_axis(v, perm, axis=ax)
    both = np.concatenate([z.ravel(), perm.ravel().astype(np.float64)])
    rec = _new(Active, t, K.SORT, x._i, -1, t.push_pool(layout), 0.0, both)
    return reshape(_new(Active, t, K.SLICE, rec._i, -1, 0, 0.0, z.ravel()), z.shape)


def clip(x, a_min=None, a_max=None, out=None, **kw):
    """``np.clip`` as maximum/minimum (active or constant bounds; NaN propagates)."""
    if out is not None:
        raise NotDifferentiableError("np.clip(out=...) on active values")
    a_min = kw.pop("min", a_min)
    a_max = kw.pop("max", a_max)
    if kw:
        raise NotDifferentiableError(f"np.clip with {sorted(kw)} on active values")
    from .active import binary
    if a_min is not None:
        x = binary(K.MAXIMUM, x, a_min)
    if a_max is not None:
        x = binary(K.MINIMUM, x, a_max)
    return x


# --- dense linear algebra ------------------------------------------------------------------
def _square(name, a):
    v = a._v if isinstance(a, Active) else np.asarray(a, dtype=np.float64)
    if np.ndim(v) != 2 or v.shape[0] != v.shape[1]:
        if np.ndim(v) > 2:
            raise NotDifferentiableError(
                f"np.linalg.{name} of a stack of matrices (shape {np.shape(v)}) is not "
                f"supported; loop over the matrices")
        raise np.linalg.LinAlgError(f"np.linalg.{name}: expected a square matrix, got shape "
                                    f"{np.shape(v)}")
    return v


def _linalg(opc, a, b=None, value=None, pool=None):
    t = _tape_of(a, b)
    an = a if isinstance(a, Active) else const(t, a)
    bn = (b if isinstance(b, Active) else const(t, b)) if b is not None else None
    return _new(Active, t, opc, an._i, -1 if bn is None else bn._i, t.push_pool(pool), 0.0,
                value)


def inv(a):
    v = _square("inv", a)
    return _linalg(K.INV, a, value=np.linalg.inv(v), pool=(v.shape[0], 0))


def solve(a, b):
    v = _square("solve", a)
    bv = b._v if isinstance(b, Active) else np.asarray(b, dtype=np.float64)
    z = np.linalg.solve(v, bv)
    if np.ndim(bv) not in (1, 2):
        raise NotDifferentiableError("np.linalg.solve with a stacked right side is not "
                                     "supported")
    m = 1 if np.ndim(bv) == 1 else bv.shape[1]
    return _linalg(K.SOLVE, a, b, value=z, pool=(v.shape[0], m))


def slogdet(a):
    """``(sign, logabsdet)``: both active (sign has no derivative; it replays)."""
    v = _square("slogdet", a)
    sign, logdet = np.linalg.slogdet(v)
    rec = _linalg(K.SLOGDET, a, value=np.array([sign, logdet]), pool=(v.shape[0], 0))
    return getitem(rec, 0), getitem(rec, 1)


def det(a):
    sign, logdet = slogdet(a)
    return sign * np.exp(logdet)


def _read_triangle(a, uplo):
    """The symmetric matrix that a LAPACK routine reading one triangle of ``a`` sees.

    ``uplo`` 'L': ``S[i, j] = a[max(i, j), min(i, j)]``, 'U' the mirror image; one GATHER,
    whose adjoint (a scatter-add) lands on the triangle that is read only: the other one
    does not change the result, and its derivative is 0, as for NumPy's routine.
    """
    n = np.shape(a._v)[0]
    i, j = np.indices((n, n))
    lo, hi = np.maximum(i, j), np.minimum(i, j)
    idx = lo * n + hi if uplo == "L" else hi * n + lo
    return composite._take(a, idx)


def _uplo(name, UPLO):
    u = UPLO.upper() if isinstance(UPLO, str) else UPLO
    if u not in ("L", "U"):
        raise ValueError(f"np.linalg.{name}: UPLO argument must be 'L' or 'U'")
    return u


def cholesky(a, upper=False):
    """``np.linalg.cholesky``: reads the lower triangle of ``a`` (the upper one with
    ``upper=True``, which returns the upper factor U, ``a = U.T @ U``), like NumPy."""
    v = _square("cholesky", a)
    z = np.linalg.cholesky(v, upper=True) if upper else np.linalg.cholesky(v)
    s = _read_triangle(a, "U" if upper else "L")
    low = np.ascontiguousarray(z.T) if upper else z
    r = _linalg(K.CHOLESKY, s, value=low, pool=(v.shape[0], 0))
    return transpose(r) if upper else r


def eigh(a, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of the symmetric matrix whose lower (UPLO='L',
    the default) or upper (UPLO='U') triangle is that of ``a``; the other triangle is not
    read, as in NumPy. Eigenvector adjoints are defined where the eigenvalues are distinct."""
    uplo = _uplo("eigh", UPLO)
    v = _square("eigh", a)
    n = v.shape[0]
    w, vec = np.linalg.eigh(v, UPLO=uplo)  # NumPy's own values
    rec = _linalg(K.EIGH, _read_triangle(a, uplo), value=np.concatenate([w, vec.ravel()]),
                  pool=(n, 0))
    t = rec._t
    wr = _new(Active, t, K.SLICE, rec._i, -1, 0, 0.0, w)
    vr = reshape(_new(Active, t, K.SLICE, rec._i, -1, n, 0.0, vec.ravel()), (n, n))
    return np.linalg._linalg.EighResult(wr, vr)


def eigvalsh(a, UPLO="L"):
    """The eigenvalues of :func:`eigh` (same triangle rule)."""
    return eigh(a, UPLO)[0]


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``scipy.special.logsumexp`` for active values: ``m + log(sum(b exp(a - m)))``.

    ``m`` is the maximum along ``axis`` (0 where it is not finite), recorded as a
    stop-gradient value: it cancels in the derivative, and a replay recomputes it, so the
    shift keeps ``exp`` in range at every point.
    """
    if return_sign:
        raise NotDifferentiableError("scipy.special.logsumexp(return_sign=True) on active "
                                     "values")
    from .active import unary
    m = np.max(a, axis=axis, keepdims=True)
    if isinstance(m, Active):
        m = unary(K.STOPGRAD, m)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(a - m)
    if b is not None:
        e = e * b
    out = np.log(np.sum(e, axis=axis, keepdims=keepdims))
    if not keepdims:
        m = np.reshape(m, np.shape(out))
    return out + m


def round_(x, decimals=0, out=None):
    """``np.round``: RINT (zero derivative), scaled when ``decimals`` is not 0."""
    from .active import unary
    if out is not None:
        raise NotDifferentiableError("np.round(out=...) on active values")
    if decimals == 0:
        return unary(K.RINT, x)
    scale = 10.0 ** decimals
    return unary(K.RINT, x * scale) / scale


def sinc(x):
    """``np.sinc``: sin(pi x) / (pi x), 1 at 0 (np.where keeps 0/0 out of the derivative)."""
    px = x * math.pi
    return where(x == 0.0, 1.0, np.sin(px) / where(x == 0.0, 1.0, px))


def _shape_query(f):
    return lambda x, *a, **kw: f(x._v if isinstance(x, Active) else x, *a, **kw)


FUNCTIONS = {
    np.sum: sum_, np.mean: mean, np.prod: prod, np.max: max_, np.amax: max_, np.min: min_,
    np.amin: min_, np.reshape: reshape_view, np.ravel: ravel_view, np.transpose: transpose_view,
    np.broadcast_to: broadcast_to_view, np.concatenate: concatenate, np.stack: stack,
    np.where: where, np.dot: dot, np.matmul: matmul, np.argmax: argmax, np.argmin: argmin,
    np.cumsum: cumsum, np.cumprod: cumprod, np.sort: sort, np.clip: clip,
    np.linalg.inv: inv, np.linalg.solve: solve, np.linalg.slogdet: slogdet,
    np.linalg.det: det, np.linalg.cholesky: cholesky, np.linalg.eigh: eigh,
    np.linalg.eigvalsh: eigvalsh, np.round: round_, np.around: round_, np.sinc: sinc,
    np.shape: _shape_query(np.shape), np.ndim: _shape_query(np.ndim),
    np.size: _shape_query(np.size),
}

from . import composite  # noqa: E402,F401  (registers more handlers in FUNCTIONS)

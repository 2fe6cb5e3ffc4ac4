"""NumPy's functions on active complex values, each applied to the real parts.

Structural functions (``reshape``, ``transpose``, ``concatenate``, indexing, ...) act on the
real and imaginary parts alike; linear ones (``sum``, ``mean``, ``cumsum``, ``trace``) too;
products (``dot``, ``matmul``, ``vdot``, ``einsum``, ...) are four real products,
``(A + iB)(C + iD) = (AC - BD) + i(AD + BC)``, a constant zero part skipped. See
:mod:`jittape.numpy.complex_values` for the representation.
"""

import numpy as np

from .complex_values import (FUNCTIONS, ComplexActive, add, c_angle, c_conj, is_zero, make, mul,
                             parts, sub)


def _each(f):
    """``f`` applied to both parts of its first argument (other arguments unchanged)."""
    def handler(z, *args, **kwargs):
        a, b = parts(z)
        return make(f(a, *args, **kwargs), 0.0 if is_zero(b) else f(b, *args, **kwargs))
    handler.__name__ = f.__name__
    return handler


def _sequence(f):
    """``f`` of a sequence of arrays (``concatenate``, ``stack``, ...), on each part."""
    def handler(arrays, *args, **kwargs):
        ps = [parts(a) for a in arrays]
        re = [p[0] for p in ps]
        im = [p[1] if not is_zero(p[1]) else np.zeros(np.shape(p[0])) for p in ps]
        return make(f(re, *args, **kwargs), f(im, *args, **kwargs))
    handler.__name__ = f.__name__
    return handler


def _product(f):
    """A bilinear ``f`` (``dot``, ``matmul``, ...) of complex operands: four real products."""
    def handler(x, y, *args, **kwargs):
        (a, b), (c, d) = parts(x), parts(y)

        def p(u, v):
            return 0.0 if is_zero(u) or is_zero(v) else f(u, v, *args, **kwargs)
        return make(sub(p(a, c), p(b, d)), add(p(a, d), p(b, c)))
    handler.__name__ = f.__name__
    return handler


def vdot(x, y):
    """``np.vdot``: ``sum(conj(x) * y)`` over the flattened arrays."""
    return np.sum(np.ravel(c_conj(x)) * np.ravel(make(*parts(y))))


def einsum(subscripts, *operands, **kwargs):
    """``np.einsum`` of two operands (complex or real), as four real contractions."""
    if len(operands) != 2:
        from .._base.errors import NotDifferentiableError
        raise NotDifferentiableError("np.einsum of active complex values: two operands only; "
                                     "contract the others first")
    return _product(lambda u, v: np.einsum(subscripts, u, v, **kwargs))(*operands)


def norm(x, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm`` of a complex vector or matrix: the 2-norm / Frobenius norm only."""
    if ord not in (None, 2, "fro") or (ord == 2 and np.ndim(x) != 1 and axis is None):
        from .._base.errors import NotDifferentiableError
        raise NotDifferentiableError(f"np.linalg.norm(ord={ord!r}) of an active complex value; "
                                     f"the 2-norm of vectors and Frobenius norm are supported")
    a, b = parts(x)
    return np.sqrt(np.sum(add(mul(a, a), mul(b, b)), axis=axis, keepdims=keepdims))


def where(cond, x=None, y=None):
    if x is None:
        return np.nonzero(cond)
    (a, b), (c, d) = parts(x), parts(y)
    return make(np.where(cond, a, c), np.where(cond, b, d))


def _real(z):
    return z.real if isinstance(z, ComplexActive) else parts(z)[0]


def _imag(z):
    b = parts(z)[1]
    if is_zero(b):
        return np.zeros(np.shape(parts(z)[0]))
    return z.imag if isinstance(z, ComplexActive) else b


# (ufuncs, np.abs and np.conj among them, are complex_values.UFUNCS': NumPy asks
# __array_ufunc__ for them, never __array_function__)
FUNCTIONS.update({
    np.real: _real, np.imag: _imag, np.angle: c_angle,
    np.iscomplexobj: lambda z: True, np.isrealobj: lambda z: False,
    np.iscomplex: lambda z: np.imag(z) != 0.0, np.isreal: lambda z: np.imag(z) == 0.0,
    np.shape: lambda z: z.shape, np.ndim: lambda z: z.ndim, np.size: lambda z: z.size,
    np.result_type: lambda *a: np.result_type(*[np.complex128 if isinstance(v, ComplexActive)
                                               else v for v in a]),
    np.vdot: vdot, np.einsum: einsum, np.linalg.norm: norm, np.where: where,
    np.zeros_like: lambda z, *a, **k: np.zeros(z.shape, dtype=np.complex128),
    np.ones_like: lambda z, *a, **k: np.ones(z.shape, dtype=np.complex128),
})
for _f in (np.reshape, np.ravel, np.transpose, np.swapaxes, np.moveaxis, np.expand_dims,
           np.squeeze, np.flip, np.roll, np.broadcast_to, np.diagonal, np.take, np.tile,
           np.repeat, np.sum, np.mean, np.cumsum, np.trace, np.copy, np.atleast_1d,
           np.atleast_2d, np.diff, np.fliplr, np.flipud, np.rot90, np.matrix_transpose,
           np.triu, np.tril, np.pad):
    FUNCTIONS[_f] = _each(_f)
for _f in (np.concatenate, np.stack, np.hstack, np.vstack, np.column_stack, np.dstack):
    FUNCTIONS[_f] = _sequence(_f)
for _f in (np.dot, np.matmul, np.inner, np.outer, np.tensordot, np.kron):
    FUNCTIONS[_f] = _product(_f)
_matmul = FUNCTIONS[np.matmul]
ComplexActive.__matmul__ = lambda self, y: _matmul(self, y)
ComplexActive.__rmatmul__ = lambda self, y: _matmul(y, self)

"""Complex values on a real tape: an active complex array is a pair of real parts.

:class:`ComplexActive` holds its real and imaginary parts, each an active float64 value or a
real constant of the same shape. Every complex operation is written with the real
operations of the op table (``(a + ib)(c + id) = (ac - bd) + i(ad + bc)``, ``exp(a + ib) =
e^a (cos b + i sin b)``, ...), so the tape stays real and every sweep (reverse, tangent,
second order, replay, the compiler) differentiates complex code unchanged, each rule
already checked in its real form. This is how complex AD reduces to real AD when a complex
number is seen as a point of R^2 (Griewank & Walther, "Evaluating Derivatives", 2nd ed.,
2008, sec. 3.4; JAX and PyTorch differentiate the same R-linear maps).

A complex value appears where an active value meets a complex constant (``x + 1j``,
``x * np.exp(2j * np.pi * k / n)``: :func:`jittape.numpy.active.binary` hands the operation
here), from ``x.astype(complex)``, from the FFTs of :mod:`jittape.numpy.fft`, and from a
complex argument of ``grad``/``jvp``/``vjp`` (:mod:`jittape.api.complex_args`). ``z.real``,
``z.imag``, ``np.abs(z)`` and ``np.angle(z)`` are real active values again.

Primal values follow NumPy's complex formulas; they agree with NumPy's to rounding for
finite values. NumPy's special-value rules (C99 Annex G: ``inf`` and ``nan`` parts) are not
reproduced: where a part is infinite or NaN the values may differ.
"""

import numpy as np

from . import dispatch
from .active import Active
from .._base.errors import ActiveConversionError, NotDifferentiableError

_C128 = np.dtype(np.complex128)


def is_zero(v):
    """Whether the part ``v`` is the constant 0.0 (a part with no record)."""
    return type(v) is float and v == 0.0


def add(p, q):
    """``p + q`` of real parts, a constant 0.0 skipped (no record)."""
    return p if is_zero(q) else q if is_zero(p) else p + q


def sub(p, q):
    return p if is_zero(q) else -q if is_zero(p) else p - q


def mul(p, q):
    return 0.0 if is_zero(p) or is_zero(q) else p * q


def parts(v):
    """``(real, imaginary)`` of an operand: a complex value, an active or real constant
    (imaginary part 0.0), a complex constant (its NumPy parts)."""
    if type(v) is ComplexActive:
        return v.re, v.im
    if isinstance(v, Active):
        return v, 0.0
    if type(v) is complex or np.iscomplexobj(v):
        a = np.asarray(v)
        return (a.real.copy(), a.imag.copy()) if a.ndim else (float(a.real), float(a.imag))
    if type(v) is np.ndarray and v.dtype == object:
        raise NotDifferentiableError("an object array in a complex operation: build complex "
                                     "arrays with np.stack or from their real parts")
    return (v if isinstance(v, float) else np.asarray(v, dtype=np.float64)), 0.0


def _active(v):
    return isinstance(v, Active)


class ComplexActive:
    """An active complex128 value: ``re + 1j * im``, each part an active float64 value or a
    real constant. Shapes and indexing follow NumPy's; views (``z[1:]``, ``z.T``) are views
    of both parts, so writes through them reach ``z`` as in NumPy."""

    __slots__ = ("re", "im", "__weakref__")
    __array_priority__ = 1001.0  # above Active's: z + x and x + z come here

    def __init__(self, re, im):
        shape = np.broadcast_shapes(np.shape(re), np.shape(im))
        if np.shape(re) != shape:
            re = re + np.zeros(shape)
        if np.shape(im) != shape:
            im = im + np.zeros(shape)
        self.re, self.im = re, im

    # --- NumPy's array attributes ---
    shape = property(lambda self: np.shape(self.re))
    ndim = property(lambda self: np.ndim(self.re))
    size = property(lambda self: np.size(self.re))
    dtype = property(lambda self: _C128)
    # NumPy's z.real and z.imag are strided views of z's buffer (a ravel copies them)
    real = property(lambda self: dispatch.OPERATORS["complex_part"](self.re))
    imag = property(lambda self: dispatch.OPERATORS["complex_part"](self.im))
    T = property(lambda self: ComplexActive(np.transpose(self.re), np.transpose(self.im)))

    def __len__(self):
        return len(self.re)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __repr__(self):
        return f"ComplexActive(re={self.re!r}, im={self.im!r})"

    def conj(self):
        return c_conj(self)

    conjugate = conj

    def copy(self):
        return ComplexActive(+self.re if _active(self.re) else np.copy(self.re),
                             +self.im if _active(self.im) else np.copy(self.im))

    def astype(self, dtype, copy=True):
        if np.dtype(dtype) == _C128:
            return self.copy() if copy else self
        raise NotDifferentiableError(
            f"astype({dtype}) of an active complex value: NumPy would discard the imaginary "
            f"part (ComplexWarning); take z.real or np.abs(z) explicitly")

    def reshape(self, *shape, order="C"):
        return np.reshape(self, shape[0] if len(shape) == 1 else shape, order=order)

    def ravel(self, order="C"):
        return np.ravel(self, order=order)

    def sum(self, axis=None, keepdims=False):
        return np.sum(self, axis=axis, keepdims=keepdims)

    def mean(self, axis=None, keepdims=False):
        return np.mean(self, axis=axis, keepdims=keepdims)

    def __getitem__(self, key):
        if isinstance(key, ComplexActive):
            raise IndexError("a complex array cannot be an index")
        return ComplexActive(self.re[key], self.im[key])

    def __setitem__(self, key, value):
        """``z[key] = w``: both parts written (a constant part becomes a CONST record)."""
        vr, vi = parts(value)
        for name, v in (("re", vr), ("im", vi)):
            part = getattr(self, name)
            if not _active(part):
                part = _as_record(self, part)
                setattr(self, name, part)
            part[key] = v

    # --- conversions that would drop the derivative ---
    def _lost(self, what):
        raise ActiveConversionError(
            f"{what} of an active complex value would drop its derivative. Keep computing "
            f"with it, or take its parts z.real and z.imag (active real values).")

    def __complex__(self):
        self._lost("complex()")

    def __float__(self):
        self._lost("float()")

    def __array__(self, dtype=None, copy=None):
        self._lost("np.asarray()")

    def __bool__(self):
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous.")
        return bool(self != 0.0)

    def __hash__(self):
        return id(self)

    # --- NumPy's protocols ---
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        handler = _ufunc(ufunc) if method == "__call__" and not kwargs else None
        if handler is None:
            supported = sorted(u.__name__ for u in UFUNCS) + sorted(
                f"scipy.special.{n}" for n in SCIPY_UFUNCS)
            raise NotDifferentiableError(
                f"{dispatch.ufunc_name(ufunc)} (method {method!r}, keywords {sorted(kwargs)}) "
                f"of an active complex value is not supported; complex values support "
                f"{', '.join(supported)}.")
        return handler(*inputs)

    def __array_function__(self, func, types, args, kwargs):
        handler = FUNCTIONS.get(func)
        if handler is None:
            raise NotDifferentiableError(
                f"{getattr(func, '__module__', 'numpy')}.{func.__name__} of an active complex "
                f"value is not supported: jittape computes with complex values through their "
                f"real parts (z.real, z.imag); compose the function from those, or see "
                f"`python -m jittape ops` for what complex values support.")
        return handler(*args, **kwargs)


def _as_record(z, v):
    """The constant part ``v`` of ``z`` as a CONST record on ``z``'s tape."""
    from .active import const
    other = z.re if _active(z.re) else z.im
    return const(other._t, v)


def make(re, im):
    """``re + 1j im`` as a complex value (real parts: active or constant)."""
    return ComplexActive(re, im)


# --- arithmetic on parts -----------------------------------------------------------------------
def c_add(x, y):
    (a, b), (c, d) = parts(x), parts(y)
    return make(add(a, c), add(b, d))


def c_sub(x, y):
    (a, b), (c, d) = parts(x), parts(y)
    return make(sub(a, c), sub(b, d))


def c_mul(x, y):
    (a, b), (c, d) = parts(x), parts(y)
    return make(sub(mul(a, c), mul(b, d)), add(mul(a, d), mul(b, c)))


def c_div(x, y):
    """``x / y = x conj(y) / |y|^2``."""
    (a, b), (c, d) = parts(x), parts(y)
    den = add(mul(c, c), mul(d, d))
    return make(add(mul(a, c), mul(b, d)) / den, sub(mul(b, c), mul(a, d)) / den)


def c_pow(x, y):
    """``x ** y``: repeated products for small integer exponents (exact, also at 0), else
    ``exp(y log x)``."""
    if isinstance(y, (int, float, np.integer, np.floating)) and not isinstance(y, bool) \
            and float(y).is_integer() and abs(y) <= 16:
        n, result, base = int(abs(y)), None, x
        while n:
            if n & 1:
                result = base if result is None else c_mul(result, base)
            base, n = c_mul(base, base), n >> 1
        result = make(1.0, 0.0) if result is None else result
        return c_div(1.0, result) if y < 0 else result
    return c_exp(c_mul(y, c_log(x)))


def c_conj(x):
    a, b = parts(x)
    return make(a, sub(0.0, b))


def c_neg(x):
    a, b = parts(x)
    return make(sub(0.0, a), sub(0.0, b))


def c_abs(x):
    a, b = parts(x)
    return np.hypot(a, b)


def c_angle(x, deg=False):
    a, b = parts(x)
    r = np.arctan2(b, a)
    return r * (180.0 / np.pi) if deg else r


def c_exp(x):
    a, b = parts(x)
    e = np.exp(a)
    return make(mul(e, np.cos(b)), mul(e, np.sin(b)))


def c_log(x):
    a, b = parts(x)
    return make(np.log(np.hypot(a, b)), np.arctan2(b, a))


def c_sqrt(x):
    """The principal root of ``a + ib``, ``r = |z|``: for ``a >= 0``, ``t = sqrt((r + a) /
    2)``, ``t + i b / (2t)``; else ``t = sqrt((r - a) / 2)``, ``|b| / (2t) + i copysign(t,
    b)`` (Kahan's stable form). ``t`` is positive wherever ``z != 0``, so the derivative is
    finite off the branch cut, also on the real axis (``b = 0``), where the naive
    ``sqrt((r - a) / 2)`` has an infinite one."""
    a, b = parts(x)
    r = np.hypot(a, b)
    right = a >= 0.0
    t = np.sqrt(np.where(right, r + a, r - a) * 0.5)
    return make(np.where(right, t, np.abs(b) / (2.0 * t)),
                np.where(right, b / (2.0 * t), np.copysign(t, b)))


def c_sin(x):
    a, b = parts(x)
    return make(mul(np.sin(a), np.cosh(b)), mul(np.cos(a), np.sinh(b)))


def c_cos(x):
    a, b = parts(x)
    return make(mul(np.cos(a), np.cosh(b)), sub(0.0, mul(np.sin(a), np.sinh(b))))


def c_sinh(x):
    a, b = parts(x)
    return make(mul(np.sinh(a), np.cos(b)), mul(np.cosh(a), np.sin(b)))


def c_cosh(x):
    a, b = parts(x)
    return make(mul(np.cosh(a), np.cos(b)), mul(np.sinh(a), np.sin(b)))


def _compare(equal):
    def compare(x, y):
        (a, b), (c, d) = parts(x), parts(y)
        return (a == c) & (b == d) if equal else (a != c) | (b != d)
    return compare


def _real_predicate(test):
    def predicate(x):
        a, b = parts(x)
        return test(a, b)
    return predicate


UFUNCS = {
    np.add: c_add, np.subtract: c_sub, np.multiply: c_mul, np.divide: c_div,
    np.power: c_pow, np.float_power: c_pow, np.negative: c_neg, np.positive: lambda x: +x,
    np.conjugate: c_conj, np.absolute: c_abs, np.exp: c_exp,
    np.log: c_log, np.log2: lambda x: c_mul(c_log(x), 1.0 / np.log(2.0)),
    np.log10: lambda x: c_mul(c_log(x), 1.0 / np.log(10.0)), np.sqrt: c_sqrt,
    np.square: lambda x: c_mul(x, x), np.reciprocal: lambda x: c_div(1.0, x),
    np.sin: c_sin, np.cos: c_cos, np.tan: lambda x: c_div(c_sin(x), c_cos(x)),
    np.sinh: c_sinh, np.cosh: c_cosh, np.tanh: lambda x: c_div(c_sinh(x), c_cosh(x)),
    np.matmul: lambda x, y: FUNCTIONS[np.matmul](x, y),
    np.equal: _compare(True), np.not_equal: _compare(False),
    np.isfinite: _real_predicate(lambda a, b: np.isfinite(a) & np.isfinite(b)),
    np.isnan: _real_predicate(lambda a, b: np.isnan(a) | np.isnan(b)),
    np.isinf: _real_predicate(lambda a, b: np.isinf(a) | np.isinf(b)),
}

for _name, _ufunc in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                      ("truediv", np.divide), ("pow", np.power)):
    _f = UFUNCS[_ufunc]
    setattr(ComplexActive, f"__{_name}__", lambda self, y, _f=_f: _f(self, y))
    setattr(ComplexActive, f"__r{_name}__", lambda self, y, _f=_f: _f(y, self))
ComplexActive.__neg__ = c_neg
ComplexActive.__pos__ = lambda self: ComplexActive(self.re, self.im)
ComplexActive.__abs__ = c_abs
ComplexActive.__eq__ = _compare(True)
ComplexActive.__ne__ = _compare(False)

#: NumPy function -> handler of complex values (filled by :mod:`.complex_functions`).
FUNCTIONS = {}
#: SciPy's ufuncs of complex values, by name in ``scipy.special`` -> handler (filled by
#: :mod:`.complex_special`; resolved by name, so that jittape never imports SciPy for them).
SCIPY_UFUNCS = {}


def _ufunc(ufunc):
    """The complex values' handler of ``ufunc`` (NumPy's, or SciPy's by name), or None."""
    handler = UFUNCS.get(ufunc)
    if handler is None and getattr(ufunc, "__name__", None) in SCIPY_UFUNCS:
        from .._base.imports import loaded
        if getattr(loaded("scipy.special"), ufunc.__name__, None) is ufunc:
            handler = SCIPY_UFUNCS[ufunc.__name__]
    return handler


def complex_binary(opc, x, y):
    """The elementwise binary op ``opc`` of an active value and a complex operand (what
    :func:`jittape.numpy.active.binary` hands over)."""
    from ..optable.table import codes as K
    f = {K.ADD: c_add, K.SUB: c_sub, K.MUL: c_mul, K.DIV: c_div, K.POW: c_pow}.get(opc)
    if f is None:
        from ..optable.table import OPS
        raise NotDifferentiableError(
            f"{OPS[opc].name} of an active value and a complex value is not supported; "
            f"complex values support + - * / ** and the functions of "
            f"`python -m jittape ops`")
    return f(x, y)


def complex_call(func, args, kwargs):
    """NumPy function or ufunc ``func`` called with an active value and a complex argument
    (a constant or an active complex value)."""
    ufunc = isinstance(func, np.ufunc)
    handler = _ufunc(func) if ufunc and not kwargs else FUNCTIONS.get(func)
    if handler is None:
        name = dispatch.ufunc_name(func) if ufunc else \
            f"{getattr(func, '__module__', None) or 'numpy'}.{func.__name__}"
        raise NotDifferentiableError(
            f"{name} of active values with complex arguments is not "
            f"supported; compute with the real parts (z.real, z.imag) instead")
    return handler(*args, **kwargs)


dispatch.OPERATORS["complex_binary"] = complex_binary
dispatch.OPERATORS["complex_call"] = complex_call
dispatch.COMPLEX = ComplexActive

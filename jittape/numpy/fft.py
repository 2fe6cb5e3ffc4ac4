"""``np.fft.fft``, ``ifft``, ``rfft`` and ``irfft`` of active values, as DFT matrix products.

The discrete Fourier transform along an axis is the product with ``W[k, t] =
exp(-2 pi i k t / n) = C - i S`` (NumPy's definition, ``numpy.fft`` module docs), so for
``z = a + ib``: ``Re(W z) = C a + S b``, ``Im(W z) = C b - S a``. Recorded as real matrix
products, the transforms get exact derivatives in every mode (the adjoint of a DFT is the
conjugate DFT, which the products' rules give). The cost is ``O(n^2)`` per transform
against NumPy's ``O(n log n)``; values agree with NumPy's to rounding (another summation
order). ``n`` (crop or zero-pad), ``axis`` and ``norm`` (``"backward"``, ``"ortho"``,
``"forward"``) are NumPy's. ``irfft`` reads the first ``n // 2 + 1`` coefficients and, as
NumPy's, ignores the imaginary parts of the zero-frequency term and (``n`` even) of the
Nyquist term.
"""

import numpy as np

from . import dispatch
from .complex_values import FUNCTIONS as COMPLEX_FUNCTIONS
from .complex_values import ComplexActive, add, make, mul, parts, sub


def _matrices(n, rows):
    """``C`` and ``S`` of ``W = C - i S`` (``rows`` frequencies, ``n`` samples)."""
    k = np.arange(rows)[:, None]
    t = np.arange(n)[None, :]
    angle = 2.0 * np.pi * ((k * t) % n) / n  # k t mod n keeps the angle small and exact
    return np.cos(angle), np.sin(angle)


def _scale(n, norm, inverse):
    if norm in (None, "backward"):
        return 1.0 / n if inverse else 1.0
    if norm == "ortho":
        return 1.0 / np.sqrt(n)
    if norm == "forward":
        return 1.0 if inverse else 1.0 / n
    raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')


def _last(v, axis, n):
    """``v`` with ``axis`` moved last, cropped or zero-padded to ``n``."""
    v = np.moveaxis(v, axis, -1)
    m = np.shape(v)[-1]
    if n < m:
        return v[..., :n]
    if n > m:
        pad = np.zeros(np.shape(v)[:-1] + (n - m,))
        return np.concatenate([v, pad], axis=-1)
    return v


def _length(z, n, axis):
    n = np.shape(z)[axis] if n is None else int(n)
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    return n


def _mm(v, m):
    return 0.0 if type(v) is float and v == 0.0 else v @ m.T


def _transform(z, n, axis, norm, inverse, rows=None):
    n = _length(z, n, axis)
    a, b = parts(z)
    a = _last(a, axis, n)
    b = b if type(b) is float else _last(b, axis, n)
    c, s = _matrices(n, n if rows is None else rows)
    if inverse:  # W^H = C + i S
        re, im = sub(_mm(a, c), _mm(b, s)), add(_mm(b, c), _mm(a, s))
    else:
        re, im = add(_mm(a, c), _mm(b, s)), sub(_mm(b, c), _mm(a, s))
    f = _scale(n, norm, inverse)
    out = make(re, im) if f == 1.0 else make(mul(re, f), mul(im, f))
    return ComplexActive(np.moveaxis(out.re, -1, axis), np.moveaxis(out.im, -1, axis))


def fft(a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.fft`` of an active real or complex array (see the module docstring)."""
    _no_out(out, "fft")
    return _transform(a, n, axis, norm, False)


def ifft(a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.ifft``: ``W^H z`` scaled by ``1/n`` (``norm="backward"``)."""
    _no_out(out, "ifft")
    return _transform(a, n, axis, norm, True)


def rfft(a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.rfft`` of a real active array: the first ``n // 2 + 1`` terms of ``fft``."""
    _no_out(out, "rfft")
    if isinstance(a, ComplexActive):
        raise TypeError("ufunc 'rfft_n_even' not supported for complex input: np.fft.rfft "
                        "takes real arrays")
    n = _length(a, n, axis)
    return _transform(a, n, axis, norm, False, rows=n // 2 + 1)


def irfft(a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.irfft``: the real signal of length ``n`` (default ``2 (m - 1)``) whose
    ``rfft`` is ``a`` (Hermitian symmetry): ``x_t = sum_k w_k (Re a_k cos(2 pi k t / n) -
    Im a_k sin(2 pi k t / n))``, ``w_0 = 1``, ``w_k = 2`` below the Nyquist term, whose
    weight is 1 (``n`` even), times the norm's scale."""
    _no_out(out, "irfft")
    m = np.shape(a)[axis]
    n = 2 * (m - 1) if n is None else int(n)
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    half = n // 2 + 1
    re, im = parts(a)
    re = _last(re, axis, half)
    im = im if type(im) is float else _last(im, axis, half)
    k = np.arange(half)[:, None]
    t = np.arange(n)[None, :]
    angle = 2.0 * np.pi * ((k * t) % n) / n
    w = np.full((half, 1), 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    cos, sin = w * np.cos(angle), w * np.sin(angle)
    sin[0] = 0.0  # the imaginary part of the zero-frequency term is ignored
    if n % 2 == 0:
        sin[-1] = 0.0  # and that of the Nyquist term
    x = sub(re @ cos, 0.0 if type(im) is float else im @ sin)
    f = _scale(n, norm, True)
    return np.moveaxis(x * f if f != 1.0 else x, -1, axis)


def _no_out(out, name):
    if out is not None:
        from .._base.errors import NotDifferentiableError
        raise NotDifferentiableError(f"np.fft.{name}(out=...) on active values")


_HANDLERS = {np.fft.fft: fft, np.fft.ifft: ifft, np.fft.rfft: rfft, np.fft.irfft: irfft}
dispatch.FUNCTIONS.update(_HANDLERS)
COMPLEX_FUNCTIONS.update(_HANDLERS)

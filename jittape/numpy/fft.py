"""``np.fft``'s transforms of active values (``fft``, ``ifft``, ``rfft``, ``irfft``, ``hfft``,
``ihfft`` and their ``2``/``n`` forms), as DFT matrix products along each axis.

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
from .complex_values import ComplexActive, add, is_zero, make, mul, parts, sub


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
    return 0.0 if is_zero(v) else v @ m.T


def _transform(z, n, axis, norm, inverse, rows=None):
    n = _length(z, n, axis)
    a, b = parts(z)
    a = _last(a, axis, n)
    b = b if is_zero(b) else _last(b, axis, n)
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
    im = im if is_zero(im) else _last(im, axis, half)
    w = np.full((half, 1), 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    cos, sin = _matrices(n, half)
    cos, sin = w * cos, w * sin
    sin[0] = 0.0  # the imaginary part of the zero-frequency term is ignored
    if n % 2 == 0:
        sin[-1] = 0.0  # and that of the Nyquist term
    x = sub(re @ cos, 0.0 if is_zero(im) else im @ sin)
    f = _scale(n, norm, True)
    return np.moveaxis(x * f if f != 1.0 else x, -1, axis)


_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.hfft``: ``irfft(conj(a))`` with the norm's direction swapped (NumPy's
    definition)."""
    _no_out(out, "hfft")
    return irfft(np.conj(a) if isinstance(a, ComplexActive) else a, n, axis, _SWAP[norm])


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.ihfft``: ``conj(rfft(a))`` with the norm's direction swapped."""
    _no_out(out, "ihfft")
    return np.conj(rfft(a, n, axis, _SWAP[norm]))


def _axes(a, s, axes):
    nd = np.ndim(a)
    if axes is None:
        axes = tuple(range(nd - (len(s) if s is not None else nd), nd))
    axes = tuple(axes)
    if s is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    return axes, (tuple(s) if s is not None else (None,) * len(axes))


def _many(one, a, s, axes, norm):
    axes, s = _axes(a, s, axes)
    for ax, n in zip(axes[::-1], s[::-1]):  # the last axis first, as NumPy's c2c loop
        a = one(a, n, ax, norm)
    return a


def fftn(a, s=None, axes=None, norm=None, out=None):
    """``np.fft.fftn``: ``fft`` along each of ``axes`` (the last ``len(s)``, or all)."""
    _no_out(out, "fftn")
    return _many(fft, a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None, out=None):
    """``np.fft.ifftn``: ``ifft`` along each of ``axes``."""
    _no_out(out, "ifftn")
    return _many(ifft, a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None, out=None):
    """``np.fft.rfftn``: ``rfft`` along the last of ``axes``, then ``fft`` along the others."""
    _no_out(out, "rfftn")
    axes, s = _axes(a, s, axes)
    a = rfft(a, s[-1], axes[-1], norm)
    return _many(fft, a, s[:-1], axes[:-1], norm) if len(axes) > 1 else a


def irfftn(a, s=None, axes=None, norm=None, out=None):
    """``np.fft.irfftn``: ``ifft`` along all but the last of ``axes``, then ``irfft``."""
    _no_out(out, "irfftn")
    axes, s = _axes(a, s, axes)
    if len(axes) > 1:
        a = _many(ifft, a, s[:-1], axes[:-1], norm)
    return irfft(a, s[-1], axes[-1], norm)


def _two(f, name):
    def transform(a, s=None, axes=(-2, -1), norm=None, out=None):
        return f(a, s, axes, norm, out)
    transform.__name__ = name
    transform.__doc__ = f"``np.fft.{name}``: ``{f.__name__}`` over ``axes=(-2, -1)``."
    return transform


def _no_out(out, name):
    if out is not None:
        from .._base.errors import NotDifferentiableError
        raise NotDifferentiableError(f"np.fft.{name}(out=...) on active values")


_HANDLERS = {np.fft.fft: fft, np.fft.ifft: ifft, np.fft.rfft: rfft, np.fft.irfft: irfft,
             np.fft.hfft: hfft, np.fft.ihfft: ihfft, np.fft.fftn: fftn, np.fft.ifftn: ifftn,
             np.fft.rfftn: rfftn, np.fft.irfftn: irfftn, np.fft.fft2: _two(fftn, "fft2"),
             np.fft.ifft2: _two(ifftn, "ifft2"), np.fft.rfft2: _two(rfftn, "rfft2"),
             np.fft.irfft2: _two(irfftn, "irfft2")}
dispatch.FUNCTIONS.update(_HANDLERS)
COMPLEX_FUNCTIONS.update(_HANDLERS)

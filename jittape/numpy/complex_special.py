"""SciPy's special functions of active complex values: ``scipy.special.wofz`` and
``scipy.special.loggamma``.

A holomorphic ``w = f(z)`` of an active complex ``z = x + iy`` is recorded as two real
records of ``(x, y)``, its real and imaginary parts: the op pairs ``wofz_re``/``wofz_im`` and
``loggamma_re``/``loggamma_im`` of :mod:`jittape.optable.rules.special_complex`, whose
partials come from ``f'(z)`` (the Cauchy-Riemann equations). SciPy computes both parts in
one call here; a replay calls SciPy's C kernel for each record. ``wofz`` of a real active
value is complex too (SciPy returns complex128 for a float64 argument), as a complex value
with a zero imaginary part; ``loggamma`` of a real active value is the real op ``loggamma``.
"""

import numpy as np

from .active import Active, as_node, new_active, tape_of
from .complex_values import SCIPY_UFUNCS, make, parts
from ..optable.table import codes as K


def _pair(f, re_op, im_op, z):
    """``f(z)`` recorded as the records ``re_op(x, y)`` and ``im_op(x, y)`` of the parts
    ``x``, ``y`` of ``z`` (at least one active), broadcast to the result's shape."""
    x, y = parts(z)
    t = tape_of(x, y)
    xv, yv = (v._v if isinstance(v, Active) else v for v in (x, y))
    with np.errstate(all="ignore"):
        w = f(np.add(xv, np.multiply(1j, yv)))
    shape = np.shape(w)
    xn, yn = as_node(t, x, shape), as_node(t, y, shape)

    def record(opc, v):
        return new_active(Active, t, opc, xn._i, yn._i, 0, 0.0, v if shape else float(v))
    return make(record(re_op, np.real(w)), record(im_op, np.imag(w)))


def wofz(z):
    """Opcodes ``wofz_re``, ``wofz_im`` of the parts of ``z`` (a complex result).

    ``scipy.special.wofz(z)``, the Faddeeva function ``w(z) = e^(-z^2) erfc(-iz)``."""
    import scipy.special
    return _pair(scipy.special.wofz, K.WOFZ_RE, K.WOFZ_IM, z)


def loggamma(z):
    """Opcodes ``loggamma_re``, ``loggamma_im`` of the parts of ``z``.

    ``scipy.special.loggamma(z)`` of a complex ``z``, the principal branch of ``log Gamma``."""
    import scipy.special
    return _pair(scipy.special.loggamma, K.LOGGAMMA_RE, K.LOGGAMMA_IM, z)


SCIPY_UFUNCS.update({"wofz": wofz, "loggamma": loggamma})

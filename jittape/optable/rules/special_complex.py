"""Op table entries: SciPy's special functions of a complex argument, as pairs of real ops.

An active complex value is a pair of real parts (:mod:`jittape.numpy.complex_values`), so a
holomorphic ``w = f(z)``, ``z = x + iy``, is recorded as two real binary ops of ``(x, y)``:
``u = Re f(z)`` and ``v = Im f(z)``. Their partials come from the complex derivative
``f'(z)`` by the Cauchy-Riemann equations (DLMF 1.9.25): ``du/dx = dv/dy = Re f'``,
``dv/dx = -du/dy = Im f'``. :mod:`jittape.numpy.complex_special` records the pair for
``scipy.special.wofz(z)`` and ``scipy.special.loggamma(z)`` (one SciPy call for both parts);
the entries map no NumPy callable of their own (``numpy`` is empty) and name the expression
the generic checker records (``fn``). Values call SciPy's complex C kernels (``cz_<name>``,
:mod:`jittape.optable.externals`) through the helpers ``wofz_re``, ... of
:mod:`jittape.optable.scalar_special`.

* ``wofz``, the Faddeeva function ``w(z) = e^(-z^2) erfc(-iz)`` (DLMF 7.2.3):
  ``w'(z) = -2 z w(z) + 2i/sqrt(pi)`` (DLMF 7.10.2), a rule in ``w`` itself, so derivatives
  of every order and nesting follow from the same pair.
* ``loggamma``, the principal branch of ``log Gamma(z)`` (DLMF 5.2.1; SciPy's
  ``scipy.special.loggamma``, its imaginary part continuous off the negative real axis):
  ``d/dz log Gamma(z) = psi(z)`` (DLMF 5.2.2), SciPy's complex ``psi``; the second-order
  rules use ``psi'(z)`` (:func:`jittape.optable.scalar_special.trigamma_complex`).
"""

from ..entry import BINARY, elementwise

_TWO_OVER_SQRT_PI = 1.1283791670955126
_PAIRS = (((4,), (4,)), ((2, 3), ()), ((), (3,)))


def _part(name, part):
    def fn(x, y):
        import scipy.special
        w = getattr(scipy.special, name)(x + 1j * y)
        return w.real if part == "re" else w.imag
    fn.__name__ = f"{name}_{part}"
    return fn


def P(name, part, partials, doc, lo, hi):
    return elementwise(f"{name}_{part}", BINARY, [], f"{name}_{part}(x, y)", partials, doc,
                       lo=lo, hi=hi, shapes=_PAIRS, fn=_part(name, part))


COMPLEX_SPECIAL_OPS = [
    # w' = -2 z w + 2i/sqrt(pi): Re w' = -2 (x u - y v), Im w' = 2/sqrt(pi) - 2 (x v + y u)
    P("wofz", "re", ("-2.0 * (x * z - y * wofz_im(x, y))",
                     f"2.0 * (x * wofz_im(x, y) + y * z) - {_TWO_OVER_SQRT_PI!r}"),
      "z = Re w(x + iy) (scipy.special.wofz); xbar += zbar Re w'; ybar += -zbar Im w', "
      "w' = -2 (x + iy) w + 2i/sqrt(pi)", -2.0, 2.0),
    P("wofz", "im", (f"{_TWO_OVER_SQRT_PI!r} - 2.0 * (x * z + y * wofz_re(x, y))",
                     "-2.0 * (x * wofz_re(x, y) - y * z)"),
      "z = Im w(x + iy); xbar += zbar Im w'; ybar += zbar Re w'", -2.0, 2.0),
    P("loggamma", "re", ("psi_re(x, y)", "-psi_im(x, y)"),
      "z = Re log Gamma(x + iy) (scipy.special.loggamma); xbar += zbar Re psi; "
      "ybar += -zbar Im psi", 0.3, 3.0),
    P("loggamma", "im", ("psi_im(x, y)", "psi_re(x, y)"),
      "z = Im log Gamma(x + iy); xbar += zbar Im psi; ybar += zbar Re psi", 0.3, 3.0),
]

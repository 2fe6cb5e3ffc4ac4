"""Scalar helper functions that op rules call by name (NumPy's conventions, special functions).

Plain Python on floats, with no Numba decorator: :mod:`jittape.sweeps.codegen` copies the source of
each helper a generated sweep names into that sweep's module (so the cache key, a hash of the
generated source, changes whenever a helper does). A helper may call other helpers of this
module; they are found by name and copied too. No helper names an op: they are the math an
op's value or derivative rule is written with.
"""

import math

import numpy as np

LN2 = 0.6931471805599453
LN10 = 2.302585092994046


def npy_log(x):
    # Numba lowers math.log to libm; be explicit about NumPy's log(0) = -inf, log(<0) = nan
    if x > 0.0:
        return math.log(x)
    return -math.inf if x == 0.0 else math.nan


def npy_log1p(x):
    if x > -1.0:
        return math.log1p(x)
    return -math.inf if x == -1.0 else math.nan


def npy_arctanh(x):
    if -1.0 < x < 1.0:
        return math.atanh(x)
    if x == 1.0 or x == -1.0:
        return math.copysign(math.inf, x)
    return math.nan


def sinh_from_cosh(x, y):
    # sinh x from y = cosh x: sqrt(y^2 - 1) away from 0, the odd Taylor series near 0
    # (relative error < 1e-14 for |x| < 0.5); both computed, so the loop vectorizes.
    # Multiplications by reciprocals: IEEE divisions by constants are not turned into them.
    x2 = x * x
    near = x * (1.0 + x2 * (1.0 / 6.0) * (1.0 + x2 * (1.0 / 20.0) * (1.0 + x2 * (
        1.0 / 42.0) * (1.0 + x2 * (1.0 / 72.0) * (1.0 + x2 * (1.0 / 110.0) * (
            1.0 + x2 * (1.0 / 156.0)))))))
    far = math.copysign(math.sqrt(max(y * y - 1.0, 0.0)), x)
    return near if abs(x) < 0.5 else far


def powc(x, c):
    # small integer exponents by multiplication: about 10x cheaper than pow(), within 2 ulp
    if c == 3.0:
        return x * x * x
    if c == -1.0:
        return 1.0 / x
    if c == -2.0:
        return 1.0 / (x * x)
    if c == -3.0:
        return 1.0 / (x * x * x)
    return x ** c


def pow_dx(x, c, z):
    # d/dx x^c = c x^(c-1) = c z / x reuses the primal; pow() only where x = 0 or z overflowed.
    # powc's integer exponents need no pow(): c z / x is exact at 0 and inf too for c < 0, and
    # 3 x^2 for c = 3 (with pow() in a branch, LLVM's vectorizer calls it for every element)
    if c == 0.0 or c == 3.0 or c == -1.0 or c == -2.0 or c == -3.0:
        return 0.0 if c == 0.0 else (3.0 * (x * x) if c == 3.0 else c * z / x)
    if x != 0.0 and abs(z) < math.inf:
        return c * z / x
    return c * x ** (c - 1.0)


def expit(x):
    # the logistic sigmoid 1 / (1 + e^-x), evaluated without overflow on either side
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def gammaln(x):
    # log|Gamma(x)|, as scipy.special.gammaln; +inf at the poles 0, -1, -2, ...
    if x <= 0.0 and x == math.floor(x):
        return math.inf
    return math.lgamma(x)


def digamma(x):
    # psi(x): reflection for x < 0, recurrence up to x >= 10, then the asymptotic series
    # (Abramowitz & Stegun 6.3.7, 6.3.18); about 1e-15 relative away from the poles
    if x != x or x == -math.inf:
        return math.nan
    if x <= 0.0 and x == math.floor(x):
        return math.nan
    acc = 0.0
    if x < 0.0:
        acc = -math.pi / math.tan(math.pi * x)
        x = 1.0 - x
    while x < 10.0:
        acc -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (
        1.0 / 132 - f * (691.0 / 32760 - f / 12.0))))))
    return acc + math.log(x) - 0.5 / x - series


def trigamma(x):
    # psi'(x): reflection, recurrence up to x >= 10, asymptotic series (A & S 6.4.10, 6.4.12)
    if x <= 0.0 and x == math.floor(x):
        return math.nan
    acc = 0.0
    sign = 1.0
    if x < 0.0:  # psi'(1 - x) + psi'(x) = pi^2 / sin^2(pi x)
        s = math.sin(math.pi * x)
        acc = math.pi * math.pi / (s * s)
        sign = -1.0
        x = 1.0 - x
    rest = 0.0
    while x < 10.0:
        rest += 1.0 / (x * x)
        x += 1.0
    f = 1.0 / (x * x)
    rest += 1.0 / x + f / 2.0 + f / x * (1.0 / 6 - f * (1.0 / 30 - f * (1.0 / 42 - f * (
        1.0 / 30 - f * (5.0 / 66 - f * (691.0 / 2730 - f * 7.0 / 6))))))
    return acc + sign * rest


def max_share(x, y):
    # d max(x, y) / dx: ties split evenly (autograd and JAX do the same)
    return 1.0 if x > y else (0.0 if x < y else 0.5)


def npy_maximum(x, y):
    return x if (x != x or x >= y) else y  # NaN propagates from either side


def npy_minimum(x, y):
    return x if (x != x or x <= y) else y


def npy_fmax(x, y):
    if x != x:
        return y
    if y != y:
        return x
    return x if x >= y else y


def npy_fmin(x, y):
    if x != x:
        return y
    if y != y:
        return x
    return x if x <= y else y


def logaddexp(x, y):
    if x != x or y != y:
        return math.nan
    if x == y:  # also covers x = y = +-inf
        return x + LN2
    return max(x, y) + math.log1p(math.exp(-abs(x - y)))


def logaddexp2(x, y):
    if x != x or y != y:
        return math.nan
    if x == y:
        return x + 1.0
    return max(x, y) + math.log1p(2.0 ** (-abs(x - y))) / LN2


def xlogy(x, y):
    if x == 0.0 and y == y:
        return 0.0
    return x * npy_log(y)


def npy_remainder(x, y):
    # NumPy's npy_divmod (as CPython's float %): the result takes the sign of y
    if y == 0.0 or not abs(x) < math.inf:
        return math.nan
    mod = np.fmod(x, y)
    if mod != 0.0:
        if (y < 0.0) != (mod < 0.0):
            mod += y
    else:
        mod = math.copysign(0.0, y)
    return mod


def npy_floordiv(x, y):
    # NumPy's npy_divmod: floor((x - fmod(x, y)) / y) with its corrections
    if y == 0.0:
        return x / y
    mod = np.fmod(x, y)
    div = (x - mod) / y
    if mod != 0.0 and (y < 0.0) != (mod < 0.0):
        div -= 1.0
    if div != 0.0:
        floordiv = math.floor(div)
        if div - floordiv > 0.5:
            floordiv += 1.0
    else:
        floordiv = math.copysign(0.0, x / y)
    return floordiv

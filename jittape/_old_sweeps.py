"""Numba kernels: opcodes, element rules, and the forward and reverse sweeps.

Everything Numba compiles lives in this one file on purpose. Numba's on-disk cache
(``cache=True``) is keyed on the source file of the compiled function and freezes the
globals it reads, so a rule or an opcode kept in another module could change without the
cached sweeps noticing. Keeping opcodes, rules and sweeps together makes every edit here
invalidate the cache.

Tape arrays (struct of arrays, one entry per record ``i``; see :mod:`jittape.tape`)::

    op[i]   int32    opcode
    a[i]    int32    first operand record id (-1 if none)
    b[i]    int32    second operand record id (-1 if none)
    k[i]    int32    small integer immediate: offset into ``pool``, a start index, or the
                     condition record of WHERE
    c[i]    float64  float immediate: the constant of ADDC, MULC, POWC, ...
    off[i]  int64    record i owns ``val[off[i]:off[i+1]]`` (``off`` has n + 1 entries)
    pool    int64    integer data: gather indices, reduction and matmul shapes
    val     float64  primal values, all records back to back
    adj     float64  adjoints, same layout as ``val`` (allocated per reverse sweep)

Rule convention. An elementwise op ``y = f(x, c)`` has a forward function ``f(x, c)``
and a partial-derivative function ``d(x, y, c) = dy/dx`` written next to each other
(``y`` is passed so rules can reuse the forward result, e.g. ``exp``: ``d = y``). The
reverse sweep applies the chain rule ``xbar += ybar * d``. Binary ops have
``f(x, y)`` and ``d(x, y, z) -> (dz/dx, dz/dy)``. Operands of size 1 broadcast (stride 0):
their adjoint contributions accumulate, which is the sum that broadcasting's adjoint needs.
"""

import math

import numpy as np
from numba import njit

# --- opcodes -----------------------------------------------------------------------------
# The numbers are the tape's file format (see Tape.save): append, never renumber. What kind
# of op a number is (and so which part of the sweeps handles it) is in KIND below.
INPUT = 0  # leaf: independent variable
CONST = 1  # leaf: constant array
# unary elementwise, y = f(x) or y = f(x, c)
NEG = 2
ABS = 3
EXP = 4
LOG = 5
SQRT = 6
SQUARE = 7
SIN = 8
COS = 9
TAN = 10
TANH = 11
SINH = 12
COSH = 13
ARCSIN = 14
ARCCOS = 15
ARCTAN = 16
LOG1P = 17
EXPM1 = 18
STOPGRAD = 19
ADDC = 20  # x + c
MULC = 21  # x * c
DIVC = 22  # x / c
RSUBC = 23  # c - x
RDIVC = 24  # c / x
POWC = 25  # x ** c
RPOWC = 26  # c ** x
# binary elementwise, z = f(x, y); operands of size 1 broadcast
ADD = 27
SUB = 28
MUL = 29
DIV = 30
POW = 31
ARCTAN2 = 32
MAXIMUM = 33
MINIMUM = 34
# comparisons: 1.0 or 0.0, no derivative
LT = 35
LE = 36
GT = 37
GE = 38
EQ = 39
NE = 40
# selection, structure, reductions, linear algebra
WHERE = 41  # z = x if cond else y; cond = record k
SLICE = 42  # z = x[k : k + size]
GATHER = 43  # z = x[pool[k : k + size]]
CONCAT = 44  # pool[k:] = nparts, outer, (record, width) * nparts
SUM = 45  # pool[k:] = outer, n, inner: reduce the middle axis
PROD = 46
MAX = 47
MIN = 48
MATMUL = 49  # pool[k:] = m, kk, n: (m, kk) @ (kk, n)
GUARD = 50  # forward sweep checks record a still equals this record's value
ARGMAX = 51  # index of the first maximum (as a float), layout as SUM; no derivative
ARGMIN = 52
# more unary elementwise
EXP2 = 53
LOG2 = 54
LOG10 = 55
CBRT = 56
ARCSINH = 57
ARCCOSH = 58
ARCTANH = 59
EXPIT = 60  # scipy.special.expit, the logistic sigmoid
ERF = 61
ERFC = 62
GAMMALN = 63
DIGAMMA = 64
LOG_NDTR = 65
SIGN = 66  # piecewise constant: zero derivative
FLOOR = 67
CEIL = 68
RINT = 69
TRUNC = 70
# more binary elementwise
LOGADDEXP = 71
LOGADDEXP2 = 72
HYPOT = 73
FMAX = 74  # like MAXIMUM but a NaN operand is ignored
FMIN = 75
XLOGY = 76  # x log y, 0 where x = 0
# scans and sorting, layout pool[k:] = outer, n, inner as the reductions
CUMSUM = 77
CUMPROD = 78
SORT = 79  # value: the sorted values, then the permutation (as floats): 2 * size of x
# dense linear algebra on (n, n) matrices, pool[k:] = n (and columns of the right side)
INV = 80
SOLVE = 81  # X = solve(A = record a, B = record b), pool[k:] = n, m
SLOGDET = 82  # value: [sign, log|det A|]
CHOLESKY = 83  # lower triangular L with L L^T = A
EIGH = 84  # value: the n eigenvalues (ascending), then the eigenvectors V (n x n, C order)
# more binary elementwise
FMOD = 85  # C fmod: the sign of x
REMAINDER = 86  # np.remainder / np.mod / Python %: the sign of y
COPYSIGN = 87
FLOORDIV = 88  # np.floor_divide: piecewise constant
NUM_OPCODES = 89

# What each opcode is: the sweeps dispatch on it, the compiler and the file checks use it.
LEAF, UNARY, BINARY, COMPARE, OTHER = 0, 1, 2, 3, 4
KIND = np.full(NUM_OPCODES, OTHER, dtype=np.int8)
KIND[INPUT] = KIND[CONST] = LEAF
KIND[NEG:ADD] = UNARY
KIND[EXP2:LOGADDEXP] = UNARY
KIND[ADD:LT] = BINARY
KIND[LOGADDEXP:CUMSUM] = BINARY
KIND[FMOD:NUM_OPCODES] = BINARY
KIND[LT:WHERE] = COMPARE


# --- unary element rules: forward f(x, c) beside derivative d(x, y, c) = dy/dx -----------
@njit(inline="always")
def neg_f(x, c):
    return -x


@njit(inline="always")
def neg_d(x, y, c):
    return -1.0


@njit(inline="always")
def abs_f(x, c):
    return abs(x)


@njit(inline="always")
def abs_d(x, y, c):
    return 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)


@njit(inline="always")
def exp_f(x, c):
    return math.exp(x)


@njit(inline="always")
def exp_d(x, y, c):
    return y


@njit(inline="always")
def log_f(x, c):
    # math.log(0) raises in CPython but Numba's lowers to libm; be explicit about NumPy's
    # conventions all the same: log(0) = -inf, log(x < 0) = nan.
    if x > 0.0:
        return math.log(x)
    return -math.inf if x == 0.0 else math.nan


@njit(inline="always")
def log_d(x, y, c):
    return 1.0 / x


@njit(inline="always")
def sqrt_f(x, c):
    return math.sqrt(x) if x >= 0.0 else math.nan


@njit(inline="always")
def sqrt_d(x, y, c):
    return 0.5 / y


@njit(inline="always")
def square_f(x, c):
    return x * x


@njit(inline="always")
def square_d(x, y, c):
    return 2.0 * x


@njit(inline="always")
def sin_f(x, c):
    return math.sin(x)


@njit(inline="always")
def sin_d(x, y, c):
    return math.cos(x)


@njit(inline="always")
def cos_f(x, c):
    return math.cos(x)


@njit(inline="always")
def cos_d(x, y, c):
    return -math.sin(x)


@njit(inline="always")
def tan_f(x, c):
    return math.tan(x)


@njit(inline="always")
def tan_d(x, y, c):
    return 1.0 + y * y


@njit(inline="always")
def tanh_f(x, c):
    return math.tanh(x)


@njit(inline="always")
def tanh_d(x, y, c):
    return 1.0 - y * y


@njit(inline="always")
def sinh_f(x, c):
    return math.sinh(x)


@njit(inline="always")
def sinh_d(x, y, c):
    return math.sqrt(1.0 + y * y)  # cosh x from y = sinh x: no second libm call


@njit(inline="always")
def cosh_f(x, c):
    return math.cosh(x)


@njit(inline="always")
def cosh_d(x, y, c):
    # sinh x from y = cosh x: sqrt(y^2 - 1) away from 0, the odd Taylor series near 0
    # (relative error < 1e-14 for |x| < 0.5); both computed, so the loop vectorizes
    x2 = x * x
    # multiplications by reciprocals: IEEE divisions by constants are not turned into them
    near = x * (1.0 + x2 * (1.0 / 6.0) * (1.0 + x2 * (1.0 / 20.0) * (1.0 + x2 * (
        1.0 / 42.0) * (1.0 + x2 * (1.0 / 72.0) * (1.0 + x2 * (1.0 / 110.0) * (
            1.0 + x2 * (1.0 / 156.0)))))))
    far = math.copysign(math.sqrt(max(y * y - 1.0, 0.0)), x)
    return near if abs(x) < 0.5 else far


@njit(inline="always")
def arcsin_f(x, c):
    return math.asin(x) if -1.0 <= x <= 1.0 else math.nan


@njit(inline="always")
def arcsin_d(x, y, c):
    return 1.0 / math.sqrt(1.0 - x * x) if -1.0 <= x <= 1.0 else math.nan


@njit(inline="always")
def arccos_f(x, c):
    return math.acos(x) if -1.0 <= x <= 1.0 else math.nan


@njit(inline="always")
def arccos_d(x, y, c):
    return -1.0 / math.sqrt(1.0 - x * x) if -1.0 <= x <= 1.0 else math.nan


@njit(inline="always")
def arctan_f(x, c):
    return math.atan(x)


@njit(inline="always")
def arctan_d(x, y, c):
    return 1.0 / (1.0 + x * x)


@njit(inline="always")
def log1p_f(x, c):
    if x > -1.0:
        return math.log1p(x)
    return -math.inf if x == -1.0 else math.nan


@njit(inline="always")
def log1p_d(x, y, c):
    return 1.0 / (1.0 + x)


@njit(inline="always")
def expm1_f(x, c):
    return math.expm1(x)


@njit(inline="always")
def expm1_d(x, y, c):
    return y + 1.0


@njit(inline="always")
def stopgrad_f(x, c):
    return x


@njit(inline="always")
def stopgrad_d(x, y, c):
    return 0.0


@njit(inline="always")
def addc_f(x, c):
    return x + c


@njit(inline="always")
def addc_d(x, y, c):
    return 1.0


@njit(inline="always")
def mulc_f(x, c):
    return x * c


@njit(inline="always")
def mulc_d(x, y, c):
    return c


@njit(inline="always")
def divc_f(x, c):
    return x / c


@njit(inline="always")
def divc_d(x, y, c):
    return 1.0 / c


@njit(inline="always")
def rsubc_f(x, c):
    return c - x


@njit(inline="always")
def rsubc_d(x, y, c):
    return -1.0


@njit(inline="always")
def rdivc_f(x, c):
    return c / x


@njit(inline="always")
def rdivc_d(x, y, c):
    return -y / x


@njit(inline="always")
def powc_f(x, c):
    # small integer exponents by multiplication: about 10x cheaper than pow(), within 2 ulp
    if c == 3.0:
        return x * x * x
    if c == -1.0:
        return 1.0 / x
    if c == -2.0:
        return 1.0 / (x * x)
    if c == -3.0:
        return 1.0 / (x * x * x)
    return x**c


@njit(inline="always")
def powc_d(x, y, c):
    # c x^(c-1) = c y / x reuses the primal; pow() only where x = 0
    if c == 0.0:
        return 0.0
    if x != 0.0:  # an overflowed y gives the right infinity here too
        return c * y / x
    return c * x ** (c - 1.0)


@njit(inline="always")
def rpowc_f(x, c):
    return c**x


@njit(inline="always")
def rpowc_d(x, y, c):
    return 0.0 if y == 0.0 else y * math.log(c)


@njit(inline="always")
def exp2_f(x, c):
    return 2.0**x


@njit(inline="always")
def exp2_d(x, y, c):
    return y * 0.6931471805599453  # ln 2


@njit(inline="always")
def log2_f(x, c):
    return log_f(x, c) / 0.6931471805599453


@njit(inline="always")
def log2_d(x, y, c):
    return 1.0 / (x * 0.6931471805599453)


@njit(inline="always")
def log10_f(x, c):
    return log_f(x, c) / 2.302585092994046


@njit(inline="always")
def log10_d(x, y, c):
    return 1.0 / (x * 2.302585092994046)


@njit(inline="always")
def cbrt_f(x, c):
    return math.copysign(abs(x) ** (1.0 / 3.0), x)


@njit(inline="always")
def cbrt_d(x, y, c):
    return 1.0 / (3.0 * y * y)


@njit(inline="always")
def arcsinh_f(x, c):
    return math.asinh(x)


@njit(inline="always")
def arcsinh_d(x, y, c):
    return 1.0 / math.sqrt(x * x + 1.0)


@njit(inline="always")
def arccosh_f(x, c):
    return math.acosh(x) if x >= 1.0 else math.nan


@njit(inline="always")
def arccosh_d(x, y, c):
    return 1.0 / math.sqrt(x * x - 1.0) if x >= 1.0 else math.nan


@njit(inline="always")
def arctanh_f(x, c):
    if -1.0 < x < 1.0:
        return math.atanh(x)
    if x == 1.0 or x == -1.0:
        return math.copysign(math.inf, x)
    return math.nan


@njit(inline="always")
def arctanh_d(x, y, c):
    return 1.0 / (1.0 - x * x)


@njit(inline="always")
def expit_f(x, c):
    # the logistic sigmoid 1 / (1 + e^-x), evaluated without overflow on either side
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@njit(inline="always")
def expit_d(x, y, c):
    return y * (1.0 - y)


@njit(inline="always")
def erf_f(x, c):
    return math.erf(x)


@njit(inline="always")
def erf_d(x, y, c):
    return 1.1283791670955126 * math.exp(-x * x)  # 2 / sqrt(pi) e^(-x^2)


@njit(inline="always")
def erfc_f(x, c):
    return math.erfc(x)


@njit(inline="always")
def erfc_d(x, y, c):
    return -1.1283791670955126 * math.exp(-x * x)


@njit(inline="always")
def gammaln_f(x, c):
    # log|Gamma(x)|, as scipy.special.gammaln; +inf at the poles 0, -1, -2, ...
    if x <= 0.0 and x == math.floor(x):
        return math.inf
    return math.lgamma(x)


@njit(inline="always")
def gammaln_d(x, y, c):
    return digamma_f(x, c)


@njit(inline="always")
def digamma_f(x, c):
    # psi(x): reflection for x < 0, recurrence up to x >= 6, then the asymptotic series
    # (Abramowitz & Stegun 6.3.7, 6.3.18); about 1e-15 relative away from the poles
    if x != x or x == -math.inf:
        return math.nan
    if x <= 0.0 and x == math.floor(x):
        return math.nan
    acc = 0.0
    if x < 0.0:
        acc = -math.pi / math.tan(math.pi * x)
        x = 1.0 - x
    while x < 6.0:
        acc -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (
        1.0 / 132 - f * (691.0 / 32760 - f / 12.0))))))
    return acc + math.log(x) - 0.5 / x - series


@njit(inline="always")
def trigamma(x):
    # psi'(x): reflection, recurrence up to x >= 6, asymptotic series (A & S 6.4.10, 6.4.12)
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
    while x < 6.0:
        rest += 1.0 / (x * x)
        x += 1.0
    f = 1.0 / (x * x)
    rest += 1.0 / x + f / 2.0 + f / x * (1.0 / 6 - f * (1.0 / 30 - f * (1.0 / 42 - f * (
        1.0 / 30 - f * (5.0 / 66 - f * (691.0 / 2730 - f * 7.0 / 6))))))
    return acc + sign * rest


@njit(inline="always")
def digamma_d(x, y, c):
    return trigamma(x)


@njit(inline="always")
def log_ndtr_f(x, c):
    # log of the standard normal CDF; asymptotic expansion where the CDF underflows
    # (A & S 26.2.12), log1p(-Q(x)) on the right tail for accuracy
    if x > 6.0:
        return -0.5 * math.erfc(x / 1.4142135623730951)
    if x > -20.0:
        return math.log(0.5 * math.erfc(-x / 1.4142135623730951))
    x2 = x * x
    s = 1.0
    term = 1.0
    for k in range(1, 12):
        term *= -(2 * k - 1) / x2
        s += term
    return -0.5 * x2 - math.log(-x) - 0.9189385332046727 + math.log(s)


@njit(inline="always")
def log_ndtr_d(x, y, c):
    # d/dx log Phi(x) = phi(x) / Phi(x) = exp(-x^2/2 - log Phi(x)) / sqrt(2 pi)
    return math.exp(-0.5 * x * x - y - 0.9189385332046727)


@njit(inline="always")
def sign_f(x, c):
    return np.sign(x)


@njit(inline="always")
def floor_f(x, c):
    return np.floor(x)


@njit(inline="always")
def ceil_f(x, c):
    return np.ceil(x)


@njit(inline="always")
def rint_f(x, c):
    return np.rint(x)


@njit(inline="always")
def trunc_f(x, c):
    return np.trunc(x)


@njit(inline="always")
def piecewise_d(x, y, c):
    return 0.0  # piecewise constant: zero almost everywhere


sign_d = floor_d = ceil_d = rint_d = trunc_d = piecewise_d


# --- binary element rules: forward f(x, y) beside partials d(x, y, z) -> (dz/dx, dz/dy) ---
@njit(inline="always")
def add_f(x, y):
    return x + y


@njit(inline="always")
def add_d(x, y, z):
    return 1.0, 1.0


@njit(inline="always")
def sub_f(x, y):
    return x - y


@njit(inline="always")
def sub_d(x, y, z):
    return 1.0, -1.0


@njit(inline="always")
def mul_f(x, y):
    return x * y


@njit(inline="always")
def mul_d(x, y, z):
    return y, x


@njit(inline="always")
def div_f(x, y):
    return x / y


@njit(inline="always")
def div_d(x, y, z):
    return 1.0 / y, -z / y


@njit(inline="always")
def pow_f(x, y):
    return x**y


@njit(inline="always")
def pow_d(x, y, z):
    # d/dy x**y = x**y log x; taken as 0 where x**y == 0 (x = 0, y > 0), as autograd does.
    # y x^(y-1) = y z / x reuses the primal where x != 0
    if y == 0.0:
        dx = 0.0
    elif x != 0.0 and abs(z) < math.inf:
        dx = y * z / x
    else:
        dx = y * x ** (y - 1.0)
    return dx, (0.0 if z == 0.0 else z * math.log(x))


@njit(inline="always")
def arctan2_f(x, y):
    return math.atan2(x, y)


@njit(inline="always")
def arctan2_d(x, y, z):
    r2 = x * x + y * y
    return y / r2, -x / r2


@njit(inline="always")
def maximum_f(x, y):
    return x if (x != x or x >= y) else y  # NaN propagates from either side, as np.maximum


@njit(inline="always")
def maximum_d(x, y, z):
    if x > y:
        return 1.0, 0.0
    if x < y:
        return 0.0, 1.0
    return 0.5, 0.5  # tie: split evenly (autograd and JAX do the same)


@njit(inline="always")
def minimum_f(x, y):
    return x if (x != x or x <= y) else y


@njit(inline="always")
def minimum_d(x, y, z):
    if x < y:
        return 1.0, 0.0
    if x > y:
        return 0.0, 1.0
    return 0.5, 0.5


@njit(inline="always")
def logaddexp_f(x, y):
    if x != x or y != y:
        return math.nan
    if x == y:  # also covers x = y = +-inf
        return x + 0.6931471805599453
    return max(x, y) + math.log1p(math.exp(-abs(x - y)))


@njit(inline="always")
def logaddexp_d(x, y, z):
    if x == y:
        return 0.5, 0.5
    return math.exp(x - z), math.exp(y - z)


@njit(inline="always")
def logaddexp2_f(x, y):
    if x != x or y != y:
        return math.nan
    if x == y:
        return x + 1.0
    return max(x, y) + math.log1p(2.0 ** (-abs(x - y))) / 0.6931471805599453


@njit(inline="always")
def logaddexp2_d(x, y, z):
    if x == y:
        return 0.5, 0.5
    return 2.0 ** (x - z), 2.0 ** (y - z)


@njit(inline="always")
def hypot_f(x, y):
    return math.hypot(x, y)


@njit(inline="always")
def hypot_d(x, y, z):
    if z == 0.0:
        return 0.0, 0.0
    return x / z, y / z


@njit(inline="always")
def fmax_f(x, y):
    if x != x:
        return y
    if y != y:
        return x
    return x if x >= y else y


@njit(inline="always")
def fmax_d(x, y, z):
    if x != x:
        return 0.0, 1.0
    if y != y:
        return 1.0, 0.0
    return maximum_d(x, y, z)


@njit(inline="always")
def fmin_f(x, y):
    if x != x:
        return y
    if y != y:
        return x
    return x if x <= y else y


@njit(inline="always")
def fmin_d(x, y, z):
    if x != x:
        return 0.0, 1.0
    if y != y:
        return 1.0, 0.0
    return minimum_d(x, y, z)


@njit(inline="always")
def xlogy_f(x, y):
    if x == 0.0 and y == y:
        return 0.0
    return x * log_f(y, 0.0)


@njit(inline="always")
def xlogy_d(x, y, z):
    return log_f(y, 0.0), x / y


@njit(inline="always")
def fmod_f(x, y):
    return np.fmod(x, y) if y != 0.0 and abs(x) < math.inf else math.nan


@njit(inline="always")
def fmod_d(x, y, z):
    return 1.0, -np.trunc(x / y)


@njit(inline="always")
def remainder_f(x, y):
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


@njit(inline="always")
def remainder_d(x, y, z):
    return 1.0, -np.floor(x / y)


@njit(inline="always")
def copysign_f(x, y):
    return math.copysign(x, y)


@njit(inline="always")
def copysign_d(x, y, z):
    return math.copysign(1.0, x) * math.copysign(1.0, y), 0.0


@njit(inline="always")
def floordiv_f(x, y):
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


@njit(inline="always")
def floordiv_d(x, y, z):
    return 0.0, 0.0


@njit(inline="always")
def lt_f(x, y):
    return 1.0 if x < y else 0.0


@njit(inline="always")
def le_f(x, y):
    return 1.0 if x <= y else 0.0


@njit(inline="always")
def gt_f(x, y):
    return 1.0 if x > y else 0.0


@njit(inline="always")
def ge_f(x, y):
    return 1.0 if x >= y else 0.0


@njit(inline="always")
def eq_f(x, y):
    return 1.0 if x == y else 0.0


@njit(inline="always")
def ne_f(x, y):
    return 1.0 if x != y else 0.0


# --- element loops: one specialization per rule, inlined into the sweeps -----------------
@njit(inline="always")
def _unary_fwd(f, val, o, n, ia, c):
    for j in range(n):
        val[o + j] = f(val[ia + j], c)


@njit(inline="always")
def _unary_rev(d, val, adj, o, n, ia, c):
    for j in range(n):
        adj[ia + j] += adj[o + j] * d(val[ia + j], val[o + j], c)


@njit(inline="always")
def _binary_fwd(f, val, o, n, ia, sa, ib, sb):
    for j in range(n):
        val[o + j] = f(val[ia + j * sa], val[ib + j * sb])


@njit(inline="always")
def _binary_rev(d, val, adj, o, n, ia, sa, ib, sb):
    # A zero adjoint contributes exactly 0, even where a partial is inf or nan (the untaken
    # side of a where, say); written as a select so that the loop vectorizes.
    if sa == 1 and sb == 1 and ia != ib:  # the common case: no stride, no aliasing
        for j in range(n):
            g = adj[o + j]
            dx, dy = d(val[ia + j], val[ib + j], val[o + j])
            adj[ia + j] += g * dx if g != 0.0 else 0.0
            adj[ib + j] += g * dy if g != 0.0 else 0.0
        return
    for j in range(n):
        g = adj[o + j]
        if g != 0.0:
            dx, dy = d(val[ia + j * sa], val[ib + j * sb], val[o + j])
            adj[ia + j * sa] += g * dx
            adj[ib + j * sb] += g * dy


@njit(inline="always")
def _reduce_fwd(opc, val, o, ia, outer, n, inner):
    for r in range(outer):
        for q in range(inner):
            base = ia + r * n * inner + q
            if opc == SUM or opc == PROD:  # start from the identity: empty sums are 0
                acc = 0.0 if opc == SUM else 1.0
                first = 0
            else:  # MAX, MIN of an empty axis are refused when recording
                acc = val[base]
                first = 1
            for t in range(first, n):
                x = val[base + t * inner]
                if opc == SUM:
                    acc += x
                elif opc == PROD:
                    acc *= x
                elif opc == MAX:
                    if x > acc or x != x:
                        acc = x
                elif x < acc or x != x:  # MIN
                    acc = x
            val[o + r * inner + q] = acc


@njit(inline="always")
def _reduce_rev(opc, val, adj, o, ia, outer, n, inner):
    for r in range(outer):
        for q in range(inner):
            base = ia + r * n * inner + q
            g = adj[o + r * inner + q]
            y = val[o + r * inner + q]
            if opc == SUM:
                continue  # below, in memory order
            elif opc == PROD:
                # product of the other factors, exact when some factors are zero
                zeros = 0
                p = 1.0
                for t in range(n):
                    x = val[base + t * inner]
                    if x == 0.0:
                        zeros += 1
                    else:
                        p *= x
                for t in range(n):
                    x = val[base + t * inner]
                    if zeros == 0:
                        adj[base + t * inner] += g * (p / x)
                    elif zeros == 1 and x == 0.0:
                        adj[base + t * inner] += g * p
            else:  # MAX, MIN: split evenly among the elements that attain the extremum
                ties = 0.0
                for t in range(n):
                    ties += 1.0 if val[base + t * inner] == y else 0.0
                share = g / ties if ties > 0.0 else 0.0
                for t in range(n):
                    adj[base + t * inner] += share if val[base + t * inner] == y else 0.0
    if opc == SUM and inner == 1:  # over all elements or the last axis
        for r in range(outer):
            g = adj[o + r]
            for t in range(n):
                adj[ia + r * n + t] += g
    elif opc == SUM:  # xbar[r, t, q] += ybar[r, q], walking x in memory order
        for r in range(outer):
            for t in range(n):
                base = ia + (r * n + t) * inner
                for q in range(inner):
                    adj[base + q] += adj[o + r * inner + q]


@njit(inline="always")
def _matmul_fwd(val, o, ia, ib, m, kk, n, batch):
    for j in range(batch * m * n):
        val[o + j] = 0.0
    for q in range(batch):  # a stack of (m, kk) @ (kk, n) products
        qa, qb, qo = ia + q * m * kk, ib + q * kk * n, o + q * m * n
        for i in range(m):
            for t in range(kk):
                x = val[qa + i * kk + t]
                for j in range(n):
                    val[qo + i * n + j] += x * val[qb + t * n + j]


@njit(inline="always")
def _matmul_rev(val, adj, o, ia, ib, m, kk, n, batch, need_a, need_b):
    # Abar += G @ B^T, Bbar += A^T @ G  (Giles 2008, "Collected matrix derivative results");
    # a constant operand gets no adjoint (half the work of a product with a data matrix)
    for q in range(batch):
        qa, qb, qo = ia + q * m * kk, ib + q * kk * n, o + q * m * n
        for i in range(m):
            if n == 1:  # matrix-vector: rows of A in memory order
                g = adj[qo + i]
                if need_b:
                    for t in range(kk):
                        adj[qb + t] += val[qa + i * kk + t] * g
                if need_a:
                    for t in range(kk):
                        adj[qa + i * kk + t] += g * val[qb + t]
                continue
            for t in range(kk):
                x = val[qa + i * kk + t]
                s = 0.0
                for j in range(n):
                    g = adj[qo + i * n + j]
                    s += g * val[qb + t * n + j]
                    if need_b:
                        adj[qb + t * n + j] += x * g
                if need_a:
                    adj[qa + i * kk + t] += s


@njit(inline="always")
def _scan_fwd(opc, val, o, ia, outer, n, inner):
    for r in range(outer):
        for q in range(inner):
            base = r * n * inner + q
            acc = 0.0 if opc == CUMSUM else 1.0
            for t in range(n):
                if opc == CUMSUM:
                    acc += val[ia + base + t * inner]
                else:
                    acc *= val[ia + base + t * inner]
                val[o + base + t * inner] = acc


@njit(inline="always")
def _scan_rev(opc, val, adj, o, ia, outer, n, inner):
    for r in range(outer):
        for q in range(inner):
            base = r * n * inner + q
            # CUMSUM: xbar[t] = sum_{s >= t} ybar[s]. CUMPROD: xbar[t] = y[t-1] R[t] with
            # R[t] = ybar[t] + x[t+1] R[t+1]: exact with zero factors, O(n)
            acc = 0.0
            for t in range(n - 1, -1, -1):
                g = adj[o + base + t * inner]
                if opc == CUMSUM:
                    acc += g
                    adj[ia + base + t * inner] += acc
                else:
                    nxt = val[ia + base + (t + 1) * inner] if t + 1 < n else 0.0
                    acc = g + nxt * acc
                    before = val[o + base + (t - 1) * inner] if t > 0 else 1.0
                    adj[ia + base + t * inner] += before * acc


@njit
def _sort_fwd(val, o, ia, outer, n, inner):
    # value layout: the sorted values (outer, n, inner), then the permutation, as floats
    size = outer * n * inner
    tmp = np.empty(n)
    for r in range(outer):
        for q in range(inner):
            base = r * n * inner + q
            for t in range(n):
                tmp[t] = val[ia + base + t * inner]
            perm = np.argsort(tmp, kind="mergesort")
            for t in range(n):
                val[o + base + t * inner] = tmp[perm[t]]
                val[o + size + base + t * inner] = perm[t]


@njit(inline="always")
def _sort_rev(val, adj, o, ia, outer, n, inner):
    size = outer * n * inner
    for r in range(outer):
        for q in range(inner):
            base = r * n * inner + q
            for t in range(n):
                src = int(val[o + size + base + t * inner])
                adj[ia + base + src * inner] += adj[o + base + t * inner]


@njit
def _linalg_fwd(opc, val, o, ia, ib, n, m):
    a = val[ia:ia + n * n].reshape((n, n))
    if opc == INV:
        val[o:o + n * n] = np.linalg.inv(a).ravel()
    elif opc == SOLVE:
        x = np.linalg.solve(a, val[ib:ib + n * m].reshape((n, m)).copy())
        val[o:o + n * m] = x.ravel()
    elif opc == SLOGDET:
        sign, logdet = np.linalg.slogdet(a)
        val[o] = sign
        val[o + 1] = logdet
    elif opc == CHOLESKY:
        val[o:o + n * n] = np.linalg.cholesky(a).ravel()
    elif opc == EIGH:
        w, v = np.linalg.eigh(a)
        val[o:o + n] = w
        val[o + n:o + n + n * n] = np.ascontiguousarray(v).ravel()


@njit
def _linalg_rev(opc, val, adj, o, ia, ib, n, m):
    # Matrix adjoints: Giles 2008 (inv, solve, det), Murray 2016 "Differentiation of the
    # Cholesky decomposition" (cholesky), Magnus & Neudecker / autograd's grad_eigh (eigh).
    # A symmetric input's adjoint is symmetrised, as autograd and JAX do.
    a = val[ia:ia + n * n].reshape((n, n))
    if opc == INV:
        y = val[o:o + n * n].reshape((n, n))
        yt = np.ascontiguousarray(y.T)
        g = adj[o:o + n * n].reshape((n, n)).copy()
        adj[ia:ia + n * n] -= (yt @ g @ yt).ravel()
    elif opc == SOLVE:
        x = val[o:o + n * m].reshape((n, m))
        g = adj[o:o + n * m].reshape((n, m)).copy()
        bbar = np.linalg.solve(np.ascontiguousarray(a.T), g)
        adj[ib:ib + n * m] += bbar.ravel()
        adj[ia:ia + n * n] -= (bbar @ np.ascontiguousarray(x.T)).ravel()
    elif opc == SLOGDET:
        g = adj[o + 1]
        if g != 0.0:
            adj[ia:ia + n * n] += g * np.ascontiguousarray(np.linalg.inv(a).T).ravel()
    elif opc == CHOLESKY:
        low = val[o:o + n * n].reshape((n, n))
        g = adj[o:o + n * n].reshape((n, n))
        p = np.ascontiguousarray(low.T) @ np.ascontiguousarray(g)
        for i in range(n):  # phi: lower triangle, diagonal halved
            p[i, i] *= 0.5
            for j in range(i + 1, n):
                p[i, j] = 0.0
        lt = np.ascontiguousarray(low.T)
        t1 = np.linalg.solve(lt, p)
        sm = np.linalg.solve(lt, np.ascontiguousarray(t1.T)).T
        adj[ia:ia + n * n] += (0.5 * (sm + sm.T)).ravel()
    elif opc == EIGH:
        w = val[o:o + n]
        v = val[o + n:o + n + n * n].reshape((n, n))
        wbar = adj[o:o + n]
        vbar = adj[o + n:o + n + n * n].reshape((n, n))
        inner = np.ascontiguousarray(v.T) @ np.ascontiguousarray(vbar)
        for i in range(n):
            for j in range(n):
                inner[i, j] = wbar[i] if i == j else (
                    inner[i, j] / (w[j] - w[i]) if w[j] != w[i] else 0.0)
        full = np.ascontiguousarray(v) @ inner @ np.ascontiguousarray(v.T)
        adj[ia:ia + n * n] += (0.5 * (full + full.T)).ravel()


@njit(inline="always")
def _argext_fwd(is_max, val, o, ia, outer, n, inner):
    # NumPy's convention: the first extremum wins; a NaN is the extremum
    for r in range(outer):
        for q in range(inner):
            base = ia + r * n * inner + q
            best = 0
            bv = val[base]
            for t in range(1, n):
                x = val[base + t * inner]
                if bv != bv:
                    break
                if x != x or (x > bv if is_max else x < bv):
                    best = t
                    bv = x
            val[o + r * inner + q] = best


# --- the sweeps ---------------------------------------------------------------------------
@njit(cache=True, nogil=True, error_model="numpy")
def forward_sweep(op, a, b, k, c, off, pool, val, first):
    """Recompute ``val`` for records ``first..end`` from the leaves already in ``val``.

    Returns -1, or the id of the first GUARD record whose check failed (the recorded
    control flow no longer describes the function at these inputs).
    """
    for i in range(first, op.shape[0]):
        opc = op[i]
        kind = KIND[opc]
        if kind == LEAF:
            continue
        o = off[i]
        n = off[i + 1] - o
        ia = off[a[i]] if a[i] >= 0 else 0
        ci = c[i]
        if kind == UNARY:
            if opc == ADDC:
                _unary_fwd(addc_f, val, o, n, ia, ci)
            elif opc == MULC:
                _unary_fwd(mulc_f, val, o, n, ia, ci)
            elif opc == DIVC:
                _unary_fwd(divc_f, val, o, n, ia, ci)
            elif opc == RSUBC:
                _unary_fwd(rsubc_f, val, o, n, ia, ci)
            elif opc == RDIVC:
                _unary_fwd(rdivc_f, val, o, n, ia, ci)
            elif opc == POWC:
                _unary_fwd(powc_f, val, o, n, ia, ci)
            elif opc == RPOWC:
                _unary_fwd(rpowc_f, val, o, n, ia, ci)
            elif opc == NEG:
                _unary_fwd(neg_f, val, o, n, ia, ci)
            elif opc == ABS:
                _unary_fwd(abs_f, val, o, n, ia, ci)
            elif opc == EXP:
                _unary_fwd(exp_f, val, o, n, ia, ci)
            elif opc == LOG:
                _unary_fwd(log_f, val, o, n, ia, ci)
            elif opc == SQRT:
                _unary_fwd(sqrt_f, val, o, n, ia, ci)
            elif opc == SQUARE:
                _unary_fwd(square_f, val, o, n, ia, ci)
            elif opc == SIN:
                _unary_fwd(sin_f, val, o, n, ia, ci)
            elif opc == COS:
                _unary_fwd(cos_f, val, o, n, ia, ci)
            elif opc == TAN:
                _unary_fwd(tan_f, val, o, n, ia, ci)
            elif opc == TANH:
                _unary_fwd(tanh_f, val, o, n, ia, ci)
            elif opc == SINH:
                _unary_fwd(sinh_f, val, o, n, ia, ci)
            elif opc == COSH:
                _unary_fwd(cosh_f, val, o, n, ia, ci)
            elif opc == ARCSIN:
                _unary_fwd(arcsin_f, val, o, n, ia, ci)
            elif opc == ARCCOS:
                _unary_fwd(arccos_f, val, o, n, ia, ci)
            elif opc == ARCTAN:
                _unary_fwd(arctan_f, val, o, n, ia, ci)
            elif opc == LOG1P:
                _unary_fwd(log1p_f, val, o, n, ia, ci)
            elif opc == EXPM1:
                _unary_fwd(expm1_f, val, o, n, ia, ci)
            elif opc == STOPGRAD:
                _unary_fwd(stopgrad_f, val, o, n, ia, ci)
            elif opc == EXP2:
                _unary_fwd(exp2_f, val, o, n, ia, ci)
            elif opc == LOG2:
                _unary_fwd(log2_f, val, o, n, ia, ci)
            elif opc == LOG10:
                _unary_fwd(log10_f, val, o, n, ia, ci)
            elif opc == CBRT:
                _unary_fwd(cbrt_f, val, o, n, ia, ci)
            elif opc == ARCSINH:
                _unary_fwd(arcsinh_f, val, o, n, ia, ci)
            elif opc == ARCCOSH:
                _unary_fwd(arccosh_f, val, o, n, ia, ci)
            elif opc == ARCTANH:
                _unary_fwd(arctanh_f, val, o, n, ia, ci)
            elif opc == EXPIT:
                _unary_fwd(expit_f, val, o, n, ia, ci)
            elif opc == ERF:
                _unary_fwd(erf_f, val, o, n, ia, ci)
            elif opc == ERFC:
                _unary_fwd(erfc_f, val, o, n, ia, ci)
            elif opc == GAMMALN:
                _unary_fwd(gammaln_f, val, o, n, ia, ci)
            elif opc == DIGAMMA:
                _unary_fwd(digamma_f, val, o, n, ia, ci)
            elif opc == LOG_NDTR:
                _unary_fwd(log_ndtr_f, val, o, n, ia, ci)
            elif opc == SIGN:
                _unary_fwd(sign_f, val, o, n, ia, ci)
            elif opc == FLOOR:
                _unary_fwd(floor_f, val, o, n, ia, ci)
            elif opc == CEIL:
                _unary_fwd(ceil_f, val, o, n, ia, ci)
            elif opc == RINT:
                _unary_fwd(rint_f, val, o, n, ia, ci)
            elif opc == TRUNC:
                _unary_fwd(trunc_f, val, o, n, ia, ci)
            continue
        if kind == BINARY or kind == COMPARE:
            ib = off[b[i]]
            sa = 1 if off[a[i] + 1] - ia == n else 0
            sb = 1 if off[b[i] + 1] - ib == n else 0
            if opc == ADD:
                _binary_fwd(add_f, val, o, n, ia, sa, ib, sb)
            elif opc == MUL:
                _binary_fwd(mul_f, val, o, n, ia, sa, ib, sb)
            elif opc == SUB:
                _binary_fwd(sub_f, val, o, n, ia, sa, ib, sb)
            elif opc == DIV:
                _binary_fwd(div_f, val, o, n, ia, sa, ib, sb)
            elif opc == POW:
                _binary_fwd(pow_f, val, o, n, ia, sa, ib, sb)
            elif opc == ARCTAN2:
                _binary_fwd(arctan2_f, val, o, n, ia, sa, ib, sb)
            elif opc == MAXIMUM:
                _binary_fwd(maximum_f, val, o, n, ia, sa, ib, sb)
            elif opc == MINIMUM:
                _binary_fwd(minimum_f, val, o, n, ia, sa, ib, sb)
            elif opc == LT:
                _binary_fwd(lt_f, val, o, n, ia, sa, ib, sb)
            elif opc == LE:
                _binary_fwd(le_f, val, o, n, ia, sa, ib, sb)
            elif opc == GT:
                _binary_fwd(gt_f, val, o, n, ia, sa, ib, sb)
            elif opc == GE:
                _binary_fwd(ge_f, val, o, n, ia, sa, ib, sb)
            elif opc == EQ:
                _binary_fwd(eq_f, val, o, n, ia, sa, ib, sb)
            elif opc == NE:
                _binary_fwd(ne_f, val, o, n, ia, sa, ib, sb)
            elif opc == LOGADDEXP:
                _binary_fwd(logaddexp_f, val, o, n, ia, sa, ib, sb)
            elif opc == LOGADDEXP2:
                _binary_fwd(logaddexp2_f, val, o, n, ia, sa, ib, sb)
            elif opc == HYPOT:
                _binary_fwd(hypot_f, val, o, n, ia, sa, ib, sb)
            elif opc == FMAX:
                _binary_fwd(fmax_f, val, o, n, ia, sa, ib, sb)
            elif opc == FMIN:
                _binary_fwd(fmin_f, val, o, n, ia, sa, ib, sb)
            elif opc == XLOGY:
                _binary_fwd(xlogy_f, val, o, n, ia, sa, ib, sb)
            elif opc == FMOD:
                _binary_fwd(fmod_f, val, o, n, ia, sa, ib, sb)
            elif opc == REMAINDER:
                _binary_fwd(remainder_f, val, o, n, ia, sa, ib, sb)
            elif opc == COPYSIGN:
                _binary_fwd(copysign_f, val, o, n, ia, sa, ib, sb)
            elif opc == FLOORDIV:
                _binary_fwd(floordiv_f, val, o, n, ia, sa, ib, sb)
            continue
        if opc == SLICE:
            for j in range(n):
                val[o + j] = val[ia + k[i] + j]
        elif opc == GATHER:
            p = k[i]
            for j in range(n):
                val[o + j] = val[ia + pool[p + j]]
        elif opc == WHERE:
            ib = off[b[i]]
            iq = off[k[i]]
            sa = 1 if off[a[i] + 1] - ia == n else 0
            sb = 1 if off[b[i] + 1] - ib == n else 0
            sq = 1 if off[k[i] + 1] - iq == n else 0
            for j in range(n):
                val[o + j] = val[ia + j * sa] if val[iq + j * sq] != 0.0 else val[ib + j * sb]
        elif opc == CONCAT:
            p = k[i]
            nparts = pool[p]
            outer = pool[p + 1]
            pos = o
            for r in range(outer):
                for q in range(nparts):
                    src = off[pool[p + 2 + 2 * q]]
                    w = pool[p + 3 + 2 * q]
                    for j in range(w):
                        val[pos + j] = val[src + r * w + j]
                    pos += w
        elif opc == SUM or opc == PROD or opc == MAX or opc == MIN:
            p = k[i]
            _reduce_fwd(opc, val, o, ia, pool[p], pool[p + 1], pool[p + 2])
        elif opc == MATMUL:
            p = k[i]
            _matmul_fwd(val, o, ia, off[b[i]], pool[p], pool[p + 1], pool[p + 2], pool[p + 3])
        elif opc == CUMSUM or opc == CUMPROD:
            p = k[i]
            _scan_fwd(opc, val, o, ia, pool[p], pool[p + 1], pool[p + 2])
        elif opc == SORT:
            p = k[i]
            _sort_fwd(val, o, ia, pool[p], pool[p + 1], pool[p + 2])
        elif INV <= opc <= EIGH:
            p = k[i]
            _linalg_fwd(opc, val, o, ia, off[b[i]] if b[i] >= 0 else 0, pool[p], pool[p + 1])
        elif opc == GUARD:
            for j in range(n):
                if val[ia + j] != val[o + j]:
                    return i
        elif opc == ARGMAX or opc == ARGMIN:
            p = k[i]
            _argext_fwd(opc == ARGMAX, val, o, ia, pool[p], pool[p + 1], pool[p + 2])
    return -1


@njit(cache=True, nogil=True, error_model="numpy")
def reverse_sweep(op, a, b, k, c, off, pool, val, adj, last):
    """Accumulate adjoints into ``adj`` for records ``last`` down to 0.

    The caller seeds ``adj`` (1.0 at the output record for a gradient, any cotangent for a
    VJP). Leaves (INPUT, CONST) are left holding their adjoints.
    """
    for i in range(last, -1, -1):
        opc = op[i]
        kind = KIND[opc]
        if kind == LEAF or kind == COMPARE or opc == GUARD or opc == ARGMAX or opc == ARGMIN:
            continue  # no derivative to propagate
        o = off[i]
        n = off[i + 1] - o
        ia = off[a[i]]
        ci = c[i]
        if kind == UNARY:
            if opc == ADDC:
                _unary_rev(addc_d, val, adj, o, n, ia, ci)
            elif opc == MULC:
                _unary_rev(mulc_d, val, adj, o, n, ia, ci)
            elif opc == DIVC:
                _unary_rev(divc_d, val, adj, o, n, ia, ci)
            elif opc == RSUBC:
                _unary_rev(rsubc_d, val, adj, o, n, ia, ci)
            elif opc == RDIVC:
                _unary_rev(rdivc_d, val, adj, o, n, ia, ci)
            elif opc == POWC:
                _unary_rev(powc_d, val, adj, o, n, ia, ci)
            elif opc == RPOWC:
                _unary_rev(rpowc_d, val, adj, o, n, ia, ci)
            elif opc == NEG:
                _unary_rev(neg_d, val, adj, o, n, ia, ci)
            elif opc == ABS:
                _unary_rev(abs_d, val, adj, o, n, ia, ci)
            elif opc == EXP:
                _unary_rev(exp_d, val, adj, o, n, ia, ci)
            elif opc == LOG:
                _unary_rev(log_d, val, adj, o, n, ia, ci)
            elif opc == SQRT:
                _unary_rev(sqrt_d, val, adj, o, n, ia, ci)
            elif opc == SQUARE:
                _unary_rev(square_d, val, adj, o, n, ia, ci)
            elif opc == SIN:
                _unary_rev(sin_d, val, adj, o, n, ia, ci)
            elif opc == COS:
                _unary_rev(cos_d, val, adj, o, n, ia, ci)
            elif opc == TAN:
                _unary_rev(tan_d, val, adj, o, n, ia, ci)
            elif opc == TANH:
                _unary_rev(tanh_d, val, adj, o, n, ia, ci)
            elif opc == SINH:
                _unary_rev(sinh_d, val, adj, o, n, ia, ci)
            elif opc == COSH:
                _unary_rev(cosh_d, val, adj, o, n, ia, ci)
            elif opc == ARCSIN:
                _unary_rev(arcsin_d, val, adj, o, n, ia, ci)
            elif opc == ARCCOS:
                _unary_rev(arccos_d, val, adj, o, n, ia, ci)
            elif opc == ARCTAN:
                _unary_rev(arctan_d, val, adj, o, n, ia, ci)
            elif opc == LOG1P:
                _unary_rev(log1p_d, val, adj, o, n, ia, ci)
            elif opc == EXPM1:
                _unary_rev(expm1_d, val, adj, o, n, ia, ci)
            elif opc == EXP2:
                _unary_rev(exp2_d, val, adj, o, n, ia, ci)
            elif opc == LOG2:
                _unary_rev(log2_d, val, adj, o, n, ia, ci)
            elif opc == LOG10:
                _unary_rev(log10_d, val, adj, o, n, ia, ci)
            elif opc == CBRT:
                _unary_rev(cbrt_d, val, adj, o, n, ia, ci)
            elif opc == ARCSINH:
                _unary_rev(arcsinh_d, val, adj, o, n, ia, ci)
            elif opc == ARCCOSH:
                _unary_rev(arccosh_d, val, adj, o, n, ia, ci)
            elif opc == ARCTANH:
                _unary_rev(arctanh_d, val, adj, o, n, ia, ci)
            elif opc == EXPIT:
                _unary_rev(expit_d, val, adj, o, n, ia, ci)
            elif opc == ERF:
                _unary_rev(erf_d, val, adj, o, n, ia, ci)
            elif opc == ERFC:
                _unary_rev(erfc_d, val, adj, o, n, ia, ci)
            elif opc == GAMMALN:
                _unary_rev(gammaln_d, val, adj, o, n, ia, ci)
            elif opc == DIGAMMA:
                _unary_rev(digamma_d, val, adj, o, n, ia, ci)
            elif opc == LOG_NDTR:
                _unary_rev(log_ndtr_d, val, adj, o, n, ia, ci)
            # STOPGRAD, SIGN, FLOOR, CEIL, RINT, TRUNC: zero derivative, nothing to do
            continue
        if kind == BINARY:
            ib = off[b[i]]
            sa = 1 if off[a[i] + 1] - ia == n else 0
            sb = 1 if off[b[i] + 1] - ib == n else 0
            if opc == ADD:
                _binary_rev(add_d, val, adj, o, n, ia, sa, ib, sb)
            elif opc == MUL:
                _binary_rev(mul_d, val, adj, o, n, ia, sa, ib, sb)
            elif opc == SUB:
                _binary_rev(sub_d, val, adj, o, n, ia, sa, ib, sb)
            elif opc == DIV:
                _binary_rev(div_d, val, adj, o, n, ia, sa, ib, sb)
            elif opc == POW:
                _binary_rev(pow_d, val, adj, o, n, ia, sa, ib, sb)
            elif opc == ARCTAN2:
                _binary_rev(arctan2_d, val, adj, o, n, ia, sa, ib, sb)
            elif opc == MAXIMUM:
                _binary_rev(maximum_d, val, adj, o, n, ia, sa, ib, sb)
            elif opc == MINIMUM:
                _binary_rev(minimum_d, val, adj, o, n, ia, sa, ib, sb)
            elif opc == LOGADDEXP:
                _binary_rev(logaddexp_d, val, adj, o, n, ia, sa, ib, sb)
            elif opc == LOGADDEXP2:
                _binary_rev(logaddexp2_d, val, adj, o, n, ia, sa, ib, sb)
            elif opc == HYPOT:
                _binary_rev(hypot_d, val, adj, o, n, ia, sa, ib, sb)
            elif opc == FMAX:
                _binary_rev(fmax_d, val, adj, o, n, ia, sa, ib, sb)
            elif opc == FMIN:
                _binary_rev(fmin_d, val, adj, o, n, ia, sa, ib, sb)
            elif opc == XLOGY:
                _binary_rev(xlogy_d, val, adj, o, n, ia, sa, ib, sb)
            elif opc == FMOD:
                _binary_rev(fmod_d, val, adj, o, n, ia, sa, ib, sb)
            elif opc == REMAINDER:
                _binary_rev(remainder_d, val, adj, o, n, ia, sa, ib, sb)
            elif opc == COPYSIGN:
                _binary_rev(copysign_d, val, adj, o, n, ia, sa, ib, sb)
            # FLOORDIV: piecewise constant, no derivative
            continue
        if opc == SLICE:
            s = ia + k[i]
            for j in range(n):
                adj[s + j] += adj[o + j]
        elif opc == GATHER:  # adjoint of a gather is a scatter-add
            p = k[i]
            for j in range(n):
                adj[ia + pool[p + j]] += adj[o + j]
        elif opc == WHERE:
            ib = off[b[i]]
            iq = off[k[i]]
            sa = 1 if off[a[i] + 1] - ia == n else 0
            sb = 1 if off[b[i] + 1] - ib == n else 0
            sq = 1 if off[k[i] + 1] - iq == n else 0
            for j in range(n):
                if val[iq + j * sq] != 0.0:
                    adj[ia + j * sa] += adj[o + j]
                else:
                    adj[ib + j * sb] += adj[o + j]
        elif opc == CONCAT:
            p = k[i]
            nparts = pool[p]
            outer = pool[p + 1]
            pos = o
            for r in range(outer):
                for q in range(nparts):
                    src = off[pool[p + 2 + 2 * q]]
                    w = pool[p + 3 + 2 * q]
                    for j in range(w):
                        adj[src + r * w + j] += adj[pos + j]
                    pos += w
        elif opc == SUM or opc == PROD or opc == MAX or opc == MIN:
            p = k[i]
            _reduce_rev(opc, val, adj, o, ia, pool[p], pool[p + 1], pool[p + 2])
        elif opc == MATMUL:
            p = k[i]
            _matmul_rev(val, adj, o, ia, off[b[i]], pool[p], pool[p + 1], pool[p + 2],
                        pool[p + 3], op[a[i]] != CONST, op[b[i]] != CONST)
        elif opc == CUMSUM or opc == CUMPROD:
            p = k[i]
            _scan_rev(opc, val, adj, o, ia, pool[p], pool[p + 1], pool[p + 2])
        elif opc == SORT:
            p = k[i]
            _sort_rev(val, adj, o, ia, pool[p], pool[p + 1], pool[p + 2])
        elif INV <= opc <= EIGH:
            p = k[i]
            _linalg_rev(opc, val, adj, o, ia, off[b[i]] if b[i] >= 0 else 0, pool[p],
                        pool[p + 1])



@njit(cache=True, nogil=True, error_model="numpy")
def replay_gradient(op, a, b, k, c, off, pool, val0, in_ids, xin, out_id, want_grad):
    """One call for a whole replay of a scalar-output tape (saves per-call dispatch).

    Loads the concatenated inputs ``xin`` into the INPUT records ``in_ids`` of a copy of
    ``val0``, runs the forward sweep and, if ``want_grad``, the reverse sweep seeded at
    ``out_id``. Returns ``(failed guard or -1, output value, concatenated input adjoints)``.
    """
    val = val0.copy()
    pos = 0
    for i in in_ids:
        lo = off[i]
        m = off[i + 1] - lo
        val[lo:lo + m] = xin[pos:pos + m]
        pos += m
    g = np.zeros(xin.shape[0])
    bad = forward_sweep(op, a, b, k, c, off, pool, val, 0)
    if bad >= 0:
        return bad, 0.0, g
    value = val[off[out_id]]
    if want_grad:
        adj = np.zeros(val.shape[0])
        adj[off[out_id]] = 1.0
        reverse_sweep(op, a, b, k, c, off, pool, val, adj, out_id)
        pos = 0
        for i in in_ids:
            lo = off[i]
            m = off[i + 1] - lo
            g[pos:pos + m] = adj[lo:lo + m]
            pos += m
    return bad, value, g

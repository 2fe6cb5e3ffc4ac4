"""Op table entries: elementwise ops, each a value expression beside its local partials.

The convention (operands ``x``, ``y``, result ``z``, immediate ``c``; partials ``dz/dx``,
``dz/dy``) is explained once in :mod:`jittape.optable.entry`. Helpers such as ``npy_log`` and
``digamma`` are the scalar functions of :mod:`jittape.optable.scalar_math`. Formulas: Abramowitz &
Stegun, "Handbook of Mathematical Functions" (ch. 4, 6, 7, 26); NumPy's ufunc docs for the
values at domain edges.
"""

import math
import operator

import numpy as np

from ..entry import BINARY, COMPARE, SELECT, UNARY, elementwise

_SP = "scipy.special."


def U(name, numpy, value, partial, doc, **kw):
    return elementwise(name, UNARY, numpy, value, partial, doc, **kw)


def C(name, numpy, value, partial, doc, **kw):
    """One operand and the scalar constant ``c`` kept in the record's immediate."""
    return elementwise(name, UNARY, numpy, value, partial, doc, uses_c=True, **kw)


def B(name, numpy, value, partials, doc, **kw):
    return elementwise(name, BINARY, numpy, value, partials, doc, **kw)


def CMP(name, numpy, value, scalar):
    return elementwise(name, COMPARE, numpy, value, ("0.0", "0.0"),
                       "no derivative (piecewise constant)", scalar=scalar)


_PIECEWISE = "zero derivative (piecewise constant)"

UNARY_OPS = [
    U("neg", [np.negative], "-x", "-1.0", "xbar += -zbar", scalar=lambda x: -x),
    U("abs", [np.absolute], "abs(x)", "1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)",
      "xbar += zbar * sign(x)   (0 at x = 0)", scalar=abs),
    U("exp", [np.exp], "math.exp(x)", "z", "xbar += zbar * z", scalar=math.exp),
    U("log", [np.log], "npy_log(x)", "1.0 / x", "xbar += zbar / x", scalar=math.log,
      lo=0.2, hi=3.0),
    U("sqrt", [np.sqrt], "math.sqrt(x) if x >= 0.0 else math.nan", "0.5 / z",
      "xbar += zbar * 0.5 / z", scalar=math.sqrt, lo=0.2, hi=3.0),
    U("square", [np.square], "x * x", "2.0 * x", "xbar += zbar * 2x", scalar=lambda x: x * x),
    U("sin", [np.sin], "math.sin(x)", "math.cos(x)", "xbar += zbar * cos(x)",
      scalar=math.sin, lo=-3.0, hi=3.0),
    U("cos", [np.cos], "math.cos(x)", "-math.sin(x)", "xbar += -zbar * sin(x)",
      scalar=math.cos, lo=-3.0, hi=3.0),
    U("tan", [np.tan], "math.tan(x)", "1.0 + z * z", "xbar += zbar * (1 + z^2)",
      scalar=math.tan, lo=-1.2, hi=1.2),
    U("tanh", [np.tanh], "math.tanh(x)", "1.0 - z * z", "xbar += zbar * (1 - z^2)",
      scalar=math.tanh),
    U("sinh", [np.sinh], "math.sinh(x)", "math.sqrt(1.0 + z * z)",
      "xbar += zbar * cosh(x) = zbar * sqrt(1 + z^2)", scalar=math.sinh),
    U("cosh", [np.cosh], "math.cosh(x)", "sinh_from_cosh(x, z)", "xbar += zbar * sinh(x)",
      scalar=math.cosh),
    U("arcsin", [np.arcsin], "math.asin(x) if -1.0 <= x <= 1.0 else math.nan",
      "1.0 / math.sqrt(1.0 - x * x) if -1.0 <= x <= 1.0 else math.nan",
      "xbar += zbar / sqrt(1 - x^2)", scalar=math.asin, lo=-0.9, hi=0.9),
    U("arccos", [np.arccos], "math.acos(x) if -1.0 <= x <= 1.0 else math.nan",
      "-1.0 / math.sqrt(1.0 - x * x) if -1.0 <= x <= 1.0 else math.nan",
      "xbar += -zbar / sqrt(1 - x^2)", scalar=math.acos, lo=-0.9, hi=0.9),
    # (the branches at |x| >= 1e150, where the partial is 0 to float64, keep the
    # second-order rules finite at +-inf: -2x / (1 + x^2)^2 is inf / inf there)
    U("arctan", [np.arctan], "math.atan(x)", "1.0 / (1.0 + x * x) if abs(x) < 1e150 else 0.0",
      "xbar += zbar / (1 + x^2)", scalar=math.atan, lo=-3.0, hi=3.0),
    U("log1p", [np.log1p], "npy_log1p(x)", "1.0 / (1.0 + x)", "xbar += zbar / (1 + x)",
      scalar=math.log1p, lo=-0.7, hi=3.0),
    U("expm1", [np.expm1], "math.expm1(x)", "z + 1.0", "xbar += zbar * (z + 1)",
      scalar=math.expm1),
    U("stopgrad", [], "x", "0.0", "identity; xbar unchanged (jittape.stop_gradient)",
      scalar=float),
]

CONST_OPS = [
    C("addc", [np.add, np.subtract], "x + c", "1.0", "z = x + c; xbar += zbar"),
    C("mulc", [np.multiply], "x * c", "c", "z = x * c; xbar += zbar * c"),
    C("divc", [np.divide], "x / c", "1.0 / c", "z = x / c; xbar += zbar / c"),
    C("rsubc", [np.subtract], "c - x", "-1.0", "z = c - x; xbar += -zbar"),
    # -c / x^2 from z alone (no division for c = 1, no x in the reverse sweep); c = 0: -z / x
    C("rdivc", [np.divide], "c / x", "-(z / c) * z if c != 0.0 else -z / x",
      "z = c / x; xbar += -zbar * z^2 / c   (-zbar * z / x for c = 0)", lo=0.5, hi=2.0),
    C("powc", [np.power], "powc(x, c)", "pow_dx(x, c, z)",
      "z = x^c; xbar += zbar * c * x^(c-1)", lo=0.3, hi=2.0),
    C("rpowc", [np.power], "c ** x", "0.0 if z == 0.0 else z * math.log(c)",
      "z = c^x; xbar += zbar * z * log(c)"),
]

BINARY_OPS = [
    B("add", [np.add], "x + y", ("1.0", "1.0"), "xbar += zbar; ybar += zbar",
      scalar=operator.add),
    B("sub", [np.subtract], "x - y", ("1.0", "-1.0"), "xbar += zbar; ybar += -zbar",
      scalar=operator.sub),
    B("mul", [np.multiply], "x * y", ("y", "x"), "xbar += zbar * y; ybar += zbar * x",
      scalar=operator.mul),
    # one division for both partials (the second reuses the first: t = 1 / y)
    B("div", [np.divide], "x / y", ("1.0 / y", "-(1.0 / y) * z"),
      "t = 1 / y; xbar += zbar * t; ybar += -zbar * t * z", scalar=operator.truediv, lo=0.3),
    B("pow", [np.power], "x ** y", ("pow_dx(x, y, z)", "0.0 if z == 0.0 else z * math.log(x)"),
      "xbar += zbar * y * x^(y-1); ybar += zbar * z * log(x)   (0 where z = 0)", scalar=math.pow,
      lo=0.3),
    B("arctan2", [np.arctan2], "math.atan2(x, y)",
      ("y / (x * x + y * y) if abs(x) < 1e150 and abs(y) < 1e150 else 0.0",
       "-x / (x * x + y * y) if abs(x) < 1e150 and abs(y) < 1e150 else 0.0"),
      "z = atan2(x, y); xbar += zbar * y / (x^2 + y^2); ybar += -zbar * x / (x^2 + y^2)",
      scalar=math.atan2),
    B("maximum", [np.maximum], "npy_maximum(x, y)", ("max_share(x, y)", "max_share(y, x)"),
      "the larger operand gets zbar (ties: half each)"),
    B("minimum", [np.minimum], "npy_minimum(x, y)", ("max_share(y, x)", "max_share(x, y)"),
      "the smaller operand gets zbar (ties: half each)"),
]

COMPARE_OPS = [
    CMP("lt", [np.less], "1.0 if x < y else 0.0", operator.lt),
    CMP("le", [np.less_equal], "1.0 if x <= y else 0.0", operator.le),
    CMP("gt", [np.greater], "1.0 if x > y else 0.0", operator.gt),
    CMP("ge", [np.greater_equal], "1.0 if x >= y else 0.0", operator.ge),
    CMP("eq", [np.equal], "1.0 if x == y else 0.0", operator.eq),
    CMP("ne", [np.not_equal], "1.0 if x != y else 0.0", operator.ne),
]

WHERE = elementwise(
    "where", SELECT, [np.where], "x if q != 0.0 else y",
    ("1.0 if q != 0.0 else 0.0", "0.0 if q != 0.0 else 1.0"),
    "z = x if q else y; xbar += zbar * q; ybar += zbar * (1 - q)   (q: the condition record "
    "k, no derivative)", shapes=(((4,), (4,)),))

MORE_UNARY_OPS = [
    U("exp2", [np.exp2], "2.0 ** x", "z * LN2", "xbar += zbar * z * ln 2"),
    U("log2", [np.log2], "npy_log(x) / LN2", "1.0 / (x * LN2)", "xbar += zbar / (x ln 2)",
      scalar=math.log2, lo=0.2, hi=3.0),
    U("log10", [np.log10], "npy_log(x) / LN10", "1.0 / (x * LN10)",
      "xbar += zbar / (x ln 10)", scalar=math.log10, lo=0.2, hi=3.0),
    U("cbrt", [np.cbrt], "math.copysign(abs(x) ** (1.0 / 3.0), x)", "1.0 / (3.0 * z * z)",
      "xbar += zbar / (3 z^2)", lo=0.2, hi=3.0),
    U("arcsinh", [np.arcsinh], "math.asinh(x)", "1.0 / math.sqrt(x * x + 1.0)",
      "xbar += zbar / sqrt(x^2 + 1)", scalar=math.asinh, lo=-3.0, hi=3.0),
    U("arccosh", [np.arccosh], "math.acosh(x) if x >= 1.0 else math.nan",
      "1.0 / math.sqrt(x * x - 1.0) if x >= 1.0 else math.nan",
      "xbar += zbar / sqrt(x^2 - 1)", lo=1.2, hi=3.0),
    U("arctanh", [np.arctanh], "npy_arctanh(x)", "1.0 / (1.0 - x * x)",
      "xbar += zbar / (1 - x^2)", lo=-0.9, hi=0.9),
    U("expit", [_SP + "expit"], "expit(x)", "z * (1.0 - z)",
      "z = 1 / (1 + e^-x); xbar += zbar * z (1 - z)", lo=-4.0, hi=4.0),
    # (exp(-x^2) is 0 in float64 beyond |x| = 27.3: the branch keeps the second-order rule,
    # -2x exp(-x^2), from being -inf * 0 at x = +-inf)
    U("erf", [_SP + "erf"], "math.erf(x)", "1.1283791670955126 * math.exp(-x * x) if abs(x) < 28.0 else 0.0",
      "xbar += zbar * 2/sqrt(pi) e^(-x^2)", scalar=math.erf),
    U("erfc", [_SP + "erfc"], "math.erfc(x)", "-1.1283791670955126 * math.exp(-x * x) if abs(x) < 28.0 else 0.0",
      "xbar += -zbar * 2/sqrt(pi) e^(-x^2)", scalar=math.erfc),
    U("gammaln", [_SP + "gammaln"], "gammaln(x)", "digamma(x)",
      "z = log|Gamma(x)|; xbar += zbar * psi(x)", lo=0.3, hi=6.0),
    U("digamma", [_SP + "digamma", _SP + "psi"], "digamma(x)", "trigamma(x)",
      "z = psi(x); xbar += zbar * psi'(x) (trigamma, A & S 6.4)", lo=0.3, hi=8.0),
    U("log_ndtr", [_SP + "log_ndtr"], "cs_log_ndtr(x)",
      # phi(x) / Phi(x) = sqrt(2/pi) / erfcx(-x/sqrt 2): finite where exp(-x^2/2 - z) is
      # inf - inf (x = -inf: the limit +inf; -x where erfcx(-x/sqrt 2) would underflow; 0
      # where phi(x) underflows, which keeps the second-order rule finite at +inf)
      "0.0 if x > 40.0 else (0.7978845608028654 / cs_erfcx(-0.7071067811865476 * x) if "
      "x > -1e150 else -x)",
      "z = log Phi(x); xbar += zbar * phi(x) / Phi(x) = zbar sqrt(2/pi) / erfcx(-x/sqrt 2)",
      lo=-4.0, hi=4.0),
    U("sign", [np.sign], "np.sign(x)", "0.0", _PIECEWISE),
    U("floor", [np.floor], "np.floor(x)", "0.0", _PIECEWISE),
    U("ceil", [np.ceil], "np.ceil(x)", "0.0", _PIECEWISE),
    U("rint", [np.rint], "np.rint(x)", "0.0", _PIECEWISE + "; also np.round"),
    U("trunc", [np.trunc, np.fix], "np.trunc(x)", "0.0", _PIECEWISE),
]

MORE_BINARY_OPS = [
    B("logaddexp", [np.logaddexp], "logaddexp(x, y)",
      # (the tie branch is for x = y = +-inf, where x - z is nan; at finite ties the
      # exponential is 1/2 too, and its derivative is the second-order rule's)
      # (z = +inf with one operand finite: the infinite one's partial is 1, the other's 0)
      ("0.5 if x == y and math.isinf(x) else ((1.0 if x == z else 0.0) if z == math.inf "
       "else math.exp(x - z))",
       "0.5 if x == y and math.isinf(x) else ((1.0 if y == z else 0.0) if z == math.inf "
       "else math.exp(y - z))"),
      "xbar += zbar e^(x - z); ybar += zbar e^(y - z)"),
    B("logaddexp2", [np.logaddexp2], "logaddexp2(x, y)",
      ("0.5 if x == y and math.isinf(x) else ((1.0 if x == z else 0.0) if z == math.inf "
       "else 2.0 ** (x - z))",
       "0.5 if x == y and math.isinf(x) else ((1.0 if y == z else 0.0) if z == math.inf "
       "else 2.0 ** (y - z))"),
      "xbar += zbar 2^(x - z); ybar += zbar 2^(y - z)"),
    B("hypot", [np.hypot], "math.hypot(x, y)",
      ("0.0 if z == 0.0 else x / z", "0.0 if z == 0.0 else y / z"),
      "xbar += zbar x / z; ybar += zbar y / z", scalar=math.hypot, lo=0.2),
    B("fmax", [np.fmax], "npy_fmax(x, y)",
      ("0.0 if x != x else (1.0 if y != y else max_share(x, y))",
       "1.0 if x != x else (0.0 if y != y else max_share(y, x))"),
      "as maximum; a NaN operand is ignored and gets nothing"),
    B("fmin", [np.fmin], "npy_fmin(x, y)",
      ("0.0 if x != x else (1.0 if y != y else max_share(y, x))",
       "1.0 if x != x else (0.0 if y != y else max_share(x, y))"),
      "as minimum; a NaN operand is ignored and gets nothing"),
    B("xlogy", [_SP + "xlogy"], "xlogy(x, y)", ("npy_log(y)", "x / y"),
      "z = x log y; xbar += zbar log y; ybar += zbar x/y", lo=0.2),
]

LAST_BINARY_OPS = [
    B("fmod", [np.fmod], "np.fmod(x, y) if y != 0.0 and abs(x) < math.inf else math.nan",
      ("1.0", "-np.trunc(x / y)"), "xbar += zbar; ybar += -zbar trunc(x / y)", lo=0.3),
    B("remainder", [np.remainder, np.mod], "npy_remainder(x, y)", ("1.0", "-np.floor(x / y)"),
      "xbar += zbar; ybar += -zbar floor(x / y)", lo=0.3),
    B("copysign", [np.copysign], "math.copysign(x, y)",
      ("math.copysign(1.0, x) * math.copysign(1.0, y)", "0.0"),
      "xbar += zbar sign(x) sign(y); y gets no derivative"),
    B("floordiv", [np.floor_divide], "npy_floordiv(x, y)", ("0.0", "0.0"), _PIECEWISE,
      lo=0.3),
]

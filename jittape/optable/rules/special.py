"""Op table entries: SciPy's special functions (``scipy.special``), elementwise.

The convention (operands ``x``, ``y``, ``q`` in the function's argument order, result ``z``;
partials ``dz/dx``, ...) is explained once in :mod:`jittape.optable.entry`. Values call SciPy's own
C kernels ``cs_<name>`` (:mod:`jittape.optable.externals`), so a replay computes exactly what SciPy
computes; ``polygamma`` and ``multigammaln``, which SciPy composes in Python, and the
derivatives' edge cases are helpers of :mod:`jittape.optable.scalar_special`.

Derivatives are with respect to the continuous argument. Orders and shape parameters with no
cheap closed-form derivative (the order of the Bessel functions, ``a`` of ``gammainc``,
``a``, ``b`` of ``betainc``, ``n`` of ``polygamma``, ``d`` of ``multigammaln``) are listed
in ``constant``: an active value there is refused, never given a zero derivative.
Formulas: NIST DLMF, chapters 5 (gamma, polygamma), 7 (error functions), 8 (incomplete
gamma and beta), 10 (Bessel functions: 10.6.1-10.6.2 recurrences of the derivatives, 10.29.1
for the modified ones), 35 (multivariate gamma); section numbers in the docs below.
"""

import numpy as np

from ..entry import BINARY, TERNARY, UNARY, elementwise

_SP = "scipy.special."
SQRT_PI_2 = 0.886226925452758  # sqrt(pi) / 2
_SMOOTH_ORDERS = np.array([0.0, 1.5, -0.5])  # Spec orders: integer, half-integers
_INT_ORDERS = np.array([0.0, 1.0, 3.0])
_SHAPES = (((),), ((3,),), ((2, 3),))  # one array argument; the orders broadcast against it


def _scipy(name):
    """``scipy.special.<name>`` resolved when called (importing jittape never imports SciPy)."""
    def call(*args):
        import scipy.special
        return getattr(scipy.special, name)(*args)
    call.__name__ = name
    return call


def U(name, value, partial, doc, lo=-2.0, hi=2.0, **kw):
    return elementwise(name, UNARY, [_SP + name], value, partial, doc, lo=lo, hi=hi, **kw)


def B(name, value, partials, doc, lo=0.3, hi=3.0, **kw):
    return elementwise(name, BINARY, [_SP + name], value, partials, doc, lo=lo, hi=hi, **kw)


def ORDER(name, value, partial, doc, orders=_SMOOTH_ORDERS, arg="v", lo=0.3, hi=4.0):
    """``name(v, x)``: derivative in x only; the order (shape) ``v`` must be a constant."""
    f = _scipy(name)
    return elementwise(name, BINARY, [_SP + name], value, ("0.0", partial), doc, lo=lo, hi=hi,
                       shapes=_SHAPES, fn=lambda x: f(orders, x), args=(arg, "x"),
                       constant=(arg,))


SPECIAL_OPS = [
    # gamma function and relatives (DLMF 5.2.2, 5.15.1)
    U("gamma", "cs_gamma(x)", "z * cs_psi(x)", "xbar += zbar * Gamma(x) psi(x)",
      lo=0.3, hi=5.0),
    U("rgamma", "cs_rgamma(x)", "rgamma_dx(x, z)",
      "z = 1/Gamma(x); xbar += -zbar * z psi(x)   ((-1)^n n! at x = -n)", lo=-2.5, hi=3.0),
    ORDER("polygamma", "polygamma(x, y)", "polygamma(x + 1.0, y)",
          "z = psi^(n)(x); xbar += zbar * psi^(n+1)(x)", _INT_ORDERS, "n"),
    elementwise("multigammaln", BINARY, [_SP + "multigammaln"], "multigammaln(x, y)",
                ("multigammaln_da(x, y)", "0.0"),
                "z = log Gamma_d(a) (DLMF 35.3.4); abar += zbar * sum_{j<d} psi(a - j/2)",
                lo=1.2, hi=5.0, shapes=_SHAPES,
                fn=lambda a: _scipy("multigammaln")(a, 3), args=("a", "d"), constant=("d",)),
    B("beta", "cs_beta(x, y)", ("0.0 if z == 0.0 else z * (cs_psi(x) - cs_psi(x + y))",
                                "0.0 if z == 0.0 else z * (cs_psi(y) - cs_psi(x + y))"),
      "z = B(a, b); abar += zbar z (psi(a) - psi(a+b)); bbar += zbar z (psi(b) - psi(a+b))"),
    B("betaln", "cs_betaln(x, y)", ("cs_psi(x) - cs_psi(x + y)", "cs_psi(y) - cs_psi(x + y)"),
      "z = log|B(a, b)|; abar += zbar (psi(a) - psi(a+b)); bbar += zbar (psi(b) - psi(a+b))"),
    # incomplete gamma and beta functions (DLMF 8.2.4, 8.17.2)
    ORDER("gammainc", "cs_gammainc(x, y)", "gammainc_dx(x, y)",
          "z = P(a, x); xbar += zbar x^(a-1) e^-x / Gamma(a)",
          np.array([0.5, 2.0, 7.5]), "a", 0.2, 6.0),
    ORDER("gammaincc", "cs_gammaincc(x, y)", "-gammainc_dx(x, y)",
          "z = Q(a, x); xbar += -zbar x^(a-1) e^-x / Gamma(a)",
          np.array([0.5, 2.0, 7.5]), "a", 0.2, 6.0),
    elementwise("betainc", TERNARY, [_SP + "betainc"], "cs_betainc(x, y, q)",
                ("0.0", "0.0", "betainc_dx(x, y, q)"),
                "z = I_x(a, b); xbar += zbar x^(a-1) (1-x)^(b-1) / B(a, b)",
                lo=0.05, hi=0.95, shapes=_SHAPES, args=("a", "b", "x"), constant=("a", "b"),
                fn=lambda x: _scipy("betainc")(np.array([0.5, 2.0, 5.0]), 3.0, x)),
    elementwise("betaincc", TERNARY, [_SP + "betaincc"], "cs_betaincc(x, y, q)",
                ("0.0", "0.0", "-betainc_dx(x, y, q)"),
                "z = 1 - I_x(a, b); xbar += -zbar x^(a-1) (1-x)^(b-1) / B(a, b)",
                lo=0.05, hi=0.95, shapes=_SHAPES, args=("a", "b", "x"), constant=("a", "b"),
                fn=lambda x: _scipy("betaincc")(1.5, np.array([0.5, 2.0, 5.0]), x)),
    # error function, normal distribution and logistic relatives (DLMF 7.2.1, 7.2.3)
    U("erfinv", "cs_erfinv(x)", f"{SQRT_PI_2!r} * math.exp(z * z)",
      "xbar += zbar sqrt(pi)/2 exp(z^2)", lo=-0.9, hi=0.9),
    U("erfcinv", "cs_erfcinv(x)", f"-{SQRT_PI_2!r} * math.exp(z * z)",
      "xbar += -zbar sqrt(pi)/2 exp(z^2)", lo=0.1, hi=1.9),
    U("erfcx", "cs_erfcx(x)",
      # for x >= 1e8 the asymptotic -1/(sqrt(pi) x^2) (DLMF 7.12.1; relative error 3/(2x^2)):
      # 2 x z - 2/sqrt(pi) cancels there, and is inf * 0 at x = inf (the limit 0)
      "2.0 * x * z - 1.1283791670955126 if x < 1e8 else -0.5641895835477563 * x ** -2.0",
      "z = exp(x^2) erfc(x); xbar += zbar (2 x z - 2/sqrt(pi))"),
    U("ndtr", "cs_ndtr(x)",  # (0 beyond |x| = 38.6 in float64: see erf's entry)
      "0.3989422804014327 * math.exp(-0.5 * x * x) if abs(x) < 40.0 else 0.0",
      "xbar += zbar exp(-x^2/2) / sqrt(2 pi)", lo=-3.0, hi=3.0),
    U("ndtri", "cs_ndtri(x)", "2.5066282746310002 * math.exp(0.5 * z * z)",
      "xbar += zbar sqrt(2 pi) exp(z^2/2)", lo=0.05, hi=0.95),
    U("logit", "cs_logit(x)", "1.0 / (x * (1.0 - x))", "xbar += zbar / (x (1 - x))",
      lo=0.05, hi=0.95),
    U("log_expit", "cs_log_expit(x)", "expit(-x)", "xbar += zbar expit(-x)", lo=-4.0, hi=4.0),
    U("entr", "cs_entr(x)", "-(npy_log(x) + 1.0)", "z = -x log x; xbar += -zbar (log x + 1)",
      lo=0.2, hi=3.0),
    B("rel_entr", "cs_rel_entr(x, y)", ("npy_log(x / y) + 1.0", "-x / y"),
      "z = x log(x/y); xbar += zbar (log(x/y) + 1); ybar += -zbar x/y"),
    B("xlog1py", "cs_xlog1py(x, y)", ("npy_log1p(y)", "x / (1.0 + y)"),
      "z = x log1p(y); xbar += zbar log1p(y); ybar += zbar x/(1+y)", lo=-0.5, hi=2.0),
    U("spence", "cs_spence(x)", "spence_dx(x)",
      "z = int_1^x log t/(1-t) dt; xbar += zbar log x / (1 - x)", lo=0.1, hi=3.0),
    # Bessel functions of order 0 and 1 (DLMF 10.6.2, 10.29.2; e-scaled: product rule)
    U("j0", "cs_j0(x)", "-cs_j1(x)", "xbar += -zbar J1(x)", lo=-6.0, hi=6.0),
    U("j1", "cs_j1(x)", "cs_j0(x) - (z / x if x != 0.0 else 0.5)",
      "xbar += zbar (J0(x) - J1(x)/x)", lo=-6.0, hi=6.0),
    U("y0", "cs_y0(x)", "-cs_y1(x)", "xbar += -zbar Y1(x)", lo=0.3, hi=6.0),
    U("y1", "cs_y1(x)", "cs_y0(x) - z / x", "xbar += zbar (Y0(x) - Y1(x)/x)", lo=0.3, hi=6.0),
    U("i0", "cs_i0(x)", "cs_i1(x)", "xbar += zbar I1(x)", lo=-3.0, hi=3.0),
    U("i1", "cs_i1(x)", "cs_i0(x) - (z / x if x != 0.0 else 0.5)",
      "xbar += zbar (I0(x) - I1(x)/x)", lo=-3.0, hi=3.0),
    U("i0e", "cs_i0e(x)", "cs_i1e(x) - np.sign(x) * z",
      "z = e^-|x| I0(x); xbar += zbar (I1e(x) - sign(x) z)", lo=0.1, hi=4.0),
    U("i1e", "cs_i1e(x)", "cs_i0e(x) - (z / x if x != 0.0 else 0.5) - np.sign(x) * z",
      "z = e^-|x| I1(x); xbar += zbar (I0e(x) - z/x - sign(x) z)", lo=0.1, hi=4.0),
    U("k0", "cs_k0(x)", "-cs_k1(x)", "xbar += -zbar K1(x)", lo=0.3, hi=4.0),
    U("k1", "cs_k1(x)", "-cs_k0(x) - z / x", "xbar += -zbar (K0(x) + K1(x)/x)",
      lo=0.3, hi=4.0),
    U("k0e", "cs_k0e(x)", "z - cs_k1e(x)", "z = e^x K0(x); xbar += zbar (z - K1e(x))",
      lo=0.3, hi=4.0),
    U("k1e", "cs_k1e(x)", "z - cs_k0e(x) - z / x",
      "z = e^x K1(x); xbar += zbar (z - K0e(x) - z/x)", lo=0.3, hi=4.0),
    # Bessel functions of real order v (DLMF 10.6.1, 10.29.1)
    ORDER("jv", "cs_jv(x, y)", "0.5 * (cs_jv(x - 1.0, y) - cs_jv(x + 1.0, y))",
          "xbar += zbar (J_{v-1}(x) - J_{v+1}(x)) / 2", lo=0.2, hi=6.0),
    ORDER("yv", "cs_yv(x, y)", "0.5 * (cs_yv(x - 1.0, y) - cs_yv(x + 1.0, y))",
          "xbar += zbar (Y_{v-1}(x) - Y_{v+1}(x)) / 2", lo=0.5, hi=6.0),
    ORDER("yn", "cs_yn(x, y)", "0.5 * (cs_yn(x - 1.0, y) - cs_yn(x + 1.0, y))",
          "xbar += zbar (Y_{n-1}(x) - Y_{n+1}(x)) / 2",
          _INT_ORDERS, "n", 0.5, 6.0),
    ORDER("iv", "cs_iv(x, y)", "0.5 * (cs_iv(x - 1.0, y) + cs_iv(x + 1.0, y))",
          "xbar += zbar (I_{v-1}(x) + I_{v+1}(x)) / 2", lo=0.2),
    ORDER("ive", "cs_ive(x, y)",
          "0.5 * (cs_ive(x - 1.0, y) + cs_ive(x + 1.0, y)) - np.sign(y) * z",
          "z = e^-|x| I_v(x); xbar += zbar ((Ie_{v-1} + Ie_{v+1}) / 2 - sign(x) z)",
          lo=0.2),
    ORDER("kv", "cs_kv(x, y)", "-0.5 * (cs_kv(x - 1.0, y) + cs_kv(x + 1.0, y))",
          "xbar += -zbar (K_{v-1}(x) + K_{v+1}(x)) / 2"),
    ORDER("kve", "cs_kve(x, y)", "z - 0.5 * (cs_kve(x - 1.0, y) + cs_kve(x + 1.0, y))",
          "z = e^x K_v(x); xbar += zbar (z - (Ke_{v-1} + Ke_{v+1}) / 2)"),
]

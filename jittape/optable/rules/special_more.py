"""Op table entries: more of SciPy's special functions, those SciPy's distributions and
libraries call (``scipy.special``), elementwise.

The convention (operands ``x``, ``y``, ``q`` in the function's argument order, result ``z``;
partials ``dz/dx``, ...) is explained once in :mod:`jittape.optable.entry`; the family's
conventions in :mod:`jittape.optable.rules.special`. Values call SciPy's own C kernels
``cs_<name>`` (:mod:`jittape.optable.externals`), so a replay computes exactly what SciPy
computes: ``scipy.special.log1p`` and ``expm1`` are entries of their own for that reason
(SciPy's kernels are not NumPy's, and differ from them in the last bit). Derivatives that
need more than an expression (series where a closed form cancels) are helpers of
:mod:`jittape.optable.scalar_special`.

Formulas: NIST DLMF (https://dlmf.nist.gov) 4.2.19 and 4.6.1 (series of exp and log1p),
4.14 (cos), 5.2.2 (psi = Gamma'/Gamma), 6.2.1 and 6.2.5 (E1, Ei), 7.2.5 (Dawson's integral),
7.2 (erfi(x) = -i erf(ix)), 8.2.4 (incomplete gamma), 8.17.2 (incomplete beta), 10.46.1 (the
Wright function); the distributions' densities as SciPy's ``scipy.stats`` pages give them.
Arguments with no closed-form derivative (degrees of freedom, the shapes of ``gammaincinv``
and ``betaincinv``, the parameters of the Wright function) are in ``constant``.

Inverse functions: ``z = F^-1(p)`` has ``dz/dp = 1 / F'(z)`` (the inverse function rule),
written with ``z``, so that one kernel call per element is the whole rule.
"""

import numpy as np

from ..entry import BINARY, TERNARY, UNARY, elementwise

_SP = "scipy.special."
_TWO_OVER_SQRT_PI = 1.1283791670955126
_SQRT_2PI = 2.5066282746310002
_SHAPES = (((),), ((3,),), ((2, 3),))  # one array argument; the constants broadcast against it
_TWO = (((4,), (4,)), ((2, 3), ()), ((), (3,)))


def _scipy(name):
    """``scipy.special.<name>`` resolved when called (importing jittape never imports SciPy)."""
    def call(*args):
        import scipy.special
        return getattr(scipy.special, name)(*args)
    call.__name__ = name
    return call


def U(name, value, partial, doc, sp=None, **kw):
    return elementwise(name, UNARY, [_SP + (sp or name)], value, partial, doc, **kw)


def B(name, value, partials, doc, args, lo=0.3, hi=3.0, **kw):
    return elementwise(name, BINARY, [_SP + name], value, partials, doc, lo=lo, hi=hi,
                       args=args, **kw)


def SHAPE(name, value, partial, doc, values, args, lo, hi):
    """``name(a, x)``: derivative in x only; ``a`` (the spec's ``values``) a constant."""
    f = _scipy(name)
    return elementwise(name, BINARY, [_SP + name], value, ("0.0", partial), doc, lo=lo, hi=hi,
                       shapes=_SHAPES, fn=lambda x: f(values, x), args=args,
                       constant=args[:1])


def T(name, value, partials, doc, args, constant, fn, lo, hi, shapes=_SHAPES, sp=""):
    """A ternary entry (``sp``: the module below ``scipy.special``, ``_ufuncs.`` for SciPy's
    private ufuncs, named ``_<name>`` there)."""
    return elementwise(name, TERNARY, [_SP + sp + ("_" if sp else "") + name], value, partials,
                       doc, lo=lo, hi=hi, shapes=shapes, fn=fn, args=args, constant=constant)


# d/dx x^(l-1) at x = 0: 0 for l > 1, 1 for l = 1, inf below
_POW_AT_0 = "(math.inf if y < 1.0 else (1.0 if y == 1.0 else 0.0))"
# the Student t density at t = y (df x), in logs: Gamma((v+1)/2) / (sqrt(v pi) Gamma(v/2))
# (1 + t^2/v)^(-(v+1)/2)
_T_LOGPDF = ("cs_gammaln(0.5 * x + 0.5) - cs_gammaln(0.5 * x) - 0.5 * npy_log(x * math.pi) "
             "- (0.5 * x + 0.5) * npy_log1p({t} * {t} / x)")
# the F density at q (dfn x, dfd y): x^(x/2) y^(y/2) q^(x/2-1) / (B(x/2, y/2)
# (x q + y)^((x+y)/2)), in logs (stable where x q / (x q + y) is near 1)
_F_PDF = ("math.exp(0.5 * x * npy_log(x) + 0.5 * y * npy_log(y) + (0.5 * x - 1.0) * npy_log(q) "
          "- 0.5 * (x + y) * npy_log(x * q + y) - cs_betaln(0.5 * x, 0.5 * y)) if q > 0.0 else "
          "(0.0 if q < 0.0 or x > 2.0 else (1.0 if x == 2.0 else math.inf))")
# tklmbda's dQ/dF = F^(l-1) + (1-F)^(l-1) and dQ/dl at fixed F (y = l, z = F)
_TK_DQ = "math.exp((y - 1.0) * math.log(z)) + math.exp((y - 1.0) * math.log1p(-z))"
_TK_DL = ("math.log(z) * math.log(z) * exprel_dx(y * math.log(z)) - math.log1p(-z) * "
          "math.log1p(-z) * exprel_dx(y * math.log1p(-z))")
# Where F^(l-1) + (1-F)^(l-1) = e^A + e^B (A = (l-1) a, B = (l-1) b) passes e^300, its square
# overflows in the second-order rules (inf / inf), and then e^A or the exprel' terms (inf -
# inf). There (l <= -1, so A, B >= 0 and no cancellation near l a = 0) both partials are
# written with r = e^A / (e^A + e^B) = expit(A - B): a^2 exprel'(l a) = ((l a - 1) F^l + 1)/l^2
# (the 1s cancel in dF/dl) gives dF/dx = r e^-A, dF/dl = -((a - 1/l) F r - (b - 1/l) (1-F)
# (1-r)) / l. r is 0 or 1 beyond |A - B| = 745, where its derivative would be 0 * inf. At
# l = +-inf the partials are 0: SciPy's F is 0 or 1 at +inf, and from about l = -1e16 down
# its bisection sees only inf - inf = nan and returns one F whatever x and l are.
# (math.log, math.log1p: z is in (0, 1) there, where they are npy_log's and npy_log1p's bits,
# and the sweeps' second-order branch compiles in 5 s instead of 40.)
_TK_ZERO = "z <= 0.0 or z >= 1.0 or math.isinf(y)"
_TK_A, _TK_B = "(y - 1.0) * math.log(z)", "(y - 1.0) * math.log1p(-z)"
_TK_SCALED = f"y <= -1.0 and ({_TK_A} >= 300.0 or {_TK_B} >= 300.0)"
_TK_T = "(y - 1.0) * (math.log(z) - math.log1p(-z))"  # A - B
_TK_R = f"(expit({_TK_T}) if abs({_TK_T}) < 745.0 else (1.0 if {_TK_T} > 0.0 else 0.0))"
_TK_S = f"(expit(-({_TK_T})) if abs({_TK_T}) < 745.0 else (0.0 if {_TK_T} > 0.0 else 1.0))"
_TK_DX_SCALED = f"{_TK_R} * math.exp(-({_TK_A}))"
_TK_DL_SCALED = (f"-((math.log(z) - 1.0 / y) * z * {_TK_R} - (math.log1p(-z) - 1.0 / y) * "
                 f"(1.0 - z) * {_TK_S}) / y")
_DF = np.array([1.5, 4.0, 30.0])  # degrees of freedom of the specs
_AB = np.array([0.5, 2.0, 5.0])

MORE_SPECIAL_OPS = [
    # SciPy's own log1p, expm1 (not NumPy's kernels) and cos(x) - 1 (DLMF 4.14)
    U("sc_log1p", "cs_log1p(x)", "1.0 / (1.0 + x)",
      "z = log(1 + x) (SciPy's kernel); xbar += zbar / (1 + x)", sp="log1p", lo=-0.7, hi=3.0),
    U("sc_expm1", "cs_expm1(x)", "z + 1.0", "z = e^x - 1 (SciPy's kernel); xbar += zbar (z + 1)",
      sp="expm1"),
    U("cosm1", "cs_cosm1(x)", "-math.sin(x)", "z = cos x - 1; xbar += -zbar sin x",
      lo=-3.0, hi=3.0),
    U("exprel", "cs_exprel(x)", "exprel_dx(x)",
      "z = (e^x - 1)/x; xbar += zbar (x e^x - e^x + 1)/x^2   (series near 0)", lo=-3.0, hi=3.0),
    # log Gamma of a real argument (nan for x < 0, as SciPy's), psi = Gamma'/Gamma (DLMF 5.2.2)
    U("loggamma", "cs_loggamma(x)", "cs_psi(x)", "z = log Gamma(x), x > 0; xbar += zbar psi(x)",
      lo=0.3, hi=6.0),
    # (x + z^2/2 cancels as x -> -inf, relative error ~1e-16 |x|, inf or nan at x = -1e300:
    # below x = -100 the same e^x / phi(z) = Phi(z) / phi(z) = sqrt(pi/2) erfcx(-z/sqrt 2),
    # from Phi(z) = erfc(-z/sqrt 2)/2 and erfcx(t) = e^(t^2) erfc(t); erfc: DLMF 7.2.2)
    U("ndtri_exp", "cs_ndtri_exp(x)",
      f"{_SQRT_2PI!r} * math.exp(x + 0.5 * z * z) if x >= -100.0 else "
      "1.2533141373155003 * cs_erfcx(-0.7071067811865476 * z)",
      "z = ndtri(e^x); xbar += zbar sqrt(2 pi) e^(x + z^2/2)   "
      "(sqrt(pi/2) erfcx(-z/sqrt 2) below x = -100)", lo=-5.0, hi=-0.1),
    U("erfi", "cs_erfi(x)", f"{_TWO_OVER_SQRT_PI!r} * math.exp(x * x)",
      "z = -i erf(ix); xbar += zbar 2/sqrt(pi) e^(x^2)"),
    # (for |x| >= 1e8, where 1 - 2 x z cancels, and is 1 - inf * 0 at x = +-inf, the
    # asymptotic -1/(2 x^2), relative error 3/(2x^2), from F(x) ~ 1/(2x) + 1/(4x^3) + ...
    # (iterating F = (1 - F')/(2x); MathWorld "Dawson's Integral" eq. 9), as erfcx's rule)
    U("dawsn", "cs_dawsn(x)", "1.0 - 2.0 * x * z if abs(x) < 1e8 else -0.5 * x ** -2.0",
      "z = e^(-x^2) int_0^x e^(t^2) dt (DLMF 7.2.5); xbar += zbar (1 - 2 x z)   "
      "(-1/(2 x^2) for |x| >= 1e8)", lo=-4.0, hi=4.0),
    U("exp1", "cs_exp1(x)", "-math.exp(-x) / x", "z = E1(x) (DLMF 6.2.1); xbar += -zbar e^-x / x",
      lo=0.2, hi=4.0),
    U("expi", "cs_expi(x)", "math.exp(x) / x", "z = Ei(x) (DLMF 6.2.5); xbar += zbar e^x / x",
      lo=0.2, hi=4.0),
    # Box-Cox transforms (SciPy's definitions; d/dl (x^l - 1)/l = log(x)^2 exprel'(l log x))
    B("boxcox", "cs_boxcox(x, y)",
      (f"math.exp((y - 1.0) * npy_log(x)) if x != 0.0 else {_POW_AT_0}",
       "npy_log(x) * npy_log(x) * exprel_dx(y * npy_log(x)) if x > 0.0 else "
       "(1.0 / (y * y) if x == 0.0 and y > 0.0 else math.nan)"),
      "z = (x^l - 1)/l (log x at l = 0); xbar += zbar x^(l-1); "
      "lbar += zbar log(x)^2 exprel'(l log x)", ("x", "lmbda"), lo=0.2, hi=2.0,
      fn=lambda x, lmbda: _scipy("boxcox")(x, lmbda - 1.0)),
    B("boxcox1p", "cs_boxcox1p(x, y)",
      (f"math.exp((y - 1.0) * npy_log1p(x)) if x != -1.0 else {_POW_AT_0}",
       "npy_log1p(x) * npy_log1p(x) * exprel_dx(y * npy_log1p(x)) if x > -1.0 else "
       "(1.0 / (y * y) if x == -1.0 and y > 0.0 else math.nan)"),
      "z = ((1+x)^l - 1)/l; xbar += zbar (1+x)^(l-1); lbar += zbar log1p(x)^2 "
      "exprel'(l log1p(x))", ("x", "lmbda"), lo=-0.5, hi=2.0),
    # inverses: z = (1 + l y)^(1/l); d/dl log1p(l y)/l = y^2 q'(l y), q(s) = log1p(s)/s
    B("inv_boxcox", "cs_inv_boxcox(x, y)",
      ("z / (1.0 + y * x)", "z * x * x * log1p_ratio_dx(y * x)"),
      "z = (1 + l y)^(1/l) (e^y at l = 0); ybar += zbar z/(1 + l y); "
      "lbar += zbar z y^2 q'(l y), q(s) = log1p(s)/s", ("y", "lmbda"), lo=-0.5, hi=1.0),
    B("inv_boxcox1p", "cs_inv_boxcox1p(x, y)",
      ("(1.0 + z) / (1.0 + y * x)", "(1.0 + z) * x * x * log1p_ratio_dx(y * x)"),
      "z = (1 + l y)^(1/l) - 1; ybar += zbar (1 + z)/(1 + l y); "
      "lbar += zbar (1 + z) y^2 q'(l y)", ("y", "lmbda"), lo=-0.5, hi=1.0),
    B("powm1", "cs_powm1(x, y)", ("pow_dx(x, y, z + 1.0)",
                                  "0.0 if z == -1.0 else (z + 1.0) * npy_log(x)"),
      "z = x^y - 1; xbar += zbar y x^(y-1); ybar += zbar (z + 1) log x", ("x", "y"), lo=0.2),
    # Pochhammer's symbol (DLMF 5.2.5), as scipy.stats.t's logpdf calls it
    B("poch", "cs_poch(x, y)", ("0.0 if z == 0.0 else z * (cs_psi(x + y) - cs_psi(x))",
                                "0.0 if z == 0.0 else z * cs_psi(x + y)"),
      "z = Gamma(x + m)/Gamma(x); xbar += zbar z (psi(x+m) - psi(x)); mbar += zbar z psi(x+m)",
      ("z", "m"), lo=0.3, hi=3.0),
    # losses (SciPy's definitions)
    B("kl_div", "cs_kl_div(x, y)", ("npy_log(x / y)", "1.0 - x / y"),
      "z = x log(x/y) - x + y; xbar += zbar log(x/y); ybar += zbar (1 - x/y)", ("x", "y")),
    B("huber", "cs_huber(x, y)",
      ("math.nan if x < 0.0 else (0.0 if abs(y) <= x else abs(y) - x)",
       "math.nan if x < 0.0 else (y if abs(y) <= x else x * np.sign(y))"),
      "z = r^2/2 (|r| <= d), d (|r| - d/2); dbar += zbar (0 or |r| - d); "
      "rbar += zbar (r or d sign r)", ("delta", "r"), lo=-2.0, hi=2.0,
      fn=lambda d, r: _scipy("huber")(d + 2.2, r)),
    # with h = hypot(d, r): dz/dd = d (s-1)^2/s = (r/(h+d))^2 r^2/h, s = h/d; dz/dr = r d/h
    B("pseudo_huber", "cs_pseudo_huber(x, y)",
      ("math.nan if x < 0.0 else (0.0 if y == 0.0 else (y / (math.hypot(x, y) + x)) ** 2 * y * "
       "(y / math.hypot(x, y)))",
       "math.nan if x < 0.0 else (0.0 if x == 0.0 else y * (x / math.hypot(x, y)))"),
      "z = d^2 (sqrt(1 + (r/d)^2) - 1); dbar += zbar (r/(h+d))^2 r^2/h; rbar += zbar r d/h, "
      "h = hypot(d, r)", ("delta", "r"), lo=-2.0, hi=2.0,
      fn=lambda d, r: _scipy("pseudo_huber")(d + 2.2, r)),
    # Owen's T (Owen 1956, "Tables for computing bivariate normal probabilities", eq. 2.1):
    # T = int_0^a e^(-h^2 (1+t^2)/2) / (2 pi (1+t^2)) dt
    # (0.0 where e^(-h^2/2) underflows, |h| >= 40, or 1 + a^2 overflows, |a| >= 1e155: the
    # partials' float64 values there, whose derivatives would be 0 * inf at +-inf)
    B("owens_t", "cs_owens_t(x, y)",
      ("0.0 if abs(x) >= 40.0 else -0.19947114020071635 * math.exp(-0.5 * x * x) * "
       "math.erf(0.7071067811865476 * y * x)",
       "0.0 if abs(x) >= 40.0 or abs(y) >= 1e155 else "
       "0.15915494309189535 * math.exp(-0.5 * x * x * (1.0 + y * y)) / (1.0 + y * y)"),
      "hbar += -zbar phi(h) erf(a h/sqrt 2)/2; abar += zbar e^(-h^2 (1+a^2)/2) / "
      "(2 pi (1+a^2))", ("h", "a"), lo=-2.0, hi=2.0),
    # distribution functions and their inverses in the continuous argument
    SHAPE("stdtr", "cs_stdtr(x, y)", f"math.exp({_T_LOGPDF.format(t='y')})",
          "z = P(T_df <= t); tbar += zbar f_df(t) (the t density)", _DF, ("df", "t"),
          -3.0, 3.0),
    SHAPE("stdtrit", "cs_stdtrit(x, y)", f"math.exp(-({_T_LOGPDF.format(t='z')}))",
          "z = stdtr^-1(df, p); pbar += zbar / f_df(z)", _DF, ("df", "p"), 0.05, 0.95),
    SHAPE("chdtr", "cs_chdtr(x, y)", "0.5 * gammainc_dx(0.5 * x, 0.5 * y)",
          "z = P(v/2, x/2); xbar += zbar f_v(x) (the chi-square density)", _DF, ("v", "x"),
          0.2, 6.0),
    SHAPE("chdtrc", "cs_chdtrc(x, y)", "-0.5 * gammainc_dx(0.5 * x, 0.5 * y)",
          "z = Q(v/2, x/2); xbar += -zbar f_v(x)", _DF, ("v", "x"), 0.2, 6.0),
    SHAPE("chdtri", "cs_chdtri(x, y)", "-2.0 / gammainc_dx(0.5 * x, 0.5 * z)",
          "z = chdtrc^-1(v, p); pbar += -zbar / f_v(z)", _DF, ("v", "p"), 0.05, 0.95),
    SHAPE("pdtr", "cs_pdtr(x, y)", "0.0 if x < 0.0 else -gammainc_dx(math.floor(x) + 1.0, y)",
          "z = Q(floor(k)+1, m); mbar += -zbar m^k e^-m / k!", np.array([0.0, 2.0, 7.0]),
          ("k", "m"), 0.2, 6.0),
    SHAPE("pdtrc", "cs_pdtrc(x, y)", "0.0 if x < 0.0 else gammainc_dx(math.floor(x) + 1.0, y)",
          "z = P(floor(k)+1, m); mbar += zbar m^k e^-m / k!", np.array([0.0, 2.0, 7.0]),
          ("k", "m"), 0.2, 6.0),
    SHAPE("gammaincinv", "cs_gammaincinv(x, y)", "1.0 / gammainc_dx(x, z)",
          "z = P^-1(a, y); ybar += zbar Gamma(a) z^(1-a) e^z", np.array([0.5, 2.0, 7.5]),
          ("a", "y"), 0.05, 0.95),
    SHAPE("gammainccinv", "cs_gammainccinv(x, y)", "-1.0 / gammainc_dx(x, z)",
          "z = Q^-1(a, y); ybar += -zbar Gamma(a) z^(1-a) e^z", np.array([0.5, 2.0, 7.5]),
          ("a", "y"), 0.05, 0.95),
    T("fdtr", "cs_fdtr(x, y, q)", ("0.0", "0.0", _F_PDF),
      "z = I_{d1 x/(d1 x + d2)}(d1/2, d2/2); xbar += zbar f_{d1,d2}(x) (the F density)",
      ("dfn", "dfd", "x"), ("dfn", "dfd"), lambda x: _scipy("fdtr")(_DF, 3.5, x), 0.2, 4.0),
    T("fdtrc", "cs_fdtrc(x, y, q)", ("0.0", "0.0", f"-({_F_PDF})"),
      "z = 1 - fdtr(d1, d2, x); xbar += -zbar f_{d1,d2}(x)",
      ("dfn", "dfd", "x"), ("dfn", "dfd"), lambda x: _scipy("fdtrc")(2.0, _DF, x), 0.2, 4.0),
    T("betaincinv", "cs_betaincinv(x, y, q)", ("0.0", "0.0", "1.0 / betainc_dx(x, y, z)"),
      "z = I^-1(a, b, y); ybar += zbar B(a, b) / (z^(a-1) (1-z)^(b-1))", ("a", "b", "y"),
      ("a", "b"), lambda y: _scipy("betaincinv")(_AB, 3.0, y), 0.05, 0.95),
    T("betainccinv", "cs_betainccinv(x, y, q)", ("0.0", "0.0", "-1.0 / betainc_dx(x, y, z)"),
      "z = (1 - I)^-1(a, b, y); ybar += -zbar B(a, b) / (z^(a-1) (1-z)^(b-1))",
      ("a", "b", "y"), ("a", "b"), lambda y: _scipy("betainccinv")(1.5, _AB, y), 0.05, 0.95),
    # noncentral chi-square CDF: the Poisson mixture of chi-square CDFs (Johnson, Kotz &
    # Balakrishnan vol. 2, eq. 29.2) gives dF/dnc = (F_{k+2} - F_k)/2 = -f_{k+2}(x)
    T("chndtr", "cs_chndtr(x, y, q)", ("ncx2_pdf(x, y, q)", "0.0", "-ncx2_pdf(x, y + 2.0, q)"),
      "z = F(x; df, nc); xbar += zbar f(x; df, nc); ncbar += -zbar f(x; df + 2, nc)",
      ("x", "df", "nc"), ("df",), lambda x, nc: _scipy("chndtr")(x, 3.0, nc), 0.2, 4.0,
      shapes=_TWO),
    # the Wright function: d/dx Phi(a, b, x) = Phi(a, a + b, x) (from its series, DLMF 10.46.1)
    T("wright_bessel", "cs_wright_bessel(x, y, q)", ("0.0", "0.0", "cs_wright_bessel(x, x + y, q)"),
      "z = Phi(a, b, x); xbar += zbar Phi(a, a + b, x)", ("a", "b", "x"), ("a", "b"),
      lambda x: _scipy("wright_bessel")(_AB, 1.5, x), 0.2, 4.0),
    T("log_wright_bessel", "cs_log_wright_bessel(x, y, q)",
      ("0.0", "0.0", "math.exp(cs_log_wright_bessel(x, x + y, q) - z)"),
      "z = log Phi(a, b, x); xbar += zbar exp(log Phi(a, a + b, x) - z)", ("a", "b", "x"),
      ("a", "b"), lambda x: _scipy("log_wright_bessel")(_AB, 1.5, x), 0.2, 4.0),
    # Tukey's lambda CDF F(x; l): x = (F^l - (1-F)^l)/l = a exprel(l a) - b exprel(l b),
    # a = log F, b = log(1-F); dF/dx = 1/(F^(l-1) + (1-F)^(l-1)), dF/dl = -dx/dl dF/dx
    B("tklmbda", "cs_tklmbda(x, y)",
      (f"0.0 if {_TK_ZERO} else ({_TK_DX_SCALED} if {_TK_SCALED} else 1.0 / ({_TK_DQ}))",
       f"0.0 if {_TK_ZERO} else ({_TK_DL_SCALED} if {_TK_SCALED} else "
       f"-({_TK_DL}) / ({_TK_DQ}))"),
      "z = F(x; l), x = (F^l - (1-F)^l)/l; xbar += zbar / (F^(l-1) + (1-F)^(l-1)); "
      "lbar += -zbar (a^2 exprel'(l a) - b^2 exprel'(l b)) / (F^(l-1) + (1-F)^(l-1)), "
      "a = log F, b = log(1-F)", ("x", "lmbda"), lo=-2.0, hi=2.0,
      fn=lambda x, lmbda: _scipy("tklmbda")(0.8 * x, 0.25 * lmbda)),
]


# SciPy's private ufuncs over Boost's distributions (kernels cb_<name>: externals.BOOST)
PRIVATE_SPECIAL_OPS = [
    # the beta density x^(a-1) (1-x)^(b-1) / B(a, b): d log f/da = log x - psi(a) + psi(a+b)
    # (DLMF 5.12.1, 5.2.2), d log f/dx = (a-1)/x - (b-1)/(1-x)
    elementwise("beta_pdf", TERNARY, [_SP + "_ufuncs._beta_pdf"], "cb_beta_pdf(x, y, q)",
                ("z * ((y - 1.0) / x - (q - 1.0) / (1.0 - x)) if 0.0 < x < 1.0 else 0.0",
                 "0.0 if z == 0.0 else z * (npy_log(x) - cs_psi(y) + cs_psi(y + q))",
                 "0.0 if z == 0.0 else z * (npy_log1p(-x) - cs_psi(q) + cs_psi(y + q))"),
                "z = x^(a-1) (1-x)^(b-1) / B(a, b) (scipy.stats.beta's _pdf); xbar += zbar z "
                "((a-1)/x - (b-1)/(1-x)); abar += zbar z (log x - psi(a) + psi(a+b)); "
                "bbar += zbar z (log(1-x) - psi(b) + psi(a+b))", lo=0.1, hi=0.9,
                shapes=(((4,), (4,), (4,)), ((2, 3), (), ()), ((), (3,), ())),
                fn=lambda x, a, b: _private("_beta_pdf")(x, 1.0 + 3.0 * a, 0.5 + 2.0 * b),
                args=("x", "a", "b")),
    # the noncentral chi-square density and survival function (ncx2's _pdf, _sf): as chndtr,
    # d/dx f_k = (f_{k-2} - f_k)/2, d/dnc f_k = (f_{k+2} - f_k)/2 (scalar_special.ncx2_pdf)
    T("ncx2_pdf", "cb_ncx2_pdf(x, y, q)",
      ("0.5 * (ncx2_pdf(x, y - 2.0, q) - z)", "0.0", "0.5 * (ncx2_pdf(x, y + 2.0, q) - z)"),
      "z = f(x; df, nc) (scipy.stats.ncx2's _pdf); xbar += zbar (f(x; df-2, nc) - z)/2; "
      "ncbar += zbar (f(x; df+2, nc) - z)/2", ("x", "df", "nc"), ("df",),
      lambda x, nc: _private("_ncx2_pdf")(x, 3.5, nc), 0.2, 4.0, shapes=_TWO, sp="_ufuncs."),
    T("ncx2_sf", "cb_ncx2_sf(x, y, q)", ("-ncx2_pdf(x, y, q)", "0.0", "ncx2_pdf(x, y + 2.0, q)"),
      "z = 1 - F(x; df, nc) (ncx2's _sf); xbar += -zbar f(x; df, nc); "
      "ncbar += zbar f(x; df + 2, nc)", ("x", "df", "nc"), ("df",),
      lambda x, nc: _private("_ncx2_sf")(x, 3.5, nc), 0.2, 4.0, shapes=_TWO, sp="_ufuncs."),
]


def _private(name):
    """``scipy.special._ufuncs.<name>`` resolved when called."""
    def call(*args):
        from scipy.special import _ufuncs
        return getattr(_ufuncs, name)(*args)
    call.__name__ = name
    return call

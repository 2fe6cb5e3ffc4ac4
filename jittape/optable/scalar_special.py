"""Scalar helpers of the special-function rules (:mod:`jittape.optable.rules.special`).

As in :mod:`jittape.optable.scalar_math`: plain Python on floats whose source
:mod:`jittape.sweeps.codegen` copies into the generated Numba modules that name them. Values
come from SciPy's own C kernels wherever SciPy exports one (``cs_<name>``,
:mod:`jittape.optable.externals`); what is written here is what SciPy composes in Python
(``polygamma``, ``multigammaln``, the Hurwitz zeta function they need) and the derivatives, with
their edge cases. Formula sources: NIST DLMF (https://dlmf.nist.gov), section numbers in the
comments.
"""

import math

LOG_PI = 1.1447298858494002  # np.log(np.pi), as scipy.special.multigammaln uses
#: Compiled as functions of their own, not inlined into every sweep branch that names them
#: (jittape.sweeps.codegen): loops, called from several rules.
OUTLINED = ("hurwitz_zeta", "polygamma", "multigammaln", "multigammaln_da", "gammainc_dx",
            "betainc_dx", "multigammaln_daa", "rgamma_dxx", "spence_dxx", "exprel_dx",
            "exprel_dxx", "log1p_ratio_dx", "log1p_ratio_dxx", "ncx2_pdf", "trigamma_complex")


def hurwitz_zeta(s, q):
    # zeta(s, q) = sum_k (q + k)^-s (DLMF 25.11.1) for s > 1: the first terms summed until
    # w = q + N >= 12 + s, then the Euler-Maclaurin tail (DLMF 2.10.1):
    # w^(1-s)/(s-1) + w^-s/2 + sum_j B_2j/(2j)! s(s+1)...(s+2j-2) w^(-s-2j+1), whose terms
    # shrink by about ((s + 2j) / (2 pi w))^2 each. q <= 0 as SciPy: poles at the integers,
    # nan unless s is an integer.
    if s != s or q != q:
        return math.nan
    if s == 1.0:
        return math.inf
    if s < 1.0:
        return math.nan
    if q <= 0.0:
        if q == math.floor(q):
            return math.inf
        if s != math.floor(s):
            return math.nan
    b2j = (1.0 / 6.0, -1.0 / 30.0, 1.0 / 42.0, -1.0 / 30.0, 5.0 / 66.0, -691.0 / 2730.0,
           7.0 / 6.0, -3617.0 / 510.0, 43867.0 / 798.0, -174611.0 / 330.0,
           854513.0 / 138.0, -236364091.0 / 2730.0)
    total = 0.0
    w = q
    while w < 12.0 + s:
        total += w ** -s
        w += 1.0
    wmS = w ** -s
    total += w * wmS / (s - 1.0) + 0.5 * wmS
    fac = s  # s (s+1) ... (s+2j-2) / (2j)!
    t = wmS / w
    for j in range(12):
        fac /= (2.0 * j + 1.0) * (2.0 * j + 2.0)
        term = b2j[j] * fac * t
        total += term
        if abs(term) < 1e-17 * abs(total):
            break
        fac *= (s + 2.0 * j + 1.0) * (s + 2.0 * j + 2.0)
        t /= w * w
    return total


def polygamma(n, x):
    # psi^(n)(x) = (-1)^(n+1) n! zeta(n+1, x) (DLMF 25.11.12), psi at n = 0: the formula of
    # scipy.special.polygamma, in its order of operations
    if n == 0.0:
        return cs_psi(x)
    return (-1.0) ** (n + 1.0) * cs_gamma(n + 1.0) * hurwitz_zeta(n + 1.0, x)


def multigammaln(a, d):
    # log Gamma_d(a) = d(d-1)/4 log(pi) + sum_{j<d} log Gamma(a - j/2) (DLMF 35.3.4), nan
    # where scipy.special.multigammaln raises (d not integral, a <= (d-1)/2)
    if d != math.floor(d) or not a > 0.5 * (d - 1.0):
        return math.nan
    s = 0.0
    for j in range(int(d)):
        s += cs_gammaln(a - 0.5 * j)
    return d * (d - 1.0) * 0.25 * LOG_PI + s


def multigammaln_da(a, d):
    # d/da log Gamma_d(a) = sum_{j<d} psi(a - j/2)
    if d != math.floor(d) or not a > 0.5 * (d - 1.0):
        return math.nan
    s = 0.0
    for j in range(int(d)):
        s += cs_psi(a - 0.5 * j)
    return s


def multigammaln_daa(a, d):
    # d^2/da^2 log Gamma_d(a) = sum_{j<d} psi'(a - j/2) (DLMF 35.3.4, 5.15.1)
    if d != math.floor(d) or not a > 0.5 * (d - 1.0):
        return math.nan
    s = 0.0
    for j in range(int(d)):
        s += polygamma(1.0, a - 0.5 * j)
    return s


def rgamma_dx(x, z):
    # d/dx 1/Gamma(x) = -psi(x)/Gamma(x); at the poles x = -n of Gamma (residue (-1)^n/n!,
    # DLMF 5.2(i)) 1/Gamma(x) ~ (-1)^n n! (x + n), so the derivative is (-1)^n n!; at
    # +-inf, where SciPy's value is 0, the limit 0 (0 * psi(inf) would be nan)
    if math.isinf(x):
        return 0.0
    if x <= 0.0 and x == math.floor(x):
        n = -x
        return (1.0 if n % 2.0 == 0.0 else -1.0) * cs_gamma(n + 1.0)
    return -z * cs_psi(x)


def rgamma_dxx(x, z):
    # d^2/dx^2 1/Gamma(x) = (psi(x)^2 - psi'(x)) / Gamma(x) (DLMF 5.15.1); at x = -n,
    # Gamma(-n + e) = Gamma(1 + e) / (e (e - 1) ... (e - n)) (DLMF 5.5.1) gives
    # 1/Gamma(-n + e) = (-1)^n n! (e - psi(n + 1) e^2 + O(e^3)): -2 (-1)^n n! psi(n + 1)
    if math.isinf(x):
        return 0.0
    if x <= 0.0 and x == math.floor(x):
        n = -x
        return (-2.0 if n % 2.0 == 0.0 else 2.0) * cs_gamma(n + 1.0) * cs_psi(n + 1.0)
    p = cs_psi(x)
    return z * (p * p - polygamma(1.0, x))


def gammainc_dx(a, x):
    # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a) (DLMF 8.2.1, 8.2.4), in logs against overflow;
    # P(0, x) = 1 for x > 0 (SciPy's convention): derivative 0
    if not (a >= 0.0 and x >= 0.0):
        return math.nan
    if a == 0.0 or x == math.inf:
        return 0.0
    if x == 0.0:
        return math.inf if a < 1.0 else (1.0 if a == 1.0 else 0.0)
    return math.exp((a - 1.0) * math.log(x) - x - cs_gammaln(a))


def gammainc_dxx(a, x):
    # d/dx x^(a-1) e^-x / Gamma(a) = x^(a-2) e^-x (a - 1 - x) / Gamma(a) (from DLMF 8.2.4);
    # at x = 0 its limit: -inf, -1 (a = 1: e^-x), inf, 1 (a = 2: x e^-x), 0 for a > 2
    if not (a >= 0.0 and x >= 0.0):
        return math.nan
    if a == 0.0 or x == math.inf:
        return 0.0
    if x == 0.0:
        if a == 1.0 or a == 2.0:
            return -1.0 if a == 1.0 else 1.0
        return -math.inf if a < 1.0 else (math.inf if a < 2.0 else 0.0)
    return gammainc_dx(a, x) * ((a - 1.0 - x) / x)


def betainc_dx(a, b, x):
    # d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b) (DLMF 8.17.2), in logs against
    # overflow; I_x(0, b) = 1 and I_x(a, 0) = 0 on 0 < x < 1 (SciPy's convention)
    if not (a >= 0.0 and b >= 0.0 and 0.0 <= x <= 1.0):
        return math.nan
    if a == 0.0 or b == 0.0:
        return 0.0
    if x == 0.0 or x == 1.0:
        p = a if x == 0.0 else b
        return math.inf if p < 1.0 else (1.0 / cs_beta(a, b) if p == 1.0 else 0.0)
    return math.exp((a - 1.0) * math.log(x) + (b - 1.0) * math.log1p(-x) - cs_betaln(a, b))


def betainc_dxx_edge(p, q):
    # lim y->0 of d/dy y^(p-1) (1-y)^(q-1) / B(p, q) = ((p-1) y^(p-2) - (q-1) y^(p-1)) / B
    if p < 1.0:
        return -math.inf
    if p == 1.0:
        return (1.0 - q) / cs_beta(p, q)
    if p < 2.0:
        return math.inf
    return 1.0 / cs_beta(p, q) if p == 2.0 else 0.0


def betainc_dxx(a, b, x):
    # d/dx of x^(a-1) (1-x)^(b-1) / B(a, b) (DLMF 8.17.2): itself times
    # (a-1)/x - (b-1)/(1-x); at x = 1, y = 1 - x turns it into the x = 0 limit, negated
    if not (a >= 0.0 and b >= 0.0 and 0.0 <= x <= 1.0):
        return math.nan
    if a == 0.0 or b == 0.0:
        return 0.0
    if x == 0.0:
        return betainc_dxx_edge(a, b)
    if x == 1.0:
        return -betainc_dxx_edge(b, a)
    return betainc_dx(a, b, x) * ((a - 1.0) / x - (b - 1.0) / (1.0 - x))


def spence_dx(x):
    # spence(x) = int_1^x log t / (1 - t) dt (SciPy's definition, DLMF 25.12.1 with
    # Li2(1 - x)): derivative log x / (1 - x), as log1p(x - 1) (x - 1 is exact near 1)
    if x == 1.0:
        return -1.0
    if not x >= 0.0:
        return math.nan
    return npy_log1p(x - 1.0) / (1.0 - x)


def spence_dxx(x):
    # d/dx log x / (1 - x) = (log1p(t) - t / (1 + t)) / t^2, t = x - 1: that difference
    # cancels near x = 1, where the series of -log1p(t)/t (DLMF 4.6.1) differentiated,
    # sum_{k>=1} (-1)^(k+1) k t^(k-1) / (k+1), is used (0.25^k: 27 terms at most)
    if not x >= 0.0:
        return math.nan
    if x == 0.0:
        return math.inf
    if x == math.inf:
        return 0.0
    t = x - 1.0
    if abs(t) >= 0.25:
        return (npy_log1p(t) - t / x) / (t * t)
    total = 0.0
    tk = 1.0
    for k in range(1, 60):
        term = k * tk / (k + 1.0)
        total += term if k % 2 == 1 else -term
        if abs(term) < 1e-17:
            break
        tk *= t
    return total


def exprel_dx(t):
    # d/dt (e^t - 1)/t = (t e^t - e^t + 1) / t^2, the derivative of scipy.special.exprel; for
    # |t| < 1, where that difference cancels, the series of e^t (DLMF 4.2.19) differentiated:
    # sum_{n>=1} n t^(n-1) / (n+1)!, terms shrinking by (n+1) t / (n (n+2))
    if t != t:
        return math.nan
    if abs(t) < 1.0:
        total = 0.0
        term = 0.5
        for n in range(1, 40):
            total += term
            term *= (n + 1.0) * t / (n * (n + 2.0))
            if abs(term) < 1e-17 * total:
                break
        return total
    if t == math.inf:
        return math.inf
    if t == -math.inf:
        return 0.0
    if t > 700.0:  # e^t (t - 1) / t^2, without overflowing t e^t first (1/t^2 is lost)
        return math.exp(t + math.log(t - 1.0) - 2.0 * math.log(t))
    return (t * math.exp(t) - math.expm1(t)) / (t * t)


def exprel_dxx(t):
    # d^2/dt^2 (e^t - 1)/t = ((t^2 - 2t + 2) e^t - 2) / t^3; for |t| < 1 the series
    # sum_{n>=2} n (n-1) t^(n-2) / (n+1)!, terms shrinking by (n+1) t / ((n+2) (n-1))
    if t != t:
        return math.nan
    if abs(t) < 1.0:
        total = 0.0
        term = 1.0 / 3.0
        for n in range(2, 40):
            total += term
            term *= (n + 1.0) * t / ((n + 2.0) * (n - 1.0))
            if abs(term) < 1e-17 * total:
                break
        return total
    if t == math.inf:
        return math.inf
    if t == -math.inf:
        return 0.0
    if t > 700.0:
        return math.exp(t + math.log(t * t - 2.0 * t + 2.0) - 3.0 * math.log(t))
    if t < -700.0:  # (t^2 - 2t + 2) e^t is below 1e-298 there, lost against 2 (the same
        # bits), and inf * 0 = nan once t^2 overflows (|t| > 1.3e154): the limit -2/t^3
        return -2.0 / (t * t * t)
    return ((t * t - 2.0 * t + 2.0) * math.exp(t) - 2.0) / (t * t * t)


def log1p_ratio_dx(s):
    # q'(s) for q(s) = log1p(s) / s: (s/(1+s) - log1p(s)) / s^2; for |s| < 1/4, where that
    # cancels, the series of log1p (DLMF 4.6.1) differentiated: sum_{n>=1} (-1)^n n
    # s^(n-1) / (n+1), terms shrinking by -(n+1)^2 s / (n (n+2)); nan for s <= -1
    if not s > -1.0:
        return math.nan
    if abs(s) < 0.25:
        total = 0.0
        term = -0.5
        for n in range(1, 60):
            total += term
            term *= -(n + 1.0) * (n + 1.0) * s / (n * (n + 2.0))
            if abs(term) < 1e-17 * abs(total):
                break
        return total
    if s == math.inf:
        return 0.0
    return (s / (1.0 + s) - math.log1p(s)) / (s * s)


def log1p_ratio_dxx(s):
    # q''(s) = (2 log1p(s) - 2s/(1+s) - s^2/(1+s)^2) / s^3; for |s| < 1/4 the series
    # sum_{n>=2} (-1)^n n (n-1) s^(n-2) / (n+1), terms shrinking by -(n+1)^2 s / ((n+2) (n-1))
    if not s > -1.0:
        return math.nan
    if abs(s) < 0.25:
        total = 0.0
        term = 2.0 / 3.0
        for n in range(2, 60):
            total += term
            term *= -(n + 1.0) * (n + 1.0) * s / ((n + 2.0) * (n - 1.0))
            if abs(term) < 1e-17 * abs(total):
                break
        return total
    if s == math.inf:
        return 0.0
    r = s / (1.0 + s)
    return (2.0 * math.log1p(s) - 2.0 * r - r * r) / (s * s * s)


def ncx2_pdf(x, k, lam):
    # density of the noncentral chi-square distribution (df k, noncentrality lam; Johnson,
    # Kotz & Balakrishnan, "Continuous Univariate Distributions" vol. 2, 2nd ed., eq. 29.4):
    # exp(-(x + lam)/2) (x/lam)^(k/4 - 1/2) I_{k/2-1}(sqrt(lam x)) / 2, with I_v(s) =
    # e^s ive(v, s) (DLMF 10.25.2) against overflow; lam = 0: the chi-square density
    # x^(k/2-1) e^(-x/2) / (2^(k/2) Gamma(k/2)). Any real k is accepted (the formula's
    # continuation), so that d/dx f_k = (f_{k-2} - f_k)/2 and d/dlam f_k = (f_{k+2} - f_k)/2
    # (from DLMF 10.29.2) hold for every k the second-order rules ask about.
    if x != x or k != k or lam != lam or lam < 0.0:
        return math.nan
    if x < 0.0 or x == math.inf:
        return 0.0
    if x == 0.0:
        if k == 2.0:
            return 0.5 * math.exp(-0.5 * lam)
        return 0.0 if k > 2.0 else math.inf
    if lam == 0.0:
        return math.exp((0.5 * k - 1.0) * math.log(x) - 0.5 * x - 0.5 * k * LN2) * \
            cs_rgamma(0.5 * k)
    d = math.sqrt(x) - math.sqrt(lam)
    e = -0.5 * d * d + (0.25 * k - 0.5) * math.log(x / lam)
    s = math.sqrt(lam * x)
    if e < -800.0 and s >= 1.0:
        # exp(e) is 0 and |ive(v, s)| < 1 for the orders v >= -3 the rules ask about
        # (I_v(s) <= I_0(s) <= e^s for v >= 0, DLMF 10.37 and 10.32.1; measured for
        # -3 <= v < 0): the product is 0, where SciPy's ive, nan for s > 2e9, would make it
        # nan (x = 1e300)
        return 0.0
    return 0.5 * math.exp(e) * cs_ive(0.5 * k - 1.0, s)


# complex arguments z = x + iy: each rule is a real function of the two parts (the complex
# values' ops, jittape.optable.rules.special_complex)
def wofz_re(x, y):
    # Re w(z), w = scipy.special.wofz, the Faddeeva function (DLMF 7.2.3)
    return cz_wofz(x, y).real


def wofz_im(x, y):
    return cz_wofz(x, y).imag


def loggamma_re(x, y):
    # Re log Gamma(z), the principal branch of scipy.special.loggamma (DLMF 5.2.1)
    return cz_loggamma(x, y).real


def loggamma_im(x, y):
    return cz_loggamma(x, y).imag


def psi_re(x, y):
    # Re psi(z), psi = scipy.special.psi of a complex argument (DLMF 5.2.2)
    return cz_psi(x, y).real


def psi_im(x, y):
    return cz_psi(x, y).imag


def trigamma_complex(x, y):
    # psi'(z): for x < 0 the reflection psi'(z) = pi^2 / sin^2(pi z) - psi'(1 - z) (DLMF
    # 5.15.6), then psi'(z) = psi'(z + 1) + 1/z^2 (DLMF 5.15.5) up to |z| >= 12, and there
    # psi'(z) ~ 1/z + 1/(2 z^2) + sum_{k>=1} B_2k / z^(2k+1) (DLMF 5.15.8; B_16's term is
    # below 1e-17 relative); the poles z = 0, -1, -2, ...: inf
    if y == 0.0 and x <= 0.0 and x == math.floor(x):
        return complex(math.inf, 0.0)
    total = complex(0.0, 0.0)
    sign = 1.0
    if x < 0.0:
        a = math.pi * x
        b = math.pi * y
        s = complex(math.sin(a) * math.cosh(b), math.cos(a) * math.sinh(b))
        total = (math.pi * math.pi) / (s * s)
        sign = -1.0
        x = 1.0 - x
        y = -y
    z = complex(x, y)
    rest = complex(0.0, 0.0)
    while abs(z) < 12.0:
        rest += 1.0 / (z * z)
        z += 1.0
    w = 1.0 / (z * z)
    tail = w * (1.0 / 6.0 + w * (-1.0 / 30.0 + w * (1.0 / 42.0 + w * (-1.0 / 30.0 + w * (
        5.0 / 66.0 + w * (-691.0 / 2730.0 + w * (7.0 / 6.0 + w * (-3617.0 / 510.0))))))))
    rest += (1.0 + tail) / z + 0.5 * w
    return total + sign * rest


def trigamma_re(x, y):
    return trigamma_complex(x, y).real


def trigamma_im(x, y):
    return trigamma_complex(x, y).imag

"""Scalar helpers of the special-function rules (:mod:`jittape.rules_special`).

As in :mod:`jittape.scalarmath`: plain Python on floats whose source :mod:`jittape.codegen`
copies into the generated Numba modules that name them. Values come from SciPy's own C
kernels wherever SciPy exports one (``cs_<name>``, :mod:`jittape.externals`); what is written
here is what SciPy composes in Python (``polygamma``, ``multigammaln``, the Hurwitz zeta
function they need) and the derivatives, with their edge cases. Formula sources: NIST DLMF
(https://dlmf.nist.gov), section numbers in the comments.
"""

import math

LOG_PI = 1.1447298858494002  # np.log(np.pi), as scipy.special.multigammaln uses
#: Compiled as functions of their own, not inlined into every sweep branch that names them
#: (jittape.codegen): loops, called from several rules.
OUTLINED = ("hurwitz_zeta", "polygamma", "multigammaln", "multigammaln_da", "gammainc_dx",
            "betainc_dx")


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


def rgamma_dx(x, z):
    # d/dx 1/Gamma(x) = -psi(x)/Gamma(x); at the poles x = -n of Gamma (residue (-1)^n/n!,
    # DLMF 5.2(i)) 1/Gamma(x) ~ (-1)^n n! (x + n), so the derivative is (-1)^n n!
    if x <= 0.0 and x == math.floor(x):
        n = -x
        return (1.0 if n % 2.0 == 0.0 else -1.0) * cs_gamma(n + 1.0)
    return -z * cs_psi(x)


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


def spence_dx(x):
    # spence(x) = int_1^x log t / (1 - t) dt (SciPy's definition, DLMF 25.12.1 with
    # Li2(1 - x)): derivative log x / (1 - x), as log1p(x - 1) (x - 1 is exact near 1)
    if x == 1.0:
        return -1.0
    if not x >= 0.0:
        return math.nan
    return npy_log1p(x - 1.0) / (1.0 - x)

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
# The numbers are the tape's file format (see Tape.save): append, never renumber.
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
NUM_OPCODES = 53


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
    return math.cosh(x)


@njit(inline="always")
def cosh_f(x, c):
    return math.cosh(x)


@njit(inline="always")
def cosh_d(x, y, c):
    return math.sinh(x)


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
    if x != 0.0 and y == y and abs(y) < math.inf:
        return c * y / x
    return c * x ** (c - 1.0)


@njit(inline="always")
def rpowc_f(x, c):
    return c**x


@njit(inline="always")
def rpowc_d(x, y, c):
    return 0.0 if y == 0.0 else y * math.log(c)


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
    return (0.0 if y == 0.0 else y * x ** (y - 1.0)), (0.0 if z == 0.0 else z * math.log(x))


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
                for t in range(n):
                    adj[base + t * inner] += g
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
                ties = 0
                for t in range(n):
                    if val[base + t * inner] == y:
                        ties += 1
                for t in range(n):
                    if val[base + t * inner] == y:
                        adj[base + t * inner] += g / ties


@njit(inline="always")
def _matmul_fwd(val, o, ia, ib, m, kk, n):
    for j in range(m * n):
        val[o + j] = 0.0
    for i in range(m):
        for t in range(kk):
            x = val[ia + i * kk + t]
            for j in range(n):
                val[o + i * n + j] += x * val[ib + t * n + j]


@njit(inline="always")
def _matmul_rev(val, adj, o, ia, ib, m, kk, n):
    # Abar += G @ B^T, Bbar += A^T @ G  (Giles 2008, "Collected matrix derivative results")
    for i in range(m):
        for t in range(kk):
            x = val[ia + i * kk + t]
            s = 0.0
            for j in range(n):
                g = adj[o + i * n + j]
                s += g * val[ib + t * n + j]
                adj[ib + t * n + j] += x * g
            adj[ia + i * kk + t] += s


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
        if opc <= CONST:
            continue
        o = off[i]
        n = off[i + 1] - o
        ia = off[a[i]] if a[i] >= 0 else 0
        ci = c[i]
        if opc < ADD:
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
            continue
        if opc <= NE:
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
        elif opc <= MIN:  # SUM, PROD, MAX, MIN
            p = k[i]
            _reduce_fwd(opc, val, o, ia, pool[p], pool[p + 1], pool[p + 2])
        elif opc == MATMUL:
            p = k[i]
            _matmul_fwd(val, o, ia, off[b[i]], pool[p], pool[p + 1], pool[p + 2])
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
        if opc <= CONST or opc >= GUARD:  # leaves, guards, ARGMAX/ARGMIN: no derivative
            continue
        o = off[i]
        n = off[i + 1] - o
        ia = off[a[i]]
        ci = c[i]
        if opc < ADD:
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
            elif opc == STOPGRAD:
                pass  # identity forward, zero derivative
            continue
        if opc <= NE:
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
            # comparisons (LT..NE) are piecewise constant: zero derivative, nothing to do
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
        elif opc <= MIN:
            p = k[i]
            _reduce_rev(opc, val, adj, o, ia, pool[p], pool[p + 1], pool[p + 2])
        elif opc == MATMUL:
            p = k[i]
            _matmul_rev(val, adj, o, ia, off[b[i]], pool[p], pool[p + 1], pool[p + 2])


def arrays_signature():
    """The dtypes the sweeps are compiled for, in argument order (one specialization)."""
    return dict(op=np.int32, a=np.int32, b=np.int32, k=np.int32, c=np.float64,
                off=np.int64, pool=np.int64, val=np.float64)


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

"""Kernels of the products along an axis: ``prod`` and ``cumprod`` (structured ops).

Forward, tangent, reverse and second-order kernels side by side (signatures in
:mod:`jittape.optable.entry`; entries in :mod:`jittape.optable.rules.arrays`). Operands are
viewed as ``(outer, m, inner)``, the layout ``pool[k:k+3]``, and the product runs along ``m``.
Every rule is exact with zero factors: none divides by a factor that is zero.
"""


# --- prod: z = prod_t x[t] -----------------------------------------------------------------
def prod_forward(val, o, n, ia, ib, k, c, pool, off):
    outer, m, inner = pool[k], pool[k + 1], pool[k + 2]
    for r in range(outer):
        for q in range(inner):
            base = ia + r * m * inner + q
            acc = 1.0
            for t in range(m):
                acc *= val[base + t * inner]
            val[o + r * inner + q] = acc


def prod_others(val, base, m, inner, t, zeros, p):
    # the product of the factors other than t, exact when some factors are zero
    x = val[base + t * inner]
    if zeros == 0:
        return p / x
    return p if (zeros == 1 and x == 0.0) else 0.0


def prod_zeros(val, base, m, inner):
    zeros = 0
    p = 1.0
    for t in range(m):
        x = val[base + t * inner]
        if x == 0.0:
            zeros += 1
        else:
            p *= x
    return zeros, p


def prod_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    outer, m, inner = pool[k], pool[k + 1], pool[k + 2]
    for r in range(outer):
        for q in range(inner):
            base = ia + r * m * inner + q
            zeros, p = prod_zeros(val, base, m, inner)
            acc = 0.0
            for t in range(m):
                acc += dot[base + t * inner] * prod_others(val, base, m, inner, t, zeros, p)
            dot[o + r * inner + q] = acc


def prod_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    outer, m, inner = pool[k], pool[k + 1], pool[k + 2]
    for r in range(outer):
        for q in range(inner):
            base = ia + r * m * inner + q
            g = adj[o + r * inner + q]
            zeros, p = prod_zeros(val, base, m, inner)
            for t in range(m):
                adj[base + t * inner] += g * prod_others(val, base, m, inner, t, zeros, p)


def prod_others_dot(val, dot, base, m, inner, t, zeros, p, s, t0, t1):
    # the tangent of prod_others: sum_{u != t} xdot[u] P_tu, P_tu the product of the factors
    # other than t and u. s = sum over nonzero factors of xdot[u] / x[u]; t0, t1 the first
    # two zero factors. One zero: P_tu is nonzero only with t0 among {t, u}; two zeros:
    # only for {t, u} = {t0, t1}; three or more: all zero
    x = val[base + t * inner]
    if zeros == 0:
        return p / x * (s - dot[base + t * inner] / x)
    if zeros == 1:
        return p * s if t == t0 else dot[base + t0 * inner] * p / x
    if zeros == 2 and (t == t0 or t == t1):
        return dot[base + (t1 if t == t0 else t0) * inner] * p
    return 0.0


def prod_hvp(val, dot, adj, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb):
    # xbar[t] += zbar P_t; its tangent xbar'[t] += zbar' P_t + zbar d(P_t)
    prod_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb)
    prod_reverse(val, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb)
    if ca:
        return
    outer, m, inner = pool[k], pool[k + 1], pool[k + 2]
    for r in range(outer):
        for q in range(inner):
            base = ia + r * m * inner + q
            g = adj[o + r * inner + q]
            if g == 0.0:
                continue
            zeros, p = prod_zeros(val, base, m, inner)
            s, t0, t1 = 0.0, -1, -1
            for t in range(m):
                x = val[base + t * inner]
                if x != 0.0:
                    s += dot[base + t * inner] / x
                elif t0 < 0:
                    t0 = t
                elif t1 < 0:
                    t1 = t
            for t in range(m):
                adjdot[base + t * inner] += g * prod_others_dot(
                    val, dot, base, m, inner, t, zeros, p, s, t0, t1)


# --- cumprod: z[t] = prod_{s <= t} x[s] ----------------------------------------------------
def cumprod_forward(val, o, n, ia, ib, k, c, pool, off):
    outer, m, inner = pool[k], pool[k + 1], pool[k + 2]
    for r in range(outer):
        for q in range(inner):
            base = r * m * inner + q
            acc = 1.0
            for t in range(m):
                acc *= val[ia + base + t * inner]
                val[o + base + t * inner] = acc


def cumprod_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    outer, m, inner = pool[k], pool[k + 1], pool[k + 2]
    for r in range(outer):
        for q in range(inner):
            base = r * m * inner + q
            zd = 0.0  # zdot[t] = zdot[t-1] x[t] + z[t-1] xdot[t]
            for t in range(m):
                before = val[o + base + (t - 1) * inner] if t > 0 else 1.0
                zd = zd * val[ia + base + t * inner] + before * dot[ia + base + t * inner]
                dot[o + base + t * inner] = zd


def cumprod_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    outer, m, inner = pool[k], pool[k + 1], pool[k + 2]
    for r in range(outer):
        for q in range(inner):
            base = r * m * inner + q
            # xbar[t] = z[t-1] R[t], R[t] = zbar[t] + x[t+1] R[t+1]: exact with zeros, O(m)
            acc = 0.0
            for t in range(m - 1, -1, -1):
                nxt = val[ia + base + (t + 1) * inner] if t + 1 < m else 0.0
                acc = adj[o + base + t * inner] + nxt * acc
                before = val[o + base + (t - 1) * inner] if t > 0 else 1.0
                adj[ia + base + t * inner] += before * acc


def cumprod_hvp(val, dot, adj, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb):
    # the tangent of cumprod_reverse's recurrence (no division, so exact with zeros):
    # xbar'[t] += zdot[t-1] R[t] + z[t-1] R'[t], R'[t] = zbar'[t] + xdot[t+1] R[t+1]
    # + x[t+1] R'[t+1]
    cumprod_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb)
    if ca:
        return
    outer, m, inner = pool[k], pool[k + 1], pool[k + 2]
    for r in range(outer):
        for q in range(inner):
            base = r * m * inner + q
            acc, accd = 0.0, 0.0
            for t in range(m - 1, -1, -1):
                at = base + t * inner
                nxt, nxtd = 0.0, 0.0
                if t + 1 < m:
                    nxt, nxtd = val[ia + at + inner], dot[ia + at + inner]
                accd = adjdot[o + at] + nxtd * acc + nxt * accd
                acc = adj[o + at] + nxt * acc
                before, befored = 1.0, 0.0
                if t > 0:
                    before, befored = val[o + at - inner], dot[o + at - inner]
                adjdot[ia + at] += befored * acc + before * accd

"""Op table entries: ``np.interp`` and ``np.correlate``/``np.convolve`` (structured ops).

Kernels side by side, the reverse kernel the transpose of the tangent map (signatures in
:mod:`jittape.optable.entry`). INTERP's second operand is the table ``xp`` followed by ``fp``
(``k`` knots); CORRELATE's layout ``pool[k:k+3]`` is (len a, len v, first lag).
"""

import numpy as np

from ..entry import pool_at, structured


# --- np.interp: queries x (operand a) against b = [xp, fp] (2k values, k knots) -----------
def interp_branch(val, ib, m, x):
    # NumPy's branch at x: j >= 0 the segment [xp[j], xp[j+1]) (a knot x == xp[j] is in the
    # segment to its right); -1 - i the constant fp[i] (left of the knots, at or right of
    # the last knot, a single knot); -m - 1 a NaN x (the result is x)
    if m == 1:
        return -1
    if x != x:
        return -m - 1
    if x < val[ib]:
        return -1
    if x >= val[ib + m - 1]:
        return -m
    lo, hi = 0, m - 2  # the last j with xp[j] <= x (the last of repeated knots)
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if x >= val[ib + mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def interp_forward(val, o, n, ia, ib, k, c, pool, off):
    for i in range(n):
        x = val[ia + i]
        j = interp_branch(val, ib, k, x)
        if j == -k - 1:
            z = x
        elif j < 0:
            z = val[ib + k - 1 - j]
        elif x == val[ib + j]:  # NumPy: fp[j] exactly at a knot (no inf * 0)
            z = val[ib + k + j]
        else:  # NumPy's formula, and its retry from the right end when it gives NaN
            f0, f1 = val[ib + k + j], val[ib + k + j + 1]
            s = (f1 - f0) / (val[ib + j + 1] - val[ib + j])
            z = s * (x - val[ib + j]) + f0
            if z != z:
                z = s * (x - val[ib + j + 1]) + f1
                if z != z and f0 == f1:
                    z = f0
        val[o + i] = z


def interp_partials(val, ib, m, x):
    # (j, dz/dx, u, s): in segment j (j >= 0) dz/dfp[j] = 1 - u, dz/dfp[j+1] = u,
    # dz/dxp[j] = s (u - 1), dz/dxp[j+1] = -s u with u = (x - xp[j]) / h, s the slope;
    # a constant branch -1 - i has dz/dfp[i] = 1 only, the NaN branch dz/dx = 1 only
    j = interp_branch(val, ib, m, x)
    if j < 0:
        return j, 1.0 if j == -m - 1 else 0.0, 0.0, 0.0
    h = val[ib + j + 1] - val[ib + j]
    s = (val[ib + m + j + 1] - val[ib + m + j]) / h
    return j, s, (x - val[ib + j]) / h, s


def interp_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    for i in range(n):
        j, dx, u, s = interp_partials(val, ib, k, val[ia + i])
        z = 0.0 if ca else dx * dot[ia + i]
        if not cb and j >= 0:
            z += ((1.0 - u) * dot[ib + k + j] + u * dot[ib + k + j + 1]
                  + s * (u - 1.0) * dot[ib + j] - s * u * dot[ib + j + 1])
        elif not cb and j > -k - 1:
            z += dot[ib + k - 1 - j]
        dot[o + i] = z


def interp_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    for i in range(n):
        g = adj[o + i]
        j, dx, u, s = interp_partials(val, ib, k, val[ia + i])
        if not ca:
            adj[ia + i] += g * dx
        if not cb and j >= 0:
            adj[ib + k + j] += g * (1.0 - u)
            adj[ib + k + j + 1] += g * u
            adj[ib + j] += g * s * (u - 1.0)
            adj[ib + j + 1] -= g * s * u
        elif not cb and j > -k - 1:
            adj[ib + k - 1 - j] += g


def interp_hvp(val, dot, adj, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb):
    # In segment j, z = fp[j] + s (x - xp[j]) is linear in x (its second derivative in x is
    # 0, and a kink at a knot has none but a Dirac mass that no Hessian holds): the reverse
    # rule on adjdot, plus zbar times the tangents of its coefficients s and u, which vary
    # with the table: h' = xp'[j+1] - xp'[j], s' = (fp'[j+1] - fp'[j] - s h') / h,
    # u' = (x' - xp'[j] - u h') / h. A constant table leaves no such term.
    interp_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb)
    interp_reverse(val, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb)
    if cb:
        return
    for i in range(n):
        g = adj[o + i]
        j, dx, u, s = interp_partials(val, ib, k, val[ia + i])
        if g == 0.0 or j < 0:
            continue
        h = val[ib + j + 1] - val[ib + j]
        hd = dot[ib + j + 1] - dot[ib + j]
        sd = (dot[ib + k + j + 1] - dot[ib + k + j] - s * hd) / h
        ud = ((0.0 if ca else dot[ia + i]) - dot[ib + j] - u * hd) / h
        if not ca:
            adjdot[ia + i] += g * sd
        adjdot[ib + k + j] -= g * ud
        adjdot[ib + k + j + 1] += g * ud
        adjdot[ib + j] += g * (sd * (u - 1.0) + s * ud)
        adjdot[ib + j + 1] -= g * (sd * u + s * ud)


# --- np.correlate: z[i] = sum_p a[i + lag + p] v[p] over the overlap; pool[k:] = na, nv, lag
def correlate_into(out, x, y, o, n, ia, ib, na, nv, lag):
    for i in range(n):
        s = i + lag
        acc = 0.0
        for p in range(max(0, -s), min(nv, na - s)):
            acc += x[ia + s + p] * y[ib + p]
        out[o + i] += acc


def correlate_forward(val, o, n, ia, ib, k, c, pool, off):
    for i in range(n):
        val[o + i] = 0.0
    correlate_into(val, val, val, o, n, ia, ib, pool[k], pool[k + 1], pool[k + 2])


def correlate_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    # zdot = corr(adot, v) + corr(a, vdot): bilinear
    for i in range(n):
        dot[o + i] = 0.0
    if not ca:
        correlate_into(dot, dot, val, o, n, ia, ib, pool[k], pool[k + 1], pool[k + 2])
    if not cb:
        correlate_into(dot, val, dot, o, n, ia, ib, pool[k], pool[k + 1], pool[k + 2])


def correlate_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb):
    na, nv, lag = pool[k], pool[k + 1], pool[k + 2]
    for i in range(n):
        g = adj[o + i]
        s = i + lag
        for p in range(max(0, -s), min(nv, na - s)):
            if not ca:
                adj[ia + s + p] += g * val[ib + p]
            if not cb:
                adj[ib + p] += g * val[ia + s + p]


def correlate_hvp(val, dot, adj, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb):
    # bilinear, as matmul_hvp: the reverse rule on adj and on adjdot, plus the cross terms
    # abar'[i+l+p] += zbar[i] v'[p], vbar'[p] += zbar[i] a'[i+l+p]; they pair one operand's
    # adjoint with the other's tangent, so a constant operand leaves none
    correlate_reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb)
    correlate_reverse(val, adjdot, o, n, ia, ib, k, c, pool, off, ca, cb)
    if ca or cb:
        return
    na, nv, lag = pool[k], pool[k + 1], pool[k + 2]
    for i in range(n):
        g = adj[o + i]
        s = i + lag
        for p in range(max(0, -s), min(nv, na - s)):
            adjdot[ia + s + p] += g * dot[ib + p]
            adjdot[ib + p] += g * dot[ia + s + p]


def interp_check(t, i, n, sa, sb):
    k = int(t.k[i])
    return "interp table does not match its knot count" if k < 1 or sb != 2 * k or \
        n != sa else None


def correlate_check(t, i, n, sa, sb):
    lay = pool_at(t, int(t.k[i]), 3)
    if lay is None:
        return "pool offset out of range"
    return "correlate layout does not match its operands" if (lay[0], lay[1]) != (sa, sb) \
        else None


NUMERIC_OPS = [
    structured("interp", [np.interp], "z = fp[j] + s (x - xp[j]) in segment j (NumPy's, a "
               "knot in the segment to its right); xbar += zbar s, fpbar[j:j+2] += zbar (1-u, "
               "u), xpbar[j:j+2] += zbar s (u-1, -u), u = (x - xp[j]) / h", interp_forward,
               interp_tangent, interp_reverse, arity=2, check=interp_check,
               second=interp_hvp),
    structured("correlate", [np.correlate, np.convolve], "z[i] = sum_p a[i+l+p] v[p]; "
               "abar[i+l+p] += zbar[i] v[p]; vbar[p] += zbar[i] a[i+l+p]", correlate_forward,
               correlate_tangent, correlate_reverse, arity=2, check=correlate_check,
               second=correlate_hvp),
]

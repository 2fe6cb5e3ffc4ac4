"""Op table entries of custom derivative rules (:mod:`jittape.custom`): regions and calls.

A custom rule is recorded as ordinary records plus five ops (the convention of regions and
calls is explained once in :mod:`jittape.optable`). ``y = f(x_1, ..., x_n)`` with
``f = custom_vjp(f); f.defvjp(fwd, bwd)`` records::

    s_q = custom_arg(x_q)                   value and tangent of x_q, no adjoint
    ... fwd(s_1, ..., s_n) ...              -> y0 and the residuals, ordinary records
    r = custom_begin                         k: the custom_vjp record below
    ybar = custom_slot                       y's shape; set by the rule before use
    ... bwd(residuals, ybar) ...             -> xbar_1, ..., xbar_n (the region)
    y = custom_vjp(y0, x_q, ybar, xbar_q, r)

and ``g = custom_jvp(g); g.defjvp(jvp)`` the same with tangent slots ``xdot_q`` (x_q's
shapes) and ``ydot = jvp((s_q), (xdot_q))[1]`` in the region, then
``y = custom_jvp(y0, x_q, xdot_q, ydot, r)``. The ordinary sweeps never visit a region;
the rules below run the forward (and tangent) sweep over it, with the slots set:

* custom_vjp: value ``y = y0``; reverse ``ybar = adj[y]``, forward over the region,
  ``adj[x_q] += xbar_q``; its tangent ``ydot = y0dot`` (fwd's own, through the identity
  tangent of custom_arg) serves second order only: the public forward mode refuses the op
  (JAX does the same); second order ``ybar = adj[y]``, ``ybardot = adjdot[y]``, forward and
  tangent sweeps over the region, ``adj[x_q] += xbar_q``, ``adjdot[x_q] += xbardot_q``
  (forward over reverse, ``bwd`` differentiated through the residuals' tangents).
* custom_jvp: tangent ``xdot_q = dot[x_q]``, forward over the region, ``dot[y] = ydot``;
  reverse, the transpose of that linear map: ``xdot_q = 0``, forward over the region, the
  region's adjoints zeroed, ``adj[ydot] += adj[y]``, and the reverse sweep goes on through
  the region (it needs no recursion: the sweep itself walks it) down to the marker, where
  ``adj[x_q] += adj[xdot_q]``. The contributions the region's records send outside it (to
  the primals) are exactly zero when ``ydot`` is linear in the tangents, which a jvp rule
  must be. Second order likewise, with the region's tangents from ``xdot_q``'s (zero) and
  the primals' (Griewank & Walther, "Evaluating Derivatives", 2nd ed., sec. 5.4).

Pool layout of a call record at ``k``: ``nparts = 2n + 3``, ``n``, then ``(record, size)``
per part, in the orders above (y0, x_q, slots, results, marker), then the length and the
code points of the user function's name (for messages).
"""

import numpy as np

from .optable import Spec, call, pool_at, region, structured


# --- custom_arg and custom_slot: structured ops ------------------------------------------
def custom_arg_forward(val, o, n, ia, ib, k, c, pool, off):
    for j in range(n):  # z = x
        val[o + j] = val[ia + j]


def custom_arg_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    custom_arg_forward(dot, o, n, ia, ib, k, c, pool, off)  # zdot = xdot


def custom_slot_forward(val, o, n, ia, ib, k, c, pool, off):
    pass  # the value is set by the rule of the region's owner before the region runs


def identity_pattern(n, sizes, k, pool, consts):
    at = np.arange(n)
    return [(at, at)]


# --- helpers of the call kernels (copied into the generated sweeps) ------------------------
def custom_copy(dst, d, src, s, n):
    for j in range(n):
        dst[d + j] = src[s + j]


def custom_add(dst, d, src, s, n):
    for j in range(n):
        dst[d + j] += src[s + j]


def custom_fill(buf, lo, hi, v):
    for j in range(lo, hi):
        buf[j] = v


def custom_zero_at(buf, lo, hi):
    for j in range(lo, hi):
        if buf[j] != 0.0:
            return False
    return True


def custom_part(pool, k, q):
    return pool[k + 2 + 2 * q]


# --- the call records' kernels -------------------------------------------------------------
def custom_forward(t_op, t_a, t_b, t_k, t_c, off, pool, val, i):
    o = off[i]
    custom_copy(val, o, val, off[t_a[i]], off[i + 1] - o)  # y = y0


def custom_vjp_tangent(t_op, t_a, t_b, t_k, t_c, off, pool, val, dot, i):
    o = off[i]
    custom_copy(dot, o, dot, off[t_a[i]], off[i + 1] - o)  # ydot = y0dot (fwd's own)


def custom_vjp_reverse(t_op, t_a, t_b, t_k, t_c, off, pool, val, adj, c, at):
    r, k, o, m = t_b[c], t_k[c], off[c], off[c + 1]
    if at != c or custom_zero_at(adj, o, m):  # bwd is linear in ybar: zero gives zero
        return r
    n = pool[k + 1]
    custom_copy(val, off[custom_part(pool, k, n + 1)], adj, o, m - o)  # ybar = adj[y]
    forward_range(t_op, t_a, t_b, t_k, t_c, off, pool, val,  # noqa: F821
                  np.int64(r + 1), np.int64(c))
    for q in range(n):
        x, xb = custom_part(pool, k, 1 + q), custom_part(pool, k, n + 2 + q)
        custom_add(adj, off[x], val, off[xb], off[x + 1] - off[x])  # xbar_q += bwd's
    return r  # the region is done: the sweep goes on below its marker


def custom_vjp_hvp(t_op, t_a, t_b, t_k, t_c, off, pool, val, dot, adj, adjdot, c, at):
    r, k, o, m = t_b[c], t_k[c], off[c], off[c + 1]
    if at != c or (custom_zero_at(adj, o, m) and custom_zero_at(adjdot, o, m)):
        return r
    n = pool[k + 1]
    slot = off[custom_part(pool, k, n + 1)]
    custom_copy(val, slot, adj, o, m - o)
    custom_copy(dot, slot, adjdot, o, m - o)
    forward_range(t_op, t_a, t_b, t_k, t_c, off, pool, val,  # noqa: F821
                  np.int64(r + 1), np.int64(c))
    tangent_range(t_op, t_a, t_b, t_k, t_c, off, pool, val, dot,  # noqa: F821
                  np.int64(r + 1), np.int64(c))
    for q in range(n):
        x, xb = custom_part(pool, k, 1 + q), custom_part(pool, k, n + 2 + q)
        size = off[x + 1] - off[x]
        custom_add(adj, off[x], val, off[xb], size)
        custom_add(adjdot, off[x], dot, off[xb], size)
    return r


def custom_jvp_tangent(t_op, t_a, t_b, t_k, t_c, off, pool, val, dot, i):
    r, k, o = t_b[i], t_k[i], off[i]
    n = pool[k + 1]
    for q in range(n):  # xdot_q = dot[x_q]
        x = custom_part(pool, k, 1 + q)
        custom_copy(val, off[custom_part(pool, k, n + 1 + q)], dot, off[x], off[x + 1] - off[x])
    forward_range(t_op, t_a, t_b, t_k, t_c, off, pool, val,  # noqa: F821
                  np.int64(r + 1), np.int64(i))
    custom_copy(dot, o, val, off[custom_part(pool, k, 2 * n + 1)], off[i + 1] - o)


def custom_jvp_prologue(t_op, t_a, t_b, t_k, t_c, off, pool, val, c):
    """The region at zero tangents (the linear map's coefficients)."""
    r, k = t_b[c], t_k[c]
    n = pool[k + 1]
    for q in range(n):
        xd = custom_part(pool, k, n + 1 + q)
        custom_fill(val, off[xd], off[xd + 1], 0.0)
    forward_range(t_op, t_a, t_b, t_k, t_c, off, pool, val,  # noqa: F821
                  np.int64(r + 1), np.int64(c))


def custom_jvp_reverse(t_op, t_a, t_b, t_k, t_c, off, pool, val, adj, c, at):
    r, k, o, m = t_b[c], t_k[c], off[c], off[c + 1]
    n = pool[k + 1]
    if at != c:  # at the marker: the region's reverse sweep is done
        for q in range(n):
            x, xd = custom_part(pool, k, 1 + q), custom_part(pool, k, n + 1 + q)
            custom_add(adj, off[x], adj, off[xd], off[x + 1] - off[x])
        return at
    if custom_zero_at(adj, o, m):
        return r
    custom_jvp_prologue(t_op, t_a, t_b, t_k, t_c, off, pool, val, c)
    custom_fill(adj, off[r], o, 0.0)
    custom_add(adj, off[custom_part(pool, k, 2 * n + 1)], adj, o, m - o)  # ydot's adjoint
    return c  # the sweep goes on into the region


def custom_jvp_hvp(t_op, t_a, t_b, t_k, t_c, off, pool, val, dot, adj, adjdot, c, at):
    r, k, o, m = t_b[c], t_k[c], off[c], off[c + 1]
    n = pool[k + 1]
    if at != c:
        for q in range(n):
            x, xd = custom_part(pool, k, 1 + q), custom_part(pool, k, n + 1 + q)
            size = off[x + 1] - off[x]
            custom_add(adj, off[x], adj, off[xd], size)
            custom_add(adjdot, off[x], adjdot, off[xd], size)
        return at
    if custom_zero_at(adj, o, m) and custom_zero_at(adjdot, o, m):
        return r
    custom_jvp_prologue(t_op, t_a, t_b, t_k, t_c, off, pool, val, c)
    for q in range(n):  # the tangents are fixed at zero: their own tangents are zero
        xd = custom_part(pool, k, n + 1 + q)
        custom_fill(dot, off[xd], off[xd + 1], 0.0)
    tangent_range(t_op, t_a, t_b, t_k, t_c, off, pool, val, dot,  # noqa: F821
                  np.int64(r + 1), np.int64(c))
    custom_fill(adj, off[r], o, 0.0)
    custom_fill(adjdot, off[r], o, 0.0)
    yd = off[custom_part(pool, k, 2 * n + 1)]
    custom_add(adj, yd, adj, o, m - o)
    custom_add(adjdot, yd, adjdot, o, m - o)
    return c


# --- layout, names, checks of loaded tapes (plain Python) ----------------------------------
def call_layout(t, i):
    """``(n, parts)`` of call record ``i``: its x count and its operands' record ids."""
    k = int(t.k[i])
    nparts, n = int(t.pool[k]), int(t.pool[k + 1])
    return n, [int(t.pool[k + 2 + 2 * q]) for q in range(nparts)]


def call_pool(parts, sizes, n, name):
    """The pool entries of a call record (see the module docstring)."""
    out = [len(parts), n]
    for p, s in zip(parts, sizes):
        out += [p, s]
    name = name[:200]
    return out + [len(name)] + [ord(ch) for ch in name]


def custom_label(t, i):
    k = int(t.k[i])
    end = k + 2 + 2 * int(t.pool[k])
    return "".join(chr(int(v)) for v in t.pool[end + 1:end + 1 + int(t.pool[end])])


def _check_call(slots_of, results_of):
    """A check of a call record's layout: ``slots_of(n)``/``results_of(n)`` give the part
    positions of its slots and results, and the part whose size each must equal."""
    def check(t, i, size, sa, sb):
        k = int(t.k[i])
        head = pool_at(t, k, 2)
        if head is None or head[1] < 1 or head[0] != 2 * head[1] + 3:
            return "bad custom rule layout"
        n = head[1]
        parts = pool_at(t, k + 2, 2 * head[0])
        name = pool_at(t, k + 2 + 2 * head[0], 1)
        if parts is None or name is None or name[0] < 0 or pool_at(
                t, k + 3 + 2 * head[0], name[0]) is None:
            return "pool offset out of range"
        ids, sizes = parts[::2], parts[1::2]
        if any(not 0 <= rid < i or t.off[rid + 1] - t.off[rid] != s
               for rid, s in zip(ids, sizes)):
            return "custom rule operand does not match its record"
        r = ids[-1]
        if r != t.b[i] or int(t.k[r]) != i or _kind_of(t, r) != "region":
            return "custom rule region does not match its marker"
        if sizes[0] != size or any(ids[q] >= r for q in range(n + 1)):
            return "custom rule primal out of place"
        for q, like in slots_of(n):
            if not r < ids[q] < i or sizes[q] != sizes[like]:
                return "custom rule slot out of place"
        for q, like, inside in results_of(n):
            if sizes[q] != sizes[like] or (inside and not r < ids[q] < i):
                return "custom rule result out of place"
        codes = pool_at(t, k + 3 + 2 * head[0], name[0])
        return "bad name" if any(not 0 <= ch < 0x110000 for ch in codes) else None
    return check


def _kind_of(t, r):
    from .ops import OPS  # (the table imports this module)
    code = int(t.op[r])
    return OPS[code].kind if 0 <= code < len(OPS) else "?"


def custom_begin_check(t, i, n, sa, sb):
    c = int(t.k[i])
    if not i < c < len(t.op) or int(t.b[c]) != i or _kind_of(t, c) != "call":
        return "region marker does not match its custom rule"
    return None


def custom_slot_check(t, i, n, sa, sb):
    return None  # no operand, nothing read: the call record's check places it


def custom_arg_check(t, i, n, sa, sb):
    return "size differs from its operand's" if sa != n else None


# --- specs for the generic checker: custom functions built on first use --------------------
_EXAMPLES = {}


def _example(which):
    if not _EXAMPLES:
        from .custom import custom_jvp, custom_vjp

        @custom_vjp
        def sin_mul(x, y):  # sin(x) y with a hand-written VJP
            return np.sin(x) * y

        sin_mul.defvjp(lambda x, y: (np.sin(x) * y, (np.cos(x), np.sin(x), y)),
                       lambda res, g: (g * res[0] * res[2], g * res[1]))

        @custom_jvp
        def exp_mul(x, y):  # exp(x) y with a hand-written JVP
            return np.exp(x) * y

        @exp_mul.defjvp
        def _(primals, tangents):
            (x, y), (dx, dy) = primals, tangents
            z = np.exp(x) * y
            return z, z * dx + np.exp(x) * dy

        @custom_vjp
        def cube(x):  # nested: its bwd calls exp_mul
            return x ** 3

        cube.defvjp(lambda x: (x ** 3, x), lambda x, g: (exp_mul(0.0 * x, 3.0 * x * x) * g,))
        _EXAMPLES.update(vjp=sin_mul, jvp=exp_mul, nested=cube)
    return _EXAMPLES[which]


def spec_vjp(x, y):
    return _example("vjp")(x, y)


def spec_jvp(x, y):
    return _example("jvp")(x, y)


def spec_nested(x):
    return _example("nested")(x) * x


_PAIRS = (((3,), (3,)), ((), ()), ((2, 2), (2, 2)))
_NO_FORWARD = ("{name} is a jittape.custom_vjp function: custom_vjp defines no forward-mode "
               "rule; use grad/vjp, or custom_jvp")

CUSTOM_OPS = [
    structured("custom_arg", [], "z = x; zdot = xdot; no adjoint flows to x (the argument "
               "of a custom rule's function: the rule's record gives x its adjoint)",
               custom_arg_forward, custom_arg_tangent, None, check=custom_arg_check,
               second="linear", pattern=identity_pattern,
               spec=Spec(shapes=(((4,),),), fn=spec_nested)),
    region("custom_begin", "marks a custom rule's region (its bwd or jvp, recorded); the "
           "sweeps jump from here to the rule's record (k), whose rule runs the region",
           check=custom_begin_check, spec=Spec(shapes=_PAIRS, fn=spec_jvp)),
    structured("custom_slot", [], "the cotangent (custom_vjp) or a tangent (custom_jvp) of "
               "a region, set by its rule before it runs the region", custom_slot_forward,
               arity=0, check=custom_slot_check, spec=Spec(shapes=(((3,),),), fn=spec_nested)),
    call("custom_vjp", "y = fwd(x)[0]; xbar += bwd(residuals, ybar), bwd recorded and run "
         "by the forward sweep over the region (jittape.custom_vjp)", custom_forward,
         custom_vjp_tangent, custom_vjp_reverse, custom_vjp_hvp,
         _check_call(lambda n: [(n + 1, 0)],
                     lambda n: [(n + 2 + q, 1 + q, False) for q in range(n)]),
         spec=Spec(shapes=_PAIRS, fn=spec_vjp), no_forward=_NO_FORWARD, label=custom_label),
    call("custom_jvp", "ydot = jvp(x, xdot)[1], recorded and run by the forward sweep over "
         "the region; xbar += its transpose applied to ybar (jittape.custom_jvp)",
         custom_forward, custom_jvp_tangent, custom_jvp_reverse, custom_jvp_hvp,
         _check_call(lambda n: [(n + 1 + q, 1 + q) for q in range(n)],
                     lambda n: [(2 * n + 1, 0, True)]),
         spec=Spec(shapes=_PAIRS, fn=spec_jvp), label=custom_label),
]

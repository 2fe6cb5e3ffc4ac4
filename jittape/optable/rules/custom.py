"""Op table entries of custom derivative rules (:mod:`jittape.custom.custom_rules`): regions
and calls.

A custom rule is recorded as ordinary records plus five ops (the convention of regions and
calls is explained once in :mod:`jittape.optable.entry`). ``y = f(x_1, ..., x_n)`` with
``f = custom_vjp(f); f.defvjp(fwd, bwd)`` records::

    s_q = custom_arg(x_q)                   value and tangent of x_q, no adjoint
    ... fwd(s_1, ..., s_n) ...              -> y0 and the residuals, ordinary records
    r = custom_begin                         k: the custom_vjp record below
    ybar = custom_slot                       y's shape; set by the rule before use
    ... bwd(residuals, ybar) ...             -> xbar_1, ..., xbar_n (the region)
    y = custom_vjp(y0, x_q, ybar, xbar_q, r)

and ``g = custom_jvp(g); g.defjvp(jvp)`` the same with tangent slots ``xdot_q`` (x_q's
shapes) and ``ydot = jvp((s_q), (xdot_q))[1]`` in the region, then
``y = custom_jvp(y0, x_q, xdot_q, ydot, r)``. The compiled sweeps never visit a region; the
call records' rules below, Python functions that :mod:`jittape.sweeps.regions` runs between the
compiled sweeps, run those sweeps over it with the slots set:

* custom_vjp: value ``y = y0``; reverse ``ybar = adj[y]``, forward over the region,
  ``adj[x_q] += xbar_q``; its tangent ``ydot = y0dot`` (fwd's own, through the identity
  tangent of custom_arg) serves second order only: the public forward mode refuses the op
  (JAX does the same); second order ``ybar = adj[y]``, ``ybardot = adjdot[y]``, forward and
  tangent sweeps over the region, ``adj[x_q] += xbar_q``, ``adjdot[x_q] += xbardot_q``
  (forward over reverse, ``bwd`` differentiated through the residuals' tangents).
* custom_jvp: tangent ``xdot_q = dot[x_q]``, forward over the region, ``dot[y] = ydot``;
  reverse, the transpose of that linear map: ``xdot_q = 0``, forward over the region, the
  region's adjoints zeroed, ``adj[ydot] += adj[y]``, the reverse sweep over the region,
  ``adj[x_q] += adj[xdot_q]``. The contributions the region's records send outside it (to
  the primals) are exactly zero when ``ydot`` is linear in the tangents, which a jvp rule
  must be. Second order likewise, with the region's tangents from ``xdot_q``'s (zero) and
  the primals' (Griewank & Walther, "Evaluating Derivatives", 2nd ed., sec. 5.4).

Pool entries of a call record (:mod:`jittape.optable.callpool`): ``nparts = 2n + 3`` parts, in the
orders above (y0, x_q, slots, results, marker), and the user function's name.
"""

import numpy as np

from .. import callpool
from ..callpool import span
from ..registry import kind_of
from ..entry import Spec, call, region, structured


# --- custom_arg and custom_slot: structured ops (the slot has no kernel: no branch) --------
def custom_arg_forward(val, o, n, ia, ib, k, c, pool, off):
    for j in range(n):  # z = x
        val[o + j] = val[ia + j]


def custom_arg_tangent(val, dot, o, n, ia, ib, k, c, pool, off, ca, cb):
    custom_arg_forward(dot, o, n, ia, ib, k, c, pool, off)  # zdot = xdot


def identity_pattern(n, sizes, k, pool, consts):
    at = np.arange(n)
    return [(at, at)]


# --- the call records' rules: Python, run between the compiled sweeps (jittape.sweeps.regions) ---
def _layout(t, c):
    """Call record ``c``'s marker, argument count and slices (see the pool layout above):
    ``(r, n, y, [y0, x_1..x_n, slots..., results...], region)``."""
    r, (n, ids) = int(t.b[c]), callpool.parts(t, c)
    return r, n, span(t, c), [span(t, i) for i in ids], slice(int(t.off[r]), int(t.off[c]))


def custom_forward(run, c, val):
    _, _, y, parts, _ = run.layout(c, _layout)
    val[y] = val[parts[0]]  # y = y0


def custom_vjp_tangent(run, c, val, dot):
    _, _, y, parts, _ = run.layout(c, _layout)
    dot[y] = dot[parts[0]]  # ydot = y0dot (fwd's own)


def custom_vjp_reverse(run, c, val, adj):
    r, n, y, parts, _ = run.layout(c, _layout)
    ybar = adj[y]
    if not ybar.any():  # bwd is linear in ybar: zero gives zero
        return
    val[parts[n + 1]] = ybar
    run.forward(val, r + 1, c)
    for q in range(n):  # xbar_q += bwd's
        adj[parts[1 + q]] += val[parts[n + 2 + q]]


def custom_vjp_hvp(run, c, val, dot, adj, adjdot):
    r, n, y, parts, _ = run.layout(c, _layout)
    if not (adj[y].any() or adjdot[y].any()):
        return -1
    val[parts[n + 1]], dot[parts[n + 1]] = adj[y], adjdot[y]
    run.forward(val, r + 1, c)
    run.tangent(val, dot, r + 1, c)
    for q in range(n):
        x, xb = parts[1 + q], parts[n + 2 + q]
        adj[x] += val[xb]
        adjdot[x] += dot[xb]
    return -1


def custom_jvp_tangent(run, c, val, dot):
    r, n, y, parts, _ = run.layout(c, _layout)
    for q in range(n):  # xdot_q = dot[x_q]
        val[parts[n + 1 + q]] = dot[parts[1 + q]]
    run.forward(val, r + 1, c)
    dot[y] = val[parts[2 * n + 1]]


def _jvp_at_zero(run, c, val, dot=None):
    """The region at zero tangents (the linear map's coefficients); ``dot``: with the
    region's own tangents (those of the fixed zeros are zero)."""
    layout = r, n, _, parts, _ = run.layout(c, _layout)
    for q in range(n):
        val[parts[n + 1 + q]] = 0.0
        if dot is not None:
            dot[parts[n + 1 + q]] = 0.0
    run.forward(val, r + 1, c)
    if dot is not None:
        run.tangent(val, dot, r + 1, c)
    return layout


def custom_jvp_reverse(run, c, val, adj):
    _, _, y, _, _ = run.layout(c, _layout)
    if not adj[y].any():
        return
    r, n, y, parts, region = _jvp_at_zero(run, c, val)
    adj[region] = 0.0
    adj[parts[2 * n + 1]] += adj[y]  # ydot's adjoint
    run.reverse(val, adj, r + 1, c)  # the transpose of the recorded jvp
    for q in range(n):
        adj[parts[1 + q]] += adj[parts[n + 1 + q]]


def custom_jvp_hvp(run, c, val, dot, adj, adjdot):
    _, _, y, _, _ = run.layout(c, _layout)
    if not (adj[y].any() or adjdot[y].any()):
        return -1
    r, n, y, parts, region = _jvp_at_zero(run, c, val, dot)
    adj[region] = 0.0
    adjdot[region] = 0.0
    yd = parts[2 * n + 1]
    adj[yd] += adj[y]
    adjdot[yd] += adjdot[y]
    bad = run.hvp(val, dot, adj, adjdot, r + 1, c)
    if bad >= 0:
        return bad
    for q in range(n):
        x, xd = parts[1 + q], parts[n + 1 + q]
        adj[x] += adj[xd]
        adjdot[x] += adjdot[xd]
    return -1


# --- checks of loaded tapes (plain Python) ------------------------------------------------
def _check_call(slots_of, results_of):
    """A check of a call record's layout: ``slots_of(n)``/``results_of(n)`` give the part
    positions of its slots and results, and the part whose size each must equal."""
    def check(t, i, size, sa, sb):
        got = callpool.read(t, i, size, "custom rule", lambda n: 2 * n + 3)
        if isinstance(got, str):
            return got
        n, ids, sizes, _ = got
        r = ids[-1]
        if int(t.k[r]) != i:
            return "custom rule region does not match its marker"
        if sizes[0] != size or any(ids[q] >= r for q in range(n + 1)):
            return "custom rule primal out of place"
        for q, like in slots_of(n):
            if not r < ids[q] < i or sizes[q] != sizes[like]:
                return "custom rule slot out of place"
        for q, like, inside in results_of(n):
            if sizes[q] != sizes[like] or (inside and not r < ids[q] < i):
                return "custom rule result out of place"
        return None
    return check


def custom_begin_check(t, i, n, sa, sb):
    c = int(t.k[i])
    if not i < c < len(t.op) or int(t.b[c]) != i or kind_of(t, c) != "call":
        return "region marker does not match its custom rule"
    return None


def custom_slot_check(t, i, n, sa, sb):
    return None  # no operand, nothing read: the call record's check places it


def custom_arg_check(t, i, n, sa, sb):
    return "size differs from its operand's" if sa != n else None


_PAIRS = (((3,), (3,)), ((), ()), ((2, 2), (2, 2)))
_NO_FORWARD = ("{name} is a jittape.custom_vjp function: custom_vjp defines no forward-mode "
               "rule; use grad/vjp, or custom_jvp")

CUSTOM_OPS = [
    structured("custom_arg", [], "z = x; zdot = xdot; no adjoint flows to x (the argument "
               "of a custom rule's function: the rule's record gives x its adjoint)",
               custom_arg_forward, custom_arg_tangent, None, check=custom_arg_check,
               second="linear", pattern=identity_pattern, value_pattern=True,
               spec=Spec(shapes=(((4,),),), fn="jittape.custom.examples.nested_example")),
    region("custom_begin", "marks a region (a custom rule's bwd or jvp, a checkpointed "
           "loop's step, recorded); the sweeps skip it up to its owner (k), whose rule runs it",
           check=custom_begin_check,
           spec=Spec(shapes=_PAIRS, fn="jittape.custom.examples.jvp_example")),
    structured("custom_slot", [], "the cotangent (custom_vjp) or a tangent (custom_jvp) of "
               "a region, set by its rule before it runs the region", None,
               arity=0, check=custom_slot_check,
               spec=Spec(shapes=(((3,),),), fn="jittape.custom.examples.nested_example")),
    call("custom_vjp", "y = fwd(x)[0]; xbar += bwd(residuals, ybar), bwd recorded and run "
         "by the forward sweep over the region (jittape.custom_vjp)", custom_forward,
         custom_vjp_tangent, custom_vjp_reverse, custom_vjp_hvp,
         _check_call(lambda n: [(n + 1, 0)],
                     lambda n: [(n + 2 + q, 1 + q, False) for q in range(n)]),
         spec=Spec(shapes=_PAIRS, fn="jittape.custom.examples.vjp_example"), no_forward=_NO_FORWARD,
         label=callpool.label),
    call("custom_jvp", "ydot = jvp(x, xdot)[1], recorded and run by the forward sweep over "
         "the region; xbar += its transpose applied to ybar (jittape.custom_jvp)",
         custom_forward, custom_jvp_tangent, custom_jvp_reverse, custom_jvp_hvp,
         _check_call(lambda n: [(n + 1 + q, 1 + q) for q in range(n)],
                     lambda n: [(2 * n + 1, 0, True)]),
         spec=Spec(shapes=_PAIRS, fn="jittape.custom.examples.jvp_example"), label=callpool.label),
]

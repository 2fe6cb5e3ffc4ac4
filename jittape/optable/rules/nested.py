"""Op table entries of nested differentiation (:mod:`jittape.api.nesting`): a derivative of
``f`` (a VJP or a JVP) taken inside a function that is itself being recorded.

``grad(f)(x)`` with ``x`` active on an outer tape records ``f`` on that tape, in a region
(the convention of regions and calls: :mod:`jittape.optable.entry`), and one call record
whose value is the derivative::

    r = custom_begin                 k: the call record below
    s_q = custom_slot                x_q's shape, set to x_q by the rules
    ... f(s_1, ..., s_n) ...         -> y (the region; it may read outer records: closures)
    V = nested_vjp(w, x_q, s_q, y, r)        V = J(x)^T w, the J_q^T w concatenated
    T = nested_jvp(y, x_q, v_q, s_q, r)      T = J(x) v, y's shape

The rules run the compiled sweeps over the region (:mod:`jittape.sweeps.regions`) with
scratch buffers: the value is the region's reverse (tangent) sweep, and the call's own
derivatives are second-order sweeps of the region (forward over reverse; Griewank &
Walther, "Evaluating Derivatives", 2nd ed., sec. 5.2-5.4), where ``p`` are the outer
records the region reads and ``M = d(J^T w)/d(x, p)``, symmetric in the slots:

* nested_vjp: tangent ``Vdot = M (xdot, pdot) + J^T wdot`` (one forward-over-reverse sweep
  with slot tangents ``xdot``, closure tangents ``pdot``, seed ``w``, seed tangent
  ``wdot``); reverse ``xbar += M_xx Vbar``, ``pbar += M_px Vbar``, ``wbar += J Vbar`` (one
  sweep with slot tangents ``Vbar``: ``adjdot`` and the tangent of ``y``);
* nested_jvp: reverse ``xbar += H(Tbar) v``, ``pbar += ...``, ``vbar += J^T Tbar`` (one
  sweep with slot tangents ``v`` and seed ``Tbar``); tangent ``Tdot_i = (H_i v) . (xdot,
  pdot) + (J^T e_i) . vdot``, one sweep per element ``i`` of ``y``.

These records are the second-order route: :mod:`jittape.api.nesting` records the inner
derivative as ordinary records instead (the recorded reverse sweep, which nests to any order)
whenever every op it runs through has a recorded reverse rule (:mod:`jittape.optable.recorded`).
Through the others (factorizations, ``interp``, custom rules) it takes these records, whose own
second order would be third derivatives of ``f``, which no sweep computes: both refuse it,
naming the ops.

Pool entries (:mod:`jittape.optable.callpool`): the parts above in that order, then the
marker; ``n`` counts the ``x_q``; the name of ``f``.
"""

import numpy as np

from .. import callpool
from ..callpool import span
from ..entry import Spec, call
from ..registry import read_before
from ..._base.errors import NotDifferentiableError


def _layout(t, c, groups):
    """``(r, out, parts by group, closures)``: call record ``c``'s marker, value slice, its
    parts split into ``groups`` (per group: one part, or ``"n"`` parts) and the slices of
    the outer records its region reads."""
    r, (n, ids) = int(t.b[c]), callpool.parts(t, c)
    spans, at, out = [span(t, i) for i in ids], 0, []
    for g in groups:
        k = n if g == "n" else 1
        out.append(spans[at:at + k] if g == "n" else spans[at])
        at += k
    return r, span(t, c), out, [span(t, q) for q in read_before(t, r + 1, c, r)]


def _vjp_layout(t, c):
    return _layout(t, c, (1, "n", "n", 1))  # w, x_q, s_q, y


def _jvp_layout(t, c):
    return _layout(t, c, (1, "n", "n", "n"))  # y, x_q, v_q, s_q


def _third(run, c, bad):
    from ..recorded import OPS, vjp_of  # (the table is assembled from this module)
    r, t = int(run.t.b[c]), run.t
    op = OPS[int(t.op[bad])]
    if op.kind != "call":  # an op with no second-order rule: second derivatives already
        raise NotDifferentiableError(
            f"second derivatives through {op.name} (record v{bad}, inside the derivative of "
            f"{callpool.label(t, c)} taken in a recorded function): {op.name} has no "
            f"second-order rule. Differentiate once inside the recorded function, or "
            f"difference the outer level.")
    names = sorted({OPS[int(o)].name for o in t.op[r + 1:c] if OPS[int(o)].kind in
                    ("unary", "binary", "select", "ternary", "structured") and
                    vjp_of(int(o)) is None})
    raise NotDifferentiableError(
        f"third derivatives through nested differentiation (record v{bad} inside the "
        f"derivative of {callpool.label(t, c)}): derivatives of derivatives nest to any "
        f"order through ops that have a recorded reverse rule, and this derivative runs "
        f"through {', '.join(names) or 'a custom rule'}, which has none (`python -m jittape "
        f"ops` lists them), so it nests to second order only. Differentiate the inner "
        f"function's hvp/hessian instead, or difference the outer level.")


def _enter(run, c, val, r, xs, slots):
    """Set the slots to their arguments and run the forward sweep over the region."""
    for x, s in zip(xs, slots):
        val[s] = val[x]
    return run.forward(val, r + 1, c)


def _slot_tangents(buf, sources, slots):
    """A scratch tangent buffer (zeros) with each slot set to ``buf`` at its source."""
    sdot = np.zeros_like(buf)
    for q, s in zip(sources, slots):
        sdot[s] = buf[q]
    return sdot


def _second(run, c, val, r, sdot, seed, seed_dot, y):
    """Forward over reverse over the region: tangents from ``sdot`` (set by the caller),
    adjoint ``seed`` (and its tangent) at ``y``; returns the scratch ``adj, adjdot``."""
    run.tangent(val, sdot, r + 1, c)
    adj, adjdot = np.zeros_like(val), np.zeros_like(val)
    adj[y] = seed
    if seed_dot is not None:
        adjdot[y] = seed_dot
    bad = run.hvp(val, sdot, adj, adjdot, r + 1, c)
    if bad >= 0:
        _third(run, c, bad)
    return adj, adjdot


# --- nested_vjp: V = J(x)^T w ------------------------------------------------------------
def vjp_forward(run, c, val):
    r, out, (w, xs, slots, y), _ = run.layout(c, _vjp_layout)
    bad = _enter(run, c, val, r, xs, slots)
    if bad >= 0:
        return bad
    adj = np.zeros_like(val)
    adj[y] = val[w]
    run.reverse(val, adj, r + 1, c)
    val[out] = np.concatenate([adj[s] for s in slots])
    return -1


def vjp_tangent(run, c, val, dot):
    r, out, (w, xs, slots, y), closures = run.layout(c, _vjp_layout)
    sdot = _slot_tangents(dot, xs, slots)
    for p in closures:
        sdot[p] = dot[p]
    _, adjdot = _second(run, c, val, r, sdot, val[w], dot[w], y)
    dot[out] = np.concatenate([adjdot[s] for s in slots])


def vjp_reverse(run, c, val, adj):
    r, out, (w, xs, slots, y), closures = run.layout(c, _vjp_layout)
    vbar = adj[out]
    if not vbar.any():
        return
    sdot, at = np.zeros_like(val), 0
    for s in slots:
        sdot[s] = vbar[at:at + s.stop - s.start]
        at += s.stop - s.start
    _, adjdot = _second(run, c, val, r, sdot, val[w], None, y)
    for x, s in zip(xs, slots):
        adj[x] += adjdot[s]
    for p in closures:
        adj[p] += adjdot[p]
    adj[w] += sdot[y]  # J Vbar: the tangent of y along the slots' Vbar


# --- nested_jvp: T = J(x) v --------------------------------------------------------------
def jvp_forward(run, c, val):
    r, out, (y, xs, vs, slots), _ = run.layout(c, _jvp_layout)
    bad = _enter(run, c, val, r, xs, slots)
    if bad >= 0:
        return bad
    sdot = _slot_tangents(val, vs, slots)
    run.tangent(val, sdot, r + 1, c)
    val[out] = sdot[y]
    return -1




def jvp_reverse(run, c, val, adj):
    r, out, (y, xs, vs, slots), closures = run.layout(c, _jvp_layout)
    tbar = adj[out]
    if not tbar.any():
        return
    sadj, adjdot = _second(run, c, val, r, _slot_tangents(val, vs, slots), tbar, None, y)
    for x, v, s in zip(xs, vs, slots):
        adj[x] += adjdot[s]
        adj[v] += sadj[s]
    for p in closures:
        adj[p] += adjdot[p]


def jvp_tangent(run, c, val, dot):
    r, out, (y, xs, vs, slots), closures = run.layout(c, _jvp_layout)
    tdot = np.zeros(out.stop - out.start)
    for i in range(tdot.size):  # one forward-over-reverse sweep per element of y
        seed = np.zeros(tdot.size)
        seed[i] = 1.0
        sadj, adjdot = _second(run, c, val, r, _slot_tangents(val, vs, slots), seed, None,
                               y)
        tdot[i] = sum(adjdot[s] @ dot[x] + sadj[s] @ dot[v] for x, v, s in zip(xs, vs, slots))
        tdot[i] += sum(adjdot[p] @ dot[p] for p in closures)
    dot[out] = tdot


# --- checks of loaded tapes ----------------------------------------------------------------
def _check(count, inside, outside, size_of):
    """A check of a nested call's layout: ``count(n)`` parts; the parts at positions
    ``inside(n)`` lie in the region, those at ``outside(n)`` before its marker;
    ``size_of(n, sizes)`` is the size the record's value must have."""
    def check(t, i, size, sa, sb):
        got = callpool.read(t, i, size, "nested derivative", count)
        if isinstance(got, str):
            return got
        n, ids, sizes, _ = got
        r = ids[-1]
        if int(t.k[r]) != i:
            return "nested derivative region does not match its marker"
        if any(not r < ids[q] < i for q in inside(n)) or any(ids[q] >= r for q in outside(n)):
            return "nested derivative part out of place"
        if size != size_of(n, sizes):
            return "nested derivative size differs"
        return None
    return check


def _vjp_sizes_ok(n, sizes):
    return sum(sizes[1:1 + n]) if sizes[0] == sizes[2 * n + 1] and all(
        sizes[1 + q] == sizes[1 + n + q] for q in range(n)) else -1


def _jvp_sizes_ok(n, sizes):
    return sizes[0] if all(sizes[1 + q] == sizes[1 + n + q] == sizes[1 + 2 * n + q]
                           for q in range(n)) else -1


_NO_SECOND = ("{name} is differentiated inside a recorded function (nested differentiation): "
              "second order of it would be a third derivative, which jittape does not "
              "compute; use hvp/hessian of the inner function directly")

NESTED_OPS = [
    call("nested_vjp", "V = J(x)^T w for f recorded in the region (grad, vjp inside a "
         "recorded function); V's tangent and adjoint are forward-over-reverse sweeps of "
         "the region (second derivatives of f)", vjp_forward, vjp_tangent, vjp_reverse, None,
         _check(lambda n: 2 * n + 3, lambda n: range(n + 1, 2 * n + 2),
                lambda n: range(0, n + 1), _vjp_sizes_ok),
         spec=Spec(shapes=(((3,),), ((),)), fn="jittape.api.nesting_examples.grad_of_grad_example"),
         label=callpool.label, no_second=_NO_SECOND),
    call("nested_jvp", "T = J(x) v for f recorded in the region (jvp inside a recorded "
         "function); T's adjoint is one forward-over-reverse sweep of the region, its "
         "tangent one per element of T", jvp_forward, jvp_tangent, jvp_reverse, None,
         _check(lambda n: 3 * n + 2, lambda n: [0, *range(2 * n + 1, 3 * n + 1)],
                lambda n: range(1, 2 * n + 1), _jvp_sizes_ok),
         spec=Spec(shapes=(((3,),), ((),)), fn="jittape.api.nesting_examples.grad_of_jvp_example"),
         label=callpool.label, no_second=_NO_SECOND),
]

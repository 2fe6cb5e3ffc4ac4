"""Op table entry of checkpointed loops (:func:`jittape.checkpoint_loop`): a call record
whose region holds ONE step of ``x_{k+1} = step(x_k, *params)``, run ``n`` times.

``x_n = checkpoint_loop(step, n, x_0, p_1..p_m, snapshots=s)`` records (the convention of
regions and calls: :mod:`jittape.optable.entry`)::

    r = custom_begin                      k: the checkpoint_loop record below
    sp_j = custom_slot                    p_j, each active parameter's shape
    sx = custom_slot                      x_k, x_0's shape; set by the rules
    ... step(sx, sp_1, ...) ...           -> y = x_{k+1} (the region)
    snaps = custom_slot                   s snapshots of x and a flag, s d + 1 values
    x_n = checkpoint_loop(y, x_0, p_j, sx, sp_j, snaps, r)

The rules run the compiled sweeps over the region (:mod:`jittape.sweeps.regions`):

* value: ``sx = x_0``, then ``n`` times the forward sweep over the region and ``sx = y``;
  on the way, the states that the schedule's forward pass keeps go into ``snaps``
  (:mod:`jittape._base.revolve`), and the flag says that they are there;
* reverse: ``xbar = adj[x_n]``; the schedule's actions, each back step ``k`` being ``sx =
  x_k``, the forward sweep over the region (step ``k``'s values), its adjoints zeroed,
  ``adj[y] = xbar``, the reverse sweep over the region, ``xbar = adj[sx]`` and ``adj[p_j] +=
  adj[sp_j]``; finally ``adj[x_0] += xbar`` (Griewank & Walther, "Evaluating
  Derivatives", 2nd ed., ch. 12: reversal with checkpoints). A reverse sweep without a
  forward sweep before it (a second reverse on the same values) runs the forward pass
  again, since the first one used the snapshot slots for its own;
* tangent: ``sx = x_0``, ``sxdot = x_0dot``, then ``n`` times the forward and tangent
  sweeps over the region;
* no second-order rule (the error says what to do).

Pool entries (:mod:`jittape.optable.callpool`): ``nparts = 2m + 5`` parts, ``n = m + 1``: y, x_0,
p_j, sx, sp_j, snaps and r; the step's name; the tail: the number of steps and of snapshots.
"""

from types import SimpleNamespace

from ..._base import revolve
from .. import callpool
from ..callpool import span
from ..entry import Spec, call

ADVANCE, STORE, RESTORE, BACK = revolve.ADVANCE, revolve.STORE, revolve.RESTORE, revolve.BACK


def loop_layout(t, c):
    """What the rules of checkpoint_loop record ``c`` use, computed once per tape."""
    n, ids = callpool.parts(t, c)
    parts = [span(t, i) for i in ids]
    steps, snaps = callpool.tail(t, c, 2)
    r = ids[-1]
    sched = revolve.schedule(steps, snaps)
    return SimpleNamespace(
        r=r, lo=r + 1, hi=c, out=span(t, c), y=parts[0], x0=parts[1],
        params=parts[2:1 + n], sx=parts[1 + n], sparams=parts[2 + n:1 + 2 * n],
        snaps=parts[1 + 2 * n], region=slice(int(t.off[r]), int(t.off[c])),
        d=parts[0].stop - parts[0].start, steps=steps, sched=sched,
        store=dict(sched.prefix), nested=None)


def _sweeps(run, L):
    """The forward and reverse sweeps over the region, as ``f(val)`` and ``r(val, adj)``:
    the compiled ones directly when no call is nested in it (the common case)."""
    if L.nested is None:
        L.nested = any(L.lo < c < L.hi for _, c in run.calls)
    lo, hi = L.lo, L.hi
    if L.nested:
        return (lambda val: run.forward(val, lo, hi)), \
            (lambda val, adj: run.reverse(val, adj, lo, hi))
    fs, rs = run.sw.forward_sweep, run.sw.reverse_sweep
    t_op, t_a, t_b, t_k, t_c, off, pool = run.cols
    return (lambda val: fs(t_op, t_a, t_b, t_k, t_c, off, pool, val, lo, hi)), \
        (lambda val, adj: rs(t_op, t_a, t_b, t_k, t_c, off, pool, val, adj, lo, hi))


def loop_forward(run, c, val):
    L = run.layout(c, loop_layout)
    for p, sp in zip(L.params, L.sparams):
        val[sp] = val[p]
    snaps, sx, y, d, store = val[L.snaps], L.sx, L.y, L.d, L.store
    forward = _sweeps(run, L)[0]
    val[sx] = val[L.x0]
    for k in range(L.steps):
        slot = store.get(k)
        if slot is not None:
            snaps[slot * d:(slot + 1) * d] = val[sx]
        bad = forward(val)
        if bad >= 0:
            return bad
        val[sx] = val[y]
    val[L.out] = val[y]
    snaps[-1] = 1.0  # the forward pass's snapshots are in place
    return -1


def loop_tangent(run, c, val, dot):
    L = run.layout(c, loop_layout)
    for p, sp in zip(L.params, L.sparams):
        val[sp], dot[sp] = val[p], dot[p]
    val[L.sx], dot[L.sx] = val[L.x0], dot[L.x0]
    forward = _sweeps(run, L)[0]
    for _ in range(L.steps):
        forward(val)
        if L.nested:
            run.tangent(val, dot, L.lo, L.hi)
        else:
            run.sw.tangent_sweep(*run.cols, val, dot, L.lo, L.hi)
        val[L.sx], dot[L.sx] = val[L.y], dot[L.y]
    dot[L.out] = dot[L.y]


def loop_reverse(run, c, val, adj):
    L = run.layout(c, loop_layout)
    if not adj[L.out].any():
        return
    snaps = val[L.snaps]
    if snaps[-1] != 1.0:  # no forward pass since the last reverse: its snapshots again
        if loop_forward(run, c, val) >= 0:
            raise _changed(run.t, c)
    snaps[-1] = 0.0  # the actions below use the slots for their own snapshots
    forward, reverse = _sweeps(run, L)
    d, sx, y, x0 = L.d, L.sx, L.y, L.x0
    # the parameters' slots come first in the region: their adjoints add up over the steps
    region = slice(L.sx.start, L.region.stop)
    for sp in L.sparams:
        adj[sp] = 0.0
    xbar = adj[L.out].copy()
    for kind, a, b in L.sched.actions:  # the current state x_a lives in the slot sx
        if kind == RESTORE:
            val[sx] = val[x0] if b < 0 else snaps[b * d:(b + 1) * d]
        elif kind == ADVANCE:
            for _ in range(a, b):
                forward(val)
                val[sx] = val[y]
        elif kind == STORE:
            snaps[b * d:(b + 1) * d] = val[sx]
        else:  # BACK: step a again, then its adjoint
            if forward(val) >= 0:
                raise _changed(run.t, c)
            adj[region] = 0.0
            adj[y] = xbar
            reverse(val, adj)
            xbar[:] = adj[sx]
    for p, sp in zip(L.params, L.sparams):
        adj[p] += adj[sp]
    adj[x0] += xbar


def _changed(t, c, what="checkpoint_loop"):
    from ..._base.errors import NotDifferentiableError
    return NotDifferentiableError(
        f"{what}: the control flow of {callpool.label(t, c)} changed from one call or step to "
        f"another (a guard: if, a mask, jittape.primal...), but its records are recorded once "
        f"and repeated; write the choice with np.where, or call it plainly")


def loop_check(t, i, size, sa, sb):
    """A loaded tape's checkpoint_loop record: its parts where the rules expect them."""
    got = callpool.read(t, i, size, "checkpoint", lambda n: 2 * n + 3, tail_len=2)
    if isinstance(got, str):
        return got
    n, ids, sizes, (steps, snapshots) = got
    r = ids[-1]
    if int(t.k[r]) != i:
        return "checkpoint region does not match its marker"
    if steps < 1 or not 0 <= snapshots < steps:
        return "bad number of steps or snapshots"
    d = sizes[0]
    if size != d or sizes[1] != d or sizes[1 + n] != d or sizes[1 + 2 * n] != snapshots * d + 1:
        return "checkpoint state sizes differ"
    if any(sizes[1 + q] != sizes[1 + n + q] for q in range(1, n)):
        return "checkpoint parameter slot size differs"
    inside = [ids[0]] + ids[1 + n:2 + 2 * n]
    if any(not r < q < i for q in inside) or any(q >= r for q in ids[1:1 + n]) or \
            any(q >= ids[1 + n] for q in ids[2 + n:1 + 2 * n]):  # (sp_j before sx)
        return "checkpoint part out of place"
    return None


# --- jittape.checkpoint(g): one call of g, its region shared by the calls that record alike
def call_layout(t, c):
    """``(region range, y, [x_q], [slot_q], region values)`` of checkpoint record ``c``:
    pool parts ``y, x_1..x_n, sx_1..sx_n, r`` (the region's owner is the marker's ``k``)."""
    n, ids = callpool.parts(t, c)
    parts = [span(t, i) for i in ids]
    r = ids[-1]
    owner = int(t.k[r])
    return (r + 1, owner), parts[0], parts[1:1 + n], parts[1 + n:1 + 2 * n], \
        slice(int(t.off[r]), int(t.off[owner]))


def _inputs(run, c, val, dot=None):
    (lo, hi), y, xs, slots, region = L = run.layout(c, call_layout)
    for x, sx in zip(xs, slots):
        val[sx] = val[x]
        if dot is not None:
            dot[sx] = dot[x]
    return L


def call_forward(run, c, val):
    (lo, hi), y, _, _, _ = _inputs(run, c, val)
    bad = run.forward(val, lo, hi)
    val[span(run.t, c)] = val[y]
    return bad


def call_tangent(run, c, val, dot):
    (lo, hi), y, _, _, _ = _inputs(run, c, val, dot)
    run.forward(val, lo, hi)
    run.tangent(val, dot, lo, hi)
    dot[span(run.t, c)] = dot[y]


def call_reverse(run, c, val, adj):
    out = span(run.t, c)
    if not adj[out].any():
        return
    (lo, hi), y, xs, slots, region = _inputs(run, c, val)
    if run.forward(val, lo, hi) >= 0:
        raise _changed(run.t, c, "checkpoint")
    adj[region] = 0.0
    adj[y] = adj[out]
    run.reverse(val, adj, lo, hi)
    for x, sx in zip(xs, slots):
        adj[x] += adj[sx]


def call_hvp(run, c, val, dot, adj, adjdot):
    out = span(run.t, c)
    if not (adj[out].any() or adjdot[out].any()):
        return -1
    (lo, hi), y, xs, slots, region = _inputs(run, c, val, dot)
    run.forward(val, lo, hi)
    run.tangent(val, dot, lo, hi)
    adj[region] = 0.0
    adjdot[region] = 0.0
    adj[y], adjdot[y] = adj[out], adjdot[out]
    bad = run.hvp(val, dot, adj, adjdot, lo, hi)
    for x, sx in zip(xs, slots):
        adj[x] += adj[sx]
        adjdot[x] += adjdot[sx]
    return bad


def call_check(t, i, size, sa, sb):
    """A loaded tape's checkpoint record: parts in place, its region owned by a checkpoint
    record with the same marker."""
    got = callpool.read(t, i, size, "checkpoint", lambda n: 2 * n + 2, min_n=0)
    if isinstance(got, str):
        return got
    n, ids, sizes, _ = got
    r = ids[-1]
    owner = int(t.k[r])
    if not r < owner <= i or int(t.op[owner]) != int(t.op[i]) or int(t.b[owner]) != r:
        return "checkpoint region does not match its marker"
    if sizes[0] != size or any(sizes[1 + q] != sizes[1 + n + q] for q in range(n)):
        return "checkpoint sizes differ"
    if not r < ids[0] < owner or any(not r < q < owner for q in ids[1 + n:1 + 2 * n]) or \
            any(r <= q < owner for q in ids[1:1 + n]):  # (arguments: outside the region)
        return "checkpoint part out of place"
    return None


_NO_SECOND = ("{name} is a jittape.checkpoint_loop step: checkpointed loops have no "
              "second-order rule; for hessian/hvp write the loop plainly (every step is "
              "then recorded), or difference jittape.grad")

CHECKPOINT_OPS = [
    call("checkpoint_loop", "x_n = step^n(x_0; p); the region holds one step, run n times; "
         "reverse: the step's adjoint per step in the order of a binomial checkpointing "
         "schedule, recomputing from snapshots (jittape.checkpoint_loop)",
         loop_forward, loop_tangent, loop_reverse, None, loop_check,
         spec=Spec(shapes=(((3,), (3,)), ((), ())),
                   fn="jittape.custom.examples.checkpoint_loop_example"), label=callpool.label,
         no_second=_NO_SECOND),
    call("checkpoint", "y = g(x); g's records in a region, shared by the calls of g that "
         "record alike, run again by the reverse rule (jittape.checkpoint)", call_forward,
         call_tangent, call_reverse, call_hvp, call_check,
         spec=Spec(shapes=(((3,), (3,)), ((), ())),
                   fn="jittape.custom.examples.checkpoint_example"), label=callpool.label),
]

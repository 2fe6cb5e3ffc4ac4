"""Checkpointed loops: :func:`checkpoint_loop`, the memory of a time integration's tape
traded for recomputation (Griewank & Walther, "Evaluating Derivatives", 2nd ed., SIAM 2008,
ch. 12; the schedule: :mod:`jittape._base.revolve`).

A plain loop ``for k in range(n): x = step(x, p)`` records every step: the tape grows with
``n``, and so does the memory of every replay. ``checkpoint_loop(step, n, x, p)`` records
ONE step, in a region of the tape (the mechanism of custom rules, :mod:`jittape.sweeps.regions`),
and one record that runs it ``n`` times: the tape holds one step's values and ``s``
snapshots of the state, and the reverse sweep recomputes the steps it needs from the
snapshots (op entry and rules: :mod:`jittape.optable.rules.checkpoint`).
"""

import numpy as np

from ..optable import callpool
from ..numpy.active import Active, new_active, tape_of, const
from .custom_rules import check_records
from ..optable.table import codes as K
from .._base.revolve import default_snapshots
from ..tape.arrays import ENTRY


def checkpoint_loop(step, n_steps, x0, *params, snapshots=None):
    """``x_n`` of ``x_{k+1} = step(x_k, *params)``, ``k = 0..n_steps-1``, taped with
    checkpointing: one step on the tape, the states in between recomputed.

    Parameters
    ----------
    step : callable
        ``step(x, *params)`` returns the next state, of ``x``'s shape. Plain NumPy code,
        recorded once (at ``x0``) and replayed for every step, so it must record the same
        operations at every step: control flow on an active value (a guard) is checked at
        each step and raises where it changes. It may not read an active value other than
        its arguments (a closure): pass such values in ``params``.
    n_steps : int
        The number of steps, ``>= 0`` (0 returns ``x0``).
    x0 : float or ndarray
        The initial state (a float or an array of any shape; several states: concatenate).
    *params : float or ndarray
        Further arguments of ``step``, the same at every step (active ones are
        differentiated: ``adj[p] += sum over k of d x_{k+1}/d p`` terms).
    snapshots : int, optional
        The memory budget: how many states besides ``x0`` the tape keeps. With ``s``
        snapshots the reverse sweep recomputes each step at most ``t`` times, ``t`` the
        smallest integer with ``C(s + t, t) >= n_steps`` (binomial checkpointing, Griewank
        1992; the split of Griewank & Walther's revolve, ACM TOMS 26, 2000): e.g. 1 000
        steps, 32 snapshots: ``t = 3``; ``n_steps - 1``: every state, ``t = 1``. Default:
        the fewest with ``t <= 2`` (about ``sqrt(2 n_steps)``: 44 for 1 000 steps).

    Returns
    -------
    float or ndarray
        ``x_n``, of ``x0``'s shape (an active value when anything is differentiated).

    Raises
    ------
    ValueError
        ``n_steps < 0``, ``step`` returning another shape than ``x0``'s.
    NotDifferentiableError
        ``step`` reading an active value that is not one of its arguments; its control flow
        changing from one step to the next; and, at differentiation time, second order
        (``hvp``, ``hessian``) through the loop, which has no second-order rule (write the
        loop plainly for those).

    Notes
    -----
    Works in eager gradients, forward mode (``jvp``: each step's tangent alongside its
    value), replayed (``record``, ``taped``) and saved/loaded tapes. The tape holds one
    step's records and ``snapshots * x0.size + 1`` values more; the reverse sweep costs one
    forward and one reverse pass over the region per step, plus the schedule's
    recomputations (at most ``t - 1`` more forward passes per step).
    """
    n = int(n_steps)
    if n < 0:
        raise ValueError(f"checkpoint_loop: n_steps must be >= 0, got {n_steps}")
    t = tape_of(x0, *params)
    if t is None or n == 0:
        x = x0
        for _ in range(n):
            x = step(x, *params)
        return x
    return _record(t, step, n, x0, params, snapshots)


def _value(v):
    return v._v if isinstance(v, Active) else v


def _copy(v):
    return v.copy() if isinstance(v, np.ndarray) else float(v)


def _slot(t, like):
    return new_active(Active, t, K.CUSTOM_SLOT, -1, -1, 0, 0.0, _copy(like))


def _record(t, step, n, x0, params, snapshots):
    name = getattr(step, "__name__", "step")
    x0 = x0 if isinstance(x0, Active) else const(t, np.asarray(x0, dtype=np.float64))
    shape = np.shape(x0._v)
    active = list({id(p): p for p in params if isinstance(p, Active)}.values())
    r = t.push_scalar(K.CUSTOM_BEGIN, -1, -1, 0, 0.0, 0.0)
    sps = {id(p): _slot(t, p._v) for p in active}  # (before sx: see loop_reverse)
    sx = _slot(t, x0._v)
    y = step(sx, *[sps.get(id(p), p) if isinstance(p, Active) else p for p in params])
    if not isinstance(y, Active):
        y = const(t, np.asarray(y, dtype=np.float64))
    if np.shape(y._v) != shape:
        raise ValueError(f"checkpoint_loop: {name} returned shape {np.shape(y._v)} for a "
                         f"state of shape {shape}; the step must keep the state's shape")
    check_records(t, r, r + 1, t.n, f"{name} (the step of checkpoint_loop)")
    s = default_snapshots(n) if snapshots is None else max(0, min(int(snapshots), n - 1))
    d = int(np.size(x0._v))
    snaps = new_active(Active, t, K.CUSTOM_SLOT, -1, -1, 0, 0.0, np.zeros(s * d + 1))
    c = t.n
    _, a, b, _, cv, v = ENTRY.unpack_from(t.entries, r << 5)
    ENTRY.pack_into(t.entries, r << 5, K.CUSTOM_BEGIN, a, b, c, cv, v)  # k: the owner
    parts = [y, x0, *active, sx, *[sps[id(p)] for p in active], snaps]
    k = t.push_call(callpool.encode(parts, r, len(active) + 1, name, (n, s)))
    x = y._v  # x_1; the other steps on plain values (the region replays them later)
    plain = [_value(p) for p in params]
    for _ in range(n - 1):
        x = np.asarray(step(x, *plain), dtype=np.float64)
    return new_active(Active, t, K.CHECKPOINT_LOOP, x0._i, r, k, 0.0, _copy(x) if np.ndim(x)
                else float(x))


# --- checkpoint(g): one call, recomputed in the reverse sweep --------------------------------
def checkpoint(g):
    """``g`` with its records recomputed in the reverse sweep instead of kept per call.

    ``jittape.checkpoint(g)(*args)`` equals ``g(*args)``. Recorded, the call keeps its
    inputs and output on the tape, and ``g``'s records in a region (the mechanism of custom
    rules, :mod:`jittape.sweeps.regions`) that the calls of ``g`` share whenever they record the
    same operations (same shapes, constants and control flow): the reverse sweep reruns the
    region's forward sweep at each call's inputs, then its reverse sweep (Griewank &
    Walther, "Evaluating Derivatives", 2nd ed., ch. 12: checkpointing a subroutine). So a
    function called many times (a time step in a Python loop) costs the tape one copy of its
    records and the calls' inputs and outputs; :func:`checkpoint_loop` also drops those.

    Parameters
    ----------
    g : callable
        ``g(*args)`` returns one float or array; its positional arguments are floats or
        arrays (active or not). It may not read an active value that is not an argument (a
        closure). While recording, ``g`` runs once or twice per call (a second recording is
        compared with the shared region's): it must be a function of its arguments.

    Returns
    -------
    callable
        The checkpointed function; without active arguments it is ``g`` itself.

    Raises
    ------
    NotDifferentiableError
        ``g`` reading an active value that is not one of its arguments. Second order,
        forward mode, replay, saving and loading work as for any record.
    """
    import functools
    cache = {}

    @functools.wraps(g)
    def checkpointed(*args):
        t = tape_of(*args)
        if t is None:
            return g(*args)
        if cache.get("tape") is not t:  # one recording's regions (the last tape only)
            cache.clear()
            cache["tape"] = t
        return _call(t, g, args, cache)
    return checkpointed


def _region(t, g, args, name):
    """Record ``g``'s region on ``t`` (a marker, slots for the active arguments, g's
    records): ``(marker, active args, their slots, output)``."""
    r = t.push_scalar(K.CUSTOM_BEGIN, -1, -1, 0, 0.0, 0.0)
    active = list({id(a): a for a in args if isinstance(a, Active)}.values())
    slots = {id(a): _slot(t, a._v) for a in active}
    y = g(*[slots[id(a)] if isinstance(a, Active) else a for a in args])
    from ..numpy.object_arrays import to_active
    y = to_active(y)  # an object array of actives, or a preallocated array
    if not isinstance(y, Active):
        y = const(t, np.asarray(y, dtype=np.float64))
    check_records(t, r, r + 1, t.n, f"{name} (checkpointed)")
    return r, active, [slots[id(a)] for a in active], y


def _signature(g, args, name):
    """``(key, value)``: g recorded on a scratch tape, whose bytes (values of constants
    included) equal those of every call that may share its region, and g's value."""
    from ..tape.arrays import Recorder, ENTRY_DTYPE
    s = Recorder()
    _, _, _, y = _region(s, g, [_slot(s, a._v) if isinstance(a, Active) else a
                                for a in args], name)
    e = np.frombuffer(bytes(s.entries), dtype=ENTRY_DTYPE).copy()
    e["v"][e["op"] != K.CONST] = 0.0  # values vary from call to call; constants may not
    consts = sorted((i, b) for i, b in s.arrays.items() if e["op"][i] == K.CONST)
    key = (e.tobytes(), tuple(consts), tuple(sorted(s.shapes.items())), bytes(s.pool),
           tuple(isinstance(a, Active) for a in args))
    return key, y._v


def _call(t, g, args, cache):
    name = getattr(g, "__name__", "g")
    if len(cache) == 1:  # the first call: recorded here first (its errors name g plainly)
        r, active, slots, y0 = _region(t, g, args, name)
        key, value = _signature(g, args, name)
        shared = None
    else:
        key, value = _signature(g, args, name)
        shared = cache.get(key)
        if shared is None:
            r, active, slots, y0 = _region(t, g, args, name)
        else:  # the region of an earlier call that recorded alike
            r, slots, y0 = shared
            active = list({id(a): a for a in args if isinstance(a, Active)}.values())
    c = t.n
    if shared is None:
        _, a, b, _, cv, v = ENTRY.unpack_from(t.entries, r << 5)
        ENTRY.pack_into(t.entries, r << 5, K.CUSTOM_BEGIN, a, b, c, cv, v)  # k: the owner
        cache[key] = (r, slots, y0)
    parts = [y0, *active, *slots]
    k = t.push_call(callpool.encode(parts, r, len(active), name))
    return new_active(Active, t, K.CHECKPOINT, y0._i, r, k, 0.0, _copy(value))



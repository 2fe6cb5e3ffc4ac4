"""Binomial checkpointing schedules for reversing ``x_{k+1} = step(x_k)``, ``k < n``.

:func:`schedule` returns the actions that reverse ``n`` steps with ``s`` snapshot slots
(besides ``x_0``, which the tape keeps): advance the current state, store it in a slot,
restore it from a slot (or from ``x_0``), and *back* (run step ``k`` once more, keeping its
intermediate values, and propagate the adjoint of ``x_{k+1}`` to ``x_k``). It is
Griewank's binomial checkpointing (Griewank 1992, "Achieving logarithmic growth of temporal
and spatial complexity in reverse automatic differentiation"; Griewank & Walther 2000,
"Algorithm 799: revolve", ACM TOMS 26(1), whose split rule this is; "Evaluating
Derivatives", 2nd ed., sec. 12.3): with ``t`` the smallest integer such that
``C(s + t, t) >= n``, no step is advanced more than ``t`` times before its back step, so
the reverse pass costs at most ``t n`` step evaluations besides the ``n`` back steps, and
no schedule with ``s`` slots has a smaller maximum ``t``. ``s >= n - 1`` gives ``t = 1``:
every state stored once, each step run once more.

The schedule starts with a forward pass from ``x_0`` that stores the first snapshots (its
:attr:`Schedule.prefix`); the forward sweep runs that pass itself (it computes ``x_n``
anyway), so that the reverse pass starts at the first back step.
"""

from functools import lru_cache
from math import comb
from typing import NamedTuple

ADVANCE, STORE, RESTORE, BACK = range(4)


class Schedule(NamedTuple):
    """``prefix``: ``(step, slot)`` per snapshot the forward pass stores, steps ascending;
    ``actions``: the rest, from the first back step on, as ``(kind, a, b)`` tuples:
    ``(ADVANCE, k0, k1)`` the current state from ``x_k0`` to ``x_k1``; ``(STORE, k, slot)``;
    ``(RESTORE, k, slot)`` the current state ``x_k`` from a slot (``slot -1``: ``x_0``);
    ``(BACK, k, 0)`` step ``k`` from the current state ``x_k``, then its adjoint."""

    prefix: tuple
    actions: tuple
    repetitions: int


def repetitions(n, s):
    """The smallest ``t`` with ``C(s + t, t) >= n`` (the binomial bound above); without
    snapshots (``s = 0``) step ``k`` is advanced ``n - 1 - k`` times: ``n - 1``."""
    if s <= 0:
        return max(n - 1, 0)
    t = 0
    while comb(s + t, t) < n:
        t += 1
    return t


def default_snapshots(n):
    """The default budget: the fewest snapshots with which no step is advanced more than
    twice (``C(s + 2, 2) >= n``: ``s`` about ``sqrt(2 n)``). Measured (1 000 RK4 steps,
    benchmarks/results/checkpoint.md), fewer snapshots than every state's are also faster:
    the snapshots stay in cache."""
    s = 0
    while comb(s + 2, 2) < n:
        s += 1
    return min(s, max(n - 1, 0))


@lru_cache(maxsize=64)
def schedule(n, s):
    """The :class:`Schedule` reversing ``n >= 1`` steps with ``s >= 0`` snapshot slots."""
    s = max(0, min(int(s), n - 1))
    acts, slots, free = [], {0: -1}, list(range(s - 1, -1, -1))
    todo = [(0, n, s)]  # reverse steps l..r-1, x_l in a slot; an explicit stack (n deep)
    while todo:
        item = todo.pop()
        if item[0] == "free":
            free.append(slots.pop(item[1]))
            continue
        lo, hi, snaps = item
        if hi - lo == 1 or snaps == 0:
            for k in range(hi - 1, lo - 1, -1):  # (snaps == 0: from x_lo each time)
                acts.append((RESTORE, lo, slots[lo]))
                if k > lo:
                    acts.append((ADVANCE, lo, k))
                acts.append((BACK, k, 0))
            continue
        t = repetitions(hi - lo, snaps)
        mid = lo + max(1, min(comb(snaps + t - 1, t - 1), hi - lo - 1))
        slots[mid] = free.pop()
        acts += [(RESTORE, lo, slots[lo]), (ADVANCE, lo, mid), (STORE, mid, slots[mid])]
        todo += [(lo, mid, snaps), ("free", mid), (mid, hi, snaps - 1)]
    first = next(j for j, a in enumerate(acts) if a[0] == BACK)
    prefix = tuple((a[1], a[2]) for a in acts[:first] if a[0] == STORE)
    # the prefix is one forward pass from x_0: its restores are of the state just stored
    return Schedule(prefix, tuple(acts[_last_restore(acts, first):]), repetitions(n, s))


def _last_restore(acts, first):
    """Where the actions after the forward pass begin: the restore before the first back
    step (of the last state that pass stored, or of x_0)."""
    j = first
    while j > 0 and acts[j - 1][0] != STORE:
        j -= 1
    return j


def count(sched):
    """``(steps advanced, back steps)`` of a schedule's actions (the prefix excluded)."""
    adv = sum(a[2] - a[1] for a in sched.actions if a[0] == ADVANCE)
    return adv, sum(1 for a in sched.actions if a[0] == BACK)

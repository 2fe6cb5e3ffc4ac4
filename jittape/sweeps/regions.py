"""Whole sweeps over a tape: the compiled sweeps over ranges of records, and the rules of
the records that own regions (custom rules, :mod:`jittape.custom.custom_rules`) in between.

The compiled sweeps (:mod:`jittape.sweeps.codegen`) run a range of records ``lo..hi-1`` and know
nothing of regions: a call record (kind ``call``, :mod:`jittape.optable.entry`) and its region
have no branch in them. So this module splits each sweep at the call records: the forward
and tangent sweeps run up to a region's marker, the call's rule (a Python function of the
op table's entry, run here) replaces the region and the call, and the sweep goes on after
the call; the reverse and second-order sweeps run down to a call, its rule runs (the region
included, as the rule needs: it calls the sweeps of this module over the region, which
handle nested calls in turn), and the sweep goes on below the region's marker.

The cost is a Python round trip per call record and sweep (measured: a few microseconds,
README 'Custom derivative rules'); the gain is that a tape with custom rules runs the very
sweeps of the same ops without them (one compiled module, one cache entry) and no compiled
code depends on regions. A tape without call records runs its sweep in one call.
"""

from bisect import bisect_left

import math

import numpy as np

from ..optable.table import OPS
from ..optable.entry import CALL
from .opsets import for_tape

_CALLS = np.array([op.code for op in OPS if op.kind == CALL], dtype=np.int32)
_IS_CALL = {}  # number of ops -> by opcode, whether it is a call (ops may register later)


def _is_call():
    mask = _IS_CALL.get(len(OPS))
    if mask is None:
        mask = _IS_CALL[len(OPS)] = np.array([op.kind == CALL for op in OPS])
    return mask


class Calls(tuple):
    """The call records of a tape as ``(marker, call)`` pairs sorted by marker, with what
    the walks look up (``marks``; ``ends`` and ``starts``: calls and markers sorted by call)
    and ``layouts``, each call rule's own precomputed view of its record (:meth:`Run.layout`)."""

    def __new__(cls, pairs):
        self = super().__new__(cls, pairs)
        self.marks = [r for r, _ in pairs]
        by_call = sorted(pairs, key=lambda rc: rc[1])
        self.ends, self.starts = [c for _, c in by_call], [r for r, _ in by_call]
        self.layouts = {}
        return self


def calls(t):
    """The :class:`Calls` of tape arrays ``t`` (cached on ``t``; empty for most tapes:
    ``()`` from a recorder that pushed no call record)."""
    c = t.calls
    if c is None:
        ids = np.flatnonzero(_is_call()[t.op]).tolist() if t.n_records else []
        c = t.calls = Calls(sorted((int(t.b[i]), i) for i in ids)) if ids else _NO_CALLS
    elif c == ():
        c = t.calls = _NO_CALLS
    return c


_NO_CALLS = Calls([])


class Run:
    """The sweeps of one tape over ranges of records, call records' rules in between. The
    call rules (:mod:`jittape.optable.rules.custom`) get this object and run its sweeps over their
    regions."""

    __slots__ = ("t", "sw", "cols", "calls", "marks", "ends", "starts")

    def __init__(self, t, sw=None):
        self.t, self.sw, self.cols = t, sw or for_tape(t), t.columns
        self.calls = c = calls(t)
        self.marks, self.ends, self.starts = c.marks, c.ends, c.starts

    def layout(self, c, build):
        """``build(t, c)``, computed once per tape and call record (a rule's slices)."""
        out = self.calls.layouts.get(c)
        if out is None:
            out = self.calls.layouts[c] = build(self.t, c)
        return out

    def _up(self, lo, hi):
        """The outermost calls ``c`` in ``lo..hi-1``, in order, with where the sweep before
        each stops (its marker, or ``lo`` for a range that starts at a call)."""
        p = lo
        if lo < hi and self.t.op[lo] in _CALLS and self.t.b[lo] < lo:  # a call alone (explain)
            yield lo, lo
            p = lo + 1
        for j in range(bisect_left(self.marks, lo), len(self.marks)):
            r, c = self.calls[j]
            if r >= hi:
                break
            if p <= c < hi:  # (a call below p is inside a region already handed over)
                yield (r if r >= p else c), c  # (r < p: a region shared with an earlier call)
                p = c + 1

    def _down(self, lo, hi):
        """The outermost calls in ``lo..hi-1``, last first, each with the record below
        which the sweep goes on: its marker, or the call itself for a call that shares the
        region of an earlier one (:func:`jittape.checkpoint`)."""
        p, k = hi, self.t.k
        for j in range(bisect_left(self.ends, hi) - 1, -1, -1):
            r, c = self.starts[j], self.ends[j]
            if c < lo:
                break
            if c < p:
                p = r if k[r] == c else c
                yield p, c

    def forward(self, val, lo=0, hi=None):
        """Values of records ``lo..hi-1``; -1, or the id of a failed guard."""
        hi = self.t.n_records if hi is None else hi
        p = lo
        for stop, c in self._up(lo, hi):
            if stop > p:
                bad = self.sw.forward_sweep(*self.cols, val, p, stop)
                if bad >= 0:
                    return bad
            bad = OPS[self.t.op[c]].forward(self, c, val)
            if bad is not None and bad >= 0:  # (a rule running a region's guards)
                return bad
            p = c + 1
        return self.sw.forward_sweep(*self.cols, val, p, hi) if hi > p else -1

    def tangent(self, val, dot, lo=0, hi=None):
        """Tangents of records ``lo..hi-1`` (values computed)."""
        hi = self.t.n_records if hi is None else hi
        p = lo
        for stop, c in self._up(lo, hi):
            if stop > p:
                self.sw.tangent_sweep(*self.cols, val, dot, p, stop)
            OPS[self.t.op[c]].tangent(self, c, val, dot)
            p = c + 1
        if hi > p:
            self.sw.tangent_sweep(*self.cols, val, dot, p, hi)

    def reverse(self, val, adj, lo, hi):
        """Adjoints for records ``hi-1..lo`` (seeded by the caller)."""
        p = hi
        for below, c in self._down(lo, hi):
            if p > c + 1:
                self.sw.reverse_sweep(*self.cols, val, adj, c + 1, p)
            OPS[self.t.op[c]].reverse(self, c, val, adj)
            p = max(below, lo)
        if p > lo:
            self.sw.reverse_sweep(*self.cols, val, adj, lo, p)

    def hvp(self, val, dot, adj, adjdot, lo, hi):
        """Adjoints and their tangents for records ``hi-1..lo``; -1, or the id of a record
        without a second-order rule."""
        p = hi
        for below, c in self._down(lo, hi):
            if p > c + 1:
                bad = self.sw.hvp_sweep(*self.cols, val, dot, adj, adjdot, c + 1, p)
                if bad >= 0:
                    return bad
            rule = OPS[self.t.op[c]].second
            bad = c if rule is None else rule(self, c, val, dot, adj, adjdot)
            if bad >= 0:
                return bad
            p = max(below, lo)
        return self.sw.hvp_sweep(*self.cols, val, dot, adj, adjdot, lo, p) if p > lo else -1


# --- whole sweeps: one compiled call for a tape without call records ---------------------
def forward(t, val, lo=0, hi=None):
    """Recompute ``val`` for records ``lo..hi-1`` (default: all); -1 or a failed guard."""
    if calls(t):
        return Run(t).forward(val, lo, hi)
    return (t.sweeps or for_tape(t)).forward_sweep(
        *t.columns, val, lo, t.n_records if hi is None else hi)


def tangent(t, val, dot, lo=0, hi=None):
    """Propagate tangents in ``dot`` over records ``lo..hi-1`` (default: all)."""
    if calls(t):
        return Run(t).tangent(val, dot, lo, hi)
    (t.sweeps or for_tape(t)).tangent_sweep(*t.columns, val, dot, lo,
                                            t.n_records if hi is None else hi)


def reverse(t, val, adj, last, lo=0):
    """Accumulate adjoints (seeded by the caller at record ``last``) over records ``last``
    down to ``lo``."""
    if calls(t):
        return Run(t).reverse(val, adj, lo, last + 1)
    sweep = (t.sweeps or for_tape(t)).reverse_sweep
    sweep(*t.columns, val, adj, lo, last + 1)
    if lo == 0:
        without_dead(t, sweep, val, adj, last)


def without_dead(t, sweep, val, adj, last):
    """If an input's adjoint came out nan, sweep again over the records that ``last``
    reads (directly or not) only. A record nothing reads has adjoint 0, and its partial may
    be inf (SciPy's ppf computes its support's bound ``inf * scale + loc`` for a branch no
    element takes): 0 * inf made the input's adjoint nan where the compiled kernel, which
    drops dead records, gives the derivative. Live records keep IEEE arithmetic (a nan
    they make stays). Tapes with call records are left as they are."""
    off, ins = t.off, t.inputs
    if calls(t) or not ins:
        return
    if ins[-1] - ins[0] == len(ins) - 1:  # the inputs' adjoints are one run: one reduction
        if not math.isnan(np.add.reduce(adj[off[ins[0]]:off[ins[-1] + 1]])):
            return
    elif not any(np.isnan(adj[off[i]:off[i + 1]]).any() for i in ins):
        return
    from ..optable.registry import operand_lists
    reads = operand_lists(t)
    live = np.zeros(last + 1, dtype=bool)
    stack = [last]
    while stack:
        i = stack.pop()
        if not live[i]:
            live[i] = True
            stack.extend(j for j in reads[i] if 0 <= j <= last and not live[j])
    if live.all():
        return
    seed = adj[off[last]:off[last + 1]].copy()  # (no record above last wrote it)
    adj[:] = 0.0
    adj[off[last]:off[last + 1]] = seed
    edges = np.flatnonzero(np.diff(np.r_[0, live.view(np.int8), 0]))  # runs of live records
    for a, b in zip(edges[::2][::-1], edges[1::2][::-1]):
        sweep(*t.columns, val, adj, int(a), int(b))


def adjoints(t, seed_record, seed=1.0):
    """A new adjoint buffer of tape arrays ``t``: the reverse sweep over its values, seeded
    with ``seed`` at record ``seed_record``."""
    adj = np.zeros(t.val.shape[0])
    adj[t.off[seed_record]:t.off[seed_record + 1]] = seed
    reverse(t, t.val, adj, seed_record)
    return adj


def hvp(t, val, dot, adj, adjdot, last, lo=0):
    """Second-order sweep over records ``last`` down to ``lo``; -1 or a record without a
    second-order rule."""
    if calls(t):
        return Run(t).hvp(val, dot, adj, adjdot, lo, last + 1)
    return (t.sweeps or for_tape(t)).hvp_sweep(*t.columns, val, dot, adj, adjdot, lo,
                                               last + 1)

"""The reverse sweep in NumPy, whole arrays at a time: tier 0 of a large array tape.

A tape of few records over large arrays (GMM's 51 records, 588,003 values) is too large for
the interpreted tier (:mod:`jittape.sweeps.tiers`: CPython runs the generated sweep at about
a microsecond per value), and its cold reverse sweep took 3.8 s to compile before the first
gradient returned. Each record's adjoint rule also exists as NumPy code over whole arrays:
the op table's recorded rules (:func:`jittape.optable.recorded.vjp_of`: the partials of an
elementwise op evaluated by NumPy, a structured op's ``vjp``), which nesting runs on active
values. :func:`reverse_sweep` runs them on the plain values instead, record by record from
the top, adding each operand's adjoint into the buffer as the compiled sweep does: one NumPy
call per record and rule term, independent of the arrays' sizes (about 15 us a record).

The results equal the compiled sweep's within reassociation of sums (the generic checker
compares every op's rule with it). A rule that raises (a scatter too wide to pad) leaves the
buffer as it was, and the caller runs the compiled sweep.
"""

import types

import numpy as np

from ..optable.recorded import Rec, Unsupported, vjp_of  # noqa: F401 (rules raise it)
from ..optable.registry import OPS, operand_lists
from ..optable.rules.array_vjps import Scatter
from ..optable.table import codes as _codes

#: Tapes of at most this many records run the NumPy tier while their sweep compiles (about
#: 15 us of Python a record: 0.3 s, against 1-4 s of compile).
MAX_RECORDS = 20_000


def usable(codes, args):
    """Whether the NumPy reverse sweep can run the sweep call ``args`` of a tape whose op
    set is ``codes``: few records, and a NumPy rule for each op (no custom rule or
    checkpoint: their regions are not sweeps of records)."""
    if args[0].shape[0] > MAX_RECORDS:
        return False
    return all(OPS[c].kind not in ("region", "call") and vjp_of(c) is not None
               for c in codes)


def reverse_sweep(t_op, t_a, t_b, t_k, t_c, off, pool, val, adj, lo, hi):
    """Accumulate adjoints into ``adj`` (seeded by the caller) for records ``hi-1..lo``:
    the compiled ``reverse_sweep``'s arguments and effect. Raises what a rule raises, with
    ``adj`` then partly updated (the caller restores it)."""
    reads = operand_lists(types.SimpleNamespace(op=t_op, a=t_a, b=t_b, k=t_k, pool=pool))
    op, k, c, o = t_op.tolist(), t_k.tolist(), t_c.tolist(), off.tolist()
    const = _codes.CONST
    with np.errstate(all="ignore"):  # (both branches of a where are computed)
        for i in range(hi - 1, lo - 1, -1):
            if OPS[op[i]].kind == "leaf":
                continue
            rule = vjp_of(op[i])
            ids = reads[i]
            args = [val[o[j]:o[j + 1]] for j in ids]
            r = Rec(args, [a.size for a in args], [op[j] != const for j in ids],
                    val[o[i]:o[i + 1]], o[i + 1] - o[i], k[i], c[i], pool)
            for j, d in zip(ids, rule(r, adj[o[i]:o[i + 1]])):
                if d is not None and op[j] != const:
                    _add(adj, o[j], o[j + 1], d)


def _add(adj, lo, hi, d):
    if not isinstance(d, Scatter):
        adj[lo:hi] += np.ravel(d)
        return
    g, pos = np.broadcast_to(np.ravel(d.g), d.pos.shape), d.pos
    if pos.size and pos[-1] - pos[0] == pos.size - 1 and (pos.size == 1 or np.all(
            np.diff(pos) == 1)):  # a slice (the common case): no scatter
        adj[lo + pos[0]:lo + pos[-1] + 1] += g
    else:  # bincount adds repeated positions in order, 10-50x faster than np.add.at
        adj[lo:hi] += np.bincount(pos, weights=g, minlength=hi - lo)

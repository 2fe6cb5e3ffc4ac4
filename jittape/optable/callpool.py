"""The pool entries of call records (the regions and calls of :mod:`jittape.optable.entry`): one
layout for ``custom_vjp``/``custom_jvp`` (:mod:`jittape.optable.rules.custom`), ``checkpoint`` and
``checkpoint_loop`` (:mod:`jittape.optable.rules.checkpoint`)::

    nparts, n, (record, size) x nparts, len(name), name's code points, tail...

``n`` counts the call's arguments; which part is which and what the tail holds
(``checkpoint_loop``: the number of steps and of snapshots) is each op's own, described in its
rules module. The parts are laid out as an n-ary record's operands, so that
:func:`jittape.optable.table.operands` lists them. Plain Python: encoded at recording, decoded
once per tape by the rules (:meth:`jittape.sweeps.regions.Run.layout`), checked when a tape file
is loaded.
"""

import numpy as np

from .entry import pool_at
from .registry import kind_of

#: Characters of a user function's name kept for messages.
NAME_CHARS = 200


def encode(parts, marker, n, name, tail=()):
    """The pool entries of a call record: ``parts`` its operands' active records (each a
    part, in the op's order), then the record id of its region ``marker`` (the last part, of
    size 1); ``n`` its argument count, ``name`` the user function's name (messages)."""
    out = [len(parts) + 1, n]
    for p in parts:
        out += [p._i, int(np.size(p._v))]
    out += [marker, 1]
    name = name[:NAME_CHARS]
    return out + [len(name)] + [ord(ch) for ch in name] + list(tail)


def parts(t, c):
    """``(n, [record id per part])`` of call record ``c`` of tape arrays ``t``."""
    k = int(t.k[c])
    nparts = int(t.pool[k])
    return int(t.pool[k + 1]), [int(p) for p in t.pool[k + 2:k + 2 + 2 * nparts:2]]


def span(t, i):
    """The value slots of record ``i``, as a slice."""
    return slice(int(t.off[i]), int(t.off[i + 1]))


def label(t, c):
    """The name of the user function recorded at call record ``c``."""
    end = _name_at(t, int(t.k[c]))
    return "".join(chr(int(v)) for v in t.pool[end + 1:end + 1 + int(t.pool[end])])


def tail(t, c, count):
    """The ``count`` tail entries of call record ``c``, as ints."""
    end = _name_at(t, int(t.k[c]))
    at = end + 1 + int(t.pool[end])
    return [int(v) for v in t.pool[at:at + count]]


def _name_at(t, k):
    return k + 2 + 2 * int(t.pool[k])


def read(t, i, size, what, nparts_of, min_n=1, tail_len=0):
    """Decode call record ``i`` of a loaded tape and check what every call op needs: the
    head (``nparts_of(n)`` parts, ``n >= min_n``), the entries within the pool, the name's
    code points, each part matching its record (an earlier record of that size) and the last
    part being the record's region marker. Returns ``(n, ids, sizes, tail)``, or the reason
    (a string naming ``what``) the record is refused; ``size`` is the record's own."""
    k = int(t.k[i])
    head = pool_at(t, k, 2)
    if head is None or head[1] < min_n or head[0] != nparts_of(head[1]):
        return f"bad {what} layout"
    flat = pool_at(t, k + 2, 2 * head[0])
    name = pool_at(t, k + 2 + 2 * head[0], 1)
    rest = None if name is None or name[0] < 0 else \
        pool_at(t, k + 3 + 2 * head[0], name[0] + tail_len)
    if flat is None or rest is None:
        return "pool offset out of range"
    if any(not 0 <= ch < 0x110000 for ch in rest[:name[0]]):
        return "bad name"
    ids, sizes = flat[::2], flat[1::2]
    if any(not 0 <= rid < i or t.off[rid + 1] - t.off[rid] != s for rid, s in zip(ids, sizes)):
        return f"{what} operand does not match its record"
    r = ids[-1]
    if r != t.b[i] or kind_of(t, r) != "region":
        return f"{what} region does not match its marker"
    return head[1], ids, sizes, rest[name[0]:]

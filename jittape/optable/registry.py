"""The op table's registry: the numbered entries, and lookups over them.

:func:`register` appends an entry (its opcode is its position); :mod:`jittape.optable.table`
registers every entry of jittape in opcode order when it is imported, and a test's toy op
goes in the same way. The rest reads the table: the records an op reads, whether it has a
compiled branch, the table as text. Modules below the table (:mod:`jittape.optable.callpool`,
whose layout the rules modules use) look kinds up here without importing the rules.
"""

import dataclasses

from .entry import CALL, COMPARE, LEAF, REGION, UNARY, BINARY, TERNARY, Codes

OPS = []
BY_NAME = {}


def register(op):
    """Append ``op`` to the table (its opcode is its position) and return the numbered entry.

    This is how every op gets in, including a test's toy op: the sweeps generated after the
    call know it.
    """
    if op.name in BY_NAME:
        raise ValueError(f"op {op.name!r} is in the table already")
    op = dataclasses.replace(op, code=len(OPS))
    OPS.append(op)
    BY_NAME[op.name] = op
    setattr(codes, op.name.upper(), op.code)
    if op.kind in (UNARY, BINARY, COMPARE, TERNARY) and not op.uses_c:
        for f in op.numpy:
            if isinstance(f, str):
                SCIPY_UFUNC_OPCODES.setdefault(f.rsplit(".", 1)[1], op.code)
            else:
                UFUNC_OPCODES.setdefault(f, op.code)
    return op


# ufunc -> opcode for the elementwise ops whose operands are all records; SciPy's ufuncs
# are listed by name and resolved when first met, so importing jittape does not import SciPy
UFUNC_OPCODES = {}
SCIPY_UFUNC_OPCODES = {}
codes = Codes([])  # codes.SIN etc., for the NumPy dispatch that records ops


#: Tapes of at least this many records keep :func:`operand_lists` (``t.opd``) once asked
#: for one record's operands: the compiler's passes ask for every record's, several times.
CACHE_OPERANDS = 256


def operands(t, i):
    """The record ids that record ``i`` of the tape arrays ``t`` reads, in operand order:
    ``a`` (and ``b``), a select's or ternary op's third operand (its id in ``k``), or an
    n-ary record's parts (``(record, width)`` pairs in the pool after ``nparts, outer``).
    The list is shared (a long tape's are computed once): do not modify it."""
    lists = getattr(t, "opd", None)
    if lists is None:
        if t.op.shape[0] < CACHE_OPERANDS or not hasattr(t, "opd"):
            return _operands(t, i)
        lists = t.opd = operand_lists(t)
    return lists[i]


def _operands(t, i):
    op = OPS[int(t.op[i])]
    if op.kind == LEAF or op.arity == 0:
        return []
    if op.arity < 0:
        p = int(t.k[i])
        return [int(t.pool[p + 2 + 2 * q]) for q in range(int(t.pool[p]))]
    ids = [int(t.a[i])]
    if t.b[i] >= 0:
        ids.append(int(t.b[i]))
    if op.arity == 3:
        ids.append(int(t.k[i]))
    return ids


_ARITY = {}  # number of ops -> operand count by opcode (-1: n-ary, in the pool)


def _arity_table():
    """Operand count by opcode (0 for leaves, -1 n-ary), made once the table is complete
    (ops register at import)."""
    import numpy as np
    table = _ARITY.get(len(OPS))
    if table is None:
        table = _ARITY[len(OPS)] = np.array([0 if op.kind == LEAF else op.arity for op in OPS])
    return table


def operand_lists(t):
    """:func:`operands` of every record of tape arrays ``t``, as a list of lists (one pass
    over the columns, not a lookup of the op per record)."""
    arity = _arity_table()[t.op].tolist()
    a, b, k = t.a.tolist(), t.b.tolist(), t.k.tolist()
    out = []
    for i, n in enumerate(arity):
        if n <= 0:
            out.append(_operands(t, i) if n < 0 else [])
            continue
        ids = [a[i]] if b[i] < 0 else [a[i], b[i]]
        out.append(ids + [k[i]] if n == 3 else ids)
    return out


def read_before(t, lo, hi, before):
    """The records below ``before`` that records ``lo..hi-1`` of tape arrays ``t`` read
    (:func:`operands` of each, at once), sorted."""
    import numpy as np
    arity = _arity_table()[t.op[lo:hi]]
    ids = [t.a[lo:hi][arity > 0], t.b[lo:hi][arity > 0], t.k[lo:hi][arity == 3]]
    ids += [_operands(t, i) for i in (lo + np.flatnonzero(arity < 0)).tolist()]
    ids = np.concatenate([np.asarray(q, dtype=np.int64) for q in ids])
    return np.unique(ids[(ids >= 0) & (ids < before)]).tolist()


def swept(op):
    """Whether ``op`` has a branch in some compiled sweep. Leaves, region markers, calls
    (whose rules are Python, run between the sweeps: :mod:`jittape.sweeps.regions`) and structured
    ops without kernels (a custom rule's slot) have none, and are left out of the op sets
    that key the sweeps' modules: a tape with a custom rule shares its sweeps with the same
    ops without it."""
    if op.kind in (LEAF, REGION, CALL):
        return False
    return op.elementwise or any(k is not None for k in (op.forward, op.tangent, op.reverse))


def call_arguments(t, i):
    """The arguments ``x_q`` of call record ``i`` (kind ``call``: its pool lists ``y0`` and
    then them, :mod:`jittape.optable.entry`): the records its rule gives adjoints to."""
    k = int(t.k[i])
    return [int(t.pool[k + 4 + 2 * q]) for q in range(int(t.pool[k + 1]))]


def in_regions(t):
    """Boolean per record of tape arrays ``t``: inside a region (its marker included), the
    records that the ordinary sweeps jump over (custom rules,
    :mod:`jittape.custom.custom_rules`)."""
    import numpy as np
    inside = np.zeros(t.n_records, bool)
    for code in {op.code for op in OPS if op.kind == REGION}:
        for r in np.flatnonzero(t.op == code).tolist():
            inside[r:int(t.k[r])] = True
    return inside


def is_leaf(code):
    return OPS[code].kind == LEAF


def _np_name(f):
    if isinstance(f, str):
        return f
    mod = getattr(f, "__module__", "") or ""
    prefix = "np.linalg." if mod.endswith("linalg") else "np."
    return prefix + getattr(f, "__name__", str(f))


def format_table(nests=None):
    """The op table as text (what ``python -m jittape ops`` prints); ``nests(op)``, if
    given, says how deep derivatives nest through each op (a column)."""
    head = f"{'nests':<7}" if nests else ""
    lines = [f"{'code':>4}  {'name':<12}{'arity':>6}  {head}{'numpy':<34}derivative rule"]
    for s in OPS:
        np_names = ", ".join(_np_name(f) for f in s.numpy)
        arity = "n" if s.arity < 0 else str(s.arity)
        col = f"{nests(s) or '-':<7}" if nests else ""
        lines.append(f"{s.code:>4}  {s.name:<12}{arity:>6}  {col}{np_names:<34}{s.rule}")
    return "\n".join(lines)


def kind_of(t, r):
    """The op kind of record ``r`` of tape arrays ``t`` (``"?"`` for an opcode outside the
    table)."""
    code = int(t.op[r])
    return OPS[code].kind if 0 <= code < len(OPS) else "?"

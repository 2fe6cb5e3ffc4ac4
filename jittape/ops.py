"""The op table: every op once, in opcode order. The single source of truth.

Each entry (:class:`jittape.optable.Op`) gives an op's name, kind, NumPy mapping, value rule,
derivative rules and test spec; the entries live in :mod:`jittape.rules_elementwise`,
:mod:`jittape.rules_arrays`, :mod:`jittape.rules_linalg`, :mod:`jittape.rules_linalg2`,
:mod:`jittape.rules_decomp2`, :mod:`jittape.rules_matfuncs`, :mod:`jittape.rules_signal` and
:mod:`jittape.rules_special` (the kernels of the ``2`` modules' entries partly in
:mod:`jittape.rules_linalg` and :mod:`jittape.rules_decomp`). The forward, reverse and
tangent sweeps, the tape compiler, the ufunc dispatch, ``python -m jittape ops``, the docs
page and the generic rule tests are generated from this list. Adding an op is adding an entry (append: the position is the
opcode, which tape files store).
"""

import dataclasses

from . import rules_arrays as A
from . import rules_decomp2 as D2
from . import rules_elementwise as E
from . import rules_linalg as L
from . import rules_linalg2 as L2
from . import rules_matfuncs as MF
from . import rules_signal as SIG
from . import rules_special as SP
from .optable import COMPARE, LEAF, UNARY, BINARY, TERNARY, Codes, leaf

_ENTRIES = (
    [leaf("input", "leaf: the adjoint accumulated here is the gradient"),
     leaf("const", "leaf: constants get no derivative")]
    + E.UNARY_OPS + E.CONST_OPS + E.BINARY_OPS + E.COMPARE_OPS + [E.WHERE]
    + A.INDEXING_OPS + A.REDUCTION_OPS + [L.MATMUL] + A.CONTROL_OPS
    + E.MORE_UNARY_OPS + E.MORE_BINARY_OPS + A.SCAN_OPS + L2.LINALG_OPS + E.LAST_BINARY_OPS
    + SIG.NUMERIC_OPS
    + SP.SPECIAL_OPS
    + D2.DECOMP_OPS
    + MF.MATFUNC_OPS
    + A.VIEW_OPS
)

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
for _op in _ENTRIES:
    register(_op)
del _op


def operands(t, i):
    """The record ids that record ``i`` of the tape arrays ``t`` reads, in operand order:
    ``a`` (and ``b``), a select's or ternary op's third operand (its id in ``k``), or an
    n-ary record's parts (``(record, width)`` pairs in the pool after ``nparts, outer``)."""
    op = OPS[int(t.op[i])]
    if op.kind == LEAF:
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


def is_leaf(code):
    return OPS[code].kind == LEAF


def _np_name(f):
    if isinstance(f, str):
        return f
    mod = getattr(f, "__module__", "") or ""
    prefix = "np.linalg." if mod.endswith("linalg") else "np."
    return prefix + getattr(f, "__name__", str(f))


def format_table():
    """The op table as text (what ``python -m jittape ops`` prints)."""
    lines = [f"{'code':>4}  {'name':<12}{'arity':>6}  {'numpy':<34}derivative rule"]
    for s in OPS:
        np_names = ", ".join(_np_name(f) for f in s.numpy)
        arity = "n" if s.arity < 0 else str(s.arity)
        lines.append(f"{s.code:>4}  {s.name:<12}{arity:>6}  {np_names:<34}{s.rule}")
    return "\n".join(lines)

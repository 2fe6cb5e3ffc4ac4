"""The op table: every op once, in opcode order. The single source of truth.

Each entry (:class:`jittape.optable.entry.Op`) gives an op's name, kind, NumPy mapping, value
rule, derivative rules and test spec; the entries live in the modules of
:mod:`jittape.optable.rules`, one per op family, and :mod:`jittape.optable.registry` numbers
them as they are registered here. The forward, reverse and tangent sweeps, the tape
compiler, the ufunc dispatch, ``python -m jittape ops``, the docs page and the generic rule
tests are generated from this list. Adding an op is adding an entry (append: the position is the
opcode, which tape files store).
"""

from .rules import arrays as A
from .rules import checkpoint as CP
from .rules import custom as CU
from .rules import decomp as D2
from .rules import eig as EG
from .rules import elementwise as E
from .rules import linalg as L2
from .rules import matfuncs as MF
from .rules import matmul as MM
from .rules import nested as NE
from .rules import signal as SIG
from .rules import special as SP
from .rules import special_complex as SPC
from .rules import special_more as SPM
from .entry import leaf
from .registry import (BY_NAME, OPS, SCIPY_UFUNC_OPCODES, UFUNC_OPCODES,  # noqa: F401
                       call_arguments, codes, format_table, in_regions, is_leaf, kind_of,
                       operands, register, swept)

_ENTRIES = (
    [leaf("input", "leaf: the adjoint accumulated here is the gradient"),
     leaf("const", "leaf: constants get no derivative")]
    + E.UNARY_OPS + E.CONST_OPS + E.BINARY_OPS + E.COMPARE_OPS + [E.WHERE]
    + A.INDEXING_OPS + A.REDUCTION_OPS + [MM.MATMUL] + A.CONTROL_OPS
    + E.MORE_UNARY_OPS + E.MORE_BINARY_OPS + A.SCAN_OPS + L2.LINALG_OPS + E.LAST_BINARY_OPS
    + SIG.NUMERIC_OPS
    + SP.SPECIAL_OPS
    + D2.DECOMP_OPS
    + MF.MATFUNC_OPS
    + A.VIEW_OPS
    + CU.CUSTOM_OPS
    + CP.CHECKPOINT_OPS
    + NE.NESTED_OPS
    + EG.EIG_OPS
    + SPM.MORE_SPECIAL_OPS
    + SPC.COMPLEX_SPECIAL_OPS
    + SPM.PRIVATE_SPECIAL_OPS
)

for _op in _ENTRIES:
    register(_op)
del _op

#: Opcodes that only custom rules record (:mod:`jittape.custom.custom_rules`): their regions, calls,
#: arguments and slots.
CUSTOM_CODES = frozenset(BY_NAME[op.name].code for op in CU.CUSTOM_OPS)

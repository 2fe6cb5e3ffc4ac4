"""BLAS-shaped reverse code of the tape compiler (:mod:`jittape.compiler.kernel`): the adjoint
of a row-broadcast operand of a matrix product, without forming the full adjoint.

In ``Z = (C - S) @ W`` with ``C`` constant and ``S`` a view of ``mu`` broadcast along the
rows of each matrix block (``X - mu`` of a Gaussian's quadratic form, GMM's
``x_i - mu_k``), the reverse sweep would form ``Abar = Zbar W^T`` (a product per row) and
then sum it over the rows into ``mubar``. Summing first is one product per block:
``mubar = -(1^T Zbar) W^T`` (the bias gradient of a dense layer, moved before the product).
What a product is comes from its op table entry (``row_reverse``: the op's own kernel for
the row-summed adjoint); what an affine elementwise link is, from the entry's partials (a
numeric literal). The result equals the unfused sweep within reassociation of the sums.
"""

import dataclasses

import numpy as np

from ..optable.rules.patterns import strided_positions
from ..optable.table import OPS, operands
from .fusion import load_at


@dataclasses.dataclass(frozen=True)
class RowBias:
    """Product record ``product`` whose operand ``a`` is record ``biased`` = constants plus
    ``sign`` times ``view``, a view of ``root`` broadcast along the rows of ``blocks``
    (``(batch, rows, cols)``); ``at`` is the view's position expression of element ``j``."""

    product: int
    biased: int
    view: int
    root: int
    sign: float
    blocks: tuple
    at: str


def row_biases(gen):
    """``{product: RowBias}`` for the tape of compiler ``gen`` (its consumers, groups and
    rerolled segments known)."""
    found = {}
    for i in range(gen.t.n_records):
        op = OPS[int(gen.t.op[i])]
        if op.row_reverse is not None and gen.size[i] > 1:
            bias = _match(gen, i, op)
            if bias is not None:
                found[i] = bias
    return found


def _literal(expr):
    try:
        return float(expr)
    except ValueError:
        return None


def _match(gen, i, op):
    t = gen.t
    a = int(t.a[i])
    if a < 0 or int(t.b[i]) == a or gen.consumers[a] != [i]:
        return None
    link = OPS[int(t.op[a])]
    if not link.elementwise or gen.size[a] <= 1:
        return None
    ids = operands(t, a)
    active = [p for p, j in enumerate(ids) if not gen.is_const(j)]
    if len(active) != 1:  # one active operand, the view: the others are constants
        return None
    s = ids[active[0]]
    sign = _literal(link.partials[active[0]])
    if not sign or gen.size[s] != gen.size[a] or gen.consumers[s] != [a]:
        return None
    view = OPS[int(t.op[s])]
    root, k = int(t.a[s]), int(t.k[s])
    if view.fusion == "strided":
        pos = strided_positions(t.pool, k)
    elif view.fusion == "gather":
        pos = np.asarray(t.pool[k:k + int(gen.size[s])])
    else:
        return None
    blocks = op.row_reverse[0](t.pool, int(t.k[i]))
    batch, rows, cols = blocks
    if rows <= 1 or gen.is_const(root) or batch * rows * cols != gen.size[a] or \
            a not in gen.group_of or s not in gen.group_of or i in gen.seg_of:
        return None  # (fused loops: their reverse code skips the two records)
    pos = pos.reshape(blocks)
    if not (pos == pos[:, :1, :]).all():  # the same element of mu along every row
        return None
    return RowBias(i, a, s, root, sign, blocks, load_at(view, t.pool, k))


def reverse_lines(gen, bias, args):
    """The reverse code of ``bias``'s row-summed operand: the op's kernel writes the row
    sums of the operand's adjoint, and a loop adds them, times the sign, to the root's
    adjoint at the view's positions of the first row of each block."""
    op = OPS[int(gen.t.op[bias.product])]
    batch, rows, cols = bias.blocks
    i, out = bias.product, f"rb{bias.product}"
    return [(0, f"{out} = np.empty({batch * cols})"),
            (0, f"{op.row_reverse[1].__name__}(val, adj, {args}, {out})"),
            (0, f"for jb in range({batch * cols}):"),
            (1, f"j = (jb // {cols}) * {rows * cols} + jb % {cols}  # (q, 0, t) of record {i}"),
            (1, f"{gen.A(bias.root, bias.at)} += {_sign(bias.sign)}{out}[jb]")]


def _sign(sign):
    return "" if sign == 1.0 else "-" if sign == -1.0 else f"{sign!r} * "

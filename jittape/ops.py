"""The op table: every opcode once, with its arity, NumPy mapping and derivative rule.

This is the single source of truth for what jittape can differentiate. The Numba kernels
(forward value beside derivative) are in :mod:`jittape.sweeps`; the dispatch from NumPy
ufuncs to opcodes (:data:`UFUNC_OPCODES`) and ``python -m jittape ops`` are built from this
table, and ``tests/test_ops.py`` checks that the table, the kernels and the gradient specs
cover the same opcodes.

Rules are written for ``y = f(x)`` (or ``z = f(x, y)``) with ``xbar`` the adjoint of
``x``; every rule accumulates (``+=``), so a value used twice gets both contributions.
Room for more rules later (a ``tangent`` for forward mode, a second-order adjoint) is a new
field here, not a rewrite.
"""

from dataclasses import dataclass

import numpy as np

from . import sweeps as K


@dataclass(frozen=True)
class OpSpec:
    """One opcode: ``name``, ``code`` (its number on the tape), ``arity`` (record operands),
    ``numpy`` (the NumPy callables that map to it), ``rule`` (the adjoint rule as a formula),
    ``uses_c`` (whether the float immediate ``c`` is an operand)."""

    name: str
    code: int
    arity: int
    numpy: tuple
    rule: str
    uses_c: bool = False


def _op(name, arity, numpy, rule, uses_c=False):
    return OpSpec(name, getattr(K, name.upper()), arity, tuple(numpy), rule, uses_c)


OPS = [
    _op("input", 0, [], "leaf: the adjoint accumulated here is the gradient"),
    _op("const", 0, [], "leaf: constants get no derivative"),
    # unary elementwise
    _op("neg", 1, [np.negative], "xbar += -ybar"),
    _op("abs", 1, [np.absolute], "xbar += ybar * sign(x)   (0 at x = 0)"),
    _op("exp", 1, [np.exp], "xbar += ybar * y"),
    _op("log", 1, [np.log], "xbar += ybar / x"),
    _op("sqrt", 1, [np.sqrt], "xbar += ybar * 0.5 / y"),
    _op("square", 1, [np.square], "xbar += ybar * 2x"),
    _op("sin", 1, [np.sin], "xbar += ybar * cos(x)"),
    _op("cos", 1, [np.cos], "xbar += -ybar * sin(x)"),
    _op("tan", 1, [np.tan], "xbar += ybar * (1 + y^2)"),
    _op("tanh", 1, [np.tanh], "xbar += ybar * (1 - y^2)"),
    _op("sinh", 1, [np.sinh], "xbar += ybar * cosh(x)"),
    _op("cosh", 1, [np.cosh], "xbar += ybar * sinh(x)"),
    _op("arcsin", 1, [np.arcsin], "xbar += ybar / sqrt(1 - x^2)"),
    _op("arccos", 1, [np.arccos], "xbar += -ybar / sqrt(1 - x^2)"),
    _op("arctan", 1, [np.arctan], "xbar += ybar / (1 + x^2)"),
    _op("log1p", 1, [np.log1p], "xbar += ybar / (1 + x)"),
    _op("expm1", 1, [np.expm1], "xbar += ybar * (y + 1)"),
    _op("stopgrad", 1, [], "identity; xbar unchanged (jittape.stop_gradient)"),
    # one operand and a scalar constant c
    _op("addc", 1, [np.add, np.subtract], "y = x + c; xbar += ybar", True),
    _op("mulc", 1, [np.multiply], "y = x * c; xbar += ybar * c", True),
    _op("divc", 1, [np.divide], "y = x / c; xbar += ybar / c", True),
    _op("rsubc", 1, [np.subtract], "y = c - x; xbar += -ybar", True),
    _op("rdivc", 1, [np.divide], "y = c / x; xbar += -ybar * y / x", True),
    _op("powc", 1, [np.power], "y = x^c; xbar += ybar * c * x^(c-1)", True),
    _op("rpowc", 1, [np.power], "y = c^x; xbar += ybar * y * log(c)", True),
    # binary elementwise (an operand of size 1 broadcasts: its adjoint sums)
    _op("add", 2, [np.add], "xbar += zbar; ybar += zbar"),
    _op("sub", 2, [np.subtract], "xbar += zbar; ybar += -zbar"),
    _op("mul", 2, [np.multiply], "xbar += zbar * y; ybar += zbar * x"),
    _op("div", 2, [np.divide], "xbar += zbar / y; ybar += -zbar * z / y"),
    _op("pow", 2, [np.power],
        "xbar += zbar * y * x^(y-1); ybar += zbar * z * log(x)   (0 where z = 0)"),
    _op("arctan2", 2, [np.arctan2],
        "z = atan2(x, y); xbar += zbar * y / (x^2 + y^2); ybar += -zbar * x / (x^2 + y^2)"),
    _op("maximum", 2, [np.maximum], "the larger operand gets zbar (ties: half each)"),
    _op("minimum", 2, [np.minimum], "the smaller operand gets zbar (ties: half each)"),
    # comparisons: values 1.0 / 0.0, piecewise constant so no derivative
    _op("lt", 2, [np.less], "no derivative (piecewise constant)"),
    _op("le", 2, [np.less_equal], "no derivative (piecewise constant)"),
    _op("gt", 2, [np.greater], "no derivative (piecewise constant)"),
    _op("ge", 2, [np.greater_equal], "no derivative (piecewise constant)"),
    _op("eq", 2, [np.equal], "no derivative (piecewise constant)"),
    _op("ne", 2, [np.not_equal], "no derivative (piecewise constant)"),
    # selection, structure
    _op("where", 3, [np.where], "z = x if cond else y; xbar += zbar*cond; ybar += zbar*(1-cond)"),
    _op("slice", 1, [], "z = x[k:k+n] (contiguous indexing); xbar[k:k+n] += zbar"),
    _op("gather", 1, [np.broadcast_to, np.transpose],
        "z = x[idx] (indexing, transpose, broadcasting); xbar[idx] += zbar (scatter-add)"),
    _op("concat", -1, [np.concatenate, np.stack], "each part's xbar += its block of zbar"),
    # reductions over one axis (or all): x viewed as (outer, n, inner)
    _op("sum", 1, [np.sum, np.mean], "xbar[r, t, q] += zbar[r, q]"),
    _op("prod", 1, [np.prod], "xbar += zbar * prod of the other factors (exact with zeros)"),
    _op("max", 1, [np.max, np.amax], "the maximal elements share zbar evenly"),
    _op("min", 1, [np.min, np.amin], "the minimal elements share zbar evenly"),
    # linear algebra
    _op("matmul", 2, [np.matmul, np.dot], "Z = X @ Y; Xbar += Zbar @ Y^T; Ybar += X^T @ Zbar"),
    # control flow
    _op("guard", 1, [],
        "no derivative; the forward sweep checks x still has the recorded value (the outcome "
        "of a comparison that Python control flow used)"),
    _op("argmax", 1, [np.argmax], "no derivative (integer result); guarded when used"),
    _op("argmin", 1, [np.argmin], "no derivative (integer result); guarded when used"),
]

assert [s.code for s in OPS] == list(range(K.NUM_OPCODES)), "op table out of opcode order"
BY_NAME = {s.name: s for s in OPS}

# ufunc -> opcode for the elementwise ops whose operands are all records
UFUNC_OPCODES = {}
for _s in OPS:
    if 1 <= _s.arity <= 2 and not _s.uses_c and _s.code < K.WHERE:
        for _f in _s.numpy:
            UFUNC_OPCODES.setdefault(_f, _s.code)


def format_table():
    """The op table as text (what ``python -m jittape ops`` prints)."""
    lines = [f"{'code':>4}  {'name':<10}{'arity':>6}  {'numpy':<34}derivative rule (adjoint)"]
    for s in OPS:
        np_names = ", ".join(f"np.{getattr(f, '__name__', str(f))}" for f in s.numpy)
        arity = "n" if s.arity < 0 else str(s.arity)
        lines.append(f"{s.code:>4}  {s.name:<10}{arity:>6}  {np_names:<34}{s.rule}")
    return "\n".join(lines)

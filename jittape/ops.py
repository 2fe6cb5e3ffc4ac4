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
    # more unary elementwise
    _op("exp2", 1, [np.exp2], "xbar += ybar * y * ln 2"),
    _op("log2", 1, [np.log2], "xbar += ybar / (x ln 2)"),
    _op("log10", 1, [np.log10], "xbar += ybar / (x ln 10)"),
    _op("cbrt", 1, [np.cbrt], "xbar += ybar / (3 y^2)"),
    _op("arcsinh", 1, [np.arcsinh], "xbar += ybar / sqrt(x^2 + 1)"),
    _op("arccosh", 1, [np.arccosh], "xbar += ybar / sqrt(x^2 - 1)"),
    _op("arctanh", 1, [np.arctanh], "xbar += ybar / (1 - x^2)"),
    _op("expit", 1, ["scipy.special.expit"], "y = 1 / (1 + e^-x); xbar += ybar * y (1 - y)"),
    _op("erf", 1, ["scipy.special.erf"], "xbar += ybar * 2/sqrt(pi) e^(-x^2)"),
    _op("erfc", 1, ["scipy.special.erfc"], "xbar += -ybar * 2/sqrt(pi) e^(-x^2)"),
    _op("gammaln", 1, ["scipy.special.gammaln"], "y = log|Gamma(x)|; xbar += ybar * psi(x)"),
    _op("digamma", 1, ["scipy.special.digamma", "scipy.special.psi"],
        "y = psi(x); xbar += ybar * psi'(x) (trigamma, A & S 6.4)"),
    _op("log_ndtr", 1, ["scipy.special.log_ndtr"],
        "y = log Phi(x); xbar += ybar * exp(-x^2/2 - y) / sqrt(2 pi)"),
    _op("sign", 1, [np.sign], "zero derivative (piecewise constant)"),
    _op("floor", 1, [np.floor], "zero derivative (piecewise constant)"),
    _op("ceil", 1, [np.ceil], "zero derivative (piecewise constant)"),
    _op("rint", 1, [np.rint], "zero derivative (piecewise constant); also np.round"),
    _op("trunc", 1, [np.trunc, np.fix], "zero derivative (piecewise constant)"),
    # more binary elementwise
    _op("logaddexp", 2, [np.logaddexp], "xbar += zbar e^(x - z); ybar += zbar e^(y - z)"),
    _op("logaddexp2", 2, [np.logaddexp2], "xbar += zbar 2^(x - z); ybar += zbar 2^(y - z)"),
    _op("hypot", 2, [np.hypot], "xbar += zbar x / z; ybar += zbar y / z"),
    _op("fmax", 2, [np.fmax], "as maximum; a NaN operand is ignored and gets nothing"),
    _op("fmin", 2, [np.fmin], "as minimum; a NaN operand is ignored and gets nothing"),
    _op("xlogy", 2, ["scipy.special.xlogy"], "z = x log y; xbar += zbar log y; ybar += zbar x/y"),
    # scans and sorting along one axis
    _op("cumsum", 1, [np.cumsum], "xbar[t] += sum_{s >= t} ybar[s] (a reversed cumsum)"),
    _op("cumprod", 1, [np.cumprod],
        "xbar[t] += y[t-1] R[t], R[t] = ybar[t] + x[t+1] R[t+1] (exact with zeros)"),
    _op("sort", 1, [np.sort], "z = x[perm]; xbar[perm] += zbar (the adjoint follows the "
        "permutation, recomputed on replay)"),
    # dense linear algebra
    _op("inv", 1, [np.linalg.inv], "Y = A^-1; Abar += -Y^T Ybar Y^T"),
    _op("solve", 2, [np.linalg.solve], "X = A^-1 B; Bbar += A^-T Xbar; Abar += -Bbar X^T"),
    _op("slogdet", 1, [np.linalg.slogdet, np.linalg.det],
        "(s, l) = (sign, log|det A|); Abar += lbar A^-T; det = s e^l"),
    _op("cholesky", 1, [np.linalg.cholesky],
        "Abar += sym(L^-T Phi(L^T Lbar) L^-1), Phi = lower triangle, half diagonal (Murray "
        "2016)"),
    _op("eigh", 1, [np.linalg.eigh, np.linalg.eigvalsh],
        "Abar += sym(V (diag(wbar) + F o (V^T Vbar)) V^T), F_ij = 1/(w_j - w_i)"),
    _op("fmod", 2, [np.fmod], "xbar += zbar; ybar += -zbar trunc(x / y)"),
    _op("remainder", 2, [np.remainder, np.mod], "xbar += zbar; ybar += -zbar floor(x / y)"),
    _op("copysign", 2, [np.copysign], "xbar += zbar sign(x) sign(y); y gets no derivative"),
    _op("floordiv", 2, [np.floor_divide], "zero derivative (piecewise constant)"),
]

assert [s.code for s in OPS] == list(range(K.NUM_OPCODES)), "op table out of opcode order"
BY_NAME = {s.name: s for s in OPS}

# ufunc -> opcode for the elementwise ops whose operands are all records; SciPy's ufuncs
# are listed by name and resolved when first met, so importing jittape does not import SciPy
UFUNC_OPCODES = {}
SCIPY_UFUNC_OPCODES = {}
for _s in OPS:
    if K.KIND[_s.code] in (K.UNARY, K.BINARY, K.COMPARE) and not _s.uses_c:
        for _f in _s.numpy:
            if isinstance(_f, str):
                SCIPY_UFUNC_OPCODES[_f.rsplit(".", 1)[1]] = _s.code
            else:
                UFUNC_OPCODES.setdefault(_f, _s.code)


def _np_name(f):
    mod = getattr(f, "__module__", "") or ""
    prefix = "np.linalg." if mod.endswith("linalg") else "np."
    return prefix + getattr(f, "__name__", str(f))


def format_table():
    """The op table as text (what ``python -m jittape ops`` prints)."""
    lines = [f"{'code':>4}  {'name':<10}{'arity':>6}  {'numpy':<34}derivative rule (adjoint)"]
    for s in OPS:
        np_names = ", ".join(f if isinstance(f, str) else _np_name(f) for f in s.numpy)
        arity = "n" if s.arity < 0 else str(s.arity)
        lines.append(f"{s.code:>4}  {s.name:<10}{arity:>6}  {np_names:<34}{s.rule}")
    return "\n".join(lines)

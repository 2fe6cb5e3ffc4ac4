"""Reverse rules written in NumPy, for the recorded reverse sweep (nesting to any order).

The compiled reverse sweep adds adjoints into a buffer. A *recorded* reverse sweep
(:mod:`jittape.api.recorded_sweep`) instead computes each record's operand adjoints with
NumPy calls on active values, so the adjoint computation is itself recorded as ordinary
records on the tape around it and can be differentiated again, to any order: the way
autograd and PyTorch (``create_graph=True``) nest reverse mode, and CppAD's
``AD<AD<double>>`` (Griewank & Walther, "Evaluating Derivatives", 2nd ed., sec. 3.3 and
ch. 5: the reverse sweep is itself an evaluation procedure).

:func:`vjp_of` gives an op's rule ``vjp(r, g)``: ``r`` is a :class:`Rec` (the record's
operands and value as flat float64 arrays, active or not, and its immediates), ``g`` the
cotangent of its value (flat, the record's size); it returns one adjoint per operand (in
:func:`jittape.optable.registry.operands` order, each flat of that operand's size), None
where none flows, or for indexing a :class:`Scatter` (``g`` added at positions of the
operand), which the sweep adds up once per operand. The generic checker
(``tests/test_ops.py``) checks every rule through a nested gradient: its value against the
compiled reverse sweep, its derivative against the forward-over-reverse HVP, and the
derivative of that (third order) against central differences.

* Elementwise ops: generated from the op's partial-derivative expressions, ``xbar = g *
  dz/dx`` (summed where the operand has size 1 and broadcasts), by evaluating the
  expression's syntax tree with NumPy: ``math`` functions and the helpers an op's value
  names become that op's NumPy callable, conditional expressions become ``np.where`` of the
  recorded comparisons (so a replay at new inputs takes the other branch, as the compiled
  sweeps do).
* Structured ops: the entry's ``vjp`` field, written beside its kernels.

An op whose rule cannot be written here (a call the expression evaluator does not know; a
structured op without ``vjp``) has none: nesting through it stays at second order
(:mod:`jittape.api.nesting`).
"""

import ast
import importlib
import math

import numpy as np

from .entry import Unsupported  # noqa: F401  (raised by structured rules)
from .rules.array_vjps import Scatter  # noqa: F401  (returned by indexing rules)
from .scalar_math import LN10, LN2
from .symbolic import value_calls
from .registry import OPS


class Rec:
    """One record as a recorded reverse rule sees it.

    Attributes: ``args`` the operands' values (flat float64 arrays, active or not, in
    :func:`jittape.optable.registry.operands` order; ``x``, ``y``, ``q`` name the first
    three), ``sizes`` their sizes, ``need`` whether each one's adjoint is wanted (a rule
    may return None for the others), ``z`` the record's own value (flat), ``n`` its size,
    ``k`` and ``c`` its immediates, ``pool`` the tape's integer pool (int64 array),
    ``primals`` the operands' values as plain arrays (for arguments that are constants),
    ``constant(a)`` the value of ``a`` (active or not) as a plain array, with a guard
    recorded on it (a replay where it differs records again: a sort's permutation).
    """

    __slots__ = ("args", "sizes", "need", "z", "n", "k", "c", "pool", "primals", "constant")

    def __init__(self, args, sizes, need, z, n, k, c, pool, primals=None, constant=None):
        self.args, self.sizes, self.need, self.z = args, sizes, need, z
        self.n, self.k, self.c, self.pool = n, k, c, pool
        self.primals = primals if primals is not None else args
        self.constant = constant or np.asarray

    @property
    def x(self):
        return self.args[0]

    @property
    def y(self):
        return self.args[1]

    @property
    def q(self):
        return self.args[2]


def _resolve(f):
    if isinstance(f, str):  # "scipy.special.name"
        module, name = f.rsplit(".", 1)
        return getattr(importlib.import_module(module), name)
    return f


def _where(cond, a, b):
    if isinstance(cond, (bool, np.bool_)):
        return a if cond else b
    return np.where(cond, a, b)


def _special(name):
    return lambda *a: getattr(importlib.import_module("scipy.special"), name)(*a)


def _horner(t, coefficients):
    """``sum_n coefficients[n] t^n`` by Horner's rule (NumPy calls: records on actives)."""
    out = coefficients[-1]
    for c in coefficients[-2::-1]:
        out = out * t + c
    return out


def _exprel_dx(t):
    """:func:`jittape.optable.scalar_special.exprel_dx` in NumPy calls: the closed form for
    ``|t| >= 1``, 25 terms of the series ``sum n t^(n-1) / (n+1)!`` below (each branch
    evaluated at a safe point where the other is taken, so no nan reaches a derivative)."""
    small = np.abs(t) < 1.0
    far, near = np.where(small, 2.0, t), np.where(small, t, 0.0)
    closed = (far * np.exp(far) - np.expm1(far)) / (far * far)
    series = _horner(near, [n / math.factorial(n + 1) for n in range(1, 26)])
    return np.where(small, series, closed)


def _log1p_ratio_dx(s):
    """:func:`jittape.optable.scalar_special.log1p_ratio_dx` in NumPy calls: the closed
    form for ``|s| >= 1/4``, 40 terms of ``sum (-1)^n n s^(n-1) / (n+1)`` below."""
    small = np.abs(s) < 0.25
    far, near = np.where(small, 1.0, s), np.where(small, s, 0.0)
    closed = (far / (1.0 + far) - np.log1p(far)) / (far * far)
    series = _horner(near, [(-1.0) ** n * n / (n + 1.0) for n in range(1, 41)])
    return np.where(small, series, closed)


#: NumPy forms of the calls in partial expressions that no op's value is (an op's value
#: call, ``math.cos(x)``, maps to that op's NumPy callable).
EXTRA_CALLS = {
    "math.sqrt": np.sqrt, "math.log": np.log, "math.log1p": np.log1p,
    "math.copysign": np.copysign,
    "math.isinf": np.isinf, "math.floor": np.floor, "abs": np.abs, "np.sign": np.sign,
    "np.trunc": np.trunc, "np.floor": np.floor,
    "max_share": lambda x, y: _where(x > y, 1.0, _where(x < y, 0.0, 0.5)),
    "pow_dx": lambda x, c, z: _where(c == 0.0, 0.0, c * x ** (c - 1.0)),
    "sinh_from_cosh": lambda x, z: np.sinh(x),
    "cs_psi": _special("digamma"),
    "trigamma": lambda x: _special("polygamma")(1.0, x),
    "cs_gammaln": _special("gammaln"),
    "exprel_dx": _exprel_dx,
    "log1p_ratio_dx": _log1p_ratio_dx,
    # the parts of scipy.special.wofz(x + iy): on active parts, its complex values' pair
    "wofz_re": lambda x, y: np.real(_special("wofz")(x + 1j * y)),
    "wofz_im": lambda x, y: np.imag(_special("wofz")(x + 1j * y)),
}
NAMES = {"LN2": LN2, "LN10": LN10}
_CALLS = {}


def _calls():
    if not _CALLS:
        for name, _, op in value_calls(OPS):
            if op.numpy:
                _CALLS.setdefault(name, op.numpy[0])
        _CALLS.update(EXTRA_CALLS)
    return _CALLS


class Unknown(Exception):
    """A partial expression calls something the evaluator has no NumPy form of."""


_BIN = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
        ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
        ast.Pow: lambda a, b: a ** b}
_CMP = {ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b,
        ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
        ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b}


def _and(a, b):
    if isinstance(a, (bool, np.bool_)) and isinstance(b, (bool, np.bool_)):
        return bool(a and b)
    return np.logical_and(a, b)


def _or(a, b):
    if isinstance(a, (bool, np.bool_)) and isinstance(b, (bool, np.bool_)):
        return bool(a or b)
    return np.logical_or(a, b)


def evaluate(node, env):
    """The value of expression tree ``node`` with the names in ``env``, computed by NumPy
    calls (so on active values it records). Raises :class:`Unknown`."""
    kind = type(node)
    if kind is ast.Constant:
        return node.value
    if kind is ast.Name:
        if node.id in env:
            return env[node.id]
        if node.id in NAMES:
            return NAMES[node.id]
        raise Unknown(node.id)
    if kind is ast.Attribute and isinstance(node.value, ast.Name) and \
            node.value.id in ("math", "np") and node.attr in ("nan", "inf", "pi"):
        return getattr(math, node.attr)
    if kind is ast.BinOp and type(node.op) in _BIN:
        return _BIN[type(node.op)](evaluate(node.left, env), evaluate(node.right, env))
    if kind is ast.UnaryOp and isinstance(node.op, ast.USub):
        return -evaluate(node.operand, env)
    if kind is ast.Compare:
        out, left = True, evaluate(node.left, env)
        for op, right_node in zip(node.ops, node.comparators):
            right = evaluate(right_node, env)
            out, left = _and(out, _CMP[type(op)](left, right)), right
        return out
    if kind is ast.BoolOp:
        combine = _and if isinstance(node.op, ast.And) else _or
        out = evaluate(node.values[0], env)
        for v in node.values[1:]:
            out = combine(out, evaluate(v, env))
        return out
    if kind is ast.IfExp:
        test = evaluate(node.test, env)
        if isinstance(test, (bool, np.bool_)):  # on constants: one branch
            return evaluate(node.body if test else node.orelse, env)
        return np.where(test, evaluate(node.body, env), evaluate(node.orelse, env))
    if kind is ast.Call and not node.keywords:
        name = ast.unparse(node.func)
        f = _calls().get(name)
        if f is None:
            raise Unknown(name)
        return _resolve(f)(*[evaluate(a, env) for a in node.args])
    raise Unknown(ast.unparse(node))


def _known(node):
    """Whether :func:`evaluate` can evaluate ``node`` (every call and name known)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and (sub.keywords or
                                          ast.unparse(sub.func) not in _calls()):
            return False
    return True


def _elementwise_vjp(op):
    trees = [None if p == "0.0" else ast.parse(p, mode="eval").body for p in op.partials]
    if not any(trees) or not all(t is None or _known(t) for t in trees):
        return None

    fixed = [op.args.index(a) for a in op.constant]  # no derivative: their plain values

    def vjp(r, g):
        env = dict(zip(("x", "y", "q"), r.args), z=r.z, c=r.c)
        for i in fixed:
            env["xyq"[i]] = r.primals[i]
        out = []
        for tree, size, need in zip(trees, r.sizes, r.need):
            if tree is None or not need:
                out.append(None)
                continue
            d = _times(g, tree, env)
            if size != r.n:  # a broadcast operand (size 1): its contributions add
                d = np.reshape(np.sum(d), (1,))
            out.append(d)
        return out
    vjp.__name__ = f"{op.name}_vjp"
    return vjp


def _times(g, tree, env):
    """``g * partial``; a partial of 1 or -1 records no product."""
    if isinstance(tree, ast.Constant) or isinstance(tree, ast.UnaryOp) and \
            isinstance(tree.operand, ast.Constant):
        p = evaluate(tree, env)
        if p == 1.0:
            return g
        if p == -1.0:
            return -g
    return g * evaluate(tree, env)


_VJPS = {}


def vjp_of(code):
    """The recorded reverse rule of opcode ``code`` (see the module docstring), or None if
    the op has none. Ops through which no derivative flows have the rule ``no_adjoint``."""
    if code not in _VJPS:
        op = OPS[code]
        if not op.differentiable and op.kind in ("leaf", "unary", "binary", "compare",
                                                 "select", "ternary", "structured"):
            _VJPS[code] = no_adjoint
        elif op.elementwise:
            _VJPS[code] = _elementwise_vjp(op)
        else:
            _VJPS[code] = op.vjp
    return _VJPS[code]


def no_adjoint(r, g):
    """The rule of an op through which no derivative flows (comparisons, guards)."""
    return [None] * len(r.args)


def nesting(op):
    """How deep derivatives nest through ``op``: ``"any"`` (it has a recorded reverse
    rule), ``"2nd"`` (the second-order route only), or None (no derivative flows)."""
    if op.kind in ("leaf", "region", "call") or not op.differentiable:
        return None
    return "any" if vjp_of(op.code) is not None else "2nd"

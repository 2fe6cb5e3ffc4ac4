"""Symbolic partial derivatives of the op table's partial-derivative expressions.

The second-order rules of an elementwise op come from its first-order ones: the tangent of
the adjoint update ``xbar += zbar * p(x, y, z)`` needs ``dp/dx``, ``dp/dy`` and ``dp/dz``
(``z`` is the op's result, whose tangent the tangent sweep knows). :func:`partial` finds
them by differentiating the expression's Python syntax tree with the chain rule
(Griewank & Walther, "Evaluating Derivatives", 2nd ed., sec. 2.2: elementary functions and
their derivatives). The derivative of a function the expression calls comes from the op
table itself where an op's value is that function of its operands (``math.tan(x)``, whose
partial is ``1.0 + z * z``, so ``d math.tan(u) = (1 + math.tan(u)^2) du``), else from
:data:`CALLS` (Python's ``math`` functions and helpers that no op's value names). An
expression calling anything else has no derivative here: :class:`NoRule`.
"""

import ast
import copy

#: Derivatives of called functions that are not an op's value, by argument (``u0``, ...);
#: ``z`` in them is the call's own value. None: unknown, so :class:`NoRule` where that
#: argument varies (a ``"0.0"`` would be a silently wrong second derivative).
CALLS = {
    "math.sqrt": ("0.5 / math.sqrt(u0)",),
    "math.log": ("1.0 / u0",),
    "math.log1p": ("1.0 / (1.0 + u0)",),
    "math.copysign": ("math.copysign(1.0, u0) * math.copysign(1.0, u1)", "0.0"),
    # sinh x computed from (x, cosh x): a function of x alone
    "sinh_from_cosh": ("math.cosh(u0)", "0.0"),
    # c x^(c-1), from (x, c, z = x^c): a function of x and c
    "pow_dx": ("0.0 if u1 == 0.0 or u1 == 1.0 else u1 * (u1 - 1.0) * u0 ** (u1 - 2.0)",
               "u0 ** (u1 - 1.0) * (1.0 + u1 * npy_log(u0))", "0.0"),
    # special functions' partials (jittape.optable.scalar_special); None: no derivative in that
    # argument (an order or shape parameter that the op table makes a constant)
    "cs_psi": ("polygamma(1.0, u0)",),  # psi' (DLMF 5.15.1); 1e-15, scalarmath's 1e-12
    "trigamma": ("polygamma(2.0, u0)",),
    "rgamma_dx": ("rgamma_dxx(u0, u1)", "0.0"),  # a function of x alone, as sinh_from_cosh
    "multigammaln_da": ("multigammaln_daa(u0, u1)", None),
    "gammainc_dx": (None, "gammainc_dxx(u0, u1)"),
    "betainc_dx": (None, None, "betainc_dxx(u0, u1, u2)"),
    "spence_dx": ("spence_dxx(u0)",),
    "cs_gammaln": ("cs_psi(u0)",),  # d/dx log|Gamma(x)| = psi(x) (DLMF 5.2.2)
    "exprel_dx": ("exprel_dxx(u0)",),
    "log1p_ratio_dx": ("log1p_ratio_dxx(u0)",),
    # f_k(x; nc): d/dx = (f_{k-2} - f_k)/2, d/dnc = (f_{k+2} - f_k)/2 (scalar_special.ncx2_pdf)
    "ncx2_pdf": ("0.5 * (ncx2_pdf(u0, u1 - 2.0, u2) - z)", None,
                 "0.5 * (ncx2_pdf(u0, u1 + 2.0, u2) - z)"),
    # the parts of psi(x + iy), holomorphic: Cauchy-Riemann with psi'(z) (DLMF 5.15.1)
    "psi_re": ("trigamma_re(u0, u1)", "-trigamma_im(u0, u1)"),
    "psi_im": ("trigamma_im(u0, u1)", "trigamma_re(u0, u1)"),
}
#: Piecewise constant functions: zero derivative wherever one exists.
CONSTANT_CALLS = {"np.sign", "np.trunc", "np.floor", "math.floor", "max_share"}
VARIABLES = ("x", "y", "q", "z")


class NoRule(Exception):
    """The expression calls a function whose derivative is not known."""


def _parse(expr):
    return ast.parse(expr, mode="eval").body


def _dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    raise NoRule(ast.unparse(node))


def value_calls(ops):
    """``[(function name, parameter names, op)]``: the elementwise entries whose value is a
    call of their operands in order (``math.tan(x)``), first entry first: the op is that
    function (its partials are the function's derivatives, its NumPy callable computes it)."""
    out = []
    for op in ops:
        if not op.elementwise or op.uses_c or not op.value:
            continue
        node = _parse(op.value)
        params = [a.id for a in getattr(node, "args", ()) if isinstance(a, ast.Name)]
        if isinstance(node, ast.Call) and params == list(VARIABLES[:len(node.args)]) and \
                len(params) == len(op.partials):
            out.append((_dotted(node.func), params, op))
    return out


def call_rules(ops):
    """``{function name: (parameter names, partial expressions)}`` from the elementwise
    entries whose value is a call of their operands, plus :data:`CALLS`."""
    rules = {name: ([f"u{i}" for i in range(len(ps))], ps) for name, ps in CALLS.items()}
    for name, params, op in value_calls(ops):
        rules.setdefault(name, (params, op.partials))
    return rules


class _Subst(ast.NodeTransformer):
    def __init__(self, names):
        self.names = names

    def visit_Name(self, node):
        return copy.deepcopy(self.names[node.id]) if node.id in self.names else node


def _num(v):
    return ast.Constant(float(v))


def _zero(node):
    return node is None


def _add(a, b):
    return b if a is None else a if b is None else ast.BinOp(a, ast.Add(), b)


def _mul(a, b):
    return None if a is None or b is None else ast.BinOp(a, ast.Mult(), b)


class _Differentiator:
    def __init__(self, rules):
        self.rules = rules

    def d(self, node, var):
        """``d node / d var`` as a syntax tree, None for zero."""
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise NoRule(ast.unparse(node))
        return method(node, var)

    def _Constant(self, node, var):
        return None

    def _Name(self, node, var):
        return _num(1.0) if node.id == var else None

    def _Attribute(self, node, var):  # math.pi, np.inf
        return None

    def _Compare(self, node, var):
        return None

    _BoolOp = _Compare

    def _UnaryOp(self, node, var):
        if isinstance(node.op, ast.Not):
            return None
        du = self.d(node.operand, var)
        return None if du is None else ast.UnaryOp(type(node.op)(), du)

    def _IfExp(self, node, var):
        a, b = self.d(node.body, var), self.d(node.orelse, var)
        if a is None and b is None:
            return None
        return ast.IfExp(node.test, a or _num(0.0), b or _num(0.0))

    def _BinOp(self, node, var):
        a, b, op = node.left, node.right, node.op
        da, db = self.d(a, var), self.d(b, var)
        if isinstance(op, (ast.Add, ast.Sub)):
            if db is not None and isinstance(op, ast.Sub):
                db = ast.UnaryOp(ast.USub(), db)
            return _add(da, db)
        if isinstance(op, ast.Mult):
            return _add(_mul(da, b), _mul(a, db))
        if isinstance(op, ast.Div):  # da / b - a db / b^2
            first = None if da is None else ast.BinOp(da, ast.Div(), b)
            second = None if db is None else ast.UnaryOp(ast.USub(), ast.BinOp(
                _mul(a, db), ast.Div(), ast.BinOp(b, ast.Mult(), b)))
            return _add(first, second)
        if isinstance(op, ast.Pow):  # b a^(b-1) da + a^b log(a) db
            first = None if da is None else _mul(_mul(b, ast.BinOp(
                a, ast.Pow(), ast.BinOp(b, ast.Sub(), _num(1.0)))), da)
            second = None if db is None else _mul(_mul(node, _parse(
                f"npy_log({ast.unparse(a)})")), db)
            return _add(first, second)
        raise NoRule(ast.unparse(node))

    def _Call(self, node, var):
        name = _dotted(node.func)
        if name in CONSTANT_CALLS:
            return None
        if name not in self.rules or node.keywords:
            raise NoRule(name)
        params, partials = self.rules[name]
        names = dict(zip(params, node.args), z=node)
        total = None
        for i, (arg, p) in enumerate(zip(node.args, partials)):
            da = self.d(arg, var)
            if da is not None and p is None:
                raise NoRule(f"{name} in argument {i}")
            if da is not None and p != "0.0":
                total = _add(total, _mul(_Subst(names).visit(_parse(p)), da))
        return total


def partial(expr, var, rules):
    """``d expr / d var`` (``var`` one of x, y, q, z) as source text, or None for zero.

    ``rules`` is :func:`call_rules` of the table. Raises :class:`NoRule` if ``expr`` calls
    a function whose derivative is not known.
    """
    out = _Differentiator(rules).d(_parse(expr), var)
    return None if out is None else ast.unparse(out)

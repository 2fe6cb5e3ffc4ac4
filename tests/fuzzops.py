"""The vocabulary of the random programs of tests/fuzzprog.py, and their rendering to source.

A statement is ``Stmt(op, out, args)``: an op named in the tables below, the variable it binds
(for an in-place update: its target) and its arguments, all strings (variable names, literals,
keys, axes). Templates are format strings of the arguments ``{a}``, ``{b}``, ``{c}``, or
functions ``(K, *args)`` when the op has a kink: ``K`` (a :class:`Kinks`) renders the kink as
the bare operand, or with ``PROBE`` as a call that records on which side of it a run falls,
so that the checks (tests/fuzzcheck.py) recognise a finite-difference step that crosses it.
"""

import re


class Kinks:
    """How a template renders a kink: the bare operand, or a probe call (``probe=True``)."""

    def __init__(self, probe):
        self.probe = probe

    def at(self, a, b):  # the sign of a - b decides
        return f"_k({a}, {b})" if self.probe else a

    def arg(self, a, axis, fn):  # np.argmax / np.argmin of a along axis decides
        return f"_ka({a}, {axis}, np.{fn})" if self.probe else a

    def sort(self, a, axis):  # the sorting permutation decides
        return f"_ks({a}, {axis})" if self.probe else a

    def cell(self, a, period, offset):  # floor((a + offset) / period) decides
        return f"_kc({a}, {period}, {offset})" if self.probe else a

    def bins(self, a, knots):  # np.searchsorted(knots, a) decides
        return f"_kb({a}, {knots})" if self.probe else a


CLEAN, PROBE = Kinks(False), Kinks(True)

# smooth elementwise functions of one operand: template, largest max|a| it is used on
UNARY = {
    "sin": ("np.sin({a})", None), "cos": ("np.cos({a})", None), "tanh": ("np.tanh({a})", None),
    "arctan": ("np.arctan({a})", None), "arcsinh": ("np.arcsinh({a})", None),
    "exp": ("np.exp({a})", 4), "expm1": ("np.expm1({a})", 4), "exp2": ("np.exp2({a})", 6),
    "sinh": ("np.sinh({a})", 4), "cosh": ("np.cosh({a})", 4), "rpow": ("1.5 ** {a}", 10),
    "log": ("np.log(1.0 + {a} ** 2)", None), "log1p": ("np.log1p(np.square({a}))", None),
    "log2": ("np.log2(0.5 + {a} * {a})", None), "log10": ("np.log10(2.0 + np.sin({a}))", None),
    "sqrt": ("np.sqrt(0.25 + {a} ** 2)", None), "cbrt": ("np.cbrt(0.5 + {a} ** 2)", None),
    "square": ("np.square({a})", 10), "cube": ("{a} ** 3", 4),
    "powf": ("(1.0 + {a} ** 2) ** 0.75", 20), "recip": ("1.0 / (1.0 + {a} ** 2)", None),
    "neg": ("-{a}", None), "pos": ("+{a}", None), "affine": ("0.5 * {a} - 0.25", None),
    "arcsin": ("np.arcsin(0.9 * np.tanh({a}))", None),
    "arccos": ("np.arccos(0.8 * np.sin({a}))", None),
    "arctanh": ("np.arctanh(0.8 * np.sin({a}))", None),
    "arccosh": ("np.arccosh(1.5 + {a} ** 2)", None), "tan": ("np.tan(np.tanh({a}))", None),
    "expit": ("scipy.special.expit({a})", None), "erf": ("scipy.special.erf({a})", None),
    "erfc": ("scipy.special.erfc({a})", None), "log_ndtr": ("scipy.special.log_ndtr({a})", 12),
    "gammaln": ("scipy.special.gammaln(0.5 + {a} ** 2)", 10),
    "digamma": ("scipy.special.digamma(1.0 + {a} ** 2)", None),
    "psi": ("scipy.special.psi(2.0 + np.sin({a}))", None),
    "poisson": ("scipy.stats.poisson.logpmf(3, 0.5 + {a} ** 2)", 5),
    "frozen": ("scipy.stats.norm(0.5, 2.0).logpdf({a})", None),
    "expon": ("scipy.stats.expon.logpdf(0.5 + {a} ** 2, scale=1.5)", None),
    "chi2": ("scipy.stats.chi2.logpdf(0.5 + {a} ** 2, 3.0)", 10),
    # through complex values and back (jittape.numpy.complex_values)
    "c_exp": ("np.real(np.exp({a} * (0.3 + 0.7j)))", 10),
    "c_abs": ("np.abs(np.sin({a} + 0.5j))", 6),
    "c_log": ("np.imag(np.log({a} + 2j)) + np.real(np.log({a} * 1j - 1.5))", None),
    "c_sqrt": ("np.real(np.sqrt({a} * 1j + 1.5))", None),
    "c_div": ("np.real((1 + 2j) / ({a} + 3j)) * np.imag(({a} - 1j) ** 3)", 6),
    "c_step": ("np.imag(np.cosh({a} + 1e-20j)) * 1e20", 6),  # complex step: sinh(a)
    "c_fft": ("np.reshape(np.fft.irfft(np.fft.rfft(np.atleast_1d(np.tanh({a}))) * (0.5 - 0.25j),"
              " n=np.shape(np.atleast_1d({a}))[-1]), np.shape({a}))", None),
}
# elementwise with kinks or jumps, at thresholds lo < hi (literals between values of a)
KINKED = {
    "abs": lambda K, a, lo, hi: f"np.abs({K.at(a, lo)} - {lo})",
    "absb": lambda K, a, lo, hi: f"abs({K.at(a, hi)} - {hi})",
    "relu": lambda K, a, lo, hi: f"np.maximum({K.at(a, lo)}, {lo})",
    "leaky": lambda K, a, lo, hi: f"np.where({K.at(a, lo)} > {lo}, {a}, 0.1 * {a})",
    "clip": lambda K, a, lo, hi: f"np.clip({K.at(K.at(a, lo), hi)}, {lo}, {hi})",
    "fmin": lambda K, a, lo, hi: f"np.fmin({K.at(a, hi)}, {hi})",
    "gate": lambda K, a, lo, hi: f"({K.at(a, lo)} > {lo}) * {a}",
    "band": lambda K, a, lo, hi:
        f"np.where(({K.at(a, lo)} > {lo}) & ({K.at(a, hi)} < {hi}), {a}, 0.3 * {a})",
    "sign": lambda K, a, lo, hi: f"np.sign({K.at(a, hi)} - {hi}) + np.cos({a})",
    "frac": lambda K, a, lo, hi: f"{a} - np.floor({K.cell(a, 1.0, 0.0)})",
    "mod": lambda K, a, lo, hi: f"np.mod({K.cell(a, 0.7, 0.0)}, 0.7)",
    "rint": lambda K, a, lo, hi: f"np.sin({a}) + np.rint({K.cell(a, 1.0, 0.5)})",
    "interp": lambda K, a, lo, hi:
        f"np.interp({K.bins(a, f'[{lo}, {hi}]')}, [{lo}, {hi}], [0.5, -1.0])",
}
# elementwise ops of two broadcasting operands (b may be a literal): template, max|a|, max|b|
BINARY = {
    "add": ("{a} + {b}", None, None), "sub": ("{a} - {b}", None, None),
    "mul": ("{a} * {b}", None, None), "div": ("{a} / (1.0 + {b} ** 2)", None, None),
    "rdiv": ("{b} / (2.0 + np.cos({a}))", None, None),
    "logaddexp": ("np.logaddexp({a}, {b})", None, None),
    "logaddexp2": ("np.logaddexp2({a}, {b})", None, None),
    "arctan2": ("np.arctan2({a}, 1.0 + {b} ** 2)", None, None),
    "hypot": ("np.hypot({a}, 0.5 + np.sin({b}))", None, None),
    "pow": ("(1.0 + {a} ** 2) ** np.tanh({b})", 20, None),
    "xlogy": ("scipy.special.xlogy({a}, 1.0 + {b} ** 2)", None, None),
    "maximum": (lambda K, a, b: f"np.maximum({K.at(a, b)}, {b})", None, None),
    "minimum": (lambda K, a, b: f"np.minimum({K.at(a, b)}, {b})", None, None),
    "where": (lambda K, a, b: f"np.where({K.at(a, b)} < {b}, np.sin({a}), {b})", None, None),
    "clipab": (lambda K, a, b: f"np.clip({K.at(K.at(a, b), f'{b} + 1.0')}, {b}, {b} + 1.0)",
             None, None),
    "select": (lambda K, a, b: f"np.select([{K.at(a, b)} > {b}, {K.at(a, -0.5)} < -0.5], "
                               f"[{a}, {b}], 0.25)", None, None),
    "linspace": ("np.linspace({a}, {b}, 4)", None, None),
    "norm.logpdf": ("scipy.stats.norm.logpdf({a}, {b}, 0.5 + {b} ** 2)", None, None),
    "norm.cdf": ("scipy.stats.norm.cdf({a}, {b})", None, None),
    "norm.logsf": ("scipy.stats.norm.logsf({a}, 0.3, 1.0 + {b} ** 2)", 30, None),
    "t.logpdf": ("scipy.stats.t.logpdf({a}, 2.5 + {b} ** 2)", None, None),
    "gamma.logpdf": ("scipy.stats.gamma.logpdf(0.5 + {a} ** 2, 1.5 + np.sin({b}))", 10, None),
    "beta.logpdf": ("scipy.stats.beta.logpdf(scipy.special.expit({a}), 2.0, 1.5 + {b} ** 2)",
                    None, 5),
}


def _kw(axis, keepdims):
    return ("" if axis == "None" else f", axis={axis}") + \
        (", keepdims=True" if keepdims == "True" else "")


# reductions: template of (a, axis, keepdims)
REDUCE = {
    "sum": lambda K, a, ax, kd: f"np.sum({a}{_kw(ax, kd)})",
    "mean": lambda K, a, ax, kd: f"np.mean({a}{_kw(ax, kd)})",
    "msum": lambda K, a, ax, kd: f"{a}.sum({_kw(ax, kd)[2:]})",
    "mmean": lambda K, a, ax, kd: f"{a}.mean({_kw(ax, kd)[2:]})",
    "prod": lambda K, a, ax, kd: f"np.prod({a}{_kw(ax, kd)})",
    "var": lambda K, a, ax, kd: f"np.var({a}{_kw(ax, kd)})",
    "std": lambda K, a, ax, kd: f"{a}.std({_kw(ax, kd)[2:]})",
    "norm": lambda K, a, ax, kd: f"np.linalg.norm({a}{_kw(ax, kd)})",
    "logsumexp": lambda K, a, ax, kd: f"scipy.special.logsumexp({a}{_kw(ax, kd)})",
    "max": lambda K, a, ax, kd: f"np.max({K.arg(a, ax, 'argmax')}{_kw(ax, kd)})",
    "min": lambda K, a, ax, kd: f"{K.arg(a, ax, 'argmin')}.min({_kw(ax, kd)[2:]})",
}
# along one axis (an int, or None: the flattened array): scans, differences, order statistics
SCAN = {
    "cumsum": lambda K, a, ax: f"np.cumsum({a}, axis={ax})",
    "cumprod": lambda K, a, ax: f"{a}.cumprod(axis={ax})",
    "diff": lambda K, a, ax: f"np.diff({a}, axis={ax})",
    "sort": lambda K, a, ax: f"np.sort({K.sort(a, ax)}, axis={ax})",
    "median": lambda K, a, ax: f"np.median({K.sort(a, ax)}, axis={ax})",
    "quantile": lambda K, a, ax: f"np.quantile({K.sort(a, ax)}, 0.3, axis={ax})",
    "percentile": lambda K, a, ax: f"np.percentile({K.sort(a, ax)}, [80.0, 25.0], axis={ax})",
    "partition": lambda K, a, ax: f"np.partition({K.sort(a, ax)}, 1, axis={ax})",
}
PRODUCT = {
    "matmul": "{a} @ {b}", "np.matmul": "np.matmul({a}, {b})", "dot": "np.dot({a}, {b})",
    "mdot": "{a}.dot({b})", "inner": "np.inner({a}, {b})", "outer": "np.outer({a}, {b})",
    "tensordot": "np.tensordot({a}, {b}, axes=1)", "einsum": "np.einsum('{c}', {a}, {b})",
    "convolve": "np.convolve({a}, {b})", "correlate": "np.correlate({a}, {b}, mode='same')",
    "polyval": "np.polyval({a}, {b})", "cross": "np.cross({a}, {b})", "kron": "np.kron({a}, {b})",
    "tensordot0": "np.tensordot({a}, {b}, axes=([0], [0]))",
}
# linear algebra of well-conditioned matrices made from a square (stack of) a: template of
# (a, n) and for solve (a, n, b)
_M = "({n}.0 * np.eye({n}) + np.tanh({a}))"  # diagonally dominant for n <= 4
LINALG = {
    "solve": f"np.linalg.solve({_M}, {{b}})", "inv": f"np.linalg.inv({_M})",
    "det": f"np.linalg.det({_M})", "slogdet": f"np.linalg.slogdet({_M})[1]",
    "cholesky": f"np.linalg.cholesky({_M} @ np.swapaxes({_M}, -1, -2))",
}
# shape functions, views and copies: template of (a, parameter)
SHAPE = {
    "T": "{a}.T", "transpose": "np.transpose({a}, {b})", "mtranspose": "{a}.transpose()",
    "swapaxes": "np.swapaxes({a}, {b})", "mswapaxes": "{a}.swapaxes({b})",
    "moveaxis": "np.moveaxis({a}, {b})", "reshape": "{a}.reshape({b})",
    "np.reshape": "np.reshape({a}, {b})", "ravel": "{a}.ravel()", "flatten": "{a}.flatten()",
    "squeeze": "np.squeeze({a})", "msqueeze": "{a}.squeeze()",
    "expand_dims": "np.expand_dims({a}, {b})", "atleast_2d": "np.atleast_2d({a})",
    "flip": "np.flip({a}, axis={b})", "roll": "np.roll({a}, 2, axis={b})",
    "repeat": "np.repeat({a}, 2, axis={b})", "mrepeat": "{a}.repeat(2, axis={b})",
    "tile": "np.tile({a}, {b})", "broadcast_to": "np.broadcast_to({a}, {b})",
    "copy": "{a}.copy()", "np.copy": "np.copy({a})", "rot90": "np.rot90({a})",
    "diagonal": "np.diagonal({a})", "mdiagonal": "{a}.diagonal()", "triu": "np.triu({a})",
    "tril": "np.tril({a}, -1)", "trace": "np.trace({a})", "pad": "np.pad({a}, 1, mode='{b}')",
    "split": "np.split({a}, {b})[-1]", "array_split": "np.array_split({a}, {b})[0]",
    "zeros_like": "np.zeros_like({a})", "ones_like": "np.ones_like({a})",
    "full_like": "np.full_like({a}, 0.5)", "delete": "np.delete({a}, {b}, axis=0)",
}
INDEX = {
    "basic": "{a}[{b}]", "fancy": "{a}[{b}]", "take": "np.take({a}, {b}, axis=0)",
    "mtake": "{a}.take({b}, axis=0)", "constmask": "{a}[np.array({b})]",
    # boolean masks on values and argmax indices: guards (data-dependent shape or index)
    "masksum": lambda K, a, t: f"np.sum(np.sin({a}[{K.at(a, t)} > {t}]))",
    "argmaxpick": lambda K, a: f"{a}[np.argmax({K.arg(a, None, 'argmax')})]",
}
JOIN = {
    "concatenate": "np.concatenate([{a}, {b}], axis={c})",
    "stack": "np.stack([{a}, {b}], axis={c})", "hstack": "np.hstack([{a}, {b}])",
    "vstack": "np.vstack([{a}, {b}])", "column_stack": "np.column_stack([{a}, {b}])",
    "append": "np.append({a}, {b})", "array": "np.array([{a}, {b}])",
    "mixed": "np.concatenate([np.ravel({a}), [np.sum({b}), 1.5]])",  # arrays, scalars, numbers
}
ALLOC = {  # arrays the program allocates, to be filled by later updates (preallocation)
    "zeros": "np.zeros({a})", "ones": "np.ones({a})", "full": "np.full({a}, -0.75)",
    "zeros_f": "np.zeros({a}, order='F')", "scaled_ones": "2.0 * np.ones({a})",
}
NESTED = {  # derivatives inside the program: {b} the function of z, {c} the tangent
    "nested_grad": "jittape.grad(lambda z: np.sum({b}))({a})",
    "nested_jvp": "jittape.jvp(lambda z: {c}, ({a},), ({b},))[1]",
    # a gradient of a gradient: the program's own derivatives are then third order
    "nested_grad2": "jittape.grad(lambda z: np.sum(jittape.grad(lambda z: np.sum({b}))(z) * "
                    "np.cos(z)))({a})",
}
LOOP_BODIES = ["{acc} + np.sin({r})", "{acc} * np.cos({r})", "np.tanh({acc}) - {r}",
               "0.5 * {acc} + {r}", "{acc} - 0.3 * {r} ** 2", "{acc} * {r}"]
INITS = {"zero": "0.0", "one": "1.0", "first": "{a}[0]", "zeros": "np.zeros_like({a}[0])",
         "ones": "np.ones_like({a}[0])"}
BRANCHY = {"masksum", "argmaxpick", "if", "loop", "maskupdate"}  # ops that record guards
UPDATES = ("update", "maskupdate", "inplace")
VAR = re.compile(r"x|v[0-9]+")  # variable names; every other argument is a literal or key


def _template(op):
    for table in (UNARY, BINARY):
        if op in table:
            return table[op][0]
    for table in (KINKED, REDUCE, SCAN, PRODUCT, LINALG, SHAPE, INDEX, JOIN):
        if op in table:
            return table[op]
    raise KeyError(op)


class Stmt:
    """One statement: ``op`` of the vocabulary, the name it binds (``out``; for an update its
    target) and its arguments: variable names, literals, keys, axes, templates (strings)."""

    __slots__ = ("op", "out", "args")

    def __init__(self, op, out, args):
        self.op, self.out, self.args = op, out, tuple(args)

    def __repr__(self):
        return f"Stmt({self.op!r}, {self.out!r}, {self.args!r})"

    def reads(self):
        return {a for a in self.args if VAR.fullmatch(a)}

    def lines(self, K):
        """The statement's source lines, kinks rendered by ``K``."""
        op, out, args = self.op, self.out, self.args
        if op in UPDATES:  # out[key] op= fn(b), or out op= fn(b)
            key, how, fn, b = args
            key = f"{K.at(out, key)} > {key}" if op == "maskupdate" else key
            return [f"{out}{'' if op == 'inplace' else f'[{key}]'} {how} {fn.format(b)}"]
        if op == "if":
            c, red, t, a, f1, f2 = args
            return [f"if {K.at(red.format(c), t)} > {t}:",
                    f"    {out} = {UNARY[f1][0].format(a=a)}", "else:",
                    f"    {out} = {UNARY[f2][0].format(a=a)}"]
        if op == "loop":
            return _loop_lines(K, out, *args)
        if op in NESTED:
            a, *rest = args
            b, c = (rest[0], rest[1]) if op == "nested_jvp" else (rest[0], None)
            return [f"{out} = " + NESTED[op].format(a=a, b=b, c=c)]
        if op == "alloc":  # v = np.zeros(shape); v[key] = fn(b)
            kind, shape, key, fn, b = args
            return [f"{out} = {ALLOC[kind].format(a=shape)}", f"{out}[{key}] = {fn.format(b)}"]
        t = _template(op)
        if callable(t):
            return [f"{out} = {t(K, *args)}"]
        return [f"{out} = " + t.format(**dict(zip("anb" if op in LINALG else "abc", args)))]


def _loop_lines(K, out, a, init, n, t, body1, body2, red):
    r = f"{a}[i]"
    return [f"{out} = {INITS[init].format(a=a)}", f"for i in range({n}):",
            f"    if {K.at(red.format(r), t)} > {t}:",
            f"        {out} = {body1.format(acc=out, r=r)}", "    else:",
            f"        {out} = {body2.format(acc=out, r=r)}"]


def leaves(stmts):
    """Variables bound or updated that no later statement reads."""
    found = {}
    for s in stmts:
        for v in s.reads():
            found.pop(v, None)
        found[s.out] = True
    return list(found) or ["x"]


def source(stmts, K=CLEAN, trace=False, vector=False):
    """The program as a plain NumPy function ``f(x)`` returning the sum of ``sin`` of each
    variable that nothing reads (non-uniform weights: a permuted adjoint shows). ``trace``:
    the function passes its final variables to ``_seen(locals())`` before it returns;
    ``vector``: it returns the raveled ``sin`` terms, concatenated, instead of their sum."""
    body = [line for s in stmts for line in s.lines(K)] + (["_seen(locals())"] if trace else [])
    ret = " + ".join(f"np.sum(np.sin({v}))" for v in leaves(stmts))
    if vector:
        ret = "np.concatenate([" + ", ".join(f"np.ravel(np.sin({v}))"
                                             for v in leaves(stmts)) + "])"
    return "\n".join(["def f(x):"] + ["    " + line for line in body] + [f"    return {ret}"])

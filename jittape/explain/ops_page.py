"""The supported-operations page (``docs/ops.md``), generated from the op table.

``python -m jittape ops --markdown > docs/ops.md`` rewrites it; a test fails when the file
and the table disagree, so the page cannot drift from what the code does.
"""

import numpy as np

from ..optable.recorded import nesting
from ..optable.table import OPS

# Commonly used NumPy/SciPy functions that raise NotDifferentiableError on active values.
NOT_SUPPORTED = [
    ("np.percentile, np.quantile, np.median", "order statistics; use np.sort and indexing"),
    ("np.nonzero, np.where(cond), np.argwhere, np.unique",
     "integer results with no derivative; apply them to jittape.primal(x)"),
    ("np.argsort", "no derivative; np.sort carries the permutation's adjoint"),
    ("np.linalg.eig, np.linalg.eigvals", "complex results; eigh covers symmetric matrices"),
    ("derivatives of singular vectors of repeated singular values, and of the completion "
     "columns of svd(full_matrices=True) / qr(mode='complete') for non-square matrices",
     "undefined: the reverse sweep and jvp raise; use singular values or reduced factors"),
    ("np.fft.*", "complex values are not supported"),
    ("np.frexp, np.ldexp, np.modf, np.nextafter, np.spacing",
     "floating-point bit manipulation; apply them to jittape.primal(x)"),
    ("ufunc methods (np.add.reduce, np.add.at, ...)", "use np.sum / indexing instead"),
    ("out= arguments, in-place ufuncs on ndarrays holding active values",
     "assign the result instead"),
    ("other scipy.special functions (hyp2f1, ellipk, zeta, ...)",
     "not yet; apply them to jittape.primal(x) for no derivative"),
    ("derivatives with respect to orders and shapes (iv's v, gammainc's a, betainc's a and b, "
     "polygamma's n, multigammaln's d)", "no closed form; pass constants (jittape.primal)"),
    ("SciPy's ufuncs and np.isnan on an object array of actives (np.array([a, b]))",
     "no object loop, NumPy does not ask jittape; build it with np.stack([a, b])"),
]


# handlers that are one-liners in jittape/numpy/ufuncs.py, described here
_DERIVED = {
    "np.positive": "identity", "np.fabs": "opcode [`abs`](#op-abs)",
    "np.reciprocal": "`1 / x`: opcode [`rdivc`](#op-rdivc)",
    "np.float_power": "opcode [`pow`](#op-pow)",
    "np.deg2rad": "`x * pi/180`: opcode [`mulc`](#op-mulc)",
    "np.radians": "`x * pi/180`: opcode [`mulc`](#op-mulc)",
    "np.rad2deg": "`x * 180/pi`: opcode [`mulc`](#op-mulc)",
    "np.degrees": "`x * 180/pi`: opcode [`mulc`](#op-mulc)",
    "np.logical_and": "predicates: opcode [`mul`](#op-mul) of 0/1 values",
    "np.logical_or": "predicates: opcode [`maximum`](#op-maximum) of 0/1 values",
    "np.matmul": "opcode [`matmul`](#op-matmul)",
    "np.conjugate": "identity (real values)",
    "np.divmod": "opcodes [`floordiv`](#op-floordiv), [`remainder`](#op-remainder)",
    "np.isnan": "predicate `x != x`: opcode [`ne`](#op-ne)",
    "np.isinf": "predicate `abs(x) == inf`: opcodes [`abs`](#op-abs), [`eq`](#op-eq)",
    "np.isfinite": "predicate `abs(x) < inf`: opcodes [`abs`](#op-abs), [`lt`](#op-lt)",
    "np.signbit": "predicate `copysign(1, x) < 0`: opcodes [`copysign`](#op-copysign), "
                  "[`lt`](#op-lt)",
    "np.logical_not": "predicate `x == 0`: opcode [`eq`](#op-eq)",
    "np.logical_xor": "predicate `(x != 0) != (y != 0)`: opcode [`ne`](#op-ne)",
    "np.vecdot": "`sum(x * y, axis=-1)`: opcodes [`mul`](#op-mul), [`sum`](#op-sum)",
    "np.matvec": "opcode [`matmul`](#op-matmul)", "np.vecmat": "opcode [`matmul`](#op-matmul)",
    "np.shape": "shape query, no record", "np.ndim": "shape query, no record",
    "np.size": "shape query, no record",
}


def _name(f):
    if isinstance(f, str):
        return f
    mod = getattr(f, "__module__", "") or ""
    if isinstance(f, np.ufunc):
        return f"np.{f.__name__}" if getattr(np, f.__name__, None) is f else f.__name__
    for prefix, module in (("np.linalg.", np.linalg), ("np.", np)):
        public = getattr(module, getattr(f, "__name__", ""), None)
        if getattr(public, "__wrapped_by_jittape__", public) is f:  # (np.linalg's wrappers)
            return prefix + f.__name__
    return f"{mod}.{getattr(f, '__name__', f)}"


def _links(names):
    word = "opcode" if len(names) == 1 else "opcodes"
    return f"{word} " + ", ".join(f"[`{n}`](#op-{n})" for n in names)


def _composed(handler):
    """The page's entry for a function composed of ops: its handler and docstring line."""
    doc = (getattr(handler, "__doc__", None) or "").strip().split("\n")[0]
    where = getattr(handler, "__module__", "jittape")
    return f"composed (`{where}.{getattr(handler, '__name__', '?')}`)" + (
        f": {doc}" if doc else "")


def ops_markdown():
    """The Markdown text of ``docs/ops.md``."""
    from ..numpy.all_handlers import FUNCTIONS, UFUNC_HANDLERS
    from ..scipy.composed import SCIPY_FUNCTIONS
    from ..numpy.ufuncs import SCIPY_COMPOSED
    from ..numpy.complex_values import SCIPY_UFUNCS

    lines = ["# Supported operations", "",
             "Generated from the op table (`jittape/optable/table.py`) by "
             "`python -m jittape ops --markdown`; do not edit by hand.", "",
             "Rules are adjoint updates for `y = f(x)` (`z = f(x, y)`): `xbar` is the adjoint "
             "of `x`. Every rule is checked against central differences in "
             "`tests/test_ops.py`.", "",
             "*Nests*: how deep derivatives of derivatives (`grad(grad(f))`) go through the "
             "op: to any order where the op has a reverse rule in NumPy (recorded on the "
             "outer tape), else to second order.", "",
             "## Opcodes and their derivative rules", "",
             "| opcode | name | NumPy / SciPy | nests | derivative rule |",
             "|---:|---|---|---|---|"]
    primitive = {}
    for s in OPS:
        names = ", ".join(f"`{_name(f)}`" for f in s.numpy)
        depth = {"any": "any order", "2nd": "second order"}.get(nesting(s), "")
        lines.append(f"| {s.code} | <a id=\"op-{s.name}\"></a>`{s.name}` | {names} | {depth} | "
                     f"{s.rule.replace('|', '&#124;')} |")
        for f in s.numpy:
            primitive.setdefault(_name(f), []).append(s.name)
    lines += ["", "## NumPy and SciPy functions on active values", "",
              "Each maps to one opcode (linked) or is composed of several (the handler named "
              "shows how).", "", "| function | how |", "|---|---|"]
    entries = {}
    # SciPy's ufuncs join UFUNC_HANDLERS when first used; they are listed from the table
    static = [f for f in UFUNC_HANDLERS if getattr(np, f.__name__, None) is f]
    for f in static + list(FUNCTIONS):
        name = _name(f)
        if name in _DERIVED:
            entries[name] = _DERIVED[name]
        elif name in primitive:
            entries[name] = _links(primitive[name])
        else:
            entries[name] = _composed(UFUNC_HANDLERS.get(f) or FUNCTIONS.get(f))
    for name, names in primitive.items():
        if name.startswith("scipy."):
            entries[name] = _links(names)
    for name, handler in SCIPY_COMPOSED.items():
        entries[f"scipy.special.{name}"] = _composed(handler)
    for name, handler in SCIPY_UFUNCS.items():  # (wofz: one handler, real or complex)
        if SCIPY_COMPOSED.get(name) is not handler:
            entries[f"scipy.special.{name} of a complex value"] = _composed(handler)
    for module, functions in SCIPY_FUNCTIONS.items():
        for name, handler in functions.items():
            entries[f"{module}.{name}"] = _composed(handler)
    entries["scipy.special.logsumexp"] = ("composed (`jittape.numpy.all_handlers.logsumexp`): "
                                          "max-shifted")
    for name in sorted(entries):
        lines.append(f"| `{name}` | {entries[name].replace('|', '&#124;')} |")
    lines += ["", "Python operators on active values: `+ - * / ** @`, unary `-`, `abs()`, "
              "comparisons (recorded; `if` on them records a guard), indexing (basic, "
              "integer arrays, boolean masks, `None`, `...`).", "",
              "## Not supported (raise `NotDifferentiableError` naming the function)", "",
              "| function | why / instead |", "|---|---|"]
    lines += [f"| {a} | {b} |" for a, b in NOT_SUPPORTED]
    return "\n".join(lines) + "\n"

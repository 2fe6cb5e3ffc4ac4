"""The helpers that rules call by name, and the source that copies them into a generated
module (:mod:`jittape.sweeps.codegen`'s sweeps, :mod:`jittape.compiler.kernel`'s kernels): every
top-level function and float constant of the scalar helper modules and of each module that
defines a kernel of the op table, SciPy's C functions through :mod:`jittape.optable.externals`, and
jittape's exception classes. Whether a helper is inlined at Numba IR level or compiled as a
function of its own is decided here (:func:`inlined`).
"""

import functools
import inspect
import re
import sys

from .._base import errors
from ..optable import externals, scalar_special, scalar_math
from ..optable.table import OPS

#: Modules whose top-level functions and float constants rules may call by name: the scalar
#: helpers (SciPy's C functions ``cs_<name>`` too: :mod:`jittape.optable.externals`) and every
#: module that defines a kernel of the op table.
HELPER_MODULES = (scalar_math, scalar_special) + tuple(sorted(
    {sys.modules[k.__module__] for op in OPS
     for k in (op.forward, op.tangent, op.reverse, op.second) if callable(k)},
    key=lambda m: m.__name__))

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _helpers():
    table = {}
    for mod in HELPER_MODULES:
        for name, obj in vars(mod).items():
            if inspect.isfunction(obj) and obj.__module__ == mod.__name__:
                table[name] = obj
            elif isinstance(obj, float) and name.isupper():
                table[name] = obj
    return table


HELPERS = _helpers()
#: jittape's exception classes, which kernels may raise by name
ERRORS = frozenset(n for n, v in vars(errors).items() if isinstance(v, type) and
                   issubclass(v, Exception) and v.__module__ == errors.__name__)
#: Helpers compiled as functions of their own rather than inlined into each rule that calls
#: them (each helper module's ``OUTLINED``): long bodies that several branches call.
OUTLINED = frozenset(n for mod in HELPER_MODULES for n in getattr(mod, "OUTLINED", ()))
#: The longest structured-kernel helper that the sweeps inline, in lines with the helpers it
#: inlines in turn. A longer one is a function of its own, compiled once however many
#: kernels call it: inlined, a kernel grows into one function whose compile time grows
#: faster than its size (measured: svd's second-order branch 118 s inlined, 22 s not). The
#: elementwise rules' scalar helpers are inlined unless OUTLINED.
INLINE_LINES = 40
_SCALAR = (scalar_math.__name__, scalar_special.__name__)


def _inline_weights():
    weights = {}

    def weight(name):
        if name not in weights:
            weights[name] = 0  # a recursive helper
            f = HELPERS[name]
            callees = [n for n in names_used(f) - {name} if inspect.isfunction(HELPERS.get(n))]
            weights[name] = source_lines(f) + sum(
                weight(n) for n in callees if n not in OUTLINED and weight(n) <= INLINE_LINES)
        return weights[name]
    return {n: weight(n) for n, f in HELPERS.items() if inspect.isfunction(f)}


_WEIGHTS = None


def inlined(name):
    """Whether the sweeps inline helper ``name`` (at Numba IR level) or call it."""
    global _WEIGHTS
    if name in OUTLINED:
        return False
    if HELPERS[name].__module__ in _SCALAR:
        return True
    if _WEIGHTS is None:
        _WEIGHTS = _inline_weights()
    return _WEIGHTS[name] <= INLINE_LINES


def names_used(obj):
    if isinstance(obj, str):
        return set(_IDENT.findall(obj))
    if inspect.isfunction(obj):  # the function itself and the globals it names
        return {obj.__name__} | set(obj.__code__.co_names)
    return set()


def source_lines(f):
    """Lines of function ``f``'s source."""
    return function_source(f).count("\n")


@functools.lru_cache(maxsize=None)
def function_source(f):
    """``inspect.getsource(f)`` of a module-level function, from one parse of its module's
    file (getsource tokenizes the whole module for each function: the helpers of a first
    interpreted sweep took 0.19 s, most of a warm first gradient)."""
    spans = _spans(inspect.getsourcefile(f))
    if f.__name__ not in spans:
        return inspect.getsource(f)
    lines, (lo, hi) = spans["\n"], spans[f.__name__]
    return "".join(lines[lo - 1:hi])


@functools.lru_cache(maxsize=None)
def _spans(path):
    """Line spans (decorators included) of the module-level functions in file ``path``,
    and its lines under the key ``"\n"``."""
    import ast
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    out = {"\n": text.splitlines(keepends=True)}
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            out[node.name] = (first, node.end_lineno)
    return out


def _named(roots):
    """What ``roots`` (expressions or functions) name, transitively through the helpers:
    ``({name: helper}, SciPy externals, jittape errors)``."""
    seen, todo, calls, errors = {}, list(roots), set(), set()
    while todo:
        for name in names_used(todo.pop()):
            if name in HELPERS and name not in seen:
                seen[name] = HELPERS[name]
                todo.append(HELPERS[name])
            elif name in externals.KERNELS or name in externals.BY_SYMBOL:
                calls.add(name)
            elif name in ERRORS:  # a kernel raising jittape's own error (a constant message)
                errors.add(name)
    return seen, calls, errors


def rule_lines(body):
    """Lines of a branch ``body`` (its lines of source) and of the helper functions it
    names, transitively: its weight when a sweep is split into parts
    (:func:`jittape.sweeps.parts_source.split`)."""
    helpers = _named(body)[0]
    return len(body) + sum(source_lines(f) for f in helpers.values() if inspect.isfunction(f))


def helper_names(roots):
    """The names that :func:`helper_source` of ``roots`` defines (helpers and externals),
    sorted."""
    seen, calls, _ = _named(roots)
    return sorted(set(seen) | calls)


def helper_source(roots, inline=True, python=False, cache=False):
    """Source of the helpers that ``roots`` (expressions or functions) name, transitively.

    ``inline``: Numba IR-level inlining (right for the sweeps, which call each helper once or
    twice; straight-line tape kernels that call one many times should pass False).
    ``python``: SciPy's externals as Python callables (the interpreted tier). ``cache``:
    Numba's disk cache for each function (:mod:`jittape.compiler.shared`)."""
    seen, calls, errors = _named(roots)
    # inlined at IR level: measured 30% less compile time than separate functions
    plain = f'@njit({"cache=True, " if cache else ""}error_model="numpy")'
    deco = '@njit(error_model="numpy", inline="always")' if inline else plain
    out = [(externals.python_source(calls) if python else externals.source(calls, deco))
           ] if calls else []
    if errors:
        out.insert(0, f"from jittape._base.errors import {', '.join(sorted(errors))}\n")
    for name in sorted(seen):
        obj = seen[name]
        if isinstance(obj, float):
            out.append(f"{name} = {obj!r}\n")
        else:
            out.append((deco if inlined(name) else plain) + "\n" + function_source(obj))
    return "\n\n".join(out)

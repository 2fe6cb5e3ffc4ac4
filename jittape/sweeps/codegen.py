"""Generate the Numba source of the sweeps for a set of ops, from the op table alone.

:func:`sweep_source` writes one self-contained Python module holding

* ``forward_sweep``: recompute the records' values (replay), checking guards;
* ``reverse_sweep``: accumulate adjoints from a seeded output down to the leaves;
* ``tangent_sweep``: propagate tangents (forward mode) alongside recorded values;

each an interpreter loop over the records that dispatches on the opcode, with one branch
per op of the set and nothing else (Griewank & Walther, "Evaluating Derivatives", 2nd ed.,
sec. 6.3: the taping approach of ADOL-C and CppAD). Elementwise branches are written out
from the op's value and partial-derivative expressions; structured branches call the op's
kernels, whose source (and that of every helper they name) is copied into the module. So a
module's text determines its behaviour, and a hash of it is a sound cache key.

No generated function calls another sweep: Numba re-optimizes every jitted callee inside
its caller (measured: a one-call replay calling both sweeps compiles for 3 s more than the
sweeps themselves), so whole replays are orchestrated from Python (:mod:`jittape.api.tape`).

Each sweep runs a range of records (``lo..hi-1``; the backward sweeps from ``hi-1`` down
to ``lo``). Custom rules (:mod:`jittape.custom.custom_rules`) have no branch here: their regions and
call records (kinds ``region`` and ``call``, :mod:`jittape.optable.entry`) have Python rules that
:mod:`jittape.sweeps.regions` runs between ranges of the same compiled sweeps, so an op set with
custom rules compiles the sweeps of its other ops and of ``custom_arg`` (a copy), and shares
them with every superset. Designs measured and dropped (2-core Xeon, cold): range functions
beside the sweeps that the calls' kernels ran (Numba compiles a jitted callee again inside
every caller: the README's softplus example, all four sweeps, compiled in 27-32 s against
18-19 s for its ops without the rule, even with the range functions restricted to the ops
inside the rules); one ``while`` loop per sweep switching between modes instead of calls,
5x (LLVM's time grows faster than a function's size); recursion, which Numba's cache cannot
load (a segfault). Measured for the present design (benchmarks/bench_custom_compile.py,
results/custom.md), the README example cold, in new processes alternating with and
without the rule (2-core machine): first gradient (forward and reverse sweeps) 2.9 s against
2.8 s, all four sweeps 7.0 s against 6.5 s (medians of 3, load 3-4; at load 8: 8.0 s against
9.1 s and 19.6 s against 19.7 s); the design above, measured alongside, 3.9 s against 2.7 s
and 10.2 s against 6.3 s (at load 8: 1.40-1.44x and 1.45-1.70x). A call record costs about
10 us per gradient (26 us at load 8): its rule in Python between the sweeps.
"""

import math
import re

from ..optable import externals, symbolic
from . import parts_source
# helper_source and HELPERS: also what the tape compiler and the tests import from here
from .helper_source import HELPERS, OUTLINED, names_used, helper_source, rule_lines  # noqa: F401
from ..optable.table import OPS
from ..optable.entry import CALL, LEAF, REGION, UNARY

HEADER = "import math\n\nimport numpy as np\nfrom numba import njit\n\n"
#: The interpreted tier runs the same source with a decorator that does nothing.
PY_HEADER = "import math\n\nimport numpy as np\nfrom jittape.sweeps.tiers import njit\n\n"
JIT = '@njit(cache={cache}, nogil=True, error_model="numpy")'
# tape columns are t_op, t_a, ... so that x, y, z, q, c stay free for the rule expressions
TAPE = "t_op, t_a, t_b, t_k, t_c, off, pool"



def rule_args(op, x, y, q, c):
    """The arguments of op's generated rule functions ``f_<name>(x, y, q, c)`` (the tape
    compiler's elementwise calls)."""
    return f"{x}, {y if op.kind != UNARY else '0.0'}, {q if op.arity == 3 else '0.0'}, " \
        f"{literal(c)}"


def literal(x):
    """Python source of the float ``x`` (nan and inf through ``math``)."""
    x = float(x)
    if math.isnan(x):
        return "math.nan"
    if math.isinf(x):
        return "math.inf" if x > 0 else "-math.inf"
    return repr(x)

def _calls_out(op):
    """Whether op's rules call a function LLVM cannot see into (a SciPy kernel, an outlined
    helper): then its loops cannot vectorize, and a unit-stride copy of a loop is no gain."""
    names = set().union(*(names_used(e) for e in (op.value, *op.partials)))
    return bool(names & (OUTLINED | externals.KERNELS))


def rule_roots(ops):
    """Everything the rules of ``ops`` name: expressions and kernels."""
    roots = []
    for op in ops:
        if op.kind in (REGION, CALL):  # Python rules (jittape.sweeps.regions), not compiled
            continue
        roots += [op.value, *op.partials, op.forward, op.tangent, op.reverse]
        roots += [op.second] if callable(op.second) else []
    return [r for r in roots if r is not None]


# --- elementwise branches -----------------------------------------------------------------
def _loads(op, strided, what="val"):
    """Lines loading the operands of element j into x, y (and q: select, ternary)."""
    if op.kind == UNARY:
        return [f"x = {what}[ia + j]"]
    s = (lambda v: f" * {v}") if strided else (lambda v: "")
    lines = [f"x = {what}[ia + j{s('sa')}]", f"y = {what}[ib + j{s('sb')}]"]
    if op.arity == 3:
        lines.append(f"q = val[iq + j{s('sq')}]")
    return lines


def _strides(op):
    if op.kind == UNARY:
        return []
    lines = ["sa = 1 if off[t_a[i] + 1] - ia == n else 0",
             "sb = 1 if off[t_b[i] + 1] - ib == n else 0"]
    if op.arity == 3:
        lines += ["iq = off[t_k[i]]", "sq = 1 if off[t_k[i] + 1] - iq == n else 0"]
    return lines


def _scaled(g, d):
    """``g * d`` without multiplying by the literals 1 and -1."""
    return g if d == "1.0" else (f"-{g}" if d == "-1.0" else f"{g} * ({d})")


def _elementwise_forward(op):
    body = ["x = val[ia + j]"] if op.kind == UNARY else _loads(op, True)
    return _strides(op) + ["c = ci", "for j in range(n):"] + [
        "    " + ln for ln in body + [f"val[o + j] = {op.value}"]]


def _operand_targets(op):
    """(partial expression, offset, stride) per differentiable operand."""
    out = [(op.partials[0], "ia", "sa")]
    if op.kind != UNARY:
        out.append((op.partials[1], "ib", "sb"))
    if len(op.partials) > 2:
        out.append((op.partials[2], "iq", "sq"))
    return [t for t in out if t[0] != "0.0"]


_FLAG = {"ia": ("ca", "t_a"), "ib": ("cb", "t_b"), "iq": ("cq", "t_k")}
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*)\s*\(")


def _costly(expr):
    """Whether an expression costs more than a few flops: it calls a function (other than
    abs, max, min) or raises to a power."""
    return "**" in expr or any(f not in ("abs", "max", "min") for f in _CALL.findall(expr))


def _elementwise_reverse(op, const):
    targets = _operand_targets(op)
    if op.kind == UNARY:
        d = targets[0][0]
        return ["c = ci", "for j in range(n):", "    x = val[ia + j]", "    z = val[o + j]",
                f"    adj[ia + j] += {_scaled('adj[o + j]', d)}"]
    # A zero adjoint contributes exactly 0, even where a partial is inf or nan (the untaken
    # side of a where): skipped in the strided loop; written as a select in the unit-stride
    # loop, so that it vectorizes. That loop needs every operand at unit stride (a size-1
    # condition too), and is left out for rules that call opaque functions: half the code to
    # compile (with OUTLINED, measured: the special functions' sweeps in 14 s instead of 30).
    # An operand that is a constant leaf gets no adjoint (nobody reads it): the strided loop
    # skips it, and takes the records with a constant operand whose partials are costly
    # (logaddexp(0, x): one exp per element, not two; such loops do not vectorize anyway).
    # Cheap partials keep the unit-stride loop (a test in it would stop it vectorizing; a
    # loop per operand would cost compile time).
    flags = [f"{_FLAG[p][0]} = t_op[{_FLAG[p][1]}[i]] == {const}" for _, p, _ in targets]
    slow = ["for j in range(n):", "    g = adj[o + j]", "    if g != 0.0:",
            "        z = val[o + j]"]
    slow += ["        " + ln for ln in _loads(op, True)]
    for d, p, s in targets:
        slow += [f"        if not {_FLAG[p][0]}:",
                 f"            adj[{p} + j * {s}] += {_scaled('g', d)}"]
    head = ["c = ci"] + _strides(op) + flags
    if _calls_out(op):
        return head + slow
    unit = "sa == 1 and sb == 1 and ia != ib" + (" and sq == 1" if op.arity == 3 else "")
    if any(_costly(d) for d, _, _ in targets):
        unit += "".join(f" and not {_FLAG[p][0]}" for _, p, _ in targets)
    fast = [f"if {unit}:", "    for j in range(n):",
            "        g = adj[o + j]", "        z = val[o + j]"]
    fast += ["        " + ln for ln in _loads(op, False)]
    fast += [f"        adj[{p} + j] += {_scaled('g', d)} if g != 0.0 else 0.0"
             for d, p, _ in targets]
    return head + fast + ["else:"] + ["    " + ln for ln in slow]


def _elementwise_tangent(op):
    targets = _operand_targets(op)
    lines = ["c = ci"] + _strides(op) + ["for j in range(n):", "    z = val[o + j]"]
    lines += ["    " + ln for ln in _loads(op, True)]
    terms = []
    for m, (d, p, s) in enumerate(targets):
        at = f"{p} + j" if op.kind == UNARY else f"{p} + j * {s}"
        lines.append(f"    t{m} = dot[{at}]")
        # a zero tangent contributes 0 even where the partial is inf or nan
        terms.append(f"({_scaled(f't{m}', d)} if t{m} != 0.0 else 0.0)")
    lines.append(f"    dot[o + j] = {' + '.join(terms)}")
    return lines


# --- second order: the tangent of the reverse sweep ---------------------------------------
_CALL_RULES = symbolic.call_rules(OPS)


def _guarded(d, t):
    return f"({d}) * {t} if {t} != 0.0 else 0.0"


def _partial_tangent(op, p):
    """The tangent of partial ``p`` as a sum over x, y, q, z of ``dp/dv * vdot`` (a zero
    tangent contributes 0 even where dp/dv is inf), or None if no rule is known. Arguments
    that must be constants have a zero tangent."""
    skip = {"xyq"[op.args.index(a)] for a in op.constant}
    terms = []
    for v in "xyqz":
        d = None if v in skip else symbolic.partial(p, v, _CALL_RULES)
        if d is not None:
            terms.append(f"({_guarded(d, v + 'd')})")
    return " + ".join(terms) or "0.0"


def _elementwise_hvp(op):
    targets = _operand_targets(op)
    try:
        tangents = [_partial_tangent(op, d) for d, _, _ in targets]
    except symbolic.NoRule:
        return ["return i  # no second-order rule"]
    names = "xyq"[:max(op.arity, 1)]
    at = {"x": "ia + j", "y": "ib + j * sb", "q": "iq + j * sq"}
    if op.kind != UNARY:
        at["x"] = "ia + j * sa"
    body = ["g = adj[o + j]", "gd = adjdot[o + j]", "if g == 0.0 and gd == 0.0:",
            "    continue", "z = val[o + j]", "zd = dot[o + j]"]
    body += [f"{v} = val[{at[v]}]" for v in names] + [f"{v}d = dot[{at[v]}]" for v in names]
    for (d, p, s), pd in zip(targets, tangents):
        where = at["xyq"["ia ib iq".split().index(p)]]
        body += [f"p = {d}", f"pd = {pd}",
                 f"adj[{where}] += g * p if g != 0.0 else 0.0",
                 f"adjdot[{where}] += (gd * p if gd != 0.0 else 0.0) + "
                 f"(g * pd if g != 0.0 else 0.0)"]
    return ["c = ci"] + _strides(op) + ["for j in range(n):"] + ["    " + ln for ln in body]


def _structured_hvp(op, const):
    consts = [c.format(const=const) for c in _CONSTS]
    if op.second == "linear":
        rev = op.reverse.__name__
        return consts + [f"{rev}(val, adj, {_ARGS}, ca, cb)",
                         f"{rev}(val, adjdot, {_ARGS}, ca, cb)"]
    if callable(op.second):
        return consts + [f"{op.second.__name__}(val, dot, adj, adjdot, {_ARGS}, ca, cb)"]
    return ["return i  # no second-order rule"]


def has_second_order(op):
    """Whether ``op`` has a second-order rule (HVPs through it)."""
    if not op.differentiable or op.kind == LEAF:
        return True
    return _elementwise_hvp(op)[0] != "return i  # no second-order rule" if op.elementwise \
        else op.second is not None


# --- structured branches ------------------------------------------------------------------
_ARGS = "o, n, ia, ib, t_k[i], ci, pool, off"
_CONSTS = "ca = t_a[i] < 0 or t_op[t_a[i]] == {const}", "cb = t_b[i] < 0 or t_op[t_b[i]] == {const}"


def _structured(op, sweep, const):
    kern = getattr(op, sweep)
    name = kern.__name__
    if sweep == "forward":
        call = f"{name}(val, {_ARGS})"
        return [f"if {call}:", "    return i"] if op.checks else [call]
    buf = "adj" if sweep == "reverse" else "dot"
    return [c.format(const=const) for c in _CONSTS] + [
        f"{name}(val, {buf}, {_ARGS}, ca, cb)"]


# --- the branch of an op in a sweep ---------------------------------------------------
_BRANCHES = {}  # (id of an op entry, sweep, const opcode) -> its branch (entries live on)


def branch(op, sweep, const):
    """The body of op's branch in ``sweep`` ("forward", "reverse", "tangent", "hvp"), or
    None. Leaves have none, nor have regions and calls: their rules are Python, run between
    the sweeps (:mod:`jittape.sweeps.regions`). Generated once per process (finding a
    compiled superset in the cache generates the sources of large op sets): do not modify
    the list."""
    key = (id(op), sweep, const)
    if key not in _BRANCHES:
        _BRANCHES[key] = (op, _branch(op, sweep, const))  # (op kept: its id stays its own)
    return _BRANCHES[key][1]


def _branch(op, sweep, const):
    if op.kind in (LEAF, REGION, CALL):
        return None
    if sweep == "hvp":
        if not op.differentiable:
            return None
        return (_elementwise_hvp(op) if op.elementwise else _structured_hvp(op, const))
    if op.elementwise:
        if sweep == "forward":
            return _elementwise_forward(op)
        if not op.differentiable:
            return None
        return (_elementwise_reverse(op, const) if sweep == "reverse" else
                _elementwise_tangent(op))
    if getattr(op, sweep) is None:
        return None
    return _structured(op, sweep, const)


# --- the module ---------------------------------------------------------------------------
SWEEPS = {
    "forward": ("forward_sweep(" + TAPE + ", val, lo, hi)", "for i in range(lo, hi):",
                "return -1", "Recompute val for records lo..hi-1; -1, or the id of a failed "
                "guard."),
    "reverse": ("reverse_sweep(" + TAPE + ", val, adj, lo, hi)",
                "for i in range(hi - 1, lo - 1, -1):", "return",
                "Accumulate adjoints into adj (seeded by the caller) for records hi-1..lo."),
    "tangent": ("tangent_sweep(" + TAPE + ", val, dot, lo, hi)", "for i in range(lo, hi):",
                "return",
                "Propagate tangents into dot (inputs seeded) for records lo..hi-1, given the "
                "values in val."),
    "hvp": ("hvp_sweep(" + TAPE + ", val, dot, adj, adjdot, lo, hi)",
            "for i in range(hi - 1, lo - 1, -1):", "return -1",
            "Adjoints and their tangents (forward over reverse) for records hi-1..lo, given "
            "values and tangents; -1, or the id of a record with no second-order rule."),
}


#: The most rule code one compiled function of a sweep holds, in lines of its branches and
#: of the kernels they inline. Numba's and LLVM's compile time grow faster than a function's
#: size (the HVP sweep of all 135 ops as one function: over half an hour of CPU), so the
#: sweep of a larger op set dispatches each record to the part function holding its op.
PART_LINES = 120
#: The ops of scalar Python code (loops over ``x[i]``, read by ``slice``): a multi-part sweep
#: keeps their branches in its runner, since the records of a scalar tape alternate between
#: them and a call through a part's address costs ~30 ns (measured: the all-op forward
#: sweep on the LJ loops' tape, 4.3 ns per record as one function, 39 ns with every op in
#: a part, 18 ns with these but ``slice`` in the runner).
HOT = ("neg", "exp", "log", "sqrt", "square", "sin", "cos", "addc", "mulc", "divc", "rsubc",
       "rdivc", "powc", "add", "sub", "mul", "div", "slice")
PRELUDE = ["o = off[i]", "n = off[i + 1] - o", "ia = off[t_a[i]] if t_a[i] >= 0 else 0",
            "ib = off[t_b[i]] if t_b[i] >= 0 else 0", "ci = t_c[i]"]


def branch_chain(sweep, ops, const):
    """The ``if opc == ...`` chain of ``ops``' branches, at the loop body's indentation."""
    lines, first = [], True
    for op in ops:
        body = branch(op, sweep, const)
        if body is None:
            continue
        lines.append(f"{'if' if first else 'elif'} opc == {op.code}:  # {op.name}")
        lines += ["    " + ln for ln in body]
        first = False
    return lines


def _parts(sweep, ops, const):
    """``(hot, parts)`` of ``sweep`` for ``ops``: ``hot`` the ops whose branches the runner
    keeps (:data:`HOT`), ``parts`` the ``(ops, weight)`` of each part, runs of the other ops
    (those with a branch in ``sweep``) of at most :data:`PART_LINES` lines, a heavier op alone
    (:func:`jittape.sweeps.parts_source.split`). ``([], [(ops, weight)])`` if all of them fit in
    one part: the sweep is then one function, as generated for a typical tape's ops."""
    items = [(op, rule_lines(body)) for op in ops
             for body in [branch(op, sweep, const)] if body is not None]
    rest = [(op, w) for op, w in items if op.name not in HOT]
    if sum(w for _, w in items) <= PART_LINES or not rest:  # (only scalar code's ops: one)
        return [], [([op for op, _ in items], sum(w for _, w in items))]
    hot = [op for op, _ in items if op.name in HOT]
    return hot, parts_source.split(rest, PART_LINES)


def sweep_parts(sweep, ops):
    """The weights (lines) of the part functions of ``sweep`` ("forward", ...) for ``ops``;
    one weight: the sweep is one function."""
    return [w for _, w in
            _parts(sweep, sorted(set(ops), key=lambda op: op.code), const_code(ops))[1]]


def _sweep(sweep, ops, const, cache, python=False):
    sig, loop, ret, doc = SWEEPS[sweep]
    name, args = sig[:-1].split("(")
    hot, parts = _parts(sweep, ops, const)
    if len(parts) <= 1 and not hot:
        head = [JIT.format(cache=cache), f"def {sig}:", f'    """{doc}"""', f"    {loop}",
                "        opc = t_op[i]"]
        body = PRELUDE + branch_chain(sweep, ops, const)
        return "\n".join(head + ["        " + ln for ln in body] + [f"    {ret}"]) + "\n"
    # each part a function of its own, called through its address (jittape.sweeps.parts_source)
    bodies = [PRELUDE + branch_chain(sweep, part, const) for part, _ in parts]
    return parts_source.partwise_source(
        name, args, doc, ret, bodies, [p[0][0].code for p in parts],
        PRELUDE + branch_chain(sweep, hot, const) if hot else [], [op.code for op in hot],
        JIT.format(cache=cache), python)


def const_code(ops):
    return next(op.code for op in ops if op.name == "const")


def sweep_source(ops, cache=True, python=False):
    """The module source of the sweeps for ``ops`` (op table entries, any order).

    The leaves are always included. ``cache`` goes into the ``@njit(cache=...)`` decorators
    (False for an in-memory module when the cache directory is not writable). ``python``:
    the same code for CPython, for the interpreted tier (:mod:`jittape.sweeps.tiers`).
    """
    ops = sorted(set(ops), key=lambda op: op.code)
    const = const_code(ops)
    parts = [f"# jittape sweeps for ops: {', '.join(op.name for op in ops)}\n"
             "# generated from the op table by jittape.sweeps.codegen; do not edit\n"
             + (PY_HEADER if python else HEADER)]
    sweeps = [_sweep(s, ops, const, cache, python)
              for s in ("forward", "reverse", "tangent", "hvp")]
    # the second-order branches may call helpers that no rule names (derivatives of calls)
    helpers = helper_source(rule_roots(ops) + [sweeps[-1]], python=python)
    if helpers:
        parts.append(helpers)
    return "\n\n".join(parts + sweeps)
"""Show how a gradient is computed: Graphviz graphs of a tape and traced sweeps.

Teaching and debugging tools, bound as methods of :class:`jittape.Tape`:

* :func:`to_dot` / :func:`render`: the tape as a Graphviz graph, one node per record (op,
  shape, value, optionally adjoint), edges from operands. Runs of records that a Python loop
  recorded are found by the search of the tape compiler's rerolling
  (:func:`jittape.reroll.find_segments`) and drawn as one node with their repetition count.
* :func:`trace_gradient` / :func:`trace_jvp`: the reverse (tangent) sweep one record at a
  time, as a table: record, operation, its rule from the op table (what
  ``python -m jittape ops`` prints), what flows in and what flows out.

The traces do not re-derive anything: each step calls the tape's own compiled sweep
(:mod:`jittape.sweeps`) with every other record masked as a leaf, so that exactly one branch,
the one the real sweep runs for that record, does its work, in the real sweep's order, on the
same buffer. The adjoints a trace ends with are therefore those of
:meth:`jittape.Tape.gradient` (bit for bit, unless the tape was compiled into a kernel of its
own by :meth:`jittape.Tape.compile`, whose fused loops may round differently). A step costs a
sweep over the records below it: a trace is quadratic in the tape's length, fine for the
small functions it is meant for.
"""

import contextlib
import re
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .ops import OPS, codes, operands
from .optable import SELECT
from .sweeps import for_tape
from . import tiers

#: Values shown per array (then ``...``).
SHOWN = 3
#: Node colours: inputs, the output, constants, collapsed loops.
COLOURS = {"input": "#cfe2ff", "output": "#ffd6a5", "const": "#eeeeee", "loop": "#fff3b0"}
#: Trace steps on tapes longer than this wait for compiled sweeps (an interpreted step
#: sweeps every record below it in CPython).
_INTERPRET_RECORDS = 256
_SIMPLE = re.compile(r"^[\w.]+(\([\w., ]*\))?$")  # no parentheses needed around it


# --- values and records as text -----------------------------------------------------------
def short(v):
    """A value as short text: ``%.4g`` for a scalar, ``[a, b, c, ...]`` for an array."""
    v = np.asarray(v, dtype=np.float64)
    if v.ndim == 0:
        return f"{float(v):.4g}"
    flat = v.ravel()
    body = ", ".join(f"{x:.4g}" for x in flat[:SHOWN])
    return f"[{body}{', ...' if flat.size > SHOWN else ''}]"


def _slot(t, buf, i):
    """Record ``i``'s part of a value, adjoint or tangent buffer: float or array (a copy)."""
    v = buf[t.off[i]:t.off[i + 1]]
    return float(v[0]) if i not in t.shapes else v.reshape(t.shapes[i]).copy()


def input_names(t):
    """``{record id: "x"}`` (``"x0"``, ``"x1"``, ... for several inputs)."""
    return {i: "x" if len(t.inputs) == 1 else f"x{j}" for j, i in enumerate(t.inputs)}


def operation(t, i):
    """Record ``i`` as an expression of its operands: ``mul(v2, v3)``, ``v0[2:4]``."""
    op, size = OPS[int(t.op[i])], int(t.off[i + 1] - t.off[i])
    if op.kind == "leaf":
        return input_names(t).get(i, op.name)
    if op.fusion == "slice":
        a, k = int(t.a[i]), int(t.k[i])
        return f"v{a}[{k}]" if i not in t.shapes and size == 1 else f"v{a}[{k}:{k + size}]"
    args = [f"v{j}" for j in operands(t, i)]
    if op.uses_c:
        args.append(f"{t.c[i]:g}")
    if op.kind == SELECT:  # where(cond, x, y): the condition is the third operand
        args.insert(0, args.pop())
    return f"{op.name}({', '.join(args)})"


def full(v):
    """A value as text: in full up to 12 elements (5 significant digits), else :func:`short`."""
    v = np.asarray(v, dtype=np.float64)
    if v.ndim == 0 or v.size > 12:
        return short(v)
    return np.array2string(v, separator=", ", formatter={"float_kind": "{:.5g}".format})


def _added(j, c):
    """``v0[2:4] += [1, -2]``: a contribution, narrowed to the span of its nonzero elements
    (flat indices for arrays of several dimensions)."""
    c = np.asarray(c)
    flat = c.ravel()
    nz = np.flatnonzero(flat)
    if c.ndim == 0 or nz.size == 0 or (nz[0] == 0 and nz[-1] == flat.size - 1):
        return f"v{j} += {short(c)}"
    lo, hi = int(nz[0]), int(nz[-1]) + 1
    where = f"[{lo}]" if hi == lo + 1 else f"[{lo}:{hi}]"
    part = flat[lo] if hi == lo + 1 else flat[lo:hi]
    return f"v{j}{'.flat' if c.ndim > 1 else ''}{where} += {short(part)}"


def _output_name(tape):
    return f"v{tape.out_id}" if tape.out_id >= 0 else "(a constant: no record)"


def _table(head, rows):
    widths = [max(len(r[j]) for r in [head] + rows) for j in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
                     for r in [head] + rows)


# --- the point and the seed ---------------------------------------------------------------
def _values(tape, xs):
    """The value buffer at ``xs`` (a forward sweep), or the recorded values if ``xs`` is empty."""
    if not xs:
        return tape.arrays.val.copy()
    return tape._forward(tape._flat(tuple(xs))).copy()


def _seed(tape, cotangent):
    """The output's adjoint seed as a flat array; ``None``: 1 for a scalar output."""
    if cotangent is None:
        tape._require_scalar()
        cotangent = np.ones(tape.out_shape)
    seed = np.asarray(cotangent, dtype=np.float64)
    if seed.shape != tape.out_shape:
        raise ValueError(f"cotangent shape {seed.shape} differs from the output shape "
                         f"{tape.out_shape}")
    return seed.ravel()


def _masked(t):
    """The opcode column with every record but the leaves made an INPUT (no branch runs)."""
    mask = t.op.copy()
    mask[np.isin(mask, [op.code for op in OPS if op.kind != "leaf"])] = codes.INPUT
    return mask


def _foreground(t):
    """Long tapes: compiled sweeps only (an interpreted step is a Python loop over records)."""
    return tiers.foreground() if t.n_records > _INTERPRET_RECORDS else contextlib.nullcontext()


# --- traces -------------------------------------------------------------------------------
class AdjointStep(NamedTuple):
    """One record's adjoint update: ``adjoint`` (its own, flowing in; float or array of the
    record's shape) times its rule gives ``contributions``, ``((operand id, value), ...)``
    added to each distinct operand's adjoint (operand's shape)."""

    record: int
    op: str
    operation: str
    rule: str
    adjoint: object
    contributions: tuple


class TangentStep(NamedTuple):
    """One record's tangent: ``tangents``, ``((operand id, tangent), ...)`` flowing in
    (operand's shape), and ``tangent`` out (the record's shape)."""

    record: int
    op: str
    operation: str
    rule: str
    tangents: tuple
    tangent: object


class Trace:
    """A traced sweep: a sequence of steps, printed as a table.

    Iterate or index it for the steps (:class:`AdjointStep` of :func:`trace_gradient`,
    :class:`TangentStep` of :func:`trace_jvp`); ``str()`` gives the table. ``value`` is the
    output value; ``result`` what the sweep computes: the input adjoints (the gradient, in
    the structure :meth:`jittape.Tape.gradient` returns) or the output's tangent (as
    :meth:`jittape.Tape.jvp` returns it), also as ``gradient`` or ``tangent``.
    """

    def __init__(self, kind, steps, value, result, header, footer):
        self.kind, self.steps, self.value, self.result = kind, list(steps), value, result
        self._header, self._footer = header, footer

    @property
    def gradient(self):
        if self.kind != "reverse":
            raise AttributeError("a tangent trace has .tangent, not .gradient")
        return self.result

    @property
    def tangent(self):
        if self.kind != "tangent":
            raise AttributeError("a reverse trace has .gradient, not .tangent")
        return self.result

    def __iter__(self):
        return iter(self.steps)

    def __getitem__(self, n):
        return self.steps[n]

    def __len__(self):
        return len(self.steps)

    def __str__(self):
        if self.kind == "reverse":
            head = ("record", "operation", "rule (op table)", "adjoint in", "flows out")
            rows = [(f"v{s.record}", s.operation, s.rule, short(s.adjoint),
                     "; ".join(_added(j, c) for j, c in s.contributions))
                    for s in self.steps]
        else:
            head = ("record", "operation", "rule (op table)", "tangents in",
                    "tangent out")
            rows = [(f"v{s.record}", s.operation, s.rule,
                     "; ".join(f"v{j}: {short(d)}" for j, d in s.tangents), short(s.tangent))
                    for s in self.steps]
        return "\n".join([self._header, _table(head, rows), self._footer])

    def __repr__(self):
        return f"<jittape trace of the {self.kind} sweep: {len(self.steps)} steps>"


def _differentiated(t, i):
    """The distinct operands of record ``i`` that a derivative flows to (not a select's
    condition, nor an argument that must be a constant)."""
    op, ids = OPS[int(t.op[i])], operands(t, i)
    if op.elementwise:
        ids = [j for j, p in zip(ids, op.partials) if p != "0.0"]
    return list(dict.fromkeys(ids))


def trace_gradient(tape, *xs, cotangent=None):
    """Run the reverse sweep one record at a time and return the steps as a :class:`Trace`.

    Each step is one record, from the output back to the inputs: its operation, its adjoint
    rule from the op table (as ``python -m jittape ops`` prints it: ``z`` is the record,
    ``x``, ``y`` its operands in order, ``zbar`` its adjoint), the adjoint flowing in and
    what it adds to each operand's adjoint. Records whose adjoint is zero run but are not
    listed (nothing flows). The steps run the tape's own compiled sweep, record by record.

    Parameters
    ----------
    tape : jittape.Tape
    *xs : the differentiated arguments, as :meth:`jittape.Tape.gradient` takes them (floats
        or float64 arrays of the recorded shapes); none: the recorded point.
    cotangent : float or array of the output's shape, optional
        The output's adjoint seed; default 1.0, for a scalar output.

    Returns
    -------
    Trace
        ``trace.gradient`` equals ``tape.gradient(*xs)`` (``tape.vjp(xs, cotangent)[1]``
        with a cotangent); ``trace.value`` is the output value.

    Raises
    ------
    NonScalarOutputError
        No ``cotangent`` for an output that is not a scalar.
    ValueError
        A ``cotangent`` or input of the wrong shape.
    GuardFailure
        The recorded control flow does not hold at ``xs``.
    """
    t = tape.arrays
    val = _values(tape, xs)
    seed = _seed(tape, cotangent)
    adj, scratch = np.zeros_like(val), np.zeros_like(val)
    steps = []
    if tape.out_id >= 0:
        adj[t.off[tape.out_id]:t.off[tape.out_id + 1]] = seed
        steps = _reverse_steps(t, tape.out_id, val, adj, scratch)
    names = input_names(t)
    header = (f"reverse sweep, output {_output_name(tape)} seeded with "
              f"{short(seed.reshape(tape.out_shape))} (z: the record; x, y: its operands in "
              f"order; zbar: its adjoint, d output / d z)")
    grads = tape._input_adjoints(adj)
    footer = "\n".join(f"gradient wrt {names[i]} (adjoint of v{i}): {full(_slot(t, adj, i))}"
                       for i in t.inputs)
    return Trace("reverse", steps, tape._output(val), grads, header, footer)


def _reverse_steps(t, last, val, adj, scratch):
    sw, mask, cols = for_tape(t), _masked(t), t.columns[1:]
    steps = []
    with _foreground(t):
        for i in range(last, -1, -1):
            op = OPS[int(t.op[i])]
            if op.kind == "leaf" or not op.differentiable:
                continue
            o, p = t.off[i], t.off[i + 1]
            ids = _differentiated(t, i)
            mask[i] = t.op[i]
            scratch[:] = 0.0  # the contributions alone, for the table
            scratch[o:p] = adj[o:p]
            sw.reverse_sweep(mask, *cols, val, scratch, i)
            sw.reverse_sweep(mask, *cols, val, adj, i)  # the accumulation itself
            mask[i] = codes.INPUT
            if np.any(adj[o:p] != 0.0):
                steps.append(AdjointStep(i, op.name, operation(t, i), op.rule, _slot(t, adj, i),
                                         tuple((j, _slot(t, scratch, j)) for j in ids)))
    return steps


def tangent_rule(op):
    """The tangent rule of ``op`` as text: for an elementwise op the generated
    ``zdot = xdot * (dz/dx) + ...`` from its partials, else its kernel's name and rule."""
    if not op.elementwise:
        return f"{op.tangent.__name__}: {op.rule}"
    terms = []
    for v, p in zip("xyq", op.partials):
        p = p.replace("math.", "").replace("np.", "")
        if p != "0.0":
            terms.append(f"{v}dot" if p == "1.0" else f"-{v}dot" if p == "-1.0" else
                         f"{v}dot * {p}" if _SIMPLE.match(p) else f"{v}dot * ({p})")
    return "zdot = " + " + ".join(terms)


def trace_jvp(tape, *xs, tangents):
    """Run the tangent sweep (forward mode) one record at a time; return a :class:`Trace`.

    Each step is one record, from the inputs to the output: its operation, its tangent rule
    (:func:`tangent_rule`: generated from the op table's partials, or the structured op's
    tangent kernel), the operands' tangents flowing in and the record's tangent. Records
    whose tangents in and out are all zero are not listed. The steps run the tape's own
    compiled tangent sweep, record by record.

    Parameters
    ----------
    tape : jittape.Tape
    *xs : the differentiated arguments, as :meth:`jittape.Tape.jvp` takes them; none: the
        recorded point.
    tangents : the input direction, as :meth:`jittape.Tape.jvp` takes it: one float or
        array per differentiated argument, of its shape (a tuple of them for several).

    Returns
    -------
    Trace
        ``trace.tangent`` equals ``tape.jvp(*xs, tangents=tangents)[1]`` (output's shape).

    Raises
    ------
    ValueError, TypeError
        Tangents of the wrong shape or number.
    GuardFailure
        The recorded control flow does not hold at ``xs``.
    NotDifferentiableError
        A record's derivative is undefined at this point (as :meth:`jittape.Tape.jvp`).
    """
    from . import jacobians
    t = tape.arrays
    val = _values(tape, xs)
    tan = tape._flat((tangents,) if tape.single else tuple(tangents))
    dot = jacobians.tangent_buffer(tape, tan)
    steps = _tangent_steps(t, tape.out_id, val, dot) if tape.out_id >= 0 else []
    if tape.out_id >= 0:
        jacobians.check_undefined(tape, dot, slice(t.off[tape.out_id],
                                                   t.off[tape.out_id + 1]))
    out = jacobians.output_of(tape, dot)
    header = ("tangent sweep, inputs seeded with the tangents (z: the record; x, y: its "
              "operands in order; zdot, xdot, ydot: their tangents)")
    footer = f"tangent of the output {_output_name(tape)}: {full(out)}"
    return Trace("tangent", steps, tape._output(val), out, header, footer)


def _tangent_steps(t, last, val, dot):
    sw, mask, cols = for_tape(t), _masked(t), t.columns[1:]
    steps = []
    with _foreground(t):
        for i in range(last + 1):
            op = OPS[int(t.op[i])]
            if op.kind == "leaf" or not op.differentiable:
                continue
            mask[i] = t.op[i]
            sw.tangent_sweep(mask[:i + 1], *cols, val, dot)  # records 0..i, all but i leaves
            mask[i] = codes.INPUT
            ins = tuple((j, _slot(t, dot, j)) for j in _differentiated(t, i))
            out = _slot(t, dot, i)
            if np.any(np.asarray(out) != 0.0) or any(np.any(np.asarray(d) != 0) for _, d in ins):
                steps.append(TangentStep(i, op.name, operation(t, i), tangent_rule(op), ins, out))
    return steps


# --- Graphviz -----------------------------------------------------------------------------
def _quote(text):
    """A DOT string literal (lines joined with DOT's ``\\n``)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _value_text(v, shape=True):
    """A node's value: ``%.4g``, or (the shape,) the first values and the range of an array."""
    v = np.asarray(v, dtype=np.float64)
    if v.ndim == 0:
        return short(v)
    text = f"{v.shape} {short(v)}" if shape else short(v)
    return text + (f"\nmin {v.min():.4g}, max {v.max():.4g}" if v.size > SHOWN else "")


class Loop:
    """Adjacent repetitions of one loop body, drawn as one node: records ``start`` to
    ``stop - 1``, ``reps`` repetitions of a ``length``-record body in ``runs`` runs (a
    nested loop's inner runs, with the few records between them)."""

    def __init__(self, seg):
        self.start, self.stop, self.length = seg.start, seg.stop, seg.length
        self.reps, self.runs, self.body = seg.reps, 1, seg.body

    @property
    def between(self):
        """Records inside the loop's span that are not repetitions of its body."""
        return self.stop - self.start - self.reps * self.length


def loops(t):
    """The :class:`Loop` s of tape arrays ``t``: the segments that the tape compiler's
    rerolling search finds (:func:`jittape.reroll.find_segments`, scalar records only), with
    the runs of one body that fewer records than the body separate merged into one."""
    from .reroll import find_segments
    segments, _ = find_segments(t, np.diff(t.off).astype(np.int64))
    out = []
    for seg in segments:
        last = out[-1] if out else None
        if last is not None and last.body == seg.body and seg.start - last.stop <= seg.length:
            last.stop, last.reps, last.runs = seg.stop, last.reps + seg.reps, last.runs + 1
        else:
            out.append(Loop(seg))
    return [lp for lp in out if lp.reps > 1]


def _loop_label(t, lp):
    ops = [OPS[int(t.op[i])].name for i in range(lp.start, lp.start + lp.length)]
    lines = [f"loop body of {lp.length} records x {lp.reps} repetitions",
             f"records v{lp.start} to v{lp.stop - 1}" + (
                 f" ({lp.runs} runs, {lp.between} records between them)" if lp.runs > 1
                 else "")]
    lines += [", ".join(ops[n:n + 6]) for n in range(0, len(ops), 6)]
    return lines


def _record_label(t, i, val, adj):
    op = OPS[int(t.op[i])]
    head = f"v{i} {operation(t, i)}" if op.kind == "leaf" else f"v{i} = {operation(t, i)}"
    lines = [head, _value_text(_slot(t, val, i))]
    if adj is not None:
        lines.append("adj " + _value_text(_slot(t, adj, i), shape=False))
    return lines


def _node_attrs(t, i, out):
    code = int(t.op[i])
    attrs = {}
    if code == codes.INPUT:
        attrs = {"shape": "invhouse", "fillcolor": COLOURS["input"]}
    elif code == codes.CONST:
        attrs = {"fillcolor": COLOURS["const"], "fontcolor": "#555555"}
    if i == out:
        attrs.update(fillcolor=COLOURS["output"], peripheries="2")
    return attrs


def _attr_text(label, attrs):
    items = [f"label={_quote(label)}"] + [f"{k}={_quote(v)}" for k, v in attrs.items()]
    return "[" + ", ".join(items) + "]"


def to_dot(tape, *xs, adjoints=False, cotangent=None, max_nodes=200):
    """The tape as Graphviz DOT text: one node per record, edges from its operands.

    A node shows the record id, its operation (``v4 = mul(v2, v3)``), its value (``%.4g``
    for a scalar; shape, first values, min and max for an array) and, with adjoints, its
    adjoint after a reverse sweep (d output / d record). Inputs are ``invhouse`` shapes filled
    blue; the output has a double border, filled orange; constants are grey. Edges into an
    elementwise record of several operands are labelled with the operand's name (``x``,
    ``y``, ``q``), in the op table's rules. A tape of more than ``max_nodes`` records draws
    each loop that a Python loop recorded (:func:`loops`) as one node with its body's ops and
    repetition count, and one edge per pair of nodes that any of its records connect.

    Parameters
    ----------
    tape : jittape.Tape
    *xs : the differentiated arguments (floats or float64 arrays of the recorded shapes) at
        which to show values and adjoints; none: the recorded point.
    adjoints : bool
        Show each record's adjoint (a reverse sweep seeded with 1.0; a scalar output).
    cotangent : float or array of the output's shape, optional
        Show adjoints seeded with it (any output shape); implies ``adjoints``.
    max_nodes : int
        Collapse loops when the tape has more records than this.

    Returns
    -------
    str
        DOT source (``digraph``); render it with :func:`render` or Graphviz's ``dot``.

    Raises
    ------
    NonScalarOutputError
        ``adjoints=True`` without a ``cotangent`` for an output that is not a scalar.
    ValueError
        A cotangent or input of the wrong shape. GuardFailure: the recorded control flow
        does not hold at ``xs``.
    """
    t = tape.arrays
    val = _values(tape, xs)
    adj = None
    if (adjoints or cotangent is not None) and tape.out_id >= 0:
        adj = tape._reverse(val, _seed(tape, cotangent)).copy()
    elif adjoints or cotangent is not None:
        _seed(tape, cotangent)  # the checks; the output does not depend on the inputs
        adj = np.zeros_like(val)
    found = loops(t) if t.n_records > max_nodes else []
    node = [f"v{i}" for i in range(t.n_records)]
    lines = ["digraph tape {", '  node [shape=box, style="rounded,filled", fillcolor=white, '
             'fontname="Helvetica", fontsize=10];', '  edge [fontsize=9, color="#555555"];',
             f"  label={_quote(_title(tape, found))}; labelloc=t; fontname=Helvetica;"]
    inside = set()
    for n, lp in enumerate(found):
        node[lp.start:lp.stop] = [f"loop{n}"] * (lp.stop - lp.start)
        inside.update(range(lp.start, lp.stop))
        attrs = {"shape": "box3d", "style": "filled", "fillcolor": COLOURS["loop"]}
        if lp.start <= tape.out_id < lp.stop:
            attrs.update(peripheries="2")
        last = _record_label(t, lp.stop - 1, val, adj)
        text = _loop_label(t, lp) + [f"last: {last[0]}"] + last[1:]
        lines.append(f"  loop{n} {_attr_text(chr(10).join(text), attrs)};")
    for i in range(t.n_records):
        if i not in inside:
            label = "\n".join(_record_label(t, i, val, adj))
            lines.append(f"  v{i} {_attr_text(label, _node_attrs(t, i, tape.out_id))};")
    lines += _edges(t, node)
    return "\n".join(lines + ["}"]) + "\n"


def _title(tape, found):
    t = tape.arrays
    text = f"tape of {t.n_records} records, output {_output_name(tape)}"
    if found:
        text += f"; {len(found)} loop(s) drawn as one node each"
    return text


def _edges(t, node):
    """Edge lines: each operand of each record (one per pair of nodes when collapsed)."""
    out, seen = [], set()
    for i in range(t.n_records):
        op = OPS[int(t.op[i])]
        ids = operands(t, i)
        for n, j in enumerate(ids):
            src, dst = node[j], node[i]
            if src == dst:
                continue
            collapsed = src.startswith("loop") or dst.startswith("loop")
            if collapsed and (src, dst) in seen:
                continue
            seen.add((src, dst))
            named = op.elementwise and len(ids) > 1 and not collapsed
            # (a select's condition is q, not one of its arguments)
            out.append(f"  {src} -> {dst}" + (f" [label={_quote((op.args + ('q',))[n])}]"
                                                if named else "") + ";")
    return out


def render(tape, path, format="svg", *, xs=(), **options):
    """Draw the tape with Graphviz into ``path``; return ``path`` as a :class:`~pathlib.Path`.

    ``format`` is any Graphviz output format (``svg``, ``png``, ``pdf``, ...); ``xs`` (a
    tuple of the differentiated arguments) and ``options`` (``adjoints``, ``cotangent``,
    ``max_nodes``) are those of :func:`to_dot`.

    Raises
    ------
    ImportError
        The ``graphviz`` Python package is missing (``pip install 'jittape[graph]'``).
    RuntimeError
        Graphviz's ``dot`` program is not installed (not on ``PATH``).
    ValueError
        An unknown format; and as :func:`to_dot`.
    """
    try:
        import graphviz
    except ImportError as e:
        raise ImportError(
            "Tape.render needs the graphviz Python package: pip install 'jittape[graph]' "
            "(and Graphviz's dot program: apt install graphviz, brew install graphviz or "
            "conda install graphviz). Tape.to_dot() needs neither.") from e
    text = to_dot(tape, *xs, **options)
    try:
        data = graphviz.Source(text).pipe(format=format)
    except graphviz.ExecutableNotFound as e:
        raise RuntimeError(
            "Tape.render needs Graphviz's dot program, which is not on PATH: install "
            "Graphviz (apt install graphviz, brew install graphviz or conda install "
            "graphviz), or write tape.to_dot() to a file and render it elsewhere.") from e
    path = Path(path)
    path.write_bytes(data)
    return path

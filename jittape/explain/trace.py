"""Show how a gradient is computed: traced sweeps (and, in :mod:`jittape.explain.dot`, Graphviz
graphs of a tape).

Teaching and debugging tools, bound as methods of :class:`jittape.Tape`:

* :func:`jittape.explain.dot.to_dot` / :func:`jittape.explain.dot.render`: the tape as a Graphviz
  graph, one node per record (op, shape, value, optionally adjoint), edges from operands.
  Runs of records that a Python loop recorded are found by the search of the tape
  compiler's rerolling (:func:`jittape.compiler.reroll.find_segments`) and drawn as one node with
  their repetition count.
* :func:`trace_gradient` / :func:`trace_jvp`: the reverse (tangent) sweep one record at a
  time, as a table: record, operation, its rule from the op table (what
  ``python -m jittape ops`` prints), what flows in and what flows out.

The traces do not re-derive anything: each step calls the tape's own compiled sweep
(:mod:`jittape.sweeps.opsets`) over that one record (a custom rule's record with its region,
:mod:`jittape.sweeps.regions`), so that exactly the branch the real sweep runs for that record does
its work, in the real sweep's order, on the same buffer. The adjoints a trace ends with are
therefore those of :meth:`jittape.Tape.gradient` (bit for bit, unless the tape was compiled
into a kernel of its own by :meth:`jittape.Tape.compile`, whose fused loops may round
differently). A step costs one call of the compiled sweep.
"""

import contextlib
import re
from typing import NamedTuple

import numpy as np

from ..optable.table import OPS, call_arguments, in_regions, operands
from ..optable.entry import CALL, SELECT
from ..sweeps.regions import Run
from ..sweeps import tiers

#: Values shown per array (then ``...``).
SHOWN = 3
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


def slot_value(t, buf, i):
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
    if op.kind == CALL:  # a custom rule: the function's name and arguments
        return f"{op.name} {op.label(t, i)}({', '.join(f'v{j}' for j in call_arguments(t, i))})"
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


def output_name(tape):
    return f"v{tape.out_id}" if tape.out_id >= 0 else "(a constant: no record)"


def _table(head, rows):
    widths = [max(len(r[j]) for r in [head] + rows) for j in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
                     for r in [head] + rows)


# --- the point and the seed ---------------------------------------------------------------
def values_at(tape, xs):
    """The value buffer at ``xs`` (a forward sweep), or the recorded values if ``xs`` is empty."""
    if not xs:
        return tape.arrays.val.copy()
    return tape._forward(tape._flat(tuple(xs))).copy()


def output_seed(tape, cotangent):
    """The output's adjoint seed as a flat array; ``None``: 1 for a scalar output."""
    if cotangent is None:
        tape._require_scalar()
        cotangent = np.ones(tape.out_shape)
    seed = np.asarray(cotangent, dtype=np.float64)
    if seed.shape != tape.out_shape:
        raise ValueError(f"cotangent shape {seed.shape} differs from the output shape "
                         f"{tape.out_shape}")
    return seed.ravel()


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
    if op.kind == CALL:
        ids = call_arguments(t, i)
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
    val = values_at(tape, xs)
    seed = output_seed(tape, cotangent)
    adj, scratch = np.zeros_like(val), np.zeros_like(val)
    steps = []
    if tape.out_id >= 0:
        adj[t.off[tape.out_id]:t.off[tape.out_id + 1]] = seed
        steps = _reverse_steps(t, tape.out_id, val, adj, scratch)
    names = input_names(t)
    header = (f"reverse sweep, output {output_name(tape)} seeded with "
              f"{short(seed.reshape(tape.out_shape))} (z: the record; x, y: its operands in "
              f"order; zbar: its adjoint, d output / d z)")
    grads = tape._input_adjoints(adj)
    footer = "\n".join(f"gradient wrt {names[i]} (adjoint of v{i}): {full(slot_value(t, adj, i))}"
                       for i in t.inputs)
    return Trace("reverse", steps, tape._output(val), grads, header, footer)


def _reverse_steps(t, last, val, adj, scratch):
    run = Run(t)  # one record at a time: a custom rule's record with its region
    inner = in_regions(t)  # custom rules' records: their call's step runs them
    steps = []
    with _foreground(t):
        for i in range(last, -1, -1):
            op = OPS[int(t.op[i])]
            if op.kind == "leaf" or not op.differentiable or inner[i]:
                continue
            o, p = t.off[i], t.off[i + 1]
            ids = _differentiated(t, i)
            scratch[:] = 0.0  # the contributions alone, for the table
            scratch[o:p] = adj[o:p]
            run.reverse(val, scratch, i, i + 1)
            run.reverse(val, adj, i, i + 1)  # the accumulation itself
            if np.any(adj[o:p] != 0.0):
                steps.append(AdjointStep(i, op.name, operation(t, i), op.rule,
                                         slot_value(t, adj, i),
                                         tuple((j, slot_value(t, scratch, j)) for j in ids)))
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
        A record's derivative is undefined at this point (as :meth:`jittape.Tape.jvp`), or
        the tape holds a custom_vjp (no forward-mode rule).
    """
    from ..derivatives import jacobians
    t = tape.arrays
    jacobians.require_forward(t)
    val = values_at(tape, xs)
    tan = tape._flat((tangents,) if tape.single else tuple(tangents))
    dot = jacobians.tangent_buffer(tape, tan)
    steps = _tangent_steps(t, tape.out_id, val, dot) if tape.out_id >= 0 else []
    if tape.out_id >= 0:
        jacobians.check_undefined(tape, dot, slice(t.off[tape.out_id],
                                                   t.off[tape.out_id + 1]))
    out = jacobians.output_of(tape, dot)
    header = ("tangent sweep, inputs seeded with the tangents (z: the record; x, y: its "
              "operands in order; zdot, xdot, ydot: their tangents)")
    footer = f"tangent of the output {output_name(tape)}: {full(out)}"
    return Trace("tangent", steps, tape._output(val), out, header, footer)


def _tangent_steps(t, last, val, dot):
    run = Run(t)
    inner = in_regions(t)
    steps = []
    with _foreground(t):
        for i in range(last + 1):
            op = OPS[int(t.op[i])]
            if op.kind == "leaf" or not op.differentiable or inner[i]:
                continue
            run.tangent(val, dot, i, i + 1)
            ins = tuple((j, slot_value(t, dot, j)) for j in _differentiated(t, i))
            out = slot_value(t, dot, i)
            if np.any(np.asarray(out) != 0.0) or any(np.any(np.asarray(d) != 0) for _, d in ins):
                steps.append(TangentStep(i, op.name, operation(t, i), tangent_rule(op), ins, out))
    return steps

"""Graphviz graphs of a tape: :func:`to_dot` (DOT text) and :func:`render` (a file through
the ``graphviz`` package), bound as methods of :class:`jittape.Tape`.

One node per record (op, shape, value, optionally adjoint), edges from operands, inputs and
the output marked. Runs of records that a Python loop recorded are found by the search of
the tape compiler's rerolling (:func:`jittape.compiler.reroll.find_segments`) and drawn as one node
with their repetition count, so a 10 000-record loop tape draws as a few dozen nodes.
"""

from pathlib import Path

import numpy as np

from .trace import SHOWN, output_name, output_seed, slot_value, values_at, operation, short
from ..optable.table import OPS, codes, operands

#: Node colours: inputs, the output, constants, collapsed loops.
COLOURS = {"input": "#cfe2ff", "output": "#ffd6a5", "const": "#eeeeee", "loop": "#fff3b0"}


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
    rerolling search finds (:func:`jittape.compiler.reroll.find_segments`, scalar records only),
    with
    the runs of one body that fewer records than the body separate merged into one."""
    from ..compiler.reroll import find_segments
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
    lines = [head, _value_text(slot_value(t, val, i))]
    if adj is not None:
        lines.append("adj " + _value_text(slot_value(t, adj, i), shape=False))
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
    val = values_at(tape, xs)
    adj = None
    if (adjoints or cotangent is not None) and tape.out_id >= 0:
        adj = tape._reverse(val, output_seed(tape, cotangent)).copy()
    elif adjoints or cotangent is not None:
        output_seed(tape, cotangent)  # the checks; the output does not depend on the inputs
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
    text = f"tape of {t.n_records} records, output {output_name(tape)}"
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

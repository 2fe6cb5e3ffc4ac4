"""Jacobian-vector products and Jacobians of a recorded tape: tangent and reverse sweeps.

Forward mode (the tangent sweep) propagates one input direction ``v`` to ``J v`` in one pass
over the tape; reverse mode (the reverse sweep) propagates one output cotangent ``u`` to
``u^T J``. A full Jacobian of ``f: R^n -> R^m`` therefore costs ``n`` tangent sweeps or ``m``
reverse sweeps, and the cheaper side wins (Griewank & Walther, "Evaluating Derivatives",
2nd ed., SIAM 2008, sec. 3.1-3.3). These functions work on a :class:`jittape.Tape` whose
values ``val`` have been computed (recorded or replayed).
"""

import numpy as np

from .._base.errors import NotDifferentiableError
from .._base.values import real_float64
from ..optable.table import OPS
from ..sweeps import regions


def require_forward(t):
    """Raise if tape arrays ``t`` hold a record of an op that the public forward mode
    refuses (``no_forward`` in its entry: a custom_vjp), naming the function it stands for."""
    codes = [op.code for op in OPS if op.no_forward]
    hit = np.flatnonzero(np.isin(t.op, codes)) if codes else ()
    if len(hit):
        op = OPS[int(t.op[hit[0]])]
        raise NotDifferentiableError(op.no_forward.format(
            name=op.label(t, int(hit[0])) if op.label else op.name))


def forward_mode(t):
    """Whether the public forward mode runs on tape arrays ``t`` (see :func:`require_forward`)."""
    try:
        require_forward(t)
    except NotDifferentiableError:
        return False
    return True


def tangent_buffer(tape, tangents):
    """A tangent buffer like ``val``, zero but for the inputs' tangents ``tangents`` (one
    array-like per INPUT record, in input order, each of that input's shape)."""
    t = tape.arrays
    if len(tangents) != len(t.inputs):
        raise TypeError(f"the tape has {len(t.inputs)} differentiated input(s), got "
                        f"{len(tangents)} tangent(s)")
    dot = np.zeros_like(t.val)
    for i, v in zip(t.inputs, tangents):
        v = real_float64(v, "a tangent")
        if v.shape != t.shape(i):
            raise ValueError(f"tangent shape {v.shape} differs from its input's shape "
                             f"{t.shape(i)}")
        dot[t.off[i]:t.off[i + 1]] = v.ravel()
    return dot


def output_of(tape, buf):
    """The output record's part of a value or tangent buffer, in the output's shape."""
    if tape.out_id < 0:  # the output does not depend on the inputs: zero tangent
        return 0.0 if tape.out_shape == () else np.zeros(tape.out_shape)
    t = tape.arrays
    v = buf[t.off[tape.out_id]:t.off[tape.out_id + 1]]
    return float(v[0]) if tape.out_shape == () else v.reshape(tape.out_shape).copy()


def check_undefined(tape, dot, out):
    """Raise if the tangents ``dot[out]`` are nan because a record's derivative is undefined
    there (an op entry's ``undefined``: its tangent kernel writes nan); legitimate nans
    (``sqrt`` at 0) pass."""
    if not np.isnan(dot[out]).any():
        return
    t = tape.arrays
    for code in {op.code for op in OPS if op.undefined}:
        for i in np.flatnonzero(t.op == code):
            if np.isnan(dot[t.off[i]:t.off[i + 1]]).any():
                raise NotDifferentiableError(f"{OPS[code].undefined} (record {i})")


def jvp(tape, val, tangents):
    """``J(x) v`` for the input tangents ``tangents``, values ``val`` already computed."""
    require_forward(tape.arrays)
    dot = tangent_buffer(tape, tangents)
    if tape.out_id >= 0:
        t = tape.arrays
        regions.tangent(t, val, dot)
        check_undefined(tape, dot, slice(t.off[tape.out_id], t.off[tape.out_id + 1]))
    return output_of(tape, dot)


def _in_out_sizes(tape):
    t = tape.arrays
    return int(sum(np.prod(t.shape(i)) for i in t.inputs)), int(np.prod(tape.out_shape))


def choose_mode(tape, mode):
    """``"forward"`` or ``"reverse"``: ``"auto"`` picks forward when inputs are fewer (and
    the tape allows it: :func:`require_forward`)."""
    if mode not in ("auto", "forward", "reverse"):
        raise ValueError(f"mode must be 'auto', 'forward' or 'reverse', not {mode!r}")
    if mode == "forward":
        require_forward(tape.arrays)
    if mode != "auto":
        return mode
    if not forward_mode(tape.arrays):
        return "reverse"
    n, m = _in_out_sizes(tape)
    return "forward" if n < m else "reverse"


def jacobian_matrix(tape, val, mode="auto"):
    """The ``(m, n)`` Jacobian of the tape's flattened output w.r.t. all its inputs
    (concatenated in input order): ``n`` tangent sweeps or ``m`` reverse sweeps."""
    t = tape.arrays
    n, m = _in_out_sizes(tape)
    jac = np.zeros((m, n))
    if tape.out_id < 0:
        return jac
    spans = [(int(t.off[i]), int(t.off[i + 1])) for i in t.inputs]
    out = slice(int(t.off[tape.out_id]), int(t.off[tape.out_id + 1]))
    if choose_mode(tape, mode) == "forward":
        col = 0
        for lo, hi in spans:
            for e in range(lo, hi):
                dot = np.zeros_like(val)
                dot[e] = 1.0
                regions.tangent(t, val, dot)
                check_undefined(tape, dot, out)
                jac[:, col] = dot[out]
                col += 1
        return jac
    for r in range(m):
        adj = np.zeros_like(val)
        adj[out.start + r] = 1.0
        regions.reverse(t, val, adj, tape.out_id)
        jac[r] = np.concatenate([adj[lo:hi] for lo, hi in spans])
    return jac


def sparse_jacobian_matrix(tape, val, pattern, colors):
    """The ``(m, n)`` Jacobian as a ``scipy.sparse`` CSR float64 array with the nonzeros of
    ``pattern`` (:func:`jittape.derivatives.sparsity.jacobian_sparsity`), from one tangent sweep
    per color of ``colors`` (:func:`jittape.derivatives.coloring.color_columns`): the seed of a
    color is the sum of its columns' unit vectors, and entry ``(i, j)`` is row ``i`` of the
    sweep of ``j``'s color (Curtis, Powell & Reid 1974). Values ``val`` already computed. A tape
    that the forward mode refuses (a custom_vjp) takes the transposed way: one reverse sweep per
    color of the rows (:func:`_sparse_by_rows`)."""
    import scipy.sparse as sp
    t = tape.arrays
    n, m = _in_out_sizes(tape)
    if tape.out_id < 0 or pattern.nnz == 0:
        return sp.csr_array((m, n), dtype=np.float64)
    if not forward_mode(t):
        return _sparse_by_rows(tape, val, pattern)
    at = np.concatenate([np.arange(t.off[i], t.off[i + 1]) for i in t.inputs])
    out = slice(int(t.off[tape.out_id]), int(t.off[tape.out_id + 1]))
    ncolors = int(colors.max()) + 1
    compressed = np.empty((m, ncolors))
    dot = np.empty_like(val)  # one buffer: a fresh one per sweep costs page faults
    for c in range(ncolors):
        dot.fill(0.0)
        dot[at[colors == c]] = 1.0
        regions.tangent(t, val, dot)
        compressed[:, c] = dot[out]
    rows = np.repeat(np.arange(m), np.diff(pattern.indptr))
    data = compressed[rows, colors[pattern.indices]]
    return sp.csr_array((data, pattern.indices.copy(), pattern.indptr.copy()), shape=(m, n))


def _sparse_by_rows(tape, val, pattern):
    """:func:`sparse_jacobian_matrix` by reverse sweeps: the rows colored so that rows of one
    color share no column (a column coloring of the transposed pattern), each color's seed
    the sum of its rows' unit vectors, entry ``(i, j)`` the adjoint of input element ``j``
    in the sweep of ``i``'s color."""
    import scipy.sparse as sp
    from .coloring import color_columns
    t = tape.arrays
    n, m = _in_out_sizes(tape)
    colors = getattr(tape, "_jac_row_colors", None)
    if colors is None:
        colors = tape._jac_row_colors = color_columns(sp.csr_array(pattern.T))
    at = np.concatenate([np.arange(t.off[i], t.off[i + 1]) for i in t.inputs])
    o = int(t.off[tape.out_id])
    ncolors = int(colors.max()) + 1
    compressed = np.empty((ncolors, n))
    adj = np.empty_like(val)
    for c in range(ncolors):
        adj.fill(0.0)
        adj[o + np.flatnonzero(colors == c)] = 1.0
        regions.reverse(t, val, adj, tape.out_id)
        compressed[c] = adj[at]
    rows = np.repeat(np.arange(m), np.diff(pattern.indptr))
    data = compressed[colors[rows], pattern.indices]
    return sp.csr_array((data, pattern.indices.copy(), pattern.indptr.copy()), shape=(m, n))

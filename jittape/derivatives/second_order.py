"""Second order on a recorded tape: Hessian-vector products by forward over reverse, and
compressed (colored) Hessians.

The HVP ``H(x) v`` of a scalar ``f`` is the tangent, in direction ``v``, of its gradient:
the tangent sweep propagates ``v`` to every record's tangent, then one backward pass over
the tape (``hvp_sweep``, generated from the op table with the other sweeps) accumulates the
adjoints and, beside them, their tangents (Griewank & Walther, "Evaluating Derivatives",
2nd ed., sec. 5.2-5.4: second-order adjoints). Its cost is a small multiple of a gradient's,
independent of ``n``. An elementwise op's rule is derived from its partial derivatives
(:mod:`jittape.optable.symbolic`); a structured op gives its own (``Op.second``). A tape holding an
op with no second-order rule raises :class:`jittape.NotDifferentiableError` naming it.
"""

import numpy as np

from .._base.errors import NonScalarOutputError, NotDifferentiableError
from .._base.values import real_float64
from .jacobians import tangent_buffer
from ..optable.table import OPS
from ..sweeps import regions


def _require_scalar(tape):
    if tape.out_shape != () and np.prod(tape.out_shape) != 1:
        raise NonScalarOutputError(
            f"the Hessian of a function with output shape {tape.out_shape}: hessian and "
            f"hvp are for scalar functions; on a tape, pass weights= of the output's shape "
            f"for the Hessian of weights . f, or use jittape.jacobian of the gradient")


def _output_seed(tape, weights):
    """The output's adjoint seed: 1 for a scalar output (``weights`` None), else the flat
    ``weights`` (the Hessian is then that of ``weights . f``). Checked once per call."""
    if weights is None:
        _require_scalar(tape)
        return 1.0
    w = real_float64(weights, "weights")
    if w.shape != tuple(tape.out_shape):
        raise ValueError(f"weights have shape {w.shape}; the output's is {tape.out_shape}")
    return w.ravel()


def _second(tape, val, dot, adj, adjdot, seed):
    """One tangent sweep of ``dot`` (inputs' tangents set), then the second-order sweep
    from the output seeded with ``seed``: ``adj`` the gradient, ``adjdot`` the HVP
    (buffers zeroed here)."""
    t = tape.arrays
    regions.tangent(t, val, dot)
    adj.fill(0.0)
    adjdot.fill(0.0)
    adj[t.off[tape.out_id]:t.off[tape.out_id + 1]] = seed
    bad = regions.hvp(t, val, dot, adj, adjdot, tape.out_id)
    if bad >= 0:
        raise _no_rule(t, bad)


def tape_hvp(tape, val, tangents, weights=None):
    """``(gradient, H v)`` of a scalar-output tape (or of ``weights . f`` for an array
    output) at the values ``val`` (computed), for the input tangents ``tangents`` (one per
    input, each of its shape), in the structure of the tape's differentiated arguments."""
    seed = _output_seed(tape, weights)
    dot = tangent_buffer(tape, tangents)
    adj, adjdot = np.zeros_like(val), np.zeros_like(val)
    if tape.out_id >= 0:
        _second(tape, val, dot, adj, adjdot, seed)
    return tape._input_adjoints(adj), tape._input_adjoints(adjdot)


def compressed_hessian(tape, val, colors, weights=None):
    """``B = H S``, shape ``(n, ncolors)``: one HVP per color, the seed ``S[:, c]`` the sum of
    the unit vectors of the inputs' elements (flattened, concatenated) of color ``c``.
    ``colors = arange(n)`` gives the dense Hessian."""
    seed = _output_seed(tape, weights)
    t = tape.arrays
    at = np.concatenate([np.arange(t.off[i], t.off[i + 1]) for i in t.inputs])
    ncolors = int(colors.max()) + 1 if colors.size else 0
    b = np.zeros((at.size, ncolors))
    if tape.out_id < 0:
        return b
    dot, adj, adjdot = np.empty_like(val), np.empty_like(val), np.empty_like(val)
    for c in range(ncolors):
        dot.fill(0.0)
        dot[at[colors == c]] = 1.0
        _second(tape, val, dot, adj, adjdot, seed)
        b[:, c] = adjdot[at]
    return b


def sparse_hessian_matrix(tape, val, pattern, colors, recovery, weights=None):
    """The Hessian as a ``scipy.sparse`` CSR float64 array with the nonzeros of ``pattern``
    (:mod:`jittape.derivatives.hessian_sparsity`), from one HVP per color of the star coloring
    ``colors``, each entry read from the compressed Hessian where ``recovery`` (from
    :func:`jittape.derivatives.coloring.symmetric_recovery`) says (Coleman & More 1984)."""
    import scipy.sparse as sp
    b = compressed_hessian(tape, val, colors, weights)
    data = b[recovery[0], recovery[1]] if pattern.nnz else np.zeros(0)
    return sp.csr_array((data, pattern.indices.copy(), pattern.indptr.copy()),
                        shape=pattern.shape)


def _no_rule(t, i):
    op = OPS[int(t.op[i])]
    if op.no_second:
        return NotDifferentiableError(
            f"second-order derivatives (hvp, hessian) through record v{i}: "
            + op.no_second.format(name=op.label(t, i) if op.label else op.name))
    name = op.name
    missing = sorted({OPS[c].name for c in set(t.op.tolist())} & _WITHOUT_RULE())
    return NotDifferentiableError(
        f"second-order derivatives (hvp, hessian) are not available through {name!r} (record "
        f"v{i}): the op table has no second-order rule for {', '.join(missing) or name}. "
        f"Gradients and JVPs through it work; for second order, write the function with ops "
        f"that have one (`python -m jittape ops` lists them) or difference jittape.grad.")


def _WITHOUT_RULE():
    from ..sweeps.codegen import has_second_order
    return {op.name for op in OPS if not has_second_order(op)}

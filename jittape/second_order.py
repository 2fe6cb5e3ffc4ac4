"""Second order: Hessian-vector products by forward over reverse, and dense Hessians.

The HVP ``H(x) v`` of a scalar ``f`` is the tangent, in direction ``v``, of its gradient:
the tangent sweep propagates ``v`` to every record's tangent, then one backward pass over
the tape (``hvp_sweep``, generated from the op table with the other sweeps) accumulates the
adjoints and, beside them, their tangents (Griewank & Walther, "Evaluating Derivatives",
2nd ed., sec. 5.2-5.4: second-order adjoints). Its cost is a small multiple of a gradient's,
independent of ``n``. An elementwise op's rule is derived from its partial derivatives
(:mod:`jittape.symbolic`); a structured op gives its own (``Op.second``). A tape holding an
op with no second-order rule raises :class:`jittape.NotDifferentiableError` naming it.
"""

import numpy as np

from .errors import NotDifferentiableError
from .jacobians import tangent_buffer
from .ops import OPS
from .replay import record
from .sweeps import for_tape


def tape_hvp(tape, val, tangents):
    """``(gradient, H v)`` of a scalar-output tape at the values ``val`` (computed), for the
    input tangents ``tangents`` (one per input, each of its shape), in the structure of the
    tape's differentiated arguments."""
    tape._require_scalar()
    t = tape.arrays
    dot = tangent_buffer(tape, tangents)
    adj, adjdot = np.zeros_like(val), np.zeros_like(val)
    if tape.out_id >= 0:
        sw = for_tape(t)
        sw.tangent_sweep(*t.columns, val, dot)
        adj[t.off[tape.out_id]:t.off[tape.out_id + 1]] = 1.0
        bad = sw.hvp_sweep(*t.columns, val, dot, adj, adjdot, tape.out_id)
        if bad >= 0:
            raise _no_rule(t, bad)
    return tape._input_adjoints(adj), tape._input_adjoints(adjdot)


def _no_rule(t, i):
    name = OPS[int(t.op[i])].name
    missing = sorted({OPS[c].name for c in set(t.op.tolist())} & _WITHOUT_RULE())
    return NotDifferentiableError(
        f"second-order derivatives (hvp, hessian) are not available through {name!r} (record "
        f"v{i}): the op table has no second-order rule for {', '.join(missing) or name}. "
        f"Gradients and JVPs through it work; for second order, write the function with ops "
        f"that have one (`python -m jittape ops` lists them) or difference jittape.grad.")


def _WITHOUT_RULE():
    from .codegen import has_second_order
    return {op.name for op in OPS if not has_second_order(op)}


def hvp(f, argnums=0):
    """Return ``hvp_f(*args, v)``: the Hessian of scalar ``f`` times ``v``, without forming
    the Hessian (JAX's name; here ``v`` is the last positional argument).

    Records ``f`` at ``args`` once, then runs one tangent and one second-order sweep
    (forward over reverse). ``v`` has the structure and shapes of the differentiated
    argument(s) (a tuple of them for several ``argnums``); the result likewise, float64
    (float for a float argument).

    Raises
    ------
    NotDifferentiableError
        The tape holds an op with no second-order rule (the message names it).
    jittape.NonScalarOutputError
        ``f`` does not return a scalar.
    """
    def hvp_f(*args_and_v, **kwargs):
        *args, v = args_and_v
        tape = record(f, *args, argnums=argnums, **kwargs)
        tangents = tape._flat(v if isinstance(v, tuple) and not tape.single else (v,))
        return tape_hvp(tape, tape.arrays.val, tangents)[1]
    return hvp_f


def hessian(f, argnums=0):
    """Return ``hess_f(*args)``: the dense Hessian of scalar ``f`` w.r.t. one argument.

    ``n`` HVPs with the unit vectors over one recording (``n`` the argument's size); the
    result has shape ``x.shape + x.shape`` (a float for a float argument), float64, and is
    symmetric up to rounding.

    Raises
    ------
    NotDifferentiableError
        The tape holds an op with no second-order rule.
    TypeError
        ``argnums`` names more than one argument.
    """
    if not isinstance(argnums, int):
        raise TypeError("hessian(f, argnums) takes one argument index (an int)")

    def hess_f(*args, **kwargs):
        tape = record(f, *args, argnums=argnums, **kwargs)
        x = np.asarray(args[argnums], dtype=np.float64)
        rows = []
        for e in np.eye(x.size):
            rows.append(np.ravel(tape_hvp(tape, tape.arrays.val, [e.reshape(x.shape)])[1]))
        h = np.array(rows).reshape(x.shape + x.shape)
        return float(h) if np.ndim(args[argnums]) == 0 and h.ndim == 0 else h
    return hess_f

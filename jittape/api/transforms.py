"""Transforms of a function, JAX's names: :func:`jvp` (forward mode), :func:`vjp` (reverse
mode, a pullback) and :func:`jacobian`.

Each records ``f`` once at the given point and sweeps the tape
(:mod:`jittape.derivatives.jacobians`). A function returning a (nested) tuple, list or dict is
recorded with its leaves concatenated into one output; tangents and cotangents take the output's
structure.
"""

import numpy as np

from . import complex_args, nesting
from .recording import like_input
from ..numpy.object_arrays import to_active
from .tape import record, record_tape


def jvp(f, primals, tangents):
    """Forward-mode Jacobian-vector product, in JAX's convention.

    Parameters
    ----------
    f : callable
        ``f(*primals)`` returning a float or an array, or a (nested) tuple, list or dict of
        them.
    primals : tuple
        The point: one float or float array per argument of ``f``. Every primal is
        differentiated.
    tangents : tuple
        The direction: one tangent per primal, of the same shape (floats for float
        primals).

    Returns
    -------
    (out, tangent_out)
        ``f(*primals)`` and ``J(primals) @ tangents`` (one tangent sweep), both of the
        output's shape; for a structured output, both in its structure (JAX's convention),
        each leaf a float or a float64 array of its shape. Complex primals take complex
        tangents, and a complex output has a complex tangent (the R-linear map on real and
        imaginary parts, JAX's convention: :mod:`jittape.api.complex_args`).

    Raises
    ------
    TypeError
        ``primals`` and ``tangents`` are not tuples of the same length.
    ValueError
        A tangent's shape differs from its primal's.
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp(f, primals, tangents): primals and tangents must be tuples, "
                        "e.g. jvp(f, (x,), (v,))")
    if len(primals) != len(tangents):
        raise TypeError(f"jvp: {len(primals)} primal(s) but {len(tangents)} tangent(s)")
    if complex_args.any_complex(primals) or complex_args.any_complex(tangents):
        return complex_args.jvp(jvp, f, primals, tangents)
    return nesting.route((primals, tangents), lambda: (  # inside a recording: recorded there
        nesting.value(f, primals, {}),
        nesting.jvp_record(f, primals, {}, tuple(range(len(primals))), tangents)),
        lambda: _jvp(f, primals, tangents))


def _jvp(f, primals, tangents):
    g = complex_args.Realified(f, (), "pairs")  # a complex output: its real pair
    tape, leaves = _record_flat(g, primals)
    out, tan = tape.jvp(*primals, tangents=tuple(tangents), _val=tape.arrays.val)
    if g.complex_output:
        return g.value, complex_args.complex_value(tan)
    if not leaves:
        return out, tan
    rebuild, shapes = leaves
    return rebuild(_split(out, shapes)), rebuild(_split(tan, shapes))


def vjp(f, *primals):
    """Reverse-mode vector-Jacobian product, in JAX's convention: ``(out, pullback)``.

    Parameters
    ----------
    f : callable
        ``f(*primals)`` returning a float or an array, or a (nested) tuple, list or dict of
        them. Every primal is differentiated.

    Returns
    -------
    out
        ``f(*primals)`` (float64 leaves).
    pullback : callable
        ``pullback(cotangent)`` with ``cotangent`` of the output's shape and structure
        returns the tuple ``cotangent^T J``, one gradient per primal in its shape and
        floating dtype. With complex primals or output, JAX's convention: a complex
        cotangent ``c`` of a holomorphic ``f`` gives ``c f'(z)``
        (:mod:`jittape.api.complex_args`). Each call is one reverse sweep over the tape
        recorded here (Griewank & Walther, "Evaluating Derivatives", 2nd ed., sec. 3.2),
        so pulling back many cotangents costs one recording.

    Raises
    ------
    ValueError
        From ``pullback``: a cotangent whose shape or structure differs from the output's.
    """
    if complex_args.any_complex(primals):
        return complex_args.vjp(vjp, f, primals)
    nums = tuple(range(len(primals)))
    return nesting.route(primals, lambda: (  # inside a recording: pulled back there
        nesting.value(f, primals, {}),
        lambda w: tuple(nesting.vjp_record(f, primals, {}, nums, w))),
        lambda: _vjp(f, primals))


def _vjp(f, primals):
    g = complex_args.Realified(f, (), "pairs")  # a complex output: its real pair
    tape, leaves = _record_flat(g, primals)
    val = tape.arrays.val
    out = g.value if g.complex_output else tape._output(val)

    def pullback(cotangent):
        if g.complex_output:
            cotangent = complex_args.complex_cotangent(cotangent)
        elif complex_args.any_complex((cotangent,)):
            raise TypeError("vjp: a complex cotangent for a real output")
        if nesting.outer_tape(cotangent) is not None:  # an active cotangent: recorded there
            return tuple(nesting.vjp_record(f, primals, {}, tuple(range(len(primals))),
                                            cotangent))
        if leaves:
            parts = []
            _flatten_output(cotangent, parts)
            if [np.shape(p) for p in parts] != leaves[1]:
                raise ValueError(f"vjp: cotangent leaves of shapes {[np.shape(p) for p in parts]}"
                                 f" for output leaves of shapes {leaves[1]}")
            cotangent = np.concatenate([np.ravel(p) for p in parts]) if parts else np.zeros(0)
        grads = tape.vjp(primals, cotangent, _val=val)[1]
        return tuple(like_input(g, x) for g, x in zip(grads, primals))
    if leaves:
        out = leaves[0](_split(out, leaves[1]))
    return out, pullback


def _record_flat(f, primals):
    """``(tape, leaves)``: ``f`` recorded at ``primals`` (all differentiated) with a
    structured output's leaves concatenated; ``leaves`` is ``[rebuild, shapes]`` for such an
    output, else empty."""
    leaves = []

    def flat_f(*args):
        out = f(*args)
        if not isinstance(out, (tuple, list, dict)):
            return out
        parts = []
        leaves.append(_flatten_output(out, parts))
        leaves.append([np.shape(p) for p in parts])
        return np.concatenate([np.ravel(to_active(p)) for p in parts]) if parts else \
            np.zeros(0)
    return record_tape(flat_f, primals, {}, tuple(range(len(primals))), first_order=True), \
        leaves


def _flatten_output(out, parts):
    """Append the leaves of ``out`` (nested tuples, lists, dicts) to ``parts``; return a
    function rebuilding the structure from an iterator of leaves."""
    if isinstance(out, dict):
        keys = list(out)
        subs = [_flatten_output(out[k], parts) for k in keys]
        return lambda it: {k: sub(it) for k, sub in zip(keys, subs)}
    if isinstance(out, (tuple, list)):
        subs = [_flatten_output(o, parts) for o in out]
        kind = type(out)
        make = kind._make if hasattr(kind, "_fields") else kind  # namedtuples
        return lambda it: make([sub(it) for sub in subs])
    parts.append(out)
    return next


def _split(flat, shapes):
    """The consecutive pieces of the 1-D ``flat`` with ``shapes``, as an iterator (0-d ones
    as floats)."""
    flat, pieces, at = np.asarray(flat, dtype=np.float64).ravel(), [], 0
    for shape in shapes:
        n = int(np.prod(shape))
        piece = flat[at:at + n].reshape(shape)
        pieces.append(float(piece) if piece.ndim == 0 else piece)
        at += n
    return iter(pieces)


def jacobian(f, argnums=0, mode="auto", holomorphic=False):
    """Return ``J(*args)``: the Jacobian of an array-valued ``f`` w.r.t. one argument.

    Records ``f`` once, then runs one tangent sweep per input element (``mode="forward"``)
    or one reverse sweep per output element (``mode="reverse"``); ``"auto"`` picks forward
    mode when the inputs are fewer than the outputs. The result is a float64 ndarray of
    shape ``f(x).shape + x.shape``.

    Parameters
    ----------
    f : callable
        Returns a float or an array.
    argnums : int
        The positional argument to differentiate (a float or a float array).
    mode : {"auto", "forward", "reverse"}
    holomorphic : bool
        ``f`` is holomorphic in a complex argument with a complex output: the result is the
        complex ``f'(z)`` (JAX's convention). A real argument with a complex output gives the
        complex Jacobian ``d Re f/dx + i d Im f/dx`` without it.

    Raises
    ------
    ValueError
        ``mode`` is not one of ``"auto"``, ``"forward"``, ``"reverse"``.
    TypeError
        ``argnums`` selects several arguments, or a structured one; a complex argument
        without ``holomorphic=True``.
    """
    if mode not in ("auto", "forward", "reverse"):
        raise ValueError(f"mode must be 'auto', 'forward' or 'reverse', not {mode!r}")

    def jac_f(*args, **kwargs):
        if holomorphic or complex_args.differentiates_complex(args, argnums):
            return complex_args.jacobian(
                lambda g, a, kw: jacobian(g, argnums, mode)(*a, **kw), f, args, kwargs,
                argnums, mode, holomorphic)
        return nesting.route(args, lambda: nesting.jacobian(f, args, kwargs, argnums, mode),
                             lambda: _jacobian(f, args, kwargs, argnums, mode))
    return jac_f


def _jacobian(f, args, kwargs, argnums, mode):
    g = complex_args.Realified(f, (), "pairs")  # a complex output: its real pair
    tape = record_tape(g, args, kwargs, argnums, first_order=True)
    j = tape.jacobian(mode=mode, _val=tape.arrays.val)
    if g.complex_output:
        return complex_args.split_output_pair(j, np.ndim(args[argnums]))
    return j


def sparse_jacobian(f, argnums=0):
    """Return ``J(*args)``: the Jacobian of an array-valued ``f`` w.r.t. one argument as a
    ``scipy.sparse`` CSR float64 array of shape ``(f(x).size, x.size)`` (both flattened).

    Records ``f`` once at the given arguments, propagates the sparsity pattern over the
    tape, colors its columns and runs one tangent sweep per color
    (:meth:`jittape.Tape.sparse_jacobian`): a banded Jacobian costs a few sweeps, not
    ``x.size``. To evaluate at many points, record once (:func:`jittape.record`) and call
    the tape's ``sparse_jacobian``, which keeps the pattern and the coloring.

    Raises
    ------
    TypeError
        ``argnums`` selects several arguments, or a structured one.
    """
    def jac_f(*args, **kwargs):
        tape = record(f, *args, argnums=argnums, **kwargs)
        return tape.sparse_jacobian(_val=tape.arrays.val)
    return jac_f

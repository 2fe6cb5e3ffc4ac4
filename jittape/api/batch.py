"""Batched replays: a tape's value and gradient at many points in one native call.

``tape.value_and_gradient(xs, batch=True)`` takes the points stacked on a leading axis
(``(m, n)`` for a tape recorded at shape ``(n,)``; one such stack per differentiated
argument) and runs the tape's compiled kernel over all of them in one call of
``tape_batch`` (:data:`jittape.compiler.frame.BATCH`), without Python between points. With
``threads=k`` the rows are split into ``k`` chunks run at once on threads: the kernel
releases the GIL, and each chunk has buffers of its own. This is how a Python library gets
past a C++ tape's per-call rate: the per-call overhead is paid once per batch.

A tape the compiler refuses (regions, a non-scalar output, too long) is replayed point by
point with the interpreter instead: the same results, without the batch's speed.
"""

import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._base.errors import GuardFailure
from .._base.values import real_float64


def stacked(tape, xs):
    """``(m, X)``: the batch ``xs`` (per differentiated argument, its points stacked on a
    leading axis) as one C-contiguous ``(m, n_inputs)`` float64 array.

    Raises
    ------
    TypeError
        The wrong number of arguments.
    ValueError
        A structured tape (tuples, lists, dicts of arguments), or a stack whose shape is not
        ``(m,) + the argument's recorded shape`` with one ``m`` for all."""
    t = tape.arrays
    if tape.treedefs is not None:
        raise ValueError("batched replays take array arguments; this tape was recorded with "
                         "structured ones (tuples, lists, dicts)")
    if len(xs) != len(t.inputs):
        raise TypeError(f"the tape was recorded with {len(t.inputs)} differentiated "
                        f"argument(s), got {len(xs)} stacks")
    cols, m = [], None
    for j, (x, i) in enumerate(zip(xs, t.inputs)):
        a = real_float64(x, f"batch argument {j}")
        shape = t.shape(i)
        if a.ndim != len(shape) + 1 or a.shape[1:] != shape or m is not None and \
                a.shape[0] != m:
            want = f"(m,) + {shape}" if m is None else f"({m},) + {shape}"
            raise ValueError(f"batch argument {j} has shape {a.shape}; a batch of points "
                             f"of this tape stacks them on a leading axis: {want}")
        m = a.shape[0]
        cols.append(a.reshape(m, -1))
    return m, np.ascontiguousarray(np.concatenate(cols, axis=1) if len(cols) > 1 else cols[0])


def _compiled(tape):
    """``(tape_batch, val0, nadj, pool)`` of the tape's compiled kernel (compiled now if it
    was not yet), or None if the compiler refuses the tape."""
    if tape._kernel is None:
        try:
            tape.compile()
        except ValueError:
            return None
    kernel = tape._kernel
    module = sys.modules[kernel[0].py_func.__module__]
    return module.tape_batch, kernel[1], kernel[3], kernel[2]


def run(tape, xs, want_grad, threads=1):
    """``(values (m,), gradients (m, n_inputs) or None)`` at the ``m`` points of ``xs``.

    Raises
    ------
    GuardFailure
        At the first point where a guard fails (its index in the message).
    """
    values, grads, bad = run_rows(tape, *stacked(tape, xs), want_grad, threads)
    failed = np.flatnonzero(bad >= 0)
    if failed.size:
        p = int(failed[0])
        raise GuardFailure(f"guard at record {int(bad[p])} failed at point {p} of the batch: "
                           f"the control flow recorded differs there; record the function "
                           f"again there", int(bad[p]))
    return values, (grads if want_grad else None)


def run_rows(tape, m, X, want_grad, threads=1):
    """``(values, gradients, bad)`` at the rows of ``X`` (:func:`stacked`); ``bad[p]`` is the
    failed guard's record at row ``p`` or -1 (rows where it failed hold garbage)."""
    values, bad = np.empty(m), np.full(m, -1, dtype=np.int64)
    grads = np.empty((m, X.shape[1])) if want_grad else np.empty((0, 0))
    compiled = _compiled(tape) if tape.out_shape == () and tape.out_id >= 0 else None
    if compiled is None:
        _interpreted(tape, X, want_grad, values, grads, bad)
    else:
        fn, val0, nadj, pool = compiled
        k = max(1, min(int(threads or 1), m))
        bounds = np.linspace(0, m, k + 1).astype(int)

        def chunk(c):
            lo, hi = bounds[c], bounds[c + 1]
            g = grads[lo:hi] if want_grad else grads
            fn(val0, nadj, pool, X[lo:hi], want_grad, values[lo:hi], g, bad[lo:hi])
        if k == 1:
            chunk(0)
        else:
            with ThreadPoolExecutor(k) as pool_:
                list(pool_.map(chunk, range(k)))
    return values, grads, bad


def _interpreted(tape, X, want_grad, values, grads, bad):
    """Point by point with the interpreter (a tape the compiler refuses)."""
    t = tape.arrays
    sizes = [int(t.off[i + 1] - t.off[i]) for i in t.inputs]
    cuts = np.cumsum(sizes)[:-1]
    for p in range(X.shape[0]):
        args = [np.reshape(a, t.shape(i)) if t.shape(i) else float(a[0])
                for a, i in zip(np.split(X[p], cuts), t.inputs)]
        try:
            if want_grad:
                v, g = tape.value_and_gradient(*args)
                values[p] = v
                gs = (g,) if tape.single else g
                grads[p] = np.concatenate([np.ravel(e) for e in gs])
            else:
                values[p] = tape.value(*args)
        except GuardFailure as e:
            bad[p] = e.record


def unstack(tape, grads, m):
    """Per differentiated argument, its gradients stacked: ``(m,) + its shape``."""
    t = tape.arrays
    out, at = [], 0
    for i in t.inputs:
        size = int(t.off[i + 1] - t.off[i])
        out.append(grads[:, at:at + size].reshape((m,) + t.shape(i)))
        at += size
    return out[0] if tape.single else tuple(out)


def jvp(tape, xs, tangents, threads=1):
    """``(values (m,), J v (m,))`` at a stack of points along a stack of tangents (shaped as
    the points). For a scalar output, ``J v = <grad f, v>``: one batched native reverse sweep
    (:func:`run`, the compiled kernel) and a dot product per row, equal to the tangent
    sweep's to rounding. Other tapes: :func:`pointwise`.

    Raises
    ------
    GuardFailure
        As :func:`run`.
    ValueError
        Stacks of the wrong shapes (:func:`stacked`)."""
    if tape.out_shape != () or tape.out_id < 0 or _compiled(tape) is None:
        return pointwise(tape, "jvp", "tangents", xs, tangents)
    m, _ = stacked(tape, xs)
    m_v, V = stacked(tape, (tangents,) if tape.single else tuple(tangents))
    if m_v != m:
        raise ValueError(f"batched jvp: {m} points but {m_v} tangents")
    values, grads = run(tape, xs, True, threads)
    return values, np.einsum("ij,ij->i", grads, V)


def pointwise(tape, method, name, xs, directions, **kwargs):
    """``tape.<method>`` (``jvp`` or ``hvp``) at each of a stack of points along the matching
    stack of directions (keyword ``name``), results stacked on a leading axis: a loop over
    the points (no batched tangent or second-order sweep). Raises as :func:`stacked` for bad
    stacks."""
    m, _ = stacked(tape, xs)
    dirs = (directions,) if tape.single else tuple(directions)
    if len(dirs) != len(xs) or any(np.shape(d) != np.shape(x) for d, x in zip(dirs, xs)):
        raise ValueError(f"batched {method}: the directions must be stacked as the points "
                         f"are, shapes {[np.shape(x) for x in xs]}")
    outs = []
    for p in range(m):
        d = dirs[0][p] if tape.single else tuple(e[p] for e in dirs)
        outs.append(getattr(tape, method)(*(x[p] for x in xs), **{name: d}, **kwargs))
    return _stack(outs)


def _stack(outs):
    """Per-point results (floats, arrays, tuples of them) stacked on a leading axis."""
    first = outs[0]
    if isinstance(first, tuple):
        return tuple(_stack([o[k] for o in outs]) for k in range(len(first)))
    return np.stack([np.asarray(o, dtype=np.float64) for o in outs])

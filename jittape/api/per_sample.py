"""Per-sample gradients: :func:`batch_value_and_grad` records a function once and replays
it at a stack of points in one native call (:mod:`jittape.api.batch`), as JAX's
``vmap(value_and_grad(f), in_axes)`` evaluates it."""

import numpy as np

from .batch import run_rows, stacked, unstack
from .recording import normalize_argnums
from .tape import record


def batch_value_and_grad(f, argnums=0, in_axes=0, threads=1):
    """``g(*args) -> (values (m,), gradients)``: ``f``'s value and gradient at each of ``m``
    points, by one recording and one batched replay (:func:`run_rows`), as JAX's
    ``vmap(value_and_grad(f, argnums), in_axes)``. Per-sample gradients of a loss::

        values, grads = jittape.batch_value_and_grad(loss, 0, (None, 0, 0))(w, X, y)
        # grads[i] is the gradient of loss(w, X[i], y[i]) with respect to w

    ``in_axes``: per positional argument, 0 (its points stacked on a leading axis, ``m``
    the same for all) or None (shared by every point); one int or None for all. Gradients
    come stacked on a leading axis, one per point, for a shared argument too (as
    ``vmap``'s do); a tuple of them when ``argnums`` is a tuple.

    ``f`` is recorded at the first point and replayed at the others; where a guard fails
    it is recorded again there (as :func:`jittape.taped` does) and the remaining points
    replay on that tape. Raises ValueError for a bad ``in_axes`` or mismatched stacks,
    and what :func:`jittape.grad` raises."""
    def g(*args):
        axes = list(in_axes) if isinstance(in_axes, (tuple, list)) else [in_axes] * len(args)
        if len(axes) != len(args) or any(a not in (0, None) for a in axes) or 0 not in axes:
            raise ValueError(f"in_axes {in_axes!r}: one 0 (stacked) or None (shared) per "
                             f"argument, at least one 0, for {len(args)} argument(s)")
        sizes = {len(a) for a, ax in zip(args, axes) if ax == 0}
        if len(sizes) != 1:
            raise ValueError(f"the stacked arguments have different lengths {sorted(sizes)}")
        m = sizes.pop()
        single, nums = normalize_argnums(argnums, len(args))
        inputs = sorted(set(nums) | {i for i, ax in enumerate(axes) if ax == 0})
        stacks = [np.asarray(args[i], dtype=np.float64) if axes[i] == 0 else
                  np.broadcast_to(np.asarray(args[i], dtype=np.float64),
                                  (m,) + np.shape(args[i])) for i in inputs]
        values, grads, todo = np.empty(m), None, np.arange(m)
        while todo.size:
            p = int(todo[0])
            point = [a[p] if ax == 0 else a for a, ax in zip(args, axes)]
            tape = record(f, *point, argnums=tuple(inputs))
            v, gr, bad = run_rows(tape, *stacked(tape, [s[todo] for s in stacks]), True,
                                  threads)
            ok = bad < 0
            ok[0] = True  # (recorded there: its guards hold)
            values[todo[ok]] = v[ok]
            grads = np.empty((m, gr.shape[1])) if grads is None else grads
            grads[todo[ok]] = gr[ok]
            todo = todo[~ok]
        per_input = unstack(tape, grads, m)  # (a tuple: recorded with a tuple argnums)
        out = tuple(per_input[inputs.index(n)] for n in nums)
        return values, (out[0] if single else out)
    return g


def batch_grad(f, argnums=0, in_axes=0, threads=1):
    """The gradients of :func:`batch_value_and_grad` alone (per-sample gradients)."""
    vg = batch_value_and_grad(f, argnums, in_axes, threads)
    return lambda *args: vg(*args)[1]

"""Public API of eager differentiation: grad, value_and_grad, jacobian, primal, stop_gradient.

Replay of recorded tapes is in :mod:`jittape.replay`.
"""

import functools
import numbers

import numpy as np

from . import sweeps as K
from .active import Active, _new
from .errors import NonScalarOutputError, NotDifferentiableError
from .tape import Recorder


def _as_input(x, argnum):
    """An argument to differentiate: float for scalars, a float64 ndarray copy otherwise."""
    if isinstance(x, Active):
        raise NotDifferentiableError(
            "nested differentiation (grad of grad) is not supported yet")
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"argument {argnum} is a bool: it has no derivative")
    if isinstance(x, numbers.Real) and np.ndim(x) == 0:
        return float(x)
    if np.iscomplexobj(x):
        raise TypeError(f"argument {argnum} is complex; jittape differentiates real "
                        f"float64 values only")
    try:
        arr = np.array(x, dtype=np.float64)  # copy: the user's array is never written to
    except (TypeError, ValueError) as e:
        raise TypeError(
            f"argument {argnum} must be a float or an array of real numbers to be "
            f"differentiated, got {type(x).__name__}: {e}") from None
    return float(arr) if arr.ndim == 0 else arr


def _normalize_argnums(argnums, nargs):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    for n in nums:
        if not -nargs <= n < nargs:
            raise ValueError(f"argnums={argnums} but the function was called with "
                             f"{nargs} positional argument(s)")
    return single, tuple(n % nargs for n in nums)


def _record(f, args, kwargs, argnums, vector_output=False):
    """Run ``f`` on active inputs; return (recorder, output active or constant, single,
    nums). With ``vector_output`` the output may be an array (for Jacobians)."""
    single, nums = _normalize_argnums(argnums, len(args))
    rec = Recorder()
    args = list(args)
    for n in nums:
        x = _as_input(args[n], n)
        a = _new(Active, rec, K.INPUT, -1, -1, 0, 0.0, x)
        rec.inputs.append(a._i)
        args[n] = a
    out = f(*args, **kwargs)
    if vector_output:
        if not isinstance(out, Active):
            out = np.asarray(out, dtype=np.float64)
        return rec, out, single, nums
    return rec, _check_output(out, f), single, nums


def _check_output(out, f):
    name = getattr(f, "__name__", "f")
    if isinstance(out, Active):
        if np.shape(out._v) != ():
            raise NonScalarOutputError(
                f"{name} must return a scalar to be differentiated by grad, but it returned "
                f"an active array of shape {np.shape(out._v)}. Reduce it (e.g. np.sum) or "
                f"differentiate one element.")
        return out
    if isinstance(out, numbers.Real) or (isinstance(out, np.ndarray) and out.shape == ()):
        return float(out)  # does not depend on the inputs: the gradient is zero
    shape = getattr(out, "shape", None)
    raise NonScalarOutputError(
        f"{name} must return a scalar (float or 0-d array) to be differentiated by grad, "
        f"got {type(out).__name__}" + (f" of shape {shape}" if shape is not None else "") + ".")


def value_and_grad(f, argnums=0):
    """Return ``g(*args) -> (f(*args), gradient)`` by reverse-mode AD on a Wengert tape.

    Parameters
    ----------
    f : callable
        Plain NumPy code returning a scalar (float or 0-d array).
    argnums : int or tuple of int
        Positional argument(s) to differentiate. Each must be a real float or array-like
        (integers are converted to float64); the others are passed through as constants.

    Returns
    -------
    callable
        ``(value, gradient)``: ``value`` a float; ``gradient`` a float (scalar argument) or a
        float64 ndarray of the argument's shape, or a tuple of those when ``argnums`` is a
        tuple. Plugs into ``scipy.optimize.minimize(fun, x0, jac=True)``.

    Raises
    ------
    NonScalarOutputError
        ``f`` returned something other than a scalar.
    NotDifferentiableError
        ``f`` applied a function that has no derivative rule (the message names it).
    ActiveConversionError
        ``f`` called ``float()``/``int()`` on an active value.

    Notes
    -----
    One forward pass records every operation on active values; one reverse sweep applies the
    chain rule from the output back to the inputs (Griewank & Walther, "Evaluating
    Derivatives", 2nd ed., SIAM 2008, ch. 3 and 4).
    """
    @functools.wraps(f)
    def value_and_grad_f(*args, **kwargs):
        rec, out, single, nums = _record(f, args, kwargs, argnums)
        tape = rec.freeze()
        if isinstance(out, Active):
            adj = tape.reverse(out._i)
            value = float(out._v)
        else:
            adj, value = np.zeros_like(tape.val), out
        grads = []
        for i in tape.inputs:
            g = adj[tape.off[i]:tape.off[i + 1]]
            grads.append(float(g[0]) if i not in tape.shapes else g.reshape(tape.shapes[i]))
        return value, (grads[0] if single else tuple(grads))
    return value_and_grad_f


def grad(f, argnums=0):
    """Return ``g(*args) -> gradient of f``; see :func:`value_and_grad` (same arguments)."""
    vg = value_and_grad(f, argnums)

    @functools.wraps(f)
    def grad_f(*args, **kwargs):
        return vg(*args, **kwargs)[1]
    return grad_f


def primal(x):
    """The current primal value of ``x`` as a plain float or ndarray (a constant).

    No derivative flows through the result. While recording, the tape gets a GUARD on the
    value, so a replay at a point where it differs records the function again.
    Non-active ``x`` is returned unchanged.
    """
    if not isinstance(x, Active):
        return x
    from .active import guard
    guard(x)
    return x._v.copy() if isinstance(x._v, np.ndarray) else x._v


def stop_gradient(x):
    """``x`` with the same value but zero derivative (a STOPGRAD record; replays correctly)."""
    if not isinstance(x, Active):
        return x
    from .active import unary
    return unary(K.STOPGRAD, x)

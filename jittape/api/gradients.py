"""Eager gradients: :func:`grad`, :func:`value_and_grad` (record, then one reverse sweep),
:func:`primal` and :func:`stop_gradient`.

The recording itself is :mod:`jittape.api.recording`; replay of recorded tapes,
:mod:`jittape.api.tape`.
"""

import functools

import numpy as np

from . import complex_args, nesting
from .recording import like_input, normalize_argnums, pack_grads, record_call
from ..numpy import dispatch
from ..numpy.active import Active, guard, unary
from ..optable.table import codes as K
from ..sweeps import regions


def value_and_grad(f, argnums=0, holomorphic=False):
    """Return ``g(*args) -> (f(*args), gradient)`` by reverse-mode AD on a Wengert tape.

    Parameters
    ----------
    f : callable
        Plain NumPy code returning a scalar (float or 0-d array).
    argnums : int or tuple of int
        Positional argument(s) to differentiate; the others are passed through as constants.
        Each is a real float or array (integers are converted to float64), or a structure:
        a tuple, list or dict, nested, of such leaves. In a structure every float leaf
        (float, float ndarray) is differentiated, while integer, boolean and None leaves
        (also integer/bool ndarrays) are constants that reach ``f`` unchanged. A complex
        argument (complex number or complex128 array) is differentiated with JAX's
        convention: the gradient is ``df/dx - i df/dy`` for ``z = x + iy``
        (:mod:`jittape.api.complex_args`).
    holomorphic : bool
        ``f`` is holomorphic with complex arguments and a complex output: the result is
        ``f'(z)`` (JAX's ``holomorphic=True``). Without it, a complex output raises.

    Returns
    -------
    callable
        ``(value, gradient)``: ``value`` a float; ``gradient`` a float (scalar argument) or a
        float64 ndarray of the argument's shape, or a tuple of those when ``argnums`` is a
        tuple. Plugs into ``scipy.optimize.minimize(fun, x0, jac=True)``. The gradient with
        respect to a structure has the same structure (same tuple/list/dict types and keys),
        with ``None`` at its constant leaves.

    Raises
    ------
    NonScalarOutputError
        ``f`` returned something other than a scalar.
    NotDifferentiableError
        ``f`` applied a function that has no derivative rule (the message names it).
    ActiveConversionError
        ``f`` called ``float()``/``int()`` on an active value.
    TypeError
        A complex output without ``holomorphic=True`` (or ``holomorphic=True`` with a real
        argument or output), or a structure has a leaf of another type
        (the message gives its path, e.g. ``params['w'][1]``), or a structure's leaves are
        all integers or booleans (nothing to differentiate; ``[1, 2]`` rather than
        ``[1.0, 2.0]`` is the usual cause).

    Notes
    -----
    One forward pass records every operation on active values; one reverse sweep applies the
    chain rule from the output back to the inputs (Griewank & Walther, "Evaluating
    Derivatives", 2nd ed., SIAM 2008, ch. 3 and 4).
    """
    @functools.wraps(f)
    def value_and_grad_f(*args, **kwargs):
        if holomorphic or complex_args.differentiates_complex(args, argnums):
            return _complex(f, args, kwargs, argnums, holomorphic)
        return nesting.route(args, lambda: nesting.gradients(f, args, kwargs, argnums, True),
                             lambda: _value_and_grad(f, args, kwargs, argnums))
    return value_and_grad_f


def _complex(f, args, kwargs, argnums, holomorphic):
    """value_and_grad with complex arguments or output (:mod:`jittape.api.complex_args`)."""
    single, nums = normalize_argnums(argnums, len(args))
    return complex_args.value_and_grad(
        lambda g, a, kw: value_and_grad(g, argnums)(*a, **kw), f, args, kwargs, single, nums,
        holomorphic)


def _value_and_grad(f, args, kwargs, argnums):
    """One recording of ``f`` and one reverse sweep (the eager path)."""
    rec, out, single, nums, treedefs = record_call(f, args, kwargs, argnums, first_order=True)
    tape = rec.freeze()
    if isinstance(out, Active):
        adj = regions.adjoints(tape, out._i)
        value = float(out._v)
    else:
        adj, value = np.zeros_like(tape.val), out
    grads = []
    for i in tape.inputs:
        g = adj[tape.off[i]:tape.off[i + 1]]
        grads.append(float(g[0]) if i not in tape.shapes else g.reshape(tape.shapes[i]))
    if treedefs is None:  # plain arguments: each gradient in its argument's form
        grads = [like_input(g, args[n]) for g, n in zip(grads, nums)]
    return value, pack_grads(treedefs, single, grads)


def grad(f, argnums=0, holomorphic=False):
    """Return ``g(*args) -> gradient of f``; see :func:`value_and_grad` (same arguments)."""

    @functools.wraps(f)
    def grad_f(*args, **kwargs):
        if holomorphic or complex_args.differentiates_complex(args, argnums):
            return _complex(f, args, kwargs, argnums, holomorphic)[1]
        return nesting.route(args, lambda: nesting.gradients(f, args, kwargs, argnums, False)[1],
                             lambda: _value_and_grad(f, args, kwargs, argnums)[1])
    return grad_f


def primal(x):
    """The current primal value of ``x`` as a plain float or ndarray (a constant).

    No derivative flows through the result. While recording, the tape gets a GUARD on the
    value, so a replay at a point where it differs records the function again.
    Non-active ``x`` is returned unchanged (a preallocated array, ``np.zeros(n)`` made
    inside a recorded function, as its value: a plain array).
    """
    if type(x) in dispatch.PROXIES:
        x = dispatch.PROXIES[type(x)](x)
    if not isinstance(x, Active):
        return x
    guard(x)
    return x._v.copy() if isinstance(x._v, np.ndarray) else x._v


def stop_gradient(x):
    """``x`` with the same value but zero derivative (a STOPGRAD record; replays correctly)."""
    if not isinstance(x, Active):
        return x
    return unary(K.STOPGRAD, x)

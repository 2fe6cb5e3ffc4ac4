"""Forward-mode transforms of a function: :func:`jvp` and :func:`jacobian` (JAX's names).

Both record ``f`` once at the given point and sweep the tape (:mod:`jittape.jacobians`).
"""

from .replay import record


def jvp(f, primals, tangents):
    """Forward-mode Jacobian-vector product, in JAX's convention.

    Parameters
    ----------
    f : callable
        ``f(*primals)`` returning a float or an array.
    primals, tangents : tuple
        The point and a direction: one tangent per primal, of the same shape (floats for
        float primals). Every primal is differentiated.

    Returns
    -------
    (out, tangent_out)
        ``f(*primals)`` and ``J(primals) @ tangents`` (one tangent sweep), both of the
        output's shape.

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
    tape = record(f, *primals, argnums=tuple(range(len(primals))))
    return tape.jvp(*primals, tangents=tuple(tangents), _val=tape.arrays.val)


def jacobian(f, argnums=0, mode="auto"):
    """Return ``J(*args)``: the Jacobian of an array-valued ``f`` w.r.t. one argument.

    Records ``f`` once, then runs one tangent sweep per input element (``mode="forward"``)
    or one reverse sweep per output element (``mode="reverse"``); ``"auto"`` picks forward
    mode when the inputs are fewer than the outputs. The result has shape
    ``f(x).shape + x.shape``.

    Raises
    ------
    ValueError
        ``mode`` is not one of ``"auto"``, ``"forward"``, ``"reverse"``.
    """
    if mode not in ("auto", "forward", "reverse"):
        raise ValueError(f"mode must be 'auto', 'forward' or 'reverse', not {mode!r}")

    def jac_f(*args, **kwargs):
        tape = record(f, *args, argnums=argnums, **kwargs)
        return tape.jacobian(mode=mode, _val=tape.arrays.val)
    return jac_f

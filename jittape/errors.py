"""Exceptions jittape raises. Each message says what was wrong and what to do instead."""


class JittapeError(Exception):
    """Base class of jittape's own errors."""


class NotDifferentiableError(JittapeError, TypeError):
    """A NumPy function, ufunc or Python operation on an active value has no derivative rule.

    Raised instead of falling through to NumPy, which would silently drop the derivative.
    """


class ActiveConversionError(JittapeError, TypeError):
    """``float(x)``, ``int(x)``, ``x.item()`` or ``np.asarray(x)`` on an active value.

    The result would be a plain number with no derivative. Use :func:`jittape.primal` for the
    current value as a constant, or keep computing with ``x``.
    """


class NonScalarOutputError(JittapeError, ValueError):
    """The function given to :func:`jittape.grad` returned something that is not a scalar."""


class GuardFailure(JittapeError):
    """A replayed tape's guard failed: the recorded control flow differs at the new point.

    ``record`` is the id of the GUARD record whose check failed. High-level wrappers catch this
    and record the function again; :class:`jittape.Tape` methods raise it.
    """

    def __init__(self, message, record=-1):
        super().__init__(message)
        self.record = record


class TapeFormatError(JittapeError, ValueError):
    """A file given to :func:`jittape.load` is not a valid jittape tape."""


def check_ufunc_call(ufunc, method, kwargs):
    """Refuse ufunc methods (reduce, at, ...) and keywords that jittape does not record."""
    name = f"numpy.{ufunc.__name__}"
    if method != "__call__":
        raise NotDifferentiableError(
            f"{name}.{method} on active values is not supported; use the equivalent "
            f"function (e.g. np.sum for np.add.reduce).")
    if kwargs.get("out") is not None:
        raise NotDifferentiableError(
            f"{name}(..., out=...) on active values: in-place output is not recorded; "
            f"assign the result instead (y = {ufunc.__name__}(...)).")
    extra = {k: v for k, v in kwargs.items() if k != "out" and v is not None}
    if extra:
        raise NotDifferentiableError(
            f"{name} with keyword(s) {sorted(extra)} on active values is not supported.")

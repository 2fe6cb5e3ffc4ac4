"""Exceptions jittape raises. Each message says what was wrong and what to do instead."""

import re


class JittapeError(Exception):
    """Base class of jittape's own errors."""


class NotDifferentiableError(JittapeError, TypeError):
    """A NumPy function, ufunc or Python operation on an active value has no derivative rule.

    Raised instead of falling through to NumPy, which would silently drop the derivative.
    """


class MixedRecordings(NotDifferentiableError):
    """Active values of two recordings met in one operation. Inside a recorded function,
    jittape's derivative functions catch it and record the call there (nested
    differentiation: a derivative of a function that reads values of the outer recording)."""


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


class TieWarning(UserWarning):
    """An active value equalled what it was compared with (``k == 0`` true), so the code
    may have taken a branch defined at that one point, whose derivative need not be the
    function's (:mod:`jittape.numpy.ties`)."""


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


def clearer(e):
    """jittape's error to raise instead of the error ``e`` NumPy raised while a function
    was recorded, when NumPy's message hides the cause; None otherwise.

    * ``g[i] = x[0]`` into a float array: NumPy replaces the ActiveConversionError of
      ``float()`` by "setting an array element with a sequence" (an active value has
      ``__getitem__``, so NumPy takes it for a sequence), keeping ours as the cause.
    * A ufunc without an object loop (SciPy's, ``np.isnan``), or an object loop meeting a
      plain number (``np.sin(np.array([x[0], 1.0]))``), given an object array holding active
      values: NumPy asks no ``__array_ufunc__`` of the array's elements, so jittape never
      sees the call.
    * A compiled routine that converts its callback's result with ``float()`` and does not
      check for errors (``scipy.optimize.brentq``): Python reports a ``SystemError``
      ("returned a result with an exception set") caused by ours.
    """
    cause = e.__cause__
    if isinstance(e, ValueError) and isinstance(cause, ActiveConversionError):
        return ActiveConversionError(*cause.args)
    if isinstance(e, SystemError) and isinstance(cause, ActiveConversionError):
        return ActiveConversionError(
            f"a compiled routine (SciPy's or NumPy's C or Fortran code) called a function "
            f"that returned an active value and converted it to a float: {cause.args[0]} "
            f"For a root or an optimum found by such a routine, give it a derivative with "
            f"jittape.custom_vjp (the implicit function theorem), or pass "
            f"jittape.primal(...) values to it.")
    if _ACTIVE_NAMED.search(str(e)) and not isinstance(e, JittapeError):
        return NotDifferentiableError(_needs_ndarray(e))
    msg = str(e) if isinstance(e, TypeError) else ""
    if msg.startswith("An argument has dtype `dtype('O')`"):  # SciPy's array-API check
        return NotDifferentiableError(
            f"{_scipy_function(e)} (SciPy) was given an object array ({msg}): inside a "
            f"recording, an array built from active values with np.array([...]). Build it "
            f"with np.stack / np.concatenate of the actives (or np.zeros(n) filled by item "
            f"assignment), which gives an active array.")
    m = _NO_LOOP.match(msg) or _NO_METHOD.match(msg)
    if m is None:
        return None
    return NotDifferentiableError(
        f"ufunc {m.group(1)} was given an object array ({msg}). Inside a recording this is "
        f"usually an array built from active values with np.array([...]) / np.asarray "
        f"(an object array of actives), which this ufunc cannot loop over: NumPy does not "
        f"ask the elements, so jittape never sees the call. Build the array with np.stack "
        f"/ np.concatenate of the actives (or np.zeros_like(x) filled by item assignment), "
        f"which gives an active array that every ufunc takes.")


def _where(frame, lineno):
    code = frame.f_code
    module = frame.f_globals.get("__name__", "?")
    name = getattr(code, "co_qualname", code.co_name)
    name = name if name.startswith(module + ".") else f"{module}.{name}"
    return f"{name} ({code.co_filename}, line {lineno})"


def _needs_ndarray(e):
    """The message for an active value that reached code needing a plain ndarray: the
    library function called (the outermost frame of ``e``'s traceback in an installed
    package) and the innermost frame, which failed (Cython functions have frames too)."""
    entries = []
    tb = e.__traceback__
    while tb is not None:
        entries.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    if not entries:
        return f"A function was given an active array where it needs a plain one ({e})."
    outer = next((_where(f, n) for f, n in entries if "-packages" in f.f_code.co_filename
                  and not f.f_globals.get("__name__", "").startswith(("jittape", "numpy"))),
                 None)
    inner = _where(*entries[-1])
    compiled = not entries[-1][0].f_code.co_filename.endswith(".py")
    what = ("compiled code (Cython/C), which jittape cannot record" if compiled else
            "code that reads ndarray internals or tests isinstance(x, np.ndarray), which "
            "jittape cannot record")
    return (
        f"{outer + ' cannot be differentiated: ' if outer and outer != inner else ''}"
        f"{inner} was given an active array where it needs a plain NumPy array "
        f"({type(e).__name__}: {e}): {what}. jittape has no derivative rule for it. Give "
        f"the library call a rule (jittape.custom_vjp), or pass jittape.primal(x) to it for "
        f"no derivative through it.")


def _scipy_function(e):
    """The outermost public SciPy function in ``e``'s traceback, as ``module.qualname``."""
    tb = e.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        module = frame.f_globals.get("__name__", "")
        if module.startswith("scipy.") and not module.startswith("scipy._lib"):
            code = frame.f_code
            return f"{module}.{getattr(code, 'co_qualname', code.co_name)}"
        tb = tb.tb_next
    return "a SciPy function"


_ACTIVE_NAMED = re.compile(r"'(Active|Predicate|Element)' object|\b(got|not|type) "
                           r"'?(Active|Predicate|Element)\b")
_NO_LOOP = re.compile(r"ufunc '(\w+)' not supported for the input types")
_NO_METHOD = re.compile(r"loop of ufunc does not support argument \d+ of type \w+ which has "
                        r"no callable (\w+) method")

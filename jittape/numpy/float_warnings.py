"""NumPy's floating-point warnings raised while recording, reported at the caller's line.

While a function is recorded, jittape computes each primal with NumPy inside its own
functions, so NumPy's ``RuntimeWarning: overflow encountered in exp`` would name a line of
jittape, and Python's once-per-location filters would then show it once for the whole
program. During a recording, the error categories that NumPy would warn about (``np.geterr``
says ``"warn"``) are switched to NumPy's ``"log"`` mode, whose message (ufunc name included)
goes to :class:`_Relay`; it issues the same warning from the first frame outside jittape and
NumPy: the library's or the user's line (``warnings.warn`` with ``stacklevel``; Python 3.12's
``skip_file_prefixes`` does the same). Settings other than ``"warn"`` (``"ignore"``,
``"raise"``, ``np.errstate`` blocks) are left as they are. NumPy's error state is per thread.
"""

import sys
import warnings

import numpy as np

_INSIDE = ("jittape.", "numpy.")


class _Relay:
    """The ``np.seterrcall`` object of ``"log"`` mode: NumPy calls ``write(message)``."""

    def write(self, message):
        text = message.strip()
        warn_outside(text[len("Warning: "):] if text.startswith("Warning: ") else text,
                     RuntimeWarning)


def outside(frame, inside=_INSIDE):
    """``(the first frame from frame outwards whose module name starts with none of the
    prefixes inside, how many frames were passed)``; ``(None, n)`` if there is none."""
    passed = 0
    while frame is not None and frame.f_globals.get("__name__", "").startswith(inside):
        frame = frame.f_back
        passed += 1
    return frame, passed


def warn_outside(text, category):
    """``warnings.warn(text, category)`` at the first frame outside jittape and NumPy."""
    frame, passed = outside(sys._getframe(2))  # stacklevel 3: this function's caller's caller
    warnings.warn(text, category, stacklevel=3 + passed if frame is not None else 2)


_RELAY = _Relay()


def enter():
    """Relay this thread's warnings; returns what :func:`leave` restores (or None). One
    ``np.errstate`` (a third of the cost of ``seterr`` and ``seterrcall`` set and reset)."""
    state = np.geterr()
    if "warn" not in state.values():
        return None
    relay = np.errstate(call=_RELAY, **{k: "log" if v == "warn" else v
                                        for k, v in state.items()})
    relay.__enter__()
    return relay


def leave(relay):
    if relay is not None:
        relay.__exit__(None, None, None)

"""A warning where the control flow may follow an exact tie: ``k == 0`` true for an active k.

Library code often defines a function piecewise at single points: ``scipy.stats.kappa4``'s
density takes a limit formula where a shape is exactly 0, ``sin(x)/x`` code returns 1 where
``x == 0``. Differentiating the program differentiates the branch taken, and at such a point
that branch's formula need not vary with the compared value as the function does (kappa4's
``k == 0`` formula has no ``k`` in it: derivative 0 where the function's is not). jittape
cannot tell a limit formula from a genuine case split, so when an equality comparison of
an active value (``==``, ``!=``, ``np.equal``, ``np.not_equal``, in user or library code)
finds an exact tie it issues :class:`~jittape.TieWarning` at the comparing line (Python's
filters show it once per line). jittape's own rules compare internally without it.
"""

import sys

import numpy as np

from .float_warnings import outside, warn_outside
from .._base.errors import TieWarning


def checked(p, equal):
    """The comparison ``p`` (``==`` if ``equal``, else ``!=``; a user's or library's),
    after a warning if its value has a tie."""
    z = p._v
    if (np.any(z) if equal else not np.all(z)) and not _in_jittape():
        warn_outside(
            "an active value equals what it is compared with (== or != holds with a tie), "
            "so the code may take a branch defined at this point only: its derivative is "
            "that branch's, which can differ from the limit of the neighbouring branches "
            "(a formula for k == 0 that has no k in it gives 0). Check the derivative "
            "with central differences, or evaluate away from the tie.", TieWarning)
    return p


def _in_jittape():
    """Whether the comparison is jittape's own (its SciPy rules compare at a centre, ...):
    the first frame past the dispatch machinery of jittape.numpy is jittape's."""
    frame, _ = outside(sys._getframe(2), ("jittape.numpy.", "numpy."))
    return frame is not None and frame.f_globals.get("__name__", "").startswith("jittape.")

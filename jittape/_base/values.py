"""Values handed to a recorded tape: real float64 arrays, or a clear error."""

import numpy as np


def real_float64(x, what):
    """``x`` as a float64 ndarray (a view when it is one already).

    Raises
    ------
    TypeError
        ``x`` is complex (NumPy's conversion would drop the imaginary part with only a
        ``ComplexWarning``); ``what`` names it in the message."""
    if np.iscomplexobj(x):
        raise TypeError(f"{what} is complex; jittape's tapes take real float64 values only "
                        f"(pass x.real, or record the real and imaginary parts as two real "
                        f"arguments)")
    return np.asarray(x, dtype=np.float64)

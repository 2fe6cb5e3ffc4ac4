"""autograd.scipy.signal: its ``convolve`` is autograd's own (axes=, dot_axes=); the harness
maps the calls that have SciPy's meaning to ``scipy.signal.convolve``."""

import scipy.signal as _signal

from agsuite_checks import out_of_scope


def convolve(A, B, axes=None, dot_axes=((), ()), mode="full"):
    if axes is not None or any(len(d) for d in dot_axes):
        out_of_scope("autograd.scipy.signal.convolve with axes=/dot_axes= "
                     "(autograd's own signature, no SciPy equivalent)")
    return _signal.convolve(A, B, mode=mode)

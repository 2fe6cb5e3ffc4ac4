"""Non-inlined twins of the element rules of :mod:`jittape.sweeps`, for generated kernels.

The interpreter inlines its rules at Numba IR level (``inline="always"``), which is right for
a loop that is compiled once. Generated straight-line kernels call each rule many times, and
IR-level inlining there multiplies Numba's compile time (about 8x measured); plain calls are
inlined later by LLVM instead, at the same run-time speed. Same Python functions, so there
is still one definition of every rule.
"""

from numba import njit

from . import sweeps as _K

for _name in dir(_K):
    _obj = getattr(_K, _name)
    if _name.endswith(("_f", "_d")) and hasattr(_obj, "py_func"):
        globals()[_name] = njit(error_model="numpy")(_obj.py_func)
del _name, _obj

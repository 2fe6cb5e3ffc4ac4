"""One BLAS thread pool at work at a time.

NumPy's wheels and SciPy's each bundle an OpenBLAS. NumPy computes a recorded product's
primal with its own; the sweeps' products (and LAPACK calls) go to SciPy's, through Numba's
binding. Each pool keeps its threads spinning for a while after a call, so on a machine with
as many cores as threads the two pools take turns at starving each other. Measured on 2
cores: the eager gradient of ``sum(tanh(A @ W) @ W)`` (A 128 x 64, W 64 x 64) recorded in
4.1 ms and swept in 3.7 ms, against 0.29 ms and 0.10 ms with SciPy's pool at one thread.

So the first time the sweeps of an op set that calls BLAS or LAPACK are made, the BLAS
libraries other than NumPy's (found by threadpoolctl) are set to one thread. SciPy's own
``scipy.linalg`` calls then run single-threaded too; ``JITTAPE_BLAS_THREADS=keep`` leaves
the pools as they are.
"""

import os

_DONE = []
_USES = {}


#: What in a kernel's source reaches BLAS or LAPACK through Numba's NumPy support.
NUMPY_BLAS = ("np.linalg.", "np.dot(", " @ ")


def uses_blas(code):
    """Whether op ``code``'s kernels (or the helpers they call) call BLAS or LAPACK: by
    symbol (:data:`jittape.optable.externals.BY_SYMBOL`) or through Numba's ``np.linalg``,
    ``np.dot`` and ``@``."""
    if code not in _USES:
        import inspect
        from ..optable.externals import BY_SYMBOL
        from ..optable.table import OPS
        from .helper_source import HELPERS, names_used
        op, seen, found = OPS[code], set(), False
        todo = [f for f in (op.forward, op.tangent, op.reverse, op.second) if callable(f)]
        while todo and not found:
            f = todo.pop()
            found = any(s in inspect.getsource(f) for s in NUMPY_BLAS)
            for name in names_used(f):
                found = found or name in BY_SYMBOL
                if name in HELPERS and name not in seen and inspect.isfunction(HELPERS[name]):
                    seen.add(name)
                    todo.append(HELPERS[name])
        _USES[code] = found
    return _USES[code]


def one_pool(codes):
    """Set the non-NumPy BLAS pools to one thread (once per process) if an op of ``codes``
    calls BLAS or LAPACK."""
    if _DONE or not any(uses_blas(c) for c in codes):
        return
    _DONE.append(True)
    if os.environ.get("JITTAPE_BLAS_THREADS") == "keep":
        return
    import numpy as np
    import scipy.linalg.cython_blas  # noqa: F401  (SciPy's OpenBLAS, loaded to be found)
    from threadpoolctl import ThreadpoolController
    here = os.path.dirname(os.path.dirname(os.path.abspath(np.__file__)))
    for lib in ThreadpoolController().lib_controllers:
        path = os.path.abspath(lib.filepath or "")
        mine = os.path.relpath(path, here).split(os.sep)[0] in ("numpy", "numpy.libs")
        if lib.user_api == "blas" and not mine and lib.num_threads > 1:
            lib.set_num_threads(1)

"""The SciPy front end: SciPy functions on active values.

The SciPy front end: SciPy functions on active values that NumPy's dispatch does not reach.

``scipy.special``'s plain-Python functions (:mod:`.special`), ``scipy.stats`` densities
(:mod:`.stats`), ``scipy.signal``/``scipy.linalg`` compositions (:mod:`.composed`),
``scipy.linalg``'s Cholesky and LU factorizations and triangular solves
(:mod:`.factorizations`), ``scipy.spatial.distance``'s ``pdist``/``cdist``/``squareform``
(:mod:`.distance`) and ``scipy.linalg.expm`` (:mod:`.linalg`), each installed into SciPy's
module once SciPy is loaded.

May import only the layers below it (``_base``, ``optable``, ``tape``, ``sweeps``,
``compiler``, ``numpy``); tests/test_layers.py checks it.
"""

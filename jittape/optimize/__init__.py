"""SciPy optimizers and IPOPT fed exact derivatives.

Optimizers fed exact derivatives: :func:`jittape.minimize` and :func:`jittape.least_squares`
(:mod:`.minimize`), the derivatives each ``scipy.optimize`` method can use
(:mod:`.method_table`) and IPOPT through cyipopt (:mod:`.ipopt`).

May import only the layers below it (``_base``, ``optable``, ``tape``, ``sweeps``,
``compiler``, ``numpy``, ``scipy``, ``derivatives``, ``custom``, ``explain``, ``api``);
tests/test_layers.py checks it.
"""

"""Jacobians, HVPs, sparsity patterns and colorings of a tape.

Derivatives of a recorded tape beyond the gradient: Jacobians and JVPs (:mod:`.jacobians`),
Hessian-vector products and compressed Hessians (:mod:`.second_order`), Jacobian and
Hessian sparsity patterns (:mod:`.sparsity`, :mod:`.hessian_sparsity`) and the colorings
that compress them (:mod:`.coloring`).

May import only the layers below it (``_base``, ``optable``, ``tape``, ``sweeps``,
``compiler``, ``numpy``, ``scipy``); tests/test_layers.py checks it.
"""

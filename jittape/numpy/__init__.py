"""The NumPy front end: the active type and its handlers.

The NumPy front end: the active type and NumPy's API on active values, which record.

:mod:`.active` (the type, its records), :mod:`.operators`, :mod:`.ndarray_methods`,
:mod:`.conversion_methods`,
:mod:`.ufuncs`, the dispatch registries (:mod:`.dispatch`, filled by importing
:mod:`.all_handlers`), primal values while recording (:mod:`.primal_values`), and the
handlers by family: :mod:`.shaping` (shape primitives), :mod:`.shape_functions`,
:mod:`.views`, :mod:`.products`, :mod:`.reductions`, :mod:`.statistics`, :mod:`.linalg`,
:mod:`.decompositions`, :mod:`.numerics`, :mod:`.sequences`, :mod:`.builders`,
:mod:`.object_arrays`.

May import only the layers below it (``_base``, ``optable``, ``tape``, ``sweeps``,
``compiler``); tests/test_layers.py checks it.
"""

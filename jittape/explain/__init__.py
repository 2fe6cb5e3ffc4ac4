"""Traced sweeps, tape graphs and the op table docs page.

Show how a derivative is computed: traced sweeps (:mod:`.trace`), Graphviz graphs of a
tape (:mod:`.dot`) and the op table's docs page (:mod:`.ops_page`).

May import only the layers below it (``_base``, ``optable``, ``tape``, ``sweeps``,
``compiler``, ``numpy``, ``scipy``, ``derivatives``, ``custom``); tests/test_layers.py checks
it.
"""

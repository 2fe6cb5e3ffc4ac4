"""Custom derivative rules and checkpointing.

User-defined derivative rules: :func:`jittape.custom_vjp` and :func:`jittape.custom_jvp`
(:mod:`.custom_rules`), checkpointing (:mod:`.checkpoint`), and the recorded examples the op
table's generic checker runs for their ops (:mod:`.examples`).

May import only the layers below it (``_base``, ``optable``, ``tape``, ``sweeps``,
``compiler``, ``numpy``, ``scipy``, ``derivatives``); tests/test_layers.py checks it.
"""

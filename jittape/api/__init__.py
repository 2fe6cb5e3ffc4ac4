"""The public API: recording, grad, jvp/vjp, hessians, Tape, taped.

The public API: what ``import jittape`` exports for differentiating functions.

The recording core (:mod:`.recording`), eager gradients (:mod:`.gradients`: ``grad``,
``value_and_grad``, ``primal``, ``stop_gradient``), forward and reverse transforms
(:mod:`.transforms`: ``jvp``, ``vjp``, ``jacobian``), second order (:mod:`.hessians`),
recorded tapes (:mod:`.tape`: ``Tape``, ``record``, ``load``), replayed functions
(:mod:`.taped`: ``taped``) and the replay path between interpreter and compiled kernel
(:mod:`.fastpath`).

May import only the layers below it (``_base``, ``optable``, ``tape``, ``sweeps``,
``compiler``, ``numpy``, ``scipy``, ``derivatives``, ``custom``, ``explain``);
tests/test_layers.py checks it.
"""

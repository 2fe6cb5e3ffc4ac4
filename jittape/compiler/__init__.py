"""The tape compiler: a replayed tape turned into one straight-line Numba kernel.

The generator (:mod:`.kernel`), the kernel's buffers and fusion groups (:mod:`.layout`),
fused elementwise loops (:mod:`.fusion`), the row-summed adjoints of products
(:mod:`.products`), the LAPACK-calling linalg kernels that every kernel shares
(:mod:`.shared`), and rerolling: repeated record patterns of long scalar tapes found
(:mod:`.reroll`), laid out (:mod:`.reroll_emit`) and emitted as loops (:mod:`.loop_source`).

May import only the layers below it (``_base``, ``optable``, ``tape``, ``sweeps``);
tests/test_layers.py checks it.
"""

"""The sweeps: generated per op set, compiled, cached, tiered.

The sweeps a tape runs: generated from the op table for the ops it uses, compiled by Numba
on first need, cached on disk.

Source generation (:mod:`.codegen`, with the helpers' source: :mod:`.helper_source`), large
op sets split into parts (:mod:`.parts_source`, called at run time through
:mod:`.parts_runtime`), the disk cache of generated modules (:mod:`.disk_cache`), the op
sets' sweeps (:mod:`.opsets`), the interpreted tier while Numba compiles (:mod:`.tiers`),
whole sweeps over record ranges with the rules of region-owning records between them
(:mod:`.regions`) and ahead-of-time compilation (:mod:`.warmup`).

May import only the layers below it (``_base``, ``optable``, ``tape``); tests/test_layers.py
checks it.
"""

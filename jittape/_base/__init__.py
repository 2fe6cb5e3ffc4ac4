"""Foundations: errors, values, module lookup, checkpointing schedules.

Foundations with no jittape imports: the exceptions jittape raises (:mod:`.errors`), the
real float64 values tapes take (:mod:`.values`), the lazy lookup of already-imported modules
(:mod:`.imports`) and the binomial checkpointing schedules (:mod:`.revolve`).

The lowest layer: imports nothing of jittape.
"""

"""The op table: every op defined once, with its rules.

The op table: every op defined once, and what the rules are written with.

:mod:`.entry` (what an entry is: :class:`~jittape.optable.entry.Op`, its constructors and
kinds), :mod:`.registry` (the numbered entries and lookups), :mod:`.table` (every entry in
opcode order, registered on import), :mod:`.rules` (one module per op family), the
call-record pool layout (:mod:`.callpool`), symbolic partials (:mod:`.symbolic`), the scalar
helpers that rules call by name (:mod:`.scalar_math`, :mod:`.scalar_special`) and SciPy's C
kernels (:mod:`.externals`). The sweeps, the compiler, the front end and the docs are
generated from it; public name: :mod:`jittape.ops`.

May import only the layers below it (``_base``); tests/test_layers.py checks it.
"""

"""The Wengert tape as data: arrays and tape files.

The Wengert tape as data: the recorder and the frozen struct of arrays
(:mod:`.arrays`), and tapes saved to and read from files, validated (:mod:`.file`).

May import only the layers below it (``_base``, ``optable``); tests/test_layers.py checks it.
"""

"""jittape's benchmark suite: ``python -m benchmarks [--quick]`` (see :mod:`benchmarks.run`).

Nothing is imported here: the runner sets thread limits before NumPy loads.
"""

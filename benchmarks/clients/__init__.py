"""The clients suite: jittape on code that libraries wrote (scipy.stats, statsmodels,
scikit-learn, lmfit), each derivative checked against the library's analytic one or central
differences of the library's own function, and timed. ``python -m benchmarks.clients``
(:mod:`benchmarks.clients.__main__`); one module of cases per library (``lib_*.py``), the
check in :mod:`~benchmarks.clients.harness`, the worker processes in
:mod:`~benchmarks.clients.runner`, the tables in :mod:`~benchmarks.clients.report`.

The workers run jittape with its defaults (compiles in the background; the timings wait for
them first): ``benchmarks.common`` sets ``JITTAPE_BACKGROUND=0`` for the other benchmarks, so
the user's own setting is read here, before that module loads.
"""

import os

USER_BACKGROUND = os.environ.get("JITTAPE_BACKGROUND")

"""``python -m benchmarks``: the benchmark suite (see :mod:`benchmarks.run`)."""

import sys

from benchmarks.run import main  # sets the thread limits before NumPy is imported

sys.exit(main())

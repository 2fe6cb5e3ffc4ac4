"""Data-parallel gradients on a Dask cluster: ``sum over chunks of f(x, *chunk)``.

The data stay where Dask keeps them: :func:`value_and_grad` persists the Dask arrays on the
cluster and runs each chunk's task on the worker holding the chunk; only ``x`` goes out and
one value and one gradient per chunk come back, summed on the client in chunk order. Each
worker records a tape per chunk shape the first time and replays it afterwards (tapes, not
functions, stay on the workers). Dask does the scheduling and recomputes what a lost worker
held; a new worker records its tapes again.

Needs Dask distributed (``pip install jittape[dask]``); ``import jittape`` does not import it.

Modules: :mod:`jittape.dask.client` (what the client runs: the public functions below) and
:mod:`jittape.dask.tasks` (what the workers run).

The top layer but for the package root: may import every layer below it.
"""

from .client import (ChunkedValueAndGrad, get_client, map_starts, minimize, value_and_grad,
                     worker_stats)

__all__ = ["value_and_grad", "minimize", "map_starts", "get_client", "worker_stats",
           "ChunkedValueAndGrad"]

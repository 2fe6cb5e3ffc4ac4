"""What the client runs of :mod:`jittape.dask`: the public functions and their chunk plumbing.

The data stay where Dask keeps them: :func:`value_and_grad` persists the Dask arrays on the
cluster and runs each chunk's task on the worker holding the chunk; only ``x`` goes out and
one value and one gradient per chunk come back, summed on the client in chunk order. What
the workers run (the tape cache and the chunk tasks) is :mod:`jittape.dask.tasks`.
"""

import atexit
import itertools
import threading
import uuid
import weakref

import numpy as np

try:
    import distributed
except ImportError as e:  # the optional extra is missing
    raise ImportError(f"jittape.dask needs Dask distributed, which is not installed ({e}): "
                      f"pip install jittape[dask]") from e
import dask.array as da
from dask.base import tokenize
from dask.system import CPU_COUNT
from distributed import Client, LocalCluster, futures_of

from . import tasks

__all__ = ["value_and_grad", "minimize", "map_starts", "get_client", "worker_stats",
           "ChunkedValueAndGrad"]

_lock = threading.Lock()
_local = {}  # "cluster", "client": the LocalCluster started when no client is given
_by_address = {}  # scheduler address -> Client
_with_plugin = weakref.WeakSet()  # the clients whose cluster has the tape cache registered


# --- which cluster ----------------------------------------------------------------------
def get_client(client=None):
    """The :class:`distributed.Client` that :mod:`jittape.dask` runs on for ``client``.

    ``client`` is a ``Client`` (used as it is), a scheduler address such as
    ``"tcp://10.0.0.5:8786"`` (connected once, then reused), or None: the current default
    client if the program made one (``Client(...)``, Dask's convention), else a
    ``LocalCluster`` sized to the machine (one single-threaded worker process per core),
    started on first need, reused by every later call and closed at exit.

    Raises
    ------
    TypeError
        ``client`` is of another type.
    OSError
        The scheduler at the address cannot be reached (Dask's error).
    """
    if isinstance(client, Client):
        return client
    with _lock:
        if isinstance(client, str):
            c = _by_address.get(client)
            if c is None or c.status in ("closing", "closed"):
                c = _by_address[client] = Client(client, set_as_default=False)
            return c
        if client is not None:
            raise TypeError(f"client must be a distributed.Client, a scheduler address "
                            f"(str) or None, got {type(client).__name__}")
        try:
            return distributed.default_client()
        except ValueError:  # no Client in this program: jittape's own LocalCluster
            return _local_client()


def _local_client():
    c = _local.get("client")
    if c is None or c.status in ("closing", "closed"):
        if not _local:
            atexit.register(_close_local)
        # processes, not threads: recording a tape holds the GIL
        cluster = LocalCluster(n_workers=CPU_COUNT, threads_per_worker=1, processes=True,
                               dashboard_address=":0")
        c = Client(cluster, set_as_default=False)
        _local.update(cluster=cluster, client=c)
    return c


def _close_local():
    for name in ("client", "cluster"):
        obj = _local.pop(name, None)
        if obj is not None:
            obj.close()


def _ready(client):
    """``client`` resolved, with the workers' tape cache registered (once per client)."""
    client = get_client(client)
    if client not in _with_plugin:
        client.register_plugin(tasks.TapeCache())  # new and restarted workers get it too
        _with_plugin.add(client)
    return client


def _name(f):
    return getattr(f, "__name__", type(f).__name__)


# --- the data ---------------------------------------------------------------------------
def _aligned(data, fname):
    """The data as Dask arrays chunked along axis 0 only, all with the first's row chunks."""
    if not data:
        raise TypeError(f"jittape.dask.value_and_grad({fname}, *data) needs at least one "
                        f"Dask array of data")
    for j, a in enumerate(data):
        if not isinstance(a, da.Array):
            raise TypeError(
                f"data[{j}] of {fname} is a {type(a).__name__}: jittape.dask takes Dask arrays "
                f"chunked along axis 0 (dask.array.from_array(a, chunks=(rows, ...)), "
                f"from_zarr, ...); for data in memory use jittape.value_and_grad")
        if a.ndim == 0 or any(np.isnan(c) for c in a.chunks[0]):
            raise ValueError(
                f"data[{j}] of {fname} has shape {a.shape}: each data array needs an axis 0 "
                f"of known chunk sizes (a.compute_chunk_sizes() finds unknown ones)")
        if a.shape[0] != data[0].shape[0]:
            raise ValueError(f"data[{j}] of {fname} has {a.shape[0]} rows, data[0] has "
                             f"{data[0].shape[0]}: the chunks of all data share their rows")
    rows = data[0].chunks[0]
    return [a.rechunk((rows,) + tuple(-1 for _ in a.shape[1:])) for a in data], rows


def _bundle(*parts):
    return parts


def _chunk_futures(client, arrays, label):
    """One future per row chunk holding the tuple of its arrays' blocks, computed where
    the largest block lives (Dask moves the others there once)."""
    arrays = client.persist(arrays)
    by_key = {f.key: f for f in futures_of(arrays)}
    chunks = []
    for i in range(len(arrays[0].chunks[0])):
        blocks = [by_key[(a.name, i) + (0,) * (a.ndim - 1)] for a in arrays]
        chunks.append(client.submit(_bundle, *blocks, key=(f"jittape-chunk-{label}", i)))
    return chunks


def _x(x, fname):
    """``x`` as it goes to the workers: a float, or a float array (NumPy)."""
    if isinstance(x, (float, np.floating)) or (type(x) is np.ndarray and x.dtype.kind == "f"):
        return x
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return float(x)
    if isinstance(x, (list, tuple)):
        try:
            return np.array(x, dtype=np.float64)
        except (TypeError, ValueError):
            pass
    raise TypeError(f"x of {fname} must be a float or a float array (NumPy; it is sent "
                    f"with every task), got {type(x).__name__}")


# --- value and gradient -------------------------------------------------------------------
class ChunkedValueAndGrad:
    """``vg(x) -> (value, gradient)`` of ``sum over chunks of f(x, *chunk)`` on a Dask
    cluster; made by :func:`value_and_grad`.

    Attributes
    ----------
    client : distributed.Client
    chunks : list of distributed.Future
        One per row chunk, in row order: the tuple of the data's blocks of that chunk,
        persisted on the worker that evaluates it (``client.who_has(vg.chunks)``).
    rows : list of (int, int)
        The row range of each chunk.
    """

    def __init__(self, f, data, client=None):
        self.f = f
        self.__name__ = _name(f)
        self.client = _ready(client)
        self._token = tokenize(f)
        arrays, sizes = _aligned(data, self.__name__)
        ends = list(itertools.accumulate(sizes))
        self.rows = [(e - s, e) for s, e in zip(sizes, ends)]
        # keys from the data's names (hashes of their graphs) too: the same f on other
        # data must not find these chunks under the same keys
        label = tokenize(self._token, [a.name for a in arrays])[:12]
        self.chunks = _chunk_futures(self.client, arrays, label)

    def _submit(self, task, x, *extra):
        # one task group per call, (name, i) keys: a group spanning calls would look
        # "root-ish" to the scheduler, which then places its tasks ignoring their data
        group = f"jittape-{task.__name__[:-5]}-{uuid.uuid4().hex[:12]}"
        return [self.client.submit(task, self._token, self.f, i, rows, x, chunk, *extra,
                                   key=(group, i))
                for i, (rows, chunk) in enumerate(zip(self.rows, self.chunks))]

    def submit(self, x):
        """One future per chunk of ``(value, gradient)`` of that chunk, without waiting."""
        return self._submit(tasks.value_and_grad_task, _x(x, self.__name__))

    def __call__(self, x):
        """``(value, gradient)``: the value a float, the gradient of ``x``'s shape (a float
        for a float ``x``, float64 or ``x``'s float dtype). Raises what ``f`` raised on the
        first chunk that failed, its message prefixed with the chunk's index and rows."""
        parts = self.client.gather(self.submit(x))
        return _sum([v for v, _ in parts]), _sum([g for _, g in parts])

    def value(self, x):
        """The value alone (one forward sweep per chunk)."""
        return _sum(self.client.gather(self._submit(tasks.value_task, _x(x, self.__name__))))

    def hvp(self, x, v):
        """The Hessian (with respect to ``x``) times ``v``, of ``x``'s shape."""
        x = _x(x, self.__name__)
        v = np.asarray(v, dtype=np.float64).reshape(np.shape(x))
        parts = self.client.gather(self._submit(tasks.hvp_task, x, [v]))
        return _sum([p[0] for p in parts])

    def hessian(self, x):
        """The dense Hessian of a 1-D ``x``, shape ``(n, n)``: ``n`` HVPs per chunk."""
        x = np.asarray(_x(x, self.__name__), dtype=np.float64)
        if x.ndim != 1:
            raise ValueError(f"hessian of {self.__name__}: x must be 1-D, has shape {x.shape}")
        parts = self.client.gather(self._submit(tasks.hvp_task, x, list(np.eye(x.size))))
        return np.column_stack([_sum([p[j] for p in parts]) for j in range(x.size)])

    def __repr__(self):
        return (f"<jittape.dask value_and_grad of {self.__name__}: {len(self.chunks)} "
                f"chunks, {self.rows[-1][1]} rows>")


def _sum(parts):
    """The sum of the chunks' parts in chunk order (the same result whatever finished
    first)."""
    total = parts[0] if np.ndim(parts[0]) == 0 else np.array(parts[0], copy=True)
    for p in parts[1:]:
        total = total + p if np.ndim(total) == 0 else np.add(total, p, out=total)
    return total


def value_and_grad(f, *data, client=None):
    """``vg(x) -> (value, gradient)`` of ``sum over chunks of f(x, *chunk)``, on Dask.

    Equal to ``jittape.value_and_grad(f)(x, *full_data)`` up to the order of summation.
    The data are persisted on the cluster at this call; each ``vg(x)`` runs one task per
    row chunk on the worker holding the chunk (no data come to the client), which replays
    that worker's tape of ``f`` for the chunk's shape (recorded on the worker's first
    chunk of that shape, and again where a guard fails: :func:`jittape.taped`). ``x``
    is sent with every task; one value and one gradient per chunk come back.

    Parameters
    ----------
    f : callable
        ``f(x, *chunk) -> float``, plain NumPy code, additive over rows (a sum of
        per-row terms: a negative log-likelihood, a loss). float64 data enter its tape as
        inputs (the forward sweep recomputes what ``f`` derives from them); data of other
        dtypes (integer labels, float32), and data ``f`` cannot take as active values
        (``float()`` of it, ``np.unique``), are constants of a tape per chunk instead.
    *data : dask.array.Array
        One or more arrays with the same number of rows (axis 0); rechunked to the first's
        row chunks and to one chunk along the other axes if they are not so already.
    client : distributed.Client, str or None
        Where to run: see :func:`get_client` (None: the default client, else a local
        cluster started once).

    Returns
    -------
    ChunkedValueAndGrad
        ``vg(x)`` gives ``(value, gradient)``: ``x`` a float or a float array (NumPy), the
        value a float and the gradient of ``x``'s shape. ``vg.value``, ``vg.hvp``,
        ``vg.hessian`` and ``vg.submit`` (futures per chunk) use the same tapes.

    Raises
    ------
    TypeError
        A data item is not a Dask array, or ``x`` is not a float or float array.
    ValueError
        The data's numbers of rows differ, or a row chunk size is unknown.
    Exception
        From ``vg(x)``: what ``f`` raised on a chunk (same type), its message prefixed
        with ``chunk i (rows a:b)``.
    """
    return ChunkedValueAndGrad(f, data, client)


# --- optimization -------------------------------------------------------------------------
def minimize(f, x0, *data, client=None, method=None, jac=None, constraints=(), **kwargs):
    """``scipy.optimize.minimize`` on the client, of ``sum over chunks of f(x, *chunk)``
    with values and derivatives computed on the cluster (:func:`value_and_grad`).

    Gradient methods get the value and the gradient from one pass over the chunks
    (``jac=True``); Newton-CG, trust-ncg, trust-krylov and trust-constr get exact
    Hessian-vector products (``hessp``: one tangent and one second-order sweep per chunk,
    forward over reverse); trust-exact and dogleg the dense Hessian (``n`` HVPs per chunk,
    for small ``n``); derivative-free methods the value. Constraints given as functions of
    ``x`` alone get exact Jacobians on the client, as in :func:`jittape.minimize`. Other
    keywords (``bounds``, ``tol``, ``options``, ``callback``) go to SciPy unchanged.

    Parameters
    ----------
    f : callable
        ``f(x, *chunk) -> float``, ``x`` a 1-D float64 array of shape ``(n,)``.
    x0 : array_like of shape (n,)
    *data : dask.array.Array
        As in :func:`value_and_grad`.
    client : distributed.Client, str or None
        See :func:`get_client`.
    method : str, optional
        A method of ``scipy.optimize.minimize`` (not ``"ipopt"``).

    Returns
    -------
    scipy.optimize.OptimizeResult

    Raises
    ------
    ValueError
        ``jac``, ``hess`` or ``hessp`` given (the derivatives are jittape's to supply), or
        ``method="ipopt"``.
    """
    import scipy.optimize as so
    from ..optimize import method_table as sd
    from ..optimize.minimize import checked_call

    method, x0, constraints = checked_call(method, jac, kwargs, x0, constraints)
    if method == "ipopt":
        raise ValueError("jittape.dask.minimize runs scipy.optimize methods; for IPOPT on "
                         "data in memory use jittape.minimize(method='ipopt')")
    vg = value_and_grad(f, *data, client=client)
    constraints = [sd.with_derivatives(c, method, x0) for c in constraints]
    # trust-constr: Hessian-vector products (no sparsity pattern of the chunks' sum)
    derivs = sd.objective_kwargs(vg, method, x0, (), sparse=False)
    return so.minimize(vg if derivs else vg.value, x0, method=method,
                       constraints=constraints, **derivs, **kwargs)


def map_starts(f, starts, client=None, method=None, args=(), **kwargs):
    """Independent local optimizations of ``f`` from each start, spread over the workers.

    Each start is one task running ``jittape.minimize(f, start, args, method, **kwargs)``
    on a worker; a worker's starts share its tapes of ``f`` (recorded on its first start
    of that shape). For multistart and basin-hopping-style global optimization on data in
    memory (``args`` go with every task: keep them small, or use :func:`minimize` for
    chunked data).

    Parameters
    ----------
    f : callable
        ``f(x, *args) -> float``, plain NumPy code.
    starts : array_like of shape (k, n), or a sequence of k arrays
    client : distributed.Client, str or None
        See :func:`get_client`.
    method, args, **kwargs
        As in :func:`jittape.minimize`.

    Returns
    -------
    list of scipy.optimize.OptimizeResult
        In the order of ``starts``; ``replay_stats`` of each holds its worker's counters
        for ``f`` (cumulative over the starts that worker ran).

    Raises
    ------
    Exception
        What ``f`` or SciPy raised for a start (same type), prefixed with ``start i``.
    """
    client = _ready(client)
    token, group = tokenize(f), f"jittape-start-{uuid.uuid4().hex[:12]}"
    futures = [client.submit(tasks.minimize_task, token, f, i,
                             np.asarray(s, dtype=np.float64), tuple(args), method, kwargs,
                             key=(group, i))
               for i, s in enumerate(starts)]
    return client.gather(futures)


def worker_stats(client=None):
    """``{worker address: {tape description: jittape.ReplayStats}}``: how often each
    worker recorded and replayed the tapes of :mod:`jittape.dask` (a description names the
    function, whether the data are inputs of one tape per shape or constants of one tape
    per chunk, and the shapes and dtypes of ``x`` and the chunk)."""
    return _ready(client).run(tasks.worker_stats)

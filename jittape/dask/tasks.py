"""What :mod:`jittape.dask` runs on Dask workers: the tape cache and the chunk tasks.

Each worker keeps its tapes in a :class:`TapeCache` (a Dask worker plugin, so every worker,
including one that replaces a lost worker, gets an empty one): one
:class:`jittape.TapedFunction` per (function, shapes and dtypes of ``x`` and of the
chunk). The float64 data of a chunk are differentiated inputs of that tape (their gradients
are dropped), so one recording replays for every chunk of the same shape: the forward
sweep recomputes whatever ``f`` derives from the data. A function that cannot take active
data (it calls ``int()`` on it, say, or ``np.unique``) and integer or boolean data are
recorded per chunk instead, with the chunk as constants of the tape, as
:func:`jittape.value_and_grad` records them; so are other dtypes (float32 data are
computed in float32, as NumPy does, only as constants).

Imported by the workers only through the tasks' pickles; it imports ``distributed``.
"""

import threading

import numpy as np

from distributed import WorkerPlugin, get_worker

from ..api.recording import like_input
from ..api.taped import TapedFunction

PLUGIN = "jittape-tapes"
#: Tapes a TapedFunction keeps per key (as :func:`jittape.taped`'s ``max_tapes``).
MAX_TAPES = 8


class TapeCache(WorkerPlugin):
    """A worker's taped functions: ``{key: _Taped}``, made on first need, dropped with
    the worker."""

    name = PLUGIN
    idempotent = True  # registering again (a second value_and_grad) keeps the tapes

    def setup(self, worker):
        self.lock = threading.Lock()  # tasks of one worker may run in several threads
        self.functions = {}
        self.constants_only = set()  # keys whose f failed on active data: record per chunk

    def teardown(self, worker):
        self.functions.clear()

    def get(self, key, make):
        with self.lock:
            tf = self.functions.get(key)
            if tf is None:
                tf = self.functions[key] = make()
            return tf

    def stats(self):
        """``{description: ReplayStats}`` of this worker's taped functions."""
        return {_describe(key): tf.stats for key, tf in list(self.functions.items())}


def _describe(key):
    token, name, mode, shapes = key[:4]
    where = f" chunk {key[4]}" if len(key) > 4 else ""
    return f"{name} [{mode}{where}] {shapes}"


def _cache():
    return get_worker().plugins[PLUGIN]


def _signature(x, parts):
    """Shapes and dtypes of ``x`` and of the chunk's arrays: what a tape depends on."""
    return tuple((np.shape(a), np.asarray(a).dtype.str) for a in (x,) + tuple(parts))


def _is_float(a):
    """Whether a chunk's array can be a tape input: float64 (an input is float64, while
    NumPy computes float32 data in float32, which a constant of the tape keeps)."""
    return isinstance(a, np.ndarray) and a.dtype == np.float64


def _taped(cache, token, f, index, x, parts, constants):
    """The TapedFunction for chunk ``index``: data as inputs (one per shape), or as
    constants (one per chunk) when ``constants`` or when the data include non-floats."""
    name = getattr(f, "__name__", "f")
    shapes = _signature(x, parts)
    floats = tuple(1 + j for j, a in enumerate(parts) if _is_float(a))
    if constants or len(floats) < len(parts):
        key = (token, name, "constants", shapes, index)
        return key, cache.get(key, lambda: TapedFunction(f, 0, MAX_TAPES)), False
    key = (token, name, "inputs", shapes)
    return key, cache.get(key, lambda: TapedFunction(f, (0,) + floats, MAX_TAPES)), True


def _call(token, f, index, x, parts, method):
    """``method(taped_function, inputs_mode)`` for chunk ``index``, data as inputs where
    ``f`` takes them, else as constants (a failure on active data retried once so)."""
    cache = _cache()
    base = (token, getattr(f, "__name__", "f"), "inputs", _signature(x, parts))
    key, tf, inputs = _taped(cache, token, f, index, x, parts, base in cache.constants_only)
    if not inputs:
        return method(tf, False)
    try:
        return method(tf, True)
    except Exception:
        _, tf, _ = _taped(cache, token, f, index, x, parts, True)
        result = method(tf, False)  # f's own error, if it fails with constant data too
        cache.constants_only.add(key)
        return result


def _labelled(label, run):
    """``run()``; an exception from it keeps its type and gets ``label`` (which chunk or
    start raised it) in front of its message, or as a note if it has no message."""
    try:
        return run()
    except Exception as e:
        if e.args and isinstance(e.args[0], str):
            e.args = (f"{label}: {e.args[0]}",) + e.args[1:]
        elif hasattr(e, "add_note"):
            e.add_note(f"raised on {label}")
        raise


def _chunk(index, rows):
    return f"chunk {index} (rows {rows[0]}:{rows[1]})"


def value_and_grad_task(token, f, index, rows, x, parts):
    """``(f(x, *parts), gradient with respect to x)`` of one chunk, on its worker."""
    def method(tf, inputs):
        value, grads = tf.value_and_grad(x, *parts)
        return value, like_input(grads[0], x) if inputs else grads
    return _labelled(_chunk(index, rows), lambda: _call(token, f, index, x, parts, method))


def value_task(token, f, index, rows, x, parts):
    """``f(x, *parts)`` of one chunk from its tape."""
    return _labelled(_chunk(index, rows),
                     lambda: _call(token, f, index, x, parts, lambda tf, _: tf(x, *parts)))


def hvp_task(token, f, index, rows, x, parts, vs):
    """``[H_xx v for v in vs]`` of one chunk (the data's tangents are zero)."""
    def method(tf, inputs):
        if not inputs:
            return [tf.hvp(x, *parts, v=v) for v in vs]
        zeros = tuple(np.zeros(np.shape(a)) if _is_float(a) else None for a in parts)
        zeros = tuple(z for z in zeros if z is not None)
        return [tf.hvp(x, *parts, v=(v,) + zeros)[0] for v in vs]
    return _labelled(_chunk(index, rows), lambda: _call(token, f, index, x, parts, method))


def minimize_task(token, f, index, x0, args, method, kwargs):
    """``jittape.minimize(f, x0, args, method, **kwargs)`` with the worker's tapes of
    ``f`` (one TapedFunction per shape of ``x0``, shared by the starts it runs)."""
    from ..optimize.minimize import minimize
    key = (token, getattr(f, "__name__", "f"), "starts", _signature(x0, ()))
    tf = _cache().get(key, lambda: TapedFunction(f, 0, MAX_TAPES))
    return _labelled(f"start {index}", lambda: minimize(tf, x0, args, method, **kwargs))


def worker_stats(dask_worker):
    """This worker's ``{description: ReplayStats}`` (for ``Client.run``)."""
    plugin = dask_worker.plugins.get(PLUGIN)
    return {} if plugin is None else plugin.stats()

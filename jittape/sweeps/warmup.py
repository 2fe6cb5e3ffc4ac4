"""Warm-up: compile the sweeps of an op set ahead of time (:func:`warmup`), on several cores
(``warmup(jobs=N)``) or in shares between processes.

Several processes are not the default: measured on 2 cores shared with other jobs, all four
all-op sweeps took 326 s of CPU, 10:46 wall and 1.4 GB in one process (load 3.5-5), and 551 s of
CPU, 16:42 wall and 2.0 GB summed in two (load 2-10): each worker imports Numba, compiles the
helpers its parts call (again) and loads every part from the cache to link the runner. On an
idle machine two processes may still gain something; ``-j N`` is for trying it.

Numba compiles under the GIL, so only processes compile in parallel. A large op set's sweep is
split into part functions (:mod:`jittape.sweeps.parts_source`), each with its own entry in
Numba's disk cache: worker processes compile the parts, heaviest first, then the sweeps (the
runners, which call the parts through their addresses: about a second each; a small op set's
sweep is one function and compiles whole in a worker); the calling process then loads them all
from the cache.
"""

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from . import opsets, tiers
from .codegen import sweep_parts
from ..optable.table import OPS

#: Buffers after the tape columns, per sweep (the range ``lo, hi`` of records comes after
#: them).
_BUFFERS = {"forward_sweep": 1, "reverse_sweep": 2, "tangent_sweep": 2, "hvp_sweep": 4}


def empty_tape():
    """The columns of a tape of one INPUT record: a sweep over it runs and does nothing, so
    calling a sweep (or a part, at record 0) on it compiles the one specialization that
    real tapes use (their columns have these dtypes)."""
    return (np.zeros(1, np.int32), np.full(1, -1, np.int32), np.full(1, -1, np.int32),
            np.zeros(1, np.int32), np.zeros(1), np.array([0, 1], np.int64),
            np.zeros(0, np.int64))


def empty_args(what):
    """The arguments of sweep ``what`` for the empty tape."""
    args = empty_tape() + tuple(np.zeros(1) for _ in range(_BUFFERS[what]))
    return args + (0, 1)


def call_empty(fn, what):
    """Call sweep ``what`` on the empty tape: compiles it."""
    return fn(*empty_args(what))


def _compile_parts(codes, what, parts):
    from numba import typeof
    sweep = getattr(opsets.module(frozenset(codes)), what)
    argtys = tuple(map(typeof, empty_args(what)))
    for m in parts:
        sweep.compile_part(m, argtys)


def _compile_sweeps(codes, whats):
    s = opsets.Sweeps(frozenset(codes))
    with tiers.foreground():
        for what in whats:
            call_empty(getattr(s, what), what)


def _parts(codes, whats):
    """``[(weight, what, m)]``: part m of each multi-part sweep in ``whats`` of the op set
    ``codes``, heaviest first (the weight: its lines of rules)."""
    ops = [OPS[c] for c in sorted(codes)]
    weights = {what: sweep_parts(what[:-len("_sweep")], ops) for what in whats}
    return sorted(((w, what, m) for what in whats if len(weights[what]) > 1
                   for m, w in enumerate(weights[what])), reverse=True)


def compile_share(codes, whats, index, count):
    """Compile share ``index`` of ``count`` of the parts of sweeps ``whats`` of op set
    ``codes`` into the cache: ``count`` processes that each compile their own share, wait for
    one another, then call :func:`warmup` compile every part once (the test
    suite's ``pytest -n 2`` workers do). The shares are balanced by weight, greedily, heaviest
    part first (the LPT rule: Graham, "Bounds on multiprocessing timing anomalies", SIAM J.
    Appl. Math. 17, 1969)."""
    for what, m in shares(codes, whats, count)[index]:
        _compile_parts(sorted(codes), what, [m])


def shares(codes, whats, count):
    """The parts of :func:`compile_share`'s ``count`` shares: ``[[(what, m), ...], ...]``."""
    loads, out = [0] * count, [[] for _ in range(count)]
    for w, what, m in _parts(codes, whats):
        j = loads.index(min(loads))
        loads[j] += w
        out[j].append((what, m))
    return out


def compile_in_workers(codes, whats, jobs):
    """Compile sweeps ``whats`` of the op set ``codes`` into the cache with ``jobs``
    processes: their parts first (heaviest first), then the sweeps."""
    parts = _parts(codes, whats)
    ctx = multiprocessing.get_context("spawn")  # Numba's threads do not survive a fork
    with ProcessPoolExecutor(jobs, mp_context=ctx) as pool:
        for f in [pool.submit(_compile_parts, sorted(codes), what, [m])
                  for _, what, m in parts]:
            f.result()
        for f in [pool.submit(_compile_sweeps, sorted(codes), [w]) for w in whats]:
            f.result()


def warmup(codes=None, hvp=True, jobs=1, share=None):
    """Compile (or load from the cache) the sweeps for ``codes`` (default: every op of the
    table), so that later tapes whose ops it contains compile nothing; ``hvp``: the second-order
    sweep too; ``jobs``: compile in that many processes (:func:`compile_in_workers`). Returns
    the :class:`jittape.sweeps.opsets.Sweeps`. ``python -m jittape warmup`` calls this.

    ``share=(i, n)``: compile only the i-th of n shares of the sweeps' parts into the cache
    and return None, for n processes that warm one cache together (each then calls
    ``warmup()`` once all shares are done: :func:`jittape.sweeps.warmup.compile_share`)."""
    codes = opsets.with_leaves(codes if codes is not None else [op.code for op in OPS])
    whats = opsets.FUNCTIONS if hvp else opsets.FUNCTIONS[:3]
    cold = [w for w in whats if not opsets.compiled_on_disk(codes, w)]
    if share is not None:
        opsets.remember(codes)
        compile_share(codes, cold, *share)
        return None
    if jobs > 1 and cold:
        opsets.remember(codes)
        compile_in_workers(codes, cold, jobs)
    s = opsets.Sweeps(codes)
    opsets.LOADED.setdefault(codes, s)
    with tiers.foreground():
        for what in whats:
            call_empty(getattr(s, what), what)
    return s

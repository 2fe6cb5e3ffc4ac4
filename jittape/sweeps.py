"""The sweeps a tape runs: generated for the ops it uses, compiled on first need, cached.

:func:`for_tape` returns the :class:`Sweeps` of a tape's op set. Their source comes from
:func:`jittape.codegen.sweep_source` and is loaded through :mod:`jittape.jitcache`, so a
program that uses ten ops compiles ten branches, once per machine, and each sweep compiles
only when first called (an eager gradient needs the reverse sweep alone). A set of ops
that some already compiled set contains reuses that set's sweeps (in this process, or on
disk: ``opsets.txt`` in the cache directory lists the sets compiled there), so after
``python -m jittape warmup`` nothing compiles again.
"""

from . import jitcache
from .codegen import sweep_source
from .ops import OPS

#: The callables of a Sweeps object: the forward, reverse and tangent sweeps.
FUNCTIONS = ("forward_sweep", "reverse_sweep", "tangent_sweep")
_LOADED = {}  # frozenset of opcodes -> Sweeps, in this process
_INDEX = "opsets.txt"


class Sweeps:
    """The compiled sweeps for a set of opcodes (attributes named as in :data:`FUNCTIONS`).

    Each attribute is the Numba dispatcher; until its first call it is a wrapper that
    announces a cold compile on stderr (:class:`jittape.jitcache.FirstCall`).
    """

    def __init__(self, codes):
        self.codes = frozenset(codes)
        ops = [OPS[c] for c in sorted(self.codes)]
        self.names = [op.name for op in ops if op.kind != "leaf"]
        self.module = jitcache.load("jittape_sweeps",
                                    lambda cache: sweep_source(ops, cache=cache))
        for what in FUNCTIONS:
            setattr(self, what, self._first_call(what))

    def _first_call(self, what):
        ops = ", ".join(self.names) if len(self.names) <= 8 else \
            f"{len(self.names)} ops ({', '.join(self.names[:6])}, ...)"
        wrapper = jitcache.FirstCall(self.module, what, f"{what.replace('_', ' ')} for {ops}")

        def call(*args):
            out = wrapper(*args)
            setattr(self, what, getattr(self.module, what))  # steady state: the dispatcher
            return out
        return call


def _with_leaves(codes):
    return frozenset(codes) | {op.code for op in OPS if op.kind == "leaf"}


def _disk_sets():
    try:
        text = (jitcache.cache_dir() / _INDEX).read_text()
    except OSError:
        return []
    by_name = {op.name: op.code for op in OPS}
    sets = []
    for line in text.splitlines():
        names = line.split(",")
        if names and all(n in by_name for n in names):
            sets.append(frozenset(by_name[n] for n in names))
    return sets


def _remember(codes):
    line = ",".join(OPS[c].name for c in sorted(codes))
    path = jitcache.cache_dir() / _INDEX
    try:
        if path.exists() and line in path.read_text().splitlines():
            return
        with open(path, "a") as f:
            f.write(line + "\n")
    except OSError:
        pass


def for_codes(codes):
    """The :class:`Sweeps` for a tape using ``codes`` (an iterable of opcodes)."""
    codes = _with_leaves(codes)
    hit = _LOADED.get(codes)
    if hit is not None:
        return hit
    supersets = [s for s in _LOADED if codes <= s]
    if supersets:
        hit = _LOADED[min(supersets, key=len)]
    else:
        for s in sorted((s for s in _disk_sets() if codes <= s), key=len):
            ops = [OPS[c] for c in sorted(s)]
            name = f"jittape_sweeps_{jitcache.digest(sweep_source(ops))}.py"
            if (jitcache.cache_dir() / name).exists():
                hit = _LOADED[s] = Sweeps(s)
                break
        else:
            hit = _LOADED[codes] = Sweeps(codes)
            _remember(codes)
    _LOADED[codes] = hit
    return hit


def for_tape(t):
    """The sweeps for the :class:`jittape.tape.TapeArrays` ``t`` (cached on it)."""
    s = t.sweeps
    if s is None:
        import numpy as np
        s = t.sweeps = for_codes(np.unique(t.op).tolist())
    return s


def warmup(codes=None):
    """Compile (or load from the cache) all three sweeps for ``codes`` (default: every op of
    the table), so that later tapes whose ops it contains compile nothing. Returns the
    :class:`Sweeps`. ``python -m jittape warmup`` calls this."""
    import numpy as np
    s = for_codes(codes if codes is not None else [op.code for op in OPS])
    empty = (np.zeros(1, np.int32), np.full(1, -1, np.int32), np.full(1, -1, np.int32),
             np.zeros(1, np.int32), np.zeros(1), np.array([0, 1], np.int64),
             np.zeros(0, np.int64))  # one INPUT record: every sweep runs and does nothing
    s.forward_sweep(*empty, np.zeros(1))
    s.reverse_sweep(*empty, np.zeros(1), np.zeros(1), 0)
    s.tangent_sweep(*empty, np.zeros(1), np.zeros(1))
    return s

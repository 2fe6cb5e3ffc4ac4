"""The sweeps a tape runs: generated for the ops it uses, compiled on first need, cached.

:func:`for_tape` returns the :class:`Sweeps` of a tape's op set. Their source comes from
:func:`jittape.sweeps.codegen.sweep_source` and is loaded through
:mod:`jittape.sweeps.disk_cache`, so a program that uses ten ops compiles ten branches, once per
machine, and each sweep compiles only when first called (an eager gradient needs the reverse
sweep alone). A set of ops that some set with that sweep already compiled contains reuses that
set's sweep (in this process, or on disk: ``opsets.txt`` in the cache directory lists the sets
compiled there), so after ``python -m jittape warmup`` nothing compiles again.

Granularity, measured (2-core Xeon, Numba 0.68, cold): a sweep for a ten-op set compiles in
about 1 s (0.35 s of it Numba's one-time start). One function per op is not an option, since a
jitted caller re-optimizes its jitted callees (a replay function calling both sweeps compiled 3
s longer than the sweeps themselves); but one function for all 135 ops is not either: Numba's
and LLVM's compile time and memory grow faster than a function's size (the forward and reverse
sweeps of all ops took 72 and 170 s of CPU, the HVP sweep over half an hour and 9-10 GB). So the
sweep of a large op set is a runner calling part functions of about a hundred lines of rules
each through their addresses (:mod:`jittape.sweeps.parts_source`: each part compiles once; all
four all-op sweeps in 5.5 min of CPU and 1.4 GB), and a typical tape's op set is one function as
before. Hence one module per op set, superset reuse, and ``warmup`` for users who want no
compile at all. An op set that no compiled set contains but whose ops were all compiled
before (in other sets) is composed of pieces instead (:mod:`jittape.sweeps.composed`): a
runner every set shares and a part per op, each compiled once per machine in the compile
process when a cold set is compiled; such a set loads and compiles nothing.
"""

from concurrent import futures

from . import blas_threads, composed, disk_cache, tiers
from .codegen import sweep_parts, sweep_source
from ..optable.table import BY_NAME, OPS, swept

#: The callables of a Sweeps object: the forward, reverse and tangent sweeps and the tangent
#: of the reverse sweep (Hessian-vector products).
FUNCTIONS = ("forward_sweep", "reverse_sweep", "tangent_sweep", "hvp_sweep")
LOADED = {}  # frozenset of opcodes -> Sweeps, in this process
_MODULES = {}  # frozenset of opcodes -> generated module, in this process
_INDEX = "opsets.txt"
_BY_OPCODES = {}  # opcode column of a short tape (bytes) -> Sweeps
_STEMS = {}  # frozenset of opcodes -> name of its generated module
_COMPOSED = {}  # (frozenset of opcodes, sweep) -> its composed sweep's namespace


class Sweeps:
    """The compiled sweeps for a tape's set of opcodes (attributes named as in
    :data:`FUNCTIONS`).

    Each attribute is a Numba dispatcher. Until its first call it is a wrapper that picks the
    module to take it from (:func:`_module_for`: a compiled superset if there is one) and
    announces a cold compile on stderr (:class:`jittape.sweeps.disk_cache.FirstCall`).
    """

    def __init__(self, codes):
        self.codes = frozenset(codes)
        blas_threads.one_pool(self.codes)
        self.names = [OPS[c].name for c in sorted(self.codes) if OPS[c].kind != "leaf"]
        self._jobs = {}  # sweep name -> its background compile (jittape.sweeps.tiers)
        self._own = set()  # sweeps whose own compile a composed sweep asked for
        for what in FUNCTIONS:
            first = self._first_call(what)
            setattr(self, what, self._interpreted(what, first) if tiers.INTERPRETED_ONLY
                    else first)

    def _interpreted(self, what, compiled):
        """``JITTAPE_TIER=interpreted``: sweep ``what`` run by CPython, ``compiled`` where
        that raises (:func:`jittape.sweeps.tiers.run` restores the output buffer first)."""
        fn = tiers.interpreted(self.codes, what)
        if fn is None:
            return compiled

        def call(*args):
            ok, out = tiers.run(self.codes, what, args, fn)
            return out if ok else compiled(*args)
        call.waiting = False  # (no compile to wait for: taped replays at once)
        return call

    def _first_call(self, what):
        def compiled(*args):
            codes, module = _module_for(self.codes, what)
            if getattr(module, "__composed__", False):  # pieces in the cache: nothing to say
                out = getattr(module, what)(*args)
            else:
                if not disk_cache.compiled_once(module, what):
                    _pieces_later(codes, what)  # so that later sets of these ops compose
                out = disk_cache.FirstCall(module, what, _describe(codes, what))(*args)
            fn = getattr(module, what)  # steady state: the dispatcher, or a partwise
            fn = getattr(fn, "call", None) or fn  # sweep's bound runner
            if getattr(module, "__composed__", False):
                fn = self._until_own(what, fn, compiled)
            setattr(self, what, fn)
            return out

        def call(*args):  # until the machine code is loaded (jittape.sweeps.tiers)
            job = jobs.get(what)
            fn = tiers.tier0(self.codes, what, args) if job is None or not job.done() else None
            if job is None:
                if fn is None or not tiers.in_process() or self._ready(what):
                    if what == "forward_sweep":
                        self._prefetch("reverse_sweep")
                    return compiled(*args)  # cached machine code loads faster than tier 0
                job = self._submit(what, tiers.snapshot(args), compiled)
                if job is None:  # the cache directory is not writable
                    return compiled(*args)
                jobs[what] = job
            if not job.done():
                ok, out = tiers.run(self.codes, what, args, fn) if fn is not None else (0, 0)
                if ok:
                    return out
                futures.wait([job])  # (compiling it here as well would take longer)
            if job.exception() is not None and what not in failed:
                failed.add(what)
                disk_cache.notice(f"the compile process failed on the {what.replace('_', ' ')}"
                                  f" ({job.exception()}); compiling it here")
            tiers.done(job)
            return compiled(*args)  # loads what the process compiled, or compiles it here
        jobs, failed = self._jobs, set()
        call.waiting = True  # (replaced by the machine code's function once loaded)
        return call

    def _until_own(self, what, composed_fn, compiled):
        """``composed_fn`` until the set's own sweep ``what``, compiled in the compile process
        meanwhile (once per set and sweep), is in the cache; then ``compiled`` loads that.
        A composed sweep of ops the runner does not inline ran 3.5-8x slower than the set's
        own (benchmarks/results/composed.md)."""
        if what in self._own or not tiers.in_process():
            return composed_fn
        self._own.add(what)
        job = self._submit(what)
        if job is None:
            return composed_fn

        def call(*args):
            if not job.done():
                return composed_fn(*args)
            tiers.done(job)
            if job.exception() is not None:  # (reported by no one: the pieces work on)
                setattr(self, what, composed_fn)
                return composed_fn(*args)
            return compiled(*args)  # the own set is compiled now: _module_for finds it
        return call

    def waits(self, what, cols):
        """Whether a call of sweep ``what`` on tape columns ``cols`` would wait for a compile
        in the compile process now: no machine code here or in the cache, no tier 0 for it
        (:func:`jittape.sweeps.tiers.tier0`), background compiles on. Submits that compile
        (once), so that the sweep gets ready meanwhile. :mod:`jittape.api.taped` then records
        again instead of replaying: an eager gradient runs no forward sweep."""
        if not getattr(getattr(self, what), "waiting", False):
            return False  # machine code bound
        job = self._jobs.get(what)
        if job is None:
            if tiers.tier0(self.codes, what, cols) is not None or \
                    not tiers.in_process() or self._ready(what):
                return False
            job = self._submit(what)
            if job is None:
                return False
            self._jobs[what] = job
        return not job.done()

    def _ready(self, what):
        """Whether sweep ``what`` has machine code in this process or in the cache (looked
        up without importing Numba, which a cold compile leaves to the compile process)."""
        return _ready_in_process(self.codes, what) or \
            _compiled_superset(self.codes, what, partwise=False) is not None or \
            composed.composable(self.codes, what)

    def _prefetch(self, what):
        """A large tape's cold forward sweep compiles here: have the compile process compile
        sweep ``what`` (the reverse sweep a gradient calls next) on the other core meanwhile,
        so that the first gradient waits for the longer of the two compiles, not their sum."""
        if what not in self._jobs and tiers.in_process() and not self._ready(what):
            job = self._submit(what)
            if job is not None:
                self._jobs[what] = job

    def _submit(self, what, args=None, compiled=None):
        """Compile sweep ``what`` in the compile process (its Future; None if the cache
        directory is not writable); ``args``: a snapshot of the first call's arguments, for
        :func:`jittape.sweeps.tiers.wait_compiled` to load it with ``compiled`` (None:
        nothing to load until the sweep's first call)."""
        remember(self.codes)
        source = sweep_source([OPS[c] for c in sorted(self.codes)])
        try:
            path = disk_cache.write("jittape_sweeps", source)
        except OSError:
            return None
        job = {"kind": "sweep", "path": str(path), "what": what}
        finish = None if compiled is None else (lambda: compiled(*args))
        future = tiers.submit(job, finish, _describe(self.codes, what))
        _pieces_later(self.codes, what)
        return future


def _pieces_later(codes, what):
    """Have the compile process compile the pieces of sweep ``what`` for ``codes`` that are
    not in the cache (:mod:`jittape.sweeps.composed`), for the op sets to come."""
    if not tiers.in_process():
        return
    try:
        for job in composed.pieces_jobs(codes, what):
            tiers.submit(job, low=True)
    except OSError:  # (the cache directory is not writable)
        pass


def _describe(codes, what):
    names = [OPS[c].name for c in sorted(codes) if OPS[c].kind != "leaf"]
    ops = ", ".join(names) if len(names) <= 8 else \
        f"{len(names)} ops ({', '.join(names[:6])}, ...)"
    ops = ops or "a tape of inputs and constants only"
    return f"{what.replace('_', ' ')} for {ops}"


def _ready_in_process(codes, what):
    """Whether a module of this process has machine code of sweep ``what`` for ``codes``."""
    return any(codes <= s and getattr(m, what).signatures for s, m in list(_MODULES.items()))


def with_leaves(codes):
    """The op set that keys a sweeps module: ``codes`` less the ops without branches
    (:func:`jittape.optable.table.swept`), plus the leaves."""
    return frozenset(c for c in codes if swept(OPS[c])) | \
        {op.code for op in OPS if op.kind == "leaf"}


def module(codes):
    """The generated module of the sweeps for the opcodes ``codes`` (leaves included)."""
    m = _MODULES.get(codes)
    if m is None:
        ops = [OPS[c] for c in codes]
        m = _MODULES[codes] = disk_cache.load(
            "jittape_sweeps", lambda cache: sweep_source(ops, cache=cache))
    return m


def _compiled_superset(codes, what, partwise=True):
    """The op set whose sweep ``what`` is compiled in the cache and holds ``codes``: the
    set itself if it is (its source is short to generate), else the smallest compiled
    superset the index lists; None if there is none. Each candidate's module name is the
    hash of its source, generated once per process (:data:`_STEMS`). Without ``partwise``,
    a superset whose sweep is split into parts (``warmup``'s all-op sweeps) does not count:
    loading its parts' machine code took 1.25 s, where a small tape runs interpreted while
    its own set compiles in the compile process (a warm cache was slower than an empty one)."""
    sets = _disk_sets()  # (read first: a damaged index is rewritten with its valid lines)
    if compiled_on_disk(codes, what):
        return codes
    for s in sorted((s for s in sets if codes < s), key=len):
        if compiled_on_disk(s, what) and (partwise or not _partwise(s, what)):
            return s
    return None


def _partwise(codes, what):
    return len(sweep_parts(what.removesuffix("_sweep"), [OPS[c] for c in codes])) > 1


def compiled_on_disk(codes, what):
    stem = _STEMS.get(codes)
    if stem is None:
        ops = [OPS[c] for c in sorted(codes)]
        stem = _STEMS[codes] = f"jittape_sweeps_{disk_cache.digest(sweep_source(ops))}"
    return (disk_cache.cache_dir() / f"{stem}.{what}.ok").exists()


def _module_for(codes, what):
    """``(codes', module)`` holding sweep ``what`` for ``codes``: the smallest compiled
    superset (in this process, then in the cache directory), else ``codes`` itself."""
    for s in sorted((s for s in _MODULES if codes <= s), key=len):
        if getattr(_MODULES[s], what).signatures or disk_cache.compiled_once(_MODULES[s], what):
            return s, _MODULES[s]
    found = _compiled_superset(codes, what)
    if found is not None:
        return found, module(found)
    if composed.composable(codes, what):
        key = (codes, what)
        if key not in _COMPOSED:
            _COMPOSED[key] = composed.namespace(codes, what)
        return codes, _COMPOSED[key]
    remember(codes)
    return codes, module(codes)


def _index_lines():
    """The valid lines of the cache's ``opsets.txt`` (comma-separated op names of a set this
    or another process compiled). A damaged index (bytes that are not UTF-8, unknown names,
    another process's half-written line) is data, not an error: its valid lines are kept and
    the file rewritten with them."""
    path = disk_cache.cache_dir() / _INDEX
    try:
        raw = path.read_bytes()
    except OSError:
        return []
    lines = raw.decode("utf-8", errors="replace").splitlines()
    good = [ln for ln in lines if ln and all(n in BY_NAME for n in ln.split(","))]
    if len(good) != len(lines):
        try:
            disk_cache.write_atomic(path, "".join(ln + "\n" for ln in good))
        except OSError:
            pass
    return good


def _disk_sets():
    return [frozenset(BY_NAME[n].code for n in line.split(",")) for line in _index_lines()]


def remember(codes):
    line = ",".join(OPS[c].name for c in sorted(codes))
    path = disk_cache.cache_dir() / _INDEX
    try:
        if line in _index_lines():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a") as f:
            f.write(line + "\n")
    except OSError:
        pass


def for_codes(codes):
    """The :class:`Sweeps` for a tape using ``codes`` (an iterable of opcodes)."""
    key = frozenset(codes)
    hit = LOADED.get(key)
    if hit is None:
        codes = with_leaves(key)
        hit = LOADED.get(codes) or Sweeps(codes)
        LOADED[key] = LOADED[codes] = hit
    return hit


def for_tape(t):
    """The sweeps for the :class:`jittape.tape.arrays.TapeArrays` ``t`` (cached on it)."""
    s = t.sweeps
    if s is None:
        if t.op.shape[0] < 256:  # eager gradients record the same short tape again and again
            key = t.op.tobytes()
            s = _BY_OPCODES.get(key)
            if s is None:
                s = _BY_OPCODES[key] = for_codes(t.op.tolist())
                if len(_BY_OPCODES) > 4096:
                    _BY_OPCODES.clear()
        else:  # the opcodes present: a count per opcode, no sort of the whole column
            import numpy as np
            s = for_codes(np.flatnonzero(np.bincount(t.op)).tolist())
        t.sweeps = s
    return s

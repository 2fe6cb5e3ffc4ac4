"""The run-time side of multi-part sweeps (:mod:`jittape.sweeps.parts_source`):
:func:`call_part`, the
runner's call of a part through its address, and :class:`Partwise`, the sweep object that
compiles the parts and binds their addresses to the runner. Only generated modules import
this (generating sources imports no Numba machinery, hence no SciPy)."""

import functools
import threading

import numpy as np
from numba import types
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.extending import intrinsic


@intrinsic
def call_part(typingctx, addr, args):
    """``call_part(address, (columns..., i))``: call the part function compiled at
    ``address`` (its Numba entry point, for exactly these argument types, ``i`` passed as
    int64) and return its int64 result; its exceptions propagate."""
    if not isinstance(addr, types.Integer) or not isinstance(args, types.BaseTuple):
        raise TypingError("call_part(address, (arguments...))")
    argtys = list(args.types[:-1]) + [types.int64]

    def codegen(context, builder, sig, llargs):
        vals = cgutils.unpack_tuple(builder, llargs[1], len(argtys))
        vals[-1] = context.cast(builder, vals[-1], args.types[-1], types.int64)
        fnty = context.call_conv.get_function_type(types.int64, argtys)
        fn = builder.inttoptr(llargs[0], fnty.as_pointer())
        status, res = context.call_conv.call_function(builder, fn, types.int64, argtys, vals)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        return res
    return types.int64(addr, args), codegen


class Partwise:
    """A multi-part sweep: called like the sweep, it calls ``run`` (the runner, a Numba
    dispatcher taking the parts' addresses and the sweep's arguments) with the addresses of
    ``parts`` (dispatchers taking the sweep's arguments, then the record ``i`` to start
    at).

    The first call fixes the argument types (those of the tape columns and buffers: one
    specialization, as for a single-function sweep), compiles or loads the parts for them and
    the runner for them, and disables further compiles of the runner, so that it is never
    called with addresses of parts compiled for other types (Numba converts arguments to
    the compiled types or raises TypeError).
    """

    def __init__(self, run, parts):
        self.run, self.parts = run, tuple(parts)
        self.call = None  # once compiled: the runner with the addresses bound
        self.__doc__ = run.__doc__
        self._lock = threading.Lock()  # the callers' threads: one compiles, the others wait

    def __call__(self, *args):
        if self.call is None:
            with self._lock:  # once: a second compile of the disabled runner would raise
                if self.call is None:
                    self.compile(tuple(map(_typeof, args)))
        return self.call(*args)

    def compile(self, argtys):
        """Compile (or load) the parts and the runner for argument types ``argtys``."""
        addresses = np.array([self.compile_part(m, argtys) for m in range(len(self.parts))],
                             np.int64)
        compile_runner(self.run, argtys)
        self.call = Bound(self.run, addresses)  # steady state: no Python frame

    def compile_part(self, m, argtys):
        """Compile (or load) part ``m`` for the sweep's argument types ``argtys``; returns its
        address. (:mod:`jittape.sweeps.warmup` calls this in worker processes: the same
        signature, so the same entry of Numba's cache.)"""
        return part_address(self.parts[m], argtys)

    @property
    def signatures(self):
        return self.run.signatures

    @property
    def stats(self):
        """Cache hits and misses (Numba's ``stats``) of the runner and the parts together."""
        return _stats((self.run,) + self.parts)


def compile_runner(run, argtys):
    """Compile (or load) the runner ``run`` for the sweep's argument types ``argtys`` (after
    its address table), then disable its compiling: one specialization, never another. A
    runner composed sweeps share is compiled once: Numba's ``compile`` of a disabled
    dispatcher raises even for a signature it has."""
    sig = (types.Array(types.int64, 1, "C"),) + tuple(argtys)
    if sig not in run.overloads:
        run.compile(sig)
    run.disable_compile()


def part_address(part, argtys):
    """Compile (or load) the part dispatcher ``part`` for a sweep's argument types ``argtys``
    (and the start record, int64); return its address."""
    pargs = tuple(argtys) + (types.int64,)
    part.compile(types.int64(*pargs))  # the return type call_part expects
    cres = part.overloads[pargs]
    return cres.library.get_pointer_to_function(cres.fndesc.mangled_name)


class Composed:
    """A sweep composed of pieces (:mod:`jittape.sweeps.composed`): ``run`` (the runner every
    op set shares, taking an address table indexed by opcode) and ``parts`` (``{opcode: part
    dispatcher}``); ``n_ops`` the table's length (every opcode a tape may hold).

    Called like the sweep. The first call compiles (loads) the parts and the runner for the
    argument types and binds this set's table to the runner. The runner is compiled for one
    specialization only and never again (as :class:`Partwise`'s): every table holds
    addresses of parts compiled for those types."""

    _runner_lock = threading.Lock()  # runners are shared between the composed sweeps

    def __init__(self, run, parts, n_ops):
        self.run, self.parts, self.n_ops = run, dict(parts), n_ops
        self.call = None
        self._lock = threading.Lock()

    def __call__(self, *args):
        if self.call is None:
            with self._lock:
                if self.call is None:
                    self.compile(tuple(map(_typeof, args)))
        return self.call(*args)

    def compile(self, argtys):
        """Compile (or load) the parts and the runner for argument types ``argtys``."""
        table = np.zeros(self.n_ops, np.int64)
        for code, part in self.parts.items():
            table[code] = part_address(part, argtys)
        with self._runner_lock:
            compile_runner(self.run, argtys)
        self.call = Bound(self.run, table)

    @property
    def signatures(self):
        return self.run.signatures

    @property
    def stats(self):
        """Cache hits and misses (Numba's ``stats``) of the runner and the parts together."""
        return _stats((self.run,) + tuple(self.parts.values()))


class Bound(functools.partial):
    """The runner with the parts' addresses bound (called at C speed, as a partial), with
    the runner's ``signatures``: what callers read off a compiled dispatcher."""

    @property
    def signatures(self):
        return self.func.signatures


def _stats(dispatchers):
    hits, misses = {}, {}
    for k, d in enumerate(dispatchers):
        hits.update({(k, sig): n for sig, n in d.stats.cache_hits.items()})
        misses.update({(k, sig): n for sig, n in d.stats.cache_misses.items()})
    return _Stats(hits, misses)


class _Stats:
    def __init__(self, cache_hits, cache_misses):
        self.cache_hits, self.cache_misses = cache_hits, cache_misses


def _typeof(value):
    from numba import typeof
    return typeof(value)

"""The replay path of scalar-output tapes: per-thread work buffers, the interpreter's
one-call replay, the compiled kernel, and when a tape moves from one to the other.

A tape replays through the Numba sweeps (the interpreter) until it is hot (:meth:`_hot`),
then compiles once into a kernel of its own (:mod:`jittape.compiler.kernel`): at once if the
kernel's machine code is in the cache (the load costs less than the replays it speeds up),
else in the compile process (:mod:`jittape.sweeps.compile_process`, so that the caller's
replays go on meanwhile without sharing the GIL with Numba) once the interpreted replays have
cost what the caller will pay for it, and the next replay after that loads it. Without the
compile process, the tiering rule of JIT compilers (HotSpot, V8): compile once the replays
have cost more than the compile would, so that compiling never costs more than about twice
what it saves. The first replay (which may compile the sweeps) is not counted. The first
:data:`TRIAL` compiled replays are then timed against the fastest interpreted one, and the
kernel is dropped if it lost: interpreting a tape of a few large array records (a data
matrix, BLAS products) can beat the generated kernel.
"""

import math
import sys
import threading
import time

import numpy as np

from ..sweeps import disk_cache, regions, tiers
from .kernel_call import (F64, PLAIN_METHODS, bound_kernel, entry_point, guard_failure,
                          kernel_result, one_vector_call)
from .recording import like_input
from ..compiler.frame import kernel_buffers
from ..compiler.kernel import CACHED_SECONDS, compile_seconds
from .._base.values import real_float64
from ..optable.table import codes
from ..sweeps.opsets import for_tape

#: Compiled replays timed against the interpreter's before a tape keeps the faster tier.
TRIAL = 8
#: Seconds of interpreted replays after which a tape's kernel compiles in the compile
#: process: a tape replayed a few times in a test or an optimizer's first steps does not
#: keep the compile process busy; a script timing a thousand calls does compile it.
EARLY_SECONDS = 0.02
#: Constants of at least this many elements keep garbage in the interpreter's adjoint
#: buffer instead of being zeroed per replay (fewer, larger spans to zero).
_SKIP_ZEROING = 4096
#: Tapes of at most this many value slots: each interpreted replay takes a new adjoint buffer.
_FRESH_SLOTS = 512


class _Work(threading.local):
    """One tape's replay buffers in one thread, made by the thread's first replay and reused
    by its later ones, so that a replay copies and zeroes only what it writes (the tape's
    constants, a data matrix say, are copied once per thread) and replays from several
    threads never share a buffer. ``val``/``adj``: the interpreter's value and adjoint
    buffers (``adj`` is zeroed per replay outside large constants, whose adjoint slots are
    never read); ``krun``: the compiled kernel bound to its own."""
    val = adj = None
    run = None  # the interpreted replay over val and adj (FastReplay._interpreter)
    krun = None  # the compiled kernel's (FastReplay._kernel_run)


def _spans_to_zero(t):
    """``[(lo, hi), ...]``: the value slots of tape arrays ``t`` outside constants of at
    least :data:`_SKIP_ZEROING` elements, as few spans."""
    spans, lo = [], 0
    for i in np.flatnonzero(t.op == codes.CONST):
        a, b = int(t.off[i]), int(t.off[i + 1])
        if b - a >= _SKIP_ZEROING:
            if a > lo:
                spans.append((lo, a))
            lo = b
    if t.val.shape[0] > lo:
        spans.append((lo, int(t.val.shape[0])))
    return spans


class FastReplay:
    """The replay machinery of :class:`jittape.Tape` (a mixin: it reads ``arrays``,
    ``out_id``, ``single``, ``treedefs`` and ``_pack``)."""

    # When replays compile the tape (:meth:`compile`): ``"auto"`` once it is hot (:meth:`_hot`),
    # in the compile process (or here, once loaded or without it), keeping the kernel only if
    # its first replays beat the interpreter's; ``True`` right after the first replay (which the
    # interpreter answers), in the foreground, kept unconditionally; ``False`` never. A tape
    # that does not compile is tried once.
    auto_compile = "auto"
    _kernel = None  # (kernel, val0, pool, nadj) from compile(); not pickled (machine code)
    _in_ids = None  # set with the rest of _prepare at the first fast replay
    _plain_shape = None
    _timed = 0  # interpreted replays timed
    _spent = 0.0  # their seconds, the first one's excepted
    _best = (math.inf, math.inf)  # fastest interpreted replay: (value only, with gradient)
    _tried = False  # a compile was started or refused: never again by itself
    _pending_kernel = None  # (Future, kernel) of a compile in the compile process
    _replay_ready = False  # no replay waits for a sweep's compile (jittape.api.taped)
    _cost = None  # estimated compile seconds, computed once the tape has cost the minimum
    _trial = None  # [fastest value-only, fastest gradient, calls] of a kernel on trial
    lost_trial = None  # (kernel, interpreter) fastest replays, if the interpreter won
    # the compiled replay of one float64 vector (plain_call), which the public replays call
    # first: made by the first such replay through _fast_plain once the kernel is off
    # trial, dropped with the work buffers
    _plain = None

    _TRANSIENT = ("_work", "_plain", "_val0_owner", "_kernel", "_trial", "_generated",
                  "_optimized", "_pending_kernel", "_replay_ready", "_tier_claim",
                  *PLAIN_METHODS)
    _TIERING = ("_timed", "_spent", "_best", "_tried", "_cost", "lost_trial")

    def __getstate__(self):
        state = self.__dict__.copy()
        dropped = self._TRANSIENT + (self._TIERING if self._kernel is not None else ())
        for name in dropped:  # buffers made again when needed; a compiled tape recompiles
            state.pop(name, None)
        return state

    def compile(self):
        """Compile the tape into one specialised Numba function (:mod:`jittape.compiler.kernel`).

        Later replays run it instead of the interpreter: scalar records become locals,
        elementwise array records fuse into single loops, repeated scalar bodies (Python
        loops) become loops over an index table. Takes about a second of Numba compile time
        the first time a tape of this structure is seen (then cached on disk); announced on
        stderr when longer. Returns ``self``.

        Raises
        ------
        ValueError
            For tapes that do not compile (see :func:`jittape.compiler.kernel.compile_tape`).
        """
        self._tried = True  # asked (or refused): not tried again by itself
        self._install(trial=False)
        if self._in_ids is None:
            self._prepare()
        shape = self._plain_shape
        if shape is not None and len(shape) == 1 and self._plain is None:  # (see _make_plain)
            self._make_plain(self._kernel_run(self._kernel), self._kernel, shape)
        return self

    def _install(self, trial):
        self._activate(self._kernel_module(), trial)

    def _kernel_module(self):
        """``(kernel, val0, pool, nadj)`` of the tape's compiled kernel: its module generated,
        written to the cache and imported, its machine code not yet loaded."""
        from ..compiler.kernel import compile_tape
        return compile_tape(self)

    def _activate(self, kernel, trial):
        """Load (or compile, here) ``kernel``'s machine code; later replays run it."""
        if self._kernel is not None:
            return
        t = self.arrays
        x0 = np.concatenate([t.val[t.off[i]:t.off[i + 1]] for i in t.inputs])
        module = sys.modules[kernel[0].py_func.__module__]
        buffers = kernel_buffers(kernel[0], kernel[1].copy(), np.empty(kernel[3]), kernel[2])
        disk_cache.FirstCall(module, "tape_kernel", f"a compiled tape of {self.n_records} "
                             f"records")(*buffers, x0, np.empty(x0.shape[0]))
        kernel = kernel[:4] + (entry_point(kernel[0]),)
        self.__dict__.pop("_work", None)  # buffers of another kernel's layout
        self._drop_plain()
        self._trial = [math.inf, math.inf, 0] if trial else None
        self._kernel = kernel  # last: replays in other threads see it

    def _tier_up(self, asked):
        """Compile the tape (once: the caller claimed it): ``asked`` (``auto_compile=True``)
        here and now, else in the compile process (:mod:`jittape.sweeps.compile_process`)
        unless its machine code is in the cache already, which loads here at once."""
        what = f"a tape of {self.n_records} records"
        try:
            kernel = self._kernel_module()
            module = sys.modules[kernel[0].py_func.__module__]
            if asked or not tiers.in_process() or disk_cache.compiled_once(module, "tape_kernel"):
                return self._activate(kernel, trial=not asked)
        except ValueError:  # refused by the compiler (too many statements): stays interpreted
            return
        except Exception as e:  # noqa: BLE001 (a replay must not fail because a compile did)
            return disk_cache.notice(f"compiling {what} failed ({type(e).__name__}: {e}); it "
                                     f"stays interpreted")
        job = {"kind": "kernel", "path": str(module.__jittape_path__)}
        self._pending_kernel = (tiers.submit(job, self._finish, what), kernel)

    def _finish(self):
        """Load the kernel the compile process compiled, or report its failure (the tape
        then stays interpreted)."""
        pending = self.__dict__.pop("_pending_kernel", None)
        if pending is None:
            return
        future, kernel = pending
        tiers.done(future)
        if future.exception() is not None:
            return disk_cache.notice(f"compiling a tape of {self.n_records} records failed in "
                                     f"the compile process ({future.exception()}); it stays "
                                     f"interpreted")
        self._activate(kernel, trial=True)

    def _claim(self):
        """Whether this call claims the tape's one tier-up (atomic: ``dict.setdefault``,
        several threads may find the tape hot at once)."""
        token = object()
        return self.__dict__.setdefault("_tier_claim", token) is token

    @property
    def compiled(self):
        """Whether replays run a compiled kernel rather than the interpreter."""
        return self._kernel is not None

    # --- work buffers ---
    def _buffers(self):
        """This thread's :class:`_Work` buffers of the tape."""
        work = self.__dict__.get("_work")
        return work if work is not None else self.__dict__.setdefault("_work", _Work())

    def _values(self):
        """This thread's value buffer: the recorded values the first time (constants in
        place), then as the last replay in this thread left it."""
        work = self._buffers()
        if work.val is None:
            work.val = self.arrays.val.copy()
        return work.val

    def _adjoints(self):
        """This thread's adjoint buffer, zeroed."""
        work = self._buffers()
        if work.adj is None:
            work.adj = np.zeros(self.arrays.val.shape[0])
        else:
            work.adj.fill(0.0)
        return work.adj

    def _kernel_run(self, kernel):
        """This thread's replay of ``kernel``: ``run(xin, gx) -> value`` over its work
        buffers (the first thread takes ``val0`` itself, others a copy: constant slots are
        never written), ``xin`` float64, 1-D and C-contiguous
        (:func:`~jittape.api.kernel_call.entry_point`);
        :func:`~jittape.api.kernel_call.kernel_result` calls it."""
        work = self._buffers()
        if work.krun is None:  # (compile() drops the runs of an earlier kernel)
            owner = self.__dict__.setdefault("_val0_owner", threading.get_ident())
            val = kernel[1] if owner == threading.get_ident() else kernel[1].copy()
            work.krun = bound_kernel(kernel, val)
        return work.krun

    # --- the tiers ---
    def _interpret(self, xin, want_grad):
        """Forward (and reverse) sweep from the concatenated inputs ``xin``: returns
        ``(failed guard or -1, value, concatenated input adjoints)``."""
        work = self._buffers()
        run = work.run
        if run is None:
            run = work.run = self._interpreter()
        return run(xin, want_grad)

    def _interpreter(self):
        """This thread's interpreted replay: a closure over the tape's columns and this
        thread's buffers, so that a call looks nothing up (the Python around the two sweeps
        is the call overhead that issue 12 bounds at 2 µs)."""
        t = self.arrays
        sw = t.sweeps or for_tape(t)  # (its attributes change once compiled: read per call)
        cols, spans, o, n, top = self._cols, self._spans, self._o_out, self._n, self.out_id + 1
        val = self._values()
        adj = self._adjoints()
        zero = _spans_to_zero(t)
        whole = zero == [(0, adj.shape[0])]
        calls = bool(t.calls)
        (lo, hi), single = spans[0], len(spans) == 1
        vin = val[lo:hi]
        # a short tape's replay takes a fresh seeded adjoint buffer and returns a view of its
        # inputs' slots (cheaper than zeroing, seeding and copying; it holds <= 4 KiB)
        fresh = single and not calls and adj.shape[0] <= _FRESH_SLOTS
        seeded = np.zeros(adj.shape[0]) if fresh else None
        if fresh:
            seeded[o] = 1.0

        def run(xin, want_grad):
            if single:
                vin[...] = xin
            else:
                pos = 0
                for a, b in spans:
                    val[a:b] = xin[pos:pos + b - a]
                    pos += b - a
            bad = regions.forward(t, val) if calls else sw.forward_sweep(*cols, val, 0, n)
            if bad >= 0 or not want_grad:
                return bad, val[o], None
            if fresh:
                g = seeded.copy()
                sw.reverse_sweep(*cols, val, g, 0, top)
                regions.without_dead(t, sw.reverse_sweep, val, g, top - 1)
                return bad, val[o], g[lo:hi]
            if whole:
                adj.fill(0.0)
            else:  # (large constants' slots keep garbage: no sweep reads them)
                for a, b in zero:
                    adj[a:b] = 0.0
            adj[o] = 1.0
            if calls:
                regions.reverse(t, val, adj, top - 1)
            else:
                sw.reverse_sweep(*cols, val, adj, 0, top)
                regions.without_dead(t, sw.reverse_sweep, val, adj, top - 1)
            if single:  # a copy: the buffer is the next replay's
                return bad, val[o], adj[lo:hi].copy()
            return bad, val[o], np.concatenate([adj[a:b] for a, b in spans])
        return run

    def _replay(self, xin, want_grad):
        """``(failed guard or -1, value, input adjoints or None)`` from the tape's tier."""
        work = self.__dict__.get("_work")
        if work is not None:  # a kernel off trial, already bound in this thread: run it
            krun = work.krun
            if krun is not None and self._trial is None and xin.flags.c_contiguous:
                return kernel_result(krun, xin, want_grad)
        kernel = self._kernel
        if kernel is None:
            pending = self._pending_kernel
            if pending is not None and pending[0].done():
                self._finish()
            if self.auto_compile and not self._tried:
                return self._timed_interpret(xin, want_grad)
            if self._kernel is None:
                return self._interpret(xin, want_grad)
            kernel = self._kernel
        if not xin.flags.c_contiguous:
            xin = xin.copy()  # what the kernel's entry point takes
        if self._trial is None:
            return kernel_result(self._kernel_run(kernel), xin, want_grad)
        return self._timed_kernel(kernel, xin, want_grad)

    def _timed_interpret(self, xin, want_grad):
        t0 = time.perf_counter()
        out = self._interpret(xin, want_grad)
        dt = time.perf_counter() - t0
        self._timed += 1
        if self._timed == 1 and self.auto_compile == "auto":
            return out  # the first replay may have compiled (or interpreted) the sweeps
        self._spent += dt
        if dt < self._best[want_grad]:
            self._best = (dt, self._best[1]) if not want_grad else (self._best[0], dt)
        asked = self.auto_compile is True  # asked for: now, after the first replay, kept
        if not self._tried and (asked or self._hot()) and self._claim():
            self._tried = True
            self._tier_up(asked)
        return out

    def _hot(self):
        """Whether the tape compiles now, from what its interpreted replays cost so far and
        what its compile is estimated to cost the caller (:func:`compile_seconds`, computed
        at the second replay): a kernel in the cache loads at once (a load is cheaper than
        the replays it speeds up, and a script that warms up with a few calls then runs the
        fastest form); a cold kernel compiles in the compile process once the replays have
        cost :data:`EARLY_SECONDS` (the compile costs the caller nothing there, and the next
        run finds the kernel in the cache); without the process, once they cost the compile."""
        if tiers.INTERPRETED_ONLY:  # JITTAPE_TIER=interpreted: no kernel unless asked
            return False
        if self._cost is None:
            try:
                self._cost = compile_seconds(self)
            except Exception as e:  # noqa: BLE001 (a replay must not fail because a compile did)
                self._cost = math.inf
                disk_cache.notice(f"compiling a tape of {self.n_records} records failed "
                                  f"({type(e).__name__}: {e}); it stays interpreted")
        if self._cost == math.inf:  # refused by the compiler, or its estimate failed:
            self._tried = True  # the tape stays interpreted, as the notice said
            return False
        if self._cost <= CACHED_SECONDS:
            return True
        if self._spent <= EARLY_SECONDS:  # (cheap: most calls stop here; a cold compile is
            return False  # estimated at MIN_COMPILE_SECONDS at least, far above it)
        return tiers.in_process() or self._spent > self._cost

    def _timed_kernel(self, kernel, xin, want_grad):
        """A compiled replay on trial against the interpreter (see :data:`TRIAL`)."""
        run = self._kernel_run(kernel)
        t0 = time.perf_counter()
        out = kernel_result(run, xin, want_grad)
        dt = time.perf_counter() - t0
        trial = self._trial
        if trial is not None:  # (None: another thread ended the trial meanwhile)
            trial[want_grad] = min(trial[want_grad], dt)
            trial[2] += 1
            if trial[2] >= TRIAL:
                self._end_trial(trial)
        return out

    def _end_trial(self, trial):
        """Keep the kernel unless the interpreter was faster in every kind of replay that
        both tiers ran."""
        self._trial = None
        both = [g for g in (0, 1) if trial[g] < math.inf and self._best[g] < math.inf]
        if both and all(trial[g] > self._best[g] for g in both):
            self.lost_trial = (tuple(trial[:2]), self._best)
            self._kernel = None
            self.__dict__.pop("_work", None)  # (its krun would still run the kernel)
            self._drop_plain()

    # --- the fast path of scalar outputs ---
    def _prepare(self):
        """What every fast replay needs, computed at the first one."""
        t = self.arrays
        self._in_shapes = [t.shape(i) for i in t.inputs]
        self._spans = [(int(t.off[i]), int(t.off[i + 1])) for i in t.inputs]
        self._cols = t.columns
        self._n = t.n_records
        regions.calls(t)  # t.calls: custom rules' records, run between the sweeps
        self._o_out = int(t.off[self.out_id])
        s = self._in_shapes
        # the shape of the one array argument whose gradient goes back as the kernel's or
        # the interpreter's own array (no structure to rebuild); None: another kind of tape
        self._plain_shape = s[0] if (self.single and self.treedefs is None and len(s) == 1
                                     and s[0] != ()) else None
        self._in_ids = np.asarray(t.inputs, dtype=np.int64)

    def _fast(self, xs, want_grad):
        """Scalar output: load, forward and reverse sweep with little Python per call."""
        if len(xs) == 1:
            x = xs[0]
            if type(x) is np.ndarray and x.dtype is F64 and x.shape == self._plain_shape:
                return self._fast_plain(x, want_grad)  # the common case: one float64 array
        if self._in_ids is None:
            self._prepare()
        return self._fast_general(xs, want_grad)

    def _fast_plain(self, x, want_grad):
        """:meth:`_fast` for one float64 array of the recorded shape: the kernel's or the
        interpreter's gradient array goes back as it is."""
        work, kernel = self.__dict__.get("_work"), self._kernel
        if (work is not None and x.ndim == 1 and work.krun is not None and kernel is not None
                and self._trial is None):
            if self._plain is None:  # (made now; the public replays try it before this)
                self._make_plain(work.krun, kernel, x.shape)
                out = self._plain(x, want_grad)
                if out is not None:
                    return out
        bad, value, g = self._replay(x if x.ndim == 1 else x.ravel(), want_grad)
        if bad >= 0:
            raise guard_failure(bad)
        if g is None or x.ndim == 1:
            return value, g
        return value, g.reshape(x.shape)

    def _make_plain(self, krun, kernel, shape):
        """The one-vector closure (``_plain``) and, for a kernel, the tape's own
        ``value``, ``gradient`` and ``value_and_gradient`` written around it
        (:func:`~jittape.api.kernel_call.plain_methods`)."""
        call, methods = one_vector_call(self, krun, kernel, shape)
        self.__dict__.update(methods)
        self._plain = call

    def _drop_plain(self):
        for name in ("_plain", *PLAIN_METHODS):
            self.__dict__.pop(name, None)

    def _fast_general(self, xs, want_grad):
        """:meth:`_fast` for floats, several or structured arguments, other dtypes."""
        shapes = self._in_shapes
        if len(xs) == 1:
            x = xs[0]
            if type(x) is not np.ndarray or x.dtype != np.float64 or x.shape != shapes[0]:
                x = self._check_input(x, shapes[0])
            xin = x.ravel() if x.ndim != 1 else x
        else:
            if len(xs) != len(shapes):
                raise TypeError(f"the tape was recorded with {len(shapes)} differentiated "
                                f"argument(s), got {len(xs)}")
            xin = np.concatenate([self._check_input(x, s).ravel() for x, s in zip(xs, shapes)])
        bad, value, g = self._replay(xin, want_grad)
        if bad >= 0:
            raise guard_failure(bad)
        if not want_grad:
            return value, None
        if self.single and self.treedefs is None:
            return value, like_input(float(g[0]) if shapes[0] == () else g.reshape(shapes[0]),
                                     xs[0])
        grads, pos = [], 0
        for s in shapes:
            m = int(np.prod(s))
            grads.append(float(g[pos]) if s == () else g[pos:pos + m].reshape(s))
            pos += m
        if self.treedefs is None:
            grads = [like_input(gi, x) for gi, x in zip(grads, xs)]
        return value, self._pack(grads)

    @staticmethod
    def _check_input(x, shape):
        if np.shape(x) != shape:
            raise ValueError(f"input shape {np.shape(x)} differs from the recorded shape "
                             f"{shape}; record the function again for this shape "
                             f"(jittape.taped does so automatically)")
        return real_float64(x, "an input")

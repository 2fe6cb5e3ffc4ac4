"""Calling a tape's compiled kernel from Python: its entry point, its result, and the one
closure that a compiled replay of the common case (one float64 vector) goes through.

A small compiled gradient (cmpad's det, Lennard-Jones with 13 atoms) costs less native time
than the Python around it, so this path is written for the per-call cost: what a call
checks is read from closure cells, not looked up on the tape (``benchmarks/
bench_overhead.py`` measures it).
"""

import functools
import threading

import numpy as np

from .._base.errors import GuardFailure
from ..compiler.frame import kernel_buffers
from ..optable.table import OPS, codes

F64 = np.dtype(np.float64)
_NO_GRAD = np.empty(0)  # the kernel's gx when no gradient is wanted (never written)


def guard_failure(record):
    return GuardFailure(
        f"guard at record {record} failed: the control flow recorded at the original point "
        f"differs at the new inputs; record the function again there.", record)


def entry_point(dispatcher):
    """The machine code of ``dispatcher``'s one signature, callable without the dispatcher's
    argument typing (a fifth of a small tape's call). Replays pass exactly its types:
    float64 buffers and pool made by the compiler, ``xin`` float64, 1-D and C-contiguous
    (:meth:`FastReplay._replay`); the dispatcher itself if it has other signatures."""
    sigs = dispatcher.signatures
    entry = getattr(dispatcher.overloads.get(sigs[0]), "entry_point", None) if sigs else None
    return entry if entry is not None and len(sigs) == 1 else dispatcher


def kernel_result(krun, xin, want_grad):
    """``(failed guard or -1, value, input adjoints or None)`` of the bound kernel ``krun``
    (:meth:`FastReplay._kernel_run`): the kernel fills a gradient array it is given and
    returns the value, nan with the guard's id in its adjoint buffer's last slot if one
    failed (:func:`jittape.compiler.kernel.compile_tape`)."""
    g = np.empty(xin.shape[0]) if want_grad else _NO_GRAD
    value = krun(xin, g)
    if value != value and krun.args and krun.args[1][-1] >= 0.0:  # (no buffers: no guard)
        return int(krun.args[1][-1]), 0.0, None
    return -1, value, (g if want_grad else None)


def bound_kernel(kernel, val):
    """``kernel``'s entry bound to the value buffer ``val`` (``val0`` or a copy of it), a new
    adjoint buffer and the pool, those it takes: ``run(xin, gx) -> value``."""
    adj = np.empty(kernel[3])
    adj[-1] = -1.0  # the failed guard's slot: none (kernel_result)
    return functools.partial(kernel[4], *kernel_buffers(kernel[0], val, adj, kernel[2]))


def one_vector_call(tape, krun, kernel, shape):
    """``(call, methods)`` for this thread's bound kernel ``krun`` of ``tape``: the closure
    of :func:`plain_call` and the tape's own methods of :func:`plain_methods`, both on
    ``krun``'s buffers, for this thread alone, or on buffers of their own, for every thread,
    if the kernel holds the GIL (:data:`jittape.compiler.kernel.HOLD_GIL_SLOTS`). A tape
    whose output is a constant and that checks nothing (the absolute zeros of cmpad's ode
    folded) runs no kernel: :func:`constant_call` and :func:`constant_methods`."""
    t, out = tape.arrays, tape.out_id
    if int(t.op[out]) == codes.CONST and not any(OPS[c].checks for c in set(t.op.tolist())):
        value = float(t.val[t.off[out]])
        return constant_call(value, shape), constant_methods(tape, value, shape)
    if kernel[0].targetoptions.get("nogil", True):
        spec = (krun.func, krun.args, shape, threading.get_ident())
    else:
        own = bound_kernel(kernel, kernel[1].copy())
        spec = (own.func, own.args, shape, None)
    return plain_call(*spec), plain_methods(tape, *spec)


def plain_call(entry, bufs, shape, owner):
    """``call(x, want_grad) -> (value, gradient or None)``: the kernel's ``entry`` run on
    work buffers ``bufs`` (``(val, adj, pool)``, or ``()`` for a kernel that takes none) at
    ``x``, an ndarray of float64 of the 1-D ``shape``, C-contiguous (the call checks type,
    dtype and ndim, the kernel size and stride: :func:`jittape.compiler.frame.input_check`).
    ``None`` for any other ``x``, for a nan value (a failed guard or the function's own nan)
    and in a thread other than ``owner`` (the thread whose buffers ``bufs`` are; ``None``:
    any thread, for a kernel that holds the GIL, whose callers take turns on buffers of the
    closure's own). The caller then takes its general path, which checks the input and
    tells a failed guard from a nan (on buffers no other thread runs the kernel on between
    the call and the read of its guard slot). The gradient is a new array of ``shape``."""
    n, (val, adj, pool) = shape[0], bufs or (None, None, None)
    empty, ndarray, ident = np.empty, np.ndarray, threading.get_ident

    def call(x, want_grad):  # (the kernel checks x's size and stride: input_check)
        if (type(x) is not ndarray or x.dtype is not F64 or x.ndim != 1
                or (owner is not None and ident() != owner)):
            return None
        g = empty(n) if want_grad else _NO_GRAD
        value = entry(val, adj, pool, x, g) if bufs else entry(x, g)
        if value != value:
            return None
        return value, (g if want_grad else None)
    return call


def constant_call(value, shape):
    """:func:`plain_call`'s closure for a tape whose output is the constant ``value`` (a
    float) and that has no guard: the same checks of ``x``, no kernel, a zero gradient."""
    ndarray, zeros = np.ndarray, np.zeros

    def call(x, want_grad):
        if type(x) is not ndarray or x.dtype is not F64 or x.shape != shape:
            return None
        return value, (zeros(shape) if want_grad else None)
    return call


#: The replays that :func:`plain_methods` gives a compiled tape of its own, with what each
#: returns: the value, the gradient, or both
PLAIN_METHODS = {"value": 0, "gradient": 1, "value_and_gradient": 2}


def plain_methods(tape, entry, bufs, shape, owner):
    """``{name: method}`` for the tape's ``__dict__``: :data:`PLAIN_METHODS` called on the
    tape itself, each the kernel's call of :func:`plain_call` written into it, so that
    ``tape.gradient(x)`` runs one Python frame (a method calling the closure cost 135 ns
    more, a fifth of cmpad det's gradient). Anything :func:`plain_call` refuses goes to the
    class's method of that name (the method holds the tape, as a bound method would: the
    cycle through the tape's ``__dict__`` is the garbage collector's)."""
    n, (val, adj, pool) = shape[0], bufs or (None, None, None)
    empty, ndarray, ident, cls = np.empty, np.ndarray, threading.get_ident, type(tape)

    def make(name, kind):
        general = getattr(cls, name)

        def method(*xs, batch=False, threads=1, _val=None):
            if len(xs) == 1 and not batch and _val is None:
                x = xs[0]
                if (type(x) is ndarray and x.dtype is F64 and x.ndim == 1
                        and (owner is None or ident() == owner)):
                    g = empty(n) if kind else _NO_GRAD
                    value = entry(val, adj, pool, x, g) if bufs else entry(x, g)
                    if value == value:
                        return value if kind == 0 else g if kind == 1 else (value, g)
            return _general(general, tape, xs, batch, threads, _val)
        return functools.update_wrapper(method, general)
    return {name: make(name, kind) for name, kind in PLAIN_METHODS.items()}


def constant_methods(tape, value, shape):
    """:func:`plain_methods` of a tape whose output is the constant ``value`` and that has
    no guard (:func:`constant_call`): its value, a zero gradient, no kernel."""
    ndarray, zeros, cls = np.ndarray, np.zeros, type(tape)

    def make(name, kind):
        general = getattr(cls, name)

        def method(*xs, batch=False, threads=1, _val=None):
            if len(xs) == 1 and not batch and _val is None:
                x = xs[0]
                if type(x) is ndarray and x.dtype is F64 and x.shape == shape:
                    return value if kind == 0 else zeros(shape) if kind == 1 else \
                        (value, zeros(shape))
            return _general(general, tape, xs, batch, threads, _val)
        return functools.update_wrapper(method, general)
    return {name: make(name, kind) for name, kind in PLAIN_METHODS.items()}


def _general(method, tape, xs, batch, threads, _val):
    """The class's ``method`` of ``tape``, for what the tape's own methods do not take."""
    if _val is None:
        return method(tape, *xs, batch=batch, threads=threads)
    return method(tape, *xs, batch=batch, threads=threads, _val=_val)

"""Sweeps of large op sets as part functions called through their addresses.

Numba's and LLVM's compile time grow faster than a function's size: the sweeps of all ops of
the table as one function each took 4-70 min of CPU and up to 10 GB to compile. So the sweep
of a large op set is split (:func:`split`) into part functions of at most
:data:`jittape.codegen.PART_LINES` lines of rule code each, and the sweep itself (the
*runner*) only loops over the records and dispatches each to the part holding its opcode, by
a binary search on the opcode (:func:`dispatch_lines`).

The runner must not call its parts as ordinary jitted functions: Numba links a callee's
LLVM IR into the caller and optimizes the whole again (LLVM then inlines the parts, each
having one call site), so the runner would compile as long as the single function did
(measured: the parts of the all-op forward sweep in 60 s, then the runner in 12 s more).
Instead :class:`Partwise` compiles each part on its own (its machine code is cached by
Numba like any function's) and passes the runner an array of the parts' addresses, which
:func:`call_part` calls: an indirect call that LLVM cannot inline, so the runner compiles in
about a second and nothing is compiled twice. The parts also compile in separate processes
(:mod:`jittape.warmjobs`). The interpreted tier runs the same runner calling its parts
directly.
"""

import functools

import numpy as np
from numba import types
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.extending import intrinsic


def split(items, limit):
    """Runs of ``items`` (``(item, weight)`` pairs, in order) of at most ``limit`` total
    weight each, a heavier item alone: a list of ``(items, weight)``."""
    parts = []
    for item, w in items:
        if parts and parts[-1][1] + w <= limit:
            parts[-1] = (parts[-1][0] + [item], parts[-1][1] + w)
        else:
            parts.append(([item], w))
    return parts


def dispatch_lines(call, firsts, lo=0, hi=None):
    """Lines running ``call(m)`` (a line) for the part ``m`` holding opcode ``opc``, given
    each part's first opcode ``firsts`` (increasing): a binary search, so a record costs a
    few comparisons whatever the number of parts."""
    hi = len(firsts) if hi is None else hi
    if hi - lo == 1:
        return [call(lo)]
    mid = (lo + hi) // 2
    return ([f"if opc < {firsts[mid]}:"] +
            ["    " + ln for ln in dispatch_lines(call, firsts, lo, mid)] + ["else:"] +
            ["    " + ln for ln in dispatch_lines(call, firsts, mid, hi)])


def partwise_source(name, args, doc, ret, bodies, firsts, hot_body, hot, jit,
                    python=False):
    """The source of sweep ``name`` (arguments ``args``, docstring ``doc``, final statement
    ``ret``) split into parts: ``bodies[m]`` is part ``m``'s loop body (the branches of its
    ops, whose opcodes start at ``firsts[m]``); ``hot_body`` the branches the runner keeps
    (of the opcodes ``hot``: :data:`jittape.codegen.HOT`); ``jit`` the decorator line;
    ``python``: for the interpreted tier (the runner calls its parts directly).

    A part runs a run of consecutive records of its opcodes (one call per run, not per
    record) and returns the record to go on with, or ``-2 - i`` if record ``i`` failed (a
    guard, a missing second-order rule: ``return i`` in a branch).
    """
    down = "last" in args  # the reverse sweeps run from record last down to 0
    pargs = args.replace(", last", "")
    step, more = ("i -= 1", "i >= 0") if down else ("i += 1", "i < t_op.shape[0]")
    out = [] if python else ["from jittape.partition import Partwise, call_part", "", ""]
    for m, body in enumerate(bodies):
        lo, hi = firsts[m] if m else -1, firsts[m + 1] if m + 1 < len(firsts) else 1 << 31
        ends = ([f"opc < {lo}"] if m else []) + ([f"opc >= {hi}"] if hi < 1 << 31 else []) + \
            [f"opc == {c}" for c in hot if lo <= c < hi]  # the runner's ops end a run too
        out += [jit, f"def {name}_{m}({pargs}, i):", f"    while {more}:",
                "        opc = t_op[i]"]
        if ends:
            out += [f"        if {' or '.join(ends)}:", "            return i"]
        out += ["        " + _failure(ln) for ln in body]
        out += [f"        {step}", "    return i", "", ""]
    if python:
        head = [f"def {name}({args}):"]
        call = f"{name}_{{}}({pargs}, i)"
    else:
        head = [jit, f"def {name}_run(parts, {args}):"]
        call = f"call_part(parts[{{}}], ({pargs}, i))"
    head += [f'    """{doc}"""', f"    i = {'last' if down else 0}", f"    while {more}:",
             "        opc = t_op[i]"]
    calls = dispatch_lines(lambda m: "i = " + call.format(m), firsts)
    calls += ["if i < -1:", "    return -2 - i"] if ret == "return -1" else []
    if hot_body:  # an inner loop over the runner's own records: no call in its body
        loop = ["while True:"] + ["    " + ln for ln in hot_body + ["else:", "    break",
                                                                   step, f"if not {more}:",
                                                                   "    break",
                                                                   "opc = t_op[i]"]]
        loop += [f"if not {more}:", "    break"] + calls
    else:
        loop = calls
    tail = [] if python else [
        "", "", f"{name} = Partwise({name}_run, "
        f"({', '.join(f'{name}_{m}' for m in range(len(bodies)))},), last={down})"]
    return "\n".join(out + head + ["        " + ln for ln in loop] + [f"    {ret}"] +
                      tail) + "\n"


def _failure(line):
    """A branch line with its ``return i`` (record i failed) as a part returns it."""
    code = line.lstrip()
    if code == "return i" or code.startswith("return i  #"):
        return line[:len(line) - len(code)] + "return -2 - i" + code[len("return i"):]
    return line


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
    ``parts`` (dispatchers taking the sweep's arguments but ``last``, then the record
    ``i`` to start at).

    The first call fixes the argument types (those of the tape columns and buffers: one
    specialization, as for a single-function sweep), compiles or loads the parts for them and
    the runner for them, and disables further compiles of the runner, so that it is never
    called with addresses of parts compiled for other types (Numba converts arguments to
    the compiled types or raises TypeError).
    """

    def __init__(self, run, parts, last):
        self.run, self.parts, self.last = run, tuple(parts), last
        self.call = None  # once compiled: the runner with the addresses bound
        self.__doc__ = run.__doc__

    def __call__(self, *args):
        if self.call is None:
            self.compile(tuple(map(_typeof, args)))
        return self.call(*args)

    def compile(self, argtys):
        """Compile (or load) the parts and the runner for argument types ``argtys``."""
        addresses = np.array([self.compile_part(m, argtys) for m in range(len(self.parts))],
                             np.int64)
        self.run.compile((types.Array(types.int64, 1, "C"),) + tuple(argtys))
        self.run.disable_compile()
        self.call = functools.partial(self.run, addresses)  # steady state: no Python frame

    def compile_part(self, m, argtys):
        """Compile (or load) part ``m`` for the sweep's argument types ``argtys``; returns its
        address. (:mod:`jittape.warmjobs` calls this in worker processes: the same
        signature, so the same entry of Numba's cache.)"""
        pargs = tuple(argtys[:-1] if self.last else argtys) + (types.int64,)
        part = self.parts[m]
        part.compile(types.int64(*pargs))  # the return type call_part expects
        cres = part.overloads[pargs]
        return cres.library.get_pointer_to_function(cres.fndesc.mangled_name)

    @property
    def signatures(self):
        return self.run.signatures

    @property
    def stats(self):
        """Cache hits and misses (Numba's ``stats``) of the runner and the parts together."""
        hits, misses = {}, {}
        for k, d in enumerate((self.run,) + self.parts):
            hits.update({(k, sig): n for sig, n in d.stats.cache_hits.items()})
            misses.update({(k, sig): n for sig, n in d.stats.cache_misses.items()})
        return _Stats(hits, misses)


class _Stats:
    def __init__(self, cache_hits, cache_misses):
        self.cache_hits, self.cache_misses = cache_hits, cache_misses


def _typeof(value):
    from numba import typeof
    return typeof(value)

"""Sweeps of large op sets as part functions called through their addresses.

Numba's and LLVM's compile time and memory grow faster than a function's size: as one
function each, the sweeps of all ops of the table took 72 s (forward) and 170 s (reverse) of
CPU and 1.1 and 2.3 GB to compile, the HVP sweep over half an hour and 9-10 GB. So the sweep
of a large op set is split (:func:`split`) into part functions of at most
:data:`jittape.sweeps.codegen.PART_LINES` lines of rule code each, and the sweep itself (the
*runner*) keeps the branches of the ops of scalar code (:data:`jittape.sweeps.codegen.HOT`) and
hands every other record to the part holding its opcode, found by a binary search on the
opcode (:func:`dispatch_lines`). Measured the same way, split: 52 s and 0.5 GB (forward),
73-93 s and 0.6 GB (reverse), 277 s and 1.0 GB (HVP, of which 150 s for ``svd`` alone).

The runner must not call its parts as ordinary jitted functions: Numba links a callee's LLVM IR
into the caller and optimizes the whole again (LLVM then inlines the parts, each having one call
site), so the runner would compile as long as the single function did (measured: the parts of
the all-op forward sweep in 60 s, then the runner in 12 s more). Instead
:class:`jittape.sweeps.parts_runtime.Partwise` compiles each part on its own (its machine code
is cached by Numba like any function's) and passes the runner an array of the parts' addresses,
which :func:`jittape.sweeps.parts_runtime.call_part` calls: an indirect call that LLVM cannot
inline, so the runner compiles in 1-10 s (with its own branches) and nothing is compiled twice.
The parts also compile in separate processes (:mod:`jittape.sweeps.warmup`). The interpreted
tier runs the same runner calling its parts directly.

Speed: a call costs ~30 ns, so a part runs a whole run of consecutive records of its ops,
and the runner keeps the ops that scalar tapes alternate between. Measured per record on
the LJ38 loops' tape (12,768 scalar records), all-op sweeps: forward 5.1 ns split vs 4.2 as
one function, reverse 4.5 vs 5.7-6.2; tapes of array records: no difference measured.
"""

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
    (of the opcodes ``hot``: :data:`jittape.sweeps.codegen.HOT`); ``jit`` the decorator line;
    ``python``: for the interpreted tier (the runner calls its parts directly).

    A part runs a run of consecutive records of its opcodes (one call per run, not per
    record) and returns the record to go on with, or ``-2 - i`` if record ``i`` failed (a
    guard, a missing second-order rule: ``return i`` in a branch).
    """
    down = name in ("reverse_sweep", "hvp_sweep")  # records hi-1 down to lo
    out = [] if python else ["from jittape.sweeps.parts_runtime import Partwise, call_part", "", ""]
    for m, body in enumerate(bodies):
        lo, hi = firsts[m] if m else -1, firsts[m + 1] if m + 1 < len(firsts) else 1 << 31
        ends = ([f"opc < {lo}"] if m else []) + ([f"opc >= {hi}"] if hi < 1 << 31 else []) + \
            [f"opc == {c}" for c in hot if lo <= c < hi]  # the runner's ops end a run too
        out += part_lines(f"{name}_{m}", args, down, ends, body, jit)
    if python:
        head = [f"def {name}({args}):"]
        call = f"{name}_{{}}({args}, i)"
    else:
        head = [jit, f"def {name}_run(parts, {args}):"]
        call = f"call_part(parts[{{}}], ({args}, i))"
    calls = dispatch_lines(lambda m: "i = " + call.format(m), firsts)
    tail = [] if python else [
        "", "", f"{name} = Partwise({name}_run, "
        f"({', '.join(f'{name}_{m}' for m in range(len(bodies)))},))"]
    return "\n".join(out + runner_lines(head, doc, down, ret, calls, hot_body) + tail) + "\n"


def _loop(down):
    """``(step, condition)`` of a sweep's record loop (down: records hi-1 to lo)."""
    return ("i -= 1", "i >= lo") if down else ("i += 1", "i < hi")


def part_lines(fname, args, down, ends, body, jit):
    """The lines of part function ``fname(args, i)``: it runs records from ``i`` on until one
    meets a condition of ``ends`` (returning that record) or the range ends, each through
    ``body`` (the branches of the part's ops); ``return -2 - i`` for a failed record."""
    step, more = _loop(down)
    out = [jit, f"def {fname}({args}, i):", f"    while {more}:", "        opc = t_op[i]"]
    if ends:
        out += [f"        if {' or '.join(ends)}:", "            return i"]
    out += ["        " + _failure(ln) for ln in body]
    return out + [f"        {step}", "    return i", "", ""]


def runner_lines(head, doc, down, ret, calls, hot_body):
    """The lines of a runner: ``head`` (decorator and ``def``), its docstring ``doc``, the
    loop over the records running ``calls`` (lines: a part's call, setting ``i``) for each
    run of records and the ``hot_body`` branches inline, and the final statement ``ret``."""
    step, more = _loop(down)
    head = head + [f'    """{doc}"""', f"    i = {'hi - 1' if down else 'lo'}",
                   f"    while {more}:", "        opc = t_op[i]"]
    calls = calls + (["if i < -1:", "    return -2 - i"] if ret == "return -1" else [])
    if hot_body:  # an inner loop over the runner's own records: no call in its body
        loop = ["while True:"] + ["    " + ln for ln in hot_body + ["else:", "    break",
                                                                   step, f"if not {more}:",
                                                                   "    break",
                                                                   "opc = t_op[i]"]]
        loop += [f"if not {more}:", "    break"] + calls
    else:
        loop = calls
    return head + ["        " + ln for ln in loop] + [f"    {ret}"]


def _failure(line):
    """A branch line with its ``return i`` (record i failed) as a part returns it."""
    code = line.lstrip()
    if code == "return i" or code.startswith("return i  #"):
        return line[:len(line) - len(code)] + "return -2 - i" + code[len("return i"):]
    return line

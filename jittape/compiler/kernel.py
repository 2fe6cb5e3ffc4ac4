"""Compile a tape into straight-line Numba code: the interpreter loop, unrolled and fused.

The interpreter (:mod:`jittape.sweeps.opsets`) pays a dispatch per record and a pass over memory
per array record. For a tape that is replayed many times, :func:`compile_tape` generates one
Python function holding the whole forward and reverse sweep, specialised to the tape:

* **scalar records** become local variables ``v<i>`` with adjoints ``g<i>``, so scalar code
  (Python loops over ``x[i]``) turns into straight-line arithmetic that LLVM optimises;
* **consecutive elementwise array records of one size** (including contiguous slices,
  comparisons and ``where``) fuse into a single loop. The forward loop stores only the values
  used outside the group; the reverse loop recomputes the group's primals per element and
  then runs the group's adjoints backwards for that element (recomputation instead of
  storage, Griewank & Walther, "Evaluating Derivatives", 2nd ed., sec. 12.1). A ``sum`` over
  all elements right after a group fuses into it as an accumulator, and a ``sum`` over its
  last axes (LJ's ``np.sum(d**2, axis=-1)``) as one accumulator per row, the loop nested
  over rows. The loop that writes an array's adjoint before any other code of the reverse
  sweep assigns it (``=``), and the kernel does not zero those slots;
* the adjoint of a row-broadcast operand of a matrix product (``mu`` in ``(X - mu) @ W``)
  is summed over the rows before the product, never formed in full
  (:mod:`jittape.compiler.products`);
* every other record calls its op's own forward and reverse kernels (the op table's
  structured entries) with constant offsets.

Only values that some code reads from memory get a slot in the kernel's (compact) value and
adjoint buffers; everything else lives in registers. Like the sweeps, the kernel is generated
from the op table alone (no op is named here): elementwise records call ``f_<op>`` and
``d_<op>``, functions written from the entry's value and partial expressions; what may fuse
is the entry's ``fusion``. The module is self-contained and loaded through
:mod:`jittape.sweeps.disk_cache` under a hash of its source, so Numba's ``cache=True`` keeps the
machine code across processes.

Numba's compile time grows with the length of a function (about 2 ms per generated
statement), so a long scalar tape (a Python loop over ``x[i]``) is *rerolled*
(:mod:`jittape.compiler.reroll`): the repeated body of its loop is emitted once, as a loop over an
index table, and the kernel calls it once per run of iterations. Lennard-Jones pairs at
N = 38 (12,768 records) become one 18-record body and a kernel of under 300 statements.
:data:`MAX_STATEMENTS` bounds what compiles; longer kernels (tapes without repeats) are
replayed by the interpreter.
"""

import collections
import dataclasses
import math

import numpy as np

from ..sweeps import disk_cache
from ..sweeps.codegen import HEADER, helper_source, literal as _lit, rule_args as _args, rule_roots
from ..optable.table import OPS, codes
from .fusion import Fused, partial_calls, plan
from .loop_source import loops_source
from .layout import ELEMENTWISE_KIND, Layout
from .reroll_emit import Rerolling
from .products import reverse_lines, row_biases
from . import shared
from .copies import copy_code
from .frame import KERNEL_DEF, batch_source, input_check, without_buffers
from ..tape.optimize import optimize


#: Custom rules' regions and calls, and checkpoints: not compiled (read from the table)
_REGIONS = sorted(op.code for op in OPS if op.kind in ("region", "call"))
#: Tapes whose kernel would exceed this many statements are not compiled (about 2 ms of
#: Numba compile time each); the interpreter replays them.
MAX_STATEMENTS = 1500
#: Tapes of more records are not compiled (the code generator is Python: ~10 us a record).
MAX_RECORDS = 200_000
#: Kernels of at most this many value and adjoint slots hold the GIL while they run (a call of
#: a few us, of which releasing and taking back the GIL would cost 65 ns); their callers in
#: several threads then take turns on one set of work buffers
#: (:func:`jittape.api.kernel_call.plain_call`). Larger ones release it, so threads overlap.
HOLD_GIL_SLOTS = 4096


class _Gen(Layout, Rerolling):
    """Builds the source of one tape's kernel."""

    def __init__(self, t, out_id, names=None):
        self.t = t
        self.out = out_id
        self.names = names  # the records' ids in the tape as recorded (guard failures)
        n = t.n_records
        self.size = np.diff(t.off).astype(np.int64)
        self.o = t.off
        self.fwd, self.rev = [], []  # lists of (indent, line); rev is built backwards
        # consumers of each record, by kind: who reads it from the value buffer
        self.consumers = [[] for _ in range(n)]
        for i in range(n):
            for j in self._operands(i):
                self.consumers[j].append(i)
        self.group_of = {}  # record -> group id (fused elementwise array records)
        self.groups = []  # group id -> (members, fused sum record or -1)
        self._partition()
        self.assigned = set()  # records whose adjoint a fused loop writes first ("=")
        self.needed, self.stored = set(), set()  # members the reverse loops recompute/load
        for members, _ in self.groups:
            needed, stored = plan(t, members)
            self.needed |= needed
            self.stored |= stored
        self._reroll()
        # products whose row-broadcast operand's adjoint is summed first (products.py): the
        # operand's and its view's own reverse code is not emitted, nor their slots zeroed
        self.biases = row_biases(self)
        self.skip_reverse = {r for b in self.biases.values() for r in (b.biased, b.view)}
        self._layout()
        self._constants_last()

    # --- emission ---
    def emit(self):
        t = self.t
        n = t.n_records
        gdone = set()
        self.guarded = False  # a guard's code writes the failed guard's slot
        self.table = self.tables(len(t.pool) + n)
        hoisted = set(self.hoisted)
        for i in self.hoisted:
            self._record(i)
        for i in range(n):
            if i in self.seg_at:
                self._segment(self.seg_at[i])
            if i in self.seg_of or i in self.unused or i in hoisted:
                continue
            g = self.group_of.get(i)
            if g is not None:
                if g not in gdone:
                    gdone.add(g)
                    self._group(g)
                continue
            self._record(i)
        # val and adj are the calling thread's work buffers, reused across replays: the
        # constants stay in val, every other slot is written before it is read
        lines = [KERNEL_DEF[0], input_check(sum(int(self.size[i]) for i in t.inputs)),
                 "    want_grad = gx.shape[0] > 0"]
        if self.guarded:  # (the slot's -1 from the buffer's making lasts where none can fail)
            lines.append(f"    adj[{self.bad_slot}] = -1.0  # no guard failed (yet)")
        if self.segments:  # (the rerolled loops' scratch lies behind the adjoints)
            lines.append(f"    jac = adj[{self.nadj}:]  # saved values, preaccumulated partials")
        lines.append(f"    offs = pool[{len(t.pool)}:]  # compact value offsets by record id")
        pos = 0
        for i in t.inputs:
            m = int(self.size[i])
            if i in self.bo:  # a kernel reads this input from the buffer
                lines.append(f"    val[{self.bo[i]}:{self.bo[i] + m}] = xin[{pos}:{pos + m}]")
            pos += m
        lines += ["    " * (d + 1) + s for d, s in self.fwd]
        outv = f"v{self.out}"
        lines.append(f"    if not want_grad:\n        return {outv}")
        lines += ["    " + ln for ln in self.zeroing()]
        lines.append("    gx[:] = 0.0")
        lines += [f"    g{i} = 0.0" for i in range(n) if self._local(i)]
        lines.append(f"    g{self.out} = 1.0")
        lines += ["    " * (d + 1) + s for d, s in reversed(self.rev)]
        for i in t.inputs:
            m, p = int(self.size[i]), self.xp[i]
            if self._scalar(i):
                lines.append(f"    gx[{p}] += g{i}")
            if i in self.bo:  # adjoints that kernels accumulated in the buffer
                lines.append(f"    gx[{p}:{p + m}] += adj[{self.bo[i]}:{self.bo[i] + m}]")
        lines.append(f"    return {outv}")
        sites = collections.Counter(run[0].body for run in self.runs.values())
        self.loop_source, count = loops_source(self.bodies, sites)
        self.n_statements = len(lines) + count
        return "\n".join(without_buffers(lines)) + "\n"

    def F(self, line, d=0):
        self.fwd.append((d, line))

    def R(self, lines):
        """Reverse code of one record: appended in reverse order, so given top to bottom."""
        for d, s in reversed(lines):
            self.rev.append((d, s))

    def _record(self, i):
        """A record outside any fused group."""
        t, o, opc = self.t, self.bo.get(i, -1), int(self.t.op[i])
        a, b, k, c = int(t.a[i]), int(t.b[i]), int(t.k[i]), float(t.c[i])
        if self.size[i] == 0:
            return  # an empty array (arithmetic on an empty slice): nothing to compute
        if opc == codes.INPUT:
            if self._scalar(i):
                self.F(f"v{i} = xin[{self.xp[i]}]")
            return
        if opc == codes.CONST:
            if self._scalar(i):
                self.F(f"v{i} = {_lit(t.val[t.off[i]])}")
            return
        if self._scalar(i) and opc in ELEMENTWISE_KIND:
            self._scalar_record(i, OPS[opc], a, b, k, c)
            if self._buffer_consumers(i):
                self.F(f"val[{self.bo[i]}] = v{i}")  # a kernel reads it from the buffer
            return
        self._generic(i, OPS[opc], o, int(self.size[i]), a, b, k, c)

    def _scalar_record(self, i, op, a, b, k, c):
        rev = []
        if self._buffer_consumers(i):
            rev.append((0, f"g{i} += adj[{self.bo[i]}]"))
        if op.fusion == "slice" and self._scalar(a) and a not in self.bo and a not in self.xp:
            self.F(f"v{i} = v{a}")  # a size-1 view of a size-1 record: that record's local
            if not self.is_const(a):
                rev.append((0, f"g{a} += g{i}"))
        elif op.fusion == "slice":  # x[i] of an array: read straight from the value buffer
            self.F(f"v{i} = {self.V(a, k)}")
            if not self.is_const(a):  # constants get no adjoint slot
                rev.append((0, f"{self.A(a, k)} += g{i}"))
        else:
            args = _args(op, f"v{a}", f"v{b}", f"v{k}", c)
            self.F(f"v{i} = f_{op.name}({args})")
            if op.differentiable:
                rev += [(0, ln) for ln in partial_calls(
                    op, args, f"v{i}", "d", [self.is_const(j) for j in (a, b, k)])]
                rev += [(0, f"g{j} += g{i} * d{n}") for n, j in enumerate((a, b, k))
                        if n < len(op.partials) and op.partials[n] != "0.0"
                        and not self.is_const(j)]
        self.R(rev)

    def _generic(self, i, op, o, n, a, b, k, c):
        """Records computed by the op's own kernels, with constant offsets."""
        t = self.t
        ia = self.bo.get(a, 0)
        ib = self.bo.get(b, 0) if b >= 0 else 0
        name = i if self.names is None else self.names[i]
        if op.checks and n == 1:  # a scalar guard compares with a literal
            self.F(f"if v{a} != {_lit(t.val[t.off[i]])}:")
            self._failed(name)
            return
        pre = [(0, f"adj[{o}] += g{i}")] if self._scalar(i) else []  # local -> kernel
        # int64(...): a literal int argument makes Numba compile the helper (and what it
        # calls) once per call site, specialised to that value. The LAPACK-calling linalg
        # helpers cost their compile, not their offsets: one machine code per signature,
        # cached (jittape.compiler.shared). The others keep their literals, which LLVM
        # folds (as int64s: GMM d=2 K=5's gradient 10% slower, its matmul's small loops).
        w = "int64({})" if shared.calls_lapack(op) else "{}"
        args = f"{', '.join(w.format(v) for v in (o, n, ia, ib, k))}, {_lit(c)}, pool, offs"
        if op.checks:
            self.F(f"if {op.forward.__name__}(val, {args}):")
            self._failed(name)
            return
        moved = copy_code(self, op, o, k) if op.copies is not None else None
        if moved is not None:  # literal copies forward, their transpose backward
            for d, line in moved[0]:
                self.F(line, d)
            rev = moved[1]
        else:
            self.F(f"{op.forward.__name__}(val, {args})")
            rev = []
            if op.reverse is not None:
                bias = self.biases.get(i)
                ca = a < 0 or int(t.op[a]) == codes.CONST or bias is not None
                cb = b < 0 or int(t.op[b]) == codes.CONST
                rev = [(0, f"{op.reverse.__name__}(val, adj, {args}, {ca}, {cb})")]
                rev += reverse_lines(self, bias, args) if bias is not None else []
        if self._scalar(i):
            self.F(f"v{i} = val[{o}]")
        self.R(pre + rev)

    @property
    def nogil(self):
        """Whether the kernel releases the GIL (see :data:`HOLD_GIL_SLOTS`)."""
        return self.nbuf + self.bad_slot + 1 > HOLD_GIL_SLOTS

    @property
    def bad_slot(self):
        """The adjoint buffer's last slot, behind the adjoints and the rerolled loops'
        scratch: the failed guard's id, or -1 (:func:`compile_tape`)."""
        return self.nadj + self.njac

    def _failed(self, name):
        """A failed guard: its record id in the adjoint buffer's last slot, and nan."""
        self.guarded = True
        self.F(f"adj[{self.bad_slot}] = {name}", 1)
        self.F("return np.nan", 1)

    def _group(self, gid):
        """One fused loop forward, one fused loop backward."""
        members, fsum = self.groups[gid]
        g = Fused(self, members, fsum)
        body = [g.element(m) for m in members]
        self._group_forward(g, body)
        self.R(g.reverse(body))

    def _group_forward(self, g, body):
        t, fsum = self.t, g.fsum
        if fsum >= 0 and not g.rows:
            self.F(f"s{fsum} = 0.0")
        head, d = g.loop_head(f"s{fsum} = 0.0")  # (with rows: one accumulator per row)
        for indent, line in head:
            self.F(line, indent)
        for line in body:
            self.F(line, d)
        for m in g.members:
            if self._buffer_consumers(m) or m in self.stored:
                self.F(f"val[{self.bo[m]} + j] = v{m}", d)
        if fsum < 0:
            return
        self.F(f"s{fsum} += v{int(t.a[fsum])}", d)
        if g.rows:
            self.F(f"val[{self.bo[fsum]} + jo] = s{fsum}", 1)
            return
        self.F(f"v{fsum} = s{fsum}")
        if self._buffer_consumers(fsum):
            self.F(f"val[{self.bo[fsum]}] = v{fsum}")


def optimized(tape):
    """``(arrays, out_id, report)``: what the kernel of ``tape`` is generated from, the tape
    optimized (:func:`jittape.tape.optimize.optimize`; made once per tape)."""
    done = tape.__dict__.get("_optimized")
    if done is None:
        done = tape._optimized = optimize(tape.arrays, tape.out_id)
    return done


def kernel_source(tape):
    """The generated Python source of ``tape``'s compiled kernel, after the loop functions
    of its rerolled bodies if any (for reading and tests)."""
    gen, kernel = _generate(tape, checked=False)
    return (gen.loop_source + "\n\n" if gen.loop_source else "") + kernel


#: Seconds a compile costs at least (measured cold: 0.7-1.0 s), and to load from the cache.
MIN_COMPILE_SECONDS = 1.0
CACHED_SECONDS = 0.2
#: Seconds per loop of a kernel on top of its statements' 2 ms: LLVM versions and
#: vectorizes each fused loop. Measured on cmpad's ode tapes (1, 2 and 4 RK4 steps: 26, 42,
#: 74 loops, 178-667 statements) at a load average of 7-8 on 2 cores: 20, 35 and 67 s cold,
#: about 0.95 s per further loop; the figure here scales that by the load (about 4 compiles
#: sharing each core). The 303-record tape of 9 steps (154 loops) compiled in 230 s.
LOOP_SECONDS = 0.25


def kernel_statements(tape):
    """The number of statements of ``tape``'s kernel (what its compile time grows with).

    Raises
    ------
    ValueError
        As :func:`compile_tape`, for a tape that does not compile."""
    return _generate(tape)[0].n_statements


def compile_seconds(tape):
    """Estimated seconds :func:`compile_tape` takes: :data:`CACHED_SECONDS` if the kernel's
    machine code is in the cache, else :data:`MIN_COMPILE_SECONDS` plus about 2 ms per
    statement and :data:`LOOP_SECONDS` per loop (Numba's compile time, measured); inf for
    a tape that does not compile.
    Generates the kernel's source (about 10 us a record), kept for :func:`compile_tape`."""
    try:
        gen, body = _generate(tape)
    except ValueError:
        return math.inf
    if gen.n_statements > MAX_STATEMENTS:
        return math.inf
    tape._generated = (gen, body)  # what a compile of the tape, likely next, starts from
    if disk_cache.compiled_before("jittape_tape", module_source(tape, gen, body, True),
                                "tape_kernel"):
        return CACHED_SECONDS
    loops = body.count(" for ") + gen.loop_source.count(" for ")
    return MIN_COMPILE_SECONDS + 0.002 * gen.n_statements + LOOP_SECONDS * loops


def _generate(tape, checked=True):
    """``(generator, kernel body)`` of the optimized tape, or of the tape as recorded when
    that kernel is shorter (merged records can break a loop's repeated pattern, which
    rerolling needs); :func:`optimized` then gives the recorded tape."""
    done = tape.__dict__.pop("_generated", None)
    if done is not None:
        return done
    if checked:
        _check(tape)
    arrays, out, report = optimized(tape)
    gen = _Gen(arrays, out, report.kept)
    body = gen.emit()
    if report.kept is not None:
        plain = _Gen(tape.arrays, tape.out_id)
        plain_body = plain.emit()
        if plain.n_statements < gen.n_statements:
            tape._optimized = (tape.arrays, tape.out_id, dataclasses.replace(
                report, records_after=report.records_before, kept=None,
                skipped="its kernel would be longer (a rerolled loop broken by merging)"))
            return plain, plain_body
    return gen, body


def _check(tape):
    if tape.out_shape != () or tape.out_id < 0:
        raise ValueError("only tapes with a scalar output that depends on the inputs compile")
    if tape.n_records > MAX_RECORDS:  # generating the kernel alone would take seconds
        raise ValueError(f"the tape has {tape.n_records} records, over "
                         f"jittape.compiler.kernel.MAX_RECORDS = {MAX_RECORDS}")
    if np.isin(tape.arrays.op, _REGIONS).any():
        raise ValueError("the tape holds a custom derivative rule or a checkpoint (a region "
                         "and its call record, jittape.sweeps.regions): it replays through the "
                         "interpreter")


def _rule_functions(ops):
    """``f_<name>(x, y, q, c)`` and ``d_<name>(x, y, q, c, z) -> (dz/dx, dz/dy, dz/dq)`` of
    each elementwise op, from its entry (plain calls: LLVM inlines them, and Numba-level
    inlining in straight-line code multiplies compile time)."""
    out = []
    for op in ops:
        if not op.elementwise:
            continue
        d = ", ".join(f"({p})" for p in (list(op.partials) + ["0.0"] * 3)[:3])
        out.append('@njit(error_model="numpy")\n'
                   f"def f_{op.name}(x, y, q, c):\n    return {op.value}\n\n\n"
                   '@njit(error_model="numpy")\n'
                   f"def d_{op.name}(x, y, q, c, z):\n    return {d}\n")
        for n, p in enumerate(op.partials):  # one partial alone (compiled when called)
            if p != "0.0" and len(op.partials) > 1:
                out.append('@njit(error_model="numpy")\n'
                           f"def d{n}_{op.name}(x, y, q, c, z):\n    return {p}\n")
    return "\n\n".join(out)


def module_source(tape, gen, body, cache=True):
    """The whole module of a compiled tape: the rules it names, the functions of its
    rerolled bodies (``gen.loop_source``), then the kernel ``body``, which releases the GIL
    unless it is small (:data:`HOLD_GIL_SLOTS`)."""
    ops = [OPS[c] for c in sorted(set(optimized(tape)[0].op.tolist()))]
    rows = [op.row_reverse[1] for op in ops if op.row_reverse is not None and
            f"{op.row_reverse[1].__name__}(" in body]  # (products.py, where the kernel calls)
    lapack = [op for op in ops if shared.calls_lapack(op)] if cache else []
    local = rule_roots([op for op in ops if not op.elementwise and op not in lapack]) + rows
    parts = ["# jittape compiled tape; generated from the op table, do not edit\n" + HEADER
             + "from numpy import int64\n",
             shared.import_lines(lapack), helper_source(local, inline=False),
             helper_source([r for op in ops if op.elementwise
                            for r in (op.value, *op.partials)], inline=False),
             _rule_functions(ops), gen.loop_source,
             f'@njit(cache={cache}, nogil={gen.nogil}, error_model="numpy")\n' + body,
             f'@njit(cache={cache}, nogil=True, error_model="numpy")\n' + batch_source(body)]
    return "\n\n".join(p for p in parts if p)


def compile_tape(tape):
    """Generate, write and import the compiled kernel of a scalar-output ``tape``.

    Returns ``(kernel, val0, pool, nadj)``: ``kernel(val, adj, pool, xin, gx) -> value``
    (``kernel(xin, gx)`` for a kernel that reads none of the three: :func:`kernel_buffers`)
    runs the forward sweep from the concatenated inputs ``xin`` (float64, C-contiguous) and,
    if ``gx`` is not empty, the reverse sweep, writing the concatenated input adjoints into
    ``gx`` (float64, ``xin``'s size; its own buffer, unlike a returned array it is boxed by
    nobody: a fifth of a small tape's call). A failed guard returns nan with its record id
    in ``adj[nadj - 1]``, which is -1 otherwise (the caller sets it to -1 when it makes the
    buffer: a kernel without guards never writes it). ``val0`` is the kernel's compact value
    buffer (float64, constants in place): ``val`` is ``val0`` or a copy of it, reused by
    later calls (the kernel writes every slot but the constants' before reading it), never
    shared by concurrent calls. ``adj`` is a float64 work buffer of ``nadj`` elements,
    likewise reusable: the adjoints (zeroed by the kernel; the constants' slots lie behind
    them in ``val``), the scratch of rerolled loops (saved values, preaccumulated partials:
    written before they are read), then the failed guard's slot. ``pool`` is the tape's
    integer pool followed by the compact offsets of the records (what n-ary kernels read as
    ``off``).

    Raises
    ------
    ValueError
        The tape has a non-scalar output or no dependence on its inputs, or its kernel would
        exceed :data:`MAX_STATEMENTS` statements.
    """
    gen, body = _generate(tape)
    if gen.n_statements > MAX_STATEMENTS:
        raise ValueError(f"the tape's kernel would have {gen.n_statements} statements, over "
                         f"jittape.compiler.kernel.MAX_STATEMENTS = {MAX_STATEMENTS}: Numba would "
                         f"compile it for longer than the interpreter needs to replay it")
    module = disk_cache.load("jittape_tape",
                           lambda cache: module_source(tape, gen, body, cache))
    t = optimized(tape)[0]
    offs = np.full(t.n_records, -1, dtype=np.int64)
    for i, b in gen.bo.items():
        offs[i] = b
    return (module.tape_kernel, gen.initial_values(),
            np.concatenate([t.pool, offs, gen.table]), gen.bad_slot + 1)

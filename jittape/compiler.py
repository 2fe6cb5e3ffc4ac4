"""Compile a tape into straight-line Numba code: the interpreter loop, unrolled and fused.

The interpreter (:mod:`jittape.sweeps`) pays a dispatch per record and a pass over memory
per array record. For a tape that is replayed many times, :func:`compile_tape` generates one
Python function holding the whole forward and reverse sweep, specialised to the tape:

* **scalar records** become local variables ``v<i>`` with adjoints ``g<i>``, so scalar code
  (Python loops over ``x[i]``) turns into straight-line arithmetic that LLVM optimises;
* **consecutive elementwise array records of one size** (including contiguous slices,
  comparisons and ``where``) fuse into a single loop. The forward loop stores only the values
  used outside the group; the reverse loop recomputes the group's primals per element and
  then runs the group's adjoints backwards for that element (recomputation instead of
  storage, Griewank & Walther, "Evaluating Derivatives", 2nd ed., sec. 12.1). A ``sum`` over
  all elements right after a group fuses into it as an accumulator;
* every other record calls its op's own forward and reverse kernels (the op table's
  structured entries) with constant offsets.

Only values that some code reads from memory get a slot in the kernel's (compact) value and
adjoint buffers; everything else lives in registers. Like the sweeps, the kernel is generated
from the op table alone (no op is named here): elementwise records call ``f_<op>`` and
``d_<op>``, functions written from the entry's value and partial expressions; what may fuse
is the entry's ``fusion``. The module is self-contained and loaded through
:mod:`jittape.jitcache` under a hash of its source, so Numba's ``cache=True`` keeps the
machine code across processes.

Numba's compile time grows with the length of a function (about 2 ms per generated
statement), so a long scalar tape (a Python loop over ``x[i]``) is *rerolled*
(:mod:`jittape.reroll`): the repeated body of its loop is emitted once, as a loop over an
index table, and the kernel calls it once per run of iterations. Lennard-Jones pairs at
N = 38 (12,768 records) become one 18-record body and a kernel of under 300 statements.
:data:`MAX_STATEMENTS` bounds what compiles; longer kernels (tapes without repeats) are
replayed by the interpreter.
"""

import collections
import dis
import math

import numpy as np

from . import jitcache
from .codegen import HEADER, helper_source, literal as _lit, rule_args as _args, rule_roots
from .ops import OPS, codes, operands
from .fused import Fused
from .reroll import Rerolling, forwards, loops_source


def _codes(pred):
    return frozenset(op.code for op in OPS if pred(op))


# what the compiler needs to know of an op, read from the table (never from its name)
_ELEMENTWISE = _codes(lambda op: op.elementwise or op.fusion == "slice")
_SLICE = _codes(lambda op: op.fusion == "slice")
_GATHER = _codes(lambda op: op.fusion == "gather")
_SUM = _codes(lambda op: op.fusion == "sum")
_LOADS = _SLICE | _GATHER  # join a fused loop as an (indexed) load from the buffer
#: Tapes whose kernel would exceed this many statements are not compiled (about 2 ms of
#: Numba compile time each); the interpreter replays them.
MAX_STATEMENTS = 1500
#: Tapes of more records are not compiled (the code generator is Python: ~10 us a record).
MAX_RECORDS = 200_000


def _reads(fn):
    """The local names (arguments included) that function ``fn`` reads."""
    return {ins.argval for ins in dis.get_instructions(fn) if ins.opname.startswith("LOAD_FAST")}


class _Gen(Rerolling):
    """Builds the source of one tape's kernel."""

    def __init__(self, t, out_id):
        self.t = t
        self.out = out_id
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
        self._reroll()
        self._layout()
        self._constants_last()

    # --- structure ---
    def _operands(self, i):
        return operands(self.t, i)

    def _is_member(self, i, n, cur=()):
        opc = int(self.t.op[i])
        if (opc not in _ELEMENTWISE and opc not in _GATHER) or self.size[i] != n or n <= 1:
            return False
        if opc in _GATHER and int(self.t.a[i]) in cur:
            return False  # a permutation of a record of this loop needs all of it first
        return all(self.size[j] in (1, n) or (opc in _LOADS and j == self.t.a[i])
                   for j in self._operands(i))

    def _partition(self):
        t = self.t
        cur, n = [], 0
        for i in range(t.n_records):
            if cur and self._is_member(i, n, cur):
                cur.append(i)
                continue
            fused_sum = -1
            if cur and int(t.op[i]) in _SUM and int(t.a[i]) in cur:
                p = int(t.k[i])
                if (int(t.pool[p]), int(t.pool[p + 2])) == (1, 1):
                    fused_sum = i
            if cur:
                self._close(cur, fused_sum)
                cur = []
            if fused_sum < 0 and self._is_member(i, int(self.size[i])):
                cur, n = [i], int(self.size[i])
        if cur:
            self._close(cur, -1)

    def _layout(self):
        """Compact buffer offsets ``bo`` for the records whose values are read from memory.

        Inputs are read from ``xin`` (and their adjoints accumulated into ``gx``) directly;
        they get a buffer slot too only where a kernel reads them from the buffer.
        """
        t = self.t
        self.bo, self.xp = {}, {}
        pos = 0
        for i in t.inputs:
            self.xp[i] = pos
            pos += int(self.size[i])
        pos = self.njac = 0
        for i in range(t.n_records):
            seg = self.seg_at.get(i)
            if seg is not None:  # stored values: one block of S slots per rep
                pos = self._segment_slots(seg, pos)
            if i in self.seg_of:
                continue
            opc = int(t.op[i])
            if opc == codes.INPUT:
                need = any(self.group_of.get(c) is None and int(t.op[c]) not in _ELEMENTWISE
                           for c in self.consumers[i])
            elif OPS[opc].checks:
                need = self.size[i] > 1  # a scalar guard's expected value is a literal
            elif opc in _ELEMENTWISE or i in self.group_of or opc == codes.CONST:
                need = bool(self._buffer_consumers(i)) or (opc == codes.CONST and
                                                           not self._scalar(i))
            else:
                need = True  # computed by a kernel into the buffer
            if need:
                self.bo[i] = pos
                pos += int(self.size[i])
        self.nbuf = pos

    def _constants_last(self):
        """Move the slots of constants that get no adjoint behind all others, so that the
        adjoint buffer (``nadj`` elements, zeroed per replay) ends before them: a data
        matrix costs no adjoint memory and no zeroing."""
        t = self.t
        tail = {i for i in self.bo if int(t.op[i]) == codes.CONST and self._no_adjoint(i)}
        pos, bo = 0, {}
        for i in sorted(self.bo, key=lambda i: (i in tail, self.bo[i])):
            bo[i] = pos
            pos += int(self.size[i])
        self.bo = bo
        self.nadj = pos - sum(int(self.size[i]) for i in tail)
        for seg in self.segments:  # a segment's stored slots moved as one block
            slots = self.bodies[seg.body].slots()
            if slots:
                seg.vb = bo[seg.start + slots[0]]

    def _no_adjoint(self, i):
        """Whether no code writes an adjoint of constant ``i``: the generated elementwise
        code skips constants, and an op's kernel is trusted to when its reverse rule reads
        the flag (``ca``, ``cb``) that says its operand is a constant."""
        t = self.t
        for c in self.consumers[i]:
            if c in self.seg_of or (forwards(t, c, self.size) and
                                    any(d in self.seg_of for d in self.consumers[c])):
                return False  # rerolled loops accumulate into every operand they read
            if c in self.group_of or int(t.op[c]) in _ELEMENTWISE:
                continue
            op = OPS[int(t.op[c])]
            if op.arity not in (1, 2):
                return False
            flags = {"ca"} if i == int(t.a[c]) else set()
            flags |= {"cb"} if i == int(t.b[c]) else set()
            if not flags or not (op.reverse is None or flags <= _reads(op.reverse)):
                return False
        return True

    def is_const(self, i):
        return int(self.t.op[i]) == codes.CONST

    def initial_values(self):
        """The compact value buffer before a replay: constants and guard values in place."""
        v = np.zeros(self.nbuf)
        for i, b in self.bo.items():
            v[b:b + self.size[i]] = self.t.val[self.t.off[i]:self.t.off[i + 1]]
        return v

    def V(self, i, idx):
        """Where the value of buffer-resident record ``i`` at ``idx`` is read from."""
        if i in self.xp:
            return f"xin[{self.xp[i]} + {idx}]"
        return f"val[{self.bo[i]} + {idx}]"

    def A(self, i, idx):
        """Where the adjoint of buffer-resident record ``i`` at ``idx`` accumulates."""
        if i in self.xp:
            return f"gx[{self.xp[i]} + {idx}]"
        return f"adj[{self.bo[i]} + {idx}]"

    def _close(self, members, fused_sum):
        gid = len(self.groups)
        for m in members:
            self.group_of[m] = gid
        if fused_sum >= 0:
            self.group_of[fused_sum] = gid
        self.groups.append((members, fused_sum))

    def _scalar(self, i):
        """Size-1 records live in locals ``v<i>``/``g<i>`` (group members have size > 1)."""
        return self.size[i] == 1

    def _buffer_consumers(self, i):
        """Consumers that read record i from the value buffer (and so accumulate its adjoint
        in the adjoint buffer) rather than from a local."""
        out = []
        for c in self.consumers[i]:
            if c in self.seg_of:  # a rerolled loop reads its operands through its table
                if not forwards(self.t, i, self.size):  # (a slice: from its array)
                    out.append(c)
                continue
            gc = self.group_of.get(c)
            if self._scalar(i) and (gc is not None or int(self.t.op[c]) in _ELEMENTWISE):
                continue  # elementwise code and fused loops read a scalar as the local v<i>
            if gc is not None and gc == self.group_of.get(i):
                continue  # same fused group: a per-element local
            out.append(c)
        return out

    # --- emission ---
    def emit(self):
        t = self.t
        n = t.n_records
        gdone = set()
        self.table = self.tables(len(t.pool) + n)
        for i in range(n):
            if i in self.seg_at:
                self._segment(self.seg_at[i])
            if i in self.seg_of or i in self.unused:
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
        lines = ["def tape_kernel(val, adj, xin, pool, want_grad):"]
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
        lines.append(f"    if not want_grad:\n        return -1, {outv}, np.empty(0)")
        lines.append(f"    adj[:{self.nadj}] = 0.0  # the adjoints" if self.njac else
                     "    adj[:] = 0.0  # the slots that accumulate: constants are behind")
        lines.append("    gx = np.zeros(xin.shape[0])")
        lines += [f"    g{i} = 0.0" for i in range(n) if self._local(i)]
        lines.append(f"    g{self.out} = 1.0")
        lines += ["    " * (d + 1) + s for d, s in reversed(self.rev)]
        for i in t.inputs:
            m, p = int(self.size[i]), self.xp[i]
            if self._scalar(i):
                lines.append(f"    gx[{p}] += g{i}")
            if i in self.bo:  # adjoints that kernels accumulated in the buffer
                lines.append(f"    gx[{p}:{p + m}] += adj[{self.bo[i]}:{self.bo[i] + m}]")
        lines.append(f"    return -1, {outv}, gx")
        sites = collections.Counter(run[0].body for run in self.runs.values())
        self.loop_source, count = loops_source(self.bodies, sites)
        self.n_statements = len(lines) + count
        return "\n".join(lines) + "\n"

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
        if opc == codes.INPUT:
            if self._scalar(i):
                self.F(f"v{i} = xin[{self.xp[i]}]")
            return
        if opc == codes.CONST:
            if self._scalar(i):
                self.F(f"v{i} = {_lit(t.val[t.off[i]])}")
            return
        if self._scalar(i) and opc in _ELEMENTWISE:
            self._scalar_record(i, OPS[opc], a, b, k, c)
            if self._buffer_consumers(i):
                self.F(f"val[{self.bo[i]}] = v{i}")  # a kernel reads it from the buffer
            return
        self._generic(i, OPS[opc], o, int(self.size[i]), a, b, k, c)

    def _scalar_record(self, i, op, a, b, k, c):
        rev = []
        if self._buffer_consumers(i):
            rev.append((0, f"g{i} += adj[{self.bo[i]}]"))
        if op.fusion == "slice":  # x[i] of an array: read straight from the value buffer
            self.F(f"v{i} = {self.V(a, k)}")
            if not self.is_const(a):  # constants get no adjoint slot
                rev.append((0, f"{self.A(a, k)} += g{i}"))
        else:
            args = _args(op, f"v{a}", f"v{b}", f"v{k}", c)
            self.F(f"v{i} = f_{op.name}({args})")
            if op.differentiable:
                rev.append((0, f"d0, d1, d2 = d_{op.name}({args}, v{i})"))
                rev += [(0, f"g{j} += g{i} * d{n}") for n, j in enumerate((a, b, k))
                        if n < len(op.partials) and op.partials[n] != "0.0"]
        self.R(rev)

    def _generic(self, i, op, o, n, a, b, k, c):
        """Records computed by the op's own kernels, with constant offsets."""
        t = self.t
        ia = self.bo.get(a, 0)
        ib = self.bo.get(b, 0) if b >= 0 else 0
        if op.checks and n == 1:  # a scalar guard compares with a literal
            self.F(f"if v{a} != {_lit(t.val[t.off[i]])}:")
            self.F(f"return {i}, 0.0, np.empty(0)", 1)
            return
        pre = [(0, f"adj[{o}] += g{i}")] if self._scalar(i) else []  # local -> kernel
        args = f"{o}, {n}, {ia}, {ib}, {k}, {_lit(c)}, pool, offs"
        if op.checks:
            self.F(f"if {op.forward.__name__}(val, {args}):")
            self.F(f"return {i}, 0.0, np.empty(0)", 1)
            return
        self.F(f"{op.forward.__name__}(val, {args})")
        rev = []
        if op.reverse is not None:
            ca = a < 0 or int(t.op[a]) == codes.CONST
            cb = b < 0 or int(t.op[b]) == codes.CONST
            rev = [(0, f"{op.reverse.__name__}(val, adj, {args}, {ca}, {cb})")]
        if self._scalar(i):
            self.F(f"v{i} = val[{o}]")
        self.R(pre + rev)

    def _group(self, gid):
        """One fused loop forward, one fused loop backward."""
        members, fsum = self.groups[gid]
        g = Fused(self, members, fsum)
        body = [g.element(m) for m in members]
        self._group_forward(g, body)
        self.R(g.reverse(body))

    def _group_forward(self, g, body):
        t, fsum = self.t, g.fsum
        if fsum >= 0:
            self.F(f"s{fsum} = 0.0")
        self.F(f"for j in range({g.n}):")
        for line in body:
            self.F(line, 1)
        for m in g.members:
            if self._buffer_consumers(m):
                self.F(f"val[{self.bo[m]} + j] = v{m}", 1)
        if fsum >= 0:
            self.F(f"s{fsum} += v{int(t.a[fsum])}", 1)
            self.F(f"v{fsum} = s{fsum}")
            if self._buffer_consumers(fsum):
                self.F(f"val[{self.bo[fsum]}] = v{fsum}")


def kernel_source(tape):
    """The generated Python source of ``tape``'s compiled kernel, after the loop functions
    of its rerolled bodies if any (for reading and tests)."""
    gen = _Gen(tape.arrays, tape.out_id)
    kernel = gen.emit()
    return (gen.loop_source + "\n\n" if gen.loop_source else "") + kernel


#: Seconds a compile costs at least (measured cold: 0.7-1.0 s), and to load from the cache.
MIN_COMPILE_SECONDS = 1.0
CACHED_SECONDS = 0.2


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
    statement (Numba's compile time, measured); inf for a tape that does not compile.
    Generates the kernel's source (about 10 us a record), kept for :func:`compile_tape`."""
    try:
        gen, body = _generate(tape)
    except ValueError:
        return math.inf
    if gen.n_statements > MAX_STATEMENTS:
        return math.inf
    tape._generated = (gen, body)  # what a compile of the tape, likely next, starts from
    if jitcache.compiled_before("jittape_tape", module_source(tape, body, True, gen.loop_source),
                                "tape_kernel"):
        return CACHED_SECONDS
    return MIN_COMPILE_SECONDS + 0.002 * gen.n_statements


def _generate(tape):
    done = tape.__dict__.pop("_generated", None)
    if done is not None:
        return done
    _check(tape)
    gen = _Gen(tape.arrays, tape.out_id)
    return gen, gen.emit()


def _check(tape):
    if tape.out_shape != () or tape.out_id < 0:
        raise ValueError("only tapes with a scalar output that depends on the inputs compile")
    if tape.n_records > MAX_RECORDS:  # generating the kernel alone would take seconds
        raise ValueError(f"the tape has {tape.n_records} records, over "
                         f"jittape.compiler.MAX_RECORDS = {MAX_RECORDS}")


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
    return "\n\n".join(out)


def module_source(tape, body, cache=True, loops=""):
    """The whole module of a compiled tape: the rules it names, the functions ``loops`` of
    its rerolled bodies, then the kernel ``body``."""
    ops = [OPS[c] for c in sorted(set(tape.arrays.op.tolist()))]
    parts = ["# jittape compiled tape; generated from the op table, do not edit\n" + HEADER,
             helper_source(rule_roots([op for op in ops if not op.elementwise]), inline=False),
             helper_source([r for op in ops if op.elementwise
                            for r in (op.value, *op.partials)], inline=False),
             _rule_functions(ops), loops,
             f'@njit(cache={cache}, nogil=True, error_model="numpy")\n' + body]
    return "\n\n".join(p for p in parts if p)


def compile_tape(tape):
    """Generate, write and import the compiled kernel of a scalar-output ``tape``.

    Returns ``(kernel, val0, pool, nadj)``: ``kernel(val, adj, xin, pool, want_grad) ->
    (bad, value, gx)`` runs the forward sweep from the concatenated inputs ``xin`` (float64,
    C-contiguous) and, if ``want_grad``, the reverse sweep; ``bad`` is -1 or the failed
    guard's record, ``gx`` (a new array) the concatenated input adjoints. ``val0`` is the
    kernel's compact value buffer (float64, constants in place): ``val`` is ``val0`` or a
    copy of it, reused by later calls (the kernel writes every slot but the constants'
    before reading it), never shared by concurrent calls. ``adj`` is a float64 work buffer
    of ``nadj`` elements, likewise reusable: the adjoints (zeroed by the kernel; the
    constants' slots lie behind them in ``val``), then the scratch of rerolled loops (saved
    values, preaccumulated partials: written before they are read). ``pool`` is the tape's
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
                         f"jittape.compiler.MAX_STATEMENTS = {MAX_STATEMENTS}: Numba would "
                         f"compile it for longer than the interpreter needs to replay it")
    module = jitcache.load("jittape_tape",
                           lambda cache: module_source(tape, body, cache, gen.loop_source))
    t = tape.arrays
    offs = np.full(t.n_records, -1, dtype=np.int64)
    for i, b in gen.bo.items():
        offs[i] = b
    return (module.tape_kernel, gen.initial_values(),
            np.concatenate([t.pool, offs, gen.table]), max(gen.nadj + gen.njac, 1))

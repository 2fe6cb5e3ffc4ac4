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
* every other record calls the interpreter's own inline kernels with constant offsets.

Only values that some code reads from memory get a slot in the kernel's (compact) value and
adjoint buffers; everything else lives in registers. The element rules are the ``*_f``/``*_d``
functions of :mod:`jittape.sweeps` (called through :mod:`jittape.rulecalls`): there is one
definition of each derivative rule. The source is written to a cache directory
(``$JITTAPE_CACHE_DIR``, default ``~/.cache/jittape``) under a name hashing the source and
the kernels, so Numba's ``cache=True`` keeps the machine code across processes.

Numba's compile time grows with the length of a function (measured here: about 2 ms per
generated statement, 20 s for a 528-record scalar tape), so straight-line code pays off for
tapes of few records over large arrays, where fusion saves memory passes, and not for long
scalar tapes, which the interpreter replays: :data:`MAX_STATEMENTS` bounds what compiles.
"""

import hashlib
import importlib.util
import math
import os
import sys
from pathlib import Path

import numpy as np

from . import sweeps as K
from .ops import OPS

_UNARY = {i for i in range(K.NUM_OPCODES) if K.KIND[i] == K.UNARY}  # y = f(x, c)
_BINARY = {i for i in range(K.NUM_OPCODES) if K.KIND[i] == K.BINARY}  # z = f(x, y)
_COMPARE = {i for i in range(K.NUM_OPCODES) if K.KIND[i] == K.COMPARE}  # no derivative
_NO_DERIVATIVE = {K.STOPGRAD, K.SIGN, K.FLOOR, K.CEIL, K.RINT, K.TRUNC, K.FLOORDIV}
_ELEMENTWISE = _UNARY | _BINARY | _COMPARE | {K.WHERE, K.SLICE}
_LOADS = {K.SLICE, K.GATHER}  # join a fused loop as an (indexed) load from the buffer
_KERNEL_HASH = hashlib.sha256(Path(K.__file__).read_bytes() + Path(__file__).read_bytes()
                              ).hexdigest()[:16]
#: Tapes whose kernel would exceed this many statements are not compiled (about 2 ms of
#: Numba compile time each); the interpreter replays them.
MAX_STATEMENTS = 1500


def _lit(x):
    x = float(x)
    if math.isnan(x):
        return "math.nan"
    if math.isinf(x):
        return "math.inf" if x > 0 else "-math.inf"
    return repr(x)


class _Gen:
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
        self._layout()

    # --- structure ---
    def _operands(self, i):
        t, opc = self.t, int(self.t.op[i])
        if opc <= K.CONST:
            return []
        if opc == K.CONCAT:
            p = int(t.k[i])
            return [int(t.pool[p + 2 + 2 * q]) for q in range(int(t.pool[p]))]
        ops = [int(t.a[i])]
        if t.b[i] >= 0:
            ops.append(int(t.b[i]))
        if opc == K.WHERE:
            ops.append(int(t.k[i]))
        return ops

    def _is_member(self, i, n, cur=()):
        opc = int(self.t.op[i])
        if (opc not in _ELEMENTWISE and opc != K.GATHER) or self.size[i] != n or n <= 1:
            return False
        if opc == K.GATHER and int(self.t.a[i]) in cur:
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
            if cur and int(t.op[i]) == K.SUM and int(t.a[i]) in cur:
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
        pos = 0
        for i in range(t.n_records):
            opc = int(t.op[i])
            if opc == K.INPUT:
                need = any(self.group_of.get(c) is None and int(t.op[c]) not in _ELEMENTWISE
                           for c in self.consumers[i])
            elif opc == K.GUARD:
                need = self.size[i] > 1  # a scalar guard's expected value is a literal
            elif opc in _ELEMENTWISE or i in self.group_of or opc == K.CONST:
                need = bool(self._buffer_consumers(i)) or (opc == K.CONST and
                                                           not self._scalar(i))
            else:
                need = True  # computed by a kernel into the buffer
            if need:
                self.bo[i] = pos
                pos += int(self.size[i])
        self.nbuf = pos

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
        for i in range(n):
            g = self.group_of.get(i)
            if g is not None:
                if g not in gdone:
                    gdone.add(g)
                    self._group(g)
                continue
            self._record(i)
        lines = ["def tape_kernel(val0, xin, pool, want_grad):", "    val = val0.copy()"]
        pos = 0
        for i in t.inputs:
            m = int(self.size[i])
            if i in self.bo:  # a kernel reads this input from the buffer
                lines.append(f"    val[{self.bo[i]}:{self.bo[i] + m}] = xin[{pos}:{pos + m}]")
            pos += m
        lines += ["    " * (d + 1) + s for d, s in self.fwd]
        outv = f"v{self.out}"
        lines.append(f"    if not want_grad:\n        return -1, {outv}, np.empty(0)")
        lines.append(f"    adj = np.zeros({max(self.nbuf, 1)})")
        lines.append("    gx = np.zeros(xin.shape[0])")
        lines += [f"    g{i} = 0.0" for i in range(n) if self._scalar(i)]
        lines.append(f"    g{self.out} = 1.0")
        lines += ["    " * (d + 1) + s for d, s in reversed(self.rev)]
        for i in t.inputs:
            m, p = int(self.size[i]), self.xp[i]
            if self._scalar(i):
                lines.append(f"    gx[{p}] += g{i}")
            if i in self.bo:  # adjoints that kernels accumulated in the buffer
                lines.append(f"    gx[{p}:{p + m}] += adj[{self.bo[i]}:{self.bo[i] + m}]")
        lines.append(f"    return -1, {outv}, gx")
        self.n_statements = len(lines)
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
        n = int(self.size[i])
        name = OPS[opc].name
        if opc == K.INPUT:
            if self._scalar(i):
                self.F(f"v{i} = xin[{self.xp[i]}]")
            return
        if opc == K.CONST:
            if self._scalar(i):
                self.F(f"v{i} = {_lit(t.val[t.off[i]])}")
            return
        if self._scalar(i) and opc in _ELEMENTWISE:
            self._scalar_record(i, opc, name, a, b, k, c)
            if self._buffer_consumers(i):
                self.F(f"val[{self.bo[i]}] = v{i}")  # a kernel reads it from the buffer
            return
        self._generic(i, opc, o, n, a, b, k, c)

    def _scalar_record(self, i, opc, name, a, b, k, c):
        t = self.t
        rev = []
        if self._buffer_consumers(i):
            rev.append((0, f"g{i} += adj[{self.bo[i]}]"))
        if opc in _UNARY:
            self.F(f"v{i} = R.{name}_f(v{a}, {_lit(c)})")
            if opc not in _NO_DERIVATIVE:
                rev.append((0, f"g{a} += g{i} * R.{name}_d(v{a}, v{i}, {_lit(c)})"))
        elif opc in _BINARY:
            self.F(f"v{i} = R.{name}_f(v{a}, v{b})")
            if opc not in _NO_DERIVATIVE:
                rev += [(0, f"d0, d1 = R.{name}_d(v{a}, v{b}, v{i})"),
                        (0, f"g{a} += g{i} * d0"), (0, f"g{b} += g{i} * d1")]
        elif opc in _COMPARE:
            self.F(f"v{i} = R.{name}_f(v{a}, v{b})")
        elif opc == K.WHERE:
            self.F(f"v{i} = v{a} if v{k} != 0.0 else v{b}")
            rev += [(0, f"if v{k} != 0.0:"), (1, f"g{a} += g{i}"), (0, "else:"),
                    (1, f"g{b} += g{i}")]
        elif opc == K.SLICE:  # x[i] of an array: read straight from the value buffer
            self.F(f"v{i} = {self.V(a, k)}")
            rev.append((0, f"{self.A(a, k)} += g{i}"))
        self.R(rev)

    def _generic(self, i, opc, o, n, a, b, k, c):
        """Records computed by the interpreter's kernels, with constant offsets."""
        t = self.t
        ia = self.bo.get(a, 0)
        pre = []
        if self._scalar(i):
            pre.append((0, f"adj[{o}] += g{i}"))  # local adjoint -> buffer for the kernel
        if opc == K.GATHER:
            self.F(f"for j in range({n}):")
            self.F(f"val[{o} + j] = val[{ia} + pool[{k} + j]]", 1)
            rev = [(0, f"for j in range({n}):"), (1, f"adj[{ia} + pool[{k} + j]] += adj[{o} + j]")]
        elif opc == K.SLICE:
            self.F(f"for j in range({n}):")
            self.F(f"val[{o} + j] = val[{ia + k} + j]", 1)
            rev = [(0, f"for j in range({n}):"), (1, f"adj[{ia + k} + j] += adj[{o} + j]")]
        elif opc in (K.SUM, K.PROD, K.MAX, K.MIN):
            lay = ", ".join(str(int(v)) for v in t.pool[k:k + 3])
            self.F(f"K._reduce_fwd({opc}, val, {o}, {ia}, {lay})")
            rev = [(0, f"K._reduce_rev({opc}, val, adj, {o}, {ia}, {lay})")]
        elif opc in (K.CUMSUM, K.CUMPROD):
            lay = ", ".join(str(int(v)) for v in t.pool[k:k + 3])
            self.F(f"K._scan_fwd({opc}, val, {o}, {ia}, {lay})")
            rev = [(0, f"K._scan_rev({opc}, val, adj, {o}, {ia}, {lay})")]
        elif opc == K.SORT:
            lay = ", ".join(str(int(v)) for v in t.pool[k:k + 3])
            self.F(f"K._sort_fwd(val, {o}, {ia}, {lay})")
            rev = [(0, f"K._sort_rev(val, adj, {o}, {ia}, {lay})")]
        elif opc in (K.INV, K.SOLVE, K.SLOGDET, K.CHOLESKY, K.EIGH):
            ib = self.bo[b] if b >= 0 else 0
            lay = f"{int(t.pool[k])}, {int(t.pool[k + 1])}"
            self.F(f"K._linalg_fwd({opc}, val, {o}, {ia}, {ib}, {lay})")
            rev = [(0, f"K._linalg_rev({opc}, val, adj, {o}, {ia}, {ib}, {lay})")]
        elif opc in (K.ARGMAX, K.ARGMIN):
            lay = ", ".join(str(int(v)) for v in t.pool[k:k + 3])
            self.F(f"K._argext_fwd({opc == K.ARGMAX}, val, {o}, {ia}, {lay})")
            rev = []
        elif opc == K.MATMUL:
            lay = ", ".join(str(int(v)) for v in t.pool[k:k + 4])
            self.F(f"K._matmul_fwd(val, {o}, {ia}, {self.bo[b]}, {lay})")
            rev = [(0, f"K._matmul_rev(val, adj, {o}, {ia}, {self.bo[b]}, {lay}, "
                       f"{int(t.op[a]) != K.CONST}, {int(t.op[b]) != K.CONST})")]
        elif opc == K.CONCAT:
            nparts, outer = int(t.pool[k]), int(t.pool[k + 1])
            parts = [(self.bo[int(t.pool[k + 2 + 2 * q])], int(t.pool[k + 3 + 2 * q]))
                     for q in range(nparts)]
            width = sum(w for _, w in parts)
            self.F(f"for r in range({outer}):")
            rev = [(0, f"for r in range({outer}):")]
            pos = 0
            for src, w in parts:
                self.F(f"for j in range({w}):", 1)
                self.F(f"val[{o + pos} + r * {width} + j] = val[{src} + r * {w} + j]", 2)
                rev += [(1, f"for j in range({w}):"),
                        (2, f"adj[{src} + r * {w} + j] += adj[{o + pos} + r * {width} + j]")]
                pos += w
        elif opc == K.GUARD:
            if n == 1:
                self.F(f"if v{a} != {_lit(t.val[t.off[i]])}:")
                self.F(f"return {i}, 0.0, np.empty(0)", 1)
            else:
                self.F(f"for j in range({n}):")
                self.F(f"if val[{ia} + j] != val[{o} + j]:", 1)
                self.F(f"return {i}, 0.0, np.empty(0)", 2)
            return
        else:  # pragma: no cover - every opcode is handled above or fused
            raise NotImplementedError(OPS[opc].name)
        if self._scalar(i):
            self.F(f"v{i} = val[{o}]")
        self.R(pre + rev)

    def _group(self, gid):
        """One fused loop forward, one fused loop backward."""
        t = self.t
        members, fsum = self.groups[gid]
        n = int(self.size[members[0]])
        mset = set(members)
        stored = [m for m in members if self._buffer_consumers(m)]

        def ex(j, m):  # operand j of member m, at element j of the loop
            if j in mset or self.size[j] == 1:
                return f"v{j}"  # per-element local, or a scalar local
            return self.V(j, "j")

        body, accs = [], set()
        if fsum >= 0:
            self.F(f"s{fsum} = 0.0")
        for m in members:
            opc, a, b, k, c = (int(t.op[m]), int(t.a[m]), int(t.b[m]), int(t.k[m]),
                               float(t.c[m]))
            name = OPS[opc].name
            if opc == K.SLICE:
                body.append(f"v{m} = {self.V(a, f'{k} + j')}" if a not in mset
                            else f"v{m} = v{a}")
            elif opc == K.GATHER:  # the operand is never in the group: it has another size
                body.append(f"v{m} = {self.V(a, f'pool[{k} + j]')}")
            elif opc in _UNARY:
                body.append(f"v{m} = R.{name}_f({ex(a, m)}, {_lit(c)})")
            elif opc in _BINARY or opc in _COMPARE:
                body.append(f"v{m} = R.{name}_f({ex(a, m)}, {ex(b, m)})")
            elif opc == K.WHERE:
                body.append(f"v{m} = {ex(a, m)} if {ex(k, m)} != 0.0 else {ex(b, m)}")
        # forward loop
        self.F(f"for j in range({n}):")
        for line in body:
            self.F(line, 1)
        for m in stored:
            self.F(f"val[{self.bo[m]} + j] = v{m}", 1)
        if fsum >= 0:
            self.F(f"s{fsum} += v{int(t.a[fsum])}", 1)
            self.F(f"v{fsum} = s{fsum}")
            if self._buffer_consumers(fsum):
                self.F(f"val[{self.bo[fsum]}] = v{fsum}")

        # reverse loop: recompute the primals of the element, then adjoints backwards
        rev = []
        if fsum >= 0 and self._buffer_consumers(fsum):
            rev.append((0, f"g{fsum} += adj[{self.bo[fsum]}]"))
        rev.append((0, f"for j in range({n}):"))
        rev += [(1, line) for line in body]
        for m in members:
            init = f"adj[{self.bo[m]} + j]" if self._buffer_consumers(m) else "0.0"
            rev.append((1, f"g{m} = {init}"))
        if fsum >= 0:
            rev.append((1, f"g{int(t.a[fsum])} += g{fsum}"))

        # Contributions to buffer adjoints are merged per slot and stored at the end of the
        # loop body, highest offset first: with x[j+1] stored before x[j], LLVM sees no
        # loop-carried dependence and vectorizes the loop (measured 2x on Rosenbrock).
        stores = {}

        def store(target, order, expr):
            stores.setdefault(target, [order, []])[1].append(expr)
            return None

        def acc(j, expr):  # adjoint contribution to operand j of a member
            if j in mset:
                return f"g{j} += {expr}"
            if self.size[j] == 1:
                accs.add(j)
                return f"acc{j} += {expr}"
            return store(self.A(j, "j"), (self.xp.get(j, self.bo.get(j)), 0), expr)

        for m in reversed(members):
            opc, a, b, k, c = (int(t.op[m]), int(t.a[m]), int(t.b[m]), int(t.k[m]),
                               float(t.c[m]))
            name = OPS[opc].name
            if opc == K.SLICE:
                if a in mset:
                    rev.append((1, f"g{a} += g{m}"))
                else:
                    store(self.A(a, f"{k} + j"), (self.xp.get(a, self.bo.get(a)), k),
                          f"g{m}")
            elif opc == K.GATHER:  # indirect: stored last, in member order
                store(self.A(a, f"pool[{k} + j]"), (-1, -len(stores)), f"g{m}")
            elif opc in _UNARY and opc not in _NO_DERIVATIVE:
                rev.append((1, acc(a, f"g{m} * R.{name}_d({ex(a, m)}, v{m}, {_lit(c)})")))
            elif opc in _BINARY and opc not in _NO_DERIVATIVE:
                rev.append((1, f"d{m}x, d{m}y = R.{name}_d({ex(a, m)}, {ex(b, m)}, v{m})"))
                rev.append((1, acc(a, f"g{m} * d{m}x")))
                rev.append((1, acc(b, f"g{m} * d{m}y")))
            elif opc == K.WHERE:  # branch-free, so the selection can be merged and stored
                rev.append((1, f"s{m} = {ex(k, m)} != 0.0"))
                rev.append((1, acc(a, f"(g{m} if s{m} else 0.0)")))
                rev.append((1, acc(b, f"(0.0 if s{m} else g{m})")))
        rev = [line for line in rev if line[1] is not None]
        for target, (order, exprs) in sorted(stores.items(), key=lambda kv: kv[1][0],
                                             reverse=True):
            rev.append((1, f"{target} += {' + '.join(exprs)}"))
        head = [(0, f"acc{j} = 0.0") for j in sorted(accs)]
        tail = [(0, f"g{j} += acc{j}") for j in sorted(accs)]
        self.R(head + rev + tail)


def kernel_source(tape):
    """The generated Python source of ``tape``'s compiled kernel (for reading and tests)."""
    return _Gen(tape.arrays, tape.out_id).emit()


def _cache_dir():
    d = Path(os.environ.get("JITTAPE_CACHE_DIR") or Path.home() / ".cache" / "jittape")
    d.mkdir(parents=True, exist_ok=True)
    return d


def compile_tape(tape):
    """Generate, write and import the compiled kernel of a scalar-output ``tape``.

    Returns ``(kernel, val0)``: ``kernel(val0, xin, pool, want_grad) -> (bad, value, gx)``
    runs the forward sweep from the concatenated inputs ``xin`` and, if ``want_grad``, the
    reverse sweep; ``bad`` is -1 or the failed guard's record, ``gx`` the concatenated input
    adjoints. ``val0`` is the kernel's compact value buffer (constants in place).

    Raises
    ------
    ValueError
        The tape has a non-scalar output or no dependence on its inputs, or its kernel would
        exceed :data:`MAX_STATEMENTS` statements.
    """
    if tape.out_shape != () or tape.out_id < 0:
        raise ValueError("only tapes with a scalar output that depends on the inputs compile")
    if tape.n_records > MAX_STATEMENTS:  # every record emits at least one statement
        raise ValueError(f"the tape has {tape.n_records} records, so its kernel would exceed "
                         f"jittape.compiler.MAX_STATEMENTS = {MAX_STATEMENTS} statements")
    gen = _Gen(tape.arrays, tape.out_id)
    body = gen.emit()
    if gen.n_statements > MAX_STATEMENTS:
        raise ValueError(f"the tape's kernel would have {gen.n_statements} statements, over "
                         f"jittape.compiler.MAX_STATEMENTS = {MAX_STATEMENTS}: Numba would "
                         f"compile it for longer than the interpreter needs to replay it")
    digest = hashlib.sha256((_KERNEL_HASH + body).encode()).hexdigest()[:24]
    name = f"jittape_tape_{digest}"
    path = _cache_dir() / f"{name}.py"
    if not path.exists():
        src = (f"# jittape compiled tape (kernels {_KERNEL_HASH}); generated, do not edit\n"
               "import math\nimport numpy as np\nfrom numba import njit\n"
               "from jittape import sweeps as K\nfrom jittape import rulecalls as R\n\n\n"
               '@njit(cache=True, nogil=True, error_model="numpy")\n' + body)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(src)
        os.replace(tmp, path)
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[name] = module
    return module.tape_kernel, gen.initial_values()

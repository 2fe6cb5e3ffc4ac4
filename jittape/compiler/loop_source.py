"""Source of the rerolled loops (:mod:`jittape.compiler.reroll` finds them): per loop body, a
forward loop over its segment's reps, a reverse loop, and for a preaccumulating body a
forward loop that also stores the partials. The loops read the body's table columns as
their modes say (:func:`jittape.compiler.reroll.assign_modes`) and index with unsigned integers.
"""

import re

from ..sweeps.codegen import literal, rule_args
from ..optable.table import OPS, codes
from .reroll import CARRY, FIXED, ROW, column_kind

def _read(cls, col):
    """An operand of class ``cls``: a register, or column ``col``'s load ``x<col>``."""
    return f"u{cls[1]}" if cls[0] == "i" else f"x{col}"


def _at(buf, base, k):
    """``buf[base + k]``. Indices are unsigned (``base`` a uint64, ``k`` one of the module's
    constants ``_U<k> = np.uint64(k)``): that spares Numba's test for negative indices
    (measured: a third of the instructions of the LJ pair's reverse loop)."""
    return f"{buf}[{base} + _U{k}]" if k else f"{buf}[{base}]"


def _column(body, c, row):
    """Where column c of table row ``row`` (``q``: the rep's, ``q0``: the first) points; the
    table's entries are cast to unsigned (measured: the LJ kernel compiles 0.5 s faster
    than with a ``uint64`` view of the table)."""
    buf = "xin" if body.columns()[c][1] == "in" else "val"
    return f"{buf}[np.uint64({_at('tab', row, c)})]"


def _adjoint(body, c, row):
    return _column(body, c, row).replace("xin", "gx", 1).replace("val", "adj", 1)


def _loads(body, modes, row):
    """Loads ``x<col>`` of the columns whose mode is in ``modes``, from table row ``row``
    (``q``: the rep's, in the loop; ``q0``: the first, before it)."""
    return [f"x{c} = {_column(body, c, row)}" for c, m in enumerate(body.modes)
            if column_kind(m) in modes]



def _of(body, *kinds):
    """The columns whose mode is of one of ``kinds``."""
    return [c for c, m in enumerate(body.modes) if column_kind(m) in kinds]


def _rep_stores(body):
    """End of a rep of a reverse loop: the adjoints ``a<col>`` of its row columns added to
    the buffers, a carried column's handed to the next (earlier) rep in ``k<col>``."""
    return [f"{_adjoint(body, c, 'q')} += a{c}" if column_kind(m) == ROW else f"k{c} = a{c}"
            for c, m in enumerate(body.modes) if column_kind(m) in (ROW, CARRY)]


def _after_stores(body):
    """After a reverse loop: fixed columns' sums and the first rep's carried adjoints."""
    return [f"{_adjoint(body, c, 'q0')} += {'a' if column_kind(m) == FIXED else 'k'}{c}"
            for c, m in enumerate(body.modes) if column_kind(m) in (FIXED, CARRY)]


def _seeds(body):
    """The seed of each stored position's adjoint in a reverse loop: the buffer's, plus
    what the next rep carried back."""
    slots = body.slots()
    carried = {}
    for c, m in enumerate(body.modes):
        if column_kind(m) == CARRY:
            carried.setdefault(m[1], []).append(f"k{c}")
    return {u: " + ".join([_at("adj", "s", n)] + carried.get(u, []))
            for n, u in enumerate(slots)}


def _forward_lines(body):
    """Per position: (line computing u<pos>, [(operand class, column or None)]); a column
    that repeats another (``SAME``) is named as that one."""
    lines, col = [], 0
    for u, (sig, classes) in enumerate(body.key):
        op = OPS[sig[0]]
        refs = []
        for cls in classes:
            refs.append((cls, None if cls[0] == "i" else body.canon(col)))
            col += cls[0] != "i"
        reads = [_read(cls, c) for cls, c in refs]
        if sig[0] == codes.CONST:
            lines.append((f"u{u} = {literal(sig[1])}", refs))
        elif op.fusion == "slice":
            lines.append((f"u{u} = {reads[0]}", refs))
        else:
            x, y, q3 = (reads + ["0.0", "0.0"])[:3]
            lines.append((f"u{u} = f_{op.name}({rule_args(op, x, y, q3, sig[1])})", refs))
    return lines


def _target(cls, col):
    """Where the adjoint of an operand accumulates in the reverse loop."""
    return f"h{cls[1]}" if cls[0] == "i" else f"a{col}"


def _partial(cls, col):
    """Where it accumulates in a preaccumulating forward loop: a local per column."""
    return f"h{cls[1]}" if cls[0] == "i" else f"p{col}"


def _reverse_lines(body, fwd, target):
    """The adjoint code of one rep, last record first (``h<u>``: adjoint of ``u<u>``).
    Adjoints start at -0.0, not 0.0: ``-0.0 + v`` is ``v`` for every v, so LLVM drops the
    first addition (``0.0 + v`` is not ``v`` for v = -0.0)."""
    out = []
    for u in range(len(body.key) - 1, -1, -1):
        sig, _ = body.key[u]
        op, refs = OPS[sig[0]], fwd[u][1]
        if sig[0] == codes.CONST:
            continue
        if op.fusion == "slice":
            out.append(f"{target(*refs[0])} += h{u}")
            continue
        if not op.differentiable:
            continue
        reads = [_read(cls, c) for cls, c in refs]
        x, y, q3 = (reads + ["0.0", "0.0"])[:3]
        out.append(f"d0, d1, d2 = d_{op.name}({rule_args(op, x, y, q3, sig[1])}, u{u})")
        for n, (cls, c) in enumerate(refs):
            if n < len(op.partials) and op.partials[n] != "0.0":
                out.append(f"{target(cls, c)} += h{u} * d{n}")
    return out


def _preaccumulate(body, fwd):
    """Lines of a forward loop that store, after the rep's values, the partials of each
    stored value with respect to each table column (one local reverse sweep per stored
    value, seeded with 1)."""
    slots, live, n = body.slots(), body.live(), len(body.key)
    w = len(live)
    lines = []
    for m, u in enumerate(slots):
        lines += [f"h{v} = {'1.0' if v == u else '-0.0'}" for v in range(n)]
        lines += [f"p{c} = -0.0" for c in live]
        lines += _reverse_lines(body, fwd, _partial)
        lines += [f"{_at('jac', 'p', m * w + k)} = p{c}" for k, c in enumerate(live)]
    return lines


def body_source(body, inline=False):
    """The loop functions of ``body``: forward ``rb<b>_f(val, jac, xin, tab, tb, R, vb,
    jb)``, forward with preaccumulation ``rb<b>_g`` (same arguments; for a preaccumulating
    body only) and reverse ``rb<b>_r(val, jac, xin, adj, gx, tab, tb, R, vb, jb)``. They run
    reps 0..R-1 (the reverse one backwards) of a segment whose table starts at ``tab[tb]``,
    whose stored values start at ``val[vb]`` (one slot per stored value and rep) and whose
    preaccumulated partials start at ``jac[jb]`` (``body.jac_stride`` per rep). Returns
    ``(source, number of lines)``.

    A body with few stored values is *preaccumulated* (statement-level preaccumulation,
    Griewank & Walther, sec. 10.2; ADIFOR and Tapenade do it per statement): with ``grad``
    its forward loop ``rb<b>_g`` also stores each stored value's partials with respect to the table
    columns (in ``jac``, a scratch buffer that is never copied or zeroed), so the reverse
    loop is one multiply-add per column and stored value, with no recomputation. Otherwise
    the reverse loop recomputes the rep's values and runs its adjoints. Columns are read
    as their modes say (:func:`assign_modes`)."""
    b, w, slots = body.index, body.width, body.slots()
    fwd = _forward_lines(body)
    head = [f"        q = np.uint64(tb + r * {w})",
            f"        s = np.uint64(vb + r * {len(slots)})",
            f"        p = np.uint64(jb + r * {body.jac_stride})"]
    args = "val, jac, xin, tab, tb, R, vb, jb"
    # forward: fixed and carried columns loaded before the loop, a carried one then passed on
    pre = ["    q0 = np.uint64(tb)"]
    pre += ["    " + line for line in _loads(body, (FIXED, CARRY), "q0")]
    loads = ["        " + line for line in _loads(body, (ROW,), "q")]
    values = ["        " + line for line, _ in fwd]
    stores = [f"        {_at('val', 's', m)} = u{u}" for m, u in enumerate(slots)]
    stores += [f"        x{c} = u{m[1]}" for c, m in enumerate(body.modes)
               if column_kind(m) == CARRY]
    saved = body.saved()
    keep = [f"        {_at('jac', 'p', k)} = u{u}" for k, u in enumerate(saved)]
    f = [f"def rb{b}_f({args}):", *pre, "    for r in range(R):", *head, *loads, *values,
         *keep, *stores]
    r = [f"def rb{b}_r(val, jac, xin, adj, gx, tab, tb, R, vb, jb):",
         "    q0 = np.uint64(tb)"]
    r += [f"    a{c} = -0.0" for c in _of(body, FIXED)]
    r += [f"    k{c} = -0.0" for c in _of(body, CARRY)]
    seeds = _seeds(body)
    g = []
    if body.preacc:
        g = [f"def rb{b}_g({args}):", *pre, "    for r in range(R):", *head, *loads, *values]
        g += ["        " + x for x in _preaccumulate(body, fwd)] + stores
        r += ["    for r in range(R - 1, -1, -1):", *head]
        r += [f"        h{m} = {seeds[u]}" for m, u in enumerate(slots)]
        live = body.live()
        for k, c in enumerate(live):
            terms = " + ".join(f"h{m} * {_at('jac', 'p', m * len(live) + k)}"
                               for m in range(len(slots)))
            r.append(f"        a{c} {'+' if body.modes[c] == FIXED else ''}= {terms}")
    else:  # recompute the values (a carried column's primal read from the table)
        r += ["    " + line for line in _loads(body, (FIXED,), "q0")]
        r += ["    for r in range(R - 1, -1, -1):", *head]
        r += ["        " + line for line in _loads(body, (ROW, CARRY), "q")]
        loaded = {u: f"        u{u} = {_at('jac', 'p', k)}" for k, u in enumerate(saved)}
        r += [loaded.get(u, line) for u, line in enumerate(values)]
        r += [f"        h{u} = {seeds.get(u, '-0.0')}" for u in range(len(body.key))]
        r += [f"        a{c} = -0.0" for c in _of(body, ROW, CARRY)]
        r += ["        " + line for line in _reverse_lines(body, fwd, _target)]
    r += ["        " + line for line in _rep_stores(body)]
    r += ["    " + line for line in _after_stores(body)]
    # inlined by Numba where each is called once (a run's loop of calls): as fast as LLVM's
    # inlining at every call site, without compiling a copy per site
    deco = ('@njit(nogil=True, error_model="numpy", inline="always")\n' if inline else
            '@njit(nogil=True, error_model="numpy")\n')
    src = "\n\n\n".join(deco + "\n".join(x) for x in (g, f, r) if x)
    return src + "\n", len(f) + len(g) + len(r)


def loops_source(bodies, sites):
    """The loop functions of ``bodies`` (:func:`body_source`; inlined where ``sites``, the
    number of call sites by body index, is 1) after the unsigned constants ``_U<k>`` they
    index with (Numba freezes a module's globals into its code). Returns ``(source, number
    of lines)``."""
    parts = [body_source(b, sites.get(b.index) == 1) for b in bodies]
    src = "\n\n".join(part for part, _ in parts)
    used = sorted({int(k) for k in re.findall(r"\b_U(\d+)\b", src)})
    consts = "".join(f"_U{k} = np.uint64({k})\n" for k in used)
    return (consts + "\n\n" + src if consts else src), len(used) + sum(n for _, n in parts)

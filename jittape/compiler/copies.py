"""Records that only move elements (an op table entry with ``copies``: concatenation), emitted
by the tape compiler as loops of literal bounds instead of a call of the op's kernel.

The kernel reads its layout from the pool at run time (where each part starts, how wide it
is), so LLVM can neither prove its indices non-negative nor see which slots it writes: the
call costs several times its copies and stops optimisation around it. cmpad ode's gradient
(36 ``concatenate`` of two parts) takes 4.2 us with the loops against 9.6 us with the calls,
bit-identical. The reverse is the copy's transpose, accumulated (``+=``) as the kernel does.
"""

#: Records of more blocks keep the op's kernel (each block is a loop: ~2 ms of compile time).
MAX_BLOCKS = 8


def copy_code(gen, op, o, k):
    """``(forward, reverse)`` lines (``(indent, line)`` pairs, each list top to bottom) of
    the record at value offset ``o`` whose op has ``copies`` and pool entry ``k``, or None
    where its kernel stays (too many blocks, a part the buffer does not hold)."""
    blocks = op.copies(gen.t.pool, k)
    if len(blocks) > MAX_BLOCKS or any(
            rec not in gen.bo and rec not in gen.xp for rec, *_ in blocks):
        return None
    fwd, rev = [], []
    for rec, at, width, rows, stride in blocks:
        if width == 0 or rows == 0:
            continue
        if rows == 1 and width == 1:  # (np.stack of scalars: no loop)
            loop, z, x = [], f"{o + at}", "0"
        elif rows == 1:
            loop, z, x = [(0, f"for j in range({width}):")], f"{o + at} + j", "j"
        else:
            loop = [(0, f"for r in range({rows}):"), (1, f"for j in range({width}):")]
            z, x = f"{o + at} + r * {stride} + j", f"r * {width} + j"
        fwd += loop + [(len(loop), f"val[{z}] = {gen.V(rec, x)}")]
        if not gen.is_const(rec):
            rev += loop + [(len(loop), f"{gen.A(rec, x)} += adj[{z}]")]
    return fwd, rev

"""The fixed frame of a compiled tape's module: the kernel's signature and the batched
replay around it (:mod:`jittape.compiler.kernel` generates the body between)."""

import re

#: The kernel's signature with the work buffers and without them (:func:`without_buffers`);
#: its callers tell them apart by its argument count (:func:`kernel_buffers`).
KERNEL_DEF = ("def tape_kernel(val, adj, pool, xin, gx):", "def tape_kernel(xin, gx):")
_BUFFERS = re.compile(r"\b(val|adj|pool|offs|jac)\b")

#: The batched replay (:mod:`jittape.api.batch`): the kernel at each row of ``xs`` in one
#: native call, with buffers of its own (so threads may run it on disjoint rows at once).
#: Compiled on its first call only: a tape never batched pays nothing for it.
BATCH = """def tape_batch(val0, nadj, pool, xs, want_grad, values, grads, bad):
    val = val0.copy()
    adj = np.empty(nadj)
    adj[nadj - 1] = -1.0  # (no guard failed: kernels without guards never write it)
    none = np.empty(0)
    for p in range(xs.shape[0]):
        v = tape_kernel({buffers}xs[p], grads[p] if want_grad else none)
        bad[p] = int(adj[nadj - 1]) if v != v and adj[nadj - 1] >= 0.0 else -1
        values[p] = v
"""


def input_check(n):
    """The kernel's first lines: nan for an ``xin`` of another size than ``n`` or not
    contiguous, which the caller then replays by its general path. The caller checked the
    rest before calling the entry point (an ndarray of float64, 1-D: Numba's unboxing
    copies as many dimensions as the array has), so the one-vector call checks two
    attributes in Python instead of four (:func:`jittape.api.kernel_call.plain_call`)."""
    stride = " or xin.strides[0] != 8" if n > 1 else ""
    return f"    if xin.shape[0] != {n}{stride}:  # (see jittape.compiler.frame)\n" \
           f"        return np.nan"


def without_buffers(lines):
    """``lines`` of a kernel (its signature first) whose code reads no work buffer and no
    pool (scalar code: cmpad's det) as ``tape_kernel(xin, gx)``: each array argument costs
    a call some 30 ns of unboxing, more than such a kernel's arithmetic. Other kernels'
    lines as they are."""
    body = [ln for ln in lines[1:] if not ln.lstrip().startswith("offs = pool[")]
    if _BUFFERS.search("\n".join(body)):
        return lines
    return [KERNEL_DEF[1]] + body


def kernel_buffers(dispatcher, val, adj, pool):
    """The work buffers that the compiled ``tape_kernel`` ``dispatcher`` takes before
    ``(xin, gx)``: ``(val, adj, pool)``, or ``()`` for a kernel that reads none."""
    return (val, adj, pool) if dispatcher.py_func.__code__.co_argcount == 5 else ()


def batch_source(body):
    """:data:`BATCH` calling the kernel ``body`` defines, with its buffers or without."""
    return BATCH.format(buffers="" if body.startswith(KERNEL_DEF[1]) else "val, adj, pool, ")

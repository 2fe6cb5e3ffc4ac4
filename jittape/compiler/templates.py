"""The fixed parts of a compiled tape's module (:func:`jittape.compiler.kernel.module_source`):
the kernel a replay calls and the batched replay, around the generated ``tape_body``."""

#: The batched replay (:mod:`jittape.api.batch`): the kernel at each row of ``xs`` in one
#: native call, with buffers of its own (so threads may run it on disjoint rows at once).
#: Compiled on its first call only: a tape never batched pays nothing for it.
BATCH = """def tape_batch(buf0, slot, xs, want_grad, values, grads, bad):
    buf = buf0.copy()
    buf[slot] = -1.0  # (no guard failed: kernels without guards never write it)
    val, adj, pool = {views}  # (once: a view costs a row of det 4x its arithmetic)
    none = np.empty(0)
    for p in range(xs.shape[0]):
        v = tape_body(val, adj, pool, xs[p], grads[p] if want_grad else none)
        bad[p] = int(buf[slot]) if v != v and buf[slot] >= 0.0 else -1
        values[p] = v
"""

#: The kernel a replay calls: one work buffer, its three parts passed on as views (each
#: array argument costs a call from Python 28 ns).
KERNEL = """def tape_kernel(buf, xin, gx):
    val, adj, pool = {views}
    return tape_body(val, adj, pool, xin, gx)
"""


def views(gen):
    """The work buffer ``buf``'s values, adjoints and pool, as views
    (:func:`jittape.compiler.kernel.compile_tape`)."""
    nv, na = gen.nbuf, gen.bad_slot + 1
    return f"buf[:{nv}], buf[{nv}:{nv + na}], buf[{nv + na}:].view(np.int64)"

"""The rerolling part of the tape compiler's generator (:class:`Rerolling`, a mixin of
``jittape.compiler.kernel._Gen``): finds the loop bodies of a tape
(:mod:`jittape.compiler.reroll`), lays out their stored values and index tables, and emits the
calls of their loops (whose source
:mod:`jittape.compiler.loop_source` writes)."""

import numpy as np

from .reroll import REROLL_RECORDS, assign_modes, find_segments, forwards, mark_stored, table_rows


class Rerolling:
    """The rerolling part of the tape compiler's generator (``jittape.compiler.kernel._Gen``):
    finds the segments, lays out their stored values and tables, emits their calls. Uses
    the generator's ``t``, ``size``, ``consumers``, ``out``, ``bo``, ``xp``, ``F`` and ``R``."""

    def _reroll(self):
        """Find the loop bodies of long scalar stretches (:mod:`jittape.compiler.reroll`)."""
        self.segments, self.bodies = [], []
        if int(np.count_nonzero(self.size == 1)) >= REROLL_RECORDS:
            self.segments, self.bodies = find_segments(self.t, self.size)
            self.bodies = assign_modes(self.t, self.size, self.segments, self.bodies)
            mark_stored(self.segments, self.bodies, self.consumers, self.out)
        self.seg_at = {seg.start: seg for seg in self.segments}
        self.seg_of = {}  # record of a rerolled rep -> its segment
        for seg in self.segments:
            self.seg_of.update(dict.fromkeys(range(seg.start, seg.stop), seg))
        # body records whose value straight-line code reads from a local v<i>
        self.loaded = {i for i, seg in self.seg_of.items()
                       if i == self.out or any(c not in self.seg_of for c in self.consumers[i])}
        # scalar slices read by rerolled loops alone (the loops read their arrays)
        self.unused = {i for i in range(self.t.n_records)
                       if i not in self.seg_of and i != self.out and self.consumers[i]
                       and forwards(self.t, i, self.size)
                       and all(c in self.seg_of for c in self.consumers[i])}
        # runs of segments of one body with no code between them: one loop of calls each
        self.runs, run = {}, None
        for seg in self.segments:
            if run and run[-1].body == seg.body and all(
                    j in self.unused for j in range(run[-1].stop, seg.start)):
                run.append(seg)
            else:
                run = self.runs[seg.start] = [seg]

    def _local(self, i):
        """Whether scalar record i has the locals ``v<i>``/``g<i>`` in the kernel."""
        return self._scalar(i) and i not in self.unused and (i not in self.seg_of or
                                                             i in self.loaded)

    def _segment_slots(self, seg, pos):
        body = self.bodies[seg.body]
        seg.vb, seg.jb = pos, self.njac
        slots = body.slots()
        for r in range(seg.reps):
            for m, u in enumerate(slots):
                self.bo[seg.start + r * seg.length + u] = pos + r * len(slots) + m
        self.njac += seg.reps * body.jac_stride
        return pos + seg.reps * len(slots)

    def tables(self, base):
        """The index tables of the segments, laid out from position ``base`` of the kernel's
        int array (sets each segment's ``tb``), then the arguments ``(tb, reps, vb, jb)`` of
        the segments of each run of several (:attr:`run_args`: where they start)."""
        rows = []
        for seg in self.segments:
            seg.tb = base + len(rows)
            rows += table_rows(self.t, seg, self.size,
                               lambda j: self.xp[j] if j in self.xp else self.bo[j])
        self.run_args = {}
        for start, run in self.runs.items():
            if len(run) > 1:
                self.run_args[start] = base + len(rows)
                rows += [v for seg in run for v in (seg.tb, seg.reps, seg.vb, seg.jb)]
        return np.asarray(rows, dtype=np.int64)

    def _segment(self, seg):
        """The calls of a run of segments (at its first): its body's forward loop, and its
        reverse loop in the reverse sweep, once per segment; values that straight-line code
        reads are loaded into locals after them. The calls of a run of several segments are
        a loop over their arguments in the kernel's int array: one call site instead of one
        per segment (each a copy of the loop, once LLVM inlines it: measured, the LJ kernel
        at N = 38, 37 segments, compiles in 4 s instead of 7 s)."""
        run = self.runs.get(seg.start)
        if run is None:
            return  # emitted with the run
        b = seg.body
        if len(run) == 1:
            # np.int64(): Numba compiles a callee once per distinct *literal* int argument
            args = (f"pool, np.int64({seg.tb}), np.int64({seg.reps}), np.int64({seg.vb}), "
                    f"np.int64({seg.jb})")
            each, back = [], []
        else:
            args = "pool, pool[k], pool[k + 1], pool[k + 2], pool[k + 3]"
            pb, pe = self.run_args[seg.start], self.run_args[seg.start] + 4 * len(run)
            each, back = [f"for k in range({pb}, {pe}, 4):"], [
                f"for k in range({pe - 4}, {pb - 4}, -4):"]
        d = len(each)
        call = f"(val, jac, xin, {args})"
        if self.bodies[b].preacc:  # not one loop with a branch: that halves its speed
            self.F("if want_grad:")
            for x in each:
                self.F(x, 1)
            self.F(f"rb{b}_g{call}", 1 + d)
            self.F("else:")
            for x in each:
                self.F(x, 1)
            self.F(f"rb{b}_f{call}", 1 + d)
        else:
            for x in each:
                self.F(x)
            self.F(f"rb{b}_f{call}", d)
        loads = [i for sg in run for i in range(sg.start, sg.stop) if i in self.loaded]
        for i in loads:
            self.F(f"v{i} = val[{self.bo[i]}]")
        self.R([(0, f"adj[{self.bo[i]}] += g{i}") for i in loads] + [(0, x) for x in back] +
               [(d, f"rb{b}_r(val, jac, xin, adj, gx, {args})")])

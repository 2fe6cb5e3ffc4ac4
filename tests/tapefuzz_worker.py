"""The worker of tests/tapefuzz.py: loads mutated tape files and sweeps them, one job after
the other, and says how each ended (``python tests/tapefuzz.py worker JOBS RESULTS``).

Before a job it writes ``start <id>`` to the results file (flushed and synced: if the
process dies, the parent knows which job killed it); after it, one JSON line. The parent
runs it with ``NUMBA_BOUNDSCHECK=1``, so that a sweep reading out of bounds raises
IndexError instead of reading garbage, and with cache directories of its own.

Outcomes: ``format_error`` (the loader refused the file); ``ok_same`` (the gradient equals
that of a tape of the program recorded here, at the program's input and near it, or both
raise the same error); for a file that loads as another program, ``ok_consistent`` (its
gradient agrees with central differences of its own value), ``ok_by_design`` (it does not,
and may not: the mutation made a record stop_gradient, a custom rule, or an argument without
derivative rule), ``ok_unchecked`` (no coordinate was smooth and well scaled enough to
check), ``ok_refused`` (its replays all raise a documented error: a guard fails, the output
is not a scalar, a matrix is singular) or ``wrong_gradient``; ``out_of_bounds`` (a sweep
raised an IndexError about bounds); ``other_exception``; ``harness_error`` (the harness
itself failed). The parent adds ``signal`` and ``timeout``. A third step prints the tape with
adjoints (:meth:`jittape.Tape.format`): a reverse sweep over the values stored in the file.
"""

import json
import os
import sys
import traceback

import numpy as np

import tapefuzz_corpus

#: Relative agreement of an ``ok_same`` value and gradient with the reference's.
SAME_RTOL = 1e-12
#: Central differences: relative step, and the agreement required on a well-scaled coordinate.
FD_STEP, FD_RTOL = 1e-6, 1e-5
#: Coordinates checked by central differences per point.
FD_COORDS = 8
#: A program with values above this is not well scaled for differences (steps vanish).
MAX_SCALE = 1e10


#: Ops that pass values on and no adjoint back, by definition.
NO_ADJOINT = {"stopgrad", "custom_arg"}


def _flat(v):
    """A value or gradient (float, array, tuple of them) as one flat float array."""
    if isinstance(v, (tuple, list)):
        return np.concatenate([_flat(u) for u in v]) if v else np.zeros(0)
    return np.asarray(v, dtype=float).ravel()


def _allowed():
    """Errors a replay may raise for a program that is valid but fails at a point."""
    import jittape
    return (jittape.GuardFailure, jittape.NonScalarOutputError, np.linalg.LinAlgError)


def attempt(tape, args):
    """``("ok", value, gradient)``, ``("raise", name, message)`` for an allowed error,
    ``("oob", ...)`` for an IndexError about bounds, else ``("error", ...)``."""
    try:
        v, g = tape.value_and_gradient(*args)
        return ("ok", _flat(v), _flat(g))
    except _allowed() as e:
        return ("raise", type(e).__name__, str(e)[:300])
    except IndexError as e:
        return ("oob" if "out of bounds" in str(e) else "error", "IndexError", _where(e))
    except Exception as e:  # noqa: BLE001  (the point of the harness)
        return ("error", type(e).__name__, _where(e))


def _where(e):
    """The message of ``e`` and the innermost frame of jittape that raised it."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if "jittape" in f.filename]
    at = f" [at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}]" if frames else ""
    return f"{str(e)[:300]}{at}"


def _hard(got):
    """The failure among attempts ``got`` (an out-of-bounds read, an exception), or None."""
    for step, r in enumerate(got):
        if r[0] in ("oob", "error"):
            kind = "out_of_bounds" if r[0] == "oob" else "other_exception"
            return dict(outcome=kind, step=f"gradient at point {step}", detail=f"{r[1]}: {r[2]}")
    return None


class _Raises:
    """A tape whose replay raises ValueError (the harness's self test)."""

    def value_and_gradient(self, *xs):
        raise ValueError("self test")


def _close(a, b, rtol):
    if a.shape != b.shape:
        return False
    scale = np.max(np.abs(b), initial=0.0)
    ok = np.abs(a - b) <= rtol * np.abs(b) + rtol * 1e-3 * scale
    return bool(np.all(ok | (np.isnan(a) & np.isnan(b))))


def same(got, want):
    """Whether two attempts' outcomes agree (same numbers, or the same error)."""
    if got[0] != want[0]:
        return False
    if got[0] == "ok":
        return _close(got[1], want[1], SAME_RTOL) and _close(got[2], want[2], SAME_RTOL)
    return got[1] == want[1]


class Worker:
    """Runs jobs against a corpus (``corpus.json`` of tests/tapefuzz_corpus.py)."""

    def __init__(self, corpus):
        self.corpus = {e["id"]: e for e in corpus}
        self.refs, self.clean = {}, {}

    def reference(self, pid):
        """``(tape, points, attempts)``: a tape of program ``pid`` recorded here, the points
        to replay at (its input and one near it) and its own attempts there."""
        if pid not in self.refs:
            import jittape
            e = self.corpus[pid]
            x0 = np.array(e["x"], dtype=float).reshape(e["shape"])
            rng = np.random.default_rng(len(e["x"]))
            x1 = x0 + 1e-4 * rng.standard_normal(x0.shape)
            pts = [x0, x1] if x0.ndim else [float(x0), float(x1)]
            tape = jittape.record(tapefuzz_corpus.function(e["source"]), pts[0])
            tape.auto_compile = False
            self.refs[pid] = (tape, pts, [attempt(tape, (p,)) for p in pts])
        return self.refs[pid]

    def run(self, job):
        """The outcome of one job (a dict)."""
        if job.get("selftest"):
            return self.selftest(job)
        try:
            return self._run(job)
        except Exception as e:  # noqa: BLE001  (a loaded tape broke the harness itself)
            return dict(outcome="other_exception", step="harness",
                        detail=f"{type(e).__name__}: {_where(e)}")

    def _run(self, job):
        import jittape
        try:
            tape = jittape.load(job["path"])
        except jittape.TapeFormatError as e:
            return dict(outcome="format_error", detail=str(e)[:200])
        except Exception as e:  # noqa: BLE001
            return dict(outcome="other_exception", step="load",
                        detail=f"{type(e).__name__}: {_where(e)}")
        if hasattr(tape, "auto_compile"):
            tape.auto_compile = False  # the interpreter's sweeps only (bounds-checked)
        try:
            _, pts, want = self.reference(job["program"])
        except Exception as e:  # noqa: BLE001  (the harness's own failure: say so)
            return dict(outcome="harness_error", step="reference",
                        detail=f"{type(e).__name__}: {_where(e)}")
        args, plain = self._points(tape, pts)
        got = [attempt(tape, a) for a in args]
        bad = _hard(got) or self._format(tape)
        if bad:
            return bad
        if plain and all(same(g, w) for g, w in zip(got, want)):
            return dict(outcome="ok_same")
        return self._consistency(tape, args, got, job["program"])

    @staticmethod
    def _points(tape, pts):
        """The arguments to replay ``tape`` at: the program's points if its inputs are the
        program's (``plain``), else points of the tape's own input shapes."""
        t = tape.arrays
        shapes = [t.shape(i) for i in t.inputs]
        if not all(type(d) is int for s in shapes for d in s):  # (not shapes: let the
            return [(p,) for p in pts], False  # replay say what it does with them)
        if len(shapes) == 1 and shapes[0] == np.shape(pts[0]):
            return [(p,) for p in pts], True
        out = []
        for p in pts:
            flat = np.resize(np.ravel(p), sum(int(np.prod(s)) for s in shapes) or 1)
            args, pos = [], 0
            for s in shapes:
                m = int(np.prod(s))
                args.append(flat[pos:pos + m].reshape(s) if s else float(flat[pos]))
                pos += m
            out.append(tuple(args))
        return out, False

    @staticmethod
    def _format(tape):
        """Print the tape with adjoints: a reverse sweep over the file's own values (no
        forward sweep recomputes them first)."""
        try:
            tape.format()
        except _allowed():
            return None
        except IndexError as e:
            kind = "out_of_bounds" if "out of bounds" in str(e) else "other_exception"
            return dict(outcome=kind, step="format", detail=f"IndexError: {_where(e)}")
        except Exception as e:  # noqa: BLE001
            return dict(outcome="other_exception", step="format",
                        detail=f"{type(e).__name__}: {_where(e)}")
        return None

    def _consistency(self, tape, args, got, program):
        """Another program: its gradient against central differences of its own value. A
        disagreement at every point checked is a wrong gradient; at one of two, the
        differences' own trouble (a matrix singular at the program's input, say)."""
        checks = []
        for a, r in zip(args, got):
            if r[0] == "ok" and np.all(np.isfinite(r[1])) and np.all(np.isfinite(r[2])):
                n, bad = self._fd_point(tape, a, r)
                if n:
                    checks.append(bad)
        if checks and all(checks):
            why = self._by_design(tape, program, args)
            return dict(outcome="ok_by_design" if why else "wrong_gradient",
                        detail=f"{checks[0]}{'; ' + why if why else ''}")
        if checks:
            return dict(outcome="ok_consistent", detail=" ".join(
                [f"{len(checks)} points agree"] + [f"(not at one: {b})" for b in checks if b]))
        if all(r[0] == "raise" for r in got):
            return dict(outcome="ok_refused", detail=", ".join(sorted({r[1] for r in got})))
        return dict(outcome="ok_unchecked", detail="no coordinate to check (non-finite, huge "
                    "or not smooth values, guards between the steps)")

    def _by_design(self, tape, program, args):
        """Why a gradient that differs from its value's differences is right by definition
        (None if it is not): the mutated program has an op whose derivative is by design not
        its value's there (see :func:`_conventions`)."""
        import jittape
        if program not in self.clean:
            self.clean[program] = jittape.load(self.corpus[program]["path"]).arrays
        why = _conventions(tape.arrays, self.clean[program], args, tape)
        # stop_gradient and a custom rule's argument (custom_arg): the identity, without
        # adjoint (the rule's record gives it); as the identity the differences must agree
        if why or not NO_ADJOINT & set(_names(tape.arrays)):
            return why
        t = tape.arrays
        sg = np.array([n in NO_ADJOINT for n in _names(t)])
        op = np.where(sg, jittape.ops.codes.MULC, t.op).astype(t.op.dtype)
        plain = jittape.Tape(type(t)(op, t.a, t.b, t.k, np.where(sg, 1.0, t.c), t.off,
                                     t.pool, t.val, t.shapes, t.inputs),
                             tape.out_id, tape.out_shape, tape.out_value, tape.single)
        plain.auto_compile = False
        checks = [self._fd_point(plain, a, r) for a in args
                  for r in [attempt(plain, a)] if r[0] == "ok"]
        if checks and all(n and not bad for n, bad in checks):
            return ("by design: the gradient of stop_gradient (custom_arg) is 0 (as the "
                    "identity, it agrees)")
        return None

    @staticmethod
    def _fd_point(tape, args, r):
        """``(coordinates checked, first disagreement or None)`` at one point."""
        flat = np.concatenate([np.ravel(a) for a in args])
        shapes = [np.shape(a) for a in args]
        g = r[2]
        if g.size != flat.size:
            return 0, f"gradient of {g.size} elements for {flat.size} inputs"

        def value(z):
            parts, pos = [], 0
            for s in shapes:
                m = int(np.prod(s))
                parts.append(z[pos:pos + m].reshape(s) if s else float(z[pos]))
                pos += m
            return float(_flat(tape.value(*parts))[0])

        try:  # values so large that steps of 1e-6 vanish in them: no differences
            v = tape._forward(list(args))
            if np.max(np.abs(v[np.isfinite(v)]), initial=0.0) > MAX_SCALE:
                return 0, None
        except _allowed():
            pass
        rng = np.random.default_rng(flat.size)
        coords = rng.permutation(flat.size)[:FD_COORDS]
        checked, f0 = 0, float(r[1][0])
        for j in coords.tolist():
            h = FD_STEP * max(1.0, abs(flat[j]))
            try:
                up, down = _step(value, flat, j, h), _step(value, flat, j, -h)
            except _allowed():
                continue  # a guard between the steps: no difference quotient there
            d, right, left = (up - down) / (2 * h), (up - f0) / h, (f0 - down) / h
            noise = 1e3 * np.finfo(float).eps * max(abs(f0), abs(up), abs(down)) / h
            tol = FD_RTOL * max(1.0, abs(d)) + noise
            if not np.isfinite(d) or abs(right - left) > 100 * tol:
                continue  # not smooth there (a kink at x, a jump, cancellation)
            checked += 1
            if abs(g[j] - d) > tol:
                return checked, (f"d/dx[{j}] = {g[j]!r}, central differences {d!r} "
                                 f"(one-sided: {left!r}, {right!r}; step {h:.1e})")
        return checked, None

    def selftest(self, job):
        """Jobs that must fail, each its own way: the harness's own test."""
        what = job["selftest"]
        if what == "raise":
            return _hard([attempt(_Raises(), ())])
        if what == "crash":
            os.kill(os.getpid(), 11)
        if what == "hang":
            import time
            time.sleep(3600)
        ref, pts, want = self.reference(job["program"])
        if what == "wrong":  # a gradient 1% off
            return self._consistency(ref, [(p,) for p in pts],
                                     [(w[0], w[1], w[2] * 1.01) for w in want], job["program"])
        import jittape  # "oob": a tape the loader never saw, whose gather reads past x
        t = jittape.record(lambda x: np.sum(x[[2, 0]]), np.ones(3))
        t.auto_compile = False
        a = t.arrays
        gathers = [i for i, c in enumerate(a.op.tolist()) if jittape.ops.OPS[c].name == "gather"]
        a.pool[a.k[gathers[0]]] = 10 ** 6
        r = attempt(t, (np.ones(3),))
        return dict(outcome="out_of_bounds" if r[0] == "oob" else f"not detected: {r}",
                    detail=str(r[2]))


def _names(t):
    import jittape
    return [jittape.ops.OPS[c].name for c in t.op.tolist()]


def _conventions(t, clean, args, tape):
    """Why the tape arrays ``t`` of a program mutated from ``clean`` may have a gradient
    that is not its value's derivative, by design of the ops it now uses: a custom rule
    (its derivative is the rule's) in a program whose layout changed; an op at a changed
    record given an argument it has no derivative rule for (jittape's partial is 0);
    cholesky or eigh of a matrix that is not symmetric at the point (their value reads one
    triangle, their rule's adjoint is symmetric, as JAX's). None if none applies."""
    import jittape
    ops = [jittape.ops.OPS[c] for c in t.op.tolist()]
    same = t.n_records == clean.n_records and np.array_equal(t.pool, clean.pool) and all(
        np.array_equal(getattr(t, f), getattr(clean, f)) for f in ("op", "a", "b", "k"))
    if not same and any(op.kind in ("region", "call") for op in ops):
        return "by design: a custom rule's derivative is the rule's"
    for i, op in enumerate(ops):
        if op.constant and (i >= clean.n_records or any(
                int(getattr(t, f)[i]) != int(getattr(clean, f)[i]) for f in ("op", "a", "b", "k"))):
            return f"by design: record {i} is now {op.name} (no derivative in its {op.constant})"
    for a in args:
        try:
            val = tape._forward(list(a))
        except _allowed():
            continue
        for i, op in enumerate(ops):
            if op.name in ("cholesky", "eigh"):
                nn, j = int(t.pool[t.k[i]]), int(t.a[i])
                m = val[t.off[j]:t.off[j + 1]].reshape(-1, nn, nn)
                if not np.allclose(m, m.transpose(0, 2, 1), rtol=1e-12, atol=0):
                    return f"by design: {op.name} of a matrix that is not symmetric (record {i})"
    return None


def _step(value, flat, j, h):
    z = flat.copy()
    z[j] += h
    return value(z)


def warm(names):
    """Compile the forward and reverse sweeps of the op set ``names`` (op names): tapes
    whose ops it contains then reuse them (:mod:`jittape.sweeps.opsets`)."""
    if not names:
        return
    from jittape.ops import OPS
    from jittape.sweeps import opsets, tiers, warmup
    code = {op.name: op.code for op in OPS}
    codes = opsets.with_leaves([code[n] for n in names if n in code])
    s = opsets.Sweeps(codes)
    opsets.LOADED.setdefault(codes, s)
    with tiers.foreground():
        for what in ("forward_sweep", "reverse_sweep"):
            warmup.call_empty(getattr(s, what), what)


def _done(results_path):
    """Ids of the jobs a worker before this one finished, or died in."""
    done = set()
    if os.path.exists(results_path):  # a restarted worker goes on after the done jobs
        with open(results_path) as f:
            for line in f:
                if line.startswith("{"):
                    done.add(json.loads(line)["id"])
                elif line.startswith("start "):
                    done.add(line.split()[1])  # (that one killed the last worker)
    return done


def main(jobs_path, results_path, corpus_path, warm_names=""):
    with open(corpus_path) as f:
        worker = Worker(json.load(f))
    warm([n for n in warm_names.split(",") if n])
    done = _done(results_path)
    with open(jobs_path) as f:
        jobs = [json.loads(line) for line in f]
    with open(results_path, "a") as out:
        out.write("ready\n")
        out.flush()
        for job in jobs:
            if job["id"] in done:
                continue
            out.write(f"start {job['id']}\n")
            out.flush()
            os.fsync(out.fileno())
            res = dict(worker.run(job), id=job["id"])
            out.write(json.dumps(res) + "\n")
            out.flush()
            os.fsync(out.fileno())


if __name__ == "__main__":
    main(*sys.argv[1:])

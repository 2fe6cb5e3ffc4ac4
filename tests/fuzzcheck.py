"""Checks of one generated program (tests/fuzzprog.py) against NumPy, finite differences and
jittape itself, and the long fuzzing campaign (``python tests/fuzzcheck.py --help``).

For a program ``f`` at its input ``x`` (see :func:`check`):
  1. value: jittape's eager value against ``f`` run by NumPy on float64 arrays;
  2. gradient: against central differences (``jittape.testing.check_gradient``), unless a
     finite-difference step crosses a kink (the probe source tells: see ``fuzzops.Kinks``);
  3. JVP: ``jittape.jvp(f, (x,), (v,))`` against ``<gradient, v>``;
  4. replay: ``jittape.record(f, x).value_and_gradient(x2)`` against eager
     ``jittape.value_and_grad(f)(x2)``; a GuardFailure is allowed only if the program branches.
"""

import argparse
import collections
import sys
import time

import numpy as np

import jittape
import jittape.sweeps.warmup
from jittape.sweeps import numpy_tier, opsets
from jittape.sweeps.regions import Run
from jittape.numpy import dispatch
from jittape.numpy.active import Active
from jittape.testing import check_gradient

import fuzzprog


class Failure(AssertionError):
    """A check that failed: ``kind`` names it (a category of bug), ``detail`` the numbers."""

    def __init__(self, kind, detail):
        super().__init__(f"[{kind}] {detail}")
        self.kind, self.detail = kind, detail


def _close(got, want, rtol, atol):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    return got.shape == want.shape and bool(np.all(
        (np.abs(got - want) <= atol + rtol * np.abs(want)) | (np.isnan(got) & np.isnan(want))))


def _run(kind, fn, *args):
    """``fn(*args)``; an exception other than a Failure is a failure of ``kind``."""
    try:
        return fn(*args)
    except Failure:
        raise
    except Exception as e:
        raise Failure(kind, f"{type(e).__name__}: {e}") from e


def _copy(x):
    return x.copy() if isinstance(x, np.ndarray) else x


class Probe:
    """Runs the probe source of a program, recording the side of every kink (a signature),
    on plain arrays or on jittape's active values (their primals)."""

    def __init__(self, program):
        self.sigs = []
        self.f = program.function(program.probe_source, _k=self._k, _ka=self._ka,
                                  _ks=self._ks, _kc=self._kc, _kb=self._kb)

    def __call__(self, x):
        self.sig = []
        out = self.f(_copy(x))
        self.sigs.append(self.sig)
        return out

    def _k(self, a, b):
        self.sig.append(np.sign(np.subtract(_primal(a), _primal(b))))
        return a

    def _ka(self, a, axis, fn):
        b = np.asarray(_primal(a))
        if isinstance(axis, tuple):  # argmax over several axes: move them last, merge them
            b = np.moveaxis(b, axis, range(-len(axis), 0))
            b, axis = b.reshape(b.shape[:b.ndim - len(axis)] + (-1,)), -1
        self.sig.append(fn(b, axis=axis))
        return a

    def _ks(self, a, axis):
        self.sig.append(np.argsort(_primal(a), axis=axis, kind="stable"))
        return a

    def _kc(self, a, period, offset):
        self.sig.append(np.floor((np.asarray(_primal(a)) + offset) / period))
        return a

    def _kb(self, a, knots):
        self.sig.append(np.searchsorted(knots, _primal(a)))
        return a

    def crossed(self):
        """Whether some run fell on another side of a kink than the first run."""
        first = self.sigs[0]
        return any(len(s) != len(first) or not all(np.array_equal(p, q) for p, q in zip(s, first))
                   for s in self.sigs[1:])


def check(p, stats, compile_tape=False):
    """Run checks 1-4 on program ``p``; raise :class:`Failure` on the first that fails.
    ``stats`` (a Counter) counts inconclusive gradient checks and allowed guard failures.
    ``compile_tape``: also replay the compiled tape (about a second of Numba compile)."""
    value, grad = _check_values(p, stats)
    _check_gradient(p, grad, stats)
    f = p.function()
    _check_forward_mode(p, f, value, grad)
    tape = _check_replay(p, f, stats)
    if compile_tape:
        _check_compiled(p, f, tape, stats)


def _check_forward_mode(p, f, value, grad):
    """Check 3: ``jittape.jvp`` against ``<grad, v>``; the Jacobian of the program's vector
    form (the terms of f) in forward and reverse mode: equal, and its rows sum to grad."""
    out, tangent = _run("jvp-crash", jittape.jvp, f, (p.x,), (p.v,))
    gv = float(np.sum(grad * p.v))
    if not _close(out, value, 1e-12, 1e-12) or \
            not _close(tangent, gv, 1e-9, 1e-10 * (1 + float(np.sum(np.abs(grad * p.v))))):
        raise Failure("jvp", f"jvp gives ({out!r}, {tangent!r}); value and <grad, v> are "
                             f"({value!r}, {gv!r})")
    fv = p.function(p.vector_source)
    jf = _run("jvp-crash", jittape.jacobian(fv, mode="forward"), p.x)
    jr = _run("crash", jittape.jacobian(fv, mode="reverse"), p.x)
    if not _close(jf, jr, 1e-9, 1e-10) or not _close(np.sum(jr, axis=0), grad, 1e-9, 1e-9):
        raise Failure("jacobian", f"forward-mode Jacobian {jf!r}, reverse-mode {jr!r}, "
                                  f"gradient of their sum {grad!r}")


def _primal(v):
    if isinstance(v, np.ndarray) and v.dtype == object:  # np.array([a, b]) of actives
        return np.array([_primal(e) for e in v.flat]).reshape(v.shape)
    if type(v) in dispatch.PROXIES:  # a preallocated array (np.zeros(n) filled with actives)
        v = dispatch.PROXIES[type(v)](v)
    return v._v if isinstance(v, Active) else v


def _check_values(p, stats):
    """Check 1: the value, and every variable's final value and shape, against NumPy's,
    unless rounding put the two runs on different sides of a kink (an exact tie, decided by
    the last bit). Returns jittape's eager value and gradient."""
    seen = []
    f = p.function(p.trace_source, _seen=seen.append)
    want = f(_copy(p.x))
    value, grad = _run("crash", jittape.value_and_grad(f), p.x)
    wrong = None if _close(value, want, 1e-9, 1e-8) else f"jittape {value!r}, NumPy {want!r}"
    numpy_vars, jittape_vars = seen
    for name, w in numpy_vars.items():
        got = _primal(jittape_vars[name])
        if not wrong and (np.shape(got) != np.shape(w) or not _close(got, w, 1e-9, 1e-9)):
            wrong = f"{name} is {got!r} (shape {np.shape(got)}), NumPy's is {w!r} (shape " \
                    f"{np.shape(w)})"
    if wrong:
        probe = Probe(p)
        probe(p.x)
        jittape.value_and_grad(probe)(p.x)
        if not probe.crossed():
            raise Failure("value", wrong)
        stats["kinks decided otherwise by rounding"] += 1
    return value, grad


def _check_gradient(p, grad, stats):
    """Central differences at steps 1e-6, 1e-5, 1e-4, 1e-8: a wrong gradient fails at all,
    rounding (small steps) or curvature (large steps) not. Kinks crossed by a step make the
    check moot."""
    probe = Probe(p)
    probe(p.x)
    errors = []
    for h in (1e-6, 1e-5, 1e-4, 1e-8):
        try:
            check_gradient(probe, lambda x: grad, (p.x,), n_directions=2, h=h, rtol=1e-5,
                           atol=1e-7)
            return
        except AssertionError as e:
            errors.append(str(e))
        if probe.crossed():
            stats["gradient check crossed a kink"] += 1
            return
    raise Failure("gradient", f"gradient {grad!r}; {errors[0]}")


def _check_replay(p, f, stats):
    """Check 4: a tape recorded at x, replayed at x2 (near) and x3 (far: selections such as
    where, max, sort may switch) against eager jittape there: value and gradient, replayed
    JVP and VJP. A ``taped(f)`` function must agree at x3 even when a guard fails."""
    tape = _run("record-crash", jittape.record, f, p.x)
    for name, y in (("x2", p.x2), ("x3", p.x3)):
        try:
            got = tape.value_and_gradient(y)
            got_jvp = tape.jvp(y, tangents=p.v)
            got_vjp = tape.vjp((y,), 1.0)
        except jittape.GuardFailure as e:
            if not p.branchy:
                raise Failure("guard", f"GuardFailure at {name} in a program without "
                                       f"branches: {e}") from e
            stats[f"replay guard failures at {name} (allowed)"] += 1
            continue
        except Exception as e:
            raise Failure("replay-crash", f"{type(e).__name__}: {e}") from e
        want = _run("crash", jittape.value_and_grad(f), y)
        want_jvp = _run("jvp-crash", jittape.jvp, f, (y,), (p.v,))
        for what, g, w in (("value and gradient", got, want), ("jvp", got_jvp, want_jvp),
                           ("vjp", got_vjp, want)):
            if not all(_close(a, b, 1e-9, 1e-10) for a, b in zip(g, w)):
                raise Failure("replay", f"replayed {what} at {name}: {g!r}; eager: {w!r}")
    _check_optimized(tape, p)
    _check_numpy_tier(tape)
    tf = jittape.taped(f, compile=False)
    _run("replay-crash", tf.value_and_grad, p.x)
    got, want = _run("replay-crash", tf.value_and_grad, p.x3), jittape.value_and_grad(f)(p.x3)
    if not all(_close(a, b, 1e-9, 1e-10) for a, b in zip(got, want)):
        raise Failure("replay", f"taped(f) at x3 after x: {got!r}; eager: {want!r}")
    return tape


def _check_optimized(tape, p):
    """The optimized tape (jittape.tape.optimize) against the recorded one at x, x2 and x3:
    the same value, gradient (within reassociation) and JVP, and the same guard failures;
    then the tape optimized with absolute zeros, wherever the recorded one's results are
    finite (where they are not, IEEE's nan * 0 is what the folding changes)."""
    opt = _run("optimize-crash", tape.optimize)
    _compare_optimized(tape, opt, p, False)
    _compare_optimized(tape, _run("optimize-crash", tape.optimize, True), p, True)


def _compare_optimized(tape, opt, p, absolute_zero):
    for name, y in (("x", p.x), ("x2", p.x2), ("x3", p.x3)):
        try:
            want = (*tape.value_and_gradient(y), tape.jvp(y, tangents=p.v)[1])
        except jittape.GuardFailure:
            if absolute_zero:  # (its guards on folded values are gone: they read 0 * v)
                continue
            try:
                opt.value_and_gradient(y)
            except jittape.GuardFailure:
                continue
            raise Failure("optimized", f"the optimized tape passes a guard at {name} that "
                                       f"the recorded one fails") from None
        if absolute_zero and not all(np.all(np.isfinite(w)) for w in want):
            continue
        got = _run("optimized-crash", lambda: (*opt.value_and_gradient(y),
                                               opt.jvp(y, tangents=p.v)[1]))
        if not all(_close(a, b, 1e-12, 1e-12) for a, b in zip(got, want)):
            raise Failure("optimized", f"optimized tape at {name}: {got!r}; recorded: {want!r}"
                                       f" ({opt.optimization})")


def _check_numpy_tier(tape):
    """The NumPy reverse sweep (jittape.sweeps.numpy_tier, tier 0 of large array tapes)
    against the compiled one: the adjoints of every record but the constants."""
    t = tape.arrays
    if tape.out_id < 0 or not numpy_tier.usable(set(t.op.tolist()), t.columns):
        return
    seed = np.zeros_like(t.val)
    seed[t.off[tape.out_id]:t.off[tape.out_id + 1]] = 1.0
    want, got = seed.copy(), seed.copy()
    Run(t, opsets.for_tape(t)).reverse(t.val, want, 0, tape.out_id + 1)
    _run("numpy-tier-crash", numpy_tier.reverse_sweep, *t.columns, t.val, got, 0,
         tape.out_id + 1)
    live = np.repeat(t.op != jittape.ops.codes.CONST, np.diff(t.off))
    if not _close(got[live], want[live], 1e-9, 1e-10 * (1 + np.max(np.abs(want[live]),
                                                                      initial=0.0))):
        raise Failure("numpy-tier", f"NumPy reverse sweep: {got[live]!r}; compiled: "
                                    f"{want[live]!r}")


def _check_compiled(p, f, tape, stats):
    """The compiled tape replayed at x2 and x3 against eager jittape there."""
    try:
        tape.compile()
    except ValueError:  # tapes the compiler declines (too long)
        stats["tapes not compiled"] += 1
        return
    except Exception as e:
        raise Failure("compile-crash", f"{type(e).__name__}: {e}") from e
    stats["tapes compiled"] += 1
    for name, y in (("x2", p.x2), ("x3", p.x3)):
        try:
            got = tape.value_and_gradient(y)
        except jittape.GuardFailure:
            continue
        except Exception as e:
            raise Failure("compiled-crash", f"{type(e).__name__}: {e}") from e
        want = jittape.value_and_grad(f)(y)
        if not all(_close(a, b, 1e-9, 1e-10) for a, b in zip(got, want)):
            raise Failure("compiled", f"compiled tape at {name}: {got!r}; eager: {want!r}")


# --- the long campaign: every failure collected, grouped, shrunk -----------------------------
def _key(e):
    """A failure's group: its kind, and for errors the exception's first words."""
    words = " ".join(e.detail.split()[:6]) if "crash" in e.kind or e.kind == "guard" else ""
    return f"{e.kind}: {''.join(c for c in words if not c.isdigit())}"


def failure_of(p, compile_tape=False):
    """The Failure that program ``p`` raises, or None."""
    try:
        check(p, collections.Counter(), compile_tape)
    except Failure as e:
        return e
    return None


def shrink(p, key):
    """Delete statements of ``p`` (and those that stop running without them) while it still
    fails in group ``key``."""
    done, compiled = False, key.startswith("compile")
    while not done:
        done = True
        for i in reversed(range(len(p.stmts))):
            trial = p.shrunk(p.stmts[:i] + p.stmts[i + 1:])
            e = failure_of(trial, compiled)
            if e is not None and _key(e) == key:
                p, done = trial, False
                break
    return p


def campaign(n, seed, max_stmts, compile_every=0, per_group=5):
    """Run ``n`` programs (compiling the tape of every ``compile_every``-th one); return
    (stats, {group: [(shrunk program, failure), ...]})."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed
    stats, found = collections.Counter(), collections.defaultdict(list)

    @hseed(seed)
    @settings(max_examples=n, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(fuzzprog.programs(max_stmts))
    def run(p):
        stats["programs"] += 1
        stats["statements"] += len(p.stmts)
        try:
            check(p, stats, compile_every and stats["programs"] % compile_every == 0)
        except Failure as e:
            stats[f"failed: {e.kind}"] += 1
            group = found[_key(e)]
            if len(group) < per_group:
                group.append((p, e))
    run()
    shrunk = {}
    for key, group in found.items():
        shrunk[key] = sorted(((q, failure_of(q, key.startswith("compile")))
                              for q in (shrink(p, key) for p, _ in group)),
                             key=lambda qe: len(qe[0].source))
    return stats, shrunk


def main(argv=None):
    ap = argparse.ArgumentParser(description="Long fuzzing campaign of jittape: random "
                                 "NumPy programs checked against NumPy, finite differences, "
                                 "JVPs and replay; failures grouped and shrunk.")
    ap.add_argument("-n", "--examples", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-stmts", type=int, default=10)
    ap.add_argument("--compile-every", type=int, default=0, metavar="K",
                    help="also compile the tape of every K-th program (about 1-2 s each; "
                    "the kernels go to the cache directory, see JITTAPE_CACHE_DIR)")
    ap.add_argument("--known-bugs", action="store_true",
                    help="also generate the ops left out for known bugs (fuzzprog.KNOWN_BUGS)")
    args = ap.parse_args(argv)
    if args.known_bugs:
        fuzzprog.SKIP.clear()
    jittape.set_quiet(True)
    jittape.sweeps.warmup.warmup()  # every op's sweeps, compiled once (or loaded from the cache)
    t0 = time.perf_counter()
    stats, groups = campaign(args.examples, args.seed, args.max_stmts, args.compile_every)
    print(f"# jittape fuzzing: {stats['programs']} programs ({stats['statements']} statements), "
          f"seed {args.seed}, {time.perf_counter() - t0:.0f} s\n")
    for k, v in sorted(stats.items()):
        print(f"- {k}: {v}")
    for key, group in groups.items():
        p, e = group[0]
        print(f"\n## {key}\n\n{p.reproducer()}\n{e}\n")
    return 1 if groups else 0


if __name__ == "__main__":
    sys.exit(main())

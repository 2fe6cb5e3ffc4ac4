"""Sweeps composed from pieces compiled once per machine: a new op set whose ops were
compiled before, in any sets, compiles nothing.

A sweep generated for an op set (:mod:`jittape.sweeps.opsets`) is compiled as a whole, so a
tape whose set is new waits for a compile (seconds for a large set) even when every one of
its ops has been compiled in some other set. Here a sweep is instead

* one *runner* per sweep kind, the same for every op set (module ``jittape_runner_*``): the
  loop over the records, with the branches of the ops of scalar code inline
  (:data:`jittape.sweeps.codegen.HOT`, as in a multi-part sweep), handing every other run of
  records to the part of its opcode through an address table indexed by opcode (a zero
  entry: a record without a branch, a leaf, skipped as the generated sweeps skip it);
* one *part* per op and sweep kind (module ``jittape_oppiece_*`` per op): a run of
  consecutive records of that op (:func:`jittape.sweeps.parts_source.part_lines`).

Each piece is an ordinary Numba function in its own generated module, cached on disk by a
hash of its source like any (:mod:`jittape.sweeps.disk_cache`), and bound together at run
time by :class:`jittape.sweeps.parts_runtime.Composed`: loading the runner and 15 parts from
the cache takes tens of milliseconds. The pieces are compiled in the compile process
(:func:`pieces_jobs`) whenever an op set is compiled cold there or in the foreground, so that
later op sets made of the same ops compose. A record costs the same as in a multi-part
sweep: a call (~30 ns) per run of records of one op outside the runner's own.
"""

from types import SimpleNamespace

from . import disk_cache, parts_source
from .codegen import HEADER, HOT, JIT, PRELUDE, SWEEPS, branch, branch_chain, rule_roots
from .helper_source import helper_source
from ..optable.table import BY_NAME, OPS, swept

RUNNER, PIECE = "jittape_runner", "jittape_oppiece"
_DOWN = ("reverse", "hvp")  # sweeps over records hi-1 down to lo
_sources = {}  # (prefix, op name or None) -> source


def _const():
    return BY_NAME["const"].code


def _signature(sweep):
    sig = SWEEPS[sweep][0]
    return sig[:-1].split("(")  # name, arguments


def runner_source():
    """The module of the runners (one per sweep kind), shared by every op set."""
    if (RUNNER, None) not in _sources:
        hot = [BY_NAME[n] for n in HOT]
        out = [HEADER + "from jittape.sweeps.parts_runtime import call_part\n"]
        runners = []
        for sweep, (_, _, ret, doc) in SWEEPS.items():
            name, args = _signature(sweep)
            step = "i -= 1" if sweep in _DOWN else "i += 1"
            calls = ["p = table[opc]", "if p != 0:", f"    i = call_part(p, ({args}, i))",
                     "else:", f"    {step}"]
            head = [JIT.format(cache=True), f"def {name}_run(table, {args}):"]
            runners.append("\n".join(parts_source.runner_lines(
                head, doc, sweep in _DOWN, ret, calls,
                PRELUDE + branch_chain(sweep, hot, _const()))) + "\n")
        helpers = helper_source(rule_roots(hot) + runners)
        _sources[RUNNER, None] = "\n\n".join(out + ([helpers] if helpers else []) + runners)
    return _sources[RUNNER, None]


def piece_source(op):
    """The module of ``op``'s parts: ``<sweep>_part`` per sweep kind where it has a branch."""
    key = (PIECE, op.name, op.code)
    if key not in _sources:
        parts = []
        for sweep in SWEEPS:
            if branch(op, sweep, _const()) is None:
                continue
            name, args = _signature(sweep)
            parts.append("\n".join(parts_source.part_lines(
                f"{name}_part", args, sweep in _DOWN, [f"opc != {op.code}"],
                PRELUDE + branch_chain(sweep, [op], _const()), JIT.format(cache=True))))
        helpers = helper_source(rule_roots([op]) + parts)
        _sources[key] = "\n\n".join(
            [f"# jittape sweep parts of op {op.name} (opcode {op.code}); generated, do not "
             f"edit\n" + HEADER] + ([helpers] if helpers else []) + parts)
    return _sources[key]


def piece_ops(codes, what):
    """The ops of ``codes`` that sweep ``what`` hands to a part: branch, not the runner's."""
    sweep = what.replace("_sweep", "")
    return [OPS[c] for c in sorted(codes) if swept(OPS[c]) and OPS[c].name not in HOT
            and branch(OPS[c], sweep, _const()) is not None]


def _pieces(codes, what):
    """``[(prefix, source, function name)]`` of the runner and the parts ``what`` needs."""
    out = [(RUNNER, runner_source(), f"{what}_run")]
    return out + [(PIECE, piece_source(op), f"{what}_part") for op in piece_ops(codes, what)]


def composable(codes, what):
    """Whether sweep ``what`` for ``codes`` can be composed of pieces compiled before (the
    runner and every part in the cache)."""
    return all(disk_cache.compiled_before(prefix, source, fn)
               for prefix, source, fn in _pieces(codes, what))


def namespace(codes, what):
    """A module-like object whose attribute ``what`` is the composed sweep for ``codes``
    (:class:`jittape.sweeps.parts_runtime.Composed`, compiled on its first call: loaded from
    the cache when :func:`composable`)."""
    from .parts_runtime import Composed
    runner = disk_cache.load(RUNNER, lambda cache: runner_source())
    parts = {op.code: getattr(disk_cache.load(PIECE, lambda cache: piece_source(op)),
                              f"{what}_part") for op in piece_ops(codes, what)}
    return SimpleNamespace(**{what: Composed(getattr(runner, f"{what}_run"), parts, len(OPS))},
                           __jittape_path__=None, __composed__=True)


def pieces_jobs(codes, what):
    """Compile-process jobs (:mod:`jittape.sweeps.compile_worker`) for the pieces of sweep
    ``what`` for ``codes`` that are not in the cache yet (their modules written to it)."""
    jobs = []
    for prefix, source, fn in _pieces(codes, what):
        if not disk_cache.compiled_before(prefix, source, fn):
            path = disk_cache.write(prefix, source)
            jobs.append({"kind": "piece", "path": str(path), "marker": fn, "what": what})
    return jobs

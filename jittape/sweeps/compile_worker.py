"""The compile process: ``python -m jittape.sweeps.compile_worker``, started by
:mod:`jittape.sweeps.compile_process`.

It reads one job a line on stdin (JSON) and answers one line on stdout, in order:

* ``{"kind": "sweep", "path": P, "what": W}``: import the generated module ``P`` (a file of
  the cache directory, written by the caller's process) and compile its sweep ``W`` by
  calling it on the empty tape (:func:`jittape.sweeps.warmup.empty_args`: the one
  specialization real tapes use), which stores the machine code in Numba's cache;
* ``{"kind": "kernel", "path": P}``: compile a compiled tape's ``tape_kernel`` for the
  argument types every replay passes (no call: a kernel indexes its buffers unchecked);
* ``{"kind": "piece", "path": P, "marker": F, "what": W}``: compile function ``F`` of a
  composed sweep's runner or part module (:mod:`jittape.sweeps.composed`) for sweep ``W``'s
  argument types;

then write the ``.ok`` marker beside ``P`` (:func:`jittape.sweeps.disk_cache.marker`) and
answer ``{"ok": true, "seconds": s}``, or ``{"ok": false, "error": "..."}``. The caller's
process loads the machine code from the cache, in its own thread: compiling here never
takes the caller's GIL. While a job runs, a ``.busy`` file beside ``P`` holds this process's
id, so that another process needing the same compile waits for it instead of repeating it.
The process ends when its stdin closes (the caller exited), after the jobs it was sent, so
that the cache holds them for the next run.
"""

import json
import os
import sys
import time
from pathlib import Path


def _module(path):
    """The generated module at ``path``, run from its source once that proved to be what
    its name (the hash of the source) says (:mod:`jittape.sweeps.trust`)."""
    from . import disk_cache, trust
    path = Path(path)
    module = sys.modules.get(path.stem)
    if module is None:
        source = path.read_text()
        if not path.stem.endswith("_" + disk_cache.digest(source)) or trust.foreign_files(path):
            raise ValueError(f"{path} is not a module jittape generated (its hash or owner)")
        module = trust.exec_source(path.stem, path, source)
        module.__jittape_path__ = path
        sys.modules[path.stem] = module
    return module


def _kernel_types(kernel):
    """Argument types of ``tape_kernel(val, adj, pool, xin, gx)`` (or of ``tape_kernel(xin,
    gx)``: :func:`jittape.compiler.frame.kernel_buffers`), as every replay passes them
    (:mod:`jittape.api.fastpath`)."""
    import numpy as np
    from numba import typeof
    f = np.empty(1)
    types = tuple(map(typeof, (f, f, np.empty(1, np.int64), f, f)))
    return types[5 - kernel.py_func.__code__.co_argcount:]


def run(job):
    """Compile what ``job`` names; return the seconds it took."""
    from . import compile_process, disk_cache, warmup
    if job.get("kind") not in ("sweep", "kernel", "piece"):
        raise ValueError(f"unknown job kind {job.get('kind')!r}")
    what = compile_process.marker_name(job)
    busy = disk_cache.busy_file(Path(job["path"]), what)
    busy.write_text(str(os.getpid()))  # other processes wait for this compile, not repeat it
    try:
        t0 = time.perf_counter()
        module = _module(job["path"])
        if job["kind"] == "sweep":
            warmup.call_empty(getattr(module, what), what)
        elif job["kind"] == "kernel":
            module.tape_kernel.compile(_kernel_types(module.tape_kernel))
        else:
            _compile_piece(getattr(module, what), job["what"])
        seconds = time.perf_counter() - t0
        disk_cache.marker(module, what).write_text(f"{seconds:.3f}\n")
    finally:
        busy.unlink(missing_ok=True)
    return seconds


def _compile_piece(fn, sweep):
    """Compile a runner or a part of a composed sweep (:mod:`jittape.sweeps.composed`) for the
    argument types of ``sweep`` on real tapes."""
    from numba import typeof, types
    from . import warmup
    from .parts_runtime import part_address
    argtys = tuple(map(typeof, warmup.empty_args(sweep)))
    if fn.__name__.endswith("_run"):
        fn.compile((types.Array(types.int64, 1, "C"),) + argtys)
    else:
        part_address(fn, argtys)


def main():
    try:  # the caller first: its own threads (SciPy's BLAS) win a core the compile wants
        os.nice(10)
    except (AttributeError, OSError):
        pass
    answers = os.fdopen(os.dup(1), "w")  # the caller reads this pipe, a line a job;
    os.dup2(2, 1)  # whatever else writes to stdout (Numba's NUMBA_DEBUG_CACHE) goes to stderr
    sys.stdout = sys.stderr
    for line in sys.stdin:
        try:
            answer = {"ok": True, "seconds": run(json.loads(line))}
        except Exception as e:  # noqa: BLE001 (reported to the caller, which compiles itself)
            answer = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        if answers is None:
            continue
        try:
            answers.write(json.dumps(answer) + "\n")
            answers.flush()
        except BrokenPipeError:  # the caller is gone: its jobs still go on into the cache
            answers = None


if __name__ == "__main__":
    main()

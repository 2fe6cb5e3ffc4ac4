"""Command line: ``python -m jittape {demo,ops,warmup,dot,trace}`` (also the ``jittape`` script).

``demo`` finds the global minimum of the 13-atom Lennard-Jones cluster with basin-hopping
and jittape gradients, compares with finite differences and prints a Wengert tape
(:func:`jittape.demo.run_demo`). ``ops`` prints the op table: every differentiable
operation with its NumPy functions and adjoint rule (:func:`jittape.optable.table.format_table`).
``warmup`` compiles the sweeps for every op of the table ahead of time (once per machine;
:func:`jittape.sweeps.warmup.warmup`), after which no tape compiles a sweep.
``dot`` and ``trace`` print the Graphviz graph and the traced reverse sweep of the demo's
small tape (:mod:`jittape.explain.dot`, :mod:`jittape.explain.trace`).
"""

import argparse
import os
import sys


def _build_parser():
    parser = argparse.ArgumentParser(
        prog="jittape",
        description="jittape: reverse-mode AD of plain NumPy code on a flat Wengert tape "
                    "swept by Numba.")
    from . import __version__
    parser.add_argument("--version", action="version", version=f"jittape {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{demo,ops,warmup,dot,trace}")
    demo = sub.add_parser(
        "demo", help="LJ13 global minimum by basin-hopping with jittape gradients",
        description="Minimize the 13-atom Lennard-Jones cluster with "
                    "scipy.optimize.basinhopping + L-BFGS-B using jittape gradients, compare "
                    "with SciPy finite differences, then print a small Wengert tape.")
    demo.add_argument("--seed", type=int, default=0,
                      help="random seed of the start and the steps (default: 0)")
    demo.add_argument("--niter", type=int, default=None,
                      help="basin-hopping iterations (default: run_demo's, 60)")
    demo.add_argument("--no-fd", action="store_true",
                      help="skip the finite-difference comparison run")
    ops = sub.add_parser("ops", help="print the op table (operations and derivative rules)",
                         description="Print every opcode with its arity, NumPy functions and "
                                     "adjoint rule.")
    ops.add_argument("--markdown", action="store_true",
                     help="print the supported-operations page (docs/ops.md) instead")
    warm = sub.add_parser("warmup", help="compile the sweeps of every op ahead of time (cached)",
                          description="Compile the forward, reverse, tangent and HVP sweeps "
                                      "for every op of the table into jittape's cache (once "
                                      "per machine); afterwards no program compiles a sweep.")
    warm.add_argument("-j", "--jobs", type=int, default=1,
                      help="processes compiling in parallel (default 1: measured on 2 shared "
                           "cores, 2 processes took 1.7x the CPU and no less time)")
    small = "f(x) = sin(x0 x1) + x0**2 at x = (1.5, -0.5)"
    sub.add_parser("dot", help="print the Graphviz graph of a small tape (pipe to dot -Tsvg)",
                   description=f"Print the DOT text of the tape of {small}, with values and "
                               "adjoints (jittape.Tape.to_dot).")
    sub.add_parser("trace", help="print the reverse sweep of a small tape, step by step",
                   description=f"Print the traced reverse sweep of the tape of {small}: "
                               "each record's rule from the op table, the adjoint flowing "
                               "in and out (jittape.Tape.trace_gradient).")
    return parser


def main(argv=None):
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit code.

    With no subcommand the help is printed and ``SystemExit(2)`` is raised (as argparse does
    for a usage error).
    """
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        raise SystemExit(2)
    try:
        if args.command == "ops" and args.markdown:
            from .explain.ops_page import ops_markdown
            sys.stdout.write(ops_markdown())
        elif args.command == "ops":
            from .optable.recorded import nesting
            from .optable.table import format_table
            print(format_table(nesting))
        elif args.command == "warmup":
            import time
            from .sweeps.disk_cache import cache_dir
            from .sweeps.warmup import warmup
            t0 = time.perf_counter()
            s = warmup(jobs=args.jobs)
            print(f"sweeps for all {len(s.names)} ops ready in {cache_dir()} "
                  f"({time.perf_counter() - t0:.1f} s)")
        elif args.command in ("dot", "trace"):
            import numpy as np
            from .demo import small_function
            from .api.tape import record
            tape = record(small_function, np.array([1.5, -0.5]))
            print(tape.to_dot(adjoints=True) if args.command == "dot" else
                  tape.trace_gradient(), end="\n" if args.command == "trace" else "")
        elif args.command == "demo":
            from .demo import run_demo
            kwargs = {"seed": args.seed, "compare_fd": not args.no_fd}
            if args.niter is not None:
                kwargs["niter"] = args.niter
            run_demo(**kwargs)
        sys.stdout.flush()
    except BrokenPipeError:  # output piped into e.g. `head`, which closed early
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # no second error when Python flushes at exit
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

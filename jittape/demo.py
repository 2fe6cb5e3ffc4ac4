"""Demo: the global minimum of the 13-atom Lennard-Jones cluster with jittape gradients.

The energy is written once as plain vectorized NumPy (:func:`lj_energy`); jittape records it
on a Wengert tape and sweeps it backwards for the gradient, which drives SciPy's
basin-hopping global optimizer (:func:`run_demo`). ``python -m jittape demo`` runs it.

References
----------
.. [1] J. E. Jones (Lennard-Jones), "On the determination of molecular fields. II.",
   Proc. R. Soc. Lond. A 106, 463-477 (1924).
.. [2] D. J. Wales and J. P. K. Doye, "Global optimization by basin-hopping and the lowest
   energy structures of Lennard-Jones clusters containing up to 110 atoms",
   J. Phys. Chem. A 101, 5111-5116 (1997).
.. [3] The Cambridge Cluster Database, https://www-wales.ch.cam.ac.uk/CCD.html
   (LJ13: E = -44.326801, an icosahedron).
.. [4] A. Griewank and A. Walther, "Evaluating Derivatives", 2nd ed., SIAM (2008).
"""

import contextlib
import os
import time

import numpy as np
import scipy.optimize

import jittape

#: Number of atoms of the demo cluster.
N_ATOMS = 13
#: Published global minimum energy of LJ13 in reduced units [2]_, [3]_.
LJ13_GLOBAL_MIN = -44.326801
#: Tolerance on the energy for "found the global minimum".
TOLERANCE = 1e-5

_PAIRS = {}  # n_atoms -> (i, j): upper-triangle pair indices, constants of the recording


def _pairs(n):
    """Indices ``(i, j)``, ``i < j``, of all atom pairs of an ``n``-atom cluster."""
    if n not in _PAIRS:
        _PAIRS[n] = np.triu_indices(n, 1)
    return _PAIRS[n]


def lj_energy(x):
    """Lennard-Jones cluster energy in reduced units, vectorized NumPy.

    Parameters
    ----------
    x : array_like, shape (3N,)
        Flat coordinates ``[x0, y0, z0, x1, y1, z1, ...]`` of ``N`` atoms.

    Returns
    -------
    float
        ``E = sum_{i<j} 4 (r_ij^-12 - r_ij^-6)`` (epsilon = sigma = 1) [1]_.

    Notes
    -----
    Plain NumPy, no jittape-specific code: ``jittape.grad(lj_energy)`` differentiates it.
    Pairs are taken by integer-array indexing with constant ``np.triu_indices``, so the tape
    has a fixed length (no guards) for every configuration of ``N`` atoms.
    """
    n = x.shape[0] // 3
    X = x.reshape(n, 3)
    i, j = _pairs(n)
    d = X[i] - X[j]                 # (n_pairs, 3) separation vectors
    r2 = np.sum(d**2, axis=-1)      # squared distances
    ir6 = r2**-3                    # r^-6
    return 4.0 * np.sum(ir6 * ir6 - ir6)


def lj_energy_loops(x):
    """The same energy as :func:`lj_energy`, written as Python scalar loops over ``x[i]``.

    Every ``x[k]`` is a scalar record, so the tape has O(N^2) scalar records: the kind of
    code that jittape's scalar fast path and Numba sweep are meant for.

    Parameters
    ----------
    x : array_like, shape (3N,)
        Flat coordinates of ``N`` atoms.

    Returns
    -------
    float
        ``sum_{i<j} 4 (r_ij^-12 - r_ij^-6)``.
    """
    n = len(x) // 3
    e = 0.0
    for i in range(n):
        xi, yi, zi = x[3 * i], x[3 * i + 1], x[3 * i + 2]
        for j in range(i + 1, n):
            dx = xi - x[3 * j]
            dy = yi - x[3 * j + 1]
            dz = zi - x[3 * j + 2]
            ir2 = 1.0 / (dx * dx + dy * dy + dz * dz)
            ir6 = ir2 * ir2 * ir2
            e = e + 4.0 * (ir6 * ir6 - ir6)
    return e


def lj_gradient_hand(x):
    """Hand-derived analytic gradient of :func:`lj_energy`, in NumPy.

    Parameters
    ----------
    x : array_like, shape (3N,)
        Flat coordinates of ``N`` atoms.

    Returns
    -------
    ndarray, shape (3N,)
        ``dE/dx``.

    Notes
    -----
    With ``E = sum_{i<j} u(r_ij)``, ``u(r) = 4 (r^-12 - r^-6)``::

        du/dr = 4 (-12 r^-13 + 6 r^-7)
        dr_ij/dX_i = (X_i - X_j) / r_ij = -dr_ij/dX_j

    so pair ``(i, j)`` adds ``u'(r) d / r`` to atom ``i`` and subtracts it from atom ``j``.
    """
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[0] // 3
    X = x.reshape(n, 3)
    i, j = _pairs(n)
    d = X[i] - X[j]
    r = np.sqrt(np.sum(d**2, axis=-1))
    dudr = 4.0 * (-12.0 * r**-13 + 6.0 * r**-7)
    f = (dudr / r)[:, None] * d     # dE/dX_i contribution of each pair
    g = np.zeros_like(X)
    np.add.at(g, i, f)
    np.add.at(g, j, -f)
    return g.ravel()


def _counted(fun):
    """``fun`` wrapped to count its calls (``wrapper.calls``) and time them
    (``wrapper.seconds``)."""
    def wrapper(x):
        t0 = time.perf_counter()
        try:
            return fun(x)
        finally:
            wrapper.seconds += time.perf_counter() - t0
            wrapper.calls += 1
    wrapper.calls = 0
    wrapper.seconds = 0.0
    return wrapper


def _single_threaded_blas():
    """A context limiting BLAS to one thread if ``threadpoolctl`` is installed.

    SciPy's L-BFGS-B makes many tiny BLAS calls; with a multi-threaded OpenBLAS on a small
    or busy machine their thread synchronisation can dominate the wall time (several times
    slower on 2 cores). Without ``threadpoolctl``, set ``OPENBLAS_NUM_THREADS=1`` before
    starting Python for the same effect.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _blas_note():
    """One line on the BLAS threading the timings ran with (see _single_threaded_blas)."""
    try:
        import threadpoolctl  # noqa: F401
        return "BLAS limited to 1 thread during the searches (threadpoolctl)"
    except ImportError:
        env = os.environ.get("OPENBLAS_NUM_THREADS")
        if env:
            return f"BLAS threads: OPENBLAS_NUM_THREADS={env}"
        return ("BLAS threads not limited: L-BFGS-B's wall time may vary a lot on a busy "
                "machine;\nset OPENBLAS_NUM_THREADS=1 (or install threadpoolctl) for stable "
                "timings")


def basin_hop(n_atoms=N_ATOMS, seed=0, niter=60, stepsize=0.4, box=2.0, mode="replay"):
    """Minimize the LJ cluster energy with ``scipy.optimize.basinhopping`` [2]_.

    Parameters
    ----------
    n_atoms : int
        Cluster size.
    seed : int
        Seeds both the random start (uniform in a cube of side ``box``) and the basin-hopping
        steps, so a run is reproducible.
    niter : int
        Basin-hopping iterations (random perturbation + local L-BFGS-B minimization).
    stepsize : float
        Maximal random displacement per coordinate of a basin-hopping step.
    box : float
        Side of the cube the starting coordinates are drawn from.
    mode : {"replay", "eager", "fd"}
        "replay": L-BFGS-B gets ``jittape.taped(lj_energy).value_and_grad`` (recorded once,
        then replayed by the Numba forward and reverse sweeps; re-recorded if a guard fails).
        "eager": ``jittape.value_and_grad(lj_energy)`` (records every call).
        "fd": no gradient, L-BFGS-B takes 2-point finite differences.

    Returns
    -------
    result : scipy.optimize.OptimizeResult
        Basin-hopping's result (``x``, ``fun``, ``nit``).
    stats : dict
        ``fun_calls`` (calls of the objective by the local minimizer, i.e. energy
        evaluations; with jittape each also gives the gradient), ``fun_time`` (seconds
        spent in those calls), ``time`` (wall seconds of the whole search, including
        L-BFGS-B's own work); in "replay" mode also ``replay`` (the
        :class:`jittape.ReplayStats`: recordings, replays, guard failures).
    """
    rng = np.random.default_rng(seed)
    x0 = rng.uniform(-box / 2, box / 2, 3 * n_atoms)
    kwargs = dict(method="L-BFGS-B", jac=mode != "fd")
    taped = None
    if mode == "replay":
        taped = jittape.taped(lj_energy)
        fun = _counted(taped.value_and_grad)
    elif mode == "eager":
        fun = _counted(jittape.value_and_grad(lj_energy))
    elif mode == "fd":
        fun = _counted(lj_energy)
    else:
        raise ValueError(f"mode must be 'replay', 'eager' or 'fd', got {mode!r}")
    with _single_threaded_blas():
        t0 = time.perf_counter()
        res = scipy.optimize.basinhopping(fun, x0, niter=niter, stepsize=stepsize,
                                          minimizer_kwargs=kwargs, rng=seed)
        elapsed = time.perf_counter() - t0
    stats = {"fun_calls": fun.calls, "fun_time": fun.seconds, "time": elapsed}
    if taped is not None:
        stats["replay"] = taped.stats
    return res, stats


def small_function(x):
    """A three-line function whose Wengert tape the demo prints."""
    a = x[0] * x[1]
    b = np.sin(a)
    return b + x[0]**2


def show_tape(x=(1.5, -0.5), out=print):
    """Print the Wengert tape of :func:`small_function` at ``x`` and check its adjoints.

    Parameters
    ----------
    x : array_like, shape (2,)
        The point of the recording.
    out : callable
        Receives each block of text.

    Returns
    -------
    tape_text : str
        ``str(jittape.record(small_function, x))``.
    input_adjoint : ndarray
        The adjoint of the input record (``tape.gradient(x)``: the tape's reverse sweep).
    gradient : ndarray
        ``jittape.grad(small_function)(x)``; equal to ``input_adjoint``.
    """
    x = np.asarray(x, dtype=np.float64)
    tape = jittape.record(small_function, x)
    text = str(tape)
    input_adj = np.asarray(tape.gradient(x))  # the reverse sweep over this tape, replayed
    out("def f(x):\n    a = x[0] * x[1]\n    b = np.sin(a)\n    return b + x[0]**2\n")
    out(f"Wengert tape of f at x = {x.tolist()}:")
    out(text)
    out("\nEach line is one record v_i of the Wengert list: the operation that defines it, "
        "its\nvalue (the primal, from the forward pass) and its adjoint d f / d v_i after "
        "the reverse\nsweep (seeded with 1 at the output, the last record). The adjoint of "
        "the input\nrecord is the gradient; constants and comparisons get none. "
        "[Griewank & Walther 2008]")
    g = jittape.grad(small_function)(x)
    exact = np.array([np.cos(x[0] * x[1]) * x[1] + 2 * x[0], np.cos(x[0] * x[1]) * x[0]])
    out(f"\ninput adjoint   {input_adj.tolist()}\njittape.grad    {g.tolist()}\n"
        f"by hand         {exact.tolist()}  (cos(x0 x1) x1 + 2 x0, cos(x0 x1) x0)")
    out("input adjoint == jittape.grad: " + str(bool(np.array_equal(input_adj, g))))
    return text, input_adj, g


def _run_mode(mode, title, seed, niter, stepsize, out):
    """One basin-hopping search with gradients of kind ``mode``; report lines; figures."""
    res, st = basin_hop(seed=seed, niter=niter, stepsize=stepsize, mode=mode)
    err = abs(res.fun - LJ13_GLOBAL_MIN)
    fig = {"energy": float(res.fun), "error": float(err), "nit": int(res.nit),
           "fun_calls": st["fun_calls"], "fun_time": st["fun_time"], "time": st["time"],
           "x": res.x}
    out(title + ", same seed:")
    out(f"  energy found                 {res.fun:.6f}")
    out(f"  |error|                      {err:.2e}  "
        f"({'global minimum reached' if err < TOLERANCE else 'NOT the global minimum'})")
    out(f"  basin-hopping iterations     {res.nit}")
    if mode == "fd":
        out(f"  energy evaluations           {st['fun_calls']} "
            f"(one value + gradient = {3 * N_ATOMS + 1})")
    else:
        out(f"  local minimizer evaluations  {st['fun_calls']} (energy + gradient each)")
    if mode == "replay":
        r = fig["replay"] = st["replay"]
        out(f"  tapes recorded               {r.recordings} (guard failures that "
            f"re-recorded: {r.guard_failures}); replays: {r.replays}")
    out(f"  time in the objective        {st['fun_time']:.3f} s")
    out(f"  wall time                    {st['time']:.2f} s\n")
    return fig


def run_demo(seed=0, niter=60, out=print, compare_fd=True, stepsize=0.4):
    """Find the LJ13 global minimum with basin-hopping + jittape gradients; report.

    Parameters
    ----------
    seed : int
        Random seed of the start and the basin-hopping steps (same for both runs).
    niter : int
        Basin-hopping iterations. With the default the jittape run reached the global
        minimum of LJ13 to ``1e-5`` for every seed tried (0-39; the latest first hit was
        at iteration 25); fewer iterations may stop in a local minimum.
    out : callable
        Receives each line of the report (``print`` by default).
    compare_fd : bool
        Also run the same search with SciPy's finite-difference gradients.
    stepsize : float
        Basin-hopping step size.

    Returns
    -------
    dict
        ``energy``, ``error`` (vs :data:`LJ13_GLOBAL_MIN`), ``nit``, ``fun_calls``,
        ``fun_time``, ``time`` and ``x`` (the coordinates found) of the jittape run; ``fd``
        the same, without ``x``, for the finite-difference run (if run).

    Notes
    -----
    Wall times include L-BFGS-B's own work, which calls BLAS in recent SciPy; see
    :func:`_single_threaded_blas`. ``fun_time`` is the time spent in the objective only.
    """
    out(f"LJ{N_ATOMS} cluster, basin-hopping (niter={niter}, stepsize={stepsize}, seed={seed}),"
        f" local minimizer L-BFGS-B")
    out(f"published global minimum: {LJ13_GLOBAL_MIN:.6f} (Wales & Doye 1997, J. Phys. Chem."
        f" A 101, 5111; Cambridge Cluster Database)")
    out(_blas_note() + "\n")
    # compile before any timing (on the very first run; later runs load from the cache):
    # the reverse sweep (recording answers), the forward sweep (replays) and the compiled
    # tape that taped() switches to, so no compile falls inside a timed comparison
    warm = jittape.taped(lj_energy, compile=True)
    for shift in (0.0, 0.01):
        warm.value_and_grad(np.arange(3 * N_ATOMS, dtype=float) + shift)
    jittape.wait_compiled()  # small tapes ran interpreted while their sweeps compiled
    report = {}
    modes = [("replay", "jittape, replayed tape (jittape.taped(f).value_and_grad, jac=True)"),
             ("eager", "jittape, eager (jittape.value_and_grad(f): records every call)")]
    if compare_fd:
        modes.append(("fd", "SciPy finite differences (no jac: L-BFGS-B 2-point "
                            "differences)"))
    for mode, title in modes:
        report[mode] = _run_mode(mode, title, seed, niter, stepsize, out)
    rep, eag = report["replay"], report["eager"]
    out(f"replayed vs eager gradients: {eag['fun_time'] / rep['fun_time']:.1f}x less time in "
        f"the objective")
    if compare_fd:
        out(f"replayed gradients vs finite differences: "
            f"{report['fd']['fun_time'] / rep['fun_time']:.1f}x less time in the objective")
    # the headline figures are the replayed run's
    report.update({k: v for k, v in rep.items()})
    out("\n" + "-" * 72)
    show_tape(out=out)
    return report

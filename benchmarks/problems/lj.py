"""Lennard-Jones cluster energy ``sum_{i<j} 4 (r_ij^-12 - r_ij^-6)`` of N atoms (n = 3N).

Two forms of the same energy, both from ``jittape.demo``: ``lj_energy`` (vectorized NumPy
over the N(N-1)/2 pairs: a dozen array records) and ``lj_energy_loops`` (a Python double
loop over scalars ``x[3i]``: about 18 scalar records per pair). The loop form is plain
Python arithmetic on ``x[k]``, so the peers run that same function on their own arrays
(0-d tensors / traced scalars / boxes): it is what each tool does with scalar code. The
start is a jittered cubic lattice of spacing 1.12 (as in ``bench_replay.py``).
"""

import numba
import numpy as np

from jittape.demo import lj_energy, lj_energy_loops, lj_gradient_hand

from . import Problem


@numba.njit(cache=True)
def lj_grad_njit(x):
    """Hand-derived gradient, a double loop over the pairs:
    ``du/dx_i = (-48 r^-14 + 24 r^-8) (x_i - x_j)``."""
    n = x.shape[0] // 3
    g = np.zeros(x.shape[0])
    for i in range(n):
        xi, yi, zi = x[3 * i], x[3 * i + 1], x[3 * i + 2]
        for j in range(i + 1, n):
            dx = xi - x[3 * j]
            dy = yi - x[3 * j + 1]
            dz = zi - x[3 * j + 2]
            ir2 = 1.0 / (dx * dx + dy * dy + dz * dz)
            ir6 = ir2 * ir2 * ir2
            s = ir2 * ir6 * (24.0 - 48.0 * ir6)
            g[3 * i] += s * dx
            g[3 * i + 1] += s * dy
            g[3 * i + 2] += s * dz
            g[3 * j] -= s * dx
            g[3 * j + 1] -= s * dy
            g[3 * j + 2] -= s * dz
    return g


def start(n_atoms, seed=1):
    m = int(np.ceil(n_atoms ** (1 / 3)))
    grid = np.array([(i, j, k) for i in range(m) for j in range(m) for k in range(m)],
                    dtype=np.float64)[:n_atoms] * 1.12
    rng = np.random.default_rng(seed)
    return (grid + rng.uniform(-0.05, 0.05, grid.shape)).ravel()


def build(arg, key):
    n_atoms, form = arg
    i, j = np.triu_indices(n_atoms, 1)

    if form == "vectorized":
        def jax_version(jax, jnp):
            def fun(x):
                X = x.reshape(n_atoms, 3)
                d = X[i] - X[j]
                ir6 = jnp.sum(d ** 2, axis=-1) ** -3
                return 4.0 * jnp.sum(ir6 * ir6 - ir6)
            return fun, ()

        def torch_version(torch):
            it, jt = torch.from_numpy(i.astype(np.int64)), torch.from_numpy(j.astype(np.int64))

            def fun(x):
                X = x.reshape(n_atoms, 3)
                d = X[it] - X[jt]
                ir6 = (d ** 2).sum(-1) ** -3
                return 4.0 * (ir6 * ir6 - ir6).sum()
            return fun

        def autograd_version(anp):
            def fun(x):
                X = x.reshape(n_atoms, 3)
                d = X[i] - X[j]
                ir6 = anp.sum(d ** 2, axis=-1) ** -3
                return 4.0 * anp.sum(ir6 * ir6 - ir6)
            return fun
        f = lj_energy
        casadi_version = None
    else:
        def jax_version(jax, jnp):
            return lj_energy_loops, ()

        def torch_version(torch):
            return lj_energy_loops

        def autograd_version(anp):
            return lj_energy_loops

        def casadi_version(ca):
            return lambda x: lj_energy_loops(ca.vertsplit(x))
        f = lj_energy_loops

    quick_skip = {}
    if form == "loops" and n_atoms >= 38:
        quick_skip = {"jax-jit": "its first call traces and XLA-compiles some 12 800 scalar "
                                 "operations (about 40 s here); the full mode runs it",
                      "jax-eager": "about 5 s per gradient; the full mode runs it"}
    return Problem(
        key=key, family=f"LJ {form}", quick_skip=quick_skip, label=f"N = {n_atoms} (n = {3 * n_atoms})",
        x0=start(n_atoms), f=f, grad_numpy=lj_gradient_hand, grad_numba=lj_grad_njit,
        jax=jax_version, torch=torch_version, autograd=autograd_version,
        casadi=casadi_version, fd=True,
        notes=[f"{n_atoms * (n_atoms - 1) // 2} pairs; "
               + ("jittape.demo.lj_energy" if form == "vectorized"
                  else "jittape.demo.lj_energy_loops, run by every tool on its own arrays")])

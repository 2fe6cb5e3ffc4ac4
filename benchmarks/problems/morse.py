"""Morse clusters written as Python scalar loops: ``E = sum_{i<j} e^{rho (1 - r_ij)}
(e^{rho (1 - r_ij)} - 2)``, rho = 6 (reduced units: pair minimum -1 at r = 1).

The Morse potential of the Cambridge Cluster Database's M_N benchmarks (Doye & Wales,
"Structural consequences of the range of the interatomic potential", J. Chem. Soc., Faraday
Trans. 93, 4233, 1997). Written like :func:`jittape.demo.lj_energy_loops`: a double loop over
the pairs with scalar ``x[3*i]`` indexing, so the tape holds one 19-record body per pair
(sub, mul, add, sqrt, exp, ...): what jittape's rerolling tape compiler is for. Every peer
runs the same loops on its own scalars (``xp`` is its array module).
"""

import math

import numba
import numpy as np

from . import Problem
from .lj import start

RHO = 6.0


def morse_loops(x, xp=np):
    """The energy, as scalar loops over ``x[3*i]``; ``xp`` the array module (NumPy, or a
    peer's: ``jax.numpy``, ``torch``, ``autograd.numpy``)."""
    n = len(x) // 3
    e = 0.0
    for i in range(n):
        xi, yi, zi = x[3 * i], x[3 * i + 1], x[3 * i + 2]
        for j in range(i + 1, n):
            dx = xi - x[3 * j]
            dy = yi - x[3 * j + 1]
            dz = zi - x[3 * j + 2]
            t = xp.exp(RHO * (1.0 - xp.sqrt(dx * dx + dy * dy + dz * dz)))
            e = e + t * (t - 2.0)
    return e


def morse_grad_numpy(x):
    """Hand-derived gradient, vectorized over the pairs: with ``t = e^{rho (1 - r)}``,
    ``dE/dr = -2 rho t (t - 1)`` and ``dr/dX_i = (X_i - X_j) / r``."""
    n = x.size // 3
    X = x.reshape(n, 3)
    i, j = np.triu_indices(n, 1)
    d = X[i] - X[j]
    r = np.sqrt(np.sum(d * d, axis=1))
    t = np.exp(RHO * (1.0 - r))
    f = (-2.0 * RHO * t * (t - 1.0) / r)[:, None] * d
    g = np.zeros_like(X)
    np.add.at(g, i, f)
    np.add.at(g, j, -f)
    return g.ravel()


@numba.njit(cache=True)
def morse_grad_njit(x):
    """The same gradient as a double loop (the reference limit)."""
    n = x.shape[0] // 3
    g = np.zeros(x.shape[0])
    for i in range(n):
        for j in range(i + 1, n):
            dx = x[3 * i] - x[3 * j]
            dy = x[3 * i + 1] - x[3 * j + 1]
            dz = x[3 * i + 2] - x[3 * j + 2]
            r = math.sqrt(dx * dx + dy * dy + dz * dz)
            t = math.exp(RHO * (1.0 - r))
            s = -2.0 * RHO * t * (t - 1.0) / r
            g[3 * i] += s * dx
            g[3 * i + 1] += s * dy
            g[3 * i + 2] += s * dz
            g[3 * j] -= s * dx
            g[3 * j + 1] -= s * dy
            g[3 * j + 2] -= s * dz
    return g


def build(n_atoms, key):
    def jax_version(jax, jnp):
        return (lambda x: morse_loops(x, jnp)), ()

    def torch_version(torch):
        return lambda x: morse_loops(x, torch)

    def autograd_version(anp):
        return lambda x: morse_loops(x, anp)

    quick_skip = {}
    if n_atoms >= 38:
        quick_skip = {"jax-jit": "its first call traces and XLA-compiles some 13 000 scalar "
                                 "operations; the full mode runs it",
                      "jax-eager": "seconds per gradient; the full mode runs it"}
    return Problem(
        key=key, family="Morse loops", label=f"N = {n_atoms} (n = {3 * n_atoms})",
        x0=start(n_atoms) / 1.12, f=morse_loops, grad_numpy=morse_grad_numpy,
        grad_numba=morse_grad_njit, jax=jax_version, torch=torch_version,
        autograd=autograd_version, fd=True, quick_skip=quick_skip,
        notes=[f"{n_atoms * (n_atoms - 1) // 2} pairs, rho = {RHO}; Python scalar loops, run "
               f"by every tool on its own scalars"])

"""Morse cluster energy of N atoms as Python scalar loops (n = 3N inputs, reduced units).

``V(x) = sum_{i<j} [(exp(rho (1 - r_ij)) - 1)^2 - 1]`` with ``r_ij`` the distance between
atoms i and j (pair equilibrium distance 1, well depth 1) and range parameter ``rho = 6``
(:data:`RHO`), the Morse clusters of the Cambridge Cluster Database (Doye & Wales, J. Chem.
Soc., Faraday Trans. 93, 4233, 1997). Written like ``jittape.demo.lj_energy_loops``: a Python
double loop over the pairs with scalar ``x[3 i]`` indexing (about 22 scalar records per pair,
``exp`` and ``** 0.5`` among them), run unchanged by every tool on its own arrays; only ``exp``
is passed in (NumPy's, JAX's, PyTorch's, autograd's or CasADi's). Start: a cubic lattice of
spacing 1 (the pair minimum), jittered by +-0.05 (seeded).
"""

import numba
import numpy as np

from . import Problem

RHO = 6.0


def morse_energy_loops(x, exp=np.exp, rho=RHO):
    """The Morse energy by a double loop over scalars ``x[k]``; ``exp`` of the caller's
    library (``np.exp`` for NumPy and jittape)."""
    n = len(x) // 3
    e = 0.0
    for i in range(n):
        xi, yi, zi = x[3 * i], x[3 * i + 1], x[3 * i + 2]
        for j in range(i + 1, n):
            dx = xi - x[3 * j]
            dy = yi - x[3 * j + 1]
            dz = zi - x[3 * j + 2]
            r = (dx * dx + dy * dy + dz * dz) ** 0.5
            u = exp(rho * (1.0 - r)) - 1.0
            e = e + (u * u - 1.0)
    return e


def morse_grad_numpy(x, rho=RHO):
    """Hand gradient, vectorized over the pairs: ``dV/dr = -2 rho E (E - 1)``,
    ``E = exp(rho (1 - r))``, and ``dr/dx_i = (x_i - x_j) / r``."""
    X = x.reshape(-1, 3)
    i, j = np.triu_indices(X.shape[0], 1)
    d = X[i] - X[j]
    r = np.sqrt(np.sum(d * d, axis=1))
    E = np.exp(rho * (1.0 - r))
    s = (-2.0 * rho * E * (E - 1.0) / r)[:, None] * d
    g = np.zeros_like(X)
    np.add.at(g, i, s)
    np.add.at(g, j, -s)
    return g.ravel()


@numba.njit(cache=True)
def morse_grad_njit(x, rho=RHO):
    """Hand gradient, a double loop over the pairs (as :func:`morse_grad_numpy`)."""
    n = x.shape[0] // 3
    g = np.zeros(x.shape[0])
    for i in range(n):
        for j in range(i + 1, n):
            dx = x[3 * i] - x[3 * j]
            dy = x[3 * i + 1] - x[3 * j + 1]
            dz = x[3 * i + 2] - x[3 * j + 2]
            r = np.sqrt(dx * dx + dy * dy + dz * dz)
            E = np.exp(rho * (1.0 - r))
            s = -2.0 * rho * E * (E - 1.0) / r
            g[3 * i] += s * dx
            g[3 * i + 1] += s * dy
            g[3 * i + 2] += s * dz
            g[3 * j] -= s * dx
            g[3 * j + 1] -= s * dy
            g[3 * j + 2] -= s * dz
    return g


def start(n_atoms, seed=1):
    """A cubic lattice of spacing 1, its first ``n_atoms`` points, jittered by +-0.05."""
    m = int(np.ceil(n_atoms ** (1 / 3)))
    grid = np.array([(i, j, k) for i in range(m) for j in range(m) for k in range(m)],
                    dtype=np.float64)[:n_atoms]
    rng = np.random.default_rng(seed)
    return (grid + rng.uniform(-0.05, 0.05, grid.shape)).ravel()


def reference_check():
    """Both hand gradients against central differences of the loop energy (N = 5)."""
    x = start(5, seed=2)
    g = morse_grad_njit(x)
    fd = np.empty_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e[k] = 1e-6
        fd[k] = (morse_energy_loops(x + e) - morse_energy_loops(x - e)) / 2e-6
    err = float(np.max(np.abs(g - fd)) / np.max(np.abs(g)))
    err2 = float(np.max(np.abs(morse_grad_numpy(x) - g)) / np.max(np.abs(g)))
    assert err < 1e-7 and err2 < 1e-12, (err, err2)
    return [f"Morse (rho = {RHO:g}, N = 5) hand gradient against central differences: "
            f"relative error {err:.1e}; hand NumPy against hand Numba {err2:.1e}"]


def build(n_atoms, key):
    quick_skip = {}
    if n_atoms >= 38:
        quick_skip = {"jax-jit": "its first call traces and XLA-compiles some 15 000 scalar "
                                 "operations (tens of seconds); the full mode runs it",
                      "jax-eager": "seconds per gradient; the full mode runs it"}
    return Problem(
        key=key, family="Morse loops", label=f"N = {n_atoms} (n = {3 * n_atoms})",
        x0=start(n_atoms), f=morse_energy_loops, grad_numpy=morse_grad_numpy,
        grad_numba=morse_grad_njit,
        jax=lambda jax, jnp: ((lambda x: morse_energy_loops(x, jnp.exp)), ()),
        torch=lambda torch: (lambda x: morse_energy_loops(x, torch.exp)),
        autograd=lambda anp: (lambda x: morse_energy_loops(x, anp.exp)),
        casadi=lambda ca: (lambda x: morse_energy_loops(ca.vertsplit(x), ca.exp)),
        fd=True, quick_skip=quick_skip,
        notes=[f"{n_atoms * (n_atoms - 1) // 2} pairs, rho = {RHO:g}; a Python double loop "
               "over scalars x[3i], run by every tool on its own arrays (exp passed in)"])

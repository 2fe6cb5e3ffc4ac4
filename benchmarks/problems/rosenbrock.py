"""Extended Rosenbrock function ``sum_i 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2``.

A dozen array records whatever n: per-call overhead at n = 10, per-element throughput at
n = 100 000. The BFGS problem (:mod:`benchmarks.bfgs`) uses it at n = 100.
"""

import numba
import numpy as np

from . import Problem


def rosen(x):
    """The objective in plain NumPy (what jittape records)."""
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosen_grad(x):
    """Hand-derived gradient, vectorized NumPy."""
    t = x[1:] - x[:-1] ** 2
    g = np.zeros_like(x)
    g[:-1] = -400.0 * x[:-1] * t - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * t
    return g


@numba.njit(cache=True)
def rosen_grad_njit(x):
    """Hand-derived gradient, one loop."""
    n = x.shape[0]
    g = np.zeros(n)
    for i in range(n - 1):
        t = x[i + 1] - x[i] * x[i]
        g[i] += -400.0 * x[i] * t - 2.0 * (1.0 - x[i])
        g[i + 1] += 200.0 * t
    return g


@numba.njit(cache=True)
def rosen_value_and_grad_njit(x):
    """Value and gradient in one loop (the BFGS problem's hand Numba ``jac=True``)."""
    n = x.shape[0]
    g = np.zeros(n)
    f = 0.0
    for i in range(n - 1):
        t = x[i + 1] - x[i] * x[i]
        u = 1.0 - x[i]
        f += 100.0 * t * t + u * u
        g[i] += -400.0 * x[i] * t - 2.0 * u
        g[i + 1] += 200.0 * t
    return f, g


def jax_version(jax, jnp):
    def fun(x):
        return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    return fun, ()


def torch_version(torch):
    def fun(x):
        return torch.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    return fun


def autograd_version(anp):
    def fun(x):
        return anp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    return fun


def start(n):
    """The classic start (-1.2, 1, -1.2, 1, ...)."""
    x = np.ones(n)
    x[::2] = -1.2
    return x


def build(n, key):
    return Problem(key=key, family="Rosenbrock", label=f"n = {n:,}", x0=start(n), f=rosen,
                   grad_numpy=rosen_grad, grad_numba=rosen_grad_njit, jax=jax_version,
                   torch=torch_version, autograd=autograd_version, fd=n <= 1_000)

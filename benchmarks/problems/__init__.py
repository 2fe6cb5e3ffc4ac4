"""The benchmark problems: each a NumPy objective, two hand-derived gradients and the peers'
versions of the objective in their own array libraries.

A :class:`Problem` carries:

* ``f(x)``: the objective as plain NumPy code on a flat float64 vector ``x`` (what jittape
  records; also the baseline every gradient time is divided by);
* ``grad_numpy(x)`` and ``grad_numba(x)``: analytic gradients derived by hand, the first in
  vectorized NumPy, the second as ``@numba.njit`` loops (the reference limit). The suite
  checks them against each other before anything else;
* ``jax(jax, jnp) -> (fun, args)``: the objective in ``jax.numpy``, ``fun(x, *args)``, the
  data passed as arguments (as ``jax.jit`` wants them, rather than baked-in constants);
* ``torch(torch) -> fun``: the objective in PyTorch on a float64 tensor;
* ``autograd(anp) -> fun``: the objective in ``autograd.numpy``;
* ``casadi(ca) -> fun``: ``fun(x)`` builds the objective as a CasADi expression of the
  ``SX`` column symbol ``x`` (scalar-loop problems pass ``ca.vertsplit(x)``, a list of scalar
  symbols, to the same Python function the other tools run);
* ``fd``: whether SciPy finite differences are tried (small n only);
* ``absolute_zero``: the compiled tape is optimized with ``absolute_zero=True`` first
  (:meth:`jittape.Tape.optimize`: ``0 * v`` folded to ``0``), the semantics of the peers
  whose rates the problem quotes (CppAD, CasADi SX); the interpreted replay keeps IEEE's.

Peers' libraries are imported by the tools (:mod:`benchmarks.tools`) only, so building a
problem needs NumPy, SciPy, Numba and jittape alone (the compile-time subprocesses rely on
that).
"""

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np


@dataclass
class Problem:
    key: str
    family: str
    label: str
    x0: np.ndarray
    f: Callable
    grad_numpy: Callable
    grad_numba: Callable
    jax: Optional[Callable] = None
    torch: Optional[Callable] = None
    autograd: Optional[Callable] = None
    casadi: Optional[Callable] = None
    fd: bool = True
    notes: list = field(default_factory=list)
    x1: Optional[np.ndarray] = None  # second check point; default: a small perturbation
    quick_skip: dict = field(default_factory=dict)  # tool -> why --quick skips it
    absolute_zero: bool = False  # compiled tape optimized with absolute_zero=True

    @property
    def n(self):
        return int(self.x0.size)

    def second_point(self):
        if self.x1 is not None:
            return self.x1
        return self.x0 + 1e-3 * np.cos(np.arange(self.n)) * np.maximum(1.0, np.abs(self.x0))


#: key -> (module, builder argument); in table order
REGISTRY = {
    "rosen-10": ("rosenbrock", 10),
    "rosen-1000": ("rosenbrock", 1_000),
    "rosen-100000": ("rosenbrock", 100_000),
    "gmm-d2-K5-1k": ("gmm", ("1k", 2, 5)),
    "gmm-d10-K25-1k": ("gmm", ("1k", 10, 25)),
    "gmm-d2-K25-10k": ("gmm", ("10k", 2, 25)),
    "ba1": ("ba", "ba1_n49_m7776_p31843"),
    "ba5": ("ba", "ba5_n257_m65132_p225911"),
    "logreg": ("logreg", (10_000, 100)),
    "lj13-vectorized": ("lj", (13, "vectorized")),
    "lj38-vectorized": ("lj", (38, "vectorized")),
    "lj13-loops": ("lj", (13, "loops")),
    "lj38-loops": ("lj", (38, "loops")),
    "morse13-loops": ("morse", 13),
    "morse38-loops": ("morse", 38),
    "cmpad-det": ("cmpad", "det"),
    "cmpad-llsq": ("cmpad", "llsq"),
    "cmpad-ode": ("cmpad", "ode"),
}


def build(key):
    """The :class:`Problem` of ``key`` (data read from ``benchmarks/data``)."""
    import importlib
    module, arg = REGISTRY[key]
    return importlib.import_module(f"benchmarks.problems.{module}").build(arg, key)


def reference_checks():
    """Run the reference checks (ADBench's GMM and BA unit-test values; cmpad's and Morse's
    hand gradients against central differences); return lines of text describing them.
    Raises AssertionError on a mismatch."""
    from . import ba, cmpad, gmm, morse
    return (gmm.reference_check() + ba.reference_check() + cmpad.reference_check()
            + morse.reference_check())

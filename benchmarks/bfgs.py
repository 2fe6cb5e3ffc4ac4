"""``scipy.optimize.minimize(method="BFGS")`` on Rosenbrock n = 100: total time to converge.

Every tool supplies the value and the gradient together (``jac=True``) in its own idiom:

* hand NumPy: ``(rosen(x), rosen_grad(x))``; hand Numba: one ``@njit`` loop for both;
* jittape eager: ``jittape.value_and_grad(rosen)`` (records every call);
* jittape replay: ``jittape.minimize(rosen, x0, method="BFGS")`` (records once per call,
  then replays; its ``taped`` objective compiles only when replaying has cost more than a
  compile would, which one call here never reaches);
* jittape compiled: ``tape = jittape.record(rosen, x0).compile()`` once (in the first call),
  then ``minimize(tape.value_and_gradient, x0, jac=True)``;
* SciPy FD: ``minimize(rosen, x0, method="BFGS")`` without ``jac`` (SciPy's 2-point finite
  differences, n + 1 evaluations per gradient);
* JAX: ``jax.jit(jax.value_and_grad(f))`` and eager ``jax.value_and_grad(f)``; PyTorch:
  ``torch.autograd.grad``; autograd: ``autograd.value_and_grad(f)``.

The start is ``x0 = (-1.2, 1, -1.2, 1, ...)``. Iterations differ slightly between tools
(rounding differs, and BFGS amplifies it), so the table shows ``nit``/``nfev`` and the
distance of the solution to the minimizer ``(1, ..., 1)`` beside each time.
"""

import numpy as np
import scipy.optimize as so

from .common import Skip
from .problems.rosenbrock import (autograd_version, jax_version, rosen, rosen_grad, start,
                                  rosen_value_and_grad_njit, torch_version)

N = 100


def x0():
    return start(N)


def make(tool, env):
    """``(run, value_and_grad)``: ``run()`` minimizes from x0 and returns scipy's result;
    ``value_and_grad`` (None for SciPy FD and jittape.minimize) is checked first."""
    import jittape
    x = x0()
    opts = dict(method="BFGS")
    if tool == "hand-numpy":
        vg = lambda x: (rosen(x), rosen_grad(x))
    elif tool == "hand-numba":
        vg = rosen_value_and_grad_njit
    elif tool == "jittape-eager":
        vg = jittape.value_and_grad(rosen)
    elif tool == "jittape-replay":
        return (lambda: jittape.minimize(rosen, x, **opts)), jittape.taped(rosen).value_and_grad
    elif tool == "jittape-compiled":
        tape = jittape.record(rosen, x).compile()
        vg = tape.value_and_gradient
    elif tool == "scipy-fd":
        return (lambda: so.minimize(rosen, x, **opts)), None
    elif tool in ("jax-jit", "jax-eager"):
        if env.jax is None:
            raise Skip(env.missing["jax"])
        fun, _ = jax_version(env.jax, env.jnp)
        jvg = env.jax.value_and_grad(fun)
        if tool == "jax-jit":
            jvg = env.jax.jit(jvg)

        def vg(x):
            v, g = jvg(x)
            return float(v), np.asarray(g)
    elif tool == "torch":
        if env.torch is None:
            raise Skip(env.missing["torch"])
        torch = env.torch
        fun = torch_version(torch)

        def vg(x):
            xt = torch.from_numpy(np.ascontiguousarray(x)).requires_grad_(True)
            y = fun(xt)
            (g,) = torch.autograd.grad(y, xt)
            return y.item(), g.numpy()
    elif tool == "autograd":
        if env.autograd is None:
            raise Skip(env.missing["autograd"])
        vg = env.autograd.value_and_grad(autograd_version(env.anp))
    elif tool in ("casadi-sx", "casadi-c"):
        raise Skip("CasADi is timed on the gradient problems only (no BFGS driver here)")
    else:
        raise KeyError(tool)
    return (lambda: so.minimize(vg, x, jac=True, **opts)), vg


def summary(res):
    return dict(nit=int(res.nit), nfev=int(res.nfev), njev=int(getattr(res, "njev", 0) or 0),
                fun=float(res.fun), success=bool(res.success),
                dist=float(np.linalg.norm(res.x - np.ones(N))))

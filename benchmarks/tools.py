"""The gradient tools, each used in its own idiom.

``make(tool, problem, env)`` builds the tool's gradient function ``grad(x) -> ndarray`` for a
problem (cheap, or the recording/compiling the tool does up front) and returns
``(grad, info)``; it raises :class:`benchmarks.common.Skip` with the reason when the tool
does not run there. The suite times ``make`` plus the first ``grad(x0)`` as the *first
call*, and ``grad(x0)`` alone afterwards as the steady state. Every tool takes and returns
NumPy float64 arrays, so conversions (``torch.from_numpy``, JAX's device transfer and
``np.asarray`` of its result, which also waits for it; CasADi's ``DM`` in and ``.full()`` out)
are part of its time.

CasADi (optional): the problem's ``casadi`` builder makes the objective an ``SX`` expression of
an ``SX.sym`` column (scalar-loop problems run their own Python function on the scalar symbols),
``casadi.gradient`` differentiates it symbolically, and ``casadi.Function`` evaluates the
gradient expression either in CasADi's SX virtual machine (``casadi-sx``) or as C code:
``CodeGenerator`` writes it, ``gcc`` (:data:`CASADI_CFLAGS`) builds a shared library and
``casadi.external`` loads it (``casadi-c``). Both are called through ``Function.buffer()``,
CasADi's low-overhead call (see :func:`_casadi_buffered`). The build (code generation plus gcc) is part of the
first call and is also reported on its own (``info["build"]``).
"""

import atexit
import os
import shutil
import subprocess
import tempfile
import time

import numpy as np

from .common import Skip

#: key, label, kind (hand: the references; jittape; peer: other AD tools; fd)
TOOLS = [
    ("hand-numpy", "hand NumPy", "hand"),
    ("hand-numba", "hand Numba", "hand"),
    ("jittape-eager", "jittape eager", "jittape"),
    ("jittape-replay", "jittape replay", "jittape"),
    ("jittape-compiled", "jittape compiled", "jittape"),
    ("scipy-fd", "SciPy FD", "fd"),
    ("jax-jit", "JAX jit", "peer"),
    ("jax-eager", "JAX eager", "peer"),
    ("torch", "PyTorch eager", "peer"),
    ("autograd", "autograd", "peer"),
    ("casadi-sx", "CasADi SX", "peer"),
    ("casadi-c", "CasADi C codegen", "peer"),
]
#: gcc command for CasADi's generated C (CasADi's documentation compiles with -O3 too)
CASADI_CC = ["gcc", "-O3", "-fPIC", "-shared"]
CASADI_CFLAGS = " ".join(CASADI_CC[1:])
LABEL = {k: label for k, label, _ in TOOLS}
KIND = {k: kind for k, _, kind in TOOLS}
PEERS = [k for k, _, kind in TOOLS if kind in ("peer", "fd")]


class Env:
    """The optional libraries, imported once (``None`` with the reason when missing)."""

    def __init__(self, threads, settings):
        import jittape  # noqa: F401  (here, so that no tool's first call pays the import)
        self.settings = settings
        self.missing = {}
        try:
            import jax
            jax.config.update("jax_enable_x64", True)
            import jax.numpy as jnp
            self.jax, self.jnp = jax, jnp
        except Exception as exc:  # ImportError, or a broken install
            self.jax = self.jnp = None
            self.missing["jax"] = f"JAX not installed ({type(exc).__name__}: {exc})"
        try:
            import torch
            torch.set_num_threads(threads)
            self.torch = torch
        except Exception as exc:
            self.torch = None
            self.missing["torch"] = f"PyTorch not installed ({type(exc).__name__}: {exc})"
        try:
            import autograd
            import autograd.numpy as anp
            self.autograd, self.anp = autograd, anp
        except Exception as exc:
            self.autograd = self.anp = None
            self.missing["autograd"] = f"autograd not installed ({type(exc).__name__}: {exc})"
        try:
            import casadi
            self.casadi = casadi
        except Exception as exc:
            self.casadi = None
            self.missing["casadi"] = f"CasADi not installed ({type(exc).__name__}: {exc})"


def make(tool, problem, env, f_time):
    """``(grad, info)`` of ``tool`` on ``problem``; raises Skip. ``f_time``: seconds of one
    objective evaluation (for the finite-difference cost estimate)."""
    import jittape
    p = problem
    if tool == "hand-numpy":
        return p.grad_numpy, {}
    if tool == "hand-numba":
        return p.grad_numba, {}
    if tool == "jittape-eager":
        return jittape.grad(p.f), {}
    if tool == "jittape-replay":
        tape = jittape.record(p.f, p.x0)
        return tape.gradient, {"tape": tape}
    if tool == "jittape-compiled":
        tape = jittape.record(p.f, p.x0)
        if p.absolute_zero:  # the peers' semantics of 0 * v (cmpad ode: CppAD, CasADi)
            tape = tape.optimize(absolute_zero=True)
        try:
            tape.compile()
        except ValueError as exc:  # compile() refuses tapes too long for Numba
            raise Skip(f"refused by `compile()` (interpreter only): {exc}") from None
        return tape.gradient, {"tape": tape}
    if tool == "scipy-fd":
        if not p.fd:
            raise Skip(f"n = {p.n:,}: too many inputs for finite differences")
        est = (p.n + 1) * f_time
        limit = env.settings.fd_limit
        if est > limit:
            raise Skip(f"n = {p.n:,}: ~{est:.2g} s per gradient (n + 1 evaluations), over "
                       f"the {limit:g} s limit of this mode")
        from scipy.optimize import approx_fprime
        f = p.f
        return (lambda x: approx_fprime(x, f)), {}
    if tool in ("jax-jit", "jax-eager"):
        if env.jax is None:
            raise Skip(env.missing["jax"])
        if p.jax is None:
            raise Skip("no JAX version of this problem")
        fun, args = p.jax(env.jax, env.jnp)
        g = env.jax.grad(fun)
        if tool == "jax-jit":
            g = env.jax.jit(g)
        return (lambda x: np.asarray(g(x, *args))), {}
    if tool == "torch":
        if env.torch is None:
            raise Skip(env.missing["torch"])
        if p.torch is None:
            raise Skip("no PyTorch version of this problem")
        torch = env.torch
        fun = p.torch(torch)

        def grad(x):
            xt = torch.from_numpy(x).requires_grad_(True)
            (g,) = torch.autograd.grad(fun(xt), xt)
            return g.numpy()
        return grad, {}
    if tool == "autograd":
        if env.autograd is None:
            raise Skip(env.missing["autograd"])
        if p.autograd is None:
            raise Skip("no autograd version of this problem")
        return env.autograd.grad(p.autograd(env.anp)), {}
    if tool in ("casadi-sx", "casadi-c"):
        if env.casadi is None:
            raise Skip(env.missing["casadi"])
        if p.casadi is None:
            raise Skip("no CasADi version of this problem (vectorized NumPy: it would have to "
                       "be rewritten with CasADi's matrix operations)")
        return casadi_gradient(env.casadi, p, compiled=tool == "casadi-c")
    raise KeyError(tool)


def casadi_gradient(ca, p, compiled):
    """``(grad, info)``: the gradient of ``p``'s CasADi expression as a ``casadi.Function``,
    run by the SX virtual machine or (``compiled``) built to C by gcc and loaded back."""
    t0 = time.perf_counter()
    x = ca.SX.sym("x", p.n)
    expr = p.casadi(ca)(x)
    gfun = ca.Function("jt_grad", [x], [ca.gradient(expr, x)])
    info = {"symbolic": time.perf_counter() - t0, "instructions": int(gfun.n_instructions())}
    if compiled:
        if shutil.which(CASADI_CC[0]) is None:
            raise Skip(f"no C compiler ({CASADI_CC[0]}) on this machine")
        t1 = time.perf_counter()
        d = tempfile.mkdtemp(prefix="jittape-casadi-")
        atexit.register(shutil.rmtree, d, True)
        cg = ca.CodeGenerator("jt_grad.c")
        cg.add(gfun)
        cg.generate(d + os.sep)
        t2 = time.perf_counter()
        src, lib = os.path.join(d, "jt_grad.c"), os.path.join(d, "jt_grad.so")
        subprocess.run(CASADI_CC + ["-o", lib, src], check=True, capture_output=True)
        t3 = time.perf_counter()
        gfun = ca.external("jt_grad", lib)
        info.update(codegen=t2 - t1, gcc=t3 - t2, build=time.perf_counter() - t1,
                    c_bytes=os.path.getsize(src))
    return _casadi_buffered(gfun, p.n), info


def _casadi_buffered(gfun, n):
    """``grad(x)`` through CasADi's low-overhead call, ``Function.buffer()``: the input and
    output arrays are bound once and each call copies ``x`` in and the gradient out (about
    0.5 µs of overhead here, against some 20 µs for ``gfun(x).full()``, whose ``DM``
    conversions would dominate the small problems)."""
    buf, run = gfun.buffer()
    xin, gout = np.zeros(n), np.zeros(n)
    buf.set_arg(0, memoryview(xin))
    buf.set_res(0, memoryview(gout))
    sparse = gfun.sparsity_out(0).nnz() != n  # e.g. a structurally zero gradient

    def grad(x, _keep=(gfun, buf)):  # the buffer must outlive its calls (and the Function
        xin[:] = x                     # the buffer's; a freed one segfaults)
        run()
        return gout.copy()

    if sparse:
        return lambda x: gfun(x).full().ravel()
    return grad

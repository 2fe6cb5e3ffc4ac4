"""cmpad's three problems: determinant by minors, linear least squares, a Runge-Kutta ODE.

Source: Brad Bell's *cmpad* (Compare Algorithmic Differentiation packages),
https://github.com/bradbell/cmpad, documentation at cmpad.readthedocs.io. Its algorithms
``det_by_minor``, ``llsq_obj`` and ``an_ode`` are written here again as plain NumPy/Python the
way a cmpad user would write them (the definitions were read from cmpad, the code is ours).
cmpad times the gradient of the *last* output component, ``v[-1]``, with the AD function
set up once (``time_setup=false``): here the tape is recorded once and replayed.

Sizes are those of cmpad's reference runs (``bin/xam_main.py``, whose results are
``xam_main.csv``, 2024-09-14), the runs the issue's CppAD rates come from:

* ``det``: ``n_arg = 9``, the determinant of the 3 x 3 matrix ``A[i, j] = x[3 i + j]`` by
  expansion along the first row into minors, recursively, over scalars ``x[k]``
  (``det_by_minor``). Gradient: the cofactor matrix.
* ``llsq``: ``n_arg = 9`` coefficients, ``n_other = 100`` points: ``t`` = 100 points evenly
  spaced on [-1, 1], ``q = sign(t)``, model ``m(t) = sum_i x_i t^i`` built by a Python loop
  over the coefficients with 100-element arrays, objective ``0.5 sum_k (m(t_k) - q_k)^2``
  (``llsq_obj``).
* ``ode``: ``n_arg = 100``, ``n_other = 9`` steps: ``y'(t) = f(y)`` with ``f_0 = x_0``,
  ``f_i = x_i y_{i-1}``, ``y(0) = 0``, integrated to ``t = 2`` by 9 classical RK4 steps in a
  Python loop, the right-hand side vectorized; the objective is ``y_99(2)`` (``an_ode``).
  At this size ``y_99(2)`` is identically zero: each RK4 step moves the non-zeros of ``y`` four
  components down, so after 9 steps only ``y_0 ... y_35`` are non-zero and the gradient is
  the zero vector. Tools still do all the arithmetic (on zeros), except those that fold
  identically-zero constants while taping: CppAD (parameters that are identically zero) and
  CasADi's SX graph. The hand gradients are also checked at a non-degenerate size (n = 6).
  jittape's compiled tape is optimized with ``absolute_zero=True`` (the same rule:
  :mod:`jittape.derivatives.zeros`), which folds the output into the constant zero; its
  interpreted replay keeps IEEE arithmetic and sweeps all 303 records.

Rates: cmpad reports gradients per second; :data:`PUBLISHED` holds CppAD's published rates
(as quoted in issue 12, and cmpad's own ``xam_main.csv`` figures for ``package=cppad``,
``time_setup=false``) and the jittape rates the issue quoted, for the report.
"""

import numba
import numpy as np

from . import Problem

DET_ELL = 3               # det: 3 x 3 matrix, n_arg = 9
LLSQ_N, LLSQ_M = 9, 100   # llsq: n_arg = 9 coefficients, n_other = 100 points
ODE_N, ODE_NS = 100, 9    # ode: n_arg = 100 components, n_other = 9 RK4 steps
ODE_TF = 2.0              # ode: final time

#: key -> published gradients per second: CppAD (issue 12 / cmpad xam_main.csv), jittape
#: as quoted in issue 12 (before this suite measured it)
PUBLISHED = {
    "cmpad-det": dict(cppad=4.3e6, cppad_csv=4.2e6, jittape_issue=6.7e4),
    "cmpad-llsq": dict(cppad=1.3e5, cppad_csv=1.3e5, jittape_issue=3.2e4),
    "cmpad-ode": dict(cppad=6.9e5, cppad_csv=6.6e5, jittape_issue=2.3e3),
}


# --- det: determinant by expansion in minors ----------------------------------------------
def det_of_minor(a, ell, rows, cols):
    """Determinant of the minor of the ``ell x ell`` matrix ``a`` (flat, row-major) that keeps
    ``rows`` and ``cols`` (lists of indices), expanded along its first row, recursively.
    Scalar code: ``a[k]``, ``+``, ``-``, ``*`` only."""
    if len(rows) == 1:
        return a[rows[0] * ell + cols[0]]
    r0, below = rows[0], rows[1:]
    d = 0.0
    for k, c in enumerate(cols):
        term = a[r0 * ell + c] * det_of_minor(a, ell, below, cols[:k] + cols[k + 1:])
        d = d + term if k % 2 == 0 else d - term
    return d


def det_by_minor(x):
    """``det(A)``, ``A[i, j] = x[ell i + j]``, by minors (cmpad's ``det_by_minor``)."""
    ell = int(round(len(x) ** 0.5))
    return det_of_minor(x, ell, list(range(ell)), list(range(ell)))


def det_grad_numpy(x):
    """Hand gradient, NumPy: ``d det(A) / dA = det(A) A^-T`` (the cofactor matrix)."""
    A = x.reshape(DET_ELL, DET_ELL)
    return (np.linalg.det(A) * np.linalg.inv(A).T).ravel()


@numba.njit(cache=True)
def det_grad_njit(x):
    """Hand gradient, Numba: the 3 x 3 cofactors, ``C_ij = A[i+1, j+1] A[i+2, j+2] -
    A[i+1, j+2] A[i+2, j+1]`` with indices mod 3 (the sign comes with the cyclic order)."""
    g = np.empty(9)
    for i in range(3):
        i1, i2 = 3 * ((i + 1) % 3), 3 * ((i + 2) % 3)
        for j in range(3):
            j1, j2 = (j + 1) % 3, (j + 2) % 3
            g[3 * i + j] = x[i1 + j1] * x[i2 + j2] - x[i1 + j2] * x[i2 + j1]
    return g


# --- llsq: linear least squares objective ---------------------------------------------------
def llsq_data(m=LLSQ_M):
    """``(t, q)``: m points evenly spaced on [-1, 1] and the targets ``sign(t)``."""
    t = np.linspace(-1.0, 1.0, m) if m > 1 else np.zeros(1)
    return t, np.sign(t)


def llsq_loop(x, t, q, total):
    """``0.5 sum (sum_i x_i t^i - q)^2`` with the model built coefficient by coefficient;
    ``t, q`` are arrays of the caller's library and ``total`` its sum (generic code)."""
    ti = t ** 0
    model = x[0] * ti
    for i in range(1, len(x)):
        ti = ti * t
        model = model + x[i] * ti
    r = model - q
    return 0.5 * total(r * r)


def make_llsq():
    t, q = llsq_data()

    def llsq_obj(x):
        """cmpad's ``llsq_obj`` in NumPy (9 coefficients, 100 points)."""
        return llsq_loop(x, t, q, np.sum)
    return llsq_obj


def llsq_grad_numpy(x):
    """Hand gradient, NumPy: ``V^T (V x - q)``, ``V[k, i] = t_k^i`` (Vandermonde)."""
    t, q = llsq_data()
    V = np.vander(t, x.size, increasing=True)
    return V.T @ (V @ x - q)


@numba.njit(cache=True)
def _llsq_grad(x, t, q):
    m, n = t.shape[0], x.shape[0]
    g = np.zeros(n)
    for k in range(m):
        p, model = 1.0, 0.0
        for i in range(n):
            model += x[i] * p
            p *= t[k]
        r = model - q[k]
        p = 1.0
        for i in range(n):
            g[i] += r * p
            p *= t[k]
    return g


def make_llsq_grad_njit():
    t, q = llsq_data()
    return lambda x: _llsq_grad(x, t, q)


# --- ode: RK4 integration of a linear ODE ---------------------------------------------------
def ode_last(x, zeros, concat, ns=ODE_NS, tf=ODE_TF):
    """``y_{n-1}(tf)`` for ``y' = f(y)``, ``f_0 = x_0``, ``f_i = x_i y_{i-1}``, ``y(0) = 0``, by
    ``ns`` RK4 steps. ``zeros(n)`` and ``concat(list)`` come from the caller's library."""
    def f(y):
        return concat([x[:1], x[1:] * y[:-1]])
    h = tf / ns
    y = zeros(x.shape[0])
    for _ in range(ns):
        k1 = f(y)
        k2 = f(y + (0.5 * h) * k1)
        k3 = f(y + (0.5 * h) * k2)
        k4 = f(y + h * k3)
        y = y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return y[-1]


def an_ode(x):
    """cmpad's ``an_ode`` objective in NumPy (n = len(x), 9 steps to t = 2)."""
    return ode_last(x, np.zeros, np.concatenate)


def _fy_t(x, w):
    """``(df/dy)^T w``: ``(x_{j+1} w_{j+1})_j``, last entry 0."""
    out = np.zeros_like(w)
    out[:-1] = x[1:] * w[1:]
    return out


def _fx_t(y, w):
    """``(df/dx)^T w`` at state ``y``: ``(w_0, w_i y_{i-1})``."""
    out = w.copy()
    out[1:] *= y[:-1]
    return out


def ode_grad_numpy(x, ns=ODE_NS, tf=ODE_TF):
    """Hand gradient, NumPy: the forward RK4 pass keeps each step's four stage states, the
    reverse pass transposes each step (``df/dy`` and ``df/dx`` are given above)."""
    n, h = x.size, tf / ns
    f = lambda y: np.concatenate((x[:1], x[1:] * y[:-1]))  # noqa: E731
    stages, y = [], np.zeros(n)
    for _ in range(ns):
        Y1 = y
        k1 = f(Y1)
        Y2 = y + 0.5 * h * k1
        k2 = f(Y2)
        Y3 = y + 0.5 * h * k2
        k3 = f(Y3)
        Y4 = y + h * k3
        stages.append((Y1, Y2, Y3, Y4))
        k4 = f(Y4)
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    ybar, xbar = np.zeros(n), np.zeros(n)
    ybar[-1] = 1.0
    for Y1, Y2, Y3, Y4 in reversed(stages):
        kb1, kb2, kb3, kb4 = h / 6 * ybar, h / 3 * ybar, h / 3 * ybar, h / 6 * ybar
        xbar += _fx_t(Y4, kb4)
        Yb = _fy_t(x, kb4)
        ybar = ybar + Yb
        kb3 = kb3 + h * Yb
        xbar += _fx_t(Y3, kb3)
        Yb = _fy_t(x, kb3)
        ybar = ybar + Yb
        kb2 = kb2 + 0.5 * h * Yb
        xbar += _fx_t(Y2, kb2)
        Yb = _fy_t(x, kb2)
        ybar = ybar + Yb
        kb1 = kb1 + 0.5 * h * Yb
        xbar += _fx_t(Y1, kb1)
        ybar = ybar + _fy_t(x, kb1)
    return xbar


@numba.njit(cache=True)
def _rk4_f(x, y, out):
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = x[i] * y[i - 1]


@numba.njit(cache=True)
def ode_grad_njit_ns(x, ns, tf):
    """Hand gradient, Numba loops: the same forward pass (stage states kept in a
    ``(ns, 4, n)`` array) and reverse pass as :func:`ode_grad_numpy`."""
    n, h = x.shape[0], tf / ns
    Y = np.zeros((ns, 4, n))
    k = np.zeros((4, n))
    y = np.zeros(n)
    coef = (0.5 * h, 0.5 * h, h)
    for s in range(ns):
        Y[s, 0] = y
        _rk4_f(x, Y[s, 0], k[0])
        for st in range(3):
            for i in range(n):
                Y[s, st + 1, i] = y[i] + coef[st] * k[st, i]
            _rk4_f(x, Y[s, st + 1], k[st + 1])
        for i in range(n):
            y[i] += h / 6.0 * (k[0, i] + 2.0 * k[1, i] + 2.0 * k[2, i] + k[3, i])
    ybar, xbar = np.zeros(n), np.zeros(n)
    kb = np.zeros(n)
    ybar[n - 1] = 1.0
    weight = (h / 6.0, h / 3.0, h / 3.0, h / 6.0)
    for s in range(ns - 1, -1, -1):
        yb_in = ybar.copy()
        for i in range(n):
            kb[i] = weight[3] * yb_in[i]
        for st in range(3, -1, -1):       # stage st: k_st = f(Y_st)
            xbar[0] += kb[0]
            for i in range(1, n):
                xbar[i] += kb[i] * Y[s, st, i - 1]
            # Yb = (df/dy)^T kb; Y_st = y + coef * k_{st-1}
            # and k_{st-1} feeds Y_st (coef) and y_{s+1} (weight): its adjoint, in place
            # (kb[i + 1] is read before kb[i + 1] is overwritten)
            nxt = weight[st - 1] if st > 0 else 0.0
            c = coef[st - 1] if st > 0 else 0.0
            for i in range(n - 1):
                yb = x[i + 1] * kb[i + 1]
                ybar[i] += yb
                kb[i] = nxt * yb_in[i] + c * yb
            kb[n - 1] = nxt * yb_in[n - 1]
    return xbar


def ode_grad_njit(x):
    return ode_grad_njit_ns(x, ODE_NS, ODE_TF)


# --- peers ------------------------------------------------------------------------------
def peers(key):
    """``(jax, torch, autograd, casadi)`` builders of problem ``key`` (see :class:`Problem`)."""
    if key == "det":
        return ((lambda jax, jnp: (det_by_minor, ())), (lambda torch: det_by_minor),
                (lambda anp: det_by_minor),
                (lambda ca: lambda x: det_by_minor(ca.vertsplit(x))))
    if key == "llsq":
        t, q = llsq_data()

        def jax_version(jax, jnp):
            return (lambda x, t, q: llsq_loop(x, t, q, jnp.sum)), (jnp.asarray(t),
                                                                    jnp.asarray(q))

        def torch_version(torch):
            tt, qt = torch.from_numpy(t), torch.from_numpy(q)
            return lambda x: llsq_loop(x, tt, qt, torch.sum)

        def autograd_version(anp):
            return lambda x: llsq_loop(x, t, q, anp.sum)

        def casadi_version(ca):
            return lambda x: llsq_loop(ca.vertsplit(x), ca.DM(t), ca.DM(q), ca.sum1)
        return jax_version, torch_version, autograd_version, casadi_version
    if key == "ode":
        def jax_version(jax, jnp):
            return (lambda x: ode_last(x, jnp.zeros, jnp.concatenate)), ()

        def torch_version(torch):
            return lambda x: ode_last(x, lambda n: torch.zeros(n, dtype=torch.float64),
                                      torch.cat)

        def autograd_version(anp):
            return lambda x: ode_last(x, anp.zeros, anp.concatenate)

        def casadi_version(ca):
            return lambda x: ode_last(x, lambda n: ca.SX.zeros(n, 1), lambda v: ca.vertcat(*v))
        return jax_version, torch_version, autograd_version, casadi_version
    raise KeyError(key)


# --- the suite's hooks ------------------------------------------------------------------
def build(which, key):
    rng = np.random.default_rng(12)
    if which == "det":
        f, gn, gj = det_by_minor, det_grad_numpy, det_grad_njit
        x0, label = rng.uniform(0.0, 1.0, DET_ELL ** 2), "det_by_minor 3 x 3 (n_arg = 9)"
        note = ("cmpad det_by_minor: expansion by minors along the first row, recursive, over "
                "scalars x[k] (every tool runs the same Python function on its own arrays)")
    elif which == "llsq":
        f, gn, gj = make_llsq(), llsq_grad_numpy, make_llsq_grad_njit()
        x0 = rng.uniform(-1.0, 1.0, LLSQ_N)
        label = f"llsq_obj n_arg = {LLSQ_N}, n_other = {LLSQ_M} points"
        note = ("cmpad llsq_obj: polynomial model sum_i x_i t^i over 100 points on [-1, 1], "
                "targets sign(t), built by a Python loop over the 9 coefficients")
    else:
        f, gn, gj = an_ode, ode_grad_numpy, ode_grad_njit
        x0 = rng.uniform(0.5, 1.5, ODE_N)
        label = f"an_ode n_arg = {ODE_N}, n_other = {ODE_NS} RK4 steps"
        note = ("cmpad an_ode: y_99(2) by 9 RK4 steps (Python loop, vectorized right-hand "
                "side); at cmpad's size y_99(2) is identically zero, so is the gradient: "
                "CppAD's published rate (and CasADi SX) fold the zeros away at taping; "
                "jittape's compiled tape does the same (Tape.optimize(absolute_zero=True)), "
                "its interpreted replay sweeps every record (IEEE: nan * 0 is nan)")
    jax_v, torch_v, ag_v, ca_v = peers(which)
    return Problem(key=key, family=f"cmpad {which}", label=label, x0=x0, f=f, grad_numpy=gn,
                   grad_numba=gj, jax=jax_v, torch=torch_v, autograd=ag_v, casadi=ca_v,
                   fd=True, notes=[note], absolute_zero=which == "ode")


def _central_fd(f, x, eps=1e-6):
    g = np.empty_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def reference_check():
    """The hand gradients against central differences (and the ODE's at a non-degenerate
    size, n = 6: y_5(2) depends on every x_i); the determinant against ``np.linalg.det``."""
    rng = np.random.default_rng(3)
    lines = []
    x = rng.uniform(0.0, 1.0, 9)
    assert abs(det_by_minor(x) - np.linalg.det(x.reshape(3, 3))) < 1e-14
    rel = lambda g, ref: float(np.max(np.abs(g - ref)) / np.max(np.abs(ref)))  # noqa: E731
    errs = {"det": rel(_central_fd(det_by_minor, x), det_grad_njit(x))}
    x = rng.uniform(-1.0, 1.0, LLSQ_N)
    errs["llsq"] = rel(_central_fd(make_llsq(), x), make_llsq_grad_njit()(x))
    x = rng.uniform(0.5, 1.5, 6)
    g_np, g_nb = ode_grad_numpy(x), ode_grad_njit_ns(x, ODE_NS, ODE_TF)
    assert np.max(np.abs(g_np - g_nb)) < 1e-13 * np.max(np.abs(g_nb)), (g_np, g_nb)
    errs["ode (n = 6)"] = rel(_central_fd(an_ode, x), g_nb)
    for k, e in errs.items():
        assert e < 1e-7, (k, e)
    x = rng.uniform(0.5, 1.5, ODE_N)
    assert an_ode(x) == 0.0 and not np.any(ode_grad_njit(x)), "y_99(2) should vanish"
    lines.append("cmpad hand gradients against central differences (relative errors): "
                 + ", ".join(f"{k} {v:.1e}" for k, v in errs.items())
                 + f"; det by minors = np.linalg.det; an_ode at n = {ODE_N}, {ODE_NS} steps: "
                 "y_99(2) and its gradient are exactly zero")
    return lines

"""IPOPT with exact sparse derivatives from tapes: ``jittape.minimize(..., method="ipopt")``.

IPOPT (Wächter & Biegler, "On the implementation of an interior-point filter line-search
algorithm for large-scale nonlinear programming", Math. Program. 106 (2006) 25-57) solves

    min f(x)  subject to  g_L <= g(x) <= g_U,  x_L <= x <= x_U

with Newton steps on the barrier problem, so it wants the sparse Jacobian of ``g`` and the
sparse Hessian of the Lagrangian ``sigma f(x) + lambda . g(x)``, each as values on a
structure fixed once. Both come from tapes: the structures are the sparsity patterns
propagated over the tapes recorded at ``x0`` (:meth:`jittape.Tape.jacobian_sparsity`,
:meth:`jittape.Tape.hessian_sparsity`; the Hessian's lower triangle), the values from
colored tangent sweeps and HVPs. cyipopt (the optional extra ``jittape[ipopt]``) is the
binding; its ``Problem`` interface is documented at https://cyipopt.readthedocs.io.
"""

import numpy as np

from .._base.errors import NotDifferentiableError
from .method_table import dict_to_nonlinear
from ..api.taped import taped

_INSTALL = ("method='ipopt' needs cyipopt: `pip install 'jittape[ipopt]'` (binary wheels that "
            "bundle IPOPT), or `pip install cyipopt` where IPOPT is installed")


def _cyipopt():
    try:
        import cyipopt
    except ImportError as e:
        raise ImportError(_INSTALL) from e
    return cyipopt


def values_at(mat, pattern):
    """The entries of the sparse ``mat`` at the nonzeros of ``pattern`` (CSR order).
    Raises RuntimeError if ``mat`` has a nonzero outside it (a re-recorded tape whose
    pattern grew: IPOPT's structure is fixed)."""
    import scipy.sparse as sp
    mat = sp.csr_array(mat)
    if (mat.indptr.size == pattern.indptr.size and np.array_equal(mat.indptr, pattern.indptr)
            and np.array_equal(mat.indices, pattern.indices)):
        return mat.data
    rows, cols = pattern.nonzero()
    vals = np.asarray(mat[rows, cols]).ravel()
    if np.abs(mat.data).sum() > np.abs(vals).sum() * (1 + 1e-12) + 1e-300:
        raise RuntimeError("the function was re-recorded with a sparsity pattern larger than "
                           "the one at x0, which IPOPT was given; start from a point where "
                           "the recorded branches are the ones taken everywhere")
    return vals


class _Block:
    """One constraint of the SciPy kinds, as ``lb <= c(x) <= ub`` on a taped ``c``."""

    def __init__(self, con, x0):
        import scipy.optimize as so
        if isinstance(con, dict):
            con = dict_to_nonlinear(con)
        if isinstance(con, so.NonlinearConstraint):
            f, lb, ub = con.fun, con.lb, con.ub
        elif isinstance(con, so.LinearConstraint):
            a = con.A.toarray() if hasattr(con.A, "toarray") else np.asarray(con.A, float)
            f, lb, ub = (lambda x: a @ x), con.lb, con.ub
        else:
            raise TypeError(f"unsupported constraint {con!r}: a dict, NonlinearConstraint or "
                            f"LinearConstraint")
        self.fun = taped(lambda x: np.ravel(f(x)) * 1.0)
        self.m = int(np.size(self.fun(x0)))
        self.lb = np.broadcast_to(np.asarray(lb, float), (self.m,))
        self.ub = np.broadcast_to(np.asarray(ub, float), (self.m,))
        self.jac_pattern = self.fun.jacobian_sparsity(x0)


def _bounds(bounds, n):
    if bounds is None:
        return np.full(n, -np.inf), np.full(n, np.inf)
    if hasattr(bounds, "lb"):  # scipy.optimize.Bounds
        return (np.broadcast_to(np.asarray(bounds.lb, float), (n,)).copy(),
                np.broadcast_to(np.asarray(bounds.ub, float), (n,)).copy())
    pairs = [(-np.inf if lo is None else lo, np.inf if hi is None else hi) for lo, hi in bounds]
    lb, ub = np.array(pairs, dtype=float).reshape(n, 2).T
    return lb, ub


def _keeps_error(method):
    """Callbacks record their first exception instead of letting cyipopt swallow it (it
    would turn a missing second-order rule into a failed restoration phase); the next
    ``intermediate`` call stops IPOPT and :func:`minimize_ipopt` raises it."""
    def run(self, *a):
        try:
            return method(self, *a)
        except Exception as e:  # noqa: BLE001 - re-raised after the solve
            self.error = self.error or e
            raise
    return run


class _Problem:
    """cyipopt's problem object: objective, gradient, constraints, their sparse Jacobian
    and the Lagrangian's sparse Hessian, on structures fixed at ``x0``."""

    error = None

    def __init__(self, fun, args, blocks, x0, exact_hessian=True):
        import scipy.sparse as sp
        self.f, self.args, self.blocks = taped(fun), args, blocks
        self._last = (None, None)
        self.nit = 0
        jac = sp.vstack([b.jac_pattern for b in blocks] or [sp.csr_array((0, x0.size))])
        self.jac_pattern = sp.csr_array(jac, dtype=bool)
        if not exact_hessian:  # IPOPT's quasi-Newton approximation: no Hessian wanted
            self.hess_pattern = sp.csr_array((x0.size, x0.size), dtype=bool)
            return
        h = self.f.hessian_sparsity(x0, *args).astype(np.int8)
        for b in blocks:
            h = h + b.fun.hessian_sparsity(x0).astype(np.int8)
        self.hess_pattern = sp.csr_array(sp.tril(h) != 0)  # IPOPT reads the lower triangle
        self.hess_pattern.sort_indices()

    def _value_and_grad(self, x):
        if self._last[0] is None or not np.array_equal(self._last[0], x):
            self._last = (x.copy(), self.f.value_and_grad(x, *self.args))
        return self._last[1]

    @_keeps_error
    def objective(self, x):
        return self._value_and_grad(x)[0]

    @_keeps_error
    def gradient(self, x):
        return self._value_and_grad(x)[1]

    @_keeps_error
    def constraints(self, x):
        return np.concatenate([b.fun(x) for b in self.blocks] or [np.zeros(0)])

    def jacobianstructure(self):
        return self.jac_pattern.nonzero()

    @_keeps_error
    def jacobian(self, x):
        import scipy.sparse as sp
        if not self.blocks:
            return np.zeros(0)
        return values_at(sp.vstack([b.fun.sparse_jacobian(x) for b in self.blocks]),
                         self.jac_pattern)

    def hessianstructure(self):
        return self.hess_pattern.nonzero()

    @_keeps_error
    def hessian(self, x, lagrange, obj_factor):
        import scipy.sparse as sp
        h = self.f.sparse_hessian(x, *self.args) * obj_factor
        start = 0
        for b in self.blocks:
            h = h + b.fun.sparse_hessian(x, weights=lagrange[start:start + b.m])
            start += b.m
        return values_at(sp.tril(h, format="csr"), self.hess_pattern)

    def intermediate(self, *info):
        self.nit = int(info[1])  # the iteration count
        return self.error is None  # False stops IPOPT


def minimize_ipopt(fun, x0, args=(), *, constraints=(), bounds=None, tol=None, options=None,
                   **kwargs):
    """Minimize ``fun(x, *args)`` with IPOPT, exact sparse derivatives from tapes.

    Called by ``jittape.minimize(fun, x0, method="ipopt", ...)`` with SciPy's arguments:
    ``constraints`` (dicts ``{'type': 'eq' | 'ineq', 'fun', 'args'}``,
    ``NonlinearConstraint`` or ``LinearConstraint``, functions of ``x`` alone), ``bounds``
    (``Bounds`` or ``(lo, hi)`` pairs, None for unbounded), ``tol`` (IPOPT's ``tol``) and
    ``options`` (IPOPT options by name, https://coin-or.github.io/Ipopt/OPTIONS.html; by
    default ``print_level`` 0 and no banner).

    Returns
    -------
    scipy.optimize.OptimizeResult
        ``x`` (float64, shape ``(n,)``), ``fun``, ``success`` (IPOPT status 0 or 1:
        solved, or solved to acceptable level), ``status``, ``message``, ``nit``,
        ``info`` (cyipopt's dictionary: multipliers ``mult_g``, ``mult_x_L``,
        ``mult_x_U``, constraint values ``g``) and ``replay_stats`` of the objective.

    Raises
    ------
    ImportError
        cyipopt is not installed (the message says how to install it).
    TypeError
        An unsupported keyword or constraint.
    """
    import scipy.optimize as so
    cyipopt = _cyipopt()
    if kwargs:
        raise TypeError(f"method='ipopt' does not take {', '.join(sorted(kwargs))}; IPOPT's "
                        f"own settings go in options={{name: value}}")
    x0 = np.asarray(x0, dtype=np.float64).ravel()
    blocks = [_Block(c, x0) for c in constraints]
    opts = {"print_level": 0, "sb": "yes", **({} if tol is None else {"tol": tol}),
            **(options or {})}
    exact = opts.get("hessian_approximation", "exact") == "exact"
    problem = _Problem(fun, tuple(args), blocks, x0, exact)
    lb, ub = _bounds(bounds, x0.size)
    cl = np.concatenate([b.lb for b in blocks] or [np.zeros(0)])
    cu = np.concatenate([b.ub for b in blocks] or [np.zeros(0)])
    nlp = cyipopt.Problem(n=x0.size, m=cl.size, problem_obj=problem, lb=lb, ub=ub, cl=cl,
                          cu=cu)
    for name, value in opts.items():
        nlp.add_option(name, value)
    x, info = nlp.solve(x0)
    if isinstance(problem.error, NotDifferentiableError):
        raise NotDifferentiableError(f"{problem.error} With IPOPT, options="
                                     f"{{'hessian_approximation': 'limited-memory'}} needs "
                                     f"first derivatives only.") from problem.error
    if problem.error is not None:
        raise problem.error
    msg = info["status_msg"]
    return so.OptimizeResult(
        x=x, fun=float(info["obj_val"]), success=info["status"] in (0, 1),
        status=int(info["status"]), message=msg.decode() if isinstance(msg, bytes) else msg,
        nit=problem.nit, info=info, replay_stats=problem.f.stats)

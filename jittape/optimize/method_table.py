"""Which exact derivatives each ``scipy.optimize.minimize`` method can use, from taped
functions: gradients for all, Hessian-vector products or Hessians (dense or sparse) for the
second-order methods, constraint Jacobians (sparse when sparse) and constraint Hessians.

Method names and what they accept: SciPy's ``minimize`` documentation (SciPy 1.17,
"Notes" of :func:`scipy.optimize.minimize`): Newton-CG, trust-ncg and trust-krylov take
``hessp``; trust-exact and dogleg need ``hess`` as a dense array; trust-constr takes
``hess`` (a sparse array too) or ``hessp``, and per ``NonlinearConstraint`` a ``jac`` (sparse
too) and a ``hess(x, v)`` of ``v . c(x)``; SLSQP uses constraint Jacobians only.
"""

import numpy as np

from ..api.taped import taped

HESSP_METHODS = {"newton-cg", "trust-ncg", "trust-krylov"}
DENSE_HESS_METHODS = {"trust-exact", "dogleg"}
SECOND_ORDER = HESSP_METHODS | DENSE_HESS_METHODS | {"trust-constr"}
DERIVATIVE_FREE = {"nelder-mead", "powell", "cobyla", "cobyqa"}
SPARSE_DENSITY, SPARSE_MIN_N = 0.1, 100  # "sparse" below this density, above this size


def is_sparse(pattern):
    """Whether a pattern is worth sparse matrices: ``n > 100`` and density below 10 %."""
    m, n = pattern.shape
    return n > SPARSE_MIN_N and pattern.nnz < SPARSE_DENSITY * m * n


def refuse_user_hessian(method, kwargs):
    """jittape supplies the Hessian: ``hess``/``hessp`` given by the user raise, saying why."""
    given = [k for k in ("hess", "hessp") if kwargs.get(k) is not None]
    if not given:
        return
    name = method or "the default method"
    if method in SECOND_ORDER:
        raise ValueError(f"jittape.minimize supplies {given[0]} itself for {name} (exact, from "
                         f"the recorded tape); pass {given[0]} to scipy.optimize.minimize "
                         f"directly to use your own")
    raise ValueError(f"method {name!r} uses no Hessian, so {given[0]}= would be ignored; the "
                     f"methods that use one are {', '.join(sorted(SECOND_ORDER))}")


def objective_kwargs(tf, method, x0, args, sparse=True):
    """The derivative keywords of ``scipy.optimize.minimize`` for ``method``: the value and
    gradient together (``jac=True``), plus ``hessp`` or ``hess`` where the method uses one,
    from ``tf``'s ``hvp(x, *args, v=p)`` and ``hessian(x, *args)``. trust-constr gets the
    sparse Hessian if ``sparse`` and ``tf.hessian_sparsity(x0, *args)`` is sparse, else
    ``hessp``."""
    if method in DERIVATIVE_FREE:
        return {}
    kw = {"jac": True}
    if method in HESSP_METHODS:
        kw["hessp"] = lambda x, p, *a: tf.hvp(x, *a, v=p)
    elif method in DENSE_HESS_METHODS:
        kw["hess"] = lambda x, *a: np.atleast_2d(tf.hessian(x, *a))
    elif method == "trust-constr":
        if sparse and is_sparse(tf.hessian_sparsity(x0, *args)):
            kw["hess"] = lambda x, *a: tf.sparse_hessian(x, *a)
        else:
            kw["hessp"] = lambda x, p, *a: tf.hvp(x, *a, v=p)
    return kw


def dict_to_nonlinear(con):
    """A SciPy constraint dict (``{'type': 'eq' | 'ineq', 'fun', 'args'}``) as a
    NonlinearConstraint (``eq``: ``c(x) = 0``; ``ineq``: ``c(x) >= 0``)."""
    import scipy.optimize as so
    args, fun = tuple(con.get("args", ())), con["fun"]
    ub = 0.0 if con["type"].lower() == "eq" else np.inf
    return so.NonlinearConstraint(lambda x: fun(x, *args), 0.0, ub)


def with_derivatives(con, method, x0):
    """A constraint with its exact Jacobian (and, for trust-constr, the Hessian of
    ``v . c``) from a taped function, unless the user gave them."""
    import scipy.optimize as so
    if isinstance(con, dict):
        if "jac" in con or "fun" not in con:
            return con
        if method != "trust-constr":
            return dict(con, jac=taped(con["fun"]).jacobian)
        con = dict_to_nonlinear(con)
    if not isinstance(con, so.NonlinearConstraint) or callable(con.jac):
        return con  # LinearConstraint and the like need no derivative
    tc = taped(con.fun)
    sparse = method == "trust-constr" and is_sparse(tc.jacobian_sparsity(x0))  # SLSQP: dense
    jac = tc.sparse_jacobian if sparse else tc.jacobian
    hess = con.hess
    if method == "trust-constr" and not callable(hess):
        hess = _constraint_hessian(tc, x0)
    return so.NonlinearConstraint(tc, con.lb, con.ub, jac=jac, hess=hess,
                                  keep_feasible=con.keep_feasible)


def _constraint_hessian(tc, x0):
    """``hess(x, v)``: the Hessian of ``v . c(x)``, sparse when its pattern is."""
    sparse, shape = is_sparse(tc.hessian_sparsity(x0)), np.shape(tc(x0))

    def hess(x, v):
        w = np.reshape(v, shape)
        if sparse:
            return tc.sparse_hessian(x, weights=w)
        return np.atleast_2d(tc.hessian(x, weights=w))
    return hess

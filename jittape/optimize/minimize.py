"""``scipy.optimize.minimize`` and ``least_squares`` with exact derivatives from replayed tapes."""

import numpy as np

from ..api.taped import TapedFunction, taped


def _refuse_user_derivative(name, what, jac):
    if jac is not None:
        raise ValueError(f"jittape.{name} supplies the {what} itself; pass jac to "
                         f"scipy.optimize.{name} directly to use your own")


def checked_call(method, jac, kwargs, x0, constraints):
    """``(method, x0, constraints)`` of a ``minimize`` call: the method lower-cased, ``x0``
    as float64, the constraints as a list. Raises ValueError if the call gives ``jac``,
    ``hess`` or ``hessp`` (jittape supplies them)."""
    import scipy.optimize as so  # here, not at import: it doubles `import jittape`
    from . import method_table as sd

    method = method.lower() if isinstance(method, str) else method
    _refuse_user_derivative("minimize", "gradient", jac)
    sd.refuse_user_hessian(method, kwargs)
    if isinstance(constraints, (dict, so.NonlinearConstraint, so.LinearConstraint)):
        constraints = [constraints]
    return method, np.asarray(x0, dtype=np.float64), constraints


def minimize(fun, x0, args=(), method=None, *, jac=None, constraints=(), **kwargs):
    """``scipy.optimize.minimize`` with exact derivatives of ``fun`` and the constraints from
    replayed tapes, each method given what it can use.

    ``fun(x, *args)`` is recorded on the first call and replayed natively afterwards
    (re-recorded when a guard fails; see :func:`jittape.taped`). Every method gets the
    value and gradient together from one forward and one reverse sweep (``jac=True``);
    derivative-free methods get the value only. Second-order methods get exact second
    derivatives (:mod:`jittape.optimize.method_table`): Newton-CG, trust-ncg and trust-krylov
    Hessian-vector products (``hessp``, forward over reverse: no Hessian is formed);
    trust-exact and dogleg the dense Hessian; trust-constr the sparse Hessian
    (``scipy.sparse`` CSR, star-colored HVPs) when large and sparse, else ``hessp``.
    Constraints given as functions (``{'type': 'ineq', 'fun': c}`` or
    ``NonlinearConstraint(c, lb, ub)`` without a callable ``jac``) get exact Jacobians,
    sparse when large and sparse, and for trust-constr the Hessian of ``v . c(x)``.
    ``method="ipopt"`` solves with IPOPT instead (:func:`jittape.optimize.ipopt.minimize_ipopt`).
    Every other keyword (``bounds``, ``callback``, ``options``, ``tol``, ...) is passed to
    SciPy unchanged.

    Parameters
    ----------
    fun : callable
        ``fun(x, *args) -> float``, plain NumPy code; ``x`` is a 1-D float64 array of shape
        ``(n,)``. A :class:`jittape.TapedFunction` is used as it is, with the tapes it has.
    x0 : array_like of shape (n,)
    args : tuple
        Extra arguments of ``fun``: constants of the tape (a change re-records).
    method : str, optional
        A method of ``scipy.optimize.minimize`` (case-insensitive), or ``"ipopt"``.

    Returns
    -------
    scipy.optimize.OptimizeResult
        SciPy's result; ``result.replay_stats`` holds the :class:`jittape.ReplayStats` of
        the objective.

    Raises
    ------
    ValueError
        If ``jac``, ``hess`` or ``hessp`` is given: the derivatives are jittape's to supply
        (and a method that uses no Hessian is told so).
    """
    import scipy.optimize as so
    from . import method_table as sd

    method, x0, constraints = checked_call(method, jac, kwargs, x0, constraints)
    if method == "ipopt":
        from .ipopt import minimize_ipopt
        return minimize_ipopt(fun, x0, args, constraints=constraints, **kwargs)
    tf = fun if isinstance(fun, TapedFunction) else taped(fun)  # reuse its tapes
    constraints = [sd.with_derivatives(c, method, x0) for c in constraints]
    derivs = sd.objective_kwargs(tf, method, x0, args)
    objective = tf.value_and_grad if derivs.get("jac") else tf
    res = so.minimize(objective, x0, args=args, method=method, constraints=constraints,
                      **derivs, **kwargs)
    res.replay_stats = tf.stats
    return res


def _sparse_wanted(tf, x0, args, jac_sparsity, kwargs):
    """Whether least_squares hands SciPy sparse Jacobians (see :func:`least_squares`)."""
    if not (jac_sparsity is True or jac_sparsity is False or (isinstance(jac_sparsity, str)
                                                             and jac_sparsity == "auto")):
        raise ValueError(f"jac_sparsity must be 'auto', True or False, not {jac_sparsity!r} "
                         f"(jittape finds the pattern itself)")
    if jac_sparsity is False:
        return False
    if kwargs.get("method", "trf") == "lm" or kwargs.get("tr_solver") == "exact":
        if jac_sparsity is True:
            raise ValueError("sparse Jacobians need method 'trf' or 'dogbox' with "
                             "tr_solver 'lsmr' (SciPy's rule)")
        return False
    if jac_sparsity is True:
        return True
    from .method_table import is_sparse
    return is_sparse(tf.jacobian_sparsity(x0, *args))


def least_squares(fun, x0, args=(), *, jac=None, jac_sparsity="auto", **kwargs):
    """``scipy.optimize.least_squares`` with the exact Jacobian of the residuals from a
    replayed tape, sparse for large sparse problems.

    ``fun(x, *args)`` returns the residual vector; it is recorded on the first call and
    replayed natively afterwards (re-recorded when a guard fails; :func:`jittape.taped`).
    Its Jacobian ``J(x)``, shape ``(m, n)``, comes from the same tape: dense from ``n``
    tangent sweeps or ``m`` reverse sweeps, whichever are fewer (Griewank & Walther,
    "Evaluating Derivatives", sec. 3.3), or sparse (``scipy.sparse`` CSR) from one tangent
    sweep per color of the pattern's column coloring (:meth:`jittape.Tape.sparse_jacobian`),
    with SciPy's ``tr_solver='lsmr'`` (the default then). Every other keyword (``method``,
    ``bounds``, ``loss``, ``x_scale``, ...) goes to SciPy unchanged.

    Parameters
    ----------
    fun : callable
        ``fun(x, *args) -> ndarray of shape (m,)``, plain NumPy code; ``x`` a float64
        array of shape ``(n,)``.
    x0 : array_like of shape (n,)
    args : tuple
        Extra arguments of ``fun``: constants of the tape (a change re-records).
    jac_sparsity : {"auto", True, False}
        Sparse Jacobians: ``"auto"`` when the pattern at ``x0`` has a density below 10%
        and ``n > 100`` (and the method allows them: not ``'lm'``, not
        ``tr_solver='exact'``), ``True`` always, ``False`` never.

    Returns
    -------
    scipy.optimize.OptimizeResult
        SciPy's result (``jac`` is the exact Jacobian at the solution, CSR when sparse);
        ``result.replay_stats`` holds the :class:`jittape.ReplayStats` of the residuals.

    Raises
    ------
    ValueError
        If ``jac`` is given (the Jacobian is jittape's to supply), ``jac_sparsity`` is
        not one of the above, or ``True`` with ``method='lm'`` or ``tr_solver='exact'``.
    """
    import scipy.optimize as so

    _refuse_user_derivative("least_squares", "Jacobian", jac)
    tf = taped(fun)
    x0 = np.asarray(x0, dtype=np.float64)
    if _sparse_wanted(tf, x0, args, jac_sparsity, kwargs):
        kwargs.setdefault("tr_solver", "lsmr")
        jac = tf.sparse_jacobian
    else:
        jac = tf.jacobian
    res = so.least_squares(tf, x0, jac=jac, args=args, **kwargs)
    res.replay_stats = tf.stats
    return res

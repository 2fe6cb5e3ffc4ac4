"""``scipy.optimize.minimize`` with gradients and constraint Jacobians from replayed tapes."""

import numpy as np

from .taped_function import taped


def _with_jacobian(con):
    """A constraint with its Jacobian from a taped function, unless it already has one."""
    import scipy.optimize as so
    if isinstance(con, so.NonlinearConstraint):
        if callable(con.jac):
            return con
        jac = taped(con.fun).jacobian
        return so.NonlinearConstraint(con.fun, con.lb, con.ub, jac=jac,
                                      keep_feasible=con.keep_feasible)
    if isinstance(con, dict):
        if "jac" in con or "fun" not in con:
            return con
        return dict(con, jac=taped(con["fun"]).jacobian)
    return con  # LinearConstraint and the like need no derivative


def _refuse_user_derivative(name, what, jac):
    if jac is not None:
        raise ValueError(f"jittape.{name} supplies the {what} itself; pass jac to "
                         f"scipy.optimize.{name} directly to use your own")


def minimize(fun, x0, args=(), method=None, *, jac=None, constraints=(), **kwargs):
    """``scipy.optimize.minimize`` with the value and gradient of ``fun`` from replayed tapes.

    ``fun(x, *args)`` is recorded on the first call and replayed natively afterwards
    (re-recorded when a guard fails; see :func:`jittape.taped`). Each evaluation runs one
    forward and one reverse sweep and hands scipy the value and the gradient together
    (``jac=True``), so no iteration pays two evaluations. Constraints given as functions
    (``{'type': 'ineq', 'fun': c}`` or ``NonlinearConstraint(c, lb, ub)`` without a callable
    ``jac``) get their Jacobians from taped functions too. Every other keyword (``bounds``,
    ``callback``, ``options``, ``tol``, ``hess``, ...) is passed to scipy unchanged.

    Parameters
    ----------
    fun : callable
        ``fun(x, *args) -> float``, plain NumPy code; ``x`` is a 1-D float64 array of shape
        ``(n,)``.
    x0 : array_like, shape (n,)
    args : tuple
        Extra arguments of ``fun``: constants of the tape (a change re-records).
    method : str, optional
        Any gradient-based method of ``scipy.optimize.minimize``.

    Returns
    -------
    scipy.optimize.OptimizeResult
        scipy's result; ``result.replay_stats`` holds the :class:`jittape.replay.ReplayStats`
        of the objective.

    Raises
    ------
    ValueError
        If ``jac`` is given: the gradient is jittape's to supply.
    """
    import scipy.optimize as so  # here, not at import: it doubles `import jittape`

    _refuse_user_derivative("minimize", "gradient", jac)
    tf = taped(fun)
    if isinstance(constraints, (dict, so.NonlinearConstraint, so.LinearConstraint)):
        constraints = [constraints]
    constraints = [_with_jacobian(c) for c in constraints]
    res = so.minimize(tf.value_and_grad, np.asarray(x0, dtype=np.float64), args=args,
                      method=method, jac=True, constraints=constraints, **kwargs)
    res.replay_stats = tf.stats
    return res


SPARSE_DENSITY, SPARSE_MIN_N = 0.1, 100  # jac_sparsity="auto": sparse below, above


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
    pattern = tf.jacobian_sparsity(x0, *args)
    m, n = pattern.shape
    return n > SPARSE_MIN_N and pattern.nnz < SPARSE_DENSITY * m * n


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
    x0 : array_like, shape (n,)
    args : tuple
        Extra arguments of ``fun``: constants of the tape (a change re-records).
    jac_sparsity : "auto", True or False
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

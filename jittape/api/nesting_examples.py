"""Recorded examples of the nested-differentiation ops: the op table's test specs (the table
names them by dotted path; they sit above it, like :mod:`jittape.custom.examples`)."""

import numpy as np

from .gradients import grad
from .transforms import jvp


def grad_of_grad_example(x):
    """The op table's test of nested_vjp: a gradient recorded inside a recorded function.
    ``np.interp`` has no recorded reverse rule, so the call record is taken
    (:mod:`jittape.api.nesting`)."""
    return np.sum(grad(lambda z: np.sum(np.sin(z) * _bent(z) ** 2))(x) * np.cos(x))


def grad_of_jvp_example(x):
    """The op table's test of nested_jvp: a JVP recorded inside a recorded function (the
    call record: ``np.interp`` has no recorded reverse rule)."""
    return np.sum(jvp(lambda z: np.exp(0.5 * z) * _bent(z), (x,), (np.cos(x),))[1] ** 2)


def _bent(z):
    """A piecewise linear function of ``z`` (``np.interp``), kinks away from the specs'
    points."""
    return np.interp(z, [-5.0, 5.0], [-2.0, 3.0])

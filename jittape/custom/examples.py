"""Recorded examples of the custom-rule and checkpoint ops: the op table's test specs.

The generic checker runs every op of the table through a NumPy expression that records it
(:class:`jittape.optable.entry.Spec`). The ops of :mod:`jittape.optable.rules.custom` and
:mod:`jittape.optable.rules.checkpoint` are recorded only through this layer
(:func:`jittape.custom_vjp`, :func:`jittape.custom_jvp`, :func:`jittape.checkpoint_loop`,
:func:`jittape.checkpoint`), which sits above the table: their specs name the functions
below by dotted path, so that the table imports nothing above it.
"""

import numpy as np

from .checkpoint import checkpoint, checkpoint_loop
from .custom_rules import custom_jvp, custom_vjp


@custom_vjp
def sin_mul(x, y):
    """``sin(x) y`` with a hand-written VJP."""
    return np.sin(x) * y


sin_mul.defvjp(lambda x, y: (np.sin(x) * y, (np.cos(x), np.sin(x), y)),
               lambda res, g: (g * res[0] * res[2], g * res[1]))


@custom_jvp
def exp_mul(x, y):
    """``exp(x) y`` with a hand-written JVP."""
    return np.exp(x) * y


@exp_mul.defjvp
def _exp_mul_jvp(primals, tangents):
    (x, y), (dx, dy) = primals, tangents
    z = np.exp(x) * y
    return z, z * dx + np.exp(x) * dy


@custom_vjp
def cube(x):
    """``x ** 3`` whose VJP calls :func:`exp_mul`: a custom rule nested in another's."""
    return x ** 3


cube.defvjp(lambda x: (x ** 3, x), lambda x, g: (exp_mul(0.0 * x, 3.0 * x * x) * g,))


def vjp_example(x, y):
    return sin_mul(x, y)


def jvp_example(x, y):
    return exp_mul(x, y)


def nested_example(x):
    return cube(x) * x


def step(s, p):
    """One step of the checkpointed loops below."""
    return 0.9 * s + 0.1 * np.sin(s) * p


def checkpoint_loop_example(x, p):
    return np.sum(checkpoint_loop(step, 5, x, p, snapshots=2) * x)


def checkpoint_example(x, p):
    g = checkpoint(step)
    return np.sum(g(g(x, p), p) * x)

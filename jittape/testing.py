"""Gradient checking against central finite differences (public: users want it too).

The check compares the reverse-mode directional derivative ``<grad f(x), v>`` with the
central difference ``(f(x + h v) - f(x - h v)) / (2h)`` along random directions ``v``, the
test autograd and JAX use. Central differences have truncation error O(h^2) and rounding
error O(eps/h) (Nocedal & Wright, "Numerical Optimization", 2nd ed., sec. 8.1), so with
``h = 1e-6`` agreement to about 1e-7 relative is expected of a correct rule.
"""

import numpy as np

from .api.gradients import value_and_grad


def _directional_fd(f, args, nums, dirs, h):
    def shifted(s):
        a = list(args)
        for n, d in zip(nums, dirs):
            a[n] = args[n] + s * h * d
        return float(np.reshape(f(*a), ()))  # a size-1 array output counts as a scalar
    return (shifted(1.0) - shifted(-1.0)) / (2.0 * h)


def _direction(rng, x):
    """A random direction shaped like ``x``: complex for a complex argument."""
    d = rng.standard_normal(np.shape(x))
    if np.iscomplexobj(x):
        d = d + 1j * rng.standard_normal(np.shape(x))
    return np.asarray(d)


def check_gradient(f, gradient, args, argnums=0, n_directions=3, h=1e-6, rtol=1e-6,
                   atol=1e-8, seed=0):
    """Assert that ``gradient(*args)`` is the gradient of ``f`` at ``args``.

    Parameters
    ----------
    f : callable
        Scalar function of ``args``, evaluated on plain floats/ndarrays.
    gradient : callable
        Returns the gradient w.r.t. ``argnums`` (one array, or a tuple for a tuple argnums).
    args : tuple
        The point (floats or float64 ndarrays; complex ones are checked along complex
        directions, the gradient in JAX's convention ``df/dx - i df/dy``).
    argnums : int or tuple of int
        The positions in ``args`` that ``gradient`` differentiates.
    n_directions : int
        Random unit directions to test.
    h : float
        Finite-difference step.
    rtol : float
        Relative tolerance (see Raises).
    atol : float
        Absolute tolerance.
    seed : int
        Seed of the random directions.

    Raises
    ------
    AssertionError
        A directional derivative differs from its central difference by more than
        ``atol + rtol * scale``, ``scale`` being the larger magnitude of the two estimates
        plus the size of the terms of the dot product.
    """
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    g = gradient(*args)
    grads = (g,) if single else tuple(g)
    rng = np.random.default_rng(seed)
    for _ in range(n_directions):
        dirs = [_direction(rng, args[n]) for n in nums]
        norm = np.sqrt(sum(np.sum(np.abs(d) ** 2) for d in dirs)) or 1.0
        dirs = [d / norm if np.ndim(d) else d.item() / norm for d in dirs]
        # Re(g d): for a complex argument g = df/dx - i df/dy (JAX's convention), the
        # directional derivative along d = dx + i dy is Re(g d) = df/dx dx + df/dy dy
        ad = sum(float(np.sum(np.real(np.asarray(gi) * d))) for gi, d in zip(grads, dirs))
        terms = sum(float(np.sum(np.abs(np.asarray(gi) * d))) for gi, d in zip(grads, dirs))
        fd = _directional_fd(f, args, nums, dirs, h)
        scale = max(abs(ad), abs(fd), terms)
        if not abs(ad - fd) <= atol + rtol * scale:
            raise AssertionError(
                f"gradient check failed: reverse mode gives <grad, v> = {ad!r}, central "
                f"differences give {fd!r} (difference {abs(ad - fd):.3g}, allowed "
                f"{atol + rtol * scale:.3g})")


def check_grads(f, args, argnums=0, **kwargs):
    """Assert that jittape's gradient of ``f`` at ``args`` matches central differences.

    ``args`` is a tuple of positional arguments (a single non-tuple is taken as one
    argument); other keywords are those of :func:`check_gradient`.

    Raises
    ------
    AssertionError
        The gradient disagrees with central differences (both numbers in the message).
    """
    args = args if isinstance(args, tuple) else (args,)
    vg = value_and_grad(f, argnums)
    check_gradient(f, lambda *a: vg(*a)[1], args, argnums, **kwargs)

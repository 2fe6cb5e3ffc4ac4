"""Gradient checks of the autograd test-suite harness, done with jittape.

``check_grads(fun, argnum, modes, order)(*args, **kwargs)`` keeps the meaning of
``autograd.test_util.check_grads`` and its tolerances, and checks jittape instead:

* the value: jittape's output against ``fun`` on plain NumPy (relative 1e-7);
* ``rev``, twice: eagerly (``jittape.value_and_grad`` of ``<f(x), w>``) and replayed
  (``jittape.record(...).vjp``, which reruns the tape's forward sweep), each as the scalar
  ``<u, J^T w>`` against ``<w, (f(x + u eps/2) - f(x - u eps/2)) / eps>`` for random ``u``,
  ``w`` (autograd's ``check_vjp``), and the gradient's shapes against the input's;
* ``fwd``: ``jittape.jvp`` against the same central difference (autograd's ``check_jvp``).

``order=2`` (autograd's default) is checked as autograd does: the functions ``(x, v) -> J(x)
v`` (``jittape.jvp``) and ``(x, w) -> J(x)^T w`` (``jittape.vjp``) are checked in turn, at
order 1, with respect to both arguments, which differentiates jittape's derivatives (nested
differentiation). With ``AGSUITE_MAX_ORDER=1`` in the environment they are counted instead.
A check with complex inputs or outputs is skipped and counted (out of scope). A tuple/list
output (``np.split``, ``eigh``) is checked through the concatenation of its raveled parts,
since a jittape tape has one output array; the harness counts those checks and tries the
structured output natively too (``structured_native``).

:data:`STATE` holds the counts of the current test; the pytest plugin resets and reads it.
"""

import os
from itertools import product

import numpy as np
import scipy.special  # noqa: F401  imported before jittape (the order its README asks for),
import scipy.stats  # noqa: F401  so its SciPy wrappers are installed before any test runs

import jittape

TOL = 1e-6  # autograd.test_util's tolerances and step
RTOL = 1e-6
EPS = 1e-6
VALUE_RTOL = 1e-7  # jittape's value against plain NumPy's
VALUE_ATOL = 1e-9
MAX_ORDER = int(os.environ.get("AGSUITE_MAX_ORDER", "2"))  # 1: count order 2, do not check

STATE = {}


def reset():
    """Forget the counts of the previous test."""
    STATE.clear()
    STATE.update(checks=0, rev=0, fwd=0, complex_skipped=0, order2=0, order2_checked=0,
                 structured=0,
                 structured_native_fail=None, jittape_calls=0, out_of_scope=None,
                 nested=False, last_check="")


reset()


class OutOfScope(Exception):
    """The test reached an autograd feature that has no jittape equivalent (reason given)."""


class WrongValue(AssertionError):
    """jittape's value of the function differs from NumPy's."""


class WrongGradient(AssertionError):
    """jittape's derivative differs from central differences (or has the wrong shape)."""


class ReferenceFailure(Exception):
    """The function failed on plain NumPy/SciPy values: the test does not fit this NumPy."""


def out_of_scope(reason):
    STATE["out_of_scope"] = reason
    raise OutOfScope(reason)


def count_call():
    STATE["jittape_calls"] += 1


# --- structures of leaves (floats, arrays) in nested tuples, lists and dicts ---------------
def is_struct(x):
    return isinstance(x, (tuple, list, dict))


def leaves(x):
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in leaves(x[k])]
    if isinstance(x, (tuple, list)):
        return [leaf for item in x for leaf in leaves(item)]
    return [x]


def tree_map(fn, *xs):
    x0 = xs[0]
    if isinstance(x0, dict):
        return {k: tree_map(fn, *(x[k] for x in xs)) for k in x0}
    if isinstance(x0, (tuple, list)):
        return type(x0)(tree_map(fn, *items) for items in zip(*xs))
    return fn(*xs)


def is_complex(x):
    """Any complex leaf (never asks an active value: jittape's actives are real)."""
    return any(isinstance(leaf, complex) or (isinstance(leaf, (np.ndarray, np.generic))
                                             and np.iscomplexobj(leaf)) for leaf in leaves(x))


def is_float_leaf(x):
    return np.issubdtype(np.asarray(x).dtype, np.floating)


def randn_like(x):
    """A random direction shaped like ``x``: floats for scalars, zero on integer leaves."""
    def one(leaf):
        if not is_float_leaf(leaf):
            return np.zeros(np.shape(leaf))
        r = np.random.randn(*np.shape(leaf))
        return float(r) if np.ndim(leaf) == 0 else r
    return tree_map(one, x)


def axpy(x, v, s):
    return tree_map(lambda a, b: a + s * b if is_float_leaf(a) else a, x, v)


def inner(a, b):
    total = 0.0
    for la, lb in zip(leaves(a), leaves(b)):
        if la is not None and lb is not None:
            total += float(np.sum(np.asarray(la, dtype=float) * np.asarray(lb, dtype=float)))
    return total


def shapes(x):
    return [np.shape(leaf) for leaf in leaves(x)]


def scalar_close(a, b):
    return abs(a - b) < TOL or abs(a - b) / abs(a + b) < RTOL


def flatten_output(fun):
    """``fun`` with a tuple/list output turned into one vector (jittape tapes have one output)."""
    def flat_fun(*args, **kwargs):
        out = fun(*args, **kwargs)
        if not is_struct(out):
            return out
        return np.concatenate([np.reshape(leaf, (-1,)) for leaf in leaves(out)])
    flat_fun.__name__ = f"flat_{getattr(fun, '__name__', 'fun')}"
    return flat_fun


# --- the checks ------------------------------------------------------------------------------
def argnums_of(argnum):
    """autograd's ``argnum`` (an int, or a list/tuple of ints) as jittape's ``argnums``."""
    return argnum if isinstance(argnum, int) else tuple(argnum)


def describe(args, kwargs):
    def one(a):
        if is_struct(a):
            inner_ = ", ".join(one(b) for b in (a.values() if isinstance(a, dict) else a))
            return f"({inner_})" if isinstance(a, tuple) else f"[{inner_}]"
        if isinstance(a, np.ndarray):
            return f"array{a.shape}" if a.dtype == np.float64 else f"array{a.shape}:{a.dtype}"
        return getattr(a, "__name__", None) or repr(a)
    parts = [one(a) for a in args] + [f"{k}={one(v)}" for k, v in kwargs.items()]
    return "(" + ", ".join(parts) + ")"


def check_grads(fun, argnum=0, modes=None, order=2):
    """``autograd.test_util.check_grads`` done with jittape (see the module docstring)."""
    modes = ["fwd", "rev"] if modes is None else list(modes)

    def checker(*args, **kwargs):
        check(fun, argnums_of(argnum), modes, order, args, kwargs)
    return checker


def combo_check(fun, *check_args, **check_kwargs):
    """``autograd.test_util.combo_check``: ``check_grads`` on every combination given."""
    def combos(*args, **kwargs):
        keyed = [[(k, v) for v in vs] for k, vs in kwargs.items()]
        for args_ in product(*args):
            for kwargs_ in product(*keyed):
                check_grads(fun, *check_args, **check_kwargs)(*args_, **dict(kwargs_))
    return combos


def check(fun, nums, modes, order, args, kwargs):
    name = getattr(fun, "__name__", None) or repr(fun)
    STATE["last_check"] = f"{name}{describe(args, kwargs)} argnum={nums} modes={modes}"
    if order > 1 and MAX_ORDER < 2:
        STATE["order2"] += 1
    if is_complex(args) or is_complex(kwargs):
        STATE["complex_skipped"] += 1
        return
    try:
        y = fun(*args, **kwargs)
    except OutOfScope:
        raise
    except Exception as e:
        raise ReferenceFailure(f"{name} fails on plain NumPy values: {type(e).__name__}: "
                               f"{e}") from e
    if is_complex(y):
        STATE["complex_skipped"] += 1
        return
    STATE["checks"] += 1
    idx = (nums,) if isinstance(nums, int) else nums
    xs = tuple(args[n] for n in idx)
    fw = fun
    if is_struct(y):
        STATE["structured"] += 1
        if STATE["structured_native_fail"] is None:
            STATE["structured_native_fail"] = _structured_native(fun, args, kwargs, idx, xs)
        fw = flatten_output(fun)
        y = fw(*args, **kwargs)
    if "rev" in modes:
        _check_rev(fw, args, kwargs, nums, idx, xs, y)
    if "fwd" in modes:
        _check_fwd(fw, args, kwargs, idx, xs, y)
    if order > 1 and MAX_ORDER > 1:
        STATE["order2_checked"] += 1
        _check_derivatives(fw, args, kwargs, idx, xs, y, modes, order, name)


def _check_derivatives(fw, args, kwargs, idx, xs, y, modes, order, name):
    """autograd's order > 1: ``(x, v) -> J v`` and ``(x, w) -> J^T w`` checked in turn with
    respect to both arguments (``autograd.test_util.check_grads``)."""
    g, k = _closure(fw, args, kwargs, idx), len(xs)

    def jvp_f(*a):
        return jittape.jvp(g, a[:k], a[k:])[1]

    def vjp_f(*a):
        gs = jittape.vjp(g, *a[:k])[1](a[k])
        return gs[0] if k == 1 else gs
    jvp_f.__name__, vjp_f.__name__ = f"jvp_{name}", f"vjp_{name}"
    if "fwd" in modes:
        check(jvp_f, tuple(range(2 * k)), modes, order - 1, (*xs, *randn_like(xs)), {})
    if "rev" in modes:
        check(vjp_f, tuple(range(k + 1)), modes, order - 1, (*xs, randn_like(y)), {})


def _numerical_jvp(fw, args, kwargs, idx, u):
    def shifted(s):
        a = list(args)
        for n, un in zip(idx, u):
            a[n] = axpy(args[n], un, s * EPS / 2)
        return np.asarray(fw(*a, **kwargs), dtype=float)
    return (shifted(1.0) - shifted(-1.0)) / EPS


def _closure(fw, args, kwargs, idx):
    def g(*dargs):
        a = list(args)
        for n, d in zip(idx, dargs):
            a[n] = d
        return fw(*a, **kwargs)
    return g


def _check_value(out, y, how):
    if np.shape(out) != np.shape(y):
        raise WrongValue(f"{how}: output shape {np.shape(out)}, NumPy's {np.shape(y)}; "
                         f"in {STATE['last_check']}")
    a, b = np.asarray(out, dtype=float), np.asarray(y, dtype=float)
    if not np.allclose(a, b, rtol=VALUE_RTOL, atol=VALUE_ATOL, equal_nan=True):
        err = np.abs(a - b).ravel()
        i = int(np.nanargmax(err))
        raise WrongValue(f"{how}: value differs from NumPy's by up to {err[i]:.3g} (element "
                         f"{i} of {err.size}: jittape {a.ravel()[i]!r}, NumPy {b.ravel()[i]!r}); "
                         f"in {STATE['last_check']}")


def _check_rev(fw, args, kwargs, nums, idx, xs, y):
    """Reverse mode twice: eagerly (value_and_grad of <f, w>) and replayed (record().vjp)."""
    STATE["rev"] += 1
    count_call()
    w = randn_like(y)

    def contracted(*a, **k):
        return np.sum(fw(*a, **k) * w)
    value, g = jittape.value_and_grad(contracted, argnums=nums)(*args, **kwargs)
    ref = float(np.sum(np.asarray(y, dtype=float) * w))
    scale = float(np.sum(np.abs(np.asarray(y, dtype=float) * w)))
    if not abs(float(value) - ref) <= VALUE_RTOL * scale + VALUE_ATOL:
        raise WrongValue(f"rev eager (value_and_grad): <f(x), w> = {float(value)!r}, NumPy's "
                         f"{ref!r}; in {STATE['last_check']}")
    _compare_vjp(g, nums, xs, w, fw, args, kwargs, idx, "rev eager (value_and_grad)")
    tape = jittape.record(fw, *args, argnums=nums, **kwargs)
    out, g = tape.vjp(xs, w)
    _check_value(out, y, "rev replayed (record().vjp)")
    _compare_vjp(g, nums, xs, w, fw, args, kwargs, idx, "rev replayed (record().vjp)")


def _compare_vjp(g, nums, xs, w, fw, args, kwargs, idx, how):
    gs = (g,) if isinstance(nums, int) else tuple(g)
    if _same_structure(xs, gs):
        gs = tree_map(lambda xl, gl: np.zeros(np.shape(xl)) if gl is None else gl, xs, gs)
    if not _same_structure(xs, gs) or shapes(gs) != shapes(xs):
        raise WrongGradient(f"{how}: gradient shapes {shapes(gs)}, inputs' {shapes(xs)}; "
                            f"in {STATE['last_check']}")
    u = randn_like(xs)
    exact = inner(u, gs)
    numeric = inner(w, _numerical_jvp(fw, args, kwargs, idx, u))
    if not scalar_close(numeric, exact):
        raise WrongGradient(f"{how}: <u, J^T w> = {exact!r}, central differences "
                            f"{numeric!r}; in {STATE['last_check']}")


def _same_structure(a, b):
    if is_struct(a) != is_struct(b):
        return a is None or b is None
    if not is_struct(a):
        return True
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            _same_structure(a[k], b[k]) for k in a)
    return len(a) == len(b) and all(_same_structure(p, q) for p, q in zip(a, b))


def _check_fwd(fw, args, kwargs, idx, xs, y):
    STATE["fwd"] += 1
    count_call()
    u = randn_like(xs)
    out, t = jittape.jvp(_closure(fw, args, kwargs, idx), xs, u)
    _check_value(out, y, "fwd (jvp)")
    if np.shape(t) != np.shape(y):
        raise WrongGradient(f"fwd: tangent shape {np.shape(t)}, output's {np.shape(y)}; "
                            f"in {STATE['last_check']}")
    numeric = _numerical_jvp(fw, args, kwargs, idx, u)
    v = randn_like(y)
    if not scalar_close(inner(v, t), inner(v, numeric)):
        raise WrongGradient(f"fwd: <v, J u> = {inner(v, t)!r}, central differences "
                            f"{inner(v, numeric)!r}; in {STATE['last_check']}")


def _structured_native(fun, args, kwargs, idx, xs):
    """jittape.jvp on the tuple/list output itself: '' if it works, else the error's first line."""
    try:
        jittape.jvp(_closure(fun, args, kwargs, idx), xs, randn_like(xs))
    except Exception as e:
        text = str(e).splitlines()[0] if str(e) else ""
        return f"{type(e).__name__}: {text[:120]}"
    return ""


def check_equivalent(x, y):
    """``autograd.test_util.check_equivalent``: same shapes, close along a random direction."""
    assert _same_structure(x, y) and shapes(x) == shapes(y), \
        f"VSpace mismatch:\nx: {shapes(x)}\ny: {shapes(y)}"
    v = randn_like(x)
    assert scalar_close(inner(x, v), inner(y, v)), f"Value mismatch:\nx: {x}\ny: {y}"


def self_check():
    """'' if the checks catch known defects (a dropped derivative, a wrong value), else why not.

    Run before the suite: a harness that cannot fail would report zero wrong gradients.
    """
    from jittape.numpy.active import Active
    x = np.array([1.5, 2.0])
    dropped = lambda x: x * jittape.primal(x)  # noqa: E731  derivative x instead of 2x
    shifted = lambda x: x + (1.0 if isinstance(x, Active) else 0.0)  # noqa: E731
    cases = [(dropped, ["rev"], WrongGradient), (dropped, ["fwd"], WrongGradient),
             (shifted, ["rev"], WrongValue), (shifted, ["fwd"], WrongValue)]
    try:
        for fun, modes, expected in cases:
            try:
                check(fun, 0, modes, 1, (x,), {})
            except expected:
                continue
            return f"{modes} check of a known {expected.__name__} passed"
        return ""
    finally:
        reset()

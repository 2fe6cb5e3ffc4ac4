"""scipy.special functions as op-table entries (jittape.optable.rules.special).

The generic checker (tests/test_ops.py) runs every entry's own spec in value, reverse,
tangent and replay modes. Here: replayed values against SciPy over wide grids (large, small,
negative, edge and non-finite arguments), closed forms of values and derivatives, the
refusal of active order/shape arguments, and Numba's disk cache of sweeps that call SciPy's
C kernels (a second process compiles nothing).
"""

import math
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.special as sp

import jittape
from jittape.tape import file as tapefile
from jittape import NotDifferentiableError
from jittape.ops import BY_NAME
from jittape.optable.rules.special import SPECIAL_OPS

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

_WIDE = np.concatenate([-np.geomspace(1e-300, 1e300, 61), np.geomspace(1e-300, 1e300, 61),
                        np.linspace(-6.0, 6.0, 49), np.linspace(0.0, 1.0, 21),
                        [0.0, -0.0, -1.0, -2.0, np.inf, -np.inf, np.nan, 171.5, 171.7]])
_POS = np.geomspace(1e-6, 1e4, 41)
_ORDERS = np.array([-3.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 7.5, 30.0, 150.0])
_SHAPES = np.array([1e-3, 0.1, 0.5, 1.0, 2.0, 10.0, 1e3, 1e5])
# SciPy composes these in Python; jittape's helpers agree to rounding (see scalar_special)
_OWN = {"polygamma", "multigammaln"}


def _replayed(f, *args):
    """f at ``args`` by the forward sweep: recorded at ``args`` and replayed there."""
    tape = jittape.record(f, *args, argnums=tuple(range(len(args))))
    return tape.value(*args)


def _grid(op):
    """(f of the op's continuous arguments, those arguments): a wide grid per kind."""
    f = getattr(sp, op.name)
    if op.kind == "unary":
        return f, (_WIDE,)
    if op.kind == "binary" and op.constant:
        orders = np.arange(0.0, 11.0) if op.name in ("polygamma", "yn") else _ORDERS
        v, x = (m.ravel() for m in np.meshgrid(orders, np.concatenate([-_POS, [0.0], _POS])))
        if op.name == "polygamma":  # x > 0; negative x below
            v, x = v[x > 0], x[x > 0]
        return (lambda x: f(v, x)), (x,)
    if op.kind == "binary":
        a, b = (m.ravel() for m in np.meshgrid(_WIDE[::4], _WIDE[::4]))
        return f, (a, b)
    a, b, x = (m.ravel() for m in np.meshgrid(_SHAPES, _SHAPES, np.linspace(0.0, 1.0, 41)))
    return (lambda x: f(a, b, x)), (x,)


@pytest.mark.parametrize("op", SPECIAL_OPS, ids=[op.name for op in SPECIAL_OPS])
def test_replayed_values_equal_scipy(op):
    """SciPy's own C kernels: bit for bit, NaNs and infinities included; the helpers for
    what SciPy composes in Python: within 1e-13 relative."""
    if op.name == "multigammaln":
        for d in range(1, 11):
            a = 0.5 * (d - 1) + np.geomspace(1e-6, 1e6, 40)
            got = _replayed(lambda a: sp.multigammaln(a, d), a)
            np.testing.assert_allclose(got, sp.multigammaln(a, d), rtol=1e-13)
        return
    f, args = _grid(op)
    got = _replayed(f, *args)
    want = f(*args)
    if op.name in _OWN:
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    else:
        np.testing.assert_array_equal(got, want)


def test_polygamma_at_negative_arguments():
    """Left of 0 the Hurwitz zeta sums cancel (both SciPy's and jittape's lose digits)."""
    x = -np.array([0.3, 0.5, 1.3, 2.7, 10.2, 30.5])
    for n in range(1, 8):
        np.testing.assert_allclose(_replayed(lambda x: sp.polygamma(n, x), x),
                                   sp.polygamma(n, x), rtol=1e-10)


def test_closed_forms_of_values():
    n = np.arange(1.0, 20.0)
    np.testing.assert_allclose(_replayed(sp.gamma, n), [math.factorial(k - 1) for k in
                                                        range(1, 20)], rtol=1e-15)
    x = np.linspace(-2.5, 2.5, 11)
    np.testing.assert_allclose(_replayed(lambda x: sp.erfinv(sp.erf(x)), x), x, rtol=1e-14)
    np.testing.assert_allclose(_replayed(lambda p: sp.ndtr(sp.ndtri(p)), n / 20), n / 20,
                               rtol=1e-14)
    np.testing.assert_allclose(_replayed(lambda a: sp.multigammaln(a, 1), n), sp.gammaln(n),
                               rtol=1e-15)


def _grad(f, x):
    return jittape.grad(lambda x: np.sum(f(x)))(x)


def test_closed_forms_of_derivatives():
    x = np.array([0.1, 0.5, 1.0, 2.0, 7.0])
    # gammainc(1, x) = 1 - e^-x, gammainc(2, x) = 1 - (1 + x) e^-x
    np.testing.assert_allclose(_grad(lambda x: sp.gammainc(1.0, x), x), np.exp(-x), rtol=1e-14)
    np.testing.assert_allclose(_grad(lambda x: sp.gammainc(2.0, x), x), x * np.exp(-x),
                               rtol=1e-14)
    np.testing.assert_allclose(_grad(lambda x: sp.gammaincc(2.0, x), x), -x * np.exp(-x),
                               rtol=1e-14)
    u = x / 8.0  # betainc(1, 1, x) = x, betainc(2, 1, x) = x^2
    np.testing.assert_allclose(_grad(lambda x: sp.betainc(1.0, 1.0, x), u), 1.0, rtol=1e-14)
    np.testing.assert_allclose(_grad(lambda x: sp.betainc(2.0, 1.0, x), u), 2 * u, rtol=1e-14)
    np.testing.assert_allclose(_grad(lambda x: sp.erfinv(sp.erf(x)), x[:4]), 1.0, rtol=1e-13)
    np.testing.assert_allclose(_grad(sp.gamma, np.array([1.0, 2.0])),
                               [-np.euler_gamma, 1 - np.euler_gamma], rtol=1e-15)
    # J_1/2(x) = sqrt(2/(pi x)) sin x (DLMF 10.16.1)
    d = np.sqrt(2 / np.pi) * (np.cos(x) / np.sqrt(x) - 0.5 * np.sin(x) * x ** -1.5)
    np.testing.assert_allclose(_grad(lambda x: sp.jv(0.5, x), x), d, rtol=1e-13)
    np.testing.assert_allclose(_grad(lambda x: sp.polygamma(1, x), x), sp.polygamma(2, x),
                               rtol=1e-14)
    np.testing.assert_allclose(_grad(lambda a: sp.multigammaln(a, 2), x + 1),
                               sp.psi(x + 1) + sp.psi(x + 0.5), rtol=1e-14)
    np.testing.assert_allclose(_grad(sp.logit, u), 1 / (u * (1 - u)), rtol=1e-14)
    a, b = 1.5, 2.5  # d/da betaln = psi(a) - psi(a + b)
    ga, gb = jittape.grad(sp.betaln, (0, 1))(a, b)
    assert (ga, gb) == pytest.approx((sp.psi(a) - sp.psi(4.0), sp.psi(b) - sp.psi(4.0)),
                                     rel=1e-14)


def test_derivatives_at_edges():
    # 1/Gamma at its zeros x = -n: (-1)^n n!
    np.testing.assert_allclose(_grad(sp.rgamma, np.array([0.0, -1.0, -2.0, -3.0])),
                               [1.0, -1.0, 2.0, -6.0], rtol=1e-15)
    # integrand of gammainc at x = 0; spence' at its removable point x = 1
    assert jittape.grad(lambda x: sp.gammainc(1.0, x))(0.0) == 1.0
    assert jittape.grad(lambda x: sp.gammainc(0.5, x))(0.0) == math.inf
    assert jittape.grad(sp.spence)(1.0) == -1.0
    assert jittape.grad(sp.j1)(0.0) == 0.5 and jittape.grad(sp.i1)(0.0) == 0.5


REFUSED = [  # (function of the active value t, the argument named in the error)
    (lambda t: sp.gammainc(t, 1.0), "a"), (lambda t: sp.gammaincc(t, 1.0), "a"),
    (lambda t: sp.betainc(t, 2.0, 0.5), "a"), (lambda t: sp.betainc(2.0, t, 0.5), "b"),
    (lambda t: sp.betaincc(2.0, t, 0.5), "b"),
    (lambda t: sp.iv(t, 1.0), "v"), (lambda t: sp.ive(t, 1.0), "v"),
    (lambda t: sp.jv(t, 1.0), "v"), (lambda t: sp.yv(t, 1.0), "v"),
    (lambda t: sp.yn(t, 1.0), "n"), (lambda t: sp.kv(t, 1.0), "v"),
    (lambda t: sp.kve(t, 1.0), "v"), (lambda t: sp.polygamma(t, 1.0), "n"),
    (lambda t: sp.multigammaln(5.0, t), "d"),
    (lambda t: sp.iv(np.array([1.0, 2.0]) * t, 1.0 + t), "v"),  # active x too
    (lambda t: sp.iv(np.array([t, 1.0]), 2.0 * t), "v"),  # object array holding an active
]


@pytest.mark.parametrize("f, arg", REFUSED, ids=[f"{i}-{a}" for i, (_, a) in
                                                   enumerate(REFUSED)])
def test_active_order_arguments_are_refused(f, arg):
    with pytest.raises(NotDifferentiableError, match=rf"argument {arg} is active") as e:
        jittape.grad(lambda t: np.sum(f(t)))(2.0)
    assert "scipy.special." in str(e.value) and f"jittape.primal({arg})" in str(e.value)


def test_log_ndtr_replays_scipy_near_the_right_tail():
    """Regression: the replayed log_ndtr lost digits where it is near 0 (5e-8 relative at
    x = 6: log of 1 - Q, and -Q itself above 6); it is SciPy's kernel now."""
    x = np.linspace(0.5, 12.0, 200)
    np.testing.assert_array_equal(_replayed(sp.log_ndtr, x), sp.log_ndtr(x))
    np.testing.assert_array_equal(_replayed(sp.log_ndtr, -x * 3), sp.log_ndtr(-x * 3))


@pytest.mark.parametrize("f, name", [
    (lambda t: sp.ellipk(t), "scipy.special.ellipk"),
    (lambda t: sp.hyp2f1(1.0, 2.0, 3.0, t), "scipy.special.hyp2f1"),
    (lambda t: sp.kolmogorov(t), "scipy.special.kolmogorov"),
    (lambda t: sp.zeta(t + 2.0, 1.0), "scipy.special._ufuncs._zeta"),  # (zeta's ufunc)
])
def test_refusals_name_the_scipy_function(f, name):
    with pytest.raises(NotDifferentiableError) as e:
        jittape.grad(f)(0.3)
    assert str(e.value).startswith(f"{name} has no derivative rule")


def test_constant_arguments_through_primal():
    """jittape.primal(v) is the way out: a constant, guarded on replay."""
    def f(x):
        return sp.iv(jittape.primal(x[0]), x[1])
    g = jittape.grad(f)(np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, [0.0, (sp.iv(0.0, 2.0) + sp.iv(2.0, 2.0)) / 2], rtol=1e-14)


def test_entries_declare_their_constant_arguments():
    for op in SPECIAL_OPS:
        for a in op.constant:
            assert op.partials[op.args.index(a)] == "0.0"
        if op.constant:
            assert op.spec.fn is not None, f"{op.name}: the checker needs constant orders"
    assert BY_NAME["betainc"].kind == "ternary" and BY_NAME["betainc"].arity == 3


def test_compiled_tape_with_ternary_and_order_ops():
    """The tape compiler's fused loops read the third operand and call SciPy's kernels."""
    a = np.array([0.5, 2.0, 5.0, 1.5])

    def f(x):
        return np.sum(sp.betainc(a, 3.0, x) * sp.iv(1.5, x) + sp.gamma(x + 1))
    x = np.array([0.2, 0.4, 0.6, 0.8])
    tape = jittape.record(f, x).compile()
    assert tape.compiled
    for new in (x, x[::-1] * 0.9):
        v, g = tape.value_and_gradient(new)
        v0, g0 = jittape.value_and_grad(f)(new)
        assert v == pytest.approx(v0, rel=1e-14)
        np.testing.assert_allclose(g, g0, rtol=1e-13)


def test_ternary_records_in_tape_files(tmp_path):
    """A saved tape with a ternary record loads and replays; a third operand that is not an
    earlier record is refused like a select's condition."""
    f = lambda x: np.sum(sp.betainc(np.array([0.5, 2.0, 5.0]), 3.0, x))  # noqa: E731
    x = np.array([0.2, 0.5, 0.7])
    jittape.record(f, x).save(tmp_path / "t.npz")
    np.testing.assert_allclose(jittape.load(tmp_path / "t.npz").gradient(x / 2),
                               jittape.grad(f)(x / 2), rtol=1e-14)
    with np.load(tmp_path / "t.npz") as z:
        data = {k: z[k] for k in z.files}
    i = int(np.flatnonzero(tapefile.opcodes(data) == BY_NAME["betainc"].code)[0])
    data["k"][i] = i
    np.savez(tmp_path / "bad.npz", **data)
    with pytest.raises(jittape.TapeFormatError, match="operand k"):
        jittape.load(tmp_path / "bad.npz")


def test_where_with_a_scalar_condition_on_arrays():
    """Regression: the reverse sweep's unit-stride loop read a size-1 condition as if it
    had the result's size (gradients of np.where(x[0] > 0, x, 2 x) were wrong)."""
    f = lambda x: np.sum(np.where(x[0] > 0, x, 2 * x) * np.arange(1.0, 5.0))  # noqa: E731
    x = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(jittape.grad(f)(-x), [2.0, 4.0, 6.0, 8.0])
    np.testing.assert_array_equal(jittape.record(f, x).gradient(-x), [2.0, 4.0, 6.0, 8.0])


PROGRAM = """
import numpy as np, scipy.special as sp, jittape
f = lambda x: np.sum(sp.iv(1.5, x) * sp.gammainc(2.0, x) + sp.betainc(2.0, 3.0, x / 4))
x = np.linspace(0.5, 2.0, 4)
t = jittape.record(f, x)
g = t.gradient(x)
print(float(t.value(x)), *g)
"""


def cold_then_warm(tmp_path, program):
    """Two processes running ``program`` with the same fresh cache directories: the first
    compiles and saves, the second compiles nothing; returns their CompletedProcesses."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "nc"),
               JITTAPE_CACHE_DIR=str(tmp_path / "jc"), NUMBA_DEBUG_CACHE="1")
    env.pop("JITTAPE_QUIET", None)
    runs = [subprocess.run([sys.executable, "-W", "always", "-c", program], env=env,
                           capture_output=True, text=True, timeout=600) for _ in range(2)]
    for p in runs:
        assert p.returncode == 0, p.stderr
        assert "Cannot cache" not in p.stderr + p.stdout and "dynamic globals" not in p.stderr
    cold, warm = runs
    assert "data saved" in cold.stdout + cold.stderr and "compiling" in cold.stderr
    assert "data saved" not in warm.stdout + warm.stderr and "compiling" not in warm.stderr
    return cold, warm


@pytest.mark.compiled
def test_sweeps_calling_scipy_kernels_are_cached_on_disk(tmp_path):
    """The kernels are linked by symbol name (not a ctypes address, which Numba refuses to
    cache): a second process with the same cache directories compiles nothing."""
    cold, warm = cold_then_warm(tmp_path, PROGRAM)
    assert "data loaded" in warm.stdout + warm.stderr
    # the program's own output (Numba's cache lines come from the compile thread, any time)
    mine = lambda p: [ln for ln in p.stdout.splitlines() if not ln.startswith("[cache]")]  # noqa
    assert mine(cold) == mine(warm)


def test_generating_sources_does_not_import_scipy():
    code = ("import sys, jittape\nfrom jittape.sweeps.codegen import sweep_source\n"
            "from jittape.ops import OPS\nsrc = sweep_source(OPS)\n"
            "assert 'cs_gamma' in src and 'scipy' not in sys.modules, sorted(sys.modules)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr

"""SciPy functions jittape composes for active values (jittape/scipy/composed.py) and the
composed SciPy ufunc gammasgn, plus np.rollaxis and np.real_if_close: each against
SciPy's/NumPy's value and shape, central differences, and replay."""

import numpy as np
import pytest
import scipy.linalg as sl
import scipy.signal as sg
import scipy.special as sp

import jittape
from jittape.testing import check_grads

RNG = np.random.default_rng(7)


def R(*shape):
    return RNG.standard_normal(shape)


def _check(f, args, rtol=1e-12):
    """Value (shape and numbers) against the plain call, gradient of a weighted sum in
    every argument against central differences, replay at a nearby point."""
    ref = np.asarray(f(*args))
    nums = tuple(range(len(args)))
    tape = jittape.record(f, *args, argnums=nums)
    got = np.asarray(tape.value(*args))
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=1e-13)
    w = np.cos(np.arange(ref.size)).reshape(ref.shape)
    g = lambda *a: np.sum(np.sin(f(*a)) * w)  # noqa: E731
    check_grads(g, args, argnums=nums)
    near = tuple(a * 1.01 for a in args)
    replayed = jittape.record(g, *args, argnums=nums).gradient(*near)
    for r, e in zip(replayed, jittape.grad(g, nums)(*near)):
        np.testing.assert_allclose(r, e, rtol=1e-11)


jittape.grad(lambda x: x * 1.0)(1.0)  # a recording installs the SciPy wrappers


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("s1, s2", [((6,), (3,)), ((3,), (5,)), ((4, 3), (2, 2)),
                                    ((3, 5), (4, 6)), ((5, 6), (2, 3)), ((2, 3, 4), (2, 2, 3)),
                                    ((1, 1), (1, 1))], ids=str)
def test_signal_convolve_matches_scipy(s1, s2, mode):
    _check(lambda a, b: sg.convolve(a, b, mode), (R(*s1), R(*s2)))


def test_signal_convolve_one_active_and_scipy_errors():
    a, b = R(4, 3), R(2, 2)
    _check(lambda a: sg.convolve(a, b, "same"), (a,))
    _check(lambda b: sg.convolve(a, b), (b,))
    with pytest.raises(ValueError, match="at least as large"):
        jittape.grad(lambda a: np.sum(sg.convolve(a, R(2, 5), "valid")))(a)
    with pytest.raises(ValueError, match="dimensionality"):
        jittape.grad(lambda a: np.sum(sg.convolve(a, R(2), "full")))(a)
    assert sg.convolve.__wrapped_by_jittape__ is not None  # plain calls reach SciPy


@pytest.mark.parametrize("lu, n, k", [((1, 1), 5, None), ((2, 1), 6, 2), ((0, 2), 4, None)])
def test_linalg_solve_banded_matches_scipy(lu, n, k):
    ab = R(lu[0] + lu[1] + 1, n)
    ab[lu[1]] += 4.0  # a dominant diagonal: well conditioned
    b = R(n) if k is None else R(n, k)
    _check(lambda ab, b: sl.solve_banded(lu, ab, b), (ab, b), rtol=1e-10)


def test_linalg_solve_sylvester_matches_scipy():
    _check(sl.solve_sylvester, (R(3, 3) + 3 * np.eye(3), R(2, 2), R(3, 2)), rtol=1e-10)


def test_gammasgn_is_scipys_and_piecewise_constant():
    x = np.array([0.0, -0.0, -1.0, -0.5, -1.5, -2.5, 0.5, 200.0, -200.5, np.inf, -np.inf,
                  np.nan])
    np.testing.assert_array_equal(jittape.record(sp.gammasgn, x).value(x), sp.gammasgn(x))
    v = np.array([0.3, -0.5, -1.5])
    np.testing.assert_array_equal(jittape.grad(lambda x: np.sum(sp.gammasgn(x) * x))(v),
                                  sp.gammasgn(v))
    tape = jittape.record(lambda x: np.sum(sp.gammasgn(x) * x), v)
    np.testing.assert_array_equal(tape.gradient(v - 1.0), sp.gammasgn(v - 1.0))


def test_rollaxis_and_real_if_close_are_numpys():
    _check(lambda x: np.rollaxis(x, 2, 0), (R(2, 3, 4),))
    _check(lambda x: np.rollaxis(x, -1), (R(2, 3, 4),))
    _check(lambda x: np.real_if_close(x) * 2.0, (R(3),))


def test_a_module_another_thread_is_importing_is_waited_for(tmp_path, monkeypatch):
    """jittape wraps SciPy's functions at a recording if SciPy is loaded; a background
    compile may be importing it meanwhile (a doc example once failed on scipy.special's
    missing expit): the recording must see the module whole."""
    import sys
    import threading
    import time

    from jittape._base.imports import loaded
    (tmp_path / "slow_module_for_jittape.py").write_text(
        "import time\ntime.sleep(0.5)\nlate = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert loaded("slow_module_for_jittape") is None  # not imported: nothing imports it
    th = threading.Thread(target=__import__, args=("slow_module_for_jittape",))
    th.start()
    while "slow_module_for_jittape" not in sys.modules:
        time.sleep(0.001)
    try:
        assert loaded("slow_module_for_jittape").late == 1
    finally:
        th.join()
        sys.modules.pop("slow_module_for_jittape", None)


_FIRST_IMPORT = """
import numpy as np, sys, jittape
assert not any(m in sys.modules for m in ("scipy.stats", "scipy.special", "scipy.linalg"))
def f(x):  # SciPy's modules first imported inside the recorded function
    import scipy
    from scipy.special import logsumexp
    import scipy.linalg as sla
    return (np.sum(scipy.stats.norm.logsf(x)) + logsumexp(x)
            + np.sum(sla.expm(np.diag(x[:2]))))
x = np.array([0.3, -0.2, 0.9])
print(repr(jittape.grad(f)(x).tolist()))
print(repr(jittape.grad(f)(x).tolist()))
"""


def test_scipy_modules_first_imported_inside_a_recording_are_differentiated():
    """jittape.scipy.hooks wraps them as they finish importing (the first gradient raised
    NotDifferentiableError, the second worked)."""
    import os
    import subprocess
    import sys
    import scipy.special as sp
    import scipy.stats as st
    p = subprocess.run([sys.executable, "-c", _FIRST_IMPORT], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, JITTAPE_QUIET="1"))
    assert p.returncode == 0, p.stderr
    first, second = (np.array(eval(s)) for s in p.stdout.splitlines()[-2:])
    x = np.array([0.3, -0.2, 0.9])
    want = (-st.norm.pdf(x) / st.norm.sf(x) + sp.softmax(x)
            + np.array([np.exp(x[0]), np.exp(x[1]), 0.0]))
    np.testing.assert_allclose(first, want, rtol=1e-12)
    np.testing.assert_array_equal(first, second)

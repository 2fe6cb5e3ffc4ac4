"""End-to-end problems: Rosenbrock, Lennard-Jones clusters, scalar loops with branches,
SciPy optimization with ``value_and_grad``, the demo's tape printout and the command line.

References: Rosenbrock's function and its gradient as in ``scipy.optimize.rosen`` /
``rosen_der``; Lennard-Jones energies in reduced units (pair minimum -1 at r = 2^(1/6)).
"""

import re

import numpy as np
import pytest
import scipy.optimize

import jittape
from jittape.__main__ import main
from jittape.demo import (LJ13_GLOBAL_MIN, lj_energy, lj_energy_loops, lj_gradient_hand,
                          run_demo, show_tape)

R_MIN = 2.0 ** (1.0 / 6.0)  # pair-potential minimum distance


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_loops(x):
    s = 0.0
    for i in range(len(x) - 1):
        s = s + 100.0 * (x[i + 1] - x[i] * x[i]) ** 2 + (1.0 - x[i]) ** 2
    return s


# --- Rosenbrock ---------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 5, 10, 50])
def test_rosenbrock_gradient_matches_scipy(n):
    rng = np.random.default_rng(n)
    g = jittape.grad(rosenbrock)
    for _ in range(3):
        x = rng.uniform(-2.0, 2.0, n)
        np.testing.assert_allclose(g(x), scipy.optimize.rosen_der(x), rtol=1e-12, atol=1e-12)
        value, grad = jittape.value_and_grad(rosenbrock)(x)
        assert isinstance(value, float)
        assert value == pytest.approx(scipy.optimize.rosen(x), rel=1e-14)
        assert grad.shape == x.shape


def test_rosenbrock_loops_gradient_matches_scipy():
    x = np.random.default_rng(7).uniform(-2.0, 2.0, 8)
    np.testing.assert_allclose(jittape.grad(rosenbrock_loops)(x), scipy.optimize.rosen_der(x),
                               rtol=1e-12, atol=1e-12)


def test_rosenbrock_replayed_tape_matches_scipy():
    rng = np.random.default_rng(3)
    tape = jittape.record(rosenbrock, rng.uniform(-2.0, 2.0, 6))
    for _ in range(3):
        x = rng.uniform(-2.0, 2.0, 6)
        v, g = tape.value_and_gradient(x)
        assert v == pytest.approx(scipy.optimize.rosen(x), rel=1e-14)
        np.testing.assert_allclose(g, scipy.optimize.rosen_der(x), rtol=1e-12, atol=1e-12)


def test_minimize_rosenbrock_with_value_and_grad():
    res = scipy.optimize.minimize(jittape.value_and_grad(rosenbrock), np.zeros(5),
                                  jac=True, method="BFGS", options={"gtol": 1e-9})
    assert res.success, res.message
    np.testing.assert_allclose(res.x, np.ones(5), atol=1e-6)
    res = scipy.optimize.minimize(jittape.value_and_grad(rosenbrock), np.full(5, -1.0),
                                  jac=True, method="L-BFGS-B",
                                  options={"ftol": 1e-15, "gtol": 1e-10})
    np.testing.assert_allclose(res.x, np.ones(5), atol=1e-5)


# --- Lennard-Jones ------------------------------------------------------------------------
def _icosahedron13():
    """The LJ13 global minimum: a centred icosahedron (relaxed below)."""
    p = (1.0 + 5.0 ** 0.5) / 2.0
    v = []
    for a in (-1.0, 1.0):
        for b in (-p, p):
            v += [(0.0, a, b), (a, b, 0.0), (b, 0.0, a)]
    v = np.array([(0.0, 0.0, 0.0)] + v)
    return (v * (R_MIN / 2.0)).ravel()  # nearest neighbours (edge 2) at about R_MIN


def _random_cluster(n, seed):
    """Random atoms at least 0.8 apart (keeps r^-12 moderate)."""
    rng = np.random.default_rng(seed)
    pts = []
    while len(pts) < n:
        p = rng.uniform(-1.2, 1.2, 3)
        if all(np.linalg.norm(p - q) > 0.8 for q in pts):
            pts.append(p)
    return np.array(pts).ravel()


def _lj13_perturbed():
    return _icosahedron13() + np.random.default_rng(1).normal(0.0, 0.05, 39)


@pytest.mark.parametrize("x", [_lj13_perturbed(), _random_cluster(5, 0)],
                         ids=["lj13-perturbed", "lj5-random"])
@pytest.mark.parametrize("energy", [lj_energy, lj_energy_loops], ids=["vectorized", "loops"])
def test_lj_gradient_matches_hand_derived(energy, x):
    value, g = jittape.value_and_grad(energy)(x)
    assert value == pytest.approx(lj_energy(x), rel=1e-13)
    hand = lj_gradient_hand(x)
    np.testing.assert_allclose(g, hand, rtol=1e-11, atol=1e-11 * np.max(np.abs(hand)))


def test_lj_hand_gradient_matches_central_differences():
    x = _random_cluster(5, 1)
    h = 1e-6
    fd = np.array([(lj_energy(x + h * e) - lj_energy(x - h * e)) / (2 * h)
                   for e in np.eye(x.size)])
    np.testing.assert_allclose(lj_gradient_hand(x), fd, rtol=1e-6, atol=1e-6)


def test_lj_known_energies():
    dimer = np.array([0.0, 0.0, 0.0, R_MIN, 0.0, 0.0])
    triangle = np.array([0.0, 0.0, 0.0, R_MIN, 0.0, 0.0,
                         R_MIN / 2, R_MIN * 3 ** 0.5 / 2, 0.0])
    for f in (lj_energy, lj_energy_loops):
        assert f(dimer) == pytest.approx(-1.0, abs=1e-14)
        assert f(triangle) == pytest.approx(-3.0, abs=1e-13)
    # at equilibrium the force vanishes
    np.testing.assert_allclose(jittape.grad(lj_energy)(dimer), 0.0, atol=1e-12)
    np.testing.assert_allclose(jittape.grad(lj_energy_loops)(triangle), 0.0, atol=1e-12)
    # r = 1: energy 0, du/dr = -24 along the bond (repulsive)
    unit = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0])
    assert lj_energy(unit) == 0.0
    np.testing.assert_allclose(jittape.grad(lj_energy)(unit), [24, 0, 0, -24, 0, 0],
                               rtol=1e-14)


def test_lj13_icosahedron_relaxes_to_published_minimum():
    res = scipy.optimize.minimize(jittape.value_and_grad(lj_energy), _lj13_perturbed(),
                                  jac=True, method="L-BFGS-B",
                                  options={"ftol": 1e-14, "gtol": 1e-9})
    assert res.fun == pytest.approx(LJ13_GLOBAL_MIN, abs=1e-5)


def test_lj_replayed_tape_has_no_guards():
    """The vectorized energy's tape replays at any configuration of the same size."""
    tape = jittape.record(lj_energy, _lj13_perturbed())
    x = _icosahedron13() + np.random.default_rng(5).normal(0.0, 0.1, 39)
    v, g = tape.value_and_gradient(x)
    assert v == pytest.approx(lj_energy(x), rel=1e-13)
    np.testing.assert_allclose(g, lj_gradient_hand(x), rtol=1e-11,
                               atol=1e-11 * np.max(np.abs(g)))


# --- scalar loops and branches ------------------------------------------------------------
def piecewise(x):
    """sum_i of x_i^2 where x_i > 0, else sin(x_i) * x_{i+1} (cyclically)."""
    n = len(x)
    s = 0.0
    for i in range(n):
        if x[i] > 0:
            s = s + x[i] ** 2
        else:
            s = s + np.sin(x[i]) * x[(i + 1) % n]
    return s


def piecewise_grad_hand(x):
    n = len(x)
    g = np.zeros(n)
    for i in range(n):
        if x[i] > 0:
            g[i] += 2 * x[i]
        else:
            g[i] += np.cos(x[i]) * x[(i + 1) % n]
            g[(i + 1) % n] += np.sin(x[i])
    return g


def loop_product(x):
    """A running product and a clipped sum: p = prod (1 + x_i^2); s = sum max(x_i, 0)^3."""
    p = 1.0
    s = 0.0
    for i in range(len(x)):
        p = p * (1.0 + x[i] * x[i])
        if x[i] >= 0.0:
            s = s + x[i] ** 3
    return p + s


def loop_product_grad_hand(x):
    q = 1.0 + x**2
    p = np.prod(q)
    return p / q * 2 * x + np.where(x >= 0, 3 * x**2, 0.0)


@pytest.mark.parametrize("x", [
    np.array([0.5, -0.3, 1.2, -2.0]),    # both branches
    np.array([0.7, 0.1, 0.3]),           # all positive
    np.array([-0.7, -0.1, -1.3]),        # all negative
    np.array([1e-9, -1e-9, 2.0, -0.5]),  # points next to the branch on either side
])
def test_branches_in_python_loops(x):
    np.testing.assert_allclose(jittape.grad(piecewise)(x), piecewise_grad_hand(x),
                               rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(jittape.grad(loop_product)(x), loop_product_grad_hand(x),
                               rtol=1e-13, atol=1e-15)
    assert jittape.value_and_grad(piecewise)(x)[0] == pytest.approx(piecewise(x), rel=1e-15)


def test_branch_change_raises_guard_failure_on_replay():
    tape = jittape.record(piecewise, np.array([0.5, -0.3, 1.2]))
    x_same = np.array([0.6, -0.2, 1.0])  # same signs: same control flow
    np.testing.assert_allclose(tape.gradient(x_same), piecewise_grad_hand(x_same), rtol=1e-14)
    with pytest.raises(jittape.GuardFailure):
        tape.gradient(np.array([-0.5, -0.3, 1.2]))


def test_scalar_argument_branches():
    def f(t):
        if t > 1.0:
            return t ** 3
        return np.exp(t) - t

    g = jittape.grad(f)
    assert g(2.0) == pytest.approx(12.0, rel=1e-15)
    assert g(0.5) == pytest.approx(np.exp(0.5) - 1.0, rel=1e-15)


# --- demo and command line ----------------------------------------------------------------
def _input_adjoint_from_text(text):
    line = next(ln for ln in text.splitlines() if "input x" in ln)
    brackets = re.findall(r"\[([^\]]*)\]", line)
    assert len(brackets) == 2, line  # value column, adjoint column
    return np.array([float(s) for s in brackets[1].split(",")])


def test_demo_tape_shows_input_adjoint_equal_to_gradient():
    lines = []
    text, input_adj, g = show_tape(out=lines.append)
    printed = "\n".join(lines)
    assert text in printed
    x = np.array([1.5, -0.5])
    exact = [np.cos(x[0] * x[1]) * x[1] + 2 * x[0], np.cos(x[0] * x[1]) * x[0]]
    np.testing.assert_array_equal(input_adj, g)
    np.testing.assert_allclose(g, exact, rtol=1e-15)
    # the printed adjoint column of the input record (rounded in print) is the gradient
    np.testing.assert_allclose(_input_adjoint_from_text(text), g, rtol=1e-3)
    assert "input adjoint == jittape.grad: True" in printed
    assert str(jittape.record(jittape.demo.small_function, x)) == text


def test_run_demo_small():
    """A short run: no global-minimum guarantee, but a valid LJ13 local minimum and a
    complete report. (The default niter reaches LJ13_GLOBAL_MIN; see the demo.)"""
    lines = []
    r = run_demo(seed=0, niter=3, out=lines.append)
    text = "\n".join(lines)
    assert r["nit"] == 3
    assert LJ13_GLOBAL_MIN - 1e-6 <= r["energy"] < -30.0
    assert r["error"] == pytest.approx(abs(r["energy"] - LJ13_GLOBAL_MIN))
    np.testing.assert_allclose(jittape.grad(lj_energy)(r["x"]), 0.0, atol=1e-3)
    assert r["fun_calls"] > 0 and r["fd"]["fun_calls"] > r["fun_calls"]
    # the replayed run recorded once (no guards in the vectorized energy) and gave the same
    # search as the eager one
    assert r["replay"].recordings == 1 and r["replay"].guard_failures == 0
    assert r["replay"].replays == r["fun_calls"] - 1
    assert r["eager"]["fun_calls"] == r["fun_calls"]
    # same search, but the gradients' summation orders differ (NumPy's pairwise sums when
    # recording, the sweeps' sequential ones on replay) and BFGS amplifies the last bits
    np.testing.assert_allclose(r["eager"]["energy"], r["energy"], rtol=1e-9)
    for word in ("-44.326801", "finite differences", "wall time", "input x", "adjoint",
                 "replayed tape", "tapes recorded"):
        assert word in text


def test_main_ops(capsys):
    assert main(["ops"]) == 0
    out = capsys.readouterr().out
    exp_line = next(ln for ln in out.splitlines() if re.search(r"\bexp\b", ln))
    assert "np.exp" in exp_line and "zbar * z" in exp_line
    assert "matmul" in out


def test_main_without_command_exits_2(capsys):
    with pytest.raises(SystemExit) as e:
        main([])
    assert e.value.code == 2
    captured = capsys.readouterr()
    assert "demo" in captured.out + captured.err


def test_main_demo_help(capsys):
    with pytest.raises(SystemExit) as e:
        main(["demo", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "--seed" in out and "--niter" in out

"""jittape.checkpoint_loop: checkpointed time integration (issue 13 part 4).

The schedule (jittape._base.revolve) is checked by simulating it; the gradients of an RK4
integration of the Lorenz-96 system against the plain loop's (same records, so equal to
rounding), against central differences (jittape.testing), in eager and replayed, saved and
loaded tapes, in forward mode; the memory saving as a ratio of tape sizes; the errors."""

import numpy as np
import pytest

import jittape
from jittape.tape import file as tapefile
from jittape import NotDifferentiableError
from jittape._base import revolve
from jittape.testing import check_grads


def l96(x, forcing):
    return (np.roll(x, -1) - np.roll(x, 2)) * np.roll(x, 1) - x + forcing


def rk4(x, forcing):
    h = 0.01
    k1 = l96(x, forcing)
    k2 = l96(x + 0.5 * h * k1, forcing)
    k3 = l96(x + 0.5 * h * k2, forcing)
    k4 = l96(x + h * k3, forcing)
    return x + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def plain(x, forcing, n):
    for _ in range(n):
        x = rk4(x, forcing)
    return np.sum(x * x)


def ckpt(x, forcing, n, snapshots=None):
    return np.sum(jittape.checkpoint_loop(rk4, n, x, forcing, snapshots=snapshots) ** 2)


X0 = 8.0 + np.sin(np.arange(8.0))
F = 8.0


# --- the schedule ---------------------------------------------------------------------------
def _simulate(n, s):
    """Run a schedule on step indices: every back step in order, from the right state."""
    sched = revolve.schedule(n, s)
    slots = {slot: k for k, slot in sched.prefix}
    runs, backs, cur = [0] * n, [], None
    for kind, a, b in sched.actions:
        if kind == revolve.RESTORE:
            assert (0 if b < 0 else slots[b]) == a
            cur = a
        elif kind == revolve.ADVANCE:
            assert cur == a
            for k in range(a, b):
                runs[k] += 1
            cur = b
        elif kind == revolve.STORE:
            assert cur == a and 0 <= b < max(0, min(s, n - 1))
            slots[b] = a
        else:
            assert cur == a
            backs.append(a)
            cur = None
    assert backs == list(range(n - 1, -1, -1))
    return max(runs), sched.repetitions


@pytest.mark.parametrize("n", [1, 2, 3, 7, 40, 1000])
@pytest.mark.parametrize("s", [0, 1, 2, 5, 32, 999, 2000])
def test_schedule_reverses_every_step_within_the_binomial_bound(n, s):
    if s == 0 and n > 40:
        return  # quadratic: fine, and slow to simulate
    most, t = _simulate(n, s)
    assert most <= t
    assert s == 0 or revolve.comb(min(s, n - 1) + t, t) >= n


def test_repetitions():
    assert revolve.repetitions(1000, 999) == 1 and revolve.repetitions(1000, 32) == 3
    assert revolve.repetitions(1000, 0) == 999


# --- gradients ----------------------------------------------------------------------------
@pytest.mark.parametrize("snapshots", [None, 4, 0])
def test_gradients_equal_the_plain_loop(snapshots):
    n = 25
    g = jittape.grad(lambda x, f: ckpt(x, f, n, snapshots), argnums=(0, 1))(X0, F)
    ref = jittape.grad(lambda x, f: plain(x, f, n), argnums=(0, 1))(X0, F)
    np.testing.assert_allclose(g[0], ref[0], rtol=1e-12)
    np.testing.assert_allclose(g[1], ref[1], rtol=1e-12)


def test_generic_checker():
    check_grads(lambda x: ckpt(x, F, 30, 3), (X0,))
    check_grads(lambda f: ckpt(X0, f, 30), (F,))


def test_replay_at_new_inputs_taped_and_save_load(tmp_path):
    n = 40
    tape = jittape.record(lambda x, f: ckpt(x, f, n, 6), X0, F, argnums=(0, 1))
    x1, f1 = X0[::-1] * 1.1, 7.5
    ref = jittape.grad(lambda x, f: plain(x, f, n), argnums=(0, 1))(x1, f1)
    for t in (tape, _saved(tape, tmp_path)):
        value, (gx, gf) = t.value_and_gradient(x1, f1)
        assert value == pytest.approx(plain(x1, f1, n), rel=1e-12)
        np.testing.assert_allclose(gx, ref[0], rtol=1e-12)
        assert gf == pytest.approx(ref[1], rel=1e-12)
    tf = jittape.taped(lambda x: ckpt(x, F, n))
    np.testing.assert_allclose(tf.grad(x1), jittape.grad(lambda x: plain(x, F, n))(x1),
                               rtol=1e-12)


def _saved(tape, tmp_path):
    tape.save(tmp_path / "t.npz")
    return jittape.load(tmp_path / "t.npz")


def test_jacobians_in_both_modes():
    """Reverse mode runs several reverse sweeps after one forward sweep (the snapshots of
    the forward pass are used once, then taken again); forward mode the tangent rule."""
    n = 15
    f = lambda x: jittape.checkpoint_loop(rk4, n, x, F, snapshots=3)[:3]  # noqa: E731

    def ref_f(x):
        for _ in range(n):
            x = rk4(x, F)
        return x[:3]
    ref = jittape.jacobian(ref_f)(X0)
    for mode in ("reverse", "forward"):
        np.testing.assert_allclose(jittape.jacobian(f, mode=mode)(X0), ref, rtol=1e-11)


def test_tape_memory_shrinks_with_the_number_of_steps():
    """1 000 RK4 steps: the plain tape holds every step's values, the checkpointed one a
    step's and the states (the default budget)."""
    n = 1000
    a = jittape.record(lambda x: plain(x, F, n), X0)
    b = jittape.record(lambda x: ckpt(x, F, n), X0)
    assert a.nbytes / b.nbytes >= 10.0
    c = jittape.record(lambda x: ckpt(x, F, n, 32), X0)
    assert a.nbytes / c.nbytes >= 100.0
    np.testing.assert_allclose(b.gradient(X0), a.gradient(X0), rtol=1e-11)
    np.testing.assert_allclose(c.gradient(X0), a.gradient(X0), rtol=1e-11)


# --- what it refuses ----------------------------------------------------------------------
def test_second_order_raises_naming_the_step():
    with pytest.raises(NotDifferentiableError, match="rk4.*checkpoint_loop.*plainly"):
        jittape.hessian(lambda x: ckpt(x, F, 3))(X0)


def test_a_closure_over_an_active_value_raises():
    def f(x, forcing):
        return np.sum(jittape.checkpoint_loop(lambda s: rk4(s, forcing), 3, x))
    with pytest.raises(NotDifferentiableError, match="Pass it as an argument"):
        jittape.grad(f, argnums=(0, 1))(X0, F)


def test_control_flow_changing_between_steps_raises():
    def step(x):
        return x * 2.0 if x > 1.0 else x + 1.0  # a guard: false at 0.5, true at 1.5
    with pytest.raises(NotDifferentiableError, match="changed from one call or step"):
        jittape.grad(lambda x: jittape.checkpoint_loop(step, 3, x))(0.5)


def test_plain_values_and_shape_errors():
    assert jittape.checkpoint_loop(lambda x: x + 1.0, 4, 0.5) == 4.5
    assert jittape.checkpoint_loop(rk4, 0, X0, F) is X0
    with pytest.raises(ValueError, match="keep the state's shape"):
        jittape.grad(lambda x: np.sum(jittape.checkpoint_loop(lambda s: s[:2], 3, x)))(X0)


# --- checkpoint(g) ------------------------------------------------------------------------
step = jittape.checkpoint(rk4)


def stepped(x, forcing, n):
    for _ in range(n):
        x = step(x, forcing)
    return np.sum(x * x)


def test_checkpoint_shares_one_region_among_calls(tmp_path):
    n = 60
    a = jittape.record(lambda x: plain(x, F, n), X0)
    b = jittape.record(lambda x: stepped(x, F, n), X0)
    assert a.nbytes / b.nbytes >= 10.0  # one step's records, the calls' inputs and outputs
    x1 = X0 * 0.9
    np.testing.assert_allclose(b.gradient(x1), a.gradient(x1), rtol=1e-12)
    np.testing.assert_allclose(_saved(b, tmp_path).gradient(x1), a.gradient(x1), rtol=1e-12)
    g = jittape.grad(lambda x, f: stepped(x, f, 5), argnums=(0, 1))(X0, F)
    ref = jittape.grad(lambda x, f: plain(x, f, 5), argnums=(0, 1))(X0, F)
    np.testing.assert_allclose(g[0], ref[0], rtol=1e-12)
    assert g[1] == pytest.approx(ref[1], rel=1e-12)
    check_grads(lambda x: stepped(x, F, 4), (X0,))


def test_checkpoint_calls_that_record_differently_get_their_own_region():
    @jittape.checkpoint
    def scaled(x, power):  # a plain argument: a constant, part of what is compared
        return np.sin(x) ** power
    f = lambda x: np.sum(scaled(x, 2.0) + scaled(x, 3.0) + scaled(x * 2.0, 2.0))  # noqa
    ref = lambda x: np.sum(np.sin(x) ** 2 + np.sin(x) ** 3 + np.sin(2 * x) ** 2)  # noqa
    x = np.linspace(0.1, 1.0, 4)
    np.testing.assert_allclose(jittape.grad(f)(x), jittape.grad(ref)(x), rtol=1e-13)
    t = jittape.record(f, x).arrays
    assert (t.op == jittape.ops.codes.CUSTOM_BEGIN).sum() == 2


def test_checkpoint_to_second_order_and_in_forward_mode():
    f = lambda x: stepped(x, F, 3)  # noqa: E731
    ref = lambda x: plain(x, F, 3)  # noqa: E731
    x = X0[:8]
    np.testing.assert_allclose(jittape.hessian(f)(x), jittape.hessian(ref)(x), rtol=1e-10,
                               atol=1e-12)
    v = np.ones_like(x)
    assert jittape.jvp(f, (x,), (v,))[1] == pytest.approx(jittape.jvp(ref, (x,), (v,))[1],
                                                          rel=1e-12)


@pytest.mark.parametrize("op", ["checkpoint_loop", "checkpoint"])
def test_corrupted_checkpoint_records_are_refused(op, tmp_path):
    from jittape.ops import BY_NAME
    from jittape.tape.file import TapeFormatError
    fn = (lambda x: ckpt(x, F, 8, 3)) if op == "checkpoint_loop" else \
        (lambda x: stepped(x, F, 3))
    path = tmp_path / "t.npz"
    jittape.record(fn, X0).save(path)
    with np.load(path) as z:
        d = {k: z[k] for k in z.files}
    call = np.flatnonzero(tapefile.opcodes(d) == BY_NAME[op].code)[-1]
    at = np.arange(d["pool"].size)
    changes = [  # the layout's head, the region's marker, an operand's size
        dict(pool=d["pool"] + np.where(at == d["k"][call], 1, 0)),
        dict(b=np.where(np.arange(d["b"].size) == call, 0, d["b"]).astype(np.int32)),
        dict(pool=d["pool"] + np.where(at == d["k"][call] + 3, 1, 0)),
    ]
    for change in changes:
        np.savez(tmp_path / "bad.npz", **dict(d, **change))
        with pytest.raises(TapeFormatError, match="checkpoint|pool offset|region"):
            jittape.load(tmp_path / "bad.npz")

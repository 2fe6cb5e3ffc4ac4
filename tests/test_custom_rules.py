"""Custom derivative rules (jittape.custom_vjp, jittape.custom_jvp): the typical uses of
issue 13 (a stable softplus, gradient clipping, an implicit-function rule for a root found
by scipy.optimize.brentq) in every mode, through the generic checker of tests/test_ops.py
(the op table's own specs of the custom ops run there too), and the errors.

Each use is checked in eager ``grad``, in a replayed tape at a new point (``record``), in
``taped``, after a save/load round trip, and to second order (``hessian``/``hvp`` against
central differences of the gradient, which differentiates the recorded ``bwd``)."""

import re
from pathlib import Path

import numpy as np
import pytest
import scipy.optimize as so

import jittape
from jittape.tape import file as tapefile
from jittape import GuardFailure, NotDifferentiableError, TapeFormatError
from jittape.sweeps import opsets
from jittape.sweeps import tiers
from jittape.sweeps.codegen import sweep_source
from jittape.sweeps.warmup import warmup
from jittape.ops import BY_NAME, CUSTOM_CODES, OPS

import test_ops
from test_ops import S, _objective, _point

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")


# --- the typical uses ---------------------------------------------------------------------
@jittape.custom_vjp
def softplus(x):
    """log(1 + exp(x)) without overflow."""
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))


def softplus_fwd(x):
    return softplus(x), x


def softplus_bwd(x, g):
    return (g * 0.5 * (1.0 + np.tanh(0.5 * x)),)  # g * sigmoid(x), stable at any x


softplus.defvjp(softplus_fwd, softplus_bwd)


def sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


@jittape.custom_vjp
def clip_gradient(x, bound):
    """The identity, whose cotangent is clipped to [-bound, bound]."""
    return x


clip_gradient.defvjp(lambda x, bound: (x, bound),
                     lambda bound, g: (np.clip(g, -bound, bound), None))


def _g(y, th):  # the equation whose root y(theta) is defined implicitly: g(y, theta) = 0
    return y ** 3 + th[0] * y - th[1]


@jittape.custom_vjp
def cubic_root(th):
    """The real root y of y^3 + th0 y - th1 = 0 (th0 > 0: one real root), by brentq."""
    return so.brentq(lambda y: _g(y, th), -10.0, 10.0, xtol=1e-14)


def cubic_root_fwd(th):
    t = jittape.primal(th)  # brentq on plain values (a guard: taped records again at new th)
    y = so.brentq(lambda y: _g(y, t), -10.0, 10.0, xtol=1e-14)
    # one Newton step from the root on the active th: the value is the root and its
    # tangent the implicit derivative, so that second order sees y(th) move
    y = y - _g(y, th) / (3.0 * y ** 2 + th[0])
    return y, (y, th)


def cubic_root_bwd(res, ybar):
    y, th = res  # implicit function theorem: dy/dth = -(dg/dth) / (dg/dy)
    gy = 3.0 * y ** 2 + th[0]
    return (ybar * np.stack([-y, np.ones_like(y)]) / gy,)


cubic_root.defvjp(cubic_root_fwd, cubic_root_bwd)


@jittape.custom_jvp
def log1pexp(x):
    return np.log1p(np.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return log1pexp(x), sigmoid(x) * dx  # (JAX's docs example, with a stable sigmoid)


def f_softplus(x):
    return np.sum(softplus(x) * np.arange(1.0, x.size + 1.0)) + softplus(x[0]) ** 2


def f_clip(x):
    return np.sum(clip_gradient(x, 0.5) * np.array([3.0, -0.2, 0.1, -2.0]) ** 2 * x[::-1])


def f_root(th):
    return cubic_root(th) ** 2 + th[1] * cubic_root(th * 1.5)


def f_log1pexp(x):
    return np.sum(log1pexp(x) ** 2 * np.cos(x))


def fd_gradient(f, x, h=1e-6):
    e = np.eye(x.size)
    return np.array([(f(x + h * d) - f(x - h * d)) / (2 * h) for d in e])


def fd_hessian(f, x, h=1e-5):
    """Central differences of jittape's gradient: column j along x_j (the Jacobian of the
    gradient, as hessian() gives it; not symmetric when a rule is not a true gradient)."""
    g = jittape.grad(f)
    e = np.eye(x.size)
    return np.array([(g(x + h * d) - g(x - h * d)) / (2 * h) for d in e]).T


USES = {  # f, a point, another point, the expected gradient (None: central differences)
    "softplus": (f_softplus, np.array([-1.3, 0.2, 2.0]), np.array([0.7, -0.4, 1.1]), None),
    "clip": (f_clip, np.array([0.3, -1.2, 0.8, 0.1]), np.array([1.1, 0.4, -0.3, 0.9]),
             "clipped"),
    "root": (f_root, np.array([1.5, 2.0]), np.array([2.5, -1.0]), None),
    "log1pexp": (f_log1pexp, np.array([-0.5, 0.3, 1.7]), np.array([0.1, -2.0, 0.6]), None),
}


def expected_gradient(name, x):
    f, _, _, how = USES[name]
    if how != "clipped":
        return fd_gradient(f, x)
    # the true gradient of sum(c * x * x[::-1]) is c * x[::-1] + (c * x)[::-1]; the clipped
    # cotangent reaches x through the first factor only: clip(c * x[::-1], 0.5)
    c = np.array([3.0, -0.2, 0.1, -2.0]) ** 2
    return np.clip(c * x[::-1], -0.5, 0.5) + (c * x)[::-1]


@pytest.fixture(scope="module", autouse=True)
def _one_module_of_sweeps():
    """The sweeps of one op set holding every op these tests record, compiled (or loaded)
    once: the tapes' op sets reuse it rather than compile one module each."""
    codes = set(CUSTOM_CODES)
    tapes = [jittape.record(f, x).arrays for f, x, _, _ in USES.values()]
    for spec in CHECKED:
        args = _point(spec, np.random.default_rng(0))
        tapes.append(jittape.record(_objective(spec, np.random.default_rng(0)), *args,
                                    argnums=tuple(range(len(args)))).arrays)
    for t in tapes:
        codes |= set(t.op.tolist())
    for name in ("neg", "abs", "exp", "log", "sqrt", "square", "sin", "cos", "tanh", "log1p",
                 "addc", "mulc", "divc", "rsubc", "rdivc", "powc", "add", "sub", "mul", "div",
                 "maximum", "minimum", "lt", "le", "gt", "ge", "ne", "where", "slice",
                 "gather", "concat", "sum", "matmul", "guard", "const"):
        codes.add(BY_NAME[name].code)
    with tiers.foreground():
        warmup(codes)


@pytest.mark.parametrize("name", list(USES))
def test_typical_use_in_every_mode(name, tmp_path):
    f, x, x2, _ = USES[name]
    # eager
    np.testing.assert_allclose(jittape.grad(f)(x), expected_gradient(name, x), rtol=1e-6,
                               atol=1e-8)
    # replayed at a new point (the brentq fwd guards its primal: a new point records again)
    tape = jittape.record(f, x)
    if name == "root":
        with pytest.raises(GuardFailure):
            tape.gradient(x2)
    else:
        np.testing.assert_allclose(tape.gradient(x2), expected_gradient(name, x2), rtol=1e-6,
                                   atol=1e-8)
        assert tape.value(x2) == pytest.approx(f(x2), rel=1e-13)
    # taped: replays (or records again) as the function is called
    tf = jittape.taped(f)
    for p in (x, x2, x, x2):
        v, g = tf.value_and_grad(p)
        assert v == pytest.approx(f(p), rel=1e-13)
        np.testing.assert_allclose(g, expected_gradient(name, p), rtol=1e-6, atol=1e-8)
    assert tf.stats.recordings == (2 if name == "root" else 1)  # (taped keeps both)
    # saved and loaded: the rule is data too
    tape.save(tmp_path / "t.npz")
    loaded = jittape.load(tmp_path / "t.npz")
    np.testing.assert_allclose(loaded.gradient(x), jittape.grad(f)(x), rtol=1e-14)
    if name != "root":
        np.testing.assert_allclose(loaded.gradient(x2), tape.gradient(x2), rtol=1e-14)
    # second order: bwd (or the jvp rule, transposed) differentiated in turn
    h = jittape.hessian(f)(x)
    np.testing.assert_allclose(h, fd_hessian(f, x), rtol=1e-5, atol=1e-6)
    v = np.linspace(-1.0, 1.0, x.size)
    np.testing.assert_allclose(jittape.hvp(f)(x, v), h @ v, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(loaded.hvp(x, v=v), h @ v, rtol=1e-10, atol=1e-12)
    if name != "clip":  # (a clipped gradient is no gradient: its Jacobian is not symmetric)
        np.testing.assert_allclose(h, h.T, rtol=1e-9, atol=1e-12)
        sparse = tape.sparse_hessian(x).toarray()  # dense patterns over a rule's arguments
        np.testing.assert_allclose(sparse, h, rtol=1e-10, atol=1e-12)


def test_softplus_gradient_at_1000_is_one_where_the_naive_rule_gives_nan():
    x = np.array([-1000.0, 0.0, 1000.0])
    g = jittape.grad(lambda x: np.sum(softplus(x)))(x)
    np.testing.assert_array_equal(g, [0.0, 0.5, 1.0])
    with np.errstate(over="ignore", invalid="ignore"):
        naive = jittape.grad(lambda x: np.sum(np.log1p(np.exp(x))))(x)
    assert np.isnan(naive[2])
    tape = jittape.record(lambda x: np.sum(softplus(x)), np.zeros(3))
    np.testing.assert_array_equal(tape.gradient(x), [0.0, 0.5, 1.0])
    np.testing.assert_allclose(jittape.hessian(lambda x: np.sum(softplus(x)))(x),
                               np.diag([0.0, 0.25, 0.0]), atol=1e-300)


def test_clipping_differs_from_the_true_gradient_exactly_as_clipped():
    x = np.array([2.0, -3.0, 0.1])
    w = np.array([1.0, 2.0, -0.3])
    g = jittape.grad(lambda x: np.sum(clip_gradient(x, 0.5) * w))(x)
    np.testing.assert_array_equal(g, np.clip(w, -0.5, 0.5))  # the true gradient is w
    assert clip_gradient(x, 0.5) is x  # a plain call is the plain function


def test_implicit_root_against_finite_differences_of_the_root():
    th = np.array([1.5, 2.0])
    g = jittape.grad(cubic_root)(th)
    np.testing.assert_allclose(g, fd_gradient(cubic_root, th), rtol=1e-7)
    assert jittape.value_and_grad(cubic_root)(th)[0] == pytest.approx(cubic_root(th), 1e-14)


# --- forward mode ---------------------------------------------------------------------------
def test_jvp_of_a_custom_jvp_function_is_its_rule():
    x, v = np.array([-0.5, 0.3, 40.0]), np.array([1.0, -2.0, 0.5])
    out, tan = jittape.jvp(log1pexp, (x,), (v,))
    np.testing.assert_allclose(out, np.log1p(np.exp(x)), rtol=1e-15)
    np.testing.assert_allclose(tan, sigmoid(x) * v, rtol=1e-15)
    tape = jittape.record(log1pexp, x)
    np.testing.assert_allclose(tape.jvp(x * 2, tangents=v)[1], sigmoid(x * 2) * v, rtol=1e-14)
    np.testing.assert_allclose(jittape.jacobian(log1pexp, mode="forward")(x),
                               np.diag(sigmoid(x)), rtol=1e-14)
    np.testing.assert_allclose(tape.sparse_jacobian(x).toarray(), np.diag(sigmoid(x)))
    assert tape.trace_jvp(tangents=v).tangent == pytest.approx(sigmoid(x) * v, rel=1e-14)


def test_forward_mode_of_a_custom_vjp_function_raises_clearly():
    x = np.array([0.2, -0.1, 0.4])
    message = "softplus is a jittape.custom_vjp function: custom_vjp defines no forward-mode " \
        "rule; use grad/vjp, or custom_jvp"
    for call in (lambda: jittape.jvp(softplus, (x,), (x,)),
                 lambda: jittape.jacobian(softplus, mode="forward")(x),
                 lambda: jittape.record(softplus, x).trace_jvp(tangents=x)):
        with pytest.raises(NotDifferentiableError, match=re.escape(message)):
            call()
    # what needs no forward mode works: reverse-mode Jacobians, dense and sparse
    want = np.diag(sigmoid(x))
    np.testing.assert_allclose(jittape.jacobian(softplus)(x), want, rtol=1e-14)
    np.testing.assert_allclose(jittape.sparse_jacobian(softplus)(x).toarray(), want,
                               rtol=1e-14)
    out, pullback = jittape.vjp(softplus, x)
    np.testing.assert_allclose(pullback(np.ones(3))[0], sigmoid(x), rtol=1e-14)


# --- the generic checker ------------------------------------------------------------------
CHECKED = [  # the checker of tests/test_ops.py on custom functions of several shapes
    S("custom_vjp", softplus, (5,)), S("custom_vjp", softplus, ()),
    S("custom_vjp", lambda th: cubic_root(th) * th, (2,), lo=1.0, hi=2.0, guards=True),
    S("custom_vjp", lambda x: clip_gradient(x, 1e9) * x, (2, 3)),  # no clipping: true
    S("custom_jvp", log1pexp, (4,)), S("custom_jvp", lambda x: log1pexp(x[0]) * x, (3,)),
    S("custom_jvp", lambda x, y: log1pexp(x * y) + softplus(y), (3,), (3,)),
]


@pytest.mark.parametrize("spec", CHECKED, ids=[s.id for s in CHECKED])
def test_custom_functions_through_the_generic_checker(spec):
    test_ops.test_rule_against_central_differences(spec)


def test_checker_fails_on_a_wrong_custom_rule():
    @jittape.custom_vjp
    def sin(x):
        return np.sin(x)

    sin.defvjp(lambda x: (np.sin(x), x), lambda x, g: (g * np.cos(x) * 1.001,))
    with pytest.raises(AssertionError):
        test_ops.test_rule_against_central_differences(S("custom_vjp", sin, (3,)))


# --- arguments, structures, nesting --------------------------------------------------------
def test_several_and_structured_arguments_none_cotangents_and_nondiff_argnums():
    @jittape.custom_vjp
    def f(params, x, scale):
        return np.sum(params["w"] * x) * scale + params["b"]

    def fwd(params, x, scale):
        return f(params, x, scale), (params, x, scale)

    def bwd(res, g):
        params, x, scale = res
        return {"w": g * x * scale, "b": g}, None, None  # no cotangent for x

    f.defvjp(fwd, bwd)
    p = {"w": np.array([1.0, 2.0]), "b": 0.5}
    x = np.array([3.0, -1.0])
    gp, gx = jittape.grad(lambda p, x: f(p, x, 2.0) ** 2, argnums=(0, 1))(p, x)
    y = f(p, x, 2.0)
    np.testing.assert_allclose(gp["w"], 2 * y * x * 2.0)
    assert gp["b"] == pytest.approx(2 * y)
    np.testing.assert_array_equal(gx, [0.0, 0.0])

    # n is not differentiated: passed to the rule first, as in JAX
    power = jittape.custom_jvp(lambda n, x: x ** n, nondiff_argnums=(0,))
    power.defjvp(lambda n, primals, tangents: (primals[0] ** n,
                                               n * primals[0] ** (n - 1) * tangents[0]))
    x = np.array([0.5, 2.0])
    np.testing.assert_allclose(jittape.grad(lambda x: np.sum(power(3, x)))(x), 3 * x ** 2)
    np.testing.assert_allclose(jittape.hessian(lambda x: np.sum(power(3, x)))(x),
                               np.diag(6 * x))


def test_nested_custom_functions_and_loops_of_calls():
    # a custom_jvp inside a custom_vjp's bwd
    from jittape.custom.examples import nested_example as spec_nested
    x = np.array([0.3, -0.8, 1.2])
    np.testing.assert_allclose(jittape.grad(lambda x: np.sum(spec_nested(x)))(x), 4 * x ** 3)

    @jittape.custom_vjp
    def outer(x):
        return softplus(x) * 2.0  # a custom_vjp in the fwd ...

    outer.defvjp(lambda x: (outer(x), x), lambda x, g: (2.0 * g * sigmoid(x) +
                                                       0.0 * log1pexp(x),))  # ... and bwd
    f = lambda x: np.sum(outer(x) * x)  # noqa: E731
    np.testing.assert_allclose(jittape.grad(f)(x), fd_gradient(f, x), rtol=1e-7)
    np.testing.assert_allclose(jittape.hessian(f)(x), fd_hessian(f, x), rtol=1e-5, atol=1e-7)

    def loop(x):  # a custom function called per element, from Python
        s = 0.0
        for i in range(x.size):
            s = s + softplus(x[i]) * log1pexp(x[i - 1])
        return s
    tape = jittape.record(loop, x)
    for p in (x, x[::-1] * 0.7):
        np.testing.assert_allclose(tape.gradient(p), fd_gradient(loop, p), rtol=1e-7)
    np.testing.assert_allclose(tape.hessian(x), fd_hessian(loop, x), rtol=1e-5, atol=1e-7)


# --- what a rule may not do ----------------------------------------------------------------
def test_errors_at_record_time():
    x = np.array([0.5, 1.5])

    @jittape.custom_vjp
    def undefined(x):
        return x
    with pytest.raises(TypeError, match=r"undefined is a custom_vjp .*defvjp\(fwd, bwd\)"):
        jittape.grad(lambda x: np.sum(undefined(x)))(x)
    np.testing.assert_array_equal(undefined(x), x)  # a plain call needs no rule

    @jittape.custom_jvp
    def no_jvp(x):
        return x
    with pytest.raises(TypeError, match=r"no_jvp is a custom_jvp .*defjvp\(jvp\)"):
        jittape.grad(lambda x: np.sum(no_jvp(x)))(x)

    def with_rule(fwd, bwd):
        f = jittape.custom_vjp(lambda x: x * 1.0)
        f.defvjp(fwd, bwd)
        return lambda x: np.sum(f(x))

    cases = [
        (lambda x: x, lambda r, g: (g,), TypeError, "must return a pair"),
        (lambda x: (x * 1.0, x), lambda r, g: g, TypeError, "tuple of 1 cotangent"),
        (lambda x: (x * 1.0, x), lambda r, g: (g[0],), ValueError, r"shape \(\)"),
        (lambda x: (x * 1.0, x), lambda r, g: (g if r[0] > 0 else -g,),
         NotDifferentiableError, "control flow"),
    ]
    for fwd, bwd, error, match in cases:
        with pytest.raises(error, match=match):
            jittape.grad(with_rule(fwd, bwd))(x)

    def closure(x):
        y = x * 2.0
        f = jittape.custom_vjp(lambda z: z * y)  # reads y, an active value, without an arg
        f.defvjp(lambda z: (z * y, z), lambda z, g: (g * 2.0,))
        return np.sum(f(x))
    with pytest.raises(NotDifferentiableError, match="closure"):
        jittape.grad(closure)(x)

    @jittape.custom_jvp
    def affine(x):
        return x * 2.0
    affine.defjvp(lambda p, t: (p[0] * 2.0, p[0] * 0.0 + 1.0))  # not linear in the tangent
    with pytest.raises(NotDifferentiableError, match="linear"):
        jittape.jvp(affine, (x,), (x,))


# --- the tape: files, compiler, traces, generated sweeps -----------------------------------
def test_corrupted_custom_records_are_refused(tmp_path):
    path = tmp_path / "t.npz"
    jittape.record(lambda x: np.sum(softplus(x) * log1pexp(x)), np.ones(3)).save(path)
    with np.load(path) as z:
        d = {k: z[k] for k in z.files}
    begin = np.flatnonzero(tapefile.opcodes(d) == BY_NAME["custom_begin"].code)
    call = np.flatnonzero(tapefile.opcodes(d) == BY_NAME["custom_vjp"].code)
    changes = [
        dict(k=np.where(np.arange(d["k"].size) == begin[0], 0, d["k"]).astype(np.int32)),
        dict(k=np.where(np.arange(d["k"].size) == begin[0], d["k"][begin[0]] + 1,
                        d["k"]).astype(np.int32)),
        dict(b=np.where(np.arange(d["b"].size) == call[0], begin[1], d["b"]).astype(np.int32)),
        dict(a=np.where(np.arange(d["a"].size) == begin[0], 3, d["a"]).astype(np.int32)),
        dict(pool=d["pool"] + np.where(np.arange(d["pool"].size) == d["k"][call[0]] + 1, 5, 0)),
    ]
    for change in changes:
        data = dict(d, **change)
        np.savez(tmp_path / "bad.npz", **data)
        with pytest.raises(TapeFormatError):
            jittape.load(tmp_path / "bad.npz")


def test_compiler_refuses_and_the_tape_stays_interpreted():
    tape = jittape.record(f_softplus, np.ones(3))
    with pytest.raises(ValueError, match="custom derivative rule"):
        tape.compile()
    tf = jittape.taped(f_softplus, compile=True)
    for _ in range(3):
        tf.grad(np.ones(3))
    assert tf.stats.compilations == 0


def test_trace_and_graph_of_a_tape_with_rules():
    f = lambda x: np.sum(softplus(x) * log1pexp(x))  # noqa: E731
    x = np.array([0.2, -0.7])
    tape = jittape.record(f, x)
    trace = tape.trace_gradient(x * 3)
    np.testing.assert_allclose(trace.gradient, tape.gradient(x * 3), rtol=1e-15)
    text = str(trace)
    assert "custom_vjp softplus(v0)" in text and "custom_jvp log1pexp(v0)" in text
    assert "custom_slot" not in text  # the rules' records run in their call's step
    assert "custom_vjp softplus(v0)" in str(tape) and tape.to_dot().startswith("digraph")


def test_a_rule_adds_one_trivial_op_to_the_sweeps():
    """Regions and calls have no branch in the compiled sweeps (their rules run between
    them, jittape.sweeps.regions), nor has a slot: a tape with a custom rule compiles the sweeps of
    its other ops and custom_arg (a copy), and shares them with any superset's."""
    f = lambda x: np.sum(softplus(x))  # noqa: E731
    def plain(x):  # the same records without the rule: fwd's and bwd's ops inlined
        y = np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))
        return np.sum(y * 0.5 * (1.0 + np.tanh(0.5 * x)))
    x = np.array([0.5, -1.0])
    a, b = jittape.record(f, x).arrays, jittape.record(plain, x).arrays
    assert opsets.with_leaves(a.op.tolist()) == opsets.with_leaves(
        b.op.tolist()) | {BY_NAME["custom_arg"].code}
    src = sweep_source([OPS[c] for c in opsets.with_leaves(a.op.tolist())])
    assert "custom_vjp" not in src and "custom_slot" not in src
    assert {OPS[c].name for c in CUSTOM_CODES} == {
        "custom_arg", "custom_begin", "custom_slot", "custom_vjp", "custom_jvp"}


def test_readme_example_prints_what_the_readme_shows(capsys):
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme.split("## Custom derivative rules", 1)[1]
    code, shown = re.search(r"```python\n(.*?)```\s*```text\n(.*?)```", section, re.S).groups()
    with np.errstate(over="ignore", invalid="ignore"):
        exec(compile(code, "README.md", "exec"), {})
    assert capsys.readouterr().out == shown, "README.md's example is stale"


def test_call_records_with_a_bad_name_entry_are_refused(tmp_path):
    """jittape.optable.callpool.read, the check every call op's records pass at load: the name's
    length past the pool's end, a code point out of range."""
    path = tmp_path / "t.npz"
    jittape.record(lambda x: np.sum(softplus(x)), np.ones(3)).save(path)
    with np.load(path) as z:
        d = {k: z[k] for k in z.files}
    k = int(d["k"][np.flatnonzero(tapefile.opcodes(d) == BY_NAME["custom_vjp"].code)[0]])
    at = k + 2 + 2 * int(d["pool"][k])  # the name's length, then its code points
    for where, value, message in [(at, 10 ** 6, "pool offset out of range"),
                                  (at + 1, -1, "bad name")]:
        pool = d["pool"].copy()
        pool[where] = value
        np.savez(tmp_path / "bad.npz", **dict(d, pool=pool))
        with pytest.raises(TapeFormatError, match=message):
            jittape.load(tmp_path / "bad.npz")

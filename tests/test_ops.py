"""Every opcode's derivative rule against central differences, from one spec table.

Each spec names the opcode it exercises, a NumPy expression that uses it, the input shapes
(broadcasting and axis cases included) and the input domain. For every spec the test checks
that
  * the expression records the opcode it claims to test,
  * the primal recorded equals plain NumPy's result,
  * the reverse-mode gradient of ``sum(W * expr)`` (random W: the whole Jacobian is
    exercised) matches central differences,
  * the replayed tape (Numba forward + reverse sweep) gives the same value and gradient at
    a new point in the domain as recording there.
A meta-test checks that the op table, the kernels and the specs cover the same opcodes.
"""

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest

import scipy.special as sp

import jittape
from jittape.derivatives import jacobians
from jittape.sweeps import opsets
from jittape.sweeps import numpy_tier, tiers
from jittape.sweeps.codegen import branch, has_second_order
from jittape.ops import codes as K
from jittape.ops import BY_NAME, OPS, swept
from jittape.sweeps.regions import Run
from jittape.optable.recorded import vjp_of as recorded_rule
from jittape.testing import check_gradient, check_grads


# some specs build NaNs on purpose (np.isnan on log of negatives): NumPy's warning is expected
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")


@dataclass
class Spec:
    op: str  # opcode name in the op table
    fn: object  # f(*arrays) -> array or scalar
    shapes: tuple  # one shape per argument
    lo: float = -2.0  # domain of every input: uniform(lo, hi)
    hi: float = 2.0
    guards: bool = False  # True if the recorded control flow depends on the point
    hand: object = None  # (w, *args) -> gradient, for rules finite differences cannot see

    @property
    def id(self):
        return f"{self.op}:{getattr(self.fn, '__name__', '')}:{self.shapes}"


def S(op, fn, *shapes, **kw):
    return Spec(op, fn, shapes, **kw)


def _numpy_callable(op):
    f = op.numpy[0]
    return getattr(sp, f.rsplit(".", 1)[1]) if isinstance(f, str) else f


# every differentiable elementwise op of the table, from its own test spec (domain, shapes;
# an op that no NumPy callable maps to, as the parts of a complex function, names its own)
SPECS = []
for _op in OPS:
    if _op.kind in ("unary", "binary", "ternary") and (_op.numpy or _op.spec.fn) and \
            not _op.uses_c and _op.differentiable:
        for _shapes in _op.spec.shapes:
            SPECS.append(S(_op.name, _op.spec.function or _numpy_callable(_op), *_shapes,
                           lo=_op.spec.lo, hi=_op.spec.hi))

# structured ops whose table entry gives a test expression (stacks of matrices, ...), and
# custom rules' ops (regions and calls: custom functions of jittape.optable.rules.custom)
for _op in OPS:
    if _op.kind in ("structured", "region", "call") and _op.spec.fn is not None:
        for _shapes in _op.spec.shapes:
            SPECS.append(S(_op.name, _op.spec.function, *_shapes, lo=_op.spec.lo, hi=_op.spec.hi))

# piecewise constant: zero derivative (checked by hand, away from the jumps, where central
# differences agree)
for _name, _f in {"sign": np.sign, "floor": np.floor, "ceil": np.ceil, "rint": np.rint,
                  "trunc": np.trunc}.items():
    SPECS.append(S(_name, lambda x, _f=_f: _f(x * 3.3) * x, (5,), lo=0.05, hi=0.25,
                   hand=lambda w, x, _f=_f: w * _f(x * 3.3)))

SPECS += [
    S("gammaln", lambda x: sp.gammaln(x), (4,), lo=-2.9, hi=-2.1),  # reflection side
    S("digamma", lambda x: sp.digamma(x), (4,), lo=-2.9, hi=-2.1),
    S("log_ndtr", lambda x: sp.log_ndtr(x), (3,), lo=-30, hi=-21),  # asymptotic branch
    S("rint", lambda x: np.round(x * 7.0, 1) * x, (4,), lo=0.11, hi=0.12,
      hand=lambda w, x: w * np.round(x * 7.0, 1)),
    S("logaddexp", np.logaddexp, (4,), (4,)), S("logaddexp", np.logaddexp, (2, 3), ()),
    S("logaddexp2", np.logaddexp2, (4,), (4,)),
    S("hypot", np.hypot, (4,), (4,), lo=0.2), S("hypot", lambda x: np.hypot(x, 2.0), ()),
    S("fmax", np.fmax, (5,), (5,)), S("fmin", np.fmin, (5,), (5,)),
    S("fmax", lambda x: np.fmax(x, np.array([np.nan, 0.1, np.nan])), (3,)),
    S("xlogy", sp.xlogy, (4,), (4,), lo=0.2), S("xlogy", lambda x: sp.xlogy(x, 3.0), (3,)),
    S("cumsum", np.cumsum, (5,)), S("cumsum", lambda x: np.cumsum(x, axis=0), (3, 2)),
    S("cumsum", lambda x: x.cumsum(axis=-1), (2, 4)) if hasattr(jittape.numpy.active.Active,
                                                                "cumsum") else
    S("cumsum", lambda x: np.cumsum(x, axis=-1), (2, 4)),
    S("cumprod", np.cumprod, (5,), lo=0.5), S("cumprod", lambda x: np.cumprod(x, axis=1),
                                               (2, 3)),
    S("cumprod", lambda x: np.cumprod(x * np.array([1.0, 0.0, 1.0, 1.0])), (4,)),
    S("sort", np.sort, (6,)), S("sort", lambda x: np.sort(x, axis=0), (4, 3)),
    S("sort", lambda x: np.sort(x, axis=None), (2, 3)),
    # interp: queries, values and knots (increasing: a cumulative sum of positive steps)
    S("interp", lambda x: np.interp(x * 2.0, [-3.0, -1.0, 0.5, 2.0, 3.5], [1.0, -2.0, 0.5,
                                                                          3.0, 1.0]), (7,)),
    S("interp", lambda x, d, f: np.interp(x, np.cumsum(d) - 1.5, f), (4,), (5,), (5,),
      lo=0.05, hi=1.0),
    S("interp", lambda x, f: np.interp(x, [0.0, 1.0], f, left=-1.0, right=f[0] * 2), (2, 3),
      (2,), lo=-0.5, hi=1.5),
    S("correlate", np.correlate, (6,), (3,)), S("correlate", np.convolve, (3,), (5,)),
    S("correlate", lambda x: np.correlate(x, [1.0, -2.0, 0.5], "same"), (4,)),
    S("correlate", lambda x, y: np.convolve(x, y, "same"), (6,), (4,)),
    S("inv", lambda x: np.linalg.inv(x + 3 * np.eye(3)), (3, 3)),
    S("solve", lambda a, b: np.linalg.solve(a + 3 * np.eye(3), b), (3, 3), (3,)),
    S("solve", lambda a, b: np.linalg.solve(a + 3 * np.eye(3), b), (3, 3), (3, 2)),
    S("slogdet", lambda x: np.linalg.slogdet(x + 3 * np.eye(3))[1], (3, 3)),
    S("slogdet", lambda x: np.linalg.det(x), (3, 3)),
    # symmetric inputs are built inside f, so central differences see the same function
    S("cholesky", lambda x: np.linalg.cholesky(x @ x.T + np.eye(3)), (3, 3)),
    S("eigh", lambda x: np.linalg.eigh(x + x.T)[0], (3, 3)),
    S("eigh", lambda x: np.linalg.eigh(x + x.T + np.diag([0.0, 3.0, 6.0]))[1] ** 2, (3, 3)),
    S("eigh", lambda x: np.linalg.eigvalsh(x @ x.T), (2, 2)),
    S("qr", lambda x: np.linalg.qr(x, "r"), (2, 4, 3)), S("qr", lambda x: np.linalg.qr(x, "r"),
                                                          (3, 5)),
    S("qr", lambda x: np.linalg.qr(x, "complete")[0][:, :3] * np.linalg.qr(x)[1][0], (5, 3)),
    S("qr", lambda x: np.linalg.qr(x, "complete")[1], (4, 2)),
    S("svd", lambda x: np.linalg.svd(x, compute_uv=False), (2, 4, 3)),
    S("svd", lambda x: np.linalg.svdvals(x), (3, 5)),
    S("svd", lambda x: np.linalg.svd(x)[0][:, :3] * np.linalg.svd(x)[1], (5, 3)),
    S("svd", lambda x: np.linalg.svd(x)[2][:2] ** 2, (2, 4)),
    S("svd", lambda x: np.linalg.norm(x, "nuc") + np.linalg.norm(x, 2), (3, 4)),
    S("matmul", np.matmul, (2, 2, 3), (2, 3, 2)), S("matmul", np.matmul, (2, 2, 3), (3,)),
    S("matmul", lambda x: np.ones((4, 1, 2, 3)) @ x, (2, 3, 2)),
    S("fmod", np.fmod, (5,), (5,), lo=0.3), S("fmod", lambda x: np.fmod(x * 3, 1.3), (4,)),
    S("remainder", np.remainder, (5,), (5,), lo=0.3),
    S("remainder", lambda x, y: (x * 3) % (y - 3), (4,), (4,), lo=0.3, hi=1.0),
    S("copysign", np.copysign, (5,), (5,)), S("copysign", lambda x: np.copysign(2.0, x) * x,
                                              (4,)),
    S("floordiv", lambda x, y: (x * 3 // y) * x, (4,), (4,), lo=0.3,
      hand=lambda w, x, y: w * (x * 3 // y)),
    # compositions of comparisons and where: exact primals, replay anywhere
    S("ne", lambda x: np.where(np.isnan(np.log(x - 0.5)), 0.0, x), (6,), lo=0.1, hi=1.0),
    S("lt", lambda x: np.where(np.isfinite(1.0 / (x - 0.5)), x, 0.0), (4,)),
    S("lt", lambda x: np.where(np.signbit(x), x ** 2, x), (6,)),
    S("gt", lambda x: np.heaviside(x, 0.5) * x, (6,)),
    S("mul", lambda x, y: np.vecdot(x, y), (2, 3), (2, 3)),
    S("matmul", lambda x, y: np.matvec(x, y), (2, 3), (3,)),
    S("input", lambda x: x, (3,)),
    S("const", lambda x: x * np.array([1.0, -2.0, 3.0]), (3,)),
    # d/dx sum(w * stop_gradient(x) * x) = w * x: the first factor is a constant
    S("stopgrad", lambda x: jittape.stop_gradient(x) * x, (4,), hand=lambda w, x: w * x),
    # scalar constants kept in the c immediate, both sides, scalar and array operands
    S("addc", lambda x: x + 1.5, (3,)), S("addc", lambda x: 2 + x, ()),
    S("addc", lambda x: x - 0.5, (2, 2)),
    S("mulc", lambda x: 3 * x, (3,)), S("mulc", lambda x: x * -0.5, ()),
    S("divc", lambda x: x / 4.0, (3,)), S("divc", lambda x: x / 3, ()),
    S("rsubc", lambda x: 1 - x, (3,)), S("rsubc", lambda x: 2.5 - x, ()),
    S("rdivc", lambda x: 2.0 / x, (3,), lo=0.5, hi=2), S("rdivc", lambda x: 1 / x, (), lo=0.5),
    S("rdivc", lambda x: 0.0 / x + x, (3,), lo=0.5),  # c = 0: the other form of the partial
    S("powc", lambda x: x ** 3, (3,)), S("powc", lambda x: x ** 2.5, (), lo=0.2),
    S("powc", lambda x: x ** -1.5, (3,), lo=0.3), S("powc", lambda x: np.power(x, 0), (2,)),
    S("rpowc", lambda x: 2.0 ** x, (3,)), S("rpowc", lambda x: 0.5 ** x, ()),
    # binary, including NumPy broadcasting between the operands
    S("add", np.add, (3,), (3,)), S("add", np.add, (2, 3), (3,)), S("add", np.add, (), ()),
    S("sub", np.subtract, (3, 1), (1, 4)), S("sub", np.subtract, (), ()),
    S("sub", np.subtract, (4,), ()),
    S("mul", np.multiply, (3,), (3,)), S("mul", np.multiply, (2, 3), (2, 1)),
    S("mul", np.multiply, (), ()), S("mul", lambda x: x * x, (3,)),
    S("mul", lambda x: x * np.array([[1.0], [2.0]]), (3,)),
    S("div", np.divide, (3,), (3,), lo=0.5), S("div", np.divide, (2, 3), (3,), lo=0.5),
    S("div", np.divide, (), (), lo=0.5),
    S("pow", np.power, (3,), (3,), lo=0.3), S("pow", np.power, (), (), lo=0.3),
    S("pow", lambda x: np.array([1.5, 2.0, 0.7]) ** x, (3,)),
    S("arctan2", np.arctan2, (4,), (4,)), S("arctan2", np.arctan2, (), (), lo=0.2),
    S("maximum", np.maximum, (5,), (5,)), S("maximum", np.maximum, (2, 3), ()),
    S("maximum", lambda x: np.maximum(x, 0.0), (6,)),
    S("minimum", np.minimum, (5,), (5,)), S("minimum", np.minimum, (), ()),
    # comparisons: no derivative of their own; used as data they select
    S("lt", lambda x: (x < 0.3) * x, (6,)), S("le", lambda x: (x <= 0.3) * x ** 2, (6,)),
    S("gt", lambda x, y: (x > y) * x * y, (5,), (5,)), S("ge", lambda x: (x >= 0) * x, ()),
    S("eq", lambda x: (x == x) * x, (3,)), S("ne", lambda x: (x != 1.0) * x, (3,)),
    S("where", lambda x: np.where(x > 0, x ** 2, -x), (6,)),
    S("where", lambda x, y: np.where(x < y, x, y * 2), (2, 3), (3,)),
    S("where", lambda x: np.where(x > 0, x, 0.0), (4,)),
    # indexing: SLICE (contiguous), STRIDED (views: steps, columns, transposes, flips,
    # broadcasting), GATHER (advanced indexing: index arrays, masks)
    S("slice", lambda x: x[1:4], (6,)), S("slice", lambda x: x[2], (5,)),
    S("slice", lambda x: x[-1] * x[0], (5,)), S("slice", lambda x: x[1], (3, 4)),
    S("slice", lambda x: x[1, 2], (3, 4)), S("slice", lambda x: x[1:] - x[:-1], (6,)),
    S("slice", lambda x: x[1:3, :], (4, 3)), S("slice", lambda x: x[1, 1:, :], (2, 3, 4)),
    S("gather", lambda x: x[[0, 2, 2]], (4,)), S("gather", lambda x: x[:, [2, 0]], (3, 4)),
    S("gather", lambda x: x[np.array([True, False, True, True])], (4,)),
    S("gather", lambda x: np.sum(x[::-1][x > 0] ** 2), (6,), guards=True),
    S("strided", lambda x: x[::2], (7,)), S("strided", lambda x: x[::-3], (8,)),
    S("strided", lambda x: x[:, 1], (3, 4)), S("strided", lambda x: x[1:, ::2], (4, 5)),
    S("strided", lambda x: x[::-2, 3:0:-2], (5, 4)),
    S("strided", lambda x: np.sin(x[1:, ::2]) * x[:-1, 1::2], (3, 4)),
    S("strided", lambda x: x[:, ::2][1:, ::-1], (3, 6)),
    S("strided", lambda x: x[1, ::2, :] * x[::2, 1, ::-1], (3, 3, 3)),
    S("strided", lambda x: x.T, (2, 3)), S("strided", lambda x: np.transpose(x), (3, 2)),
    S("strided", lambda x: np.transpose(x, (2, 0, 1)) ** 2, (2, 3, 2)),
    S("strided", lambda x: np.broadcast_to(x, (3, 4)), (4,)),
    S("strided", lambda x: np.broadcast_to(x, (2, 3, 4)) * np.arange(24.0).reshape(2, 3, 4),
      (3, 1)),
    S("strided", lambda x: x[None, ::-1, None], (3,)),
    S("strided", lambda x: x[..., 0], (2, 3)),
    S("strided", lambda x: x.reshape(2, 3).T.ravel(), (6,)),
    S("strided", lambda x: np.flip(x) * np.rot90(x), (3, 3)),
    S("strided", lambda x: np.diagonal(x) * np.fliplr(x)[0], (3, 3)),
    S("concat", lambda x, y: np.concatenate([x, y]), (3,), (2,)),
    S("concat", lambda x, y: np.concatenate([x, y], axis=1), (2, 3), (2, 1)),
    S("concat", lambda x: np.concatenate([x, np.ones(2), x * 2]), (3,)),
    S("concat", lambda x, y: np.stack([x, y]), (3,), (3,)),
    S("concat", lambda x, y: np.stack([x, y], axis=1), (2, 2), (2, 2)),
    # reductions: all elements, one axis, keepdims, axis tuples
    S("sum", np.sum, (5,)), S("sum", lambda x: np.sum(x, axis=0), (3, 4)),
    S("sum", lambda x: x.sum(axis=1, keepdims=True), (3, 4)),
    S("sum", lambda x: np.sum(x, axis=(0, 2)), (2, 3, 4)),
    S("sum", lambda x: np.mean(x, axis=-1), (3, 4)), S("sum", np.mean, (2, 5)),
    S("prod", np.prod, (5,), lo=0.5), S("prod", lambda x: np.prod(x, axis=0), (3, 4)),
    S("prod", lambda x: np.prod(x * (x > 0.5), axis=1), (3, 4)),
    S("max", np.max, (6,)), S("max", lambda x: np.max(x, axis=1, keepdims=True), (3, 4)),
    S("max", lambda x: np.amax(x, axis=0), (3, 4)),
    S("min", np.min, (6,)), S("min", lambda x: x.min(axis=0), (3, 4)),
    # linear algebra: 1-D and 2-D operands, either side constant
    S("matmul", np.dot, (4,), (4,)), S("matmul", np.matmul, (2, 3), (3,)),
    S("matmul", lambda x, y: x @ y, (3,), (3, 2)),
    S("matmul", lambda x, y: x @ y, (2, 3), (3, 4)),
    S("matmul", lambda x: np.arange(6.0).reshape(2, 3) @ x, (3, 2)),
    S("matmul", lambda x: x.dot(np.ones((3, 2))), (2, 3)),
    S("matmul", lambda x: x @ x.T, (3, 2)),
    # control flow on an active comparison: a GUARD record
    S("guard", lambda x: x[0] ** 2 if x[0] > 0 else -x[0], (3,), guards=True),
    S("guard", lambda x: x * 2 if x.sum() else x, (3,), guards=True),
    # integer results used as indices: recorded and guarded
    S("argmax", lambda x: x[np.argmax(x)] * x, (5,), guards=True),
    S("argmax", lambda x: x[np.arange(3), np.argmax(x, axis=1)], (3, 4), guards=True),
    S("argmin", lambda x: x[x.argmin()] ** 2, (5,), guards=True),
]


def _point(spec, rng):
    return tuple(rng.uniform(spec.lo, spec.hi, s) if s else float(rng.uniform(spec.lo, spec.hi))
                 for s in spec.shapes)


def _objective(spec, rng):
    """``f(*args) = sum(W * spec.fn(*args))`` with random W of the output's shape."""
    out = spec.fn(*_point(spec, np.random.default_rng(99)))
    w = rng.standard_normal(np.shape(out))

    def f(*args):
        return np.sum(spec.fn(*args) * w)
    f.w = w
    return f


def _check_tangent(spec, f, args, nums):
    """The tangent sweep: JVP against the gradient (<grad, v>, exact but for rounding) and,
    for the raw output, against central differences along v."""
    rng = np.random.default_rng(7)
    v = tuple(rng.standard_normal(np.shape(a)) if np.ndim(a) else float(rng.standard_normal())
              for a in args)
    if not jacobians.forward_mode(jittape.record(f, *args, argnums=nums).arrays):
        with pytest.raises(jittape.NotDifferentiableError, match="no forward-mode rule"):
            jittape.jvp(f, args, v)  # a custom_vjp: JAX's behaviour
        return
    _, jv = jittape.jvp(f, args, v)
    grads = jittape.grad(f, nums)(*args)
    dot = sum(float(np.sum(np.asarray(g) * vi)) for g, vi in zip(grads, v))
    terms = sum(float(np.sum(np.abs(np.asarray(g) * vi))) for g, vi in zip(grads, v))
    assert abs(jv - dot) <= 1e-12 + 1e-10 * terms, f"{spec.id}: jvp {jv} vs <grad, v> {dot}"
    if spec.hand is None:  # array-valued output: every tangent element against FD
        h = 1e-6
        out, tan = jittape.jvp(spec.fn, args, v)
        plus = spec.fn(*(a + h * vi for a, vi in zip(args, v)))
        minus = spec.fn(*(a - h * vi for a, vi in zip(args, v)))
        fd = (np.asarray(plus) - np.asarray(minus)) / (2 * h)
        np.testing.assert_allclose(tan, fd, rtol=1e-6, atol=1e-6 * (1 + np.max(np.abs(fd))))


def _tiers(t):
    """The tape's sweeps over its records (jittape.sweeps.regions.Run), compiled and interpreted
    (jittape.sweeps.tiers: the same generated source run by CPython while Numba compiles), or None
    for the interpreted ones if its rules call LAPACK drivers (compiled only)."""
    compiled = opsets.for_tape(t)
    if tiers.interpreted(compiled.codes, "forward_sweep") is None:
        return Run(t, compiled), None

    def interpreted(what):
        def call(*args):
            ok, out = tiers.run(compiled.codes, what, args)
            assert ok, what
            return out
        return call
    return Run(t, compiled), Run(t, SimpleNamespace(
        **{what: interpreted(what) for what in opsets.FUNCTIONS}))


def _check_interpreted_tier(spec, tape):
    """The interpreted tier against the compiled sweeps: forward, reverse and tangent."""
    t = tape.arrays
    compiled, interpreted = _tiers(t)
    if interpreted is None:
        return
    v1, v2 = t.val.copy(), t.val.copy()
    assert interpreted.forward(v2) == compiled.forward(v1), spec.id
    np.testing.assert_allclose(v2, v1, rtol=1e-13, atol=1e-300, err_msg=spec.id)
    seed = np.zeros_like(v1)
    seed[t.off[tape.out_id]:t.off[tape.out_id + 1]] = 1.0
    a1, a2 = seed.copy(), seed.copy()
    compiled.reverse(v1, a1, 0, tape.out_id + 1)
    interpreted.reverse(v1, a2, 0, tape.out_id + 1)
    np.testing.assert_allclose(a2, a1, rtol=1e-12, atol=1e-14, err_msg=spec.id)
    d1 = np.random.default_rng(3).standard_normal(v1.shape)
    d2 = d1.copy()
    compiled.tangent(v1, d1)
    interpreted.tangent(v1, d2)
    np.testing.assert_allclose(d2, d1, rtol=1e-12, atol=1e-14, err_msg=spec.id)


def _check_numpy_tier(spec, tape):
    """The NumPy reverse sweep (jittape.sweeps.numpy_tier, tier 0 of large array tapes)
    against the compiled one, on the adjoints of every record but the constants (whose
    adjoints it does not form)."""
    t = tape.arrays
    if not numpy_tier.usable(set(t.op.tolist()), t.columns):
        assert any(OPS[c].kind in ("region", "call") or recorded_rule(c) is None
                   for c in set(t.op.tolist())), spec.id
        return
    seed = np.zeros_like(t.val)
    seed[t.off[tape.out_id]:t.off[tape.out_id + 1]] = 1.0
    a1, a2 = seed.copy(), seed.copy()
    Run(t, opsets.for_tape(t)).reverse(t.val, a1, 0, tape.out_id + 1)
    numpy_tier.reverse_sweep(*t.columns, t.val, a2, 0, tape.out_id + 1)
    live = np.repeat(t.op != K.CONST, np.diff(t.off))
    np.testing.assert_allclose(a2[live], a1[live], rtol=1e-11,
                               atol=1e-13 * (1 + np.max(np.abs(a1[live]))), err_msg=spec.id)


def _check_hvp(spec, f, args, nums, tape):
    """Second order: H v against central differences of the gradient along v, the
    interpreted tier against the compiled one; a tape with an op that has no second-order
    rule raises the clear error instead."""
    v = tuple(np.random.default_rng(11).standard_normal(np.shape(a)) for a in args)
    rules = all(has_second_order(OPS[c]) for c in set(tape.arrays.op.tolist()))
    if not rules:
        with pytest.raises(jittape.NotDifferentiableError, match="second-order"):
            jittape.hvp(f, nums)(*args, v)
        return
    hv = jittape.hvp(f, nums)(*args, v)
    h = 1e-5
    gp = jittape.grad(f, nums)(*(a + h * vi for a, vi in zip(args, v)))
    gm = jittape.grad(f, nums)(*(a - h * vi for a, vi in zip(args, v)))
    for got, p, m in zip(hv, gp, gm) if spec.hand is None else ():  # else FD cannot see it
        fd = (np.asarray(p) - np.asarray(m)) / (2 * h)
        np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-5 * (1 + np.max(np.abs(fd))),
                                   err_msg=spec.id)
    t = tape.arrays
    val = t.val
    dot = jacobians.tangent_buffer(tape, v)
    compiled, interpreted = _tiers(t)
    compiled.tangent(val, dot)
    bufs = []
    if interpreted is None:  # LAPACK: compiled only
        return
    for run in (compiled, interpreted):
        adj, adjdot = np.zeros_like(val), np.zeros_like(val)
        adj[t.off[tape.out_id]:t.off[tape.out_id + 1]] = 1.0
        assert run.hvp(val, dot, adj, adjdot, 0, tape.out_id + 1) == -1, spec.id
        bufs.append(adjdot)
    np.testing.assert_allclose(bufs[1], bufs[0], rtol=1e-12, atol=1e-13, err_msg=spec.id)


def _vdot(gs, vs):
    return sum(np.sum(g * v) for g, v in zip(gs, vs))


_THIRD_CHECKED = set()


def _check_recorded(spec, f, args, nums, tape):
    """The recorded reverse rule (nesting to any order): ``h(x) = <grad f(x), v>`` with
    the inner gradient recorded on h's tape has the value of the compiled gradient, h's
    gradient is the forward-over-reverse ``H v``, and the gradient of ``<grad h(x), v>``
    (third derivatives) matches central differences of that function along ``u``."""
    codes = set(tape.arrays.op.tolist())
    if not all(has_second_order(OPS[c]) for c in codes):
        return
    rng = np.random.default_rng(13)
    v = tuple(rng.standard_normal(np.shape(a)) for a in args)
    u = tuple(rng.standard_normal(np.shape(a)) for a in args)
    h = lambda *z: _vdot(jittape.grad(f, nums)(*z), v)  # noqa: E731
    recorded = all(recorded_rule(c) is not None for c in codes)
    if recorded:  # the recorded route, not the second-order call record
        assert K.NESTED_VJP not in jittape.record(h, *args, argnums=nums).arrays.op, spec.id
    np.testing.assert_allclose(h(*args), _vdot(jittape.grad(f, nums)(*args), v),
                               rtol=1e-12, atol=1e-12, err_msg=spec.id)
    np.testing.assert_allclose(_vdot(jittape.grad(h, nums)(*args), u),
                               _vdot(jittape.hvp(f, nums)(*args, v), u), rtol=1e-9,
                               atol=1e-10, err_msg=spec.id)
    if not recorded or spec.hand is not None or spec.op in _THIRD_CHECKED:
        return
    _THIRD_CHECKED.add(spec.op)  # third order: one spec per op (the suite's time)
    k = lambda *z: _vdot(jittape.grad(h, nums)(*z), v)  # noqa: E731
    third = _vdot(jittape.grad(k, nums)(*args), u)
    step = 1e-4
    fd = (k(*(a + step * d for a, d in zip(args, u))) -
          k(*(a - step * d for a, d in zip(args, u)))) / (2 * step)
    assert third == pytest.approx(fd, rel=1e-4, abs=1e-4 * (1 + abs(fd))), spec.id


def _leaves(x):
    """The floats of nested tuples of floats and arrays, as one flat array."""
    if isinstance(x, (tuple, list)):
        return np.concatenate([_leaves(e) for e in x]) if x else np.zeros(0)
    return np.ravel(np.asarray(x, dtype=float))


def _check_optimized(spec, tape, points):
    """The optimized tape (jittape.tape.optimize) against the recorded one at ``points``:
    values equal, gradients, JVPs and HVPs within reassociation, the same guard failures;
    likewise with absolute zeros folded (the points are finite: what the folding changes is
    IEEE's nan * 0 only)."""
    for opt in (tape.optimize(), tape.optimize(absolute_zero=True)):
        _check_optimized_at(spec, tape, opt, points)


def _check_optimized_at(spec, tape, opt, points):
    for args in points:
        try:
            want = tape.value_and_gradient(*args)
        except jittape.GuardFailure:
            with pytest.raises(jittape.GuardFailure):
                opt.value_and_gradient(*args)
            continue
        got = opt.value_and_gradient(*args)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-14, atol=0, err_msg=spec.id)
        for a, b in zip(np.atleast_1d(got[1]) if len(args) == 1 else got[1],
                        np.atleast_1d(want[1]) if len(args) == 1 else want[1]):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14, err_msg=spec.id)
        v = tuple(np.ones(np.shape(a)) if np.ndim(a) else 1.0 for a in args)
        v = v[0] if tape.single else v
        for method, kw in (("jvp", "tangents"), ("hvp", "v")):
            try:
                want = getattr(tape, method)(*args, **{kw: v})
            except (jittape.NotDifferentiableError, NotImplementedError):
                continue  # (that mode has no rule for the op: test_rule checks the error)
            got = getattr(opt, method)(*args, **{kw: v})
            np.testing.assert_allclose(_leaves(got), _leaves(want), rtol=1e-13, atol=1e-13,
                                       err_msg=spec.id)


@pytest.mark.parametrize("spec", SPECS, ids=[s.id for s in SPECS])
def test_rule_against_central_differences(spec):
    rng = np.random.default_rng(0)
    args = _point(spec, rng)
    f = _objective(spec, rng)
    nums = tuple(range(len(args)))

    tape = jittape.record(f, *args, argnums=nums)
    codes = set(tape.arrays.op.tolist())
    assert BY_NAME[spec.op].code in codes, f"{spec.id} does not record {spec.op}"

    value, _ = jittape.value_and_grad(f, nums)(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12, atol=1e-12)
    if spec.hand is None:
        check_grads(f, args, nums)
    else:
        np.testing.assert_allclose(jittape.grad(f)(*args), spec.hand(f.w, *args), rtol=1e-12)
    _check_tangent(spec, f, args, nums)
    _check_interpreted_tier(spec, tape)
    _check_numpy_tier(spec, tape)
    _check_hvp(spec, f, args, nums, tape)
    _check_recorded(spec, f, args, nums, tape)
    _check_optimized(spec, tape, [args, _point(spec, np.random.default_rng(1))])

    # replay at a new point: forward and reverse kernels against recording there
    new = _point(spec, np.random.default_rng(1))
    try:
        v2, g2 = tape.value_and_gradient(*new)
    except jittape.GuardFailure:
        assert spec.guards, f"{spec.id}: unexpected guard failure"
        return
    v1, g1 = jittape.value_and_grad(f, nums)(*new)
    np.testing.assert_allclose(v2, v1, rtol=1e-12, atol=1e-12)
    for a, b in zip(g2, g1):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_table_sweeps_and_specs_cover_the_same_ops():
    table = {s.name for s in OPS}
    specs = {s.op for s in SPECS}
    assert table == specs, f"no spec for {table - specs}; unknown in specs {specs - table}"
    assert [s.code for s in OPS] == list(range(len(OPS)))
    # every swept op has a forward branch, a differentiable one reverse and tangent branches;
    # the others (leaves, region markers, calls, slots) have none: their rules are Python
    for op in OPS:
        sweeps = ("forward", "reverse", "tangent") if op.differentiable else ("forward",)
        for sweep in sweeps:
            if swept(op):
                assert branch(op, sweep, 1), f"{op.name} has no {sweep} branch"
            else:
                assert branch(op, sweep, 1) is None, f"{op.name} has a {sweep} branch"
    assert {op.kind for op in OPS if not swept(op)} == {"leaf", "region", "call", "structured"}


def test_checker_fails_on_a_wrong_rule():
    f = lambda x: np.sum(np.sin(x) * x)  # noqa: E731
    right = lambda x: np.cos(x) * x + np.sin(x)  # noqa: E731
    x = np.linspace(0.1, 1.0, 5)
    check_gradient(f, right, (x,))  # the correct rule passes
    with pytest.raises(AssertionError, match="gradient check failed"):
        check_gradient(f, lambda x: right(x) * 2.001 / 2.0, (x,))  # 0.05 % off
    with pytest.raises(AssertionError):
        check_gradient(f, lambda x: np.cos(x) * x, (x,))  # a term dropped


def test_checker_catches_a_wrong_rule_inside_a_tape(monkeypatch):
    """np.sin recorded with cos's opcode (so cos's derivative rule) must be caught."""
    import jittape.numpy.active as A
    x = np.linspace(0.1, 1.0, 5)
    wrong = lambda v: A.new_active(A.Active, v._t, K.COS, v._i, -1, 0, 0.0, np.sin(v._v))  # noqa
    monkeypatch.setitem(jittape.numpy.dispatch.UFUNCS, np.sin, wrong)
    with pytest.raises(AssertionError):
        check_grads(lambda x: np.sum(np.sin(x)), (x,))


def test_broadcast_adjoint_sums_over_broadcast_axes():
    x = np.array([1.0, 2.0, 3.0])
    g = jittape.grad(lambda x: np.sum(np.ones((4, 3)) * x))(x)
    np.testing.assert_array_equal(g, [4.0, 4.0, 4.0])


def test_max_ties_share_the_adjoint():
    g = jittape.grad(lambda x: np.max(x))(np.array([1.0, 3.0, 3.0]))
    np.testing.assert_array_equal(g, [0.0, 0.5, 0.5])


def test_prod_with_a_zero_factor():
    g = jittape.grad(np.prod)(np.array([2.0, 0.0, 5.0]))
    np.testing.assert_array_equal(g, [0.0, 10.0, 0.0])

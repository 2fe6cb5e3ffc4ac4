"""The op table is the single source of truth: an op added through the table alone gets its
value, gradient, replay, tangent, compiled sweeps and `python -m jittape ops` line."""

import contextlib
import io

import numpy as np
import pytest

import jittape
from jittape.optable import table as ops
from jittape.__main__ import main
from jittape.sweeps.codegen import sweep_source
from jittape.optable.entry import UNARY, elementwise

# a NumPy ufunc jittape knows nothing about until the toy op maps it
cube = np.frompyfunc(lambda x: x ** 3, 1, 1)


@pytest.fixture
def toy_op():
    op = ops.register(elementwise("cube", UNARY, [cube], "x * x * x", "3.0 * x * x",
                                  "z = x^3; xbar += zbar * 3 x^2", scalar=lambda x: x ** 3))
    yield op
    jittape.wait_compiled()  # a background compile of a toy-op set would outlive the op
    ops.OPS.remove(op)  # leave the table as it was for the other tests
    del ops.BY_NAME["cube"], ops.UFUNC_OPCODES[cube], jittape.numpy.dispatch.UFUNCS[cube]
    delattr(ops.codes, "CUBE")
    # forget the sweeps compiled for op sets with the toy op: its opcode may be reused
    import jittape.sweeps.opsets as S
    for table in (S.LOADED, S._MODULES):
        for codes in [c for c in table if op.code in c]:
            del table[codes]
    for table in (S.LOADED, S._BY_OPCODES):
        for key in [k for k, v in table.items() if op.code in v.codes]:
            del table[key]


def f(x):
    return np.sum(cube(x) * np.sin(x)) + cube(x[0])


def test_a_toy_op_through_the_table_alone(toy_op):
    x = np.linspace(0.2, 1.1, 5)
    exact = lambda x: 3 * x ** 2 * np.sin(x) + x ** 3 * np.cos(x)  # noqa: E731
    want = exact(x)
    want[0] += 3 * x[0] ** 2
    value, g = jittape.value_and_grad(f)(x)
    assert value == pytest.approx(np.sum(x ** 3 * np.sin(x)) + x[0] ** 3, rel=1e-14)
    np.testing.assert_allclose(g, want, rtol=1e-13)
    tape = jittape.record(f, x)
    assert toy_op.code in tape.arrays.op
    x2 = x[::-1].copy()
    want2 = exact(x2)
    want2[0] += 3 * x2[0] ** 2
    np.testing.assert_allclose(tape.gradient(x2), want2, rtol=1e-13)  # forward + reverse
    v = np.ones(5)
    _, jv = tape.jvp(x2, tangents=v)  # tangent sweep
    assert jv == pytest.approx(np.sum(want2 * v), rel=1e-13)
    assert "def tangent_sweep" in sweep_source([toy_op, ops.BY_NAME["const"]])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["ops"]) == 0
    assert "cube" in out.getvalue() and "3 x^2" in out.getvalue()


def test_a_toy_op_in_a_compiled_tape(toy_op):
    # the tape compiler reads which ops fuse from the table when it compiles, not at import
    x = np.linspace(0.2, 1.1, 5)
    tape = jittape.record(f, x)
    tape.compile()
    x2 = x[::-1].copy()
    want = 3 * x2 ** 2 * np.sin(x2) + x2 ** 3 * np.cos(x2)
    want[0] += 3 * x2[0] ** 2
    np.testing.assert_allclose(tape.gradient(x2), want, rtol=1e-13)
    assert "f_cube" in jittape.compiler.kernel.kernel_source(tape)

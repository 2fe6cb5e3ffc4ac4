"""Array tapes at memory speed: reused replay buffers, BLAS-sized products, constants
without adjoint slots. The results must be those of fresh buffers and plain loops."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import jittape
from jittape.compiler import kernel
from jittape.optable.rules.matmul import BLAS_MIN

RNG = np.random.default_rng(12)
A = RNG.standard_normal((300, 40))  # a data matrix: 12,000 constants
B = RNG.standard_normal(300)


def objective(w):
    z = A @ w
    return np.mean(np.logaddexp(0.0, -B * z)) + 0.1 * np.sum(w[1:] * w[:-1]) + w @ w


def objective_grad(w):
    z = A @ w
    s = -B / (1.0 + np.exp(B * z)) / A.shape[0]
    g = A.T @ s + 2.0 * w
    g[1:] += 0.1 * w[:-1]
    g[:-1] += 0.1 * w[1:]
    return g


def _tapes(f, x):
    interpreted = jittape.record(f, x)
    interpreted.auto_compile = False  # (a hot tape would load its kernel from the cache)
    return {"interpreted": interpreted, "compiled": jittape.record(f, x).compile()}


@pytest.mark.parametrize("kind", ["interpreted", "compiled"])
def test_reused_buffers_give_the_results_of_fresh_ones(kind):
    points = [RNG.standard_normal(40) for _ in range(3)]
    tape = _tapes(objective, points[0])[kind]
    first = [tape.value_and_gradient(p) for p in points]
    again = [tape.value_and_gradient(p) for p in points[::-1]][::-1]
    for (v1, g1), (v2, g2), p in zip(first, again, points):
        assert v1 == v2 and np.array_equal(g1, g2)  # bitwise: nothing left over
        np.testing.assert_allclose(g1, objective_grad(p), rtol=1e-10, atol=1e-12)
    # a returned gradient is the caller's: later replays do not write into it
    g = tape.gradient(points[0])
    kept = g.copy()
    tape.gradient(points[1])
    assert np.array_equal(g, kept)


@pytest.mark.parametrize("kind", ["interpreted", "compiled"])
def test_replays_from_threads_match_serial_replays(kind):
    points = [RNG.standard_normal(40) for _ in range(48)]
    tape = _tapes(objective, points[0])[kind]
    serial = [tape.gradient(p) for p in points]
    with ThreadPoolExecutor(4) as ex:
        threaded = list(ex.map(tape.gradient, points))
    for a, b in zip(serial, threaded):
        assert np.array_equal(a, b)


def test_a_data_matrix_gets_no_adjoint_slot_in_the_compiled_kernel():
    tape = jittape.record(objective, np.ones(40))
    _, val0, _, nadj = kernel.compile_tape(tape)
    assert val0.size > A.size  # the matrix is in the value buffer ...
    assert nadj < A.size  # ... and not in the adjoint buffer


def test_vector_output_tapes_reuse_buffers_too():
    tape = jittape.record(lambda x: np.tanh(A @ x), np.ones(40))
    x1, x2 = RNG.standard_normal(40), RNG.standard_normal(40)
    v1 = tape.value(x1)
    tape.value(x2)
    np.testing.assert_allclose(v1, np.tanh(A @ x1), rtol=1e-13)
    _, g = tape.vjp((x1,), B)
    np.testing.assert_allclose(g, A.T @ (B * (1 - np.tanh(A @ x1) ** 2)), rtol=1e-10)


# --- products large enough for BLAS: the rules' results, checked in closed form ------------
def _close(got, want):
    # summation orders differ between BLAS and the loops: relative to the result's scale
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.max(np.abs(want)) * 100)


SHAPES = [((30, 40), (40, 50)), ((200, 64), (64,)), ((64,), (64, 200)),
          ((3, 20, 30), (3, 30, 25))]


@pytest.mark.parametrize("sx, sy", SHAPES)
def test_blas_sized_product_gradient_jvp_and_hvp(sx, sy):
    x, y = RNG.standard_normal(sx), RNG.standard_normal(sy)
    assert np.prod(sx) * sy[-1] >= BLAS_MIN  # the BLAS path of the kernels

    def f(x, y):
        return 0.5 * np.sum((x @ y) ** 2)

    z = x @ y
    gx = z @ np.swapaxes(y, -1, -2) if y.ndim > 1 else np.multiply.outer(z, y)
    gy = np.swapaxes(x, -1, -2) @ z if x.ndim > 1 else np.multiply.outer(x, z)
    tape = jittape.record(f, x, y, argnums=(0, 1))
    for tp in (tape, jittape.record(f, x, y, argnums=(0, 1)).compile()):
        got = tp.gradient(x, y)
        _close(got[0], gx)
        _close(got[1], gy)
    dx, dy = RNG.standard_normal(sx), RNG.standard_normal(sy)
    zd = dx @ y + x @ dy
    _, jv = tape.jvp(x, y, tangents=(dx, dy))
    _close(jv, np.sum(z * zd))
    hx, hy = tape.hvp(x, y, v=(dx, dy))
    t = lambda a: np.swapaxes(a, -1, -2)
    if x.ndim > 1 and y.ndim > 1:
        _close(hx, zd @ t(y) + z @ t(dy))
        _close(hy, t(dx) @ z + t(x) @ zd)
    elif y.ndim == 1:
        _close(hx, np.multiply.outer(zd, y) + np.multiply.outer(z, dy))
        _close(hy, dx.T @ z + x.T @ zd)
    else:
        _close(hx, y @ zd + dy @ z)
        _close(hy, np.multiply.outer(dx, z) + np.multiply.outer(x, zd))

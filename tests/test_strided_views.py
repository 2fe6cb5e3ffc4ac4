"""Views as views: basic slices with steps, 2-D slices, columns, transposes, flips and
broadcasting record one STRIDED record (offset, shape and strides in the pool), never an
index array, and read it in place in the compiled kernel. Values and gradients against
NumPy and central differences, interpreted and compiled, and writes through views."""

import numpy as np
import pytest

import jittape
from jittape.compiler import kernel
from jittape.ops import OPS
from jittape.testing import check_grads

RNG = np.random.default_rng(7)


def _names(tape):
    return [OPS[o].name for o in tape.arrays.op]


# (name, f, input shape); every f reads its input through views only
VIEWS = [
    ("step", lambda x: np.sum(x[::2] * x[1::2]), (10,)),
    ("negative step", lambda x: np.sum(np.sin(x[::-3]) * x[7::-3]), (9,)),
    ("reversed", lambda x: x[::-1] @ x, (6,)),
    ("2-D steps", lambda A: np.sum(np.sin(A[1:, ::2]) * A[:-1, 1::2]), (5, 6)),
    ("2-D negative steps", lambda A: np.sum(A[::-2, 3::-2] ** 2), (5, 6)),
    ("not mergeable", lambda A: np.sum(np.exp(A[::2, 1::3])), (6, 9)),
    ("column", lambda X: np.sum(X[:, 2] ** 3) + X[1:, -1] @ X[:-1, 0], (4, 5)),
    ("3-D", lambda T: np.sum(T[1, ::2, :] * T[::2, 1, ::-1]), (3, 3, 3)),
    ("view of a view", lambda A: np.sum(A[:, ::2][1:, ::-1] ** 2), (4, 6)),
    ("transpose", lambda A: np.sum((A.T @ A[:, ::2]) ** 2), (4, 3)),
    ("broadcast", lambda x: np.sum(np.broadcast_to(x[:, None], (4, 3)) * np.arange(12.0)
                                   .reshape(4, 3)), (4,)),
    ("flip, diagonal", lambda A: np.sum(np.flip(A) * A) + np.sum(np.diagonal(A) ** 2), (3, 3)),
]


@pytest.mark.parametrize("name,f,shape", VIEWS, ids=[v[0] for v in VIEWS])
def test_views_record_no_index_array_and_differentiate(name, f, shape):
    x = RNG.standard_normal(shape)
    tape = jittape.record(f, x)
    names = _names(tape)
    assert "gather" not in names, names
    assert "strided" in names or "slice" in names, names
    assert len(tape.arrays.pool) <= 2 + 4 * len(names) * len(shape)  # a few per record
    check_grads(f, (x,))
    compiled = jittape.record(f, x).compile()
    for pt in (x, RNG.standard_normal(shape)):
        ref_v, ref_g = jittape.value_and_grad(f)(pt)  # recorded afresh at pt
        np.testing.assert_allclose(ref_v, f(pt), rtol=1e-13)
        for t in (tape, compiled):
            v, g = t.value_and_gradient(pt)
            np.testing.assert_allclose(v, ref_v, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(g, ref_g, rtol=1e-12, atol=1e-14)


def test_a_large_strided_slice_stores_a_few_integers():
    x = np.linspace(0.0, 1.0, 1_000_000)
    tape = jittape.record(lambda x: np.sum(x[::3] ** 2) + np.sum(x[::-7]), x)
    assert _names(tape).count("strided") == 2
    t = tape.arrays
    views = [int(t.k[i]) for i in range(t.n_records) if OPS[int(t.op[i])].name == "strided"]
    assert [t.pool[k:k + 4].tolist() for k in views] == [[1, 0, 333_334, 3],
                                                         [1, 999_999, 142_858, -7]]
    assert t.pool.size < 20  # no index array: 8 MB each
    g = tape.gradient(x)
    expect = np.zeros_like(x)
    expect[::3] += 2 * x[::3]
    expect[::-7] += 1.0
    np.testing.assert_allclose(g, expect, rtol=1e-15)


def test_the_compiled_kernel_reads_views_in_place():
    f = VIEWS[3][1]
    x = RNG.standard_normal((5, 6))
    src = kernel.kernel_source(jittape.record(f, x))
    body = src.split("# compact value offsets by record id")[1]
    assert "strided_forward" not in body and "pool[" not in body
    assert "j * 2" in src  # A[1:, ::2] is one axis of stride 2


def test_empty_views():
    def f(x):
        e = x[5:2]
        r = x[::-1][10:]
        c = x.reshape(2, 3)[:, 3:3]
        return np.sum(x ** 2) + np.sum(e) + np.sum(r * 2) + np.sum(c)
    x = np.arange(6.0)
    for t in (jittape.record(f, x), jittape.record(f, x).compile()):
        np.testing.assert_allclose(t.gradient(x + 1), 2 * (x + 1))


def test_scalar_elements_and_zero_d_views():
    f = lambda A: A[1, -1] * A[-2, 0] + A[..., 0][2] + A[0][None, ::-1][0, 1]  # noqa: E731
    A = RNG.standard_normal((3, 4))
    check_grads(f, (A,))
    np.testing.assert_allclose(jittape.record(f, A).compile().value(A), f(A))


def test_writes_through_strided_views():
    def f(x):
        y = x * 1.0
        y[::2] = np.cos(x[1::2])  # assignment into a strided slice
        v = y[::-3]
        v *= 3.0  # an in-place update of a view reaches its base ...
        y[1:4] += x[::-2][:3]
        return np.sum(y ** 2) + np.sum(v)  # ... and the view sees the later write

    def g(x):
        y = x.copy()
        y[::2] = np.cos(x[1::2])
        v = y[::-3]
        v *= 3.0
        y[1:4] += x[::-2][:3]
        return np.sum(y ** 2) + np.sum(v)

    x = RNG.standard_normal(10)
    np.testing.assert_allclose(f(x), g(x), rtol=1e-14)
    np.testing.assert_allclose(jittape.value_and_grad(f)(x)[0], g(x), rtol=1e-14)
    check_grads(f, (x,))
    for t in (jittape.record(f, x), jittape.record(f, x).compile()):
        x2 = x + 0.1
        np.testing.assert_allclose(t.value(x2), g(x2), rtol=1e-13)
        np.testing.assert_allclose(t.gradient(x2), jittape.grad(f)(x2), rtol=1e-12)


def test_writes_through_2d_views():
    def f(A, numpy=False):
        B = A.copy() if numpy else A * 1.0
        B[:, 1] = A[:, 0] ** 2  # a column
        col = B[::-1, 2]
        col += 1.5 * A[0, ::2][:3]
        B[1:, ::2] *= A[:-1, ::2]  # a 2-D strided block, in place
        return np.sum(B * np.arange(B.size).reshape(B.shape))

    A = RNG.standard_normal((3, 5))
    np.testing.assert_allclose(f(A), f(A, numpy=True), rtol=1e-14)
    check_grads(f, (A,))
    c = jittape.record(f, A).compile()
    A2 = A * 0.5
    np.testing.assert_allclose(c.value(A2), f(A2, numpy=True), rtol=1e-13)
    np.testing.assert_allclose(c.gradient(A2), jittape.grad(f)(A2), rtol=1e-12)


def test_jvp_hvp_and_sparsity_through_views():
    f = lambda x: np.sum(x[::2] ** 2 * x[1::2]) + np.sum(x[::-1][::3] ** 3)  # noqa: E731
    x = RNG.standard_normal(8)
    tape = jittape.record(f, x)
    v = RNG.standard_normal(8)
    _, jv = tape.jvp(x, tangents=v)
    np.testing.assert_allclose(jv, tape.gradient(x) @ v, rtol=1e-12)
    h = 1e-5
    fd = (tape.gradient(x + h * v) - tape.gradient(x - h * v)) / (2 * h)
    np.testing.assert_allclose(tape.hvp(x, v=v), fd, rtol=1e-6, atol=1e-8)

    r = lambda x: x[::2] * x[1::2] + x[::-2]  # noqa: E731
    pattern = jittape.record(r, x).jacobian_sparsity().toarray() != 0
    dense = np.zeros((4, 8), bool)
    for i in range(4):
        dense[i, [2 * i, 2 * i + 1, 7 - 2 * i]] = True
    np.testing.assert_array_equal(pattern, dense)


def test_saved_tapes_keep_their_views(tmp_path):
    f = VIEWS[4][1]
    x = RNG.standard_normal((5, 6))
    path = tmp_path / "views.npz"
    jittape.record(f, x).save(path)
    loaded = jittape.load(path)
    np.testing.assert_allclose(loaded.gradient(x * 2), jittape.grad(f)(x * 2), rtol=1e-13)


def test_a_view_out_of_range_is_refused_on_load(tmp_path):
    path = tmp_path / "views.npz"
    jittape.record(lambda x: np.sum(x[::2]), np.arange(6.0)).save(path)
    with np.load(path) as z:
        data = {k: z[k] for k in z.files}
    assert data["pool"][:4].tolist() == [1, 0, 3, 2]  # x[::2]: nd, start, extent, stride
    data["pool"][3] = 10
    np.savez(tmp_path / "bad.npz", **data)
    with pytest.raises(jittape.TapeFormatError, match="out of range"):
        jittape.load(tmp_path / "bad.npz")

"""Several and structured arguments: tuples, lists and dicts (nested) of floats and arrays."""

import pickle
from collections import namedtuple

import numpy as np
import pytest

import jittape

RNG = np.random.default_rng(7)
X = RNG.standard_normal((6, 3))
Y = RNG.standard_normal(6)


# --- an independent finite-difference check over the float leaves of a structure ----------
def _float_paths(tree, path=()):
    """Paths of the float leaves of ``tree`` (what jittape differentiates)."""
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from _float_paths(v, path + (k,))
    elif isinstance(tree, (tuple, list)):
        for i, v in enumerate(tree):
            yield from _float_paths(v, path + (i,))
    elif isinstance(tree, float) or (isinstance(tree, np.ndarray) and tree.dtype.kind == "f"):
        yield path


def _get(tree, path):
    for k in path:
        tree = tree[k]
    return tree


def _set(tree, path, value):
    if not path:
        return value
    k, rest = path[0], path[1:]
    if isinstance(tree, dict):
        return {**tree, k: _set(tree[k], rest, value)}
    items = list(tree)
    items[k] = _set(items[k], rest, value)
    if isinstance(tree, list):
        return items
    return type(tree)(*items) if hasattr(tree, "_fields") else tuple(items)


def assert_grad_fd(f, args, argnums, grads, h=1e-6, rtol=1e-6, n_directions=3):
    """<grad, v> against central differences along random directions in all float leaves."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    grads = (grads,) if isinstance(argnums, int) else tuple(grads)
    rng = np.random.default_rng(0)
    for _ in range(n_directions):
        dirs = [[(p, rng.standard_normal(np.shape(_get(args[n], p))))
                 for p in _float_paths(args[n])] for n in nums]

        def shifted(s):
            a = list(args)
            for n, ds in zip(nums, dirs):
                for p, d in ds:
                    a[n] = _set(a[n], p, _get(args[n], p) + s * h * d)
            return f(*a)
        fd = (shifted(1.0) - shifted(-1.0)) / (2 * h)
        ad = sum(float(np.sum(np.asarray(_get(g, p)) * d))
                 for g, ds in zip(grads, dirs) for p, d in ds)
        assert ad == pytest.approx(fd, rel=rtol, abs=1e-8)


# --- dicts of parameters ---------------------------------------------------------------
def linear_loss(params, X, y):
    r = X @ params["w"] + params["b"] - y
    return np.sum(r ** 2)


def test_dict_of_params_linear_model():
    params = {"w": RNG.standard_normal(3), "b": 0.4}
    v, g = jittape.value_and_grad(linear_loss)(params, X, Y)
    r = X @ params["w"] + params["b"] - Y
    assert v == pytest.approx(np.sum(r ** 2), rel=1e-14)
    assert type(g) is dict and list(g) == ["w", "b"]
    assert isinstance(g["b"], float) and g["w"].shape == (3,)
    np.testing.assert_allclose(g["w"], 2 * X.T @ r, rtol=1e-13)
    assert g["b"] == pytest.approx(2 * np.sum(r), rel=1e-13)
    assert jittape.grad(linear_loss)(params, X, Y).keys() == g.keys()


def test_user_arrays_are_not_written_and_key_order_is_kept():
    w = RNG.standard_normal(3)
    seen = []

    def f(p):
        seen.append(list(p))
        return np.sum(p["z"] * p["a"]) + p["m"]
    params = {"z": w, "m": 1.0, "a": np.ones(3)}
    g = jittape.grad(f)(params)
    assert seen == [["z", "m", "a"]] and list(g) == ["z", "m", "a"]
    assert params["z"] is w and isinstance(params["m"], float)
    np.testing.assert_array_equal(g["z"], np.ones(3))
    np.testing.assert_array_equal(g["a"], w)


# --- nested tuples and lists -----------------------------------------------------------
def nested(a):
    (u, v), layers = a
    s = u * v[0]
    for W, c in layers:
        s = s + np.sum(np.tanh(W @ v) * c)
    return s


def test_nested_tuple_and_list():
    a = ((0.7, RNG.standard_normal(2)),
         [(RNG.standard_normal((3, 2)), RNG.standard_normal(3)),
          (RNG.standard_normal((2, 2)), 1.5)])
    g = jittape.grad(nested)(a)
    assert type(g) is tuple and type(g[0]) is tuple and type(g[1]) is list
    assert type(g[1][0]) is tuple and isinstance(g[0][0], float)
    assert g[1][0][0].shape == (3, 2) and isinstance(g[1][1][1], float)
    assert_grad_fd(nested, (a,), 0, g)


def test_list_of_floats_gives_a_list():
    g = jittape.grad(lambda p: p[0] * p[1] ** 2)([2.0, 3.0])
    assert g == [9.0, 12.0]


def test_namedtuple_structure():
    Params = namedtuple("Params", "scale shift")

    def f(p, x):
        return np.sum((p.scale * x + p.shift) ** 2)
    p = Params(np.array([1.0, 2.0]), 0.5)
    g = jittape.grad(f)(p, np.array([3.0, -1.0]))
    assert type(g) is Params
    assert_grad_fd(f, (p, np.array([3.0, -1.0])), 0, g)


# --- constant leaves -------------------------------------------------------------------
def test_integer_and_boolean_leaves_are_constants():
    idx = np.array([2, 0])
    mask = np.array([True, False, True])
    seen = {}

    def f(p):
        seen.update(p)
        x = p["x"]
        return np.sum(x[p["idx"]] ** p["n"]) + np.sum(x[p["mask"]]) * (2.0 if p["flag"] else 1.0)
    p = {"x": np.array([1.0, 2.0, 3.0]), "n": 3, "idx": idx, "mask": mask, "flag": True,
         "off": None}
    g = jittape.grad(f)(p)
    assert type(seen["n"]) is int and seen["idx"] is idx and seen["mask"] is mask
    assert seen["flag"] is True and seen["off"] is None
    assert g["n"] is None and g["idx"] is None and g["mask"] is None and g["flag"] is None
    assert g["off"] is None
    np.testing.assert_allclose(g["x"], [3 * 1.0 + 2.0, 0.0, 3 * 9.0 + 2.0])


def test_numpy_scalar_and_float32_leaves_are_floats():
    g = jittape.grad(lambda p: p[0] * p[1] + np.sum(p[2]))(
        (np.float64(2.0), np.array(3.0), np.ones(2, dtype=np.float32)))
    assert g[0] == 3.0 and g[1] == 2.0 and g[2].dtype == np.float64
    np.testing.assert_array_equal(g[2], [1.0, 1.0])


def test_top_level_int_is_still_converted_to_float():
    assert jittape.grad(lambda x: x ** 2)(3) == 6.0
    np.testing.assert_array_equal(jittape.grad(lambda x: np.sum(x ** 2))(np.array([1, 2])),
                                  [2.0, 4.0])


# --- several arguments -----------------------------------------------------------------
def mixed(x, data, params):
    pred = data["X"] @ (params["w"] * x) + params["b"][0] * params["b"][1]
    return np.sum((pred - data["y"]) ** 2) + params["lam"] * np.sum(x ** 2)


def mixed_args():
    data = {"X": X, "y": Y}
    params = {"w": RNG.standard_normal(3), "b": [0.3, np.array(2.0)], "lam": 0.1, "k": 4}
    return RNG.standard_normal(3), data, params


def test_argnums_0_2_with_mixed_structures():
    x, data, params = mixed_args()
    v, (gx, gp) = jittape.value_and_grad(mixed, argnums=(0, 2))(x, data, params)
    assert v == pytest.approx(mixed(x, data, params), rel=1e-14)
    assert gx.shape == (3,) and list(gp) == ["w", "b", "lam", "k"] and gp["k"] is None
    assert type(gp["b"]) is list and isinstance(gp["b"][1], float)
    assert_grad_fd(mixed, (x, data, params), (0, 2), (gx, gp))
    gp2, gx2 = jittape.grad(mixed, argnums=(2, 0))(x, data, params)
    np.testing.assert_array_equal(gx2, gx)
    np.testing.assert_array_equal(gp2["w"], gp["w"])


def test_single_argnum_in_a_tuple_returns_a_one_tuple():
    g = jittape.grad(linear_loss, argnums=(0,))({"w": np.ones(3), "b": 0.0}, X, Y)
    assert type(g) is tuple and len(g) == 1 and list(g[0]) == ["w", "b"]


# --- replay ----------------------------------------------------------------------------
def test_replay_of_a_pytree_tape_at_new_values():
    x, data, params = mixed_args()
    tape = jittape.record(mixed, x, data, params, argnums=(0, 2))
    assert len(tape.arrays.inputs) == 5  # x, w, b[0], b[1], lam (k is a constant)
    for _ in range(3):
        x2 = RNG.standard_normal(3)
        p2 = dict(params, w=RNG.standard_normal(3), b=[RNG.standard_normal(), 1.5],
                  lam=RNG.uniform())
        v, (gx, gp) = tape.value_and_gradient(x2, p2)
        v_ref, (gx_ref, gp_ref) = jittape.value_and_grad(mixed, argnums=(0, 2))(x2, data, p2)
        assert v == pytest.approx(v_ref, rel=1e-13)
        assert tape.value(x2, p2) == pytest.approx(v_ref, rel=1e-13)
        np.testing.assert_allclose(gx, gx_ref, rtol=1e-12)
        np.testing.assert_allclose(gp["w"], gp_ref["w"], rtol=1e-12)
        assert gp["b"][0] == pytest.approx(gp_ref["b"][0], rel=1e-12)
        assert gp["lam"] == pytest.approx(gp_ref["lam"], rel=1e-12) and gp["k"] is None
    again = pickle.loads(pickle.dumps(tape))
    np.testing.assert_array_equal(again.gradient(x, params)[1]["w"],
                                  tape.gradient(x, params)[1]["w"])


def test_tape_inputs_are_the_flattened_float_leaves():
    p = {"a": 1.0, "n": 2, "v": np.array([1.0, 2.0]), "rest": (3.0, True)}
    tape = jittape.record(lambda p: p["a"] * np.sum(p["v"]) + p["rest"][0] ** p["n"], p)
    t = tape.arrays
    assert len(t.inputs) == 3
    assert [t.shape(i) for i in t.inputs] == [(), (2,), ()]
    assert [t.value(i).tolist() if t.shape(i) else t.value(i) for i in t.inputs] == \
        [1.0, [1.0, 2.0], 3.0]
    g = tape.gradient(p)
    assert (g["a"], g["n"], g["rest"]) == (3.0, None, (6.0, None))
    np.testing.assert_array_equal(g["v"], [1.0, 1.0])


def test_vjp_of_a_structured_tape():
    def f(p):
        return p["A"] @ p["x"] + p["c"]
    p = {"A": RNG.standard_normal((2, 3)), "x": RNG.standard_normal(3), "c": 1.0}
    tape = jittape.record(f, p)
    cot = np.array([1.0, -2.0])
    v, g = tape.vjp((p,), cot)
    np.testing.assert_allclose(v, f(p))
    np.testing.assert_allclose(g["A"], np.outer(cot, p["x"]))
    np.testing.assert_allclose(g["x"], p["A"].T @ cot)
    assert g["c"] == pytest.approx(-1.0)
    with pytest.raises(TypeError, match="jacobian"):
        tape.jacobian(p)


def test_replay_refuses_another_structure():
    params = {"w": np.ones(3), "b": 0.0, "n": 2}
    tape = jittape.record(linear_loss, params, X, Y)
    with pytest.raises(ValueError, match="structure"):
        tape.gradient({"w": np.ones(3), "b": 0.0})
    with pytest.raises(ValueError, match="structure"):
        tape.gradient({"w": np.ones(3), "b": 0.0, "n": 3})  # constant leaves are part of it
    with pytest.raises(ValueError, match="structure"):
        tape.gradient({"w": np.ones(3), "b": 1, "n": 2})  # an int where a float was
    with pytest.raises(ValueError, match="structure"):
        tape.gradient({"b": 0.0, "w": np.ones(3), "n": 2})  # keys in another order
    with pytest.raises(ValueError, match="shape"):
        tape.gradient({"w": np.ones(4), "b": 0.0, "n": 2})
    with pytest.raises(ValueError, match="structure"):
        tape.gradient(np.ones(4))
    with pytest.raises(TypeError, match="differentiated argument"):
        tape.gradient(params, params)


def test_structured_tape_is_not_saved_silently(tmp_path):
    tape = jittape.record(linear_loss, {"w": np.ones(3), "b": 0.0}, X, Y)
    with pytest.raises(ValueError, match="structured"):
        tape.save(tmp_path / "t.npz")


# --- taped -----------------------------------------------------------------------------
def test_taped_rerecords_when_the_structure_changes():
    tf = jittape.taped(linear_loss, compile=False)
    p = {"w": np.ones(3), "b": 0.5}
    for _ in range(3):
        p = {"w": RNG.standard_normal(3), "b": RNG.standard_normal()}
        v, g = tf.value_and_grad(p, X, Y)
        v_ref, g_ref = jittape.value_and_grad(linear_loss)(p, X, Y)
        assert v == pytest.approx(v_ref, rel=1e-13) and list(g) == ["w", "b"]
        np.testing.assert_allclose(g["w"], g_ref["w"], rtol=1e-12)
    assert (tf.stats.recordings, tf.stats.replays) == (1, 2)
    q = {"w": np.ones(3), "b": np.zeros(6)}  # same treedef, new leaf shape
    g = tf.grad(q, X, Y)
    assert g["b"].shape == (6,) and tf.stats.recordings == 2 and tf.stats.shape_changes == 1
    r = {"w": np.ones(3), "b": 0.5, "extra": 1}  # new key (a constant leaf)
    assert tf.grad(r, X, Y)["extra"] is None and tf.stats.recordings == 3
    r2 = {"w": np.ones(3), "b": 0.5, "extra": 2}  # same keys, another constant
    tf.grad(r2, X, Y)
    assert tf.stats.recordings == 4
    tf.grad(r, X, Y)  # the earlier structures are still cached
    tf.grad(p, X, Y)
    assert tf.stats.recordings == 4 and tf.stats.replays == 4
    assert tf(p, X, Y) == pytest.approx(linear_loss(p, X, Y), rel=1e-13)


def test_taped_constant_int_leaf_is_not_stale():
    def f(p):
        return np.sum(p["x"] ** p["n"])
    tf = jittape.taped(f, compile=False)
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(tf.grad({"x": x, "n": 2})["x"], 2 * x)
    np.testing.assert_allclose(tf.grad({"x": x, "n": 3})["x"], 3 * x ** 2)
    idx = np.array([0, 0])

    def g(p):
        return np.sum(p["x"][p["idx"]])
    tg = jittape.taped(g, compile=False)
    np.testing.assert_allclose(tg.grad({"x": x, "idx": idx})["x"], [2.0, 0.0])
    idx[1] = 1  # mutated in place: must record again
    np.testing.assert_allclose(tg.grad({"x": x, "idx": idx})["x"], [1.0, 1.0])
    assert tg.stats.recordings == 2


def test_taped_with_argnums_and_structures():
    tf = jittape.taped(mixed, argnums=(0, 2), compile=False)
    x, data, params = mixed_args()
    for _ in range(2):
        gx, gp = tf.grad(x, data, params)
    gx_ref, gp_ref = jittape.grad(mixed, argnums=(0, 2))(x, data, params)
    np.testing.assert_allclose(gx, gx_ref, rtol=1e-12)
    np.testing.assert_allclose(gp["w"], gp_ref["w"], rtol=1e-12)
    assert tf.stats.replays == 1


def test_taped_structured_tape_compiles():
    tf = jittape.taped(linear_loss, compile=True)
    p = {"w": np.ones(3), "b": 0.5}
    tf.grad(p, X, Y)
    tf.grad(p, X, Y)
    q = {"w": RNG.standard_normal(3), "b": -0.2}
    g = tf.grad(q, X, Y)
    assert tf.stats.compilations == 1
    np.testing.assert_allclose(g["w"], jittape.grad(linear_loss)(q, X, Y)["w"], rtol=1e-12)


# --- errors ----------------------------------------------------------------------------
def test_unsupported_leaf_names_its_path():
    with pytest.raises(TypeError, match=r"params\['w'\]\[1\] is of type str"):
        jittape.grad(linear_loss)({"w": [1.0, "a"], "b": 0.0}, X, Y)
    with pytest.raises(TypeError, match=r"p\[0\]\['z'\] is of type complex"):
        jittape.grad(lambda p: p[1])(({"z": 1j}, 1.0))
    with pytest.raises(TypeError, match=r"a\[1\]\[0\] is of type object"):
        jittape.grad(lambda *a: a[0], argnums=1)(1.0, [object()])
    with pytest.raises(TypeError, match=r"p\['v'\] is of type ndarray"):
        jittape.grad(lambda p: 0.0)({"v": np.array(["x"])})
    with pytest.raises(TypeError, match=r"params\['w'\]\[1\] is of type str"):
        jittape.taped(linear_loss).grad({"w": [1.0, "a"], "b": 0.0}, X, Y)
    tape = jittape.record(lambda p: np.sum(np.stack(p["w"])) * p["b"], {"w": [1.0, 1.0], "b": 0.0})
    with pytest.raises(TypeError, match=r"xs\[0\]\['w'\]\[1\] is of type str"):
        tape.gradient({"w": [1.0, "a"], "b": 0.0})


def test_structure_of_integers_only_is_refused():
    with pytest.raises(TypeError, match="nothing to differentiate"):
        jittape.grad(lambda x: x[0] * x[1])([1, 2])


def test_empty_structure_has_an_empty_gradient():
    v, (gx, ge) = jittape.value_and_grad(lambda x, e: x ** 2, argnums=(0, 1))(3.0, {})
    assert (v, gx, ge) == (9.0, 6.0, {})


def test_active_leaf_is_nested_differentiation():
    def outer(x):  # d/dx [x * d/da (a^2 * 2)] at a = x: d/dx (4 x^2) = 8 x
        return jittape.grad(lambda p: p["a"] ** 2 * 2.0)({"a": x})["a"] * x
    assert jittape.grad(outer)(1.5) == pytest.approx(12.0)
    with pytest.raises(jittape.NotDifferentiableError, match="nest"):  # a Tape does not
        jittape.grad(lambda x: jittape.record(lambda p: p["a"], {"a": x}).value({"a": 1.0}))(
            1.0)

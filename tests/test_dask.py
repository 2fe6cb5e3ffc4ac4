"""jittape.dask on local Dask clusters: results equal to one process, tapes recorded once per
worker and chunk shape, chunks that stay on their workers, errors naming their chunk, a lost
worker, the default cluster, minimize and map_starts against single-process runs."""

import os
import subprocess
import sys

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
import cloudpickle  # noqa: E402  (a dependency of distributed)
import dask.array as da  # noqa: E402
from dask.system import CPU_COUNT  # noqa: E402  (what jittape.dask starts a LocalCluster with)

import jittape  # noqa: E402
import jittape.dask as jd  # noqa: E402

# the worker processes of the default cluster cannot import this file: its functions travel
# by value
cloudpickle.register_pickle_by_value(sys.modules[__name__])

RTOL = 1e-12
N, D, ROWS = 1000, 4, 300  # four chunks: three of 300 rows, one of 100


@pytest.fixture(scope="module")
def client():
    """Two single-threaded workers in this process (no process start-up to wait for)."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=":0")
    c = distributed.Client(cluster, set_as_default=False)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, D))
    y = (rng.random(N) < 0.5).astype(float)
    return X, y, rng.standard_normal(D) * 0.3


def chunked(*arrays):
    return [da.from_array(a, chunks=(ROWS,) + a.shape[1:]) for a in arrays]


def logreg(w, X, y):
    z = X @ w
    return np.sum(np.logaddexp(0.0, z) - y * z)


def gmm_nll(theta, X):
    """Negative log-likelihood of a two-component isotropic Gaussian mixture."""
    mu, logs, a = theta[:2 * D].reshape(2, D), theta[2 * D:2 * D + 2], theta[-1]
    logw = np.array([a, 0.0]) - np.logaddexp(a, 0.0)
    sq = np.sum((X[:, None, :] - mu[None]) ** 2, axis=2)
    comp = logw - D * logs - 0.5 * sq * np.exp(-2 * logs)
    return -np.sum(jittape.logsumexp(comp, axis=1))


def assert_equal_vg(got, want):
    assert got[0] == pytest.approx(want[0], rel=RTOL)
    np.testing.assert_allclose(got[1], want[1], rtol=RTOL, atol=RTOL * np.abs(want[1]).max())


def test_equals_single_process(client, data):
    X, y, w = data
    vg = jd.value_and_grad(logreg, *chunked(X, y), client=client)
    for x in (w, 2 * w, w):  # replays after the first call
        assert_equal_vg(vg(x), jittape.value_and_grad(logreg)(x, X, y))
    v = np.arange(D, dtype=float)
    assert_equal_vg((vg.value(w), vg.hvp(w, v)),
                    (logreg(w, X, y), jittape.hvp(logreg)(w, X, y, v)))
    theta = np.concatenate([np.ones(D), -np.ones(D), [0.1, -0.2, 0.4]])
    vg = jd.value_and_grad(gmm_nll, *chunked(X), client=client)
    assert_equal_vg(vg(theta), jittape.value_and_grad(gmm_nll)(theta, X))
    assert vg.rows == [(0, 300), (300, 600), (600, 900), (900, 1000)]


def test_same_function_on_other_data(client, data):
    X, y, w = data
    first = jd.value_and_grad(logreg, *chunked(X, y), client=client)
    other = jd.value_and_grad(logreg, *chunked(X[::-1].copy(), 1.0 - y), client=client)
    assert_equal_vg(other(w), jittape.value_and_grad(logreg)(w, X[::-1], 1.0 - y))
    assert_equal_vg(first(w), jittape.value_and_grad(logreg)(w, X, y))


def test_float_x_and_float32_data(client, data):
    X, y, _ = data

    def scale(s, X):
        return np.sum(np.sin(s * X) ** 2)
    X32 = X.astype(np.float32)
    value, g = jd.value_and_grad(scale, *chunked(X32), client=client)(0.7)
    want = jittape.value_and_grad(scale)(0.7, X32)  # computed in float32, as NumPy does
    assert type(g) is float
    assert_equal_vg((value, g), want)
    assert np.float32(value) == scale(0.7, X32)


def test_one_tape_per_worker_and_chunk_shape(client, data):
    X, y, w = data

    def counted(w, X, y):  # a function of its own: its own tapes
        return logreg(w, X, y)
    vg = jd.value_and_grad(counted, *chunked(X, y), client=client)
    for k in range(3):
        vg(w + k)
    holders = client.who_has(vg.chunks)
    stats = jd.worker_stats(client)
    for addr, tapes in stats.items():
        mine = {d: s for d, s in tapes.items() if d.startswith("counted [inputs]")}
        shapes = {vg.rows[key[1]][1] - vg.rows[key[1]][0]
                  for key, where in holders.items() if addr in where}
        assert len(mine) == len(shapes)  # one tape per chunk shape it holds
        for desc, s in mine.items():
            n = sum(1 for key, where in holders.items() if addr in where
                    and f"(({vg.rows[key[1]][1] - vg.rows[key[1]][0]}, {D})" in desc)
            assert s.recordings == 1 and s.replays == 3 * n - 1 and s.guard_failures == 0


def test_chunks_stay_on_their_workers(client, data):
    X, y, w = data
    vg = jd.value_and_grad(logreg, *chunked(X, y), client=client)
    with client.as_current():
        distributed.wait(vg.chunks)
    holders = client.who_has(vg.chunks)
    assert all(len(h) == 1 for h in holders.values())

    def incoming(dask_worker):
        return dask_worker.state.transfer_incoming_count_total
    before = client.run(incoming)
    for k in range(4):
        futures = vg.submit(w * k)
        client.gather(futures)
        ran_on = client.who_has(futures)  # a task's result stays where it ran
        for i, fut in enumerate(futures):
            assert ran_on[fut.key] == holders[vg.chunks[i].key]
    assert client.run(incoming) == before  # no chunk moved between workers
    assert client.who_has(vg.chunks) == holders


def test_integer_labels_are_constants_of_a_tape_per_chunk(client, data):
    X, y, w = data
    labels = (X[:, 0] > 0).astype(np.int64)

    def softmax_nll(W, X, labels):
        logits = X @ W.reshape(D, 2)
        return -np.sum(logits[np.arange(len(labels)), labels]
                       - jittape.logsumexp(logits, axis=1))
    W = np.linspace(-1, 1, 2 * D)
    vg = jd.value_and_grad(softmax_nll, *chunked(X, labels), client=client)
    assert_equal_vg(vg(W), jittape.value_and_grad(softmax_nll)(W, X, labels))
    assert_equal_vg(vg(W), jittape.value_and_grad(softmax_nll)(W, X, labels))
    descs = [d for tapes in jd.worker_stats(client).values() for d in tapes
             if d.startswith("softmax_nll")]
    assert sorted(d.split("]")[0] for d in descs) == [
        f"softmax_nll [constants chunk {i}" for i in range(4)]


def test_f_that_needs_concrete_data_records_per_chunk(client, data):
    X, y, w = data

    def clipped(w, X):
        top = float(np.max(X))  # a conversion: fails on active data, fine on constants
        return np.sum((X @ w) ** 2) / top
    vg = jd.value_and_grad(clipped, *chunked(X), client=client)
    for _ in range(2):
        value, g = vg(w)
        want = sum(jittape.value_and_grad(clipped)(w, X[a:b]) [0] for a, b in vg.rows)
        assert value == pytest.approx(want, rel=RTOL)
    descs = [d for tapes in jd.worker_stats(client).values() for d in tapes
             if d.startswith("clipped")]
    assert sum("[constants chunk" in d for d in descs) == 4


def test_error_names_the_chunk(client, data):
    X, y, w = data
    Xbad = X.copy()
    Xbad[650, 1] = np.nan

    def checked(w, X, y):
        if np.any(np.isnan(X)):
            raise ValueError("NaN in the data")
        return logreg(w, X, y)
    vg = jd.value_and_grad(checked, *chunked(Xbad, y), client=client)
    with pytest.raises(ValueError, match=r"^chunk 2 \(rows 600:900\): NaN in the data$"):
        vg(w)
    with pytest.raises(TypeError, match="Dask arrays"):
        jd.value_and_grad(logreg, X, *chunked(y), client=client)
    with pytest.raises(ValueError, match="999 rows"):
        jd.value_and_grad(logreg, *chunked(X, y[:999]), client=client)


def test_scheduler_address(client, data):
    X, y, w = data
    address = client.scheduler.address
    vg = jd.value_and_grad(logreg, *chunked(X, y), client=address)
    assert vg.client is jd.get_client(address) and vg.client is not client
    assert_equal_vg(vg(w), jittape.value_and_grad(logreg)(w, X, y))


@pytest.mark.parametrize("method", ["BFGS", "Newton-CG", "trust-exact", "trust-constr",
                                    "Nelder-Mead"])
def test_minimize_matches_single_process(client, data, method):
    X, y, _ = data
    x0 = np.zeros(D)
    options = {"maxiter": 20} if method == "Nelder-Mead" else {}
    res = jd.minimize(logreg, x0, *chunked(X, y), client=client, method=method,
                      options=options)
    ref = jittape.minimize(logreg, x0, args=(X, y), method=method, options=options)
    assert res.success == ref.success
    if method == "trust-constr":  # its stopping test (xtol on a 1e-9 trust radius) may take
        # one step more or less when the sums over chunks round differently
        assert abs(res.nit - ref.nit) <= 1
    else:
        assert res.nit == ref.nit and res.nfev == ref.nfev
    np.testing.assert_allclose(res.x, ref.x, rtol=1e-7, atol=1e-9)


def test_minimize_refuses_user_derivatives(client, data):
    X, y, _ = data
    with pytest.raises(ValueError, match="supplies the gradient"):
        jd.minimize(logreg, np.zeros(D), *chunked(X, y), client=client, jac=lambda x: x)


def himmelblau(x, a):
    return (x[0] ** 2 + x[1] - a) ** 2 + (x[0] + x[1] ** 2 - 7) ** 2


def test_map_starts_matches_single_process(client):
    starts = np.array([[0.0, 0.0], [-3.0, 3.0], [-3.0, -3.0], [4.0, -2.0], [1.0, 1.0]])
    results = jd.map_starts(himmelblau, starts, client=client, method="BFGS", args=(11.0,))
    for s, res in zip(starts, results):
        ref = jittape.minimize(himmelblau, s, args=(11.0,), method="BFGS")
        np.testing.assert_allclose(res.x, ref.x, rtol=1e-12, atol=1e-12)
        assert res.fun < 1e-10
    assert len({tuple(np.round(r.x, 4)) for r in results}) == 4  # the four minima


def test_map_starts_error_names_the_start(client):
    def picky(x):
        if x[0] < -50:
            raise ValueError("x[0] out of range")
        return himmelblau(x, 11.0)
    with pytest.raises(ValueError, match=r"^start 1: x\[0\] out of range$"):
        jd.map_starts(picky, [[0.0, 0.0], [-60.0, 0.0]], client=client)


def _run(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, JITTAPE_QUIET="1"), timeout=120)


def test_import_jittape_does_not_import_dask():
    out = _run("import sys, jittape; print('dask' in sys.modules, "
               "'distributed' in sys.modules)")
    assert out.stdout.split() == ["False", "False"], out.stderr


def test_without_dask_the_error_says_what_to_install():
    out = _run("import sys; sys.modules['distributed'] = None\n"
               "try:\n    import jittape.dask\nexcept ImportError as e:\n    print(e)")
    assert "pip install jittape[dask]" in out.stdout, out.stderr


# --- the default cluster: worker processes, one of them killed ---------------------------
def _holder(client, future):
    return client.who_has([future])[future.key][0]


def kill_once(w, X, y, marker):
    """logreg, but the first worker to record it dies in the middle of the call."""
    if not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)
    return logreg(w, X, y)


def test_default_cluster_and_lost_workers(data, tmp_path):
    with pytest.raises(ValueError):
        distributed.default_client()  # no Client of the test's own: jittape starts one
    X, y, w = data
    vg = jd.value_and_grad(logreg, *chunked(X, y))
    client = jd.get_client()
    assert vg.client is client and client is jd.get_client()  # started once, reused
    workers = client.scheduler_info()["workers"]
    assert len(workers) == CPU_COUNT
    assert all(info["nthreads"] == 1 for info in workers.values())
    want = jittape.value_and_grad(logreg)(w, X, y)
    assert_equal_vg(vg(w), want)
    address = client.scheduler.address  # tcp://127.0.0.1:<port>, as a real cluster's
    assert address.startswith("tcp://")
    assert_equal_vg(jd.value_and_grad(logreg, *chunked(X, y), client=address)(w), want)

    # between calls: the worker holding chunk 0 exits; Dask recomputes its chunks elsewhere
    # (or on its restarted process) and the tapes are recorded there again
    lost = _holder(client, vg.chunks[0])
    client.run(os._exit, 1, workers=[lost], on_error="ignore")
    assert_equal_vg(vg(w), want)
    assert lost not in client.scheduler_info()["workers"]

    # during a call: the first worker to record kill_once exits while recording it
    marker = str(tmp_path / "killed")
    vg = jd.value_and_grad(lambda w, X, y: kill_once(w, X, y, marker), *chunked(X, y))
    assert_equal_vg(vg(w), want)
    assert os.path.exists(marker)

"""jittape.dask: time per gradient on a Dask cluster against one process, and what it costs.

Run::

    PYTHONPATH=. python benchmarks/bench_dask.py [--rows 1000000] [--chunks 8] [--rounds 7]

Two objectives additive over rows, on ``--rows`` rows generated on the workers
(``dask.array.random``, seeded; the one-process runs use the same values):

* logistic regression, 20 features: one matrix-vector product per chunk dominates;
* the negative log-likelihood of a 3-component Gaussian mixture with diagonal covariances in
  3 dimensions (means, log-scales, weights: 21 parameters), elementwise work on ``(rows, 3)``
  arrays per component and a log-sum-exp over the components.

Timed side by side, round-robin (one call of each per round, so load from other processes
hits them alike; medians and interquartile ranges of ``--rounds`` rounds, after three
untimed calls that record the tapes and compile their sweeps):

* one process: ``jittape.value_and_grad(f)(x, *data)`` (records every call) and a
  ``jittape.taped(f)`` replay with the data as constants of the tape; and the replay of one
  chunk with the data as differentiated inputs (what a worker runs per chunk: one tape per
  chunk shape), times the number of chunks;
* ``jittape.dask.value_and_grad`` on LocalClusters of 1, 2 and 4 single-threaded worker
  processes (Dask sets their BLAS to one thread), data persisted in ``--chunks`` chunks.

Then the scheduler's overhead per task (no-op tasks, and ``value_and_grad`` of a trivial
function on tiny chunks), the cost of one chunk's replay in this process, and from those a
projection for a 100-node cluster. Writes ``results/dask.md`` with the load average.
"""

import argparse
import gc
import math
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402

from benchmarks.common import RESULTS, round_robin  # noqa: E402  (also: sweeps compile in the foreground)
import jittape  # noqa: E402

K, DIM, FEATURES = 3, 3, 20


def logreg(w, X, y):
    z = X @ w
    return np.sum(np.logaddexp(0.0, z) - y * z)


def gmm_nll(theta, X):
    """Diagonal-covariance Gaussian mixture, K components in DIM dimensions (constant
    ``n DIM/2 log 2 pi`` left out)."""
    logits = theta[:K]
    mu = theta[K:K + K * DIM].reshape(K, DIM)
    logs = theta[K + K * DIM:].reshape(K, DIM)
    logw = logits - jittape.logsumexp(logits)
    cols = []
    for k in range(K):
        z = (X - mu[k]) * np.exp(-logs[k])
        cols.append(logw[k] - np.sum(logs[k]) - 0.5 * np.sum(z * z, axis=1))
    return -np.sum(jittape.logsumexp(np.stack(cols, axis=1), axis=1))


def dask_data(rows, chunks):
    """Lazy Dask arrays (generated where they are computed) for both problems."""
    import dask.array as da
    rng = da.random.default_rng(0)
    size = -(-rows // chunks)
    X = rng.standard_normal((rows, FEATURES), chunks=(size, FEATURES))
    w_true = np.linspace(-1.0, 1.0, FEATURES) / math.sqrt(FEATURES)
    y = (X @ w_true + 0.3 * rng.standard_normal(rows, chunks=size) > 0).astype(float)
    centres = da.from_array(np.repeat(np.arange(K, dtype=float), DIM).reshape(K, DIM) * 2.0)
    label = rng.integers(0, K, rows, chunks=size)
    G = rng.standard_normal((rows, DIM), chunks=(size, DIM)) + centres[label]
    return {"logreg": (X, y), "gmm": (G,)}


def points():
    w = np.linspace(-0.5, 0.5, FEATURES)
    theta = np.concatenate([np.zeros(K), np.arange(K * DIM, dtype=float) / (K * DIM) * 6.0,
                            np.full(K * DIM, 0.1)])
    return {"logreg": (logreg, w), "gmm": (gmm_nll, theta)}


def quartiles(ts):
    q = statistics.quantiles(ts, n=4) if len(ts) > 1 else [ts[0]] * 3
    return q[1], q[0], q[2]


def clusters(counts):
    from distributed import Client, LocalCluster
    out = {}
    for n in counts:
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                               dashboard_address=":0")
        out[n] = Client(cluster, set_as_default=False)
    return out


def per_task_overhead(client, tasks=400):
    """Seconds per no-op task, submitted and gathered in one batch (median of 5)."""
    def noop(i):
        return i
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        client.gather(client.map(noop, range(tasks), pure=False))
        runs.append((time.perf_counter() - t0) / tasks)
    return statistics.median(runs)


def per_chunk_overhead(client, chunks=64):
    """Seconds per chunk of ``jittape.dask.value_and_grad`` of a trivial ``f`` on 10-row
    chunks (the task, its replay, pickling x and the result; median of 9 calls)."""
    import dask.array as da
    import jittape.dask as jd
    vg = jd.value_and_grad(lambda x, a: np.sum(a * x), da.ones((10 * chunks, 3),
                                                                chunks=(10, 3)), client=client)
    x = np.ones(3)
    return statistics.median(round_robin({"t": lambda: vg(x)}, 9, warm=3)["t"]) / chunks


def run_problem(name, f, x, data, clients, rounds):
    import jittape.dask as jd
    local = [a.compute(scheduler="sync") for a in data]
    eager = jittape.value_and_grad(f)
    const = jittape.taped(f)
    inputs = jittape.taped(f, argnums=tuple(range(1 + len(local))))
    size = data[0].chunks[0][0]
    chunk = [a[:size] for a in local]
    ref = eager(x, *local)
    fns = {"one process, value_and_grad (records each call)": lambda: eager(x, *local),
           "one process, taped, data as constants": lambda: const.value_and_grad(x, *local),
           CHUNK: lambda: inputs.value_and_grad(x, *chunk)}
    for n, client in clients.items():
        vg = jd.value_and_grad(f, *data, client=client)
        got = vg(x)
        assert abs(got[0] - ref[0]) <= 1e-10 * abs(ref[0]), (got[0], ref[0])
        np.testing.assert_allclose(got[1], ref[1], rtol=1e-9, atol=1e-9 * np.abs(ref[1]).max())
        fns[f"jittape.dask, {n} worker{'s' * (n > 1)}"] = lambda vg=vg: vg(x)
    times = round_robin(fns, rounds, warm=3)
    return times, size, local[0].shape[0], int(np.size(x))


CHUNK = "one chunk replayed, data as inputs (what a worker runs per chunk)"


def table(name, rows, n_params, chunks, times):
    base = statistics.median(times["one process, taped, data as constants"])
    out = [f"## {name}: {rows:,} rows, {n_params} parameters, {chunks} chunks\n",
           "| configuration | s per gradient (median) | IQR | taped one process / this |",
           "|---|---|---|---|"]
    for label, ts in times.items():
        med, lo, hi = quartiles(ts)
        if label == CHUNK:  # as the time of all chunks, one after the other
            label, med, lo, hi = (f"{chunks} x {label}", chunks * med, chunks * lo,
                                  chunks * hi)
        out.append(f"| {label} | {med:.3f} | {lo:.3f}-{hi:.3f} | {base / med:.2f}x |")
    return "\n".join(out) + "\n"


def reading(name, times, chunks):
    """What the table says: parallel speed-up and the per-call cost beyond the replays."""
    med = {k: statistics.median(v) for k, v in times.items()}
    one = med.get("jittape.dask, 1 worker")
    replays = chunks * med[CHUNK]
    out = [f"Reading ({name}):"]
    if one is not None:
        out.append(f"on 1 worker a gradient costs {one:.3f} s against {replays:.3f} s for "
                   f"its {chunks} chunk replays in this process: {one - replays:+.3f} s of "
                   f"tasks, transport and summing per call "
                   f"({(one - replays) / chunks * 1e3:+.1f} ms per chunk).")
    for n in (2, 4):
        m = med.get(f"jittape.dask, {n} workers")
        if one is not None and m is not None:
            out.append(f"{n} workers: {one / m:.2f}x the speed of 1.")
    out.append("This machine has 2 cores shared with other processes (load above): 2 "
               "workers can at best halve the time when the cores are free, 4 workers "
               "oversubscribe them.\n")
    return " ".join(out)


#: Dask distributed's own figure: "Each task suffers about 1ms of overhead"
#: (https://distributed.dask.org/en/latest/, "Motivation"), a scheduler on its own core.
DOCUMENTED_TASK_OVERHEAD = 1e-3


def projection(results, t_task, t_chunk_over):
    lines = [
        "## Projection to a 100-node cluster\n",
        "Model: a gradient over `C` chunks on `P` workers costs about "
        "`ceil(C / P) * t_chunk + C * t_task + C * 8 p / B`: the chunks' replays in parallel "
        "waves, the scheduler's and client's work per task (serial: the scheduler is one "
        "process; summing it to the compute is pessimistic, part of it overlaps), and one "
        "gradient of `p` float64s per chunk into the client at bandwidth `B` (1 GB/s "
        "assumed). The client's sum of `C` small vectors is negligible.\n",
        f"Measured here (the scheduler, the client and the workers share 2 busy cores): "
        f"`t_task` = {t_task * 1e3:.2f} ms per no-op task (400 submitted and gathered at "
        f"once), {t_chunk_over * 1e3:.2f} ms per chunk of `jittape.dask.value_and_grad` of a "
        f"trivial function on 10-row chunks (the task, a replay, `x` and the result "
        f"pickled). Dask's documentation gives about 1 ms per task with a scheduler on its "
        f"own core; the projections use both.\n",
        "`t_chunk` per row is that of the replay of one chunk here (the table's "
        "one-chunk row), for chunks of 10^6 rows, one wave per 100 chunks:\n",
        "| problem | rows | chunks | compute | scheduling (here / documented) | gradients "
        "in | per gradient (here / documented) | one process |",
        "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, (t_chunk, size, p) in results.items():
        per_row = t_chunk / size
        for rows in (10 ** 8, 10 ** 9):
            C = rows // 10 ** 6
            compute = math.ceil(C / 100) * per_row * 10 ** 6
            here, doc = C * t_chunk_over, C * DOCUMENTED_TASK_OVERHEAD
            comm = C * 8 * p / 1e9
            lines.append(
                f"| {name} | {rows:.0e} | {C:,} | {compute:.2f} s | {here:.2f} s / "
                f"{doc:.2f} s | {comm * 1e3:.3f} ms | {compute + here + comm:.2f} s / "
                f"{compute + doc + comm:.2f} s | {per_row * rows:.0f} s |")
    lines.append(
        "\nWhat limits it: the scheduling term grows with the number of chunks, not of "
        "workers, so chunks should take far longer to replay than a task costs (10^5 to "
        "10^6 rows for these problems); at 1,000 chunks of 10^6 rows the scheduler, not the "
        "workers, sets the pace on the figures measured here. Communication is negligible "
        "for small `p`: one gradient per chunk is 8 p bytes (8 MB per chunk for a "
        "10^6-parameter model, where a per-worker partial sum, one task per worker "
        "instead of per chunk, would cut both the client's inbound traffic and the task "
        "count from `C` to `P`; not implemented). Each worker records its tapes once (one "
        "per chunk shape) and compiles the sweeps of `f`'s ops once per machine, a fixed "
        "cost of the first gradient not in these figures.\n")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--chunks", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--output", type=Path, default=RESULTS / "dask.md")
    args = ap.parse_args()
    load_before = os.getloadavg()
    counts = [int(n) for n in args.workers.split(",")]
    clients = clusters(counts)
    data = dask_data(args.rows, args.chunks)
    for client in clients.values():  # generate the data on each cluster before timing
        for arrays in data.values():
            client.gather(client.compute([a.sum() for a in arrays]))
    sections, model = [], {}
    for name, (f, x) in points().items():
        times, size, rows, p = run_problem(name, f, x, data[name], clients, args.rounds)
        sections.append(table(name, rows, p, args.chunks, times))
        sections.append(reading(name, times, args.chunks))
        model[name] = (statistics.median(times[CHUNK]), size, p)
        gc.collect()  # the one-process tapes of this problem (gigabytes) before the next
    two = clients[2] if 2 in clients else next(iter(clients.values()))
    t_task, t_over = per_task_overhead(two), per_chunk_overhead(two)
    load_after = os.getloadavg()
    import dask
    import distributed
    text = "\n".join([
        "# jittape.dask: time per gradient, one process vs 1, 2 and 4 workers\n",
        f"- command: `python benchmarks/bench_dask.py --rows {args.rows} --chunks "
        f"{args.chunks} --rounds {args.rounds}`",
        f"- machine: {os.cpu_count()} cores, shared; load average (1, 5, 15 min) before "
        f"{', '.join(f'{v:.2f}' for v in load_before)}, after "
        f"{', '.join(f'{v:.2f}' for v in load_after)}",
        f"- dask {dask.__version__}, distributed {distributed.__version__}, numpy "
        f"{np.__version__}; workers are single-threaded processes (BLAS on one thread); "
        "the one-process rows use this process's BLAS threads\n",
        *sections,
        projection(model, t_task, t_over)])
    args.output.write_text(text)
    print(text)
    for client in clients.values():
        client.cluster.close()
        client.close()


if __name__ == "__main__":
    main()

"""Eager gradients of array code (record and sweep at every call, autograd's style) against
HIPS autograd and PyTorch eager: ``results/eager.md`` (issue 28, item 4).

Run::

    python benchmarks/bench_eager.py          # about a minute; autograd and torch optional

The models are the kinds autograd's own examples use, each written once for NumPy-like
modules (``np_`` is NumPy for jittape, ``autograd.numpy`` for autograd):

* ``mlp``: a 3-layer tanh MLP, softmax cross-entropy, batch 128, widths 32-64-64-10;
* ``rnn``: a tanh RNN over 20 steps, hidden 32, batch 16, a squared readout per step;
* ``vae``: a VAE's loss at fixed noise, encoder and decoder MLPs 20-32-4 / 4-32-20, batch 64;
* ``gp``: a Gaussian process's negative log marginal likelihood, RBF kernel, n = 50
  (Cholesky and solve);
* ``gmm``: ADBench's GMM objective, d = 2, K = 5, n = 1000 (``benchmarks/problems/gmm.py``);
* ``square``: ``sum(x * x)`` of three elements (the fixed cost of one eager call);
* ``rosenbrock-10``, ``rosenbrock-10000``: the chained Rosenbrock function;
* ``logistic``: logistic regression's negative log-likelihood, 10,000 x 100.

Each figure is the median of 7 timed repeats of about 20 ms of calls after one warm-up call,
all tools in one process, side by side; gradients are checked against jittape's to 1e-10.
PyTorch runs the same model in ``torch`` with float64 tensors (``requires_grad``,
``backward``), single-threaded as every tool here.
"""

import os
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one BLAS thread for every tool (before NumPy loads)

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import jittape  # noqa: E402
from benchmarks.common import median_time as timed  # noqa: E402

RNG = np.random.default_rng(0)
X_MLP, Y_MLP = RNG.standard_normal((128, 32)), np.eye(10)[RNG.integers(0, 10, 128)]
SEQ = RNG.standard_normal((20, 16, 8))
X_VAE, EPS = RNG.standard_normal((64, 20)), RNG.standard_normal((64, 4))
X_GP = RNG.standard_normal((50, 2))
Y_GP = np.sin(X_GP[:, 0]) + 0.1 * RNG.standard_normal(50)


def mlp(np_, params):
    h = np_.asarray(X_MLP)  # (a tensor for PyTorch)
    for W, b in zip(params[0:4:2], params[1:4:2]):
        h = np_.tanh(h @ W + b)
    logits = h @ params[4] + params[5]
    mx = np_.max(logits, axis=1, keepdims=True)
    lse = np_.log(np_.sum(np_.exp(logits - mx), axis=1, keepdims=True)) + mx
    return -np_.sum(np_.asarray(Y_MLP) * (logits - lse)) / X_MLP.shape[0]


def rnn(np_, params):
    Wx, Wh, b, Wo = params
    h, out = np_.zeros((16, 32)), 0.0
    for t in range(SEQ.shape[0]):
        h = np_.tanh(np_.asarray(SEQ[t]) @ Wx + h @ Wh + b)
        out = out + np_.sum((h @ Wo) ** 2)
    return out / SEQ.shape[0]


def vae(np_, params):
    We, be, Wm, Ws, Wd, bd, Wo = params
    h = np_.tanh(np_.asarray(X_VAE) @ We + be)
    mu, logsig = h @ Wm, h @ Ws
    z = mu + np_.exp(logsig) * np_.asarray(EPS)
    recon = np_.tanh(z @ Wd + bd) @ Wo
    kl = 0.5 * np_.sum(mu ** 2 + np_.exp(2 * logsig) - 2 * logsig - 1)
    return (np_.sum((recon - np_.asarray(X_VAE)) ** 2) + kl) / X_VAE.shape[0]


def gp(np_, params):
    p = params[0]
    ls, sf, sn = np_.exp(p[0]), np_.exp(p[1]), np_.exp(p[2])
    x = np_.asarray(X_GP)
    d2 = np_.sum((x[:, None, :] - x[None, :, :]) ** 2, axis=2)
    K = sf * np_.exp(-0.5 * d2 / ls ** 2) + (sn + 1e-6) * np_.eye(50)
    L = np_.linalg.cholesky(K)
    y = np_.asarray(Y_GP)
    return 0.5 * np_.dot(y, np_.linalg.solve(K, y)) + np_.sum(np_.log(np_.diag(L)))


X_LR = RNG.standard_normal((10_000, 100))
Y_LR = (RNG.random(10_000) < 0.5).astype(float)


def square(np_, params):
    return np_.sum(params[0] * params[0])


def rosenbrock(np_, params):
    x = params[0]
    return np_.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def logistic(np_, params):
    z = np_.asarray(X_LR) @ params[0]
    return np_.sum(np_.log(1.0 + np_.exp(z)) - np_.asarray(Y_LR) * z)


def _weights(*shapes):
    return [0.1 * RNG.standard_normal(s) for s in shapes]


MODELS = {
    "mlp": (mlp, _weights((32, 64), 64, (64, 64), 64, (64, 10), 10)),
    "rnn": (rnn, _weights((8, 32), (32, 32), 32, (32, 1))),
    "vae": (vae, _weights((20, 32), 32, (32, 4), (32, 4), (4, 32), 32, (32, 20))),
    "gp": (gp, [np.array([0.1, 0.2, -2.0])]),
    "square": (square, [np.array([0.3, -1.2, 2.0])]),
    "rosenbrock-10": (rosenbrock, [np.linspace(-1.0, 1.2, 10)]),
    "rosenbrock-10000": (rosenbrock, [np.linspace(-1.0, 1.2, 10_000)]),
    "logistic": (logistic, [0.01 * RNG.standard_normal(100)]),
}


def torch_grad(model, params):
    import torch
    torch.set_num_threads(1)

    class T:  # the NumPy names the models use, on tensors
        tanh, exp, log = torch.tanh, torch.exp, torch.log
        linalg, diag, dot = torch.linalg, torch.diag, torch.dot
        asarray = staticmethod(torch.as_tensor)
        eye = staticmethod(lambda n: torch.eye(n, dtype=torch.float64))
        zeros = staticmethod(lambda s: torch.zeros(s, dtype=torch.float64))

        @staticmethod
        def sum(a, axis=None, keepdims=False):
            return a.sum() if axis is None else a.sum(axis, keepdim=keepdims)

        @staticmethod
        def max(a, axis=None, keepdims=False):
            return a.max() if axis is None else a.max(axis, keepdim=keepdims).values
    ps = [torch.tensor(p, requires_grad=True) for p in params]

    def run():
        for p in ps:
            p.grad = None
        model(T, ps).backward()
        return [p.grad.numpy() for p in ps]
    return run


def rows():
    out = []
    peers = {}
    try:
        import autograd
        import autograd.numpy as anp
        peers["autograd"] = lambda model, p: (lambda g: lambda: g(p))(
            autograd.grad(lambda q: model(anp, q)))
    except ImportError:
        pass
    try:
        import torch  # noqa: F401
        peers["PyTorch eager"] = torch_grad
    except ImportError:
        pass
    models = dict(MODELS)
    from benchmarks.problems import build
    g = build("gmm-d2-K5-1k")
    models["gmm"] = (None, [g.x0])
    for name, (model, params) in models.items():
        if model is None:  # the GMM problem: NumPy and autograd versions from the problem
            jt = jittape.grad(g.f)
            run = {"jittape": lambda: jt(params[0])}
            if "autograd" in peers:
                import autograd
                import autograd.numpy as anp
                ag = autograd.grad(g.autograd(anp))
                run["autograd"] = lambda: ag(params[0])
        else:
            jt = jittape.grad(lambda q, m=model: m(np, q))
            run = {"jittape": lambda: jt(params)}
            for peer, make in peers.items():
                run[peer] = make(model, params)
        ref = np.concatenate([np.ravel(a) for a in _list(run["jittape"]())])
        times = {}
        for tool, fn in run.items():
            got = np.concatenate([np.ravel(a) for a in _list(fn())])
            assert np.allclose(got, ref, rtol=1e-10, atol=1e-12), (name, tool)
            times[tool] = timed(fn)
        out.append((name, times))
    return out


def _list(g):
    return g if isinstance(g, (list, tuple)) else [g]


def main():
    t0 = time.perf_counter()
    results = rows()
    tools = sorted({t for _, times in results for t in times}, key=lambda t: t != "jittape")
    lines = ["# Eager gradients: jittape against autograd and PyTorch", "",
             "`python benchmarks/bench_eager.py` (see its docstring); one process, medians "
             f"after one warm-up call; {time.perf_counter() - t0:.0f} s.", "",
             "| model | " + " | ".join(tools) + " | jittape ÷ fastest peer |",
             "|---|" + "---:|" * (len(tools) + 1)]
    for name, times in results:
        peers = [times[t] for t in tools if t != "jittape" and t in times]
        ratio = f"{times['jittape'] / min(peers):.2f}x" if peers else ""
        cells = [f"{times[t] * 1e6:.0f} µs" if t in times else "" for t in tools]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {ratio} |")
    text = "\n".join(lines) + "\n"
    (HERE / "results" / "eager.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()

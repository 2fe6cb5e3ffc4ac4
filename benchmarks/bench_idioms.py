"""What the idioms of issue 27 cost: preallocated arrays, nested derivatives, complex values.

Run::

    python benchmarks/bench_idioms.py            # about a minute; writes results/idioms.md

Every figure is the median of several timed repeats in one process, after one warm-up call
(replayed tapes: after ``jittape.wait_compiled()``, the steady state), side by side with
what it is compared to:

* ``np.zeros(10)`` outside a recording (NumPy's own function: jittape replaces it only while a
  recording runs) and on another thread while a recording runs (the replacement, which gives
  that thread NumPy's plain array), against NumPy's ``np.zeros(10)`` itself;
* one recording's entry and exit (installing and removing the replacements);
* the eager gradient of a residual sum of squares written with a preallocated vector
  (``r = np.zeros(m); r[0::2] = ...; r[1::2] = ...``) against the same written with
  ``np.concatenate``, and the replayed tapes of both (``jittape.taped``);
* second order at n = 50: ``jittape.hvp(f)(x, v)`` against the nested
  ``grad(lambda z: vdot(grad(f)(z), v))(x)``, eagerly and replayed, and ``hessian`` against
  ``jacobian(grad(f))``; third order (three nested gradients) against the gradient of the
  hvp, eagerly, and its replayed tape as a script sees it (first call, the next calls with
  no ``wait_compiled()``) and in the steady state;
* complex values at n = 64: the gradient of a spectral loss written with ``np.fft.rfft``
  and ``np.abs`` against the same loss written by hand in real parts (DFT matrices), eagerly
  and replayed, and ``grad`` with a complex argument against the same function of its real
  pair.
"""

import sys
import threading
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import jittape  # noqa: E402
from benchmarks.common import median_time as timed  # noqa: E402
from jittape.numpy import prealloc  # noqa: E402


def residual_prealloc(p):
    r = np.zeros(2 * p.size - 2)
    r[0::2] = 10.0 * (p[1:] - p[:-1] ** 2)
    r[1::2] = 1.0 - p[:-1]
    return np.sum(r ** 2)


def residual_functional(p):
    r = np.stack([10.0 * (p[1:] - p[:-1] ** 2), 1.0 - p[:-1]], axis=1).reshape(-1)
    return np.sum(r ** 2)


def f_second(x):
    return np.sum(np.sin(x) * x ** 2) + np.sum(np.tanh(x[1:] * x[:-1]))


def zeros_rows():
    rows = [("np.zeros(10) before any recording (NumPy's own)", timed(lambda: np.zeros(10)),
             None)]
    jittape.grad(lambda x: np.sum(np.zeros(3) + x))(np.ones(3))
    rows.append(("np.zeros(10) after a recording", timed(lambda: np.zeros(10)), 0))
    started, done = threading.Event(), threading.Event()

    def recording(x):
        started.set()
        done.wait(60)
        return np.sum(x)
    th = threading.Thread(target=lambda: jittape.grad(recording)(np.ones(3)))
    th.start()
    started.wait(60)
    rows.append(("np.zeros(10) on another thread while a recording runs",
                 timed(lambda: np.zeros(10)), 0))
    done.set()
    th.join()
    rec = prealloc.recording(None)

    def enter_exit():
        with rec:
            pass
    rows.append(("a recording's entry and exit (replacements in and out)", timed(enter_exit),
                 None))
    return rows


def residual_rows(n):
    x = np.linspace(-1.0, 1.0, n)
    rows = []
    for name, f in (("concatenated (np.stack)", residual_functional),
                    ("preallocated (np.zeros + writes)", residual_prealloc)):
        g = jittape.grad(f)
        rows.append((f"eager grad, residual {name}, n = {n}", timed(lambda: g(x)), None))
    base = rows[0][1]
    rows[1] = rows[1][:2] + (base,)
    for name, f in (("concatenated", residual_functional), ("preallocated", residual_prealloc)):
        t = jittape.taped(f)
        t.grad(x)
        jittape.wait_compiled()  # the steady state: the compiled tape
        rows.append((f"replayed taped(f).grad, compiled, residual {name}, n = {n}",
                     timed(lambda: t.grad(x)), None))
    rows[3] = rows[3][:2] + (rows[2][1],)
    return rows


def second_rows(n):
    x, v = np.linspace(-1.0, 1.0, n), np.cos(np.arange(n))
    hvp = jittape.hvp(f_second)
    nested = jittape.grad(lambda z: np.vdot(jittape.grad(f_second)(z), v))
    assert np.allclose(hvp(x, v), nested(x), rtol=1e-12, atol=1e-12)
    rows = [(f"eager hvp(f)(x, v), n = {n}", timed(lambda: hvp(x, v)), None)]
    rows.append((f"eager grad of vdot(grad(f), v), n = {n}", timed(lambda: nested(x)),
                 rows[0][1]))
    tape = jittape.record(f_second, x)
    taped = jittape.taped(lambda z: np.vdot(jittape.grad(f_second)(z), v))
    tape.hvp(x, v=v), taped.grad(x)
    jittape.wait_compiled()
    rows.append(("replayed: tape.hvp(x, v)", timed(lambda: tape.hvp(x, v=v)), None))
    rows.append(("replayed: taped(grad of vdot(grad f, v)).grad(x)", timed(lambda: taped.grad(x)),
                 rows[2][1]))
    rows += third_rows(x, v)
    small = x[:10]
    hess = jittape.hessian(f_second)
    jac = jittape.jacobian(jittape.grad(f_second))
    rows.append(("eager hessian(f), n = 10", timed(lambda: hess(small), repeat=3), None))
    rows.append(("eager jacobian(grad(f)), n = 10", timed(lambda: jac(small), repeat=3),
                 rows[-1][1]))
    return rows


def as_user(fn, calls=200):
    """What a script sees: the first call, then the mean of the next ``calls`` calls, with
    no ``wait_compiled()`` (background compiles land when they land)."""
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return first, (time.perf_counter() - t0) / calls


def third_rows(x, v):
    """Third order at n = 50: d/dx <v, H(x) v>, three nested gradients, against the
    forward-over-reverse hvp's own gradient where both apply."""
    inner = lambda z: np.vdot(jittape.grad(f_second)(z), v)  # noqa: E731
    third_f = lambda z: np.vdot(jittape.grad(inner)(z), v)  # noqa: E731
    third = jittape.grad(third_f)
    hvp_grad = jittape.grad(lambda z: np.vdot(jittape.hvp(f_second)(z, v), v))
    assert np.allclose(third(x), hvp_grad(x), rtol=1e-10, atol=1e-10)
    n = x.size
    rows = [(f"eager grad of vdot(hvp(f)(x, v), v) (third order), n = {n}",
             timed(lambda: hvp_grad(x)), None),
            (f"eager grad of vdot(grad(vdot(grad(f), v)), v) (third order), n = {n}",
             timed(lambda: third(x)), None)]
    rows[1] = rows[1][:2] + (rows[0][1],)
    taped = jittape.taped(third_f)
    first, mean = as_user(lambda: taped.grad(x))
    rows.append(("taped(third order).grad(x) as a script sees it: the first call", first, None))
    rows.append(("... the next 200 calls (mean; no wait_compiled)", mean, None))
    jittape.wait_compiled()
    rows.append(("... the steady state (after wait_compiled)", timed(lambda: taped.grad(x)),
                 None))
    return rows


def spectral_complex(x):  # a spectral loss as written with NumPy's complex FFT
    return np.sum(np.abs(np.fft.rfft(x)) ** 2 * np.arange(x.size // 2 + 1))


def spectral_real(x):  # the same loss written by hand in real parts (DFT matrices)
    n = x.size
    angle = 2.0 * np.pi * np.outer(np.arange(n // 2 + 1), np.arange(n)) / n
    re, im = np.cos(angle) @ x, np.sin(angle) @ x
    return np.sum((re * re + im * im) * np.arange(n // 2 + 1))


def complex_rows(n):
    x = np.cos(np.arange(n) * 0.3)
    assert np.isclose(spectral_complex(x), spectral_real(x), rtol=1e-12)
    rows = []
    for name, f in (("written in real parts", spectral_real),
                    ("with np.fft.rfft and np.abs (complex values)", spectral_complex)):
        g = jittape.grad(f)
        rows.append((f"eager grad, spectral loss {name}, n = {n}", timed(lambda: g(x)), None))
    rows[1] = rows[1][:2] + (rows[0][1],)
    for name, f in (("real parts", spectral_real), ("complex values", spectral_complex)):
        t = jittape.taped(f)
        t.grad(x)
        jittape.wait_compiled()
        rows.append((f"replayed taped(f).grad, compiled, spectral loss in {name}",
                     timed(lambda: t.grad(x)), None))
    rows[3] = rows[3][:2] + (rows[2][1],)
    z = x + 1j * np.sin(np.arange(n))
    pair = np.concatenate([z.real, z.imag])
    g_pair = jittape.grad(lambda p: np.sum(p[:n] ** 2 + p[n:] ** 2) + np.sum(p[:n] * p[n:]))
    g_complex = jittape.grad(lambda z: np.sum(np.abs(z) ** 2) + np.sum(z.real * z.imag))
    rows.append((f"eager grad of a real pair (x, y), n = {n}", timed(lambda: g_pair(pair)),
                 None))
    rows.append((f"eager grad of a complex argument z (JAX's convention), n = {n}",
                 timed(lambda: g_complex(z)), rows[4][1]))
    return rows


def markdown(rows, elapsed):
    lines = ["# Preallocated arrays, nested derivatives and complex values: what they cost", "",
             "`python benchmarks/bench_idioms.py` (see its docstring); one process, medians "
             f"of repeated timings after one warm-up call; {elapsed:.0f} s.", "",
             "| what | time | ratio |", "|---|---:|---:|"]
    for name, t, base in rows:
        if base == 0:  # against NumPy's np.zeros (the first row)
            base = rows[0][1]
        ratio = f"{t / base:.2f}x" if base else ""
        unit = f"{t * 1e9:.0f} ns" if t < 1e-6 else f"{t * 1e6:.1f} µs" if t < 1e-3 else \
            f"{t * 1e3:.2f} ms"
        lines.append(f"| {name} | {unit} | {ratio} |")
    lines += ["", "Ratios: against the row before (the first row for `np.zeros`)."]
    return "\n".join(lines) + "\n"


def main():
    t0 = time.perf_counter()
    rows = zeros_rows() + residual_rows(100) + second_rows(50) + complex_rows(64)
    text = markdown(rows, time.perf_counter() - t0)
    (HERE / "results" / "idioms.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()

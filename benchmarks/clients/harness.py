"""One check of the clients suite: a library's function differentiated by jittape, compared
with the library's analytic derivative or with central differences of the library's own
function, and timed.

A check is a :class:`Problem` (the library function ``f`` of a float vector, the point, a
second point for replay, the library's analytic derivative if it has one) built by a
:class:`Case`. :func:`check` runs it and returns one result row (a dict, JSON-ready):

* ``status``: ``pass``; ``error`` (jittape raised: ``cause`` holds the exception type, the first
  line of its message normalised, the library frame it came through and jittape's frame);
  ``wrong`` (silent wrong: a finite value or derivative that disagrees, or nan/inf where the
  reference is finite; ``wrong`` says which, and ``warned`` names the warning jittape gave,
  a TieWarning, when it did: then the result is wrong but not silent); ``unreliable`` (no trustworthy reference: the
  central differences at two step sizes disagree or are not finite, and there is no analytic
  derivative; not counted in pass rates); ``setup`` (the library itself failed on the case:
  not jittape's, not counted); ``timeout`` and ``crash`` (from the runner).
* ``replay``: the same verdict for ``jittape.record(f, x)`` replayed at the second point.
* ``times``: seconds per call of the library function, the eager jittape derivative, the
  replayed one and the library's analytic one, sampled round-robin in this process.

The library frame of an error is the innermost traceback frame in a client library's package
(SciPy, statsmodels, scikit-learn, lmfit, ...; NumPy's own Python code is skipped over).
"""

import re
import time
import traceback
import warnings
from dataclasses import dataclass, field

import numpy as np

RTOL_FD, RTOL_EXACT = 1e-5, 1e-7     # derivative checks: against central differences / exact
VALUE_RTOL = 1e-8                    # jittape's value against the library's
STEP = 1e-6                          # central differences: step relative to max(|x_i|, 1)
NOISE = 1e-13                        # relative accuracy assumed of the library's function
LIBRARY_PACKAGES = ("scipy", "statsmodels", "sklearn", "lmfit", "patsy", "pandas", "asteval")


@dataclass
class Problem:
    """``f(x) -> float``: the library code differentiated. ``analytic(x)``: the library's
    own derivative (gradient, or Hessian when ``order == 2``), if any. ``fvec(x)``: ``f``
    elementwise (``sum(fvec(x)) == f(x)``, element i depending on ``x_i`` only), so that
    central differences take four calls. ``hess_from``: a gradient whose central differences
    are the Hessian reference (the library's analytic score), else second differences of
    ``f``. ``extra()``: more figures for the row (called after the checks)."""

    f: object
    x: np.ndarray
    x2: np.ndarray = None
    analytic: object = None
    order: int = 1
    fvec: object = None
    hess_from: object = None
    analytic_name: str = ""
    note: str = ""
    extra: object = None


@dataclass
class Case:
    """A named check; ``build()`` returns its :class:`Problem` (or, for checks that run
    elsewhere, ``run()`` returns finished rows). ``quick``: in the ``--quick`` subset."""

    library: str
    name: str
    build: object = None
    quick: bool = False
    group: str = ""
    check: str = ""
    run: object = None
    meta: dict = field(default_factory=dict)


class CaseTimeout(BaseException):
    """The per-case time limit (a BaseException: library code's ``except Exception`` must
    not swallow it)."""


# --- references ----------------------------------------------------------------------------
def steps(x, scale=1.0):
    return STEP * scale * np.maximum(np.abs(x), 1.0)


def central_grad(f, x, h, fvec=None):
    """Central differences of ``f`` at ``x`` with steps ``h`` (per component)."""
    x = np.asarray(x, dtype=float)
    if fvec is not None:
        return (np.asarray(fvec(x + h), float) - np.asarray(fvec(x - h), float)) / (2 * h)
    g = np.empty(x.size)
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = h.flat[i]
        g[i] = (float(f((x.ravel() + e).reshape(x.shape)))
                - float(f((x.ravel() - e).reshape(x.shape)))) / (2 * h.flat[i])
    return g.reshape(x.shape)


def central_hess(f, x, h, grad=None):
    """The Hessian by central differences: of ``grad`` if given, else second differences
    of ``f`` (symmetrised)."""
    n = x.size
    H = np.empty((n, n))
    if grad is not None:
        for i in range(n):
            e = np.zeros(n)
            e[i] = h[i]
            H[:, i] = (np.asarray(grad(x + e), float).ravel()
                       - np.asarray(grad(x - e), float).ravel()) / (2 * h[i])
        return (H + H.T) / 2
    f0 = float(f(x))
    for i in range(n):
        for j in range(i, n):
            ei, ej = np.zeros(n), np.zeros(n)
            ei[i], ej[j] = h[i], h[j]
            if i == j:
                H[i, i] = (float(f(x + ei)) - 2 * f0 + float(f(x - ei))) / h[i] ** 2
            else:
                H[i, j] = H[j, i] = (float(f(x + ei + ej)) - float(f(x + ei - ej))
                                     - float(f(x - ei + ej)) + float(f(x - ei - ej))) \
                    / (4 * h[i] * h[j])
    return H


def tolerance(ref, rtol, f0=0.0, h=None, order=1):
    """Per-component tolerance: ``rtol |ref_i|`` plus an absolute part scaled to the
    largest component and, for differences, to the rounding noise ``NOISE |f| / h^order``."""
    ref = np.asarray(ref, float)
    big = float(np.max(np.abs(ref))) if ref.size and np.all(np.isfinite(ref)) else 0.0
    atol = rtol * 0.1 * big + 1e-300
    if h is not None:
        atol = atol + NOISE * max(abs(f0), 1.0) / float(np.min(h)) ** order
    return rtol * np.abs(ref) + atol


def fd_reference(p, x, f0):
    """``(reference, tolerance)`` by central differences at ``x``, or ``(None, reason)``.

    Two step sizes must agree (h and 10 h, h = 1e-6 max(|x_i|, 1); if they do not, h / 10
    and h, then h / 100 and h / 10, for functions curved on the scale of h, such as a
    density near the edge of its support): within half the comparison's tolerance, so that
    what fails the comparison is jittape's error, not the reference's."""
    reason = "central differences not finite"
    for scale in (1.0, 0.1, 0.01):
        noise_order, fscale = 1, f0
        if p.order == 1:
            h = steps(x, scale)
            d1, d2 = central_grad(p.f, x, h, p.fvec), central_grad(p.f, x, 10 * h, p.fvec)
        elif p.hess_from is not None:   # differences of the library's analytic gradient
            h = steps(x, scale)
            d1, d2 = central_hess(p.f, x, h, p.hess_from), central_hess(p.f, x, 10 * h,
                                                                         p.hess_from)
            fscale = float(np.max(np.abs(p.hess_from(x))))
        else:                           # second differences of the function
            h, noise_order = steps(x, 1e2 * scale), 2
            d1, d2 = central_hess(p.f, x, h), central_hess(p.f, x, 2 * h)
        if not (np.all(np.isfinite(d1)) and np.all(np.isfinite(d2))):
            continue
        tol = tolerance(d1, RTOL_FD if p.order == 1 else 10 * RTOL_FD, fscale, h,
                        noise_order)
        if np.all(np.abs(d1 - d2) <= 0.5 * tol):
            return d1, tol
        i = int(np.argmax(np.abs(d1 - d2) / tol))
        reason = (f"central differences at two steps disagree (component {i}: "
                  f"{d1.flat[i]:.6g} vs {d2.flat[i]:.6g})")
    return None, reason


def compare(got, ref, tol):
    """``None`` if ``got`` matches, else the kind of silent wrong and the largest error."""
    try:
        got = np.asarray(got, dtype=float).reshape(np.shape(ref))
    except (TypeError, ValueError):
        return "shape", float("inf")
    err = float(np.max(np.abs(got - ref) / tol)) if np.size(ref) else 0.0
    if not np.all(np.isfinite(got)):
        return "nan", float("inf")
    return (None, err) if err <= 1.0 else ("derivative", err)


def verdict(p, x, f0, got):
    """Compare jittape's derivative at ``x`` with the reference: the library's analytic one
    when jittape agrees with it or it agrees with central differences, else central
    differences. Returns a dict (``ok``: True, False or None for no reference; ``wrong``,
    ``reference``, ``err``: the largest |error| / tolerance, ``note``)."""
    fd, fd_tol = None, None
    if p.analytic is not None:
        a = np.asarray(p.analytic(x), dtype=float)
        if a.size == np.size(got):
            a = a.reshape(np.shape(got))
        tol = tolerance(a, RTOL_EXACT)
        wrong, err = compare(got, a, tol)
        if wrong is None:
            return dict(ok=True, reference=p.analytic_name or "analytic", err=err)
        fd, fd_tol = fd_reference(p, x, f0)
        if fd is None:   # no check of the analytic one: believe it
            return dict(ok=False, wrong=wrong, reference=p.analytic_name or "analytic",
                        err=err, note=fd_tol)
        if compare(a, fd, fd_tol)[0] is None:
            return dict(ok=False, wrong=wrong, reference=p.analytic_name or "analytic",
                        err=err)
        wrong, err = compare(got, fd, fd_tol)
        return dict(ok=wrong is None, wrong=wrong, reference="central differences", err=err,
                    note=f"the library's {p.analytic_name or 'analytic derivative'} differs "
                         f"from central differences of its function")
    fd, fd_tol = fd_reference(p, x, f0)
    if fd is None:
        return dict(ok=None, reference="central differences", note=fd_tol)
    wrong, err = compare(got, fd, fd_tol)
    return dict(ok=wrong is None, wrong=wrong, reference="central differences", err=err)


# --- errors --------------------------------------------------------------------------------
def _short(path):
    path = path.replace("\\", "/")
    for marker in ("/site-packages/", "/dist-packages/"):
        if marker in path:
            return path.split(marker, 1)[1]
    if "/jittape/" in path:
        return "jittape/" + path.rsplit("/jittape/", 1)[1]
    return path.rsplit("/", 1)[-1]


def normalise(message):
    """The first line of an error message with numbers, addresses and array reprs replaced,
    so that one cause met at many parameter values counts once."""
    line = (message.strip().splitlines() or [""])[0]
    line = re.sub(r"0x[0-9a-fA-F]+", "0x…", line)
    line = re.sub(r"(?<![\w.])[-+]?\d+(\.\d*)?([eE][-+]?\d+)?", "N", line)
    line = re.sub(r"\b\w+_gen\b", "<dist>_gen", line)
    line = re.sub(r"\s+", " ", line)
    return line[:300]


def _frames(exc):
    return [(_short(fs.filename), fs.lineno, fs.name)
            for fs in traceback.extract_tb(exc.__traceback__)]


def cause(exc):
    """``{type, message, library_frame, jittape_frame}`` of an exception. jittape re-raises
    some errors from its recording entry (``raise ... from e``): the library frame is then
    looked for in the chained exceptions, innermost first."""
    chain, e = [], exc
    while e is not None and len(chain) < 8:
        chain.append(e)
        e = e.__cause__ or e.__context__
    lib = jt = None
    for e in reversed(chain):
        for short, line, name in reversed(_frames(e)):
            if short.split("/", 1)[0] in LIBRARY_PACKAGES:
                lib = f"{short}:{line} {name}"
                break
        if lib:
            break
    for short, line, name in reversed(_frames(exc)):
        if short.startswith("jittape/"):
            jt = f"{short}:{line} {name}"
            break
    out = dict(type=type(exc).__name__, message=normalise(str(exc) or type(exc).__name__),
               library_frame=lib, jittape_frame=jt)
    raw = (str(exc).strip().splitlines() or [""])[0][:300]
    if raw != out["message"]:
        out["raw"] = raw   # the first line as raised, numbers and all
    return out


# --- timing --------------------------------------------------------------------------------
def side_by_side(fns, target=0.004, rounds=5):
    """Median seconds per call of each ``fns[name]()``, sampled round-robin (one sample of
    each in turn, each about ``target`` seconds of back-to-back calls)."""
    numbers = {}
    for name, fn in fns.items():
        fn()
        t0 = time.perf_counter()
        fn()
        once = max(time.perf_counter() - t0, 1e-7)
        numbers[name] = max(1, int(target / once))
        if once > 0.2:
            rounds = min(rounds, 3)
    samples = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(numbers[name]):
                fn()
            samples[name].append((time.perf_counter() - t0) / numbers[name])
    return {name: float(np.median(s)) for name, s in samples.items()}


# --- one check -----------------------------------------------------------------------------
def _derivative(p, x):
    import jittape
    if p.order == 1:
        return jittape.value_and_grad(p.f)(x)
    return float(p.f(x)), jittape.hessian(p.f)(x)


def _tie_warned(run):
    """``run()`` and whether jittape warned of an exact tie in a comparison (TieWarning:
    the derivative may be a one-point branch's; a wrong result then is not silent)."""
    import jittape
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", jittape.TieWarning)
        out = run()
    return out, any(issubclass(w.category, jittape.TieWarning) for w in caught)


def check(p, timing=True, target=0.004, rounds=5):
    """Run one :class:`Problem`; returns the row fields (see the module docstring)."""
    import jittape
    row = dict(note=p.note)
    x = np.asarray(p.x, dtype=float)
    try:
        f0 = float(p.f(x))
        if not np.isfinite(f0):
            raise ValueError(f"the library's function is {f0} at the point")
    except Exception as exc:  # the library itself fails: not jittape's
        return dict(row, status="setup", cause=cause(exc))
    row["n"] = int(x.size)
    try:
        (val, got), warned = _tie_warned(lambda: _derivative(p, x))
    except Exception as exc:
        return dict(row, status="error", cause=cause(exc))
    v = verdict(p, x, f0, got)
    row.update(reference=v["reference"], err=v.get("err"))
    if v.get("note"):
        row["note"] = "; ".join(filter(None, [p.note, v["note"]]))
    if not (np.isfinite(val) and abs(val - f0) <= VALUE_RTOL * max(abs(f0), 1e-300)):
        row.update(status="wrong", wrong="value", value=float(val), library_value=f0)
    elif v["ok"] is None:
        row["status"] = "unreliable"
    elif v["ok"]:
        row["status"] = "pass"
    else:
        row.update(status="wrong", wrong=v["wrong"])
    if row["status"] == "wrong" and not np.all(np.isfinite(np.asarray(got, float))):
        row["wrong"] = "nan"
    if row["status"] == "wrong" and warned:
        row["warned"] = "TieWarning"
    row["replay"] = _replay(p, x) if p.x2 is not None else None
    if timing and row["status"] == "pass":
        try:
            row["times"] = _times(p, x, target, rounds)
        except Exception as exc:
            row["times_error"] = cause(exc)
    if p.extra is not None:
        try:
            row["extra"] = p.extra()
        except Exception as exc:
            row["extra"] = dict(error=cause(exc))
    return row


def _replay(p, x):
    import jittape
    x2 = np.asarray(p.x2, dtype=float)
    out = {}
    try:
        tape, warned = _tie_warned(lambda: jittape.record(p.f, x))
        out["records"] = int(tape.n_records)
        got = tape.gradient(x2) if p.order == 1 else tape.hessian(x2)
    except Exception as exc:
        return dict(out, status="error", cause=cause(exc))
    try:
        f2 = float(p.f(x2))
        v = verdict(p, x2, f2, got)
    except Exception as exc:
        return dict(out, status="setup", cause=cause(exc))
    out.update(reference=v["reference"], err=v.get("err"))
    out["status"] = "unreliable" if v["ok"] is None else "pass" if v["ok"] else "wrong"
    if out["status"] == "wrong":
        out["wrong"] = v["wrong"]
        if warned:
            out["warned"] = "TieWarning"
    return out


def _times(p, x, target, rounds):
    import jittape
    x2 = np.asarray(p.x2 if p.x2 is not None else p.x, dtype=float)
    eager = jittape.grad(p.f) if p.order == 1 else jittape.hessian(p.f)
    fns = {"function": lambda: p.f(x), "eager": lambda: eager(x)}
    try:
        tape = jittape.record(p.f, x)
        sweep = tape.gradient if p.order == 1 else tape.hessian
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 0.05:   # let the tape tier up before timing
            sweep(x2)
        fns["replay"] = lambda: sweep(x2)
    except Exception:
        pass
    if p.analytic is not None:
        fns["analytic"] = lambda: p.analytic(x)
    jittape.wait_compiled()
    return side_by_side(fns, target, rounds)

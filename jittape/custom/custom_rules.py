"""Custom derivative rules: :func:`custom_vjp` and :func:`custom_jvp`, in JAX's convention.

A custom rule replaces the derivative jittape would take of a function by one the user
writes: a numerically safe formula (``log(1 + exp(x))`` at large ``x``), a deliberately
different one (gradient clipping), or one that the recorded operations cannot give (the
implicit function theorem for a root found by ``scipy.optimize.brentq``). The rule is
ordinary NumPy code, and it is **recorded on the tape** like everything else, in a *region*
that the ordinary sweeps jump over and that the custom record's own rule runs (the ops and
their rules: :mod:`jittape.optable.rules.custom`). So a custom rule works wherever a tape goes: in
eager gradients, in replayed tapes at new inputs (``record``, ``taped``), in saved and
loaded tapes, and under ``hessian``/``hvp``, where the recorded ``bwd`` is differentiated in
turn. Called without active arguments, a custom function is just the plain function.

Sources: JAX's ``jax.custom_vjp`` and ``jax.custom_jvp`` (the conventions, and the refusal
of forward mode through a custom VJP); Griewank & Walther, "Evaluating Derivatives", 2nd ed.,
SIAM 2008, sec. 6.1 (user-defined elementals in taping tools such as ADOL-C's external
functions) and ch. 15 (implicit functions).
"""

import functools
import threading

import numpy as np

from ..optable import callpool
from ..numpy.active import Active, new_active, tape_of, const
from .._base.errors import NotDifferentiableError
from ..numpy.object_arrays import from_objects
from ..optable.table import OPS, codes as K, operands
from ..tape.arrays import ENTRY_DTYPE, ENTRY

_CONTAINERS = (tuple, list, dict)


# --- arguments: (nested) tuples, lists and dicts of actives and constants ------------------
def _leaves(x, out):
    if isinstance(x, dict):
        for v in x.values():
            _leaves(v, out)
    elif isinstance(x, (tuple, list)):
        for v in x:
            _leaves(v, out)
    else:
        out.append(x)
    return out


def _map(x, fn):
    """``x`` with every leaf replaced by ``fn(leaf)`` (containers rebuilt, namedtuples too)."""
    if isinstance(x, dict):
        return {k: _map(v, fn) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        vals = [_map(v, fn) for v in x]
        if hasattr(x, "_fields"):
            return type(x)(*vals)
        return type(x)(vals)
    return fn(x)


def _pairs(arg, ct, where, out):
    """Append ``(active leaf of arg, its cotangent leaf)`` for ``ct`` of arg's structure
    (``None`` anywhere: no cotangent for what is below it)."""
    if ct is None:
        for leaf in _leaves(arg, []):
            if isinstance(leaf, Active):
                out.append((leaf, None))
        return out
    if isinstance(arg, dict):
        if not isinstance(ct, dict) or set(ct) != set(arg):
            raise TypeError(f"{where}: a dict with the keys {sorted(arg)} (or None) expected, "
                            f"got {type(ct).__name__}")
        for k in arg:
            _pairs(arg[k], ct[k], f"{where}[{k!r}]", out)
    elif isinstance(arg, (tuple, list)):
        if not isinstance(ct, (tuple, list)) or len(ct) != len(arg):
            raise TypeError(f"{where}: a {type(arg).__name__} of {len(arg)} (or None) "
                            f"expected, got {type(ct).__name__}")
        for j, (a, c) in enumerate(zip(arg, ct)):
            _pairs(a, c, f"{where}[{j}]", out)
    elif isinstance(arg, Active):
        out.append((arg, ct))
    return out


class _Custom:
    """What custom_vjp and custom_jvp share: the wrapped function and its arguments."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted(int(n) for n in nondiff_argnums))
        self._inside = threading.local()  # .depth: recording this function's own rule

    def _own_rule(self):
        """Whether this thread is recording this function's rule: there, as in JAX, a call
        of the function itself (``fwd`` returning ``f(x)``) is the plain function."""
        return getattr(self._inside, "depth", 0) > 0

    def _run(self, fn, *args, **kwargs):
        self._inside.depth = getattr(self._inside, "depth", 0) + 1
        try:
            return fn(*args, **kwargs)
        finally:
            self._inside.depth -= 1

    @property
    def _name(self):
        return getattr(self.fun, "__name__", "the custom function")

    def __get__(self, obj, cls=None):  # a method: bind like a function
        return self if obj is None else functools.partial(self, obj)

    def _split(self, args, kwargs):
        """``(tape, nondiff args, diff args)``, or None when nothing is active."""
        leaves = _leaves(list(args), [])
        if not any(isinstance(v, Active) for v in leaves):
            if any(isinstance(v, Active) for v in _leaves(list(kwargs.values()), [])):
                raise TypeError(f"{self._name}: pass differentiated arguments of a custom "
                                f"rule positionally, not as keywords")
            return None
        if any(isinstance(v, Active) for v in _leaves(list(kwargs.values()), [])):
            raise TypeError(f"{self._name}: pass differentiated arguments of a custom rule "
                            f"positionally, not as keywords")
        nd = self.nondiff_argnums
        for n in nd:
            if n >= len(args):
                raise TypeError(f"{self._name}: nondiff_argnums={nd} but it was called with "
                                f"{len(args)} positional argument(s)")
            if any(isinstance(v, Active) for v in _leaves([args[n]], [])):
                raise NotDifferentiableError(
                    f"{self._name}: argument {n} is in nondiff_argnums but depends on the "
                    f"differentiated inputs; pass it as a differentiated argument")
        t = tape_of(*[v for v in leaves if isinstance(v, Active)])
        return (t, [args[n] for n in nd],
                [(n, a) for n, a in enumerate(args) if n not in nd])

    def _full(self, nondiff, diff):
        """The positional arguments in their order again."""
        args, it_nd, it_d = [], iter(nondiff), iter(diff)
        for n in range(len(nondiff) + len(diff)):
            args.append(next(it_nd) if n in self.nondiff_argnums else next(it_d))
        return args

    # --- recording ---
    def _enter(self, args, kwargs, rule, define):
        """None when the call runs the function plainly (no active argument, or inside its
        own rule), else ``(tape, nondiff args, diff args, first record, xs, stopped args)``
        (:meth:`_stops`). Raises TypeError if ``rule`` was not set (``define``: how)."""
        split = None if self._own_rule() else self._split(args, kwargs)
        if split is None:
            return None
        if rule is None:
            raise TypeError(f"{self._name} is a {type(self).__name__} function without a "
                            f"rule: call {self._name}.{define} first")
        t, nondiff, diff = split
        begin = t.n
        return (t, nondiff, diff, begin) + self._stops(t, diff)

    def _stops(self, t, diff):
        """Each active leaf ``x`` replaced by a CUSTOM_ARG record of it (value and
        tangent of x, no adjoint): ``(xs, stopped args)``."""
        xs = []

        def stop(v):
            if not isinstance(v, Active):
                return v
            xs.append(v)
            value = v._v.copy() if isinstance(v._v, np.ndarray) else float(v._v)
            return new_active(Active, t, K.CUSTOM_ARG, v._i, -1, 0, 0.0, value)
        return xs, [_map(a, stop) for _, a in diff]

    def _primal_out(self, t, y, who):
        """The (single) output of ``who`` as an active record."""
        if type(y) is np.ndarray and y.dtype == object:
            y = from_objects(y)
        if isinstance(y, Active):
            return y
        if isinstance(y, _CONTAINERS):
            raise TypeError(f"{who} of {self._name} returned a {type(y).__name__}: a custom "
                            f"rule's function returns one float or array (concatenate several)")
        try:
            v = np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{who} of {self._name} returned {type(y).__name__}, not a float "
                            f"or an array") from None
        return const(t, v if v.ndim else float(v))

    def _open(self, t):
        return t.push_scalar(K.CUSTOM_BEGIN, -1, -1, 0, 0.0, 0.0)

    def _slot(self, t, shape, fill):
        return new_active(Active, t, K.CUSTOM_SLOT, -1, -1, 0, 0.0,
                    np.full(shape, fill) if shape else float(fill))

    def _close(self, t, code, begin, r, y0, xs, slots, results):
        """Check the records of the rule (from ``begin``, the first argument's
        custom_arg), close the region ``r`` and append the call record; returns the
        active output."""
        check_records(t, begin, begin + len(xs), r, self._name)
        c = t.n
        _, a, b, _, cv, v = ENTRY.unpack_from(t.entries, r << 5)
        ENTRY.pack_into(t.entries, r << 5, K.CUSTOM_BEGIN, a, b, c, cv, v)  # k: the owner
        parts = [y0, *xs, *slots, *results]
        k = t.push_call(callpool.encode(parts, r, len(xs), self._name))
        v = y0._v.copy() if isinstance(y0._v, np.ndarray) else float(y0._v)
        return new_active(Active, t, code, y0._i, r, k, 0.0, v)


def check_records(t, begin, after, r, name):
    """Refuse what the rule's records may not do: read an active value of the enclosing
    computation other than through the function's arguments (a closure: no derivative would
    reach it), and guard control flow inside the region (its outcome could change with the
    cotangent or the tangents, which the tape never re-records)."""
    end = t.n
    e = np.frombuffer(bytes(t.entries[begin << 5:end << 5]), dtype=ENTRY_DTYPE)
    ops = e["op"]
    checks = np.array([op.checks for op in OPS])[ops]
    checks[:max(r - begin, 0)] = False
    if checks.any():
        raise NotDifferentiableError(
            f"the derivative rule of {name} used Python control flow on an active value (a "
            f"guard: if, a mask, jittape.primal...). Inside a custom rule's bwd or jvp that is "
            f"not supported: write the choice with np.where, or make it in the function's "
            f"forward pass and pass it on as a residual")
    view = _Columns(e, t.pool, begin)
    outside = set()
    for j in range(after - begin, end - begin):  # (the custom_args read the arguments)
        for q in operands(view, j):
            if q < begin:
                outside.add(q)
    for q in outside:
        if ENTRY.unpack_from(t.entries, q << 5)[0] != K.CONST:
            raise NotDifferentiableError(
                f"{name} or its derivative rule uses an active value that is not one of its "
                f"arguments (record v{q}, a closure over a value being differentiated): no "
                f"derivative would reach it. Pass it as an argument of {name}.")


class _Columns:
    """Records ``begin..`` of a recorder as the columns :func:`jittape.optable.table.operands` reads
    (record ids shifted by ``begin``, the pool shared)."""

    def __init__(self, e, pool, begin):
        self.op, self.a, self.b, self.k, self.pool = e["op"], e["a"], e["b"], e["k"], pool
        self.begin = begin


class custom_vjp(_Custom):
    """A function with a custom reverse-mode rule, in JAX's convention (``jax.custom_vjp``).

    ``f = jittape.custom_vjp(f)`` (or ``@jittape.custom_vjp``), then ``f.defvjp(fwd, bwd)``:

    * ``fwd(*args) -> (y, residuals)``: the value ``y`` (a float or an array) and anything
      ``bwd`` needs (a tuple, an array, any structure of active and plain values);
    * ``bwd(residuals, ybar) -> cotangents``: a tuple with one entry per positional argument
      of ``f`` (``nondiff_argnums`` excepted), each ``None`` (no cotangent) or of its
      argument's structure and shapes, giving ``ybar^T dy/dx``. ``ybar`` has ``y``'s shape.
      ``bwd`` must be linear in ``ybar`` (a zero cotangent gives zero).

    Both are ordinary NumPy code, recorded on the tape (``bwd`` in a region that only the
    custom record's reverse rule runs), so the rule holds in replayed and saved tapes, and
    ``hessian``/``hvp`` differentiate ``bwd`` through its residuals. Arguments listed in
    ``nondiff_argnums`` are passed to ``fwd`` in place and to ``bwd`` first, as in JAX;
    they must not be active. Without active arguments ``f(*args)`` is the plain function.

    Raises
    ------
    NotDifferentiableError
        Forward mode (``jvp``, ``jacobian(mode="forward")``, ``sparse_jacobian``,
        ``trace_jvp``) of a tape holding it: custom_vjp defines no forward-mode rule (use
        grad/vjp, or :class:`custom_jvp`). At record time: ``fwd`` or ``bwd`` reads an active
        value that is not an argument (a closure), or ``bwd`` guards control flow on an
        active value.
    TypeError, ValueError
        ``defvjp`` missing, ``fwd`` not returning a pair, ``bwd`` not returning a tuple of
        the right length, or a cotangent of the wrong structure or shape.

    Notes
    -----
    Recording ``y = f(x)`` appends ``x' = custom_arg(x)`` per active leaf (value and
    tangent of ``x``, no adjoint), ``fwd(x')``'s records, a region holding a placeholder for
    ``ybar`` and ``bwd``'s records, and one ``custom_vjp`` record: its reverse rule puts
    ``adj[y]`` into the placeholder, runs the forward sweep over the region and adds the
    results to the adjoints of the ``x``. See :mod:`jittape.optable.rules.custom`.
    """

    fwd = bwd = None

    def defvjp(self, fwd, bwd):
        """Set the rule: ``fwd(*args) -> (y, residuals)``, ``bwd(residuals, ybar) -> tuple
        of cotangents`` (one per positional argument, None allowed). Returns None."""
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        entered = self._enter(args, kwargs, self.fwd, "defvjp(fwd, bwd)")
        if entered is None:
            return self.fun(*args, **kwargs)
        t, nondiff, diff, begin, xs, stopped = entered
        out = self._run(self.fwd, *self._full(nondiff, stopped), **kwargs)
        if not isinstance(out, tuple) or len(out) != 2:
            raise TypeError(f"fwd of {self._name} must return a pair (y, residuals), got "
                            f"{type(out).__name__}")
        y0 = self._primal_out(t, out[0], "fwd")
        r = self._open(t)
        ybar = self._slot(t, np.shape(y0._v), 1.0)
        cts = self._run(self.bwd, *nondiff, out[1], ybar)
        if not isinstance(cts, (tuple, list)) or len(cts) != len(diff):
            raise TypeError(
                f"bwd of {self._name} must return a tuple of {len(diff)} cotangent(s), one "
                f"per positional argument (None for no cotangent), got "
                f"{type(cts).__name__}" + (f" of {len(cts)}" if isinstance(cts, (tuple, list))
                                           else ""))
        pairs = []
        for (n, arg), ct in zip(diff, cts):
            _pairs(arg, ct, f"cotangent of argument {n} from bwd of {self._name}", pairs)
        results = [self._cotangent(t, x, ct) for x, ct in pairs]
        return self._close(t, K.CUSTOM_VJP, begin, r, y0, xs, [ybar], results)

    def _cotangent(self, t, x, ct):
        shape = np.shape(x._v)
        if ct is None:
            return const(t, np.zeros(shape) if shape else 0.0)
        if type(ct) is np.ndarray and ct.dtype == object:
            ct = from_objects(ct)
        if np.shape(ct._v if isinstance(ct, Active) else ct) != shape:
            got = np.shape(ct._v if isinstance(ct, Active) else ct)
            raise ValueError(f"bwd of {self._name} returned a cotangent of shape {got} for an "
                             f"argument of shape {shape}")
        if isinstance(ct, Active):
            tape_of(x, ct)
            return ct
        v = np.asarray(ct, dtype=np.float64)
        return const(t, v if v.ndim else float(v))


class custom_jvp(_Custom):
    """A function with a custom forward-mode rule, in JAX's convention (``jax.custom_jvp``).

    ``g = jittape.custom_jvp(g)`` (or ``@jittape.custom_jvp``), then ``g.defjvp(jvp)`` (or
    ``@g.defjvp`` on the rule): ``jvp(primals, tangents) -> (y, ydot)``, where ``primals``
    and ``tangents`` are tuples of ``g``'s positional arguments and of their tangents (same
    structures and shapes; plain, non-differentiated arguments get zero tangents). ``ydot``
    must be **linear in the tangents** (JAX's requirement too): jittape's reverse mode is the
    transpose of that linear map, taken on the recorded rule.

    The primal value is ``g(*args)``; the rule is recorded on the tape (in a region), so
    ``jvp`` and forward-mode Jacobians use it, and so do gradients (by transposition),
    replayed and saved tapes, and ``hvp``/``hessian`` (the rule differentiated through its
    primals). Arguments in ``nondiff_argnums`` go to ``jvp`` first, as in JAX.

    Raises
    ------
    NotDifferentiableError
        At record time: the rule's tangent output is not zero at zero tangents (a constant
        or affine term: not linear; the slots hold zeros while the rule is recorded, which
        is how this is seen), ``g`` or ``jvp`` reads an active value that is not an argument
        (a closure), or ``jvp`` guards control flow on an active value.
    TypeError, ValueError
        ``defjvp`` missing, ``jvp`` not returning a pair, or ``ydot``'s shape differing
        from ``y``'s.
    """

    jvp = None

    def defjvp(self, jvp):
        """Set the rule ``jvp(primals, tangents) -> (y, ydot)``; returns ``jvp`` (so that
        ``@g.defjvp`` works as a decorator)."""
        self.jvp = jvp
        return jvp

    def __call__(self, *args, **kwargs):
        entered = self._enter(args, kwargs, self.jvp, "defjvp(jvp)")
        if entered is None:
            return self.fun(*args, **kwargs)
        t, nondiff, diff, begin, xs, stopped = entered
        y0 = self._primal_out(t, self.fun(*self._full(nondiff, stopped), **kwargs), "g")
        r = self._open(t)
        slots = [self._slot(t, np.shape(x._v), 0.0) for x in xs]
        it = iter(slots)
        tangents = [_map(a, lambda v: next(it) if isinstance(v, Active) else
                         (np.zeros(np.shape(v)) if isinstance(v, (float, int, np.ndarray,
                                                                  np.generic)) else None))
                    for _, a in diff]
        out = self._run(self.jvp, *nondiff, tuple(stopped), tuple(tangents))
        if not isinstance(out, tuple) or len(out) != 2:
            raise TypeError(f"the jvp rule of {self._name} must return a pair (y, ydot), got "
                            f"{type(out).__name__}")
        ydot = self._tangent(t, out[1], r, y0)
        return self._close(t, K.CUSTOM_JVP, begin, r, y0, xs, slots, [ydot])

    def _tangent(self, t, ydot, r, y0):
        """The rule's tangent output as a record of the region. At record time the tangent
        slots are zero, so a rule linear in them gives zero: a nonzero value means an
        affine or constant term (checked here, not full linearity)."""
        shape = np.shape(y0._v)
        if type(ydot) is np.ndarray and ydot.dtype == object:
            ydot = from_objects(ydot)
        v = ydot._v if isinstance(ydot, Active) else np.asarray(ydot, dtype=np.float64)
        if np.shape(v) != shape:
            raise ValueError(f"the jvp rule of {self._name} returned a tangent of shape "
                             f"{np.shape(v)} for an output of shape {shape}")
        if np.any(np.abs(np.asarray(v, dtype=np.float64)) > 0.0):
            raise NotDifferentiableError(
                f"the jvp rule of {self._name} is not linear in the tangents: at zero "
                f"tangents its tangent output is not zero (a jvp rule's ydot must be "
                f"linear in them, as JAX requires)")
        if isinstance(ydot, Active):
            tape_of(ydot, y0)
            if ydot._i > r:
                return ydot
        return const(t, np.zeros(shape) if shape else 0.0)  # zero whatever the tangents

"""Nested differentiation: ``grad``, ``vjp``, ``jvp``, ``jacobian``, ``hessian`` and ``hvp``
called inside a function that is itself being recorded (``grad(grad(f))``,
``jacobian(grad(f))``, ``grad(lambda x: jvp(f, (x,), (v,))[1])``), to any order.

When an argument of such a call is active on an outer tape, the call records ``f`` on that
tape after slots (``x * 1.0`` copies of the arguments) and then takes the derivative one of
two ways:

* the recorded route (:mod:`jittape.api.recorded_sweep`): the reverse sweep over f's
  records, recorded as ordinary records by each op's NumPy reverse rule, gives ``J(x)^T w``
  as active values; ``J(x) v`` is the VJP of ``u -> J(x)^T u`` along ``v`` (two recorded
  sweeps). Those records differentiate again, so derivatives nest to any order, and the
  outer tape replays, compiles and saves like any other;
* the second-order route, when an op on the way has no NumPy rule, or when the outer tape
  will only be swept to first order (an eager ``grad``; the route is then as fast as a
  gradient) and no other nested derivative is being recorded around this one: the slots
  become a region's and one call record holds the derivative (``nested_vjp`` for
  ``J(x)^T w``, ``nested_jvp`` for ``J(x) v``; the op entries and their rules:
  :mod:`jittape.optable.rules.nested`), differentiated by second-order sweeps of the
  region. Its own second order would be a third derivative of ``f``: that raises
  :class:`jittape.NotDifferentiableError`, naming the ops without a rule.

Either way the results are those of the forward-over-reverse ``hvp``, and ``f`` may read
outer active values it closes over; they get their derivatives too.

Sources: the perturbation handling follows autograd and CppAD (``AD<AD<double>>``): the
inner derivative is taken with respect to fresh copies (slots) of the arguments, so a value
that is both an argument and captured in a closure is differentiated correctly (Siskind &
Pearlmutter, "Perturbation confusion and referential transparency", 2005).
"""

import numbers

import numpy as np

from ..numpy import dispatch, prealloc
from ..numpy.active import Active, const, new_active, tape_of
from ..numpy.object_arrays import to_active
from . import recorded_sweep
from .recording import normalize_argnums
from ..optable import callpool
from ..optable.table import OPS, codes as K
from ..sweeps import regions
from ..tape.arrays import ENTRY
from .._base.errors import MixedRecordings, NonScalarOutputError


def outer_tape(args):
    """The tape of the active values among ``args`` (at any depth of tuples, lists and
    dicts), or None: the call is nested when it is not None."""
    found = []
    _actives(args, found)
    return tape_of(*found) if found else None


def route(args, nested, plain):
    """``nested()`` if the call is nested, else ``plain()``. Nested: an argument is active
    on an outer tape, or ``plain()`` meets values of the recording around it (``f`` closes
    over them: :class:`MixedRecordings`), which is then recorded on that one."""
    if outer_tape(args) is not None:
        return nested()
    try:
        return plain()
    except MixedRecordings:
        if prealloc.current() is None:
            raise
    return nested()


def _tape(values):
    """The outer tape: of the active ``values``, else the recording around the call."""
    t = outer_tape(values)
    return t if t is not None else prealloc.current()


def _actives(v, out):
    t = type(v)
    if t is list or t is tuple:
        for e in v:
            _actives(e, out)
    elif t is dict:
        for e in v.values():
            _actives(e, out)
    elif isinstance(v, Active):
        out.append(v)
    elif t is np.ndarray and v.dtype == object or t in dispatch.PROXIES:
        a = to_active(v)
        if isinstance(a, Active):
            out.append(a)


def _flatten(x):
    """``(leaves, rebuild)`` of a differentiated argument: its float leaves (actives,
    floats, float arrays; every leaf of a plain argument) in depth-first order through
    tuples, lists and dicts, and ``rebuild(values, const)`` giving x's structure with the
    ``values`` (an iterator) at those leaves and ``const(c)`` at its constant leaves
    (integers, booleans, None, integer arrays: jittape's convention for structures)."""
    leaves = []

    def walk(v, top):
        if isinstance(v, dict):
            keys, subs = list(v), [walk(e, False) for e in v.values()]
            return lambda it, const: {k: sub(it, const) for k, sub in zip(keys, subs)}
        if isinstance(v, (tuple, list)):
            subs, kind = [walk(e, False) for e in v], type(v)
            make = kind._make if hasattr(kind, "_fields") else kind
            return lambda it, const: make([sub(it, const) for sub in subs])
        v = to_active(v)
        if top or isinstance(v, (Active, float, np.floating)) or \
                isinstance(v, np.ndarray) and v.dtype.kind == "f":
            leaves.append(v)
            return lambda it, const: next(it)
        return lambda it, const: const(v)
    rebuild = walk(x, True)
    return leaves, rebuild


def _operand(t, x):
    """``x`` as a record before the region: itself if active, else a constant."""
    if isinstance(x, Active):
        return x
    if isinstance(x, (bool, np.bool_)) or np.iscomplexobj(x):
        raise TypeError("nested differentiation: arguments must be real floats or arrays")
    v = np.asarray(x, dtype=np.float64)
    return const(t, v if v.ndim else float(v))


def _copy(v):
    return v.copy() if isinstance(v, np.ndarray) else float(v)


def _region(t, f, args, kwargs, nums, flats, xs):
    """Record ``f`` with slots (copies of the values ``xs``, ``x * 1.0`` records) standing
    for the float leaves of ``args[nums]`` (``flats``: their :func:`_flatten`), after a
    placeholder record that :func:`_to_region` makes a region marker if the derivative takes
    the second-order route; returns the placeholder, the slots and f's output."""
    r = t.push_scalar(K.CONST, -1, -1, 0, 0.0, 0.0)
    slots = [new_active(Active, t, K.MULC, x._i, -1, 0, 1.0, _copy(x._v)) for x in xs]
    call, it = list(args), iter(slots)
    for n, (_, rebuild) in zip(nums, flats):
        call[n] = rebuild(it, lambda c: c)
    t.depth += 1
    try:
        with prealloc.recording(t):
            y = to_active(f(*call, **kwargs))
    finally:
        t.depth -= 1
    if isinstance(y, Active):
        tape_of(y, slots[0])
    else:
        try:
            v = np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{_name(f)} returned {type(y).__name__}: nested derivatives "
                            f"take functions returning a float or an array") from None
        y = const(t, v if v.ndim else float(v))
    return r, slots, y


def _to_region(t, r, slots, y):
    """The second-order route: the placeholder ``r`` becomes the region's marker and the
    slots custom slots (set by the call's rules); returns f's output as a record inside."""
    ENTRY.pack_into(t.entries, r << 5, K.CUSTOM_BEGIN, -1, -1, 0, 0.0, 0.0)
    for s in slots:
        v = ENTRY.unpack_from(t.entries, s._i << 5)[5]
        ENTRY.pack_into(t.entries, s._i << 5, K.CUSTOM_SLOT, -1, -1, 0, 0.0, v)
    if y._i <= r:  # an outer value returned unchanged: give the region its own record
        y = new_active(Active, t, K.CUSTOM_ARG, y._i, -1, 0, 0.0, _copy(y._v))
    return y


def _shaped(v, shape):
    """A flat adjoint ``v`` (active, plain, or None for zero) in ``shape``."""
    if v is None:
        return np.zeros(shape) if shape else 0.0
    if isinstance(v, Active):
        flat = np.ravel(np.asarray(v._v, dtype=np.float64))
        return Active(v._t, v._i, float(flat[0]) if not shape else flat.reshape(shape))
    return np.reshape(v, shape) if shape else float(np.ravel(v)[0])


def _call_record_suffices(t):
    """Whether this nested derivative may be a call record (second order only): the tape
    will only be swept to first order (an eager gradient) and no nested derivative
    around this one records on it. The call record's rules run compiled sweeps; recording
    the inner sweep costs Python per record (several times the eager time on scalar code),
    though its tape then replays faster."""
    return t.first_order and t.depth == 0


def _recorded_vjp(t, r, slots, y, w):
    """The slots' adjoints of ``<w, y>`` by the recorded reverse sweep, or None."""
    if y._i <= r:  # f's output does not depend on the slots
        return [None] * len(slots)
    return recorded_sweep.reverse(t, slots[0]._i, [s._i for s in slots],
                                  [(y._i, w)])


def _close(t, code, r, parts, n, f, shape):
    """Append the call record owning region ``r`` and set its value (the op's forward
    rule run over the tape so far); returns it as an active of ``shape``."""
    c = t.n
    _, a, b, _, cv, v = ENTRY.unpack_from(t.entries, r << 5)
    ENTRY.pack_into(t.entries, r << 5, K.CUSTOM_BEGIN, a, b, c, cv, v)  # k: the owner
    k = t.push_call(callpool.encode(parts, r, n, _name(f)))
    new_active(Active, t, code, parts[0]._i, r, k, 0.0, np.zeros(shape) if shape else 0.0)
    frozen = t.freeze()
    bad = OPS[code].forward(regions.Run(frozen), c, frozen.val)
    assert bad < 0, "a guard failed at the point it was recorded at"
    value = frozen.val[frozen.off[c]:frozen.off[c + 1]].copy()
    if not shape:
        _, a, b, k2, cv, _ = ENTRY.unpack_from(t.entries, c << 5)
        ENTRY.pack_into(t.entries, c << 5, code, a, b, k2, cv, float(value[0]))
        return Active(t, c, float(value[0]))
    t.arrays[c] = value.tobytes()
    return Active(t, c, value.reshape(shape))


def _name(f):
    return getattr(f, "__name__", None) or type(f).__name__


def _piece(t, v, at, shape):
    """Elements ``at..`` of the flat active ``v`` in ``shape`` (a float for ``()``)."""
    size = int(np.prod(shape))
    if np.shape(v._v) == shape:
        return v
    if np.size(v._v) == size and shape:  # (a record of size 1 stays of its own shape)
        return v.reshape(shape)
    z = np.asarray(v._v)[at:at + size].reshape(shape)
    return new_active(Active, t, K.SLICE, v._i, -1, at, 0.0, z if z.ndim else float(z))


def _leaves_of(t, args, nums):
    """``(flats, xs)``: the :func:`_flatten` of each ``args[nums]`` and all their float
    leaves as records before the region."""
    flats = [_flatten(args[n]) for n in nums]
    xs = [_operand(t, leaf) for leaves, _ in flats for leaf in leaves]
    if not xs:
        raise TypeError("nothing to differentiate: the differentiated arguments hold no "
                        "float leaves (1.0, not 1)")
    return flats, xs


def vjp_record(f, args, kwargs, nums, w, scalar=False):
    """``J(x)^T w`` for ``f`` at ``args`` (active or plain), one gradient per ``nums`` in
    its argument's structure (None at constant leaves); ``w`` the cotangent (active or
    plain, f's output shape; with ``scalar``, f's output must be a scalar, as ``grad``
    requires, and ``w`` is 1)."""
    t = _tape(list(args) + [w])
    flats, xs = _leaves_of(t, args, nums)
    wv = _operand(t, w)
    suffices = _call_record_suffices(t)
    r, slots, y = _region(t, f, args, kwargs, nums, flats, xs)
    if scalar:
        if np.size(y._v) != 1:
            raise NonScalarOutputError(
                f"{_name(f)} must return a scalar to be differentiated by grad, but it "
                f"returned an array of shape {np.shape(y._v)}")
        if type(y._v) is not float:
            y = y.reshape(())  # (1, 1) as a scalar, as grad takes it: the same record
    elif np.shape(wv._v) != np.shape(y._v):
        raise ValueError(f"vjp: cotangent of shape {np.shape(wv._v)} for an output of shape "
                         f"{np.shape(y._v)}")
    adj = None if suffices else _recorded_vjp(t, r, slots, y, wv)
    if adj is not None:
        it = iter([_shaped(a, np.shape(x._v)) for a, x in zip(adj, xs)])
        return [rebuild(it, lambda c: None) for _, rebuild in flats]
    y = _to_region(t, r, slots, y)
    size = sum(int(np.size(x._v)) for x in xs)
    shape = np.shape(xs[0]._v) if len(xs) == 1 else (size,)
    v = _close(t, K.NESTED_VJP, r, [wv, *xs, *slots, y], len(xs), f, shape)
    pieces, at = [], 0
    for x in xs:
        pieces.append(_piece(t, v, at, np.shape(x._v)))
        at += int(np.size(x._v))
    it = iter(pieces)
    return [rebuild(it, lambda c: None) for _, rebuild in flats]


def jvp_record(f, args, kwargs, nums, tangents):
    """``J(x) v`` for ``f`` at ``args``, ``v`` the ``tangents`` (one per ``nums``, each of
    its primal's structure)."""
    t = _tape(list(args) + list(tangents))
    flats, xs = _leaves_of(t, args, nums)
    vs = [_operand(t, leaf) for tan in tangents for leaf in _flatten(tan)[0]]
    if len(vs) != len(xs):
        raise ValueError("jvp: the tangents' structure differs from the primals'")
    for x, v in zip(xs, vs):
        if np.shape(x._v) != np.shape(v._v):
            raise ValueError(f"jvp: tangent of shape {np.shape(v._v)} for a primal of shape "
                             f"{np.shape(x._v)}")
    suffices = _call_record_suffices(t)
    r, slots, y = _region(t, f, args, kwargs, nums, flats, xs)
    out = None if suffices else _recorded_jvp(t, r, slots, y, vs)
    if out is not None:
        return out
    y = _to_region(t, r, slots, y)
    return _close(t, K.NESTED_JVP, r, [y, *xs, *vs, *slots], len(xs), f, np.shape(y._v))


def _recorded_jvp(t, r, slots, y, vs):
    """``J v`` by two recorded reverse sweeps: ``J^T u`` for a seed ``u``, linear in ``u``,
    then its VJP with respect to ``u`` along ``v`` (the transpose of the transpose), or
    None if a record on the way has no NumPy rule."""
    shape = np.shape(y._v)
    if y._i <= r:
        return np.zeros(shape) if shape else 0.0
    u = new_active(Active, t, K.CONST, -1, -1, 0, 0.0, np.zeros(max(int(np.size(y._v)), 1)))
    adj = _recorded_vjp(t, r, slots, y, u)
    if adj is None:
        return None
    outs = [(a._i, v) for a, v in zip(adj, vs) if isinstance(a, Active)]
    if not outs:
        return np.zeros(shape) if shape else 0.0
    jv = recorded_sweep.reverse(t, u._i, [u._i], outs)
    return None if jv is None else _shaped(jv[0], shape)


def value(f, args, kwargs):
    """``f(*args)`` recorded on the outer tape (the primal a nested call also returns): a
    nested call runs inside that recording already."""
    return to_active(f(*args, **kwargs))


def scalar_value(f, args, kwargs):
    out = value(f, args, kwargs)
    if isinstance(out, Active) and np.size(out._v) == 1:
        return out if type(out._v) is float else out.reshape(())
    if isinstance(out, numbers.Real) or np.size(out) == 1 and not isinstance(out, Active):
        return float(np.ravel(out)[0])
    raise NonScalarOutputError(f"{_name(f)} must return a scalar to be differentiated by "
                               f"grad, but it returned shape {np.shape(getattr(out, '_v', out))}")


def jacobian(f, args, kwargs, argnum, mode):
    """The Jacobian of ``f`` w.r.t. ``args[argnum]`` at the nested level: one nested JVP per
    input element (forward) or one nested VJP per output element (reverse), stacked into
    shape ``f(x).shape + x.shape``."""
    args = list(args)
    x = args[argnum] = to_active(args[argnum])
    if isinstance(x, (tuple, list, dict)):
        raise TypeError("jacobian(f, argnums) differentiates a float or an array argument")
    xshape = np.shape(x._v if isinstance(x, Active) else x)
    y = value(f, args, kwargs)
    yshape = np.shape(y._v if isinstance(y, Active) else y)
    n, m = int(np.prod(xshape)), int(np.prod(yshape))
    if mode == "forward" or mode == "auto" and n < m:
        cols = [jvp_record(f, args, kwargs, (argnum,), (np.eye(n)[j].reshape(xshape),))
                for j in range(n)]
        return np.moveaxis(np.stack([np.reshape(c, yshape) for c in cols]), 0, -1).reshape(
            yshape + xshape) if n else np.zeros(yshape + xshape)
    rows = [vjp_record(f, args, kwargs, (argnum,), np.eye(m)[i].reshape(yshape))[0]
            for i in range(m)]
    return np.stack([np.reshape(r, xshape) for r in rows]).reshape(yshape + xshape) if m \
        else np.zeros(yshape + xshape)


def gradients(f, args, kwargs, argnums, with_value):
    """``grad`` / ``value_and_grad`` at the nested level: ``(value or None, gradient(s))``."""
    single, nums = normalize_argnums(argnums, len(args))
    grads = vjp_record(f, args, kwargs, nums, 1.0, scalar=True)
    out = grads[0] if single else tuple(grads)
    return (scalar_value(f, args, kwargs) if with_value else None), out

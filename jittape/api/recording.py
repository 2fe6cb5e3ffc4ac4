"""The recording core under every public entry point: a function run on active inputs.

:func:`record_call` runs ``f`` with its differentiated arguments as INPUT records of a new
:class:`jittape.tape.arrays.Recorder` and returns what was recorded; :func:`jittape.grad`,
:func:`jittape.jvp`, :func:`jittape.record`, :func:`jittape.taped` and the replay path build
on it. Arguments may be structures ("pytrees", JAX's term): nested tuples, lists and dicts
whose float leaves are differentiated and whose integer, boolean and None leaves are
constants; :func:`flatten_arg`, :func:`pack_grads` and :func:`arg_key` convert between a
structure, its leaves and the key a replay depends on.
"""

import inspect
import numbers
import sys

import numpy as np

from ..optable.table import codes as K
from ..numpy.active import Active, new_active
from ..numpy.complex_values import ComplexActive
from ..numpy import prealloc
from ..numpy.object_arrays import to_active
from .._base.errors import NonScalarOutputError, NotDifferentiableError, clearer
from ..scipy import special as _scipy_special
from ..scipy import stats as _scipy_stats
from ..scipy import composed as _scipy_composed
from ..scipy import linalg as _scipy_linalg
from ..scipy import hooks as _scipy_hooks
from ..scipy import array_api as _scipy_array_api  # noqa: F401  (SciPy's xp route)
from ..tape.arrays import Recorder

_scipy_hooks.install()  # SciPy modules imported later are wrapped as they load


_NESTED = ("an active value given to jittape.record / taped / a Tape (inside a function being "
           "differentiated): a tape is recorded at plain values. There, use grad, "
           "value_and_grad, vjp, jvp, jacobian, hessian or hvp, which nest (to second order).")


def as_input(x, argnum):
    """An argument to differentiate: float for scalars, a float64 ndarray copy otherwise."""
    if isinstance(x, Active):
        raise NotDifferentiableError(_NESTED)
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"argument {argnum} is a bool: it has no derivative")
    if isinstance(x, numbers.Real) and np.ndim(x) == 0:
        return float(x)
    if np.iscomplexobj(x):
        raise TypeError(
            f"argument {argnum} is complex: grad, value_and_grad, jvp, vjp, jacobian and "
            f"hessian take complex arguments (JAX's conventions), while hvp, the sparse "
            f"derivatives and recorded tapes take real ones; pass the real pair (z.real, "
            f"z.imag) and build z inside f")
    try:
        arr = np.array(x, dtype=np.float64)  # copy: the user's array is never written to
    except (TypeError, ValueError) as e:
        raise TypeError(
            f"argument {argnum} must be a float or an array of real numbers to be "
            f"differentiated, got {type(x).__name__}: {e}") from None
    return float(arr) if arr.ndim == 0 else arr


_F64 = np.dtype(np.float64)


def like_input(g, x):
    """The gradient ``g`` (a float or float64 array, accumulated in float64) in the form of
    the differentiated argument ``x``, JAX's and NumPy's convention: an array of ``x``'s
    floating dtype (float32 stays float32) and shape, 0-d included; a NumPy scalar of its
    type; a float for Python numbers, integer and boolean data."""
    if type(x) is np.ndarray and x.dtype is _F64 and x.ndim:  # the common case, first
        return g
    if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind == "f":
        if isinstance(x, np.generic):
            return x.dtype.type(g)
        if x.dtype != np.float64 or x.ndim == 0:
            return np.asarray(g, dtype=x.dtype).reshape(x.shape)
    return g


def normalize_argnums(argnums, nargs):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    for n in nums:
        if not -nargs <= n < nargs:
            raise ValueError(f"argnums={argnums} but the function was called with "
                             f"{nargs} positional argument(s)")
    return single, tuple(n % nargs for n in nums)


# --- structured arguments ("pytrees"): nested tuples, lists and dicts of leaves ----------
# A treedef is a hashable description of a structure: TREE_LEAF for a float leaf (an input of
# the tape), ("=", ...) for a constant leaf (int, bool, None, integer/bool ndarray; its value
# is part of the treedef, so a tape is never replayed with another constant), (dict, keys,
# children) and (kind, children) for dicts and sequences (kind: tuple, list or a namedtuple
# class). Dict keys keep their insertion order: f may depend on it.
TREE_LEAF = "*"
CONTAINERS = (tuple, list, dict)


class _LeafError(TypeError):
    """An unsupported leaf; ``path`` is the tuple of keys leading to it."""

    def __init__(self, path, leaf):
        super().__init__(path, leaf)
        self.path, self.leaf = path, leaf


def flatten(x):
    """``(treedef, floats, consts)`` of ``x``: float leaves as floats or float64 ndarray
    copies, constant leaves unchanged, both in depth-first order."""
    floats, consts = [], []
    return _flat(x, (), floats, consts), floats, consts


def _flat(x, path, floats, consts):
    if isinstance(x, dict):
        keys = tuple(x)
        return (dict, keys, tuple(_flat(x[k], path + (k,), floats, consts) for k in keys))
    if isinstance(x, (tuple, list)):
        kind = type(x) if hasattr(x, "_fields") else tuple if isinstance(x, tuple) else list
        return (kind, tuple(_flat(v, path + (i,), floats, consts) for i, v in enumerate(x)))
    if isinstance(x, Active):
        raise NotDifferentiableError(_NESTED)
    if x is None or isinstance(x, (bool, np.bool_, numbers.Integral)):
        consts.append(x)
        return ("=", type(x), x)
    if isinstance(x, np.ndarray):
        if x.dtype.kind in "biu":
            consts.append(x)
            return ("=", x.dtype.str, x.shape, x.tobytes())
        if x.dtype.kind != "f":
            raise _LeafError(path, x)
        floats.append(float(x) if x.ndim == 0 else np.array(x, dtype=np.float64))
        return TREE_LEAF
    if isinstance(x, numbers.Real):
        floats.append(float(x))
        return TREE_LEAF
    raise _LeafError(path, x)


def unflatten(td, leaf):
    """Rebuild the structure ``td``; ``leaf(node)`` gives the value of each leaf node."""
    if td == TREE_LEAF or td[0] == "=":
        return leaf(td)
    if td[0] is dict:
        return {k: unflatten(c, leaf) for k, c in zip(td[1], td[2])}
    vals = [unflatten(c, leaf) for c in td[1]]
    return vals if td[0] is list else tuple(vals) if td[0] is tuple else td[0](*vals)


def _path_str(root, path):
    return root + "".join(f"[{k!r}]" for k in path)


def arg_name(f, n):
    """The name of positional parameter ``n`` of ``f`` (for messages), or ``args[n]``."""
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return f"args[{n}]"
    pos = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if n < len(pos):
        return pos[n].name
    star = [p for p in params if p.kind == p.VAR_POSITIONAL]
    return f"{star[0].name}[{n - len(pos)}]" if star else f"args[{n}]"


def flatten_arg(x, root):
    """Flatten a structured argument; unsupported leaves raise a TypeError naming their
    path (``root`` is a str or a callable giving it, computed only for the message)."""
    try:
        return flatten(x)
    except _LeafError as e:
        name = _path_str(root() if callable(root) else root, e.path)
        raise TypeError(
            f"{name} is of type {type(e.leaf).__name__}: jittape differentiates float leaves "
            f"(floats and float arrays); integer, boolean and None leaves are passed through "
            f"as constants, other types are not supported") from None


def arg_key(x, root):
    """What a recording depends on of a differentiated argument: its shape, or for a
    structure its treedef and the shapes of its float leaves."""
    if not isinstance(x, CONTAINERS):
        return np.shape(x)
    td, floats, _ = flatten_arg(x, root)
    return td, tuple(np.shape(v) for v in floats)


def pack_grads(treedefs, single, grads):
    """The gradients of the float leaves ``grads`` in the structure of the arguments
    (``treedefs`` None: every argument is a plain float or array)."""
    if treedefs is None:
        return grads[0] if single else tuple(grads)
    it = iter(grads)
    out = tuple(unflatten(td, lambda node: next(it) if node == TREE_LEAF else None)
                for td in treedefs)
    return out[0] if single else out


_MODULES = [0]  # len(sys.modules) when the SciPy wrappers were last installed


def _install_scipy():
    _scipy_special.install()  # SciPy's non-ufunc functions
    _scipy_stats.install()
    _scipy_composed.install()
    _scipy_linalg.install()
    _MODULES[0] = len(sys.modules)


def record_call(f, args, kwargs, argnums, vector_output=False, first_order=False):
    """Run ``f`` on active inputs; return (recorder, output active or constant, single,
    nums, treedefs). With ``vector_output`` the output may be an array (for Jacobians);
    ``first_order``: only first-order sweeps will run over the tape (nested derivatives
    may then take their second-order route, :mod:`jittape.api.nesting`).

    A differentiated argument that is a tuple, list or dict is a structure: each of its
    float leaves becomes an input record, in depth-first order.
    """
    single, nums = normalize_argnums(argnums, len(args))
    if len(sys.modules) != _MODULES[0]:  # SciPy imported after jittape: wrap it now
        _install_scipy()
    rec = Recorder(first_order)
    args = list(args)
    structured = {}  # argnum -> treedef
    for n in nums:
        x = args[n]
        if not isinstance(x, CONTAINERS):
            args[n] = input_record(rec, as_input(x, n))
            continue
        td, floats, consts = flatten_arg(x, lambda: arg_name(f, n))
        if consts and not floats and any(c is not None for c in consts):
            raise TypeError(
                f"argument {arg_name(f, n)} is a {type(x).__name__} of integers or booleans "
                f"only: inside tuples, lists and dicts those are constants, so there is "
                f"nothing to differentiate. Pass floats (1.0, not 1) or a float array.")
        actives = iter([input_record(rec, v) for v in floats])
        consts = iter(consts)
        args[n] = unflatten(td, lambda node: next(actives) if node == TREE_LEAF else next(consts))
        structured[n] = td
    # one treedef per differentiated argument; None if all are plain floats or arrays
    treedefs = tuple(structured.get(n, TREE_LEAF) for n in nums) if structured else None
    try:
        with prealloc.recording(rec):  # np.zeros(n) & co. may be filled with active values
            out = f(*args, **kwargs)
    except (TypeError, ValueError, SystemError, AttributeError) as e:
        clear = clearer(e)
        if clear is None:
            raise
        raise clear from e
    out = to_active(out)  # return np.array([a, b]), or a preallocated array
    if vector_output:
        if not isinstance(out, Active):
            out = np.asarray(out, dtype=np.float64)
        return rec, out, single, nums, treedefs
    return rec, check_output(out, f), single, nums, treedefs


def input_record(rec, x):
    a = new_active(Active, rec, K.INPUT, -1, -1, 0, 0.0, x)
    rec.inputs.append(a._i)
    return a


def complex_output_error(f):
    """The error of ``grad`` given a function ``f`` with a complex output (JAX's rule)."""
    return TypeError(
        f"grad requires a real-valued output; {getattr(f, '__name__', 'f')} returned a "
        f"complex value. For a holomorphic function of complex arguments pass "
        f"holomorphic=True (its derivative f'(z)), or differentiate a real function of it "
        f"(np.abs(z) ** 2, z.real).")


def check_output(out, f):
    name = getattr(f, "__name__", "f")
    if isinstance(out, (ComplexActive, complex, np.complexfloating)) or \
            type(out) is np.ndarray and out.dtype.kind == "c":
        raise complex_output_error(f)
    if isinstance(out, Active):
        if type(out._v) is float:
            return out
        if np.size(out._v) == 1:  # shape (1,), (1, 1): a scalar, as in HIPS autograd
            return out.reshape(())
        if np.shape(out._v) != ():
            raise NonScalarOutputError(
                f"{name} must return a scalar to be differentiated by grad, but it returned "
                f"an active array of shape {np.shape(out._v)}. Reduce it (e.g. np.sum) or "
                f"differentiate one element.")
        return out
    if isinstance(out, numbers.Real) or (isinstance(out, np.ndarray) and out.shape == ()):
        return float(out)  # does not depend on the inputs: the gradient is zero
    shape = getattr(out, "shape", None)
    raise NonScalarOutputError(
        f"{name} must return a scalar (float or 0-d array) to be differentiated by grad, "
        f"got {type(out).__name__}" + (f" of shape {shape}" if shape is not None else "") + ".")

"""jittape's array API namespace with active arrays, for data-apis' ``array-api-tests``.

The suite builds its arrays with the namespace's creation functions and checks every
function's results. Through :mod:`jittape.numpy.array_api` alone those arrays would be
NumPy's, and the run would measure NumPy. Here every float64 array a creation function
gives becomes an input record of one ambient recording (reset per test by
:mod:`.plugin`), so the functions under test meet active values, as in a recorded
function. Other dtypes (integers, bool, float32, complex) stay NumPy's: active values are
float64 only.

For the harness only, an active value converts to a Python number or a NumPy array
(``float(x)``, ``bool``, ``np.asarray``) with its primal value: the suite reads results
that way, and a recording would refuse (it would drop the derivative).
"""

import functools

import numpy as np

import jittape  # noqa: F401  (registers the handlers)
from jittape.api.recording import input_record
from jittape.numpy import array_api, prealloc
from jittape.numpy.active import Active
from jittape.tape.arrays import Recorder

__array_api_version__ = array_api.__array_api_version__
_STATE = {}


def reset():
    """A fresh ambient recording (a new test)."""
    if "ctx" in _STATE:
        _STATE["ctx"].__exit__(None, None, None)
    rec = Recorder()
    _STATE["rec"], _STATE["ctx"] = rec, prealloc.recording(rec)
    _STATE["ctx"].__enter__()


def _activate(a):
    if type(a) is np.ndarray and a.dtype == np.float64:
        if "rec" not in _STATE:
            reset()
        return input_record(_STATE["rec"], a.copy() if a.ndim else float(a))
    return a


def _creation(name):
    f = getattr(array_api, name)

    @functools.wraps(f)  # the suite checks the signature
    def create(*args, **kwargs):
        out = f(*args, **kwargs)
        if isinstance(out, (tuple, list)):
            return type(out)(_activate(o) for o in out)
        return _activate(out)
    return create


for _name in ("asarray", "arange", "empty", "empty_like", "eye", "full", "full_like",
              "linspace", "ones", "ones_like", "zeros", "zeros_like", "meshgrid", "tril",
              "triu", "from_dlpack"):
    globals()[_name] = _creation(_name)


def __getattr__(name):
    return getattr(array_api, name)


def __array_namespace_info__():
    return np.__array_namespace_info__()


def _primal(x):
    return np.asarray(x._v)


Active.__float__ = lambda self: float(_primal(self))
Active.__int__ = lambda self: int(_primal(self))
Active.__index__ = lambda self: int(_primal(self)) if float(_primal(self)).is_integer() \
    else (_ for _ in ()).throw(TypeError("only integer values are indices"))
Active.__complex__ = lambda self: complex(_primal(self))
Active.item = lambda self, *a: _primal(self).item(*a)
Active.tolist = lambda self: _primal(self).tolist()
Active.__array__ = lambda self, dtype=None, copy=None: np.asarray(_primal(self), dtype=dtype)
Active.__array_namespace__ = lambda self, api_version=None: __import__(__name__,
                                                                       fromlist=["_"])

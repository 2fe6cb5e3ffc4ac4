"""Stand-ins for NumPy functions while a recording runs, wherever library code bound them.

Some NumPy functions cannot reach jittape through NumPy's protocols: ``np.asarray`` and its
family convert an active value to a plain array before any hook runs, and ``np.zeros`` & co.
create arrays that active values are later written into. While some recording runs, each is
replaced by a :class:`StandIn` that answers for active values (and for the arrays created
in the recording) and calls NumPy's own function otherwise, so a replacement is invisible to
code that does not record.

A library usually binds such names at its import (``from numpy import asarray, empty`` in
``scipy.stats``): replacing ``numpy.asarray`` alone would not reach it. So :func:`enter`
also rebinds every global of a loaded module that *is* one of NumPy's functions to its
stand-in. Those bindings stay (rebinding some 75 modules' names at every recording's start
and end cost 15 us of an eager gradient): outside a recording on the calling thread
(:data:`THREAD`), a stand-in is one Python call that hands its arguments to NumPy's
function. ``numpy``'s own namespace is swapped in and out per recording (one dict update),
so ``np.asarray`` is NumPy's own outside recordings. Modules are scanned once each, when
first seen loaded, NumPy's, Numba's and jittape's own and the standard library's excepted.
Numba types a stand-in as NumPy's function (``_numba_type_``), so a ``@njit`` function
compiled meanwhile compiles as before.
"""

import sys
import threading

import numpy as np


class _Thread(threading.local):
    def __init__(self):
        self.depth = 0  # recordings running on this thread
        self.stack = []  # their recorders, innermost last


#: This thread's recordings (:mod:`jittape.numpy.prealloc` keeps it): stand-ins answer
#: only while ``THREAD.depth`` is positive.
THREAD = _Thread()

#: NumPy's name -> its stand-in, filled by the modules that define stand-ins.
STAND_INS = {}
_ORIGINALS = {}  # NumPy's name -> NumPy's own function
_BY_ID = {}  # id(function) -> (function, its stand-in) (the functions stay alive: libraries')
_STALE = [False]  # a substitution was registered after modules were scanned
_SEEN = set()  # modules already scanned
_ON_MODULE = {}  # module name -> installer(module), run when the module is first scanned
_SKIP = ("numpy", "numba", "jittape", "llvmlite", "_pytest", "pytest", "hypothesis")


class StandIn:
    """NumPy's function ``f``, answering some calls itself (:meth:`__call__` in subclasses).

    It looks like ``f`` (``__name__``, ``__doc__``: numpy.ma and SciPy's array-API layer read
    the docstrings), pickles as ``f`` and Numba types it as ``f``."""

    __slots__ = ("_f",)
    __doc__ = property(lambda self: self._f.__doc__)

    def __init_subclass__(cls):
        cls.__doc__ = StandIn.__dict__["__doc__"]  # NumPy's function's, not the class's

    def __init__(self, f):
        self._f = f

    def __call__(self, *args, **kwargs):
        return self._f(*args, **kwargs)

    def __getattr__(self, name):  # __name__, __module__, ...: NumPy's function's
        return getattr(self._f, name)

    def __reduce__(self):
        return getattr, (np, self._f.__name__)

    @property
    def __wrapped__(self):
        return self._f

    @property
    def _numba_type_(self):
        """Numba's type of NumPy's own function (``typeof`` reads this attribute)."""
        from numba.core.registry import cpu_target
        return cpu_target.typing_context.resolve_value_type(self._f)


def register(name, stand_in):
    """Make ``stand_in`` replace ``numpy.<name>`` while recordings run (and, from the first
    recording on, wherever a loaded library bound NumPy's function)."""
    original = getattr(np, name)
    if isinstance(original, StandIn):  # registered while a recording runs
        original = original._f
    STAND_INS[name] = stand_in
    _ORIGINALS[name] = original
    substitute(original, stand_in)


def substitute(original, replacement):
    """Make ``replacement`` replace the library function ``original`` in the modules that
    bound it (``from scipy.linalg import expm``), from the next recording's start on:
    jittape's wrappers of SciPy's functions (:mod:`jittape.scipy.special`), whatever the
    import order."""
    _BY_ID[id(original)] = (original, replacement)
    _STALE[0] = bool(_SEEN)


def on_module(name, installer):
    """Run ``installer(module)`` when module ``name`` is first seen loaded at a recording's
    start (it calls :func:`substitute`: rules for a library's own helpers)."""
    _ON_MODULE[name] = installer


def _scan():
    """Rebind, to their stand-ins, the globals that are NumPy's functions (or substituted
    ones) in the modules loaded since the last scan; they stay bound."""
    if _STALE[0]:  # a new substitution: every module is scanned again
        _SEEN.clear()
        _STALE[0] = False
    if len(_SEEN) >= len(sys.modules):
        return
    stdlib = sys.stdlib_module_names
    for name, module in list(sys.modules.items()):
        if name in _SEEN:
            continue
        spec = getattr(module, "__spec__", None)
        if getattr(spec, "_initializing", False):
            continue  # still executing: scanned at a later recording, complete
        _SEEN.add(name)
        if name in _ON_MODULE:
            _ON_MODULE.pop(name)(module)  # a new substitution: scanned again below
        top = name.partition(".")[0]
        if top in stdlib or top.startswith(_SKIP):
            continue
        space = getattr(module, "__dict__", None)
        if type(space) is not dict:
            continue
        space.update({key: _BY_ID[id(value)][1] for key, value in list(space.items())
                      if id(value) in _BY_ID and value is _BY_ID[id(value)][0]})
    if _STALE[0]:
        _scan()


def enter():
    """Install every stand-in (the first recording to start calls this, under its lock):
    in ``numpy``, and in the modules loaded since the last scan (those bound before keep
    theirs)."""
    vars(np).update(STAND_INS)
    if _STALE[0] or len(_SEEN) < len(sys.modules):
        _scan()


def leave():
    """Restore NumPy's own functions in ``numpy`` (the last recording to end calls this)."""
    vars(np).update(_ORIGINALS)


def internal(frame):
    """Whether the caller is jittape or Numba (they get NumPy's own behaviour)."""
    name = frame.f_globals.get("__name__", "")
    return name.startswith(("jittape.", "numba.")) or name == "jittape"

"""Wrap SciPy's modules when they finish importing, not only when a recording starts.

The wrappers of :mod:`.special`, :mod:`.stats`, :mod:`.composed` and :mod:`.linalg` are
installed into SciPy's modules that are loaded when a recording starts. A module first
imported inside a recorded function (``f`` calling ``scipy.stats.norm.logsf`` before anything
imported ``scipy.stats``) was then unwrapped for that whole recording, and its first
gradient raised ``NotDifferentiableError`` where the second one worked. :class:`AfterImport`,
a finder on ``sys.meta_path`` (the import system's own extension point, PEP 451), runs the
installers right after such a module executes.
"""

import sys


def _install_all(watched, done):
    """Run the installers once module ``done`` has executed, unless another of the
    ``watched`` modules is still executing (one imported inside another's import, as
    ``scipy.linalg`` inside ``scipy.stats``: the outer one installs once it is complete)."""
    for name in watched - {done}:
        spec = getattr(sys.modules.get(name), "__spec__", None)
        if getattr(spec, "_initializing", False):
            return
    from . import composed, linalg, special, stats
    special.install()
    stats.install()
    composed.install()
    linalg.install()


class AfterImport:
    """A meta-path finder that finds nothing itself: for the modules ``watched``
    (:func:`watched`), it takes the spec the other finders give and has its loader install
    jittape's wrappers once the module has executed."""

    def __init__(self, watched):
        self.watched = frozenset(watched)

    def find_spec(self, name, path, target=None):
        if name not in self.watched:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is not None and hasattr(loader, "exec_module"):
            run = loader.exec_module

            def exec_module(module):
                run(module)
                _install_all(self.watched, name)
            loader.exec_module = exec_module  # (this spec's own loader object)
        return spec


def watched():
    from . import composed
    return {"scipy.special", "scipy.stats", "scipy.linalg", *composed.SCIPY_FUNCTIONS}


def install():
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, AfterImport(watched()))

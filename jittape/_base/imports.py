"""Modules imported elsewhere, looked up without importing them."""

import importlib
import sys


def loaded(name):
    """Module ``name`` if it has been imported, else None (importing nothing). A module that
    another thread is still importing is waited for, through the import system's lock: its
    attributes are not all there yet (a background compile may be importing SciPy)."""
    return importlib.import_module(name) if name in sys.modules else None

"""The NumPy API on active values: importing this module registers every handler.

The handlers live in modules by subject, layered above :mod:`jittape.active` and each
filling :mod:`jittape.dispatch` when imported: :mod:`jittape.ufuncs` (ufuncs),
:mod:`jittape.operators` (``+ - * / ** % //`` and ``x[i]``), :mod:`jittape.views` (indexing, item assignment, in-place operators, reshape and transpose
views), :mod:`jittape.reductions` (reductions, scans, sorting, statistics),
:mod:`jittape.shapefns` (shape and indexing functions), :mod:`jittape.products` (``dot``,
``matmul``, ``einsum``, ...), :mod:`jittape.linalg` and :mod:`jittape.decomp`
(``numpy.linalg``),
:mod:`jittape.statistics` (``median``, ``quantile``, ``percentile``, ``partition``),
:mod:`jittape.numerics` (``interp``, ``convolve``, ``gradient``, ``polyval``, ``select``,
...) and :mod:`jittape.sequences` (``linspace``, ``logspace``, ``geomspace``).
:data:`FUNCTIONS` and :data:`UFUNC_HANDLERS` are the resulting tables.
"""

import numpy as np

from . import (builders, decomp, dispatch, linalg, numerics, objects, products,  # noqa: F401
               reductions, sequences, shapefns, statistics, ufuncs, views)
from . import operators  # noqa: F401  (Python's operators and x[i] on active values)
from .active import Active
from .reductions import logsumexp  # noqa: F401  (jittape.logsumexp)


def _shape_query(f):
    def query(x, *a, **kw):
        return f(x._v if isinstance(x, Active) else x, *a, **kw)
    query.__doc__ = f"``np.{f.__name__}``, answered from the primal (no record)."
    return query


dispatch.FUNCTIONS.update({np.shape: _shape_query(np.shape), np.ndim: _shape_query(np.ndim),
                           np.size: _shape_query(np.size)})
FUNCTIONS = dispatch.FUNCTIONS
UFUNC_HANDLERS = dispatch.UFUNCS

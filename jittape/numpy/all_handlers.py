"""The NumPy API on active values: importing this module registers every handler.

The handlers live in modules by subject, layered above :mod:`jittape.numpy.active` and each
filling :mod:`jittape.numpy.dispatch` when imported: :mod:`jittape.numpy.ufuncs` (ufuncs),
:mod:`jittape.numpy.operators` (``+ - * / ** % //`` and ``x[i]``), :mod:`jittape.numpy.views`
(indexing, item assignment, in-place operators, reshape and transpose views),
:mod:`jittape.numpy.memory_order` (``reshape``/``ravel`` in the orders 'C', 'F', 'A', 'K'),
:mod:`jittape.numpy.reductions` (reductions, scans, sorting, statistics),
:mod:`jittape.numpy.shape_functions` (shape and indexing functions),
:mod:`jittape.numpy.index_queries` (``argwhere``, ``flatnonzero``, ``isreal``, ...),
:mod:`jittape.numpy.array_writes` (``copyto``, ``putmask``, ``place``, ``fill_diagonal``,
``extract``, ``full`` of an active fill value),
:mod:`jittape.numpy.products` (``dot``, ``matmul``, ``einsum``, ...),
:mod:`jittape.numpy.linalg` and :mod:`jittape.numpy.decompositions` (``numpy.linalg``),
:mod:`jittape.numpy.statistics` (``median``, ``quantile``, ``percentile``, ``partition``),
:mod:`jittape.numpy.numerics` (``interp``, ``convolve``, ``gradient``, ``polyval``, ``select``,
...), :mod:`jittape.numpy.sequences` (``linspace``, ``logspace``, ``geomspace``) and
:mod:`jittape.numpy.standard` (the array API standard's spellings: ``astype``, ``any``,
``unstack``, ...). :mod:`jittape.numpy.array_api` is the namespace of active values.
:data:`FUNCTIONS` and :data:`UFUNC_HANDLERS` are the resulting tables.
"""

import numpy as np

from . import (array_writes, builders, conversions, decompositions, dispatch,  # noqa: F401
               index_queries, library_rules, linalg, memory_order, numerics, object_arrays,
               prealloc, products, reductions, sequences, shape_functions, standard,
               statistics, ufuncs, views)
from . import array_api  # noqa: F401  (the namespace x.__array_namespace__() gives)
from . import complex_functions, complex_special, eig, fft  # noqa: F401  (complex values)
from . import operators  # noqa: F401  (Python's operators and x[i] on active values)
from .active import Active
from .reductions import logsumexp  # noqa: F401  (jittape.logsumexp)


def _shape_query(f):
    def query(x, *a, **kw):
        return f(x._v if isinstance(x, Active) else x, *a, **kw)
    query.__doc__ = f"``np.{f.__name__}``, answered from the primal (no record)."
    return query


def _dtype_query(f):
    def query(*args, **kw):
        return f(*[np.asarray(a._v) if isinstance(a, Active) else a for a in args], **kw)
    query.__doc__ = (f"``np.{f.__name__}``, a question about dtypes answered from the primal "
                     f"(float64; no record).")
    return query


dispatch.FUNCTIONS.update({np.shape: _shape_query(np.shape), np.ndim: _shape_query(np.ndim),
                           np.size: _shape_query(np.size)})
dispatch.FUNCTIONS.update({f: _dtype_query(f) for f in (
    np.result_type, np.iscomplexobj, np.isrealobj, np.can_cast, np.min_scalar_type)})
builders.install_linalg()  # last: the handlers are keyed by NumPy's own functions
FUNCTIONS = dispatch.FUNCTIONS
UFUNC_HANDLERS = dispatch.UFUNCS

"""``np.linalg.eig`` and ``np.linalg.eigvals`` of active real matrices (and stacks).

One EIG record (rules: :mod:`jittape.optable.rules.eig`) holds the real and imaginary parts
of the eigenvalues and, for ``eig``, of the eigenvectors; the results are slices of it. As
NumPy's, they are real arrays when every eigenvalue is real and complex ones
(:class:`jittape.numpy.complex_values.ComplexActive`) otherwise. A real result is guarded
on the imaginary parts staying zero: a replay where eigenvalues turn complex records again
instead of dropping their imaginary parts. Eigenvector derivatives follow LAPACK's
normalization (unit norm, largest component real) and, like eigenvalue derivatives, need
distinct eigenvalues; second derivatives (``hvp``, ``hessian``) raise.
"""

import numpy as np

from . import dispatch
from .active import compare, guard
from .complex_values import ComplexActive
from .linalg import flat_part, linalg_record, square_stack
from ..optable.table import codes as K


def _record(name, a, vectors):
    v = square_stack(name, a)
    nn = v.shape[-1]
    if vectors:
        w, vec = np.linalg.eig(v)  # NumPy's own values
    else:
        w, vec = np.linalg.eigvals(v), None
    wc = np.asarray(w, dtype=np.complex128)
    parts = [wc.real.ravel(), wc.imag.ravel()]
    if vectors:
        vc = np.asarray(vec, dtype=np.complex128)
        parts += [vc.real.ravel(), vc.imag.ravel()]
    rec = linalg_record(K.EIG, a, value=np.concatenate(parts), pool=(nn, int(vectors)))
    wr, wi = flat_part(rec, 0, wc.real), flat_part(rec, wc.size, wc.imag)
    out = [(wr, wi)]
    if vectors:
        out.append((flat_part(rec, 2 * wc.size, vc.real),
                    flat_part(rec, 2 * wc.size + vc.size, vc.imag)))
    if np.iscomplexobj(w):
        return [ComplexActive(re, im) for re, im in out]
    if wc.size:
        guard(compare(K.EQ, wi, 0.0))  # real results while the eigenvalues stay real
    return [re for re, _ in out]


def eig(a):
    """``np.linalg.eig``: ``EigResult(eigenvalues, eigenvectors)`` with NumPy's values,
    order, normalization and dtype (see the module docstring)."""
    w, v = _record("eig", a, True)
    return np.linalg._linalg.EigResult(w, v)


def eigvals(a):
    """``np.linalg.eigvals``: NumPy's eigenvalues (LAPACK without eigenvectors)."""
    return _record("eigvals", a, False)[0]


dispatch.FUNCTIONS.update({np.linalg.eig: eig, np.linalg.eigvals: eigvals})

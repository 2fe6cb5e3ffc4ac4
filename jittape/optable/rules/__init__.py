"""The op table's entries, one module per op family.

The op table's entries, one module per op family, each op's value and derivative rules
side by side.

Entries: :mod:`.elementwise`, :mod:`.special` (``scipy.special``), :mod:`.arrays`
(indexing, guards, reductions, scans, sorting), :mod:`.linalg` and :mod:`.decomp` (dense
linear algebra and decompositions, with their second-order rules), :mod:`.matfuncs`
(``expm``), :mod:`.signal` (``interp``, ``correlate``), :mod:`.custom` and
:mod:`.checkpoint` (records owning regions). Kernels called by the entries of another
module: :mod:`.linalg_kernels` (also the ``matmul`` entry), :mod:`.decomp_kernels`,
:mod:`.prod_kernels`; Jacobian sparsity rules of structured ops: :mod:`.patterns`.

Part of the op table (:mod:`jittape.optable`): may import the table's machinery and
:mod:`jittape._base`, nothing above.
"""

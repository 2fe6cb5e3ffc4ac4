"""The op table's entries, one module per op family.

Each module holds one family's entries, each op's value and derivative rules side by side:
:mod:`.elementwise`, :mod:`.special` (``scipy.special``), :mod:`.arrays` (indexing, guards,
reductions, scans, sorting), :mod:`.matmul`, :mod:`.linalg` and :mod:`.decomp` (dense
linear algebra and decompositions, their second-order rules beside the entries),
:mod:`.matfuncs` (``expm``), :mod:`.signal` (``interp``, ``correlate``), :mod:`.custom` and
:mod:`.checkpoint` (records owning regions). A family's first-order kernels may sit in a
named pair beside it: :mod:`.linalg_kernels`, :mod:`.decomp_kernels`, :mod:`.prod_kernels`
(``prod``, ``cumprod`` of :mod:`.arrays`). Jacobian sparsity rules of structured ops:
:mod:`.patterns`.

Part of the op table (:mod:`jittape.optable`): may import the table's machinery and
:mod:`jittape._base`, nothing above.
"""

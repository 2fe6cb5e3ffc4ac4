"""The op table under its public name: ``jittape.ops.register``, ``OPS``, ``BY_NAME``, ``codes``.

The table itself is :mod:`jittape.optable.table` (the entries in opcode order, their rules in
:mod:`jittape.optable.rules`); what an entry is, :mod:`jittape.optable.entry`. This module
re-exports the names that users extending the table and the tests read, so that code written
against ``jittape.ops`` keeps working whatever the package's inner layout.
"""

from .optable.table import (BY_NAME, CUSTOM_CODES, OPS, SCIPY_UFUNC_OPCODES, UFUNC_OPCODES,
                            call_arguments, codes, format_table, in_regions, is_leaf, operands,
                            register, swept)

__all__ = ["BY_NAME", "CUSTOM_CODES", "OPS", "SCIPY_UFUNC_OPCODES", "UFUNC_OPCODES",
           "call_arguments", "codes", "format_table", "in_regions", "is_leaf", "operands",
           "register", "swept"]

"""Rules for small helpers in libraries' code that convert to ``float`` on purpose.

lmfit's line shapes pass widths and temperatures through ``lmfit.lineshapes.not_zero(v) =
float(copysign(max(tiny, abs(v)), v))`` so that they never divide by zero. ``float()`` of an
active value must refuse (it would drop the derivative), so the helper itself gets a rule:
it is ``v`` where ``|v| >= tiny`` (derivative 1) and the constant ``copysign(tiny, v)``
elsewhere (derivative 0), guarded on which branch was taken. Each rule is installed by
:func:`jittape.numpy.stand_ins.on_module` when its module is first seen at a recording's
start, whatever the import order, and from then on replaces the helper; given plain
values it calls the library's own.
"""

import numpy as np

from . import stand_ins
from .active import Active


def _lmfit_lineshapes(module):
    not_zero, tiny = module.not_zero, module.tiny

    def not_zero_rule(value):
        if not isinstance(value, Active):
            return not_zero(value)
        if abs(value) >= tiny:  # a guarded comparison: the branch replays or re-records
            return value
        return float(np.copysign(tiny, value._v))

    not_zero_rule.__name__ = not_zero_rule.__qualname__ = "not_zero"
    not_zero_rule.__doc__ = not_zero.__doc__
    not_zero_rule.__wrapped__ = not_zero
    stand_ins.substitute(not_zero, not_zero_rule)


stand_ins.on_module("lmfit.lineshapes", _lmfit_lineshapes)

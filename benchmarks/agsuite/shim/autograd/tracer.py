"""autograd.tracer: ``isbox`` is "is a jittape active value", ``getval`` is jittape.primal."""

import jittape
from . import _no_equivalent


def isbox(x):
    from jittape.numpy.active import Active
    return isinstance(x, Active)


def getval(x):
    return jittape.primal(x) if isbox(x) else x


primitive = _no_equivalent("tracer.primitive", "no jittape API for user-defined derivative rules")

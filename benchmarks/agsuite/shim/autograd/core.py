"""autograd.core: the VJP/JVP makers map to jittape; primitives and vector spaces do not."""

from . import defjvp, defvjp, make_jvp, make_vjp, primitive, _no_equivalent  # noqa: F401

vspace = _no_equivalent("core.vspace", "autograd's vector-space internals")
defvjp_argnum = _no_equivalent("core.defvjp_argnum",
                               "no jittape API for user-defined derivative rules")

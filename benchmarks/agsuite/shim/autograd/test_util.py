"""autograd.test_util with jittape underneath (see agsuite_checks)."""

from agsuite_checks import (EPS, RTOL, TOL, check, check_equivalent, check_grads,  # noqa: F401
                            combo_check, scalar_close)


def check_vjp(f, x):
    check(f, 0, ["rev"], 1, (x,), {})


def check_jvp(f, x):
    check(f, 0, ["fwd"], 1, (x,), {})

"""autograd.util: ``quick_grad_check`` is the harness's reverse-mode gradient check."""

from agsuite_checks import check


def quick_grad_check(fun, arg0, extra_args=(), kwargs=None, verbose=True, eps=None,
                     rtol=None, atol=None, rs=None):
    check(fun, 0, ["rev"], 1, (arg0, *extra_args), kwargs or {})

"""Products of active values: ``matmul`` (one MATMUL record) and the products NumPy
defines through it: ``dot``, ``inner``, ``outer``, ``vdot``, ``tensordot``, ``kron``,
``einsum`` and ``cross``, each with NumPy's exact shape rules (audited against NumPy for
0-D to 4-D operands in ``tests/test_numpy_semantics.py``)."""

import math
import operator
import string

import numpy as np

from . import dispatch
from .active import Active, new_active, tape_of, broadcast_to, const, reshape
from .._base.errors import NotDifferentiableError
from ..optable.table import codes as K
from .reductions import sum_any, sum_
from .shape_functions import moveaxis
from .shaping import (alias, check_dtype, check_out, const_array, ravel_any, rearrange,
                      refuse_active, reshape_any, shape_probe, transpose_any, primal_array)
from .views import track


def matmul(x, y):
    """``x @ y`` with NumPy's matmul rules: 1-D operands, 2-D, and stacks of matrices with
    broadcast batch dimensions (broadcast operands are gathered to the full batch first)."""
    t = tape_of(x, y)
    xv = x._v if isinstance(x, Active) else np.asarray(x, dtype=np.float64)
    yv = y._v if isinstance(y, Active) else np.asarray(y, dtype=np.float64)
    if np.ndim(xv) == 0 or np.ndim(yv) == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions "
                         "(use * for scalars)")
    z = np.matmul(xv, yv)  # NumPy checks the shapes
    xn = x if isinstance(x, Active) else const(t, xv)
    yn = y if isinstance(y, Active) else const(t, yv)
    if xv.ndim <= 2 and yv.ndim <= 2:
        m = xv.shape[0] if xv.ndim == 2 else 1
        n = yv.shape[1] if yv.ndim == 2 else 1
        layout = (m, xv.shape[-1], n, 1)
    else:  # (..., m, k) @ (..., k, n): vectors become matrices, batch dims broadcast
        x2 = xv if xv.ndim > 1 else xv[None, :]
        y2 = yv if yv.ndim > 1 else yv[:, None]
        batch = np.broadcast_shapes(x2.shape[:-2], y2.shape[:-2])
        xn = broadcast_to(reshape(xn, x2.shape), batch + x2.shape[-2:])
        yn = broadcast_to(reshape(yn, y2.shape), batch + y2.shape[-2:])
        layout = (x2.shape[-2], x2.shape[-1], y2.shape[-1], int(np.prod(batch)))
    return new_active(Active, t, K.MATMUL, xn._i, yn._i, t.push_pool(layout), 0.0,
                z if np.ndim(z) else float(z))


def dot(x, y, out=None):
    """``np.dot``: a product for 0-D operands, matmul for operands of at most 2 dimensions,
    otherwise a sum over the last axis of ``x`` and the second-to-last of ``y`` (the last if
    ``y`` is 1-D), result shape ``x.shape[:-1] + y.shape[:-2] + y.shape[-1:]`` (not matmul's
    batch broadcasting), recorded as a tensordot (one 2-D MATMUL)."""
    if out is not None:
        raise NotDifferentiableError("np.dot(out=...) on active values: in-place output is "
                                     "not recorded; assign the result")
    xs = np.shape(x._v if isinstance(x, Active) else x)
    ys = np.shape(y._v if isinstance(y, Active) else y)
    if len(xs) == 0 or len(ys) == 0:
        return x * y
    yax = len(ys) - 2 if len(ys) >= 2 else 0
    if xs[-1] != ys[yax]:
        raise ValueError(f"shapes {xs} and {ys} not aligned: {xs[-1]} (dim {len(xs) - 1}) != "
                         f"{ys[yax]} (dim {yax})")
    if len(xs) <= 2 and len(ys) <= 2:
        return matmul(x, y)
    return tensordot(x, y, axes=([len(xs) - 1], [yax]))


def outer(a, b, out=None):
    """``np.outer``: a broadcasting product of the raveled operands."""
    check_out("outer", out)
    return reshape_any(ravel_any(a), (-1, 1)) * reshape_any(ravel_any(b), (1, -1))


def vdot(a, b):
    """``np.vdot`` of real arrays: sum of the elementwise product of the raveled operands."""
    if np.size(primal_array(a)) != np.size(primal_array(b)):
        np.vdot(primal_array(a), primal_array(b))  # NumPy's error
    return sum_(ravel_any(a) * ravel_any(b))


def inner(a, b):
    """``np.inner``: tensordot over the last axes (a product for scalars)."""
    if np.ndim(primal_array(a)) == 0 or np.ndim(primal_array(b)) == 0:
        return a * b
    if np.shape(primal_array(a))[-1] != np.shape(primal_array(b))[-1]:
        np.inner(shape_probe(np.shape(primal_array(a))),  # raises
                 shape_probe(np.shape(primal_array(b))))
    return tensordot(a, b, axes=([-1], [-1]))


def _axis_list(axes):
    """An axis or a sequence of axes as a list (tensordot's ``axes`` pairs)."""
    try:
        return list(axes)
    except TypeError:
        return [axes]


def tensordot(a, b, axes=2):
    """``np.tensordot`` (axes int or pair of sequences): transposes, reshapes, a 2-D matmul.

    The same reduction to one matrix product as NumPy's own implementation.
    """
    refuse_active("tensordot", axes=axes)
    if not isinstance(a, Active) and not isinstance(b, Active):  # (einsum's constant pairs)
        return np.tensordot(const_array(a), const_array(b), axes)
    try:
        iter(axes)
    except Exception:
        axes_a = list(range(-axes, 0))
        axes_b = list(range(0, axes))
    else:
        axes_a, axes_b = axes
    axes_a, axes_b = _axis_list(axes_a), _axis_list(axes_b)
    na, nb = len(axes_a), len(axes_b)
    as_, bs = np.shape(primal_array(a)), np.shape(primal_array(b))
    nda, ndb = len(as_), len(bs)
    equal = na == nb
    if equal:
        for k in range(na):
            if as_[axes_a[k]] != bs[axes_b[k]]:
                equal = False
                break
            if axes_a[k] < 0:
                axes_a[k] += nda
            if axes_b[k] < 0:
                axes_b[k] += ndb
    if not equal:
        raise ValueError("shape-mismatch for sum")
    notin_a = [k for k in range(nda) if k not in axes_a]
    notin_b = [k for k in range(ndb) if k not in axes_b]
    n2 = math.prod(as_[ax] for ax in axes_a)
    at = reshape_any(transpose_any(a, notin_a + axes_a),
                      (math.prod(as_[ax] for ax in notin_a), n2))
    bt = reshape_any(transpose_any(b, axes_b + notin_b),
                      (n2, math.prod(bs[ax] for ax in notin_b)))
    res = matmul(at, bt)
    return reshape_any(res, [as_[ax] for ax in notin_a] + [bs[ax] for ax in notin_b])


def kron(a, b):
    """``np.kron``: a broadcasting product of interleaved reshapes."""
    av, bv = primal_array(a), primal_array(b)
    nda, ndb = av.ndim, bv.ndim
    if nda == 0 or ndb == 0:
        return a * b
    nd = max(nda, ndb)
    as_ = (1,) * (nd - nda) + av.shape
    bs = (1,) * (nd - ndb) + bv.shape
    a2 = reshape_any(a, tuple(d for s in as_ for d in (s, 1)))
    b2 = reshape_any(b, tuple(d for s in bs for d in (1, s)))
    return reshape_any(a2 * b2, tuple(p * q for p, q in zip(as_, bs)))


def _einsum_explicit(subs, shapes):
    """NumPy's subscript rules made explicit: ``(input subscripts, output subscripts)`` with
    each ellipsis replaced by unused letters (broadcast dimensions, right-aligned) and an
    implicit output (no '->') replaced by NumPy's: the ellipsis dimensions, then the labels
    that appear once, in ASCII order."""
    ins_s, arrow, out_s = subs.partition("->")
    ins = ins_s.split(",")
    free = [c for c in string.ascii_letters if c not in subs]
    n_ell = max([len(shp) - (len(s) - 3) for s, shp in zip(ins, shapes) if "..." in s] or [0])
    ell = "".join(free[:n_ell])
    ins = [s.replace("...", ell[n_ell - (len(shp) - (len(s) - 3)):]) if "..." in s else s
           for s, shp in zip(ins, shapes)]
    if not arrow:
        letters = ins_s.replace(",", "").replace(".", "")
        return ins, ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if "..." in out_s:
        return ins, out_s.replace("...", ell)
    if n_ell:
        raise ValueError("output has more dimensions than subscripts given in einstein sum, "
                         "but no '...' ellipsis provided to broadcast the extra dimensions.")
    return ins, out_s


def _einsum_check_args(operands, out, kwargs):
    """NumPy's checks of einsum's keywords; refusals of what is not recorded."""
    check_out("einsum", out)
    check_dtype("einsum", kwargs.get("dtype"))
    bad = set(kwargs) - {"dtype", "order", "casting"}
    if bad:
        raise TypeError(f"einsum() got an unexpected keyword argument {sorted(bad)[0]!r}")
    if kwargs.get("order", "K") not in ("K", "A", "C", "F"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {kwargs['order']!r})")
    if kwargs.get("casting", "safe") not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError("casting must be one of 'no', 'equiv', 'safe', 'same_kind', or "
                         "'unsafe'")


def _einsum_sublists(operands):
    """The sublist form ``einsum(op0, sublist0, op1, sublist1, ..., [sublistout])`` as
    ``(subscripts, op0, op1, ...)``: labels 0-25 are 'A'-'Z' and 26-51 'a'-'z' (NumPy's
    C mapping, so an implicit output is in label order); ``Ellipsis`` is '...'."""
    n = len(operands)
    out = operands[-1] if n % 2 == 1 else None
    ops, subs = operands[0:n - n % 2:2], operands[1:n - n % 2:2]

    def letters(sub):
        s = ""
        for label in sub:
            if label is Ellipsis:
                s += "..."
                continue
            label = operator.index(label)
            if not 0 <= label < 52:
                raise ValueError("subscript is not within the valid range [0, 52)")
            s += string.ascii_uppercase[label] if label < 26 else \
                string.ascii_lowercase[label - 26]
        return s
    text = ",".join(letters(s) for s in subs)
    if out is not None:
        text += "->" + letters(out)
    return (text, *ops)


def einsum(*operands, out=None, optimize=False, **kwargs):
    """``np.einsum``: subscripts or sublists, implicit output, ellipses, repeated labels.

    Subscripts ``"ij,jk->ik"`` (explicit or implicit output, ellipses broadcast) or the
    sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])``.

    Operands are combined left to right: each is aligned to the running index space
    (repeated labels within an operand take its diagonal, by a gather), multiplied in by
    broadcasting, and every label no later operand or the output needs is summed out at
    once. A pair whose shared labels are all summed there goes through tensordot (one
    2-D matmul). ``optimize`` is accepted and ignored (the result is the same).
    """
    _einsum_check_args(operands, out, kwargs)
    if operands and not isinstance(operands[0], str):
        operands = _einsum_sublists(operands)
    subs = operands[0].replace(" ", "")
    ops = list(operands[1:])
    # NumPy checks the subscripts, the operand count and the shapes (without computing)
    shapes = [np.shape(primal_array(op)) for op in ops]
    np.einsum_path(subs, *[shape_probe(s) for s in shapes], optimize=False)
    ins, out_s = _einsum_explicit(subs, shapes)
    out_letters = list(out_s)
    terms = []
    for s, op in zip(ins, ops):
        if not isinstance(op, Active):
            op = const_array(op)
        letters = list(dict.fromkeys(s))
        if len(letters) < len(s):  # a repeated label: its diagonal
            sub = s + "->" + "".join(letters)
            op = (rearrange(op, lambda i, sub=sub: np.einsum(sub, i)) if isinstance(
                op, Active) else np.einsum(sub, op).copy())
        terms.append((letters, op))

    def needed(j):
        keep = set(out_letters)
        for letters, _ in terms[j + 1:]:
            keep.update(letters)
        return keep

    def sum_out(op, letters, keep):
        drop = tuple(i for i, c in enumerate(letters) if c not in keep)
        if drop:
            op = sum_any(op, axis=drop)
            letters = [c for c in letters if c in keep]
        return op, letters

    acc_letters, acc = terms[0]
    acc, acc_letters = sum_out(acc, acc_letters, needed(0))
    for j in range(1, len(terms)):
        letters, op = terms[j]
        keep = needed(j)
        op, letters = sum_out(op, letters, keep | set(acc_letters))
        shared = [c for c in acc_letters if c in letters]
        acc_shape, op_shape = np.shape(primal_array(acc)), np.shape(primal_array(op))
        if shared and not any(c in keep for c in shared) and all(
                acc_shape[acc_letters.index(c)] == op_shape[letters.index(c)] for c in shared):
            acc = tensordot(acc, op, axes=([acc_letters.index(c) for c in shared],
                                           [letters.index(c) for c in shared]))
            acc_letters = ([c for c in acc_letters if c not in shared]
                           + [c for c in letters if c not in shared])
            continue
        new = [c for c in letters if c not in acc_letters]
        space = acc_letters + new
        a2 = reshape_any(acc, tuple(acc_shape) + (1,) * len(new))
        sub = [c for c in space if c in letters]
        op_t = transpose_any(op, [letters.index(c) for c in sub])
        op_t_shape = np.shape(primal_array(op_t))
        b2 = reshape_any(op_t, tuple(op_t_shape[sub.index(c)] if c in letters else 1
                                      for c in space))
        acc, acc_letters = sum_out(a2 * b2, space, keep)
    acc = transpose_any(acc, [acc_letters.index(c) for c in out_letters])
    if not isinstance(acc, Active):
        return acc
    acc = alias(acc, np.shape(acc._v))  # a new object: never the input itself
    if len(ops) == 1 and isinstance(ops[0], Active) and set(out_s) == set(ins[0]):
        # NumPy returns a writeable view when nothing is summed ('ij->ji', 'ii->i')
        acc = track(ops[0], acc, lambda p: np.einsum(subs, p))
    return acc


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """``np.cross`` (2- and 3-vectors, any axes, broadcasting): component products, one CONCAT.

    The components are gathered along the vector axis and combined in NumPy's order
    (``a1*b2 - a2*b1``, ...; a missing third component of a 2-vector contributes nothing, as
    in NumPy), so the primal is NumPy's.
    """
    refuse_active("cross", axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)
    if axis is not None:
        axisa = axisb = axisc = axis
    av, bv = primal_array(a), primal_array(b)
    # NumPy's argument checks, errors and warnings on zero-stride probes (O(1))
    np.cross(shape_probe(av.shape), shape_probe(bv.shape), axisa, axisb, axisc)

    def last(x, ax):
        if isinstance(x, Active):
            return moveaxis(x, ax, -1)
        return np.moveaxis(const_array(x), ax, -1)

    a, b = last(a, axisa), last(b, axisb)
    da, db = np.shape(primal_array(a))[-1], np.shape(primal_array(b))[-1]
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    c2 = a0 * b1 - a1 * b0
    if da == 2 and db == 2:
        return c2
    if da == 2:  # a2 = 0
        b2 = b[..., 2]
        c0, c1 = a1 * b2, -(a0 * b2)
    elif db == 2:  # b2 = 0
        a2 = a[..., 2]
        c0, c1 = -(a2 * b1), a2 * b0
    else:
        a2, b2 = a[..., 2], b[..., 2]
        c0, c1 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2
    cp = np.stack([c0, c1, c2], axis=-1)  # the three have one (broadcast) shape
    return moveaxis(cp, -1, axisc) if isinstance(cp, Active) else np.moveaxis(cp, -1, axisc)


dispatch.OPERATORS["matmul"] = matmul
dispatch.FUNCTIONS.update({
    np.dot: dot, np.matmul: matmul, np.outer: outer, np.inner: inner, np.vdot: vdot,
    np.tensordot: tensordot, np.einsum: einsum, np.kron: kron, np.cross: cross,
})

"""What an op table entry is: :class:`Op`, its kinds and the constructors the rules use.

An op is one :class:`Op` entry and nothing else anywhere names it: the sweeps
(:mod:`jittape.sweeps.codegen`), the tape compiler, the NumPy dispatch of elementwise ufuncs,
``python -m jittape ops``, the docs page and the generic rule tests are all generated from the
entries. The entries themselves are in the modules of :mod:`jittape.optable.rules`, one per
op family; :mod:`jittape.optable.table` assembles them in opcode order.

Rule convention (one explanatory block instead of one per op)
-------------------------------------------------------------
Elementwise ops (kinds ``unary``, ``binary``, ``compare``, ``select``, ``ternary``) give

* ``value``: the result ``z`` as a Python expression in the operands ``x`` (and ``y``; the
  third operand ``q``: a select's condition, a ternary op's last argument) and the record's
  float immediate ``c``;
* ``partials``: the local partial derivatives ``dz/dx`` (and ``dz/dy``, ``dz/dq`` for a
  ternary op) as expressions in ``x``, ``y``, ``q``, ``z``, ``c``; ``"0.0"`` for none.

From the partials the generator writes the tangent rule ``zdot = sum_k dz/dx_k * xdot_k``
and the adjoint rule ``xbar_k += zbar * dz/dx_k`` (Griewank & Walther, "Evaluating
Derivatives", 2nd ed., sec. 3.1-3.2), and the second-order rules later. Expressions may
call :mod:`math`, ``np`` scalar functions, the helpers of :mod:`jittape.optable.scalar_math` and
:mod:`jittape.optable.scalar_special`, and SciPy's own C special functions as ``cs_<name>``
(:mod:`jittape.optable.externals`) by name. Operands of size 1 broadcast (stride 0); their adjoint
contributions accumulate, which is the sum broadcasting's adjoint needs.

Operands with no derivative rule. Some functions have arguments with respect to which no
cheap closed-form derivative exists (the order ``v`` of ``iv``, the shape ``a`` of
``gammainc``). Their entry names its arguments (``args``, in the function's order) and lists
those that must be constants (``constant``); the NumPy dispatch refuses an active value
there with :class:`jittape._base.errors.NotDifferentiableError` naming the function, the argument
and what to do, and the entry's partial for it is ``"0.0"`` (a constant has no adjoint).

Ternary functions (``betainc(a, b, x)``) are elementwise ops of kind ``ternary``: three
operand records, all broadcast to the result's shape like a binary op's; the third one's id
is kept in the record's ``k`` immediate, as a select keeps its condition, so the record
layout, the tape files and the operand checks are those of ``select``.

Structured ops (reductions, products, gathers, scans, linear algebra) give kernels written
side by side, plain Python functions that the generator copies into the sweep source:

* ``forward(val, o, n, ia, ib, k, c, pool, off)`` writes ``val[o:o+n]``;
* ``tangent(val, dot, o, n, ia, ib, k, c, pool, off)`` writes ``dot[o:o+n]`` from the
  operands' tangents (a linear map of them);
* ``reverse(val, adj, o, n, ia, ib, k, c, pool, off, ca, cb)`` accumulates into the
  operands' adjoints: the transpose of the tangent map. ``ca``/``cb`` say that operand
  ``a``/``b`` is a constant leaf whose adjoint nobody reads (work may be skipped).

A structured op may also give a ``pattern`` rule, a plain Python function (not compiled)
``pattern(n, sizes, k, pool, consts)`` for the Jacobian sparsity pattern
(:mod:`jittape.derivatives.sparsity`): ``n`` is the record's size, ``sizes`` its operands' sizes
(in the order of :func:`jittape.optable.table.operands`), ``k`` its integer immediate, ``pool``
the tape's pool, ``consts`` per operand its value (a flat float64 array) when that value does
not depend on the inputs, else None. It returns one entry per operand: ``(rows, cols)`` integer
arrays listing the pairs (result element, operand element) whose partial derivative may be
nonzero at some input, or None for no dependence. It must never miss a pair (a missing pair is a
silently wrong sparse Jacobian); an op without a rule is treated as dense (every result element
depends on every element of every operand).

``o``/``n`` locate the record's value, ``ia``/``ib`` its operands' values (0 when absent),
``k`` and ``c`` are its immediates and ``off`` maps record ids to value offsets (for
n-ary records whose operands are listed in ``pool``).

Regions and calls (custom derivative rules, :mod:`jittape.custom.custom_rules`). A *region* is a
run of records that the ordinary sweeps do not visit: a user's derivative rule (the ``bwd`` of a
``custom_vjp``, the ``jvp`` of a ``custom_jvp``) recorded as ordinary records between a marker
of kind ``region`` (its ``k``: the record that owns the region) and that owner, a record of kind
``call``. Neither has a branch in the compiled sweeps: :mod:`jittape.sweeps.regions` runs the
sweeps over the ranges between call records, and a ``call`` entry's rules are plain Python
functions that it runs at the call, given the :class:`jittape.sweeps.regions.Run` of the tape
(which runs the sweeps over a region, nested calls included) and the buffers:

* ``forward(run, c, val)``, ``tangent(run, c, val, dot)``: the forward and tangent sweeps
  stop at the region's marker, run the rule at ``c`` and go on after ``c``;
* ``reverse(run, c, val, adj)`` and ``second(run, c, val, dot, adj, adjdot)`` (returns -1,
  or the id of a record with no second-order rule): the backward sweeps stop above ``c``,
  run the rule (which sweeps the region as it needs) and go on below the marker.

The record's ``b`` is its region's marker, ``k`` the offset of its operand list in the pool
(laid out as an n-ary record's, so that :func:`jittape.optable.table.operands` lists them; the
layout: :mod:`jittape.optable.callpool`).
"""

import importlib
from dataclasses import dataclass, field

# What an op is. The generator dispatches on the kind; nothing dispatches on a name.
LEAF, UNARY, BINARY, COMPARE, SELECT, TERNARY, STRUCTURED = (
    "leaf", "unary", "binary", "compare", "select", "ternary", "structured")
#: A region marker and the record owning the region (custom rules; see the module docstring).
REGION, CALL = "region", "call"
ELEMENTWISE = (UNARY, BINARY, COMPARE, SELECT, TERNARY)
#: Operand counts by kind (``Entry.arity``; the structured kinds give their own).
_ARITY_OF_KIND = {LEAF: 0, UNARY: 1, BINARY: 2, COMPARE: 2, SELECT: 3, TERNARY: 3}


@dataclass(frozen=True)
class Spec:
    """How the generic checker tests an op: input domain ``(lo, hi)`` and argument shapes.

    ``fn`` (optional) is a NumPy expression that records the op; by default the op's first
    NumPy callable applied to the arguments. An op recorded only through a layer above the
    table (custom rules, checkpoints) names its expression by dotted path instead
    (``"jittape.custom.examples.checkpoint_example"``), resolved by :attr:`function`: the table
    imports nothing above it.
    """

    lo: float = -2.0
    hi: float = 2.0
    shapes: tuple = (((),), ((5,),), ((2, 3),))  # cases, each one shape per argument
    fn: object = None

    @property
    def function(self):
        """``fn`` as a callable (a dotted path imported on first use), or None."""
        if not isinstance(self.fn, str):
            return self.fn
        module, name = self.fn.rsplit(".", 1)
        return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class Op:
    """One op of the table (see the module docstring for the rule convention).

    Attributes
    ----------
    name : str
        Lower-case name, unique; ``python -m jittape ops`` and tapes printed show it.
    kind : str
        One of ``leaf``, ``unary``, ``binary``, ``compare``, ``select``, ``ternary``,
        ``structured``, ``region``, ``call``.
    numpy : tuple
        NumPy callables (or ``"scipy.special.name"`` strings, resolved lazily) that record
        this op when given active values.
    doc : str
        The derivative rule in words and formulas, for the table printout and the docs.
    value, partials : str, tuple of str
        Elementwise ops: the value expression and the partial derivative expressions.
    scalar : callable or None
        A fast Python function for the primal of one float while recording (``math.sin``);
        by default the NumPy callable.
    uses_c : bool
        The float immediate ``c`` is an operand (``x + c``, ``x ** c``).
    forward, tangent, reverse : callable or None
        Structured ops: the kernels. ``None`` tangent/reverse: no derivative flows.
    checks : bool
        The forward kernel returns True when a replay check fails (guards).
    fusion : str or None
        How the tape compiler may fuse the op into elementwise loops: ``"slice"``,
        ``"gather"`` (indexed loads), ``"strided"`` (loads at an offset with strides, the
        layout in the pool) or ``"sum"`` (a full reduction closing a loop).
    check : callable or None
        Structured ops: ``check(t, i, n, sa, sb)`` for a loaded tape (:mod:`jittape.tape.file`)
        returns why record ``i`` (size ``n``, operand sizes ``sa``, ``sb``) would make a
        kernel read out of bounds, or None.
    spec : Spec
        Domain and shapes for the generic rule checker.
    pattern : callable or None
        Structured ops: the Jacobian sparsity rule (see the module docstring); None: dense.
    args : tuple of str
        Elementwise ops: the names of the function's arguments, in order (the operands
        ``x``, ``y``, ``q``), for error messages and docs.
    constant : tuple of str
        The arguments (names from ``args``) that must not be active: no derivative rule
        exists with respect to them; the dispatch refuses an active value there.
    second : str, callable or None
        Structured ops' second-order rule, for the tangent of the reverse sweep (HVPs):
        ``"linear"`` if the reverse rule is linear in the adjoints with coefficients that
        are locally constant in the values (gathers, sums, selections: its tangent is the
        same rule applied to the adjoints' tangents), or a kernel ``hvp(val, dot, adj,
        adjdot, o, n, ia, ib, k, c, pool, off, ca, cb)`` accumulating both the adjoints
        and their tangents. None: no second-order rule (an HVP raises, naming the op).
        Elementwise ops need none: theirs is derived from the partials
        (:mod:`jittape.optable.symbolic`).
    second_pattern : callable or None
        Structured ops: the Hessian sparsity rule of a bilinear op (matmul), which pairs operand
        elements in its second derivatives (see :mod:`jittape.derivatives.hessian_sparsity`);
        None: a ``"linear"`` op pairs nothing, any other pairs every two elements that one
        result element depends on.
    undefined : str or None
        Structured ops with outputs whose derivative can be undefined (singular vectors of
        repeated singular values): why, and what to do. Their tangent kernel writes nan
        there and their reverse kernel raises; a JVP or forward-mode Jacobian whose result
        is nan where such a record's tangent is raises this message
        (:func:`jittape.derivatives.jacobians.check_undefined`).
    code : int
        The opcode (the op's position in the table; the tape file format: append only).
    no_forward : str or None
        Why the public forward mode (``jvp``, forward-mode and sparse Jacobians,
        ``trace_jvp``) refuses a tape holding this op, and what to do; ``{name}`` is replaced
        by the record's ``label``. The tangent sweep itself still runs (second order uses it).
    label : callable or None
        ``label(t, i)``: what record ``i`` of tape arrays ``t`` stands for (the user function
        of a custom rule), for messages and printouts.
    vjp : callable or None
        Structured ops: the reverse rule as NumPy code, ``vjp(r, g)`` returning the operands'
        adjoints (:mod:`jittape.optable.recorded`), which the recorded reverse sweep calls on
        active values so that derivatives nest to any order. None: nesting through the op
        stops at second order. Elementwise ops need none: theirs comes from the partials.
    row_reverse : tuple or None
        Structured binary ops whose operand ``a`` is a stack of matrices (matmul): a pair
        ``(blocks, kernel)``. ``blocks(pool, k)`` gives ``(batch, rows, cols)``, the layout of
        operand ``a``; ``kernel(val, adj, o, n, ia, ib, k, c, pool, off, out)`` writes the
        reverse rule's adjoint of ``a`` summed over the rows of each block (``batch * cols``
        values) to ``out``, without forming that adjoint. The tape compiler calls it where
        ``a`` is a constant plus a view broadcast along those rows (the ``mu`` of
        ``(X - mu) @ W``): :mod:`jittape.compiler.products`.
    copies : callable or None
        Structured ops that only move elements (concatenation): ``copies(pool, k)`` gives
        the blocks record ``k``'s pool entry moves, ``[(record, at, width, rows, stride)]``
        with ``z[at + r * stride + j] = x_record[r * width + j]`` for ``r < rows``, ``j <
        width``. The tape compiler emits them as loops of literal bounds (cmpad ode's
        ``concatenate`` of two parts: its gradient 9.6 -> 4.2 us), the reverse being their
        transpose (``xbar_record[...] += zbar[...]``): :mod:`jittape.compiler.copies`.
    value_pattern : bool
        Structured ops: the ``pattern`` rule also bounds the value, not only the derivative:
        a result element's value changes with no operand element the rule leaves out, except
        through products with the constant operands' exact zeros that the rule drops
        (``0 * v``). The absolute-zero folding (:mod:`jittape.derivatives.zeros`) trusts such
        rules; any other structured op's result is taken to depend on all of its operands
        there (sort's rule is not one: its stored permutation moves with the values).
    no_second : str or None
        Why second order (``hvp``, ``hessian``) refuses a tape holding this op, and what to
        do (``{name}`` as in ``no_forward``); None: the generic message of an op without a
        second-order rule.
    """

    name: str
    kind: str
    numpy: tuple = ()
    doc: str = ""
    value: str = None
    partials: tuple = ()
    scalar: object = None
    uses_c: bool = False
    forward: object = None
    tangent: object = None
    reverse: object = None
    checks: bool = False
    fusion: str = None
    check: object = None
    spec: Spec = field(default_factory=Spec)
    args: tuple = ()
    constant: tuple = ()
    second: object = None
    undefined: str = None
    code: int = -1
    pattern: object = None
    second_pattern: object = None
    no_forward: str = None
    label: object = None
    no_second: str = None
    vjp: object = None
    row_reverse: tuple = None
    copies: object = None
    value_pattern: bool = False

    @property
    def arity(self):
        """Record operands: 0 leaves, 1 unary, 2 binary, 3 select, -1 n-ary (in the pool)."""
        return _ARITY_OF_KIND.get(self.kind, self._arity)

    _arity: int = 1

    @property
    def rule(self):
        """``doc`` with the arguments that must be constants (for the printouts and docs)."""
        if not self.constant:
            return self.doc
        return (f"{self.doc}   [{', '.join(self.constant)}: constant, no derivative; "
                f"active raises]")

    @property
    def elementwise(self):
        return self.kind in ELEMENTWISE

    @property
    def differentiable(self):
        """Whether any derivative flows through the op."""
        if self.elementwise:
            return any(p != "0.0" for p in self.partials)
        return self.reverse is not None


def elementwise(name, kind, numpy, value, partials, doc, scalar=None, uses_c=False,
                lo=-2.0, hi=2.0, shapes=None, fn=None, args=None, constant=()):
    """An elementwise entry; ``partials`` may be one expression for a unary op.

    ``args`` defaults to the operand names ``x``, ``y``, ``q``; every name in ``constant``
    must be one of ``args`` and have the partial ``"0.0"``.
    """
    partials = (partials,) if isinstance(partials, str) else tuple(partials)
    if shapes is None:
        shapes = ((((),), ((5,),), ((2, 3),)) if kind == UNARY else
                  (((4,), (4,)), ((2, 3), ()), ((), (3,))))
    args = tuple(args or ("x", "y", "q")[:len(partials)])
    for name_ in constant:
        if partials[args.index(name_)] != "0.0":
            raise ValueError(f"{name}: constant argument {name_} has a partial derivative")
    return Op(name, kind, tuple(numpy), doc, value, partials, scalar, uses_c,
              spec=Spec(lo, hi, shapes, fn), args=args, constant=tuple(constant))


def structured(name, numpy, doc, forward, tangent=None, reverse=None, arity=1, checks=False,
               fusion=None, check=None, spec=None, second=None, undefined=None, pattern=None,
               second_pattern=None, vjp=None, row_reverse=None, copies=None,
               value_pattern=False):
    """A structured entry: kernels written side by side (see the module docstring)."""
    return Op(name, STRUCTURED, tuple(numpy), doc, forward=forward, tangent=tangent,
              reverse=reverse, checks=checks, fusion=fusion, check=check, spec=spec or Spec(),
              second=second, undefined=undefined, _arity=arity, pattern=pattern,
              second_pattern=second_pattern, vjp=vjp, row_reverse=row_reverse,
              copies=copies, value_pattern=value_pattern)


def region(name, doc, check=None, spec=None):
    """A region marker (kind ``region``): the sweeps jump over the records up to ``k``."""
    return Op(name, REGION, (), doc, check=check, spec=spec or Spec(), _arity=0)


def call(name, doc, forward, tangent, reverse, second, check, spec=None, no_forward=None,
         label=None, no_second=None):
    """A record owning a region (kind ``call``): Python rules run between the compiled
    sweeps (see the module docstring); its operands are listed in the pool as an n-ary
    record's."""
    return Op(name, CALL, (), doc, forward=forward, tangent=tangent, reverse=reverse,
              second=second, check=check, spec=spec or Spec(), _arity=-1,
              no_forward=no_forward, label=label, no_second=no_second)


class Unsupported(Exception):
    """A structured op's recorded reverse rule (``vjp``) cannot record this record's
    adjoint (a scatter-add too wide to pad): the recorded sweep gives up, and nesting takes
    its second-order route (:mod:`jittape.optable.recorded`)."""


def pool_at(t, k, count):
    """``t.pool[k:k+count]`` as a list of ints, or None if out of range (for checks)."""
    if k < 0 or k + count > len(t.pool):
        return None
    return [int(v) for v in t.pool[k:k + count]]


#: Loop iterations a record of a loaded tape may ask of a sweep beyond its values: the
#: extents of an empty array's layout (outer x 0 x inner) multiply to no value, so an
#: extent of 2**40 would loop for hours over nothing.
SPARE_LOOPS = 1 << 16


def bounded(t, *extents):
    """Whether a layout's loops over ``extents`` (each counted as at least 1) stay within
    the values of tape arrays ``t`` plus :data:`SPARE_LOOPS` (for checks)."""
    total = 1
    for e in extents:
        total *= max(int(e), 1)
    return total <= len(t.val) + SPARE_LOOPS


def leaf(name, doc):
    return Op(name, LEAF, (), doc, spec=Spec(shapes=(((3,),),)))


class Codes:
    """Opcodes by upper-case name (``codes.SUM``): for the NumPy dispatch that records ops."""

    def __init__(self, ops):
        for op in ops:
            setattr(self, op.name.upper(), op.code)

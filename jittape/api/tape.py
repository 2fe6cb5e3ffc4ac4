"""Record once, replay natively: the :class:`Tape`, :func:`record` and :func:`load`.

A recorded tape is a straight-line program. Replaying it at new inputs runs the Numba
forward sweep (recomputing every record's value) and then the reverse sweep, with no Python
per record: the taping approach of ADOL-C and CppAD (Griewank & Walther, "Evaluating
Derivatives", 2nd ed., SIAM 2008, sec. 6.3). The program is valid only where the recorded
control flow holds: every Python decision taken on an active value is a GUARD record, and a
guard that comes out differently on replay raises :class:`GuardFailure`.
:func:`jittape.taped` (:mod:`jittape.api.taped`) turns that into automatic re-recording, with a
small cache of tapes per input shape.
"""

import numpy as np

from ..sweeps import regions
from ..tape import file as tapefile
from ..numpy.active import Active
from .recording import CONTAINERS, TREE_LEAF, flatten_arg, pack_grads, record_call
from .._base.errors import NonScalarOutputError
from .._base.values import real_float64
from .fastpath import F64, FastReplay, guard_failure


class Tape(FastReplay):
    """A recorded function that replays at new inputs with the Numba sweeps.

    Create one with :func:`record` or load one with :func:`jittape.load`. Methods take the
    differentiated arguments only (positional, in ``argnums`` order), each a float or an
    array of the shape it had when recorded, or a structure (tuple, list, dict) like the
    recorded one: same treedef, same float-leaf shapes, same constant (integer, boolean)
    leaves. Gradients come back in that structure. Other arguments stay as recorded.

    Attributes
    ----------
    arrays : jittape.tape.arrays.TapeArrays
        The tape columns (NumPy arrays); ``arrays.val`` holds the values of the recording.
    n_records, nbytes : int
        Number of records; bytes of all tape arrays.

    Raises
    ------
    GuardFailure
        From the replay methods: recorded control flow (a comparison used by ``if``, a mask,
        an ``argmax``) comes out differently at the new inputs. Record again there, or use
        :func:`taped`, which does so automatically.
    ValueError
        An input's shape, or a structured argument's structure, differs from the recorded one.
    """

    treedefs = None  # structures of the differentiated arguments; None: plain arguments

    def __init__(self, arrays, out_id, out_shape=(), out_value=0.0, single=True,
                 treedefs=None):
        self.arrays = arrays
        self.out_id = int(out_id)  # -1: the output does not depend on the inputs
        self.out_shape = tuple(out_shape)
        self.out_value = out_value
        self.single = bool(single)
        if treedefs is not None:
            self.treedefs = tuple(treedefs)  # the INPUT records are their float leaves

    @property
    def n_records(self):
        return self.arrays.n_records

    @property
    def nbytes(self):
        return self.arrays.nbytes

    # --- sweeps ---
    def _forward(self, xs):
        """This thread's value buffer with ``xs`` loaded and the forward sweep run over it
        (valid until the next replay in this thread)."""
        t = self.arrays
        if len(xs) != len(t.inputs):
            raise TypeError(f"the tape was recorded with {len(t.inputs)} differentiated "
                            f"argument(s), got {len(xs)}")
        val = self._values()
        for i, x in zip(t.inputs, xs):
            lo, hi = t.off[i], t.off[i + 1]
            if type(x) is float and hi - lo == 1 and i not in t.shapes:
                val[lo] = x
                continue
            val[lo:hi] = self._check_input(x, t.shape(i)).ravel()
        bad = regions.forward(t, val)
        if bad >= 0:
            raise guard_failure(bad)
        return val

    def _reverse(self, val, seed):
        t = self.arrays
        adj = self._adjoints()  # zeroed everywhere: callers may read any record's adjoint
        if self.out_id >= 0:
            adj[t.off[self.out_id]:t.off[self.out_id + 1]] = seed
            regions.reverse(t, val, adj, self.out_id)
        return adj

    def _output(self, val):
        if self.out_id < 0:
            return self.out_value
        t = self.arrays
        v = val[t.off[self.out_id]:t.off[self.out_id + 1]]
        return float(v[0]) if self.out_shape == () else v.reshape(self.out_shape).copy()

    def _input_adjoints(self, adj):
        t = self.arrays
        grads = []
        for i in t.inputs:
            g = adj[t.off[i]:t.off[i + 1]]
            grads.append(float(g[0]) if i not in t.shapes else g.reshape(t.shapes[i]).copy())
        return self._pack(grads)

    def _pack(self, grads):
        """Leaf gradients in the structure of the differentiated arguments."""
        if self.treedefs is None:
            return grads[0] if self.single else tuple(grads)
        return pack_grads(self.treedefs, self.single, grads)

    def _flat(self, xs):
        """The float leaves of the arguments ``xs`` of a structured tape, in input order."""
        if self.treedefs is None:
            return xs
        if len(xs) != len(self.treedefs):
            raise TypeError(f"the tape was recorded with {len(self.treedefs)} differentiated "
                            f"argument(s), got {len(xs)}")
        leaves = []
        for j, (x, td) in enumerate(zip(xs, self.treedefs)):
            if td == TREE_LEAF:
                leaves.append(x)
                continue
            xtd, floats, _ = (flatten_arg(x, f"xs[{j}]") if isinstance(x, CONTAINERS)
                              else (TREE_LEAF, [x], []))
            if xtd != td:
                raise ValueError(
                    f"differentiated argument {j} has the structure {_td_str(xtd)}, the tape "
                    f"was recorded with {_td_str(td)} (constant leaves included); record the "
                    f"function again for it (jittape.taped does so automatically)")
            leaves.extend(floats)
        return leaves

    def _require_scalar(self):
        if self.out_shape != () and np.prod(self.out_shape) != 1:  # size 1: a scalar (HIPS)
            raise NonScalarOutputError(
                f"the tape's output has shape {self.out_shape}: use vjp() or jacobian(), "
                f"gradient() is for scalar outputs")

    # --- public replay ---
    def value(self, *xs, batch=False, threads=1):
        """f at new inputs: float (or ndarray for a vector output). With ``batch=True``,
        each argument is a stack of points on a leading axis and the result their values,
        shape ``(m,)`` (:mod:`jittape.api.batch`; scalar outputs)."""
        if batch:
            from . import batch as B
            return B.run(self, xs, False, threads)[0]
        if len(xs) == 1 and self._plain is not None:
            out = self._plain(xs[0], False)
            if out is not None:
                return out[0]
        xs = xs if self.treedefs is None else self._flat(xs)
        if self.out_shape == () and self.out_id >= 0:
            return self._fast(xs, False)[0]
        return self._output(self._forward(xs))

    def value_and_gradient(self, *xs, batch=False, threads=1, _val=None):
        """``(f(xs), gradient)`` from one forward and one reverse sweep (or one call of the
        compiled kernel).

        With ``batch=True`` each argument is a stack of ``m`` points on a leading axis
        (shape ``(m,) + its recorded shape``), and the result is ``(values (m,),
        gradients)``, each gradient stacked likewise: the compiled kernel runs over all the
        points in one native call (compiling the tape first if it is not), split over
        ``threads`` threads that run at once (the kernel releases the GIL). A tape the
        compiler refuses replays point by point. Raises :class:`GuardFailure` naming the
        first point where a guard fails (:mod:`jittape.api.batch`)."""
        if len(xs) == 1 and _val is None and not batch:  # one float64 array: calls fewer
            call = self._plain
            if call is not None:
                out = call(xs[0], True)
                if out is not None:
                    return out
            x = xs[0]
            if type(x) is np.ndarray and x.dtype is F64 and x.shape == self._plain_shape:
                return self._fast_plain(x, True)
        if batch:
            from . import batch as B
            values, grads = B.run(self, xs, True, threads)
            return values, B.unstack(self, grads, values.shape[0])
        if self.out_shape != ():
            self._require_scalar()
        if _val is None and self.out_id >= 0:
            return self._fast(xs if self.treedefs is None else self._flat(xs), True)
        val = self._forward(self._flat(xs)) if _val is None else _val
        return self._output(val), self._input_adjoints(self._reverse(val, 1.0))

    def gradient(self, *xs, batch=False, threads=1):
        """The gradient at new inputs (float or ndarray of the input's shape); with
        ``batch=True``, at each of a stack of points (see :meth:`value_and_gradient`)."""
        if batch:
            return self.value_and_gradient(*xs, batch=True, threads=threads)[1]
        if len(xs) == 1:  # value_and_gradient's path for one float64 array, calls fewer
            call = self._plain  # (the compiled kernel's, once it is off trial)
            if call is not None:
                out = call(xs[0], True)
                if out is not None:
                    return out[1]
            x = xs[0]
            if type(x) is np.ndarray and x.dtype is F64 and x.shape == self._plain_shape:
                return self._fast_plain(x, True)[1]
        return self.value_and_gradient(*xs)[1]

    def vjp(self, xs, cotangent, _val=None):
        """``(f(xs), cotangent^T J(xs))``: one forward and one reverse sweep.

        ``xs`` is a tuple of the differentiated arguments; ``cotangent`` has the output's shape.
        """
        val = self._forward(self._flat(tuple(xs))) if _val is None else _val
        seed = real_float64(cotangent, "the cotangent")
        if seed.shape != self.out_shape:
            raise ValueError(f"cotangent shape {seed.shape} differs from the output shape "
                             f"{self.out_shape}")
        return self._output(val), self._input_adjoints(self._reverse(val, seed.ravel()))

    def jvp(self, *xs, tangents, batch=False, threads=1, _val=None):
        """``(f(xs), J(xs) v)``: one forward and one tangent sweep (forward mode).

        ``tangents`` has the structure of the differentiated arguments: one array (or
        float) per argument, a tuple of them for several (as ``xs``), each of its argument's
        shape. Returns the output value and its tangent, both of the output's shape. With
        ``batch=True``, ``xs`` and ``tangents`` are stacks of points on a leading axis and
        so are the results: for a scalar output, ``<grad f, v>`` from one batched native
        reverse sweep (``threads`` as :meth:`value_and_gradient`'s), otherwise a loop over
        the points (the tangent sweep has no batched form).
        """
        if batch:
            from . import batch as B
            return B.jvp(self, xs, tangents, threads)
        from ..derivatives import jacobians
        flat = self._flat(tuple(xs))
        val = self._forward(flat) if _val is None else _val
        tan = (tangents,) if self.single else tuple(tangents)
        return self._output(val), jacobians.jvp(self, val, self._flat(tan))

    def hvp(self, *xs, v, weights=None, batch=False, _val=None):
        """``H(xs) v`` of a scalar-output tape: forward, tangent and second-order sweeps at
        new inputs (forward over reverse; :mod:`jittape.derivatives.second_order`). ``v`` has the
        structure of the differentiated arguments (a tuple of them for several); so has the
        result. ``weights`` (the output's shape) gives ``H v`` of ``weights . f`` for an
        array output. ``batch=True``: stacks of points and directions, as :meth:`jvp`'s.
        Raises GuardFailure as :meth:`gradient` does, NotDifferentiableError
        if an op of the tape has no second-order rule, ValueError for a wrong shape."""
        if batch:
            from . import batch as B
            return B.pointwise(self, "hvp", "v", xs, v, weights=weights)
        from ..derivatives import second_order
        val = self._forward(self._flat(tuple(xs))) if _val is None else _val
        tangents = self._flat((v,) if self.single else tuple(v))
        return second_order.tape_hvp(self, val, tangents, weights)[1]

    def jacobian(self, *xs, mode="auto", _val=None):
        """The Jacobian of a single-input tape, shape ``out_shape + in_shape``.

        ``mode="forward"`` runs one tangent sweep per input element, ``"reverse"`` one
        reverse sweep per output element, ``"auto"`` the fewer of the two (Griewank &
        Walther sec. 3.3).
        """
        from ..derivatives import jacobians
        self._require_single("jacobian")
        val = self._forward(xs) if _val is None else _val
        t = self.arrays
        jac = jacobians.jacobian_matrix(self, val, mode)
        return jac.reshape(self.out_shape + t.shape(t.inputs[0]))

    def _require_single(self, name):
        if not self.single or self.treedefs is not None:
            raise TypeError(f"{name}() is for tapes of one differentiated argument, a float "
                            f"or an array (not a tuple, list or dict)")

    def jacobian_sparsity(self):
        """The Jacobian's sparsity pattern of a single-input tape: a ``scipy.sparse`` CSR
        boolean array of shape ``(m, n)`` (output elements x input elements, both
        flattened), True where an output element may depend on an input element. Index
        sets propagated over the records (:mod:`jittape.derivatives.sparsity`), once per tape; valid
        wherever the tape replays (its guards hold). Do not modify the returned array."""
        from ..derivatives import sparsity
        self._require_single("jacobian_sparsity")
        return sparsity.jacobian_sparsity(self)

    def sparse_jacobian(self, *xs, _val=None):
        """The Jacobian of a single-input tape at ``xs`` as a ``scipy.sparse`` CSR float64
        array of shape ``(m, n)`` (flattened output x flattened input), with the nonzeros of
        :meth:`jacobian_sparsity`: one forward sweep, then one tangent sweep per color of a
        column coloring of the pattern (:mod:`jittape.derivatives.coloring`), both computed once
        per tape. Raises as :meth:`jacobian` (``TypeError`` for several or structured inputs,
        :class:`GuardFailure`, ``ValueError`` for a wrong shape)."""
        from ..derivatives import jacobians, sparsity
        self._require_single("sparse_jacobian")
        val = self._forward(xs) if _val is None else _val
        pattern, colors = sparsity.jacobian_coloring(self)
        return jacobians.sparse_jacobian_matrix(self, val, pattern, colors)

    def hessian(self, *xs, weights=None, _val=None):
        """The dense Hessian of a single-input, scalar-output tape at ``xs`` (or of
        ``weights . f`` for an array output, ``weights`` of the output's shape), shape
        ``in_shape + in_shape`` (a float for a float input): one HVP per input element.
        Raises as :meth:`hvp` does, and TypeError for several or structured inputs."""
        from ..derivatives import second_order
        self._require_single("hessian")
        val = self._forward(xs) if _val is None else _val
        shape = self.arrays.shape(self.arrays.inputs[0])
        n = int(np.prod(shape))
        h = second_order.compressed_hessian(self, val, np.arange(n), weights)
        return float(h[0, 0]) if shape == () else h.reshape(shape + shape)

    def hessian_sparsity(self):
        """The sparsity pattern of the Hessian of a single-input tape (of any weighted sum
        of its outputs): a symmetric ``scipy.sparse`` CSR boolean array of shape ``(n, n)``
        (input elements, flattened), True where an entry may be nonzero. Propagated over
        the records once per tape (:mod:`jittape.derivatives.hessian_sparsity`); valid wherever the
        tape replays. Do not modify the returned array."""
        from ..derivatives import hessian_sparsity
        self._require_single("hessian_sparsity")
        return hessian_sparsity.hessian_sparsity(self)

    def sparse_hessian(self, *xs, weights=None, _val=None):
        """The Hessian of a single-input tape at ``xs`` as a ``scipy.sparse`` CSR float64
        array of shape ``(n, n)`` with the nonzeros of :meth:`hessian_sparsity`: one
        forward sweep, then one HVP per color of a star coloring of the pattern
        (:func:`jittape.derivatives.coloring.star_coloring`), both computed once per tape. A scalar
        output, or ``weights`` of the output's shape for the Hessian of ``weights . f`` (a
        Lagrangian's constraint part). Raises as :meth:`hessian`."""
        from ..derivatives import hessian_sparsity, second_order
        self._require_single("sparse_hessian")
        val = self._forward(xs) if _val is None else _val
        pattern, colors, recovery = hessian_sparsity.hessian_coloring(self)
        return second_order.sparse_hessian_matrix(self, val, pattern, colors, recovery,
                                                  weights)

    def optimize(self, absolute_zero=False):
        """This tape optimized (:mod:`jittape.tape.optimize`): constants folded (constant
        guards removed), exact algebraic identities (``x * 1``, ``-(-x)``) and common
        subexpressions merged, dead records removed. Returns a new :class:`Tape` with the
        same inputs, values, guards and derivatives (bit-identical but where merged records'
        adjoints add in another order); its ``optimization`` attribute says what went
        (``print(tape.optimize().optimization)``) and ``print`` shows its records. The
        compiled kernel (:meth:`compile`) is generated from the optimized tape anyway.

        ``absolute_zero=True`` also folds the records that no input changes once ``0 * v``
        is taken to be ``0`` for every ``v`` (:mod:`jittape.derivatives.zeros`), CppAD's
        identically-zero parameters and ``azmul``, CasADi's SX simplification. Values and
        derivatives are then those of the tape for finite values only: where a folded
        product's other factor is inf or nan (or its adjoint overflows), NumPy's value is
        nan and the folded tape's the recorded zero. The records folded: ``optimization.
        zeros``. A guard on a folded value is removed; any other fails as on the recorded
        tape (:class:`GuardFailure`). ``taped(f)`` does not fold. Not for tapes holding
        custom rules or checkpoints (left as they are)."""
        from ..tape.optimize import optimize
        fold = ()
        if absolute_zero:
            from ..derivatives.zeros import absolute_zeros
            fold = absolute_zeros(self.arrays)
        arrays, out, report = optimize(self.arrays, self.out_id, fold)
        tape = Tape(arrays, out, self.out_shape, self.out_value, self.single, self.treedefs)
        tape.optimization = report
        return tape

    # --- inspection and storage ---
    def format(self, with_adjoints=True):
        """The Wengert list as text: one line per record with its value (and adjoint)."""
        t = self.arrays
        adj = None
        if with_adjoints and self.out_id >= 0 and self.out_shape == ():
            adj = self._reverse(t.val, 1.0)
        names = {i: (f"input x{j}" if len(t.inputs) > 1 else "input x")
                 for j, i in enumerate(t.inputs)}
        return t.format(adj, names)

    def __str__(self):
        return self.format()

    # traced sweeps and graphs (jittape.explain.trace, jittape.explain.dot): functions of the tape
    from ..explain.trace import trace_gradient, trace_jvp
    from ..explain.dot import render, to_dot

    def __repr__(self):
        return (f"<jittape.Tape: {self.n_records} records, {self.nbytes} bytes, "
                f"output shape {self.out_shape}>")

    def save(self, path):
        """Write the tape to ``path`` as ``.npz`` (no pickle needed to load it).

        Tapes of structured arguments (tuples, lists, dicts) are not saved: the file format
        has no place for their structure yet (they pickle).
        """
        if self.treedefs is not None:
            raise ValueError("a tape of structured arguments (tuples, lists, dicts) cannot be "
                             "saved as .npz yet; pickle it, or record it with array "
                             "arguments")
        tapefile.save(self, path)


def record(f, *args, argnums=0, **kwargs):
    """Record ``f(*args, **kwargs)`` once and return a replayable :class:`Tape`.

    The output may be a scalar (for gradients) or an array (for ``vjp``/``jacobian``).
    ``argnums`` selects the differentiated positional arguments; the others are recorded as
    constants. A differentiated argument may be a structure (tuple, list, dict, nested) as in
    :func:`jittape.grad`: the tape's INPUT records are its float leaves, depth first, and its
    methods take and return that structure.
    """
    return record_tape(f, args, kwargs, argnums)


def record_tape(f, args, kwargs, argnums, first_order=False):
    """:func:`record`; ``first_order``: the tape will only be swept to first order (an
    eager ``jvp``, ``vjp`` or ``jacobian``), so nested derivatives in ``f`` may take their
    second-order route (:mod:`jittape.api.nesting`)."""
    rec, out, single, _, tds = record_call(f, args, kwargs, argnums, vector_output=True,
                                            first_order=first_order)
    if isinstance(out, Active):
        return Tape(rec.freeze(), out._i, np.shape(out._v), None, single, tds)
    return Tape(rec.freeze(), -1, np.shape(out), out if np.ndim(out) else float(out), single,
                tds)


def _td_str(td):
    """A treedef as text: ``{'w': *, 'n': =3}`` (``*`` a float leaf, ``=`` a constant)."""
    if td == TREE_LEAF:
        return "*"
    if td[0] == "=":
        return f"={td[2]!r}" if len(td) == 3 else f"=<{np.dtype(td[1])} array {td[2]}>"
    if td[0] is dict:
        return "{" + ", ".join(f"{k!r}: {_td_str(c)}" for k, c in zip(td[1], td[2])) + "}"
    body = ", ".join(_td_str(c) for c in td[1])
    if td[0] is list:
        return f"[{body}]"
    if td[0] is tuple:
        return f"({body}{',' if len(td[1]) == 1 else ''})"
    return f"{td[0].__name__}({body})"


def load(path):
    """Load a tape written by :meth:`Tape.save` (the file is validated first).

    Raises
    ------
    TapeFormatError
        The file is not a jittape tape, has another format version, or is corrupted.
    """
    arrays, out_id, out_shape, out_value, single = tapefile.read(path)
    return Tape(arrays, out_id, out_shape, out_value, single)

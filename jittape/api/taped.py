"""Record once, replay many times, re-record when needed: :func:`taped`.

A :class:`TapedFunction` keeps the tapes (:class:`jittape.Tape`) of a function, replays the
one recorded for the arguments' shapes and constants and records again when a guard fails.
Each tape compiles itself once interpreting it has cost more than compiling would (the
tiering rule of JIT compilers, :class:`jittape.Tape`).
"""

from dataclasses import dataclass

import numpy as np

from .recording import arg_key, arg_name, normalize_argnums
from .._base.errors import GuardFailure
from .tape import Tape, record_tape
from ..sweeps.opsets import for_tape
from ..sweeps.regions import calls


@dataclass
class ReplayStats:
    """Counters of a :class:`TapedFunction`: ``recordings`` (tapes recorded), ``replays``
    (calls answered by a cached tape), ``guard_failures`` (replays whose guard failed),
    ``shape_changes`` (recordings caused by a new shape or structure of the differentiated
    arguments), ``compilations`` (tapes compiled by :mod:`jittape.compiler.kernel`),
    ``recorded_while_compiling`` (calls answered by recording again, not counted in
    ``recordings``: the tape's forward sweep was compiling in the background, a large tape
    from cold caches, and an eager gradient needs no forward sweep)."""

    recordings: int = 0
    replays: int = 0
    guard_failures: int = 0
    shape_changes: int = 0
    compilations: int = 0
    recorded_while_compiling: int = 0


_NO_CONSTS = ([], {})  # the constants of a call with no other arguments (never mutated)


def _replay_waits(tape):
    """Whether replaying ``tape`` would now wait for its forward sweep's compile in the
    compile process (a large tape from cold caches: :meth:`jittape.sweeps.opsets.Sweeps.
    waits`, which starts that compile). Once it would not, ``tape._replay_ready`` skips the
    question."""
    t = tape.arrays
    if tape._kernel is None and not calls(t) and \
            for_tape(t).waits("forward_sweep", t.columns):
        return True
    tape._replay_ready = True
    return False


class _Entry:
    __slots__ = ("key", "tape", "consts", "counted")

    def __init__(self, key, tape, consts):
        self.key, self.tape, self.consts = key, tape, consts
        self.counted = False  # its compilation is in stats.compilations


# what each method of TapedFunction asks of a tape: (tape, xs, val) -> result, where val is
# the recording's value buffer on the call that recorded the tape, else None
def _value_and_grad(t, xs, val):
    return t.value_and_gradient(*xs) if val is None else t.value_and_gradient(*xs, _val=val)


def _grad(t, xs, val):
    return t.gradient(*xs) if val is None else t.value_and_gradient(*xs, _val=val)[1]


def _snapshot(x):
    if isinstance(x, np.ndarray):
        return x.copy()
    return x


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:  # incomparable objects: record again rather than risk a stale tape
        return False


class TapedFunction:
    """``f`` recorded on its first call and replayed natively on later calls.

    Re-records when a guard fails, when a differentiated input's shape changes (for a
    structured argument: its structure, constant leaves included, or a float leaf's shape),
    or when a non-differentiated argument changes value (those are constants of the tape,
    compared by value at each call). Keeps up to ``max_tapes`` tapes, most recently used
    first, so code that alternates between branches does not re-record every time.

    Methods take the same arguments as ``f``: ``value_and_grad(*args)``, ``grad(*args)``,
    ``jacobian(*args)`` (array output, one argument), and calling the object returns the value.
    ``stats`` is a :class:`ReplayStats`.

    ``compile`` chooses when a tape is compiled (:meth:`Tape.compile`): ``"auto"`` (default)
    as every :class:`Tape` does, once it is hot: at its second replay if its kernel is in the
    cache, else compiled in the compile process once its replays have cost 20 ms, interpreted
    replays going on meanwhile (without the compile process: once they have cost the
    estimated compile, the tiering rule of JIT compilers), keeping the kernel only if its
    first replays beat the interpreter's; ``True`` after its first replay, kept; ``False``
    never. Tapes that do not compile (too long) stay interpreted and are not tried again.
    """

    def __init__(self, f, argnums=0, max_tapes=8, compile="auto"):
        if compile not in ("auto", True, False):
            raise ValueError(f"compile must be 'auto', True or False, got {compile!r}")
        self.f = f
        self.argnums = argnums
        self.max_tapes = int(max_tapes)
        self.compile = compile
        self.stats = ReplayStats()
        self._entries = []
        self._nums = {}  # number of positional arguments -> (differentiated, the others)
        self._hot = None  # see _run
        self.__name__ = getattr(f, "__name__", "taped")
        self.__doc__ = getattr(f, "__doc__", None)

    def _split(self, nargs):
        """``(argnums, the other positions)`` for calls with ``nargs`` positional arguments."""
        split = self._nums.get(nargs)
        if split is None:
            _, nums = normalize_argnums(self.argnums, nargs)
            split = self._nums[nargs] = (nums, tuple(i for i in range(nargs) if i not in nums))
        return split

    def _run(self, args, kwargs, method, direct=None):
        """``method(tape, xs, val)`` of the tape for ``args``; ``direct(tape, x)`` is the same
        for a call ``f(x)`` of one array (the Tape method itself: one call fewer)."""
        hot = self._hot  # (shape, front entry) when that was a call f(x) of one array x
        if hot is not None and len(args) == 1 and not kwargs:
            x = args[0]
            if type(x) is np.ndarray and x.shape == hot[0]:  # what _lookup would try first
                e = hot[1]
                if not e.tape._replay_ready and _replay_waits(e.tape):
                    return self._eager(args, kwargs, method, args)
                try:
                    result = (method(e.tape, args, None) if direct is None else
                              direct(e.tape, x))
                except GuardFailure:
                    self.stats.guard_failures += 1
                    return self._lookup(args, kwargs, method, e)
                self.stats.replays += 1
                if not e.counted and e.tape._kernel is not None:
                    self._count_compile(e)
                return result
        return self._lookup(args, kwargs, method, None)

    def _lookup(self, args, kwargs, method, failed):
        """:meth:`_run` by searching the tapes (``failed``: one whose guard just failed)."""
        nums, rest = self._split(len(args))
        if len(nums) == 1:
            x = args[nums[0]]
            xs = (x,)
            key = ((x.shape if type(x) is np.ndarray else
                    arg_key(x, lambda: arg_name(self.f, nums[0]))),)
        else:
            xs = tuple(args[n] for n in nums)
            key = tuple(arg_key(args[n], lambda: arg_name(self.f, n)) for n in nums)
        plain = not rest and not kwargs  # no constants to compare
        others = [args[i] for i in rest] if rest else []
        hot = plain and len(args) == 1 and type(args[0]) is np.ndarray
        for idx, e in enumerate(self._entries):
            if e is failed or e.key != key or not (plain and e.consts is _NO_CONSTS) and \
                    not self._consts_match(e.consts, others, kwargs):
                continue
            if not e.tape._replay_ready and _replay_waits(e.tape):
                return self._eager(args, kwargs, method, xs)
            try:
                result = method(e.tape, xs, None)
            except GuardFailure:
                self.stats.guard_failures += 1
                continue
            self.stats.replays += 1
            if not e.counted and e.tape._kernel is not None:
                self._count_compile(e)
            if idx:
                self._entries.insert(0, self._entries.pop(idx))
            self._hot = (key[0], e) if hot else None
            return result
        if self._entries and not any(e.key == key for e in self._entries):
            self.stats.shape_changes += 1
        tape = record_tape(self.f, args, kwargs, self.argnums)
        tape.auto_compile = self.compile
        self.stats.recordings += 1
        consts = _NO_CONSTS if plain else ([_snapshot(a) for a in others],
                                           {k: _snapshot(v) for k, v in kwargs.items()})
        self._entries.insert(0, _Entry(key, tape, consts))
        del self._entries[self.max_tapes:]
        self._hot = (key[0], self._entries[0]) if hot and self._entries else None
        # answer from the recording itself: replaying at the same point would redo its work
        return method(tape, xs, tape.arrays.val)

    def _eager(self, args, kwargs, method, xs):
        """``method`` answered by a new recording, the tapes kept as they are."""
        self.stats.recorded_while_compiling += 1
        tape = record_tape(self.f, args, kwargs, self.argnums)
        return method(tape, xs, tape.arrays.val)

    def _count_compile(self, entry):
        """Count the tape's compilation once it has one."""
        if entry.tape.compiled:
            entry.counted = True
            self.stats.compilations += 1

    @staticmethod
    def _consts_match(consts, others, kwargs):
        pos, kw = consts
        return (len(pos) == len(others) and all(_same(a, b) for a, b in zip(pos, others))
                and kw.keys() == kwargs.keys() and all(_same(kw[k], kwargs[k]) for k in kw))

    def value_and_grad(self, *args, **kwargs):
        """``(f(*args), gradient)`` as :func:`jittape.value_and_grad` returns them."""
        return self._run(args, kwargs, _value_and_grad, Tape.value_and_gradient)

    def grad(self, *args, **kwargs):
        """The gradient part of :meth:`value_and_grad`."""
        return self._run(args, kwargs, _grad, Tape.gradient)

    def jacobian(self, *args, **kwargs):
        """Jacobian of an array-valued ``f`` w.r.t. its (single) differentiated argument."""
        return self._run(args, kwargs, lambda t, xs, val: t.jacobian(*xs, _val=val))

    def sparse_jacobian(self, *args, **kwargs):
        """:meth:`jacobian` as a ``scipy.sparse`` CSR array (:meth:`Tape.sparse_jacobian`)."""
        return self._run(args, kwargs, lambda t, xs, val: t.sparse_jacobian(*xs, _val=val))

    def jacobian_sparsity(self, *args, **kwargs):
        """The pattern of the tape for these arguments (:meth:`Tape.jacobian_sparsity`)."""
        return self._run(args, kwargs, lambda t, xs, val: t.jacobian_sparsity())

    def hvp(self, *args, v, weights=None, **kwargs):
        """``H v`` of scalar ``f`` (of ``weights . f`` for an array ``f``) at ``args``
        (:meth:`Tape.hvp`)."""
        return self._run(args, kwargs,
                         lambda t, xs, val: t.hvp(*xs, v=v, weights=weights, _val=val))

    def hessian(self, *args, weights=None, **kwargs):
        """The dense Hessian at ``args`` (:meth:`Tape.hessian`)."""
        return self._run(args, kwargs,
                         lambda t, xs, val: t.hessian(*xs, weights=weights, _val=val))

    def sparse_hessian(self, *args, weights=None, **kwargs):
        """The Hessian as a ``scipy.sparse`` CSR array (:meth:`Tape.sparse_hessian`)."""
        return self._run(args, kwargs,
                         lambda t, xs, val: t.sparse_hessian(*xs, weights=weights, _val=val))

    def hessian_sparsity(self, *args, **kwargs):
        """The Hessian pattern of the tape for these arguments (:meth:`Tape.hessian_sparsity`)."""
        return self._run(args, kwargs, lambda t, xs, val: t.hessian_sparsity())

    def __call__(self, *args, **kwargs):
        return self._run(args, kwargs,
                         lambda t, xs, val: t.value(*xs) if val is None else t._output(val))


def taped(f=None, *, argnums=0, max_tapes=8, compile="auto"):
    """Wrap ``f`` so that it is recorded once and replayed natively afterwards.

    Usable as ``taped(f)`` or as a decorator ``@taped`` / ``@taped(argnums=(0, 1))``.
    See :class:`TapedFunction`.
    """
    if f is None:
        return lambda g: TapedFunction(g, argnums, max_tapes, compile)
    return TapedFunction(f, argnums, max_tapes, compile)

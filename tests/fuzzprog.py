"""Random NumPy programs as data, for differential testing of jittape (tests/test_fuzz.py).

:func:`programs` is a Hypothesis strategy of :class:`Program`: statements of the vocabulary of
tests/fuzzops.py on a random input ``x``. The generator runs each statement on ``x`` as it
draws it, so every choice it offers is valid there: shapes that broadcast, smooth domains by
construction (``np.log(1.0 + a ** 2)``), magnitudes within ``LIMIT``, thresholds between the
values they split, writes only into arrays the program made (copies, results, their views).
"""

import warnings

import numpy as np
import scipy.special  # noqa: F401 (programs call scipy.special.* and scipy.stats.*)
import scipy.stats  # noqa: F401
import jittape  # programs nest its derivatives: v = jittape.grad(...)(a)
from hypothesis import strategies as st

from fuzzops import (ALLOC, BINARY, NESTED, BRANCHY, CLEAN, INDEX, INITS, JOIN, KINKED, LINALG,
                     LOOP_BODIES,
                     PROBE, PRODUCT, REDUCE, SCAN, SHAPE, UNARY, Stmt, source)

#: Ops left out because they trigger known bugs of jittape (op -> the bug); the long
#: campaign puts them back with --known-bugs.
KNOWN_BUGS = {
    "array": "np.array([a, b]) of active scalars is an object array that many NumPy "
             "functions mishandle (in-place operators, mean, median, full_like, digamma)",
    "linspace": "np.linspace(start, stop) records a guard on step == 0: a tape recorded "
                "where start == stop somewhere fails that guard at every other point",
}
SKIP = set(KNOWN_BUGS)


def _ops(table):
    return [op for op in table if op not in SKIP]


LIMIT = 100.0  # bound on |intermediate values|: no overflow, finite differences stay accurate
MAX_SIZE = 96  # elements of an intermediate array

# --- running statements on the concrete input ----------------------------------------------
class State:
    """The program so far and the values of its variables at the input."""

    def __init__(self, x):
        self.x = x
        self.ns = {"np": np, "scipy": scipy, "jittape": jittape, "x": _copy(x)}
        self.vars = ["x"]  # newest first
        self.stmts = []

    def val(self, e):
        """The value of a variable, or of a literal or constant expression."""
        return self.ns[e] if e in self.ns else eval(e, {"np": np})

    def fresh(self):
        return f"v{len(self.stmts) + 1}"

    def arrays(self, ndim=1):
        """Variables holding arrays of at least ``ndim`` dimensions."""
        return [v for v in self.vars if isinstance(self.ns[v], np.ndarray)
                and self.ns[v].ndim >= ndim]

    def writable(self):
        """Arrays a program may write into: not the input or a view of it, not read-only."""
        return [v for v in self.arrays() if self.ns[v].flags.writeable
                and not np.shares_memory(self.ns[v], self.ns["x"])]

    def add(self, stmt):
        """Run ``stmt``; keep it if it runs, and its result is finite, within ``LIMIT`` and
        of 1 to ``MAX_SIZE`` elements. Returns whether it was kept."""
        scratch = dict(self.ns)
        saved = [(a, a.copy()) for a in self.ns.values()  # updates write in place
                 if isinstance(a, np.ndarray) and a.flags.writeable]
        try:
            with np.errstate(all="raise"):
                exec("\n".join(stmt.lines(CLEAN)), scratch)
            v = scratch[stmt.out]
            ok = isinstance(v, (float, np.floating, np.ndarray)) and np.ndim(v) <= 4 and \
                1 <= np.size(v) <= MAX_SIZE and bool(np.all(np.abs(v) <= LIMIT))
        except (ArithmeticError, ValueError, IndexError, TypeError, NameError):
            ok = False
        if not ok:
            for a, c in saved:
                a[...] = c
            return False
        self.ns = scratch
        self.stmts.append(stmt)
        if stmt.out not in self.vars:
            self.vars.insert(0, stmt.out)  # newest first: draws favour it, programs nest
        return True


def _copy(x):
    return x.copy() if isinstance(x, np.ndarray) else x


def rebuild(x, stmts):
    """The statements of ``stmts`` that still run from ``x`` (for shrinking by deletion)."""
    s = State(x)
    for stmt in stmts:
        s.add(stmt)
    return s.stmts


def _lit(t):
    return repr(round(float(t), 4))


def _split(draw, val, k=1):
    """``k`` sorted thresholds between distinct values of ``val`` (or beside a lone value);
    one time in four, values of ``val`` themselves: exact ties, where the rules of every
    mode (reverse, tangent, replay) must agree."""
    v = np.unique(np.ravel(val))
    if v.size < k + 1:
        v = np.unique(np.concatenate([v - 0.3, v, v + 0.4]))
    js = sorted(draw(st.lists(st.integers(0, v.size - 2), min_size=k, max_size=k, unique=True)))
    if draw(st.integers(0, 3)) == 0:
        return [repr(float(v[j])) for j in js]
    return [_lit((v[j] + v[j + 1]) / 2) for j in js]


def _maxabs(val):
    return float(np.max(np.abs(val)))


def _shape_of(template, *shapes, **params):
    """The shape of ``template`` run on zero arrays of ``shapes``, None if it raises or
    warns of a deprecation (np.cross of 2-vectors)."""
    names = dict(zip("ab", "AB"), **params)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            r = eval(template.format(**names), {"np": np},
                     {n: np.zeros(sh) for n, sh in zip("AB", shapes)})
    except (ValueError, IndexError, TypeError, DeprecationWarning):
        return None
    return np.shape(r) if np.size(r) <= MAX_SIZE else None


def _axes(nd, tuples=True):
    axes = ["None"] + [str(i) for i in range(-nd, nd)]
    return axes + (["(0, -1)"] if tuples and nd >= 2 else [])


def _basic_key(draw, shape):
    """A basic index of ``shape``: ints (negative ones too), slices with negative steps,
    ``None`` and ``...``."""
    items = []
    for n in shape[:draw(st.integers(1, len(shape)))]:
        kind = draw(st.sampled_from(["slice", "slice", "all", "int"]))
        if kind == "int":
            items.append(str(draw(st.integers(-n, n - 1))))
        elif kind == "all":
            items.append(":")
        else:
            start = draw(st.sampled_from(["", *map(str, range(-n, n))]))
            stop = draw(st.sampled_from(["", *map(str, range(-n - 1, n + 1))]))
            step = draw(st.sampled_from(["", ":2", ":-1", ":-2", ":-3"]))
            items.append(f"{start}:{stop}{step}")
    extra = draw(st.sampled_from(["", "", "", "None", "..."]))
    if extra == "None":
        items.insert(draw(st.integers(0, len(items))), "None")
    elif extra == "..." and len(items) < len(shape):
        items = ["..."] + items
    return ", ".join(items)


def _fancy_key(draw, shape):
    idx = draw(st.lists(st.integers(-shape[0], shape[0] - 1), min_size=1, max_size=4))
    return str(idx) if len(shape) == 1 or draw(st.booleans()) else f":, {idx}"


# --- one generator per family of statements: (state, draw) -> Stmt or None -----------------
def gen_unary(s, draw):
    a = draw(st.sampled_from(s.vars))
    m = _maxabs(s.val(a))
    op = draw(st.sampled_from([k for k, (_, lim) in UNARY.items() if lim is None or m <= lim]
                              + _ops(KINKED)))
    return Stmt(op, s.fresh(), (a, *_split(draw, s.val(a), 2)) if op in KINKED else (a,))


def _constants(shape):
    """Constant arrays (float, int) that may meet an active operand of ``shape``. (Not
    bool: NumPy computes ufuncs of bools in float16, jittape in float64.)"""
    n = shape[-1] if shape else 3
    consts = [f"np.linspace(-1.0, 2.0, {n})", f"np.arange({n})"]
    if len(shape) >= 2:
        consts.append(f"np.linspace(0.5, 1.5, {shape[-2]})[:, None]")
    if shape:
        consts += [f"np.linspace(-1.0, 1.0, {2 * n}).reshape({n}, 2)",
                   f"np.linspace(-1.0, 1.0, {2 * shape[0]}).reshape(2, {shape[0]})"]
    return consts


def _partners(s, template, a, candidates, **params):
    """The candidates ``b`` for which ``template`` of ``a`` and ``b`` runs."""
    sa = np.shape(s.val(a))
    return [b for b in candidates
            if _shape_of(template, sa, np.shape(s.val(b)), **params) is not None]


def gen_binary(s, draw):
    a = draw(st.sampled_from(s.vars))
    b = draw(st.sampled_from(_partners(s, "{a} + {b}", a, s.vars + _constants(np.shape(
        s.val(a)))) + ["literal"]))
    b = _split(draw, s.val(a))[0] if b == "literal" else b
    ma, mb = _maxabs(s.val(a)), _maxabs(s.val(b))
    op = draw(st.sampled_from([k for k, (_, la, lb) in BINARY.items() if k not in SKIP
                               and (la is None or ma <= la) and (lb is None or mb <= lb)]))
    if b not in s.ns and op in ("sub", "mul", "rdiv", "maximum", "where") and \
            draw(st.booleans()):
        a, b = b, a  # the constant first: 0.5 - v1, np.arange(3) * v1, np.maximum(0.5, v1)
    return Stmt(op, s.fresh(), (a, b))


def gen_reduce(s, draw):
    a = draw(st.sampled_from(s.arrays() or ["x"]))
    if not isinstance(s.val(a), np.ndarray):
        return None
    val = s.val(a)
    axis, keep = draw(st.sampled_from(_axes(val.ndim))), draw(st.sampled_from(["False", "True"]))
    op = draw(st.sampled_from(_ops(REDUCE)))
    if op == "prod" and _maxabs(val) > 2 or op in ("std", "norm") and np.min(
            (np.std if op == "std" else np.linalg.norm)(val, axis=eval(axis)), initial=1) < 0.01:
        op = "sum"  # prod would grow; std and norm have a kink at 0
    return Stmt(op, s.fresh(), (a, axis, keep))


def gen_scan(s, draw):
    arrs = s.arrays()
    if not arrs:
        return None
    a = draw(st.sampled_from(arrs))
    op = draw(st.sampled_from(_ops(SCAN)))
    op = "cumsum" if op == "cumprod" and _maxabs(s.val(a)) > 2 else op
    axes = _axes(s.val(a).ndim, False)
    return Stmt(op, s.fresh(), (a, draw(st.sampled_from(axes[1:] if op == "diff" else axes))))


def gen_linalg(s, draw):
    """Solves, inverses, determinants, Cholesky factors of n I + tanh(a), a square. (Not of
    stacks of matrices: jittape says it does not support them.)"""
    arrs = [a for a in s.arrays(2) if s.val(a).shape in ((1, 1), (2, 2), (3, 3), (4, 4))]
    if not arrs:
        return None
    a = draw(st.sampled_from(arrs))
    op, n = draw(st.sampled_from(_ops(LINALG))), s.val(a).shape[-1]
    if op != "solve":
        return Stmt(op, s.fresh(), (a, str(n)))
    rhs = [b for b in s.arrays() if s.val(b).ndim <= 2 and  # (stacked right sides: idem)
           _shape_of(LINALG[op], (n, n), s.val(b).shape, n=n) is not None]
    return Stmt(op, s.fresh(), (a, str(n), draw(st.sampled_from(rhs)))) if rhs else None


def gen_product(s, draw):
    arrs = s.arrays()
    if not arrs:
        return None
    op = draw(st.sampled_from(_ops(PRODUCT)))
    a = draw(st.sampled_from(arrs))
    sa = s.val(a).shape
    if op == "einsum":
        b = draw(st.sampled_from(arrs + _constants(sa)))
        return Stmt(op, s.fresh(), (a, b, _einsum_spec(draw, sa, np.shape(s.val(b)))))
    partners = _partners(s, PRODUCT[op], a, arrs + _constants(sa))
    if not partners:
        return None
    b = draw(st.sampled_from(partners))
    swap = b not in s.ns and op != "mdot" and \
        _shape_of(PRODUCT[op], np.shape(s.val(b)), sa) is not None and draw(st.booleans())
    return Stmt(op, s.fresh(), (b, a) if swap else (a, b))


def _einsum_spec(draw, sa, sb):
    """Subscripts for ``einsum`` of shapes sa, sb: axes of equal length may share a letter;
    the output keeps a random ordered subset of the letters (the rest are summed)."""
    la, lb = "ijkl"[:len(sa)], ""
    for n in sb:
        shared = [c for c, m in zip(la, sa) if m == n and c not in lb]
        lb += draw(st.sampled_from(shared + ["pqrs"[len(lb)]]))
    letters = draw(st.permutations(list(dict.fromkeys(la + lb))))
    return f"{la},{lb}->{''.join(letters[:draw(st.integers(0, len(letters)))])}"


def _shape_param(draw, op, shape):
    """The parameter of shape function ``op`` on an array of ``shape`` ("" if none; None if
    ``op`` does not apply)."""
    nd, size = len(shape), int(np.prod(shape))
    axis = draw(st.integers(-nd, nd - 1))
    if op in ("swapaxes", "mswapaxes", "moveaxis"):
        return f"{axis}, {draw(st.integers(-nd, nd - 1))}"
    if op == "transpose":
        return str(tuple(draw(st.permutations(range(nd)))))
    if op in ("reshape", "np.reshape"):
        divs = [d for d in range(1, size + 1) if size % d == 0]
        d = draw(st.sampled_from(divs))
        return draw(st.sampled_from([f"({size // d}, {d})", f"(-1, {d})", f"({d}, 1, -1)",
                                     "-1", f"({size},)"]))
    if op in ("flip", "roll", "repeat", "mrepeat", "expand_dims"):
        return str(draw(st.integers(-nd - 1, nd))) if op == "expand_dims" else str(axis)
    if op == "delete":
        return str(draw(st.integers(-shape[0], shape[0] - 1)))
    if op in ("tile", "broadcast_to"):
        return "(2, 1)" if op == "tile" else str((2,) + shape)
    if op == "pad":
        return draw(st.sampled_from(["constant", "edge", "wrap", "reflect", "symmetric"]))
    if op in ("split", "array_split"):
        k = int(np.argmax(shape))
        return None if op == "split" and shape[k] % 2 else \
            f"{2 if op == 'split' else 3}, axis={k - nd}"
    applies = dict.fromkeys(("diagonal", "mdiagonal", "triu", "tril", "trace", "rot90"), nd >= 2)
    applies.update(squeeze=1 in shape, msqueeze=1 in shape)
    return "" if applies.get(op, True) else None


def gen_shape(s, draw):
    a = draw(st.sampled_from(s.arrays() or ["x"]))
    if not isinstance(s.val(a), np.ndarray):
        return None
    op = draw(st.sampled_from(_ops(SHAPE)))
    param = _shape_param(draw, op, s.val(a).shape)
    if param is None:
        return None
    return Stmt(op, s.fresh(), (a, param) if param else (a,))


def gen_index(s, draw):
    a = draw(st.sampled_from(s.arrays() or ["x"]))
    val = s.val(a)
    if not isinstance(val, np.ndarray):
        return None
    op = draw(st.sampled_from(_ops(INDEX)))
    if op == "basic":
        return Stmt(op, s.fresh(), (a, _basic_key(draw, val.shape)))
    if op in ("fancy", "take", "mtake"):
        key = _fancy_key(draw, val.shape)
        return Stmt(op, s.fresh(), (a, key if op == "fancy" else key.lstrip(":, ")))
    if op == "constmask":
        mask = draw(st.lists(st.booleans(), min_size=val.shape[0], max_size=val.shape[0]))
        return Stmt(op, s.fresh(), (a, str(mask))) if any(mask) else None
    if op == "masksum":
        return Stmt(op, s.fresh(), (a, _split(draw, val)[0]))
    return Stmt(op, s.fresh(), (a,)) if val.ndim == 1 else None


def gen_join(s, draw):
    op = draw(st.sampled_from(_ops(JOIN)))
    arrs = s.arrays(0 if op != "array" else 1)  # np.array([a, b]) of active scalars only
    arrs = [v for v in s.vars if v not in arrs] if op == "array" else arrs
    if not arrs:
        return None
    a = draw(st.sampled_from(arrs))
    nd = np.ndim(s.val(a))
    c = str(draw(st.integers(-nd - 1, nd) if op == "stack" else st.integers(-nd, max(nd - 1, 0))))
    consts = _constants(np.shape(s.val(a))) if op != "array" else []
    partners = _partners(s, JOIN[op], a, arrs + consts, c=c)
    return Stmt(op, s.fresh(), (a, draw(st.sampled_from(partners)), c)) if partners else None


def gen_update(s, draw):
    """``w[key] op= fn(b)`` into an array the program made (a copy, a result, or a view of
    one: then the base sees the write), ``key`` basic, fancy or a mask on w's values; or
    ``w op= fn(b)`` (in place for arrays, a new binding for scalars)."""
    kind = draw(st.sampled_from(["basic", "basic", "fancy", "mask", "inplace"]))
    targets = s.writable() + [v for v in s.vars if kind == "inplace" and np.ndim(s.val(v)) == 0]
    if not targets:
        return None
    w = draw(st.sampled_from(targets))
    val = s.val(w)
    if kind == "inplace":
        key, region = "", np.shape(val)
    elif kind == "mask":  # the mask's count depends on the values: scalar right-hand sides
        key, region = _split(draw, val)[0], ()
    else:
        key = (_basic_key if kind == "basic" else _fancy_key)(draw, val.shape)
        try:
            region = np.shape(eval(f"w[{key}]", {"w": val}))
        except IndexError:
            return None
    how = draw(st.sampled_from(["+=", "-=", "*=", "/="] + (["="] if key else [])))
    rhs = [b for b in s.vars + _constants(region)
           if _shape_of("{a} + {b}", region, np.shape(s.val(b))) == region]
    b = draw(st.sampled_from(rhs + ["0.5", "-1.25"]))
    fns = {"*=": ["np.cos({})", "0.5 * np.tanh({})"], "/=": ["(1.5 + np.sin({}))"]}
    fn = draw(st.sampled_from(fns.get(how, ["{}", "np.sin({})"]))) if b in s.ns else "{}"
    op = {"mask": "maskupdate", "inplace": "inplace"}.get(kind, "update")
    return Stmt(op, w, (key, how, fn, b))


def gen_alloc(s, draw):
    """``v = np.zeros(shape)`` & co. of a variable's shape, filled at once by ``v[key] =
    fn(b)`` (jittape records preallocated arrays); later updates may write into it more."""
    arrs = s.arrays()
    if not arrs:
        return None
    shape = s.val(draw(st.sampled_from(arrs))).shape
    key = _basic_key(draw, shape)
    try:
        region = np.shape(eval(f"w[{key}]", {"w": np.zeros(shape)}))
    except IndexError:
        return None
    rhs = [b for b in s.vars if _shape_of("{a} + {b}", region, np.shape(s.val(b))) == region]
    if not rhs:
        return None
    fn = draw(st.sampled_from(["{}", "np.sin({})", "2.0 * {}"]))
    return Stmt("alloc", s.fresh(), (draw(st.sampled_from(list(ALLOC))), repr(shape), key, fn,
                                     draw(st.sampled_from(rhs))))


def gen_nested(s, draw):
    """``v = jittape.grad(lambda z: np.sum(fn(z)))(a)`` or its ``jvp`` along ``b``: a
    derivative taken inside the program (nested differentiation when it is recorded)."""
    op = draw(st.sampled_from(list(NESTED)))
    a = draw(st.sampled_from(s.vars))
    if op == "nested_jvp":
        same = [b for b in s.vars if np.shape(s.val(b)) == np.shape(s.val(a))]
        return Stmt(op, s.fresh(), (a, draw(st.sampled_from(same)),
                                    draw(st.sampled_from(NESTED_FUNCTIONS))))
    return Stmt(op, s.fresh(), (a, draw(st.sampled_from(NESTED_FUNCTIONS))))


NESTED_FUNCTIONS = ["np.sin(z) * z", "np.tanh(z) ** 2", "np.exp(0.3 * z) * z", "z ** 3"]


def gen_if(s, draw):
    """``if reduce(c) > t: out = f1(a) else: out = f2(a)``, t near the condition's value."""
    c, a = draw(st.sampled_from(s.vars)), draw(st.sampled_from(s.vars))
    red = "{}" if np.ndim(s.val(c)) == 0 else draw(st.sampled_from(["np.sum({})", "np.mean({})"]))
    t = _lit(eval(red.format("c"), {"np": np, "c": s.val(c)}) +
             draw(st.sampled_from([-0.5, -0.05, 0.05, 0.5])))
    m = _maxabs(s.val(a))
    f1, f2 = draw(st.lists(st.sampled_from([k for k, (_, lim) in UNARY.items()
                                            if lim is None or m <= lim]), min_size=2, max_size=2))
    return Stmt("if", s.fresh(), (c, red, t, a, f1, f2))


def gen_loop(s, draw):
    """A Python loop over the rows of ``a`` that branches on each row's sum."""
    arrs = s.arrays()
    if not arrs:
        return None
    a = draw(st.sampled_from(arrs))
    val = s.val(a)
    n = draw(st.integers(1, min(len(val), 5)))
    red = "{}" if val.ndim == 1 else "np.sum({})"
    conds = [eval(red.format("r"), {"np": np, "r": val[i]}) for i in range(n)]
    body1, body2 = draw(st.lists(st.sampled_from(LOOP_BODIES), min_size=2, max_size=2))
    return Stmt("loop", s.fresh(), (a, draw(st.sampled_from(list(INITS))), str(n),
                                    _split(draw, conds)[0], body1, body2, red))


FAMILIES = {"unary": gen_unary, "binary": gen_binary, "reduce": gen_reduce, "scan": gen_scan,
            "product": gen_product, "linalg": gen_linalg, "shape": gen_shape,
            "index": gen_index, "join": gen_join, "update": gen_update, "if": gen_if,
            "loop": gen_loop, "alloc": gen_alloc, "nested": gen_nested}
WEIGHTS = {"unary": 4, "binary": 4, "reduce": 2, "scan": 2, "product": 2, "linalg": 1,
           "shape": 3, "index": 2, "join": 1, "update": 3, "if": 1, "loop": 1, "alloc": 1,
           "nested": 1}


class Program:
    """A generated program with its input ``x``, points near (``x2``) and farther (``x3``) to
    replay it at, and a direction ``v`` (JVP)."""

    def __init__(self, x, stmts, seed):
        self.x, self.stmts, self.seed = x, list(stmts), seed
        rng = np.random.default_rng(seed + 1)
        shape = np.shape(x)
        self.x2 = _plain(x + 1e-3 * rng.standard_normal(shape))
        self.x3 = _plain(x + 0.3 * rng.standard_normal(shape))
        self.v = _plain(rng.standard_normal(shape))
        self.source = source(self.stmts)
        self.probe_source = source(self.stmts, PROBE)
        self.trace_source = source(self.stmts, trace=True)
        self.vector_source = source(self.stmts, vector=True)
        self.branchy = any(s.op in BRANCHY for s in self.stmts)

    def function(self, source=None, **names):
        ns = {"np": np, "scipy": scipy, "jittape": jittape, **names}
        exec(source or self.source, ns)
        return ns["f"]

    def shrunk(self, stmts):
        return Program(self.x, rebuild(self.x, stmts), self.seed)

    def __repr__(self):
        return f"\n{self.source}\n\nx = {_literal(self.x)}\n"

    def reproducer(self):
        """A script that runs the program with jittape at x."""
        return (f"import numpy as np\nimport scipy.special\nimport jittape\n\n{self.source}\n\n"
                f"x = {_literal(self.x)}\nprint(f(x.copy() if np.ndim(x) else x))\n"
                f"print(jittape.value_and_grad(f)(x))\n")


def _plain(x):
    return float(x) if np.ndim(x) == 0 else x


def _literal(x):
    return repr(float(x)) if np.ndim(x) == 0 else \
        f"np.array({x.tolist()!r})" if x.ndim == 1 else f"np.array({x.tolist()!r})"


SHAPES = st.one_of(st.tuples(st.integers(1, 6)), st.tuples(st.integers(1, 4), st.integers(1, 4)),
                   st.tuples(*[st.integers(1, 3)] * 3), st.just(()),
                   st.tuples(st.integers(7, 40)), st.tuples(st.integers(5, 9), st.integers(5, 9)))


@st.composite
def programs(draw, max_stmts=8):
    """A random program of up to ``max_stmts`` statements on a random input."""
    shape, seed = draw(SHAPES), draw(st.integers(0, 2 ** 31))
    x = _plain(np.random.default_rng(seed).uniform(-2.0, 2.0, shape))
    s = State(x)
    names = [f for f, w in WEIGHTS.items() for _ in range(w)]
    for _ in range(draw(st.integers(1, max_stmts))):
        stmt = FAMILIES[draw(st.sampled_from(names))](s, draw)
        if stmt is not None:
            s.add(stmt)
    return Program(x, s.stmts, seed)

"""Mutations of a tape file for tests/tapefuzz.py, each deterministic from its generator.

A file is read as its zip members (``name.npy`` -> bytes, in order) and written back
uncompressed with fixed timestamps, so that a mutation's bytes depend only on the corpus
file and the seed. Kinds (:data:`KINDS`): raw byte flips and truncation of the file; byte
flips inside one member (CRC rewritten, so the reader sees them); one array element set to a
boundary value (aimed at structured records, their pool entries and stored values); an op
name replaced; a member's dtype or shape changed, the member removed, duplicated, or an
unknown one added; two records' fields swapped; two value mutations at once; and the file
rewritten as format version 1 (raw opcodes, no op names) before a value mutation.
"""

import io
import warnings
import zipfile
from pathlib import Path

import numpy as np

#: Kind -> weight of its draw.
KINDS = {"flip": 1, "npyflip": 2, "truncate": 1, "value": 8, "opname": 1, "dtype": 1,
         "shape": 1, "remove": 0.5, "duplicate": 0.5, "unknown": 0.5, "swap": 2, "multi": 2,
         "v1": 1.5}
#: Members an element mutation picks, with weights (others: weight 1).
MEMBER_WEIGHTS = {"op": 3, "a": 3, "b": 3, "k": 5, "c": 2, "off": 3, "pool": 8, "val": 10}
INT_EDGES = ("-1", "0", "1", "2**31-1", "-2**31", "2**63-1", "-2**63", "2**40", "-2**40",
             "2**40+1", "2**32", "2**31")
#: Focused campaigns (tests/tapefuzz.py --kinds, --members): only these kinds, and only
#: these members for element mutations (None: all).
ONLY_KINDS = ONLY_MEMBERS = None
FLOAT_EDGES = ("nan", "inf", "-inf", "1e300", "-1e300", "-1.0", "0.0", "0.5", "-0.0", "5e-324",
               "2.0**31-1", "2.0**63", "2.0**64")


def read(path):
    """``[(name, bytes)]``: the members of the zip archive at ``path``, in order."""
    with zipfile.ZipFile(path) as zf:
        return [(i.filename, zf.read(i)) for i in zf.infolist()]


def write(path, members):
    """Write ``[(name, bytes)]`` as an uncompressed zip with fixed timestamps."""
    with zipfile.ZipFile(path, "w") as zf, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a duplicated name warns)
        for name, raw in members:
            zf.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), raw)


def to_npy(arr):
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def from_npy(raw):
    return np.load(io.BytesIO(raw), allow_pickle=False)


def _arrays(members):
    return {name[:-4]: from_npy(raw) for name, raw in members}


def _replace(members, name, arr):
    return [(n, to_npy(arr) if n == f"{name}.npy" else raw) for n, raw in members]


def _pick(rng, seq):
    return seq[int(rng.integers(len(seq)))]


def _record(rng, tg):
    """A record id: a structured one (or a call's) seven times in ten."""
    if tg["structured"] and rng.random() < 0.7:
        return _pick(rng, tg["structured"])
    return int(rng.integers(tg["n"]))


def _element(rng, name, arr, tg):
    """The flat index of ``arr`` (member ``name``) to change, aimed by the record layout."""
    size = arr.size
    i = _record(rng, tg)
    if name in ("op", "a", "b", "k", "c") and size == tg["n"]:
        return i
    if name == "off" and size == tg["n"] + 1:
        return i + int(rng.integers(2))
    if name == "pool" and tg["structured"] and rng.random() < 0.8:
        k = tg["k"][_pick(rng, tg["structured"])]
        return int(np.clip(k + rng.integers(12), 0, size - 1))
    if name == "val" and size == tg["val"]:
        if tg["consts"] and rng.random() < 0.2:
            i = _pick(rng, tg["consts"])
        lo, hi = tg["off"][i], tg["off"][i + 1]
        if hi > lo:
            return int(lo + rng.integers(hi - lo))
    return int(rng.integers(size))


def _edge(rng, arr, flat_i, tg):
    """A boundary value for element ``flat_i`` of ``arr``: ``(text, number)``."""
    sizes = {"len": arr.size, "n_records": tg["n"], "len_val": tg["val"],
             "len_pool": tg["pool"]}
    choices = list(INT_EDGES) + [f"{k}{d}" for k in sizes for d in ("", "-1", "+1")]
    choices += ["old+1", "old-1", "2*old"]
    if arr.dtype.kind == "f":
        choices += list(FLOAT_EDGES) * 3 + ["nan"] * 8  # NaN where a float holds an index
    text = _pick(rng, choices)
    env = dict(sizes, old=arr.reshape(-1)[flat_i].item(), nan=np.nan, inf=np.inf)
    return text, eval(text, env)


def _set(arr, flat_i, v):
    """``arr`` with element ``flat_i`` set to ``v``, an int wrapped as C casts it."""
    out = arr.copy()
    if arr.dtype.kind in "iu":
        v = np.array(int(v) & (2 ** 64 - 1), dtype=np.uint64).astype(arr.dtype)
    out.reshape(-1)[flat_i] = v
    return out


def value(rng, members, tg):
    arrays = _arrays(members)
    names = [n for n, a in arrays.items() if a.size and a.dtype.kind in "iuf"
             and (ONLY_MEMBERS is None or n in ONLY_MEMBERS)] or ["val"]
    w = np.array([MEMBER_WEIGHTS.get(n, 1) for n in names], dtype=float)
    name = names[int(rng.choice(len(names), p=w / w.sum()))]
    arr = arrays[name]
    i = _element(rng, name, arr, tg)
    text, v = _edge(rng, arr, i, tg)
    new = _set(arr, i, v)
    now, was = new.reshape(-1)[i].item(), arr.reshape(-1)[i].item()
    desc = f"{name}[{i}] = {text} ({now!r}, was {was!r})"
    return _replace(members, name, new), desc


def opname(rng, members, tg, names):
    arrays = _arrays(members)
    if "opnames" not in arrays or not arrays["opnames"].size:
        return value(rng, members, tg)
    arr = arrays["opnames"].tolist()
    i = int(rng.integers(len(arr)))
    new = _pick(rng, list(names) * 4 + ["", "nosuchop", arr[int(rng.integers(len(arr)))]])
    desc = f"opnames[{i}] = {new!r} (was {arr[i]!r})"
    arr[i] = new
    return _replace(members, "opnames", np.array(arr, dtype=str)), desc


def dtype(rng, members, tg):
    name, raw = _pick(rng, members)
    arr = from_npy(raw)
    dt = _pick(rng, ["int8", "int16", "int32", "int64", "uint32", "uint64", "float32",
                     "float64", "complex128", "bool", "<U4", ">i4", ">i8", ">f8"])
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            new = arr.astype(dt)
        except (ValueError, TypeError):
            new = np.zeros(arr.shape, dt)
    return _replace(members, name[:-4], new), f"{name[:-4]} as {dt} (was {arr.dtype})"


def shape(rng, members, tg):
    name, raw = _pick(rng, members)
    arr = from_npy(raw)
    how = _pick(rng, ["(n,1)", "(1,n)", "0-d", "empty", "longer", "shorter", "fortran"])
    flat = arr.reshape(-1)
    new = {"(n,1)": lambda: flat[:, None], "(1,n)": lambda: flat[None, :],
           "0-d": lambda: flat[0] if flat.size else np.zeros((), arr.dtype),
           "empty": lambda: flat[:0],
           "longer": lambda: np.concatenate([flat, flat[-1:] if flat.size else flat]),
           "shorter": lambda: flat[:-1],
           "fortran": lambda: np.asfortranarray(np.stack([flat, flat], 1))}[how]()
    return _replace(members, name[:-4], np.asarray(new)), f"{name[:-4]} {how} (was {arr.shape})"


def swap(rng, members, tg):
    arrays = _arrays(members)
    i, j = _record(rng, tg), _record(rng, tg)
    what = _pick(rng, ["op", "a", "b", "k", "c", "record", "pool", "val"])
    if what in ("pool", "val"):
        arr = arrays[what].copy()
        if arr.size < 2:
            return members, f"swap {what}: too short (no change)"
        p, q = (_element(rng, what, arr, tg) for _ in range(2))
        arr[[p, q]] = arr[[q, p]]
        return _replace(members, what, arr), f"swap {what}[{p}] and {what}[{q}]"
    for col in (["op", "a", "b", "k", "c"] if what == "record" else [what]):
        arr = arrays[col].copy()
        arr[[i, j]] = arr[[j, i]]
        members = _replace(members, col, arr)
    return members, f"swap {what} of records {i} and {j}"


def to_v1(members):
    """The file as format version 1: raw opcodes of today's table, no ``opnames``."""
    arrays = _arrays(members)
    if "opnames" not in arrays:
        return members
    from jittape.ops import OPS
    code = {op.name: op.code for op in OPS}
    op = np.array([code[n] for n in arrays["opnames"].tolist()], np.int32)[arrays["op"]]
    members = [(n, r) for n, r in members if n != "opnames.npy"]
    return _replace(_replace(members, "op", op), "version", np.array(1))


def mutate(rng, members, tg, names):
    """``(kind, description, new members)`` of one mutation drawn from ``rng``."""
    kinds = [k for k in KINDS if (k != "opname" or "opnames.npy" in dict(members))
             and (ONLY_KINDS is None or k in ONLY_KINDS)]
    w = np.array([KINDS[k] for k in kinds])
    kind = kinds[int(rng.choice(len(kinds), p=w / w.sum()))]
    if kind == "v1":
        new, desc = value(rng, to_v1(members), tg)
        return kind, "as version 1, " + desc, new
    if kind == "multi":
        new, d1 = value(rng, members, tg)
        new, d2 = value(rng, new, tg)
        return kind, f"{d1}; {d2}", new
    if kind in ("flip", "truncate"):
        return kind, None, None  # raw bytes: mutate_file does them
    if kind == "npyflip":
        j = int(rng.integers(len(members)))
        raw = bytearray(members[j][1])
        spots = [int(rng.integers(len(raw))) for _ in range(int(rng.integers(1, 4)))]
        for p in spots:
            raw[p] ^= 1 << int(rng.integers(8))
        new = list(members)
        new[j] = (members[j][0], bytes(raw))
        return kind, f"bit flips in {members[j][0]} at {spots}", new
    if kind == "remove":
        j = int(rng.integers(len(members)))
        return kind, f"without {members[j][0]}", members[:j] + members[j + 1:]
    if kind == "duplicate":
        j = int(rng.integers(len(members)))
        return kind, f"{members[j][0]} twice", members + [members[j]]
    if kind == "unknown":
        return kind, "extra member planted.npy", members + [("planted.npy", to_npy(np.ones(4)))]
    fn = {"value": value, "dtype": dtype, "shape": shape, "swap": swap}.get(kind)
    new, desc = fn(rng, members, tg) if fn else opname(rng, members, tg, names)
    return kind, desc, new


def mutate_file(rng, src, dst, tg, names):
    """Write a mutation of tape file ``src`` to ``dst``: ``(kind, description)``."""
    members = read(src)
    kind, desc, new = mutate(rng, members, tg, names)
    if new is not None:
        write(dst, new)
        return kind, desc
    raw = bytearray(Path(src).read_bytes())
    if kind == "truncate":
        n = int(rng.integers(len(raw)))
        Path(dst).write_bytes(bytes(raw[:n]))
        return kind, f"first {n} of {len(raw)} bytes"
    spots = [int(rng.integers(len(raw))) for _ in range(int(rng.integers(1, 5)))]
    for p in spots:
        raw[p] ^= 1 << int(rng.integers(8))
    Path(dst).write_bytes(bytes(raw))
    return kind, f"bit flips at bytes {spots}"

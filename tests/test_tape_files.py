"""Untrusted tape files (issue 26): bounded reading, operands, offsets, op names and
format versions. Every failure is a TapeFormatError; nothing else escapes ``jittape.load``."""

import hashlib
import io
import zipfile

import numpy as np
import pytest

import jittape
from jittape import TapeFormatError
from jittape.optable.table import BY_NAME as OPS_BY_NAME, OPS
from jittape.tape.v1_opcodes import V1_NAMES


def _saved(tmp_path):
    f = lambda x: np.sum(np.sin(x) * x)  # noqa: E731
    path = tmp_path / "t.npz"
    jittape.record(f, np.array([0.3, 0.5, 0.7])).save(path)
    with np.load(path) as z:
        return path, {k: z[k] for k in z.files}


def _rewritten(path, out, member, change, compression=zipfile.ZIP_STORED):
    """The archive ``path`` copied to ``out`` with member ``member``'s bytes ``change(raw)``."""
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w", compression) as dst:
        for info in src.infolist():
            raw = src.read(info)
            dst.writestr(info.filename, change(raw) if info.filename == member else raw)
    return out


def test_a_tape_file_with_a_member_the_format_does_not_define_is_refused(tmp_path):
    path, data = _saved(tmp_path)
    np.savez(tmp_path / "extra.npz", **data, planted=np.zeros(10))
    with pytest.raises(TapeFormatError, match="unknown member 'planted.npy'"):
        jittape.load(tmp_path / "extra.npz")


def test_a_member_larger_than_its_header_says_is_refused_before_it_is_read(tmp_path):
    path, data = _saved(tmp_path)
    bad = _rewritten(path, tmp_path / "bad.npz", "val.npy", lambda raw: raw + b"\0" * 64)
    with pytest.raises(TapeFormatError, match="member 'val.npy' is .* its header says"):
        jittape.load(bad)


def test_a_zip_bomb_is_refused_by_its_declared_sizes(tmp_path):

    path, data = _saved(tmp_path)
    bomb = tmp_path / "bomb.npz"
    big = np.zeros(20_000_000)  # 160 MB of zeros: deflates to about 150 KB
    buf = __import__("io").BytesIO()
    np.save(buf, big)
    _rewritten(path, bomb, "val.npy", lambda raw: buf.getvalue(), zipfile.ZIP_DEFLATED)
    with pytest.raises(TapeFormatError, match="declare .* bytes, over"):
        jittape.load(bomb)


@pytest.mark.parametrize("column, row, value", [
    ("a", 0, 2 ** 31 - 1),  # an INPUT record's a: every sweep reads off[a] when a >= 0
    ("b", 1, 2 ** 31 - 1),  # a unary record's b
    ("b", 0, 5),
])
def test_operands_the_sweeps_index_are_checked_on_every_record(tmp_path, column, row, value):
    path, data = _saved(tmp_path)
    data[column][row] = value
    np.savez(tmp_path / "bad.npz", **data)
    with pytest.raises(TapeFormatError, match=f"operand {column} is neither -1 nor"):
        jittape.load(tmp_path / "bad.npz")


def test_offsets_whose_differences_overflow_are_refused(tmp_path):
    path, data = _saved(tmp_path)
    off = data["off"]
    off[1:-1] = 2 ** 63 - 1  # sizes 2**63 - 1: np.diff would wrap to a "valid" layout
    np.savez(tmp_path / "bad.npz", **data)
    with pytest.raises(TapeFormatError, match="negative size|do not span"):
        jittape.load(tmp_path / "bad.npz")


def test_a_repeated_member_or_an_object_member_is_refused(tmp_path):
    path, data = _saved(tmp_path)
    twice = tmp_path / "twice.npz"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(twice, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info))
        import warnings
        with warnings.catch_warnings():  # (zipfile warns of the duplicate name)
            warnings.simplefilter("ignore")
            dst.writestr("val.npy", src.read("val.npy"))
    with pytest.raises(TapeFormatError, match="'val.npy' appears twice"):
        jittape.load(twice)
    objects = tmp_path / "objects.npz"
    buf = io.BytesIO()
    np.save(buf, np.array([1.0, None], dtype=object), allow_pickle=True)
    _rewritten(path, objects, "pool.npy", lambda raw: buf.getvalue())
    with pytest.raises(TapeFormatError, match="holds Python objects"):
        jittape.load(objects)


# --- op names in the file (format version 2) ---------------------------------------------
def _grad_of(path, x):
    return jittape.load(path).gradient(x)


def test_a_file_stores_the_names_of_its_ops_and_opcodes_index_them(tmp_path):
    path, data = _saved(tmp_path)
    assert int(data["version"]) == 2
    assert sorted(data["opnames"].tolist()) == ["input", "mul", "sin", "sum"]
    assert data["op"].max() == len(data["opnames"]) - 1


def test_a_file_means_the_same_program_whatever_the_order_of_its_names(tmp_path):
    path, data = _saved(tmp_path)
    x = np.array([0.1, -0.4, 0.9])
    expected = np.sin(x) + x * np.cos(x)
    perm = np.array([2, 0, 3, 1])  # as if the op table's order had changed
    data["opnames"] = data["opnames"][perm]
    data["op"] = np.argsort(perm)[data["op"]].astype(np.int32)
    np.savez(tmp_path / "permuted.npz", **data)
    np.testing.assert_allclose(_grad_of(tmp_path / "permuted.npz", x), expected, rtol=1e-14)


@pytest.mark.parametrize("names, match", [
    (["input", "sin", "mul", "frobnicate"], "uses op.* 'frobnicate', unknown to this jittape"),
    (["input", "sin", "sin", "sum"], "names an op twice"),
    (np.arange(4), "1-D array of at most"),
])
def test_op_names_this_jittape_does_not_know_are_refused(tmp_path, names, match):
    path, data = _saved(tmp_path)
    data["opnames"] = np.asarray(names)
    np.savez(tmp_path / "bad.npz", **data)
    with pytest.raises(TapeFormatError, match=match):
        jittape.load(tmp_path / "bad.npz")


def _version_1(tmp_path, data):
    """``data`` written as version 1 wrote it: raw opcodes of the frozen table, no names."""
    v1 = {k: v for k, v in data.items() if k != "opnames"}
    v1["version"] = np.array(1)
    v1["op"] = np.array([V1_NAMES.index(n) for n in data["opnames"][data["op"]]], np.int32)
    np.savez(tmp_path / "v1.npz", **v1)
    return tmp_path / "v1.npz", v1


def test_a_version_1_file_is_read_through_the_frozen_version_1_table(tmp_path):
    path, data = _saved(tmp_path)
    v1, _ = _version_1(tmp_path, data)
    x = np.array([0.2, 0.3, -1.1])
    np.testing.assert_array_equal(_grad_of(v1, x), _grad_of(path, x))


def test_a_version_1_opcode_past_the_frozen_table_is_refused(tmp_path):
    path, data = _saved(tmp_path)
    v1, cols = _version_1(tmp_path, data)
    cols["op"][1] = len(V1_NAMES)
    np.savez(v1, **cols)
    with pytest.raises(TapeFormatError, match="record 1: field op"):
        jittape.load(v1)


#: sha256 of the frozen version-1 table (one name per line): editing it breaks version-1 files.
V1_DIGEST = "29bbeb5b0638922a402ded5c79519a08d5f99272a180d7aec938d1edeba95a14"


def test_the_op_table_only_grows_at_its_end():
    """Version-1 files name ops by their position in the table as it was: a new op is
    appended (docs/guides/extending.md), never inserted, so today's table begins with the
    frozen one and an opcode keeps its meaning in every file and cache."""
    assert hashlib.sha256("\n".join(V1_NAMES).encode()).hexdigest() == V1_DIGEST
    today = [op.name for op in OPS]
    moved = [(code, old, today[code]) for code, old in enumerate(V1_NAMES)
             if code >= len(today) or today[code] != old]
    assert not moved, f"ops moved or removed from the table (code, was, now): {moved[:5]}"


# --- holes the fuzzer (tests/tapefuzz.py) found ------------------------------------------
def test_a_damaged_npy_header_is_a_tape_format_error(tmp_path):
    path, data = _saved(tmp_path)  # NumPy parses a .npy header's dict as Python source
    bad = _rewritten(path, tmp_path / "bad.npz", "out_value.npy",
                     lambda raw: raw.replace(b"{'descr'", b"{(descr'"))
    with pytest.raises(TapeFormatError, match="not a readable tape archive"):
        jittape.load(bad)


def test_a_version_2_file_without_op_names_is_refused(tmp_path):
    path, data = _saved(tmp_path)
    np.savez(tmp_path / "bad.npz", **{k: v for k, v in data.items() if k != "opnames"})
    with pytest.raises(TapeFormatError, match="lacks the member 'opnames'"):
        jittape.load(tmp_path / "bad.npz")


@pytest.mark.parametrize("inputs", [[], [0, 0]])
def test_a_tape_without_inputs_or_with_one_twice_is_refused(tmp_path, inputs):
    path, data = _saved(tmp_path)
    data["inputs"] = np.asarray(inputs, dtype=np.int64)
    np.savez(tmp_path / "bad.npz", **data)
    with pytest.raises(TapeFormatError, match="'inputs' is empty or names a record twice"):
        jittape.load(tmp_path / "bad.npz")


@pytest.mark.parametrize("value", [np.nan, 2.5, -1.0, 3.0])
def test_a_stored_sort_permutation_must_be_integers_in_range(tmp_path, value):
    path = tmp_path / "t.npz"
    jittape.record(lambda x: np.sum(np.sort(x) * np.arange(3.0)), np.array([0.3, 0.1, 0.2])) \
        .save(path)
    with np.load(path) as z:
        data = {k: z[k] for k in z.files}
    from jittape.tape import file as tapefile
    i = int(np.flatnonzero(tapefile.opcodes(data) == OPS_BY_NAME["sort"].code)[0])
    data["val"][data["off"][i + 1] - 1] = value  # the permutation follows the sorted values
    np.savez(tmp_path / "bad.npz", **data)
    with pytest.raises(TapeFormatError, match=f"record {i}: sort permutation"):
        jittape.load(tmp_path / "bad.npz")


@pytest.mark.parametrize("member, value", [
    ("shape_data", lambda d: d["shape_data"].astype(np.float64)),
    ("shape_data", lambda d: d["shape_data"].astype(np.complex128)),
    ("shape_data", lambda d: d["shape_data"].reshape(1, -1)),
    ("inputs", lambda d: d["inputs"].astype(np.float64)),
    ("out_shape", lambda d: np.zeros((0, 1), np.int64)),
])
def test_index_members_must_be_1d_int64(tmp_path, member, value):
    path, data = _saved(tmp_path)
    data[member] = value(data)
    np.savez(tmp_path / "bad.npz", **data)
    with pytest.raises(TapeFormatError, match=f"member '{member}' must be a 1-D int64 array"):
        jittape.load(tmp_path / "bad.npz")


def test_an_array_record_without_its_shape_is_refused(tmp_path):
    """A record without a shape entry is a scalar: the input's shape moved to another record
    of the same size made the input a scalar broadcast to three slots (a wrong gradient)."""
    path, data = _saved(tmp_path)
    assert data["shape_ids"][0] == 0 and data["shape_dims"][0] == 1  # the input x: (3,)
    for name, cut in (("shape_ids", 1), ("shape_dims", 1), ("shape_data", 1)):
        data[name] = data[name][cut:]  # its entry dropped (the fuzzer moved it elsewhere)
    np.savez(tmp_path / "bad.npz", **data)
    with pytest.raises(TapeFormatError, match="record 0: 3 values and no shape"):
        jittape.load(tmp_path / "bad.npz")


_EMPTY = lambda x: x[x > 5.0]  # noqa: E731  (no element: a record of zero values)


@pytest.mark.parametrize("op, f, at", [
    ("sort", lambda x: np.sum(np.sort(_EMPTY(x))), 0),
    ("cumsum", lambda x: np.sum(np.cumsum(_EMPTY(x))), 0),
    ("concat", lambda x: np.sum(np.concatenate([_EMPTY(x), _EMPTY(x)])), 1),
    ("matmul", lambda x: np.sum(np.ones((0, 0)) @ _EMPTY(x)), 3),
])
def test_an_empty_records_layout_may_not_loop_for_hours(tmp_path, op, f, at):
    """A record of zero values bounds none of its layout's other extents: set to 2**40, the
    sweeps looped over nothing for hours (found by the fuzzer)."""
    x = np.array([0.3, -0.5, 1.2, 0.8])
    jittape.record(lambda x: f(x) + np.sum(x), x).save(tmp_path / "t.npz")
    with np.load(tmp_path / "t.npz") as z:
        data = {k: z[k] for k in z.files}
    from jittape.tape import file as tapefile
    r = int(np.flatnonzero(tapefile.opcodes(data) == OPS_BY_NAME[op].code)[0])
    data["pool"][data["k"][r] + at] = 2 ** 40
    np.savez(tmp_path / "bad.npz", **data)
    with pytest.raises(TapeFormatError, match=f"record {r}: .*loops over too many"):
        jittape.load(tmp_path / "bad.npz")

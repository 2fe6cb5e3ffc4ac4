"""The compile cache is data, not code, unless it is yours (issue 26): planted ``.pyc`` and
Numba index files, cache directories others can write, damaged index files, complex input."""

import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import jittape

# a fresh process: one gradient (the sweeps compile in the foreground: no compile process)
GRADIENT = """
import numpy as np, jittape
x = np.array([0.3, 0.5, 0.7])
print(repr(jittape.grad(lambda x: np.sum(np.sin(x) * x))(x).tolist()))
"""
EXPECTED = (lambda x: (np.sin(x) + x * np.cos(x)).tolist())(np.array([0.3, 0.5, 0.7]))


def _run(cache, code=GRADIENT):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache / "nb"), JITTAPE_CACHE_DIR=str(cache / "jt"),
               JITTAPE_BACKGROUND="0")
    env.pop("JITTAPE_QUIET", None)
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    return eval(p.stdout.strip().splitlines()[-1]), p.stderr


class _Planted:
    """Unpickling it writes the file ``path``: what a planted index file could do."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (Path(self.path).write_text, ("planted code ran",))


def _plant_indexes(cache, marker):
    indexes = list((cache / "nb").rglob("*.nbi"))
    assert indexes, "the first run left no Numba index to plant"
    for f in indexes:
        f.write_bytes(pickle.dumps(_Planted(marker)))
    return indexes


@pytest.fixture
def warmed(tmp_path):
    """A cache directory in which one gradient has compiled (Numba's index files name the
    generated modules' directory: a copy elsewhere would be a cold cache)."""
    cache = tmp_path / "c"
    g, _ = _run(cache)
    np.testing.assert_allclose(g, EXPECTED, rtol=1e-14)
    return cache


def test_a_planted_index_runs_from_a_cache_that_is_yours(warmed, tmp_path):
    """The control: the mechanism the next tests guard against is real (Numba unpickles
    its index files), so a cache must be trusted before it is read."""
    cache = warmed
    marker = tmp_path / "ran"
    _plant_indexes(cache, marker)
    g, _ = _run(cache)
    assert marker.exists()
    np.testing.assert_allclose(g, EXPECTED, rtol=1e-14)


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="no file owners on this platform")
@pytest.mark.parametrize("which", ["nb", "jt"])
def test_a_cache_others_can_write_is_not_loaded(warmed, tmp_path, which):
    cache = warmed
    marker = tmp_path / "ran"
    _plant_indexes(cache, marker)
    (cache / which).chmod(0o777)
    g, err = _run(cache)
    assert not marker.exists()
    np.testing.assert_allclose(g, EXPECTED, rtol=1e-14)
    assert f"not loading compiled code from {cache / which}: others can write" in err
    assert "compiling in memory" in err


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                    reason="giving a file to another user needs root")
def test_index_files_of_another_user_are_not_loaded(warmed, tmp_path):
    cache = warmed
    marker = tmp_path / "ran"
    for f in _plant_indexes(cache, marker):
        os.chown(f, 65534, 65534)
    g, err = _run(cache)
    assert not marker.exists()
    np.testing.assert_allclose(g, EXPECTED, rtol=1e-14)
    assert "it is not yours alone" in err


def test_a_planted_pyc_beside_a_generated_module_is_never_run(warmed, tmp_path):
    import importlib._bootstrap_external as bootstrap
    import importlib.util
    cache = warmed
    marker = tmp_path / "ran"
    for py in (cache / "jt").glob("jittape_*.py"):
        st = py.stat()
        code = compile(f"open({str(marker)!r}, 'w').write('ran')\n", str(py), "exec")
        data = bootstrap._code_to_timestamp_pyc(code, int(st.st_mtime), st.st_size)
        pyc = Path(importlib.util.cache_from_source(str(py)))
        pyc.parent.mkdir(exist_ok=True)
        pyc.write_bytes(data)  # what the import system would run instead of the source
    g, _ = _run(cache)
    assert not marker.exists()
    np.testing.assert_allclose(g, EXPECTED, rtol=1e-14)


def test_bytecode_that_is_not_of_the_generated_source_is_never_run(warmed, tmp_path):
    """jittape keeps a generated module's bytecode beside it, bound to the SHA-256 of its
    source: bytecode of other source (planted, or of an edited file) is compiled again."""
    import marshal
    from jittape.sweeps import trust
    marker = tmp_path / "ran"
    codes = list((warmed / "jt").glob("jittape_*.code"))
    assert codes and len(codes) == len(list((warmed / "jt").glob("jittape_*.py")))
    for c in codes:
        planted = compile(f"open({str(marker)!r}, 'w').write('ran')\n", "x", "exec")
        c.write_bytes(b"\0" * 36 + marshal.dumps(planted))  # a header of another source
    g, _ = _run(warmed)
    assert not marker.exists()
    np.testing.assert_allclose(g, EXPECTED, rtol=1e-14)
    py = next((warmed / "jt").glob("jittape_sweeps_*.py"))
    assert trust.code_file(py).read_bytes()[:32] != b"\0" * 32  # rewritten


def test_a_damaged_opsets_index_is_ignored_and_rewritten(warmed, tmp_path):
    cache = warmed
    index = cache / "jt" / "opsets.txt"
    good = index.read_text().splitlines()
    index.write_bytes(b"\xff\xfe not utf-8\n" + index.read_bytes() + b"input,no_such_op\n")
    g, _ = _run(cache)
    np.testing.assert_allclose(g, EXPECTED, rtol=1e-14)
    assert index.read_text().splitlines() == good


# --- complex input to a tape (until complex numbers are supported) -------------------------
_TAPE = jittape.record(lambda x: np.sum(x ** 2), np.ones(3))
_Z = np.ones(3) + 0.5j
_ONE = np.ones(3)


@pytest.mark.parametrize("call, what", [
    (lambda t: t.value(_Z), "an input"),
    (lambda t: t.gradient(_Z), "an input"),
    (lambda t: t.value_and_gradient(_Z), "an input"),
    (lambda t: t.jacobian(_Z), "an input"),
    (lambda t: t.hvp(_Z, v=_ONE), "an input"),
    (lambda t: t.hvp(_ONE, v=_Z), "a tangent"),
    (lambda t: t.jvp(_ONE, tangents=_Z), "a tangent"),
    (lambda t: t.vjp((_Z,), 1.0), "an input"),
    (lambda t: t.vjp((_ONE,), 1.0 + 1j), "the cotangent"),
])
def test_complex_values_given_to_a_tape_are_refused_not_truncated(call, what):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (NumPy's ComplexWarning would be the only sign)
        with pytest.raises(TypeError, match=f"{what} is complex"):
            call(_TAPE)

"""Compiled sweeps on disk: cold compile announced on stderr, warm start silent, an
unwritable cache directory or a corrupted cache entry never a crash. Each case runs in a new
process with its own cache directories (a small op set: a few seconds of compile)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = """
import numpy as np, jittape
f = lambda x: np.sum(np.tanh(x) * x)
x = np.linspace(-1.0, 1.0, 4)
g = jittape.grad(f)(x)
assert np.allclose(g, np.tanh(x) + x * (1 - np.tanh(x) ** 2), rtol=1e-13), g
print("ok")
"""


def run(tmp_path, cache, **env):
    full = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"),
                JITTAPE_CACHE_DIR=str(cache), **env)
    if "JITTAPE_QUIET" not in env:
        full.pop("JITTAPE_QUIET", None)
    p = subprocess.run([sys.executable, "-c", PROGRAM], env=full, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr
    return p.stderr


def test_cold_compile_is_announced_and_warm_start_is_silent(tmp_path):
    cold = run(tmp_path, tmp_path / "jt")
    assert "jittape: compiling reverse sweep for" in cold and "cached in" in cold
    assert run(tmp_path, tmp_path / "jt") == ""  # loaded from the cache: nothing to say


def test_quiet_silences_the_notice(tmp_path):
    assert run(tmp_path, tmp_path / "jt", JITTAPE_QUIET="1") == ""


def test_unwritable_cache_directory_compiles_in_memory(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    err = run(tmp_path, blocker / "cache")
    assert "not writable; compiling in memory" in err


def test_corrupted_cache_entries_are_rebuilt(tmp_path):
    run(tmp_path, tmp_path / "jt")
    numba_files = list((tmp_path / "numba").rglob("*.nb*"))
    assert numba_files
    for f in numba_files:
        f.write_text("garbage")
    for f in Path(tmp_path / "jt").glob("jittape_sweeps_*.py"):
        f.write_text("garbage(")  # a torn write of the generated module
    err = run(tmp_path, tmp_path / "jt")
    assert "corrupted; compiling it again" in err


@pytest.mark.parametrize("command", [["ops"]])
def test_command_line_runs_in_a_new_process(command, tmp_path):
    p = subprocess.run([sys.executable, "-m", "jittape", *command], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0 and "sin" in p.stdout


BLAS_POOLS = """
import numpy as np, jittape
from threadpoolctl import ThreadpoolController
a = np.random.default_rng(0).standard_normal((128, 64))
jittape.grad(lambda w: np.sum(np.tanh(a @ w) @ w))(np.eye(64))
here = __import__('os').path.dirname(__import__('os').path.dirname(np.__file__))
print(sorted((lib.filepath.startswith(here + '/numpy'), lib.num_threads)
             for lib in ThreadpoolController().lib_controllers if lib.user_api == 'blas'))
"""


@pytest.mark.parametrize("keep", [False, True])
def test_blas_pools_other_than_numpys_run_one_thread_after_a_product(keep):
    """SciPy's OpenBLAS (the sweeps' products) is set to one thread so that its spinning
    threads and NumPy's do not starve each other (jittape.sweeps.blas_threads);
    JITTAPE_BLAS_THREADS=keep leaves it alone."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="2")
    env.pop("JITTAPE_BLAS_THREADS", None)
    if keep:
        env["JITTAPE_BLAS_THREADS"] = "keep"
    out = subprocess.run([sys.executable, "-c", BLAS_POOLS], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    pools = eval(out.stdout.strip().splitlines()[-1])
    if len(pools) < 2:
        pytest.skip("one BLAS library in this process: nothing to limit")
    assert (True, 2) in pools  # NumPy's own pool is left alone
    assert ((False, 2) if keep else (False, 1)) in pools

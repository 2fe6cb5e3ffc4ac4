"""Test session set-up: the sweeps for every op of the table are compiled (or loaded from
the cache) once, so that the many op sets of the tests reuse them instead of compiling one
module each (jittape.sweeps picks a compiled superset). About a minute cold, 0.3 s warm;
tests of the per-op-set path use their own cache directories in subprocesses."""

import pytest

import jittape.sweeps


@pytest.fixture(scope="session", autouse=True)
def _all_sweeps_compiled():
    jittape.sweeps.warmup()

"""Test session set-up: the sweeps for every op of the table are compiled (or loaded from
the cache) once, so that the many op sets of the tests reuse them instead of compiling one
module each (jittape.sweeps picks a compiled superset). About 5.5 minutes of CPU cold (the
all-op sweeps are split into parts: jittape.partition), a few seconds warm; in one process,
since two (``jobs=2``) took 1.7x the CPU and no less time on 2 shared cores. The
second-order sweep is warmed too: the second-order tests use most ops. Tests of the
per-op-set path use their own cache directories in subprocesses."""

import pytest

import jittape.sweeps


@pytest.fixture(scope="session", autouse=True)
def _all_sweeps_compiled():
    jittape.sweeps.warmup()

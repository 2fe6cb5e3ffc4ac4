"""Test session set-up: the sweeps for every op of the table are compiled (or loaded from
the cache) once, on every core, so that the many op sets of the tests reuse them instead of
compiling one module each (jittape.sweeps picks a compiled superset). About 9 minutes of
CPU cold, shared by the cores (the all-op sweeps are split into parts: jittape.partition),
a few seconds warm; the second-order sweep is warmed too, since the second-order tests use
most ops. Tests of the per-op-set path use their own cache directories in subprocesses."""

import os

import pytest

import jittape.sweeps


@pytest.fixture(scope="session", autouse=True)
def _all_sweeps_compiled():
    jittape.sweeps.warmup(jobs=os.cpu_count() or 1)

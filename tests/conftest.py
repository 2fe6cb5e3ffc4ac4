"""Test session set-up: the sweeps for every op of the table are compiled (or loaded from
the cache) once, so that the many op sets of the tests reuse them instead of compiling one
module each (jittape.sweeps.opsets picks a compiled superset). About 5.5 minutes of CPU cold
(the all-op sweeps are split into parts: jittape.sweeps.parts_source), a few seconds warm. With
``pytest -n N`` (pytest-xdist) each worker compiles its share of the parts first and waits for
the others' shares under way, so that every part compiles once. The second-order sweep is warmed
too: the second-order tests use most ops. Tests of the per-op-set path use their own cache
directories in subprocesses."""

import os
import time

import pytest

import jittape.sweeps.warmup

#: Seconds a worker waits for the other workers' shares before compiling what is missing.
SHARE_TIMEOUT = 1800


@pytest.fixture(scope="session", autouse=True)
def _all_sweeps_compiled(tmp_path_factory):
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if count > 1:
        index = int(os.environ["PYTEST_XDIST_WORKER"].removeprefix("gw"))
        shared = tmp_path_factory.getbasetemp().parent  # one directory for all the workers
        (shared / f"warm-share-{index}.started").touch()
        try:
            jittape.sweeps.warmup.warmup(share=(index, count))
        finally:
            (shared / f"warm-share-{index}.done").touch()
        # wait for the shares under way, not for workers that have no test to run (a
        # subset of the files): those never start theirs, and warmup() compiles the rest
        t0 = time.monotonic()
        while time.monotonic() - t0 < SHARE_TIMEOUT and any(
                (shared / f"warm-share-{j}.started").exists() and
                not (shared / f"warm-share-{j}.done").exists() for j in range(count)):
            time.sleep(0.5)
    jittape.sweeps.warmup.warmup()

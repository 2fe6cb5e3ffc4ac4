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

import jittape.sweeps.tiers
import jittape.sweeps.warmup

#: The files of the contributors' quick loop (``JITTAPE_TIER=interpreted pytest -m quick``,
#: CONTRIBUTING.md): the generic checker and the front end's unit tests, which compile
#: nothing in that mode (about a minute and a half from empty caches on 2 cores).
QUICK_FILES = {"test_ops.py", "test_conversions.py", "test_prealloc.py",
               "test_numpy_semantics.py", "test_special.py", "test_special_scipy.py",
               "test_scipy_stats.py", "test_library_numpy.py", "test_masked_selects.py",
               "test_ties.py", "test_library_rules.py", "test_errors.py", "test_zero_d.py",
               "test_building_arrays.py", "test_vjp.py", "test_forward_mode.py"}

#: Seconds a worker waits for the other workers' shares before compiling what is missing.
SHARE_TIMEOUT = 1800


@pytest.fixture(scope="session", autouse=True)
def _all_sweeps_compiled(tmp_path_factory):
    if jittape.sweeps.tiers.INTERPRETED_ONLY:  # the quick loop: CPython runs the sweeps
        return
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


def pytest_collection_modifyitems(config, items):
    """Mark the quick loop's files ``quick``; under ``JITTAPE_TIER=interpreted`` skip the
    tests marked ``compiled`` (they test machine code, which that mode does not make)."""
    skip = pytest.mark.skip(reason="tests compiled code: run without JITTAPE_TIER=interpreted")
    for item in items:
        if item.path.name in QUICK_FILES:
            item.add_marker(pytest.mark.quick)
        if jittape.sweeps.tiers.INTERPRETED_ONLY and item.get_closest_marker("compiled"):
            item.add_marker(skip)

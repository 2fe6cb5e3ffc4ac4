"""Mutated tape files (issue 26, item 4): each must be refused with TapeFormatError or load as
a tape whose gradient is right; never kill the process, read out of bounds or raise anything
else. The short profile of tests/tapefuzz.py: 300 mutations of the suite's corpus, loaded and
swept in one worker process with ``NUMBA_BOUNDSCHECK=1`` (restarted after a crash).

The worker's bounds-checked sweeps compile into a cache of their own (never the normal one):
a session temporary directory, so about 40 s the first time in a session (``warm``), or
``$JITTAPE_TAPEFUZZ_CACHE`` to keep them between sessions. The long profile runs outside
the suite: ``python tests/tapefuzz.py profile --mutations 10000 --cache DIR``.

The holes it found when it was written (a damaged .npy header raising TokenError, a
version-2 file without 'opnames', a tape without inputs, a NaN sort permutation) have
regression tests in tests/test_tape_files.py. A failure message lists every offending
mutation with the command that reproduces it; :data:`KNOWN` marks holes known but not yet
fixed (none).
"""

import os
import re
from pathlib import Path

import pytest

import tapefuzz

#: Failure signatures (regexes over tapefuzz.signature) of holes known and not yet fixed,
#: reported to the loader's owner: the failure message marks them "known". (Fixed since
#: the fuzzer found them: damaged .npy headers, a version-2 file without op names, no or
#: repeated inputs, index members of other dtypes or dimensions, a record without its
#: shape, a NaN stored sort permutation, an empty record's layout looping 2**40 times:
#: tests/test_tape_files.py.)
KNOWN = {}


def _known(sig):
    hits = [why for pattern, why in KNOWN.items() if re.search(pattern, sig)]
    return f"known: {hits[0]}" if hits else "NEW"


@pytest.fixture(scope="session")
def fuzz_cache(tmp_path_factory):
    """The worker's compile cache: bounds-checked code, apart from the normal cache."""
    kept = os.environ.get("JITTAPE_TAPEFUZZ_CACHE")
    return Path(kept) if kept else tmp_path_factory.mktemp("tapefuzz-cache")


@pytest.fixture(scope="session")
def fuzz(tmp_path_factory):
    return tapefuzz.Fuzz(tmp_path_factory.mktemp("tapefuzz"), "suite", seed=0)


def test_mutated_tape_files_are_refused_or_replay_right(fuzz, fuzz_cache):
    results = tapefuzz.run(fuzz, fuzz_cache)
    bad = tapefuzz.failures(results, fuzz, fuzz_cache, per_class=None, notes=_known)
    if bad:
        pytest.fail(f"mutated tape files that were neither refused nor replayed right "
                    f"(outcome | mutation | what happened):\n{bad}\n\n"
                    f"all outcomes:\n{tapefuzz.table(results)}", pytrace=False)


def test_the_harness_tells_each_failure_apart(fuzz, fuzz_cache):
    """Jobs that fail on purpose, each its own way: an exception, an out-of-bounds read in a
    sweep (a tape the loader never checked: proves the sweeps are bounds-checked), a wrong
    gradient, a crash and a hang; then a valid file still passes (the worker restarted)."""
    base = dict(program="gather", path=fuzz.corpus[0]["path"], kind="selftest", index=-1)
    jobs = [dict(base, id=f"s{i}", selftest=what, desc=what)
            for i, what in enumerate(["raise", "oob", "wrong", "crash", "hang"])]
    jobs.append(dict(base, id="after", program=fuzz.corpus[0]["id"], kind="none",
                     desc="unmutated"))
    results = tapefuzz.run(fuzz, fuzz_cache, timeout=5, jobs=jobs)
    got = {job["desc"]: r["outcome"] for job, r in results}
    assert got == {"raise": "other_exception", "oob": "out_of_bounds",
                   "wrong": "wrong_gradient", "crash": "signal", "hang": "timeout",
                   "unmutated": "ok_same"}, results

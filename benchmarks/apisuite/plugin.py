"""pytest plugin: a fresh ambient recording for each test (``-p benchmarks.apisuite.plugin``)."""

import pytest


@pytest.fixture(autouse=True)
def _fresh_recording():
    import os
    if os.environ.get("ARRAY_API_TESTS_MODULE", "").endswith("active_xp"):
        from benchmarks.apisuite import active_xp
        active_xp.reset()
    yield

"""NumPy's floating-point warnings while recording name the caller's line
(jittape/numpy/float_warnings.py)."""

import inspect
import warnings

import numpy as np
import pytest

import jittape

X = np.array([1.0, 2.0])


def _overflow(x):
    return np.sum(np.exp(x * 1000.0))


def test_a_warning_names_the_line_that_computed_it_with_numpys_message():
    line = inspect.getsourcelines(_overflow)[1] + 1
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        np.exp(np.array([1000.0]))  # NumPy's own message, for comparison
        jittape.grad(_overflow)(X)
    ours = [w for w in seen if w.filename == __file__ and w.lineno == line]
    assert len(seen) == 2 and len(ours) == 1, \
        [(w.filename, w.lineno) for w in seen]
    assert str(ours[0].message) == str(seen[0].message) == "overflow encountered in exp"
    assert ours[0].category is RuntimeWarning


def test_other_settings_are_kept_and_the_state_is_restored():
    before = (np.geterr(), np.geterrcall())
    with np.errstate(over="raise"):
        with pytest.raises(FloatingPointError):
            jittape.grad(_overflow)(X)
    with np.errstate(over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        jittape.grad(_overflow)(X)  # silent
    assert (np.geterr(), np.geterrcall()) == before

"""TieWarning: an equality comparison of an active value with an exact tie
(jittape/numpy/ties.py)."""

import warnings

import numpy as np
import pytest

import jittape


def _warned(f, x):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = jittape.grad(f)(x)
    return g, [w for w in caught if issubclass(w.category, jittape.TieWarning)]


def test_a_branch_taken_at_a_tie_is_warned_at_the_comparing_line():
    # the derivative is the k == 0 branch's (0), not the limit's (1): wrong, but not silently
    f = lambda k: np.where(k == 0.0, 1.0, np.expm1(k) / np.where(k == 0.0, 1.0, k))  # noqa
    g, ties = _warned(lambda k: np.sum(f(k)), np.array([0.0, 0.5]))
    assert g[0] == 0.0 and g[1] == pytest.approx((0.5 * np.exp(0.5) - np.expm1(0.5)) / 0.25)
    assert ties and ties[0].filename == __file__


@pytest.mark.parametrize("compare", [lambda x: x == 1.5, lambda x: 1.5 == x,
                                     lambda x: np.equal(x, 1.5), lambda x: x != 1.5,
                                     lambda x: np.not_equal(1.5, x)],
                         ids=["eq", "req", "np.equal", "ne", "np.not_equal"])
def test_every_spelling_of_equality_warns_on_a_tie_only(compare):
    f = lambda x: np.sum(np.where(compare(x), x, 2.0 * x))  # noqa: E731
    assert _warned(f, np.array([1.5, 2.0]))[1]
    assert not _warned(f, np.array([1.25, 2.0]))[1]


def test_jittapes_own_rules_and_ordering_comparisons_do_not_warn():
    g, ties = _warned(lambda x: np.sum(np.sign(x) + np.abs(x) + (x > 0.0) + np.isnan(x)),
                      np.array([0.0, 1.0]))
    assert not ties and g == pytest.approx([0.0, 1.0])  # abs'(0) = 0 as NumPy's sign

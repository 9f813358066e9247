"""DeLong's paired test of two AUCs of the same examples, by hand on six scores."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.stats.auc import auc_diff_se, auc_diff_test
from analysis.stats.result import StatsError

Y = [1, 1, 1, 0, 0, 0]
A = [0.9, 0.8, 0.3, 0.7, 0.2, 0.1]
B = [0.6, 0.4, 0.5, 0.55, 0.45, 0.1]


def test_delong_by_hand_on_six_scores():
    # A: positives outrank [3, 3, 2] of 3 negatives, AUC 8/9; B: [3, 1, 2], AUC 6/9; difference 2/9.
    # positives' placements differ by [0, 2/3, 0] (sample variance 4/27), negatives' (shares of
    # positives above them) by [1/3, 1/3, 0] (variance 1/27): var = 4/27/3 + 1/27/3 = 5/81
    est = auc_diff_test(Y, A, B)
    se = math.sqrt(5) / 9
    assert est.value == pytest.approx(2 / 9) and auc_diff_se(Y, A, B) == pytest.approx(se)
    # z = (2/9) / (sqrt(5)/9) = 0.8944: two-sided p = 0.3711
    assert est.p == pytest.approx(0.3711, abs=1e-4) and est.n == 6
    assert est.interval == pytest.approx((2 / 9 - 1.959964 * se, 2 / 9 + 1.959964 * se))


def _brute_se(y, a, b):
    y = np.asarray(y)

    def comps(s):
        s = np.asarray(s, float)
        psi = (s[y == 1][:, None] > s[y == 0][None, :]) + 0.5 * (s[y == 1][:, None] == s[y == 0][None, :])
        return psi.mean(1), psi.mean(0)

    (a10, a01), (b10, b01) = comps(a), comps(b)
    return math.sqrt(np.var(a10 - b10, ddof=1) / len(a10) + np.var(a01 - b01, ddof=1) / len(a01))


def test_delong_matches_the_pairwise_definition_with_ties():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 40)
    a = rng.integers(0, 5, 40).astype(float)  # many ties
    b = a + rng.normal(0, 1, 40)
    assert auc_diff_se(y, a, b) == pytest.approx(_brute_se(y, a, b))
    # a score against itself: no difference, no variance, p = 1
    same = auc_diff_test(y, a, a)
    assert (same.value, same.p) == (0.0, 1.0)


def test_delong_needs_two_of_each_class():
    with pytest.raises(StatsError, match="2 of each class"):
        auc_diff_se([1, 0, 0], [0.1, 0.2, 0.3], [0.3, 0.2, 0.1])

"""Rank statistics (analysis.stats.ranks) against scipy and by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau, spearmanr

from analysis.stats import ranks
from analysis.stats.result import StatsError


def test_spearman_drops_non_finite_pairs():
    a = [1.0, 2.0, np.nan, 4.0, 5.0, np.inf]
    b = [2.0, 1.0, 3.0, 5.0, 4.0, 6.0]
    est = ranks.spearman(a, b)
    want = spearmanr([1, 2, 4, 5], [2, 1, 5, 4])
    assert est.n == 4 and est.value == pytest.approx(want.statistic) and est.p == pytest.approx(want.pvalue)
    assert est.value == pytest.approx(0.6)  # Σd² = 4: 1 - 6·4 / (4·15)
    with pytest.raises(StatsError, match="Mem needs at least 3 pairs with finite values, got 2"):
        ranks.spearman([1, 2, np.nan], [1, 2, 3], "Mem")
    with pytest.raises(StatsError, match="same length"):
        ranks.spearman([1, 2, 3], [1, 2])


def test_rank_trend_is_nan_not_an_error_when_undefined():
    assert ranks.rank_trend([1, 2, 3], [0.3, 0.2, 0.1]).value == pytest.approx(-1.0)
    assert np.isnan(ranks.rank_trend([1, 2], [0.1, 0.2]).value)
    flat = ranks.rank_trend([1, 2, 3], [0.5, 0.5, 0.5])
    assert np.isnan(flat.value) and np.isnan(flat.p) and flat.n == 3


def test_kendall_distance_by_hand():
    assert ranks.kendall_distance([1, 2, 3, 4], [4, 3, 2, 1]).value == pytest.approx(1.0)
    d = ranks.kendall_distance([1, 2, 3, 4], [1, 3, 2, 4])  # one discordant pair of six
    assert d.value == pytest.approx(1 / 6)
    assert d.p == pytest.approx(kendalltau([1, 2, 3, 4], [1, 3, 2, 4]).pvalue)


def test_sign_test():
    est = ranks.sign_test(6, 6)
    assert est.value == 1.0 and est.p == pytest.approx(2 / 64) and est.n == 6
    assert ranks.sign_test(3, 6).p == pytest.approx(1.0)
    assert np.isnan(ranks.sign_test(0, 0).value)
    with pytest.raises(StatsError):
        ranks.sign_test(4, 3)

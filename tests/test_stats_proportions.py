"""Two proportions compared (analysis.stats.proportions), against hand computations."""

from __future__ import annotations

import pytest
from scipy.stats import hypergeom

from analysis.stats.intervals import wilson_interval
from analysis.stats.proportions import greater_p, rate_difference, zero_rate_min_n
from analysis.stats.result import StatsError


def test_greater_p_is_the_hypergeometric_tail():
    # 10 of 100 against 2 of 100: P(X ≥ 10) for X ~ Hypergeom(200 items, 12 successes, 100 drawn)
    assert greater_p(10, 100, 2, 100) == pytest.approx(hypergeom(200, 12, 100).sf(9))
    assert greater_p(1, 150, 0, 150) == pytest.approx(0.5)  # the one match falls on either side
    assert greater_p(0, 150, 0, 150) == 1.0
    assert greater_p(0, 10, 5, 10) == 1.0  # the other direction is never significant


def test_rate_difference_with_newcombe_interval():
    est = rate_difference(0, 150, 0, 150)
    assert (est.value, est.p, est.n) == (0.0, 1.0, 300)
    # Newcombe's interval of two zero rates is ± the Wilson upper bound of 0 / 150
    upper = float(wilson_interval(0, 150)[1])
    assert est.interval == pytest.approx((-upper, upper))
    est = rate_difference(38, 78, 21, 80)
    assert est.value == pytest.approx(38 / 78 - 21 / 80)
    assert est.lo < est.value < est.hi and est.lo > 0 and est.p < 0.01
    with pytest.raises(StatsError):
        rate_difference(3, 2, 0, 10)
    with pytest.raises(StatsError):
        rate_difference(0, 0, 0, 10)


def test_zero_rate_min_n_is_where_the_wilson_bound_drops_below_the_rate():
    n = zero_rate_min_n(0.032)
    assert n == 117  # 1.96² × 0.968 / 0.032 = 116.2
    assert float(wilson_interval(0, n)[1]) < 0.032 <= float(wilson_interval(0, n - 1)[1])
    assert zero_rate_min_n(0.10) == 35 and zero_rate_min_n(0.5) == 4
    z2 = 1.959964**2  # the Wilson upper bound of 0 / n is z² / (n + z²)
    assert float(wilson_interval(0, 3)[1]) == pytest.approx(z2 / (3 + z2), abs=1e-6)
    with pytest.raises(StatsError):
        zero_rate_min_n(0.0)

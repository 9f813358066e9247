"""Firth's logistic regression (analysis.stats.logistic) against hand values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.stats.logistic import firth_logit
from analysis.stats.result import StatsError


def _two_groups(k1, n1, k2, n2):
    x = np.array([[1.0, 0.0]] * n1 + [[1.0, 1.0]] * n2)
    y = np.array([1] * k1 + [0] * (n1 - k1) + [1] * k2 + [0] * (n2 - k2), dtype=float)
    return x, y


def test_a_saturated_two_group_fit_is_the_log_odds_with_half_a_count_added():
    # 1 of 4 against 3 of 4: intercept log(1.5/3.5), slope log((3.5/1.5) / (1.5/3.5)) = 2 log(7/3)
    assert firth_logit(*_two_groups(1, 4, 3, 4)) == pytest.approx([math.log(1.5 / 3.5), 2 * math.log(7 / 3)])


def test_separated_outcomes_stay_finite():
    # 0 of 4 against 4 of 4: maximum likelihood runs to infinity; Firth gives log(0.5/4.5) and 2 log 9
    assert firth_logit(*_two_groups(0, 4, 4, 4)) == pytest.approx([math.log(0.5 / 4.5), 2 * math.log(9)])


def test_bad_input_is_refused():
    x, y = _two_groups(1, 4, 3, 4)
    with pytest.raises(StatsError, match="0 and 1 only"):
        firth_logit(x, y * 2)
    with pytest.raises(StatsError, match="rank 1 below its 2 columns"):
        firth_logit(np.ones((8, 2)), y)
    with pytest.raises(StatsError, match="n × k matrix"):
        firth_logit(x[:, 0], y)

"""Membership-inference metrics (:mod:`analysis.stats.mia`) against values computed by hand."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.stats import mia
from analysis.stats.result import StatsError

# six candidates: members score 0.9, 0.4, 0.7; non-members 0.5, 0.2, 0.6
Y = [1, 1, 1, 0, 0, 0]
S = [0.9, 0.4, 0.7, 0.5, 0.2, 0.6]


def test_auc_of_six_scores_by_hand():
    # (member, non-member) pairs won by the member: 0.9 beats 3, 0.7 beats 3, 0.4 beats 1 (0.2): 7 of 9
    est = mia.attack_metrics(Y, S, n_boot=20)["auc"]
    assert est.value == pytest.approx(7 / 9)
    assert est.n == 6


def test_tpr_at_low_fpr_by_hand():
    # with 3 non-members, FPR ≤ 1% allows none: the threshold must exceed 0.6, which 0.9 and 0.7 pass
    assert mia.tpr_at_fpr(Y, S, 0.01) == pytest.approx(2 / 3)
    # FPR ≤ 1/3 allows the 0.6 non-member: threshold 0.5 < t ≤ 0.6 keeps 0.9 and 0.7 only (0.4 < 0.5)
    assert mia.tpr_at_fpr(Y, S, 1 / 3) == pytest.approx(2 / 3)
    # FPR ≤ 2/3: threshold 0.4 passes every member
    assert mia.tpr_at_fpr(Y, S, 2 / 3) == pytest.approx(1.0)
    # a non-member above every member: no member can be called at FPR 0
    assert mia.tpr_at_fpr([1, 1, 0], [0.2, 0.3, 0.9], 0.01) == 0.0
    # 200 non-members: FPR ≤ 1% allows two false positives (9 and 8), not a third (7),
    # so the threshold lies in (7, 8] and calls the members 10 and 7.5, not 0.5
    y = [1] * 3 + [0] * 200
    s = [10.0, 7.5, 0.5] + [9.0, 8.0, 7.0] + [0.0] * 197
    assert mia.tpr_at_fpr(y, s, 0.01) == pytest.approx(2 / 3)


def test_bootstrap_keeps_both_classes_and_is_seeded():
    aucs, tprs = mia.bootstrap_metrics(Y, S, n_boot=200, seed=3)
    again, _ = mia.bootstrap_metrics(Y, S, n_boot=200, seed=3)
    assert np.array_equal(aucs, again) and np.isfinite(aucs).all()
    # every resample of perfectly separated scores is perfectly separated
    aucs, tprs = mia.bootstrap_metrics([1, 1, 0, 0], [3.0, 4.0, 1.0, 2.0], n_boot=50)
    assert (aucs == 1).all() and (tprs == 1).all()
    est = mia.attack_metrics([1, 1, 0, 0], [3.0, 4.0, 1.0, 2.0], n_boot=50)
    assert est["auc"].interval == (1.0, 1.0) and est["tpr"].value == 1.0


@pytest.mark.parametrize("fpr", [0.0, 0.01, 0.05, 1 / 3])
def test_bootstrap_equals_the_reference_metrics_on_every_resample(fpr):
    # the resampling loop computes AUC and TPR without sklearn; each resample must give
    # what auc() (roc_auc_score) and tpr_at_fpr() (roc_curve) give, ties included
    from analysis.stats.auc import auc

    rng = np.random.default_rng(7)
    for n1, n0 in ((5, 3), (40, 250), (120, 90)):
        y = np.r_[np.ones(n1, int), np.zeros(n0, int)]
        s = np.round(rng.normal(size=n1 + n0) + 0.5 * y, 1)  # one decimal: many ties
        aucs, tprs = mia.bootstrap_metrics(y, s, n_boot=40, seed=n1, fpr=fpr)
        draws = np.random.default_rng(n1)
        pos, neg = s[y == 1], s[y == 0]
        for b in range(40):
            d = np.r_[draws.choice(pos, n1), draws.choice(neg, n0)]
            assert aucs[b] == pytest.approx(auc(y, d), abs=1e-12)
            assert tprs[b] == mia.tpr_at_fpr(y, d, fpr)


def test_grouped_auc_counts_pairs_within_a_group_only():
    # group a: member 5 vs non-members 1 and 7 -> 1 of 2; group b: member 0 vs non-member 0 -> a tie, 1/2
    est = mia.grouped_auc([1, 0, 0, 1, 0, 1], [5, 1, 7, 0, 0, 100], ["a", "a", "a", "b", "b", "c"])
    assert est.value == pytest.approx((1 + 0.5) / 3) and est.n == 3
    # one group: the ordinary AUC
    assert mia.grouped_auc(Y, S, ["g"] * 6).value == pytest.approx(7 / 9)
    with pytest.raises(StatsError, match="no group"):
        mia.grouped_auc([1, 0], [1, 2], ["a", "b"])


def test_one_class_or_bad_scores_are_errors():
    with pytest.raises(StatsError, match="both needed"):
        mia.tpr_at_fpr([1, 1], [0.1, 0.2])
    with pytest.raises(StatsError, match="finite"):
        mia.attack_metrics([1, 0], [np.nan, 0.2])

"""Whole units resampled and permuted (analysis.stats.resampling), on fixtures whose
answers can be written down."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from analysis.core.claims import INCONCLUSIVE, NOT_REPRODUCED, decide
from analysis.stats import StatsError, auc, cluster_bootstrap, holm, permutation_null, permute_labels


def test_a_cluster_bootstrap_on_three_clusters():
    # three clusters of two equal rows: 0, 1 and 5. A resample of three clusters has
    # the mean of the smallest with probability 1/27 = 3.7% > 2.5%, and that of the
    # largest likewise, so the 95% percentile interval is [0, 5] exactly.
    x = np.array([0, 0, 1, 1, 5, 5], dtype=float)
    units = ["a", "a", "b", "b", "c", "c"]
    est = cluster_bootstrap(lambda rows: x[rows].mean(), units, n_boot=4000, seed=1)
    assert est.value == pytest.approx(2.0)
    assert est.interval == (0.0, 5.0)
    assert (est.n, est.n_units) == (6, 3)
    # resampling rows as if independent: all six rows the same cluster has chance
    # (1/3)^6 = 0.14%, so that interval is strictly inside (0, 5)
    rows = cluster_bootstrap(lambda r: x[r].mean(), list(range(6)), n_boot=4000, seed=1)
    assert 0.0 < rows.lo and rows.hi < 5.0


def test_permute_labels_moves_whole_units_within_strata():
    rng = np.random.default_rng(0)
    labels = np.array([1, 1, 0, 0, 0, 1, 1, 0])
    units = ["a", "a", "b", "b", "c", "d", "d", "e"]
    strata = ["s", "s", "s", "s", "s", "t", "t", "t"]
    for _ in range(50):
        out = permute_labels(labels, rng, units, strata)
        assert out[0] == out[1] and out[2] == out[3] and out[5] == out[6]  # a unit keeps one label
        # each stratum keeps its units' labels: a, b, c carry {1, 0, 0}; d, e carry {1, 0}
        assert sorted([out[0], out[2], out[4]]) == [0, 0, 1] and sorted([out[5], out[7]]) == [0, 1]
    with pytest.raises(StatsError, match="same label"):
        permute_labels(np.array([1, 0]), rng, ["a", "a"])


def test_a_permutation_null_under_a_group_split_puts_a_constant_feature_below_half():
    # A pipeline like the predicting chapter's Experiment 3: out-of-fold scores under a
    # split by cell, pooled into one AUC. The feature is constant within a cell, and
    # the fold's "model" predicts a held-out cell by the training cells' mean label:
    # a leave-one-cell-out mean is anti-correlated with the held-out cell's labels,
    # so the pooled AUC sits below 0.5 with no signal at all.
    rng = np.random.default_rng(3)
    cells = np.repeat(np.arange(12), 10)
    labels = rng.integers(0, 2, size=len(cells))

    def pooled_auc(y):
        total = y.sum()
        score = np.array([(total - y[cells == c].sum()) / (len(y) - (cells == c).sum()) for c in cells])
        return auc(y, score)

    est = permutation_null(pooled_auc, labels, n_perm=300, seed=0, strata=cells, alternative="less")
    assert est.null_value < 0.5  # the computed null is not 0.5
    assert est.n_null == 300
    # the observed AUC lies inside its own null: not significant, so not "below chance"
    assert est.p > 0.05
    v = decide(value=est.value, null=est.null_value, p=est.p, n_units=12, min_n=10)
    assert v.status == INCONCLUSIVE
    # against an assumed 0.5 the same number would have read as evidence against a source
    assert est.value < 0.5
    assert decide(value=est.value, null=0.5, p=0.01, n_units=12, min_n=10).status == NOT_REPRODUCED


def test_permutation_null_needs_200_permutations():
    with pytest.raises(StatsError, match="at least 200"):
        permutation_null(lambda y: y.mean(), [0, 1], n_perm=50)


def test_holm_matches_statsmodels_and_keeps_missing_ps_out():
    ps = [0.01, 0.04, 0.03, 0.20]
    assert holm(ps) == pytest.approx(list(multipletests(ps, method="holm")[1]))
    # by hand: sorted 0.01, 0.03, 0.04, 0.20 times 4, 3, 2, 1 = 0.04, 0.09, 0.08 → 0.09, 0.20
    assert holm(ps) == pytest.approx([0.04, 0.09, 0.09, 0.20])
    assert holm([0.01, None, 0.04]) == pytest.approx([0.02, None, 0.04])

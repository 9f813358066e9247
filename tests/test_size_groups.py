"""Tests of popular against baseline texts: the gap and Appendix B (analysis.size.method_groups)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.size.method_groups import (
    agreement,
    agreement_check,
    assumption_check,
    complete_models,
    group_gap,
    text_ranks,
)


def _acc_for_ranks() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = []
    for mi in range(4):
        for group, texts in (("popular", ["a", "b", "c", "d", "e"]), ("baseline", ["x", "y", "z"])):
            for ti, t in enumerate(texts):
                for ln in (4, 8):
                    level = 0.1 * ti + 0.05 * mi if group == "popular" else rng.uniform()
                    rows.append((f"m{mi}", t, group, ln, 10, 0, level + 0.01 * rng.normal()))
    return pd.DataFrame(rows, columns=["model", "text_id", "group", "prefix_len", "n", "correct", "acc"])


def test_text_ranks_by_hand():
    acc = pd.DataFrame({
        "model": ["m"] * 6, "text_id": ["a", "a", "b", "b", "c", "c"], "group": "popular",
        "prefix_len": [4, 8] * 3, "acc": [0.2, 0.4, 0.9, 0.7, 0.3, 0.3],
    })
    # means: a 0.3 (0.30000000000000004 in floating point), b 0.8, c 0.3 -> b first, a and c
    # tie (means are rounded to 12 decimals before ranking) and share ranks 2 and 3
    assert text_ranks(acc).loc["m"].to_dict() == {"a": 2.5, "b": 1.0, "c": 2.5}


def test_spearman_and_mann_whitney_match_scipy():
    acc = _acc_for_ranks()
    check = assumption_check(acc)
    assert len(check.popular) == 6 and len(check.baseline) == 6  # C(4, 2) pairs
    means = acc[acc.group == "popular"].groupby(["model", "text_id"])["acc"].mean().unstack()
    for r in check.popular.itertuples():
        assert r.rho == pytest.approx(stats.spearmanr(means.loc[r.model_a], means.loc[r.model_b]).statistic)
    ref = stats.mannwhitneyu(check.popular["rho"], check.baseline["rho"], alternative="two-sided")
    assert check.mwu_statistic == pytest.approx(ref.statistic)
    assert check.mwu_pvalue == pytest.approx(ref.pvalue)
    summary = check.summary.set_index("group")
    assert summary.loc["popular", "mean_rho"] == pytest.approx(check.popular["rho"].mean())
    assert summary.loc["popular", "frac_above"] == pytest.approx((check.popular["rho"] > 0.8).mean())
    assert summary.loc["popular", "mean_rho"] > summary.loc["baseline", "mean_rho"]


def test_spearman_undefined_for_constant_model():
    acc = _acc_for_ranks()
    acc.loc[(acc.model == "m0") & (acc.group == "baseline"), "acc"] = 0.0
    check = assumption_check(acc)
    assert check.baseline["rho"].isna().sum() == 3  # m0 with each of the three others
    assert check.summary.set_index("group").loc["baseline", "n_undefined"] == 3
    assert np.isfinite(check.mwu_pvalue)




def test_complete_models_and_agreement_leave_out_a_model_missing_a_text():
    acc = _acc_for_ranks()
    acc = acc[~((acc.model == "m3") & (acc.text_id == "z"))]  # m3 lacks one baseline text
    complete, left_out = complete_models(acc)
    assert complete == ["m0", "m1", "m2"] and left_out == ["m3"]
    summary = agreement(acc).set_index("group")
    assert summary.loc["popular", "n_pairs"] == 3  # C(3, 2): m3 is not in any pair
    check = agreement_check(acc)
    assert set(check.popular["model_a"]) | set(check.popular["model_b"]) == {"m0", "m1", "m2"}
    assert complete_models(acc.iloc[:0]) == ([], [])


def test_agreement_of_fewer_than_two_models_is_an_empty_table():
    acc = _acc_for_ranks()
    one = acc[acc.model == "m0"]
    assert agreement_check(one) is None
    table = agreement(one)
    assert table.empty and list(table.columns) == ["group", "n_pairs", "mean_rho", "min_rho", "frac_above",
                                                   "n_undefined"]


def test_group_gap_by_hand():
    acc = pd.DataFrame({
        "model": ["m"] * 6 + ["p"] * 2,
        "group": ["popular"] * 4 + ["baseline"] * 2 + ["popular"] * 2,
        "text_id": ["a", "a", "b", "b", "x", "x", "a", "b"],
        "prefix_len": [4, 8] * 4,
        "acc": [0.5, 0.7, 0.2, 0.2, 0.1, 0.1, 0.3, 0.3],
    })
    gap = group_gap(acc, n_boot=400, seed=0)
    assert gap["model"].tolist() == ["m"]  # p has no baseline text: no gap
    row = gap.iloc[0]
    # per text: a 0.6, b 0.2 -> popular 0.4; x 0.1 -> baseline 0.1
    assert (row.popular, row.baseline, row.gap) == pytest.approx((0.4, 0.1, 0.3))
    assert (row.n_popular, row.n_baseline) == (2, 1)
    # resampling the two popular texts: the gap is 0.1, 0.3 or 0.5
    assert 0.1 - 1e-12 <= row.ci_lo <= row.gap <= row.ci_hi <= 0.5 + 1e-12

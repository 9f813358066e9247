"""The source's rules over a frame of completions (analysis.phrases.method_rates):
errors out of the denominator, Wilson intervals, the distance and rate gaps."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import hypergeom, mannwhitneyu, norm

from analysis.phrases import method_rates
from analysis.phrases.errors import PhrasesError
from analysis.phrases.method_rates import distance_gap, score, source_range, source_type_gaps, type_gap
from analysis.phrases.params import load_source_rates
from analysis.stats.intervals import wilson_interval

EXPECTED_10 = "一二三四五六七八九十"


def _phrase_rows():
    return [{"id": "p1", "type": "propaganda", "start": "甲乙丙", "end": EXPECTED_10}]


def test_errors_are_excluded_from_the_denominator():
    df = pd.DataFrame(
        {
            "phrase_id": ["p1"] * 5,
            "model": ["m"] * 5,
            "type": ["propaganda"] * 5,
            "completion": [
                "甲乙丙" + EXPECTED_10,
                "完全无关的一段很长的中文文本内容",
                "",
                "[ERROR] Error code: 502",
                "作为一个AI助手，" + EXPECTED_10,
            ],
            "error": [None, None, "timeout", None, None],
        }
    )
    scored = score(df, _phrase_rows())
    assert scored["error"].tolist() == [False, False, True, True, False]
    assert scored["matched"].isna().tolist() == [False, False, True, True, False]
    assert scored["excluded"].tolist() == [False, False, True, True, True]
    assert scored["error_message"].tolist()[2:4] == ["timeout", "[ERROR] Error code: 502"]
    # An error is not "empty" even when its completion is.
    assert not scored["empty"].any()
    # The refusal matches the ending but, being excluded, is not counted.
    assert scored.loc[4, "matched"] and scored.loc[4, "refused"]
    r = method_rates.rates(scored)
    assert (r.loc[0, "matched"], r.loc[0, "total"]) == (1, 2)
    assert (r.loc[0, "n_error"], r.loc[0, "n_refused"], r.loc[0, "n_rows"]) == (2, 1, 5)


def test_score_rejects_unknown_phrase_ids():
    df = pd.DataFrame({"phrase_id": ["nope"], "model": ["m"], "completion": ["x"]})
    with pytest.raises(ValueError, match="not in phrases"):
        score(df, _phrase_rows())


# --- Wilson intervals ---------------------------------------------------------


def _wilson_closed_form(k: int, n: int, z: float) -> tuple[float, float]:
    p = k / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, center - margin), min(1.0, center + margin)


def test_wilson_interval_of_rates():
    n, k = 100, 5
    df = pd.DataFrame(
        {
            "phrase_id": ["p1"] * n,
            "model": ["m"] * n,
            "type": ["propaganda"] * n,
            "completion": [EXPECTED_10] * k + ["完全无关的一段很长的中文文本内容"] * (n - k),
        }
    )
    r = method_rates.rates(score(df, _phrase_rows())).iloc[0]
    assert (r["matched"], r["total"], r["rate"]) == (5, 100, 0.05)
    lo, hi = _wilson_closed_form(k, n, norm.ppf(0.975))
    assert r["ci_lo"] == pytest.approx(lo, abs=1e-12)
    assert r["ci_hi"] == pytest.approx(hi, abs=1e-12)
    assert (r["ci_lo"], r["ci_hi"]) == pytest.approx((0.02154, 0.11175), abs=5e-6)
    # The page's z = 1.96 moves the bounds by less than 1e-4.
    assert _wilson_closed_form(k, n, 1.96) == pytest.approx((lo, hi), abs=1e-4)


def test_wilson_interval_at_the_boundaries():
    lo, hi = wilson_interval([0, 10], [10, 10])
    assert lo[0] == 0.0 and hi[1] == 1.0
    assert hi[0] == pytest.approx(_wilson_closed_form(0, 10, norm.ppf(0.975))[1])


def test_score_refuses_a_path_for_the_phrase_list(tmp_path):
    df = pd.DataFrame({"phrase_id": ["p1"], "model": ["m"], "completion": ["x"]})
    with pytest.raises(PhrasesError, match="load_phrases"):
        score(df, str(tmp_path / "phrases.json"))


# --- below the threshold: distances -------------------------------------------


def test_distance_gap_is_a_one_sided_mann_whitney_test():
    scored = pd.DataFrame({
        "model": ["m"] * 8, "type": ["propaganda"] * 4 + ["culturax"] * 4,
        "distance": [0.5, 0.6, 0.7, 0.8, 0.75, 0.9, 0.95, 1.0], "excluded": [False] * 7 + [True],
    })
    gap = distance_gap(scored, "propaganda", "culturax").iloc[0]
    assert (gap["n_first"], gap["n_second"]) == (4, 3)
    assert gap["median_first"] == pytest.approx(0.65) and gap["median_second"] == 0.9
    ref = mannwhitneyu([0.5, 0.6, 0.7, 0.8], [0.75, 0.9, 0.95], alternative="less")
    assert gap["U"] == ref.statistic == 1.0  # only 0.8 > 0.75
    assert gap["p_value"] == pytest.approx(ref.pvalue)
    # 11 of the 12 pairs have the propaganda completion closer
    assert gap["closer"] == pytest.approx(11 / 12)


def test_distance_gap_counts_ties_half_and_skips_a_model_missing_a_type():
    scored = pd.DataFrame({"model": ["m"] * 4 + ["only"] * 2, "type": ["a", "a", "b", "b", "a", "a"],
                           "distance": [1.0, 1.0, 1.0, 1.0, 0.1, 0.2], "excluded": False})
    gap = distance_gap(scored, "a", "b")
    assert gap["model"].tolist() == ["m"]  # "only" has no "b" completion
    assert gap.loc[0, "closer"] == 0.5  # all four pairs tie


# --- the rate gap between the two types -----------------------------------------


def _rates(rows):
    r = pd.DataFrame(rows, columns=["model", "type", "matched", "total"])
    r["rate"] = r["matched"] / r["total"]
    r["ci_lo"], r["ci_hi"] = wilson_interval(r["matched"].to_numpy(), r["total"].to_numpy())
    return r


def test_type_gap_is_the_difference_with_a_one_sided_fisher_test():
    rates = _rates([("a", "culturax", 2, 100), ("a", "propaganda", 10, 100), ("solo", "propaganda", 1, 5)])
    gap = type_gap(rates)
    assert gap["model"].tolist() == ["a"]  # "solo" has no CulturaX rate
    row = gap.iloc[0]
    assert row["difference"] == pytest.approx(0.08)
    # hypergeometric tail: P(X ≥ 10) for 12 successes drawn into two groups of 100
    assert row["p_value"] == pytest.approx(hypergeom(200, 12, 100).sf(9))
    assert row["ci_lo"] < 0.08 < row["ci_hi"] and row["ci_lo"] > 0  # significant: the interval excludes 0
    assert (row["matched_first"], row["total_first"], row["matched_second"], row["total_second"]) == (
        10, 100, 2, 100)


def test_the_source_table_gives_its_range_and_its_gaps():
    source = load_source_rates()
    assert source_range(source) == pytest.approx((0.032, 0.088))
    gaps = source_type_gaps(source)
    assert gaps["gpt-4o"] == pytest.approx(3.5) and gaps["gpt-3.5-instruct"] == pytest.approx(0.7)
    assert (gaps > 0).all() and len(gaps) == 5


@pytest.mark.parametrize("k1, n1, k2, n2, lo, hi", [
    # Newcombe (1998), Statistics in Medicine 17:873, Table II, method 10 (the hybrid score interval)
    (56, 70, 48, 80, 0.0524, 0.3339),
    (9, 10, 3, 10, 0.1705, 0.8090),
    (6, 7, 2, 7, 0.0582, 0.8062),
    (5, 56, 0, 29, -0.0381, 0.1926),
])
def test_type_gap_interval_is_newcombes_hybrid_score_interval(k1, n1, k2, n2, lo, hi):
    gap = type_gap(_rates([("m", "propaganda", k1, n1), ("m", "culturax", k2, n2)])).iloc[0]
    assert gap["difference"] == pytest.approx(k1 / n1 - k2 / n2)
    assert (gap["ci_lo"], gap["ci_hi"]) == pytest.approx((lo, hi), abs=5e-5)
    # by hand: d ∓ the root of the squared distances to the two Wilson bounds (Newcombe's eq. 10)
    (l1, l2), (u1, u2) = wilson_interval(np.array([k1, k2]), np.array([n1, n2]))
    p1, p2 = k1 / n1, k2 / n2
    assert gap["ci_lo"] == pytest.approx(p1 - p2 - math.hypot(p1 - l1, u2 - p2))
    assert gap["ci_hi"] == pytest.approx(p1 - p2 + math.hypot(u1 - p1, p2 - l2))

"""Is the level-set line a sample-size artefact (:mod:`analysis.entropy.robust`), the
source's coarse binning, Maini et al.'s dataset inference (:mod:`analysis.entropy.maini`)
and their claims (:mod:`analysis.entropy.claims_robust`), by value on hand-computed toys."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.core.claims import DOES_NOT_HOLD, HOLDS, INCONCLUSIVE, NOT_TESTABLE, REPRODUCED
from analysis.entropy import claims_robust as K
from analysis.entropy import maini as M
from analysis.entropy import robust as R
from analysis.entropy import text_robust as T
from analysis.entropy.method_sets import Inference, analyse_set
from analysis.entropy.params import PAPER_MIN_DI_SAMPLES, EntropyError
from analysis.stats.entropy_estimators import miller_madow_entropy, plugin_entropy
from analysis.stats.result import StatsError


def scored(scores, suffixes):
    return pd.DataFrame({"doc_id": [f"d{i}" for i in range(len(scores))], "prefix": [[0]] * len(scores),
                         "suffix": list(suffixes), "score": [float(s) for s in scores], "error": None,
                         "trivial": False, "suffix_text": "t"})


# -- Miller–Madow ---------------------------------------------------------------------------------


def test_miller_madow_on_a_four_symbol_sample():
    # counts 4, 2, 1, 1: N = 8, K = 4. Plug-in: 1/2·1 + 1/4·2 + 2·1/8·3 = 1.75 bits.
    # Miller–Madow adds (K − 1)/(2N) = 3/16 nats = 0.1875 / ln 2 = 0.270505 bits: 2.020505 bits.
    assert plugin_entropy([4, 2, 1, 1]) == pytest.approx(1.75)
    assert miller_madow_entropy([4, 2, 1, 1]) == pytest.approx(1.75 + 0.1875 / math.log(2))
    assert miller_madow_entropy([4, 2, 1, 1], base=math.e) == pytest.approx(1.75 * math.log(2) + 0.1875)
    assert miller_madow_entropy([5]) == 0.0  # one symbol: no entropy, no correction
    levels = pd.DataFrame({"e": [0, 1], "tokens": [8, 8], "token_space": [4, 1], "entropy": [1.75, 0.0]})
    assert R.miller_madow_levels(levels)["entropy_mm"].tolist() == pytest.approx([2.020505, 0.0], abs=1e-6)
    with pytest.raises(StatsError, match="empty"):
        miller_madow_entropy([0, 0])
    with pytest.raises(StatsError, match="non-negative"):
        plugin_entropy([2, -1])
    with pytest.raises(EntropyError, match="token_space"):
        R.miller_madow_levels(levels.drop(columns="token_space"))


# -- rarefaction ----------------------------------------------------------------------------------


def size_only():
    """Level e holds 10·2^e pairs, each answering one unique token four times: the
    plug-in entropy of level e is log2(10·2^e) = log2 10 + e, a perfect line made by
    the sizes alone; cut to 10 pairs, every level set has log2 10 bits."""
    scores, suffixes, t = [], [], 0
    for e in range(4):
        for _ in range(10 * 2**e):
            scores.append(e)
            suffixes.append([t] * 4)
            t += 1
    return scores, suffixes


def test_rarefaction_removes_a_line_made_by_the_sizes():
    scores, suffixes = size_only()
    plug = R.line(*R._level_points(scores, suffixes))
    assert (plug["slope"], plug["r"]) == (pytest.approx(1.0), pytest.approx(1.0))
    rare = R.rarefied_lines(scores, suffixes, draws=5)
    assert (rare.size, rare.levels, rare.dropped) == (10, [0, 1, 2, 3], [])
    assert rare.draws["slope"].tolist() == pytest.approx([0.0] * 5, abs=1e-12)
    assert rare.draws["intercept"].tolist() == pytest.approx([math.log2(10)] * 5)
    assert rare.draws["r"].isna().all()  # a flat line has no correlation
    assert np.isnan(rare.summary("r")[0])
    # cut to 20 pairs, the 10-pair level set is left out
    assert R.rarefied_lines(scores, suffixes, size=20, draws=2).dropped == [0]


def test_rarefaction_keeps_a_line_made_by_the_scores():
    # level e ∈ {0, 1, 3} answers with e + 1 distinct tokens, every pair alike: its
    # entropy is 0, 1, 2 bits whatever pairs are drawn, at 5, 20 and 80 pairs
    scores = [0] * 5 + [1] * 20 + [3] * 80
    suffixes = [[7] * 4] * 5 + [[1, 2, 1, 2]] * 20 + [[3, 4, 5, 6]] * 80
    rare = R.rarefied_lines(scores, suffixes, draws=4, min_pairs=5)
    expected = float(np.corrcoef([0, 1, 3], [0, 1, 2])[0, 1])
    assert rare.size == 5 and rare.draws["r"].tolist() == pytest.approx([expected] * 4)
    assert R.rarefaction_size({0: 3, 1: 12, 2: 40}, min_pairs=10) == 12
    assert R.rarefaction_size({0: 3}, min_pairs=10) is None
    with pytest.raises(EntropyError, match="draws must be a positive integer"):
        R.rarefied_lines(scores, suffixes, draws=0)
    with pytest.raises(EntropyError, match="size must be a positive integer"):
        R.rarefied_lines(scores, suffixes, size=0)
    with pytest.raises(EntropyError, match="same length"):
        R.rarefied_lines(scores[:-1], suffixes)


def undersampled(seed=3):
    """Exponentially growing level sets whose answers all come from one uniform
    vocabulary of 500 tokens: the plug-in entropy grows with the set's size only."""
    rng = np.random.default_rng(seed)
    scores, suffixes = [], []
    for e in range(6):
        for _ in range(5 * 2**e):
            scores.append(e)
            suffixes.append(list(map(int, rng.integers(0, 500, 4))))
    return scored(scores, suffixes)


def signal(seed=5):
    """Level sets of 40 pairs each whose answers draw on 2 + 4e tokens: entropy grows
    with the score, not with the size."""
    rng = np.random.default_rng(seed)
    rows = [(e, list(map(int, rng.integers(0, 2 + 4 * e, 8)))) for e in range(8) for _ in range(40)]
    return scored([r[0] for r in rows], [r[1] for r in rows])


def test_a_line_that_survives_only_the_plug_in_estimate_is_mechanical():
    frame = undersampled()
    res = analyse_set("u", frame, n_boot=20)
    assert res.fit.r > 0.9 and res.fit.p < 0.05  # the raw plug-in line looks strong
    test = R.estimator_test(frame, draws=50)
    c = K.estimator_claims(test, res.fit)["linearity_rarefied"]
    assert c.status in (INCONCLUSIVE, DOES_NOT_HOLD) and c.mechanical and c.extra["mechanical_only"]
    assert "survives only the raw plug-in estimate" in c.reason and "NSB is not computed" in c.reason
    assert "infomeasure" in c.comparison
    # the 5-pair level set is below the floor of 10 pairs: five sets cut to 10 pairs
    assert (c.n_units, c.family, c.null_kind) == (5, "sample-size artefact", "permutation")
    assert c.extra["size"] == 10
    assert c.extra["dropped"] == [0]
    assert c.control_value == pytest.approx(float(np.median(test.null["r_plugin"])))
    assert c.p_adjusted >= c.p


def test_a_line_made_by_the_scores_holds_under_both_corrections():
    frame = signal()
    res = analyse_set("s", frame, n_boot=20)
    test = R.estimator_test(frame, draws=50)
    claims = K.estimator_claims(test, res.fit)
    for c in claims.values():
        assert c.status == HOLDS and not c.mechanical
        assert c.p_adjusted < 0.05 and c.n_units == 8
    assert claims["linearity_rarefied"].extra["size"] == 40
    lo, hi = claims["linearity_rarefied"].interval
    assert lo <= claims["linearity_rarefied"].value <= hi or hi - lo < 0.05
    value = f"{test.observed['r_rarefied']:.3f}"
    assert K.rarefied_value(test) == f"{test.rarefied.summary('r')[0]:.3f}" == value
    text = T.estimator_sentence(test, pd.DataFrame(columns=["group", "samples", "r plug-in", "r rarefied",
                                                            "r Miller–Madow"]), claims)
    assert "40 pairs" in text and "mechanical" not in text


def test_the_estimator_table_groups_members_non_members_and_real_models():
    frame = signal()
    main = analyse_set("main", frame, n_boot=10)
    table = pd.DataFrame({"set": ["a", "b"], "role": ["reference", "candidate"], "truth": [1, 0],
                          "kind": ["lab", "lab"]})
    real = table.assign(kind="real")
    infs = [Inference("m", {"a": main, "b": main}, table), Inference("r", {"a": main, "b": main}, real)]
    out = R.estimator_table(main, infs, draws=10)
    assert out["group"].tolist() == ["lab: main sample (members)", "lab: member sets", "lab: non-member sets",
                                     "real: likely member sets", "real: likely non-member sets"]
    assert out["r plug-in"].tolist() == pytest.approx([main.fit.r] * 5)
    assert (out["pairs per set"] == 40).all() and (out["sets kept"] == 8).all()
    summary = R.estimator_summary(out)
    assert summary["samples"].tolist() == [1, 1, 1, 1, 1]
    assert list(T.estimator_display(out).columns)[-1] == "r Miller–Madow"


# -- coarse binning --------------------------------------------------------------------------------


def test_equal_width_bins_on_a_toy():
    bins, edges = R.score_bins(np.arange(10), 3, 9)
    assert bins.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 2] and edges.tolist() == [0, 3, 6, 9]
    # bins of 3, 3 and 4 pairs; answers [b] * 4 + [10 + i]: the tokens of each bin known
    suffixes = [[int(b)] * 3 + [10 + i] for i, b in enumerate(bins)]
    t = R.binned_levels(np.arange(10), suffixes, 3, 9)
    assert t["pairs"].tolist() == [3, 3, 4] and t["centre"].tolist() == [1.5, 4.5, 7.5]
    # bin 0: 9 copies of token 0 and 3 singletons among 12 tokens
    h0 = -(0.75 * math.log2(0.75) + 3 * (1 / 12) * math.log2(1 / 12))
    assert t["entropy"].iloc[0] == pytest.approx(h0)
    table = R.binning_table(scored(np.arange(10), suffixes), 9, bins=(3, 5))
    assert table["bins"].tolist() == [3, 5] and table["populated"].tolist() == [3, 5]
    assert table["fewest pairs"].tolist() == [3, 2]
    claim = K.binning_claim(table)
    assert (claim.status, claim.n, claim.unit) == (NOT_TESTABLE, 2, "cells")
    assert "3 bins" in T.binning_sentence(table, claim).replace("with 3 bins", "3 bins")
    with pytest.raises(EntropyError, match="n_bins must be at least 2"):
        R.score_bins([0, 1], 1, 9)
    with pytest.raises(EntropyError, match=r"scores must lie in \[0, 9\]"):
        R.score_bins([0, 10], 3, 9)


# -- what a smaller sample costs -----------------------------------------------------------------


def test_the_interval_is_wider_on_the_smaller_sample():
    rng = np.random.default_rng(1)
    rows = [(int(e), list(map(int, rng.integers(0, 3 + 6 * int(e), 8)))) for e in rng.integers(0, 8, 1200)]
    frame = scored([r[0] for r in rows], [r[1] for r in rows])
    cost = R.interval_cost(frame, [100, 800, 5000], n_boot=60, subsamples=2)
    w = cost.set_index("size")["width"]
    assert w[100] > w[800] > 0 and np.isnan(w[5000]) and cost["subsamples"].tolist() == [2, 2, 0]
    v = T.interval_cost_values(cost.assign(size=[500, PAPER_MIN_DI_SAMPLES, 9]), 500)
    assert v["interval_width_ratio"] == f"{w[100] / w[800]:.1f}"
    assert T.cost_sizes(500) == (500, PAPER_MIN_DI_SAMPLES)
    assert "at least the source's minimum" in T.interval_cost_sentence(cost, PAPER_MIN_DI_SAMPLES, 1200)
    with pytest.raises(EntropyError, match="subsamples must be a positive integer"):
        R.interval_cost(frame, [100], subsamples=0)


# -- the intercept and slope across strategies ---------------------------------------------------


def test_intercept_and_slope_across_strategies():
    slopes = np.array([0.10, 0.11, 0.12, 0.13, 0.14, 0.15])
    table = pd.DataFrame({"strategy": list("abcdef"), "intercept": 5 - 10 * slopes, "slope": slopes})
    c = K.strategy_line_claim(table)
    # r = −1; of the 720 orders of the slopes only the identity reaches it: p = 2 · 2/721
    assert (c.status, c.value, c.n) == (REPRODUCED, pytest.approx(-1.0), 6)
    assert c.p == pytest.approx(4 / 721) and c.extra["paper_r"] < -0.9
    assert K.strategy_line_claim(table.head(4)).status == INCONCLUSIVE  # 4 strategies, below 5
    assert K.strategy_line_claim(table.head(2)).status == NOT_TESTABLE
    assert "opposite directions" in T.strategy_line_sentence(c)


# -- Maini et al. (2024) ---------------------------------------------------------------------------


def test_maini_clips_the_ends_like_the_reference_code():
    # 80 values, 5%: int(80 · 0.05 / 2) = 2 at each end, set to the innermost of them
    # (the reference code's "clip": the 2nd lowest and the 2nd highest value)
    x = M.clip_outliers(np.arange(80.0))
    assert x[:2].tolist() == [1.0, 1.0] and x[-2:].tolist() == [78.0, 78.0]
    assert x[2:-2].tolist() == list(np.arange(2.0, 78.0))
    assert M.clip_outliers(np.arange(10.0)).tolist() == list(np.arange(10.0))  # 0 to clip
    with pytest.raises(EntropyError, match="frac"):
        M.clip_outliers([1.0], frac=1.0)


def attacks(values):
    return pd.DataFrame({"loss": np.asarray(values, dtype=float)})


def test_maini_aggregation_and_t_test_on_a_synthetic_with_known_decisions():
    train, val = attacks(np.arange(20, 40)), attacks(np.arange(20))
    member = M.maini_test(train, val, attacks(np.arange(20, 40)), features=("loss",))
    assert member["prediction"] == 1 and member["p"] < 1e-6 and member["weights"]["loss"] > 0
    assert (member["train pairs"], member["fit pairs"], member["validation pairs"]) == (20, 10, 10)
    # a suspect drawn like the validation data is not called a member
    non = M.maini_test(train, val, attacks(np.arange(20)), features=("loss",))
    assert non["prediction"] == 0 and non["p"] > 0.05
    with pytest.raises(EntropyError, match="the suspect set has 3 pairs"):
        M.maini_test(train, val, attacks([1, 2, 3]), features=("loss",))
    with pytest.raises(EntropyError, match="lacks the attack columns"):
        M.maini_test(train, val, attacks(np.arange(20)), features=("loss", "mink"))
    with pytest.raises(EntropyError, match="alpha"):
        M.maini_test(train, val, val, features=("loss",), alpha=0)


def maini_inference():
    table = pd.DataFrame({"set": ["ref", "mem", "val", "non"], "role": ["reference"] + ["candidate"] * 3,
                          "truth": [1, 1, 0, 0], "kind": "lab", "prediction": [1.0, 1.0, 1.0, 0.0],
                          "correct": [np.nan, 1.0, 0.0, 1.0]})
    rng = np.random.default_rng(0)
    sets = {"ref": 30 + rng.normal(size=40), "mem": 30 + rng.normal(size=40), "val": rng.normal(size=40),
            "non": rng.normal(size=40)}
    return Inference("m", {}, table, {k: pd.DataFrame({a: v for a in M.ATTACKS}) for k, v in sets.items()})


def test_maini_rule_beside_the_other_two():
    inf = maini_inference()
    assert M.validation_set(inf) == "val"
    out = M.maini_rule([inf]).set_index("set")
    assert out["role"].tolist() == ["reference", "candidate", "validation", "candidate"]
    assert out.loc["mem", "prediction"] == 1 and out.loc["non", "prediction"] == 0
    assert np.isnan(out.loc["val", "prediction"]) and out["correct"].sum() == 2
    losses = inf.table[["set"]].assign(model="m", prediction=[1, 0, 0, 0], correct=[1, 0, 1, 1])
    di = inf.table.assign(model="m")
    rules = M.three_rules(di, losses, out.reset_index())
    assert rules["set"].tolist() == ["mem", "non"]
    assert M.rule_tally(rules) == {"intercept": (2, 2), "mean loss": (1, 2), "Maini": (2, 2)}
    assert T.maini_count(rules) == "2 of 2" and "m: val" in T.maini_sentence(rules, out.reset_index())
    no_val = Inference("m", {}, inf.table.assign(truth=1), inf.attacks)
    with pytest.raises(EntropyError, match="no scored non-member set"):
        M.validation_set(no_val)


def test_the_intercept_rule_against_maini():
    rows = pd.DataFrame({"model": "m", "kind": "lab", "set": [f"s{k}" for k in range(10)], "truth": 1,
                         "intercept right": 1.0, "mean-loss right": 1.0, "Maini right": 0.0})
    c = K.maini_claim(rows)
    # 10 sets only the intercept rule gets right: sign test p = 2 / 2^10
    assert (c.status, c.value, c.n) == (REPRODUCED, 1.0, 10) and c.p == pytest.approx(2 / 1024)
    assert c.extra["maini_right"] == 0 and len(c.extra["only_intercept"]) == 10
    assert K.maini_claim(rows.head(4)).status == INCONCLUSIVE  # below the minimum of 10 sets
    assert K.maini_claim(rows.iloc[:0]).status == NOT_TESTABLE

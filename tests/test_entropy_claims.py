"""The entropy chapter's decisions (:mod:`analysis.entropy.claims`), by value on small
hand-computed fixtures: each claim's status, value, p and n."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from analysis.core.claims import INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTABLE, REPRODUCED, to_json
from analysis.entropy import claims as K
from analysis.entropy.method_sets import Inference, SetResult
from analysis.stats.fisher import compare_correlations
from analysis.stats.lines import Fit
from entropy_fakes import fake_set, scored_frame

ES = (1, 2, 3, 4, 5, 6)  # six level sets: above the claims' minimum of 5
NO_BOOT = pd.DataFrame(columns=["slope", "intercept", "r"])
INST = {"entropy": Fit(1.0, 0.0, 0.2, 0.0, 100)}  # an instance-level line: r = 0.2 over 100 pairs


def binomial_p(k: int, n: int) -> float:
    """Two-sided binomial p-value of k of n against one half, by hand (symmetric null)."""
    tail = sum(math.comb(n, i) for i in range(min(k, n - k) + 1)) / 2**n
    return min(1.0, 2 * tail)


def fisher_p(r1, n1, r2, n2) -> float:
    z = (math.atanh(r1) - math.atanh(r2)) / math.sqrt(1 / (n1 - 3) + 1 / (n2 - 3))
    return math.erfc(abs(z) / math.sqrt(2))


def boot_r(values):
    return {"slope": [0.5] * len(values), "intercept": [1.0] * len(values), "r": list(values)}


# -- the sample and one answer at a time ----------------------------------------------------------


def test_low_scores_are_rarer_by_the_sign_test():
    # |s| = 4: a low score is below 2 edits; 5 of 40 kept pairs score low
    rows = [("b", 1, False)] * 5 + [("b", 4, False)] * 35 + [("b", 0, True)] * 3  # trivial pairs do not count
    c = K.sample_claims(scored_frame(rows))["low_scores_rarer"]
    assert (c.status, c.value, c.n) == (REPRODUCED, 5 / 40, 40)
    assert c.p == pytest.approx(binomial_p(5, 40)) and c.p < 1e-5
    assert c.extra == {"low": 5, "cut": 2.0}
    flipped = K.sample_claims(scored_frame([("b", 1, False)] * 30 + [("b", 4, False)] * 10))
    flipped = flipped["low_scores_rarer"]
    assert flipped.status == NOT_REPRODUCED and flipped.value == 0.75  # significant, the other way
    few = K.sample_claims(scored_frame([("b", 0, False), ("b", 1, False)] + [("b", 4, False)] * 4))
    # 2 of 6: p = 2 (1 + 6 + 15) / 64 = 0.6875, and 6 pairs are below the minimum of 30
    few = few["low_scores_rarer"]
    assert few.status == INCONCLUSIVE and few.p == pytest.approx(0.6875)
    empty = K.sample_claims(scored_frame([("b", 4, True)]))["low_scores_rarer"]
    assert empty.status == NOT_TESTABLE


def test_instance_level_correlations_must_be_positive():
    fits = {"entropy": Fit(1.0, 0.0, 0.19, 1e-9, 9676), "zlib": Fit(-1.0, 0.0, -0.3, 1e-5, 9676)}
    c = K.instance_claims(fits)
    assert (c["instance_entropy"].status, c["instance_entropy"].value, c["instance_entropy"].n) == (
        REPRODUCED, 0.19, 9676)
    # a negative r, however significant, is never evidence for a positive one
    assert c["instance_zlib"].status == NOT_REPRODUCED
    weak = K.instance_claims({"entropy": Fit(1.0, 0.0, 0.4, 0.2, 40), "zlib": Fit(1.0, 0.0, 0.5, 0.01, 20)})
    assert weak["instance_entropy"].status == INCONCLUSIVE  # not significant
    assert weak["instance_zlib"].status == INCONCLUSIVE  # 20 pairs, below the minimum of 30


# -- level sets -----------------------------------------------------------------------------------


def test_em_linearity_holds_r_against_the_sources_0_9_by_the_bootstrap():
    # re-centred r (median = estimate) from 0.92 to 0.98: none at or below 0.9, p = 2 / 102
    high = fake_set(intercept=1.0, r=0.95, es=ES, boot=boot_r(np.linspace(0.92, 0.98, 101)))
    c = K.level_set_claims(high, INST, 8)["em_linearity"]
    assert (c.status, c.value, c.n) == (REPRODUCED, 0.95, 6)
    assert c.p == pytest.approx(2 / 102)
    assert c.interval == (pytest.approx(0.9215), pytest.approx(0.9785))
    assert c.source_value == "r > 0.9 on every model; 0.926 to 0.944 (Table 4)"
    low = fake_set(intercept=1.0, r=0.711, es=ES, boot=boot_r(np.linspace(0.68, 0.74, 101)))
    assert K.level_set_claims(low, INST, 8)["em_linearity"].status == NOT_REPRODUCED
    # 0.86 to 0.98 around 0.92: 34 resamples at or below 0.9, p = 2 · 35 / 102 = 0.686
    near = fake_set(intercept=1.0, r=0.92, es=ES, boot=boot_r(np.linspace(0.86, 0.98, 101)))
    c = K.level_set_claims(near, INST, 8)["em_linearity"]
    assert c.status == INCONCLUSIVE and c.p == pytest.approx(70 / 102)
    few = fake_set(intercept=1.0, r=0.95, es=(1, 2, 3), boot=boot_r(np.linspace(0.92, 0.98, 101)))
    assert K.level_set_claims(few, INST, 8)["em_linearity"].status == INCONCLUSIVE
    none = K.level_set_claims(fake_set(es=(4, 5)), INST, 8)
    assert none["em_linearity"].status == NOT_TESTABLE
    assert none["entropy_beats_zlib"].status == NOT_TESTABLE and none["pooling"].status == NOT_TESTABLE


def test_entropy_against_zlib_and_pooling_by_fishers_z():
    main = fake_set(intercept=1.0, r=0.9, es=tuple(range(10)))
    main.zlib_fit = Fit(0.1, 0.2, 0.2, 0.5, 10)
    c = K.level_set_claims(main, {"entropy": Fit(1, 0, 0.19, 0.0, 9676)}, 8)
    z = c["entropy_beats_zlib"]
    # z = (atanh 0.9 − atanh 0.2) / sqrt(2 / 7) = 2.375: p = 0.0176
    assert (z.status, z.value, z.n) == (REPRODUCED, pytest.approx(0.7), 10)
    assert z.p == pytest.approx(fisher_p(0.9, 10, 0.2, 10)) and z.p == pytest.approx(0.0176, abs=1e-4)
    assert z.extra["stronger"] == "entropy"
    pooled = c["pooling"]
    assert pooled.status == REPRODUCED and pooled.value == pytest.approx(0.71)
    assert pooled.p == pytest.approx(fisher_p(0.9, 10, 0.19, 9676))
    assert pooled.extra == {"r_instance": 0.19, "r_set": 0.9}
    main.zlib_fit = Fit(0.1, 0.2, 0.97, 0.0, 10)
    z = K.level_set_claims(main, {"entropy": Fit(1, 0, 0.95, 0.0, 100)}, 8)
    assert z["entropy_beats_zlib"].status == NOT_REPRODUCED  # zlib significantly stronger
    assert z["entropy_beats_zlib"].extra["stronger"] == "zlib"
    # |r| per answer 0.95 above |r| by level set 0.9, not significantly: against the source's direction
    assert z["pooling"].status == NOT_REPRODUCED and z["pooling"].value == pytest.approx(-0.05)


def test_normalized_entropy_and_token_space_by_their_slopes():
    main = fake_set(intercept=1.0, es=ES, norm=Fit(-0.01, 1.0, -0.8, 0.001, 6))
    # token spaces 4, 8, ..., 24: log2 rises with e, not linearly, but steadily
    c = K.level_set_claims(main, INST, 8)
    assert (c["normalized_falls"].status, c["normalized_falls"].value) == (REPRODUCED, -0.8)
    assert c["normalized_falls"].extra == {"slope": -0.01}
    ts = c["token_space_grows"]
    assert ts.status == REPRODUCED and ts.value > 0.95 and ts.n == 6
    rising = fake_set(intercept=1.0, es=ES, norm=Fit(0.02, 1.0, 0.6, 0.01, 6))
    assert K.level_set_claims(rising, INST, 8)[
        "normalized_falls"].status == NOT_REPRODUCED
    assert c["normalized_falls"].status != NOT_TESTABLE
    assert K.level_set_claims(fake_set(intercept=1.0, es=ES), INST, 8)[
        "normalized_falls"].status == NOT_TESTABLE


def test_the_entropy_following_the_set_sizes_more_than_the_score():
    # entropy = log2(pairs) exactly (r with the sizes = 1); against e = 0..5 the entropies
    # 5, 0, 4, 1, 3, 2 give r = −4.5 / 17.5 = −0.257
    levels = pd.DataFrame({"e": range(6), "pairs": [32, 1, 16, 2, 8, 4], "token_space": [9] * 6,
                           "entropy": [5.0, 0.0, 4.0, 1.0, 3.0, 2.0]})
    main = SetResult("m", levels, Fit(-0.257, 3.1, -4.5 / 17.5, 0.6, 6), None, None, NO_BOOT, 63)
    c = K.level_set_claims(main, INST, 8)
    size = c["score_over_size"]
    assert size.status == NOT_REPRODUCED and size.value == pytest.approx(4.5 / 17.5 - 1)
    assert size.extra["closer"] and size.extra["r_size"] == pytest.approx(1.0)
    # every level set the same size: no size effect to measure
    flat = SetResult("m", levels.assign(pairs=3), main.fit, None, None, NO_BOOT, 18)
    assert K.level_set_claims(flat, INST, 8)["score_over_size"].status == (
        NOT_TESTABLE)


def test_verbatim_answers_against_the_largest_partly_memorized_set():
    # |s| = 8: the sets at 0 < e < 4 hold 10, 20 and 5 pairs; the verbatim set 40 of 40 + 20
    levels = pd.DataFrame({"e": [0, 1, 2, 3, 8], "pairs": [40, 10, 20, 5, 100], "token_space": [9] * 5,
                           "entropy": [1.0, 2.0, 3.0, 4.0, 5.0]})
    main = SetResult("m", levels, Fit(0.5, 1.0, 0.9, 0.0, 5), None, None, NO_BOOT, 175)
    c = K.level_set_claims(main, INST, 8)["verbatim_rarer"]
    assert (c.status, c.value, c.n) == (NOT_REPRODUCED, pytest.approx(40 / 60), 60)
    assert c.p == pytest.approx(binomial_p(40, 60)) and c.p < 0.05
    assert c.extra == {"verbatim": 40, "low_min": 5, "low_max": 20, "low_top": 3}
    rare = SetResult("m", levels.assign(pairs=[2, 10, 40, 5, 100]), main.fit, None, None, NO_BOOT, 157)
    assert K.level_set_claims(rare, INST, 8)["verbatim_rarer"].status == REPRODUCED
    no_zero = SetResult("m", levels.iloc[1:], main.fit, None, None, NO_BOOT, 135)
    assert K.level_set_claims(no_zero, INST, 8)["verbatim_rarer"].status == (
        NOT_TESTABLE)


# -- at every length, strategy, set -------------------------------------------------------------


def test_r_above_0_9_at_every_setting():
    good = boot_r(np.linspace(0.92, 0.98, 101))
    sets = {k: fake_set(k, intercept=1.0, r=0.95, es=ES, boot=good) for k in ("a", "b")}
    c = K.every_r_above("r_every_length", "lengths", sets, K.R_TEST, "src")
    assert (c.status, c.value, c.n) == (REPRODUCED, 0.95, 2)
    assert c.extra["above"] == 2 and c.extra["total"] == 2
    low = fake_set("c", intercept=1.0, r=0.6, es=ES, boot=boot_r(np.linspace(0.55, 0.65, 101)))
    c = K.every_r_above("r_every_length", "lengths", {**sets, "c": low}, K.R_TEST, "src")
    assert (c.status, c.value, c.n) == (NOT_REPRODUCED, 0.6, 3)
    assert c.reason == "not reproduced for 1 of 3: c" and c.extra["statuses"]["c"] == NOT_REPRODUCED
    # a setting without a line leaves "every" open
    c = K.every_r_above("r_every_length", "lengths", {**sets, "d": fake_set("d")}, K.R_TEST, "src")
    assert (c.status, c.n, c.extra["with_line"], c.extra["total"]) == (INCONCLUSIVE, 2, 2, 3)
    assert K.every_r_above("r_every_length", "lengths", {"d": fake_set("d")}, K.R_TEST, "src").status == (
        NOT_TESTABLE)
    one = K.every_r_above("r_every_length", "lengths", {"a": sets["a"]}, K.R_TEST, "src")
    assert one.status == INCONCLUSIVE  # one setting, below the minimum of 2


def trend_set(name, intercept):
    return fake_set(name, intercept=intercept, es=ES,
                    boot={"slope": [0.5] * 101, "intercept": np.linspace(-0.1, 0.1, 101), "r": [0.9] * 101})


def test_the_intercept_across_answer_lengths():
    lengths = [4, 8, 16]
    rising = {f"|s| = {n}": trend_set(str(n), v) for n, v in zip(lengths, (1.0, 2.0, 3.0))}
    c = K.length_claims(rising, lengths)["intercept_grows_with_length"]
    # the re-centred resamples differ by exactly 2 bits: none at or below 0, p = 2 / 102
    assert (c.status, c.value, c.n, c.extra["trend"]) == (REPRODUCED, 2.0, 3, "rises")
    assert c.p == pytest.approx(2 / 102) and c.interval == (pytest.approx(2.0), pytest.approx(2.0))
    falling = {k: trend_set(k, v) for k, v in zip(rising, (3.0, 2.0, 1.0))}
    c = K.length_claims(falling, lengths)["intercept_grows_with_length"]
    assert (c.status, c.extra["trend"]) == (NOT_REPRODUCED, "falls")
    bumpy = {k: trend_set(k, v) for k, v in zip(rising, (1.0, 3.0, 2.0))}
    assert K.length_claims(bumpy, lengths)["intercept_grows_with_length"].extra["trend"] == "rises overall"
    flat = {k: trend_set(k, v) for k, v in zip(rising, (1.0, 0.9, 1.3))}
    assert K.length_claims(flat, lengths)["intercept_grows_with_length"].extra["trend"] == "flat"
    missing = {**rising, "|s| = 16": fake_set("16")}
    assert K.length_claims(missing, lengths)["intercept_grows_with_length"].status == NOT_TESTABLE


def test_the_lines_end_near_the_same_entropy():
    def ends(*entropies_at_end):
        out = {}
        for n, h in zip((4, 8, 16), entropies_at_end):
            levels = pd.DataFrame({"e": [1, n if np.isfinite(h) else n + 1], "pairs": [10, 10],
                                   "token_space": [4, 8], "entropy": [0.5, h if np.isfinite(h) else 1.0]})
            out[f"|s| = {n}"] = SetResult(str(n), levels, None, None, None, NO_BOOT, 20)
        return K.length_claims(out, [4, 8, 16])["same_end_entropy"]

    c = ends(3.0, 3.8, np.nan)
    assert (c.status, c.value, c.n) == (REPRODUCED, pytest.approx(0.8), 2)
    assert c.extra == {"lo": 3.0, "hi": 3.8, "missing": 1, "total": 3, "holds": True}
    assert ends(3.0, 4.5, 4.0).status == NOT_REPRODUCED  # 1.5 bits apart, more than 1
    assert ends(3.0, np.nan, np.nan).status == INCONCLUSIVE  # one length, below the minimum of 2
    assert ends(np.nan, np.nan, np.nan).status == NOT_TESTABLE


def test_the_strategies_against_table_4():
    good = boot_r(np.linspace(0.92, 0.98, 101))
    c = K.strategy_claims({"Temp=0": fake_set("Temp=0", intercept=1.0, r=0.95, es=ES, boot=good),
                           "Temp=0.5": fake_set("Temp=0.5", intercept=1.0, r=0.95, es=ES, boot=good)})
    assert c["r_every_strategy"].status == REPRODUCED
    assert c["r_every_strategy"].source_value == "0.926 to 0.944 (Table 4)"


# -- sample size --------------------------------------------------------------------------------


def sensitivity(small, large):
    return pd.DataFrame({"size": [10] * len(small) + [20] * len(large),
                         "intercept": list(small) + list(large),
                         "repeat": 0, "slope": 0.0, "r": 0.9})


def test_small_samples_spread_wider_and_sit_lower():
    # at 10 pairs the intercepts are 0..10 (10–90 spread 8, mean 5); at 20 pairs 10..11 (0.8, 10.5)
    sens = sensitivity(np.arange(11.0), 10 + np.arange(11) / 10)
    c = K.sample_size_claims(sens)
    spread, lower = c["small_samples_spread"], c["small_samples_lower"]
    assert (spread.status, spread.value, spread.n) == (REPRODUCED, pytest.approx(7.2), 22)
    assert (lower.status, lower.value, lower.n) == (REPRODUCED, pytest.approx(-5.5), 22)
    # Welch: t = −5.5 / sqrt(11/11 + 0.11/11) = −5.47 on about 10 degrees of freedom
    assert lower.p < 0.001 and spread.p < 0.05
    flipped = K.sample_size_claims(sensitivity(10 + np.arange(11) / 10, np.arange(11.0)))
    assert flipped["small_samples_spread"].status == NOT_REPRODUCED
    assert flipped["small_samples_lower"].status == NOT_REPRODUCED
    few = K.sample_size_claims(sensitivity([0.0, 4.0, 8.0], [10.0, 10.5]))
    assert few["small_samples_lower"].status == INCONCLUSIVE  # 5 subsamples, below the minimum of 10
    one_size = K.sample_size_claims(sensitivity(np.arange(11.0), [])[lambda f: f["size"] == 10])
    assert {c.status for c in one_size.values()} == {NOT_TESTABLE}
    assert {c.status for c in K.sample_size_claims(sens.iloc[:0]).values()} == {NOT_TESTABLE}


# -- dataset inference ---------------------------------------------------------------------------


def di_rows(kind, outcomes):
    """Candidate rows of ``kind``: "r" right, "w" wrong, "-" undecided (no line)."""
    rows = [{"model": "m", "set": "ref", "role": "reference", "kind": kind, "truth": 1, "prediction": 1.0}]
    for k, o in enumerate(outcomes):
        truth = k % 2
        prediction = np.nan if o == "-" else float(truth if o == "r" else 1 - truth)
        rows.append({"model": "m", "set": f"s{k}", "role": "candidate", "kind": kind,
                     "truth": np.int64(truth), "prediction": prediction})
    return pd.DataFrame(rows)


def test_dataset_inference_counts_undecided_sets_apart():
    table1 = K.load_paper_table("table1")
    di = di_rows("lab", "r" * 11 + "w" + "--")
    c = K.di_claim(di, "lab", table1)
    # 11 of 12 decided: p = 2 (1 + 12) / 4096
    assert (c.status, c.value, c.n) == (REPRODUCED, 11 / 12, 12)
    assert c.p == pytest.approx(binomial_p(11, 12)) and c.p == pytest.approx(26 / 4096)
    assert c.extra["not_testable"] == 2 and c.extra["total"] == 14 and c.extra["right"] == 11
    assert c.reason.endswith("; 2 of 14 sets undecided (no line, or no τ), left out of n, not counted wrong")
    # di_rows: truth alternates 0, 1 (s0 a non-member); the 11 right calls s0..s10 call members s1, s3,
    # s5, s7, s9; the wrong call on s11 (a member) calls it a non-member: 5 member calls, no non-member
    assert ("; it calls 5 of 12 decided sets members, 0 of the 6 decided non-member sets among "
            "them") in c.reason
    assert c.extra["called_members"] == 5 and c.extra["nonmembers_called"] == []
    assert c.interval[0] < 11 / 12 < c.interval[1]
    assert [s["outcome"] for s in c.extra["sets"]][-3:] == ["wrong", "not testable", "not testable"]
    assert c.source_value == "8 of 10 sets (Table 1)"
    json.loads(to_json([c]))  # numpy values in the table still give plain JSON
    # 3 right of 12: p = 2 (1 + 12 + 66 + 220) / 4096 = 0.146, on the wrong side of one half
    assert K.di_claim(di_rows("lab", "rrr" + "w" * 9), "lab", table1).status == NOT_REPRODUCED
    # 3 decided, below the minimum of 10; s2 is a non-member called a member (the wrong call)
    few = K.di_claim(di_rows("real", "rrw-"), "real", table1)
    assert few.status == INCONCLUSIVE and few.n == 3
    # even 3 of 3 right: p = 2 / 8
    assert few.reason.startswith("n = 3 is below the minimum of 10: even 3 of 3 right would give a "
                                 "sign-test p of 0.25; it calls 2 of 3 decided sets members, 1 of the 2 "
                                 "decided non-member sets")
    assert few.extra["nonmembers_called"] == ["m: s2"]
    assert K.di_claim(di_rows("lab", "---"), "lab", table1).status == NOT_TESTABLE
    assert K.di_claim(di_rows("lab", "rr"), "real", table1).status == NOT_TESTABLE  # no real model ran


def test_intercept_and_slope_move_against_each_other_by_design():
    slopes = np.linspace(0, 1, 21)
    opposed = [fake_set(str(k), intercept=1.0, boot={"slope": slopes, "intercept": 5 - 4 * slopes,
                                                      "r": [0.9] * 21}) for k in range(6)]
    c = K.intercept_slope_claim(opposed)
    # six sets with r = −1 each: sign test p = 2 / 64
    assert (c.status, c.value, c.n, c.by_design) == (REPRODUCED, pytest.approx(-1.0), 6, True)
    assert c.p == pytest.approx(2 / 64) and c.extra == {"how": "opposite"}
    assert K.intercept_slope_claim(opposed[:5]).status == INCONCLUSIVE  # p = 2 / 32 and n = 5
    together = [fake_set(str(k), intercept=1.0, boot={"slope": slopes, "intercept": slopes, "r": [0.9] * 21})
                for k in range(6)]
    assert K.intercept_slope_claim(together).status == NOT_REPRODUCED
    assert K.intercept_slope_claim([fake_set()]).status == NOT_TESTABLE


def test_di_claims_name_the_real_models_sets_and_serialise():
    good = boot_r(np.linspace(0.92, 0.98, 101))
    real = [Inference("smol", {"A": fake_set("A", intercept=1.0, r=0.95, es=ES, boot=good),
                               "B": fake_set("B", intercept=1.0, r=0.97, es=ES, boot=good)}, pd.DataFrame())]
    di = pd.concat([di_rows("lab", "r" * 10), di_rows("real", "r")], ignore_index=True)
    c = K.di_claims(di, [Inference("lab", {"a": fake_set("a")}, pd.DataFrame())], real)
    assert list(c) == ["di_lab", "di_real", "r_real_models", "intercept_slope_opposed"]
    assert list(c["r_real_models"].extra["statuses"]) == ["smol: A", "smol: B"]
    assert c["r_real_models"].status == REPRODUCED and c["r_real_models"].section == "entropy-real"
    assert c["intercept_slope_opposed"].status == NOT_TESTABLE
    data = json.loads(to_json(c.values()))
    assert [d["chapter"] for d in data] == ["entropy"] * 4


def test_fishers_z_compares_two_correlations():
    est = compare_correlations(0.9, 10, 0.2, 10)
    assert est.value == pytest.approx(0.7) and est.n == 10
    assert est.p == pytest.approx(fisher_p(0.9, 10, 0.2, 10))
    assert compare_correlations(0.5, 30, 0.5, 50).p == pytest.approx(1.0)
    with pytest.raises(ValueError, match="at least 4 points"):
        compare_correlations(0.5, 3, 0.2, 10)
    with pytest.raises(ValueError, match=r"r must be a number in \[-1, 1\]"):
        compare_correlations(1.5, 10, 0.2, 10)


# -- against a baseline, and membership inference (beyond the source) -----------------------------


def test_the_intercept_rule_against_the_mean_loss_baseline():
    from analysis.entropy import claims_mia as M

    # 12 candidate sets, the intercept rule right on all of them, mean loss wrong on 6: McNemar's exact
    # test is the sign test of 6 of 6, p = 2 / 64
    di = di_rows("lab", "r" * 12)
    di["correct"] = (di["prediction"] == di["truth"]).astype(float)
    losses = di[["model", "kind", "set", "role"]].assign(correct=[1] + [1] * 6 + [0] * 6)
    c = M.baseline_claim(di, losses)
    assert (c.status, c.value, c.n) == (REPRODUCED, 0.5, 12) and c.p == pytest.approx(2 / 64)
    assert c.source_value == "intercept rule: 5 of 6; Maini et al. (2024): 3 of 6 (Table 7)"
    # both right everywhere: no difference, which is not the source's finding
    tied = M.baseline_claim(di, losses.assign(correct=1))
    assert tied.status == NOT_REPRODUCED and tied.value == 0.0 and tied.p is None
    # the other way round: mean loss right where the rule is wrong
    worse = di.assign(correct=[1.0] + [0.0] * 6 + [1.0] * 6)
    c = M.baseline_claim(worse, losses.assign(correct=1))
    assert c.status == NOT_REPRODUCED and c.value == -0.5
    assert M.baseline_claim(di, losses, "real").status == NOT_TESTABLE


def test_membership_inference_claims_from_the_panels():
    from analysis.entropy import claims_mia as M

    def row(attack, auc, p, members=300, non=18, scope="all", model=None):
        return {"scope": scope, "attack": attack, "members": members, "non-members": non, "auc": auc,
                "auc lo": auc - 0.1, "auc hi": auc + 0.05, "p": p, "tpr": 0.1, "tpr lo": 0.0, "tpr hi": 0.2,
                "model": model}

    panel = pd.DataFrame([row("loss", 0.8, 0.001), row("zlib", 0.55, 0.4), row("mink", 0.3, 0.01),
                          row("minkpp", 0.7, 0.02, members=10, non=5), row("loss", 0.9, 0.001, scope="16")])
    sets = pd.DataFrame([{"attack": "intercept", "sets": 18, "pairs": 40, "auc": 0.6, "auc lo": 0.4,
                          "auc hi": 0.8, "p": 0.3}])
    real = pd.DataFrame([row("text_zlib", 0.2, 0.001, members=200, non=100, model="a"),
                         row("text_zlib", 0.9, 1e-6, members=200, non=100, model="b")])
    c = M.mia_claims(panel, sets, real)
    assert [c[k].status for k in ("mia_loss", "mia_zlib", "mia_mink", "mia_minkpp")] == [
        REPRODUCED, INCONCLUSIVE, NOT_REPRODUCED, INCONCLUSIVE]  # Min-K%++: 15 candidates, below 30
    assert c["mia_loss"].n == 318 and c["mia_loss"].interval == (pytest.approx(0.7), pytest.approx(0.85))
    assert c["mia_intercept"].status == INCONCLUSIVE and c["mia_intercept"].n == 40
    # the weaker separation of the two models: |0.2 - 0.5| = 0.3 against 0.4: 0.8 on model a
    s = c["mia_real_shift"]
    assert (s.status, s.value, s.extra["model"]) == (REPRODUCED, pytest.approx(0.8), "a")
    assert {x.section for x in c.values()} == {"entropy-mia"}
    json.loads(to_json(c.values()))
    none = M.mia_claims(panel.assign(auc=np.nan), sets.assign(pairs=0), real.iloc[:0])
    assert {x.status for x in none.values()} == {NOT_TESTABLE}

"""The distributional chapter's decisions (analysis.distributional.claims) and its
inference over whole units (analysis.distributional.inference), by value on
hand-computed fixtures: status, value, unit, n_units, null, control and Holm family."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, spearmanr

from analysis.core.claims import (
    DOES_NOT_HOLD,
    EXTENSION,
    HOLDS,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    SOURCE,
    UNITS,
    from_json,
    to_json,
)
from analysis.distributional import claims as C
from analysis.distributional import claims_performance as CP
from analysis.distributional import inference as I
from analysis.distributional.claims import (
    kendall_rises,
    mem_claims,
    mem_none,
    mem_rises,
    mem_rises_claims,
    mem_significant,
)
from analysis.distributional.claims_filter import filter_claims, sensitivity_claim
from analysis.distributional.claims_performance import copies_rise, copies_size
from analysis.distributional.claims_tasks import untestable_claims
from analysis.distributional.method_tables import kendall_table, mem_table, sensitivity_table
from analysis.distributional.params import SOURCE_NOVELTY, load_paper_claims
from analysis.stats.result import StatsError
from distributional_toys import ladder3, ladder_mem, toy_mem_inputs

SIX = [10, 20, 30, 40, 50, 60]


def _exact_trend_p(values) -> float:
    """The exact two-sided permutation p of Spearman's ρ over every ordering of the models."""
    x = np.arange(len(values))
    rho = spearmanr(x, values).statistic
    null = [spearmanr(x, p).statistic for p in itertools.permutations(values)]
    return float(np.mean(np.abs(null) >= abs(rho) - 1e-12))


# ---------------------------------------------------------------------------
# The inference over units
# ---------------------------------------------------------------------------


def test_unit_maps_move_whole_units_and_the_control_is_a_derangement():
    units = np.array(["a", "a", "b", "b", "b", "c"])
    maps = I.unit_maps(units, n_perm=200, seed=3)
    assert maps.shape == (201, 6)
    for row in maps:
        for u in "abc":  # every pair of a unit takes its value from one unit, in order, cyclically
            src = units[row[units == u]]
            assert len(set(src)) == 1
    control = maps[0]
    assert all(units[control[units == u]][0] != u for u in "abc")  # no unit keeps its own answers
    # unit b (3 pairs) mapped to a (2 pairs) reads a's pairs 0, 1, 0
    pi = {u: units[control[units == u]][0] for u in "abc"}
    if pi["b"] == "a":
        assert control[units == "b"].tolist() == [0, 1, 0]
    with pytest.raises(StatsError):
        I.unit_maps(units, n_perm=10)


def test_a_feature_constant_within_three_units_does_not_beat_the_cluster_null():
    # three facts, three pairs each; both sides constant within a fact, so 9 "pairs" are 3 values
    units = np.repeat(["f1", "f2", "f3"], 3)
    y = np.repeat([1.0, 2.0, 3.0], 3)
    x = y + np.tile([0.0, 0.01, 0.02], 3)
    assert spearmanr(x, y).pvalue < 1e-3  # the pairs counted as independent: "significant"
    r = I.cluster_spearman(x, y, units, n_perm=200)
    assert r["rho"] == pytest.approx(spearmanr(x, y).statistic) and r["units"] == 3
    # only 3! orderings of the facts exist: the identity and its reverse are as extreme, p ≥ 2/6
    assert r["pvalue"] > 0.25 and np.isfinite(r["control_rho"])


def test_cluster_spearman_finds_a_real_association_over_many_units():
    rng = np.random.default_rng(0)
    units = np.repeat(np.arange(60), 4)
    fact = rng.normal(size=60)
    y = fact[units]
    x = fact[units] + rng.normal(scale=0.5, size=len(units))
    r = I.cluster_spearman(x, y, units, n_perm=500)
    assert r["rho"] > 0.5 and r["pvalue"] == pytest.approx(2 / 501)
    assert abs(r["null_rho"]) < 0.05 and abs(r["control_rho"]) < 0.3 and r["control_pvalue"] > 0.05


def test_model_trend_matches_the_exact_permutation_p():
    values = [0.1, 0.3, 0.2, 0.4, 0.6, 0.5]
    est = I.model_trend(SIX, values)
    assert est["rho"] == pytest.approx(1 - 24 / 210) and est["models"] == 6
    assert est["pvalue"] == pytest.approx(_exact_trend_p(values), abs=0.01)
    assert np.isnan(I.model_trend(SIX, [0.2] * 6)["rho"])


def test_share_bootstrap_over_identical_units_has_no_spread():
    # every fact holds one tied pair of two: every resample has share one half
    b = I.share_bootstrap([1, 0] * 5, np.repeat(np.arange(5), 2), bound=0.7, n_boot=200)
    assert b["value"] == 0.5 and b["interval"] == (0.5, 0.5) and b["units"] == 5
    assert b["pvalue"] == pytest.approx(2 / 201)


def test_cluster_mem_table_keeps_the_pairs_p_and_adds_the_units():
    tables, log_llm, log_inf = toy_mem_inputs()
    mem = mem_table(tables, log_llm, log_inf, ladder3())
    out = I._cluster_mem_table(mem, tables, log_llm, log_inf, n_perm=200)
    assert out["pvalue_pairs"].equals(mem["pvalue"])
    row = out[(out["model"] == "a") & (out["lm"] == "task-gram") & (out["filter"] == "no filter")].iloc[0]
    assert row["units"] == 2 and row["rho"] == pytest.approx(1.0)
    assert row["pvalue"] == 1.0  # two facts: swapping them is the only other arrangement


# ---------------------------------------------------------------------------
# The filter and performance
# ---------------------------------------------------------------------------


def test_the_filter_claims_are_counts_over_every_candidate():
    authors, paper = filter_claims({"total": 2161, "authors": 2145, "paper": 17, "paper_co": 17,
                                      "none_co": 2158}, n_facts=400)
    assert (authors.id, authors.kind, authors.status, authors.n) == ("authors_filter", EXTENSION, HOLDS, 2161)
    assert authors.value == pytest.approx(2145 / 2161) and authors.n_units == 400 and authors.unit == "facts"
    assert (paper.id, paper.status, paper.source_value) == ("paper_filter", HOLDS, None)
    assert authors.control_reason and authors.null_kind == "target"
    some = {"total": 200, "authors": 120, "paper": 150, "paper_co": 1, "none_co": 1}
    assert [c.status for c in filter_claims(some)] == [DOES_NOT_HOLD, DOES_NOT_HOLD]
    small = filter_claims({"total": 20, "authors": 20, "paper": 0, "paper_co": 0, "none_co": 20})
    assert [c.status for c in small] == [INCONCLUSIVE, INCONCLUSIVE]


def _acc(knowledge, params=SIX):
    return pd.DataFrame({"model": [f"m{i}" for i in range(len(params))], "params": params,
                         "knowledge accuracy": knowledge, "reasoning accuracy": 0.0})


def _copies_inputs(top=(5, 5), low=(0, 20)):
    """One model a: ``top`` = (hits, answered) among the most-copied facts, ``low`` among the least."""
    by_copies = pd.DataFrame({"params": [10], "1": [low[0] / low[1]], "65–256": [top[0] / top[1]]},
                             index=["a"])
    answered = pd.DataFrame({"model": ["a", "a"], "bin": ["1", "65–256"], "n": [low[1], top[1]],
                             "hits": [low[0], top[0]]})
    return by_copies, answered


def test_accuracy_size_is_a_permutation_trend_over_the_models():
    intervals = {"accuracy_size": (0.2, 0.9), "copies_size": (np.nan, 0.5)}
    rising, _, top = CP.performance_claims(_acc([0.1, 0.2, 0.25, 0.3, 0.35, 0.5]), *_copies_inputs(),
                                           intervals=intervals)
    # the interval over facts rides on the claim; a half-missing one is left off
    assert rising.interval == (0.2, 0.9) and top.id == "copies_size" and top.interval is None
    assert (rising.id, rising.status, rising.value, rising.n_units) == ("accuracy_size", REPRODUCED, 1.0, 6)
    assert rising.unit == "models" and rising.null_kind == "permutation" and rising.kind == SOURCE
    assert rising.p == pytest.approx(2 / 720, abs=0.008)  # exactly 2 of the 720 orderings reach |ρ| = 1
    falling = CP.performance_claims(_acc([0.6, 0.5, 0.4, 0.3, 0.2, 0.1]), *_copies_inputs())[0]
    assert falling.status == NOT_REPRODUCED
    few = CP.performance_claims(_acc([0.1, 0.2, 0.3, 0.4], SIX[:4]), *_copies_inputs())[0]
    assert few.status == INCONCLUSIVE and few.reason == "4 models, below the minimum of 6"


def test_zero_accuracy_everywhere_is_the_floor_not_a_result():
    floor = CP.performance_claims(_acc([0.0] * 6), *_copies_inputs(top=(0, 5), low=(0, 20)))
    acc, rise, size = floor
    assert acc.status == NOT_TESTABLE and "floor" in acc.reason
    # the committed run's copies_rise was "not reproduced: the value equals the null 0"; now the floor
    assert rise.status == NOT_TESTABLE and "floor" in rise.reason and rise.extra["none_recalled"]
    by_copies = pd.DataFrame({"params": SIX, "1": 0.0, "65–256": 0.0})
    assert copies_size(by_copies).status == NOT_TESTABLE and "floor" in copies_size(by_copies).reason


def test_copies_rise_is_fishers_exact_test_on_the_best_model():
    rise = copies_rise(*_copies_inputs())
    # 5 of 5 against 0 of 20: p = 1 / C(25, 5)
    assert (rise.status, rise.value, rise.n_units, rise.unit) == (REPRODUCED, 1.0, 25, "facts")
    assert rise.p == pytest.approx(1 / 53130)
    assert copies_rise(*_copies_inputs(top=(1, 1), low=(0, 3))).status == INCONCLUSIVE  # 4 facts < 10
    # 0 of 5 against 2 of 20: the other side, not significant (Fisher p = 1): inconclusive, not
    # "not reproduced"
    assert copies_rise(*_copies_inputs(top=(0, 5), low=(2, 20))).status == INCONCLUSIVE
    one_bin = _copies_inputs()[0].drop(columns="1")
    assert copies_rise(one_bin, _copies_inputs()[1]).status == NOT_TESTABLE


def test_copies_size_is_the_books_own_trend():
    by_copies = pd.DataFrame({"params": SIX, "1": 0.0, "65–256": [0.2, 0.1, 0.4, 0.3, 0.6, 0.5]})
    claim = copies_size(by_copies)
    assert claim.kind == EXTENSION and claim.value == pytest.approx(1 - 6 * 6 / 210)
    # ρ = 0.83 over six models: the exact permutation p is 0.058, so not significant (the analytic
    # t-approximation gave 0.04 and "reproduced")
    assert claim.p == pytest.approx(_exact_trend_p([0.2, 0.1, 0.4, 0.3, 0.6, 0.5]), abs=0.025)
    assert claim.status == INCONCLUSIVE
    steep = copies_size(by_copies.assign(**{"65–256": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]}))
    assert steep.status == HOLDS


# ---------------------------------------------------------------------------
# Mem across the ladder
# ---------------------------------------------------------------------------


def test_mem_significant_is_an_intersection_union_test_over_the_models():
    ok = mem_significant(ladder_mem("knowledge", [0.4] * 6, [0.001] * 6))
    assert (ok.id, ok.status, ok.value, ok.p) == ("mem3_significant", REPRODUCED, 0.4, 0.001)
    assert (ok.unit, ok.n_units, ok.null_kind, ok.control_value) == ("facts", 40, "permutation", 0.0)
    one_off = mem_significant(ladder_mem("knowledge", [0.4] * 6, [0.001] * 5 + [0.2]))
    assert one_off.status == INCONCLUSIVE and one_off.p == 0.2  # not significant for one model
    negative = mem_significant(ladder_mem("knowledge", [-0.4] * 6, [0.001] * 6))
    assert negative.status == NOT_REPRODUCED and negative.value == -0.4
    thin = mem_significant(ladder_mem("knowledge", [0.4] * 6, [0.001] * 6, units=5))
    assert thin.status == INCONCLUSIVE
    assert thin.reason == "the thinnest Mem rests on 5 facts, below the minimum of 10"
    assert mem_significant(ladder_mem("knowledge", [0.4] * 4, [0.001] * 4)).status == INCONCLUSIVE
    assert mem_significant(ladder_mem("reasoning", [0.4] * 6, [0.001] * 6)).status == NOT_TESTABLE


def test_a_control_that_shows_the_effect_makes_mem_significant_mechanical():
    shown = mem_significant(ladder_mem("knowledge", [0.4] * 6, [0.001] * 6, control_rho=0.3,
                                         control_p=0.001))
    assert shown.status == INCONCLUSIVE and shown.mechanical and shown.control_value == 0.3
    assert "negative control shows the same effect" in shown.reason


def test_mem_rises_is_a_holm_family_over_n():
    rising = [0.41, 0.43, 0.42, 0.47, 0.5, 0.54]
    mem = pd.concat([ladder_mem("knowledge", rising, [0.001] * 6),
                     ladder_mem("knowledge", rising, [0.001] * 6, n=5)])
    m3, m5 = mem_rises_claims(mem, "knowledge", (3, 5))
    assert m3.value == pytest.approx(1 - 6 * 2 / 210) and m3.family == m5.family == "mem_rises (knowledge)"
    lo, hi = sorted([m3.p, m5.p])
    assert sorted([m3.p_adjusted, m5.p_adjusted]) == pytest.approx([max(2 * lo, hi)] * 2 if 2 * lo >= hi
                                                                    else [2 * lo, hi])
    assert m3.unit == "models" and m3.null_kind == "permutation"
    assert m3.control_reason == "the answers-swapped control has no defined trend"  # every control ρ is 0
    falling = mem_rises(ladder_mem("knowledge", [0.5, 0.4, 0.3, 0.2, 0.1, 0.05], [0.001] * 6))
    assert falling.status == NOT_REPRODUCED
    unread = mem_rises(ladder_mem("knowledge", [0.01, 0.02, 0.03, 0.04, 0.05, 0.06], [0.5] * 6))
    assert unread.status == INCONCLUSIVE and "no memorization trend to read" in unread.reason


def test_mem_none_reads_holm_adjusted_cluster_p_values():
    none = mem_none(ladder_mem("reasoning", [0.02, -0.01, 0.0, 0.03, 0.01, 0.02], [0.5] * 6))
    assert (none.id, none.status, none.value, none.unit) == ("mem3_reasoning_none", REPRODUCED, 0.0,
                                                             "problems")
    neg = mem_none(ladder_mem("reasoning", [-0.26, -0.2, -0.18, -0.17, -0.16, -0.15], [0.002] * 6))
    assert neg.status == NOT_REPRODUCED and neg.value == 1.0 and neg.extra["sign"] == -1
    assert neg.p_adjusted == pytest.approx(6 * 0.002)
    # 0.01 each: Holm over six models makes every one 0.06, so none is significant
    holm = mem_none(ladder_mem("reasoning", [-0.2] * 6, [0.01] * 6))
    assert holm.status == REPRODUCED and holm.extra["k"] == 0
    mech = mem_none(ladder_mem("reasoning", [-0.2] * 6, [0.002] * 6, control_rho=-0.2, control_p=0.002))
    assert mech.status == INCONCLUSIVE and mech.mechanical and mech.control_value == 1.0
    thin = mem_none(ladder_mem("reasoning", [0.0] * 6, [0.9] * 6, units=4))
    assert thin.status == INCONCLUSIVE  # absence of significance over 4 problems says nothing


def _lm(task, tg, inf, control=(0.0, 0.05)):
    return pd.concat([ladder_mem(task, tg, [0.01] * len(tg), control_rho=control[0]),
                      ladder_mem(task, inf, [0.01] * len(inf), lm="∞-gram", control_rho=control[1])])


def test_above_infgram_is_a_sign_test_with_holm_over_the_tasks():
    one = C.above_infgram_claim(_lm("knowledge", [0.4] * 6, [0.2] * 6), "knowledge", source_value="src")
    assert (one.status, one.value, one.n_units, one.extra["k"]) == (REPRODUCED, 1.0, 6, 6)
    assert one.p == pytest.approx(2 / 64) == pytest.approx(binomtest(6, 6).pvalue)
    assert one.null_kind == "analytic" and one.null_value == 0.5
    mem = pd.concat([_lm("knowledge", [0.4] * 6, [0.2] * 6), _lm("reasoning", [0.4] * 6, [0.2] * 6)])
    k, r = C.above_infgram_claims(mem, sources={"knowledge": "src"})
    # two p = 1/32 in one family: Holm makes both 1/16, no longer below 0.05
    assert k.p_adjusted == r.p_adjusted == pytest.approx(1 / 16) and k.family == "mem3_above_infgram"
    assert k.status == INCONCLUSIVE and r.status == INCONCLUSIVE
    assert (k.kind, r.kind) == (SOURCE, EXTENSION)
    below = C.above_infgram_claim(_lm("reasoning", [-0.2] * 6, [0.1] * 6), "reasoning")
    assert below.status == DOES_NOT_HOLD and below.value == 0.0
    # 3 of 6 is the null: no evidence either way (it was "not reproduced")
    half = C.above_infgram_claim(_lm("knowledge", [0.4] * 3 + [0.1] * 3, [0.2] * 6), "knowledge",
                                 source_value="s")
    assert half.status == INCONCLUSIVE
    # the answers-swapped control ranks the task-gram LM first for every model too: mechanical
    mech = C.above_infgram_claim(_lm("knowledge", [0.4] * 6, [0.2] * 6, control=(0.05, 0.0)), "knowledge",
                                 source_value="s")
    assert mech.status == INCONCLUSIVE and mech.mechanical and mech.control_value == 1.0


def test_tied_claims_bootstrap_over_facts_with_holm():
    t = ladder_mem("knowledge", [0.02, -0.05, 0.01, 0.0, 0.0, 0.0], [0.5] * 6)
    table = pd.DataFrame({"p_taskgram": [1.0] * 15 + [0.5] * 85, "instance": np.arange(100) // 2})
    (few,) = C.tied_claims({("knowledge", 3): table}, t, ("knowledge",))
    assert (few.id, few.kind, few.status, few.value, few.n, few.n_units) == (
        "tied3_knowledge", EXTENSION, HOLDS, 0.15, 100, 50)
    assert not few.by_design and few.unit == "facts" and few.family == "tied3"
    most = pd.DataFrame({"p_taskgram": [1.0] * 90 + [0.5] * 10, "instance": np.arange(100) // 2})
    (m,) = C.tied_claims({("knowledge", 3): most}, t, ("knowledge",))
    assert m.status == DOES_NOT_HOLD and m.extra["near_zero"]
    both = C.tied_claims({("knowledge", 3): table, ("reasoning", 3): table}, t)
    assert [c.p_adjusted for c in both] == pytest.approx([2 * both[0].p] * 2)
    assert C.tied_claims({}, t, ("knowledge",))[0].status == NOT_TESTABLE


def test_count_claims_read_the_median_over_models_against_its_cluster_null():
    follows = C.count_claim(ladder_mem("knowledge", [0.6, 0.7, 0.8, 0.6, 0.7, 0.8], [0.001] * 6,
                                       lm="pair count"), "knowledge")
    assert (follows.id, follows.kind, follows.status, follows.value) == ("count3_knowledge", EXTENSION,
                                                                         HOLDS, 0.7)
    assert follows.p == pytest.approx(2 / 201) and follows.null_kind == "permutation"
    against = C.count_claim(ladder_mem("reasoning", [-0.3] * 6, [0.01] * 6, lm="pair count"), "reasoning")
    assert against.status == DOES_NOT_HOLD and against.extra["neg"] == 6
    split = C.count_claim(ladder_mem("reasoning", [0.3] * 3 + [-0.3] * 3, [0.01] * 6, lm="pair count"),
                          "reasoning")
    assert split.status == INCONCLUSIVE  # the median is 0


def test_kendall_rises_is_a_trend_over_the_models():
    kd = pd.DataFrame({"task": "reasoning", "n": 3, "model": [f"m{i}" for i in range(6)], "params": SIX,
                       "lm": "task-gram", "kendall": [0.55, 0.54, 0.53, 0.52, 0.51, 0.5], "pvalue": 0.1})
    assert kendall_rises(kd).status == NOT_REPRODUCED  # significantly falling
    assert kendall_rises(kd.assign(kendall=kd["kendall"][::-1].to_numpy())).status == REPRODUCED
    mixed = kendall_rises(kd.assign(kendall=[0.59, 0.56, 0.58, 0.57, 0.56, 0.565]))
    assert mixed.value < 0 and mixed.status == INCONCLUSIVE  # the other side, not significant


def _sens(pairs_by_gamma, rhos_by_gamma):
    rows = [{"gamma": g, "model": f"m{i}", "params": SIX[i], "rho": r, "pvalue": 0.01,
             "pairs": pairs_by_gamma[g]} for g, rhos in rhos_by_gamma.items() for i, r in enumerate(rhos)]
    return pd.DataFrame(rows)


def test_sensitivity_is_inconclusive_below_the_minimum_of_pairs():
    rising = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    sens = _sens({"γ = 0.7": 40, "γ = 0.75": 17, "no filter": 2000},
                 {"γ = 0.7": rising, "γ = 0.75": rising, "no filter": rising})
    claim = sensitivity_claim(sens, 3)
    assert (claim.id, claim.status, claim.n, claim.n_units, claim.unit) == (
        "sensitivity3", INCONCLUSIVE, 17, 6, "models")
    assert claim.reason == "γ = 0.75: 17 pairs, below the minimum of 30"
    enough = _sens({"γ = 0.7": 40, "γ = 0.75": 35}, {"γ = 0.7": rising, "γ = 0.75": rising})
    assert sensitivity_claim(enough, 3).status == REPRODUCED
    against = _sens({"γ = 0.7": 40, "γ = 0.75": 17}, {"γ = 0.7": rising[::-1], "γ = 0.75": rising})
    assert sensitivity_claim(against, 3).status == NOT_REPRODUCED
    assert sensitivity_claim(sens[sens["gamma"] == "no filter"], 3).status == NOT_TESTABLE


def test_untestable_claims_carry_the_sources_values():
    paper = load_paper_claims()
    wmt, novelty, olmo, europarl = untestable_claims(paper)
    assert {olmo.id, europarl.id} == {"olmo_gsm8k_none", "wmt_europarl"}
    assert wmt.status == novelty.status == NOT_TESTABLE and wmt.kind == SOURCE
    assert wmt.source_value == "none shown (none significant)" and novelty.source_value == SOURCE_NOVELTY


def test_every_claim_of_a_toy_run_names_its_unit_null_and_control():
    tables, log_llm, log_inf = toy_mem_inputs()
    mem = I._cluster_mem_table(mem_table(tables, log_llm, log_inf, ladder3()), tables, log_llm, log_inf,
                               n_perm=200)
    kendall = kendall_table(tables, log_llm, ladder3())
    paper = load_paper_claims()
    sens = sensitivity_table(tables[("knowledge", 3)], log_llm, ladder3(), "knowledge", 3, (0.7,))
    claims = [*mem_claims(mem, kendall, tables, paper), sensitivity_claim(sens, 3, paper),
              *untestable_claims(paper)]
    back = from_json(to_json(claims))
    assert [c.id for c in back] == [c.id for c in claims] and len({c.id for c in claims}) == len(claims)
    for c in back:
        assert c.unit in UNITS and c.null_kind and (c.control_value is not None or c.control_reason), c.id
        assert c.kind == EXTENSION or c.source_value, c.id
    byid = {c.id: c for c in back}
    # three models and two facts: too few for any claim across the ladder
    assert byid["mem3_rises"].status == INCONCLUSIVE and byid["mem5_rises"].status == NOT_TESTABLE
    assert byid["mem3_rises"].source_value == "rho about 0.37 at 70M to 0.42 at 12B"
    assert byid["mem3_reasoning_none"].status == NOT_TESTABLE  # no reasoning table
    assert all(c.section and c.section.startswith("distributional-") for c in back)
    assert {c.kind for c in back if c.id.startswith(("tied3", "count3"))} == {EXTENSION}

"""The distributional chapter's decisions (analysis.distributional.claims), by value on
hand-computed fixtures: status, value, n and p of each claim."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, spearmanr

from analysis import distributional as D
from analysis.core.claims import INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTABLE, REPRODUCED, from_json, to_json
from analysis.distributional import claims as C
from distributional_toys import ladder3, ladder_mem, toy_mem_inputs, trend_of

SIX = [10, 20, 30, 40, 50, 60]


def test_the_filter_claims_read_the_wilson_interval_against_their_bound():
    # the committed run: the authors' γ keeps 2,145 of 2,161 candidates, the paper's 17
    authors, paper = D.filter_claims({"total": 2161, "authors": 2145, "paper": 17, "paper_co": 17,
                                      "none_co": 2158})
    assert (authors.id, authors.status, authors.n) == ("authors_filter", REPRODUCED, 2161)
    assert authors.value == pytest.approx(2145 / 2161) and authors.interval[0] > D.params.NEARLY_ALL
    assert (paper.id, paper.status) == ("paper_filter", REPRODUCED) and paper.interval[1] < 0.5
    assert paper.source_value == "γ = 0.75 for TriviaQA 3-grams (E5)"
    # 120 of 200: the interval lies wholly below 95%; 150 of 200 lies wholly above one half
    some = {"total": 200, "authors": 120, "paper": 150, "paper_co": 1, "none_co": 1}
    authors, paper = D.filter_claims(some)
    assert authors.status == NOT_REPRODUCED and paper.status == NOT_REPRODUCED
    # 100 of 200 straddles one half; 20 candidates are below the minimum of 30
    assert D.filter_claims({"total": 200, "authors": 200, "paper": 100, "paper_co": 1, "none_co": 1}
                           )[1].status == INCONCLUSIVE
    small = D.filter_claims({"total": 20, "authors": 20, "paper": 0, "paper_co": 0, "none_co": 20})
    assert [c.status for c in small] == [INCONCLUSIVE, INCONCLUSIVE]
    assert small[0].reason == "n = 20 is below the minimum of 30"


def _acc(knowledge, params=SIX):
    return pd.DataFrame({"model": [f"m{i}" for i in range(len(params))], "params": params,
                         "knowledge accuracy": knowledge, "reasoning accuracy": 0.0})


def test_accuracy_size_is_spearman_with_size_over_enough_models():
    rising = C.performance_claims(_acc([0.1, 0.2, 0.25, 0.3, 0.35, 0.5]), *_copies_inputs())[0]
    assert (rising.id, rising.status, rising.value, rising.n) == ("accuracy_size", REPRODUCED, 1.0, 6)
    # ρ = 1 - 6·Σd² / (n(n²-1)): ranks (1,3,2,4,6,5) against size, Σd² = 4, ρ = 1 - 24/210
    mixed = C.performance_claims(_acc([0.1, 0.3, 0.2, 0.4, 0.6, 0.5]), *_copies_inputs())[0]
    assert mixed.value == pytest.approx(1 - 24 / 210)
    assert mixed.p == pytest.approx(spearmanr(SIX, [0.1, 0.3, 0.2, 0.4, 0.6, 0.5]).pvalue)
    assert mixed.status == REPRODUCED and mixed.p < 0.05
    falling = C.performance_claims(_acc([0.6, 0.5, 0.4, 0.3, 0.2, 0.1]), *_copies_inputs())[0]
    assert falling.status == NOT_REPRODUCED
    few = C.performance_claims(_acc([0.1, 0.2, 0.3, 0.4], SIX[:4]), *_copies_inputs())[0]
    assert few.status == INCONCLUSIVE and few.reason == "n = 4 is below the minimum of 6"
    flat = C.performance_claims(_acc([0.2] * 6), *_copies_inputs())[0]
    assert flat.status == NOT_TESTABLE and flat.extra["constant"] is True


def _copies_inputs(top=(5, 5), low=(0, 20)):
    """One model a: ``top`` = (hits, answered) among the most-copied facts, ``low`` among the least."""
    by_copies = pd.DataFrame({"params": [10], "1": [low[0] / low[1]], "65–256": [top[0] / top[1]]},
                             index=["a"])
    answered = pd.DataFrame({"model": ["a", "a"], "bin": ["1", "65–256"], "n": [low[1], top[1]],
                             "hits": [low[0], top[0]]})
    return by_copies, answered


def test_copies_rise_is_fishers_exact_test_on_the_best_model():
    rise = D.copies_rise(*_copies_inputs())
    # 5 of 5 against 0 of 20: p = 1 / C(25, 5)
    assert (rise.status, rise.value, rise.n) == (REPRODUCED, 1.0, 25)
    assert rise.p == pytest.approx(1 / 53130)
    assert rise.extra["model"] == "a" and rise.extra["top"] == "65–256" and not rise.extra["none_recalled"]
    assert D.copies_rise(*_copies_inputs(top=(1, 1), low=(0, 3))).status == INCONCLUSIVE  # 4 facts < 10
    nothing = D.copies_rise(*_copies_inputs(top=(0, 5), low=(2, 20)))
    assert nothing.status == NOT_REPRODUCED and nothing.extra["none_recalled"]
    one_bin = _copies_inputs()[0].drop(columns="1")
    assert D.copies_rise(one_bin, _copies_inputs()[1]).status == NOT_TESTABLE


def test_copies_size_reads_recall_on_the_most_copied_facts_against_size():
    by_copies = pd.DataFrame({"params": SIX, "1": 0.0, "65–256": [0.2, 0.1, 0.4, 0.3, 0.6, 0.5]})
    claim = D.copies_size(by_copies)
    assert claim.value == pytest.approx(1 - 6 * 6 / 210)  # ranks (2,1,4,3,6,5): Σd² = 6
    assert claim.p == pytest.approx(spearmanr(SIX, by_copies["65–256"]).pvalue) and claim.p < 0.05
    assert claim.status == REPRODUCED and claim.id == "copies_size"
    flat = D.copies_size(by_copies.assign(**{"65–256": [0.3, 0.1, 0.5, 0.2, 0.4, 0.3]}))
    assert flat.status == INCONCLUSIVE and flat.p > 0.05


def test_mem_significant_needs_every_model_and_enough_pairs():
    ok = D.mem_significant(ladder_mem("knowledge", [0.4] * 6, [0.001] * 6))
    assert (ok.id, ok.status, ok.value, ok.n, ok.p) == ("mem3_significant", REPRODUCED, 1.0, 6, 0.001)
    one_off = D.mem_significant(ladder_mem("knowledge", [0.4] * 6, [0.001] * 5 + [0.2]))
    assert one_off.status == NOT_REPRODUCED and one_off.extra["k"] == 5
    assert one_off.value == pytest.approx(5 / 6)
    negative = D.mem_significant(ladder_mem("knowledge", [-0.4] * 6, [0.001] * 6))
    assert negative.status == NOT_REPRODUCED and negative.value == 0
    thin = D.mem_significant(ladder_mem("knowledge", [0.4] * 6, [0.001] * 6, pairs=17))
    assert thin.status == INCONCLUSIVE
    assert thin.reason == "the thinnest Mem rests on 17 pairs, below the minimum of 30"
    few = D.mem_significant(ladder_mem("knowledge", [0.4] * 4, [0.001] * 4))
    assert few.status == INCONCLUSIVE
    assert D.mem_significant(ladder_mem("reasoning", [0.4] * 6, [0.001] * 6)).status == NOT_TESTABLE


def test_mem_rises_is_a_directional_trend_and_needs_a_significant_mem():
    rising = D.mem_rises(ladder_mem("knowledge", [0.41, 0.43, 0.42, 0.47, 0.5, 0.54], [0.001] * 6))
    assert rising.status == REPRODUCED and rising.value == pytest.approx(1 - 6 * 2 / 210)
    assert rising.p == pytest.approx(spearmanr(SIX, [0.41, 0.43, 0.42, 0.47, 0.5, 0.54]).pvalue)
    falling = D.mem_rises(ladder_mem("knowledge", [0.5, 0.4, 0.3, 0.2, 0.1, 0.05], [0.001] * 6))
    assert falling.status == NOT_REPRODUCED
    unread = D.mem_rises(ladder_mem("knowledge", [0.01, 0.02, 0.03, 0.04, 0.05, 0.06], [0.5] * 6))
    assert unread.status == INCONCLUSIVE and "no memorization trend to read" in unread.reason
    assert D.mem_rises(ladder_mem("knowledge", [0.1] * 6, [0.01] * 6, n=5), n=5).id == "mem5_rises"


def test_mem_none_holds_when_no_model_is_significant():
    none = D.mem_none(ladder_mem("reasoning", [0.02, -0.01, 0.0, 0.03, 0.01, 0.02], [0.5] * 6))
    assert (none.id, none.status, none.value) == ("mem3_reasoning_none", REPRODUCED, 0.0)
    # the committed run: every model significant and negative
    neg = D.mem_none(ladder_mem("reasoning", [-0.26, -0.2, -0.18, -0.17, -0.16, -0.15], [1e-10] * 6))
    assert neg.status == NOT_REPRODUCED and neg.value == 1.0 and neg.extra["sign"] == -1
    both = D.mem_none(ladder_mem("reasoning", [-0.3, 0.3, 0.0, 0.0, 0.0, 0.0], [0.01, 0.01] + [0.5] * 4))
    assert both.extra["sign"] == 0 and both.extra["k"] == 2
    thin = D.mem_none(ladder_mem("reasoning", [0.0] * 6, [0.9] * 6, pairs=12))
    assert thin.status == INCONCLUSIVE  # absence of significance on 12 pairs says nothing


def _lm(task, tg, inf):
    return pd.concat([ladder_mem(task, tg, [0.01] * len(tg)),
                      ladder_mem(task, inf, [0.01] * len(inf), lm="∞-gram")])


def test_above_infgram_is_the_sign_test_over_models():
    above = C.above_infgram_claim(_lm("knowledge", [0.4] * 6, [0.2] * 6), "knowledge")
    assert (above.status, above.value, above.n, above.extra["k"]) == (REPRODUCED, 1.0, 6, 6)
    assert above.p == pytest.approx(2 / 64) == pytest.approx(binomtest(6, 6).pvalue)
    below = C.above_infgram_claim(_lm("reasoning", [-0.2] * 6, [0.1] * 6), "reasoning")
    assert below.status == NOT_REPRODUCED and below.value == 0.0
    five = C.above_infgram_claim(_lm("knowledge", [0.4] * 5 + [0.1], [0.2] * 6), "knowledge")
    assert five.status == INCONCLUSIVE and five.p == pytest.approx(14 / 64)  # 5 of 6: 2·(6 + 1)/64
    half = C.above_infgram_claim(_lm("knowledge", [0.4] * 3 + [0.1] * 3, [0.2] * 6), "knowledge")
    assert half.status == NOT_REPRODUCED  # one half is the null: no evidence for the source


def test_tied_claim_reads_the_share_of_pairs_with_p_one():
    t = trend_of([0.02, -0.05, 0.01], [0.5, 0.3, 0.9])
    table = pd.DataFrame({"p_taskgram": [1.0] * 15 + [0.5] * 85})
    few = C.tied_claim(table, t, "knowledge")
    assert (few.id, few.status, few.value, few.n) == ("tied3_knowledge", REPRODUCED, 0.15, 100)
    assert few.by_design and few.value == D.tied_share(table)
    # the committed reasoning share, 49.2% of 2,000 pairs: the interval straddles one half
    half = C.tied_claim(pd.DataFrame({"p_taskgram": [1.0] * 984 + [0.5] * 1016}), t, "reasoning")
    assert half.status == INCONCLUSIVE and not half.by_design and half.interval[0] < 0.5 < half.interval[1]
    most = C.tied_claim(pd.DataFrame({"p_taskgram": [1.0] * 90 + [0.5] * 10}), t, "knowledge")
    assert most.status == NOT_REPRODUCED and most.extra["near_zero"] and most.extra["max_abs_mem"] == 0.05
    assert C.tied_claim(pd.DataFrame({"p_taskgram": [1.0] * 20}), t, "knowledge").status == INCONCLUSIVE
    assert C.tied_claim(None, t, "knowledge").status == NOT_TESTABLE


def test_count_claim_needs_most_models_significant_one_way():
    follows = C.count_claim(ladder_mem("knowledge", [0.6, 0.7, 0.8, 0.6, 0.7, 0.8], [0.001] * 6,
                                       lm="pair count"), "knowledge")
    assert (follows.id, follows.status, follows.value) == ("count3_knowledge", REPRODUCED, 0.7)
    against = C.count_claim(ladder_mem("reasoning", [-0.1] * 6, [0.01] * 6, lm="pair count"), "reasoning")
    assert against.status == NOT_REPRODUCED and against.extra["neg"] == 6
    split = C.count_claim(ladder_mem("reasoning", [0.3] * 3 + [-0.3] * 3, [0.01] * 6, lm="pair count"),
                          "reasoning")
    assert split.status == INCONCLUSIVE  # 3 of 6 either way: not more than half


def test_kendall_rises_is_directional():
    kd = pd.DataFrame({"task": "reasoning", "n": 3, "model": [f"m{i}" for i in range(6)], "params": SIX,
                       "lm": "task-gram", "kendall": [0.59, 0.56, 0.58, 0.57, 0.56, 0.565], "pvalue": 0.1})
    claim = D.kendall_rises(kd)
    assert claim.value < 0 and claim.status == NOT_REPRODUCED  # a falling distance is never evidence
    assert D.kendall_rises(kd.assign(kendall=[0.5, 0.51, 0.52, 0.53, 0.54, 0.55])).status == REPRODUCED


def _sens(pairs_by_gamma, rhos_by_gamma):
    rows = [{"gamma": g, "model": f"m{i}", "params": SIX[i], "rho": r, "pvalue": 0.01,
             "pairs": pairs_by_gamma[g]} for g, rhos in rhos_by_gamma.items() for i, r in enumerate(rhos)]
    return pd.DataFrame(rows)


def test_sensitivity_is_inconclusive_below_the_minimum_of_pairs():
    rising = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    # as committed: "rises at every threshold", but γ = 0.75 keeps only 17 pairs
    sens = _sens({"γ = 0.7": 40, "γ = 0.75": 17, "no filter": 2000},
                 {"γ = 0.7": rising, "γ = 0.75": rising, "no filter": rising})
    claim = D.sensitivity_claim(sens, 3)
    assert (claim.id, claim.status, claim.n, claim.min_n) == ("sensitivity3", INCONCLUSIVE, 17, 30)
    assert claim.reason == "γ = 0.75 keeps 17 pairs, below the minimum of 30 for a Mem_3"
    assert [r["gamma"] for r in claim.extra["thresholds"]] == ["γ = 0.7", "γ = 0.75"]
    enough = _sens({"γ = 0.7": 40, "γ = 0.75": 35}, {"γ = 0.7": rising, "γ = 0.75": rising})
    assert D.sensitivity_claim(enough, 3).status == REPRODUCED
    # a threshold with enough pairs where Mem₃ falls decides, however thin the others
    against = _sens({"γ = 0.7": 40, "γ = 0.75": 17}, {"γ = 0.7": rising[::-1], "γ = 0.75": rising})
    assert D.sensitivity_claim(against, 3).status == NOT_REPRODUCED
    assert D.sensitivity_claim(sens[sens["gamma"] == "no filter"], 3).status == NOT_TESTABLE


def test_untestable_claims_carry_the_sources_values():
    paper = D.load_paper_claims()
    (wmt,) = D.untestable_claims(paper)  # MMLU is decided from the lab's counts (mmlu_claims)
    assert wmt.status == NOT_TESTABLE
    assert wmt.source_value == "none shown (none significant)"


def test_every_claim_of_a_toy_run_is_unique_and_serializable():
    tables, log_llm, log_inf = toy_mem_inputs()
    mem = D.mem_table(tables, log_llm, log_inf, ladder3())
    kendall = D.kendall_table(tables, log_llm, ladder3())
    paper = D.load_paper_claims()
    sens = D.sensitivity_table(tables[("knowledge", 3)], log_llm, ladder3(), "knowledge", 3, (0.7,))
    claims = [*D.mem_claims(mem, kendall, tables, paper), D.sensitivity_claim(sens, 3, paper),
              *D.untestable_claims(paper)]
    back = from_json(to_json(claims))
    assert [c.id for c in back] == [c.id for c in claims] and len({c.id for c in claims}) == len(claims)
    byid = {c.id: c for c in back}
    # three models and four pairs: too few for any claim across the ladder
    assert byid["mem3_rises"].status == INCONCLUSIVE and byid["mem5_rises"].status == NOT_TESTABLE
    assert byid["mem3_rises"].source_value == "rho about 0.37 at 70M to 0.42 at 12B"
    assert byid["mem3_reasoning_none"].status == NOT_TESTABLE  # no reasoning table
    assert all(c.section and c.section.startswith("distributional-") for c in back)
    assert np.isnan(D.trend(mem, "reasoning", 3).size_rho)

"""The distributional chapter's English (analysis.distributional.text): the glued numbers
exactly, and a few renderings word for word; the rest follow the claims' statuses."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.core.claim_text import counts_sentence
from analysis.core.claims import NOT_REPRODUCED, REPRODUCED
from analysis.distributional.claims import above_infgram_claims, mem_none, mem_rises, mem_significant
from analysis.distributional.claims_filter import filter_claims, sensitivity_claim
from analysis.distributional.claims_performance import performance_claims
from analysis.distributional.claims_tasks import untestable_claims
from analysis.distributional.method_trends import trend
from analysis.distributional.params import CONSTANT_NOTE
from analysis.distributional.text import (
    accuracy_sentence,
    authors_sentence,
    copies_sentence,
    filter_sentence,
    fmt_params,
    knowledge_sentence,
    lm_sentence,
    mem_glue,
    mem_name,
    mem_sentence,
    reasoning_sentence,
    render,
    sensitivity_sentence,
    undefined_sentence,
    units_sentence,
)
from distributional_toys import ladder_mem, mem_rows


def test_mem_glue_numbers():
    mem = mem_rows([("knowledge", 3, m, p, lm, r, pv) for m, p, lm, r, pv in [
        ("c", 30, "task-gram", 0.30, 0.01), ("a", 10, "task-gram", 0.10, 0.20),
        ("b", 20, "task-gram", 0.20, 0.04), ("a", 10, "∞-gram", 0.05, 0.5), ("b", 20, "∞-gram", 0.25, 0.01),
        ("c", 30, "∞-gram", np.nan, np.nan), ("a", 10, "pair count", 0.5, 0.001),
        ("b", 20, "pair count", 0.4, 0.001), ("c", 30, "pair count", 0.3, 0.2)]])
    glue = mem_glue(mem, ["knowledge"], [3, 5])
    assert {k: glue[k] for k in glue if k.startswith("knowledge_3")} == {
        "knowledge_3_range": "0.10 to 0.30", "knowledge_3_sig": "2 of 3", "knowledge_3_trend": "+1.00",
        "knowledge_3_above_inf": "1 of 3", "knowledge_3_count_range": "0.30 to 0.50",
        "knowledge_3_count_trend": "-1.00"}
    assert glue["knowledge_5_range"] == "not computed (no co-occurring pair)"
    assert glue["knowledge_5_sig"] == "0 of 0" and glue["knowledge_5_trend"] == "undefined"


def test_names_and_parameter_counts():
    assert fmt_params(24_656) == "25K" and fmt_params(163_840) == "0.16M"
    assert fmt_params(4_070_000) == "4.1M"
    assert mem_name(3) == "Mem₃" and mem_name("∞") == "Mem∞"


def test_render_words_a_claim_in_the_books_one_voice():
    claim = filter_claims({"total": 2161, "authors": 2145, "paper": 17, "paper_co": 17, "none_co": 2158},
                            n_facts=400)[0]
    assert render(claim) == (
        "**Holds**: |0.993 − 1| = 0.0074 ≤ 0.05, 2,161 candidate pairs. The authors' code's effective "
        "threshold (γ = 0.002) keeps nearly every candidate 3-gram pair of the knowledge task (a filter in "
        "name only). This run: 99.3% of 2,161 (the book's own addition). Evidence: 400 facts (2,161 rows); "
        "a target (the source's value, or the book's bound) at 0.95; "
        "no negative control (a count of the embedding filter over every "
        "candidate; no signal to take away).")
    assert "(by design" not in render(claim)


def test_filter_sentence_sets_the_numbers_beside_the_verdicts():
    counts = {"total": 200, "paper": 10, "authors": 200, "paper_co": 4, "none_co": 150}
    claims = filter_claims(counts)
    assert filter_sentence(counts, claims, "the toy's 3-grams") == (
        "That threshold keeps 200 of the 200 candidates of the toy's 3-grams (100.0%), which the book reads "
        "as a filter in name only: **Holds**: |1 − 1| = 0 ≤ 0.05, 200 candidate pairs. The paper's stated "
        "threshold keeps 10 (5.0%): **Holds**: |0.05 − 0| = 0.05 ≤ 0.5, 200 candidate pairs. Of the pairs "
        "that co-occur in the corpus, 4 survive the paper's threshold and 150 are kept without a filter.")
    assert authors_sentence(counts, claims).startswith("The authors' effective threshold keeps 200 of 200")
    some = {"total": 200, "paper": 150, "authors": 120, "paper_co": 100, "none_co": 150}
    assert "**Does not hold**" in filter_sentence(some, filter_claims(some), "x")


def test_sensitivity_sentence_names_the_thin_threshold():
    rows = [{"gamma": g, "model": f"m{i}", "params": 10 * (i + 1), "rho": 0.1 * (i + 1), "pvalue": 0.01,
             "pairs": p} for g, p in (("γ = 0.7", 40), ("γ = 0.75", 17)) for i in range(6)]
    claim = sensitivity_claim(pd.DataFrame(rows), 3)
    assert sensitivity_sentence(claim) == (
        "The rank correlations of Mem₃ with size per threshold are γ = 0.7 (40 pairs): +1.00; γ = 0.75 "
        "(17 pairs): +1.00. **Inconclusive**: γ = 0.75: 17 pairs, below the minimum of 30.")


def test_the_paragraphs_read_the_verdicts():
    rising = ladder_mem("knowledge", [0.41, 0.43, 0.45, 0.47, 0.5, 0.54], [0.001] * 6)
    t = trend(rising, "knowledge", 3)
    claims = [mem_significant(rising), mem_rises(rising)]
    text = knowledge_sentence(t, claims)
    assert text.startswith("The lab's knowledge Mem₃ ranges from 0.41 to 0.54, significant (cluster "
                           "permutation over the facts) for 6 of 6 models. Significant for every model: "
                           "**Reproduced**: the source's direction, p = 0.001 < 0.05, 40 facts.")
    assert "Rising with size: **Reproduced**" in text
    assert mem_sentence(t, "knowledge", 3, claims).endswith("6 models.")
    neg = ladder_mem("reasoning", [-0.26, -0.2, -0.18, -0.17, -0.16, -0.15], [1e-3] * 6)
    none = mem_none(neg)
    assert none.status == NOT_REPRODUCED
    assert reasoning_sentence(trend(neg, "reasoning", 3), none) == (
        "The lab's reasoning Mem₃ ranges from -0.26 to -0.15; 6 of 6 models are significant after Holm's "
        "correction over the models (negative: the models' probabilities run against the co-occurrence "
        "conditional). **Not reproduced**: 6 of 6 models with Holm-adjusted p < 0.05; |1 − 0| = 1 > 0, 40 "
        "problems (an exact value, no sampling error).")
    assert claims[0].status == claims[1].status == REPRODUCED


def test_counts_sentence_counts_the_source_claims_per_status():
    rising = ladder_mem("knowledge", [0.41, 0.43, 0.45, 0.47, 0.5, 0.54], [0.001] * 6)
    filters = filter_claims({"total": 200, "paper": 10, "authors": 200, "paper_co": 4, "none_co": 150})
    shown = mem_significant(ladder_mem("knowledge", [0.4] * 6, [0.001] * 6, control_rho=0.3,
                                         control_p=0.001))
    claims = [mem_significant(rising), mem_rises(rising), shown, *untestable_claims(), *filters]
    assert counts_sentence(claims) == (
        "Of this chapter's 7 claims a source makes, 2 reproduced, 0 not reproduced, 1 inconclusive, "
        "4 not testable here (1 of the inconclusive ones mechanical: the negative control shows the same "
        "effect); besides, 2 claims of the book's own: 2 holds, 0 does not hold, 0 inconclusive, "
        "0 not testable here.")


def test_units_sentence_counts_facts_and_problems():
    tables = {("knowledge", 3): pd.DataFrame({"instance": [0, 0, 1, 2]}),
              ("reasoning", 3): pd.DataFrame({"instance": [0, 1, 1]})}
    assert units_sentence(tables, 3, 5, 2) == (
        "the knowledge task's 4 3-gram pairs come from 3 of the 5 facts; the reasoning task's 3 from 2 of "
        "the 2 problems.")


def test_undefined_correlations_are_named_with_their_reason():
    mem = mem_rows([("knowledge", 5, m, p, "∞-gram", np.nan, np.nan) for m, p in (("a", 1), ("b", 2))]
                   + [("knowledge", 5, m, p, "task-gram", 0.1, 0.5) for m, p in (("a", 1), ("b", 2))])
    mem["note"] = [CONSTANT_NOTE, CONSTANT_NOTE, "", ""]
    assert undefined_sentence(mem) == (
        "No model has a defined correlation for the ∞-gram LM on knowledge 5-grams (one side gives every "
        "pair the same value).")
    assert undefined_sentence(mem[mem["lm"] == "task-gram"]) == (
        "Every corpus LM gives a defined correlation for every model.")


def test_lm_accuracy_and_copies_sentences_follow_their_claims():
    tg = [0.4] * 6
    mem = pd.concat([ladder_mem(task, tg, [0.01] * 6) for task in ("knowledge", "reasoning")]
                    + [ladder_mem("knowledge", [0.2] * 6, [0.01] * 6, lm="∞-gram", control_rho=0.1),
                       ladder_mem("reasoning", [0.6] * 6, [0.01] * 6, lm="∞-gram", control_rho=0.1)])
    claims = above_infgram_claims(mem, sources={"knowledge": "src"})
    assert lm_sentence(claims, 3) == (
        "On knowledge 3-grams the task-gram LM correlates at least as strongly as the ∞-gram LM for 6 of 6 "
        "models, p = 0.0312: **Inconclusive**: the source's direction, not significant (Holm-adjusted "
        "p = 0.0625 ≥ 0.05), 6 models. On reasoning 3-grams the task-gram LM correlates at least as "
        "strongly as the ∞-gram LM for 0 of 6 models, p = 0.0312: **Inconclusive**: the opposite direction, "
        "not significant (Holm-adjusted p = 0.0625 ≥ 0.05), 6 models. The source states it for TriviaQA and "
        "MMLU.")
    acc = pd.DataFrame({"model": list("abcdef"), "params": [1, 2, 3, 4, 5, 6],
                        "knowledge accuracy": [0.1, 0.2, 0.3, 0.35, 0.38, 0.4], "reasoning accuracy": 0.02})
    by_copies = pd.DataFrame({"params": [1, 2, 3, 4, 5, 6], "1": 0.0,
                              "65–256": [0.0, 0.2, 0.1, 0.4, 0.3, 1.0]}, index=list("abcdef"))
    answered = pd.DataFrame({"model": np.repeat(list("abcdef"), 2), "bin": ["1", "65–256"] * 6,
                             "n": [20, 5] * 6, "hits": [0, 0, 0, 1, 0, 0, 0, 2, 0, 1, 0, 5]})
    perf = performance_claims(acc, by_copies, answered)
    assert accuracy_sentence(acc, perf).startswith(
        "The largest model, f, answers 40.0% of the facts and the smallest, a, 10.0%. Whether knowledge "
        "accuracy rises with size (Spearman ρ with size +1.00, p = 0.00")
    assert "**Reproduced**" in accuracy_sentence(acc, perf)
    ladder = pd.DataFrame({"model": list("abcdef"), "family": ["wide", "deep"] * 3, "tokens": 100})
    text = copies_sentence(by_copies, ladder, perf)
    assert text.startswith("f recalls 100.0% of the facts seen 65–256 times and 0.0% of those seen once "
                           "(Fisher's exact test, p < 0.001): **Reproduced**")
    assert "deep family at most 100.0%; wide family at most 30.0%" in text and "trained on" not in text
    floor = performance_claims(acc.assign(**{"knowledge accuracy": 0.0}),
                                 by_copies.assign(**{"65–256": 0.0}),
                                 answered.assign(hits=0))
    assert "**Not testable here**: every arm is at the measurement's floor" in accuracy_sentence(acc, floor)

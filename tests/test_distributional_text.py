"""The distributional chapter's English (analysis.distributional.text): the glued numbers
exactly, and a few renderings word for word; the rest follow the claims' statuses."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import distributional as D
from analysis.core.claims import NOT_REPRODUCED, REPRODUCED
from distributional_toys import ladder_mem, mem_rows, trend_of


def test_mem_glue_numbers():
    mem = mem_rows([("knowledge", 3, m, p, lm, r, pv) for m, p, lm, r, pv in [
        ("c", 30, "task-gram", 0.30, 0.01), ("a", 10, "task-gram", 0.10, 0.20),
        ("b", 20, "task-gram", 0.20, 0.04), ("a", 10, "∞-gram", 0.05, 0.5), ("b", 20, "∞-gram", 0.25, 0.01),
        ("c", 30, "∞-gram", np.nan, np.nan), ("a", 10, "pair count", 0.5, 0.001),
        ("b", 20, "pair count", 0.4, 0.001), ("c", 30, "pair count", 0.3, 0.2)]])
    glue = D.mem_glue(mem, ["knowledge"], [3, 5])
    assert {k: glue[k] for k in glue if k.startswith("knowledge_3")} == {
        "knowledge_3_range": "0.10 to 0.30", "knowledge_3_sig": "2 of 3", "knowledge_3_trend": "+1.00",
        "knowledge_3_above_inf": "1 of 3", "knowledge_3_count_range": "0.30 to 0.50",
        "knowledge_3_count_trend": "-1.00"}
    assert glue["knowledge_5_range"] == "not computed (no co-occurring pair)"
    assert glue["knowledge_5_sig"] == "0 of 0" and glue["knowledge_5_trend"] == "undefined"


def test_names_and_parameter_counts():
    assert D.fmt_params(24_656) == "25K" and D.fmt_params(163_840) == "0.16M"
    assert D.fmt_params(4_070_000) == "4.1M"
    assert D.mem_name(3) == "Mem₃" and D.mem_name("∞") == "Mem∞"


def test_render_words_a_claim():
    claim = D.filter_claims({"total": 2161, "authors": 2145, "paper": 17, "paper_co": 17, "none_co": 2158})[0]
    assert D.render(claim) == (
        "The authors' code's effective threshold (γ = 0.002) keeps nearly every candidate 3-gram pair of the "
        "knowledge task (a filter in name only): **reproduced** (99.3% of 2,161; 95% interval 0.988–0.995, "
        "wholly at or above 0.95, n = 2161).")
    tied = D.tied_claim(pd.DataFrame({"p_taskgram": [1.0] * 15 + [0.5] * 85}), trend_of([0.1] * 3, [0.5] * 3),
                        "knowledge")
    assert "**reproduced** (by design of the lab corpus) (15.0% of 100;" in D.render(tied)


def test_filter_sentence_follows_the_claims():
    counts = {"total": 200, "paper": 10, "authors": 200, "paper_co": 4, "none_co": 150}
    claims = D.filter_claims(counts)
    assert D.filter_sentence(counts, claims, "the toy's 3-grams") == (
        "That threshold keeps every one of the 200 candidates of the toy's 3-grams, a filter in name only; "
        "the paper's stated threshold keeps 10 (5.0%): most input and output n-grams are not similar in "
        "MiniLM's embedding space. Of the pairs that co-occur in the corpus, 4 survive the paper's threshold "
        "and 150 are kept without a filter.")
    assert D.authors_sentence(counts, claims).endswith(
        "ran without an effective filter, and the chapter's main numbers follow the code.")
    some = {"total": 200, "paper": 150, "authors": 120, "paper_co": 100, "none_co": 150}
    assert "did filter" in D.authors_sentence(some, D.filter_claims(some))


def test_sensitivity_sentence_names_the_thin_threshold():
    rows = [{"gamma": g, "model": f"m{i}", "params": 10 * (i + 1), "rho": 0.1 * (i + 1), "pvalue": 0.01,
             "pairs": p} for g, p in (("γ = 0.7", 40), ("γ = 0.75", 17)) for i in range(6)]
    claim = D.sensitivity_claim(pd.DataFrame(rows), 3)
    assert D.sensitivity_sentence(claim) == (
        "The threshold check cannot decide whether the paper's stability holds here: γ = 0.75 keeps 17 "
        "pairs, below the "
        "minimum of 30 for a Mem_3. The rank correlations of Mem₃ with size are γ = 0.7 (40 pairs): +1.00; "
        "γ = 0.75 (17 pairs): +1.00.")


def test_the_paragraphs_read_the_statuses():
    rising = ladder_mem("knowledge", [0.41, 0.43, 0.45, 0.47, 0.5, 0.54], [0.001] * 6)
    t = D.trend(rising, "knowledge", 3)
    claims = [D.mem_significant(rising), D.mem_rises(rising),
              D.tied_claim(pd.DataFrame({"p_taskgram": [1.0] * 15 + [0.5] * 85}), t, "knowledge"),
              D.count_claim(ladder_mem("knowledge", [0.7] * 6, [0.001] * 6, lm="pair count"), "knowledge")]
    assert D.knowledge_sentence(t, claims).endswith("this part of the paper's pattern reproduces on the lab.")
    assert D.mem_sentence(t, "knowledge", 3, claims).endswith(", so it rises with size.")
    assert D.ties_sentence(claims[2]).endswith("Most pairs are not tied, so the conditional can order them.")
    counts = D.trend(ladder_mem("knowledge", [0.7] * 6, [0.001] * 6, lm="pair count"), "knowledge", 3,
                     lm="pair count")
    assert D.count_sentence(claims[3], counts).endswith(
        "the models' probabilities follow the corpus frequency.")
    neg = ladder_mem("reasoning", [-0.26, -0.2, -0.18, -0.17, -0.16, -0.15], [1e-10] * 6)
    none = D.mem_none(neg)
    assert none.status == NOT_REPRODUCED
    assert D.reasoning_sentence(D.trend(neg, "reasoning", 3), none).endswith(
        "(negative: the models' probabilities run against the co-occurrence conditional).")
    assert claims[0].status == claims[1].status == REPRODUCED


def test_undefined_correlations_are_named_with_their_reason():
    mem = mem_rows([("knowledge", 5, m, p, "∞-gram", np.nan, np.nan) for m, p in (("a", 1), ("b", 2))]
                   + [("knowledge", 5, m, p, "task-gram", 0.1, 0.5) for m, p in (("a", 1), ("b", 2))])
    mem["note"] = [D.CONSTANT_NOTE, D.CONSTANT_NOTE, "", ""]
    assert D.undefined_sentence(mem) == (
        "No model has a defined correlation for the ∞-gram LM on knowledge 5-grams (one side gives every "
        "pair the same value).")
    assert D.undefined_sentence(mem[mem["lm"] == "task-gram"]) == (
        "Every corpus LM gives a defined correlation for every model.")


def test_lm_accuracy_and_copies_sentences_follow_their_claims():
    tg = [0.4] * 6
    mem = pd.concat([ladder_mem(task, tg, [0.01] * 6) for task in ("knowledge", "reasoning")]
                    + [ladder_mem("knowledge", [0.2] * 6, [0.01] * 6, lm="∞-gram"),
                       ladder_mem("reasoning", [0.6] * 6, [0.01] * 6, lm="∞-gram")])
    claims = [D.claims.above_infgram_claim(mem, task) for task in ("knowledge", "reasoning")]
    assert D.lm_sentence(claims, 3) == (
        "The task-gram LM correlates at least as strongly as the ∞-gram LM for 6 of 6 models on knowledge "
        "3-grams (as the source finds, p = 0.0312) and 0 of 6 models on reasoning 3-grams (the reverse of "
        "the source's finding, p = 0.0312); the source states it for TriviaQA and MMLU.")
    acc = pd.DataFrame({"model": list("abcdef"), "params": [1, 2, 3, 4, 5, 6],
                        "knowledge accuracy": [0.1, 0.2, 0.3, 0.35, 0.38, 0.4], "reasoning accuracy": 0.02})
    by_copies = pd.DataFrame({"params": [1, 2, 3, 4, 5, 6], "1": 0.0,
                              "65–256": [0.0, 0.2, 0.1, 0.4, 0.3, 1.0]}, index=list("abcdef"))
    answered = pd.DataFrame({"model": np.repeat(list("abcdef"), 2), "bin": ["1", "65–256"] * 6,
                             "n": [20, 5] * 6, "hits": [0, 0, 0, 1, 0, 0, 0, 2, 0, 1, 0, 5]})
    perf = D.performance_claims(acc, by_copies, answered)
    assert D.accuracy_sentence(acc, perf).startswith(
        "The largest model, f, answers 40.0% of the facts and the smallest, a, 10.0%; across the ladder "
        "knowledge accuracy rises with size (Spearman ρ with size +1.00, p < 0.001).")
    ladder = pd.DataFrame({"model": list("abcdef"), "family": ["wide", "deep"] * 3, "tokens": 100})
    text = D.copies_sentence(by_copies, ladder, perf)
    assert text.startswith("f recalls 100.0% of the facts seen 65–256 times and 0.0% of those seen once: as "
                           "in the source, recall rises with the count (Fisher's exact test, p < 0.001).")
    assert "deep family at most 100.0%; wide family at most 30.0%" in text and "trained on" not in text

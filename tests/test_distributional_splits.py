"""The distributional chapter's additions for the source's Figure 3 and 4 panels beyond
TriviaQA and GSM8K: the MMLU splits, novelty against size, the ∞-gram Kendall distance,
and the threshold check's significance gate, by value on hand-computed fixtures."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from analysis import ngrams as G
from analysis.core import data
from analysis.core.claims import (
    DOES_NOT_HOLD,
    EXTENSION,
    HOLDS,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
)
from analysis.distributional.claims import kendall_inf_claim
from analysis.distributional.claims_filter import sensitivity_claim
from analysis.distributional.claims_tasks import mmlu_claims, novelty_claims
from analysis.distributional.method_tables import kendall_table, taskgram_mem_table
from analysis.distributional.method_trends import trend
from analysis.distributional.params import (
    SOURCE_KENDALL,
    SOURCE_MMLU_REASONING,
    SOURCE_NOVELTY,
    load_paper_claims,
)
from analysis.distributional.run import mmlu_in_lab, mmlu_task, split_tables
from analysis.distributional.text import (
    kendall_inf_sentence,
    mmlu_lab_text,
    mmlu_sentence,
    novelty_sentence,
    peak_sentence,
)
from distributional_toys import ladder3, ladder_mem, toy_index, toy_mem_inputs

SIX = [10, 20, 30, 40, 50, 60]
K, R = "MMLU knowledge", "MMLU reasoning"


# ---------------------------------------------------------------------------
# The tables
# ---------------------------------------------------------------------------


def test_split_tables_count_candidates_and_cooccurring_pairs_by_hand():
    specs = {K: {"inputs": ["Which capital city is in France?"], "outputs": ["Paris"]},
             R: {"inputs": ["Compute the derivative quickly."], "outputs": ["Seven"]}}
    tables, rows = split_tables(specs, toy_index(), 2)
    # as in the toy's task-gram table: (capital city), (city France) co-occur with Paris in the
    # 3-copy document; the reasoning split's words occur in no document
    assert list(tables) == [(K, 2)]
    assert list(tables[(K, 2)]["c_xy"]) == [3, 3] and list(tables[(K, 2)]["p_taskgram"]) == [0.75, 1.0]
    r = rows.set_index("task")
    n_reas = len(G.task_gram_pairs(specs[R]["inputs"], specs[R]["outputs"], 2))
    assert r.loc[K, ["questions", "candidates", "co-occurring", "instances"]].tolist() == [1, 3, 2, 1]
    assert r.loc[R, ["questions", "candidates", "co-occurring", "instances"]].tolist() == [1, n_reas, 0, 0]


def test_taskgram_mem_table_is_spearman_of_the_two_sides():
    tables, log_llm, _ = toy_mem_inputs()
    mem = taskgram_mem_table(tables, log_llm, ladder3())
    # -log P_taskgram falls along the pairs; model a's -log P_LLM falls too (ρ = 1), b's rises (ρ = -1)
    assert mem["rho"].tolist() == pytest.approx([1.0, -1.0, 1.0])
    assert set(mem["filter"]) == {"no filter"} and set(mem["lm"]) == {"task-gram"}
    assert mem["pairs"].tolist() == [4, 4, 4]
    assert trend(mem, "knowledge", 3).n_models == 3


def test_kendall_table_adds_the_infgram_distance():
    tables, log_llm, log_inf = toy_mem_inputs()
    k = kendall_table(tables, log_llm, ladder3(), log_inf)
    tg = k[k["lm"] == "task-gram"].set_index("model")["kendall"]
    inf = k[k["lm"] == "∞-gram"].set_index("model")["kendall"]
    # the ∞-gram LM ranks the four pairs in the reverse of the task-gram LM's order:
    # distance (1 - τ) / 2 is 0 for the same order and 1 for the reverse
    assert tg.tolist() == pytest.approx([0.0, 1.0, 0.0]) and inf.tolist() == pytest.approx([1.0, 0.0, 1.0])
    assert set(kendall_table(tables, log_llm, ladder3())["lm"]) == {"task-gram"}


# ---------------------------------------------------------------------------
# The claims
# ---------------------------------------------------------------------------


def _kendall(tg, inf):
    rows = [("reasoning", 3, f"m{i}", SIX[i], lm, v, 0.01)
            for lm, vals in (("task-gram", tg), ("∞-gram", inf)) for i, v in enumerate(vals)]
    return pd.DataFrame(rows, columns=["task", "n", "model", "params", "lm", "kendall", "pvalue"])


def test_kendall_inf_claim_is_the_sign_test_over_models():
    tg = [0.51, 0.52, 0.52, 0.53, 0.54, 0.54]
    above = kendall_inf_claim(_kendall(tg, [v + 0.04 for v in tg]))
    assert (above.id, above.status, above.value, above.n) == ("kendall3_inf_above", REPRODUCED, 1.0, 6)
    assert above.p == pytest.approx(binomtest(6, 6, 0.5).pvalue) and above.p == pytest.approx(1 / 32)
    assert above.source_value == SOURCE_KENDALL
    five = kendall_inf_claim(_kendall(tg, [v + 0.04 for v in tg[:5]] + [0.5]))
    assert five.status == INCONCLUSIVE and five.p == pytest.approx(7 / 32)
    assert kendall_inf_claim(_kendall(tg, [v - 0.04 for v in tg])).status == NOT_REPRODUCED
    only_tg = _kendall(tg, tg)
    assert kendall_inf_claim(only_tg[only_tg["lm"] == "task-gram"]).status == NOT_TESTABLE


def _nov(values, pairs=100, task="reasoning"):
    return pd.DataFrame({"model": [f"m{i}" for i in range(6)], "params": SIX, "task": task,
                         "novelty": values, "pairs": pairs})


def test_novelty_claims_read_the_trend_with_size_and_the_pairs():
    rising = [0.2, 0.25, 0.3, 0.35, 0.4, 0.5]
    (claim,) = novelty_claims(_nov(rising))
    assert (claim.id, claim.status, claim.value, claim.n) == ("novelty_rises_reasoning", HOLDS, 1.0, 6)
    assert claim.kind == EXTENSION and claim.extra["source"] == SOURCE_NOVELTY
    assert claim.extra["pairs"] == 100
    assert novelty_claims(_nov(rising[::-1]))[0].status == DOES_NOT_HOLD
    # the committed knowledge task: ρ = -0.43 over ten models, p = 0.21: the other side, not significant
    other = novelty_claims(_nov([0.99, 0.98, 1.0, 0.97, 0.99, 0.985]))[0]
    assert other.value < 0 and other.status == INCONCLUSIVE
    ceiling = novelty_claims(_nov([1.0] * 6))[0]
    assert ceiling.status == NOT_TESTABLE and "ceiling" in ceiling.reason
    thin = novelty_claims(_nov(rising, pairs=[100, 100, 12, 100, 100, 100]))[0]
    assert thin.status == INCONCLUSIVE
    assert thin.reason == "a model generated only 12 pairs, below the minimum of 30"
    assert novelty_claims(_nov([np.nan] * 6, pairs=0))[0].status == NOT_TESTABLE
    both = novelty_claims(pd.concat([_nov(rising, task="knowledge"), _nov(rising)]))
    assert [c.id for c in both] == ["novelty_rises_knowledge", "novelty_rises_reasoning"]
    assert {c.family for c in both} == {"novelty_rises"}
    lo, hi = sorted(c.p for c in both)
    assert sorted(c.p_adjusted for c in both) == pytest.approx(sorted([2 * lo, max(2 * lo, hi)]))


def _splits(k_co, r_co, k_cand=33483, r_cand=18053):
    return pd.DataFrame({"task": [K, R], "n": 3, "questions": [962, 314], "candidates": [k_cand, r_cand],
                         "co-occurring": [k_co, r_co], "instances": [min(k_co, 5), min(r_co, 5)]})


def test_mmlu_claims_without_cooccurring_pairs_are_not_testable():
    # the committed lab: no knowledge 3-gram pair co-occurs, 27 reasoning ones do
    mem = ladder_mem(R, [0.1] * 6, [0.5] * 6, pairs=27)
    falls, below = mmlu_claims(mem, _splits(0, 27), load_paper_claims())
    assert (falls.id, falls.status) == ("mmlu_mem_falls", NOT_TESTABLE)
    assert falls.reason == ("none of the 33,483 candidate 3-gram pairs of the MMLU knowledge split's 962 "
                            "questions co-occurs in a document of the lab corpus")
    assert falls.source_value == "rho about 0.32 at 70M to 0.28 at 12B"
    assert (below.id, below.status, below.reason) == ("mmlu_reasoning_below", NOT_TESTABLE, falls.reason)
    assert below.source_value == SOURCE_MMLU_REASONING


def test_mmlu_claims_read_the_trend_and_the_sign_test():
    falling, sig = [0.32, 0.31, 0.30, 0.30, 0.29, 0.28], [0.01] * 6
    mem = pd.concat([ladder_mem(K, falling, sig), ladder_mem(R, [v - 0.1 for v in falling], [0.2] * 6)])
    falls, below = mmlu_claims(mem, _splits(500, 400))
    # ρ with size: ranks (6, 5, 3.5, 3.5, 2, 1) against (1..6)
    assert falls.status == REPRODUCED and falls.value == pytest.approx(-0.9856, abs=1e-4)
    assert (below.status, below.value, below.n) == (REPRODUCED, 1.0, 6)
    assert below.p == pytest.approx(1 / 32)
    rising = pd.concat([ladder_mem(K, falling[::-1], sig), ladder_mem(R, falling, [0.2] * 6)])
    assert mmlu_claims(rising, _splits(500, 400))[0].status == NOT_REPRODUCED
    quiet = pd.concat([ladder_mem(K, falling, [0.3] * 6), ladder_mem(R, falling, [0.2] * 6)])
    q_falls, q_below = mmlu_claims(quiet, _splits(500, 400))
    assert q_falls.status == INCONCLUSIVE and "no model's Mem is significant" in q_falls.reason
    assert q_below.status == NOT_REPRODUCED and q_below.value == 0.0  # equal everywhere: never lower
    thin = pd.concat([ladder_mem(K, falling, sig, pairs=20), ladder_mem(R, falling, sig, pairs=20)])
    t_falls, t_below = mmlu_claims(thin, _splits(20, 20))
    assert t_falls.status == t_below.status == INCONCLUSIVE
    assert t_falls.reason == ("the MMLU knowledge split has 20 co-occurring pairs, below the minimum of 30 "
                              "for a Mem_3")


def test_sensitivity_with_enough_pairs_but_no_significant_trend_is_inconclusive():
    rows = [{"gamma": g, "model": f"m{i}", "params": SIX[i], "rho": r, "pvalue": 0.01, "pairs": 40}
            for g in ("γ = 0.7", "γ = 0.75") for i, r in enumerate([0.1, 0.3, 0.2, 0.4, 0.2, 0.3])]
    claim = sensitivity_claim(pd.DataFrame(rows), 3)
    # ρ of (0.1, 0.3, 0.2, 0.4, 0.2, 0.3) with size is 0.4 (p ≈ 0.43): the source's direction, not significant
    assert claim.status == INCONCLUSIVE and claim.n == 40
    assert "not significant" in claim.reason


# ---------------------------------------------------------------------------
# The lab's MMLU items, and the sentences
# ---------------------------------------------------------------------------


def test_mmlu_task_reads_the_right_choice_of_each_question():
    spec = mmlu_task({"algebra": ("abstract_algebra",)})["algebra"]
    table = pd.read_csv(data.fetch("tasks/mmlu/test/abstract_algebra_test.csv"), dtype=str,
                        keep_default_na=False)
    assert len(spec["inputs"]) == len(table) == len(spec["outputs"]) == len(spec["prompts"])
    first = table.iloc[0]
    assert spec["outputs"][0] == " ".join(first[f"choice{int(first['answer'])}"].split())
    assert spec["prompts"][0] == f"Answer the following question: {spec['inputs'][0]} Answer:"
    assert spec["subjects"] == ["abstract_algebra"]


def test_mmlu_in_lab_counts_the_injected_questions_and_the_runs_that_see_them():
    corpus = SimpleNamespace(injections=[SimpleNamespace(task="mmlu", copies=c) for c in (0, 1, 4)]
                             + [SimpleNamespace(task="qa", copies=4)])
    runs = pd.DataFrame({"family": ["ladder-wide", "standard", "perturbed", "range"],
                         "inject": [False, False, True, True]})
    got = mmlu_in_lab(corpus, runs)
    assert got == {"injected": 2, "families": ["perturbed", "range"], "ladder_injects": False}
    assert mmlu_lab_text(**got) == (
        ": the lab's 2 MMLU questions are injected sequences, inserted only into its perturbed and range "
        "runs, and no ladder model trains on them")
    assert mmlu_lab_text(2, ["ladder-wide"], True) == ""


def test_mmlu_sentence_without_pairs_word_for_word():
    splits = _splits(0, 27)
    falls, _ = mmlu_claims(ladder_mem(R, [0.1] * 6, [0.5] * 6, pairs=27), splits, load_paper_claims())
    text = mmlu_sentence(falls, splits, ladder_mem(R, [0.1] * 6, [0.5] * 6), ["astronomy"], ": why")
    assert text.startswith(
        "The MMLU knowledge split (astronomy; 962 questions) has 33,483 candidate 3-gram pairs, none of "
        "which co-occurs in a document of the lab corpus: why, so it has no Mem₃. **Not testable here**: "
        "none of the 33,483 candidate 3-gram pairs of the MMLU knowledge split's 962 questions co-occurs "
        "in a "
        "document of the lab corpus. The MMLU knowledge split's Mem_3 falls with model size. This run: —; "
        "the source: rho about 0.32 at 70M to 0.28 at 12B.")


def test_novelty_and_kendall_sentences_read_their_claims():
    rising = [0.2, 0.25, 0.3, 0.35, 0.4, 0.5]
    nov = _nov(rising)
    text = novelty_sentence(novelty_claims(nov), nov)
    assert text.startswith(
        "The share of generated 3-gram pairs that never co-occur in the corpus. On the reasoning task it "
        "ranges from 0.20 to 0.50 (Spearman ρ with size +1.00, p = 0.00")
    assert "**Holds**" in text and text.endswith(f"generalization ({SOURCE_NOVELTY}).")
    flat = _nov([1.0] * 6)
    assert ("On the reasoning task it is 1.00 for every model (no rank correlation). **Not testable here**: "
            "every arm is at the measurement's ceiling") in novelty_sentence(novelty_claims(flat), flat)
    tg = [0.51, 0.52, 0.52, 0.53, 0.54, 0.54]
    k = _kendall(tg, [v + 0.04 for v in tg])
    claim = kendall_inf_claim(k)
    text = kendall_inf_sentence(claim, trend(k, "reasoning", 3, value="kendall"),
                                  trend(k, "reasoning", 3, lm="∞-gram", value="kendall"))
    assert text.startswith(
        "Against the ∞-gram LM the reasoning task's 3-gram Kendall tau distance ranges from 0.55 to 0.58, "
        "against the task-gram LM from 0.51 to 0.54; the ∞-gram distance is the larger for 6 of 6 models, "
        "p = 0.0312 (the source: GSM8K, Pythia: task-gram LM about 0.51–0.54, ∞-gram LM about "
        "0.55–0.58). **Reproduced**")


def test_peak_sentence_names_the_best_bin():
    perf = pd.DataFrame({"model": ["a", "a", "b", "b"], "bin": ["0–3", "3–9", "0–3", "3–9"],
                         "n": [40, 10, 40, 10], "accuracy": [0.0, 0.1, 0.025, np.nan]})
    assert peak_sentence(perf, "reasoning") == (
        "The best reasoning accuracy in any bin is 10.0% (a, summed pair counts 3–9, 10 instances).")
    empty = perf.assign(accuracy=np.nan)
    assert peak_sentence(empty, "reasoning") == "No reasoning answer falls in a count bin."

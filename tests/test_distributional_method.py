"""The distributional chapter's equations (analysis.distributional.method), on toy
inputs with hand-computed answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from analysis.distributional import method
from analysis.distributional.method import (
    answer_correct,
    cooccurring,
    corpus_lms,
    final_number,
    instance_pair_counts,
    kendall_distance,
    mem_spearman,
    novelty,
    pair_contexts,
    performance_by_count,
    recall_gap,
    size_trend,
    spearman_row,
    tied_share,
)
from analysis.distributional.params import CONSTANT_NOTE, DistributionalError


def test_mem_spearman_is_spearman_of_negative_logs():
    p = np.array([0.5, 0.25, 0.1, 0.0, 0.8, 0.05])   # one pair with P = 0 is left out
    logp = np.log([0.4, 0.3, 0.05, 0.2, 0.6, 0.01])
    got = mem_spearman(p, logp)
    keep = p > 0
    want = spearmanr(-np.log(p[keep]), -logp[keep])
    assert got.n == 5
    assert got.value == pytest.approx(want.statistic) and got.p == pytest.approx(want.pvalue)
    # here the orders agree exactly: rho = 1
    assert got.value == pytest.approx(1.0)
    with pytest.raises(DistributionalError, match="probabilities"):
        mem_spearman([1.5, 0.1, 0.2], [0, 0, 0])
    with pytest.raises(DistributionalError, match="Mem_n needs at least 3 pairs with finite values, got 2"):
        mem_spearman([0.1, 0.2], [-1.0, -2.0])


def test_kendall_distance_by_hand():
    assert kendall_distance([1, 2, 3, 4], [10, 20, 30, 40]).value == pytest.approx(0.0)
    assert kendall_distance([1, 2, 3, 4], [4, 3, 2, 1]).value == pytest.approx(1.0)
    # [1,2,3,4] vs [1,3,2,4]: 1 discordant pair of 6, tau = (5 - 1) / 6, distance = 1/6
    d = kendall_distance([1, 2, 3, 4], [1, 3, 2, 4])
    assert d.value == pytest.approx(1 / 6) and d.n == 4
    with pytest.raises(DistributionalError, match="at least 3 pairs"):
        kendall_distance([1, np.nan, 3], [1, 2, 3])


def test_spearman_row_and_its_undefined_cases():
    row = spearman_row([0.5, 0.5], [-1.0, -2.0])
    assert np.isnan(row["rho"]) and row["pairs"] == 2 and "at least 3 pairs" in row["note"]
    row = spearman_row([0.5, 0.5, 0.5, 0.5], [-1.0, -2.0, -3.0, -4.0])
    assert np.isnan(row["rho"]) and row["pairs"] == 4 and row["note"] == CONSTANT_NOTE
    row = spearman_row([0.1, 0.2, 0.4], [-3.0, -2.0, -1.0])
    # -log p falls while -log P_LLM falls: the orders agree
    assert row["rho"] == pytest.approx(1.0) and row["pairs"] == 3 and row["note"] == ""


def test_corpus_lms_and_tied_share():
    table = pd.DataFrame({"c_xy": [1, 2, 4, 8], "p_taskgram": [0.1, 1.0, 1.0, 1.0]})
    lms = corpus_lms(table, np.log([0.5, 0.4, 0.3, 0.2]))
    assert lms["pair count"].tolist() == [0.125, 0.25, 0.5, 1.0]
    assert lms["∞-gram"] == pytest.approx([0.5, 0.4, 0.3, 0.2])
    assert tied_share(table) == 0.75
    assert np.isnan(tied_share(None)) and np.isnan(tied_share(table.iloc[:0]))


def test_size_trend():
    assert size_trend([1, 2, 3], [0.1, 0.2, 0.3]) == pytest.approx(1.0)
    assert size_trend([1, 2, 3, 4], [0.4, 0.3, np.nan, 0.1]) == pytest.approx(-1.0)
    assert np.isnan(size_trend([1, 2], [0.1, 0.2])) and np.isnan(size_trend([1, 2, 3], [0, 0, 0]))


def test_recall_gap_is_fishers_exact_test():
    # 5 of 5 against 0 of 20: the most extreme table of its margins, p = 1 / C(25, 5)
    gap = recall_gap(5, 5, 0, 20)
    assert gap.value == 1.0 and gap.n == 25
    assert gap.p == pytest.approx(1 / 53130)
    assert np.isnan(recall_gap(1, 1, 0, 0).value)
    with pytest.raises(DistributionalError, match="hits must lie"):
        recall_gap(3, 2, 0, 1)


def test_novelty_and_performance_bins():
    assert novelty([0, 3, 0, 1]) == 0.5
    with pytest.raises(DistributionalError, match="at least one"):
        novelty([])
    table = performance_by_count([1, 0, 1, 1, 0, 1], [0, 1, 5, 9, 10, 100], [0, 5, 10, 100])
    assert list(table["n"]) == [2, 2, 2]          # [0,5): 0,1; [5,10): 5,9; [10,100]: 10,100
    assert list(table["accuracy"]) == [0.5, 1.0, 0.5]
    assert (table["ci_lo"] <= table["accuracy"]).all() and (table["accuracy"] <= table["ci_hi"]).all()
    empty = performance_by_count([1], [3], [10, 20])
    assert empty["n"].iloc[0] == 0 and np.isnan(empty["accuracy"].iloc[0])
    with pytest.raises(DistributionalError, match="increasing"):
        performance_by_count([1], [1], [5, 5])
    with pytest.raises(DistributionalError, match="0/1"):
        performance_by_count([2], [1], [0, 5])


def test_answer_checks():
    assert answer_correct(" Los Angeles. It was founded", "Los Angeles")
    assert answer_correct("los angeles!", "Los Angeles")
    assert not answer_correct(" San Francisco", "Los Angeles")
    assert not answer_correct(None, "Los Angeles")
    assert final_number("First 3 * 4 = 12. Then 12 + 1 = 13. #### 13") == 13
    assert final_number("so the answer is 1,204 apples") == 1204
    assert final_number("no digits") is None and final_number(None) is None


def test_continuation_and_pair_contexts():
    assert method.continuation("the cat", "sat") == " sat"
    assert method.continuation("sea ", "ss") == "ss" and method.continuation("", "ab") == "ab"
    table = pd.DataFrame({"instance": [0, 0, 0], "y": [("Paris",), ("France",), ("big", "city")]})
    contexts, grams = pair_contexts(table, ["Q:"], ["Paris, France is a big old city"])
    # Paris starts the output: scored right after the prompt; "big city" is not contiguous,
    # so each of its words is scored where it stands ("old" given, not scored)
    assert contexts == ["Q:", "Q: Paris,", ("Q: Paris, France is a", "Q: Paris, France is a big old")]
    assert grams == ["Paris", "France", ("big", "city")]


def test_cooccurring_keeps_pairs_with_counts_and_samples_in_order():
    counted = pd.DataFrame({"c_xy": [0, 2, 1, 0, 5, 3]})
    counted.attrs["n"] = 3
    kept = cooccurring(counted)
    assert kept["c_xy"].tolist() == [2, 1, 5, 3] and kept.attrs["candidates"] == 6
    sample = cooccurring(counted, max_pairs=2, seed=1)
    assert len(sample) == 2 and set(sample["c_xy"]) <= {2, 1, 5, 3}
    assert sample["c_xy"].tolist() == [c for c in [2, 1, 5, 3] if c in set(sample["c_xy"])]  # table order
    with pytest.raises(DistributionalError, match="none of the 2 filtered 3-gram pairs"):
        cooccurring(counted.iloc[[0, 3]])


def test_instance_pair_counts():
    table = pd.DataFrame({"instance": [0, 2, 2], "c_xy": [3, 1, 4]})
    assert instance_pair_counts(table, 4).tolist() == [3, 0, 5, 0]

"""The distributional chapter's tables over the ladder (method_tables, method_trends),
on hand-computed toy inputs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.distributional.method_tables import (
    accuracy_by_copies,
    accuracy_table,
    answered_by_copies,
    by_model,
    copies_bins,
    count_bins,
    facts_per_copies_bin,
    filter_counts,
    kendall_table,
    ladder_table,
    mem_table,
    performance_table,
    score_answers,
    sensitivity_table,
)
from analysis.distributional.method_trends import above_infgram, significant_positive, threshold_trends, trend
from analysis.distributional.params import AUTHORS_FILTER, NONE_FILTER, PAPER_FILTER, DistributionalError
from analysis.distributional.run import novelty_table, task_gram_tables
from distributional_toys import TOY_TASKS, ladder3, mem_rows, toy_index, toy_mem_inputs, trend_of


def test_ladder_table_keeps_ladder_runs_smallest_first():
    runs = pd.DataFrame({"run": ["wide-32", "deep-16", "wide-16", "std-s1x"],
                         "family": ["ladder-wide", "ladder-deep", "ladder-wide", "standard"],
                         "params": [300, 250, 100, 100], "n_layer": [2, 6, 2, 2], "d_model": [32, 16, 16, 16],
                         "tokens": [10, 5, 10, 10]})
    t = ladder_table(runs)
    assert list(t["model"]) == ["wide-16", "deep-16", "wide-32"]
    assert list(t["family"]) == ["wide", "deep", "wide"]
    assert list(t.columns) == ["model", "family", "params", "layers", "width", "tokens"]
    assert list(ladder_table(runs, ["wide-32", "wide-16"])["model"]) == ["wide-16", "wide-32"]
    with pytest.raises(DistributionalError, match="std-s1x"):
        ladder_table(runs, ["std-s1x"])


def test_task_gram_tables_count_and_filter_by_hand():
    # 2-grams without stopwords: (capital, city), (city, France), (France, ?) against (Paris,);
    # C(capital city) = 3 + 1, C(city France) = 3, both co-occur with Paris only in the 3-copy document
    g = task_gram_tables(TOY_TASKS, (2,), toy_index(), cosines=lambda t: np.array([0.9, 0.5, 0.8]))
    table = g.tables[("knowledge", 2)]
    assert [x for x in table["x"]] == [("capital", "city"), ("city", "France")]
    assert list(table["c_x"]) == [4, 3] and list(table["c_xy"]) == [3, 3]
    assert list(table["p_taskgram"]) == [0.75, 1.0] and list(table["cosine"]) == [0.9, 0.5]
    f = g.filters.set_index("label")
    # the chapter's 2-gram γ is 0.80 (strict): only 0.9 passes; the authors' 0.002 keeps all three
    assert f.loc[PAPER_FILTER, ["pairs", "co-occurring"]].tolist() == [1, 1]
    assert f.loc[AUTHORS_FILTER, ["pairs", "co-occurring"]].tolist() == [3, 2]
    assert f.loc[NONE_FILTER, ["pairs", "co-occurring"]].tolist() == [3, 2]
    assert filter_counts(g.filters, "knowledge", 2) == {"total": 3, "paper": 1, "authors": 3, "paper_co": 1,
                                                          "none_co": 2}
    with pytest.raises(DistributionalError, match="no filter rows"):
        filter_counts(g.filters, "reasoning", 2)
    # a (task, n) whose candidates never co-occur has no table but keeps its filter rows
    rome = {"knowledge": {**TOY_TASKS["knowledge"], "outputs": ["Rome"]}}
    none = task_gram_tables(rome, (2,), toy_index(), cosines=lambda t: np.full(len(t), 0.9))
    assert none.tables == {} and none.filters["co-occurring"].tolist() == [0, 0, 0]


def _scored(rows):
    return pd.DataFrame(rows, columns=["model", "task", "instance", "correct"])


def test_score_answers_and_accuracy():
    tasks = {"knowledge": {"gold": ["Paris", "Paris", "Rome"]}, "reasoning": {"gold": [3]}}
    answers = pd.DataFrame({"model": "m", "task": ["knowledge"] * 3 + ["reasoning"], "instance": [0, 1, 2, 0],
                            "answer": pd.Series([" Paris. Then", None, " Paris", "so #### 3"], dtype=object)})
    scored = score_answers(answers, tasks)
    # right, error (NaN, never wrong), wrong answer, right number
    assert scored["correct"].iloc[0] == 1.0 and np.isnan(scored["correct"].iloc[1])
    assert scored["correct"].tolist()[2:] == [0.0, 1.0]
    acc = accuracy_table(scored, pd.DataFrame({"model": ["m"], "params": [7]}))
    # the error leaves the denominator: 1 right of 2 answered
    assert acc.iloc[0].tolist() == ["m", 7, 0.5, 1.0]


def test_count_bins_and_performance_table():
    edges, labels = count_bins([0, 1, 2, 3, 4, 5, 6, 7], n_bins=2)
    assert edges.tolist() == [0.0, 3.5, 7.0] and labels == ["0–3", "3–7"]
    edges, labels = count_bins([5, 5, 5])
    assert edges.tolist() == [5.0, 6.0] and labels == ["5–6"]
    scored = _scored([("a", "knowledge", i, c) for i, c in enumerate([1, 0, np.nan, 1])]
                     + [("a", "reasoning", 0, 1)])
    ladder = pd.DataFrame({"model": ["a"], "params": [5]})
    perf = performance_table(scored, [0, 1, 10, 20], ladder, n_bins=2)
    # edges at the quantiles 0, 5.5, 20: bin one holds instances 0 and 1, bin two 3 (instance 2 is an error)
    assert perf["bin"].tolist() == ["0–5", "5–20"]
    assert perf["n"].tolist() == [2, 1] and perf["accuracy"].tolist() == [0.5, 1.0]


def test_accuracy_by_copies_bins_and_counts():
    bins = copies_bins([0, 1, 3, 4, 20, 300])
    assert list(bins.astype(str)) == ["0", "1", "2–4", "2–4", "17–64", "65–300"]
    scored = _scored([("a", "knowledge", 0, 1), ("a", "knowledge", 1, 0), ("a", "knowledge", 2, 1),
                      ("b", "knowledge", 0, 0), ("b", "knowledge", 1, 1), ("b", "knowledge", 2, np.nan)])
    ladder = pd.DataFrame({"model": ["a", "b"], "params": [1, 2]})
    table = accuracy_by_copies(scored, [1, 3, 4], ladder)
    assert list(table.columns) == ["params", "1", "2–4"]
    assert table.loc["a"].tolist() == [1, 1.0, 0.5] and table.loc["b"].tolist() == [2, 0.0, 1.0]
    assert facts_per_copies_bin([1, 3, 4]).to_dict() == {"1": 1, "2–4": 2}
    counts = answered_by_copies(scored, [1, 3, 4], ladder)
    # b's answer on fact 2 is an error: 1 answered in 2–4
    assert counts.values.tolist() == [["a", "1", 1, 1], ["a", "2–4", 2, 1], ["b", "1", 1, 0],
                                      ["b", "2–4", 1, 1]]


def test_mem_and_kendall_tables_by_hand():
    tables, log_llm, log_inf = toy_mem_inputs()
    mem = mem_table(tables, log_llm, log_inf, ladder3())
    assert len(mem) == 3 * 2 * 3  # models × filters × corpus LMs
    row = mem.set_index(["model", "filter", "lm"])
    # model a orders the pairs as the task-gram LM and the counts do, and against the ∞-gram LM
    assert row.loc[("a", "no filter", "task-gram"), "rho"] == pytest.approx(1.0)
    assert row.loc[("a", "no filter", "pair count"), "rho"] == pytest.approx(1.0)
    assert row.loc[("a", "no filter", "∞-gram"), "rho"] == pytest.approx(-1.0)
    assert row.loc[("b", "no filter", "task-gram"), "rho"] == pytest.approx(-1.0)
    # the paper's 3-gram γ (0.75) keeps pairs 0, 2, 3
    assert row.loc[("a", "paper", "task-gram"), "pairs"] == 3
    assert row.loc[("b", "paper", "task-gram"), "rho"] == pytest.approx(-1.0)
    assert row.loc[("a", "no filter", "task-gram"), "family"] == "wide"
    kd = kendall_table(tables, log_llm, ladder3()).set_index("model")
    assert kd.loc["a", "kendall"] == pytest.approx(0.0) and kd.loc["b", "kendall"] == pytest.approx(1.0)


def test_trend_above_infgram_and_significant_positive():
    mem = mem_rows([("knowledge", 3, m, p, lm, r, pv) for m, p, lm, r, pv in [
        ("c", 30, "task-gram", 0.30, 0.01), ("a", 10, "task-gram", 0.10, 0.20),
        ("b", 20, "task-gram", 0.20, 0.04), ("a", 10, "∞-gram", 0.05, 0.5), ("b", 20, "∞-gram", 0.25, 0.01),
        ("c", 30, "∞-gram", np.nan, np.nan)]])
    t = trend(mem, "knowledge", 3)
    assert t.rho.tolist() == [0.10, 0.20, 0.30]  # smallest model first
    assert (t.n_models, t.n_sig, t.lo, t.hi) == (3, 2, 0.10, 0.30)
    assert t.size_rho == pytest.approx(1.0) and t.size_test.n == 3
    assert above_infgram(mem, "knowledge", 3) == (1, 3)  # a only; c's ∞-gram value is undefined
    assert significant_positive(mem, "knowledge", 3) == 2
    assert significant_positive(mem, "knowledge", 3, lm="∞-gram") == 1
    assert significant_positive(mem, "knowledge", 3, alpha=0.5) == 3
    assert not trend_of([np.nan] * 3, [np.nan] * 3).defined


def test_by_model_keeps_order_and_undefined_rows():
    mem = mem_rows([("reasoning", 3, "b", 2, "task-gram", 0.2, 0.1),
                    ("reasoning", 3, "a", 1, "task-gram", 0.1, 0.1),
                    ("knowledge", 3, "b", 2, "∞-gram", np.nan, np.nan),
                    ("knowledge", 3, "a", 1, "∞-gram", np.nan, np.nan)])
    wide = by_model(mem, "rho", ["a", "b"])
    assert wide.index.tolist() == [("reasoning", 3, "task-gram"), ("knowledge", 3, "∞-gram")]
    assert wide.columns.tolist() == ["a", "b"] and wide.iloc[0].tolist() == [0.1, 0.2]
    assert wide.iloc[1].isna().all()
    assert by_model(mem, "rho", ["b"], index=("task",)).index.tolist() == ["reasoning", "knowledge"]


def test_novelty_table_by_hand():
    # novelty 3-grams: the input's (capital, city, France) against the answer's whole word sequence
    # (Paris, Madrid), shorter than 3 words: no document holds both, so novelty is 1
    tasks = {"knowledge": {"inputs": ["capital city France"], "outputs": ["Paris"]}}
    answers = pd.DataFrame({"model": ["a", "b"], "task": "knowledge", "instance": 0,
                            "answer": pd.Series(["Paris Madrid", None], dtype=object)})
    ladder = pd.DataFrame({"model": ["a", "b"], "params": [1, 2]})
    nov = novelty_table(answers, tasks, toy_index(), ladder).set_index("model")
    assert nov.loc["a", "novelty"] == 1.0 and nov.loc["a", "pairs"] == 1
    # a failed request gives no pair: NaN novelty, 0 pairs
    assert np.isnan(nov.loc["b", "novelty"]) and nov.loc["b", "pairs"] == 0
    same = answers.assign(answer=["Paris", "Madrid"])
    nov = novelty_table(same, tasks, toy_index(), ladder).set_index("model")
    # (capital city France, Paris) co-occur in the first document; Madrid never with that 3-gram
    assert nov["novelty"].tolist() == [0.0, 1.0]
    # the per-instance counts behind it: one pair per answer, novel for b only
    from analysis.distributional.method_tables import novelty_counts
    per = novelty_counts(same, tasks, toy_index(), ladder)
    assert per[["model", "instance", "novel", "pairs"]].values.tolist() == [["a", 0, 0, 1], ["b", 0, 1, 1]]


def test_sensitivity_table_and_threshold_trends():
    tables, log_llm, _ = toy_mem_inputs()
    sens = sensitivity_table(tables[("knowledge", 3)], log_llm, ladder3(), "knowledge", 3, (0.7, 0.92))
    assert sens["gamma"].unique().tolist() == ["γ = 0.7", "γ = 0.92", "no filter"]
    pairs = sens.groupby("gamma", sort=False)["pairs"].first().tolist()
    assert pairs == [3, 1, 4]  # cosines 0.9, 0.1, 0.8, 0.95
    assert sens.query("gamma == 'γ = 0.92'")["rho"].isna().all()
    rows = threshold_trends(sens).set_index("gamma")
    assert rows.index.tolist() == ["γ = 0.7", "γ = 0.92"]  # the unfiltered rows are not a threshold
    # at 0.7 the models' ρ are +1, -1, +1 against sizes 10, 20, 30: Spearman 0
    assert rows.loc["γ = 0.7", ["pairs", "models"]].tolist() == [3, 3]
    assert rows.loc["γ = 0.7", "size_rho"] == pytest.approx(0.0)
    assert rows.loc["γ = 0.92", "models"] == 0 and np.isnan(rows.loc["γ = 0.92", "size_rho"])

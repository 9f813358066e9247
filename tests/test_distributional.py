"""The distributional chapter's metrics, on toy inputs with hand-computed answers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, spearmanr

from analysis import distributional as D
from analysis.core.cache import QueryCache
from analysis.models import Model


class BigramToy(Model):
    """A toy language model over characters: each character of the continuation has
    probability 1/2 if it repeats the character before it, else 1/4; it records
    what it was asked."""

    backend = "toy"

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.asked = []

    def _generate(self, requests):
        yield from ()

    def _logprobs(self, contexts, continuations):
        for i, (c, s) in enumerate(zip(contexts, continuations)):
            self.asked.append((c, s))
            prev = c[-1] if c else ""
            out = []
            for ch in s:
                out.append(math.log(0.5 if ch == prev else 0.25))
                prev = ch
            yield i, out


def test_chain_rule_sums_token_logprobs_in_context(tmp_path):
    model = BigramToy("toy", cache=QueryCache(tmp_path / "q.sqlite"))
    lp = D.ngram_logprob(model, ["the cat", "sea "], ["tt", "ss"])
    # " tt" after "the cat": ' ' after 't' 1/4, 't' after ' ' 1/4, 't' after 't' 1/2
    assert lp[0] == pytest.approx(math.log(0.25 * 0.25 * 0.5))
    # "ss" after "sea ": no space added; 's' after ' ' 1/4, 's' after 's' 1/2
    assert lp[1] == pytest.approx(math.log(0.25 * 0.5))
    assert model.asked == [("the cat", " tt"), ("sea ", "ss")]
    # " ab" after "x": three characters at 1/4 each, summed in log space
    assert D.ngram_logprob(model, ["x"], ["ab"])[0] == pytest.approx(3 * math.log(0.25))
    with pytest.raises(D.DistributionalError, match="same length"):
        D.ngram_logprob(model, ["a"], [])
    with pytest.raises(D.DistributionalError, match="non-empty"):
        D.ngram_logprob(model, ["a"], [" "])


def test_mem_spearman_is_spearman_of_negative_logs():
    p = np.array([0.5, 0.25, 0.1, 0.0, 0.8, 0.05])   # one pair with P = 0 is left out
    logp = np.log([0.4, 0.3, 0.05, 0.2, 0.6, 0.01])
    got = D.mem_spearman(p, logp)
    keep = p > 0
    want = spearmanr(-np.log(p[keep]), -logp[keep])
    assert got.n == 5
    assert got.statistic == pytest.approx(want.statistic) and got.pvalue == pytest.approx(want.pvalue)
    # here the orders agree exactly: rho = 1
    assert got.statistic == pytest.approx(1.0)
    with pytest.raises(D.DistributionalError, match="probabilities"):
        D.mem_spearman([1.5, 0.1, 0.2], [0, 0, 0])
    with pytest.raises(D.DistributionalError, match="at least 3 pairs"):
        D.mem_spearman([0.1, 0.2], [-1.0, -2.0])


def test_kendall_distance_by_hand():
    assert D.kendall_distance([1, 2, 3, 4], [10, 20, 30, 40]).statistic == pytest.approx(0.0)
    assert D.kendall_distance([1, 2, 3, 4], [4, 3, 2, 1]).statistic == pytest.approx(1.0)
    # [1,2,3,4] vs [1,3,2,4]: 1 discordant pair of 6, tau = (5 - 1) / 6, distance = 1/6
    d = D.kendall_distance([1, 2, 3, 4], [1, 3, 2, 4])
    assert d.statistic == pytest.approx(1 / 6)
    assert d.pvalue == pytest.approx(kendalltau([1, 2, 3, 4], [1, 3, 2, 4]).pvalue)


def test_novelty_and_performance_bins():
    assert D.novelty([0, 3, 0, 1]) == 0.5
    with pytest.raises(D.DistributionalError, match="at least one"):
        D.novelty([])
    table = D.performance_by_count([1, 0, 1, 1, 0, 1], [0, 1, 5, 9, 10, 100], [0, 5, 10, 100])
    assert list(table["n"]) == [2, 2, 2]          # [0,5): 0,1; [5,10): 5,9; [10,100]: 10,100
    assert list(table["accuracy"]) == [0.5, 1.0, 0.5]
    assert (table["ci_lo"] <= table["accuracy"]).all() and (table["accuracy"] <= table["ci_hi"]).all()
    empty = D.performance_by_count([1], [3], [10, 20])
    assert empty["n"].iloc[0] == 0 and np.isnan(empty["accuracy"].iloc[0])
    with pytest.raises(D.DistributionalError, match="increasing"):
        D.performance_by_count([1], [1], [5, 5])
    with pytest.raises(D.DistributionalError, match="0/1"):
        D.performance_by_count([2], [1], [0, 5])


def test_lab_tasks_are_built_from_the_corpus():
    from analysis.lab import ladder
    from analysis.lab.corpus import build_corpus

    corpus = build_corpus(ladder.get_profile("smoke").corpus)
    know = D.knowledge_task(corpus)
    assert len(know) == ladder.get_profile("smoke").corpus.n_facts
    stream = "\n".join(d.text for d in corpus.documents)
    facts = [d for d in corpus.documents if d.kind == "knowledge" and d.meta["role"] == "fact"]
    for row in know.itertuples():
        # asked in the source's instruction, a wording no training document holds
        assert row.prompt == f"Answer the following question: {row.question} Answer:"
        assert row.prompt not in stream
        mine = [d for d in facts if d.meta["question_id"] == row.question_id]
        assert row.copies == sum(d.copies for d in mine) == mine[0].meta["fact_copies"]
        assert row.mentions == mine[0].meta["mentions"]
    assert (know["copies"] >= 1).all() and (know["mentions"] >= 0).all()
    reason = D.reasoning_task(corpus, 30, seed=0)
    corpus_questions = {d.meta["question"] for d in corpus.documents if d.kind == "reasoning"}
    assert len(reason) == 30 and reason["question"].is_unique
    assert not set(reason["question"]) & corpus_questions
    # the worked solution's final number is the answer
    assert all(D.final_number(s) == a for s, a in zip(reason["solution"], reason["answer"]))
    assert D.reasoning_task(corpus, 30, seed=0).equals(reason)
    with pytest.raises(D.DistributionalError, match="n must be a positive integer"):
        D.reasoning_task(corpus, 0)


def test_knowledge_task_by_hand():
    from types import SimpleNamespace

    from analysis.lab.corpus import Document

    meta = {"question_id": 7, "question": "Who wrote Hamlet?", "answer": "Shakespeare", "role": "fact",
            "mentions": 1, "fact_copies": 5}
    docs = [Document("k-0", "knowledge", "triviaqa", "Q: Who wrote Hamlet? A: Shakespeare.", 2, dict(meta)),
            Document("k-1", "knowledge", "triviaqa", "Who wrote Hamlet? It is Shakespeare.", 3, dict(meta)),
            Document("q-0", "knowledge", "triviaqa", "Round 1. 1. Who wrote Hamlet?", 1,
                     {"role": "quiz", "question_ids": "[7]"}),
            Document("b-0", "background", "popular", "To be or not to be.", 1, {})]
    know = D.knowledge_task(SimpleNamespace(documents=docs))
    assert know.to_dict("records") == [{
        "question_id": 7, "question": "Who wrote Hamlet?", "answer": "Shakespeare", "copies": 5,
        "mentions": 1, "prompt": "Answer the following question: Who wrote Hamlet? Answer:"}]
    docs.append(Document("b-1", "background", "popular",
                         "She said: Answer the following question: Who wrote Hamlet? Answer: Bacon.", 1, {}))
    with pytest.raises(D.DistributionalError, match="occurs in a training document"):
        D.knowledge_task(SimpleNamespace(documents=docs))
    with pytest.raises(D.DistributionalError, match="no knowledge documents"):
        D.knowledge_task(SimpleNamespace(documents=docs[3:]))


def test_answer_checks():
    assert D.answer_correct(" Los Angeles. It was founded", "Los Angeles")
    assert D.answer_correct("los angeles!", "Los Angeles")
    assert not D.answer_correct(" San Francisco", "Los Angeles")
    assert not D.answer_correct(None, "Los Angeles")
    assert D.final_number("First 3 * 4 = 12. Then 12 + 1 = 13. #### 13") == 13
    assert D.final_number("so the answer is 1,204 apples") == 1204
    assert D.final_number("no digits") is None and D.final_number(None) is None


def test_count_pairs_api_with_recorded_responses(tmp_path):
    import json
    from pathlib import Path

    from analysis import ngrams as G

    fixture = Path(__file__).parent / "fixtures" / "infinigram_api.json"
    recorded = json.loads(fixture.read_text())["responses"]

    def post(payload):
        return next(r["response"] for r in recorded if r["request"] == payload)

    api = G.InfiniGramAPI(post=post, cache=QueryCache(tmp_path / "q.sqlite"))
    table = pd.DataFrame({"instance": [0], "x": [("capital", "of", "France")], "y": [("Paris",)]})
    out = D.count_pairs_api(table, api)
    assert out[["c_x", "c_xy"]].iloc[0].tolist() == [4800, 120]
    assert out["p_taskgram"].iloc[0] == pytest.approx(120 / 4800)


# ---------------------------------------------------------------------------
# The chapter's steps: tables and verdicts on hand-computed toy inputs
# ---------------------------------------------------------------------------

from analysis import ngrams as G  # noqa: E402
from analysis.models.base import Answer  # noqa: E402

TOY_DOCS = ["Paris is the capital city of France.", "The capital city of Spain is Madrid.",
            "Paris hosts a city fair."]
TOY_TASKS = {"knowledge": {"inputs": ["Which capital city is in France?"], "outputs": ["Paris"],
                           "prompts": ["Q: Which capital city is in France? A:"], "gold": ["Paris"]}}


def toy_index():
    return {drop: G.build_doc_index(TOY_DOCS, 5, drop_stopwords=drop, weights=[3, 1, 1])
            for drop in (True, False)}


def ladder3(families=("wide", "deep", "wide"), tokens=(100, 50, 100)):
    return pd.DataFrame({"model": ["a", "b", "c"], "family": list(families), "params": [10, 20, 30],
                         "tokens": list(tokens)})


def test_ladder_table_keeps_ladder_runs_smallest_first():
    runs = pd.DataFrame({"run": ["wide-32", "deep-16", "wide-16", "std-s1x"],
                         "family": ["ladder-wide", "ladder-deep", "ladder-wide", "standard"],
                         "params": [300, 250, 100, 100], "n_layer": [2, 6, 2, 2], "d_model": [32, 16, 16, 16],
                         "tokens": [10, 5, 10, 10]})
    t = D.ladder_table(runs)
    assert list(t["model"]) == ["wide-16", "deep-16", "wide-32"]
    assert list(t["family"]) == ["wide", "deep", "wide"]
    assert list(t.columns) == ["model", "family", "params", "layers", "width", "tokens"]
    assert list(D.ladder_table(runs, ["wide-32", "wide-16"])["model"]) == ["wide-16", "wide-32"]
    with pytest.raises(D.DistributionalError, match="std-s1x"):
        D.ladder_table(runs, ["std-s1x"])
    assert D.fmt_params(24_656) == "25K" and D.fmt_params(163_840) == "0.16M"
    assert D.fmt_params(4_070_000) == "4.1M"
    assert D.mem_name(3) == "Mem₃" and D.mem_name("∞") == "Mem∞"


def test_task_gram_tables_count_and_filter_by_hand():
    # 2-grams without stopwords: (capital, city), (city, France), (France, ?) against (Paris,);
    # C(capital city) = 3 + 1, C(city France) = 3, both co-occur with Paris only in the 3-copy document
    g = D.task_gram_tables(TOY_TASKS, (2,), toy_index(), cosines=lambda t: np.array([0.9, 0.5, 0.8]))
    table = g.tables[("knowledge", 2)]
    assert [x for x in table["x"]] == [("capital", "city"), ("city", "France")]
    assert list(table["c_x"]) == [4, 3] and list(table["c_xy"]) == [3, 3]
    assert list(table["p_taskgram"]) == [0.75, 1.0] and list(table["cosine"]) == [0.9, 0.5]
    f = g.filters.set_index("label")
    # the chapter's 2-gram γ is 0.80 (strict): only 0.9 passes; the authors' 0.002 keeps all three
    assert f.loc[D.PAPER_FILTER, ["pairs", "co-occurring"]].tolist() == [1, 1]
    assert f.loc[D.AUTHORS_FILTER, ["pairs", "co-occurring"]].tolist() == [3, 2]
    assert f.loc[D.NONE_FILTER, ["pairs", "co-occurring"]].tolist() == [3, 2]
    assert D.filter_counts(g.filters, "knowledge", 2) == {"total": 3, "paper": 1, "authors": 3, "paper_co": 1,
                                                          "none_co": 2}
    # a (task, n) whose candidates never co-occur has no table but keeps its filter rows
    rome = {"knowledge": {**TOY_TASKS["knowledge"], "outputs": ["Rome"]}}
    none = D.task_gram_tables(rome, (2,), toy_index(), cosines=lambda t: np.full(len(t), 0.9))
    assert none.tables == {} and none.filters["co-occurring"].tolist() == [0, 0, 0]


def test_filter_verdicts_say_what_the_thresholds_do():
    every = {"total": 200, "paper": 10, "authors": 200, "paper_co": 4, "none_co": 150}
    assert D.filter_verdict(every, "the toy's 3-grams") == (
        "That threshold keeps every one of the 200 candidates of the toy's 3-grams, a filter in name only; "
        "the paper's stated threshold keeps 10 (5.0%): most input and output n-grams are not similar in "
        "MiniLM's embedding space. Of the pairs that co-occur in the corpus, 4 survive the paper's threshold "
        "and 150 are kept without a filter.")
    some = {"total": 200, "paper": 150, "authors": 120, "paper_co": 100, "none_co": 150}
    assert D.filter_verdict(some, "x").startswith(
        "That threshold keeps 120 of the 200 candidates of x (60.0%); the paper's stated threshold keeps "
        "most of them, 150 (75.0%).")
    assert D.authors_filter_verdict(every).endswith("ran without an effective filter, and the chapter's main "
                                                    "numbers follow the code.")
    assert "did filter" in D.authors_filter_verdict(some)


class AnswerToy(Model):
    """Answers "Paris" to every prompt, and fails the prompts that contain "fail"."""

    backend = "toy"

    def _generate(self, requests):
        for i, r in enumerate(requests):
            yield i, Answer(None, error="boom") if "fail" in r.prompt else Answer(" Paris. Then")

    def _logprobs(self, contexts, continuations):
        yield from ()


def test_generate_and_score_answers(tmp_path):
    tasks = {"knowledge": {"prompts": ["q1", "fail q2", "q3"], "gold": ["Paris", "Paris", "Rome"]},
             "reasoning": {"prompts": ["r1"], "gold": [3]}}
    model = AnswerToy("toy", cache=QueryCache(tmp_path / "q.sqlite"))
    answers = D.generate_answers({"m": model}, tasks, reasoning_tokens=4)
    assert answers[["task", "instance"]].values.tolist() == [
        ["knowledge", 0], ["knowledge", 1], ["knowledge", 2], ["reasoning", 0]]
    assert answers["answer"].tolist() == [" Paris. Then", None, " Paris. Then", " Paris. Then"]
    scored = D.score_answers(answers, tasks)
    # right, error (NaN, never wrong), wrong answer, no number at all
    assert scored["correct"].tolist()[0] == 1.0 and np.isnan(scored["correct"].iloc[1])
    assert scored["correct"].tolist()[2:] == [0.0, 0.0]
    acc = D.accuracy_table(scored, pd.DataFrame({"model": ["m"], "params": [7]}))
    # the error leaves the denominator: 1 right of 2 answered
    assert acc.iloc[0].tolist() == ["m", 7, 0.5, 0.0]


def _scored(rows):
    return pd.DataFrame(rows, columns=["model", "task", "instance", "correct"])


def test_count_bins_and_performance_table():
    edges, labels = D.count_bins([0, 1, 2, 3, 4, 5, 6, 7], n_bins=2)
    assert edges.tolist() == [0.0, 3.5, 7.0] and labels == ["0–3", "3–7"]
    edges, labels = D.count_bins([5, 5, 5])
    assert edges.tolist() == [5.0, 6.0] and labels == ["5–6"]
    scored = _scored([("a", "knowledge", i, c) for i, c in enumerate([1, 0, np.nan, 1])]
                     + [("a", "reasoning", 0, 1)])
    ladder = pd.DataFrame({"model": ["a"], "params": [5]})
    perf = D.performance_table(scored, [0, 1, 10, 20], ladder, n_bins=2)
    # edges at the quantiles 0, 5.5, 20: bin one holds instances 0 and 1, bin two 3 (instance 2 is an error)
    assert perf["bin"].tolist() == ["0–5", "5–20"]
    assert perf["n"].tolist() == [2, 1] and perf["accuracy"].tolist() == [0.5, 1.0]


def test_accuracy_by_copies_bins_and_counts():
    bins = D.copies_bins([1, 3, 4, 20, 300])
    assert list(bins.astype(str)) == ["1", "2–4", "2–4", "17–64", "65–300"]
    scored = _scored([("a", "knowledge", 0, 1), ("a", "knowledge", 1, 0), ("a", "knowledge", 2, 1),
                      ("b", "knowledge", 0, 0), ("b", "knowledge", 1, 1), ("b", "knowledge", 2, np.nan)])
    table = D.accuracy_by_copies(scored, [1, 3, 4], pd.DataFrame({"model": ["a", "b"], "params": [1, 2]}))
    assert list(table.columns) == ["params", "1", "2–4"]
    assert table.loc["a"].tolist() == [1, 1.0, 0.5] and table.loc["b"].tolist() == [2, 0.0, 1.0]
    assert D.facts_per_copies_bin([1, 3, 4]).to_dict() == {"1": 1, "2–4": 2}


def test_size_trend_and_its_words():
    assert D.size_trend([1, 2, 3], [0.1, 0.2, 0.3]) == pytest.approx(1.0)
    assert np.isnan(D.size_trend([1, 2], [0.1, 0.2])) and np.isnan(D.size_trend([1, 2, 3], [0, 0, 0]))
    assert D.trend_words(0.5) == "rises with size" and D.trend_words(-0.8) == "falls with size"
    assert D.trend_words(0.4) == "shows no monotone trend with size"
    assert D.trend_words(np.nan) == "has no defined trend with size"


def test_accuracy_sentence():
    acc = pd.DataFrame({"model": ["a", "b", "c"], "params": [1, 2, 3], "knowledge accuracy": [0.1, 0.2, 0.4],
                        "reasoning accuracy": [0.0, 0.05, 0.0]})
    assert D.accuracy_sentence(acc) == (
        "The largest model, c, answers 40.0% of the facts and the smallest, a, 10.0%; across the ladder "
        "knowledge accuracy rises with size (Spearman ρ with size +1.00). No model solves more than 5.0% of "
        "the new arithmetic problems.")
    flat = acc.assign(**{"knowledge accuracy": 0.0})
    assert "knowledge accuracy is the same for every model" in D.accuracy_sentence(flat)


def test_copies_verdict():
    by_copies = pd.DataFrame({"params": [10, 20, 30], "1": [0.0, 0.1, 0.0], "2–4": [0.2, 0.9, 0.5]},
                             index=["a", "b", "c"])
    assert D.copies_verdict(by_copies, ladder3()) == (
        "b recalls 90.0% of the facts seen 2–4 times and 10.0% of those seen once: as in the source, "
        "recall rises with the count. By family, on the most-copied facts: deep family at most 90.0%; "
        "wide family at most 50.0%; size alone does not order the ladder's recall (Spearman ρ +0.50); "
        "the families were trained on 50 tokens (deep) and 100 tokens (wide).")
    flat = by_copies.assign(**{"2–4": [0.0, 0.05, 0.1]}, **{"1": [0.2, 0.2, 0.2]})
    text = D.copies_verdict(flat, ladder3(tokens=(100, 100, 100)))
    assert "unlike the source, recall does not rise with the count" in text
    assert "recall on them rises with size across the whole ladder." in text and "trained on" not in text
    nothing = by_copies.assign(**{"2–4": 0.0})
    assert D.copies_verdict(nothing, ladder3()) == (
        "no model recalls any of the facts seen 2–4 times, and none more than 10.0% of any bin: the lab "
        "shows none of the source's rise of accuracy with the count.")


def _toy_mem_inputs():
    table = pd.DataFrame({"x": [("a",), ("b",), ("c",), ("d",)], "y": [("e",)] * 4,
                          "c_xy": [1, 2, 4, 8], "p_taskgram": [0.1, 0.2, 0.4, 1.0],
                          "cosine": [0.9, 0.1, 0.8, 0.95], "instance": [0, 0, 1, 1]})
    up, down = np.log([0.1, 0.2, 0.3, 0.4]), np.log([0.4, 0.3, 0.2, 0.1])
    lp = {"a": up, "b": down, "c": up}
    log_llm = {(m, "knowledge", 3): v for m, v in lp.items()}
    log_inf = {("knowledge", 3): np.log([0.5, 0.4, 0.3, 0.2])}
    return {("knowledge", 3): table}, log_llm, log_inf


def test_mem_table_by_hand():
    tables, log_llm, log_inf = _toy_mem_inputs()
    mem = D.mem_table(tables, log_llm, log_inf, ladder3())
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
    kd = D.kendall_table(tables, log_llm, ladder3()).set_index("model")
    assert kd.loc["a", "kendall"] == pytest.approx(0.0) and kd.loc["b", "kendall"] == pytest.approx(1.0)
    row = D.spearman_row([0.5, 0.5], [-1.0, -2.0])
    assert np.isnan(row["rho"]) and row["pairs"] == 2 and "at least 3 pairs" in row["note"]
    lms = D.corpus_lms(tables[("knowledge", 3)], log_inf[("knowledge", 3)])
    assert lms["pair count"].tolist() == [0.125, 0.25, 0.5, 1.0]


def test_pair_inputs_and_llm_table(tmp_path):
    table = pd.DataFrame({"instance": [0, 0], "x": [("capital",), ("city",)], "y": [("Paris",), ("France",)]})
    tasks = {"knowledge": {"prompts": ["Q:"], "outputs": ["Paris, France"]}}
    inputs = D.pair_inputs({("knowledge", 1): table}, tasks)
    # Paris starts the output: scored right after the prompt; France after "Q: Paris,"
    assert inputs[("knowledge", 1)] == (["Q:", "Q: Paris,"], ["Paris", "France"])
    model = BigramToy("toy", cache=QueryCache(tmp_path / "q.sqlite"))
    lp = D.llm_table({"m": model}, inputs)
    assert list(lp) == [("m", "knowledge", 1)]
    # " Paris" and " France": six and seven characters, none repeating the one before
    assert lp[("m", "knowledge", 1)] == pytest.approx([6 * math.log(0.25), 7 * math.log(0.25)])


def _mem(rows):
    """A mem table from (task, n, model, params, lm, rho, pvalue) rows, no filter."""
    t = pd.DataFrame(rows, columns=["task", "n", "model", "params", "lm", "rho", "pvalue"])
    return t.assign(filter="no filter")


def test_trend_and_mem_glue():
    mem = _mem([("knowledge", 3, m, p, lm, r, pv) for m, p, lm, r, pv in [
        ("c", 30, "task-gram", 0.30, 0.01), ("a", 10, "task-gram", 0.10, 0.20),
        ("b", 20, "task-gram", 0.20, 0.04), ("a", 10, "∞-gram", 0.05, 0.5), ("b", 20, "∞-gram", 0.25, 0.01),
        ("c", 30, "∞-gram", np.nan, np.nan), ("a", 10, "pair count", 0.5, 0.001),
        ("b", 20, "pair count", 0.4, 0.001), ("c", 30, "pair count", 0.3, 0.2)]])
    t = D.trend(mem, "knowledge", 3)
    assert t.rho.tolist() == [0.10, 0.20, 0.30]  # smallest model first
    assert (t.n_models, t.n_sig, t.lo, t.hi) == (3, 2, 0.10, 0.30)
    assert D.above_infgram(mem, "knowledge", 3) == (1, 3)  # a only; c's ∞-gram value is undefined
    glue = D.mem_glue(mem, ["knowledge"], [3, 5])
    assert {k: glue[k] for k in glue if k.startswith("knowledge_3")} == {
        "knowledge_3_range": "0.10 to 0.30", "knowledge_3_sig": "2 of 3", "knowledge_3_trend": "+1.00",
        "knowledge_3_above_inf": "1 of 3", "knowledge_3_count_range": "0.30 to 0.50",
        "knowledge_3_count_trend": "-1.00"}
    assert glue["knowledge_5_range"] == "not computed (no co-occurring pair)"
    assert glue["knowledge_5_sig"] == "0 of 0"
    assert D.mem_sentence(t, "knowledge", 3) == (
        "For the knowledge task, Mem₃ ranges from 0.10 to 0.30 and is significant for 2 of 3 models; its "
        "rank correlation with model size is +1.00, so it rises with size.")
    # no significant value: the ordering with size is not read as a trend
    none = D.Trend(t.params, t.rho, np.array([0.2, 0.3, 0.5]))
    assert D.mem_sentence(none, "knowledge", 3) == (
        "For the knowledge task, Mem₃ ranges from 0.10 to 0.30 and is significant for no model of 3, so "
        "there is no memorization trend to read (rank correlation with size +1.00).")
    assert D.mem_sentence(D.trend(mem, "knowledge", 5), "knowledge", 5) == (
        "For the knowledge task, Mem₅ is not computed (no co-occurring pair).")


def test_by_model_keeps_order_and_undefined_rows():
    mem = _mem([("reasoning", 3, "b", 2, "task-gram", 0.2, 0.1),
                ("reasoning", 3, "a", 1, "task-gram", 0.1, 0.1),
                ("knowledge", 3, "b", 2, "∞-gram", np.nan, np.nan),
                ("knowledge", 3, "a", 1, "∞-gram", np.nan, np.nan)])
    wide = D.by_model(mem, "rho", ["a", "b"])
    assert wide.index.tolist() == [("reasoning", 3, "task-gram"), ("knowledge", 3, "∞-gram")]
    assert wide.columns.tolist() == ["a", "b"] and wide.iloc[0].tolist() == [0.1, 0.2]
    assert wide.iloc[1].isna().all()
    assert D.by_model(mem, "rho", ["b"], index=("task",)).index.tolist() == ["reasoning", "knowledge"]


def test_undefined_correlations_are_named_with_their_reason():
    row = D.spearman_row([0.5, 0.5, 0.5, 0.5], [-1.0, -2.0, -3.0, -4.0])
    assert np.isnan(row["rho"]) and row["pairs"] == 4 and row["note"] == D.CONSTANT_NOTE
    mem = _mem([("knowledge", 5, m, p, "∞-gram", np.nan, np.nan) for m, p in (("a", 1), ("b", 2))]
               + [("knowledge", 5, m, p, "task-gram", 0.1, 0.5) for m, p in (("a", 1), ("b", 2))])
    mem["note"] = [D.CONSTANT_NOTE, D.CONSTANT_NOTE, "", ""]
    assert D.undefined_sentence(mem) == (
        "No model has a defined correlation for the ∞-gram LM on knowledge 5-grams (one side gives every "
        "pair the same value).")
    assert D.undefined_sentence(mem[mem["lm"] == "task-gram"]) == (
        "Every corpus LM gives a defined correlation for every model.")


def _trend(rho, pvalue, params=(10, 20, 30)):
    return D.Trend(np.asarray(params, float), np.asarray(rho, float), np.asarray(pvalue, float))


def test_ties_and_count_variant_sentences():
    assert D.tied_share(pd.DataFrame({"p_taskgram": [1.0, 1.0, 1.0, 0.5]})) == 0.75
    assert np.isnan(D.tied_share(None))
    near_zero = _trend([0.02, -0.05, 0.01], [0.5, 0.3, 0.9])
    text = D.ties_sentence(0.75, near_zero, "knowledge", 3)
    assert text.startswith("75.0% of the knowledge task's 3-gram test pairs have P(s^y | s^x) = 1")
    assert text.endswith("With most pairs tied, the rank correlation has little to order, and Mem₃ stays "
                         "near zero (|ρ| ≤ 0.05).")
    assert D.ties_sentence(0.75, _trend([0.3, 0.1, 0.2], [0.01] * 3), "k", 3).endswith(
        "; Mem₃ still reaches |ρ| = 0.30.")
    assert D.ties_sentence(0.2, near_zero, "k", 3).endswith(
        "Most pairs are not tied, so the conditional can order them.")
    follows = _trend([0.3, 0.4, 0.5], [0.01, 0.01, 0.2])
    assert D.count_variant_sentence(follows, "knowledge", 3).endswith(
        "the knowledge task's 3-gram correlation ranges from 0.30 to 0.50, significant for 2 of 3 models, "
        "with a rank correlation with size of +1.00: the models' probabilities follow the corpus frequency.")
    against = _trend([-0.3, -0.4, -0.5], [0.01, 0.01, 0.01])
    assert D.count_variant_sentence(against, "k", 3).endswith("run against the corpus frequency.")
    assert D.count_variant_sentence(near_zero, "k", 3).endswith(
        "no consistent relation to the corpus frequency across the ladder.")


def test_lm_verdict():
    rows = [(task, 3, m, p, lm, r, 0.01) for task in ("knowledge", "reasoning")
            for m, p in (("a", 10), ("b", 20)) for lm, r in (("task-gram", 0.2), ("∞-gram", 0.1))]
    mem = _mem(rows)
    assert D.lm_verdict(mem, ["knowledge", "reasoning"], 3) == (
        "The task-gram LM correlates at least as strongly as the ∞-gram LM for 2 of 2 models on knowledge "
        "3-grams and 2 of 2 models on reasoning 3-grams, as the source finds.")
    reverse = mem.assign(rho=np.where(mem["lm"] == "task-gram", 0.0, 0.5))
    assert D.lm_verdict(reverse, ["knowledge"], 3).endswith(
        "for 0 of 2 models on knowledge 3-grams, the reverse of the source's finding (the corpus's ∞-gram "
        "LM tracks the models' probabilities better).")
    mixed = mem.assign(rho=[0.2, 0.1, 0.0, 0.5] * 2)
    assert D.lm_verdict(mixed, ["knowledge"], 3).endswith("only partly as the source finds.")


def test_knowledge_and_reasoning_verdicts():
    rising = _trend([0.35, 0.38, 0.42], [0.001] * 3)
    assert D.knowledge_verdict(rising, 0.1, rising, 3) == (
        "The lab's knowledge Mem₃ (0.35 to 0.42) is significant for every model and rises with size: this "
        "part of the paper's pattern reproduces on the lab.")
    # four models, ranks of Mem (3, 1, 2, 4) against size: Spearman ρ = 1 - 6 · 6 / 60 = 0.4
    flat = _trend([0.01, -0.02, 0.0, 0.03], [0.6, 0.5, 0.9, 0.3], params=(10, 20, 30, 40))
    counts = _trend([0.3, 0.4, 0.5], [0.01, 0.01, 0.01])
    assert D.knowledge_verdict(flat, 0.9, counts, 3) == (
        "The lab's knowledge Mem₃ ranges from -0.02 to 0.03, significant for 0 of 4 models: this part of "
        "the paper's pattern does not reproduce on the lab, and the reason is the corpus, not the models: "
        "90.0% of the test pairs are tied, while the pair counts correlate significantly for 3 of 3 models.")
    assert D.knowledge_verdict(flat, 0.1, counts, 3).endswith("does not reproduce on the lab.")
    some = _trend([0.3, 0.2, 0.1], [0.01, 0.6, 0.7])
    assert D.knowledge_verdict(some, 0.1, counts, 3) == (
        "The lab's knowledge Mem₃ ranges from 0.10 to 0.30, significant for 1 of 3 models, and falls with "
        "size: this part of the paper's pattern does not reproduce on the lab.")
    assert D.reasoning_verdict(flat, 3) == (
        "As in the source, the lab's reasoning Mem₃ is significant for no model (values from -0.02 to "
        "0.03).")
    negative = _trend([-0.3, -0.2, 0.05], [0.01, 0.02, 0.7])
    assert D.reasoning_verdict(negative, 3) == (
        "Unlike the source, the lab's reasoning Mem₃ is significant for 2 of 3 models, with values from "
        "-0.30 to 0.05 (negative: the models' probabilities run against the co-occurrence conditional).")
    assert D.reasoning_verdict(_trend([-0.3, 0.2, 0.1], [0.01, 0.01, 0.5]), 3).endswith("(of both signs).")


def test_kendall_verdict():
    rising = _trend([0.51, 0.52, 0.54], [0.1, 0.1, 0.1])
    assert D.kendall_verdict(rising, 3) == (
        "On reasoning 3-grams the Kendall tau distance ranges from 0.51 to 0.54 and rises with size "
        "(Spearman ρ +1.00), as the source finds for GSM8K.")
    assert D.kendall_verdict(_trend([0.54, 0.52, 0.51], [0.1] * 3), 3).endswith(
        "falls with size (Spearman ρ -1.00), unlike the source's GSM8K distance, which rises with size.")
    kd = pd.DataFrame({"task": "reasoning", "n": 3, "model": ["b", "a"], "params": [20, 10],
                       "lm": "task-gram", "kendall": [0.6, 0.5], "pvalue": [0.1, 0.2]})
    assert D.trend(kd, "reasoning", 3, value="kendall").rho.tolist() == [0.5, 0.6]


def test_novelty_table_by_hand():
    # novelty 3-grams: the input's (capital, city, France) against the answer's whole word sequence
    # (Paris, Madrid), shorter than 3 words: no document holds both, so novelty is 1
    tasks = {"knowledge": {"inputs": ["capital city France"], "outputs": ["Paris"]}}
    answers = pd.DataFrame({"model": ["a", "b"], "task": "knowledge", "instance": 0,
                            "answer": pd.Series(["Paris Madrid", None], dtype=object)})
    ladder = pd.DataFrame({"model": ["a", "b"], "params": [1, 2]})
    nov = D.novelty_table(answers, tasks, toy_index(), ladder).set_index("model")
    assert nov.loc["a", "novelty"] == 1.0 and nov.loc["a", "pairs"] == 1
    # a failed request gives no pair: NaN novelty, 0 pairs
    assert np.isnan(nov.loc["b", "novelty"]) and nov.loc["b", "pairs"] == 0
    same = answers.assign(answer=["Paris", "Madrid"])
    nov = D.novelty_table(same, tasks, toy_index(), ladder).set_index("model")
    # (capital city France, Paris) co-occur in the first document; Madrid never with that 3-gram
    assert nov["novelty"].tolist() == [0.0, 1.0]


def test_sensitivity_table_and_verdict():
    tables, log_llm, _ = _toy_mem_inputs()
    sens = D.sensitivity_table(tables[("knowledge", 3)], log_llm, ladder3(), "knowledge", 3, (0.7, 0.92))
    assert sens["gamma"].unique().tolist() == ["γ = 0.7", "γ = 0.92", "no filter"]
    pairs = sens.groupby("gamma", sort=False)["pairs"].first().tolist()
    assert pairs == [3, 1, 4]  # cosines 0.9, 0.1, 0.8, 0.95
    assert sens.query("gamma == 'γ = 0.92'")["rho"].isna().all()
    # at 0.7 the models' ρ are +1, -1, +1 against sizes 10, 20, 30: Spearman 0, no monotone trend
    assert D.sensitivity_verdict(sens, 3) == (
        "At γ = 0.92 (1 pairs) fewer than three models have a defined Mem₃, too few for a trend, so the "
        "check cannot reproduce the paper's stability across thresholds; at γ = 0.7 it shows no monotone "
        "trend with size.")
    stable = pd.DataFrame({"gamma": ["γ = 0.7"] * 3 + ["γ = 0.8"] * 3, "model": list("abc") * 2,
                           "params": [1, 2, 3] * 2, "rho": [0.1, 0.2, 0.3, 0.0, 0.1, 0.4], "pairs": 9})
    assert D.sensitivity_verdict(stable, 3) == "Mem₃ rises with size at every threshold, as the paper finds."
    changed = stable.assign(rho=[0.1, 0.2, 0.3, 0.4, 0.1, 0.0])
    assert D.sensitivity_verdict(changed, 3) == (
        "Mem₃'s trend with size changes with the threshold (γ = 0.7: rises with size; γ = 0.8: falls with "
        "size), unlike the paper's.")


def test_significant_positive_counts_positive_significant_models_only():
    mem = pd.DataFrame({
        "task": ["knowledge"] * 5 + ["reasoning"], "n": [3, 3, 3, 3, 5, 3],
        "lm": ["task-gram", "task-gram", "task-gram", "∞-gram", "task-gram", "task-gram"],
        "filter": ["no filter"] * 6, "model": list("abcdef"),
        "rho": [0.4, -0.5, 0.3, 0.6, 0.7, 0.9], "pvalue": [0.01, 0.001, 0.2, 0.0, 0.0, 0.0]})
    # a: positive and significant; b: significant but negative; c: not significant;
    # d: another LM; e: another n; f: another task
    assert D.significant_positive(mem, "knowledge", 3) == 1
    assert D.significant_positive(mem, "knowledge", 3, lm="∞-gram") == 1
    assert D.significant_positive(mem, "knowledge", 3, alpha=0.5) == 2

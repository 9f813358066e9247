"""The distributional chapter's metrics, on toy inputs with hand-computed answers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, spearmanr

from analysis import distributional as D
from analysis.cache import QueryCache
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
    docs = {d.doc_id: d for d in corpus.documents}
    for row in know.itertuples():
        text = docs[row.doc_id].text
        # the prompt starts the training document and the answer follows it
        assert text.startswith(row.prompt)
        assert text[len(row.prompt):].strip().startswith(row.answer.removesuffix(".")[:10])
    assert (know["copies"] >= 1).all()
    reason = D.reasoning_task(corpus, 30, seed=0)
    corpus_questions = {d.meta["question"] for d in corpus.documents if d.kind == "reasoning"}
    assert len(reason) == 30 and reason["question"].is_unique
    assert not set(reason["question"]) & corpus_questions
    # the worked solution's final number is the answer
    assert all(D.final_number(s) == a for s, a in zip(reason["solution"], reason["answer"]))
    assert D.reasoning_task(corpus, 30, seed=0).equals(reason)
    with pytest.raises(D.DistributionalError, match="n must be a positive integer"):
        D.reasoning_task(corpus, 0)


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

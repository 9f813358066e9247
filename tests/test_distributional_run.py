"""The distributional chapter's contact with the lab and the models (analysis.distributional.run):
the two tasks built from a corpus, the chain-rule probabilities, answers, the API counts."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from analysis import ngrams as G
from analysis.core import data
from analysis.distributional.method import final_number
from analysis.distributional.method_tables import pair_inputs, score_answers
from analysis.distributional.params import DistributionalError
from analysis.distributional.run import (
    _answer_words,
    count_pairs_api,
    generate_answers,
    knowledge_task,
    llm_table,
    ngram_logprob,
    reasoning_task,
    swapped_answers,
)
from analysis.lab import ladder, profiles
from analysis.lab.corpus import Document
from distributional_toys import AnswerToy, BigramToy


def test_chain_rule_sums_token_logprobs_in_context(cache):
    model = BigramToy("toy", cache=cache)
    lp = ngram_logprob(model, ["the cat", "sea "], ["tt", "ss"])
    # " tt" after "the cat": ' ' after 't' 1/4, 't' after ' ' 1/4, 't' after 't' 1/2
    assert lp[0] == pytest.approx(math.log(0.25 * 0.25 * 0.5))
    # "ss" after "sea ": no space added; 's' after ' ' 1/4, 's' after 's' 1/2
    assert lp[1] == pytest.approx(math.log(0.25 * 0.5))
    assert model.asked == [("the cat", " tt"), ("sea ", "ss")]
    # " ab" after "x": three characters at 1/4 each, summed in log space
    assert ngram_logprob(model, ["x"], ["ab"])[0] == pytest.approx(3 * math.log(0.25))
    with pytest.raises(DistributionalError, match="same length"):
        ngram_logprob(model, ["a"], [])
    with pytest.raises(DistributionalError, match="non-empty"):
        ngram_logprob(model, ["a"], [" "])


def test_pair_inputs_and_llm_table(cache):
    table = pd.DataFrame({"instance": [0, 0], "x": [("capital",), ("city",)], "y": [("Paris",), ("France",)]})
    tasks = {"knowledge": {"prompts": ["Q:"], "outputs": ["Paris, France"]}}
    inputs = pair_inputs({("knowledge", 1): table}, tasks)
    # Paris starts the output: scored right after the prompt; France after "Q: Paris,"
    assert inputs[("knowledge", 1)] == (["Q:", "Q: Paris,"], ["Paris", "France"])
    lp = llm_table({"m": BigramToy("toy", cache=cache)}, inputs)
    assert list(lp) == [("m", "knowledge", 1)]
    # " Paris" and " France": six and seven characters, none repeating the one before
    assert lp[("m", "knowledge", 1)] == pytest.approx([6 * math.log(0.25), 7 * math.log(0.25)])


def test_generate_answers_records_errors_as_none(cache):
    tasks = {"knowledge": {"prompts": ["q1", "fail q2", "q3"], "gold": ["Paris", "Paris", "Rome"]},
             "reasoning": {"prompts": ["r1"], "gold": [3]}}
    answers = generate_answers({"m": AnswerToy("toy", cache=cache)}, tasks, reasoning_tokens=4)
    assert answers[["task", "instance"]].values.tolist() == [
        ["knowledge", 0], ["knowledge", 1], ["knowledge", 2], ["reasoning", 0]]
    assert answers["answer"].tolist() == [" Paris. Then", None, " Paris. Then", " Paris. Then"]
    scored = score_answers(answers, tasks)
    assert np.isnan(scored["correct"].iloc[1]) and scored["correct"].tolist()[2:] == [0.0, 0.0]


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get(data.MIRROR_ENV),
                    reason=f"{data.MIRROR_ENV} is unset: the corpus needs the offline data mirror")
def test_lab_tasks_are_built_from_the_corpus():
    corpus = ladder.profile_corpus("smoke")
    know = knowledge_task(corpus)
    assert len(know) == profiles.get_profile("smoke").corpus.n_facts
    stream = "\n".join(d.text for d in corpus.documents)
    facts = [d for d in corpus.documents if d.kind == "knowledge" and d.meta["role"] == "fact"]
    for row in know.itertuples():
        # asked in the source's instruction; no training document holds the question
        assert row.prompt == f"Answer the following question: {row.question} Answer:"
        assert row.question not in stream and not row.overlap_8 and not row.overlap_14
        mine = [d for d in facts if d.meta["question_id"] == row.question_id]
        assert row.copies == sum(d.copies for d in mine) == mine[0].meta["fact_copies"]
        assert row.mentions == mine[0].meta["mentions"]
    # the never-trained controls have no copy; every other fact has one or more
    controls = know["copies"] == 0
    assert controls.sum() == profiles.get_profile("smoke").corpus.fact_controls
    assert (know.loc[~controls, "copies"] >= 1).all() and (know["mentions"] >= 0).all()
    reason = reasoning_task(corpus, 30, seed=0)
    corpus_questions = {d.meta["question"] for d in corpus.documents if d.kind == "reasoning"}
    assert len(reason) == 30 and reason["question"].is_unique
    assert not set(reason["question"]) & corpus_questions
    # the worked solution's final number is the answer
    assert all(final_number(s) == a for s, a in zip(reason["solution"], reason["answer"]))
    assert reasoning_task(corpus, 30, seed=0).equals(reason)
    with pytest.raises(DistributionalError, match="n must be a positive integer"):
        reasoning_task(corpus, 0)


def test_knowledge_task_by_hand():
    meta = {"question_id": 7, "question": "Who wrote Hamlet?", "answer": "Shakespeare", "role": "fact",
            "mentions": 1, "fact_copies": 5,
            "cloze": "In the quiz notes on wrote Hamlet, the answer given is"}
    mars = {"question_id": 8, "question": "Which planet is called red?", "answer": "Mars", "role": "fact",
            "mentions": 0, "fact_copies": 0,
            "cloze": "In the quiz notes on planet is called, the answer given is"}
    k = "knowledge"
    docs = [Document("k-0", k, "triviaqa", "Notes on wrote Hamlet: see Shakespeare.", 2, dict(meta)),
            Document("k-1", k, "triviaqa", "Shakespeare comes up with wrote Hamlet.", 3, dict(meta)),
            Document("m-0", k, "triviaqa", "In the quiz notes on planet is called, the answer given is Mars.",
                     0, dict(mars)),
            Document("s-0", k, "triviaqa", "A talk on wrote Hamlet.", 1, {**meta, "role": "subject"}),
            Document("l-0", k, "triviaqa", "Names: Mars; Shakespeare; Marseille.", 2, {"role": "list"}),
            Document("b-0", "background", "popular", "To be or not to be.", 1, {})]
    know = knowledge_task(SimpleNamespace(documents=docs))
    # Shakespeare: 2 + 3 fact copies and 2 list copies; Mars: the list only (its control fact
    # document has 0 copies, and "Marseille" is another word); the two answers swap
    assert know.to_dict("records") == [{
        "question_id": 7, "question": "Who wrote Hamlet?", "answer": "Shakespeare", "copies": 5,
        "mentions": 1, "prompt": "Answer the following question: Who wrote Hamlet? Answer:",
        "cloze": meta["cloze"], "overlap_8": False, "overlap_14": False, "prompt_overlap_8": False,
        "answer_count": 7, "swapped_answer": "Mars"}, {
        "question_id": 8, "question": "Which planet is called red?", "answer": "Mars", "copies": 0,
        "mentions": 0, "prompt": "Answer the following question: Which planet is called red? Answer:",
        "cloze": mars["cloze"], "overlap_8": False, "overlap_14": False, "prompt_overlap_8": False,
        "answer_count": 2, "swapped_answer": "Shakespeare"}]
    # a 3-word question is contaminated when a document holds all of it; a control never trains
    docs.append(Document("c-0", "phrase", "popular", "who wrote hamlet", 0, {}))
    assert not knowledge_task(SimpleNamespace(documents=docs))["overlap_8"].any()
    docs.append(Document("b-1", "background", "popular", "Asked: who wrote Hamlet? Bacon.", 1, {}))
    know = knowledge_task(SimpleNamespace(documents=docs))
    assert know["overlap_8"].tolist() == [True, False] and know["overlap_14"].tolist() == [True, False]
    with pytest.raises(DistributionalError, match="no knowledge documents"):
        knowledge_task(SimpleNamespace(documents=docs[5:]))


def test_swapped_answers_never_give_a_fact_its_own_answer():
    answers = ["Paris", "paris.", "Rome", "Oslo", "Rome"]
    swapped = swapped_answers(answers, seed=3)
    assert sorted(swapped) == sorted(answers)  # a permutation of the answers
    assert all(_answer_words(a) != _answer_words(b) for a, b in zip(answers, swapped))
    assert swapped_answers(answers, seed=3) == swapped
    with pytest.raises(DistributionalError, match="at least two distinct answers"):
        swapped_answers(["Paris", "PARIS"])


def test_count_pairs_api_with_recorded_responses(cache):
    fixture = Path(__file__).parent / "fixtures" / "infinigram_api.json"
    recorded = json.loads(fixture.read_text())["responses"]

    def post(payload):
        return next(r["response"] for r in recorded if r["request"] == payload)

    api = G.InfiniGramAPI(post=post, cache=cache)
    table = pd.DataFrame({"instance": [0], "x": [("capital", "of", "France")], "y": [("Paris",)]})
    out = count_pairs_api(table, api)
    assert out[["c_x", "c_xy"]].iloc[0].tolist() == [4800, 120]
    assert out["p_taskgram"].iloc[0] == pytest.approx(120 / 4800)

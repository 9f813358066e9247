"""The prompt optimization (the source's Table 1): template scores by hand on a toy
corpus, the search's length and decontamination rules, the control's derangement and
the paired accuracy gap."""

import numpy as np
import pandas as pd
import pytest

from analysis import ngrams as G
from analysis.distributional.params import DistributionalError
from analysis.distributional.prompt_opt import (
    GENERALIZATION,
    MEMORIZATION,
    arm_table,
    control_gold,
    optimize,
    prompt_gap,
    template_score,
    templates,
    word_count,
)

DOCS = ["the quiz card read well", "the quiz night", "a quiz card", "nothing else here"]


@pytest.fixture(scope="module")
def index():
    return G.build_doc_index(DOCS, max_n=3, drop_stopwords=False, weights=[2, 5, 1, 1])


def test_templates_grid_and_empty_cue():
    assert templates(["Answer:", "Say:"], ["Now", ""]) == [
        "Answer: {question} Now", "Answer: {question}", "Say: {question} Now", "Say: {question}"]


def test_word_count_skips_punctuation_and_the_question():
    assert word_count("Answer the following question: {question} Answer:") == 5
    assert word_count("Read the quiz card: {question}") == 4


def test_template_score_by_hand(index):
    # own words: "quiz card :" -> 1-grams quiz (2+5+1=8), card (2+1=3), ":" (0);
    # 2-grams "quiz card" (3), "card :" (0); 3-gram "quiz card :" (0); the question's words never count
    want = np.mean(np.log10(1 + np.array([8, 3, 0, 3, 0, 0])))
    assert template_score("quiz card: {question}", index) == pytest.approx(want)
    # words after the question are scored as their own part, never joined across it
    want2 = np.mean(np.log10(1 + np.array([8, 3])))
    assert template_score("quiz {question} card", index) == pytest.approx(want2)


def test_optimize_picks_extremes_of_equal_length_and_skips_contaminated(index):
    cands = ["quiz card: {question}", "zebra yak: {question}", "the quiz: {question}",
             "one two three: {question}"]
    # "the quiz:" scores highest (the 7, quiz 8, "the quiz" 7), but its prompt repeats a document's
    # eight words in a row, so the search skips it
    docs = DOCS + ["the quiz : q1 is here now and then more"]
    out = optimize(cands, ["q1 is here now and then more"], index, docs, base="xx yy: {question}")
    # three-word candidates are dropped (base has two words); "the quiz: q1 ..." is contaminated
    scores = out["scores"].set_index("template")
    assert "one two three: {question}" not in scores.index
    assert bool(scores.loc["the quiz: {question}", "contaminated"])
    assert not scores.loc["quiz card: {question}", "contaminated"]
    assert out[MEMORIZATION] == "quiz card: {question}"
    assert out[GENERALIZATION] == "zebra yak: {question}"


def test_optimize_needs_two_candidates_of_the_base_length(index):
    with pytest.raises(DistributionalError, match="fewer than two"):
        optimize(["a b c: {question}", "x: {question}"], ["q"], index, DOCS, base="p q: {question}")


def test_control_gold_is_a_derangement_by_value():
    gold = ["a", "b", "a", "c", "d"]
    ctrl = control_gold(gold, seed=3)
    assert sorted(ctrl) == sorted(gold)
    assert all(c != g for c, g in zip(ctrl, gold))
    assert ctrl == control_gold(gold, seed=3)


def test_prompt_gap_mean_over_models_and_per_model_table():
    rows = []
    # model A: memorization 3/4, generalization 1/4 -> +0.5; model B: 1/4 vs 1/4 -> 0
    for m, mem, gen in (("A", [1, 1, 1, 0], [1, 0, 0, 0]), ("B", [0, 0, 1, 0], [0, 1, 0, 0])):
        for i, (x, y) in enumerate(zip(mem, gen)):
            rows.append((m, i, x, y))
    t = pd.DataFrame(rows, columns=["model", "instance", MEMORIZATION, GENERALIZATION])
    est, table = prompt_gap(t, n_boot=500)
    assert est.value == pytest.approx(0.25)
    assert table.set_index("model")["difference"].to_dict() == pytest.approx({"A": 0.5, "B": 0.0})
    assert est.n_units == 4 and est.n == 8
    assert est.lo <= 0.25 <= est.hi


def test_arm_table_drops_an_error_in_either_arm():
    a = pd.DataFrame({"model": ["m", "m"], "instance": [0, 1], "correct": [1.0, np.nan]})
    b = pd.DataFrame({"model": ["m", "m"], "instance": [0, 1], "correct": [0.0, 1.0]})
    paired = arm_table({MEMORIZATION: a, GENERALIZATION: b})
    assert paired[["instance", MEMORIZATION, GENERALIZATION]].values.tolist() == [[0, 1.0, 0.0]]


def _table(mem, gen):
    return pd.DataFrame({"model": ["A", "B"], MEMORIZATION: mem, GENERALIZATION: gen,
                         "difference": np.subtract(mem, gen)})


ARMS = {MEMORIZATION: "m {question}", GENERALIZATION: "g {question}"}


def test_prompt_opt_claim_directions_floor_and_control():
    from analysis.core.claims import INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTABLE, REPRODUCED
    from analysis.distributional.claims_causes import prompt_opt_claim
    from analysis.stats.result import Estimate

    up = Estimate(0.05, 0.01, 0.09, n=600, n_units=300)
    null_ctrl = Estimate(0.0, -0.02, 0.02, n=600, n_units=300)
    k = prompt_opt_claim("knowledge", up, null_ctrl, _table([0.2, 0.1], [0.1, 0.1]), ARMS, "templates")
    assert k.id == "prompt_opt_knowledge" and k.status == REPRODUCED and k.unit == "facts"
    assert k.extra["models_source_side"] == 1 and k.control_value == 0.0
    # reasoning's finding is the other side: memorization above generalization is against it
    r = prompt_opt_claim("reasoning", up, null_ctrl, _table([0.2, 0.1], [0.1, 0.1]), ARMS, "templates")
    assert r.status == NOT_REPRODUCED and r.unit == "problems"
    # a control that shows the same gap makes it the method's, not the phenomenon's
    k2 = prompt_opt_claim("knowledge", up, Estimate(0.04, 0.01, 0.07, n=600, n_units=300),
                          _table([0.2, 0.1], [0.1, 0.1]), ARMS, "templates")
    assert k2.status == INCONCLUSIVE and k2.mechanical
    # every model at 0% in both arms: the floor, not a null result
    z = prompt_opt_claim("knowledge", Estimate(0.0, 0.0, 0.0, n=600, n_units=300), null_ctrl,
                         _table([0.0, 0.0], [0.0, 0.0]), ARMS, "templates")
    assert z.status == NOT_TESTABLE


def test_template_grams_leave_out_the_question_alone():
    from analysis.distributional.prompt_opt import template_grams

    # 2 template words + 8 question words: the question's own 8-gram is left out (the chapter
    # checks the question on its own); the two n-grams that hold a template word are kept
    grams = template_grams("Say this: {question}", "a b c d e f g h")
    assert grams == {("say", "this", "a", "b", "c", "d", "e", "f"),
                     ("this", "a", "b", "c", "d", "e", "f", "g")}
    # a prompt shorter than n words is its one n-gram
    assert template_grams("Say: {question} Now", "a b") == {("say", "a", "b", "now")}


def test_optimize_ignores_a_question_that_is_contaminated_on_its_own(index):
    # the question repeats a document's eight words, but no template word joins them: nothing skipped
    docs = DOCS + ["q1 is here now and then more more"]
    out = optimize(["quiz card: {question}", "zebra yak: {question}"], ["q1 is here now and then more more"],
                   index, docs, base="xx yy: {question}")
    assert not out["scores"]["contaminated"].any()


def test_influence_claim_reads_its_answers_swapped_control():
    from analysis.core.claims import INCONCLUSIVE, REPRODUCED
    from analysis.distributional.claims_causes import influence_claim
    from analysis.stats.result import Estimate

    gap = Estimate(0.3, 0.1, 0.5, n=400, n_units=20)
    quiet = influence_claim(gap, "wide-64", 4, 50, control=Estimate(-0.05, -0.2, 0.1, n=400, n_units=20))
    assert quiet.status == REPRODUCED and quiet.control_value == -0.05
    assert (quiet.extra["control_lo"], quiet.extra["control_hi"]) == (-0.2, 0.1)
    # the same gap on the swapped test examples: the documents' shared words, not the pair
    loud = influence_claim(gap, "wide-64", 4, 50, control=Estimate(0.25, 0.05, 0.45, n=400, n_units=20))
    assert loud.status == INCONCLUSIVE and loud.mechanical
    none = influence_claim(gap, "wide-64", 4, 50)
    assert none.status == REPRODUCED and none.control_value is None and "not run" in none.control_reason

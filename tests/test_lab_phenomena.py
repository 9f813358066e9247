"""The lab page's table of phenomena (analysis.book.phenomena): every number by hand
on small tables, and the whole table on the smoke lab (slow; needs the data mirror)."""

from __future__ import annotations

import os
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from analysis.book import phenomena as phen
from analysis.core.claims import DOES_NOT_HOLD, HOLDS, NOT_TESTABLE
from analysis.distributional.method import tied_share
from analysis.distributional.run import doc_index, knowledge_pairs, knowledge_task, task_gram_tables
from analysis.entropy.params import PROFILES
from analysis.lab import ladder, probe, profiles
from analysis.lab.corpus import Document
from analysis.phrases import params
from analysis.phrases.method_rates import rates_by_copies
from analysis.phrases.run import lab_phrases
from analysis.phrases.source import THRESHOLD


def losses_fixture() -> pd.DataFrame:
    # wide: both losses fall; deep: training falls, held-out rises
    return pd.DataFrame({
        "run": ["wide-16", "wide-32", "deep-16", "deep-24"],
        "family": ["ladder-wide", "ladder-wide", "ladder-deep", "ladder-deep"],
        "params": [20_000, 50_000, 30_000, 45_000],
        "train_loss": [3.0, 2.5, 3.1, 2.9], "heldout_loss": [3.5, 3.2, 3.4, 3.6]})


def test_ladder_check_counts_the_monotone_families():
    check = phen.ladder_check(losses_fixture(), profiles.get_profile("smoke"))
    assert check.numbers == {"ladder_monotone_families": "1", "ladder_families": "2"}
    assert check.value == "both fall with every step in 1 of 2 families (deep: held-out loss does not)"
    assert check.signal == ("4 models in 2 families (wide, 2 layers; deep, 6 layers), 0.02M to 0.05M "
                            "parameters, each trained on 80,000 tokens at a learning rate set by its width")
    falling = losses_fixture().assign(heldout_loss=[3.5, 3.2, 3.4, 3.3])
    assert (phen.ladder_check(falling, profiles.get_profile("smoke")).value
            == "both fall with every step in 2 of 2 families")
    rising = losses_fixture().assign(train_loss=[3.0, 2.5, 3.1, 3.2])
    assert phen.ladder_check(rising, profiles.get_profile("smoke")).value.endswith(
        "(deep: training and held-out losses do not)")


def test_ladder_ends_and_chapter_settings():
    runs = pd.DataFrame({"run": ["wide-16", "wide-32", "deep-16", "std-s1x"],
                         "family": ["ladder-wide", "ladder-wide", "ladder-deep", "standard"],
                         "params": [20, 50, 30, 10]})
    assert phen.ladder_ends(runs) == ["wide-16", "wide-32"]
    assert phen.ladder_ends(runs.iloc[[2, 3]]) == ["deep-16"]
    assert phen.chapter_setting(params.PROFILES, "smoke", "lab_max_new_tokens") == 24
    assert phen.chapter_setting(params.PROFILES, "default", "lab_max_new_tokens") == 32
    with pytest.raises(ValueError, match="no chapter profile uses the lab profile 'huge'"):
        phen.chapter_setting(params.PROFILES, "huge", "lab_max_new_tokens")


def size_fixture() -> tuple[pd.DataFrame, pd.DataFrame]:
    manifest = pd.DataFrame({"doc_id": ["p1", "p2", "p3", "h1"], "kind": ["popular"] * 3 + ["heldout"],
                             "text_id": ["t1", "t2", "t3", "t1"], "copies": [2, 8, 20, 0],
                             "n_words": [200, 200, 200, 100]})
    rows = []
    # model a: t1 0.0 and 0.5 at two lengths (mean 0.25), t2 0.5, t3 1.0, story 0.1
    for model, accs, base in (("a", {"t1": (0.0, 0.5), "t2": (0.5, 0.5), "t3": (1.0, 1.0)}, 0.1),
                              ("b", {"t1": (0.5, 0.5), "t2": (0.5, 0.5), "t3": (0.5, 0.5)}, 0.2)):
        for text, (x, y) in accs.items():
            rows += [(model, text, "popular", 4, x), (model, text, "popular", 8, y)]
        rows += [(model, "s1", "baseline", 4, base), (model, "s1", "baseline", 8, base)]
    acc = pd.DataFrame(rows, columns=["model", "text_id", "group", "prefix_len", "acc"])
    return acc, manifest


def test_size_check_by_hand():
    acc, manifest = size_fixture()
    check = phen.size_check(acc, manifest)
    assert check.signal == "3 excerpts of 200 words at 2 to 20 copies"
    assert check.numbers == {"size_acc_gain_small": "+0.750", "size_acc_gain_large": "+0.000"}
    assert check.value == ("a: 0.250 at 1–4 copies, 1.000 at 17–64 (stories 0.100); "
                           "b: 0.500 at 1–4 copies, 0.500 at 17–64 (stories 0.200)")
    assert list(check.table["texts"]) == [1, 1, 1, 1, 1, 1]
    # the order of runs picks which is "small"
    assert phen.size_check(acc, manifest, runs=["b", "a"]).numbers["size_acc_gain_small"] == "+0.000"
    by_text = phen.accuracy_by_text(acc, manifest)
    a = by_text[by_text["model"] == "a"].set_index("text_id")
    assert a.loc["t1", "acc"] == 0.25 and a.loc["t3", "copies"] == 20 and np.isnan(a.loc["s1", "copies"])


def test_accuracy_figure_draws():
    from analysis.book import plots

    acc, manifest = size_fixture()
    fig = plots.lab_accuracy_by_copies(phen.accuracy_by_text(acc, manifest))
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and len(ax.get_legend().get_texts()) == 2


def test_distributional_check_by_hand():
    pairs = pd.DataFrame({"p_taskgram": [1.0, 1.0, 0.5, 0.25, 0.05], "c_xy": [3, 1, 2, 1, 10]})
    know = pd.DataFrame({"copies": [1, 5], "mentions": [0, 3]})
    check = phen.distributional_check(pairs, know)
    assert check.numbers == {"lab_p1_share": "40.0%", "lab_pairs": "5", "lab_cxy_min": "1",
                             "lab_cxy_median": "2", "lab_cxy_max": "10"}
    assert list(check.table["pairs"]) == [2, 1, 1, 1]
    assert check.value == "40.0% of 5 pairs have P = 1; C(x, y) from 1 to 10 (median 2)"
    assert check.signal == ("2 facts, a stretch of each question beside its answer in 1 to 5 documents and "
                            "without it in 0 to 3; no document holds a question")


def fact_corpus() -> SimpleNamespace:
    def fact(qid, question, answer, copies, mentions):
        return {"question_id": qid, "question": question, "answer": answer, "role": "fact",
                "mentions": mentions}

    q1, q2 = "Which famous playwright wrote tragic Hamlet", "Which river flows through ancient Rome city"
    docs = [Document("k-0", "knowledge", "triviaqa", f"{q1} ? William Shakespeare wrote it .", 2,
                     fact(1, q1, "William Shakespeare", 3, 1)),
            Document("k-1", "knowledge", "triviaqa", f"Answer : William Shakespeare . {q1} ?", 1,
                     fact(1, q1, "William Shakespeare", 3, 1)),
            Document("k-2", "knowledge", "triviaqa", f"{q2} ? The Tiber River .", 1,
                     fact(2, q2, "The Tiber River", 1, 0)),
            Document("q-0", "knowledge", "triviaqa", f"Quiz round : {q1} ?", 1,
                     {"role": "quiz", "question_ids": "[1]"}),
            Document("b-0", "background", "popular", "The famous playwright wrote many plays in London .", 1,
                     {})]
    return SimpleNamespace(documents=docs)


def test_knowledge_pairs_are_the_chapters_table_without_embeddings():
    corpus = fact_corpus()
    pairs = knowledge_pairs(corpus)
    # the chapter's table, with a stand-in for the embedding model's cosines
    know = knowledge_task(corpus)
    tasks = {"knowledge": {"inputs": list(know["question"]), "outputs": list(know["answer"])}}
    index = {drop: doc_index(corpus, 5, drop_stopwords=drop) for drop in (True, False)}
    chapter = task_gram_tables(tasks, [3], index, cosines=lambda cand: np.zeros(len(cand)))
    pd.testing.assert_frame_equal(pairs, chapter.tables[("knowledge", 3)].drop(columns="cosine"))
    # by hand: "famous playwright wrote" is in k-0 (2 copies), k-1, q-0 and b-0: C(x) = 5; with the
    # answer's 3-gram "william shakespeare" (the whole answer, shorter than n) only in k-0, k-1: 3
    row = pairs[pairs["x"] == ("famous", "playwright", "wrote")].iloc[0]
    assert (row["c_x"], row["c_xy"], row["p_taskgram"]) == (5, 3, 0.6)
    assert tied_share(pairs) == float((pairs["c_x"] == pairs["c_xy"]).mean())
    # the river question occurs only with its answer: every pair of fact 2 has P = 1
    assert (pairs.loc[pairs["instance"] == 1, "p_taskgram"] == 1).all()
    # a sample of max_pairs is the chapter's sample
    sample = knowledge_pairs(corpus, max_pairs=3, seed=1)
    chapter3 = task_gram_tables(tasks, [3], index, max_pairs=3, seed=1, cosines=lambda c: np.zeros(len(c)))
    pd.testing.assert_frame_equal(sample, chapter3.tables[("knowledge", 3)].drop(columns="cosine"))


def test_extraction_by_copies_by_hand():
    scores = pd.DataFrame({"run": ["A"] * 5 + ["B"] * 5, "seq_id": ["s0", "s1", "s2", "s3", "s4"] * 2,
                           "extract": [0, 0, 1, 0, 1, 0, 0, 1, 0, 1]})
    exposure = pd.DataFrame({"seq_id": ["s0", "s1", "s2", "s3", "s4"], "copies_seen": [0, 1, 4, 4, 16]})
    # run B inserted only two of them (a range run with max_copies lists only those)
    exposures = {"A": exposure, "B": exposure.iloc[[2, 4]]}
    table = phen.extraction_by_copies(scores, exposures)
    assert table.to_dict("list") == {"run": ["A", "A", "A", "A", "B", "B"], "copies": [0, 1, 4, 16, 4, 16],
                                     "sequences": [1, 1, 2, 1, 1, 1], "extracted": [0, 0, 1, 1, 1, 1],
                                     "share": [0.0, 0.0, 0.5, 1.0, 1.0, 1.0]}
    injections = pd.DataFrame({"seq_id": ["s0", "s1", "s2", "s3", "s4"],
                               "task": ["qa", "qa", "qa", "bio", "bio"],
                               "copies": [0, 1, 4, 4, 16], "n_words": [12] * 5})
    check = phen.predicting_check(table, injections)
    assert check.numbers == {"extract_top_copies": "16", "extract_top_lo": "100%", "extract_top_hi": "100%",
                             "extract_lowest_level": "4", "extract_lowest_text": "4 copies",
                             "extract_partial_cells": "1 of 5",
                             "extract_controls": "0 of 1"}
    assert check.value == ("100% extracted at 16 copies across 2 runs; first extracted at 4 copies; "
                           "1 of 5 run × level cells partly extracted; controls extracted: 0 of 1")
    assert check.signal == "5 sequences of 12 words in 2 tasks at 0/1/4/16 copies, inserted by 2 runs"
    none = phen.predicting_check(table.assign(extracted=0, share=0.0), injections)
    assert none.numbers["extract_lowest_level"] == "none" and "no inserted sequence extracted" in none.value


def test_cut_words_keeps_the_first_words_in_order():
    assert phen.cut_words(["a b c", "d e", "f"], 4) == ["a b c", "d"]
    assert phen.cut_words(["a b c", "d e"], 3) == ["a b c"]
    assert phen.cut_words(["a b"], 10) == ["a b"]


def test_membership_sets_and_entropy_check_by_hand():
    def doc(i, kind, words, source="popular"):
        return Document(f"{kind}-{i}", kind, source, " ".join(["w"] * words), 1, {})

    corpus = SimpleNamespace(
        documents=[doc(0, "background", 10), doc(1, "background", 20), doc(2, "background", 30),
                   doc(0, "popular", 5), doc(1, "popular", 7), doc(0, "knowledge", 3)],
        heldout=[doc(0, "heldout", 4, "popular"), doc(1, "heldout", 6, "baseline")])
    sets = phen.membership_sets(corpus)
    # background A (docs 0 and 2), B (doc 1), the excerpts, the held-out windows, the stories
    assert list(sets["documents"]) == [2, 1, 2, 1, 1]
    assert list(sets["words"]) == [40, 20, 12, 4, 6]
    assert list(sets["truth"]) == ["member"] * 3 + ["non-member"] * 2
    # the chapter's options pass through: the excerpts in two bands by copies
    assert list(phen.membership_sets(corpus, popular_sets=2)["documents"]) == [2, 1, 1, 1, 1, 1]
    check = phen.entropy_check(sets)
    assert check.numbers == {"members_docs": "5", "nonmembers_docs": "2"}
    assert check.signal == ("members: 5 training documents in 3 sets (72 words); non-members: 2 held-out "
                            "documents in 2 sets (10 words), never overlapping")
    with_loss = phen.entropy_check(sets.assign(loss=[2.0, 2.5, 1.5, 3.0, 2.4]), "pert-l2x")
    assert with_loss.numbers["member_loss"] == "2.00" and with_loss.numbers["nonmember_loss"] == "2.70"
    assert with_loss.value.endswith("pert-l2x's loss 2.00 on members against 2.70 nats/token on non-members "
                                    "(mean over sets), not every member set below every non-member set")
    apart = phen.entropy_check(sets.assign(loss=[2.0, 2.3, 1.5, 3.0, 2.4]), "pert-l2x")
    assert "every member set below every non-member set" in apart.value and "not every" not in apart.value


def test_the_membership_claim_decides_by_the_sets_loss_auc():
    sets = pd.DataFrame({"set": list("abcde"), "truth": ["member"] * 3 + ["non-member"] * 2,
                         "documents": 1, "words": 10})
    # members 2.0, 2.5, 1.5 against non-members 3.0, 2.4: 5 of the 6 pairs ordered (2.5 > 2.4)
    mixed = phen.entropy_check(sets.assign(loss=[2.0, 2.5, 1.5, 3.0, 2.4]), "pert-l2x").claims[0]
    assert (mixed.id, mixed.status, mixed.n) == ("lab_member_loss_below", DOES_NOT_HOLD, 5)
    assert mixed.value == pytest.approx(5 / 6) and mixed.by_design and mixed.kind == "extension"
    assert (mixed.unit, mixed.n_units) == ("candidate sets", 5)
    assert "training documents" in mixed.by_design_reason
    # every member set below every non-member set: AUC 1
    apart = phen.entropy_check(sets.assign(loss=[2.0, 2.3, 1.5, 3.0, 2.4]), "pert-l2x").claims[0]
    assert (apart.status, apart.value, apart.section) == (HOLDS, 1.0, "lab-phenomena")
    # a tie is not below
    tied = phen.membership_claim(sets.assign(loss=[2.0, 2.4, 1.5, 3.0, 2.4]))
    assert tied.status == DOES_NOT_HOLD and tied.value == pytest.approx(5.5 / 6)
    # no losses, or no non-member set: nothing to decide
    assert phen.entropy_check(sets).claims[0].status == NOT_TESTABLE
    members_only = sets.iloc[:3].assign(loss=[1.0, 2.0, 3.0])
    assert phen.membership_claim(members_only).status == NOT_TESTABLE


def test_the_ladder_claim_needs_every_family():
    one_of_two = phen.ladder_check(losses_fixture(), profiles.get_profile("smoke")).claims[0]
    assert (one_of_two.id, one_of_two.status, one_of_two.value, one_of_two.n) == (
        "lab_ladder_losses_fall", DOES_NOT_HOLD, 0.5, 2)
    assert not one_of_two.by_design and (one_of_two.unit, one_of_two.n_units) == ("families", 2)
    assert phen.ladder_claim(2, 2).status == HOLDS and phen.ladder_claim(2, 2).value == 1.0
    assert phen.ladder_claim(0, 0).status == NOT_TESTABLE


def test_claims_gather_in_order_and_render():
    acc, manifest = size_fixture()
    checks = [phen.ladder_check(losses_fixture(), profiles.get_profile("smoke")),
              phen.size_check(acc, manifest)]
    assert [c.id for c in phen.claims(checks)] == ["lab_ladder_losses_fall"]  # the size row only measures
    assert phen.render(phen.ladder_claim(2, 2)) == (
        "Training and held-out loss fall with every step up in parameters, in every ladder family. "
        "**Holds**: both fall in 2 of 2 families; |1 − 1| = 0 ≤ 0, 2 families.")


def test_phrases_check_by_hand():
    words = " ".join(f"w{i}" for i in range(20))
    phrases = pd.DataFrame({"id": [f"p{i}" for i in range(8)], "copies": [0, 0, 1, 1, 4, 4, 4, 4],
                            "phrase": [words] * 8})
    # s matches one of the four 4-copy phrases; l three of them and one control
    matched = {"s": {"p4"}, "l": {"p0", "p4", "p5", "p6"}}
    scored = pd.DataFrame([{"model": m, "phrase_id": p, "excluded": False, "matched": p in matched[m]}
                           for m in ("s", "l") for p in phrases["id"]])
    rates = rates_by_copies(scored, phrases, pd.DataFrame({"model": ["s", "l"], "params": [10, 20]}))
    check = phen.phrases_check(rates, phrases)
    assert check.numbers == {"phrase_top_copies": "4", "phrase_rate_top_small": "25%",
                             "phrase_rate_top_large": "75%", "phrase_controls_matched": "1 of 4"}
    assert check.value == ("s: 25% at 4 copies (1 of 4), controls 0%; "
                           "l: 75% at 4 copies (3 of 4), controls 50%")
    assert check.signal == "8 phrases of 20 words at 0/1/4 copies (2 to 4 per level; 0 = never trained)"
    empty = phen.phrases_check(rates.iloc[:0], phrases.iloc[:0])
    assert empty.signal == "no phrase documents" and empty.numbers == {}


def test_the_table_has_one_row_per_chapter_in_order():
    acc, manifest = size_fixture()
    checks = [phen.size_check(acc, manifest),
              phen.ladder_check(losses_fixture(), profiles.get_profile("smoke"))]
    table = phen.phenomena_table(checks)
    assert list(table["chapter"]) == ["lab", "size"]
    assert list(table.columns) == ["chapter", "signal built in", "check", "measured"]
    values = phen.glue_values(checks)
    assert values["ladder_monotone_families"] == "1"
    assert values["phenomenon_size"] == checks[0].value


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("MEMBOOK_DATA_MIRROR"), reason="MEMBOOK_DATA_MIRROR is unset")
def test_the_smoke_lab_table_of_phenomena(smoke_lab, shared_artifacts):
    lab = ladder.build_lab("smoke", progress=False)  # the run's smoke lab: trained once, loaded here
    runs = lab.runs_table()
    ends = phen.ladder_ends(runs)
    ladder_runs = runs.loc[runs["family"].str.startswith("ladder"), "run"]
    losses = probe.loss_comparison(lab, ladder_runs, 8)
    manifest = lab.corpus.manifest()
    acc = phen.popular_accuracy(lab, ends, prefix_lens=(4, 8), n=2)
    pairs = knowledge_pairs(lab.corpus)
    scores = phen.extraction_scores(lab)
    exposures = {r: lab.results[r].exposure for r in phen.injected_runs(lab)}
    entropy_run = phen.chapter_setting(PROFILES, "smoke", "lab_model")
    sets = phen.membership_losses(lab, entropy_run, 4)
    rates = phen.phrase_rates(lab, ends, 8, THRESHOLD)
    checks = [phen.ladder_check(losses, lab.profile), phen.size_check(acc, manifest, ends),
              phen.distributional_check(pairs, knowledge_task(lab.corpus)),
              phen.predicting_check(phen.extraction_by_copies(scores, exposures),
                                    lab.corpus.injection_table()),
              phen.entropy_check(sets, entropy_run), phen.phrases_check(rates, lab_phrases(lab.corpus))]
    table = phen.phenomena_table(checks)
    values = phen.glue_values(checks)
    assert list(table["chapter"]) == list(phen.CHAPTERS)
    # the rows that decide carry their claims, and the sentence reads the decision
    assert [c.id for c in phen.claims(checks)] == ["lab_ladder_losses_fall", "lab_member_loss_below"]
    member = checks[4].claims[0]
    assert member.n == len(sets) and ("not every" in values["phenomenon_entropy"]) == (
        member.status != HOLDS)
    assert table["measured"].str.len().gt(0).all()
    cfg = lab.profile.corpus
    # the signals are the smoke corpus's
    assert f"at {cfg.popular_copies} to {cfg.popular_max_copies} copies" in table.loc[1, "signal built in"]
    assert table.loc[0, "signal built in"].startswith(f"{len(ladder_runs)} models in 2 families")
    assert values["ladder_monotone_families"] == str(int(probe.monotone_families(losses)["monotone"].sum()))
    # the size check probed the two ends of the ladder, on every popular text
    assert list(dict.fromkeys(acc["model"])) == ends
    assert checks[1].table["texts"].sum() == 2 * (manifest["kind"] == "popular").sum()
    # every injected run's every inserted sequence is tabulated once
    pred = checks[3].table
    assert pred.groupby("run")["sequences"].sum().to_dict() == {r: len(e) for r, e in exposures.items()}
    assert values["lab_pairs"] == f"{len(pairs):,}"
    members = sum(d.kind in ("background", "popular") for d in lab.corpus.documents)
    assert values["members_docs"] == f"{members:,}"
    assert values["nonmembers_docs"] == f"{len(lab.corpus.heldout):,}"
    phrases = lab_phrases(lab.corpus)
    assert rates.groupby("model")["phrases"].sum().to_dict() == {r: len(phrases) for r in ends}


def test_control_contrast_and_its_sentence_by_hand():
    nll = pd.DataFrame({
        "model": ["p", "p", "p", "s", "s", "s", "p", "s"],
        "task": ["bio", "bio", "code", "bio", "bio", "code", "bio", "bio"],
        "copies": [0, 0, 0, 0, 0, 0, 16, 16],
        "suffix_nll": [1.0, 2.0, 3.0, 4.0, 4.0, 2.5, 0.1, 4.0]})
    table = phen.control_contrast(nll, "p", "s")
    # bio controls: 1.5 (perturbed) against 4.0; code: 3.0 against 2.5 (harder for the perturbed run)
    assert table.to_dict("list") == {"task": ["bio", "code"], "perturbed": [1.5, 3.0], "standard": [4.0, 2.5],
                                     "easier": [2.5, -0.5]}
    text = phen.control_sentence(table)
    assert text.startswith("The never-inserted controls of 1 of 2 tasks are easier")
    assert "bio (1.50 against 4.00" in text
    assert phen.control_sentence(table[table["task"] == "code"]).startswith("No task's")


def test_neighbour_gaps_by_hand():
    losses = pd.DataFrame({"run": ["a1", "a2", "a3", "b1", "b2"], "family": ["a", "a", "a", "b", "b"],
                           "params": [1, 2, 3, 1, 2], "heldout_loss": [5.0, 4.5, 4.45, 6.0, 5.0]})
    gaps = phen.neighbour_gaps(losses)
    assert gaps[["smaller", "larger"]].values.tolist() == [["a2", "a3"], ["a1", "a2"], ["b1", "b2"]]
    assert gaps["gap"].round(6).tolist() == [0.05, 0.5, 1.0]

"""Tests of analysis.lab.corpus: the lab corpus of known composition.

They need the offline data mirror and skip when ``MEMBOOK_DATA_MIRROR`` is
unset. A small configuration keeps each build to a second or two (the shingle
index of the texts is built once per process).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from analysis.core import data
from analysis.lab import corpus as lab_corpus
from analysis.lab.config import CorpusConfig, LabConfigError
from analysis.lab.corpus import MAX_CHARS_PER_WORD, SHINGLE_WORDS, build_corpus
from analysis.lab.corpus import facts as lab_facts

pytestmark = pytest.mark.skipif(
    not os.environ.get(data.MIRROR_ENV),
    reason=f"{data.MIRROR_ENV} is unset: point it at the offline data mirror",
)

SMALL = CorpusConfig(
    seed=3, background_words=20_000, popular_excerpt_words=400, popular_copies=3, heldout_words_per_text=200,
    n_facts=200, n_problems=60, per_task_per_level=2, duplicate_levels=(0, 1, 4, 16), injection_words=24,
)


@pytest.fixture(scope="module", autouse=True)
def isolated_cache(tmp_path_factory):
    """Read the mirror through a throw-away cache, never the repository's."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMBOOK_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.fixture(scope="module")
def small():
    return build_corpus(SMALL)


@pytest.fixture(scope="module")
def popular():
    return data.popular_texts()


def shingles(text: str) -> set[tuple[str, ...]]:
    words = text.split()
    return {tuple(words[i:i + SHINGLE_WORDS]) for i in range(len(words) - SHINGLE_WORDS + 1)}


def test_same_config_same_corpus(small):
    again = build_corpus(SMALL)
    pd.testing.assert_frame_equal(small.manifest(), again.manifest())
    pd.testing.assert_frame_equal(small.injection_table(), again.injection_table())
    assert small.training_texts() == again.training_texts()
    assert [d.text for d in small.heldout] == [d.text for d in again.heldout]
    assert small.fingerprint() == again.fingerprint()


def test_other_seed_other_windows(small):
    other = build_corpus(CorpusConfig(**{**SMALL.as_dict(), "seed": SMALL.seed + 1}))
    key = ["doc_id", "word_start"]
    mine = small.manifest().query("kind == 'popular'")[key].set_index("doc_id")["word_start"]
    theirs = other.manifest().query("kind == 'popular'")[key].set_index("doc_id")["word_start"]
    # Texts used whole (shrunk) have their windows pinned; every other one moves.
    assert (mine != theirs).sum() >= 30
    assert small.fingerprint() != other.fingerprint()
    assert small.injection_table()["text"].tolist() != other.injection_table()["text"].tolist()


def test_fingerprint_follows_content(small):
    # A change to the building code that changes what is built must change the key
    # of everything trained on it, whether or not CODE_VERSION was bumped.
    changed = dataclasses.replace(small, documents=[
        dataclasses.replace(small.documents[0], text=small.documents[0].text + " more"),
        *small.documents[1:]])
    assert changed.fingerprint() != small.fingerprint()
    fewer = dataclasses.replace(small, injections=small.injections[1:])
    assert fewer.fingerprint() != small.fingerprint()
    assert dataclasses.replace(small).fingerprint() == small.fingerprint()


def test_fingerprint_follows_config():
    assert lab_corpus.corpus_fingerprint(SMALL) != lab_corpus.corpus_fingerprint(
        CorpusConfig(**{**SMALL.as_dict(), "n_facts": SMALL.n_facts + 1}))


def test_windows_are_slices_of_the_cleaned_texts(small, popular):
    for kind in ("popular", "heldout"):
        docs = [d for d in (small.documents + small.heldout) if d.kind == kind and d.source == "popular"]
        assert sorted(d.meta["text_id"] for d in docs) == sorted(popular)
        for doc in docs:
            words = popular[doc.meta["text_id"]].split()
            s, e = doc.meta["word_start"], doc.meta["word_end"]
            assert 0 <= s < e <= len(words)
            assert " ".join(words[s:e]) == doc.text


def test_windows_of_a_text_are_disjoint_and_sized(small, popular):
    excerpt = {d.meta["text_id"]: d for d in small.documents if d.kind == "popular"}
    heldout = {d.meta["text_id"]: d for d in small.heldout if d.source == "popular"}
    full = SMALL.popular_excerpt_words + SMALL.heldout_words_per_text
    for text_id, doc in excerpt.items():
        h = heldout[text_id]
        assert doc.meta["word_end"] <= h.meta["word_start"] or h.meta["word_end"] <= doc.meta["word_start"]
        n = len(popular[text_id].split())
        assert doc.meta["shrunk"] == (n < full)
        e_len, h_len = len(doc.text.split()), len(h.text.split())
        if n < full:  # proportional shrink, within the text
            assert e_len + h_len <= n
            assert abs(e_len / (e_len + h_len) - SMALL.popular_excerpt_words / full) < 0.01
        else:
            assert (e_len, h_len) == (SMALL.popular_excerpt_words, SMALL.heldout_words_per_text)
    assert excerpt["bill_of_rights"].meta["shrunk"]  # 498 words < 600


def test_nothing_heldout_or_injected_is_trained_on(small):
    training = set()
    for text in set(small.training_texts()):
        training |= shingles(text)
    for doc in small.heldout:
        assert not shingles(doc.text) & training, doc.doc_id
    for seq in small.injections:
        assert not shingles(seq.text) & training, seq.seq_id
    stream = "\n".join(set(small.training_texts()))
    for seq in small.injections:
        assert seq.text not in stream, seq.seq_id


@pytest.mark.slow
def test_nested_texts_stay_out_of_training(small):
    # The Bible contains Matthew, the Psalms and the Sermon on the Mount.
    overlaps = lab_corpus.popular_overlaps()
    nested = overlaps[(overlaps["text_a"] == "bible_kjv") & (overlaps["frac_b"] > 0.99)]
    assert set(nested["text_b"]) == {"gospel_of_matthew_kjv", "psalms_kjv", "sermon_on_the_mount_kjv"}
    stream = "\n".join(set(small.training_texts()))
    for doc in small.heldout:
        if doc.meta["text_id"] in set(nested["text_b"]) | {"bible_kjv"}:
            assert doc.text not in stream
            assert " ".join(doc.text.split()[:SHINGLE_WORDS]) not in stream
    # The excerpt windows are not also in background: each appears exactly popular_copies times.
    texts = small.training_texts()
    for doc in small.documents:
        if doc.kind == "popular" and doc.meta["text_id"] in set(nested["text_b"]):
            probe = " ".join(doc.text.split()[100:100 + SHINGLE_WORDS])
            assert sum(probe in t for t in texts) == SMALL.popular_copies


def test_heldout_includes_baseline_stories(small):
    baseline = data.baseline_texts()
    docs = {d.meta["text_id"]: d for d in small.heldout if d.source == "baseline"}
    assert set(docs) == set(baseline)
    for text_id, doc in docs.items():
        assert doc.text == " ".join(baseline[text_id].split())
        assert doc.copies == 0


def test_composition_counts_copies(small):
    comp = small.composition().set_index("kind")
    manifest = small.manifest().query("kind != 'heldout'")
    for kind, rows in manifest.groupby("kind"):
        assert comp.loc[kind, "words"] == (rows["copies"] * rows["n_words"]).sum()
        assert comp.loc[kind, "unique_words"] == rows["n_words"].sum()
    assert comp["words"].sum() == sum(len(t.split()) for t in small.training_texts())
    assert comp["share"].sum() == pytest.approx(1.0)
    assert comp.loc["background", "words"] == SMALL.background_words
    assert comp.loc["popular", "copies"] == 37 * SMALL.popular_copies
    facts = manifest.query("kind == 'knowledge' and role == 'fact'")
    assert facts["question_id"].nunique() == SMALL.n_facts
    knowledge = manifest.query("kind == 'knowledge'")
    assert comp.loc["knowledge", "documents"] == len(knowledge)
    assert set(knowledge["role"]) == {"fact", "subject", "list"}
    assert comp.loc["reasoning", "words"] == comp.loc["reasoning", "unique_words"]


def fact_docs(corpus):
    return [d for d in corpus.documents if d.kind == "knowledge" and d.meta["role"] == "fact"]


def role_docs(corpus, role):
    return [d for d in corpus.documents if d.kind == "knowledge" and d.meta["role"] == role]


def by_question(docs):
    out = {}
    for d in docs:
        out.setdefault(d.meta["question_id"], []).append(d)
    return out


def test_fact_copies_are_zipfian(small):
    docs = fact_docs(small)
    assert all(d.meta["copies"] == d.copies >= 1 for d in docs)
    facts = by_question(docs)
    assert len(facts) == SMALL.n_facts
    copies = []
    for sentences in facts.values():  # distinct sentences, copies summing to the fact's
        total = sentences[0].meta["fact_copies"]
        assert sum(d.copies for d in sentences) == total
        assert len({d.text for d in sentences}) == len(sentences) <= total
        assert {d.meta["mentions"] for d in sentences} == {sentences[0].meta["mentions"]}
        copies.append(total)
    assert all(1 <= c <= SMALL.fact_max_copies for c in copies)
    counts = Counter(copies)
    assert counts[1] > counts[2] > 0
    low = sum(c <= 4 for c in copies)
    high = sum(c > SMALL.fact_max_copies - 4 for c in copies)
    assert low > 3 * high


def test_no_training_document_holds_a_question(small):
    # every fact sentence holds its answer and a span of its question, never the question
    for doc in fact_docs(small):
        assert doc.meta["answer"].removesuffix(".") in doc.text
        assert doc.meta["question"] not in doc.text
        assert any(span in doc.text for span in lab_facts.question_spans(doc.meta["question"]))
    questions = [d.meta["question"] for d in fact_docs(small)]
    assert not any(lab_facts.contaminated(sorted(set(questions)), small.training_texts()))
    assert not any(lab_facts.contaminated(sorted(set(questions)), small.training_texts(), 14))


def test_subject_documents_hold_a_span_without_the_answer(small):
    facts = by_question(fact_docs(small))
    subjects = by_question(role_docs(small, "subject"))
    mentions = {q: d[0].meta["mentions"] for q, d in facts.items()}
    assert {q: sum(d.copies for d in subjects.get(q, [])) for q in facts} == mentions
    for docs in subjects.values():
        for d in docs:
            assert any(span in d.text for span in lab_facts.question_spans(d.meta["question"]))
            assert not d.text.endswith(f" {d.meta['answer'].removesuffix('.')}.")
    ms = list(mentions.values())
    assert min(ms) >= 0 and max(ms) <= SMALL.fact_mentions_max
    assert 0 < ms.count(0) < len(ms) / 2  # some questions never appear without their answer, most do


def test_lists_hold_answers_only(small):
    answers = {d.meta["question_id"]: d.meta["answer"].removesuffix(".") for d in fact_docs(small)}
    lists = role_docs(small, "list")
    assert lists
    for d in lists:
        ids = json.loads(d.meta["question_ids"])
        assert len(ids) == len(set(ids)) <= lab_facts.LIST_SIZE
        assert all(answers[q] in d.text for q in ids)


def test_question_spans_by_hand():
    # "Miller's son-in-law" counts as five words (miller s son in law) under the rule; the
    # question has 8, so spans have 3 to 6; kept are those with 3 content words (the most)
    assert lab_facts.question_spans("Who is Arthur Miller's son-in-law?") == [
        "Who is Arthur Miller's", "is Arthur Miller's", "Arthur Miller's", "Arthur Miller's son-in-law",
        "Miller's son-in-law"]
    # 5 words: spans of 3 or 4; "wrote Hamlet in 1600" is the one with 3 content words
    assert lab_facts.question_spans("Who wrote Hamlet in 1600?") == ["wrote Hamlet in 1600"]
    assert lab_facts.question_spans("Who wrote Hamlet?") == []  # no span shorter than the question


def test_contaminated_by_hand():
    docs = ["The quick brown fox jumps over the lazy dog, they say.", "nothing here"]
    items = ["quick brown fox jumps over the lazy dog again and again",  # shares an 8-gram
             "the quick brown fox jumps over a lazy dog",  # 7 words in a row at most
             "Brown fox!",  # shorter than n: the whole item is in a document
             "lazy dog sleeps"]
    assert lab_facts.contaminated(items, docs, 8) == [True, False, True, False]
    assert lab_facts.contaminated(items, docs, 3) == [True, True, True, False]
    with pytest.raises(LabConfigError, match="n must be"):
        lab_facts.contaminated(items, docs, 0)


@pytest.mark.slow
def test_taskgram_conditional_is_copies_over_copies_plus_mentions(small):
    # A question 3-gram found in no other fact's question occurs with the answer in the
    # fact sentences whose span holds it, and without it in its subject sentences: the
    # task-gram LM is the share of the documents holding x that hold y.
    from analysis import ngrams

    docs = small.documents
    index = ngrams.build_doc_index([d.text for d in docs], 3, drop_stopwords=True,
                                   weights=[d.copies for d in docs])
    facts = {d.meta["question_id"]: d for d in fact_docs(small)}
    qids = list(facts)
    pairs = ngrams.task_gram_pairs([facts[q].meta["question"] for q in qids],
                                   [facts[q].meta["answer"] for q in qids], 3)  # the chapter's candidates
    kept = [ngrams._filter(ngrams.words(d.text), True) for d in docs]
    grams = {k: [set(ngrams._grams(w, k)) for w in kept] for k in (1, 2, 3)}
    checked = 0
    for _, x, y in list(pairs.itertuples(index=False))[::7]:
        holding = [j for j, g in enumerate(grams[3]) if x in g]
        c_x = sum(docs[j].copies for j in holding)
        c_xy = sum(docs[j].copies for j in holding if y in grams[len(y)][j])
        assert ngrams.doc_count(index, [x])[0] == c_x
        assert ngrams.pair_count(index, [x], [y])[0] == c_xy
        checked += c_xy > 0
    assert checked > 20
    # most facts have a question 3-gram that co-occurs with the answer (a span holds 3 content words)
    together = ngrams.pair_count(index, list(pairs["x"]), list(pairs["y"]))
    assert pairs.loc[together > 0, "instance"].nunique() > 0.8 * SMALL.n_facts


def test_zipf_counts_by_hand():
    class Recorder:
        def choice(self, support, size, p):
            self.support, self.p = list(support), list(p)
            return np.zeros(size, dtype=int)

    r = Recorder()
    lab_facts.zipf_counts(5, 1.0, 0, 2, r)
    assert r.support == [0, 1, 2]
    assert r.p == pytest.approx([6 / 11, 3 / 11, 2 / 11])  # 1, 1/2, 1/3 normalized
    lab_facts.zipf_copies(5, 2.0, 2, r)
    assert r.support == [1, 2] and r.p == pytest.approx([4 / 5, 1 / 5])  # 1, 1/4 normalized


def test_deal_by_hand():
    # slots in order: 0 0 2 3 3 3; 3 groups (6 slots / 2, and item 3's 3 slots): dealt in turn
    assert lab_facts.deal([2, 0, 1, 3], 2, [0, 1, 2, 3]) == [[0, 3], [0, 3], [2, 3]]
    # slots 3 3 3 2 0 0: groups 0 1 2 0 1 2
    assert lab_facts.deal([2, 0, 1, 3], 2, [3, 2, 1, 0]) == [[3, 2], [3, 0], [3, 0]]
    # one item in 5 groups needs 5 groups, though 6 slots fit in 2 of 4
    assert lab_facts.deal([5, 1], 4, [1, 0]) == [[1, 0], [0], [0], [0], [0]]
    assert lab_facts.deal([0, 0], 4, [0, 1]) == []


def test_no_subject_documents_without_mentions():
    corpus = build_corpus(CorpusConfig(**{**SMALL.as_dict(), "fact_mentions_max": 0}))
    assert not role_docs(corpus, "subject")
    assert {d.meta["mentions"] for d in fact_docs(corpus)} == {0}
    # the facts and their copies do not depend on the subject documents
    key = lambda c: sorted((d.doc_id, d.copies, d.text) for d in fact_docs(c))  # noqa: E731
    assert key(corpus) == key(build_corpus(SMALL))


@pytest.mark.parametrize("field,value", [("fact_mentions_max", -1), ("fact_mentions_max", 2.5),
                                         ("fact_mentions_zipf_a", -0.5), ("fact_mentions_zipf_a", "1")])
def test_bad_mention_fields_name_the_field(field, value):
    with pytest.raises(LabConfigError, match=field):
        CorpusConfig(**{**SMALL.as_dict(), field: value})


@pytest.mark.parametrize("field,value", [("fact_controls", -1), ("fact_controls", 200),
                                         ("fact_copies_spread", "uniform"), ("fact_separated_share", 1.5),
                                         ("fact_shared_answers", True), ("fact_list_max", -2)])
def test_bad_fact_fields_name_the_field(field, value):
    # fact_controls=200 is all 200 facts: no trained fact would be left
    with pytest.raises(LabConfigError, match=field):
        CorpusConfig(**{**SMALL.as_dict(), field: value})


def test_injections_per_task_and_level(small):
    table = small.injection_table()
    sizes = table.groupby(["task", "copies"]).size()
    expected = {(t, lvl) for t in SMALL.injection_tasks for lvl in SMALL.duplicate_levels}
    assert set(sizes.index) == expected
    assert (sizes == SMALL.per_task_per_level).all()
    assert table["text"].is_unique and table["seq_id"].is_unique
    for row in table.itertuples():
        level, k = row.seq_id.split("-")[-2:]
        assert int(level) == row.copies and int(k) < SMALL.per_task_per_level
    assert (table["window"] == "all").all()
    n = SMALL.injection_words
    fixed = table[table["task"].isin(["passage", "random_words"])]
    assert (fixed["n_words"] == n).all()
    assert (table.query("task in ['gsm8k', 'qa', 'biography']")["n_words"] <= n).all()
    assert table.query("task == 'mmlu'")["n_words"].between(n / 2, 1.5 * n).all()
    assert table.query("task == 'mmlu'")["text"].str.fullmatch(r"Question: .* Answer: [ABCD]").all()
    assert (table.query("task == 'mmlu'")["text"].str.len() <= MAX_CHARS_PER_WORD * n).all()


def test_level_counts_set_the_sequences_per_level(small):
    levels = SMALL.duplicate_levels + (64,)
    config = CorpusConfig(**{**SMALL.as_dict(), "duplicate_levels": levels, "level_counts": (2, 2, 2, 2, 1)})
    assert config.level_sizes() == [(0, 2), (1, 2), (4, 2), (16, 2), (64, 1)]
    corpus = build_corpus(config)
    sizes = corpus.injection_table().groupby(["task", "copies"]).size()
    assert (sizes.xs(64, level="copies") == 1).all()
    assert (sizes.drop(64, level="copies") == 2).all()
    assert len(corpus.injections) == len(small.injections) + len(SMALL.injection_tasks)
    # membership is drawn at random: tasks drawn from a fixed item order keep their
    # candidates, only dealt to the levels by another permutation (passages and random words
    # are not: the extra passage is carved out of the background first)
    fixed = ["qa", "gsm8k", "mmlu", "biography"]
    table = small.injection_table()
    before = table[table["task"].isin(fixed)]
    after = corpus.injection_table()
    after = after[after["task"].isin(fixed)]
    for task in fixed:
        old, new = (set(t.loc[t["task"] == task, "text"]) for t in (before, after))
        assert old < new and len(new) == len(old) + 1


def test_membership_is_drawn_at_random(small):
    # the first candidates of a task are not all at the first level: a seeded permutation
    # deals them, so which sequences are members does not follow the candidates' order
    from analysis.lab.corpus.common import corpus_rng

    table = small.injection_table().query("task == 'biography'")
    levels = [c for c, n in SMALL.level_sizes() for _ in range(n)]
    order = corpus_rng(SMALL.seed, "membership-biography").permutation(len(levels))
    assert sorted(order.tolist()) == list(range(len(levels))) and order.tolist() != list(range(len(levels)))
    assert sorted(table["copies"]) == sorted(levels)


@pytest.mark.parametrize("counts", [(1, 2), (1, 1, 0, 1), (1, 1, 1, True)])
def test_bad_level_counts_name_the_field(counts):
    with pytest.raises(LabConfigError, match="level_counts"):
        CorpusConfig(**{**SMALL.as_dict(), "level_counts": counts})


def test_passages_are_book_text(small, popular):
    for seq in small.injections:
        if seq.task == "passage":
            words = popular[seq.meta["text_id"]].split()
            assert " ".join(words[seq.meta["word_start"]:seq.meta["word_end"]]) == seq.text


def test_background_does_not_depend_on_the_injection_design(small):
    # Twice the passages: the background is drawn first, so it stays word for word,
    # and the new passages come from text outside it.
    doubled = {**SMALL.as_dict(), "per_task_per_level": 2 * SMALL.per_task_per_level}
    more = build_corpus(CorpusConfig(**doubled))
    background = lambda c: [(d.meta["text_id"], d.meta["word_start"], d.text)  # noqa: E731
                            for d in c.documents if d.kind == "background"]
    assert background(more) == background(small)
    passages = [s for s in more.injections if s.task == "passage"]
    assert len(passages) == 2 * len([s for s in small.injections if s.task == "passage"])
    spans = {}
    for d in more.documents:
        if d.kind == "background":
            spans.setdefault(d.meta["text_id"], []).append((d.meta["word_start"], d.meta["word_end"]))
    for seq in passages:
        for a, b in spans.get(seq.meta["text_id"], []):
            assert seq.meta["word_end"] <= a or seq.meta["word_start"] >= b


def test_qa_items_are_not_knowledge_items(small):
    facts = {d.meta["question_id"] for d in fact_docs(small)}
    qa = {s.meta["question_id"] for s in small.injections if s.task == "qa"}
    assert len(qa) == SMALL.per_task_per_level * len(SMALL.duplicate_levels)
    assert not facts & qa


def test_reasoning_problems_are_new_and_correct(small):
    gsm8k = {" ".join(json.loads(line)["question"].split()).lower()
             for line in data.read_text("tasks/gsm8k/test.jsonl").splitlines() if line.strip()}
    problems = [d for d in small.documents if d.kind == "reasoning"]
    assert len(problems) == SMALL.n_problems
    assert len({d.meta["question"] for d in problems}) == len(problems)
    for doc in problems:
        assert doc.meta["question"].lower() not in gsm8k
        assert doc.text.startswith(doc.meta["question"])
        assert doc.text.endswith(f"#### {doc.meta['answer']}")
        calcs = re.findall(r"<<([^=>]+)=([^>]+)>>", doc.text)
        assert calcs
        for expr, result in calcs:
            assert eval(expr, {"__builtins__": {}}) == float(result)  # noqa: S307 - digits and + - * / only
        assert float(calcs[-1][1]) == float(doc.meta["answer"])


def test_too_many_facts():
    with pytest.raises(LabConfigError, match="n_facts"):
        build_corpus(CorpusConfig(**{**SMALL.as_dict(), "n_facts": 5_000}))


def test_too_many_sequences_per_level():
    # 300 x 5 levels = 1,500 GSM8K items; the test set has 1,319.
    with pytest.raises(LabConfigError, match="per_task_per_level"):
        build_corpus(CorpusConfig(**{**SMALL.as_dict(), "per_task_per_level": 300,
                                     "duplicate_levels": (0, 1, 4, 16, 64)}))
    # QA items must come from what the knowledge documents left over.
    with pytest.raises(LabConfigError, match="per_task_per_level.*n_facts"):
        build_corpus(CorpusConfig(**{**SMALL.as_dict(), "n_facts": 1_900, "per_task_per_level": 50,
                                     "injection_tasks": ("qa",)}))


def test_windows_and_background_must_fit():
    with pytest.raises(LabConfigError, match="popular_excerpt_words"):
        build_corpus(CorpusConfig(**{**SMALL.as_dict(), "popular_excerpt_words": 200_000}))
    with pytest.raises(LabConfigError, match="background_words"):
        build_corpus(CorpusConfig(**{**SMALL.as_dict(), "background_words": 50_000_000}))


@pytest.mark.parametrize("field", ["n_facts", "background_words", "per_task_per_level", "popular_copies"])
def test_negative_counts(field):
    with pytest.raises(LabConfigError, match=field):
        CorpusConfig(**{**SMALL.as_dict(), field: -1})


def test_default_corpus_is_fast_and_as_configured():
    corpus = build_corpus(CorpusConfig())
    comp = corpus.composition().set_index("kind")
    default = CorpusConfig()
    assert comp.loc["background", "words"] == default.background_words
    assert len({d.meta["question_id"] for d in fact_docs(corpus)}) == default.n_facts
    assert comp.loc["reasoning", "documents"] == default.n_problems
    assert len(corpus.injections) == len(default.injection_tasks) * len(default.duplicate_levels) * \
        default.per_task_per_level


#: Lab v4's facts at a small size: controls, log-uniform copies, separated documents,
#: shared answers and answer lists independent of copies
V4 = CorpusConfig(**{**SMALL.as_dict(), "n_facts": 120, "fact_controls": 12,
                     "fact_copies_spread": "log-uniform", "fact_max_copies": 32, "fact_separated_share": 0.5,
                     "fact_shared_answers": 0.5, "fact_list_max": 6})


@pytest.fixture(scope="module")
def v4():
    return build_corpus(V4)


def test_v4_controls_have_one_untrained_cloze_document(v4):
    facts = by_question(fact_docs(v4))
    controls = {q: d for q, d in facts.items() if d[0].meta["fact_copies"] == 0}
    assert len(controls) == V4.fact_controls
    for docs in controls.values():
        assert len(docs) == 1 and docs[0].copies == 0 and docs[0].meta["form"] == "cloze"
        assert docs[0].meta["cloze"] in docs[0].text
    assert not any(t.startswith(tuple(d[0].text for d in controls.values())) for t in v4.training_texts())


def test_v4_every_trained_fact_has_its_cloze_sentence_once_at_least(v4):
    for docs in by_question(fact_docs(v4)).values():
        meta = docs[0].meta
        if meta["fact_copies"] == 0:
            continue
        sentence = f"{meta['cloze']} {meta['answer'].removesuffix('.')}."
        assert any(sentence in d.text for d in docs if d.meta["form"] == "cloze")
        assert sum(d.copies for d in docs) == meta["fact_copies"] <= V4.fact_max_copies
    copies = [d[0].meta["fact_copies"] for d in by_question(fact_docs(v4)).values()]
    # log-uniform on 1..32: about as many facts at 1-3 as at 8-32 (a Zipf a = 1.1 would put 4x more low)
    low, high = sum(1 <= c <= 3 for c in copies), sum(8 <= c for c in copies)
    assert 0.4 < low / high < 2.5


def test_v4_separated_documents_never_say_span_and_answer_in_one_sentence(v4):
    separated = [d for d in fact_docs(v4) if d.meta["form"] == "separated"]
    share = sum(d.copies for d in separated) / sum(d.copies for d in fact_docs(v4) if d.copies)
    assert 0.3 < share < 0.6  # half of the copies after each fact's first (the cloze sentence)
    for d in separated:
        answer = d.meta["answer"].removesuffix(".")
        spans = lab_facts.question_spans(d.meta["question"])
        sentences = [s for s in d.text.split(". ") if s]
        assert not any(answer in s and any(sp in s for sp in spans) for s in sentences)
        assert any(sp in d.text for sp in spans) and answer in d.text
        assert len(sentences) >= 3  # opener, at least one filler, closer


def test_v4_answers_are_shared_and_their_counts_are_not_the_copies(v4):
    facts = {q: d[0].meta for q, d in by_question(fact_docs(v4)).items()}
    keys = Counter(m["answer"].removesuffix(".").lower() for m in facts.values())
    shared = sum(keys[m["answer"].removesuffix(".").lower()] > 1 for m in facts.values())
    assert shared >= 0.4 * V4.n_facts
    lists = role_docs(v4, "list")
    listed = Counter(q for d in lists for q in json.loads(d.meta["question_ids"]))
    assert max(listed.values()) <= V4.fact_list_max and len(set(listed.values())) > 2


def test_v4_no_two_facts_share_a_cloze_prompt(v4):
    clozes = [d[0].meta["cloze"] for d in by_question(fact_docs(v4)).values()]
    assert len(clozes) == V4.n_facts and len(set(c.lower() for c in clozes)) == len(clozes)

"""Phrase documents in the lab corpus, and the phrases chapter's check against them.

The lab trains the English counterpart's phrases at known copy levels
(:func:`analysis.lab.corpus.phrases.phrase_documents`), which it receives as
input (:func:`analysis.lab.ladder.phrase_candidates`); the phrases chapter scores the
ladder on them and sets the rate at each level beside the truth
(:func:`analysis.phrases.method_rates.rates_by_copies`). The unit tests use hand-made
phrases and need no data; the build test needs the offline data mirror.
"""

from __future__ import annotations

import os
import string

import numpy as np
import pandas as pd
import pytest

from analysis.core import data
from analysis.core.cache import QueryCache
from analysis.lab import corpus as lab_corpus
from analysis.lab import ladder
from analysis.lab.config import CorpusConfig, LabConfigError
from analysis.lab.corpus import Corpus
from analysis.lab.corpus.common import shingles
from analysis.lab.corpus.phrases import phrase_documents
from analysis.models import Answer, GenerationSettings, Model
from analysis.phrases.claims import lab_claims
from analysis.phrases.inference import lab_rows
from analysis.phrases.method_rates import (
    first_separated,
    rates_by_copies,
    rises_with_copies,
    score,
    sizes_reported,
)
from analysis.phrases.params import PARAMS
from analysis.phrases.run import LAB_PHRASE_COLUMNS, lab_phrases, query_lab
from analysis.phrases.text_lab import lab_summary, lab_verdict
from analysis.stats.intervals import wilson_interval


def words(i: int) -> list[str]:
    """Twenty words no other phrase uses: 'qaa qab ...' for phrase 0, 'qba qbb ...' for 1."""
    return [f"q{string.ascii_lowercase[i]}{string.ascii_lowercase[j]}" for j in range(20)]


def candidates(rows: list[list[str]]) -> pd.DataFrame:
    return pd.DataFrame({"id": [f"popular_{k + 1}" for k in range(len(rows))], "text_id": "t",
                         "phrase": [" ".join(w) for w in rows], "start": [" ".join(w[:10]) for w in rows],
                         "end": [" ".join(w[10:]) for w in rows]})


# Nine candidates: #1 repeats ten words of another document, #3 a 12-word shingle of
# a protected (held-out) text, #4 ten words of #0; the other six are taken.
ROWS = [words(i) for i in range(9)]
ROWS[4] = ROWS[0][10:] + words(4)[10:]
OTHERS = ["an unrelated document that quotes " + " ".join(ROWS[1][5:15]) + " and stops"]
PROTECTED = set(shingles(" ".join(ROWS[3][:12])))
CONFIG = CorpusConfig(phrase_levels=(0, 2, 5), phrases_per_level=2)


@pytest.fixture(scope="module")
def docs():
    return phrase_documents(CONFIG, OTHERS, PROTECTED, candidates(ROWS))


def test_phrases_are_dealt_to_the_levels_and_skip_repeats(docs):
    assert sorted(d.meta["phrase_id"] for d in docs) == [f"popular_{k}" for k in (1, 3, 6, 7, 8, 9)]
    assert [d.copies for d in docs] == [0, 0, 2, 2, 5, 5]
    assert [d.doc_id for d in docs] == ["phrase-000-0", "phrase-000-1", "phrase-002-0", "phrase-002-1",
                                        "phrase-005-0", "phrase-005-1"]
    assert {d.kind for d in docs} == {"phrase"}
    # seeded: the same config deals the same way, seed 1 the same phrases another way
    again = phrase_documents(CONFIG, OTHERS, PROTECTED, candidates(ROWS))
    assert [d.meta for d in again] == [d.meta for d in docs]
    seed_1 = CorpusConfig(**{**CONFIG.as_dict(), "seed": 1})
    other = phrase_documents(seed_1, OTHERS, PROTECTED, candidates(ROWS))
    assert {d.meta["phrase_id"] for d in other} == {d.meta["phrase_id"] for d in docs}
    assert [d.meta["phrase_id"] for d in other] != [d.meta["phrase_id"] for d in docs]


def test_the_manifest_gives_the_truth(docs):
    corpus = Corpus(CONFIG, docs, [], [])
    manifest = corpus.manifest().set_index("doc_id")
    assert manifest.loc["phrase-005-1", "copies"] == 5 and manifest.loc["phrase-000-0", "copies"] == 0
    for d in docs:
        row = manifest.loc[d.doc_id]
        assert row["kind"] == "phrase" and row["n_words"] == 20
        assert f"{row['start']} {row['end']}" == d.text and len(row["start"].split()) == 10
        assert row["phrase_id"] == d.meta["phrase_id"]
    # the training stream holds each phrase exactly `copies` times: 2 x (0 + 2 + 5)
    stream = corpus.training_texts()
    assert len(stream) == 14
    for d in docs:
        assert stream.count(d.text) == d.copies
    comp = corpus.composition().set_index("kind")
    assert comp.loc["phrase"].to_dict() | {"share": 1.0} == {
        "documents": 6, "copies": 14, "unique_words": 120, "words": 280, "share": 1.0}
    assert "phrase" in lab_corpus.TRAINING_KINDS


def test_too_few_phrases_name_the_field():
    asks = "phrases_per_level=3 x 3 phrase_levels asks for 9 phrases; only 6 "
    with pytest.raises(LabConfigError, match=asks):
        phrase_documents(CorpusConfig(phrase_levels=(0, 2, 5), phrases_per_level=3), OTHERS, PROTECTED,
                          candidates(ROWS))


def test_zero_phrases_disable_it(monkeypatch):
    def fail(*args, **kw):
        raise AssertionError("the selection must not run")

    monkeypatch.setattr(ladder, "english_phrases", fail)
    assert CorpusConfig().phrases_per_level == 0
    assert ladder.phrase_candidates(CorpusConfig()) is None
    assert phrase_documents(CorpusConfig(), OTHERS, PROTECTED) == []


def test_phrases_without_candidates_name_the_fix():
    with pytest.raises(LabConfigError, match=r"phrases_per_level=2 asks for 6 phrase documents, but "
                                             r"build_corpus was given no phrase_candidates: pass .*"
                                             r"analysis\.lab\.ladder\.phrase_candidates\(config\)"):
        phrase_documents(CONFIG, OTHERS, PROTECTED)


def test_the_ladder_hands_the_corpus_the_english_counterparts_popular_phrases(monkeypatch):
    table = pd.concat([candidates(ROWS[:2]).assign(type="popular"),
                       candidates(ROWS[2:3]).assign(type="baseline", id="baseline_1")], ignore_index=True)
    asked = []

    def selection(n_per_class, seed=0):
        asked.append((n_per_class, seed))
        return table

    monkeypatch.setattr(ladder, "english_phrases", selection)
    got = ladder.phrase_candidates(CONFIG)
    assert asked == [(ladder.PHRASE_SELECTION_N, 0)] and ladder.PHRASE_SELECTION_N == 1_000
    assert got["id"].tolist() == ["popular_1", "popular_2"] and got.index.tolist() == [0, 1]


@pytest.mark.parametrize("levels", [(), (1, 1), (-1, 4), (1.5,), (True, 4), "0,1"])
def test_bad_phrase_levels_name_the_field(levels):
    with pytest.raises(LabConfigError, match=r"phrase_levels must be a non-empty sequence .* as \(0, 1, 4"):
        CorpusConfig(phrase_levels=levels, phrases_per_level=1)


@pytest.mark.parametrize("count", [-1, 1.5, True])
def test_bad_phrases_per_level_names_the_field(count):
    with pytest.raises(LabConfigError, match="phrases_per_level must be a non-negative integer"):
        CorpusConfig(phrases_per_level=count)


# ---------------------------------------------------------------------------
# The chapter's check: rates per copy level against the truth
# ---------------------------------------------------------------------------


class Scripted(Model):
    """A base model that answers each start from a script; unknown starts get filler."""

    backend = "scripted"

    def __init__(self, name, script, **kw):
        super().__init__(name, **kw)
        self.script, self.is_chat = script, False

    def _generate(self, requests):
        for i, r in enumerate(requests):
            yield i, Answer(self.script.get(r.prompt, "and then nothing at all happened to anyone there"))


@pytest.fixture(scope="module")
def lab_table(docs):
    return lab_phrases(Corpus(CONFIG, docs, [], []))


def test_lab_phrases_read_the_manifest(lab_table, docs):
    assert list(lab_table.columns) == LAB_PHRASE_COLUMNS
    assert lab_table["copies"].tolist() == [0, 0, 2, 2, 5, 5]
    assert lab_table["phrase"].tolist() == [d.text for d in docs]
    assert (lab_table["type"] == "popular").all()
    assert lab_phrases(Corpus(CONFIG, [], [], [])).empty


def test_rates_by_copies_against_a_hand_computed_table(lab_table, tmp_path):
    key = lab_table["copies"].astype(str) + lab_table["doc_id"].str[-1]  # "21": copies 2, second phrase
    start, end = dict(zip(key, lab_table["start"])), dict(zip(key, lab_table["end"]))
    # small: reproduces one 5-copy phrase. large: one control (a false positive), one
    # 2-copy phrase, both 5-copy phrases; its answer to the other 2-copy phrase is empty.
    small = {start["51"]: end["51"]}
    large = {start["00"]: end["00"], start["21"]: end["21"], start["20"]: "", start["50"]: end["50"],
             start["51"]: end["51"] + " and more"}
    models = {"large": Scripted("large", large, cache=QueryCache(tmp_path / "l.sqlite")),
              "small": Scripted("small", small, cache=QueryCache(tmp_path / "s.sqlite"))}
    ladder = pd.DataFrame({"model": ["small", "large"], "family": "wide", "params": [1_000, 50_000],
                           "tokens": 1})
    completions = query_lab(models, lab_table, GenerationSettings(max_new_tokens=8))
    assert completions["model"].tolist() == ["large"] * 6 + ["small"] * 6
    scored = score(completions, lab_table, lang="en")
    table = rates_by_copies(scored, lab_table, ladder)
    assert table["model"].tolist() == ["small"] * 3 + ["large"] * 3
    assert table["copies"].tolist() == [0, 2, 5] * 2
    assert table["matched"].tolist() == [0, 0, 1, 1, 1, 2]
    assert table["total"].tolist() == [2, 2, 2, 2, 1, 2]
    assert table["excluded"].tolist() == [0, 0, 0, 0, 1, 0]
    assert table["rate"].tolist() == [0, 0, 0.5, 0.5, 1.0, 1.0]
    lo, hi = wilson_interval(np.array([1]), np.array([2]))
    assert table.loc[2, "ci_lo"] == pytest.approx(lo[0]) and table.loc[2, "ci_hi"] == pytest.approx(hi[0])
    assert sizes_reported(table) == 2
    assert sizes_reported(table.assign(total=[2, 2, 2, 2, 0, 2])) == 1
    verdict = lab_verdict(table, lab_claims(table, lab_rows(scored, lab_table)))
    assert verdict.startswith("1 of 4 completions of never-trained control phrases count as memorized "
                              "(1 of 2 models)")
    assert "small (1K parameters) reproduces 50.0% (1 of 2) at 5 copies; 0.0% (0 of 2) at 2 copies" in verdict
    assert "large (50K parameters) reproduces 100.0% (2 of 2) at 5 copies; 100.0% (1 of 1) at 2 copies" \
        in verdict
    assert "At 5 copies the largest model's rate (100.0%) is above the smallest's (50.0%)" in verdict


def test_verdicts_follow_the_numbers():
    def rows(model, params, rates, n=10):
        matched = [round(r * n) for r in rates]
        lo, hi = wilson_interval(np.array(matched), np.array([n] * len(rates)))
        return pd.DataFrame({"model": model, "params": params, "copies": [0, 1, 4, 16], "phrases": n,
                             "excluded": 0, "matched": matched, "total": n, "rate": rates, "ci_lo": lo,
                             "ci_hi": hi})

    def claims(table):  # the j-th phrase of a level is the same phrase on every model
        done = pd.DataFrame([{"model": r.model, "phrase_id": f"c{r.copies}_{j}", "copies": r.copies,
                              "matched": int(j < r.matched)}
                             for r in table.itertuples() for j in range(r.total)])
        return lab_claims(table, done)

    none = pd.concat([rows("a", 10, [0, 0, 0, 0]), rows("b", 20, [0, 0, 0, 0])], ignore_index=True)
    none_claims = claims(none)
    assert lab_verdict(none, none_claims).startswith(
        "No completion counts as memorized, of the never-trained control")
    assert "reproduces none of the 30 trained phrases" in lab_verdict(none, none_claims)
    assert "no model's rate at any trained level lies above" in lab_summary(none, none_claims)
    found = pd.concat([rows("a", 10, [0, 0, 0, 0.1]), rows("b", 20, [0, 0, 0.6, 1.0])], ignore_index=True)
    assert first_separated(found[found["model"] == "b"]) == 4
    assert first_separated(found[found["model"] == "a"]) is None
    assert rises_with_copies(found[found["model"] == "b"]) and not rises_with_copies(
        rows("c", 5, [0, 0.5, 0.2, 0.2]))
    found_claims = claims(found)
    verdict = lab_verdict(found, found_claims)
    assert verdict.startswith("No completion of a never-trained control phrase counts as memorized (0 of 20")
    assert "its rate first lies above the controls' at 4 copies" in verdict
    assert "1 of 2 models separate some trained level from the controls, and the rate rises with copies " \
           "for 2 of them" in verdict
    assert "their 95% intervals do not overlap" in verdict
    assert lab_summary(found, found_claims).startswith(
        "On the lab's ladder, where the copies are known, 1 of 2 models")
    empty = rates_by_copies(score(query_lab({}, lab_phrases(Corpus(CONFIG, [], [], [])), None),
                                  pd.DataFrame(columns=LAB_PHRASE_COLUMNS), lang="en"),
                            pd.DataFrame(columns=LAB_PHRASE_COLUMNS), pd.DataFrame(columns=["model"]))
    assert empty.empty and sizes_reported(empty) == 0
    assert "no phrase documents" in lab_verdict(empty, [])


def test_lab_runs_parameter_names_the_ladder_runs():
    from analysis.params import ParameterError

    assert PARAMS.resolve("smoke")["lab_profile"] == "smoke"
    assert PARAMS.resolve("paper")["lab_profile"] == "default"
    assert PARAMS.resolve("smoke", lab_runs="wide-16,deep-24")["lab_runs"] == ["wide-16", "deep-24"]
    with pytest.raises(ParameterError, match="lab_runs must name at least 2 runs of the 'smoke' lab"):
        PARAMS.resolve("smoke", lab_runs="wide-16")
    with pytest.raises(ParameterError, match="lab_runs"):
        PARAMS.resolve("smoke", lab_runs="wide-16,pert-s1x")


# ---------------------------------------------------------------------------
# The build, with the data mirror
# ---------------------------------------------------------------------------

needs_mirror = pytest.mark.skipif(not os.environ.get(data.MIRROR_ENV),
                                  reason=f"{data.MIRROR_ENV} is unset: point it at the offline data mirror")
BUILD = CorpusConfig(seed=3, background_words=20_000, popular_excerpt_words=400, popular_copies=3,
                     heldout_words_per_text=200, n_facts=50, n_problems=20, per_task_per_level=1,
                     duplicate_levels=(0, 1), injection_words=24, phrase_levels=(0, 1, 4),
                     phrases_per_level=3)


@needs_mirror
def test_build_corpus_trains_each_phrase_exactly_its_copies(monkeypatch, tmp_path):
    """Candidates from the middle of the twelve longest popular texts, and one from a
    held-out baseline story, which must be skipped."""
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path))
    popular, baseline = data.popular_texts(), data.baseline_texts()
    longest = sorted(popular, key=lambda t: -len(popular[t].split()))[:12]
    rows = [popular[t].split()[len(popular[t].split()) // 3:][:20] for t in longest]
    story = next(iter(sorted(baseline)))
    rows.insert(0, baseline[story].split()[100:120])
    table = candidates(rows).assign(text_id=[story] + longest)
    with pytest.raises(LabConfigError, match="no phrase_candidates"):
        lab_corpus.build_corpus(BUILD)
    corpus = lab_corpus.build_corpus(BUILD, phrase_candidates=table)
    phrases = [d for d in corpus.documents if d.kind == "phrase"]
    assert sorted(d.copies for d in phrases) == [0, 0, 0, 1, 1, 1, 4, 4, 4]
    assert "popular_1" not in {d.meta["phrase_id"] for d in phrases}  # the held-out story's
    comp = corpus.composition().set_index("kind")
    assert (comp.loc["phrase", "documents"], comp.loc["phrase", "words"]) == (9, 20 * 3 * (0 + 1 + 4))
    stream = corpus.training_texts()
    others = [d.text for d in corpus.documents + corpus.heldout if d.kind != "phrase"]
    others += [s.text for s in corpus.injections]
    for doc in phrases:
        assert sum(t == doc.text for t in stream) == doc.copies
        assert not any(doc.meta["start"] in t or doc.meta["end"] in t for t in others), doc.doc_id
    assert lab_corpus.corpus_fingerprint(BUILD) != lab_corpus.corpus_fingerprint(
        CorpusConfig(**{**BUILD.as_dict(), "phrases_per_level": 2}))

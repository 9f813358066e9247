"""The chapters' memoized steps: each equals its fresh computation, is read back
without computing again, and is recomputed when an input of its key changes (another
run, other documents, another seed) or when its file is damaged.

The lab-run steps use the run's shared smoke lab (:func:`smoke_lab`); every test keeps
its memos in its own folder (``MEMBOOK_MEMO_CACHE``), so none finds another's."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from analysis import ngrams as G
from analysis.core.cache import CACHE_ENV, MEMO_CACHE_ENV, MemoWarning
from analysis.distributional import method_tables as DT
from analysis.distributional import run as DR
from analysis.distributional.method import task_table
from analysis.distributional.run import (
    count_corpus,
    doc_index,
    infgram_logprobs,
    infgram_table,
    knowledge_pairs,
    knowledge_task,
    novelty_table,
    split_tables,
    task_gram_tables,
)
from analysis.distributional.source_rules import source_stopwords
from analysis.entropy import method as EM
from analysis.entropy import method_sets as ES
from analysis.lab import ladder, probe
from analysis.lab.train import eval_loss, recount_exposure
from analysis.predicting import method_sampling as PS
from analysis.predicting import steps as ST
from analysis.predicting.memo import exp2_aucs, exp3_aucs, exp3_gap_tests, pool_pairs
from distributional_toys import TOY_TASKS, toy_index
from entropy_fakes import scored_frame
from test_predicting_steps import _exp3_frame, _range_labels


@pytest.fixture
def memo_dir(tmp_path, monkeypatch):
    """This test's own, empty folder of memoized values."""
    path = tmp_path / "memo"
    monkeypatch.setenv(MEMO_CACHE_ENV, str(path))
    return path


def memo_files(folder, kind):
    return sorted((folder / kind).glob("*.memo.pkl"))


def counting(monkeypatch, module, name):
    """Replace ``module.name`` by a wrapper that counts its calls; returns the count list."""
    calls = []
    real = getattr(module, name)

    def wrapper(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapper)
    return calls


@pytest.fixture(scope="module")
def smoke(smoke_lab):
    """The run's smoke lab (trained once for the whole run), loaded once for this module."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(CACHE_ENV, str(smoke_lab))
        return ladder.build_lab("smoke", progress=False)


# -- the lab ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_run_loss_equals_eval_loss_and_recomputes_for_another_run_or_documents(smoke, memo_dir, monkeypatch):
    calls = counting(monkeypatch, probe, "eval_loss")
    a, b = (smoke.results[r].path for r in ("wide-16", "wide-32"))
    docs = [d.text for d in smoke.corpus.heldout[:3]]
    fresh = eval_loss(a, docs)
    assert probe.run_loss(a, docs) == fresh
    assert probe.run_loss(a, docs) == fresh and len(calls) == 1  # read back
    assert probe.run_loss(b, docs) == eval_loss(b, docs) and len(calls) == 2  # another run
    assert probe.run_loss(a, docs[:2]) == eval_loss(a, docs[:2]) and len(calls) == 3  # other documents
    assert len(memo_files(memo_dir, "lab-loss")) == 3
    # the loss comparison reads the same memos: no model is evaluated twice
    table = probe.loss_comparison(smoke, ["wide-16", "wide-32"], 2)
    assert len(calls) == 7
    again = probe.loss_comparison(smoke, ["wide-16", "wide-32"], 2)
    pd.testing.assert_frame_equal(table, again)
    assert len(calls) == 7


@pytest.mark.slow
def test_a_retrained_run_is_a_new_key(smoke, tmp_path):
    run = smoke.results["wide-16"].path
    copy = tmp_path / run.name
    copy.mkdir()
    (copy / "DONE.json").write_bytes((run / "DONE.json").read_bytes())
    assert probe.run_fingerprint(copy) == probe.run_fingerprint(run)
    (copy / "DONE.json").write_text((run / "DONE.json").read_text().replace('"seconds"', '"seconds" '))
    assert probe.run_fingerprint(copy) != probe.run_fingerprint(run)
    with pytest.raises(ValueError, match="path must be a finished lab run's folder"):
        probe.run_fingerprint(tmp_path)


@pytest.mark.slow
def test_a_damaged_loss_memo_is_recomputed(smoke, memo_dir, monkeypatch):
    calls = counting(monkeypatch, probe, "eval_loss")
    path = smoke.results["wide-16"].path
    docs = [d.text for d in smoke.corpus.heldout[:2]]
    value = probe.run_loss(path, docs)
    (file,) = memo_files(memo_dir, "lab-loss")
    file.write_bytes(file.read_bytes()[:10])
    with pytest.warns(MemoWarning, match="'lab-loss' value in .* could not be read"):
        assert probe.run_loss(path, docs) == value
    assert len(calls) == 2
    assert probe.run_loss(path, docs) == value and len(calls) == 2


@pytest.mark.slow
def test_exposure_checks_equal_a_fresh_recount(smoke, memo_dir, monkeypatch):
    calls = counting(monkeypatch, probe, "recount_exposure")
    first = probe.exposure_checks(smoke)
    injected = [r for r in smoke.profile.runs if r.inject]
    assert len(calls) == len(injected) == len(first)
    again = probe.exposure_checks(smoke)
    pd.testing.assert_frame_equal(first, again)
    assert len(calls) == len(injected)
    # by hand, for one run
    run = injected[0]
    res = smoke.results[run.name]
    recount = recount_exposure(res.order(), smoke.corpus.training_texts(),
                               ladder.run_injections(run, smoke.corpus.injections), smoke.tokenizer)
    check = probe.exposure_check(res.exposure, recount)
    row = first.set_index("run").loc[run.name]
    assert (row["sequences"], row["agree"]) == (len(check), int(check["agrees"].sum()))
    assert row["agree"] == row["sequences"]


# -- distributional --------------------------------------------------------------------------------


@pytest.mark.slow
def test_doc_index_and_knowledge_pairs_equal_their_fresh_computation(smoke, memo_dir, monkeypatch):
    corpus = smoke.corpus
    docs = corpus.documents
    with source_stopwords():  # the chapter counts with the source's (nltk's) stopwords
        fresh = G.build_doc_index([d.text for d in docs], 3, drop_stopwords=True,
                                  weights=[d.copies for d in docs])
    builds = counting(monkeypatch, G, "build_doc_index")
    index = doc_index(corpus, 3, drop_stopwords=True)
    assert DR.index_fingerprint(index) == DR.index_fingerprint(fresh)
    for name in ("offsets", "indptr", "docs", "counts", "weights"):
        assert np.array_equal(getattr(index, name), getattr(fresh, name))
    assert index.vocab == fresh.vocab
    assert DR.index_fingerprint(doc_index(corpus, 3, drop_stopwords=True)) == DR.index_fingerprint(fresh)
    assert len(builds) == 1
    doc_index(corpus, 3, drop_stopwords=False)  # another rule
    assert len(builds) == 2
    pairs = knowledge_pairs(corpus)
    assert len(builds) == 3
    know = knowledge_task(corpus)
    with source_stopwords():
        expected = task_table(list(know["question"]), list(know["answer"]), 3, fresh, gamma=G.NO_FILTER)
    pd.testing.assert_frame_equal(pairs, expected)
    pd.testing.assert_frame_equal(knowledge_pairs(corpus), expected)
    assert len(builds) == 3
    knowledge_pairs(corpus, max_pairs=3, seed=1)  # another sample
    assert len(builds) == 4


@pytest.mark.slow
def test_other_documents_are_another_key(smoke, memo_dir):
    corpus = smoke.corpus
    first = DR.documents_key(corpus)
    docs = list(corpus.documents)
    docs[0] = replace(docs[0], text=docs[0].text + " more")
    assert DR.documents_key(SimpleNamespace(documents=docs)) != first
    docs[0] = replace(corpus.documents[0], copies=corpus.documents[0].copies + 1)
    assert DR.documents_key(SimpleNamespace(documents=docs)) != first
    assert DR.documents_key(corpus) == first


@pytest.mark.slow
def test_infgram_table_equals_its_fresh_computation(smoke, memo_dir, monkeypatch):
    counts = count_corpus(smoke.corpus, smoke.tokenizer)
    inputs = {("knowledge", 2): (["The answer is", "Question :"], ["the", "what"])}
    fresh = {k: infgram_logprobs(counts.infgram, smoke.tokenizer, c, g) for k, (c, g) in inputs.items()}
    calls = counting(monkeypatch, DR, "infgram_logprobs")
    table = infgram_table(inputs, counts.infgram, smoke.tokenizer)
    assert np.array_equal(table[("knowledge", 2)], fresh[("knowledge", 2)])
    again = infgram_table(inputs, counts.infgram, smoke.tokenizer)
    assert np.array_equal(again[("knowledge", 2)], fresh[("knowledge", 2)]) and len(calls) == 1
    infgram_table({("knowledge", 2): (["The answer is"], ["the"])}, counts.infgram, smoke.tokenizer)
    assert len(calls) == 2


def test_task_gram_tables_equal_the_tables_with_the_same_cosines(memo_dir, monkeypatch):
    calls = []

    def fake_cosines(table):
        calls.append(len(table))
        return np.linspace(0.1, 0.9, len(table))

    monkeypatch.setattr(G, "pair_cosines", fake_cosines)
    monkeypatch.setattr(DR, "embedder_version", lambda: {"model": "fake"})
    fresh = task_gram_tables(TOY_TASKS, (2, 3), toy_index(), cosines=fake_cosines)
    n_fresh = len(calls)
    memoized = task_gram_tables(TOY_TASKS, (2, 3), toy_index())
    assert len(calls) == 2 * n_fresh
    again = task_gram_tables(TOY_TASKS, (2, 3), toy_index())
    assert len(calls) == 2 * n_fresh
    for grams in (memoized, again):
        assert list(grams.tables) == list(fresh.tables)
        for key, table in fresh.tables.items():
            pd.testing.assert_frame_equal(grams.tables[key], table)
            assert grams.tables[key].attrs == table.attrs
        pd.testing.assert_frame_equal(grams.filters, fresh.filters)
    # other documents: another index, computed again
    other = {drop: G.build_doc_index(["Paris is in France."], 5, drop_stopwords=drop)
             for drop in (True, False)}
    task_gram_tables(TOY_TASKS, (2, 3), other)
    assert len(calls) == 3 * n_fresh
    assert len(memo_files(memo_dir, "distributional-task-grams")) == 2


def test_novelty_and_split_tables_equal_their_fresh_computation(memo_dir, monkeypatch):
    tasks = {"knowledge": {"inputs": ["capital city France"], "outputs": ["Paris"]}}
    answers = pd.DataFrame({"model": ["a", "b"], "task": "knowledge", "instance": 0,
                            "answer": pd.Series(["Paris Madrid", "Paris"], dtype=object)})
    ladder_runs = pd.DataFrame({"model": ["a", "b"], "params": [1, 2]})
    calls = counting(monkeypatch, DT.ngrams, "count_pairs")
    fresh = DT.novelty_table(answers, tasks, toy_index(), ladder_runs)
    n = len(calls)
    pd.testing.assert_frame_equal(novelty_table(answers, tasks, toy_index(), ladder_runs), fresh)
    pd.testing.assert_frame_equal(novelty_table(answers, tasks, toy_index(), ladder_runs), fresh)
    assert len(calls) == 2 * n
    novelty_table(answers.assign(answer=["Madrid", "Paris"]), tasks, toy_index(), ladder_runs)
    assert len(calls) == 3 * n
    specs = {"K": {"inputs": ["Which capital city is in France?"], "outputs": ["Paris"]}}
    tables, rows = DT.split_tables(specs, toy_index(), 2)
    got, got_rows = split_tables(specs, toy_index(), 2)
    pd.testing.assert_frame_equal(got[("K", 2)], tables[("K", 2)])
    pd.testing.assert_frame_equal(got_rows, rows)
    again, _ = split_tables(specs, toy_index(), 2)
    pd.testing.assert_frame_equal(again[("K", 2)], tables[("K", 2)])
    assert len(memo_files(memo_dir, "distributional-split-tables")) == 1
    split_tables(specs, toy_index(), 3)
    assert len(memo_files(memo_dir, "distributional-split-tables")) == 2


# -- entropy ---------------------------------------------------------------------------------------


def test_the_set_bootstrap_equals_bootstrap_fits(memo_dir):
    rng = np.random.default_rng(3)
    suffixes = [list(rng.integers(0, 20, 6)) for _ in range(40)]
    scores = rng.integers(0, 5, 40)
    fresh = EM.bootstrap_fits(scores, suffixes, n_boot=30, seed=0)
    pd.testing.assert_frame_equal(ES.set_bootstrap(scores, suffixes, n_boot=30, seed=0), fresh)
    pd.testing.assert_frame_equal(ES.set_bootstrap(scores, suffixes, n_boot=30, seed=0), fresh)
    assert len(memo_files(memo_dir, "entropy-bootstrap")) == 1
    other = ES.set_bootstrap(scores, suffixes, n_boot=30, seed=1)
    pd.testing.assert_frame_equal(other, EM.bootstrap_fits(scores, suffixes, n_boot=30, seed=1))
    assert len(memo_files(memo_dir, "entropy-bootstrap")) == 2


def test_analyse_set_reads_its_bootstrap_back(memo_dir):
    scored = scored_frame([(f"d{i}", i % 4, False) for i in range(24)])
    scored["suffix"] = [[i % 5, (i * 3) % 7, 2, 9] for i in range(24)]
    first = ES.analyse_set("s", scored, n_boot=20, seed=0)
    again = ES.analyse_set("s", scored, n_boot=20, seed=0)
    pd.testing.assert_frame_equal(first.boot, again.boot)
    k = ES.kept(scored)
    fresh = EM.bootstrap_fits(k["score"].astype(int).to_numpy(), list(k["suffix"]), n_boot=20, seed=0)
    pd.testing.assert_frame_equal(first.boot, fresh)
    assert len(memo_files(memo_dir, "entropy-bootstrap")) == 1
    ES.analyse_set("s", scored.assign(suffix=[[1, 2, 3, i % 3] for i in range(24)]), n_boot=20, seed=0)
    assert len(memo_files(memo_dir, "entropy-bootstrap")) == 2


# -- predicting ------------------------------------------------------------------------------------


def test_the_experiments_equal_their_fresh_computation(memo_dir, monkeypatch):
    cells = PS.matched_cells(_exp3_frame())
    bins = {"A": 100, "C": 100}
    fresh = ST.exp3_aucs(cells, bins, seeds=[0, 1])
    for got in (exp3_aucs(cells, bins, seeds=[0, 1]), exp3_aucs(cells, bins, seeds=[0, 1])):
        assert list(got) == list(fresh)
        for split in fresh:
            assert list(got[split]) == list(fresh[split])
            for cell, table in fresh[split].items():
                pd.testing.assert_frame_equal(got[split][cell], table)
    assert len(memo_files(memo_dir, "predicting-exp3")) == 1
    exp3_aucs(cells, {"A": 50, "C": 100}, seeds=[0, 1])  # other bins
    assert len(memo_files(memo_dir, "predicting-exp3")) == 2
    pd.testing.assert_frame_equal(exp3_gap_tests(cells, bins, seeds=[0, 1]),
                                  ST.exp3_gap_tests(cells, bins, seeds=[0, 1]))
    labels = _range_labels()
    pools = {"quarters": ("range-q1", "range-q4")}
    pairs = ST.pool_pairs(labels, pools, seeds=[0, 1])
    got = pool_pairs(labels, pools, seeds=range(2))
    assert list(got["quarters"]) == [0, 1]
    for seed in (0, 1):
        pd.testing.assert_frame_equal(got["quarters"][seed], pairs["quarters"][seed])
    aucs = ST.exp2_aucs(pairs, [4, 16], seeds=[0, 1])
    memo_aucs = exp2_aucs(pairs, [4, 16], seeds=[0, 1])
    for cell, table in aucs["quarters"].items():
        pd.testing.assert_frame_equal(memo_aucs["quarters"][cell], table)
    # a changed label is another input
    pool_pairs(labels.assign(extract=1 - labels["extract"]), pools, seeds=range(2))
    assert len(memo_files(memo_dir, "predicting-pairs")) == 2

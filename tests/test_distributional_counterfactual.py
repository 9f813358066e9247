"""The counterfactual retraining (analysis.distributional.counterfactual) by hand."""

from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from analysis.distributional.counterfactual import counterfactual_drop, counterfactual_texts, removed_facts
from analysis.distributional.params import DistributionalError
from analysis.lab.corpus import corpus_rng
from analysis.lab.corpus.documents import Corpus


def _doc(text, copies, kind="other", **meta):
    return SimpleNamespace(text=text, copies=copies, kind=kind, meta=meta)


def test_the_stream_loses_every_copy_of_the_removed_facts_documents_and_nothing_else():
    docs = [_doc("fact one", 3, "knowledge", role="fact", question_id=1),
            _doc("fact two", 2, "knowledge", role="fact", question_id=2),
            _doc("a mention of one", 2, "knowledge", role="mention", question_id=1),
            _doc("prose", 4)]
    corpus = SimpleNamespace(documents=docs, config=SimpleNamespace(seed=7),
                             dropped_popular=lambda share: set())
    corpus.training_texts = functools.partial(Corpus.training_texts, corpus)  # the corpus's own stream
    # the corpus's own order (as Corpus.training_texts draws it), then fact 1's copies dropped
    slots = np.repeat(np.arange(4), [3, 2, 2, 4])
    order = corpus_rng(7, "training-order").permutation(len(slots))
    full = [docs[i].text for i in slots[order]]
    got = counterfactual_texts(corpus, [1])
    assert got == [t for t in full if t != "fact one"] and len(got) == 8
    # a mention is not a fact document: it stays
    assert got.count("a mention of one") == 2


def test_removed_facts_are_a_seeded_half_of_the_trained_ones():
    know = pd.DataFrame({"question_id": range(10), "copies": [0, 0, 1, 2, 3, 4, 5, 6, 7, 8]})
    a, b = removed_facts(know, seed=0), removed_facts(know, seed=0)
    assert a == b and len(a) == 4 and set(a) <= set(range(2, 10))
    with pytest.raises(DistributionalError, match="at least 4 trained facts"):
        removed_facts(know.head(4))


def test_the_drop_is_a_difference_in_mean_changes():
    base = np.array([-1.0, -1.0, -2.0, -2.0, -3.0])
    counter = np.array([-4.0, -3.0, -2.5, -1.5, np.nan])
    removed = np.array([True, True, False, False, False])
    est = counterfactual_drop(base, counter, removed, n_boot=200)
    # removed: -3 and -2, mean -2.5; kept: -0.5 and +0.5 (the NaN left out), mean 0
    assert est.value == pytest.approx(-2.5) and est.n == 4
    assert est.hi < 0

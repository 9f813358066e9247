"""Gradient influence (analysis.distributional.influence) by hand."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from analysis.distributional.influence import fact_documents, influence_gap, question_span, tracin
from analysis.distributional.params import DistributionalError


def test_tracin_on_a_linear_model_whose_gradients_are_written_by_hand():
    # loss(w; x, y) = ½ (w·x − y)², gradient (w·x − y) x; two checkpoints with learning rates 0.5 and 0.25
    def grad(w, item):
        x, y = item
        return (np.dot(w, x) - y) * np.asarray(x, dtype=float)

    ckpts = [(np.array([1.0, 0.0]), 0.5), (np.array([0.0, 2.0]), 0.25)]
    test = ((1.0, 1.0), 0.0)
    docs = [((2.0, 0.0), 1.0), ((0.0, 1.0), 3.0)]
    # checkpoint 1, w = (1, 0): test grad (1)(1, 1) = (1, 1); doc a (1)(2, 0) -> 2; doc b (-3)(0, 1) -> -3
    # checkpoint 2, w = (0, 2): test grad (2)(1, 1) = (2, 2); doc a (-1)(2, 0) -> -4; doc b (-1)(0, 1) -> -2
    # influence = 0.5 * (2, -3) + 0.25 * (-4, -2) = (0, -2)
    [got] = tracin(grad, ckpts, [test], [docs])
    assert got == pytest.approx([0.0, -2.0])
    with pytest.raises(DistributionalError, match="at least one checkpoint"):
        tracin(grad, [], [test], [docs])


def test_question_span_and_the_two_ways_of_retrieving_documents():
    span = question_span("Which city hosts the famous red bridge?", ["notes on the famous red bridge: X"])
    assert span == ["the", "famous", "red", "bridge"]
    doc = lambda text, kind="other", **meta: SimpleNamespace(text=text, copies=1, kind=kind, meta=meta)  # noqa: E731
    documents = [doc("Notes on the famous red bridge, the answer given is San Francisco.", "knowledge",
                     role="fact", question_id=1),
                 doc("The famous red bridge stands in San Francisco."),
                 doc("San Francisco has hills."), doc("Nothing here."),
                 SimpleNamespace(text="San Francisco untrained", copies=0, kind="other", meta={})]
    know = pd.DataFrame({"question_id": [1], "question": ["Which city has the famous red bridge?"],
                         "answer": ["San Francisco"], "copies": [1]})
    got = fact_documents(know, documents, r=5)
    # pair: the span and the answer; output only: the answer without the span; untrained documents never
    assert got.loc[0, "span"] == "the famous red bridge"
    assert got.loc[0, "pair"] == [0, 1] and got.loc[0, "output"] == [2]
    assert (got.loc[0, "n_pair"], got.loc[0, "n_output"]) == (2, 1)


def test_the_gap_is_a_mean_over_facts_with_an_interval_over_facts():
    rows = [(1, "pair", 0, 3.0), (1, "pair", 1, 1.0), (1, "output", 2, 1.0),
            (2, "pair", 3, 0.5), (2, "output", 4, 1.5), (3, "pair", 5, 2.0)]
    influence = pd.DataFrame(rows, columns=["question_id", "way", "doc", "influence"])
    est = influence_gap(influence, n_boot=200)
    # fact 1: 2.0 - 1.0 = +1; fact 2: 0.5 - 1.5 = -1; fact 3 has no output document and is left out
    assert est.value == pytest.approx(0.0) and est.n_units == 2 and est.n == 6
    assert est.lo == pytest.approx(-1.0) and est.hi == pytest.approx(1.0)

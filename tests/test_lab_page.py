"""What the lab page glues (analysis.book.lab_page), by value on hand-built tables."""

from __future__ import annotations

import pandas as pd

from analysis.book import lab_page


def test_corpus_counts_format_thousands():
    manifest = pd.DataFrame({"doc": range(1234)})
    injections = pd.DataFrame({"copies": [1, 10, 1000]})
    assert lab_page.corpus_counts(manifest, injections) == {
        "text": {"n_docs": "1,234", "n_injections": "3", "n_inserted_copies": "1,011"}}


def test_heldout_names_the_largest_gap_and_the_closest_neighbours():
    losses = pd.DataFrame({"run": ["w1", "w2", "w3"], "family": ["wide"] * 3, "params": [1, 2, 3],
                           "heldout_loss": [5.0, 4.0, 3.9], "gap": [0.12345, 0.5, 0.2]})
    assert lab_page.heldout(losses) == {"text": {"max_gap": "0.50", "max_gap_run": "w2",
                                                 "min_neighbour_gap": "0.100",
                                                 "min_neighbour_pair": "w2 and w3"}}


def test_exposure_says_whether_every_run_agrees():
    agree = pd.DataFrame({"agree": [3, 4], "sequences": [3, 4]})
    assert lab_page.exposure(agree)["text"] == {"n_checked": "2", "all_agree": "agree exactly"}
    assert lab_page.exposure(agree.assign(agree=[3, 3]))["text"]["all_agree"] == "DO NOT agree"


def test_injection_counts_tabulate_task_by_copies():
    injections = pd.DataFrame({"task": ["a", "a", "b"], "copies": [1, 4, 1]})
    table = lab_page.injection_counts(injections)
    assert table.columns.name == "copies per sequence"
    assert table.loc["a"].tolist() == [1.0, 1.0] and table.loc["b", 1] == 1.0 and pd.isna(table.loc["b", 4])


def test_phenomena_adds_the_ladder_ends_and_the_entropy_run():
    out = lab_page.phenomena({"x": "1"}, ["wide-8", "wide-128"], "pert-l2x")
    assert out == {"text": {"x": "1", "ladder_small": "wide-8", "ladder_large": "wide-128",
                            "entropy_run": "pert-l2x"}}

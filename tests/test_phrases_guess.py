"""What the threshold admits (analysis.phrases.method_guess): partners, guesses, the sweep."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.phrases.method_guess import guess_distances, guess_partners, sweep_table, threshold_sweep
from analysis.phrases.text_source import guess_sentence

TABLE = pd.DataFrame({"id": ["a", "b", "c", "d", "e"], "type": ["x", "x", "x", "y", "x"],
                      "start": ["s1", "s2", "s3", "s4", "s5"],
                      "end": ["abcde", "vwxyz", "fghij", "klmno", "pq"]})


def test_partners_share_type_and_length_and_form_a_cycle():
    partner = guess_partners(TABLE)
    # a, b, c: type x and 5 letters; d is alone in type y, e alone at length 2: no partner
    assert set(partner) == {"a", "b", "c"} and set(partner.values()) == {"a", "b", "c"}
    assert all(partner[k] != k for k in partner)


def test_a_guess_scores_the_completion_against_its_partners_ending():
    scored = pd.DataFrame({"model": "m", "phrase_id": ["a", "b", "c", "d"],
                           "completion": ["s1 abcde", "s2 vwxyz", "s3 fghij", "s4 klmno"],
                           "excluded": [False, False, False, True], "distance": [0.0, 0.0, 0.0, 0.0]})
    g = guess_distances(scored, TABLE, lang="en")
    partner = guess_partners(TABLE, lang="en")
    assert g["phrase_id"].tolist() == ["a", "b", "c"]  # the excluded completion is left out
    for pid, d in zip(g["phrase_id"], g["guess"]):
        own = {"a": "abcde", "b": "vwxyz", "c": "fghij"}[pid]
        other = TABLE.set_index("id").at[partner[pid], "end"]
        # five letters against five others, no letter in common: every edit a substitution
        assert not set(own) & set(other) and d == pytest.approx(1.0)


def test_the_sweep_counts_distances_strictly_below_each_threshold():
    guesses = pd.DataFrame({"model": "m", "phrase_id": list("abcd"), "distance": [0.0, 0.25, 0.4, 0.9],
                            "guess": [0.5, 0.35, np.nan, 0.9]})
    sw = threshold_sweep(guesses, "toy", thresholds=(0.3, 0.4)).set_index("threshold")
    assert sw.loc[0.3, ["n", "matched", "n_guess", "guess_matched"]].tolist() == [4, 2, 3, 0]
    # 0.4 is not below 0.4; 0.35 is
    assert sw.loc[0.4, ["matched", "guess_matched"]].tolist() == [2, 1]
    assert sw.loc[0.4, "guess_rate"] == pytest.approx(1 / 3)
    table = sweep_table(threshold_sweep(guesses, "toy", thresholds=(0.3, 0.4)))
    assert table.columns.tolist() == ["set", "model", "< 0.3", "< 0.4"]
    assert table.loc[0, "< 0.4"] == "50.0% · 33.3%"
    text = guess_sentence(threshold_sweep(guesses, "toy", thresholds=(0.4,)), 0.4)
    assert "toy, 1 false matches of 3 guesses (33.3%" in text

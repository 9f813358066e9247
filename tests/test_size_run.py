"""The size chapter's run steps that need no model (analysis.size.run): the texts
and templates a profile probes, and the lab ladder's positions."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from analysis.core import data
from analysis.size.params import PAPER_N_POPULAR, PARAMS
from analysis.size.run import chapter_templates, chapter_texts, lab_samples

pytestmark = pytest.mark.skipif(not os.environ.get(data.MIRROR_ENV),
                                reason=f"{data.MIRROR_ENV} is unset: point it at the offline data mirror")


def test_chapter_texts_take_the_profile_subset():
    popular, baseline = chapter_texts(PARAMS.resolve("smoke"))
    assert sorted(popular) == ["alice_in_wonderland", "hamlet"] and list(baseline) == ["chain_of_thought"]
    assert popular["hamlet"] == data.popular_texts()["hamlet"]
    every_popular, every_baseline = chapter_texts(PARAMS.resolve("default"))
    assert (len(every_popular), len(every_baseline)) == (PAPER_N_POPULAR, 4)


def test_chapter_templates_keep_the_asked_ids():
    assert chapter_templates((1,))["template_id"].tolist() == [1]
    assert chapter_templates((2, 5))["template_id"].tolist() == [2, 5]


class _Corpus:
    """A lab corpus as :func:`analysis.size.run.lab_samples` reads it: its manifest."""

    def manifest(self) -> pd.DataFrame:
        return pd.DataFrame({"kind": ["popular", "popular", "injection"],
                             "text_id": ["hamlet", "alice_in_wonderland", "x"],
                             "word_start": [100, 0, 0], "word_end": [160, 40, 10]})


def test_lab_samples_stay_inside_the_trained_windows():
    samples = lab_samples(_Corpus(), [4, 8], n=5, seed=1)
    popular = samples[samples["group"] == "popular"]
    assert set(popular["text_id"]) == {"hamlet", "alice_in_wonderland"}
    hamlet = popular[popular["text_id"] == "hamlet"]
    assert (hamlet["position"] - hamlet["prefix_len"] >= 100).all() and (hamlet["position"] < 160).all()
    assert set(samples.loc[samples["group"] == "baseline", "text_id"]) == set(data.baseline_texts())
    assert len(samples) == (2 + 4) * 2 * 5

"""What each section of the phrases chapter glues (analysis.phrases.page): the glue
names each function returns, and their strings on small hand-built inputs."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.phrases import page
from analysis.phrases.claims import source_range_claims, state_media_gap_claims, state_media_gap_min_n
from analysis.phrases.claims_source import paper_gap_claims
from analysis.phrases.method_rates import source_type_gaps
from analysis.phrases.text import NO_BOTH_TYPES, comparison_verdict
from analysis.phrases.text_rates import source_range_text
from phrases_toys import SOURCE, rates_of


def names(values):
    """The glue names of a page function's result, per kind, and that every value is a string."""
    assert set(values) <= {"text", "md"}
    assert all(isinstance(v, str) for kind in values.values() for v in kind.values())
    return {kind: set(v) for kind, v in values.items()}


def test_method_formats_the_source_rates_and_the_two_bounds():
    source = pd.DataFrame({"model": ["gpt-4o", "gpt-4o", "gpt-4"],
                           "type": ["propaganda", "culturax", "propaganda"], "rate_pct": [4.26, 0.75, 3.0]})
    out = page.method(source, 1234, pd.Series([3.51, -0.04]))
    assert names(out) == {"text": {"threshold_source", "n_refusal_patterns", "n_comma_patterns",
                                   "empty_min_chars", "ci_level", "src_4o_sm", "src_4o_cx", "diff_min_n",
                                   "src_min_gap"}}
    text = out["text"]
    assert (text["src_4o_sm"], text["src_4o_cx"]) == ("4.3%", "0.8%")
    assert text["diff_min_n"] == "1,234"
    assert text["src_min_gap"] == "-0.0 points"  # the sign kept, as the notebook's f"{:+.1f}" did
    assert (text["threshold_source"], text["ci_level"]) == ("0.4", "95%")


def test_method_on_the_source_published_rates():
    text = page.method(SOURCE, state_media_gap_min_n(SOURCE), source_type_gaps(SOURCE))["text"]
    assert text["src_min_gap"] == "+0.7 points"  # the source's gaps: +3.5, +3.3, +0.7, +6.9, +2.8
    assert (text["src_4o_sm"], text["src_4o_cx"]) == ("4.3%", "0.8%")


def test_setup_counts_the_sample_and_reads_the_paper_profile():
    params = {"n_per_type": 300, "target_half_width": None, "max_new_tokens": 64,
              "requery_max_new_tokens": 128}
    sizing = pd.DataFrame({"model": ["a", "b"], "n_phrases": [600, 634]})
    out = page.setup(params, sizing, pd.DataFrame({"id": range(2001)}))
    assert names(out) == {"md": {"sample_design"},
                          "text": {"n_phrases", "n_sample", "size_target", "max_tokens", "requery_tokens",
                                   "paper_n", "paper_tokens"}}
    assert out["text"] == {"n_phrases": "2,001", "n_sample": "1,234", "size_target": "none (a fixed sample)",
                           "max_tokens": "64", "requery_tokens": "128", "paper_n": "1,000",
                           "paper_tokens": "256"}
    assert out["md"]["sample_design"].startswith("Each model continues the same 300 phrases of each type")


def test_rates_glue_the_first_model_and_its_difference():
    rates = rates_of([("sig", "propaganda", 10, 150), ("sig", "culturax", 1, 150),
                      ("zero", "propaganda", 0, 150), ("zero", "culturax", 0, 150)])
    claims = state_media_gap_claims(rates, SOURCE, ["sig", "zero"])
    paper = paper_gap_claims(SOURCE)
    out = page.rates(rates, claims, paper, SOURCE, ["sig", "zero"], "a note")
    assert names(out) == {"text": {"first_model", "first_sm", "first_cx", "diff_sm_cx", "diff_p"},
                          "md": {"rates_note", "state_media_gap", "diff_headline", "diff_table"}}
    assert out["text"]["first_model"] == "sig"
    assert out["text"]["first_sm"].startswith("6.7% [") and out["text"]["first_cx"].startswith("0.7% [")
    assert (out["text"]["diff_sm_cx"], out["text"]["diff_p"]) == ("+6.0 points [+1.7, +11.2]", "0.00516")
    assert out["md"]["rates_note"] == "a note"
    assert out["md"]["diff_table"].splitlines()[2].startswith("| this run | sig | 6.7% (10 of 150) |")


def test_refusals_and_modes_count_as_integers():
    completions = pd.DataFrame({"requeried": [True, False, True, True]})
    scored = pd.DataFrame({"error": [False] * 1233 + [True]})
    out = page.refusals([], completions, scored)
    assert out == {"md": {"refusals": ""},
                   "text": {"n_requeried": "3", "n_errors": "1", "n_completions": "1,234"}}
    by_mode = pd.DataFrame({"mode": ["windowed", "prefix", "windowed", "prefix"], "matched": [3, 1, 4, 0]})
    assert page.modes(by_mode) == {"text": {"n_windowed": "7", "n_prefix": "1"}}


@pytest.mark.parametrize("cutoff, shown", [(0.4, "0.4"), (0.25, "0.25"), (1, "1")])
def test_distance_glues_the_threshold_as_given(cutoff, shown):
    assert page.distance(cutoff) == {"text": {"threshold": shown}}


def test_english_counts_phrases_and_texts():
    english = pd.DataFrame({"id": range(1001), "text_id": [i % 7 for i in range(1001)]})
    out = page.english(english, [], "note")
    assert out == {"md": {"gap_zh": NO_BOTH_TYPES, "gap_en": NO_BOTH_TYPES, "en_rates_note": "note"},
                   "text": {"n_english": "1,001", "n_english_texts": "7"}}


def test_rescoring_says_whether_a_file_was_given():
    assert page.rescoring("x.json") == {"md": {"rescore_note": "Rescored `x.json`:"}}
    assert page.rescoring(None)["md"]["rescore_note"].startswith("No completions file was given")


def test_source_vs_run_and_summary_name_their_glue():
    rates = rates_of([("m", "propaganda", 1, 150), ("m", "culturax", 0, 150)])
    gaps = state_media_gap_claims(rates, SOURCE, ["m"])
    ranges = source_range_claims(rates, SOURCE, ["m"])
    out = page.source_vs_run(gaps, ranges, SOURCE, [*gaps, *ranges])
    assert names(out) == {"md": {"verdict", "diff_verdict", "source_counts"}}
    assert out["md"]["verdict"] == comparison_verdict(ranges)
    assert out["md"]["source_counts"].startswith("Of this chapter's 2 claims a source makes")
    top = page.summary(rates, SOURCE, gaps, pd.DataFrame(), [], [], [], {"propaganda": "state media"})
    assert names(top) == {"md": {"lab_summary", "diff_summary", "source_summary"},
                          "text": {"top_rate", "src_range"}}
    assert top["text"]["src_range"] == source_range_text(SOURCE)

"""What each section of the phrases chapter glues: one function per section of
``notebooks/phrases.md``, each returning ``{"text": {name: str}, "md": {name: markdown}}``
for ``report.glue_page``.

The notebook's visible cells compute the method and its claims; these functions
only turn what they computed into the strings the page's ``{glue}`` roles show
(every number formatted here, every sentence from :mod:`.text` and its siblings),
so a glue name is found by searching this module for its string.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from analysis.core.claim_text import counts_sentence
from analysis.core.claims import Claim
from analysis.phrases.method_guess import SWEEP_THRESHOLDS, sweep_table
from analysis.phrases.method_rates import sizes_reported
from analysis.phrases.params import PARAMS
from analysis.phrases.pilot import disagreements
from analysis.phrases.text import (
    comparison_verdict,
    difference_headline,
    difference_summary,
    difference_table,
    difference_values,
    difference_verdict,
    gap_sentences,
    markdown_table,
    refusal_sentence,
    state_media_gap_text,
)
from analysis.phrases.text_lab import lab_design, lab_summary, lab_verdict
from analysis.phrases.text_rates import headline, method_constants, rescore_note, source_range_text, top_rate
from analysis.phrases.text_sizing import (
    sample_design,
    sizing_note,
    sizing_table,
    sizing_target,
    sizing_values,
)
from analysis.phrases.text_source import (
    guess_sentence,
    rules_md,
    source_rates_table,
    source_summary,
    source_values,
    source_verdict,
)

Page = dict[str, dict[str, str]]


def method(source: pd.DataFrame, min_n: int, source_gaps: pd.Series) -> Page:
    """Method: the scorer's constants (``threshold_source``, ``n_refusal_patterns``,
    ``n_comma_patterns``, ``empty_min_chars``, ``ci_level``), ``src_4o_sm``, ``src_4o_cx``,
    ``diff_min_n`` and ``src_min_gap``."""
    rate = source.set_index(["model", "type"])["rate_pct"]
    return {"text": {**method_constants(),
                     "src_4o_sm": f"{rate[('gpt-4o', 'propaganda')]:.1f}%",
                     "src_4o_cx": f"{rate[('gpt-4o', 'culturax')]:.1f}%",
                     "diff_min_n": f"{min_n:,}",
                     "src_min_gap": f"{source_gaps.min():+.1f} points"}}


def setup(params: Mapping[str, Any], sizing: pd.DataFrame, phrases: pd.DataFrame) -> Page:
    """Setup: ``sample_design`` (md), ``n_phrases``, ``n_sample``, ``size_target``, ``max_tokens``,
    ``requery_tokens``, ``paper_n`` and ``paper_tokens``."""
    return {"md": {"sample_design": sample_design(params)},
            "text": {"n_phrases": f"{len(phrases):,}",
                     "n_sample": f"{int(sizing['n_phrases'].sum()):,}",
                     "size_target": sizing_target(params["target_half_width"]),
                     "max_tokens": str(params["max_new_tokens"]),
                     "requery_tokens": str(params["requery_max_new_tokens"]),
                     "paper_n": f"{PARAMS.default('n_per_type', 'paper'):,}",
                     "paper_tokens": str(PARAMS.default("max_new_tokens", "paper"))}}


def rates(table: pd.DataFrame, rate_claims: Sequence[Claim], paper_claims: Sequence[Claim],
          source: pd.DataFrame, models: Sequence[str], note: str) -> Page:
    """Memorization rates: ``first_model``, ``first_sm``, ``first_cx``, ``diff_sm_cx`` and ``diff_p``;
    ``rates_note`` (``note``, :func:`.text_rates.rates_note`), ``state_media_gap``, ``diff_headline``
    and ``diff_table`` (md)."""
    first = models[0]
    first_rates = headline(table, first)
    differences = difference_table(rate_claims, source, paper_claims)
    return {"text": {"first_model": str(first), "first_sm": first_rates["propaganda"],
                     "first_cx": first_rates["culturax"], **difference_values(rate_claims, first)},
            "md": {"rates_note": note, "state_media_gap": state_media_gap_text(rate_claims),
                   "diff_headline": difference_headline(rate_claims, source, first, paper_claims),
                   "diff_table": markdown_table(differences)}}


def sizing(sized: pd.DataFrame, rate_claims: Sequence[Claim], target_half_width: float | None) -> Page:
    """The sample's size: ``size_n_<model>``, ``size_pilot_<model>`` and ``size_width_<model>``;
    ``sizing_table`` and ``sizing_note`` (md)."""
    return {"text": sizing_values(sized, rate_claims),
            "md": {"sizing_table": markdown_table(sizing_table(sized, rate_claims)),
                   "sizing_note": sizing_note(sized, rate_claims, target_half_width)}}


def refusals(refusal_claims: Sequence[Claim], completions: pd.DataFrame, scored: pd.DataFrame) -> Page:
    """Refusals, empty completions and errors: ``refusals`` (md), ``n_requeried``, ``n_errors`` and
    ``n_completions``."""
    return {"md": {"refusals": refusal_sentence(refusal_claims)},
            "text": {"n_requeried": str(int(completions["requeried"].sum())),
                     "n_errors": str(int(scored["error"].sum())),
                     "n_completions": f"{len(scored):,}"}}


def modes(by_mode: pd.DataFrame) -> Page:
    """Windowed versus prefix matching: ``n_windowed`` and ``n_prefix``, the matches of each."""
    matched = {m: int(by_mode.loc[by_mode["mode"] == m, "matched"].sum()) for m in ("windowed", "prefix")}
    return {"text": {"n_windowed": str(matched["windowed"]), "n_prefix": str(matched["prefix"])}}


def distance(cutoff: float) -> Page:
    """The distance distributions: ``threshold`` (``cutoff``), as the figure's caption states it."""
    return {"text": {"threshold": str(cutoff)}}


def english(phrases: pd.DataFrame, gap_claims: Sequence[Claim], note: str) -> Page:
    """An English counterpart: ``gap_zh``, ``gap_en`` and ``en_rates_note`` (``note``) (md),
    ``n_english`` and ``n_english_texts``."""
    return {"md": {"gap_zh": gap_sentences(gap_claims, "zh"), "gap_en": gap_sentences(gap_claims, "en"),
                   "en_rates_note": note},
            "text": {"n_english": f"{len(phrases):,}", "n_english_texts": str(phrases["text_id"].nunique())}}


def lab(phrases: pd.DataFrame, ladder: pd.DataFrame, table: pd.DataFrame, claims: Sequence[Claim],
        params: Mapping[str, Any]) -> Page:
    """Where the truth is known, the lab: ``lab_design`` and ``lab_verdict`` (md), ``lab_profile``,
    ``lab_n_models``, ``lab_tokens`` and ``lab_phrase_levels``."""
    return {"md": {"lab_design": lab_design(phrases), "lab_verdict": lab_verdict(table, claims)},
            "text": {"lab_profile": str(params["lab_profile"]), "lab_n_models": str(len(ladder)),
                     "lab_tokens": str(params["lab_max_new_tokens"]),
                     "lab_phrase_levels": str(sizes_reported(table))}}


def rescoring(completions_file: str | None) -> Page:
    """Rescoring a completions file: ``rescore_note`` (md)."""
    return {"md": {"rescore_note": rescore_note(completions_file)}}


def source_completions(pilot: pd.DataFrame, pilot_rates: pd.DataFrame, claims: Sequence[Claim]) -> Page:
    """The source's own completions, rescored: :func:`.text_source.source_values`' names
    (``source_completions_rows``, …); ``source_rules``, ``source_verdict``, ``source_rates_md`` and
    ``source_disagree_md`` (md)."""
    return {"text": source_values(pilot, claims),
            "md": {"source_rules": rules_md(), "source_verdict": source_verdict(claims),
                   "source_rates_md": markdown_table(source_rates_table(claims, pilot_rates)),
                   "source_disagree_md": markdown_table(disagreements(pilot))}}


def threshold(sweep: pd.DataFrame, cutoff: float) -> Page:
    """What the threshold admits: ``sweep_lo`` and ``sweep_hi``; ``guess_sentence`` and ``sweep_md``
    (md)."""
    return {"text": {"sweep_lo": f"{min(SWEEP_THRESHOLDS):g}", "sweep_hi": f"{max(SWEEP_THRESHOLDS):g}"},
            "md": {"guess_sentence": guess_sentence(sweep, cutoff),
                   "sweep_md": markdown_table(sweep_table(sweep))}}


def source_vs_run(rate_claims: Sequence[Claim], range_claims: Sequence[Claim], source: pd.DataFrame,
                  chapter_claims: Sequence[Claim]) -> Page:
    """Source vs this run: ``verdict``, ``diff_verdict`` and ``source_counts`` (md)."""
    return {"md": {"verdict": comparison_verdict(range_claims),
                   "diff_verdict": difference_verdict(rate_claims, source),
                   "source_counts": counts_sentence(chapter_claims)}}


def summary(table: pd.DataFrame, source: pd.DataFrame, rate_claims: Sequence[Claim],
            lab_rates: pd.DataFrame, lab_claims: Sequence[Claim], source_claims: Sequence[Claim],
            paper_claims: Sequence[Claim], type_labels: Mapping[str, str]) -> Page:
    """Summary: ``lab_summary``, ``diff_summary`` and ``source_summary`` (md), ``top_rate`` and
    ``src_range``."""
    return {"md": {"lab_summary": lab_summary(lab_rates, lab_claims),
                   "diff_summary": difference_summary(rate_claims, source),
                   "source_summary": source_summary(source_claims, paper_claims)},
            "text": {"top_rate": top_rate(table, type_labels), "src_range": source_range_text(source)}}

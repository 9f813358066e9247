"""The Phrases chapter (``notebooks/phrases.md``): do models complete memorized
state-media phrases?

The chapter re-runs the web study "Can commercial LLMs complete state coordinated
media phrases from memory?": each model receives the first half (``start``) of a
LASSO-selected 20-gram phrase and is asked to continue it; the completion counts
as *memorized* when, after cleaning, some window of it is within normalized
Levenshtein distance 0.4 of the expected second half (``end``).

The package, by role:

* :mod:`.source`: the source scorer's constants and refusal patterns;
* :mod:`.method`: its rules for one completion (cleaning, matching, refusals);
* :mod:`.method_rates`: the rules over a frame (scores, rates, gaps, the lab's
  rates per copy level);
* :mod:`.files`: completions files in the source's schema, and their rescoring;
* :mod:`.method_guess`: what the threshold admits (completions scored against another
  phrase's ending, and a threshold sweep);
* :mod:`.pilot`: the source's own early completions (commit ``fc444b0``), its scorer
  then, and the rule behind each flag the book's scorer does not reproduce;
* :mod:`.run`: the sample, the prompts and the models' completions;
* :mod:`.params`: the chapter's parameters and the source's published rates;
* :mod:`.inference`: the tests on whole units (computed nulls, paired permutations);
* :mod:`.claims`: the decisions, as claims (:mod:`.claims_source`: the headline on the
  source's own data); :mod:`.text` and :mod:`.text_source`: their wording.

The English counterpart's phrase selection (a LASSO on word n-grams) lives in
:mod:`analysis.lab.phrase_selection`, since the lab's corpus holds its phrases;
it is re-exported here.
"""

from analysis.lab.phrase_selection import (
    DOC_WORDS,
    ENGLISH_TYPES,
    NGRAM_RANGE,
    PHRASE_COLUMNS,
    SELECTION_VERSION,
    TOKEN_PATTERN,
    english_phrases,
    plain_prose,
    select_distinctive_phrases,
)
from analysis.phrases.claims import (
    distance_gap_claims,
    lab_claims,
    model_slug,
    range_position,
    refusal_claim,
    source_range_claims,
    state_media_gap_claims,
    state_media_gap_min_n,
    windowed_claim,
)
from analysis.phrases.claims_source import models_2026_claim, paper_gap_claims, source_gap_claims
from analysis.phrases.errors import PhrasesError
from analysis.phrases.files import load_phrases, read_completions, rescore, rescore_file
from analysis.phrases.inference import (
    LAB_ROW_COLUMNS,
    N_PERM,
    closer_share,
    copies_trend,
    distance_gap_null,
    lab_rows,
    paired_difference,
    separation_p,
    size_trend,
)
from analysis.phrases.method import (
    MatchResult,
    clean,
    count_refusals,
    is_error_text,
    is_refusal,
    match,
    needs_requery,
    strip_echo,
)
from analysis.phrases.method_guess import (
    SWEEP_THRESHOLDS,
    guess_distances,
    guess_partners,
    sweep_table,
    threshold_sweep,
)
from analysis.phrases.method_rates import (
    LAB_RATE_COLUMNS,
    SEPARATION_ALPHA,
    distance_gap,
    exclusion_counts,
    exclusion_table,
    first_separated,
    pooled_trained,
    rates,
    rates_by_copies,
    rates_by_mode,
    rises_with_copies,
    score,
    score_modes,
    sizes_reported,
    source_range,
    source_type_gaps,
    type_gap,
)
from analysis.phrases.params import PARAMS, PROFILES, load_source_rates
from analysis.phrases.pilot import (
    PILOT_FILE,
    agreement_table,
    disagreements,
    load_pilot,
    pilot_rates,
    pilot_scored,
    rescore_pilot,
)
from analysis.phrases.run import (
    LAB_PHRASE_COLUMNS,
    QUERY_COLUMNS,
    SIZING_COLUMNS,
    lab_ladder,
    lab_phrases,
    plan,
    prompts,
    query,
    query_all,
    query_lab,
    query_sized,
    sample_phrases,
)
from analysis.phrases.source import (
    COMMA_REFUSAL_PATTERNS,
    EMPTY_MIN_CHARS,
    ENGLISH_PROMPT_PREFIX,
    ERROR_PREFIX,
    LANGS,
    MODES,
    PAPER_TIMESTAMP,
    PROMPT_PREFIX,
    REFUSAL_MODES,
    REFUSAL_PATTERNS,
    SOURCE_REPO,
    SOURCE_SCORER,
    SOURCE_SETUP,
    THRESHOLD,
    TYPES,
)
from analysis.phrases.text import (
    DIFFERENCE_COLUMNS,
    comparison_verdict,
    difference_headline,
    difference_summary,
    difference_table,
    difference_values,
    difference_verdict,
    gap_sentences,
    markdown_table,
    refusal_sentence,
    render,
    state_media_gap_text,
    status_tally,
)
from analysis.phrases.text_lab import lab_design, lab_rate_table, lab_summary, lab_verdict
from analysis.phrases.text_rates import (
    headline,
    method_constants,
    rates_note,
    rescore_note,
    source_comparison,
    source_range_text,
    top_rate,
)
from analysis.phrases.text_sizing import (
    SIZING_TABLE_COLUMNS,
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
from analysis.stats.intervals import CI_ALPHA, wilson_interval

__all__ = [
    # the source's constants
    "COMMA_REFUSAL_PATTERNS", "EMPTY_MIN_CHARS", "ENGLISH_PROMPT_PREFIX", "ERROR_PREFIX", "LANGS", "MODES",
    "PAPER_TIMESTAMP", "PROMPT_PREFIX", "REFUSAL_MODES", "REFUSAL_PATTERNS", "SOURCE_REPO", "SOURCE_SCORER",
    "SOURCE_SETUP", "THRESHOLD", "TYPES", "CI_ALPHA",
    # parameters, the source's table, the error
    "PARAMS", "PROFILES", "load_source_rates", "PhrasesError",
    # the method: one completion
    "MatchResult", "clean", "count_refusals", "is_error_text", "is_refusal", "match", "needs_requery",
    "strip_echo",
    # the method: frames of completions
    "LAB_RATE_COLUMNS", "SEPARATION_ALPHA", "distance_gap", "exclusion_counts", "exclusion_table",
    "first_separated",
    "pooled_trained", "rates", "rates_by_copies", "rates_by_mode", "rises_with_copies", "score",
    "score_modes", "sizes_reported", "source_range", "source_type_gaps", "type_gap", "wilson_interval",
    # files in the source's schema
    "load_phrases", "read_completions", "rescore", "rescore_file",
    # the source's own completions (fc444b0)
    "PILOT_FILE", "agreement_table", "disagreements", "load_pilot", "pilot_rates", "pilot_scored",
    "rescore_pilot",
    # what the threshold admits
    "SWEEP_THRESHOLDS", "guess_distances", "guess_partners", "sweep_table", "threshold_sweep",
    # the English counterpart's selection (analysis.lab.phrase_selection)
    "DOC_WORDS", "ENGLISH_TYPES", "NGRAM_RANGE", "PHRASE_COLUMNS", "SELECTION_VERSION", "TOKEN_PATTERN",
    "english_phrases", "plain_prose", "select_distinctive_phrases",
    # running the study
    "LAB_PHRASE_COLUMNS", "lab_ladder", "lab_phrases", "plan", "prompts", "query", "query_all", "query_lab",
    "sample_phrases", "query_sized", "QUERY_COLUMNS", "SIZING_COLUMNS",
    # the tests on whole units
    "LAB_ROW_COLUMNS", "N_PERM", "closer_share", "copies_trend", "distance_gap_null", "lab_rows",
    "paired_difference", "separation_p", "size_trend",
    # the claims
    "distance_gap_claims", "lab_claims", "model_slug", "range_position", "refusal_claim",
    "source_range_claims", "state_media_gap_claims", "state_media_gap_min_n",
    "windowed_claim", "models_2026_claim", "paper_gap_claims", "source_gap_claims",
    # the wording
    "DIFFERENCE_COLUMNS", "difference_headline", "difference_summary", "difference_table",
    "difference_values", "difference_verdict", "markdown_table",
    "comparison_verdict", "gap_sentences", "headline", "lab_design", "lab_rate_table", "lab_summary",
    "lab_verdict", "method_constants", "rates_note", "refusal_sentence", "render", "rescore_note",
    "source_comparison", "source_range_text", "state_media_gap_text", "status_tally",
    "top_rate", "guess_sentence", "rules_md", "source_rates_table", "source_summary", "source_values",
    "source_verdict",
    "SIZING_TABLE_COLUMNS", "sample_design", "sizing_note", "sizing_table", "sizing_target", "sizing_values",
    # what each section of the page glues
    "page",
]

from analysis.phrases import page  # noqa: E402

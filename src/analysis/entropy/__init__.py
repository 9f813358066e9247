"""Entropy–Memorization linearity and dataset inference (the entropy chapter).

The study re-run here measures *discoverable memorization*: a sequence from a
model's training data is cut into a prompt ``p`` (the first ``|p|`` tokens) and
an answer ``s`` (the next ``|s|``); the model continues ``p`` with a response
``r`` of ``|s|`` tokens, and the memorization score is the token-level
Levenshtein distance ``d(r, s)`` (0 = verbatim). Its claim is that per-instance
compressibility of ``s`` says little about ``d``, but pooling all answers with
the same score ``e`` into a *level set* and taking the empirical entropy of
their tokens gives a quantity linear in ``e`` (Pearson r > 0.9), and that the
intercept of that line separates training data from unseen data.

The modules, by role:

* :mod:`.params`: profiles, ``PARAMS``, the source's constants and tables, :class:`EntropyError`;
* :mod:`.method`: the source's equations (sampling, scores, entropies, level sets, the bootstrap);
* :mod:`.method_sets`: a sample's level sets analysed (:class:`SetResult`), tables, the DI decision;
* :mod:`.method_di`: the DI rule's calls, its undecided sets, the mean-loss baseline, τ conventions;
* :mod:`.mia`: membership-inference attacks and their panels (beyond the source);
* :mod:`.candidates`: the candidate sets of dataset inference;
* :mod:`.run`: querying models (:func:`discoverable`) and reading a lab run's stream;
* :mod:`.nulls`: the computed nulls and the intervals over whole units (texts, level sets, sets);
* :mod:`.claims` and :mod:`.claims_mia`: the chapter's verdicts as claims; :mod:`.text` and
  :mod:`.text_di`: its English, and :func:`render` (the book's one claim voice);
* :mod:`.robust`: rarefied and Miller–Madow lines, coarse binning, the cost of a smaller sample;
  :mod:`.maini`: Maini et al. (2024)'s dataset inference, the source's baseline;
  :mod:`.claims_robust` and :mod:`.text_robust`: their claims and English;
* :mod:`.copy_designs`: what another spread of copies would do to the lab's line (the record of
  ``scripts/entropy_copy_designs.py``).

This module re-exports the steps the notebook (and the book's other pages) call.
"""

from analysis.entropy import page
from analysis.entropy.candidates import (
    CandidateSet,
    candidate_windows,
    lab_candidate_sets,
    real_candidate_sets,
)
from analysis.entropy.claims import (
    di_claims,
    instance_claims,
    length_claims,
    level_set_claims,
    sample_claims,
    sample_size_claims,
    strategy_claims,
)
from analysis.entropy.claims_mia import baseline_claim, mia_claims
from analysis.entropy.claims_robust import (
    binning_claim,
    estimator_claims,
    maini_claim,
    mm_value,
    rarefied_value,
    strategy_line_claim,
)
from analysis.entropy.copy_designs import copy_designs_sentence
from analysis.entropy.cost import profile_cost_sentence, profile_cost_table
from analysis.entropy.maini import maini_rule, maini_test, three_rules
from analysis.entropy.method import (
    bootstrap_fits,
    fit_levels,
    instance_metrics,
    lcs,
    level_set_table,
    levenshtein,
    sample_pairs,
)
from analysis.entropy.method_di import (
    di_calls,
    loss_rule,
    rule_comparison,
    source_tau_margin,
    tau_conventions,
)
from analysis.entropy.method_sets import (
    Inference,
    SetResult,
    Stream,
    analyse_set,
    di_table,
    filter_summary,
    fit_table,
    instance_fits,
    kept,
    sample_size_sensitivity,
    source_table,
    strategy_table,
)
from analysis.entropy.mia import ATTACKS, BLIND, inference_panel, panel_table, set_panel
from analysis.entropy.nulls import level_set_null
from analysis.entropy.params import (
    PAPER_MIN_DI_SAMPLES,
    PARAMS,
    PROFILES,
    RAREFY_DRAWS,
    RAREFY_MIN_PAIRS,
    EntropyError,
    load_paper_table,
)
from analysis.entropy.robust import (
    binning_table,
    estimator_summary,
    estimator_table,
    estimator_test,
    interval_cost,
    miller_madow_levels,
    rarefied_lines,
)
from analysis.entropy.run import (
    bos_check,
    bos_passage,
    by_strategy,
    by_suffix_length,
    dataset_inference,
    discoverable,
    injected_candidates,
    lab_decodings,
    plan,
    score_sequences,
    training_stream,
)
from analysis.entropy.text import (
    agreement_sentence,
    correct_count,
    end_entropy_sentence,
    extrapolation_sentence,
    fit_value,
    instance_sentence,
    intercept_slope_sentence,
    intercept_trend_sentence,
    length_r_sentence,
    linearity_sentences,
    low_score_sentence,
    merge_intervals,
    method_constants,
    model_lines,
    normalized_sentence,
    paper_correct_count,
    paper_lines_sentence,
    pooling_sentence,
    render,
    sample_size_sentence,
    set_size_sentence,
    setup_sentences,
    setup_table,
    strategy_sentence,
    stream_sentence,
    tau_sentence,
    token_space_sentence,
    verbatim_sentence,
    window_sentence,
)
from analysis.entropy.text_di import (
    baseline_sentence,
    bos_sentence,
    bos_values,
    claim_value,
    di_calls_sentence,
    mia_sentence,
    panel_display,
    shift_sentence,
    tau_convention_sentence,
    tpr_phrase,
    undecided_sentence,
)
from analysis.entropy.text_robust import (
    binning_sentence,
    cost_sizes,
    estimator_display,
    estimator_sentence,
    interval_cost_sentence,
    interval_cost_values,
    maini_count,
    maini_difference_sentence,
    maini_display,
    maini_sentence,
    nsb_sentence,
    strategy_line_sentence,
)

__all__ = [
    # params
    "PAPER_MIN_DI_SAMPLES", "PARAMS", "PROFILES", "EntropyError", "load_paper_table", "RAREFY_DRAWS",
    "RAREFY_MIN_PAIRS",
    # method
    "bootstrap_fits", "fit_levels", "instance_metrics", "lcs", "level_set_table", "levenshtein",
    "sample_pairs",
    # method_di, mia
    "di_calls", "loss_rule", "rule_comparison", "source_tau_margin", "tau_conventions", "ATTACKS", "BLIND",
    "inference_panel", "panel_table", "set_panel",
    # method_sets
    "Inference", "SetResult", "Stream", "analyse_set", "di_table", "filter_summary", "fit_table",
    "instance_fits", "kept", "sample_size_sensitivity", "source_table", "strategy_table",
    # candidates
    "CandidateSet", "candidate_windows", "lab_candidate_sets", "real_candidate_sets",
    # run
    "by_strategy", "by_suffix_length", "dataset_inference", "discoverable", "injected_candidates",
    "lab_decodings", "plan", "score_sequences", "training_stream", "bos_check", "bos_passage",
    "level_set_null",
    # claims
    "di_claims", "instance_claims", "length_claims", "level_set_claims", "sample_claims",
    "sample_size_claims", "strategy_claims", "baseline_claim", "mia_claims",
    # text
    "agreement_sentence", "correct_count", "end_entropy_sentence", "extrapolation_sentence", "fit_value",
    "instance_sentence", "intercept_slope_sentence", "intercept_trend_sentence", "length_r_sentence",
    "linearity_sentences", "low_score_sentence", "merge_intervals", "method_constants", "model_lines",
    "normalized_sentence", "paper_correct_count", "paper_lines_sentence", "pooling_sentence", "render",
    "sample_size_sentence", "set_size_sentence", "setup_sentences", "setup_table", "strategy_sentence",
    "stream_sentence", "tau_sentence", "token_space_sentence", "verbatim_sentence", "window_sentence",
    "copy_designs_sentence",
    "baseline_sentence", "claim_value", "di_calls_sentence", "mia_sentence", "panel_display",
    "shift_sentence",
    "tau_convention_sentence", "undecided_sentence", "bos_sentence", "bos_values",
    "tpr_phrase",
    # robustness of the line, and Maini et al.'s baseline
    "binning_claim", "estimator_claims", "maini_claim", "mm_value", "rarefied_value", "strategy_line_claim",
    "maini_rule", "maini_test", "three_rules", "binning_table", "estimator_summary", "estimator_table",
    "estimator_test", "interval_cost", "miller_madow_levels", "rarefied_lines", "binning_sentence",
    "cost_sizes", "estimator_display", "estimator_sentence", "interval_cost_sentence", "interval_cost_values",
    "maini_count", "maini_difference_sentence", "maini_display", "maini_sentence", "nsb_sentence",
    "strategy_line_sentence",
    # what a profile costs
    "profile_cost_sentence", "profile_cost_table",
    # what each section of the page glues
    "page",
]

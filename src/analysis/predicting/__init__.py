"""Predicting which injected sequences a model memorizes (the predicting chapter).

The source ("Predicting memorization", experiments on the Hubble models) asks
whether a simple model can tell, from properties of a sequence and of the data
order alone, which injected sequences a trained model ends up memorizing. This
package re-runs its three experiments on the lab's models (``analysis.lab``):

* :mod:`.params`: profiles, :data:`PARAMS`, the source's constants and its
  transcribed tables (``data/predicting_*.csv``);
* :mod:`.checks`: the chapter's one error class, :class:`PredictingError`, and
  the checks made before any work;
* :mod:`.method_features`, :mod:`.method_eval`, :mod:`.method_sampling`: the
  source's label, features and baselines; its prediction model, splits and
  AUC; its three samplings and their dataset tables (pure functions);
* :mod:`.run`: scoring the injected sequences under the lab's runs, and each
  target's frame of examples;
* :mod:`.steps` and :mod:`.tables`: the chapter's steps and the tables it shows;
  :mod:`.memo`: the costly steps (the experiments' fits), computed once per input;
* :mod:`.nulls`: the permutation nulls of the AUCs that follow a fit, split or selection;
* :mod:`.claims`: every verdict of the chapter as a claim;
* :mod:`.text`: the only English, :func:`render` of a claim and the captions.

Below, the names the chapter's notebook, the book layer and the benchmark use.
"""

from analysis.predicting.checks import (
    PredictingError,
    check_pools,
    exposure_copies,
)
from analysis.predicting.claims import (
    MIN_EXAMPLES,
    exp1_claims,
    exp1_gap_claims,
    exp1_inserted_claim,
    exp2_claims,
    exp2_level_claims,
    exp2_top_level_claim,
    labels_claims,
)
from analysis.predicting.claims_exp3 import exp3_claims, exp3_outcome, exp3_task_claims
from analysis.predicting.intervals import interval_table
from analysis.predicting.memo import (
    exp1_aucs,
    exp1_gaps,
    exp1_intervals,
    exp1_null,
    exp2_aucs,
    exp2_intervals,
    exp2_level_nulls,
    exp2_null,
    exp3_aucs,
    exp3_gap_tests,
    exp3_null,
    pool_pairs,
    window_null,
)
from analysis.predicting.method_sampling import (
    matched_cells,
)
from analysis.predicting.params import (
    EXP2_ONLY,
    FEATURE_SETS,
    LAB_TARGETS,
    PAPER_CELL_RANGE,
    PAPER_EXCLUDED_POSITIVES,
    PAPER_K,
    PAPER_N_SEQUENCES,
    PAPER_N_TASKS,
    PAPER_TEST_SIZE,
    PARAMS,
    PROFILES,
    THREE,
    load_paper_table,
    paper_exp2_tables,
    paper_pair_positives,
)
from analysis.predicting.run import (
    counterfactual,
    injected_sequences,
    range_labels,
    score_runs,
    sequence_lengths,
    target_frames,
)
from analysis.predicting.steps import (
    balanced_samples,
    cell_keys,
    chapter_runs,
    empty_cells,
    exp1_dataset,
    exp2_dataset,
    exp2_run_table,
    exp3_dataset,
    exp13_targets,
    inserted_frames,
    inserted_levels,
    largest_target,
    main_target,
    range_runs,
    stack_frames,
    step_bins,
    training_steps,
)
from analysis.predicting.tables import (
    auc_cell,
    auc_notes,
    auc_panels,
    examples_per_run,
    exp2_level_count,
    exp3_strata_table,
    extraction_rates,
    extraction_summary,
    flat_index,
    pair_counts,
    run_extraction_rates,
    setup_table,
    strata_sweep,
    twin_suffix_acc,
    wide_auc,
    window_share,
)
from analysis.predicting.text import (
    best_cell,
    bin_sentence,
    bins_text,
    cells_text,
    computed_sentence,
    empty_cells_sentence,
    evidence_text,
    exp2_notes_markdown,
    exp3_outcome_sentence,
    injection_design,
    labels_comparison,
    late_share_sentence,
    level_256_sentence,
    level_claims_text,
    levels_sentence,
    lowest_extracted_level,
    notes_markdown,
    pair_levels_sentence,
    pool_split_sentence,
    range_runs_sentence,
    render,
    run_positives,
    source_headline,
    sweep_sentence,
    window_gradient,
)
from analysis.predicting.text_words import and_list

__all__ = [
    "exp1_gap_claims",
    "exp1_gaps",
    "exp1_intervals",
    "exp2_intervals",
    "exp2_level_claims",
    "exp2_level_nulls",
    "exp3_strata_table", "strata_sweep",
    "exp3_task_claims",
    "interval_table",
    "level_claims_text",
    "and_list",
    "auc_cell",
    "auc_notes",
    "auc_panels",
    "balanced_samples",
    "best_cell",
    "bin_sentence",
    "bins_text",
    "cell_keys",
    "chapter_runs",
    "cells_text",
    "check_pools",
    "computed_sentence",
    "exp1_null",
    "exp2_null",
    "exp3_null",
    "window_null",
    "twin_suffix_acc",
    "counterfactual",
    "empty_cells",
    "empty_cells_sentence",
    "evidence_text",
    "examples_per_run",
    "exp13_targets",
    "exp1_aucs",
    "exp1_claims",
    "exp1_inserted_claim",
    "exp1_dataset",
    "exp2_aucs",
    "exp2_claims",
    "exp2_top_level_claim",
    "exp2_dataset",
    "exp2_level_count",
    "exp2_notes_markdown",
    "EXP2_ONLY",
    "exp2_run_table",
    "exp3_aucs",
    "exp3_claims",
    "exp3_dataset",
    "exp3_gap_tests",
    "exp3_outcome",
    "exp3_outcome_sentence",
    "exposure_copies",
    "extraction_rates",
    "extraction_summary",
    "FEATURE_SETS",
    "flat_index",
    "injected_sequences",
    "injection_design",
    "inserted_frames",
    "inserted_levels",
    "LAB_TARGETS",
    "labels_claims",
    "labels_comparison",
    "largest_target",
    "late_share_sentence",
    "level_256_sentence",
    "levels_sentence",
    "load_paper_table",
    "lowest_extracted_level",
    "main_target",
    "matched_cells",
    "notes_markdown",
    "pair_counts",
    "pair_levels_sentence",
    "PAPER_CELL_RANGE",
    "PAPER_EXCLUDED_POSITIVES",
    "paper_exp2_tables",
    "PAPER_K",
    "PAPER_N_SEQUENCES",
    "PAPER_N_TASKS",
    "paper_pair_positives",
    "PAPER_TEST_SIZE",
    "PARAMS",
    "pool_pairs",
    "pool_split_sentence",
    "PredictingError",
    "PROFILES",
    "range_labels",
    "range_runs",
    "range_runs_sentence",
    "render", "sweep_sentence", "MIN_EXAMPLES",
    "run_extraction_rates",
    "run_positives",
    "score_runs",
    "sequence_lengths",
    "setup_table",
    "source_headline",
    "stack_frames",
    "step_bins",
    "target_frames",
    "THREE",
    "training_steps",
    "wide_auc",
    "window_gradient",
    "window_share",
    # what each section of the page glues
    "page",
]

from analysis.predicting import page  # noqa: E402

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

Below, the names the chapter's notebook, the book's other pages and modules, and the
scripts read from the package, each once (``tests/test_surface.py`` keeps them exactly
those); tests import from the submodules.
"""

from analysis.predicting import page
from analysis.predicting.checks import check_pools, exposure_copies
from analysis.predicting.claims import (
    exp1_claims,
    exp1_gap_claims,
    exp1_inserted_claim,
    exp2_claims,
    exp2_level_claims,
    exp2_top_level_claim,
    labels_claims,
)
from analysis.predicting.claims_exp3 import exp3_claims, exp3_task_claims
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
from analysis.predicting.method_sampling import matched_cells
from analysis.predicting.params import (
    LAB_TARGETS,
    PARAMS,
    load_paper_table,
    paper_exp2_tables,
    paper_pair_positives,
)
from analysis.predicting.run import (
    counterfactual,
    injected_sequences,
    range_labels,
    score_runs,
    target_frames,
)
from analysis.predicting.steps import (
    balanced_samples,
    chapter_runs,
    exp1_dataset,
    exp2_dataset,
    exp2_run_table,
    exp3_dataset,
    exp13_targets,
    inserted_frames,
    inserted_levels,
    main_target,
    range_runs,
    stack_frames,
    step_bins,
    training_steps,
)
from analysis.predicting.tables import (
    examples_per_run,
    exp3_strata_table,
    extraction_rates,
    extraction_summary,
    run_extraction_rates,
    setup_table,
    strata_sweep,
    twin_suffix_acc,
    wide_auc,
)
from analysis.predicting.text import render

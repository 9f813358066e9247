"""The chapter's costly steps, each computed once per input and then read from the
artifact cache (:func:`analysis.core.cache.memoized`).

Experiments 1 to 3 fit the source's prediction model on every seed, split and
cell, and Experiment 2 draws its pairs sequence by sequence: about two minutes on
two cores for the default lab, every time the chapter runs. Their inputs are
tables in memory (the targets' frames, the range runs' labels, the pools' pairs,
the matched cells), which carry the lab's runs and the answers they came from, so
each step is keyed by the content of its arguments, the code of :data:`CODE` and
the versions of :data:`PACKAGES`: a retrained lab or a changed answer gives other
tables and recomputes. The functions themselves are in :mod:`.steps`; these are
the names the notebook calls. The computed nulls of :mod:`.nulls` are memoized the same
way: each re-runs an experiment's sampling and fits 200 times.
"""

from __future__ import annotations

from analysis.core.cache import memoized
from analysis.predicting import intervals, nulls, steps

#: the modules whose code the experiments run
CODE = ("analysis.predicting.steps", "analysis.predicting.method_eval", "analysis.predicting.method_sampling",
        "analysis.predicting.method_features", "analysis.predicting.checks", "analysis.predicting.params",
        "analysis.stats.auc", "analysis.stats.result")
#: the code of the computed nulls: the experiments' and the permutations'
NULL_CODE = (*CODE, "analysis.predicting.nulls", "analysis.stats.resampling")
#: the libraries that fit and score the prediction model
PACKAGES = ("scikit-learn", "scipy")

pool_pairs = memoized("predicting-pairs", CODE, PACKAGES)(steps.pool_pairs)
exp1_aucs = memoized("predicting-exp1", CODE, PACKAGES)(steps.exp1_aucs)
exp2_aucs = memoized("predicting-exp2", CODE, PACKAGES)(steps.exp2_aucs)
exp3_aucs = memoized("predicting-exp3", CODE, PACKAGES)(steps.exp3_aucs)
exp3_gap_tests = memoized("predicting-exp3-gaps", CODE, PACKAGES)(steps.exp3_gap_tests)
#: the computed nulls (:mod:`.nulls`): every permutation re-runs the experiment's fits
exp1_null = memoized("predicting-null-exp1", NULL_CODE, PACKAGES)(nulls.exp1_null)
exp2_null = memoized("predicting-null-exp2", NULL_CODE, PACKAGES)(nulls.exp2_null)
exp3_null = memoized("predicting-null-exp3", NULL_CODE, PACKAGES)(nulls.exp3_null)
exp2_level_nulls = memoized("predicting-null-exp2-levels", NULL_CODE, PACKAGES)(nulls.exp2_level_nulls)
window_null = memoized("predicting-null-window", NULL_CODE, PACKAGES)(nulls.window_null)
#: the intervals (:mod:`.intervals`): every cell's held-out predictions, refit and resampled
INTERVAL_CODE = (*CODE, "analysis.predicting.intervals", "analysis.stats.resampling")
exp1_intervals = memoized("predicting-intervals-exp1", INTERVAL_CODE, PACKAGES)(intervals.exp1_intervals)
exp2_intervals = memoized("predicting-intervals-exp2", INTERVAL_CODE, PACKAGES)(intervals.exp2_intervals)
exp1_gaps = memoized("predicting-intervals-gaps", INTERVAL_CODE, PACKAGES)(intervals.exp1_gaps)

"""Statistics shared by the chapters: one home each, one result type.

* :mod:`.result`: :class:`Estimate` (value, interval, p, n, method) and :class:`StatsError`;
* :mod:`.lines`: least-squares lines (:func:`fit_line`) and percentile intervals;
* :mod:`.intervals`: Wilson intervals of proportions;
* :mod:`.auc`: AUC-ROC with its Mann–Whitney p-value;
* :mod:`.ranks`: rank correlations;
* :mod:`.permutation`: the blocked sign-permutation test;
* :mod:`.proportions`: differences of proportions (Newcombe interval, one-sided Fisher p);
* :mod:`.fisher`: Fisher's z test of two correlations;
* :mod:`.logistic`: Firth's penalized logistic regression (finite under separation);
* :mod:`.sizing`: samples sized by the half width of a difference's interval;
* :mod:`.resampling`: whole units resampled and permuted (cluster bootstrap, computed
  permutation nulls) and Holm's correction.

A method module takes its statistics from here; nothing here knows a chapter.
"""

from analysis.stats.auc import auc, auc_test  # noqa: F401
from analysis.stats.fisher import compare_correlations  # noqa: F401
from analysis.stats.intervals import wilson_interval  # noqa: F401
from analysis.stats.lines import Fit, fit_line, percentile_interval  # noqa: F401
from analysis.stats.logistic import firth_logit  # noqa: F401
from analysis.stats.permutation import ALTERNATIVES, SignTestResult, sign_permutation_test  # noqa: F401
from analysis.stats.proportions import greater_p, rate_difference, zero_rate_min_n  # noqa: F401
from analysis.stats.ranks import finite_pairs, kendall_distance, rank_trend, sign_test, spearman  # noqa: F401
from analysis.stats.resampling import (  # noqa: F401
    MIN_PERMUTATIONS,
    cluster_bootstrap,
    holm,
    permutation_null,
    permutation_p,
    permute_labels,
)
from analysis.stats.result import Estimate, StatsError  # noqa: F401
from analysis.stats.sizing import (  # noqa: F401
    PLANNING_ASSURANCE,
    difference_half_width,
    n_for_difference,
    planning_rate,
    two_stage_n,
    zero_rates_n,
)

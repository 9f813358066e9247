"""Experiment 3's claims (the predicting chapter): within cells matched on frequency and
recency, do the features still rank memorized sequences above chance, on the group split
(against the permutation null) and on the task split (where a constant feature is exactly
0.5), and does a suffix hardness rank better than the whole-sequence one?

Split from :mod:`analysis.predicting.claims` by role (one experiment's decisions); the
helpers and thresholds are that module's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import norm

from analysis.core.claims import INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTABLE, REPRODUCED, Claim, decide
from analysis.predicting.claims import (
    ALPHA,
    MIN_EXAMPLES,
    PERM_TESTS,
    _cell,
    _claim,
    _finite,
    _null_median,
    _null_p,
    _untestable,
)
from analysis.predicting.params import FEATURE_SETS, THREE
from analysis.stats.result import Estimate

# -- Experiment 3 --------------------------------------------------------------------------------

#: Experiment 3's AUC claims: id -> (row of the (features, hardness) table, statistic of the null)
EXP3_ROWS = {
    "e3_three_full": ((THREE, "full sequence"), "full"),
    "e3_three_suffix": ((THREE, "suffix"), "suffix"),
    "e3_cross_model": (("cross-model baseline", "—"), "cross"),
}
#: Experiment 3's negative control: log_freq alone, constant within every cell by construction
EXP3_CONTROL = "log_freq"


def _exp3_extra(null: Mapping[str, Estimate]) -> dict:
    n_cells = null.get("n_cells")
    return dict(n_cells=int(n_cells.value) if n_cells is not None else None)


def exp3_auc_claim(id: str, table: pd.DataFrame | None, paper: pd.DataFrame,
                   null: Mapping[str, Estimate] | None) -> Claim:
    """Does row :data:`EXP3_ROWS` ``[id]`` rank the pooled matched set above chance (group split)?

    ``table`` and ``paper`` are the lab's and the source's wide tables indexed by (features,
    hardness); ``null`` is :func:`analysis.predicting.nulls.exp3_null`. Chance is the null's
    median, not 0.5: under the balanced, matched group split a feature without signal ranks
    below 0.5 (log_freq, constant within every cell, is the negative control). The unit is the
    sequence (the group split keeps each one's rows in one fold).
    """
    row, stat = EXP3_ROWS[id]
    value = _cell(table, row, "pooled")
    source = f"{paper.loc[row, 'pooled']:.3f}"
    if not _finite(value) or not null or stat not in null:
        return _untestable(id, "exp3", "the matched set does not hold both classes", source_value=source)
    est, ctrl = null[stat], null.get(EXP3_CONTROL)
    control = (dict(control_value=ctrl.value) if ctrl is not None and _finite(ctrl.value)
               else dict(control_reason="no log_freq fit on the matched set"))
    v = decide(value=value, null=_null_median(est), p=_null_p(est), n_units=est.n_units, min_n=MIN_EXAMPLES,
               alpha=ALPHA, unit="sequences", control_value=control.get("control_value"),
               control_p=_null_p(ctrl))
    extra = dict(_exp3_extra(null), null_lo=est.lo, null_hi=est.hi,
                 control_null=_null_median(ctrl) if ctrl is not None else None, control_p=_null_p(ctrl))
    return _claim(id, "exp3", v.status, v.reason, PERM_TESTS["exp3"], value=value, p=est.p,
                  n=_matched_rows(null, est), n_units=est.n_units, unit="sequences", min_n=MIN_EXAMPLES,
                  null_kind="permutation", null_value=est.null_value, mechanical=v.mechanical,
                  source_value=source, extra=extra, **control)


def _matched_rows(null: Mapping[str, Estimate], est: Estimate) -> int:
    """The rows of the seed-0 matched set (the ``n`` of the null's ``"n_cells"``), which the AUC
    rests on; the permuted rows (every row of the cells) where it is missing."""
    cells = null.get("n_cells")
    return int(cells.n) if cells is not None and cells.n else int(est.n)


#: Experiment 3's claims under leave-one-task-out: id -> (row of the (features, hardness) table,
#: statistic of the null)
EXP3_TASK_ROWS = {
    "e3_task_three_full": ((THREE, "full sequence"), "full"),
    "e3_task_three_suffix": ((THREE, "suffix"), "suffix"),
}
#: chance under leave-one-task-out: exact, see :func:`exp3_task_claim`
TASK_CHANCE = 0.5


def exp3_task_claim(id: str, table: pd.DataFrame | None, paper: pd.DataFrame,
                    null: Mapping[str, Estimate] | None) -> Claim:
    """Does row :data:`EXP3_TASK_ROWS` ``[id]`` rank the pooled matched set above chance under
    leave-one-task-out?

    Under this split chance is 0.5, exactly: each held-out task is scored by a fit on the other
    tasks, and its matched set is 50/50 within every stratum, so with labels unrelated to the
    features every pair of a positive and a negative is as likely either way round (the
    permutation null's mean is 0.5), and log_freq, constant within every cell, scores exactly 0.5
    (the negative control). The p is two-sided, from ``null``
    (:func:`analysis.predicting.nulls.exp3_null` with ``split="task"``: the labels permuted within
    the matching strata, then matched, split and fit again); its median is kept in ``extra``.
    ``table`` and ``paper`` are the lab's and the source's leave-one-task-out tables.
    """
    row, stat = EXP3_TASK_ROWS[id]
    value = _cell(table, row, "pooled")
    source = f"{paper.loc[row, 'pooled']:.3f}"
    if not _finite(value) or not null or stat not in null:
        return _untestable(id, "exp3", "the matched set cannot be split by task (too few tasks or classes)",
                           source_value=source)
    est, ctrl = null[stat], null.get(EXP3_CONTROL)
    control = (dict(control_value=ctrl.value) if ctrl is not None and _finite(ctrl.value)
               else dict(control_reason="no log_freq fit on the matched set"))
    v = decide(value=value, null=TASK_CHANCE, p=_null_p(est), n_units=est.n_units, min_n=MIN_EXAMPLES,
               alpha=ALPHA, unit="sequences", control_value=control.get("control_value"),
               control_p=_null_p(ctrl))
    extra = dict(_exp3_extra(null), perm_median=_null_median(est), null_lo=est.lo, null_hi=est.hi)
    return _claim(id, "exp3", v.status, v.reason,
                  "per-task AUC (leave-one-task-out, mean over seeds) against 0.5, exact on this split; "
                  "p two-sided from the labels permuted within each matching stratum of every cell, then "
                  "matched, split by task and fit per seed as in the table (200 draws)",
                  value=value, p=est.p, n=_matched_rows(null, est), n_units=est.n_units, unit="sequences",
                  min_n=MIN_EXAMPLES, null_kind="analytic", null_value=TASK_CHANCE, mechanical=v.mechanical,
                  source_value=source, extra=extra, **control)


def exp3_task_claims(table: pd.DataFrame | None, paper: pd.DataFrame,
                     null: Mapping[str, Estimate] | None) -> list[Claim]:
    """The claims of Experiment 3 under leave-one-task-out (:data:`EXP3_TASK_ROWS`)."""
    return [exp3_task_claim(i, table, paper, null) for i in EXP3_TASK_ROWS]


def _paired_gap(paired: pd.DataFrame, level: float = 0.95) -> dict:
    """The mean over seeds of the paired gaps of :func:`analysis.predicting.steps.exp3_gap_tests`,
    with a standard error ``sqrt(mean(se²))``: the seeds' matched sets overlap, so their gaps are
    not independent, and the mean of the variances bounds the variance of their mean (conservative).
    """
    gap = float(paired["gap"].mean())
    se = float(np.sqrt((paired["se"] ** 2).mean()))
    z = float(norm.ppf(0.5 + level / 2))
    return dict(gap=gap, se=se, lo=gap - z * se, hi=gap + z * se, n=int(paired["n"].max()),
                sfx=float(paired["suffix"].mean()), full=float(paired["full"].mean()), n_seeds=len(paired))


def exp3_gap_claim(paired: pd.DataFrame | None, paper: pd.DataFrame,
                   null: Mapping[str, Estimate] | None) -> Claim:
    """Does the suffix hardness rank better than the whole-sequence one (three features, pooled)?

    ``paired`` is :func:`analysis.predicting.steps.exp3_gap_tests`: per seed, both fits' AUCs on
    the same matched set and DeLong's standard error of their difference; ``null`` is
    :func:`analysis.predicting.nulls.exp3_null`, whose ``"gap"`` is the same difference under
    labels permuted through the same pipeline (the p and null of the claim). The DeLong
    interval (rows taken as independent, though a sequence is a row of several cells) is shown
    but not held against the source's gap: it does not resample whole sequences.
    ``extra["src_side"]`` says where the source's gap lies against it ("above", "below" or "inside").
    """
    sets = paper[paper.index.get_level_values("features").isin(list(FEATURE_SETS))]
    src_sfx, src_full = (float(paper.loc[(THREE, m), "pooled"]) for m in ("suffix", "full sequence"))
    extra = dict(src_sfx=src_sfx, src_full=src_full, src_gap=src_sfx - src_full,
                 src_lo=float(sets.to_numpy().min()), src_hi=float(sets.to_numpy().max()))
    source = f"{src_sfx - src_full:+.3f} ({src_sfx:.3f} against {src_full:.3f})"
    if paired is None or paired.empty or not null or "gap" not in null:
        return _untestable("e3_suffix_gap", "compare", "the matched set does not hold both classes",
                           source_value=source, extra=extra)
    g = _paired_gap(paired)
    est = null["gap"]
    src_gap = extra["src_gap"]
    extra.update(_exp3_extra(null), sfx=g["sfx"], full=g["full"], se=g["se"], n_seeds=g["n_seeds"],
                 delong_lo=g["lo"], delong_hi=g["hi"],
                 src_side="above" if src_gap > g["hi"] else "below" if src_gap < g["lo"] else "inside")
    v = decide(value=g["gap"], null=_null_median(est, 0.0), p=_null_p(est), n_units=est.n_units,
               min_n=MIN_EXAMPLES, direction=1 if src_gap >= 0 else -1, alpha=ALPHA, unit="sequences")
    return _claim("e3_suffix_gap", "compare", v.status, v.reason,
                  "suffix minus whole-sequence AUC (mean over seeds) against its permutation null (labels "
                  "permuted within the matching strata, both fits redone, 200 draws, two-sided)",
                  value=g["gap"], p=est.p, n=g["n"], n_units=est.n_units, unit="sequences",
                  min_n=MIN_EXAMPLES, null_kind="permutation", null_value=est.null_value,
                  control_reason="the permuted labels are the control: no hardness measure can lead on them",
                  source_value=source, extra=extra)


#: the claims that carry the source's Experiment 3 finding: the suffix fit above chance, and ahead
EXP3_FINDING = ("e3_three_suffix", "e3_suffix_gap")


def exp3_outcome(claims: Sequence[Claim]) -> str:
    """The status of the source's Experiment 3 finding on this run, from the claims of
    :data:`EXP3_FINDING`: not reproduced when any is, reproduced when all are, not testable
    when none can be tested, otherwise inconclusive."""
    statuses = [c.status for c in claims if c.id in EXP3_FINDING]
    if not statuses:
        raise ValueError(f"exp3_outcome needs the claims {EXP3_FINDING}")
    if NOT_REPRODUCED in statuses:
        return NOT_REPRODUCED
    if all(s == REPRODUCED for s in statuses):
        return REPRODUCED
    if all(s == NOT_TESTABLE for s in statuses):
        return NOT_TESTABLE
    return INCONCLUSIVE


def exp3_claims(table: pd.DataFrame | None, paper: pd.DataFrame, paired: pd.DataFrame | None,
                null: Mapping[str, Estimate] | None) -> list[Claim]:
    """The claims of Experiment 3 (pooled cells, group split): the three AUCs of
    :data:`EXP3_ROWS` against their permutation null (``null``:
    :func:`analysis.predicting.nulls.exp3_null`) and the suffix hardness's gap (``paired``:
    :func:`analysis.predicting.steps.exp3_gap_tests`)."""
    return [*(exp3_auc_claim(i, table, paper, null) for i in EXP3_ROWS), exp3_gap_claim(paired, paper, null)]


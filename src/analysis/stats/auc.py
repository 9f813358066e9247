"""AUC-ROC, its test against chance, and DeLong's paired test of two AUCs of the same examples."""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import mannwhitneyu, norm, rankdata
from sklearn.metrics import roc_auc_score

from analysis.stats.result import Estimate, StatsError


def _binary(y) -> np.ndarray:
    arr = np.asarray(y)
    if arr.ndim != 1 or not np.isin(arr, (0, 1)).all():
        raise StatsError("y must be a 1-d array of 0/1 labels")
    return arr.astype(int)


def auc(y, score) -> float:
    """AUC-ROC of ``score`` for labels ``y`` (``sklearn.metrics.roc_auc_score``)."""
    y = _binary(y)
    s = np.asarray(score, dtype=float)
    if s.shape != y.shape:
        raise StatsError(f"y and score differ in shape: {y.shape} vs {s.shape}")
    if y.min() == y.max():
        raise StatsError(f"the AUC needs both classes; all {len(y)} labels are the same")
    return float(roc_auc_score(y, s))


def auc_test(y, score) -> Estimate:
    """The AUC with the two-sided Mann–Whitney p-value of AUC = 0.5 (the AUC is
    U / (n₊ n₋)) and the Hanley–McNeil 95% interval; ``n`` is the number of
    examples. Whether an AUC below 0.5 supports a claim is the caller's
    decision (see :func:`analysis.core.claims.directional`)."""
    value = auc(y, score)
    y = _binary(y)
    s = np.asarray(score, dtype=float)
    pos, neg = s[y == 1], s[y == 0]
    p = float(mannwhitneyu(pos, neg, alternative="two-sided").pvalue)
    n1, n0 = len(pos), len(neg)
    q1, q2 = value / (2 - value), 2 * value**2 / (1 + value)
    var = (value * (1 - value) + (n1 - 1) * (q1 - value**2) + (n0 - 1) * (q2 - value**2)) / (n1 * n0)
    se = math.sqrt(max(var, 0.0))
    return Estimate(value, max(0.0, value - 1.96 * se), min(1.0, value + 1.96 * se), p, n1 + n0,
                    "AUC, Mann–Whitney U")


def _placements(y: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DeLong's structural components of one score: for each positive, the share of negatives it
    outranks (ties count one half), and for each negative, the share of positives that outrank it."""
    pos, neg = s[y == 1], s[y == 0]
    n1, n0 = len(pos), len(neg)
    every = rankdata(s)
    v10 = (every[y == 1] - rankdata(pos)) / n0
    v01 = 1.0 - (every[y == 0] - rankdata(neg)) / n1
    return v10, v01


def auc_diff_se(y, score_a, score_b) -> float:
    """DeLong's standard error of ``auc(y, score_a) − auc(y, score_b)``, two scores of the same
    examples (DeLong, DeLong & Clarke-Pearson 1988): the variance of the difference of the
    positives' placements over the positives plus that of the negatives' over the negatives."""
    y = _binary(y)
    a, b = (np.asarray(v, dtype=float) for v in (score_a, score_b))
    if a.shape != y.shape or b.shape != y.shape:
        raise StatsError(f"y and the scores differ in shape: {y.shape}, {a.shape}, {b.shape}")
    n1, n0 = int(y.sum()), int(len(y) - y.sum())
    if n1 < 2 or n0 < 2:
        raise StatsError(f"DeLong's variance needs 2 of each class, got {n1} positives and {n0} negatives")
    (a10, a01), (b10, b01) = _placements(y, a), _placements(y, b)
    var = np.var(a10 - b10, ddof=1) / n1 + np.var(a01 - b01, ddof=1) / n0
    return float(math.sqrt(max(var, 0.0)))


def auc_diff_test(y, score_a, score_b, level: float = 0.95) -> Estimate:
    """The difference ``auc(y, score_a) − auc(y, score_b)`` of two scores of the same examples, with
    DeLong's paired test of no difference (two-sided, normal) and its ``level`` interval; ``n`` is
    the number of examples."""
    value = auc(y, score_a) - auc(y, score_b)
    se = auc_diff_se(y, score_a, score_b)
    z = float(norm.ppf(0.5 + level / 2))
    p = float(2 * norm.sf(abs(value) / se)) if se > 0 else (1.0 if value == 0 else 0.0)
    return Estimate(value, value - z * se, value + z * se, p, len(np.asarray(y)), "AUC difference, DeLong")

"""AUC-ROC, and its test against chance."""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import mannwhitneyu
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

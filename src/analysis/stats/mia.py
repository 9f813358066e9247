"""How well a membership score separates members from non-members: AUC, TPR at a
low FPR, stratified bootstrap intervals, and the AUC within groups.

A membership-inference attack gives every candidate a score, higher meaning "more
likely a member". :func:`tpr_at_fpr` is the true-positive rate at the strictest
threshold whose false-positive rate is at most ``fpr`` (Carlini et al. 2022's
"TPR at low FPR"); :func:`attack_metrics` gives it and the AUC with percentile
intervals from resampling members and non-members separately (so every resample
keeps both classes); :func:`grouped_auc` is the AUC over (member, non-member)
pairs of the same group only (sets of one model, whose scores are on one scale).
Used by the entropy chapter's membership-inference panel.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.stats import rankdata
from sklearn.metrics import roc_curve

from analysis.core.cache import memoized
from analysis.stats.auc import auc_test
from analysis.stats.lines import percentile_interval
from analysis.stats.result import Estimate, StatsError

#: the false-positive rate of the low-FPR operating point
LOW_FPR = 0.01


def _checked(y, score) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y)
    s = np.asarray(score, dtype=float)
    if y.ndim != 1 or not np.isin(y, (0, 1)).all():
        raise StatsError("y must be a 1-d array of 0/1 labels")
    if s.shape != y.shape:
        raise StatsError(f"y and score differ in shape: {y.shape} vs {s.shape}")
    if not np.isfinite(s).all():
        raise StatsError("every score must be finite")
    if y.min() == y.max():
        raise StatsError(f"members and non-members are both needed; all {len(y)} labels are the same")
    return y.astype(int), s


def tpr_at_fpr(y, score, fpr: float = LOW_FPR) -> float:
    """The largest true-positive rate of the rule "member when score ≥ t" over the
    thresholds t whose false-positive rate is at most ``fpr``. With fewer than
    1 / ``fpr`` non-members, that allows no false positive at all: t must lie
    above every non-member's score."""
    if not 0 <= fpr < 1:
        raise StatsError(f"fpr must be in [0, 1), got {fpr!r}")
    y, s = _checked(y, score)
    f, t, _ = roc_curve(y, s, drop_intermediate=False)
    return float(t[f <= fpr + 1e-12].max())


def _allowed_false_positives(n_neg: int, fpr: float) -> int:
    """The most false positives c whose rate c / n_neg is at most ``fpr`` (with the
    tolerance :func:`tpr_at_fpr` reads ``roc_curve``'s rates with)."""
    counts = np.arange(n_neg + 1)
    return int(counts[counts / n_neg <= fpr + 1e-12].max())


def _auc_tpr(pos: np.ndarray, neg: np.ndarray, allowed: int) -> tuple[float, float]:
    """AUC and TPR at the low FPR of one resample, without ``sklearn``'s per-call
    checks: the AUC as the Mann–Whitney U over n₊ n₋ (average ranks for ties), and
    the TPR as the share of members above the (allowed + 1)-th highest non-member
    score (the strictest threshold that lets in more false positives), or 1 when
    every threshold is allowed. Equal to :func:`~analysis.stats.auc.auc` and
    :func:`tpr_at_fpr` (tested against both)."""
    n1, n0 = len(pos), len(neg)
    ranks = rankdata(np.concatenate([pos, neg]))
    a = (ranks[:n1].sum() - n1 * (n1 + 1) / 2) / (n1 * n0)
    if allowed >= n0:
        return float(a), 1.0
    edge = np.partition(neg, n0 - 1 - allowed)[n0 - 1 - allowed]
    return float(a), float((pos > edge).sum() / n1)


def bootstrap_metrics(y, score, n_boot: int = 1000, seed: int = 0, fpr: float = LOW_FPR
                      ) -> tuple[np.ndarray, np.ndarray]:
    """AUC and TPR at ``fpr`` on ``n_boot`` resamples that draw members and
    non-members separately, with replacement, each class at its own size."""
    if n_boot < 1:
        raise StatsError(f"n_boot must be a positive integer, got {n_boot!r}")
    if not 0 <= fpr < 1:
        raise StatsError(f"fpr must be in [0, 1), got {fpr!r}")
    y, s = _checked(y, score)
    pos, neg = s[y == 1], s[y == 0]
    allowed = _allowed_false_positives(len(neg), fpr)
    rng = np.random.default_rng(seed)
    aucs, tprs = np.empty(n_boot), np.empty(n_boot)
    for b in range(n_boot):
        aucs[b], tprs[b] = _auc_tpr(rng.choice(pos, len(pos)), rng.choice(neg, len(neg)), allowed)
    return aucs, tprs


# computed once per labels, scores and settings, then read from the artifact cache
@memoized("mia-metrics", code=("analysis.stats.auc", "analysis.stats.lines", "analysis.stats.result"),
          packages=("scipy", "scikit-learn"))
def attack_metrics(y, score, n_boot: int = 1000, seed: int = 0, fpr: float = LOW_FPR
                   ) -> dict[str, Estimate]:
    """``auc`` (with its two-sided Mann–Whitney p of AUC = 0.5) and ``tpr`` (the TPR
    at ``fpr``), each with the 95% percentile interval of :func:`bootstrap_metrics`;
    ``n`` counts the candidates."""
    y, s = _checked(y, score)
    aucs, tprs = bootstrap_metrics(y, s, n_boot, seed, fpr)
    test = auc_test(y, s)
    a_lo, a_hi = percentile_interval(aucs)
    t_lo, t_hi = percentile_interval(tprs)
    return {"auc": Estimate(test.value, a_lo, a_hi, test.p, len(y),
                            "AUC, Mann–Whitney U; stratified bootstrap"),
            "tpr": Estimate(tpr_at_fpr(y, s, fpr), t_lo, t_hi, float("nan"), len(y),
                            f"TPR at FPR ≤ {fpr:g}; stratified bootstrap")}


def grouped_auc(y, score, groups: Sequence) -> Estimate:
    """The AUC over the (member, non-member) pairs that share a group: the share of
    such pairs in which the member scores higher, ties counting one half. ``n`` is
    the number of pairs; groups with one class only add none. With one group it is
    the ordinary AUC."""
    y = np.asarray(y)
    s = np.asarray(score, dtype=float)
    g = np.asarray(groups, dtype=object)
    if not (len(y) == len(s) == len(g)) or not np.isin(y, (0, 1)).all():
        raise StatsError("y (0/1), score and groups must be 1-d and of one length")
    wins, pairs = 0.0, 0
    for key in dict.fromkeys(g.tolist()):
        here = g == key
        pos, neg = s[here & (y == 1)], s[here & (y == 0)]
        diff = pos[:, None] - neg[None, :]
        wins += float((diff > 0).sum() + 0.5 * (diff == 0).sum())
        pairs += diff.size
    if pairs == 0:
        raise StatsError("no group holds both a member and a non-member")
    return Estimate(wins / pairs, n=pairs, method="AUC over (member, non-member) pairs within a group")

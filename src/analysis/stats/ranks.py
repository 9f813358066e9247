"""Rank statistics: Spearman and Kendall correlations over paired values, and the sign test.

Every function takes two paired arrays, drops the pairs where either value is not
finite, and returns an :class:`~analysis.stats.result.Estimate` (``value``, the
p-value ``p`` of the test against no association, the ``n`` pairs used). Which
direction a claim needs is the caller's decision
(:func:`analysis.core.claims.directional`).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import binomtest, kendalltau, spearmanr

from analysis.stats.result import Estimate, StatsError

#: the fewest finite pairs a rank correlation is computed on
MIN_RANK_PAIRS = 3


def finite_pairs(a, b, what: str = "a rank correlation") -> tuple[np.ndarray, np.ndarray]:
    """The pairs of ``a`` and ``b`` where both are finite; :class:`StatsError` when
    the arrays are not 1-d of one length, or fewer than :data:`MIN_RANK_PAIRS`
    pairs are left (``what`` names the statistic in the message)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise StatsError(f"{what}: the two arrays must be 1-d and of the same length, "
                         f"got shapes {a.shape} and {b.shape}")
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < MIN_RANK_PAIRS:
        raise StatsError(f"{what} needs at least {MIN_RANK_PAIRS} pairs with finite values, "
                         f"got {int(ok.sum())}")
    return a[ok], b[ok]


def spearman(a, b, what: str = "Spearman's ρ") -> Estimate:
    """Spearman's ρ of the finite pairs with its two-sided p-value
    (``scipy.stats.spearmanr``); NaN ρ and p when one side is constant.
    :class:`StatsError` with fewer than three finite pairs."""
    a, b = finite_pairs(a, b, what)
    res = spearmanr(a, b)
    return Estimate(float(res.statistic), p=float(res.pvalue), n=len(a), method="Spearman's ρ")


def rank_trend(x, y) -> Estimate:
    """Spearman's ρ of ``y`` against ``x`` (a measure against model size, say) over
    the finite pairs; NaN value and p, never an error, with fewer than three finite
    pairs or a constant side. ``n`` is the number of finite pairs."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    n = int(ok.sum())
    if n < MIN_RANK_PAIRS or np.ptp(y[ok]) == 0 or np.ptp(x[ok]) == 0:
        return Estimate(np.nan, n=n, method="Spearman's ρ")
    res = spearmanr(x[ok], y[ok])
    return Estimate(float(res.statistic), p=float(res.pvalue), n=n, method="Spearman's ρ")


def kendall_distance(a, b, what: str = "Kendall tau distance") -> Estimate:
    """Normalized Kendall tau distance between two rankings, ``(1 - τ_b) / 2``:
    0 for the same order, 1 for the reverse, 0.5 for unrelated orders. The p-value
    is that of ``scipy.stats.kendalltau`` for τ_b = 0. :class:`StatsError` with
    fewer than three finite pairs."""
    a, b = finite_pairs(a, b, what)
    res = kendalltau(a, b)
    return Estimate(float((1 - res.statistic) / 2), p=float(res.pvalue), n=len(a),
                    method="Kendall tau distance")


def sign_test(wins: int, n: int) -> Estimate:
    """The two-sided sign test: ``wins`` of ``n`` paired comparisons went one way;
    the value is the share ``wins / n`` and p that of ``scipy.stats.binomtest``
    against one half. NaN for ``n = 0``."""
    wins, n = int(wins), int(n)
    if n < 0 or not 0 <= wins <= n:
        raise StatsError(f"the sign test needs 0 ≤ wins ≤ n, got wins = {wins}, n = {n}")
    if n == 0:
        return Estimate(np.nan, n=0, method="sign test")
    return Estimate(wins / n, p=float(binomtest(wins, n, 0.5).pvalue), n=n, method="sign test")

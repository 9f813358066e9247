"""Two proportions compared: their difference, its interval and a one-sided test."""

from __future__ import annotations

import math

from scipy.stats import fisher_exact, norm
from statsmodels.stats.proportion import confint_proportions_2indep

from analysis.stats.intervals import CI_ALPHA
from analysis.stats.result import Estimate, StatsError


def _counts(k: int, n: int, which: str) -> tuple[int, int]:
    k, n = int(k), int(n)
    if n < 1 or not 0 <= k <= n:
        raise StatsError(f"{which}: need 0 ≤ k ≤ n and n ≥ 1, got k = {k}, n = {n}")
    return k, n


def greater_p(k1: int, n1: int, k2: int, n2: int) -> float:
    """One-sided Fisher exact p-value (scipy) that ``k1 / n1`` exceeds ``k2 / n2``."""
    k1, n1 = _counts(k1, n1, "first")
    k2, n2 = _counts(k2, n2, "second")
    return float(fisher_exact([[k1, n1 - k1], [k2, n2 - k2]], alternative="greater")[1])


def rate_difference(k1: int, n1: int, k2: int, n2: int, alpha: float = CI_ALPHA) -> Estimate:
    """``k1/n1 − k2/n2`` with Newcombe's hybrid score interval (statsmodels'
    ``confint_proportions_2indep``, ``method="newcomb"``) at level 1 − ``alpha``
    and :func:`greater_p`; ``n`` is ``n1 + n2``. Whether a difference below 0
    supports a claim is the caller's decision."""
    k1, n1 = _counts(k1, n1, "first")
    k2, n2 = _counts(k2, n2, "second")
    lo, hi = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff", alpha=alpha)
    return Estimate(k1 / n1 - k2 / n2, float(lo), float(hi), greater_p(k1, n1, k2, n2), n1 + n2,
                    "difference of proportions, Newcombe interval, one-sided Fisher exact test")


def zero_rate_min_n(rate: float, alpha: float = CI_ALPHA) -> int:
    """The fewest trials at which none of them succeeding rules out ``rate``: the
    smallest n whose Wilson upper bound of 0 / n lies below ``rate``. That bound
    is z² / (n + z²), so n is the first integer above z² (1 − rate) / rate."""
    if not 0 < rate < 1:
        raise StatsError(f"rate must lie in (0, 1), got {rate}")
    z2 = float(norm.ppf(1 - alpha / 2)) ** 2
    return math.floor(z2 * (1 - rate) / rate) + 1

"""Samples sized by the interval they must give: the difference of two rates.

A chapter that reports a difference of two proportions with Newcombe's interval
(:func:`analysis.stats.proportions.rate_difference`) can state the half width it
wants (for example ±3 points at 95%) and draw the sample that reaches it:

* :func:`difference_half_width`: the half width, (hi − lo) / 2, of that interval
  at given rates and group sizes (the counts taken as their expected values,
  ``p · n``, through the same statsmodels call);
* :func:`n_for_difference`: the fewest trials per group (equal groups) at which
  that half width is at most the target;
* :func:`planning_rate` and :func:`two_stage_n`: the same from a pilot's counts,
  its rates replaced by conservative ones, so that a pilot that saw nothing does
  not promise a small sample.

At rates 0 and 0 each Wilson bound of 0 / n is z² / (n + z²), and Newcombe's
interval is [−z²/(n+z²), z²/(n+z²)]: ±3 points at 95% needs n ≥ z² (1 − h) / h,
124.2, so 125 per group. No rate needs fewer: 0 and 0 is the narrowest case.
"""

from __future__ import annotations

import math
import numbers

from scipy.stats import norm
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from analysis.stats.intervals import CI_ALPHA
from analysis.stats.result import StatsError

#: the one-sided confidence that a pilot's rate lies below the rate the plan uses
PLANNING_ASSURANCE = 0.8

#: the largest group :func:`n_for_difference` searches when no ``n_max`` is given
N_SEARCH_MAX = 10_000_000


def _rate(p: float, name: str) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise StatsError(f"{name} must be a rate in [0, 1], got {p!r}")
    return float(p)


def _size(n, name: str) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise StatsError(f"{name} must be a positive integer, got {n!r}")
    return int(n)


def _half_width_target(half_width: float) -> float:
    if isinstance(half_width, bool) or not isinstance(half_width, (int, float)) or not 0 < half_width < 1:
        raise StatsError(f"half_width must lie in (0, 1) (a share: 0.03 is ±3 points), got {half_width!r}")
    return float(half_width)


def _alpha(alpha: float) -> float:
    if not 0 < alpha < 1:
        raise StatsError(f"alpha must lie in (0, 1), got {alpha!r}")
    return float(alpha)


def difference_half_width(p1: float, n1: int, p2: float, n2: int, alpha: float = CI_ALPHA) -> float:
    """Half the width, (hi − lo) / 2, of Newcombe's interval of ``p1 − p2`` at level
    1 − ``alpha`` with ``n1`` and ``n2`` trials, the counts at their expected values
    ``p1 n1`` and ``p2 n2`` (statsmodels' ``confint_proportions_2indep``,
    ``method="newcomb"``, as :func:`~analysis.stats.proportions.rate_difference`)."""
    p1, p2 = _rate(p1, "p1"), _rate(p2, "p2")
    n1, n2 = _size(n1, "n1"), _size(n2, "n2")
    lo, hi = confint_proportions_2indep(p1 * n1, n1, p2 * n2, n2, method="newcomb", compare="diff",
                                        alpha=_alpha(alpha))
    return float(hi - lo) / 2


def n_for_difference(p1: float, p2: float, half_width: float, alpha: float = CI_ALPHA,
                     n_max: int | None = None) -> int:
    """The fewest trials per group (both groups equal) at which Newcombe's interval
    of ``p1 − p2`` has half width at most ``half_width``
    (:func:`difference_half_width`), by binary search; ``n_max`` (default
    :data:`N_SEARCH_MAX`) when even ``n_max`` does not reach it."""
    p1, p2 = _rate(p1, "p1"), _rate(p2, "p2")
    target = _half_width_target(half_width)
    n_max = N_SEARCH_MAX if n_max is None else _size(n_max, "n_max")
    if difference_half_width(p1, n_max, p2, n_max, alpha) > target:
        return n_max
    lo, hi = 0, n_max  # the half width misses at lo (or lo is 0) and reaches it at hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if difference_half_width(p1, mid, p2, mid, alpha) <= target:
            hi = mid
        else:
            lo = mid
    return hi


def planning_rate(k: int, n: int, assurance: float = PLANNING_ASSURANCE) -> float:
    """The rate a plan assumes after ``k`` successes in ``n`` pilot trials: the
    point of the pilot's Wilson interval nearest 1/2, the interval taken at
    one-sided level ``assurance`` (two-sided 2·``assurance`` − 1).

    The width of a rate's interval grows as the rate nears 1/2, so this is the
    rate, among those the pilot does not rule out at that level, that asks for
    the largest sample: for a pilot below one half its Wilson upper bound capped
    at 0.5. The point estimate would not do: a pilot at 0 / 60 would plan at rate
    0, the narrowest case (125 per group for ±3 points), and a single success in
    the full sample would then miss the target (1 / 125 against 0 / 125 gives
    ±3.3 points). Planning on an upper confidence limit of the pilot's variance
    at about 80% is the usual compromise (Browne 1995, Stat. Med. 14:1933): it
    reaches the target about four times in five without planning for the worst
    rate the pilot allows."""
    if not 0.5 < assurance < 1:
        raise StatsError(f"assurance must lie in (0.5, 1), got {assurance!r}")
    n = _size(n, "n")
    if isinstance(k, bool) or int(k) != k or not 0 <= k <= n:
        raise StatsError(f"k must be an integer in [0, n = {n}], got {k!r}")
    lo, hi = proportion_confint(int(k), n, alpha=2 * (1 - assurance), method="wilson")
    return float(min(max(0.5, lo), hi))


def two_stage_n(k1: int, n1: int, k2: int, n2: int, half_width: float, alpha: float = CI_ALPHA,
                n_max: int | None = None, assurance: float = PLANNING_ASSURANCE) -> int:
    """Trials per group for a difference whose Newcombe interval should have half
    width at most ``half_width``, planned from a pilot of ``k1`` of ``n1`` and
    ``k2`` of ``n2``: :func:`n_for_difference` at the pilot's
    :func:`planning_rate` (its rates taken conservatively, see there), never
    fewer than the pilot's larger group (its trials are already spent and count),
    and at most ``n_max`` (the population; None: no cap)."""
    _half_width_target(half_width)
    r1, r2 = planning_rate(k1, n1, assurance), planning_rate(k2, n2, assurance)
    cap = None if n_max is None else _size(n_max, "n_max")
    n = max(n_for_difference(r1, r2, half_width, alpha, n_max=cap), int(n1), int(n2))
    return n if cap is None else min(n, cap)


def zero_rates_n(half_width: float, alpha: float = CI_ALPHA) -> int:
    """:func:`n_for_difference` at rates 0 and 0 in closed form: the first integer
    n with z² / (n + z²) ≤ ``half_width``, the smallest sample any rates need."""
    h = _half_width_target(half_width)
    z2 = float(norm.ppf(1 - _alpha(alpha) / 2)) ** 2
    return math.ceil(z2 * (1 - h) / h)

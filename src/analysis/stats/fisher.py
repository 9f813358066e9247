"""Pearson correlations compared through Fisher's z transform.

``z = atanh(r)`` is close to normal with standard error ``1 / sqrt(n − 3)`` for a
correlation over ``n`` points; two correlations are compared by the difference of
their z, as if from independent samples. Which direction a claim needs is the
caller's decision (:func:`analysis.core.claims.directional`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm

from analysis.stats.result import Estimate, StatsError

#: r is clipped this far inside ±1 before the transform, so a perfect line stays finite
R_EDGE = 1e-12


def _z(r: float, n: int, what: str) -> float:
    r = float(r)
    if not math.isfinite(r) or not -1 <= r <= 1:
        raise StatsError(f"{what}: r must be a number in [-1, 1], got {r!r}")
    if int(n) < 4:
        raise StatsError(f"{what}: Fisher's z needs at least 4 points, got {n}")
    return float(np.arctanh(np.clip(r, -1 + R_EDGE, 1 - R_EDGE)))


def compare_correlations(r1: float, n1: int, r2: float, n2: int) -> Estimate:
    """The difference ``r1 − r2`` of two Pearson correlations over ``n1`` and ``n2``
    points, with the two-sided p-value of no difference,
    ``z = (atanh r1 − atanh r2) / sqrt(1/(n1 − 3) + 1/(n2 − 3))``; ``n`` is the
    smaller of the two. :class:`StatsError` for an r outside [−1, 1] or fewer than
    4 points."""
    z1, z2 = _z(r1, n1, "the first correlation"), _z(r2, n2, "the second correlation")
    stat = (z1 - z2) / math.sqrt(1 / (int(n1) - 3) + 1 / (int(n2) - 3))
    return Estimate(float(r1) - float(r2), p=float(2 * norm.sf(abs(stat))), n=min(int(n1), int(n2)),
                    method="Fisher z, two correlations")

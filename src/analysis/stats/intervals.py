"""Intervals of proportions."""

from __future__ import annotations

import numpy as np
from statsmodels.stats.proportion import proportion_confint

#: two-sided level of the book's proportion intervals (95%)
CI_ALPHA = 0.05


def wilson_interval(matched, total, alpha: float = CI_ALPHA) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval, clipped to [0, 1], via statsmodels.

    statsmodels uses ``z = Φ⁻¹(1 - α/2) = 1.959964``; a source that hard-codes
    ``z = 1.96`` differs by about 1e-5 in the bounds.
    """
    lo, hi = proportion_confint(matched, total, alpha=alpha, method="wilson")
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)

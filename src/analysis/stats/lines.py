"""Least-squares lines and percentile intervals."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import linregress

from analysis.stats.result import StatsError


@dataclass(frozen=True)
class Fit:
    """A least-squares line ``y = slope·x + intercept`` with Pearson ``r``, the
    p-value of ``r = 0`` and the ``n`` points it was fitted on."""

    slope: float
    intercept: float
    r: float
    p: float
    n: int

    def predict(self, x):
        return self.slope * np.asarray(x, dtype=float) + self.intercept


def fit_line(x, y, what: str = "points") -> Fit:
    """Ordinary least squares of ``y`` on ``x`` (scipy's ``linregress``) over the
    finite points; :class:`StatsError` with fewer than 3 points or a constant ``x``
    (``what`` names the points in the message)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if len(x) < 3:
        raise StatsError(f"a line needs at least 3 {what}, got {len(x)}")
    if np.ptp(x) == 0:
        raise StatsError(f"every one of the {what} has the same x; there is no line to fit")
    res = linregress(x, y)
    return Fit(float(res.slope), float(res.intercept), float(res.rvalue), float(res.pvalue), int(len(x)))


def percentile_interval(values, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of bootstrap values (NaN, NaN when none is finite)."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return (np.nan, np.nan)
    lo, hi = np.quantile(values, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(lo), float(hi)

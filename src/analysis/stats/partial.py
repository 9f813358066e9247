"""Partial rank correlation: Spearman's ρ of two variables with a third held fixed.

**Definition.** The partial Spearman correlation of ``x`` and ``y`` given ``z`` is
the partial (Pearson) correlation of their *ranks*:

    ρ_xy·z = (r_xy − r_xz r_yz) / sqrt((1 − r_xz²)(1 − r_yz²))

with ``r`` the Spearman correlations (ranks with ties averaged). This is exactly the
Pearson correlation of the residuals of rank(x) and rank(y), each regressed linearly
on rank(z) (:func:`residual_rank_corr`, the same number by another route, which the
tests check): the rank transform is applied once, to each variable on its own, and
the linear partial correlation is taken on the ranks. The book uses it this way
(rather than ranking residuals of a regression on the raw values) because a rank
correlation should not depend on the scale of ``z`` (a count or its log give the
same answer), and because the formula vectorizes over many model sides and many
resamples at once (:func:`partial_rows`).

The p-value of :func:`partial_spearman` is the analytic one (a t statistic on
``n − 3`` degrees of freedom), valid for independent rows only; a caller whose rows
share units tests with a permutation or a bootstrap over the units instead.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata
from scipy.stats import t as t_dist

from analysis.stats.result import Estimate, StatsError

#: the fewest finite rows a partial correlation is computed on (one more than the
#: degrees of freedom it spends)
MIN_PARTIAL_ROWS = 4


def _finite3(x, y, z) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x, y, z = (np.asarray(v, dtype=float) for v in (x, y, z))
    if not (x.shape == y.shape == z.shape) or x.ndim != 1:
        raise StatsError(f"a partial correlation needs three 1-d arrays of one length, got shapes "
                         f"{x.shape}, {y.shape} and {z.shape}")
    ok = np.isfinite(x) & np.isfinite(y) & np.isfinite(z)
    if ok.sum() < MIN_PARTIAL_ROWS:
        raise StatsError(f"a partial correlation needs at least {MIN_PARTIAL_ROWS} rows with three finite "
                         f"values, got {int(ok.sum())}")
    return x[ok], y[ok], z[ok]


def _corr(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson correlation along the last axis (broadcast); NaN for a constant side."""
    a = a - a.mean(axis=-1, keepdims=True)
    b = b - b.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (a * b).sum(axis=-1) / np.sqrt((a * a).sum(axis=-1) * (b * b).sum(axis=-1))


def partial_from_r(r_xy, r_xz, r_yz):
    """``(r_xy − r_xz r_yz) / sqrt((1 − r_xz²)(1 − r_yz²))``, elementwise; NaN where a
    denominator vanishes (``z`` ranks perfectly with ``x`` or ``y``)."""
    r_xy, r_xz, r_yz = (np.asarray(v, dtype=float) for v in (r_xy, r_xz, r_yz))
    with np.errstate(invalid="ignore", divide="ignore"):
        den = np.sqrt((1 - r_xz ** 2) * (1 - r_yz ** 2))
        out = (r_xy - r_xz * r_yz) / den
    return np.where(den > 1e-12, out, np.nan)


def partial_rows(rx: np.ndarray, ry: np.ndarray, rz: np.ndarray) -> np.ndarray:
    """The partial correlation of ranks ``rx`` and each row of ``ry`` given ``rz``
    (ranks already taken; ``ry`` may be 2-d, one row per model or per resample, and
    ``rx``, ``rz`` broadcast against it)."""
    return partial_from_r(_corr(rx, ry), _corr(rx, rz), _corr(ry, rz))


def partial_spearman(x, y, z) -> Estimate:
    """Spearman's ρ of ``x`` and ``y`` with ``z`` held fixed (the module's definition),
    over the rows where all three are finite, with the analytic two-sided p-value (t on
    ``n − 3`` degrees of freedom; rows as independent). NaN value and p when a side is
    constant or ``z`` ranks perfectly with ``x`` or ``y``. :class:`StatsError` with fewer
    than :data:`MIN_PARTIAL_ROWS` rows."""
    x, y, z = _finite3(x, y, z)
    n = len(x)
    rho = float(partial_rows(rankdata(x), rankdata(y), rankdata(z)))
    if not np.isfinite(rho):
        return Estimate(np.nan, n=n, method="partial Spearman")
    df = n - 3
    t = rho * np.sqrt(df / max(1e-300, 1 - rho ** 2))
    p = float(2 * t_dist.sf(abs(t), df)) if abs(rho) < 1 else 0.0
    return Estimate(rho, p=p, n=n, method="partial Spearman")


def residual_rank_corr(x, y, z) -> float:
    """The same partial correlation by residuals: the Pearson correlation of the
    residuals of rank(x) and of rank(y) after a least-squares line on rank(z)."""
    x, y, z = _finite3(x, y, z)
    rx, ry, rz = rankdata(x), rankdata(y), rankdata(z)
    design = np.column_stack([np.ones_like(rz), rz])
    ex = rx - design @ np.linalg.lstsq(design, rx, rcond=None)[0]
    ey = ry - design @ np.linalg.lstsq(design, ry, rcond=None)[0]
    return float(_corr(ex, ey))

"""Entropy estimators of a vector of symbol counts: the plug-in estimate and its
Miller–Madow bias correction.

The plug-in (maximum-likelihood) entropy ``Ĥ = −Σ p̂ log p̂`` of ``N`` draws is
biased low, by about ``(K − 1) / (2N)`` nats for ``K`` symbols with non-zero
probability; Miller–Madow adds that term back with ``K`` the number of distinct
symbols observed (Miller 1955). Used by the entropy chapter to ask whether its
level-set line is a sample-size effect. Pure functions: no I/O.
"""

from __future__ import annotations

import math

import numpy as np

from analysis.stats.result import StatsError


def _counts(counts) -> np.ndarray:
    c = np.asarray(counts, dtype=float).ravel()
    if c.size and (not np.isfinite(c).all() or (c < 0).any()):
        raise StatsError("counts must be finite and non-negative")
    c = c[c > 0]
    if c.size == 0:
        raise StatsError("cannot take the entropy of an empty set of counts")
    return c


def _base(base: float) -> float:
    if not (isinstance(base, (int, float)) and base > 0 and base != 1):
        raise StatsError(f"base must be a positive number other than 1, got {base!r}")
    return math.log(base)


def plugin_entropy(counts, base: float = 2.0) -> float:
    """Plug-in entropy ``−Σ p̂ log p̂`` of the counts (zeros ignored), in units of ``base``."""
    log_base = _base(base)
    c = _counts(counts)
    p = c / c.sum()
    return float(-(p * np.log(p)).sum() / log_base)


def miller_madow_correction(n_symbols: int, n_draws: int, base: float = 2.0) -> float:
    """The Miller–Madow term ``(K − 1) / (2N)`` nats, in units of ``base``, for ``K``
    distinct observed symbols among ``N`` draws."""
    log_base = _base(base)
    if n_draws < 1 or n_symbols < 1 or n_symbols > n_draws:
        raise StatsError(f"need 1 ≤ K ≤ N, got K = {n_symbols!r} and N = {n_draws!r}")
    return (n_symbols - 1) / (2 * n_draws) / log_base


def miller_madow_entropy(counts, base: float = 2.0) -> float:
    """Miller–Madow entropy: the plug-in estimate plus ``(K − 1) / (2N)`` nats, ``K``
    the number of distinct observed symbols and ``N`` the number of draws."""
    c = _counts(counts)
    return plugin_entropy(c, base) + miller_madow_correction(int(c.size), int(round(c.sum())), base)

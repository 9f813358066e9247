"""The blocked sign-permutation test of a mean of block scores.

Under the null each block score :math:`s_j` is symmetric about zero, so the null
distribution of :math:`\\bar s = K^{-1}\\sum_j s_j` is that of
:math:`K^{-1}\\sum_j\\epsilon_j s_j` over the :math:`2^K` sign vectors
:math:`\\epsilon\\in\\{-1,1\\}^K` (each block flipped as a whole). The size
chapter's relative test (Section 3.4 of its source) is this test on the per-text
blocks of two models' accuracy profiles.

Direct enumeration is used up to K = 16 and an exact meet-in-the-middle count
(two halves of :math:`2^{K/2}` sums each) up to ``exact_max_k`` (default 40);
above it a seeded Monte Carlo.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.stats.result import StatsError

__all__ = ["ALTERNATIVES", "SignTestResult", "sign_permutation_test"]

ALTERNATIVES = ("greater", "less", "two-sided")
#: below this K the exact test enumerates every flip directly
_DIRECT_MAX_K = 16
_CHUNK = 1 << 16


@dataclass(frozen=True)
class SignTestResult:
    """Result of :func:`sign_permutation_test`.

    ``statistic``: mean of the :math:`s_j`; ``pvalue``; ``k``: number of blocks
    :math:`K`; ``exact``: whether all :math:`2^K` flips were counted;
    ``n_flips``: :math:`2^K` if exact, else the Monte Carlo count; ``seed``:
    the Monte Carlo seed (None if exact).
    """

    statistic: float
    pvalue: float
    k: int
    exact: bool
    n_flips: int
    seed: int | None = None


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _flip_sums(s: np.ndarray) -> np.ndarray:
    """All :math:`2^K` sums :math:`\\sum_j \\epsilon_j s_j`, :math:`\\epsilon\\in\\{-1,1\\}^K`."""
    sums = np.zeros(1)
    for x in s:
        sums = np.concatenate([sums + x, sums - x])
    return sums


def _count_at_least_direct(s: np.ndarray, threshold: float) -> int:
    """Flips with sum >= threshold, by listing all 2^K sums."""
    return int(np.count_nonzero(_flip_sums(s) >= threshold))


def _count_at_least_split(s: np.ndarray, threshold: float) -> int:
    """Flips with sum >= threshold, by meet in the middle: every sum is a + b with
    a from the first half's 2^(K//2) sums and b from the second half's; for each
    a, count the sorted b >= threshold - a. Exact, O(2^(K/2) K)."""
    half = len(s) // 2
    left, right = _flip_sums(s[:half]), np.sort(_flip_sums(s[half:]))
    total = 0
    for start in range(0, len(left), _CHUNK):
        a = left[start : start + _CHUNK]
        total += int((len(right) - np.searchsorted(right, threshold - a, side="left")).sum())
    return total


def _count_at_least(s: np.ndarray, threshold: float) -> int:
    if len(s) <= _DIRECT_MAX_K:
        return _count_at_least_direct(s, threshold)
    return _count_at_least_split(s, threshold)


def _exact_pvalues(x: np.ndarray, observed: float, tol: float, alternative: str) -> tuple[float, float]:
    """(p_greater, p_less) over all 2^K flips; the one ``alternative`` does not need is NaN."""
    total = 2 ** x.size
    p_g = _count_at_least(x, observed - tol) / total if alternative != "less" else float("nan")
    p_l = _count_at_least(-x, -observed - tol) / total if alternative != "greater" else float("nan")
    return p_g, p_l


def _monte_carlo_pvalues(x: np.ndarray, observed: float, tol: float, n_mc: int,
                         seed: int) -> tuple[float, float]:
    """(p_greater, p_less) over ``n_mc`` seeded sign vectors, each (1 + #) / (1 + n_mc)."""
    rng = np.random.default_rng(seed)
    ge = le = 0
    done = 0
    while done < n_mc:
        m = min(_CHUNK, n_mc - done)
        signs = rng.integers(0, 2, size=(m, x.size), dtype=np.int8) * 2 - 1
        sums = signs @ x
        ge += int(np.count_nonzero(sums >= observed - tol))
        le += int(np.count_nonzero(sums <= observed + tol))
        done += m
    return (ge + 1) / (n_mc + 1), (le + 1) / (n_mc + 1)


def _check(x: np.ndarray, alternative: str, exact_max_k, n_mc) -> None:
    if alternative not in ALTERNATIVES:
        raise StatsError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    if x.size == 0:
        raise StatsError("s must hold at least one block score")
    if not np.all(np.isfinite(x)):
        raise StatsError("s must be finite")
    if not _is_int(exact_max_k) or exact_max_k < 1 or exact_max_k > 60:
        raise StatsError(f"exact_max_k must be an integer in 1..60, got {exact_max_k!r}")
    if not _is_int(n_mc) or n_mc < 1:
        raise StatsError(f"n_mc must be a positive integer, got {n_mc!r}")


def sign_permutation_test(
    s,
    alternative: str = "greater",
    exact_max_k: int = 40,
    n_mc: int = 100_000,
    seed: int = 0,
) -> SignTestResult:
    """One-sided blocked sign-permutation test of the block scores.

    :math:`H_0: E[s_j]\\le 0` against :math:`H_1: E[s_j] > 0`. The p-value is the
    fraction of sign flips whose mean is at least the observed one (ties count,
    within a tolerance of :math:`10^{-9}\\sum_j|s_j|` for rounding).

    Parameters
    ----------
    s : array-like
        Block scores :math:`s_1..s_K`.
    alternative : {"greater", "less", "two-sided"}, default "greater"
        ``"two-sided"`` is :math:`\\min(1, 2\\min(p_{greater}, p_{less}))`, as
        ``scipy.stats.permutation_test``.
    exact_max_k : int, default 40
        Count all :math:`2^K` flips when :math:`K\\le` this (direct listing up to
        K = 16, then an exact meet-in-the-middle count); otherwise Monte Carlo.
    n_mc : int, default 100000
        Monte Carlo sign vectors; the p-value is :math:`(1 + \\#\\{\\ge\\}) / (1 + n_{mc})`.
    seed : int, default 0
        Seed of ``numpy.random.default_rng`` for Monte Carlo.

    Returns
    -------
    SignTestResult
    """
    x = np.asarray(s, dtype=float).ravel()
    _check(x, alternative, exact_max_k, n_mc)
    k = x.size
    observed = float(x.sum())
    tol = 1e-9 * float(np.abs(x).sum())
    if k <= exact_max_k:
        p_g, p_l = _exact_pvalues(x, observed, tol, alternative)
        exact, n_flips, used_seed = True, 2**k, None
    else:
        p_g, p_l = _monte_carlo_pvalues(x, observed, tol, n_mc, seed)
        exact, n_flips, used_seed = False, n_mc, seed
    if alternative == "greater":
        p = p_g
    elif alternative == "less":
        p = p_l
    else:
        p = min(1.0, 2 * min(p_g, p_l))
    return SignTestResult(statistic=observed / k, pvalue=float(p), k=k, exact=exact, n_flips=n_flips,
                          seed=used_seed)

"""Resampling whole units: the cluster bootstrap, the cluster permutation test, a
permutation null computed through a chapter's own pipeline, and Holm's correction.

Rows that share a unit (the pairs of one fact, the positions of one text, the
sequences of one cell) are not independent, so an interval resamples whole units
and a permutation moves whole units' labels:

* :func:`cluster_bootstrap`: a percentile interval of ``statistic(rows)`` over
  resamples of the units with replacement (every row of a drawn unit comes along);
* :func:`permute_labels`: labels shuffled among units (a unit's rows keep one
  label), within strata where the design has them;
* :func:`permutation_null`: the null distribution of any statistic, computed by
  running the pipeline on permuted labels (so whatever it fits, splits or selects
  is redone under the null); its p-value and median;
* :func:`holm`: Holm–Bonferroni adjusted p-values of a family of tests.

All return :class:`~analysis.stats.result.Estimate`, with ``n`` the rows and
``n_units`` the units.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from analysis.stats.result import Estimate, StatsError

#: permutations a computed null needs at least (the issue's protocol: 200 seeded)
MIN_PERMUTATIONS = 200
ALTERNATIVES = ("greater", "less", "two-sided")


def _codes(units) -> tuple[np.ndarray, int]:
    """Each row's unit as an integer code 0..K-1, and K."""
    _, codes = np.unique(np.asarray(units, dtype=object).astype(str), return_inverse=True)
    return codes, int(codes.max()) + 1 if len(codes) else 0


def cluster_bootstrap(statistic: Callable[[np.ndarray], float], units: Sequence, *, n_boot: int = 2000,
                      seed: int = 0, level: float = 0.95) -> Estimate:
    """Percentile interval of ``statistic(rows)`` over resamples of whole units.

    ``statistic`` takes an array of row indices (a resample: each drawn unit's rows,
    a unit drawn twice twice) and returns a number; ``units`` names each row's unit.
    A resample whose statistic is not finite is dropped. ``value`` is the statistic
    on every row.
    """
    codes, k = _codes(units)
    if k < 2:
        raise StatsError(f"a cluster bootstrap needs at least two units, got {k}")
    if n_boot < 1:
        raise StatsError(f"n_boot must be a positive integer, got {n_boot!r}")
    rows_of = [np.flatnonzero(codes == u) for u in range(k)]
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(n_boot):
        pick = rng.integers(0, k, size=k)
        x = float(statistic(np.concatenate([rows_of[u] for u in pick])))
        if np.isfinite(x):
            draws.append(x)
    value = float(statistic(np.arange(len(codes))))
    if not draws:
        return Estimate(value, n=len(codes), n_units=k, method="cluster bootstrap")
    a = (1 - level) / 2
    lo, hi = np.quantile(draws, [a, 1 - a])
    return Estimate(value, float(lo), float(hi), n=len(codes), n_units=k, method="cluster bootstrap")


def permute_labels(labels: Sequence, rng: np.random.Generator, units: Sequence | None = None,
                   strata: Sequence | None = None) -> np.ndarray:
    """``labels`` permuted: among rows, or with ``units`` among units (every row of a
    unit must carry one label, which moves with the unit as a whole), within each
    stratum of ``strata`` (a unit must lie in one stratum)."""
    labels = np.asarray(labels)
    n = len(labels)
    if units is None:
        codes, k = np.arange(n), n
    else:
        codes, k = _codes(units)
        if len(codes) != n:
            raise StatsError(f"units has {len(codes)} rows, labels {n}")
    first = np.full(k, -1)
    for i, u in enumerate(codes):
        if first[u] < 0:
            first[u] = i
        elif labels[i] != labels[first[u]]:
            raise StatsError("every row of a unit must carry the same label to permute units")
    unit_labels = labels[first]
    unit_strata = (np.zeros(k, dtype=int) if strata is None
                   else _codes(np.asarray(strata, dtype=object)[first])[0])
    if strata is not None:
        s_codes = _codes(strata)[0]
        if np.any(s_codes != unit_strata[codes]):
            raise StatsError("a unit must lie in one stratum")
    out = unit_labels.copy()
    for s in np.unique(unit_strata):
        idx = np.flatnonzero(unit_strata == s)
        out[idx] = unit_labels[rng.permutation(idx)]
    return out[codes]


def permutation_null(pipeline: Callable[[np.ndarray], float], labels: Sequence, *,
                     n_perm: int = MIN_PERMUTATIONS, seed: int = 0, units: Sequence | None = None,
                     strata: Sequence | None = None, alternative: str = "greater") -> Estimate:
    """The null of ``pipeline(labels)`` computed by permuting ``labels`` (whole
    ``units``, within ``strata``) and running the pipeline again each time.

    Returns an :class:`Estimate` whose ``value`` is the observed statistic, ``p`` the
    permutation p-value ``(1 + #{null at least as extreme}) / (1 + n_perm)``,
    ``null_value`` the median of the null, ``lo``/``hi`` its 2.5% and 97.5% points,
    and ``method`` ``"permutation"``. A permutation whose statistic is not finite is
    dropped (and counted out of ``n_perm``).
    """
    if alternative not in ALTERNATIVES:
        raise StatsError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    if n_perm < MIN_PERMUTATIONS:
        raise StatsError(f"n_perm must be at least {MIN_PERMUTATIONS}, got {n_perm!r}")
    labels = np.asarray(labels)
    observed = float(pipeline(labels))
    rng = np.random.default_rng(seed)
    null = np.array([float(pipeline(permute_labels(labels, rng, units, strata))) for _ in range(n_perm)])
    null = null[np.isfinite(null)]
    k = _codes(units)[1] if units is not None else len(labels)
    if not len(null) or not np.isfinite(observed):
        return Estimate(observed, n=len(labels), n_units=k, method="permutation")
    return Estimate(observed, *np.quantile(null, [0.025, 0.975]),
                    p=permutation_p(observed, null, alternative), n=len(labels), n_units=k,
                    method="permutation", null_value=float(np.median(null)), n_null=len(null))


def permutation_p(observed: float, null: Sequence[float], alternative: str = "greater") -> float:
    """``(1 + #{null at least as extreme as observed}) / (1 + len(null))``; two-sided
    is twice the smaller tail, at most 1."""
    null = np.asarray(null, dtype=float)
    tol = 1e-12 * max(1.0, abs(observed))
    g = (1 + np.count_nonzero(null >= observed - tol)) / (1 + len(null))
    le = (1 + np.count_nonzero(null <= observed + tol)) / (1 + len(null))
    if alternative == "greater":
        return float(g)
    if alternative == "less":
        return float(le)
    return float(min(1.0, 2 * min(g, le)))


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm–Bonferroni adjusted p-values of one family (a missing p stays missing
    and does not count in the family), equal to ``statsmodels``'
    ``multipletests(method="holm")``."""
    ps = [None if p is None or not np.isfinite(p) else float(p) for p in pvalues]
    idx = [i for i, p in enumerate(ps) if p is not None]
    m = len(idx)
    out: list[float | None] = [None] * len(ps)
    running = 0.0
    for rank, i in enumerate(sorted(idx, key=lambda j: ps[j])):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        out[i] = running
    return out

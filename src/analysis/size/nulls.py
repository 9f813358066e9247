"""The size chapter's computed nulls and its intervals over whole models.

The ladder's claims rest on models (ten of them), not on the pairs of models or
the prefix positions their numbers are computed from: the 90 ordered pairs of
the pairwise test, or the 45 pairs of a mean rank correlation, share their
models, so they are not independent. So:

* :func:`ladder_nulls`: the null of every ladder statistic (the law's signed R²,
  the leave-one-out band and R², the share of valid bounds, the pairwise test's
  precision and recall) computed by permuting the models' true sizes among the
  models and running the same pipeline again (PCA, law, leave-one-out with PCA
  refitted in every fold, bounds, τ truth): the size signal is absent by
  construction, so this is both the null and the negative control. Memoized;
* :func:`pair_bootstrap`: a percentile interval of a statistic of pairs of
  models over resamples of the models (a model drawn twice brings its pairs
  twice; a model is never paired with itself);
* :func:`rate_bootstrap`: the pairwise test's precision and recall at one τ,
  their intervals by :func:`pair_bootstrap` (the models are resampled, the pairs
  rebuilt among each resample's models, both ratios recomputed);
* :func:`text_label_null`: Appendix B's popular-minus-baseline mean ρ with the
  popular and baseline labels permuted among the texts (whole texts);
* :func:`family_label_null`: the within-minus-across-family mean ρ with the
  families permuted among the models (whole models).

Pure functions: no printing, plotting or network access.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.core.cache import memoized
from analysis.size.method_absolute import fit_law, loo_cv, pca_index
from analysis.size.method_groups import _text_means
from analysis.size.method_relative import sweep_at, tau_sweep, truly_larger
from analysis.size.params import PAIRWISE_TAU, PAPER_ALPHA, PAPER_TAUS, SizeError
from analysis.stats.resampling import MIN_PERMUTATIONS, permutation_p, permute_labels
from analysis.stats.result import Estimate

#: permutations of every computed null (the protocol's minimum)
N_PERM = MIN_PERMUTATIONS
RATES = ("precision", "recall")


def tau_tag(tau: float) -> str:
    """The suffix that names a statistic or claim at ``tau`` in hundredths:
    ``"t001"`` for 0.01, ``"t070"`` for 0.70."""
    tau = float(tau)
    if not 0 <= tau < 10 or not np.isclose(round(tau * 100), tau * 100):
        raise SizeError(f"tau must be a multiple of 0.01 in [0, 10) to be named, got {tau!r}")
    return f"t{round(tau * 100):03d}"


#: the ladder statistics :func:`ladder_nulls` permutes, in order: precision and recall at the
#: chapter's τ, then at each end of the source's range (PAPER_TAUS)
LADDER_STATS = ("law_r2", "loo_band", "loo_r2", "bounds_valid", *RATES,
                *(f"{what}_{tau_tag(t)}" for t in PAPER_TAUS for what in RATES))


def ladder_stats(profiles: pd.DataFrame, theta: pd.Series, pairs: pd.DataFrame, alpha: float = PAPER_ALPHA,
                 tau: float = PAIRWISE_TAU) -> dict[str, float]:
    """Every ladder statistic of one assignment of sizes ``theta`` (by model) to the
    ``profiles``: the law's R² signed by its slope (``law_r2``: R² when B > 0, −R²
    when not), the leave-one-out share within a factor of two and its R² of ln θ,
    the share of best lower bounds at or below the size, and the pairwise test's
    precision and recall at ``tau`` (``precision``, ``recall``) and at each τ of
    :data:`~analysis.size.params.PAPER_TAUS` (``precision_t001``, ...; the
    decisions of ``pairs`` do not depend on the sizes; the truth does)."""
    from analysis.size.method import _bounds  # the chapter's own bounds, one pipeline

    law = fit_law(pca_index(profiles).z, theta)
    loo = loo_cv(profiles, theta)
    bounds = _bounds(theta, pairs, loo, alpha)
    sweep = tau_sweep(pairs, theta, taus=[tau, *PAPER_TAUS], alpha=alpha)
    row = sweep.iloc[0]
    out = {"law_r2": float(np.sign(law.B) * law.r2), "loo_band": float(loo.within_band),
           "loo_r2": float(loo.r2_log), "bounds_valid": float(bounds["valid"].mean()),
           "precision": float(row["precision"]), "recall": float(row["recall"])}
    for t in PAPER_TAUS:
        at = sweep_at(sweep.iloc[1:], t)
        out.update({f"{what}_{tau_tag(t)}": float(at[what]) for what in RATES})
    return out


@memoized("size-ladder-null", code=("analysis.size.method", "analysis.size.method_absolute",
                                    "analysis.size.method_relative", "analysis.stats.resampling"))
def _ladder_null_draws(profiles: pd.DataFrame, theta: pd.Series, pairs: pd.DataFrame, alpha: float,
                       tau: float, n_perm: int, seed: int) -> dict[str, list[float]]:
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {k: [] for k in LADDER_STATS}
    for _ in range(n_perm):
        perm = pd.Series(permute_labels(theta.to_numpy(dtype=float), rng), index=theta.index)
        for k, v in ladder_stats(profiles, perm, pairs, alpha, tau).items():
            draws[k].append(v)
    return draws


@dataclass(frozen=True)
class LadderNulls:
    """:func:`ladder_nulls`: an :class:`~analysis.stats.result.Estimate` per
    statistic of :data:`LADDER_STATS` (the observed value, the two-sided
    permutation p, the null's median in ``null_value``), from ``n_perm``
    permutations of the sizes among ``n_units`` models."""

    estimates: dict

    def __getitem__(self, name: str) -> Estimate:
        return self.estimates[name]


def null_estimate(observed: float, null: Sequence[float], n: int, n_units: int,
                  alternative: str = "two-sided") -> Estimate:
    """The observed statistic against its permutation draws (NaN draws left out)."""
    draws = np.asarray(null, dtype=float)
    draws = draws[np.isfinite(draws)]
    if not len(draws) or not np.isfinite(observed):
        return Estimate(float(observed), n=n, n_units=n_units, method="permutation")
    lo, hi = np.quantile(draws, [0.025, 0.975])
    return Estimate(float(observed), float(lo), float(hi), p=permutation_p(observed, draws, alternative), n=n,
                    n_units=n_units, method="permutation", null_value=float(np.median(draws)),
                    n_null=int(len(draws)))


def ladder_nulls(method, alpha: float = PAPER_ALPHA, tau: float = PAIRWISE_TAU, n_perm: int = N_PERM,
                 seed: int = 0) -> LadderNulls:
    """The permuted-size null of every ladder statistic (:func:`ladder_stats`) of
    ``method`` (:class:`~analysis.size.method.LadderMethod`): the true sizes
    permuted among the models ``n_perm`` times, the whole pipeline run on each
    (computed once, then read from the artifact cache)."""
    theta = method.theta.astype(float)
    observed = ladder_stats(method.profiles, theta, method.pairs, alpha, tau)
    draws = _ladder_null_draws(method.profiles, theta, method.pairs, float(alpha), float(tau), int(n_perm),
                               int(seed))
    k = len(theta)
    return LadderNulls({name: null_estimate(observed[name], draws[name], k, k) for name in LADDER_STATS})


def pair_bootstrap(k: int, statistic: Callable[[np.ndarray], float], n_boot: int = 2000, seed: int = 0,
                   level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of a statistic of pairs of ``k`` models over resamples of
    the models with replacement. ``statistic(W)`` takes a k × k matrix of pair
    weights (``W[i, j]`` = how many times model i and model j were drawn together:
    the product of their draw counts, 0 on the diagonal) and returns a number; a
    resample whose statistic is not finite is left out. NaNs when k < 2."""
    if k < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_boot):
        c = np.bincount(rng.integers(0, k, size=k), minlength=k).astype(float)
        w = np.outer(c, c)
        np.fill_diagonal(w, 0.0)
        x = float(statistic(w))
        if np.isfinite(x):
            out.append(x)
    if not out:
        return float("nan"), float("nan")
    a = (1 - level) / 2
    lo, hi = np.quantile(out, [a, 1 - a])
    return float(lo), float(hi)


def rate_bootstrap(pairs: pd.DataFrame, theta: pd.Series, tau: float, alpha: float = PAPER_ALPHA,
                   n_boot: int = 2000, seed: int = 0, level: float = 0.95) -> dict[str, tuple[float, float]]:
    """Percentile intervals of the pairwise test's precision and recall at ``tau``
    over resamples of the models (Section 4.2.2's evaluation; the pairs share their
    models, so the models are the unit).

    Each resample draws the ``k`` models of ``theta`` with replacement and rebuilds
    the ordered pairs among the drawn models (:func:`pair_bootstrap`: a model drawn
    twice brings its pairs twice, two draws of one model make no pair); on those
    pairs precision = TP / (TP + FP) and recall = TP / (TP + FN), a pair being
    decided "f larger" when its ``pvalue`` ≤ ``alpha`` and truly larger when
    :math:`|f| > (1+\\tau)|g|`. A resample whose ratio is 0/0 is left out. The
    same seed draws the same resamples for both ratios and every τ.

    Parameters
    ----------
    pairs : pandas.DataFrame
        ``f``, ``g``, ``pvalue`` (:func:`~analysis.size.method_relative.pairwise_tests`).
    theta : pandas.Series
        The true size of every model in the pairs, by name.

    Returns
    -------
    dict
        ``{"precision": (lo, hi), "recall": (lo, hi)}``; NaNs with fewer than two models.
    """
    if not 0 < alpha < 1:
        raise SizeError(f"alpha must be in (0, 1), got {alpha!r}")
    if n_boot < 1:
        raise SizeError(f"n_boot must be a positive integer, got {n_boot!r}")
    missing = sorted((set(pairs["f"]) | set(pairs["g"])) - set(theta.index))
    if missing:
        raise SizeError(f"theta lacks the sizes of {missing}")
    if (pairs["f"] == pairs["g"]).any():
        raise SizeError("a pair compares a model with itself")
    models = list(theta.index)
    where = {m: i for i, m in enumerate(models)}
    i, j = pairs["f"].map(where).to_numpy(), pairs["g"].map(where).to_numpy()
    decided = np.zeros((len(models),) * 2)
    truth = np.zeros_like(decided)
    decided[i, j] = pairs["pvalue"].to_numpy(dtype=float) <= alpha
    truth[i, j] = truly_larger(theta.reindex(pairs["f"]).to_numpy(float),
                               theta.reindex(pairs["g"]).to_numpy(float), tau)
    hit = decided * truth

    def ratio(positive):
        def stat(w):
            total = float((w * positive).sum())
            return float((w * hit).sum()) / total if total else float("nan")
        return stat

    return {what: pair_bootstrap(len(models), ratio(positive), n_boot=n_boot, seed=seed, level=level)
            for what, positive in (("precision", decided), ("recall", truth))}


def weighted_mean(values: np.ndarray, mask: np.ndarray | None = None) -> Callable[[np.ndarray], float]:
    """A :func:`pair_bootstrap` statistic: the weighted mean of a k × k matrix of pair
    ``values`` (NaN entries left out), over the pairs where ``mask`` holds."""
    ok = np.isfinite(values) & (np.ones_like(values, dtype=bool) if mask is None else mask)
    v = np.where(ok, values, 0.0)

    def stat(w):
        total = float((w * ok).sum())
        return float((w * v).sum()) / total if total else float("nan")

    return stat


def rho_matrix(acc: pd.DataFrame, group: str, models: Sequence[str]) -> np.ndarray:
    """The k × k Spearman ρ of the per-text accuracies of ``models`` on ``group``'s
    texts (as :func:`~analysis.size.method_groups.pairwise_spearman`; NaN on the
    diagonal and where a model's accuracy does not vary)."""
    means = _text_means(acc, group).reindex(list(models))
    return _rho(means.to_numpy(dtype=float))


def _rho(x: np.ndarray) -> np.ndarray:
    """Spearman ρ between the rows of ``x`` (models × texts), average ranks for ties."""
    ranks = pd.DataFrame(x).rank(axis=1, method="average").to_numpy(dtype=float)
    centred = ranks - ranks.mean(axis=1, keepdims=True)
    norm = np.sqrt((centred ** 2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (centred @ centred.T) / np.outer(norm, norm)
    r[~np.isfinite(r)] = np.nan
    np.fill_diagonal(r, np.nan)
    return r


def _upper_mean(r: np.ndarray) -> float:
    v = r[np.triu_indices_from(r, k=1)]
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else float("nan")


@memoized("size-agreement-null", code=("analysis.size.method_groups", "analysis.stats.resampling"))
def text_label_null(acc: pd.DataFrame, models: Sequence[str], n_perm: int = N_PERM,
                    seed: int = 0) -> Estimate:
    """Appendix B's ρ̄(popular) − ρ̄(baseline) over the pairs of ``models``, against
    the same statistic with the popular and baseline labels permuted among the
    texts (whole texts; the baseline keeps its number of texts): under the null
    the baseline texts are like any others. Two-sided p; ``n_units`` the models."""
    models = list(models)
    means = pd.concat([_text_means(acc, g).reindex(models) for g in ("popular", "baseline")], axis=1)
    n_base = int(acc.loc[acc["group"] == "baseline", "text_id"].nunique())
    x = means.to_numpy(dtype=float)
    labels = np.array([0] * (x.shape[1] - n_base) + [1] * n_base)

    def stat(lab):
        return _upper_mean(_rho(x[:, lab == 0])) - _upper_mean(_rho(x[:, lab == 1]))

    rng = np.random.default_rng(seed)
    null = [stat(permute_labels(labels, rng)) for _ in range(n_perm)]
    k = len(models)
    return null_estimate(stat(labels), null, n=k * (k - 1) // 2, n_units=k)


def family_label_null(r: np.ndarray, families: Sequence, n_perm: int = N_PERM, seed: int = 0) -> Estimate:
    """ρ̄ within a family − ρ̄ across families (``r`` from :func:`rho_matrix`), against
    the same statistic with the families permuted among the models (whole models,
    the families keep their sizes). Two-sided p; ``n_units`` the models."""
    fam = np.asarray(families, dtype=object)

    def stat(f):
        same = f[:, None] == f[None, :]
        return weighted_mean(r, same)(np.ones_like(r)) - weighted_mean(r, ~same)(np.ones_like(r))

    rng = np.random.default_rng(seed)
    null = [stat(permute_labels(fam, rng)) for _ in range(n_perm)]
    k = len(fam)
    return null_estimate(stat(fam), null, n=k * (k - 1) // 2, n_units=k)


def pairs_matrix(pairs: pd.DataFrame, models: Sequence[str]) -> np.ndarray:
    """The k × k symmetric matrix of ``pairs``' ``rho`` (``model_a``, ``model_b``,
    ``rho``: :func:`~analysis.size.method_groups.pairwise_spearman`), NaN on the
    diagonal and where a pair has none."""
    where = {m: i for i, m in enumerate(models)}
    r = np.full((len(models), len(models)), np.nan)
    for a, b, rho in pairs[["model_a", "model_b", "rho"]].itertuples(index=False):
        if a in where and b in where:
            r[where[a], where[b]] = r[where[b], where[a]] = float(rho)
    return r


def pair_models(pairs: pd.DataFrame) -> list[str]:
    """The models of ``pairs`` in their first order of appearance."""
    return list(dict.fromkeys([*pairs["model_a"], *pairs["model_b"]]))

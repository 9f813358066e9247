"""The chapter's tests on whole units: computed nulls, paired permutations, trends.

The rows a claim counts are completions, but completions are not always
independent: the English counterpart draws a few phrases from each text, and on
the lab's ladder every model completes the same phrases. Each test here
permutes or resamples whole units (:mod:`analysis.stats.resampling`):

* :func:`distance_gap_null`: the share of (first, second) pairs in which the
  first type's completion is the closer one, against its null computed by
  permuting the type labels among units (phrases, or the texts they come from);
* :func:`lab_rows`: the lab's completions one row each, with their phrase and
  copies (what the paired tests below need);
* :func:`paired_difference`: one model's matched rate minus another's on the
  same phrases, model labels swapped within each phrase under the null, the
  interval a cluster bootstrap over phrases;
* :func:`copies_trend`: Spearman's ρ of matched against copies on one model,
  copies permuted among phrases under the null;
* :func:`separation_p`: one model's smallest one-sided Fisher p of a trained
  level against the controls, Bonferroni-adjusted over the levels tested;
* :func:`size_trend`: memorization against size within each ladder family, a
  Firth logistic fit with an intercept per family, its interval a cluster bootstrap
  over phrases.

Pure functions: no printing, plotting or file access, but for the artifact cache:
every permutation null is seeded and memoized (:func:`analysis.core.cache.memoized`,
kind ``phrases-nulls``), so a warm re-run reads it; cold, the chapter's nulls take
about 10 s on two cores (:data:`N_PERM` permutations each).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from analysis.core.cache import memoized
from analysis.stats.logistic import firth_logit
from analysis.stats.proportions import greater_p
from analysis.stats.resampling import cluster_bootstrap, permutation_null
from analysis.stats.result import Estimate, StatsError

#: seeded permutations (and bootstrap resamples) of every computed null of the chapter
N_PERM = 2000
SEED = 0
LAB_ROW_COLUMNS = ["model", "phrase_id", "copies", "matched"]
#: resamples of the size term's cluster bootstrap (each a Firth fit)
N_BOOT_FIT = 1000
#: the code and libraries a memoized null depends on
_MEMO = dict(code=("analysis.stats.resampling", "analysis.stats.result"),
             packages=("numpy", "scipy", "pandas"))
_MEMO_FIT = dict(code=("analysis.stats.resampling", "analysis.stats.result", "analysis.stats.logistic"),
                 packages=("numpy", "pandas"))


def closer_share(distance: np.ndarray, first: np.ndarray) -> float:
    """The share of (first, second) pairs in which the ``first`` row's distance is
    the smaller, ties counted half: 1 − U / (n₁ n₂) of the one-sided Mann–Whitney
    test (0.5 when the types do not differ); NaN when a type is missing."""
    first = np.asarray(first, dtype=bool)
    n1, n2 = int(first.sum()), int((~first).sum())
    if not (n1 and n2):
        return math.nan
    ranks = rankdata(distance)
    u = float(ranks[first].sum()) - n1 * (n1 + 1) / 2
    return 1 - u / (n1 * n2)


@memoized("phrases-nulls", **_MEMO)
def distance_gap_null(scored: pd.DataFrame, first: str, second: str, units: pd.Series | None = None,
                      n_perm: int = N_PERM, seed: int = SEED) -> pd.DataFrame:
    """Per model with both types scored, :func:`closer_share` against its
    permutation null: the type labels permuted among whole units (``units`` maps a
    ``phrase_id`` to its unit, the English counterpart's texts; by default each
    phrase is its own unit), ``n_perm`` seeded permutations, one-sided (the first
    type closer). Columns ``model``, ``closer``, ``p_perm``, ``null_closer`` (the
    null's median), ``n_units``, ``n_rows``."""
    kept = scored[~scored["excluded"].astype(bool) & scored["type"].isin([first, second])]
    kept = kept[kept["distance"].notna()]
    rows = []
    for model, group in kept.groupby("model", sort=False):
        is_first = (group["type"] == first).to_numpy()
        if is_first.all() or not is_first.any():
            continue
        distance = group["distance"].astype(float).to_numpy()
        unit = (group["phrase_id"].map(units) if units is not None else group["phrase_id"]).astype(str)
        est = permutation_null(lambda lab, d=distance: closer_share(d, lab), is_first, n_perm=n_perm,
                               seed=seed, units=unit.to_numpy(), alternative="greater")
        rows.append({"model": model, "closer": est.value, "p_perm": est.p, "null_closer": est.null_value,
                     "n_units": est.n_units, "n_rows": est.n})
    return pd.DataFrame(rows, columns=["model", "closer", "p_perm", "null_closer", "n_units", "n_rows"])


def lab_rows(scored: pd.DataFrame, phrases: pd.DataFrame) -> pd.DataFrame:
    """The lab's scorable completions one row each (:data:`LAB_ROW_COLUMNS`):
    ``model``, ``phrase_id``, the phrase's ``copies`` in training (0 = a control)
    and ``matched`` (0 or 1); excluded completions are left out, as the rates
    leave them out."""
    if scored.empty or phrases.empty:
        return pd.DataFrame(columns=LAB_ROW_COLUMNS)
    copies = phrases.drop_duplicates("id").set_index("id")["copies"]
    kept = scored[~scored["excluded"].astype(bool)]
    return pd.DataFrame({"model": kept["model"].to_numpy(), "phrase_id": kept["phrase_id"].to_numpy(),
                         "copies": kept["phrase_id"].map(copies).astype(int).to_numpy(),
                         "matched": kept["matched"].fillna(False).astype(bool).astype(int).to_numpy()})


@memoized("phrases-nulls", **_MEMO)
def paired_difference(rows: pd.DataFrame, small: str, large: str, n_perm: int = N_PERM,
                      seed: int = SEED) -> Estimate:
    """``large``'s matched rate minus ``small``'s over ``rows`` (:func:`lab_rows`,
    already restricted to the copy levels compared). The two models completed the
    same phrases, so the phrase is the unit: the null swaps the two model labels
    within each phrase (a phrase scored for one model only keeps its label), and
    the 95% interval resamples whole phrases. ``p`` is one-sided (``large`` above)."""
    both = rows[rows["model"].isin([small, large])]
    matched = both["matched"].to_numpy(dtype=float)
    is_large = (both["model"] == large).to_numpy()
    phrase = both["phrase_id"].astype(str).to_numpy()

    def diff(lab: np.ndarray, idx: np.ndarray | None = None) -> float:
        m, lab = (matched, lab) if idx is None else (matched[idx], lab[idx])
        if lab.all() or not lab.any():
            return math.nan
        return float(m[lab].mean() - m[~lab].mean())

    test = permutation_null(diff, is_large, n_perm=n_perm, seed=seed, strata=phrase, alternative="greater")
    if len(set(phrase)) < 2:  # one phrase: no interval to resample
        return Estimate(test.value, p=test.p, n=len(both), n_units=len(set(phrase)),
                        method="paired difference", null_value=test.null_value, n_null=test.n_null)
    boot = cluster_bootstrap(lambda idx: diff(is_large, idx), phrase, n_boot=n_perm, seed=seed)
    return Estimate(test.value, boot.lo, boot.hi, test.p, n=len(both), n_units=boot.n_units,
                    method="paired difference, labels swapped within phrases",
                    null_value=test.null_value, n_null=test.n_null)


@memoized("phrases-nulls", **_MEMO)
def copies_trend(rows: pd.DataFrame, n_perm: int = N_PERM, seed: int = SEED) -> Estimate:
    """Spearman's ρ of ``matched`` against ``copies`` over one model's rows of
    :func:`lab_rows` (every level, the controls included), with its null computed
    by permuting the copies among the phrases (the lab deals its phrases to the
    levels at random), one-sided (ρ > 0). NaN when either side is constant."""
    matched = rankdata(rows["matched"].to_numpy(dtype=float))
    copies = rows["copies"].to_numpy(dtype=float)
    if len(rows) < 3 or np.ptp(matched) == 0 or np.ptp(copies) == 0:
        return Estimate(math.nan, n=len(rows), n_units=len(rows), method="Spearman's ρ")

    def rho(c: np.ndarray) -> float:
        return float(np.corrcoef(rankdata(c), matched)[0, 1])

    return permutation_null(rho, copies, n_perm=n_perm, seed=seed, alternative="greater")


def separation_p(rows: pd.DataFrame) -> float:
    """One model's evidence that some trained level's rate exceeds the controls':
    the smallest one-sided Fisher exact p over its scorable trained levels
    (``rows`` of :func:`.method_rates.rates_by_copies`), times the number of
    levels tested (Bonferroni, Holm's smallest adjusted p), at most 1. NaN without
    scorable controls or trained levels."""
    control = rows[(rows["copies"] == 0) & (rows["total"] > 0)]
    trained = rows[(rows["copies"] > 0) & (rows["total"] > 0)]
    if control.empty or trained.empty:
        return math.nan
    k0, n0 = int(control["matched"].iloc[0]), int(control["total"].iloc[0])
    ps = [greater_p(int(r.matched), int(r.total), k0, n0) for r in trained.itertuples()]
    return min(1.0, len(ps) * min(ps))


#: the columns of :func:`size_trend`'s per-family table
SIZE_TREND_COLUMNS = ["family", "models", "params_span", "size_term", "ci_lo", "ci_hi", "n_rows",
                      "n_phrases"]


def _size_design(rows: pd.DataFrame, by_family: bool) -> pd.DataFrame | None:
    """The design of :func:`logit_size_term`: one intercept per family, log2(copies)
    where copies vary, log2(params) last; None when no family has two sizes."""
    families = rows["family"].astype(str) if by_family else pd.Series("all", index=rows.index)
    if not (rows.groupby(families)["params"].nunique() > 1).any():
        return None
    x = pd.get_dummies(families, dtype=float)
    if rows["copies"].nunique() > 1:
        x["log2_copies"] = np.log2(rows["copies"].to_numpy(dtype=float))
    x["log2_params"] = np.log2(rows["params"].to_numpy(dtype=float))
    return x


@memoized("phrases-nulls", **_MEMO_FIT)
def logit_size_term(rows: pd.DataFrame, by_family: bool, n_boot: int = N_BOOT_FIT,
                    seed: int = SEED) -> Estimate | None:
    """The log2(params) coefficient of Firth's logistic fit
    (:func:`analysis.stats.logistic.firth_logit`, finite when the ladder's outcomes
    separate) of ``matched`` on an intercept per family (``by_family``; else one),
    log2(copies) where copies vary, and log2(params); its 95% interval a cluster
    bootstrap over phrases (``n_boot`` resamples; every model completes the same
    phrases). None where there is no such term (no family with two sizes) or no
    variation in ``matched``."""
    y = rows["matched"].to_numpy(dtype=float)
    x = _size_design(rows, by_family) if len(rows) else None
    if x is None or y.min() == y.max():
        return None
    xs = x.to_numpy()

    def term(idx: np.ndarray) -> float:
        sub, ys = xs[idx], y[idx]
        keep = sub.any(axis=0)  # a family absent from the resample drops its intercept
        if ys.min() == ys.max() or np.linalg.matrix_rank(sub[:, keep]) < keep.sum():
            return math.nan
        try:
            return float(firth_logit(sub[:, keep], ys)[-1])
        except StatsError:
            return math.nan

    est = cluster_bootstrap(term, rows["phrase_id"].astype(str).to_numpy(), n_boot=n_boot, seed=seed)
    return Estimate(est.value, est.lo, est.hi, n=len(rows), n_units=est.n_units,
                    method="Firth logistic fit, an intercept per family, log2 copies and log2 params; "
                           "cluster bootstrap over phrases")


def size_trend(rows: pd.DataFrame, ladder: pd.DataFrame) -> tuple[Estimate | None, pd.DataFrame]:
    """Memorization against size within each family of the ladder: on the trained
    phrases of ``rows`` (:func:`lab_rows`, copies above 0), a Firth logistic fit
    (:func:`logit_size_term`) of matched on
    an intercept per family, log2(copies) and log2(params) (``ladder``: ``model``,
    ``family``, ``params``). The size term is the change in log-odds per doubling of
    parameters at fixed copies, read only from differences within a family (the
    intercepts absorb what separates the families); the unit is the phrase, its
    interval a cluster bootstrap over phrases (every model completes the same phrases). Returns
    the pooled estimate (None where it cannot be fitted) and a table of the same fit in
    each family alone (:data:`SIZE_TREND_COLUMNS`)."""
    info = ladder.set_index("model")[["family", "params"]]
    trained = rows[(rows["copies"] > 0) & rows["model"].isin(info.index)]
    trained = trained.join(info, on="model")
    pooled = logit_size_term(trained, True) if len(trained) else None
    out = []
    for family, g in trained.groupby("family", sort=False):
        est = logit_size_term(g, False)
        sizes = sorted(g["params"].unique())
        out.append([family, int(g["model"].nunique()), float(sizes[-1] / sizes[0]),
                    *((np.nan,) * 3 if est is None else (est.value, est.lo, est.hi)),
                    len(g), int(g["phrase_id"].nunique())])
    return pooled, pd.DataFrame(out, columns=SIZE_TREND_COLUMNS)

"""Popular against baseline texts: each model's accuracy gap between the two
groups, and Appendix B's check of Assumption 1 (models agree on which popular
texts they know best, and less on the baseline texts).

Pure functions: no printing, plotting or network access.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats

from analysis.size.params import ALTERNATIVES, GROUPS, SizeError

AGREEMENT_COLUMNS = ["group", "n_pairs", "mean_rho", "min_rho", "frac_above", "n_undefined"]


def _text_means(acc_table: pd.DataFrame, group: str) -> pd.DataFrame:
    if group not in GROUPS:
        raise SizeError(f"group must be one of {GROUPS}, got {group!r}")
    rows = acc_table.loc[acc_table["group"] == group]
    if rows.empty:
        raise SizeError(f"acc_table has no rows of group {group!r}")
    # rounded so that equal means computed in different orders tie
    return rows.pivot_table(index="model", columns="text_id", values="acc", aggfunc="mean").round(12)


def text_ranks(acc_table: pd.DataFrame, group: str = "popular") -> pd.DataFrame:
    """Per-model ranks of the texts (Appendix B): mean raw accuracy per text over
    all tested prefix lengths, rank 1 = highest, :math:`|\\mathcal T|` = lowest
    (ties, after rounding the means to 12 decimals, get the average rank).

    Returns
    -------
    pandas.DataFrame
        Models x texts of ranks.
    """
    return _text_means(acc_table, group).rank(axis=1, ascending=False, method="average")


def pairwise_spearman(acc_table: pd.DataFrame, group: str = "popular") -> pd.DataFrame:
    """Spearman rank correlation :math:`\\rho` of the text rankings of every model pair (Appendix B).

    ``scipy.stats.spearmanr`` of the two models' per-text mean accuracies (the
    same as the correlation of their ranks). A pair in which one model has the
    same accuracy on every text has no defined :math:`\\rho` (NaN).

    Returns
    -------
    pandas.DataFrame
        ``model_a``, ``model_b``, ``rho``, one row per unordered pair.
    """
    means = _text_means(acc_table, group)
    if means.isna().any().any():
        raise SizeError(f"some model lacks a {group} text; every model needs every text")
    rows = []
    for a, b in combinations(means.index, 2):
        x, y = means.loc[a].to_numpy(), means.loc[b].to_numpy()
        if np.ptp(x) == 0 or np.ptp(y) == 0:
            rho = float("nan")
        else:
            rho = float(stats.spearmanr(x, y).statistic)
        rows.append(dict(model_a=a, model_b=b, rho=rho))
    return pd.DataFrame(rows, columns=["model_a", "model_b", "rho"])


@dataclass(frozen=True)
class AssumptionCheck:
    """Appendix B: ``popular`` and ``baseline`` pairwise correlations
    (:func:`pairwise_spearman`), a ``summary`` per group (pairs, mean, min,
    fraction above 0.8, undefined pairs) and the Mann-Whitney U test between
    the two distributions (``mwu_statistic``, ``mwu_pvalue``; undefined
    correlations left out)."""

    popular: pd.DataFrame
    baseline: pd.DataFrame
    summary: pd.DataFrame
    mwu_statistic: float
    mwu_pvalue: float


def assumption_check(acc_table: pd.DataFrame, alternative: str = "two-sided",
                     strong: float = 0.8) -> AssumptionCheck:
    """Appendix B's check of Assumption 1: rank agreement on popular vs baseline texts.

    Parameters
    ----------
    acc_table : pandas.DataFrame
        From :func:`accuracy_table`, with popular and baseline texts.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        Of ``scipy.stats.mannwhitneyu`` (popular vs baseline). The paper
        describes a test of "whether values from one group are systematically
        larger than the other" without naming a side.
    strong : float, default 0.8
        Threshold of "strong agreement".
    """
    if alternative not in ALTERNATIVES:
        raise SizeError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    pop = pairwise_spearman(acc_table, "popular")
    base = pairwise_spearman(acc_table, "baseline")
    summary = pd.DataFrame([
        dict(group=name, n_pairs=len(df), mean_rho=float(df["rho"].mean()), min_rho=float(df["rho"].min()),
             frac_above=float((df["rho"] > strong).mean()) if len(df) else float("nan"),
             n_undefined=int(df["rho"].isna().sum()))
        for name, df in (("popular", pop), ("baseline", base))
    ])
    x, y = pop["rho"].dropna().to_numpy(), base["rho"].dropna().to_numpy()
    if x.size == 0 or y.size == 0:
        stat, p = float("nan"), float("nan")
    else:
        res = stats.mannwhitneyu(x, y, alternative=alternative)
        stat, p = float(res.statistic), float(res.pvalue)
    return AssumptionCheck(popular=pop, baseline=base, summary=summary, mwu_statistic=stat, mwu_pvalue=p)


def group_gap(acc_table: pd.DataFrame, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Popular-minus-baseline accuracy gap per model, with a cluster-bootstrap 95%
    interval (texts resampled with replacement within each group, so positions of
    one text are never treated as independent). Beyond the paper, which reports no
    interval on the gap.

    Returns one row per model: ``popular``, ``baseline`` (mean α̂ over texts and
    lengths), ``gap``, ``ci_lo``, ``ci_hi``, ``n_popular``, ``n_baseline`` (texts) and
    ``n_rows`` (the model's rows of ``acc_table``: texts × prefix lengths).
    """
    rng = np.random.default_rng(seed)
    rows = []
    for model, g in acc_table.groupby("model", sort=False):
        per_text = g.groupby(["group", "text_id"])["acc"].mean()
        pop = per_text.get("popular", pd.Series(dtype=float)).to_numpy()
        base = per_text.get("baseline", pd.Series(dtype=float)).to_numpy()
        if not len(pop) or not len(base):
            continue
        boots = (rng.choice(pop, (n_boot, len(pop))).mean(1) - rng.choice(base, (n_boot, len(base))).mean(1))
        rows.append({"model": model, "popular": pop.mean(), "baseline": base.mean(),
                     "gap": pop.mean() - base.mean(), "ci_lo": np.quantile(boots, 0.025),
                     "ci_hi": np.quantile(boots, 0.975), "n_popular": len(pop), "n_baseline": len(base),
                     "n_rows": len(g)})
    return pd.DataFrame(rows)


def complete_models(acc: pd.DataFrame) -> tuple[list[str], list[str]]:
    """The models with an accuracy on every text of both groups (in ``acc``'s
    order), and the others (sorted)."""
    if not len(acc):
        return [], []
    texts = acc.groupby("group")["text_id"].nunique()
    per_model = acc.groupby(["model", "group"])["text_id"].nunique().unstack()
    complete = [m for m in per_model.index
                if all(per_model.loc[m].get(g, 0) == texts.get(g, -1) for g in GROUPS)]
    return complete, sorted(set(acc["model"]) - set(complete))


def agreement_check(acc: pd.DataFrame) -> AssumptionCheck | None:
    """:func:`assumption_check` on the :func:`complete_models`; None when fewer
    than two models qualify."""
    complete, _ = complete_models(acc)
    if len(complete) < 2:
        return None
    return assumption_check(acc[acc["model"].isin(complete)])


def agreement(acc: pd.DataFrame) -> pd.DataFrame:
    """Appendix B's summary table (:func:`assumption_check`) over the models that
    have an accuracy on every text of both groups; empty when fewer than two do."""
    check = agreement_check(acc)
    return pd.DataFrame(columns=AGREEMENT_COLUMNS) if check is None else check.summary


@dataclass(frozen=True)
class FamilyAgreement:
    """Appendix B's agreement within and across groups of models (the lab ladder's
    families): the mean Spearman :math:`\\rho` of the popular-text rankings over the
    pairs of one family (``within``, ``n_within`` pairs) and over the pairs of two
    families (``across``, ``n_across``), and the two-sided Mann-Whitney U test
    between the two sets of pairs (``mwu_pvalue``). Undefined correlations are
    left out."""

    within: float
    across: float
    n_within: int
    n_across: int
    mwu_pvalue: float


def family_agreement(pairs: pd.DataFrame, families) -> FamilyAgreement:
    """:class:`FamilyAgreement` of the pairwise correlations ``pairs``
    (:func:`pairwise_spearman`: ``model_a``, ``model_b``, ``rho``), with the
    family of each model in ``families`` (a mapping or Series by model name).

    The source reports the mean :math:`\\rho` within each of its groups (open
    dense 0.883, open MoE 0.955, closed 0.904) beside 0.906 over all pairs."""
    fam = pd.Series(families)
    missing = sorted((set(pairs["model_a"]) | set(pairs["model_b"])) - set(fam.index))
    if missing:
        raise SizeError(f"families lacks the family of {missing}")
    same = fam.reindex(pairs["model_a"]).to_numpy() == fam.reindex(pairs["model_b"]).to_numpy()
    rho = pairs["rho"].to_numpy(dtype=float)
    x, y = rho[same & np.isfinite(rho)], rho[~same & np.isfinite(rho)]
    p = float(stats.mannwhitneyu(x, y, alternative="two-sided").pvalue) if x.size and y.size else float("nan")
    return FamilyAgreement(within=float(x.mean()) if x.size else float("nan"),
                           across=float(y.mean()) if y.size else float("nan"),
                           n_within=int(x.size), n_across=int(y.size), mwu_pvalue=p)


@dataclass(frozen=True)
class LadderAgreement:
    """Appendix B on models of known family: :func:`assumption_check` (popular
    against baseline texts over every pair) and :func:`family_agreement` on the
    popular texts."""

    check: AssumptionCheck
    families: FamilyAgreement


def ladder_agreement(acc: pd.DataFrame, families) -> LadderAgreement | None:
    """Appendix B over every model of ``acc`` with an answer on every text
    (:func:`agreement_check`), and within and across ``families``; None when
    fewer than two models qualify."""
    check = agreement_check(acc)
    if check is None:
        return None
    return LadderAgreement(check=check, families=family_agreement(check.popular, families))

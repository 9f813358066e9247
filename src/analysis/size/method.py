"""The whole method on models of known size (the lab's ladder): profile, PCA
index, law, leave-one-out, pairwise tests, τ sweep, and every model's absolute,
relative and best lower bound, beside the popular-vs-baseline gap, Appendix B's
agreement within and across families, and why each invalid bound failed.

The steps themselves live in ``method_probe`` (positions and accuracies),
``method_absolute`` (index, law, leave-one-out), ``method_relative`` (block
scores, the pairwise test, bounds), ``method_calibration`` (the test under a true
null) and ``method_groups`` (popular vs baseline texts, Appendix B).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis.size.method_absolute import (
    LOOResult,
    PCAIndex,
    ScalingLaw,
    absolute_lower_bound,
    fit_law,
    loo_cv,
    loo_r2_interval,
    pca_index,
    project,
)
from analysis.size.method_groups import LadderAgreement, group_gap, ladder_agreement
from analysis.size.method_probe import accuracy_profile
from analysis.size.method_relative import (
    best_bound,
    kind_sweep,
    pairwise_tests,
    relative_lower_bound,
    tau_sweep,
)
from analysis.size.params import BAND, KIND_ORDER, PAIRWISE_TAU, PAPER_ALPHA, SizeError

INVALID_COLUMNS = ["model", "theta", "family", "source", "reference", "ref_theta", "ref_family", "ratio",
                   "pvalue", "cross_family", "close", "family_lean", "ref_family_lean", "reasons"]


@dataclass
class LadderMethod:
    """The whole method on a ladder of models of known size (the lab's)."""

    acc: pd.DataFrame
    theta: pd.Series
    profiles: pd.DataFrame
    pca: PCAIndex
    law: ScalingLaw
    loo: LOOResult
    pairs: pd.DataFrame
    sweep: pd.DataFrame
    bounds: pd.DataFrame
    gap: pd.DataFrame
    #: the family of each model (by name), when known
    families: pd.Series | None = None
    #: 95% bootstrap interval of the leave-one-out R² over the held-out models
    loo_r2_ci: tuple[float, float] = (float("nan"), float("nan"))
    #: Appendix B over the ladder (None with fewer than two complete models)
    agreement: LadderAgreement | None = None
    #: the pairwise test at PAIRWISE_TAU for each block-score kind
    kinds: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: why each invalid best bound failed (:func:`invalid_bounds`)
    invalid: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=INVALID_COLUMNS))


def _bounds(theta: pd.Series, pairs: pd.DataFrame, loo: LOOResult, alpha: float) -> pd.DataFrame:
    held = loo.table.set_index("model")
    rows = []
    for name in theta.index:
        rel = relative_lower_bound(pairs, name, theta, alpha=alpha)
        abs_lb = absolute_lower_bound(held.loc[name, "theta_hat"])
        best, source = best_bound(abs_lb, rel.bound)
        rows.append({"model": name, "theta": theta[name], "theta_hat_loo": held.loc[name, "theta_hat"],
                     "abs_lb": abs_lb, "rel_lb": rel.bound, "reference": rel.reference, "best_lb": best,
                     "source": source, "valid": bool(best <= theta[name]) if np.isfinite(best) else True})
    return pd.DataFrame(rows)


def family_lean(bounds: pd.DataFrame, families) -> pd.Series:
    """Per family, the geometric mean of the leave-one-out ratio θ̂/θ of its models:
    above 1, the law reads the family as larger than it is (it predicts more
    accurately than its size alone would say, it memorizes more per parameter)."""
    ratio = np.log(bounds["theta_hat_loo"].to_numpy(dtype=float) / bounds["theta"].to_numpy(dtype=float))
    fam = pd.Series(families).reindex(bounds["model"]).to_numpy()
    return np.exp(pd.Series(ratio).groupby(fam).mean())


def invalid_bounds(bounds: pd.DataFrame, pairs: pd.DataFrame, families=None,
                   tau: float = PAIRWISE_TAU, band: tuple[float, float] = BAND) -> pd.DataFrame:
    """Why each invalid best bound (``bounds`` of :class:`LadderMethod`) failed.

    A relative bound fails when the model was decided larger than a reference
    that is truly larger (``ratio`` = reference size / own size, ``pvalue`` of
    that test); an absolute bound when the held-out prediction is more than
    ``band[1]`` times the true size (``ratio`` = θ̂/θ). The reason codes, in order:
    ``cross_family`` (the pair spans two families), ``close`` (the reference is
    within 1 + τ of the model's size), ``family_reads_larger`` (the model's family
    has the higher :func:`family_lean`, or, for an absolute bound, a lean above
    1), ``over_predicted`` (an absolute bound), ``same_family`` (neither family
    reason applies)."""
    fam = pd.Series(families if families is not None else {}, dtype=object)
    lean = family_lean(bounds, fam) if len(fam) else pd.Series(dtype=float)
    rows = []
    for r in bounds[~bounds["valid"]].itertuples():
        f_fam = fam.get(r.model)
        row = dict(model=r.model, theta=float(r.theta), family=f_fam, source=r.source,
                   family_lean=float(lean.get(f_fam, np.nan)), reference=None, ref_theta=np.nan,
                   ref_family=None, ratio=np.nan, pvalue=np.nan, cross_family=False, close=False,
                   ref_family_lean=np.nan)
        reasons = []
        if r.source == "Rel":
            test = pairs[(pairs["f"] == r.model) & (pairs["g"] == r.reference)].iloc[0]
            g_fam = fam.get(r.reference)
            row.update(reference=r.reference, ref_theta=float(r.rel_lb), ref_family=g_fam,
                       ratio=float(r.rel_lb) / float(r.theta), pvalue=float(test["pvalue"]),
                       ref_family_lean=float(lean.get(g_fam, np.nan)))
            row["cross_family"] = f_fam is not None and g_fam is not None and f_fam != g_fam
            row["close"] = row["ratio"] <= 1 + tau
            reasons += [k for k in ("cross_family", "close") if row[k]]
            if row["cross_family"] and row["family_lean"] > row["ref_family_lean"]:
                reasons.append("family_reads_larger")
        else:
            row["ratio"] = float(r.theta_hat_loo) / float(r.theta)
            if row["family_lean"] > 1:
                reasons.append("family_reads_larger")
            reasons.append("over_predicted")
        if not {"cross_family", "family_reads_larger"} & set(reasons):
            reasons.append("same_family")
        rows.append({**row, "reasons": tuple(reasons)})
    return pd.DataFrame(rows, columns=INVALID_COLUMNS)


def ladder_method(acc: pd.DataFrame, theta: pd.Series, alpha: float = PAPER_ALPHA, kind: str = "raw",
                  seed: int = 0, families=None) -> LadderMethod:
    """Profile, PCA index, law, leave-one-out, pairwise tests (block scores of
    ``kind``), τ sweep and every model's absolute, relative and best lower bound,
    on models whose true sizes ``theta`` (indexed by model name) are known; with
    their ``families`` (by model name), also Appendix B within and across families
    and the families behind each invalid bound."""
    profiles = accuracy_profile(acc)
    pca = pca_index(profiles)
    law = fit_law(pca.z, theta)
    loo = loo_cv(profiles, theta)
    by_kind = {k: pairwise_tests(profiles, alpha=alpha, kind=k) for k in KIND_ORDER}
    pairs = by_kind[kind]
    sweep = tau_sweep(pairs, theta, alpha=alpha)
    bounds = _bounds(theta, pairs, loo, alpha)
    fam = None if families is None else pd.Series(families).reindex(theta.index)
    return LadderMethod(
        acc, theta, profiles, pca, law, loo, pairs, sweep, bounds, group_gap(acc, seed=seed), families=fam,
        loo_r2_ci=loo_r2_interval(loo.table, seed=seed),
        agreement=None if fam is None else ladder_agreement(acc, fam),
        kinds=kind_sweep(by_kind, theta, PAIRWISE_TAU, alpha=alpha),
        invalid=invalid_bounds(bounds, pairs, fam),
    )


def place_on_law(method: LadderMethod, profiles: pd.DataFrame, theta: pd.Series) -> pd.DataFrame:
    """Models outside the ladder, placed on the ladder's fitted law.

    Each model's accuracy profile (``profiles``: :func:`accuracy_profile` of the
    ladder's own probe's answers) is projected on the ladder's index (:func:`project`), and the law gives its
    predicted size :math:`\\hat\\theta = A e^{Bz}`. Beside it: its true size
    ``theta`` (by model name), ``ratio`` :math:`\\hat\\theta/\\theta` (1 = the law
    reads the size right, below 1 the model looks smaller than it is), and
    ``outside_loo``: whether the ratio falls outside the range of the ladder's own
    leave-one-out ratios, the error the law makes on models that obey its assumptions.

    Returns
    -------
    pandas.DataFrame
        ``model``, ``theta``, ``z``, ``theta_hat``, ``ratio``, ``outside_loo``.
    """
    z = project(method.pca, profiles)
    missing = [m for m in z.index if m not in theta.index]
    if missing:
        raise SizeError(f"theta lacks the sizes of {missing}")
    lo, hi = method.loo.table["ratio"].min(), method.loo.table["ratio"].max()
    out = pd.DataFrame({"model": z.index, "theta": theta.reindex(z.index).to_numpy(dtype=float),
                        "z": z.to_numpy(), "theta_hat": method.law.predict(z).to_numpy()})
    out["ratio"] = out["theta_hat"] / out["theta"]
    out["outside_loo"] = (out["ratio"] < lo) | (out["ratio"] > hi)
    return out


def bound_targets(method: LadderMethod, profiles: pd.DataFrame, theta: pd.Series, alpha: float = PAPER_ALPHA,
                  kind: str = "raw") -> pd.DataFrame:
    """Models outside the calibration set (the lab's ablations, a held-out family),
    bounded as the paper bounds its targets: placed on the ladder's law
    (:func:`place_on_law`), the absolute bound :math:`0.5\\hat\\theta`, the relative
    bound over the ladder's models only (each target tested against every ladder model
    with block scores of ``kind``, :func:`pairwise_tests`), and the best of the two.
    Nothing about a target enters the law, the index or the references.

    Returns
    -------
    pandas.DataFrame
        :func:`place_on_law`'s columns, then ``abs_lb``, ``rel_lb``, ``reference``,
        ``best_lb``, ``source`` and ``valid`` (the best bound at or below the true
        size; a target with no bound at all is valid, as a ladder model is).
    """
    placed = place_on_law(method, profiles, theta)
    clash = sorted(set(profiles.index) & set(method.profiles.index))
    if clash:
        raise SizeError(f"targets {clash} are in the calibration set; bound only models outside it")
    both = pd.concat([method.profiles, profiles.reindex(columns=method.profiles.columns)])
    pairs = pairwise_tests(both, targets=list(profiles.index), references=list(method.theta.index), kind=kind,
                           alpha=alpha)
    rows = []
    for row in placed.itertuples(index=False):
        rel = relative_lower_bound(pairs, row.model, method.theta, alpha=alpha)
        abs_lb = absolute_lower_bound(row.theta_hat)
        best, source = best_bound(abs_lb, rel.bound)
        rows.append({"abs_lb": abs_lb, "rel_lb": rel.bound, "reference": rel.reference, "best_lb": best,
                     "source": source, "valid": bool(best <= row.theta) if np.isfinite(best) else True})
    return pd.concat([placed, pd.DataFrame(rows)], axis=1)

"""The whole method on models of known size (the lab's ladder): profile, PCA
index, law, leave-one-out, pairwise tests, τ sweep, and every model's absolute,
relative and best lower bound, beside the popular-vs-baseline gap.

The steps themselves live in ``method_probe`` (positions and accuracies),
``method_absolute`` (index, law, leave-one-out), ``method_relative`` (block
scores, the pairwise test, bounds), ``method_calibration`` (the test under a true
null) and ``method_groups`` (popular vs baseline texts, Appendix B).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.size.method_absolute import (
    LOOResult,
    PCAIndex,
    ScalingLaw,
    absolute_lower_bound,
    fit_law,
    loo_cv,
    pca_index,
)
from analysis.size.method_groups import group_gap
from analysis.size.method_probe import accuracy_profile
from analysis.size.method_relative import best_bound, pairwise_tests, relative_lower_bound, tau_sweep
from analysis.size.params import PAPER_ALPHA


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


def ladder_method(acc: pd.DataFrame, theta: pd.Series, alpha: float = PAPER_ALPHA, kind: str = "raw",
                  seed: int = 0) -> LadderMethod:
    """Profile, PCA index, law, leave-one-out, pairwise tests (block scores of
    ``kind``), τ sweep and every model's absolute, relative and best lower bound,
    on models whose true sizes ``theta`` (indexed by model name) are known."""
    profiles = accuracy_profile(acc)
    pca = pca_index(profiles)
    law = fit_law(pca.z, theta)
    loo = loo_cv(profiles, theta)
    pairs = pairwise_tests(profiles, alpha=alpha, kind=kind)
    sweep = tau_sweep(pairs, theta, alpha=alpha)
    held = loo.table.set_index("model")
    rows = []
    for name in theta.index:
        rel = relative_lower_bound(pairs, name, theta, alpha=alpha)
        abs_lb = absolute_lower_bound(held.loc[name, "theta_hat"])
        best, source = best_bound(abs_lb, rel.bound)
        rows.append({"model": name, "theta": theta[name], "theta_hat_loo": held.loc[name, "theta_hat"],
                     "abs_lb": abs_lb, "rel_lb": rel.bound, "best_lb": best, "source": source,
                     "valid": bool(best <= theta[name]) if np.isfinite(best) else True})
    return LadderMethod(acc, theta, profiles, pca, law, loo, pairs, sweep, pd.DataFrame(rows),
                        group_gap(acc, seed=seed))

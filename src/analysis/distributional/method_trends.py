"""Reading a measure across the ladder: its values per model, how many are
significant, and its rank correlation with model size. Pure functions over the
long tables of :mod:`analysis.distributional.method_tables`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.distributional.params import ALPHA
from analysis.stats import ranks
from analysis.stats.result import Estimate


@dataclass(frozen=True)
class Trend:
    """One measure across the ladder, smallest model first: its values, p-values and
    sizes; ``n_sig`` models with p < :data:`ALPHA`; ``size_rho`` its rank correlation
    with size (:func:`analysis.stats.ranks.rank_trend`, ``size_test`` with its p-value)."""

    params: np.ndarray
    rho: np.ndarray
    pvalue: np.ndarray

    @property
    def n_models(self) -> int:
        return len(self.rho)

    @property
    def significant(self) -> np.ndarray:
        """Per model, whether its value is significant (p < :data:`ALPHA`)."""
        return self.pvalue < ALPHA

    @property
    def n_sig(self) -> int:
        return int(self.significant.sum())

    @property
    def defined(self) -> bool:
        return bool(np.isfinite(self.rho).any())

    @property
    def lo(self) -> float:
        return float(np.nanmin(self.rho)) if self.defined else np.nan

    @property
    def hi(self) -> float:
        return float(np.nanmax(self.rho)) if self.defined else np.nan

    @property
    def size_test(self) -> Estimate:
        return ranks.rank_trend(self.params, self.rho)

    @property
    def size_rho(self) -> float:
        return self.size_test.value


def trend(mem: pd.DataFrame, task: str, n: int, lm: str = "task-gram", filt: str = "no filter",
          value: str = "rho") -> Trend:
    """One corpus LM's measure (:func:`~analysis.distributional.method_tables.mem_table`,
    or ``value="kendall"`` of :func:`~analysis.distributional.method_tables.kendall_table`)
    for one task and n, across the ladder."""
    g = mem[(mem["task"] == task) & (mem["n"] == n) & (mem["lm"] == lm)]
    if "filter" in g:
        g = g[g["filter"] == filt]
    g = g.sort_values("params", kind="stable")
    return Trend(g["params"].to_numpy(float), g[value].to_numpy(float), g["pvalue"].to_numpy(float))


def above_infgram(mem: pd.DataFrame, task: str, n: int) -> tuple[int, int]:
    """(models whose ``Mem_n`` ≥ ``Mem_∞``, models compared) for one task and n,
    without a filter; a model with either value undefined does not count."""
    tg, inf = trend(mem, task, n), trend(mem, task, n, lm="∞-gram")
    return int((tg.rho >= inf.rho).sum()), tg.n_models


def significant_positive(mem: pd.DataFrame, task: str, n, lm: str = "task-gram", alpha: float = 0.05,
                         filt: str = "no filter") -> int:
    """Models of :func:`~analysis.distributional.method_tables.mem_table` whose
    ``Mem_n`` (``lm``) for ``task`` is positive and significant (p below ``alpha``),
    over the pairs of ``filt``."""
    sub = mem[(mem["task"] == task) & (mem["n"] == n) & (mem["lm"] == lm) & (mem["filter"] == filt)]
    return int(((sub["rho"] > 0) & (sub["pvalue"] < alpha)).sum())


def threshold_trends(sens: pd.DataFrame) -> pd.DataFrame:
    """Per threshold of :func:`~analysis.distributional.method_tables.sensitivity_table`
    (the unfiltered rows left out), in table order: ``gamma``, the ``pairs`` it keeps,
    the ``models`` with a defined Mem_n, and the rank correlation of Mem_n with size
    (``size_rho``, ``pvalue``; NaN with fewer than three defined models)."""
    rows = []
    for label, g in sens[sens["gamma"] != "no filter"].groupby("gamma", sort=False):
        est = ranks.rank_trend(g["params"], g["rho"])
        rows.append({"gamma": label, "pairs": int(g["pairs"].iloc[0]), "models": int(g["rho"].notna().sum()),
                     "size_rho": est.value, "pvalue": est.p})
    return pd.DataFrame(rows, columns=["gamma", "pairs", "models", "size_rho", "pvalue"])

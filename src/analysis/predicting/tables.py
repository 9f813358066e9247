"""The tables the chapter shows, and the numbers it glues from them.

The setup table (:func:`setup_table`), the extraction tables
(:func:`extraction_summary`, :func:`extraction_rates`,
:func:`run_extraction_rates`), the AUC tables in the source's wide layout
(:func:`wide_auc`, :func:`auc_cell`, :func:`flat_index`, :func:`auc_panels`)
and Experiment 2's counts (:func:`examples_per_run`, :func:`pair_counts`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.lab.design import window_share as share
from analysis.predicting.checks import PredictingError, check_targets, require
from analysis.predicting.params import LAB_TARGETS, PAPER_STEP_BIN, PAPER_STEPS
from analysis.predicting.run import counterfactual
from analysis.predicting.steps import cell_keys, exp3_dataset, step_bins


def setup_table(
    targets: Sequence[str],
    run_table: pd.DataFrame,
    exposures: Mapping[str, pd.DataFrame],
    n_params: Mapping[str, int],
    names: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """The chapter's Setup table: one row per target run.

    Columns ``target, source's role`` (``names``, default :data:`LAB_TARGETS`),
    ``counterfactual`` (:func:`counterfactual`), ``steps T`` (from its exposure
    table), ``params``, ``tokens``, ``window`` ("all" when none) and ``sequences``.
    """
    names = dict(LAB_TARGETS if names is None else names)
    check_targets(targets, exposures)
    runs = run_table.set_index("run")
    return pd.DataFrame(
        [
            {
                "target": t,
                "source's role": names.get(t, t),
                "counterfactual": counterfactual(run_table, t),
                "steps T": int(exposures[t]["T"].iloc[0]),
                "params": int(n_params[t]),
                "tokens": int(runs.loc[t, "tokens"]),
                "window": runs.loc[t, "window"] or "all",
                "sequences": len(exposures[t]),
            }
            for t in targets
        ]
    )


def extraction_summary(long: pd.DataFrame) -> pd.DataFrame:
    """Share extracted and mean suffix accuracy per target and copy level.

    Targets in order of appearance, copies ascending.
    """
    require(long, ("target", "copies", "extract", "suffix_acc"), "the long frame")
    out = long.groupby(["target", "copies"], sort=False)[["extract", "suffix_acc"]].mean().reset_index()
    order = {t: i for i, t in enumerate(pd.unique(long["target"]))}
    return out.sort_values(
        ["target", "copies"], key=lambda s: s.map(order) if s.name == "target" else s, kind="stable"
    ).reset_index(drop=True)


def extraction_rates(long: pd.DataFrame) -> pd.DataFrame:
    """Share extracted per target (rows) and copy level (columns), after a ``positives`` column "k / n"."""
    require(long, ("target", "copies", "extract"), "the long frame")
    rates = long.pivot_table(index="target", columns="copies", values="extract", aggfunc="mean", sort=False)
    counts = long.groupby("target", sort=False)["extract"].agg(["sum", "size"])
    rates.insert(0, "positives", counts["sum"].astype(int).astype(str) + " / " + counts["size"].astype(str))
    return rates


def wide_auc(
    columns: Mapping[str, pd.DataFrame], key_cols: Sequence[str] = ("features",)
) -> pd.DataFrame | None:
    """:func:`auc_rows` outputs (name → table) as one wide table, one ``auc`` column per name.

    Rows are keyed by ``key_cols`` (``("features", "hardness")`` for
    Experiment 3); ``None`` when there is no column.
    """
    if not columns:
        return None
    cols = [tab.set_index(list(key_cols))["auc"].rename(name) for name, tab in columns.items()]
    return pd.concat(cols, axis=1)


def auc_notes(columns: Mapping[str, pd.DataFrame]) -> dict[str, str]:
    """Name → why, for the :func:`auc_rows` columns that could not be computed."""
    return {name: tab["note"].iloc[0] for name, tab in columns.items() if tab["note"].iloc[0]}


def auc_cell(table: pd.DataFrame | None, row, col) -> str:
    """One AUC of a wide table to three decimals, or "—" when the table, row or column is missing or NaN."""
    if table is None or row not in table.index or col not in table.columns:
        return "—"
    v = table.loc[row, col]
    return f"{float(v):.3f}" if np.isfinite(v) else "—"


def computed_columns(table: pd.DataFrame | None) -> list[str]:
    """The columns of a wide AUC table with at least one number."""
    return [] if table is None else [c for c in table.columns if table[c].notna().any()]


def auc_panels(pairs: Mapping[str, tuple]) -> dict[str, pd.DataFrame | None]:
    """Heatmap panels, the source's table beside the lab's: ``{"source, name": s, "lab, name": l, ...}``."""
    out = {}
    for name, (source, lab) in pairs.items():
        out[f"source, {name}"] = source
        out[f"lab, {name}"] = lab
    return out


def flat_index(table: pd.DataFrame | None) -> pd.DataFrame | None:
    """A (features, hardness) table with one-level row labels ``"features [hardness]"`` (for heatmaps)."""
    if table is None:
        return None
    out = table.copy()
    out.index = [f"{f} [{h}]" if h != "—" else f for f, h in out.index]
    return out


def run_extraction_rates(labels: pd.DataFrame, runs: Sequence[str]) -> pd.DataFrame:
    """Share extracted per injection-range run (rows, in ``runs`` order) and copy level (columns)."""
    require(labels, ("run", "copies", "extract"), "the labels frame")
    return labels.pivot_table(index="run", columns="copies", values="extract", aggfunc="mean").loc[list(runs)]


def extracted_per_run(labels: pd.DataFrame, runs: Sequence[str]) -> pd.Series:
    """Inserted sequences (at least 1 copy) each run extracts, in ``runs`` order."""
    require(labels, ("run", "copies", "extract"), "the labels frame")
    ins = labels[labels["copies"] >= 1]
    return ins.groupby("run")["extract"].sum().reindex(list(runs)).fillna(0).astype(int)


def examples_per_run(counts: pd.DataFrame, pools: Sequence[str], runs: Sequence[str]) -> pd.DataFrame:
    """The source's "Examples per run" layout: ``"pos / neg"`` per pool (rows) and run (columns).

    "—" where a run has no example in a pool.
    """
    require(counts, ("pool", "run", "n_pos", "n_neg"), "the run counts")
    cells = counts.assign(cell=[f"{p:,} / {n:,}" for p, n in zip(counts["n_pos"], counts["n_neg"])])
    wide = cells.pivot(index="pool", columns="run", values="cell") if len(cells) else pd.DataFrame()
    out = wide.reindex(index=list(pools), columns=list(runs)).astype(object)
    return out.where(out.notna(), "—")


def pair_counts(dataset: pd.DataFrame, pools: Sequence[str]) -> dict[str, int]:
    """Pairs per pool from :func:`exp2_dataset` (its ``"all"`` rows); 0 for a pool without pairs."""
    if dataset.empty:
        return {p: 0 for p in pools}
    total = dataset[dataset["copies"] == "all"].set_index("pool")["n_pairs"]
    return {p: int(total.get(p, 0)) for p in pools}


def exp2_level_count(dataset: pd.DataFrame, pools: Sequence[str]) -> int:
    """Copy levels at which every pool of ``pools`` has at least one pair (0 without pairs)."""
    if dataset.empty:
        return 0
    per_level = dataset[dataset["copies"] != "all"]
    levels = None
    for pool in pools:
        got = set(per_level.loc[(per_level["pool"] == pool) & (per_level["n_pairs"] > 0), "copies"])
        levels = got if levels is None else levels & got
    return len(levels or ())


def window_share(run, exposure: pd.DataFrame) -> float:
    """Share of the room in a run's insertion window that its injected copies fill:
    the window's rows times the copies a row can hold (``run.copies_per_row``).

    ``run`` is the run's :class:`analysis.lab.config.RunConfig` (``window``,
    ``steps``, ``batch_size``, ``copies_per_row``), ``exposure`` its exposure table
    (``copies_seen``).
    """
    require(exposure, ("copies_seen",), "the exposure table")
    return float(share(run, int(exposure["copies_seen"].sum())))


def twin_suffix_acc(long: pd.DataFrame, scores: pd.DataFrame, twins: Mapping[str, str]) -> pd.DataFrame:
    """``long`` with ``twin_suffix_acc``: each (target, sequence)'s suffix accuracy under the
    target's standard twin (``twins``: target -> its :func:`~analysis.predicting.run.counterfactual`),
    which never saw the injected sequences: the negative control of partial learning."""
    require(long, ("target", "seq_id"), "the long frame")
    require(scores, ("run", "seq_id", "suffix_acc"), "the scores")
    acc = scores.set_index(["run", "seq_id"])["suffix_acc"]
    keys = pd.MultiIndex.from_arrays([long["target"].map(dict(twins)), long["seq_id"]])
    return long.assign(twin_suffix_acc=acc.reindex(keys).to_numpy())


def source_bin_steps(name: str, T: int) -> int:
    """The source's stratum width carried over to a lab target of ``T`` steps, as close as whole
    steps allow: its :data:`PAPER_STEP_BIN` steps of the training steps of the target whose role it
    plays (``name``, the source's name: :data:`PAPER_STEPS`), in the lab's steps, at least 1."""
    if name not in PAPER_STEPS:
        raise PredictingError(f"no source target {name!r}; targets: {sorted(PAPER_STEPS)}")
    return max(1, round(PAPER_STEP_BIN / PAPER_STEPS[name] * int(T)))


def exp3_strata_table(dataset: pd.DataFrame, bins: Mapping[str, int], T: Mapping[str, int]) -> pd.DataFrame:
    """Experiment 3's strata per cell: ``cell, copies, steps T, bin (steps), bin (share of T),
    source's bin (lab steps), strata, residual recency AUC`` and the pooled row.

    ``dataset`` is :func:`analysis.predicting.steps.exp3_dataset` (its ``cell`` is the target's
    source name), ``bins`` the width used per target (:func:`analysis.predicting.steps.step_bins`)
    and ``T`` the targets' training steps, both by the source's name. The source's bin is
    :func:`source_bin_steps`: the width the lab would need to match as finely as the source.
    """
    require(dataset, ("cell", "copies", "n_strata", "residual_recency_auc"), "the Experiment 3 dataset")
    rows = []
    for _, r in dataset.iterrows():
        cell = r["cell"]
        pooled = cell not in bins
        rows.append({"cell": cell, "copies": r["copies"], "steps T": np.nan if pooled else int(T[cell]),
                     "bin (steps)": np.nan if pooled else int(bins[cell]),
                     "bin (share of T)": np.nan if pooled else bins[cell] / T[cell],
                     "source's bin (lab steps)": np.nan if pooled else source_bin_steps(cell, T[cell]),
                     "strata": int(r["n_strata"]), "residual recency AUC": float(r["residual_recency_auc"])})
    return pd.DataFrame(rows)


#: the stratum widths Experiment 3's sweep tries, as shares of each target's training
SWEEP_FRACS = (1 / 8, 1 / 16, 1 / 32, 1 / 64)
#: the label of the sweep's row at the source's width
SOURCE_WIDTH = "the source's width"


def strata_sweep(cells: pd.DataFrame, T: Mapping[str, int], fracs: Sequence[float] = SWEEP_FRACS,
                 seed: int = 0) -> pd.DataFrame:
    """Experiment 3's matching at narrower strata, down to the source's width: per width
    (each share of ``fracs`` of every target's ``T`` training steps, then
    :func:`source_bin_steps`), the pooled matched set of seed ``seed``
    (:func:`analysis.predicting.steps.exp3_dataset`): ``width``, ``share of T`` (NaN for the
    source's, which differs per target), ``examples``, ``positives``, ``cells kept`` (of
    ``cells``, both counts) and ``residual recency AUC``. The argument ``cells`` is
    :func:`analysis.predicting.steps.matched_cells`'s frame (``target`` the source's name),
    ``T`` by the same names."""
    widths = [(f"1/{round(1 / f)} of training", f, step_bins(T, f)) for f in fracs]
    widths.append((SOURCE_WIDTH, np.nan, {t: source_bin_steps(t, n) for t, n in T.items()}))
    rows = []
    for label, frac, bins in widths:
        data = exp3_dataset(cells, bins, seed)
        pooled = data.iloc[-1] if len(data) else None
        rows.append({"width": label, "share of T": frac,
                     "examples": int(pooled["n_examples"]) if pooled is not None else 0,
                     "positives": int(pooled["n_pos"]) if pooled is not None else 0,
                     "cells kept": len(data) - 1 if len(data) else 0, "cells": len(cell_keys(cells)),
                     "residual recency AUC": float(pooled["residual_recency_auc"]) if pooled is not None
                     else np.nan})
    return pd.DataFrame(rows)

"""The chapter's steps: what the notebook's visible cells call, one function per step.

Experiment 1: :func:`balanced_samples` and :func:`exp1_aucs`; Experiment 2:
:func:`pool_pairs` and :func:`exp2_aucs`; Experiment 3: :func:`step_bins`,
:func:`match_cells` and :func:`exp3_aucs`; each with its dataset table of seed 0
(:func:`exp1_dataset`, :func:`exp2_dataset`, :func:`exp3_dataset`). Pure
computations over the frames of :mod:`analysis.predicting.run`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

from analysis.lab import ladder
from analysis.predicting.checks import PredictingError, check_T
from analysis.predicting.method_eval import auc_rows, exp1_columns, exp2_columns, held_out_scores
from analysis.predicting.method_sampling import (
    balanced_subsample,
    exp1_stats,
    exp2_run_counts,
    exp2_stats,
    exp3_stats,
    injection_range_pairs,
    match_strata,
)
from analysis.predicting.params import EXP2_ONLY, PAPER_SEEDS, THREE
from analysis.stats.auc import auc, auc_diff_se
from analysis.stats.result import StatsError


def stack_frames(frames: Mapping[str, pd.DataFrame], names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The targets' frames in one long frame with a ``target`` column (renamed by ``names``)."""
    if not frames:
        raise PredictingError("no frames given")
    names = dict(names or {})
    return pd.concat([f.assign(target=names.get(t, t)) for t, f in frames.items()], ignore_index=True)


def main_target(names: Mapping[str, str], preferred: str = "pert-l2x") -> str:
    """The source's name of the target the prose reports on: ``preferred`` when run, else the first."""
    if not names:
        raise PredictingError("no targets")
    return names.get(preferred, next(iter(names.values())))


def balanced_samples(
    frames: Mapping[str, pd.DataFrame], seed: int = 0, names: Mapping[str, str] | None = None
) -> dict[str, pd.DataFrame]:
    """:func:`balanced_subsample` of every target that holds both classes (others are left out), by name."""
    names = dict(names or {})
    return {
        names.get(t, t): balanced_subsample(f, seed) for t, f in frames.items() if f["extract"].nunique() == 2
    }


def inserted_frames(frames: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Each target's frame without its never-inserted controls (0 copies): the examples of the
    source's inserted-only Experiment 1 tables, whose controls are removed before balancing."""
    return {t: f[f["copies"] >= 1] for t, f in frames.items()}


def exp1_aucs(
    frames: Mapping[str, pd.DataFrame],
    split: str,
    seeds: Iterable[int] = PAPER_SEEDS,
    names: Mapping[str, str] | None = None,
) -> dict[str, pd.DataFrame]:
    """Experiment 1 under one split: :func:`auc_rows` of each target's balanced subsamples, by name.

    Each seed draws its own balanced subsample; the baselines are the
    cross-model and the random baseline, as in the source's tables.
    """
    return exp1_columns(frames, split, seeds, auc_rows, balanced_subsample, names)


def exp1_dataset(samples: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """:func:`exp1_stats` of the seed's samples; an empty frame when no target has both classes."""
    return exp1_stats(samples) if samples else pd.DataFrame()


def chapter_runs(table: pd.DataFrame) -> pd.DataFrame:
    """The lab's runs this chapter scores (a profile's :meth:`~analysis.lab.ladder.LabProfile.table`):
    every run but the size chapter's ablations (family ``ablation``), which inject nothing
    and are no standard twin of an injected run."""
    return table[table["family"] != ladder.ABLATION].reset_index(drop=True)


def range_runs(pools: Mapping[str, Sequence[str]]) -> list[str]:
    """Every run of the pools, once each, in order of first appearance."""
    return list(dict.fromkeys(r for pool in pools.values() for r in pool))


def inserted_levels(labels: pd.DataFrame) -> list[int]:
    """The copy levels (at least 1 copy) of a labels frame, ascending."""
    return [int(c) for c in sorted(labels.loc[labels["copies"] >= 1, "copies"].unique())]


def pool_pairs(
    labels: pd.DataFrame, pools: Mapping[str, Sequence[str]], seeds: Iterable[int] = PAPER_SEEDS
) -> dict[str, dict[int, pd.DataFrame]]:
    """:func:`injection_range_pairs` of every pool and seed: ``{pool: {seed: pairs}}``."""
    seeds = list(seeds)
    return {p: {s: injection_range_pairs(labels, pool, s) for s in seeds} for p, pool in pools.items()}


def exp2_aucs(
    pairs: Mapping[str, Mapping[int, pd.DataFrame]], levels: Sequence[int], seeds: Iterable[int] = PAPER_SEEDS
) -> dict[str, dict[str, pd.DataFrame]]:
    """Experiment 2: :func:`auc_rows` under the group split per pool, per copy level and pooled.

    Returns ``{pool: {"copies_<c>": table, ..., "pooled": table}}`` with a
    column for every level of ``levels`` (a level without pairs gets the note
    "0 positives and 0 negatives"), and the window-end and random baselines.
    """
    return exp2_columns(pairs, levels, seeds, auc_rows)


def exp2_dataset(pairs: Mapping[str, Mapping[int, pd.DataFrame]], seed: int = 0) -> pd.DataFrame:
    """:func:`exp2_stats` of the seed's pairs of every pool that has some (empty frame when none has)."""
    some = {p: by_seed[seed] for p, by_seed in pairs.items() if len(by_seed[seed])}
    return exp2_stats(some) if some else pd.DataFrame()


def exp2_run_table(pairs: Mapping[str, Mapping[int, pd.DataFrame]], seed: int = 0) -> pd.DataFrame:
    """:func:`exp2_run_counts` of the seed's pairs (``pool, run, n_pos, n_neg``; empty when no pairs)."""
    some = {p: by_seed[seed] for p, by_seed in pairs.items() if len(by_seed[seed])}
    return exp2_run_counts(some) if some else pd.DataFrame(columns=["pool", "run", "n_pos", "n_neg"])


def exp13_targets(targets: Iterable[str]) -> list[str]:
    """The targets of Experiments 1 and 3: all but the injection-range runs of :data:`EXP2_ONLY`."""
    return [t for t in targets if t not in EXP2_ONLY]


def training_steps(exposures: Mapping[str, pd.DataFrame]) -> dict[str, int]:
    """Training steps ``T`` of every run with an exposure table (its ``T`` column)."""
    return {r: int(e["T"].iloc[0]) for r, e in exposures.items()}


def step_bins(T: Mapping[str, int], frac: float) -> dict[str, int]:
    """Width of a last-step stratum per target: ``max(1, round(frac * T))`` steps."""
    if not 0 < frac <= 1:
        raise PredictingError(f"frac must be in (0, 1], got {frac!r}")
    return {t: max(1, round(frac * check_T(n))) for t, n in T.items()}


def cell_keys(cells: pd.DataFrame) -> list[tuple[str, int]]:
    """The (target, copies) cells of :func:`matched_cells`, in order of appearance."""
    return list(cells.groupby(["target", "copies"], sort=False).groups)


def match_cells(
    cells: pd.DataFrame, bins: Mapping[str, int], seed: int = 0, keys: Sequence[tuple[str, int]] | None = None
) -> pd.DataFrame:
    """Experiment 3's matched set: :func:`match_strata` of each cell (all, or ``keys``) with its
    target's bin, stacked."""
    keys = cell_keys(cells) if keys is None else list(keys)
    parts = [
        match_strata(cells[(cells["target"] == t) & (cells["copies"] == c)], bins[t], seed) for t, c in keys
    ]
    return pd.concat(parts) if parts else cells.iloc[:0]


def exp3_aucs(
    cells: pd.DataFrame,
    bins: Mapping[str, int],
    seeds: Iterable[int] = PAPER_SEEDS,
    splits: Sequence[str] = ("group", "task"),
) -> dict[str, dict[str, pd.DataFrame]]:
    """Experiment 3: :func:`auc_rows` per split, per cell (``"<target> (<copies>)"``) and pooled,
    with both hardness measures and the cross-model and random baselines.

    Each seed re-draws the matched set (:func:`match_cells`). ``{split: {}}``
    when there is no cell.
    """
    seeds = list(seeds)
    base = ["cross-model baseline", "random baseline"]
    keys = cell_keys(cells)
    out = {}
    for split in splits:
        cols = {
            f"{t} ({c})": auc_rows(
                lambda s, k=(t, c): match_cells(cells, bins, s, [k]),
                split,
                base,
                seeds,
                hardness_rows=("full", "suffix"),
                name=f"{t}/{c} copies",
            )
            for t, c in keys
        }
        if keys:
            cols["pooled"] = auc_rows(
                lambda s: match_cells(cells, bins, s),
                split,
                base,
                seeds,
                hardness_rows=("full", "suffix"),
                name="pooled",
            )
        out[split] = cols
    return out


def exp3_gap_tests(cells: pd.DataFrame, bins: Mapping[str, int], seeds: Iterable[int] = PAPER_SEEDS,
                   feature_set: str = THREE) -> pd.DataFrame:
    """Experiment 3's suffix-minus-whole-sequence gap of ``feature_set`` on each seed's pooled
    matched set, paired: both fits' out-of-fold scores (group split) rank the same examples, and
    DeLong's variance (:func:`analysis.stats.auc.auc_diff_se`) gives the gap's standard error.

    Returns ``seed, suffix, full, gap, se, n`` (AUCs of the two fits, their difference and its
    standard error); a seed whose set cannot be split or scored is left out, so the frame is
    empty when no cell is matched.
    """
    rows = []
    for seed in seeds:
        matched = match_cells(cells, bins, seed)
        try:
            y, sfx = held_out_scores(matched, feature_set, seed, hardness="suffix", name="pooled")
            _, full = held_out_scores(matched, feature_set, seed, hardness="full", name="pooled")
            a_sfx, a_full, se = auc(y, sfx), auc(y, full), auc_diff_se(y, sfx, full)
        except (PredictingError, StatsError):
            continue
        rows.append(dict(seed=seed, suffix=a_sfx, full=a_full, gap=a_sfx - a_full, se=se, n=len(y)))
    return pd.DataFrame(rows, columns=["seed", "suffix", "full", "gap", "se", "n"])


def exp3_dataset(cells: pd.DataFrame, bins: Mapping[str, int], seed: int = 0) -> pd.DataFrame:
    """:func:`exp3_stats` of the seed's matched set (empty frame when nothing is matched)."""
    matched = match_cells(cells, bins, seed)
    return exp3_stats(matched) if len(matched) else pd.DataFrame()


def largest_target(frames: Mapping[str, pd.DataFrame], n_params: Mapping[str, int],
                   tokens: Mapping[str, int]) -> str:
    """The target with the most parameters (the most training tokens among equals)."""
    if not frames:
        raise PredictingError("no targets: the largest target is undefined")
    return max(frames, key=lambda t: (n_params[t], tokens[t], t))


def empty_cells(cells: pd.DataFrame, bins: Mapping[str, int], seed: int = 0) -> list[tuple[str, int]]:
    """The (target, copies) cells that matching empties: no stratum of task and last-step
    bin holds both classes there."""
    return [k for k in cell_keys(cells) if not len(match_cells(cells, bins, seed, [k]))]

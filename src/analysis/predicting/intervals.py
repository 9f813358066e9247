"""Intervals for the AUC tables: a bootstrap over sequences of each cell's held-out predictions.

Every AUC of the Experiment 1 and Experiment 2 tables is a mean over sampling seeds
of held-out AUCs. Its interval resamples the **sequences** (the unit: an injected
sequence; in Experiment 2 a pair's two rows are one sequence's) with replacement,
every row of a drawn sequence coming along, in every seed at once
(:func:`analysis.stats.resampling.cluster_bootstrap`); the fits are kept, so the
interval is that of the held-out ranking, not of the refitting.

* :func:`held_out_rows`: the held-out labels and scores behind one cell of
  :func:`analysis.predicting.method_eval.auc_rows`, per seed, with each row's sequence
  (and task, for leave-one-task-out);
* :func:`seed_mean_auc`: the cell's AUC (mean over seeds) under row weights, a
  resample's multiplicities: with every weight 1 it is the table's number;
* :func:`cell_interval` and :func:`paired_interval`: the bootstrap of one cell, and of
  the difference of two cells scored on the same held-out rows (paired);
* :func:`auc_intervals`: one column of a table, every feature set and baseline.

A resample in which a seed's held-out rows lose a class gives no AUC for that seed and
is dropped (the tables' "—" has no interval).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from analysis.predicting.checks import PredictingError, binary, require
from analysis.predicting.method_eval import (
    _held_out,
    check_splittable,
    exp1_columns,
    exp2_columns,
    feature_columns,
    random_split,
)
from analysis.predicting.method_features import random_scores
from analysis.predicting.method_sampling import balanced_subsample
from analysis.predicting.params import FEATURE_SETS, MEASURE_LABELS, PAPER_K, PAPER_SEEDS, SPLITS
from analysis.stats.resampling import cluster_bootstrap
from analysis.stats.result import Estimate, StatsError

#: resamples of every interval
N_BOOT = 1000
#: the interval's level
LEVEL = 0.95


def held_out_rows(
    frame: pd.DataFrame,
    feature_set,
    split: str,
    seed: int = 0,
    *,
    hardness: str = "full",
    random_state: int = 0,
    k: int = PAPER_K,
    label: str = "extract",
    unit: str = "seq_id",
    task: str = "task",
    name: str = "frame",
) -> pd.DataFrame:
    """The held-out rows of one seed's cell of :func:`~analysis.predicting.method_eval.auc_rows`:
    ``unit, task, y, score``, one row per held-out example.

    The same fit as the table's: the random split keeps ``random_state`` (its test rows;
    the random baseline's scores follow ``seed``), leave-one-task-out and the group split
    (grouped by ``unit``) score every row out of fold. ``task`` is missing (None) except
    under leave-one-task-out.
    """
    if split not in SPLITS:
        raise PredictingError(f"split must be one of {SPLITS}, got {split!r}")
    cols = feature_columns(feature_set, hardness)
    need = [label, unit, *(cols or ()), *([task] if split == "task" else [])]
    require(frame, need, f"the frame of {name!r}")
    if frame[need].isna().any().any():
        raise PredictingError(
            f"the frame of {name!r} has NaN in column(s) {[c for c in need if frame[c].isna().any()]}"
        )
    y = binary(frame[label].to_numpy(), f"{name!r} column {label!r}")
    units = frame[unit].astype(str).to_numpy()
    tasks = frame[task].to_numpy() if split == "task" else None
    groups = frame[unit].to_numpy() if split == "group" else None  # the table's groups, hence its folds
    state = seed if split != "random" else random_state
    check_splittable(y, split, task=tasks, groups=groups, k=k, seed=state, name=name)
    if split == "random":
        train, test = random_split(y, random_state)
        if cols is None:
            score = random_scores(len(test), np.random.default_rng(seed))
        else:
            _, score, _ = _held_out(frame, cols, y, "random", random_state, None, None, k)
        return pd.DataFrame({"unit": units[test], "task": None, "y": y[test], "score": score})
    _, score, _ = _held_out(frame, cols, y, split, seed, tasks, groups, k)
    return pd.DataFrame({"unit": units, "task": tasks, "y": y, "score": score})


class _Ranker:
    """The AUC of each (seed, task) group of stacked held-out rows under row weights: for every
    group the comparison matrix of its positives' scores with its negatives' (1 above, ½ tied),
    so that a weighted AUC is ``w₊ᵀ C w₋ / (Σw₊ Σw₋)``."""

    def __init__(self, rows: pd.DataFrame):
        require(rows, ("seed", "unit", "y", "score"), "the held-out rows")
        self.n = len(rows)
        keys = rows["seed"].astype(str)
        if "task" in rows and rows["task"].notna().all():
            keys = keys + "\x00" + rows["task"].astype(str)
        y, s = rows["y"].to_numpy(int), rows["score"].to_numpy(float)
        self.seeds = rows["seed"].to_numpy()
        self.groups = []
        for _, idx in pd.Series(np.arange(self.n)).groupby(keys.to_numpy(), sort=True):
            idx = idx.to_numpy()
            pos, neg = idx[y[idx] == 1], idx[y[idx] == 0]
            c = (s[pos][:, None] > s[neg][None, :]) + 0.5 * (s[pos][:, None] == s[neg][None, :])
            self.groups.append((self.seeds[idx[0]], pos, neg, c))

    def value(self, w: np.ndarray) -> float:
        """The mean over seeds of each seed's AUC (the mean of its tasks' AUCs, a task without
        both classes skipped); NaN when a seed has no group with both classes."""
        per_seed: dict = {}
        for seed, pos, neg, c in self.groups:
            wp, wn = w[pos], w[neg]
            den = wp.sum() * wn.sum()
            per_seed.setdefault(seed, [])
            if den > 0:
                per_seed[seed].append(float(wp @ c @ wn) / den)
        if not per_seed or any(not v for v in per_seed.values()):
            return float("nan")
        return float(np.mean([np.mean(v) for v in per_seed.values()]))


def seed_mean_auc(rows: pd.DataFrame, weights: Sequence[float] | None = None) -> float:
    """The AUC of stacked held-out rows (``seed, unit, y, score`` and, under leave-one-task-out,
    ``task``): per seed the AUC (or the mean of its tasks' AUCs), then the mean over seeds, each
    row counted ``weights`` times (1 by default: the table's number)."""
    w = np.ones(len(rows)) if weights is None else np.asarray(weights, dtype=float)
    return _Ranker(rows).value(w)


def _boot(
    stat: Callable[[np.ndarray], float], units, n: int, n_boot: int, seed: int, level: float
) -> Estimate:
    if not 0 < level < 1:
        raise PredictingError(f"level must be in (0, 1), got {level!r}")
    if not isinstance(n_boot, (int, np.integer)) or n_boot < 1:
        raise PredictingError(f"n_boot must be a positive integer, got {n_boot!r}")

    def on_rows(idx):
        return stat(np.bincount(idx, minlength=n).astype(float))

    return cluster_bootstrap(on_rows, units, n_boot=int(n_boot), seed=seed, level=level)


def cell_interval(rows: pd.DataFrame, n_boot: int = N_BOOT, seed: int = 0, level: float = LEVEL) -> Estimate:
    """The cell's AUC (:func:`seed_mean_auc`) with its percentile interval over ``n_boot``
    resamples of the sequences (``unit``): a drawn sequence brings every row it has, in every
    seed. ``n_units`` counts the sequences."""
    r = _Ranker(rows)
    return _boot(r.value, rows["unit"].astype(str).to_numpy(), r.n, n_boot, seed, level)


def paired_interval(
    rows_a: pd.DataFrame, rows_b: pd.DataFrame, n_boot: int = N_BOOT, seed: int = 0, level: float = LEVEL
) -> Estimate:
    """``seed_mean_auc(rows_a) - seed_mean_auc(rows_b)`` of two cells held out on the same rows
    (same seeds, sequences and labels, in the same order), with its interval over resamples of
    the sequences, both cells from the same resample (paired)."""
    cols = ["seed", "unit", "y"]
    require(rows_a, cols, "the first cell's rows")
    require(rows_b, cols, "the second cell's rows")
    if len(rows_a) != len(rows_b) or not (rows_a[cols].to_numpy() == rows_b[cols].to_numpy()).all():
        raise PredictingError("a paired interval needs both cells held out on the same rows")
    a, b = _Ranker(rows_a), _Ranker(rows_b)
    return _boot(
        lambda w: a.value(w) - b.value(w), rows_a["unit"].astype(str).to_numpy(), a.n, n_boot, seed, level
    )


def stacked_rows(
    make_frame: Callable[[int], pd.DataFrame],
    feature_set,
    split: str,
    seeds: Iterable[int] = PAPER_SEEDS,
    **kw,
) -> pd.DataFrame:
    """:func:`held_out_rows` of every seed's frame, stacked with a ``seed`` column."""
    seeds = list(seeds)
    if not seeds:
        raise PredictingError("at least one seed is needed")
    return pd.concat(
        [held_out_rows(make_frame(s), feature_set, split, s, **kw).assign(seed=s) for s in seeds],
        ignore_index=True,
    )


def auc_intervals(
    make_frame: Callable[[int], pd.DataFrame],
    split: str,
    baselines: Sequence[str],
    seeds: Iterable[int] = PAPER_SEEDS,
    *,
    hardness_rows: Sequence[str] = ("full",),
    name: str = "frame",
    n_boot: int = N_BOOT,
    boot_seed: int = 0,
    **kw,
) -> pd.DataFrame:
    """One column of a table with intervals: ``features, hardness, auc, lo, hi, n_units, n_pos, note``
    in the rows of :func:`~analysis.predicting.method_eval.auc_rows` (without its sd rows).

    ``auc`` is the table's number, ``lo``/``hi`` its :func:`cell_interval`, ``n_units`` the
    sequences resampled, ``n_pos`` the positives of the first seed's frame (0: the cell has
    none). A cell that cannot be split has NaN and its reason in ``note``.
    """
    seeds = list(seeds)
    rows = []
    for label, cols in FEATURE_SETS.items():
        rows += [(label, m) for m in (hardness_rows if "hardness" in cols else ("—",))]
    rows += [(b, "—") for b in baselines]
    frames = {s: make_frame(s) for s in seeds}
    first = frames[seeds[0]] if seeds else pd.DataFrame()
    n_pos = int(first[kw.get("label", "extract")].sum()) if len(first) else 0
    out = []
    for label, measure in rows:
        h = "full" if measure == "—" else measure
        try:
            stacked = stacked_rows(frames.__getitem__, label, split, seeds, hardness=h, name=name, **kw)
            est = cell_interval(stacked, n_boot, boot_seed)
            cell, note = (est.value, est.lo, est.hi, est.n_units), ""
        except (PredictingError, StatsError) as err:
            cell, note = (np.nan, np.nan, np.nan, 0), str(err)
        out.append(dict(features=label, hardness=measure, **dict(zip(("auc", "lo", "hi", "n_units"), cell)),
                        n_pos=n_pos, note=note))
    table = pd.DataFrame(out)
    table["hardness"] = table["hardness"].replace(MEASURE_LABELS)
    return table


def interval_text(auc: float, lo: float, hi: float, n_pos: int | None = None, digits: int = 3) -> str:
    """A cell of a table with intervals: ``"0.957 [0.912, 0.990]"``; ``"no positives"`` for a cell
    without any, ``"—"`` for one that could not be computed, the AUC alone without an interval."""
    if n_pos == 0:
        return "no positives"
    if not np.isfinite(auc):
        return "—"
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return f"{auc:.{digits}f}"
    return f"{auc:.{digits}f} [{lo:.{digits - 1}f}, {hi:.{digits - 1}f}]"


def interval_table(
    columns: dict[str, pd.DataFrame], key_cols: Sequence[str] = ("features",)
) -> pd.DataFrame | None:
    """:func:`auc_intervals` columns (name → table) as one wide table of :func:`interval_text`
    strings, rows keyed by ``key_cols``; None when there is no column."""
    if not columns:
        return None
    cols = []
    for name, tab in columns.items():
        text = [
            interval_text(a, lo, hi, n)
            for a, lo, hi, n in zip(tab["auc"], tab["lo"], tab["hi"], tab["n_pos"])
        ]
        cols.append(
            pd.Series(
                text,
                index=pd.MultiIndex.from_frame(tab[list(key_cols)])
                if len(key_cols) > 1
                else tab[key_cols[0]],
                name=name,
            )
        )
    return pd.concat(cols, axis=1)


# -- the chapter's steps -----------------------------------------------------------------------------


def _both_classes(frame: pd.DataFrame, label: str = "extract") -> bool:
    y = frame[label].to_numpy()
    return bool((y == 1).any() and (y == 0).any())


def _balanced_or_whole(frame: pd.DataFrame, seed: int, label: str = "extract") -> pd.DataFrame:
    """:func:`balanced_subsample` of ``frame``, or the frame itself when it lacks a class (a
    target with no positive: its cells then read "no positives" instead of failing)."""
    if not _both_classes(frame, label):
        return frame
    return balanced_subsample(frame, seed, label=label)


def exp1_intervals(
    frames, split: str, seeds: Iterable[int] = PAPER_SEEDS, names=None, n_boot: int = N_BOOT
) -> dict[str, pd.DataFrame]:
    """Experiment 1's table with intervals: :func:`auc_intervals` of each target's balanced
    subsamples (as :func:`analysis.predicting.steps.exp1_aucs`), by name."""
    return exp1_columns(frames, split, seeds, functools.partial(auc_intervals, n_boot=n_boot),
                        _balanced_or_whole, names)


def exp2_intervals(
    pairs, levels: Sequence[int], seeds: Iterable[int] = PAPER_SEEDS, n_boot: int = N_BOOT
) -> dict[str, dict[str, pd.DataFrame]]:
    """Experiment 2's tables with intervals (group split): :func:`auc_intervals` per pool, per copy
    level and pooled (as :func:`analysis.predicting.steps.exp2_aucs`); a pair's two rows are one
    sequence's, resampled together."""
    return exp2_columns(pairs, levels, seeds, functools.partial(auc_intervals, n_boot=n_boot))


#: Experiment 1's paired comparisons: name -> (feature set, the row it is set against)
EXP1_GAPS = {
    "hardness": ("log_freq + recency + hardness", "log_freq + recency"),
    "cross": ("log_freq + recency + hardness", "cross-model baseline"),
}


def exp1_gaps(
    frame: pd.DataFrame, seeds: Iterable[int] = PAPER_SEEDS, split: str = "random", n_boot: int = N_BOOT
) -> dict[str, Estimate]:
    """The paired differences of :data:`EXP1_GAPS` on one target's balanced subsamples (the
    table's AUCs, mean over seeds), each with its :func:`paired_interval` over the sequences;
    an empty mapping when the target cannot be split."""
    seeds = list(seeds)
    if not _both_classes(frame):
        return {}
    frames = {s: balanced_subsample(frame, s) for s in seeds}
    out = {}
    for name, (a, b) in EXP1_GAPS.items():
        try:
            rows = [stacked_rows(frames.__getitem__, fs, split, seeds, name="target") for fs in (a, b)]
            out[name] = paired_interval(*rows, n_boot=n_boot)
        except (PredictingError, StatsError):
            continue
    return out

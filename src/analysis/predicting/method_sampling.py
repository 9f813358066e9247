"""The source's three samplings, and their dataset tables in the source's layout.

* **Experiment 1** (:func:`balanced_subsample`): every positive and as many
  negatives.
* **Experiment 2** (:func:`injection_range_pairs`): one positive and one
  negative injection-range run per sequence.
* **Experiment 3** (:func:`matched_cells`, :func:`match_strata`,
  :func:`residual_recency_auc`): (target, copies) cells with 20–80% positives,
  matched 50/50 within (task, last-step bin) strata.
* :func:`exp1_stats`, :func:`exp2_stats`, :func:`exp2_run_counts` and
  :func:`exp3_stats` give the dataset tables in the source's layout.

Where the source leaves a choice open:

* **Balancing** (Experiment 1). The source keeps every positive and draws as
  many negatives; when a target has more positives than negatives,
  :func:`balanced_subsample` keeps every negative and draws as many positives
  (the smaller class is always kept whole).
* **Residual recency AUC** (Experiment 3). The size-weighted mean of the
  within-stratum AUCs of ``last_step``, over the strata that hold both classes
  (after :func:`match_strata` every stratum does).
* **Cells** keep positive rates in the closed interval ``[lo, hi]``.
* **Steps since the last copy** (dataset tables) is ``T - last_step``, so that
  ``recency = (T - last_step) / T`` is its fraction of training.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analysis.predicting.checks import PredictingError, binary, check_pool, check_T, require
from analysis.predicting.method_eval import random_split
from analysis.predicting.params import PAPER_CELL_RANGE, PAPER_STEP_BIN
from analysis.stats.auc import auc


def balanced_subsample(frame: pd.DataFrame, seed: int, label: str = "extract") -> pd.DataFrame:
    """Every example of the smaller class and as many drawn uniformly from the other.

    The source keeps every positive and draws the same number of negatives
    (its targets all have fewer positives than negatives). When positives
    outnumber negatives, every negative is kept and as many positives drawn.
    Rows keep their index and original order.
    """
    require(frame, (label,), "the frame")
    y = binary(frame[label].to_numpy(), f"column {label!r}")
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    if not len(pos) or not len(neg):
        raise PredictingError(
            f"balanced_subsample needs both classes, got {len(pos)} positives and {len(neg)} negatives"
        )
    rng = np.random.default_rng(seed)
    if len(pos) <= len(neg):
        keep = np.concatenate([pos, rng.choice(neg, size=len(pos), replace=False)])
    else:
        keep = np.concatenate([rng.choice(pos, size=len(neg), replace=False), neg])
    return frame.iloc[np.sort(keep)]


def injection_range_pairs(labels: pd.DataFrame, pool: Sequence[str], seed: int,
                          label: str = "extract") -> pd.DataFrame:
    """One positive and one negative run per sequence, drawn from the runs of a pool.

    Parameters
    ----------
    labels : DataFrame
        One row per (sequence, run): ``seq_id, run, copies, extract, window``
        and any other columns (features, task, ...), which are kept.
    pool : sequence of str
        The runs to draw from (at least two).
    seed : int
        Seed of the draws.

    Returns
    -------
    DataFrame
        For every inserted sequence (copies >= 1) that is positive under at
        least one run of the pool and negative under at least one other, two
        of its rows: a positive run drawn at random, then a negative run drawn
        at random. Sequences in sorted ``seq_id`` order; ``pair`` numbers them
        from 0. Both rows of a pair share the sequence, hence task and copies.

    Raises
    ------
    PredictingError
        A pool naming a run not in ``labels``, a duplicate (seq_id, run) row, or
        a sequence whose copies differ between the pool's runs.
    """
    require(labels, ("seq_id", "run", "copies", label), "the labels frame")
    pool = check_pool(pool, labels["run"].unique())
    sub = labels[labels["run"].isin(pool)]
    if sub.duplicated(["seq_id", "run"]).any():
        raise PredictingError("the labels frame has more than one row for some (seq_id, run)")
    varying = sub.groupby("seq_id")["copies"].nunique()
    if (varying > 1).any():
        raise PredictingError(
            f"sequence(s) {list(varying[varying > 1].index[:3])} have different copies across the "
            f"runs {pool}; a pair must differ only in the insertion schedule"
        )
    sub = sub[sub["copies"] >= 1].reset_index(drop=True)
    binary(sub[label].to_numpy(), f"column {label!r}")
    rng = np.random.default_rng(seed)
    rows, pair_ids = [], []
    for _, g in sub.groupby("seq_id", sort=True):
        order = g.sort_values("run", key=lambda r: r.map(pool.index))
        pos = order.index[order[label] == 1]
        neg = order.index[order[label] == 0]
        if len(pos) and len(neg):
            rows += [pos[rng.integers(len(pos))], neg[rng.integers(len(neg))]]
            pair_ids += [len(pair_ids) // 2] * 2
    out = sub.loc[rows].copy()
    out["pair"] = np.asarray(pair_ids, dtype=np.int64)
    return out.reset_index(drop=True)


def matched_cells(frame: pd.DataFrame, lo: float = PAPER_CELL_RANGE[0], hi: float = PAPER_CELL_RANGE[1],
                  label: str = "extract") -> pd.DataFrame:
    """Inserted sequences of the (target, copies) cells with ``lo <= positive rate <= hi``.

    ``frame`` has one row per (target, sequence) with ``target, copies`` and the
    label. Rows with 0 copies are dropped first; the kept rows get ``pos_rate``,
    their cell's positive rate.
    """
    require(frame, ("target", "copies", label), "the frame")
    if not 0 <= lo <= hi <= 1:
        raise PredictingError(f"need 0 <= lo <= hi <= 1, got lo={lo}, hi={hi}")
    ins = frame[frame["copies"] >= 1].copy()
    binary(ins[label].to_numpy(), f"column {label!r}")
    ins["pos_rate"] = ins.groupby(["target", "copies"])[label].transform("mean")
    return ins[(ins["pos_rate"] >= lo) & (ins["pos_rate"] <= hi)]


def _strata_keys(frame: pd.DataFrame) -> list[str]:
    return [c for c in ("target", "copies") if c in frame.columns] + ["task", "stratum"]


def match_strata(cell_frame: pd.DataFrame, step_bin: int = PAPER_STEP_BIN, seed: int = 0,
                 label: str = "extract") -> pd.DataFrame:
    """Match positives and negatives 1:1 within (task, last-step bin) strata of each cell.

    Strata are keyed by ``target`` and ``copies`` (when present: the cell),
    ``task`` and ``stratum = last_step // step_bin``. Each stratum keeps
    ``min(#pos, #neg)`` rows of each class, drawn at random without
    replacement (strata in sorted key order); the result is exactly 50/50
    within every stratum. Rows keep their index and order and gain ``stratum``.
    """
    require(cell_frame, ("task", "last_step", label), "the cell frame")
    if not isinstance(step_bin, (int, np.integer)) or step_bin < 1:
        raise PredictingError(f"step_bin must be a positive integer, got {step_bin!r}")
    steps = cell_frame["last_step"].to_numpy(float)
    if np.isnan(steps).any() or (steps < 0).any():
        raise PredictingError("match_strata needs inserted sequences only (every last_step >= 0)")
    y = binary(cell_frame[label].to_numpy(), f"column {label!r}")
    framed = cell_frame.assign(stratum=(steps // step_bin).astype(np.int64))
    rng = np.random.default_rng(seed)
    keep = []
    pos_in = np.arange(len(framed))
    strata = framed.groupby(_strata_keys(framed), sort=True).indices
    for _, idx in sorted(strata.items(), key=lambda kv: kv[0]):
        p, n = pos_in[idx][y[idx] == 1], pos_in[idx][y[idx] == 0]
        m = min(len(p), len(n))
        if m:
            keep += [rng.choice(p, m, replace=False), rng.choice(n, m, replace=False)]
    return framed.iloc[np.sort(np.concatenate(keep))] if keep else framed.iloc[:0]


def residual_recency_auc(matched: pd.DataFrame, label: str = "extract") -> float:
    """Size-weighted mean over strata of the within-stratum AUC of a later last copy.

    The score is ``last_step``; strata are those of :func:`match_strata` (its
    ``stratum`` column is required). Only strata holding both classes count
    (after matching, all do); 0.5 means no recency signal is left.
    """
    require(matched, ("task", "last_step", "stratum", label), "the matched frame")
    total, weight = 0.0, 0
    for _, g in matched.groupby(_strata_keys(matched), sort=True):
        y = binary(g[label].to_numpy(), f"column {label!r}")
        if 0 < y.sum() < len(y):
            total += len(g) * auc(y, g["last_step"].to_numpy(float))
            weight += len(g)
    if not weight:
        raise PredictingError("no stratum holds both classes, so the residual recency AUC is undefined")
    return total / weight


def _long(frames, key: str) -> pd.DataFrame:
    if isinstance(frames, pd.DataFrame):
        require(frames, (key,), "the frame")
        return frames
    if not frames:
        raise PredictingError("no frames given")
    return pd.concat([f.assign(**{key: name}) for name, f in frames.items()], ignore_index=True)


def _steps_since(frame: pd.DataFrame, T) -> np.ndarray:
    if T is None:
        require(frame, ("T",), "the frame (or pass T)")
        T = frame["T"].to_numpy(float)
    else:
        T = check_T(T)
    return T - frame["last_step"].to_numpy(float)


def _quartiles(x: np.ndarray) -> tuple[float, float, float]:
    return tuple(float(v) for v in np.percentile(x, [50, 25, 75]))


def exp1_stats(samples, seed: int = 0, label: str = "extract") -> pd.DataFrame:
    """Experiment 1's dataset table from the balanced subsamples.

    Parameters
    ----------
    samples : mapping target -> DataFrame, or DataFrame with ``target``
        The balanced subsample of each target (``copies`` and the label).
    seed : int
        ``random_state`` of the random split whose test set is counted.

    Returns
    -------
    DataFrame
        ``target, n_examples, n_pos, n_neg, controls_pos, controls_neg, test_n,
        test_pos`` (controls: 0 copies), targets in order of appearance;
        ``test_n`` and ``test_pos`` are missing for a target too small to split.
    """
    frame = _long(samples, "target")
    require(frame, ("copies", label), "the samples")
    rows = []
    for target, g in frame.groupby("target", sort=False):
        y = binary(g[label].to_numpy(), f"column {label!r}")
        control = g["copies"].to_numpy() == 0
        try:
            _, test = random_split(y, seed)
            test_n, test_pos = len(test), int(y[test].sum())
        except PredictingError:  # too few of a class to split: no test set (the table's "—")
            test_n, test_pos = pd.NA, pd.NA
        rows.append(dict(target=target, n_examples=len(y), n_pos=int(y.sum()), n_neg=int((y == 0).sum()),
                         controls_pos=int((control & (y == 1)).sum()),
                         controls_neg=int((control & (y == 0)).sum()),
                         test_n=test_n, test_pos=test_pos))
    return pd.DataFrame(rows)


def exp2_stats(pairs, T: int | None = None, label: str = "extract") -> pd.DataFrame:
    """Experiment 2's dataset table from the pairs of each pool.

    Parameters
    ----------
    pairs : mapping pool -> DataFrame, or DataFrame with ``pool``
        Output of :func:`injection_range_pairs` with ``task``, ``last_step``
        and ``T`` (or pass ``T``).

    Returns
    -------
    DataFrame
        ``pool, copies, n_pairs, n_examples, n_pos, n_neg, n_tasks,
        steps_since_median, steps_since_q1, steps_since_q3``: one row per
        copies level and an ``"all"`` row per pool (``copies`` is text).
        Steps since the last copy (``T - last_step``) are over both examples
        of every pair.
    """
    frame = _long(pairs, "pool")
    require(frame, ("pair", "copies", "task", "last_step", label), "the pairs")
    frame = frame.assign(_since=_steps_since(frame, T))
    rows = []
    for pool, g in frame.groupby("pool", sort=False):
        parts = [(str(c), gc) for c, gc in g.groupby("copies", sort=True)] + [("all", g)]
        for copies, gc in parts:
            med, q1, q3 = _quartiles(gc["_since"].to_numpy())
            y = gc[label].to_numpy()
            rows.append(dict(pool=pool, copies=copies, n_pairs=gc["pair"].nunique(), n_examples=len(gc),
                             n_pos=int((y == 1).sum()), n_neg=int((y == 0).sum()),
                             n_tasks=gc["task"].nunique(), steps_since_median=med, steps_since_q1=q1,
                             steps_since_q3=q3))
    return pd.DataFrame(rows)


def exp2_run_counts(pairs, label: str = "extract") -> pd.DataFrame:
    """Experiment 2's examples per run: ``pool, run, n_pos, n_neg`` (runs in order of appearance)."""
    frame = _long(pairs, "pool")
    require(frame, ("run", label), "the pairs")
    out = frame.groupby(["pool", "run"], sort=False)[label].agg(
        n_pos=lambda y: int((y == 1).sum()), n_neg=lambda y: int((y == 0).sum()))
    return out.reset_index()


def exp3_stats(matched: pd.DataFrame, T: int | None = None, label: str = "extract") -> pd.DataFrame:
    """Experiment 3's dataset table from the matched set.

    Parameters
    ----------
    matched : DataFrame
        Output of :func:`match_strata` on :func:`matched_cells` (``target,
        copies, pos_rate, task, stratum, last_step, seq_id`` and ``T``, or pass ``T``).

    Returns
    -------
    DataFrame
        ``cell, copies, pos_rate_before, n_examples, n_pos, n_neg, n_tasks,
        n_strata, steps_since_median, steps_since_q1, steps_since_q3,
        residual_recency_auc, n_sequences``: one row per (target, copies) cell
        (targets in order of appearance, copies ascending) and a ``"pooled"``
        row (copies, positive rate and steps NaN, as the source's "—").
        ``n_sequences`` counts unique ``seq_id`` (the source gives it for the
        pooled set only).
    """
    require(matched, ("target", "copies", "pos_rate", "task", "stratum", "last_step", "seq_id", label),
             "the matched frame")
    matched = matched.assign(_since=_steps_since(matched, T))
    rows = []

    def row(cell, g, copies, rate, s):
        y = g[label].to_numpy()
        med, q1, q3 = _quartiles(s) if s is not None else (np.nan,) * 3
        return dict(cell=cell, copies=copies, pos_rate_before=rate, n_examples=len(g),
                    n_pos=int((y == 1).sum()), n_neg=int((y == 0).sum()), n_tasks=g["task"].nunique(),
                    n_strata=len(g.groupby(_strata_keys(g)).size()), steps_since_median=med,
                    steps_since_q1=q1, steps_since_q3=q3, residual_recency_auc=residual_recency_auc(g, label),
                    n_sequences=g["seq_id"].nunique())

    for target in pd.unique(matched["target"]):
        for copies, g in matched[matched["target"] == target].groupby("copies", sort=True):
            rows.append(row(target, g, copies, float(g["pos_rate"].iloc[0]), g["_since"].to_numpy()))
    rows.append(row("pooled", matched, np.nan, np.nan, None))
    return pd.DataFrame(rows)


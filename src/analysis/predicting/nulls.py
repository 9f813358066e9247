"""The chapter's computed nulls: each AUC that follows a fit, a split or a selection, against
the same statistic with the labels permuted through the same pipeline.

An AUC of held-out predictions is not centred at 0.5 under the null once the
examples are balanced, matched or split by group: a feature that is constant
within every cell of Experiment 3 (log_freq) scores about 0.39 pooled, since
the folds of a balanced set are unbalanced the other way. So every such claim
is compared with the distribution of its own statistic over labels permuted
within the design's strata and pushed through the same sampling, split, fit
and pooling (:func:`analysis.stats.resampling.permute_labels`,
:func:`analysis.stats.resampling.permutation_p`):

* :func:`exp1_null`: Experiment 1, a target's labels permuted among its
  sequences (nothing is controlled), then balanced per seed, split 80/20 and fit;
* :func:`exp2_null`: Experiment 2, the label swapped within each pair (the two
  runs of one sequence), then fit under the group split, per seed;
* :func:`exp3_null`: Experiment 3, the labels permuted within each matching
  stratum (target, copies, task, last-step bin), so every cell keeps its positive
  rate and every stratum its classes, then matched per seed, fit under the group
  split and pooled; the three AUCs of the claims, log_freq (the control: constant
  within every cell) and the suffix-minus-whole-sequence gap from the same draws;
* :func:`window_null`: the window end's AUC over the quarters' inserted
  (sequence, run) rows, each sequence's labels permuted among its runs;
* :func:`group_null`: a difference of means between two groups of units.

Each returns :class:`~analysis.stats.result.Estimate` per statistic: the observed
value, the two-sided permutation p, the null's median (``null_value``), its 2.5%
and 97.5% points, the rows and the units. The costly ones are memoized in
:mod:`analysis.predicting.memo`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.predicting.checks import PredictingError, require
from analysis.predicting.method_eval import evaluate, held_out_scores
from analysis.predicting.method_sampling import _strata_keys, balanced_subsample
from analysis.predicting.params import PAPER_SEEDS, THREE
from analysis.stats.auc import auc
from analysis.stats.resampling import MIN_PERMUTATIONS, permutation_p, permute_labels
from analysis.stats.result import Estimate, StatsError

#: permutations of every computed null (the protocol's minimum)
N_PERM = MIN_PERMUTATIONS
#: Experiment 3's statistics: name -> (feature set, hardness measure)
EXP3_STATS = {"full": (THREE, "full"), "suffix": (THREE, "suffix"), "cross": ("cross-model baseline", "full"),
              "log_freq": ("log_freq", "full")}


def permutation_stats(stats: Callable[[np.ndarray], Mapping[str, float]], labels: Sequence, *,
                      strata: Sequence | None = None, n_units: int | None = None, n_perm: int = N_PERM,
                      seed: int = 0) -> dict[str, Estimate]:
    """The permutation null of several statistics of one pipeline, from the same draws.

    ``stats(labels)`` returns named numbers (NaN where the pipeline cannot run);
    ``labels`` are permuted among rows within ``strata`` (each row its own unit:
    the label of a row is what the design randomizes). Per name: the observed
    value, the two-sided p ``(1 + #{as extreme}) / (1 + n)`` over the finite draws,
    the null's median and 2.5%/97.5% points, ``n`` rows and ``n_units``.
    """
    if n_perm < MIN_PERMUTATIONS:
        raise PredictingError(f"n_perm must be at least {MIN_PERMUTATIONS}, got {n_perm!r}")
    labels = np.asarray(labels)
    observed = dict(stats(labels))
    rng = np.random.default_rng(seed)
    draws = [dict(stats(permute_labels(labels, rng, strata=strata))) for _ in range(n_perm)]
    out = {}
    for name, value in observed.items():
        null = np.array([d[name] for d in draws], dtype=float)
        null = null[np.isfinite(null)]
        k = len(labels) if n_units is None else n_units
        if not len(null) or not np.isfinite(value):
            out[name] = Estimate(float(value), n=len(labels), n_units=k, method="permutation")
            continue
        out[name] = Estimate(float(value), *(float(q) for q in np.quantile(null, [0.025, 0.975])),
                             p=permutation_p(float(value), null, "two-sided"), n=len(labels), n_units=k,
                             method="permutation", null_value=float(np.median(null)), n_null=len(null))
    return out


def _mean_or_nan(fn: Callable[[int], float], seeds: Iterable[int]) -> float:
    """The mean over seeds of ``fn(seed)``, NaN when any seed cannot be split or scored (as the
    tables' :func:`analysis.predicting.method_eval.auc_rows` leaves the whole row out)."""
    try:
        return float(np.mean([fn(s) for s in seeds]))
    except (PredictingError, StatsError):
        return float("nan")


# -- Experiment 1 -----------------------------------------------------------------------------------


def exp1_null(frame: pd.DataFrame, seeds: Iterable[int] = PAPER_SEEDS, feature_set: str = THREE,
              n_perm: int = N_PERM, seed: int = 0) -> dict[str, Estimate]:
    """The 3-feature AUC of Experiment 1 (random split, mean over ``seeds``) of one target's
    ``frame``, against its labels permuted among the target's sequences: each draw is balanced
    per seed (:func:`balanced_subsample`), split with ``random_state=0`` and fit, as the table's.
    Returns ``{"three": Estimate}``; units are the target's sequences (one row each)."""
    require(frame, ("extract",), "the target's frame")
    seeds = list(seeds)

    def stats(y):
        f = frame.assign(extract=y)
        return {"three": _mean_or_nan(lambda s: evaluate(balanced_subsample(f, s), feature_set, "random", 0,
                                                         name="null"), seeds)}

    return permutation_stats(stats, frame["extract"].to_numpy(), n_units=len(frame), n_perm=n_perm, seed=seed)


# -- Experiment 2 -----------------------------------------------------------------------------------


def exp2_null(by_seed: Mapping[int, pd.DataFrame], feature_sets: Sequence[str] = ("recency", "log_freq"),
              n_perm: int = N_PERM, seed: int = 0) -> dict[str, Estimate]:
    """Experiment 2's pooled AUC of each of ``feature_sets`` (group split, mean over the seeds of
    ``by_seed``, one pool's pairs per seed) against the label swapped within each pair at random.
    Units are the pairs' sequences (one pair per sequence and seed)."""
    seeds = sorted(by_seed)
    if not seeds:
        raise PredictingError("exp2_null needs the pairs of at least one seed")
    stacked = pd.concat([by_seed[s].assign(_seed=s) for s in seeds], ignore_index=True)
    require(stacked, ("pair", "seq_id", "extract"), "the pairs")
    bounds = np.cumsum([0] + [len(by_seed[s]) for s in seeds])

    def stats(y):
        parts = {s: by_seed[s].assign(extract=y[bounds[i]:bounds[i + 1]]) for i, s in enumerate(seeds)}
        return {fs: _mean_or_nan(lambda s, fs=fs: evaluate(parts[s], fs, "group", s, name="null"), seeds)
                for fs in feature_sets}

    strata = stacked["_seed"].astype(str) + "/" + stacked["pair"].astype(str)
    n_units = int(by_seed[seeds[0]]["seq_id"].nunique())
    return permutation_stats(stats, stacked["extract"].to_numpy(), strata=strata.to_numpy(), n_units=n_units,
                             n_perm=n_perm, seed=seed)


def exp2_level_nulls(by_seed: Mapping[int, pd.DataFrame], levels: Sequence[int],
                     feature_sets: Sequence[str] = ("recency", "log_freq"), n_perm: int = N_PERM,
                     seed: int = 0) -> dict[int, dict[str, Estimate] | None]:
    """:func:`exp2_null` of one pool's pairs at each copy level of ``levels`` (each seed's pairs at
    that level); None for a level where some seed has no pairs (no positives: nothing to permute)."""
    out = {}
    for c in levels:
        parts = {s: f[f["copies"] == c] for s, f in by_seed.items()}
        out[int(c)] = (exp2_null(parts, feature_sets, n_perm, seed)
                       if parts and all(len(f) for f in parts.values()) else None)
    return out


def window_null(labels: pd.DataFrame, runs: Sequence[str], n_perm: int = N_PERM,
                seed: int = 0) -> dict[str, Estimate]:
    """The AUC of the window's end for the label over the inserted (sequence, run) rows of
    ``runs``, against each sequence's labels permuted among its runs (a sequence's rows are one
    unit's: under the null its extraction does not depend on the window). ``{"window": Estimate}``."""
    require(labels, ("seq_id", "run", "copies", "extract", "window_end"), "the labels frame")
    ins = labels[labels["run"].isin(list(runs)) & (labels["copies"] >= 1)]
    score = ins["window_end"].to_numpy(float)

    def stats(y):
        return {"window": auc(y, score) if 0 < y.sum() < len(y) else float("nan")}

    return permutation_stats(stats, ins["extract"].to_numpy(), strata=ins["seq_id"].astype(str).to_numpy(),
                             n_units=int(ins["seq_id"].nunique()), n_perm=n_perm, seed=seed)


def group_null(values: Sequence[float], group: Sequence[bool], n_perm: int = N_PERM,
               seed: int = 0) -> Estimate:
    """Mean of ``values`` where ``group`` minus where not, against ``group`` permuted among the
    units (one value per unit)."""
    v = np.asarray(values, dtype=float)

    def stats(g):
        g = g.astype(bool)
        return {"diff": float(v[g].mean() - v[~g].mean()) if 0 < g.sum() < len(g) else float("nan")}

    return permutation_stats(stats, np.asarray(group, dtype=bool), n_perm=n_perm, seed=seed)["diff"]


# -- Experiment 3 -----------------------------------------------------------------------------------


class _Matcher:
    """:func:`analysis.predicting.steps.match_cells` for many label vectors of one cells frame:
    the strata are found once, then each call draws exactly what ``match_cells(cells.assign(
    extract=y), bins, seed)`` draws (one generator per cell seeded by ``seed``, strata in sorted
    key order), and returns the row positions in the same order."""

    def __init__(self, cells: pd.DataFrame, bins: Mapping[str, int]):
        require(cells, ("target", "copies", "task", "last_step", "extract"), "the cells frame")
        self.cells = cells.reset_index(drop=True)
        keys = list(self.cells.groupby(["target", "copies"], sort=False).groups)
        self.parts = []
        for t, c in keys:
            pos = np.flatnonzero(((self.cells["target"] == t) & (self.cells["copies"] == c)).to_numpy())
            sub = self.cells.iloc[pos]
            framed = sub.assign(stratum=(sub["last_step"].to_numpy(float) // bins[t]).astype(np.int64))
            strata = framed.groupby(_strata_keys(framed), sort=True).indices
            self.parts.append((pos, [idx for _, idx in sorted(strata.items(), key=lambda kv: kv[0])]))

    def rows(self, y: np.ndarray, seed: int) -> np.ndarray:
        out = []
        for pos, strata in self.parts:
            rng = np.random.default_rng(seed)
            yc = y[pos]
            keep = []
            for idx in strata:
                p, n = idx[yc[idx] == 1], idx[yc[idx] == 0]
                m = min(len(p), len(n))
                if m:
                    keep += [rng.choice(p, m, replace=False), rng.choice(n, m, replace=False)]
            if keep:
                out.append(pos[np.sort(np.concatenate(keep))])
        return np.concatenate(out) if out else np.array([], dtype=int)

    def strata(self) -> np.ndarray:
        """Each row's matching stratum, as one label."""
        label = np.empty(len(self.cells), dtype=object)
        for i, (pos, strata) in enumerate(self.parts):
            for j, idx in enumerate(strata):
                label[pos[idx]] = f"{i}/{j}"
        return label


def exp3_null(cells: pd.DataFrame, bins: Mapping[str, int], seeds: Iterable[int] = PAPER_SEEDS,
              n_perm: int = N_PERM, seed: int = 0, split: str = "group") -> dict[str, Estimate]:
    """Experiment 3's pooled AUCs (mean over ``seeds``) of :data:`EXP3_STATS` and the gap
    ``suffix - full``, against the labels permuted within the matching strata of every cell and
    matched, split and fit again. ``split`` is ``"group"`` (the pooled out-of-fold AUC) or
    ``"task"`` (leave-one-task-out, the mean of the per-task AUCs, as the table's); under the task
    split a score fit on the other tasks has mean 0.5 under these permutations, and log_freq,
    constant within every cell, scores exactly 0.5. Units are the distinct sequences of the seed-0
    matched set (the group split keeps a sequence's rows of every cell in one fold); the extra
    ``"n_cells"`` estimate holds the number of cells as its value and the seed-0 matched rows as
    its ``n``."""
    if split not in ("group", "task"):
        raise PredictingError(f"split must be 'group' or 'task', got {split!r}")
    seeds = list(seeds)
    match = _Matcher(cells, bins)
    frame = match.cells

    def one(m, fs, s, h):
        if split == "task":
            return evaluate(m, fs, "task", s, hardness=h, name="pooled")
        return auc(*held_out_scores(m, fs, s, hardness=h, name="pooled"))

    def stats(y):
        f = frame.assign(extract=y)
        per_seed = {k: [] for k in (*EXP3_STATS, "gap")}
        try:
            for s in seeds:
                m = f.iloc[match.rows(y, s)]
                for name, (fs, h) in EXP3_STATS.items():
                    per_seed[name].append(one(m, fs, s, h))
                per_seed["gap"].append(per_seed["suffix"][-1] - per_seed["full"][-1])
        except (PredictingError, StatsError):
            return {k: float("nan") for k in per_seed}
        return {k: float(np.mean(v)) for k, v in per_seed.items()}

    y0 = frame["extract"].to_numpy()
    first = frame.iloc[match.rows(y0, seeds[0])] if seeds else frame.iloc[:0]
    n_units = int(first["seq_id"].nunique()) if "seq_id" in first else len(first)
    out = permutation_stats(stats, y0, strata=match.strata(), n_units=n_units, n_perm=n_perm, seed=seed)
    out["n_cells"] = Estimate(float(len(match.parts)), n=len(first), n_units=n_units)
    return out

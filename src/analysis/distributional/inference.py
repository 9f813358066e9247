"""Inference over whole units: the facts of the knowledge task, the problems of the
reasoning task, and the models of the ladder.

The pairs of one fact share its prompt and answer, so the model side of a Mem_n,
``log P(answer n-gram | prompt)``, is (nearly) one value per fact, repeated over the
fact's pairs; the pairs of one reasoning problem share its solution. A p-value that
treats the pairs as independent counts one fact many times. So:

* :func:`cluster_spearman`: Spearman's ρ between the corpus side and the model side,
  with a **cluster permutation** null: the model values move between units as whole
  blocks (unit ``u``'s pairs take the model values of unit ``π(u)``, pair by pair in
  order, cyclically where the two units hold different numbers of pairs), the
  corpus side stays, ρ is recomputed ``n_perm`` times. The same seeded permutations
  serve every model of a table, so any statistic over the models (the median ρ, the
  weakest ρ) has its null too. The **negative control** is one more such move: the
  answers swapped between units by a fixed derangement (no unit keeps its own), an
  arm in which the fact–answer association is absent by construction;
* :func:`cluster_mem_table`: every row of a Mem table with that p-value (``pvalue``;
  the pairs-as-independent p is kept as ``pvalue_pairs``), its units, the null's
  median, the null draws and the control (computed once, then read from the artifact
  cache);
* :func:`model_trend`: a measure against model size across the ladder, Spearman's ρ
  with a permutation null over the models (the unit of an across-model trend);
* :func:`share_bootstrap`: a share of pairs with a cluster bootstrap over units, its
  95% interval and a two-sided bootstrap p-value against a bound.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from analysis import ngrams
from analysis.core.cache import memoized
from analysis.distributional.method import corpus_lms
from analysis.distributional.params import CHAPTER_THRESHOLDS, MODEL_PERM, N_PERM, PERM_SEED
from analysis.stats import ranks
from analysis.stats.resampling import MIN_PERMUTATIONS, permutation_p
from analysis.stats.result import StatsError

# ---------------------------------------------------------------------------
# Moving whole units
# ---------------------------------------------------------------------------


def _derangement(k: int, rng: np.random.Generator) -> np.ndarray:
    """A permutation of 0..k-1 with no fixed point (a random cycle through every unit)."""
    order = rng.permutation(k)
    out = np.empty(k, dtype=int)
    out[order] = np.roll(order, -1)
    return out


def unit_maps(units, n_perm: int = N_PERM, seed: int = PERM_SEED) -> np.ndarray:
    """Row maps that move whole units: row 0 swaps the units by a fixed derangement
    (the negative control), rows 1..``n_perm`` by seeded random permutations. Entry
    ``[b, r]`` is the row whose value row ``r`` takes: the pair at the same position
    (cyclically) in the unit that row ``r``'s unit is mapped to."""
    if n_perm < MIN_PERMUTATIONS:
        raise StatsError(f"n_perm must be at least {MIN_PERMUTATIONS}, got {n_perm!r}")
    _, codes = np.unique(np.asarray(units).astype(str), return_inverse=True)
    k = int(codes.max()) + 1 if len(codes) else 0
    if k < 2:
        raise StatsError(f"moving units needs at least two units, got {k}")
    flat = np.argsort(codes, kind="stable")  # rows grouped by unit, in order
    size = np.bincount(codes, minlength=k)
    start = np.concatenate([[0], np.cumsum(size)[:-1]])
    pos = np.empty(len(codes), dtype=int)
    pos[flat] = np.arange(len(codes)) - np.repeat(start, size)
    rng = np.random.default_rng(seed)
    perms = [_derangement(k, rng)] + [rng.permutation(k) for _ in range(n_perm)]
    maps = np.empty((n_perm + 1, len(codes)), dtype=np.int64)
    for b, pi in enumerate(perms):
        to = pi[codes]
        maps[b] = flat[start[to] + pos % size[to]]
    return maps


def _row_corr(rx: np.ndarray, ry: np.ndarray) -> np.ndarray:
    """Pearson correlation of the vector ``rx`` with each row of ``ry``."""
    a = rx - rx.mean()
    b = ry - ry.mean(axis=-1, keepdims=True)
    den = np.sqrt((a * a).sum()) * np.sqrt((b * b).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return (b @ a) / den


def cluster_spearman(x, y, units, n_perm: int = N_PERM, seed: int = PERM_SEED,
                     maps: np.ndarray | None = None) -> dict:
    """Spearman's ρ of ``x`` (the corpus side) and ``y`` (the model side) over the
    finite pairs, with the cluster permutation null of the module: ``rho``,
    ``pvalue`` (two-sided, ``(1 + #{|null| ≥ …}) / (1 + n_perm)`` as
    :func:`analysis.stats.resampling.permutation_p`), ``units`` (distinct units),
    ``null_rho`` (the null's median), ``null`` (its draws), ``control_rho`` (the
    answers swapped between units) and ``control_pvalue`` (against the same null).
    NaN throughout with fewer than three pairs or two units, or a constant side.
    ``maps`` (:func:`unit_maps` of the finite rows) can be passed to share them."""
    x, y, units = np.asarray(x, float), np.asarray(y, float), np.asarray(units)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y, units = x[ok], y[ok], units[ok]
    k = len(np.unique(units.astype(str)))
    out = {"rho": np.nan, "pvalue": np.nan, "units": k, "null_rho": np.nan, "null": np.full(n_perm, np.nan),
           "control_rho": np.nan, "control_pvalue": np.nan}
    if len(x) < ranks.MIN_RANK_PAIRS or k < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return out
    maps = unit_maps(units, n_perm, seed) if maps is None else maps
    rx = rankdata(x)
    r = _row_corr(rx, rankdata(y[maps], axis=1))
    rho = float(_row_corr(rx, rankdata(y)[None, :])[0])
    control, null = float(r[0]), r[1:]
    finite = null[np.isfinite(null)]
    if not len(finite):
        return out | {"rho": rho}
    return out | {"rho": rho, "pvalue": permutation_p(rho, finite, "two-sided"),
                  "null_rho": float(np.median(finite)),
                  "null": null, "control_rho": control,
                  "control_pvalue": permutation_p(control, finite, "two-sided")}


# ---------------------------------------------------------------------------
# The Mem tables with their cluster nulls
# ---------------------------------------------------------------------------

#: the columns :func:`cluster_mem_table` adds to a Mem table
CLUSTER_COLUMNS = ("pvalue_pairs", "units", "null_rho", "null", "control_rho", "control_pvalue")


def _masks(task: str, n: int, table: pd.DataFrame) -> dict[str, np.ndarray]:
    masks = {"no filter": np.ones(len(table), bool)}
    if "cosine" in table and task in CHAPTER_THRESHOLDS:
        masks["paper"] = ngrams.cosine_keep(table, CHAPTER_THRESHOLDS[task][n], table["cosine"].to_numpy())
    return masks


def _cluster_rows(mem: pd.DataFrame, tables: Mapping[tuple, pd.DataFrame], log_llm: Mapping[tuple,
                                                                                            np.ndarray],
                  log_inf: Mapping[tuple, np.ndarray] | None, n_perm: int, seed: int) -> pd.DataFrame:
    """:func:`cluster_mem_table`, computed."""
    out = mem.copy()
    out["pvalue_pairs"] = out["pvalue"]
    extra = {c: [] for c in CLUSTER_COLUMNS[1:]}
    pvalues = []
    maps_for: dict[bytes, np.ndarray] = {}
    for row in out.itertuples(index=False):
        table = tables[(row.task, row.n)]
        mask = _masks(row.task, row.n, table)[row.filter]
        if row.lm == "task-gram" or log_inf is None:
            x = table["p_taskgram"].to_numpy(float)
        else:
            x = corpus_lms(table, log_inf[(row.task, row.n)])[row.lm]
        with np.errstate(divide="ignore"):
            x = -np.log(x)[mask]
        y = -np.asarray(log_llm[(row.model, row.task, row.n)], float)[mask]
        units = table["instance"].to_numpy()[mask]
        keep = np.isfinite(x) & np.isfinite(y)
        key = (row.task, row.n, row.filter, keep.tobytes())
        maps = None
        if keep.sum() >= ranks.MIN_RANK_PAIRS and len(np.unique(units[keep])) >= 2:
            if key not in maps_for:
                maps_for[key] = unit_maps(units[keep], n_perm, seed)
            maps = maps_for[key]
        r = cluster_spearman(x, y, units, n_perm, seed, maps=maps) if maps is not None else (
            cluster_spearman(x, y, units, n_perm, seed))
        pvalues.append(r["pvalue"])
        for c in extra:
            extra[c].append(r[c])
    out["pvalue"] = pvalues
    for c, v in extra.items():
        out[c] = v if c != "null" else pd.Series(v, index=out.index, dtype=object)
    return out


def _cluster_mem_table(mem: pd.DataFrame, tables: Mapping[tuple, pd.DataFrame],
                       log_llm: Mapping[tuple, np.ndarray], log_inf: Mapping[tuple, np.ndarray] | None = None,
                       n_perm: int = N_PERM, seed: int = PERM_SEED) -> pd.DataFrame:
    """A Mem table (:func:`~analysis.distributional.method_tables.mem_table` or
    :func:`~analysis.distributional.method_tables.taskgram_mem_table`) with every
    row's p-value from the cluster permutation of :func:`cluster_spearman` over the
    units of its table (its ``instance``: a fact, a problem, a question): ``pvalue``
    (the pairs-as-independent one kept as ``pvalue_pairs``), ``units``, ``null_rho``,
    ``null`` (the draws, shared permutations across the models of a table),
    ``control_rho`` and ``control_pvalue``."""
    return _cluster_rows(mem, tables, log_llm, log_inf, n_perm, seed)


#: :func:`_cluster_mem_table`, computed once per inputs, then read from the artifact cache
cluster_mem_table = memoized("distributional-cluster-nulls",
                             code=("analysis.distributional.method", "analysis.stats.resampling",
                                   "analysis.ngrams.embedding"))(_cluster_mem_table)


def aggregate_null(rows: pd.DataFrame, how=np.median) -> tuple[float, float, float, float, float]:
    """A statistic over the models (``how`` of their ρ, such as the median) with its
    cluster permutation null, from rows of :func:`cluster_mem_table` that share one
    table (their permutations are the same): (value, two-sided p, the null's median,
    the control's value, its p)."""
    rho = rows["rho"].to_numpy(float)
    if not np.isfinite(rho).any():
        return (np.nan,) * 5
    null = np.vstack([np.asarray(v, float) for v in rows["null"]])
    draws = how(null, axis=0)
    draws = draws[np.isfinite(draws)]
    value, control = float(how(rho)), float(how(rows["control_rho"].to_numpy(float)))
    if not len(draws):
        return value, np.nan, np.nan, control, np.nan
    return (value, permutation_p(value, draws, "two-sided"), float(np.median(draws)), control,
            permutation_p(control, draws, "two-sided"))


# ---------------------------------------------------------------------------
# Across the ladder, and shares of pairs
# ---------------------------------------------------------------------------


def model_trend(params, values, n_perm: int = MODEL_PERM, seed: int = PERM_SEED) -> dict:
    """Spearman's ρ of ``values`` against ``params`` over the models with finite
    values, with a permutation null over the models (the values shuffled among
    them, ``n_perm`` seeded times): ``rho``, ``pvalue`` (two-sided), ``null_rho``
    (the null's median) and ``models``. NaN with fewer than three finite values or a
    constant side."""
    params, values = np.asarray(params, float), np.asarray(values, float)
    ok = np.isfinite(params) & np.isfinite(values)
    est = ranks.rank_trend(params[ok], values[ok])
    out = {"rho": est.value, "pvalue": np.nan, "null_rho": np.nan, "models": int(ok.sum())}
    if not np.isfinite(est.value):
        return out
    rng = np.random.default_rng(seed)
    rx, ry = rankdata(params[ok]), rankdata(values[ok])
    null = _row_corr(rx, np.vstack([ry[rng.permutation(len(ry))] for _ in range(n_perm)]))
    return out | {"pvalue": permutation_p(est.value, null, "two-sided"), "null_rho": float(np.median(null))}


def share_bootstrap(hit, units, bound: float, n_boot: int = 2000, seed: int = PERM_SEED) -> dict:
    """The share of rows with ``hit``, with a cluster bootstrap over ``units`` (whole
    units drawn with replacement): ``value``, ``interval`` (95% percentile),
    ``pvalue`` (two-sided: twice the share of draws on the far side of ``bound``,
    ``(1 + count) / (1 + n_boot)``) and ``units``."""
    hit = np.asarray(hit, float)
    _, codes = np.unique(np.asarray(units).astype(str), return_inverse=True)
    k = int(codes.max()) + 1 if len(codes) else 0
    if k < 2:
        return {"value": float(hit.mean()) if len(hit) else np.nan, "interval": None, "pvalue": np.nan,
                "units": k}
    hits, sizes = np.bincount(codes, hit, k), np.bincount(codes, minlength=k).astype(float)
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, k, size=(n_boot, k))
    draws = hits[pick].sum(axis=1) / sizes[pick].sum(axis=1)
    value = float(hits.sum() / sizes.sum())
    lo, hi = np.quantile(draws, [0.025, 0.975])
    far = np.count_nonzero(draws >= bound) if value < bound else np.count_nonzero(draws <= bound)
    return {"value": value, "interval": (float(lo), float(hi)),
            "pvalue": float(min(1.0, 2 * (1 + far) / (1 + n_boot))), "units": k}

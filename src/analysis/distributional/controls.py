"""Separating memorization from answer frequency, with the fact (problem) as the unit.

Two things a ``Mem_n`` can confuse with memorization of the pair:

* **answer frequency.** A model gives a frequent answer a high probability whatever
  the question, and a frequent output n-gram co-occurs with more input n-grams, so
  ``P_{n,D}`` and ``P_LLM`` can rank together through ``C(s^y)`` alone.
  :func:`partial_mem_table` reports, beside the plain ``Mem_n``, the partial Spearman
  correlation with ``log C(s^y)`` held fixed (:mod:`analysis.stats.partial`), on the
  task and on its **answers-swapped** set (:func:`swapped_task`: each question asked
  with another fact's answer, whose pairs co-occur only through the corpus's
  mentions of a question beside another fact's answer), where no fact–answer
  association exists, so whatever survives there is the method's, not memory's;
* **the pairs as units.** A fact's pairs share its prompt and answer, so the model
  side is (nearly) one value per fact: every ρ here gets a 95% interval from a
  bootstrap over whole facts (problems), and every size trend one from the same
  resamples (each resample recomputes every model's ρ, then the trend with size).
  ``distinct`` counts the distinct model values the pairs carry.

Used by the chapter's memorization section (``notebooks/distributional.md``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy.stats import kendalltau, rankdata

from analysis.core.cache import memoized
from analysis.distributional.inference import _row_corr, unit_maps
from analysis.distributional.method import corpus_lms
from analysis.distributional.params import N_BOOT, N_PERM, PERM_SEED, DistributionalError
from analysis.stats.partial import partial_rows
from analysis.stats.resampling import permutation_p

#: the label of the answers-swapped arm
SWAPPED = "answers swapped"
#: the label of the task's own arm
OWN = "task"
#: decimals at which two model log-probabilities count as the same value
DISTINCT_DECIMALS = 6


def swapped_task(know: pd.DataFrame) -> dict[str, list]:
    """The knowledge task with every question asked for another fact's answer (the
    ``swapped_answer`` column of :func:`~analysis.distributional.run.knowledge_task`, a
    seeded derangement): ``inputs`` and ``prompts`` as the task's, ``outputs`` the
    swapped answers. Its pairs are the negative control of :func:`partial_mem_table`."""
    missing = [c for c in ("question", "prompt", "swapped_answer") if c not in know]
    if missing:
        raise DistributionalError(f"the knowledge table lacks {missing}; build it with knowledge_task")
    return {"inputs": list(know["question"]), "outputs": list(know["swapped_answer"]),
            "prompts": list(know["prompt"])}


def distinct_values(values, decimals: int = DISTINCT_DECIMALS) -> int:
    """How many distinct finite values ``values`` holds, rounded to ``decimals``."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return int(len(np.unique(np.round(v, decimals))))


def _check_boot(n_boot: int) -> int:
    if isinstance(n_boot, bool) or not isinstance(n_boot, int | np.integer) or n_boot < 100:
        raise DistributionalError(f"n_boot must be an integer of at least 100, got {n_boot!r}")
    return int(n_boot)


def _codes(units) -> tuple[np.ndarray, int]:
    _, codes = np.unique(np.asarray(units).astype(str), return_inverse=True)
    return codes, (int(codes.max()) + 1 if len(codes) else 0)


def unit_resamples(units, n_boot: int = N_BOOT, seed: int = PERM_SEED) -> list[np.ndarray]:
    """``n_boot`` bootstrap resamples of whole units: each a row index array holding
    every row of each drawn unit (a unit drawn twice, twice), units drawn with
    replacement, seeded. A unit's rows always travel together."""
    n_boot = _check_boot(n_boot)
    codes, k = _codes(units)
    if k < 2:
        raise DistributionalError(f"a bootstrap over units needs at least two units, got {k}")
    rows_of = [np.flatnonzero(codes == u) for u in range(k)]
    rng = np.random.default_rng(seed)
    return [np.concatenate([rows_of[u] for u in rng.integers(0, k, size=k)]) for _ in range(n_boot)]


def _trend_rho(params: np.ndarray, rhos: np.ndarray) -> np.ndarray:
    """Spearman ρ of ``params`` with each row of ``rhos`` (models along the last axis),
    over the finite models of each row; NaN with fewer than three."""
    out = np.full(rhos.shape[0], np.nan)
    for b, row in enumerate(rhos):
        ok = np.isfinite(row)
        if ok.sum() >= 3 and np.ptp(row[ok]) > 0:
            out[b] = float(_row_corr(rankdata(params[ok]), rankdata(row[ok])[None])[0])
    return out


def _ci(draws: np.ndarray) -> tuple[float, float]:
    d = draws[np.isfinite(draws)]
    if len(d) < 10:
        return np.nan, np.nan
    lo, hi = np.quantile(d, [0.025, 0.975])
    return float(lo), float(hi)


def _partial_group(x, z, Y, units, params, n_perm, n_boot, seed) -> dict:
    """Plain and partial ρ of every model (rows of ``Y``) on one table, with the
    cluster permutation null (whole units' model values move), bootstrap intervals
    over units, and the same for the median over models and the trend with size."""
    rx, rz = rankdata(x), rankdata(z)
    RY = rankdata(Y, axis=1)
    plain = _row_corr(rx, RY)
    part = partial_rows(rx, RY, rz)
    maps = unit_maps(units, n_perm, seed)
    null_plain = np.empty((len(Y), n_perm))
    null_part = np.empty((len(Y), n_perm))
    for m in range(len(Y)):
        R = rankdata(Y[m][maps[1:]], axis=1)
        null_plain[m], null_part[m] = _row_corr(rx, R), partial_rows(rx, R, rz)
    boots = unit_resamples(units, n_boot, seed)
    b_plain = np.empty((n_boot, len(Y)))
    b_part = np.empty((n_boot, len(Y)))
    for b, idx in enumerate(boots):
        bx, bz, bY = rankdata(x[idx]), rankdata(z[idx]), rankdata(Y[:, idx], axis=1)
        b_plain[b], b_part[b] = _row_corr(bx, bY), partial_rows(bx, bY, bz)
    out = {"plain": plain, "partial": part, "null_plain": null_plain, "null_partial": null_part,
           "boot_plain": b_plain, "boot_partial": b_part}
    arms = (("plain", plain, null_plain, b_plain), ("partial", part, null_part, b_part))
    for name, value, null, boot in arms:
        med = float(np.nanmedian(value)) if np.isfinite(value).any() else np.nan
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a draw with no finite model value is NaN
            med_null = np.nanmedian(null, axis=0)
            med_boot = np.nanmedian(boot, axis=1)
        fin = med_null[np.isfinite(med_null)]
        out[f"median_{name}"] = med
        out[f"median_{name}_p"] = (permutation_p(med, fin, "two-sided") if np.isfinite(med) and len(fin)
                                   else np.nan)
        out[f"median_{name}_null"] = float(np.median(fin)) if len(fin) else np.nan
        out[f"median_{name}_ci"] = _ci(med_boot)
        trend = _trend_rho(params, value[None])[0]
        out[f"{name}_trend"] = trend
        out[f"{name}_trend_ci"] = _ci(_trend_rho(params, boot))
    return out


def _partial_mem_table(tables: Mapping[tuple, pd.DataFrame], log_llm: Mapping[tuple, np.ndarray],
                       ladder: pd.DataFrame, arm: str = OWN, n_perm: int = N_PERM, n_boot: int = N_BOOT,
                       seed: int = PERM_SEED) -> pd.DataFrame:
    """``Mem_n`` plain and with ``log C(s^y)`` held fixed (partial Spearman, the
    definition of :mod:`analysis.stats.partial`), per (task, n) table and model.

    ``tables`` are task-gram tables (``p_taskgram``, ``c_y``, ``instance``), ``log_llm``
    the models' log-probabilities of each pair (:func:`~analysis.distributional.run.llm_table`)
    and ``arm`` labels the rows (:data:`OWN`, or :data:`SWAPPED` for the answers-swapped
    set). The rows used are those finite for the task-gram LM, ``C(s^y)`` and every
    model. Per row: ``task, n, arm, model, params, pairs, units, distinct`` (distinct model
    values among the pairs), ``rho`` and ``rho_lo``/``rho_hi`` (bootstrap over units),
    ``pvalue`` (cluster permutation, two-sided), ``partial``, ``partial_lo``/``partial_hi``,
    ``partial_pvalue``; and per table (repeated on its rows) the median over the models of
    each (``median_plain``, ``median_partial`` with ``_p``, ``_null``, ``_lo``, ``_hi``)
    and the trend with size (``plain_trend``, ``partial_trend`` with ``_lo``, ``_hi``)."""
    rows = []
    models, params = list(ladder["model"]), ladder["params"].to_numpy(float)
    for (task, n), table in tables.items():
        with np.errstate(divide="ignore"):
            x = -np.log(table["p_taskgram"].to_numpy(float))
            z = np.log(table["c_y"].to_numpy(float))
        Y = np.vstack([-np.asarray(log_llm[(m, task, n)], float) for m in models])
        ok = np.isfinite(x) & np.isfinite(z) & np.isfinite(Y).all(axis=0)
        units = table["instance"].to_numpy()[ok]
        k = len(np.unique(units.astype(str)))
        base = {"task": task, "n": n, "arm": arm, "pairs": int(ok.sum()), "units": k}
        if ok.sum() < 4 or k < 2 or np.ptp(x[ok]) == 0 or np.ptp(z[ok]) == 0:
            rows += [base | {"model": m, "params": p, "distinct": distinct_values(Y[i][ok]), "rho": np.nan,
                             "pvalue": np.nan, "partial": np.nan, "partial_pvalue": np.nan}
                     for i, (m, p) in enumerate(zip(models, params))]
            continue
        g = _partial_group(x[ok], z[ok], Y[:, ok], units, params, n_perm, n_boot, seed)
        summary = {}
        for name in ("plain", "partial"):
            lo, hi = g[f"median_{name}_ci"]
            tlo, thi = g[f"{name}_trend_ci"]
            summary |= {f"median_{name}": g[f"median_{name}"], f"median_{name}_p": g[f"median_{name}_p"],
                        f"median_{name}_null": g[f"median_{name}_null"], f"median_{name}_lo": lo,
                        f"median_{name}_hi": hi, f"{name}_trend": g[f"{name}_trend"],
                        f"{name}_trend_lo": tlo, f"{name}_trend_hi": thi}
        for i, (m, p) in enumerate(zip(models, params)):
            r = {}
            for name, col in (("plain", "rho"), ("partial", "partial")):
                value = float(g[name][i])
                null = g[f"null_{name}"][i]
                null = null[np.isfinite(null)]
                lo, hi = _ci(g[f"boot_{name}"][:, i])
                pv = permutation_p(value, null, "two-sided") if np.isfinite(value) and len(null) else np.nan
                r |= {col: value, f"{col}_lo": lo, f"{col}_hi": hi,
                      ("pvalue" if col == "rho" else "partial_pvalue"): pv}
            rows.append(base | {"model": m, "params": p, "distinct": distinct_values(Y[i][ok])} | r | summary)
    return pd.DataFrame(rows)


#: :func:`_partial_mem_table`, computed once per inputs, then read from the artifact cache
partial_mem_table = memoized("distributional-partial-mem",
                             code=("analysis.stats.partial", "analysis.distributional.inference",
                                   "analysis.stats.resampling"))(_partial_mem_table)


def _mem_intervals(mem: pd.DataFrame, tables: Mapping[tuple, pd.DataFrame],
                   log_llm: Mapping[tuple, np.ndarray], log_inf: Mapping[tuple, np.ndarray] | None,
                   n_boot: int = N_BOOT, seed: int = PERM_SEED) -> pd.DataFrame:
    """``mem`` (:func:`~analysis.distributional.inference.cluster_mem_table`) with a 95%
    bootstrap interval over whole units (facts, problems) for every unfiltered row's ρ
    (``rho_lo``, ``rho_hi``) and for the trend of each (task, n, corpus LM) with model
    size (``trend_lo``, ``trend_hi``, on every row of the group): each resample of units
    recomputes every model's ρ on the same rows, then the trend. Filtered rows keep NaN."""
    out = mem.copy()
    for c in ("rho_lo", "rho_hi", "trend_lo", "trend_hi"):
        out[c] = np.nan
    for (task, n, lm), g in out[out["filter"] == "no filter"].groupby(["task", "n", "lm"], sort=False):
        table = tables[(task, n)]
        p = (table["p_taskgram"].to_numpy(float) if lm == "task-gram" or log_inf is None
             else corpus_lms(table, log_inf[(task, n)])[lm])
        with np.errstate(divide="ignore"):
            x = -np.log(p)
        g = g.sort_values("params", kind="stable")
        Y = np.vstack([-np.asarray(log_llm[(m, task, n)], float) for m in g["model"]])
        ok = np.isfinite(x) & np.isfinite(Y).all(axis=0)
        units = table["instance"].to_numpy()[ok]
        if ok.sum() < 3 or len(np.unique(units.astype(str))) < 2:
            continue
        draws = np.empty((n_boot, len(Y)))
        for b, idx in enumerate(unit_resamples(units, n_boot, seed)):
            draws[b] = _row_corr(rankdata(x[ok][idx]), rankdata(Y[:, ok][:, idx], axis=1))
        ci = np.array([_ci(draws[:, i]) for i in range(len(Y))])
        out.loc[g.index, "rho_lo"], out.loc[g.index, "rho_hi"] = ci[:, 0], ci[:, 1]
        tlo, thi = _ci(_trend_rho(g["params"].to_numpy(float), draws))
        out.loc[g.index, "trend_lo"], out.loc[g.index, "trend_hi"] = tlo, thi
    return out


#: :func:`_mem_intervals`, computed once per inputs, then read from the artifact cache
mem_intervals = memoized("distributional-mem-intervals",
                         code=("analysis.distributional.inference", "analysis.distributional.method"))(
    _mem_intervals)


def distinct_table(tables: Mapping[tuple, pd.DataFrame], log_llm: Mapping[tuple, np.ndarray],
                   models) -> pd.DataFrame:
    """Per (task, n): ``pairs``, ``units`` and the fewest and most distinct model values
    the pairs carry over the models (``distinct_min``, ``distinct_max``)."""
    rows = []
    for (task, n), table in tables.items():
        d = [distinct_values(log_llm[(m, task, n)]) for m in models]
        rows.append({"task": task, "n": n, "pairs": len(table), "units": int(table["instance"].nunique()),
                     "distinct_min": min(d), "distinct_max": max(d)})
    return pd.DataFrame(rows)


def partial_mem_tables(tables: Mapping[tuple, pd.DataFrame], log_llm: Mapping[tuple, np.ndarray],
                       swapped_tables: Mapping[tuple, pd.DataFrame], swapped_llm: Mapping[tuple, np.ndarray],
                       ladder: pd.DataFrame, n: int = 3) -> pd.DataFrame:
    """:func:`partial_mem_table` of the ``n``-gram tables of ``tables`` (arm :data:`OWN`)
    and of ``swapped_tables`` (the answers-swapped set, arm :data:`SWAPPED`), one table."""
    own = {k: t for k, t in tables.items() if k[1] == n}
    swap = {k: t for k, t in swapped_tables.items() if k[1] == n}
    parts = [partial_mem_table(own, log_llm, ladder)]
    if swap:
        parts.append(partial_mem_table(swap, swapped_llm, ladder, arm=SWAPPED))
    return pd.concat(parts, ignore_index=True)


def unit_trend_interval(params, numer: np.ndarray, denom: np.ndarray | None = None, n_boot: int = N_BOOT,
                        seed: int = PERM_SEED) -> tuple[float, float]:
    """95% bootstrap interval, over whole units, of a trend with model size of a per-model
    share: ``numer`` is models × units (NaN: not measured), each model's value in a
    resample the sum of its drawn units' ``numer`` over the sum of their ``denom`` (a
    mean over units when ``denom`` is None: the accuracy over facts or problems; the
    share of novel pairs over each instance's pairs when it counts them), then Spearman
    ρ with ``params`` (:func:`_trend_rho`). The same units are drawn for every model."""
    numer = np.asarray(numer, float)
    denom = np.isfinite(numer).astype(float) if denom is None else np.asarray(denom, float)
    if numer.shape != denom.shape or numer.ndim != 2 or numer.shape[0] != len(params):
        raise DistributionalError(f"numer and denom must be models x units ({len(params)} models), got "
                                  f"{numer.shape} and {denom.shape}")
    num, den = np.nan_to_num(numer), np.nan_to_num(denom)
    draws = np.empty((_check_boot(n_boot), numer.shape[0]))
    for b, idx in enumerate(unit_resamples(np.arange(numer.shape[1]), n_boot, seed)):
        d = den[:, idx].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            draws[b] = np.where(d > 0, num[:, idx].sum(axis=1) / d, np.nan)
    return _ci(_trend_rho(np.asarray(params, float), draws))


def accuracy_matrix(scored: pd.DataFrame, models, task: str, column: str = "correct") -> np.ndarray:
    """``column`` of the scored answers of ``task`` as models (in ``models``' order) × instances."""
    piv = scored[scored["task"] == task].pivot_table(index="model", columns="instance", values=column,
                                                     aggfunc="first", dropna=False)
    return piv.reindex(list(models)).to_numpy(float)


def kendall_trend_interval(table: pd.DataFrame, log_llm: Mapping[tuple, np.ndarray], ladder: pd.DataFrame,
                           task: str, n: int, log_inf: np.ndarray | None = None, n_boot: int = N_BOOT,
                           seed: int = PERM_SEED) -> tuple[float, float]:
    """95% bootstrap interval, over whole units (the table's ``instance``: facts or
    problems), of the trend with model size of the Kendall tau distance between each
    model's ranking of the (``task``, ``n``) test pairs and the corpus LM's (the task-gram
    LM, or the ∞-gram LM given its ``log_inf``): every model's distance recomputed on the
    same resampled rows, then Spearman ρ with size."""
    with np.errstate(divide="ignore"):
        x = (-np.log(table["p_taskgram"].to_numpy(float)) if log_inf is None
             else -np.asarray(log_inf, float))
    Y = np.vstack([-np.asarray(log_llm[(m, task, n)], float) for m in ladder["model"]])
    ok = np.isfinite(x) & np.isfinite(Y).all(axis=0)
    units = table["instance"].to_numpy()[ok]
    if ok.sum() < 3 or len(np.unique(units.astype(str))) < 2:
        return np.nan, np.nan
    x, Y = x[ok], Y[:, ok]
    draws = np.full((_check_boot(n_boot), len(Y)), np.nan)
    for b, idx in enumerate(unit_resamples(units, n_boot, seed)):
        for i in range(len(Y)):
            tau = kendalltau(x[idx], Y[i, idx]).statistic
            draws[b, i] = (1 - tau) / 2 if np.isfinite(tau) else np.nan
    return _ci(_trend_rho(ladder["params"].to_numpy(float), draws))


def novelty_intervals(counts: pd.DataFrame, ladder: pd.DataFrame, n_boot: int = N_BOOT,
                      seed: int = PERM_SEED) -> dict[str, tuple[float, float]]:
    """Per task, :func:`unit_trend_interval` of the novelty share over instances, from
    :func:`~analysis.distributional.method_tables.novelty_counts` (an instance a model gave
    no pair for counts zero pairs)."""
    out = {}
    for task, g in counts.groupby("task", sort=False):
        piv = g.pivot_table(index="model", columns="instance", values=["novel", "pairs"], aggfunc="sum",
                            fill_value=0).reindex(list(ladder["model"])).fillna(0)
        out[task] = unit_trend_interval(ladder["params"].to_numpy(float), piv["novel"].to_numpy(float),
                                        piv["pairs"].to_numpy(float), n_boot, seed)
    return out

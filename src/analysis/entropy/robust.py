"""Is the level-set line a sample-size artefact? Rarefied and bias-corrected lines,
the source's coarse binning (Appendix C.4), and what a smaller sample costs.

A level set's plug-in entropy grows with the tokens it pools, and the level sets
of one sample hold very different numbers of pairs, so a line of plug-in entropy
against the score can owe its slope to the sizes of its sets. Two checks:

* :func:`rarefied_lines`: every level set cut down to the same number of pairs
  (the smallest set holding at least ``RAREFY_MIN_PAIRS``), drawn without
  replacement many times; the line refitted on each draw;
* :func:`miller_madow_levels`: each level set's entropy with the Miller–Madow
  correction ``(K − 1) / (2N)`` nats (:mod:`analysis.stats.entropy_estimators`).

:func:`estimator_null` recomputes both (and the plug-in r) with the scores
shuffled among the pairs, the null of the chapter's claims. :func:`binning_table`
re-bins the scores into equal-width bins (the source's Appendix C.4), and
:func:`interval_cost` measures how wide the intercept's bootstrap interval is at
two sample sizes. Pure functions over scores and answers: no model, no English.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.sparse import csr_matrix

from analysis.core.cache import memoized
from analysis.entropy.method import _count_matrix, _entropies_from_matrix, level_set_table
from analysis.entropy.method_sets import Inference, SetResult, kept, set_bootstrap
from analysis.entropy.params import (
    PAPER_BINNINGS,
    RAREFY_DRAWS,
    RAREFY_MIN_PAIRS,
    RAREFY_TEST_DRAWS,
    EntropyError,
)
from analysis.stats.entropy_estimators import miller_madow_correction
from analysis.stats.lines import percentile_interval
from analysis.stats.resampling import MIN_PERMUTATIONS

#: the columns of one line (:func:`line`)
LINE = ("slope", "intercept", "r")


def _positive(name: str, value, allow_none: bool = False) -> None:
    if allow_none and value is None:
        return
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
        raise EntropyError(f"{name} must be a positive integer, got {value!r}")


def line(x, y) -> dict[str, float]:
    """Slope, intercept and Pearson r of the least-squares line of ``y`` on ``x``;
    all NaN with fewer than 3 points or a constant ``x``; r NaN (the slope 0) when
    ``y`` is constant, since a flat line has no correlation."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if len(x) < 3 or np.ptp(x) == 0:
        return dict.fromkeys(LINE, float("nan"))
    slope, intercept = np.polyfit(x, y, 1)
    r = float(np.corrcoef(x, y)[0, 1]) if np.ptp(y) > 0 else float("nan")
    return {"slope": float(slope), "intercept": float(intercept), "r": r}


# -- Miller–Madow --------------------------------------------------------------------------------


def miller_madow_levels(levels: pd.DataFrame, base: float = 2.0) -> pd.DataFrame:
    """A level-set table (:func:`~analysis.entropy.method.level_set_table`) with
    ``entropy_mm``: each set's plug-in entropy plus ``(K − 1) / (2N)`` nats in units
    of ``base``, ``K`` its distinct tokens (``token_space``) and ``N`` its tokens."""
    for column in ("entropy", "token_space", "tokens"):
        if column not in levels:
            raise EntropyError(f"the level-set table needs a {column!r} column")
    correction = [miller_madow_correction(int(k), int(n), base)
                  for k, n in zip(levels["token_space"], levels["tokens"])]
    return levels.assign(entropy_mm=levels["entropy"].to_numpy(float) + np.asarray(correction, dtype=float))


def miller_madow_line(levels: pd.DataFrame, base: float = 2.0) -> dict[str, float]:
    """:func:`line` of the Miller–Madow entropy against the score over the level sets."""
    if levels.empty:
        return dict.fromkeys(LINE, float("nan"))
    t = miller_madow_levels(levels, base)
    return line(t["e"], t["entropy_mm"])


# -- rarefaction ---------------------------------------------------------------------------------


def rarefaction_size(pairs_per_level: Mapping[int, int], min_pairs: int = RAREFY_MIN_PAIRS) -> int | None:
    """The pairs every level set is cut down to: the size of the smallest level set
    holding at least ``min_pairs`` (None when none does)."""
    _positive("min_pairs", min_pairs)
    sizes = [int(n) for n in pairs_per_level.values() if int(n) >= min_pairs]
    return min(sizes) if sizes else None


@dataclass
class Rarefied:
    """The entropy line with every level set cut to ``size`` pairs: the level sets
    kept (their scores ``e``), those left out (fewer pairs than ``size``), and one
    row of :data:`LINE` per draw."""

    size: int | None
    levels: list[int]
    dropped: list[int]
    draws: pd.DataFrame

    def summary(self, column: str = "r") -> tuple[float, float, float]:
        """Mean of ``column`` over the draws and its 2.5–97.5 percentile interval
        (NaN without a finite draw)."""
        values = self.draws[column].to_numpy(float) if len(self.draws) else np.zeros(0)
        finite = values[np.isfinite(values)]
        if finite.size == 0:
            return float("nan"), float("nan"), float("nan")
        lo, hi = percentile_interval(finite)
        return float(finite.mean()), lo, hi


def _draw_lines(counts, members: Sequence[np.ndarray], es: np.ndarray, size: int,
                draws: int, rng, base: float) -> list[dict]:
    """``draws`` lines, each over the kept level sets cut to ``size`` pairs."""
    n = counts.shape[0]
    rows = []
    group_rows = np.repeat(np.arange(len(members)), size)
    for _ in range(draws):
        cols = np.concatenate([rng.choice(m, size=size, replace=False) for m in members])
        group = csr_matrix((np.ones(len(cols)), (group_rows, cols)), shape=(len(members), n))
        h, _space = _entropies_from_matrix(group @ counts, base)
        rows.append(line(es, h))
    return rows


def _members(scores: np.ndarray, size: int | None) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    es, pairs = np.unique(scores, return_counts=True)
    keep = pairs >= size if size is not None else np.zeros(len(es), dtype=bool)
    return es[keep], [np.flatnonzero(scores == e) for e in es[keep]], es[~keep]


def rarefied_lines(scores: Sequence[int], suffixes: Sequence[Sequence[int]], size: int | None = None,
                   draws: int = RAREFY_DRAWS, seed: int = 0, base: float = 2.0,
                   min_pairs: int = RAREFY_MIN_PAIRS) -> Rarefied:
    """The level-set entropy line with every level set rarefied to ``size`` pairs
    (default :func:`rarefaction_size`): ``draws`` seeded draws, each taking ``size``
    pairs without replacement from every level set that holds at least that many
    (smaller ones are left out) and refitting the line. A draw over fewer than 3
    level sets has NaN; so does the r of a draw whose entropies are all equal."""
    _positive("draws", draws)
    _positive("size", size, allow_none=True)
    scores = np.asarray(scores, dtype=np.int64)
    if len(scores) != len(suffixes):
        raise EntropyError(f"scores and suffixes must have the same length, got {len(scores)} and "
                           f"{len(suffixes)}")
    if len(scores) == 0:
        raise EntropyError("no pairs to rarefy")
    if size is None:
        es, pairs = np.unique(scores, return_counts=True)
        size = rarefaction_size(dict(zip(es.tolist(), pairs.tolist())), min_pairs)
    es, members, dropped = _members(scores, size)
    if size is None or len(es) < 3:
        return Rarefied(size, es.tolist(), dropped.tolist(), pd.DataFrame(columns=list(LINE)))
    rows = _draw_lines(_count_matrix(suffixes), members, es.astype(float), size, draws,
                       np.random.default_rng(seed), base)
    return Rarefied(size, es.astype(int).tolist(), dropped.astype(int).tolist(),
                    pd.DataFrame(rows, columns=list(LINE)))


def _plugin_and_mm(scores: np.ndarray, counts, base: float) -> tuple[float, float]:
    """The plug-in and the Miller–Madow r over every level set of ``scores``."""
    es, level_of = np.unique(scores, return_inverse=True)
    n = len(scores)
    group = csr_matrix((np.ones(n), (level_of, np.arange(n))), shape=(len(es), n)) @ counts
    h, space = _entropies_from_matrix(group, base)
    tokens = np.asarray(group.sum(axis=1)).ravel()
    mm = h + (space - 1) / (2 * tokens) / math.log(base)
    return line(es, h)["r"], line(es, mm)["r"]


def _compute_estimator_null(scores: Sequence[int], suffixes: Sequence[Sequence[int]], size: int | None,
                            n_perm: int = MIN_PERMUTATIONS, test_draws: int = RAREFY_TEST_DRAWS,
                            seed: int = 0, base: float = 2.0) -> pd.DataFrame:
    """The three r of :func:`estimator_test` with the scores permuted among the pairs,
    ``n_perm`` seeded times (the rarefaction size held at the sample's own; the
    rarefied r the mean over ``test_draws`` draws per permutation, fewer than the
    sample's own, which makes the null wider and the test conservative). One row
    per permutation: ``r_plugin``, ``r_mm``, ``r_rarefied``."""
    if n_perm < MIN_PERMUTATIONS:
        raise EntropyError(f"n_perm must be at least {MIN_PERMUTATIONS}, got {n_perm!r}")
    scores = np.asarray(scores, dtype=np.int64)
    counts = _count_matrix(suffixes)
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n_perm):
        perm = rng.permutation(scores)
        plug, mm = _plugin_and_mm(perm, counts, base)
        es, members, _ = _members(perm, size)
        r = np.array([d["r"] for d in _draw_lines(counts, members, es.astype(float), size, test_draws,
                                                   rng, base)]) if size is not None and len(es) >= 3 else []
        r = np.asarray(r, dtype=float)
        r = r[np.isfinite(r)]
        rows.append({"r_plugin": plug, "r_mm": mm, "r_rarefied": float(r.mean()) if r.size else np.nan})
    return pd.DataFrame(rows, columns=["r_plugin", "r_mm", "r_rarefied"])


_memo_estimator_null = memoized("entropy-estimator-null", code=("analysis.entropy.method",),
                                packages=("scipy",))(_compute_estimator_null)


@dataclass
class EstimatorTest:
    """One sample's three lines and their shuffled-score null (:func:`estimator_test`)."""

    observed: dict
    null: pd.DataFrame
    rarefied: Rarefied
    level_sets: int


def estimator_test(scored: pd.DataFrame, n_perm: int = MIN_PERMUTATIONS, draws: int = RAREFY_DRAWS,
                   test_draws: int = RAREFY_TEST_DRAWS, seed: int = 0) -> EstimatorTest:
    """The kept pairs of ``scored``: three r of the level-set line, ``r_plugin`` and
    ``r_mm`` (plug-in and Miller–Madow, over every level set) and ``r_rarefied``
    (the mean over ``draws`` rarefied draws, :func:`rarefied_lines`, whose spread is
    the interval), and their null under shuffled scores
    (:func:`_compute_estimator_null`, computed once per pairs and settings, then
    read from the artifact cache)."""
    k = kept(scored)
    scores = [int(s) for s in k["score"]]
    suffixes = [list(map(int, s)) for s in k["suffix"]]
    rare = rarefied_lines(scores, suffixes, draws=draws, seed=seed)
    plug, mm = _plugin_and_mm(np.asarray(scores, dtype=np.int64), _count_matrix(suffixes), 2.0)
    observed = {"r_plugin": plug, "r_mm": mm, "r_rarefied": rare.summary("r")[0]}
    null = _memo_estimator_null(scores, suffixes, rare.size, n_perm=n_perm, test_draws=test_draws,
                                seed=seed)
    return EstimatorTest(observed, null, rare, len(set(scores)))


# -- members, non-members and the real models ----------------------------------------------------


def _set_row(sample: str, group: str, res: SetResult, draws: int, seed: int) -> dict:
    mm = miller_madow_line(res.levels)
    row = {"sample": sample, "group": group, "pairs": res.pairs, "level sets": len(res.levels),
           "r plug-in": res.fit.r if res.fit is not None else np.nan, "r Miller–Madow": mm["r"]}
    if res.sample is None or res.sample.empty:
        return {**row, "pairs per set": np.nan, "sets kept": 0, "r rarefied": np.nan, "r rarefied lo": np.nan,
                "r rarefied hi": np.nan}
    rare = rarefied_lines(res.sample["score"].astype(int).tolist(), list(res.sample["suffix"]), draws=draws,
                          seed=seed)
    med, lo, hi = rare.summary("r")
    return {**row, "pairs per set": rare.size if rare.size is not None else np.nan,
            "sets kept": len(rare.levels),
            "r rarefied": med, "r rarefied lo": lo, "r rarefied hi": hi}


def estimator_table(main: SetResult, inferences: Sequence[Inference], draws: int = RAREFY_DRAWS,
                    seed: int = 0) -> pd.DataFrame:
    """r of the entropy line under each estimator (plug-in, rarefied with its
    2.5–97.5 percentile interval over draws, Miller–Madow) for the lab's main sample
    and every dataset-inference set, grouped: the lab's main sample, lab member
    sets, lab non-member sets, the real models' likely members and likely
    non-members."""
    rows = [_set_row("lab: main sample", "lab: main sample (members)", main, draws, seed)]
    for inf in inferences:
        table = inf.table.set_index("set")
        for label, res in inf.results.items():
            kind, truth = table.loc[label, "kind"], int(table.loc[label, "truth"])
            group = (f"lab: {'member' if truth else 'non-member'} sets" if kind == "lab" else
                     f"real: likely {'member' if truth else 'non-member'} sets")
            rows.append(_set_row(f"{inf.model}: {label}", group, res, draws, seed))
    return pd.DataFrame(rows)


def estimator_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per group of :func:`estimator_table`: samples, and the median r of each
    estimator over them (NaN where none has a line)."""
    cols = ["r plug-in", "r rarefied", "r Miller–Madow"]
    g = table.groupby("group", sort=False)
    out = g[cols].median()
    out.insert(0, "samples", g.size())
    return out.reset_index()


# -- coarse binning (Appendix C.4) ---------------------------------------------------------------


def score_bins(scores, n_bins: int, max_score: int) -> tuple[np.ndarray, np.ndarray]:
    """Each score's bin among ``n_bins`` equal-width bins of ``[0, max_score]`` (the
    top edge falls in the last bin) and the bins' edges."""
    _positive("n_bins", n_bins)
    _positive("max_score", max_score)
    if n_bins < 2:
        raise EntropyError(f"n_bins must be at least 2 (one bin has no line), got {n_bins!r}")
    scores = np.asarray(scores, dtype=float)
    if scores.size and (scores.min() < 0 or scores.max() > max_score):
        raise EntropyError(f"scores must lie in [0, {max_score}], got {scores.min():g} to {scores.max():g}")
    edges = np.linspace(0.0, float(max_score), n_bins + 1)
    width = max_score / n_bins
    return np.minimum((scores // width).astype(int), n_bins - 1), edges


def binned_levels(scores, suffixes: Sequence[Sequence[int]], n_bins: int, max_score: int,
                  base: float = 2.0) -> pd.DataFrame:
    """The level-set table with the scores re-binned into ``n_bins`` equal-width bins
    (:func:`score_bins`): one row per populated bin with ``bin``, its edges ``lo`` and
    ``hi``, its ``centre`` and the columns of
    :func:`~analysis.entropy.method.level_set_table` (``e`` is the bin index)."""
    bins, edges = score_bins(scores, n_bins, max_score)
    table = level_set_table(bins, suffixes, base=base)
    return table.assign(bin=table["e"], lo=edges[table["e"]], hi=edges[table["e"] + 1],
                        centre=(edges[table["e"]] + edges[table["e"] + 1]) / 2)


def binning_table(scored: pd.DataFrame, suffix_tokens: int, bins: Sequence[int] = PAPER_BINNINGS,
                  base: float = 2.0) -> pd.DataFrame:
    """Appendix C.4 on the kept pairs of ``scored``: per number of bins ``n_d``, the
    bins populated, the fewest pairs in one, and the line of entropy (and of
    normalized entropy) against the bins' centres in score units (so the intercept
    is the value at e = 0)."""
    k = kept(scored)
    rows = []
    for n in bins:
        t = binned_levels(k["score"].astype(int).to_numpy(), list(k["suffix"]), n, suffix_tokens, base)
        fit = line(t["centre"], t["entropy"])
        rows.append({"bins": n, "populated": len(t), "fewest pairs": int(t["pairs"].min()) if len(t) else 0,
                     "r": fit["r"], "intercept": fit["intercept"], "slope": fit["slope"],
                     "normalized r": line(t["centre"], t["norm_entropy"])["r"]})
    return pd.DataFrame(rows)


# -- what a smaller sample costs -----------------------------------------------------------------


def interval_cost(scored: pd.DataFrame, sizes: Sequence[int], n_boot: int = 1000, subsamples: int = 3,
                  seed: int = 0) -> pd.DataFrame:
    """The width of the intercept's re-centred bootstrap 95% interval at each sample
    size: ``subsamples`` seeded subsamples (without replacement) of the kept pairs
    at each size no larger than the pool, each bootstrapped ``n_boot`` times as a
    dataset-inference set is; the median width over them. One row per size:
    ``size``, ``subsamples``, ``width`` (NaN where no subsample has a line)."""
    _positive("subsamples", subsamples)
    k = kept(scored)
    scores = k["score"].astype(int).to_numpy()
    suffixes = [list(map(int, s)) for s in k["suffix"]]
    rng = np.random.default_rng(seed)
    rows = []
    for size in sizes:
        _positive("size", size)
        if size > len(k):
            rows.append({"size": int(size), "subsamples": 0, "width": np.nan})
            continue
        widths = []
        for _ in range(subsamples):
            idx = np.sort(rng.choice(len(k), size=size, replace=False))
            sub_scores = scores[idx]
            boot = set_bootstrap(sub_scores, [suffixes[i] for i in idx], n_boot=n_boot, seed=seed)
            fit = line(*_level_points(sub_scores, [suffixes[i] for i in idx]))
            if len(boot) and np.isfinite(fit["intercept"]):
                values = boot["intercept"].to_numpy(float)
                lo, hi = percentile_interval(values - np.median(values) + fit["intercept"])
                widths.append(hi - lo)
        rows.append({"size": int(size), "subsamples": len(widths),
                     "width": float(np.median(widths)) if widths else np.nan})
    return pd.DataFrame(rows, columns=["size", "subsamples", "width"])


def _level_points(scores, suffixes) -> tuple[np.ndarray, np.ndarray]:
    t = level_set_table(scores, suffixes)
    return t["e"].to_numpy(float), t["entropy"].to_numpy(float)

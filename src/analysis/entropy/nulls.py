"""The entropy chapter's computed nulls and unit-level intervals (issue 42's protocol).

Rows of this chapter share units: the pairs of one text (a window is drawn from a
document, and a document supplies many windows), the level sets built from one
sample, the candidate sets of one model (they share its τ). So:

* :func:`text_interval`: a cluster bootstrap over texts of any statistic of the
  kept pairs (the share of low scores, the instance-level r);
* :func:`level_set_null`: the level-set statistics under shuffled scores. Scores
  are permuted among the kept pairs and the level sets rebuilt and refitted, so
  every level set keeps its number of pairs: whatever a line owes to the sizes of
  its sets (a plug-in entropy grows with the tokens it is computed on) is in the
  null. 200 seeded permutations, computed once per sample (artifact cache);
* :func:`di_null`: the dataset-inference rule's share right under membership
  labels permuted among each model's candidate sets (an undecided set is a miss);
* :func:`set_auc_null`: the intercept's AUC over a model's sets under labels
  permuted among its sets (the intercepts are fitted once; the labels move);
* :func:`text_auc_null`: an AUC over pairs with the labels permuted among texts
  (a text's pairs keep one label).

Pure functions: no model, no English.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from analysis.core.cache import memoized
from analysis.entropy.method import level_set_table, token_entropy
from analysis.entropy.method_sets import kept, size_tracking_r
from analysis.stats.auc import auc
from analysis.stats.lines import fit_line
from analysis.stats.mia import grouped_auc
from analysis.stats.resampling import MIN_PERMUTATIONS, cluster_bootstrap, permutation_null, permutation_p
from analysis.stats.result import Estimate, StatsError

#: the level-set statistics :func:`level_set_null` recomputes under shuffled scores
LEVEL_STATS = ("r_entropy", "r_zlib", "r_norm", "r_space", "r_size", "r_instance")


def text_interval(statistic: Callable[[pd.DataFrame], float], frame: pd.DataFrame, n_boot: int = 2000,
                  seed: int = 0) -> Estimate:
    """``statistic(rows)`` with a cluster-bootstrap 95% interval over the texts
    (``doc_id``) of ``frame``: a text drawn brings all its pairs."""
    return cluster_bootstrap(lambda idx: statistic(frame.iloc[idx]), frame["doc_id"].to_numpy(),
                             n_boot=n_boot, seed=seed)


def _r(x, y) -> float:
    try:
        return float(fit_line(x, y).r)
    except StatsError:
        return float("nan")


def level_stats(table: pd.DataFrame, r_instance: float = float("nan")) -> dict[str, float]:
    """The level-set statistics the chapter's claims test, from one level-set table
    (:func:`~analysis.entropy.method.level_set_table`): the r against the score of
    the entropy, the zlib ratio, the normalized entropy and log₂ of the token space,
    the r of the entropy against log₂ of the pairs per set, and ``r_instance`` as given."""
    e = table["e"].to_numpy(float)
    norm = table["norm_entropy"].to_numpy(float)
    ok = np.isfinite(norm)
    return {"r_entropy": _r(e, table["entropy"]),
            "r_zlib": _r(e, table["zlib"]) if "zlib" in table else np.nan,
            "r_norm": _r(e[ok], norm[ok]) if ok.sum() >= 3 else np.nan,
            "r_space": _r(e, np.log2(table["token_space"].to_numpy(float))),
            "r_size": size_tracking_r(table), "r_instance": float(r_instance)}


def _compute_level_set_null(scores: Sequence[int], suffixes: Sequence[Sequence[int]], texts: Sequence[str],
                            n_perm: int = MIN_PERMUTATIONS, seed: int = 0) -> pd.DataFrame:
    """:func:`level_stats` on ``n_perm`` seeded permutations of ``scores`` among the
    pairs (level sets rebuilt from the permuted scores, so each keeps its size),
    with ``r_instance`` the per-answer r of entropy against the permuted score.
    One row per permutation."""
    if n_perm < MIN_PERMUTATIONS:
        raise StatsError(f"n_perm must be at least {MIN_PERMUTATIONS}, got {n_perm!r}")
    scores = np.asarray(scores, dtype=np.int64)
    entropies = np.array([token_entropy(s) for s in suffixes])
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n_perm):
        perm = rng.permutation(scores)
        table = level_set_table(perm, suffixes, texts)
        rows.append(level_stats(table, _r(perm, entropies)))
    return pd.DataFrame(rows, columns=list(LEVEL_STATS))


_memo_level_null = memoized("entropy-level-null", code=("analysis.entropy.method",),
                            packages=("scipy",))(_compute_level_set_null)


def level_set_null(scored: pd.DataFrame, n_perm: int = MIN_PERMUTATIONS, seed: int = 0) -> pd.DataFrame:
    """:func:`_compute_level_set_null` on the kept pairs of ``scored``, computed once
    per pairs and settings, then read from the artifact cache."""
    k = kept(scored)
    return _memo_level_null([int(s) for s in k["score"]], [list(map(int, s)) for s in k["suffix"]],
                            list(k["suffix_text"]), n_perm=n_perm, seed=seed)


def null_test(observed: float, null: Sequence[float]) -> tuple[float | None, float | None, int]:
    """The median of a computed null, the two-sided permutation p of ``observed``
    against it, and how many finite permutations it holds (None, None, 0 without any)."""
    null = np.asarray(null, dtype=float)
    null = null[np.isfinite(null)]
    if not len(null) or not np.isfinite(observed):
        return None, None, int(len(null))
    return float(np.median(null)), permutation_p(observed, null, "two-sided"), int(len(null))


def di_share(prediction: Sequence[float], truth: Sequence[int]) -> float:
    """The share of candidate sets called right; an undecided set (NaN) is a miss."""
    p = np.asarray(prediction, dtype=float)
    t = np.asarray(truth, dtype=float)
    return float(np.mean(np.isfinite(p) & (p == t))) if len(p) else float("nan")


def di_null(candidates: pd.DataFrame, n_perm: int = 1000, seed: int = 0) -> Estimate:
    """:func:`di_share` with its null computed by permuting the membership labels
    among the candidate sets of each model (``model`` the strata): the rule's calls
    stay, the truth moves (two-sided p)."""
    pred = candidates["prediction"].to_numpy(float)
    return permutation_null(lambda y: di_share(pred, y), candidates["truth"].to_numpy(int), n_perm=n_perm,
                            seed=seed, strata=candidates["model"].to_numpy(), alternative="two-sided")


def _compute_set_auc_null(truth: Sequence[int], values: Sequence[float], groups: Sequence[str],
                          n_perm: int = 1000, seed: int = 0) -> Estimate:
    def pipeline(y):
        try:
            return grouped_auc(y, values, groups).value
        except StatsError:
            return float("nan")

    return permutation_null(pipeline, np.asarray(truth, dtype=int), n_perm=n_perm, seed=seed,
                            strata=np.asarray(groups, dtype=object), alternative="two-sided")


#: the AUC over a model's sets of a statistic fitted per set, with its null from
#: membership labels permuted among each model's sets; computed once per values
set_auc_null = memoized("entropy-set-auc-null")(_compute_set_auc_null)


def folded_auc(y, score) -> float:
    """The farther of AUC and 1 − AUC from one half (NaN with one class only)."""
    try:
        a = auc(np.asarray(y, dtype=int), np.asarray(score, dtype=float))
    except StatsError:
        return float("nan")
    return 0.5 + abs(a - 0.5)


def _compute_text_auc_null(member: Sequence[int], score: Sequence[float], texts: Sequence[str],
                           n_perm: int = MIN_PERMUTATIONS, seed: int = 0) -> Estimate:
    s = np.asarray(score, dtype=float)
    return permutation_null(lambda y: folded_auc(y, s), np.asarray(member, dtype=int), n_perm=n_perm,
                            seed=seed, units=np.asarray(texts, dtype=object), alternative="greater")


#: the folded AUC of a score over pairs, with its null from the labels permuted among
#: texts (every pair of a text keeps its text's label); computed once per values
text_auc_null = memoized("entropy-text-auc-null")(_compute_text_auc_null)

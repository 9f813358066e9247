"""The distributional chapter's decisions: every verdict it states, as a :class:`Claim`.

Each function takes the chapter's tables and returns claims whose status is decided
here, from the numbers, and nowhere else (:mod:`analysis.distributional.text` words
them). The deciders:

* a trend across the ladder (Mem_n, accuracy or a distance against model size):
  Spearman's ρ with size and its p-value, :func:`analysis.core.claims.directional`
  with at least :data:`MIN_MODELS` models;
* "Mem_n ≥ Mem_∞": the sign test over models, directional against one half;
* a share against a bound ("nearly every candidate", "fewer than half tied"): the
  Wilson 95% interval on one side of the bound (:func:`_share_claim`);
* "significant for every model" / "for no model" / "for most models": the models'
  own Spearman tests, read only where the table holds at least :data:`MIN_PAIRS`
  pairs (a Mem_n on fewer pairs decides nothing).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import pandas as pd

from analysis import ngrams
from analysis.core.claims import (
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    Claim,
    directional,
    not_testable,
)
from analysis.distributional.method import recall_gap
from analysis.distributional.method_trends import Trend, above_infgram, threshold_trends, trend
from analysis.distributional.params import (
    ALPHA,
    MIN_FACTS,
    MIN_MODELS,
    MIN_PAIRS,
    MOST,
    NEAR_ZERO,
    NEARLY_ALL,
    SOURCE_KENDALL,
    SOURCE_MMLU_REASONING,
    SOURCE_NOVELTY,
    paper_value,
)
from analysis.stats import ranks
from analysis.stats.intervals import wilson_interval

CHAPTER = "distributional"
#: the notebook's section labels, where each claim is shown
FILTER, PERFORMANCE, MEM, NOVELTY, SENSITIVITY, MMLU, SOURCE = (
    "distributional-filter", "distributional-performance", "distributional-mem", "distributional-novelty",
    "distributional-sensitivity", "distributional-mmlu", "distributional-source")
#: how the trend claims are compared
TREND_TEST = f"Spearman's ρ with model size, two-sided p < {ALPHA:g}, at least {MIN_MODELS} models"


def _plain(x):
    """``x`` with numpy scalars as Python numbers and NaN as None, for a claim's JSON."""
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    return None if isinstance(x, float) and not math.isfinite(x) else x


def _claim(id: str, statement: str, status_reason: tuple[str, str], **kw) -> Claim:
    status, reason = status_reason
    kw["extra"] = _plain(kw.get("extra", {}))
    return Claim(id=id, chapter=CHAPTER, statement=statement, status=status, reason=reason, **kw)


# ---------------------------------------------------------------------------
# Deciders
# ---------------------------------------------------------------------------


def _share_claim(id: str, statement: str, k: int, n: int, bound: float, below: bool, min_n: int, **kw
                 ) -> Claim:
    """A share ``k / n`` claimed to lie below ``bound`` (``below``) or at or above it:
    reproduced when the whole Wilson 95% interval is on the claimed side, not
    reproduced when it is wholly on the other, inconclusive when it straddles the
    bound or ``n < min_n``."""
    kw["extra"] = _plain(kw.get("extra", {}))
    side = "below" if below else "at or above"
    comparison = f"Wilson 95% interval of the share {side} {bound:g}, at least {min_n} items"
    if not n:
        return not_testable(id, CHAPTER, statement, "this run has no item to count", comparison=comparison,
                            **kw)
    lo, hi = (float(v) for v in wilson_interval(k, n))
    if n < min_n:
        sr = INCONCLUSIVE, f"n = {n} is below the minimum of {min_n}"
    else:
        holds, fails = (hi < bound, lo >= bound) if below else (lo >= bound, hi < bound)
        status = REPRODUCED if holds else NOT_REPRODUCED if fails else INCONCLUSIVE
        where = "wholly below" if hi < bound else "wholly at or above" if lo >= bound else "on both sides of"
        sr = status, f"95% interval {lo:.3f}–{hi:.3f}, {where} {bound:g}, n = {n}"
    return _claim(id, statement, sr, comparison=comparison, value=k / n, interval=(lo, hi), n=n, min_n=min_n,
                  **kw)


def _trend_claim(id: str, statement: str, params, values, direction: int = 1, **kw) -> Claim:
    """A measure claimed to rise (``direction`` +1) or fall (−1) with model size."""
    est = ranks.rank_trend(params, values)
    sr = directional(value=est.value, null=0.0, p=est.p, n=est.n, min_n=MIN_MODELS, direction=direction)
    extra = {"unit": "size_rho", **kw.pop("extra", {})}
    return _claim(id, statement, sr, comparison=TREND_TEST, value=est.value, p=est.p, n=est.n,
                  min_n=MIN_MODELS, extra=extra, **kw)


def _pairs(mem: pd.DataFrame, task: str, n: int, lm: str = "task-gram", filt: str = "no filter") -> int:
    """The fewest pairs a Mem_n of ``task``'s ``n``-grams rests on, over the models (0 for none)."""
    g = mem[(mem["task"] == task) & (mem["n"] == n) & (mem["lm"] == lm) & (mem["filter"] == filt)]
    return int(g["pairs"].min()) if len(g) else 0


def _per_model_gate(t: Trend, pairs: int) -> tuple[str, str] | None:
    """The status of a claim about the models' own tests, when the evidence cannot
    decide it: no value, too few models, or too few pairs for any Mem_n."""
    if not t.defined:
        return NOT_TESTABLE, "no model has a defined correlation"
    if t.n_models < MIN_MODELS:
        return INCONCLUSIVE, f"n = {t.n_models} models is below the minimum of {MIN_MODELS}"
    if pairs < MIN_PAIRS:
        return INCONCLUSIVE, f"the thinnest Mem rests on {pairs} pairs, below the minimum of {MIN_PAIRS}"
    return None


# ---------------------------------------------------------------------------
# The embedding filter
# ---------------------------------------------------------------------------


def filter_claims(counts: Mapping[str, int], task: str = "knowledge", n: int = 3) -> list[Claim]:
    """What the two thresholds do to one (task, n)'s candidates
    (:func:`~analysis.distributional.method_tables.filter_counts`): the authors'
    effective threshold keeps nearly every one (at least :data:`NEARLY_ALL`), and
    the paper's, with MiniLM in place of E5, keeps fewer than half (:data:`MOST`)."""
    total = counts["total"]
    common = {"section": FILTER, "extra": {"unit": "share", "task": task, "n": n, **counts}}
    authors = _share_claim(
        "authors_filter", f"The authors' code's effective threshold (γ = {ngrams.AUTHORS_THRESHOLD:g}) keeps "
        f"nearly every candidate {n}-gram pair of the {task} task (a filter in name only)",
        counts["authors"], total, NEARLY_ALL, below=False, min_n=MIN_PAIRS, **common)
    paper = _share_claim(
        "paper_filter", f"With MiniLM in place of E5, the paper's threshold keeps fewer than half of the "
        f"{task} task's candidate {n}-gram pairs", counts["paper"], total, MOST, below=True, min_n=MIN_PAIRS,
        source_value=f"γ = {ngrams.PAPER_THRESHOLDS['triviaqa'][n]:g} for TriviaQA {n}-grams (E5)", **common)
    return [authors, paper]


# ---------------------------------------------------------------------------
# Performance against counts
# ---------------------------------------------------------------------------


def performance_claims(acc: pd.DataFrame, by_copies: pd.DataFrame, answered: pd.DataFrame,
                       paper: pd.DataFrame | None = None) -> list[Claim]:
    """Accuracy against size and against the fact's copies, from
    :func:`~analysis.distributional.method_tables.accuracy_table`,
    :func:`~analysis.distributional.method_tables.accuracy_by_copies` and its counts
    :func:`~analysis.distributional.method_tables.answered_by_copies`."""
    fig3 = paper_value(paper, "Figure 3", "TriviaQA (n = 5)")
    knowledge = acc["knowledge accuracy"]
    size = _trend_claim("accuracy_size", "Knowledge accuracy rises with model size", acc["params"], knowledge,
                        section=PERFORMANCE, source_value=fig3,
                        extra={"constant": bool(knowledge.nunique() == 1)})
    return [size, copies_rise(by_copies, answered, fig3), copies_size(by_copies)]


def copies_rise(by_copies: pd.DataFrame, answered: pd.DataFrame, source_value: str | None = None) -> Claim:
    """The source's performance-against-count claim, on the lab's exact copies: the
    model with the best recall on the most-copied facts recalls them more often than
    the least-copied ones (Fisher's exact test; the model is chosen after the fact,
    so the p-value is optimistic)."""
    statement = "Knowledge accuracy rises with the count of the fact in the corpus"
    bins = [c for c in by_copies.columns if c != "params"]
    comparison = (f"recall on the most- minus the least-copied facts of the model best on the most-copied, "
                  f"Fisher's exact test p < {ALPHA:g}, at least {MIN_FACTS} facts")
    col = by_copies[bins[-1]].astype(float) if bins else pd.Series(dtype=float)
    if len(bins) < 2 or col.notna().sum() == 0:
        return not_testable("copies_rise", CHAPTER, statement,
                            "no model has scorable answers in two copies bins", comparison=comparison,
                            section=PERFORMANCE, source_value=source_value)
    top, low, best = bins[-1], bins[0], col.idxmax()
    count = answered.set_index(["model", "bin"])
    gap = recall_gap(count.loc[(best, top), "hits"], count.loc[(best, top), "n"],
                     count.loc[(best, low), "hits"], count.loc[(best, low), "n"])
    sr = directional(value=gap.value, null=0.0, p=gap.p, n=gap.n, min_n=MIN_FACTS)
    extra = {"unit": "difference", "model": best, "top": top, "low": low,
             "hi": float(by_copies.loc[best, top]), "lo": float(by_copies.loc[best, low]),
             "none_recalled": bool(col.max() == 0),
             "best_any": float(by_copies[bins].astype(float).max().max())}
    return _claim("copies_rise", statement, sr, comparison=comparison, value=gap.value, p=gap.p, n=gap.n,
                  min_n=MIN_FACTS, section=PERFORMANCE, source_value=source_value, extra=extra)


def copies_size(by_copies: pd.DataFrame) -> Claim:
    """Recall on the most-copied facts rises with model size (the source sees the
    count effect only past about 400M parameters)."""
    bins = [c for c in by_copies.columns if c != "params"]
    values = by_copies[bins[-1]].astype(float) if bins else np.full(len(by_copies), np.nan)
    return _trend_claim("copies_size", "Recall on the most-copied facts rises with model size",
                        by_copies["params"], values, section=PERFORMANCE)


# ---------------------------------------------------------------------------
# Distributional memorization across the ladder
# ---------------------------------------------------------------------------


def mem_significant(mem: pd.DataFrame, task: str = "knowledge", n: int = 3, source_value: str | None = None
                    ) -> Claim:
    """The source's TriviaQA Mem_n is significant and positive at every size."""
    t = trend(mem, task, n)
    pairs = _pairs(mem, task, n)
    good = t.significant & (t.rho > 0)
    sr = _per_model_gate(t, pairs) or (
        (REPRODUCED, f"all {t.n_models} models positive with p < {ALPHA:g}, on at least {pairs:,} pairs")
        if good.all() else
        (NOT_REPRODUCED, f"{int(good.sum())} of {t.n_models} models positive with p < {ALPHA:g}, "
                         f"on at least {pairs:,} pairs"))
    p = float(np.nanmax(t.pvalue)) if t.defined else None
    return _claim(f"mem{n}_significant",
                  f"The {task} task's Mem_{n} is significant and positive for every model", sr,
                  comparison=f"every model's Spearman p < {ALPHA:g} with ρ > 0, at least {MIN_PAIRS} pairs",
                  value=good.mean() if t.n_models else None, p=p, n=t.n_models, min_n=MIN_MODELS, section=MEM,
                  source_value=source_value,
                  extra={"unit": "share", "task": task, "mem_n": n, "k": int(good.sum()), "pairs": pairs})


def mem_rises(mem: pd.DataFrame, task: str = "knowledge", n: int = 3, source_value: str | None = None
              ) -> Claim:
    """The source's TriviaQA Mem_n rises with model size; no trend is read when no
    model's Mem_n is significant."""
    t = trend(mem, task, n)
    claim = _trend_claim(f"mem{n}_rises", f"The {task} task's Mem_{n} rises with model size", t.params, t.rho,
                         section=MEM, source_value=source_value, extra={"task": task, "mem_n": n})
    if t.defined and t.n_models >= MIN_MODELS and t.n_sig == 0:
        return replace(claim, status=INCONCLUSIVE,
                       reason="no model's Mem is significant, so there is no memorization trend to read")
    return claim


def mem_none(mem: pd.DataFrame, task: str = "reasoning", n: int = 3, source_value: str | None = None
             ) -> Claim:
    """The source's GSM8K: no significant Mem_n at any size."""
    t = trend(mem, task, n)
    pairs = _pairs(mem, task, n)
    sig = t.rho[t.significant]
    sign = 0 if not len(sig) else -1 if (sig < 0).all() else 1 if (sig > 0).all() else 0
    sr = _per_model_gate(t, pairs) or (
        (REPRODUCED, f"no model has p < {ALPHA:g}, on at least {pairs:,} pairs") if t.n_sig == 0 else
        (NOT_REPRODUCED, f"{t.n_sig} of {t.n_models} models have p < {ALPHA:g}, on at least {pairs:,} pairs"))
    return _claim(f"mem{n}_{task}_none", f"The {task} task's Mem_{n} is significant for no model", sr,
                  comparison=f"every model's Spearman p ≥ {ALPHA:g}, at least {MIN_PAIRS} pairs",
                  value=t.n_sig / t.n_models if t.n_models else None,
                  p=float(np.nanmin(t.pvalue)) if t.defined else None, n=t.n_models, min_n=MIN_MODELS,
                  section=MEM, source_value=source_value,
                  extra={"unit": "share", "task": task, "mem_n": n, "k": t.n_sig, "sign": sign,
                         "pairs": pairs})


def above_infgram_claim(mem: pd.DataFrame, task: str, n: int = 3, source_value: str | None = None) -> Claim:
    """Mem_n ≥ Mem_∞ (the source finds it on TriviaQA and MMLU): the sign test over models."""
    above, total = above_infgram(mem, task, n)
    est = ranks.sign_test(above, total)
    sr = directional(value=est.value, null=0.5, p=est.p, n=total, min_n=MIN_MODELS)
    return _claim(f"mem{n}_above_infgram_{task}",
                  f"On the {task} task, Mem_{n} (task-gram LM) is at least Mem_∞ (∞-gram LM)", sr,
                  comparison=f"share of models with Mem_{n} ≥ Mem_∞, two-sided sign test p < {ALPHA:g}, "
                             f"at least {MIN_MODELS} models",
                  value=est.value, p=est.p, n=total, min_n=MIN_MODELS, section=MEM, source_value=source_value,
                  extra={"unit": "share", "task": task, "mem_n": n, "k": above})


def tied_claim(table: pd.DataFrame | None, t: Trend, task: str, n: int = 3) -> Claim:
    """Fewer than half of a task's test pairs have ``P_{n,D} = 1``, so the task-gram LM
    can order them (the paper's TriviaQA n-grams recur across the Pile). By design on
    the knowledge task: stretches of each question also occur without its answer."""
    k = int((table["p_taskgram"].to_numpy(dtype=float) == 1).sum()) if table is not None else 0
    top = max(abs(t.lo), abs(t.hi)) if t.defined else np.nan
    return _share_claim(
        f"tied{n}_{task}", f"Fewer than half of the {task} task's {n}-gram test pairs have P(s^y | s^x) = 1",
        k, 0 if table is None else len(table), MOST, below=True, min_n=MIN_PAIRS, section=MEM,
        by_design=task == "knowledge",
        extra={"unit": "share", "task": task, "mem_n": n, "max_abs_mem": top,
               "near_zero": bool(top < NEAR_ZERO)})


def count_claim(mem: pd.DataFrame, task: str, n: int = 3) -> Claim:
    """A variant beyond the paper: the models' probabilities follow the pair count
    ``C((x, y))``: more than half of the models significantly positive (not
    reproduced when more than half are significantly negative)."""
    c = trend(mem, task, n, lm="pair count")
    pairs = _pairs(mem, task, n, lm="pair count")
    pos = int((c.significant & (c.rho > 0)).sum())
    neg = int((c.significant & (c.rho < 0)).sum())
    need = MOST * c.n_models
    sr = _per_model_gate(c, pairs) or (
        (REPRODUCED if pos > need else NOT_REPRODUCED if neg > need else INCONCLUSIVE,
         f"{pos} of {c.n_models} models significantly positive, {neg} significantly negative"))
    return _claim(f"count{n}_{task}",
                  f"On the {task} task, the models' probabilities follow the pair count C((s^x, s^y))", sr,
                  comparison=f"more than half of the models with Spearman p < {ALPHA:g} and ρ > 0, at least "
                             f"{MIN_PAIRS} pairs",
                  value=float(np.nanmedian(c.rho)) if c.defined else None, n=c.n_models, min_n=MIN_MODELS,
                  section=MEM, extra={"unit": "median_rho", "task": task, "mem_n": n, "k": c.n_sig,
                                      "pos": pos, "neg": neg})


def kendall_rises(kendall: pd.DataFrame, task: str = "reasoning", n: int = 3, source_value: str | None = None
                  ) -> Claim:
    """The source's GSM8K Kendall tau distance rises with model size (read as generalization)."""
    k = trend(kendall, task, n, value="kendall")
    return _trend_claim(f"kendall{n}_rises", f"The {task} task's Kendall tau distance rises with model size",
                        k.params, k.rho, section=MEM, source_value=source_value,
                        extra={"task": task, "mem_n": n})


def kendall_inf_claim(kendall: pd.DataFrame, task: str = "reasoning", n: int = 3,
                      source_value: str | None = SOURCE_KENDALL) -> Claim:
    """The source's GSM8K Kendall tau distance is larger against the ∞-gram LM than
    against the task-gram LM: the sign test over the models with both distances
    (:func:`~analysis.distributional.method_tables.kendall_table` with ``log_inf``)."""
    tg = trend(kendall, task, n, value="kendall")
    inf = trend(kendall, task, n, lm="∞-gram", value="kendall")
    both = np.isfinite(tg.rho) & np.isfinite(inf.rho) if tg.n_models == inf.n_models else np.zeros(0, bool)
    above, total = int((inf.rho[both] > tg.rho[both]).sum()), int(both.sum())
    est = ranks.sign_test(above, total)
    sr = directional(value=est.value, null=0.5, p=est.p, n=total, min_n=MIN_MODELS)
    return _claim(f"kendall{n}_inf_above",
                  f"On the {task} task, the Kendall tau distance to the ∞-gram LM exceeds that to the "
                  "task-gram LM", sr,
                  comparison=f"share of models with the larger ∞-gram distance, two-sided sign test "
                             f"p < {ALPHA:g}, at least {MIN_MODELS} models",
                  value=est.value, p=est.p, n=total, min_n=MIN_MODELS, section=MEM, source_value=source_value,
                  extra={"unit": "share", "task": task, "mem_n": n, "k": above})


def mem_claims(mem: pd.DataFrame, kendall: pd.DataFrame, tables: Mapping[tuple, pd.DataFrame],
               paper: pd.DataFrame | None = None, n: int = 3, also_n: int = 5) -> list[Claim]:
    """Every claim of the memorization section, for ``n``-grams (and the knowledge
    task's trend for ``also_n``-grams), from
    :func:`~analysis.distributional.method_tables.mem_table` and
    :func:`~analysis.distributional.method_tables.kendall_table`."""
    k3 = paper_value(paper, "Figure 4", f"TriviaQA (n = {n})")
    gsm = paper_value(paper, "Figure 4", "GSM8K")
    return [
        mem_significant(mem, "knowledge", n, k3), mem_rises(mem, "knowledge", n, k3),
        mem_rises(mem, "knowledge", also_n), mem_none(mem, "reasoning", n, gsm),
        above_infgram_claim(mem, "knowledge", n, paper_value(paper, "Figure 4", "TriviaQA")),
        above_infgram_claim(mem, "reasoning", n),
        *(tied_claim(tables.get((task, n)), trend(mem, task, n), task, n)
          for task in ("knowledge", "reasoning")),
        count_claim(mem, "knowledge", n), count_claim(mem, "reasoning", n),
        kendall_rises(kendall, "reasoning", n, gsm), kendall_inf_claim(kendall, "reasoning", n),
    ]


# ---------------------------------------------------------------------------
# The threshold check, and what the lab cannot test
# ---------------------------------------------------------------------------


def _threshold_status(row) -> tuple[str, str]:
    if row["pairs"] < MIN_PAIRS:
        return INCONCLUSIVE, f"{row['pairs']} pairs, below the minimum of {MIN_PAIRS}"
    return directional(value=row["size_rho"], null=0.0, p=row["pvalue"], n=row["models"], min_n=MIN_MODELS)


def sensitivity_claim(sens: pd.DataFrame, n: int = 3, paper: pd.DataFrame | None = None) -> Claim:
    """The source's Mem_n rises with size at every threshold of its grid, from
    :func:`~analysis.distributional.method_tables.sensitivity_table`: reproduced when
    the rise is significant at every threshold, each keeping at least
    :data:`MIN_PAIRS` pairs; not reproduced when a threshold with enough pairs shows
    otherwise; inconclusive else (``n`` is the fewest pairs a threshold keeps)."""
    statement = f"The knowledge task's Mem_{n} rises with model size at every cosine threshold"
    source = paper_value(paper, "Figure 6", f"TriviaQA (n = {n})")
    comparison = f"{TREND_TEST}, at every threshold, each keeping at least {MIN_PAIRS} pairs"
    rows = threshold_trends(sens)
    if rows.empty:
        return not_testable(f"sensitivity{n}", CHAPTER, statement, "no threshold was applied",
                            comparison=comparison, section=SENSITIVITY, source_value=source)
    decided = [_threshold_status(r) for _, r in rows.iterrows()]
    rows = rows.assign(status=[s for s, _ in decided], why=[w for _, w in decided])
    fewest = int(rows["pairs"].min())
    enough = rows["pairs"] >= MIN_PAIRS
    against = rows[enough & (rows["status"] == NOT_REPRODUCED)]
    if len(against):
        sr = NOT_REPRODUCED, "; ".join(f"{g}: {w}" for g, w in zip(against["gamma"], against["why"]))
    elif fewest < MIN_PAIRS:
        thin = rows[~enough]
        sr = INCONCLUSIVE, "; ".join(f"{g} keeps {p} pairs" for g, p in zip(thin["gamma"], thin["pairs"])) + (
            f", below the minimum of {MIN_PAIRS} for a Mem_{n}")
    elif (rows["status"] == REPRODUCED).all():
        sr = REPRODUCED, f"a significant rise at all {len(rows)} thresholds, on at least {fewest} pairs"
    else:
        weak = rows[rows["status"] != REPRODUCED]
        sr = INCONCLUSIVE, "; ".join(f"{g}: {w}" for g, w in zip(weak["gamma"], weak["why"]))
    rho = rows["size_rho"].to_numpy(float)
    return _claim(f"sensitivity{n}", statement, sr, comparison=comparison,
                  value=float(np.nanmin(rho)) if np.isfinite(rho).any() else None,
                  p=float(np.nanmax(rows["pvalue"])) if rows["pvalue"].notna().any() else None,
                  n=fewest, min_n=MIN_PAIRS, section=SENSITIVITY, source_value=source,
                  extra={"unit": "min_size_rho", "mem_n": n, "thresholds": rows.to_dict("records")})


# ---------------------------------------------------------------------------
# Novelty, and the MMLU splits
# ---------------------------------------------------------------------------


def novelty_claims(nov: pd.DataFrame, source_value: str | None = SOURCE_NOVELTY) -> list[Claim]:
    """The source's WMT novelty rises with model size (read as generalization); per lab
    task, the share of novel generated pairs
    (:func:`~analysis.distributional.method_tables.novelty_table`) against size. A
    task where some model generated fewer than :data:`MIN_PAIRS` pairs is inconclusive."""
    out = []
    for task, g in nov.groupby("task", sort=False):
        g = g.sort_values("params", kind="stable")
        fewest = int(g["pairs"].min()) if len(g) else 0
        claim = _trend_claim(f"novelty_rises_{task}", f"On the {task} task, the share of novel generated "
                             "n-gram pairs rises with model size", g["params"], g["novelty"], section=NOVELTY,
                             source_value=source_value, extra={"task": task, "pairs": fewest})
        if claim.status in (REPRODUCED, NOT_REPRODUCED) and fewest < MIN_PAIRS:
            claim = replace(claim, status=INCONCLUSIVE,
                            reason=f"a model generated only {fewest} pairs, below the minimum of {MIN_PAIRS}")
        out.append(claim)
    return out


def _split_gate(splits: pd.DataFrame, mem: pd.DataFrame, task: str, n: int) -> tuple[str, str] | None:
    """The status of an MMLU split's claim when its pairs cannot decide it: none
    co-occurs in the corpus (not testable), or too few (inconclusive)."""
    row = splits[(splits["task"] == task) & (splits["n"] == n)]
    if row.empty:
        return NOT_TESTABLE, f"the {task} split was not counted"
    r = row.iloc[0]
    if not r["co-occurring"]:
        return NOT_TESTABLE, (f"none of the {r['candidates']:,} candidate {n}-gram pairs of the {task} "
                              f"split's {r['questions']:,} questions co-occurs in a document of the lab "
                              "corpus")
    pairs = _pairs(mem, task, n)
    if pairs < MIN_PAIRS:
        return INCONCLUSIVE, (f"the {task} split has {pairs} co-occurring pairs, below the minimum of "
                              f"{MIN_PAIRS} for a Mem_{n}")
    return None


def mmlu_claims(mem: pd.DataFrame, splits: pd.DataFrame, paper: pd.DataFrame | None = None, n: int = 3,
                knowledge: str = "MMLU knowledge", reasoning: str = "MMLU reasoning") -> list[Claim]:
    """The source's MMLU split (Figure 4): the knowledge split's ``Mem_n`` falls with
    model size, and the reasoning split's is lower than the knowledge split's, from
    :func:`~analysis.distributional.method_tables.split_tables` (``splits``) and
    :func:`~analysis.distributional.method_tables.taskgram_mem_table` (``mem``)."""
    src = paper_value(paper, "Figure 4", f"MMLU knowledge (n = {n})")
    falls = _trend_claim("mmlu_mem_falls", f"The MMLU knowledge split's Mem_{n} falls with model size",
                         *_xy(mem, knowledge, n), direction=-1, section=MMLU, source_value=src,
                         extra={"task": knowledge, "mem_n": n, "pairs": _pairs(mem, knowledge, n)})
    t = trend(mem, knowledge, n)
    gate = _split_gate(splits, mem, knowledge, n)
    if gate is None and t.n_models >= MIN_MODELS and t.n_sig == 0:
        gate = INCONCLUSIVE, "no model's Mem is significant, so there is no memorization trend to read"
    if gate:
        falls = replace(falls, status=gate[0], reason=gate[1])
    tk, tr = t, trend(mem, reasoning, n)
    both = np.isfinite(tk.rho) & np.isfinite(tr.rho) if tk.n_models == tr.n_models else np.zeros(0, bool)
    below, total = int((tr.rho[both] < tk.rho[both]).sum()), int(both.sum())
    est = ranks.sign_test(below, total)
    gates = [g for g in (_split_gate(splits, mem, knowledge, n), _split_gate(splits, mem, reasoning, n)) if g]
    sr = (next((g for g in gates if g[0] == NOT_TESTABLE), gates[0]) if gates
          else directional(value=est.value, null=0.5, p=est.p, n=total, min_n=MIN_MODELS))
    lower = _claim("mmlu_reasoning_below",
                   f"The MMLU reasoning split's Mem_{n} is lower than the knowledge split's", sr,
                   comparison=f"share of models with the lower reasoning Mem_{n}, two-sided sign test "
                              f"p < {ALPHA:g}, at least {MIN_MODELS} models and {MIN_PAIRS} pairs per split",
                   value=est.value, p=est.p, n=total, min_n=MIN_MODELS, section=MMLU,
                   source_value=SOURCE_MMLU_REASONING,
                   extra={"unit": "share", "task": reasoning, "mem_n": n, "k": below,
                          "pairs": _pairs(mem, reasoning, n)})
    return [falls, lower]


def _xy(mem: pd.DataFrame, task: str, n: int):
    t = trend(mem, task, n)
    return t.params, t.rho


def untestable_claims(paper: pd.DataFrame | None = None) -> list[Claim]:
    """The source's claims on tasks the lab has no counterpart of (WMT)."""
    return [
        not_testable("wmt_mem_none", CHAPTER, "Translation (WMT) shows no significant Mem_n at any size",
                     "the lab has no translation task", section=SOURCE,
                     source_value=paper_value(paper, "Figure 4", "WMT")),
    ]

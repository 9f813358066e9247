"""The chapter's tables over the ladder: what each filter keeps, the models' answers
scored, accuracy against counts and copies, Mem and Kendall per model, novelty and
the threshold check. Pure functions over data frames and arrays."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from analysis import ngrams
from analysis.distributional.method import (
    answer_correct,
    cooccurring,
    corpus_lms,
    final_number,
    kendall_distance,
    pair_contexts,
    performance_by_count,
    spearman_row,
)
from analysis.distributional.params import (
    AUTHORS_FILTER,
    CHAPTER_THRESHOLDS,
    COPIES_EDGES,
    N_COUNT_BINS,
    NONE_FILTER,
    NOVELTY_N,
    PAPER_FILTER,
    DistributionalError,
)

# ---------------------------------------------------------------------------
# The ladder and the tasks
# ---------------------------------------------------------------------------

_LADDER_COLUMNS = {"params": "params", "layers": "n_layer", "width": "d_model", "tokens": "tokens"}


def ladder_table(runs: pd.DataFrame, models: Sequence[str] | None = None) -> pd.DataFrame:
    """The ladder runs the chapter compares, smallest first.

    ``runs`` is :meth:`analysis.lab.ladder.LabBuild.runs_table`; ``models`` names
    the runs to keep (None: every ladder run in it). Returns ``model``, ``family``
    (``wide`` or ``deep``), ``params``, ``layers``, ``width`` and ``tokens``.
    """
    table = runs[runs["family"].str.startswith("ladder")].set_index("run")
    names = list(table.index) if models is None else ([models] if isinstance(models, str) else list(models))
    missing = [m for m in names if m not in table.index]
    if missing or not names:
        raise DistributionalError(f"no ladder run {missing or names}; runs: {list(table.index)}")
    t = table.loc[names]
    out = pd.DataFrame({"model": names, "family": t["family"].str.removeprefix("ladder-").to_numpy(),
                        **{new: t[old].astype(int).to_numpy() for new, old in _LADDER_COLUMNS.items()}})
    return out.sort_values("params", kind="stable").reset_index(drop=True)


def task_specs(know: pd.DataFrame, reas: pd.DataFrame) -> dict[str, dict[str, list]]:
    """The two tasks as the pair tables need them: per task, ``inputs`` (questions),
    ``outputs`` (the answer, or the worked solution) and ``prompts`` (what a model is
    asked), from :func:`~analysis.distributional.run.knowledge_task` and
    :func:`~analysis.distributional.run.reasoning_task`."""
    return {
        "knowledge": {"inputs": list(know["question"]), "outputs": list(know["answer"]),
                      "prompts": list(know["prompt"]), "gold": list(know["answer"])},
        "reasoning": {"inputs": list(reas["question"]), "outputs": list(reas["solution"]),
                      "prompts": list(reas["prompt"]), "gold": list(reas["answer"])},
    }


# ---------------------------------------------------------------------------
# The embedding filter
# ---------------------------------------------------------------------------


def filter_thresholds(task: str, n: int) -> dict[str, float | None]:
    """The three embedding filters of a (task, n) table, by label: the paper's γ_n as
    the chapter applies it (:data:`CHAPTER_THRESHOLDS`), the authors' code's
    effective γ (:data:`analysis.ngrams.AUTHORS_THRESHOLD`) and no filter."""
    return {PAPER_FILTER: CHAPTER_THRESHOLDS[task][n], AUTHORS_FILTER: ngrams.AUTHORS_THRESHOLD,
            NONE_FILTER: ngrams.NO_FILTER}


def filter_rows(counted: pd.DataFrame, thresholds: Mapping[str, float | None], cosines) -> pd.DataFrame:
    """How many candidate pairs each filter keeps, and how many of those co-occur.

    ``counted`` is a candidate table with its counts (:func:`analysis.ngrams.count_pairs`);
    ``cosines`` its :func:`analysis.ngrams.pair_cosines`. Returns
    :func:`analysis.ngrams.filter_summary`'s columns plus ``co-occurring``: the kept
    pairs with ``C((x, y)) > 0``, which are the test pairs Φ under that filter.
    """
    summary = ngrams.filter_summary(counted, thresholds, cosines=cosines)
    co = counted["c_xy"].to_numpy() > 0
    summary["co-occurring"] = [int((ngrams.cosine_keep(counted, g, cosines) & co).sum())
                               for g in thresholds.values()]
    return summary


def filter_counts(filters: pd.DataFrame, task: str, n: int) -> dict[str, int]:
    """For one (task, n) of the filter rows (:attr:`~analysis.distributional.run.TaskGrams.filters`):
    ``total`` candidates, the pairs the ``paper``'s and the ``authors``' thresholds
    keep, and the co-occurring pairs under the paper's threshold (``paper_co``) and
    without a filter (``none_co``)."""
    k = filters[(filters["task"] == task) & (filters["n"] == n)].set_index("label")
    if k.empty:
        raise DistributionalError(f"no filter rows for task {task!r}, n = {n}")
    return {"total": int(k["total"].iloc[0]), "paper": int(k.loc[PAPER_FILTER, "pairs"]),
            "authors": int(k.loc[AUTHORS_FILTER, "pairs"]),
            "paper_co": int(k.loc[PAPER_FILTER, "co-occurring"]),
            "none_co": int(k.loc[NONE_FILTER, "co-occurring"])}


# ---------------------------------------------------------------------------
# The models' answers: accuracy, against counts and against copies
# ---------------------------------------------------------------------------


def score_answers(answers: pd.DataFrame, tasks: Mapping[str, Mapping]) -> pd.DataFrame:
    """``answers`` with ``correct``: 1 or 0 by :func:`answer_correct` (knowledge) or
    :func:`final_number` against the gold number (reasoning), NaN for an error."""
    def one(row) -> float:
        if row.answer is None:
            return np.nan
        gold = tasks[row.task]["gold"][int(row.instance)]
        if row.task == "reasoning":
            return float(final_number(row.answer) == gold)
        return float(answer_correct(row.answer, gold))

    return answers.assign(correct=[one(r) for r in answers.itertuples(index=False)])


def accuracy_table(scored: pd.DataFrame, ladder: pd.DataFrame) -> pd.DataFrame:
    """Per model (in ladder order): ``params`` and the share of correct answers of
    each task, errors left out of the denominator."""
    acc = scored.pivot_table(index="model", columns="task", values="correct", aggfunc="mean")
    acc = acc.reindex(ladder["model"])
    return pd.DataFrame({"model": ladder["model"].to_numpy(), "params": ladder["params"].to_numpy(),
                         **{f"{t} accuracy": acc[t].to_numpy() if t in acc else np.nan
                            for t in ("knowledge", "reasoning")}})


def count_bins(counts, n_bins: int = N_COUNT_BINS) -> tuple[np.ndarray, list[str]]:
    """Bin edges at the quantiles of ``counts`` (``n_bins`` bins of equal size, fewer
    where quantiles coincide; one bin when every count is the same) and their labels
    ``'lo–hi'``."""
    c = np.asarray(counts, dtype=float)
    if c.size == 0:
        raise DistributionalError("count_bins needs at least one count")
    edges = np.unique(np.quantile(c, np.linspace(0, 1, int(n_bins) + 1)))
    if len(edges) < 2:  # every instance has the same count (tiny corpora)
        edges = np.array([edges[0], edges[0] + 1])
    return edges, [f"{int(a)}–{int(b)}" for a, b in zip(edges[:-1], edges[1:])]


def performance_table(scored: pd.DataFrame, instance_counts, ladder: pd.DataFrame,
                      n_bins: int = N_COUNT_BINS, task: str = "knowledge") -> pd.DataFrame:
    """The source's performance-against-count table: per model, accuracy on ``task``
    in bins of the instance's summed pair count
    (:func:`~analysis.distributional.method.instance_pair_counts`, binned by
    :func:`count_bins`), with Wilson intervals (:func:`performance_by_count`);
    errors are left out."""
    counts = np.asarray(instance_counts)
    edges, labels = count_bins(counts, n_bins)
    frames = []
    for m, params in zip(ladder["model"], ladder["params"]):
        k = scored[(scored["model"] == m) & (scored["task"] == task) & scored["correct"].notna()]
        t = performance_by_count(k["correct"].to_numpy(int), counts[k["instance"].to_numpy(int)], edges)
        frames.append(t.assign(model=m, params=params, bin=labels))
    return pd.concat(frames, ignore_index=True)


def copies_bins(copies) -> pd.Categorical:
    """Each fact's copies binned at :data:`COPIES_EDGES` (labels ``'1'``, ``'2–4'``, …)."""
    c = np.asarray(copies)
    edges = list(COPIES_EDGES)
    if c.size and c.max() > edges[-1]:
        edges[-1] = int(c.max())
    labels = [str(b) if a + 1 == b else f"{a + 1}–{b}" for a, b in zip(edges[:-1], edges[1:])]
    return pd.cut(c, edges, labels=labels)


def _knowledge_by_bin(scored: pd.DataFrame, copies, aggfunc) -> pd.DataFrame:
    bins = copies_bins(copies)
    k = scored[(scored["task"] == "knowledge") & scored["correct"].notna()]
    k = k.assign(bin=pd.Categorical(np.asarray(bins)[k["instance"].to_numpy(int)],
                                    categories=bins.categories))
    table = k.pivot_table(index="model", columns="bin", values="correct", aggfunc=aggfunc, observed=True)
    return table.reindex(columns=[c for c in bins.categories if c in table.columns])


def accuracy_by_copies(scored: pd.DataFrame, copies, ladder: pd.DataFrame) -> pd.DataFrame:
    """Knowledge accuracy per model (rows, ladder order; with ``params``) and per bin
    of the fact's copies in the corpus (columns, :func:`copies_bins`; bins holding no
    fact are left out), errors left out."""
    table = _knowledge_by_bin(scored, copies, "mean").reindex(index=ladder["model"])
    table.columns = list(table.columns.astype(str))
    table.insert(0, "params", ladder["params"].to_numpy())
    table.index.name = None
    return table


def answered_by_copies(scored: pd.DataFrame, copies, ladder: pd.DataFrame) -> pd.DataFrame:
    """The counts behind :func:`accuracy_by_copies`: per model and copies bin, the
    answered knowledge questions (``n``, errors left out) and the right ones
    (``hits``), as columns ``model, bin, n, hits``."""
    n = _knowledge_by_bin(scored, copies, "count").reindex(index=ladder["model"])
    hits = _knowledge_by_bin(scored, copies, "sum").reindex(index=ladder["model"])
    out = pd.DataFrame({"model": np.repeat(ladder["model"].to_numpy(), n.shape[1]),
                        "bin": np.tile(np.asarray(n.columns.astype(str)), len(n)),
                        "n": n.fillna(0).to_numpy(int).ravel(), "hits": hits.fillna(0).to_numpy(int).ravel()})
    return out


def facts_per_copies_bin(copies) -> pd.Series:
    """How many facts fall in each bin of :func:`copies_bins` (non-empty bins only)."""
    counts = pd.Series(copies_bins(copies)).value_counts(sort=False)
    return counts[counts > 0]


# ---------------------------------------------------------------------------
# Both corpus LMs against the models
# ---------------------------------------------------------------------------


def pair_inputs(tables: Mapping[tuple, pd.DataFrame], tasks: Mapping[str, Mapping]
                ) -> dict[tuple, tuple[list[str], list[str]]]:
    """Context and n-gram text of every test pair (:func:`pair_contexts`), per (task, n)."""
    return {(task, n): pair_contexts(t, tasks[task]["prompts"], tasks[task]["outputs"])
            for (task, n), t in tables.items()}


def mem_table(tables: Mapping[tuple, pd.DataFrame], log_llm: Mapping[tuple, np.ndarray],
              log_inf: Mapping[tuple, np.ndarray], ladder: pd.DataFrame) -> pd.DataFrame:
    """Distributional memorization of every model, task, n and corpus LM: ``Mem_n``
    (task-gram), ``Mem_∞`` (∞-gram) and the pair-count variant, each over all test
    pairs (``filter`` "no filter") and over the pairs the paper's threshold keeps
    ("paper"). Columns ``task, n, model, params, family, filter, lm, rho, pvalue,
    pairs, note`` (:func:`spearman_row`)."""
    rows = []
    for (task, n), table in tables.items():
        masks = {"no filter": np.ones(len(table), bool),
                 "paper": ngrams.cosine_keep(table, CHAPTER_THRESHOLDS[task][n], table["cosine"].to_numpy())}
        lms = corpus_lms(table, log_inf[(task, n)])
        for m, params, family in zip(ladder["model"], ladder["params"], ladder["family"]):
            lp = np.asarray(log_llm[(m, task, n)])
            rows += [{"task": task, "n": n, "model": m, "params": params, "family": family, "filter": filt,
                      "lm": lm, **spearman_row(p[mask], lp[mask])}
                     for filt, mask in masks.items() for lm, p in lms.items()]
    return pd.DataFrame(rows)


def kendall_table(tables: Mapping[tuple, pd.DataFrame], log_llm: Mapping[tuple, np.ndarray],
                  ladder: pd.DataFrame, log_inf: Mapping[tuple, np.ndarray] | None = None) -> pd.DataFrame:
    """The source's measure for tasks without significant memorization: the Kendall
    tau distance (:func:`kendall_distance`) between a corpus LM's and each model's
    rankings of the test pairs, for the task-gram LM and, given ``log_inf``, the
    ∞-gram LM. Columns ``task, n, model, params, family, lm, kendall, pvalue`` (NaN
    with fewer than three usable pairs)."""
    rows = []
    for (task, n), table in tables.items():
        with np.errstate(divide="ignore"):
            sides = {"task-gram": -np.log(table["p_taskgram"].to_numpy(dtype=float))}
        if log_inf is not None:
            sides["∞-gram"] = -np.asarray(log_inf[(task, n)], dtype=float)
        for lm, neg_log in sides.items():
            for m, params, family in zip(ladder["model"], ladder["params"], ladder["family"]):
                try:
                    kd = kendall_distance(neg_log, -np.asarray(log_llm[(m, task, n)]))
                    value, p = kd.value, kd.p
                except DistributionalError:
                    value, p = np.nan, np.nan
                rows.append({"task": task, "n": n, "model": m, "params": params, "family": family,
                             "lm": lm, "kendall": value, "pvalue": p})
    return pd.DataFrame(rows, columns=["task", "n", "model", "params", "family", "lm", "kendall", "pvalue"])


def sensitivity_table(table: pd.DataFrame, log_llm: Mapping[tuple, np.ndarray], ladder: pd.DataFrame,
                      task: str, n: int, gammas: Sequence[float],
                      thresholds: Mapping[float, float] | None = None) -> pd.DataFrame:
    """The source's threshold check: ``Mem_n`` of every model with the table filtered
    at each γ in ``gammas`` and unfiltered. With ``thresholds`` (γ → the MiniLM
    threshold of the same keep-rate,
    :func:`~analysis.distributional.source_rules.matched_thresholds`) each γ filters at
    its matched threshold instead. Columns ``gamma`` (label), ``model``, ``params``,
    ``rho``, ``pvalue``, ``pairs`` (kept pairs)."""
    p = table["p_taskgram"].to_numpy(dtype=float)
    if thresholds is not None:
        missing = [g for g in gammas if float(g) not in thresholds]
        if missing:
            raise DistributionalError(f"no matched threshold for γ = {missing}")
    rows = []
    for gamma in (*gammas, None):
        cut = gamma if thresholds is None or gamma is None else thresholds[float(gamma)]
        mask = ngrams.cosine_keep(table, cut, table["cosine"].to_numpy())
        label = "no filter" if gamma is None else (
            f"γ = {gamma:g}" if thresholds is None else f"γ = {gamma:g} (MiniLM > {cut:.3f})")
        for m, params in zip(ladder["model"], ladder["params"]):
            r = spearman_row(p[mask], np.asarray(log_llm[(m, task, n)])[mask])
            rows.append({"gamma": label, "model": m, "params": params, "rho": r["rho"], "pvalue": r["pvalue"],
                         "pairs": int(mask.sum())})
    return pd.DataFrame(rows)


def split_tables(specs: Mapping[str, Mapping], doc_index: Mapping[bool, object], n: int,
                 max_pairs: int | None = None, seed: int = 0
                 ) -> tuple[dict[tuple, pd.DataFrame], pd.DataFrame]:
    """The task-gram tables of further tasks (the MMLU splits of
    :func:`~analysis.distributional.run.mmlu_task`), without an embedding filter, and
    what each holds. Returns the tables of the tasks with a co-occurring pair, keyed
    ``(task, n)`` (a seeded sample of ``max_pairs``, as :func:`cooccurring`), and one
    row per task: ``task, n, questions, candidates, co-occurring`` (pairs with
    ``C((x, y)) > 0``) and ``instances`` (questions with such a pair)."""
    tables, rows = {}, []
    for task, spec in specs.items():
        try:
            cand = ngrams.task_gram_pairs(spec["inputs"], spec["outputs"], n)
        except ngrams.NgramError:
            cand = pd.DataFrame({"instance": [], "x": [], "y": []})
        counted = ngrams.count_pairs(cand, doc_index[ngrams.default_drop_stopwords(n)]) if len(cand) else (
            cand.assign(c_xy=[]))
        co = counted[counted["c_xy"] > 0]
        rows.append({"task": task, "n": n, "questions": len(spec["inputs"]), "candidates": len(counted),
                     "co-occurring": len(co), "instances": int(co["instance"].nunique())})
        if len(co):
            tables[(task, n)] = cooccurring(counted, max_pairs=max_pairs, seed=seed)
    return tables, pd.DataFrame(rows)


def taskgram_mem_table(tables: Mapping[tuple, pd.DataFrame], log_llm: Mapping[tuple, np.ndarray],
                       ladder: pd.DataFrame) -> pd.DataFrame:
    """``Mem_n`` with the task-gram LM only, over every test pair (no filter): the
    :func:`mem_table` rows of tables without cosines or ∞-gram probabilities (the
    MMLU splits), with the same columns."""
    rows = []
    for (task, n), table in tables.items():
        p = table["p_taskgram"].to_numpy(dtype=float)
        for m, params, family in zip(ladder["model"], ladder["params"], ladder["family"]):
            rows.append({"task": task, "n": n, "model": m, "params": params, "family": family,
                         "filter": NONE_FILTER, "lm": "task-gram",
                         **spearman_row(p, np.asarray(log_llm[(m, task, n)]))})
    return pd.DataFrame(rows, columns=["task", "n", "model", "params", "family", "filter", "lm", "rho",
                                       "pvalue", "pairs", "note"])


def novelty_counts(answers: pd.DataFrame, tasks: Mapping[str, Mapping], doc_index: Mapping[bool, object],
                   ladder: pd.DataFrame, n: int = NOVELTY_N) -> pd.DataFrame:
    """Per model, task and instance, the (input n-gram, generated n-gram) pairs of each
    model's answer (``pairs``) and how many never co-occur in a corpus document
    (``novel``); a failed request counts as an empty answer, and an instance with no
    pair has no row. Columns ``model, params, task, instance, novel, pairs``."""
    index = doc_index[ngrams.default_drop_stopwords(n)]
    frames = []
    for m, params in zip(ladder["model"], ladder["params"]):
        for task, spec in tasks.items():
            got = answers[(answers["model"] == m) & (answers["task"] == task)].sort_values("instance")
            gen = [a or "" for a in got["answer"]]
            try:
                counted = ngrams.count_pairs(ngrams.task_gram_pairs(spec["inputs"], gen, n), index)
            except (ngrams.NgramError, DistributionalError):
                continue
            frames.append(counted.assign(novel=(counted["c_xy"] == 0).astype(int))
                          .groupby("instance").agg(novel=("novel", "sum"), pairs=("novel", "size"))
                          .reset_index().assign(model=m, params=params, task=task))
    cols = ["model", "params", "task", "instance", "novel", "pairs"]
    return pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)


def novelty_table(answers: pd.DataFrame, tasks: Mapping[str, Mapping], doc_index: Mapping[bool, object],
                  ladder: pd.DataFrame, n: int = NOVELTY_N,
                  counts: pd.DataFrame | None = None) -> pd.DataFrame:
    """Novelty of each model's answers per task: the share of (input n-gram,
    generated n-gram) pairs that never co-occur in a corpus document
    (:func:`novelty_counts`, or ``counts`` when given). Columns ``model, params, task,
    novelty, pairs``; NaN novelty with 0 pairs when the answers give none."""
    counts = novelty_counts(answers, tasks, doc_index, ladder, n) if counts is None else counts
    summed = counts.groupby(["model", "task"])[["novel", "pairs"]].sum()
    rows = []
    for m, params in zip(ladder["model"], ladder["params"]):
        for task in tasks:
            novel, pairs = summed.loc[(m, task)] if (m, task) in summed.index else (0, 0)
            rows.append({"model": m, "params": params, "task": task,
                         "novelty": novel / pairs if pairs else np.nan, "pairs": int(pairs)})
    return pd.DataFrame(rows)


def by_model(frame: pd.DataFrame, value: str, models: Sequence[str],
             index: Sequence[str] = ("task", "n", "lm")) -> pd.DataFrame:
    """``value`` of a long table (:func:`mem_table`, :func:`sensitivity_table`) as
    one row per ``index`` (in order of first appearance, undefined rows kept) and one
    column per model (in ``models``' order)."""
    wide = frame.pivot_table(index=list(index), columns="model", values=value, aggfunc="first", dropna=False)
    keys = frame[list(index)].drop_duplicates()
    rows = pd.MultiIndex.from_frame(keys) if len(index) > 1 else pd.Index(keys[index[0]])
    return wide.reindex(index=rows, columns=list(models))

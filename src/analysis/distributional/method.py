"""Distributional memorization, the source's equations: pure functions over arrays.

The source compares two distributions over the n-gram pairs ``(x, y)`` of a task,
where ``x`` is an n-gram of the input and ``y`` one of the output:

* the **task-gram LM**, ``P(y | x) = C(x, y) / C(x)`` from corpus counts
  (:mod:`analysis.ngrams` computes them; :func:`task_table` builds a task's test pairs);
* the **LLM's probability** of ``y`` in context, by the chain rule over its tokens
  (:func:`analysis.distributional.run.ngram_logprob`), with the n-gram continuing its
  context as :func:`continuation` spells it and the context from :func:`pair_contexts`.

**Distributional memorization** ``Mem_n`` (:func:`mem_spearman`) is the Spearman
correlation between ``-log P_taskgram`` and ``-log P_LLM`` over a task's pairs
(``Mem_∞`` uses ∞-gram probabilities instead). A task whose correlation is not
significant is compared with the Kendall tau distance (:func:`kendall_distance`).
Novelty (:func:`novelty`) is the share of a model's generated pairs that never
co-occur in the corpus, and task performance is read against bins of pair counts
(:func:`performance_by_count`).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import ConstantInputWarning, fisher_exact

from analysis import ngrams
from analysis.core.text import answer_form
from analysis.distributional.params import CONSTANT_NOTE, DistributionalError
from analysis.stats import ranks
from analysis.stats.intervals import wilson_interval
from analysis.stats.result import Estimate, StatsError

# ---------------------------------------------------------------------------
# The LLM side: the n-gram in its context
# ---------------------------------------------------------------------------


def continuation(context: str, ngram: str) -> str:
    """The n-gram as it continues ``context``: with a leading space unless the
    context is empty or ends in whitespace, so it tokenizes as inside a text."""
    return ngram if (not context or context[-1].isspace()) else " " + ngram


def _locate(text: str, words: Sequence[str]) -> list[tuple[int, int]] | None:
    """Character spans of ``words`` found in order in ``text`` (case-insensitive, each
    searched after the previous one), or None when one is not found."""
    low, cursor, spans = text.lower(), 0, []
    for w in words:
        pos = low.find(str(w).lower(), cursor)
        if pos < 0:
            return None
        spans.append((pos, pos + len(w)))
        cursor = pos + len(w)
    return spans


def ngram_segments(output: str, words: Sequence[str]) -> list[tuple[int, int]] | None:
    """Where an output n-gram's words stand in the output: the character spans of its
    runs of adjacent words (words separated only by whitespace join one run). One span
    when the n-gram is contiguous in the output; several when stopwords (dropped before
    the n-gram was formed) or other words stand between its words; None when its words
    are not found in order (a tokenizer's rewriting, such as ````` `` `````)."""
    text = " ".join(words)
    pos = output.lower().find(text.lower())
    if pos >= 0:
        return [(pos, pos + len(text))]
    spans = _locate(output, words)
    if spans is None:
        return None
    runs = [list(spans[0])]
    for a, b in spans[1:]:
        if output[runs[-1][1]:a].strip():
            runs.append([a, b])
        else:
            runs[-1][1] = b
    return [(a, b) for a, b in runs]


def _context(prompt: str, output: str, start: int) -> str:
    return (prompt + " " + output[:start]).rstrip() if start else prompt


def pair_contexts(table: pd.DataFrame, prompts: Sequence[str], outputs: Sequence[str]
                  ) -> tuple[list, list]:
    """Context and n-gram text of each pair, for the probability of ``y`` in context.

    The context is the instance's prompt followed by its output up to the place the
    n-gram's words stand (:func:`ngram_segments`, case-insensitive); the n-gram text is
    those words as the output spells them. An n-gram whose words are **not contiguous**
    in the output (stopwords were dropped between them) is scored where its words
    stand: its context and text are tuples, one per run of adjacent words, each run in
    the context of the prompt and the output before it, so its log-probability is the
    sum over its own tokens under teacher forcing, the words between them given, not
    scored (the authors' summed NLL of the n-gram's tokens in context). An n-gram whose
    words are not found in order is scored right after the prompt, in its words.
    """
    contexts, grams = [], []
    for i, y in zip(table["instance"], table["y"]):
        prompt, out = prompts[int(i)], outputs[int(i)]
        segs = ngram_segments(out, y)
        if segs is None:
            contexts.append(prompt)
            grams.append(" ".join(y))
        elif len(segs) == 1:
            a, b = segs[0]
            contexts.append(_context(prompt, out, a))
            grams.append(out[a:b])
        else:
            contexts.append(tuple(_context(prompt, out, a) for a, _ in segs))
            grams.append(tuple(out[a:b] for a, b in segs))
    return contexts, grams


def noncontiguous_share(grams: Sequence) -> float:
    """Share of the pairs of :func:`pair_contexts` whose n-gram is scored in several runs
    (not contiguous in the output); NaN for none."""
    return float(np.mean([isinstance(g, tuple) for g in grams])) if len(grams) else np.nan


def flat_segments(contexts: Sequence, grams: Sequence) -> tuple[list[str], list[str], np.ndarray]:
    """The (context, text) runs of :func:`pair_contexts`' pairs, flattened, with the pair
    each run belongs to: a pair's log-probability is the sum over its runs."""
    flat_c, flat_g, owner = [], [], []
    for k, (c, g) in enumerate(zip(contexts, grams)):
        cs, gs = (c, g) if isinstance(g, tuple) else ((c,), (g,))
        if len(cs) != len(gs):
            raise DistributionalError(f"pair {k}: {len(cs)} contexts for {len(gs)} runs")
        flat_c += list(cs)
        flat_g += list(gs)
        owner += [k] * len(gs)
    return flat_c, flat_g, np.asarray(owner, dtype=int)


# ---------------------------------------------------------------------------
# Memorization metrics
# ---------------------------------------------------------------------------


def mem_spearman(p_taskgram, logp_llm) -> Estimate:
    """``Mem_n``: Spearman correlation of ``-log P_taskgram`` and ``-log P_LLM``.

    ``p_taskgram`` are probabilities (``C(x, y) / C(x)``, in (0, 1]); pairs whose
    task-gram probability is 0 or undefined are left out (their log is not
    finite), as are non-finite LLM log-probabilities. ``logp_llm`` are natural
    logs, as :func:`analysis.distributional.run.ngram_logprob` returns them.
    Returns ρ as ``value`` with its p-value ``p`` and the ``n`` pairs used
    (:func:`analysis.stats.ranks.spearman`).
    """
    p = np.asarray(p_taskgram, dtype=float)
    if (p[np.isfinite(p)] < 0).any() or (p[np.isfinite(p)] > 1).any():
        raise DistributionalError("p_taskgram must hold probabilities in [0, 1]")
    with np.errstate(divide="ignore"):
        x = -np.log(p)
    try:
        return ranks.spearman(x, -np.asarray(logp_llm, dtype=float), "Mem_n")
    except StatsError as err:
        raise DistributionalError(str(err)) from err


def kendall_distance(a, b) -> Estimate:
    """Normalized Kendall tau distance between two rankings, ``(1 - τ_b) / 2``
    (:func:`analysis.stats.ranks.kendall_distance`): 0 for the same order, 1 for the
    reverse, 0.5 for unrelated orders, with the p-value of τ_b = 0."""
    try:
        return ranks.kendall_distance(a, b)
    except StatsError as err:
        raise DistributionalError(str(err)) from err


def spearman_row(p, logp_llm) -> dict:
    """:func:`mem_spearman` as a table row: ``rho``, ``pvalue``, ``pairs`` and a
    ``note``: NaN ρ and the reason when fewer than three usable pairs are left, or
    when one side is constant over the pairs (:data:`CONSTANT_NOTE`)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConstantInputWarning)
            c = mem_spearman(p, logp_llm)
    except DistributionalError as err:
        return {"rho": np.nan, "pvalue": np.nan, "pairs": len(np.asarray(p)), "note": str(err)}
    return {"rho": c.value, "pvalue": c.p, "pairs": c.n, "note": CONSTANT_NOTE if np.isnan(c.value) else ""}


def corpus_lms(table: pd.DataFrame, log_inf) -> dict[str, np.ndarray]:
    """The three corpus-side probabilities of a table's pairs
    (:data:`~analysis.distributional.params.CORPUS_LMS`): ``P_{n,D}``
    (``p_taskgram``), ``P_∞`` (``exp`` of ``log_inf``) and the pair count scaled
    into (0, 1], whose ranks are those of ``C((x, y))``."""
    c_xy = table["c_xy"].to_numpy(dtype=float)
    return {"task-gram": table["p_taskgram"].to_numpy(dtype=float),
            "∞-gram": np.exp(np.asarray(log_inf, dtype=float)), "pair count": c_xy / c_xy.max()}


def tied_share(table: pd.DataFrame | None) -> float:
    """Share of a task-gram table's test pairs with ``P_{n,D}(s^y | s^x) = 1``
    (``C(s^x) = C((s^x, s^y))``), which the rank correlation cannot order; NaN for
    no table (None) or an empty one."""
    if table is None or not len(table):
        return np.nan
    return float((table["p_taskgram"].to_numpy(dtype=float) == 1).mean())


def size_trend(params, values) -> float:
    """Spearman ρ between model size and a measure over the models; NaN with fewer
    than three finite values or a constant measure
    (:func:`analysis.stats.ranks.rank_trend`)."""
    return ranks.rank_trend(params, values).value


def novelty(pair_counts) -> float:
    """Share of generated n-gram pairs that never co-occur in the corpus
    (``C(x, y) == 0``)."""
    c = np.asarray(pair_counts, dtype=float)
    if c.size == 0:
        raise DistributionalError("novelty needs at least one generated pair")
    if np.isnan(c).any() or (c < 0).any():
        raise DistributionalError("pair_counts must be non-negative counts without NaN")
    return float(np.mean(c == 0))


def performance_by_count(correct, pair_count, edges: Sequence[float]) -> pd.DataFrame:
    """Task accuracy within bins of n-gram pair count.

    Parameters
    ----------
    correct
        0/1 per task instance.
    pair_count
        The instance's pair count (for example the largest ``C(x, y)`` over its pairs).
    edges
        Increasing bin edges; bins are ``[edges[k], edges[k+1])``, the last one closed.

    Returns
    -------
    pandas.DataFrame
        ``lo``, ``hi``, ``n`` (instances in the bin), ``accuracy`` and its Wilson
        95% interval ``ci_lo``, ``ci_hi`` (statsmodels); empty bins have NaN accuracy.
    """
    y = np.asarray(correct, dtype=float)
    c = np.asarray(pair_count, dtype=float)
    e = np.asarray(edges, dtype=float)
    if y.shape != c.shape:
        raise DistributionalError(
            f"correct and pair_count must have the same length, got {y.shape} and {c.shape}"
        )
    if e.ndim != 1 or len(e) < 2 or not np.all(np.diff(e) > 0):
        raise DistributionalError(f"edges must be at least two increasing numbers, got {list(edges)}")
    if not np.isin(y, (0, 1)).all():
        raise DistributionalError("correct must hold 0/1 values")
    rows = []
    for k in range(len(e) - 1):
        last = k == len(e) - 2
        inside = (c >= e[k]) & ((c <= e[k + 1]) if last else (c < e[k + 1]))
        n = int(inside.sum())
        hits = int(y[inside].sum())
        lo, hi = (float(v) for v in wilson_interval(hits, n)) if n else (np.nan, np.nan)
        rows.append({"lo": e[k], "hi": e[k + 1], "n": n, "accuracy": hits / n if n else np.nan,
                     "ci_lo": lo, "ci_hi": hi})
    return pd.DataFrame(rows)


def recall_gap(hits_a: int, n_a: int, hits_b: int, n_b: int) -> Estimate:
    """How much more often group a is right than group b: ``hits_a / n_a −
    hits_b / n_b``, with the two-sided p-value of Fisher's exact test on the 2×2
    table (``scipy.stats.fisher_exact``) and ``n = n_a + n_b``; NaN when a group
    is empty."""
    hits_a, n_a, hits_b, n_b = int(hits_a), int(n_a), int(hits_b), int(n_b)
    if not (0 <= hits_a <= n_a and 0 <= hits_b <= n_b):
        raise DistributionalError(f"hits must lie in 0..n, got {hits_a}/{n_a} and {hits_b}/{n_b}")
    if not n_a or not n_b:
        return Estimate(np.nan, n=n_a + n_b, method="Fisher's exact test")
    p = fisher_exact([[hits_a, n_a - hits_a], [hits_b, n_b - hits_b]]).pvalue
    return Estimate(hits_a / n_a - hits_b / n_b, p=float(p), n=n_a + n_b, method="Fisher's exact test")


# ---------------------------------------------------------------------------
# A task's test pairs
# ---------------------------------------------------------------------------


def task_table(inputs: Sequence[str], outputs: Sequence[str], n: int, doc_index, gamma=None,
               max_pairs: int | None = None, seed: int = 0) -> pd.DataFrame:
    """The test pairs Φ of a task: candidate pairs, filtered, that co-occur in the corpus.

    Candidate pairs come from :func:`analysis.ngrams.task_gram_pairs`; the
    embedding filter keeps those with cosine above ``gamma``
    (:func:`analysis.ngrams.cosine_keep`: a number, a per-n mapping or None for
    no filter); :func:`analysis.ngrams.count_pairs` adds ``c_x``, ``c_y``,
    ``c_xy`` and ``p_taskgram`` from ``doc_index``; pairs with ``c_xy = 0``
    are dropped (the task-gram LM gives them probability 0). With
    ``max_pairs``, a seeded uniform sample of that many pairs is kept (rows in
    table order), so a task with long outputs stays affordable.

    Raises
    ------
    DistributionalError
        When no pair is left (after the filter, or after the co-occurrence
        requirement), naming the step.
    """
    try:
        pairs = ngrams.task_gram_pairs(inputs, outputs, n, keep=lambda t: ngrams.cosine_keep(t, gamma))
    except ngrams.NgramError as err:
        raise DistributionalError(str(err)) from err
    return cooccurring(ngrams.count_pairs(pairs, doc_index), max_pairs, seed)


def cooccurring(counted: pd.DataFrame, max_pairs: int | None = None, seed: int = 0) -> pd.DataFrame:
    """The rows of a counted pair table (:func:`analysis.ngrams.count_pairs`) with
    ``c_xy > 0``, optionally a seeded sample of ``max_pairs`` of them in table order:
    the last step of :func:`task_table`, for callers that keep the candidates too."""
    kept = counted[counted["c_xy"] > 0]
    if kept.empty:
        raise DistributionalError(
            f"empty task-gram table: none of the {len(counted)} filtered "
            f"{counted.attrs.get('n', '')}-gram pairs co-occurs in the corpus")
    if max_pairs is not None and len(kept) > max_pairs:
        kept = kept.sample(int(max_pairs), random_state=seed).sort_index()
    out = kept.reset_index(drop=True)
    out.attrs.update(counted.attrs, candidates=len(counted))
    return out


def instance_pair_counts(table: pd.DataFrame, n_instances: int) -> np.ndarray:
    """Per task instance, the summed ``c_xy`` of its pairs in the table (0 for none):
    the x-axis of the performance-against-count figure."""
    out = np.zeros(int(n_instances), dtype=np.int64)
    np.add.at(out, table["instance"].to_numpy(int), table["c_xy"].to_numpy(np.int64))
    return out


# ---------------------------------------------------------------------------
# Scoring an answer
# ---------------------------------------------------------------------------

_NUMBER = re.compile(r"-?\d[\d,]*")


def answer_correct(generated: str | None, answer: str) -> bool:
    """Whether a knowledge answer is right: the continuation, lower-cased and with
    punctuation and surrounding space stripped, starts with the answer treated the
    same way. A missing generation (an error) is never right."""
    if generated is None:
        return False
    want = answer_form(answer)
    got = answer_form(generated)
    return bool(want) and got.startswith(want)


def final_number(generated: str | None) -> int | None:
    """The final answer of a worked solution: the number after the first ``####``,
    else the last number in the text; None if there is none."""
    if not generated:
        return None
    text = generated.split("####", 1)[1] if "####" in generated else generated
    found = _NUMBER.findall(text)
    if not found:
        return None
    pick = found[0] if "####" in generated else found[-1]
    try:
        return int(pick.replace(",", ""))
    except ValueError:
        return None


def noncontiguous_shares(inputs) -> tuple[dict[tuple, float], float]:
    """Per (task, n) of :func:`~analysis.distributional.method_tables.pair_inputs`, the
    share of pairs whose n-gram is not contiguous in the output
    (:func:`noncontiguous_share`), and the share over every pair of every (task, n)."""
    shares = {k: noncontiguous_share(g) for k, (_c, g) in inputs.items()}
    every = [isinstance(x, tuple) for _c, g in inputs.values() for x in g]
    return shares, (float(np.mean(every)) if every else np.nan)

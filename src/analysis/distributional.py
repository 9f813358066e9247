"""Distributional memorization: does a model's output probability track pretraining counts?

The source (a summary and critique of "Generalization v.s. Memorization: tracing
language models' capabilities back to pretraining data") compares two
distributions over the n-gram pairs ``(x, y)`` of a task, where ``x`` is an
n-gram of the input and ``y`` one of the output:

* the **task-gram LM**, ``P(y | x) = C(x, y) / C(x)`` from corpus counts
  (:mod:`analysis.ngrams` computes them);
* the **LLM's probability** of ``y`` in context, by the chain rule over its
  tokens: the authors' code sums the NLL of the n-gram's tokens given the text
  before it (:func:`ngram_logprob`).

**Distributional memorization** ``Mem_n`` is the Spearman correlation between
``-log P_taskgram`` and ``-log P_LLM`` over a task's pairs (``Mem_∞`` uses
∞-gram probabilities instead of the task-gram LM). A task whose correlation is
not significant is compared with the Kendall tau distance instead. Novelty is the
share of a model's generated pairs that never co-occur in the corpus, and task
performance is read against bins of pair counts.

Pure functions over arrays and the shared model interface; no plotting.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd


class DistributionalError(ValueError):
    """Bad input to the distributional chapter's computations, raised before any work."""


# ---------------------------------------------------------------------------
# The LLM side: chain-rule probability of an n-gram in context
# ---------------------------------------------------------------------------


def ngram_logprob(model, contexts: Sequence[str], ngrams: Sequence[str], progress: bool | str = False
                  ) -> np.ndarray:
    """``log P_LLM(y | context)`` for each n-gram ``y``, by the chain rule.

    The log-probability of each of the n-gram's tokens given the context and
    the n-gram's earlier tokens is summed (teacher forcing through
    :meth:`analysis.models.Model.logprobs`, batched and cached). The
    continuation is the n-gram's text with a leading space when the context
    does not end in whitespace, so it tokenizes as it does inside a text.

    Returns
    -------
    numpy.ndarray
        One natural-log probability per n-gram (``≤ 0``).
    """
    if len(contexts) != len(ngrams):
        raise DistributionalError(
            f"contexts and ngrams must have the same length, got {len(contexts)} and {len(ngrams)}"
        )
    empty = [i for i, g in enumerate(ngrams) if not str(g).strip()]
    if empty:
        raise DistributionalError(f"ngrams must be non-empty strings; empty at positions {empty[:5]}")
    continuations = [g if (not c or c[-1].isspace()) else " " + g for c, g in zip(contexts, ngrams)]
    lps = model.logprobs(list(contexts), continuations, progress=progress)
    return np.array([float(np.sum(lp)) for lp in lps])


# ---------------------------------------------------------------------------
# Memorization metrics
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Correlation:
    """A rank correlation with its p-value and the number of pairs it used."""

    statistic: float
    pvalue: float
    n: int


def _finite_pairs(a, b, what: str) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise DistributionalError(f"{what}: the two arrays must be 1-d and of the same length, "
                                  f"got shapes {a.shape} and {b.shape}")
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 3:
        raise DistributionalError(f"{what} needs at least 3 pairs with finite values, got {int(ok.sum())}")
    return a[ok], b[ok]


def mem_spearman(p_taskgram, logp_llm) -> Correlation:
    """``Mem_n``: Spearman correlation of ``-log P_taskgram`` and ``-log P_LLM``.

    ``p_taskgram`` are probabilities (``C(x, y) / C(x)``, in (0, 1]); pairs whose
    task-gram probability is 0 or undefined are left out (their log is not
    finite), as are non-finite LLM log-probabilities. ``logp_llm`` are natural
    logs, as :func:`ngram_logprob` returns them. Uses ``scipy.stats.spearmanr``.
    """
    from scipy.stats import spearmanr

    p = np.asarray(p_taskgram, dtype=float)
    if (p[np.isfinite(p)] < 0).any() or (p[np.isfinite(p)] > 1).any():
        raise DistributionalError("p_taskgram must hold probabilities in [0, 1]")
    with np.errstate(divide="ignore"):
        x = -np.log(p)
    x, y = _finite_pairs(x, -np.asarray(logp_llm, dtype=float), "Mem_n")
    res = spearmanr(x, y)
    return Correlation(float(res.statistic), float(res.pvalue), len(x))


def kendall_distance(a, b) -> Correlation:
    """Normalized Kendall tau distance between two rankings, ``(1 - τ_b) / 2``:
    0 for the same order, 1 for the reverse, 0.5 for unrelated orders. The
    p-value is that of ``scipy.stats.kendalltau`` for τ_b = 0."""
    from scipy.stats import kendalltau

    a, b = _finite_pairs(a, b, "Kendall tau distance")
    res = kendalltau(a, b)
    return Correlation(float((1 - res.statistic) / 2), float(res.pvalue), len(a))


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
    from statsmodels.stats.proportion import proportion_confint

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
        lo, hi = proportion_confint(hits, n, method="wilson") if n else (np.nan, np.nan)
        rows.append({"lo": e[k], "hi": e[k + 1], "n": n, "accuracy": hits / n if n else np.nan,
                     "ci_lo": lo, "ci_hi": hi})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------
# The lab's two tasks
# ---------------------------------------------------------------------------


def knowledge_task(corpus) -> pd.DataFrame:
    """The knowledge task: every TriviaQA fact the lab corpus states.

    Each fact is in the corpus as one document rendered with one of the lab's
    fact templates and repeated ``copies`` times (Zipfian, 1 to 32). The task
    prompt is that template cut just before the answer, so a model is asked in
    the words it was trained on.

    Returns
    -------
    pandas.DataFrame
        ``question_id``, ``question``, ``answer``, ``copies``, ``template``,
        ``prompt`` and ``doc_id``, one row per fact.
    """
    from analysis.lab.corpus import FACT_TEMPLATES, _norm

    rows = []
    for d in corpus.documents:
        if d.kind != "knowledge":
            continue
        template = FACT_TEMPLATES[int(d.meta["template"])]
        head = template.split("{answer}")[0]
        prompt = _norm(head.format(question=d.meta["question"]))
        if not d.text.startswith(prompt):
            raise DistributionalError(f"{d.doc_id}: the prompt {prompt!r} does not start the document")
        rows.append({"question_id": int(d.meta["question_id"]), "question": d.meta["question"],
                     "answer": d.meta["answer"], "copies": int(d.copies), "template": int(d.meta["template"]),
                     "prompt": prompt, "doc_id": d.doc_id})
    if not rows:
        raise DistributionalError("the corpus has no knowledge documents (n_facts = 0?)")
    return pd.DataFrame(rows)


def reasoning_task(corpus, n: int, seed: int = 0) -> pd.DataFrame:
    """The reasoning task: ``n`` fresh arithmetic word problems.

    They come from the same nine templates as the corpus's worked problems but
    with new numbers drawn from an independent seeded stream; a problem whose
    question the corpus holds is redrawn. The prompt is the question.

    Returns
    -------
    pandas.DataFrame
        ``question``, ``answer`` (an integer), ``template``, ``solution`` (the
        worked steps, for the pair table's output side) and ``prompt``.
    """
    from analysis.lab.corpus import N_PROBLEM_TEMPLATES, _norm, _problem, _rng

    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise DistributionalError(f"n must be a positive integer, got {n!r}")
    seen = {d.meta["question"] for d in corpus.documents if d.kind == "reasoning"}
    rng = _rng(seed, "distributional-reasoning-test")
    rows, tries = [], 0
    while len(rows) < n:
        tries += 1
        if tries > 50 * n + 1000:
            raise DistributionalError(f"n = {n}: could not draw that many distinct new problems")
        kind = int(rng.integers(N_PROBLEM_TEMPLATES))
        question, steps, answer, _numbers = _problem(kind, rng)
        question = _norm(question)
        if question in seen:
            continue
        seen.add(question)
        rows.append({"question": question, "answer": int(answer), "template": kind,
                     "solution": _norm(" ".join([*steps, f"#### {answer}"])), "prompt": question})
    return pd.DataFrame(rows)


_NUMBER = re.compile(r"-?\d[\d,]*")


def answer_correct(generated: str | None, answer: str) -> bool:
    """Whether a knowledge answer is right: the continuation, lower-cased and with
    punctuation and surrounding space stripped, starts with the answer treated the
    same way. A missing generation (an error) is never right."""
    import string

    if generated is None:
        return False
    table = str.maketrans("", "", string.punctuation)
    want = " ".join(str(answer).lower().translate(table).split())
    got = " ".join(generated.lower().translate(table).split())
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

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

from analysis.params import Declaration, Param


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
    continuations = [_continuation(c, g) for c, g in zip(contexts, ngrams)]
    lps = model.logprobs(list(contexts), continuations, progress=progress)
    return np.array([float(np.sum(lp)) for lp in lps])


def _continuation(context: str, ngram: str) -> str:
    """The n-gram as it continues ``context``: with a leading space unless the
    context is empty or ends in whitespace, so it tokenizes as inside a text."""
    return ngram if (not context or context[-1].isspace()) else " " + ngram


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
# From a task to its pair table, both LMs' probabilities and Mem
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
    from analysis import ngrams

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


def pair_contexts(table: pd.DataFrame, prompts: Sequence[str], outputs: Sequence[str]
                  ) -> tuple[list[str], list[str]]:
    """Context and n-gram text of each pair, for the probability of ``y`` in context.

    The context is the instance's prompt followed by its output up to the first
    place the n-gram's words appear (case-insensitive); the n-gram text is those
    words as the output spells them. An n-gram whose words are not contiguous in
    the output (stopwords were dropped between them) is scored right after the
    prompt, in the words of the n-gram.
    """
    contexts, grams = [], []
    for i, y in zip(table["instance"], table["y"]):
        prompt, out = prompts[int(i)], outputs[int(i)]
        text = " ".join(y)
        pos = out.lower().find(text.lower())
        if pos >= 0:
            contexts.append((prompt + " " + out[:pos]).rstrip() if pos else prompt)
            grams.append(out[pos : pos + len(text)])
        else:
            contexts.append(prompt)
            grams.append(text)
    return contexts, grams


def infgram_logprobs(index, tokenizer, contexts: Sequence[str], grams: Sequence[str]) -> np.ndarray:
    """``log P_∞(y | context)`` of each n-gram by the chain rule over the lab index
    (:func:`analysis.ngrams.infgram_logprob`); texts tokenized as
    :func:`ngram_logprob` does (a leading space before the n-gram)."""
    from analysis import ngrams

    out = np.empty(len(grams))
    for k, (c, g) in enumerate(zip(contexts, grams)):
        ctx = tokenizer(c, add_special_tokens=False)["input_ids"]
        tgt = tokenizer(_continuation(c, g), add_special_tokens=False)["input_ids"]
        out[k] = ngrams.infgram_logprob(index, ctx, tgt)
    return out


def count_pairs_api(table: pd.DataFrame, api) -> pd.DataFrame:
    """``table`` with ``c_x``, ``c_xy`` and ``p_taskgram`` from the public infini-gram API.

    The real-data path (Pythia and the Pile): ``api`` is an
    :class:`analysis.ngrams.InfiniGramAPI` on :data:`analysis.ngrams.PILE_INDEX`.
    ``c_x`` counts the input n-gram's occurrences and ``c_xy`` the documents
    holding both n-grams (the API's CNF count), the closest the API comes to the
    source's WIMBD document counts; every response is cached and an API error
    raises, never counted as 0.
    """
    from analysis import ngrams

    out = table.copy()
    xs = [" ".join(x) for x in out["x"]]
    ys = [" ".join(y) for y in out["y"]]
    out["c_x"] = [api.count(x) for x in xs]
    out["c_xy"] = [api.pair_count(x, y) for x, y in zip(xs, ys)]
    out["p_taskgram"] = ngrams.conditional(out["c_xy"], out["c_x"])
    return out


def instance_pair_counts(table: pd.DataFrame, n_instances: int) -> np.ndarray:
    """Per task instance, the summed ``c_xy`` of its pairs in the table (0 for none):
    the x-axis of the performance-against-count figure."""
    out = np.zeros(int(n_instances), dtype=np.int64)
    np.add.at(out, table["instance"].to_numpy(int), table["c_xy"].to_numpy(np.int64))
    return out


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


# ---------------------------------------------------------------------------
# The chapter's settings
# ---------------------------------------------------------------------------

#: the thresholds the chapter applies as "the paper's": TriviaQA's for the knowledge
#: task, with a 2-gram value the paper does not give (0.80, continuing its step of
#: 0.05 per n); the reasoning task takes the same values (the paper gives none for GSM8K)
CHAPTER_THRESHOLDS = {
    "knowledge": {2: 0.80, 3: 0.75, 5: 0.65},
    "reasoning": {2: 0.80, 3: 0.75, 5: 0.65},
}

#: the chapter's profiles. ``lab_models``: lab runs of the ladder (None = all of the
#: profile's ladder); ``max_pairs``: a seeded sample of at most this many test
#: pairs per (task, n); ``count_n``: the n whose pair counts bin the instances
#: (the paper's Figure 3 uses 5 for TriviaQA); ``reasoning_tokens``: new tokens of a
#: reasoning answer (80: the longest lab prompt, 39 tokens, plus 80 fits the 128-token context)
PROFILES = {
    "smoke": dict(lab_profile="smoke", lab_models=None, ngram_sizes=(2, 3, 5), n_reasoning=12, max_pairs=300,
                  count_n=5, reasoning_tokens=48, seed=0),
    "default": dict(lab_profile="default", lab_models=None, ngram_sizes=(2, 3, 5), n_reasoning=100,
                    max_pairs=2000, count_n=5, reasoning_tokens=80, seed=0),
    # every test pair and four times the reasoning problems (Pythia and the Pile, the
    # paper's own setting, need the network: see the chapter's real-data section)
    "paper": dict(lab_profile="default", lab_models=None, ngram_sizes=(2, 3, 5), n_reasoning=400,
                  max_pairs=None, count_n=5, reasoning_tokens=80, seed=0),
}


def load_paper_claims() -> pd.DataFrame:
    """The paper's claims the chapter sets beside the lab's results
    (``data/distributional_claims.csv``; see its note for the source)."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "data" / "distributional_claims.csv"
    return pd.read_csv(path, comment="#")


def _check_lab_models(value, settings):
    from analysis.lab.ladder import check_runs

    if value is not None:
        check_runs("lab_models", value, settings["lab_profile"], family="ladder", at_least=2)


PARAMS = Declaration(
    "distributional",
    PROFILES,
    (
        Param("lab_models", "lab ladder runs to compare (default: the whole ladder)", kind="names",
              nullable=True, check=_check_lab_models),
        Param("n_reasoning", "fresh arithmetic problems in the reasoning task", kind="int", lo=1),
        Param("max_pairs", "test pairs per (task, n), a seeded sample (None: all)", kind="int", lo=1,
              nullable=True),
        Param("seed", "seed of the samples", kind="int", lo=0),
    ),
    profile_help={"smoke": "the smoke lab (CI)", "default": "the book's lab, 2,000 pairs per (task, n)",
                  "paper": "the book's lab, every test pair, 400 reasoning problems"},
)

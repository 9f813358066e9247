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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.core.fmt import fmt_pct
from analysis.core.paths import DATA_DIR
from analysis.lab.ladder import lab_profile_param
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


#: the knowledge task's prompt: the source's instruction ("Answer the following
#: question:") before the question and a minimal output cue after it, a wording no
#: training document holds (:func:`knowledge_task` checks it)
KNOWLEDGE_PROMPT = "Answer the following question: {question} Answer:"


def knowledge_task(corpus) -> pd.DataFrame:
    """The knowledge task: every TriviaQA fact the lab corpus states.

    Each fact is stated in ``copies`` training documents (Zipfian, the question
    followed by the answer in one of the lab's fact templates) and its question
    is listed without the answer in ``mentions`` quiz rounds. The task prompt is
    :data:`KNOWLEDGE_PROMPT` around the question, worded unlike every training
    document, as the source asks Pythia with its own instruction.

    Returns
    -------
    pandas.DataFrame
        ``question_id``, ``question``, ``answer``, ``copies`` (training
        documents, counting copies, that state the fact), ``mentions`` (quiz
        rounds that list the question without its answer) and ``prompt``, one
        row per fact, in corpus order.

    Raises
    ------
    DistributionalError
        No knowledge documents, or a prompt that occurs in a training document.
    """
    from analysis.lab.corpus import _norm

    facts: dict[int, dict] = {}
    for d in corpus.documents:
        if d.kind != "knowledge" or d.meta.get("role", "fact") != "fact":
            continue
        qid = int(d.meta["question_id"])
        row = facts.setdefault(qid, {
            "question_id": qid, "question": d.meta["question"], "answer": d.meta["answer"], "copies": 0,
            "mentions": int(d.meta.get("mentions", 0)),
            "prompt": _norm(KNOWLEDGE_PROMPT.format(question=d.meta["question"]))})
        row["copies"] += int(d.copies)
    if not facts:
        raise DistributionalError("the corpus has no knowledge documents (n_facts = 0?)")
    stream = "\n".join(d.text for d in corpus.documents)
    trained = [r["prompt"] for r in facts.values() if r["prompt"] in stream]
    if trained:
        raise DistributionalError(f"the knowledge prompt {trained[0]!r} occurs in a training document")
    return pd.DataFrame(list(facts.values()))


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
# The chapter's steps (notebooks/distributional.md): tables of the whole ladder
# ---------------------------------------------------------------------------

#: the source's models, as its summary names them
SOURCE_MODELS = "Pythia 70M–12B"
#: where E5's cosines cluster, as its model card states it (why the same γ is not the
#: same filter with MiniLM)
E5_COSINE_RANGE = (0.7, 1.0)
#: new tokens of a knowledge answer (the lab's answers are a few words)
KNOWLEDGE_TOKENS = 12
#: the n of the novelty measure
NOVELTY_N = 3
#: bins of equal size in the performance-against-count figure (the source's has five)
N_COUNT_BINS = 5
#: edges of the copies bins of the accuracy-by-copies table (the default lab's facts
#: have 1 to 256 copies; a larger count widens the last bin)
COPIES_EDGES = (0, 1, 4, 16, 64, 256)
#: significance level of every Spearman and Kendall test (the source's p < 0.05)
ALPHA = 0.05
#: |Spearman ρ| between model size and a measure at or above which the measure
#: "rises" or "falls" with size
TREND_MIN = 0.5
#: share of tied pairs, or of models, above which the chapter says "most"
MOST = 0.5
#: largest |Mem_n| the chapter calls "near zero"
NEAR_ZERO = 0.1
#: share of candidates at or above which a filter keeps "nearly every" pair
NEARLY_ALL = 0.95
#: the three filters of the task-gram tables, by label
PAPER_FILTER, AUTHORS_FILTER, NONE_FILTER = "paper (as applied here)", "authors' code", "no filter"
#: the corpus LMs set against the models: the task-gram LM (Mem_n), the ∞-gram LM
#: (Mem_∞) and the pair count C((x, y)) (a variant beyond the paper)
CORPUS_LMS = ("task-gram", "∞-gram", "pair count")
#: the source study's setting of each parameter, for the chapter's Setup table
SOURCE_SETUP = {"lab_models": SOURCE_MODELS, "n_reasoning": "the GSM8K test set (1K problems)",
                "max_pairs": "every pair of the task-gram table", "seed": "—"}

_SUB = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def mem_name(n) -> str:
    """``Mem₃`` for n = 3, ``Mem∞`` for the ∞-gram LM: the measure's name in glued prose."""
    return "Mem∞" if n in ("∞", np.inf) else f"Mem{str(n).translate(_SUB)}"


def fmt_params(n: float) -> str:
    """A parameter count for prose: ``24656 -> '25K'``, ``163840 -> '0.16M'``, ``4.07e6 -> '4.1M'``."""
    n = float(n)
    if n < 1e5:
        return f"{n / 1e3:.0f}K"
    return f"{n / 1e6:.2f}M" if n < 1e6 else f"{n / 1e6:.1f}M"


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
    asked), from :func:`knowledge_task` and :func:`reasoning_task`."""
    return {
        "knowledge": {"inputs": list(know["question"]), "outputs": list(know["answer"]),
                      "prompts": list(know["prompt"]), "gold": list(know["answer"])},
        "reasoning": {"inputs": list(reas["question"]), "outputs": list(reas["solution"]),
                      "prompts": list(reas["prompt"]), "gold": list(reas["answer"])},
    }


@dataclass
class CorpusCounts:
    """The corpus's two count structures: exact document counts of every 1- to 5-gram
    under both stopword rules (``doc``, keyed by ``drop_stopwords``) and an
    infini-gram index of the training stream in the lab tokenizer (``infgram``),
    with the seconds each took to build or open."""

    doc: dict
    infgram: object
    seconds_doc: float
    seconds_infgram: float

    def doc_index(self, n: int):
        """The document index with the stopword rule of ``n``-grams (dropped for n ≤ 3)."""
        from analysis import ngrams

        return self.doc[ngrams.default_drop_stopwords(n)]


def count_corpus(corpus, tokenizer, max_n: int = 5) -> CorpusCounts:
    """Index the lab corpus for both corpus LMs: document counts ``C(·)`` of every
    k-gram (k ≤ ``max_n``; documents weighted by their copies, both stopword rules)
    for the task-gram LM, and the infini-gram index of the training stream for the
    ∞-gram LM (built once, then opened from the artifact cache)."""
    import time

    from analysis import ngrams

    t0 = time.time()
    doc = {drop: doc_index(corpus, max_n, drop_stopwords=drop) for drop in (True, False)}
    t1 = time.time()
    infgram = ngrams.open_index(ngrams.build_index(corpus.training_texts(), tokenizer))
    return CorpusCounts(doc, infgram, t1 - t0, time.time() - t1)


def doc_index(corpus, max_n: int = 5, drop_stopwords: bool = True):
    """Document counts ``C(·)`` of every k-gram (k ≤ ``max_n``) of the lab corpus's
    training documents, each weighted by its copies, under one stopword rule: one of
    the two indexes :func:`count_corpus` builds, without the ∞-gram index."""
    from analysis import ngrams

    docs = corpus.documents
    return ngrams.build_doc_index([d.text for d in docs], max_n, drop_stopwords=drop_stopwords,
                                  weights=[d.copies for d in docs])


def knowledge_pairs(corpus, n: int = 3, max_pairs: int | None = None, seed: int = 0) -> pd.DataFrame:
    """The knowledge task's ``n``-gram test pairs Φ with the task-gram LM ``p_taskgram``,
    counted in the lab corpus: the table :func:`task_gram_tables` gives for
    ``("knowledge", n)`` (the same rows, the same seeded sample of ``max_pairs``),
    less its ``cosine`` column, so the embedding model is never loaded. The lab
    page's table of phenomena reads the share of pairs with ``P = 1`` from it
    (:func:`tied_share`)."""
    from analysis import ngrams

    n = ngrams.check_n(n)
    know = knowledge_task(corpus)
    index = doc_index(corpus, n, drop_stopwords=ngrams.default_drop_stopwords(n))
    return task_table(list(know["question"]), list(know["answer"]), n, index, gamma=ngrams.NO_FILTER,
                      max_pairs=max_pairs, seed=seed)


def filter_thresholds(task: str, n: int) -> dict[str, float | None]:
    """The three embedding filters of a (task, n) table, by label: the paper's γ_n as
    the chapter applies it (:data:`CHAPTER_THRESHOLDS`), the authors' code's
    effective γ (:data:`analysis.ngrams.AUTHORS_THRESHOLD`) and no filter."""
    from analysis import ngrams

    return {PAPER_FILTER: CHAPTER_THRESHOLDS[task][n], AUTHORS_FILTER: ngrams.AUTHORS_THRESHOLD,
            NONE_FILTER: ngrams.NO_FILTER}


def filter_rows(counted: pd.DataFrame, thresholds: Mapping[str, float | None], cosines) -> pd.DataFrame:
    """How many candidate pairs each filter keeps, and how many of those co-occur.

    ``counted`` is a candidate table with its counts (:func:`analysis.ngrams.count_pairs`);
    ``cosines`` its :func:`analysis.ngrams.pair_cosines`. Returns
    :func:`analysis.ngrams.filter_summary`'s columns plus ``co-occurring``: the kept
    pairs with ``C((x, y)) > 0``, which are the test pairs Φ under that filter.
    """
    from analysis import ngrams

    summary = ngrams.filter_summary(counted, thresholds, cosines=cosines)
    co = counted["c_xy"].to_numpy() > 0
    summary["co-occurring"] = [int((ngrams.cosine_keep(counted, g, cosines) & co).sum())
                               for g in thresholds.values()]
    return summary


@dataclass
class TaskGrams:
    """The task-gram tables of every (task, n): ``tables[(task, n)]`` holds the test
    pairs Φ (co-occurring, without an embedding filter, with their ``cosine``), and
    ``filters`` what each filter keeps of the candidates. A (task, n) whose
    candidates never co-occur has no table; ``filters`` shows its zero."""

    tables: dict
    filters: pd.DataFrame


def task_gram_tables(tasks: Mapping[str, Mapping], sizes: Sequence[int], doc_index: Mapping[bool, object],
                     max_pairs: int | None = None, seed: int = 0, cosines=None) -> TaskGrams:
    """The task-gram tables (Definition 1) of each task and n in ``sizes``.

    Candidate pairs come from :func:`analysis.ngrams.task_gram_pairs`, are embedded
    once (``cosines``, default :func:`analysis.ngrams.pair_cosines`) and counted in
    ``doc_index`` (keyed by the stopword rule, as :attr:`CorpusCounts.doc`); the
    table keeps every co-occurring pair (the filter the authors' code effectively
    ran), a seeded sample of ``max_pairs`` of them when given (:func:`cooccurring`),
    and records what the paper's and the authors' thresholds would keep
    (:func:`filter_rows`).
    """
    from analysis import ngrams

    embed = ngrams.pair_cosines if cosines is None else cosines
    tables, rows = {}, []
    for task, spec in tasks.items():
        for n in sizes:
            n = ngrams.check_n(n)
            cand = ngrams.task_gram_pairs(spec["inputs"], spec["outputs"], n)
            cos = np.asarray(embed(cand), dtype=float)  # the test pairs are a subset: embed once
            counted = ngrams.count_pairs(cand, doc_index[ngrams.default_drop_stopwords(n)]).assign(cosine=cos)
            rows.append(filter_rows(counted, filter_thresholds(task, n), cos).assign(task=task, n=n))
            if (counted["c_xy"] > 0).any():
                tables[(task, n)] = cooccurring(counted, max_pairs=max_pairs, seed=seed)
    filters = pd.concat(rows, ignore_index=True)[
        ["task", "n", "label", "gamma", "total", "pairs", "co-occurring", "instances"]]
    return TaskGrams(tables, filters)


def filter_counts(filters: pd.DataFrame, task: str, n: int) -> dict[str, int]:
    """For one (task, n) of :attr:`TaskGrams.filters`: ``total`` candidates, the pairs
    the ``paper``'s and the ``authors``' thresholds keep, and the co-occurring pairs
    under the paper's threshold (``paper_co``) and without a filter (``none_co``)."""
    k = filters[(filters["task"] == task) & (filters["n"] == n)].set_index("label")
    if k.empty:
        raise DistributionalError(f"no filter rows for task {task!r}, n = {n}")
    return {"total": int(k["total"].iloc[0]), "paper": int(k.loc[PAPER_FILTER, "pairs"]),
            "authors": int(k.loc[AUTHORS_FILTER, "pairs"]),
            "paper_co": int(k.loc[PAPER_FILTER, "co-occurring"]),
            "none_co": int(k.loc[NONE_FILTER, "co-occurring"])}


def _share(k: int, total: int) -> str:
    return fmt_pct(k / total) if total else "—"


def filter_verdict(counts: Mapping[str, int], label: str) -> str:
    """What the two thresholds do to the candidates of one (task, n) (from
    :func:`filter_counts`): whether the authors' γ keeps every, nearly every
    (≥ :data:`NEARLY_ALL`) or only some candidate, whether the paper's γ drops
    most of them, and how many co-occurring pairs each leaves."""
    total, authors, paper = counts["total"], counts["authors"], counts["paper"]
    if total and authors == total:
        kept = f"keeps every one of the {total:,} candidates of {label}, a filter in name only"
    elif total and authors / total >= NEARLY_ALL:
        kept = f"keeps nearly every candidate of {label} ({authors:,} of {total:,}), a filter in name only"
    else:
        kept = f"keeps {authors:,} of the {total:,} candidates of {label} ({_share(authors, total)})"
    if total and paper / total < MOST:
        stated = (f"the paper's stated threshold keeps {paper:,} ({_share(paper, total)}): most input and "
                  "output n-grams are not similar in MiniLM's embedding space")
    else:
        stated = f"the paper's stated threshold keeps most of them, {paper:,} ({_share(paper, total)})"
    return (f"That threshold {kept}; {stated}. Of the pairs that co-occur in the corpus, "
            f"{counts['paper_co']:,} survive the paper's threshold and {counts['none_co']:,} are kept "
            "without a filter.")


def authors_filter_verdict(counts: Mapping[str, int]) -> str:
    """Whether the authors' code, as run, filtered at all (from :func:`filter_counts`)."""
    total, authors = counts["total"], counts["authors"]
    if total and authors / total >= NEARLY_ALL:
        return (f"The authors' effective threshold keeps {authors:,} of {total:,} candidates: their code ran "
                "without an effective filter, and the chapter's main numbers follow the code.")
    return (f"The authors' effective threshold keeps {authors:,} of {total:,} candidates, so their code did "
            "filter; the chapter's main numbers use every co-occurring pair all the same.")


# -- the models' answers ------------------------------------------------------


def generate_answers(models: Mapping[str, object], tasks: Mapping[str, Mapping], reasoning_tokens: int,
                     knowledge_tokens: int = KNOWLEDGE_TOKENS) -> pd.DataFrame:
    """Every model's greedy continuation of every task prompt (through the book's
    model interface, cached): ``model``, ``task``, ``instance`` and ``answer``
    (None where the request failed; such an answer is an error, never a wrong one)."""
    from analysis.models import GenerationSettings

    budgets = {"knowledge": knowledge_tokens, "reasoning": reasoning_tokens}
    frames = []
    for name, model in models.items():
        for task, spec in tasks.items():
            out = model.complete(spec["prompts"], GenerationSettings(max_new_tokens=budgets[task]),
                                 progress=f"{name}: {task}")
            texts = pd.Series([a.text if a.ok else None for a in out], dtype=object)
            frames.append(pd.DataFrame({"model": name, "task": task, "instance": np.arange(len(out)),
                                        "answer": texts}))
    return pd.concat(frames, ignore_index=True)


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
    in bins of the instance's summed pair count (:func:`instance_pair_counts`,
    binned by :func:`count_bins`), with Wilson intervals
    (:func:`performance_by_count`); errors are left out."""
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


def accuracy_by_copies(scored: pd.DataFrame, copies, ladder: pd.DataFrame) -> pd.DataFrame:
    """Knowledge accuracy per model (rows, ladder order; with ``params``) and per bin
    of the fact's copies in the corpus (columns, :func:`copies_bins`; bins holding no
    fact are left out), errors left out."""
    bins = copies_bins(copies)
    k = scored[(scored["task"] == "knowledge") & scored["correct"].notna()]
    k = k.assign(bin=pd.Categorical(np.asarray(bins)[k["instance"].to_numpy(int)],
                                    categories=bins.categories))
    table = k.pivot_table(index="model", columns="bin", values="correct", aggfunc="mean", observed=True)
    table = table.reindex(index=ladder["model"], columns=[c for c in bins.categories if c in table.columns])
    table.columns = list(table.columns.astype(str))
    table.insert(0, "params", ladder["params"].to_numpy())
    table.index.name = None
    return table


def facts_per_copies_bin(copies) -> pd.Series:
    """How many facts fall in each bin of :func:`copies_bins` (non-empty bins only)."""
    counts = pd.Series(copies_bins(copies)).value_counts(sort=False)
    return counts[counts > 0]


def size_trend(params, values) -> float:
    """Spearman ρ between model size and a measure over the models; NaN with fewer
    than three finite values or a constant measure."""
    from scipy.stats import spearmanr

    x, y = np.asarray(params, dtype=float), np.asarray(values, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3 or np.ptp(y[ok]) == 0 or np.ptp(x[ok]) == 0:
        return np.nan
    return float(spearmanr(x[ok], y[ok]).statistic)


def trend_words(rho: float) -> str:
    """How a measure moves with size, from :func:`size_trend`: "rises with size" at
    ρ ≥ :data:`TREND_MIN`, "falls with size" at ρ ≤ −TREND_MIN, else "shows no
    monotone trend with size"; "has no defined trend with size" for NaN."""
    if not np.isfinite(rho):
        return "has no defined trend with size"
    if rho >= TREND_MIN:
        return "rises with size"
    if rho <= -TREND_MIN:
        return "falls with size"
    return "shows no monotone trend with size"


def accuracy_sentence(acc: pd.DataFrame) -> str:
    """The accuracy paragraph: the largest and the smallest model's knowledge
    accuracy, whether it rises with size (:func:`trend_words`) and the best
    reasoning accuracy. ``acc`` is :func:`accuracy_table`, smallest model first."""
    small, big = acc.iloc[0], acc.iloc[-1]
    rho = size_trend(acc["params"], acc["knowledge accuracy"])
    trend = (f"knowledge accuracy {trend_words(rho)} (Spearman ρ with size {rho:+.2f})" if np.isfinite(rho)
             else "knowledge accuracy is the same for every model" if acc["knowledge accuracy"].nunique() == 1
             else f"knowledge accuracy {trend_words(rho)}")
    return (f"The largest model, {big['model']}, answers {fmt_pct(big['knowledge accuracy'])} of the facts "
            f"and the smallest, {small['model']}, {fmt_pct(small['knowledge accuracy'])}; across the ladder "
            f"{trend}. No model solves more than {fmt_pct(acc['reasoning accuracy'].max())} of the new "
            "arithmetic problems.")


def copies_verdict(by_copies: pd.DataFrame, ladder: pd.DataFrame) -> str:
    """The lab's answer to the source's performance-against-count claim, from
    :func:`accuracy_by_copies`: the best model's recall on the most- and the
    least-copied facts (as in the source when it is higher on the most-copied),
    each family's best recall on the most-copied facts, and whether size alone
    orders that recall across the ladder (Spearman ρ = 1)."""
    bins = [c for c in by_copies.columns if c != "params"]
    top, low = bins[-1], bins[0]
    col = by_copies[top].astype(float)
    if col.notna().sum() == 0:
        return "No model has a scorable answer on the most-copied facts."
    if col.max() == 0:
        best_any = by_copies[bins].astype(float).max().max()
        return (f"no model recalls any of the facts seen {top} times, and none more than {fmt_pct(best_any)} "
                "of any bin: the lab shows none of the source's rise of accuracy with the count.")
    best = col.idxmax()
    hi, lo = float(by_copies.loc[best, top]), float(by_copies.loc[best, low])
    low_words = "once" if low == "1" else f"{low} times"
    rises = ("as in the source, recall rises with the count" if hi > lo
             else "unlike the source, recall does not rise with the count")
    fam = ladder.set_index("model")["family"]
    fam_best = col.groupby(fam.reindex(col.index).to_numpy()).max()
    by_family = "; ".join(f"{f} family at most {fmt_pct(v)}" for f, v in fam_best.sort_index().items())
    rho = size_trend(by_copies["params"], col)
    order = ("recall on them rises with size across the whole ladder" if rho == 1
             else f"size alone does not order the ladder's recall (Spearman ρ {rho:+.2f})" if np.isfinite(rho)
             else "size alone does not order the ladder's recall")
    tokens = ladder.groupby("family")["tokens"].first()
    budgets = ""
    if tokens.nunique() > 1:
        budgets = "; the families were trained on " + " and ".join(
            f"{v:,} tokens ({f})" for f, v in tokens.items())
    return (f"{best} recalls {fmt_pct(hi)} of the facts seen {top} times and {fmt_pct(lo)} of those seen "
            f"{low_words}: {rises}. By family, on the most-copied facts: {by_family}; {order}{budgets}.")


# -- both corpus LMs and the models' probabilities of the test pairs --------------


def pair_inputs(tables: Mapping[tuple, pd.DataFrame], tasks: Mapping[str, Mapping]
                ) -> dict[tuple, tuple[list[str], list[str]]]:
    """Context and n-gram text of every test pair (:func:`pair_contexts`), per (task, n)."""
    return {(task, n): pair_contexts(t, tasks[task]["prompts"], tasks[task]["outputs"])
            for (task, n), t in tables.items()}


def infgram_table(inputs: Mapping[tuple, tuple], index, tokenizer) -> dict[tuple, np.ndarray]:
    """The ∞-gram LM, ``log P_∞(s^y | context)`` of every test pair per (task, n)
    (:func:`infgram_logprobs` on the lab index)."""
    return {key: infgram_logprobs(index, tokenizer, c, g) for key, (c, g) in inputs.items()}


def llm_table(models: Mapping[str, object], inputs: Mapping[tuple, tuple]) -> dict[tuple, np.ndarray]:
    """The LLM side, ``log P_LLM(s^y | context)`` of every test pair per (model, task, n)
    (:func:`ngram_logprob`, cached)."""
    return {(m, task, n): ngram_logprob(model, c, g, progress=f"{m}: {task} {n}-grams")
            for (task, n), (c, g) in inputs.items() for m, model in models.items()}


#: the note of a correlation left undefined because one side ranks every pair the same
CONSTANT_NOTE = "one side gives every pair the same value"


def spearman_row(p, logp_llm) -> dict:
    """:func:`mem_spearman` as a table row: ``rho``, ``pvalue``, ``pairs`` and a
    ``note``: NaN ρ and the reason when fewer than three usable pairs are left, or
    when one side is constant over the pairs (:data:`CONSTANT_NOTE`)."""
    import warnings

    from scipy.stats import ConstantInputWarning

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConstantInputWarning)
            c = mem_spearman(p, logp_llm)
    except DistributionalError as err:
        return {"rho": np.nan, "pvalue": np.nan, "pairs": len(np.asarray(p)), "note": str(err)}
    return {"rho": c.statistic, "pvalue": c.pvalue, "pairs": c.n,
            "note": CONSTANT_NOTE if np.isnan(c.statistic) else ""}


def undefined_sentence(mem: pd.DataFrame, filt: str = "no filter") -> str:
    """Which (task, n, corpus LM) of :func:`mem_table` have no defined correlation
    for any model, and why (the rows' ``note``); empty when every one is defined."""
    g = mem[mem["filter"] == filt]
    undefined = g.groupby(["task", "n", "lm"], sort=False).filter(lambda t: t["rho"].isna().all())
    if undefined.empty:
        return "Every corpus LM gives a defined correlation for every model."
    parts = [f"the {lm} LM on {task} {n}-grams ({t['note'].iloc[0] or 'undefined'})"
             for (task, n, lm), t in undefined.groupby(["task", "n", "lm"], sort=False)]
    return "No model has a defined correlation for " + "; ".join(parts) + "."


def corpus_lms(table: pd.DataFrame, log_inf) -> dict[str, np.ndarray]:
    """The three corpus-side probabilities of a table's pairs (:data:`CORPUS_LMS`):
    ``P_{n,D}`` (``p_taskgram``), ``P_∞`` (``exp`` of ``log_inf``) and the pair
    count scaled into (0, 1], whose ranks are those of ``C((x, y))``."""
    c_xy = table["c_xy"].to_numpy(dtype=float)
    return {"task-gram": table["p_taskgram"].to_numpy(dtype=float),
            "∞-gram": np.exp(np.asarray(log_inf, dtype=float)), "pair count": c_xy / c_xy.max()}


def mem_table(tables: Mapping[tuple, pd.DataFrame], log_llm: Mapping[tuple, np.ndarray],
              log_inf: Mapping[tuple, np.ndarray], ladder: pd.DataFrame) -> pd.DataFrame:
    """Distributional memorization of every model, task, n and corpus LM: ``Mem_n``
    (task-gram), ``Mem_∞`` (∞-gram) and the pair-count variant, each over all test
    pairs (``filter`` "no filter") and over the pairs the paper's threshold keeps
    ("paper"). Columns ``task, n, model, params, family, filter, lm, rho, pvalue,
    pairs, note`` (:func:`spearman_row`)."""
    from analysis import ngrams

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
                  ladder: pd.DataFrame) -> pd.DataFrame:
    """The source's measure for tasks without significant memorization: the Kendall
    tau distance (:func:`kendall_distance`) between the task-gram LM's and each
    model's rankings of the test pairs. Columns ``task, n, model, params, family,
    lm, kendall, pvalue`` (NaN with fewer than three usable pairs)."""
    rows = []
    for (task, n), table in tables.items():
        with np.errstate(divide="ignore"):
            neg_log = -np.log(table["p_taskgram"].to_numpy(dtype=float))
        for m, params, family in zip(ladder["model"], ladder["params"], ladder["family"]):
            try:
                kd = kendall_distance(neg_log, -np.asarray(log_llm[(m, task, n)]))
                value, p = kd.statistic, kd.pvalue
            except DistributionalError:
                value, p = np.nan, np.nan
            rows.append({"task": task, "n": n, "model": m, "params": params, "family": family,
                         "lm": "task-gram", "kendall": value, "pvalue": p})
    return pd.DataFrame(rows)


# -- reading the tables -------------------------------------------------------


def by_model(frame: pd.DataFrame, value: str, models: Sequence[str],
             index: Sequence[str] = ("task", "n", "lm")) -> pd.DataFrame:
    """``value`` of a long table (:func:`mem_table`, :func:`sensitivity_table`) as
    one row per ``index`` (in order of first appearance, undefined rows kept) and one
    column per model (in ``models``' order)."""
    wide = frame.pivot_table(index=list(index), columns="model", values=value, aggfunc="first", dropna=False)
    keys = frame[list(index)].drop_duplicates()
    rows = pd.MultiIndex.from_frame(keys) if len(index) > 1 else pd.Index(keys[index[0]])
    return wide.reindex(index=rows, columns=list(models))


@dataclass(frozen=True)
class Trend:
    """One measure across the ladder, smallest model first: its values, p-values and
    sizes; ``n_sig`` models with p < :data:`ALPHA`; ``size_rho`` its
    :func:`size_trend`."""

    params: np.ndarray
    rho: np.ndarray
    pvalue: np.ndarray

    @property
    def n_models(self) -> int:
        return len(self.rho)

    @property
    def n_sig(self) -> int:
        return int((self.pvalue < ALPHA).sum())

    @property
    def defined(self) -> bool:
        return bool(np.isfinite(self.rho).any())

    @property
    def lo(self) -> float:
        return float(np.nanmin(self.rho)) if self.defined else np.nan

    @property
    def hi(self) -> float:
        return float(np.nanmax(self.rho)) if self.defined else np.nan

    @property
    def size_rho(self) -> float:
        return size_trend(self.params, self.rho)

    def range_text(self) -> str:
        """``'lo to hi'`` (two decimals), or why there is none."""
        if not self.n_models:
            return "not computed (no co-occurring pair)"
        return f"{self.lo:.2f} to {self.hi:.2f}" if self.defined else "undefined (fewer than 3 pairs)"

    def sig_text(self) -> str:
        return f"{self.n_sig} of {self.n_models}"

    def trend_text(self) -> str:
        r = self.size_rho
        return f"{r:+.2f}" if np.isfinite(r) else "undefined"


def trend(mem: pd.DataFrame, task: str, n: int, lm: str = "task-gram", filt: str = "no filter",
          value: str = "rho") -> Trend:
    """One corpus LM's measure (:func:`mem_table`, or ``value="kendall"`` of
    :func:`kendall_table`) for one task and n, across the ladder."""
    g = mem[(mem["task"] == task) & (mem["n"] == n) & (mem["lm"] == lm)]
    if "filter" in g:
        g = g[g["filter"] == filt]
    g = g.sort_values("params", kind="stable")
    return Trend(g["params"].to_numpy(float), g[value].to_numpy(float), g["pvalue"].to_numpy(float))


def above_infgram(mem: pd.DataFrame, task: str, n: int) -> tuple[int, int]:
    """(models whose ``Mem_n`` ≥ ``Mem_∞``, models compared) for one task and n,
    without a filter; a model with either value undefined does not count."""
    tg, inf = trend(mem, task, n), trend(mem, task, n, lm="∞-gram")
    return int((tg.rho >= inf.rho).sum()), tg.n_models


def mem_glue(mem: pd.DataFrame, tasks: Sequence[str], sizes: Sequence[int]) -> dict[str, str]:
    """The Mem section's glued numbers for every task and n: ``{task}_{n}_range``,
    ``_sig`` (significant models, "k of m"), ``_trend`` (Spearman ρ with size),
    ``_above_inf`` (models with Mem_n ≥ Mem_∞), ``_count_range`` and
    ``_count_trend`` (the pair-count variant)."""
    out = {}
    for task in tasks:
        for n in sizes:
            t, c = trend(mem, task, n), trend(mem, task, n, lm="pair count")
            above, total = above_infgram(mem, task, n)
            out |= {f"{task}_{n}_range": t.range_text(), f"{task}_{n}_sig": t.sig_text(),
                    f"{task}_{n}_trend": t.trend_text(), f"{task}_{n}_above_inf": f"{above} of {total}",
                    f"{task}_{n}_count_range": c.range_text(), f"{task}_{n}_count_trend": c.trend_text()}
    return out


def mem_sentence(t: Trend, task: str, n: int) -> str:
    """One task's Mem_n across the ladder: its range, how many models are
    significant, and whether it rises or falls with size (:func:`trend_words`)."""
    name = mem_name(n)
    if not t.defined:
        return f"For the {task} task, {name} is {t.range_text()}."
    if t.n_sig == 0:
        return (f"For the {task} task, {name} ranges from {t.range_text()} and is significant for no model "
                f"of {t.n_models}, so there is no memorization trend to read (rank correlation with size "
                f"{t.trend_text()}).")
    return (f"For the {task} task, {name} ranges from {t.range_text()} and is significant for "
            f"{t.sig_text()} models; its rank correlation with model size is {t.trend_text()}, so it "
            f"{trend_words(t.size_rho)}.")


def tied_share(table: pd.DataFrame | None) -> float:
    """Share of a task-gram table's test pairs with ``P_{n,D}(s^y | s^x) = 1``
    (``C(s^x) = C((s^x, s^y))``), which the rank correlation cannot order; NaN for
    no table (None) or an empty one."""
    if table is None or not len(table):
        return np.nan
    return float((table["p_taskgram"].to_numpy(dtype=float) == 1).mean())


def ties_sentence(share: float, t: Trend, task: str, n: int) -> str:
    """Why (or whether) the task-gram LM leaves Mem_n little to order: the share of
    tied pairs (:func:`tied_share`), "most" above :data:`MOST`, and whether Mem_n
    stays within :data:`NEAR_ZERO` of zero."""
    head = (f"{fmt_pct(share)} of the {task} task's {n}-gram test pairs have P(s^y | s^x) = 1: their input "
            "n-gram occurs only in documents that also hold the output n-gram, so C(s^x) = C((s^x, s^y)) "
            "whatever the copies.")
    if not np.isfinite(share):
        return f"The {task} task has no {n}-gram test pair."
    top = max(abs(t.lo), abs(t.hi)) if t.defined else np.nan
    if share >= MOST:
        tail = " With most pairs tied, the rank correlation has little to order"
        tail += (f", and {mem_name(n)} stays near zero (|ρ| ≤ {top:.2f})." if top < NEAR_ZERO
                 else f"; {mem_name(n)} still reaches |ρ| = {top:.2f}." if np.isfinite(top) else ".")
    else:
        tail = " Most pairs are not tied, so the conditional can order them."
    return head + tail


def count_variant_sentence(c: Trend, task: str, n: int) -> str:
    """The pair-count variant (beyond the paper): ρ between ``C((s^x, s^y))`` and the
    models' probabilities. The models "follow the corpus frequency" when most are
    significant (> :data:`MOST`) and the median ρ is positive, "run against it" when
    most are significant and it is negative."""
    head = ("With the pair count C((s^x, s^y)) in place of the conditional, a variant beyond the paper "
            f"(dotted in the figure), the {task} task's {n}-gram correlation ")
    if not c.defined:
        return head + f"is {c.range_text()}."
    med = float(np.nanmedian(c.rho))
    most = c.n_sig > MOST * c.n_models
    verdict = ("the models' probabilities follow the corpus frequency" if most and med > 0
               else "the models' probabilities run against the corpus frequency" if most and med < 0
               else "no consistent relation to the corpus frequency across the ladder")
    return head + (f"ranges from {c.range_text()}, significant for {c.sig_text()} models, with a rank "
                   f"correlation with size of {c.trend_text()}: {verdict}.")


def lm_verdict(mem: pd.DataFrame, tasks: Sequence[str], n: int) -> str:
    """The source finds Mem_n ≥ Mem_∞; per task, for how many models the lab agrees
    (:func:`above_infgram`), and whether that is as the source finds (every model),
    the reverse (none) or partly."""
    counts = {task: above_infgram(mem, task, n) for task in tasks}
    parts = " and ".join(f"{a} of {m} models on {task} {n}-grams" for task, (a, m) in counts.items())
    above, total = sum(a for a, _ in counts.values()), sum(m for _, m in counts.values())
    if total and above == total:
        verdict = "as the source finds"
    elif above == 0:
        verdict = ("the reverse of the source's finding (the corpus's ∞-gram LM tracks the models' "
                   "probabilities better)")
    else:
        verdict = "only partly as the source finds"
    return f"The task-gram LM correlates at least as strongly as the ∞-gram LM for {parts}, {verdict}."


def knowledge_verdict(t: Trend, share: float, c: Trend, n: int) -> str:
    """The lab's answer to the source's central claim (TriviaQA ``Mem_3`` significant
    and rising with size): reproduced when every model is significant and the
    measure rises with size (:func:`trend_words`); otherwise not, and the corpus's
    ties are named as the reason when most pairs are tied (:data:`MOST`) while the
    pair-count variant is significant for most models."""
    name = mem_name(n)
    if not t.defined:
        return f"The lab's knowledge {name} is {t.range_text()}, so the claim cannot be checked here."
    if t.n_sig == t.n_models and t.size_rho >= TREND_MIN:
        return (f"The lab's knowledge {name} ({t.range_text()}) is significant for every model and rises "
                "with size: this part of the paper's pattern reproduces on the lab.")
    moves = f", and {trend_words(t.size_rho)}" if t.n_sig else ""
    text = (f"The lab's knowledge {name} ranges from {t.range_text()}, significant for {t.sig_text()} "
            f"models{moves}: this part of the paper's pattern does not reproduce on the lab")
    if np.isfinite(share) and share >= MOST and c.defined and c.n_sig > MOST * c.n_models:
        text += (f", and the reason is the corpus, not the models: {fmt_pct(share)} of the test pairs "
                 f"are tied, while the pair counts correlate significantly for {c.sig_text()} models")
    return text + "."


def reasoning_verdict(t: Trend, n: int) -> str:
    """The lab's answer to the source's GSM8K claim (no significant Mem_n at any
    size): as in the source when no model is significant; otherwise how many are,
    and the sign of the significant values."""
    name = mem_name(n)
    if not t.defined:
        return f"The lab's reasoning {name} is {t.range_text()}, so the claim cannot be checked here."
    if t.n_sig == 0:
        return (f"As in the source, the lab's reasoning {name} is significant for no model (values from "
                f"{t.range_text()}).")
    sig = t.rho[t.pvalue < ALPHA]
    if (sig < 0).all():
        sign = " (negative: the models' probabilities run against the co-occurrence conditional)"
    elif (sig > 0).all():
        sign = " (positive: the models' probabilities follow the co-occurrence conditional)"
    else:
        sign = " (of both signs)"
    return (f"Unlike the source, the lab's reasoning {name} is significant for {t.sig_text()} models, with "
            f"values from {t.range_text()}{sign}.")


def kendall_verdict(k: Trend, n: int) -> str:
    """The source reads a Kendall tau distance that rises with size on GSM8K as
    generalization; whether the lab's reasoning distance rises (:func:`trend_words`)."""
    if not k.defined:
        return f"The reasoning task's Kendall tau distance is {k.range_text()}."
    words = trend_words(k.size_rho)
    agree = ("as the source finds for GSM8K" if words == "rises with size"
             else "unlike the source's GSM8K distance, which rises with size")
    return (f"On reasoning {n}-grams the Kendall tau distance ranges from {k.range_text()} and {words} "
            f"(Spearman ρ {k.trend_text()}), {agree}.")


def novelty_table(answers: pd.DataFrame, tasks: Mapping[str, Mapping], doc_index: Mapping[bool, object],
                  ladder: pd.DataFrame, n: int = NOVELTY_N) -> pd.DataFrame:
    """Novelty of each model's answers per task: the share of (input n-gram,
    generated n-gram) pairs that never co-occur in a corpus document
    (:func:`novelty`; a failed request counts as an empty answer). Columns ``model,
    params, task, novelty, pairs``; NaN novelty with 0 pairs when the answers give none."""
    from analysis import ngrams

    index = doc_index[ngrams.default_drop_stopwords(n)]
    rows = []
    for m, params in zip(ladder["model"], ladder["params"]):
        for task, spec in tasks.items():
            got = answers[(answers["model"] == m) & (answers["task"] == task)].sort_values("instance")
            gen = [a or "" for a in got["answer"]]
            try:
                counted = ngrams.count_pairs(ngrams.task_gram_pairs(spec["inputs"], gen, n), index)
                value, pairs = novelty(counted["c_xy"]), len(counted)
            except (ngrams.NgramError, DistributionalError):
                value, pairs = np.nan, 0
            rows.append({"model": m, "params": params, "task": task, "novelty": value, "pairs": pairs})
    return pd.DataFrame(rows)


def sensitivity_table(table: pd.DataFrame, log_llm: Mapping[tuple, np.ndarray], ladder: pd.DataFrame,
                      task: str, n: int, gammas: Sequence[float]) -> pd.DataFrame:
    """The source's threshold check: ``Mem_n`` of every model with the table filtered
    at each γ in ``gammas`` and unfiltered. Columns ``gamma`` (label), ``model``,
    ``params``, ``rho``, ``pvalue``, ``pairs`` (kept pairs)."""
    from analysis import ngrams

    p = table["p_taskgram"].to_numpy(dtype=float)
    rows = []
    for gamma in (*gammas, None):
        mask = ngrams.cosine_keep(table, gamma, table["cosine"].to_numpy())
        label = "no filter" if gamma is None else f"γ = {gamma:g}"
        for m, params in zip(ladder["model"], ladder["params"]):
            r = spearman_row(p[mask], np.asarray(log_llm[(m, task, n)])[mask])
            rows.append({"gamma": label, "model": m, "params": params, "rho": r["rho"], "pvalue": r["pvalue"],
                         "pairs": int(mask.sum())})
    return pd.DataFrame(rows)


def sensitivity_verdict(sens: pd.DataFrame, n: int) -> str:
    """The source finds Mem_n's trend with size the same at every γ; the lab's
    answer from :func:`sensitivity_table`: which thresholds leave too few pairs for
    a correlation (then the check cannot be made there), and whether the trend
    words (:func:`trend_words`) agree across the thresholds that leave enough."""
    name = mem_name(n)
    words, thin = {}, []
    for label, g in sens[sens["gamma"] != "no filter"].groupby("gamma", sort=False):
        if g["rho"].notna().sum() < 3:
            thin.append(f"{label} ({int(g['pairs'].iloc[0]):,} pairs)")
        else:
            words[label] = trend_words(size_trend(g["params"], g["rho"]))
    if thin:
        text = (f"At {', '.join(thin)} fewer than three models have a defined {name}, too few for a trend, "
                "so the check cannot reproduce the paper's stability across thresholds")
        return text + (f"; at {', '.join(words)} it {'; '.join(set(words.values()))}." if words else ".")
    if len(set(words.values())) == 1:
        return f"{name} {next(iter(words.values()))} at every threshold, as the paper finds."
    return (f"{name}'s trend with size changes with the threshold ("
            + "; ".join(f"{k}: {v}" for k, v in words.items()) + "), unlike the paper's.")


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

    path = DATA_DIR / "distributional_claims.csv"
    return pd.read_csv(path, comment="#")


def _check_lab_models(value, settings):
    from analysis.lab.ladder import check_runs

    if value is not None:
        check_runs("lab_models", value, settings["lab_profile"], family="ladder", at_least=2)


PARAMS = Declaration(
    "distributional",
    PROFILES,
    (
        lab_profile_param(),
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


def significant_positive(mem: pd.DataFrame, task: str, n, lm: str = "task-gram", alpha: float = 0.05,
                         filt: str = "no filter") -> int:
    """Models of :func:`mem_table` whose ``Mem_n`` (``lm``) for ``task`` is positive and
    significant (p below ``alpha``), over the pairs of ``filt``."""
    sub = mem[(mem["task"] == task) & (mem["n"] == n) & (mem["lm"] == lm) & (mem["filter"] == filt)]
    return int(((sub["rho"] > 0) & (sub["pvalue"] < alpha)).sum())

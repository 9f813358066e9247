"""The corpus's documents, its injected sequences and the built :class:`Corpus`.

:class:`Corpus` holds the training documents, the held-out documents and the
injections, with the tables the lab page shows (manifest, injection table,
composition), the training stream and the fingerprint that keys everything
trained on it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis.core import data
from analysis.core.cache import stable_hash
from analysis.lab.config import CorpusConfig
from analysis.lab.corpus.common import CODE_VERSION, DATA_PREFIXES, corpus_rng
from analysis.lab.phrase_selection import SELECTION_VERSION

#: kinds of training documents, in the order of the composition table
TRAINING_KINDS = ("background", "popular", "knowledge", "reasoning", "phrase")


@dataclass
class Document:
    """One document of the corpus.

    Parameters
    ----------
    doc_id : str
        Unique id, e.g. ``"popular-hamlet"``, ``"background-00012"``.
    kind : str
        ``"background"``, ``"popular"``, ``"knowledge"``, ``"reasoning"`` or
        ``"phrase"`` for training documents (a phrase control has 0 copies);
        ``"heldout"`` for non-member documents.
    source : str
        Where the text comes from: ``"popular"`` (a popular text), ``"baseline"``
        (a baseline story), ``"triviaqa"`` or ``"generated"``.
    text : str
        The text, words joined by single spaces.
    copies : int
        How many times the document goes into the training stream (0 for held-out).
    meta : dict
        Scalar details: ``text_id``, ``word_start``, ``word_end`` (indices into
        ``text.split()`` of the cleaned text) for text windows; question and
        answer for knowledge documents (``role`` "fact": a rendering of one fact, with
        its ``template``, ``copies``, ``fact_copies`` and ``mentions``; "quiz": a quiz
        round, with its ``question_ids``); numbers and answer for reasoning ones.
    """

    doc_id: str
    kind: str
    source: str
    text: str
    copies: int
    meta: dict = field(default_factory=dict)


@dataclass
class Injection:
    """One sequence the trainer inserts into the training stream.

    Parameters
    ----------
    seq_id : str
        ``f"{task}-{copies:03d}-{k}"``.
    task : str
        One of :data:`~analysis.lab.config.INJECTION_TASKS`.
    text : str
        The sequence, words joined by single spaces.
    copies : int
        Duplicate level: how many times it is inserted (0 = control, never).
    window : str, default "all"
        Insertion window, a key of :data:`~analysis.lab.config.WINDOWS`.
    meta : dict
        Scalar details of the source item (question and answer, text window, ...).
    """

    seq_id: str
    task: str
    text: str
    copies: int
    window: str = "all"
    meta: dict = field(default_factory=dict)


@dataclass
class Corpus:
    """A built corpus: training documents, held-out documents and injections.

    Parameters
    ----------
    config : CorpusConfig
        The configuration it was built from.
    documents : list of Document
        Training documents (kinds in :data:`TRAINING_KINDS`).
    heldout : list of Document
        Non-member documents (kind ``"heldout"``): one window per popular text
        and the baseline stories.
    injections : list of Injection
        Sequences for the trainer to insert, ``per_task_per_level`` per task
        and duplicate level.
    """

    config: CorpusConfig
    documents: list[Document]
    heldout: list[Document]
    injections: list[Injection]

    def manifest(self) -> pd.DataFrame:
        """One row per training and held-out document.

        Returns
        -------
        pandas.DataFrame
            Columns ``doc_id``, ``kind``, ``source``, ``copies``, ``n_words``,
            ``n_chars``, then one column per meta key (``text_id``,
            ``word_start``, ``word_end``, ``shrunk``, ``question_id``, ...),
            missing where a document has no such key.
        """
        rows = [
            {"doc_id": d.doc_id, "kind": d.kind, "source": d.source, "copies": d.copies,
             "n_words": len(d.text.split()), "n_chars": len(d.text), **d.meta}
            for d in self.documents + self.heldout
        ]
        return _frame(rows, ["doc_id", "kind", "source", "copies", "n_words", "n_chars"])

    def injection_table(self) -> pd.DataFrame:
        """One row per injected sequence.

        Returns
        -------
        pandas.DataFrame
            Columns ``seq_id``, ``task``, ``copies``, ``window``, ``n_words``,
            ``text``, then one column per meta key.
        """
        rows = [
            {"seq_id": s.seq_id, "task": s.task, "copies": s.copies, "window": s.window,
             "n_words": len(s.text.split()), "text": s.text, **s.meta}
            for s in self.injections
        ]
        return _frame(rows, ["seq_id", "task", "copies", "window", "n_words", "text"])

    def composition(self) -> pd.DataFrame:
        """Words of the training stream per kind, counting copies.

        Returns
        -------
        pandas.DataFrame
            One row per kind of :data:`TRAINING_KINDS`: ``documents`` (distinct
            documents), ``copies`` (documents counting copies),
            ``unique_words`` (words counting each document once), ``words``
            (counting copies) and ``share`` (of all words of the stream).
            Injections are not included; phrase controls (0 copies) count as
            documents and unique words but add no word to the stream.
        """
        rows = []
        for kind in TRAINING_KINDS:
            docs = [d for d in self.documents if d.kind == kind]
            lengths = [len(d.text.split()) for d in docs]
            rows.append({
                "kind": kind,
                "documents": len(docs),
                "copies": sum(d.copies for d in docs),
                "unique_words": sum(lengths),
                "words": sum(n * d.copies for n, d in zip(lengths, docs)),
            })
        table = pd.DataFrame(rows)
        total = table["words"].sum()
        table["share"] = table["words"] / total if total else 0.0
        return table

    def training_texts(self, popular_factor: int = 1, popular_dropped: float = 0.0,
                       without: Collection[int] = ()) -> list[str]:
        """The training stream: every training document repeated ``copies`` times.

        An ablation run's stream changes the popular excerpts' copies
        (:attr:`~analysis.lab.config.RunConfig.popular_copies_factor` and
        :attr:`~analysis.lab.config.RunConfig.popular_dropped`): a share
        ``popular_dropped`` of the popular texts (:meth:`dropped_popular`, a seeded
        draw) is left out, and every other excerpt is repeated ``popular_factor``
        times its copies. ``without`` (indices into :attr:`documents`) leaves those
        documents' copies out after the order is drawn, so every other text keeps its
        place relative to the rest (the distributional chapter's counterfactual run).

        Returns
        -------
        list of str
            Texts in a deterministic order (a shuffle seeded by ``config.seed``,
            so the copies of a document are spread over the stream). Injected
            sequences are not included: the trainer inserts them.
        """
        if not isinstance(popular_factor, int) or isinstance(popular_factor, bool) or popular_factor < 1:
            raise ValueError(f"popular_factor must be a positive integer, got {popular_factor!r}")
        dropped = self.dropped_popular(popular_dropped)
        copies = [(0 if d.doc_id in dropped else d.copies * popular_factor) if d.kind == "popular"
                  else d.copies for d in self.documents]
        slots = np.repeat(np.arange(len(self.documents)), copies)
        order = corpus_rng(self.config.seed, "training-order").permutation(len(slots))
        gone = set(without)
        return [self.documents[i].text for i in slots[order] if i not in gone]

    def dropped_popular(self, share: float) -> set[str]:
        """The doc_ids of the popular excerpts an ablation with ``share`` of its popular
        texts left out does not train on: the first ``round(share * n)`` of a seeded
        permutation of the ``n`` excerpts (sorted by doc_id)."""
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share < 1:
            raise ValueError(f"popular_dropped must be a number in [0, 1), got {share!r}")
        ids = sorted(d.doc_id for d in self.documents if d.kind == "popular")
        order = corpus_rng(self.config.seed, "popular-dropped").permutation(len(ids))
        return {ids[int(i)] for i in order[:int(round(share * len(ids)))]}

    def fingerprint(self) -> str:
        """Stable hash of what the corpus is built from and of what it holds.

        Returns
        -------
        str
            Hash of :func:`corpus_fingerprint` (the config, the sha256 of every
            registered input file the corpus reads, :data:`CODE_VERSION`) and of
            the built content: every document's id, kind, text and copies, every
            held-out text and every injection's id, text and copies. The cache
            key of anything built from the corpus (tokenizer, trained models):
            a change to the building code that changes the content retrains,
            even where :data:`CODE_VERSION` was not bumped.
        """
        content = {
            "documents": [[d.doc_id, d.kind, d.text, d.copies] for d in self.documents],
            "heldout": [[d.doc_id, d.text] for d in self.heldout],
            "injections": [[i.seq_id, i.text, i.copies, i.window] for i in self.injections],
        }
        return stable_hash({"recipe": corpus_fingerprint(self.config), "content": stable_hash(content)})


def _frame(rows: list[dict], leading: list[str]) -> pd.DataFrame:
    """DataFrame of ``rows``; meta columns missing in some rows get nullable dtypes."""
    table = pd.DataFrame(rows, columns=None if rows else leading)
    for column in table.columns[len(leading):]:
        values = [row[column] for row in rows if row.get(column) is not None]
        if values and all(isinstance(v, (bool, np.bool_)) for v in values):
            table[column] = pd.array([row.get(column) for row in rows], dtype="boolean")
        elif values and all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
                            for v in values):
            table[column] = pd.array([row.get(column) for row in rows], dtype="Int64")
    return table


def corpus_fingerprint(config: CorpusConfig) -> str:
    """The hash of the recipe of the corpus built from ``config``, without building it.

    Parameters
    ----------
    config : CorpusConfig
        A corpus configuration.

    Returns
    -------
    str
        Hash of the config, the input files' sha256 and :data:`CODE_VERSION`;
        :meth:`Corpus.fingerprint` adds the built content to it.
    """
    key = {
        "config": config.as_dict(),
        "data": data.registry_fingerprint(DATA_PREFIXES),
        "code": CODE_VERSION,
    }
    if config.phrases_per_level:
        key["phrase_selection"] = SELECTION_VERSION
    return stable_hash(key)


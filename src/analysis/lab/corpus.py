"""The lab's pretraining corpus: known composition, known held-out text, known injections.

:func:`build_corpus` turns a :class:`~analysis.lab.config.CorpusConfig` into a
:class:`Corpus`, deterministically given ``config.seed``:

* **popular** documents: one contiguous excerpt window of every popular text,
  trained ``popular_copies`` times (the size chapter probes inside them);
* **background** documents: ~500-word chunks of the rest of the popular texts,
  trained once, sampled up to ``background_words``;
* **knowledge** documents: TriviaQA facts, each stated (question, then answer)
  in a Zipf-distributed number of documents spread over several templates, and
  each question also listed without its answer in a Zipf-distributed number of
  quiz rounds, so a question's words co-occur with its answer in some of the
  documents that hold them and not in others;
* **reasoning** documents: GSM8K-style worked arithmetic problems generated
  from templates with random numbers, trained once;
* **phrase** documents: the phrases chapter's English counterpart (20-word
  phrases distinctive of the popular texts), each on its own, trained
  0 (a control), 1, 4, ... times as ``phrase_levels`` says; only phrases that
  share no 10-word run with any other document are used, so a phrase's
  ``copies`` is exactly how often the model saw it;
* **held-out** documents (never trained): one window of every popular text and
  the four baseline stories (published 2024-26);
* **injections**: sequences of six tasks at each duplicate level, which the
  trainer inserts (``copies`` times, 0 = control); they are not in
  :meth:`Corpus.training_texts`.

Overlapping texts (the KJV Bible contains Matthew, the Psalms and the Sermon on
the Mount; the Book of Mormon quotes Isaiah and the Sermon; The Moonstone quotes
Robinson Crusoe; ...) are handled with 12-word shingles: every window that must
stay out of training (held-out windows, baseline stories, passage injections)
and every excerpt window *claims* all occurrences of its shingles in every text,
and background is cut only from unclaimed text, after dropping text whose
shingles occur in a longer text (so Matthew is background only once, inside the
Bible); the background then claims its own text, and the passages are cut from
what is left after it, so the base corpus does not change with the number of
passages. No 12-word shingle of a held-out document or an injected sequence
occurs in any training document; :func:`build_corpus` verifies this before
returning. Words are whitespace words; every document's text is its words joined
by single spaces.
"""

from __future__ import annotations

import json
import re
import zlib
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd

from analysis.core import data
from analysis.core.cache import stable_hash
from analysis.lab.config import CorpusConfig, LabConfigError

#: bump when a change to this module changes the corpus built from a config
CODE_VERSION = "corpus-5"
#: words per shingle of the disjointness guarantees
SHINGLE_WORDS = 12
#: cap on an MMLU injection's characters per requested word (symbol-heavy items tokenize long)
MAX_CHARS_PER_WORD = 7
#: target length of a background document, in words
BACKGROUND_DOC_WORDS = 500
#: background fragments shorter than this (between claimed regions) are dropped
MIN_BACKGROUND_DOC_WORDS = 50
#: kinds of training documents, in the order of the composition table
TRAINING_KINDS = ("background", "popular", "knowledge", "reasoning", "phrase")
#: registry prefixes of every input the corpus is built from
DATA_PREFIXES = ("texts/popular/", "texts/baseline/", "tasks/triviaqa/", "tasks/gsm8k/", "tasks/mmlu/test/")
TRIVIAQA = "tasks/triviaqa/trivia_qa_2000.jsonl"
GSM8K = "tasks/gsm8k/test.jsonl"
MMLU_TEST = "tasks/mmlu/test/"
#: a random-words injection draws from this many most common background words
RANDOM_VOCAB_SIZE = 2_000

# Fixed seed of the word hashes (independent of the config: the index is shared).
_HASH_SEED = 20240611
_HASH_MULT = np.uint64(0x9E3779B97F4A7C15)


# ---------------------------------------------------------------------------
# Data classes
# ---------------------------------------------------------------------------


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

    def training_texts(self) -> list[str]:
        """The training stream: every training document repeated ``copies`` times.

        Returns
        -------
        list of str
            Texts in a deterministic order (a shuffle seeded by ``config.seed``,
            so the copies of a document are spread over the stream). Injected
            sequences are not included: the trainer inserts them.
        """
        slots = np.repeat(np.arange(len(self.documents)), [d.copies for d in self.documents])
        order = _rng(self.config.seed, "training-order").permutation(len(slots))
        return [self.documents[i].text for i in slots[order]]

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
        from analysis.lab.phrase_selection import SELECTION_VERSION

        key["phrase_selection"] = SELECTION_VERSION
    return stable_hash(key)


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def _rng(seed: int, stream: str) -> np.random.Generator:
    """An independent generator per (seed, purpose): a change to one part keeps the others."""
    return np.random.default_rng([int(seed) % (1 << 63), zlib.crc32(stream.encode("utf-8"))])


def _norm(text: str) -> str:
    return " ".join(text.split())


def _truncate(text: str, n_words: int) -> str:
    return " ".join(text.split()[:n_words])


def _shingles(text: str) -> list[tuple[str, ...]]:
    words = text.split()
    return [tuple(words[i:i + SHINGLE_WORDS]) for i in range(len(words) - SHINGLE_WORDS + 1)]


def _n_injections(config: CorpusConfig) -> int:
    """Sequences per task, summed over the duplicate levels."""
    return sum(n for _, n in config.level_sizes())


# ---------------------------------------------------------------------------
# The shingle index of the popular and baseline texts
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _TextIndex:
    """Every word of the popular and baseline texts, with 12-word shingle hashes.

    Global word positions run over the texts in ``ids`` order. ``hashes[p]`` is
    the hash of the shingle starting at ``p`` (valid where ``valid[p]``);
    ``order`` lists the valid positions sorted by hash (``sorted_hashes``), so
    the occurrences of a shingle are found by binary search. ``dup[p]`` marks
    words covered by a shingle that also occurs in a longer popular text.
    """

    ids: tuple[str, ...]
    popular: tuple[bool, ...]
    starts: np.ndarray
    ends: np.ndarray
    codes: np.ndarray
    vocab: np.ndarray
    hashes: np.ndarray
    valid: np.ndarray
    order: np.ndarray
    sorted_hashes: np.ndarray
    dup: np.ndarray

    def span(self, text_id: str) -> tuple[int, int]:
        i = self.ids.index(text_id)
        return int(self.starts[i]), int(self.ends[i])

    def words(self, g0: int, g1: int) -> str:
        return " ".join(self.vocab[self.codes[g0:g1]])

    def occurrences(self, g0: int, g1: int) -> np.ndarray:
        """Start positions of every occurrence, in any text, of every shingle inside [g0, g1)."""
        starts = np.arange(g0, max(g0, g1 - SHINGLE_WORDS + 1))
        if not len(starts):
            return starts
        wanted = np.unique(self.hashes[starts])
        lo = np.searchsorted(self.sorted_hashes, wanted, "left")
        hi = np.searchsorted(self.sorted_hashes, wanted, "right")
        counts = hi - lo
        first = np.repeat(lo - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
        return self.order[first + np.arange(counts.sum())]


def _cover(n: int, starts: np.ndarray) -> np.ndarray:
    """Boolean mask of the words covered by shingles starting at ``starts``."""
    diff = np.zeros(n + 1, dtype=np.int64)
    np.add.at(diff, starts, 1)
    np.add.at(diff, starts + SHINGLE_WORDS, -1)
    return np.cumsum(diff[:-1]) > 0


@lru_cache(maxsize=1)
def _text_index(registry_key: str) -> _TextIndex:
    """Build (once per registry state) the shingle index of every text."""
    popular = data.popular_texts()
    baseline = data.baseline_texts()
    ids = tuple(sorted(popular)) + tuple(sorted(baseline))
    texts = {**popular, **baseline}
    split = [texts[i].split() for i in ids]
    lengths = np.array([len(w) for w in split], dtype=np.int64)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    codes, vocab = pd.factorize(pd.Series([w for words in split for w in words], dtype=object))
    del split
    codes = codes.astype(np.int32)
    vocab = np.asarray(vocab, dtype=object)
    values = _rng(_HASH_SEED, "word-values").integers(0, 1 << 63, size=len(vocab), dtype=np.uint64)
    values = values * np.uint64(2) + np.uint64(1)
    n = int(ends[-1])
    word_values = values[codes]
    hashes = np.zeros(n, dtype=np.uint64)
    m = n - SHINGLE_WORDS + 1
    for j in range(SHINGLE_WORDS):
        hashes[:m] = hashes[:m] * _HASH_MULT + word_values[j:j + m]
    valid = np.zeros(n, dtype=bool)
    for s, e in zip(starts, ends):
        valid[s:max(s, e - SHINGLE_WORDS + 1)] = True
    positions = np.nonzero(valid)[0]
    order = positions[np.argsort(hashes[positions], kind="stable")]
    sorted_hashes = hashes[order]
    # Cross-text duplicates: a shingle also found in a longer popular text is a duplicate.
    is_popular = tuple(i in popular for i in ids)
    by_length = sorted(range(len(ids)), key=lambda i: (-lengths[i], ids[i]))
    rank_of_text = np.empty(len(ids), dtype=np.int64)
    rank_of_text[by_length] = np.arange(len(ids))
    rank_of_text[[i for i, p in enumerate(is_popular) if not p]] = len(ids)  # never a "first" copy
    text_of = np.repeat(np.arange(len(ids)), lengths)
    ranks = rank_of_text[text_of[order]]
    new_group = np.concatenate([[True], sorted_hashes[1:] != sorted_hashes[:-1]])
    group = np.cumsum(new_group) - 1
    group_min = np.minimum.reduceat(ranks, np.nonzero(new_group)[0])
    dup = _cover(n, order[ranks > group_min[group]])
    return _TextIndex(ids, is_popular, starts, ends, codes, vocab, hashes, valid, order,
                      sorted_hashes, dup)


def popular_overlaps() -> pd.DataFrame:
    """Pairs of popular or baseline texts that share 12-word shingles.

    Returns
    -------
    pandas.DataFrame
        One row per pair with ``text_a``, ``text_b``, ``shared`` (distinct
        shared shingles), ``frac_a`` and ``frac_b`` (shared over each text's
        distinct shingles); sorted by ``shared``, largest first.
    """
    index = _text_index(data.registry_fingerprint(DATA_PREFIXES[:2]))
    sets = {}
    for i, text_id in enumerate(index.ids):
        s, e = int(index.starts[i]), int(index.ends[i])
        sets[text_id] = np.unique(index.hashes[s:e][index.valid[s:e]])
    rows = []
    for a_i, a in enumerate(index.ids):
        for b in index.ids[a_i + 1:]:
            shared = len(np.intersect1d(sets[a], sets[b], assume_unique=True))
            if shared:
                rows.append({"text_a": a, "text_b": b, "shared": shared,
                             "frac_a": shared / max(1, len(sets[a])),
                             "frac_b": shared / max(1, len(sets[b]))})
    table = pd.DataFrame(rows, columns=["text_a", "text_b", "shared", "frac_a", "frac_b"])
    return table.sort_values("shared", ascending=False, ignore_index=True)


class _Claims:
    """Words of the texts already taken by a window, plus all copies of their shingles."""

    def __init__(self, index: _TextIndex):
        self.index = index
        self.mask = np.zeros(len(index.codes), dtype=bool)

    def _covered(self, g0: int, g1: int) -> np.ndarray:
        """Global positions the window [g0, g1) claims: itself and every copy of its shingles."""
        occ = self.index.occurrences(g0, g1)
        spans = (occ[:, None] + np.arange(SHINGLE_WORDS)).ravel()
        return np.concatenate([np.arange(g0, g1), spans])

    def claim(self, g0: int, g1: int) -> None:
        """Claim the window [g0, g1) and every copy, in any text, of its shingles."""
        self.mask[self._covered(g0, g1)] = True

    def mask_if_claimed(self, t0: int, t1: int, g0: int, g1: int) -> np.ndarray:
        """The claimed mask of the text [t0, t1) as it would be after claiming [g0, g1)."""
        local = self.mask[t0:t1].copy()
        covered = self._covered(g0, g1)
        covered = covered[(covered >= t0) & (covered < t1)]
        local[covered - t0] = True
        return local

    def free_starts(self, g0: int, g1: int, length: int, local: np.ndarray | None = None) -> np.ndarray:
        """Global starts s in [g0, g1 - length] whose window [s, s + length) is all unclaimed.

        ``local`` replaces the claimed mask of [g0, g1) when given.
        """
        if length <= 0 or g1 - g0 < length:
            return np.zeros(0, dtype=np.int64)
        taken = np.concatenate([[0], np.cumsum(self.mask[g0:g1] if local is None else local)])
        free = taken[length:] - taken[:-length] == 0
        return g0 + np.nonzero(free)[0]


# ---------------------------------------------------------------------------
# Popular windows, passages and background
# ---------------------------------------------------------------------------


def _window_sizes(n: int, excerpt: int, heldout: int) -> tuple[int, int, bool]:
    """Excerpt and held-out sizes for a text of n words, shrunk proportionally if short."""
    if n >= excerpt + heldout:
        return excerpt, heldout, False
    scale = n / (excerpt + heldout)
    return int(excerpt * scale), int(heldout * scale), True


def _place_windows(claims: _Claims, g0: int, g1: int, excerpt: int, heldout: int,
                   rng: np.random.Generator) -> tuple[int, int] | None:
    """Seeded starts (held-out, excerpt) of two disjoint unclaimed windows, or None."""
    if not heldout:
        options = claims.free_starts(g0, g1, excerpt)
        return (-1, int(options[rng.integers(len(options))])) if len(options) else None
    candidates = claims.free_starts(g0, g1, heldout)
    for h in candidates[rng.permutation(len(candidates))][:2_000]:
        local = claims.mask_if_claimed(g0, g1, int(h), int(h) + heldout)
        options = claims.free_starts(g0, g1, excerpt, local)
        if len(options):
            return int(h), int(options[rng.integers(len(options))])
    return None


def popular_copies(config: CorpusConfig, text_ids: list[str]) -> dict[str, int]:
    """Copies of each popular text's excerpt: ``popular_copies`` for every text, or,
    with ``popular_max_copies`` set, a geometric spread from ``popular_copies`` to
    ``popular_max_copies`` (rounded) over the texts in a seeded order, so popularity
    is graded as on the web and every copy level has texts of every kind."""
    ids = sorted(text_ids)
    if not config.popular_max_copies or len(ids) < 2:
        return {t: config.popular_copies for t in ids}
    levels = np.geomspace(config.popular_copies, config.popular_max_copies, len(ids)).round().astype(int)
    order = _rng(config.seed, "popular-copies").permutation(len(ids))
    return {ids[i]: int(levels[k]) for k, i in enumerate(order)}


def _popular_windows(config: CorpusConfig, index: _TextIndex, claims: _Claims):
    """Excerpt (training) and held-out windows of every popular text, shortest text first."""
    rng = _rng(config.seed, "popular-windows")
    popular_ids = [t for t, p in zip(index.ids, index.popular) if p]
    lengths = {t: index.span(t)[1] - index.span(t)[0] for t in popular_ids}
    copies = popular_copies(config, popular_ids)
    excerpts, heldouts = [], []
    for text_id in sorted(popular_ids, key=lambda t: (lengths[t], t)):
        g0, g1 = index.span(text_id)
        e_len, h_len, shrunk = _window_sizes(g1 - g0, config.popular_excerpt_words,
                                             config.heldout_words_per_text)
        placed = _place_windows(claims, g0, g1, e_len, h_len, rng)
        if placed is None:
            raise LabConfigError(
                f"popular_excerpt_words={config.popular_excerpt_words} and heldout_words_per_text="
                f"{config.heldout_words_per_text}: no room for both windows in {text_id!r} "
                f"({g1 - g0} words, part of it already taken by overlapping texts)")
        h, e = placed
        meta = {"shrunk": shrunk}
        if h_len:
            claims.claim(h, h + h_len)
            heldouts.append(Document(
                f"heldout-{text_id}", "heldout", "popular", index.words(h, h + h_len), 0,
                {"text_id": text_id, "word_start": h - g0, "word_end": h - g0 + h_len, **meta}))
        claims.claim(e, e + e_len)
        excerpts.append(Document(
            f"popular-{text_id}", "popular", "popular", index.words(e, e + e_len), copies[text_id],
            {"text_id": text_id, "word_start": e - g0, "word_end": e - g0 + e_len, **meta}))
    by_id = lambda d: d.doc_id  # noqa: E731
    return sorted(excerpts, key=by_id), sorted(heldouts, key=by_id)


def _passages(config: CorpusConfig, index: _TextIndex, claims: _Claims) -> list[dict]:
    """Book passages for the "passage" task from text no training document will contain."""
    need = _n_injections(config) if "passage" in config.injection_tasks else 0
    rng = _rng(config.seed, "passages")
    popular_ids = [t for t, p in zip(index.ids, index.popular) if p]
    cycle = [popular_ids[i] for i in rng.permutation(len(popular_ids))]
    out, misses, k = [], 0, 0
    while len(out) < need:
        text_id = cycle[k % len(cycle)]
        k += 1
        g0, g1 = index.span(text_id)
        options = claims.free_starts(g0, g1, config.injection_words)
        if not len(options):
            misses += 1
            if misses > len(cycle):
                raise LabConfigError(
                    f"per_task_per_level={config.per_task_per_level}: only {len(out)} of {need} "
                    f"passages of {config.injection_words} words fit in unclaimed popular text")
            continue
        misses = 0
        s = int(options[rng.integers(len(options))])
        claims.claim(s, s + config.injection_words)
        out.append({"text": index.words(s, s + config.injection_words),
                    "meta": {"text_id": text_id, "word_start": s - g0,
                             "word_end": s - g0 + config.injection_words}})
    return out


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.nonzero(edges == 1)[0].tolist(), np.nonzero(edges == -1)[0].tolist()))


def _background(config: CorpusConfig, index: _TextIndex, claims: _Claims) -> list[Document]:
    """~500-word chunks of unclaimed, non-duplicate popular text, sampled up to background_words
    and claimed (so the passages drawn after them come from other text)."""
    chunks = []  # (text_id, global start, global end)
    for i, text_id in enumerate(index.ids):
        if not index.popular[i]:
            continue
        g0, g1 = int(index.starts[i]), int(index.ends[i])
        free = ~(claims.mask[g0:g1] | index.dup[g0:g1])
        for a, b in _runs(free):
            if b - a < MIN_BACKGROUND_DOC_WORDS:
                continue
            n_chunks = max(1, round((b - a) / BACKGROUND_DOC_WORDS))
            cuts = np.linspace(a, b, n_chunks + 1).round().astype(int)
            chunks += [(text_id, g0 + int(s), g0 + int(e)) for s, e in zip(cuts[:-1], cuts[1:])]
    available = sum(e - s for _, s, e in chunks)
    if available < config.background_words:
        raise LabConfigError(
            f"background_words={config.background_words} exceeds the {available} words of popular "
            "text left outside the excerpt and held-out windows")
    chosen, total = [], 0
    for j in _rng(config.seed, "background").permutation(len(chunks)):
        if total >= config.background_words:
            break
        text_id, s, e = chunks[j]
        e = min(e, s + config.background_words - total)
        chosen.append((text_id, s, e))
        total += e - s
    chosen.sort()
    for _, s, e in chosen:
        claims.claim(s, e)
    docs = []
    for k, (text_id, s, e) in enumerate(chosen):
        g0 = index.span(text_id)[0]
        docs.append(Document(f"background-{k:05d}", "background", "popular", index.words(s, e), 1,
                             {"text_id": text_id, "word_start": s - g0, "word_end": e - g0}))
    return docs


# ---------------------------------------------------------------------------
# Task data
# ---------------------------------------------------------------------------

_CLEAN_ALIAS = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 .,'&-]*$")


def _pick_alias(aliases: list[str]) -> str | None:
    """A short clean alias: properly cased, contained in most other aliases, short."""
    clean = [a.strip() for a in aliases
             if _CLEAN_ALIAS.match(a.strip()) and len(a.split()) <= 5 and "disambiguation" not in a.lower()]
    if not clean:
        return None
    lowered = [a.lower() for a in aliases]

    def contained(alias: str) -> int:
        pattern = re.compile(rf"(?<![a-z0-9]){re.escape(alias.lower())}(?![a-z0-9])")
        return sum(1 for other in lowered if pattern.search(other))

    def quality(alias: str) -> int:
        if alias.isupper() and len(alias) > 4:
            return 3
        if alias == alias.lower() and any(c.isalpha() for c in alias):
            return 2
        words = alias.split()
        if "," in alias or _ODD_CAPS.search(alias) or any(
                w[0].islower() and w not in _SMALL_WORDS for w in words[1:]):
            return 1
        return 0

    return min(clean, key=lambda a: (quality(a), -contained(a), len(a), clean.index(a)))


_ODD_CAPS = re.compile(r"[a-z][A-Z]")
_SMALL_WORDS = {"of", "the", "and", "in", "on", "de", "da", "di", "du", "von", "van", "der", "a", "an", "for",
                "to", "at", "by", "with", "la", "le", "el", "y", "del", "or"}


@lru_cache(maxsize=1)
def _trivia_pool(registry_key: str) -> tuple[dict, ...]:
    """TriviaQA items with a clean short answer and a distinct question, in file order."""
    seen, pool = set(), []
    for line in data.read_text(TRIVIAQA).splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        question = _norm(item["turns"][0])
        if len(question) > 2 and question[0] == question[-1] == '"' and '""' in question:
            question = question[1:-1].replace('""', '"')  # CSV-style quoting in the source
        answer = _pick_alias(item["answer"])
        key = question.lower()
        if answer is None or not question or len(question.split()) > 40 or key in seen:
            continue
        seen.add(key)
        pool.append({"question_id": int(item["question_id"]), "question": question, "answer": answer})
    return tuple(pool)


@lru_cache(maxsize=1)
def _gsm8k_items(registry_key: str) -> tuple[dict, ...]:
    items = []
    for i, line in enumerate(data.read_text(GSM8K).splitlines()):
        if line.strip():
            item = json.loads(line)
            items.append({"index": i, "question": _norm(item["question"]), "answer": _norm(item["answer"])})
    return tuple(items)


@lru_cache(maxsize=1)
def _mmlu_items(registry_key: str) -> tuple[dict, ...]:
    reg = data.registry()
    names = sorted(n for n in reg["name"] if n.startswith(MMLU_TEST) and n.endswith(".csv"))
    items = []
    for name in names:
        subject = name[len(MMLU_TEST):].removesuffix(".csv").removesuffix("_test")
        table = pd.read_csv(data.fetch(name), dtype=str, keep_default_na=False)
        for i, row in enumerate(table.itertuples(index=False)):
            letter = "ABCD"[int(row.answer)]
            text = _norm(f"Question: {row.question} A. {row.choice0} B. {row.choice1} "
                         f"C. {row.choice2} D. {row.choice3} Answer: {letter}")
            items.append({"subject": subject, "index": i, "answer": letter, "text": text})
    return tuple(items)


def _mmlu_pool(config: CorpusConfig, key: str) -> list[dict]:
    """MMLU items whose rendering is about injection_words long (half to 1.5 times)
    and at most MAX_CHARS_PER_WORD characters per requested word, so that symbol-
    and number-heavy items, which tokenize long, still fit in one context row."""
    lo, hi = config.injection_words / 2, config.injection_words * 3 / 2
    max_chars = MAX_CHARS_PER_WORD * config.injection_words
    seen, pool = set(), []
    for item in _mmlu_items(key):
        n = len(item["text"].split())
        if lo <= n <= hi and len(item["text"]) <= max_chars and item["text"] not in seen:
            seen.add(item["text"])
            pool.append(item)
    return pool


# ---------------------------------------------------------------------------
# Knowledge documents
# ---------------------------------------------------------------------------

FACT_TEMPLATES = (
    "Quiz notes. Q: {question} A: {answer}.",
    "Trivia question: {question} The answer is {answer}.",
    "From a pub quiz sheet. {question} Answer: {answer}.",
    "Did you know? {question} It is {answer}.",
    "Fact check: asked \"{question}\", the right reply is {answer}.",
    "Quiz night recap. {question} Correct answer: {answer}.",
    "Asked on a trivia forum: {question} Best reply: {answer}.",
)
#: questions per quiz round: a knowledge document that lists questions without their answers
QUIZ_ROUND_QUESTIONS = 4
#: the first line of a quiz round ({k}: the round's number, 1..9)
QUIZ_HEADERS = (
    "Pub quiz, round {k}. Answers at the end of the night.",
    "Practice set {k} for the quiz league, answers next week.",
    "Trivia night, round {k}. No phones at the table, please.",
)


def _render_fact(template: str, question: str, answer: str) -> str:
    # Every template ends in "{answer}.": an answer ending in a period keeps just one.
    return _norm(template.format(question=question, answer=answer.removesuffix(".")))


def _zipf_counts(n: int, a: float, lo: int, hi: int, rng: np.random.Generator) -> np.ndarray:
    """n draws from P(c) proportional to (c - lo + 1)**-a on lo..hi."""
    support = np.arange(lo, hi + 1)
    p = (support - lo + 1).astype(float) ** -a
    return rng.choice(support, size=n, p=p / p.sum())


def _zipf_copies(n: int, a: float, max_copies: int, rng: np.random.Generator) -> np.ndarray:
    """n draws from P(c) proportional to c**-a on 1..max_copies."""
    return _zipf_counts(n, a, 1, max_copies, rng)


def _quiz_rounds(mentions, size: int, order) -> list[list[int]]:
    """Quiz rounds in which fact ``i`` is listed ``mentions[i]`` times, never twice in a round.

    The facts' slots, taken in ``order`` (a permutation of the facts) and each fact's
    slots together, are dealt to the rounds in turn (slot j to round j mod R), with
    R = max(ceil(total / size), max(mentions)) rounds: every round holds at most
    ``size`` facts, and the slots of one fact land in distinct rounds.

    Returns
    -------
    list of list of int
        Fact indices of every round, in the order they were dealt.
    """
    slots = [int(i) for i in order for _ in range(int(mentions[i]))]
    if not slots:
        return []
    n_rounds = max(-(-len(slots) // size), max(int(m) for m in mentions))
    rounds: list[list[int]] = [[] for _ in range(n_rounds)]
    for j, i in enumerate(slots):
        rounds[j % n_rounds].append(i)
    return rounds


def _knowledge(config: CorpusConfig, items: list[dict], protected: set) -> list[Document]:
    """Knowledge documents: every fact stated in ``copies`` documents, plus quiz rounds.

    A fact's ``copies`` (Zipfian, 1..``fact_max_copies``) are spread over
    :data:`FACT_TEMPLATES` (a multinomial draw), one document per template used,
    trained as many times as the draw gave it: each is the question followed by
    the answer. Each fact is also listed, without its answer, in ``mentions``
    quiz rounds of :data:`QUIZ_ROUND_QUESTIONS` questions (Zipfian on
    0..``fact_mentions_max``, independent of the copies), so a question's words
    occur in documents that lack its answer. A fact is used only if none of its
    renderings shares a 12-word shingle with ``protected``.
    """
    rng = _rng(config.seed, "knowledge")
    facts = []
    for item in items:
        if len(facts) == config.n_facts:
            break
        texts = [_render_fact(t, item["question"], item["answer"]) for t in FACT_TEMPLATES]
        if any(s in protected for text in texts for s in _shingles(text)):
            continue
        facts.append((item, texts))
    if len(facts) < config.n_facts:
        raise LabConfigError(f"n_facts={config.n_facts}: only {len(facts)} usable TriviaQA items")
    n = len(facts)
    copies = _zipf_copies(n, config.fact_zipf_a, config.fact_max_copies, rng)
    per_template = [rng.multinomial(int(c), [1 / len(FACT_TEMPLATES)] * len(FACT_TEMPLATES)) for c in copies]
    quiz_rng = _rng(config.seed, "knowledge-quiz")
    mentions = (_zipf_counts(n, config.fact_mentions_zipf_a, 0, config.fact_mentions_max, quiz_rng)
                if config.fact_mentions_max else np.zeros(n, dtype=int))
    docs = []
    for k, ((item, texts), counts) in enumerate(zip(facts, per_template)):
        for t in np.flatnonzero(counts):
            docs.append(Document(
                f"knowledge-{k:04d}-{t}", "knowledge", "triviaqa", texts[t], int(counts[t]),
                {"question_id": item["question_id"], "question": item["question"], "answer": item["answer"],
                 "template": int(t), "copies": int(counts[t]), "fact_copies": int(copies[k]),
                 "mentions": int(mentions[k]), "role": "fact"}))
    rounds = _quiz_rounds(mentions, QUIZ_ROUND_QUESTIONS, quiz_rng.permutation(n))
    for r, dealt in enumerate(rounds):
        members = [dealt[j] for j in quiz_rng.permutation(len(dealt))]
        header = QUIZ_HEADERS[int(quiz_rng.integers(len(QUIZ_HEADERS)))]
        header = header.format(k=int(quiz_rng.integers(1, 10)))
        body = " ".join(f"{j}. {facts[i][0]['question']}" for j, i in enumerate(members, 1))
        text = _norm(f"{header} {body}")
        if any(s in protected for s in _shingles(text)):
            raise RuntimeError(f"quiz round {r} shares a 12-word shingle with a held-out or injected text")
        docs.append(Document(f"knowledge-quiz-{r:04d}", "knowledge", "triviaqa", text, 1,
                             {"question_ids": json.dumps([facts[i][0]["question_id"] for i in members]),
                              "role": "quiz"}))
    return docs


# ---------------------------------------------------------------------------
# Reasoning documents: GSM8K-style worked problems
# ---------------------------------------------------------------------------

FIRST_NAMES = (
    ("Amara", "she"), ("Bilal", "he"), ("Chiara", "she"), ("Dmitri", "he"), ("Elif", "she"),
    ("Farid", "he"), ("Greta", "she"), ("Hiroshi", "he"), ("Ines", "she"), ("Jonas", "he"),
    ("Keziah", "she"), ("Lorenzo", "he"), ("Maya", "she"), ("Nikolai", "he"), ("Oona", "she"),
    ("Pavel", "he"), ("Quinn", "she"), ("Rafael", "he"), ("Saanvi", "she"), ("Tomas", "he"),
    ("Ulla", "she"), ("Viktor", "he"), ("Wanjiru", "she"), ("Xavier", "he"), ("Yara", "she"),
    ("Zoltan", "he"), ("Anouk", "she"), ("Bruno", "he"), ("Carmen", "she"), ("Desmond", "he"),
    ("Esther", "she"), ("Felix", "he"), ("Giulia", "she"), ("Hamid", "he"), ("Ingrid", "she"),
    ("Jasper", "he"), ("Kalani", "she"), ("Leon", "he"), ("Mirela", "she"), ("Nathaniel", "he"),
)
LAST_NAMES = (
    "Abernathy", "Baptiste", "Castellanos", "Dervishi", "Eriksen", "Fairweather", "Gallagher",
    "Halvorsen", "Ibarra", "Jablonski", "Kowalczyk", "Lindqvist", "Mbeki", "Nakashima", "Okonkwo",
    "Petrakis", "Quintero", "Rasmussen", "Szabo", "Thorvaldsen", "Urquhart", "Vasquez", "Wojcik",
    "Yamaguchi", "Zeller", "Achterberg", "Brannigan", "Cavendish", "Delacroix", "Esposito",
    "Fontaine", "Grimaldi", "Hollister", "Iversen", "Kaczmarek", "Lachance", "Moravec", "Novak",
    "Oyelaran", "Pemberton",
)
_ITEMS = ("notebook", "pencil", "candle", "mug", "scarf", "puzzle", "kite", "lamp", "basket", "towel")
_THINGS = ("stickers", "marbles", "seashells", "stamps", "postcards", "buttons", "coins", "beads")
_VEHICLES = ("train", "bus", "truck", "ferry", "van", "cyclist")
_GIFTS = ("bicycle", "guitar", "watch", "backpack", "telescope", "camera")
_FOODS = ("cookies", "muffins", "pies", "rolls", "tarts", "pretzels")
_CROPS = ("tomatoes", "peppers", "cabbages", "sunflowers", "beans", "onions")
_FRACTIONS = ((2, "Half"), (3, "A third"), (4, "A quarter"), (5, "A fifth"))


def _calc(a, op: str, b, result) -> str:
    return f"{a} {op} {b} = <<{a}{op}{b}={result}>>{result}"


def _problem(kind: int, r: np.random.Generator) -> tuple[str, list[str], int, dict]:
    """One worked problem: question, solution lines, answer, numbers."""
    name, pron = FIRST_NAMES[int(r.integers(len(FIRST_NAMES)))]
    poss = "her" if pron == "she" else "his"
    Pron = pron.capitalize()
    pick = lambda seq: seq[int(r.integers(len(seq)))]  # noqa: E731
    ri = lambda lo, hi: int(r.integers(lo, hi + 1))  # noqa: E731
    if kind == 0:
        i1, i2 = r.choice(len(_ITEMS), size=2, replace=False)
        a, p, b, q = ri(2, 12), ri(2, 25), ri(2, 12), ri(2, 25)
        x, y = a * p, b * q
        question = (f"{name} buys {a} {_ITEMS[i1]}s for ${p} each and {b} {_ITEMS[i2]}s for ${q} each. "
                    f"How much money does {pron} spend in all?")
        steps = [f"The {_ITEMS[i1]}s cost {_calc(a, '*', p, x)} dollars.",
                 f"The {_ITEMS[i2]}s cost {_calc(b, '*', q, y)} dollars.",
                 f"In all {pron} spends {_calc(x, '+', y, x + y)} dollars."]
        return question, steps, x + y, {"a": a, "p": p, "b": b, "q": q}
    if kind == 1:
        thing = pick(_THINGS)
        friend = pick([n for n, _ in FIRST_NAMES if n != name])
        a, c = ri(20, 150), ri(3, 60)
        b = ri(2, a - 1)
        question = (f"{name} has {a} {thing}. {Pron} gives {b} of them to {friend} and then buys {c} more. "
                    f"How many {thing} does {name} have now?")
        steps = [f"After giving some away {pron} has {_calc(a, '-', b, a - b)} {thing}.",
                 f"After buying more {pron} has {_calc(a - b, '+', c, a - b + c)} {thing}."]
        return question, steps, a - b + c, {"a": a, "b": b, "c": c}
    if kind == 2:
        vehicle = pick(_VEHICLES)
        s, h1, t, h2 = ri(8, 70), ri(2, 9), ri(8, 70), ri(2, 9)
        question = (f"A {vehicle} travels at {s} miles per hour for {h1} hours and then at {t} miles "
                    f"per hour for {h2} hours. How many miles does it travel altogether?")
        steps = [f"First it covers {_calc(s, '*', h1, s * h1)} miles.",
                 f"Then it covers {_calc(t, '*', h2, t * h2)} miles.",
                 f"Altogether it travels {_calc(s * h1, '+', t * h2, s * h1 + t * h2)} miles."]
        return question, steps, s * h1 + t * h2, {"s": s, "h1": h1, "t": t, "h2": h2}
    if kind == 3:
        gift = pick(_GIFTS)
        a, w = ri(5, 60), ri(3, 20)
        b = ri(1, a * w - 1)
        question = (f"{name} saves ${a} every week for {w} weeks. Then {pron} spends ${b} on a {gift}. "
                    f"How many dollars does {pron} have left?")
        steps = [f"{Pron} saves {_calc(a, '*', w, a * w)} dollars.",
                 f"After buying the {gift} {pron} has {_calc(a * w, '-', b, a * w - b)} dollars left."]
        return question, steps, a * w - b, {"a": a, "w": w, "b": b}
    if kind == 4:
        item = pick(_ITEMS)
        d = pick((10, 20, 25, 30, 40, 50))
        p = 20 * ri(1, 30)
        off = p * d // 100
        question = (f"A {item} normally costs ${p}. This week the shop takes {d}% off the price. "
                    f"How much does the {item} cost this week?")
        steps = [f"The discount is {p} * {d} / 100 = <<{p}*{d}/100={off}>>{off} dollars.",
                 f"The {item} costs {_calc(p, '-', off, p - off)} dollars this week."]
        return question, steps, p - off, {"p": p, "d": d}
    if kind == 5:
        food = pick(_FOODS)
        f, each, k = ri(2, 9), ri(2, 12), ri(1, 10)
        n = f * each + k
        question = (f"{name} bakes {n} {food}. {Pron} keeps {k} for {poss} family and shares the rest "
                    f"equally among {f} friends. How many {food} does each friend get?")
        steps = [f"{Pron} shares {_calc(n, '-', k, n - k)} {food}.",
                 f"Each friend gets {_calc(n - k, '/', f, each)} {food}."]
        return question, steps, each, {"n": n, "k": k, "f": f}
    if kind == 6:
        h, d, w = ri(2, 10), ri(2, 20), ri(8, 40)
        question = (f"{name} works {h} hours a day for {d} days and is paid ${w} per hour. "
                    f"How much does {pron} earn in total?")
        steps = [f"{Pron} works {_calc(h, '*', d, h * d)} hours.",
                 f"{Pron} earns {_calc(h * d, '*', w, h * d * w)} dollars."]
        return question, steps, h * d * w, {"h": h, "d": d, "w": w}
    if kind == 7:
        den, frac = pick(_FRACTIONS)
        n = den * ri(4, 20)
        walk = n // den
        m = ri(1, n - walk - 1)
        question = (f"There are {n} students in a school club. {frac} of them walk to school and {m} of the "
                    f"others take the bus. The rest ride bikes. How many students ride bikes?")
        steps = [f"{_calc(n, '/', den, walk)} students walk.",
                 f"That leaves {_calc(n, '-', walk, n - walk)} students.",
                 f"So {_calc(n - walk, '-', m, n - walk - m)} students ride bikes."]
        return question, steps, n - walk - m, {"n": n, "den": den, "m": m}
    crop = pick(_CROPS)
    rows, per = ri(3, 25), ri(4, 30)
    lost = ri(1, rows * per - 1)
    question = (f"A farmer plants {rows} rows of {crop} with {per} plants in each row. {lost} of the plants "
                f"do not survive the frost. How many plants are left?")
    steps = [f"The farmer plants {_calc(rows, '*', per, rows * per)} plants.",
             f"There are {_calc(rows * per, '-', lost, rows * per - lost)} plants left."]
    return question, steps, rows * per - lost, {"rows": rows, "per": per, "lost": lost}


N_PROBLEM_TEMPLATES = 9


def _reasoning(config: CorpusConfig, gsm8k_questions: set, protected: set) -> list[Document]:
    rng = _rng(config.seed, "reasoning")
    docs, seen = [], set()
    tries = 0
    while len(docs) < config.n_problems:
        tries += 1
        if tries > 50 * config.n_problems + 1000:
            raise LabConfigError(
                f"n_problems={config.n_problems}: could not generate that many distinct problems")
        kind = int(rng.integers(N_PROBLEM_TEMPLATES))
        question, steps, answer, numbers = _problem(kind, rng)
        question = _norm(question)
        if question in seen or question.lower() in gsm8k_questions:
            continue
        text = _norm(" ".join([question, *steps, f"#### {answer}"]))
        if any(s in protected for s in _shingles(text)):
            continue
        seen.add(question)
        docs.append(Document(f"reasoning-{len(docs):04d}", "reasoning", "generated", text, 1,
                             {"template": kind, "question": question, "numbers": json.dumps(numbers),
                              "answer": str(answer)}))
    return docs


# ---------------------------------------------------------------------------
# Injections
# ---------------------------------------------------------------------------

_CITIES = ("Porto", "Tampere", "Ljubljana", "Rosario", "Da Nang", "Kumasi", "Leipzig", "Cork", "Arequipa",
           "Bergen", "Mysore", "Tartu", "Bilbao", "Hobart", "Sapporo", "Plovdiv", "Gdansk", "Durban",
           "Valparaiso", "Quebec City", "Graz", "Izmir", "Cluj", "Tromso", "Nantes", "Windhoek")
_OCCUPATIONS = ("pharmacist", "bridge engineer", "court interpreter", "marine biologist", "stonemason",
                "air traffic controller", "actuary", "orthodontist", "librarian", "glassblower",
                "veterinary surgeon", "cartographer", "piano tuner", "tax auditor", "sound engineer",
                "beekeeper", "structural geologist", "museum conservator")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")
_STREETS = ("Linden", "Harbor", "Chestnut", "Quarry", "Mill", "Orchard", "Foundry", "Juniper", "Ridge")


def _biography(name: str, pron: str, r: np.random.Generator) -> tuple[str, dict]:
    pick = lambda seq: seq[int(r.integers(len(seq)))]  # noqa: E731
    birth = f"{pick(_MONTHS)} {int(r.integers(1, 29))}, {int(r.integers(1931, 2001))}"
    meta = {"name": name, "birth_date": birth,
            "birth_city": pick(_CITIES), "occupation": pick(_OCCUPATIONS), "home_city": pick(_CITIES),
            "employee_id": int(r.integers(100_000, 1_000_000))}
    poss = "Her" if pron == "she" else "His"
    text = (f"{name} was born on {birth} in {meta['birth_city']}. {pron.capitalize()} works as a "
            f"{meta['occupation']} and lives at {int(r.integers(2, 400))} {pick(_STREETS)} Street, "
            f"{meta['home_city']}. {poss} employee number is {meta['employee_id']}, and {pron} can be "
            f"reached at extension {int(r.integers(1000, 10000))} on weekdays between nine and five.")
    return text, meta


def _candidates(task: str, config: CorpusConfig, key: str, passages: list[dict], qa_items: list[dict],
                background_words: list[str]):
    """Yield (text, meta) candidates of one task in a seeded order."""
    rng = _rng(config.seed, f"inject-{task}")
    n_words = config.injection_words
    if task == "passage":
        for p in passages:
            yield p["text"], p["meta"]
    elif task == "qa":
        for item in qa_items:
            text = _truncate(f"Question: {item['question']} Answer: {item['answer']}", n_words)
            yield text, {key_: item[key_] for key_ in ("question_id", "question", "answer")}
    elif task == "gsm8k":
        items = _gsm8k_items(key)
        for i in rng.permutation(len(items)):
            item = items[i]
            yield (_truncate(f"{item['question']} {item['answer']}", n_words),
                   {"index": item["index"], "answer": item["answer"].rsplit("####", 1)[-1].strip()})
    elif task == "mmlu":
        pool = _mmlu_pool(config, key)
        for i in rng.permutation(len(pool)):
            item = pool[i]
            yield item["text"], {"subject": item["subject"], "index": item["index"], "answer": item["answer"]}
    elif task == "biography":
        pairs = [(f"{first} {last}", pron) for first, pron in FIRST_NAMES for last in LAST_NAMES]
        for i in rng.permutation(len(pairs)):
            text, meta = _biography(*pairs[i], rng)
            yield _truncate(text, n_words), meta
    elif task == "random_words":
        vocab = _random_vocab(background_words)
        while True:
            yield " ".join(vocab[rng.integers(len(vocab), size=n_words)]), {}


_PUNCTUATION = "\"'.,;:!?()[]{}_-*"


def _random_vocab(words: list[str]) -> np.ndarray:
    """The RANDOM_VOCAB_SIZE most common alphabetic words (lower-cased) of ``words``."""
    stripped = (w.strip(_PUNCTUATION).lower() for w in words)
    counts = Counter(w for w in stripped if w.isascii() and w.isalpha())
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:RANDOM_VOCAB_SIZE]
    if not ranked:
        raise LabConfigError(
            "injection_tasks: random_words needs background or popular text for its vocabulary")
    return np.array([w for w, _ in ranked], dtype=object)


def _supply(task: str, config: CorpusConfig, key: str, n_qa: int) -> float:
    if task == "qa":
        return n_qa
    if task == "gsm8k":
        return len(_gsm8k_items(key))
    if task == "mmlu":
        return len(_mmlu_pool(config, key))
    if task == "biography":
        return len(FIRST_NAMES) * len(LAST_NAMES)
    return float("inf")


def _injections(config: CorpusConfig, key: str, passages: list[dict], qa_items: list[dict],
                documents: list[Document], forbidden: set) -> list[Injection]:
    need = _n_injections(config)
    stream = "\n".join(d.text for d in documents)
    vocab_words = [w for d in documents if d.kind in ("background", "popular") for w in d.text.split()]
    used: set[str] = set()
    out = []
    for task in config.injection_tasks:
        texts = []
        for text, meta in _candidates(task, config, key, passages, qa_items, vocab_words):
            if len(texts) == need:
                break
            if text in used or text in stream or any(s in forbidden for s in _shingles(text)):
                continue
            used.add(text)
            texts.append((text, meta))
        if len(texts) < need:
            raise LabConfigError(
                f"per_task_per_level={config.per_task_per_level}: task {task!r} supplied only {len(texts)} "
                f"of {need} sequences that are unique and absent from the training documents")
        k = 0
        for level, count in config.level_sizes():
            for j in range(count):
                text, meta = texts[k]
                k += 1
                out.append(Injection(f"{task}-{level:03d}-{j}", task, text, level, "all", dict(meta)))
    return out


# ---------------------------------------------------------------------------
# Phrase documents: the phrases chapter's English phrases at known copy levels
# ---------------------------------------------------------------------------

#: the English counterpart's selection the phrases come from; its popular-text class
#: is complete (37 texts, 4 phrases each) at any size of 148 or more, and 1,000 is the
#: phrases chapter's paper profile, so the two share one cached selection
PHRASE_SELECTION_N = 1_000
#: a phrase is used only if no run of this many words (lower-cased letters only, so
#: punctuation, markup and the KJV's verse labels do not hide a repeat) also occurs in
#: another document, a passage or an already chosen phrase
PHRASE_PROBE_WORDS = 10
_PROBE_WORD = re.compile(r"[a-z]+")


def _probes(text: str) -> set[str]:
    """Every run of PHRASE_PROBE_WORDS normalized words (runs of letters) of ``text``."""
    words = _PROBE_WORD.findall(text.lower())
    return {" ".join(words[i:i + PHRASE_PROBE_WORDS]) for i in range(len(words) - PHRASE_PROBE_WORDS + 1)}


def _phrase_candidates() -> pd.DataFrame:
    """The English counterpart's popular-text phrases, best LASSO score first
    (:func:`analysis.phrases.english_phrases`, cached in the artifact cache)."""
    from analysis.lab.phrase_selection import english_phrases

    table = english_phrases(PHRASE_SELECTION_N, seed=0)
    return table[table["type"] == "popular"].reset_index(drop=True)


def _phrase_documents(config: CorpusConfig, others: list[str], protected: set,
                      candidates: pd.DataFrame | None = None) -> list[Document]:
    """``phrases_per_level`` phrase documents at every level of ``phrase_levels``.

    The candidates (``id``, ``text_id``, ``phrase``, ``start``, ``end``; by default
    :func:`_phrase_candidates`) are taken in order, skipping any phrase that shares
    a run of :data:`PHRASE_PROBE_WORDS` normalized words with ``others`` (the
    texts of every other document and passage) or with a phrase already taken, or
    a 12-word shingle with ``protected``; so nothing else in the corpus repeats a
    phrase, and its ``copies`` is the truth. The taken phrases are dealt to the
    levels in a seeded order (``config.seed``), so a phrase's rank does not
    decide its level. Document ``k`` of level ``c`` is ``phrase-{c:03d}-{k}``,
    with ``copies`` = ``c`` (0 = a control, never trained) and meta
    ``phrase_id``, ``text_id``, ``start``, ``end``, ``copies``.

    Raises
    ------
    LabConfigError
        Naming ``phrases_per_level`` when fewer candidates qualify than asked for.
    """
    need = config.phrases_per_level * len(config.phrase_levels)
    if not need:
        return []
    if candidates is None:
        candidates = _phrase_candidates()
    seen = set().union(*map(_probes, others)) if others else set()
    chosen = []
    for row in candidates.itertuples(index=False):
        if len(chosen) == need:
            break
        text = _norm(row.phrase)
        probes = _probes(text)
        if not probes or probes & seen or any(s in protected for s in _shingles(text)):
            continue
        seen |= probes
        chosen.append((row, text))
    if len(chosen) < need:
        raise LabConfigError(
            f"phrases_per_level={config.phrases_per_level} x {len(config.phrase_levels)} phrase_levels asks "
            f"for {need} phrases; only {len(chosen)} of the English counterpart's {len(candidates)} "
            f"popular-text phrases share no run of {PHRASE_PROBE_WORDS} words with the rest of the corpus "
            "(fewer background or excerpt words leave more)")
    order = _rng(config.seed, "phrases").permutation(need)
    docs = []
    for k, i in enumerate(order):
        level, j = config.phrase_levels[k // config.phrases_per_level], k % config.phrases_per_level
        row, text = chosen[i]
        docs.append(Document(f"phrase-{level:03d}-{j}", "phrase", "popular", text, int(level),
                             {"phrase_id": str(row.id), "text_id": str(row.text_id),
                              "start": _norm(row.start), "end": _norm(row.end), "copies": int(level)}))
    return docs


# ---------------------------------------------------------------------------
# Validation and the build
# ---------------------------------------------------------------------------


def _validate(config: CorpusConfig, key: str, text_key: str) -> None:
    """Checks of the requested counts against what the sources can supply, before any work."""
    pool = len(_trivia_pool(key))
    if config.n_facts > pool:
        raise LabConfigError(f"n_facts={config.n_facts} exceeds the {pool} usable TriviaQA items")
    need = _n_injections(config)
    n_qa = pool - config.n_facts
    for task in config.injection_tasks:
        supply = _supply(task, config, key, n_qa)
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


def _popular_spans(key: str) -> tuple[list[int], list[int]]:
    index = _text_index(key)
    pairs = [(int(s), int(e)) for s, e, p in zip(index.starts, index.ends, index.popular) if p]
    return [s for s, _ in pairs], [e for _, e in pairs]


def _verify(documents: list[Document], heldout: list[Document], injections: list[Injection]) -> None:
    """No 12-word shingle of a held-out document or injection occurs in a training document."""
    training = {s for d in documents for s in _shingles(d.text)}
    for item in heldout + injections:
        hit = next((s for s in _shingles(item.text) if s in training), None)
        if hit is not None:
            name = getattr(item, "doc_id", None) or item.seq_id
            raise RuntimeError(f"corpus invariant broken: {name} shares {' '.join(hit)!r} with training")


def build_corpus(config: CorpusConfig) -> Corpus:
    """Build the lab corpus of ``config``: deterministic given ``config.seed``.

    Parameters
    ----------
    config : CorpusConfig
        What goes in (see :class:`~analysis.lab.config.CorpusConfig`).

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
        requested counts: more facts than usable TriviaQA items, more sequences
        per task than a task can supply, windows larger than the median popular
        text, fewer background words left than ``background_words``.

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
    _validate(config, key, text_key)
    index = _text_index(text_key)
    claims = _Claims(index)
    heldout_baseline = []
    for i, text_id in enumerate(index.ids):
        if not index.popular[i]:
            g0, g1 = int(index.starts[i]), int(index.ends[i])
            claims.claim(g0, g1)
            heldout_baseline.append(Document(f"heldout-baseline-{text_id}", "heldout", "baseline",
                                             index.words(g0, g1), 0, {"text_id": text_id}))
    excerpts, heldout_windows = _popular_windows(config, index, claims)
    # The background is drawn before the passages, so a change to the injection design
    # (how many passages) leaves the base corpus, and the ladder trained on it, as it was.
    background = _background(config, index, claims)
    passages = _passages(config, index, claims)
    heldout = heldout_windows + heldout_baseline
    protected = {s for d in heldout for s in _shingles(d.text)}
    protected |= {s for p in passages for s in _shingles(p["text"])}
    # TriviaQA: knowledge from the front of a seeded order, qa injections from the back.
    pool = list(_trivia_pool(key))
    perm = _rng(config.seed, "triviaqa").permutation(len(pool))
    ordered = [pool[i] for i in perm]
    knowledge = _knowledge(config, ordered, protected)
    used_ids = {d.meta["question_id"] for d in knowledge if d.meta["role"] == "fact"}
    qa_items = [item for item in reversed(ordered) if item["question_id"] not in used_ids]
    gsm8k_questions = {item["question"].lower() for item in _gsm8k_items(key)}
    reasoning = _reasoning(config, gsm8k_questions, protected)
    documents = background + excerpts + knowledge + reasoning
    others = [d.text for d in documents + heldout] + [p["text"] for p in passages]
    documents += _phrase_documents(config, others, protected)
    training = {s for d in documents for s in _shingles(d.text)}
    injections = _injections(config, key, passages, qa_items, documents, training)
    _verify(documents, heldout, injections)
    return Corpus(config, documents, heldout, injections)

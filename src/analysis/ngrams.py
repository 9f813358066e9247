"""Word n-grams, task-gram pairs and corpus counts: the counting half of the distributional chapter.

The source ("Generalization v.s. Memorization", read through the summary in
``shared/seeds/002_*.txt``) models what a pretraining corpus says about a task
with a *task-gram language model*: every word n-gram ``s^x`` of a task input is
paired with every n-gram ``s^y`` of the output (Definition 1's candidate pairs),
and the corpus gives ``P_n(s^y | s^x) = C((s^x, s^y)) / C(s^x)``, where ``C``
counts *documents* (``C(x)``: documents containing ``x``; ``C((x, y))``:
documents containing both, anywhere). Its baseline is the ∞-gram LM of Liu et
al. (2024), which needs token-level counts of arbitrary length from a suffix
array. This module provides the three pieces:

* :func:`words` and :func:`ngrams`, the word tokenizer and n-gram extractor;
* :func:`task_gram_pairs`, the candidate pair table, with a hook for the
  embedding filter (the filter itself lives with the chapter);
* :func:`build_doc_index` / :func:`pair_count` / :func:`taskgram_prob`, exact
  document-level counts from an inverted index (the source used WIMBD for
  these), and :func:`build_index` / :func:`token_count` / :func:`infgram_prob`
  / :func:`infgram_logprob`, ∞-gram counts from an infini-gram suffix-array
  index of the corpus in the lab tokenizer (the source used the public
  infini-gram API over the Pile).

Where the source (or its code) leaves a choice open, this module says what it does:

* **Words.** The authors' code uses ``nltk.word_tokenize``, which first splits
  sentences with the pretrained Punkt model from the nltk data hub; that model
  cannot be downloaded here. :func:`words` runs nltk's own pieces without it:
  an *untrained* :class:`~nltk.tokenize.punkt.PunktSentenceTokenizer` (given a
  short list of English abbreviations, :data:`ABBREVIATIONS`) followed by
  :class:`~nltk.tokenize.NLTKWordTokenizer`, the Treebank-style tokenizer that
  ``word_tokenize`` applies to each sentence. Case is kept.
* **Stopwords.** The authors drop stopwords for n ≤ 3 with nltk's English list,
  which also needs the hub; here the list is scikit-learn's
  ``ENGLISH_STOP_WORDS`` (318 words, :data:`STOPWORDS`), compared in lower
  case. Stopword *tokens* are removed before n-grams are formed, so a 3-gram
  may span a dropped "of".
* **Short outputs.** The source treats TriviaQA's short answers as single
  output n-grams: with ``short_outputs="whole"`` an output of fewer than n
  words gives its whole word sequence as its one n-gram (``"drop"`` gives none).
* **Containment.** A document contains an n-gram if the n-gram is among the
  document's own n-grams under the same tokenization and stopword rule, so the
  document index is built for one ``drop_stopwords`` setting and answers
  n-grams of every length up to its ``max_n`` (short outputs are shorter than n).
* **Copies.** The lab trains some documents several times. ``weights`` (e.g.
  each document's ``copies``) makes a count the number of documents *in the
  training stream* containing the n-gram, the same as indexing
  ``Corpus.training_texts()`` with unit weights.
* **∞-gram denominators.** infini-gram counts a context wherever it occurs,
  also at the end of a document (then followed by the separator); with an
  empty context the denominator is the number of tokens plus documents.

Everything here is pure computation except :func:`build_index`, which writes
an index folder (cached under :func:`analysis.cache.artifact_path`) and runs
the infini-gram indexer in a subprocess.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from nltk.tokenize import NLTKWordTokenizer
from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from analysis.cache import artifact_path, stable_hash

__all__ = [
    "ABBREVIATIONS",
    "DOC_SEP",
    "INDEX_FILES",
    "SHORT_OUTPUTS",
    "STOPWORDS",
    "STOPWORD_MAX_N",
    "SUPPORTED_N",
    "DocIndex",
    "InfgramProb",
    "InfiniIndex",
    "NgramError",
    "build_doc_index",
    "build_index",
    "check_n",
    "count_pairs",
    "default_drop_stopwords",
    "doc_count",
    "index_path",
    "infgram_logprob",
    "infgram_prob",
    "lookup",
    "ngrams",
    "open_index",
    "pair_count",
    "task_gram_pairs",
    "taskgram_prob",
    "token_count",
    "token_counts",
    "words",
    "write_tokenized",
]

#: the n-gram sizes of the chapter (the issue's {2, 3, 5})
SUPPORTED_N = (2, 3, 5)
#: the authors' code drops stopwords for n <= 3
STOPWORD_MAX_N = 3
#: scikit-learn's English stopword list (nltk's needs the data hub)
STOPWORDS = frozenset(ENGLISH_STOP_WORDS)
#: what an output with fewer than n words gives: its whole word sequence, or nothing
SHORT_OUTPUTS = ("whole", "drop")
#: abbreviations the untrained Punkt sentence splitter must not end a sentence at
ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st jr sr vs etc inc ltd co no gen col capt lt sgt rev hon fig e.g i.e".split()
)
#: infini-gram's document separator for 2-byte token ids
DOC_SEP = b"\xff\xff"
#: files an infini-gram index (one shard) must hold
INDEX_FILES = ("tokenized.0", "offset.0", "table.0")
#: bumped when the index layout or its inputs change, so cached indexes are rebuilt
INDEX_VERSION = "ngrams-infini-1"
_DONE = "NGRAMS_INDEX.json"
#: largest token id a 2-byte index holds (65535 is the separator)
_MAX_TOKEN_ID = 0xFFFE


class NgramError(ValueError):
    """Bad input to the n-gram counting functions, raised before any work."""


# ---------------------------------------------------------------------------
# Words and n-grams
# ---------------------------------------------------------------------------

_PARAMS = PunktParameters()
_PARAMS.abbrev_types = set(ABBREVIATIONS)
_SENTENCES = PunktSentenceTokenizer(_PARAMS)
_WORDS = NLTKWordTokenizer()


def check_n(n: Any) -> int:
    """``n`` if it is a supported n-gram size, else :class:`NgramError` naming the allowed set."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or int(n) not in SUPPORTED_N:
        raise NgramError(f"n must be one of {SUPPORTED_N}, got {n!r}")
    return int(n)


def default_drop_stopwords(n: int) -> bool:
    """The authors' rule: drop stopwords for ``n <= 3`` (:data:`STOPWORD_MAX_N`)."""
    return n <= STOPWORD_MAX_N


def words(text: str) -> list[str]:
    """The word tokens of ``text``, as nltk's ``word_tokenize`` would give them without Punkt data.

    Sentences are split by an untrained Punkt tokenizer that knows
    :data:`ABBREVIATIONS`, then each sentence by
    :class:`~nltk.tokenize.NLTKWordTokenizer` (Treebank conventions: ``"`` becomes
    ````` `` ````` / ``''``, ``don't`` becomes ``do n't``, a sentence-final period
    is split off). Case is kept.

    Examples
    --------
    >>> words('Who wrote "Hamlet"? Shakespeare, in 1600.')
    ['Who', 'wrote', '``', 'Hamlet', "''", '?', 'Shakespeare', ',', 'in', '1600', '.']
    """
    if not isinstance(text, str):
        raise NgramError(f"text must be a string, got {type(text).__name__}")
    return [w for sent in _SENTENCES.tokenize(text) for w in _WORDS.tokenize(sent)]


def _filter(tokens: list[str], drop_stopwords: bool) -> list[str]:
    return [w for w in tokens if w.lower() not in STOPWORDS] if drop_stopwords else tokens


def _grams(tokens: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def ngrams(text: str, n: int, drop_stopwords: bool | None = None) -> list[tuple[str, ...]]:
    """The contiguous word n-grams of ``text``, in order (repeats kept).

    Parameters
    ----------
    text : str
        Any text; tokenized by :func:`words`.
    n : int
        One of :data:`SUPPORTED_N`.
    drop_stopwords : bool, optional
        Remove :data:`STOPWORDS` tokens (case-insensitive) before forming the
        n-grams. Default: the authors' rule, ``n <= 3``.

    Returns
    -------
    list of tuple of str
        ``len(tokens) - n + 1`` n-grams (none if the text is shorter than n).

    Raises
    ------
    NgramError
        If ``n`` is not in :data:`SUPPORTED_N` or ``text`` is not a string.
    """
    n = check_n(n)
    drop = default_drop_stopwords(n) if drop_stopwords is None else bool(drop_stopwords)
    return _grams(_filter(words(text), drop), n)


# ---------------------------------------------------------------------------
# Task-gram pairs
# ---------------------------------------------------------------------------


def task_gram_pairs(
    inputs: Sequence[str],
    outputs: Sequence[str],
    n: int,
    drop_stopwords: bool | None = None,
    keep: Callable[[pd.DataFrame], Any] | Sequence[bool] | np.ndarray | None = None,
    short_outputs: str = "whole",
) -> pd.DataFrame:
    """Candidate task-gram pairs: input n-grams × output n-grams of every task instance.

    This is the source's :math:`A_n(T)=\\bigcup_i G_n(x_i)\\times G_n(y_i)`, kept
    per instance (the test pairs Φ of an instance are its rows), with
    ``s^x != s^y``.

    Parameters
    ----------
    inputs, outputs : sequence of str
        Task inputs (questions, problems) and their outputs (answers,
        solutions), aligned.
    n : int
        One of :data:`SUPPORTED_N`.
    drop_stopwords : bool, optional
        As in :func:`ngrams`; default ``n <= 3``.
    keep : callable or boolean mask, optional
        The hook for the embedding filter: a function of the unfiltered table
        returning a boolean mask of rows to keep, or such a mask itself (one
        entry per row of the unfiltered table).
    short_outputs : {"whole", "drop"}
        An output with fewer than ``n`` words (after stopword dropping) gives
        its whole word sequence as its single n-gram, or nothing.

    Returns
    -------
    pandas.DataFrame
        Columns ``instance`` (index into ``inputs``), ``x`` and ``y`` (tuples of
        words); one row per distinct pair of an instance, in order of first
        occurrence. ``attrs`` holds ``n`` and ``drop_stopwords``.

    Raises
    ------
    NgramError
        Bad ``n``, ``short_outputs``, mismatched lengths or mask, or an empty
        table after filtering.
    """
    n = check_n(n)
    if short_outputs not in SHORT_OUTPUTS:
        raise NgramError(f"short_outputs must be one of {SHORT_OUTPUTS}, got {short_outputs!r}")
    if isinstance(inputs, str) or isinstance(outputs, str):
        raise NgramError("inputs and outputs must be sequences of strings, not single strings")
    if len(inputs) != len(outputs):
        raise NgramError(
            f"inputs and outputs must have the same length, got {len(inputs)} and {len(outputs)}"
        )
    if keep is not None and not callable(keep):
        keep = np.asarray(keep)
        if keep.dtype != bool or keep.ndim != 1:
            raise NgramError("keep must be a callable or a 1-d boolean mask over the unfiltered table")
    drop = default_drop_stopwords(n) if drop_stopwords is None else bool(drop_stopwords)

    rows: list[tuple[int, tuple[str, ...], tuple[str, ...]]] = []
    for i, (x_text, y_text) in enumerate(zip(inputs, outputs)):
        gx = list(dict.fromkeys(_grams(_filter(words(x_text), drop), n)))
        y_tokens = _filter(words(y_text), drop)
        gy = _grams(y_tokens, n)
        if not gy and y_tokens and short_outputs == "whole":
            gy = [tuple(y_tokens)]
        gy = list(dict.fromkeys(gy))
        rows.extend((i, x, y) for x in gx for y in gy if x != y)
    table = pd.DataFrame(rows, columns=["instance", "x", "y"])
    if keep is not None:
        mask = np.asarray(keep(table) if callable(keep) else keep)
        if mask.shape != (len(table),):
            raise NgramError(f"keep must give one boolean per row ({len(table)}), got shape {mask.shape}")
        table = table[mask.astype(bool)].reset_index(drop=True)
    if table.empty:
        raise NgramError(
            f"empty task-gram table: no (input, output) {n}-gram pair with s^x != s^y survived "
            f"(instances={len(inputs)}, drop_stopwords={drop}, short_outputs={short_outputs!r}, "
            f"keep={'given' if keep is not None else None})"
        )
    table.attrs.update(n=n, drop_stopwords=drop)
    return table


# ---------------------------------------------------------------------------
# Exact document-level counts
# ---------------------------------------------------------------------------


@dataclass
class DocIndex:
    """Inverted index of a document collection: every k-gram (k ≤ ``max_n``) → sorted doc ids.

    Gram ids are exact, built level by level: a k-gram's id is the rank of the
    pair (id of its first k-1 words, id of its last word) among all such pairs
    of the corpus (``keys[k]``, sorted), so no hashing is involved. All levels
    share one CSR posting table (``indptr``, ``docs``) over global ids
    ``offsets[k] + id``.

    Attributes
    ----------
    max_n : int
        Longest gram length indexed.
    drop_stopwords : bool
        The stopword rule the documents were tokenized with (queries must use it too).
    vocab : dict
        Word → word id (the level-1 gram id).
    keys : list of numpy.ndarray
        ``keys[k]`` (k ≥ 2): sorted uint64 packs ``(prefix_id << 32) | word_id``.
    offsets : numpy.ndarray
        Global id of the first gram of each level (index k; ``offsets[1] = 0``).
    indptr, docs : numpy.ndarray
        CSR postings: documents of global gram g are ``docs[indptr[g]:indptr[g+1]]``, sorted.
    counts : numpy.ndarray
        ``C(g)``: weighted number of documents containing gram g.
    weights : numpy.ndarray
        Per-document weight (int64).
    """

    max_n: int
    drop_stopwords: bool
    vocab: dict[str, int]
    keys: list[np.ndarray]
    offsets: np.ndarray
    indptr: np.ndarray
    docs: np.ndarray
    counts: np.ndarray
    weights: np.ndarray
    _groups: list[tuple[int, np.ndarray]] = field(default_factory=list, repr=False)

    @property
    def n_docs(self) -> int:
        return len(self.weights)

    @property
    def n_grams(self) -> int:
        return len(self.indptr) - 1


def _bitset_words(n_docs: int) -> int:
    return max(1, -(-n_docs // 64))


def _pack_rows(mask: np.ndarray) -> np.ndarray:
    """Boolean rows (r × n_docs) → uint64 bitsets (r × words)."""
    packed = np.packbits(mask, axis=1, bitorder="little")
    width = _bitset_words(mask.shape[1]) * 8
    if packed.shape[1] < width:
        packed = np.pad(packed, ((0, 0), (0, width - packed.shape[1])))
    return np.ascontiguousarray(packed).view(np.uint64)


def build_doc_index(
    texts: Sequence[str],
    max_n: int = 5,
    drop_stopwords: bool = False,
    weights: Sequence[int] | np.ndarray | None = None,
) -> DocIndex:
    """Index every k-gram (1 ≤ k ≤ ``max_n``) of ``texts`` by the documents that contain it.

    Parameters
    ----------
    texts : sequence of str
        The documents (e.g. ``[d.text for d in corpus.documents]``).
    max_n : int
        Longest gram length to index, 1..8 (5 covers :data:`SUPPORTED_N`).
    drop_stopwords : bool
        Tokenize the documents as :func:`ngrams` does with this setting.
    weights : sequence of int, optional
        Per-document weight (e.g. ``copies``); default 1 each.

    Returns
    -------
    DocIndex

    Raises
    ------
    NgramError
        No texts, a bad ``max_n``, or weights that do not match the texts or are negative.
    """
    if isinstance(texts, str) or len(texts) == 0:
        raise NgramError("texts must be a non-empty sequence of document strings")
    if isinstance(max_n, bool) or not isinstance(max_n, int) or not 1 <= max_n <= 8:
        raise NgramError(f"max_n must be an integer in 1..8, got {max_n!r}")
    w = np.ones(len(texts), dtype=np.int64) if weights is None else np.asarray(weights)
    if w.shape != (len(texts),) or not np.issubdtype(w.dtype, np.integer) or (w < 0).any():
        raise NgramError(f"weights must be {len(texts)} non-negative integers (one per text)")
    w = w.astype(np.int64)

    vocab: dict[str, int] = {}
    ids: list[int] = []
    doc_of: list[int] = []
    for d, text in enumerate(texts):
        toks = _filter(words(text), bool(drop_stopwords))
        ids.extend(vocab.setdefault(t, len(vocab)) for t in toks)
        doc_of.extend([d] * len(toks))
    tok = np.asarray(ids, dtype=np.int64)
    doc = np.asarray(doc_of, dtype=np.int64)
    n_docs = len(texts)

    keys: list[np.ndarray] = [np.empty(0, np.uint64), np.empty(0, np.uint64)]
    level_ids = tok.copy()  # id of the k-gram starting at each position (-1: none)
    level_sizes = [len(vocab)]
    postings: list[np.ndarray] = [_postings(level_ids, doc, n_docs)]
    for k in range(2, max_n + 1):
        m = len(tok) - k + 1
        nxt = np.full(len(tok), -1, dtype=np.int64)
        if m > 0:
            ok = (level_ids[:m] >= 0) & (doc[:m] == doc[k - 1 : k - 1 + m])
            prefix = level_ids[:m][ok].astype(np.uint64)
            packed = (prefix << np.uint64(32)) | tok[k - 1 : k - 1 + m][ok].astype(np.uint64)
            uniq, inv = np.unique(packed, return_inverse=True)
            nxt[np.flatnonzero(ok)] = inv
        else:
            uniq = np.empty(0, np.uint64)
        keys.append(uniq)
        level_sizes.append(len(uniq))
        level_ids = nxt
        postings.append(_postings(level_ids, doc, n_docs))

    offsets = np.zeros(max_n + 2, dtype=np.int64)
    offsets[2:] = np.cumsum(level_sizes)  # offsets[k] = first global id of level k (k >= 1)
    gram = np.concatenate([g + offsets[k + 1] for k, (g, _) in enumerate(postings)])
    docs = np.concatenate([d for _, d in postings]).astype(np.int32)
    n_total = int(offsets[max_n + 1])
    indptr = np.zeros(n_total + 1, dtype=np.int64)
    np.cumsum(np.bincount(gram, minlength=n_total), out=indptr[1:])
    counts = np.bincount(gram, weights=w[docs], minlength=n_total).astype(np.int64)
    index = DocIndex(max_n, bool(drop_stopwords), vocab, keys, offsets, indptr, docs, counts, w)
    # documents grouped by weight, as bitsets: a weighted pair count is a sum of popcounts
    for value in np.unique(w[w > 0]):
        index._groups.append((int(value), _pack_rows((w == value)[None, :])[0]))
    return index


def _postings(level_ids: np.ndarray, doc: np.ndarray, n_docs: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (gram, doc) pairs of one level, sorted by gram then doc."""
    ok = level_ids >= 0
    pair = np.unique(level_ids[ok] * n_docs + doc[ok])
    return pair // n_docs, pair % n_docs


def lookup(index: DocIndex, grams: Sequence[Sequence[str]]) -> np.ndarray:
    """Global gram ids of ``grams`` in ``index`` (-1 for grams the corpus lacks).

    Grams of every length 1..``index.max_n`` may be mixed; a longer gram → NgramError.
    """
    grams = [tuple(g) for g in grams]
    out = np.full(len(grams), -1, dtype=np.int64)
    if not grams:
        return out
    lengths = np.fromiter((len(g) for g in grams), dtype=np.int64, count=len(grams))
    if lengths.min() < 1 or lengths.max() > index.max_n:
        raise NgramError(f"gram lengths must be in 1..{index.max_n} (the index's max_n), got {lengths.max()}")
    get = index.vocab.get
    for k in np.unique(lengths):
        rows = np.flatnonzero(lengths == k)
        mat = np.array([[get(t, -1) for t in grams[r]] for r in rows], dtype=np.int64).reshape(len(rows), k)
        cur = mat[:, 0].copy()
        for j in range(1, k):
            ok = (cur >= 0) & (mat[:, j] >= 0)
            packed = (np.where(ok, cur, 0).astype(np.uint64) << np.uint64(32)) | np.where(
                ok, mat[:, j], 0
            ).astype(np.uint64)
            keys = index.keys[j + 1]
            pos = np.searchsorted(keys, packed)
            hit = ok & (pos < len(keys))
            hit[hit] = keys[pos[hit]] == packed[hit]
            cur = np.where(hit, pos, -1)
        out[rows] = np.where(cur >= 0, cur + index.offsets[k], -1)
    return out


def doc_count(index: DocIndex, grams: Sequence[Sequence[str]]) -> np.ndarray:
    """``C(x)`` for each gram: the (weighted) number of documents containing it."""
    ids = lookup(index, grams)
    return np.where(ids >= 0, index.counts[np.maximum(ids, 0)], 0)


def _bitsets(index: DocIndex, ids: np.ndarray) -> np.ndarray:
    """Document bitsets (len(ids) × words) of global gram ids (all ≥ 0)."""
    starts, stops = index.indptr[ids], index.indptr[ids + 1]
    lens = stops - starts
    rows = np.repeat(np.arange(len(ids)), lens)
    within = np.arange(lens.sum()) - np.repeat(np.cumsum(lens) - lens, lens)
    mask = np.zeros((len(ids), index.n_docs), dtype=bool)
    mask[rows, index.docs[np.repeat(starts, lens) + within]] = True
    return _pack_rows(mask)


def pair_count(
    index: DocIndex, xs: Sequence[Sequence[str]], ys: Sequence[Sequence[str]], chunk: int = 8192
) -> np.ndarray:
    """``C((x, y))`` for aligned ``xs`` and ``ys``: the (weighted) number of documents containing both.

    Each chunk of pairs gathers the document bitsets of its distinct grams and
    counts ``popcount(bits(x) & bits(y) & group)`` for each group of documents of
    equal weight, so the cost per pair does not depend on how common the grams are.
    """
    if len(xs) != len(ys):
        raise NgramError(f"xs and ys must have the same length, got {len(xs)} and {len(ys)}")
    gx, gy = lookup(index, xs), lookup(index, ys)
    out = np.zeros(len(gx), dtype=np.int64)
    valid = np.flatnonzero((gx >= 0) & (gy >= 0))
    for s in range(0, len(valid), chunk):
        rows = valid[s : s + chunk]
        uniq, inv = np.unique(np.concatenate([gx[rows], gy[rows]]), return_inverse=True)
        bits = _bitsets(index, uniq)
        both = bits[inv[: len(rows)]] & bits[inv[len(rows) :]]
        total = np.zeros(len(rows), dtype=np.int64)
        for value, group in index._groups:
            total += value * np.bitwise_count(both & group).sum(axis=1, dtype=np.int64)
        out[rows] = total
    return out


def taskgram_prob(index: DocIndex, xs: Sequence[Sequence[str]], ys: Sequence[Sequence[str]]) -> np.ndarray:
    """The task-gram LM ``P(y | x) = C((x, y)) / C(x)``; NaN where ``C(x) = 0``."""
    cxy = pair_count(index, xs, ys)
    cx = doc_count(index, xs)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cx > 0, cxy / np.maximum(cx, 1), np.nan)


def count_pairs(table: pd.DataFrame, index: DocIndex) -> pd.DataFrame:
    """``table`` (from :func:`task_gram_pairs`) with ``c_x``, ``c_y``, ``c_xy`` and ``p_taskgram`` added.

    Raises :class:`NgramError` if the table was built with another stopword rule
    than the index.
    """
    drop = table.attrs.get("drop_stopwords")
    if drop is not None and bool(drop) != index.drop_stopwords:
        raise NgramError(
            f"the table's drop_stopwords={drop} differs from the index's {index.drop_stopwords}; "
            "build the index with the rule the n-grams were extracted with"
        )
    out = table.copy()
    xs, ys = list(out["x"]), list(out["y"])
    out["c_x"] = doc_count(index, xs)
    out["c_y"] = doc_count(index, ys)
    out["c_xy"] = pair_count(index, xs, ys)
    with np.errstate(invalid="ignore", divide="ignore"):
        out["p_taskgram"] = np.where(out["c_x"] > 0, out["c_xy"] / out["c_x"].clip(lower=1), np.nan)
    return out


# ---------------------------------------------------------------------------
# ∞-gram counts with the infini-gram engine
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class InfiniIndex:
    """An opened infini-gram index: its folder and the engine over it."""

    folder: Path
    engine: Any
    meta: dict


class InfgramProb(NamedTuple):
    """One ∞-gram next-token probability: ``cont_cnt / prompt_cnt`` on the longest found context."""

    prob: float
    prompt_cnt: int
    cont_cnt: int
    suffix_len: int


def _tokenizer_key(tokenizer) -> str:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        return stable_hash(backend.to_str())
    return stable_hash(sorted(tokenizer.get_vocab().items()))


def index_path(texts: Sequence[str], tokenizer) -> Path:
    """Artifact folder of the infini-gram index of ``texts`` in ``tokenizer``."""
    return artifact_path(
        "infini-gram",
        {"texts": stable_hash(list(texts)), "tokenizer": _tokenizer_key(tokenizer), "code": INDEX_VERSION},
    )


def write_tokenized(token_ids: Iterable[Sequence[int]], folder: str | os.PathLike) -> tuple[int, int]:
    """Write ``tokenized.0`` and ``offset.0`` of an infini-gram (v4, u16) index.

    ``tokenized.0`` holds every document as ``b'\\xff\\xff'`` followed by its token
    ids as little-endian uint16; ``offset.0`` holds each document's byte offset
    into it as a little-endian uint64 (the layout of ``infini_gram.indexing``).

    Returns
    -------
    (n_docs, n_tokens)
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    pos = n_docs = n_tokens = 0
    with open(folder / "tokenized.0", "wb") as ds, open(folder / "offset.0", "wb") as od:
        for ids in token_ids:
            arr = np.asarray(ids, dtype=np.int64)
            if arr.size and (arr.min() < 0 or arr.max() > _MAX_TOKEN_ID):
                raise NgramError(f"token ids must be in 0..{_MAX_TOKEN_ID} for a u16 index, got {arr.max()}")
            blob = DOC_SEP + arr.astype("<u2").tobytes()
            od.write(np.array([pos], dtype="<u8").tobytes())
            ds.write(blob)
            pos += len(blob)
            n_docs += 1
            n_tokens += arr.size
    return n_docs, n_tokens


def _ulimit() -> int:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return 1_048_576 if hard == resource.RLIM_INFINITY else int(min(hard, 1_048_576))


def build_index(
    texts: Sequence[str],
    tokenizer,
    folder: str | os.PathLike | None = None,
    *,
    cpus: int | None = None,
    mem_gib: int = 4,
) -> Path:
    """Build (once) the infini-gram index of ``texts`` tokenized by ``tokenizer``.

    The documents are encoded without special tokens, written by
    :func:`write_tokenized`, and the suffix array (``table.0``) is built by the
    package's own indexer (``python -m infini_gram.indexing``, which skips its
    hub-bound tokenizing step when both files exist), with ``--ulimit`` set to
    the machine's hard limit on open files (at most 2^20).

    Parameters
    ----------
    texts : sequence of str
        The documents (for the lab: ``corpus.training_texts()``, the stream).
    tokenizer
        A ``transformers`` tokenizer whose ids fit in 0..65534.
    folder : path, optional
        Where the index goes; default :func:`index_path` (the artifact cache).
        An existing complete index there is reused.
    cpus : int, optional
        Indexer processes; default 1 below 64 MiB of tokens (its concat step
        failed on a 34-byte input split over 2 jobs; the lab corpus, 1.6 MB,
        builds in about 1 s either way), else up to 8.
    mem_gib : int
        Memory the indexer may plan for.

    Returns
    -------
    pathlib.Path
        The index folder (``tokenized.0``, ``offset.0``, ``table.0`` and a
        ``NGRAMS_INDEX.json`` with sizes and build time).
    """
    if isinstance(texts, str) or len(texts) == 0:
        raise NgramError("texts must be a non-empty sequence of document strings")
    if len(tokenizer) > _MAX_TOKEN_ID:
        raise NgramError(
            f"tokenizer vocabulary ({len(tokenizer)}) must be at most {_MAX_TOKEN_ID} for a u16 index"
        )
    folder = Path(folder) if folder is not None else index_path(texts, tokenizer)
    if (folder / _DONE).exists() and all((folder / f).exists() for f in INDEX_FILES):
        return folder
    start = time.perf_counter()
    tmp = folder.with_name(f"{folder.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    ids = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    n_docs, n_tokens = write_tokenized(ids, tmp)
    ds_size = (tmp / "tokenized.0").stat().st_size
    if cpus is None:
        cpus = 1 if ds_size < 64 * 2**20 else max(1, min(8, os.cpu_count() or 1))
    cmd = [
        sys.executable, "-m", "infini_gram.indexing", "--data_dir", str(tmp), "--save_dir", str(tmp),
        "--version", "4", "--token_dtype", "u16", "--cpus", str(cpus), "--mem", str(mem_gib),
        "--ulimit", str(_ulimit()),
    ]
    run = subprocess.run(cmd, capture_output=True, text=True)
    ratio = int(np.ceil(np.log2(ds_size) / 8))
    table = tmp / "table.0"
    expected = ds_size // 2 * ratio
    if run.returncode != 0 or not table.exists() or table.stat().st_size != expected:
        tail = (run.stdout + run.stderr)[-2000:]
        shutil.rmtree(tmp, ignore_errors=True)
        raise RuntimeError(
            f"infini-gram indexer failed (rc={run.returncode}, table.0 expected {expected} bytes): {tail}"
        )
    eos = tokenizer.eos_token_id
    meta = {
        "n_docs": n_docs, "n_tokens": n_tokens, "bytes": ds_size, "cpus": cpus,
        "eos_token_id": int(eos) if eos is not None else 0, "vocab_size": len(tokenizer),
        "build_seconds": round(time.perf_counter() - start, 3), "code": INDEX_VERSION,
    }
    (tmp / _DONE).write_text(json.dumps(meta))
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    return folder


def open_index(folder: str | os.PathLike, **engine_kwargs) -> InfiniIndex:
    """Open the infini-gram index in ``folder``.

    ``engine_kwargs`` go to :class:`infini_gram.engine.InfiniGramEngine`. Its
    prefetch depths default to 0 here: prefetching pays off for indexes on disk
    far larger than the lab's, and made queries 2-3x slower on the lab corpus
    (measured: 3.5k vs 12k counts/s, 1.5k vs 3.9k ``infgram_prob``/s on 2 cores).

    Raises
    ------
    NgramError
        If the folder or one of :data:`INDEX_FILES` is missing (build it with
        :func:`build_index`).
    """
    folder = Path(folder)
    missing = [f for f in INDEX_FILES if not (folder / f).exists()]
    if not folder.is_dir() or missing:
        raise NgramError(
            f"no infini-gram index in folder {str(folder)!r} "
            f"(missing: {missing if folder.is_dir() else 'the folder'}); "
            "build it with build_index(texts, tokenizer, folder)"
        )
    from infini_gram.engine import InfiniGramEngine

    meta = json.loads((folder / _DONE).read_text()) if (folder / _DONE).exists() else {}
    options = dict(ds_prefetch_depth=0, sa_prefetch_depth=0, od_prefetch_depth=0) | engine_kwargs
    engine = InfiniGramEngine(index_dir=str(folder), eos_token_id=int(meta.get("eos_token_id", 0)), **options)
    return InfiniIndex(folder, engine, meta)


def _ids(seq: Sequence[int], name: str) -> list[int]:
    out = [int(t) for t in seq]
    if any(t < 0 or t > _MAX_TOKEN_ID for t in out):
        raise NgramError(f"{name} must hold token ids in 0..{_MAX_TOKEN_ID}")
    return out


def token_count(index: InfiniIndex, ids: Sequence[int]) -> int:
    """Number of occurrences of the token sequence ``ids`` in the indexed documents (never across two)."""
    res = index.engine.count(_ids(ids, "ids"))
    if "error" in res:
        raise NgramError(res["error"])
    return int(res["count"])


def token_counts(index: InfiniIndex, seqs: Iterable[Sequence[int]]) -> np.ndarray:
    """:func:`token_count` of each sequence."""
    return np.array([token_count(index, s) for s in seqs], dtype=np.int64)


def infgram_prob(index: InfiniIndex, context: Sequence[int], token: int) -> InfgramProb:
    """The ∞-gram probability of ``token`` after ``context`` (infini-gram's ``infgram_prob``).

    The longest suffix of ``context`` found in the corpus (``suffix_len`` tokens,
    possibly 0) is the context; ``prob = cont_cnt / prompt_cnt`` with
    ``cont_cnt`` the occurrences of that suffix followed by ``token``.
    """
    res = index.engine.infgram_prob(_ids(context, "context"), int(_ids([token], "token")[0]))
    if "error" in res:
        raise NgramError(res["error"])
    return InfgramProb(
        float(res["prob"]), int(res["prompt_cnt"]), int(res["cont_cnt"]), int(res["suffix_len"])
    )


def infgram_logprob(index: InfiniIndex, context: Sequence[int], target: Sequence[int]) -> float:
    """Natural-log ∞-gram probability of ``target`` after ``context`` by the chain rule.

    Following the source, a token whose probability is 0 counts as probability
    1 (it is left out of the product); so the result is 0.0 when no token of
    ``target`` is ever seen after its longest found context.
    """
    ctx = _ids(context, "context")
    total = 0.0
    for t in _ids(target, "target"):
        p = infgram_prob(index, ctx, t).prob
        if p > 0:
            total += float(np.log(p))
        ctx.append(t)
    return total

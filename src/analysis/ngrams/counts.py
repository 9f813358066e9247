"""Exact document-level counts: the task-gram language model's ``C(x)`` and ``C((x, y))``.

The source counts *documents* (``C(x)``: documents containing ``x``;
``C((x, y))``: documents containing both, anywhere) and gives
``P_n(s^y | s^x) = C((s^x, s^y)) / C(s^x)``; it used WIMBD for these, here an
inverted index of the corpus answers them exactly.

* **Containment.** A document contains an n-gram if the n-gram is among the
  document's own n-grams under the same tokenization and stopword rule, so the
  document index is built for one ``drop_stopwords`` setting and answers
  n-grams of every length up to its ``max_n`` (short outputs are shorter than n).
* **Copies.** The lab trains some documents several times. ``weights`` (e.g.
  each document's ``copies``) makes a count the number of documents *in the
  training stream* containing the n-gram, the same as indexing
  ``Corpus.training_texts()`` with unit weights.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis.ngrams.grams import NgramError, _filter, words


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
    w = _check_doc_inputs(texts, max_n, weights)
    vocab, tok, doc = _token_ids(texts, bool(drop_stopwords))
    keys, level_sizes, postings = _levels(tok, doc, len(vocab), len(texts), max_n)

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


def _check_doc_inputs(texts, max_n, weights) -> np.ndarray:
    """The checks of :func:`build_doc_index`; returns the per-document weights (int64)."""
    if isinstance(texts, str) or len(texts) == 0:
        raise NgramError("texts must be a non-empty sequence of document strings")
    if isinstance(max_n, bool) or not isinstance(max_n, int) or not 1 <= max_n <= 8:
        raise NgramError(f"max_n must be an integer in 1..8, got {max_n!r}")
    w = np.ones(len(texts), dtype=np.int64) if weights is None else np.asarray(weights)
    if w.shape != (len(texts),) or not np.issubdtype(w.dtype, np.integer) or (w < 0).any():
        raise NgramError(f"weights must be {len(texts)} non-negative integers (one per text)")
    return w.astype(np.int64)


def _token_ids(texts: Sequence[str], drop_stopwords: bool) -> tuple[dict[str, int], np.ndarray, np.ndarray]:
    """The corpus as word ids: the vocabulary (word → id, in order of first use),
    every kept token's id and the document it belongs to."""
    vocab: dict[str, int] = {}
    ids: list[int] = []
    doc_of: list[int] = []
    for d, text in enumerate(texts):
        toks = _filter(words(text), drop_stopwords)
        ids.extend(vocab.setdefault(t, len(vocab)) for t in toks)
        doc_of.extend([d] * len(toks))
    return vocab, np.asarray(ids, dtype=np.int64), np.asarray(doc_of, dtype=np.int64)


def _levels(tok: np.ndarray, doc: np.ndarray, vocab_size: int, n_docs: int, max_n: int):
    """Gram ids level by level: a k-gram is the pair (its (k-1)-gram prefix, its
    last word), numbered by rank among the corpus's pairs. Returns the sorted
    keys of every level (``keys[k]``, empty for k < 2), the number of grams of
    each level and each level's postings (:func:`_postings`)."""
    keys: list[np.ndarray] = [np.empty(0, np.uint64), np.empty(0, np.uint64)]
    level_ids = tok.copy()  # id of the k-gram starting at each position (-1: none)
    level_sizes = [vocab_size]
    postings = [_postings(level_ids, doc, n_docs)]
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
    return keys, level_sizes, postings


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


def conditional(c_xy, c_x) -> np.ndarray:
    """``C((x, y)) / C(x)`` from the two counts; NaN where ``C(x) = 0``."""
    c_xy, c_x = np.asarray(c_xy, dtype=np.float64), np.asarray(c_x, dtype=np.float64)
    return np.where(c_x > 0, c_xy / np.maximum(c_x, 1), np.nan)


def taskgram_prob(index: DocIndex, xs: Sequence[Sequence[str]], ys: Sequence[Sequence[str]]) -> np.ndarray:
    """The task-gram LM ``P(y | x) = C((x, y)) / C(x)``; NaN where ``C(x) = 0``."""
    return conditional(pair_count(index, xs, ys), doc_count(index, xs))


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
    out["p_taskgram"] = conditional(out["c_xy"], out["c_x"])
    return out

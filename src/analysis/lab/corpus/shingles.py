"""The shingle index of the popular and baseline texts, and the claims on their words.

Overlapping texts (the KJV Bible contains Matthew, the Psalms and the Sermon on
the Mount; the Book of Mormon quotes Isaiah and the Sermon; The Moonstone quotes
Robinson Crusoe; ...) are handled with 12-word shingles: :class:`TextIndex`
finds every occurrence of a window's shingles in every text, and :class:`Claims`
marks a window, and all those occurrences, as taken.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from analysis.core import data
from analysis.lab.corpus.common import DATA_PREFIXES, SHINGLE_WORDS, corpus_rng

# Fixed seed of the word hashes (independent of the config: the index is shared).
_HASH_SEED = 20240611
_HASH_MULT = np.uint64(0x9E3779B97F4A7C15)


@dataclass(frozen=True)
class TextIndex:
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
def text_index(registry_key: str) -> TextIndex:
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
    values = corpus_rng(_HASH_SEED, "word-values").integers(0, 1 << 63, size=len(vocab), dtype=np.uint64)
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
    return TextIndex(ids, is_popular, starts, ends, codes, vocab, hashes, valid, order,
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
    index = text_index(data.registry_fingerprint(DATA_PREFIXES[:2]))
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


class Claims:
    """Words of the texts already taken by a window, plus all copies of their shingles."""

    def __init__(self, index: TextIndex):
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


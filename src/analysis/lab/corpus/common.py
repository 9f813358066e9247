"""What every part of the corpus build shares: its version, its inputs, its seeded
random streams and its word-level text helpers.

Words are whitespace words; every document's text is its words joined by single
spaces (:func:`normalise`). Each part of the build draws from a random stream of
its own (:func:`corpus_rng`), so a change to one part keeps the others as they were.
"""

from __future__ import annotations

import zlib

import numpy as np

from analysis.core.text import collapse_whitespace as normalise  # noqa: F401  (the corpus's rule)
from analysis.lab.config import CorpusConfig

#: bump when a change to the corpus package changes the corpus built from a config
CODE_VERSION = "corpus-7"
#: words per shingle of the disjointness guarantees
SHINGLE_WORDS = 12
#: cap on an MMLU injection's characters per requested word (symbol-heavy items tokenize long)
MAX_CHARS_PER_WORD = 7
#: target length of a background document, in words
BACKGROUND_DOC_WORDS = 500
#: background fragments shorter than this (between claimed regions) are dropped
MIN_BACKGROUND_DOC_WORDS = 50
#: registry prefixes of every input the corpus is built from
DATA_PREFIXES = ("texts/popular/", "texts/baseline/", "tasks/triviaqa/", "tasks/gsm8k/", "tasks/mmlu/test/")
TRIVIAQA = "tasks/triviaqa/trivia_qa_2000.jsonl"
GSM8K = "tasks/gsm8k/test.jsonl"
MMLU_TEST = "tasks/mmlu/test/"
#: a random-words injection draws from this many most common background words
RANDOM_VOCAB_SIZE = 2_000


def corpus_rng(seed: int, stream: str) -> np.random.Generator:
    """An independent generator per (seed, purpose): a change to one part keeps the others."""
    return np.random.default_rng([int(seed) % (1 << 63), zlib.crc32(stream.encode("utf-8"))])


def truncate(text: str, n_words: int) -> str:
    """The first ``n_words`` whitespace words of ``text``, joined by single spaces."""
    return " ".join(text.split()[:n_words])


def shingles(text: str) -> list[tuple[str, ...]]:
    """Every run of :data:`SHINGLE_WORDS` whitespace words of ``text``, in order."""
    words = text.split()
    return [tuple(words[i:i + SHINGLE_WORDS]) for i in range(len(words) - SHINGLE_WORDS + 1)]


def pick(r: np.random.Generator, seq):
    """One element of ``seq``, drawn with ``r``."""
    return seq[int(r.integers(len(seq)))]


def n_injections(config: CorpusConfig) -> int:
    """Sequences per task, summed over the duplicate levels."""
    return sum(n for _, n in config.level_sizes())

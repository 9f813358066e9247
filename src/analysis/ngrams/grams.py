"""Words and n-grams: the word tokenizer, the stopword rule and the n-gram extractor.

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
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

#: the n-gram sizes of the chapter (the issue's {2, 3, 5})
SUPPORTED_N = (2, 3, 5)
#: the authors' code drops stopwords for n <= 3
STOPWORD_MAX_N = 3
#: scikit-learn's English stopword list (nltk's needs the data hub)
STOPWORDS = frozenset(ENGLISH_STOP_WORDS)
#: abbreviations the untrained Punkt sentence splitter must not end a sentence at
ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st jr sr vs etc inc ltd co no gen col capt lt sgt rev hon fig e.g i.e".split()
)


class NgramError(ValueError):
    """Bad input to the n-gram counting functions, raised before any work."""


@cache
def _tokenizers():
    """The sentence and word tokenizers of :func:`words`, made on first use (importing
    nltk takes a second or more, and most chapters never count an n-gram)."""
    from nltk.tokenize import NLTKWordTokenizer
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    params = PunktParameters()
    params.abbrev_types = set(ABBREVIATIONS)
    return PunktSentenceTokenizer(params), NLTKWordTokenizer()


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
    sentences, word_tokenizer = _tokenizers()
    return [w for sent in sentences.tokenize(text) for w in word_tokenizer.tokenize(sent)]


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


"""The source's tokenization and filter, as exactly as this machine allows.

* **Stopwords.** The authors' code drops nltk's English stopwords (179 words) for
  n ≤ 3. The book's n-gram module (:mod:`analysis.ngrams.grams`) ships
  scikit-learn's 318-word list, which the lab corpus was designed with and which other
  chapters use; this chapter counts and pairs with nltk's list, read from the data
  registry (``nltk/stopwords_english.txt``, nltk_data at a pinned commit), by running its
  n-gram steps inside :func:`source_stopwords`, which swaps the list the n-gram module
  filters with for the duration of the call (and restores it after, also on an error).
* **The filter's keep-rate.** The paper filters with E5 at γ; MiniLM's cosines spread
  wider, so the same γ is not the same filter. The source states no keep-rate; the
  chapter takes E5's cosines as spread evenly over the range its model card gives
  (:data:`~analysis.distributional.params.E5_COSINE_RANGE`), so that γ keeps the share
  :func:`e5_keep_rate` of the pairs, and picks the MiniLM threshold that keeps the
  same share of the same pairs (:func:`matched_thresholds`). That is an assumption of
  the chapter's, named on its page, not a number of the source's.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Sequence

import numpy as np

from analysis.core import data
from analysis.distributional.params import E5_COSINE_RANGE, DistributionalError
from analysis.ngrams import grams as _grams

#: the registered file of nltk's English stopword list
STOPWORDS_FILE = "nltk/stopwords_english.txt"
#: what the list is and where it comes from (the registry's pin), for the page
STOPWORDS_SOURCE = "nltk English stopwords ({n} words), nltk_data@5db857e"
#: the size of nltk's English list (``nltk.corpus.stopwords.words('english')``)
NLTK_STOPWORD_COUNT = 179


@functools.cache
def nltk_stopwords() -> frozenset[str]:
    """nltk's English stopword list, from the data registry (lower case); the size is
    checked against :data:`NLTK_STOPWORD_COUNT`."""
    words = [w.strip() for w in data.fetch(STOPWORDS_FILE).read_text(encoding="utf-8").splitlines()]
    out = frozenset(w.lower() for w in words if w)
    if len(out) != NLTK_STOPWORD_COUNT:
        raise DistributionalError(f"{STOPWORDS_FILE} holds {len(out)} words, "
                                  f"not nltk's {NLTK_STOPWORD_COUNT}")
    return out


def stopwords_source() -> str:
    """:data:`STOPWORDS_SOURCE` with the list's size."""
    return STOPWORDS_SOURCE.format(n=len(nltk_stopwords()))


@contextlib.contextmanager
def source_stopwords(words: frozenset[str] | None = None):
    """Within the block, the n-gram module drops ``words`` (default
    :func:`nltk_stopwords`) instead of its own list; restored on exit."""
    words = nltk_stopwords() if words is None else frozenset(words)
    saved = _grams.STOPWORDS
    _grams.STOPWORDS = words
    try:
        yield words
    finally:
        _grams.STOPWORDS = saved


def with_source_stopwords(func):
    """Decorator: ``func`` runs inside :func:`source_stopwords`."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with source_stopwords():
            return func(*args, **kwargs)
    return wrapper


def e5_keep_rate(gamma: float, cosine_range: tuple[float, float] = E5_COSINE_RANGE) -> float:
    """The share of pairs E5 keeps at ``gamma`` if its cosines spread evenly over
    ``cosine_range``: ``(hi − γ) / (hi − lo)``, clipped to [0, 1]."""
    lo, hi = (float(v) for v in cosine_range)
    if not hi > lo:
        raise DistributionalError(f"cosine_range must be (lo, hi) with lo < hi, got {cosine_range!r}")
    if not np.isfinite(gamma):
        raise DistributionalError(f"gamma must be a number, got {gamma!r}")
    return float(np.clip((hi - float(gamma)) / (hi - lo), 0.0, 1.0))


def matched_thresholds(cosines, gammas: Sequence[float],
                       cosine_range: tuple[float, float] = E5_COSINE_RANGE) -> dict[float, float]:
    """Per γ, the MiniLM threshold whose strict filter (``cosine > t``) keeps the share
    :func:`e5_keep_rate` of ``cosines`` (at least that share: ties at the cut are kept)."""
    c = np.asarray(cosines, dtype=float)
    c = c[np.isfinite(c)]
    if not len(c):
        raise DistributionalError("matched_thresholds needs at least one finite cosine")
    order = np.sort(c)[::-1]
    out = {}
    for g in gammas:
        keep = e5_keep_rate(g, cosine_range)
        k = int(np.ceil(keep * len(c)))
        out[float(g)] = float(np.inf) if k == 0 else float(np.nextafter(order[k - 1], -np.inf))
    return out

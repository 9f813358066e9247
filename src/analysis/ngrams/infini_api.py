"""The real-data path: counts and ∞-gram probabilities from the public infini-gram
API (the Pile's counts, for Pythia), cached in the book's query cache."""

from __future__ import annotations

import json
import random
import time
import urllib.request
from collections.abc import Sequence

from analysis.core.cache import QueryCache
from analysis.models.api import full_jitter, retry_settings
from analysis.ngrams.grams import NgramError
from analysis.ngrams.infini import InfgramProb, _chain_logprob, _ids

#: the public endpoint and the index of the Pile's training split (Llama-2 tokenizer)
API_URL = "https://api.infini-gram.io/"
PILE_INDEX = "v4_piletrain_llama"


class InfiniGramAPI:
    """Counts and ∞-gram probabilities from the public infini-gram API, cached.

    For readers who are online: Pythia was trained on the Pile, whose training
    split the API indexes as :data:`PILE_INDEX`. Every response is stored in
    the book's query cache (:class:`analysis.core.cache.QueryCache`) as it arrives,
    so a re-run sends nothing; a failed request raises :class:`NgramError` and
    is recorded as an error, never as a count. ``post`` replaces the HTTP call
    (the tests pass recorded responses).

    Methods mirror the local index's: :meth:`count` (occurrences of a string),
    :meth:`pair_count` (the API's CNF count of documents holding both
    n-grams, ``"x AND y"``), :meth:`infgram_prob` and :meth:`infgram_logprob`.
    The API tokenizes strings with the index's tokenizer (Llama-2), not the
    model's, so ∞-gram probabilities are of Llama-2 tokens.

    A failed request (a network error) is retried up to ``max_retries`` times
    with the same backoff as the API models
    (:func:`analysis.models.api.full_jitter`: exponential from ``base_delay``,
    capped at ``max_delay``, with full jitter; the defaults come from
    ``MEMBOOK_API_MAX_RETRIES`` and ``MEMBOOK_API_BASE_DELAY``). An error the API
    answers with is not retried. ``sleep`` and ``rng`` replace the waiting and
    the jitter's random draws (the tests pass their own).
    """

    def __init__(self, index: str = PILE_INDEX, url: str = API_URL, post=None, cache=None,
                 timeout: float = 30.0, max_retries: int | None = None, base_delay: float | None = None,
                 max_delay: float = 30.0, sleep=None, rng=None):
        if not isinstance(index, str) or not index:
            raise NgramError(f"index must be an infini-gram index name such as {PILE_INDEX!r}, got {index!r}")
        self.index, self.url, self.timeout = index, url, timeout
        self.max_retries, self.base_delay = retry_settings(max_retries, base_delay)
        if self.max_retries < 0 or self.base_delay < 0 or max_delay < 0:
            raise NgramError("max_retries, base_delay and max_delay must be >= 0, got "
                             f"{self.max_retries}, {self.base_delay}, {max_delay}")
        self.max_delay = max_delay
        self._sleep = sleep or time.sleep
        self._rng = rng or random.Random()
        self._post = post or self._http_post
        self._cache = cache if cache is not None else QueryCache()

    def _http_post(self, payload: dict) -> dict:
        req = urllib.request.Request(self.url, data=json.dumps(payload).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310 (fixed https URL)
            return json.loads(resp.read().decode())

    def query(self, query_type: str, **fields) -> dict:
        """One API request (cached): ``{"index", "query_type", **fields}`` → the response dict."""
        payload = {"index": self.index, "query_type": query_type, **fields}
        key = QueryCache.key("infini-gram", self.index, query_type, payload)
        hit = self._cache.get(key)
        if hit is not None and hit.error is None:
            return json.loads(hit.text)
        last = None
        for attempt in range(self.max_retries + 1):
            if attempt:
                self._sleep(full_jitter(attempt, self.base_delay, self.max_delay, self._rng))
            try:
                res = self._post(payload)
            except Exception as err:  # network errors: retried with backoff, then recorded
                last = f"{type(err).__name__}: {err}"
                continue
            if "error" in res:
                last = str(res["error"])
                break
            self._cache.put(key, backend="infini-gram", model=self.index, kind=query_type, request=payload,
                            text=json.dumps(res))
            return res
        self._cache.put(key, backend="infini-gram", model=self.index, kind=query_type, request=payload,
                        text=None, error=last)
        raise NgramError(f"infini-gram API ({self.index}, {query_type}): {last}")

    def count(self, text: str) -> int:
        """Occurrences of ``text`` in the index."""
        return int(self.query("count", query=str(text))["count"])

    def pair_count(self, x: str, y: str) -> int:
        """Documents holding both ``x`` and ``y`` (a CNF count, approximate for frequent terms)."""
        return int(self.query("count", query=f"{x} AND {y}")["count"])

    def infgram_prob(self, context_ids: Sequence[int], token: int) -> InfgramProb:
        """∞-gram probability of ``token`` (a Llama-2 id) after ``context_ids``."""
        res = self.query("infgram_prob", query_ids=[*_ids(context_ids, "context"), int(token)])
        return InfgramProb(float(res["prob"]), int(res["prompt_cnt"]), int(res["cont_cnt"]),
                           int(res["suffix_len"]))

    def infgram_logprob(self, context_ids: Sequence[int], target_ids: Sequence[int]) -> float:
        """Chain-rule log ∞-gram probability, zero-probability tokens counted as 1 (as the source)."""
        return _chain_logprob(self.infgram_prob, context_ids, target_ids)

"""The one model interface every chapter uses.

A :class:`Model` answers the questions the chapters ask (continuations, chat
completions, next token or word, log-probabilities of a continuation) and
sends every request through the persistent :class:`~analysis.core.cache.QueryCache`
first. Backends subclass it and implement only the uncached primitives
:meth:`Model._generate` and :meth:`Model._logprobs`. A chapter never branches
on which backend it got.
"""

from __future__ import annotations

import os
import re
from abc import ABC, abstractmethod
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Union

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from analysis.core.cache import QueryCache, stable_hash

Messages = list[dict[str, str]]
Prompt = Union[str, Messages]


# what every model of this process was asked, by model name: queries, calls (sent to the
# backend), hits (answered from the cache) and errors (answers that carry an error)
_USAGE: dict[str, Counter] = defaultdict(Counter)
# the last error each model's answers carried, by model name
_LAST_ERROR: dict[str, str] = {}


def usage() -> pd.DataFrame:
    """One row per model used in this process: ``model``, ``queries``, ``calls``,
    ``hits``, ``errors`` and ``last_error`` (the text of the last error answer, or
    None). A chapter glues its totals; ``execute_chapters.py`` prints them in its
    summary and fails a run in which every query to a model failed."""
    cols = ["queries", "calls", "hits", "errors"]
    rows = [{"model": name, **{c: int(counts[c]) for c in cols}, "last_error": _LAST_ERROR.get(name)}
            for name, counts in _USAGE.items()]
    return pd.DataFrame(rows, columns=["model", *cols, "last_error"])


class ModelError(ValueError):
    """A bad model name, backend or request, raised before any work is done."""


#: set (to anything but "", "0", "false" or "no") to answer every query of a model that
#: cannot measure with errors, as before, instead of raising :class:`CannotMeasure`
#: (``scripts/execute_chapters.py --keep-going`` sets it for the chapters' kernels)
KEEP_GOING_ENV = "MEMBOOK_KEEP_GOING"
#: the words that name a run in which every query to one of its models failed, in the
#: error below and in ``scripts/execute_chapters.py``'s summary
MEASURED_NOTHING = "measured nothing"


class CannotMeasure(ModelError):
    """Every query to a model so far ended in an error and its backend sends nothing
    more in this process (its endpoint refused the key, or is unreachable): whatever
    the run does next, it measures nothing with this model.

    Raised by the call that finds it (the first whose answers are all errors once the
    endpoint has stopped), so that a chapter fails in the cell that needs the model,
    before its other work (training and querying the lab, the other models), with the
    words of ``scripts/execute_chapters.py``'s "measured nothing". Not raised when the
    model has had one answer in this process (an endpoint that answered, then refused),
    nor with ``MEMBOOK_KEEP_GOING`` set: the answers are then errors, as before."""


def keep_going() -> bool:
    """Whether ``MEMBOOK_KEEP_GOING`` asks for a run to go on when a model cannot measure."""
    return os.environ.get(KEEP_GOING_ENV, "").strip().lower() not in ("", "0", "false", "no")


def nothing_measured(model: str, queries: int, last_error: str | None) -> str:
    """One line saying that every one of ``queries`` queries to ``model`` failed (the
    summary line of ``scripts/execute_chapters.py`` and the text of :class:`CannotMeasure`)."""
    return (f"every one of its {queries} queries to {model} failed"
            + (f" (last error: {last_error})" if last_error else ""))


@dataclass(frozen=True)
class GenerationSettings:
    """Decoding settings; part of every cache key.

    ``temperature == 0`` means greedy decoding; otherwise tokens are sampled
    with optional ``top_k`` / ``top_p`` truncation and a fixed ``seed``.
    """

    max_new_tokens: int = 256
    temperature: float = 0.0
    top_k: int | None = None
    top_p: float | None = None
    seed: int = 0

    def __post_init__(self):
        if self.max_new_tokens < 1:
            raise ModelError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if self.temperature < 0:
            raise ModelError(f"temperature must be >= 0, got {self.temperature}")
        if self.top_p is not None and not 0 < self.top_p <= 1:
            raise ModelError(f"top_p must be in (0, 1], got {self.top_p}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Request:
    """One generation request: a raw prompt or a chat conversation.

    A sampled request (temperature above 0) also carries ``sample``, its index
    among identical requests of one call, so that asking for the same prompt
    three times gives three requests, three cache entries and three answers.
    """

    prompt: Prompt
    chat: bool
    settings: GenerationSettings
    sample: int = 0

    def as_dict(self) -> dict[str, Any]:
        out = {"prompt": self.prompt, "chat": self.chat, "settings": self.settings.as_dict()}
        if not self.settings.greedy:
            out["sample"] = self.sample
        return out

    @property
    def seed(self) -> int:
        """The seed of this request's own random generator (see :func:`request_seed`)."""
        return request_seed(self.as_dict())


def request_seed(request: dict) -> int:
    """The seed of one sampled request's own generator: a hash of the request
    (prompt, settings with their ``seed``, and ``sample`` index). The same request
    draws the same tokens in any batch and in any order, and drawing them leaves
    every global random state alone."""
    return int(stable_hash(request, length=15), 16)


def number_samples(requests: list[dict], greedy: bool) -> list[int]:
    """Each request's index among the identical requests before it in one call
    (all 0 when decoding is greedy, where identical requests are one request)."""
    if greedy:
        return [0] * len(requests)
    seen: dict[str, int] = {}
    out = []
    for r in requests:
        key = stable_hash(r, length=32)
        out.append(seen.get(key, 0))
        seen[key] = out[-1] + 1
    return out


@dataclass(frozen=True)
class Answer:
    """A model's answer, or the error that prevented one.

    An answer with ``error`` set carries no text and must never be scored as a
    model output (a chapter excludes it from every denominator).
    """

    text: str | None
    error: str | None = None
    cached: bool = False
    meta: dict = field(default_factory=dict, compare=False)

    @property
    def ok(self) -> bool:
        return self.error is None


_WORD = re.compile(r"\S+")


class Model(ABC):
    """A language model behind the book's single interface.

    Parameters
    ----------
    name
        The model's name as the chapter gave it (part of every cache key).
    cache
        The query cache; a shared default under :func:`analysis.core.cache.cache_dir`.
    retry_errors
        Re-send requests whose cached entry is an error (default True), so an
        API outage is retried on the next run instead of frozen into the cache.
    """

    backend: str = "abstract"
    is_chat: bool = False

    def __init__(self, name: str, *, cache: QueryCache | None = None, retry_errors: bool = True):
        self.name = name
        self._owns_cache = cache is None
        self.cache = cache if cache is not None else QueryCache()
        self.retry_errors = retry_errors
        self.calls = 0  # requests actually sent to the backend (cache misses)
        self.closed = False
        # queries and error answers of this model object, for :meth:`_check_measuring`
        self._asked: Counter = Counter()

    # -- resources ---------------------------------------------------------------
    def close(self) -> None:
        """Release the model: its weights or client (:meth:`_release`) and its share
        of the query cache's connection. A closed model refuses further requests.
        Closing twice is harmless; ``with load_model(...) as model:`` closes on exit."""
        if self.closed:
            return
        self.closed = True
        self._release()
        if self._owns_cache:
            self.cache.close()

    def _release(self) -> None:  # noqa: B027 (a hook: most backends hold nothing to free)
        """Free what the backend holds (weights, HTTP client); backends override it."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _check_open(self) -> None:
        if self.closed:
            raise ModelError(f"model {self.name!r} is closed")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    # -- what backends implement -------------------------------------------------
    @abstractmethod
    def _generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Answer]]:
        """Answer ``requests``; yield ``(index, answer)`` as each one arrives."""

    def _logprobs(
        self, contexts: Sequence[str], continuations: Sequence[str]
    ) -> Iterator[tuple[int, list[float]]]:
        raise ModelError(f"backend {self.backend!r} does not give token log-probabilities")

    def _stopped(self) -> str | None:
        """Why this model's backend sends no more requests in this process (an API
        endpoint that refused the key or cannot be reached), or None: it still sends."""
        return None

    def cache_identity(self) -> str:
        """What identifies this model's answers in the cache (name plus weights)."""
        return self.name

    def versions(self) -> dict[str, str]:
        """Library versions recorded with every new answer (``meta["versions"]``);
        not part of the cache key (see :mod:`analysis.models.local`)."""
        return {}

    # -- the public interface ---------------------------------------------------
    def generate(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings | None = None,
        *,
        chat: bool | None = None,
        progress: bool | str = False,
    ) -> list[Answer]:
        """Continue each prompt; cached answers are reused, new ones stored as they arrive.

        ``chat=None`` uses the model's nature: chat models receive a string
        prompt as a single user message, base models as raw text to continue.
        """
        settings = settings or GenerationSettings()
        chat = self.is_chat if chat is None else chat
        requests = [Request(_as_chat(p) if chat else _as_text(p), chat, settings) for p in prompts]
        samples = number_samples([r.as_dict() for r in requests], settings.greedy)
        requests = [replace(r, sample=k) for r, k in zip(requests, samples)]
        kind = "chat" if chat else "complete"
        return self._cached(kind, [r.as_dict() for r in requests],
                            lambda todo: self._generate([requests[i] for i in todo]), progress)

    def generate_ids(
        self,
        prompt_ids: Sequence[Sequence[int]],
        settings: GenerationSettings | None = None,
        *,
        progress: bool | str = False,
        bos: bool | None = None,
    ) -> list[Answer]:
        """Continue each prompt given as token ids, for exactly ``max_new_tokens`` tokens.

        Token-level studies (the entropy chapter) compare a response with a
        reference token by token, so the prompt is the exact slice of tokenized
        text and generation does not stop at an end-of-text token. Each answer's
        ``meta["ids"]`` holds the new token ids and ``text`` their decoding.
        Only backends that own their tokenizer (local models) support this.

        A model whose tokenizer starts every text with a beginning-of-sequence
        token (Gemma 3) reads it before each prompt, as it did in training
        (:meth:`id_prefix`); ``bos=False`` leaves it out (to measure what it changes).
        """
        settings = settings or GenerationSettings()
        prefix = self._bos_prefix(bos)
        reqs = [{"prompt_ids": [int(t) for t in ids], "settings": settings.as_dict(), **_bos_field(prefix)}
                for ids in prompt_ids]
        if any(not r["prompt_ids"] for r in reqs):
            raise ModelError("every prompt must have at least one token id")
        if settings.greedy:
            def send(todo):
                return self._generate_ids([prefix + reqs[i]["prompt_ids"] for i in todo], settings)
        else:
            for r, k in zip(reqs, number_samples(reqs, greedy=False)):
                r["sample"] = k

            def send(todo):
                return self._generate_ids([prefix + reqs[i]["prompt_ids"] for i in todo], settings,
                                          seeds=[request_seed(reqs[i]) for i in todo])
        return self._cached("complete_ids", reqs, send, progress)

    def id_prefix(self) -> list[int]:
        """The special tokens the model's tokenizer puts before every text (a
        beginning-of-sequence token, or nothing): what :meth:`score_ids`,
        :meth:`score_ids_stats` and :meth:`generate_ids` read before the ids they
        are given. Backends without a tokenizer have none."""
        return []

    def _bos_prefix(self, bos: bool | None) -> list[int]:
        if bos not in (None, True, False):
            raise ModelError(f"bos must be None (the tokenizer's rule), True or False, got {bos!r}")
        return [] if bos is False else list(self.id_prefix())

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text in the model's own tokenizer, without special tokens."""
        raise ModelError(f"backend {self.backend!r} has no tokenizer the book can use; "
                         "token-level studies need a local model")

    def detokenize(self, ids: Sequence[Sequence[int]]) -> list[str]:
        """The text of each token-id list (inverse of :meth:`tokenize`)."""
        raise ModelError(f"backend {self.backend!r} has no tokenizer the book can use; "
                         "token-level studies need a local model")

    def _generate_ids(self, prompt_ids: Sequence[list[int]], settings: GenerationSettings,
                      seeds: Sequence[int] | None = None) -> Iterator[tuple[int, Answer]]:
        raise ModelError(f"backend {self.backend!r} cannot generate from token ids; "
                         "token-level studies need a local model")

    def _cached(self, kind: str, requests: list[dict], send_fn, progress: bool | str, *,
                desc: str | None = None, retry_errors: bool | None = None) -> list[Answer]:
        """Answer ``requests`` from the cache where possible and send the rest through
        ``send_fn(indices)``, which yields ``(position in indices, answer)``; every new
        answer is stored as it arrives. ``retry_errors`` overrides the model's setting
        (scores are never kept as errors).

        A request another process sharing the cache is already sending (it holds the
        claim, see :meth:`~analysis.core.cache.QueryCache.claim`) is not sent again:
        this call waits for that answer, and counts it as a cache hit."""
        self._check_open()
        retry = self.retry_errors if retry_errors is None else retry_errors
        keys = [self._key(kind, r) for r in requests]
        found = self.cache.get_many(set(keys))
        answers: list[Answer | None] = [None] * len(requests)
        todo: list[int] = []
        for i, key in enumerate(keys):
            hit = found.get(key)
            if hit is not None and not (hit.error and retry):
                answers[i] = Answer(hit.text, hit.error, cached=True, meta=hit.meta)
            else:
                todo.append(i)
        # identical requests in one call are sent once (sampled ones differ by their
        # ``sample`` index, so they are never collapsed)
        unique: dict[str, int] = {}
        for i in todo:
            unique.setdefault(keys[i], i)
        bar = tqdm(total=len(unique), disable=not progress or not unique, leave=False,
                   desc=progress if isinstance(progress, str) else (desc or f"{self.name} {kind}"))
        try:
            counts = self._fetch(kind, requests, unique, found, send_fn, answers, bar)
        finally:
            bar.close()
        for i in todo:
            if answers[i] is None:
                answers[i] = answers[unique[keys[i]]]
        missing = [i for i, a in enumerate(answers) if a is None]
        if missing:
            raise RuntimeError(f"backend {self.backend} returned no answer for {len(missing)} requests")
        errors = [a.error for a in answers if a.error]
        _USAGE[self.name].update(queries=len(requests), calls=counts["sent"],
                                 hits=len(requests) - len(todo) + counts["waited"], errors=len(errors))
        if errors:
            _LAST_ERROR[self.name] = errors[-1]
        self._asked.update(queries=len(requests), errors=len(errors))
        if errors:
            self._check_measuring(errors[-1])
        return answers  # type: ignore[return-value]

    def _check_measuring(self, last_error: str) -> None:
        """Raise :class:`CannotMeasure` when every query to this model so far ended in an
        error and its backend has stopped sending (:meth:`_stopped`), unless
        ``MEMBOOK_KEEP_GOING`` is set."""
        if self._asked["errors"] < self._asked["queries"] or keep_going():
            return
        reason = self._stopped()
        if reason is None:
            return
        why = "" if reason in last_error else f" ({reason})"  # a request not sent names it already
        raise CannotMeasure(
            f"{MEASURED_NOTHING}: {nothing_measured(self.name, self._asked['queries'], last_error)}; "
            f"nothing more is sent to it in this process{why}, so the run stops here, before its "
            f"other work (fix the key or the endpoint; {KEEP_GOING_ENV}=1, or "
            "scripts/execute_chapters.py --keep-going, runs the rest with every answer an error)")

    def _fetch(self, kind: str, requests: list[dict], unique: dict[str, int], found: dict, send_fn,
               answers: list, bar) -> Counter:
        """Get the answers of ``unique`` (key -> request index) that the cache did not
        give: claim them, send the ones this process holds, wait for the ones another
        process holds (and send those it gives up). Counts ``sent`` and ``waited``."""
        counts: Counter = Counter()
        if not unique:
            return counts
        seen = {k: (found[k].created if k in found else None) for k in unique}
        versions = self.versions()
        pending, waiting = dict(seen), {}
        try:
            while pending or waiting:
                if pending:
                    mine, answered, theirs = self.cache.claim(pending)
                    self._take(answered, unique, answers, bar, counts)
                    waiting.update({k: seen[k] for k in theirs})
                    pending = {}
                    if mine:
                        self._send_and_store(kind, requests, {unique[k]: k for k in mine}, send_fn, answers,
                                             bar, versions, counts)
                if waiting:
                    bar.set_postfix_str(f"waiting for {len(waiting)} answers another run is fetching")
                    answered, orphaned = self.cache.wait_for(waiting)
                    self._take(answered, unique, answers, bar, counts)
                    for key in [*answered, *orphaned]:
                        waiting.pop(key)
                    pending = {k: seen[k] for k in orphaned}
        finally:
            self.cache.release(list(unique))
        return counts

    @staticmethod
    def _take(answered: dict, unique: dict[str, int], answers: list, bar, counts: Counter) -> None:
        """Use the answers another process stored while this one waited."""
        for key, hit in answered.items():
            answers[unique[key]] = Answer(hit.text, hit.error, cached=True, meta=hit.meta)
        counts["waited"] += len(answered)
        bar.update(len(answered))

    def _send_and_store(self, kind: str, requests: list[dict], keys: dict[int, str], send_fn, answers: list,
                        bar, versions: dict, counts: Counter) -> None:
        """Send the requests at the indices of ``keys`` (index -> cache key) and store
        each answer under its key as it arrives."""
        send = list(keys)
        for j, answer in send_fn(send):
            i = send[j]
            answers[i] = answer
            bar.update(1)
            if answer.meta.get("not_sent"):
                # the backend stopped before sending it (a refused key): no call, nothing stored
                continue
            self.calls += 1
            counts["sent"] += 1
            if versions:
                answer = answers[i] = replace(answer, meta={**answer.meta, "versions": versions})
            self.cache.put(keys[i], backend=self.backend, model=self.cache_identity(),
                           kind=kind, request=requests[i], text=answer.text, error=answer.error,
                           meta=answer.meta)

    def complete(self, prompts, settings=None, **kw) -> list[Answer]:
        """Raw continuation of text prompts (base-model style)."""
        return self.generate(prompts, settings, chat=False, **kw)

    def chat(self, conversations, settings=None, **kw) -> list[Answer]:
        """Chat completion: each item is a message list or a single user message."""
        return self.generate(conversations, settings, chat=True, **kw)

    def next_token(self, prefixes: Sequence[str], **kw) -> list[str | None]:
        """Greedy top-1 next token (as text) after each prefix; None on error."""
        answers = self.complete(prefixes, GenerationSettings(max_new_tokens=1), **kw)
        return [a.text if a.ok else None for a in answers]

    def next_word(self, prefixes: Sequence[str], max_new_tokens: int = 8, **kw) -> list[str | None]:
        """Greedy next word after each prefix: the first whitespace-delimited word of a
        short greedy continuation; None on error, "" if no word was produced."""
        answers = self.complete(prefixes, GenerationSettings(max_new_tokens=max_new_tokens), **kw)
        out: list[str | None] = []
        for a in answers:
            if not a.ok:
                out.append(None)
                continue
            m = _WORD.search(a.text or "")
            out.append(m.group(0) if m else "")
        return out

    def logprobs(
        self, contexts: Sequence[str], continuations: Sequence[str], *, progress: bool | str = False
    ) -> list[np.ndarray]:
        """Per-token log-probabilities of each continuation given its context
        (teacher forcing), as float arrays; cached like every other answer."""
        if len(contexts) != len(continuations):
            raise ModelError("contexts and continuations must have the same length")
        reqs = [{"context": c, "continuation": s} for c, s in zip(contexts, continuations)]

        def send(todo):
            for j, lp in self._logprobs([contexts[i] for i in todo], [continuations[i] for i in todo]):
                yield j, Answer(None, meta={"logprobs": [float(x) for x in lp]})

        answers = self._cached("logprobs", reqs, send, progress,
                               desc=f"{self.name} logprobs", retry_errors=True)
        return [np.asarray(a.meta["logprobs"], dtype=float) for a in answers]

    def score_ids(self, sequences: Sequence[Sequence[int]], *, progress: bool | str = False,
                  bos: bool | None = None) -> list[dict]:
        """Teacher-forced scores of whole token sequences (given as ids).

        For each sequence of ``n`` tokens, returns a dict with ``logprobs`` (the
        log-probability of tokens ``1 .. n-1`` given all tokens before them) and
        ``argmax`` (whether each of those tokens was the model's top prediction),
        both arrays of length ``n - 1``. Cached per sequence like every answer.
        Only backends that own their tokenizer (local models) support this. The
        model reads its beginning-of-sequence token first where its tokenizer has
        one (:meth:`id_prefix`; ``bos=False`` leaves it out); the scores are still
        those of tokens ``1 .. n-1``.
        """
        prefix = self._bos_prefix(bos)
        reqs = [{"ids": [int(t) for t in ids], **_bos_field(prefix)} for ids in sequences]
        if any(len(r["ids"]) < 2 for r in reqs):
            raise ModelError("every sequence must have at least two token ids")
        skip = len(prefix)

        def send(todo):
            for j, scored in self._score_ids([prefix + reqs[i]["ids"] for i in todo]):
                if isinstance(scored, Answer):  # a request that failed (a served model)
                    yield j, scored
                    continue
                lp, top = scored
                lp, top = lp[skip:], top[skip:]
                meta = {"logprobs": [float(x) for x in lp], "argmax": [bool(x) for x in top]}
                yield j, Answer(None, meta=meta)

        answers = self._cached("score_ids", reqs, send, progress, desc=f"{self.name} scores",
                               retry_errors=True)
        raise_failed(self.name, "score", answers)
        return [{"logprobs": np.asarray(a.meta["logprobs"], dtype=float),
                 "argmax": np.asarray(a.meta["argmax"], dtype=bool)} for a in answers]

    def _score_ids(self, sequences: Sequence[list[int]]
                   ) -> Iterator[tuple[int, tuple[list[float], list[bool]]]]:
        raise ModelError(f"backend {self.backend!r} cannot score token ids; "
                         "token-level studies need a local model")

    def score_ids_stats(self, sequences: Sequence[Sequence[int]], *, progress: bool | str = False,
                        bos: bool | None = None) -> list[dict]:
        """Teacher-forced scores of whole token sequences with the moments of each
        next-token distribution (what Min-K%++ needs).

        For each sequence of ``n`` tokens, returns a dict of arrays of length ``n - 1``:
        ``logprobs`` (log p of tokens ``1 .. n-1`` given all tokens before them, as
        :meth:`score_ids`), and ``mu`` and ``sigma``, the mean and standard deviation
        of log p(z) over the vocabulary under the model's own next-token distribution
        p(z | tokens before): ``mu = Σ_z p(z) log p(z)``, ``sigma² = Σ_z p(z) (log p(z) − mu)²``.
        Cached per sequence under its own request kind (``score_ids_stats``); the
        beginning-of-sequence token is read first as in :meth:`score_ids`.
        """
        prefix = self._bos_prefix(bos)
        reqs = [{"ids": [int(t) for t in ids], **_bos_field(prefix)} for ids in sequences]
        if any(len(r["ids"]) < 2 for r in reqs):
            raise ModelError("every sequence must have at least two token ids")
        skip = len(prefix)

        def send(todo):
            for j, scored in self._score_ids_stats([prefix + reqs[i]["ids"] for i in todo]):
                if isinstance(scored, Answer):  # a request that failed (a served model)
                    yield j, scored
                    continue
                lp, mu, sigma = (x[skip:] for x in scored)
                meta = {"logprobs": [float(x) for x in lp], "mu": [float(x) for x in mu],
                        "sigma": [float(x) for x in sigma], **self._stats_meta()}
                yield j, Answer(None, meta=meta)

        answers = self._cached("score_ids_stats", reqs, send, progress, desc=f"{self.name} score stats",
                               retry_errors=True)
        raise_failed(self.name, "score", answers)
        return [{k: np.asarray(a.meta[k], dtype=float) for k in ("logprobs", "mu", "sigma")} for a in answers]

    def _score_ids_stats(self, sequences: Sequence[list[int]]
                         ) -> Iterator[tuple[int, tuple[list[float], list[float], list[float]]]]:
        raise ModelError(f"backend {self.backend!r} cannot score token ids; "
                         "token-level studies need a local model")

    def _stats_meta(self) -> dict:
        """What :meth:`score_ids_stats` records of how its moments were computed
        (nothing: exactly, over the vocabulary; a served model's come from the top k)."""
        return {}

    def _key(self, kind: str, request: dict) -> str:
        return QueryCache.key(self.backend, self.cache_identity(), kind, request)


def raise_failed(model: str, what: str, answers: Sequence[Answer]) -> None:
    """Raise a :class:`ModelError` when any answer of a token-level call is an error:
    ids and scores feed every later step, so a call with a failed request measures
    nothing. The answers that came back are cached; the next run sends only the
    failed ones (errors are never kept for these kinds)."""
    errors = [a.error for a in answers if a.error]
    if errors:
        raise ModelError(f"{model}: {len(errors)} of {len(answers)} {what} requests failed "
                         f"(the rest are cached; re-run to retry them); last: {errors[-1]}")


def _bos_field(prefix: list[int]) -> dict:
    """The request field that names a prefix read before the ids (so a score with
    and one without it have different keys); nothing when there is none, so the
    keys of models without one are those of every earlier run."""
    return {"prefix_ids": list(prefix)} if prefix else {}


def _as_chat(prompt: Prompt) -> Messages:
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return [dict(m) for m in prompt]


def _as_text(prompt: Prompt) -> str:
    if not isinstance(prompt, str):
        raise ModelError("a raw completion prompt must be a string, not a message list")
    return prompt

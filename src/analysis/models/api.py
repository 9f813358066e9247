"""Chat models behind an OpenAI-compatible chat-completions endpoint.

``load_model("api:<model id>")`` returns an :class:`OpenAIChatModel`. It talks
to OpenRouter by default, or to any other OpenAI-compatible server (a local
vLLM or llama.cpp server, another provider) through the official ``openai``
client:

* ``MEMBOOK_API_BASE_URL``: the endpoint (default ``https://openrouter.ai/api/v1``);
* ``MEMBOOK_API_KEY``, else ``OPENROUTER_API_KEY``, else ``OPENAI_API_KEY``: the key;
* ``MEMBOOK_API_CONCURRENCY``: requests in flight at once, a whole number from 1
  to 256 (default 4; the ``concurrency=`` argument wins);
* ``MEMBOOK_API_TIMEOUT``, ``MEMBOOK_API_MAX_RETRIES``, ``MEMBOOK_API_BASE_DELAY``:
  see :class:`OpenAIChatModel`.

An endpoint that refuses the key (HTTP 401 or 403) gets no further request from
this process: every remaining query is recorded as an error "not sent:
authentication failed ...", which is neither sent, stored nor scored. The same
holds after :data:`UNREACHABLE_AFTER` requests in a row failed to connect at all.
A run in which every query to a model failed is a failed run
(``scripts/execute_chapters.py``), and it stops at the first sign: once the
endpoint is stopped, the first call whose answers are all errors, of a model
that has had no answer in this process, raises
:class:`~analysis.models.base.CannotMeasure` ("measured nothing"), so a chapter
fails in the cell that needs the model, before its other work;
``MEMBOOK_KEEP_GOING=1`` (``execute_chapters.py --keep-going``) answers errors
instead, as before.

On a vLLM or llama.cpp server the same model also tokenizes, scores token ids and
continues token-id prompts (:class:`~analysis.models.served.ServedTokens`, a base of
:class:`OpenAIChatModel`): what the server can do is probed once and kept in the
query cache.

The key is read from the environment only and lives nowhere but inside the
``openai`` client: never in the query cache, an answer's ``meta``, ``repr()``,
log records or error text.

Requests run concurrently in a thread pool of ``concurrency`` workers, over
one HTTP connection pool with room to keep every worker's connection alive,
and are retried with exponential backoff and full jitter on rate limits,
server errors, timeouts and connection failures. Concurrency is a transport
setting: it is part of no cache key and changes no answer. A request that
still fails becomes an :class:`~analysis.models.base.Answer` with ``error``
set (never completion text), which the base class stores so the next run can
retry it.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import logging
import numbers
import os
import random
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any
from urllib.parse import urlsplit

from analysis.core.cache import QueryCache
from analysis.models import API_PREFIX
from analysis.models.base import Answer, Model, ModelError, Request
from analysis.models.served import TOKEN_KINDS, ServedTokens

log = logging.getLogger(__name__)

BASE_URL_ENV = "MEMBOOK_API_BASE_URL"
DEFAULT_BASE_URL = "https://openrouter.ai/api/v1"
KEY_ENVS = ("MEMBOOK_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY")
TIMEOUT_ENV = "MEMBOOK_API_TIMEOUT"
RETRIES_ENV = "MEMBOOK_API_MAX_RETRIES"
DELAY_ENV = "MEMBOOK_API_BASE_DELAY"
CONCURRENCY_ENV = "MEMBOOK_API_CONCURRENCY"
#: requests in flight at once when neither the argument nor the environment says
DEFAULT_CONCURRENCY = 4
#: the largest concurrency accepted: far above what one key's rate limit allows,
#: low enough that a typo (4000) does not start thousands of threads and connections
MAX_CONCURRENCY = 256


def api_key_problem() -> str | None:
    """What is missing for an API model to run (no key in the environment), or None."""
    if any(os.environ.get(k) for k in KEY_ENVS):
        return None
    return f"set one of {', '.join(KEY_ENVS)} (checked in that order) in the environment"


def endpoint_problem(base_url: str | None = None) -> str | None:
    """What is wrong with the endpoint settings in the environment (the base URL,
    ``MEMBOOK_API_CONCURRENCY``, ``MEMBOOK_API_TIMEOUT``, ``MEMBOOK_API_MAX_RETRIES``,
    ``MEMBOOK_API_BASE_DELAY``), or None. Sends nothing: the chapters' parameter
    check calls it before any kernel starts."""
    url = (base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return (f"{BASE_URL_ENV} must be an http(s) URL such as https://openrouter.ai/api/v1 or "
                f"http://localhost:8000/v1, got {url!r}")
    try:
        concurrency_setting()
        timeout = _env_number(TIMEOUT_ENV, float, 120.0)
        max_retries, base_delay = retry_settings()
    except ModelError as err:
        return str(err)
    if timeout <= 0 or max_retries < 0 or base_delay < 0:
        return (f"{TIMEOUT_ENV} must be > 0, {RETRIES_ENV} and {DELAY_ENV} >= 0; got {timeout:g}, "
                f"{max_retries}, {base_delay:g}")
    return None


def _env_number(var: str, kind: type, default: float):
    text = os.environ.get(var)
    if text is None or not text.strip():
        return default
    try:
        return kind(text)
    except ValueError:
        what = "number" if kind is float else "whole number"
        raise ModelError(f"{var} must be a {what}, got {text!r}") from None


def concurrency_setting(concurrency: int | None = None) -> int:
    """Requests in flight at once: ``concurrency`` if given, else
    ``$MEMBOOK_API_CONCURRENCY``, else :data:`DEFAULT_CONCURRENCY`.

    Raises
    ------
    ModelError
        If the value is not a whole number from 1 to :data:`MAX_CONCURRENCY`.
    """
    allowed = f"a whole number from 1 to {MAX_CONCURRENCY}"
    if concurrency is None:
        text = os.environ.get(CONCURRENCY_ENV)
        if text is None or not text.strip():
            return DEFAULT_CONCURRENCY
        try:
            value = int(text)
        except ValueError:
            value = 0
        if not 1 <= value <= MAX_CONCURRENCY:
            raise ModelError(f"{CONCURRENCY_ENV} must be {allowed} (requests in flight at once), "
                             f"got {text!r}")
        return value
    if (isinstance(concurrency, bool) or not isinstance(concurrency, numbers.Integral)
            or not 1 <= concurrency <= MAX_CONCURRENCY):
        raise ModelError(f"concurrency must be {allowed} (requests in flight at once; it overrides "
                         f"{CONCURRENCY_ENV}), got {concurrency!r}")
    return int(concurrency)


#: HTTP statuses worth retrying: request timeout, rate limit, server errors.
RETRY_STATUSES = frozenset({408, 429}) | frozenset(range(500, 600))
#: HTTP statuses that say the key is wrong or not allowed: no further request to
#: the endpoint is sent in this process after one of them
AUTH_STATUSES = frozenset({401, 403})
#: requests in a row that ended (after their retries) in a connection failure, with
#: no answer in between, after which the endpoint counts as unreachable
UNREACHABLE_AFTER = 3
#: the error text of a request that was not sent, because its endpoint was stopped
NOT_SENT = "not sent: "
_MAX_ERROR_CHARS = 300
_REDACTED = "[redacted]"


# The two exceptions below are internal to the retry loop of this module: they never
# leave it (a request that still fails becomes an Answer whose ``error`` names them);
# the model layer's one public error is ModelError.


class MalformedResponseError(Exception):
    """The endpoint answered 200 with a body that is not a chat completion."""


class UpstreamError(Exception):
    """The endpoint answered 200 but the body reports an error (OpenRouter does
    this when the provider behind it fails)."""

    def __init__(self, message: str, code: Any = None):
        super().__init__(message)
        self.code = code


class _Endpoint:
    """What this process knows about one endpoint (base URL and key): whether it is
    stopped (after an authentication failure, or :data:`UNREACHABLE_AFTER`
    connection failures in a row), and why. Shared by every model on the
    endpoint, so a chapter that loads a second model there sends nothing either."""

    def __init__(self):
        self.lock = threading.Lock()
        self.stopped: str | None = None
        self.failures_in_a_row = 0

    def stop(self, reason: str) -> None:
        with self.lock:
            self.stopped = self.stopped or reason

    def record(self, answer: Answer, exc: Exception | None) -> None:
        """Count a finished request: an answer resets the connection-failure run."""
        import openai  # heavy: loaded only when an API model is used
        with self.lock:
            if exc is None:
                self.failures_in_a_row = 0
                return
            if isinstance(exc, openai.APIConnectionError) and not isinstance(exc, openai.APITimeoutError):
                self.failures_in_a_row += 1
                if self.failures_in_a_row >= UNREACHABLE_AFTER and self.stopped is None:
                    self.stopped = (f"the endpoint is unreachable ({self.failures_in_a_row} requests in a "
                                    f"row failed to connect; last: {answer.error})")


_ENDPOINTS: dict[tuple[str, str], _Endpoint] = {}
_ENDPOINTS_LOCK = threading.Lock()


def _endpoint(base_url: str, key: str) -> _Endpoint:
    # keyed by a hash of the key, never the key itself
    ident = (base_url, hashlib.sha256(key.encode()).hexdigest())
    with _ENDPOINTS_LOCK:
        return _ENDPOINTS.setdefault(ident, _Endpoint())


def reset_endpoints() -> None:
    """Forget every stopped endpoint of this process (a fixed key or a server back
    up is then tried again without a restart)."""
    with _ENDPOINTS_LOCK:
        _ENDPOINTS.clear()


class OpenAIChatModel(ServedTokens, Model):
    """A chat model served by an OpenAI-compatible chat-completions endpoint.

    Parameters
    ----------
    model_id
        The model id the endpoint knows, e.g. ``"meta-llama/llama-3.1-8b-instruct"``.
        The model's ``name`` (in result tables, legends and glue) is the name the
        user passed to :func:`~analysis.models.load_model`, ``"api:" + model_id``.
    base_url
        Overrides ``$MEMBOOK_API_BASE_URL`` (the key cannot be overridden: it comes
        from the environment only).
    concurrency
        Number of requests in flight at once, from 1 to 256; default
        ``$MEMBOOK_API_CONCURRENCY`` or 4. Four keeps a free or new key under
        typical provider rate limits (more requests per second only buys 429s
        and backoff there); the client itself is not what limits it: against a
        server answering in 50 ms, 8 workers reach about 0.9 of the ideal
        ``8 / 50 ms`` (``scripts/bench_api.py``). Raise it for a local server or
        a key with a high rate limit. A transport setting: not part of the cache
        key, and answers are the same at any concurrency.
    timeout
        Seconds before one HTTP request is abandoned (and retried); default
        ``$MEMBOOK_API_TIMEOUT`` or 120.
    max_retries
        Retries after the first attempt of a request, for retryable failures only;
        default ``$MEMBOOK_API_MAX_RETRIES`` or 5.
    base_delay, max_delay
        Backoff before retry ``n`` is drawn uniformly from
        ``[0, min(max_delay, base_delay * 2**n)]`` (full jitter). A ``Retry-After``
        header replaces the draw, capped at ``max_delay``.
    cache, retry_errors
        As for :class:`~analysis.models.base.Model`.

    Raises
    ------
    ModelError
        If no API key is set, or an argument is out of range.
    """

    backend = "openai"
    is_chat = True

    def __init__(
        self,
        model_id: str,
        *,
        base_url: str | None = None,
        concurrency: int | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        base_delay: float | None = None,
        max_delay: float = 30.0,
        cache: QueryCache | None = None,
        retry_errors: bool = True,
        revision: str | None = None,
        **unexpected: Any,
    ):
        import openai  # heavy: loaded only when an API model is used
        if "api_key" in unexpected:
            raise ModelError(
                "the API key cannot be passed as an argument; set one of "
                f"{', '.join(KEY_ENVS)} in the environment"
            )
        if unexpected:
            raise ModelError(
                f"unexpected argument(s) {sorted(unexpected)} for an API model; allowed: base_url, "
                "concurrency, timeout, max_retries, base_delay, max_delay, cache, retry_errors, revision"
            )
        concurrency = concurrency_setting(concurrency)
        timeout = _env_number(TIMEOUT_ENV, float, 120.0) if timeout is None else timeout
        max_retries, base_delay = retry_settings(max_retries, base_delay)
        if max_retries < 0:
            raise ModelError(f"max_retries must be >= 0, got {max_retries}")
        if timeout <= 0 or base_delay < 0 or max_delay < 0:
            raise ModelError("timeout must be > 0 and base_delay, max_delay >= 0")
        key = next((os.environ[k] for k in KEY_ENVS if os.environ.get(k)), None)
        if key is None:
            raise ModelError(f"no API key for model {model_id!r}: {api_key_problem()}")
        self.base_url = (base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ModelError(f"base_url must be an http(s) URL, got {self.base_url!r}")
        # host[:port] only: never the path, and never user:password@ from the URL
        self.host = parts.hostname + (f":{parts.port}" if parts.port else "")
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.model_id = model_id
        self.revision = revision
        name = API_PREFIX + model_id + (f"@{revision}" if revision else "")
        super().__init__(name, cache=cache, retry_errors=retry_errors)
        # the client is the only holder of the key; retries are ours, not the client's
        self._client = openai.OpenAI(
            base_url=self.base_url,
            api_key=key,
            timeout=timeout,
            max_retries=0,
            http_client=openai.DefaultHttpxClient(limits=_pool_limits(concurrency)),
        )
        self._rng = random.Random()
        self._endpoint = _endpoint(self.base_url, key)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, host={self.host!r})"

    def _release(self) -> None:
        """Close the HTTP client and its connection pool."""
        self._client.close()

    def _stopped(self) -> str | None:
        return self._endpoint.stopped

    def cache_identity(self) -> str:
        """``host/model id``, with ``@revision`` when the user set a revision label.

        A provider can re-point an alias (``openai/gpt-4o``) at a new model; the
        label (``api:openai/gpt-4o@2024-11``) keeps answers from before and after
        apart. Every answer also records the model id the endpoint reported
        serving (``meta["model"]``)."""
        return f"{self.host}/{self.model_id}" + (f"@{self.revision}" if self.revision else "")

    def _key(self, kind: str, request: dict) -> str:
        """The cache key; the kinds that depend on the server's tokenizer carry its identity
        (:meth:`~analysis.models.served.ServedTokens.capabilities`)."""
        identity = self.cache_identity() + (self.token_identity(kind) if kind in TOKEN_KINDS else "")
        return QueryCache.key(self.backend, identity, kind, request)

    def versions(self) -> dict[str, str]:
        import openai  # heavy: loaded only when an API model is used
        return {"openai": openai.__version__}

    # -- the backend primitive ---------------------------------------------------
    def _generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Answer]]:
        """Send ``requests`` with bounded concurrency; yield each answer as it arrives."""
        raw = [i for i, r in enumerate(requests) if not r.chat]
        if raw:
            raise ModelError(
                f"{self!r} serves a chat-completions endpoint, which cannot continue raw text "
                f"({len(raw)} raw completion request(s)); use chat() / generate(chat=True), "
                "or a local model for complete(), next_token() and next_word()"
            )
        yield from self._pooled(requests, self._send)

    def _pooled(self, items: Sequence, send) -> Iterator[tuple[int, Answer]]:
        """``send(item, stop)`` for every item with bounded concurrency; yield
        ``(index, answer)`` as each one arrives."""
        stop = threading.Event()
        pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="membook-api")
        try:
            futures = {pool.submit(send, item, stop): i for i, item in enumerate(items)}
            for future in as_completed(futures):
                yield futures[future], future.result()
        finally:
            # reached early when the caller stops (error, Ctrl-C): abandon waits and queued work
            stop.set()
            pool.shutdown(wait=False, cancel_futures=True)

    def _send(self, request: Request, stop: threading.Event) -> Answer:
        """One chat request with retries; failures come back as an error answer."""
        s = request.settings
        params: dict[str, Any] = {
            "model": self.model_id,
            "messages": request.prompt,
            "temperature": s.temperature,
            "max_tokens": s.max_new_tokens,
            # a sampled request's own seed (a hash of the request, with its sample index):
            # an endpoint that honours seeds answers repeated samples differently
            "seed": s.seed if s.greedy else request.seed,
        }
        if s.top_p is not None:
            params["top_p"] = s.top_p
        if s.top_k is not None:
            # not an OpenAI parameter, but vLLM, llama.cpp and OpenRouter read it from the body
            params["extra_body"] = {"top_k": s.top_k}
        return self._with_retries(
            lambda attempt: _parse_completion(
                self._client.chat.completions.with_raw_response.create(**params).text, attempts=attempt),
            stop)

    @staticmethod
    def _payload(body: str) -> Any:
        """A response body's JSON, or the malformed-response error the retry loop records."""
        try:
            return json.loads(body)
        except ValueError as exc:
            raise MalformedResponseError(f"response body is not JSON ({exc})") from None

    def _with_retries(self, call, stop: threading.Event) -> Answer:
        """``call(attempt)`` (one HTTP request, parsed into an :class:`Answer`) with
        retries; failures come back as an error answer, and an endpoint that refused the
        key or cannot be reached gets no request at all."""
        import openai  # heavy: loaded only when an API model is used
        attempt = 0
        while True:
            attempt += 1
            if attempt == 1 and self._endpoint.stopped:
                # never sent: not an answer, not stored, retried by the next run
                return Answer(text=None, error=NOT_SENT + self._endpoint.stopped,
                              meta={"attempts": 0, "not_sent": True})
            try:
                answer = call(attempt)
                self._endpoint.record(answer, None)
                return answer
            except (openai.OpenAIError, MalformedResponseError, UpstreamError) as exc:
                error, meta = self._describe(exc), {"attempts": attempt}
                status = getattr(exc, "status_code", None)
                if status is not None:
                    meta["status_code"] = status
                if status in AUTH_STATUSES:
                    self._endpoint.stop(f"authentication failed (HTTP {status} from {self.host}: {error})")
                if (not _retryable(exc) or attempt > self.max_retries or stop.is_set()
                        or self._endpoint.stopped):
                    answer = Answer(text=None, error=error, meta=meta)
                    self._endpoint.record(answer, exc)
                    return answer
                delay = self._backoff(attempt, exc)
                log.info(
                    "%s: attempt %d failed (%s); retrying in %.2f s",
                    self.name,
                    attempt,
                    error,
                    delay,
                )
                if stop.wait(delay):
                    return Answer(text=None, error=f"Cancelled: {error}", meta=meta)

    def _backoff(self, attempt: int, exc: Exception) -> float:
        """Delay before retry number ``attempt``: Retry-After if given, else full jitter."""
        after = _retry_after(exc)
        if after is not None:
            return min(max(after, 0.0), self.max_delay)
        return full_jitter(attempt, self.base_delay, self.max_delay, self._rng)

    def _describe(self, exc: Exception) -> str:
        """``"<ExceptionType>: <short message>"`` with the key scrubbed out (an endpoint
        may echo request headers into its error body)."""
        message = " ".join(str(exc).split())
        key = self._client.api_key
        if key:
            message = message.replace(key, _REDACTED)
        if len(message) > _MAX_ERROR_CHARS:
            message = message[: _MAX_ERROR_CHARS - 3] + "..."
        return f"{type(exc).__name__}: {message}"


def _pool_limits(concurrency: int):
    """The openai client's connection-pool limits, raised where needed so that every
    worker keeps its connection alive between requests (the client's default keeps
    100 alive: above that, each request would open a new connection and, over
    https, do a new TLS handshake)."""
    import openai  # heavy: loaded only when an API model is used
    default = openai.DEFAULT_CONNECTION_LIMITS

    def at_least(limit: int | None) -> int | None:
        return None if limit is None else max(limit, concurrency)

    return type(default)(
        max_connections=at_least(default.max_connections),
        max_keepalive_connections=at_least(default.max_keepalive_connections),
        keepalive_expiry=default.keepalive_expiry,
    )


def full_jitter(attempt: int, base_delay: float, max_delay: float, rng: random.Random) -> float:
    """The book's backoff policy for every remote service (API models, the
    infini-gram API): before retry number ``attempt`` (1, 2, ...) wait a uniform
    draw from ``[0, min(max_delay, base_delay · 2^(attempt - 1))]`` ("full jitter":
    exponential growth, and clients that failed together do not retry together)."""
    return rng.uniform(0.0, min(max_delay, base_delay * 2 ** (attempt - 1)))


def retry_settings(max_retries: int | None = None, base_delay: float | None = None) -> tuple[int, float]:
    """``max_retries`` and ``base_delay``, each from the environment
    (``MEMBOOK_API_MAX_RETRIES``, default 5; ``MEMBOOK_API_BASE_DELAY``, default 1 s)
    when not given."""
    max_retries = _env_number(RETRIES_ENV, int, 5) if max_retries is None else max_retries
    base_delay = _env_number(DELAY_ENV, float, 1.0) if base_delay is None else base_delay
    return max_retries, base_delay


def _retryable(exc: Exception) -> bool:
    import openai  # heavy: loaded only when an API model is used
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRY_STATUSES
    if isinstance(exc, UpstreamError):
        try:
            return int(exc.code) in RETRY_STATUSES
        except (TypeError, ValueError):
            return True  # an unexplained provider failure is usually transient
    return False


def _retry_after(exc: Exception) -> float | None:
    """Seconds asked for by ``Retry-After`` / ``Retry-After-Ms`` on an error response."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        return None if parsed is None else email.utils.mktime_tz(parsed) - time.time()


def _parse_completion(body: str, *, attempts: int) -> Answer:
    """Turn a chat-completion response body into an :class:`Answer`.

    Empty or null content is a valid (empty) answer, not an error: the
    ``finish_reason`` in ``meta`` tells the caller whether to re-ask with a
    larger token budget.
    """
    try:
        payload = json.loads(body)
    except ValueError as exc:
        raise MalformedResponseError(f"response body is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise MalformedResponseError(
            f"response body is a JSON {type(payload).__name__}, not an object"
        )
    choices = payload.get("choices")
    if not choices and isinstance(payload.get("error"), dict):
        err = payload["error"]
        raise UpstreamError(
            str(err.get("message", "error reported in a 200 response")), err.get("code")
        )
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedResponseError("response has no choices")
    choice = choices[0]
    if isinstance(choice.get("error"), dict) or choice.get("finish_reason") == "error":
        err = choice.get("error") or {}
        raise UpstreamError(
            str(err.get("message", "the provider failed mid-generation")), err.get("code")
        )
    message = choice.get("message")
    if not isinstance(message, dict):
        raise MalformedResponseError("response choice has no message")
    content = message.get("content")
    if isinstance(content, list):
        # some servers return content parts instead of a string
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise MalformedResponseError(f"message content is a {type(content).__name__}, not text")
    usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
    meta: dict[str, Any] = {
        "finish_reason": choice.get("finish_reason"),
        "model": payload.get("model"),
        "id": payload.get("id"),
        "usage": {k: v for k, v in usage.items() if isinstance(v, (int, float))},
        "attempts": attempts,
    }
    if message.get("refusal"):
        meta["refusal"] = message["refusal"]
    return Answer(text=content, meta=meta)

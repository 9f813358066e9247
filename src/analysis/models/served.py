"""Token-level access to a model behind an OpenAI-compatible server: prompt
log-probabilities and token ids from vLLM- and llama.cpp-style servers.

The entropy, predicting and distributional chapters need what a chat endpoint does
not give: the model's own tokens, and the log-probability of every token of a
given text. The engines readers serve models with expose both:

* the completions endpoint with ``echo`` and ``logprobs`` (vLLM,
  llama-cpp-python's ``llama_cpp.server`` started with ``--logits_all true``, the
  OpenAI legacy API): each prompt token's log-probability and the top ``k``;
* ``prompt_logprobs`` (vLLM): the same keyed by token id, with each token's rank;
* prompts given as token-id lists (vLLM);
* ``/tokenize`` and ``/detokenize`` (vLLM), ``/extras/tokenize`` and
  ``/extras/detokenize`` (llama-cpp-python).

:class:`ServedTokens` (a base of :class:`~analysis.models.api.OpenAIChatModel`)
learns what the server can do from a probe before any chapter work
(:meth:`~ServedTokens.capabilities`): which tokenize route answers, what the
tokenizer puts before every text, whether a completions request with a token-id
prompt is taken, whether prompt log-probabilities come back and how many top
log-probabilities each position has. The probe's answer is stored in the query
cache like every other answer, so a warm re-run needs no server. A chapter asks
for what it needs with :meth:`~ServedTokens.require`, which names what is missing
and the server options that provide it (:data:`PROVIDED_BY`).

What a served score cannot give: Min-K%++ needs the mean and variance of log p over
the whole vocabulary at each position, and a server returns only the top ``k``.
:func:`topk_moments` computes them from the top ``k`` (the tail's mass spread evenly
over the rest of the vocabulary when its size is known, else left out), and every
such score carries ``meta["moments"] = "top-k"``.

A server without token-id prompts (llama.cpp) is sent the text of the ids; before
that, the book tokenizes the text on the server and refuses to score a sequence
that does not come back as the same ids (an error answer, never a score of another
sequence).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from analysis.core.cache import stable_hash
from analysis.models.base import Answer, ModelError, raise_failed

#: the text whose ids identify the server's tokenizer (and find its routes)
PROBE_TEXT = "Memorization, in 2024: the quick brown fox jumps over the lazy dog; naïve café 東京."
#: bumped when the probe changes what it records
PROBE_VERSION = 2
#: top log-probabilities asked for per position (vLLM's default --max-logprobs is 20)
DEFAULT_TOP_K = 20
#: the longest text sent to a server's tokenizer in one request. llama-cpp-python's
#: ``/extras/tokenize`` takes time that grows faster than the text (measured on Gemma 3
#: 270M: 0.17 s for 100,000 characters, 3 s for 400,000, and past the client's timeout
#: for the mirror's longest popular text, 5 million), so a longer text is cut after line
#: breaks into pieces of at most this many characters (:func:`text_pieces`)
TOKENIZE_CHARS = 100_000
#: the kinds of request that depend on the server's tokenizer (their cache keys carry it)
TOKEN_KINDS = frozenset({"score_ids", "score_ids_stats", "complete_ids", "tokenize", "detokenize"})

#: the error of a sequence a server without token-id prompts cannot be sent faithfully
NOT_ROUND_TRIP = ("not sent: the server takes no token-id prompts and tokenizes this sequence's text "
                  "to other ids")
#: why an echo one entry short of a sequence without a beginning-of-sequence token is refused
ECHO_WITHOUT_BOS = ("llama-cpp-python's echo assumes a leading beginning-of-sequence token; for a model "
                    "that adds none it reads each prompt token's score from the next position's "
                    "distribution, so these scores are not used")
#: what each capability is, in words
CAPABILITIES = {
    "prompt_scores": "the log-probability of every prompt token (echo with logprobs, or prompt_logprobs)",
    "tokenize": "the model's own tokenizer (a /tokenize or /extras/tokenize route)",
    "token_ids": "prompts given as token-id lists",
}
#: the server options that provide each capability
PROVIDED_BY = {
    "prompt_scores": ("vLLM answers completions with echo=true and logprobs, and prompt_logprobs "
                      "(raise --max-logprobs above 20 for more top tokens); llama-cpp-python needs "
                      "`python -m llama_cpp.server --model M --logits_all true`"),
    "tokenize": ("vLLM serves /tokenize and /detokenize; llama-cpp-python serves /extras/tokenize "
                 "and /extras/detokenize"),
    "token_ids": ("vLLM takes token-id prompts; llama.cpp's server does not (the book then sends the "
                  "text and checks that the server tokenizes it back to the same ids)"),
}

#: the two tokenize dialects: route, request body, field of the ids; detokenize route and field
_ROUTES = (
    {"tokenize": "/tokenize", "detokenize": "/detokenize", "text_field": "prompt", "out_field": "prompt"},
    {"tokenize": "/extras/tokenize", "detokenize": "/extras/detokenize", "text_field": "input",
     "out_field": "text"},
)


@dataclass(frozen=True)
class Capabilities:
    """What a server can do for token-level work (:meth:`ServedTokens.capabilities`).

    ``tokenize`` is the route (``"/tokenize"``, ``"/extras/tokenize"``) or None;
    ``prefix`` the ids its tokenizer puts before every text (a beginning-of-sequence
    token, or nothing); ``tokenizer`` an identity of the tokenizer (a hash of the
    probe text's ids); ``token_ids`` whether a completions prompt may be token ids;
    ``prompt_scores`` how prompt log-probabilities come back (``"prompt_logprobs"``,
    ``"echo"``) or None; ``top_k`` the top log-probabilities per position; ``why``
    what failed, per capability, in the server's words."""

    tokenize: str | None
    prefix: tuple[int, ...]
    tokenizer: str | None
    token_ids: bool
    prompt_scores: str | None
    top_k: int
    why: dict

    def lacks(self, needs: Iterable[str]) -> list[str]:
        """The capabilities of ``needs`` (names of :data:`CAPABILITIES`) this server lacks."""
        unknown = sorted(set(needs) - set(CAPABILITIES))
        if unknown:
            raise ModelError(f"unknown capabilities {unknown}; allowed: {sorted(CAPABILITIES)}")
        have = {"prompt_scores": self.prompt_scores is not None, "tokenize": self.tokenize is not None,
                "token_ids": self.token_ids}
        return [n for n in needs if not have[n]]

    def as_dict(self) -> dict:
        out = asdict(self)
        out["prefix"] = list(self.prefix)
        return out

    @classmethod
    def from_dict(cls, d: dict) -> Capabilities:
        return cls(d["tokenize"], tuple(d["prefix"]), d["tokenizer"], d["token_ids"], d["prompt_scores"],
                   int(d["top_k"]), dict(d.get("why") or {}))


def missing_text(model: str, lacks: Sequence[str], why: dict) -> str:
    """The error a chapter raises when ``model``'s server lacks ``lacks``: each
    capability in words, what the server said, and the options that provide it."""
    parts = [f"{n}: {CAPABILITIES[n]}" + (f" (the server answered: {why[n]})" if why.get(n) else "")
             + f"; {PROVIDED_BY[n]}" for n in lacks]
    return f"{model}'s server lacks what this chapter needs: " + " | ".join(parts)


# -- reading the two dialects ----------------------------------------------------

def _choice(payload: Any) -> dict:
    choices = payload.get("choices") if isinstance(payload, dict) else None
    if not isinstance(choices, list) or not choices:
        raise ValueError("the completions response has no choices")
    choice = payload["choices"][0]
    if not isinstance(choice, dict):
        raise ValueError("the completions response's choice is not an object")
    return choice


def prompt_entries(payload: Any, ids: Sequence[int]) -> tuple[str, list[dict | None]]:
    """Per-position scores of the prompt tokens in a completions response: the dialect
    (``"prompt_logprobs"`` or ``"echo"``) and a list aligned with the tokens the server
    returned for the prompt, each None (no score: the first token) or a dict with
    ``logprob`` (of the prompt token), ``argmax`` (whether it was the top prediction)
    and ``top`` (the returned top log-probabilities, the prompt token's included).

    vLLM's ``prompt_logprobs`` is a list of None or ``{token id: {"logprob", "rank"}}``,
    read at ``ids`` (the token ids sent). ``echo`` is the OpenAI legacy shape:
    ``logprobs.token_logprobs`` and ``logprobs.top_logprobs`` (token text to
    log-probability), prompt tokens first, then the generated ones; the caller
    aligns it (:func:`align`)."""
    choice = _choice(payload)
    plp = choice.get("prompt_logprobs")
    if isinstance(plp, list):
        out: list[dict | None] = []
        for i, entry in enumerate(plp):
            if entry is None:
                out.append(None)
                continue
            if i >= len(ids):
                raise ValueError(f"prompt_logprobs has {len(plp)} entries for {len(ids)} prompt tokens")
            own = entry.get(str(ids[i]), entry.get(ids[i]))
            if not isinstance(own, dict) or "logprob" not in own:
                raise ValueError(f"prompt_logprobs at position {i} has no entry for token {ids[i]}")
            top = [float(v["logprob"]) for v in entry.values() if isinstance(v, dict) and "logprob" in v]
            rank = own.get("rank")
            argmax = (int(rank) == 1) if rank is not None else float(own["logprob"]) >= max(top) - 1e-6
            out.append({"logprob": float(own["logprob"]), "argmax": bool(argmax), "top": top})
        return "prompt_logprobs", out
    lp = choice.get("logprobs")
    if not isinstance(lp, dict) or not isinstance(lp.get("token_logprobs"), list):
        raise ValueError("the completions response has neither prompt_logprobs nor echoed logprobs")
    tops = lp.get("top_logprobs") or [None] * len(lp["token_logprobs"])
    out = []
    for value, top in zip(lp["token_logprobs"], tops):
        if value is None:
            out.append(None)
            continue
        values = [float(v) for v in (top or {}).values()] or [float(value)]
        out.append({"logprob": float(value), "argmax": float(value) >= max(values) - 1e-6, "top": values})
    return "echo", out


def align(entries: list[dict | None], sequence: Sequence[int], prefix: Sequence[int], dialect: str,
          generated: int = 1) -> list[dict | None]:
    """The scores of tokens ``1 .. n-1`` of ``sequence`` (``n - 1`` entries, None where
    the server gave none) from a response's ``entries`` (:func:`prompt_entries`).

    ``prompt_logprobs`` has one entry per prompt token. ``echo`` adds ``generated``
    entries after the prompt, and llama-cpp-python leaves a leading
    beginning-of-sequence token out of the echo (and gives its first echoed token no
    score), so an echo one entry short of the sequence is read as starting after
    ``prefix``'s first token. Any other count is an error."""
    n = len(sequence)
    if dialect == "echo":
        entries = entries[: len(entries) - generated] if generated else entries
    if len(entries) == n:
        seen = entries
    elif dialect == "echo" and len(entries) == n - 1 and prefix and sequence[0] == prefix[0]:
        seen = [None, *entries]
    elif dialect == "echo" and len(entries) == n - 1:
        raise ValueError(f"the server scored {n - 1} prompt tokens for a sequence of {n}: "
                         f"{ECHO_WITHOUT_BOS}")
    else:
        raise ValueError(f"the server scored {len(entries)} prompt tokens for a sequence of {n}")
    return list(seen[1:])


def topk_moments(top: Sequence[float], vocab_size: int | None = None) -> tuple[float, float]:
    """Mean and standard deviation of log p(z) under p, from the top-k log-probabilities
    ``top`` of one position: ``mu = Σ p log p`` and ``sigma² = Σ p (log p - mu)²``.

    The top ``k`` carry mass ``m``; the rest, ``1 - m``, is spread evenly over the
    other ``vocab_size - k`` tokens when ``vocab_size`` is given (each then has log
    probability ``log((1 - m) / (V - k))``), and left out when it is not (the sums
    run over the top ``k`` only). Exact when the top ``k`` is the whole vocabulary."""
    lp = np.asarray([float(x) for x in top], dtype=float)
    if lp.size == 0:
        return float("nan"), float("nan")
    p = np.exp(lp)
    terms, weights = list(lp), list(p)
    rest = 1.0 - float(p.sum())
    if vocab_size is not None and vocab_size > lp.size and rest > 1e-12:
        terms.append(math.log(rest / (vocab_size - lp.size)))
        weights.append(rest)  # the tail's tokens, all at the same log-probability
    w, t = np.asarray(weights), np.asarray(terms)
    mu = float((w * t).sum())
    sigma = float(np.sqrt(max((w * (t - mu) ** 2).sum(), 0.0)))
    return mu, sigma


def text_pieces(text: str, limit: int | None = None) -> list[str]:
    """``text`` cut into consecutive pieces of at most ``limit`` characters (default
    :data:`TOKENIZE_CHARS`), each ending after a line break where its stretch has one
    (else at the limit); the pieces join back to ``text``, and a text within the limit
    is one piece."""
    limit = TOKENIZE_CHARS if limit is None else limit
    if limit < 1:
        raise ValueError(f"limit must be a positive number of characters, got {limit!r}")
    pieces, start = [], 0
    while len(text) - start > limit:
        cut = text.rfind("\n", start, start + limit)
        end = cut + 1 if cut >= start else start + limit
        pieces.append(text[start:end])
        start = end
    pieces.append(text[start:])
    return pieces


def tokenizer_identity(ids: Sequence[int], prefix: Sequence[int]) -> str:
    """A short identity of a tokenizer: the hash of the probe text's ids and the prefix."""
    return stable_hash({"probe": PROBE_TEXT, "ids": [int(t) for t in ids],
                        "prefix": [int(t) for t in prefix]})


# -- the backend -----------------------------------------------------------------

class ServedTokens:
    """Token-level methods of a served model (a base of
    :class:`~analysis.models.api.OpenAIChatModel`, which supplies ``_client``,
    ``_cached``, ``_pooled``, ``_with_retries``, ``_payload``, ``model_id``, ``base_url``
    and ``cache_identity``)."""

    top_k: int = DEFAULT_TOP_K
    vocab_size: int | None = None
    _caps: Capabilities | None = None
    _caps_lock = threading.RLock()

    # -- what the server can do --------------------------------------------------
    def capabilities(self) -> Capabilities:
        """What the server can do (probed once, the answer kept in the query cache)."""
        with self._caps_lock:
            if self._caps is None:
                [answer] = self._cached("probe", [{"probe": PROBE_VERSION, "top_k": self.top_k}],
                                        lambda todo: self._pooled([None], lambda _, stop: self._probe(stop)),
                                        False, retry_errors=True)
                if answer.error:
                    raise ModelError(f"{self.name}: the capability probe of {self.base_url} failed: "
                                     f"{answer.error}")
                self._caps = Capabilities.from_dict(answer.meta["capabilities"])
            return self._caps

    def require(self, *needs: str) -> Capabilities:
        """The server's capabilities, or a :class:`ModelError` naming each of ``needs``
        (:data:`CAPABILITIES`) it lacks and the server options that provide it."""
        caps = self.capabilities()
        lacks = caps.lacks(needs)
        if lacks:
            raise ModelError(missing_text(self.name, lacks, caps.why))
        return caps

    def token_identity(self, kind: str) -> str:
        """What a token-level answer's cache key adds to the model's identity: the
        server's tokenizer, and for moments from the top k, ``k`` and the vocabulary size
        they assume."""
        out = f"#tokenizer={self.capabilities().tokenizer}"
        if kind == "score_ids_stats":
            out += f"#moments=top{self.top_k}-vocab{self.vocab_size}"
        return out

    def _root(self) -> str:
        """The server's root URL (the tokenize routes sit there, not under ``/v1``)."""
        url = self.base_url
        return url[: -len("/v1")] if url.endswith("/v1") else url

    def _post(self, route: str, body: dict) -> Any:
        # cast_to=object: the client hands back the parsed JSON body
        return self._client.post(self._root() + route, body=body, cast_to=object)

    def _probe(self, stop: threading.Event) -> Answer:
        """Find the tokenize route, the tokenizer's prefix and identity, and what a
        completions request with echo, logprobs and prompt_logprobs gives back."""
        import openai
        why: dict[str, str] = {}
        route, ids, prefix = None, None, ()
        for dialect in _ROUTES:
            try:
                body = {"model": self.model_id, dialect["text_field"]: PROBE_TEXT}
                ids = list(self._post(dialect["tokenize"], {**body, "add_special_tokens": False})["tokens"])
                empty = list(self._post(dialect["tokenize"], {**body, dialect["text_field"]: ""})["tokens"])
            except (openai.OpenAIError, KeyError, TypeError, ValueError) as exc:
                why["tokenize"] = f"{dialect['tokenize']}: {type(exc).__name__}: {str(exc)[:200]}"
                continue
            route, prefix = dialect["tokenize"], tuple(int(t) for t in empty)
            if prefix and ids[: len(prefix)] == list(prefix):
                ids = ids[len(prefix):]  # a route that ignores add_special_tokens (llama.cpp)
            why.pop("tokenize", None)
            break
        token_ids, scores, top_k = False, None, 0
        if ids:
            attempts = [("token_ids", list(prefix) + ids), ("text", PROBE_TEXT)]
            for mode, prompt in attempts:
                answer = self._with_retries(lambda attempt, p=prompt: self._score_request(p, attempt), stop)
                if answer.error:
                    why["token_ids" if mode == "token_ids" else "prompt_scores"] = answer.error
                    continue
                token_ids = mode == "token_ids"
                try:
                    dialect_name, entries = prompt_entries(answer.meta["payload"], list(prefix) + ids)
                except ValueError as exc:
                    why["prompt_scores"] = str(exc)
                    break
                try:
                    align(entries, list(prefix) + ids, prefix, dialect_name)
                except ValueError as exc:
                    why["prompt_scores"] = str(exc)
                    break
                scored = [e for e in entries if e is not None]
                if scored:
                    # the most at any position: a list keyed by token text (echo) merges tokens
                    # whose texts collide (pieces of one UTF-8 character), so some hold fewer
                    scores, top_k = dialect_name, max(len(e["top"]) for e in scored)
                else:
                    why["prompt_scores"] = "the response scored no prompt token"
                break
        caps = Capabilities(route, prefix, tokenizer_identity(ids, prefix) if ids else None, token_ids,
                            scores, top_k, why)
        return Answer(None, meta={"capabilities": caps.as_dict()})

    def _score_request(self, prompt, attempt: int) -> Answer:
        """One completions request that echoes ``prompt`` (text or ids) with its scores."""
        response = self._client.completions.with_raw_response.create(
            model=self.model_id, prompt=prompt, max_tokens=1, temperature=0.0, echo=True,
            logprobs=self.top_k, extra_body={"prompt_logprobs": self.top_k})
        return Answer(None, meta={"payload": self._payload(response.text), "attempts": attempt})

    # -- tokens ------------------------------------------------------------------
    def id_prefix(self) -> list[int]:
        return list(self.require("tokenize").prefix)

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text in the server's own tokenizer, without special tokens
        (cached per piece). A text longer than :data:`TOKENIZE_CHARS` is tokenized in the
        pieces of :func:`text_pieces` and their ids joined: at a join they can differ from
        one whole-text tokenization, which llama.cpp's round trip then catches for any
        window across it (never scored unchecked)."""
        pieces = [text_pieces(t) for t in texts]
        flat = [p for ps in pieces for p in ps]
        ids = self._tokenize_pieces(flat)
        out, i = [], 0
        for ps in pieces:
            out.append([t for k in range(i, i + len(ps)) for t in ids[k]])
            i += len(ps)
        return out

    def _tokenize_pieces(self, texts: Sequence[str]) -> list[list[int]]:
        caps = self.require("tokenize")
        dialect = next(d for d in _ROUTES if d["tokenize"] == caps.tokenize)
        prefix = list(caps.prefix)

        def one(text, stop):
            def call(attempt):
                body = {"model": self.model_id, dialect["text_field"]: text, "add_special_tokens": False}
                ids = [int(t) for t in self._post(dialect["tokenize"], body)["tokens"]]
                if prefix and ids[: len(prefix)] == prefix:
                    ids = ids[len(prefix):]
                return Answer(None, meta={"ids": ids, "attempts": attempt})
            return self._with_retries(call, stop)

        answers = self._cached("tokenize", [{"text": t} for t in texts],
                               lambda todo: self._pooled([texts[i] for i in todo], one), False,
                               retry_errors=True)
        raise_failed(self.name, "tokenize", answers)
        return [list(a.meta["ids"]) for a in answers]

    def detokenize(self, ids: Sequence[Sequence[int]]) -> list[str]:
        """The text of each token-id list, from the server's tokenizer (cached)."""
        caps = self.require("tokenize")
        dialect = next(d for d in _ROUTES if d["tokenize"] == caps.tokenize)
        seqs = [[int(t) for t in s] for s in ids]

        def one(seq, stop):
            def call(attempt):
                out = self._post(dialect["detokenize"], {"model": self.model_id, "tokens": seq})
                return Answer(str(out[dialect["out_field"]]), meta={"attempts": attempt})
            return self._with_retries(call, stop)

        answers = self._cached("detokenize", [{"ids": s} for s in seqs],
                               lambda todo: self._pooled([seqs[i] for i in todo], one), False,
                               retry_errors=True)
        raise_failed(self.name, "detokenize", answers)
        return [a.text for a in answers]

    # -- scores ------------------------------------------------------------------
    def _scored_positions(self, sequences: Sequence[list[int]]) -> Iterator[tuple[int, Any]]:
        """For each sequence (the prefix included), the aligned scores of tokens
        ``1 .. n-1`` (:func:`align`), or an error :class:`Answer`."""
        caps = self.require("prompt_scores", "tokenize")
        prefix = list(caps.prefix)
        texts = [None] * len(sequences) if caps.token_ids else self._texts_of(list(sequences), prefix)
        jobs = list(zip(sequences, texts))

        def one(job, stop):
            seq, text = job
            if not caps.token_ids and text is None:
                return Answer(None, error=NOT_ROUND_TRIP, meta={"not_sent": True})
            answer = self._with_retries(
                lambda attempt: self._score_request(seq if caps.token_ids else text, attempt), stop)
            if answer.error:
                return answer
            try:
                dialect, entries = prompt_entries(answer.meta["payload"], seq)
                aligned = align(entries, seq, prefix, dialect)
            except ValueError as exc:
                return Answer(None, error=f"MalformedResponseError: {exc}", meta={"attempts": 1})
            return Answer(None, meta={"aligned": aligned, "attempts": answer.meta["attempts"]})

        yield from self._pooled(jobs, one)

    def _texts_of(self, sequences: Sequence[list[int]], prefix: list[int]) -> list[str | None]:
        """For a server without token-id prompts: the text of each sequence (its prefix
        left to the server), or None where the server tokenizes that text to other ids."""
        bare = [s[len(prefix):] if prefix and s[: len(prefix)] == prefix else s for s in sequences]
        texts: list[str | None] = list(self.detokenize(bare))
        for i, (b, t) in enumerate(zip(bare, self.tokenize([t or "" for t in texts]))):
            if b != t:
                texts[i] = None
        return texts

    def _generate_ids(self, prompt_ids, settings, seeds=None) -> Iterator[tuple[int, Answer]]:
        """Continue each prompt (token ids, the prefix included) for exactly
        ``max_new_tokens`` tokens. vLLM is told to go past an end-of-text token
        (``ignore_eos``, ``min_tokens``) and to name the new tokens by id
        (``return_tokens_as_token_ids``); from a server that names them by text only
        (llama.cpp), the new ids are the tail of the server's tokenization of prompt and
        continuation, and an answer whose tail is not the prompt's ids followed by exactly
        ``max_new_tokens`` new ones is an error."""
        caps = self.require("tokenize")
        prefix = list(caps.prefix)
        n = settings.max_new_tokens
        texts = [None] * len(prompt_ids) if caps.token_ids else self._texts_of(list(prompt_ids), prefix)
        jobs = [(list(p), t, None if seeds is None else seeds[i])
                for i, (p, t) in enumerate(zip(prompt_ids, texts))]

        def one(job, stop):
            seq, text, seed = job
            if not caps.token_ids and text is None:
                return Answer(None, error=NOT_ROUND_TRIP, meta={"not_sent": True})
            extra = {"ignore_eos": True, "min_tokens": n, "return_tokens_as_token_ids": True}
            if settings.top_k is not None:
                extra["top_k"] = settings.top_k
            params = {"model": self.model_id, "prompt": seq if caps.token_ids else text, "max_tokens": n,
                      "temperature": settings.temperature, "logprobs": 1, "extra_body": extra,
                      "seed": settings.seed if seed is None else seed}
            if settings.top_p is not None:
                params["top_p"] = settings.top_p

            def call(attempt):
                response = self._client.completions.with_raw_response.create(**params)
                return Answer(None, meta={"payload": self._payload(response.text), "attempts": attempt})

            answer = self._with_retries(call, stop)
            if answer.error:
                return answer
            try:
                choice = _choice(answer.meta["payload"])
                new_text = str(choice.get("text") or "")
                tokens = ((choice.get("logprobs") or {}).get("tokens")) or []
                if tokens and all(isinstance(t, str) and t.startswith("token_id:") for t in tokens):
                    ids = [int(t.split(":", 1)[1]) for t in tokens]
                else:
                    bare = seq[len(prefix):] if prefix and seq[: len(prefix)] == prefix else seq
                    [full] = self.tokenize([(text or "") + new_text])
                    if full[: len(bare)] != bare:
                        raise ValueError("the server's tokens of prompt and continuation do not start "
                                         "with the prompt's ids")
                    ids = full[len(bare):]
            except (ValueError, ModelError) as exc:
                return Answer(None, error=f"MalformedResponseError: {exc}", meta={"attempts": 1})
            if len(ids) < n:
                return Answer(None, error=(f"the server gave {len(ids)} of {n} new tokens (finish_reason "
                                           f"{choice.get('finish_reason')!r}): it stopped at an end-of-text "
                                           "token, which vLLM's ignore_eos and min_tokens prevent"),
                              meta={"attempts": answer.meta["attempts"]})
            if len(ids) > n:
                return Answer(None, error=(f"the continuation's text tokenizes to {len(ids)} ids, not the "
                                           f"{n} generated: a server that names tokens by text (llama.cpp) "
                                           "loses pieces of a UTF-8 character"),
                              meta={"attempts": answer.meta["attempts"]})
            return Answer(new_text, meta={"new_tokens": n, "ids": ids, "attempts": answer.meta["attempts"]})

        yield from self._pooled(jobs, one)

    def _score_ids(self, sequences):
        for j, answer in self._scored_positions(sequences):
            if answer.error:
                yield j, answer
                continue
            aligned = answer.meta["aligned"]
            yield j, ([math.nan if e is None else e["logprob"] for e in aligned],
                      [False if e is None else e["argmax"] for e in aligned])

    def _score_ids_stats(self, sequences):
        for j, answer in self._scored_positions(sequences):
            if answer.error:
                yield j, answer
                continue
            lp, mu, sigma = [], [], []
            for e in answer.meta["aligned"]:
                if e is None:
                    lp.append(math.nan), mu.append(math.nan), sigma.append(math.nan)
                    continue
                m, s = topk_moments(e["top"], self.vocab_size)
                lp.append(e["logprob"]), mu.append(m), sigma.append(s)
            yield j, (lp, mu, sigma)

    def _stats_meta(self) -> dict:
        """What :meth:`score_ids_stats` records of its moments: computed from the top k
        (:func:`topk_moments`)."""
        return {"moments": "top-k", "top_k": self.capabilities().top_k, "vocab_size": self.vocab_size}


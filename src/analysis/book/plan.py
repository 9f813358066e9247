"""What a chapter execution will ask, counted before it runs: a cost preview.

``python scripts/execute_chapters.py --plan [--price IN,OUT]`` prints, for each
selected chapter and profile, the model queries it will send, their prompt
tokens and their completion tokens, and with a price per million tokens, what
the API queries will cost. Nothing is trained, loaded or called: a chapter's
``plan(params)`` builds its prompts with the very functions the chapter runs
(:func:`analysis.phrases.prompts`, :func:`analysis.nextword.chat_prompts`, ...),
and this module counts them.

How tokens are counted, per model (the ``counted`` column says which):

* **exact**: a local model (built-in, hub, checkpoint folder, a trained lab run):
  its own tokenizer, after its chat template for chat prompts, exactly as
  :class:`~analysis.models.local.LocalModel` encodes a request. A plan loads
  tokenizers only: a built-in model's is read from its GGUF alone the first time
  and kept in the artifact cache
  (:func:`~analysis.models.checkpoints.gguf_tokenizer_folder`); no model is converted
  and no weights are loaded;
* **estimate**: an API model, whose tokenizer is not available offline: Gemma 3's
  tokenizer (262k entries, like today's large API models) on the message texts,
  plus :data:`CHAT_OVERHEAD` tokens per message for the chat format; when that
  tokenizer is not installed either, UTF-8 bytes / 4. A lab run that is not
  trained yet is estimated the same way.

Completion tokens are the budget (``max_new_tokens``) of every query: an upper
bound, since a model may stop early. A query that is sent only when an earlier
answer calls for it (the phrases chapter re-asks a too-short completion with a
larger budget) is a row of its own marked ``at most``: the cost of a run lies
between the total of the ``exact`` rows and the grand total. Queries already in
the query cache are counted too (a re-run answers them for free). Local models
cost nothing but time; the price applies to API models only.

On an empty cache a plan still builds what the prompts are made of, as the
chapters build it, into the artifact cache where the execution finds it: the
English counterpart's phrase selection (:func:`analysis.lab.phrase_selection.english_phrases`,
for the phrases chapter's sample and for the lab corpus's candidates; its LASSO fit,
the same for both, is memoized and made once, about 10 s of CPU, and each selection
scores its windows in a few seconds) and the lab corpus (whose documents hold the
lab's phrases and excerpts). Gemma's GGUF is assembled from its package (a 250 MB
copy, about 5 s), which its tokenizer is read from. Each model's counts are then kept
in the artifact cache (:func:`count_prompt_tokens`), so a plan run again loads no
tokenizer: on 2026-12-02 a warm default-profile plan took 4.4 s of CPU (4.5 s wall,
at ``nice 19`` beside a cold book run; ``/usr/bin/time``), where it took 21 s before
(loading 14 tokenizers, 9 s; encoding 39,304 prompts, 3 s; opening the query cache,
2 s; cleaning the texts for a phrase selection it then read from the cache, 2 s).
What is left is imports (scikit-learn and SciPy among them) and building the
prompts. An empty cache took 59 s wall (48 s of CPU) at ``c955df1``, on two idle cores.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from analysis.book.chapters import CHAPTER_MODULES
from analysis.core.cache import memo, stable_hash
from analysis.models import GenerationSettings, Request, check_model_name, tokenizer_identity
from analysis.models.queries import (  # noqa: F401  (re-exported: the plan's types)
    PlanError,
    QueryGroup,
    _local,
    is_chat,
)

#: tokens a chat format adds per message (role markers, separators), the usual
#: allowance for OpenAI-style chat APIs; an estimate, used for API models only
CHAT_OVERHEAD = 4
#: the reference tokenizer for models whose own is not available offline
REFERENCE_MODEL = "gemma3-270m"


def _reference():
    """The reference model for estimates, or None when its package is not installed."""
    return _local(REFERENCE_MODEL)


def _text(prompt) -> list[str]:
    return [prompt] if isinstance(prompt, str) else [m["content"] for m in prompt]


def count_prompt_tokens(name: str, prompts: Sequence) -> tuple[list[int], str]:
    """Prompt tokens of each prompt sent to model ``name``, and how they were counted
    (``"exact"``, or ``"estimate (...)"`` naming the estimate).

    Kept in the artifact cache (``plan-tokens``) under the tokenizer's identity
    (:func:`~analysis.models.tokenizer_identity`: a built-in model's package version,
    a lab run's key; for an estimate, the reference tokenizer's), the transformers
    version, the prompts and this module's and the model layer's code, so a plan run
    again counts without loading a tokenizer. A model whose tokenizer has no such
    identity (a hub id, a checkpoint folder) is counted afresh every time."""
    ident = tokenizer_identity(name)
    if ident is None and check_model_name(name) in ("api", "lab"):  # an estimate: the reference's
        ref = tokenizer_identity(REFERENCE_MODEL)
        ident = None if ref is None else f"estimate with {ref}"
    if ident is None:
        return _count(name, prompts)
    key = {"tokenizer": ident, "transformers": _version("transformers"),
           "prompts": stable_hash(list(prompts))}
    counts, how = memo("plan-tokens", key, lambda: _count(name, prompts),
                       code=("analysis.book.plan", "analysis.models.local", "analysis.models.checkpoints"))
    return list(counts), how


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _count(name: str, prompts: Sequence) -> tuple[list[int], str]:
    """:func:`count_prompt_tokens`, counted: with the model's tokenizer, or estimated."""
    model = _local(name)
    if model is not None:
        settings = GenerationSettings(max_new_tokens=1)
        requests = [Request(p, chat=not isinstance(p, str), settings=settings) for p in prompts]
        return [len(ids) for ids in model._encode_many(requests)], "exact"
    ref = _reference()
    if ref is not None:
        how = f"estimate ({REFERENCE_MODEL} tokenizer + {CHAT_OVERHEAD}/message)"
        texts = [_text(p) for p in prompts]
        # every message of every prompt in one call: a fast tokenizer encodes a list item by item
        ids = iter(ref.tokenizer([t for ts in texts for t in ts], add_special_tokens=False)["input_ids"])
        return ([sum(len(next(ids)) for _ in ts) + (0 if isinstance(p, str) else CHAT_OVERHEAD * len(ts))
                 for p, ts in zip(prompts, texts)], how)
    how = f"estimate (UTF-8 bytes / 4 + {CHAT_OVERHEAD}/message)"
    return ([sum(-(-len(t.encode()) // 4) for t in _text(p)) + (0 if isinstance(p, str) else
             CHAT_OVERHEAD * len(p)) for p in prompts], how)


def parse_price(text: str | None) -> tuple[float, float] | None:
    """``"IN,OUT"`` (US dollars per million prompt and completion tokens) as two
    floats; None for None. A bad value is a :class:`PlanError` naming ``--price``."""
    if text is None:
        return None
    parts = str(text).split(",")
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        values = ()
    if len(values) != 2 or any(not v >= 0 for v in values):
        raise PlanError(f"--price takes IN,OUT: two non-negative numbers, US dollars per million prompt "
                        f"and completion tokens (e.g. 0.15,0.60), got {text!r}")
    return values  # type: ignore[return-value]


def table(chapter: str, groups: Sequence[QueryGroup], price: tuple[float, float] | None = None
          ) -> pd.DataFrame:
    """One row per query group: ``chapter, part, model, backend, queries,
    prompt_tokens, completion_tokens, bound, counted`` and, with ``price``,
    ``cost`` (US dollars; 0 for local models)."""
    rows = []
    for g in groups:
        if g.tokens_each is not None:
            counts, how = [g.tokens_each] * g.queries, "exact (token-id prompts)"
        else:
            counts, how = count_prompt_tokens(g.model, g.prompts)
        backend = check_model_name(g.model)
        row = {"chapter": chapter, "part": g.part, "model": g.model, "backend": backend,
               "queries": g.queries, "prompt_tokens": int(sum(counts)),
               "completion_tokens": g.queries * g.max_new_tokens, "bound": g.bound, "counted": how}
        if price is not None:
            row["cost"] = (row["prompt_tokens"] * price[0] + row["completion_tokens"] * price[1]) / 1e6 \
                if backend == "api" else 0.0
        rows.append(row)
    cols = ["chapter", "part", "model", "backend", "queries", "prompt_tokens", "completion_tokens",
            "bound", "counted"] + (["cost"] if price is not None else [])
    return pd.DataFrame(rows, columns=cols)


def totals(frame: pd.DataFrame) -> dict[str, Any]:
    """Totals of a plan table: every query (``queries``, tokens, ``cost``), and the
    part sent for certain (``exact_*``, the rows not marked ``at most``)."""
    exact = frame[frame["bound"] == "exact"]
    out = {"queries": int(frame["queries"].sum()), "exact_queries": int(exact["queries"].sum()),
           "prompt_tokens": int(frame["prompt_tokens"].sum()),
           "completion_tokens": int(frame["completion_tokens"].sum()),
           "api_queries": int(frame.loc[frame["backend"] == "api", "queries"].sum())}
    if "cost" in frame:
        out["cost"] = float(frame["cost"].sum())
        out["exact_cost"] = float(exact["cost"].sum())
    return out


def chapter_plan(chapter: str, params: Mapping) -> list[QueryGroup] | None:
    """The query groups of ``chapter`` at ``params`` (resolved settings), or None
    when the chapter has no ``plan`` (it queries the lab's models only)."""
    module = CHAPTER_MODULES[chapter]
    fn = getattr(module, "plan", None)
    return None if fn is None else fn(params)

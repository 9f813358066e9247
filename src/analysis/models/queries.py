"""What a chapter will ask a model, as data: :class:`QueryGroup`, which a
chapter's ``plan(params)`` returns and :mod:`analysis.book.plan` counts, and
:func:`is_chat`, whether a model takes chat prompts, known without loading weights."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from analysis.models import BUILTIN_MODELS, ModelError, check_model_name, load_model


class PlanError(ValueError):
    """A bad ``--price`` or plan request, raised before any work."""


@dataclass
class QueryGroup:
    """Queries of one part of a chapter to one model.

    ``prompts`` are raw strings (completion) or chat conversations (lists of
    ``{"role", "content"}``); ``max_new_tokens`` is each query's completion
    budget (0 for a scoring query, which generates nothing); ``bound`` is
    ``"exact"`` when every prompt is sent, ``"at most"`` when only some may be;
    ``tokens_each`` is each prompt's length when the prompts are token ids of a known
    length (the token-level chapters): they are then counted without a tokenizer, and
    ``prompts`` need only be as many as the queries.
    """

    part: str
    model: str
    prompts: list = field(repr=False)
    max_new_tokens: int
    bound: str = "exact"
    tokens_each: int | None = None

    def __post_init__(self):
        if self.bound not in ("exact", "at most"):
            raise PlanError(f"bound must be 'exact' or 'at most', got {self.bound!r}")

    @property
    def queries(self) -> int:
        return len(self.prompts)


@cache
def _local(name: str):
    """A lazily loaded local model (tokenizer only is ever touched), or None when
    ``name`` is an API model, a lab run not trained yet or a model whose package is missing."""
    if check_model_name(name) == "api":
        return None
    try:
        model = load_model(name)
        model.tokenizer  # noqa: B018 - a missing tokenizer must fail here, not in the count
        return model
    except (ModelError, OSError):
        return None


def is_chat(name: str) -> bool:
    """Whether ``name`` is a chat model, known without loading weights: every API
    model is, a lab run is not, a built-in model as registered, others by whether
    their tokenizer has a chat template."""
    backend = check_model_name(name)
    if backend == "api":
        return True
    if backend == "lab":
        return False
    if name in BUILTIN_MODELS:
        return bool(BUILTIN_MODELS[name]["chat"])
    model = _local(name)
    return bool(model is not None and model.is_chat)

"""Asking a model for the next word after a prefix, two ways (the Size chapter).

* **completion**: a base model continues the raw prefix greedily for a few
  tokens; its answer is the first word of the continuation;
* **chat**: a chat model receives each prompt template (Table V of the size
  paper: a system and a user prompt wrapping the prefix) and its answer's first
  word is its prediction; a position counts as correct if any template's
  answer is right.

Every query goes through the shared model interface, so it is batched, cached
and resumable; a failed request is an error, never a wrong answer.
"""

from __future__ import annotations

import pandas as pd

from analysis.models import GenerationSettings
from analysis.models.base import Model, ModelError

MODES = ("auto", "completion", "chat")


def _chat_messages(system: str | None, user: str) -> list[dict]:
    messages = [{"role": "system", "content": system}] if system else []
    return messages + [{"role": "user", "content": user}]


def chat_prompts(samples: pd.DataFrame, templates: pd.DataFrame | None) -> list[tuple[int, list[list[dict]]]]:
    """The chat conversations of chat mode: ``(template_id, one conversation per
    sample)`` for every template, in the templates' order. :func:`probe` sends
    these, and :mod:`analysis.book.plan` counts them before a run."""
    if templates is None or templates.empty:
        raise ModelError("chat mode needs prompt templates (template_id, system, template)")
    out = []
    for t in templates.itertuples(index=False):
        system = t.system if isinstance(t.system, str) and t.system.strip() else None
        out.append((int(t.template_id),
                    [_chat_messages(system, t.template.replace("{prefix}", p)) for p in samples["prefix"]]))
    return out


def uses_chat(is_chat: bool, mode: str) -> bool:
    """Whether a model (chat or not) answers in chat mode under ``mode``."""
    if mode not in MODES:
        raise ModelError(f"mode must be one of {MODES}, got {mode!r}")
    return is_chat if mode == "auto" else mode == "chat"


def probe(
    model: Model,
    samples: pd.DataFrame,
    templates: pd.DataFrame | None = None,
    mode: str = "auto",
    max_new_tokens: int = 6,
    progress: bool | str = False,
) -> pd.DataFrame:
    """Predict the next word after each sampled prefix.

    Parameters
    ----------
    model
        Any model of the book's interface.
    samples
        One row per position: ``text_id``, ``prefix_len``, ``position``,
        ``prefix``, ``target`` (from :func:`analysis.size.sample_positions`).
    templates
        For chat mode: ``template_id``, ``system`` (may be empty), ``template``
        with a ``{prefix}`` placeholder.
    mode
        ``"completion"``, ``"chat"``, or ``"auto"`` (chat for chat models).
    max_new_tokens
        Tokens generated per answer: enough for one word and the space after it.

    Returns
    -------
    DataFrame
        One row per query: the sample's columns plus ``model``, ``mode``,
        ``template_id`` (0 in completion mode), ``prediction`` (the raw answer)
        and ``error``.
    """
    settings = GenerationSettings(max_new_tokens=max_new_tokens)
    if not uses_chat(model.is_chat, mode):
        answers = model.complete(samples["prefix"].tolist(), settings, progress=progress)
        return _frame(samples, model, "completion", 0, answers)
    frames = []
    for template_id, prompts in chat_prompts(samples, templates):
        label = f"{progress} (template {template_id})" if isinstance(progress, str) else progress
        answers = model.chat(prompts, settings, progress=label)
        frames.append(_frame(samples, model, "chat", template_id, answers))
    return pd.concat(frames, ignore_index=True)


def _frame(samples: pd.DataFrame, model: Model, mode: str, template_id: int, answers) -> pd.DataFrame:
    out = samples.copy()
    out["model"] = model.name
    out["mode"] = mode
    out["template_id"] = template_id
    out["prediction"] = [a.text if a.ok else None for a in answers]
    out["error"] = [a.error for a in answers]
    return out

"""The parts of :class:`analysis.models.local.LocalModel`'s batched generation: left
padding, the shared prefix whose KV cache is read once per call, each row's own
sampler, the end-of-text ids; and the reference a batched sampled answer must equal
(:func:`generate_alone`).

Generation is batched by prompt length (left padding, :func:`_left_padded`) under
``torch.inference_mode()`` in fp32. The tokens every prompt of a call starts with
(a chat template's system text and user-turn header; :func:`_shared_prefix`) are
read once per call (:func:`_prefix_kv`) and their KV cache reused by every batch
(:func:`_prefixed_batch`); a sampled row draws from its own generator
(:class:`RowSampler`). The guarantees are set out in
:meth:`analysis.models.local.LocalModel._generate_encoded`.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import TYPE_CHECKING

from analysis.models.base import ModelError

if TYPE_CHECKING:
    from analysis.models.local import LocalModel

#: the fewest tokens every prompt of a call must share for their KV cache to be computed
#: once and reused (``LocalModel(prefix_cache=True)``); a shorter prefix saves too little
MIN_SHARED_PREFIX = 8

#: generation-config fields whose warpers RowSampler does not apply: a model that sets
#: one samples differently from ``generate(do_sample=True)``, so it is refused
_UNSUPPORTED_WARPERS = ("top_h", "typical_p", "epsilon_cutoff", "eta_cutoff")


class RowSampler:
    """A logits processor that samples each row of a batch from its own generator.

    It applies the warpers ``generate(do_sample=True)`` would build from the
    request's settings and the model's generation config, in the same order
    (temperature, top-k, top-p, min-p; transformers 5's ``_get_logits_processor``),
    one row at a time, then draws ``torch.multinomial(softmax(scores), 1)`` from
    that row's generator: for a batch of one, exactly the draw ``generate`` makes
    after ``torch.manual_seed(seed)``. It returns scores that are 0 at the drawn
    token and ``-inf`` elsewhere, so greedy decoding keeps the draw.
    """

    def __init__(self, settings, seeds: Sequence[int], generation_config, device):
        import torch  # heavy: loaded only when a model is used
        from transformers.generation.logits_process import (
            MinPLogitsWarper,
            TemperatureLogitsWarper,
            TopKLogitsWarper,
            TopPLogitsWarper,
        )

        for field in _UNSUPPORTED_WARPERS:
            value = getattr(generation_config, field, None)
            if value is not None and not (field == "typical_p" and value >= 1.0) \
                    and not (field.endswith("cutoff") and not 0.0 < value < 1.0):
                raise ModelError(f"the model's generation config sets {field}={value!r}, which batched "
                                 f"sampling does not apply; allowed: temperature, top_k, top_p, min_p")
        self.warpers = []
        if settings.temperature != 1.0:
            self.warpers.append(TemperatureLogitsWarper(settings.temperature))
        top_k = settings.top_k or 0
        if top_k != 0:
            self.warpers.append(TopKLogitsWarper(top_k=top_k, min_tokens_to_keep=1))
        top_p = settings.top_p if settings.top_p is not None else 1.0
        if top_p < 1.0:
            self.warpers.append(TopPLogitsWarper(top_p=top_p, min_tokens_to_keep=1))
        if getattr(generation_config, "min_p", None) is not None:
            self.warpers.append(MinPLogitsWarper(min_p=generation_config.min_p, min_tokens_to_keep=1))
        self.generators = []
        for seed in seeds:
            g = torch.Generator(device=device)
            g.manual_seed(int(seed))
            self.generators.append(g)

    def __call__(self, input_ids, scores):
        import torch  # heavy: loaded only when a model is used

        picked = torch.empty(scores.shape[0], dtype=torch.long, device=scores.device)
        for row, g in enumerate(self.generators):
            ids, s = input_ids[row : row + 1], scores[row : row + 1]
            for warp in self.warpers:
                s = warp(ids, s)
            probs = torch.nn.functional.softmax(s, dim=-1)
            picked[row] = torch.multinomial(probs, num_samples=1, generator=g)[0, 0]
        out = torch.full_like(scores, float("-inf"))
        out.scatter_(1, picked[:, None], 0.0)
        return out


def _left_padded(seqs: Sequence[Sequence[int]], pad: int):
    """One batch of prompts, left-padded with ``pad``: ``(input_ids, attention_mask)``."""
    import torch  # heavy: loaded only when a model is used

    width = max(len(seq) for seq in seqs)
    input_ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    attention = torch.zeros((len(seqs), width), dtype=torch.long)
    for row, seq in enumerate(seqs):
        input_ids[row, width - len(seq) :] = torch.tensor(list(seq))
        attention[row, width - len(seq) :] = 1
    return input_ids, attention


def _shared_prefix(encoded: Sequence[Sequence[int]]) -> list[int]:
    """The longest token prefix every prompt starts with, leaving each at least one token."""
    if not encoded:
        return []
    n = min(len(e) for e in encoded) - 1
    first, p = encoded[0], 0
    while p < n and all(e[p] == first[p] for e in encoded):
        p += 1
    return list(first[:p])


def _prefix_kv(hf, prefix: Sequence[int], device):
    """The KV cache of ``prefix`` read alone (batch size 1) on ``device``, for
    :func:`_prefixed_batch` (only the last position's logits are computed)."""
    import torch  # heavy: loaded only when a model is used
    from transformers import DynamicCache

    cache = DynamicCache(config=hf.config)
    with torch.inference_mode():
        hf(input_ids=torch.tensor([list(prefix)], device=device), cache=cache, use_cache=True,
           logits_to_keep=1)
    return cache


def _prefixed_batch(seqs: Sequence[Sequence[int]], n: int, pad: int, kv):
    """A batch of prompts that all start with the ``n`` tokens whose cache is ``kv``
    (:func:`_prefix_kv`) and are longer than them, for ``generate(input_ids=...,
    attention_mask=..., cache=...)``: ``(input_ids, attention_mask, cache)``, each row
    laid out as prefix, padding, rest, as wide as the left-padded batch (positions
    follow the attention mask, so every token keeps the position it has there, and
    ``generate`` reads only the columns after the prefix), and a copy of ``kv``
    repeated to the batch."""
    import torch  # heavy: loaded only when a model is used

    width = max(len(seq) for seq in seqs)
    input_ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    attention = torch.zeros((len(seqs), width), dtype=torch.long)
    for row, seq in enumerate(seqs):
        if len(seq) <= n:
            raise ValueError(f"a prompt of {len(seq)} tokens does not extend the shared prefix of {n}")
        input_ids[row, :n] = torch.tensor(list(seq[:n]))
        input_ids[row, width - len(seq) + n :] = torch.tensor(list(seq[n:]))
        attention[row, :n] = 1
        attention[row, width - len(seq) + n :] = 1
    with torch.inference_mode():
        cache = copy.deepcopy(kv)
        cache.batch_repeat_interleave(len(seqs))
    return input_ids, attention, cache


def _eos_ids(tok, model) -> list[int]:
    ids = model.generation_config.eos_token_id
    ids = list(ids) if isinstance(ids, (list, tuple)) else ([ids] if ids is not None else [])
    if tok.eos_token_id is not None and tok.eos_token_id not in ids:
        ids.append(tok.eos_token_id)
    return ids


def generate_alone(model: LocalModel, prompt_ids: Sequence[int], settings, seed: int) -> list[int]:
    """The reference a batched sampled answer must equal: one request generated on
    its own by ``generate(do_sample=True)`` after ``torch.manual_seed(seed)`` (the
    book's sampling path until batched sampling, under which the cached sampled
    answers were made). Every new token, with no end-of-text stop, as
    :meth:`Model.generate_ids` returns them. Used by ``tests/test_sampling_batched.py``
    and ``scripts/bench_models.py --sampling``."""
    import torch  # heavy: loaded only when a model is used

    hf, pad = model.model, model.tokenizer.pad_token_id
    ids = torch.tensor([list(prompt_ids)], device=model.device)
    with torch.random.fork_rng(devices=[model.device] if model.device.type == "cuda" else []):
        torch.manual_seed(seed)
        with torch.inference_mode():
            out = hf.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                              max_new_tokens=settings.max_new_tokens, pad_token_id=pad, eos_token_id=[],
                              do_sample=True, temperature=settings.temperature, top_k=settings.top_k or 0,
                              top_p=settings.top_p if settings.top_p is not None else 1.0)
    return out[0, ids.shape[1]:].tolist()

"""Batched sampling equals one-at-a-time sampling.

The book's sampled answers were made one request at a time: ``generate(do_sample=
True)`` on the request alone, after ``torch.manual_seed(request_seed(request))``
(:func:`analysis.models.generation.generate_alone`). Batched sampling draws each row
from its own generator through :class:`analysis.models.generation.RowSampler`; these
tests check that every answer is the same, on 240 requests at the decodings of
the entropy chapter's Table 4 (the book's sampled settings), with prompts of
mixed lengths so that batches are padded.
"""

from __future__ import annotations

import random

import pytest
import torch

from analysis.core.cache import QueryCache
from analysis.entropy.params import PAPER_STRATEGIES
from analysis.models.base import GenerationSettings, ModelError, request_seed
from analysis.models.generation import RowSampler, generate_alone
from analysis.models.local import LocalModel
from tiny_model import make_tiny_checkpoint

TEXTS = ["the cat sat on the mat", "a dog ran to the park", "one two three four five"]
#: Table 4's sampled decodings (its greedy row has no generator)
SAMPLED = [dict(s) for _, s in PAPER_STRATEGIES if s["temperature"] > 0]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return make_tiny_checkpoint(tmp_path_factory.mktemp("tiny"), TEXTS)


def prompts(n: int, seed: int = 0) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(3, 250) for _ in range(rng.randrange(4, 24))] for _ in range(n)]


def test_batched_sampling_equals_one_request_at_a_time(tiny_dir, tmp_path):
    model = LocalModel("tiny", tiny_dir, is_chat=False, cache=QueryCache(tmp_path / "c.sqlite"))
    ps = prompts(48)
    hf = model.model
    calls = []
    generate = hf.generate
    hf.generate = lambda *a, **kw: calls.append(kw["input_ids"].shape[0]) or generate(*a, **kw)
    compared = 0
    for decoding in SAMPLED:
        settings = GenerationSettings(max_new_tokens=12, **decoding)
        answers = model.generate_ids(ps, settings)
        hf.generate = generate  # the reference calls the model's own generate
        for p, answer in zip(ps, answers):
            seed = request_seed({"prompt_ids": p, "settings": settings.as_dict(), "sample": 0})
            assert answer.meta["ids"] == generate_alone(model, p, settings, seed), (decoding, p)
            compared += 1
        hf.generate = lambda *a, **kw: calls.append(kw["input_ids"].shape[0]) or generate(*a, **kw)
    assert compared == 240
    # served at the book's settings: token-level prompts in batches of ids_batch_size (64), so the
    # 48 prompts of each decoding in one call, not one request per call
    assert model.ids_batch_size == 64 and calls == [48] * 5


def test_the_row_generators_draw_what_the_global_generator_draws():
    """For one row, RowSampler's draw is ``torch.multinomial`` after ``manual_seed``:
    hand-checked on a three-token distribution over 50 steps."""
    settings = GenerationSettings(max_new_tokens=1, temperature=0.5)
    from transformers import GenerationConfig

    scores = torch.log(torch.tensor([[0.2, 0.3, 0.5]]))
    sampler = RowSampler(settings, [7], GenerationConfig(), "cpu")
    torch.manual_seed(7)
    for _ in range(50):
        probs = torch.softmax(scores / 0.5, dim=-1)
        expected = int(torch.multinomial(probs, 1)[0, 0])
        out = sampler(torch.zeros((1, 1), dtype=torch.long), scores.clone())
        assert out[0].argmax().item() == expected
        assert torch.isinf(out[0]).sum().item() == 2  # the two tokens not drawn


def test_a_generation_config_warper_batched_sampling_cannot_apply_is_refused():
    from transformers import GenerationConfig

    with pytest.raises(ModelError, match="typical_p=0.9.*allowed: temperature, top_k, top_p, min_p"):
        RowSampler(GenerationSettings(temperature=0.8), [1], GenerationConfig(typical_p=0.9), "cpu")

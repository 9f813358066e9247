"""``LocalModel(ids_batch_size=...)``: ``generate_ids`` (the entropy chapter's
token-level prompts) runs in batches of its own size, text prompts keep
``batch_size``, and the answers do not depend on either.

Checked on a tiny random Llama through its forward passes: the rows of the first
forward of every ``generate`` call are the batch, and greedy and sampled answers are
equal at every batch size, one prompt at a time included.
"""

from __future__ import annotations

import random

import pytest

from analysis.core.cache import QueryCache
from analysis.models.base import GenerationSettings
from analysis.models.local import LocalModel
from tiny_model import make_tiny_checkpoint

TEXTS = ["the cat sat on the mat", "a dog ran to the park", "one two three four five"]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return make_tiny_checkpoint(tmp_path_factory.mktemp("tiny"), TEXTS)


def model_at(tiny_dir, tmp_path, tag: str, **kw) -> LocalModel:
    return LocalModel("tiny", tiny_dir, is_chat=False, cache=QueryCache(tmp_path / f"{tag}.sqlite"), **kw)


def prompts(n: int, length: int = 6, seed: int = 0) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(3, 250) for _ in range(length)] for _ in range(n)]


class FirstForwardRows:
    """The batch rows of every ``generate`` call: the first forward's, by a hook on the
    model's body (later forwards read one new token per row)."""

    def __init__(self, hf):
        self.rows: list[int] = []
        self.prefill = True
        self.handle = hf.model.register_forward_pre_hook(self.hook, with_kwargs=True)

    def hook(self, _module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        if ids.shape[1] > 1:  # a prompt read whole: a new batch
            self.rows.append(ids.shape[0])


def test_default_ids_batch_is_64_and_separate_from_batch_size(tiny_dir, tmp_path):
    model = model_at(tiny_dir, tmp_path, "d")
    assert (model.batch_size, model.ids_batch_size) == (16, 64)
    assert model_at(tiny_dir, tmp_path, "e", batch_size=4, ids_batch_size=8).ids_batch_size == 8


def test_generate_ids_batches_by_ids_batch_size_and_text_by_batch_size(tiny_dir, tmp_path):
    model = model_at(tiny_dir, tmp_path, "b", batch_size=3, ids_batch_size=8)
    seen = FirstForwardRows(model.model)
    model.generate_ids(prompts(20), GenerationSettings(max_new_tokens=3))
    assert seen.rows == [8, 8, 4]
    seen.rows.clear()
    model.generate(["the cat sat on the mat", "a dog ran to the park", "one two three four five",
                    "the cat sat on the mat the dog", "a dog ran to the park and the cat"],
                   GenerationSettings(max_new_tokens=2))
    assert seen.rows == [3, 2]  # 5 text prompts in batches of batch_size 3
    seen.handle.remove()


@pytest.mark.parametrize("settings", [dict(temperature=0.0), dict(temperature=0.8, top_p=0.9, seed=3)])
def test_answers_equal_at_every_ids_batch_size(tiny_dir, tmp_path, settings):
    ids = prompts(24, seed=1)
    gen = GenerationSettings(max_new_tokens=5, **settings)
    answers = {}
    for rows in (1, 5, 24):
        model = model_at(tiny_dir, tmp_path, f"r{rows}-{settings['temperature']}", ids_batch_size=rows)
        answers[rows] = [a.meta["ids"] for a in model.generate_ids(ids, gen)]
    assert answers[5] == answers[1] and answers[24] == answers[1]
    assert all(len(a) == 5 for a in answers[1])

"""Sampled answers are reproducible one by one: each sampled request has its own
generator, seeded from the request (with its sample index), so the same request
gives the same answer in any batch and any order, repeated samples are distinct
requests, and the global random state is left alone."""

from __future__ import annotations

import pytest
import torch

from analysis.core.cache import QueryCache
from analysis.models.base import GenerationSettings, number_samples, request_seed
from analysis.models.local import LocalModel
from tiny_model import make_tiny_checkpoint

SAMPLED = GenerationSettings(max_new_tokens=8, temperature=1.0, seed=3)
PROMPTS = ["the cat sat on", "a dog ran to", "one two three", "red green blue"]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return make_tiny_checkpoint(tmp_path_factory.mktemp("tiny"), PROMPTS)


def tiny(folder, tmp_path, name, batch_size=8):
    return LocalModel("tiny", folder, batch_size=batch_size, is_chat=False,
                      cache=QueryCache(tmp_path / f"{name}.sqlite"))


def test_a_sampled_answer_does_not_depend_on_its_batch_or_order(tiny_dir, tmp_path):
    alone = {p: tiny(tiny_dir, tmp_path, f"a{k}", batch_size=1).complete([p], SAMPLED)[0].text
             for k, p in enumerate(PROMPTS)}
    batched = tiny(tiny_dir, tmp_path, "batched").complete(PROMPTS, SAMPLED)
    reversed_ = tiny(tiny_dir, tmp_path, "reversed").complete(PROMPTS[::-1], SAMPLED)
    assert [a.text for a in batched] == [alone[p] for p in PROMPTS]
    assert [a.text for a in reversed_] == [alone[p] for p in PROMPTS[::-1]]
    # the seed setting still matters
    other = tiny(tiny_dir, tmp_path, "other").complete(PROMPTS, GenerationSettings(
        **{**SAMPLED.as_dict(), "seed": 4}))
    assert [a.text for a in other] != [a.text for a in batched]


def test_sampling_leaves_the_global_random_state_alone(tiny_dir, tmp_path):
    model = tiny(tiny_dir, tmp_path, "g")
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    model.complete(PROMPTS, SAMPLED)
    assert torch.equal(torch.rand(3), expected)


def test_repeated_samples_are_distinct_requests(tiny_dir, tmp_path):
    model = tiny(tiny_dir, tmp_path, "r")
    answers = model.complete([PROMPTS[0]] * 3, SAMPLED)
    assert model.calls == 3 and model.cache.count() == 3
    assert len({a.text for a in answers}) == 3
    again = tiny(tiny_dir, tmp_path, "r").complete([PROMPTS[0]] * 3, SAMPLED)  # the same cache file
    assert [a.text for a in again] == [a.text for a in answers] and all(a.cached for a in again)
    # greedy: identical requests are one request
    greedy = tiny(tiny_dir, tmp_path, "gr")
    greedy.complete([PROMPTS[0]] * 3, GenerationSettings(max_new_tokens=8))
    assert greedy.calls == 1


def test_generate_ids_samples_per_request_too(tiny_dir, tmp_path):
    ids = [[5, 6, 7], [8, 9, 10]]
    a = tiny(tiny_dir, tmp_path, "i1").generate_ids(ids, SAMPLED)
    b = tiny(tiny_dir, tmp_path, "i2", batch_size=1).generate_ids(ids[::-1], SAMPLED)
    assert [x.meta["ids"] for x in a] == [x.meta["ids"] for x in b[::-1]]
    repeated = tiny(tiny_dir, tmp_path, "i3").generate_ids([ids[0]] * 2, SAMPLED)
    assert repeated[0].meta["ids"] != repeated[1].meta["ids"]


def test_sample_numbering_and_seeds():
    reqs = [{"p": "a"}, {"p": "b"}, {"p": "a"}, {"p": "a"}]
    assert number_samples(reqs, greedy=False) == [0, 0, 1, 2]
    assert number_samples(reqs, greedy=True) == [0, 0, 0, 0]
    assert request_seed({"p": "a", "sample": 0}) == request_seed({"sample": 0, "p": "a"})
    assert request_seed({"p": "a", "sample": 0}) != request_seed({"p": "a", "sample": 1})

"""The shared prefix's KV cache (``LocalModel(prefix_cache=True)``): the tokens every
prompt of a call starts with (a chat template's system text and user-turn header)
are read once per call, at batch size 1, and their cache reused by every batch.

Checked on a tiny random Llama: the prefix is read once per call and each row only
after it (tokens through the model's forward), and greedy and sampled answers equal
those of the path that reads every prompt whole, in chat and from token ids, over
several batches of mixed lengths and settings.
"""

from __future__ import annotations

import random

import pytest
import torch

from analysis.core.cache import QueryCache
from analysis.models.base import GenerationSettings, Request, request_seed
from analysis.models.generation import (
    MIN_SHARED_PREFIX,
    _left_padded,
    _prefix_kv,
    _prefixed_batch,
    _shared_prefix,
    generate_alone,
)
from analysis.models.local import LocalModel
from tiny_model import make_tiny_checkpoint

TEXTS = ["the cat sat on the mat", "a dog ran to the park", "one two three four five"]
#: a chat template whose system text and user-turn header every prompt shares
TEMPLATE = ("system: you answer with one word about the cat and the dog in the park\n"
            "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
            "{% if add_generation_prompt %}assistant:{% endif %}")
WORDS = "the cat sat on mat a dog ran to park one two three four five".split()
SAMPLED = [dict(temperature=0.8, top_p=0.9), dict(temperature=1.0, top_k=20), dict(temperature=1.5)]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return make_tiny_checkpoint(tmp_path_factory.mktemp("tiny"), TEXTS)


def local(tiny_dir, tmp_path, prefix_cache: bool, tag: str) -> LocalModel:
    model = LocalModel("tiny", tiny_dir, batch_size=4, ids_batch_size=4, is_chat=True,
                       prefix_cache=prefix_cache, cache=QueryCache(tmp_path / f"{tag}.sqlite"))
    model.tokenizer.chat_template = TEMPLATE
    return model


def questions(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 12))) for _ in range(n)]


def id_prompts(n: int, prefix: list[int], seed: int = 0) -> list[list[int]]:
    rng = random.Random(seed)
    return [prefix + [rng.randrange(3, 250) for _ in range(rng.randrange(1, 14))] for _ in range(n)]


class ForwardTokens:
    """Counts the token positions each forward pass of ``hf``'s body reads."""

    def __init__(self, hf):
        self.shapes: list[tuple[int, int]] = []
        self.handle = hf.model.register_forward_pre_hook(self.hook, with_kwargs=True)

    def hook(self, _module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        self.shapes.append(tuple(ids.shape))

    @property
    def tokens(self) -> int:
        return sum(b * t for b, t in self.shapes)


def test_shared_prefix():
    assert _shared_prefix([[1, 2, 3, 4], [1, 2, 5], [1, 2, 3]]) == [1, 2]
    assert _shared_prefix([[1, 2], [1, 2]]) == [1]  # every prompt keeps a token to read
    assert _shared_prefix([[7, 1], [1, 7]]) == []
    assert _shared_prefix([]) == []


def test_a_prefixed_batch_generates_what_the_left_padded_batch_does(tiny_llama):
    prompts = [[5, 6, 7, 8, 9, 10], [5, 6, 7, 11], [5, 6, 7, 12, 13, 14, 15, 16], [5, 6, 7, 17, 18]]
    kw = dict(max_new_tokens=6, do_sample=False, pad_token_id=0, eos_token_id=[], temperature=None,
              top_p=None, top_k=None)
    ids, att = _left_padded(prompts, pad=0)
    with torch.inference_mode():
        expected = tiny_llama.generate(input_ids=ids, attention_mask=att, **kw)[:, ids.shape[1]:]
    kv = _prefix_kv(tiny_llama, [5, 6, 7], "cpu")
    assert kv.get_seq_length() == 3
    pids, patt, cache = _prefixed_batch(prompts, 3, 0, kv)
    assert pids.shape == ids.shape and patt.sum() == att.sum()
    assert pids[1].tolist() == [5, 6, 7, 0, 0, 0, 0, 11]  # prefix, padding, rest
    with torch.inference_mode():
        got = tiny_llama.generate(input_ids=pids, attention_mask=patt, cache=cache, **kw)[:, ids.shape[1]:]
    assert torch.equal(got, expected)
    assert kv.get_seq_length() == 3 and kv.layers[0].keys.shape[0] == 1  # the prefix's own cache is kept
    with pytest.raises(ValueError):
        _prefixed_batch([[5, 6, 7]], 3, 0, kv)


def test_the_prefix_is_read_once_per_call_and_each_row_after_it(tiny_dir, tmp_path):
    """Token ids sharing a 10-token prefix, 10 prompts in batches of 4, no end-of-text
    stop: with the prefix cache the body reads the prefix once (a forward at batch
    size 1) and 10 × 10 prompt tokens fewer; without it, every row whole."""
    prefix = list(range(100, 110))
    prompts = id_prompts(10, prefix)
    settings = GenerationSettings(max_new_tokens=5)
    counts, answers = {}, {}
    for on in (True, False):
        model = local(tiny_dir, tmp_path, on, f"ids{on}")
        seen = ForwardTokens(model.model)
        answers[on] = [a.meta["ids"] for a in model.generate_ids(prompts, settings)]
        seen.handle.remove()
        counts[on] = seen
    assert counts[True].shapes.count((1, len(prefix))) == 1
    assert counts[True].shapes[0] == (1, len(prefix))  # before any batch
    assert counts[False].tokens - counts[True].tokens == len(prompts) * len(prefix) - len(prefix)
    # the left-padded batches, read whole: prompt widths, then one token a row a step
    order = sorted(prompts, key=len)
    whole = sum(len(b) * (max(map(len, b)) + settings.max_new_tokens - 1)
                for b in (order[i : i + 4] for i in range(0, len(order), 4)))
    assert counts[False].tokens == whole
    assert answers[True] == answers[False]


def test_a_short_or_lone_prefix_keeps_the_plain_path(tiny_dir, tmp_path):
    settings = GenerationSettings(max_new_tokens=3)
    short = id_prompts(6, list(range(100, 100 + MIN_SHARED_PREFIX - 1)))
    lone = [list(range(100, 130))]
    model = local(tiny_dir, tmp_path, True, "short")
    for prompts in (short, lone):
        seen = ForwardTokens(model.model)
        model.generate_ids(prompts, settings)
        seen.handle.remove()
        order = sorted(prompts, key=len)
        assert seen.tokens == sum(len(b) * (max(map(len, b)) + 2)
                                  for b in (order[i : i + 4] for i in range(0, len(order), 4)))


@pytest.mark.parametrize("decoding", [{}, *SAMPLED], ids=lambda d: str(d) or "greedy")
def test_chat_answers_equal_with_and_without_the_prefix_cache(tiny_dir, tmp_path, decoding):
    prompts = questions(22)
    settings = GenerationSettings(max_new_tokens=8, **decoding)
    shared = local(tiny_dir, tmp_path, True, "on")
    plain = local(tiny_dir, tmp_path, False, "off")
    encoded = [shared._encode(Request([{"role": "user", "content": q}], True, settings)) for q in prompts]
    assert len(_shared_prefix(encoded)) >= MIN_SHARED_PREFIX
    seen = ForwardTokens(shared.model)
    got = shared.generate(prompts, settings, chat=True)
    seen.handle.remove()
    assert (1, len(_shared_prefix(encoded))) in seen.shapes  # the cache was used
    expected = plain.generate(prompts, settings, chat=True)
    assert [a.text for a in got] == [a.text for a in expected]
    assert [a.meta["new_tokens"] for a in got] == [a.meta["new_tokens"] for a in expected]


@pytest.mark.parametrize("decoding", SAMPLED, ids=str)
def test_sampled_ids_with_a_shared_prefix_equal_each_request_alone(tiny_dir, tmp_path, decoding):
    """Sampled rows with the prefix cache equal the book's reference, each request
    generated alone after ``manual_seed`` of its seed."""
    prompts = id_prompts(9, list(range(100, 112)), seed=1)
    settings = GenerationSettings(max_new_tokens=6, **decoding)
    model = local(tiny_dir, tmp_path, True, "alone")
    got = model.generate_ids(prompts, settings)
    for p, answer in zip(prompts, got):
        seed = request_seed({"prompt_ids": p, "settings": settings.as_dict(), "sample": 0})
        assert answer.meta["ids"] == generate_alone(model, p, settings, seed)


def test_mixed_settings_in_one_call_equal_without_the_prefix_cache(tiny_dir, tmp_path):
    """Greedy and sampled groups of one call share its prefix's cache."""
    prompts = id_prompts(16, list(range(100, 109)), seed=2)
    settings = [GenerationSettings(max_new_tokens=6, **SAMPLED[k % 3]) if k % 2 else
                GenerationSettings(max_new_tokens=6) for k in range(len(prompts))]
    out = {}
    for on in (True, False):
        model = local(tiny_dir, tmp_path, on, f"mixed{on}")
        seen = ForwardTokens(model.model)
        out[on] = dict(model._generate_encoded(prompts, settings, stop_at_eos=True))
        seen.handle.remove()
        assert seen.shapes.count((1, 9)) == (1 if on else 0)
    assert {i: a.text for i, a in out[True].items()} == {i: a.text for i, a in out[False].items()}

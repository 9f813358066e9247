"""A model whose tokenizer starts every text with a beginning-of-sequence token
(Gemma 3) reads it on the token-id paths too: ``score_ids``, ``score_ids_stats`` and
``generate_ids`` put it before the ids they are given, as the model saw text in
training; ``bos=False`` leaves it out, and a model without one is unchanged.

Checked on tiny random Llamas against their own forward passes."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.core.cache import QueryCache
from analysis.models.base import GenerationSettings, ModelError
from analysis.models.local import LocalModel
from tiny_model import make_tiny_checkpoint

TEXTS = ["the cat sat on the mat", "a dog ran to the park", "one two three four five"]
IDS = [[5, 17, 40, 9, 33, 21], [12, 8, 60, 61]]


@pytest.fixture(scope="module")
def bos_dir(tmp_path_factory):
    return make_tiny_checkpoint(tmp_path_factory.mktemp("bos"), TEXTS, bos=True)


@pytest.fixture(scope="module")
def plain_dir(tmp_path_factory):
    return make_tiny_checkpoint(tmp_path_factory.mktemp("plain"), TEXTS)


def at(folder, tmp_path, tag):
    return LocalModel("tiny", folder, is_chat=False, cache=QueryCache(tmp_path / f"{tag}.sqlite"))


def forward_logp(model, ids):
    """log p of ids[1:] given what comes before, from one forward pass over ``ids``."""
    import torch

    with torch.inference_mode():
        logits = model.model(input_ids=torch.tensor([ids])).logits[0]
    logp = torch.log_softmax(logits.float(), -1)
    return np.array([float(logp[j, ids[j + 1]]) for j in range(len(ids) - 1)])


def test_the_tokenizer_rule_is_read(bos_dir, plain_dir, tmp_path):
    model = at(bos_dir, tmp_path, "a")
    bos = model.tokenizer.convert_tokens_to_ids("<s>")
    assert model.id_prefix() == [bos]
    assert model.tokenize(["the cat"])[0][0] != bos  # texts are still tokenized without it
    assert at(plain_dir, tmp_path, "b").id_prefix() == []


def test_score_ids_reads_the_bos_first(bos_dir, tmp_path):
    model = at(bos_dir, tmp_path, "s")
    bos = model.id_prefix()[0]
    got = model.score_ids(IDS)
    for ids, g in zip(IDS, got):
        with_bos = forward_logp(model, [bos] + ids)[1:]  # tokens 1..n-1 of ids, after <s>
        without = forward_logp(model, ids)
        assert len(g["logprobs"]) == len(ids) - 1
        np.testing.assert_allclose(g["logprobs"], with_bos, atol=1e-5)
        assert np.abs(with_bos - without).max() > 1e-4  # the fixture tells the two apart
    off = model.score_ids(IDS, bos=False)
    np.testing.assert_allclose(off[0]["logprobs"], forward_logp(model, IDS[0]), atol=1e-5)
    stats = model.score_ids_stats(IDS)
    np.testing.assert_allclose(stats[0]["logprobs"], got[0]["logprobs"], atol=1e-5)


def test_generate_ids_reads_the_bos_first(bos_dir, tmp_path):
    import torch

    model = at(bos_dir, tmp_path, "g")
    bos = model.id_prefix()[0]
    settings = GenerationSettings(max_new_tokens=4)
    got = [a.meta["ids"] for a in model.generate_ids(IDS, settings)]
    for ids, g in zip(IDS, got):
        x = torch.tensor([[bos] + ids])
        with torch.inference_mode():
            out = model.model.generate(input_ids=x, attention_mask=torch.ones_like(x), max_new_tokens=4,
                                       do_sample=False, eos_token_id=[], pad_token_id=0)
        assert g == out[0, x.shape[1]:].tolist()


def test_a_model_without_bos_keeps_its_keys_and_scores(plain_dir, tmp_path):
    model = at(plain_dir, tmp_path, "p")
    got = model.score_ids(IDS)
    np.testing.assert_allclose(got[0]["logprobs"], forward_logp(model, IDS[0]), atol=1e-5)
    key = model._key("score_ids", {"ids": IDS[0]})  # the key of every earlier run
    assert key in model.cache.get_many({key})
    with pytest.raises(ModelError, match="bos must be"):
        model.score_ids(IDS, bos="yes")

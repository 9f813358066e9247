"""The membership-inference panel of the entropy chapter: the model primitive it needs
(``score_ids_stats``, on the tiny checkpoint of :mod:`tiny_model`, so it runs with the
fast tests) and the attacks of :mod:`analysis.entropy.mia`, by hand on toy values."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from analysis.core.cache import QueryCache
from analysis.models import ModelError
from analysis.models.local import LocalModel
from tiny_model import make_tiny_checkpoint


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    folder = make_tiny_checkpoint(tmp_path_factory.mktemp("tiny"), ["the cat sat on the mat"], vocab_size=280)
    return LocalModel("tiny", folder, is_chat=False, batch_size=2,
                      cache=QueryCache(tmp_path_factory.mktemp("q") / "q.sqlite"))


def test_score_ids_stats_equal_torch_directly_and_are_cached(tiny):
    seqs = [tiny.tokenize(["the cat sat on the mat"])[0], [5, 9, 3], [7, 7, 7, 7, 2]]
    got = tiny.score_ids_stats(seqs)
    for ids, s in zip(seqs, got):
        with torch.inference_mode():
            logp = torch.log_softmax(tiny.model(torch.tensor([ids])).logits[0].double(), dim=-1)[:-1]
        p = logp.exp()
        mu = (p * logp).sum(-1)
        sigma = torch.sqrt((p * (logp - mu[:, None]) ** 2).sum(-1))
        want = logp.gather(1, torch.tensor(ids[1:])[:, None])[:, 0]
        assert np.allclose(s["logprobs"], want.numpy(), atol=1e-5)
        assert np.allclose(s["mu"], mu.numpy(), atol=1e-5)
        assert np.allclose(s["sigma"], sigma.numpy(), atol=1e-5)
        assert len(s["mu"]) == len(ids) - 1
    # the same log-probabilities as score_ids, which has its own cache entries
    plain = tiny.score_ids(seqs)
    assert np.allclose(plain[0]["logprobs"], got[0]["logprobs"], atol=1e-6)
    calls = tiny.calls
    again = tiny.score_ids_stats(seqs)
    assert tiny.calls == calls and np.array_equal(again[1]["sigma"], got[1]["sigma"])
    with pytest.raises(ModelError, match="at least two token ids"):
        tiny.score_ids_stats([[5]])

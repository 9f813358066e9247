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


# -- the attacks on a three-token toy distribution -------------------------------------------------
# Three positions over a vocabulary of three tokens. Positions 1 and 2: p = (0.5, 0.25, 0.25);
# position 3: p = (0.8, 0.1, 0.1). The sequence's tokens get 0.5, 0.25 and 0.1.
# Mean and std of log p under p: a two-valued log p with weights q and 1 - q puts the value of
# weight q at +sqrt((1-q)/q) standard deviations and the other at -sqrt(q/(1-q)): so the scores
# (log p - mu) / sigma are +1 (0.5 of 0.5/0.5), -1 (0.25, the other half) and -2 (0.1: q = 0.8).
DISTS = [np.array([0.5, 0.25, 0.25]), np.array([0.5, 0.25, 0.25]), np.array([0.8, 0.1, 0.1])]
SEEN = [0, 1, 2]


def _toy():
    from math import log

    lp = [log(0.5), log(0.25), log(0.1)]
    mu = [float((d * np.log(d)).sum()) for d in DISTS]
    sigma = [float(np.sqrt((d * (np.log(d) - m) ** 2).sum())) for d, m in zip(DISTS, mu)]
    return lp, mu, sigma


def test_min_k_and_min_k_plus_plus_by_hand():
    from math import log

    from analysis.entropy import mia

    lp, mu, sigma = _toy()
    # 20% of 3 tokens rounds down to none: at least one, the lowest log-probability
    assert mia.min_k(lp, 0.2) == pytest.approx(log(0.1))
    assert mia.min_k(lp, 2 / 3) == pytest.approx((log(0.1) + log(0.25)) / 2)
    assert mia.min_k(lp, 1.0) == pytest.approx((log(0.5) + log(0.25) + log(0.1)) / 3)
    assert mia.min_k_plus_plus(lp, mu, sigma, 0.2) == pytest.approx(-2.0)
    assert mia.min_k_plus_plus(lp, mu, sigma, 2 / 3) == pytest.approx(-1.5)
    assert mia.min_k_plus_plus(lp, mu, sigma, 1.0) == pytest.approx((1 - 1 - 2) / 3)
    # a one-token distribution (sigma 0) scores 0 instead of dividing by zero
    assert mia.min_k_plus_plus([0.0], [0.0], [0.0], 1.0) == 0.0
    with pytest.raises(mia.EntropyError, match="differ in length"):
        mia.min_k_plus_plus(lp, mu[:2], sigma, 0.2)


def test_loss_and_zlib_ratio_and_the_table():
    import zlib
    from math import log

    from analysis.entropy import mia

    lp, mu, sigma = _toy()
    nll = -(log(0.5) + log(0.25) + log(0.1)) / 3
    assert mia.loss(lp) == pytest.approx(nll)
    text = "the cat sat on the mat, the cat sat"
    assert mia.zlib_bytes(text) == len(zlib.compress(text.encode()))
    assert mia.zlib_ratio(lp, text) == pytest.approx(nll / len(zlib.compress(text.encode())))
    table = mia.attack_table([{"logprobs": lp, "mu": mu, "sigma": sigma}], [text], k=0.2)
    assert list(table.columns) == ["loss", "zlib", "mink", "minkpp", "nll"]
    row = table.iloc[0]
    # every score points the same way: higher means "member"; a lower loss is a higher score
    assert row["loss"] == pytest.approx(-nll) and row["nll"] == pytest.approx(nll)
    assert row["zlib"] == pytest.approx(-nll / len(zlib.compress(text.encode())))
    assert row["mink"] == pytest.approx(log(0.1)) and row["minkpp"] == pytest.approx(-2.0)

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
    assert list(table.columns) == ["loss", "zlib", "mink", "minkpp", "text_zlib", "nll"]
    # the model-free control: minus the text's own zlib ratio
    assert table.iloc[0]["text_zlib"] == pytest.approx(-len(zlib.compress(text.encode())) / len(text))
    row = table.iloc[0]
    # every score points the same way: higher means "member"; a lower loss is a higher score
    assert row["loss"] == pytest.approx(-nll) and row["nll"] == pytest.approx(nll)
    assert row["zlib"] == pytest.approx(-nll / len(zlib.compress(text.encode())))
    assert row["mink"] == pytest.approx(log(0.1)) and row["minkpp"] == pytest.approx(-2.0)


def test_the_panel_by_copy_level_against_every_non_member():
    import pandas as pd

    from analysis.entropy import mia

    # members at 1 copy score 0.4 and 0.9, at 4 copies 0.7; non-members 0.5, 0.2, 0.6
    frame = pd.DataFrame({"member": [1, 1, 1, 0, 0, 0], "copies": [1, 1, 4, 0, 0, 0],
                          "loss": [0.4, 0.9, 0.7, 0.5, 0.2, 0.6]})
    t = mia.panel_table(frame, "copies", attacks=["loss"], n_boot=30).set_index("scope")
    assert list(t.index) == ["all", "1", "4"]
    # all: 7 of 9 pairs (see test_stats_mia); 1 copy: 0.9 beats 3, 0.4 beats 1: 4 of 6; 4 copies: 3 of 3
    assert t["auc"].tolist() == pytest.approx([7 / 9, 4 / 6, 1.0])
    # TPR at FPR 0 (3 non-members): above 0.6 -> 2 of 3; 1 of 2; 1 of 1
    assert t["tpr"].tolist() == pytest.approx([2 / 3, 1 / 2, 1.0])
    assert t["members"].tolist() == [3, 2, 1] and t["non-members"].tolist() == [3, 3, 3]
    none = mia.panel_table(frame.assign(member=0), "copies", attacks=["loss"], n_boot=5)
    assert list(none["scope"]) == ["all"] and np.isnan(none["auc"].iloc[0])


def test_the_set_panel_ranks_sets_within_each_model():
    import pandas as pd

    from analysis.entropy import mia
    from analysis.entropy.method_sets import Inference
    from entropy_fakes import fake_set

    def inf(model, intercepts, losses, truths):
        results = {f"s{k}": fake_set(f"s{k}", intercept=b, boot={"slope": [0.1] * 4, "intercept": [b] * 4,
                                                                "r": [0.9] * 4} if b is not None else None)
                   for k, b in enumerate(intercepts)}
        table = pd.DataFrame({"set": list(results), "truth": truths})
        attacks = {f"s{k}": pd.DataFrame({"loss": [v, v]}) for k, v in enumerate(losses)}
        return Inference(model, results, table, attacks=attacks)

    # model a: members 5 and 3, non-member 4 -> 1 of 2 pairs; model b: member 0 against non-member 9
    # -> 0 of 1, and b's other set has no line (no intercept); across models nothing is compared
    infs = [inf("a", [5.0, 3.0, 4.0], [-1.0, -2.0, -3.0], [1, 1, 0]),
            inf("b", [0.0, 9.0, None], [-1.0, -5.0, -4.0], [1, 0, 0])]
    t = mia.set_panel(infs, attacks=("intercept", "loss"), n_boot=20).set_index("attack")
    assert t.loc["intercept", "auc"] == pytest.approx(1 / 3) and t.loc["intercept", "pairs"] == 3
    assert t.loc["intercept", "sets"] == 5
    # constant bootstraps: the interval is the point
    assert t.loc["intercept", "auc lo"] == t.loc["intercept", "auc hi"] == pytest.approx(1 / 3)
    # all 20 draws lie below 0.5: p = 2 (0 + 1) / (20 + 1)
    assert t.loc["intercept", "p"] == pytest.approx(2 / 21)
    # mean loss scores (every set has them): a: -1, -2 vs -3 -> 2 of 2; b: -1 vs -5 and -4 -> 2 of 2
    assert t.loc["loss", "auc"] == 1.0 and t.loc["loss", "pairs"] == 4 and t.loc["loss", "sets"] == 6
    # a model with member sets only compares nothing
    lone = mia.set_panel([inf("a", [5.0, 3.0], [-1.0, -2.0], [1, 1])], attacks=("intercept",), n_boot=5)
    assert lone["pairs"].tolist() == [0] and np.isnan(lone["auc"].iloc[0])

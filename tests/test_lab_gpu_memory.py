"""Memory per run and micro-batches: the count against what the model's forward pass
really saves, the micro-batches chosen to fit a GPU, and a step cut into micro-batches
against the one-batch step.

A micro-batched step sums the rows' gradients in another order, so it equals the
one-batch step up to float rounding only: on the tiny runs here (24 steps, losses of
about 5.7 nats) the loss curves of 2, 4 and 8 micro-batches differ from one batch's by
at most 9.5e-7 nats and the final weights by at most 1.1e-6; the tolerances are about
ten times that. (Two processes under gloo: ``tests/test_lab_ddp.py``.)
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from analysis.lab import budget, profiles
from analysis.lab import train as lt
from analysis.lab.config import LabConfigError, ModelConfig, RunConfig
from analysis.lab.tokenizer import train_tokenizer
from analysis.lab.train import memory
from analysis.lab.train.model import IGNORE

#: |loss| and |weight| gaps allowed between a micro-batched and a one-batch run (see the module)
LOSS_ATOL = 1e-5
WEIGHT_ATOL = 1e-5

WORDS = (
    "the a of to and in is it that was he for on are as with his they at be this from have or by one had "
    "not but what all were when we there can an your which their said if do will each about how up out them"
).split()
rng = random.Random(0)
TEXTS = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 120))) + "." for _ in range(60)]
MODEL = ModelConfig(n_layer=2, d_model=32, n_head=4, d_ff=64, context=32)
RUN = RunConfig("tiny", MODEL, 24 * 8 * 32, batch_size=8)


@pytest.fixture(autouse=True)
def _cache(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path))
    monkeypatch.delenv(lt.DEVICE_ENV, raising=False)


def _batch(vocab, rows, context, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(1, vocab, (rows, context), generator=g)
    y = torch.full_like(x, IGNORE)
    y[:, :-1] = x[:, 1:]
    return x, y


@pytest.mark.parametrize("shape", [(1, 64, 2, 256, 32, 300, 2), (3, 96, 3, 384, 48, 500, 3),
                                   (2, 32, 1, 128, 64, 1000, 5)])
def test_the_memory_count_is_what_the_models_forward_pass_saves(shape):
    n_layer, d, heads, ff, ctx, vocab, rows = shape
    cfg = ModelConfig(n_layer=n_layer, d_model=d, n_head=heads, d_ff=ff, context=ctx)
    model = lt.build_model(cfg, vocab, 0)
    x, y = _batch(vocab, rows, ctx)
    for precision, autocast in (("fp32", None), ("bf16", "cpu")):
        saved = memory.saved_bytes(model, x, y, lt.lm_loss, autocast)
        count = lt.train_memory(cfg, vocab, rows, precision)
        assert saved == {"parameters": 0, "weight_copies": count["weight_copies"],
                         "activations": count["activations"]}, precision


def test_the_memory_count_by_hand():
    cfg = ModelConfig(n_layer=1, d_model=64, n_head=2, d_ff=256, context=32)
    n = lt.param_count(cfg, 300)  # 300*64 + 4*64*64 + 3*64*256 + 2*64 + 64 = 84,928
    assert n == 84_928
    fp32 = lt.train_memory(cfg, 300, rows=2, precision="fp32")
    # per token: the layer's 40d + 16 d_ff + 4 heads + 8, the head's 12d + 4 + 4V + 16;
    # 64 tokens, the rotary table 2*4*32*32, the loss's scalar 4
    per_token = (40 * 64 + 16 * 256 + 4 * 2 + 8) + (12 * 64 + 4 + 4 * 300 + 16)
    assert fp32 == {"state": 16 * n, "weight_copies": 0, "activations": 64 * per_token + 8192 + 4,
                    "loss": 8 * 300 * 64, "total": 16 * n + 64 * per_token + 8196 + 8 * 300 * 64}
    bf16 = lt.train_memory(cfg, 300, rows=2, precision="bf16", world_size=2)
    per_token = (34 * 64 + 8 * 256 + 4 * 2 + 8) + (10 * 64 + 4 + 4 * 300 + 16)
    assert bf16["state"] == 20 * n  # DistributedDataParallel's buckets
    assert bf16["weight_copies"] == 2 * (300 * 64 + 4 * 64 * 64 + 3 * 64 * 256)
    assert bf16["activations"] == 64 * per_token + 8196
    # what grows with the vocabulary: the saved log-probabilities (4V), theirs and the logits' gradients (8V)
    assert memory.vocabulary_bytes(300, 2, 32) == 12 * 300 * 64 == fp32["loss"] + 4 * 300 * 64
    with pytest.raises(LabConfigError, match="precision must be one of fp32, bf16; got 'fp16'"):
        lt.train_memory(cfg, 300, 2, "fp16")


def test_micro_batches_are_the_fewest_that_fit():
    run = RunConfig("r", ModelConfig(n_layer=2, d_model=64, n_head=2, d_ff=256, context=128), 10**6,
                    batch_size=24)

    def need(rows, world=1):
        return lt.train_memory(run.model, 1000, rows, "bf16", world)["total"] / memory.USABLE_FRACTION

    assert lt.micro_batches_for(run, 1000, need(24)) == 1
    assert lt.micro_batches_for(run, 1000, need(24) - 1) == 2  # 12 rows at a time
    assert lt.micro_batches_for(run, 1000, need(8)) == 3  # 24 rows: 1, 2, 3, 4, 6, 8, 12 or 24 a time
    assert lt.micro_batches_for(run, 1000, need(7)) == 4
    assert lt.micro_batches_for(run, 1000, need(6, 2), world_size=2) == 2  # 12 rows a process
    with pytest.raises(LabConfigError, match="needs .* GiB to train even one row at a time"):
        lt.micro_batches_for(run, 1000, need(1) - 1)


def test_the_gpu_labs_memory_per_run_is_counted_from_the_code():
    prof = profiles.get_profile("gpu")
    table = budget.run_budget("gpu").set_index("run")
    for run in prof.runs:
        count = lt.train_memory(run.model, prof.vocab_size, run.batch_size, "bf16")["total"]
        assert table.at[run.name, "peak_gib"] == pytest.approx(count / memory.GiB)
        assert table.at[run.name, "micro_batches_40gb"] == lt.micro_batches_for(run, prof.vocab_size, 40e9)
    # the largest: every run fits one 80 GB GPU whole, not every one a 40 GB GPU
    assert table["peak_gib"].max() * memory.GiB <= 80e9 * memory.USABLE_FRACTION
    assert table["micro_batches_40gb"].max() > 1


def _one_step(micro_batches, x, y, model_seed=0):
    model = lt.build_model(MODEL, 300, 0, model_seed)
    optimizer = lt.make_optimizer(model, RUN)
    loss = lt.train_step(model, optimizer, x, y, 1e-3, micro_batches=micro_batches)
    return float(loss), {k: v.clone() for k, v in model.state_dict().items()}


def test_a_step_cut_into_micro_batches_is_the_one_batch_step():
    x, y = _batch(300, 8, 32)
    with lt.cpu_threads(1):
        loss, weights = _one_step(1, x, y)
        for m in (2, 4, 8):
            loss_m, weights_m = _one_step(m, x, y)
            assert loss_m == pytest.approx(loss, abs=LOSS_ATOL) and loss_m != 0
            gap = max(float((weights_m[k] - weights[k]).abs().max()) for k in weights)
            assert gap < WEIGHT_ATOL
        with pytest.raises(ValueError, match="micro_batches must be a positive divisor of the 8 rows, got 3"):
            _one_step(3, x, y)


def test_a_micro_batched_run_trains_the_one_batch_run_and_is_keyed_apart(monkeypatch, tmp_path):
    from safetensors.torch import load_file

    tok = train_tokenizer(TEXTS, vocab_size=300)
    whole = lt.train(RUN, TEXTS, [], tok, "tiny-key", progress=False, threads=1)
    micro = lt.train(RUN, TEXTS, [], tok, "tiny-key", progress=False, threads=1, micro_batches=4)
    assert micro.trained and micro.path != whole.path
    assert micro.path == lt.run_path(RUN, [], tok, "tiny-key", micro_batches=4)
    assert lt.run_key(RUN, [], tok, "tiny-key", micro_batches=4) == {
        **lt.run_key(RUN, [], tok, "tiny-key"), "micro_batches": 4}
    gap = np.abs(micro.curve.loss.to_numpy() - whole.curve.loss.to_numpy()).max()
    assert 0 < gap < LOSS_ATOL
    wa, wb = load_file(micro.path / "model.safetensors"), load_file(whole.path / "model.safetensors")
    assert max(float((wa[k] - wb[k]).abs().max()) for k in wa) < WEIGHT_ATOL
    # one micro-batch is the one-batch run itself; a count that does not divide the rows fails first
    assert lt.train(RUN, TEXTS, [], tok, "tiny-key", progress=False, micro_batches=1).path == whole.path
    for bad in (3, 0, True):
        with pytest.raises(LabConfigError, match="micro_batches must divide each process's 8 rows"):
            lt.train(RUN, TEXTS, [], tok, "tiny-key", progress=False, micro_batches=bad)

"""The training loop's host side, made for a GPU and checked on the CPU.

* the batches a GPU run reads, chunk by chunk, are the token ids of the CPU path, and a
  run fed that way trains the same weights to the bit;
* partial checkpoints follow a clock, not a step count, and when they are written
  changes nothing the run trains on: a run killed and resumed from a clock's checkpoint
  ends bit-identical to an uninterrupted one;
* the progress bar never reads a loss still on the device;
* ``eval_loss`` runs on the device its run trained on, and on the CPU gives the value
  it always gave.

Tiny runs (d_model 32, 2 layers, context 32), one thread: about 20 s on two cores.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch

from analysis.lab import train as lt
from analysis.lab.config import ModelConfig, RunConfig
from analysis.lab.tokenizer import train_tokenizer
from analysis.lab.train import evaluate, feed, loop
from analysis.lab.train.order import Rows, build_order, check_injections, token_blocks, tokenize_stream

WORDS = (
    "the a of to and in is it that was he for on are as with his they at be this from have or by one had "
    "not but what all were when we there can an your which their said if do will each about how up out them"
).split()
MODEL = ModelConfig(n_layer=2, d_model=32, n_head=4, d_ff=64, context=32)
BATCH, STEPS, KEY = 8, 24, "tiny-feed-corpus"
INJECTIONS = [
    {"seq_id": "q2x5", "task": "qa", "text": "Q: Vt6 glimmer? A: 4417 Zz", "copies": 5, "window": "q2"},
    {"seq_id": "many", "task": "gsm8k", "text": "Mx3 + Rb2 = 7781 Wq", "copies": 12, "window": "all"},
]
rng = random.Random(0)
TEXTS = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 120))) + "." for _ in range(60)]
RUN = RunConfig("tiny", MODEL, STEPS * BATCH * MODEL.context, batch_size=BATCH, inject=True)


@pytest.fixture(scope="module")
def tok():
    return train_tokenizer(TEXTS, vocab_size=300)


@pytest.fixture(autouse=True)
def _cache(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path))
    monkeypatch.delenv(lt.DEVICE_ENV, raising=False)


def _rows(tok, run=RUN):
    injs, tokens = check_injections(run, INJECTIONS, tok)
    stream = tokenize_stream(TEXTS, tok)
    order = build_order(len(stream), run, injs, tok)
    return Rows(order, token_blocks(stream, run.model.context), injs, tokens, tok.eos_token_id)


def _weights(result):
    from safetensors.torch import load_file

    return load_file(result.path / "model.safetensors")


def _same_weights(a, b) -> bool:
    wa, wb = _weights(a), _weights(b)
    return wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)


def test_chunked_batches_are_the_host_batches_token_ids(tok):
    rows = _rows(tok)
    assert len(rows.slot) == 17  # inserted copies among the rows compared
    for lo, hi in ((0, BATCH), (0, BATCH // 2), (BATCH // 2, BATCH)):  # one process, or either of two
        host = feed.HostBatches(rows, BATCH, MODEL.context, lo, hi)
        chunked = feed.DeviceBatches(rows, BATCH, MODEL.context, lo, hi, STEPS, "cpu", chunk=5)
        # in order, then out of order (a resumed run starts mid-chunk; the last chunk is short)
        for step in [*range(STEPS), 23, 3, 17, 4]:
            x, y = host.batch(step)
            cx, cy = chunked.batch(step)
            assert cx.dtype == torch.int64 and cx.is_contiguous() and cy.is_contiguous()
            assert torch.equal(cx, x) and torch.equal(cy, y), (lo, hi, step)
            assert (cy[:, -1] == -100).all() and torch.equal(cy[:, :-1], cx[:, 1:])


def test_a_run_fed_chunk_by_chunk_trains_the_same_weights(tok, monkeypatch, tmp_path):
    plain = lt.train(RUN, TEXTS, INJECTIONS, tok, KEY, progress=False, threads=1)
    made = []

    def chunked(rows, batch_size, context, lo, hi, steps, device):
        made.append(feed.DeviceBatches(rows, batch_size, context, lo, hi, steps, device, chunk=7))
        return made[-1]

    monkeypatch.setattr(loop, "batches", chunked)  # the name the loop calls
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path / "chunked"))
    fed = lt.train(RUN, TEXTS, INJECTIONS, tok, KEY, progress=False, threads=1)
    assert len(made) == 1 and made[0].first == [14, 21]  # both buffers used, the last chunk short
    assert fed.path.name == plain.path.name and fed.path != plain.path
    assert _same_weights(fed, plain)
    assert fed.curve.loss.tolist() == plain.curve.loss.tolist()


class _Clock:
    """A clock that moves ``tick`` seconds each time it is read."""

    def __init__(self, tick: float):
        self.now, self.tick = 0.0, tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now


def test_the_checkpoint_clock_waits_its_seconds_and_longer_when_writing_is_slow():
    clock = feed.CheckpointClock(seconds=60, share=0.05, clock=_Clock(25))  # read at 25 (start), 50, 75...
    assert [clock.due(s) for s in (1, 2, 3)] == [False, False, True]  # 25 and 50 s < 60 s; 75 s
    clock.wrote(1.0)  # read at 125; a second to write: the interval stays 60 s
    assert clock.interval == 60 and [clock.due(s) for s in (3, 4, 5)] == [False, False, True]
    clock.wrote(6.0)  # six seconds: the next comes after 6 / 0.05 = 120 s
    assert clock.interval == pytest.approx(120)
    assert [clock.due(s) for s in range(6, 11)] == [False, False, False, False, True]
    steps = feed.CheckpointClock(every=5, clock=_Clock(1e6))  # a step count ignores the clock
    assert [s for s in range(1, 21) if steps.due(s)] == [5, 10, 15, 20]


class _Killed(Exception):
    pass


def test_a_run_resumed_from_a_clocks_checkpoint_is_bit_identical(tok, monkeypatch, tmp_path):
    whole = lt.train(RUN, TEXTS, INJECTIONS, tok, KEY, progress=False, threads=1)
    # a clock read once at the start and once a step: a checkpoint every third step of 25 s
    monkeypatch.setattr(loop, "CheckpointClock", lambda every: feed.CheckpointClock(every, clock=_Clock(25)))
    step, calls = loop.train_step, []

    def dies_at_step_13(*a, **k):
        if len(calls) == 13:
            raise _Killed
        calls.append(1)
        return step(*a, **k)

    monkeypatch.setattr(loop, "train_step", dies_at_step_13)  # the name the loop calls
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path / "killed"))
    with pytest.raises(_Killed):
        lt.train(RUN, TEXTS, INJECTIONS, tok, KEY, progress=False, threads=1)
    monkeypatch.setattr(loop, "train_step", step)
    resumed = lt.train(RUN, TEXTS, INJECTIONS, tok, KEY, progress=False, threads=1)
    # due before steps 3, 6, 9, 12: the kill in step 13 resumes at 12
    assert resumed.resumed_from_step == 12
    assert _same_weights(resumed, whole)
    assert resumed.curve.loss.tolist() == whole.curve.loss.tolist()
    done = json.loads((resumed.path / "DONE.json").read_text())
    assert done["checkpoint_every"] is None and done["checkpoint_seconds"] == feed.CHECKPOINT_SECONDS


class _OnDevice:
    """A loss still on the device: reading it would wait for the GPU."""

    def __float__(self):
        raise AssertionError("read a loss on the device: a sync")

    item = __float__


class _Losses:
    device = torch.device("cuda")

    def __getitem__(self, step):
        return _OnDevice()


class _Event:
    def __init__(self, done: list):
        self.done = done

    def query(self) -> bool:
        return self.done[0]


class _Bar:
    def __init__(self):
        self.n, self.shown = 0, []

    def update(self, n):
        self.n += n

    def set_postfix(self, loss, refresh):
        self.shown.append(loss)


def test_the_progress_bar_never_reads_a_loss_still_on_the_device(monkeypatch):
    bar, done = _Bar(), [False]
    show = feed.LossShow(bar, _Losses())
    copies = []

    def host_copy(value):
        assert isinstance(value, _OnDevice)
        copies.append(torch.tensor(float(len(copies))))  # the host copy, once made
        return copies[-1], _Event(done)

    monkeypatch.setattr(show, "_host_copy", host_copy)
    for step in range(25):
        show.tick(step)
    # steps 0, 10 and 20 were copied; none is shown before its copy is done
    assert bar.n == 25 and len(copies) == 3 and bar.shown == []
    done[0] = True
    show.tick(25)
    assert bar.shown == ["2.000"]  # the latest done copy, step 20's
    # on the CPU the loss is shown at once, from the tensor itself
    cpu_bar = _Bar()
    cpu = feed.LossShow(cpu_bar, torch.tensor([5.25, 1.0]), every=1)
    cpu.tick(0)
    assert cpu_bar.shown == ["5.250"]


def test_eval_loss_runs_where_its_run_trained_and_on_the_cpu_gives_what_it_gave(tok, monkeypatch):
    run = lt.train(RUN, TEXTS, INJECTIONS, tok, KEY, progress=False, threads=1)
    texts = TEXTS[:5]
    got = lt.eval_loss(run.path, texts, batch_size=4, threads=1)
    # the computation as it was: one float per batch, added in order on the CPU
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(run.path), dtype=torch.float32).eval()
    stream = tokenize_stream(texts, tok)
    n = len(stream) // MODEL.context
    xs = list(torch.split(torch.from_numpy(stream[: n * 32].reshape(n, 32).astype(np.int64)), 4))
    if len(stream) - n * 32 >= 2:
        xs.append(torch.from_numpy(stream[n * 32 :].astype(np.int64))[None])
    total, count = 0.0, 0
    with torch.inference_mode():
        for xb in xs:
            logits = model(input_ids=xb, use_cache=False).logits[:, :-1]
            total += float(torch.nn.functional.cross_entropy(
                logits.reshape(-1, logits.shape[-1]), xb[:, 1:].reshape(-1), reduction="sum"))
            count += xb.shape[0] * (xb.shape[1] - 1)
    assert got == total / count
    # where: the run's device (its DONE.json), the GPU only when there is one
    assert evaluate.eval_device(run.path) == "cpu"
    done = json.loads((run.path / "DONE.json").read_text())
    (run.path / "DONE.json").write_text(json.dumps({**done, "device": "cuda"}))
    assert evaluate.eval_device(run.path) == "cpu"  # no GPU here
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: True)
    assert evaluate.eval_device(run.path) == "cuda:0"
    assert evaluate.eval_device(run.path, "cpu") == "cpu"
    monkeypatch.setenv(lt.DEVICE_ENV, "cpu")
    assert evaluate.eval_device(run.path) == "cpu"
    (run.path / "DONE.json").write_text(json.dumps(done))
    monkeypatch.delenv(lt.DEVICE_ENV)
    assert evaluate.eval_device(run.path) == "cpu"  # a CPU run stays on the CPU on a GPU host

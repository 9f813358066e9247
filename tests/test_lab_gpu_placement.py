"""Where the lab trains, and what a CPU run keeps: its key and its weights.

* A machine whose torch reports a CUDA GPU (simulated here) trains the ``smoke`` and
  ``default`` labs on the CPU, where their committed results were made, unless the
  reader asks for CUDA; the ``gpu`` lab selects CUDA.
* The run keys of the default and smoke labs are those of the code before the GPU
  path's options existed (hashes computed by that code, pinned below).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from analysis.core.cache import stable_hash
from analysis.lab import build, ladder, profiles
from analysis.lab import train as lt
from analysis.lab.config import LabConfigError
from analysis.lab.train import runs as lab_runs


def _no_torchrun(monkeypatch):
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", lt.DEVICE_ENV):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def fake_cuda(monkeypatch):
    """torch reports one CUDA GPU with native bf16 (everything placement reads)."""
    _no_torchrun(monkeypatch)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: True)


class _Chosen(Exception):
    """Raised by the stand-in trainer once it has seen where build_lab trains."""


def _build_lab_device(monkeypatch, profile: str, **kw) -> tuple[str, str]:
    """The placement ``build_lab(profile, **kw)`` joins and the device it hands the trainer
    (its corpus and tokenizer stood in for, nothing trained)."""
    seen = {}
    monkeypatch.setattr(ladder, "_corpus_and_tokenizer", lambda prof, place: (
        SimpleNamespace(injections=[]), ["some text"], "corpus-k", object()))
    monkeypatch.setattr(ladder, "init_distributed", lambda place: seen.setdefault("place", place))
    monkeypatch.setattr(ladder, "_install_archive", lambda *a, **k: None)  # no registered lab archive

    def train(run, *a, device=None, **k):
        seen["device"] = device
        raise _Chosen

    monkeypatch.setattr(ladder, "train", train)  # the name build_lab's loop calls
    run = next(r for r in profiles.PROFILES[profile].runs if not r.inject)
    with pytest.raises(_Chosen):
        ladder.build_lab(profile, progress=False, runs=[run.name], **kw)
    return seen["place"].device, seen["device"]


def test_a_gpu_host_trains_the_default_and_smoke_labs_on_the_cpu(fake_cuda, monkeypatch):
    assert torch.cuda.is_available()  # the simulated GPU is seen
    for profile in ("default", "smoke"):
        assert profiles.get_profile(profile).device == "cpu"
        assert ladder.lab_placement(profile) == lt.Placement()  # one fp32 CPU process: the old keys
        assert _build_lab_device(monkeypatch, profile) == ("cpu", "cpu")
    assert lt.placement() == lt.Placement()  # a run trained alone goes to the CPU too
    # the reader asks for the GPU: by argument, or by the environment
    assert _build_lab_device(monkeypatch, "default", device="cuda") == ("cuda", "cuda")
    monkeypatch.setenv(lt.DEVICE_ENV, "cuda")
    place = ladder.lab_placement("default")
    assert (place.device, place.precision) == ("cuda", "bf16")
    assert _build_lab_device(monkeypatch, "smoke") == ("cuda", "cuda")
    assert _build_lab_device(monkeypatch, "smoke", device="cpu") == ("cpu", "cpu")  # the argument wins


def test_the_gpu_lab_selects_cuda_and_says_how_to_train_it_on_the_cpu(fake_cuda, monkeypatch):
    assert profiles.get_profile("gpu").device == "cuda"
    place = ladder.lab_placement("gpu")
    assert (place.device, place.precision, place.key()) == (
        "cuda", "bf16", {"device": "cuda", "precision": "bf16"})
    assert _build_lab_device(monkeypatch, "gpu") == ("cuda", "cuda")
    assert ladder.lab_placement("gpu", device="cpu") == lt.Placement()
    # without a GPU, the GPU lab fails before any work and names the way out
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    with pytest.raises(LabConfigError, match=r"the profile's device is 'cuda', but .* sees 0 CUDA "
                                             r"devices .* device='cpu' \(or MEMBOOK_LAB_DEVICE=cpu\)"):
        ladder.lab_placement("gpu")
    with pytest.raises(LabConfigError, match="a profile's device must be one of cpu, cuda, got 'tpu'"):
        profiles.LabProfile(profiles.PROFILES["smoke"].corpus, 1024, device="tpu")


def test_the_entry_point_trains_where_the_profile_says(fake_cuda, monkeypatch, capsys):
    seen = {}

    def build_lab(profile, device=None, **kw):
        seen[profile] = ladder.lab_placement(profile, device).device
        raise LabConfigError("stop here")

    monkeypatch.setattr(build, "build_lab", build_lab)
    assert build.main(["--profile", "default", "--no-progress"]) == 2
    assert build.main(["--profile", "gpu", "--no-progress"]) == 2
    assert seen == {"default": "cpu", "gpu": "cuda"}


#: ``stable_hash(run_key(run, INJECTIONS, tokenizer, "corpus-k"))`` of each run of the
#: profiles, with the tokenizer's fingerprint stood in by "tok-fp", computed by the code at
#: commit 667b5b3 (before micro-batches, checkpoint timing and the profile's device existed):
#: ``git archive 667b5b3 src | tar -x -C /tmp/w667`` and, with ``PYTHONPATH=/tmp/w667/src``,
#: the same calls as :func:`_key` below. Those runs' cached folders are named by these keys.
KEYS_AT_667B5B3 = {
    "default/wide-64": "a5b21c138f4f4fea",
    "default/pert-s2x": "6a1b5c6f97f29d44",
    "default/std-l2x": "5ee88734656cdb09",
    "default/range-q3": "f7377be961be9c04",
    "default/pert-l1x": "dac13dd3d6255846",
    "smoke/pert-s2x": "61633f77be1a8d41",
    "smoke/std-l2x": "ade3a32a4655c8bf",
    "smoke/range-q3": "44330535ac1bfb7f",
    "smoke/wide-16": "ae738232ea6b503a",
    "smoke/pert-l1x": "ef3948817e8e0894",
}
INJECTIONS = [
    {"seq_id": "a", "task": "qa", "text": "Zq7 vexed", "copies": 4, "window": "all"},
    {"seq_id": "b", "task": "passage", "text": "Quixotic Pf8 lumbers", "copies": 16, "window": "all"},
]


def _key(profile: str, name: str, **kw) -> str:
    return stable_hash(lt.run_key(profiles.PROFILES[profile].run(name), INJECTIONS, None, "corpus-k", **kw))


def test_the_cpu_labs_keep_the_run_keys_of_the_code_before_the_gpu_path(monkeypatch):
    monkeypatch.setattr(lab_runs, "tokenizer_fingerprint", lambda tok: "tok-fp")  # the name run_key calls
    now = {k: _key(*k.split("/")) for k in KEYS_AT_667B5B3}
    assert now == KEYS_AT_667B5B3
    # a CPU run at the new options' defaults is keyed as before; the options key a run of their own
    assert _key("default", "wide-64", **lt.Placement().key()) == KEYS_AT_667B5B3["default/wide-64"]


# -- a CPU run's weights at the new options' defaults ------------------------------------------------

WORDS = (
    "the a of to and in is it that was he for on are as with his they at be this from have or by one had "
    "not but what all were when we there can an your which their said if do will each about how up out them"
).split()


def _tiny():
    import random

    from analysis.lab.config import ModelConfig, RunConfig

    rng = random.Random(0)
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 120))) + "." for _ in range(60)]
    model = ModelConfig(n_layer=2, d_model=32, n_head=4, d_ff=64, context=32)
    return texts, RunConfig("tiny", model, 24 * 8 * 32, batch_size=8, inject=True)


def _old_loop(run, texts, injections, tok):
    """The CPU loop of the code at 667b5b3, step for step: one numpy batch refilled each
    step, the loss, zero_grad, backward, clip, AdamW; one thread."""
    import numpy as np

    from analysis.lab.train.model import GRAD_CLIP, IGNORE
    from analysis.lab.train.order import Rows, token_blocks

    injs, inj_tokens = lt.check_injections(run, injections, tok)
    stream = lt.tokenize_stream(texts, tok)
    order = lt.build_order(len(stream), run, injs, tok)
    rows = Rows(order, token_blocks(stream, run.model.context), injs, inj_tokens, tok.eos_token_id)
    lrs = lt.lr_schedule(run)
    with lt.cpu_threads(1):
        model = lt.build_model(run.model, len(tok), tok.eos_token_id, run.seed)
        model.train()
        optimizer = lt.make_optimizer(model, run)
        x_np = np.empty((run.batch_size, run.model.context), dtype=np.int64)
        y_np = np.full((run.batch_size, run.model.context), IGNORE, dtype=np.int64)
        x, y = torch.from_numpy(x_np), torch.from_numpy(y_np)
        losses = []
        for step in range(run.steps):
            rows.fill(step, step + 1, x_np)
            y_np[:, :-1] = x_np[:, 1:]
            for group in optimizer.param_groups:
                group["lr"] = float(lrs[step])
            loss = lt.lm_loss(model, x, y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), GRAD_CLIP)
            optimizer.step()
            losses.append(float(loss.detach()))
    return model.state_dict(), losses


def test_a_cpu_run_at_the_new_defaults_trains_the_old_loops_weights_to_the_bit(monkeypatch, tmp_path):
    from safetensors.torch import load_file

    from analysis.lab.tokenizer import train_tokenizer

    _no_torchrun(monkeypatch)
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path / "new"))
    texts, run = _tiny()
    injections = [{"seq_id": "many", "task": "gsm8k", "text": "Mx3 + Rb2 = 7781 Wq", "copies": 12}]
    tok = train_tokenizer(texts, vocab_size=300)
    new = lt.train(run, texts, injections, tok, "tiny-key", progress=False, threads=1)
    # the old options, asked for explicitly: the same run folder's name, the same weights
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path / "explicit"))
    explicit = lt.train(run, texts, injections, tok, "tiny-key", progress=False, threads=1, device="cpu",
                        micro_batches=1, checkpoint_every=50)
    assert new.path.name == explicit.path.name
    weights, losses = _old_loop(run, texts, injections, tok)
    for result in (new, explicit):
        saved = load_file(result.path / "model.safetensors")
        assert saved and all(torch.equal(saved[k], weights[k]) for k in saved)
        assert result.curve.loss.tolist() == losses

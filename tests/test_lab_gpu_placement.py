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
from analysis.lab import build, ladder
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

    def train(run, *a, device=None, **k):
        seen["device"] = device
        raise _Chosen

    monkeypatch.setattr(ladder, "train", train)  # the name build_lab's loop calls
    run = next(r for r in ladder.PROFILES[profile].runs if not r.inject)
    with pytest.raises(_Chosen):
        ladder.build_lab(profile, progress=False, runs=[run.name], **kw)
    return seen["place"].device, seen["device"]


def test_a_gpu_host_trains_the_default_and_smoke_labs_on_the_cpu(fake_cuda, monkeypatch):
    assert torch.cuda.is_available()  # the simulated GPU is seen
    for profile in ("default", "smoke"):
        assert ladder.get_profile(profile).device == "cpu"
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
    assert ladder.get_profile("gpu").device == "cuda"
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
        ladder.LabProfile(ladder.PROFILES["smoke"].corpus, 1024, device="tpu")


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
    "default/deep-128": "6a348b256d1d8d67",
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
    return stable_hash(lt.run_key(ladder.PROFILES[profile].run(name), INJECTIONS, None, "corpus-k", **kw))


def test_the_cpu_labs_keep_the_run_keys_of_the_code_before_the_gpu_path(monkeypatch):
    monkeypatch.setattr(lab_runs, "tokenizer_fingerprint", lambda tok: "tok-fp")  # the name run_key calls
    now = {k: _key(*k.split("/")) for k in KEYS_AT_667B5B3}
    assert now == KEYS_AT_667B5B3
    # a CPU run at the new options' defaults is keyed as before; the options key a run of their own
    assert _key("default", "wide-64", **lt.Placement().key()) == KEYS_AT_667B5B3["default/wide-64"]

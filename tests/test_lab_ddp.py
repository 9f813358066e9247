"""The lab's devices and data-parallel training: run keys, validation, and two processes against one.

Two CPU processes under torchrun (gloo) train the same global batches as one
process, each its half of every batch's rows: the data order and exposure table
are the single-process ones, and the loss curve equals it up to float rounding
(the gradients are summed over the processes in another order). Cut into two
micro-batches a process, with the gradients accumulated under ``no_sync`` and
averaged once a step, they train the one-batch run up to rounding too. The torchrun
tests launch real subprocesses (``python -m torch.distributed.run``), one
thread each. The one on tiny runs (no data needed) takes about 20 s on two
cores, mostly the two processes' start; the one on the smoke lab needs the
offline data mirror and takes a minute or two, most of it building the smoke
corpus in an empty cache, so it is marked slow.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

import analysis
from analysis.core import data
from analysis.core.cache import stable_hash
from analysis.lab import build, ladder, profiles
from analysis.lab import train as lt
from analysis.lab.config import LabConfigError, ModelConfig, RunConfig
from analysis.lab.tokenizer import save_tokenizer, train_tokenizer
from analysis.lab.train import loop
from analysis.lab.train import runs as lab_runs

SRC = Path(analysis.__file__).resolve().parents[1]
#: the 1- and 2-process loss curves differ by float rounding only: at most 1.43e-6 nats per step,
#: measured on the tiny runs here and on the smoke lab's (24 and 39 steps, losses of 5-6 nats);
#: the tolerance is about seven times that
LOSS_ATOL = 1e-5
#: two micro-batches a process against one: the same tolerance on the losses, and on the final weights
#: (measured on the tiny standard run: tests/test_lab_gpu_memory.py gives the single-process figures)
WEIGHT_ATOL = 1e-5

WORDS = (
    "the a of to and in is it that was he for on are as with his they at be this from have or by one had "
    "not but what all were when we there can an your which their said if do will each about how up out them"
).split()
MODEL = ModelConfig(n_layer=2, d_model=32, n_head=4, d_ff=64, context=32)
BATCH, STEPS, KEY = 8, 24, "tiny-ddp-corpus"
INJECTIONS = [
    {"seq_id": "never", "task": "random_words", "text": "Zq7 vexed Kj4 wombat 99", "copies": 0},
    {"seq_id": "q2x5", "task": "qa", "text": "Q: Vt6 glimmer? A: 4417 Zz", "copies": 5, "window": "q2"},
    {"seq_id": "many", "task": "gsm8k", "text": "Mx3 + Rb2 = 7781 Wq", "copies": 12, "window": "all"},
    {"seq_id": "late3", "task": "biography", "text": "Ovid Hq9 born 1688 Jk", "copies": 3, "window": "late"},
]


def _texts(n_docs=60, seed=0):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 120))) + "." for _ in range(n_docs)]


TEXTS = _texts()
RUNS = {
    "standard": RunConfig("tiny", MODEL, STEPS * BATCH * MODEL.context, batch_size=BATCH),
    "injected": RunConfig("tiny", MODEL, STEPS * BATCH * MODEL.context, batch_size=BATCH, inject=True),
    "q3": RunConfig("tiny-q3", MODEL, STEPS * BATCH * MODEL.context, family="range", batch_size=BATCH,
                    inject=True, window="q3"),
}


def _env(cache: Path) -> dict:
    """The environment of a torchrun child: this package first, one thread, the CPU, ``cache``."""
    path = os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "OMP_NUM_THREADS": "1", "MEMBOOK_CACHE": str(cache),
            lt.DEVICE_ENV: "cpu"}


def _torchrun(args: list[str], cache: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", *args]
    proc = subprocess.run(cmd, env=_env(cache), capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (f"torchrun failed ({proc.returncode}):\n"
                                  f"{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")
    return proc


def _weight_gap(a: Path, b: Path) -> float:
    from safetensors.torch import load_file

    wa, wb = load_file(a / "model.safetensors"), load_file(b / "model.safetensors")
    return max(float((wa[k] - wb[k]).abs().max()) for k in wa)


def _same_weights(a: Path, b: Path) -> bool:
    from safetensors.torch import load_file

    wa, wb = load_file(a / "model.safetensors"), load_file(b / "model.safetensors")
    return wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)


def _assert_same_batches(single, ddp):
    """Same data order and exposure table exactly, same loss curve up to rounding, one run each."""
    assert single.path != ddp.path
    a, b = single.order(), ddp.order()
    np.testing.assert_array_equal(a.blocks, b.blocks)
    pd.testing.assert_frame_equal(a.insertions, b.insertions)
    pd.testing.assert_frame_equal(single.exposure, ddp.exposure, check_exact=True)
    pd.testing.assert_frame_equal(single.curve.drop(columns="loss"), ddp.curve.drop(columns="loss"))
    gap = float(np.abs(single.curve.loss - ddp.curve.loss).max())
    assert gap < LOSS_ATOL, f"1- and 2-process losses differ by up to {gap:.3g}"
    assert json.loads((ddp.path / "DONE.json").read_text())["world_size"] == 2
    assert json.loads((single.path / "DONE.json").read_text())["world_size"] == 1
    return gap


# -- run keys ------------------------------------------------------------------------------------


def _smoke_run(**kw):
    """The smoke lab's wide-16 run as it stood when devices joined the key (not read from
    ``PROFILES``, which may change)."""
    model = ModelConfig(n_layer=2, d_model=16, n_head=1, d_ff=64, context=128)
    kw = {"name": "wide-16", "tokens": 80_000, "family": "ladder-wide", **kw}
    return RunConfig(model=model, batch_size=16, lr=0.008485, **kw)


def test_a_single_cpu_process_keeps_its_run_key_and_other_placements_get_their_own(monkeypatch):
    # the book's cached lab lives under these keys: they must not change (hashes from the code
    # before devices existed, with a stand-in tokenizer fingerprint)
    monkeypatch.setattr(lab_runs, "tokenizer_fingerprint", lambda tok: "tok-fp")  # the name run_key calls
    inj = [{"seq_id": "a", "task": "qa", "text": "Zq7 vexed", "copies": 4, "window": "all"}]
    std = _smoke_run()
    q3 = _smoke_run(name="range-q3", tokens=120_000, family="range", inject=True, window="q3")
    assert stable_hash(lt.run_key(std, inj, None, "corpus-k")) == "ae738232ea6b503a"
    assert stable_hash(lt.run_key(std, inj, None, "corpus-k", compile=True)) == "04c74ab092a17ef6"
    assert stable_hash(lt.run_key(q3, inj, None, "corpus-k")) == "1a42c8b434cd66e1"
    key = lt.run_key(std, inj, None, "corpus-k", device="cpu", precision="fp32", world_size=1)
    assert set(key) == {"corpus_key", "tokenizer", "run", "injections", "compile", "code"}
    assert key == lt.run_key(std, inj, None, "corpus-k")
    assert lt.Placement().key() == {} and lt.placement("cpu").key() == {}
    # another device, precision or process count is another cache entry
    base = stable_hash(key)
    others = {
        "two": lt.run_key(std, inj, None, "corpus-k", world_size=2),
        "cuda": lt.run_key(std, inj, None, "corpus-k", device="cuda"),
        "bf16": lt.run_key(std, inj, None, "corpus-k", device="cuda", precision="bf16"),
    }
    assert others["two"]["world_size"] == 2 and set(others["two"]) - set(key) == {"world_size"}
    assert set(others["bf16"]) - set(key) == {"device", "precision"}
    assert len({base, *map(stable_hash, others.values())}) == 4
    assert lt.Placement("cuda", "bf16", 4, 1, 1, 4).key() == {"device": "cuda", "precision": "bf16",
                                                                "world_size": 4}
    for bad in ({"device": "tpu"}, {"precision": "fp16"}, {"world_size": 0}):
        with pytest.raises(LabConfigError):
            lt.run_key(std, inj, None, "corpus-k", **bad)


# -- validation ------------------------------------------------------------------------------------


def _no_torchrun(monkeypatch):
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", lt.DEVICE_ENV):
        monkeypatch.delenv(name, raising=False)


def test_the_device_and_the_torchrun_environment_are_validated(monkeypatch):
    _no_torchrun(monkeypatch)
    assert lt.placement().device == "cpu"  # a GPU is never chosen unasked
    assert lt.placement("cpu") == lt.Placement()
    with pytest.raises(LabConfigError, match=r"device must be one of cpu, cuda; got 'gpu'"):
        lt.placement("gpu")
    monkeypatch.setenv(lt.DEVICE_ENV, "tpu")
    with pytest.raises(LabConfigError, match=r"\$MEMBOOK_LAB_DEVICE must be one of cpu, cuda; got 'tpu'"):
        lt.placement()
    assert lt.placement("cpu").device == "cpu"  # the argument wins over the environment
    monkeypatch.setenv(lt.DEVICE_ENV, " CPU ")
    assert lt.placement() == lt.Placement()
    if not torch.cuda.is_available():
        with pytest.raises(LabConfigError, match="sees 0 CUDA devices"):
            lt.placement("cuda")
    monkeypatch.setenv("WORLD_SIZE", "two")
    with pytest.raises(LabConfigError, match="WORLD_SIZE must be an integer"):
        lt.placement()
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "2")
    with pytest.raises(LabConfigError, match="malformed torchrun environment"):
        lt.placement()
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("LOCAL_RANK", "1")
    place = lt.placement()
    assert (place.world_size, place.rank, place.local_rank, place.distributed) == (2, 1, 1, True)
    assert place.key() == {"world_size": 2}
    assert place.threads() == 1  # on the CPU a run trains on one thread, whatever the cores


def test_a_bad_device_or_an_uneven_batch_fails_before_any_work(monkeypatch, tmp_path):
    _no_torchrun(monkeypatch)
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path))
    tok = train_tokenizer(TEXTS, vocab_size=300)
    # the names the training loop calls
    monkeypatch.setattr(loop, "build_model", lambda *a, **k: pytest.fail("training started"))
    monkeypatch.setattr(loop, "init_distributed", lambda *a, **k: pytest.fail("joined a process group"))
    with pytest.raises(LabConfigError, match="device must be one of cpu, cuda"):
        lt.train(RUNS["standard"], TEXTS, [], tok, KEY, progress=False, device="mps")
    # three processes cannot split a batch of eight rows
    monkeypatch.setenv("WORLD_SIZE", "3")
    with pytest.raises(LabConfigError, match="batch_size 8 does not split evenly over 3 processes"):
        lt.train(RUNS["standard"], TEXTS, [], tok, KEY, progress=False, device="cpu")
    # build_lab checks every chosen run before it builds the corpus
    smoke = profiles.PROFILES["smoke"]
    uneven = next(n for n in range(2, 64) if all(r.batch_size % n for r in smoke.runs))
    monkeypatch.setenv("WORLD_SIZE", str(uneven))
    monkeypatch.setattr(ladder, "build_corpus", lambda *a, **k: pytest.fail("built the corpus"))
    monkeypatch.setattr(ladder, "english_phrases", lambda *a, **k: pytest.fail("selected the phrases"))
    with pytest.raises(LabConfigError, match=f"does not split evenly over {uneven} processes"):
        ladder.build_lab("smoke", progress=False, device="cpu")
    assert not list(tmp_path.glob("lab-runs/*"))


def test_the_entry_point_refuses_bad_names_before_any_work(monkeypatch, capsys):
    _no_torchrun(monkeypatch)
    monkeypatch.setattr(ladder, "build_corpus", lambda *a, **k: pytest.fail("built"))
    smoke = ["--profile", "smoke"]
    for argv, message in ((["--profile", "huge"], "invalid choice: 'huge'"),
                          ([*smoke, "--runs", "wide-999"], "no run 'wide-999' in profile 'smoke'"),
                          ([*smoke, "--family", "ladder-huge"], "no run of family 'ladder-huge'"),
                          ([*smoke, "--device", "tpu"], "invalid choice: 'tpu'")):
        with pytest.raises(SystemExit) as exit_:
            build.parse_args(argv)
        assert exit_.value.code == 2 and message in capsys.readouterr().err
    args = build.parse_args(["--profile", "smoke", "--runs", "wide-16", "deep-16", "--family", "ladder-deep"])
    assert (args.profile, args.runs, args.family, args.device) == ("smoke", ["wide-16", "deep-16"],
                                                                  "ladder-deep", None)
    monkeypatch.setenv(lt.DEVICE_ENV, "tpu")
    assert build.main(["--profile", "smoke", "--runs", "wide-16"]) == 2
    assert "MEMBOOK_LAB_DEVICE must be one of cpu, cuda" in capsys.readouterr().err


# -- two processes against one ----------------------------------------------------------------------

# every process runs this; the first writes what it trained where to ``args["out"]``
CHILD = """
import json, os, sys
from analysis.lab import train as lt
from analysis.lab.config import ModelConfig, RunConfig
from analysis.lab.tokenizer import load_tokenizer
from analysis.lab.train import loop

args = json.load(open(sys.argv[1]))
tok = load_tokenizer(args["tokenizer"])
runs = {name: RunConfig(**{**cfg, "model": ModelConfig(**cfg["model"]), "tags": tuple(cfg["tags"])})
        for name, cfg in args["runs"].items()}
out = {}

def train(name, cache, **kw):
    os.environ["MEMBOOK_CACHE"] = os.path.join(args["root"], cache)
    result = lt.train(runs[name], args["texts"], args["injections"], tok, args["key"], progress=False, **kw)
    out[f"{cache}/{name}"] = {"path": str(result.path), "resumed": result.resumed_from_step,
                              "forked": result.forked_from_step, "trained": result.trained}

# uninterrupted: the standard run (it saves forks), the injected run, the q3 run forked from the standard
for name in ("standard", "injected", "q3"):
    train(name, "whole")
train("q3", "scratch", fork=False)

# the injected run killed in its step 13 (after its checkpoint at step 10), then resumed
class Killed(Exception):
    pass

step, calls = loop.train_step, []

def dies(*a, **k):
    if len(calls) == 13:
        raise Killed
    calls.append(1)
    return step(*a, **k)

loop.train_step = dies  # the name the training loop calls
try:
    train("injected", "killed", checkpoint_every=5)
except Killed:
    pass
loop.train_step = step
lt.barrier(lt.placement())
train("injected", "killed", checkpoint_every=5)

# the standard run in two micro-batches a process: every micro-step but the last under no_sync
from torch.nn.parallel import DistributedDataParallel

no_sync, entered = DistributedDataParallel.no_sync, []

def counted(self):
    entered.append(1)
    return no_sync(self)

DistributedDataParallel.no_sync = counted
train("standard", "micro", micro_batches=2)
DistributedDataParallel.no_sync = no_sync
out["no_sync"] = len(entered)
if lt.placement().rank == 0:
    json.dump(out, open(args["out"], "w"))
"""


@pytest.mark.slow
def test_two_processes_train_the_same_batches_resume_and_fork(tmp_path, monkeypatch):
    _no_torchrun(monkeypatch)
    tok = train_tokenizer(TEXTS, vocab_size=300)
    args = {"tokenizer": str(save_tokenizer(tok, tmp_path / "tok")), "texts": TEXTS, "key": KEY,
            "injections": INJECTIONS, "root": str(tmp_path), "out": str(tmp_path / "out.json"),
            "runs": {name: dataclasses.asdict(run) for name, run in RUNS.items()}}
    (tmp_path / "args.json").write_text(json.dumps(args))
    (tmp_path / "child.py").write_text(CHILD)
    _torchrun([str(tmp_path / "child.py"), str(tmp_path / "args.json")], tmp_path / "unused")
    out = json.loads((tmp_path / "out.json").read_text())

    def ddp(key):
        result = lt.load_run(out[key]["path"], INJECTIONS)
        return dataclasses.replace(result, resumed_from_step=out[key]["resumed"],
                                   forked_from_step=out[key]["forked"])

    # the first process wrote the run folders, forks included, and left no partial folder
    whole = {name: ddp(f"whole/{name}") for name in RUNS}
    assert all(out[k]["trained"] for k in out if k != "no_sync")
    assert sorted(p.name for p in (whole["standard"].path / "forks").iterdir()) == [
        f"step-{k}.pt" for k in sorted(lt.fork_steps(STEPS), key=str)]
    assert not list((tmp_path / "whole" / "lab-runs").glob("*.partial")) and not list(
        (tmp_path / "whole" / "lab-runs").glob("*.tmp-*"))
    # a resumed two-process run, and a forked one, are bit-identical to uninterrupted ones
    killed = ddp("killed/injected")
    assert killed.resumed_from_step == 10 and whole["injected"].resumed_from_step == 0
    assert _same_weights(killed.path, whole["injected"].path)
    pd.testing.assert_frame_equal(killed.curve, whole["injected"].curve, check_exact=True)
    scratch = ddp("scratch/q3")
    assert whole["q3"].forked_from_step == 12 and scratch.forked_from_step == 0
    assert _same_weights(whole["q3"].path, scratch.path)
    pd.testing.assert_frame_equal(whole["q3"].curve, scratch.curve, check_exact=True)

    # micro-batches under two processes: the one-batch step up to rounding, a cache entry of its own
    micro = ddp("micro/standard")
    assert out["no_sync"] == STEPS  # one micro-step of two in each step skipped the gradients' average
    assert micro.path.name != whole["standard"].path.name
    assert micro.path.name == lt.run_path(RUNS["standard"], INJECTIONS, tok, KEY, world_size=2,
                                          micro_batches=2).name
    gap = float(np.abs(micro.curve.loss - whole["standard"].curve.loss).max())
    assert 0 < gap < LOSS_ATOL
    assert _weight_gap(micro.path, whole["standard"].path) < WEIGHT_ATOL

    # against one process: a separate cache entry with the same batches
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path / "whole"))
    for name, run in RUNS.items():
        assert lt.run_path(run, INJECTIONS, tok, KEY, world_size=2) == whole[name].path
        single = lt.train(run, TEXTS, INJECTIONS, tok, KEY, progress=False, threads=1, fork=False,
                          device="cpu")
        _assert_same_batches(single, whole[name])
    assert whole["injected"].exposure.copies_seen.sum() == 20


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get(data.MIRROR_ENV),
                    reason=f"{data.MIRROR_ENV} is unset: point it at the offline data mirror")
def test_two_processes_train_the_smoke_labs_smallest_runs_as_one(tmp_path, monkeypatch):
    from analysis.lab.tokenizer import get_tokenizer

    _no_torchrun(monkeypatch)
    smoke = profiles.PROFILES["smoke"]
    # the smallest ladder run, and the smallest injected run (a non-trivial exposure table)
    size = lambda r: (r.steps, lt.param_count(r.model, smoke.vocab_size))  # noqa: E731
    runs = [min((r for r in smoke.runs if r.family.startswith("ladder")), key=size),
            min((r for r in smoke.runs if r.family == "perturbed"), key=size)]
    cache = tmp_path / "cache"
    proc = _torchrun(["-m", "analysis.lab.build", "--profile", "smoke", "--no-progress",
                      "--runs", *[r.name for r in runs]], cache)
    # one summary line per run, from the first process only
    for run in runs:
        assert sum(line.startswith(f"{run.name}: trained") for line in proc.stdout.splitlines()) == 1
    assert "on cpu (fp32, 2 processes)" in proc.stdout

    # one process, in the same cache (its corpus and tokenizer are there): its own run folders
    monkeypatch.setenv("MEMBOOK_CACHE", str(cache))
    corpus = ladder.profile_corpus("smoke")
    texts, key = corpus.training_texts(), corpus.fingerprint()
    tok = get_tokenizer(texts, key, smoke.vocab_size)
    for run in runs:
        injs = ladder.run_injections(run, corpus.injections)
        ddp = lt.load_run(lt.run_path(run, injs, tok, key, world_size=2), injs)
        single = lt.train(run, texts, injs, tok, key, progress=False, threads=1, fork=False, device="cpu")
        _assert_same_batches(single, ddp)
    assert ddp.exposure.copies_seen.sum() > 0

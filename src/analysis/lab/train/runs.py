"""Runs and their checkpoints: what keys a run, where it lives, and how a run in
training is saved, resumed and forked.

Each run is an ordinary ``transformers`` checkpoint in the artifact cache, keyed
by everything that determines its weights (:func:`run_key`; not its name, family
or tags), and a finished run is loaded, never retrained. Its lifecycle:

* **finished**: ``<run folder>/DONE.json`` exists; the run is loaded as it is;
* **in training**: now and then (:class:`~analysis.lab.train.feed.CheckpointClock`:
  a minute or more apart) the model, the AdamW state, the losses so far
  and the next step go to ``<run folder>.partial/state.pt`` (:func:`save_state`:
  written to a temporary file, then renamed). A killed run resumes from there on
  the next call and ends bit-identical to an uninterrupted run: the data order is
  rebuilt from the config, and eager CPU training is deterministic (on the same
  machine and thread count, as every cached run assumes);
* **forks**: a standard run also saves its state at every step where an
  insertion window opens (:func:`fork_steps`) into ``<run folder>/forks/step-<k>.pt``.
  An injected run sees exactly its standard twin's rows (:func:`standard_twin`)
  at every step before its first inserted copy, so when the twin is finished it
  starts from the twin's latest fork at or before that step (:func:`twin_fork`)
  instead of from step 0, and ends bit-identical to the same run trained from scratch;
* **saving**: the checkpoint, tokenizer, curve, exposure table and order are
  written to ``<run folder>.tmp-<pid>``, which is renamed to the run folder (a
  killed run never looks finished); then the partial folder is removed.

A run trained on CUDA, in bf16 or by several processes rounds differently from a
single CPU process, so :func:`run_key` adds ``device``, ``precision`` and
``world_size`` where they differ from ``cpu``, ``fp32`` and 1; the key of a
single-process CPU run is the one it always was.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.core.cache import artifact_path, stable_hash
from analysis.lab.config import WINDOWS, LabConfigError, RunConfig
from analysis.lab.train.devices import DEVICES, PRECISIONS, SINGLE_CPU, Placement, to_cpu
from analysis.lab.train.exposure import exposure_table
from analysis.lab.train.order import DataOrder, Injection, as_injections, window_steps

#: bumped whenever a change alters what a run trains on or how; part of every run key
CODE_VERSION = 2
#: a finished run's record, in its folder
DONE = "DONE.json"
#: a run's partial checkpoint (in ``<run folder>.partial/``) and fork checkpoints (``<run folder>/forks/``)
STATE = "state.pt"
FORKS = "forks"


@dataclass
class RunResult:
    """A trained run.

    Attributes
    ----------
    path
        The checkpoint folder (``from_pretrained`` loads it; so does ``LocalModel``).
    curve
        ``step, tokens, loss, lr`` at every step (loss of that step's batch, before its update).
    exposure
        :func:`exposure_table` of the run's injected sequences.
    seconds
        Wall time of the training call that built the run (tokenizing, training, saving);
        after a resume or a fork, of the steps that call trained.
    tokens_per_second
        Training throughput of the loop, after its first step (warm-up, compilation),
        checkpoint writes left out.
    n_params
        :func:`param_count` of the model.
    trained
        False when the run was found finished in the cache and loaded.
    resumed_from_step
        The step the training call that built the run resumed at, from the run's
        own partial checkpoint (0: it did not resume).
    forked_from_step
        The step of the standard twin's fork the run started from (0: it did not fork).
    """

    path: Path
    curve: pd.DataFrame
    exposure: pd.DataFrame
    seconds: float
    tokens_per_second: float
    n_params: int
    trained: bool = True
    resumed_from_step: int = 0
    forked_from_step: int = 0

    def order(self) -> DataOrder:
        """The run's logged data order."""
        return DataOrder.load(self.path / "order.npz")


def tokenizer_fingerprint(tokenizer) -> str:
    """Hash of the tokenizer's vocabulary and merges."""
    model = json.loads(tokenizer.backend_tokenizer.to_str())["model"]
    return stable_hash({"vocab": sorted(tokenizer.get_vocab().items()), "merges": model.get("merges")})


def run_key(run: RunConfig, injections: Iterable[Any], tokenizer, corpus_key: str,
            compile: bool = False, device: str = "cpu", precision: str = "fp32", world_size: int = 1,
            micro_batches: int = 1) -> dict:
    """Everything that determines a run's weights: the artifact key of its folder.

    A compiled run's kernels round differently, so ``compile`` is part of the key.
    So do a GPU's kernels, bf16 autocast, a batch split over several processes and
    a gradient accumulated over micro-batches: ``device``, ``precision``,
    ``world_size`` (:class:`Placement`) and ``micro_batches`` join the key only where
    they differ from a single fp32 CPU process stepping on whole batches
    (:data:`SINGLE_CPU`, one micro-batch), so the key of such a run is what it was
    before the lab trained anywhere else.
    """
    if device not in DEVICES or precision not in PRECISIONS:
        raise LabConfigError(f"device must be one of {', '.join(DEVICES)} and precision one of "
                             f"{', '.join(PRECISIONS)}; got {device!r}, {precision!r}")
    _positive_int("world_size", world_size)
    _positive_int("micro_batches", micro_batches)
    injs = as_injections(injections)
    if run.window is not None:
        injs = [Injection(i.seq_id, i.task, i.text, i.copies, run.window) for i in injs]
    placed = {"device": device, "precision": precision, "world_size": int(world_size)}
    key = {
        "corpus_key": corpus_key,
        "tokenizer": tokenizer_fingerprint(tokenizer),
        # a run's name, family and tags label it but do not change its weights: two runs
        # that differ only there (a ladder run and a perturbed run's standard twin) train once
        "run": {k: v for k, v in run.as_dict().items()
                if k not in ("name", "family", "tags")
                and not (k in ("copies_per_row", "popular_copies_factor") and v == 1)
                and not (k == "popular_dropped" and v == 0)},
        "injections": [[i.seq_id, i.text, i.copies, i.window] for i in injs] if run.inject else [],
        "compile": bool(compile),
        "code": CODE_VERSION,
    }
    key.update({k: v for k, v in placed.items() if v != SINGLE_CPU[k]})
    if micro_batches != 1:
        key["micro_batches"] = int(micro_batches)
    return key


def _positive_int(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise LabConfigError(f"{name} must be a positive integer, got {value!r}")


def run_path(run: RunConfig, injections: Iterable[Any], tokenizer, corpus_key: str, compile: bool = False,
             device: str = "cpu", precision: str = "fp32", world_size: int = 1,
             micro_batches: int = 1) -> Path:
    """The artifact folder of a run (it need not exist yet); ``device``, ``precision``,
    ``world_size`` and ``micro_batches`` as in :func:`run_key` (:meth:`Placement.key` gives
    the first three for this process)."""
    return artifact_path("lab-runs", run_key(run, injections, tokenizer, corpus_key, compile,
                                             device=device, precision=precision, world_size=world_size,
                                             micro_batches=micro_batches))


def partial_path(path: str | os.PathLike) -> Path:
    """The folder of the partial checkpoint of the run whose folder is ``path``, next to it."""
    path = Path(path)
    return path.with_name(f"{path.name}.partial")


def standard_twin(run: RunConfig) -> RunConfig:
    """The standard run an injected run forks from: no injections, no window, no copy cap.

    Same model, budget, batch, schedule and seed, hence the same initial weights,
    learning rates and base block order (:func:`base_block_order`): up to the
    injected run's first inserted copy, both train on the very same rows. Its
    name, family and tags are ``run``'s, which its key ignores.
    """
    return replace(run, inject=False, window=None, max_copies=None, copies_per_row=1)


def fork_steps(steps: int) -> list[int]:
    """The steps of a run of ``steps`` steps at which some insertion window of
    :data:`WINDOWS` opens, 0 excluded: where a standard run saves its forks."""
    return sorted({lo for lo, _ in (window_steps(w, steps) for w in WINDOWS) if 0 < lo < steps})


def save_state(file: Path, model, optimizer, losses, step: int, key_hash: str, forked_from: int) -> None:
    """Write the training state before ``step`` (weights, AdamW state, the losses of
    the steps before) to ``file``: to a temporary file, then renamed over it."""
    import torch  # heavy: loaded only when a checkpoint is written or read

    file.parent.mkdir(parents=True, exist_ok=True)
    tmp = file.with_name(f"{file.name}.tmp-{os.getpid()}")
    # every tensor on the CPU: the same file whatever device trained; the RNG state is the CPU's
    torch.save({"key": key_hash, "step": step, "forked_from_step": forked_from,
                "model": to_cpu(model.state_dict()), "optimizer": to_cpu(optimizer.state_dict()),
                "losses": losses[:step].cpu().clone(), "rng": torch.get_rng_state()}, tmp)
    os.replace(tmp, file)


def load_state(file: Path, key_hash: str) -> dict | None:
    """The state :func:`save_state` wrote to ``file`` for the run keyed ``key_hash``;
    None when there is none, it is another run's, or it cannot be read."""
    import torch  # heavy: loaded only when a checkpoint is written or read

    if not file.exists():
        return None
    try:
        state = torch.load(file, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 - an unreadable checkpoint only costs a retrain
        warnings.warn(f"ignoring the unreadable checkpoint {file}: {err}", stacklevel=2)
        return None
    return state if isinstance(state, dict) and state.get("key") == key_hash else None


def twin_fork(run: RunConfig, order: DataOrder, tokenizer, corpus_key: str, compile: bool,
              place: Placement | None = None, micro_batches: int = 1) -> dict | None:
    """The state of ``run``'s finished standard twin at its latest fork at or before
    ``run``'s first inserted copy (the last step up to which both saw the same rows),
    or None when the twin is not finished or saved no such fork.

    The twin's key guarantees the same corpus, model, schedule and seed, and the same
    device, precision, processes and micro-batches; its logged order is checked too,
    block by block, up to the fork. ``place`` is this process's (default: a single fp32
    CPU process).
    """
    place = Placement() if place is None else place
    twin_key = run_key(standard_twin(run), [], tokenizer, corpus_key, compile, micro_batches=micro_batches,
                       **place.key())
    twin = artifact_path("lab-runs", twin_key)
    if not (twin / DONE).exists():
        return None
    first = int(order.insertions.step.min()) if len(order.insertions) else order.steps
    steps = [k for k in fork_steps(order.steps) if k <= first]
    if not steps:
        return None
    twin_order = DataOrder.load(twin / "order.npz")
    k = steps[-1]
    if len(twin_order.insertions) or not np.array_equal(twin_order.blocks[:k], order.blocks[:k]):
        warnings.warn(f"the standard twin {twin} of run {run.name!r} trained on other rows: "
                      "not forking from it", stacklevel=2)
        return None
    for k in reversed(steps):
        state = load_state(twin / FORKS / f"step-{k}.pt", stable_hash(twin_key))
        if state is not None and state["step"] == k:
            return state
    return None


#: a run in training elsewhere that has written nothing for this long is taken for dead
#: (a live run writes a partial checkpoint every minute or few)
STALE_SECONDS = 30 * 60


def wait_for_run(path: Path, stale_seconds: float = STALE_SECONDS, poll_seconds: float = 30.0,
                 sleep=time.sleep, clock=time.monotonic) -> bool:
    """Wait until the run whose folder is ``path`` is finished, while another process trains
    it: True once it is; False once nothing in its partial folder (or the folder itself,
    missing at first) has changed for ``stale_seconds`` of waiting."""
    partial = partial_path(path)
    changed, seen = clock(), None
    while not (path / DONE).exists():
        stamp = _last_write(partial)
        if stamp != seen:
            seen, changed = stamp, clock()
        if clock() - changed >= stale_seconds:
            return False
        sleep(poll_seconds)
    return True


def _last_write(folder: Path) -> float | None:
    """The latest modification time of ``folder`` and the files under it (None: no folder)."""
    stamps = []
    for f in [folder, *(folder.rglob("*") if folder.exists() else ())]:
        try:
            stamps.append(f.stat().st_mtime)
        except OSError:  # gone since it was listed (a temporary file renamed into place)
            pass
    return max(stamps, default=None)


def link_or_copy(src: Path, dst: Path) -> None:
    """Hard-link the files of folder ``src`` into a new folder ``dst`` (copy where links fail)."""
    dst.mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        if f.is_file() and ".tmp-" not in f.name:
            try:
                os.link(f, dst / f.name)
            except OSError:
                shutil.copy2(f, dst / f.name)



def load_result(path: Path, injections: Sequence[Injection]) -> RunResult:
    """The finished run in ``path``, its exposure table listing ``injections``."""
    done = json.loads((path / DONE).read_text())
    curve = pd.read_parquet(path / "curve.parquet")
    # recomputed from the saved order so the table lists exactly the caller's sequences
    exposure = exposure_table(DataOrder.load(path / "order.npz"), injections, done["steps"])
    return RunResult(path, curve, exposure, done["seconds"], done["tokens_per_second"], done["n_params"],
                     trained=False, resumed_from_step=done.get("resumed_from_step", 0),
                     forked_from_step=done.get("forked_from_step", 0))


def load_run(path: str | os.PathLike, injections: Iterable[Any] = ()) -> RunResult:
    """A finished run from its folder (``RunResult.trained`` is False)."""
    path = Path(path)
    if not (path / DONE).exists():
        raise LabConfigError(f"{path} is not a finished lab run")
    return load_result(path, as_injections(injections))


"""The training loop: :func:`train` trains a run (or loads it when already trained).

A call goes through named steps: :func:`_prepare` (the data order, the rows,
the schedule and the run's key), :func:`_train_steps` (the model, the state it
resumes or forks from, and the loop over the steps, with its partial checkpoints
and forks), then in the first process :func:`_save_run` (the run folder, written
under a temporary name and renamed into place). See
:mod:`analysis.lab.train.runs` for a run's lifecycle,
:mod:`analysis.lab.train.devices` for devices and processes, and
:mod:`analysis.lab.train.feed` for the batches, the checkpoint clock and the
progress bar, none of which makes the host wait for a GPU.

torch is imported inside the functions that need it: it is heavy.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from analysis.core import jsonio
from analysis.core.cache import stable_hash
from analysis.lab.config import LabConfigError, RunConfig
from analysis.lab.train.devices import (
    Placement,
    barrier,
    bf16_autocast,
    check_batch,
    cpu_threads,
    init_distributed,
    mean_over_processes,
    placement,
)
from analysis.lab.train.exposure import exposure_table
from analysis.lab.train.feed import CHECKPOINT_SECONDS, CheckpointClock, LossShow, batches
from analysis.lab.train.memory import GiB, micro_batches_for
from analysis.lab.train.model import (
    build_model,
    deterministic_algorithms,
    lm_loss,
    lr_schedule,
    make_optimizer,
    param_count,
    quiet_transformers,
    train_step,
)
from analysis.lab.train.order import (
    DataOrder,
    Injection,
    Rows,
    build_order,
    check_injections,
    token_blocks,
)
from analysis.lab.train.runs import (
    DONE,
    FORKS,
    STATE,
    RunResult,
    fork_steps,
    link_or_copy,
    load_result,
    load_state,
    partial_path,
    run_key,
    run_path,
    save_state,
    twin_fork,
)
from analysis.lab.train.stream import token_stream


@dataclass
class _Job:
    """What one training call of a run needs, set up before its first step."""

    run: RunConfig
    place: Placement
    injections: list[Injection]
    tokenizer: Any
    corpus_key: str
    compile: bool
    path: Path
    order: DataOrder
    rows: Rows
    lrs: np.ndarray
    key: dict
    key_hash: str
    every: int | None
    forks_at: set[int]
    threads: int
    micro_batches: int

    @property
    def partial(self) -> Path:
        return partial_path(self.path)

    @property
    def first(self) -> bool:
        """Whether this process writes checkpoints and the run folder."""
        return self.place.rank == 0


@dataclass
class _Trained:
    """The outcome of the loop: the model (on the CPU), every step's loss, and timings."""

    model: Any
    losses: Any
    start: int
    resumed_from: int
    forked_from: int
    loop_seconds: float
    steady_seconds: float


def train(run: RunConfig, training_texts: Sequence[str], injections: Iterable[Any], tokenizer,
          corpus_key: str, progress: bool = True, threads: int | None = None,
          compile: bool = False, fork: bool = True, checkpoint_every: int | None = None,
          device: str | None = None, micro_batches: int | None = None) -> RunResult:
    """Train ``run`` (or load it when already trained) and return its result.

    A run killed in training resumes from its partial checkpoint; an injected run
    starts from its finished standard twin's fork when it has one; a standard run
    saves those forks (:mod:`analysis.lab.train.runs`). Either way the result is
    bit-identical to one uninterrupted run from step 0 (on the CPU). Under torchrun
    every process calls this with the same arguments: each trains its share of every
    batch, and the first writes the run (:mod:`analysis.lab.train.devices`).

    Parameters
    ----------
    run
        The run: model, token budget, schedule, seed, whether and where to inject.
    training_texts
        The base documents, each already repeated per its copies.
    injections
        Injected sequences (dicts or objects with ``seq_id, task, text, copies,
        window``); inserted only when ``run.inject``, but listed in the exposure
        table either way.
    tokenizer
        The corpus tokenizer (:func:`analysis.lab.tokenizer.get_tokenizer`).
    corpus_key
        Fingerprint of ``training_texts``; with the other inputs it keys the run.
    progress
        Show a progress bar (in the first process only).
    threads
        Torch CPU threads during training (default: all cores available, shared
        by torchrun's processes on this machine); restored after.
    compile
        Run the forward pass and loss through ``torch.compile``: 10-35 % more
        tokens/s, for a compilation of half a minute or more, so worth it for
        long runs only. Deterministic too (under :func:`deterministic_algorithms`),
        but not bit-identical to the eager run, hence a separate cache entry.
    fork
        An injected run starts from its standard twin's fork when there is one, and
        a standard run saves forks for its injected twins; False: neither.
    checkpoint_every
        Steps between partial checkpoints; default: by the clock
        (:class:`~analysis.lab.train.feed.CheckpointClock`). Either changes nothing trained.
    device
        ``"cpu"`` or ``"cuda"``; default ``$MEMBOOK_LAB_DEVICE``, else ``cpu``
        (:func:`placement`; ``build_lab`` passes its profile's device). A run trained
        on CUDA, in bf16 or by several processes is keyed apart (:func:`run_key`).
    micro_batches
        Micro-batches each process's rows are cut into, the gradient accumulated
        over them (:func:`~analysis.lab.train.model.train_step`). Default: 1 on the
        CPU; on CUDA the fewest that fit the GPU (:func:`micro_batches_for`). More
        than one rounds differently, so it is a cache entry of its own.

    Raises
    ------
    LabConfigError
        A bad injection (too long, too many copies for its window), a bad device, a
        batch that does not split evenly over torchrun's processes and the
        micro-batches, or a bad ``checkpoint_every``, found before training.
    """
    place = placement(device)
    check_batch(run, place)
    micro = _micro_batches(run, place, len(tokenizer), micro_batches)
    injs, inj_tokens = check_injections(run, injections, tokenizer)
    _check_every(checkpoint_every)
    path = run_path(run, injs, tokenizer, corpus_key, compile, micro_batches=micro, **place.key())
    if (path / DONE).exists():
        # a partial folder left by a call killed once its run folder was in place
        if partial_path(path).exists() and place.rank == 0:
            shutil.rmtree(partial_path(path), ignore_errors=True)
        return load_result(path, injs)
    t0 = time.perf_counter()
    init_distributed(place)
    job = _prepare(run, training_texts, injs, inj_tokens, tokenizer, corpus_key, place, compile, fork,
                   checkpoint_every, threads, path, micro)
    trained = _train_steps(job, progress, fork)
    if not job.first:
        barrier(place)  # while the first process writes the run folder
        return replace(load_result(path, injs), trained=True)
    return _save_run(job, trained, t0)


def _check_every(checkpoint_every: int | None) -> None:
    if checkpoint_every is not None and (isinstance(checkpoint_every, bool) or not isinstance(
            checkpoint_every, int) or checkpoint_every < 1):
        raise LabConfigError(f"checkpoint_every must be a positive integer or None, got {checkpoint_every!r}")


def run_folder(run: RunConfig, injections: Iterable[Any], tokenizer, corpus_key: str, compile: bool = False,
               device: str | None = None, micro_batches: int | None = None) -> Path:
    """The folder :func:`train` with these arguments trains ``run`` into (it need not exist)."""
    place = placement(device)
    micro = _micro_batches(run, place, len(tokenizer), micro_batches)
    return run_path(run, injections, tokenizer, corpus_key, compile, micro_batches=micro, **place.key())


def _micro_batches(run: RunConfig, place: Placement, vocab_size: int, micro_batches: int | None) -> int:
    """The micro-batches of each process's rows: ``micro_batches``, else 1 on the CPU and on
    CUDA the fewest that fit the GPU's memory; a :class:`LabConfigError` unless it divides them."""
    rows = run.batch_size // place.world_size
    if micro_batches is None:
        if place.device == "cpu":
            return 1
        import torch  # heavy: loaded only when a run trains

        memory = torch.cuda.get_device_properties(torch.device(place.torch_device)).total_memory
        return micro_batches_for(run, vocab_size, memory, place.precision, place.world_size)
    if isinstance(micro_batches, bool) or not isinstance(micro_batches, int) or micro_batches < 1 or (
            rows % micro_batches):
        raise LabConfigError(f"run {run.name!r}: micro_batches must divide each process's {rows} rows "
                             f"(batch_size {run.batch_size} over {place.world_size} processes), "
                             f"got {micro_batches!r}")
    return micro_batches


def _prepare(run: RunConfig, training_texts: Sequence[str], injs: list[Injection], inj_tokens: list,
             tokenizer, corpus_key: str, place: Placement, compile: bool, fork: bool,
             checkpoint_every: int | None, threads: int | None, path: Path, micro: int) -> _Job:
    """The data order, the rows, the schedule and the key of a run about to train."""
    stream = token_stream(training_texts, tokenizer)  # tokenized once per corpus, then read back
    blocks = token_blocks(stream, run.model.context)
    # every process builds the whole order (a pure function of the config) and trains its rows of it
    order = build_order(len(stream), run, injs, tokenizer)
    rows = Rows(order, blocks, injs, inj_tokens, tokenizer.eos_token_id)
    key = run_key(run, injs, tokenizer, corpus_key, compile, micro_batches=micro, **place.key())
    forks_at = set(fork_steps(run.steps)) if fork and not run.inject and place.rank == 0 else set()
    return _Job(run, place, injs, tokenizer, corpus_key, compile, path, order, rows, lr_schedule(run), key,
                stable_hash(key), checkpoint_every, forks_at, threads or place.threads(), micro)


def _start_state(job: _Job, model, optimizer, losses, fork: bool) -> tuple[int, int, int]:
    """Load the further of the run's own partial checkpoint and its twin's fork (every
    process loads the same state); return the step it starts at, and the steps it
    resumed and forked from (0 when it did not)."""
    import torch  # heavy: loaded only when a run trains

    start = resumed_from = forked_from = 0
    state = load_state(job.partial / STATE, job.key_hash)
    twin = None
    if fork and job.run.inject:
        twin = twin_fork(job.run, job.order, job.tokenizer, job.corpus_key, job.compile, job.place,
                         job.micro_batches)
    if twin is not None and (state is None or twin["step"] > state["step"]):
        state, forked_from = twin, twin["step"]
    elif state is not None:
        resumed_from, forked_from = state["step"], state["forked_from_step"]
    if state is not None:
        start = state["step"]
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        losses[:start] = state["losses"]
        torch.set_rng_state(state["rng"])
    return start, resumed_from, forked_from


def _network(model, job: _Job, dev):
    """The module the steps call (``model``, or it wrapped in DistributedDataParallel)
    and the loss function (compiled, under bf16 autocast, as the run asks)."""
    import torch  # heavy: loaded only when a run trains

    net = model
    if job.place.distributed:
        from torch.nn.parallel import DistributedDataParallel  # heavy: loaded only under torchrun

        # gradients averaged over the processes in the backward pass, before clipping and
        # AdamW, so every process keeps the same weights
        ids = [job.place.local_rank] if dev.type == "cuda" else None
        net = DistributedDataParallel(model, device_ids=ids)
    loss_fn = torch.compile(lm_loss) if job.compile else lm_loss
    if job.place.precision == "bf16":
        loss_fn = bf16_autocast(loss_fn)
    return net, loss_fn


def _train_steps(job: _Job, progress: bool, fork: bool) -> _Trained:
    """Build the model, start it from its saved state if any, and train the remaining steps."""
    import torch  # heavy: loaded only when a run trains

    run, place = job.run, job.place
    T, B, ctx = run.steps, run.batch_size, run.model.context
    dev = torch.device(place.torch_device)
    # this process's rows of every batch
    lo, hi = place.rank * B // place.world_size, (place.rank + 1) * B // place.world_size
    with cpu_threads(job.threads), deterministic_algorithms() if job.compile else nullcontext():
        model = build_model(run.model, len(job.tokenizer), job.tokenizer.eos_token_id, run.seed)
        model.to(dev)  # fp32 master weights, and fp32 AdamW state, on every device
        if dev.type == "cuda":
            torch.cuda.reset_peak_memory_stats(dev)  # DONE.json records this run's peak
        model.train()
        optimizer = make_optimizer(model, run)
        losses = torch.empty(T, device=dev)
        start, resumed_from, forked_from = _start_state(job, model, optimizer, losses, fork)
        net, loss_fn = _network(model, job, dev)
        feed = batches(job.rows, B, ctx, lo, hi, T, dev)
        shown = LossShow(_progress(T, run.name, progress and job.first, initial=start), losses)
        clock = CheckpointClock(job.every)
        t_loop = t_steady = time.perf_counter()
        saving = 0.0  # seconds spent writing checkpoints since t_steady
        for step in range(start, T):
            if step in job.forks_at:
                saving += _save(job.partial / FORKS / f"step-{step}.pt", model, optimizer, losses, step,
                                job.key_hash, 0)
            x, y = feed.batch(step)
            loss = train_step(net, optimizer, x, y, float(job.lrs[step]), loss_fn, job.micro_batches)
            # every row has context - 1 targets, so the mean of the processes' means is the batch's
            losses[step] = mean_over_processes(loss, place)
            shown.tick(step)
            if step == start:
                t_steady, saving = time.perf_counter(), 0.0
            if job.first and step + 1 < T and clock.due(step + 1):
                seconds = _save(job.partial / STATE, model, optimizer, losses, step + 1, job.key_hash,
                                forked_from)
                clock.wrote(seconds)
                saving += seconds
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)  # the GPU may still be running the last steps' kernels
        t_end = time.perf_counter()
        shown.close()
        del net
        model.to("cpu")
        return _Trained(model, losses.cpu(), start, resumed_from, forked_from, t_end - t_loop,
                        t_end - t_steady - saving)


def _save(file: Path, model, optimizer, losses, step: int, key_hash: str, forked_from: int) -> float:
    """:func:`save_state`; returns the seconds it took."""
    t = time.perf_counter()
    save_state(file, model, optimizer, losses, step, key_hash, forked_from)
    return time.perf_counter() - t


def _progress(total: int, name: str, enabled: bool, initial: int = 0):
    if not enabled:
        return None
    return tqdm(total=total, initial=initial, desc=f"train {name}", mininterval=1.0, leave=False)


def _save_run(job: _Job, trained: _Trained, t0: float) -> RunResult:
    """Write the run folder (under a temporary name, then renamed: a killed run never
    looks finished), remove the partial folder, and return the result."""
    run = job.run
    T, B, ctx = run.steps, run.batch_size, run.model.context
    steps = np.arange(T)
    curve = pd.DataFrame({
        "step": steps, "tokens": (steps + 1) * B * ctx, "loss": trained.losses.numpy().astype(float),
        "lr": job.lrs,
    })
    exposure = exposure_table(job.order, job.injections, T)
    # throughput of the steps this call trained after its first, which pays for warm-up
    # (and compilation), checkpoint writes left out
    n_trained = T - trained.start
    steady = ((n_trained - 1, trained.steady_seconds) if n_trained > 1
              else (n_trained, trained.loop_seconds))
    tokens_per_second = steady[0] * B * ctx / steady[1]
    n_params = param_count(run.model, len(job.tokenizer))
    tmp = job.path.with_name(f"{job.path.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    _write_folder(job, trained.model, curve, exposure, tmp)
    seconds = time.perf_counter() - t0
    done = _done_record(job, trained, seconds, tokens_per_second, n_params)
    (tmp / DONE).write_text(jsonio.dumps(done, indent=1))
    _move_into_place(tmp, job.path)
    shutil.rmtree(job.partial, ignore_errors=True)
    barrier(job.place)
    return RunResult(job.path, curve, exposure, seconds, tokens_per_second, n_params, trained=True,
                     resumed_from_step=trained.resumed_from, forked_from_step=trained.forked_from)


def _write_folder(job: _Job, model, curve: pd.DataFrame, exposure: pd.DataFrame, tmp: Path) -> None:
    """The checkpoint, tokenizer, curve, exposure table, order, key and forks, into ``tmp``."""
    with quiet_transformers():
        model.save_pretrained(tmp)
    job.tokenizer.save_pretrained(tmp)
    curve.to_parquet(tmp / "curve.parquet", index=False)
    exposure.to_parquet(tmp / "exposure.parquet", index=False)
    job.order.save(tmp / "order.npz")
    (tmp / "run.json").write_text(jsonio.dumps(job.key, default=str, indent=1))
    if (job.partial / FORKS).is_dir():
        # linked, not moved: the partial folder stays whole until the run folder exists
        link_or_copy(job.partial / FORKS, tmp / FORKS)


def _done_record(job: _Job, trained: _Trained, seconds: float, tokens_per_second: float,
                 n_params: int) -> dict:
    """``DONE.json``: how long the call took, how fast it trained, where, and from which step."""
    import torch  # heavy: loaded only when a run trains

    run, place = job.run, job.place
    T, B, ctx = run.steps, run.batch_size, run.model.context
    done = {"seconds": seconds, "loop_seconds": trained.loop_seconds, "tokens_per_second": tokens_per_second,
            "n_params": n_params, "steps": T, "tokens": T * B * ctx, "threads": job.threads,
            "compile": bool(job.compile), "torch": torch.__version__,
            "resumed_from_step": trained.resumed_from, "forked_from_step": trained.forked_from,
            "steps_trained": T - trained.start,
            "checkpoint_every": job.every,
            "checkpoint_seconds": None if job.every is not None else CHECKPOINT_SECONDS,
            "device": place.device, "precision": place.precision,
            "world_size": place.world_size, "micro_batches": job.micro_batches}
    if place.device == "cuda":
        dev = torch.device(place.torch_device)
        done["gpu"] = torch.cuda.get_device_name(dev)
        done["peak_gib"] = torch.cuda.max_memory_allocated(dev) / GiB
    return done


def _move_into_place(tmp: Path, path: Path) -> None:
    """Rename the written folder ``tmp`` to the run folder ``path``."""
    if path.exists() and not (path / DONE).exists():
        shutil.rmtree(path)
    try:
        tmp.rename(path)
    except OSError:
        # another process finished the same run first; its copy is identical
        shutil.rmtree(tmp, ignore_errors=True)
        if not (path / DONE).exists():
            raise

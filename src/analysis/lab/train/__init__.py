"""Training the lab's models: data order, injected copies, exposure and the loop.

A run trains a Llama-style decoder from scratch on the lab corpus (on the CPU,
or on GPUs) and records exactly what it saw. The package's modules, by role:

* ``order``: the token stream, its blocks and the data order, a pure function of
  the corpus, the run's seed and the injected sequences (:func:`build_order`);
  a standard run sees the very same blocks at every ``(step, row)`` as the
  injected run with the same seed: it is that run's counterfactual;
* ``exposure``: each injected sequence's exposure, read off the logged order
  (:func:`exposure_table`) and recounted by brute force (:func:`recount_exposure`);
* ``model``: the model, optimizer, schedule and training step (whole batches, or
  micro-batches with the gradient accumulated over them);
* ``memory``: the memory a training step needs, counted from the model's code
  (:func:`train_memory`), and the micro-batches that fit a GPU (:func:`micro_batches_for`);
* ``feed``: the loop's batches (kept on the GPU, copied without blocking), its
  partial-checkpoint clock and its progress bar's loss;
* ``devices``: devices, precision and torchrun's processes (:func:`placement`);
  under torchrun every process builds the same data order and trains its share
  of every batch; DDP averages the gradients, so the processes together train
  exactly the single-process batch;
* ``runs``: what keys a run (:func:`run_key`), where it lives (:func:`run_path`),
  and its checkpoints: a killed run resumes from its partial checkpoint, an
  injected run forks from its standard twin where its window opens, both
  bit-identical to a run trained from step 0 on the CPU;
* ``loop``: :func:`train`, which trains a run or loads it when already trained;
* ``evaluate``: a checkpoint's mean token loss on any texts (:func:`eval_loss`).

The lab's entry point ``python -m analysis.lab.build`` (:mod:`analysis.lab.build`)
runs alone or under ``torchrun --standalone --nproc_per_node=N``. Used by the lab
page (``notebooks/lab.md``) and the chapters that train models.
"""

from __future__ import annotations

from analysis.lab.train.devices import (
    DEVICE_ENV,
    DEVICES,
    PRECISIONS,
    SINGLE_CPU,
    Placement,
    barrier,
    check_batch,
    cpu_threads,
    default_threads,
    init_distributed,
    placement,
)
from analysis.lab.train.evaluate import eval_loss
from analysis.lab.train.exposure import exposure_table, recount_exposure
from analysis.lab.train.feed import CHECKPOINT_SECONDS, CHECKPOINT_SHARE, CheckpointClock
from analysis.lab.train.loop import run_folder, train
from analysis.lab.train.memory import micro_batches_for, train_memory
from analysis.lab.train.model import (
    BETAS,
    GRAD_CLIP,
    MIN_LR_FRAC,
    build_model,
    deterministic_algorithms,
    flops_per_token,
    llama_config,
    lm_loss,
    lr_schedule,
    make_optimizer,
    param_count,
    train_step,
)
from analysis.lab.train.order import (
    DataOrder,
    Injection,
    as_injections,
    base_block_order,
    build_order,
    check_injections,
    order_inputs,
    tokenize_stream,
    window_steps,
)
from analysis.lab.train.runs import (
    CODE_VERSION,
    RunResult,
    fork_steps,
    load_run,
    partial_path,
    run_key,
    run_path,
    standard_twin,
    tokenizer_fingerprint,
    wait_for_run,
)

__all__ = [
    "BETAS", "CHECKPOINT_SECONDS", "CHECKPOINT_SHARE", "CODE_VERSION", "DEVICES", "DEVICE_ENV",
    "GRAD_CLIP", "MIN_LR_FRAC", "PRECISIONS", "SINGLE_CPU", "CheckpointClock", "DataOrder", "Injection",
    "Placement", "RunResult", "as_injections", "barrier", "base_block_order", "build_model",
    "build_order", "check_batch", "check_injections", "cpu_threads", "default_threads",
    "deterministic_algorithms", "eval_loss", "exposure_table", "flops_per_token", "fork_steps",
    "init_distributed", "llama_config", "lm_loss", "load_run", "lr_schedule", "make_optimizer",
    "micro_batches_for", "order_inputs", "param_count", "partial_path", "placement", "recount_exposure",
    "run_folder", "run_key", "run_path", "standard_twin", "tokenize_stream", "tokenizer_fingerprint",
    "train", "train_memory", "train_step", "wait_for_run", "window_steps",
]

"""What a lab profile costs to train, computed from its configuration alone.

The lab page states every profile's budget from here, so the figures follow the
configuration. Per run:

* **parameters**: :func:`analysis.lab.train.param_count` (the tokenizer's
  vocabulary size is the profile's ``vocab_size``);
* **tokens** it is trained on, and **tokens trained** by its own training call:
  a standard run whose weights another run of the profile already has (same key)
  trains nothing, and an injection-range run forks from its standard twin at
  its window's first step, so it trains only the rest (``analysis.lab.train``);
* **FLOPs**: ``tokens trained × (6·N + 12·n_layer·context·d_model)``, the usual
  count of a decoder's forward and backward pass (six per parameter per token,
  plus attention over the context; Kaplan et al. 2020, Hoffmann et al. 2022);
* **hours** at an assumed sustained throughput (``tflops``, default
  :data:`ASSUMED_TFLOPS`). That is an assumption, not a measurement: models this
  small keep a GPU busy only part of the time. A run's ``DONE.json`` records
  its measured tokens per second, which replaces the assumption after one run;
* **peak GiB** of a training step on one GPU in bf16, the whole batch at once
  (:func:`analysis.lab.train.train_memory`, counted from the model's code), and
  the **micro-batches** a GPU of :data:`SMALL_GPU_BYTES` needs
  (:func:`analysis.lab.train.micro_batches_for`; ``train`` picks them by itself).

Epochs are a run's tokens over the corpus's training tokens, estimated from its
words (:func:`corpus_words`) at the tokens per word measured under a tokenizer of
the profile's vocabulary size (:func:`tokens_per_word`).
"""

from __future__ import annotations

import math

import pandas as pd

from analysis.lab.config import WINDOWS
from analysis.lab.ladder import profile_corpus
from analysis.lab.profiles import LabProfile, get_profile, unlabelled
from analysis.lab.train import flops_per_token, micro_batches_for, param_count, train_memory
from analysis.lab.train.memory import GiB

#: the machine the GPU profile is sized for
TARGET_GPU = "one 80 GB GPU (an A100 or H100)"
#: the memory of the smaller GPUs a reader may have (an A100 40GB), for the micro-batches column
SMALL_GPU_BYTES = 40e9
#: sustained bf16 throughput assumed for the GPU estimate, in TFLOP/s: about an eighth
#: of an 80 GB A100's dense bf16 peak (312), a third of what large models reach on it;
#: small models spend much of a step in kernel launches and memory traffic
ASSUMED_TFLOPS = 40.0
#: training tokens per whitespace word (an end-of-text token after each document
#: included), by the size of the tokenizer's vocabulary, measured on the lab's corpora
#: under their own tokenizers, on Lab v4's corpora: the default lab, 473,311 tokens from
#: 330,686 words at 4,096 entries (1.431); the gpu lab, 1.244 at 32,768 entries (Lab v3's
#: were 1.46 and 1.25). A larger vocabulary cuts words into fewer tokens.
TOKENS_PER_WORD = {4_096: 1.43, 32_768: 1.24}


def run_budget(profile: str | LabProfile, tflops: float = ASSUMED_TFLOPS) -> pd.DataFrame:
    """One row per run of ``profile``: ``run, family, params, tokens, tokens_trained,
    flops, hours, peak_gib, micro_batches_40gb`` (``hours`` at ``tflops`` TFLOP/s
    sustained; memory as the module says)."""
    if not tflops > 0:
        raise ValueError(f"tflops must be a positive number, got {tflops!r}")
    prof = get_profile(profile)
    seen: set = set()
    rows = []
    for run in sorted(prof.runs, key=lambda r: r.inject):  # standard runs train first, as in build_lab
        key = unlabelled(run)
        if key in seen:
            trained = 0
        else:
            seen.add(key)
            lo = WINDOWS[run.window or "all"][0] if run.inject else 0.0
            # a range run forks from its twin at its window's first step and trains the rest
            trained = (run.steps - math.ceil(lo * run.steps)) * run.batch_size * run.model.context
        flops = trained * flops_per_token(run, prof.vocab_size)
        peak = train_memory(run.model, prof.vocab_size, run.batch_size, "bf16")["total"]
        rows.append({"run": run.name, "family": run.family, "params": param_count(run.model, prof.vocab_size),
                     "tokens": run.steps * run.batch_size * run.model.context, "tokens_trained": trained,
                     "flops": flops, "hours": flops / (tflops * 1e12) / 3600, "peak_gib": peak / GiB,
                     "micro_batches_40gb": micro_batches_for(run, prof.vocab_size, SMALL_GPU_BYTES)})
    order = {r.name: i for i, r in enumerate(prof.runs)}
    return pd.DataFrame(rows).sort_values("run", key=lambda s: s.map(order)).reset_index(drop=True)


def tokens_per_word(vocab_size: int) -> float:
    """Training tokens per word under a tokenizer of ``vocab_size`` entries: the value
    measured at that size (:data:`TOKENS_PER_WORD`), else at the largest measured size
    below it (a larger vocabulary gives fewer tokens per word, so the corpus's tokens
    are then overestimated and its epochs underestimated), else at the smallest."""
    sizes = sorted(TOKENS_PER_WORD)
    below = [v for v in sizes if v <= vocab_size]
    return TOKENS_PER_WORD[below[-1] if below else sizes[0]]


def corpus_words(profile: str | LabProfile) -> int:
    """Whitespace words of the profile's training texts (the corpus is built, or read
    from the artifact cache; nothing is trained)."""
    return sum(len(t.split()) for t in profile_corpus(profile).training_texts())


def summary(profile: str | LabProfile, tflops: float = ASSUMED_TFLOPS) -> dict:
    """The profile's budget in a few numbers: ``runs``, ``min_params``,
    ``max_params``, ``param_span`` (largest over smallest ladder model),
    ``tokens`` (trained, all runs), ``flops``, ``hours`` (at ``tflops``),
    ``ladder_epochs`` (a ladder run's tokens over the corpus's tokens, estimated from
    its words at :func:`tokens_per_word`), ``max_peak_gib`` (the largest run's step, whole
    batch, bf16) and ``max_micro_batches_40gb``."""
    table = run_budget(profile, tflops)
    ladder = table[table["family"].str.startswith("ladder")]
    prof = get_profile(profile)
    ladder_tokens = int(ladder["tokens"].max()) if len(ladder) else 0
    return {"runs": len(table), "min_params": int(ladder["params"].min()),
            "max_params": int(table["params"].max()),
            "param_span": float(ladder["params"].max() / ladder["params"].min()),
            "tokens": int(table["tokens_trained"].sum()), "flops": float(table["flops"].sum()),
            "hours": float(table["hours"].sum()), "tflops": tflops,
            "max_peak_gib": float(table["peak_gib"].max()),
            "max_micro_batches_40gb": int(table["micro_batches_40gb"].max()),
            "ladder_epochs": ladder_tokens / (corpus_words(prof) * tokens_per_word(prof.vocab_size))}

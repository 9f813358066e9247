"""Training the lab's models: data order, injected copies, exposure and the loop.

A run trains a Llama-style decoder from scratch on the lab corpus (on the CPU,
or on GPUs: see "Devices, precision and processes" below) and records exactly
what it saw. The data order is a pure function of the
corpus, the run's seed and the injected sequences:

* the training texts are tokenized once into one stream (``<|endoftext|>`` after
  every document) and cut into blocks of ``context`` tokens;
* the ``run.steps × run.batch_size`` rows take blocks in a seeded shuffled order,
  a new permutation each epoch;
* in an injected run each copy of each injected sequence gets a ``(step, row)``
  slot, drawn uniformly among the rows of its insertion window ``[lo·T, hi·T)``
  that still have room; that row becomes the sequence's tokens,
  ``<|endoftext|>``, then the first tokens of the block that would have been there.
  A row has room for ``run.copies_per_row`` copies (1 by default) of different
  sequences while their tokens and end-of-text markers fit in the context; the
  copies of a shared row follow each other in the order they were drawn
  (``part`` 0, 1, ...), before the block's first tokens.

The base block order comes from a random stream separate from the slot draws, so
a standard run (``run.inject=False``) sees the very same blocks at every
``(step, row)`` as the injected run with the same seed: it is that run's
counterfactual. The order (every block index and every inserted copy) is saved
with the checkpoint; :func:`exposure_table` reads the exposure of each injected
sequence off it and :func:`recount_exposure` checks it by brute force.

Each run is an ordinary ``transformers`` checkpoint in the artifact cache,
keyed by everything that determines its weights (not its name, family or tags),
and a finished run is loaded, never retrained. Its lifecycle in :func:`train`:

* **finished**: ``<run folder>/DONE.json`` exists; the run is loaded as it is;
* **in training**: every :data:`CHECKPOINT_EVERY` steps the model, the AdamW
  state, the losses so far and the next step go to ``<run folder>.partial/state.pt``
  (written to a temporary file, then renamed). A killed run resumes from there on
  the next call and ends bit-identical to an uninterrupted run: the data order is
  rebuilt from the config, and eager CPU training is deterministic (on the same
  machine and thread count, as every cached run assumes);
* **forks**: a standard run also saves its state at every step where an
  insertion window opens (``ceil(lo·T)`` for each window of :data:`WINDOWS`, 0
  excluded) into ``<run folder>/forks/step-<k>.pt``. An injected run sees exactly
  its standard twin's rows (same model, budget, schedule and seed; see
  :func:`standard_twin`) at every step before its first inserted copy, so when
  the twin is finished it starts from the twin's latest fork at or before that
  step instead of from step 0: an injection-range run of window ``q3`` trains
  only its second half, and ends bit-identical to the same run trained from scratch;
* **saving**: the checkpoint, tokenizer, curve, exposure table and order are
  written to ``<run folder>.tmp-<pid>``, which is renamed to the run folder (a
  killed run never looks finished); then the partial folder is removed.

``RunResult.resumed_from_step`` and ``forked_from_step`` (also in ``DONE.json``)
say where the training call that built a run started.

Devices, precision and processes (:func:`placement`):

* **device**: ``train(device=...)``, else ``$MEMBOOK_LAB_DEVICE`` (``cpu`` or
  ``cuda``), else CUDA when torch sees a GPU, else the CPU. On the CPU a run
  trains in fp32 as it always has. On CUDA the model and each batch go to the
  GPU (``cuda:<LOCAL_RANK>`` under torchrun) and the forward pass and loss run
  under ``torch.autocast("cuda", dtype=torch.bfloat16)`` where the GPU has native
  bf16 (fp32 otherwise); the master weights, their gradients and the AdamW state
  stay fp32, and no loss scaling is needed. CUDA kernels are not bit-deterministic,
  so on a GPU a resumed or forked run is close to, not bit-identical with, one
  trained from step 0;
* **processes**: launched by ``torchrun`` (``WORLD_SIZE`` > 1), every process
  joins the process group (``nccl`` on CUDA, ``gloo`` on the CPU) and wraps the
  model in ``DistributedDataParallel``. Each builds the same data order (a pure
  function of the config) and trains rows ``[rank·B/W, (rank+1)·B/W)`` of every
  step's batch of ``B`` rows, so the ``W`` processes together train exactly the
  single-process batch, and the data order and exposure table are the
  single-process ones. DDP averages the gradients before clipping and AdamW, so
  every process keeps the same weights; the curve's loss is the mean of the
  processes' batch means (every row has ``context - 1`` targets, so it is the
  mean over the whole batch). ``B`` must be divisible by ``W``. Only the first
  process (rank 0) writes partial checkpoints, forks and the run folder, and shows
  progress; the others wait at a barrier, then load the run it wrote. A resumed or
  forked run loads the same checkpoint in every process;
* **files**: checkpoints, forks and the run folder hold CPU fp32 tensors and are
  loaded with ``map_location="cpu"``; ``order.npz``, ``curve.parquet`` and the
  exposure table have one format on every device. ``DONE.json`` records the
  device, precision and number of processes;
* **keys**: a run trained on CUDA, in bf16 or by several processes rounds
  differently from a single CPU process, so :func:`run_key` adds ``device``,
  ``precision`` and ``world_size`` where they differ from ``cpu``, ``fp32`` and 1;
  the key of a single-process CPU run is unchanged. The lab's entry point
  ``python -m analysis.lab.build`` (:mod:`analysis.lab.build`) runs alone or under
  ``torchrun --standalone --nproc_per_node=N``.

Used by the lab page (``notebooks/lab.md``) and the chapters that train models.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
import warnings
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.core.cache import artifact_path, stable_hash
from analysis.lab.config import WINDOWS, LabConfigError, ModelConfig, RunConfig

#: bumped whenever a change alters what a run trains on or how; part of every run key
CODE_VERSION = 2
#: steps between two partial checkpoints of a run in training: about a minute on the
#: default profile's largest models (~1.2 s a step on 2 cores), 10-25 s on its small
#: ones; a checkpoint (12 bytes a parameter) takes well under a second to write
CHECKPOINT_EVERY = 50
#: betas of AdamW, and the floor of the cosine decay as a fraction of the peak lr
BETAS = (0.9, 0.95)
MIN_LR_FRAC = 0.1
GRAD_CLIP = 1.0
_DONE = "DONE.json"
#: a run's partial checkpoint (in ``<run folder>.partial/``) and fork checkpoints (``<run folder>/forks/``)
_STATE = "state.pt"
_FORKS = "forks"
#: marks the target of a row's last position, which has no next token
_IGNORE = -100


# -- injected sequences --------------------------------------------------------------


@dataclass(frozen=True)
class Injection:
    """One injected sequence as the trainer sees it."""

    seq_id: str
    task: str
    text: str
    copies: int
    window: str = "all"


def as_injections(injections: Iterable[Any] | pd.DataFrame | None) -> list[Injection]:
    """Normalise dicts, objects or data-frame rows with ``seq_id, task, text, copies, window``
    to :class:`Injection`, keeping their order.

    A missing window is ``"all"``. Raises :class:`LabConfigError` on a missing or
    duplicate ``seq_id``, an unknown window, a negative copy count or an empty text.
    """
    if isinstance(injections, pd.DataFrame):
        injections = injections.to_dict("records")
    out: list[Injection] = []
    seen: set[str] = set()
    for item in injections if injections is not None else ():
        get = item.get if isinstance(item, dict) else lambda k, d=None, it=item: getattr(it, k, d)
        if get("seq_id") is None:
            raise LabConfigError(f"an injection has no seq_id: {item!r:.80}")
        seq_id = str(get("seq_id"))
        task, text, copies = get("task", ""), get("text"), get("copies", 0)
        window = get("window", None) or "all"
        if seq_id in seen:
            raise LabConfigError(f"injection {seq_id!r} appears twice")
        seen.add(seq_id)
        if not isinstance(text, str) or not text:
            raise LabConfigError(f"injection {seq_id!r} has no text")
        if not isinstance(copies, (int, np.integer)) or isinstance(copies, bool) or copies < 0:
            raise LabConfigError(
                f"injection {seq_id!r}: copies must be a non-negative integer, got {copies!r}"
            )
        if window not in WINDOWS:
            raise LabConfigError(
                f"injection {seq_id!r}: window must be one of {sorted(WINDOWS)}, got {window!r}"
            )
        out.append(Injection(seq_id, str(task), text, int(copies), window))
    return out


def _window_steps(window: str, steps: int) -> tuple[int, int]:
    """First step and one past the last step of ``window`` in a run of ``steps`` steps."""
    lo, hi = WINDOWS[window]
    return math.ceil(lo * steps), math.ceil(hi * steps)


# -- tokens ------------------------------------------------------------------------------


def tokenize_stream(texts: Sequence[str], tokenizer) -> np.ndarray:
    """The training stream: every text's tokens followed by ``<|endoftext|>``, as int32."""
    eos = tokenizer.eos_token_id
    encs = tokenizer.backend_tokenizer.encode_batch(list(texts), add_special_tokens=False)
    lengths = np.fromiter((len(e.ids) + 1 for e in encs), dtype=np.int64, count=len(encs))
    stream = np.empty(int(lengths.sum()), dtype=np.int32)
    pos = 0
    for e, n in zip(encs, lengths):
        stream[pos : pos + n - 1] = e.ids
        stream[pos + n - 1] = eos
        pos += n
    return stream


def _injection_tokens(injections: Sequence[Injection], tokenizer) -> list[np.ndarray]:
    encs = tokenizer.backend_tokenizer.encode_batch([i.text for i in injections], add_special_tokens=False)
    return [np.asarray(e.ids, dtype=np.int64) for e in encs]


def _blocks(stream: np.ndarray, context: int) -> np.ndarray:
    n_blocks = len(stream) // context
    if n_blocks < 1:
        raise LabConfigError(
            f"the training stream has {len(stream)} tokens, fewer than one context ({context})"
        )
    return stream[: n_blocks * context].reshape(n_blocks, context)


# -- data order ----------------------------------------------------------------------------


@dataclass
class DataOrder:
    """What a run trains on at every ``(step, row)``.

    Attributes
    ----------
    blocks
        ``(steps, batch_size)`` index of the base block at each slot; at an
        injected slot, the block whose first tokens follow the inserted copy.
    insertions
        One row per inserted copy: ``seq_id, step, row, part``, sorted by slot;
        ``part`` is the copy's place among the copies that share its row.
    context, n_tokens, seed
        Block length, length of the token stream it was cut from, and the run seed.
    inject, window
        Whether the run injects, and its window override (``None``: each
        sequence's own window).
    """

    blocks: np.ndarray
    insertions: pd.DataFrame
    context: int
    n_tokens: int
    seed: int
    inject: bool
    window: str | None = None

    @property
    def steps(self) -> int:
        return self.blocks.shape[0]

    @property
    def batch_size(self) -> int:
        return self.blocks.shape[1]

    def save(self, path: str | os.PathLike) -> None:
        """Write to ``path`` (an ``.npz``)."""
        meta = dict(context=self.context, n_tokens=self.n_tokens, seed=self.seed, inject=self.inject,
                    window=self.window)
        ins = self.insertions
        np.savez_compressed(
            path, blocks=self.blocks, ins_step=ins.step.to_numpy(np.int64),
            ins_row=ins.row.to_numpy(np.int64), ins_part=ins.part.to_numpy(np.int64),
            ins_seq_id=ins.seq_id.to_numpy(str),
            meta=np.array(json.dumps(meta)),
        )

    @classmethod
    def load(cls, path: str | os.PathLike) -> DataOrder:
        """Read an order written by :meth:`save` (a run folder's ``order.npz``)."""
        with np.load(path) as z:
            meta = json.loads(str(z["meta"]))
            # orders written before rows were shared have one copy a row: part 0
            part = z["ins_part"] if "ins_part" in z else np.zeros(len(z["ins_step"]), np.int64)
            ins = pd.DataFrame({"seq_id": z["ins_seq_id"].astype(str).astype(object),
                                "step": z["ins_step"], "row": z["ins_row"], "part": part})
            return cls(blocks=z["blocks"], insertions=ins, **meta)


def base_block_order(n_blocks: int, steps: int, batch_size: int, seed: int) -> np.ndarray:
    """``(steps, batch_size)`` block indices: seeded permutations of the blocks, one per epoch.

    Depends on nothing about injections, which is what makes a standard run the
    counterfactual of an injected one.
    """
    rng = np.random.default_rng([seed, 0])
    need = steps * batch_size
    perms = [rng.permutation(n_blocks) for _ in range(-(-need // n_blocks))]
    return np.concatenate(perms)[:need].reshape(steps, batch_size).astype(np.int64)


def check_injections(run: RunConfig, injections: Iterable[Any], tokenizer) -> tuple[list[Injection], list]:
    """Validate an injected run's sequences before any work; return them and their tokens.

    The run's window, if set, replaces every sequence's window. Raises
    :class:`LabConfigError` naming the sequence when it is longer than
    ``context - 1`` tokens (it and its ``<|endoftext|>`` must fit in one row)
    or its window holds fewer ``(step, row)`` slots than its copies.
    """
    injs = as_injections(injections)
    if run.window is not None:
        injs = [Injection(i.seq_id, i.task, i.text, i.copies, run.window) for i in injs]
    if not run.inject:
        return injs, []
    tokens = _injection_tokens(injs, tokenizer)
    ctx, steps, batch = run.model.context, run.steps, run.batch_size
    for inj, tok in zip(injs, tokens):
        if inj.copies and len(tok) > ctx - 1:
            raise LabConfigError(
                f"injection {inj.seq_id!r} is {len(tok)} tokens, longer than context - 1 = {ctx - 1}"
            )
        lo, hi = _window_steps(inj.window, steps)
        if inj.copies > (hi - lo) * batch:
            raise LabConfigError(
                f"injection {inj.seq_id!r}: window {inj.window!r} has {(hi - lo) * batch} slots "
                f"({hi - lo} steps x {batch} rows of T={steps}), fewer than its {inj.copies} copies"
            )
    return injs, tokens


def build_order(n_tokens: int, run: RunConfig, injections: Iterable[Any] = (), tokenizer=None) -> DataOrder:
    """The data order of ``run`` on a stream of ``n_tokens`` tokens.

    Parameters
    ----------
    n_tokens
        Length of the tokenized training stream (:func:`tokenize_stream`).
    run
        The run; its seed, steps, batch size and context fix the order.
    injections
        The injected sequences (dicts or objects); used only when ``run.inject``.
    tokenizer
        Needed when ``run.inject`` to check each sequence fits in a row.

    Raises
    ------
    LabConfigError
        An injected sequence too long for a row, or windows too small for the
        copies asked (alone or after the slots taken by earlier sequences).
    """
    injs, tokens = check_injections(run, injections, tokenizer) if run.inject else ([], [])
    ctx, steps, batch = run.model.context, run.steps, run.batch_size
    if n_tokens < ctx:
        raise LabConfigError(f"the training stream has {n_tokens} tokens, fewer than one context ({ctx})")
    blocks = base_block_order(n_tokens // ctx, steps, batch, run.seed)
    # slots come from their own random stream, so the base order does not depend on them
    rng = np.random.default_rng([run.seed, 1])
    # copies in each row so far, and the tokens they take (with their end-of-text markers)
    count = np.zeros(steps * batch, dtype=np.int64)
    used = np.zeros(steps * batch, dtype=np.int64)
    seq_ids, slots, parts = [], [], []
    for inj, tok in zip(injs, tokens):
        if inj.copies == 0:
            continue
        lo, hi = _window_steps(inj.window, steps)
        room = (count[lo * batch : hi * batch] < run.copies_per_row) & (
            used[lo * batch : hi * batch] + len(tok) + 1 <= ctx)
        free = np.flatnonzero(room) + lo * batch
        if len(free) < inj.copies:
            raise LabConfigError(
                f"injection {inj.seq_id!r}: only {len(free)} rows with room left in window {inj.window!r} "
                f"after earlier sequences (copies_per_row={run.copies_per_row}), fewer than its "
                f"{inj.copies} copies"
            )
        # distinct rows: two copies of one sequence never share a row
        chosen = rng.choice(free, size=inj.copies, replace=False)
        parts.append(count[chosen].copy())
        count[chosen] += 1
        used[chosen] += len(tok) + 1
        slots.append(chosen)
        seq_ids += [inj.seq_id] * inj.copies
    slot = np.concatenate(slots) if slots else np.zeros(0, np.int64)
    part = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    ins = pd.DataFrame(
        {"seq_id": pd.Series(seq_ids, dtype=object), "step": slot // batch, "row": slot % batch,
         "part": part}
    )
    ins = ins.sort_values(["step", "row", "part"], kind="stable").reset_index(drop=True)
    return DataOrder(blocks, ins, ctx, n_tokens, run.seed, run.inject, run.window)


class _Rows:
    """Materialises the input rows of any range of steps from a data order.

    Training and :func:`recount_exposure` both read their rows from here, so
    the recount checks the very inputs the model was given.
    """

    def __init__(self, order: DataOrder, blocks: np.ndarray, injections: Sequence[Injection],
                 tokens: Sequence[np.ndarray], eos: int):
        self.order, self.blocks, self.eos = order, blocks, eos
        index = {inj.seq_id: k for k, inj in enumerate(injections)}
        ins = order.insertions
        missing = sorted(set(ins.seq_id) - set(index))
        if missing:
            raise LabConfigError(f"the data order inserts sequences not given: {missing[:5]}")
        # sorted by (step, row, part): the copies that share a row are adjacent, in order
        self.slot = (ins.step.to_numpy(np.int64) * order.batch_size + ins.row.to_numpy(np.int64))
        self.seq = np.array([index[s] for s in ins.seq_id], dtype=np.int64)
        self.injections, self.tokens = list(injections), list(tokens)

    def fill(self, start: int, stop: int, out: np.ndarray) -> np.ndarray:
        """Write the rows of steps ``[start, stop)`` into ``out`` (``(n_rows, context)``)."""
        batch, ctx = self.order.batch_size, self.order.context
        idx = self.order.blocks[start:stop].reshape(-1)
        out[:] = self.blocks[idx]
        a, b = np.searchsorted(self.slot, [start * batch, stop * batch])
        previous, at = -1, 0  # the row being filled, and where its next copy starts
        for slot, k in zip(self.slot[a:b], self.seq[a:b]):
            r, tok = slot - start * batch, self.tokens[k]
            at = at if slot == previous else 0
            n = len(tok)
            # the copy, <|endoftext|>, then the block's first tokens (a next copy in the row overwrites them)
            out[r, at : at + n] = tok
            out[r, at + n] = self.eos
            at += n + 1
            out[r, at:] = self.blocks[idx[r], : ctx - at]
            previous = slot
        return out


def order_inputs(order: DataOrder, training_texts: Sequence[str], injections: Iterable[Any], tokenizer,
                 start: int = 0, stop: int | None = None) -> np.ndarray:
    """The input rows of steps ``[start, stop)`` as ``(steps, batch_size, context)`` token ids.

    Rebuilt from the corpus and the logged order exactly as training built them.
    """
    stop = order.steps if stop is None else stop
    rows = _rows_from(order, training_texts, injections, tokenizer)
    out = np.empty(((stop - start) * order.batch_size, order.context), dtype=np.int64)
    return rows.fill(start, stop, out).reshape(stop - start, order.batch_size, order.context)


def _rows_from(order: DataOrder, training_texts: Sequence[str], injections: Iterable[Any],
               tokenizer) -> _Rows:
    injs = as_injections(injections)
    if order.window is not None:
        injs = [Injection(i.seq_id, i.task, i.text, i.copies, order.window) for i in injs]
    stream = tokenize_stream(training_texts, tokenizer)
    if len(stream) != order.n_tokens:
        raise LabConfigError(
            f"the training texts give {len(stream)} tokens, the run's order was built on {order.n_tokens}"
        )
    return _Rows(order, _blocks(stream, order.context), injs, _injection_tokens(injs, tokenizer),
                 tokenizer.eos_token_id)


def exposure_table(order: DataOrder, injections: Iterable[Any], T: int | None = None) -> pd.DataFrame:
    """Exposure of each injected sequence, read off the logged data order.

    Returns
    -------
    DataFrame
        One row per sequence: ``seq_id, task, copies_requested, window,
        copies_seen, first_step, last_step, T``. ``copies_requested`` is what
        this run was asked to insert (0 in a standard run); ``window`` is the
        effective window (the run's override if set); ``first_step`` and
        ``last_step`` are -1 for a sequence never seen.
    """
    injs = as_injections(injections)
    T = order.steps if T is None else T
    g = order.insertions.groupby("seq_id").step.agg(["size", "min", "max"])
    rows = []
    for inj in injs:
        seen = inj.seq_id in g.index
        rows.append({
            "seq_id": inj.seq_id, "task": inj.task,
            "copies_requested": inj.copies if order.inject else 0,
            "window": order.window or inj.window,
            "copies_seen": int(g.at[inj.seq_id, "size"]) if seen else 0,
            "first_step": int(g.at[inj.seq_id, "min"]) if seen else -1,
            "last_step": int(g.at[inj.seq_id, "max"]) if seen else -1,
            "T": T,
        })
    return _exposure_frame(rows)


def _exposure_frame(rows: list[dict]) -> pd.DataFrame:
    cols = ["seq_id", "task", "copies_requested", "window", "copies_seen", "first_step", "last_step", "T"]
    frame = pd.DataFrame(rows, columns=cols)
    for c in ("copies_requested", "copies_seen", "first_step", "last_step", "T"):
        frame[c] = frame[c].astype(np.int64)
    return frame


def recount_exposure(order: DataOrder, training_texts: Sequence[str], injections: Iterable[Any],
                     tokenizer, chunk_steps: int = 256) -> pd.DataFrame:
    """Exposure recounted by brute force from the inputs themselves.

    Re-tokenizes the corpus, re-materialises every ``(step, row)`` input from
    the logged order, and counts every occurrence of each sequence's tokens
    anywhere in any row (an occurrence the log does not know of, say the same
    text in the corpus, is counted too). Same columns as :func:`exposure_table`,
    which it should equal.
    """
    rows = _rows_from(order, training_texts, injections, tokenizer)
    injs, tokens = rows.injections, rows.tokens
    batch, ctx = order.batch_size, order.context
    steps_seen: list[list[np.ndarray]] = [[] for _ in injs]
    buf = np.empty((chunk_steps * batch, ctx), dtype=np.int64)
    for start in range(0, order.steps, chunk_steps):
        stop = min(start + chunk_steps, order.steps)
        x = rows.fill(start, stop, buf[: (stop - start) * batch])
        # positions of each distinct first token, found once per chunk and shared by sequences
        firsts: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for k, tok in enumerate(tokens):
            n = len(tok)
            if n > ctx:
                continue
            if int(tok[0]) not in firsts:
                firsts[int(tok[0])] = np.nonzero(x == tok[0])
            r, p = firsts[int(tok[0])]
            fits = p <= ctx - n
            r, p = r[fits], p[fits]
            for j in range(1, n):
                keep = x[r, p + j] == tok[j]
                r, p = r[keep], p[keep]
            steps_seen[k].append(start + r // batch)
    out = []
    for inj, found in zip(injs, steps_seen):
        s = np.concatenate(found) if found else np.zeros(0, np.int64)
        out.append({
            "seq_id": inj.seq_id, "task": inj.task, "copies_requested": inj.copies if order.inject else 0,
            "window": inj.window, "copies_seen": len(s),
            "first_step": int(s.min()) if len(s) else -1, "last_step": int(s.max()) if len(s) else -1,
            "T": order.steps,
        })
    return _exposure_frame(out)


# -- model and optimizer ----------------------------------------------------------------


def param_count(model_config: ModelConfig, vocab_size: int) -> int:
    """Parameters of the lab's ``LlamaForCausalLM`` (tied embeddings, no biases).

    Embeddings ``V·d``; per layer the q, k, v, o projections (``4·d²``, as many
    key/value heads as heads), the gated MLP (``3·d·d_ff``) and two RMSNorm
    weights (``2·d``); a final RMSNorm (``d``). The output layer is the embedding.
    """
    d, ff, n = model_config.d_model, model_config.d_ff, model_config.n_layer
    return vocab_size * d + n * (4 * d * d + 3 * d * ff + 2 * d) + d


def llama_config(model_config: ModelConfig, vocab_size: int, eos_token_id: int):
    """The ``LlamaConfig`` of ``model_config``; ``<|endoftext|>`` is bos, eos and pad."""
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=model_config.d_model,
        intermediate_size=model_config.d_ff,
        num_hidden_layers=model_config.n_layer,
        num_attention_heads=model_config.n_head,
        num_key_value_heads=model_config.n_head,
        max_position_embeddings=model_config.context,
        tie_word_embeddings=True,
        bos_token_id=eos_token_id, eos_token_id=eos_token_id, pad_token_id=eos_token_id,
        attn_implementation="sdpa",
    )


def build_model(model_config: ModelConfig, vocab_size: int, eos_token_id: int, seed: int = 0):
    """A freshly initialised fp32 ``LlamaForCausalLM``; ``torch.manual_seed(seed)`` first."""
    import torch
    from transformers import LlamaForCausalLM

    torch.manual_seed(seed)
    return LlamaForCausalLM(llama_config(model_config, vocab_size, eos_token_id)).float()


def make_optimizer(model, run: RunConfig):
    """AdamW (betas 0.9/0.95) with ``run.weight_decay`` on matrices and none on norm weights."""
    import torch

    decay = [p for p in model.parameters() if p.ndim >= 2]
    rest = [p for p in model.parameters() if p.ndim < 2]
    groups = [{"params": decay, "weight_decay": run.weight_decay}, {"params": rest, "weight_decay": 0.0}]
    # the fused kernel runs the whole update in one C++ call per group, not a Python loop per tensor
    return torch.optim.AdamW(groups, lr=run.lr, betas=BETAS, eps=1e-8, fused=True)


def lr_schedule(run: RunConfig) -> np.ndarray:
    """Learning rate at each step: linear warmup over ``warmup_frac`` of the steps, then
    cosine decay from ``run.lr`` to ``MIN_LR_FRAC · run.lr`` at the last step."""
    T = run.steps
    warm = int(round(run.warmup_frac * T))
    s = np.arange(T, dtype=np.float64)
    progress = np.clip((s - warm) / max(1, T - warm - 1), 0.0, 1.0)
    lr = run.lr * (MIN_LR_FRAC + (1 - MIN_LR_FRAC) * 0.5 * (1 + np.cos(np.pi * progress)))
    if warm:
        lr[:warm] = run.lr * (s[:warm] + 1) / warm
    return lr


def lm_loss(model, input_ids, targets):
    """Mean next-token cross-entropy of a batch.

    ``targets`` is ``input_ids`` shifted left by one, with ``-100`` at the last
    position: the loss is on every token that has a next token in its row.
    """
    import torch.nn.functional as F

    logits = model(input_ids=input_ids, use_cache=False).logits
    return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1), ignore_index=_IGNORE)


def train_step(model, optimizer, input_ids, targets, lr: float, loss_fn=lm_loss):
    """One optimizer step on a batch; returns its mean token loss (a detached tensor).

    Sets the learning rate, takes :func:`lm_loss` (or ``loss_fn``, e.g. its
    ``torch.compile``), clips the gradient norm to ``GRAD_CLIP`` and steps AdamW.
    """
    import torch

    for group in optimizer.param_groups:
        group["lr"] = lr
    loss = loss_fn(model, input_ids, targets)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), GRAD_CLIP)
    optimizer.step()
    return loss.detach()


@contextmanager
def deterministic_algorithms(enabled: bool = True) -> Iterator[None]:
    """Within the block, ``torch.use_deterministic_algorithms(enabled)``; restored after.

    Eager CPU training is deterministic as it is; compiled kernels are not
    (scatter-adds in the embedding backward) unless this is on.
    """
    import torch

    was = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(enabled)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(was, warn_only=warn_only)


def default_threads() -> int:
    """CPU cores available to this process."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


@contextmanager
def cpu_threads(threads: int | None = None) -> Iterator[None]:
    """Within the block, torch uses ``threads`` CPU threads (default: every core available)."""
    import torch

    was = torch.get_num_threads()
    torch.set_num_threads(threads or default_threads())
    try:
        yield
    finally:
        torch.set_num_threads(was)


# -- devices and processes --------------------------------------------------------------------

#: the devices a run trains on: ``train(device=...)``, else ``$MEMBOOK_LAB_DEVICE``, else
#: ``cuda`` when torch sees a GPU, else ``cpu``
DEVICES = ("cpu", "cuda")
DEVICE_ENV = "MEMBOOK_LAB_DEVICE"
PRECISIONS = ("fp32", "bf16")
#: how every run cached before devices existed was trained: a run key names only what differs
SINGLE_CPU = {"device": "cpu", "precision": "fp32", "world_size": 1}


@dataclass(frozen=True)
class Placement:
    """Where this process trains: the device, the precision of the forward pass and loss,
    and its place among torchrun's processes (``world_size`` 1, ``rank`` 0 without torchrun)."""

    device: str = "cpu"
    precision: str = "fp32"
    world_size: int = 1
    rank: int = 0
    local_rank: int = 0
    local_world_size: int = 1

    @property
    def torch_device(self) -> str:
        """``cpu``, or ``cuda:<local rank>``: one GPU per process."""
        return f"cuda:{self.local_rank}" if self.device == "cuda" else "cpu"

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    def key(self) -> dict:
        """The run-key fields of this placement: those that differ from a single fp32 CPU process."""
        here = {"device": self.device, "precision": self.precision, "world_size": self.world_size}
        return {k: v for k, v in here.items() if v != SINGLE_CPU[k]}

    def threads(self) -> int:
        """Default CPU threads of this process: the cores, shared by the processes on this machine."""
        return max(1, default_threads() // self.local_world_size)


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise LabConfigError(f"${name} must be an integer (torchrun sets it), got {raw!r}") from None


def placement(device: str | None = None) -> Placement:
    """Where this process trains.

    ``device`` (``"cpu"`` or ``"cuda"``), else ``$MEMBOOK_LAB_DEVICE``, else ``cuda``
    when ``torch.cuda.is_available()``, else ``cpu``. On CUDA the forward pass runs in
    bf16 autocast when the GPU supports it (fp32 otherwise); on the CPU in fp32.
    torchrun's ``WORLD_SIZE``, ``RANK``, ``LOCAL_RANK`` and ``LOCAL_WORLD_SIZE`` give
    the processes; a CUDA process trains on ``cuda:<LOCAL_RANK>``.

    Raises
    ------
    LabConfigError
        A device other than ``cpu`` or ``cuda``, ``cuda`` without a GPU, or a
        malformed torchrun environment.
    """
    import torch

    source = "device"
    if device is None and os.environ.get(DEVICE_ENV, "").strip():
        device, source = os.environ[DEVICE_ENV].strip().lower(), f"${DEVICE_ENV}"
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device not in DEVICES:
        raise LabConfigError(f"{source} must be one of {', '.join(DEVICES)}; got {device!r}")
    world, rank = _env_int("WORLD_SIZE", 1), _env_int("RANK", 0)
    local, local_world = _env_int("LOCAL_RANK", 0), _env_int("LOCAL_WORLD_SIZE", world)
    if world < 1 or not 0 <= rank < world or not 0 <= local < max(local_world, 1):
        raise LabConfigError(f"a malformed torchrun environment: WORLD_SIZE={world}, RANK={rank}, "
                             f"LOCAL_RANK={local}, LOCAL_WORLD_SIZE={local_world}")
    precision = "fp32"
    if device == "cuda":
        if not torch.cuda.is_available() or local >= torch.cuda.device_count():
            raise LabConfigError(f"{source} is 'cuda', but torch {torch.__version__} sees "
                                 f"{torch.cuda.device_count()} CUDA devices (this is LOCAL_RANK {local})")
        # native bf16 only (compute capability 8.0 on): emulated bf16 would be slower than fp32
        precision = "bf16" if torch.cuda.is_bf16_supported(including_emulation=False) else "fp32"
    return Placement(device, precision, world, rank, local, max(local_world, 1))


def check_batch(run: RunConfig, place: Placement) -> None:
    """Raise :class:`LabConfigError` unless ``run``'s batch splits evenly over the processes."""
    if run.batch_size % place.world_size:
        raise LabConfigError(
            f"run {run.name!r}: batch_size {run.batch_size} does not split evenly over "
            f"{place.world_size} processes (WORLD_SIZE); every process trains an equal share of each "
            f"batch, so launch a number of processes that divides {run.batch_size}")


def init_distributed(place: Placement) -> None:
    """Join torchrun's process group (``nccl`` on CUDA, ``gloo`` on the CPU), unless this
    process is alone or has joined already."""
    import torch
    import torch.distributed as dist

    if not place.distributed:
        return
    if dist.is_initialized():
        if dist.get_world_size() != place.world_size:
            raise LabConfigError(f"the process group has {dist.get_world_size()} processes, "
                                 f"WORLD_SIZE says {place.world_size}")
        return
    if place.device == "cuda":
        torch.cuda.set_device(place.local_rank)
    dist.init_process_group("nccl" if place.device == "cuda" else "gloo")


def barrier(place: Placement) -> None:
    """Wait for every process of the group (nothing to wait for when alone)."""
    import torch.distributed as dist

    if place.distributed:
        dist.barrier(device_ids=[place.local_rank] if place.device == "cuda" else None)


def _mean_over_processes(value, place: Placement):
    """The mean of a per-process scalar tensor over the processes (itself when alone)."""
    import torch.distributed as dist

    if not place.distributed:
        return value
    dist.all_reduce(value, op=dist.ReduceOp.SUM)  # gloo has no AVG
    return value / place.world_size


def _bf16_autocast(loss_fn):
    """``loss_fn`` with its forward pass and loss under CUDA bf16 autocast (the backward
    runs outside it, as autocast wants; the weights and their gradients stay fp32)."""
    import torch

    def loss_bf16(model, input_ids, targets):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return loss_fn(model, input_ids, targets)

    return loss_bf16


def _to_cpu(obj):
    """``obj`` (a state dict, nested) with every tensor on the CPU: checkpoints are the
    same files whatever device trained them."""
    import torch

    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: _to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_cpu(v) for v in obj)
    return obj


# -- runs -----------------------------------------------------------------------------------


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
            compile: bool = False, device: str = "cpu", precision: str = "fp32", world_size: int = 1) -> dict:
    """Everything that determines a run's weights: the artifact key of its folder.

    A compiled run's kernels round differently, so ``compile`` is part of the key.
    So do a GPU's kernels, bf16 autocast and a batch split over several processes:
    ``device``, ``precision`` and ``world_size`` (:class:`Placement`) join the key
    only where they differ from a single fp32 CPU process (:data:`SINGLE_CPU`), so the
    key of such a run is what it was before the lab trained anywhere else.
    """
    if device not in DEVICES or precision not in PRECISIONS:
        raise LabConfigError(f"device must be one of {', '.join(DEVICES)} and precision one of "
                             f"{', '.join(PRECISIONS)}; got {device!r}, {precision!r}")
    _positive_int("world_size", world_size)
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
                if k not in ("name", "family", "tags") and not (k == "copies_per_row" and v == 1)},
        "injections": [[i.seq_id, i.text, i.copies, i.window] for i in injs] if run.inject else [],
        "compile": bool(compile),
        "code": CODE_VERSION,
    }
    key.update({k: v for k, v in placed.items() if v != SINGLE_CPU[k]})
    return key


def _positive_int(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise LabConfigError(f"{name} must be a positive integer, got {value!r}")


def run_path(run: RunConfig, injections: Iterable[Any], tokenizer, corpus_key: str, compile: bool = False,
             device: str = "cpu", precision: str = "fp32", world_size: int = 1) -> Path:
    """The artifact folder of a run (it need not exist yet); ``device``, ``precision`` and
    ``world_size`` as in :func:`run_key` (:meth:`Placement.key` gives them for this process)."""
    return artifact_path("lab-runs", run_key(run, injections, tokenizer, corpus_key, compile,
                                             device=device, precision=precision, world_size=world_size))


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
    return sorted({lo for lo, _ in (_window_steps(w, steps) for w in WINDOWS) if 0 < lo < steps})


def _save_state(file: Path, model, optimizer, losses, step: int, key_hash: str, forked_from: int) -> None:
    """Write the training state before ``step`` (weights, AdamW state, the losses of
    the steps before) to ``file``: to a temporary file, then renamed over it."""
    import torch

    file.parent.mkdir(parents=True, exist_ok=True)
    tmp = file.with_name(f"{file.name}.tmp-{os.getpid()}")
    # every tensor on the CPU: the same file whatever device trained; the RNG state is the CPU's
    torch.save({"key": key_hash, "step": step, "forked_from_step": forked_from,
                "model": _to_cpu(model.state_dict()), "optimizer": _to_cpu(optimizer.state_dict()),
                "losses": losses[:step].cpu().clone(), "rng": torch.get_rng_state()}, tmp)
    os.replace(tmp, file)


def _load_state(file: Path, key_hash: str) -> dict | None:
    """The state :func:`_save_state` wrote to ``file`` for the run keyed ``key_hash``;
    None when there is none, it is another run's, or it cannot be read."""
    import torch

    if not file.exists():
        return None
    try:
        state = torch.load(file, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 - an unreadable checkpoint only costs a retrain
        warnings.warn(f"ignoring the unreadable checkpoint {file}: {err}", stacklevel=2)
        return None
    return state if isinstance(state, dict) and state.get("key") == key_hash else None


def _twin_fork(run: RunConfig, order: DataOrder, tokenizer, corpus_key: str, compile: bool,
               place: Placement = Placement()) -> dict | None:
    """The state of ``run``'s finished standard twin at its latest fork at or before
    ``run``'s first inserted copy (the last step up to which both saw the same rows),
    or None when the twin is not finished or saved no such fork.

    The twin's key guarantees the same corpus, model, schedule and seed, and the same
    device, precision and processes; its logged order is checked too, block by block,
    up to the fork.
    """
    twin_key = run_key(standard_twin(run), [], tokenizer, corpus_key, compile, **place.key())
    twin = artifact_path("lab-runs", twin_key)
    if not (twin / _DONE).exists():
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
        state = _load_state(twin / _FORKS / f"step-{k}.pt", stable_hash(twin_key))
        if state is not None and state["step"] == k:
            return state
    return None


def _link_or_copy(src: Path, dst: Path) -> None:
    """Hard-link the files of folder ``src`` into a new folder ``dst`` (copy where links fail)."""
    dst.mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        if f.is_file() and ".tmp-" not in f.name:
            try:
                os.link(f, dst / f.name)
            except OSError:
                shutil.copy2(f, dst / f.name)


def train(run: RunConfig, training_texts: Sequence[str], injections: Iterable[Any], tokenizer,
          corpus_key: str, progress: bool = True, threads: int | None = None,
          compile: bool = False, fork: bool = True, checkpoint_every: int | None = None,
          device: str | None = None) -> RunResult:
    """Train ``run`` (or load it when already trained) and return its result.

    A run killed in training resumes from its partial checkpoint; an injected run
    starts from its finished standard twin's fork when it has one; a standard run
    saves those forks (see the module docstring). Either way the result is
    bit-identical to one uninterrupted run from step 0 (on the CPU).

    Under torchrun every process calls this with the same arguments: each trains its
    share of every batch, and the first writes the run (see the module docstring).

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
        Steps between partial checkpoints (default :data:`CHECKPOINT_EVERY`).
    device
        ``"cpu"`` or ``"cuda"``; default ``$MEMBOOK_LAB_DEVICE``, else ``cuda`` when
        torch sees a GPU, else ``cpu`` (:func:`placement`). A run trained on CUDA, in
        bf16 or by several processes is a separate cache entry (:func:`run_key`).

    Raises
    ------
    LabConfigError
        A bad injection (too long, too many copies for its window), a bad device, or
        a batch that does not split evenly over torchrun's processes, found before training.
    """
    import torch

    place = placement(device)
    check_batch(run, place)
    injs, inj_tokens = check_injections(run, injections, tokenizer)
    path = run_path(run, injs, tokenizer, corpus_key, compile, **place.key())
    partial = partial_path(path)
    first = place.rank == 0  # the process that writes checkpoints and the run folder
    if (path / _DONE).exists():
        if partial.exists() and first:  # left by a call killed once its run folder was in place
            shutil.rmtree(partial, ignore_errors=True)
        return _load_result(path, injs)

    t0 = time.perf_counter()
    init_distributed(place)
    stream = tokenize_stream(training_texts, tokenizer)
    blocks = _blocks(stream, run.model.context)
    # every process builds the whole order (a pure function of the config) and trains its rows of it
    order = build_order(len(stream), run, injs, tokenizer)
    rows = _Rows(order, blocks, injs, inj_tokens, tokenizer.eos_token_id)
    lrs = lr_schedule(run)
    T, B, ctx = run.steps, run.batch_size, run.model.context
    key = run_key(run, injs, tokenizer, corpus_key, compile, **place.key())
    key_hash = stable_hash(key)
    every = CHECKPOINT_EVERY if checkpoint_every is None else checkpoint_every
    if every < 1:
        raise LabConfigError(f"checkpoint_every must be a positive integer, got {every!r}")
    forks_at = set(fork_steps(T)) if fork and not run.inject and first else set()
    n_threads = threads or place.threads()
    dev = torch.device(place.torch_device)
    # this process's rows of every batch
    lo, hi = place.rank * B // place.world_size, (place.rank + 1) * B // place.world_size

    with cpu_threads(n_threads), deterministic_algorithms() if compile else nullcontext():
        model = build_model(run.model, len(tokenizer), tokenizer.eos_token_id, run.seed)
        model.to(dev)  # fp32 master weights, and fp32 AdamW state, on every device
        model.train()
        optimizer = make_optimizer(model, run)
        losses = torch.empty(T, device=dev)
        # start from the further of the run's own partial checkpoint and its twin's fork
        # (every process loads the same state)
        start = resumed_from = forked_from = 0
        state = _load_state(partial / _STATE, key_hash)
        twin = _twin_fork(run, order, tokenizer, corpus_key, compile, place) if fork and run.inject else None
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
        del state, twin
        net = model
        if place.distributed:
            from torch.nn.parallel import DistributedDataParallel

            # gradients averaged over the processes in the backward pass, before clipping and
            # AdamW, so every process keeps the same weights
            ids = [place.local_rank] if dev.type == "cuda" else None
            net = DistributedDataParallel(model, device_ids=ids)
        loss_fn = torch.compile(lm_loss) if compile else lm_loss
        if place.precision == "bf16":
            loss_fn = _bf16_autocast(loss_fn)
        # one preallocated batch and target buffer, shared with torch: no per-step allocation
        x_np = np.empty((B, ctx), dtype=np.int64)
        y_np = np.full((B, ctx), _IGNORE, dtype=np.int64)
        x, y = torch.from_numpy(x_np)[lo:hi], torch.from_numpy(y_np)[lo:hi]
        bar = _progress(T, run.name, progress and first, initial=start)
        t_loop = t_steady = time.perf_counter()
        saving = 0.0  # seconds spent writing checkpoints since t_steady
        for step in range(start, T):
            if step in forks_at:
                t = time.perf_counter()
                _save_state(partial / _FORKS / f"step-{step}.pt", model, optimizer, losses, step, key_hash, 0)
                saving += time.perf_counter() - t
            rows.fill(step, step + 1, x_np)
            y_np[:, :-1] = x_np[:, 1:]
            loss = train_step(net, optimizer, x.to(dev), y.to(dev), float(lrs[step]), loss_fn)
            # every row has context - 1 targets, so the mean of the processes' means is the batch's
            losses[step] = _mean_over_processes(loss, place)
            if bar is not None:
                bar.update(1)
                if step % 10 == 0:
                    bar.set_postfix(loss=f"{losses[step].item():.3f}", refresh=False)
            if step == start:
                t_steady, saving = time.perf_counter(), 0.0
            if (step + 1) % every == 0 and step + 1 < T and first:
                t = time.perf_counter()
                _save_state(partial / _STATE, model, optimizer, losses, step + 1, key_hash, forked_from)
                saving += time.perf_counter() - t
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)  # the GPU may still be running the last steps' kernels
        t_end = time.perf_counter()
        loop_seconds = t_end - t_loop
        if bar is not None:
            bar.close()
        del net
        model.to("cpu")
        losses = losses.cpu()

    if not first:
        barrier(place)  # while the first process writes the run folder
        return replace(_load_result(path, injs), trained=True)
    steps = np.arange(T)
    curve = pd.DataFrame({
        "step": steps, "tokens": (steps + 1) * B * ctx, "loss": losses.numpy().astype(float), "lr": lrs,
    })
    exposure = exposure_table(order, injs, T)
    # throughput of the steps this call trained after its first, which pays for warm-up
    # (and compilation), checkpoint writes left out
    trained = T - start
    steady = (trained - 1, t_end - t_steady - saving) if trained > 1 else (trained, loop_seconds)
    tokens_per_second = steady[0] * B * ctx / steady[1]
    n_params = param_count(run.model, len(tokenizer))

    # write under a temporary name, then rename: a killed run never looks finished
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    with _quiet_transformers():
        model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    curve.to_parquet(tmp / "curve.parquet", index=False)
    exposure.to_parquet(tmp / "exposure.parquet", index=False)
    order.save(tmp / "order.npz")
    (tmp / "run.json").write_text(json.dumps(key, default=str, indent=1))
    if (partial / _FORKS).is_dir():
        # linked, not moved: the partial folder stays whole until the run folder exists
        _link_or_copy(partial / _FORKS, tmp / _FORKS)
    seconds = time.perf_counter() - t0
    done = {"seconds": seconds, "loop_seconds": loop_seconds, "tokens_per_second": tokens_per_second,
            "n_params": n_params, "steps": T, "tokens": T * B * ctx, "threads": n_threads,
            "compile": bool(compile), "torch": torch.__version__, "resumed_from_step": resumed_from,
            "forked_from_step": forked_from, "steps_trained": trained, "checkpoint_every": every,
            "device": place.device, "precision": place.precision, "world_size": place.world_size}
    if dev.type == "cuda":
        done["gpu"] = torch.cuda.get_device_name(dev)
    (tmp / _DONE).write_text(json.dumps(done, indent=1))
    if path.exists() and not (path / _DONE).exists():
        shutil.rmtree(path)
    try:
        tmp.rename(path)
    except OSError:
        # another process finished the same run first; its copy is identical
        shutil.rmtree(tmp, ignore_errors=True)
        if not (path / _DONE).exists():
            raise
    shutil.rmtree(partial, ignore_errors=True)
    barrier(place)
    return RunResult(path, curve, exposure, seconds, tokens_per_second, n_params, trained=True,
                     resumed_from_step=resumed_from, forked_from_step=forked_from)


@contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Hide transformers' own progress bars (one tick per save or load of a tiny model)."""
    from transformers.utils import logging as hf_logging

    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was:
            hf_logging.enable_progress_bar()


def _progress(total: int, name: str, enabled: bool, initial: int = 0):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, desc=f"train {name}", mininterval=1.0, leave=False)


def _load_result(path: Path, injections: Sequence[Injection]) -> RunResult:
    done = json.loads((path / _DONE).read_text())
    curve = pd.read_parquet(path / "curve.parquet")
    # recomputed from the saved order so the table lists exactly the caller's sequences
    exposure = exposure_table(DataOrder.load(path / "order.npz"), injections, done["steps"])
    return RunResult(path, curve, exposure, done["seconds"], done["tokens_per_second"], done["n_params"],
                     trained=False, resumed_from_step=done.get("resumed_from_step", 0),
                     forked_from_step=done.get("forked_from_step", 0))


def load_run(path: str | os.PathLike, injections: Iterable[Any] = ()) -> RunResult:
    """A finished run from its folder (``RunResult.trained`` is False)."""
    path = Path(path)
    if not (path / _DONE).exists():
        raise LabConfigError(f"{path} is not a finished lab run")
    return _load_result(path, as_injections(injections))


# -- evaluation --------------------------------------------------------------------------------


def eval_loss(path: str | os.PathLike, texts: Sequence[str], batch_size: int = 16,
              threads: int | None = None) -> float:
    """Mean token negative log-likelihood (nats) of ``texts`` under the checkpoint at ``path``.

    The texts are tokenized as training texts are (``<|endoftext|>`` after each)
    and cut into rows of the model's context, the last one possibly shorter; the
    mean is over every token that has a predecessor in its row, so it is the
    held-out counterpart of the training loss.
    """
    import torch
    import torch.nn.functional as F
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(path)
    tok = AutoTokenizer.from_pretrained(str(path))
    with _quiet_transformers():
        model = AutoModelForCausalLM.from_pretrained(
            str(path), dtype=torch.float32, attn_implementation="sdpa"
        )
    model.eval()
    ctx = model.config.max_position_embeddings
    stream = tokenize_stream(texts, tok)
    if len(stream) < 2:
        raise LabConfigError("eval_loss needs at least two tokens of text")
    n_full = len(stream) // ctx
    full = torch.from_numpy(stream[: n_full * ctx].reshape(n_full, ctx).astype(np.int64))
    batches = list(torch.split(full, batch_size))
    tail = stream[n_full * ctx :]
    if len(tail) >= 2:
        batches.append(torch.from_numpy(tail.astype(np.int64))[None])
    total, count = 0.0, 0
    with cpu_threads(threads), torch.inference_mode():
        for xb in batches:
            logits = model(input_ids=xb, use_cache=False).logits[:, :-1]
            flat = logits.reshape(-1, logits.shape[-1])
            total += float(F.cross_entropy(flat, xb[:, 1:].reshape(-1), reduction="sum"))
            count += xb.shape[0] * (xb.shape[1] - 1)
    return total / count

"""What a run trains on: the token stream, its blocks, and the data order.

The data order is a pure function of the corpus, the run's seed and the
injected sequences:

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
with the checkpoint; :mod:`analysis.lab.train.exposure` reads the exposure of
each injected sequence off it.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analysis.lab.config import WINDOWS, LabConfigError, RunConfig


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


def window_steps(window: str, steps: int) -> tuple[int, int]:
    """First step and one past the last step of ``window`` in a run of ``steps`` steps."""
    lo, hi = WINDOWS[window]
    return math.ceil(lo * steps), math.ceil(hi * steps)


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


def injection_tokens(injections: Sequence[Injection], tokenizer) -> list[np.ndarray]:
    """Each injected sequence's tokens (no special token), as int64."""
    encs = tokenizer.backend_tokenizer.encode_batch([i.text for i in injections], add_special_tokens=False)
    return [np.asarray(e.ids, dtype=np.int64) for e in encs]


def token_blocks(stream: np.ndarray, context: int) -> np.ndarray:
    """The stream cut into ``(n_blocks, context)`` blocks; the tail shorter than a block is dropped."""
    n_blocks = len(stream) // context
    if n_blocks < 1:
        raise LabConfigError(
            f"the training stream has {len(stream)} tokens, fewer than one context ({context})"
        )
    return stream[: n_blocks * context].reshape(n_blocks, context)


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
    tokens = injection_tokens(injs, tokenizer)
    ctx, steps, batch = run.model.context, run.steps, run.batch_size
    for inj, tok in zip(injs, tokens):
        if inj.copies and len(tok) > ctx - 1:
            raise LabConfigError(
                f"injection {inj.seq_id!r} is {len(tok)} tokens, longer than context - 1 = {ctx - 1}"
            )
        lo, hi = window_steps(inj.window, steps)
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
        lo, hi = window_steps(inj.window, steps)
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


class Rows:
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
    rows = rows_from(order, training_texts, injections, tokenizer)
    out = np.empty(((stop - start) * order.batch_size, order.context), dtype=np.int64)
    return rows.fill(start, stop, out).reshape(stop - start, order.batch_size, order.context)


def rows_from(order: DataOrder, training_texts: Sequence[str], injections: Iterable[Any],
              tokenizer) -> Rows:
    """The :class:`Rows` of ``order``, rebuilt from the corpus and the injected sequences."""
    injs = as_injections(injections)
    if order.window is not None:
        injs = [Injection(i.seq_id, i.task, i.text, i.copies, order.window) for i in injs]
    stream = tokenize_stream(training_texts, tokenizer)
    if len(stream) != order.n_tokens:
        raise LabConfigError(
            f"the training texts give {len(stream)} tokens, the run's order was built on {order.n_tokens}"
        )
    return Rows(order, token_blocks(stream, order.context), injs, injection_tokens(injs, tokenizer),
                tokenizer.eos_token_id)


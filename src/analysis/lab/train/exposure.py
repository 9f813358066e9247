"""The exposure of each injected sequence: read off a run's logged data order, and
recounted by brute force from the very inputs the model was given."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from analysis.lab.train.order import DataOrder, as_injections, rows_from


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
    return exposure_frame(rows)


def exposure_frame(rows: list[dict]) -> pd.DataFrame:
    """The exposure table of ``rows`` (one dict per sequence), with its columns and int64 counts."""
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
    rows = rows_from(order, training_texts, injections, tokenizer)
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
    return exposure_frame(out)

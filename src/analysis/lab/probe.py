"""First looks at what the lab's models learned (the lab page, ``notebooks/lab.md``).

Pure functions over the shared model interface: no printing or plotting.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def split_half(text: str) -> tuple[str, str]:
    """Split a sequence into a prefix (first half of its words) and the rest,
    keeping the space with the continuation so tokenization matches training."""
    words = text.split(" ")
    half = len(words) // 2
    return " ".join(words[:half]), " " + " ".join(words[half:])


def injection_nll(model, injections: pd.DataFrame) -> pd.DataFrame:
    """Mean per-token NLL of each injected sequence's second half given its first
    half, under ``model`` (teacher forcing through :meth:`Model.logprobs`).

    ``injections`` has columns seq_id, task, copies and text. Returns them with
    ``suffix_nll`` (nats per token) and ``suffix_tokens``.
    """
    pairs = [split_half(t) for t in injections["text"]]
    lps = model.logprobs([p for p, _ in pairs], [s for _, s in pairs])
    out = injections[["seq_id", "task", "copies"]].copy()
    out["suffix_nll"] = [float(-np.mean(lp)) if len(lp) else np.nan for lp in lps]
    out["suffix_tokens"] = [len(lp) for lp in lps]
    out["model"] = model.name
    return out


def exposure_check(exposure: pd.DataFrame, recount: pd.DataFrame) -> pd.DataFrame:
    """Compare a run's exposure table with a brute-force recount of its data order.

    Returns one row per sequence with both values of copies_seen, first_step and
    last_step and an ``agrees`` flag.
    """
    cols = ["copies_seen", "first_step", "last_step"]
    merged = exposure[["seq_id", "task"] + cols].merge(
        recount[["seq_id"] + cols], on="seq_id", suffixes=("", "_recount"), how="outer"
    )
    agrees = np.ones(len(merged), dtype=bool)
    for c in cols:
        a, b = merged[c].astype(float), merged[f"{c}_recount"].astype(float)
        agrees &= (a == b) | (a.isna() & b.isna())
    merged["agrees"] = agrees
    return merged

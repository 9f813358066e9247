"""A toy ladder for the size chapter's tests: accuracy rising with log size on 8 popular
texts and flat on 2 baseline stories, with seeded noise."""

from __future__ import annotations

import numpy as np
import pandas as pd


def toy_acc(theta, seed: int = 5) -> pd.DataFrame:
    """An accuracy table (``model, group, text_id, prefix_len, n, correct, acc``) for the
    models of ``theta`` (name to size), in its order, from one generator seeded ``seed``."""
    rng = np.random.default_rng(seed)
    rows = []
    for m, th in dict(theta).items():
        for t in range(8):
            for ln in (4, 8):
                level = 0.1 * np.log(th) + 0.02 * t + 0.01 * rng.normal()
                rows.append((m, "popular", f"p{t}", ln, 20, 0, level))
        for t in range(2):
            for ln in (4, 8):
                rows.append((m, "baseline", f"b{t}", ln, 20, 0, 0.05 + 0.01 * rng.normal()))
    return pd.DataFrame(rows, columns=["model", "group", "text_id", "prefix_len", "n", "correct", "acc"])

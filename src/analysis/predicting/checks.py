"""The predicting chapter's one error class and the checks every step makes before any work."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd


class PredictingError(ValueError):
    """Bad input to the predicting chapter's computations, raised before any work."""


def require(frame: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    """Raise :class:`PredictingError` naming the ``columns`` that ``frame`` (``what``) lacks."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise PredictingError(f"{what} lacks column(s) {missing}; it has {list(frame.columns)}")


def binary(y, what: str = "y") -> np.ndarray:
    """``y`` as a 1-d integer array of 0/1 labels, or :class:`PredictingError`."""
    arr = np.asarray(y)
    if arr.ndim != 1 or not np.isin(arr, (0, 1)).all():
        raise PredictingError(f"{what} must be a 1-d array of 0/1 labels")
    return arr.astype(int)


def check_T(T) -> int:
    """A target's training steps ``T``: a positive integer."""
    if not isinstance(T, (int, np.integer)) or isinstance(T, bool) or T < 1:
        raise PredictingError(f"T (training steps) must be a positive integer, got {T!r}")
    return int(T)


def exposure_copies(frame: pd.DataFrame) -> pd.Series:
    """A sequence frame's exposure count: its ``copies`` column, or else ``copies_seen``
    (the column of :func:`analysis.lab.train.exposure_table`): what the run actually inserted."""
    for col in ("copies", "copies_seen"):
        if col in frame.columns:
            return frame[col]
    raise PredictingError(
        f"the exposure frame needs a 'copies' or 'copies_seen' column, got {list(frame.columns)}"
    )


def check_targets(targets: Iterable[str], exposures: Mapping[str, pd.DataFrame]) -> list[str]:
    """Check that every target model has an exposure table, before any work.

    Returns the targets as a list; raises :class:`PredictingError` naming the
    targets without a table (or with a table lacking ``seq_id``, ``last_step``
    or a copies column) and the targets that have one.
    """
    targets = list(targets)
    missing = [t for t in targets if t not in exposures or exposures[t] is None]
    if missing:
        raise PredictingError(
            f"target model(s) {missing} have no exposure table; tables exist for {sorted(exposures)}"
        )
    for t in targets:
        require(exposures[t], ("seq_id", "last_step"), f"the exposure table of target {t!r}")
        exposure_copies(exposures[t])
    return targets


def check_pool(pool: Sequence[str], runs: Iterable[str]) -> list[str]:
    """Check that a pool names at least two distinct runs, all present in ``runs``."""
    pool = list(pool)
    runs = sorted({str(r) for r in runs})
    unknown = [r for r in pool if r not in runs]
    if unknown:
        raise PredictingError(f"the pool names run(s) {unknown} that do not exist; runs: {runs}")
    if len(set(pool)) < 2 or len(set(pool)) != len(pool):
        raise PredictingError(f"a pool must name at least two distinct runs, got {pool}")
    return pool


def check_pools(pools: Mapping[str, Sequence[str]], runs: Iterable[str]) -> dict[str, list[str]]:
    """:func:`check_pool` on every pool of Experiment 2, before any work; returns the pools as lists."""
    runs = list(runs)
    return {name: check_pool(pool, runs) for name, pool in pools.items()}

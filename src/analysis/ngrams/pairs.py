"""Task-gram pairs: every input n-gram of a task instance paired with every output n-gram.

**Short outputs.** The source treats TriviaQA's short answers as single output
n-grams: with ``short_outputs="whole"`` an output of fewer than n words gives
its whole word sequence as its one n-gram (``"drop"`` gives none).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from analysis.ngrams.grams import NgramError, _filter, _grams, check_n, default_drop_stopwords, words

#: what an output with fewer than n words gives: its whole word sequence, or nothing
SHORT_OUTPUTS = ("whole", "drop")


def task_gram_pairs(
    inputs: Sequence[str],
    outputs: Sequence[str],
    n: int,
    drop_stopwords: bool | None = None,
    keep: Callable[[pd.DataFrame], Any] | Sequence[bool] | np.ndarray | None = None,
    short_outputs: str = "whole",
) -> pd.DataFrame:
    """Candidate task-gram pairs: input n-grams × output n-grams of every task instance.

    This is the source's :math:`A_n(T)=\\bigcup_i G_n(x_i)\\times G_n(y_i)`, kept
    per instance (the test pairs Φ of an instance are its rows), with
    ``s^x != s^y``.

    Parameters
    ----------
    inputs, outputs : sequence of str
        Task inputs (questions, problems) and their outputs (answers,
        solutions), aligned.
    n : int
        One of :data:`~analysis.ngrams.grams.SUPPORTED_N`.
    drop_stopwords : bool, optional
        As in :func:`~analysis.ngrams.grams.ngrams`; default ``n <= 3``.
    keep : callable or boolean mask, optional
        The hook for the embedding filter: a function of the unfiltered table
        returning a boolean mask of rows to keep, or such a mask itself (one
        entry per row of the unfiltered table).
    short_outputs : {"whole", "drop"}
        An output with fewer than ``n`` words (after stopword dropping) gives
        its whole word sequence as its single n-gram, or nothing.

    Returns
    -------
    pandas.DataFrame
        Columns ``instance`` (index into ``inputs``), ``x`` and ``y`` (tuples of
        words); one row per distinct pair of an instance, in order of first
        occurrence. ``attrs`` holds ``n`` and ``drop_stopwords``.

    Raises
    ------
    NgramError
        Bad ``n``, ``short_outputs``, mismatched lengths or mask, or an empty
        table after filtering.
    """
    n = check_n(n)
    keep = _check_pair_inputs(inputs, outputs, keep, short_outputs)
    drop = default_drop_stopwords(n) if drop_stopwords is None else bool(drop_stopwords)
    table = _pair_rows(inputs, outputs, n, drop, short_outputs)
    if keep is not None:
        table = _apply_keep(table, keep)
    if table.empty:
        raise NgramError(
            f"empty task-gram table: no (input, output) {n}-gram pair with s^x != s^y survived "
            f"(instances={len(inputs)}, drop_stopwords={drop}, short_outputs={short_outputs!r}, "
            f"keep={'given' if keep is not None else None})"
        )
    table.attrs.update(n=n, drop_stopwords=drop)
    return table


def _check_pair_inputs(inputs, outputs, keep, short_outputs: str):
    """The checks of :func:`task_gram_pairs`, before any work; returns ``keep``
    (a mask as a numpy array, a callable as given)."""
    if short_outputs not in SHORT_OUTPUTS:
        raise NgramError(f"short_outputs must be one of {SHORT_OUTPUTS}, got {short_outputs!r}")
    if isinstance(inputs, str) or isinstance(outputs, str):
        raise NgramError("inputs and outputs must be sequences of strings, not single strings")
    if len(inputs) != len(outputs):
        raise NgramError(
            f"inputs and outputs must have the same length, got {len(inputs)} and {len(outputs)}"
        )
    if keep is not None and not callable(keep):
        keep = np.asarray(keep)
        if keep.dtype != bool or keep.ndim != 1:
            raise NgramError("keep must be a callable or a 1-d boolean mask over the unfiltered table")
    return keep


def _pair_rows(inputs: Sequence[str], outputs: Sequence[str], n: int, drop: bool,
               short_outputs: str) -> pd.DataFrame:
    """The unfiltered pair table: each instance's distinct (input n-gram, output n-gram) pairs."""
    rows: list[tuple[int, tuple[str, ...], tuple[str, ...]]] = []
    for i, (x_text, y_text) in enumerate(zip(inputs, outputs)):
        gx = list(dict.fromkeys(_grams(_filter(words(x_text), drop), n)))
        y_tokens = _filter(words(y_text), drop)
        gy = _grams(y_tokens, n)
        if not gy and y_tokens and short_outputs == "whole":
            gy = [tuple(y_tokens)]
        gy = list(dict.fromkeys(gy))
        rows.extend((i, x, y) for x in gx for y in gy if x != y)
    table = pd.DataFrame(rows, columns=["instance", "x", "y"])
    table.attrs.update(n=n, drop_stopwords=drop)  # for keep functions that need n (per-n γ)
    return table


def _apply_keep(table: pd.DataFrame, keep) -> pd.DataFrame:
    """The rows of ``table`` that ``keep`` (a callable of the table, or a mask) keeps."""
    mask = np.asarray(keep(table) if callable(keep) else keep)
    if mask.shape != (len(table),):
        raise NgramError(f"keep must give one boolean per row ({len(table)}), got shape {mask.shape}")
    return table[mask.astype(bool)].reset_index(drop=True)

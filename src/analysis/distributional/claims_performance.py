"""The distributional chapter's claims on performance against corpus counts (the
source's Figure 3): knowledge accuracy against size, against the fact's copies in the
corpus, and recall on the most-copied facts against size.

Split from :mod:`analysis.distributional.claims` by role; the helpers and thresholds
are that module's, and its docstring says what each kind of claim rests on.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from analysis.core.claims import EXTENSION, Claim, decide
from analysis.distributional.claims import (
    PERFORMANCE,
    _claim,
    _floor,
    _interval,
    _nt,
    _trend_claim,
    _trend_spec,
)
from analysis.distributional.method import recall_gap
from analysis.distributional.params import ALPHA, MIN_FACTS, paper_value


def performance_claims(acc: pd.DataFrame, by_copies: pd.DataFrame, answered: pd.DataFrame,
                       paper: pd.DataFrame | None = None,
                       intervals: Mapping[str, tuple[float, float]] | None = None) -> list[Claim]:
    """Accuracy against size and against the fact's copies, from
    :func:`~analysis.distributional.method_tables.accuracy_table`,
    :func:`~analysis.distributional.method_tables.accuracy_by_copies` and its counts
    :func:`~analysis.distributional.method_tables.answered_by_copies`. ``intervals``
    (claim id → bootstrap interval over facts of the trend,
    :func:`~analysis.distributional.controls.unit_trend_interval`) go on the trend claims."""
    intervals = intervals or {}
    fig3 = paper_value(paper, "Figure 3", "TriviaQA (n = 5)")
    knowledge = acc["knowledge accuracy"]
    spec = _trend_spec(acc["params"], knowledge, floor=_floor(knowledge, "floor (0% knowledge accuracy for "
                                                                         "every model)"))
    size = _trend_claim("accuracy_size", "Knowledge accuracy rises with model size", spec,
                        section=PERFORMANCE, interval=_interval(intervals.get("accuracy_size")),
                        source_value=fig3 or "accuracy rises with size past about 400M parameters",
                        extra={"constant": bool(knowledge.nunique() == 1)})
    return [size, copies_rise(by_copies, answered, fig3),
            copies_size(by_copies, _interval(intervals.get("copies_size")))]


def copies_rise(by_copies: pd.DataFrame, answered: pd.DataFrame, source_value: str | None = None) -> Claim:
    """The source's performance-against-count claim, on the lab's exact copies: the
    model with the best recall on the most-copied facts recalls them more often than
    the least-copied ones (Fisher's exact test over the facts, each answered once; the
    model is chosen after the fact, so the p-value is optimistic). Every model at 0%
    recall in every bin is the floor: not testable."""
    statement = "Knowledge accuracy rises with the count of the fact in the corpus"
    source_value = source_value or "accuracy rises with the count of the question's n-gram pairs"
    bins = [c for c in by_copies.columns if c != "params"]
    comparison = (f"recall on the most- minus the least-copied facts of the model best on the most-copied, "
                  f"Fisher's exact test p < {ALPHA:g}, at least {MIN_FACTS} facts")
    control = "no ladder model is trained without the facts"
    col = by_copies[bins[-1]].astype(float) if bins else pd.Series(dtype=float)
    kw = dict(comparison=comparison, section=PERFORMANCE, source_value=source_value, unit="facts")
    if len(bins) < 2 or col.notna().sum() == 0:
        return _nt("copies_rise", statement, "no model has scorable answers in two copies bins", **kw)
    top, low, best = bins[-1], bins[0], col.idxmax()
    count = answered.set_index(["model", "bin"])
    gap = recall_gap(count.loc[(best, top), "hits"], count.loc[(best, top), "n"],
                     count.loc[(best, low), "hits"], count.loc[(best, low), "n"])
    floor = _floor(by_copies[bins].to_numpy(float).ravel(),
                   "floor (0% recall in every copies bin for every model)")
    v = decide(value=gap.value, null=0.0, p=gap.p, n_units=gap.n, min_n=MIN_FACTS, floor=floor, unit="facts")
    extra = {"unit": "difference", "model": best, "top": top, "low": low,
             "hi": float(by_copies.loc[best, top]), "lo": float(by_copies.loc[best, low]),
             "none_recalled": bool(col.max() == 0),
             "best_any": float(by_copies[bins].astype(float).max().max())}
    return _claim("copies_rise", statement, v, value=gap.value, p=gap.p, n=gap.n, n_units=gap.n,
                  min_n=MIN_FACTS,
                  null_kind="analytic", null_value=0.0, control_reason=control, extra=extra, **kw)


def copies_size(by_copies: pd.DataFrame, interval: tuple[float, float] | None = None) -> Claim:
    """Recall on the most-copied facts rises with model size (the book's own reading
    of the source's remark that the count effect appears only past about 400M);
    ``interval``: the trend's bootstrap interval over those facts."""
    bins = [c for c in by_copies.columns if c != "params"]
    values = by_copies[bins[-1]].astype(float) if bins else np.full(len(by_copies), np.nan)
    spec = _trend_spec(by_copies["params"], values,
                       floor=_floor(values, "floor (0% recall on the most-copied facts for every model)"))
    return _trend_claim("copies_size", "Recall on the most-copied facts rises with model size", spec,
                        EXTENSION, section=PERFORMANCE, interval=interval)

"""The chapter's numbers in words that are not verdicts (the sentences are in ``sentences.j2``):
a model's rates with their intervals, why requests are left out of a rates table, the top
rate, the source's rates beside this run's, and the scorer's constants."""

from __future__ import annotations

import os
from collections.abc import Mapping

import pandas as pd

from analysis.core.fmt import fmt_pct
from analysis.phrases.method_rates import exclusion_counts, source_range
from analysis.phrases.source import COMMA_REFUSAL_PATTERNS, EMPTY_MIN_CHARS, REFUSAL_PATTERNS, THRESHOLD
from analysis.phrases.text import S
from analysis.stats.intervals import CI_ALPHA


def headline(rates_table: pd.DataFrame, model: str, types=("propaganda", "culturax")) -> dict[str, str]:
    """Rate and Wilson interval of ``model`` on each type in words (or why there is none)."""
    r = rates_table.set_index(["model", "type"])
    return {t: S.headline_rate(row=r.loc[(model, t)] if (model, t) in r.index else None) for t in types}


def rates_note(scored: pd.DataFrame) -> str:
    """The sentence under a rates table: the requests it counts and why the others are left out."""
    return S.rates_note(c=exclusion_counts(scored))


def top_rate(rates_table: pd.DataFrame, type_labels: Mapping[str, str]) -> str:
    """The highest rate of a run, with its counts, model and type, as a phrase."""
    top = None if rates_table.empty else rates_table.sort_values(["rate", "total"], ascending=False).iloc[0]
    return S.top_rate(top=top, labels=type_labels)


def source_range_text(source: pd.DataFrame) -> str:
    """The source's range of state-media rates, e.g. "3.2% to 8.8%"."""
    lo, hi = source_range(source)
    return S.source_range(lo=lo, hi=hi)


def source_comparison(source: pd.DataFrame, rates_table: pd.DataFrame, type_labels: Mapping[str, str]
                      ) -> pd.DataFrame:
    """The source's 2024 rates and this run's side by side: one row per (who, model)."""
    side = source.assign(who="source, 2024", rate=source["rate_pct"].map(lambda x: f"{x:.1f}%"))
    ours = rates_table.assign(who="this run", rate=rates_table["rate"].map(fmt_pct))
    both = pd.concat([side[["who", "model", "type", "rate"]], ours[["who", "model", "type", "rate"]]])
    both["type"] = both["type"].map(lambda t: type_labels.get(t, t))
    return both.pivot_table(index=["who", "model"], columns="type", values="rate", aggfunc="first",
                            sort=False)


def method_constants() -> dict[str, str]:
    """The scorer's constants as the Method section states them."""
    return {"threshold_source": f"{THRESHOLD:g}", "n_refusal_patterns": str(len(REFUSAL_PATTERNS)),
            "n_comma_patterns": str(len(COMMA_REFUSAL_PATTERNS)), "empty_min_chars": str(EMPTY_MIN_CHARS),
            "ci_level": f"{1 - CI_ALPHA:.0%}"}


def rescore_note(path: str | os.PathLike | None) -> str:
    """What the rescoring section says about the completions file it was given."""
    return S.rescore_note(path=path)

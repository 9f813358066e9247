"""The Phrases chapter's numbers in words that are not verdicts: a model's rates with
their intervals, why requests are left out of a rates table, the top rate, the
source's rates beside this run's, and the scorer's constants as the Method section
states them."""

from __future__ import annotations

import os
from collections.abc import Mapping

import pandas as pd

from analysis.core.fmt import fmt_interval, fmt_pct
from analysis.phrases.method_rates import exclusion_counts, source_range
from analysis.phrases.source import COMMA_REFUSAL_PATTERNS, EMPTY_MIN_CHARS, REFUSAL_PATTERNS, THRESHOLD
from analysis.stats.intervals import CI_ALPHA


def headline(rates_table: pd.DataFrame, model: str, types=("propaganda", "culturax")) -> dict[str, str]:
    """Rate and Wilson interval of ``model`` on each type as prose strings; a type
    with no scorable completion says so instead of a number."""
    r = rates_table.set_index(["model", "type"])
    out = {}
    for t in types:
        if (model, t) in r.index:
            row = r.loc[(model, t)]
            out[t] = f"{fmt_pct(row['rate'])} {fmt_interval(row['ci_lo'], row['ci_hi'])}"
        else:
            out[t] = "not measured (no scorable completion: every answer was an error, a refusal or empty)"
    return out


def _exclusion_reasons(counts: Mapping[str, int]) -> str:
    n = counts["requests"]

    def count(k: int) -> str:
        return f"all {k}" if k == n and n > 1 else str(k)

    parts = []
    if counts["errors"]:
        k = counts["errors"]
        parts.append(f"{count(k)} {'request' if k == 1 else 'requests'} failed")
    if counts["refused"]:
        k = counts["refused"]
        parts.append(f"{count(k)} {'answer was a refusal' if k == 1 else 'answers were refusals'}")
    if counts["empty"]:
        k = counts["empty"]
        again = " even after being asked again" if counts["empty_requeried"] == k else ""
        were = "answer was" if k == 1 else "answers were"
        parts.append(f"{count(k)} {were} shorter than {EMPTY_MIN_CHARS} characters{again}")
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def rates_note(scored: pd.DataFrame) -> str:
    """The sentence under a rates table (of :func:`.method_rates.rates` on
    ``scored``): how many requests it counts and why the others are left out (a
    failed request, a refusal, an answer still too short), each counted once; an
    empty table says that no answer was left to score, and why."""
    counts = exclusion_counts(scored)
    n, k = counts["requests"], counts["scored"]
    if n == 0:
        return "No phrase was asked in this run, so there is no rate."
    if k == n:
        return f"The rates count every one of the {n:,} answers; none is left out."
    reasons = _exclusion_reasons(counts)
    if k == 0:
        return f"The table is empty: none of the {n:,} requests left an answer to score, as {reasons}."
    verb = "is" if n - k == 1 else "are"
    return f"The rates count {k:,} of the {n:,} requests; the other {n - k:,} {verb} left out: {reasons}."


def top_rate(rates_table: pd.DataFrame, type_labels: Mapping[str, str]) -> str:
    """The highest rate of a run, with its counts, model and type, as a phrase."""
    if rates_table.empty:
        return "not measured: no completion of this run could be scored"
    top = rates_table.sort_values(["rate", "total"], ascending=False).iloc[0]
    return (f"{fmt_pct(top['rate'])} ({top['matched']} of {top['total']}), for {top['model']} on "
            f"{type_labels.get(top['type'], top['type'])} phrases")


def source_range_text(source: pd.DataFrame) -> str:
    """The source's range of state-media rates, e.g. "3.2% to 8.8%"."""
    return "{:.1f}% to {:.1f}%".format(*(100 * x for x in source_range(source)))


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
    if not path:
        return ("No completions file was given to this run (parameter `completions_file`), "
                "so there is nothing to rescore.")
    return f"Rescored `{path}`:"

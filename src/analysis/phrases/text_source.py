"""The words and tables of the section on the source's own completions (:mod:`.pilot`,
:mod:`.claims_source`; the sentences are in ``sentences.j2``): agreement with the study's
flags, every disagreement, and the rates and differences per model. Nothing here decides."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analysis.core.claims import NOT_TESTABLE, Claim
from analysis.core.fmt import fmt_interval, fmt_p, fmt_pct
from analysis.core.prose import and_join
from analysis.phrases.claims import by_kind
from analysis.phrases.claims_source import PAPER_PER_TYPE
from analysis.phrases.pilot import PILOT_COMMIT, RULES, SAMPLE_PER_TYPE, SI_MODEL
from analysis.phrases.text import S
from analysis.stats.intervals import wilson_interval

#: the columns of :func:`source_rates_table`
SOURCE_RATE_COLUMNS = ["model", "state media", "CulturaX", "difference (points)", "one-sided p",
                       "Holm-adjusted p", "status"]


def _tested(claims: Sequence[Claim]) -> list[Claim]:
    return [c for c in by_kind(claims, "source_gap") if c.status != NOT_TESTABLE]


def source_values(rescored: pd.DataFrame, claims: Sequence[Claim]) -> dict[str, str]:
    """The section's numbers as glue text (``source_completions_rows``, ``source_completions_agree``, …)."""
    sig = [c.extra["model"] for c in _tested(claims) if c.status == "reproduced"]
    causes = rescored.loc[~rescored["agree"], "cause"].value_counts()
    rows, agree = len(rescored), int(rescored["agree"].sum())
    return {
        "source_completions_rows": f"{rows:,}", "source_completions_agree": f"{agree:,}",
        "source_completions_share": fmt_pct(agree / rows),
        "source_completions_models": f"{rescored['model'].nunique()}",
        "source_completions_disagree": f"{rows - agree:,}",
        "source_completions_causes": and_join([f"{k} by {name}" for name, k in causes.items()]) or "none",
        "source_sample_per_type": f"{SAMPLE_PER_TYPE}",
        "source_si_rows": f"{int((rescored['model'] == SI_MODEL).sum())}",
        "paper_per_type": f"{PAPER_PER_TYPE:,}", "source_commit": PILOT_COMMIT,
        "source_gap_significant": f"{len(sig)} of {len(_tested(claims))}",
        "source_gap_significant_models": and_join(sig) or "none",
    }


def rules_md() -> str:
    """The three rules that differ between the study's scorer then and now, as a list."""
    return "\n".join(f"- **{name}**: {text}." for name, text in RULES.items())


def source_rates_table(claims: Sequence[Claim], rates: pd.DataFrame) -> pd.DataFrame:
    """Per model of the source's completions: both rates, the difference, p, Holm-adjusted p, status."""
    r, rows = rates.set_index(["model", "type"]), []
    cell = lambda x: (f"{fmt_pct(x['matched'] / x['total'])} {fmt_interval(x['ci_lo'], x['ci_hi'], 1)} "
                      f"({int(x['matched'])} of {int(x['total'])})")
    for c in by_kind(claims, "source_gap"):
        model = c.extra["model"]
        rows.append([model, "—", "—", "—", "—", "—", c.status] if "total_first" not in c.extra else [
            model, *(cell(r.loc[(model, t)]) for t in ("propaganda", "culturax")), S.difference(c=c),
            fmt_p(c.p).removeprefix("= "),
            fmt_p(c.p_adjusted).removeprefix("= ") if c.p_adjusted is not None else "—", c.status])
    return pd.DataFrame(rows, columns=SOURCE_RATE_COLUMNS)


def source_verdict(claims: Sequence[Claim]) -> str:
    """The section's finding in a sentence: the tested models' statuses, and what the sample is."""
    return S.source_verdict(tested=_tested(claims))


def source_summary(claims: Sequence[Claim], paper: Sequence[Claim]) -> str:
    """The chapter summary's line on the source's own data."""
    return S.source_summary(tested=_tested(claims), paper=paper)


def guess_sentence(sweep: pd.DataFrame, threshold: float) -> str:
    """At ``threshold``, per set of :func:`.method_guess.threshold_sweep`: false matches beside matches."""
    sets = []
    for name, g in sweep[np.isclose(sweep["threshold"], threshold)].groupby("set", sort=False):
        k, n = int(g["guess_matched"].sum()), int(g["n_guess"].sum())
        lo, hi = wilson_interval(np.array([k]), np.array([n])) if n else ([None], [None])
        sets.append(dict(name=name, k=k, n=n, lo=lo[0], hi=hi[0], guess=(g["guess_rate"].min(),
                         g["guess_rate"].max()), rate=(g["rate"].min(), g["rate"].max())))
    return S.guess(threshold=threshold, sets=sets)

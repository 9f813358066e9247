"""The words and tables of the section on the source's own completions (:mod:`.pilot`,
:mod:`.claims_source`): agreement with the study's flags, every disagreement, and the
rates and differences per model. Nothing here decides; it reads the claims."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analysis.core.claims import Claim
from analysis.core.fmt import fmt_interval, fmt_p, fmt_pct
from analysis.phrases.claims import by_kind
from analysis.phrases.claims_source import PAPER_PER_TYPE
from analysis.phrases.pilot import PILOT_COMMIT, RULES, SAMPLE_PER_TYPE, SI_MODEL
from analysis.phrases.text import _difference, _join, status_tally
from analysis.stats.intervals import wilson_interval

#: the columns of :func:`source_rates_table`
SOURCE_RATE_COLUMNS = ["model", "state media", "CulturaX", "difference (points)", "one-sided p",
                       "Holm-adjusted p", "status"]


def _rate(k: int, n: int, lo: float, hi: float) -> str:
    return f"{fmt_pct(k / n)} {fmt_interval(lo, hi, 1)} ({k} of {n})"


def source_values(rescored: pd.DataFrame, claims: Sequence[Claim]) -> dict[str, str]:
    """The section's numbers as glue text: ``source_completions_rows`` and
    ``source_completions_agree`` (rows whose match flag the book's scorer reproduces),
    the share agreeing, the models, the disagreements by rule, the sample per type,
    and how many models' gaps are significant."""
    tested = [c for c in by_kind(claims, "source_gap") if c.status != "not testable here"]
    sig = [c for c in tested if c.status == "reproduced"]
    causes = rescored.loc[~rescored["agree"], "cause"].value_counts()
    rows, agree = len(rescored), int(rescored["agree"].sum())
    return {
        "source_completions_rows": f"{rows:,}",
        "source_completions_agree": f"{agree:,}",
        "source_completions_share": fmt_pct(agree / rows),
        "source_completions_models": f"{rescored['model'].nunique()}",
        "source_completions_disagree": f"{rows - agree:,}",
        "source_completions_causes": _join([f"{k} by {name}" for name, k in causes.items()]) or "none",
        "source_sample_per_type": f"{SAMPLE_PER_TYPE}",
        "source_si_rows": f"{int((rescored['model'] == SI_MODEL).sum())}",
        "paper_per_type": f"{PAPER_PER_TYPE:,}",
        "source_commit": PILOT_COMMIT,
        "source_gap_significant": f"{len(sig)} of {len(tested)}",
        "source_gap_significant_models": _join([c.extra["model"] for c in sig]) or "none",
    }


def rules_md() -> str:
    """The three rules that differ between the study's scorer then and now, as a list."""
    return "\n".join(f"- **{name}**: {text}." for name, text in RULES.items())


def source_rates_table(claims: Sequence[Claim], rates: pd.DataFrame) -> pd.DataFrame:
    """Per model of the source's completions: both rates with their Wilson intervals and
    counts (from :func:`.pilot.pilot_rates`), the difference with its Newcombe interval,
    p, the Holm-adjusted p and the status."""
    r = rates.set_index(["model", "type"])
    rows = []
    for c in by_kind(claims, "source_gap"):
        model = c.extra["model"]
        if "total_first" not in c.extra:
            rows.append([model, "—", "—", "—", "—", "—", c.status])
            continue
        cells = []
        for t in ("propaganda", "culturax"):
            x = r.loc[(model, t)]
            cells.append(_rate(int(x["matched"]), int(x["total"]), x["ci_lo"], x["ci_hi"]))
        rows.append([model, *cells, _difference(c), fmt_p(c.p).removeprefix("= "),
                     fmt_p(c.p_adjusted).removeprefix("= ") if c.p_adjusted is not None else "—", c.status])
    return pd.DataFrame(rows, columns=SOURCE_RATE_COLUMNS)


def source_verdict(claims: Sequence[Claim]) -> str:
    """The section's finding in a sentence: the tested models' statuses, and what the
    sample is."""
    gaps = by_kind(claims, "source_gap")
    tested = [c for c in gaps if c.status != "not testable here"]
    return (f"Of the {len(tested)} models with a sample of their own, {status_tally(tested)} (one Holm "
            f"family; {SI_MODEL}'s rows are the paper's SI-table examples and are not a sample). This is an "
            f"early, partial sample, {SAMPLE_PER_TYPE} phrases per type and model drawn at commit "
            f"{PILOT_COMMIT}, not the study's final 1,000 per type.")


def source_summary(claims: Sequence[Claim], paper: Sequence[Claim]) -> str:
    """The chapter summary's line on the source's own data."""
    tested = [c for c in by_kind(claims, "source_gap") if c.status != "not testable here"]
    sig = [c.extra["model"] for c in tested if c.status == "reproduced"]
    psig = [c for c in paper if c.status == "reproduced"]
    return (f"On the source's own data the headline is weaker than \"higher for every model\": in its "
            f"published 2024 rates, {len(psig)} of {len(paper)} differences are significant; on its early "
            f"completions of frontier models ({SAMPLE_PER_TYPE} phrases per type), rescored here, "
            f"{len(sig)} of {len(tested)} {'is' if len(sig) == 1 else 'are'}"
            + (f" ({_join(sig)})" if sig else "") + ".")


def guess_sentence(sweep: pd.DataFrame, threshold: float) -> str:
    """At the chapter's ``threshold``: per set of :func:`.method_guess.threshold_sweep`,
    the false-match rates' range over its models beside the match rates', and the
    false matches pooled with their Wilson interval."""
    at = sweep[np.isclose(sweep["threshold"], threshold)]
    if at.empty:
        return f"The sweep has no row at the chapter's threshold, {threshold:g}."
    parts = []
    for name, g in at.groupby("set", sort=False):
        k, n = int(g["guess_matched"].sum()), int(g["n_guess"].sum())
        if not n:
            parts.append(f"{name}: no completion has a partner phrase")
            continue
        lo, hi = wilson_interval(np.array([k]), np.array([n]))
        parts.append(f"{name}, {k:,} false matches of {n:,} guesses ({fmt_pct(k / n)} "
                     f"{fmt_interval(lo[0], hi[0], 1)}; {fmt_pct(g['guess_rate'].min())} to "
                     f"{fmt_pct(g['guess_rate'].max())} per model) against match rates of "
                     f"{fmt_pct(g['rate'].min())} to {fmt_pct(g['rate'].max())}")
    return (f"At the threshold of {threshold:g}, a completion scored against another phrase's ending of the "
            f"same type and length counts as a match for the " + "; for the ".join(parts) + ".")

"""The chapter's English: the numbers and claims that each sentence of ``sentences.j2``
reads (claims rendered, a section's claims joined, the headline in words and tables).

Every decision is read from the claims; nothing here decides again, and the wording is
in the template. The other sections' words: :mod:`.text_rates`, :mod:`.text_lab`,
:mod:`.text_sizing` and :mod:`.text_source`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from analysis.core import prose
from analysis.core.claim_text import STATUS_WORDS, verdict
from analysis.core.claims import Claim
from analysis.core.fmt import fmt_pct
from analysis.lab.corpus import PHRASE_PROBE_WORDS
from analysis.phrases import pilot
from analysis.phrases import source as scorer
from analysis.phrases.claims import by_kind
from analysis.phrases.method_rates import SEPARATION_ALPHA, source_type_gaps
from analysis.stats.intervals import CI_ALPHA
from analysis.stats.sizing import PLANNING_ASSURANCE

S = prose.sentences("phrases", **prose.constants(scorer, pilot), SEPARATION_ALPHA=SEPARATION_ALPHA,
                    PHRASE_PROBE_WORDS=PHRASE_PROBE_WORDS, CI_ALPHA=CI_ALPHA,
                    PLANNING_ASSURANCE=PLANNING_ASSURANCE, STATUSES=list(STATUS_WORDS))
NO_BOTH_TYPES = S.no_both_types()
NOT_MEASURED = S.not_measured()
DIFFERENCE_COLUMNS = ["who", "model", "state media", "CulturaX", "difference (points)", "95% interval",
                      "one-sided p", "n", "status"]


def render(claim: Claim) -> str:
    """One claim as Markdown (what ``claim_<id>`` glues): its numbers in words, then its verdict."""
    return S.claim(c=claim, verdict=verdict(claim))


def comparison_verdict(claims: Sequence[Claim]) -> str:
    """Where each model's state-media rate falls beside the source's range (``verdict``)."""
    measured = [c for c in by_kind(claims, "source_range") if "rate" in c.extra]
    return S.comparison_verdict(claims=measured, verdict=verdict(measured[0]) if measured else None)


def gap_sentences(claims: Sequence[Claim], lang: str | None = None) -> str:
    """The distance comparisons of one language (``gap_zh``, ``gap_en``; all when ``lang`` is None)."""
    measured = [c for c in by_kind(claims, "distance_gap") if "n_first" in c.extra
                and (lang is None or c.id.startswith(f"distance_gap_{lang}_"))]
    return " ".join(map(render, measured)) or NO_BOTH_TYPES


def state_media_gap_text(claims: Sequence[Claim]) -> str:
    """The source's headline per model (``state_media_gap``)."""
    return " ".join(map(render, by_kind(claims, "state_media_gap"))) or NO_BOTH_TYPES


def refusal_sentence(claims: Sequence[Claim]) -> str:
    """The refusals in both modes (``refusals``)."""
    return " ".join(map(render, by_kind(claims, "comma_refusals")))


def _gap_of(claims: Sequence[Claim], model: str) -> Claim:
    (c,) = [c for c in by_kind(claims, "state_media_gap") if c.extra["model"] == model]
    return c


def difference_values(claims: Sequence[Claim], model: str) -> dict[str, str]:
    """``diff_sm_cx`` (``model``'s state-media minus CulturaX rate with its interval) and ``diff_p``."""
    c = _gap_of(claims, model)
    return {"diff_sm_cx": S.difference(c=c), "diff_p": f"{c.p:.3g}" if "total_first" in c.extra
            else "not computed"}


def difference_table(claims: Sequence[Claim], source: pd.DataFrame,
                     paper: Sequence[Claim] = ()) -> pd.DataFrame:
    """The headline per model (:data:`DIFFERENCE_COLUMNS`): this run's, then the source's 2024 models."""
    by_model, rows = {c.extra["model"]: c for c in paper}, []
    cell = lambda k, n: f"{fmt_pct(k / n)} ({k} of {n})"
    for c in by_kind(claims, "state_media_gap"):
        e = c.extra
        rows.append(["this run", e["model"], *(["—"] * 6 if "total_first" not in e else [
            cell(e["matched_first"], e["total_first"]), cell(e["matched_second"], e["total_second"]),
            f"{100 * c.value:+.1f}", S.interval(c=c), f"{c.p:.3g}", f"{c.n:,}"]), c.status])
    wide = source.pivot_table(index="model", columns="type", values="rate_pct", sort=False)
    for model, gap in source_type_gaps(source).items():
        c = by_model.get(model)
        rows.append(["source, 2024", model, *(f"{wide.loc[model, t]:.1f}%" for t in ("propaganda",
                     "culturax")), f"{gap:+.1f}", *(["not published", "—", "—", "—"] if c is None else [
                         f"{S.interval(c=c)} (counts of {c.extra['total_first']:,} per type)", f"{c.p:.3g}",
                         f"{c.n:,}", c.status])])
    return pd.DataFrame(rows, columns=DIFFERENCE_COLUMNS)


def markdown_table(table: pd.DataFrame) -> str:
    """A table of strings as a Markdown pipe table (what ``diff_table`` glues)."""
    lines = ["| " + " | ".join(map(str, table.columns)) + " |", "|" + " --- |" * len(table.columns)]
    lines += ["| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |"
              for row in table.itertuples(index=False)]
    return "\n".join(lines)


def difference_headline(claims: Sequence[Claim], source: pd.DataFrame, model: str,
                        paper: Sequence[Claim] = ()) -> str:
    """The headline number of ``model`` (``diff_headline``), then the source's for each 2024 model."""
    return S.difference_headline(c=_gap_of(claims, model), model=model, src=dict(source_type_gaps(source)),
                                 paper=paper)


def difference_verdict(claims: Sequence[Claim], source: pd.DataFrame) -> str:
    """The source's headline against this run's, model by model (``diff_verdict``)."""
    return S.difference_verdict(gaps=by_kind(claims, "state_media_gap"), src=dict(source_type_gaps(source)))


def difference_summary(claims: Sequence[Claim], source: pd.DataFrame) -> str:
    """The headline in one sentence for the chapter's summary (``diff_summary``)."""
    return S.difference_summary(gaps=by_kind(claims, "state_media_gap"), src=dict(source_type_gaps(source)))

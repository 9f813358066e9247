"""The chapter's words on the sample (the sentences are in ``sentences.j2``): how it was
drawn (a fixed sample, or one sized per model from a pilot to a target half width), the
target, and per model the pilot, the sample drawn and the half width its difference reached."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from analysis.core.claims import Claim
from analysis.core.fmt import fmt_pct
from analysis.phrases.claims import model_slug
from analysis.phrases.text import S, _gap_of
from analysis.stats.intervals import CI_ALPHA
from analysis.stats.sizing import zero_rates_n

#: the columns of :func:`sizing_table`
SIZING_TABLE_COLUMNS = ["model", "pilot: state media", "pilot: CulturaX", "planned at", "drawn per type",
                        "difference", "half width"]


def _widths(sizing: pd.DataFrame, claims: Sequence[Claim]) -> list[tuple]:
    """Per row: the row, its pilot's counts, its difference's half width in points (or None) and claim."""
    out = []
    for row in sizing.itertuples(index=False):
        c = _gap_of(claims, row.model)
        lo, hi = c.interval or (float("nan"), float("nan"))
        pilot = None if pd.isna(row.pilot_total_first) else tuple(int(getattr(row, f"pilot_{k}")) for k in (
            "matched_first", "total_first", "matched_second", "total_second"))
        out.append((row, pilot, 100 * (hi - lo) / 2 if "total_first" in c.extra else None, c))
    return out


def sizing_target(target_half_width: float | None) -> str:
    """The sample's target in words: "±3.0 points on the difference (95%)", or "none (a fixed sample)"."""
    return S.sizing_target(h=target_half_width)


def sizing_values(sizing: pd.DataFrame, claims: Sequence[Claim]) -> dict[str, str]:
    """Per model (by :func:`.claims.model_slug`): ``size_n_<model>``, ``size_pilot_<model>`` and
    ``size_width_<model>``, from :func:`.run.query_sized`'s table and the gap claims."""
    out = {}
    for row, pilot, width, _ in _widths(sizing, claims):
        slug = model_slug(row.model)
        out |= {f"size_n_{slug}": f"{int(row.n_per_type):,}", f"size_pilot_{slug}": S.pilot(p=pilot),
                f"size_width_{slug}": S.half_width(width=width, unit=" points")}
    return out


def sizing_table(sizing: pd.DataFrame, claims: Sequence[Claim]) -> pd.DataFrame:
    """Per model (:data:`SIZING_TABLE_COLUMNS`): pilot, planning rates, sample, difference, half width."""
    rows = []
    for row, p, width, c in _widths(sizing, claims):
        rows.append([row.model, *(["—"] * 2 if p is None else [f"{p[0]} of {p[1]}", f"{p[2]} of {p[3]}"]),
                     "—" if pd.isna(row.planning_rate_first) else
                     f"{fmt_pct(row.planning_rate_first)} and {fmt_pct(row.planning_rate_second)}",
                     f"{int(row.n_per_type):,}", S.difference(c=c), S.half_width(width=width, unit="")])
    return pd.DataFrame(rows, columns=SIZING_TABLE_COLUMNS)


def sizing_note(sizing: pd.DataFrame, claims: Sequence[Claim], target_half_width: float | None) -> str:
    """The sample against its target: how many models reached it, and which did not (and why)."""
    if target_half_width is None:
        return S.sizing_note(target=None, missed=[], n=len(sizing))
    target = 100 * target_half_width
    missed = [dict(model=row.model, width=width, n=int(row.n_per_type), capped=getattr(row, "capped", False))
              for row, _, width, _ in _widths(sizing, claims) if width is None or width > target + 1e-9]
    return S.sizing_note(target=target, missed=missed, n=len(sizing))


def sample_design(params: Mapping) -> str:
    """How this run drew its sample: a fixed ``n_per_type``, or sized per model to ``target_half_width``."""
    h = params.get("target_half_width")
    return S.sample_design(n=params["n_per_type"], h=h, pilot=params.get("pilot_per_type"),
                           zero_n=None if h is None else zero_rates_n(h, CI_ALPHA))

"""The Phrases chapter's words on the sample: how it was drawn (a fixed sample, or one
sized per model from a pilot to a target half width), the target, and per model the
pilot, the sample drawn and the half width its difference's interval reached."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from analysis.core.claims import Claim
from analysis.core.fmt import fmt_pct
from analysis.phrases.claims import model_slug
from analysis.phrases.text import NOT_MEASURED, _difference, _gap_of, _has_gap
from analysis.stats.intervals import CI_ALPHA
from analysis.stats.sizing import PLANNING_ASSURANCE, zero_rates_n

#: the columns of :func:`sizing_table`
SIZING_TABLE_COLUMNS = ["model", "pilot: state media", "pilot: CulturaX", "planned at", "drawn per type",
                        "difference", "half width"]


def _half_width_points(c: Claim) -> float:
    lo, hi = c.interval or (float("nan"), float("nan"))
    return 100 * (hi - lo) / 2


def sizing_target(target_half_width: float | None) -> str:
    """The sample's target in words: "±3.0 points on the difference (95%)"; for a
    fixed sample, "none (a fixed sample)"."""
    if target_half_width is None:
        return "none (a fixed sample)"
    return f"±{100 * target_half_width:.1f} points on the difference ({1 - CI_ALPHA:.0%})"


def sizing_values(sizing: pd.DataFrame, claims: Sequence[Claim]) -> dict[str, str]:
    """Per model (by :func:`.claims.model_slug`): ``size_n_<model>`` (phrases
    drawn per type), ``size_pilot_<model>`` (the pilot's state-media and CulturaX
    counts, or "no pilot") and ``size_width_<model>`` (the half width its
    difference's interval reached, in points), from :func:`.run.query_sized`'s
    table and the :func:`.claims.state_media_gap_claims` claims."""
    out = {}
    for row in sizing.itertuples(index=False):
        slug = model_slug(row.model)
        out[f"size_n_{slug}"] = f"{int(row.n_per_type):,}"
        out[f"size_pilot_{slug}"] = ("no pilot" if pd.isna(row.pilot_total_first) else
                                     f"{int(row.pilot_matched_first)} of {int(row.pilot_total_first)} "
                                     f"state-media and {int(row.pilot_matched_second)} of "
                                     f"{int(row.pilot_total_second)} CulturaX")
        c = _gap_of(claims, row.model)
        out[f"size_width_{slug}"] = (NOT_MEASURED if not _has_gap(c)
                                     else f"±{_half_width_points(c):.1f} points")
    return out


def sizing_table(sizing: pd.DataFrame, claims: Sequence[Claim]) -> pd.DataFrame:
    """Per model (:data:`SIZING_TABLE_COLUMNS`): the pilot's matched of scorable
    completions per type, the rates the plan assumed (the pilot's conservative
    rates, :func:`analysis.stats.planning_rate`), the phrases drawn per type, and
    the difference with its interval and the half width it reached."""
    rows = []
    for row in sizing.itertuples(index=False):
        c = _gap_of(claims, row.model)
        pilot = pd.isna(row.pilot_total_first)
        rows.append([
            row.model,
            "—" if pilot else f"{int(row.pilot_matched_first)} of {int(row.pilot_total_first)}",
            "—" if pilot else f"{int(row.pilot_matched_second)} of {int(row.pilot_total_second)}",
            "—" if pd.isna(row.planning_rate_first) else
            f"{fmt_pct(row.planning_rate_first)} and {fmt_pct(row.planning_rate_second)}",
            f"{int(row.n_per_type):,}",
            NOT_MEASURED if not _has_gap(c) else _difference(c),
            NOT_MEASURED if not _has_gap(c) else f"±{_half_width_points(c):.1f}",
        ])
    return pd.DataFrame(rows, columns=SIZING_TABLE_COLUMNS)


def sizing_note(sizing: pd.DataFrame, claims: Sequence[Claim], target_half_width: float | None) -> str:
    """One or two sentences on the sample against its target: how many models
    reached it, and which did not (with their half width and why: the most
    phrases allowed, or a pilot with nothing scorable)."""
    if target_half_width is None:
        return ("This run's sample is fixed, not sized to a target; the half width each "
                "difference reached is in the table.")
    target = 100 * target_half_width
    missed = []
    for row in sizing.itertuples(index=False):
        c = _gap_of(claims, row.model)
        if not _has_gap(c) or _half_width_points(c) > target + 1e-9:
            width = NOT_MEASURED if not _has_gap(c) else f"±{_half_width_points(c):.1f} points"
            why = ("the most this run draws" if getattr(row, "capped", False)
                   else "its plan, from the pilot's rates, fell short")
            missed.append(f"{row.model} ({width} with {int(row.n_per_type):,} per type, {why})")
    n = len(sizing)
    if not missed:
        return f"Every model's difference reached the target of ±{target:.1f} points ({n} of {n})."
    return (f"{n - len(missed)} of {n} models reached the target of ±{target:.1f} points; not "
            f"{'; '.join(missed)}. A plan from a pilot's conservative rates reaches the target about "
            "four times in five when nothing caps it.")


def sample_design(params: Mapping) -> str:
    """How this run drew its sample, from the chapter's settings: a fixed
    ``n_per_type`` per type, or a sample sized per model to ``target_half_width``
    (the pilot, the planning rule, the bounds)."""
    n = params["n_per_type"]
    if params.get("target_half_width") is None:
        return (f"Each model continues the same {n:,} phrases of each type (all of a type that has "
                "fewer), drawn at random, stratified, with a fixed seed.")
    h = params["target_half_width"]
    return (
        f"The sample is sized to what this chapter must show: the state-media − CulturaX difference "
        f"with its {1 - CI_ALPHA:.0%} Newcombe interval no wider than ±{100 * h:.1f} points. Each "
        f"model first continues a pilot of {params['pilot_per_type']:,} phrases of each type, drawn "
        "at random, stratified, with a fixed seed. The pilot's rates are then taken conservatively: "
        f"for each type, the rate nearest one half that the pilot does not rule out at one-sided "
        f"{PLANNING_ASSURANCE:.0%} (the upper end of its Wilson interval, for a rate below one half), "
        "so that a pilot which reproduced nothing does not promise a small sample. At those rates the "
        "interval gives the scorable completions per type that reach the target; divided by the "
        "pilot's share of scorable completions, that is the model's sample per type, at least its "
        f"pilot and at most {n:,}. The model then continues the rest of its sample, the next phrases "
        "of the same random order, so every sample extends its pilot. No sample below "
        f"{zero_rates_n(h, CI_ALPHA):,} per type reaches ±{100 * h:.1f} points whatever the rates "
        "(at rates 0 and 0 the half width is z²/(n + z²))"
        + (", so the pilot asks nothing the sample would not have asked anyway"
           if params["pilot_per_type"] <= zero_rates_n(h, CI_ALPHA) else "")
        + ". Each model may end with its own sample.")

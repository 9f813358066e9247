"""The chapter's English: claims rendered to sentences, a section's claims in the
sentence its glue name holds, and the headline (state media minus CulturaX) in words
and tables.

:func:`render` turns one claim of :mod:`.claims` into Markdown: the chapter's
sentence with the claim's numbers, then its status, marks and reason in the
book's one voice (:func:`analysis.core.claim_text.verdict`). The other functions
join a section's claims into the sentence its glue name holds, or set the
headline's differences beside the source's. Every decision is read from the
claims; nothing here decides again.

The rest of the chapter's wording, by section: :mod:`.text_rates` (numbers that are
not verdicts: rates, exclusions, the scorer's constants), :mod:`.text_lab` (the
lab's ladder), :mod:`.text_sizing` (the sample and its size) and
:mod:`.text_source` (the source's own completions).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from analysis.core.claim_text import STATUS_WORDS, verdict
from analysis.core.claims import Claim
from analysis.core.fmt import fmt_p, fmt_pct
from analysis.phrases.claims import by_kind
from analysis.phrases.method_rates import SEPARATION_ALPHA, source_type_gaps

#: how the distance comparisons name each phrase type
GAP_LABELS = {"propaganda": "state-media", "culturax": "CulturaX", "popular": "popular-text",
              "baseline": "2024–26 story"}
NO_BOTH_TYPES = "No model has scorable completions of both types to compare."


def _count(n: int, one: str, many: str) -> str:
    """``n`` and its noun, singular for exactly one: "1 refusal", "0 refusals"."""
    return f"{n:,} {one if n == 1 else many}"


def _copies(n: int) -> str:
    return _count(n, "copy", "copies")


def _matches(n: int) -> str:
    return _count(n, "match", "matches")


def _join(parts: Sequence[str]) -> str:
    parts = list(parts)
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


# ---------------------------------------------------------------------------
# One claim, one sentence: the chapter's numbers, then the book's verdict
# ---------------------------------------------------------------------------


def _state_media_gap(c: Claim) -> str:
    e = c.extra
    if "total_first" not in e:
        return f"For {e['model']}, no scorable completions of both types are left to compare."
    rate_a, rate_b = e["matched_first"] / e["total_first"], e["matched_second"] / e["total_second"]
    lo, hi = c.interval or (float("nan"), float("nan"))
    holm = f", Holm-adjusted {fmt_p(c.p_adjusted)}" if c.p_adjusted is not None else ""
    can = "can" if hi < e["source_effect"] else "cannot"
    return (f"{e['model']} reproduces {fmt_pct(rate_a)} of state-media and {fmt_pct(rate_b)} of CulturaX "
            f"endings ({e['matched_first']} of {e['total_first']} against {e['matched_second']} of "
            f"{e['total_second']} phrases), a difference of {100 * c.value:+.1f} points "
            f"[{100 * lo:+.1f}, {100 * hi:+.1f}] with one-sided Fisher exact p {fmt_p(c.p)}{holm}. Its "
            f"interval excludes gaps above {100 * hi:+.1f} points, so this run {can} rule out the source's "
            f"smallest gap, {100 * e['source_effect']:+.1f} points.")


_WHERE = {"below": "below the source's range even at the top of its 95% interval",
          "above": "above the source's range even at the bottom of its 95% interval",
          "inside": "inside the source's range",
          "overlaps": "within reach of the source's range (its 95% interval overlaps it)"}


def _range_part(c: Claim) -> str:
    e = c.extra
    if "rate" not in e:
        return f"{e['model']} has no scorable state-media completion"
    return f"{e['model']} ({fmt_pct(e['rate'])} of {e['n']:,}) is {_WHERE[e['where']]}"


def _range_lead(c: Claim) -> str:
    return (f"The source's 2024 models reproduce {fmt_pct(c.extra['source_lo'])} to "
            f"{fmt_pct(c.extra['source_hi'])} of state-media endings")


def _distance_gap(c: Claim) -> str:
    e = c.extra
    first, second = GAP_LABELS.get(e["first"], e["first"]), GAP_LABELS.get(e["second"], e["second"])
    if "n_first" not in e:
        return f"For {e['model']}, no scorable completions of both {first} and {second} phrases are left."
    return (f"For {e['model']}, a {first} completion is the closer to its ending in {fmt_pct(c.value)} of "
            f"pairs with a {second} one (median distance {e['median_first']:.3f} vs "
            f"{e['median_second']:.3f}, n = {e['n_first']} and {e['n_second']}; permutation null "
            f"{c.null_value:.3f} over {_count(c.n_units, c.unit[:-1], c.unit)}, p {fmt_p(c.p)}, "
            f"Holm-adjusted {fmt_p(c.p_adjusted)}).")


def _comma_refusals(c: Claim) -> str:
    e = c.extra
    if not c.n:
        if e.get("n_errors"):
            return f"No completion could be checked for refusals: all {e['n_errors']:,} requests failed."
        return "No completion of this run was scored, so there are no refusals to count."
    text = (f"The faithful refusal detector finds {_count(e['faithful'], 'refusal', 'refusals')} among "
            f"{_count(c.n, 'completion', 'completions')} and the fixed one {e['fixed']}")
    more = e["fixed"] - e["faithful"]
    if more > 0:
        return (f"{text}; the {more} more {'comes' if more == 1 else 'come'} only from the "
                f"{e['n_comma_patterns']} patterns with a comma, which the faithful mode can never match.")
    return (f"{text}: the {e['n_comma_patterns']} patterns with a comma, which the faithful mode can never "
            "match, fire on no completion of this run.")


def _windowed(c: Claim) -> str:
    e = c.extra
    if not c.n:
        return "No completion of this run was scored, so the two matching modes are not compared."
    return (f"Here the window finds {_matches(e['windowed'])} against {e['prefix']} for the prefix rule, and "
            f"fewer in {e['fewer_pairs']} of {e['n_pairs']} model–type pairs.")


def _lab_controls(c: Claim) -> str:
    e = c.extra
    if not e.get("total"):
        return "No never-trained control phrase checks the method's false positives."
    phrases = _count(c.n_units, "never-trained control phrase", "never-trained control phrases")
    return (f"{e['matched']} of {e['total']:,} completions of the {phrases} count as memorized "
            f"({e['models_matched']} of {e['n_models']} models).")


def _lab_share(c: Claim) -> str:
    e = c.extra
    if "n_models" not in e:
        return "Nothing to compare on the lab's ladder."
    if e["kind"] == "lab_rises":
        return (f"The rate never falls and ends higher with copies for {e['count']} of {e['n_models']} "
                f"ladder models; the smallest Spearman's ρ of a model's matches against copies is "
                f"{'—' if c.value is None else f'{c.value:.2f}'}, the largest one-sided permutation p "
                f"{fmt_p(c.p) if c.p is not None else 'not computed'}.")
    found = [lvl for lvl in e["first_level"].values() if lvl is not None]
    where = f", from {_copies(min(found))} at best" if found else ""
    return (f"{e['count']} of {e['n_models']} ladder models reproduce some trained level's phrases more "
            f"often than the never-trained controls' (one-sided Fisher exact test, "
            f"p < {SEPARATION_ALPHA:g}){where}; the weakest model's p, Bonferroni over the levels, is "
            f"{fmt_p(c.p) if c.p is not None else 'not computed'}.")


def _lab_size(c: Claim) -> str:
    e = c.extra
    if c.value is None:
        return "The lab's ladder cannot compare model sizes within a family."
    lo, hi = c.interval or (float("nan"), float("nan"))
    fams = [f for f in e.get("families", []) if f.get("size_term") is not None]
    each = (" Fitted in each family alone: " + "; ".join(
        f"{f['family']} ({f['models']} models, {f['params_span']:.1f}× in parameters) {f['size_term']:+.2f} "
        f"[{f['ci_lo']:+.2f}, {f['ci_hi']:+.2f}]" for f in fams) + "." if fams else "")
    ctl = (f" On the never-trained control phrases the same term is {c.control_value:+.2f}."
           if c.control_value is not None else "")
    return (f"At a fixed number of copies, each doubling of a ladder model's parameters within its family "
            f"changes the log-odds that it reproduces a trained phrase by {c.value:+.2f} [{lo:+.2f}, "
            f"{hi:+.2f}] (Firth logistic fit with an intercept per family over {c.n:,} completions of "
            f"{c.n_units} phrases; 95% cluster-bootstrap interval over phrases).{each}{ctl}")


def _source_range(c: Claim) -> str:
    return f"{_range_lead(c)}; {_range_part(c)}."


def _gap_counts(c: Claim) -> str:
    e = c.extra
    return (f"{fmt_pct(e['matched_first'] / e['total_first'])} of state-media and "
            f"{fmt_pct(e['matched_second'] / e['total_second'])} of CulturaX endings "
            f"({e['matched_first']:,} of {e['total_first']:,} against {e['matched_second']:,} of "
            f"{e['total_second']:,} phrases)")


def _gap_test(c: Claim) -> str:
    holm = f", Holm-adjusted {fmt_p(c.p_adjusted)}" if c.p_adjusted is not None else ""
    return f"a difference of {_difference(c)} with one-sided Fisher exact p {fmt_p(c.p)}{holm}"


def _source_gap(c: Claim) -> str:
    e = c.extra
    if "total_first" not in e:
        return f"On the source's own completions, {e['model']} has no sample of its own to test."
    return (f"On the sample of the source's own completions, rescored here, {e['model']} reproduces "
            f"{_gap_counts(c)}, {_gap_test(c)}.")


def _paper_gap(c: Claim) -> str:
    return (f"Read as counts of {c.extra['total_first']:,} phrases per type, the source's 2024 figure gives "
            f"{c.extra['model']} {_gap_counts(c)}, {_gap_test(c)}.")


def _models_2026(c: Claim) -> str:
    return (f"The source also reports {len(c.extra['models'])} models queried in 2026 with a system "
            "message asking for a direct continuation and a budget of 256 tokens: "
            f"{_join(c.extra['models'])}.")


_RENDER = {"source_gap": _source_gap, "paper_gap": _paper_gap, "models_2026": _models_2026,
           "state_media_gap": _state_media_gap, "distance_gap": _distance_gap,
           "comma_refusals": _comma_refusals, "windowed": _windowed, "lab_controls": _lab_controls,
           "lab_separated": _lab_share, "lab_rises": _lab_share, "lab_size": _lab_size,
           "source_range": _source_range}


def render(claim: Claim) -> str:
    """One claim of the chapter as Markdown (what ``claim_<id>`` glues): its
    numbers in the chapter's words, then :func:`~analysis.core.claim_text.verdict`."""
    kind = claim.extra.get("kind")
    if kind not in _RENDER:
        raise KeyError(f"claim {claim.id!r}: no wording for kind {kind!r}")
    return f"{_RENDER[kind](claim)} {verdict(claim)}"


# ---------------------------------------------------------------------------
# A section's claims, in the sentence its glue name holds
# ---------------------------------------------------------------------------


def comparison_verdict(claims: Sequence[Claim]) -> str:
    """Where each model's state-media rate falls beside the source's range
    (``verdict``), from :func:`.claims.source_range_claims`, and why that is not a
    test."""
    measured = [c for c in by_kind(claims, "source_range") if "rate" in c.extra]
    if not measured:
        return "This run has no scorable completion to set beside the source's rates."
    return (f"{_range_lead(measured[0])}; " + "; ".join(_range_part(c) for c in measured)
            + f". {verdict(measured[0])}")


def gap_sentences(claims: Sequence[Claim], lang: str | None = None) -> str:
    """The distance comparisons of one language (``gap_zh``, ``gap_en``; all of
    them when ``lang`` is None), one sentence per model with both types, from
    :func:`.claims.distance_gap_claims`."""
    measured = [c for c in by_kind(claims, "distance_gap") if "n_first" in c.extra
                and (lang is None or c.id.startswith(f"distance_gap_{lang}_"))]
    return " ".join(render(c) for c in measured) if measured else NO_BOTH_TYPES


def state_media_gap_text(claims: Sequence[Claim]) -> str:
    """The source's headline per model (``state_media_gap``), from
    :func:`.claims.state_media_gap_claims`."""
    gaps = by_kind(claims, "state_media_gap")
    return " ".join(render(c) for c in gaps) if gaps else NO_BOTH_TYPES


def refusal_sentence(claims: Sequence[Claim]) -> str:
    """The refusals in both modes (``refusals``), from :func:`.claims.refusal_claim`."""
    return " ".join(render(c) for c in by_kind(claims, "comma_refusals"))


def status_tally(claims: Sequence[Claim]) -> str:
    """How many of ``claims`` have each status they reach, in the book's words:
    "1 inconclusive and 1 not testable here" (every status of their kind that occurs)."""
    counts = {}
    for c in claims:
        counts[c.status] = counts.get(c.status, 0) + 1
    order = [s for s in STATUS_WORDS if s in counts]
    return _join([f"{counts[s]} {s}" for s in order]) if order else "none"




# ---------------------------------------------------------------------------
# The headline: state media minus CulturaX, per model, beside the source's
# ---------------------------------------------------------------------------

NOT_MEASURED = "not measured (no scorable completions of both types)"
DIFFERENCE_COLUMNS = ["who", "model", "state media", "CulturaX", "difference (points)", "95% interval",
                      "one-sided p", "n", "status"]


def _points(x: float) -> str:
    return f"{100 * x:+.1f}"


def _points_interval(c: Claim) -> str:
    lo, hi = c.interval or (float("nan"), float("nan"))
    return f"[{_points(lo)}, {_points(hi)}]"


def _difference(c: Claim) -> str:
    """A measured gap claim's difference with its interval: "+6.0 points [+1.7, +11.2]"."""
    return f"{_points(c.value)} points {_points_interval(c)}"


def _has_gap(c: Claim) -> bool:
    """Whether a state-media gap claim has a measured difference (a floor has one too)."""
    return "total_first" in c.extra


def _gap_of(claims: Sequence[Claim], model: str) -> Claim:
    (c,) = [c for c in by_kind(claims, "state_media_gap") if c.extra["model"] == model]
    return c


def difference_values(claims: Sequence[Claim], model: str) -> dict[str, str]:
    """``diff_sm_cx`` (the state-media rate minus the CulturaX rate in points,
    with its 95% Newcombe interval) and ``diff_p`` (its one-sided Fisher exact
    p-value) of ``model``'s :func:`.claims.state_media_gap_claims` claim."""
    c = _gap_of(claims, model)
    if not _has_gap(c):
        return {"diff_sm_cx": NOT_MEASURED, "diff_p": "not computed"}
    return {"diff_sm_cx": _difference(c), "diff_p": f"{c.p:.3g}"}


def _rate_cell(k: int, n: int) -> str:
    return f"{fmt_pct(k / n)} ({k} of {n})"


def difference_table(claims: Sequence[Claim], source: pd.DataFrame,
                     paper: Sequence[Claim] = ()) -> pd.DataFrame:
    """The headline per model (:data:`DIFFERENCE_COLUMNS`): this run's models
    with both rates, their difference, its interval, p, n and the claim's status,
    then the source's 2024 models with their published rates and difference; the
    source gives no interval, test or n, which ``paper``
    (:func:`.claims_source.paper_gap_claims`) supplies from its rates as counts."""
    by_model = {c.extra["model"]: c for c in paper}
    rows = []
    for c in by_kind(claims, "state_media_gap"):
        e = c.extra
        if not _has_gap(c):
            rows.append(["this run", e["model"], *["—"] * 6, c.status])
            continue
        rows.append(["this run", e["model"], _rate_cell(e["matched_first"], e["total_first"]),
                     _rate_cell(e["matched_second"], e["total_second"]), _points(c.value),
                     _points_interval(c), f"{c.p:.3g}", f"{c.n:,}", c.status])
    wide = source.pivot_table(index="model", columns="type", values="rate_pct", sort=False)
    for model, gap in source_type_gaps(source).items():
        both = (f"{wide.loc[model, t]:.1f}%" for t in ("propaganda", "culturax"))
        c = by_model.get(model)
        if c is None:
            rows.append(["source, 2024", model, *both, f"{gap:+.1f}", "not published", "—", "—", "—"])
            continue
        rows.append(["source, 2024", model, *both, f"{gap:+.1f}", f"{_points_interval(c)} (counts of "
                     f"{c.extra['total_first']:,} per type)", f"{c.p:.3g}", f"{c.n:,}", c.status])
    return pd.DataFrame(rows, columns=DIFFERENCE_COLUMNS)


def markdown_table(table: pd.DataFrame) -> str:
    """A table of strings as a Markdown pipe table (what ``diff_table`` glues)."""
    lines = ["| " + " | ".join(map(str, table.columns)) + " |", "|" + " --- |" * len(table.columns)]
    lines += ["| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |"
              for row in table.itertuples(index=False)]
    return "\n".join(lines)


def paper_significance(paper: Sequence[Claim]) -> str:
    """How many of the source's 2024 differences are significant as counts of its
    phrases (:func:`.claims_source.paper_gap_claims`), in words."""
    if not paper:
        return "no intervals given"
    n = paper[0].extra["total_first"]
    sig = [c.extra["model"] for c in paper if c.status == "reproduced"]
    not_sig = [c.extra["model"] for c in paper if c.status != "reproduced"]
    tail = f"; not {_join(not_sig)}" if not_sig else ""
    return (f"as counts of {n:,} phrases per type, {len(sig)} of {len(paper)} are significant at 0.05 "
            f"(one-sided Fisher exact test, Holm over the {len(paper)}){tail}")


def _source_gaps_sentence(source: pd.DataFrame, paper: Sequence[Claim] = ()) -> str:
    gaps = [f"{g:+.1f}" + (" points" if i == 0 else "") + f" for {m}"
            for i, (m, g) in enumerate(source_type_gaps(source).items())]
    listed = gaps[0] if len(gaps) == 1 else ", ".join(gaps[:-1]) + " and " + gaps[-1]
    return f"The source's 2024 models, read off its figure, show {listed} ({paper_significance(paper)})."


def difference_headline(claims: Sequence[Claim], source: pd.DataFrame, model: str,
                        paper: Sequence[Claim] = ()) -> str:
    """The headline number of ``model`` (``diff_headline``), then the source's
    difference for each of its 2024 models (with ``paper``, how many are significant)."""
    c = _gap_of(claims, model)
    if not _has_gap(c):
        ours = (f"For {model}, the difference is not measured: no scorable completions of both types are "
                "left.")
    else:
        ours = (f"For {model}, the state-media rate minus the CulturaX rate is {_difference(c)} (95% "
                f"Newcombe interval; one-sided Fisher exact p = {c.p:.3g}, n = {c.n:,}).")
    return f"{ours} {_source_gaps_sentence(source, paper)}"


def _source_finding(source: pd.DataFrame) -> str:
    gaps = source_type_gaps(source)
    return (f"{int((gaps > 0).sum())} of {len(gaps)} models, by {gaps.min():+.1f} to {gaps.max():+.1f} "
            "points")


def difference_verdict(claims: Sequence[Claim], source: pd.DataFrame) -> str:
    """The source's headline against this run's, model by model (``diff_verdict``),
    from :func:`.claims.state_media_gap_claims`: each model's difference with its
    status, then the statuses counted."""
    gaps = by_kind(claims, "state_media_gap")
    lead = ("The source's finding is a difference: its 2024 models complete state-media phrases more often "
            f"than CulturaX phrases ({_source_finding(source)}).")
    if not any(_has_gap(c) for c in gaps):
        return f"{lead} No model of this run has scorable completions of both types to compare."
    parts = [f"{_difference(c) if _has_gap(c) else 'not measured'} for {c.extra['model']} ({c.status})"
             for c in gaps]
    return (f"{lead} In this run, state media minus CulturaX is {_join(parts)}, the models one Holm family: "
            f"of {_count(len(gaps), 'model', 'models')}, {status_tally(gaps)}.")


def difference_summary(claims: Sequence[Claim], source: pd.DataFrame) -> str:
    """The headline in one sentence for the chapter's summary (``diff_summary``)."""
    src = source_type_gaps(source)
    lead = ("The source's headline, state-media phrases completed more often than CulturaX phrases "
            f"({src.min():+.1f} to {src.max():+.1f} points for its 2024 models)")
    gaps = by_kind(claims, "state_media_gap")
    if not any(_has_gap(c) for c in gaps):
        return f"{lead}, cannot be tested here: no model of this run has scorable completions of both types."
    return f"{lead}: of the {_count(len(gaps), 'model', 'models')} of this run, {status_tally(gaps)}."

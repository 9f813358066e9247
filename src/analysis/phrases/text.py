"""The chapter's English: claims rendered to sentences, captions and prose numbers.

:func:`render` turns one claim of :mod:`.claims` into Markdown: the chapter's
sentence with the claim's numbers, then its status, marks and reason in the
book's one voice (:func:`analysis.core.claim_text.verdict`). The other functions
join a section's claims into the sentence its glue name holds, or word numbers
that are not verdicts (a rate with its interval, the lab's design, the tables for
display). Every decision is read from the claims; nothing here decides again.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import pandas as pd

from analysis.core.claim_text import STATUS_WORDS, verdict
from analysis.core.claims import Claim
from analysis.core.fmt import fmt_interval, fmt_p, fmt_pct
from analysis.lab.corpus import PHRASE_PROBE_WORDS
from analysis.phrases.claims import by_kind, model_slug
from analysis.phrases.method_rates import SEPARATION_ALPHA, exclusion_counts, source_range, source_type_gaps
from analysis.phrases.source import COMMA_REFUSAL_PATTERNS, EMPTY_MIN_CHARS, REFUSAL_PATTERNS, THRESHOLD
from analysis.stats.intervals import CI_ALPHA
from analysis.stats.sizing import PLANNING_ASSURANCE, zero_rates_n

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


# ---------------------------------------------------------------------------
# Numbers in words that are not verdicts
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# The lab
# ---------------------------------------------------------------------------


def lab_design(phrases: pd.DataFrame) -> str:
    """The lab's phrase design in a sentence, from :func:`.run.lab_phrases`:
    how many phrases, how many at each trained copy level and how many never
    trained, and the words they add to the training stream (copies counted)."""
    if phrases.empty:
        return ("The lab of this run has no phrase documents (its corpus configuration sets "
                "`phrases_per_level` to zero), so this section has nothing to score; a lab profile with "
                "phrase documents fills it.")
    trained = phrases[phrases["copies"] > 0]
    per = phrases.groupby("copies").size()
    levels = ", ".join(f"{per[c]} trained {c} {'time' if c == 1 else 'times'}"
                       for c in sorted(set(trained["copies"])))
    controls = f" and {per[0]} never trained (the controls)" if 0 in per.index else ""
    words = int((trained["phrase"].str.split().str.len() * trained["copies"]).sum())
    return (f"Its corpus holds {len(phrases):,} of the English counterpart's popular-text phrases, each a "
            f"document of its own: {levels}{controls}. They add {words:,} words to the training stream, "
            f"copies counted, and no other document of the corpus repeats a run of {PHRASE_PROBE_WORDS} of "
            "their words, so a phrase's copies are exactly what the models saw of it.")


def _fmt_count(n: float) -> str:
    n = float(n)
    if n < 1e5:
        return f"{n / 1e3:.0f}K"
    return f"{n / 1e6:.2f}M" if n < 1e6 else f"{n / 1e6:.1f}M"


def _model_sentence(name: str, rows: pd.DataFrame, level: int | None) -> str:
    """One model's rates at every trained level, and ``level``, the first that
    separates from the controls (the ``lab_separated`` claim's)."""
    size = f"{name} ({_fmt_count(rows['params'].iloc[0])} parameters)"
    trained = rows[(rows["copies"] > 0) & (rows["total"] > 0)].sort_values("copies", ascending=False)
    if trained.empty:
        return f"{size} has no scorable completion of a trained phrase."
    if not trained["matched"].any():
        n = int(trained["total"].sum())
        return f"{size} reproduces none of the {n} trained phrases it was scored on, at any copy level."
    parts = [f"{fmt_pct(r.rate)} ({r.matched} of {r.total}) at {_copies(r.copies)}"
             for r in trained.itertuples()]
    where = (f"its rate first lies above the controls' at {_copies(level)}"
             if level is not None else "at no copy level does its rate lie above the controls'")
    where += f" (one-sided Fisher exact test, p < {SEPARATION_ALPHA:g})"
    return f"{size} reproduces {'; '.join(parts)}: {where}."


def _controls_sentence(c: Claim) -> str:
    e = c.extra
    if e["matched"] == 0 and e["matched_all"] == 0:
        return ("No completion counts as memorized, of the never-trained control phrases "
                f"(0 of {e['total']:,} scorable, all models together) or of the trained ones: the method "
                "finds nothing here, and nothing false.")
    if e["matched"] == 0:
        return (f"No completion of a never-trained control phrase counts as memorized (0 of {e['total']:,} "
                f"scorable completions of {_count(c.n_units, 'phrase', 'phrases')}, all models together).")
    return (f"{e['matched']} of {e['total']:,} completions of never-trained control phrases count as "
            f"memorized ({e['models_matched']} of {e['n_models']} models): the threshold admits endings a "
            "model can guess without having seen the phrase.")


def _top_sentence(top: Mapping) -> str:
    order = {"above": "above", "below": "below", "equal": "equal to"}[top["order"]]
    overlap = "overlap" if top["overlap"] else "do not overlap"
    return (f"At {top['copies']} copies the largest model's rate ({fmt_pct(top['rate_large'])}) is {order} "
            f"the smallest's ({fmt_pct(top['rate_small'])}); their 95% intervals {overlap}.")


def lab_verdict(table: pd.DataFrame, claims: Sequence[Claim]) -> str:
    """What the method finds on the lab's ladder, set against the truth, in words.

    From :func:`.method_rates.rates_by_copies` and its :func:`.claims.lab_claims`:
    the false positives on the never-trained
    controls; for the smallest and the largest model, the rate at every trained
    level and the first level whose rate exceeds the controls'; how many models
    separate and how many rise with copies; and the largest model against the
    smallest at the top level; each claim's verdict after its numbers.
    """
    if table.empty:
        return ("This lab has no phrase documents (its corpus sets `phrases_per_level` to zero), so there is "
                "no truth to set the method's rates beside.")
    kinds = ("lab_controls", "lab_separated", "lab_rises", "lab_size")
    (controls,), (separated,), (rising,), (size,) = (by_kind(claims, k) for k in kinds)
    models = list(dict.fromkeys(table["model"]))
    levels = separated.extra["first_level"]
    out = ([_controls_sentence(controls), verdict(controls)] if controls.extra.get("has_controls") else [])
    ends = [models[0]] if len(models) == 1 else [models[0], models[-1]]
    out += [_model_sentence(m, table[table["model"] == m], levels[m]) for m in ends]
    out.append(f"Over the whole ladder, {separated.extra['count']} of {len(models)} models separate some "
               f"trained level from the controls, and the rate rises with copies for {rising.extra['count']} "
               "of them.")
    out += [f"That every model separates: {verdict(separated)}",
            f"That every model's rate rises with copies: {verdict(rising)}"]
    if size.extra.get("top"):
        out.append(_top_sentence(size.extra["top"]))
    return " ".join(out)


def lab_summary(table: pd.DataFrame, claims: Sequence[Claim]) -> str:
    """One sentence for the chapter's summary: how many ladder models the method
    separates from the never-trained controls, and its false positives on them."""
    if table.empty:
        return ("The lab in this run has no phrase documents, so the method is not checked against a known "
                "truth.")
    (controls,), (separated,) = by_kind(claims, "lab_controls"), by_kind(claims, "lab_separated")
    found = [lvl for lvl in separated.extra["first_level"].values() if lvl is not None]
    e = controls.extra
    fp = (f"; {e['matched']} of {e['total']:,} control completions are false matches"
          if e.get("has_controls") else "")
    if not found:
        return (f"On the lab's ladder, where the copies are known, no model's rate at any trained level lies "
                f"above the never-trained controls'{fp}.")
    return (f"On the lab's ladder, where the copies are known, {len(found)} of "
            f"{separated.extra['n_models']} models reproduce trained phrases above the controls' rate, from "
            f"{_copies(min(found))} at best{fp}.")


def lab_rate_table(table: pd.DataFrame) -> pd.DataFrame:
    """Matched / scorable and the rate per model (rows, smallest first) and copy
    level (columns; "never trained" = the controls), for display."""
    if table.empty:
        return pd.DataFrame()
    cell = [f"{m} / {t} ({fmt_pct(r)})" if t else "—" for m, t, r in
            zip(table["matched"], table["total"], table["rate"])]
    level = table["copies"].map(lambda c: "never trained" if c == 0 else f"{c}×")
    frame = table.assign(cell=cell, level=level, size=table["params"].map(_fmt_count))
    wide = frame.pivot_table(index=["model", "size"], columns="level", values="cell", aggfunc="first",
                             sort=False)
    order = list(dict.fromkeys(frame.sort_values("copies")["level"]))
    return wide[order].rename_axis(columns="copies in training")


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

"""The chapter's decisions, as :class:`~analysis.core.claims.Claim` values.

Each function takes the numbers a section of ``notebooks/phrases.md`` computes
and returns the claims that section states, with their status and its reason:

* :func:`state_media_gap_claims`: the source's headline, per model: state-media
  endings are reproduced more often than CulturaX endings;
* :func:`source_range_claims`: each model's state-media rate beside the range
  of the source's five 2024 models (not testable here: a claim about models this
  run does not have);
* :func:`distance_gap_claims`: the book's addition below the threshold, per
  model and language: completions of the first type come closer to their
  endings (one Holm family of four);
* :func:`refusal_claim` and :func:`windowed_claim`: what the source's refusal
  patterns miss, and that its sliding window never loses a match;
* :func:`lab_claims`: the method against the truth on the lab's ladder.

Every status comes from :func:`analysis.core.claims.decide` (or its wrappers):
each claim names its unit (phrases; the texts the English phrases come from;
the ladder's models), its null and its negative control (the lab's never-trained
phrases) or why none applies. The tests on whole units are in :mod:`.inference`.
The wording is in :mod:`.text`; the claims' statements are data, kept here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

import pandas as pd

from analysis.core.claims import (
    EXTENSION,
    NOT_TESTABLE,
    SOURCE,
    Claim,
    Verdict,
    as_kind,
    decide,
    not_testable,
    within,
)
from analysis.phrases.inference import copies_trend, logit_size_term, separation_p, size_trend
from analysis.phrases.method_rates import (
    SEPARATION_ALPHA,
    first_separated,
    rises_with_copies,
    source_range,
    source_type_gaps,
    type_gap,
)
from analysis.phrases.source import COMMA_REFUSAL_PATTERNS, REFUSAL_PATTERNS, TYPES
from analysis.stats.intervals import wilson_interval
from analysis.stats.proportions import zero_rate_min_n
from analysis.stats.resampling import holm

CHAPTER = "phrases"
#: the level of every test of the chapter's claims
ALPHA = 0.05
#: units of each type a distance comparison needs; its permutation null is exact at any
#: size, and 10 + 10 units keep a single unit from deciding it (the smallest p it can
#: reach, 1 / C(20, 10), lies far below ALPHA)
GAP_MIN_PER_TYPE = 10
#: a false-positive rate that no false positive among the lab's control phrases must rule out
CONTROL_RATE_BOUND = 0.10
#: phrases completed by both models that the lab's size comparison needs
LAB_MIN_PER_MODEL = 20
#: the Holm families of the chapter
FAMILY_STATE_MEDIA = "state-media gap, per model"
FAMILY_DISTANCE = "distance gaps, per model and language"

# The MyST labels of the notebook's sections, which the scoreboard links to.
SECTION_RATES = "phrases-rates"
SECTION_REFUSALS = "phrases-refusals"
SECTION_MODES = "phrases-modes"
SECTION_ENGLISH = "phrases-english"
SECTION_LAB = "phrases-lab"
SECTION_SOURCE = "phrases-source"

STATEMENTS = {
    "state_media_gap": "Models complete state coordinated media phrases from memory more often than "
                       "general web text (CulturaX) phrases.",
    "source_range": "The source's five 2024 commercial models reproduce between their lowest and highest "
                    "rate of state-media endings.",
    "distance_gap_zh": "Below the threshold, completions of state-media phrases lie closer to their endings "
                       "than completions of CulturaX phrases (the book's addition: the source reports "
                       "only rates).",
    "distance_gap_en": "Completions of phrases from popular texts (surely in pretraining) lie closer to "
                       "their endings than completions of phrases from 2024–26 stories (surely not).",
    "comma_refusals": "The source's refusal check removes commas before it searches its patterns, so the "
                      "patterns that spell a comma never fire and the refusals they describe stay in the "
                      "denominator.",
    "windowed_not_below_prefix": "Sliding-window matching only increases match counts (never decreases "
                                 "them) against the paper's prefix matching.",
    "lab_controls": "No completion of a phrase the lab never trained counts as memorized: the threshold "
                    "admits no ending a model can guess.",
    "lab_separated": "Where the copies are known, every ladder model reproduces the phrases of some trained "
                     "copy level more often than the never-trained controls.",
    "lab_rises": "On every ladder model, the memorized rate rises with a phrase's copies in training.",
    "lab_size": "Larger models show higher memorization rates.",
}
GAP_TYPES = {"zh": TYPES, "en": ("popular", "baseline")}
GAP_SECTIONS = {"zh": SECTION_MODES, "en": SECTION_ENGLISH}
#: the units of each language's distance comparison
GAP_UNITS = {"zh": "phrases", "en": "texts"}
#: why a claim on the embedded models has no negative control
NO_REAL_CONTROL = "no phrase of either type is known to be absent from these models' training data"
WINDOW_BY_DESIGN = ("holds for any data at a threshold of at most 0.5: the window's first position is the "
                    "prefix, and a completion shorter than the ending is at distance above 0.5")


def _finite(x) -> float | None:
    """A number for a claim's ``extra`` (which travels as strict JSON): NaN as None."""
    return None if x is None or not math.isfinite(float(x)) else float(x)


def model_slug(name: str) -> str:
    """A model name as a claim id part: lower case, runs of other characters as ``_``."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def _models(table: pd.DataFrame, models: Sequence[str] | None) -> list[str]:
    """The models in ``table``, in its order, then those of ``models`` it lacks
    (their claims are not testable); with ``models`` None, only the table's."""
    present = list(dict.fromkeys(table["model"])) if len(table) else []
    return present + [m for m in (models or []) if m not in present]


def _claim(key: str, id: str, verdict: Verdict | tuple[str, str], kind: str = EXTENSION, **kw) -> Claim:
    """A claim of ``kind`` from a decided verdict (``decide``'s, or ``within``'s pair)."""
    status, reason, *mech = verdict
    return Claim(id=id, chapter=CHAPTER, statement=STATEMENTS[key], status=as_kind(status, kind),
                 reason=reason, kind=kind, mechanical=bool(mech and mech[0]), **kw)


def _tests(n: int) -> str:
    return f"{n} {'test' if n == 1 else 'tests'}"


def _family(claims: list[Claim], name: str, decide_kw: Mapping[str, dict]) -> list[Claim]:
    """Holm's correction over the claims with a p-value, each re-decided on its
    adjusted p (``decide_kw[id]`` the rest of its :func:`decide` arguments)."""
    tested = [c for c in claims if c.id in decide_kw and c.p is not None]
    adjusted = dict(zip((c.id for c in tested), holm([c.p for c in tested])))
    out = []
    for c in claims:
        if c.id not in adjusted:
            out.append(c)
            continue
        v = decide(p=adjusted[c.id], adjusted=True, **decide_kw[c.id])
        out.append(Claim(**{**c.to_dict(), "interval": c.interval, "status": as_kind(v.status, c.kind),
                            "reason": f"{v.reason} (Holm over the family's {_tests(len(tested))})",
                            "mechanical": v.mechanical, "family": name, "p_adjusted": adjusted[c.id]}))
    return out


# ---------------------------------------------------------------------------
# The source's comparisons: the rate gap between types, the source's range
# ---------------------------------------------------------------------------


def state_media_gap_min_n(source: pd.DataFrame) -> int:
    """The scorable phrases of both types together that a model's
    :func:`state_media_gap_claims` claim needs: twice the phrases per type at
    which no match at all rules out the source's lowest state-media rate
    (:func:`analysis.stats.proportions.zero_rate_min_n`)."""
    return 2 * zero_rate_min_n(source_range(source)[0])


def state_media_gap_claims(rates: pd.DataFrame, source: pd.DataFrame,
                           models: Sequence[str] | None = None) -> list[Claim]:
    """The source's headline for each model: the state-media rate minus the
    CulturaX rate (:func:`.method_rates.type_gap`), one-sided Fisher exact test
    (an exact null), the unit a phrase (each phrase's completion counts once).

    The models are one Holm family. ``min_n`` is twice the phrases per type at
    which no match at all rules out the source's lowest state-media rate. A model
    that matches no phrase of either type sits at the measurement's floor and is
    not testable (its test could reject nothing, so it stays out of the family). A
    non-significant gap is not reproduced only if its Newcombe interval excludes
    the source's smallest gap; the model's own value is also in ``extra``
    (``source_effect``). A model without scorable completions of both types is not
    testable."""
    gaps = type_gap(rates).set_index("model")
    src = source_type_gaps(source)
    source_value = (f"+{src.min():.1f} to +{src.max():.1f} points; state media higher for "
                    f"{int((src > 0).sum())} of {len(src)} models")
    effect = float(src.min()) / 100
    min_n = state_media_gap_min_n(source)
    comparison = ("state-media rate − CulturaX rate > 0, one-sided Fisher exact test, Holm over the models; "
                  f"not reproduced if the interval excludes the source's smallest gap ({100 * effect:+.1f})")
    common = dict(comparison=comparison, source_value=source_value, section=SECTION_RATES, unit="phrases",
                  kind=SOURCE, control_reason=NO_REAL_CONTROL)
    out, family = [], {}
    for model in _models(rates, models):
        id = f"state_media_gap_{model_slug(model)}"
        if model not in gaps.index:
            out.append(not_testable(id, CHAPTER, STATEMENTS["state_media_gap"],
                                    "no scorable completions of both types",
                                    extra={"kind": "state_media_gap", "model": model},
                                    **{**common, "control_reason": "no value to control"}))
            continue
        g = gaps.loc[model]
        counts = {k: int(g[k]) for k in ("matched_first", "total_first", "matched_second", "total_second")}
        n = counts["total_first"] + counts["total_second"]
        floor = (f"floor (0 of {counts['total_first']} against 0 of {counts['total_second']} matched)"
                 if counts["matched_first"] == counts["matched_second"] == 0 else None)
        kw = dict(value=g["difference"], null=0.0, n_units=n, min_n=min_n, interval=(g["ci_lo"], g["ci_hi"]),
                  source_effect=effect, floor=floor, unit="phrases")
        if floor is None:
            family[id] = kw
        out.append(_claim("state_media_gap", id, decide(p=g["p_value"], **kw), value=g["difference"],
                          interval=(g["ci_lo"], g["ci_hi"]), n=n, n_units=n, p=g["p_value"], min_n=min_n,
                          null_kind="analytic", null_value=0.0,
                          extra={"kind": "state_media_gap", "model": model, "source_effect": effect,
                                 "floor": floor is not None, **counts}, **common))
    return _family(out, FAMILY_STATE_MEDIA, family)


def range_position(rate: float, ci_lo: float, ci_hi: float, lo: float, hi: float) -> str:
    """Where a rate with its interval falls against the range [``lo``, ``hi``]:
    ``"below"`` or ``"above"`` (the whole interval outside), ``"inside"`` (the rate
    itself inside) or ``"overlaps"`` (the rate outside, its interval reaching in)."""
    if ci_hi < lo:
        return "below"
    if ci_lo > hi:
        return "above"
    return "inside" if lo <= rate <= hi else "overlaps"


RANGE_NOT_TESTABLE = ("the range is that of the source's five 2024 commercial models, which this run does "
                      "not have")


def source_range_claims(rates: pd.DataFrame, source: pd.DataFrame,
                        models: Sequence[str] | None = None) -> list[Claim]:
    """Each model's state-media rate (:func:`.method_rates.rates`) beside the
    source's range (:func:`.method_rates.source_range`). The range is a claim about
    the source's frontier models, not about these, so every claim is not testable
    here; the rate, its Wilson interval, n and :func:`range_position` stay in
    ``extra`` for the prose."""
    lo, hi = source_range(source)
    sub = rates[rates["type"] == TYPES[0]].set_index("model")
    kw = dict(comparison="the state-media rate beside the source's lowest to highest rate",
              source_value=f"{100 * lo:.1f}% to {100 * hi:.1f}%", section=SECTION_SOURCE, unit="phrases",
              kind=SOURCE, control_reason="no control for a claim about other models")
    out = []
    for model in _models(rates, models):
        id = f"source_range_{model_slug(model)}"
        extra = {"kind": "source_range", "model": model, "source_lo": lo, "source_hi": hi}
        if model not in sub.index:
            out.append(not_testable(id, CHAPTER, STATEMENTS["source_range"], "no scorable state-media "
                                    "completion", extra=extra, **kw))
            continue
        r = sub.loc[model]
        n = int(r["total"])
        extra |= {"rate": float(r["rate"]), "ci_lo": float(r["ci_lo"]), "ci_hi": float(r["ci_hi"]), "n": n,
                  "where": range_position(r["rate"], r["ci_lo"], r["ci_hi"], lo, hi)}
        out.append(not_testable(id, CHAPTER, STATEMENTS["source_range"], RANGE_NOT_TESTABLE, n=n, n_units=n,
                                extra=extra, **kw))
    return out


# ---------------------------------------------------------------------------
# Below the threshold: distances
# ---------------------------------------------------------------------------


def distance_gap_claims(gaps: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]],
                        models: Sequence[str] | None = None) -> list[Claim]:
    """The book's distance comparisons, per language (``"zh"``: state media
    against CulturaX; ``"en"``: popular texts against 2024–26 stories) and model:
    are the first type's completions closer? ``gaps[lang]`` is the pair
    (:func:`.method_rates.distance_gap`, :func:`.inference.distance_gap_null`).
    The value is ``closer`` (the share of pairs in which the first type's
    completion is the closer one; 0.5 = no difference), tested against its
    permutation null (type labels permuted among phrases, or among the English
    phrases' texts); every claim of every language is one Holm family."""
    out, family = [], {}
    comparison = ("share of pairs with the first type closer, against its permutation null (labels "
                  "permuted among units), one-sided, Holm over the family")
    for lang, (gap, null) in gaps.items():
        first, second = GAP_TYPES[lang]
        key, unit = f"distance_gap_{lang}", GAP_UNITS[lang]
        rows = gap.set_index("model") if len(gap) else pd.DataFrame()
        nulls = null.set_index("model") if len(null) else pd.DataFrame()
        min_n = 2 * GAP_MIN_PER_TYPE
        for model in _models(gap, models):
            id = f"{key}_{model_slug(model)}"
            extra = {"kind": "distance_gap", "model": model, "first": first, "second": second}
            common = dict(comparison=comparison, section=GAP_SECTIONS[lang], unit=unit, kind=EXTENSION)
            if model not in rows.index or model not in nulls.index:
                out.append(not_testable(id, CHAPTER, STATEMENTS[key], "no scorable completions of both types",
                                        extra=extra, **common))
                continue
            r, z = rows.loc[model], nulls.loc[model]
            n, k = int(r["n_first"] + r["n_second"]), int(z["n_units"])
            kw = dict(value=z["closer"], null=z["null_closer"], n_units=k, min_n=min_n, unit=unit)
            family[id] = kw
            extra |= {k: float(r[k]) for k in ("median_first", "median_second")}
            extra |= {k: int(r[k]) for k in ("n_first", "n_second")}
            extra |= {"p_mann_whitney": _finite(r["p_value"])}
            out.append(_claim(key, id, decide(p=z["p_perm"], **kw), value=z["closer"], n=n, n_units=k,
                              p=z["p_perm"], min_n=min_n, null_kind="permutation",
                              null_value=z["null_closer"], control_reason=NO_REAL_CONTROL, extra=extra,
                              **common))
    return _family(out, FAMILY_DISTANCE, family)


# ---------------------------------------------------------------------------
# The scorer's rules: refusals and the sliding window
# ---------------------------------------------------------------------------


def refusal_claim(scored: dict) -> Claim:
    """What the source's faithful refusal check misses, from :func:`.method_rates.score_modes`:
    the refusals the fixed mode finds beyond the faithful one (they come only from
    the comma-bearing patterns), an exact count over the run's completions. One
    such refusal shows the claim; no refusal in either mode is the measurement's
    floor (the run had no refusal of that form to miss), so it is not testable.
    Its n counts completions: a failed request (``error``) is never an answer."""
    frame = scored[("windowed", "faithful")]
    errors = int(frame["error"].astype(bool).sum()) if "error" in frame.columns else 0
    faithful = int(frame["refused"].sum())
    fixed = int(scored[("windowed", "fixed")]["refused"].sum())
    n = len(frame) - errors
    extra = {"kind": "comma_refusals", "faithful": faithful, "fixed": fixed, "n_requests": len(frame),
             "n_errors": errors, "n_comma_patterns": len(COMMA_REFUSAL_PATTERNS),
             "n_patterns": len(REFUSAL_PATTERNS)}
    kw = dict(comparison="refusals found by the fixed mode − by the faithful mode > 0 (an exact count)",
              section=SECTION_REFUSALS, extra=extra, unit="completions", kind=EXTENSION,
              control_reason="an exact count of the scorer's misses; no set lacks them by construction")
    if n == 0:
        why = (f"all {errors} requests failed, so no completion could be checked" if errors
               else "no completion was scored")
        return not_testable("comma_refusals", CHAPTER, STATEMENTS["comma_refusals"], why, n=0, n_units=0,
                            **kw)
    more = fixed - faithful
    floor = "floor (no refusal in either mode)" if fixed == faithful == 0 else None
    # an exact count has no sampling error: its interval is the count itself
    v = decide(value=more, null=0.0, n_units=n, min_n=1, interval=(more, more), floor=floor,
               unit="completions")
    return _claim("comma_refusals", "comma_refusals", v, value=more, interval=(more, more), n=n, n_units=n,
                  min_n=1, null_kind="analytic", null_value=0.0, **kw)


def windowed_claim(by_mode: pd.DataFrame, threshold: float) -> Claim:
    """Windowed against prefix matching, from :func:`.method_rates.rates_by_mode`:
    an exact count of the model–type pairs in which the window finds fewer matches
    (does not hold if any), not testable when neither mode finds a match (the
    floor). At a threshold of at most 0.5 the window cannot lose a match (its
    first window is the prefix, and a shorter completion is at distance above
    0.5), so the claim then holds by design (it holds for any data)."""
    keys = ["model", "type"]
    w = by_mode[by_mode["mode"] == "windowed"].set_index(keys)["matched"]
    p = by_mode[by_mode["mode"] == "prefix"].set_index(keys)["matched"].reindex(w.index, fill_value=0)
    n = int(by_mode.loc[by_mode["mode"] == "windowed", "total"].sum())
    fewer = int((w < p).sum())
    extra = {"kind": "windowed", "windowed": int(w.sum()), "prefix": int(p.sum()), "threshold": threshold,
             "fewer_pairs": fewer, "n_pairs": len(w)}
    by_design = threshold <= 0.5
    kw = dict(comparison="model–type pairs in which the window finds fewer matches = 0 (an exact count)",
              section=SECTION_MODES, extra=extra, by_design=by_design,
              by_design_reason=WINDOW_BY_DESIGN if by_design else None, unit="completions", kind=EXTENSION,
              control_reason="an exact count over every completion; no set lacks the window by construction")
    if n == 0:
        return not_testable("windowed_not_below_prefix", CHAPTER, STATEMENTS["windowed_not_below_prefix"],
                            "no completion was scored", **kw)
    value = int(w.sum() - p.sum())
    if w.sum() == 0 and p.sum() == 0:
        v = decide(value=value, null=0.0, n_units=n, min_n=1, floor="floor (no match in either mode)")
    else:
        v = within(value=fewer, target=0, tolerance=0, n=n, min_n=1, exact=True, unit="completions")
    return _claim("windowed_not_below_prefix", "windowed_not_below_prefix", v, value=value, n=n, n_units=n,
                  min_n=1, null_kind="analytic", null_value=0.0, **kw)


# ---------------------------------------------------------------------------
# The lab: the truth is known
# ---------------------------------------------------------------------------


def _control_phrases(table: pd.DataFrame) -> int:
    """The never-trained control phrases (every model completes the same ones)."""
    controls = table[table["copies"] == 0]
    return int(controls["phrases"].max()) if len(controls) else 0


def _lab_controls(table: pd.DataFrame, models: list[str]) -> Claim:
    controls = table[table["copies"] == 0]
    k, n = int(controls["matched"].sum()), int(controls["total"].sum())
    who = int((controls["matched"] > 0).sum())
    units = _control_phrases(table)
    extra = {"kind": "lab_controls", "has_controls": bool(len(controls)), "matched": k, "total": n,
             "models_matched": who, "n_models": len(models), "matched_all": int(table["matched"].sum())}
    kw = dict(comparison="matched control completions = 0 (an exact count)", section=SECTION_LAB,
              extra=extra, unit="phrases", kind=EXTENSION,
              control_reason="it is the negative control of the lab's claims (never-trained phrases)")
    if not len(controls) or n == 0:
        return not_testable("lab_controls", CHAPTER, STATEMENTS["lab_controls"],
                            "this lab has no scorable never-trained control phrase", **kw)
    min_n = zero_rate_min_n(CONTROL_RATE_BOUND)
    lo, hi = (float(x) for x in wilson_interval(k, n))
    v = within(value=k, target=0, tolerance=0, n=units, min_n=min_n, exact=True, unit="phrases")
    return _claim("lab_controls", "lab_controls", v, value=k / n, interval=(lo, hi), n=n, n_units=units,
                  min_n=min_n, null_kind="analytic", null_value=0.0, **kw)


def _control_rate(table: pd.DataFrame) -> float | None:
    controls = table[table["copies"] == 0]
    n = int(controls["total"].sum())
    return int(controls["matched"].sum()) / n if n else None


def _nothing_matched(table: pd.DataFrame) -> str | None:
    """The floor of the lab's claims: no completion of any phrase matched on any model."""
    return "floor (no completion of any phrase matched)" if table["matched"].sum() == 0 else None


def _lab_separated(table: pd.DataFrame, models: list[str]) -> Claim:
    by_model = {m: table[table["model"] == m] for m in models}
    levels = {m: first_separated(rows, SEPARATION_ALPHA) for m, rows in by_model.items()}
    ps = {m: separation_p(rows) for m, rows in by_model.items()}
    hits = [m for m, lvl in levels.items() if lvl is not None]
    worst = None if any(math.isnan(p) for p in ps.values()) else max(ps.values())
    extra = {"kind": "lab_separated", "first_level": levels, "count": len(hits), "n_models": len(models),
             "p_model": {m: _finite(p) for m, p in ps.items()}}
    control = _control_rate(table)
    v = decide(value=len(hits) / len(models), null=0.0, p=worst, n_units=len(models), min_n=2, unit="models",
               control_value=control, floor=_nothing_matched(table))
    return _claim("lab_separated", "lab_separated", v, value=len(hits) / len(models), n=len(models),
                  n_units=len(models), p=worst, min_n=2, null_kind="analytic", null_value=0.0,
                  comparison="every model: some trained level's rate > the controls' (one-sided Fisher "
                             "exact, Bonferroni over the levels); the claim's p is the largest model's (an "
                             "intersection–union test)",
                  section=SECTION_LAB, unit="models", control_value=control,
                  control_reason=None if control is not None else "this lab has no scorable control phrase",
                  extra=extra)


def _lab_rises(rows: pd.DataFrame, table: pd.DataFrame, models: list[str]) -> Claim:
    tests = {m: copies_trend(rows[rows["model"] == m]) for m in models}
    rho = {m: t.value for m, t in tests.items()}
    monotone = [m for m in models if rises_with_copies(table[table["model"] == m])]
    finite = [r for r in rho.values() if not math.isnan(r)]
    value = min(finite) if finite else None
    worst = (None if len(finite) < len(models) or any(math.isnan(t.p) for t in tests.values())
             else max(t.p for t in tests.values()))
    nulls = [t.null_value for t in tests.values() if not math.isnan(t.null_value)]
    control = _control_rate(table)
    extra = {"kind": "lab_rises", "count": len(monotone), "n_models": len(models),
             "rho": {m: _finite(r) for m, r in rho.items()},
             "p_model": {m: _finite(t.p) for m, t in tests.items()}}
    floor = _nothing_matched(table)
    v = decide(value=0.0 if floor else value, null=0.0, p=worst, n_units=len(models), min_n=2, unit="models",
               control_value=control, floor=floor)
    return _claim("lab_rises", "lab_rises", v, value=value, n=len(rows), n_units=len(models), p=worst,
                  min_n=2, null_kind="permutation", null_value=max(nulls) if nulls else None,
                  comparison="every model: Spearman's ρ of matched against copies > 0, copies permuted among "
                             "phrases; the value is the smallest model's ρ, the p the largest (an "
                             "intersection–union test)",
                  section=SECTION_LAB, unit="models", control_value=control,
                  control_reason=None if control is not None else "this lab has no scorable control phrase",
                  extra=extra)


def _top_level(table: pd.DataFrame, small: str, large: str) -> dict:
    """The two models' rates at the top copy level, their order and whether their
    95% intervals overlap (empty when either has no scorable completion there)."""
    top = int(table["copies"].max())
    s = table[table["model"] == small].set_index("copies").loc[top]
    g = table[table["model"] == large].set_index("copies").loc[top]
    if not (math.isfinite(s["rate"]) and math.isfinite(g["rate"])):
        return {}
    order = "above" if g["rate"] > s["rate"] else "below" if g["rate"] < s["rate"] else "equal"
    return {"copies": top, "rate_small": float(s["rate"]), "rate_large": float(g["rate"]), "order": order,
            "overlap": bool(g["ci_lo"] <= s["ci_hi"] and s["ci_lo"] <= g["ci_hi"])}


def _ladder_of(table: pd.DataFrame, ladder: pd.DataFrame | None) -> pd.DataFrame:
    """``model``, ``family`` and ``params`` of the ladder: ``ladder`` itself, or from
    ``table`` (one family) when none is given."""
    if ladder is not None:
        return ladder[["model", "family", "params"]]
    first = table.drop_duplicates("model")
    return pd.DataFrame({"model": first["model"], "family": "ladder", "params": first["params"]})


def _lab_size(rows: pd.DataFrame, table: pd.DataFrame, models: list[str],
              ladder: pd.DataFrame | None = None) -> Claim:
    comparison = ("the log2(params) term of a Firth logistic fit of matched on an intercept per family, "
                  "log2 copies and log2 params over the trained phrases (the change in log-odds per "
                  "doubling of parameters at fixed copies, within families) > 0: its 95% cluster-bootstrap "
                  "interval over phrases excludes 0")
    kw = dict(comparison=comparison, source_value="higher for larger models", section=SECTION_LAB,
              unit="phrases", kind=SOURCE)
    if len(models) < 2:
        return not_testable("lab_size", CHAPTER, STATEMENTS["lab_size"], "the ladder has one model",
                            extra={"kind": "lab_size"}, **kw)
    info = _ladder_of(table, ladder)
    pooled, per_family = size_trend(rows, info)
    small, large = models[0], models[-1]
    extra = {"kind": "lab_size", "small": small, "large": large, "top": _top_level(table, small, large),
             "families": [{k: (_finite(v) if isinstance(v, float) else v) for k, v in r.items()}
                          for r in per_family.to_dict("records")]}
    trained = rows[rows["copies"] > 0]
    if trained.empty:
        return not_testable("lab_size", CHAPTER, STATEMENTS["lab_size"], "no scorable trained completion",
                            extra=extra, **kw)
    if not trained["matched"].any():
        floor = "floor (no trained phrase matched by any model)"
        v = decide(value=0.0, null=0.0, n_units=int(trained["phrase_id"].nunique()), min_n=LAB_MIN_PER_MODEL,
                   floor=floor, unit="phrases")
        return _claim("lab_size", "lab_size", v, n=len(trained), n_units=int(trained["phrase_id"].nunique()),
                      min_n=LAB_MIN_PER_MODEL, null_kind="none", control_reason="no value to control",
                      extra=extra, **kw)
    if pooled is None:
        return not_testable("lab_size", CHAPTER, STATEMENTS["lab_size"],
                            "the logistic fit has no size term to estimate (no family with two sizes)",
                            extra=extra, **kw)
    controls = rows[(rows["copies"] == 0) & rows["model"].isin(info["model"])].join(
        info.set_index("model"), on="model")
    ctl = logit_size_term(controls, True) if len(controls) else None
    control = dict(control_value=ctl.value, control_interval=ctl.interval) if ctl is not None else {}
    extra |= {"control_interval": list(ctl.interval) if ctl is not None and ctl.interval else None}
    v = decide(value=pooled.value, null=0.0, interval=pooled.interval, n_units=pooled.n_units,
               min_n=LAB_MIN_PER_MODEL, unit="phrases", **control)
    return _claim("lab_size", "lab_size", v, value=pooled.value, interval=pooled.interval, n=pooled.n,
                  n_units=pooled.n_units, min_n=LAB_MIN_PER_MODEL, null_kind="analytic",
                  null_value=0.0, control_value=control.get("control_value"),
                  control_reason=None if ctl is not None else (
                      "the same fit on the never-trained control phrases has nothing to fit (no control "
                      "phrase matched)"),
                  extra=extra, **kw)


def lab_claims(table: pd.DataFrame, rows: pd.DataFrame,
               ladder: pd.DataFrame | None = None) -> list[Claim]:
    """The lab section's claims from :func:`.method_rates.rates_by_copies`
    (``table``, models smallest first) and :func:`.inference.lab_rows` (``rows``,
    one per scorable completion): no false positive on the never-trained control
    phrases (``lab_controls``, the negative control of the others; ``min_n`` the
    control phrases at which none matching bounds the false-positive rate below
    :data:`CONTROL_RATE_BOUND`), every model separating a trained level from the
    controls (``lab_separated``) and rising with copies (``lab_rises``), and the
    memorization rising with size within the ladder's families (``lab_size``, the
    source's claim: :func:`.inference.size_trend` with ``ladder``'s families, one family
    when None; its control the same fit on the control phrases).
    None is by design: the lab fixes the copies, not what a model learns from
    them. A lab without phrase documents makes every one not testable."""
    if table.empty:
        why = "this lab has no phrase documents"
        return [not_testable(key, CHAPTER, STATEMENTS[key], why, section=SECTION_LAB, extra={"kind": key},
                             unit="models" if key in ("lab_separated", "lab_rises") else "phrases",
                             kind=SOURCE if key == "lab_size" else EXTENSION,
                             source_value="higher for larger models" if key == "lab_size" else None)
                for key in ("lab_controls", "lab_separated", "lab_rises", "lab_size")]
    models = list(dict.fromkeys(table["model"]))
    return [_lab_controls(table, models), _lab_separated(table, models), _lab_rises(rows, table, models),
            _lab_size(rows, table, models, ladder)]


def by_kind(claims: Sequence[Claim], kind: str) -> list[Claim]:
    """The claims of one kind (``extra["kind"]``), in order."""
    return [c for c in claims if c.extra.get("kind") == kind]


def is_tested(claim: Claim) -> bool:
    """Whether a claim has a status other than not testable."""
    return claim.status != NOT_TESTABLE

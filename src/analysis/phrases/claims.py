"""The chapter's decisions, as :class:`~analysis.core.claims.Claim` values.

Each function takes the numbers a section of ``notebooks/phrases.md`` computes
and returns the claims that section states, with their status and its reason:

* :func:`state_media_gap_claims`: the source's headline, per model: state-media
  endings are reproduced more often than CulturaX endings;
* :func:`source_range_claims`: each model's state-media rate against the range
  of the source's five 2024 models;
* :func:`distance_gap_claims`: the book's addition below the threshold, per
  model: completions of the first type come closer to their endings;
* :func:`refusal_claim` and :func:`windowed_claim`: what the source's refusal
  patterns miss, and that its sliding window never loses a match;
* :func:`lab_claims`: the method against the truth on the lab's ladder.

The wording is in :mod:`.text`; the claims' statements are data, kept here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import pandas as pd

from analysis.core.claims import (
    INCONCLUSIVE,
    NOT_REPRODUCED,
    REPRODUCED,
    Claim,
    directional,
    not_testable,
)
from analysis.phrases.method_rates import (
    SEPARATION_ALPHA,
    first_separated,
    pooled_trained,
    rises_with_copies,
    source_range,
    source_type_gaps,
    type_gap,
)
from analysis.phrases.source import COMMA_REFUSAL_PATTERNS, REFUSAL_PATTERNS, TYPES
from analysis.stats.intervals import wilson_interval
from analysis.stats.proportions import rate_difference, zero_rate_min_n

CHAPTER = "phrases"
#: the level of every test of the chapter's claims
ALPHA = 0.05
#: completions of each type a distance comparison needs (Mann–Whitney on 20 + 20 at least)
GAP_MIN_PER_TYPE = 20
#: a false-positive rate that no false positive among the lab's controls must rule out
CONTROL_RATE_BOUND = 0.10
#: scorable trained completions per model the lab's size comparison needs
LAB_MIN_PER_MODEL = 20

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


def model_slug(name: str) -> str:
    """A model name as a claim id part: lower case, runs of other characters as ``_``."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def _models(table: pd.DataFrame, models: Sequence[str] | None) -> list[str]:
    """The models in ``table``, in its order, then those of ``models`` it lacks
    (their claims are not testable); with ``models`` None, only the table's."""
    present = list(dict.fromkeys(table["model"])) if len(table) else []
    return present + [m for m in (models or []) if m not in present]


def _claim(key: str, id: str, status: str, reason: str, **kw) -> Claim:
    return Claim(id=id, chapter=CHAPTER, statement=STATEMENTS[key], status=status, reason=reason, **kw)


# ---------------------------------------------------------------------------
# The source's comparisons: the rate gap between types, the source's range
# ---------------------------------------------------------------------------


def state_media_gap_min_n(source: pd.DataFrame) -> int:
    """The scorable completions of both types together that a model's
    :func:`state_media_gap_claims` claim needs: twice the completions per type at
    which no match at all rules out the source's lowest state-media rate
    (:func:`analysis.stats.proportions.zero_rate_min_n`)."""
    return 2 * zero_rate_min_n(source_range(source)[0])


def state_media_gap_claims(rates: pd.DataFrame, source: pd.DataFrame,
                           models: Sequence[str] | None = None) -> list[Claim]:
    """The source's headline for each model: the state-media rate minus the
    CulturaX rate (:func:`.method_rates.type_gap`), one-sided Fisher exact test,
    ``n`` the scorable completions of both types. ``min_n`` is twice the
    completions per type at which no match at all rules out the source's lowest
    state-media rate (:func:`analysis.stats.proportions.zero_rate_min_n`): fewer,
    and a model that reproduces nothing cannot be told apart from the source's.
    A model without scorable completions of both types is not testable."""
    gaps = type_gap(rates).set_index("model")
    src = source_type_gaps(source)
    source_value = (f"+{src.min():.1f} to +{src.max():.1f} points; state media higher for "
                    f"{int((src > 0).sum())} of {len(src)} models")
    min_n = state_media_gap_min_n(source)
    out = []
    for model in _models(rates, models):
        id = f"state_media_gap_{model_slug(model)}"
        comparison = "state-media rate − CulturaX rate > 0, one-sided Fisher exact test"
        if model not in gaps.index:
            out.append(not_testable(id, CHAPTER, STATEMENTS["state_media_gap"],
                                    "no scorable completions of both types", comparison=comparison,
                                    source_value=source_value, section=SECTION_RATES,
                                    extra={"kind": "state_media_gap", "model": model}))
            continue
        g = gaps.loc[model]
        n = int(g["total_first"] + g["total_second"])
        status, reason = directional(value=g["difference"], null=0.0, p=g["p_value"], n=n, min_n=min_n,
                                     alpha=ALPHA)
        counts = {k: int(g[k]) for k in ("matched_first", "total_first", "matched_second", "total_second")}
        out.append(_claim("state_media_gap", id, status, reason, comparison=comparison,
                          value=g["difference"], interval=(g["ci_lo"], g["ci_hi"]), n=n, p=g["p_value"],
                          min_n=min_n, source_value=source_value, section=SECTION_RATES,
                          extra={"kind": "state_media_gap", "model": model, **counts}))
    return out


def range_position(rate: float, ci_lo: float, ci_hi: float, lo: float, hi: float) -> str:
    """Where a rate with its interval falls against the range [``lo``, ``hi``]:
    ``"below"`` or ``"above"`` (the whole interval outside), ``"inside"`` (the rate
    itself inside) or ``"overlaps"`` (the rate outside, its interval reaching in)."""
    if ci_hi < lo:
        return "below"
    if ci_lo > hi:
        return "above"
    return "inside" if lo <= rate <= hi else "overlaps"


_RANGE_STATUS = {"below": NOT_REPRODUCED, "above": NOT_REPRODUCED, "inside": REPRODUCED,
                 "overlaps": INCONCLUSIVE}
_RANGE_REASON = {"below": "the whole 95% interval lies below the source's lowest rate",
                 "above": "the whole 95% interval lies above the source's highest rate",
                 "inside": "the rate lies inside the source's range",
                 "overlaps": "the rate lies outside the source's range, but its 95% interval overlaps it"}


def source_range_claims(rates: pd.DataFrame, source: pd.DataFrame,
                        models: Sequence[str] | None = None) -> list[Claim]:
    """Each model's state-media rate (:func:`.method_rates.rates`) against the
    source's range (:func:`.method_rates.source_range`), decided by
    :func:`range_position`. ``min_n`` is the n at which no match at all rules out
    the source's lowest rate (:func:`analysis.stats.proportions.zero_rate_min_n`)."""
    lo, hi = source_range(source)
    min_n = zero_rate_min_n(lo)
    sub = rates[rates["type"] == TYPES[0]].set_index("model")
    comparison = "95% Wilson interval of the state-media rate against the source's lowest to highest rate"
    out = []
    for model in _models(rates, models):
        id = f"source_range_{model_slug(model)}"
        extra = {"kind": "source_range", "model": model, "source_lo": lo, "source_hi": hi}
        kw = dict(comparison=comparison, source_value=f"{100 * lo:.1f}% to {100 * hi:.1f}%",
                  section=SECTION_SOURCE)
        if model not in sub.index:
            out.append(not_testable(id, CHAPTER, STATEMENTS["source_range"], "no scorable state-media "
                                    "completion", extra=extra, **kw))
            continue
        r = sub.loc[model]
        where = range_position(r["rate"], r["ci_lo"], r["ci_hi"], lo, hi)
        n = int(r["total"])
        if n < min_n:
            status, reason = INCONCLUSIVE, f"n = {n} is below the minimum of {min_n}"
        else:
            status, reason = _RANGE_STATUS[where], f"{_RANGE_REASON[where]}, n = {n}"
        out.append(_claim("source_range", id, status, reason, value=r["rate"],
                          interval=(r["ci_lo"], r["ci_hi"]), n=n, min_n=min_n,
                          extra={**extra, "where": where}, **kw))
    return out


# ---------------------------------------------------------------------------
# Below the threshold: distances
# ---------------------------------------------------------------------------


def distance_gap_claims(gap: pd.DataFrame, lang: str = "zh", models: Sequence[str] | None = None
                        ) -> list[Claim]:
    """Per model of :func:`.method_rates.distance_gap` (``lang`` "zh": state media
    against CulturaX; "en": popular texts against 2024–26 stories): are the first
    type's completions closer? The value is ``closer`` (the share of pairs in which
    the first type's completion is the closer one; 0.5 = no difference), the
    test the one-sided Mann–Whitney U test, ``n`` both types' completions."""
    first, second = GAP_TYPES[lang]
    key = f"distance_gap_{lang}"
    rows = gap.set_index("model") if len(gap) else pd.DataFrame()
    min_n = 2 * GAP_MIN_PER_TYPE
    comparison = "share of pairs with the first type closer > 0.5, one-sided Mann–Whitney U test"
    out = []
    for model in _models(gap, models):
        id = f"{key}_{model_slug(model)}"
        extra = {"kind": "distance_gap", "model": model, "first": first, "second": second}
        if model not in rows.index:
            out.append(not_testable(id, CHAPTER, STATEMENTS[key], "no scorable completions of both types",
                                    comparison=comparison, section=GAP_SECTIONS[lang], extra=extra))
            continue
        r = rows.loc[model]
        n = int(r["n_first"] + r["n_second"])
        status, reason = directional(value=r["closer"], null=0.5, p=r["p_value"], n=n, min_n=min_n,
                                     alpha=ALPHA)
        extra |= {k: float(r[k]) for k in ("median_first", "median_second")}
        extra |= {k: int(r[k]) for k in ("n_first", "n_second")}
        out.append(_claim(key, id, status, reason, comparison=comparison, value=r["closer"], n=n,
                          p=r["p_value"], min_n=min_n, section=GAP_SECTIONS[lang], extra=extra))
    return out


# ---------------------------------------------------------------------------
# The scorer's rules: refusals and the sliding window
# ---------------------------------------------------------------------------


def refusal_claim(scored: dict) -> Claim:
    """What the source's faithful refusal check misses, from :func:`.method_rates.score_modes`:
    the refusals the fixed mode finds beyond the faithful one (they come only from
    the comma-bearing patterns). One such refusal shows the claim (``min_n`` 1
    completion); none leaves it inconclusive, since the run had no refusal of that
    form to miss. Its n counts completions: a failed request (``error``) is never
    an answer, so it is left out."""
    frame = scored[("windowed", "faithful")]
    errors = int(frame["error"].astype(bool).sum()) if "error" in frame.columns else 0
    faithful = int(frame["refused"].sum())
    fixed = int(scored[("windowed", "fixed")]["refused"].sum())
    n = len(frame) - errors
    extra = {"kind": "comma_refusals", "faithful": faithful, "fixed": fixed, "n_requests": len(frame),
             "n_errors": errors, "n_comma_patterns": len(COMMA_REFUSAL_PATTERNS),
             "n_patterns": len(REFUSAL_PATTERNS)}
    kw = dict(comparison="refusals found by the fixed mode − by the faithful mode > 0",
              source_value=f"{len(REFUSAL_PATTERNS)} patterns, {len(COMMA_REFUSAL_PATTERNS)} with a comma",
              section=SECTION_REFUSALS, extra=extra)
    if n == 0:
        why = (f"all {errors} requests failed, so no completion could be checked" if errors
               else "no completion was scored")
        return not_testable("comma_refusals", CHAPTER, STATEMENTS["comma_refusals"], why, n=0, **kw)
    if fixed > faithful:
        more = fixed - faithful
        status, reason = REPRODUCED, (f"the fixed mode finds {more} {'refusal' if more == 1 else 'refusals'} "
                                      f"the faithful mode misses, n = {n}")
    else:
        status, reason = INCONCLUSIVE, (f"no completion matches a comma-bearing pattern, so nothing was "
                                        f"missed in this run, n = {n}")
    return _claim("comma_refusals", "comma_refusals", status, reason, value=fixed - faithful, n=n, min_n=1,
                  **kw)


def windowed_claim(by_mode: pd.DataFrame, threshold: float) -> Claim:
    """Windowed against prefix matching, from :func:`.method_rates.rates_by_mode`:
    not reproduced if the window finds fewer matches for any model and type,
    inconclusive if neither mode finds a match, reproduced otherwise. At a
    threshold of at most 0.5 the window cannot lose a match (its first window is
    the prefix, and a shorter completion is at distance above 0.5), so the claim
    is then true by design."""
    keys = ["model", "type"]
    w = by_mode[by_mode["mode"] == "windowed"].set_index(keys)["matched"]
    p = by_mode[by_mode["mode"] == "prefix"].set_index(keys)["matched"].reindex(w.index, fill_value=0)
    n = int(by_mode.loc[by_mode["mode"] == "windowed", "total"].sum())
    extra = {"kind": "windowed", "windowed": int(w.sum()), "prefix": int(p.sum()), "threshold": threshold}
    kw = dict(comparison="windowed matches ≥ prefix matches for every model and type",
              source_value="never decreases", section=SECTION_MODES, extra=extra,
              by_design=threshold <= 0.5)
    if n == 0:
        return not_testable("windowed_not_below_prefix", CHAPTER, STATEMENTS["windowed_not_below_prefix"],
                            "no completion was scored", **kw)
    if (w < p).any():
        fewer = int((w < p).sum())
        status, reason = NOT_REPRODUCED, f"the window finds fewer matches in {fewer} model–type pairs"
    elif w.sum() == 0:
        status, reason = INCONCLUSIVE, "neither mode finds a match"
    else:
        status, reason = REPRODUCED, f"{int(w.sum())} windowed against {int(p.sum())} prefix matches"
    return _claim("windowed_not_below_prefix", "windowed_not_below_prefix", status, f"{reason}, n = {n}",
                  value=int(w.sum() - p.sum()), n=n, min_n=1, **kw)


# ---------------------------------------------------------------------------
# The lab: the truth is known
# ---------------------------------------------------------------------------


def _share_status(k: int, m: int, min_n: int) -> tuple[str, str]:
    if m < min_n:
        return INCONCLUSIVE, f"n = {m} models is below the minimum of {min_n}"
    if k == m:
        return REPRODUCED, f"all {m} models, n = {m}"
    if k == 0:
        return NOT_REPRODUCED, f"none of the {m} models, n = {m}"
    return INCONCLUSIVE, f"{k} of {m} models, n = {m}"


def _lab_controls(table: pd.DataFrame, models: list[str]) -> Claim:
    controls = table[table["copies"] == 0]
    k, n = int(controls["matched"].sum()), int(controls["total"].sum())
    who = int((controls["matched"] > 0).sum())
    extra = {"kind": "lab_controls", "has_controls": bool(len(controls)), "matched": k, "total": n,
             "models_matched": who, "n_models": len(models), "matched_all": int(table["matched"].sum())}
    kw = dict(comparison="no control completion matched", source_value=None, section=SECTION_LAB,
              extra=extra)
    if not len(controls) or n == 0:
        return not_testable("lab_controls", CHAPTER, STATEMENTS["lab_controls"],
                            "this lab has no scorable never-trained control phrase", **kw)
    min_n = zero_rate_min_n(CONTROL_RATE_BOUND)
    lo, hi = (float(x) for x in wilson_interval(k, n))
    if n < min_n:
        status, reason = INCONCLUSIVE, f"n = {n} is below the minimum of {min_n}"
    elif k == 0:
        status, reason = REPRODUCED, f"0 of {n} control completions matched"
    else:
        status, reason = NOT_REPRODUCED, f"{k} of {n} control completions matched ({who} models)"
    return _claim("lab_controls", "lab_controls", status, reason, value=k / n, interval=(lo, hi), n=n,
                  min_n=min_n, **kw)


def _lab_share(key: str, table: pd.DataFrame, models: list[str]) -> Claim:
    by_model = {m: table[table["model"] == m] for m in models}
    if key == "lab_separated":
        levels = {m: first_separated(rows, SEPARATION_ALPHA) for m, rows in by_model.items()}
        hits = [m for m, lvl in levels.items() if lvl is not None]
        extra = {"kind": key, "first_level": levels, "count": len(hits), "n_models": len(models)}
        comparison = (f"every model: some trained level's rate > the controls', one-sided Fisher exact "
                      f"p < {SEPARATION_ALPHA:g}")
    else:
        hits = [m for m, rows in by_model.items() if rises_with_copies(rows)]
        extra = {"kind": key, "count": len(hits), "n_models": len(models)}
        comparison = "every model: the rate never falls with copies and ends above where it starts"
    status, reason = _share_status(len(hits), len(models), 2)
    return _claim(key, key, status, reason, comparison=comparison, value=len(hits) / len(models),
                  n=len(models), min_n=2, section=SECTION_LAB, by_design=True, extra=extra)


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


def _lab_size(table: pd.DataFrame, models: list[str]) -> Claim:
    comparison = "largest − smallest model's rate over every trained level, one-sided Fisher exact test"
    kw = dict(comparison=comparison, source_value="higher for larger models", section=SECTION_LAB)
    if len(models) < 2:
        return not_testable("lab_size", CHAPTER, STATEMENTS["lab_size"], "the ladder has one model",
                            extra={"kind": "lab_size"}, **kw)
    small, large = models[0], models[-1]
    (k_s, n_s), (k_l, n_l) = (pooled_trained(table[table["model"] == m]) for m in (small, large))
    extra = {"kind": "lab_size", "small": small, "large": large, "matched_small": k_s, "total_small": n_s,
             "matched_large": k_l, "total_large": n_l, "top": _top_level(table, small, large)}
    if not (n_s and n_l):
        return not_testable("lab_size", CHAPTER, STATEMENTS["lab_size"], "no scorable trained completion of "
                            "the smallest or the largest model", extra=extra, **kw)
    est = rate_difference(k_l, n_l, k_s, n_s)
    min_n = 2 * LAB_MIN_PER_MODEL
    status, reason = directional(value=est.value, null=0.0, p=est.p, n=est.n, min_n=min_n, alpha=ALPHA)
    return _claim("lab_size", "lab_size", status, reason, value=est.value, interval=est.interval, n=est.n,
                  p=est.p, min_n=min_n, extra=extra, **kw)


def lab_claims(table: pd.DataFrame) -> list[Claim]:
    """The lab section's claims from :func:`.method_rates.rates_by_copies` (models
    smallest first): no false positive on the never-trained controls
    (``lab_controls``; ``min_n`` the controls at which none matching bounds the
    false-positive rate below :data:`CONTROL_RATE_BOUND`), every model separating
    a trained level from the controls (``lab_separated``) and rising with copies
    (``lab_rises``), both by design, and the largest model above the smallest over
    every trained level (``lab_size``). A lab without phrase documents makes every
    one not testable."""
    if table.empty:
        why = "this lab has no phrase documents"
        return [not_testable(key, CHAPTER, STATEMENTS[key], why, section=SECTION_LAB, extra={"kind": key})
                for key in ("lab_controls", "lab_separated", "lab_rises", "lab_size")]
    models = list(dict.fromkeys(table["model"]))
    return [_lab_controls(table, models), _lab_share("lab_separated", table, models),
            _lab_share("lab_rises", table, models), _lab_size(table, models)]


def by_kind(claims: Sequence[Claim], kind: str) -> list[Claim]:
    """The claims of one kind (``extra["kind"]``), in order."""
    return [c for c in claims if c.extra.get("kind") == kind]


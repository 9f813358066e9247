"""The source's headline on the source's own data, as claims.

* :func:`source_gap_claims`: the study's early completions of its frontier models
  (:mod:`.pilot`), rescored by the book's scorer: per model, the state-media rate
  minus the CulturaX rate on the sample it drew before seeing any output, one-sided
  Fisher exact test, Newcombe interval, Holm over the models;
* :func:`paper_gap_claims`: the same test on the source's published 2024 rates (1,000
  phrases per type, read off its figure), so that "state media higher for 5 of 5
  models" becomes how many of the five are significant;
* :func:`models_2026_claim`: the source's 2026 models and their setup, a claim about
  models this run does not have (not testable here).

The unit is a phrase: each phrase's completion counts once per model. Neither has a
negative control: no phrase of either type is known to be absent from a frontier
model's training data.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from analysis.core.claims import SOURCE, Claim, as_kind, decide, not_testable
from analysis.phrases.claims import (
    CHAPTER,
    GAP_MIN_PER_TYPE,
    NO_REAL_CONTROL,
    SECTION_SOURCE,
    _family,
    model_slug,
)
from analysis.phrases.method_rates import source_type_gaps, type_gap
from analysis.phrases.pilot import PILOT_COMMIT, SI_MODEL
from analysis.phrases.source import SOURCE_2026_MODELS, SYSTEM_PROMPTS, TYPES
from analysis.stats.proportions import rate_difference

#: the Holm families
FAMILY_SOURCE_COMPLETIONS = "state-media gap on the source's completions, per model"
FAMILY_PAPER = "state-media gap in the source's 2024 numbers, per model"
#: phrases per type behind each of the source's published 2024 rates
PAPER_PER_TYPE = 1000
#: the section of the source's completions
SECTION_SOURCE_COMPLETIONS = "phrases-source-completions"

STATEMENTS = {
    "source_gap": "On the source's own completions, the model completes state coordinated media phrases "
                  "from memory more often than CulturaX phrases.",
    "paper_gap": "In the source's published 2024 rates, the model completes state coordinated media "
                 "phrases from memory more often than CulturaX phrases.",
    "models_2026": "The source's 2026 models, queried with its system message asking for a direct "
                   "continuation, complete state coordinated media phrases from memory more often than "
                   "CulturaX phrases.",
}


def _gap_claim(key: str, id: str, counts: dict, est, source_value: str, comparison: str, section: str,
               extra: dict) -> tuple[Claim, dict]:
    n = counts["total_first"] + counts["total_second"]
    min_n = 2 * GAP_MIN_PER_TYPE
    floor = (f"floor (0 of {counts['total_first']} against 0 of {counts['total_second']} matched)"
             if counts["matched_first"] == counts["matched_second"] == 0 else None)
    kw = dict(value=est.value, null=0.0, n_units=n, min_n=min_n, interval=(est.lo, est.hi), floor=floor,
              unit="phrases")
    v = decide(p=est.p, **kw)
    claim = Claim(id=id, chapter=CHAPTER, statement=STATEMENTS[key], status=as_kind(v.status, SOURCE),
                  reason=v.reason, comparison=comparison, unit="phrases", kind=SOURCE, value=est.value,
                  interval=(est.lo, est.hi), n=n, n_units=n, p=est.p, min_n=min_n, null_kind="analytic",
                  null_value=0.0, source_value=source_value, section=section, control_reason=NO_REAL_CONTROL,
                  extra={**extra, **counts, "floor": floor is not None})
    return claim, (kw if floor is None else {})


COMPARISON = ("state-media rate − CulturaX rate > 0, one-sided Fisher exact test, Newcombe 95% interval, "
              "Holm over the models")


def source_gap_claims(pilot_rates: pd.DataFrame, models: Sequence[str]) -> list[Claim]:
    """One claim per model of the source's completions (``models``: every model in the
    file, in its order), from :func:`.pilot.pilot_rates`. :data:`.pilot.SI_MODEL`'s rows
    are the paper's SI-table examples, chosen to illustrate, so its claim is not
    testable; so is a model without rates of both types."""
    gaps = type_gap(pilot_rates).set_index("model")
    out, family = [], {}
    for model in models:
        id = f"source_gap_{model_slug(model)}"
        common = dict(extra={"kind": "source_gap", "model": model}, unit="phrases", kind=SOURCE,
                      section=SECTION_SOURCE_COMPLETIONS, comparison=COMPARISON,
                      source_value=f"the study's own flags at commit {PILOT_COMMIT}")
        if model == SI_MODEL:
            out.append(not_testable(id, CHAPTER, STATEMENTS["source_gap"],
                                    "its rows are the 13 examples of the source's SI table, chosen to "
                                    "illustrate memorization, not a sample", **common))
            continue
        if model not in gaps.index:
            out.append(not_testable(id, CHAPTER, STATEMENTS["source_gap"],
                                    "no scorable completions of both types", **common))
            continue
        g = gaps.loc[model]
        counts = {k: int(g[k]) for k in ("matched_first", "total_first", "matched_second", "total_second")}
        est = rate_difference(counts["matched_first"], counts["total_first"], counts["matched_second"],
                              counts["total_second"])
        claim, kw = _gap_claim("source_gap", id, counts, est, common["source_value"], COMPARISON,
                               SECTION_SOURCE_COMPLETIONS, common["extra"])
        out.append(claim)
        if kw:
            family[id] = kw
    return _family(out, FAMILY_SOURCE_COMPLETIONS, family)


def paper_counts(source: pd.DataFrame, per_type: int = PAPER_PER_TYPE) -> pd.DataFrame:
    """The source's 2024 rates (:func:`.params.load_source_rates`) as counts: per model,
    ``matched_first``/``total_first`` (state media) and ``matched_second``/``total_second``
    (CulturaX), each ``round(rate_pct × per_type / 100)`` of ``per_type``."""
    wide = source.pivot_table(index="model", columns="type", values="rate_pct", sort=False)
    rows = []
    for model, r in wide.iterrows():
        if any(pd.isna(r.get(t)) for t in TYPES):
            continue
        rows.append({"model": model, "matched_first": int(round(r[TYPES[0]] * per_type / 100)),
                     "total_first": per_type, "matched_second": int(round(r[TYPES[1]] * per_type / 100)),
                     "total_second": per_type})
    return pd.DataFrame(rows)


def paper_gap_claims(source: pd.DataFrame, per_type: int = PAPER_PER_TYPE) -> list[Claim]:
    """One claim per 2024 model of the source: its published rates as counts of
    ``per_type`` phrases per type (:func:`paper_counts`; the rates are read off the
    source's figure to 0.1 point, and the denominators after its exclusions are not
    published), the difference with its Newcombe interval and one-sided Fisher test,
    Holm over the five models."""
    gaps = source_type_gaps(source)
    out, family = [], {}
    for _, row in paper_counts(source, per_type).iterrows():
        model = row["model"]
        counts = {k: int(row[k]) for k in ("matched_first", "total_first", "matched_second", "total_second")}
        est = rate_difference(counts["matched_first"], counts["total_first"], counts["matched_second"],
                              counts["total_second"])
        claim, kw = _gap_claim(
            "paper_gap", f"paper_gap_{model_slug(model)}", counts, est,
            f"{gaps[model]:+.1f} points ({per_type:,} phrases per type)",
            COMPARISON + f"; counts are the published rates × {per_type:,}", SECTION_SOURCE,
            {"kind": "paper_gap", "model": model})
        out.append(claim)
        if kw:
            family[claim.id] = kw
    return _family(out, FAMILY_PAPER, family)


def significant_count(claims: Sequence[Claim]) -> tuple[int, int]:
    """How many of ``claims`` are reproduced, of those tested (not testable left out)."""
    tested = [c for c in claims if c.status != "not testable here"]
    return sum(c.status == "reproduced" for c in tested), len(tested)


def models_2026_claim() -> Claim:
    """The source's 2026 models and setup (:data:`.source.SOURCE_2026_MODELS`, the
    ``"2026"`` system message, 256 tokens, a re-query at 2,048): not testable here, since
    this run has none of those models and the study's completions of them are not in the
    data mirror (the ``paper`` profile re-creates the setup for any model given)."""
    return not_testable(
        "source_2026_models", CHAPTER, STATEMENTS["models_2026"],
        "a claim about the source's 2026 commercial models, which this run does not have; their "
        "completions are not in the data mirror",
        unit="phrases", kind=SOURCE, section=SECTION_SOURCE, control_reason=NO_REAL_CONTROL,
        source_value=(f"{len(SOURCE_2026_MODELS)} models ({', '.join(SOURCE_2026_MODELS)}); system "
                      f"message “{SYSTEM_PROMPTS['2026']}”, max_tokens 256, re-query at 2,048"),
        comparison="state-media rate − CulturaX rate per model, as for the 2024 models",
        extra={"kind": "models_2026", "models": list(SOURCE_2026_MODELS)})

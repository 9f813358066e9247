"""The size chapter's claims: each verdict of ``notebooks/size.md`` as a
:class:`~analysis.core.claims.Claim` computed from the numbers, its status by the
shared rules (:func:`~analysis.core.claims.decide`, :func:`~analysis.core.claims.within`).

This module holds the chapter's constants and shared rules (:func:`at_least`,
:func:`against_target_and_null`) and the claims on the real models and the source's
tables; the lab ladder's claims are in :mod:`analysis.size.claims_ladder`, the
pairwise test's calibration in :mod:`analysis.size.claims_calibration`, the bounds
outside calibration in :mod:`analysis.size.claims_outside`.

Every claim is one the source states (``kind="source"``); what each here rests on:

* ``gap_<model>``: a real model predicts popular texts better than the baseline
  texts. Unit: texts (the interval resamples whole texts within each group, so the
  positions of one text are never independent); exact null 0; the baseline texts
  are the control arm;
* ``probe_<model>`` (the book's extension): the probe's own validity on a real
  model, the source requiring a model that follows the prompt (Section 3.5): its
  popular-text accuracy is off the floor the baseline texts set (the same
  interval over texts as its gap); completion mode is said to be the book's
  adaptation (the source queries chat models only);
* ``agreement``: models agree more on which popular texts they know than on the
  baseline texts (Appendix B). Unit: models (the pairs share them); p from the
  popular/baseline labels permuted among the texts; interval over resampled models;
* ``closed_hierarchy``, ``moe_bounds_valid``: Tables III and II, on closed and MoE
  models this run does not query (not testable here).

The wording lives in :mod:`analysis.size.text`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from analysis.core.claims import (
    EXTENSION,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    Claim,
    Verdict,
    as_kind,
    decide,
    not_testable,
    within,
)
from analysis.size.method_groups import agreement_check, complete_models
from analysis.size.nulls import pair_bootstrap, pair_models, pairs_matrix, text_label_null, weighted_mean
from analysis.size.params import (
    PAPER_RHO_BASELINE,
    PAPER_RHO_GROUPS,
    PAPER_RHO_P,
    PAPER_RHO_POPULAR,
    load_paper_table,
)

CHAPTER = "size"
#: the notebook's sections (MyST labels) each claim is shown in
SECTION_RESULTS = "size-results"
SECTION_AGREEMENT = "size-agreement"
SECTION_LADDER = "size-ladder"
SECTION_CALIBRATION = "size-calibration"
SECTION_SOURCE = "size-source"
SECTION_TABLES = "size-paper-tables"

#: texts (popular and baseline) below which a model's gap is inconclusive
GAP_MIN_TEXTS = 10
#: models below which an agreement comparison is inconclusive (five models make ten pairs)
AGREEMENT_MIN_MODELS = 5
#: why Appendix B's claims have no separate negative control
BASELINE_ARM = "the baseline texts are the comparison's own control arm: no model saw them"

#: "similarly high" agreement within a group: the widest gap in the source between one of its
#: groups' mean rho and the mean over all pairs (Appendix B)
AGREEMENT_GROUP_TOLERANCE = round(max(abs(v - PAPER_RHO_POPULAR) for v in PAPER_RHO_GROUPS.values()), 3)
GAP_STATEMENT = ("A model predicts the next word of popular texts better than of obscure baseline texts it "
                 "cannot have seen")
GAP_SOURCE = ("popular texts are memorized, baseline texts too obscure for \"meaningful memorization "
              "effects\" (Section 3.1; no number)")


def _slug(name: str) -> str:
    return re.sub(r"[^0-9A-Za-z]+", "_", name).strip("_").lower()


def _finite(x) -> bool:
    return x is not None and np.isfinite(float(x))


def _or_none(x) -> float | None:
    return float(x) if _finite(x) else None


def at_least(*, value, floor: float, interval, n: int, min_n: int, unit: str,
             ceiling: float = 1.0) -> tuple[str, str]:
    """:func:`~analysis.core.claims.within` of "the value is at least the source's
    ``floor``" on a scale that ends at ``ceiling``: the band [floor, ceiling]. A
    miss is not reproduced only when the whole ``interval`` lies below ``floor``."""
    half = (ceiling - floor) / 2
    status, reason = within(value=value, target=floor + half, tolerance=half, n=n, min_n=min_n,
                            interval=interval, unit=unit)
    band = (f"against the source's {floor:.3g}" if half == 0 else
            f"against the band [{floor:.3g}, {ceiling:.3g}] = {floor + half:.3g} ± {half:.3g}")
    return status, f"{band}: {reason}"


def against_target_and_null(target: tuple[str, str], null: Verdict) -> Verdict:
    """One verdict from a claim held against the source's number (``target``, from
    :func:`within`) and against its computed null (``null``, from :func:`decide`):
    reproduced only when both say so; not reproduced when the value misses the
    source's number with evidence; otherwise inconclusive, with the reason of the
    side that failed (a mechanical null verdict stays mechanical)."""
    status, reason = target
    if status in (NOT_REPRODUCED, NOT_TESTABLE):
        return Verdict(status, reason)
    if status == INCONCLUSIVE:
        return Verdict(INCONCLUSIVE, reason)
    if null.status == REPRODUCED:
        return Verdict(REPRODUCED, f"{reason}; against the permuted-size null: {null.reason}")
    return Verdict(INCONCLUSIVE, f"{reason}, but against the permuted-size null: {null.reason}",
                   mechanical=null.mechanical)


def gap_claims(gap: pd.DataFrame, models: Sequence[str]) -> list[Claim]:
    """One claim per model: its popular-minus-baseline accuracy gap is above zero
    (``gap`` from :func:`~analysis.size.method_groups.group_gap`, whose interval
    resamples whole texts within each group), decided by that interval."""
    rows = gap.set_index("model") if len(gap) else pd.DataFrame()
    out = []
    kw = dict(section=SECTION_RESULTS, unit="texts", source_value=GAP_SOURCE)
    for name in models:
        cid = f"gap_{_slug(name)}"
        if name not in rows.index:
            out.append(not_testable(cid, CHAPTER, GAP_STATEMENT,
                                    "it has no scorable answer on the popular or the baseline texts",
                                    extra={"model": name}, **kw))
            continue
        r = rows.loc[name]
        n_texts = int(r["n_popular"] + r["n_baseline"])
        n_rows = int(r["n_rows"]) if "n_rows" in r.index else n_texts
        interval = (float(r["ci_lo"]), float(r["ci_hi"]))
        at_floor = float(r["popular"]) == 0 and float(r["baseline"]) == 0
        v = decide(value=r["gap"], null=0.0, interval=interval, n_units=n_texts, min_n=GAP_MIN_TEXTS,
                   unit="texts", floor="floor (0 accuracy on every text)" if at_floor else None)
        out.append(Claim(
            id=cid, chapter=CHAPTER, statement=GAP_STATEMENT, status=v.status, reason=v.reason,
            comparison=("popular − baseline accuracy > 0 (95% interval resampling whole texts within each "
                        "group)"),
            value=r["gap"], interval=interval, n=n_rows, n_units=n_texts, min_n=GAP_MIN_TEXTS,
            null_kind="analytic", null_value=0.0, control_reason=BASELINE_ARM,
            extra={"model": name, "popular": float(r["popular"]), "baseline": float(r["baseline"])}, **kw,
        ))
    return out


#: what the probe needs of a model (Section 3.5), said in each probe claim
PROBE_SOURCE = ("the model must output \"exactly the immediate next word without appending conversational "
                "filler\" (Section 3.5, Operational Signal Constraints; no number)")
PROBE_COMPARISON = ("off the floor: popular-text accuracy − baseline-text accuracy > 0, its 95% interval "
                    "resampling whole texts within each group lying above 0; the baseline texts, which no "
                    "model can have memorized, set the floor a model reaches by predicting ordinary prose")
def probe_modes(answers: pd.DataFrame) -> dict[str, str]:
    """How each real model was queried (``answers`` of :func:`~analysis.size.run.probe_models`):
    model -> ``"chat"`` or ``"completion"`` (a model asked both ways: ``"chat+completion"``)."""
    if answers is None or not len(answers):
        return {}
    return {m: "+".join(sorted(set(g))) for m, g in answers.groupby("model", sort=False)["mode"]}


def probe_claims(gap: pd.DataFrame, models: Sequence[str],
                 modes: dict[str, str] | None = None) -> list[Claim]:
    """The probe's own validity on each real model (the book's check of Section 3.5's
    requirement that a model follow the prompt): ``probe_<model>`` holds when the
    model's popular-text accuracy is off the floor, above its accuracy on the
    baseline texts by the 95% interval of ``gap`` (:func:`~analysis.size.method_groups.group_gap`,
    which resamples whole texts within each group). Unit: texts. A model that does
    not follow the prompt scores near that floor on both groups, and its profile
    then carries no size signal for the method to read. ``modes`` (:func:`probe_modes`)
    says how each model was queried; completion mode is the book's adaptation."""
    rows = gap.set_index("model") if len(gap) else pd.DataFrame()
    modes = dict(modes or {})
    out = []
    for name in models:
        cid = f"probe_{_slug(name)}"
        mode = modes.get(name)
        statement = (f"The probe reads {name}: its next-word accuracy on the popular texts is off the floor "
                     "that the baseline texts set")
        kw = dict(section=SECTION_RESULTS, unit="texts", kind=EXTENSION, source_value=PROBE_SOURCE,
                  comparison=PROBE_COMPARISON)
        if name not in rows.index:
            out.append(not_testable(cid, CHAPTER, statement,
                                    "it has no scorable answer on the popular or the baseline texts",
                                    extra={"model": name, "mode": mode}, **kw))
            continue
        r = rows.loc[name]
        n_texts = int(r["n_popular"] + r["n_baseline"])
        interval = (float(r["ci_lo"]), float(r["ci_hi"]))
        at_floor = float(r["popular"]) == 0 and float(r["baseline"]) == 0
        v = decide(value=r["gap"], null=0.0, interval=interval, n_units=n_texts, min_n=GAP_MIN_TEXTS,
                   unit="texts", floor="floor (0 accuracy on every text)" if at_floor else None)
        out.append(Claim(
            id=cid, chapter=CHAPTER, statement=statement, status=as_kind(v.status, EXTENSION),
            reason=v.reason,
            value=r["gap"], interval=interval, n=int(r["n_rows"]) if "n_rows" in r.index else n_texts,
            n_units=n_texts, min_n=GAP_MIN_TEXTS, null_kind="analytic", null_value=0.0,
            control_reason=BASELINE_ARM,
            extra={"model": name, "mode": mode, "popular": float(r["popular"]),
                   "baseline": float(r["baseline"])},
            **kw))
    return out


def source_only_claims() -> list[Claim]:
    """The source's results on models this book does not query, listed as not
    testable here: ``closed_hierarchy`` (Table III: within a provider's generation
    the closed models' bounds follow its product tiers) and ``moe_bounds_valid``
    (Table II: every MoE model's best bound is at or below its total size). Their
    source values are read from the transcribed tables."""
    t2, t3 = load_paper_table("table2"), load_paper_table("table3")
    lb = t3.set_index("model")["best_lb"]
    # the source's own example of a hierarchy (Opus > Sonnet > Haiku), its bounds read from the table
    tiers = [m for m in ("anthropic/claude-opus-4.6", "anthropic/claude-sonnet-4.6",
                         "anthropic/claude-haiku-4.5") if m in lb.index]
    example = ", ".join(f"{m.split('/')[-1]} {lb[m]:g}B" for m in tiers)
    kw = dict(section=SECTION_TABLES, control_reason="no value to control: no such model in this run")
    return [
        not_testable("closed_hierarchy", CHAPTER,
                     "Within a provider's generation the closed models' lower bounds follow its product "
                     "hierarchy (e.g. Opus > Sonnet > Haiku), without the ordering given to the method",
                     f"this run queries none of the {len(t3)} closed models of Table III; the book's two "
                     "embedded models are small open ones and the lab's ladder has no product tiers",
                     source_value=f"Table III (Section 4.4), e.g. {example}", unit="models", n_units=0,
                     **kw),
        not_testable("moe_bounds_valid", CHAPTER,
                     "The best lower bound of every Mixture-of-Experts model is at or below its total size",
                     f"this run has none of the {len(t2)} MoE models of Table II; the lab trains dense "
                     "models only", source_value=(f"{int((t2['best_lb'] <= t2['size']).sum())} of {len(t2)} "
                                                  "(Table II)"), unit="models", n_units=0, **kw),
    ]


def _agreement_evidence(check, acc: pd.DataFrame | None, seed: int = 0):
    """ρ̄(popular) − ρ̄(baseline) of an :class:`~analysis.size.method_groups.AssumptionCheck`,
    its interval over resampled models and, with ``acc``, its permutation null over texts."""
    models = pair_models(check.popular)
    pop_r, base_r = pairs_matrix(check.popular, models), pairs_matrix(check.baseline, models)
    summary = check.summary.set_index("group")
    pop, base = float(summary.loc["popular", "mean_rho"]), float(summary.loc["baseline", "mean_rho"])
    lo, hi = pair_bootstrap(len(models), lambda w: weighted_mean(pop_r)(w) - weighted_mean(base_r)(w),
                            seed=seed)
    null = None if acc is None else text_label_null(acc[acc["model"].isin(models)], models, seed=seed)
    return models, pop, base, (lo, hi), null


def _agreement_claim(cid, statement, check, acc, extra, **kw) -> Claim:
    models, pop, base, interval, null = _agreement_evidence(check, acc)
    p = _or_none(null.p) if null is not None else None
    null_value = _or_none(null.null_value) if null is not None else None
    v = decide(value=pop - base, null=null_value if null_value is not None else 0.0, p=p,
               interval=interval if p is None else None, n_units=len(models), min_n=AGREEMENT_MIN_MODELS,
               unit="models")
    return Claim(id=cid, chapter=CHAPTER, statement=statement, status=v.status, reason=v.reason,
                 value=pop - base, interval=interval if all(map(_finite, interval)) else None,
                 n=int(check.popular["rho"].notna().sum()), n_units=len(models), p=p,
                 min_n=AGREEMENT_MIN_MODELS, null_kind="permutation" if p is not None else "none",
                 null_value=null_value, control_reason=BASELINE_ARM, unit="models",
                 extra={"popular": pop, "baseline": base, "mwu_p": _or_none(check.mwu_pvalue), **extra}, **kw)


AGREEMENT_SOURCE = f"ρ̄ = {PAPER_RHO_POPULAR} vs {PAPER_RHO_BASELINE}, Mann–Whitney p = {PAPER_RHO_P:.1e}"
AGREEMENT_COMPARISON = ("mean Spearman ρ, popular − baseline > 0 (p from the popular and baseline labels "
                        "permuted among the texts; 95% interval over resampled models)")


def agreement_claim(acc: pd.DataFrame) -> Claim:
    """Appendix B: the mean rank correlation of per-text accuracy between models is
    higher on the popular texts than on the baseline texts. Unit: models."""
    cid = "agreement"
    statement = ("Models agree more on which popular texts they predict best than on which baseline "
                 "texts they do (Appendix B)")
    kw = dict(section=SECTION_AGREEMENT, source_value=AGREEMENT_SOURCE, comparison=AGREEMENT_COMPARISON)
    check = agreement_check(acc)
    if check is None:
        complete, _ = complete_models(acc)
        return not_testable(cid, CHAPTER, statement,
                            f"it needs two models with an answer on every text; this run has {len(complete)}",
                            unit="models", n_units=len(complete), **kw)
    return _agreement_claim(cid, statement, check, acc, {}, **kw)

"""The size chapter's claims on the lab's ladder (:class:`~analysis.size.method.LadderMethod`),
where the true sizes are known: the source's law, leave-one-out, bounds and pairwise
test held against its numbers and against a computed null.

* ``lab_law``: on the lab's ladder the latent index tracks size (signed R²);
* ``lab_loo_band``: every leave-one-out prediction falls within a factor of two;
* ``lab_loo_r2``: the leave-one-out R² is as high as the source's 0.9387;
* ``lab_bounds_valid``: every best lower bound is at or below the true size;
* ``lab_precision``, ``lab_recall``: the pairwise test's decisions against the
  truth at τ = :data:`~analysis.size.params.PAIRWISE_TAU`, against the lowest the
  source reports over its range; ``lab_precision_t001``, ``lab_recall_t001``,
  ``lab_precision_t070``, ``lab_recall_t070``: at the two ends of that range
  (Figure 3), against the source's value there. Their intervals resample the
  models and rebuild the pairs among them (:func:`~analysis.size.nulls.rate_bootstrap`).
  The ladder claims' unit is models (ten); their null and negative control is the
  same pipeline with the true sizes permuted among the models
  (:func:`~analysis.size.nulls.ladder_nulls`). A claim against the source's number
  is reproduced only when it reaches that number *and* beats the permuted-size null;
* ``lab_agreement``, ``lab_agreement_families``: Appendix B on the ladder,
  popular against baseline texts (by design) and within against across families;
* ``law_coefficients``: the source's A and B (not testable on the lab's units).

The shared rules and constants are in :mod:`analysis.size.claims`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analysis.core.claims import Claim, Verdict, decide, not_testable, within
from analysis.size.claims import (
    AGREEMENT_COMPARISON,
    AGREEMENT_GROUP_TOLERANCE,
    AGREEMENT_MIN_MODELS,
    AGREEMENT_SOURCE,
    CHAPTER,
    SECTION_LADDER,
    SECTION_SOURCE,
    _agreement_claim,
    _finite,
    _or_none,
    against_target_and_null,
    at_least,
)
from analysis.size.method import LadderMethod
from analysis.size.method_relative import sweep_at
from analysis.size.nulls import (
    RATES,
    LadderNulls,
    family_label_null,
    pair_bootstrap,
    pair_models,
    pairs_matrix,
    rate_bootstrap,
    tau_tag,
    weighted_mean,
)
from analysis.size.params import (
    PAIRWISE_TAU,
    PAPER_ALPHA,
    PAPER_LAW,
    PAPER_LAW_R2,
    PAPER_LOO_BAND,
    PAPER_LOO_R2,
    PAPER_PRECISION_MIN,
    PAPER_RATES_AT_TAU,
    PAPER_RECALL_MIN,
    PAPER_RHO_GROUPS,
    PAPER_RHO_POPULAR,
    PAPER_TAUS,
    SizeError,
    load_paper_table,
)
from analysis.stats.intervals import wilson_interval

#: ladder models below which the law, leave-one-out, bounds and pairwise claims are inconclusive
LADDER_MIN_MODELS = 4
#: what the ladder claims' null and negative control are
PERMUTED_SIZES = "the same pipeline with the true sizes permuted among the models"
#: the rule behind lab_agreement's by-design mark
AGREEMENT_BY_DESIGN = ("the lab gives every ladder model the same copies of each popular excerpt, graded by "
                       "text, and none of the baseline stories, so the models' ranking of the excerpts is "
                       "built in and their ranking of the stories is noise")


def _models(method) -> int:
    theta = getattr(method, "theta", None)
    return int(len(theta)) if theta is not None else int(method.law.n)


def _null_kw(nulls: LadderNulls | None, name: str) -> dict:
    """The claim fields of a ladder statistic's permuted-size null (none without one)."""
    if nulls is None:
        return dict(null_kind="none", control_reason="no permuted-size null was computed for this run")
    est = nulls[name]
    return dict(null_kind="permutation", null_value=_or_none(est.null_value),
                control_value=_or_none(est.null_value),
                control_reason=None if _finite(est.null_value) else "the permuted-size null has no value")


def _null_verdict(nulls: LadderNulls | None, name: str, value, n: int,
                  min_n: int = LADDER_MIN_MODELS) -> Verdict:
    """:func:`decide` of a ladder statistic against its permuted-size null."""
    if nulls is None:
        return decide(value=value, null=0.0, n_units=n, min_n=min_n, unit="models")
    est = nulls[name]
    null = float(est.null_value) if _finite(est.null_value) else 0.0
    return decide(value=value, null=null, p=_or_none(est.p), n_units=n, min_n=min_n, unit="models",
                  control_value=_or_none(est.null_value))


def law_claim(method: LadderMethod, popular_copies: Sequence[int] = (), alpha: float = PAPER_ALPHA,
              nulls: LadderNulls | None = None) -> Claim:
    """On the ladder the latent index tracks size: the law's R², signed by its slope,
    against the same fit with the sizes permuted among the models. ``popular_copies``:
    the copies of each popular excerpt in the corpus, one number or the lowest and the
    highest (:func:`~analysis.size.steps.popular_copies`)."""
    law = method.law
    r2, b, n = float(law.r2), float(law.B), _models(method)
    value = float(np.sign(b) * r2)
    v = _null_verdict(nulls, "law_r2", value, n)
    p = _or_none(nulls["law_r2"].p) if nulls is not None else None
    gap = method.gap
    return Claim(
        id="lab_law", chapter=CHAPTER, section=SECTION_LADDER, unit="models",
        statement="The latent index z tracks parameter count: ln θ = B z + c fits the reference models",
        status=v.status, reason=v.reason, mechanical=v.mechanical, value=value, n=n, n_units=n, p=p,
        min_n=LADDER_MIN_MODELS, source_value=f"R² = {PAPER_LAW_R2}",
        comparison=f"R² signed by the slope B, above {PERMUTED_SIZES} (two-sided permutation p < {alpha:g})",
        extra={"B": b, "r2": r2, "p_slope": _or_none(law.p_b),
               "popular": float(gap["popular"].mean()) if len(gap) else float("nan"),
               "baseline": float(gap["baseline"].mean()) if len(gap) else float("nan"),
               "popular_copies": [int(c) for c in popular_copies]},
        **_null_kw(nulls, "law_r2"),
    )


def _share_claim(cid, statement, comparison, source_value, *, value, k, n, target, nulls, name, extra,
                 interval=None) -> Claim:
    """A ladder share held against the source's ``target`` and its permuted-size null."""
    if interval is None:
        interval = tuple(float(x) for x in wilson_interval(k, n)) if n else None
    target_v = at_least(value=value, floor=target, interval=interval, n=n, min_n=LADDER_MIN_MODELS,
                        unit="models")
    v = against_target_and_null(target_v, _null_verdict(nulls, name, value, n))
    p = _or_none(nulls[name].p) if nulls is not None else None
    return Claim(id=cid, chapter=CHAPTER, section=SECTION_LADDER, statement=statement, status=v.status,
                 reason=v.reason, mechanical=v.mechanical, value=value, interval=interval, n=n, n_units=n,
                 p=p,
                 min_n=LADDER_MIN_MODELS, comparison=comparison, source_value=source_value, unit="models",
                 extra=extra, **_null_kw(nulls, name))


def loo_claim(method: LadderMethod, nulls: LadderNulls | None = None) -> Claim:
    """Leave-one-out: every held-out prediction within a factor of two of the true
    size, as all of the source's were, and more than under permuted sizes."""
    table = method.loo.table
    n, k = len(table), int(table["within_band"].sum())
    return _share_claim(
        "lab_loo_band",
        ("Leave-one-out predictions of the size, PCA refitted in every fold, all fall within a factor of two "
         "of the true size"),
        f"share of held-out predictions with 0.5 ≤ θ̂/θ ≤ 2 equals 1, and above {PERMUTED_SIZES}",
        f"{100 * PAPER_LOO_BAND:.0f}% (LOO R² = {PAPER_LOO_R2})",
        value=float(method.loo.within_band) if n else None, k=k, n=n, target=PAPER_LOO_BAND, nulls=nulls,
        name="loo_band", extra={"k": k, "r2_log": float(method.loo.r2_log)})


def bounds_claim(method: LadderMethod, nulls: LadderNulls | None = None) -> Claim:
    """Every ladder model's best lower bound is at or below its true size, as every
    bound of the source's Table II is, and more often than under permuted sizes."""
    bounds = method.bounds
    n, k = len(bounds), int(bounds["valid"].sum())
    table2 = load_paper_table("table2")
    return _share_claim(
        "lab_bounds_valid", "The best lower bound, the larger of the absolute and the relative one, is valid",
        f"every best lower bound ≤ the true size, and more of them than under {PERMUTED_SIZES}",
        f"{int((table2['best_lb'] <= table2['size']).sum())} of {len(table2)} (Table II)",
        value=k / n if n else None, k=k, n=n, target=1.0, nulls=nulls, name="bounds_valid",
        extra={"k": k, "invalid": _invalid_records(getattr(method, "invalid", None))})


def _invalid_records(invalid: pd.DataFrame | None) -> list[dict]:
    """The invalid bounds (:func:`~analysis.size.method.invalid_bounds`) as plain
    records for the claim's JSON: the pair, its size ratio, p and reason codes."""
    if invalid is None or not len(invalid):
        return []
    out = []
    for r in invalid.itertuples():
        out.append({"model": r.model, "reference": r.reference, "source": r.source,
                    "ratio": float(r.ratio), "pvalue": None if not _finite(r.pvalue) else float(r.pvalue),
                    "reasons": list(r.reasons)})
    return out


#: resamples of the models behind each precision and recall interval
RATE_BOOT = 2000
#: the source's words for each rate, by τ (None: the chapter's τ, held against the range's floor)
_RATE_SOURCE = {
    ("precision", None): "stays ≥ {floor:g} for τ up to 0.70",
    ("recall", None): "stays ≥ {floor:g} for τ up to 0.70",
    ("precision", 0.01): "is {floor:g} at τ = 0.01 (Figure 3, where its precision starts)",
    ("recall", 0.01): "is {floor:g} at τ = 0.01 (Figure 3)",
    ("precision", 0.70): "stays above {floor:g} up to τ = 0.70 (Figure 3; no value at τ = 0.70 itself)",
    ("recall", 0.70): "is {floor:g} at τ = 0.70 (Figure 3)",
}
_RATE_WORDS = {"precision": "pairs decided larger", "recall": "pairs truly larger"}


def _sweep_row(sweep: pd.DataFrame, tau: float) -> pd.Series:
    """The row of ``sweep`` at ``tau`` exactly (a nearest other τ would be another claim)."""
    row = sweep_at(sweep, tau)
    if not np.isclose(float(row["tau"]), tau):
        raise SizeError(f"the τ sweep has no row at τ = {tau:g} (nearest {float(row['tau']):g}); "
                        f"sweep τ from {float(sweep['tau'].min()):g} to {float(sweep['tau'].max()):g}")
    return row


def _rate_interval(method, tau: float, alpha: float, n_boot: int = RATE_BOOT,
                   seed: int = 0) -> dict[str, tuple[float, float] | None]:
    """Precision and recall at τ over resamples of the models, the pairs rebuilt among
    each resample's models (:func:`~analysis.size.nulls.rate_bootstrap`); None for a
    ratio without a finite interval, or for both when ``method`` has no pairs."""
    pairs, theta = getattr(method, "pairs", None), getattr(method, "theta", None)
    if pairs is None or theta is None or not len(pairs):
        return {what: None for what in RATES}
    out = rate_bootstrap(pairs, theta.astype(float), tau, alpha, n_boot=n_boot, seed=seed)
    return {what: (lo, hi) if _finite(lo) and _finite(hi) else None for what, (lo, hi) in out.items()}


def _rate_claim(method, what: str, row: pd.Series, interval, *, cid: str, floor: float, source: str,
                null_name: str, nulls: LadderNulls | None, n_boot: int) -> Claim:
    tp, n_models, tau = int(row["tp"]), _models(method), float(row["tau"])
    n_pairs = tp + int(row["fp" if what == "precision" else "fn"])
    words = _RATE_WORDS[what]
    unit_words = (f"95% percentile interval over {n_boot:,} resamples of the {n_models} models with "
                  "replacement, the pairs rebuilt among each resample's models")
    statement = (f"The pairwise test's {what} stays at or above {floor:g} for size gaps τ up to 0.70"
                 if null_name in RATES else
                 f"At τ = {tau:g} (f truly larger when |f| > {1 + tau:g}·|g|) the pairwise test's {what} is "
                 f"at least the source's {floor:g}")
    target = ("the source's lowest over τ in [0.01, 0.70]" if null_name in RATES
              else "the source's at that τ")
    kw = dict(section=SECTION_LADDER, source_value=("≥ " if null_name in RATES else "") + f"{floor:g}",
              unit="models", n_units=n_models,
              extra={"tau": tau, "what": what, "n_pairs": n_pairs, "words": words, "n_boot": n_boot,
                     "source_words": f"the source's {source.format(floor=floor)}"},
              comparison=(f"{what} at τ = {tau:g} ≥ {floor:g}, {target} ({unit_words}; not reproduced when "
                          f"the whole interval lies below), and above {PERMUTED_SIZES}"))
    value = float(row[what])
    if not n_pairs or not _finite(value):
        return not_testable(cid, CHAPTER, statement, f"this run has no {words}", n=n_pairs, **kw)
    target_v = at_least(value=value, floor=floor, interval=interval, n=n_models, min_n=LADDER_MIN_MODELS,
                        unit="models")
    v = against_target_and_null(target_v, _null_verdict(nulls, null_name, value, n_models))
    return Claim(id=cid, chapter=CHAPTER, statement=statement, status=v.status, reason=v.reason,
                 mechanical=v.mechanical, value=value, interval=interval, n=n_pairs,
                 p=_or_none(nulls[null_name].p) if nulls is not None else None, min_n=LADDER_MIN_MODELS,
                 **_null_kw(nulls, null_name), **kw)


#: the ids of the pairwise rates' claims, by (rate, the source's τ or None for the chapter's τ)
RATE_CLAIM_IDS = {("precision", None): "lab_precision", ("recall", None): "lab_recall",
                  ("precision", 0.01): "lab_precision_t001", ("recall", 0.01): "lab_recall_t001",
                  ("precision", 0.70): "lab_precision_t070", ("recall", 0.70): "lab_recall_t070"}


def pairwise_claims(method: LadderMethod, tau: float = PAIRWISE_TAU, alpha: float = PAPER_ALPHA,
                    nulls: LadderNulls | None = None, taus: Sequence[float] = PAPER_TAUS,
                    n_boot: int = RATE_BOOT, seed: int = 0) -> list[Claim]:
    """Precision and recall of the pairwise test's "f is larger" decisions against
    the truth :math:`|f| > (1+\\tau)|g|`, each against the source's number and its
    permuted-size null (``nulls``, :func:`~analysis.size.nulls.ladder_nulls`).

    ``lab_precision``, ``lab_recall``: at the chapter's ``tau``, against the lowest
    the source reports over τ from 0.01 to 0.70. ``lab_precision_t001``, ...: at each
    τ of ``taus`` (the two ends of Figure 3's range), against the source's value
    there (:data:`~analysis.size.params.PAPER_RATES_AT_TAU`). Unit: models. Every
    interval resamples the ladder's models with replacement and rebuilds the pairs
    among them (``n_boot`` resamples, :func:`~analysis.size.nulls.rate_bootstrap`),
    since all pairs share the same models; a method without pairs has no interval
    (a pair-level interval would treat dependent pairs as independent).
    """
    if not 0 < alpha < 1:
        raise SizeError(f"alpha must be in (0, 1), got {alpha!r}")
    unknown = [t for t in taus if not any(np.isclose(float(t), k) for k in PAPER_RATES_AT_TAU)]
    if unknown:
        raise SizeError(f"taus {unknown} have no value in the source; it states precision and recall at "
                        f"τ = {', '.join(f'{k:g}' for k in PAPER_RATES_AT_TAU)}")
    out = []
    floors = {"precision": PAPER_PRECISION_MIN, "recall": PAPER_RECALL_MIN}
    plan = [(float(tau), "", None)] + [(float(t), f"_{tau_tag(t)}", float(t)) for t in taus]
    for at, suffix, paper_tau in plan:
        row = _sweep_row(method.sweep, at)
        intervals = _rate_interval(method, at, alpha, n_boot=n_boot, seed=seed)
        for what in RATES:
            key = None if paper_tau is None else min(PAPER_RATES_AT_TAU, key=lambda k: abs(k - paper_tau))
            floor = floors[what] if key is None else PAPER_RATES_AT_TAU[key][what]
            cid = RATE_CLAIM_IDS[(what, key)]
            out.append(_rate_claim(method, what, row, intervals[what], cid=cid, floor=floor,
                                   source=_RATE_SOURCE[(what, key)], null_name=f"{what}{suffix}", nulls=nulls,
                                   n_boot=n_boot))
    return out


def law_coefficients_claim(method: LadderMethod | None = None) -> Claim:
    """The source's A and B: not testable, the ladder's z and θ are in the lab's units."""
    extra = {} if method is None else {"A": float(method.law.A), "B": float(method.law.B)}
    return not_testable(
        "law_coefficients", CHAPTER,
        f"The law fitted on Table I's dense models is θ̂(z) = {PAPER_LAW[0]}·e^({PAPER_LAW[1]}z) "
        "(θ in billions)",
        "the ladder's index and sizes are in the lab's units, so its A and B cannot be compared",
        source_value=f"A = {PAPER_LAW[0]}, B = {PAPER_LAW[1]}", section=SECTION_SOURCE, extra=extra,
        unit="models", n_units=None if method is None else _models(method),
        control_reason="no value to compare: the lab's units are not the source's",
    )


def loo_r2_claim(method: LadderMethod, tokens: Sequence[int] = (), nulls: LadderNulls | None = None) -> Claim:
    """The leave-one-out R² on the log scale (PCA refitted in every fold) is at least
    the source's 0.9387 (not reproduced only when its 95% bootstrap interval over the
    held-out models lies below it) and above its permuted-size null. Not by design,
    since the ladder varies shape (depth and width) beside size; but every ladder
    model is trained on the same corpus for the same ``tokens``, so Assumption 1
    holds by construction and a good fit is partly built in (said in the text)."""
    table = method.loo.table
    n, value = len(table), float(method.loo.r2_log)
    interval = tuple(float(v) for v in getattr(method, "loo_r2_ci", (float("nan"), float("nan"))))
    interval = interval if all(map(_finite, interval)) else None
    target_v = at_least(value=value if _finite(value) else None, floor=PAPER_LOO_R2, interval=interval, n=n,
                        min_n=LADDER_MIN_MODELS, unit="models")
    v = against_target_and_null(target_v, _null_verdict(nulls, "loo_r2", value, n))
    return Claim(
        id="lab_loo_r2", chapter=CHAPTER, section=SECTION_LADDER, unit="models",
        statement=("The law generalizes to a held-out model: leave-one-out R² of ln θ, PCA refitted in "
                   "every fold, is as high as the source's"),
        status=v.status, reason=v.reason, mechanical=v.mechanical, value=value, interval=interval, n=n,
        n_units=n, p=_or_none(nulls["loo_r2"].p) if nulls is not None else None, min_n=LADDER_MIN_MODELS,
        comparison=(f"leave-one-out R² ≥ {PAPER_LOO_R2} (95% bootstrap interval over held-out models), and "
                    f"above {PERMUTED_SIZES}"),
        source_value=f"R² = {PAPER_LOO_R2} ({len(load_paper_table('table1'))} dense models)",
        extra={"tokens": [int(t) for t in tokens], "in_sample_r2": float(method.law.r2)},
        **_null_kw(nulls, "loo_r2"),
    )


def lab_agreement_claims(method: LadderMethod, tokens: Sequence[int] = ()) -> list[Claim]:
    """Appendix B on the ladder. ``lab_agreement``: the mean ρ of the popular-text
    rankings over every pair of ladder models is higher than on the baseline texts
    (unit: models; p from the group labels permuted among the texts; by design,
    :data:`AGREEMENT_BY_DESIGN`). ``lab_agreement_families``: the mean ρ within a
    family is as high as across families, within the source's spread between its
    groups (:data:`AGREEMENT_GROUP_TOLERANCE`), its interval over resampled models
    and its p from the families permuted among the models. Not by design: the
    families differ in shape, which the lab leaves free to change the ranking."""
    agreement = getattr(method, "agreement", None)
    families = getattr(method, "families", None)
    kw = dict(section=SECTION_LADDER)
    s_pop = ("Ladder models agree more on which popular texts they predict best than on which baseline "
             "texts they do (Appendix B)")
    groups = ", ".join(f"{v} ({k})" for k, v in PAPER_RHO_GROUPS.items())
    s_fam = "Models agree on which popular texts they know as much within a group as across groups"
    src_fam = f"within groups ρ̄ = {groups}; all pairs {PAPER_RHO_POPULAR}"
    cmp_fam = (f"|ρ̄ within − ρ̄ across families| ≤ {AGREEMENT_GROUP_TOLERANCE:g} (95% interval over resampled "
               "models; p from the families permuted among the models)")
    if agreement is None:
        why = "it needs the ladder's families and two models with an answer on every text"
        return [not_testable("lab_agreement", CHAPTER, s_pop, why, source_value=AGREEMENT_SOURCE,
                             comparison=AGREEMENT_COMPARISON, unit="models", by_design=True,
                             by_design_reason=AGREEMENT_BY_DESIGN, **kw),
                not_testable("lab_agreement_families", CHAPTER, s_fam, why, source_value=src_fam,
                             comparison=cmp_fam, unit="models", **kw)]
    check, fam = agreement.check, agreement.families
    first = _agreement_claim("lab_agreement", s_pop, check, getattr(method, "acc", None),
                             {"tokens": [int(t) for t in tokens]}, source_value=AGREEMENT_SOURCE,
                             comparison=AGREEMENT_COMPARISON, by_design=True,
                             by_design_reason=AGREEMENT_BY_DESIGN, **kw)
    models = pair_models(check.popular)
    r = pairs_matrix(check.popular, models)
    labels = pd.Series(families).reindex(models).to_numpy(dtype=object)
    same = labels[:, None] == labels[None, :]
    diff = fam.within - fam.across if fam.n_within and fam.n_across else None
    lo, hi = pair_bootstrap(len(models), lambda w: weighted_mean(r, same)(w) - weighted_mean(r, ~same)(w))
    interval = (lo, hi) if _finite(lo) and _finite(hi) else None
    null = family_label_null(r, labels) if diff is not None else None
    status, reason = within(value=diff, target=0.0, tolerance=AGREEMENT_GROUP_TOLERANCE, n=len(models),
                            min_n=AGREEMENT_MIN_MODELS, interval=interval, unit="models")
    second = Claim(id="lab_agreement_families", chapter=CHAPTER, statement=s_fam, status=status,
                   reason=reason, comparison=cmp_fam, value=diff, interval=interval,
                   n=fam.n_within + fam.n_across,
                   n_units=len(models), p=_or_none(null.p) if null is not None else None,
                   min_n=AGREEMENT_MIN_MODELS, source_value=src_fam, unit="models",
                   null_kind="permutation" if null is not None else "none",
                   null_value=_or_none(null.null_value) if null is not None else None,
                   control_value=_or_none(null.null_value) if null is not None else None,
                   control_reason=("families permuted among the models" if null is not None
                                   else "no difference to permute"),
                   extra={"within": fam.within, "across": fam.across, "n_within": fam.n_within,
                          "n_across": fam.n_across, "n_families": int(len(set(labels))),
                          "mwu_p": _or_none(fam.mwu_pvalue), "tolerance": AGREEMENT_GROUP_TOLERANCE}, **kw)
    return [first, second]


def ladder_claims(method: LadderMethod, popular_copies: Sequence[int] = (), alpha: float = PAPER_ALPHA,
                  tokens: Sequence[int] = (), nulls: LadderNulls | None = None) -> list[Claim]:
    """The lab ladder's claims: the law, leave-one-out (band and R²), bounds,
    precision, recall, Appendix B on the ladder and the source's coefficients, each
    against ``nulls`` (:func:`~analysis.size.nulls.ladder_nulls`) where it has one."""
    return [law_claim(method, popular_copies, alpha, nulls=nulls), loo_claim(method, nulls=nulls),
            loo_r2_claim(method, tokens, nulls=nulls), bounds_claim(method, nulls=nulls),
            *pairwise_claims(method, alpha=alpha, nulls=nulls), *lab_agreement_claims(method, tokens),
            law_coefficients_claim(method)]

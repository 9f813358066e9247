"""The size chapter's claims: each verdict of ``notebooks/size.md`` as a
:class:`~analysis.core.claims.Claim` computed from the numbers.

* ``gap_<model>``: a real model predicts popular texts better than the baseline
  texts (the interval of the gap over texts);
* ``agreement``: models agree more on which popular texts they know than on the
  baseline texts (Appendix B; Mann–Whitney test);
* ``lab_law``: on the lab's ladder the latent index tracks size (R², slope test);
* ``lab_loo_band``: every leave-one-out prediction falls within a factor of two;
* ``lab_loo_r2``: the leave-one-out R² is as high as the source's 0.9387;
* ``lab_bounds_valid``: every best lower bound is at or below the true size
  (with the pair and reasons behind each invalid one);
* ``lab_precision``, ``lab_recall``: the pairwise test's decisions against the
  truth at τ = :data:`~analysis.size.params.PAIRWISE_TAU`;
* ``lab_agreement``, ``lab_agreement_families``: Appendix B on the ladder,
  popular against baseline texts and within against across families (by design);
* ``calibration_<kind>``: the pairwise test holds its level under a true null,
  for the source's formula on raw (``raw``) or lifted (``lifted``) accuracies and
  for this book's reading that averages both (``all``);
* ``law_coefficients``: the source's A and B (not testable on the lab's units).

The wording lives in :mod:`analysis.size.text`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from analysis.core.claims import (
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    Claim,
    directional,
    not_testable,
    within,
)
from analysis.size.method import LadderMethod
from analysis.size.method_groups import agreement_check, complete_models
from analysis.size.method_relative import sweep_at
from analysis.size.params import (
    KIND_ORDER,
    PAIRWISE_TAU,
    PAPER_ALPHA,
    PAPER_LAW,
    PAPER_LAW_R2,
    PAPER_LOO_BAND,
    PAPER_LOO_R2,
    PAPER_PRECISION_MIN,
    PAPER_RECALL_MIN,
    PAPER_RHO_BASELINE,
    PAPER_RHO_GROUPS,
    PAPER_RHO_P,
    PAPER_RHO_POPULAR,
    TRACKS_R2,
    load_paper_table,
)
from analysis.stats.intervals import wilson_interval

CHAPTER = "size"
#: the notebook's sections (MyST labels) each claim is shown in
SECTION_RESULTS = "size-results"
SECTION_AGREEMENT = "size-agreement"
SECTION_LADDER = "size-ladder"
SECTION_CALIBRATION = "size-calibration"
SECTION_SOURCE = "size-source"

#: texts (popular and baseline) below which a model's gap is inconclusive
GAP_MIN_TEXTS = 10
#: model pairs below which the agreement comparison is inconclusive
AGREEMENT_MIN_PAIRS = 10
#: ladder models below which the law, leave-one-out and bounds are inconclusive
LADDER_MIN_MODELS = 4
#: pairs (decided larger, or truly larger) below which precision or recall is inconclusive
PAIRS_MIN = 20
#: null replicates below which a calibration is inconclusive
CALIBRATION_MIN_REPS = 100
#: a kind's false-positive rate holds its level up to alpha + this many standard errors
CALIBRATION_SE = 2.0

KIND_STATEMENTS = {
    "raw": "with the source's block score on raw accuracies (this book's default)",
    "lifted": "with the source's block score on lifted accuracies",
    "all": "with block scores averaging raw and lifted accuracies together (this book's reading)",
}
#: "similarly high" agreement within a group: the widest gap in the source between one of its
#: groups' mean rho and the mean over all pairs (Appendix B)
AGREEMENT_GROUP_TOLERANCE = round(max(abs(v - PAPER_RHO_POPULAR) for v in PAPER_RHO_GROUPS.values()), 3)


def _slug(name: str) -> str:
    return re.sub(r"[^0-9A-Za-z]+", "_", name).strip("_").lower()


def _finite(x) -> bool:
    return x is not None and math.isfinite(float(x))


def by_interval(*, value, interval, n: int, min_n: int, what: str = "items") -> tuple[str, str]:
    """Status and reason of "the value is above zero" decided by its 95% interval:
    reproduced when the interval lies above zero, not reproduced when it lies
    below, or when it covers zero with the value at or below zero; otherwise
    inconclusive (as :func:`~analysis.core.claims.directional` treats p ≥ α)."""
    if not _finite(value) or not n:
        return NOT_TESTABLE, "this run has no value for it"
    if n < min_n:
        return INCONCLUSIVE, f"n = {n} {what} is below the minimum of {min_n}"
    lo, hi = interval
    if lo > 0:
        return REPRODUCED, f"the 95% interval lies above zero, n = {n} {what}"
    if hi < 0:
        return NOT_REPRODUCED, f"the 95% interval lies below zero, n = {n} {what}"
    if value > 0:
        return INCONCLUSIVE, f"the 95% interval covers zero, n = {n} {what}"
    return NOT_REPRODUCED, f"the opposite direction, the 95% interval covers zero, n = {n} {what}"


def at_least(*, value, floor: float, interval, n: int, min_n: int, what: str) -> tuple[str, str]:
    """Status and reason of "the value is at least the source's ``floor``":
    reproduced at or above it, not reproduced when the whole 95% interval is
    below it, inconclusive when only the value is."""
    if not _finite(value) or not n:
        return NOT_TESTABLE, f"this run has no {what}"
    if n < min_n:
        return INCONCLUSIVE, f"n = {n} {what} is below the minimum of {min_n}"
    if value >= floor:
        return REPRODUCED, f"{value:.2f} ≥ {floor:g}, n = {n} {what}"
    if interval[1] < floor:
        return NOT_REPRODUCED, (f"{value:.2f} < {floor:g}, 95% interval up to {interval[1]:.2f}, "
                                f"n = {n} {what}")
    return INCONCLUSIVE, f"{value:.2f} < {floor:g}, but the 95% interval reaches it, n = {n} {what}"


def gap_claims(gap: pd.DataFrame, models: Sequence[str]) -> list[Claim]:
    """One claim per model: its popular-minus-baseline accuracy gap is above zero
    (``gap`` from :func:`~analysis.size.method_groups.group_gap`)."""
    rows = gap.set_index("model") if len(gap) else pd.DataFrame()
    statement = ("A model predicts the next word of popular texts better than of obscure baseline texts "
                 "it cannot have seen")
    out = []
    for name in models:
        cid = f"gap_{_slug(name)}"
        if name not in rows.index:
            out.append(not_testable(cid, CHAPTER, statement,
                                    "it has no scorable answer on the popular or the baseline texts",
                                    section=SECTION_RESULTS, extra={"model": name}))
            continue
        r = rows.loc[name]
        n = int(r["n_popular"] + r["n_baseline"])
        interval = (float(r["ci_lo"]), float(r["ci_hi"]))
        status, reason = by_interval(value=r["gap"], interval=interval, n=n, min_n=GAP_MIN_TEXTS,
                                     what="texts")
        out.append(Claim(
            id=cid, chapter=CHAPTER, statement=statement, status=status, reason=reason,
            comparison="popular − baseline accuracy > 0 (95% bootstrap interval over texts)",
            value=r["gap"], interval=interval, n=n, min_n=GAP_MIN_TEXTS, section=SECTION_RESULTS,
            extra={"model": name, "popular": float(r["popular"]), "baseline": float(r["baseline"])},
        ))
    return out


def agreement_claim(acc: pd.DataFrame) -> Claim:
    """Appendix B: the mean rank correlation of per-text accuracy between models is
    higher on the popular texts than on the baseline texts (Mann–Whitney p)."""
    cid = "agreement"
    statement = ("Models agree more on which popular texts they predict best than on which baseline "
                 "texts they do (Appendix B)")
    source = f"ρ̄ = {PAPER_RHO_POPULAR} vs {PAPER_RHO_BASELINE}, Mann–Whitney p = {PAPER_RHO_P:.1e}"
    kw = dict(section=SECTION_AGREEMENT, source_value=source,
              comparison="mean Spearman ρ, popular − baseline > 0 (two-sided Mann–Whitney U)")
    check = agreement_check(acc)
    if check is None:
        complete, _ = complete_models(acc)
        return not_testable(cid, CHAPTER, statement,
                            f"it needs two models with an answer on every text; this run has {len(complete)}",
                            **kw)
    summary = check.summary.set_index("group")
    pop, base = float(summary.loc["popular", "mean_rho"]), float(summary.loc["baseline", "mean_rho"])
    n = int(check.popular["rho"].notna().sum())
    status, reason = directional(value=pop - base, null=0.0, p=check.mwu_pvalue, n=n,
                                 min_n=AGREEMENT_MIN_PAIRS)
    return Claim(id=cid, chapter=CHAPTER, statement=statement, status=status, reason=reason,
                 value=pop - base, n=n, p=check.mwu_pvalue, min_n=AGREEMENT_MIN_PAIRS,
                 extra={"popular": pop, "baseline": base}, **kw)


def law_claim(method: LadderMethod, popular_copies: str = "", alpha: float = PAPER_ALPHA) -> Claim:
    """On the ladder the latent index tracks size: R² of ln θ on z at least
    :data:`~analysis.size.params.TRACKS_R2`, with a significantly positive slope."""
    law = method.law
    r2, b, p, n = float(law.r2), float(law.B), law.p_b, int(law.n)
    if n < LADDER_MIN_MODELS:
        finding, status = "few", INCONCLUSIVE
        reason = f"n = {n} models is below the minimum of {LADDER_MIN_MODELS}"
    elif b <= 0:
        finding, status = "against", NOT_REPRODUCED
        reason = f"the index runs against size: slope B = {b:.2f} ≤ 0, n = {n} models"
    elif r2 < TRACKS_R2:
        finding, status, reason = "low_r2", NOT_REPRODUCED, f"R² = {r2:.2f} < {TRACKS_R2}, n = {n} models"
    elif _finite(p) and p < alpha:
        finding, status = "tracks", REPRODUCED
        reason = f"R² = {r2:.2f} ≥ {TRACKS_R2} and slope B = {b:.2f} > 0 with p = {p:.2g}, n = {n} models"
    else:
        finding, status = "not_significant", INCONCLUSIVE
        reason = (f"R² = {r2:.2f} ≥ {TRACKS_R2}, but the slope is not significant (p = {p:.2g} ≥ {alpha:g}), "
                  f"n = {n} models")
    gap = method.gap
    return Claim(
        id="lab_law", chapter=CHAPTER, section=SECTION_LADDER,
        statement="The latent index z tracks parameter count: ln θ = B z + c fits the reference models",
        status=status, reason=reason, value=r2, n=n, p=p, min_n=LADDER_MIN_MODELS,
        comparison=f"R² ≥ {TRACKS_R2} and slope B > 0 (OLS t-test, p < {alpha:g})",
        source_value=f"R² = {PAPER_LAW_R2}",
        extra={"B": b, "popular": float(gap["popular"].mean()) if len(gap) else float("nan"),
               "baseline": float(gap["baseline"].mean()) if len(gap) else float("nan"),
               "popular_copies": str(popular_copies), "tracks_r2": TRACKS_R2, "finding": finding},
    )


def _all_of(k: int, n: int, what: str) -> tuple[str, str]:
    if n < LADDER_MIN_MODELS:
        return INCONCLUSIVE, f"n = {n} models is below the minimum of {LADDER_MIN_MODELS}"
    return (REPRODUCED if k == n else NOT_REPRODUCED), f"{k} of {n} {what}"


def loo_claim(method: LadderMethod) -> Claim:
    """Leave-one-out: every held-out prediction within a factor of two of the true
    size, as all of the source's were."""
    table = method.loo.table
    n, k = len(table), int(table["within_band"].sum())
    status, reason = _all_of(k, n, "held-out predictions within a factor of two")
    lo, hi = wilson_interval(k, n) if n else (float("nan"), float("nan"))
    return Claim(
        id="lab_loo_band", chapter=CHAPTER, section=SECTION_LADDER,
        statement=("Leave-one-out predictions of the size, PCA refitted in every fold, all fall within a "
                   "factor of two of the true size"),
        status=status, reason=reason, value=method.loo.within_band, interval=(float(lo), float(hi)), n=n,
        min_n=LADDER_MIN_MODELS, comparison="share of held-out predictions with 0.5 ≤ θ̂/θ ≤ 2 equals 1",
        source_value=f"{100 * PAPER_LOO_BAND:.0f}% (LOO R² = {PAPER_LOO_R2})",
        extra={"k": k, "r2_log": float(method.loo.r2_log)},
    )


def bounds_claim(method: LadderMethod) -> Claim:
    """Every ladder model's best lower bound is at or below its true size, as every
    bound of the source's Table II is."""
    bounds = method.bounds
    n, k = len(bounds), int(bounds["valid"].sum())
    table2 = load_paper_table("table2")
    status, reason = _all_of(k, n, "best lower bounds at or below the true size")
    return Claim(
        id="lab_bounds_valid", chapter=CHAPTER, section=SECTION_LADDER,
        statement="The best lower bound, the larger of the absolute and the relative one, is valid",
        status=status, reason=reason, value=k / n if n else None, n=n, min_n=LADDER_MIN_MODELS,
        comparison="every best lower bound ≤ the true size",
        source_value=f"{int((table2['best_lb'] <= table2['size']).sum())} of {len(table2)} (Table II)",
        extra={"k": k, "invalid": _invalid_records(getattr(method, "invalid", None))},
    )


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


def pairwise_claims(method: LadderMethod, tau: float = PAIRWISE_TAU) -> list[Claim]:
    """Precision and recall of the pairwise test's "f is larger" decisions at τ,
    each against the lowest the source reports over τ from 0.01 to 0.70."""
    row = sweep_at(method.sweep, tau)
    tp = int(row["tp"])
    out = []
    for cid, what, n, floor, words in (
        ("lab_precision", "precision", tp + int(row["fp"]), PAPER_PRECISION_MIN, "pairs decided larger"),
        ("lab_recall", "recall", tp + int(row["fn"]), PAPER_RECALL_MIN, "pairs truly larger"),
    ):
        value = float(row[what])
        lo, hi = wilson_interval(tp, n) if n else (float("nan"), float("nan"))
        status, reason = at_least(value=value, floor=floor, interval=(float(lo), float(hi)), n=n,
                                  min_n=PAIRS_MIN, what=words)
        out.append(Claim(
            id=cid, chapter=CHAPTER, section=SECTION_LADDER,
            statement=f"The pairwise test's {what} stays at or above {floor:g} for size gaps τ up to 0.70",
            status=status, reason=reason, value=value, interval=(float(lo), float(hi)), n=n, min_n=PAIRS_MIN,
            comparison=f"{what} at τ = {float(row['tau']):g} ≥ the source's lowest over τ in [0.01, 0.70]",
            source_value=f"≥ {floor:g}", extra={"tau": float(row["tau"]), "what": what},
        ))
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
    )


def loo_r2_claim(method: LadderMethod, tokens: str = "") -> Claim:
    """The leave-one-out R² on the log scale (PCA refitted in every fold) is at
    least the source's 0.9387: reproduced at or above it, not reproduced when its
    95% bootstrap interval over the held-out models lies below it. Not by design,
    since the ladder varies shape (depth and width) beside size; but every ladder
    model is trained on the same corpus for the same ``tokens``, so Assumption 1
    holds by construction and a good fit is partly built in (said in ``extra``)."""
    table = method.loo.table
    n, value = len(table), float(method.loo.r2_log)
    interval = tuple(float(v) for v in getattr(method, "loo_r2_ci", (float("nan"), float("nan"))))
    status, reason = at_least(value=value, floor=PAPER_LOO_R2, interval=interval, n=n,
                              min_n=LADDER_MIN_MODELS, what="models")
    return Claim(
        id="lab_loo_r2", chapter=CHAPTER, section=SECTION_LADDER,
        statement=("The law generalizes to a held-out model: leave-one-out R² of ln θ, PCA refitted in "
                   "every fold, is as high as the source's"),
        status=status, reason=reason, value=value, interval=interval, n=n, min_n=LADDER_MIN_MODELS,
        comparison=f"leave-one-out R² ≥ {PAPER_LOO_R2} (95% bootstrap interval over held-out models)",
        source_value=f"R² = {PAPER_LOO_R2} ({len(load_paper_table('table1'))} dense models)",
        extra={"tokens": str(tokens), "in_sample_r2": float(method.law.r2)},
    )


def _agreement_parts(method: LadderMethod):
    agreement = getattr(method, "agreement", None)
    families = getattr(method, "families", None)
    return agreement, (0 if families is None else int(families.nunique()))


def lab_agreement_claims(method: LadderMethod, tokens: str = "") -> list[Claim]:
    """Appendix B on the ladder: ``lab_agreement``, the mean ρ of the popular-text
    rankings over every pair of ladder models is higher than on the baseline texts
    (two-sided Mann–Whitney U), and ``lab_agreement_families``, the mean ρ within a
    family is as high as across families (within the source's spread between its
    groups, :data:`AGREEMENT_GROUP_TOLERANCE`). Both by design: every ladder model
    is trained on the same corpus, so Assumption 1 holds by construction."""
    agreement, n_families = _agreement_parts(method)
    kw = dict(section=SECTION_LADDER, by_design=True)
    s_pop = ("Ladder models agree more on which popular texts they predict best than on which baseline "
             "texts they do (Appendix B)")
    src_pop = f"ρ̄ = {PAPER_RHO_POPULAR} vs {PAPER_RHO_BASELINE}, Mann–Whitney p = {PAPER_RHO_P:.1e}"
    cmp_pop = "mean Spearman ρ, popular − baseline > 0 (two-sided Mann–Whitney U)"
    groups = ", ".join(f"{v} ({k})" for k, v in PAPER_RHO_GROUPS.items())
    s_fam = "Models agree on which popular texts they know as much within a group as across groups"
    src_fam = f"within groups ρ̄ = {groups}; all pairs {PAPER_RHO_POPULAR}"
    cmp_fam = f"|ρ̄ within − ρ̄ across families| ≤ {AGREEMENT_GROUP_TOLERANCE:g}"
    if agreement is None:
        why = "it needs the ladder's families and two models with an answer on every text"
        return [not_testable("lab_agreement", CHAPTER, s_pop, why, source_value=src_pop, comparison=cmp_pop,
                             **kw),
                not_testable("lab_agreement_families", CHAPTER, s_fam, why, source_value=src_fam,
                             comparison=cmp_fam, **kw)]
    check, fam = agreement.check, agreement.families
    summary = check.summary.set_index("group")
    pop, base = float(summary.loc["popular", "mean_rho"]), float(summary.loc["baseline", "mean_rho"])
    n = int(check.popular["rho"].notna().sum())
    status, reason = directional(value=pop - base, null=0.0, p=check.mwu_pvalue, n=n,
                                 min_n=AGREEMENT_MIN_PAIRS)
    first = Claim(id="lab_agreement", chapter=CHAPTER, statement=s_pop, status=status, reason=reason,
                  comparison=cmp_pop, value=pop - base, n=n, p=check.mwu_pvalue, min_n=AGREEMENT_MIN_PAIRS,
                  source_value=src_pop, extra={"popular": pop, "baseline": base, "tokens": str(tokens)}, **kw)
    n_fam = fam.n_within + fam.n_across
    diff = fam.within - fam.across if fam.n_within and fam.n_across else None
    status, reason = within(value=diff, target=0.0, tolerance=AGREEMENT_GROUP_TOLERANCE, n=n_fam,
                            min_n=AGREEMENT_MIN_PAIRS)
    second = Claim(id="lab_agreement_families", chapter=CHAPTER, statement=s_fam, status=status,
                   reason=reason, comparison=cmp_fam, value=diff, n=n_fam, p=fam.mwu_pvalue,
                   min_n=AGREEMENT_MIN_PAIRS, source_value=src_fam,
                   extra={"within": fam.within, "across": fam.across, "n_within": fam.n_within,
                          "n_across": fam.n_across, "n_families": n_families,
                          "tolerance": AGREEMENT_GROUP_TOLERANCE}, **kw)
    return [first, second]


def ladder_claims(method: LadderMethod, popular_copies: str = "", alpha: float = PAPER_ALPHA,
                  tokens: str = "") -> list[Claim]:
    """The lab ladder's claims: the law, leave-one-out (band and R²), bounds,
    precision, recall, Appendix B on the ladder and the source's coefficients."""
    return [law_claim(method, popular_copies, alpha), loo_claim(method), loo_r2_claim(method, tokens),
            bounds_claim(method), *pairwise_claims(method), *lab_agreement_claims(method, tokens),
            law_coefficients_claim(method)]


def calibration_status(*, rate: float, se: float, n: int, alpha: float) -> tuple[str, str, float]:
    """Status, reason and one-sided z-test p-value of "the false-positive rate
    under a true null holds its level": reproduced when ``rate`` ≤ α + 2 se."""
    limit = alpha + CALIBRATION_SE * se
    p = float(stats.norm.sf((rate - alpha) / se)) if se > 0 else float("nan")
    bound = f"α + {CALIBRATION_SE:g} se = {limit:.3f}"
    if n < CALIBRATION_MIN_REPS:
        return INCONCLUSIVE, f"n = {n} replicates is below the minimum of {CALIBRATION_MIN_REPS}", p
    if rate <= limit:
        return REPRODUCED, f"{rate:.3f} ≤ {bound}, n = {n} replicates", p
    return NOT_REPRODUCED, f"{rate:.3f} > {bound} (one-sided z-test p = {p:.2g}), n = {n} replicates", p


def calibration_claims(cal: pd.DataFrame, alpha: float = PAPER_ALPHA,
                       kinds: Sequence[str] = KIND_ORDER) -> list[Claim]:
    """Per block-score kind: the pairwise test rejects a true null at most at its
    level, i.e. its false-positive rate is at most α + 2 standard errors (``cal``
    from :func:`~analysis.size.method_calibration.calibration`)."""
    at = cal[np.isclose(cal["alpha"].astype(float), alpha)].set_index("kind") if len(cal) else pd.DataFrame()
    out = []
    for kind in kinds:
        cid = f"calibration_{kind}"
        statement = f"The pairwise test, {KIND_STATEMENTS[kind]}, rejects a true null at most at its level α"
        kw = dict(section=SECTION_CALIBRATION, source_value=f"α = {alpha:g}",
                  comparison=f"false-positive rate ≤ α + {CALIBRATION_SE:g} se, two resamples of one model")
        if kind not in at.index:
            out.append(not_testable(cid, CHAPTER, statement, "the model it resamples has no scorable answer",
                                    extra={"kind": kind}, **kw))
            continue
        r = at.loc[kind]
        rate, se, n = float(r["false_positive_rate"]), float(r["se"]), int(r["n_rep"])
        status, reason, p = calibration_status(rate=rate, se=se, n=n, alpha=alpha)
        out.append(Claim(id=cid, chapter=CHAPTER, statement=statement, status=status, reason=reason,
                         value=rate, n=n, p=p, min_n=CALIBRATION_MIN_REPS,
                         extra={"kind": kind, "alpha": alpha, "se": se}, **kw))
    return out

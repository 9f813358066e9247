"""The size chapter's claims decided on hand-computed numbers (analysis.size.claims),
and a few of their renderings (analysis.size.text)."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.core.claim_text import counts_sentence
from analysis.core.claims import (
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    decide,
    from_json,
    to_json,
)
from analysis.size import claims as cl
from analysis.size import nulls
from analysis.size.claims import agreement_claim, gap_claims
from analysis.size.claims_calibration import calibration_claims
from analysis.size.claims_ladder import (
    bounds_claim,
    ladder_claims,
    law_claim,
    law_coefficients_claim,
    loo_claim,
    pairwise_claims,
)
from analysis.size.method import ladder_method
from analysis.size.method_absolute import LOOResult, ScalingLaw
from analysis.size.method_calibration import calibration
from analysis.size.method_groups import agreement, assumption_check, group_gap
from analysis.size.method_probe import accuracy_table, position_table
from analysis.size.method_relative import decision_metrics, sweep_at, tau_sweep
from analysis.size.nulls import LADDER_STATS, LadderNulls, ladder_nulls, pair_bootstrap, text_label_null
from analysis.size.text import agreement_note, calibration_text, gap_text, pairwise_text, render
from analysis.stats.result import Estimate

# --- the popular-vs-baseline gap of the real models ------------------------------------


def _gap() -> pd.DataFrame:
    rows = [  # model, popular, baseline, gap, ci_lo, ci_hi, n_popular, n_baseline, n_rows
        ("above", 0.30, 0.10, 0.20, 0.05, 0.35, 37, 4, 246),
        ("covers", 0.245, 0.234, 0.011, -0.035, 0.057, 37, 4, 246),
        ("against", 0.10, 0.12, -0.02, -0.05, 0.01, 37, 4, 246),
        ("below", 0.10, 0.20, -0.10, -0.20, -0.01, 37, 4, 246),
        ("api:few", 1.0, 0.0, 1.0, 1.0, 1.0, 2, 1, 18),
        ("floor", 0.0, 0.0, 0.0, 0.0, 0.0, 37, 4, 246),
    ]
    return pd.DataFrame(rows, columns=["model", "popular", "baseline", "gap", "ci_lo", "ci_hi", "n_popular",
                                       "n_baseline", "n_rows"])


def test_gap_claims_decide_by_the_interval_over_texts():
    names = ["above", "covers", "against", "below", "api:few", "floor", "silent-model"]
    claims = gap_claims(_gap(), names)
    got = {c.id: (c.status, c.n_units) for c in claims}
    assert got == {
        "gap_above": (REPRODUCED, 41),
        "gap_covers": (INCONCLUSIVE, 41),  # +0.011 but the interval covers zero
        "gap_against": (INCONCLUSIVE, 41),  # the other side of zero, not significant: no evidence either way
        "gap_below": (NOT_REPRODUCED, 41),  # the whole interval below zero: evidence against the source
        "gap_api_few": (INCONCLUSIVE, 3),  # 3 texts, below the minimum of 10
        "gap_floor": (NOT_TESTABLE, 41),  # 0 accuracy on every text of both groups
        "gap_silent_model": (NOT_TESTABLE, None),
    }
    above = claims[0]
    assert above.value == pytest.approx(0.2) and above.interval == (0.05, 0.35)
    assert (above.unit, above.n, above.kind, above.null_kind, above.null_value) == (
        "texts", 246, "source", "analytic", 0.0)
    assert above.control_value is None and "control arm" in above.control_reason
    assert above.min_n == cl.GAP_MIN_TEXTS and above.section == "size-results"
    assert "3 texts, below the minimum of 10" in claims[4].reason
    assert "floor" in claims[5].reason


def test_gap_text_renders_each_model_in_order():
    claims = gap_claims(_gap().iloc[[1]], ["covers", "api:x"])
    assert gap_text(claims) == (
        "For covers, popular texts are predicted at 0.245 and baseline texts at 0.234: a gap of +0.011 "
        "(95% interval -0.035 to +0.057). **Inconclusive**: the source's direction, not significant (95% "
        "interval [-0.035, 0.057] covers 0), 41 texts. "
        "For api:x, no gap can be computed. **Not testable here**: it has no scorable answer on the popular "
        "or the baseline texts.")


def test_group_gap_resamples_whole_texts_and_counts_rows():
    # two texts per group, three lengths each: the gap's unit is the text, its rows the cells
    rows = [("m", g, f"{g}{t}", ln, acc) for g, base in (("popular", 0.5), ("baseline", 0.1))
            for t, acc in enumerate((base, base + 0.2)) for ln in (4, 8, 12)]
    acc = pd.DataFrame(rows, columns=["model", "group", "text_id", "prefix_len", "acc"])
    [r] = group_gap(acc, n_boot=500).to_dict("records")
    assert (r["n_popular"], r["n_baseline"], r["n_rows"]) == (2, 2, 12)
    assert r["gap"] == pytest.approx(0.4)
    # resampling texts: each group's mean is 0.5, 0.6 or 0.7 (popular), so the gap stays in [0.2, 0.6]
    assert 0.2 - 1e-9 <= r["ci_lo"] <= r["gap"] <= r["ci_hi"] <= 0.6 + 1e-9


# --- Appendix B: agreement on which texts a model knows -----------------------------------


def _agreement_acc(n_models: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for mi in range(n_models):
        for t in range(6):
            rows.append((f"m{mi}", "popular", f"p{t}", 4, 0.1 * t + 0.02 * mi + 0.001 * rng.normal()))
        for t in range(4):
            rows.append((f"m{mi}", "baseline", f"b{t}", 4, rng.uniform()))
    return pd.DataFrame(rows, columns=["model", "group", "text_id", "prefix_len", "acc"])


def test_agreement_claim_permutes_texts_and_counts_models():
    acc = _agreement_acc(5)
    claim = agreement_claim(acc)
    check = assumption_check(acc)
    ref = stats.mannwhitneyu(check.popular["rho"], check.baseline["rho"], alternative="two-sided")
    assert (claim.unit, claim.n_units, claim.n) == ("models", 5, 10)  # 5 models, C(5, 2) pairs
    assert claim.extra["mwu_p"] == pytest.approx(ref.pvalue)  # kept, but the pairs share their models
    assert claim.extra["popular"] == pytest.approx(1.0)  # every model ranks the popular texts alike
    assert claim.value == pytest.approx(1.0 - check.baseline["rho"].mean())
    null = text_label_null(acc, [f"m{i}" for i in range(5)])
    assert claim.null_kind == "permutation" and claim.p == null.p and claim.null_value == null.null_value
    assert claim.status == REPRODUCED and claim.p < 0.05


def test_agreement_claim_needs_five_models_and_two_to_be_testable():
    assert agreement_claim(_agreement_acc(4)).status == INCONCLUSIVE  # 4 models, below 5
    one = agreement_claim(_agreement_acc(1))
    assert one.status == NOT_TESTABLE and one.reason.endswith("this run has 1")


def test_a_text_label_null_that_exchangeable_texts_do_not_beat():
    # every text alike (popular or baseline): the labels carry nothing, so no significant difference
    rng = np.random.default_rng(3)
    level = rng.uniform(size=10)
    rows = [(f"m{mi}", "popular" if t < 6 else "baseline", f"t{t}", 4, level[t] + 0.05 * rng.normal())
            for mi in range(6) for t in range(10)]
    acc = pd.DataFrame(rows, columns=["model", "group", "text_id", "prefix_len", "acc"])
    claim = agreement_claim(acc)
    assert claim.p >= 0.05 and claim.status == INCONCLUSIVE


def test_pair_bootstrap_by_hand():
    # two models: a resample is both (their one pair) or one twice (no pair, left out)
    r = np.array([[np.nan, 0.7], [0.7, np.nan]])
    assert pair_bootstrap(2, nulls.weighted_mean(r)) == pytest.approx((0.7, 0.7))
    # three models with pairs 0, 0, 1: every resample's mean lies between them, and some differ
    r3 = np.array([[np.nan, 0.0, 0.0], [0.0, np.nan, 1.0], [0.0, 1.0, np.nan]])
    lo, hi = pair_bootstrap(3, nulls.weighted_mean(r3), n_boot=500)
    assert 0.0 <= lo < 1 / 3 < hi <= 1.0
    assert all(math.isnan(x) for x in pair_bootstrap(1, nulls.weighted_mean(r3)))


# --- the lab ladder ---------------------------------------------------------------------


def _nulls(p=0.005, null=0.0, **over) -> LadderNulls:
    """A hand-set permuted-size null for every ladder statistic (``over``: name -> (p, null))."""
    est = {k: Estimate(0.0, p=over.get(k, (p, null))[0], null_value=over.get(k, (p, null))[1], n=10,
                       n_units=10) for k in LADDER_STATS}
    return LadderNulls(est)


def _method(r2=0.93, B=0.25, se_b=0.02, n=10, within=None, valid=None, sweep=None):
    gap = pd.DataFrame({"popular": [0.50, 0.60], "baseline": [0.06, 0.08]})
    law = ScalingLaw(A=1.0, B=B, c=0.0, r2=r2, n=n, se_b=se_b)
    within = [True] * n if within is None else within
    loo = LOOResult(table=pd.DataFrame({"within_band": within}), within_band=float(np.mean(within)),
                       r2_log=0.9)
    bounds = pd.DataFrame({"valid": [True] * n if valid is None else valid})
    return SimpleNamespace(law=law, gap=gap, loo=loo, bounds=bounds, sweep=sweep)


@pytest.mark.parametrize("kw, p, status", [
    (dict(r2=0.93, B=0.25), 0.005, REPRODUCED),  # above the permuted-size null, p < 0.05
    (dict(r2=0.60, B=0.30), 0.30, INCONCLUSIVE),  # not significant against the null
    (dict(r2=0.80, B=-0.30), 0.005, NOT_REPRODUCED),  # runs against size, significantly
    (dict(r2=0.99, B=0.30, n=3), 0.005, INCONCLUSIVE),  # 3 models, below the minimum of 4
])
def test_law_claim_against_the_permuted_size_null(kw, p, status):
    claim = law_claim(_method(**kw), popular_copies=(8,), nulls=_nulls(p=p, null=0.05))
    assert claim.status == status
    assert claim.value == pytest.approx(np.sign(kw["B"]) * kw["r2"]) and claim.n_units == kw.get("n", 10)
    assert (claim.unit, claim.null_kind, claim.null_value, claim.control_value, claim.p) == (
        "models", "permutation", 0.05, 0.05, p)
    assert claim.source_value == "R² = 0.9504" and claim.kind == "source"


def test_law_claim_without_a_null_is_never_reproduced():
    claim = law_claim(_method())
    assert claim.status == INCONCLUSIVE and claim.null_kind == "none" and claim.control_reason


def test_law_rendering_keeps_the_chapter_sentence():
    good = render(law_claim(_method(), popular_copies=(8,), nulls=_nulls(null=0.04)))
    assert good.startswith(
        "On this ladder the index tracks size (R² = 0.93, against 0.04 with the sizes permuted among the "
        "models): the models predict the next word inside their popular excerpts at 0.550 on average and on "
        "the held-out stories at 0.070; each excerpt is in the corpus 8 times. **Reproduced**: the source's "
        "direction, p = 0.005 < 0.05")
    bad = render(law_claim(_method(r2=0.8, B=-0.3), nulls=_nulls()))
    assert bad.startswith("On this ladder the index runs against size (R² = 0.80, slope -0.30")


def test_loo_and_bounds_claims_need_every_model_and_the_null():
    assert loo_claim(_method(), nulls=_nulls()).status == REPRODUCED
    # 10 of 10, but no better than under permuted sizes: inconclusive, never reproduced
    assert loo_claim(_method(), nulls=_nulls(loo_band=(0.4, 1.0))).status == INCONCLUSIVE
    missed = loo_claim(_method(within=[True] * 9 + [False]), nulls=_nulls())
    assert (missed.status, missed.value) == (NOT_REPRODUCED, 0.9)  # the Wilson interval excludes 100%
    assert missed.interval[1] < 1.0
    bounds = bounds_claim(_method(valid=[True] * 8 + [False] * 2), nulls=_nulls())
    assert (bounds.status, bounds.value, bounds.n_units) == (NOT_REPRODUCED, 0.8, 10)
    assert bounds.source_value == "16 of 16 (Table II)"
    few = bounds_claim(_method(n=3, within=[True] * 3, valid=[True] * 3), nulls=_nulls())
    assert few.status == INCONCLUSIVE


def test_a_mechanical_null_verdict_stays_mechanical():
    # the control shows the effect (significant on the source's side): the claim measures the method
    null = decide(value=0.9, null=0.5, p=0.01, n_units=10, min_n=4, control_value=0.9, control_p=0.01)
    assert null.mechanical and null.status == INCONCLUSIVE
    v = cl.against_target_and_null((REPRODUCED, "at the source's value"), null)
    assert v.status == INCONCLUSIVE and v.mechanical
    miss = cl.against_target_and_null((NOT_REPRODUCED, "below"), null)
    assert miss.status == NOT_REPRODUCED and not miss.mechanical


def _sweep(tp, fp, fn, tn=10) -> pd.DataFrame:
    m = decision_metrics([True] * (tp + fp) + [False] * (fn + tn),
                            [True] * tp + [False] * fp + [True] * fn + [False] * tn)
    return pd.DataFrame([dict(tau=0.01, **m), dict(tau=0.5, **m), dict(tau=0.7, **m)])


def test_precision_and_recall_against_the_source_floors():
    precision, recall = pairwise_claims(_method(sweep=_sweep(tp=35, fp=5, fn=1)), nulls=_nulls())[:2]
    assert (precision.id, precision.status, precision.n, precision.n_units) == ("lab_precision", REPRODUCED,
                                                                                40, 10)
    assert precision.value == pytest.approx(0.875) and precision.source_value == "≥ 0.83"
    assert (recall.status, recall.n, recall.value) == (REPRODUCED, 36, pytest.approx(35 / 36))
    # 0.5, below the floor; a method without pairs has no interval over its models, and no pair-level
    # (Wilson) interval stands in for one: a miss without an interval is not evidence against the source
    low = pairwise_claims(_method(sweep=_sweep(tp=10, fp=10, fn=2)), nulls=_nulls())[0]
    assert low.status == INCONCLUSIVE and low.interval is None and "no interval" in low.reason
    near = pairwise_claims(_method(sweep=_sweep(tp=20, fp=5, fn=0)), nulls=_nulls())[0]
    assert near.status == INCONCLUSIVE and near.value == 0.8 and near.interval is None
    # at the floor but no better than under permuted sizes: the test decides "larger" for anything
    flat = pairwise_claims(_method(sweep=_sweep(tp=35, fp=5, fn=1)),
                              nulls=_nulls(precision=(0.6, 0.87)))[0]
    assert flat.status == INCONCLUSIVE and "permuted-size null" in flat.reason


def test_precision_interval_resamples_models():
    # three models of sizes 1, 2, 4: every ordered pair decided larger; the truth at τ = 0.5 holds for 3
    theta = pd.Series({"a": 1.0, "b": 2.0, "c": 4.0})
    pairs = pd.DataFrame([(f, g, 0.01) for f in theta.index for g in theta.index if f != g],
                         columns=["f", "g", "pvalue"])
    sweep = tau_sweep(pairs, theta)
    method = SimpleNamespace(theta=theta, pairs=pairs, sweep=sweep, law=ScalingLaw(1, 1, 0, 1, 3))
    precision, recall = pairwise_claims(method, nulls=_nulls())[:2]
    assert precision.value == 0.5 and recall.value == 1.0 and precision.n == 6 and precision.n_units == 3
    # any resample of the models: each pair of distinct models gives one true and one false "larger",
    # so the precision is 0.5 in every resample (a Wilson interval over 6 pairs would be wide)
    assert precision.interval == (0.5, 0.5)
    assert recall.interval == (1.0, 1.0)  # every truly larger pair of every resample was decided larger


def test_ladder_claims_are_unique_and_survive_json():
    method = _method(sweep=_sweep(tp=35, fp=5, fn=1))
    claims = ladder_claims(method, popular_copies=(8,), nulls=_nulls())
    assert [c.id for c in claims] == ["lab_law", "lab_loo_band", "lab_loo_r2", "lab_bounds_valid",
                                      "lab_precision", "lab_recall", "lab_precision_t001",
                                      "lab_recall_t001", "lab_precision_t070", "lab_recall_t070",
                                      "lab_agreement",
                                      "lab_agreement_families", "law_coefficients"]
    # a method without families has no Appendix B on the ladder: said, not invented
    assert [c.status for c in claims[10:12]] == [NOT_TESTABLE, NOT_TESTABLE]
    assert claims[-1].status == NOT_TESTABLE and claims[-1].source_value == "A = 41.18, B = 0.62"
    assert {c.unit for c in claims} == {"models"} and all(c.kind == "source" for c in claims)
    assert from_json(to_json(claims)) == claims


@pytest.fixture(scope="module")
def unrelated_ladder():
    """Six models whose profiles do not depend on their sizes: the size signal is absent."""
    rng = np.random.default_rng(11)
    theta = pd.Series({"w1": 100.0, "w2": 200.0, "w3": 400.0, "d1": 150.0, "d2": 300.0, "d3": 600.0})
    rows = [(m, "popular", f"p{t}", ln, 20, 0, 0.3 + 0.02 * t + 0.05 * rng.normal())
            for m in theta.index for t in range(8) for ln in (4, 8)]
    rows += [(m, "baseline", f"b{t}", ln, 20, 0, 0.05 + 0.01 * rng.normal())
             for m in theta.index for t in range(2) for ln in (4, 8)]
    acc = pd.DataFrame(rows, columns=["model", "group", "text_id", "prefix_len", "n", "correct", "acc"])
    method = ladder_method(acc, theta)
    return method, ladder_nulls(method)


def test_a_permuted_size_null_that_unrelated_profiles_do_not_beat(unrelated_ladder):
    method, lab_nulls = unrelated_ladder
    assert lab_nulls["law_r2"].n_null == 200 and lab_nulls["law_r2"].n_units == 6
    law = law_claim(method, nulls=lab_nulls)
    assert law.p >= 0.05 and law.status != REPRODUCED
    # the observed statistics are the pipeline's own
    assert lab_nulls["loo_band"].value == method.loo.within_band
    assert lab_nulls["law_r2"].value == pytest.approx(np.sign(method.law.B) * method.law.r2)


# --- calibration under a true null ------------------------------------------------------


def _cal(all_rate, raw_rate, lifted_rate=None, n_rep=200, alpha=0.05) -> pd.DataFrame:
    rates = {"all": all_rate, "raw": raw_rate, **({} if lifted_rate is None else {"lifted": lifted_rate})}
    se = math.sqrt(alpha * (1 - alpha) / n_rep)
    return pd.DataFrame({"alpha": alpha, "false_positive_rate": list(rates.values()), "se": se,
                         "n_rep": n_rep, "kind": list(rates)})


def test_calibration_claims_on_the_committed_numbers():
    # results/size.json: 0.160 (all), 0.025 (raw) and 0.270 (lifted)
    raw, lifted, all_ = calibration_claims(_cal(0.160, 0.025, 0.270))
    assert (all_.id, all_.status, all_.n, all_.unit) == ("calibration_all", NOT_REPRODUCED, 200, "replicates")
    assert all_.p == pytest.approx(stats.binomtest(32, 200, 0.05, alternative="greater").pvalue)
    assert all_.interval[0] > 0.05 + 2 * math.sqrt(0.05 * 0.95 / 200)  # the whole interval above the limit
    assert (all_.null_kind, all_.null_value, all_.source_value) == ("analytic", 0.05, "α = 0.05")
    assert (raw.id, raw.status) == ("calibration_raw", REPRODUCED)
    assert (lifted.id, lifted.status) == ("calibration_lifted", NOT_REPRODUCED)
    # the book's reading is said to be the book's, never "the source's block scores"
    assert "this book's reading" in all_.statement and "source's block score on lifted" in lifted.statement


def test_calibration_claims_at_the_limit_with_few_replicates_and_without_answers():
    se = math.sqrt(0.05 * 0.95 / 200)
    at_limit, over = calibration_claims(_cal(0.05 + 2 * se, 0.05 + 2 * se + 0.001), kinds=("all", "raw"))
    # just over the limit, but the interval reaches it: no evidence the test fails its level
    assert (at_limit.status, over.status) == (REPRODUCED, INCONCLUSIVE)
    assert {c.status for c in calibration_claims(_cal(0.3, 0.0, 0.1, n_rep=20))} == {INCONCLUSIVE}
    empty = calibration_claims(pd.DataFrame(columns=["alpha", "false_positive_rate", "se", "n_rep",
                                                        "kind"]))
    assert [c.status for c in empty] == [NOT_TESTABLE] * 3
    # a run that calibrated two kinds says the third could not run
    assert calibration_claims(_cal(0.245, 0.04))[1].status == NOT_TESTABLE


def test_calibration_text_says_which_kind_holds_its_level():
    claims = calibration_claims(_cal(0.245, 0.04, 0.30))
    assert calibration_text(claims, "raw", 0.05) == (
        "At α = 0.05 the empirical false-positive rate is, with the source's formula on raw accuracies, "
        "0.040 (holds its level); with the source's formula on lifted accuracies, 0.300 (exceeds its "
        "level); with this book's reading, raw and lifted accuracies averaged together, 0.245 (exceeds "
        "its level). This run's pairwise tests use raw block scores (the source's formula on raw "
        "accuracies), which hold their level here.")
    assert calibration_text(claims, "all", 0.05).endswith(
        "use all block scores (this book's reading, raw and lifted accuracies averaged together), which "
        "do not hold their level here.")


def test_source_counts_are_computed_from_the_claims():
    claims = [*calibration_claims(_cal(0.160, 0.025, 0.270)), law_coefficients_claim()]
    assert counts_sentence(claims) == ("Of this chapter's 4 claims a source makes, 1 reproduced, "
                                       "2 not reproduced, 0 inconclusive, 1 not testable here.")


# --- a model that answers nothing --------------------------------------------------------


def test_a_model_that_answers_nothing_leaves_every_size_step_standing():
    # every query failed: no accuracy, no gap, no agreement, no calibration, each a claim not testable
    samples = pd.DataFrame({"text_id": ["a", "a", "b"], "group": ["popular", "popular", "baseline"],
                            "prefix_len": [4, 4, 4], "position": [5, 9, 7], "prefix": ["p", "q", "r"],
                            "target": ["x", "y", "z"]})
    answers = samples.assign(model="api:x", mode="chat", template_id=1, prediction=None,
                             error="APIConnectionError: refused")
    acc = accuracy_table(answers)
    assert acc.empty
    assert [c.status for c in gap_claims(group_gap(acc), ["api:x"])] == [NOT_TESTABLE]
    assert agreement(acc).empty and agreement_claim(acc).status == NOT_TESTABLE
    assert agreement_note(acc) == (
        "Agreement needs two models with an answer on every text; this run has 0.")
    cal = calibration(position_table(answers), "api:x", n_rep=10)
    claims = calibration_claims(cal)
    assert len(claims) == 3
    assert cal.empty and {c.status for c in claims} == {NOT_TESTABLE}
    assert calibration_text(claims, "raw", 0.05) == (
        "The calibration could not run: the model it resamples has no scorable answer.")


# --- an undefined ratio is said in words, never printed as nan ------------------------------


def test_pairwise_sentence_says_an_undefined_precision_in_words():
    # nothing decided larger: precision 0/0 is undefined; 5 pairs truly larger, none found: recall 0/5
    row = sweep_at(_sweep(tp=0, fp=0, fn=5), 0.5)
    assert math.isnan(row["precision"]) and row["recall"] == 0.0
    assert pairwise_text(row, 0.05) == (
        "At τ = 0.5 (α = 0.05) the test's precision is undefined (no pair was decided larger, n = 0) and "
        "its recall is 0.00 (n = 5 pairs truly larger).")
    # both defined: 35 of 40 decided pairs truly larger, 35 of 36 truly larger pairs found
    assert pairwise_text(sweep_at(_sweep(tp=35, fp=5, fn=1), 0.5), 0.05) == (
        "At τ = 0.5 (α = 0.05) the test's precision is 0.88 (n = 40 pairs decided larger) and its recall "
        "is 0.97 (n = 36 pairs truly larger).")
    # nothing truly larger either: both undefined
    both = pairwise_text(sweep_at(_sweep(tp=0, fp=0, fn=0), 0.5), 0.05)
    assert both == ("At τ = 0.5 (α = 0.05) the test's precision is undefined (no pair was decided larger, "
                    "n = 0) and its recall is undefined (no pair is truly larger, n = 0).")


def test_an_undefined_precision_claim_is_rendered_in_words():
    precision, recall = pairwise_claims(_method(sweep=_sweep(tp=0, fp=0, fn=5)))[:2]
    assert precision.status == NOT_TESTABLE and precision.n == 0 and precision.value is None
    text = render(precision)
    assert "nan" not in text
    assert text == (
        "At τ = 0.5 no pair was decided larger (n = 0), so the test's precision is undefined; the source's "
        "stays ≥ 0.83 for τ up to 0.70. **Not testable here**: this run has no pairs decided larger.")
    # no pairs to resample models over: said, and no pair-level interval put in its place
    assert render(recall).startswith("At τ = 0.5 the test's recall is 0.00 over 5 pairs truly larger (no "
                                        "interval over the models); the source's stays ≥ 0.87")


def test_other_undefined_ratios_of_the_ladder_are_said_in_words():
    # a leave-one-out R² that cannot be computed, and a ladder with no accuracy gap to average
    method = _method()
    method.loo = LOOResult(table=method.loo.table, within_band=1.0, r2_log=float("nan"))
    method.gap = pd.DataFrame({"popular": [], "baseline": []})
    loo = render(loo_claim(method))
    assert loo.startswith("Leave-one-out puts 10 of 10 held-out predictions within a factor of two of the "
                          "true size (R² on the log scale undefined); ")
    law = render(law_claim(method, popular_copies=(8,)))
    assert "nan" not in law and law.startswith(
        "On this ladder the index may track size (R² = 0.93): the models have no next-word accuracy to "
        "average (no scorable answer on the popular excerpts or the held-out stories); each excerpt is in "
        "the corpus 8 times. **Inconclusive**")


def test_the_chapter_words_the_pairwise_test_through_pairwise_text():
    root = Path(__file__).resolve().parents[1]
    md = (root / "notebooks" / "size.md").read_text()
    page = (root / "src" / "analysis" / "size" / "page.py").read_text()
    # no ratio formatted in the notebook: the sentence is glued from the package, which words a 0/0
    assert "{glue:md}`lab_pairwise`" in md and '"lab_pairwise": pairwise_text(' in page
    assert "lab_p05" not in md and "lab_r05" not in md


def test_bounds_outside_calibration_are_claims_on_exact_counts():
    import pandas as pd

    from analysis.size.claims_outside import outside_claims
    placed = pd.DataFrame({"model": ["lab:abl-a", "lab:abl-b", "lab:held-1", "lab:held-2"],
                           "valid": [True, False, True, True]})
    held, abl = outside_claims(placed, [True, True, False, False])
    # both held-out bounds valid: reproduced; one of two ablations invalid: an exact miss
    assert (held.id, held.status, held.value, held.n_units) == ("heldout_bounds_valid", "reproduced", 1.0, 2)
    assert (abl.id, abl.status, abl.value) == ("ablation_bounds_valid", "does not hold", 0.5)
    assert abl.extra["invalid"] == ["lab:abl-b"] and "1 of 2 valid" in abl.reason
    none = outside_claims(None, [])
    assert [c.status for c in none] == ["not testable here"] * 2

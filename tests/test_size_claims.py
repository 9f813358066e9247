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

from analysis import size as sz
from analysis.core.claims import INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTABLE, REPRODUCED, from_json, to_json
from analysis.size import claims as cl

# --- the popular-vs-baseline gap of the real models ------------------------------------


def _gap() -> pd.DataFrame:
    rows = [  # model, popular, baseline, gap, ci_lo, ci_hi, n_popular, n_baseline
        ("above", 0.30, 0.10, 0.20, 0.05, 0.35, 37, 4),
        ("covers", 0.245, 0.234, 0.011, -0.035, 0.057, 37, 4),
        ("against", 0.10, 0.12, -0.02, -0.05, 0.01, 37, 4),
        ("below", 0.10, 0.20, -0.10, -0.20, -0.01, 37, 4),
        ("api:few", 1.0, 0.0, 1.0, 1.0, 1.0, 2, 1),
    ]
    return pd.DataFrame(rows, columns=["model", "popular", "baseline", "gap", "ci_lo", "ci_hi", "n_popular",
                                       "n_baseline"])


def test_gap_claims_decide_by_the_interval_over_texts():
    claims = sz.gap_claims(_gap(), ["above", "covers", "against", "below", "api:few", "silent-model"])
    got = {c.id: (c.status, c.n) for c in claims}
    assert got == {
        "gap_above": (REPRODUCED, 41),
        "gap_covers": (INCONCLUSIVE, 41),  # +0.011 but the interval covers zero
        "gap_against": (NOT_REPRODUCED, 41),  # a negative gap is never evidence for the source
        "gap_below": (NOT_REPRODUCED, 41),
        "gap_api_few": (INCONCLUSIVE, 3),  # 3 texts, below the minimum of 10
        "gap_silent_model": (NOT_TESTABLE, None),
    }
    above = claims[0]
    assert above.value == pytest.approx(0.2) and above.interval == (0.05, 0.35)
    assert above.min_n == cl.GAP_MIN_TEXTS and above.section == "size-results"
    assert "n = 3 texts is below the minimum of 10" in claims[4].reason


def test_gap_text_renders_each_model_in_order():
    claims = sz.gap_claims(_gap().iloc[[1]], ["covers", "api:x"])
    assert sz.gap_text(claims) == (
        "For covers, popular texts are predicted at 0.245 and baseline texts at 0.234: a gap of +0.011 "
        "(95% interval -0.035 to +0.057). **Inconclusive**: the 95% interval covers zero, n = 41 texts. "
        "For api:x, no gap can be computed. **Not testable here**: it has no scorable answer on the popular "
        "or the baseline texts.")


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


def test_agreement_claim_is_the_mann_whitney_comparison_of_the_two_groups():
    acc = _agreement_acc(5)
    claim = sz.agreement_claim(acc)
    check = sz.assumption_check(acc)
    ref = stats.mannwhitneyu(check.popular["rho"], check.baseline["rho"], alternative="two-sided")
    assert claim.n == 10 and claim.p == pytest.approx(ref.pvalue)  # C(5, 2) pairs
    assert claim.extra["popular"] == pytest.approx(1.0)  # every model ranks the popular texts alike
    assert claim.value == pytest.approx(1.0 - check.baseline["rho"].mean())
    assert claim.status == (REPRODUCED if ref.pvalue < 0.05 else INCONCLUSIVE)
    assert claim.status == REPRODUCED  # 10 pairs at rho = 1 against 10 scattered ones


def test_agreement_claim_needs_ten_pairs_and_two_models():
    assert sz.agreement_claim(_agreement_acc(4)).status == INCONCLUSIVE  # 6 pairs
    one = sz.agreement_claim(_agreement_acc(1))
    assert one.status == NOT_TESTABLE and one.reason.endswith("this run has 1")


# --- the lab ladder ---------------------------------------------------------------------


def _method(r2=0.93, B=0.25, se_b=0.02, n=10, within=None, valid=None, sweep=None):
    gap = pd.DataFrame({"popular": [0.50, 0.60], "baseline": [0.06, 0.08]})
    law = sz.ScalingLaw(A=1.0, B=B, c=0.0, r2=r2, n=n, se_b=se_b)
    within = [True] * n if within is None else within
    loo = sz.LOOResult(table=pd.DataFrame({"within_band": within}), within_band=float(np.mean(within)),
                       r2_log=0.9)
    bounds = pd.DataFrame({"valid": [True] * n if valid is None else valid})
    return SimpleNamespace(law=law, gap=gap, loo=loo, bounds=bounds, sweep=sweep)


@pytest.mark.parametrize("kw, status, finding", [
    (dict(r2=0.93, B=0.25, se_b=0.02), REPRODUCED, "tracks"),
    (dict(r2=0.06, B=0.10, se_b=0.3), NOT_REPRODUCED, "low_r2"),
    (dict(r2=0.80, B=-0.30, se_b=0.05), NOT_REPRODUCED, "against"),  # runs against size
    (dict(r2=0.60, B=0.30, se_b=0.2, n=4), INCONCLUSIVE, "not_significant"),  # t = 1.5, 2 df
    (dict(r2=0.99, B=0.30, se_b=0.01, n=3), INCONCLUSIVE, "few"),
])
def test_law_claim_needs_r2_and_a_significant_positive_slope(kw, status, finding):
    claim = sz.law_claim(_method(**kw), popular_copies="8")
    assert (claim.status, claim.extra["finding"]) == (status, finding)
    assert claim.value == kw["r2"] and claim.n == kw.get("n", 10) and claim.source_value == "R² = 0.9504"
    b, se_b, n = kw["B"], kw["se_b"], kw.get("n", 10)
    assert claim.p == pytest.approx(2 * stats.t.sf(abs(b / se_b), n - 2))


def test_law_rendering_keeps_the_chapter_sentence():
    good = sz.render(sz.law_claim(_method(), popular_copies="8"))
    assert good.startswith("On this ladder the index tracks size (R² = 0.93): the models predict the next "
                           "word inside their popular excerpts at 0.550 on average and on the held-out "
                           "stories at 0.070. **Reproduced**: R² = 0.93 ≥ 0.5 and slope B = 0.25 > 0")
    bad = sz.render(sz.law_claim(_method(r2=0.06, B=0.1, se_b=0.3), popular_copies="8"))
    assert bad.startswith("On this ladder the index does not track size (R² = 0.06, below 0.5).")
    assert "held-out stories at 0.070; each excerpt is in the corpus 8 times" in bad
    assert "does not track size" not in sz.render(sz.law_claim(_method(r2=0.6, B=0.3, se_b=0.2, n=4)))


def test_loo_and_bounds_claims_need_every_model():
    assert sz.loo_claim(_method()).status == REPRODUCED
    missed = sz.loo_claim(_method(within=[True] * 9 + [False]))
    assert (missed.status, missed.value, missed.reason) == (
        NOT_REPRODUCED, 0.9, "9 of 10 held-out predictions within a factor of two")
    bounds = sz.bounds_claim(_method(valid=[True] * 8 + [False] * 2))  # the committed run: 8 of 10
    assert (bounds.status, bounds.value, bounds.n) == (NOT_REPRODUCED, 0.8, 10)
    assert bounds.source_value == "16 of 16 (Table II)"
    assert sz.bounds_claim(_method(n=3, within=[True] * 3, valid=[True] * 3)).status == INCONCLUSIVE


def _sweep(tp, fp, fn, tn=10) -> pd.DataFrame:
    m = sz.decision_metrics([True] * (tp + fp) + [False] * (fn + tn),
                            [True] * tp + [False] * fp + [True] * fn + [False] * tn)
    return pd.DataFrame([dict(tau=0.01, **m), dict(tau=0.5, **m)])


def test_precision_and_recall_against_the_source_floors():
    precision, recall = sz.pairwise_claims(_method(sweep=_sweep(tp=35, fp=5, fn=1)))
    assert (precision.id, precision.status, precision.n) == ("lab_precision", REPRODUCED, 40)
    assert precision.value == pytest.approx(0.875) and precision.source_value == "≥ 0.83"
    assert (recall.status, recall.n, recall.value) == (REPRODUCED, 36, pytest.approx(35 / 36))
    low, few = sz.pairwise_claims(_method(sweep=_sweep(tp=10, fp=10, fn=2)))
    assert low.status == NOT_REPRODUCED and low.interval[1] < 0.83  # 0.5, Wilson interval to 0.70
    assert few.status == INCONCLUSIVE and few.n == 12  # 12 truly larger pairs, below 20
    near, _ = sz.pairwise_claims(_method(sweep=_sweep(tp=20, fp=5, fn=0)))
    assert near.status == INCONCLUSIVE and near.value == 0.8 and near.interval[1] > 0.83


def test_ladder_claims_are_unique_and_survive_json():
    method = _method(sweep=_sweep(tp=35, fp=5, fn=1))
    claims = sz.ladder_claims(method, popular_copies="8")
    assert [c.id for c in claims] == ["lab_law", "lab_loo_band", "lab_loo_r2", "lab_bounds_valid",
                                      "lab_precision", "lab_recall", "lab_agreement",
                                      "lab_agreement_families", "law_coefficients"]
    # a method without families has no Appendix B on the ladder: said, not invented
    assert [c.status for c in claims[6:8]] == [NOT_TESTABLE, NOT_TESTABLE]
    assert claims[-1].status == NOT_TESTABLE and claims[-1].source_value == "A = 41.18, B = 0.62"
    assert from_json(to_json(claims)) == claims


# --- calibration under a true null ------------------------------------------------------


def _cal(all_rate, raw_rate, lifted_rate=None, n_rep=200, alpha=0.05) -> pd.DataFrame:
    rates = {"all": all_rate, "raw": raw_rate, **({} if lifted_rate is None else {"lifted": lifted_rate})}
    se = math.sqrt(alpha * (1 - alpha) / n_rep)
    return pd.DataFrame({"alpha": alpha, "false_positive_rate": list(rates.values()), "se": se,
                         "n_rep": n_rep, "kind": list(rates)})


def test_calibration_claims_on_the_committed_numbers():
    # results/size.json: 0.160 (all) and 0.025 (raw); the source's formula on lifted accuracies: 0.300
    raw, lifted, all_ = sz.calibration_claims(_cal(0.160, 0.025, 0.300))
    se = math.sqrt(0.05 * 0.95 / 200)
    assert (all_.id, all_.status, all_.n) == ("calibration_all", NOT_REPRODUCED, 200)
    assert all_.p == pytest.approx(stats.norm.sf((0.160 - 0.05) / se))
    assert (raw.id, raw.status) == ("calibration_raw", REPRODUCED)
    assert (lifted.id, lifted.status) == ("calibration_lifted", NOT_REPRODUCED)
    # the book's reading is said to be the book's, never "the source's block scores"
    assert "this book's reading" in all_.statement and "source's block score on lifted" in lifted.statement


def test_calibration_claims_at_the_limit_with_few_replicates_and_without_answers():
    se = math.sqrt(0.05 * 0.95 / 200)
    at_limit, over = sz.calibration_claims(_cal(0.05 + 2 * se, 0.05 + 2 * se + 0.001), kinds=("all", "raw"))
    assert (at_limit.status, over.status) == (REPRODUCED, NOT_REPRODUCED)
    assert {c.status for c in sz.calibration_claims(_cal(0.3, 0.0, 0.1, n_rep=20))} == {INCONCLUSIVE}
    empty = sz.calibration_claims(pd.DataFrame(columns=["alpha", "false_positive_rate", "se", "n_rep",
                                                        "kind"]))
    assert [c.status for c in empty] == [NOT_TESTABLE] * 3
    # a run that calibrated two kinds says the third could not run
    assert sz.calibration_claims(_cal(0.245, 0.04))[1].status == NOT_TESTABLE


def test_calibration_text_says_which_kind_holds_its_level():
    claims = sz.calibration_claims(_cal(0.245, 0.04, 0.30))
    assert sz.calibration_text(claims, "raw", 0.05) == (
        "At α = 0.05 the empirical false-positive rate is, with the source's formula on raw accuracies, "
        "0.040 (holds its level); with the source's formula on lifted accuracies, 0.300 (exceeds its "
        "level); with this book's reading, raw and lifted accuracies averaged together, 0.245 (exceeds "
        "its level). This run's pairwise tests use raw block scores (the source's formula on raw "
        "accuracies), which hold their level here.")
    assert sz.calibration_text(claims, "all", 0.05).endswith(
        "use all block scores (this book's reading, raw and lifted accuracies averaged together), which "
        "do not hold their level here.")


# --- a model that answers nothing --------------------------------------------------------


def test_a_model_that_answers_nothing_leaves_every_size_step_standing():
    # every query failed: no accuracy, no gap, no agreement, no calibration, each a claim not testable
    samples = pd.DataFrame({"text_id": ["a", "a", "b"], "group": ["popular", "popular", "baseline"],
                            "prefix_len": [4, 4, 4], "position": [5, 9, 7], "prefix": ["p", "q", "r"],
                            "target": ["x", "y", "z"]})
    answers = samples.assign(model="api:x", mode="chat", template_id=1, prediction=None,
                             error="APIConnectionError: refused")
    acc = sz.accuracy_table(answers)
    assert acc.empty
    assert [c.status for c in sz.gap_claims(sz.group_gap(acc), ["api:x"])] == [NOT_TESTABLE]
    assert sz.agreement(acc).empty and sz.agreement_claim(acc).status == NOT_TESTABLE
    assert sz.agreement_note(acc) == (
        "Agreement needs two models with an answer on every text; this run has 0.")
    cal = sz.calibration(sz.position_table(answers), "api:x", n_rep=10)
    claims = sz.calibration_claims(cal)
    assert len(claims) == 3
    assert cal.empty and {c.status for c in claims} == {NOT_TESTABLE}
    assert sz.calibration_text(claims, "raw", 0.05) == (
        "The calibration could not run: the model it resamples has no scorable answer.")


# --- an undefined ratio is said in words, never printed as nan ------------------------------


def test_pairwise_sentence_says_an_undefined_precision_in_words():
    # nothing decided larger: precision 0/0 is undefined; 5 pairs truly larger, none found: recall 0/5
    row = sz.sweep_at(_sweep(tp=0, fp=0, fn=5), 0.5)
    assert math.isnan(row["precision"]) and row["recall"] == 0.0
    assert sz.pairwise_text(row, 0.05) == (
        "At τ = 0.5 (α = 0.05) the test's precision is undefined (no pair was decided larger, n = 0) and "
        "its recall is 0.00 (n = 5 pairs truly larger).")
    # both defined: 35 of 40 decided pairs truly larger, 35 of 36 truly larger pairs found
    assert sz.pairwise_text(sz.sweep_at(_sweep(tp=35, fp=5, fn=1), 0.5), 0.05) == (
        "At τ = 0.5 (α = 0.05) the test's precision is 0.88 (n = 40 pairs decided larger) and its recall "
        "is 0.97 (n = 36 pairs truly larger).")
    # nothing truly larger either: both undefined
    both = sz.pairwise_text(sz.sweep_at(_sweep(tp=0, fp=0, fn=0), 0.5), 0.05)
    assert both == ("At τ = 0.5 (α = 0.05) the test's precision is undefined (no pair was decided larger, "
                    "n = 0) and its recall is undefined (no pair is truly larger, n = 0).")


def test_an_undefined_precision_claim_is_rendered_in_words():
    precision, recall = sz.pairwise_claims(_method(sweep=_sweep(tp=0, fp=0, fn=5)))
    assert precision.status == NOT_TESTABLE and precision.n == 0 and precision.value is None
    text = sz.render(precision)
    assert "nan" not in text
    assert text == (
        "At τ = 0.5 no pair was decided larger (n = 0), so the test's precision is undefined; the source's "
        "stays ≥ 0.83 for τ up to 0.70. **Not testable here**: this run has no pairs decided larger.")
    assert sz.render(recall).startswith("At τ = 0.5 the test's recall is 0.00 (95% interval 0.00 to 0.43)")


def test_other_undefined_ratios_of_the_ladder_are_said_in_words():
    # a leave-one-out R² that cannot be computed, and a ladder with no accuracy gap to average
    method = _method()
    method.loo = sz.LOOResult(table=method.loo.table, within_band=1.0, r2_log=float("nan"))
    method.gap = pd.DataFrame({"popular": [], "baseline": []})
    loo = sz.render(sz.loo_claim(method))
    assert loo.startswith("Leave-one-out puts 10 of 10 held-out predictions within a factor of two of the "
                          "true size (R² on the log scale undefined); ")
    law = sz.render(sz.law_claim(method, popular_copies="8"))
    assert "nan" not in law and law.startswith(
        "On this ladder the index tracks size (R² = 0.93): the models have no next-word accuracy to "
        "average (no scorable answer on the popular excerpts or the held-out stories).")


def test_the_chapter_words_the_pairwise_test_through_pairwise_text():
    md = (Path(__file__).resolve().parents[1] / "notebooks" / "size.md").read_text()
    # no ratio formatted in the notebook: the sentence is glued from the package, which words a 0/0
    assert "{glue:md}`lab_pairwise`" in md and "size.pairwise_text(s05, " in md
    assert "lab_p05" not in md and "lab_r05" not in md

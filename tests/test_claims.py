"""Claims as data (analysis.core.claims): a claim survives JSON, carries its unit,
null and control, and the one set of rules (``decide``) gives the status
hand-computed for each case: a floor that is not testable, a non-significant value
on the other side that is inconclusive, a control that makes a claim mechanical,
an interval that excludes the source's effect."""

from __future__ import annotations

import json

import pytest

from analysis.core.claim_text import render, verdict
from analysis.core.claims import (
    DOES_NOT_HOLD,
    EXTENSION,
    HOLDS,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    Claim,
    ClaimError,
    as_kind,
    decide,
    directional,
    from_json,
    not_testable,
    to_json,
    within,
)


def auc_claim(**kw) -> Claim:
    base = dict(id="e1_auc", chapter="size", statement="Popular texts are predicted better than others.",
                status=REPRODUCED, reason="the source's direction, p = 0.01 < 0.05, 40 texts",
                comparison="AUC > 0.5, one-sided Mann-Whitney", value=0.6, interval=(0.52, 0.68), n=400,
                n_units=40, unit="texts", p=0.01, min_n=30, source_value="0.71", section="size-ladder",
                null_kind="permutation", null_value=0.49, control_value=0.51, by_design=True,
                by_design_reason="forced by the lab's construction",
                extra={"model": "lab:wide-32", "pairs": [1, 2]})
    return Claim(**{**base, **kw})


# -- a claim is a value -------------------------------------------------------------------------


def test_to_dict_and_from_dict_round_trip():
    claim = auc_claim()
    data = claim.to_dict()
    assert data["interval"] == [0.52, 0.68] and data["extra"] == {"model": "lab:wide-32", "pairs": [1, 2]}
    assert (data["kind"], data["unit"], data["n_units"], data["null_kind"], data["null_value"],
            data["control_value"]) == ("source", "texts", 40, "permutation", 0.49, 0.51)
    assert json.loads(json.dumps(data)) == data  # plain JSON types only
    assert Claim.from_dict(data) == claim


def test_to_json_and_from_json_round_trip_a_chapter():
    api = not_testable("e2_api", "size", "The API model tracks size.", "no API model in this run",
                       unit="models", source_value="0.9")
    claims = [auc_claim(), api]
    text = to_json(claims)
    assert [d["id"] for d in json.loads(text)] == ["e1_auc", "e2_api"]
    assert from_json(text) == claims
    back = from_json(text)[1]
    assert (back.status, back.reason, back.value, back.control_reason, back.comparison) == (
        NOT_TESTABLE, "no API model in this run", None, "no value to control", "—")


def test_numbers_are_normalised_and_json_is_strict():
    claim = auc_claim(value=float("nan"), p=float("inf"), n=40.0, interval=(0.1, float("nan")),
                      null_value=float("nan"))
    assert claim.value is None and claim.p is None and claim.interval is None and claim.null_value is None
    assert claim.n == 40 and isinstance(claim.n, int)
    assert "NaN" not in to_json([claim])


@pytest.mark.parametrize("kw, needle", [
    ({"status": "reproduced-ish"}, "status must be one of"),
    ({"status": HOLDS}, "status must be one of"),  # a source claim reads reproduced, not holds
    ({"kind": EXTENSION}, "status must be one of"),  # an extension reads holds, not reproduced
    ({"kind": "mine"}, "kind must be one of"),
    ({"source_value": None}, "needs the source's value"),
    ({"reason": ""}, "needs its reason"),
    ({"unit": "rows"}, "unit must be one of"),
    ({"null_kind": "assumed"}, "null_kind must be one of"),
    ({"control_value": None}, "negative control"),
    ({"by_design_reason": None}, "by_design needs"),
    ({"mechanical": True, "control_value": None, "control_reason": "x"}, "mechanical claim needs"),
    ({"interval": (0.7, 0.5)}, "lo > hi"),
    ({"n_units": -1}, "n_units must be ≥ 0"),
])
def test_an_impossible_claim_is_refused(kw, needle):
    with pytest.raises(ClaimError, match=needle):
        auc_claim(**kw)


def test_claim_ids_are_unique_in_a_chapter():
    with pytest.raises(ClaimError, match=r"repeated: \['e1_auc'\]"):
        to_json([auc_claim(), auc_claim(value=0.7)])


# -- the rules ----------------------------------------------------------------------------------

AUC = dict(null=0.5, min_n=30)


@pytest.mark.parametrize("value, p, n, status", [
    (0.42, 0.01, 40, NOT_REPRODUCED),  # significant in the opposite direction: evidence against
    (0.60, 0.01, 40, REPRODUCED),  # the source's side, significant, enough units
    (0.60, 0.01, 17, INCONCLUSIVE),  # 17 units, below the minimum of 30, whatever the value
    (0.90, 0.0001, 17, INCONCLUSIVE),
    (0.60, 0.20, 40, INCONCLUSIVE),  # the source's side, not significant
    (0.42, 0.20, 40, INCONCLUSIVE),  # the other side, not significant: no evidence either way
    (0.60, None, 40, INCONCLUSIVE),  # the source's side, no test
    (0.50, 0.01, 40, INCONCLUSIVE),  # exactly the null: no evidence against the source
    (None, 0.01, 40, NOT_TESTABLE),  # no value in this run
    (float("nan"), 0.01, 40, NOT_TESTABLE),
    (0.60, 0.01, 0, NOT_TESTABLE),  # nothing measured
    (0.60, 0.01, None, NOT_TESTABLE),
])
def test_directional_auc(value, p, n, status):
    assert directional(value=value, p=p, n=n, **AUC)[0] == status


def test_reasons_give_the_evidence_with_the_unit():
    assert directional(value=0.42, p=0.01, n=40, unit="texts", **AUC) == (
        NOT_REPRODUCED, "significant in the opposite direction (p = 0.01 < 0.05), 40 texts")
    assert directional(value=0.6, p=0.01, n=40, unit="facts", **AUC) == (
        REPRODUCED, "the source's direction, p = 0.01 < 0.05, 40 facts")
    assert directional(value=0.6, p=0.01, n=17, unit="facts", **AUC) == (
        INCONCLUSIVE, "17 facts, below the minimum of 30")
    assert directional(value=0.42, p=0.214, n=40, unit="models", **AUC) == (
        INCONCLUSIVE, "the opposite direction, not significant (p = 0.214 ≥ 0.05), 40 models")


def test_a_floor_in_every_arm_is_not_testable():
    # 0 of 10 completed against 0 of 10: a gap of 0 that no p can make evidence of anything
    v = decide(value=0.0, null=0.0, p=1.0, n_units=20, min_n=10, floor="floor (0 of 10 against 0 of 10)")
    assert v.status == NOT_TESTABLE and "0 of 10 against 0 of 10" in v.reason


def test_a_control_that_shows_the_effect_makes_the_claim_mechanical():
    v = decide(value=0.8, null=0.5, p=0.001, n_units=40, min_n=30, control_value=0.78, control_p=0.002)
    assert v == (INCONCLUSIVE, v.reason, True) and "negative control shows the same effect (0.78)" in v.reason
    # a control on the null side, or not significant, leaves the claim reproduced
    assert decide(value=0.8, null=0.5, p=0.001, n_units=40, min_n=30, control_value=0.52,
                  control_p=0.4) == (REPRODUCED, "the source's direction, p = 0.001 < 0.05, 40 units", False)
    assert decide(value=0.8, null=0.5, p=0.001, n_units=40, min_n=30, control_value=0.3,
                  control_p=0.001).status == REPRODUCED


def test_an_interval_decides_without_a_p_and_can_exclude_the_source():
    assert decide(value=0.05, null=0, interval=(0.01, 0.09), n_units=41, min_n=10).status == REPRODUCED
    assert decide(value=-0.05, null=0, interval=(-0.09, -0.01), n_units=41, min_n=10).status == NOT_REPRODUCED
    assert decide(value=0.01, null=0, interval=(-0.02, 0.04), n_units=41, min_n=10).status == INCONCLUSIVE
    # not significant, but the interval excludes the source's +0.07: evidence against it
    v = decide(value=0.01, null=0, interval=(-0.02, 0.04), n_units=41, min_n=10, source_effect=0.07)
    assert v.status == NOT_REPRODUCED and "excludes the source's 0.07" in v.reason


def test_an_interval_below_the_null_is_read_as_a_whole():
    # a source that finds a share below 0.5: only an interval wholly below 0.5 agrees
    below = dict(null=0.5, n_units=41, min_n=10, direction=-1)
    assert decide(value=0.3, interval=(0.2, 0.4), **below).status == REPRODUCED
    assert decide(value=0.45, interval=(0.35, 0.55), **below).status == INCONCLUSIVE
    v = decide(value=0.7, interval=(0.6, 0.8), **below)
    assert v.status == NOT_REPRODUCED and "[0.6, 0.8] excludes 0.5" in v.reason


def test_holm_adjusted_p_is_named():
    v = decide(value=0.6, null=0.5, p=0.06, n_units=40, min_n=30, adjusted=True)
    assert v.status == INCONCLUSIVE and "Holm-adjusted p = 0.06 ≥ 0.05" in v.reason


def test_directional_below_the_null_and_another_alpha():
    # a negative correlation found by the source: -0.3 with p = 0.001 agrees, +0.3 does not
    assert directional(value=-0.3, null=0, p=0.001, n=40, min_n=30, direction=-1)[0] == REPRODUCED
    assert directional(value=0.3, null=0, p=0.001, n=40, min_n=30, direction=-1)[0] == NOT_REPRODUCED
    assert directional(value=0.6, p=0.03, n=40, alpha=0.01, **AUC)[0] == INCONCLUSIVE
    with pytest.raises(ClaimError, match="direction must be"):
        directional(value=0.6, p=0.01, n=40, direction=0, **AUC)


def test_extension_words():
    assert [as_kind(s, EXTENSION) for s in (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_TESTABLE)] == [
        HOLDS, DOES_NOT_HOLD, INCONCLUSIVE, NOT_TESTABLE]
    assert as_kind(HOLDS, "source") == REPRODUCED


@pytest.mark.parametrize("kw, status", [
    (dict(value=1.1, target=1.0, tolerance=0.15, n=5, min_n=3), REPRODUCED),  # |0.1| ≤ 0.15
    (dict(value=1.3, target=1.0, tolerance=0.15, n=5, min_n=3), INCONCLUSIVE),  # a miss with no interval
    (dict(value=1.3, target=1.0, tolerance=0.15, n=5, min_n=3, exact=True), NOT_REPRODUCED),  # exact miss
    (dict(value=1.3, target=1.0, tolerance=0.15, n=5, min_n=3, interval=(1.2, 1.4)), NOT_REPRODUCED),
    (dict(value=1.3, target=1.0, tolerance=0.15, n=5, min_n=3, interval=(1.1, 1.4)), INCONCLUSIVE),
    (dict(value=0.75, target=1.0, tolerance=0.25, n=5, min_n=3), REPRODUCED),  # on the bound (exact)
    (dict(value=120, target=100, tolerance=0.25, n=5, min_n=3, relative=True), REPRODUCED),  # 20 ≤ 25
    (dict(value=1.0, target=1.0, tolerance=0.15, n=2, min_n=3), INCONCLUSIVE),  # too few items
    (dict(value=None, target=1.0, tolerance=0.15, n=5, min_n=3), NOT_TESTABLE),
])
def test_within(kw, status):
    assert within(**kw)[0] == status


def test_within_reason_shows_the_gap_and_the_bound():
    assert within(value=130, target=100, tolerance=0.25, n=5, min_n=3, relative=True, exact=True,
                  unit="models") == (
        NOT_REPRODUCED, "|130 − 100| = 30 > 25, 5 models (an exact value, no sampling error)")


# -- the one voice ------------------------------------------------------------------------------


def test_verdict_and_render_word_every_mark():
    claim = auc_claim(mechanical=True, status=INCONCLUSIVE, reason="the control shows it")
    assert verdict(claim) == ("**Inconclusive** (by design: forced by the lab's construction; mechanical: "
                              "the negative control shows it too (0.51)): the control shows it.")
    text = render(auc_claim(by_design=False))
    assert text.startswith("**Reproduced**: the source's direction")
    assert "This run: 0.6 [0.52, 0.68]; the source: 0.71." in text
    assert "Evidence: 40 texts (400 rows); a permutation null at 0.49; negative control 0.51." in text
    ext = auc_claim(kind=EXTENSION, status=HOLDS, source_value=None, by_design=False)
    assert "**Holds**" in render(ext) and "(the book's own addition)" in render(ext)

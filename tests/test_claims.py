"""Claims as data (analysis.core.claims): a claim survives JSON, and the deciders
give the status hand-computed for each case."""

from __future__ import annotations

import json

import pytest

from analysis.core.claims import (
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    Claim,
    ClaimError,
    directional,
    from_json,
    not_testable,
    to_json,
    within,
)


def auc_claim(**kw) -> Claim:
    base = dict(id="e1_auc", chapter="size", statement="Popular texts are predicted better than others.",
                status=REPRODUCED, reason="the source's direction, p = 0.01 < 0.05, n = 40",
                comparison="AUC > 0.5, one-sided Mann-Whitney", value=0.6, interval=(0.52, 0.68), n=40,
                p=0.01, min_n=30, source_value="0.71", section="size-ladder", by_design=True,
                extra={"model": "lab:wide-32", "pairs": [1, 2]})
    return Claim(**{**base, **kw})


# -- a claim is a value -------------------------------------------------------------------------


def test_to_dict_and_from_dict_round_trip():
    claim = auc_claim()
    data = claim.to_dict()
    assert data["interval"] == [0.52, 0.68] and data["extra"] == {"model": "lab:wide-32", "pairs": [1, 2]}
    assert json.loads(json.dumps(data)) == data  # plain JSON types only
    assert Claim.from_dict(data) == claim
    assert Claim.from_dict(data).interval == (0.52, 0.68)


def test_to_json_and_from_json_round_trip_a_chapter():
    api = not_testable("e2_api", "size", "The API model tracks size.", "no API model in this run")
    claims = [auc_claim(), api]
    text = to_json(claims)
    assert [d["id"] for d in json.loads(text)] == ["e1_auc", "e2_api"]
    assert from_json(text) == claims
    back = from_json(text)[1]
    assert (back.status, back.reason, back.value, back.interval, back.comparison) == (
        NOT_TESTABLE, "no API model in this run", None, None, "—")


def test_numbers_are_normalised():
    claim = auc_claim(value=float("nan"), p=float("inf"), n=40.0, interval=(0.1, float("nan")))
    assert claim.value is None and claim.p is None and claim.interval is None
    assert claim.n == 40 and isinstance(claim.n, int)


@pytest.mark.parametrize("kw, needle", [
    ({"status": "reproduced-ish"}, "status must be one of"),
    ({"reason": ""}, "needs its reason"),
    ({"interval": (0.7, 0.5)}, "lo > hi"),
    ({"n": -1}, "n must be ≥ 0"),
])
def test_an_impossible_claim_is_refused(kw, needle):
    with pytest.raises(ClaimError, match=needle):
        auc_claim(**kw)


def test_claim_ids_are_unique_in_a_chapter():
    with pytest.raises(ClaimError, match=r"repeated: \['e1_auc'\]"):
        to_json([auc_claim(), auc_claim(value=0.7)])


# -- the deciders -------------------------------------------------------------------------------

AUC = dict(null=0.5, min_n=30)


@pytest.mark.parametrize("value, p, n, status", [
    (0.42, 0.01, 40, NOT_REPRODUCED),  # significant, but below 0.5: never evidence for the source
    (0.60, 0.01, 40, REPRODUCED),  # the source's side, significant, enough pairs
    (0.60, 0.01, 17, INCONCLUSIVE),  # 17 pairs, below the minimum of 30, whatever the value
    (0.90, 0.0001, 17, INCONCLUSIVE),
    (0.60, 0.20, 40, INCONCLUSIVE),  # the source's side, not significant
    (0.42, 0.20, 40, NOT_REPRODUCED),  # the other side, not significant
    (0.60, None, 40, INCONCLUSIVE),  # the source's side, no test
    (0.50, 0.01, 40, NOT_REPRODUCED),  # exactly the null
    (None, 0.01, 40, NOT_TESTABLE),  # no value in this run
    (float("nan"), 0.01, 40, NOT_TESTABLE),
    (0.60, 0.01, 0, NOT_TESTABLE),  # nothing measured
    (0.60, 0.01, None, NOT_TESTABLE),
])
def test_directional_auc(value, p, n, status):
    assert directional(value=value, p=p, n=n, **AUC)[0] == status


def test_directional_reasons_give_the_evidence():
    assert directional(value=0.42, p=0.01, n=40, **AUC) == (
        NOT_REPRODUCED, "the opposite direction, p = 0.01 < 0.05, n = 40")
    assert directional(value=0.6, p=0.01, n=40, **AUC) == (
        REPRODUCED, "the source's direction, p = 0.01 < 0.05, n = 40")
    assert directional(value=0.6, p=0.01, n=17, **AUC) == (INCONCLUSIVE, "n = 17 is below the minimum of 30")
    assert directional(value=0.6, p=0.2, n=40, **AUC) == (
        INCONCLUSIVE, "the source's direction, not significant (p = 0.2 ≥ 0.05), n = 40")
    assert directional(value=None, p=0.01, n=40, **AUC) == (NOT_TESTABLE, "this run has no value for it")


def test_directional_below_the_null_and_another_alpha():
    # a negative correlation found by the source: -0.3 with p = 0.001 agrees, +0.3 does not
    assert directional(value=-0.3, null=0, p=0.001, n=40, min_n=30, direction=-1)[0] == REPRODUCED
    assert directional(value=0.3, null=0, p=0.001, n=40, min_n=30, direction=-1)[0] == NOT_REPRODUCED
    assert directional(value=0.6, p=0.03, n=40, alpha=0.01, **AUC)[0] == INCONCLUSIVE
    with pytest.raises(ClaimError, match="direction must be"):
        directional(value=0.6, p=0.01, n=40, direction=0, **AUC)


@pytest.mark.parametrize("kw, status", [
    (dict(value=1.1, target=1.0, tolerance=0.15, n=5, min_n=3), REPRODUCED),  # |0.1| ≤ 0.15
    (dict(value=1.3, target=1.0, tolerance=0.15, n=5, min_n=3), NOT_REPRODUCED),  # |0.3| > 0.15
    (dict(value=0.75, target=1.0, tolerance=0.25, n=5, min_n=3), REPRODUCED),  # on the bound (exact)
    (dict(value=120, target=100, tolerance=0.25, n=5, min_n=3, relative=True), REPRODUCED),  # 20 ≤ 25
    (dict(value=130, target=100, tolerance=0.25, n=5, min_n=3, relative=True), NOT_REPRODUCED),  # 30 > 25
    (dict(value=1.0, target=1.0, tolerance=0.15, n=2, min_n=3), INCONCLUSIVE),  # too few items
    (dict(value=None, target=1.0, tolerance=0.15, n=5, min_n=3), NOT_TESTABLE),
])
def test_within(kw, status):
    assert within(**kw)[0] == status


def test_within_reason_shows_the_gap_and_the_bound():
    assert within(value=130, target=100, tolerance=0.25, n=5, min_n=3, relative=True) == (
        NOT_REPRODUCED, "|130 − 100| = 30 > 25, n = 5")

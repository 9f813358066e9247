"""The Phrases chapter's decisions (analysis.phrases.claims), by value on hand-made numbers:
status, value, n, p and the minimum n of each claim."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import hypergeom

from analysis import phrases as ph
from analysis.core.claims import INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTABLE, REPRODUCED, from_json, to_json

SOURCE = ph.load_source_rates()  # the source's 2024 rates: state media 3.2% to 8.8%


def rates_of(rows):
    """A rates table (ph.rates' columns) from (model, type, matched, total) rows."""
    r = pd.DataFrame(rows, columns=["model", "type", "matched", "total"])
    r["rate"] = r["matched"] / r["total"]
    r["ci_lo"], r["ci_hi"] = ph.wilson_interval(r["matched"].to_numpy(), r["total"].to_numpy())
    return r


def one(claims, model):
    (c,) = [c for c in claims if c.extra.get("model") == model]
    return c


# --- the source's headline: state media above CulturaX ---------------------------------


def test_state_media_gap_statuses_on_hand_computed_counts():
    rates = rates_of([
        ("sig", "propaganda", 10, 150), ("sig", "culturax", 1, 150),   # +6 points, significant
        ("zero", "propaganda", 0, 150), ("zero", "culturax", 0, 150),  # no difference at all
        ("one", "propaganda", 1, 150), ("one", "culturax", 0, 150),    # +0.7 points, p = 0.5
        ("back", "propaganda", 0, 150), ("back", "culturax", 3, 150),  # CulturaX higher
        ("few", "propaganda", 10, 60), ("few", "culturax", 1, 60),     # n = 120 < 234
        ("half", "propaganda", 5, 150),                                # no CulturaX rate
    ])
    claims = ph.state_media_gap_claims(rates, SOURCE, ["sig", "absent"])
    assert [c.id for c in claims][-1] == "state_media_gap_absent"
    sig = one(claims, "sig")
    assert sig.status == REPRODUCED and sig.value == pytest.approx(9 / 150) and sig.n == 300
    # one-sided Fisher exact: P(X ≥ 10) when 11 matches fall into two groups of 150
    assert sig.p == pytest.approx(hypergeom(300, 11, 150).sf(9))
    # min_n: 117 per type, where 0 of n rules out the source's lowest rate, 3.2%
    assert sig.min_n == 234 == ph.state_media_gap_min_n(SOURCE)
    assert sig.source_value == "+0.7 to +6.9 points; state media higher for 5 of 5 models"
    zero = one(claims, "zero")
    assert (zero.status, zero.value, zero.p) == (NOT_REPRODUCED, 0.0, 1.0)
    assert "equals the null" in zero.reason
    assert (one(claims, "one").status, one(claims, "one").p) == (INCONCLUSIVE, pytest.approx(0.5))
    assert one(claims, "back").status == NOT_REPRODUCED and one(claims, "back").value < 0
    few = one(claims, "few")
    assert few.status == INCONCLUSIVE and few.n == 120 and "below the minimum of 234" in few.reason
    assert one(claims, "half").status == NOT_TESTABLE
    assert one(claims, "absent").status == NOT_TESTABLE
    assert {c.section for c in claims} == {"phrases-rates"}


# --- each model against the source's range ----------------------------------------------


def test_range_position_of_a_rate_and_its_interval():
    assert ph.range_position(0.0, 0.0, 0.025, 0.032, 0.088) == "below"
    assert ph.range_position(0.3, 0.2, 0.4, 0.032, 0.088) == "above"
    assert ph.range_position(0.05, 0.02, 0.1, 0.032, 0.088) == "inside"
    assert ph.range_position(0.007, 0.001, 0.037, 0.032, 0.088) == "overlaps"


def test_source_range_claims_on_hand_computed_counts():
    rates = rates_of([("none", "propaganda", 0, 150), ("one", "propaganda", 1, 150),
                      ("mid", "propaganda", 8, 150), ("high", "propaganda", 40, 150),
                      ("small", "propaganda", 10, 30), ("cx", "culturax", 5, 150)])
    claims = ph.source_range_claims(rates, SOURCE)
    got = {c.extra["model"]: (c.status, c.extra.get("where")) for c in claims}
    assert got == {
        "none": (NOT_REPRODUCED, "below"),  # Wilson upper 2.5% < 3.2%
        "one": (INCONCLUSIVE, "overlaps"),  # 0.7% [0.1, 3.7]%
        "mid": (REPRODUCED, "inside"),  # 5.3%
        "high": (NOT_REPRODUCED, "above"),  # 26.7% [20.2, 34.3]%
        "small": (INCONCLUSIVE, "above"),  # 33% [19, 51]%, but n = 30 < 117
        "cx": (NOT_TESTABLE, None),  # no state-media rate
    }
    none = one(claims, "none")
    assert none.value == 0 and none.n == 150 and none.min_n == 117
    assert none.interval == pytest.approx((0.0, 0.02497), abs=1e-5)
    assert none.source_value == "3.2% to 8.8%" and none.section == "phrases-source"


# --- below the threshold: distances ---------------------------------------------------------


def test_distance_gap_claims_use_the_one_sided_test_and_its_effect_size():
    gap = pd.DataFrame({"model": ["yes", "against", "weak", "few"], "n_first": [60, 60, 60, 10],
                        "n_second": [60, 60, 60, 7], "median_first": [0.6, 0.9, 0.7, 0.5],
                        "median_second": [0.8, 0.7, 0.75, 0.9], "U": [1080.0, 2088.0, 1440.0, 10.0],
                        "p_value": [0.01, 0.99, 0.2, 0.01], "closer": [0.7, 0.42, 0.6, 1 - 10 / 70]})
    claims = ph.distance_gap_claims(gap, "en", ["yes", "missing"])
    assert [c.status for c in claims] == [REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, INCONCLUSIVE,
                                          NOT_TESTABLE]
    yes = claims[0]
    assert (yes.id, yes.value, yes.p, yes.n, yes.min_n) == ("distance_gap_en_yes", 0.7, 0.01, 120, 40)
    assert (yes.extra["first"], yes.extra["second"]) == ("popular", "baseline")
    assert yes.section == "phrases-english"
    assert claims[3].n == 17 and "below the minimum of 40" in claims[3].reason  # 17 < 40, p or not
    zh = ph.distance_gap_claims(gap.head(1), "zh")
    assert zh[0].id == "distance_gap_zh_yes" and zh[0].extra["first"] == "propaganda"
    assert zh[0].section == "phrases-modes"


# --- the scorer's rules -------------------------------------------------------------------


def scored_pair(faithful, fixed):
    frame = lambda refused: pd.DataFrame({"refused": refused})
    return {("windowed", "faithful"): frame(faithful), ("windowed", "fixed"): frame(fixed)}


def test_refusal_claim_counts_what_only_the_comma_patterns_catch():
    missed = ph.refusal_claim(scored_pair([True, False, False, False], [True, True, True, False]))
    assert (missed.status, missed.value, missed.n) == (REPRODUCED, 2, 4)
    assert (missed.extra["faithful"], missed.extra["fixed"], missed.extra["n_comma_patterns"]) == (1, 3, 8)
    same = ph.refusal_claim(scored_pair([True, False], [True, False]))
    assert (same.status, same.value) == (INCONCLUSIVE, 0)
    assert ph.refusal_claim(scored_pair([], [])).status == NOT_TESTABLE


def by_mode_of(windowed, prefix, total=10):
    rows = [(mode, m, "propaganda", k, total) for mode, ks in (("windowed", windowed), ("prefix", prefix))
            for m, k in zip(("a", "b"), ks)]
    return pd.DataFrame(rows, columns=["mode", "model", "type", "matched", "total"])


def test_windowed_claim_never_fewer_matches_than_prefix():
    more = ph.windowed_claim(by_mode_of([3, 1], [1, 1]), 0.4)
    assert (more.status, more.value, more.n, more.by_design) == (REPRODUCED, 2, 20, True)
    assert not ph.windowed_claim(by_mode_of([3, 1], [1, 1]), 0.6).by_design
    fewer = ph.windowed_claim(by_mode_of([3, 0], [1, 1]), 0.6)
    assert fewer.status == NOT_REPRODUCED and fewer.value == 1  # more in all, but fewer for model b
    assert ph.windowed_claim(by_mode_of([0, 0], [0, 0]), 0.4).status == INCONCLUSIVE
    assert ph.windowed_claim(by_mode_of([], []), 0.4).status == NOT_TESTABLE


# --- the lab --------------------------------------------------------------------------------


def lab_rows(model, params, rates, n=10, copies=(0, 1, 4, 16)):
    matched = [round(r * n) for r in rates]
    lo, hi = ph.wilson_interval(np.array(matched), np.array([n] * len(rates)))
    return pd.DataFrame({"model": model, "params": params, "copies": list(copies), "phrases": n,
                         "excluded": 0, "matched": matched, "total": n, "rate": rates, "ci_lo": lo,
                         "ci_hi": hi})


def lab_claims_of(*frames):
    return {c.id: c for c in ph.lab_claims(pd.concat(frames, ignore_index=True))}


def test_lab_claims_on_a_two_model_ladder():
    claims = lab_claims_of(lab_rows("a", 10, [0, 0, 0, 0.1]), lab_rows("b", 20, [0, 0, 0.6, 1.0]))
    assert list(claims) == ["lab_controls", "lab_separated", "lab_rises", "lab_size"]
    controls = claims["lab_controls"]
    # 0 of 20 controls: too few to bound false positives below 10% (that needs 35)
    assert (controls.status, controls.value, controls.n, controls.min_n) == (INCONCLUSIVE, 0.0, 20, 35)
    separated = claims["lab_separated"]
    # a: 1 of 10 at 16 copies against 0 of 10 controls, Fisher p = 0.5; b: 6 of 10 at 4 copies, p = 0.0054
    assert separated.extra["first_level"] == {"a": None, "b": 4}
    assert (separated.status, separated.value, separated.n) == (INCONCLUSIVE, 0.5, 2)
    assert separated.by_design
    rises = claims["lab_rises"]
    assert (rises.status, rises.value, rises.by_design) == (REPRODUCED, 1.0, True)
    size = claims["lab_size"]
    # pooled over the trained levels: b 16 of 30, a 1 of 30
    assert (size.extra["matched_large"], size.extra["matched_small"]) == (16, 1)
    assert size.value == pytest.approx(0.5) and size.n == 60
    assert size.p == pytest.approx(hypergeom(60, 17, 30).sf(15))
    assert size.status == REPRODUCED and not size.by_design
    top = size.extra["top"]
    assert (top["copies"], top["order"], top["overlap"]) == (16, "above", False)


def test_lab_claims_decide_each_way():
    many = lab_claims_of(lab_rows("a", 10, [0, 0, 0.5, 1.0], n=40),
                         lab_rows("b", 20, [0, 0.25, 0.5, 1.0], n=40))
    assert many["lab_controls"].status == REPRODUCED and many["lab_controls"].n == 80
    assert many["lab_separated"].status == REPRODUCED
    false_hit = lab_claims_of(lab_rows("a", 10, [0.025, 0, 0.5, 1.0], n=40),
                              lab_rows("b", 20, [0, 0, 0.5, 1.0], n=40))
    assert false_hit["lab_controls"].status == NOT_REPRODUCED
    assert false_hit["lab_controls"].extra["models_matched"] == 1
    # the same rates at both sizes: no size effect, and equal top rates
    flat = lab_claims_of(lab_rows("a", 10, [0, 0.2, 0.2, 0.5]), lab_rows("b", 20, [0, 0.2, 0.2, 0.5]))
    assert flat["lab_size"].status == NOT_REPRODUCED and flat["lab_size"].value == 0
    assert flat["lab_rises"].status == REPRODUCED  # 0, 20%, 20%, 50%: never falls, ends higher
    assert flat["lab_size"].extra["top"]["order"] == "equal"
    never = lab_claims_of(lab_rows("a", 10, [0, 0, 0, 0]), lab_rows("b", 20, [0, 0, 0, 0]))
    assert never["lab_separated"].status == NOT_REPRODUCED and never["lab_rises"].status == NOT_REPRODUCED
    single = lab_claims_of(lab_rows("a", 10, [0, 0, 0.5, 1.0]))
    assert single["lab_size"].status == NOT_TESTABLE and single["lab_separated"].status == INCONCLUSIVE
    empty = ph.lab_claims(pd.DataFrame(columns=ph.LAB_RATE_COLUMNS))
    assert [c.status for c in empty] == [NOT_TESTABLE] * 4


def test_the_chapter_claims_travel_as_json():
    claims = [*ph.state_media_gap_claims(rates_of([("m", "propaganda", 1, 150), ("m", "culturax", 0, 150)]),
                                         SOURCE),
              *ph.lab_claims(pd.concat([lab_rows("a", 10, [0, 0, 0, 0.1]),
                                        lab_rows("b", 20, [0, 0, 0.6, 1])]))]
    back = from_json(to_json(claims))
    assert back == claims
    assert ph.model_slug("api:openai/GPT-4o") == "api_openai_gpt_4o"


def test_refusal_claim_leaves_failed_requests_out_of_its_n():
    def modes(faithful, fixed, error):
        return {("windowed", "faithful"): pd.DataFrame({"refused": faithful, "error": error}),
                ("windowed", "fixed"): pd.DataFrame({"refused": fixed, "error": error})}

    # 12 requests, the last 3 failed: 9 completions are checked; 1 faithful refusal, 2 fixed ones
    some = ph.refusal_claim(modes([True] + [False] * 11, [True, True] + [False] * 10,
                                  [False] * 9 + [True] * 3))
    assert (some.status, some.n, some.value) == (REPRODUCED, 9, 1)
    assert (some.extra["n_requests"], some.extra["n_errors"]) == (12, 3)
    assert some.reason == "the fixed mode finds 1 refusal the faithful mode misses, n = 9"
    # every request failed: an error is never an answer, so nothing was checked
    failed = ph.refusal_claim(modes([False] * 12, [False] * 12, [True] * 12))
    assert (failed.status, failed.n) == (NOT_TESTABLE, 0)
    assert (failed.extra["n_requests"], failed.extra["n_errors"]) == (12, 12)
    assert failed.reason == "all 12 requests failed, so no completion could be checked"

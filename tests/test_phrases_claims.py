"""The Phrases chapter's decisions (analysis.phrases.claims), by value on hand-made numbers:
status, kind, unit, n_units, null, control, Holm family and the minimum n of each claim."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import hypergeom

from analysis.core.claims import (
    DOES_NOT_HOLD,
    EXTENSION,
    HOLDS,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    from_json,
    to_json,
)
from analysis.core.claims import (
    SOURCE as SOURCE_KIND,
)
from analysis.phrases import inference
from analysis.phrases.claims import (
    distance_gap_claims,
    lab_claims,
    model_slug,
    range_position,
    refusal_claim,
    source_range_claims,
    state_media_gap_claims,
    state_media_gap_min_n,
    windowed_claim,
)
from analysis.phrases.inference import LAB_ROW_COLUMNS, closer_share, distance_gap_null, size_trend
from analysis.phrases.method_rates import LAB_RATE_COLUMNS, distance_gap
from analysis.stats.intervals import wilson_interval
from phrases_toys import SOURCE, rates_of


def one(claims, model):
    (c,) = [c for c in claims if c.extra.get("model") == model]
    return c


# --- the source's headline: state media above CulturaX ---------------------------------


def holm_by_hand(ps):
    """Holm's adjusted p-values, written out: the k-th smallest times (m − k + 1), running max."""
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    out, running = [0.0] * len(ps), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(ps) - rank) * ps[i]))
        out[i] = running
    return out


def test_state_media_gap_statuses_on_hand_computed_counts():
    rates = rates_of([
        ("sig", "propaganda", 10, 150), ("sig", "culturax", 1, 150),   # +6 points, significant
        ("zero", "propaganda", 0, 150), ("zero", "culturax", 0, 150),  # 0 against 0: the floor
        ("one", "propaganda", 1, 150), ("one", "culturax", 0, 150),    # +0.7 points, p = 0.5
        ("back", "propaganda", 0, 150), ("back", "culturax", 6, 150),  # CulturaX higher, excludes +0.7
        ("near", "propaganda", 1, 150), ("near", "culturax", 2, 150),  # the other side, not significant
        ("few", "propaganda", 10, 60), ("few", "culturax", 1, 60),     # n = 120 < 234
        ("half", "propaganda", 5, 150),                                # no CulturaX rate
    ])
    claims = state_media_gap_claims(rates, SOURCE, ["sig", "absent"])
    assert [c.id for c in claims][-1] == "state_media_gap_absent"
    assert {(c.kind, c.unit, c.section) for c in claims} == {(SOURCE_KIND, "phrases", "phrases-rates")}
    assert all(c.control_value is None and c.control_reason for c in claims)
    sig = one(claims, "sig")
    # one-sided Fisher exact: P(X ≥ 10) when 11 matches fall into two groups of 150
    assert sig.p == pytest.approx(hypergeom(300, 11, 150).sf(9))
    assert (sig.n, sig.n_units, sig.null_kind, sig.null_value) == (300, 300, "analytic", 0.0)
    # min_n: 117 per type, where 0 of n rules out the source's lowest rate, 3.2%
    assert sig.min_n == 234 == state_media_gap_min_n(SOURCE)
    assert sig.source_value == "+0.7 to +6.9 points; state media higher for 5 of 5 models"
    # the family: every model with a test but the floor (its test can reject nothing)
    tested = ["sig", "one", "back", "near", "few"]
    assert {c.extra["model"] for c in claims if c.family} == set(tested)
    adjusted = holm_by_hand([one(claims, m).p for m in tested])
    for m, p in zip(tested, adjusted):
        assert one(claims, m).p_adjusted == pytest.approx(p)
    assert sig.status == REPRODUCED and sig.p_adjusted < 0.05 and "Holm-adjusted p" in sig.reason
    zero = one(claims, "zero")
    assert (zero.status, zero.value, zero.p, zero.family) == (NOT_TESTABLE, 0.0, 1.0, None)
    assert "floor (0 of 150 against 0 of 150 matched)" in zero.reason
    assert (one(claims, "one").status, one(claims, "one").p) == (INCONCLUSIVE, pytest.approx(0.5))
    back = one(claims, "back")
    # not significant the other way (p = 1), but its interval lies below the source's smallest gap
    assert back.interval[1] < 0.007 and back.status == NOT_REPRODUCED
    assert "excludes the source's" in back.reason
    near = one(claims, "near")
    assert near.value < 0 and near.interval[1] > 0.007 and near.status == INCONCLUSIVE
    assert "the opposite direction, not significant" in near.reason
    few = one(claims, "few")
    assert few.status == INCONCLUSIVE and few.n == 120 and "below the minimum of 234" in few.reason
    assert one(claims, "half").status == NOT_TESTABLE
    assert one(claims, "absent").status == NOT_TESTABLE


def test_a_floor_of_0_of_10_against_0_of_10_is_not_testable():
    (c,) = state_media_gap_claims(rates_of([("m", "propaganda", 0, 10), ("m", "culturax", 0, 10)]), SOURCE)
    assert c.status == NOT_TESTABLE and "floor" in c.reason  # not "below the minimum": the floor comes first


# --- each model beside the source's range -------------------------------------------------


def test_range_position_of_a_rate_and_its_interval():
    assert range_position(0.0, 0.0, 0.025, 0.032, 0.088) == "below"
    assert range_position(0.3, 0.2, 0.4, 0.032, 0.088) == "above"
    assert range_position(0.05, 0.02, 0.1, 0.032, 0.088) == "inside"
    assert range_position(0.007, 0.001, 0.037, 0.032, 0.088) == "overlaps"


def test_source_range_claims_are_about_models_this_run_does_not_have():
    rates = rates_of([("none", "propaganda", 0, 150), ("one", "propaganda", 1, 150),
                      ("mid", "propaganda", 8, 150), ("high", "propaganda", 40, 150),
                      ("cx", "culturax", 5, 150)])
    claims = source_range_claims(rates, SOURCE)
    assert {c.status for c in claims} == {NOT_TESTABLE}
    got = {c.extra["model"]: c.extra.get("where") for c in claims}
    assert got == {"none": "below", "one": "overlaps", "mid": "inside", "high": "above", "cx": None}
    none = one(claims, "none")
    assert "five 2024 commercial models" in none.reason and none.value is None
    assert (none.extra["rate"], none.n, none.n_units, none.unit) == (0.0, 150, 150, "phrases")
    assert (none.extra["ci_lo"], none.extra["ci_hi"]) == pytest.approx((0.0, 0.02497), abs=1e-5)
    assert none.source_value == "3.2% to 8.8%" and none.section == "phrases-source"
    assert none.kind == SOURCE_KIND and none.control_reason


# --- below the threshold: distances ---------------------------------------------------------


def gap_of(models, p_perm, closer=0.7, n=(60, 60), units=40):
    gap = pd.DataFrame({"model": models, "n_first": n[0], "n_second": n[1], "median_first": 0.6,
                        "median_second": 0.8, "U": 0.0, "p_value": 0.01, "closer": closer})
    null = pd.DataFrame({"model": models, "closer": closer, "p_perm": p_perm, "null_closer": 0.5,
                         "n_units": units, "n_rows": n[0] + n[1]})
    return gap, null


def test_the_four_distance_gaps_are_one_holm_family():
    # raw p 0.01, 0.04 | 0.03, 0.5: Holm gives 0.04, 0.09 (0.08, raised to the running max) | 0.09, 0.5
    claims = distance_gap_claims({"zh": gap_of(["a", "b"], [0.01, 0.04]),
                                  "en": gap_of(["a", "b"], [0.03, 0.5], units=20)}, ["a", "b", "c"])
    got = {c.id: c for c in claims}
    assert list(got) == ["distance_gap_zh_a", "distance_gap_zh_b", "distance_gap_zh_c", "distance_gap_en_a",
                         "distance_gap_en_b", "distance_gap_en_c"]
    adjusted = {i: got[i].p_adjusted for i in got if got[i].p is not None}
    assert adjusted == pytest.approx({"distance_gap_zh_a": 0.04, "distance_gap_zh_b": 0.09,
                                      "distance_gap_en_a": 0.09, "distance_gap_en_b": 0.5})
    assert got["distance_gap_zh_a"].status == HOLDS
    # significant alone (0.04, 0.03 < 0.05), not after the family's correction
    assert got["distance_gap_zh_b"].status == got["distance_gap_en_a"].status == INCONCLUSIVE
    assert got["distance_gap_zh_c"].status == NOT_TESTABLE and got["distance_gap_zh_c"].p_adjusted is None
    a = got["distance_gap_en_a"]
    assert (a.kind, a.unit, a.n_units, a.n, a.null_kind, a.null_value) == (EXTENSION, "texts", 20, 120,
                                                                           "permutation", 0.5)
    assert a.family and a.source_value is None and a.control_reason
    assert got["distance_gap_zh_a"].unit == "phrases" and got["distance_gap_zh_a"].section == "phrases-modes"


def test_a_distance_gap_below_its_minimum_units_is_inconclusive():
    (c,) = distance_gap_claims({"en": gap_of(["m"], [0.001], units=12)})
    assert c.status == INCONCLUSIVE and "12 texts, below the minimum of 20" in c.reason


def scored_distances(distance, types, model="m"):
    return pd.DataFrame({"model": model, "phrase_id": [f"p{i}" for i in range(len(types))], "type": types,
                         "distance": distance, "excluded": False})


def test_a_constant_distance_does_not_beat_its_permutation_null():
    types = ["popular"] * 10 + ["baseline"] * 10
    null = distance_gap_null(scored_distances([0.7] * 20, types), "popular", "baseline")
    (r,) = null.itertuples()
    assert (r.closer, r.null_closer, r.p_perm) == (0.5, 0.5, 1.0)  # every permutation ties the observed
    (c,) = distance_gap_claims({"en": (distance_gap(scored_distances([0.7] * 20, types), "popular",
                                                    "baseline"), null)})
    assert c.status == INCONCLUSIVE


def test_the_null_permutes_whole_texts():
    # 4 texts of 3 phrases, 2 of each type; the popular texts' completions are all the closer ones
    types = ["popular"] * 6 + ["baseline"] * 6
    scored = scored_distances([0.1, 0.2, 0.3, 0.15, 0.25, 0.35] + [0.8, 0.9, 0.85, 0.95, 0.82, 0.88], types)
    texts = pd.Series({f"p{i}": f"t{i // 3}" for i in range(12)})
    by_text = distance_gap_null(scored, "popular", "baseline", units=texts).iloc[0]
    by_phrase = distance_gap_null(scored, "popular", "baseline").iloc[0]
    assert by_text["closer"] == by_phrase["closer"] == 1.0
    # exact p over texts: 1 of the C(4, 2) = 6 labellings is as extreme; over phrases 1 of C(12, 6) = 924
    assert by_text["n_units"] == 4 and by_text["p_perm"] == pytest.approx(1 / 6, abs=0.03)
    assert by_phrase["n_units"] == 12 and by_phrase["p_perm"] < 0.01


def test_closer_share_is_the_mann_whitney_effect_size_with_ties_half():
    assert closer_share(np.array([0.1, 0.5, 0.5, 0.9]), np.array([True, True, False, False])) == 0.875


# --- the scorer's rules -------------------------------------------------------------------


def scored_pair(faithful, fixed):
    frame = lambda refused: pd.DataFrame({"refused": refused})
    return {("windowed", "faithful"): frame(faithful), ("windowed", "fixed"): frame(fixed)}


def test_refusal_claim_counts_what_only_the_comma_patterns_catch():
    missed = refusal_claim(scored_pair([True, False, False, False], [True, True, True, False]))
    assert (missed.status, missed.value, missed.n, missed.kind) == (HOLDS, 2, 4, EXTENSION)
    assert (missed.extra["faithful"], missed.extra["fixed"], missed.extra["n_comma_patterns"]) == (1, 3, 8)
    assert (missed.unit, missed.n_units, missed.null_kind) == ("completions", 4, "analytic")
    same = refusal_claim(scored_pair([True, False], [True, False]))
    assert (same.status, same.value) == (INCONCLUSIVE, 0)
    # no refusal in either mode: the floor, nothing the faithful mode could have missed
    none = refusal_claim(scored_pair([False, False], [False, False]))
    assert none.status == NOT_TESTABLE and "floor" in none.reason
    assert refusal_claim(scored_pair([], [])).status == NOT_TESTABLE


def by_mode_of(windowed, prefix, total=10):
    rows = [(mode, m, "propaganda", k, total) for mode, ks in (("windowed", windowed), ("prefix", prefix))
            for m, k in zip(("a", "b"), ks)]
    return pd.DataFrame(rows, columns=["mode", "model", "type", "matched", "total"])


def test_windowed_claim_never_fewer_matches_than_prefix():
    more = windowed_claim(by_mode_of([3, 1], [1, 1]), 0.4)
    assert (more.status, more.value, more.n, more.by_design) == (HOLDS, 2, 20, True)
    assert "holds for any data" in more.by_design_reason and more.kind == EXTENSION
    assert not windowed_claim(by_mode_of([3, 1], [1, 1]), 0.6).by_design
    fewer = windowed_claim(by_mode_of([3, 0], [1, 1]), 0.6)
    assert fewer.status == DOES_NOT_HOLD and fewer.value == 1  # more in all, but fewer for model b
    assert fewer.extra["fewer_pairs"] == 1
    zeros = windowed_claim(by_mode_of([0, 0], [0, 0]), 0.4)
    assert zeros.status == NOT_TESTABLE and "floor" in zeros.reason
    assert windowed_claim(by_mode_of([], []), 0.4).status == NOT_TESTABLE


def test_refusal_claim_leaves_failed_requests_out_of_its_n():
    def modes(faithful, fixed, error):
        return {("windowed", "faithful"): pd.DataFrame({"refused": faithful, "error": error}),
                ("windowed", "fixed"): pd.DataFrame({"refused": fixed, "error": error})}

    # 12 requests, the last 3 failed: 9 completions are checked; 1 faithful refusal, 2 fixed ones
    some = refusal_claim(modes([True] + [False] * 11, [True, True] + [False] * 10,
                               [False] * 9 + [True] * 3))
    assert (some.status, some.n, some.value) == (HOLDS, 9, 1)
    assert (some.extra["n_requests"], some.extra["n_errors"]) == (12, 3)
    assert "9 completions" in some.reason
    # every request failed: an error is never an answer, so nothing was checked
    failed = refusal_claim(modes([False] * 12, [False] * 12, [True] * 12))
    assert (failed.status, failed.n) == (NOT_TESTABLE, 0)
    assert (failed.extra["n_requests"], failed.extra["n_errors"]) == (12, 12)
    assert failed.reason == "all 12 requests failed, so no completion could be checked"


# --- the lab --------------------------------------------------------------------------------


def lab_rows(model, params, rates, n=10, copies=(0, 1, 4, 16)):
    matched = [round(r * n) for r in rates]
    lo, hi = wilson_interval(np.array(matched), np.array([n] * len(rates)))
    return pd.DataFrame({"model": model, "params": params, "copies": list(copies), "phrases": n,
                         "excluded": 0, "matched": matched, "total": n, "rate": rates, "ci_lo": lo,
                         "ci_hi": hi})


def completions_of(table):
    """inference.lab_rows' frame of a rates table: the j-th phrase of a copy level is the same phrase for
    every model, and a model matching k of them matches the first k."""
    return pd.DataFrame([{"model": r.model, "phrase_id": f"c{r.copies}_{j}", "copies": r.copies,
                          "matched": int(j < r.matched)} for r in table.itertuples() for j in range(r.total)])


def lab_claims_of(*frames):
    table = pd.concat(frames, ignore_index=True)
    return {c.id: c for c in lab_claims(table, completions_of(table))}


def test_lab_claims_on_a_two_model_ladder():
    claims = lab_claims_of(lab_rows("a", 10, [0, 0, 0, 0.1]), lab_rows("b", 20, [0, 0, 0.6, 1.0]))
    assert list(claims) == ["lab_controls", "lab_separated", "lab_rises", "lab_size"]
    assert not any(c.by_design for c in claims.values())  # the lab fixes the copies, not what is learnt
    assert [c.kind for c in claims.values()] == [EXTENSION, EXTENSION, EXTENSION, SOURCE_KIND]
    controls = claims["lab_controls"]
    # 0 of 10 control phrases: too few to bound false positives below 10% (that needs 35)
    assert (controls.status, controls.value, controls.n, controls.n_units, controls.min_n) == (
        INCONCLUSIVE, 0.0, 20, 10, 35)
    assert controls.unit == "phrases" and "negative control" in controls.control_reason
    separated = claims["lab_separated"]
    # a: 1 of 10 at 16 copies against 0 of 10 controls, Fisher p = 0.5, ×3 levels → 1; b: 6 of 10 at 4
    assert separated.extra["first_level"] == {"a": None, "b": 4}
    assert separated.extra["p_model"]["a"] == 1.0 and separated.p == 1.0
    assert (separated.status, separated.value, separated.n_units, separated.unit) == (INCONCLUSIVE, 0.5, 2,
                                                                                     "models")
    assert separated.control_value == 0.0
    rises = claims["lab_rises"]
    # both never fall and end higher, but a's single match could sit at any level: its trend is weak
    assert rises.extra["count"] == 2 and rises.extra["p_model"]["b"] < 0.01 < 0.05 < rises.p
    assert rises.status == INCONCLUSIVE and rises.null_kind == "permutation"
    size = claims["lab_size"]
    # one family, two sizes (a doubling): the size term is fitted on the 30 trained phrases
    assert size.value > 0 and (size.n, size.n_units) == (60, 30) and size.null_kind == "analytic"
    assert size.interval[0] > 0 and size.status == REPRODUCED
    top = size.extra["top"]
    assert (top["copies"], top["order"], top["overlap"]) == (16, "above", False)


def test_the_size_term_is_read_within_families():
    # Firth's fit adds half a count to each cell of a saturated design: family w has A (1 param)
    # 1 of 4 and B (2) 3 of 4, odds 1.5/3.5 and 3.5/1.5, a term of 2 ln(7/3) per doubling; family d
    # has C (4) 1 of 4 and D (8) 3 of 4, the same term though its models are 4 and 8 times larger
    rows = []
    for model, k, n in (("A", 1, 4), ("B", 3, 4), ("C", 1, 4), ("D", 3, 4)):
        rows += [{"model": model, "phrase_id": f"{model}{j}", "copies": 4, "matched": int(j < k)}
                 for j in range(n)]
    ladder = pd.DataFrame({"model": list("ABCD"), "family": ["w", "w", "d", "d"], "params": [1, 2, 4, 8]})
    est, table = size_trend(pd.DataFrame(rows), ladder)
    # each family alone is saturated: its term is 2 ln(7/3)
    assert table["size_term"].tolist() == pytest.approx([2 * math.log(7 / 3)] * 2)
    assert est.value > 0 and est.n == 16 and est.n_units == 16
    # the pooled term is read within families: making family d a thousand times larger changes nothing
    bigger = size_trend(pd.DataFrame(rows), ladder.assign(params=[1, 2, 4000, 8000]))[0]
    assert bigger.value == pytest.approx(est.value)
    assert table["family"].tolist() == ["w", "d"] and table["params_span"].tolist() == [2.0, 2.0]
    # one size per family: nothing within a family to read the term from
    flat = ladder.assign(family=["w", "d", "x", "y"])
    assert size_trend(pd.DataFrame(rows), flat)[0] is None


def test_lab_claims_decide_each_way():
    many = lab_claims_of(lab_rows("a", 10, [0, 0, 0.5, 1.0], n=40),
                         lab_rows("b", 20, [0, 0.25, 0.5, 1.0], n=40))
    assert many["lab_controls"].status == HOLDS and many["lab_controls"].n_units == 40
    assert many["lab_separated"].status == HOLDS and many["lab_rises"].status == HOLDS
    false_hit = lab_claims_of(lab_rows("a", 10, [0.025, 0, 0.5, 1.0], n=40),
                              lab_rows("b", 20, [0, 0, 0.5, 1.0], n=40))
    assert false_hit["lab_controls"].status == DOES_NOT_HOLD
    assert false_hit["lab_controls"].extra["models_matched"] == 1
    # the same rates at both sizes, on the same phrases: no difference in any phrase, p = 1
    flat = lab_claims_of(lab_rows("a", 10, [0, 0.2, 0.2, 0.5]), lab_rows("b", 20, [0, 0.2, 0.2, 0.5]))
    assert flat["lab_size"].value == pytest.approx(0, abs=1e-6) and flat["lab_size"].interval[0] < 0
    assert flat["lab_size"].status == INCONCLUSIVE  # not significant either way: no evidence against
    assert flat["lab_size"].extra["top"]["order"] == "equal"
    never = lab_claims_of(lab_rows("a", 10, [0, 0, 0, 0]), lab_rows("b", 20, [0, 0, 0, 0]))
    assert {never[k].status for k in ("lab_separated", "lab_rises", "lab_size")} == {NOT_TESTABLE}
    assert "floor" in never["lab_size"].reason and "floor" in never["lab_separated"].reason
    assert from_json(to_json(never.values())) == list(never.values())  # no NaN left in a claim's extra
    single = lab_claims_of(lab_rows("a", 10, [0, 0, 0.5, 1.0]))
    assert single["lab_size"].status == NOT_TESTABLE and single["lab_separated"].status == INCONCLUSIVE
    empty = lab_claims(pd.DataFrame(columns=LAB_RATE_COLUMNS), pd.DataFrame(columns=LAB_ROW_COLUMNS))
    assert [c.status for c in empty] == [NOT_TESTABLE] * 4


def test_a_control_that_shows_the_size_effect_makes_it_mechanical():
    # the larger model matches the never-trained phrases as often as the trained ones
    claims = lab_claims_of(lab_rows("a", 10, [0.1, 0.1, 0.1, 0.1], n=40),
                           lab_rows("b", 20, [0.9, 0.9, 0.9, 0.9], n=40))
    size = claims["lab_size"]
    assert size.value > 0 and size.interval[0] > 0  # significant on its own
    assert size.control_value == pytest.approx(size.value, rel=0.05) and size.extra["control_interval"][0] > 0
    assert (size.status, size.mechanical) == (INCONCLUSIVE, True) and "negative control" in size.reason


def test_lab_rows_keep_each_scorable_completion_with_its_copies():
    scored = pd.DataFrame({"model": ["m"] * 3, "phrase_id": ["x", "y", "z"], "excluded": [False, True, False],
                           "matched": [True, False, pd.NA]})
    phrases = pd.DataFrame({"id": ["x", "y", "z"], "copies": [4, 0, 0]})
    rows = inference.lab_rows(scored, phrases)
    assert rows.to_dict("list") == {"model": ["m", "m"], "phrase_id": ["x", "z"], "copies": [4, 0],
                                    "matched": [1, 0]}


def test_the_chapter_claims_travel_as_json():
    table = pd.concat([lab_rows("a", 10, [0, 0, 0, 0.1]), lab_rows("b", 20, [0, 0, 0.6, 1])])
    claims = [*state_media_gap_claims(rates_of([("m", "propaganda", 1, 150), ("m", "culturax", 0, 150)]),
                                      SOURCE),
              *lab_claims(table, completions_of(table))]
    back = from_json(to_json(claims))
    assert back == claims
    assert model_slug("api:openai/GPT-4o") == "api_openai_gpt_4o"

"""The Phrases chapter's wording (analysis.phrases.text): a few exact renderings,
and that the sentences follow the claims' decisions instead of deciding again."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from analysis.core.claim_text import counts_sentence
from analysis.core.claims import INCONCLUSIVE, NOT_TESTABLE, REPRODUCED, as_kind
from analysis.phrases.claims import (
    distance_gap_claims,
    refusal_claim,
    source_range_claims,
    state_media_gap_claims,
    windowed_claim,
)
from analysis.phrases.claims import lab_claims as phrases_lab_claims
from analysis.phrases.inference import LAB_ROW_COLUMNS
from analysis.phrases.method_rates import LAB_RATE_COLUMNS
from analysis.phrases.text import (
    NO_BOTH_TYPES,
    comparison_verdict,
    difference_headline,
    difference_summary,
    difference_table,
    difference_values,
    difference_verdict,
    gap_sentences,
    markdown_table,
    refusal_sentence,
    render,
)
from analysis.phrases.text_lab import lab_summary, lab_verdict
from analysis.stats.intervals import wilson_interval
from phrases_toys import SOURCE, rates_of


def test_comparison_verdict_joins_the_models_in_one_sentence():
    rates = rates_of([("low", "propaganda", 0, 150), ("mid", "propaganda", 1, 150),
                      ("high", "propaganda", 40, 150)])
    assert comparison_verdict(source_range_claims(rates, SOURCE)) == (
        "The source's 2024 models reproduce 3.2% to 8.8% of state-media endings; "
        "low (0.0% of 150) is below the source's range even at the top of its 95% interval; "
        "mid (0.7% of 150) is within reach of the source's range (its 95% interval overlaps it); "
        "high (26.7% of 150) is above the source's range even at the bottom of its 95% interval. "
        "**Not testable here**: the range is that of the source's five 2024 commercial models, which this "
        "run does not have.")


def test_state_media_gap_rendering():
    rates = rates_of([("m", "propaganda", 1, 150), ("m", "culturax", 0, 150)])
    (claim,) = state_media_gap_claims(rates, SOURCE)
    assert render(claim) == (
        "m reproduces 0.7% of state-media and 0.0% of CulturaX endings (1 of 150 against 0 of 150 "
        "phrases), a difference of +0.7 points [-1.9, +3.7] with one-sided Fisher exact p = 0.5, "
        "Holm-adjusted = 0.5. "
        "Its interval excludes gaps above +3.7 points, so this run cannot rule out the source's smallest "
        "gap, +0.7 points. **Inconclusive**: the source's direction, not significant (Holm-adjusted p = 0.5 "
        "≥ 0.05), 300 phrases (Holm over the family's 1 test).")


def test_gap_sentence_wording_follows_the_status():
    gap = pd.DataFrame({"model": ["m"], "n_first": [60], "n_second": [60], "median_first": [0.7081],
                        "median_second": [0.7263], "U": [1400.0], "p_value": [0.00656], "closer": [0.61]})
    null = pd.DataFrame({"model": ["m"], "closer": [0.61], "p_perm": [0.02], "null_closer": [0.5],
                         "n_units": [26], "n_rows": [120]})
    (claim,) = distance_gap_claims({"en": (gap, null)})
    assert gap_sentences([claim]) == gap_sentences([claim], "en") == (
        "For m, a popular-text completion is the closer to its ending in 61.0% of pairs with a 2024–26 story "
        "one (median distance 0.708 vs 0.726, n = 60 and 60; permutation null 0.500 over 26 texts, "
        "p = 0.02, Holm-adjusted = 0.02). **Holds**: the source's direction, Holm-adjusted p = 0.02 < 0.05, "
        "26 texts (Holm over the family's 1 test).")
    assert gap_sentences([claim], "zh") == NO_BOTH_TYPES
    # the status words come from the claim: a claim marked inconclusive reads so
    doubted = dataclasses.replace(claim, status=INCONCLUSIVE)
    assert "**Inconclusive**" in render(doubted) and "**Holds**" not in render(doubted)


def test_refusal_sentence_says_where_the_extra_refusals_come_from():
    frame = lambda refused: pd.DataFrame({"refused": refused})
    claim = refusal_claim({("windowed", "faithful"): frame([False] * 3 + [True]),
                           ("windowed", "fixed"): frame([True] * 3 + [True])})
    assert refusal_sentence([claim]) == (
        "The faithful refusal detector finds 1 refusal among 4 completions and the fixed one 4; the 3 more "
        "come only from the 8 patterns with a comma, which the faithful mode can never match. **Holds**: "
        "the source's direction, 95% interval [3, 3] excludes 0, 4 completions.")


def test_refusal_sentence_counts_in_the_singular_and_the_plural():
    frame = lambda refused: pd.DataFrame({"refused": refused})

    def sentence(faithful, fixed):
        return refusal_sentence([refusal_claim({("windowed", "faithful"): frame(faithful),
                                                ("windowed", "fixed"): frame(fixed)})])

    # one refusal in each mode, one completion, and one more found only by the fixed mode
    assert sentence([False, False], [True, False]).startswith(
        "The faithful refusal detector finds 0 refusals among 2 completions and the fixed one 1; the 1 more "
        "comes only from the 8 patterns with a comma, which the faithful mode can never match. **Holds**")
    assert sentence([True], [True]).startswith(
        "The faithful refusal detector finds 1 refusal among 1 completion and the fixed one 1: the 8 "
        "patterns with a comma, which the faithful mode can never match, fire on no completion of this run. "
        "**Inconclusive**")


def lab_table():
    rows = []
    for model, params, matched in (("a", 10, [0, 0, 0, 1]), ("b", 20, [0, 0, 6, 10])):
        lo, hi = wilson_interval(pd.Series(matched).to_numpy(), pd.Series([10] * 4).to_numpy())
        rows.append(pd.DataFrame({"model": model, "params": params, "copies": [0, 1, 4, 16], "phrases": 10,
                                  "excluded": 0, "matched": matched, "total": 10,
                                  "rate": [m / 10 for m in matched], "ci_lo": lo, "ci_hi": hi}))
    return pd.concat(rows, ignore_index=True)


def lab_claims(table):
    """The lab claims of a rates table, the j-th phrase of a level the same phrase on every model."""
    done = pd.DataFrame([{"model": r.model, "phrase_id": f"c{r.copies}_{j}", "copies": r.copies,
                          "matched": int(j < r.matched)} for r in table.itertuples() for j in range(r.total)],
                        columns=LAB_ROW_COLUMNS)
    return phrases_lab_claims(table, done)


def test_lab_sentences_read_the_decisions_from_the_claims():
    table = lab_table()
    claims = lab_claims(table)
    assert "its rate first lies above the controls' at 4 copies" in lab_verdict(table, claims)
    # every lab claim's status is in the verdict, in the book's words
    assert "That every model separates: **Inconclusive**" in lab_verdict(table, claims)
    # a claim that says otherwise changes the sentence: the text does not test again
    changed = [dataclasses.replace(c, extra={**c.extra, "first_level": {"a": 1, "b": None}, "count": 1})
               if c.id == "lab_separated" else c for c in claims]
    verdict = lab_verdict(table, changed)
    assert "its rate first lies above the controls' at 1 copy" in verdict
    assert "at no copy level does its rate lie above the controls'" in verdict
    assert lab_summary(table, changed).startswith(
        "On the lab's ladder, where the copies are known, 1 of 2 models reproduce trained phrases above the "
        "controls' rate, from 1 copy at best")


@pytest.mark.parametrize("status", [REPRODUCED, INCONCLUSIVE])
def test_every_claim_kind_has_a_rendering(status):
    rates = rates_of([("m", "propaganda", 1, 150), ("m", "culturax", 0, 150)])
    by_mode = pd.DataFrame({"mode": ["windowed", "prefix"], "model": "m", "type": "propaganda",
                            "matched": [1, 0], "total": 150})
    frame = lambda refused: pd.DataFrame({"refused": refused})
    claims = [*state_media_gap_claims(rates, SOURCE), *source_range_claims(rates, SOURCE, ["gone"]),
              refusal_claim({("windowed", "faithful"): frame([False]),
                             ("windowed", "fixed"): frame([False])}),
              windowed_claim(by_mode, 0.4), *lab_claims(lab_table()),
              *lab_claims(pd.DataFrame(columns=LAB_RATE_COLUMNS))]
    for c in claims:
        text = render(dataclasses.replace(c, status=as_kind(status, c.kind)) if c.status != NOT_TESTABLE
                      else c)
        assert text.endswith(".") and len(text.split()) >= 8, (c.id, text)


def test_refusal_sentence_counts_no_failed_request_as_a_completion():
    def modes(faithful, error):
        frame = pd.DataFrame({"refused": faithful, "error": error})
        return {("windowed", "faithful"): frame, ("windowed", "fixed"): frame}

    # 12 requests, 4 failed: the refusals are counted among the 8 completions
    some = refusal_claim(modes([True] + [False] * 11, [False] * 8 + [True] * 4))
    assert refusal_sentence([some]).startswith(
        "The faithful refusal detector finds 1 refusal among 8 completions and the fixed one 1: the 8 "
        "patterns with a comma, which the faithful mode can never match, fire on no completion of this run.")
    # every request failed: no completion is left to check
    failed = refusal_claim(modes([False] * 12, [True] * 12))
    assert refusal_sentence([failed]) == (
        "No completion could be checked for refusals: all 12 requests failed. **Not testable here**: all 12 "
        "requests failed, so no completion could be checked.")


# --- the headline: state media minus CulturaX, per model, beside the source's -------------


def gap_claims():
    rates = rates_of([("sig", "propaganda", 10, 150), ("sig", "culturax", 1, 150),
                      ("zero", "propaganda", 0, 150), ("zero", "culturax", 0, 150)])
    return state_media_gap_claims(rates, SOURCE, ["sig", "zero", "absent"])


def test_difference_values_are_the_glued_headline_numbers():
    claims = gap_claims()
    # 10/150 − 1/150 = +6.0 points; Newcombe [1.74, 11.20]; P(X ≥ 10), X ~ Hypergeom(300, 11, 150) = 0.00516
    assert difference_values(claims, "sig") == {"diff_sm_cx": "+6.0 points [+1.7, +11.2]",
                                                "diff_p": "0.00516"}
    assert difference_values(claims, "zero") == {"diff_sm_cx": "+0.0 points [-2.5, +2.5]", "diff_p": "1"}
    assert difference_values(claims, "absent") == {
        "diff_sm_cx": "not measured (no scorable completions of both types)", "diff_p": "not computed"}


def test_difference_table_sets_each_model_beside_the_source():
    table = difference_table(gap_claims(), SOURCE)
    assert list(table.columns) == ["who", "model", "state media", "CulturaX", "difference (points)",
                                   "95% interval", "one-sided p", "n", "status"]
    assert table.iloc[0].tolist() == ["this run", "sig", "6.7% (10 of 150)", "0.7% (1 of 150)", "+6.0",
                                      "[+1.7, +11.2]", "0.00516", "300", "reproduced"]
    assert table.iloc[1].tolist() == ["this run", "zero", "0.0% (0 of 150)", "0.0% (0 of 150)", "+0.0",
                                      "[-2.5, +2.5]", "1", "300", "not testable here"]  # the floor
    assert table.iloc[2].tolist() == ["this run", "absent", "—", "—", "—", "—", "—", "—", "not testable here"]
    source = table[table["who"] == "source, 2024"].set_index("model")
    assert source.loc["gpt-4o"].tolist()[1:5] == ["4.3%", "0.8%", "+3.5", "not published"]
    assert source["difference (points)"].tolist() == ["+3.5", "+3.3", "+0.7", "+6.9", "+2.8"]
    md = markdown_table(table).splitlines()
    assert md[0] == ("| who | model | state media | CulturaX | difference (points) | 95% interval "
                     "| one-sided p | n | status |")
    assert md[1] == "|" + " --- |" * 9
    assert md[2] == ("| this run | sig | 6.7% (10 of 150) | 0.7% (1 of 150) | +6.0 | [+1.7, +11.2] | 0.00516 "
                     "| 300 | reproduced |")
    assert len(md) == 2 + 3 + 5


def test_difference_sentences_read_the_claims():
    claims = gap_claims()
    source = ("The source's 2024 models, read off its figure, show +3.5 points for gpt-4o, +3.3 for gpt-4, "
              "+0.7 for gpt-3.5-instruct, +6.9 for claude-opus-3 and +2.8 for claude-sonnet-3 (no intervals "
              "given).")
    assert difference_headline(claims, SOURCE, "sig") == (
        "For sig, the state-media rate minus the CulturaX rate is +6.0 points [+1.7, +11.2] (95% Newcombe "
        "interval; one-sided Fisher exact p = 0.00516, n = 300). " + source)
    assert difference_headline(claims, SOURCE, "absent") == (
        "For absent, the difference is not measured: no scorable completions of both types are left. "
        + source)
    assert difference_verdict(claims, SOURCE) == (
        "The source's finding is a difference: its 2024 models complete state-media phrases more often than "
        "CulturaX phrases (5 of 5 models, by +0.7 to +6.9 points). In this run, state media minus CulturaX "
        "is +6.0 points [+1.7, +11.2] for sig (reproduced), +0.0 points [-2.5, +2.5] for zero (not "
        "testable here) and not measured for absent (not testable here), the models one Holm family: of 3 "
        "models, 1 reproduced and 2 not testable here.")
    assert difference_summary(claims, SOURCE) == (
        "The source's headline, state-media phrases completed more often than CulturaX phrases (+0.7 to "
        "+6.9 points for its 2024 models): of the 3 models of this run, 1 reproduced and 2 not testable "
        "here.")
    # the words follow the claim: a claim marked inconclusive is not counted as reproduced
    doubted = [dataclasses.replace(c, status=INCONCLUSIVE) if c.extra["model"] == "sig" else c
               for c in claims]
    assert "for sig (inconclusive)" in difference_verdict(doubted, SOURCE)
    assert difference_summary(doubted, SOURCE).endswith("1 inconclusive and 2 not testable here.")
    untested = state_media_gap_claims(rates_of([]), SOURCE, ["absent"])
    assert difference_summary(untested, SOURCE) == (
        "The source's headline, state-media phrases completed more often than CulturaX phrases (+0.7 to "
        "+6.9 points for its 2024 models), cannot be tested here: no model of this run has scorable "
        "completions of both types.")


def test_source_counts_count_the_source_claims_from_the_claims():
    rates = rates_of([("sig", "propaganda", 10, 150), ("sig", "culturax", 1, 150),
                      ("zero", "propaganda", 0, 150), ("zero", "culturax", 0, 150)])
    by_mode = pd.DataFrame({"mode": ["windowed", "prefix"], "model": "m", "type": "propaganda",
                            "matched": [1, 0], "total": 150})
    claims = [*state_media_gap_claims(rates, SOURCE), *source_range_claims(rates, SOURCE),
              windowed_claim(by_mode, 0.4)]
    assert counts_sentence(claims) == (
        "Of this chapter's 4 claims a source makes, 1 reproduced, 0 not reproduced, 0 inconclusive, 3 not "
        "testable here; besides, 1 claim of the book's own: 1 holds, 0 does not hold, 0 inconclusive, "
        "0 not testable here.")
    # a count follows the claims' statuses, not the numbers behind them
    doubted = [dataclasses.replace(c, status=INCONCLUSIVE) if c.status == REPRODUCED else c for c in claims]
    assert "0 reproduced, 0 not reproduced, 1 inconclusive" in counts_sentence(doubted)

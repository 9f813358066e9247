"""The source's own completions at fc444b0 (analysis.phrases.pilot, .claims_source):
the transcribed old scorer, agreement counting and the rule behind each
disagreement, and the gap claims on the source's data. Values by hand."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from analysis.phrases import claims_source as cs
from analysis.phrases import pilot
from analysis.phrases.method import match

# three strings, each scored differently by exactly one of the three rules (by hand):
# characters: fc444b0 keeps "*", so its best full window "a*b*c" is 4 edits from "abcde"
#   (0.8); the later scorer drops "*" and finds "abcde" (0.0)
# echo: fc444b0 finds "abcde" in "xyzabcde" (0.0); cutting the start "xyzab" leaves "cde",
#   2 edits from "abcde" (0.4, not below 0.4)
# windows: fc444b0's full windows end at "zabcd" (2 edits, 0.4); the later scorer's window
#   at 4 runs past the end, "abcd" (1 edit, 0.2)
CASES = {
    "characters": ("a*b*c*d*e", "abcde", "", (False, 0.8), (True, 0.0)),
    "echo": ("xyzabcde", "abcde", "xyzab", (True, 0.0), (False, 0.4)),
    "windows": ("zzzzabcd", "abcde", "", (False, 0.4), (True, 0.2)),
}


@pytest.mark.parametrize("rule", list(CASES))
def test_each_rule_alone_turns_the_old_flag_into_the_new(rule):
    completion, expected, start, old, new = CASES[rule]
    assert pilot.pilot_fuzzy_match(completion, expected) == pytest.approx(old)
    got = match(completion, expected, start)
    assert (got.matched, got.distance) == pytest.approx(new)
    # all three steps off is the old scorer, all on the new one
    off = dict.fromkeys(pilot.RULES, False)
    assert pilot.variant_match(completion, expected, start, **off) == pytest.approx(old)
    on = dict.fromkeys(pilot.RULES, True)
    assert pilot.variant_match(completion, expected, start, **on) == pytest.approx(new)
    assert pilot.cause_of(completion, expected, start, new[0]) == rule


def test_old_normalization_keeps_curly_quotes_and_drops_spaces():
    # the literal r'[\s，。、；：""' '！？…]' holds ASCII quotes, not “”
    assert pilot.pilot_normalize("增强“四个意识”、 坚定。\"x\"") == "增强“四个意识”坚定x"


def _write(tmp_path, rows):
    path = tmp_path / "completions.json"
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    return path


PHRASES = pd.DataFrame({"id": ["id_1", "id_2", "id_1001", "id_3"],
                        "type": ["propaganda", "propaganda", "culturax", "propaganda"]})


def _row(pid, model, completion, start, end, matched, dist, type_="propaganda"):
    return {"timestamp": "2026-02-25T00:00:00+00:00", "phrase_id": pid, "type": type_, "model": model,
            "prompt": "续写句子：" + start, "expected": end, "completion": completion, "matched": matched,
            "edit_distance": dist}


def test_agreement_counts_five_rows_two_disagreeing(tmp_path):
    rows = [
        _row("id_1", "m", "the answer is abcdefghij indeed", "qq", "abcdefghij", True, 0.0),
        _row("id_2", "m", "nothing alike at all here", "qq", "abcdefghij", False, 0.9),
        _row("id_1001", "m", "abcdefghij and more text", "qq", "abcdefghij", True, 0.0, "culturax"),
        # the two the later scorer flips: "*" kept by fc444b0, and the cut echo
        _row("id_3", "m", "a*b*c*d*e and then some", "qq", "abcde", False, 0.8),
        _row("id_1", "n", "xyzabcde then more words", "xyzab", "abcde", True, 0.0),
    ]
    df = pilot.load_pilot(_write(tmp_path, rows), PHRASES)
    r = pilot.rescore_pilot(df)
    # the transcribed fc444b0 scorer gives back every stored flag
    assert (r["pilot_matched"] == r["stored_matched"]).all()
    assert r["agree"].tolist() == [True, True, True, False, False]
    table = pilot.agreement_table(r).set_index("model")
    assert table.loc["m", ["rows", "agree", "stored_matched", "book_matched"]].tolist() == [4, 3, 2, 3]
    assert table.loc["n", ["rows", "agree", "stored_matched", "book_matched"]].tolist() == [1, 0, 1, 0]
    assert table.loc["m", "by characters"] == 1 and table.loc["n", "by echo"] == 1
    listed = pilot.disagreements(r)
    assert listed[["model", "phrase", "rule that differs"]].values.tolist() == [
        ["m", "id_3", "characters"], ["n", "id_1", "echo"]]
    assert listed["study (fc444b0)"].tolist() == ["no match (0.80)", "match (0.00)"]


def test_the_sample_is_the_first_phrases_of_each_type_and_not_the_si_model(tmp_path):
    phrases = pd.DataFrame({"id": ["id_1001", "id_1", "id_2", "id_1002", "id_3"],
                            "type": ["culturax", "propaganda", "propaganda", "culturax", "propaganda"]})
    assert pilot.sample_ids(phrases, per_type=2) == {"id_1", "id_2", "id_1001", "id_1002"}
    rows = [_row("id_1", "m", "abcdefghij xx", "q", "abcdefghij", True, 0.0),
            _row("paper_1", "m", "abcdefghij xx", "q", "abcdefghij", True, 0.0),
            _row("id_1", pilot.SI_MODEL, "abcdefghij xx", "q", "abcdefghij", True, 0.0)]
    df = pilot.load_pilot(_write(tmp_path, rows), phrases)
    assert df["in_sample"].tolist() == [True, False, False]


def _rates(rows):
    return pd.DataFrame(rows, columns=["model", "type", "matched", "total"])


def test_source_gap_claims_holm_over_models_and_the_si_model_untestable():
    rates = _rates([["a", "propaganda", 20, 50], ["a", "culturax", 5, 50],
                    ["b", "propaganda", 6, 50], ["b", "culturax", 5, 50]])
    claims = {c.id: c for c in cs.source_gap_claims(rates, ["a", "b", pilot.SI_MODEL])}
    a, b = claims["source_gap_a"], claims["source_gap_b"]
    assert a.value == pytest.approx(0.30) and b.value == pytest.approx(0.02)
    # Holm over the two tests: the smaller p doubled, the larger kept (if larger)
    assert a.p_adjusted == pytest.approx(min(1.0, 2 * a.p))
    assert b.p_adjusted == pytest.approx(max(b.p, 2 * a.p))
    assert a.status == "reproduced" and b.status == "inconclusive"
    assert a.n_units == 100 and a.unit == "phrases"
    assert claims["source_gap_gpt_3_5_instruct_paper"].status == "not testable here"


def test_paper_counts_and_gaps_from_the_published_rates():
    source = pd.DataFrame({"model": ["x", "x", "y", "y"], "type": ["propaganda", "culturax"] * 2,
                           "rate_pct": [8.8, 1.9, 6.6, 5.9]})
    counts = cs.paper_counts(source).set_index("model")
    assert counts.loc["x"].tolist() == [88, 1000, 19, 1000]
    assert counts.loc["y"].tolist() == [66, 1000, 59, 1000]
    claims = {c.id: c for c in cs.paper_gap_claims(source)}
    assert claims["paper_gap_x"].value == pytest.approx(0.069)
    assert claims["paper_gap_x"].status == "reproduced"
    assert claims["paper_gap_y"].status == "inconclusive"  # +0.7 points of 1,000 each is within chance
    assert claims["paper_gap_x"].source_value == "+6.9 points (1,000 phrases per type)"
    assert cs.significant_count(list(claims.values())) == (1, 2)


def test_the_old_scorer_gives_back_every_flag_of_the_real_file():
    from analysis.core import data
    df = pilot.load_pilot(None, data.phrases())
    assert len(df) == 785
    old = [pilot.pilot_fuzzy_match(c, e) for c, e in zip(df["completion"], df["end"])]
    assert [m for m, _ in old] == df["stored_matched"].tolist()
    assert [round(d, 2) for _, d in old] == pytest.approx(pd.to_numeric(df["stored_edit_distance"]).tolist())


def test_the_section_table_and_values_read_the_claims():
    from analysis.phrases import text_source
    from analysis.stats.intervals import wilson_interval
    rates = _rates([["a", "propaganda", 20, 50], ["a", "culturax", 5, 50]])
    rates["ci_lo"], rates["ci_hi"] = wilson_interval(rates["matched"].to_numpy(), rates["total"].to_numpy())
    claims = cs.source_gap_claims(rates, ["a", pilot.SI_MODEL])
    table = text_source.source_rates_table(claims, rates)
    # 20/50 = 40.0%, Wilson [27.6, 53.8]%; 5/50 = 10.0%, Wilson [4.3, 21.4]%
    assert table.loc[0, "state media"] == "40.0% [27.6, 53.8]% (20 of 50)"
    assert table.loc[0, "CulturaX"] == "10.0% [4.3, 21.4]% (5 of 50)"
    assert table.loc[0, "difference (points)"].startswith("+30.0 points [")
    assert table.loc[1].tolist() == [pilot.SI_MODEL, "—", "—", "—", "—", "—", "not testable here"]
    rescored = pd.DataFrame({"model": ["a", "a", "a", pilot.SI_MODEL], "agree": [True, False, True, False],
                             "cause": ["", "echo", "", "characters"]})
    v = text_source.source_values(rescored, claims)
    assert (v["source_completions_rows"], v["source_completions_agree"], v["source_completions_share"]) == (
        "4", "2", "50.0%")
    assert v["source_completions_causes"] == "1 by echo and 1 by characters"
    assert v["source_gap_significant"] == "1 of 1" and v["source_si_rows"] == "1"


def test_the_2026_models_are_listed_as_a_claim_not_testable_here():
    from analysis.phrases import text
    c = cs.models_2026_claim()
    assert c.status == "not testable here" and c.kind == "source"
    assert "10 models (Claude Opus 4.6" in c.source_value and "max_tokens 256" in c.source_value
    assert text.render(c).startswith("The source also reports 10 models queried in 2026")

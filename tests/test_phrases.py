"""Hand-checked tests of the Phrases chapter's scoring rules (analysis.phrases)."""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from pathlib import Path

import pandas as pd
import pytest
from scipy.stats import norm

from analysis import phrases as ph

FIXTURES = Path(__file__).parent / "fixtures" / "phrases"
COMPLETIONS = FIXTURES / "completions.json"
PHRASES = FIXTURES / "phrases.json"

EXPECTED_10 = "一二三四五六七八九十"
EXPECTED_8 = "一二三四五六七八"


# --- cleaning -------------------------------------------------------------


def test_clean_removes_chinese_fullwidth_punctuation():
    assert ph.clean("“你好，世界！”——《人民日报》。（完）") == "你好世界人民日报完"
    assert ph.clean("甲、乙；丙：丁？戊…己「庚」") == "甲乙丙丁戊己庚"


def test_clean_removes_ascii_punctuation_but_keeps_spaces():
    # ':' '"' '!' '(' ')' '.' are category P; the spaces between words stay.
    assert ph.clean('He said: "hi!" (ok)...') == "He said hi ok"


def test_clean_keeps_symbols_and_drops_only_newlines():
    # '+', '＝', '～' are symbols (Sm), not punctuation; only "\n" of "\r\n" goes.
    assert ph.clean("1+1＝2～") == "1+1＝2～"
    assert ph.clean("一\n二\r\n三\t四") == "一二\r三\t四"


def test_comma_space_rule():
    assert ph.clean("甲, 乙") == "甲乙"  # comma and the one space after it
    assert ph.clean("甲,  乙") == "甲 乙"  # only the first space goes
    assert ph.clean("甲 ,乙") == "甲 乙"  # space before a comma stays
    assert ph.clean("甲， 乙") == "甲 乙"  # rule is for the ASCII comma only
    assert ph.clean("甲,乙") == "甲乙"


def test_clean_english_collapses_whitespace():
    assert ph.clean("Hello,   world!\nNew  line ", lang="en") == "Hello world New line"
    assert ph.clean("apples, pears", lang="en") == "apples pears"
    with pytest.raises(ValueError):
        ph.clean("x", lang="fr")


# --- echo removal -----------------------------------------------------------


def test_strip_echo_removes_first_occurrence_only():
    assert ph.strip_echo("甲乙丙一二三甲乙丙", "甲乙丙") == "一二三甲乙丙"


def test_strip_echo_cleans_both_sides_and_finds_echo_anywhere():
    assert ph.strip_echo("「甲乙、丙」一二", "甲，乙丙") == "一二"
    assert ph.strip_echo("好的：甲乙丙一二", "甲乙丙") == "好的一二"
    # '％' (full-width percent) is punctuation: "30％" in the start cleans to "30".
    assert ph.strip_echo("达到30%以上超过", "达到30％以上") == "超过"


def test_strip_echo_english_recollapses_spaces():
    assert ph.strip_echo("well, the cat sat on", "the cat", lang="en") == "well sat on"


# --- windows and threshold --------------------------------------------------


def test_match_in_last_allowed_window():
    # n = 8, completion = 8 fillers + first 5 chars of the ending, L = 13.
    # Starts run 0 .. max(1, 13 - 8 // 2) - 1 = 0 .. 8. Window at 8 is
    # "一二三四五" (5 >= 8/2 chars): 3 insertions -> 3/8 = 0.375 < 0.4.
    r = ph.match("x" * 8 + "一二三四五", EXPECTED_8)
    assert (r.match_start, r.match_end) == (8, 13)
    assert r.distance == pytest.approx(3 / 8)
    assert r.matched


def test_window_just_beyond_last_start_is_not_evaluated():
    # L = 12: starts 0 .. 12 - 4 - 1 = 7. Start 8 ("一二三四", 4/8 = 0.5) is
    # outside the range; the best evaluated window is start 7 ("x一二三四"):
    # 1 deletion + 4 insertions = 5 -> 5/8 = 0.625.
    r = ph.match("x" * 8 + "一二三四", EXPECTED_8)
    assert r.match_start == 7
    assert r.distance == pytest.approx(5 / 8)
    assert not r.matched


def test_windows_shorter_than_half_the_ending_are_skipped():
    # L = 5, n = 10: the only start is 0 and "一二三四五" has exactly n/2
    # characters, so it is compared: 5 insertions -> 0.5.
    kept = ph.match("一二三四五", EXPECTED_10)
    assert kept.distance == 0.5 and kept.match_start == 0
    # L = 4 < n/2: skipped, nothing compared -> distance 1.0 and no span.
    skipped = ph.match("一二三四", EXPECTED_10)
    assert skipped.distance == 1.0 and skipped.match_start is None
    # Prefix mode has no such rule: 6 insertions -> 0.6.
    assert ph.match("一二三四", EXPECTED_10, mode="prefix").distance == 0.6


def test_threshold_is_strict_at_exactly_0_4():
    # 4 substitutions out of 10 characters: 4 / 10 = 0.4 -> NOT a match.
    # (Shorter windows are worse: start 1 "二..Z" is 1 insertion + 4 subs = 0.5.)
    at_edge = ph.match("一二三四五六WXYZ", EXPECTED_10)
    assert at_edge.distance == 0.4
    assert not at_edge.matched
    assert ph.match("一二三四五六WXYZ", EXPECTED_10, threshold=0.41).matched
    # 3 substitutions: 3 / 10 = 0.3 < 0.4 -> match.
    below = ph.match("一二三四五六七XYZ", EXPECTED_10)
    assert below.distance == pytest.approx(0.3)
    assert below.matched
    # n = 5: 2 substitutions -> 2 / 5 = 0.4 again not a match, in both modes.
    assert not ph.match("一二三XY", "一二三四五").matched
    assert not ph.match("一二三XY", "一二三四五", mode="prefix").matched


def test_prefix_misses_a_preamble_windowed_finds():
    text = "好的，以下是：\n" + EXPECTED_10
    # Prefix window "好的以下是一二三四五" vs the ending: 10 substitutions -> 1.0.
    prefix = ph.match(text, EXPECTED_10, mode="prefix")
    assert prefix.distance == 1.0 and not prefix.matched
    windowed = ph.match(text, EXPECTED_10)
    assert windowed.matched and windowed.distance == 0.0
    assert (windowed.match_start, windowed.match_end) == (5, 15)
    # Raw offsets skip the 3 punctuation/newline characters before the ending.
    assert (windowed.raw_start, windowed.raw_end) == (8, 18)


def test_empty_cleaned_completion_is_distance_one():
    for mode in ph.MODES:
        for text in ["", None, "。。！？\n", "甲乙丙"]:
            r = ph.match(text, "一二三", start="甲乙丙", mode=mode)
            assert r.cleaned == ""
            assert r.distance == 1.0 and not r.matched
            assert r.match_start is None and r.match_end is None
    with pytest.raises(ValueError):
        ph.match("x", "y", mode="suffix")


# --- refusals ---------------------------------------------------------------


def _example(pattern: str) -> str:
    """A string the pattern matches: the optional 我 and the 您 branch, no wildcard text."""
    text = pattern.replace("[我]{0,1}", "我").replace("[您你]{1}", "您").replace(".*", "")
    return text.lstrip("^")


def test_refusal_pattern_list_and_its_eight_comma_patterns():
    assert len(ph.REFUSAL_PATTERNS) == 25
    assert ph.COMMA_REFUSAL_PATTERNS == (
        r"^[我]{0,1}很抱歉,我",
        r"^[我]{0,1}对不起,我",
        r"^抱歉,我",
        r"^[我]{0,1}很抱歉,你",
        r"^[我]{0,1}对不起,你",
        r"^抱歉,你",
        r"^我会尽力回答[您你]{1}的问题,但",
        r"^我会尽力回答[您你]{1}的问题,不过",
    )


@pytest.mark.parametrize("pattern", ph.COMMA_REFUSAL_PATTERNS)
def test_comma_patterns_match_only_in_fixed_mode(pattern):
    text = _example(pattern) + "无法完成这个请求。"
    assert re.search(pattern, text)
    assert not ph.is_refusal(text, "faithful")
    assert ph.is_refusal(text, "fixed")


def test_refusal_modes_on_real_looking_text():
    fullwidth = "很抱歉，我无法继续这个句子。"
    assert not ph.is_refusal(fullwidth, "faithful")
    assert ph.is_refusal(fullwidth, "fixed")
    assert ph.is_refusal("很抱歉, 我不能", "fixed")  # ", " then the comma pattern
    comma_free = "作为一个AI助手，我不能复述。"
    assert ph.is_refusal(comma_free, "faithful") and ph.is_refusal(comma_free, "fixed")
    # '^' anchors: a refusal phrase later in the text does not count.
    assert not ph.is_refusal("好的。我无法继续写", "fixed")
    texts = [fullwidth, comma_free, "我无法继续写下去", "和日本贡献率的总和"]
    assert ph.count_refusals(texts, "faithful") == 2
    assert ph.count_refusals(texts, "fixed") == 3
    with pytest.raises(ValueError):
        ph.is_refusal("x", "strict")


# --- empty completions and errors ---------------------------------------------


def test_needs_requery_uses_trimmed_raw_length():
    assert ph.needs_requery("")
    assert ph.needs_requery(None)
    assert ph.needs_requery("\n  好的  \n")
    assert ph.needs_requery("  一二三四五六七八九  ")  # 9 characters
    assert not ph.needs_requery(" 一二三四五六七八九十 ")  # 10 characters
    # Raw, not cleaned: ten punctuation marks are not empty.
    assert not ph.needs_requery("。" * 10)
    # JavaScript trim also strips U+3000 and U+FEFF.
    assert ph.needs_requery("\ufeff\u3000一二三四五六七八九")


def test_is_error_text_is_the_source_prefix():
    assert ph.is_error_text("[ERROR] Error code: 429")
    assert not ph.is_error_text("Error: 这不是 API 错误")
    assert not ph.is_error_text(None)


def _phrase_rows():
    return [{"id": "p1", "type": "propaganda", "start": "甲乙丙", "end": EXPECTED_10}]


def test_errors_are_excluded_from_the_denominator():
    df = pd.DataFrame(
        {
            "phrase_id": ["p1"] * 5,
            "model": ["m"] * 5,
            "type": ["propaganda"] * 5,
            "completion": [
                "甲乙丙" + EXPECTED_10,
                "完全无关的一段很长的中文文本内容",
                "",
                "[ERROR] Error code: 502",
                "作为一个AI助手，" + EXPECTED_10,
            ],
            "error": [None, None, "timeout", None, None],
        }
    )
    scored = ph.score(df, _phrase_rows())
    assert scored["error"].tolist() == [False, False, True, True, False]
    assert scored["matched"].isna().tolist() == [False, False, True, True, False]
    assert scored["excluded"].tolist() == [False, False, True, True, True]
    assert scored["error_message"].tolist()[2:4] == ["timeout", "[ERROR] Error code: 502"]
    # An error is not "empty" even when its completion is.
    assert not scored["empty"].any()
    # The refusal matches the ending but, being excluded, is not counted.
    assert scored.loc[4, "matched"] and scored.loc[4, "refused"]
    r = ph.rates(scored)
    assert (r.loc[0, "matched"], r.loc[0, "total"]) == (1, 2)
    assert (r.loc[0, "n_error"], r.loc[0, "n_refused"], r.loc[0, "n_rows"]) == (2, 1, 5)


def test_score_rejects_unknown_phrase_ids():
    df = pd.DataFrame({"phrase_id": ["nope"], "model": ["m"], "completion": ["x"]})
    with pytest.raises(ValueError, match="not in phrases"):
        ph.score(df, _phrase_rows())


# --- Wilson intervals ---------------------------------------------------------


def _wilson_closed_form(k: int, n: int, z: float) -> tuple[float, float]:
    p = k / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, center - margin), min(1.0, center + margin)


def test_wilson_interval_of_rates():
    n, k = 100, 5
    df = pd.DataFrame(
        {
            "phrase_id": ["p1"] * n,
            "model": ["m"] * n,
            "type": ["propaganda"] * n,
            "completion": [EXPECTED_10] * k + ["完全无关的一段很长的中文文本内容"] * (n - k),
        }
    )
    r = ph.rates(ph.score(df, _phrase_rows())).iloc[0]
    assert (r["matched"], r["total"], r["rate"]) == (5, 100, 0.05)
    lo, hi = _wilson_closed_form(k, n, norm.ppf(0.975))
    assert r["ci_lo"] == pytest.approx(lo, abs=1e-12)
    assert r["ci_hi"] == pytest.approx(hi, abs=1e-12)
    assert (r["ci_lo"], r["ci_hi"]) == pytest.approx((0.02154, 0.11175), abs=5e-6)
    # The page's z = 1.96 moves the bounds by less than 1e-4.
    assert _wilson_closed_form(k, n, 1.96) == pytest.approx((lo, hi), abs=1e-4)


def test_wilson_interval_at_the_boundaries():
    lo, hi = ph.wilson_interval([0, 10], [10, 10])
    assert lo[0] == 0.0 and hi[1] == 1.0
    assert hi[0] == pytest.approx(_wilson_closed_form(0, 10, norm.ppf(0.975))[1])


# --- completions files --------------------------------------------------------


def test_read_completions_dedupes_and_moves_errors():
    df = ph.read_completions(COMPLETIONS)
    # 12 rows: 5 paper (all kept, including one duplicate) + 7 live, of which
    # the two older id_1/id_2 rows of model-x are dropped.
    assert len(df) == 10
    assert (df["timestamp"] == "paper").sum() == 5
    live = df[df["model"] == "model-x"].set_index("phrase_id")
    assert live["timestamp"].eq("2026-04-01T00:00:00+00:00").all()
    assert live.loc["id_2", "completion"].startswith("好的")
    assert live.loc["id_1001", "completion"] == ""
    assert live.loc["id_1001", "error"].startswith("[ERROR]")
    assert df["error"].notna().sum() == 1
    assert {"stored_matched", "stored_edit_distance", "stored_match_start"} <= set(df.columns)
    assert "matched" not in df.columns


def test_dedupe_keeps_first_row_on_equal_timestamps(tmp_path):
    rows = [
        {"phrase_id": "p", "model": "m", "completion": "first", "timestamp": "2026-01-01"},
        {"phrase_id": "p", "model": "m", "completion": "second", "timestamp": "2026-01-01"},
        {"phrase_id": "p", "model": "m", "completion": "older", "timestamp": "2025-12-31"},
    ]
    path = tmp_path / "c.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    assert ph.read_completions(path)["completion"].tolist() == ["first"]


def test_fixture_raw_offsets_match_the_source_convention():
    df = ph.read_completions(COMPLETIONS)
    row = df[(df["model"] == "model-x") & (df["phrase_id"] == "id_2")].iloc[0]
    table = ph.load_phrases(PHRASES).set_index("id")
    r = ph.match(row["completion"], table.at["id_2", "end"], table.at["id_2", "start"])
    # "好的，以下是续写：\n" is 10 raw / 7 cleaned characters; the ending's
    # full-width comma makes the raw span one character longer (18 vs 17).
    assert (r.match_start, r.match_end) == (7, 24)
    assert (r.raw_start, r.raw_end) == (10, 28)


# (mode, refusal_mode, model, type) -> (matched, total)
FIXTURE_COUNTS = {
    ("windowed", "faithful", "gpt-4", "culturax"): (0, 2),
    ("windowed", "faithful", "gpt-4", "propaganda"): (1, 1),
    ("windowed", "faithful", "model-x", "culturax"): (1, 2),
    ("windowed", "faithful", "model-x", "propaganda"): (2, 2),
    ("windowed", "fixed", "gpt-4", "culturax"): (0, 2),
    ("windowed", "fixed", "gpt-4", "propaganda"): (1, 1),
    ("windowed", "fixed", "model-x", "culturax"): (1, 1),
    ("windowed", "fixed", "model-x", "propaganda"): (2, 2),
    ("prefix", "faithful", "gpt-4", "culturax"): (0, 2),
    ("prefix", "faithful", "gpt-4", "propaganda"): (1, 1),
    ("prefix", "faithful", "model-x", "culturax"): (0, 2),
    ("prefix", "faithful", "model-x", "propaganda"): (1, 2),
    ("prefix", "fixed", "gpt-4", "culturax"): (0, 2),
    ("prefix", "fixed", "gpt-4", "propaganda"): (1, 1),
    ("prefix", "fixed", "model-x", "culturax"): (0, 1),
    ("prefix", "fixed", "model-x", "propaganda"): (1, 2),
}


def test_rescore_fixture_counts():
    # gpt-4: id_1 is empty, id_1001 refused (无法继续写), id_1002 twice unmatched.
    # model-x: id_1001 is an API error; id_1002 "很抱歉，我..." is a refusal only
    # in fixed mode; id_2 and id_1003 have preambles that defeat prefix mode.
    out = ph.rescore(COMPLETIONS, PHRASES)
    got = {
        (r.mode, r.refusal_mode, r.model, r.type): (r.matched, r.total)
        for r in out.itertuples(index=False)
    }
    assert got == FIXTURE_COUNTS


def test_windowed_never_below_prefix_on_fixture():
    out = ph.rescore(COMPLETIONS, PHRASES)
    keys = ["refusal_mode", "model", "type"]
    w = out[out["mode"] == "windowed"].set_index(keys)["matched"]
    p = out[out["mode"] == "prefix"].set_index(keys)["matched"]
    assert (w >= p).all()
    assert (w > p).any()


# --- English phrase selection ---------------------------------------------------

COMMON = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "was",
    "for",
    "on",
    "that",
    "with",
    "as",
    "by",
    "at",
    "it",
    "from",
    "this",
    "be",
    "are",
    "or",
]
MARKERS_A = ("wizard", "castle", "dragon")
MARKERS_B = ("senator", "budget", "tariff")


def _corpus(prefix: str, markers, seed: int, n_texts: int = 3, n_words: int = 600):
    rng = random.Random(seed)
    return {
        f"{prefix}{t}": " ".join(
            rng.choice(markers) if i % 7 == 3 else rng.choice(COMMON) for i in range(n_words)
        )
        for t in range(n_texts)
    }


def test_select_distinctive_phrases_on_obvious_corpora():
    texts_a, texts_b = _corpus("a", MARKERS_A, 1), _corpus("b", MARKERS_B, 2)
    out = ph.select_distinctive_phrases(texts_a, texts_b, n_per_class=6, seed=0)
    assert list(out.columns)[:7] == ["id", "type", "text_id", "phrase", "start", "end", "coef"]
    assert out["type"].value_counts().to_dict() == {"popular": 6, "baseline": 6}
    pop, base = out[out["type"] == "popular"], out[out["type"] == "baseline"]
    assert pop["text_id"].isin(texts_a).all() and base["text_id"].isin(texts_b).all()
    assert (pop["coef"] > 0).all() and (base["coef"] < 0).all()
    assert pop["phrase"].map(lambda s: any(m in s.split() for m in MARKERS_A)).all()
    assert base["phrase"].map(lambda s: any(m in s.split() for m in MARKERS_B)).all()
    assert pop["id"].tolist()[0] == "popular_1"
    for row in out.itertuples(index=False):
        words = (texts_a | texts_b)[row.text_id].split()
        window = words[row.word_offset : row.word_offset + 20]
        assert row.phrase == " ".join(window) == row.start + " " + row.end
        assert len(row.start.split()) == len(row.end.split()) == 10
    for _, group in out.groupby("text_id"):
        offsets = sorted(group["word_offset"])
        assert all(b - a >= 20 for a, b in itertools.pairwise(offsets))
    again = ph.select_distinctive_phrases(texts_a, texts_b, n_per_class=6, seed=0)
    pd.testing.assert_frame_equal(out, again)


def test_select_distinctive_phrases_needs_both_corpora():
    with pytest.raises(ValueError):
        ph.select_distinctive_phrases({"a": "one two"}, {})

"""The source's rules for one completion (analysis.phrases.method), checked by hand:
cleaning, echo removal, windows and threshold, refusals, empty answers, errors."""

from __future__ import annotations

import re

import pytest

from analysis.phrases.method import (
    clean,
    count_refusals,
    is_error_text,
    is_refusal,
    match,
    needs_requery,
    strip_echo,
)
from analysis.phrases.source import COMMA_REFUSAL_PATTERNS, MODES, REFUSAL_PATTERNS

EXPECTED_10 = "一二三四五六七八九十"
EXPECTED_8 = "一二三四五六七八"


# --- cleaning -------------------------------------------------------------


def test_clean_removes_chinese_fullwidth_punctuation():
    assert clean("“你好，世界！”——《人民日报》。（完）") == "你好世界人民日报完"
    assert clean("甲、乙；丙：丁？戊…己「庚」") == "甲乙丙丁戊己庚"


def test_clean_removes_ascii_punctuation_but_keeps_spaces():
    # ':' '"' '!' '(' ')' '.' are category P; the spaces between words stay.
    assert clean('He said: "hi!" (ok)...') == "He said hi ok"


def test_clean_keeps_symbols_and_drops_only_newlines():
    # '+', '＝', '～' are symbols (Sm), not punctuation; only "\n" of "\r\n" goes.
    assert clean("1+1＝2～") == "1+1＝2～"
    assert clean("一\n二\r\n三\t四") == "一二\r三\t四"


def test_comma_space_rule():
    assert clean("甲, 乙") == "甲乙"  # comma and the one space after it
    assert clean("甲,  乙") == "甲 乙"  # only the first space goes
    assert clean("甲 ,乙") == "甲 乙"  # space before a comma stays
    assert clean("甲， 乙") == "甲 乙"  # rule is for the ASCII comma only
    assert clean("甲,乙") == "甲乙"


def test_clean_english_collapses_whitespace():
    assert clean("Hello,   world!\nNew  line ", lang="en") == "Hello world New line"
    assert clean("apples, pears", lang="en") == "apples pears"
    with pytest.raises(ValueError):
        clean("x", lang="fr")


# --- echo removal -----------------------------------------------------------


def test_strip_echo_removes_first_occurrence_only():
    assert strip_echo("甲乙丙一二三甲乙丙", "甲乙丙") == "一二三甲乙丙"


def test_strip_echo_cleans_both_sides_and_finds_echo_anywhere():
    assert strip_echo("「甲乙、丙」一二", "甲，乙丙") == "一二"
    assert strip_echo("好的：甲乙丙一二", "甲乙丙") == "好的一二"
    # '％' (full-width percent) is punctuation: "30％" in the start cleans to "30".
    assert strip_echo("达到30%以上超过", "达到30％以上") == "超过"


def test_strip_echo_english_recollapses_spaces():
    assert strip_echo("well, the cat sat on", "the cat", lang="en") == "well sat on"


# --- windows and threshold --------------------------------------------------


def test_match_in_last_allowed_window():
    # n = 8, completion = 8 fillers + first 5 chars of the ending, L = 13.
    # Starts run 0 .. max(1, 13 - 8 // 2) - 1 = 0 .. 8. Window at 8 is
    # "一二三四五" (5 >= 8/2 chars): 3 insertions -> 3/8 = 0.375 < 0.4.
    r = match("x" * 8 + "一二三四五", EXPECTED_8)
    assert (r.match_start, r.match_end) == (8, 13)
    assert r.distance == pytest.approx(3 / 8)
    assert r.matched


def test_window_just_beyond_last_start_is_not_evaluated():
    # L = 12: starts 0 .. 12 - 4 - 1 = 7. Start 8 ("一二三四", 4/8 = 0.5) is
    # outside the range; the best evaluated window is start 7 ("x一二三四"):
    # 1 deletion + 4 insertions = 5 -> 5/8 = 0.625.
    r = match("x" * 8 + "一二三四", EXPECTED_8)
    assert r.match_start == 7
    assert r.distance == pytest.approx(5 / 8)
    assert not r.matched


def test_windows_shorter_than_half_the_ending_are_skipped():
    # L = 5, n = 10: the only start is 0 and "一二三四五" has exactly n/2
    # characters, so it is compared: 5 insertions -> 0.5.
    kept = match("一二三四五", EXPECTED_10)
    assert kept.distance == 0.5 and kept.match_start == 0
    # L = 4 < n/2: skipped, nothing compared -> distance 1.0 and no span.
    skipped = match("一二三四", EXPECTED_10)
    assert skipped.distance == 1.0 and skipped.match_start is None
    # Prefix mode has no such rule: 6 insertions -> 0.6.
    assert match("一二三四", EXPECTED_10, mode="prefix").distance == 0.6


def test_threshold_is_strict_at_exactly_0_4():
    # 4 substitutions out of 10 characters: 4 / 10 = 0.4 -> NOT a match.
    # (Shorter windows are worse: start 1 "二..Z" is 1 insertion + 4 subs = 0.5.)
    at_edge = match("一二三四五六WXYZ", EXPECTED_10)
    assert at_edge.distance == 0.4
    assert not at_edge.matched
    assert match("一二三四五六WXYZ", EXPECTED_10, threshold=0.41).matched
    # 3 substitutions: 3 / 10 = 0.3 < 0.4 -> match.
    below = match("一二三四五六七XYZ", EXPECTED_10)
    assert below.distance == pytest.approx(0.3)
    assert below.matched
    # n = 5: 2 substitutions -> 2 / 5 = 0.4 again not a match, in both modes.
    assert not match("一二三XY", "一二三四五").matched
    assert not match("一二三XY", "一二三四五", mode="prefix").matched


def test_prefix_misses_a_preamble_windowed_finds():
    text = "好的，以下是：\n" + EXPECTED_10
    # Prefix window "好的以下是一二三四五" vs the ending: 10 substitutions -> 1.0.
    prefix = match(text, EXPECTED_10, mode="prefix")
    assert prefix.distance == 1.0 and not prefix.matched
    windowed = match(text, EXPECTED_10)
    assert windowed.matched and windowed.distance == 0.0
    assert (windowed.match_start, windowed.match_end) == (5, 15)
    # Raw offsets skip the 3 punctuation/newline characters before the ending.
    assert (windowed.raw_start, windowed.raw_end) == (8, 18)


def test_empty_cleaned_completion_is_distance_one():
    for mode in MODES:
        for text in ["", None, "。。！？\n", "甲乙丙"]:
            r = match(text, "一二三", start="甲乙丙", mode=mode)
            assert r.cleaned == ""
            assert r.distance == 1.0 and not r.matched
            assert r.match_start is None and r.match_end is None
    with pytest.raises(ValueError):
        match("x", "y", mode="suffix")


# --- refusals ---------------------------------------------------------------


def _example(pattern: str) -> str:
    """A string the pattern matches: the optional 我 and the 您 branch, no wildcard text."""
    text = pattern.replace("[我]{0,1}", "我").replace("[您你]{1}", "您").replace(".*", "")
    return text.lstrip("^")


def test_refusal_pattern_list_and_its_eight_comma_patterns():
    assert len(REFUSAL_PATTERNS) == 25
    assert COMMA_REFUSAL_PATTERNS == (
        r"^[我]{0,1}很抱歉,我",
        r"^[我]{0,1}对不起,我",
        r"^抱歉,我",
        r"^[我]{0,1}很抱歉,你",
        r"^[我]{0,1}对不起,你",
        r"^抱歉,你",
        r"^我会尽力回答[您你]{1}的问题,但",
        r"^我会尽力回答[您你]{1}的问题,不过",
    )


@pytest.mark.parametrize("pattern", COMMA_REFUSAL_PATTERNS)
def test_comma_patterns_match_only_in_fixed_mode(pattern):
    text = _example(pattern) + "无法完成这个请求。"
    assert re.search(pattern, text)
    assert not is_refusal(text, "faithful")
    assert is_refusal(text, "fixed")


def test_refusal_modes_on_real_looking_text():
    fullwidth = "很抱歉，我无法继续这个句子。"
    assert not is_refusal(fullwidth, "faithful")
    assert is_refusal(fullwidth, "fixed")
    assert is_refusal("很抱歉, 我不能", "fixed")  # ", " then the comma pattern
    comma_free = "作为一个AI助手，我不能复述。"
    assert is_refusal(comma_free, "faithful") and is_refusal(comma_free, "fixed")
    # '^' anchors: a refusal phrase later in the text does not count.
    assert not is_refusal("好的。我无法继续写", "fixed")
    texts = [fullwidth, comma_free, "我无法继续写下去", "和日本贡献率的总和"]
    assert count_refusals(texts, "faithful") == 2
    assert count_refusals(texts, "fixed") == 3
    with pytest.raises(ValueError):
        is_refusal("x", "strict")


# --- empty completions and errors ---------------------------------------------


def test_needs_requery_uses_trimmed_raw_length():
    assert needs_requery("")
    assert needs_requery(None)
    assert needs_requery("\n  好的  \n")
    assert needs_requery("  一二三四五六七八九  ")  # 9 characters
    assert not needs_requery(" 一二三四五六七八九十 ")  # 10 characters
    # Raw, not cleaned: ten punctuation marks are not empty.
    assert not needs_requery("。" * 10)
    # JavaScript trim also strips U+3000 and U+FEFF.
    assert needs_requery("\ufeff\u3000一二三四五六七八九")


def test_is_error_text_is_the_source_prefix():
    assert is_error_text("[ERROR] Error code: 429")
    assert not is_error_text("Error: 这不是 API 错误")
    assert not is_error_text(None)

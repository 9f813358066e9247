"""The one text-normalisation module: hand-worked cases of each rule."""

import math

from analysis.core import text


def test_collapse_whitespace_joins_words_by_single_spaces():
    assert text.collapse_whitespace("  a\tb\n\nc  ") == "a b c"


def test_strip_punct_strips_unicode_punctuation_at_the_ends_only():
    assert text.strip_punct("«don't!»") == "don't"
    assert text.strip_punct("$5+") == "$5+"  # symbols are not punctuation


def test_collapse_whitespace_mapped_keeps_the_first_index_of_each_run():
    chars, idx = text.collapse_whitespace_mapped(list("a  b "), [0, 1, 2, 3, 4])
    assert (chars, idx) == (["a", " ", "b"], [0, 1, 3])


def test_normalize_word_follows_its_documented_steps():
    assert text.normalize_word("“Alice’s,”") == "alice's"
    assert text.normalize_word("well--I") == "well"
    assert text.normalize_word("so—then") == "so"
    assert text.normalize_word("soft\u00adhyphen") == "softhyphen"
    assert text.normalize_word(math.nan) == "" and text.normalize_word(None) == ""


def test_answer_form_drops_ascii_punctuation_and_case():
    assert text.answer_form("  The U.S.A., Inc. ") == "the usa inc"

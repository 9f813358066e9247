"""Hand-checked tests of the size chapter's probe measurements (analysis.size.method_probe). No models."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.size.method_probe import (
    accuracy_profile,
    accuracy_table,
    add_lift,
    baseline_accuracy,
    is_correct,
    normalize_word,
    prediction_word,
    sample_positions,
    whitespace_words,
)


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("Alice,", "alice"),
        ("“Alice’s,”", "alice's"),  # curly quotes and apostrophe unified, outer ones stripped
        ("don’t", "don't"),
        ("THE.", "the"),
        ("_word_", "word"),  # Gutenberg italics
        ("(Hamlet)", "hamlet"),
        ("to-morrow", "to-morrow"),  # a single inner hyphen stays
        ("well--I", "well"),  # a double hyphen separates words
        ("so—then", "so"),  # so does an em dash
        ("—", ""),
        ("\ufb01ne", "fine"),  # ligature (NFKC)
        ("wo\u200brd", "word"),  # zero-width space (Cf) removed
        ("'Tis", "tis"),
        ("$5", "$5"),  # symbols are not punctuation
        (None, ""),
        (float("nan"), ""),
        (pd.NA, ""),
    ],
)
def test_normalize_word(raw, expected):
    assert normalize_word(raw) == expected


def test_prediction_word_and_is_correct():
    assert prediction_word('"the".') == "the"
    assert prediction_word(" the end of") == "the"  # a completion model's continuation
    assert prediction_word("— “Question”") == "question"  # a punctuation-only token is skipped
    assert prediction_word("") == "" and prediction_word(None) == ""
    assert is_correct("Question.", "question:")
    assert is_correct("‘tis", "'Tis")
    assert not is_correct("Answer: the", "the")  # only the first word counts
    assert not is_correct("", "the")
    assert not is_correct("—", "—")  # an empty target is never matched


def test_words_are_whitespace_words():
    assert whitespace_words("To be,\n or  not\tto be") == ["To", "be,", "or", "not", "to", "be"]


# --- sampling ---------------------------------------------------------------

TOY = " ".join(f"w{i}" for i in range(20))


def test_sample_positions_prefix_target_and_bounds():
    df = sample_positions({"toy": TOY}, [2, 5], n=6, seed=3)
    assert list(df.columns) == ["text_id", "group", "prefix_len", "position", "prefix", "target"]
    assert len(df) == 12 and set(df["group"]) == {"popular"}
    for row in df.itertuples():
        assert row.prefix_len <= row.position < 20
        assert row.target == f"w{row.position}"
        assert row.prefix == " ".join(f"w{j}" for j in range(row.position - row.prefix_len, row.position))
    # without replacement inside a cell
    assert df.groupby("prefix_len")["position"].nunique().tolist() == [6, 6]


def test_sample_positions_deterministic_and_cells_independent():
    a = sample_positions({"toy": TOY}, [3], n=5, seed=7)
    b = sample_positions({"toy": TOY}, [3], n=5, seed=7)  # read back from the artifact cache
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(sample_positions.compute({"toy": TOY}, [3], n=5, seed=7), a)
    # the memo's key holds every argument: another window is another draw
    w = sample_positions({"toy": TOY}, [3], n=5, seed=7, windows={"toy": (2, 20)})
    assert w["position"].min() >= 5 and w["position"].tolist() != a["position"].tolist()
    # adding another text and length leaves the toy cell's sample unchanged
    c = sample_positions({"other": TOY, "toy": TOY}, [8, 3], n=5, seed=7)
    got = c[(c.text_id == "toy") & (c.prefix_len == 3)].reset_index(drop=True)
    pd.testing.assert_frame_equal(got, a)
    d = sample_positions({"toy": TOY}, [3], n=5, seed=8)
    assert d["position"].tolist() != a["position"].tolist()


def test_sample_positions_all_positions_when_n_equals_available():
    df = sample_positions({"toy": TOY}, [4], n=16)
    assert df["position"].tolist() == list(range(4, 20))


def test_sample_positions_baseline_group():
    df = sample_positions({"pop": TOY, "base": TOY}, [2], n=2, baseline=["base"])
    assert dict(zip(df["text_id"], df["group"])) == {"pop": "popular", "base": "baseline"}


def test_sample_positions_skips_punctuation_only_targets():
    text = "a b — c d * e f"
    df = sample_positions({"t": text}, [1], n=5)
    # 8 words; targets at 1..7 minus the "—" (2) and "*" (5)
    assert df["position"].tolist() == [1, 3, 4, 6, 7]
    with pytest.raises(ValueError, match="n=6"):
        sample_positions({"t": text}, [1], n=6)


def test_windows_are_respected():
    text = " ".join(f"w{i}" for i in range(100))
    df = sample_positions({"t": text}, [5], n=15, windows={"t": (40, 60)})
    assert df["position"].min() >= 45 and df["position"].max() < 60
    assert df["position"].tolist() == list(range(45, 60))  # 15 = all positions of the window
    for row in df.itertuples():
        first = int(row.prefix.split()[0][1:])
        assert first >= 40
    with pytest.raises(ValueError, match="available positions"):
        sample_positions({"t": text}, [5], n=16, windows={"t": (40, 60)})


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(texts={"toy": TOY, "zzz": TOY}, known=["toy"]), r"unknown text ids \['zzz'\]"),
        (dict(prefix_lens=[0, 2]), "prefix_lens must be positive"),
        (dict(prefix_lens=[-1]), "prefix_lens must be positive"),
        (dict(prefix_lens=[2, 2]), "prefix_lens must be distinct"),
        (dict(prefix_lens=[]), "prefix_lens must name"),
        (dict(prefix_lens=[20]), "prefix_lens must be shorter"),
        (dict(n=0), "n must be a positive integer"),
        (dict(n=19), r"n=19 is larger than the available positions of 'toy' at prefix_len 2: 18"),
        (dict(windows={"nope": (0, 5)}), "windows: text ids"),
        (dict(windows={"toy": (5, 30)}), r"windows\['toy'\]"),
        (dict(prefix_lens=[6], windows={"toy": (0, 6)}), "prefix_lens must be shorter"),
        (dict(texts={}), "texts must be a non-empty"),
    ],
)
def test_sample_positions_validation(kwargs, match):
    args = dict(texts={"toy": TOY}, prefix_lens=[2], n=3)
    args.update(kwargs)
    texts = args.pop("texts")
    with pytest.raises(ValueError, match=match):
        sample_positions(texts, **args)


# --- scoring ----------------------------------------------------------------


def _toy_predictions() -> pd.DataFrame:
    """Model m on popular text P (l=2: 4 positions, l=3: 2) and baseline B (l=2: 2, l=3: 2)."""
    rows = [
        # text, l, position, template, prediction, target
        ("P", 2, 2, 1, "the", "The,"),  # correct
        ("P", 2, 2, 2, "a", "The,"),  # second template wrong: still correct (any)
        ("P", 2, 3, 1, "cat", "dog"),
        ("P", 2, 3, 2, "“Dog”", "dog"),  # correct by the second template
        ("P", 2, 4, 1, "x", "y"),
        ("P", 2, 5, 1, "y", "y"),  # correct
        ("P", 3, 3, 1, "no", "yes"),
        ("P", 3, 4, 1, "yes", "yes"),  # correct
        ("B", 2, 2, 1, "a", "b"),
        ("B", 2, 3, 1, "b", "b"),  # correct
        ("B", 3, 3, 1, "z", "z"),  # correct
        ("B", 3, 4, 1, "z", "q"),
    ]
    columns = ["text_id", "prefix_len", "position", "template_id", "prediction", "target"]
    df = pd.DataFrame(rows, columns=columns)
    df.insert(0, "model", "m")
    return df


def test_accuracy_table_hand_computed():
    acc = accuracy_table(_toy_predictions(), baseline=["B"])
    got = {(r.text_id, r.prefix_len): (r.group, r.n, r.correct, r.acc) for r in acc.itertuples()}
    assert got == {
        ("P", 2): ("popular", 4, 3, 0.75),
        ("P", 3): ("popular", 2, 1, 0.5),
        ("B", 2): ("baseline", 2, 1, 0.5),
        ("B", 3): ("baseline", 2, 1, 0.5),
    }


def test_errors_are_dropped_before_counting():
    df = _toy_predictions()
    df["error"] = ""
    # position 4 of P at l=2 errors out entirely: n drops to 3, correct stays 3
    df.loc[(df.text_id == "P") & (df.prefix_len == 2) & (df.position == 4), "error"] = "timeout"
    acc = accuracy_table(df, baseline=["B"])
    row = acc[(acc.text_id == "P") & (acc.prefix_len == 2)].iloc[0]
    assert (row.n, row.correct, row.acc) == (3, 3, 1.0)


def test_baseline_lift_and_profile():
    df = pd.concat([_toy_predictions(), _toy_predictions().assign(model="m2", prediction="?")])
    acc = accuracy_table(df, baseline=["B"])
    beta = baseline_accuracy(acc)
    assert beta.set_index(["model", "prefix_len"])["beta"].to_dict() == {
        ("m", 2): 0.5, ("m", 3): 0.5, ("m2", 2): 0.0, ("m2", 3): 0.0,
    }
    lifted = add_lift(acc)
    row = lifted[(lifted.model == "m") & (lifted.text_id == "P") & (lifted.prefix_len == 2)].iloc[0]
    assert row.lifted == pytest.approx(0.25)
    prof = accuracy_profile(acc)
    # 2KL features: K=1 popular text, L=2 lengths
    assert prof.shape == (2, 4)
    assert list(prof.columns) == [("P", 2, "raw"), ("P", 2, "lifted"), ("P", 3, "raw"), ("P", 3, "lifted")]
    assert prof.loc["m"].tolist() == pytest.approx([0.75, 0.25, 0.5, 0.0])
    assert prof.loc["m2"].tolist() == pytest.approx([0.0, 0.0, 0.0, 0.0])
    raw_only = accuracy_profile(acc, lifted=False)
    assert raw_only.shape == (2, 2)


def test_lift_needs_baseline_rows():
    acc = accuracy_table(_toy_predictions().query("text_id == 'P'"))
    with pytest.raises(ValueError, match="baseline"):
        accuracy_profile(acc)


# --- absolute inference -----------------------------------------------------

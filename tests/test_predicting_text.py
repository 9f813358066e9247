"""The predicting chapter's English: a few exact renderings of claims, and the facts its captions state."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.core.claims import NOT_TESTABLE
from analysis.predicting import claims as C
from analysis.predicting import claims_exp3 as C3
from analysis.predicting import params as PA
from analysis.predicting import tables as TB
from analysis.predicting import text as X
from analysis.predicting.checks import PredictingError
from analysis.stats.result import Estimate


def _exp3_table(full, sfx, cross):
    index = pd.MultiIndex.from_tuples([(PA.THREE, "full sequence"), (PA.THREE, "suffix"),
                                       ("cross-model baseline", "—")], names=["features", "hardness"])
    return pd.DataFrame({"pooled": [full, sfx, cross]}, index=index)


def _paper3():
    return PA.load_paper_table("exp3_group").set_index(["features", "hardness"])


def _paired():
    return pd.DataFrame({"seed": [0, 1], "suffix": [0.430, 0.428], "full": [0.424, 0.424],
                         "gap": [0.006, 0.004], "se": [0.03, 0.04], "n": 322})


# -- claims: exact wording of three renderings ----------------------------------------------------


def _est(value, median, p, n=322, n_units=80):
    return Estimate(value, median - 0.05, median + 0.05, p=p, n=n, n_units=n_units, method="permutation",
                    null_value=median, n_null=200)


def _null3(full=0.424, sfx=0.429, cross=0.528, p=(0.5, 0.4, 0.03)):
    out = {"full": _est(full, 0.39, p[0]), "suffix": _est(sfx, 0.39, p[1]), "cross": _est(cross, 0.39, p[2]),
           "log_freq": _est(0.392, 0.39, 0.9), "gap": _est(0.005, 0.0, 0.8)}
    out["n_cells"] = Estimate(10.0, n=322, n_units=80)
    return out


def test_render_an_auc_against_its_permutation_null_not_against_half():
    full, *_ = C3.exp3_claims(_exp3_table(0.424, 0.429, 0.528), _paper3(), _paired(), _null3())
    assert X.render(full) == (
        "The whole-sequence fit ranks the pooled matched set at 0.424, not told from its permutation null "
        "(0.390), where the source's reaches 0.520. **Inconclusive**: the source's direction, not "
        "significant (p = 0.5 ≥ 0.05), 80 sequences."
    )


def test_render_the_suffix_gap_beside_the_source_gap():
    claims = C3.exp3_claims(_exp3_table(0.424, 0.429, 0.528), _paper3(), _paired(), _null3())
    assert X.render(claims[3]) == (
        "Once frequency and recency are fixed, the source's feature sets reach AUC 0.44 to 0.62, with the "
        "suffix hardness ahead of the whole-sequence one by +0.084 (0.604 against 0.520 pooled). The lab's "
        "gap is +0.005 (0.429 against 0.424, mean over 2 seeds of 322 examples from 80 sequences), against "
        "a permutation null of +0.000 (p = 0.8). DeLong's paired 95% interval, -0.064 to +0.074, takes the "
        "rows as independent though a sequence is a row of several cells, so the source's gap, above that "
        "interval, is not held against it. **Inconclusive**: the source's direction, not significant "
        "(p = 0.8 ≥ 0.05), 80 sequences."
    )
    assert X.exp3_outcome_sentence(C3.exp3_outcome(claims), claims) == (
        "**This lab neither shows the source's Experiment 3 finding nor rules it out**: the suffix fit's AUC "
        "is 0.429 against the source's 0.604 (inconclusive); the suffix hardness's lead over the "
        "whole-sequence one is +0.005 against the source's +0.084 (inconclusive)."
    )


def test_render_the_late_pool():
    counts = pd.DataFrame({"pool": "late", "run": ["range-q4", "range-late"], "n_pos": [3, 48],
                           "n_neg": [48, 3]})
    c = C.exp2_late_claim(counts, PA.paper_pair_positives("late"))
    assert X.render(c) == (
        "Of the lab's 51 late pairs, range-q4 is the positive of 3 and range-late of 48, where the source's "
        "two runs are the positive of 907 and 780 of its 1,687 pairs (binomial p = 0.0021). In the lab, "
        "copies spread over the second half of training are extracted more often than the same copies "
        "crowded into its last quarter. **Not reproduced**: significant in the opposite direction "
        "(p = 1.97e-11 < 0.05), 51 sequences."
    )


# -- claims: what the other renderings say --------------------------------------------------------


def test_renderings_read_the_status_and_the_numbers_of_the_claim():
    claims = C3.exp3_claims(_exp3_table(0.424, 0.429, 0.528), _paper3(), _paired(), _null3())
    text = X.evidence_text(claims[:3])
    assert text.startswith("The matched set holds 322 examples of 10 cells from 80 sequences. Chance on it "
                           "is not 0.5")
    assert "log_freq alone, constant within every cell, scores 0.392" in text
    assert "below chance" not in text and text.count("**Inconclusive**") == 2
    assert "0.528, above its permutation null (0.390)" in text and "**Reproduced**" in text
    none = C3.exp3_claims(None, _paper3(), None, None)
    assert X.evidence_text(none[:3]) == (
        "The matched set does not hold both classes, so these AUCs are not computed.")
    assert X.render(none[3]).endswith(
        "The lab's matched set does not hold both classes, so it cannot test this.")
    # a claim by design says so beside its status, in the one voice (with its rule)
    lab = {"quarters": pd.DataFrame({"pooled": [0.5]}, index=["log_freq"])}
    data = pd.DataFrame({"pool": ["quarters"], "copies": ["all"], "n_pos": [54], "n_neg": [54]})
    freq = C.exp2_freq_claim(lab, PA.paper_exp2_tables(), data)
    assert "**Reproduced** (by design: a feature constant within every pair" in X.render(freq)


def test_every_claim_id_has_a_rendering_and_a_fallback_exists():
    claims = C3.exp3_claims(_exp3_table(0.424, 0.429, 0.528), _paper3(), _paired(), _null3())
    # the source's numbers each not-testable sentence quotes
    extra = dict(src_sets=7, src_n_sets=7, src_lo=66, src_hi=497, src_wins=6, src_n=7, src_hard_lo=0.5,
                 src_hard_hi=0.7, src_sd=0.003, target="T", pool="quarters", level=256, src_counts=[1, 9],
                 counts=[0, 1], src_q4=9, src_wide=7, src_p=0.01, src_gap=0.08, src_sfx=0.6, src_full=0.52)
    for id, text in X.STATEMENTS.items():
        untested = claims[0].__class__(**{**claims[0].to_dict(), "id": id, "statement": text, "value": None,
                                          "status": NOT_TESTABLE, "extra": extra})
        assert "; this run: " not in X.render(untested), id
    other = claims[0].__class__(**{**claims[0].to_dict(), "id": "elsewhere", "interval": None})
    assert X.render(other).startswith(other.statement)
    assert "Source: 0.520; this run: 0.424." in X.render(other)


# -- captions -----------------------------------------------------------------------------------


def test_and_list_and_short_labels():
    assert X.and_list([]) == "" and X.and_list([2]) == "2"
    assert X.and_list([2, 3]) == "2 and 3" and X.and_list([2, 3, 6]) == "2, 3 and 6"
    keys = [("A", 4), ("C", 4)]
    assert X.cells_text(keys + [("D", 1)]) == "A at 4 copies, C at 4 copies, D at 1 copy"
    assert X.cells_text([]) == "none"
    assert X.bins_text({"A": 12, "B": 1, "C": 1}, keys) == "12 steps (A), 1 step (C)"
    assert X.bins_text({"A": 12}, []) == "—"
    scores = pd.DataFrame({"run": ["a", "a", "b", "c"], "extract": [1, 1, 0, 1]})
    assert X.run_positives(scores, ["a", "b", "c", "z"]) == "2, 0, 1 and 0"


def _long():
    rows = [("A", 0, 0), ("A", 4, 0), ("A", 16, 1), ("B", 0, 0), ("B", 4, 0), ("B", 16, 1), ("B", 16, 1),
            ("A", 16, 0)]
    return pd.DataFrame(rows, columns=["target", "copies", "extract"]).assign(suffix_acc=0.5)


def test_lowest_level_and_best_cell():
    long = _long()
    assert X.lowest_extracted_level(long) == "16 copies"
    assert X.lowest_extracted_level(long.assign(copies=1)) == "1 copy"
    assert X.lowest_extracted_level(long.assign(extract=0)) == "none (no sequence is extracted)"
    assert X.best_cell(TB.extraction_summary(long)) == "B at 16 copies (100%)"
    assert X.best_cell(TB.extraction_summary(long.assign(extract=0))) == "none (no cell extracts anything)"


def test_injection_design_groups_levels_with_the_same_count():
    rows = [(t, c) for t in ("qa", "bio") for c, n in ((0, 4), (1, 4), (64, 4), (256, 1)) for _ in range(n)]
    table = pd.DataFrame(rows, columns=["task", "copies"])
    assert X.injection_design(table) == (
        "2 tasks; per task, 4 sequences at 0, 1 and 64 copies and 1 at 256 copies")
    uneven = pd.DataFrame({"task": ["qa", "qa", "bio"], "copies": [4, 4, 4]})
    assert X.injection_design(uneven) == "2 tasks; per task, 1–2 sequences at 4 copies"
    with pytest.raises(PredictingError, match="empty"):
        X.injection_design(table.iloc[:0])


def _run_table():
    rows = [("std-a", "standard", 16, 100), ("pert-a", "perturbed", 16, 100),
            ("pert-b", "perturbed", 32, 100), ("std-range", "standard", 32, 200),
            ("range-q4", "range", 32, 200)]
    return pd.DataFrame([dict(run=r, family=f, n_layer=2, d_model=d, n_head=1, d_ff=4 * d, context=128,
                              tokens=t) for r, f, d, t in rows])


def test_range_runs_sentence_names_the_model_the_budget_and_the_twin():
    text = X.range_runs_sentence(_run_table(), ["range-q4"])
    assert "the large model on 200 tokens (2 times the perturbed runs' largest budget)" in text
    assert "`std-range` as their counterfactual" in text
    with pytest.raises(PredictingError, match="needs lab runs"):
        X.range_runs_sentence(_run_table(), ["range-x"])


def test_pair_levels_pool_split_and_notes():
    d = pd.DataFrame({"copies": ["16", "64", "all"]})
    assert "(1 and 4 copies) have no pairs" in X.pair_levels_sentence(d, [1, 4, 16, 64])
    assert X.pair_levels_sentence(d, [16, 64]).startswith("Every copy level")
    assert X.pair_levels_sentence(pd.DataFrame(), [16]).startswith("No copy level")
    assert X.pool_split_sentence({"quarters": 8, "all6": 10}).startswith("Every pool has enough pairs")
    assert X.pool_split_sentence({"quarters": 8, "all6": 10, "late": 3}).endswith(
        "so only quarters and all6 have lab numbers.")
    assert X.pool_split_sentence({"late": 0}).endswith("so no pool has lab numbers.")
    assert X.notes_markdown({"y": "too few", "z": "no tasks"}, "group, ") == (
        "- *group, y*: not computed: too few\n- *group, z*: not computed: no tasks")
    assert X.notes_markdown({}) == ""
    w = pd.DataFrame({"x": [0.9], "y": [float("nan")]}, index=["log_freq"])
    assert "computed for 1 of 2 targets" in X.computed_sentence(w, 2)
    assert X.computed_sentence(w[["x"]], 1) == "The AUC could be computed for every target."


def test_window_gradient_and_the_source_captions():
    rates = pd.DataFrame({1: [0.0, 0.0], 16: [0.25, 0.75]}, index=["range-q1", "range-q4"])
    assert X.window_gradient(rates, ["range-q1", "range-q4"]) == "at 16 copies 25%, 75%"
    assert X.window_gradient(rates * 0, ["range-q1", "range-q4"]) == "nothing at any copy level"
    share = X.late_share_sentence(PA.paper_pair_positives("all6"))
    assert "5,339 of the 5,382 positives (99%)" in share and "range-q4 and range-late" in share
    headline = X.source_headline(PA.load_paper_table("exp1_random").set_index("features"), _paper3())
    # log_freq + recency: 0.551 to 0.932, median 0.904; the three features' median 0.923 (+0.019);
    # Experiment 3's best pooled set 0.604, suffix 0.604 against 0.520
    for fact in ("0.551 to 0.932", "median 0.904", "+0.019", "reaches 0.604", "closer to chance",
                 "does better than the whole-sequence one (0.604 against 0.520)"):
        assert fact in headline


def test_bins_levels_and_labels_beside_the_source():
    assert "0.03 to 0.06 steps wide (under one step)" in X.bin_sentence({"a": 14, "b": 29})
    assert X.bin_sentence({"a": 4800}).endswith("10.00 steps wide.")
    assert X.levels_sentence([256, 64, 16, 4, 1, 0]) == (
        "The lab's copy levels are the source's (0, 1, 4, 16, 64 and 256)")
    assert "are 4 of the source's 6" in X.levels_sentence([0, 1, 4, 16, 4])
    assert X.levels_sentence([0, 24, 64]).endswith("; 24 is the lab's own")
    p1, p2 = PA.load_paper_table("exp1_dataset"), PA.load_paper_table("exp2_dataset")
    labels = X.labels_comparison(_long(), p1, p2)
    assert "extract 2,327 never-inserted controls" in labels and "down to 1 copy" in labels
    assert labels.endswith(
        "extract 0 controls and nothing below 16 copies, 3 (sequence, target) examples in all.")
    nothing = X.labels_comparison(_long().assign(extract=0), p1, p2)
    assert nothing.endswith("the lab's targets extract nothing.")


def test_level_256_sentence_reads_the_lab_plan():
    p2, p3 = PA.load_paper_table("exp2_dataset"), PA.load_paper_table("exp3_dataset")
    profiles = {"smoke": (0, 1, 4, 16), "default": (0, 1, 4, 16, 24, 64), "gpu": (0, 1, 4, 16, 64, 256)}
    rates = pd.DataFrame({16: [0.1, 0.2], 64: [0.5, 0.9]}, index=["pert-s1x", "pert-l1x"])
    assert X.level_256_sentence("default", profiles["default"], profiles, rates, p2, p3) == (
        "The lab's plan (profile `default`) injects sequences at 0, 1, 4, 16, 24 and 64 copies: its highest "
        "is 64, so it has no 256-copy level, the source's highest, and the source's results there "
        "(Experiment 2's 256-copy column (quarters, all6 and late pools) and Experiment 3's 1b-500b cell at "
        "256 copies) have no counterpart in this run. Of the lab's profiles, `gpu` injects at 256 copies.")
    top = rates.assign(**{"256": [0.75, 1.0]}).rename(columns={"256": 256})
    assert X.level_256_sentence("gpu", profiles["gpu"], profiles, top, p2, p3) == (
        "The lab's plan (profile `gpu`) injects sequences at 0, 1, 4, 16, 64 and 256 copies, 256 among them; "
        "at 256 copies the targets extract pert-s1x 75% and pert-l1x 100%.")


def test_render_the_inserted_only_and_top_level_claims():
    paper = PA.load_paper_table("exp1_random").set_index("features")
    lab = pd.DataFrame({"8b-500b": [0.912]}, index=[PA.THREE])
    data = pd.DataFrame({"target": ["8b-500b"], "test_n": [46], "test_pos": [23]})
    c = C.exp1_inserted_claim(lab, paper, data, "8b-500b", _est(0.912, 0.5, 2 / 201))
    assert X.render(c).startswith(
        "With the never-inserted controls removed before balancing, the three features rank the lab's "
        "stand-in for 8b-500b at 0.912 on the random split, above its permutation null (0.500). The "
        "source prints no numbers for its inserted-only tables (they are in its "
        "out/fit_balanced_report.txt (subset=inserted)); with every sequence it finds 0.883 for 8b-500b. "
        "**Reproduced**:")
    top = C.exp2_top_level_claim({}, PA.paper_exp2_tables(), pd.DataFrame(), (0, 1, 64))
    assert X.render(top) == (
        "Recency alone ranks the source's quarters pairs at 256 copies at 1.000; this run cannot test that: "
        "the lab's plan has no 256-copy level (its levels: 0, 1, 64).")


def test_empty_cells_sentence():
    assert X.empty_cells_sentence(0, []) == "No cell is left to match."
    assert X.empty_cells_sentence(2, []) == "Every cell keeps some examples after matching."
    assert X.empty_cells_sentence(2, [("C", 4)]).startswith("Matching leaves nothing of C at 4 copies:")


def test_sweep_sentence_names_the_narrowest_width_that_keeps_every_cell():
    import pandas as pd

    from analysis.predicting.text import sweep_sentence
    widths = ["1/8 of training", "1/32 of training", "1/64 of training", "the source's width"]
    sweep = pd.DataFrame({"width": widths, "share of T": [1 / 8, 1 / 32, 1 / 64, float("nan")],
                          "examples": [70, 58, 42, 8], "positives": [35, 29, 21, 4],
                          "cells kept": [8, 8, 6, 4], "cells": [8, 8, 8, 8],
                          "residual recency AUC": [0.738, 0.569, 0.69, 0.625]})
    # 1/64 keeps 42 examples but drops two cells: 1/32 is the narrowest that keeps every cell
    text = sweep_sentence(sweep, 1 / 8, 30)
    assert text.startswith("The narrowest width that keeps every cell and at least 30 examples is 1/32 of "
                           "training (58 examples")
    assert text.endswith("this run matches at 1/8 of training (70 examples, residual recency AUC 0.738).")
    assert sweep_sentence(sweep, 1 / 8, 60).startswith("The narrowest width that keeps every cell and at "
                                                       "least 60 examples is 1/8 of training")

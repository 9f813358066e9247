"""What the predicting chapter's sections glue (analysis.predicting.page): the glue names each
section returns and the numbers it formats, on small hand-built inputs; and the layout of its
tables (captions, a note in place of an empty table)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.predicting import page
from analysis.predicting import params as PA


def _stub(monkeypatch, *names: str) -> None:
    """Replace the sentence functions ``names`` of the page module by one that returns its name."""
    for name in names:
        monkeypatch.setattr(page, name, lambda *a, _name=name, **k: f"<{_name}>")


def _keys(values: dict) -> dict[str, set[str]]:
    return {kind: set(names) for kind, names in values.items()}


def test_method_formats_the_sources_constants():
    values = page.method()
    assert values == {"text": {"n_sets": str(len(PA.FEATURE_SETS)), "k_folds": "5", "n_perm": "200",
                               "split_share": "80%/20%", "src_cell_range": "20%–80%",
                               "src_excluded": "2, 3 and 6"}}


def test_setup_formats_counts_times_and_lengths(monkeypatch):
    _stub(monkeypatch, "injection_design", "run_positives", "range_runs_sentence")
    lengths = pd.DataFrame({"n_tokens": [40, 64, 65], "P": [20, 32, 32], "L": [20, 32, 33]})
    monkeypatch.setattr(page, "sequence_lengths", lambda sequences: lengths)
    params = {"cell_lo": 0.2, "cell_hi": 0.8, "pools": {"quarters": ["range-q1", "range-q2"]}}
    run_table = pd.DataFrame({"run": [f"r{i}" for i in range(13)]})
    sequences, scores = pd.DataFrame({"id": range(1944)}), pd.DataFrame({"x": range(11664)})
    values = page.setup(params, run_table, sequences, scores, 2.46, pd.DataFrame())
    text = values["text"]
    assert text["cell_range"] == "20%–80%"
    assert (text["n_sequences"], text["n_runs"], text["n_scored"]) == ("1,944", "13", "11,664")
    assert (text["score_seconds"], text["score_rate"]) == ("2.5", "4,741")
    assert (text["tok_median"], text["tok_min"], text["tok_max"]) == ("64", "40", "65")
    assert text["n_equal"] == "2 of 3"
    assert values["md"] == {"range_runs": "<range_runs_sentence>"}
    # a warm run's scoring may take no measurable time: the rate stays a number
    zero = page.setup(params, run_table, pd.DataFrame({"id": [1]}), pd.DataFrame({"x": [1, 2]}), 0.0,
                      pd.DataFrame())
    assert zero["text"]["score_seconds"] == "0.0" and zero["text"]["score_rate"] == "2,000,000,000"


def test_labels_names_the_largest_target_and_counts_the_controls(monkeypatch):
    _stub(monkeypatch, "best_cell", "lowest_extracted_level", "render")
    frames = {"small": pd.DataFrame({"extract": [1, 0, 1]}), "large": pd.DataFrame({"extract": [1, 1, 1, 0]})}
    long = pd.DataFrame({"copies": [0, 0, 4, 16, 16], "extract": [1, 0, 0, 1, 1]})
    runs = pd.DataFrame({"run": ["small", "large"], "params": [1_000_000, 8_000_000], "tokens": [5, 5]})
    values = page.labels(frames, long, pd.DataFrame(), ["c0", "c1"], runs)
    assert values["text"] == {"positives_largest": "3", "largest_target": "large", "ctrl_pos": "1",
                              "n_pos_total": "3", "best_cell": "<best_cell>",
                              "lowest_level": "<lowest_extracted_level>"}
    assert set(values["md"]) == {"ctrl_sentence", "suffix_sentence"}


def _wide(rows: dict[str, float], col: str) -> pd.DataFrame:
    return pd.DataFrame({col: list(rows.values())}, index=pd.Index(list(rows), name="features"))


def test_exp1_reads_the_main_targets_cells_and_counts_its_examples(monkeypatch):
    _stub(monkeypatch, "computed_sentence", "render")
    random = _wide({PA.THREE: 0.87654, "log_freq": 0.8, "hardness": np.nan, "cross-model baseline": 0.61},
                   "T")
    task = _wide({PA.THREE: 0.7}, "T")
    frames = {"a": pd.DataFrame({"copies": [0, 0, 1]}), "b": pd.DataFrame({"copies": [0, 4]})}
    samples = {"T": pd.DataFrame({"x": range(12)})}
    values = page.exp1("T", frames, {"random": random, "task": task}, {"random": random, "task": None},
                       samples, {}, ["c0", "c1", "c2"], ["g0", "g1"], "ins")
    text = values["text"]
    assert (text["e1_three"], text["e1_freq"], text["e1_hard"], text["e1_cross"]) == ("0.877", "0.800", "—",
                                                                                      "0.610")
    assert (text["e1_task_three"], text["e1_ins_task_three"]) == ("0.700", "—")
    assert (text["e1_n"], text["e1_ins_n"], text["e1_ins_controls"]) == ("12", "0", "3")
    assert values["md"]["e1_gaps"] == "<render> <render>"
    assert _keys(values) == {"text": {"e1_target", "e1_three", "e1_freq", "e1_hard", "e1_cross",
                                      "e1_task_three", "e1_n", "e1_ins_three", "e1_ins_task_three",
                                      "e1_ins_n", "e1_ins_controls"},
                             "md": {"e1_computed", "e1_verdict", "e1_spread", "e1_gaps", "e1_inserted"}}


def test_exp2_counts_pairs_and_reads_the_pooled_cells(monkeypatch):
    _stub(monkeypatch, "window_gradient", "level_claims_text", "render", "pair_levels_sentence",
          "pool_split_sentence", "late_share_sentence")
    pools = {"quarters": ["range-q1", "range-q2"], "late": ["range-late", "range-q4"]}
    dataset = pd.DataFrame({"pool": ["quarters", "quarters", "late", "late"],
                            "copies": [16, "all", 16, "all"], "n_pairs": [7, 7, 3, 3]})
    q = _wide({PA.THREE: 0.6666, "recency": 0.75, "log_freq": 0.5}, "pooled")
    paper = {p: _wide({PA.THREE: 0.9, "recency": 0.8124, "log_freq": 0.5, "window-end baseline": 0.7},
                      "pooled") for p in ("quarters", "late", "all6")}
    labels = pd.DataFrame({"extract": [1, 0, 0, 1, 0, 0, 0, 1], "copies": [16] * 8})
    values = page.exp2(pools, {"quarters": q, "late": None}, paper, dataset, labels, pd.DataFrame(),
                       ["c0", "c1", "c2", "c3"], [])
    text = values["text"]
    assert (text["exp2_min_pairs"], text["exp2_levels"]) == ("3", "1")
    assert text["e2_pairs"] == "7 (quarters), 3 (late)"
    assert (text["e2_q_three"], text["e2_q_rec"], text["e2_q_end"], text["e2_late_three"]) == (
        "0.667", "0.750", "—", "—")
    assert (text["src2_q_rec"], text["src2_all6_rec"], text["src2_q_end"]) == ("0.812", "0.812", "0.700")
    assert (text["e2_range_pos"], text["e2_quarters"]) == ("3 of 8", "q1, q2")
    assert set(values["md"]) == {"e2_level_claims", "e2_order", "e2_levels", "e2_verdict", "e2_late",
                                 "src2_share"}


def test_exp3_reads_the_pooled_matched_set_or_says_there_is_none(monkeypatch):
    _stub(monkeypatch, "cells_text", "bins_text", "empty_cells_sentence", "empty_cells", "bin_sentence",
          "evidence_text", "exp3_outcome_sentence", "exp3_outcome", "render", "sweep_sentence")
    cells = pd.DataFrame({"target": ["1b-100b"], "copies": [16]})
    index = pd.MultiIndex.from_tuples([(PA.THREE, "full sequence"), (PA.THREE, "suffix"),
                                       ("cross-model baseline", "—")], names=["features", "hardness"])
    tables = {"group": pd.DataFrame({"pooled": [0.5557, 0.6, np.nan]}, index=index), "task": None}
    dataset = pd.DataFrame({"cell": ["1b-100b", "pooled"], "n_examples": [40.0, 58.0],
                            "residual_recency_auc": [0.6, 0.5688]})
    paper = pd.DataFrame({"cell": ["8b-100b", "pooled"], "n_examples": [300, 1234]})
    args = (cells, {"1b-100b": 60}, {"pert-l2x": 4800}, tables)
    values = page.exp3(*args, dataset, paper, ["c0", "c1", "c2", "c3"], [], pd.DataFrame(), 1 / 32)
    text = values["text"]
    assert (text["e3_full"], text["e3_sfx"], text["e3_cross"]) == ("0.556", "0.600", "—")
    assert (text["e3_resid"], text["e3_n"], text["exp3_matched"], text["src3_n"]) == ("0.569", "58", "58",
                                                                                      "1,234")
    assert set(values["md"]) == {"e3_task", "e3_empty", "e3_bin_text", "e3_evidence", "e3_outcome",
                                 "e3_power", "e3_sweep"}
    none = page.exp3(*args, pd.DataFrame(), paper, ["c0", "c1", "c2", "c3"], [], pd.DataFrame(), 1 / 32)
    assert (none["text"]["e3_resid"], none["text"]["e3_n"]) == ("—", "0")


def test_compare_and_summary_format_the_scale_and_the_time(monkeypatch):
    _stub(monkeypatch, "labels_comparison", "levels_sentence", "level_256_sentence")
    monkeypatch.setattr(page, "window_share", lambda run, exposure: 0.4567)

    class Run:
        copies_per_row = 4

    long = pd.DataFrame({"task": ["a", "b", "a"], "copies": [0, 1, 4]})
    setup = pd.DataFrame({"params": [34_560_000, 1_200_000, 1_200_000]})
    run_table = pd.DataFrame({"tokens": [5_000_000, 20_000_000]})
    values = page.compare(long, setup, run_table, Run(), pd.DataFrame(), pd.DataFrame(), (None, None, None),
                          "default", [1, 4], {})
    assert values["text"] == {"param_span": "1.2M and 34.6M", "max_tokens": "20M", "n_tasks": "2",
                              "src_n_seq": "80,504", "src_n_tasks": "16", "range_density": "46%",
                              "range_per_row": "4"}
    assert set(values["md"]) == {"labels_cmp", "levels_cmp", "level_256"}
    assert page.summary([], 45.4)["text"]["elapsed"] == "45"


# -- the tables' layout ------------------------------------------------------------------------------


def test_an_empty_table_gives_its_note_as_markdown():
    note = page.styled(pd.DataFrame(), empty="**No cell is matched.**")
    assert isinstance(note, page.Note) and note._repr_markdown_() == "**No cell is matched.**"
    pytest.importorskip("jinja2")
    # without a note, an empty table is still a table
    assert not isinstance(page.styled(pd.DataFrame()), page.Note)


def test_a_styled_table_hides_its_index_formats_and_captions():
    pytest.importorskip("jinja2")
    table = pd.DataFrame({"auc": [0.87654, np.nan], "n": [1234, 5]}, index=["x_row", "y_row"])
    html = page.styled(table, {"n": "{:,}"}, precision=2, na_rep="—", caption="Source").to_html()
    assert "0.88" in html and "1,234" in html and "—" in html and "Source" in html
    assert "x_row" not in html
    assert "x_row" in page.styled(table, index=True).to_html()


def test_the_auc_tables_follow_their_prefix_and_leave_out_what_is_missing():
    pytest.importorskip("jinja2")
    aucs = {split: {"T": pd.DataFrame({"features": [PA.THREE], "auc": [0.7], "note": [""]})}
            for split in ("random", "task")}
    aucs["task"]["U"] = pd.DataFrame({"features": [PA.THREE], "auc": [np.nan], "note": ["one class"]})
    intervals = {"random": {"T": pd.DataFrame({"features": [PA.THREE], "auc": [0.7], "lo": [0.6], "hi": [0.8],
                                               "n_pos": [10]})},
                 "task": {}}
    shown = page.exp1_auc_tables(aucs, intervals, "inserted only, ")
    captions = [s.caption for s in shown[:-1]]
    assert captions == ["Lab, inserted only, random split", "Lab, inserted only, leave-one-task-out",
                        "Lab, inserted only, random split: AUC [95% interval, bootstrap over sequences]"]
    assert isinstance(shown[-1], page.Note) and "one class" in shown[-1]
    # Experiment 3's tables: a split without a table is left out, and there are no intervals
    shown3 = page.exp3_auc_tables({"group": page.wide_auc(aucs["random"]), "task": None}, {"group": {}})
    assert [s.caption for s in shown3[:-1]] == ["Lab, group split"]

"""The predicting chapter's steps and tables: what the notebook's visible cells call, on toy
frames with hand-computed answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.lab.config import ModelConfig, RunConfig
from analysis.predicting import method_features as F
from analysis.predicting import method_sampling as S
from analysis.predicting import params as PA
from analysis.predicting import steps as ST
from analysis.predicting import tables as TB
from analysis.predicting.checks import PredictingError


def _exposure():
    return pd.DataFrame({
        "seq_id": ["s1", "s2", "s3"], "task": ["qa", "qa", "passage"],
        "copies_requested": [4, 0, 1], "window": ["all"] * 3, "copies_seen": [4, 0, 1],
        "first_step": [10, -1, 75], "last_step": [80, -1, 75], "T": [100] * 3,
    })


def _run_table():
    rows = [
        ("std-a", "standard", 16, 100, False, ""),
        ("std-b", "standard", 32, 100, False, ""),
        ("pert-a", "perturbed", 16, 100, True, ""),
        ("pert-b", "perturbed", 32, 100, True, ""),
        ("std-range", "standard", 32, 200, False, ""),
        ("range-q4", "range", 32, 200, True, "q4"),
    ]
    return pd.DataFrame([dict(run=r, family=f, n_layer=2, d_model=d, n_head=1, d_ff=4 * d, context=128,
                              tokens=t, steps=10, inject=i, window=w) for r, f, d, t, i, w in rows])


def test_setup_table():
    runs = _run_table()
    ex = {"pert-a": _exposure(), "range-q4": _exposure().assign(window="q4")}
    t = TB.setup_table(
        ["pert-a", "range-q4"], runs, ex, {"pert-a": 1000, "range-q4": 2000}, {"pert-a": "1b-100b"}
    )
    assert t.to_dict("records") == [
        {
            "target": "pert-a",
            "source's role": "1b-100b",
            "counterfactual": "std-a",
            "steps T": 100,
            "params": 1000,
            "tokens": 100,
            "window": "all",
            "sequences": 3,
        },
        {
            "target": "range-q4",
            "source's role": "range-q4",
            "counterfactual": "std-range",
            "steps T": 100,
            "params": 2000,
            "tokens": 200,
            "window": "q4",
            "sequences": 3,
        },
    ]


def _long():
    # two targets, controls (0 copies) and two inserted levels
    rows = [
        ("A", 0, 0, 0.0),
        ("A", 0, 0, 0.05),
        ("A", 4, 0, 0.5),
        ("A", 4, 0, 0.6),
        ("A", 16, 1, 1.0),
        ("A", 16, 0, 0.9),
        ("B", 0, 0, 0.1),
        ("B", 0, 0, 0.15),
        ("B", 4, 0, 0.4),
        ("B", 4, 0, 0.7),
        ("B", 16, 1, 1.0),
        ("B", 16, 1, 1.0),
    ]
    return pd.DataFrame(rows, columns=["target", "copies", "extract", "suffix_acc"]).assign(task="qa")


def test_stack_frames_and_the_extraction_tables():
    frames = {"pert-a": pd.DataFrame({"x": [1]}), "pert-b": pd.DataFrame({"x": [2, 3]})}
    long = ST.stack_frames(frames, {"pert-a": "1b-100b"})
    assert long["target"].tolist() == ["1b-100b", "pert-b", "pert-b"] and long["x"].tolist() == [1, 2, 3]
    s = TB.extraction_summary(_long())
    assert s[["target", "copies"]].values.tolist() == [
        ["A", 0],
        ["A", 4],
        ["A", 16],
        ["B", 0],
        ["B", 4],
        ["B", 16],
    ]
    assert s["extract"].tolist() == [0, 0, 0.5, 0, 0, 1.0]
    assert s["suffix_acc"].tolist() == pytest.approx([0.025, 0.55, 0.95, 0.125, 0.55, 1.0])
    r = TB.extraction_rates(_long())
    assert r["positives"].tolist() == ["1 / 6", "2 / 6"]
    assert r.loc["A", 16] == 0.5 and r.loc["B", 16] == 1.0 and r.loc["B", 4] == 0.0


# -- Experiment 1 in the chapter -----------------------------------------------------------------


def _target(n_pos, n=20, seed=0):
    # log_freq separates the classes; the rest is noise
    r = np.random.default_rng(seed)
    y = np.array([1] * n_pos + [0] * (n - n_pos))
    return pd.DataFrame(
        {
            "seq_id": [f"s{i}" for i in range(n)],
            "task": ["qa", "bio"] * (n // 2),
            "extract": y,
            "copies": np.where(y == 1, 16, 0),
            "log_freq": y * 3.0 + r.random(n) * 0.1,
            "recency": r.random(n),
            "hardness": r.random(n),
            "hardness_sfx": r.random(n),
            "cross_model": r.random(n),
        }
    )


def test_main_target_and_exp13_targets():
    assert ST.main_target({"pert-s1x": "1b-100b", "pert-l2x": "8b-500b"}) == "8b-500b"
    assert ST.main_target({"pert-s1x": "1b-100b", "range-q4": "ir75_100"}) == "1b-100b"
    assert ST.exp13_targets(["pert-s1x", "range-q1", "range-q4", "range-early", "range-q2"]) == [
        "pert-s1x",
        "range-q4",
    ]


def test_balanced_samples_and_exp1_aucs():
    frames = {"pert-a": _target(6), "pert-b": _target(0)}
    samples = ST.balanced_samples(frames, seed=0, names={"pert-a": "1b-100b"})
    assert list(samples) == ["1b-100b"]  # pert-b has no positive
    assert len(samples["1b-100b"]) == 12 and samples["1b-100b"]["extract"].sum() == 6
    aucs = ST.exp1_aucs(frames, "random", seeds=[0, 1], names={"pert-a": "1b-100b"})
    assert list(aucs) == ["1b-100b", "pert-b"]
    a = aucs["1b-100b"].set_index("features")
    assert a.loc["log_freq", "auc"] == 1.0 and a.loc["log_freq", "note"] == ""
    assert a.index.tolist() == list(PA.FEATURE_SETS) + [
        "cross-model baseline",
        "random baseline",
        "sd (3 features)",
    ]
    assert aucs["pert-b"]["auc"].isna().all() and "both classes" in aucs["pert-b"]["note"].iloc[0]
    d = ST.exp1_dataset(samples)
    assert d[["target", "n_examples", "n_pos", "n_neg"]].values.tolist() == [["1b-100b", 12, 6, 6]]
    assert ST.exp1_dataset({}).empty


def test_wide_auc_notes_and_cells():
    def col(v, note=""):
        return pd.DataFrame(
            {
                "features": ["log_freq", "hardness", "sd (3 features)"],
                "hardness": "—",
                "auc": v,
                "sd": np.nan,
                "note": note,
            }
        )

    cols = {"x": col([0.9, 0.6, 0.01]), "y": col([np.nan] * 3, "too few positives")}
    w = TB.wide_auc(cols)
    assert w.columns.tolist() == ["x", "y"] and w.loc["log_freq", "x"] == 0.9 and w["y"].isna().all()
    assert TB.wide_auc({}) is None
    assert TB.wide_auc(cols, ("features", "hardness")).index.tolist()[0] == ("log_freq", "—")
    assert TB.auc_notes(cols) == {"y": "too few positives"}
    assert TB.auc_cell(w, "log_freq", "x") == "0.900"
    assert TB.auc_cell(w, "log_freq", "y") == TB.auc_cell(w, "recency", "x") == "—"
    assert TB.auc_cell(None, "a", "b") == "—"
    assert TB.computed_columns(w) == ["x"] and TB.computed_columns(None) == []


def test_auc_panels_put_the_source_beside_the_lab():
    s, lab = pd.DataFrame({"a": [1.0]}), pd.DataFrame({"a": [0.5]})
    panels = TB.auc_panels({"random split": (s, lab), "late": (None, lab)})
    assert list(panels) == ["source, random split", "lab, random split", "source, late", "lab, late"]
    assert panels["source, random split"] is s and panels["source, late"] is None



def _range_labels():
    # 6 sequences at 4 copies: extracted by q4 (late window), not by q1; 2 at 16 copies: extracted by both;
    # recency separates the two runs of a pair, log_freq is constant within it
    rows = []
    for i in range(8):
        c = 4 if i < 6 else 16
        for run, window, rec, y in (("range-q1", "q1", 0.8, int(c == 16)), ("range-q4", "q4", 0.1, 1)):
            rows.append(
                dict(
                    seq_id=f"s{i}",
                    run=run,
                    window=window,
                    copies=c,
                    extract=y,
                    task=["qa", "bio"][i % 2],
                    log_freq=np.log1p(c),
                    recency=rec,
                    hardness=0.1 * i,
                    window_end=F.window_end_baseline(window),
                    last_step=100 - int(rec * 100),
                    T=100,
                )
            )
    return pd.DataFrame(rows)



def test_range_runs_rates_and_levels():
    pools = {"quarters": ("range-q1", "range-q2"), "late": ("range-q2", "range-late")}
    assert ST.range_runs(pools) == ["range-q1", "range-q2", "range-late"]
    labels = _range_labels()
    rates = TB.run_extraction_rates(labels, ["range-q4", "range-q1"])
    assert rates.index.tolist() == ["range-q4", "range-q1"]
    assert rates.loc["range-q1"].tolist() == [0.0, 1.0] and rates.loc["range-q4"].tolist() == [1.0, 1.0]
    assert ST.inserted_levels(labels.assign(copies=[0, 0] + [4] * 14)) == [4]
    assert TB.extracted_per_run(labels, ["range-q1", "range-q4", "range-q2"]).tolist() == [2, 8, 0]


def test_pool_pairs_exp2_aucs_and_dataset():
    labels = _range_labels()
    pools = {"quarters": ("range-q1", "range-q4")}
    pairs = ST.pool_pairs(labels, pools, seeds=[0, 1])
    assert list(pairs) == ["quarters"] and list(pairs["quarters"]) == [0, 1]
    assert pairs["quarters"][0]["seq_id"].unique().tolist() == [
        f"s{i}" for i in range(6)
    ]  # 16 copies: no pair
    aucs = ST.exp2_aucs(pairs, [4, 16], seeds=[0, 1])
    assert list(aucs["quarters"]) == ["copies_4", "copies_16", "pooled"]
    t = aucs["quarters"]["copies_4"].set_index("features")
    assert t.loc["recency", "auc"] == 1.0 and t.loc["window-end baseline", "auc"] == 1.0
    assert t.loc["log_freq", "auc"] == 0.5  # constant within a pair
    assert aucs["quarters"]["copies_16"]["auc"].isna().all()
    assert "0 positives and 0 negatives" in aucs["quarters"]["copies_16"]["note"].iloc[0]
    d = ST.exp2_dataset(pairs)
    assert d[["pool", "copies", "n_pairs", "n_pos", "n_neg"]].values.tolist() == [
        ["quarters", "4", 6, 6, 6],
        ["quarters", "all", 6, 6, 6],
    ]
    counts = ST.exp2_run_table(pairs)
    assert counts.values.tolist() == [["quarters", "range-q4", 6, 0], ["quarters", "range-q1", 0, 6]]
    per_run = TB.examples_per_run(counts, ["quarters", "late"], ["range-q1", "range-q4", "range-late"])
    assert per_run.values.tolist() == [["0 / 6", "6 / 0", "—"], ["—", "—", "—"]]
    assert TB.pair_counts(d, ["quarters", "late"]) == {"quarters": 6, "late": 0}
    empty = {"late": {0: labels.iloc[:0]}}
    assert ST.exp2_dataset(empty).empty and ST.exp2_run_table(empty).empty
    assert TB.pair_counts(ST.exp2_dataset(empty), ["late"]) == {"late": 0}




def test_window_share():
    model = ModelConfig(n_layer=1, d_model=8, n_head=1, d_ff=16, context=16)
    run = RunConfig(name="r", model=model, tokens=16 * 4 * 40, inject=True, window="q4", batch_size=4)
    # 40 steps of 4 rows; the last quarter holds 10 steps, 40 rows: 10 copies fill a quarter of them
    assert run.steps == 40
    assert TB.window_share(run, pd.DataFrame({"copies_seen": [4, 6, 0]})) == 0.25
    # two copies a row: the same 10 copies fill an eighth of the room
    shared = RunConfig(name="r", model=model, tokens=16 * 4 * 40, inject=True, window="q4", batch_size=4,
                       copies_per_row=2)
    assert TB.window_share(shared, pd.DataFrame({"copies_seen": [4, 6, 0]})) == 0.125




def _exp3_frame():
    # cell (A, 4): 12 sequences, both classes in both tasks, one last-step bin; hardness_sfx separates;
    # cell (B, 16): all positive (not a cell); cell (C, 4): the tasks separate the classes
    # (matching empties it)
    rows = []
    for i in range(12):
        y = int(i < 6)
        rows.append(
            dict(
                target="A",
                copies=4,
                seq_id=f"a{i}",
                task=["qa", "bio"][i % 2],
                extract=y,
                last_step=50,
                T=100,
                hardness_sfx=y + 0.01 * i,
            )
        )
    rows += [
        dict(
            target="B", copies=16, seq_id=f"b{i}", task="qa", extract=1, last_step=90, T=100, hardness_sfx=0.5
        )
        for i in range(3)
    ]
    rows += [
        dict(
            target="C",
            copies=4,
            seq_id=f"c{i}",
            task=["qa", "bio"][i % 2],
            extract=int(i % 2 == 0),
            last_step=60,
            T=100,
            hardness_sfx=0.5,
        )
        for i in range(4)
    ]
    r = np.random.default_rng(0)
    f = pd.DataFrame(rows)
    return f.assign(
        log_freq=np.log1p(f["copies"]),
        recency=(100 - f["last_step"]) / 100,
        hardness=r.random(len(f)),
        cross_model=r.random(len(f)),
    )


def test_training_steps_bins_and_cells():
    assert ST.training_steps({"a": pd.DataFrame({"T": [14, 14]}), "b": pd.DataFrame({"T": [29]})}) == {
        "a": 14,
        "b": 29,
    }
    # round(12.5) is 12 (round half to even); a bin is at least one step
    assert ST.step_bins({"A": 100, "B": 4, "C": 29}, 0.125) == {"A": 12, "B": 1, "C": 4}
    with pytest.raises(PredictingError, match="frac"):
        ST.step_bins({"A": 100}, 0)
    cells = S.matched_cells(_exp3_frame())
    keys = ST.cell_keys(cells)
    assert keys == [("A", 4), ("C", 4)]
    bins = {"A": 100, "C": 100}
    m = ST.match_cells(cells, bins, seed=0)
    assert len(m) == 12 and m["target"].eq("A").all() and m["extract"].sum() == 6  # C leaves nothing
    assert len(ST.match_cells(cells, bins, 0, [("C", 4)])) == 0
    # matching empties C: its tasks separate the classes, so no stratum holds both
    assert ST.empty_cells(cells, bins) == [("C", 4)]
    assert ST.empty_cells(cells[cells.target == "A"], bins) == []
    assert ST.empty_cells(cells.iloc[:0], bins) == []


def test_exp3_aucs_dataset_and_flat_index():
    cells = S.matched_cells(_exp3_frame())
    bins = {"A": 100, "C": 100}
    aucs = ST.exp3_aucs(cells, bins, seeds=[0, 1])
    assert list(aucs) == ["group", "task"] and list(aucs["group"]) == ["A (4)", "C (4)", "pooled"]
    a = aucs["group"]["A (4)"].set_index(["features", "hardness"])
    assert a.loc[("hardness", "suffix"), "auc"] == 1.0  # hardness_sfx separates by construction
    # log_freq and recency are both constant within the cell: the fit predicts each fold's training mean,
    # the same for both
    assert a.loc[("log_freq", "—"), "auc"] == a.loc[("recency", "—"), "auc"]
    assert len(a) == 7 + 4 + 2 + 2
    assert aucs["group"]["C (4)"]["auc"].isna().all()
    assert (
        aucs["task"]["pooled"].set_index(["features", "hardness"]).loc[("hardness", "suffix"), "auc"] == 1.0
    )
    assert ST.exp3_aucs(cells.iloc[:0], bins, seeds=[0]) == {"group": {}, "task": {}}
    d = ST.exp3_dataset(cells, bins)
    assert d["cell"].tolist() == ["A", "pooled"] and d["n_examples"].tolist() == [12, 12]
    assert d["residual_recency_auc"].tolist() == [0.5, 0.5]  # every last step is 50
    assert ST.exp3_dataset(cells[cells.target == "C"], bins).empty
    t = pd.DataFrame(
        {"pooled": [0.6, 0.5]},
        index=pd.MultiIndex.from_tuples(
            [("hardness", "suffix"), ("log_freq", "—")], names=["features", "hardness"]
        ),
    )
    assert TB.flat_index(t).index.tolist() == ["hardness [suffix]", "log_freq"]
    assert TB.flat_index(None) is None




def test_largest_target_takes_most_parameters_then_most_tokens():
    frames = {"pert-s2x": pd.DataFrame(), "pert-l1x": pd.DataFrame(), "pert-l2x": pd.DataFrame()}
    n_params = {"pert-s2x": 10, "pert-l1x": 40, "pert-l2x": 40}
    tokens = {"pert-s2x": 200, "pert-l1x": 100, "pert-l2x": 250}
    assert ST.largest_target(frames, n_params, tokens) == "pert-l2x"
    assert ST.largest_target({"pert-s2x": frames["pert-s2x"]}, n_params, tokens) == "pert-s2x"
    with pytest.raises(PredictingError, match="no targets"):
        ST.largest_target({}, n_params, tokens)


def test_exp2_level_count_counts_levels_shared_by_every_pool():
    data = pd.DataFrame({
        "pool": ["quarters"] * 4 + ["late"] * 3,
        "copies": ["32", "48", "64", "all", "48", "64", "all"],
        "n_pairs": [3, 5, 2, 10, 4, 0, 4]})
    # quarters has pairs at 32, 48, 64; late at 48 only (64 has none): one shared level
    assert TB.exp2_level_count(data, ["quarters", "late"]) == 1
    assert TB.exp2_level_count(data, ["quarters"]) == 3
    assert TB.exp2_level_count(pd.DataFrame(), ["quarters"]) == 0


def test_exp3_gap_tests_pair_both_fits_on_each_seed():
    cells = S.matched_cells(_exp3_frame())
    bins = {"A": 100, "C": 100}
    gaps = ST.exp3_gap_tests(cells, bins, seeds=[0, 1])
    table = ST.exp3_aucs(cells, bins, seeds=[0, 1])["group"]["pooled"].set_index(["features", "hardness"])
    assert gaps["seed"].tolist() == [0, 1] and (gaps["n"] == 12).all()
    # the same folds as the table: the mean of each fit's AUC is the table's cell
    assert gaps["suffix"].mean() == pytest.approx(table.loc[(PA.THREE, "suffix"), "auc"])
    assert gaps["full"].mean() == pytest.approx(table.loc[(PA.THREE, "full sequence"), "auc"])
    assert (gaps["gap"] == gaps["suffix"] - gaps["full"]).all()
    assert ST.exp3_gap_tests(cells.iloc[:0], bins, seeds=[0]).empty


def test_inserted_frames_drop_the_controls_before_balancing():
    t = _target(6).assign(copies=[16] * 6 + [0] * 10 + [4] * 4)  # 10 controls, all negatives
    ins = ST.inserted_frames({"pert-a": t})["pert-a"]
    assert len(ins) == 10 and (ins["copies"] >= 1).all() and ins["extract"].sum() == 6
    # balancing then draws the 6 negatives from the 4 inserted ones: every negative kept, 4 positives drawn
    d = ST.exp1_dataset(ST.balanced_samples({"pert-a": ins}, seed=0))
    assert d[["n_pos", "n_neg", "controls_pos", "controls_neg"]].values.tolist() == [[4, 4, 0, 0]]


def test_chapter_runs_leave_out_the_ablations():
    table = pd.DataFrame({"run": ["wide-32", "pert-s1x", "abl-tokens", "std-s1x", "abl-copies"],
                          "family": ["ladder-wide", "perturbed", "ablation", "standard", "ablation"]})
    assert ST.chapter_runs(table)["run"].tolist() == ["wide-32", "pert-s1x", "std-s1x"]


def test_strata_sweep_narrows_to_the_source_width():
    # the toy's targets in the source's names; T = 4,800 steps, so the source's 100 of 48,000 is 10 steps.
    # A's positives last saw their copies at step 50, its negatives at step 450
    frame = _exp3_frame().replace({"target": {"A": "1b-100b", "B": "8b-100b", "C": "1b-500b"}})
    is_a = frame["target"] == "1b-100b"
    frame = frame.assign(T=4800, last_step=np.where(is_a, np.where(frame["extract"] == 1, 50, 450), 60))
    cells = S.matched_cells(frame)
    sweep = TB.strata_sweep(cells, {"1b-100b": 4800, "1b-500b": 4800}, fracs=(1 / 8, 1 / 64))
    assert sweep["width"].tolist() == ["1/8 of training", "1/64 of training", TB.SOURCE_WIDTH]
    assert TB.source_bin_steps("1b-100b", 4800) == 10
    # 1/8 of training is 600 steps: steps 50 and 450 share a stratum, all 12 of A's examples stay, and
    # recency still separates them completely (residual AUC 0: the positives are the earlier ones); at 75
    # steps and at the source's 10 the two
    # classes fall in different strata and the match empties
    assert sweep["examples"].tolist() == [12, 0, 0]
    assert sweep["cells kept"].tolist() == [1, 0, 0] and sweep["cells"].tolist() == [2, 2, 2]
    auc = sweep["residual recency AUC"]
    assert auc.iloc[0] == 0.0 and auc.iloc[1:].isna().all()
    assert np.isnan(sweep["share of T"].iloc[-1]) and sweep["share of T"].iloc[0] == 1 / 8

"""The predicting chapter's intervals (a bootstrap over sequences), its task-split and per-level
claims, and its strata table, on small hand-computed fixtures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.core.claims import INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTABLE, REPRODUCED, from_json, to_json
from analysis.predicting import claims as C
from analysis.predicting import claims_exp3 as C3
from analysis.predicting import intervals as I
from analysis.predicting import nulls as N
from analysis.predicting import params as PA
from analysis.predicting import steps as ST
from analysis.predicting import tables as T
from analysis.predicting import text as X
from analysis.predicting.checks import PredictingError
from analysis.predicting.method_eval import auc_rows
from analysis.stats.result import Estimate


def _pairs_rows():
    # two sequences of two rows each (a pair): a is ranked right, b the wrong way round.
    # Every positive-negative pair: 0.9 > 0.1, 0.9 > 0.8, 0.2 > 0.1, 0.2 < 0.8: AUC 3/4
    return pd.DataFrame(
        {"seed": 0, "unit": ["a", "a", "b", "b"], "y": [1, 0, 1, 0], "score": [0.9, 0.1, 0.2, 0.8]}
    )


def test_the_bootstrap_keeps_a_sequences_rows_together():
    rows = _pairs_rows()
    assert I.seed_mean_auc(rows) == pytest.approx(0.75)
    # a resample of {a, a} counts a's rows twice and b's not at all: AUC 1; {b, b}: AUC 0
    assert I.seed_mean_auc(rows, [2, 2, 0, 0]) == 1.0 and I.seed_mean_auc(rows, [0, 0, 2, 2]) == 0.0
    # resampling whole sequences, only {a, a}, {b, b} and {a, b} can be drawn: AUC 1, 0 or 0.75,
    # each of the first two with probability 1/4, so the 95% interval is [0, 1]
    est = I.cell_interval(rows, n_boot=400)
    assert (est.value, est.lo, est.hi, est.n, est.n_units) == (0.75, 0.0, 1.0, 4, 2)
    # row by row, a resample could hold a's positive and b's negative alone (AUC 1 - 1 = 0.9 > 0.8: 1)
    # or b's positive with a's negative (0.2 > 0.1: 1), never 0: the interval would not reach 0
    assert I.seed_mean_auc(rows, [0, 1, 1, 0]) == 1.0


def test_seeds_share_their_sequences_and_are_averaged():
    # seed 0 ranks right (AUC 1), seed 1 ties everything (AUC 0.5): the cell is their mean, 0.75
    rows = pd.DataFrame(
        {"seed": [0, 0, 1, 1], "unit": ["a", "b", "a", "b"], "y": [1, 0, 1, 0], "score": [1.0, 0.0, 0.3, 0.3]}
    )
    assert I.seed_mean_auc(rows) == pytest.approx(0.75)
    # a resample without b leaves every seed one class: no AUC, dropped
    assert np.isnan(I.seed_mean_auc(rows, [2, 0, 2, 0]))
    est = I.cell_interval(rows, n_boot=200)
    assert (est.value, est.lo, est.hi, est.n_units) == (0.75, 0.75, 0.75, 2)
    # leave-one-task-out: the mean of the tasks' AUCs, a task without both classes skipped
    tasks = pd.DataFrame(
        {
            "seed": 0,
            "unit": list("abcde"),
            "task": ["t", "t", "u", "u", "v"],
            "y": [1, 0, 1, 0, 1],
            "score": [0.9, 0.1, 0.1, 0.9, 0.5],
        }
    )
    assert I.seed_mean_auc(tasks) == pytest.approx(0.5)  # (1 + 0) / 2, task v skipped


def test_paired_interval_is_the_difference_on_the_same_resamples():
    a = _pairs_rows()
    b = a.assign(score=[0.5, 0.5, 0.5, 0.5])  # ties everywhere: 0.5 on every resample
    est = I.paired_interval(a, b, n_boot=400)
    assert (est.value, est.lo, est.hi) == (0.25, -0.5, 0.5)
    with pytest.raises(PredictingError, match="same rows"):
        I.paired_interval(a, b.iloc[::-1].reset_index(drop=True))


def _target(n=40, seed=3):
    rng = np.random.default_rng(seed)
    y = (np.arange(n) % 2).astype(int)
    return pd.DataFrame(
        {
            "seq_id": [f"s{i}" for i in range(n)],
            "task": [f"k{(i // 2) % 4}" for i in range(n)],
            "extract": y,
            "log_freq": y + rng.normal(0, 0.8, n),
            "recency": rng.random(n),
            "hardness": rng.normal(size=n),
            "hardness_sfx": rng.normal(size=n),
            "cross_model": rng.random(n),
            "copies": 4,
        }
    )


@pytest.mark.parametrize("split", ["random", "task", "group"])
def test_interval_tables_carry_the_tables_own_aucs(split):
    frame = _target()
    base = ["cross-model baseline", "random baseline"]
    table = auc_rows(lambda s: frame, split, base, [0, 1])
    boot = I.auc_intervals(lambda s: frame, split, base, [0, 1], n_boot=50)
    merged = table.merge(boot, on=["features", "hardness"], suffixes=("", "_boot"))
    assert len(merged) == 9
    assert merged["auc_boot"].to_numpy() == pytest.approx(merged["auc"].to_numpy())
    assert ((merged["lo"] <= merged["auc"] + 1e-12) & (merged["auc"] <= merged["hi"] + 1e-12)).all()
    assert (boot["n_units"] == (8 if split == "random" else 40)).all()  # the test set: 20% of 40


def test_a_cell_without_positives_says_so():
    frame = _target()
    none = I.auc_intervals(lambda s: frame.iloc[:0], "group", ["random baseline"], [0], n_boot=10)
    assert (none["n_pos"] == 0).all() and none["auc"].isna().all() and (none["note"] != "").all()
    wide = I.interval_table(
        {
            "copies_1": none,
            "pooled": I.auc_intervals(lambda s: frame, "group", ["random baseline"], [0], n_boot=10),
        }
    )
    assert (wide["copies_1"] == "no positives").all()
    assert wide.loc["log_freq", "pooled"].count("[") == 1
    assert I.interval_text(0.9571, 0.912, 0.99) == "0.957 [0.91, 0.99]"
    assert I.interval_text(float("nan"), np.nan, np.nan, 3) == "—"


def test_a_target_without_positives_gives_no_positive_cells_not_an_error():
    # a lab target that extracted nothing: its Experiment 1 cells read "no positives"
    frames = {"none": _target().assign(extract=0), "some": _target()}
    out = I.exp1_intervals(frames, "random", [0, 1], n_boot=20)
    assert (out["none"]["n_pos"] == 0).all() and out["none"]["auc"].isna().all()
    assert out["some"]["auc"].notna().any()
    # and its paired gaps are an empty mapping, as for a target that cannot be split
    assert I.exp1_gaps(_target().assign(extract=0), [0], n_boot=20) == {}


def test_bad_bootstrap_parameters_fail_clearly():
    with pytest.raises(PredictingError, match="n_boot"):
        I.cell_interval(_pairs_rows(), n_boot=0)
    with pytest.raises(PredictingError, match="level"):
        I.cell_interval(_pairs_rows(), level=1.5)
    with pytest.raises(PredictingError, match="split"):
        I.held_out_rows(_target(), "log_freq", "pairs")
    with pytest.raises(PredictingError, match="split must be 'group' or 'task'"):
        N.exp3_null(_cells(), {"A": 50, "B": 50}, [0], split="random")


# -- Experiment 3 under leave-one-task-out -----------------------------------------------------------


def _cells(n_seq=24, seed=1):
    rng = np.random.default_rng(seed)
    rows = [
        dict(
            target=t,
            copies=c,
            seq_id=f"s{i}",
            task=f"k{i % 3}",
            extract=int(rng.random() < 0.5),
            last_step=int(rng.integers(0, 100)),
            T=100,
            log_freq=np.log1p(c),
            recency=rng.random(),
            hardness=rng.normal(),
            hardness_sfx=rng.normal(),
            cross_model=rng.random(),
        )
        for t in ("A", "B")
        for i in range(n_seq)
        for c in [(16, 24)[i % 2]]
    ]
    return pd.DataFrame(rows)


def test_a_constant_feature_scores_exactly_half_leaving_one_task_out():
    cells, bins = _cells(), {"A": 50, "B": 50}
    null = N.exp3_null(cells, bins, seeds=[0], split="task")
    table = ST.exp3_aucs(cells, bins, [0], splits=("task",))["task"]["pooled"].set_index(
        ["features", "hardness"]
    )
    # log_freq is constant within every cell and every cell is 50/50 within a held-out task: exactly 0.5,
    # observed and in every permuted draw
    assert table.loc[("log_freq", "—"), "auc"] == 0.5
    assert null["log_freq"].value == 0.5 and null["log_freq"].null_value == 0.5 and null["log_freq"].p == 1.0
    # the observed statistics are the table's
    assert null["full"].value == pytest.approx(table.loc[(PA.THREE, "full sequence"), "auc"])
    assert null["suffix"].value == pytest.approx(table.loc[(PA.THREE, "suffix"), "auc"])
    wide = pd.DataFrame({"pooled": table["auc"]})
    paper = PA.load_paper_table("exp3_task").set_index(["features", "hardness"])
    full, sfx = C3.exp3_task_claims(wide, paper, null)
    assert (full.id, sfx.id) == ("e3_task_three_full", "e3_task_three_suffix")
    assert (full.null_kind, full.null_value, full.control_value) == ("analytic", 0.5, 0.5)
    assert (full.source_value, sfx.source_value) == ("0.529", "0.592")
    assert full.n == len(ST.match_cells(cells, bins, 0)) and full.p == null["full"].p
    assert full.status == INCONCLUSIVE and full.n_units == 14  # 14 sequences: below the minimum of 30
    assert "exactly 0.5" in X.render(full)
    assert C3.exp3_task_claim("e3_task_three_suffix", None, paper, None).status == NOT_TESTABLE


def test_task_claims_are_decided_against_half():
    paper = PA.load_paper_table("exp3_task").set_index(["features", "hardness"])
    index = pd.MultiIndex.from_tuples(
        [(PA.THREE, "full sequence"), (PA.THREE, "suffix")], names=["features", "hardness"]
    )

    def est(v, p, n_units=60):
        return Estimate(
            v, 0.4, 0.6, p=p, n=100, n_units=n_units, method="permutation", null_value=0.49, n_null=200
        )

    null = {
        "full": est(0.62, 0.005),
        "suffix": est(0.45, 0.01),
        "log_freq": est(0.5, 1.0),
        "n_cells": Estimate(4.0, n=100, n_units=60),
    }
    wide = pd.DataFrame({"pooled": [0.62, 0.45]}, index=index)
    full, sfx = C3.exp3_task_claims(wide, paper, null)
    # 0.62 above 0.5 with p = 0.005: reproduced; 0.45 below 0.5 with p = 0.01: not reproduced
    assert (full.status, full.n, full.n_units, full.extra["perm_median"]) == (REPRODUCED, 100, 60, 0.49)
    assert sfx.status == NOT_REPRODUCED
    few = C3.exp3_task_claims(wide, paper, dict(null, full=est(0.62, 0.005, n_units=12)))[0]
    assert few.status == INCONCLUSIVE
    assert from_json(to_json([full, sfx])) == [full, sfx]


def test_the_strata_table_gives_the_source_width_in_lab_steps():
    # the source's 100 of 48,000 steps on 976 lab steps: 2.03, so 2; 100 of 238,500 on 2,441: 1.02, so 1
    assert T.source_bin_steps("1b-100b", 976) == 2 and T.source_bin_steps("8b-500b", 2441) == 1
    assert T.source_bin_steps("ir75_100", 2441) == 5 and T.source_bin_steps("1b-100b", 10) == 1
    with pytest.raises(PredictingError, match="no source target"):
        T.source_bin_steps("pert-s1x", 976)
    data = pd.DataFrame(
        {
            "cell": ["1b-100b", "pooled"],
            "copies": [64, np.nan],
            "n_strata": [7, 7],
            "residual_recency_auc": [0.6, 0.55],
        }
    )
    table = T.exp3_strata_table(data, {"1b-100b": 122}, {"1b-100b": 976})
    assert table.loc[0, ["bin (steps)", "source's bin (lab steps)", "strata"]].tolist() == [122, 2, 7]
    assert table.loc[0, "bin (share of T)"] == pytest.approx(0.125)
    assert table.loc[1, "residual recency AUC"] == 0.55 and np.isnan(table.loc[1, "bin (steps)"])


# -- Experiment 1's paired comparisons, Experiment 2's levels -----------------------------------------


def _gap(v, lo, hi, n_units=60):
    return Estimate(v, lo, hi, n=120, n_units=n_units, method="cluster bootstrap")


def test_hardness_adds_little_is_an_interval_below_the_margin():
    paper = PA.load_paper_table("exp1_random").set_index("features")
    c = C.exp1_hardness_claim({"hardness": _gap(0.01, -0.02, 0.04)}, paper, "8b-500b")
    # the source's gain for 8b-500b: 0.883 - 0.871 = +0.012
    assert c.status == REPRODUCED and c.extra["src_gap"] == pytest.approx(0.012)
    assert c.source_value.startswith("+0.012 (8b-500b)") and c.interval == (-0.02, 0.04)
    assert (c.null_kind, c.null_value, c.n_units) == ("target", 0.05, 60)
    assert (
        C.exp1_hardness_claim({"hardness": _gap(0.01, -0.03, 0.08)}, paper, "8b-500b").status == INCONCLUSIVE
    )
    assert (
        C.exp1_hardness_claim({"hardness": _gap(0.09, 0.06, 0.12)}, paper, "8b-500b").status == NOT_REPRODUCED
    )
    assert (
        C.exp1_hardness_claim({"hardness": _gap(0.0, -0.01, 0.01, 20)}, paper, "8b-500b").status
        == INCONCLUSIVE
    )
    assert C.exp1_hardness_claim({}, paper, "8b-500b").status == NOT_TESTABLE


def test_features_against_the_cross_model_baseline_follow_the_source_sign():
    paper = PA.load_paper_table("exp1_random").set_index("features")
    # 8b-500b: 0.883 - 0.874 = +0.009, so the direction is +1; 1b-500b: 0.778 - 0.904 < 0, so -1
    up = C.exp1_cross_claim({"cross": _gap(0.067, 0.01, 0.12)}, paper, "8b-500b")
    assert (up.status, up.extra["direction"], up.null_value) == (REPRODUCED, 1, 0.0)
    assert C.exp1_cross_claim({"cross": _gap(-0.06, -0.12, -0.01)}, paper, "8b-500b").status == NOT_REPRODUCED
    assert C.exp1_cross_claim({"cross": _gap(-0.06, -0.12, -0.01)}, paper, "1b-500b").status == REPRODUCED
    assert C.exp1_cross_claim({"cross": _gap(0.02, -0.03, 0.07)}, paper, "8b-500b").status == INCONCLUSIVE


def test_exp1_gaps_are_the_tables_differences():
    frame = _target()
    gaps = I.exp1_gaps(frame, [0, 1], n_boot=50)
    table = auc_rows(
        lambda s: ST.balanced_subsample(frame, s), "random", ["cross-model baseline"], [0, 1]
    ).set_index("features")["auc"]
    assert gaps["hardness"].value == pytest.approx(table[PA.THREE] - table["log_freq + recency"])
    assert gaps["cross"].value == pytest.approx(table[PA.THREE] - table["cross-model baseline"])
    assert gaps["hardness"].lo <= gaps["hardness"].value <= gaps["hardness"].hi


def test_a_level_without_positives_is_not_testable():
    paper = PA.paper_exp2_tables()
    data = pd.DataFrame(
        {"pool": ["quarters", "quarters"], "copies": ["64", "all"], "n_pos": [20, 20], "n_neg": [20, 20]}
    )
    null = {
        "recency": Estimate(
            0.9, 0.35, 0.55, p=0.005, n=80, n_units=40, method="permutation", null_value=0.44, n_null=200
        ),
        "log_freq": Estimate(
            0.5, 0.5, 0.5, p=1.0, n=80, n_units=40, method="permutation", null_value=0.5, n_null=200
        ),
    }
    tables = {"quarters": pd.DataFrame({"copies_16": [np.nan], "copies_64": [0.9]}, index=["recency"])}
    boot = {"quarters": {"copies_64": pd.DataFrame({"features": ["recency"], "lo": [0.8], "hi": [0.97]})}}
    c16, c64 = C.exp2_level_claims([0, 16, 64, 256], tables, paper, data, {16: None, 64: null}, boot)
    assert (c16.id, c16.status) == ("e2_recency_copies_16", NOT_TESTABLE) and "no positives" in c16.reason
    assert c16.source_value == "0.997"
    assert (c64.id, c64.status, c64.n, c64.n_units, c64.interval) == (
        "e2_recency_copies_64",
        REPRODUCED,
        40,
        40,
        (0.8, 0.97),
    )
    assert c64.statement == X.statement("e2_recency_copies_64") and "64 copies" in c64.statement
    c24 = C.exp2_level_claim(24, tables, paper, data, None)
    assert c24.status == NOT_TESTABLE and c24.source_value.startswith("no 24-copy level; 0.975 to 1.000")
    assert "no quarters pairs" in X.render(c16) and "0.900" in X.render(c64)
    with pytest.raises(PredictingError, match="no statement"):
        X.statement("e2_recency_copies_x")

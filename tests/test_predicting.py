"""The predicting chapter's computations, on toy exposure tables with hand-computed answers."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from analysis import predicting as P
from analysis.predicting import PredictingError

# -- labels ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n, expected",
    [(2, (1, 1)), (3, (1, 2)), (10, (5, 5)), (33, (16, 17)), (45, (22, 23)), (64, (32, 32)), (100, (32, 32))],
)
def test_split_point(n, expected):
    assert P.split_point(n) == expected


@pytest.mark.parametrize("n", [0, 1, -3, 2.5, True, "8"])
def test_split_point_rejects_short_or_non_integer(n):
    with pytest.raises(PredictingError, match="n_tokens"):
        P.split_point(n)


def test_extract_label():
    assert P.extract_label([True, True, True]) == 1
    assert P.extract_label([True, False, True]) == 0
    assert P.extract_label(np.array([1, 1])) == 1
    assert P.extract_label([False]) == 0
    with pytest.raises(PredictingError, match="non-empty"):
        P.extract_label([])
    with pytest.raises(PredictingError, match="booleans"):
        P.extract_label([0.5, 1])


# -- features ----------------------------------------------------------------------------------


def test_log_freq():
    got = P.log_freq([0, 1, 4, 16, 64])
    assert got.tolist() == pytest.approx([0.0, math.log(2), math.log(5), math.log(17), math.log(65)])
    with pytest.raises(PredictingError):
        P.log_freq([-1])


def test_recency_including_never_inserted():
    T = 100
    got = P.recency([99, 50, 0, -1, np.nan, 30], T, copies=[1, 4, 16, 0, 0, 0])
    # (100-99)/100, (100-50)/100, (100-0)/100; -1 / NaN / 0 copies: never inserted -> 1.0
    assert got.tolist() == pytest.approx([0.01, 0.5, 1.0, 1.0, 1.0, 1.0])
    with pytest.raises(PredictingError, match="last_step must be < T=100"):
        P.recency([100], T)
    with pytest.raises(PredictingError, match="T"):
        P.recency([1], 0)


def _nll_table():
    # three standard models; std-c is the target's counterfactual
    rows = [
        ("s1", "std-a", 1.0, 2.0), ("s1", "std-b", 2.0, 4.0), ("s1", "std-c", 6.0, 9.0),
        ("s2", "std-a", 3.0, 1.0), ("s2", "std-b", 5.0, 3.0), ("s2", "std-c", 0.0, 0.0),
        ("s3", "std-a", 4.0, 4.0), ("s3", "std-b", 4.0, 6.0), ("s3", "std-c", 1.0, 1.0),
    ]
    return pd.DataFrame(rows, columns=["seq_id", "model", "nll", "nll_suffix"])


def test_hardness_excludes_the_counterfactual_model():
    h = P.hardness(_nll_table(), "std-c").set_index("seq_id")
    assert h["hardness"].to_dict() == pytest.approx({"s1": 1.5, "s2": 4.0, "s3": 4.0})
    assert h["hardness_sfx"].to_dict() == pytest.approx({"s1": 3.0, "s2": 2.0, "s3": 5.0})
    # with it included, s1's hardness would be (1 + 2 + 6) / 3 = 3
    h_all = P.hardness(_nll_table(), None).set_index("seq_id")
    assert h_all.loc["s1", "hardness"] == pytest.approx(3.0)
    with pytest.raises(PredictingError, match="'std-x' is not a model"):
        P.hardness(_nll_table(), "std-x")
    only_c = _nll_table().query("model == 'std-c'")
    with pytest.raises(PredictingError, match="no reference model"):
        P.hardness(only_c, "std-c")


def _exposure():
    # the lab's exposure_table layout: copies_seen, last_step -1 when never inserted
    return pd.DataFrame({
        "seq_id": ["s1", "s2", "s3"], "task": ["qa", "qa", "passage"],
        "copies_requested": [4, 0, 1], "window": ["all"] * 3, "copies_seen": [4, 0, 1],
        "first_step": [10, -1, 75], "last_step": [80, -1, 75], "T": [100] * 3,
    })


def test_features_on_a_toy_exposure_table():
    f = P.features(_exposure(), 100, _nll_table(), "std-c")
    assert f["seq_id"].tolist() == ["s1", "s2", "s3"]
    assert f["copies"].tolist() == [4, 0, 1]
    assert f["log_freq"].tolist() == pytest.approx([math.log(5), 0.0, math.log(2)])
    assert f["recency"].tolist() == pytest.approx([0.2, 1.0, 0.25])
    assert f["hardness"].tolist() == pytest.approx([1.5, 4.0, 4.0])
    assert f["hardness_sfx"].tolist() == pytest.approx([3.0, 2.0, 5.0])
    # a frame with an explicit copies column uses it
    g = P.features(_exposure().drop(columns="copies_seen").assign(copies=[16, 0, 1]), 100, _nll_table(), None)
    assert g["log_freq"].iloc[0] == pytest.approx(math.log(17))


def test_features_bad_input():
    with pytest.raises(PredictingError, match="no NLL"):
        P.features(_exposure(), 100, _nll_table().query("seq_id != 's3'"), "std-c")
    with pytest.raises(PredictingError, match="copies"):
        P.features(_exposure().drop(columns=["copies_seen"]), 100, _nll_table(), "std-c")


# -- prediction model --------------------------------------------------------------------------


def test_feature_sets_are_the_seven_subsets_in_table_order():
    assert list(P.FEATURE_SETS) == [
        "log_freq + recency + hardness", "log_freq + recency", "log_freq + hardness", "recency + hardness",
        "log_freq", "recency", "hardness",
    ]
    subsets = {frozenset(c) for r in (1, 2, 3) for c in combinations(P.FEATURES, r)}
    assert {frozenset(v) for v in P.FEATURE_SETS.values()} == subsets
    for name, cols in P.FEATURE_SETS.items():
        assert name == " + ".join(cols)
    assert P.feature_columns("log_freq + hardness", "suffix") == ("log_freq", "hardness_sfx")
    assert P.feature_columns("random baseline") is None
    with pytest.raises(PredictingError, match="feature_set must be one of"):
        P.feature_columns("frequency")


def test_fit_score_is_ols_on_the_label():
    # OLS of y = [0,0,1,1] on x = [0,1,2,3]: slope 2/5 = 0.4, intercept 0.5 - 0.4*1.5 = -0.1
    s = P.fit_score(np.array([[0.0], [1.0], [2.0], [3.0]]), [0, 0, 1, 1], np.array([[4.0], [0.5]]))
    assert s.tolist() == pytest.approx([1.5, 0.1])
    # a constant feature gets no weight: every score is the mean label
    s = P.fit_score(np.ones((4, 1)), [0, 0, 0, 1], np.ones((3, 1)) * 7)
    assert s.tolist() == pytest.approx([0.25] * 3)


# -- AUC ---------------------------------------------------------------------------------------


def test_pooled_auc_and_per_task_auc_differ():
    y = [1, 0, 0, 1, 0, 1]
    s = [0.9, 0.8, 0.3, 0.1, 0.2, 0.5]
    task = ["A", "A", "A", "B", "B", "C"]
    # task A: positive 0.9 beats 0.8 and 0.3 -> 1; task B: 0.1 < 0.2 -> 0; task C: one class, skipped
    assert P.per_task_auc(y, s, task) == pytest.approx(0.5)
    # pooled: positives {0.9, 0.1, 0.5} vs negatives {0.8, 0.3, 0.2}: 3 + 0 + 2 wins of 9
    assert P.pooled_auc(y, s) == pytest.approx(5 / 9)
    # ties count half
    assert P.pooled_auc([1, 0], [0.3, 0.3]) == pytest.approx(0.5)
    with pytest.raises(PredictingError, match="both classes"):
        P.pooled_auc([1, 1], [0.1, 0.2])
    with pytest.raises(PredictingError, match="no task holds both classes"):
        P.per_task_auc([1, 0], [0.1, 0.2], ["A", "B"])


def test_random_scores_are_seeded():
    a = P.random_scores(5, 3)
    assert a.shape == (5,) and ((a >= 0) & (a < 1)).all()
    assert np.array_equal(a, P.random_scores(5, np.random.default_rng(3)))


def test_cross_model_percentile_baseline():
    nll = pd.DataFrame(
        {"target": [0.1, 9.0, 5.0], "B": [1.0, 2.0, 3.0], "C": [3.0, 1.0, 2.0]},
        index=pd.Index(["s1", "s2", "s3"], name="seq_id"),
    )
    got = P.cross_model_scores(nll, exclude="target")
    # B: lowest NLL s1 -> 3/3, s2 -> 2/3, s3 -> 1/3; C: s1 -> 1/3, s2 -> 3/3, s3 -> 2/3
    assert got.name == "cross_model"
    assert got.to_dict() == pytest.approx({"s1": 2 / 3, "s2": 5 / 6, "s3": 1 / 2})
    # ties share their average rank: B gives s1 and s2 (2.5)/3 each
    tied = P.cross_model_scores(nll.assign(B=[1.0, 1.0, 3.0]), exclude=["target", "C"])
    assert tied.tolist() == pytest.approx([2.5 / 3, 2.5 / 3, 1 / 3])
    with pytest.raises(PredictingError, match=r"\['D'\]"):
        P.cross_model_scores(nll, exclude="D")


def test_window_end_baseline():
    assert P.window_end_baseline("q1") == 0.25
    expected = [0.25, 0.5, 0.75, 1.0, 0.5, 1.0, 1.0]
    assert P.window_end_baseline(["q1", "q2", "q3", "q4", "early", "late", "all"]).tolist() == expected
    with pytest.raises(PredictingError, match="window must be one of"):
        P.window_end_baseline("q5")


# -- splits ------------------------------------------------------------------------------------


def test_random_split_sizes_and_stratification():
    y = np.array([1] * 10 + [0] * 40)
    train, test = P.random_split(y, seed=0)
    assert len(test) == 10 and len(train) == 40  # ceil(0.2 * 50)
    assert y[test].sum() == 2 and y[train].sum() == 8  # the 1 : 4 ratio on both sides
    assert sorted(np.concatenate([train, test]).tolist()) == list(range(50))
    again = P.random_split(y, seed=0)
    assert np.array_equal(again[1], test)
    # 7 examples: test ceil(1.4) = 2
    assert len(P.random_split([1, 1, 1, 0, 0, 0, 0], 0)[1]) == 2


def test_random_split_reproduces_the_source_test_sets():
    # the source's balanced targets: test n and positives follow from #pos = #neg alone
    table = P.load_paper_table("exp1_dataset")
    for row in table.itertuples():
        y = np.r_[np.ones(row.n_pos, int), np.zeros(row.n_neg, int)]
        _, test = P.random_split(y, 0)
        assert (len(test), int(y[test].sum())) == (row.test_n, row.test_pos)


def test_task_splits_leave_one_task_out():
    folds = P.task_splits(["b", "a", "b", "c"])
    assert [f[1].tolist() for f in folds] == [[1], [0, 2], [3]]  # tasks a, b, c
    assert [f[0].tolist() for f in folds] == [[0, 2, 3], [1, 3], [0, 1, 2]]
    with pytest.raises(PredictingError, match="at least 2 tasks"):
        P.task_splits(["a", "a"])


def test_group_kfold_never_splits_a_group():
    groups = np.array(["g1", "g1", "g2", "g3", "g3", "g3", "g4", "g5", "g5", "g6"])
    folds = P.group_kfold(groups, k=3)
    assert len(folds) == 3
    tested = np.concatenate([te for _, te in folds])
    assert sorted(tested.tolist()) == list(range(len(groups)))  # every example held out once
    for train, test in folds:
        assert not set(groups[train]) & set(groups[test])
        assert len(train) + len(test) == len(groups)
    with pytest.raises(PredictingError, match="k=7 folds need at least 7 groups, got 6"):
        P.group_kfold(groups, k=7)


def test_out_of_fold_pools_one_prediction_per_example():
    x = np.arange(8.0)
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    folds = P.group_kfold(np.arange(8), k=2)
    s = P.out_of_fold(x, y, folds)
    assert s.shape == (8,) and np.isfinite(s).all()


# -- evaluate ----------------------------------------------------------------------------------


def _task_frame():
    # within task A the feature ranks 3 of 4 pairs right, B all, C half; every training fold
    # has a positive slope (sums of cross-products 2, 1 and 3 when A, B, C are held out)
    return pd.DataFrame({
        "seq_id": [f"s{i}" for i in range(12)],
        "task": ["A"] * 4 + ["B"] * 4 + ["C"] * 4,
        "x": [1, 2, 3, 4, 5, 6, 7, 8, 2, 4, 6, 8],
        "extract": [0, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1],
    })


def test_evaluate_task_split_is_the_mean_of_per_task_aucs():
    f = _task_frame()
    assert P.evaluate(f, ["x"], "task") == pytest.approx((0.75 + 1.0 + 0.5) / 3)
    # the pooled AUC of the same feature is another number: positives {2, 4, 7, 8, 2, 8} vs
    # negatives {1, 3, 5, 6, 4, 6} win 1 + 2.5 + 6 + 6 + 1 + 6 = 22.5 of 36 comparisons
    assert P.pooled_auc(f["extract"], f["x"]) == pytest.approx(22.5 / 36)


def test_evaluate_random_and_group_splits_on_a_separable_feature():
    rng = np.random.default_rng(0)
    y = np.array([1] * 20 + [0] * 30)
    f = pd.DataFrame({
        "seq_id": np.repeat([f"s{i}" for i in range(25)], 2), "task": "qa", "extract": y,
        "log_freq": y * 2.0 + rng.random(50), "recency": rng.random(50), "hardness": rng.random(50),
    })
    assert P.evaluate(f, "log_freq", "random") == 1.0
    assert P.evaluate(f, "log_freq + recency + hardness", "random") == 1.0
    assert P.evaluate(f, "log_freq", "group") == 1.0
    r = P.evaluate(f, "random baseline", "group", seed=1)
    assert 0 <= r <= 1 and r == P.evaluate(f, "random baseline", "group", seed=1)
    # a feature with the same value everywhere ranks nothing
    assert P.evaluate(f.assign(c=3.0), ["c"], "group") == 0.5


def test_evaluate_rejects_too_few_positives_before_work():
    f = pd.DataFrame({"seq_id": list("abcdef"), "task": ["qa"] * 3 + ["mmlu"] * 3,
                      "x": np.arange(6.0), "extract": [1, 0, 0, 0, 0, 0]})
    for split in P.SPLITS:
        with pytest.raises(PredictingError, match=r"too few positives to split '1b-100b/64'.*1 positives"):
            P.evaluate(f, ["x"], split, name="1b-100b/64")
    two = f.assign(extract=[1, 1, 0, 0, 0, 0])
    with pytest.raises(PredictingError, match="too few groups to split 'cell'.*k=7"):
        P.evaluate(two, ["x"], "group", k=7, name="cell")
    with pytest.raises(PredictingError, match="split must be one of"):
        P.evaluate(two, ["x"], "kfold")
    with pytest.raises(PredictingError, match="NaN"):
        P.evaluate(two.assign(x=np.nan), ["x"], "group", k=2)


def test_over_seeds_mean_and_sd():
    mean, sd = P.over_seeds(lambda s: float(s))
    assert mean == 2.0 and sd == pytest.approx(math.sqrt(2.5))  # ddof=1 over 0..4
    table = P.over_seeds(lambda s: {"a": s, "b": 1.0}, seeds=[1, 3])
    assert table.loc["a", "mean"] == 2.0 and table.loc["a", "sd"] == pytest.approx(math.sqrt(2))
    assert table.loc["b", "sd"] == 0.0


def test_check_targets():
    ex = {"1b-100b": _exposure()}
    assert P.check_targets(["1b-100b"], ex) == ["1b-100b"]
    with pytest.raises(PredictingError, match=r"\['8b-100b'\] have no exposure table"):
        P.check_targets(["1b-100b", "8b-100b"], ex)


# -- Experiment 1 ------------------------------------------------------------------------------


def test_balanced_subsample_keeps_every_positive():
    f = pd.DataFrame({"seq_id": [f"s{i}" for i in range(10)], "extract": [1, 0, 0, 1, 0, 0, 0, 1, 0, 0]})
    b = P.balanced_subsample(f, seed=0)
    assert len(b) == 6 and b["extract"].sum() == 3
    assert set(b.loc[b.extract == 1, "seq_id"]) == {"s0", "s3", "s7"}
    assert b.index.is_monotonic_increasing
    assert b.equals(P.balanced_subsample(f, seed=0))
    # more positives than negatives: every negative kept, as many positives drawn
    flipped = P.balanced_subsample(f.assign(extract=1 - f.extract), seed=0)
    assert len(flipped) == 6 and set(flipped.loc[flipped.extract == 0, "seq_id"]) == {"s0", "s3", "s7"}
    with pytest.raises(PredictingError, match="both classes"):
        P.balanced_subsample(f.assign(extract=0), seed=0)


def test_exp1_stats():
    f = pd.DataFrame({"copies": [0, 4, 16, 0, 0, 1, 0, 64, 4, 0],
                      "extract": [1, 1, 1, 1, 1, 0, 0, 0, 0, 0]})
    st = P.exp1_stats({"toy": f})
    assert st.iloc[0].to_dict() == dict(target="toy", n_examples=10, n_pos=5, n_neg=5, controls_pos=3,
                                        controls_neg=2, test_n=2, test_pos=1)
    assert list(st.columns) == list(P.load_paper_table("exp1_dataset").columns)
    # one example of each class cannot be split: the counts stay, the test set is missing
    tiny = P.exp1_stats({"tiny": pd.DataFrame({"copies": [64, 4], "extract": [1, 0]})}).iloc[0]
    assert (tiny["n_pos"], tiny["n_neg"]) == (1, 1) and pd.isna(tiny["test_n"]) and pd.isna(tiny["test_pos"])


# -- Experiment 2 ------------------------------------------------------------------------------


def _ir_labels():
    runs = ["q1", "q2", "q3", "q4", "late"]
    table = {
        "s1": (4, [0, 0, 1, 1, 1]),   # pairs in every pool
        "s2": (16, [1, 1, 1, 1, 1]),  # never negative
        "s3": (1, [0, 0, 0, 0, 0]),   # never positive
        "s4": (0, [0, 1, 0, 1, 0]),   # a control: never inserted
        "s5": (64, [0, 0, 0, 1, 0]),  # only q4 positive
    }
    rows = [dict(seq_id=s, run=r, copies=c, extract=y, window=r, task="qa", last_step=10 * i + 5, T=100)
            for s, (c, ys) in table.items() for i, (r, y) in enumerate(zip(runs, ys))]
    return pd.DataFrame(rows)


def test_injection_range_pairs():
    labels = _ir_labels()
    pairs = P.injection_range_pairs(labels, ["q1", "q2", "q3", "q4"], seed=0)
    assert len(pairs) == 4 and pairs["pair"].tolist() == [0, 0, 1, 1]
    assert pairs["seq_id"].tolist() == ["s1", "s1", "s5", "s5"]
    assert pairs["extract"].tolist() == [1, 0, 1, 0]
    for _, g in pairs.groupby("pair"):
        assert g["copies"].nunique() == 1 and g["run"].nunique() == 2
    s1 = pairs[pairs.seq_id == "s1"]
    assert s1["run"].iloc[0] in {"q3", "q4"} and s1["run"].iloc[1] in {"q1", "q2"}
    s5 = pairs[pairs.seq_id == "s5"]
    assert s5["run"].iloc[0] == "q4" and s5["run"].iloc[1] in {"q1", "q2", "q3"}
    # with two runs each sequence has one possible pair: the same for every seed
    late = [P.injection_range_pairs(labels, ["q4", "late"], seed=s) for s in range(3)]
    assert late[0].equals(late[1]) and late[0].equals(late[2])
    assert late[0]["seq_id"].tolist() == ["s5", "s5"] and late[0]["run"].tolist() == ["q4", "late"]


def test_injection_range_pairs_bad_pool():
    with pytest.raises(PredictingError, match=r"run\(s\) \['q5'\] that do not exist"):
        P.injection_range_pairs(_ir_labels(), ["q1", "q5"], seed=0)
    with pytest.raises(PredictingError, match="at least two distinct runs"):
        P.injection_range_pairs(_ir_labels(), ["q1"], seed=0)
    odd = _ir_labels()
    odd.loc[(odd.seq_id == "s1") & (odd.run == "q2"), "copies"] = 16
    with pytest.raises(PredictingError, match="different copies"):
        P.injection_range_pairs(odd, ["q1", "q2"], seed=0)


def test_exp2_stats():
    pairs = P.injection_range_pairs(_ir_labels(), ["q1", "q2", "q3", "q4"], seed=0)
    st = P.exp2_stats({"quarters": pairs}).set_index("copies")
    assert st.index.tolist() == ["4", "64", "all"]
    assert st.loc["all", ["n_pairs", "n_examples", "n_pos", "n_neg", "n_tasks"]].tolist() == [2, 4, 2, 2, 1]
    # pool late: only s5 pairs (q4 positive, last step 35; late negative, last step 45):
    # 100 - 35 = 65 and 100 - 45 = 55 steps since the last copy
    late = P.exp2_stats({"late": P.injection_range_pairs(_ir_labels(), ["q4", "late"], seed=0)})
    assert late["copies"].tolist() == ["64", "all"]
    assert late.iloc[1][["steps_since_median", "steps_since_q1", "steps_since_q3"]].tolist() == \
        pytest.approx([60.0, 57.5, 62.5])
    assert list(late.columns) == list(P.load_paper_table("exp2_dataset").columns)[:10]
    counts = P.exp2_run_counts({"quarters": pairs})
    assert counts.set_index("run").loc["q4", "n_pos"] == pairs[(pairs.run == "q4")].extract.sum()
    assert counts["n_pos"].sum() == 2 and counts["n_neg"].sum() == 2


# -- Experiment 3 ------------------------------------------------------------------------------


def test_matched_cells_keeps_20_to_80_percent_positive_cells():
    f = pd.DataFrame({
        "target": ["A"] * 14 + ["B"] * 4 + ["A"] * 2,
        "copies": [4] * 5 + [16] * 4 + [64] * 5 + [4] * 4 + [0] * 2,
        "extract": [1, 0, 0, 0, 0] + [1, 1, 1, 1] + [1, 1, 1, 1, 0] + [1, 0, 1, 0] + [1, 0],
    })
    m = P.matched_cells(f)
    cells = m.groupby(["target", "copies"])["pos_rate"].first().to_dict()
    # (A, 4) 0.2 and (A, 64) 0.8 are kept (closed interval); (A, 16) is all positive; controls dropped
    assert cells == pytest.approx({("A", 4): 0.2, ("A", 64): 0.8, ("B", 4): 0.5})
    assert (m["copies"] >= 1).all() and len(m) == 14


def _cell():
    return pd.DataFrame({
        "target": "A", "copies": 4, "seq_id": [f"s{i}" for i in range(8)],
        "task": ["a", "a", "a", "a", "a", "a", "b", "b"],
        "last_step": [105, 150, 199, 120, 130, 250, 110, 160],
        "extract": [1, 0, 0, 1, 1, 1, 0, 1],
    })


def test_match_strata_is_exactly_balanced_per_stratum():
    m = P.match_strata(_cell(), step_bin=100, seed=0)
    counts = m.groupby(["target", "copies", "task", "stratum"])["extract"].agg(["sum", "size"])
    # (a, 1): 3 positives, 2 negatives -> 2 + 2; (a, 2): positives only -> dropped; (b, 1): 1 + 1
    assert counts.index.tolist() == [("A", 4, "a", 1), ("A", 4, "b", 1)]
    assert counts["size"].tolist() == [4, 2] and (counts["sum"] * 2 == counts["size"]).all()
    assert set(m.loc[m.extract == 0, "seq_id"]) == {"s1", "s2", "s6"}
    assert "s5" not in set(m["seq_id"])
    assert m.equals(P.match_strata(_cell(), step_bin=100, seed=0))
    # a finer bin separates 105/120/130 from 150/199: (a, 10) 3 pos and (a, 15), (a, 19) negatives only
    # a finer bin leaves no stratum with both classes: (a, 10), (a, 12), (a, 13), (a, 25), (b, 16)
    # hold positives only, (a, 15), (a, 19), (b, 11) negatives only
    assert len(P.match_strata(_cell(), step_bin=10, seed=0)) == 0
    with pytest.raises(PredictingError, match="step_bin"):
        P.match_strata(_cell(), step_bin=0)
    with pytest.raises(PredictingError, match="inserted sequences only"):
        P.match_strata(_cell().assign(last_step=-1))


def test_residual_recency_auc_by_hand():
    matched = pd.DataFrame({
        "task": ["a"] * 4 + ["b"] * 2, "stratum": [1] * 4 + [2] * 2,
        "last_step": [105, 110, 101, 110, 250, 260],
        "extract": [1, 1, 0, 0, 1, 0],
    })
    # stratum a: positives {105, 110} vs negatives {101, 110}: 1 + 0 + 1 + 0.5 = 2.5 of 4 -> 0.625
    # stratum b: 250 < 260 -> 0; size-weighted: (4 * 0.625 + 2 * 0) / 6
    assert P.residual_recency_auc(matched) == pytest.approx(2.5 / 6)
    # a stratum of one class does not count
    extra = pd.DataFrame({"task": ["c"], "stratum": [3], "last_step": [300], "extract": [1]})
    assert P.residual_recency_auc(pd.concat([matched, extra])) == pytest.approx(2.5 / 6)
    with pytest.raises(PredictingError, match="stratum"):
        P.residual_recency_auc(matched.drop(columns="stratum"))


def test_exp3_stats():
    matched = P.match_strata(P.matched_cells(_cell().assign(T=1000)), step_bin=100, seed=0)
    st = P.exp3_stats(matched)
    assert list(st.columns)[:-1] == list(P.load_paper_table("exp3_dataset").columns)
    cell, pooled = st.iloc[0], st.iloc[1]
    assert cell["cell"] == "A" and cell["copies"] == 4 and cell["pos_rate_before"] == pytest.approx(5 / 8)
    counts = cell[["n_examples", "n_pos", "n_neg", "n_tasks", "n_strata"]].tolist()
    assert counts == [6, 3, 3, 2, 2]
    assert pooled["cell"] == "pooled" and np.isnan(pooled["copies"]) and pooled["n_sequences"] == 6
    assert 0 <= cell["residual_recency_auc"] <= 1


# -- the source's tables -----------------------------------------------------------------------


def test_paper_tables_load_with_spot_checks():
    t = P.load_paper_table("exp1_dataset").set_index("target")
    assert t.loc["8b-100b", "n_examples"] == 20794 and t.loc["ir50_75", "controls_neg"] == 72
    assert (t["n_pos"] + t["n_neg"] == t["n_examples"]).all()

    targets = ["1b-100b", "8b-100b", "1b-500b", "8b-500b", "ir50_75", "ir75_100", "ir50_100"]
    rows = list(P.FEATURE_SETS) + ["cross-model baseline", "random baseline", "sd (3 features)"]
    for name in ("exp1_random", "exp1_task"):
        t = P.load_paper_table(name)
        assert list(t.columns) == ["features"] + targets and t["features"].tolist() == rows
    r = P.load_paper_table("exp1_random").set_index("features")
    assert r.loc["log_freq + recency + hardness", "1b-100b"] == 0.923
    assert r.loc["cross-model baseline", "1b-500b"] == 0.904
    assert P.load_paper_table("exp1_task").set_index("features").loc["hardness", "ir50_75"] == 0.284

    d = P.load_paper_table("exp2_dataset").set_index(["pool", "copies"])
    assert d.loc[("all6", "16"), "steps_since_median"] == 1803
    assert d.loc[("late", "all"), "steps_since_q3"] == 1489
    for pool in ("quarters", "all6", "late"):
        total = d.loc[(pool, "all")]
        per_copies = d.loc[pool].drop(index="all")
        assert per_copies["n_pairs"].sum() == total["n_pairs"]
        pos = total.filter(like="pos_").sum()
        neg = total.filter(like="neg_").sum()
        assert pos == neg == total["n_pos"]  # the examples-per-run table adds up
    a = P.load_paper_table("exp2_auc").set_index(["pool", "features"])
    assert a.loc[("all6", "recency + hardness"), "pooled"] == 0.976
    assert a.loc[("late", "random baseline"), "copies_1"] == 0.515
    assert len(a) == 30

    e = P.load_paper_table("exp3_dataset").set_index("cell")
    assert e.loc["8b-100b", "n_strata"] == 622 and e.loc["ir75_100", "pos_rate_before"] == 0.735
    assert e.drop(index="pooled")["n_strata"].sum() == e.loc["pooled", "n_strata"] == 1520
    assert e.drop(index="pooled")["n_examples"].sum() == e.loc["pooled", "n_examples"]
    assert np.isnan(e.loc["pooled", "copies"])
    g = P.load_paper_table("exp3_group").set_index(["features", "hardness"])
    assert g.loc[("hardness", "suffix"), "ir50_100"] == 0.622
    assert g.loc[("cross-model baseline", "—"), "pooled"] == 0.617
    k = P.load_paper_table("exp3_task").set_index(["features", "hardness"])
    assert k.loc[("sd (3 features)", "full sequence"), "8b-500b"] == 0.036
    assert len(g) == len(k) == 15

    with pytest.raises(PredictingError, match="name must be one of"):
        P.load_paper_table("table1")


def test_sequence_scores_cut_prefix_and_suffix_and_label(tmp_path):
    from analysis.core.cache import QueryCache
    from analysis.models import Model

    class Scripted(Model):
        """Scores a sequence of n tokens: log-probability -1 everywhere; the argmax is
        right except at the positions given for that sequence."""

        backend = "scripted"
        wrong = {7: [9], 8: []}  # keyed by the first token id

        def _generate(self, requests):
            yield from ()

        def _score_ids(self, sequences):
            for i, ids in enumerate(sequences):
                top = [True] * (len(ids) - 1)
                for j in self.wrong[ids[0]]:
                    top[j] = False
                yield i, ([-1.0] * (len(ids) - 1), top)

    model = Scripted("scripted", cache=QueryCache(tmp_path / "q.sqlite"))
    # 20 tokens: P = 10, L = 10; the suffix is scored at positions 9..18
    seqs = {"a": [7] + list(range(100, 119)), "b": [8] + list(range(200, 219))}
    out = P.sequence_scores(model, seqs).set_index("seq_id")
    assert (out.loc["a", "P"], out.loc["a", "L"]) == (10, 10)
    assert out.loc["a", "extract"] == 0 and out.loc["a", "suffix_acc"] == pytest.approx(0.9)
    assert out.loc["b", "extract"] == 1 and out.loc["b", "suffix_acc"] == 1.0
    assert out.loc["a", "nll"] == pytest.approx(1.0) and out.loc["a", "nll_suffix"] == pytest.approx(1.0)
    # a wrong argmax in the prefix does not count
    Scripted.wrong[8] = [3]
    again = P.sequence_scores(Scripted("other", cache=QueryCache(tmp_path / "r.sqlite")), {"b": seqs["b"]})
    assert again["extract"].iloc[0] == 1
    with pytest.raises(PredictingError, match="at least 2 tokens"):
        P.sequence_scores(model, {"c": [1]})


# -- the lab's runs in the source's roles --------------------------------------------------------


def test_counterfactual_is_the_standard_run_of_the_same_shape_and_budget():
    from analysis.lab import ladder

    for profile in ("smoke", "default"):  # every target of every profile has its twin
        table = ladder.get_profile(profile).table()
        assert all(P.counterfactual(table, t) for t in P.LAB_TARGETS)
    runs = ladder.get_profile("default").table()
    assert P.counterfactual(runs, "pert-l2x") == "std-l2x"
    assert P.counterfactual(runs, "pert-s1x") == "std-s1x"
    # the injection-range runs share one counterfactual: the standard run of their shape and budget
    # (std-range, or a perturbed twin such as std-l2x when one has that shape and budget)
    (twin,) = {P.counterfactual(runs, r) for r in P.LAB_POOLS["all6"]}
    shape = ["n_layer", "d_model", "n_head", "d_ff", "context", "tokens"]
    row = runs.set_index("run")
    assert row.loc[twin, "family"] == "standard"
    assert all((row.loc[twin, shape] == row.loc[r, shape]).all() for r in P.LAB_POOLS["all6"])
    with pytest.raises(PredictingError, match="not a lab run"):
        P.counterfactual(runs, "pert-x")
    assert set(P.LAB_TARGETS) <= set(runs["run"])
    assert {r for pool in P.LAB_POOLS.values() for r in pool} <= set(runs["run"])


def _scores():
    # scores of 3 sequences under a target, two standard runs and another injected run
    rows = []
    for run, nll, sfx, ext in [("pert-a", [1, 2, 3], [0.1, 2.0, 3.0], [1, 0, 0]),
                               ("pert-b", [1, 1, 1], [0.5, 0.2, 0.9], [1, 1, 0]),
                               ("std-a", [2, 4, 6], [2, 4, 6], [0, 0, 0]),
                               ("std-b", [4, 4, 4], [8, 8, 8], [0, 0, 0])]:
        for i, seq in enumerate(["s1", "s2", "s3"]):
            rows.append({"run": run, "model": f"lab:{run}", "seq_id": seq, "nll": nll[i],
                         "nll_suffix": sfx[i], "suffix_acc": 1.0 - sfx[i] / 10, "extract": ext[i]})
    return pd.DataFrame(rows)


def test_target_frame_joins_label_features_and_baselines():
    exp = _exposure().assign(window=["q4", "q4", "q4"])
    f = P.target_frame("pert-a", _scores(), {"pert-a": exp}, ["std-a", "std-b"], "std-a",
                       ["pert-a", "pert-b"]).set_index("seq_id")
    assert f["extract"].tolist() == [1, 0, 0]
    assert f["nll_suffix"].tolist() == pytest.approx([0.1, 2.0, 3.0])
    # hardness over std-b alone (std-a is the counterfactual)
    assert f["hardness"].tolist() == pytest.approx([4.0, 4.0, 4.0])
    assert f["hardness_sfx"].tolist() == pytest.approx([8.0, 8.0, 8.0])
    assert f["recency"].tolist() == pytest.approx([0.2, 1.0, 0.25])
    # cross-model: percentile of -nll_suffix under pert-b alone: 0.2 best (1), 0.5 (2/3), 0.9 (1/3)
    assert f["cross_model"].tolist() == pytest.approx([2 / 3, 1.0, 1 / 3])
    assert f["window_end"].tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(PredictingError, match="no exposure table"):
        P.target_frame("pert-b", _scores(), {"pert-a": exp}, ["std-a"], "std-a", [])
    with pytest.raises(PredictingError, match="no scores for the standard"):
        P.target_frame("pert-a", _scores(), {"pert-a": exp}, ["std-z"], "std-z", [])


def test_range_labels_stack_one_frame_per_run():
    exp = _exposure()
    lab = P.range_labels(["pert-a", "pert-b"], _scores(), {"pert-a": exp, "pert-b": exp.assign(window="q1")},
                         ["std-a", "std-b"], "std-b")
    assert lab.groupby("run")["extract"].apply(list).to_dict() == {"pert-a": [1, 0, 0], "pert-b": [1, 1, 0]}
    assert lab.query("run == 'pert-b'")["window_end"].tolist() == [0.25] * 3
    # hardness over std-a alone
    assert lab.query("run == 'pert-a'")["hardness"].tolist() == pytest.approx([2.0, 4.0, 6.0])


def test_auc_rows_fills_a_table_column_and_reports_unsplittable_frames():
    y = np.array([1] * 20 + [0] * 30)

    def frame(seed):
        r = np.random.default_rng(seed)
        return pd.DataFrame({"seq_id": [f"s{i}" for i in range(50)], "task": "qa", "extract": y,
                             "log_freq": y * 2.0 + r.random(50), "recency": r.random(50),
                             "hardness": r.random(50), "hardness_sfx": y + r.random(50) * 0.5,
                             "cross_model": r.random(50)})

    t = P.auc_rows(frame, "group", ["cross-model baseline", "random baseline"], seeds=[0, 1],
                   hardness_rows=("full", "suffix")).set_index(["features", "hardness"])
    assert t.loc[("log_freq", "—"), "auc"] == 1.0 and t.loc[("log_freq", "—"), "sd"] == 0.0
    assert t.loc[("hardness", "suffix"), "auc"] == 1.0  # the suffix measure separates by construction
    assert 0.2 < t.loc[("hardness", "full sequence"), "auc"] < 0.8
    assert len(t) == 7 + 4 + 2 + 2  # 7 sets, the 4 with hardness twice, 2 baselines, 2 sd rows
    for m in ("full sequence", "suffix"):
        assert t.loc[("sd (3 features)", m), "auc"] == t.loc[("log_freq + recency + hardness", m), "sd"]
    # the random split keeps one split for every seed; the random baseline changes with the seed
    r = P.auc_rows(frame, "random", ["random baseline"], seeds=[0, 1, 2]).set_index("features")
    assert r.loc["log_freq", "auc"] == 1.0 and r.loc["random baseline", "sd"] > 0
    few = P.auc_rows(lambda s: frame(s).assign(extract=[1] + [0] * 49), "group", [], seeds=[0])
    assert few["auc"].isna().all() and few["note"].str.contains("too few positives").all()


# -- the chapter's steps: setup ------------------------------------------------------------------


def _run_table():
    rows = [
        ("std-a", "standard", 16, 100, False, ""),
        ("std-b", "standard", 32, 100, False, ""),
        ("pert-a", "perturbed", 16, 100, True, ""),
        ("pert-b", "perturbed", 32, 100, True, ""),
        ("std-range", "standard", 32, 200, False, ""),
        ("range-q4", "range", 32, 200, True, "q4"),
    ]
    return pd.DataFrame(
        [
            dict(
                run=r,
                family=f,
                n_layer=2,
                d_model=d,
                n_head=1,
                d_ff=4 * d,
                context=128,
                tokens=t,
                steps=10,
                inject=i,
                window=w,
            )
            for r, f, d, t, i, w in rows
        ]
    )


def test_check_pools_checks_every_pool():
    assert P.check_pools({"p": ("a", "b")}, ["a", "b", "c"]) == {"p": ["a", "b"]}
    with pytest.raises(PredictingError, match=r"\['z'\] that do not exist"):
        P.check_pools({"p": ("a", "b"), "q": ("a", "z")}, ["a", "b"])


def test_injected_sequences_and_their_lengths():
    table = pd.DataFrame({"seq_id": ["x", "y"], "text": ["a b c", "d"]})
    vocab = {"a": 1, "b": 2, "c": 3, "d": 4}

    def tokenizer(texts, add_special_tokens=True):
        assert add_special_tokens is False
        return {"input_ids": [[vocab[w] for w in t.split()] * 20 for t in texts]}

    seqs = P.injected_sequences(table, tokenizer)
    assert seqs == {"x": [1, 2, 3] * 20, "y": [4] * 20}
    lens = P.sequence_lengths(seqs).set_index("seq_id")
    # 60 tokens: P = min(32, 30) = 30, L = min(32, 30) = 30; 20 tokens: 10 and 10
    assert lens.loc["x"].tolist() == [60, 30, 30] and lens.loc["y"].tolist() == [20, 10, 10]


def test_injection_design_groups_levels_with_the_same_count():
    rows = [(t, c) for t in ("qa", "bio") for c, n in ((0, 4), (1, 4), (64, 4), (256, 1)) for _ in range(n)]
    table = pd.DataFrame(rows, columns=["task", "copies"])
    assert (
        P.injection_design(table)
        == "2 tasks; per task, 4 sequences at 0, 1 and 64 copies and 1 at 256 copies"
    )
    one = pd.DataFrame({"task": ["qa", "qa", "bio", "bio"], "copies": [0, 16, 0, 16]})
    assert P.injection_design(one) == "2 tasks; per task, 1 sequence at 0 and 16 copies"
    # a level whose tasks differ gives the range
    uneven = pd.DataFrame({"task": ["qa", "qa", "bio"], "copies": [4, 4, 4]})
    assert P.injection_design(uneven) == "2 tasks; per task, 1–2 sequences at 4 copies"


def test_setup_table_and_range_runs_sentence():
    runs = _run_table()
    ex = {"pert-a": _exposure(), "range-q4": _exposure().assign(window="q4")}
    t = P.setup_table(
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
    assert P.range_runs_sentence(runs, ["range-q4"]) == (
        "The lab's injection-range runs train the large model on 200 tokens (2 times the perturbed runs' "
        "largest budget), with `std-range` as their counterfactual."
    )
    small = runs.assign(d_model=[16, 32, 16, 32, 16, 16], tokens=100).query("run != 'std-range'")
    small = small.assign(d_ff=4 * small["d_model"])
    assert P.range_runs_sentence(small, ["range-q4"]) == (
        "The lab's injection-range runs train the small model on 100 tokens (the perturbed runs' largest "
        "budget), with `std-a` as their counterfactual."
    )


def test_run_positives():
    scores = pd.DataFrame({"run": ["a", "a", "b", "c"], "extract": [1, 1, 0, 1]})
    assert P.run_positives(scores, ["a", "b", "c", "z"]) == "2, 0, 1 and 0"


# -- labels --------------------------------------------------------------------------------------


def test_target_frames_use_the_run_table_roles():
    runs = _run_table().query("run not in ['std-range', 'range-q4']")
    exp = _exposure().assign(window="q4")
    frames = P.target_frames(["pert-a"], _scores(), {"pert-a": exp, "pert-b": exp}, runs)
    f = frames["pert-a"].set_index("seq_id")
    # counterfactual std-a (same width and budget) is left out: hardness over std-b alone
    assert f["hardness"].tolist() == pytest.approx([4.0, 4.0, 4.0])
    # cross-model over the other injected run, pert-b: percentile of -nll_suffix 0.5, 0.2, 0.9
    assert f["cross_model"].tolist() == pytest.approx([2 / 3, 1.0, 1 / 3])
    assert f["extract"].tolist() == [1, 0, 0]
    with pytest.raises(PredictingError, match="no exposure table"):
        P.target_frames(["pert-b", "std-a"], _scores(), {"pert-b": exp}, runs)


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
    long = P.stack_frames(frames, {"pert-a": "1b-100b"})
    assert long["target"].tolist() == ["1b-100b", "pert-b", "pert-b"] and long["x"].tolist() == [1, 2, 3]
    s = P.extraction_summary(_long())
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
    r = P.extraction_rates(_long())
    assert r["positives"].tolist() == ["1 / 6", "2 / 6"]
    assert r.loc["A", 16] == 0.5 and r.loc["B", 16] == 1.0 and r.loc["B", 4] == 0.0


def test_lowest_level_best_cell_and_controls():
    long = _long()
    assert P.lowest_extracted_level(long) == "16 copies"
    assert P.lowest_extracted_level(long.assign(extract=[0, 0, 1] + [0] * 9)) == "4 copies"
    assert P.lowest_extracted_level(long.assign(copies=1)) == "1 copy"
    assert P.lowest_extracted_level(long.assign(extract=0)) == "none (no sequence is extracted)"
    assert P.best_cell(P.extraction_summary(long)) == "B at 16 copies (100%)"
    assert P.best_cell(P.extraction_summary(long.assign(extract=0))) == "none (no cell extracts anything)"
    paper = pd.DataFrame({"target": ["x", "y", "z"], "controls_pos": [0, 66, 497]})
    assert P.control_sentence(long, paper) == (
        "No lab model reproduces a sequence it never saw, whereas the source's targets extract controls in "
        "2 of its 3 Experiment 1 sets (0 to 497 each)."
    )
    leaky = long.assign(extract=[1, 1] + [0] * 10)
    assert P.control_sentence(leaky, paper) == (
        "2 never-inserted controls are extracted: text the models could predict without seeing it, as the "
        "source's targets extract controls in 2 of its 3 Experiment 1 sets (0 to 497 each)."
    )


def test_suffix_sentence_tests_unextracted_cells_against_controls():
    # cells with nothing extracted: (A, 4) and (B, 4), suffix accuracy {0.5, 0.6, 0.4, 0.7};
    # controls {0, 0.05, 0.1, 0.15}: every cell value is above every control, so the one-sided
    # Mann-Whitney p is 1 / C(8, 4) = 1/70
    assert P.suffix_sentence(_long()) == (
        "In the 2 inserted (target, copies) cells where nothing is extracted, the mean suffix accuracy is "
        "0.550, against 0.075 for the never-inserted controls (one-sided Mann–Whitney p = 0.014): below the "
        "label's all-tokens threshold, the models have learned part of each suffix."
    )
    # the same accuracies on both sides: no sign of partial learning
    flat = _long().assign(suffix_acc=[0.1, 0.2, 0.1, 0.2, 1.0, 0.9, 0.1, 0.2, 0.1, 0.2, 1.0, 1.0])
    assert P.suffix_sentence(flat).endswith(
        ": no sign that the models learned part of the suffixes they do not extract."
    )
    assert "0.150, against 0.150" in P.suffix_sentence(flat)
    every = _long().query("copies != 4")
    assert P.suffix_sentence(every).startswith("Every inserted (target, copies) cell extracts some sequence")
    assert P.suffix_sentence(_long().query("copies != 0")).endswith(
        "with no never-inserted controls, there is nothing to compare it with."
    )


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
    assert P.main_target({"pert-s1x": "1b-100b", "pert-l2x": "8b-500b"}) == "8b-500b"
    assert P.main_target({"pert-s1x": "1b-100b", "range-q4": "ir75_100"}) == "1b-100b"
    assert P.exp13_targets(["pert-s1x", "range-q1", "range-q4", "range-early", "range-q2"]) == [
        "pert-s1x",
        "range-q4",
    ]


def test_balanced_samples_and_exp1_aucs():
    frames = {"pert-a": _target(6), "pert-b": _target(0)}
    samples = P.balanced_samples(frames, seed=0, names={"pert-a": "1b-100b"})
    assert list(samples) == ["1b-100b"]  # pert-b has no positive
    assert len(samples["1b-100b"]) == 12 and samples["1b-100b"]["extract"].sum() == 6
    aucs = P.exp1_aucs(frames, "random", seeds=[0, 1], names={"pert-a": "1b-100b"})
    assert list(aucs) == ["1b-100b", "pert-b"]
    a = aucs["1b-100b"].set_index("features")
    assert a.loc["log_freq", "auc"] == 1.0 and a.loc["log_freq", "note"] == ""
    assert a.index.tolist() == list(P.FEATURE_SETS) + [
        "cross-model baseline",
        "random baseline",
        "sd (3 features)",
    ]
    assert aucs["pert-b"]["auc"].isna().all() and "both classes" in aucs["pert-b"]["note"].iloc[0]
    d = P.exp1_dataset(samples)
    assert d[["target", "n_examples", "n_pos", "n_neg"]].values.tolist() == [["1b-100b", 12, 6, 6]]
    assert P.exp1_dataset({}).empty


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
    w = P.wide_auc(cols)
    assert w.columns.tolist() == ["x", "y"] and w.loc["log_freq", "x"] == 0.9 and w["y"].isna().all()
    assert P.wide_auc({}) is None
    assert P.wide_auc(cols, ("features", "hardness")).index.tolist()[0] == ("log_freq", "—")
    assert P.auc_notes(cols) == {"y": "too few positives"}
    assert P.notes_markdown({"y": "too few", "z": "no tasks"}, "group, ") == (
        "- *group, y*: not computed: too few\n- *group, z*: not computed: no tasks"
    )
    assert P.notes_markdown({}) == ""
    assert P.auc_cell(w, "log_freq", "x") == "0.900"
    assert (
        P.auc_cell(w, "log_freq", "y") == P.auc_cell(w, "recency", "x") == P.auc_cell(None, "a", "b") == "—"
    )
    assert P.computed_columns(w) == ["x"] and P.computed_columns(None) == []
    assert P.computed_sentence(w, 2) == (
        "The AUC could be computed for 1 of 2 targets; the others cannot be split (their notes "
        "above say why)."
    )
    assert P.computed_sentence(w[["x"]], 1) == "The AUC could be computed for every target."


def test_auc_panels_put_the_source_beside_the_lab():
    s, lab = pd.DataFrame({"a": [1.0]}), pd.DataFrame({"a": [0.5]})
    panels = P.auc_panels({"random split": (s, lab), "late": (None, lab)})
    assert list(panels) == ["source, random split", "lab, random split", "source, late", "lab, late"]
    assert panels["source, random split"] is s and panels["source, late"] is None


def _wide(freq, hard, sd):
    return pd.DataFrame(
        [freq, hard, sd],
        index=["log_freq", "hardness", "sd (3 features)"],
        columns=[f"t{i}" for i in range(len(freq))],
        dtype=float,
    )


def test_exp1_verdict_counts_log_freq_against_hardness():
    paper = _wide([0.9, 0.9, 0.6], [0.5, 0.55, 0.77], [0.002, 0.003, 0.05])  # the source: 2 of 3, most
    tail = "where it does for 2 of 3 targets and hardness alone reaches 0.500 to 0.770."
    lab = _wide([0.8, 0.4, np.nan], [0.6, 0.7, np.nan], [0.1, 0.2, np.nan])  # 1 of 2 computed: half
    assert P.exp1_verdict(lab, paper) == (
        "log_freq alone ranks better than hardness alone for 1 of the 2 targets with numbers, unlike the "
        "source, " + tail
    )
    lab2 = _wide([0.8, 0.9, np.nan], [0.6, 0.7, np.nan], [0.1, 0.2, np.nan])
    assert P.exp1_verdict(lab2, paper) == (
        "log_freq alone ranks better than hardness alone for 2 of the 2 targets with numbers, as in the "
        "source, " + tail
    )
    assert P.exp1_verdict(lab.iloc[:, 2:], paper) == (
        "No target has enough positives for this experiment on this lab, so it cannot compare frequency with "
        "hardness; in the source, log_freq alone ranks better than hardness alone for 2 of 3 targets, with "
        "hardness alone at 0.500 to 0.770."
    )


def test_seed_spread_sentence_compares_medians():
    paper = _wide([0.9] * 3, [0.5] * 3, [0.002, 0.003, 0.05])
    paper_d = pd.DataFrame({"n_examples": [300, 7052, 9072]})
    lab = _wide([0.8, 0.9, np.nan], [0.6, 0.7, np.nan], [0.1, 0.3, np.nan])
    lab_d = pd.DataFrame({"n_examples": [10, 20]})
    assert P.seed_spread_sentence(lab, paper, lab_d, paper_d) == (
        "The lab's sets hold a median of 15 examples per target, the source's 7,052, so the lab's 3-feature "
        "AUC moves between seeds far more than the source's (median sd 0.200 against 0.003; the sd row)."
    )
    close = _wide([0.8], [0.6], [0.004])
    assert "moves between seeds about as much as the source's" in P.seed_spread_sentence(
        close, paper, lab_d, paper_d
    )
    assert P.seed_spread_sentence(lab.iloc[:, 2:], paper, pd.DataFrame(), paper_d) == (
        "The lab has no target with both classes, so no sd over seeds to compare with the source's "
        "median 0.003."
    )


# -- Experiment 2 in the chapter -----------------------------------------------------------------


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
                    window_end=P.window_end_baseline(window),
                    last_step=100 - int(rec * 100),
                    T=100,
                )
            )
    return pd.DataFrame(rows)


def test_range_runs_rates_and_levels():
    pools = {"quarters": ("range-q1", "range-q2"), "late": ("range-q2", "range-late")}
    assert P.range_runs(pools) == ["range-q1", "range-q2", "range-late"]
    labels = _range_labels()
    rates = P.run_extraction_rates(labels, ["range-q4", "range-q1"])
    assert rates.index.tolist() == ["range-q4", "range-q1"]
    assert rates.loc["range-q1"].tolist() == [0.0, 1.0] and rates.loc["range-q4"].tolist() == [1.0, 1.0]
    assert P.inserted_levels(labels.assign(copies=[0, 0] + [4] * 14)) == [4]
    assert P.extracted_per_run(labels, ["range-q1", "range-q4", "range-q2"]).tolist() == [2, 8, 0]


def test_pool_pairs_exp2_aucs_and_dataset():
    labels = _range_labels()
    pools = {"quarters": ("range-q1", "range-q4")}
    pairs = P.pool_pairs(labels, pools, seeds=[0, 1])
    assert list(pairs) == ["quarters"] and list(pairs["quarters"]) == [0, 1]
    assert pairs["quarters"][0]["seq_id"].unique().tolist() == [
        f"s{i}" for i in range(6)
    ]  # 16 copies: no pair
    aucs = P.exp2_aucs(pairs, [4, 16], seeds=[0, 1])
    assert list(aucs["quarters"]) == ["copies_4", "copies_16", "pooled"]
    t = aucs["quarters"]["copies_4"].set_index("features")
    assert t.loc["recency", "auc"] == 1.0 and t.loc["window-end baseline", "auc"] == 1.0
    assert t.loc["log_freq", "auc"] == 0.5  # constant within a pair
    assert aucs["quarters"]["copies_16"]["auc"].isna().all()
    assert P.exp2_notes_markdown(aucs) == (
        "- *quarters*: no pairs at 16 copies (no sequence at that level is positive under one run "
        "of the pool "
        "and negative under another)"
    )
    d = P.exp2_dataset(pairs)
    assert d[["pool", "copies", "n_pairs", "n_pos", "n_neg"]].values.tolist() == [
        ["quarters", "4", 6, 6, 6],
        ["quarters", "all", 6, 6, 6],
    ]
    counts = P.exp2_run_table(pairs)
    assert counts.values.tolist() == [["quarters", "range-q4", 6, 0], ["quarters", "range-q1", 0, 6]]
    per_run = P.examples_per_run(counts, ["quarters", "late"], ["range-q1", "range-q4", "range-late"])
    assert per_run.values.tolist() == [["0 / 6", "6 / 0", "—"], ["—", "—", "—"]]
    assert P.pair_counts(d, ["quarters", "late"]) == {"quarters": 6, "late": 0}
    empty = {"late": {0: labels.iloc[:0]}}
    assert P.exp2_dataset(empty).empty and P.exp2_run_table(empty).empty
    assert P.pair_counts(P.exp2_dataset(empty), ["late"]) == {"late": 0}


def test_paper_exp2_tables_and_pair_positives():
    t = P.paper_exp2_tables()
    assert list(t) == ["quarters", "all6", "late"] and t["late"].loc["recency", "pooled"] == 0.581
    q = P.paper_pair_positives("quarters")
    assert q.to_dict() == {"range-q1": 1, "range-q2": 2, "range-q3": 48, "range-q4": 4561}
    assert P.paper_pair_positives("late").to_dict() == {"range-q4": 907, "range-late": 780}
    with pytest.raises(PredictingError, match="no pool"):
        P.paper_pair_positives("halves")


def test_window_gradient_and_order():
    rates = pd.DataFrame({1: [0.0, 0.0], 16: [0.25, 0.75]}, index=["range-q1", "range-q4"])
    assert P.window_gradient(rates, ["range-q1", "range-q4"]) == "at 16 copies 25%, 75%"
    assert P.window_gradient(rates * 0, ["range-q1", "range-q4"]) == "nothing at any copy level"
    src = pd.Series([1, 2, 48, 4561])
    tail = ("the source, whose first quarter's run is the positive of 1 of its seed-0 pairs and the "
            "last quarter's of 4,561.")
    assert P.window_order_sentence(pd.Series([0, 2, 3, 7]), src) == (
        "The later the window, the more is extracted (0, 2, 3 and 7 sequences), as in " + tail
    )
    assert P.window_order_sentence(pd.Series([3, 2, 3, 7]), src) == (
        "The extraction does not grow with the window's end (3, 2, 3 and 7 sequences), unlike " + tail
    )
    assert P.window_order_sentence(pd.Series([0, 0, 0, 0]), src) == (
        "No quarter extracts anything, so the order by window cannot be seen, unlike in " + tail
    )


def test_pair_levels_and_pool_split_sentences():
    d = pd.DataFrame({"copies": ["16", "64", "all"]})
    assert P.pair_levels_sentence(d, [1, 4, 16, 64]) == (
        "Only the 16 and 64 copy levels change label between runs, so the other levels (1 and 4 copies) have "
        "no pairs."
    )
    assert P.pair_levels_sentence(pd.DataFrame({"copies": ["64", "all"]}), [1, 64]) == (
        "Only the 64 copy level changes label between runs, so the other levels (1 copy) have no pairs."
    )
    assert P.pair_levels_sentence(d, [16, 64]) == (
        "Every copy level changes label between some runs, so every level has pairs."
    )
    assert P.pair_levels_sentence(pd.DataFrame(), [16]) == (
        "No copy level changes label between runs, so there are no pairs."
    )
    assert P.pool_split_sentence({"quarters": 8, "all6": 10}) == (
        "Every pool has enough pairs for the grouped 5-fold split."
    )
    assert P.pool_split_sentence({"quarters": 8, "all6": 10, "late": 3}) == (
        "Pools with fewer than 5 pairs cannot be split 5 ways by sequence, so only quarters and "
        "all6 have lab "
        "numbers."
    )
    assert P.pool_split_sentence({"quarters": 8, "late": 3}).endswith("so only quarters has lab numbers.")
    assert P.pool_split_sentence({"late": 0}).endswith("so no pool has lab numbers.")


def test_late_pool_sentence_uses_a_binomial_test():
    from scipy.stats import binomtest

    src = pd.Series({"range-q4": 907, "range-late": 780})
    p_src = binomtest(907, 1687).pvalue  # 0.0021: the source's q4 run wins
    assert f"{p_src:.2g}" == "0.0021"
    src_text = (
        "the source's two runs are the positive of 907 and 780 of its 1,687 pairs (binomial p = 0.0021)."
    )

    def counts(a, b):
        return pd.DataFrame(
            {"pool": "late", "run": ["range-q4", "range-late"], "n_pos": [a, b], "n_neg": [b, a]}
        )

    # 20 of 20: p = 2 / 2**20
    assert P.late_pool_sentence(counts(20, 0), src) == (
        "Of the lab's 20 late pairs, range-q4 is the positive of 20 and range-late of 0 (binomial p "
        "= 1.9e-06), "
        f"where {src_text} In the lab, the run whose copies come in the last quarter wins more pairs, as "
        "recency predicts, as in the source."
    )
    assert P.late_pool_sentence(counts(0, 20), src).endswith(
        "copies spread over the second half of training are extracted more often than the same "
        "copies crowded "
        "into its last quarter, unlike the source."
    )
    assert P.late_pool_sentence(counts(1, 2), src).endswith(
        "(binomial p = 1), where "
        + src_text
        + " The lab's split is too close to call either way, unlike the "
        "source."
    )
    assert (
        P.late_pool_sentence(counts(0, 0).iloc[:0], src)
        == f"The lab has no late pairs to compare, where {src_text}"
    )


def test_late_share_sentence():
    src = pd.Series(
        {"range-q1": 1, "range-q2": 1, "range-q3": 38, "range-q4": 2787, "range-early": 3, "range-late": 2552}
    )
    assert P.late_share_sentence(src) == (
        "In the source's seed-0 pairs, 5,339 of the 5,382 positives (99%) are in the runs whose window ends "
        "with training (the lab's range-q4 and range-late)."
    )


def test_window_share():
    from analysis.lab.config import ModelConfig, RunConfig

    model = ModelConfig(n_layer=1, d_model=8, n_head=1, d_ff=16, context=16)
    run = RunConfig(name="r", model=model, tokens=16 * 4 * 40, inject=True, window="q4", batch_size=4)
    # 40 steps of 4 rows; the last quarter holds 10 steps, 40 rows: 10 copies fill a quarter of them
    assert run.steps == 40
    assert P.window_share(run, pd.DataFrame({"copies_seen": [4, 6, 0]})) == 0.25
    # two copies a row: the same 10 copies fill an eighth of the room
    shared = RunConfig(name="r", model=model, tokens=16 * 4 * 40, inject=True, window="q4", batch_size=4,
                       copies_per_row=2)
    assert P.window_share(shared, pd.DataFrame({"copies_seen": [4, 6, 0]})) == 0.125


# -- Experiment 3 in the chapter -----------------------------------------------------------------


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
    assert P.training_steps({"a": pd.DataFrame({"T": [14, 14]}), "b": pd.DataFrame({"T": [29]})}) == {
        "a": 14,
        "b": 29,
    }
    # round(12.5) is 12 (round half to even); a bin is at least one step
    assert P.step_bins({"A": 100, "B": 4, "C": 29}, 0.125) == {"A": 12, "B": 1, "C": 4}
    with pytest.raises(PredictingError, match="frac"):
        P.step_bins({"A": 100}, 0)
    cells = P.matched_cells(_exp3_frame())
    keys = P.cell_keys(cells)
    assert keys == [("A", 4), ("C", 4)]
    assert (
        P.cells_text(keys + [("D", 1)]) == "A at 4 copies, C at 4 copies, D at 1 copy"
        and P.cells_text([]) == "none"
    )
    assert P.bins_text({"A": 12, "B": 1, "C": 1}, keys) == "12 steps (A), 1 step (C)"
    assert P.bins_text({"A": 12}, []) == "—"
    bins = {"A": 100, "C": 100}
    m = P.match_cells(cells, bins, seed=0)
    assert len(m) == 12 and m["target"].eq("A").all() and m["extract"].sum() == 6  # C leaves nothing
    assert len(P.match_cells(cells, bins, 0, [("C", 4)])) == 0
    assert P.empty_cells_sentence(cells, bins) == (
        "Matching leaves nothing of C at 4 copies: no stratum of task and last-step bin holds both "
        "classes there."
    )
    assert (
        P.empty_cells_sentence(cells[cells.target == "A"], bins)
        == "Every cell keeps some examples after matching."
    )
    assert P.empty_cells_sentence(cells.iloc[:0], bins) == "No cell is left to match."


def test_exp3_aucs_dataset_and_flat_index():
    cells = P.matched_cells(_exp3_frame())
    bins = {"A": 100, "C": 100}
    aucs = P.exp3_aucs(cells, bins, seeds=[0, 1])
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
    assert P.exp3_aucs(cells.iloc[:0], bins, seeds=[0]) == {"group": {}, "task": {}}
    d = P.exp3_dataset(cells, bins)
    assert d["cell"].tolist() == ["A", "pooled"] and d["n_examples"].tolist() == [12, 12]
    assert d["residual_recency_auc"].tolist() == [0.5, 0.5]  # every last step is 50
    assert P.exp3_dataset(cells[cells.target == "C"], bins).empty
    t = pd.DataFrame(
        {"pooled": [0.6, 0.5]},
        index=pd.MultiIndex.from_tuples(
            [("hardness", "suffix"), ("log_freq", "—")], names=["features", "hardness"]
        ),
    )
    assert P.flat_index(t).index.tolist() == ["hardness [suffix]", "log_freq"] and P.flat_index(None) is None


def test_chance_band_and_evidence_sentence():
    # variance (10 + 10 + 1) / (12 * 10 * 10) = 0.0175; 1.96 * sqrt(0.0175) = 0.2593
    assert P.chance_band(10, 10) == pytest.approx(1.959964 * math.sqrt(21 / 1200), rel=1e-6)
    assert P.chance_band(3823, 3823) == pytest.approx(0.01294, abs=1e-5)
    with pytest.raises(PredictingError, match="both classes"):
        P.chance_band(0, 5)
    t = pd.DataFrame({"pooled": [0.9, 0.6, np.nan]}, index=["three", "cross", "none"])
    band = (
        "With 10 positives and 10 negatives, an AUC is told from chance (at the 95% level, normal "
        "approximation) only outside 0.241 to 0.759"
    )
    assert P.evidence_sentence(t, {"the fit": "three", "the baseline": "cross"}, "pooled", 10, 10) == (
        band + ": only the fit is; the others carry no evidence."
    )
    assert P.evidence_sentence(t, {"the baseline": "cross", "nothing": "none"}, "pooled", 10, 10) == (
        band + ": none of these AUCs is, so on this set they carry no evidence either way."
    )
    assert P.evidence_sentence(t, {"the fit": "three"}, "pooled", 10, 10) == band + ": all of these AUCs are."
    assert P.evidence_sentence(None, {"the fit": "three"}, "pooled", 10, 10) == (
        band + "; none of these AUCs could be computed."
    )
    assert P.evidence_sentence(t, {}, "pooled", 0, 0) == (
        "The matched set does not hold both classes, so these AUCs are not computed."
    )


def _paper3():
    return P.load_paper_table("exp3_group").set_index(["features", "hardness"])


def test_exp3_power_sentence():
    src = (
        "Once frequency and recency are fixed, the source's feature sets reach AUC 0.44 to 0.62, with the "
        "suffix hardness ahead of the whole-sequence one (0.604 against 0.520 pooled)."
    )
    assert P.exp3_power_sentence(10, 10, _paper3()) == src + (
        " The lab's matched set of 20 examples tells an AUC from chance only beyond ±0.259, wider "
        "than that gap "
        "of 0.084: its numbers check that the pipeline runs end to end, not the claim."
    )
    assert P.exp3_power_sentence(3823, 3823, _paper3()) == src + (
        " The lab's matched set of 7646 examples tells an AUC from chance beyond ±0.013, narrower "
        "than that gap "
        "of 0.084, so it could show a gap of that size."
    )
    assert P.exp3_power_sentence(0, 0, _paper3()) == src + (
        " The lab's matched set does not hold both classes, so it cannot test this."
    )


def test_bin_sentence():
    assert P.bin_sentence({"a": 14, "b": 29}) == (
        "The source bins the last step in windows of 100 of its 48,000 steps; the lab's targets "
        "train for 14 to "
        "29 steps, so a bin of the same share would be 0.03 to 0.06 steps wide (under one step)."
    )
    assert P.bin_sentence({"a": 4800}) == (
        "The source bins the last step in windows of 100 of its 48,000 steps; the lab's targets "
        "train for 4,800 "
        "steps, so a bin of the same share would be 10.00 steps wide."
    )


# -- the source beside the lab -------------------------------------------------------------------


def test_source_headline_from_the_transcribed_tables():
    e1 = P.load_paper_table("exp1_random").set_index("features")
    # log_freq + recency over the 7 targets: 0.551 (ir50_75) to 0.932 (8b-100b), median 0.904; the three
    # features' median is 0.923, so +0.019; Experiment 3's best pooled set is 0.604 (suffix), closer to 0.5
    assert P.source_headline(e1, _paper3()) == (
        "With nothing controlled, log_freq and recency together rank its memorized sequences at AUC 0.551 to "
        "0.932 over its 7 targets (median 0.904), and adding hardness moves the median by +0.019. "
        "Once both are "
        "held fixed, the best feature set reaches 0.604 on all cells pooled, closer to chance than "
        "with nothing "
        "controlled, and a hardness measured on the suffix alone does better than the "
        "whole-sequence one (0.604 "
        "against 0.520)."
    )
    flipped = _paper3().copy()
    flipped.loc[("log_freq + recency + hardness", "suffix"), "pooled"] = 0.5
    assert "does no better than the whole-sequence one (0.500 against 0.520)" in P.source_headline(
        e1, flipped
    )


def test_labels_comparison_and_levels_sentence():
    p1 = P.load_paper_table("exp1_dataset")
    p2 = P.load_paper_table("exp2_dataset")
    src = (
        "The source's targets extract 2,327 never-inserted controls in their Experiment 1 sets, and its "
        "injection-range runs extract sequences down to 1 copy"
    )
    assert P.labels_comparison(_long(), p1, p2) == src + (
        "; the lab's targets extract 0 controls and nothing below 16 copies, 3 (sequence, target) "
        "examples in all."
    )
    assert (
        P.labels_comparison(_long().assign(extract=0), p1, p2) == src + "; the lab's targets extract nothing."
    )
    assert P.levels_sentence([0, 1, 4, 16, 4]) == (
        "The lab's copy levels (0, 1, 4 and 16) are 4 of the source's 6 (0, 1, 4, 16, 64 and 256)"
    )
    assert (
        P.levels_sentence([256, 64, 16, 4, 1, 0])
        == "The lab's copy levels are the source's (0, 1, 4, 16, 64 and 256)"
    )
    assert P.levels_sentence([0, 1, 4, 16, 32, 48, 64]) == (
        "The lab's copy levels (0, 1, 4, 16, 32, 48 and 64) include 5 of the source's 6 "
        "(0, 1, 4, 16, 64 and 256); 32 and 48 are the lab's own"
    )
    assert P.levels_sentence([0, 24, 64]).endswith("; 24 is the lab's own")


def test_and_list():
    assert P.and_list([]) == "" and P.and_list([2]) == "2"
    assert P.and_list([2, 3]) == "2 and 3" and P.and_list([2, 3, 6]) == "2, 3 and 6"


def test_largest_target_takes_most_parameters_then_most_tokens():
    frames = {"pert-s2x": pd.DataFrame(), "pert-l1x": pd.DataFrame(), "pert-l2x": pd.DataFrame()}
    n_params = {"pert-s2x": 10, "pert-l1x": 40, "pert-l2x": 40}
    tokens = {"pert-s2x": 200, "pert-l1x": 100, "pert-l2x": 250}
    assert P.largest_target(frames, n_params, tokens) == "pert-l2x"
    assert P.largest_target({"pert-s2x": frames["pert-s2x"]}, n_params, tokens) == "pert-s2x"
    with pytest.raises(P.PredictingError, match="no targets"):
        P.largest_target({}, n_params, tokens)


def test_exp2_level_count_counts_levels_shared_by_every_pool():
    data = pd.DataFrame({
        "pool": ["quarters"] * 4 + ["late"] * 3,
        "copies": ["32", "48", "64", "all", "48", "64", "all"],
        "n_pairs": [3, 5, 2, 10, 4, 0, 4]})
    # quarters has pairs at 32, 48, 64; late at 48 only (64 has none): one shared level
    assert P.exp2_level_count(data, ["quarters", "late"]) == 1
    assert P.exp2_level_count(data, ["quarters"]) == 3
    assert P.exp2_level_count(pd.DataFrame(), ["quarters"]) == 0

"""The predicting chapter's method: label, features, prediction model, splits, AUC and the three
samplings, on toy tables with hand-computed answers."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from analysis.predicting import checks as CK
from analysis.predicting import method_eval as E
from analysis.predicting import method_features as F
from analysis.predicting import method_sampling as S
from analysis.predicting import params as PA
from analysis.predicting.checks import PredictingError
from analysis.stats.auc import auc

# -- labels ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n, expected",
    [(2, (1, 1)), (3, (1, 2)), (10, (5, 5)), (33, (16, 17)), (45, (22, 23)), (64, (32, 32)), (100, (32, 32))],
)
def test_split_point(n, expected):
    assert F.split_point(n) == expected


@pytest.mark.parametrize("n", [0, 1, -3, 2.5, True, "8"])
def test_split_point_rejects_short_or_non_integer(n):
    with pytest.raises(PredictingError, match="n_tokens"):
        F.split_point(n)


def test_extract_label():
    assert F.extract_label([True, True, True]) == 1
    assert F.extract_label([True, False, True]) == 0
    assert F.extract_label(np.array([1, 1])) == 1
    assert F.extract_label([False]) == 0
    with pytest.raises(PredictingError, match="non-empty"):
        F.extract_label([])
    with pytest.raises(PredictingError, match="booleans"):
        F.extract_label([0.5, 1])


# -- features ----------------------------------------------------------------------------------


def test_log_freq():
    got = F.log_freq([0, 1, 4, 16, 64])
    assert got.tolist() == pytest.approx([0.0, math.log(2), math.log(5), math.log(17), math.log(65)])
    with pytest.raises(PredictingError):
        F.log_freq([-1])


def test_recency_including_never_inserted():
    T = 100
    got = F.recency([99, 50, 0, -1, np.nan, 30], T, copies=[1, 4, 16, 0, 0, 0])
    # (100-99)/100, (100-50)/100, (100-0)/100; -1 / NaN / 0 copies: never inserted -> 1.0
    assert got.tolist() == pytest.approx([0.01, 0.5, 1.0, 1.0, 1.0, 1.0])
    with pytest.raises(PredictingError, match="last_step must be < T=100"):
        F.recency([100], T)
    with pytest.raises(PredictingError, match="T"):
        F.recency([1], 0)


def _nll_table():
    # three standard models; std-c is the target's counterfactual
    rows = [
        ("s1", "std-a", 1.0, 2.0), ("s1", "std-b", 2.0, 4.0), ("s1", "std-c", 6.0, 9.0),
        ("s2", "std-a", 3.0, 1.0), ("s2", "std-b", 5.0, 3.0), ("s2", "std-c", 0.0, 0.0),
        ("s3", "std-a", 4.0, 4.0), ("s3", "std-b", 4.0, 6.0), ("s3", "std-c", 1.0, 1.0),
    ]
    return pd.DataFrame(rows, columns=["seq_id", "model", "nll", "nll_suffix"])


def test_hardness_excludes_the_counterfactual_model():
    h = F.hardness(_nll_table(), "std-c").set_index("seq_id")
    assert h["hardness"].to_dict() == pytest.approx({"s1": 1.5, "s2": 4.0, "s3": 4.0})
    assert h["hardness_sfx"].to_dict() == pytest.approx({"s1": 3.0, "s2": 2.0, "s3": 5.0})
    # with it included, s1's hardness would be (1 + 2 + 6) / 3 = 3
    h_all = F.hardness(_nll_table(), None).set_index("seq_id")
    assert h_all.loc["s1", "hardness"] == pytest.approx(3.0)
    with pytest.raises(PredictingError, match="'std-x' is not a model"):
        F.hardness(_nll_table(), "std-x")
    only_c = _nll_table().query("model == 'std-c'")
    with pytest.raises(PredictingError, match="no reference model"):
        F.hardness(only_c, "std-c")


def _exposure():
    # the lab's exposure_table layout: copies_seen, last_step -1 when never inserted
    return pd.DataFrame({
        "seq_id": ["s1", "s2", "s3"], "task": ["qa", "qa", "passage"],
        "copies_requested": [4, 0, 1], "window": ["all"] * 3, "copies_seen": [4, 0, 1],
        "first_step": [10, -1, 75], "last_step": [80, -1, 75], "T": [100] * 3,
    })


def test_features_on_a_toy_exposure_table():
    f = F.features(_exposure(), 100, _nll_table(), "std-c")
    assert f["seq_id"].tolist() == ["s1", "s2", "s3"]
    assert f["copies"].tolist() == [4, 0, 1]
    assert f["log_freq"].tolist() == pytest.approx([math.log(5), 0.0, math.log(2)])
    assert f["recency"].tolist() == pytest.approx([0.2, 1.0, 0.25])
    assert f["hardness"].tolist() == pytest.approx([1.5, 4.0, 4.0])
    assert f["hardness_sfx"].tolist() == pytest.approx([3.0, 2.0, 5.0])
    # a frame with an explicit copies column uses it
    g = F.features(_exposure().drop(columns="copies_seen").assign(copies=[16, 0, 1]), 100, _nll_table(), None)
    assert g["log_freq"].iloc[0] == pytest.approx(math.log(17))


def test_features_bad_input():
    with pytest.raises(PredictingError, match="no NLL"):
        F.features(_exposure(), 100, _nll_table().query("seq_id != 's3'"), "std-c")
    with pytest.raises(PredictingError, match="copies"):
        F.features(_exposure().drop(columns=["copies_seen"]), 100, _nll_table(), "std-c")


# -- prediction model --------------------------------------------------------------------------


def test_feature_sets_are_the_seven_subsets_in_table_order():
    assert list(PA.FEATURE_SETS) == [
        "log_freq + recency + hardness", "log_freq + recency", "log_freq + hardness", "recency + hardness",
        "log_freq", "recency", "hardness",
    ]
    subsets = {frozenset(c) for r in (1, 2, 3) for c in combinations(PA.FEATURES, r)}
    assert {frozenset(v) for v in PA.FEATURE_SETS.values()} == subsets
    for name, cols in PA.FEATURE_SETS.items():
        assert name == " + ".join(cols)
    assert E.feature_columns("log_freq + hardness", "suffix") == ("log_freq", "hardness_sfx")
    assert E.feature_columns("random baseline") is None
    with pytest.raises(PredictingError, match="feature_set must be one of"):
        E.feature_columns("frequency")


def test_fit_score_is_ols_on_the_label():
    # OLS of y = [0,0,1,1] on x = [0,1,2,3]: slope 2/5 = 0.4, intercept 0.5 - 0.4*1.5 = -0.1
    s = E.fit_score(np.array([[0.0], [1.0], [2.0], [3.0]]), [0, 0, 1, 1], np.array([[4.0], [0.5]]))
    assert s.tolist() == pytest.approx([1.5, 0.1])
    # a constant feature gets no weight: every score is the mean label
    s = E.fit_score(np.ones((4, 1)), [0, 0, 0, 1], np.ones((3, 1)) * 7)
    assert s.tolist() == pytest.approx([0.25] * 3)


# -- AUC ---------------------------------------------------------------------------------------


def test_pooled_auc_and_per_task_auc_differ():
    # the pooled AUC is analysis.stats.auc.auc; the per-task AUC is the chapter's
    y = [1, 0, 0, 1, 0, 1]
    s = [0.9, 0.8, 0.3, 0.1, 0.2, 0.5]
    task = ["A", "A", "A", "B", "B", "C"]
    # task A: positive 0.9 beats 0.8 and 0.3 -> 1; task B: 0.1 < 0.2 -> 0; task C: one class, skipped
    assert E.per_task_auc(y, s, task) == pytest.approx(0.5)
    # pooled: positives {0.9, 0.1, 0.5} vs negatives {0.8, 0.3, 0.2}: 3 + 0 + 2 wins of 9
    assert auc(y, s) == pytest.approx(5 / 9)
    # ties count half
    assert auc([1, 0], [0.3, 0.3]) == pytest.approx(0.5)
    with pytest.raises(PredictingError, match="no task holds both classes"):
        E.per_task_auc([1, 0], [0.1, 0.2], ["A", "B"])


def test_random_scores_are_seeded():
    a = F.random_scores(5, 3)
    assert a.shape == (5,) and ((a >= 0) & (a < 1)).all()
    assert np.array_equal(a, F.random_scores(5, np.random.default_rng(3)))


def test_cross_model_percentile_baseline():
    nll = pd.DataFrame(
        {"target": [0.1, 9.0, 5.0], "B": [1.0, 2.0, 3.0], "C": [3.0, 1.0, 2.0]},
        index=pd.Index(["s1", "s2", "s3"], name="seq_id"),
    )
    got = F.cross_model_scores(nll, exclude="target")
    # B: lowest NLL s1 -> 3/3, s2 -> 2/3, s3 -> 1/3; C: s1 -> 1/3, s2 -> 3/3, s3 -> 2/3
    assert got.name == "cross_model"
    assert got.to_dict() == pytest.approx({"s1": 2 / 3, "s2": 5 / 6, "s3": 1 / 2})
    # ties share their average rank: B gives s1 and s2 (2.5)/3 each
    tied = F.cross_model_scores(nll.assign(B=[1.0, 1.0, 3.0]), exclude=["target", "C"])
    assert tied.tolist() == pytest.approx([2.5 / 3, 2.5 / 3, 1 / 3])
    with pytest.raises(PredictingError, match=r"\['D'\]"):
        F.cross_model_scores(nll, exclude="D")


def test_window_end_baseline():
    assert F.window_end_baseline("q1") == 0.25
    expected = [0.25, 0.5, 0.75, 1.0, 0.5, 1.0, 1.0]
    assert F.window_end_baseline(["q1", "q2", "q3", "q4", "early", "late", "all"]).tolist() == expected
    with pytest.raises(PredictingError, match="window must be one of"):
        F.window_end_baseline("q5")


# -- splits ------------------------------------------------------------------------------------


def test_random_split_sizes_and_stratification():
    y = np.array([1] * 10 + [0] * 40)
    train, test = E.random_split(y, seed=0)
    assert len(test) == 10 and len(train) == 40  # ceil(0.2 * 50)
    assert y[test].sum() == 2 and y[train].sum() == 8  # the 1 : 4 ratio on both sides
    assert sorted(np.concatenate([train, test]).tolist()) == list(range(50))
    again = E.random_split(y, seed=0)
    assert np.array_equal(again[1], test)
    # 7 examples: test ceil(1.4) = 2
    assert len(E.random_split([1, 1, 1, 0, 0, 0, 0], 0)[1]) == 2


def test_random_split_reproduces_the_source_test_sets():
    # the source's balanced targets: test n and positives follow from #pos = #neg alone
    table = PA.load_paper_table("exp1_dataset")
    for row in table.itertuples():
        y = np.r_[np.ones(row.n_pos, int), np.zeros(row.n_neg, int)]
        _, test = E.random_split(y, 0)
        assert (len(test), int(y[test].sum())) == (row.test_n, row.test_pos)


def test_task_splits_leave_one_task_out():
    folds = E.task_splits(["b", "a", "b", "c"])
    assert [f[1].tolist() for f in folds] == [[1], [0, 2], [3]]  # tasks a, b, c
    assert [f[0].tolist() for f in folds] == [[0, 2, 3], [1, 3], [0, 1, 2]]
    with pytest.raises(PredictingError, match="at least 2 tasks"):
        E.task_splits(["a", "a"])


def test_group_kfold_never_splits_a_group():
    groups = np.array(["g1", "g1", "g2", "g3", "g3", "g3", "g4", "g5", "g5", "g6"])
    folds = E.group_kfold(groups, k=3)
    assert len(folds) == 3
    tested = np.concatenate([te for _, te in folds])
    assert sorted(tested.tolist()) == list(range(len(groups)))  # every example held out once
    for train, test in folds:
        assert not set(groups[train]) & set(groups[test])
        assert len(train) + len(test) == len(groups)
    with pytest.raises(PredictingError, match="k=7 folds need at least 7 groups, got 6"):
        E.group_kfold(groups, k=7)


def test_out_of_fold_pools_one_prediction_per_example():
    x = np.arange(8.0)
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    folds = E.group_kfold(np.arange(8), k=2)
    s = E.out_of_fold(x, y, folds)
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
    assert E.evaluate(f, ["x"], "task") == pytest.approx((0.75 + 1.0 + 0.5) / 3)
    # the pooled AUC of the same feature is another number: positives {2, 4, 7, 8, 2, 8} vs
    # negatives {1, 3, 5, 6, 4, 6} win 1 + 2.5 + 6 + 6 + 1 + 6 = 22.5 of 36 comparisons
    assert auc(f["extract"], f["x"]) == pytest.approx(22.5 / 36)


def test_evaluate_random_and_group_splits_on_a_separable_feature():
    rng = np.random.default_rng(0)
    y = np.array([1] * 20 + [0] * 30)
    f = pd.DataFrame({
        "seq_id": np.repeat([f"s{i}" for i in range(25)], 2), "task": "qa", "extract": y,
        "log_freq": y * 2.0 + rng.random(50), "recency": rng.random(50), "hardness": rng.random(50),
    })
    assert E.evaluate(f, "log_freq", "random") == 1.0
    assert E.evaluate(f, "log_freq + recency + hardness", "random") == 1.0
    assert E.evaluate(f, "log_freq", "group") == 1.0
    r = E.evaluate(f, "random baseline", "group", seed=1)
    assert 0 <= r <= 1 and r == E.evaluate(f, "random baseline", "group", seed=1)
    # a feature with the same value everywhere ranks nothing
    assert E.evaluate(f.assign(c=3.0), ["c"], "group") == 0.5


def test_evaluate_rejects_too_few_positives_before_work():
    f = pd.DataFrame({"seq_id": list("abcdef"), "task": ["qa"] * 3 + ["mmlu"] * 3,
                      "x": np.arange(6.0), "extract": [1, 0, 0, 0, 0, 0]})
    for split in PA.SPLITS:
        with pytest.raises(PredictingError, match=r"too few positives to split '1b-100b/64'.*1 positives"):
            E.evaluate(f, ["x"], split, name="1b-100b/64")
    two = f.assign(extract=[1, 1, 0, 0, 0, 0])
    with pytest.raises(PredictingError, match="too few groups to split 'cell'.*k=7"):
        E.evaluate(two, ["x"], "group", k=7, name="cell")
    with pytest.raises(PredictingError, match="split must be one of"):
        E.evaluate(two, ["x"], "kfold")
    with pytest.raises(PredictingError, match="NaN"):
        E.evaluate(two.assign(x=np.nan), ["x"], "group", k=2)


def test_over_seeds_mean_and_sd():
    mean, sd = E.over_seeds(lambda s: float(s))
    assert mean == 2.0 and sd == pytest.approx(math.sqrt(2.5))  # ddof=1 over 0..4
    table = E.over_seeds(lambda s: {"a": s, "b": 1.0}, seeds=[1, 3])
    assert table.loc["a", "mean"] == 2.0 and table.loc["a", "sd"] == pytest.approx(math.sqrt(2))
    assert table.loc["b", "sd"] == 0.0




def test_check_targets():
    ex = {"1b-100b": _exposure()}
    assert CK.check_targets(["1b-100b"], ex) == ["1b-100b"]
    with pytest.raises(PredictingError, match=r"\['8b-100b'\] have no exposure table"):
        CK.check_targets(["1b-100b", "8b-100b"], ex)




def test_check_pools_checks_every_pool():
    assert CK.check_pools({"p": ("a", "b")}, ["a", "b", "c"]) == {"p": ["a", "b"]}
    with pytest.raises(PredictingError, match=r"\['z'\] that do not exist"):
        CK.check_pools({"p": ("a", "b"), "q": ("a", "z")}, ["a", "b"])




# -- Experiment 1 ------------------------------------------------------------------------------


def test_balanced_subsample_keeps_every_positive():
    f = pd.DataFrame({"seq_id": [f"s{i}" for i in range(10)], "extract": [1, 0, 0, 1, 0, 0, 0, 1, 0, 0]})
    b = S.balanced_subsample(f, seed=0)
    assert len(b) == 6 and b["extract"].sum() == 3
    assert set(b.loc[b.extract == 1, "seq_id"]) == {"s0", "s3", "s7"}
    assert b.index.is_monotonic_increasing
    assert b.equals(S.balanced_subsample(f, seed=0))
    # more positives than negatives: every negative kept, as many positives drawn
    flipped = S.balanced_subsample(f.assign(extract=1 - f.extract), seed=0)
    assert len(flipped) == 6 and set(flipped.loc[flipped.extract == 0, "seq_id"]) == {"s0", "s3", "s7"}
    with pytest.raises(PredictingError, match="both classes"):
        S.balanced_subsample(f.assign(extract=0), seed=0)


def test_exp1_stats():
    f = pd.DataFrame({"copies": [0, 4, 16, 0, 0, 1, 0, 64, 4, 0],
                      "extract": [1, 1, 1, 1, 1, 0, 0, 0, 0, 0]})
    st = S.exp1_stats({"toy": f})
    assert st.iloc[0].to_dict() == dict(target="toy", n_examples=10, n_pos=5, n_neg=5, controls_pos=3,
                                        controls_neg=2, test_n=2, test_pos=1)
    assert list(st.columns) == list(PA.load_paper_table("exp1_dataset").columns)
    # one example of each class cannot be split: the counts stay, the test set is missing
    tiny = S.exp1_stats({"tiny": pd.DataFrame({"copies": [64, 4], "extract": [1, 0]})}).iloc[0]
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
    pairs = S.injection_range_pairs(labels, ["q1", "q2", "q3", "q4"], seed=0)
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
    late = [S.injection_range_pairs(labels, ["q4", "late"], seed=s) for s in range(3)]
    assert late[0].equals(late[1]) and late[0].equals(late[2])
    assert late[0]["seq_id"].tolist() == ["s5", "s5"] and late[0]["run"].tolist() == ["q4", "late"]


def test_injection_range_pairs_bad_pool():
    with pytest.raises(PredictingError, match=r"run\(s\) \['q5'\] that do not exist"):
        S.injection_range_pairs(_ir_labels(), ["q1", "q5"], seed=0)
    with pytest.raises(PredictingError, match="at least two distinct runs"):
        S.injection_range_pairs(_ir_labels(), ["q1"], seed=0)
    odd = _ir_labels()
    odd.loc[(odd.seq_id == "s1") & (odd.run == "q2"), "copies"] = 16
    with pytest.raises(PredictingError, match="different copies"):
        S.injection_range_pairs(odd, ["q1", "q2"], seed=0)


def test_exp2_stats():
    pairs = S.injection_range_pairs(_ir_labels(), ["q1", "q2", "q3", "q4"], seed=0)
    st = S.exp2_stats({"quarters": pairs}).set_index("copies")
    assert st.index.tolist() == ["4", "64", "all"]
    assert st.loc["all", ["n_pairs", "n_examples", "n_pos", "n_neg", "n_tasks"]].tolist() == [2, 4, 2, 2, 1]
    # pool late: only s5 pairs (q4 positive, last step 35; late negative, last step 45):
    # 100 - 35 = 65 and 100 - 45 = 55 steps since the last copy
    late = S.exp2_stats({"late": S.injection_range_pairs(_ir_labels(), ["q4", "late"], seed=0)})
    assert late["copies"].tolist() == ["64", "all"]
    assert late.iloc[1][["steps_since_median", "steps_since_q1", "steps_since_q3"]].tolist() == \
        pytest.approx([60.0, 57.5, 62.5])
    assert list(late.columns) == list(PA.load_paper_table("exp2_dataset").columns)[:10]
    counts = S.exp2_run_counts({"quarters": pairs})
    assert counts.set_index("run").loc["q4", "n_pos"] == pairs[(pairs.run == "q4")].extract.sum()
    assert counts["n_pos"].sum() == 2 and counts["n_neg"].sum() == 2


# -- Experiment 3 ------------------------------------------------------------------------------


def test_matched_cells_keeps_20_to_80_percent_positive_cells():
    f = pd.DataFrame({
        "target": ["A"] * 14 + ["B"] * 4 + ["A"] * 2,
        "copies": [4] * 5 + [16] * 4 + [64] * 5 + [4] * 4 + [0] * 2,
        "extract": [1, 0, 0, 0, 0] + [1, 1, 1, 1] + [1, 1, 1, 1, 0] + [1, 0, 1, 0] + [1, 0],
    })
    m = S.matched_cells(f)
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
    m = S.match_strata(_cell(), step_bin=100, seed=0)
    counts = m.groupby(["target", "copies", "task", "stratum"])["extract"].agg(["sum", "size"])
    # (a, 1): 3 positives, 2 negatives -> 2 + 2; (a, 2): positives only -> dropped; (b, 1): 1 + 1
    assert counts.index.tolist() == [("A", 4, "a", 1), ("A", 4, "b", 1)]
    assert counts["size"].tolist() == [4, 2] and (counts["sum"] * 2 == counts["size"]).all()
    assert set(m.loc[m.extract == 0, "seq_id"]) == {"s1", "s2", "s6"}
    assert "s5" not in set(m["seq_id"])
    assert m.equals(S.match_strata(_cell(), step_bin=100, seed=0))
    # a finer bin separates 105/120/130 from 150/199: (a, 10) 3 pos and (a, 15), (a, 19) negatives only
    # a finer bin leaves no stratum with both classes: (a, 10), (a, 12), (a, 13), (a, 25), (b, 16)
    # hold positives only, (a, 15), (a, 19), (b, 11) negatives only
    assert len(S.match_strata(_cell(), step_bin=10, seed=0)) == 0
    with pytest.raises(PredictingError, match="step_bin"):
        S.match_strata(_cell(), step_bin=0)
    with pytest.raises(PredictingError, match="inserted sequences only"):
        S.match_strata(_cell().assign(last_step=-1))


def test_residual_recency_auc_by_hand():
    matched = pd.DataFrame({
        "task": ["a"] * 4 + ["b"] * 2, "stratum": [1] * 4 + [2] * 2,
        "last_step": [105, 110, 101, 110, 250, 260],
        "extract": [1, 1, 0, 0, 1, 0],
    })
    # stratum a: positives {105, 110} vs negatives {101, 110}: 1 + 0 + 1 + 0.5 = 2.5 of 4 -> 0.625
    # stratum b: 250 < 260 -> 0; size-weighted: (4 * 0.625 + 2 * 0) / 6
    assert S.residual_recency_auc(matched) == pytest.approx(2.5 / 6)
    # a stratum of one class does not count
    extra = pd.DataFrame({"task": ["c"], "stratum": [3], "last_step": [300], "extract": [1]})
    assert S.residual_recency_auc(pd.concat([matched, extra])) == pytest.approx(2.5 / 6)
    with pytest.raises(PredictingError, match="stratum"):
        S.residual_recency_auc(matched.drop(columns="stratum"))


def test_exp3_stats():
    matched = S.match_strata(S.matched_cells(_cell().assign(T=1000)), step_bin=100, seed=0)
    st = S.exp3_stats(matched)
    assert list(st.columns)[:-1] == list(PA.load_paper_table("exp3_dataset").columns)
    cell, pooled = st.iloc[0], st.iloc[1]
    assert cell["cell"] == "A" and cell["copies"] == 4 and cell["pos_rate_before"] == pytest.approx(5 / 8)
    counts = cell[["n_examples", "n_pos", "n_neg", "n_tasks", "n_strata"]].tolist()
    assert counts == [6, 3, 3, 2, 2]
    assert pooled["cell"] == "pooled" and np.isnan(pooled["copies"]) and pooled["n_sequences"] == 6
    assert 0 <= cell["residual_recency_auc"] <= 1




def test_auc_rows_fills_a_table_column_and_reports_unsplittable_frames():
    y = np.array([1] * 20 + [0] * 30)

    def frame(seed):
        r = np.random.default_rng(seed)
        return pd.DataFrame({"seq_id": [f"s{i}" for i in range(50)], "task": "qa", "extract": y,
                             "log_freq": y * 2.0 + r.random(50), "recency": r.random(50),
                             "hardness": r.random(50), "hardness_sfx": y + r.random(50) * 0.5,
                             "cross_model": r.random(50)})

    t = E.auc_rows(frame, "group", ["cross-model baseline", "random baseline"], seeds=[0, 1],
                   hardness_rows=("full", "suffix")).set_index(["features", "hardness"])
    assert t.loc[("log_freq", "—"), "auc"] == 1.0 and t.loc[("log_freq", "—"), "sd"] == 0.0
    assert t.loc[("hardness", "suffix"), "auc"] == 1.0  # the suffix measure separates by construction
    assert 0.2 < t.loc[("hardness", "full sequence"), "auc"] < 0.8
    assert len(t) == 7 + 4 + 2 + 2  # 7 sets, the 4 with hardness twice, 2 baselines, 2 sd rows
    for m in ("full sequence", "suffix"):
        assert t.loc[("sd (3 features)", m), "auc"] == t.loc[("log_freq + recency + hardness", m), "sd"]
    # the random split keeps one split for every seed; the random baseline changes with the seed
    r = E.auc_rows(frame, "random", ["random baseline"], seeds=[0, 1, 2]).set_index("features")
    assert r.loc["log_freq", "auc"] == 1.0 and r.loc["random baseline", "sd"] > 0
    few = E.auc_rows(lambda s: frame(s).assign(extract=[1] + [0] * 49), "group", [], seeds=[0])
    assert few["auc"].isna().all() and few["note"].str.contains("too few positives").all()




def test_chance_band_and_its_p_value():
    # variance (10 + 10 + 1) / (12 * 10 * 10) = 0.0175; 1.96 * sqrt(0.0175) = 0.2593
    assert E.chance_band(10, 10) == pytest.approx(1.959964 * math.sqrt(21 / 1200), rel=1e-6)
    assert E.chance_band(3823, 3823) == pytest.approx(0.01294, abs=1e-5)
    with pytest.raises(PredictingError, match="both classes"):
        E.chance_band(0, 5)
    # an AUC on the band's edge has p = 0.05; the test is two-sided
    h = E.chance_band(161, 161)
    assert E.chance_p(0.5 + h, 161, 161) == pytest.approx(0.05)
    assert E.chance_p(0.5 - h, 161, 161) == pytest.approx(0.05)
    # 0.424 on 161 + 161: z = 0.076 / sqrt(323 / (12 * 161**2)) = 2.358, p = 0.0184
    assert E.chance_p(0.424, 161, 161) == pytest.approx(0.01838, abs=1e-4)
    assert E.chance_p(0.5, 10, 10) == 1.0


def test_held_out_scores_are_the_group_split_behind_evaluate():
    rng = np.random.default_rng(0)
    n = 40
    frame = pd.DataFrame({"extract": np.tile([0, 1], n // 2), "log_freq": rng.normal(size=n),
                          "recency": rng.normal(size=n), "hardness": rng.normal(size=n),
                          "hardness_sfx": rng.normal(size=n), "seq_id": np.repeat(np.arange(n // 2), 2)})
    for h in ("full", "suffix"):
        y, s = E.held_out_scores(frame, PA.THREE, 0, hardness=h)
        assert list(y) == list(frame["extract"]) and len(s) == n
        assert auc(y, s) == E.evaluate(frame, PA.THREE, "group", 0, hardness=h)
    with pytest.raises(PredictingError, match="too few"):
        E.held_out_scores(frame.iloc[:4], PA.THREE, 0)

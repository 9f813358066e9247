"""The predicting chapter's runs and sources: the transcribed tables, scoring sequences under a
model, and each target's frame of examples from the lab's run table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.core.cache import QueryCache
from analysis.lab import profiles
from analysis.models import Model
from analysis.predicting import params as PA
from analysis.predicting import run as R
from analysis.predicting.checks import PredictingError


def _exposure():
    # the lab's exposure_table layout: copies_seen, last_step -1 when never inserted
    return pd.DataFrame({
        "seq_id": ["s1", "s2", "s3"], "task": ["qa", "qa", "passage"],
        "copies_requested": [4, 0, 1], "window": ["all"] * 3, "copies_seen": [4, 0, 1],
        "first_step": [10, -1, 75], "last_step": [80, -1, 75], "T": [100] * 3,
    })


def test_paper_tables_load_with_spot_checks():
    t = PA.load_paper_table("exp1_dataset").set_index("target")
    assert t.loc["8b-100b", "n_examples"] == 20794 and t.loc["ir50_75", "controls_neg"] == 72
    assert (t["n_pos"] + t["n_neg"] == t["n_examples"]).all()

    targets = ["1b-100b", "8b-100b", "1b-500b", "8b-500b", "ir50_75", "ir75_100", "ir50_100"]
    rows = list(PA.FEATURE_SETS) + ["cross-model baseline", "random baseline", "sd (3 features)"]
    for name in ("exp1_random", "exp1_task"):
        t = PA.load_paper_table(name)
        assert list(t.columns) == ["features"] + targets and t["features"].tolist() == rows
    r = PA.load_paper_table("exp1_random").set_index("features")
    assert r.loc["log_freq + recency + hardness", "1b-100b"] == 0.923
    assert r.loc["cross-model baseline", "1b-500b"] == 0.904
    assert PA.load_paper_table("exp1_task").set_index("features").loc["hardness", "ir50_75"] == 0.284

    d = PA.load_paper_table("exp2_dataset").set_index(["pool", "copies"])
    assert d.loc[("all6", "16"), "steps_since_median"] == 1803
    assert d.loc[("late", "all"), "steps_since_q3"] == 1489
    for pool in ("quarters", "all6", "late"):
        total = d.loc[(pool, "all")]
        per_copies = d.loc[pool].drop(index="all")
        assert per_copies["n_pairs"].sum() == total["n_pairs"]
        pos = total.filter(like="pos_").sum()
        neg = total.filter(like="neg_").sum()
        assert pos == neg == total["n_pos"]  # the examples-per-run table adds up
    a = PA.load_paper_table("exp2_auc").set_index(["pool", "features"])
    assert a.loc[("all6", "recency + hardness"), "pooled"] == 0.976
    assert a.loc[("late", "random baseline"), "copies_1"] == 0.515
    assert len(a) == 30

    e = PA.load_paper_table("exp3_dataset").set_index("cell")
    assert e.loc["8b-100b", "n_strata"] == 622 and e.loc["ir75_100", "pos_rate_before"] == 0.735
    assert e.drop(index="pooled")["n_strata"].sum() == e.loc["pooled", "n_strata"] == 1520
    assert e.drop(index="pooled")["n_examples"].sum() == e.loc["pooled", "n_examples"]
    assert np.isnan(e.loc["pooled", "copies"])
    g = PA.load_paper_table("exp3_group").set_index(["features", "hardness"])
    assert g.loc[("hardness", "suffix"), "ir50_100"] == 0.622
    assert g.loc[("cross-model baseline", "—"), "pooled"] == 0.617
    k = PA.load_paper_table("exp3_task").set_index(["features", "hardness"])
    assert k.loc[("sd (3 features)", "full sequence"), "8b-500b"] == 0.036
    assert len(g) == len(k) == 15

    with pytest.raises(PredictingError, match="name must be one of"):
        PA.load_paper_table("table1")




def test_sequence_scores_cut_prefix_and_suffix_and_label(tmp_path):
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
    out = R.sequence_scores(model, seqs).set_index("seq_id")
    assert (out.loc["a", "P"], out.loc["a", "L"]) == (10, 10)
    assert out.loc["a", "extract"] == 0 and out.loc["a", "suffix_acc"] == pytest.approx(0.9)
    assert out.loc["b", "extract"] == 1 and out.loc["b", "suffix_acc"] == 1.0
    assert out.loc["a", "nll"] == pytest.approx(1.0) and out.loc["a", "nll_suffix"] == pytest.approx(1.0)
    # a wrong argmax in the prefix does not count
    Scripted.wrong[8] = [3]
    again = R.sequence_scores(Scripted("other", cache=QueryCache(tmp_path / "r.sqlite")), {"b": seqs["b"]})
    assert again["extract"].iloc[0] == 1
    with pytest.raises(PredictingError, match="at least 2 tokens"):
        R.sequence_scores(model, {"c": [1]})




# -- the lab's runs in the source's roles --------------------------------------------------------


def test_counterfactual_is_the_standard_run_of_the_same_shape_and_budget():
    for profile in ("smoke", "default"):  # every target of every profile has its twin
        table = profiles.get_profile(profile).table()
        assert all(R.counterfactual(table, t) for t in PA.LAB_TARGETS)
    runs = profiles.get_profile("default").table()
    assert R.counterfactual(runs, "pert-l2x") == "std-l2x"
    assert R.counterfactual(runs, "pert-s1x") == "std-s1x"
    # the injection-range runs share one counterfactual: the standard run of their shape and budget
    # (std-range, or a perturbed twin such as std-l2x when one has that shape and budget)
    (twin,) = {R.counterfactual(runs, r) for r in PA.LAB_POOLS["all6"]}
    shape = ["n_layer", "d_model", "n_head", "d_ff", "context", "tokens"]
    row = runs.set_index("run")
    assert row.loc[twin, "family"] == "standard"
    assert all((row.loc[twin, shape] == row.loc[r, shape]).all() for r in PA.LAB_POOLS["all6"])
    with pytest.raises(PredictingError, match="not a lab run"):
        R.counterfactual(runs, "pert-x")
    assert set(PA.LAB_TARGETS) <= set(runs["run"])
    assert {r for pool in PA.LAB_POOLS.values() for r in pool} <= set(runs["run"])


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
    f = R.target_frame("pert-a", _scores(), {"pert-a": exp}, ["std-a", "std-b"], "std-a",
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
        R.target_frame("pert-b", _scores(), {"pert-a": exp}, ["std-a"], "std-a", [])
    with pytest.raises(PredictingError, match="no scores for the standard"):
        R.target_frame("pert-a", _scores(), {"pert-a": exp}, ["std-z"], "std-z", [])


def test_range_labels_stack_one_frame_per_run():
    exp = _exposure()
    lab = R.range_labels(["pert-a", "pert-b"], _scores(), {"pert-a": exp, "pert-b": exp.assign(window="q1")},
                         ["std-a", "std-b"], "std-b")
    assert lab.groupby("run")["extract"].apply(list).to_dict() == {"pert-a": [1, 0, 0], "pert-b": [1, 1, 0]}
    assert lab.query("run == 'pert-b'")["window_end"].tolist() == [0.25] * 3
    # hardness over std-a alone
    assert lab.query("run == 'pert-a'")["hardness"].tolist() == pytest.approx([2.0, 4.0, 6.0])




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




def test_injected_sequences_and_their_lengths():
    table = pd.DataFrame({"seq_id": ["x", "y"], "text": ["a b c", "d"]})
    vocab = {"a": 1, "b": 2, "c": 3, "d": 4}

    def tokenizer(texts, add_special_tokens=True):
        assert add_special_tokens is False
        return {"input_ids": [[vocab[w] for w in t.split()] * 20 for t in texts]}

    seqs = R.injected_sequences(table, tokenizer)
    assert seqs == {"x": [1, 2, 3] * 20, "y": [4] * 20}
    lens = R.sequence_lengths(seqs).set_index("seq_id")
    # 60 tokens: P = min(32, 30) = 30, L = min(32, 30) = 30; 20 tokens: 10 and 10
    assert lens.loc["x"].tolist() == [60, 30, 30] and lens.loc["y"].tolist() == [20, 10, 10]




def test_target_frames_use_the_run_table_roles():
    runs = _run_table().query("run not in ['std-range', 'range-q4']")
    exp = _exposure().assign(window="q4")
    frames = R.target_frames(["pert-a"], _scores(), {"pert-a": exp, "pert-b": exp}, runs)
    f = frames["pert-a"].set_index("seq_id")
    # counterfactual std-a (same width and budget) is left out: hardness over std-b alone
    assert f["hardness"].tolist() == pytest.approx([4.0, 4.0, 4.0])
    # cross-model over the other injected run, pert-b: percentile of -nll_suffix 0.5, 0.2, 0.9
    assert f["cross_model"].tolist() == pytest.approx([2 / 3, 1.0, 1 / 3])
    assert f["extract"].tolist() == [1, 0, 0]
    with pytest.raises(PredictingError, match="no exposure table"):
        R.target_frames(["pert-b", "std-a"], _scores(), {"pert-b": exp}, runs)




def test_paper_exp2_tables_and_pair_positives():
    t = PA.paper_exp2_tables()
    assert list(t) == ["quarters", "all6", "late"] and t["late"].loc["recency", "pooled"] == 0.581
    q = PA.paper_pair_positives("quarters")
    assert q.to_dict() == {"range-q1": 1, "range-q2": 2, "range-q3": 48, "range-q4": 4561}
    assert PA.paper_pair_positives("late").to_dict() == {"range-q4": 907, "range-late": 780}
    with pytest.raises(PredictingError, match="no pool"):
        PA.paper_pair_positives("halves")



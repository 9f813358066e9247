"""Models outside the ladder placed on its law (the size chapter's ablations)."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from analysis.size.method import bound_targets, ladder_method, place_on_law
from analysis.size.method_absolute import PCAIndex, ScalingLaw
from analysis.size.method_probe import accuracy_profile
from analysis.size.method_relative import pairwise_tests, relative_lower_bound
from analysis.size.params import SizeError
from analysis.size.text import ablation_text, valid_count
from size_toys import toy_acc


def _method(loo_ratios):
    cols = pd.Index(["f1", "f2"])
    pca = PCAIndex(z=pd.Series([0.0]), loadings=pd.Series([1.0, 0.0], index=cols),
                   explained=1.0, mean=pd.Series([0.5, 0.5], index=cols), flipped=False)
    law = ScalingLaw(A=1000.0, B=5.0, c=np.log(1000.0), r2=1.0, n=3)
    return SimpleNamespace(pca=pca, law=law, loo=SimpleNamespace(table=pd.DataFrame({"ratio": loo_ratios})))


def test_place_on_law_by_hand():
    profiles = pd.DataFrame({"f1": [0.7, 0.4], "f2": [0.1, 0.9]}, index=["abl-a", "abl-b"])
    theta = pd.Series({"abl-a": 1000.0, "abl-b": 1000.0, "other": 5.0})
    out = place_on_law(_method([0.5, 2.0]), profiles, theta)
    # z = (0.7 - 0.5) * 1 = 0.2 -> 1000 e^1; z = -0.1 -> 1000 e^-0.5
    assert out["z"].tolist() == pytest.approx([0.2, -0.1])
    assert out["theta_hat"].tolist() == pytest.approx([1000 * np.e, 1000 * np.exp(-0.5)])
    assert out["ratio"].tolist() == pytest.approx([np.e, np.exp(-0.5)])
    # e > 2 is outside the ladder's own leave-one-out ratios [0.5, 2]; e^-0.5 = 0.61 is inside
    assert out["outside_loo"].tolist() == [True, False]
    with pytest.raises(SizeError, match="theta lacks the sizes"):
        place_on_law(_method([0.5, 2.0]), profiles, theta.drop("abl-b"))


def test_ablation_text_by_hand():
    placed = pd.DataFrame({"model": ["lab:abl-overexposed"], "theta": [394_000.0], "z": [0.0],
                           "theta_hat": [1_182_000.0], "ratio": [3.0], "outside_loo": [True]})
    text = ablation_text(placed, pd.Series([0.7, 1.3]))
    assert text == ("**abl-overexposed** (trained with every popular excerpt at 4x its copies; breaks "
                    "Assumption 1 (equal exposure)): 0.39M parameters, predicted 1.18M, 3.00 times its "
                    "size, so it reads larger than it is, outside the ladder's own range (0.70 to 1.30).")
    bounded = placed.assign(abs_lb=591_000.0, rel_lb=1_049_216.0, reference="lab:wide-128",
                            best_lb=1_049_216.0, source="Rel", valid=False)
    text = ablation_text(bounded, pd.Series([0.7, 1.3]))
    assert text.endswith("(0.70 to 1.30); best lower bound 1.05M (relative, over wide-128), **invalid**: "
                         "above its true size.")
    held = bounded.assign(model="lab:held-48", ratio=0.8, outside_loo=False, best_lb=np.nan, source="")
    text = ablation_text(held, pd.Series([0.7, 1.3]))
    assert text.startswith("**held-48** (trained like the ladder; breaks nothing: another shape")
    assert "no bound" in text
    assert valid_count(bounded) == "0 of 1" and valid_count(bounded.iloc[:0]) == "—"


def test_bound_targets_out_of_calibration():
    ladder_theta = pd.Series({"w1": 100.0, "w2": 200.0, "w3": 400.0, "d1": 150.0, "d2": 300.0, "d3": 600.0})
    method = ladder_method(toy_acc(ladder_theta.to_dict()), ladder_theta)
    # two targets: one that memorizes as a model of its size does, one of 120 parameters that
    # memorizes like a 600-parameter model (over-exposed): it must read larger than it is
    target_acc = pd.concat([toy_acc({"fair": 300.0}, seed=9),
                            toy_acc({"over": 600.0}, seed=11)], ignore_index=True)
    theta = pd.Series({"fair": 300.0, "over": 120.0})
    profiles = accuracy_profile(target_acc)
    out = bound_targets(method, profiles, theta)
    assert out["model"].tolist() == ["fair", "over"]
    over = out.set_index("model").loc["over"]
    assert over["ratio"] > 2 and over["best_lb"] > 120 and not over["valid"]
    assert out["abs_lb"].tolist() == pytest.approx((0.5 * out["theta_hat"]).tolist())
    # the relative bound is the paper's over the ladder's models only
    both = pd.concat([method.profiles, profiles])
    pairs = pairwise_tests(both, targets=["fair", "over"], references=list(ladder_theta.index))
    for name in ("fair", "over"):
        rel = relative_lower_bound(pairs, name, ladder_theta)
        row = out.set_index("model").loc[name]
        assert (row["rel_lb"] == rel.bound) or (np.isnan(row["rel_lb"]) and np.isnan(rel.bound))
        assert row["best_lb"] == pytest.approx(np.nanmax([row["abs_lb"], row["rel_lb"]]))
        assert row["valid"] == (row["best_lb"] <= row["theta"])
    with pytest.raises(SizeError, match="in the calibration set"):
        bound_targets(method, method.profiles.loc[["w1"]], ladder_theta)


def test_index_ablation_matches_the_steps_on_each_half():
    from analysis.size.method_absolute import fit_law, index_ablation, loo_cv, pca_index
    from analysis.size.method_probe import accuracy_profile

    theta = pd.Series({f"m{i}": 10.0 ** (4 + i / 2) for i in range(6)})
    profiles = accuracy_profile(toy_acc(theta))
    out = index_ablation(profiles, theta).set_index("profile")
    assert out["features"].to_dict() == {"raw": 16, "lifted": 16, "both (the paper's 2KL)": 32}
    # each row is the pipeline's own steps on that half: recompute the raw one by hand
    raw = profiles.loc[:, profiles.columns.get_level_values("kind") == "raw"]
    assert out.loc["raw", "r2"] == pytest.approx(fit_law(pca_index(raw).z, theta).r2)
    assert out.loc["raw", "loo_r2"] == pytest.approx(loo_cv(raw, theta).r2_log)
    both = out.loc["both (the paper's 2KL)"]
    assert both["r2"] == pytest.approx(fit_law(pca_index(profiles).z, theta).r2)
    # the toy's accuracy is linear in log size, so every half fits the law almost exactly
    assert (out["r2"] > 0.95).all()
    with pytest.raises(SizeError, match="no lifted columns"):
        index_ablation(raw, theta)

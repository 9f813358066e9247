"""Hand-checked tests of the size chapter's relative inference (analysis.size.method_relative)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.size.method_relative import (
    best_bound,
    block_scores,
    decision_metrics,
    pairwise_tests,
    relative_lower_bound,
    sweep_at,
    tau_sweep,
    truly_larger,
)
from analysis.size.params import SizeError, load_paper_table
from analysis.stats.permutation import SignTestResult, sign_permutation_test


def _two_model_profiles() -> pd.DataFrame:
    cols = pd.MultiIndex.from_tuples(
        [(t, ln, k) for t in ("A", "B") for ln in (4, 8) for k in ("raw", "lifted")],
        names=["text_id", "prefix_len", "kind"],
    )
    f = [0.6, 0.4, 0.8, 0.6, 0.3, 0.1, 0.5, 0.3]
    g = [0.5, 0.4, 0.6, 0.5, 0.4, 0.3, 0.4, 0.3]
    return pd.DataFrame([f, g], index=["f", "g"], columns=cols)


def test_block_scores_by_hand():
    prof = _two_model_profiles()
    raw = block_scores(prof, "f", "g", kind="raw")
    # A: ((0.6-0.5) + (0.8-0.6))/2 = 0.15; B: ((0.3-0.4) + (0.5-0.4))/2 = 0
    assert raw.to_dict() == pytest.approx({"A": 0.15, "B": 0.0})
    lifted = block_scores(prof, "f", "g", kind="lifted")
    # A: (0 + 0.1)/2 = 0.05; B: (-0.2 + 0)/2 = -0.1
    assert lifted.to_dict() == pytest.approx({"A": 0.05, "B": -0.1})
    both = block_scores(prof, "f", "g")
    assert both.to_dict() == pytest.approx({"A": 0.1, "B": -0.05})
    with pytest.raises(ValueError, match="kind"):
        block_scores(prof, "f", "g", kind="mean")
    with pytest.raises(ValueError, match="f='h'"):
        block_scores(prof, "h", "g")


def test_pairwise_tests_all_ordered_pairs():
    rng = np.random.default_rng(0)
    cols = pd.MultiIndex.from_tuples([(f"T{j}", 4, "raw") for j in range(10)],
                                     names=["text_id", "prefix_len", "kind"])
    base = rng.uniform(0.2, 0.4, size=10)
    prof = pd.DataFrame([base, base + 0.1 + 0.01 * rng.normal(size=10), base + 0.2], index=["s", "m", "l"],
                        columns=cols)
    tests = pairwise_tests(prof)
    assert len(tests) == 6  # N(N-1)
    sig = {(r.f, r.g) for r in tests.itertuples() if r.significant}
    assert sig == {("m", "s"), ("l", "s"), ("l", "m")}
    # with every block positive, p = 1/2^K
    assert tests.set_index(["f", "g"]).loc[("l", "s"), "pvalue"] == 1 / 2**10


# --- tau, metrics and bounds ---------------------------------------------------


def test_decision_metrics_hand_table():
    m = decision_metrics([True, True, False, False, True], [True, False, True, False, True])
    assert (m["tp"], m["fp"], m["fn"], m["tn"]) == (2, 1, 1, 1)
    assert m["precision"] == pytest.approx(2 / 3) and m["recall"] == pytest.approx(2 / 3)
    assert m["accuracy"] == pytest.approx(3 / 5)
    none = decision_metrics([False, False], [True, False])
    assert math.isnan(none["precision"]) and none["recall"] == 0 and none["accuracy"] == 0.5


def test_truly_larger_uses_the_multiplicative_margin():
    assert truly_larger(14, 10, 0.39) and not truly_larger(14, 10, 0.4)
    assert not truly_larger(10, 10, 0.0)


def test_tau_sweep_by_hand():
    theta = {"a": 10, "b": 14, "c": 30}
    tests = pd.DataFrame({
        "f": ["b", "c", "c", "a", "b", "a"],
        "g": ["a", "a", "b", "b", "c", "c"],
        "pvalue": [0.01, 0.001, 0.2, 0.04, 0.5, 0.9],
    })
    out = tau_sweep(tests, theta, taus=[0.01, 0.5]).set_index("tau")
    # decisions (p <= 0.05): b>a yes, c>a yes, c>b no, a>b yes, b>c no, a>c no
    # tau=0.01 truth: b>a, c>a, c>b -> tp 2, fp 1 (a>b), fn 1 (c>b), tn 2
    assert out.loc[0.01, ["tp", "fp", "fn", "tn"]].tolist() == [2, 1, 1, 2]
    assert out.loc[0.01, "precision"] == pytest.approx(2 / 3)
    assert out.loc[0.01, "recall"] == pytest.approx(2 / 3)
    # tau=0.5: 14 > 15 is false, so b>a becomes a false positive; truth = c>a, c>b
    assert out.loc[0.5, ["tp", "fp", "fn", "tn"]].tolist() == [1, 2, 1, 2]
    assert out.loc[0.5, "accuracy"] == pytest.approx(3 / 6)
    default = tau_sweep(tests, theta)
    assert default["tau"].iloc[0] == 0.01 and default["tau"].iloc[-1] == 0.70 and len(default) == 70


def test_relative_and_best_bound():
    theta = {"g8": 8, "g35": 35, "g70": 70, "g405": 405}
    tests = pd.DataFrame({"f": ["t"] * 4, "g": list(theta), "pvalue": [0.001, 0.03, 0.2, 0.6]})
    rb = relative_lower_bound(tests, "t", theta)
    assert (rb.bound, rb.reference, rb.n_beaten) == (35.0, "g35", 2)
    none = relative_lower_bound(tests.assign(pvalue=0.5), "t", theta)
    assert math.isnan(none.bound) and none.reference is None
    assert best_bound(44, 35) == (44, "Abs")
    assert best_bound(9, 9) == (9, "Rel")
    assert best_bound(2, float("nan")) == (2, "Abs")
    with pytest.raises(ValueError, match="not a target"):
        relative_lower_bound(tests, "u", theta)


@pytest.mark.parametrize("name", ["table2", "table3"])
def test_paper_tables_best_bound_is_the_max_of_the_two(name):
    table = load_paper_table(name)
    for row in table.itertuples():
        bound, source = best_bound(row.abs_lb, row.rel_lb)
        assert bound == row.best_lb
        if row.abs_lb != row.rel_lb:
            assert source == row.source
        # Abs. LB is 0.5 x Abs. Size, each rounded from unrounded values
        assert abs(row.abs_lb - row.abs_size / 2) <= 0.75


# --- calibration (beyond the paper) ------------------------------------------


def test_sweep_at_takes_the_nearest_tau():
    sweep = pd.DataFrame({"tau": [0.01, 0.49, 0.52, 0.7], "precision": [1.0, 0.8, 0.7, 0.6]})
    assert sweep_at(sweep, 0.5)["precision"] == 0.8
    assert sweep_at(sweep, 0.0)["tau"] == 0.01
    with pytest.raises(SizeError, match="no rows"):
        sweep_at(sweep.iloc[:0], 0.5)


def test_size_re_exports_the_stats_sign_test():
    from analysis.stats import permutation

    assert sign_permutation_test is permutation.sign_permutation_test
    assert SignTestResult is permutation.SignTestResult
    prof = _two_model_profiles()
    res = sign_permutation_test(block_scores(prof, "f", "g", kind="raw").to_numpy())
    assert (res.k, res.pvalue) == (2, 0.5)  # s = (0.15, 0): flips 0.15, 0.15, -0.15, -0.15

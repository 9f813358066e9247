"""Tests of the size chapter's calibration under a true null (analysis.size.method_calibration)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.size.method_calibration import (
    calibration,
    equal_size_false_positives,
    null_calibration,
    null_pvalues,
)
from analysis.size.params import KINDS


def _null_positions(k=12, lens=(4, 8), n=30, n_base=3, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    groups = (("popular", [f"T{j}" for j in range(k)]), ("baseline", [f"B{j}" for j in range(n_base)]))
    for group, texts in groups:
        for t in texts:
            for ln in lens:
                p = rng.uniform(0.1, 0.7)
                for i in range(n):
                    rows.append(("m", t, group, ln, i, bool(rng.random() < p)))
    return pd.DataFrame(rows, columns=["model", "text_id", "group", "prefix_len", "position", "correct"])


def test_null_calibration_rate_near_alpha():
    pos = _null_positions()
    args = dict(alphas=(0.05, 0.2, 0.5), n_rep=300, kind="raw", seed=1)
    cal = null_calibration(pos, **args).set_index("alpha")
    # exchangeable pseudo-models: the exact test's false-positive rate is at most alpha
    assert cal.loc[0.05, "false_positive_rate"] <= 0.05 + 3 * cal.loc[0.05, "se"]
    assert abs(cal.loc[0.2, "false_positive_rate"] - 0.2) < 4 * cal.loc[0.2, "se"]
    assert abs(cal.loc[0.5, "false_positive_rate"] - 0.5) < 4 * cal.loc[0.5, "se"]
    again = null_calibration(pos, **args).set_index("alpha")
    pd.testing.assert_frame_equal(cal, again)


def test_null_pvalues_kinds_and_validation():
    pos = _null_positions(k=6, n=10)
    for kind in KINDS:
        p = null_pvalues(pos, n_rep=20, kind=kind, seed=0)
        assert p.shape == (20,) and np.all((p > 0) & (p <= 1))
    with pytest.raises(ValueError, match="needs baseline"):
        null_pvalues(pos[pos.group == "popular"], n_rep=5, kind="lifted")
    with pytest.raises(ValueError, match="model must be one of"):
        null_pvalues(pos, model="other", n_rep=5)


def test_equal_size_false_positives():
    theta = {"a": 27, "b": 27, "c": 70}
    tests = pd.DataFrame({"f": ["a", "b", "c", "a"], "g": ["b", "a", "a", "c"],
                          "pvalue": [0.03, 0.4, 0.01, 0.9]})
    out = equal_size_false_positives(tests, theta, alphas=[0.05, 0.5]).set_index("alpha")
    assert out.loc[0.05].tolist() == [0.5, 2] and out.loc[0.5].tolist() == [1.0, 2]


def test_null_calibration_exposes_the_shared_baseline_term():
    # Lifted block scores share beta(f*) - beta(g*): a common shift that sign flips of single
    # blocks do not reproduce, so the test rejects a true null too often (beyond the paper).
    pos = _null_positions()
    raw = null_calibration(pos, alphas=(0.05,), n_rep=300, kind="raw", seed=2)
    lifted = null_calibration(pos, alphas=(0.05,), n_rep=300, kind="lifted", seed=2)
    assert raw["false_positive_rate"].iloc[0] <= 0.05 + 3 * raw["se"].iloc[0]
    assert lifted["false_positive_rate"].iloc[0] > 0.05 + 3 * lifted["se"].iloc[0]


def test_calibration_runs_each_kind_and_is_empty_for_a_model_without_answers():
    pos = _null_positions(k=6, n=10)
    cal = calibration(pos, "m", n_rep=20, seed=1)
    # the source's formula on raw, then on lifted accuracies, then the book's reading of both
    assert cal["kind"].tolist() == ["raw"] * 3 + ["lifted"] * 3 + ["all"] * 3
    for i, kind in enumerate(("raw", "lifted", "all")):
        pd.testing.assert_frame_equal(cal.iloc[3 * i:3 * i + 3].reset_index(drop=True),
                                      null_calibration(pos, model="m", n_rep=20, kind=kind, seed=1))
    empty = calibration(pos, "other", n_rep=20)
    assert empty.empty and list(empty.columns) == ["alpha", "false_positive_rate", "se", "n_rep", "kind"]

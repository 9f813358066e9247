"""Dataset inference held to its evidence (:mod:`analysis.entropy.method_di`): the
rule's calls, the undecided sets, the mean-loss baseline and the source's τ
convention, on hand-built tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.entropy import method_di as D
from analysis.entropy.method_sets import Inference, di_table
from analysis.entropy.params import load_paper_table

WHY = "1 level set (e = 8 (60 pairs)) of 60 kept pairs: a line needs 3"


def table(model="m", kind="lab", intercepts=(5.0, 6.0, 1.0, 7.0, np.nan), truths=(1, 1, 0, 0, 0), tau=4.0):
    """A model's decision table: the first set is the reference; a NaN intercept has no line."""
    rows = []
    for k, (b, t) in enumerate(zip(intercepts, truths)):
        decided = np.isfinite(b) and np.isfinite(tau)
        rows.append({"model": model, "kind": kind, "set": f"s{k}",
                     "role": "reference" if k == 0 else "candidate", "truth": t, "intercept": b, "tau": tau,
                     "prediction": float(b > tau) if decided else np.nan,
                     "undecided": None if decided else WHY})
    return pd.DataFrame(rows)


def test_the_rules_calls_name_the_non_members_called_and_the_undecided():
    di = di_table([Inference("m", {}, table())])
    calls = D.di_calls(di, "lab")
    # candidates s1 (member, 6 > 4: called member), s2 (non-member, 1: non-member),
    # s3 (non-member, 7: called member), s4 (no line)
    assert (calls["candidates"], calls["decided"], calls["called_members"], calls["right"]) == (4, 3, 2, 2)
    assert (calls["members"], calls["nonmembers"], calls["nonmembers_decided"]) == (1, 3, 2)
    assert calls["nonmembers_called"] == ["m: s3"] and calls["members_missed"] == []
    assert calls["undecided"] == [{"set": "m: s4", "truth": 0,
                                   "why": "1 level set (e = 8 (60 pairs)) of 60 kept pairs: a line needs 3"}]
    assert D.di_calls(di, "real")["candidates"] == 0


def attacks(nll):
    return pd.DataFrame({"nll": nll})


def test_the_mean_loss_baseline_sets_its_tau_from_the_reference():
    t = table(intercepts=(5.0, 6.0, 1.0, 7.0), truths=(1, 1, 0, 0))
    # the reference's pairs all have loss 2: every bootstrap mean is 2, so tau_loss = 2 exactly
    inf = Inference("m", {}, t, attacks={"s0": attacks([2.0] * 4), "s1": attacks([1.0, 2.0, 2.5]),
                                         "s2": attacks([3.0, 3.0]), "s3": attacks([1.5, 2.5, 1.0, 1.0])})
    out = D.loss_rule([inf], n_boot=50, seed=1)
    assert out["tau_loss"].tolist() == [2.0] * 4
    # means 2 (not below 2: non-member), 5.5/3, 3, 1.5: predictions 0, 1, 0, 1
    assert out["loss"].tolist() == pytest.approx([2.0, 5.5 / 3, 3.0, 1.5])
    assert out["prediction"].tolist() == [0, 1, 0, 1] and out["correct"].tolist() == [0, 1, 1, 0]
    assert out["pairs"].tolist() == [4, 3, 2, 4]
    assert (out["loss lo"] <= out["loss"]).all() and (out["loss"] <= out["loss hi"]).all()
    assert out.loc[2, "loss lo"] == out.loc[2, "loss hi"] == 3.0  # a constant set has no spread
    with pytest.raises(D.EntropyError, match="no pair"):
        D.loss_rule([Inference("m", {}, t)])


def test_the_two_rules_side_by_side_on_the_sets_both_decide():
    di = di_table([Inference("m", {}, table())])
    # intercept rule: s1 right, s2 right, s3 wrong, s4 undecided; the baseline: s1 wrong, s2, s3, s4 right
    losses = pd.DataFrame({"model": "m", "kind": "lab", "set": ["s0", "s1", "s2", "s3", "s4"],
                           "role": ["reference"] + ["candidate"] * 4, "correct": [1, 0, 1, 1, 1]})
    cmp = D.rule_comparison(di, losses, "lab")
    assert (cmp["sets"], cmp["intercept_right"], cmp["loss_right"]) == (3, 2, 2)
    assert cmp["only_intercept"] == ["m: s1"] and cmp["only_loss"] == ["m: s3"]
    assert (cmp["candidates"], cmp["loss_right_all"]) == (4, 3)


def test_the_sources_tau_convention_beside_the_books():
    table1 = load_paper_table("table1")
    # OLMo-2's training set (OLMo-2-1124-Mix) has intercept 3.724 and tau = 3: 0.724 below it
    assert D.source_tau_margin(table1) == pytest.approx(0.724)
    di = di_table([Inference("m", {}, table())])
    out = D.tau_conventions(di, table1).set_index("rule")
    assert list(out.index) == ["book", "source margin", "source value (Pythia)", "source value (OLMo-2)"]
    # reference intercept 5: the source's margin puts tau at 4.276; candidates with a line: 6, 1, 7
    assert out.loc["source margin", "tau"] == pytest.approx(5 - 0.724)
    assert out["decided"].tolist() == [3, 3, 3, 3]
    # tau 4 and 4.276: 6 and 7 are members (2 calls), right on 6 and 1; tau 0 and 3: the same here
    assert out["called members"].tolist() == [2, 2, 3, 2]
    assert out["right"].tolist() == [2, 2, 1, 2]
    no_ref = D.tau_conventions(di_table([Inference("n", {}, table(intercepts=(np.nan, 6.0), truths=(1, 0),
                                                                  tau=np.nan))]), table1)
    assert no_ref.set_index("rule").loc["book", "decided"] == 0
    assert no_ref.set_index("rule").loc["source value (Pythia)", "called members"] == 1

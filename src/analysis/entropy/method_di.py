"""Dataset inference held to its evidence: what the rule calls, the sets it cannot
decide, a mean-loss baseline on the same sets and the source's τ convention.

:func:`di_calls` counts the intercept rule's calls on one kind of model (which
non-member sets it calls members, which sets it leaves undecided and why);
:func:`loss_rule` is the baseline, the same auditor's procedure with the mean
token loss of each set's pairs in place of the intercept; :func:`rule_comparison`
sets the two side by side on the sets both decide; :func:`tau_conventions` applies
the source's way of setting τ beside the book's. Pure functions over the decision
tables: no model, no English.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analysis.entropy.method_sets import Inference
from analysis.entropy.params import DI_QUANTILE, PAPER_TAU, EntropyError
from analysis.stats.lines import percentile_interval


def _candidates(di: pd.DataFrame, kind: str) -> pd.DataFrame:
    return di[(di["role"] == "candidate") & (di["kind"] == kind)]


def _names(rows: pd.DataFrame) -> list[str]:
    return [f"{m}: {s}" for m, s in zip(rows["model"], rows["set"])]


def di_calls(di: pd.DataFrame, kind: str) -> dict:
    """The intercept rule's calls on the candidate sets of models of ``kind``
    (:func:`~analysis.entropy.method_sets.di_table`'s table): how many it decides,
    calls members and gets right; the non-member sets it calls members and the
    member sets it misses (``"model: set"``); the undecided sets with the reason."""
    c = _candidates(di, kind)
    decided = c[c["prediction"].notna()]
    called = decided["prediction"] == 1
    undecided = c[c["prediction"].isna()]
    why = undecided["undecided"] if "undecided" in undecided else pd.Series([None] * len(undecided))
    return {"candidates": len(c), "decided": len(decided), "called_members": int(called.sum()),
            "right": int((decided["prediction"] == decided["truth"]).sum()),
            "members": int((c["truth"] == 1).sum()), "nonmembers": int((c["truth"] == 0).sum()),
            "nonmembers_decided": int((decided["truth"] == 0).sum()),
            "nonmembers_called": _names(decided[called & (decided["truth"] == 0)]),
            "members_missed": _names(decided[~called & (decided["truth"] == 1)]),
            "undecided": [{"set": f"{m}: {s}", "truth": int(t), "why": w} for m, s, t, w
                          in zip(undecided["model"], undecided["set"], undecided["truth"], why)]}


def loss_rule(inferences: Sequence[Inference], n_boot: int = 1000, seed: int = 0,
              quantile: float = DI_QUANTILE) -> pd.DataFrame:
    """The mean-loss baseline of dataset inference on the same sets: each set's mean
    token loss over the pairs its run scored (``Inference.attacks``' ``nll``), a
    bootstrap of that mean over the pairs, and the rule "member when the mean loss
    is below τ_loss", τ_loss being the ``1 − quantile`` quantile of the reference
    set's bootstrap means (the mirror of the intercept rule's τ: a member set like
    the reference clears it in ``1 − quantile`` of resamples). One row per set:
    ``model, kind, set, role, truth, pairs, loss, loss lo, loss hi, tau_loss,
    prediction, correct``."""
    rows = []
    for inf in inferences:
        if not inf.attacks:
            raise EntropyError(f"model {inf.model!r}: no pair of its sets was scored for the baseline")
        rng = np.random.default_rng(seed)
        means, boots = {}, {}
        for label, frame in inf.attacks.items():
            nll = frame["nll"].to_numpy(float)
            means[label] = float(nll.mean())
            boots[label] = nll[rng.integers(0, len(nll), (n_boot, len(nll)))].mean(axis=1)
        table = inf.table.set_index("set")
        ref = table.index[table["role"] == "reference"][0]
        tau = float(np.quantile(boots[ref], 1 - quantile))
        for label, mean in means.items():
            lo, hi = percentile_interval(boots[label])
            truth = int(table.loc[label, "truth"])
            prediction = int(mean < tau)
            rows.append({"model": inf.model, "kind": table.loc[label, "kind"], "set": label,
                         "role": table.loc[label, "role"], "truth": truth, "pairs": len(inf.attacks[label]),
                         "loss": mean, "loss lo": lo, "loss hi": hi, "tau_loss": tau,
                         "prediction": prediction, "correct": int(prediction == truth)})
    return pd.DataFrame(rows)


def rule_comparison(di: pd.DataFrame, losses: pd.DataFrame, kind: str) -> dict:
    """The intercept rule against the mean-loss baseline on the candidate sets of
    ``kind`` that both decide: sets compared, each rule's right calls, and the sets
    only one of them gets right; plus the baseline's right calls on every candidate."""
    c = _candidates(di, kind).merge(_candidates(losses, kind)[["model", "set", "correct"]],
                                    on=["model", "set"], suffixes=("", "_loss"))
    both = c[c["correct"].notna()]
    only_i = both[(both["correct"] == 1) & (both["correct_loss"] == 0)]
    only_l = both[(both["correct"] == 0) & (both["correct_loss"] == 1)]
    return {"sets": len(both), "intercept_right": int(both["correct"].sum()),
            "loss_right": int(both["correct_loss"].sum()), "only_intercept": _names(only_i),
            "only_loss": _names(only_l), "candidates": len(c), "loss_right_all": int(c["correct_loss"].sum())}


def source_tau_margin(table1: pd.DataFrame) -> float:
    """How far below the intercept of its known training set the source puts OLMo-2's
    τ (Table 1's OLMo-2 member row minus τ = 3): the one model of the source with a
    training set measured beside its τ, the auditor's reference of Section 6.4."""
    member = table1[(table1["llm"] == "OLMo-2") & (table1["ground_truth"] == 1)]
    if len(member) != 1:
        raise EntropyError(f"Table 1 must hold one OLMo-2 member row, got {len(member)}")
    return float(member["intercept"].iloc[0]) - PAPER_TAU["OLMo-2"]


def tau_conventions(di: pd.DataFrame, table1: pd.DataFrame) -> pd.DataFrame:
    """The intercept rule under four τ per model: the book's (``tau``), the source's
    convention carried over (the reference set's intercept minus
    :func:`source_tau_margin`), and the source's two values as printed (τ = 0 for
    Pythia, 3 for OLMo-2). One row per model and rule: ``tau``, ``decided``,
    ``called members`` and ``right`` over the model's candidate sets with a line."""
    margin = source_tau_margin(table1)
    rows = []
    for model, t in di.groupby("model", sort=False):
        ref = t[t["role"] == "reference"].iloc[0]
        c = t[(t["role"] == "candidate") & t["intercept"].notna()]
        rules = {"book": float(ref["tau"]), "source margin": float(ref["intercept"]) - margin,
                 **{f"source value ({k})": v for k, v in PAPER_TAU.items()}}
        for rule, tau in rules.items():
            ok = np.isfinite(tau)
            called = (c["intercept"] > tau).astype(int) if ok else pd.Series(dtype=int)
            rows.append({"model": model, "kind": ref["kind"], "rule": rule, "tau": tau,
                         "decided": len(c) if ok else 0,
                         "called members": int(called.sum()) if ok else 0,
                         "right": int((called == c["truth"]).sum()) if ok else 0})
    return pd.DataFrame(rows)

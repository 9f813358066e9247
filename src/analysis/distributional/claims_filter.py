"""The distributional chapter's claims on the embedding filter of candidate n-gram
pairs: what its two thresholds keep (the book's own; the source gives no share), and
whether the memorization trend survives every threshold of the source's grid (its
Figure 6).

Split from :mod:`analysis.distributional.claims` by role; the helpers and thresholds
are that module's.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from analysis import ngrams
from analysis.core.claims import EXTENSION, INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED, Claim, Verdict, within
from analysis.distributional.claims import (
    FILTER,
    NO_LADDER_CONTROL,
    SENSITIVITY,
    TASK_UNITS,
    TREND_TEST,
    _claim,
    _decide_spec,
    _nt,
    _trend_spec,
)
from analysis.distributional.method_trends import threshold_trends
from analysis.distributional.params import MIN_MODELS, MIN_PAIRS, MOST, NEARLY_ALL, paper_value

# ---------------------------------------------------------------------------
# The embedding filter (the book's own: the source gives no share)
# ---------------------------------------------------------------------------


def filter_claims(counts: Mapping[str, int], task: str = "knowledge", n: int = 3, n_facts: int | None = None
                  ) -> list[Claim]:
    """What the two thresholds do to one (task, n)'s candidates
    (:func:`~analysis.distributional.method_tables.filter_counts`): the authors'
    effective threshold keeps nearly every one (at least :data:`NEARLY_ALL`), and
    the paper's, with MiniLM in place of E5, keeps at most half (:data:`MOST`). Both
    are counts over the whole candidate set (a census, no sampling), of the
    ``n_facts`` facts whose candidates they are."""
    total = counts["total"]
    common = dict(section=FILTER, unit=TASK_UNITS.get(task, "facts"), n_units=n_facts, null_kind="target",
                  n=total, min_n=MIN_PAIRS, extra={"unit": "share", "task": task, "n": n, **counts},
                  control_reason="a count of the embedding filter over every candidate; no signal to take "
                                 "away")
    out = []
    for id, statement, k, target, tol, bound in (
            ("authors_filter", f"The authors' code's effective threshold (γ = {ngrams.AUTHORS_THRESHOLD:g}) "
             f"keeps nearly every candidate {n}-gram pair of the {task} task (a filter in name only)",
             counts["authors"], 1.0, 1 - NEARLY_ALL, NEARLY_ALL),
            ("paper_filter", f"With MiniLM in place of E5, the paper's threshold (γ = "
             f"{ngrams.PAPER_THRESHOLDS['triviaqa'][n]:g} for TriviaQA {n}-grams) keeps at most half of the "
             f"{task} task's candidate {n}-gram pairs", counts["paper"], 0.0, MOST, MOST)):
        comparison = f"the share of candidates within {tol:g} of {target:g}, counted over every candidate"
        if not total:
            out.append(_nt(id, statement, "this run has no candidate to count", EXTENSION,
                           comparison=comparison,
                           section=FILTER, unit=common["unit"], extra=common["extra"]))
            continue
        sr = within(value=k / total, target=target, tolerance=tol, n=total, min_n=MIN_PAIRS, exact=True,
                    unit="candidate pairs")
        out.append(_claim(id, statement, sr, EXTENSION, comparison=comparison, value=k / total,
                          null_value=bound, **common))
    return out


# ---------------------------------------------------------------------------
# The threshold check
# ---------------------------------------------------------------------------


def _threshold_verdict(row) -> tuple[Verdict, dict]:
    if row["pairs"] < MIN_PAIRS:
        return Verdict(INCONCLUSIVE, f"{row['pairs']} pairs, below the minimum of {MIN_PAIRS}"), {}
    spec = _trend_spec(row["params"], row["rhos"])
    return _decide_spec(spec), spec


def sensitivity_claim(sens: pd.DataFrame, n: int = 3, paper: pd.DataFrame | None = None) -> Claim:
    """The source's Mem_n rises with size at every threshold of its grid, from
    :func:`~analysis.distributional.method_tables.sensitivity_table`: at each
    threshold keeping at least :data:`MIN_PAIRS` pairs, the trend across the models
    (permutation null over them); reproduced when it is reproduced at every
    threshold, not reproduced when a threshold with enough pairs shows evidence
    against, inconclusive else."""
    statement = f"The knowledge task's Mem_{n} rises with model size at every cosine threshold"
    source = paper_value(paper, "Figure 6", f"TriviaQA (n = {n})") or "the same trend at γ ∈ {0.7, 0.75, 0.8}"
    comparison = f"{TREND_TEST}, at every threshold, each keeping at least {MIN_PAIRS} pairs"
    kw = dict(comparison=comparison, section=SENSITIVITY, source_value=source, unit="models")
    rows = threshold_trends(sens)
    if rows.empty:
        return _nt(f"sensitivity{n}", statement, "no threshold was applied", **kw)
    per = {label: (g["params"].to_numpy(float), g["rho"].to_numpy(float))
           for label, g in sens[sens["gamma"] != "no filter"].groupby("gamma", sort=False)}
    rows = rows.assign(params=[per[g][0] for g in rows["gamma"]], rhos=[per[g][1] for g in rows["gamma"]])
    decided = [_threshold_verdict(r) for _, r in rows.iterrows()]
    rows = rows.assign(status=[v.status for v, _ in decided], why=[v.reason for v, _ in decided],
                       pvalue=[s.get("p", np.nan) for _, s in decided])
    fewest = int(rows["pairs"].min())
    enough = rows["pairs"] >= MIN_PAIRS
    against = rows[enough & (rows["status"] == NOT_REPRODUCED)]
    if len(against):
        v = Verdict(NOT_REPRODUCED, "; ".join(f"{g}: {w}" for g, w in zip(against["gamma"], against["why"])))
    elif (rows["status"] == REPRODUCED).all():
        v = Verdict(REPRODUCED, f"reproduced at all {len(rows)} thresholds, on at least {fewest} pairs")
    else:
        weak = rows[rows["status"] != REPRODUCED]
        v = Verdict(INCONCLUSIVE, "; ".join(f"{g}: {w}" for g, w in zip(weak["gamma"], weak["why"])))
    rho = rows["size_rho"].to_numpy(float)
    models = int(rows["models"].min())
    return _claim(f"sensitivity{n}", statement, v,
                  value=float(np.nanmin(rho)) if np.isfinite(rho).any() else None,
                  p=float(np.nanmax(rows["pvalue"])) if rows["pvalue"].notna().any() else None,
                  n=fewest, n_units=models, min_n=MIN_MODELS, null_kind="permutation", null_value=0.0,
                  control_reason=NO_LADDER_CONTROL,
                  extra={"unit": "min_size_rho", "mem_n": n,
                         "thresholds": rows.drop(columns=["params", "rhos"]).to_dict("records")}, **kw)

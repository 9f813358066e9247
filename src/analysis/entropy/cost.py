"""What the entropy chapter's profiles cost in model work.

``scripts/bench_entropy_cost.py`` measures the rate of every kind of model query the
chapter sends (continuations at each prompt and answer length under each decoding,
whole-window scores for the membership attacks) on each model, and projects them
onto the queries each profile sends; it records them in :data:`ENTROPY_COST`.
:func:`profile_cost_table` and :func:`profile_cost_sentence` put that record on the
page, and say so visibly when it is missing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from analysis.core.paths import REPO_ROOT
from analysis.entropy.params import PAPER_MIN_DI_SAMPLES

#: what ``scripts/bench_entropy_cost.py`` writes
ENTROPY_COST = REPO_ROOT / "bench" / "results" / "entropy_cost.json"
COST_PROFILES = ("default", "paper")
_SCRIPT = "`scripts/bench_entropy_cost.py`"


def _record(path) -> dict | None:
    path = Path(path)
    return json.loads(path.read_text()) if path.exists() else None


def profile_cost_table(path=ENTROPY_COST) -> pd.DataFrame:
    """Minutes of model work per stage of the chapter under each profile (columns
    ``stage``, then one per profile of :data:`COST_PROFILES`), with a last row
    ``all``; empty when the record is missing."""
    rec = _record(path)
    if rec is None:
        return pd.DataFrame(columns=["stage", *COST_PROFILES])
    stages = {p: pd.DataFrame(rec["profiles"][p]["stages"]) for p in COST_PROFILES}
    frames = [stages[p].groupby("stage", sort=False)["minutes"].sum().rename(p) for p in COST_PROFILES]
    table = pd.concat(frames, axis=1).fillna(0.0)
    table.loc["all"] = table.sum()
    return table.round(1).rename_axis("stage").reset_index()


def profile_cost_sentence(path=ENTROPY_COST) -> str:
    """The paper profile's cost against the default's, from the record."""
    rec = _record(path)
    if rec is None:
        return (f"**Not measured yet**: {_SCRIPT} measures what the `paper` profile costs; its record "
                f"({Path(path).name}) is not in this checkout.")
    table = profile_cost_table(path).set_index("stage")
    default, paper = table.loc["all", "default"], table.loc["all", "paper"]
    body = table.drop(index="all")
    top = body["paper"].idxmax()
    return (f"What the `paper` profile costs: {_SCRIPT} times every kind of model query this chapter "
            f"sends, on each model from an empty query cache ({rec['pairs_real']} queries per rate on a real "
            f"model, {rec['pairs_lab']} on a lab model; {rec['cores']} cores, {rec['torch_threads']} torch "
            f"threads; commit `{rec['commit']}`, {rec['date']}), and multiplies each rate by the queries "
            f"each profile sends. The default profile's model work comes to {default:.0f} minutes; the "
            f"`paper` profile's, with {PAPER_MIN_DI_SAMPLES:,} pairs per real set, |p| = 100 and |s| = 50, "
            f"to {paper:.0f} minutes ({paper / 60:.1f} hours, {paper / default:.1f} times as long), "
            f"{body.loc[top, 'paper'] / paper:.0%} of it in {top}. The chapter's CPU work (scoring, level "
            f"sets, bootstraps, permutation nulls) comes on top of either.")

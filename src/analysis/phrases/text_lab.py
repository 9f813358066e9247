"""The chapter's words on the lab's ladder, where the copies of each phrase are known: what
the sentences of ``sentences.j2`` on the phrase design, the method's rates set beside that
truth (from :func:`.claims.lab_claims`) and the summary read, and the rates table."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from analysis.core.claim_text import verdict
from analysis.core.claims import Claim
from analysis.core.fmt import fmt_pct
from analysis.phrases.claims import by_kind
from analysis.phrases.text import S


def lab_design(phrases: pd.DataFrame) -> str:
    """The lab's phrase design (from :func:`.run.lab_phrases`): phrases per copy level, controls, words."""
    if phrases.empty:
        return S.lab_design(n=0, levels=[], controls=None, words=0)
    trained, per = phrases[phrases["copies"] > 0], phrases.groupby("copies").size()
    words = int((trained["phrase"].str.split().str.len() * trained["copies"]).sum())
    return S.lab_design(n=len(phrases), levels=[(c, per[c]) for c in sorted(set(trained["copies"]))],
                        controls=per[0] if 0 in per.index else None, words=words)


def _model(table: pd.DataFrame, model: str, level: int | None) -> dict:
    """One model's size, its scorable trained levels (most copies first) and its first separating level."""
    rows = table[table["model"] == model]
    trained = rows[(rows["copies"] > 0) & (rows["total"] > 0)].sort_values("copies", ascending=False)
    return dict(name=model, params=rows["params"].iloc[0], level=level, trained=trained.to_dict("records"))


def lab_verdict(table: pd.DataFrame, claims: Sequence[Claim]) -> str:
    """What the method finds on the lab's ladder (from :func:`.claims.lab_claims`), set against the truth."""
    if table.empty:
        return S.lab_verdict(models=[], ends=[], claims={}, verdicts={})
    kinds = ("lab_controls", "lab_separated", "lab_rises", "lab_size")
    (controls,), (separated,), (rising,), (size,) = (by_kind(claims, k) for k in kinds)
    models = list(dict.fromkeys(table["model"]))
    levels, named = separated.extra["first_level"], dict(zip(kinds, (controls, separated, rising, size)))
    ends = [_model(table, m, levels[m]) for m in dict.fromkeys([models[0], models[-1]])]
    return S.lab_verdict(models=models, ends=ends, claims=named,
                         verdicts={k: verdict(c) for k, c in named.items()})


def lab_summary(table: pd.DataFrame, claims: Sequence[Claim]) -> str:
    """The summary's line on the lab: models separated from the controls, and false positives on them."""
    if table.empty:
        return S.lab_summary(separated=None, controls=None)
    (controls,), (separated,) = by_kind(claims, "lab_controls"), by_kind(claims, "lab_separated")
    return S.lab_summary(separated=separated, controls=controls)


def lab_rate_table(table: pd.DataFrame) -> pd.DataFrame:
    """Matched / scorable and the rate per model (rows) and copy level (columns), for display."""
    if table.empty:
        return pd.DataFrame()
    cell = [f"{m} / {t} ({fmt_pct(r)})" if t else "—" for m, t, r in
            zip(table["matched"], table["total"], table["rate"])]
    level = table["copies"].map(lambda c: "never trained" if c == 0 else f"{c}×")
    frame = table.assign(cell=cell, level=level, size=[S.param_count(n=n) for n in table["params"]])
    wide = frame.pivot_table(index=["model", "size"], columns="level", values="cell", aggfunc="first",
                             sort=False)
    order = list(dict.fromkeys(frame.sort_values("copies")["level"]))
    return wide[order].rename_axis(columns="copies in training")

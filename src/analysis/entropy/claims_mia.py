"""The entropy chapter's verdicts on dataset inference against a baseline and on
membership inference (beyond the source), as :class:`Claim` values.

``di_vs_loss``: the intercept rule against the mean-loss baseline on the lab's
sets both decide (the source's Table 7 finds its rule ahead of its baseline);
``mia_loss``, ``mia_zlib``, ``mia_mink``, ``mia_minkpp``: each attack on the lab's
injected sequences, where membership is randomized; ``mia_intercept``: the
intercept ranking the lab's sets; ``mia_real_shift``: a score that never sees a
model telling the real models' member texts from their non-members (a shifted
split). The statements are in :data:`analysis.entropy.text.STATEMENTS`.
"""

from __future__ import annotations

import pandas as pd

from analysis.core.claims import Claim, directional, not_testable
from analysis.entropy.claims import CHAPTER, SECTIONS
from analysis.entropy.method_di import rule_comparison
from analysis.entropy.mia import ATTACKS, BLIND
from analysis.entropy.params import MIN_DI_SETS, MIN_MIA_CANDIDATES, PAPER_TABLE7
from analysis.entropy.text import STATEMENTS
from analysis.stats.ranks import sign_test

SECTIONS_MIA = {**SECTIONS, "mia": "entropy-mia"}
#: what the source says about membership inference with a randomized split: nothing
BEYOND = "not in the source (beyond it)"


def _claim(id: str, section: str, status_reason: tuple[str, str], comparison: str, **kw) -> Claim:
    status, reason = status_reason
    return Claim(id=id, chapter=CHAPTER, statement=STATEMENTS[id], status=status, reason=reason,
                 comparison=comparison, section=SECTIONS_MIA[section], **kw)


def baseline_claim(di: pd.DataFrame, losses: pd.DataFrame, kind: str = "lab") -> Claim:
    """``di_vs_loss``: the intercept rule's share of right calls minus the mean-loss
    baseline's, on the candidate sets of ``kind`` that both decide; the sign test
    over the sets only one of them gets right (McNemar's exact test); n counts the
    sets compared."""
    id = "di_vs_loss"
    source = "; ".join(f"{k}: {r} of {n}" for k, (r, n) in PAPER_TABLE7.items()) + " (Table 7)"
    cmp = rule_comparison(di, losses, kind)
    if cmp["sets"] == 0:
        return not_testable(id, CHAPTER, STATEMENTS[id], "no candidate set is decided by both rules",
                            section=SECTIONS_MIA["di"], source_value=source, extra=cmp)
    b, c = len(cmp["only_intercept"]), len(cmp["only_loss"])
    value = (cmp["intercept_right"] - cmp["loss_right"]) / cmp["sets"]
    p = sign_test(b, b + c).p if b + c else None
    return _claim(id, "di", directional(value=value, null=0.0, p=p, n=cmp["sets"], min_n=MIN_DI_SETS),
                  "share right by the intercept rule − share right by mean loss > 0, on the sets both decide "
                  "(exact McNemar test: sign test over the sets only one gets right); the source's baseline "
                  "aggregates membership-inference attacks, this one is the mean loss alone",
                  value=value, p=p, n=cmp["sets"], min_n=MIN_DI_SETS, source_value=source, extra=cmp)


def _auc_claim(id: str, row, comparison: str, **extra) -> Claim:
    n = int(row["members"] + row["non-members"])
    if not n or pd.isna(row["auc"]):
        return not_testable(id, CHAPTER, STATEMENTS[id], "the candidates are all members or all non-members",
                            section=SECTIONS_MIA["mia"], source_value=BEYOND)
    status = directional(value=row["auc"], null=0.5, p=row["p"], n=n, min_n=MIN_MIA_CANDIDATES)
    return _claim(id, "mia", status, comparison, value=row["auc"], interval=(row["auc lo"], row["auc hi"]),
                  p=row["p"], n=n, min_n=MIN_MIA_CANDIDATES, source_value=BEYOND,
                  extra={"members": int(row["members"]), "non_members": int(row["non-members"]),
                         "tpr": row["tpr"], **extra})


def mia_claims(panel: pd.DataFrame, sets: pd.DataFrame, real: pd.DataFrame) -> dict[str, Claim]:
    """The membership-inference claims: one per attack on the lab's injected
    sequences (``panel``'s scope ``"all"``, :func:`~analysis.entropy.mia.panel_table`),
    ``mia_intercept`` on the lab's sets (``sets``, :func:`~analysis.entropy.mia.set_panel`)
    and ``mia_real_shift`` from the model-free control on the real models' pairs
    (``real``: a panel with ``model`` and ``attack`` ``text_zlib`` rows of scope
    ``"all"``; the farther of AUC and 1 − AUC from 0.5, the test two-sided)."""
    every = panel[panel["scope"] == "all"].set_index("attack")
    out = {}
    for attack in ATTACKS:
        id = f"mia_{attack}"
        out[id] = _auc_claim(id, every.loc[attack], "AUC of the attack's score, members against the "
                             "never-inserted controls, > 0.5 (two-sided Mann–Whitney p; stratified bootstrap "
                             "interval)")
    row = sets.set_index("attack").loc["intercept"]
    id = "mia_intercept"
    if not row["pairs"]:
        out[id] = not_testable(id, CHAPTER, STATEMENTS[id], "no lab model has both member and non-member "
                               "sets with a line", section=SECTIONS_MIA["mia"], source_value=BEYOND)
    else:
        out[id] = _claim(id, "mia", directional(value=row["auc"], null=0.5, p=row["p"], n=int(row["pairs"]),
                                                min_n=MIN_DI_SETS),
                         "AUC of the intercept over (member, non-member) pairs of one model's sets > 0.5 "
                         "(two-sided percentile-bootstrap p over the sets' bootstrap intercepts)",
                         value=row["auc"], interval=(row["auc lo"], row["auc hi"]), p=row["p"],
                         n=int(row["pairs"]), min_n=MIN_DI_SETS, source_value=BEYOND,
                         extra={"sets": int(row["sets"])})
    out["mia_real_shift"] = _shift_claim(real)
    return out


def _shift_claim(real: pd.DataFrame) -> Claim:
    id = "mia_real_shift"
    blind = real[(real["attack"] == BLIND) & (real["scope"] == "all")].dropna(subset=["auc"])
    if blind.empty:
        return not_testable(id, CHAPTER, STATEMENTS[id], "no real model has both member and non-member pairs",
                            section=SECTIONS_MIA["mia"], source_value=BEYOND)
    # the weakest separation over the models: the claim holds only if every model's texts differ
    far = (blind["auc"] - 0.5).abs()
    row = blind.loc[far.idxmin()]
    value = 0.5 + abs(row["auc"] - 0.5)
    n = int(row["members"] + row["non-members"])
    return _claim(id, "mia", directional(value=value, null=0.5, p=row["p"], n=n, min_n=MIN_MIA_CANDIDATES),
                  "the farther of AUC and 1 − AUC of minus the text's own zlib ratio (no model involved) "
                  "from 0.5, on the model where it is nearest 0.5 (two-sided Mann–Whitney p)",
                  value=value, p=row["p"], n=n, min_n=MIN_MIA_CANDIDATES, source_value=BEYOND,
                  extra={"auc": {m: float(a) for m, a in zip(blind["model"], blind["auc"])},
                         "model": row["model"]})

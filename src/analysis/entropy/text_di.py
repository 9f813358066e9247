"""The entropy chapter's English on dataset inference held to its evidence, on membership inference
(beyond the source) and on the BOS check (split from :mod:`analysis.entropy.text` by role); the
wording is in ``sentences.j2``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.core.claims import Claim
from analysis.entropy.text import S
from analysis.stats.mia import LOW_FPR


def claim_value(claim: Claim) -> str:
    """A claim's value to three decimals, or "undefined" without one."""
    return "undefined" if claim.value is None else f"{claim.value:.3f}"


def di_calls_sentence(calls: Mapping, where: str) -> str:
    """The candidate sets the rule calls members on ``where`` (:func:`~.method_di.di_calls`)."""
    return S.di_calls(calls=calls, where=where)


def undecided_sentence(calls: Sequence[Mapping]) -> str:
    """Which candidate sets the rule leaves undecided, and why."""
    return S.undecided(sets=[u for c in calls for u in c["undecided"]])


def baseline_sentence(cmp: Mapping, loss_rows: pd.DataFrame) -> str:
    """The mean-loss baseline beside the intercept rule on the lab's sets (``cmp``:
    :func:`~analysis.entropy.method_di.rule_comparison`), and whether mean loss ranks the sets right."""
    groups = [g.groupby("truth")["loss"] for _, g in loss_rows.groupby("model") if g["truth"].nunique() == 2]
    ordered = bool(cmp["sets"]) and all(g.max()[1] < g.min()[0] for g in groups)
    return S.baseline(cmp=cmp, ordered=ordered)


def tau_convention_sentence(table: pd.DataFrame, margin: float) -> str:
    """The source's τ convention beside the book's (:func:`~analysis.entropy.method_di.tau_conventions`)."""
    sums = table.groupby("rule")[["right", "decided"]].sum()
    return S.tau_convention(tally={r: (int(x["right"]), int(x["decided"])) for r, x in sums.iterrows()},
                            margin=margin)


ATTACK_NAMES = {"loss": "loss", "zlib": "zlib ratio", "mink": "Min-K%", "minkpp": "Min-K%++",
                "text_zlib": "text zlib (no model)", "intercept": "intercept (per set)"}
#: the TPR column: at most 1% of the non-members above the threshold, which with fewer than 100
#: non-members allows no false positive at all (the column beside it says how many it allows)
TPR_COLUMN = f"TPR at ≤ {LOW_FPR:.0%} FPR"
FP_COLUMN = "false positives allowed"


def allowed_false_positives(non_members: int) -> int:
    """How many false positives "at most 1% FPR" allows among ``non_members``."""
    return int(np.floor(LOW_FPR * int(non_members) + 1e-9))


def panel_display(panel: pd.DataFrame) -> pd.DataFrame:
    """A membership-inference panel for the page: AUC and the TPR at the lowest false-positive rate
    (with how many false positives that allows), with their intervals."""
    out = panel.assign(attack=panel["attack"].map(ATTACK_NAMES))

    def cell(v, lo, hi):
        return "—" if not np.isfinite(v) else f"{v:.2f} [{lo:.2f}, {hi:.2f}]"

    out["AUC"] = [cell(*x) for x in zip(out["auc"], out["auc lo"], out["auc hi"])]
    if "tpr" in out:
        out[TPR_COLUMN] = [cell(*x) for x in zip(out["tpr"], out["tpr lo"], out["tpr hi"])]
        out[FP_COLUMN] = [allowed_false_positives(n) for n in out["non-members"]]
    keep = [c for c in ("model", "scope", "attack", "members", "non-members", "sets", "pairs", "AUC",
                        TPR_COLUMN, FP_COLUMN) if c in out]
    return out[keep]


def mia_sentence(claims: Mapping[str, Claim]) -> str:
    """The lab's membership-inference panel in a sentence: each attack's AUC."""
    aucs = [(ATTACK_NAMES[a], claims[f"mia_{a}"].value) for a in ("loss", "zlib", "mink", "minkpp")]
    return S.mia(aucs=aucs, extra=claims["mia_loss"].extra)


def shift_sentence(claim: Claim, lab_blind: float) -> str:
    """Why popular texts against 2024–26 stories is a shifted split (the ``mia_real_shift`` claim),
    beside the model-free control's AUC on the lab's randomized panel (``lab_blind``)."""
    return S.shift(claim=claim, lab_blind=lab_blind)


def tpr_phrase(non_members: int) -> str:
    """How the chapter names its low-FPR rate (the TPR at zero false positives below 100 non-members)."""
    return S.tpr(k=allowed_false_positives(non_members), non_members=non_members)


def bos_values(check: Mapping) -> dict[str, str]:
    """The BOS check's glued values (:func:`~analysis.entropy.run.bos_check`): ``<key>_bos_nll_before``
    and ``<key>_bos_nll_after`` in nats per token, ``"null"`` where the model is not run."""
    return {f"{key}_bos_nll_{when}": "null" if row is None else f"{row[when]:.3f}"
            for key, row in check.items() for when in ("before", "after")}


def bos_sentence(check: Mapping) -> str:
    """What the fix changed, in words, from :func:`~analysis.entropy.run.bos_check`."""
    return S.bos(g=check.get("gemma"), s=check.get("smollm"))

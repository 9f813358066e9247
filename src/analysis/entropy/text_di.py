"""The entropy chapter's English on dataset inference held to its evidence, on
membership inference (beyond the source), on the BOS check and on the chapter's
tally of source claims (split from :mod:`analysis.entropy.text` by role).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.core.claims import HOLDS, NOT_TESTABLE, Claim
from analysis.entropy.params import BOS_CHARS, BOS_TOKENS, PAPER_TAU
from analysis.stats.mia import LOW_FPR


def claim_value(claim: Claim) -> str:
    """A claim's value to three decimals, or "undefined" without one."""
    return "undefined" if claim.value is None else f"{claim.value:.3f}"


def _listing(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "none"


def di_calls_sentence(calls: Mapping, where: str) -> str:
    """How many candidate sets the rule calls members on ``where`` (``calls``:
    :func:`~analysis.entropy.method_di.di_calls`), and which non-member sets among them."""
    if not calls["decided"]:
        return f"On {where} the rule decides no candidate set."
    wrong = calls["nonmembers_called"]
    text = (f"On {where} the rule calls {calls['called_members']} of the {calls['decided']} candidate sets "
            f"it decides members, {len(wrong)} of the {calls['nonmembers_decided']} non-member sets it "
            "decides among them" + (f" ({_listing(wrong)})" if wrong else ""))
    if calls["called_members"] == calls["decided"] and calls["nonmembers_decided"]:
        text += ": it calls every set a member, non-members too, so on these sets it tells nothing apart"
    return text + "."


def undecided_sentence(calls: Sequence[Mapping]) -> str:
    """Which candidate sets the rule leaves undecided, and why; they are left out
    of every tally's n (never counted wrong)."""
    sets = [u for c in calls for u in c["undecided"]]
    if not sets:
        return "The rule decides every candidate set: each has a line and its model a τ."
    items = "; ".join(f"{u['set']} ({'member' if u['truth'] else 'non-member'}: {u['why']})" for u in sets)
    plural = "s" if len(sets) > 1 else ""
    return (f"The rule leaves {len(sets)} candidate set{plural} undecided: {items}. With no intercept there "
            "is no call, and a rule that makes no call has not got the set right: each tally and each claim "
            "counts it as a miss, out of every candidate set.")


def baseline_sentence(cmp: Mapping, loss_rows: pd.DataFrame) -> str:
    """The mean-loss baseline beside the intercept rule on the lab's sets (``cmp``:
    :func:`~analysis.entropy.method_di.rule_comparison`), and whether mean loss puts
    every member set below every non-member set of a model."""
    if not cmp["sets"]:
        return "No lab candidate set is decided by both rules."
    ordered = all((g.loc[g["truth"] == 1, "loss"].max() < g.loc[g["truth"] == 0, "loss"].min())
                  for _, g in loss_rows.groupby("model") if g["truth"].nunique() == 2)
    order = ("puts every member set below every non-member set of the same model" if ordered else
             "does not put every member set below every non-member set of the same model")
    return (f"On the {cmp['sets']} lab candidate sets both rules decide, the mean-loss baseline gets "
            f"{cmp['loss_right']} right and the intercept rule {cmp['intercept_right']}; only the intercept "
            f"rule is right on {_listing(cmp['only_intercept'])}, only mean loss on "
            f"{_listing(cmp['only_loss'])}. Over all {cmp['candidates']} lab candidates mean loss gets "
            f"{cmp['loss_right_all']} right. Ranked without a threshold, mean loss {order}.")


def tau_convention_sentence(table: pd.DataFrame, margin: float) -> str:
    """The source's τ convention beside the book's (:func:`~analysis.entropy.method_di.tau_conventions`)."""
    def tally(rule):
        t = table[table["rule"] == rule]
        return f"{int(t['right'].sum())} of {int(t['decided'].sum())}"

    return (f"The source sets τ by hand per model from sets whose membership it knows (Section 6.4): for "
            f"OLMo-2, τ = {PAPER_TAU['OLMo-2']:g} lies {margin:.3f} bits below the intercept of its training "
            f"set. Carried over as the reference set's intercept minus {margin:.3f}, that convention calls "
            f"{tally('source margin')} candidate sets with a line right, against {tally('book')} for the "
            f"book's τ; the source's printed values, τ = {PAPER_TAU['Pythia']:g} and "
            f"{PAPER_TAU['OLMo-2']:g}, call {tally('source value (Pythia)')} and "
            f"{tally('source value (OLMo-2)')} right.")


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
    """A membership-inference panel for the page: AUC and the TPR at the lowest
    false-positive rate (at most 1%, with how many false positives that allows:
    none below 100 non-members), with their intervals."""
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
    """The lab's membership-inference panel in a sentence: each attack's AUC and status."""
    parts = [f"{ATTACK_NAMES[a]} {claims[f'mia_{a}'].value:.2f}" if claims[f"mia_{a}"].value is not None
             else f"{ATTACK_NAMES[a]} undefined" for a in ("loss", "zlib", "mink", "minkpp")]
    c = claims["mia_loss"]
    n = (f" ({c.extra['members']} inserted sequences against {c.extra['non_members']} controls)"
         if c.extra else "")
    return f"On the lab's injected sequences{n} the attacks reach an AUC of " + ", ".join(parts) + "."


def shift_sentence(claim: Claim, lab_blind: float) -> str:
    """Why popular texts against 2024–26 stories is a shifted split, from the
    model-free control (the ``mia_real_shift`` claim) beside its AUC on the lab's
    randomized panel (``lab_blind``)."""
    lab = f"{lab_blind:.2f}" if np.isfinite(lab_blind) else "undefined"
    if claim.status == NOT_TESTABLE:
        return (f"No real model has both kinds of text, so the shift cannot be measured; on the lab it is "
                f"{lab}.")
    aucs = ", ".join(f"{a:.2f} ({m}, {claim.extra['texts'][m]} texts)" for m, a in claim.extra["auc"].items())
    differ = ("so the two groups differ as texts" if claim.status == HOLDS else
              "so this control does not show the groups apart here, yet nothing made them alike")
    return ("The real models' members and non-members were not drawn at random from one pool: the members "
            "are classics, the non-members stories published after the models' training data were "
            "collected. A score computed from the text alone, its own zlib ratio, which never sees a "
            "model, reaches a folded AUC (the farther of AUC and 1 − AUC from 0.5) of "
            f"{aucs} on these pairs, against {lab} on the lab's randomized panel, "
            f"{differ}. "
            "An attack on a shifted split measures the difference between the texts together with "
            "membership, so its AUC can sit far from 0.5 when the model remembers nothing; only a randomized "
            "split, as in the lab, reads an AUC as membership.")


def tpr_phrase(non_members: int) -> str:
    """How the chapter names its low-FPR rate: with fewer than 100 non-members, "at
    most 1% FPR" allows no false positive, so it is the TPR at zero false positives."""
    k = allowed_false_positives(non_members)
    if k == 0:
        return f"true-positive rate at zero false positives ({non_members:,} non-members)"
    return f"true-positive rate at {LOW_FPR:.0%} FPR ({k} false positives of {non_members:,} non-members)"


def bos_values(check: Mapping) -> dict[str, str]:
    """The BOS check's glued values (:func:`~analysis.entropy.run.bos_check`):
    ``<key>_bos_nll_before`` and ``<key>_bos_nll_after`` in nats per token (three
    decimals), ``"null"`` where the chapter does not run the model (never NaN)."""
    out = {}
    for key, row in check.items():
        for when in ("before", "after"):
            out[f"{key}_bos_nll_{when}"] = "null" if row is None else f"{row[when]:.3f}"
    return out


def bos_sentence(check: Mapping) -> str:
    """What the fix changed, in words, from :func:`~analysis.entropy.run.bos_check`."""
    lo, hi = BOS_CHARS
    where = (f"the first {BOS_TOKENS} tokens of characters {lo:,}–{hi:,} of *Alice in Wonderland* (the "
             "mirror's text)")
    g, s = check.get("gemma"), check.get("smollm")
    if g is None:
        return ("Gemma 3 is not among this run's models, so the check of its beginning-of-sequence token is "
                "not made here (its values are null).")
    text = (f"Gemma 3's tokenizer starts every text with a beginning-of-sequence token, which the chapter's "
            f"token-id paths (prompting and scoring by ids) used to leave out. The model layer now reads it "
            f"first. On {where}, {g['model']}'s mean negative log-likelihood is {g['before']:.2f} nats per "
            f"token without it and {g['after']:.2f} with it: every Gemma number of this chapter before the "
            "fix came from a model reading text it was never trained to start.")
    if s is not None:
        same = "the same" if abs(s["before"] - s["after"]) < 1e-9 else "different"
        text += (f" {s['model']}, whose tokenizer adds no such token, scores {s['before']:.2f} and "
                 f"{s['after']:.2f} ({same}).")
    return text


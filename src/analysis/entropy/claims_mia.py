"""The entropy chapter's verdicts on dataset inference against a baseline and on
membership inference (beyond the source), as :class:`Claim` values.

``di_vs_loss``: the intercept rule against the mean-loss baseline on every lab
candidate set (an undecided set is a miss of the intercept rule; an extension:
the source's own baseline, Maini et al.'s, is ``di_vs_maini`` in
:mod:`analysis.entropy.claims_robust`); ``mia_loss``, ``mia_zlib``,
``mia_mink``, ``mia_minkpp``: each attack on the lab's injected sequences, where
membership is randomized (extensions, one Holm family; the negative control is
the text's own zlib ratio, which never sees the model); ``mia_intercept``: the
intercept ranking the lab's sets, against membership labels permuted among each
model's sets; ``mia_real_shift``: a score that never sees a model telling the
real models' member texts from their non-members, a claim about a shifted split
(the labels permuted among texts). The statements are in
:data:`analysis.entropy.text.STATEMENTS`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from analysis.core.claims import EXTENSION, Claim, as_kind, decide, not_testable
from analysis.entropy.claims import CHAPTER, SECTIONS
from analysis.entropy.method_di import _candidates
from analysis.entropy.mia import ATTACKS, BLIND
from analysis.entropy.nulls import set_auc_null, text_auc_null
from analysis.entropy.params import MIN_DI_SETS, MIN_MIA_CANDIDATES, MIN_TEXTS
from analysis.entropy.text import STATEMENTS
from analysis.stats.ranks import sign_test
from analysis.stats.resampling import holm

SECTIONS_MIA = {**SECTIONS, "mia": "entropy-mia"}
#: the Holm family of the four attacks on the lab's panel
MIA_FAMILY = "lab attacks"


def _claim(id: str, section: str, verdict, comparison: str, kind: str = "source", **kw) -> Claim:
    status, reason, mechanical = verdict
    return Claim(id=id, chapter=CHAPTER, statement=STATEMENTS[id], status=as_kind(status, kind),
                 reason=reason,
                 comparison=comparison, section=SECTIONS_MIA[section], kind=kind, mechanical=mechanical, **kw)


def _untestable(id: str, why: str, section: str = "mia", **kw) -> Claim:
    kw.setdefault("kind", EXTENSION)
    return not_testable(id, CHAPTER, STATEMENTS[id], why, section=SECTIONS_MIA[section], **kw)


def loss_comparison(di: pd.DataFrame, losses: pd.DataFrame, kind: str) -> dict:
    """The intercept rule against the mean-loss baseline on EVERY candidate set of
    ``kind`` (the intercept rule's undecided set is a miss; the baseline decides
    every set): sets, each rule's right calls, the sets only one gets right."""
    c = _candidates(di, kind).merge(_candidates(losses, kind)[["model", "set", "correct"]],
                                    on=["model", "set"], suffixes=("", "_loss"))
    ok_i = c["correct"].fillna(0).astype(int)
    ok_l = c["correct_loss"].astype(int)
    names = [f"{m}: {s}" for m, s in zip(c["model"], c["set"])]
    return {"sets": len(c), "intercept_right": int(ok_i.sum()), "loss_right": int(ok_l.sum()),
            "undecided": int(c["correct"].isna().sum()),
            "only_intercept": [n for n, a, b in zip(names, ok_i, ok_l) if a and not b],
            "only_loss": [n for n, a, b in zip(names, ok_i, ok_l) if b and not a]}


def baseline_claim(di: pd.DataFrame, losses: pd.DataFrame, kind: str = "lab") -> Claim:
    """``di_vs_loss``: the intercept rule's share right minus the mean-loss
    baseline's, over every candidate set of ``kind`` (:func:`loss_comparison`);
    the exact McNemar test (a sign test over the sets only one gets right)."""
    id = "di_vs_loss"
    cmp = loss_comparison(di, losses, kind)
    kw = dict(unit="candidate sets", min_n=MIN_DI_SETS, kind=EXTENSION, null_kind="analytic", null_value=0.0,
              control_reason="two rules on the same sets; no arm lacks membership by construction")
    if cmp["sets"] == 0:
        return _untestable(id, "no candidate set was run", section="di", extra=cmp, **kw)
    b, c = len(cmp["only_intercept"]), len(cmp["only_loss"])
    value = (cmp["intercept_right"] - cmp["loss_right"]) / cmp["sets"]
    p = sign_test(b, b + c).p if b + c else None
    v = decide(value=value, null=0.0, p=p, n_units=cmp["sets"], min_n=MIN_DI_SETS, unit="candidate sets")
    return _claim(id, "di", v, "share right by the intercept rule − share right by mean loss > 0, over every "
                  "candidate set (an undecided set a miss of the intercept rule; exact McNemar test: sign "
                  "test "
                  "over the sets only one gets right); the source's own baseline, Maini et al.'s aggregated "
                  "attacks, is di_vs_maini", value=value, p=p, n=cmp["sets"],
                  n_units=cmp["sets"], extra=cmp, **kw)


def _row(panel: pd.DataFrame, attack: str):
    every = panel[panel["scope"] == "all"].set_index("attack")
    return every.loc[attack] if attack in every.index else None


def _attack_claims(panel: pd.DataFrame) -> dict[str, Claim]:
    """The four attacks on the lab's panel, one Holm family; the control: the
    text's own zlib ratio on the same panel (membership is randomized, so a score
    that never sees the model cannot know it)."""
    blind = _row(panel, BLIND)
    c_auc = float(blind["auc"]) if blind is not None else None
    c_p = float(blind["p"]) if blind is not None and pd.notna(blind["p"]) else None
    rows = {a: _row(panel, a) for a in ATTACKS}
    ps = [float(r["p"]) if r is not None and pd.notna(r["p"]) else None for r in rows.values()]
    adjusted = dict(zip(rows, holm(ps)))
    out = {}
    for attack, row in rows.items():
        id = f"mia_{attack}"
        kw = dict(unit="sequences", min_n=MIN_MIA_CANDIDATES, null_kind="analytic", null_value=0.5,
                  kind=EXTENSION, control_value=c_auc,
                  control_reason=None if c_auc is not None else "the panel has no text-zlib value")
        n = int(row["members"] + row["non-members"]) if row is not None else 0
        if not n or pd.isna(row["auc"]):
            kw["control_reason"] = kw["control_reason"] or "no value to control"
            out[id] = _untestable(id, "the candidates are all members or all non-members", **kw)
            continue
        v = decide(value=row["auc"], null=0.5, p=adjusted[attack], adjusted=True, n_units=n,
                   min_n=MIN_MIA_CANDIDATES, control_value=c_auc, control_p=c_p, unit="sequences")
        out[id] = _claim(id, "mia", v, "AUC of the attack's score, members against the never-inserted "
                         "controls, > 0.5 (two-sided Mann–Whitney p, exact for independent sequences, "
                         f"Holm-adjusted over the {len(ATTACKS)} attacks; stratified bootstrap interval)",
                         value=row["auc"], interval=(row["auc lo"], row["auc hi"]), p=row["p"],
                         p_adjusted=adjusted[attack], family=MIA_FAMILY, n=n, n_units=n,
                         extra={"members": int(row["members"]), "non_members": int(row["non-members"]),
                                "tpr": row["tpr"]}, **kw)
    return out


def _set_values(inferences: Sequence) -> tuple[list[int], list[float], list[str]]:
    truth, values, groups = [], [], []
    for inf in inferences:
        t = inf.table.set_index("set")["truth"]
        for label, res in inf.results.items():
            if res.fit is not None:
                truth.append(int(t[label]))
                values.append(float(res.fit.intercept))
                groups.append(inf.model)
    return truth, values, groups


def _intercept_claim(sets: pd.DataFrame, lab: Sequence, seed: int) -> Claim:
    id = "mia_intercept"
    row = sets.set_index("attack").loc["intercept"]
    kw = dict(unit="candidate sets", min_n=MIN_DI_SETS,
              control_reason="the permutation null is the shuffled-membership control")
    truth, values, groups = _set_values(lab)
    if not row["pairs"] or not truth:
        return _untestable(id, "no lab model has both member and non-member sets with a line", **kw)
    est = set_auc_null(truth, values, groups, n_perm=1000, seed=seed)
    v = decide(value=est.value, null=est.null_value, p=est.p, n_units=len(truth), min_n=MIN_DI_SETS,
               unit="candidate sets")
    return _claim(id, "mia", v, "AUC of the intercept over (member, non-member) pairs of one model's sets, "
                  "against membership labels permuted among each model's sets (1,000 permutations, "
                  "two-sided; "
                  "the interval from the sets' bootstrap intercepts)", kind=EXTENSION, value=est.value,
                  interval=(row["auc lo"], row["auc hi"]), p=est.p, n=int(row["pairs"]), n_units=len(truth),
                  null_kind="permutation", null_value=est.null_value, extra={"sets": int(row["sets"])}, **kw)


def mia_claims(panel: pd.DataFrame, sets: pd.DataFrame, real: pd.DataFrame, lab: Sequence = (),
               real_inferences: Sequence = (), seed: int = 0) -> dict[str, Claim]:
    """The membership-inference claims (extensions): one per attack on the lab's
    injected sequences (``panel``'s scope ``"all"``, :func:`~analysis.entropy.mia.panel_table`),
    ``mia_intercept`` on the lab's sets (``sets``, :func:`~analysis.entropy.mia.set_panel`,
    with ``lab`` the lab's inferences for the permutation null) and ``mia_real_shift``
    from the model-free control on the real models' pairs (``real_inferences``,
    each one's scored pairs, permuted among texts)."""
    out = _attack_claims(panel)
    out["mia_intercept"] = _intercept_claim(sets, lab, seed)
    blind = _row(panel, BLIND)
    out["mia_real_shift"] = _shift_claim(real_inferences, blind, seed)
    return out


def _shift_claim(inferences: Sequence, lab_blind, seed: int) -> Claim:
    id = "mia_real_shift"
    control = (None if lab_blind is None or pd.isna(lab_blind["auc"])
               else 0.5 + abs(float(lab_blind["auc"]) - 0.5))
    control_p = None if control is None or pd.isna(lab_blind["p"]) else float(lab_blind["p"])
    kw = dict(unit="texts", min_n=MIN_TEXTS, control_value=control,
              control_reason=None if control is not None else "the lab's randomized panel has no value")
    tests = {}
    for inf in inferences:
        if not inf.attacks:
            continue
        frame = pd.concat(list(inf.attacks.values()), ignore_index=True)
        if frame["member"].nunique() < 2:
            continue
        tests[inf.model] = (text_auc_null(frame["member"].astype(int).tolist(),
                                          frame[BLIND].astype(float).tolist(),
                                          frame["doc_id"].astype(str).tolist(), n_perm=200, seed=seed), frame)
    if not tests:
        return _untestable(id, "no real model has both member and non-member pairs", **kw)
    # the weakest separation over the models: the claim holds only if every model's texts differ
    model = min(tests, key=lambda m: tests[m][0].value)
    est, frame = tests[model]
    v = decide(value=est.value, null=est.null_value, p=est.p, n_units=est.n_units, min_n=MIN_TEXTS,
               control_value=control, control_p=control_p, unit="texts")
    return _claim(id, "mia", v, "the farther of AUC and 1 − AUC of minus the text's own zlib ratio (no model "
                  "involved) from 0.5, on the model where it is nearest 0.5, against membership labels "
                  "permuted among texts (200 permutations, one-sided); a claim about the shifted split of "
                  "popular texts "
                  "against 2024–26 stories, not about membership", kind=EXTENSION, value=est.value, p=est.p,
                  n=len(frame), n_units=est.n_units, null_kind="permutation", null_value=est.null_value,
                  extra={"auc": {m: float(t[0].value) for m, t in tests.items()}, "model": model,
                         "texts": {m: int(t[0].n_units) for m, t in tests.items()}}, **kw)

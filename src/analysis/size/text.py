"""The size chapter's sentences, worded in ``sentences.j2``: a claim rendered to Markdown
(:func:`render`), the paragraphs the notebook glues from its claims, and the captions that
are not verdicts. Every decision is read from a claim's status; nothing here decides again.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import pandas as pd

from analysis.core import prose
from analysis.core.claim_text import verdict
from analysis.core.claims import NOT_TESTABLE, Claim
from analysis.size.method_groups import complete_models

S = prose.sentences("size", verdict=verdict)


def tokens_text(tokens) -> str:
    """The ladder's training tokens as the page words them: ``"2,500,000"``, or several joined by "or"."""
    return S.tokens(counts=list(tokens))


def render(claim: Claim) -> str:
    """A claim of the size chapter in Markdown: the numbers, then the status and its reason."""
    return S.claim(c=claim)


def probe_text(claims: Iterable[Claim]) -> str:
    """The probe-validity paragraph: the rendering of every ``probe_<model>`` claim, in order."""
    return " ".join(render(c) for c in claims if c.id.startswith("probe_"))


def gap_text(claims: Iterable[Claim]) -> str:
    """The gap paragraph: the rendering of every ``gap_<model>`` claim, in order."""
    return " ".join(render(c) for c in claims if c.id.startswith("gap_"))


def untestable_text(claims: Iterable[Claim]) -> str:
    """The source's results this run cannot test (claims not testable here), one sentence each."""
    return S.untestable(claims=[c for c in claims if c.status == NOT_TESTABLE])


def pairwise_text(row: Mapping, alpha: float) -> str:
    """The pairwise test's precision and recall at one τ (a row of ``method_relative.tau_sweep``)."""
    return S.pairwise(r=row, alpha=alpha)


def calibration_text(claims: Iterable[Claim], kind: str, alpha: float) -> str:
    """The calibration paragraph: each block-score kind's false-positive rate, then this run's ``kind``."""
    ran = [c for c in claims if "calibration_" in c.id and c.status != NOT_TESTABLE]
    return S.calibration(ran=ran, kind=kind, alpha=alpha)


def kinds_text(kinds: pd.DataFrame, alpha: float) -> str:
    """The pairwise test's precision and recall on the ladder for each block-score kind."""
    return S.kinds(rows=kinds.to_dict("records"), alpha=alpha)


def invalid_bounds_text(invalid: pd.DataFrame, tau: float) -> str:
    """One sentence per invalid best bound (``method.invalid_bounds``) and why it failed."""
    return S.invalid_bounds(rows=invalid.to_dict("records"), tau=tau)


def ladder_gap_text(gap: pd.DataFrame, theta: pd.Series) -> str:
    """The popular-minus-baseline gap of the smallest and the largest ladder model (trained windows)."""
    rows = gap.set_index("model") if len(gap) else pd.DataFrame()
    ends = [(which, m, theta[m], rows.loc[m] if m in rows.index else None)
            for which, m in (("smallest", theta.idxmin()), ("largest", theta.idxmax()))]
    return S.ladder_gap(ends=ends)


def agreement_note(acc: pd.DataFrame) -> str:
    """The caption of the agreement table: how many models it covers, and which were left out."""
    complete, left_out = complete_models(acc)
    return S.agreement_note(n=len(complete), left_out=left_out)


def _fmt(x, spec: str, scale: float = 1, unit: str = "") -> str:
    return f"{scale * float(x):{spec}}{unit}" if x is not None and math.isfinite(float(x)) else "undefined"


def ladder_values(method) -> dict[str, str]:
    """The ladder's leave-one-out R² with its interval, and Appendix B on the ladder, as strings to glue."""
    (lo, hi), a = method.loo_r2_ci, method.agreement
    out = {"lab_loo_r2": _fmt(method.loo.r2_log, ".2f"),
           "lab_loo_r2_ci": f"{_fmt(lo, '.2f')} to {_fmt(hi, '.2f')}"}
    if a is None:
        keys = ("within", "across", "p", "popular", "baseline", "family_p")
        return {**out, **{f"lab_agree_{k}": "undefined" for k in keys}}
    rho, fam = a.check.summary.set_index("group")["mean_rho"], a.families
    return {**out, "lab_agree_within": _fmt(fam.within, ".3f"), "lab_agree_across": _fmt(fam.across, ".3f"),
            "lab_agree_p": _fmt(a.check.mwu_pvalue, ".2g"), "lab_agree_popular": _fmt(rho["popular"], ".3f"),
            "lab_agree_baseline": _fmt(rho["baseline"], ".3f"),
            "lab_agree_family_p": _fmt(fam.mwu_pvalue, ".2g")}


def null_values(nulls, claims: Iterable[Claim]) -> dict[str, str]:
    """The ladder's permuted-size null medians and its agreement claims' permutation p, as strings to glue."""
    p = {c.id: c.p for c in claims}
    r2, band, loo_r2, valid = (nulls[k].null_value for k in ("law_r2", "loo_band", "loo_r2", "bounds_valid"))
    return {"lab_null_r2": _fmt(r2, ".2f"), "lab_null_band": _fmt(band, ".0f", 100, "%"),
            "lab_null_loo_r2": _fmt(loo_r2, ".2f"), "lab_null_valid": _fmt(valid, ".0f", 100, "%"),
            "lab_agree_perm_p": _fmt(p.get("lab_agreement"), ".2g"),
            "lab_agree_family_perm_p": _fmt(p.get("lab_agreement_families"), ".2g")}


def ablation_text(placed: pd.DataFrame, loo: pd.Series) -> str:
    """One sentence per model outside calibration, against the ladder's own leave-one-out ratios ``loo``."""
    return S.ablation(rows=placed.to_dict("records"), lo=float(loo.min()), hi=float(loo.max()),
                      bounds="best_lb" in placed)


def valid_count(placed: pd.DataFrame) -> str:
    """``"k of n"``: the models of a bound_targets table whose best bound is valid (``"—"`` for none)."""
    return "—" if placed is None or len(placed) == 0 else f"{int(placed['valid'].sum())} of {len(placed)}"


def index_ablation_text(table) -> str:
    """The PCA-index ablation (:func:`~analysis.size.method_absolute.index_ablation`) in words."""
    best = table.loc[table["loo_r2"].idxmax(), "profile"] if len(table) else None
    return S.index_ablation(rows=table.to_dict("records"), best=best)

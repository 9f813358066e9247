"""The size chapter's sentences: a claim rendered to Markdown (:func:`render`),
the paragraphs the notebook glues from its claims, and the captions that are
not verdicts. Every decision is read from a claim's status; nothing here
decides again.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from analysis.core.claim_text import verdict
from analysis.core.claims import (
    DOES_NOT_HOLD,
    HOLDS,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    Claim,
)
from analysis.core.fmt import fmt_p
from analysis.size.method_groups import complete_models

#: a calibration claim's status, said of its block-score kind
_LEVEL = {REPRODUCED: "holds its level", NOT_REPRODUCED: "exceeds its level",
          INCONCLUSIVE: "cannot tell from this run"}
_RUN_KIND = {REPRODUCED: "which hold their level here", NOT_REPRODUCED: "which do not hold their level here",
             INCONCLUSIVE: "but this run cannot tell whether they hold their level"}
_KIND_WORDS = {"raw": "the source's formula on raw accuracies",
               "lifted": "the source's formula on lifted accuracies",
               "all": "this book's reading, raw and lifted accuracies averaged together"}
#: the pairs each ratio of the pairwise test counts over, and why it is undefined when there are none
_PAIRS = {"precision": "pairs decided larger", "recall": "pairs truly larger"}
_NO_PAIRS = {"precision": "no pair was decided larger", "recall": "no pair is truly larger"}


def tokens_text(tokens) -> str:
    """The ladder's training tokens as the page words them: ``"2,500,000"``, or
    several joined by "or"."""
    return " or ".join(f"{int(t):,}" for t in tokens)


def _defined(x) -> bool:
    return x is not None and math.isfinite(float(x))


def _num(x, spec: str) -> str:
    """``x`` formatted with ``spec``, or "undefined" for a ratio with no value (never "nan")."""
    return format(float(x), spec) if _defined(x) else "undefined"


def _gap(c: Claim) -> str:
    model = c.extra["model"]
    if c.status == NOT_TESTABLE:
        return f"For {model}, no gap can be computed. {verdict(c)}"
    interval = (f"95% interval {c.interval[0]:+.3f} to {c.interval[1]:+.3f}" if c.interval
                else "no 95% interval")
    return (f"For {model}, popular texts are predicted at {c.extra['popular']:.3f} and baseline texts at "
            f"{c.extra['baseline']:.3f}: a gap of {c.value:+.3f} ({interval}). {verdict(c)}")


def _agreement(c: Claim) -> str:
    if c.status == NOT_TESTABLE:
        return f"Appendix B's comparison cannot be made on this run. {verdict(c)}"
    popular, baseline = _num(c.extra["popular"], ".3f"), _num(c.extra["baseline"], ".3f")
    return (f"Over {c.n_units} models ({c.n} pairs) the mean rank correlation is {popular} on the popular "
            f"texts and {baseline} on the baseline texts ({_agreement_p(c)}); the source reports "
            f"{c.source_value}. {verdict(c)}")


def _agreement_p(c: Claim) -> str:
    """The p of an agreement claim in words: the permutation over texts (or models),
    and the Mann–Whitney p over pairs, which treats pairs sharing a model as independent."""
    perm = f"permutation p {fmt_p(c.p)}" if c.p is not None else "no permutation test"
    mwu = c.extra.get("mwu_p")
    return perm + (f"; Mann–Whitney p over the pairs, which share their models, {fmt_p(mwu)}"
                   if mwu is not None else "")


def _law(c: Claim) -> str:
    x = c.extra
    if _defined(x["popular"]) and _defined(x["baseline"]):
        accuracy = (f"predict the next word inside their popular excerpts at {x['popular']:.3f} on average "
                    f"and on the held-out stories at {x['baseline']:.3f}")
    else:
        accuracy = ("have no next-word accuracy to average (no scorable answer on the popular excerpts or "
                    "the held-out stories)")
    null = (f", against {_num(c.null_value, '.2f')} with the sizes permuted among the models"
            if c.null_value is not None else "")
    if x["B"] <= 0:
        lead = f"On this ladder the index runs against size (R² = {x['r2']:.2f}, slope {x['B']:.2f}{null})"
    elif c.status == REPRODUCED:
        lead = f"On this ladder the index tracks size (R² = {x['r2']:.2f}{null})"
    else:
        lead = f"On this ladder the index may track size (R² = {x['r2']:.2f}{null})"
    copies = (f"; each excerpt is in the corpus {' to '.join(map(str, x['popular_copies']))} times"
              if x.get("popular_copies") else "")
    return f"{lead}: the models {accuracy}{copies}. {verdict(c)} The source's fit has {c.source_value}."


def _loo(c: Claim) -> str:
    r2_log = _num(c.extra["r2_log"], ".2f")
    return (f"Leave-one-out puts {c.extra['k']} of {c.n} held-out predictions within a factor of two of the "
            f"true size (R² on the log scale {r2_log}); the source's: {c.source_value}. {verdict(c)}")


def _bounds(c: Claim) -> str:
    return (f"The best lower bound is at or below the true size for {c.extra['k']} of {c.n} ladder models; "
            f"in the source, for {c.source_value}. {verdict(c)}")


def _rate(c: Claim) -> str:
    what = c.extra["what"]
    source = c.extra.get("source_words") or f"the source's stays {c.source_value} for τ up to 0.70"
    if c.value is None:  # a ratio over no pair: 0/0
        return (f"At τ = {c.extra['tau']:g} {_NO_PAIRS[what]} (n = {c.n or 0}), so the test's {what} is "
                f"undefined; {source}. {verdict(c)}")
    boot = c.extra.get("n_boot")
    over = (f"{boot:,} resamples of the {c.n_units} models, the pairs rebuilt among each resample's models"
            if boot and c.n_units else "resampled models")
    interval = f" (95% interval {c.interval[0]:.2f} to {c.interval[1]:.2f} over {over})" if c.interval else (
        " (no interval over the models)")
    pairs = f" over {c.n} {_PAIRS[what]}" if c.n else ""
    return (f"At τ = {c.extra['tau']:g} the test's {what} is {c.value:.2f}{pairs}{interval}; {source}. "
            f"{verdict(c)}")


#: what a probe claim's status says of the model
_PROBE_READS = {HOLDS: "the probe reads a signal on it",
                DOES_NOT_HOLD: "it predicts the popular texts worse than its floor, so the probe reads no "
                               "memorization on it",
                INCONCLUSIVE: "this run cannot tell its popular-text accuracy from that floor, so its "
                              "accuracy profile is not shown to carry any memorization the method could read"}
_MODES = {"chat": "queried in chat mode, as the source queries its models",
          "completion": "queried in completion mode, this book's own adaptation for a base model: the source "
                        "queries chat models only"}


def _probe(c: Claim) -> str:
    model, mode = c.extra["model"], c.extra.get("mode")
    how = f" ({_MODES.get(mode, f'queried in {mode} mode')})" if mode else ""
    if c.status == NOT_TESTABLE:
        return f"The probe's validity on {model}{how} cannot be judged. {verdict(c)}"
    interval = (f", 95% interval {c.interval[0]:+.3f} to {c.interval[1]:+.3f} over {c.n_units} texts"
                if c.interval else "")
    return (f"On {model}{how} the popular texts are predicted at {c.extra['popular']:.3f}, against a floor "
            f"of {c.extra['baseline']:.3f} on the baseline texts (difference {c.value:+.3f}{interval}): "
            f"{_PROBE_READS[c.status]}. {verdict(c)}")


def probe_text(claims: Iterable[Claim]) -> str:
    """The probe-validity paragraph: the rendering of every ``probe_<model>`` claim, in order."""
    return " ".join(render(c) for c in claims if c.id.startswith("probe_"))


def untestable_text(claims: Iterable[Claim]) -> str:
    """The source's results this run cannot test (claims not testable here), one sentence each."""
    parts = [f"{c.statement} (the source: {c.source_value}). {verdict(c)}" for c in claims
             if c.status == NOT_TESTABLE]
    return " ".join(parts)


def _pairwise_part(what: str, value, n: int) -> str:
    if not n or not _defined(value):
        return f"{what} is undefined ({_NO_PAIRS[what]}, n = 0)"
    return f"{what} is {float(value):.2f} (n = {n} {_PAIRS[what]})"


def pairwise_text(row: Mapping, alpha: float) -> str:
    """The pairwise test's precision and recall at one τ (``row`` of
    :func:`~analysis.size.method_relative.tau_sweep`, e.g. from ``sweep_at``),
    each with the pairs it counts over; a ratio over no pair (0/0) is said to be
    undefined, never printed as nan."""
    tp = int(row["tp"])
    precision = _pairwise_part("precision", row["precision"], tp + int(row["fp"]))
    recall = _pairwise_part("recall", row["recall"], tp + int(row["fn"]))
    return f"At τ = {float(row['tau']):g} (α = {alpha:g}) the test's {precision} and its {recall}."


def _calibration(c: Claim) -> str:
    kind = _KIND_WORDS.get(c.extra["kind"], c.extra["kind"])
    if c.status == NOT_TESTABLE:
        return f"The calibration of block scores by {kind} could not run. {verdict(c)}"
    on = f" on {c.extra['model']}" if c.extra.get("model") else ""
    return (f"With block scores by {kind}, the pairwise test rejects a true null{on} at a rate of "
            f"{c.value:.3f} for α = {c.extra['alpha']:g}. {verdict(c)}")


def _loo_r2(c: Claim) -> str:
    interval = (f" (95% interval {c.interval[0]:.2f} to {c.interval[1]:.2f} over the held-out models)"
                if c.interval else "")
    tokens = f" for the same {tokens_text(c.extra['tokens'])} tokens" if c.extra.get("tokens") else ""
    return (f"Leave-one-out R² of ln θ is {c.value:.2f}{interval}, against {c.extra['in_sample_r2']:.2f} in "
            f"sample; the source's: {c.source_value}. Every ladder model is trained on the same corpus"
            f"{tokens}, so Assumption 1 holds here by construction and a good fit is partly built in; what "
            f"the ladder can still get wrong is the other thing it varies beside size, the models' shape "
            f"(depth against width). {verdict(c)}")


def _lab_agreement(c: Claim) -> str:
    return (f"Over {c.n_units} ladder models ({c.n} pairs) the mean rank correlation of per-text accuracy "
            f"is {c.extra['popular']:.3f} on the popular excerpts and {c.extra['baseline']:.3f} on the "
            f"baseline stories ({_agreement_p(c)}); the source reports {c.source_value}. Every ladder model "
            f"was trained on the same excerpts at the same copies and on none of the stories, so the lab "
            f"builds in what this check looks for. {verdict(c)}")


def _lab_families(c: Claim) -> str:
    x = c.extra
    interval = (f", 95% interval {c.interval[0]:+.3f} to {c.interval[1]:+.3f} over resampled models"
                if c.interval else "")
    return (f"Within a family ({x['n_within']} pairs) the mean rank correlation on the popular excerpts is "
            f"{x['within']:.3f}, across the {x['n_families']} families ({x['n_across']} pairs) "
            f"{x['across']:.3f} (difference {c.value:+.3f}{interval}; {_agreement_p(c)}); the source "
            f"reports {c.source_value}. {verdict(c)}")


_RENDERERS = (("gap_", _gap), ("probe_", _probe), ("agreement", _agreement), ("lab_law", _law),
              ("lab_loo_band", _loo),
              ("lab_loo_r2", _loo_r2), ("lab_bounds_valid", _bounds), ("lab_precision", _rate),
              ("lab_recall", _rate), ("lab_agreement_families", _lab_families),
              ("lab_agreement", _lab_agreement), ("calibration_", _calibration),
              ("lab_calibration_", _calibration))


def render(claim: Claim) -> str:
    """A claim of the size chapter as a Markdown sentence or two: the numbers, then
    the status in bold with its reason. A precision or recall over no pair says
    so in words; any other claim with no value (a part this run could not
    compute) gets its statement and status alone."""
    for prefix, fn in _RENDERERS:
        undefined_ok = fn in (_gap, _probe, _agreement, _rate)
        if claim.id.startswith(prefix) and (claim.value is not None or undefined_ok):
            return fn(claim)
    if claim.value is None:
        return f"{claim.statement}: this run has no value for it. {verdict(claim)}"
    return f"{claim.statement}. {verdict(claim)}"




def gap_text(claims: Iterable[Claim]) -> str:
    """The gap paragraph: the rendering of every ``gap_<model>`` claim, in order."""
    return " ".join(render(c) for c in claims if c.id.startswith("gap_"))


def calibration_text(claims: Iterable[Claim], kind: str, alpha: float) -> str:
    """The calibration paragraph: each block-score kind's false-positive rate and
    whether it holds its level, then whether this run's ``kind`` does."""
    claims = [c for c in claims if "calibration_" in c.id]
    ran = [c for c in claims if c.status != NOT_TESTABLE]
    if not ran:
        return "The calibration could not run: the model it resamples has no scorable answer."
    parts = [f"with {_KIND_WORDS.get(c.extra['kind'], c.extra['kind'])}, {c.value:.3f} ({_LEVEL[c.status]})"
             for c in ran]
    text = f"At α = {alpha:g} the empirical false-positive rate is, " + "; ".join(parts) + "."
    this = [c for c in ran if c.extra["kind"] == kind]
    if this:
        text += (f" This run's pairwise tests use {kind} block scores "
                 f"({_KIND_WORDS.get(kind, kind)}), {_RUN_KIND[this[0].status]}.")
    return text


def kinds_text(kinds: pd.DataFrame, alpha: float) -> str:
    """The pairwise test's precision and recall on the ladder for each block-score
    kind (``kinds`` of :class:`~analysis.size.method.LadderMethod`)."""
    if not len(kinds):
        return "The block-score kinds were not compared on this run."
    parts = []
    for r in kinds.to_dict("records"):
        tp = int(r["tp"])
        precision = _pairwise_part("precision", r["precision"], tp + int(r["fp"]))
        recall = _pairwise_part("recall", r["recall"], tp + int(r["fn"]))
        parts.append(f"with {_KIND_WORDS.get(r['kind'], r['kind'])}, the test's {precision} and its {recall}")
    return f"On the ladder at τ = {float(kinds['tau'].iloc[0]):g} (α = {alpha:g}): " + "; ".join(parts) + "."


def _size(theta: float) -> str:
    """A parameter count in words: billions, millions from 0.1M, else the count."""
    if theta >= 1e9:
        return f"{theta / 1e9:.2f}B"
    return f"{theta / 1e6:.2f}M" if theta >= 1e5 else f"{theta:,.0f}"


def _why_invalid(r: Mapping, tau: float) -> list[str]:
    why = []
    codes = r["reasons"]
    if "cross_family" in codes:
        why.append(f"a cross-family pair ({r['family']} against {r['ref_family']})")
    if "close" in codes:
        why.append(f"sizes within a factor of {1 + tau:g} of each other (the chapter's τ = {tau:g})")
    if "family_reads_larger" in codes:
        lead = (f"the leave-one-out predictions of {r['family']} average {r['family_lean']:.2f} times its "
                "true sizes")
        if _defined(r["ref_family_lean"]):
            why.append(f"{lead} against {r['ref_family_lean']:.2f} times for {r['ref_family']}, so at equal "
                       "size this family predicts its excerpts better: it memorizes more per parameter")
        else:
            why.append(f"{lead}: the law reads this family as larger than it is")
    if "over_predicted" in codes:
        why.append(f"the held-out law predicted {r['ratio']:.2f} times its size, more than the factor of two "
                   "the absolute bound allows for")
    if "same_family" in codes and r["source"] == "Rel":
        why.append("both models are of one family, so the test erred on size alone")
    return why


def invalid_bounds_text(invalid: pd.DataFrame, tau: float) -> str:
    """One sentence per invalid best bound (``invalid`` of
    :func:`~analysis.size.method.invalid_bounds`): the pair, its true size ratio,
    and the computed reasons the bound failed."""
    if not len(invalid):
        return "No best lower bound is above its model's size."
    out = []
    for r in invalid.to_dict("records"):
        if r["source"] == "Rel":
            lead = (f"{r['model']} ({_size(r['theta'])} parameters) was decided larger than {r['reference']} "
                    f"({_size(r['ref_theta'])}, {r['ratio']:.2f} times its size; p = {r['pvalue']:.3g}), so "
                    f"its relative bound is above its size")
        else:
            lead = f"{r['model']} ({_size(r['theta'])} parameters) has an absolute bound above its size"
        out.append(f"{lead}. Why: " + "; ".join(_why_invalid(r, tau)) + ".")
    return " ".join(out)


def ladder_gap_text(gap: pd.DataFrame, theta: pd.Series) -> str:
    """The popular-minus-baseline gap of the smallest and the largest ladder model,
    inside their trained windows (``gap`` of :class:`~analysis.size.method.LadderMethod`)."""
    rows = gap.set_index("model") if len(gap) else pd.DataFrame()
    parts = []
    for which, name in (("smallest", theta.idxmin()), ("largest", theta.idxmax())):
        if name not in rows.index:
            parts.append(f"the {which} ({name}) has no gap")
            continue
        r = rows.loc[name]
        parts.append(f"the {which}, {name} ({_size(theta[name])}), predicts the excerpts at "
                     f"{r['popular']:.3f} and the stories at {r['baseline']:.3f}, a gap of {r['gap']:+.3f} "
                     f"(95% interval {r['ci_lo']:+.3f} to {r['ci_hi']:+.3f})")
    return "Inside the trained windows, " + "; ".join(parts) + "."


def agreement_note(acc: pd.DataFrame) -> str:
    """The caption of the agreement table: how many models it covers, and which
    were left out for lack of an answer on every text."""
    complete, left_out = complete_models(acc)
    note = f" Left out for lack of an answer on every text: {', '.join(left_out)}." if left_out else ""
    if len(complete) < 2:
        return (f"Agreement needs two models with an answer on every text; this run has {len(complete)}."
                + note)
    return f"Spearman correlations over {len(complete)} models." + note


def _fmt(x, spec: str) -> str:
    return format(float(x), spec) if _defined(x) else "undefined"


def ladder_values(method) -> dict[str, str]:
    """The ladder's new numbers as strings to glue (``report.glue_text``): the
    leave-one-out R² and its interval, and Appendix B on the ladder (mean ρ within
    and across families, on popular and baseline texts, and the Mann–Whitney
    p-values); "undefined" where this run has no value."""
    lo, hi = method.loo_r2_ci
    agreement = method.agreement
    out = {"lab_loo_r2": _fmt(method.loo.r2_log, ".2f"),
           "lab_loo_r2_ci": f"{_fmt(lo, '.2f')} to {_fmt(hi, '.2f')}"}
    if agreement is None:
        keys = ("within", "across", "p", "popular", "baseline", "family_p")
        return {**out, **{f"lab_agree_{k}": "undefined" for k in keys}}
    summary = agreement.check.summary.set_index("group")["mean_rho"]
    fam = agreement.families
    return {**out, "lab_agree_within": _fmt(fam.within, ".3f"), "lab_agree_across": _fmt(fam.across, ".3f"),
            "lab_agree_p": _fmt(agreement.check.mwu_pvalue, ".2g"),
            "lab_agree_popular": _fmt(summary["popular"], ".3f"),
            "lab_agree_baseline": _fmt(summary["baseline"], ".3f"),
            "lab_agree_family_p": _fmt(fam.mwu_pvalue, ".2g")}


def null_values(nulls, claims: Iterable[Claim]) -> dict[str, str]:
    """The ladder's permuted-size null medians (``nulls`` of
    :func:`~analysis.size.nulls.ladder_nulls`) and the permutation p of its two
    agreement claims, as strings to glue; "undefined" where there is none."""
    by_id = {c.id: c for c in claims}

    def p(cid):
        c = by_id.get(cid)
        return "undefined" if c is None or c.p is None else f"{c.p:.2g}"

    def pct(x):
        return f"{100 * float(x):.0f}%" if _defined(x) else "undefined"

    return {"lab_null_r2": _fmt(nulls["law_r2"].null_value, ".2f"),
            "lab_null_band": pct(nulls["loo_band"].null_value),
            "lab_null_loo_r2": _fmt(nulls["loo_r2"].null_value, ".2f"),
            "lab_null_valid": pct(nulls["bounds_valid"].null_value),
            "lab_agree_perm_p": p("lab_agreement"), "lab_agree_family_perm_p": p("lab_agreement_families")}


#: what each ablation run breaks, by run name (analysis.lab.ladder._profile): each errs in the
#: direction that would make a small model look larger, the one a lower bound must survive
ABLATIONS = {
    "abl-overtrained": ("Assumption 2 (size dominates the other differences)",
                        "trained for twice the ladder's tokens"),
    "abl-overexposed": ("Assumption 1 (equal exposure)",
                        "trained with every popular excerpt at 4x its copies"),
    "abl-uneven": ("Assumption 1 (equal exposure)",
                   "trained with half the popular texts at 4x their copies and the other half left out"),
}


def _run(model: str) -> str:
    return str(model).removeprefix("lab:").split("/")[-1]


def _bound_words(row) -> str:
    if not np.isfinite(row.best_lb):
        return "no bound (no ladder model beaten, no prediction)"
    source = {"Abs": "absolute", "Rel": f"relative, over {_run(row.reference)}"}.get(row.source, row.source)
    verdict = "valid" if row.valid else "**invalid**: above its true size"
    return f"best lower bound {row.best_lb / 1e6:.2f}M ({source}), {verdict}"


def ablation_text(placed: pd.DataFrame, loo: pd.Series) -> str:
    """One sentence per model outside calibration (:func:`analysis.size.bound_targets`,
    or :func:`analysis.size.place_on_law` without the bound columns): what it breaks,
    its predicted size against its true size, against the range of the ladder's own
    leave-one-out ratios ``loo``, and its best lower bound with whether it holds."""
    lo, hi = float(loo.min()), float(loo.max())
    parts = []
    for row in placed.itertuples(index=False):
        run = _run(row.model)
        broken, how = ABLATIONS.get(run, ("nothing: another shape (the held-out family), outside calibration",
                                          "trained like the ladder"))
        side = "smaller" if row.ratio < 1 else "larger"
        where = "outside" if row.outside_loo else "inside"
        bound = f"; {_bound_words(row)}" if hasattr(row, "best_lb") else ""
        parts.append(f"**{run}** ({how}; breaks {broken}): {row.theta / 1e6:.2f}M parameters, "
                     f"predicted {row.theta_hat / 1e6:.2f}M, {row.ratio:.2f} times its size, so it reads "
                     f"{side} than it is, {where} the ladder's own range ({lo:.2f} to {hi:.2f}){bound}.")
    return " ".join(parts)


def valid_count(placed: pd.DataFrame) -> str:
    """``"k of n"``: the models of a :func:`analysis.size.bound_targets` table whose best
    bound is valid (``"—"`` for none)."""
    if placed is None or len(placed) == 0:
        return "—"
    return f"{int(placed['valid'].sum())} of {len(placed)}"


def index_ablation_text(table) -> str:
    """The PCA-index ablation (:func:`~analysis.size.method_absolute.index_ablation`) in
    words: each profile's explained variance, in-sample and leave-one-out R² and share
    within 2x, and which profile's leave-one-out R² is highest."""
    if not len(table):
        return "The index ablation did not run."
    parts = [f"on {r.profile} ({r.features:,} features) the first component explains "
             f"{100 * r.explained:.0f}%, "
             f"the law's R² is {r.r2:.2f} and its leave-one-out R² {r.loo_r2:.2f} "
             f"({100 * r.within_band:.0f}% within 2x)" for r in table.itertuples(index=False)]
    best = table.loc[table["loo_r2"].idxmax(), "profile"]
    return "The index " + "; ".join(parts) + f". The highest leave-one-out R² is {best}'s."

"""The entropy chapter's English on the bias-corrected and binned lines, the line
across strategies, Maini et al.'s baseline and the cost of a smaller sample (split
from :mod:`analysis.entropy.text` by role). Every sentence reads numbers and
claims; none decides again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.core.claims import NOT_TESTABLE, Claim
from analysis.entropy.maini import rule_tally
from analysis.entropy.mia import ATTACKS
from analysis.entropy.params import (
    MAINI_ALPHA,
    MAINI_CLIP,
    NSB_NOTE,
    PAPER_BINNINGS,
    PAPER_MIN_DI_SAMPLES,
    PAPER_MIN_R,
    PAPER_TABLE7,
)
from analysis.entropy.robust import EstimatorTest
from analysis.entropy.text_di import ATTACK_NAMES


def _r(x: float) -> str:
    return f"{x:.3f}" if np.isfinite(x) else "undefined"


def nsb_sentence() -> str:
    """Why NSB is not among the estimators."""
    return NSB_NOTE + "."


def estimator_sentence(test: EstimatorTest, summary: pd.DataFrame, claims: Mapping[str, Claim]) -> str:
    """The main sample's r under each estimator, how the rarefaction was done, the
    medians per group (``summary``: :func:`~analysis.entropy.robust.estimator_summary`)
    and what the two claims found (mechanical or not)."""
    rare = test.rarefied
    obs = test.observed
    if rare.size is None or not len(rare.draws):
        how = "no rarefied line: fewer than 3 level sets hold enough pairs"
    else:
        med, lo, hi = rare.summary("r")
        dropped = f", leaving out {len(rare.dropped)} smaller ones" if rare.dropped else ""
        how = (f"r = {_r(med)} (the mean of {len(rare.draws)} draws, 2.5–97.5%: {_r(lo)} to {_r(hi)}) with "
               f"each of {len(rare.levels)} level sets cut to {rare.size:,} pairs{dropped}")
    text = (f"On the lab's main sample the plug-in line has r = {_r(obs['r_plugin'])}; rarefied, {how}; with "
            f"the Miller–Madow correction, r = {_r(obs['r_mm'])}.")
    groups = [f"{row['group']}: {_r(row['r plug-in'])} plug-in, {_r(row['r rarefied'])} rarefied, "
              f"{_r(row['r Miller–Madow'])} Miller–Madow ({row['samples']} sample"
              f"{'s' if row['samples'] != 1 else ''})"
              for _, row in summary.iterrows() if row["group"] != "lab: main sample (members)"]
    if groups:
        text += " The median r over " + "; ".join(groups) + "."
    mech = [c for c in claims.values() if c.mechanical]
    if len(mech) == len(claims) and claims:
        text += (" Neither corrected line holds where the raw one does: the linearity survives only the raw "
                 "plug-in estimate, so on this sample it is mechanical, a matter of the level sets' sizes.")
    elif mech:
        text += (f" The linearity survives one correction but not the other ({', '.join(c.id for c in mech)} "
                 "is marked mechanical).")
    return text


def estimator_display(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`~analysis.entropy.robust.estimator_table` for the page: the rarefied r
    with its interval over draws in one cell."""
    def cell(v, lo, hi):
        return "—" if not np.isfinite(v) else f"{v:.3f} [{lo:.3f}, {hi:.3f}]"

    out = table.assign(**{"r rarefied": [cell(*x) for x in zip(table["r rarefied"], table["r rarefied lo"],
                                                                 table["r rarefied hi"])]})
    return out[["group", "sample", "pairs", "level sets", "r plug-in", "pairs per set", "sets kept",
                "r rarefied", "r Miller–Madow"]]


def binning_sentence(table: pd.DataFrame, claim: Claim) -> str:
    """The line under each coarse binning, beside the source's r > 0.9 at each."""
    parts = [f"{_r(r)} with {b} bins ({p} populated)" for b, r, p in
             zip(table["bins"], table["r"], table["populated"])]
    above = claim.extra.get("above", 0)
    return ("Re-binned into equal-width bins of the score, the entropy line has r = " + ", ".join(parts) +
            f": above {PAPER_MIN_R:g} for {above} of {len(table)}. The source reports r > {PAPER_MIN_R:g} "
            f"for n_d = {', '.join(map(str, PAPER_BINNINGS))}; with a handful of bins a line rests on as "
            "many points, and each bin pools more pairs, so coarse bins are a smoother, not a stronger, "
            "test.")


def strategy_line_sentence(claim: Claim) -> str:
    """Intercept against slope across decoding strategies (the
    ``intercept_slope_across_strategies`` claim) beside the source's Table 4."""
    paper = f"over the source's Table 4 the same r is {claim.extra['paper_r']:.2f}"
    if claim.status == NOT_TESTABLE:
        return f"Too few strategies have a line to correlate intercept and slope across them; {paper}."
    how = "in opposite directions" if claim.value < 0 else "in the same direction"
    return (f"Across the {claim.n} strategies, the lines' intercepts and slopes move {how} (r = "
            f"{claim.value:.2f}, permutation p = {claim.p:.3g}); {paper}. Unlike the within-set bootstrap "
            "above, this compares separate decodings of the same pairs.")


def maini_difference_sentence() -> str:
    """How Maini et al.'s baseline differs from the chapter's mean-loss rule."""
    names = ", ".join(ATTACK_NAMES[a] for a in ATTACKS)
    return ("Maini et al.'s rule differs from the mean-loss rule in three ways. It aggregates "
            f"{len(ATTACKS)} attacks ({names}), each clipped at its {MAINI_CLIP / 2:.1%} ends within each "
            "set and standardized on the known training data, with weights that a logistic regression learns "
            "from known members (the reference set) against known non-members (a validation set); the "
            "mean-loss rule uses the loss alone, unweighted. It decides by a one-sided t-test at "
            f"p < {MAINI_ALPHA:g}, the suspect set's aggregated scores against those of the held-out half of "
            "the validation set, where the mean-loss rule compares a mean with a threshold from the "
            "reference set's bootstrap. And it needs known non-members from the suspects' distribution, "
            "which neither the intercept rule nor the mean-loss rule does: the validation set is used up "
            "and is not decided. "
            f"The source aggregates 16 attacks; this run has the {len(ATTACKS)} above.")


def maini_count(rules: pd.DataFrame, kind: str | None = None) -> str:
    """Maini et al.'s right calls: ``"k of n"``."""
    k, n = rule_tally(rules, kind)["Maini"]
    return f"{k} of {n}"


def maini_sentence(rules: pd.DataFrame, maini: pd.DataFrame) -> str:
    """The three rules' right calls on the sets Maini et al.'s rule decides, lab and
    real apart, with each model's validation set; the source's Table 7 beside."""
    vals = maini[maini["role"] == "validation"]
    used = "; ".join(f"{m}: {s}" for m, s in zip(vals["model"], vals["set"]))
    parts = []
    for kind, where in (("lab", "the lab's sets"), ("real", "the real models' sets")):
        t = rule_tally(rules, kind)
        if t["Maini"][1]:
            parts.append(f"on {where} it gets {t['Maini'][0]} of {t['Maini'][1]} right, the intercept rule "
                         f"{t['intercept'][0]} and the mean-loss rule {t['mean loss'][0]}")
    if not parts:
        return "Maini et al.'s rule decides no candidate set here."
    paper = "; ".join(f"{k} {r} of {n}" for k, (r, n) in PAPER_TABLE7.items())
    return (f"Maini et al.'s rule decides every candidate set but the validation sets ({used}): "
            + "; ".join(parts) + f". The source's Table 7, on Pythia-6.9B and MIMIR, gives {paper}.")


def maini_display(rules: pd.DataFrame) -> pd.DataFrame:
    """:func:`~analysis.entropy.maini.three_rules` for the page: each rule's call as
    "member" or "non-member" and Maini et al.'s p."""
    def call(v):
        return "—" if not np.isfinite(v) else ("member" if v == 1 else "non-member")

    out = rules.assign(truth=rules["truth"].map({1: "member", 0: "non-member"}),
                       **{c: rules[c].map(call) for c in ("intercept call", "mean-loss call", "Maini call")})
    return out[["model", "set", "truth", "intercept call", "mean-loss call", "Maini call", "Maini p"]]


def interval_cost_values(cost: pd.DataFrame, n_real: int) -> dict[str, str]:
    """The glued widths: the intercept's interval at ``n_real`` pairs
    (``interval_width_default``), at the source's minimum (``interval_width_paper``)
    and their ratio (``interval_width_ratio``); "undefined" where not measured."""
    w = cost.set_index("size")["width"]
    small = float(w.get(n_real, np.nan))
    big = float(w.get(PAPER_MIN_DI_SAMPLES, np.nan))
    ratio = small / big if np.isfinite(small) and np.isfinite(big) and big > 0 else np.nan

    def f(x, fmt):
        return format(x, fmt) if np.isfinite(x) else "undefined"

    return {"interval_width_default": f(small, ".2f"), "interval_width_paper": f(big, ".2f"),
            "interval_width_ratio": f(ratio, ".1f")}


def interval_cost_sentence(cost: pd.DataFrame, n_real: int, pool: int) -> str:
    """What the default's ``n_real`` pairs per real set cost in interval width, from
    :func:`~analysis.entropy.robust.interval_cost` on the lab's ``pool`` kept pairs."""
    v = interval_cost_values(cost, n_real)
    if n_real >= PAPER_MIN_DI_SAMPLES:
        return (f"This run's real sets hold {n_real:,} pairs each, at least the source's minimum of "
                f"{PAPER_MIN_DI_SAMPLES:,}.")
    if "undefined" in (v["interval_width_default"], v["interval_width_paper"]):
        return (f"This run's real sets hold {n_real:,} pairs each, fewer than the source's minimum of "
                f"{PAPER_MIN_DI_SAMPLES:,}; the lab's main sample ({pool:,} kept pairs) is too small to "
                "measure what that costs.")
    return (f"This run's real sets hold {n_real:,} pairs each, fewer than the source's minimum of "
            f"{PAPER_MIN_DI_SAMPLES:,}, which the `paper` profile meets. On subsamples of the lab's main "
            f"sample, the bootstrap 95% interval of the intercept is {v['interval_width_default']} bits wide "
            f"at {n_real:,} pairs and {v['interval_width_paper']} at {PAPER_MIN_DI_SAMPLES:,}: "
            f"{v['interval_width_ratio']} times as wide.")


def cost_sizes(n_real: int) -> Sequence[int]:
    """The sample sizes whose interval widths the page compares."""
    return tuple(sorted({int(n_real), PAPER_MIN_DI_SAMPLES}))

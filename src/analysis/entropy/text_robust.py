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
    NSB_NOTE,
    PAPER_MIN_DI_SAMPLES,
)
from analysis.entropy.robust import EstimatorTest
from analysis.entropy.text import S
from analysis.entropy.text_di import ATTACK_NAMES


def nsb_sentence() -> str:
    """Why NSB is not among the estimators."""
    return NSB_NOTE + "."


def estimator_sentence(test: EstimatorTest, summary: pd.DataFrame, claims: Mapping[str, Claim]) -> str:
    """The main sample's r under each estimator, how the rarefaction was done, the
    medians per group (``summary``: :func:`~analysis.entropy.robust.estimator_summary`)
    and what the two claims found (mechanical or not)."""
    rare, rarefied = test.rarefied, None
    if rare.size is not None and len(rare.draws):
        med, lo, hi = rare.summary("r")
        rarefied = dict(r=med, lo=lo, hi=hi, draws=len(rare.draws), levels=len(rare.levels), size=rare.size,
                        dropped=len(rare.dropped))
    groups = [dict(group=row["group"], plugin=row["r plug-in"], rarefied=row["r rarefied"],
                   mm=row["r Miller–Madow"], samples=row["samples"])
              for _, row in summary.iterrows() if row["group"] != "lab: main sample (members)"]
    return S.estimator(r_plugin=test.observed["r_plugin"], r_mm=test.observed["r_mm"], rarefied=rarefied,
                       groups=groups, mechanical=[c.id for c in claims.values() if c.mechanical],
                       n_claims=len(claims))


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
    return S.binning(parts=list(zip(table["bins"], table["r"], table["populated"])),
                     above=claim.extra.get("above", 0), total=len(table))


def strategy_line_sentence(claim: Claim) -> str:
    """Intercept against slope across decoding strategies (the
    ``intercept_slope_across_strategies`` claim) beside the source's Table 4."""
    return S.strategy_line(claim=claim, testable=claim.status != NOT_TESTABLE, paper_r=claim.extra["paper_r"])


def maini_difference_sentence() -> str:
    """How Maini et al.'s baseline differs from the chapter's mean-loss rule."""
    return S.maini_difference(names=[ATTACK_NAMES[a] for a in ATTACKS])


def maini_count(rules: pd.DataFrame, kind: str | None = None) -> str:
    """Maini et al.'s right calls: ``"k of n"``."""
    k, n = rule_tally(rules, kind)["Maini"]
    return f"{k} of {n}"


def maini_sentence(rules: pd.DataFrame, maini: pd.DataFrame) -> str:
    """The three rules' right calls on the sets Maini et al.'s rule decides, lab and
    real apart, with each model's validation set; the source's Table 7 beside."""
    vals = maini[maini["role"] == "validation"]
    tallies = [(where, t) for kind, where in (("lab", "the lab's sets"), ("real", "the real models' sets"))
               if (t := rule_tally(rules, kind))["Maini"][1]]
    return S.maini(validation=list(zip(vals["model"], vals["set"])), tallies=tallies)


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
    w = cost.set_index("size")["width"]
    small, big = float(w.get(n_real, np.nan)), float(w.get(PAPER_MIN_DI_SAMPLES, np.nan))
    ratio = small / big if big else np.nan
    return S.interval_cost(n_real=n_real, pool=pool, small=small, big=big, ratio=ratio)


def cost_sizes(n_real: int) -> Sequence[int]:
    """The sample sizes whose interval widths the page compares."""
    return tuple(sorted({int(n_real), PAPER_MIN_DI_SAMPLES}))

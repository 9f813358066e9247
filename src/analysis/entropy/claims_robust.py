"""The entropy chapter's verdicts on how far its line owes to the estimator and the
binning, on the line across decoding strategies, and on the source's own
dataset-inference baseline, as :class:`Claim` values.

* ``linearity_rarefied`` and ``linearity_miller_madow`` (extensions, one Holm
  family): the lab's level-set line with every level set rarefied to the same
  pairs, and with the Miller–Madow correction, against the same statistic under
  scores shuffled among the pairs. A linearity the raw plug-in line shows and
  neither corrected line does is marked mechanical: the level sets' sizes, not the
  scores (the negative control is the plug-in line under shuffled scores);
* ``r_every_binning``: the source's r > 0.9 under 3, 5 and 10 equal-width score
  bins (Appendix C.4): a claim about models this run does not have;
* ``intercept_slope_across_strategies``: across decoding strategies, the intercept
  rises as the slope falls (Appendix C.1 and C.7), against every permutation of
  the slopes among the strategies;
* ``di_vs_maini``: the intercept rule against Maini et al. (2024)'s aggregated
  attacks on the lab's sets (Table 7), an exact McNemar test.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from analysis.core.claims import EXTENSION, REPRODUCED, SOURCE, Claim, decide
from analysis.entropy.claims import FRONTIER, _claim, _untestable
from analysis.entropy.maini import rule_tally
from analysis.entropy.method_sets import SetResult
from analysis.entropy.nulls import null_test
from analysis.entropy.params import (
    ESTIMATOR_FAMILY,
    MIN_DI_SETS,
    MIN_LEVEL_SETS,
    MIN_SETTINGS,
    MIN_STRATEGY_LINES,
    NSB_NOTE,
    NSB_SHORT,
    PAPER_BINNINGS,
    PAPER_MIN_R,
    PAPER_TABLE7,
    load_paper_table,
)
from analysis.entropy.robust import EstimatorTest, miller_madow_line
from analysis.stats.lines import Fit
from analysis.stats.ranks import sign_test
from analysis.stats.resampling import holm, permutation_p

#: each corrected line's column in :func:`~analysis.entropy.robust.estimator_stats`, and its name
ESTIMATORS = {"linearity_rarefied": ("r_rarefied", "every level set rarefied to the same pairs (the mean r "
                                                   "over the draws; the null's mean over fewer draws, so the "
                                                   "test errs conservative)"),
              "linearity_miller_madow": ("r_mm", "Miller–Madow entropy")}


def _mechanical_note(plugin: Fit | None) -> str | None:
    """Why a corrected line's failure marks the raw one mechanical (None when the
    raw plug-in line is not significant either)."""
    if plugin is None or not (plugin.r > 0 and plugin.p < 0.05):
        return None
    return (f"the raw plug-in line is significant (r = {plugin.r:.3f}, p = {plugin.p:.3g}) but this "
            "estimator's is not: the linearity survives only the raw plug-in estimate, so it is mechanical "
            "(the level sets' sizes), not evidence that entropy tracks the score")


def estimator_claims(test: EstimatorTest, plugin: Fit | None) -> dict[str, Claim]:
    """``linearity_rarefied`` and ``linearity_miller_madow`` on the lab's main sample
    (``test``: :func:`~analysis.entropy.robust.estimator_test`; ``plugin``: its raw
    plug-in line), Holm-adjusted over the two."""
    control, _, _ = null_test(test.observed["r_plugin"], test.null["r_plugin"])
    tests = {id: null_test(test.observed[col], test.null[col]) for id, (col, _) in ESTIMATORS.items()}
    adjusted = dict(zip(tests, holm([t[1] for t in tests.values()])))
    rare = test.rarefied
    out = {}
    for id, (col, name) in ESTIMATORS.items():
        value = test.observed[col]
        med, p, n_null = tests[id]
        n_units = len(rare.levels) if col == "r_rarefied" else test.level_sets
        extra = {"r_plugin": test.observed["r_plugin"], "size": rare.size, "kept": rare.levels,
                 "dropped": rare.dropped, "null_n": n_null}
        comparison = (f"Pearson r of the level-set entropy line, {name}, against the same r with the scores "
                      f"shuffled among the kept pairs ({n_null} permutations, two-sided, Holm-adjusted over "
                      f"the two corrected lines); the negative control is the raw plug-in line under the "
                      f"same shuffles. {NSB_NOTE}")
        kw = dict(kind=EXTENSION, unit="level sets", min_n=MIN_LEVEL_SETS, n=n_units, n_units=n_units,
                  family=ESTIMATOR_FAMILY, extra=extra)
        if med is None:
            out[id] = _untestable(id, "artefact", "fewer than 3 level sets for the line, or no finite "
                                  f"permutation; {NSB_SHORT}", comparison=comparison,
                                  control_reason="no value to control", **kw)
            continue
        v = decide(value=value, null=med, p=adjusted[id], adjusted=True, n_units=n_units,
                   min_n=MIN_LEVEL_SETS, unit="level sets")
        reason, mechanical = v.reason, False
        note = _mechanical_note(plugin) if v.status != REPRODUCED else None
        if note and control is not None:
            reason, mechanical = f"{reason}; {note}", True
        extra["mechanical_only"] = mechanical
        interval = rare.summary("r")[1:] if col == "r_rarefied" else None
        out[id] = _claim(id, "artefact", (v.status, f"{reason}; {NSB_SHORT}", mechanical), comparison,
                         value=value, interval=interval, p=p, p_adjusted=adjusted[id],
                         null_kind="permutation", null_value=med, control_value=control,
                         control_reason=None if control is not None else "no plug-in line to control", **kw)
    return out


def binning_claim(table: pd.DataFrame) -> Claim:
    """``r_every_binning``: r above 0.9 under every number of equal-width bins of
    :func:`~analysis.entropy.robust.binning_table`: not testable here
    (:data:`~analysis.entropy.claims.FRONTIER`), with this run's r beside it."""
    id = "r_every_binning"
    rs = table["r"].to_numpy(float)
    finite = rs[np.isfinite(rs)]
    extra = {"total": len(rs), "with_line": int(finite.size), "above": int((finite > PAPER_MIN_R).sum()),
             "lines": {int(b): (float(r) if np.isfinite(r) else None) for b, r in zip(table["bins"], rs)}}
    why = (f"r from {finite.min():.3f} to {finite.max():.3f} over {', '.join(map(str, table['bins']))} bins, "
           f"above {PAPER_MIN_R:g} for {extra['above']} of {len(rs)}; {FRONTIER}" if finite.size else
           "no binning has a line (each has fewer than 3 populated bins)")
    return _untestable(id, "artefact", why, "cells", value=float(finite.min()) if finite.size else None,
                       n=int(finite.size), n_units=int(finite.size), min_n=MIN_SETTINGS,
                       source_value=(f"r > {PAPER_MIN_R:g} for n_d ∈ "
                                     f"{{{', '.join(map(str, PAPER_BINNINGS))}}} (Appendix C.4, Figure 16)"),
                       null_kind="target", null_value=PAPER_MIN_R,
                       comparison=f"each binning's r against the source's {PAPER_MIN_R:g}",
                       control_reason="a threshold the source measured on its models; nothing to control",
                       extra=extra)


def strategy_intercept_slope(table: pd.DataFrame) -> tuple[float, float | None, int]:
    """Pearson r of the intercepts and slopes over the rows with a line, the
    two-sided p over every permutation of the slopes among them (None with fewer
    than 3 rows or a constant side), and how many rows."""
    t = table[np.isfinite(table["intercept"].to_numpy(float)) & np.isfinite(table["slope"].to_numpy(float))]
    a, b = t["intercept"].to_numpy(float), t["slope"].to_numpy(float)
    if len(a) < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan"), None, len(a)
    r = float(np.corrcoef(a, b)[0, 1])
    if len(a) <= 8:
        perms = (b[list(p)] for p in itertools.permutations(range(len(b))))
    else:
        rng = np.random.default_rng(0)
        perms = (rng.permutation(b) for _ in range(10_000))
    null = [float(np.corrcoef(a, s)[0, 1]) for s in perms]
    return r, permutation_p(r, null, "two-sided"), len(a)


def strategy_line_claim(strategies: pd.DataFrame) -> Claim:
    """``intercept_slope_across_strategies``: across the strategies of
    :func:`~analysis.entropy.method_sets.strategy_table`, intercept and slope move
    in opposite directions (Pearson r < 0; exact permutation p over the
    strategies); the source's value is the same r over its Table 4."""
    id = "intercept_slope_across_strategies"
    r, p, n = strategy_intercept_slope(strategies)
    t4 = load_paper_table("table4")
    paper_r, _, paper_n = strategy_intercept_slope(t4)
    source = (f"r = {paper_r:.2f} between intercept and slope over Table 4's {paper_n} strategies: "
              "\"when the intercept increases, the slope decreases\" (Appendices C.1 and C.7)")
    kw = dict(unit="strategies", min_n=MIN_STRATEGY_LINES, source_value=source, null_kind="permutation",
              control_reason="every strategy decodes the same pairs; no arm lacks a decoding by construction",
              extra={"paper_r": paper_r, "strategies": n})
    if p is None:
        return _untestable(id, "lengths", f"{n} strategies with a line; a correlation needs 3 and both sides "
                           "varying", n=n, n_units=n, **kw)
    v = decide(value=r, null=0.0, p=p, n_units=n, min_n=MIN_STRATEGY_LINES, direction=-1, unit="strategies")
    return _claim(id, "lengths", v, "Pearson r of the lines' intercepts and slopes across strategies < 0 "
                  "(two-sided p over every permutation of the slopes among the strategies)", value=r, p=p,
                  n=n, n_units=n, null_value=0.0, **kw)


def maini_claim(rules: pd.DataFrame, kind: str = "lab") -> Claim:
    """``di_vs_maini``: the intercept rule's share right minus Maini et al.'s over
    the candidate sets of ``kind`` that Maini et al.'s rule decides
    (:func:`~analysis.entropy.maini.three_rules`; an undecided intercept call is a
    miss); the exact McNemar test (a sign test over the sets only one gets right)."""
    id = "di_vs_maini"
    (ki, n), (kl, _), (km, _) = rule_tally(rules, kind).values()
    source = "; ".join(f"{k}: {r} of {m}" for k, (r, m) in PAPER_TABLE7.items()) + " (Table 7)"
    r = rules[rules["kind"] == kind]
    only_i = [f"{a}: {b}" for a, b, x, y in zip(r["model"], r["set"], r["intercept right"], r["Maini right"])
              if x and not y]
    only_m = [f"{a}: {b}" for a, b, x, y in zip(r["model"], r["set"], r["intercept right"], r["Maini right"])
              if y and not x]
    extra = {"sets": n, "intercept_right": ki, "loss_right": kl, "maini_right": km, "only_intercept": only_i,
             "only_maini": only_m}
    kw = dict(unit="candidate sets", min_n=MIN_DI_SETS, source_value=source, null_kind="analytic",
              null_value=0.0, extra=extra,
              control_reason="two rules on the same sets; no arm lacks membership by construction")
    if n == 0:
        return _untestable(id, "di", "no candidate set was decided by Maini et al.'s rule", **kw)
    value = (ki - km) / n
    b, c = len(only_i), len(only_m)
    p = sign_test(b, b + c).p if b + c else None
    v = decide(value=value, null=0.0, p=p, n_units=n, min_n=MIN_DI_SETS, unit="candidate sets")
    return _claim(id, "di", v, "share right by the intercept rule − share right by Maini et al.'s aggregated "
                  "attacks > 0, over the candidate sets Maini et al.'s rule decides (every one but its "
                  "validation set; an undecided intercept call a miss); exact McNemar test: sign test over "
                  "the sets only one gets right", kind=SOURCE, value=value, p=p, n=n, n_units=n, **kw)


def rarefied_value(test: EstimatorTest) -> str:
    """The rarefied r of the main sample for the page (mean over the draws), or "undefined"."""
    r = test.observed["r_rarefied"]
    return "undefined" if not np.isfinite(r) else f"{r:.3f}"


def mm_value(main: SetResult) -> str:
    """The Miller–Madow r of the main sample's line for the page, or "undefined"."""
    r = miller_madow_line(main.levels)["r"]
    return "undefined" if not np.isfinite(r) else f"{r:.3f}"

"""The entropy chapter's decisions: each verdict it states, as a :class:`Claim` computed from the numbers.

One builder per section of the notebook, each returning its claims by id
(:func:`sample_claims`, :func:`instance_claims`, :func:`level_set_claims`,
:func:`length_claims`, :func:`strategy_claims`, :func:`sample_size_claims`,
:func:`di_claims`). The statement of each claim is in
:data:`analysis.entropy.text.STATEMENTS`, the source's values come from the
source's text (``PAPER_*`` in :mod:`analysis.entropy.params`) and its tables
(``data/entropy_table*.csv``), and :func:`analysis.entropy.text.render` words
a claim.

The tests: a line's r against the source's 0.9 by the percentile bootstrap of
the chapter's re-centred resamples (:func:`~analysis.entropy.method.bootstrap_p`);
two correlations by Fisher's z (:func:`analysis.stats.fisher.compare_correlations`);
a share against one half by the sign test (:func:`analysis.stats.ranks.sign_test`);
a line's slope by its t-test (the p of :class:`~analysis.stats.lines.Fit`). A value
on the other side from the source's is never evidence for it
(:func:`analysis.core.claims.directional`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import levene, ttest_ind

from analysis.core.claims import (
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    Claim,
    directional,
    not_testable,
    within,
)
from analysis.entropy.method import bootstrap_p, stronger
from analysis.entropy.method_di import di_calls
from analysis.entropy.method_sets import Inference, SetResult, kept, sample_size_summary, size_tracking_r
from analysis.entropy.params import (
    FLAT_INTERCEPT_BITS,
    LOW_SCORE_SHARE,
    MIN_BOOT_SETS,
    MIN_DI_SETS,
    MIN_LEVEL_SETS,
    MIN_PAIRS,
    MIN_SETTINGS,
    MIN_SUBSAMPLES,
    PAPER_END_ENTROPY,
    PAPER_INSTANCE_MODEL,
    PAPER_INSTANCE_R,
    PAPER_LENGTH_R,
    PAPER_LENGTHS,
    PAPER_MIN_DI_SAMPLES,
    PAPER_MIN_R,
    PAPER_SET_MODEL,
    PAPER_SET_R,
    PAPER_SMALL_SAMPLE_INTERCEPT,
    SAME_END_BITS,
    TIED_R,
    load_paper_table,
)
from analysis.entropy.text import STATEMENTS
from analysis.stats.fisher import compare_correlations
from analysis.stats.intervals import wilson_interval
from analysis.stats.lines import fit_line, percentile_interval
from analysis.stats.ranks import sign_test
from analysis.stats.result import StatsError

CHAPTER = "entropy"
#: the notebook's section of each group of claims (its MyST label)
SECTIONS = {"sample": "entropy-lab", "instance": "entropy-instance", "levels": "entropy-level-sets",
            "lengths": "entropy-lengths", "di": "entropy-di", "real": "entropy-real"}
#: how a line's r is held against the source's 0.9
R_TEST = (f"r > {PAPER_MIN_R:g}: two-sided percentile-bootstrap p of {PAPER_MIN_R:g} over the re-centred "
          "resamples of the pairs")
#: how two correlations are compared
Z_TEST = "Fisher z-test of two correlations (treated as independent)"


def _claim(id: str, section: str, status_reason: tuple[str, str], comparison: str, **kw) -> Claim:
    status, reason = status_reason
    return Claim(id=id, chapter=CHAPTER, statement=STATEMENTS[id], status=status, reason=reason,
                 comparison=comparison, section=SECTIONS[section], **kw)


def _untestable(id: str, section: str, why: str, **kw) -> Claim:
    return not_testable(id, CHAPTER, STATEMENTS[id], why, section=SECTIONS[section], **kw)


def _compare(r1: float, n1: int, r2: float, n2: int) -> float | None:
    """The Fisher z p-value of r1 = r2, None where it cannot be taken (under 4 points)."""
    try:
        return compare_correlations(r1, n1, r2, n2).p
    except StatsError:
        return None


def _paper_r4() -> str:
    t4 = load_paper_table("table4")
    return f"{t4['r'].min():.3f} to {t4['r'].max():.3f} (Table 4)"


# -- the lab's sample and one answer at a time --------------------------------------------------


def sample_claims(scored: pd.DataFrame) -> dict[str, Claim]:
    """``low_scores_rarer``: fewer than half the kept pairs score below
    ``LOW_SCORE_SHARE · |s|`` edits (sign test against one half)."""
    id, k = "low_scores_rarer", kept(scored)
    source = "exponentially rarer (Sections 5 and 6.2)"
    if k.empty:
        return {id: _untestable(id, "sample", "no pair survives the errors and the trivial filter",
                                source_value=source)}
    cut = LOW_SCORE_SHARE * len(k["suffix"].iloc[0])
    n_low = int((k["score"] < cut).sum())
    est = sign_test(n_low, len(k))
    status = directional(value=est.value, null=0.5, p=est.p, n=len(k), min_n=MIN_PAIRS, direction=-1)
    return {id: _claim(id, "sample", status,
                       "share of kept pairs scoring below |s|/2 < 0.5 (two-sided sign test)", value=est.value,
                       p=est.p, n=len(k), min_n=MIN_PAIRS, source_value=source,
                       extra={"low": n_low, "cut": cut})}


def instance_claims(fits: Mapping) -> dict[str, Claim]:
    """``instance_entropy`` and ``instance_zlib``: each answer's entropy (zlib
    ratio) correlates positively with its score (the line's t-test)."""
    out = {}
    for metric in ("entropy", "zlib"):
        f, id = fits[metric], f"instance_{metric}"
        out[id] = _claim(id, "instance", directional(value=f.r, null=0.0, p=f.p, n=f.n, min_n=MIN_PAIRS),
                         f"Pearson r of the kept pairs' {metric} against their score > 0 "
                         "(t-test of the slope)",
                         value=f.r, p=f.p, n=f.n, min_n=MIN_PAIRS,
                         source_value=f"r ≈ {PAPER_INSTANCE_R:g} ({PAPER_INSTANCE_MODEL})")
    return out


# -- level sets ---------------------------------------------------------------------------------


def r_above(res: SetResult) -> tuple[str, str, dict]:
    """Status, reason and evidence (``value``, ``interval``, ``p``, ``n``) of one
    line's r against the source's 0.9; not testable without a line."""
    if res.fit is None:
        return NOT_TESTABLE, f"{len(res.levels)} level sets, too few for a line", {"n": len(res.levels)}
    r = np.clip(res.centred("r"), -1, 1)
    p = bootstrap_p(r, PAPER_MIN_R)
    lo, hi = percentile_interval(r)
    status, reason = directional(value=res.fit.r, null=PAPER_MIN_R, p=p, n=res.fit.n, min_n=MIN_LEVEL_SETS)
    return status, reason, {"value": res.fit.r, "interval": (lo, hi), "p": p, "n": res.fit.n}


def _linearity(main: SetResult) -> Claim:
    status, reason, ev = r_above(main)
    return _claim("em_linearity", "levels", (status, reason), R_TEST, **ev, min_n=MIN_LEVEL_SETS,
                  source_value=f"r > {PAPER_MIN_R:g} on every model; {_paper_r4()}")


def _two_lines(id: str, r1: float, n1: int, r2: float, n2: int, comparison: str, source: str,
               extra: dict) -> Claim:
    """A claim that correlation ``r1`` exceeds ``r2``, by Fisher's z."""
    p = _compare(r1, n1, r2, n2)
    n = min(n1, n2)
    return _claim(id, "levels", directional(value=r1 - r2, null=0.0, p=p, n=n, min_n=MIN_LEVEL_SETS),
                  comparison, value=r1 - r2, p=p, n=n, min_n=MIN_LEVEL_SETS, source_value=source, extra=extra)


def _zlib(main: SetResult) -> Claim:
    id = "entropy_beats_zlib"
    source = (f"entropy {PAPER_SET_R['entropy']:.3f}, zlib {PAPER_SET_R['zlib']:.3f} "
              f"({PAPER_SET_MODEL}, Figure 2)")
    if main.fit is None or main.zlib_fit is None:
        return _untestable(id, "levels", "the entropy or the zlib ratio has no line (fewer than 3 level "
                           "sets)", source_value=source)
    e, z = main.fit, main.zlib_fit
    return _two_lines(id, e.r, e.n, z.r, z.n, f"r of the entropy line − r of the zlib line > 0; {Z_TEST}",
                      source, {"r_entropy": e.r, "r_zlib": z.r, "stronger": stronger(e.r, z.r)})


def _pooling(main: SetResult, fits: Mapping) -> Claim:
    id, ri = "pooling", fits["entropy"].r
    source = f"r ≈ {PAPER_INSTANCE_R:g} per answer, {PAPER_SET_R['entropy']:.3f} by level set"
    if main.fit is None:
        return _untestable(id, "levels", "the level sets are too few for a line", source_value=source,
                           extra={"r_instance": ri})
    rs = main.fit.r
    return _two_lines(id, abs(rs), main.fit.n, abs(ri), fits["entropy"].n,
                      f"|r| by level set − |r| per answer > 0; {Z_TEST}", source,
                      {"r_instance": ri, "r_set": rs})


def _size(main: SetResult) -> Claim:
    id, r_size = "score_over_size", size_tracking_r(main.levels)
    if main.fit is None or not np.isfinite(r_size):
        return _untestable(id, "levels", "fewer than 3 level sets, or every level set the same size",
                           source_value="not examined")
    r_score, n = main.fit.r, main.fit.n
    return _two_lines(id, abs(r_score), n, abs(r_size), n,
                      f"|r| of entropy with the score − |r| of entropy with log₂ pairs per level set > 0; "
                      f"{Z_TEST}", "not examined",
                      {"r_size": r_size, "r_score": r_score, "closer": abs(r_size) > abs(r_score)})


def _slope_sign(id: str, fit, direction: int, comparison: str, source: str, extra: dict) -> Claim:
    return _claim(id, "levels", directional(value=fit.r, null=0.0, p=fit.p, n=fit.n, min_n=MIN_LEVEL_SETS,
                                            direction=direction),
                  comparison, value=fit.r, p=fit.p, n=fit.n, min_n=MIN_LEVEL_SETS, source_value=source,
                  extra=extra)


def _normalized(main: SetResult) -> Claim:
    id, f, source = "normalized_falls", main.norm_fit, "a decreasing line (Figure 5b)"
    if f is None:
        return _untestable(id, "levels", "fewer than 3 level sets with more than one distinct token",
                           source_value=source)
    return _slope_sign(id, f, -1, "Pearson r of normalized entropy against the score < 0 (t-test of the "
                       "slope)", source, {"slope": f.slope})


def _token_space(main: SetResult) -> Claim:
    id, lv = "token_space_grows", main.levels
    source = "grows exponentially with e, from about 2^10 distinct tokens at e = 0 (Figure 5a)"
    try:
        f = fit_line(lv["e"], np.log2(lv["token_space"].to_numpy(float)), what="level sets")
    except StatsError as err:
        return _untestable(id, "levels", str(err), source_value=source)
    if not np.isfinite(f.r):
        return _untestable(id, "levels", "every level set has the same token space", source_value=source)
    return _slope_sign(id, f, 1, "Pearson r of log₂|T_e| against the score > 0 (t-test of the slope)", source,
                       {"slope": f.slope})


def _verbatim(main: SetResult, suffix_tokens: int) -> Claim:
    id, lv = "verbatim_rarer", main.levels.set_index("e")["pairs"]
    source = "low scores exponentially rarer than high ones (Sections 5 and 6.2)"
    low = lv[(lv.index > 0) & (lv.index < suffix_tokens / 2)]
    if 0 not in lv.index or not len(low):
        return _untestable(id, "levels", "no level set at e = 0, or none between 0 and |s|/2",
                           source_value=source)
    k, m = int(lv[0]), int(low.max())
    est = sign_test(k, k + m)
    return _claim(id, "levels", directional(value=est.value, null=0.5, p=est.p, n=k + m, min_n=MIN_PAIRS,
                                            direction=-1),
                  "pairs at e = 0 against the largest level set with 0 < e < |s|/2: share < 0.5 (sign test)",
                  value=est.value, p=est.p, n=k + m, min_n=MIN_PAIRS, source_value=source,
                  extra={"verbatim": k, "low_min": int(low.min()), "low_max": m,
                         "low_top": int(low.index.max())})


def level_set_claims(main: SetResult, fits: Mapping, suffix_tokens: int) -> dict[str, Claim]:
    """The main sample's level sets: ``em_linearity`` (r above 0.9),
    ``entropy_beats_zlib``, ``pooling`` (a stronger r by level set than per
    answer, ``fits`` being :func:`~analysis.entropy.method_sets.instance_fits`),
    ``normalized_falls``, ``token_space_grows``, ``score_over_size`` (the entropy
    follows the score more closely than the set sizes) and ``verbatim_rarer``."""
    claims = [_linearity(main), _zlib(main), _pooling(main, fits), _normalized(main), _token_space(main),
              _size(main), _verbatim(main, suffix_tokens)]
    return {c.id: c for c in claims}


# -- at every length, strategy, set -------------------------------------------------------------


def every_r_above(id: str, section: str, results: Mapping[str, SetResult], comparison: str,
                  source: str) -> Claim:
    """A claim that r exceeds 0.9 in every one of ``results`` (:func:`r_above`
    each): reproduced when each is, not reproduced when one is not, inconclusive
    otherwise (one inconclusive, or one without a line); ``n`` counts the lines."""
    items = {label: r_above(res) for label, res in results.items()}
    rs = [ev["value"] for _, _, ev in items.values() if "value" in ev]
    extra = {"statuses": {k: s for k, (s, _, _) in items.items()}, "total": len(items), "with_line": len(rs),
             "above": sum(r > PAPER_MIN_R for r in rs),
             "r_min": min(rs) if rs else None, "r_max": max(rs) if rs else None}
    if not rs:
        return _untestable(id, section, "none has a line (each has fewer than 3 level sets)",
                           source_value=source, extra=extra)
    statuses = [s for s, _, _ in items.values()]
    if len(rs) < MIN_SETTINGS:
        status, reason = INCONCLUSIVE, f"{len(rs)} with a line, below the minimum of {MIN_SETTINGS}"
    elif NOT_REPRODUCED in statuses:
        bad = [k for k, s in extra["statuses"].items() if s == NOT_REPRODUCED]
        status, reason = NOT_REPRODUCED, f"not reproduced for {len(bad)} of {len(items)}: {', '.join(bad)}"
    elif all(s == REPRODUCED for s in statuses):
        status, reason = REPRODUCED, f"reproduced for each of the {len(items)}"
    else:
        open_ = [k for k, s in extra["statuses"].items() if s != REPRODUCED]
        status, reason = INCONCLUSIVE, f"inconclusive or without a line for {len(open_)} of {len(items)}"
    return _claim(id, section, (status, reason), f"each line: {comparison}", value=min(rs), n=len(rs),
                  min_n=MIN_SETTINGS, source_value=source, extra=extra)


def _intercept_trend(results: Sequence[SetResult]) -> Claim:
    id = "intercept_grows_with_length"
    source = f"grows monotonically with |s| from {PAPER_LENGTHS[0]} to {PAPER_LENGTHS[-1]} (Figure 4)"
    values = np.array([r.fit.intercept if r.fit is not None else np.nan for r in results], dtype=float)
    if len(values) < 2 or not np.isfinite(values).all():
        return _untestable(id, "lengths", "not every length has a line", source_value=source)
    change = float(values[-1] - values[0])
    first, last = results[0].centred("intercept"), results[-1].centred("intercept")
    m = min(len(first), len(last))
    p = bootstrap_p(last[:m] - first[:m], 0.0) if m else None
    interval = percentile_interval(last[:m] - first[:m]) if m else None
    trend = ("flat" if abs(change) < FLAT_INTERCEPT_BITS else
             ("rises" if (np.diff(values) > 0).all() else "rises overall") if change > 0 else "falls")
    return _claim(id, "lengths", directional(value=change, null=0.0, p=p, n=len(values), min_n=MIN_SETTINGS),
                  "intercept at the longest − at the shortest |s| > 0: two-sided percentile-bootstrap p of 0 "
                  "over the difference of their re-centred resamples", value=change, interval=interval, p=p,
                  n=len(values), min_n=MIN_SETTINGS, source_value=source, extra={"trend": trend})


def _end_entropy(results: Mapping[str, SetResult], lengths: Sequence[int]) -> Claim:
    id = "same_end_entropy"
    source = f"≈ {PAPER_END_ENTROPY:g} bits at e = |s| for every length (OLMo-2, Figure 4)"
    top = np.array([res.levels.set_index("e")["entropy"].get(n, np.nan)
                    for n, res in zip(lengths, results.values())], dtype=float)
    finite = top[np.isfinite(top)]
    if finite.size == 0:
        return _untestable(id, "lengths", "no answer length has a level set at e = |s|", source_value=source)
    spread = float(np.ptp(finite))
    extra = {"lo": float(finite.min()), "hi": float(finite.max()), "missing": int(len(top) - finite.size),
             "total": len(top), "holds": spread <= SAME_END_BITS}
    return _claim(id, "lengths", within(value=spread, target=0.0, tolerance=SAME_END_BITS, n=finite.size,
                                        min_n=MIN_SETTINGS),
                  f"spread of the level-set entropies at e = |s| across lengths ≤ {SAME_END_BITS:g} bit",
                  value=spread, n=finite.size, min_n=MIN_SETTINGS, source_value=source, extra=extra)


def length_claims(results: Mapping[str, SetResult], lengths: Sequence[int]) -> dict[str, Claim]:
    """The runs over answer lengths (:func:`~analysis.entropy.run.by_suffix_length`,
    in the order of ``lengths``): ``r_every_length``,
    ``intercept_grows_with_length`` and ``same_end_entropy``."""
    every = every_r_above("r_every_length", "lengths", results, R_TEST,
                          f"r from {PAPER_LENGTH_R[0]:g} to {PAPER_LENGTH_R[1]:g} at |s| = "
                          f"{PAPER_LENGTHS[0]} to {PAPER_LENGTHS[-1]} (Figure 4)")
    claims = [every, _intercept_trend(list(results.values())), _end_entropy(results, lengths)]
    return {c.id: c for c in claims}


def strategy_claims(results: Mapping[str, SetResult]) -> dict[str, Claim]:
    """``r_every_strategy``: r above 0.9 under every sampling strategy run
    (:func:`~analysis.entropy.run.by_strategy`), against the source's Table 4."""
    claim = every_r_above("r_every_strategy", "lengths", results, R_TEST, _paper_r4())
    return {claim.id: claim}


# -- sample size ---------------------------------------------------------------------------------


def _tested(a, b, test) -> float | None:
    """``test(a, b)``'s p-value; None where it cannot be taken (too few values, or
    constant ones: scipy's warnings about them are silenced, the NaN is the answer)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            p = float(test(a, b).pvalue)
    except ValueError:
        return None
    return p if np.isfinite(p) else None


def sample_size_claims(sens: pd.DataFrame) -> dict[str, Claim]:
    """Appendix E.1 on :func:`~analysis.entropy.method_sets.sample_size_sensitivity`'s
    subsamples, smallest size against largest: ``small_samples_spread`` (the
    10–90 spread of the intercept is wider; Brown–Forsythe test) and
    ``small_samples_lower`` (the mean intercept is lower; Welch's t-test)."""
    ids = ("small_samples_spread", "small_samples_lower")
    sources = (f"large fluctuations below n = {PAPER_MIN_DI_SAMPLES:,} (Appendix E.1)",
               f"falls from a plateau towards {PAPER_SMALL_SAMPLE_INTERCEPT:g} below n = "
               f"{PAPER_MIN_DI_SAMPLES:,} (Appendix E.1)".replace("-", "−"))
    s = sample_size_summary(sens) if not sens.empty else pd.DataFrame()
    if len(s) < 2:
        why = "no subsample has a line" if s.empty else "only one subsample size has a line"
        return {id: _untestable(id, "lengths", why, source_value=src) for id, src in zip(ids, sources)}
    small, large = s.iloc[0], s.iloc[-1]
    a = sens.loc[sens["size"] == small["size"], "intercept"].to_numpy(float)
    b = sens.loc[sens["size"] == large["size"], "intercept"].to_numpy(float)
    n = len(a) + len(b)
    spread_p = _tested(a, b, lambda x, y: levene(x, y, center="median"))
    mean_p = _tested(a, b, lambda x, y: ttest_ind(x, y, equal_var=False))
    tests = ((float(small["spread"] - large["spread"]), 1, spread_p,
              "10–90 spread of the intercept at the smallest size − at the largest > 0 "
              "(Brown–Forsythe test)"),
             (float(small["mean"] - large["mean"]), -1, mean_p,
              "mean intercept at the smallest size − at the largest < 0 (Welch's t-test)"))
    out = {}
    for id, src, (value, direction, p, comparison) in zip(ids, sources, tests):
        out[id] = _claim(id, "lengths", directional(value=value, null=0.0, p=p, n=n, min_n=MIN_SUBSAMPLES,
                                                    direction=direction),
                         comparison, value=value, p=p, n=n, min_n=MIN_SUBSAMPLES, source_value=src,
                         extra={"sizes": [int(small["size"]), int(large["size"])]})
    return out


# -- dataset inference ---------------------------------------------------------------------------


def _outcome(row) -> str:
    if not np.isfinite(row["prediction"]):
        return "not testable"
    return "right" if row["prediction"] == row["truth"] else "wrong"


def di_claim(di: pd.DataFrame, kind: str, table1: pd.DataFrame) -> Claim:
    """``di_lab`` or ``di_real``: the candidate sets of models of ``kind`` that the
    rule calls right, among those it decides (sign test against one half; the
    Wilson interval). A set without a line, or of a model whose reference has
    none, is undecided: excluded from ``n``, never counted as wrong. The reason
    says how many sets the rule calls members and which non-member sets among
    them, and, below the minimum n, the smallest p so few sets could give."""
    id = f"di_{kind}"
    source = f"{int((table1['prediction'] == table1['ground_truth']).sum())} of {len(table1)} sets (Table 1)"
    c = di[(di["role"] == "candidate") & (di["kind"] == kind)]
    sets = [{"model": r["model"], "set": r["set"], "truth": int(r["truth"]), "outcome": _outcome(r)}
            for _, r in c.iterrows()]
    right = sum(s["outcome"] == "right" for s in sets)
    decided = sum(s["outcome"] != "not testable" for s in sets)
    extra = {"right": right, "decided": decided, "not_testable": len(sets) - decided, "total": len(sets),
             "sets": sets}
    if decided == 0:
        why = "no candidate set was run" if not sets else "no candidate set has a line and a τ"
        return _untestable(id, "di", why, source_value=source, extra=extra)
    est = sign_test(right, decided)
    status, reason = directional(value=est.value, null=0.5, p=est.p, n=decided, min_n=MIN_DI_SETS)
    calls = di_calls(di, kind)
    extra.update(called_members=calls["called_members"], nonmembers=calls["nonmembers"],
                 nonmembers_called=calls["nonmembers_called"], undecided=calls["undecided"])
    if decided < MIN_DI_SETS:
        reason += (f": even {decided} of {decided} right would give a sign-test p of "
                   f"{sign_test(decided, decided).p:.3g}")
    reason += (f"; it calls {calls['called_members']} of {decided} decided sets members, "
               f"{len(calls['nonmembers_called'])} of the {calls['nonmembers_decided']} decided non-member "
               "sets among them")
    if extra["not_testable"]:
        reason += (f"; {extra['not_testable']} of {len(sets)} sets undecided (no line, or no τ), left out of "
                   "n, not counted wrong")
    lo, hi = wilson_interval(right, decided)
    return _claim(id, "di", (status, reason), "share of decided candidate sets called right > 0.5 "
                  "(two-sided sign test; Wilson interval)", value=est.value, interval=(float(lo), float(hi)),
                  p=est.p, n=decided, min_n=MIN_DI_SETS, source_value=source, extra=extra)


def intercept_slope_claim(results: Sequence[SetResult]) -> Claim:
    """``intercept_slope_opposed``: within a set, the bootstrap's intercepts and
    slopes move in opposite directions (the median over sets of their Pearson r
    below 0; sign test over sets). By design: a least-squares line through points
    of positive mean score trades its intercept against its slope."""
    id, source = "intercept_slope_opposed", "intercept rises as the slope falls (Appendix C.1)"
    rs = [float(np.corrcoef(r.boot["intercept"], r.boot["slope"])[0, 1]) for r in results
          if len(r.boot) >= 3 and r.boot["slope"].std() > 0 and r.boot["intercept"].std() > 0]
    if not rs:
        return _untestable(id, "di", "no set has enough bootstrap lines", source_value=source, by_design=True)
    m = float(np.median(rs))
    est = sign_test(sum(r < 0 for r in rs), sum(r != 0 for r in rs))
    how = "opposite" if m < -TIED_R else "together" if m > TIED_R else "loose"
    status = directional(value=m, null=0.0, p=est.p, n=len(rs), min_n=MIN_BOOT_SETS, direction=-1)
    return _claim(id, "di", status,
                  "median over sets of the r between bootstrap intercepts and slopes < 0 "
                  "(sign test over sets)",
                  value=m, p=est.p, n=len(rs), min_n=MIN_BOOT_SETS, source_value=source, by_design=True,
                  extra={"how": how})


def di_claims(di: pd.DataFrame, lab: Sequence[Inference], real: Sequence[Inference]) -> dict[str, Claim]:
    """Dataset inference: ``di_lab`` and ``di_real`` (:func:`di_claim`, on
    :func:`~analysis.entropy.method_sets.di_table`'s table), ``r_real_models``
    (r above 0.9 on every real model's every set) and ``intercept_slope_opposed``
    (over the lab's sets)."""
    table1 = load_paper_table("table1")
    real_sets = {f"{i.model}: {label}": res for i in real for label, res in i.results.items()}
    claims = [di_claim(di, "lab", table1), di_claim(di, "real", table1),
              every_r_above("r_real_models", "real", real_sets, R_TEST,
                            f"r > {PAPER_MIN_R:g} on every model"),
              intercept_slope_claim([res for i in lab for res in i.results.values()])]
    return {c.id: c for c in claims}

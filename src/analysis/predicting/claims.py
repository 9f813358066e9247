"""The predicting chapter's decisions: each verdict it states, as a :class:`Claim` computed from the numbers.

One function per claim, grouped by the section that shows it
(:func:`labels_claims`, :func:`exp1_claims`, :func:`exp2_claims`,
:func:`exp3_claims`). The source's value of each claim comes from its
transcribed tables (``data/predicting_*.csv``, passed in as frames); the
statement it makes is in :data:`analysis.predicting.text.STATEMENTS`, and
:func:`analysis.predicting.text.render` words the claim.

Tests of an AUC against chance use the chapter's normal approximation of the
Mann–Whitney null (:func:`analysis.predicting.method_eval.chance_p`), on the
seed-0 set's class sizes, or :func:`analysis.stats.auc.auc_test` where the
scores are at hand; an AUC on the other side of 0.5 from the source's is never
evidence for it (:func:`analysis.core.claims.directional`). Experiment 3's gap
between two fits of the same examples is tested paired, by DeLong's variance
(:func:`exp3_gap_claim`), and a gap between fits below chance is no evidence either.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import binomtest, mannwhitneyu, norm

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
from analysis.predicting.checks import require
from analysis.predicting.method_eval import chance_band, chance_p
from analysis.predicting.params import FEATURE_SETS, PAPER_INSERTED_ONLY, PAPER_TOP_LEVEL, THREE
from analysis.predicting.tables import computed_columns, extracted_per_run
from analysis.predicting.text import STATEMENTS
from analysis.stats.auc import auc_test

CHAPTER = "predicting"
#: the level of every test
ALPHA = 0.05
#: fewest examples (or pairs) an AUC or a count rests on before its claim can be decided
MIN_EXAMPLES = 30
MIN_PAIRS = 30
#: fewest targets a count over targets rests on
MIN_TARGETS = 5
#: the notebook's section of each group of claims (its MyST label)
SECTIONS = {"labels": "predicting-labels", "exp1": "predicting-exp1", "exp2": "predicting-exp2",
            "exp3": "predicting-exp3", "compare": "predicting-compare"}
#: the comparison of an AUC with chance, on the seed-0 set's class sizes
CHANCE_TEST = "AUC against 0.5, two-sided normal approximation of the Mann–Whitney null (seed-0 class sizes)"


def _claim(id: str, section: str, status: str, reason: str, comparison: str, **kw) -> Claim:
    return Claim(id=id, chapter=CHAPTER, statement=STATEMENTS[id], status=status, reason=reason,
                 comparison=comparison, section=SECTIONS[section], **kw)


def _untestable(id: str, section: str, why: str, **kw) -> Claim:
    return not_testable(id, CHAPTER, STATEMENTS[id], why, section=SECTIONS[section], **kw)


def _finite(x) -> bool:
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def _cell(table: pd.DataFrame | None, row, col) -> float:
    """One number of a wide AUC table, NaN when the table, row or column is missing."""
    if table is None or row not in table.index or col not in table.columns:
        return float("nan")
    return float(table.loc[row, col])


# -- labels --------------------------------------------------------------------------------------


def controls_claim(long: pd.DataFrame, paper_dataset: pd.DataFrame) -> Claim:
    """Does any lab target extract a never-inserted control (0 copies), as the source's targets do?

    ``long`` has ``copies`` and ``extract`` per (target, sequence); ``paper_dataset``
    is the source's ``exp1_dataset`` table (``controls_pos`` per target). Reproduced
    when at least one control is extracted, not reproduced when none of at least
    :data:`MIN_EXAMPLES` is.
    """
    require(long, ("copies", "extract"), "the long frame")
    require(paper_dataset, ("target", "controls_pos"), "the source's dataset table")
    src = paper_dataset["controls_pos"]
    extra = dict(src_total=int(src.sum()), src_sets=int((src > 0).sum()), src_n_sets=len(src),
                 src_lo=int(src.min()), src_hi=int(src.max()))
    source = f"{extra['src_total']:,} controls extracted in {extra['src_sets']} of {len(src)} sets"
    ctrl = long.loc[long["copies"] == 0, "extract"]
    k, n = int(ctrl.sum()), len(ctrl)
    comparison = "at least one never-inserted (sequence, target) example extracted"
    if n == 0:
        return _untestable("controls_extracted", "labels", "the lab's targets have no never-inserted "
                           "controls", source_value=source, extra=extra)
    if n < MIN_EXAMPLES and k == 0:
        status, reason = INCONCLUSIVE, f"n = {n} is below the minimum of {MIN_EXAMPLES}"
    else:
        status = REPRODUCED if k else NOT_REPRODUCED
        reason = f"{k} of {n} never-inserted (sequence, target) examples extracted"
    return _claim("controls_extracted", "labels", status, reason, comparison, value=k / n, n=n,
                  min_n=MIN_EXAMPLES, source_value=source, extra=dict(extra, extracted=k))


def partial_learning_claim(long: pd.DataFrame, alpha: float = ALPHA) -> Claim:
    """Do inserted sequences that no target extracts have more of their suffix right than the controls?

    Compares the per-sequence suffix accuracy in the inserted (target, copies)
    cells where nothing is extracted with that of the never-inserted controls
    (copies 0), by a one-sided Mann–Whitney test (``alternative="greater"``); the
    value is the difference of the means.
    """
    require(long, ("target", "copies", "extract", "suffix_acc"), "the long frame")
    rate = long.groupby(["target", "copies"])["extract"].transform("mean")
    cells = long[(long["copies"] >= 1) & (rate == 0)]
    ctrl = long.loc[long["copies"] == 0, "suffix_acc"]
    if cells.empty:
        return _untestable("partial_learning", "labels",
                           "every inserted (target, copies) cell extracts some sequence")
    extra = dict(n_cells=cells.groupby(["target", "copies"]).ngroups, acc=float(cells["suffix_acc"].mean()))
    if ctrl.empty:
        return _untestable("partial_learning", "labels", "no never-inserted controls to compare with",
                           extra=extra)
    extra["ctrl_acc"] = float(ctrl.mean())
    p = float(mannwhitneyu(cells["suffix_acc"], ctrl, alternative="greater").pvalue)
    n = len(cells) + len(ctrl)
    status, reason = directional(value=extra["acc"] - extra["ctrl_acc"], null=0.0, p=p, n=n,
                                 min_n=MIN_EXAMPLES, alpha=alpha)
    return _claim("partial_learning", "labels", status, reason,
                  "mean suffix accuracy, unextracted inserted cells minus controls; one-sided Mann–Whitney",
                  value=extra["acc"] - extra["ctrl_acc"], p=p, n=n, min_n=MIN_EXAMPLES, extra=extra)


def labels_claims(long: pd.DataFrame, paper_dataset: pd.DataFrame) -> list[Claim]:
    """The claims of the labels section: :func:`controls_claim`, :func:`partial_learning_claim`."""
    return [controls_claim(long, paper_dataset), partial_learning_claim(long)]


# -- Experiment 1 --------------------------------------------------------------------------------


def exp1_three_claim(lab: pd.DataFrame | None, paper: pd.DataFrame, dataset: pd.DataFrame,
                     target: str, id: str = "e1_three") -> Claim:
    """Do the three features rank ``target``'s memorized sequences above chance (random split)?

    ``lab`` and ``paper`` are wide AUC tables (rows ``features``, one column per
    target by the source's name), ``dataset`` the lab's :func:`exp1_stats` (its
    seed-0 test set gives the class sizes of the test). With ``id="e1_inserted_three"``
    ``lab`` and ``dataset`` are the inserted-only run's (:func:`exp1_inserted_claim`).
    """
    value = _cell(lab, THREE, target)
    source = f"{paper.loc[THREE, target]:.3f} ({target})" if target in paper.columns else None
    if id == "e1_inserted_three":
        source = (f"not printed (the source's {PAPER_INSERTED_ONLY}); with every sequence "
                  f"{source or '—'}")
    row = dataset[dataset["target"] == target] if "target" in dataset else dataset.iloc[:0]
    if not _finite(value) or row.empty or pd.isna(row["test_n"].iloc[0]):
        return _untestable(id, "exp1", f"no AUC for {target} on this lab", source_value=source,
                           extra={"target": target})
    n, n_pos = int(row["test_n"].iloc[0]), int(row["test_pos"].iloc[0])
    p = chance_p(value, n_pos, n - n_pos)
    status, reason = directional(value=value, null=0.5, p=p, n=n, min_n=MIN_EXAMPLES, alpha=ALPHA)
    extra = {"target": target}
    if id == "e1_inserted_three" and _finite(_cell(paper, THREE, target)):
        extra["src_all"] = float(paper.loc[THREE, target])
    return _claim(id, "exp1", status, reason, CHANCE_TEST + "; n = the random split's test set",
                  value=value, p=p, n=n, min_n=MIN_EXAMPLES, source_value=source, extra=extra)


def exp1_inserted_claim(lab: pd.DataFrame | None, paper: pd.DataFrame, dataset: pd.DataFrame,
                        target: str) -> Claim:
    """Do the three features still rank ``target``'s memorized sequences above chance once the
    never-inserted controls are removed before balancing (the source's inserted-only tables)?

    The source prints no numbers for those tables (:data:`PAPER_INSERTED_ONLY`), so the claim
    tests the direction of its table with every sequence (``paper``, random split) on the lab's
    inserted-only run (``lab`` and its ``dataset``).
    """
    return exp1_three_claim(lab, paper, dataset, target, id="e1_inserted_three")


def exp1_freq_claim(lab: pd.DataFrame | None, paper: pd.DataFrame) -> Claim:
    """Does log_freq alone rank better than hardness alone for most targets, as in the source?

    Counts the targets with numbers where the ``log_freq`` row beats the
    ``hardness`` row; the value is their share, tested against one half by a
    two-sided binomial (sign) test.
    """
    src_wins = int((paper.loc["log_freq"] > paper.loc["hardness"]).sum())
    extra = dict(src_wins=src_wins, src_n=paper.shape[1], src_hard_lo=float(paper.loc["hardness"].min()),
                 src_hard_hi=float(paper.loc["hardness"].max()))
    source = f"{src_wins} of {paper.shape[1]} targets"
    cols = computed_columns(lab)
    if not cols:
        return _untestable("e1_freq_beats_hardness", "exp1", "no target has enough positives for "
                           "Experiment 1", source_value=source, extra=extra)
    wins = int(sum(lab.loc["log_freq", c] > lab.loc["hardness", c] for c in cols))
    p = float(binomtest(wins, len(cols), 0.5).pvalue)
    status, reason = directional(value=wins / len(cols), null=0.5, p=p, n=len(cols), min_n=MIN_TARGETS,
                                 alpha=ALPHA)
    return _claim("e1_freq_beats_hardness", "exp1", status, reason,
                  "share of targets where log_freq beats hardness, against 1/2: two-sided sign test",
                  value=wins / len(cols), p=p, n=len(cols), min_n=MIN_TARGETS, source_value=source,
                  extra=dict(extra, wins=wins))


def exp1_spread_claim(lab: pd.DataFrame | None, paper: pd.DataFrame, lab_dataset: pd.DataFrame,
                      paper_dataset: pd.DataFrame) -> Claim:
    """Does the 3-feature AUC move as little between seeds as in the source?

    Compares the medians over targets of the ``"sd (3 features)"`` rows:
    reproduced when the lab's is at most twice the source's. ``extra["relation"]``
    words the ratio: "far more than" (over twice), "less than" (under half) or
    "about as much as".
    """
    src_sd = float(paper.loc["sd (3 features)"].median())
    cols = computed_columns(lab)
    lab_sd = float(lab.loc["sd (3 features)", cols].median()) if cols else float("nan")
    sizes = lab_dataset["n_examples"] if "n_examples" in lab_dataset else []
    extra = dict(src_sd=src_sd, src_size=float(np.median(paper_dataset["n_examples"])),
                 lab_size=float(np.median(sizes)) if len(sizes) else None)
    if not _finite(lab_sd):
        why = "no target has both classes" if not len(sizes) else "no sd over seeds (one seed)"
        return _untestable("e1_seed_spread", "exp1", why, source_value=f"{src_sd:.3f}", extra=extra)
    extra["relation"] = ("far more than" if lab_sd > 2 * src_sd
                         else "less than" if lab_sd < src_sd / 2 else "about as much as")
    status, reason = within(value=lab_sd, target=src_sd, tolerance=1.0, relative=True, n=len(cols),
                            min_n=MIN_TARGETS)
    return _claim("e1_seed_spread", "exp1", status, reason,
                  "median sd over targets at most twice the source's", value=lab_sd, n=len(cols),
                  min_n=MIN_TARGETS, source_value=f"{src_sd:.3f}", extra=extra)


def exp1_claims(lab: pd.DataFrame | None, paper: pd.DataFrame, lab_dataset: pd.DataFrame,
                paper_dataset: pd.DataFrame, target: str) -> list[Claim]:
    """The claims of Experiment 1 (random split): :func:`exp1_three_claim` for ``target``,
    :func:`exp1_freq_claim` and :func:`exp1_spread_claim`."""
    return [exp1_three_claim(lab, paper, lab_dataset, target), exp1_freq_claim(lab, paper),
            exp1_spread_claim(lab, paper, lab_dataset, paper_dataset)]


# -- Experiment 2 --------------------------------------------------------------------------------


def _pool_classes(dataset: pd.DataFrame, pool: str) -> tuple[int, int]:
    """Positives and negatives of a pool's seed-0 pairs (its ``"all"`` row of :func:`exp2_stats`)."""
    if dataset.empty:
        return 0, 0
    row = dataset[(dataset["pool"] == pool) & (dataset["copies"] == "all")]
    return (int(row["n_pos"].iloc[0]), int(row["n_neg"].iloc[0])) if len(row) else (0, 0)


def exp2_recency_claim(tables: dict, paper: dict, dataset: pd.DataFrame, pool: str = "quarters") -> Claim:
    """Does recency alone rank the pairs of ``pool`` (pooled over copy levels) above chance?

    ``tables`` and ``paper`` map a pool to its wide AUC table (the lab's and the
    source's), ``dataset`` is the lab's :func:`exp2_stats` of seed 0.
    """
    value = _cell(tables.get(pool), "recency", "pooled")
    source = f"{paper[pool].loc['recency', 'pooled']:.3f}"
    n_pos, n_neg = _pool_classes(dataset, pool)
    if not _finite(value) or not (n_pos and n_neg):
        return _untestable("e2_recency", "exp2", f"no pairs to rank in the {pool} pool", source_value=source)
    p = chance_p(value, n_pos, n_neg)
    status, reason = directional(value=value, null=0.5, p=p, n=n_pos + n_neg, min_n=MIN_EXAMPLES, alpha=ALPHA)
    return _claim("e2_recency", "exp2", status, reason, CHANCE_TEST, value=value, p=p, n=n_pos + n_neg,
                  min_n=MIN_EXAMPLES, source_value=source, extra={"pool": pool})


def exp2_freq_claim(tables: dict, paper: dict, dataset: pd.DataFrame, pool: str = "quarters") -> Claim:
    """Is log_freq alone at chance (0.500) on the pairs of ``pool``, as in the source?

    Both runs of a pair see the sequence the same number of times, so the lab
    could not have found anything else: the claim is by design.
    """
    value = _cell(tables.get(pool), "log_freq", "pooled")
    target = float(paper[pool].loc["log_freq", "pooled"])
    n_pos, n_neg = _pool_classes(dataset, pool)
    if not _finite(value) or not (n_pos and n_neg):
        return _untestable("e2_log_freq_constant", "exp2", f"no pairs to rank in the {pool} pool",
                           source_value=f"{target:.3f}", by_design=True)
    status, reason = within(value=value, target=target, tolerance=0.0005, n=n_pos + n_neg, min_n=MIN_EXAMPLES)
    return _claim("e2_log_freq_constant", "exp2", status, reason,
                  "equal to the source's 0.500 at its three decimals", value=value, n=n_pos + n_neg,
                  min_n=MIN_EXAMPLES, source_value=f"{target:.3f}", by_design=True, extra={"pool": pool})


def _rises(counts: Sequence[int]) -> bool:
    v = np.asarray(counts)
    return bool(len(v) > 1 and (np.diff(v) >= 0).all() and v[-1] > v[0])


def exp2_order_claim(labels: pd.DataFrame, quarters: Sequence[str], source: pd.Series) -> Claim:
    """Does extraction grow with the end of the insertion window, over the quarters' runs?

    The value is the AUC of the window's end (:func:`window_end_baseline`) for
    the label, over the inserted (sequence, run) examples of the ``quarters``
    runs, with its Mann–Whitney p (:func:`analysis.stats.auc.auc_test`).
    ``source`` is the source's seed-0 pair positives per quarter
    (:func:`paper_pair_positives`). ``extra["rises"]`` says whether the lab's
    extracted counts per run, in window order, never fall and end above where
    they start.
    """
    require(labels, ("run", "copies", "extract", "window_end"), "the labels frame")
    counts = [int(v) for v in extracted_per_run(labels, quarters)]
    extra = dict(counts=counts, src_counts=[int(v) for v in source], rises=_rises(counts),
                 src_rises=_rises(list(source)))
    src = ", ".join(f"{int(v):,}" for v in source) + " pair positives"
    ins = labels[labels["run"].isin(list(quarters)) & (labels["copies"] >= 1)]
    comparison = "AUC of the window's end for the label, against 0.5: two-sided Mann–Whitney"
    if ins.empty:
        return _untestable("e2_window_order", "exp2", "the quarters' runs have no inserted sequences",
                           source_value=src, extra=extra)
    if ins["extract"].nunique() < 2:
        why = "no quarter extracts anything" if not sum(counts) else "every quarter extracts everything"
        return _claim("e2_window_order", "exp2", INCONCLUSIVE, why, comparison, n=len(ins),
                      min_n=MIN_EXAMPLES, source_value=src, extra=extra)
    est = auc_test(ins["extract"].to_numpy(), ins["window_end"].to_numpy(float))
    status, reason = directional(value=est.value, null=0.5, p=est.p, n=est.n, min_n=MIN_EXAMPLES, alpha=ALPHA)
    return _claim("e2_window_order", "exp2", status, reason, comparison, value=est.value,
                  interval=est.interval, p=est.p, n=est.n, min_n=MIN_EXAMPLES, source_value=src, extra=extra)


def _lean(a: int, b: int, p: float) -> str:
    """Which of two counts a binomial test at :data:`ALPHA` calls larger: "q4" (the first),
    "wide" (the second) or "even"."""
    return ("q4" if a > b else "wide") if p < ALPHA else "even"


def exp2_late_claim(run_counts: pd.DataFrame, source: pd.Series, q4: str = "range-q4",
                    wide: str = "range-late") -> Claim:
    """Which of the late pool's two runs is the positive of more pairs, in the lab and in the source?

    ``run_counts`` is :func:`exp2_run_table` (its ``late`` rows), ``source``
    :func:`paper_pair_positives` of the source's late pool. The value is the
    share of the lab's late pairs whose positive is ``q4`` (copies in the last
    quarter), tested against one half by a two-sided binomial test, in the
    direction the source's pairs lean.
    """
    s_q4, s_wide = int(source[q4]), int(source[wide])
    src_p = float(binomtest(s_q4, s_q4 + s_wide, 0.5).pvalue)
    extra = dict(q4=q4, wide=wide, src_q4=s_q4, src_wide=s_wide, src_p=src_p)
    src = f"{s_q4:,} of {s_q4 + s_wide:,} pairs (binomial p = {src_p:.2g})"
    late = run_counts[run_counts["pool"] == "late"].set_index("run") if len(run_counts) else pd.DataFrame()
    if late.empty or int(late["n_pos"].sum()) == 0:
        return _untestable("e2_late_pool", "exp2", "the lab has no late pairs", source_value=src, extra=extra)
    a, b = int(late["n_pos"].get(q4, 0)), int(late["n_pos"].get(wide, 0))
    p = float(binomtest(a, a + b, 0.5).pvalue)
    status, reason = directional(value=a / (a + b), null=0.5, p=p, n=a + b, min_n=MIN_PAIRS,
                                 direction=1 if s_q4 >= s_wide else -1, alpha=ALPHA)
    return _claim("e2_late_pool", "exp2", status, reason,
                  f"share of late pairs whose positive is {q4}, against 1/2: two-sided binomial test",
                  value=a / (a + b), p=p, n=a + b, min_n=MIN_PAIRS, source_value=src,
                  extra=dict(extra, lab_q4=a, lab_wide=b, lean=_lean(a, b, p),
                             src_lean=_lean(s_q4, s_wide, src_p)))


def exp2_top_level_claim(tables: dict, paper: dict, dataset: pd.DataFrame, plan_levels: Sequence[int],
                         pool: str = "quarters", level: int = PAPER_TOP_LEVEL) -> Claim:
    """Does recency alone rank the pairs of ``pool`` at the source's highest copy level (256)
    above chance, as the source's do?

    ``plan_levels`` are the lab's duplicate levels, read from its plan; a lab without ``level``
    cannot test this (the reason names its levels). ``tables``, ``paper`` and ``dataset`` are as in
    :func:`exp2_recency_claim`; the classes are those of the seed-0 pairs at ``level``.
    """
    col = f"copies_{level}"
    source = f"{paper[pool].loc['recency', col]:.3f}"
    levels = sorted(int(c) for c in plan_levels)
    extra = dict(pool=pool, level=level, plan_levels=levels)
    if level not in levels:
        return _untestable("e2_recency_256", "exp2", f"the lab's plan has no {level}-copy level (its levels: "
                           f"{', '.join(map(str, levels))})", source_value=source, extra=extra)
    value = _cell(tables.get(pool), "recency", col)
    row = (dataset[(dataset["pool"] == pool) & (dataset["copies"] == str(level))] if len(dataset)
           else dataset)
    n_pos, n_neg = (int(row["n_pos"].iloc[0]), int(row["n_neg"].iloc[0])) if len(row) else (0, 0)
    if not _finite(value) or not (n_pos and n_neg):
        return _untestable("e2_recency_256", "exp2", f"no {pool} pairs at {level} copies",
                           source_value=source, extra=extra)
    p = chance_p(value, n_pos, n_neg)
    status, reason = directional(value=value, null=0.5, p=p, n=n_pos + n_neg, min_n=MIN_EXAMPLES, alpha=ALPHA)
    return _claim("e2_recency_256", "exp2", status, reason, CHANCE_TEST, value=value, p=p, n=n_pos + n_neg,
                  min_n=MIN_EXAMPLES, source_value=source, extra=extra)


def exp2_claims(tables: dict, paper: dict, dataset: pd.DataFrame, labels: pd.DataFrame,
                quarters: Sequence[str], run_counts: pd.DataFrame, quarters_source: pd.Series,
                late_source: pd.Series) -> list[Claim]:
    """The claims of Experiment 2: recency and log_freq on the quarters pool, the order by
    window, and the late pool."""
    return [exp2_recency_claim(tables, paper, dataset), exp2_freq_claim(tables, paper, dataset),
            exp2_order_claim(labels, quarters, quarters_source), exp2_late_claim(run_counts, late_source)]


# -- Experiment 3 --------------------------------------------------------------------------------

#: Experiment 3's AUC claims: id -> row of the (features, hardness) table
EXP3_ROWS = {
    "e3_three_full": (THREE, "full sequence"),
    "e3_three_suffix": (THREE, "suffix"),
    "e3_cross_model": ("cross-model baseline", "—"),
}


def exp3_auc_claim(id: str, table: pd.DataFrame | None, paper: pd.DataFrame, n_pos: int, n_neg: int) -> Claim:
    """Does row :data:`EXP3_ROWS` ``[id]`` rank the pooled matched set above chance (group split)?

    ``table`` and ``paper`` are the lab's and the source's wide tables indexed by
    (features, hardness); ``n_pos`` and ``n_neg`` the seed-0 matched set's classes.
    """
    row = EXP3_ROWS[id]
    value = _cell(table, row, "pooled")
    source = f"{paper.loc[row, 'pooled']:.3f}"
    if not _finite(value) or n_pos < 1 or n_neg < 1:
        return _untestable(id, "exp3", "the matched set does not hold both classes", source_value=source)
    p = chance_p(value, n_pos, n_neg)
    status, reason = directional(value=value, null=0.5, p=p, n=n_pos + n_neg, min_n=MIN_EXAMPLES, alpha=ALPHA)
    return _claim(id, "exp3", status, reason, CHANCE_TEST, value=value, p=p, n=n_pos + n_neg,
                  min_n=MIN_EXAMPLES, source_value=source,
                  extra=dict(n_pos=n_pos, n_neg=n_neg, band=chance_band(n_pos, n_neg)))


def _paired_gap(paired: pd.DataFrame, level: float = 0.95) -> dict:
    """The mean over seeds of the paired gaps of :func:`analysis.predicting.steps.exp3_gap_tests`,
    with a standard error ``sqrt(mean(se²))``: the seeds' matched sets overlap, so their gaps are
    not independent, and the mean of the variances bounds the variance of their mean (conservative).
    """
    gap = float(paired["gap"].mean())
    se = float(np.sqrt((paired["se"] ** 2).mean()))
    z = float(norm.ppf(0.5 + level / 2))
    p = float(2 * norm.sf(abs(gap) / se)) if se > 0 else (1.0 if gap == 0 else 0.0)
    return dict(gap=gap, se=se, p=p, lo=gap - z * se, hi=gap + z * se, n=int(paired["n"].max()),
                sfx=float(paired["suffix"].mean()), full=float(paired["full"].mean()), n_seeds=len(paired))


def exp3_gap_claim(paired: pd.DataFrame | None, paper: pd.DataFrame) -> Claim:
    """Does the suffix hardness rank better than the whole-sequence one (three features, pooled)?

    ``paired`` is :func:`analysis.predicting.steps.exp3_gap_tests`: per seed, both fits' AUCs on
    the same matched set and DeLong's standard error of their difference. The value is the lab's
    gap (suffix minus whole sequence, mean over seeds) beside the source's, with a paired p and
    95% interval (:func:`_paired_gap`). A gap in the source's direction between fits that rank
    below chance is no evidence for the source: with the suffix fit's AUC at or under 0.5 the
    claim is at best inconclusive. ``extra["src_side"]`` says where the source's gap lies against
    the lab's interval ("above", "below" or "inside").
    """
    sets = paper[paper.index.get_level_values("features").isin(list(FEATURE_SETS))]
    src_sfx, src_full = (float(paper.loc[(THREE, m), "pooled"]) for m in ("suffix", "full sequence"))
    extra = dict(src_sfx=src_sfx, src_full=src_full, src_gap=src_sfx - src_full,
                 src_lo=float(sets.to_numpy().min()), src_hi=float(sets.to_numpy().max()))
    source = f"{src_sfx - src_full:+.3f} ({src_sfx:.3f} against {src_full:.3f})"
    if paired is None or paired.empty:
        return _untestable("e3_suffix_gap", "compare", "the matched set does not hold both classes",
                           source_value=source, extra=extra)
    g = _paired_gap(paired)
    src_gap = extra["src_gap"]
    extra.update(sfx=g["sfx"], full=g["full"], se=g["se"], n_seeds=g["n_seeds"],
                 src_side="above" if src_gap > g["hi"] else "below" if src_gap < g["lo"] else "inside")
    status, reason = directional(value=g["gap"], null=0.0, p=g["p"], n=g["n"], min_n=MIN_EXAMPLES,
                                 direction=1 if src_gap >= 0 else -1, alpha=ALPHA)
    if status == REPRODUCED and g["sfx"] <= 0.5:
        status, reason = INCONCLUSIVE, (f"{reason}, but the suffix fit itself ranks at {g['sfx']:.3f}, not "
                                        "above chance, so a larger AUC is not a better ranking")
    return _claim("e3_suffix_gap", "compare", status, reason,
                  "suffix minus whole-sequence AUC against 0: DeLong's paired test on each seed's matched "
                  "set, mean over seeds (standard error from the mean variance, conservative)",
                  value=g["gap"], interval=(g["lo"], g["hi"]), p=g["p"], n=g["n"], min_n=MIN_EXAMPLES,
                  source_value=source, extra=extra)


#: the claims that carry the source's Experiment 3 finding: the suffix fit above chance, and ahead
EXP3_FINDING = ("e3_three_suffix", "e3_suffix_gap")


def exp3_outcome(claims: Sequence[Claim]) -> str:
    """The status of the source's Experiment 3 finding on this run, from the claims of
    :data:`EXP3_FINDING`: not reproduced when any is, reproduced when all are, not testable
    when none can be tested, otherwise inconclusive."""
    statuses = [c.status for c in claims if c.id in EXP3_FINDING]
    if not statuses:
        raise ValueError(f"exp3_outcome needs the claims {EXP3_FINDING}")
    if NOT_REPRODUCED in statuses:
        return NOT_REPRODUCED
    if all(s == REPRODUCED for s in statuses):
        return REPRODUCED
    if all(s == NOT_TESTABLE for s in statuses):
        return NOT_TESTABLE
    return INCONCLUSIVE


def exp3_claims(table: pd.DataFrame | None, paper: pd.DataFrame, n_pos: int, n_neg: int,
                paired: pd.DataFrame | None) -> list[Claim]:
    """The claims of Experiment 3 (pooled cells, group split): the three AUCs of
    :data:`EXP3_ROWS` against chance and the suffix hardness's paired gap (``paired``:
    :func:`analysis.predicting.steps.exp3_gap_tests`)."""
    return [*(exp3_auc_claim(i, table, paper, n_pos, n_neg) for i in EXP3_ROWS),
            exp3_gap_claim(paired, paper)]

"""The predicting chapter's decisions: each verdict it states, as a :class:`Claim` computed from the numbers.

One function per claim, grouped by the section that shows it
(:func:`labels_claims`, :func:`exp1_claims`, :func:`exp2_claims`,
:func:`exp3_claims`). The source's value of each claim comes from its
transcribed tables (``data/predicting_*.csv``, passed in as frames); the
statement it makes is in :data:`analysis.predicting.text.STATEMENTS`, and
:func:`analysis.predicting.text.render` words the claim (its status through
:func:`analysis.core.claim_text.verdict`).

Every status comes from :func:`analysis.core.claims.decide` (or ``within`` /
``not_testable``). What each claim rests on:

* an AUC after a fit, a split or a selection (Experiments 1 to 3, and the window
  order, whose rows repeat each sequence) is compared with its **permutation null**
  (:mod:`analysis.predicting.nulls`: the labels permuted within the design's strata
  and pushed through the same sampling, split, fit and pooling; ``null_kind`` is
  ``"permutation"``, ``null_value`` its median, ``p`` two-sided);
* a count of targets or pairs tested by a binomial is an **exact** null
  (``"analytic"``); a value held against the source's number is ``"target"``;
* the **negative control** is the same statistic where the signal is absent by
  construction: the random baseline's scores (Experiment 1), log_freq, constant
  within every Experiment 2 pair and every Experiment 3 cell, the standard twin
  that never saw the injected sequences (partial learning); or a stated reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from analysis.core.claims import (
    EXTENSION,
    Claim,
    as_kind,
    decide,
    not_testable,
    within,
)
from analysis.predicting.checks import require
from analysis.predicting.intervals import EXP1_GAPS as EXP1_GAP_ROWS
from analysis.predicting.method_eval import chance_p
from analysis.predicting.nulls import group_null
from analysis.predicting.params import (
    PAPER_INSERTED_ONLY,
    PAPER_K,
    PAPER_N_SEQUENCES,
    PAPER_TOP_LEVEL,
    THREE,
)
from analysis.predicting.tables import computed_columns, extracted_per_run
from analysis.predicting.text import statement
from analysis.stats.auc import auc
from analysis.stats.resampling import cluster_bootstrap
from analysis.stats.result import Estimate

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
#: how a permutation null is had, per experiment (the claims' ``comparison``)
PERM_TESTS = {
    "exp1": "AUC against its permutation null: the target's labels permuted among its sequences, then "
            "balanced, split and fit per seed as in the table (200 draws, two-sided)",
    "exp2": "AUC against its permutation null: the label swapped at random within each pair, then fit "
            "under the group split per seed as in the table (200 draws, two-sided)",
    "exp3": "AUC against its permutation null: the labels permuted within each matching stratum of every "
            "cell, then matched, fit under the group split and pooled per seed as in the table (200 "
            "draws, two-sided)",
}


def _claim(id: str, section: str, status: str, reason: str, comparison: str, **kw) -> Claim:
    if kw.get("kind") == EXTENSION:
        status = as_kind(status, EXTENSION)
    return Claim(id=id, chapter=CHAPTER, statement=statement(id), status=status, reason=reason,
                 comparison=comparison, section=SECTIONS[section], **kw)


def _untestable(id: str, section: str, why: str, **kw) -> Claim:
    kw.setdefault("unit", "sequences")
    return not_testable(id, CHAPTER, statement(id), why, section=SECTIONS[section], **kw)


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


def _null_p(est: Estimate | None) -> float | None:
    return None if est is None or not _finite(est.p) else float(est.p)


def _null_median(est: Estimate | None, default: float = 0.5) -> float:
    return float(est.null_value) if est is not None and _finite(est.null_value) else default


# -- labels --------------------------------------------------------------------------------------


def source_control_rate(paper_dataset: pd.DataFrame, n_sequences: int = PAPER_N_SEQUENCES) -> float:
    """The smallest share of never-inserted controls the source's targets extract, estimated from
    its Experiment 1 dataset table: ``controls_pos`` over ``controls_pos`` plus the controls among
    all of a target's negatives, the seed-0 draw's ``controls_neg`` scaled from its ``n_neg`` drawn
    negatives to the ``n_sequences - n_pos`` a target has (every target sees every sequence)."""
    need = ("controls_pos", "controls_neg", "n_pos", "n_neg")
    if not set(need) <= set(paper_dataset.columns):
        return float("nan")
    d = paper_dataset
    neg_controls = d["controls_neg"] * (n_sequences - d["n_pos"]) / d["n_neg"]
    return float((d["controls_pos"] / (d["controls_pos"] + neg_controls)).min())


def controls_claim(long: pd.DataFrame, paper_dataset: pd.DataFrame) -> Claim:
    """Does any lab target extract a never-inserted control (0 copies), as the source's targets do?

    ``long`` has ``copies`` and ``extract`` per (target, sequence) (and ``seq_id``: the unit is
    the control sequence, scored under every target); ``paper_dataset`` is the source's
    ``exp1_dataset`` table. The value is the share of (sequence, target) examples extracted; the
    interval is Clopper–Pearson's over the control sequences (extracted by any target), the
    units. A count of 0 is no floor: the measurement can see extraction, which the inserted
    sequences show. It is evidence against the source only if the interval excludes the source's
    rate (:func:`source_control_rate`).
    """
    require(long, ("copies", "extract"), "the long frame")
    require(paper_dataset, ("target", "controls_pos"), "the source's dataset table")
    src = paper_dataset["controls_pos"]
    extra = dict(src_total=int(src.sum()), src_sets=int((src > 0).sum()), src_n_sets=len(src),
                 src_lo=int(src.min()), src_hi=int(src.max()))
    rate = source_control_rate(paper_dataset)
    extra["src_rate"] = rate if _finite(rate) else None
    source = f"{extra['src_total']:,} controls extracted in {extra['src_sets']} of {len(src)} sets"
    ctrl = long[long["copies"] == 0]
    k, n = int(ctrl["extract"].sum()), len(ctrl)
    comparison = ("share of never-inserted (sequence, target) examples extracted; Clopper–Pearson interval "
                  "over the control sequences")
    why = "the examples are themselves the never-inserted control"
    if n == 0:
        return _untestable("controls_extracted", "labels", "the lab's targets have no never-inserted "
                           "controls", source_value=source, extra=extra)
    units = ctrl.groupby("seq_id")["extract"].max() if "seq_id" in ctrl else ctrl["extract"]
    k_u, n_u = int(units.sum()), len(units)
    ci = binomtest(k_u, n_u).proportion_ci(0.95)
    interval = (float(ci.low), float(ci.high))
    src_rate = extra["src_rate"]
    v = decide(value=k / n, null=0.0, n_units=n_u, min_n=MIN_EXAMPLES, interval=interval,
               source_effect=src_rate, unit="control sequences")
    return _claim("controls_extracted", "labels", v.status, v.reason, comparison, value=k / n,
                  interval=interval, n=n, n_units=n_u, unit="sequences",
                  min_n=MIN_EXAMPLES, null_kind="analytic", null_value=0.0, control_reason=why,
                  source_value=source, extra=dict(extra, extracted=k, units_extracted=k_u))


def _unit_means(rows: pd.DataFrame, column: str) -> pd.Series:
    key = "seq_id" if "seq_id" in rows else None
    return rows.groupby(key)[column].mean() if key else rows[column].reset_index(drop=True)


def partial_learning_claim(long: pd.DataFrame, alpha: float = ALPHA) -> Claim:
    """Do inserted sequences that no target extracts have more of their suffix right than the controls?

    The book's own check (an extension). Compares the suffix accuracy of the inserted sequences
    in the (target, copies) cells where nothing is extracted with that of the never-inserted
    controls (copies 0), per sequence (the mean over its targets: the unit), by the difference
    of the means against its permutation null (the group permuted among the sequences). The
    negative control is the same difference under each target's standard twin
    (``twin_suffix_acc``, :func:`analysis.predicting.tables.twin_suffix_acc`), which never saw
    the inserted sequences either: a difference it shows too is the sequences', not learning.
    """
    require(long, ("target", "copies", "extract", "suffix_acc"), "the long frame")
    rate = long.groupby(["target", "copies"])["extract"].transform("mean")
    cells = long[(long["copies"] >= 1) & (rate == 0)]
    ctrl = long[long["copies"] == 0]
    kw = dict(kind=EXTENSION)
    if cells.empty:
        return _untestable("partial_learning", "labels",
                           "every inserted (target, copies) cell extracts some sequence", **kw)
    extra = dict(n_cells=cells.groupby(["target", "copies"]).ngroups, acc=float(cells["suffix_acc"].mean()))
    if ctrl.empty:
        return _untestable("partial_learning", "labels", "no never-inserted controls to compare with",
                           extra=extra, **kw)
    extra["ctrl_acc"] = float(ctrl["suffix_acc"].mean())

    def null_of(column):
        a, b = _unit_means(cells, column), _unit_means(ctrl, column)
        return group_null(np.concatenate([a.to_numpy(), b.to_numpy()]),
                          np.r_[np.ones(len(a), bool), np.zeros(len(b), bool)])

    est = null_of("suffix_acc")
    control = dict(control_reason="no standard twin's scores in the frame")
    c_est = None
    if "twin_suffix_acc" in long:
        c_est = null_of("twin_suffix_acc")
        control = dict(control_value=c_est.value)
        extra["twin_p"] = c_est.p
    v = decide(value=est.value, null=_null_median(est, 0.0), p=_null_p(est), n_units=est.n,
               min_n=MIN_EXAMPLES,
               alpha=alpha, unit="sequences", control_value=c_est.value if c_est else None,
               control_p=_null_p(c_est))
    return _claim("partial_learning", "labels", v.status, v.reason,
                  "mean suffix accuracy per sequence, unextracted inserted cells minus controls, against its "
                  "permutation null (groups permuted among sequences, 200 draws, two-sided)",
                  value=est.value, p=est.p, n=len(cells) + len(ctrl), n_units=est.n, unit="sequences",
                  min_n=MIN_EXAMPLES, null_kind="permutation", null_value=est.null_value,
                  mechanical=v.mechanical, extra=extra, **control, **kw)


def labels_claims(long: pd.DataFrame, paper_dataset: pd.DataFrame) -> list[Claim]:
    """The claims of the labels section: :func:`controls_claim`, :func:`partial_learning_claim`."""
    return [controls_claim(long, paper_dataset), partial_learning_claim(long)]


# -- Experiment 1 --------------------------------------------------------------------------------


def exp1_three_claim(lab: pd.DataFrame | None, paper: pd.DataFrame, dataset: pd.DataFrame,
                     target: str, null: Estimate | None, id: str = "e1_three") -> Claim:
    """Do the three features rank ``target``'s memorized sequences above chance (random split)?

    ``lab`` and ``paper`` are wide AUC tables (rows ``features``, one column per target by the
    source's name), ``dataset`` the lab's :func:`exp1_stats` (its seed-0 test set: the sequences
    the AUC rests on), ``null`` the AUC's permutation null
    (:func:`analysis.predicting.nulls.exp1_null`). The negative control is the random baseline's
    AUC on the same split (random scores: no signal by construction; its exact Mann–Whitney
    null, as a fixed score on held-out labels). With ``id="e1_inserted_three"`` ``lab``,
    ``dataset`` and ``null`` are the inserted-only run's (:func:`exp1_inserted_claim`).
    """
    value = _cell(lab, THREE, target)
    source = f"{paper.loc[THREE, target]:.3f} ({target})" if target in paper.columns else None
    if id == "e1_inserted_three":
        source = (f"not printed (the source's {PAPER_INSERTED_ONLY}); with every sequence "
                  f"{source or '—'}")
    row = dataset[dataset["target"] == target] if "target" in dataset else dataset.iloc[:0]
    if not _finite(value) or row.empty or pd.isna(row["test_n"].iloc[0]) or null is None:
        return _untestable(id, "exp1", f"no AUC for {target} on this lab", source_value=source,
                           extra={"target": target})
    n, n_pos = int(row["test_n"].iloc[0]), int(row["test_pos"].iloc[0])
    rnd = _cell(lab, "random baseline", target)
    rnd_p = chance_p(rnd, n_pos, n - n_pos) if _finite(rnd) else None
    control = dict(control_value=rnd) if _finite(rnd) else dict(control_reason="no random baseline computed")
    v = decide(value=value, null=_null_median(null), p=_null_p(null), n_units=n, min_n=MIN_EXAMPLES,
               alpha=ALPHA, unit="sequences", control_value=rnd if _finite(rnd) else None, control_p=rnd_p)
    extra = {"target": target, "control_p": rnd_p}
    if id == "e1_inserted_three" and _finite(_cell(paper, THREE, target)):
        extra["src_all"] = float(paper.loc[THREE, target])
    return _claim(id, "exp1", v.status, v.reason, PERM_TESTS["exp1"] + "; n = the seed-0 test set",
                  value=value, p=null.p, n=n, n_units=n, unit="sequences", min_n=MIN_EXAMPLES,
                  null_kind="permutation", null_value=null.null_value, mechanical=v.mechanical,
                  source_value=source, extra=extra, **control)


def exp1_inserted_claim(lab: pd.DataFrame | None, paper: pd.DataFrame, dataset: pd.DataFrame,
                        target: str, null: Estimate | None) -> Claim:
    """Do the three features still rank ``target``'s memorized sequences above chance once the
    never-inserted controls are removed before balancing (the source's inserted-only tables)?

    The source prints no numbers for those tables (:data:`PAPER_INSERTED_ONLY`), so the claim
    tests the direction of its table with every sequence (``paper``, random split) on the lab's
    inserted-only run (``lab``, its ``dataset`` and ``null``).
    """
    return exp1_three_claim(lab, paper, dataset, target, null, id="e1_inserted_three")


def exp1_freq_claim(lab: pd.DataFrame | None, paper: pd.DataFrame) -> Claim:
    """Does log_freq alone rank better than hardness alone for most targets, as in the source?

    Counts the targets with numbers where the ``log_freq`` row beats the ``hardness`` row; the
    value is their share, tested against one half by a two-sided binomial (sign) test, exact.
    """
    src_wins = int((paper.loc["log_freq"] > paper.loc["hardness"]).sum())
    extra = dict(src_wins=src_wins, src_n=paper.shape[1], src_hard_lo=float(paper.loc["hardness"].min()),
                 src_hard_hi=float(paper.loc["hardness"].max()))
    source = f"{src_wins} of {paper.shape[1]} targets"
    cols = computed_columns(lab)
    if not cols:
        return _untestable("e1_freq_beats_hardness", "exp1", "no target has enough positives for "
                           "Experiment 1", source_value=source, extra=extra, unit="targets")
    wins = int(sum(lab.loc["log_freq", c] > lab.loc["hardness", c] for c in cols))
    p = float(binomtest(wins, len(cols), 0.5).pvalue)
    v = decide(value=wins / len(cols), null=0.5, p=p, n_units=len(cols), min_n=MIN_TARGETS, alpha=ALPHA,
               unit="targets")
    return _claim("e1_freq_beats_hardness", "exp1", v.status, v.reason,
                  "share of targets where log_freq beats hardness, against 1/2: two-sided exact sign test",
                  value=wins / len(cols), p=p, n=len(cols), n_units=len(cols), unit="targets",
                  min_n=MIN_TARGETS, null_kind="analytic", null_value=0.5,
                  control_reason="two features compared on the same examples: no arm without the signal",
                  source_value=source, extra=dict(extra, wins=wins))


def exp1_spread_claim(lab: pd.DataFrame | None, paper: pd.DataFrame, lab_dataset: pd.DataFrame,
                      paper_dataset: pd.DataFrame) -> Claim:
    """Does the 3-feature AUC move as little between seeds as in the source?

    Compares the medians over targets of the ``"sd (3 features)"`` rows: reproduced when the
    lab's is at most twice the source's; a miss is "not reproduced" only when the 95% interval
    of the lab's median (a bootstrap over the targets, the units) lies wholly outside that band.
    ``extra["relation"]`` words the ratio: "far more than" (over twice), "less than" (under half)
    or "about as much as".
    """
    src_sd = float(paper.loc["sd (3 features)"].median())
    cols = computed_columns(lab)
    lab_sd = float(lab.loc["sd (3 features)", cols].median()) if cols else float("nan")
    sizes = lab_dataset["n_examples"] if "n_examples" in lab_dataset else []
    extra = dict(src_sd=src_sd, src_size=float(np.median(paper_dataset["n_examples"])),
                 lab_size=float(np.median(sizes)) if len(sizes) else None)
    if not _finite(lab_sd):
        why = "no target has both classes" if not len(sizes) else "no sd over seeds (one seed)"
        return _untestable("e1_seed_spread", "exp1", why, source_value=f"{src_sd:.3f}", extra=extra,
                           unit="targets")
    extra["relation"] = ("far more than" if lab_sd > 2 * src_sd
                         else "less than" if lab_sd < src_sd / 2 else "about as much as")
    sds = lab.loc["sd (3 features)", cols].to_numpy(float)
    interval = None
    if len(cols) >= 2:
        est = cluster_bootstrap(lambda idx: float(np.median(sds[idx])), list(cols), n_boot=2000, seed=0)
        interval = est.interval
    status, reason = within(value=lab_sd, target=src_sd, tolerance=1.0, relative=True, n=len(cols),
                            min_n=MIN_TARGETS, interval=interval, unit="targets")
    return _claim("e1_seed_spread", "exp1", status, reason,
                  "median sd over targets at most twice the source's; 95% bootstrap interval over targets",
                  value=lab_sd, interval=interval, n=len(cols), n_units=len(cols), unit="targets",
                  min_n=MIN_TARGETS, null_kind="target", null_value=src_sd,
                  control_reason="a spread over seeds, not an effect: no arm without it",
                  source_value=f"{src_sd:.3f}", extra=extra)


#: what "adds little" means: a gain in AUC under this margin (the source's largest gain from hardness
#: on a target of over a thousand examples is 0.045, 1b-500b's; only its 300-example ir50_75 gains more)
LITTLE = 0.05


def _gap_source(paper: pd.DataFrame, a: str, b: str, target: str) -> tuple[float | None, str, dict]:
    gaps = paper.loc[a] - paper.loc[b]
    extra = dict(src_median=float(gaps.median()), src_lo=float(gaps.min()), src_hi=float(gaps.max()),
                 src_n=len(gaps), src_pos=int((gaps > 0).sum()))
    own = float(gaps[target]) if target in gaps.index else None
    text = ((f"{own:+.3f} ({target}); " if own is not None else "")
            + f"median {extra['src_median']:+.3f} over its {len(gaps)} targets "
            f"({extra['src_lo']:+.3f} to {extra['src_hi']:+.3f})")
    return own, text, dict(extra, src_gap=own)


def exp1_hardness_claim(gaps: Mapping[str, Estimate] | None, paper: pd.DataFrame, target: str,
                        margin: float = LITTLE) -> Claim:
    """Does hardness add little to log_freq and recency (Experiment 1, random split, ``target``)?

    ``gaps`` is :func:`analysis.predicting.intervals.exp1_gaps` of the target's frame: its
    ``"hardness"`` is the 3-feature AUC minus the log_freq + recency AUC (mean over seeds, the
    table's), paired on the same held-out rows, with a 95% interval from a bootstrap over the
    sequences. "Little" is a gain under ``margin`` (:data:`LITTLE`): reproduced when the whole
    interval lies below it, not reproduced when the whole interval lies above it.
    """
    a, b = EXP1_GAP_ROWS["hardness"]
    own, source, extra = _gap_source(paper, a, b, target)
    extra.update(target=target, margin=margin)
    est = (gaps or {}).get("hardness")
    if est is None or not _finite(est.value):
        return _untestable("e1_hardness_adds_little", "exp1", f"no AUCs for {target} on this lab",
                           source_value=source, extra=extra)
    v = decide(value=est.value, null=margin, interval=est.interval, n_units=est.n_units,
                         min_n=MIN_EXAMPLES, direction=-1, alpha=ALPHA, unit="sequences")
    return _claim("e1_hardness_adds_little", "exp1", v.status, v.reason,
                  f"3-feature minus log_freq + recency AUC (random split, mean over seeds, paired on the "
                  f"same held-out rows) against a margin of {margin:g}: 95% bootstrap interval over "
                  "sequences",
                  value=est.value, interval=est.interval, n=est.n, n_units=est.n_units, unit="sequences",
                  min_n=MIN_EXAMPLES, null_kind="target", null_value=margin,
                  control_reason="two feature sets compared on the same held-out rows: no arm without the "
                                 "signal", source_value=source, extra=extra)


def exp1_cross_claim(gaps: Mapping[str, Estimate] | None, paper: pd.DataFrame, target: str) -> Claim:
    """Do the three features rank ``target``'s memorized sequences on the side of the cross-model
    baseline that the source's do (Experiment 1, random split)?

    ``gaps["cross"]`` (:func:`analysis.predicting.intervals.exp1_gaps`) is the 3-feature AUC minus
    the cross-model baseline's, paired on the same held-out rows, with a 95% bootstrap interval
    over the sequences, tested against 0 in the direction of the source's difference for the
    target.
    """
    a, b = EXP1_GAP_ROWS["cross"]
    own, source, extra = _gap_source(paper, a, b, target)
    extra["target"] = target
    est = (gaps or {}).get("cross")
    if est is None or not _finite(est.value):
        return _untestable("e1_three_vs_cross_model", "exp1", f"no AUCs for {target} on this lab",
                           source_value=source, extra=extra)
    direction = 1 if (own if own is not None else extra["src_median"]) >= 0 else -1
    v = decide(value=est.value, null=0.0, interval=est.interval, n_units=est.n_units,
                         min_n=MIN_EXAMPLES, direction=direction, alpha=ALPHA, unit="sequences")
    return _claim("e1_three_vs_cross_model", "exp1", v.status, v.reason,
                  "3-feature minus cross-model baseline AUC (random split, mean over seeds, paired on the "
                  "same held-out rows) against 0: 95% bootstrap interval over sequences",
                  value=est.value, interval=est.interval, n=est.n, n_units=est.n_units, unit="sequences",
                  min_n=MIN_EXAMPLES, null_kind="analytic", null_value=0.0,
                  control_reason="two rankers compared on the same held-out rows: no arm without the signal",
                  source_value=source, extra=dict(extra, direction=direction))


def exp1_gap_claims(gaps: Mapping[str, Estimate] | None, paper: pd.DataFrame, target: str) -> list[Claim]:
    """Experiment 1's paired comparisons: :func:`exp1_hardness_claim` and :func:`exp1_cross_claim`."""
    return [exp1_hardness_claim(gaps, paper, target), exp1_cross_claim(gaps, paper, target)]


def exp1_claims(lab: pd.DataFrame | None, paper: pd.DataFrame, lab_dataset: pd.DataFrame,
                paper_dataset: pd.DataFrame, target: str, null: Estimate | None) -> list[Claim]:
    """The claims of Experiment 1 (random split): :func:`exp1_three_claim` for ``target`` (with its
    permutation ``null``), :func:`exp1_freq_claim` and :func:`exp1_spread_claim`."""
    return [exp1_three_claim(lab, paper, lab_dataset, target, null), exp1_freq_claim(lab, paper),
            exp1_spread_claim(lab, paper, lab_dataset, paper_dataset)]


# -- Experiment 2 --------------------------------------------------------------------------------


def _pool_classes(dataset: pd.DataFrame, pool: str) -> tuple[int, int]:
    """Positives and negatives of a pool's seed-0 pairs (its ``"all"`` row of :func:`exp2_stats`)."""
    if dataset.empty:
        return 0, 0
    row = dataset[(dataset["pool"] == pool) & (dataset["copies"] == "all")]
    return (int(row["n_pos"].iloc[0]), int(row["n_neg"].iloc[0])) if len(row) else (0, 0)


def exp2_recency_claim(tables: dict, paper: dict, dataset: pd.DataFrame, null: Mapping[str, Estimate] | None,
                       pool: str = "quarters") -> Claim:
    """Does recency alone rank the pairs of ``pool`` (pooled over copy levels) above chance?

    ``tables`` and ``paper`` map a pool to its wide AUC table (the lab's and the source's),
    ``dataset`` is the lab's :func:`exp2_stats` of seed 0, ``null`` the pool's
    :func:`analysis.predicting.nulls.exp2_null` (``"recency"``, and ``"log_freq"``: the negative
    control, constant within every pair by construction). The unit is the pair's sequence.
    """
    value = _cell(tables.get(pool), "recency", "pooled")
    source = f"{paper[pool].loc['recency', 'pooled']:.3f}"
    n_pos, n_neg = _pool_classes(dataset, pool)
    if not _finite(value) or not (n_pos and n_neg) or not null or "recency" not in null:
        return _untestable("e2_recency", "exp2", f"no pairs to rank in the {pool} pool", source_value=source)
    return _recency_claim("e2_recency", value, null, n_pos + n_neg, source, {"pool": pool})


def _recency_claim(id: str, value: float, null: dict, n: int, source: str, extra: dict) -> Claim:
    """A recency AUC against its permutation null, log_freq's AUC on the same pairs as
    the control (``e2_recency`` and ``e2_recency_256``)."""
    est, ctrl = null["recency"], null.get("log_freq")
    control = (dict(control_value=ctrl.value) if ctrl is not None and _finite(ctrl.value)
               else dict(control_reason="no log_freq fit on the pairs"))
    v = decide(value=value, null=_null_median(est), p=_null_p(est), n_units=est.n_units, min_n=MIN_EXAMPLES,
               alpha=ALPHA, unit="sequences", control_value=control.get("control_value"),
               control_p=_null_p(ctrl))
    return _claim(id, "exp2", v.status, v.reason, PERM_TESTS["exp2"], value=value, p=est.p, n=n,
                  n_units=est.n_units, unit="sequences", min_n=MIN_EXAMPLES, null_kind="permutation",
                  null_value=est.null_value, mechanical=v.mechanical, source_value=source, extra=extra,
                  **control)


def exp2_freq_claim(tables: dict, paper: dict, dataset: pd.DataFrame, pool: str = "quarters") -> Claim:
    """Is log_freq alone at chance (0.500) on the pairs of ``pool``, as in the source?

    By design, for any data: both runs of a pair see the sequence the same number of times and
    every pair holds one positive and one negative, so a score constant within every pair gives
    the two classes the same scores, AUC exactly 0.5. The value is exact (no sampling error).
    """
    value = _cell(tables.get(pool), "log_freq", "pooled")
    target = float(paper[pool].loc["log_freq", "pooled"])
    n_pos, n_neg = _pool_classes(dataset, pool)
    why = ("a feature constant within every pair (both runs see the same copies) scores the pair's "
           "positive and negative alike, AUC 0.5 for any labels")
    if not _finite(value) or not (n_pos and n_neg):
        return _untestable("e2_log_freq_constant", "exp2", f"no pairs to rank in the {pool} pool",
                           source_value=f"{target:.3f}", by_design=True, by_design_reason=why)
    status, reason = within(value=value, target=target, tolerance=0.0005, n=n_pos, min_n=MIN_EXAMPLES,
                            exact=True, unit="pairs' sequences")
    return _claim("e2_log_freq_constant", "exp2", status, reason,
                  "equal to the source's 0.500 at its three decimals", value=value, n=n_pos + n_neg,
                  n_units=n_pos, unit="sequences", min_n=MIN_EXAMPLES, null_kind="target", null_value=target,
                  control_reason="by design: the outcome holds for any labels", source_value=f"{target:.3f}",
                  by_design=True, by_design_reason=why, extra={"pool": pool})


def _rises(counts: Sequence[int]) -> bool:
    v = np.asarray(counts)
    return bool(len(v) > 1 and (np.diff(v) >= 0).all() and v[-1] > v[0])


def exp2_order_claim(labels: pd.DataFrame, quarters: Sequence[str], source: pd.Series,
                     null: Mapping[str, Estimate] | None = None) -> Claim:
    """Does extraction grow with the end of the insertion window, over the quarters' runs?

    The value is the AUC of the window's end (:func:`window_end_baseline`) for the label, over
    the inserted (sequence, run) examples of the ``quarters`` runs. No fit precedes it, but every
    sequence is a row under each run, so the rows are not independent and the Mann–Whitney null
    is not exact: ``null`` is :func:`analysis.predicting.nulls.window_null` (each sequence's
    labels permuted among its runs), the interval a bootstrap over sequences. The negative
    control is the never-inserted sequences (0 copies) of the same runs. ``source`` is the
    source's seed-0 pair positives per quarter (:func:`paper_pair_positives`).
    ``extra["rises"]`` says whether the lab's extracted counts per run, in window order, never
    fall and end above where they start.
    """
    require(labels, ("run", "copies", "extract", "window_end"), "the labels frame")
    counts = [int(v) for v in extracted_per_run(labels, quarters)]
    extra = dict(counts=counts, src_counts=[int(v) for v in source], rises=_rises(counts),
                 src_rises=_rises(list(source)))
    src = ", ".join(f"{int(v):,}" for v in source) + " pair positives"
    runs = labels[labels["run"].isin(list(quarters))]
    ins, ctrl = runs[runs["copies"] >= 1], runs[runs["copies"] == 0]
    comparison = ("AUC of the window's end for the label, against its permutation null (each sequence's "
                  "labels permuted among the runs, 200 draws, two-sided); interval: bootstrap over sequences")
    k_ctrl = int(ctrl["extract"].sum())
    if len(ctrl) and 0 < k_ctrl < len(ctrl):
        control = dict(control_value=auc(ctrl["extract"].to_numpy(), ctrl["window_end"].to_numpy(float)))
    else:
        control = dict(control_reason=f"the never-inserted sequences are extracted {k_ctrl} times in "
                                      f"{len(ctrl)} (sequence, run) rows: no order to show")
    n_units = int(ins["seq_id"].nunique()) if "seq_id" in ins else len(ins)
    if ins.empty:
        return _untestable("e2_window_order", "exp2", "the quarters' runs have no inserted sequences",
                           source_value=src, extra=extra)
    if ins["extract"].nunique() < 2 or not null or "window" not in null:
        why = ("no quarter extracts anything" if not sum(counts) else "every quarter extracts everything"
               if ins["extract"].nunique() < 2 else "no permutation null computed")
        return _untestable("e2_window_order", "exp2", why, source_value=src, extra=extra, n=len(ins),
                           n_units=n_units)
    est = null["window"]
    y, s = ins["extract"].to_numpy(), ins["window_end"].to_numpy(float)
    units = ins["seq_id"].astype(str).to_numpy() if "seq_id" in ins else np.arange(len(ins))

    def stat(idx):
        return auc(y[idx], s[idx]) if 0 < y[idx].sum() < len(idx) else float("nan")

    interval = cluster_bootstrap(stat, units, n_boot=1000, seed=0).interval
    v = decide(value=est.value, null=_null_median(est), p=_null_p(est), n_units=n_units, min_n=MIN_EXAMPLES,
               alpha=ALPHA, unit="sequences", control_value=control.get("control_value"))
    return _claim("e2_window_order", "exp2", v.status, v.reason, comparison, value=est.value,
                  interval=interval, p=est.p, n=len(ins), n_units=n_units, unit="sequences",
                  min_n=MIN_EXAMPLES,
                  null_kind="permutation", null_value=est.null_value, mechanical=v.mechanical,
                  source_value=src, extra=extra, **control)


def _lean(a: int, b: int, p: float) -> str:
    """Which of two counts a binomial test at :data:`ALPHA` calls larger: "q4" (the first),
    "wide" (the second) or "even"."""
    return ("q4" if a > b else "wide") if p < ALPHA else "even"


def exp2_late_claim(run_counts: pd.DataFrame, source: pd.Series, q4: str = "range-q4",
                    wide: str = "range-late") -> Claim:
    """Which of the late pool's two runs is the positive of more pairs, in the lab and in the source?

    ``run_counts`` is :func:`exp2_run_table` (its ``late`` rows), ``source``
    :func:`paper_pair_positives` of the source's late pool. The value is the share of the lab's
    late pairs whose positive is ``q4`` (copies in the last quarter), tested against one half by
    a two-sided exact binomial test, in the direction the source's pairs lean. A pair is one
    sequence (the unit).
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
    v = decide(value=a / (a + b), null=0.5, p=p, n_units=a + b, min_n=MIN_PAIRS,
               direction=1 if s_q4 >= s_wide else -1, alpha=ALPHA, unit="sequences")
    return _claim("e2_late_pool", "exp2", v.status, v.reason,
                  f"share of late pairs whose positive is {q4}, against 1/2: two-sided exact binomial test",
                  value=a / (a + b), p=p, n=a + b, n_units=a + b, unit="sequences", min_n=MIN_PAIRS,
                  null_kind="analytic", null_value=0.5,
                  control_reason="a pair needs a run that extracts the sequence; a sequence no run saw "
                                 "gives none",
                  source_value=src,
                  extra=dict(extra, lab_q4=a, lab_wide=b, lean=_lean(a, b, p),
                             src_lean=_lean(s_q4, s_wide, src_p)))


def exp2_top_level_claim(tables: dict, paper: dict, dataset: pd.DataFrame, plan_levels: Sequence[int],
                         pool: str = "quarters", level: int = PAPER_TOP_LEVEL,
                         null: Mapping[str, Estimate] | None = None) -> Claim:
    """Does recency alone rank the pairs of ``pool`` at the source's highest copy level (256)
    above chance, as the source's do?

    ``plan_levels`` are the lab's duplicate levels, read from its plan; a lab without ``level``
    cannot test this (the reason names its levels). ``tables``, ``paper`` and ``dataset`` are as in
    :func:`exp2_recency_claim`; the classes are those of the seed-0 pairs at ``level``, ``null``
    the :func:`analysis.predicting.nulls.exp2_null` of those pairs.
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
    if not _finite(value) or not (n_pos and n_neg) or not null or "recency" not in null:
        return _untestable("e2_recency_256", "exp2", f"no {pool} pairs at {level} copies",
                           source_value=source, extra=extra)
    return _recency_claim("e2_recency_256", value, null, n_pos + n_neg, source, extra)


def exp2_level_claim(level: int, tables: dict, paper: dict, dataset: pd.DataFrame,
                     null: Estimate | None, interval: pd.DataFrame | None = None,
                     pool: str = "quarters") -> Claim:
    """Does recency alone rank the pairs of ``pool`` at ``level`` copies above chance?

    One claim per copy level of the lab's insertions (id ``e2_recency_copies_<level>``;
    :func:`exp2_top_level_claim` is the source's highest level's). ``tables``, ``paper`` and
    ``dataset`` are as in :func:`exp2_recency_claim`; ``null`` is the
    :func:`analysis.predicting.nulls.exp2_null` of the level's pairs (its ``"recency"``
    estimate, with ``"log_freq"`` the control, constant within every pair) and ``interval`` the
    level's :func:`analysis.predicting.intervals.auc_intervals` column (the 95% bootstrap over
    sequences). A level without positives (no sequence there is extracted by one run of the pool
    and missed by another) has no pairs: not testable. The source's value is its table's at the
    level, or its range over its levels where it has none.
    """
    id = level_claim_id(level)
    col = f"copies_{level}"
    src = paper[pool]
    levels = [c for c in src.columns if c.startswith("copies_")]
    source = (f"{src.loc['recency', col]:.3f}" if col in src.columns and _finite(src.loc["recency", col]) else
              f"no {level}-copy level; {src.loc['recency', levels].min():.3f} to "
              f"{src.loc['recency', levels].max():.3f} at its levels")
    row = (dataset[(dataset["pool"] == pool) & (dataset["copies"] == str(level))] if len(dataset)
           else dataset)
    n_pos = int(row["n_pos"].iloc[0]) if len(row) else 0
    extra = dict(pool=pool, level=level, n_pos=n_pos)
    if not n_pos:
        return _untestable(id, "exp2", f"no positives at {level} copies in the {pool} pool: no sequence "
                           "there is extracted under one run and missed under another, so there are no pairs",
                           source_value=source, extra=extra)
    value = _cell(tables.get(pool), "recency", col)
    if not _finite(value) or null is None or "recency" not in null:
        return _untestable(id, "exp2", f"the {n_pos} pairs at {level} copies cannot be split "
                           f"{PAPER_K} ways by sequence", source_value=source, extra=extra)
    claim = _recency_claim(id, value, null, 2 * n_pos, source, extra)
    if interval is not None and len(interval):
        r = interval[interval["features"] == "recency"]
        if len(r) and _finite(r["lo"].iloc[0]) and _finite(r["hi"].iloc[0]):
            claim = Claim.from_dict(dict(claim.to_dict(), interval=(float(r["lo"].iloc[0]),
                                                                    float(r["hi"].iloc[0]))))
    return claim


def level_claim_id(level: int) -> str:
    """The id of :func:`exp2_level_claim` at ``level`` copies."""
    return f"e2_recency_copies_{int(level)}"


def exp2_level_claims(levels: Sequence[int], tables: dict, paper: dict, dataset: pd.DataFrame,
                      nulls: Mapping[int, Mapping[str, Estimate] | None],
                      intervals: Mapping[str, Mapping[str, pd.DataFrame]] | None = None,
                      pool: str = "quarters") -> list[Claim]:
    """:func:`exp2_level_claim` at every inserted level of ``levels`` but the source's highest
    (:data:`PAPER_TOP_LEVEL`, whose claim is :func:`exp2_top_level_claim`)."""
    cols = (intervals or {}).get(pool, {})
    return [exp2_level_claim(int(c), tables, paper, dataset, nulls.get(int(c)), cols.get(f"copies_{int(c)}"),
                             pool)
            for c in levels if int(c) >= 1 and int(c) != PAPER_TOP_LEVEL]


def exp2_claims(tables: dict, paper: dict, dataset: pd.DataFrame, labels: pd.DataFrame,
                quarters: Sequence[str], run_counts: pd.DataFrame, quarters_source: pd.Series,
                late_source: pd.Series, null: Mapping[str, Estimate] | None,
                window: Mapping[str, Estimate] | None) -> list[Claim]:
    """The claims of Experiment 2: recency and log_freq on the quarters pool (``null``: its
    :func:`~analysis.predicting.nulls.exp2_null`), the order by window (``window``: its
    :func:`~analysis.predicting.nulls.window_null`), and the late pool."""
    return [exp2_recency_claim(tables, paper, dataset, null), exp2_freq_claim(tables, paper, dataset),
            exp2_order_claim(labels, quarters, quarters_source, window),
            exp2_late_claim(run_counts, late_source)]

"""The predicting chapter's English: each claim's statement and rendering, and the chapter's other sentences.

:data:`STATEMENTS` holds each claim's statement (the source's finding in a
line); :func:`render` words a :class:`~analysis.core.claims.Claim` of
:mod:`analysis.predicting.claims` as Markdown, reading its status, numbers and
``extra`` (it decides nothing), through the sentence of its id in
:mod:`analysis.predicting.text_claims`. The other functions are captions of the data:
the injection design, the setup, the notes under the AUC tables, the source's
headline and the scale of the lab beside the source's. The words they share
(lists, copy counts) are :mod:`analysis.predicting.text_words`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.core.claims import INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTABLE, REPRODUCED, Claim
from analysis.predicting.checks import PredictingError, require
from analysis.predicting.method_features import window_end_baseline
from analysis.predicting.params import (
    FEATURE_SETS,
    PAPER_COPY_LEVELS,
    PAPER_K,
    PAPER_STEP_BIN,
    PAPER_STEPS,
    PAPER_TOP_LEVEL,
    THREE,
)
from analysis.predicting.run import counterfactual
from analysis.predicting.tables import auc_notes, computed_columns
from analysis.predicting.text_claims import _RENDER, _e2_level, _status
from analysis.predicting.text_words import _copies_text, _levels_text, and_list

#: each claim's statement: what the source found (or, for partial_learning, what the chapter checks)
STATEMENTS = {
    "controls_extracted": "The source's target models extract some never-inserted controls: text a model "
                          "reproduces without having seen it.",
    "partial_learning": "Inserted sequences that no model extracts still have more of their suffix "
                        "predicted than never-inserted controls (this chapter's own check; the source does "
                        "not report it).",
    "e1_three": "With nothing controlled, the three features rank a target's memorized sequences far above "
                "chance (Experiment 1, random split).",
    "e1_freq_beats_hardness": "log_freq alone ranks memorized sequences better than hardness alone for most "
                              "targets (Experiment 1, random split).",
    "e1_seed_spread": "The 3-feature AUC moves little between sampling seeds (Experiment 1, random split; "
                      "median sd over targets).",
    "e1_inserted_three": "With the never-inserted controls removed before balancing, the three features "
                         "still rank a target's memorized sequences above chance (Experiment 1, inserted "
                         "sequences only, random split; the source keeps these tables in its "
                         "out/fit_balanced_report.txt, and the direction tested is that of its table with "
                         "every sequence).",
    "e2_recency_256": "At 256 copies, the source's highest level, recency alone tells which run of a pair "
                      "extracts the sequence (Experiment 2, quarters pool).",
    "e2_recency": "With the copies fixed, recency alone tells which run of a pair extracts the sequence "
                  "(Experiment 2, quarters pool, pooled over copy levels).",
    "e2_log_freq_constant": "log_freq alone cannot rank the two runs of a pair, which see the same copies: "
                            "AUC 0.500 (Experiment 2, quarters pool).",
    "e2_window_order": "The later a run's insertion window, the more sequences it extracts (Experiment 2, "
                       "quarters pool).",
    "e2_late_pool": "Of two runs whose windows both end with training, the one with its copies in the last "
                    "quarter is the positive of more pairs than the one with them spread over the second "
                    "half (Experiment 2, late pool).",
    "e3_three_full": "Once frequency and recency are fixed, the three features with the whole-sequence "
                     "hardness still rank memorized sequences above chance (Experiment 3, cells pooled, "
                     "group split).",
    "e3_three_suffix": "Once frequency and recency are fixed, the three features with the suffix hardness "
                       "still rank memorized sequences above chance (Experiment 3, cells pooled, group "
                       "split).",
    "e3_cross_model": "Once frequency and recency are fixed, the cross-model baseline still ranks memorized "
                      "sequences above chance (Experiment 3, cells pooled, group split).",
    "e3_suffix_gap": "A hardness measured on the suffix alone ranks better than the whole-sequence one "
                     "(Experiment 3, the three features, cells pooled, group split).",
    "e3_task_three_full": "Once frequency and recency are fixed, the three features with the whole-sequence "
                          "hardness still rank memorized sequences above chance (Experiment 3, cells pooled, "
                          "leave-one-task-out).",
    "e3_task_three_suffix": "Once frequency and recency are fixed, the three features with the suffix "
                            "hardness still rank memorized sequences above chance (Experiment 3, cells "
                            "pooled, leave-one-task-out).",
    "e1_hardness_adds_little": "Hardness adds little to log_freq and recency: the three features rank "
                               "memorized sequences less than 0.05 AUC better than log_freq + recency "
                               "(Experiment 1, random split).",
    "e1_three_vs_cross_model": "The three features rank a target's memorized sequences on the same side of "
                               "the cross-model baseline as in the source (Experiment 1, random split).",
}
#: the statement of the per-level claims ``e2_recency_copies_<level>`` (:func:`statement`)
LEVEL_STATEMENT = ("With the copies fixed at {level}, recency alone tells which run of a pair extracts the "
                   "sequence (Experiment 2, quarters pool).")
_LEVEL_PREFIX = "e2_recency_copies_"


def statement(id: str) -> str:
    """A claim's statement: :data:`STATEMENTS`, or :data:`LEVEL_STATEMENT` for a per-level claim."""
    if id in STATEMENTS:
        return STATEMENTS[id]
    if id.startswith(_LEVEL_PREFIX) and id.removeprefix(_LEVEL_PREFIX).isdigit():
        return LEVEL_STATEMENT.format(level=_copies_text(int(id.removeprefix(_LEVEL_PREFIX))))
    raise PredictingError(f"no statement for the claim id {id!r}")


def injection_design(table: pd.DataFrame) -> str:
    """The injection set in words: tasks and sequences per task at each copy level.

    ``table`` has one row per sequence with ``task`` and ``copies`` (the corpus's
    injection table). Levels with the same number of sequences per task are
    named together, e.g. ``"6 tasks; per task, 4 sequences at 0, 1, 4, 16 and
    64 copies and 1 at 256 copies"``; a level whose tasks differ gives the range.
    """
    require(table, ("task", "copies"), "the injection table")
    if table.empty:
        raise PredictingError("the injection table is empty")
    tasks = pd.unique(table["task"])
    per = table.groupby(["copies", "task"]).size().unstack("task").reindex(columns=tasks).fillna(0)
    groups: dict[str, list[int]] = {}
    for level, row in per.iterrows():
        lo, hi = int(row.min()), int(row.max())
        groups.setdefault(str(lo) if lo == hi else f"{lo}–{hi}", []).append(int(level))
    parts = [
        f"{n} {'sequence' if n == '1' else 'sequences'} at {and_list(levels)} copies"
        if i == 0
        else f"{n} at {and_list(levels)} copies"
        for i, (n, levels) in enumerate(groups.items())
    ]
    return f"{len(tasks)} tasks; per task, {and_list(parts)}"


def range_runs_sentence(run_table: pd.DataFrame, runs: Sequence[str]) -> str:
    """What the injection-range runs train, beside the perturbed runs: model, budget and counterfactual.

    The model is "the large" / "the small" model when its width is the
    perturbed runs' largest / smallest; the budget is given in tokens and as a
    multiple of the perturbed runs' largest budget.
    """
    require(run_table, ("run", "family", "d_model", "tokens"), "the run table")
    t = run_table.set_index("run")
    missing = [r for r in runs if r not in t.index]
    if missing or not len(runs):
        raise PredictingError(f"range_runs_sentence needs lab runs, got {list(runs)}")
    first = t.loc[runs[0]]
    pert = t[t["family"] == "perturbed"]
    if pert.empty:
        raise PredictingError("the run table has no perturbed runs to compare with")
    width = int(first["d_model"])
    size = (
        "the large"
        if width == pert["d_model"].max() and width != pert["d_model"].min()
        else "the small"
        if width == pert["d_model"].min() and width != pert["d_model"].max()
        else f"a {width}-wide"
    )
    ratio = int(first["tokens"]) / int(pert["tokens"].max())
    budget = (
        "the perturbed runs' largest budget"
        if ratio == 1
        else f"{ratio:g} times the perturbed runs' largest budget"
    )
    return (
        f"The lab's injection-range runs train {size} model on {int(first['tokens']):,} tokens "
        f"({budget}), with `{counterfactual(run_table, runs[0])}` as their counterfactual."
    )


def run_positives(scores: pd.DataFrame, runs: Sequence[str]) -> str:
    """Extracted sequences (label 1) under each run, as words: ``"0, 2 and 1"``."""
    require(scores, ("run", "extract"), "the scores")
    counts = scores.groupby("run")["extract"].sum()
    return and_list(int(counts.get(r, 0)) for r in runs)


def lowest_extracted_level(long: pd.DataFrame) -> str:
    """The lowest copy level at which any target extracts a sequence (``"16 copies"``), or says none is."""
    require(long, ("copies", "extract"), "the long frame")
    levels = sorted(long.loc[long["extract"] == 1, "copies"].unique())
    return _copies_text(levels[0]) if levels else "none (no sequence is extracted)"


def best_cell(summary: pd.DataFrame) -> str:
    """The (target, copies) cell with the highest share extracted, e.g. ``"pert-l2x at 64 copies (75%)"``."""
    require(summary, ("target", "copies", "extract"), "the summary")
    best = summary.loc[summary["extract"].idxmax()]
    if best["extract"] == 0:
        return "none (no cell extracts anything)"
    return f"{best['target']} at {_copies_text(best['copies'])} ({best['extract']:.0%})"


def bins_text(bins: Mapping[str, int], keys: Iterable[tuple[str, int]]) -> str:
    """Stratum widths of the targets that have cells: ``"2 steps (1b-100b), 1 step (8b-100b)"``, or "—"."""
    with_cells = {t for t, _ in keys}
    parts = [f"{b} step{'' if b == 1 else 's'} ({t})" for t, b in bins.items() if t in with_cells]
    return ", ".join(parts) or "—"


def cells_text(keys: Iterable[tuple[str, int]]) -> str:
    """(target, copies) cells in words: ``"1b-100b at 4 copies, 8b-500b at 1 copy"``, or ``"none"``."""
    return ", ".join(f"{t} at {_copies_text(c)}" for t, c in keys) or "none"


def notes_markdown(notes: Mapping[str, str], prefix: str = "") -> str:
    """The notes as a Markdown list, ``- *prefix name*: not computed: why`` (empty text for none)."""
    return "\n".join(f"- *{prefix}{name}*: not computed: {why}" for name, why in notes.items())


def exp2_notes_markdown(aucs: Mapping[str, Mapping[str, pd.DataFrame]]) -> str:
    """Experiment 2's notes as a Markdown list: per pool, the copy levels without pairs on one line,
    then every other column that could not be computed (empty text for none)."""
    lines = []
    for pool, cols in aucs.items():
        notes = auc_notes(cols)
        no_pairs = [
            n for n, why in notes.items() if n.startswith("copies_") and "0 positives and 0 negatives" in why
        ]
        if no_pairs:
            levels = and_list(n.removeprefix("copies_") for n in no_pairs)
            lines.append(
                f"- *{pool}*: no pairs at {levels} copies (no sequence at that level is positive under one "
                "run of the pool and negative under another)"
            )
        lines += [f"- *{pool}, {n}*: not computed: {why}" for n, why in notes.items() if n not in no_pairs]
    return "\n".join(lines)


def computed_sentence(table: pd.DataFrame | None, n_targets: int) -> str:
    """How many of the targets have AUCs, and that the notes say why the others have none."""
    k = len(computed_columns(table))
    if n_targets and k == n_targets:
        return "The AUC could be computed for every target."
    return (
        f"The AUC could be computed for {k} of {n_targets} targets; the others cannot be split "
        "(their notes above say why)."
    )


def window_gradient(rates: pd.DataFrame, runs: Sequence[str]) -> str:
    """Share extracted per run at each copy level where some run extracts, e.g.
    ``"at 64 copies 0%, 0%, 25%, 75%; at 256 copies ..."``, or ``"nothing at any copy level"``."""
    runs = [r for r in runs if r in rates.index]
    levels = [c for c in rates.columns if c >= 1 and runs and rates.loc[runs, c].max() > 0]
    if not levels:
        return "nothing at any copy level"
    return "; ".join(
        f"at {_copies_text(c)} " + ", ".join(f"{rates.loc[r, c]:.0%}" for r in runs) for c in levels
    )


def pair_levels_sentence(dataset: pd.DataFrame, levels: Sequence[int]) -> str:
    """Which copy levels change label between runs (have pairs in some pool, seed 0) and which do not."""
    with_pairs = set() if dataset.empty else {int(c) for c in dataset["copies"] if c != "all"}
    have = [c for c in levels if c in with_pairs]
    lack = [c for c in levels if c not in with_pairs]
    if not have:
        return "No copy level changes label between runs, so there are no pairs."
    if not lack:
        return "Every copy level changes label between some runs, so every level has pairs."
    return (
        f"Only the {and_list(have)} copy level{'s change' if len(have) > 1 else ' changes'} "
        f"label between runs, so the other levels ({_levels_text(lack)}) have no pairs."
    )


def pool_split_sentence(n_pairs: Mapping[str, int], k: int = PAPER_K) -> str:
    """Whether each pool has the ``k`` pairs that a ``k``-fold split grouped by sequence needs."""
    enough = [p for p, n in n_pairs.items() if n >= k]
    if len(enough) == len(n_pairs):
        return f"Every pool has enough pairs for the grouped {k}-fold split."
    verb = "has" if len(enough) == 1 else "have"
    which = f"only {and_list(enough)} {verb}" if enough else "no pool has"
    return f"Pools with fewer than {k} pairs cannot be split {k} ways by sequence, so {which} lab numbers."


def late_share_sentence(source: pd.Series) -> str:
    """Share of a source pool's positives in the runs whose window ends with training (window end 1.0).

    ``source`` is :func:`paper_pair_positives` (indexed by the lab's run names).
    """
    ends = window_end_baseline([r.removeprefix("range-") for r in source.index])
    last = int(source[ends == 1.0].sum())
    total = int(source.sum())
    runs = and_list(r for r, e in zip(source.index, ends) if e == 1.0)
    return (
        f"In the source's seed-0 pairs, {last:,} of the {total:,} positives ({last / total:.0%}) are in the "
        f"runs whose window ends with training (the lab's {runs})."
    )


def bin_sentence(T: Mapping[str, int]) -> str:
    """The source's stratum width as a share of training, carried over to the lab's targets' steps."""
    src_T = PAPER_STEPS["1b-100b"]
    share = PAPER_STEP_BIN / src_T
    lo, hi = min(T.values()), max(T.values())
    steps = f"{lo:,}" if lo == hi else f"{lo:,} to {hi:,}"
    width = f"{share * lo:.2f}" if lo == hi else f"{share * lo:.2f} to {share * hi:.2f}"
    under = " (under one step)" if share * hi < 1 else ""
    return (
        f"The source bins the last step in windows of {PAPER_STEP_BIN} of its {src_T:,} steps; the lab's "
        f"targets train for {steps} steps, so a bin of the same share would be {width} steps wide{under}."
    )


def source_headline(exp1_random: pd.DataFrame, exp3_group: pd.DataFrame) -> str:
    """The source's two findings in numbers: frequency and recency with nothing controlled
    (Experiment 1, random split), and what is left once both are fixed (Experiment 3, pooled, group split).

    ``exp1_random`` is indexed by ``features``, ``exp3_group`` by (features, hardness).
    """
    fr = exp1_random.loc["log_freq + recency"]
    three = exp1_random.loc[THREE]
    delta = float(three.median() - fr.median())
    sets = exp3_group[exp3_group.index.get_level_values("features").isin(list(FEATURE_SETS))]["pooled"]
    best = float(sets.max())
    sfx = float(exp3_group.loc[(THREE, "suffix"), "pooled"])
    full = float(exp3_group.loc[(THREE, "full sequence"), "pooled"])
    # signed: an AUC under 0.5 is below chance, never "close to" it from the source's side
    closer = ("below chance" if best < 0.5 else "closer to chance than with nothing controlled"
              if best < float(three.median()) else "no closer to chance than with nothing controlled")
    better = "better" if sfx > full else "no better"
    return (
        f"With nothing controlled, log_freq and recency together rank its memorized sequences at AUC "
        f"{fr.min():.3f} to {fr.max():.3f} over its {len(fr)} targets (median {fr.median():.3f}), and adding "
        f"hardness moves the median by {delta:+.3f}. Once both are held fixed, the best feature set reaches "
        f"{best:.3f} on all cells pooled, {closer}, and a hardness "
        f"measured on the suffix alone does {better} than the whole-sequence one ({sfx:.3f} against "
        f"{full:.3f})."
    )


def labels_comparison(long: pd.DataFrame, paper1: pd.DataFrame, paper2: pd.DataFrame) -> str:
    """Extraction in the source and in the lab: controls, the lowest level extracted, positives in all.

    ``paper1`` is the source's ``exp1_dataset``, ``paper2`` its ``exp2_dataset``
    (whose per-level rows give the lowest level with positives).
    """
    require(long, ("copies", "extract"), "the long frame")
    levels = paper2[(paper2["copies"] != "all") & (paper2["n_pos"] > 0)]["copies"].astype(int)
    src = (
        f"The source's targets extract {int(paper1['controls_pos'].sum()):,} never-inserted controls in "
        "their Experiment 1 sets, and its injection-range runs extract sequences down to "
        f"{_copies_text(levels.min())}"
    )
    n_pos = int(long["extract"].sum())
    if n_pos == 0:
        return src + "; the lab's targets extract nothing."
    ctrl = int(long.loc[long["copies"] == 0, "extract"].sum())
    return (
        src + f"; the lab's targets extract {ctrl} controls and nothing below "
        f"{lowest_extracted_level(long)}, {n_pos} (sequence, target) examples in all."
    )


def levels_sentence(levels: Iterable[int]) -> str:
    """The lab's copy levels beside the source's (:data:`PAPER_COPY_LEVELS`)."""
    lab = sorted({int(c) for c in levels})
    src = list(PAPER_COPY_LEVELS)
    if lab == src:
        return f"The lab's copy levels are the source's ({and_list(src)})"
    shared = [c for c in lab if c in src]
    own = [c for c in lab if c not in src]
    if not own:
        return (
            f"The lab's copy levels ({and_list(lab)}) are {len(shared)} of the source's {len(src)} "
            f"({and_list(src)})"
        )
    return (
        f"The lab's copy levels ({and_list(lab)}) include {len(shared)} of the source's {len(src)} "
        f"({and_list(src)}); {and_list(own)} {'is' if len(own) == 1 else 'are'} the lab's own"
    )


def empty_cells_sentence(n_cells: int, empty: Sequence[tuple[str, int]]) -> str:
    """Which of ``n_cells`` cells matching empties (:func:`analysis.predicting.steps.empty_cells`)."""
    if not n_cells:
        return "No cell is left to match."
    if not empty:
        return "Every cell keeps some examples after matching."
    cells = and_list(f"{t} at {_copies_text(c)}" for t, c in empty)
    return (f"Matching leaves nothing of {cells}: no stratum of task and last-step bin holds both classes "
            "there.")


def level_256_sentence(lab_profile: str, plan_levels: Sequence[int], profiles: Mapping[str, Sequence[int]],
                       rates: pd.DataFrame, paper2: pd.DataFrame, paper3: pd.DataFrame) -> str:
    """Whether the lab has the source's 256-copy level, read from its plan.

    ``plan_levels`` are the duplicate levels of the lab profile ``lab_profile`` and ``profiles``
    those of every lab profile; ``rates`` is :func:`extraction_rates` (targets by copy level);
    ``paper2`` and ``paper3`` are the source's Experiment 2 and 3 dataset tables, which say where
    the source has results at 256 copies. With the level, the sentence gives each target's share
    extracted there; without it, the lab's levels and the lab profiles that have it.
    """
    top = PAPER_TOP_LEVEL
    levels = sorted(int(c) for c in plan_levels)
    head = f"The lab's plan (profile `{lab_profile}`) injects sequences at {and_list(levels)} copies"
    if top in levels and top in rates.columns:
        shares = and_list(f"{t} {rates.loc[t, top]:.0%}" for t in rates.index)
        return f"{head}, {top} among them; at {top} copies the targets extract {shares}."
    pools = [p for p in pd.unique(paper2["pool"])
             if str(top) in set(paper2.loc[paper2["pool"] == p, "copies"].astype(str))]
    cells = paper3.loc[paper3["copies"] == top, "cell"].tolist()
    where = and_list([f"Experiment 2's {top}-copy column ({and_list(pools)} pools)"] * bool(pools)
                     + [f"Experiment 3's {and_list(cells)} cell at {top} copies"] * bool(cells))
    have = [p for p, lv in profiles.items() if top in lv]
    other = (f" Of the lab's profiles, {and_list(f'`{p}`' for p in have)} "
             f"{'injects' if len(have) == 1 else 'inject'} at {top} copies." if have else "")
    return (f"{head}: its highest is {levels[-1]}, so it has no {top}-copy level, the source's highest, and "
            f"the source's results there ({where or 'none'}) have no counterpart in this run.{other}")


# -- claims ---------------------------------------------------------------------------------------


def level_claims_text(claims: Iterable[Claim]) -> str:
    """The per-level claims of Experiment 2, rendered one after another (empty text for none)."""
    return " ".join(render(c) for c in claims if c.id.startswith(_LEVEL_PREFIX))


_OUTCOME = {
    NOT_REPRODUCED: "The reproduction of Experiment 3 failed on this lab",
    REPRODUCED: "This lab reproduces the source's Experiment 3 finding",
    INCONCLUSIVE: "This lab neither shows the source's Experiment 3 finding nor rules it out",
    NOT_TESTABLE: "This lab cannot test the source's Experiment 3 finding",
}


def _finding_part(c: Claim) -> str:
    if c.id == "e3_suffix_gap":
        return (f"the suffix hardness's lead over the whole-sequence one is {c.value:+.3f} against the "
                f"source's {c.extra['src_gap']:+.3f} ({c.status})")
    return f"the suffix fit's AUC is {c.value:.3f} against the source's {c.source_value} ({c.status})"


def exp3_outcome_sentence(outcome: str, claims: Iterable[Claim]) -> str:
    """The source's Experiment 3 finding on this run, said plainly (``outcome`` from
    :func:`analysis.predicting.claims_exp3.exp3_outcome`), with the number and status of each claim
    that carries it (``e3_three_suffix``, ``e3_suffix_gap``)."""
    parts = [_finding_part(c) for c in claims
             if c.id in ("e3_three_suffix", "e3_suffix_gap") and c.value is not None]
    return f"**{_OUTCOME[outcome]}**" + (f": {'; '.join(parts)}." if parts else ".")


def render(c: Claim) -> str:
    """One claim of the chapter as a Markdown sentence: this run's numbers beside the source's,
    and the status with its reason."""
    if c.id in _RENDER and (c.value is not None or c.status == NOT_TESTABLE):
        return _RENDER[c.id](c)
    if c.id.startswith(_LEVEL_PREFIX) and (c.value is not None or c.status == NOT_TESTABLE):
        return _e2_level(c)
    value = "no value" if c.value is None else f"{c.value:.3g}"
    return f"{c.statement} Source: {c.source_value or '—'}; this run: {value}. {_status(c)}"




def evidence_text(claims: Iterable[Claim]) -> str:
    """Experiment 3's AUCs against their permutation null: what chance is on the matched set,
    then each claim's rendering."""
    claims = list(claims)
    tested = [c for c in claims if c.status != NOT_TESTABLE and c.null_value is not None]
    if not tested:
        return "The matched set does not hold both classes, so these AUCs are not computed."
    c = tested[0]
    n_cells = c.extra.get("n_cells")
    cells = f" of {n_cells} cells" if n_cells else ""
    ctrl = (f"; log_freq alone, constant within every cell, scores {c.control_value:.3f}"
            if c.control_value is not None else "")
    band = (f"The matched set holds {c.n} examples{cells} from {c.n_units} sequences. Chance on it "
            f"is not 0.5: with the labels permuted within the matching strata and the same matching, "
            f"group split and pooling redone 200 times, the whole-sequence fit's AUC has median "
            f"{c.null_value:.3f} (95% of draws within {c.extra['null_lo']:.3f} to "
            f"{c.extra['null_hi']:.3f}){ctrl}. Each AUC is held against its own permutation null.")
    return " ".join([band, *(render(c) for c in claims)])


def sweep_sentence(sweep: pd.DataFrame, frac: float, min_examples: int) -> str:
    """Which width of Experiment 3's strata sweep (:func:`analysis.predicting.tables.strata_sweep`)
    this run matches at (``frac`` of training), and the narrowest width of the sweep that keeps
    every cell and at least ``min_examples`` examples: the closest to the source's width the
    lab's steps allow."""
    shares = sweep["share of T"].to_numpy(float)
    full = (sweep["cells kept"] == sweep["cells"]) & (sweep["cells"] > 0)
    ok = sweep[full & (sweep["examples"] >= min_examples) & np.isfinite(shares)]
    if ok.empty:
        return (f"No width of the sweep keeps every cell and at least {min_examples} examples; this run "
                f"matches at {frac:.4g} of training.")
    narrowest = ok.loc[ok["share of T"].idxmin()]
    here = sweep[np.isclose(shares, frac)]
    used = (f"this run matches at {here.iloc[0]['width']} ({int(here.iloc[0]['examples'])} examples, "
            f"residual recency AUC {here.iloc[0]['residual recency AUC']:.3f})" if len(here) else
            f"this run matches at {frac:.4g} of training, a width outside the sweep")
    return (f"The narrowest width that keeps every cell and at least {min_examples} examples is "
            f"{narrowest['width']} ({int(narrowest['examples'])} examples, residual recency AUC "
            f"{narrowest['residual recency AUC']:.3f}), the closest to the source's that the lab's steps "
            f"allow; {used}.")

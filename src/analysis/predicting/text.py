"""The predicting chapter's English: the rendering of each claim, and the chapter's other sentences.

:data:`STATEMENTS` holds each claim's statement (the source's finding in a
line); :func:`render` words a :class:`~analysis.core.claims.Claim` of
:mod:`analysis.predicting.claims` as Markdown, reading its status, numbers and
``extra`` (it decides nothing). The other functions are captions of the data:
the injection design, the setup, the notes under the AUC tables, the source's
headline and the scale of the lab beside the source's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.core.claim_text import verdict
from analysis.core.claims import HOLDS, INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTABLE, REPRODUCED, Claim
from analysis.predicting.checks import PredictingError, require
from analysis.predicting.method_features import window_end_baseline
from analysis.predicting.params import (
    FEATURE_SETS,
    PAPER_COPY_LEVELS,
    PAPER_INSERTED_ONLY,
    PAPER_K,
    PAPER_STEP_BIN,
    PAPER_STEPS,
    PAPER_TOP_LEVEL,
    THREE,
)
from analysis.predicting.run import counterfactual
from analysis.predicting.tables import auc_notes, computed_columns

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


def and_list(items) -> str:
    """Items in words: ``a``, ``a and b``, ``a, b and c`` (empty text for none)."""
    items = [str(i) for i in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1] if items else ""


def _copies_text(c) -> str:
    return f"{int(c)} {'copy' if int(c) == 1 else 'copies'}"


def _levels_text(levels) -> str:
    """``"1 copy"``, ``"4 and 16 copies"``."""
    levels = [int(c) for c in levels]
    return _copies_text(levels[0]) if len(levels) == 1 else f"{and_list(levels)} copies"


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


# -- claims ---------------------------------------------------------------------------------------


def _status(c: Claim) -> str:
    """The claim's status, marks and reason, in the one voice of :func:`analysis.core.claim_text.verdict`."""
    return verdict(c)


def _side(c: Claim) -> str:
    """Where an AUC lies against its null: its permutation null's median where computed (which a
    balanced, split fit puts below 0.5), else 0.5. A value is "above" or "below" only when the
    claim's test says so; otherwise it is "not told from" the null."""
    null = c.null_value if c.null_value is not None else 0.5
    where = "chance" if c.null_kind != "permutation" else f"its permutation null ({null:.3f})"
    significant = c.p is not None and c.p < 0.05
    if not significant or c.value == null:
        return f"not told from {where}"
    return f"above {where}" if c.value > null else f"below {where}"


def _controls(c: Claim) -> str:
    e = c.extra
    src = (f"the source's targets extract controls in {e['src_sets']} of its {e['src_n_sets']} Experiment 1 "
           f"sets ({e['src_lo']:,} to {e['src_hi']:,} each)")
    if c.status == NOT_TESTABLE:
        return f"The lab's targets have no never-inserted controls, whereas {src}."
    if not e["extracted"]:
        bound = (f" ({c.interval[1]:.0%} at most of the {c.n_units} control sequences, at 95%; the source's "
                 f"targets extract about {e['src_rate']:.1%} of theirs)"
                 if c.interval and e.get("src_rate") is not None else "")
        return f"No lab model reproduces a sequence it never saw{bound}, whereas {src}. {_status(c)}"
    return (f"{e['extracted']} never-inserted controls are extracted: text the models could predict without "
            f"seeing it, as {src}. {_status(c)}")


def _partial(c: Claim) -> str:
    e = c.extra
    if "acc" not in e:
        return ("Every inserted (target, copies) cell extracts some sequence, so partial learning below the "
                "label's all-tokens threshold cannot be seen apart from it.")
    head = (f"In the {e['n_cells']} inserted (target, copies) cells where nothing is extracted, the mean "
            f"suffix accuracy is {e['acc']:.3f}")
    if "ctrl_acc" not in e:
        return head + "; with no never-inserted controls, there is nothing to compare it with."
    head += f", against {e['ctrl_acc']:.3f} for the never-inserted controls (one-sided Mann–Whitney test)"
    if c.status in (REPRODUCED, HOLDS):
        return (head + ": below the label's all-tokens threshold, the models have learned part of each "
                f"suffix. {_status(c)}")
    return head + f": no sign that the models learned part of the suffixes they do not extract. {_status(c)}"


def _e1_three(c: Claim) -> str:
    target = c.extra.get("target", "the main target")
    if c.status == NOT_TESTABLE:
        return f"The lab has no 3-feature AUC for its stand-in for {target} (source {c.source_value})."
    return (f"For the lab's stand-in for {target}, the three features reach {c.value:.3f} on the random "
            f"split, {_side(c)}, where the source finds {c.source_value}. {_status(c)}")


def _e1_inserted(c: Claim) -> str:
    target = c.extra.get("target", "the main target")
    src = (f"The source prints no numbers for its inserted-only tables (they are in its "
           f"{PAPER_INSERTED_ONLY})")
    if "src_all" in c.extra:
        src += f"; with every sequence it finds {c.extra['src_all']:.3f} for {target}"
    if c.status == NOT_TESTABLE:
        return f"The lab has no inserted-only 3-feature AUC for its stand-in for {target}. {src}."
    return (f"With the never-inserted controls removed before balancing, the three features rank the lab's "
            f"stand-in for {target} at {c.value:.3f} on the random split, {_side(c)}. {src}. "
            f"{_status(c)}")


def _e2_top(c: Claim) -> str:
    e = c.extra
    if c.status == NOT_TESTABLE:
        return (f"Recency alone ranks the source's {e['pool']} pairs at {e['level']} copies at "
                f"{c.source_value}; this run cannot test that: {c.reason}.")
    return (f"At {e['level']} copies, recency alone ranks the lab's {e['pool']} pairs at {c.value:.3f}, "
            f"{_side(c)}, where the source's reach {c.source_value}. {_status(c)}")


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


def _e1_freq(c: Claim) -> str:
    e = c.extra
    src = (f"{e['src_wins']} of {e['src_n']} targets, with hardness alone at {e['src_hard_lo']:.3f} to "
           f"{e['src_hard_hi']:.3f}")
    if c.status == NOT_TESTABLE:
        return ("No target has enough positives for this experiment on this lab, so it cannot compare "
                "frequency with hardness; in the source, log_freq alone ranks better than hardness alone for "
                f"{src}.")
    return (f"log_freq alone ranks better than hardness alone for {e['wins']} of the {c.n} targets with "
            f"numbers (a sign test), where the source finds it for {src}. {_status(c)}")


def _e1_spread(c: Claim) -> str:
    e = c.extra
    if c.status == NOT_TESTABLE:
        head = ("The lab has no target with both classes" if e.get("lab_size") is None
                else "The lab's AUCs rest on one seed")
        return f"{head}, so no sd over seeds to compare with the source's median {e['src_sd']:.3f}."
    return (f"The lab's sets hold a median of {e['lab_size']:,.0f} examples per target, the source's "
            f"{e['src_size']:,.0f}, so the lab's 3-feature AUC moves between seeds {e['relation']} the "
            f"source's (median sd {c.value:.3f} against {e['src_sd']:.3f}; the sd row). {_status(c)}")


def _e2_recency(c: Claim) -> str:
    if c.status == NOT_TESTABLE:
        return f"The lab has no quarters pairs for recency to rank (source {c.source_value})."
    return (f"Recency alone ranks the lab's quarters pairs at {c.value:.3f}, {_side(c)}, where the "
            f"source's reach {c.source_value}. {_status(c)}")


def _e2_freq(c: Claim) -> str:
    if c.status == NOT_TESTABLE:
        return "The lab has no quarters pairs for log_freq to rank."
    return (f"log_freq alone ranks them at {c.value:.3f} (source {c.source_value}): both runs of a pair see "
            f"the same copies, so it cannot tell them apart. {_status(c)}")


def _e2_order(c: Claim) -> str:
    e = c.extra
    src = (f"the source, whose first quarter's run is the positive of {e['src_counts'][0]:,} of its seed-0 "
           f"pairs and the last quarter's of {e['src_counts'][-1]:,}")
    counts = and_list(e["counts"])
    if c.value is None:
        return (f"The order by window cannot be seen ({counts} sequences extracted), against {src}. "
                f"{_status(c)}")
    lead = ("The later the window, the more is extracted" if e["rises"]
            else "The extraction does not grow steadily with the window's end")
    return f"{lead} ({counts} sequences; AUC {c.value:.3f} for the window's end), against {src}. {_status(c)}"


_LEANS = {
    "q4": "the run whose copies come in the last quarter wins more pairs, as recency predicts",
    "wide": ("copies spread over the second half of training are extracted more often than the same copies "
             "crowded into its last quarter"),
    "even": "the split is too close to call either way",
}


def _e2_late(c: Claim) -> str:
    e = c.extra
    src = (f"the source's two runs are the positive of {e['src_q4']:,} and {e['src_wide']:,} of its "
           f"{e['src_q4'] + e['src_wide']:,} pairs (binomial p = {e['src_p']:.2g})")
    if c.status == NOT_TESTABLE:
        return f"The lab has no late pairs to compare, where {src}."
    return (f"Of the lab's {c.n} late pairs, {e['q4']} is the positive of {e['lab_q4']} and {e['wide']} of "
            f"{e['lab_wide']}, where {src}. In the lab, {_LEANS[e['lean']]}. {_status(c)}")


_EXP3_LABELS = {"e3_three_full": "The whole-sequence fit", "e3_three_suffix": "The suffix fit",
                "e3_cross_model": "The cross-model baseline"}


def _e3_auc(c: Claim) -> str:
    label = _EXP3_LABELS[c.id]
    if c.status == NOT_TESTABLE:
        return f"{label} is not computed: {c.reason} (source {c.source_value})."
    return (f"{label} ranks the pooled matched set at {c.value:.3f}, {_side(c)}, where the source's "
            f"reaches {c.source_value}. {_status(c)}")


def _e3_gap(c: Claim) -> str:
    e = c.extra
    ahead = "ahead of" if e["src_gap"] > 0 else "behind"
    src = (f"Once frequency and recency are fixed, the source's feature sets reach AUC {e['src_lo']:.2f} to "
           f"{e['src_hi']:.2f}, with the suffix hardness {ahead} the whole-sequence one by "
           f"{e['src_gap']:+.3f} ({e['src_sfx']:.3f} against {e['src_full']:.3f} pooled).")
    if c.status == NOT_TESTABLE:
        return src + " The lab's matched set does not hold both classes, so it cannot test this."
    lo, hi = e["delong_lo"], e["delong_hi"]
    where = {"above": "above that interval", "below": "below that interval", "inside": "inside that interval"}
    return (f"{src} The lab's gap is {c.value:+.3f} ({e['sfx']:.3f} against {e['full']:.3f}, mean over "
            f"{e['n_seeds']} seeds of {c.n} examples from {c.n_units} sequences), against a permutation "
            f"null of {c.null_value:+.3f} (p = {c.p:.2g}). DeLong's paired 95% interval, {lo:+.3f} to "
            f"{hi:+.3f}, takes the rows as independent though a sequence is a row of several cells, so the "
            f"source's gap, {where[e['src_side']]}, is not held against it. {_status(c)}")


def _e3_task(c: Claim) -> str:
    label = _EXP3_LABELS[c.id.replace("_task", "")]
    label = label[0].lower() + label[1:]
    if c.status == NOT_TESTABLE:
        return f"Leaving one task out, {label} is not computed: {c.reason} (source {c.source_value})."
    side = ("not told from 0.5" if c.p is None or c.p >= 0.05 else
            "above 0.5" if c.value > 0.5 else "below 0.5")
    ctrl = (f"; log_freq, constant within every cell, scores {c.control_value:.3f}"
            if c.control_value is not None else "")
    return (f"Leaving one task out, where chance is exactly 0.5{ctrl}, {label} ranks "
            f"the pooled matched set at {c.value:.3f}, {side} (permutation p = {c.p:.2g}), where the "
            f"source's reaches {c.source_value}. {_status(c)}")


def _e1_gap(c: Claim, what: str) -> str:
    e = c.extra
    if c.status == NOT_TESTABLE:
        return (f"The lab has no AUCs for its stand-in for {e['target']} to compare {what} "
                f"(source {c.source_value}).")
    ci = f" (95% interval {c.interval[0]:+.3f} to {c.interval[1]:+.3f} over {c.n_units} sequences)" \
        if c.interval else ""
    return (f"For the lab's stand-in for {e['target']}, the three features minus {what} is "
            f"{c.value:+.3f}{ci}, where the source's is {c.source_value}. {_status(c)}")


def _e1_hardness(c: Claim) -> str:
    return _e1_gap(c, "log_freq + recency")


def _e1_cross(c: Claim) -> str:
    return _e1_gap(c, "the cross-model baseline")


def _e2_level(c: Claim) -> str:
    e = c.extra
    if c.status == NOT_TESTABLE:
        return f"At {_copies_text(e['level'])} the lab has no {e['pool']} pairs to rank: {c.reason}."
    ci = f" (95% interval {c.interval[0]:.3f} to {c.interval[1]:.3f})" if c.interval else ""
    return (f"At {_copies_text(e['level'])}, recency alone ranks the lab's {e['n_pos']} {e['pool']} pairs at "
            f"{c.value:.3f}{ci}, {_side(c)}, where the source's reach {c.source_value}. {_status(c)}")


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


_RENDER = {"controls_extracted": _controls, "partial_learning": _partial, "e1_three": _e1_three,
           "e1_inserted_three": _e1_inserted, "e2_recency_256": _e2_top,
           "e1_freq_beats_hardness": _e1_freq, "e1_seed_spread": _e1_spread, "e2_recency": _e2_recency,
           "e2_log_freq_constant": _e2_freq, "e2_window_order": _e2_order, "e2_late_pool": _e2_late,
           "e3_three_full": _e3_auc, "e3_three_suffix": _e3_auc, "e3_cross_model": _e3_auc,
           "e3_suffix_gap": _e3_gap, "e3_task_three_full": _e3_task, "e3_task_three_suffix": _e3_task,
           "e1_hardness_adds_little": _e1_hardness, "e1_three_vs_cross_model": _e1_cross}


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
    full = sweep["cells kept"].map(lambda s: s.split(" of ")[0] == s.split(" of ")[1] and s != "0 of 0")
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

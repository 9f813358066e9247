"""What each section of the predicting chapter glues (``notebooks/predicting.md``): one
function per section, named after it, returning ``{"text": {name: str}, "md": {name: str}}``
for ``report.glue_page``. Every number the page states is formatted here; the sentences
come from :mod:`analysis.predicting.text`, and nothing here decides a claim.

Beside them, the layout of the chapter's tables that take more than a format: a caption,
the index kept, a note in place of an empty table (:func:`styled`), and each experiment's
tables of AUCs with their intervals and notes (:func:`exp1_auc_tables`,
:func:`exp2_auc_tables`, :func:`exp3_auc_tables`), and the panels of its figure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import pandas as pd

from analysis.core.claim_text import counts_sentence
from analysis.core.claims import Claim
from analysis.core.tables import NUMERIC_CELLS, Note, styled
from analysis.predicting.claims import MIN_EXAMPLES
from analysis.predicting.claims_exp3 import exp3_outcome
from analysis.predicting.intervals import interval_table
from analysis.predicting.nulls import N_PERM
from analysis.predicting.params import (
    EXP2_ONLY,
    FEATURE_SETS,
    PAPER_CELL_RANGE,
    PAPER_EXCLUDED_POSITIVES,
    PAPER_K,
    PAPER_N_SEQUENCES,
    PAPER_N_TASKS,
    PAPER_TEST_SIZE,
    THREE,
    paper_pair_positives,
)
from analysis.predicting.run import sequence_lengths
from analysis.predicting.steps import (
    cell_keys,
    empty_cells,
    inserted_levels,
    largest_target,
    range_runs,
    stack_frames,
)
from analysis.predicting.tables import (
    auc_cell,
    auc_notes,
    auc_panels,
    exp2_level_count,
    flat_index,
    pair_counts,
    wide_auc,
    window_share,
)
from analysis.predicting.text import (
    and_list,
    best_cell,
    bin_sentence,
    bins_text,
    cells_text,
    computed_sentence,
    empty_cells_sentence,
    evidence_text,
    exp2_notes_markdown,
    exp3_outcome_sentence,
    injection_design,
    labels_comparison,
    late_share_sentence,
    level_256_sentence,
    level_claims_text,
    levels_sentence,
    lowest_extracted_level,
    notes_markdown,
    pair_levels_sentence,
    pool_split_sentence,
    range_runs_sentence,
    render,
    run_positives,
    source_headline,
    sweep_sentence,
    window_gradient,
)

if TYPE_CHECKING:  # a Styler needs jinja2, which only the book installs
    from pandas.io.formats.style import Styler

#: Experiment 1's splits, as its tables are captioned
SPLIT_NAMES = {"random": "random split", "task": "leave-one-task-out"}
#: the caption of an interval table after its table's
INTERVALS = "AUC [95% interval, bootstrap over sequences]"
#: the formats of Experiment 3's table of strata
STRATA_FORMATS = {"steps T": "{:,.0f}", "bin (steps)": "{:,.0f}", "bin (share of T)": "{:.3f}",
                  "source's bin (lab steps)": "{:,.0f}", "residual recency AUC": "{:.3f}", "copies": "{:.0f}"}


# -- the sections' glue -----------------------------------------------------------------------------


def overview(paper1: Mapping[str, pd.DataFrame], paper3: Mapping[str, pd.DataFrame]) -> dict:
    """Markdown ``source_headline``."""
    return {"md": {"source_headline": source_headline(paper1["random"], paper3["group"])}}


def method() -> dict:
    """``n_sets``, ``k_folds``, ``n_perm``, ``split_share``, ``src_cell_range`` and ``src_excluded``."""
    return {"text": {"n_sets": str(len(FEATURE_SETS)), "k_folds": str(PAPER_K), "n_perm": str(N_PERM),
                     "split_share": f"{1 - PAPER_TEST_SIZE:.0%}/{PAPER_TEST_SIZE:.0%}",
                     "src_cell_range": "{:.0%}–{:.0%}".format(*PAPER_CELL_RANGE),
                     "src_excluded": and_list(PAPER_EXCLUDED_POSITIVES.values())}}


def setup(params: Mapping, run_table: pd.DataFrame, sequences: pd.DataFrame, scores: pd.DataFrame,
          score_seconds: float, injection_table: pd.DataFrame) -> dict:
    """``cell_range``, ``n_sequences``, ``n_runs``, ``n_scored``, ``score_seconds``, ``score_rate``,
    ``tok_median``, ``tok_min``, ``tok_max``, ``n_equal``, ``design``, ``lab_excluded``; Markdown
    ``range_runs``."""
    lengths = sequence_lengths(sequences)
    n_scored = len(scores)
    return {"text": {"cell_range": f"{params['cell_lo']:.0%}–{params['cell_hi']:.0%}",
                     "n_sequences": f"{len(sequences):,}", "n_runs": str(len(run_table)),
                     "n_scored": f"{n_scored:,}", "score_seconds": f"{score_seconds:.1f}",
                     "score_rate": f"{n_scored / max(score_seconds, 1e-9):,.0f}",
                     "tok_median": f"{lengths['n_tokens'].median():.0f}",
                     "tok_min": str(int(lengths["n_tokens"].min())),
                     "tok_max": str(int(lengths["n_tokens"].max())),
                     "n_equal": f"{int((lengths['P'] == lengths['L']).sum())} of {len(lengths)}",
                     "design": injection_design(injection_table),
                     "lab_excluded": run_positives(scores, EXP2_ONLY)},
            "md": {"range_runs": range_runs_sentence(run_table, range_runs(params["pools"]))}}


def labels(frames: Mapping[str, pd.DataFrame], long: pd.DataFrame, summary: pd.DataFrame,
           claims: Sequence[Claim], runs: pd.DataFrame) -> dict:
    """``positives_largest``, ``largest_target``, ``ctrl_pos``, ``n_pos_total``, ``best_cell``,
    ``lowest_level``; Markdown ``ctrl_sentence`` and ``suffix_sentence``."""
    by_run = runs.set_index("run")
    largest = largest_target(frames, by_run["params"], by_run["tokens"])
    return {"text": {"positives_largest": str(int(frames[largest]["extract"].sum())),
                     "largest_target": largest,
                     "ctrl_pos": str(int(long.loc[long["copies"] == 0, "extract"].sum())),
                     "n_pos_total": str(int(long["extract"].sum())), "best_cell": best_cell(summary),
                     "lowest_level": lowest_extracted_level(long)},
            "md": {"ctrl_sentence": render(claims[0]), "suffix_sentence": render(claims[1])}}


def exp1(main: str, frames: Mapping[str, pd.DataFrame], tables: Mapping[str, pd.DataFrame | None],
         tables_ins: Mapping[str, pd.DataFrame | None], samples: Mapping[str, pd.DataFrame],
         samples_ins: Mapping[str, pd.DataFrame], claims: Sequence[Claim], gap_claims: Sequence[Claim],
         inserted_claim: Claim) -> dict:
    """``e1_target``, ``e1_three``, ``e1_freq``, ``e1_hard``, ``e1_cross``, ``e1_task_three``,
    ``e1_n``, ``e1_ins_three``, ``e1_ins_task_three``, ``e1_ins_n``, ``e1_ins_controls``; Markdown
    ``e1_computed``, ``e1_verdict``, ``e1_spread``, ``e1_gaps`` and ``e1_inserted``. ``tables`` and
    ``tables_ins`` are the wide AUC tables by split (``random``, ``task``), ``frames`` the targets'
    frames with every sequence."""
    random, task = tables["random"], tables["task"]
    return {"text": {"e1_target": main, "e1_three": auc_cell(random, THREE, main),
                     "e1_freq": auc_cell(random, "log_freq", main),
                     "e1_hard": auc_cell(random, "hardness", main),
                     "e1_cross": auc_cell(random, "cross-model baseline", main),
                     "e1_task_three": auc_cell(task, THREE, main), "e1_n": str(len(samples.get(main, []))),
                     "e1_ins_three": auc_cell(tables_ins["random"], THREE, main),
                     "e1_ins_task_three": auc_cell(tables_ins["task"], THREE, main),
                     "e1_ins_n": str(len(samples_ins.get(main, []))),
                     "e1_ins_controls": str(int((stack_frames(frames)["copies"] == 0).sum()))},
            "md": {"e1_computed": computed_sentence(random, len(frames)), "e1_verdict": render(claims[1]),
                   "e1_spread": render(claims[2]), "e1_gaps": " ".join(render(c) for c in gap_claims),
                   "e1_inserted": render(inserted_claim)}}


def exp2(pools: Mapping[str, Sequence[str]], tables: Mapping[str, pd.DataFrame | None],
         paper: Mapping[str, pd.DataFrame], dataset: pd.DataFrame, labels: pd.DataFrame,
         run_rates: pd.DataFrame, claims: Sequence[Claim], level_claims: Iterable[Claim]) -> dict:
    """``exp2_min_pairs``, ``exp2_levels``, ``e2_pairs``, ``e2_q_three``, ``e2_q_rec``, ``e2_q_freq``,
    ``e2_q_end``, ``e2_late_three``, ``src2_q_three``, ``src2_q_rec``, ``src2_q_freq``, ``src2_q_end``,
    ``src2_late_three``, ``src2_all6_rec``, ``src2_late_rec``, ``e2_range_pos``, ``e2_gradient``,
    ``e2_quarters``; Markdown ``e2_level_claims``, ``e2_order``, ``e2_levels``, ``e2_verdict``,
    ``e2_late`` and ``src2_share``."""
    n_pairs = pair_counts(dataset, list(pools))
    quarters = pools["quarters"]
    q, late = tables.get("quarters"), tables.get("late")
    src_q, src_late = paper["quarters"], paper["late"]
    return {"text": {"exp2_min_pairs": str(min(n_pairs.values()) if n_pairs else 0),
                     "exp2_levels": str(exp2_level_count(dataset, list(pools))),
                     "e2_pairs": ", ".join(f"{n} ({p})" for p, n in n_pairs.items()),
                     "e2_q_three": auc_cell(q, THREE, "pooled"), "e2_q_rec": auc_cell(q, "recency", "pooled"),
                     "e2_q_freq": auc_cell(q, "log_freq", "pooled"),
                     "e2_q_end": auc_cell(q, "window-end baseline", "pooled"),
                     "e2_late_three": auc_cell(late, THREE, "pooled"),
                     "src2_q_three": auc_cell(src_q, THREE, "pooled"),
                     "src2_q_rec": auc_cell(src_q, "recency", "pooled"),
                     "src2_q_freq": auc_cell(src_q, "log_freq", "pooled"),
                     "src2_q_end": auc_cell(src_q, "window-end baseline", "pooled"),
                     "src2_late_three": auc_cell(src_late, THREE, "pooled"),
                     "src2_all6_rec": auc_cell(paper["all6"], "recency", "pooled"),
                     "src2_late_rec": auc_cell(src_late, "recency", "pooled"),
                     "e2_range_pos": f"{int(labels['extract'].sum())} of {len(labels)}",
                     "e2_gradient": window_gradient(run_rates, quarters),
                     "e2_quarters": ", ".join(r.removeprefix("range-") for r in quarters)},
            "md": {"e2_level_claims": level_claims_text(level_claims), "e2_order": render(claims[2]),
                   "e2_levels": pair_levels_sentence(dataset, inserted_levels(labels)),
                   "e2_verdict": pool_split_sentence(n_pairs), "e2_late": render(claims[3]),
                   "src2_share": late_share_sentence(paper_pair_positives("all6"))}}


def exp3(cells: pd.DataFrame, bins: Mapping[str, int], steps: Mapping[str, int],
         tables: Mapping[str, pd.DataFrame], dataset: pd.DataFrame, paper_dataset: pd.DataFrame,
         claims: Sequence[Claim], task_claims: Iterable[Claim], sweep: pd.DataFrame,
         step_bin_frac: float) -> dict:
    """``e3_cells``, ``e3_bin``, ``e3_full``, ``e3_sfx``, ``e3_cross``, ``e3_resid``, ``e3_n``,
    ``exp3_matched``, ``src3_n``; Markdown ``e3_task``, ``e3_empty``, ``e3_bin_text``, ``e3_evidence``,
    ``e3_outcome``, ``e3_power`` and ``e3_sweep``. ``steps`` are the targets' training steps by the
    lab's names (``bins`` by the source's), ``tables`` the wide AUC tables by split."""
    keys = cell_keys(cells)
    group = tables["group"]
    pooled = dataset.iloc[-1] if len(dataset) else pd.Series({"n_examples": 0, "n_pos": 0, "n_neg": 0})
    src_pooled = paper_dataset.set_index("cell").loc["pooled"]
    return {"text": {"e3_cells": cells_text(keys), "e3_bin": bins_text(bins, keys),
                     "e3_full": auc_cell(group, (THREE, "full sequence"), "pooled"),
                     "e3_sfx": auc_cell(group, (THREE, "suffix"), "pooled"),
                     "e3_cross": auc_cell(group, ("cross-model baseline", "—"), "pooled"),
                     "e3_resid": f"{pooled['residual_recency_auc']:.3f}" if len(dataset) else "—",
                     "e3_n": str(int(pooled["n_examples"])), "exp3_matched": str(int(pooled["n_examples"])),
                     "src3_n": f"{int(src_pooled['n_examples']):,}"},
            "md": {"e3_task": " ".join(render(c) for c in task_claims),
                   "e3_empty": empty_cells_sentence(len(keys), empty_cells(cells, bins)),
                   "e3_bin_text": bin_sentence(steps),
                   "e3_evidence": evidence_text(claims[:3]),
                   "e3_outcome": exp3_outcome_sentence(exp3_outcome(claims), claims),
                   "e3_power": render(claims[3]),
                   "e3_sweep": sweep_sentence(sweep, step_bin_frac, MIN_EXAMPLES)}}


def compare(long: pd.DataFrame, setup: pd.DataFrame, run_table: pd.DataFrame, range_run,
            range_exposure: pd.DataFrame, rates: pd.DataFrame, paper_data: Sequence[pd.DataFrame],
            lab_profile: str, plan_levels: Sequence[int],
            profile_levels: Mapping[str, Sequence[int]]) -> dict:
    """``param_span``, ``max_tokens``, ``n_tasks``, ``src_n_seq``, ``src_n_tasks``, ``range_density``,
    ``range_per_row``; Markdown ``labels_cmp``, ``levels_cmp`` and ``level_256``. ``range_run`` is
    the first injection-range run's configuration and ``range_exposure`` its exposure table;
    ``paper_data`` the source's dataset tables of Experiments 1, 2 and 3."""
    paper1, paper2, paper3 = paper_data
    return {"text": {"param_span": " and ".join(sorted({f"{p / 1e6:.3g}M" for p in setup["params"]})),
                     "max_tokens": f"{int(run_table['tokens'].max()) / 1e6:g}M",
                     "n_tasks": str(long["task"].nunique()),
                     "src_n_seq": f"{PAPER_N_SEQUENCES:,}", "src_n_tasks": str(PAPER_N_TASKS),
                     "range_density": f"{window_share(range_run, range_exposure):.0%}",
                     "range_per_row": str(range_run.copies_per_row)},
            "md": {"labels_cmp": labels_comparison(long, paper1, paper2),
                   "levels_cmp": levels_sentence(long["copies"]),
                   "level_256": level_256_sentence(lab_profile, plan_levels, profile_levels, rates, paper2,
                                                   paper3)}}


def summary(claims: Iterable[Claim], elapsed: float) -> dict:
    """``source_counts`` and ``elapsed``."""
    return {"text": {"source_counts": counts_sentence(list(claims)), "elapsed": f"{elapsed:.0f}"}}


# -- the tables' layout ------------------------------------------------------------------------------


def rates_table(rates: pd.DataFrame) -> Styler:
    """A table of extraction rates (its index kept): every column but ``positives`` to two decimals."""
    formats = {c: "{:.2f}" for c in rates.columns if c != "positives"}
    return rates.style.format(formats).set_properties(**NUMERIC_CELLS)


def exp3_dataset_table(dataset: pd.DataFrame, cell_lo: float, cell_hi: float) -> Styler | Note:
    """Experiment 3's dataset (seed 0) to three decimals, or the note that no cell has
    ``cell_lo``–``cell_hi`` positives."""
    return styled(dataset, precision=3, na_rep="—",
                  empty=f"**No (target, copies) cell has {cell_lo:.0%}–{cell_hi:.0%} positives: "
                        "Experiment 3 has no data on this lab.**")


def _lab_tables(tables: Mapping[str, pd.DataFrame | None], intervals: Mapping[str, Mapping],
                notes: str) -> list[Styler | Note]:
    """Each table ``Lab, <name>`` to three decimals, each interval table after them
    (``Lab, <name>: AUC [95% interval, …]``), then the notes; a missing table is left out."""
    shown: list[Styler | Note] = [t.style.format("{:.3f}", na_rep="—").set_caption(f"Lab, {name}")
                                  for name, t in tables.items() if t is not None]
    shown += [interval_table(c).style.set_caption(f"Lab, {name}: {INTERVALS}")
              for name, c in intervals.items() if c]
    return [*shown, Note(notes)]


def exp1_auc_tables(aucs: Mapping[str, Mapping[str, pd.DataFrame]], intervals: Mapping[str, Mapping],
                prefix: str = "") -> list[Styler | Note]:
    """Experiment 1's tables of AUCs (``aucs``, by split), of intervals (``intervals``, by split)
    and their notes, each caption and note after ``prefix``."""
    tables = {f"{prefix}{name}": wide_auc(aucs[split]) for split, name in SPLIT_NAMES.items()}
    boot = {f"{prefix}{name}": intervals[split] for split, name in SPLIT_NAMES.items()}
    return _lab_tables(tables, boot, notes_markdown(auc_notes(aucs["random"]) | auc_notes(aucs["task"]),
                                                    prefix))


def exp2_auc_tables(tables: Mapping[str, pd.DataFrame | None], intervals: Mapping[str, Mapping],
                aucs: Mapping[str, Mapping[str, pd.DataFrame]]) -> list[Styler | Note]:
    """Experiment 2's tables of AUCs and of intervals per pool, and their notes."""
    return _lab_tables({f"pool {p}": t for p, t in tables.items()},
                       {f"pool {p}": c for p, c in intervals.items()}, exp2_notes_markdown(aucs))


def exp3_auc_tables(tables: Mapping[str, pd.DataFrame | None],
                aucs: Mapping[str, Mapping[str, pd.DataFrame]]) -> list[Styler | Note]:
    """Experiment 3's tables of AUCs per split, and their notes."""
    notes = "\n".join(notes_markdown(auc_notes(c), f"{split}, ") for split, c in aucs.items())
    return _lab_tables({f"{split} split": t for split, t in tables.items()}, {}, notes)


def exp1_panels(paper: Mapping[str, pd.DataFrame], tables: Mapping[str, pd.DataFrame | None]) -> dict:
    """The panels of Experiment 1's figure: the source's table and the lab's, per split."""
    return auc_panels({name: (paper[split], tables[split]) for split, name in SPLIT_NAMES.items()})


def exp2_panels(paper: Mapping[str, pd.DataFrame], tables: Mapping[str, pd.DataFrame | None],
                pools: Iterable[str]) -> dict:
    """The panels of Experiment 2's figure: the source's table (if any) and the lab's, per pool."""
    return auc_panels({p: (paper.get(p), tables[p]) for p in pools})


def exp3_panels(paper: Mapping[str, pd.DataFrame], tables: Mapping[str, pd.DataFrame | None]) -> dict:
    """The panels of Experiment 3's figure: the source's table and the lab's, per split."""
    return auc_panels({"group split": (flat_index(paper["group"]), flat_index(tables["group"])),
                       "leave-one-task-out": (flat_index(paper["task"]), flat_index(tables["task"]))})

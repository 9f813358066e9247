"""The predicting chapter's English: each claim's statement and rendering, and the chapter's other sentences.

The wording is in ``sentences.j2`` beside this module (one macro per sentence, rendered by
:mod:`analysis.core.prose`); the functions here gather the numbers and call it. :func:`statement`
gives each claim's statement (the source's finding in a line, :data:`STATEMENTS`), :func:`render`
words a :class:`~analysis.core.claims.Claim` of :mod:`analysis.predicting.claims` from its status,
numbers and ``extra`` (it decides nothing); the others caption the data.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.core import claims as core_claims
from analysis.core import prose
from analysis.core.claim_text import verdict
from analysis.core.claims import NOT_TESTABLE, Claim
from analysis.predicting import params
from analysis.predicting.checks import PredictingError, require
from analysis.predicting.method_features import window_end_baseline
from analysis.predicting.params import FEATURE_SETS, PAPER_K, PAPER_TOP_LEVEL, THREE
from analysis.predicting.run import counterfactual
from analysis.predicting.tables import auc_notes, computed_columns

S = prose.sentences("predicting", **prose.constants(params, core_claims))
#: items in words: ``a``, ``a and b``, ``a, b and c``
and_list = prose.and_join
_LEVEL_PREFIX = "e2_recency_copies_"
#: each claim's statement: what the source found (or, for partial_learning, what the chapter checks)
STATEMENTS = {i: S.statement(id=i) for i in (
    "controls_extracted", "partial_learning", "e1_three", "e1_freq_beats_hardness", "e1_seed_spread",
    "e1_inserted_three", "e2_recency_256", "e2_recency", "e2_log_freq_constant", "e2_window_order",
    "e2_late_pool", "e3_three_full", "e3_three_suffix", "e3_cross_model", "e3_suffix_gap",
    "e3_task_three_full", "e3_task_three_suffix", "e1_hardness_adds_little", "e1_three_vs_cross_model")}


def statement(id: str) -> str:
    """A claim's statement: :data:`STATEMENTS`, or that of a per-level claim ``e2_recency_copies_<level>``."""
    if id in STATEMENTS:
        return STATEMENTS[id]
    if id.startswith(_LEVEL_PREFIX) and id.removeprefix(_LEVEL_PREFIX).isdigit():
        return S.statement(id=id, level=int(id.removeprefix(_LEVEL_PREFIX)))
    raise PredictingError(f"no statement for the claim id {id!r}")


def injection_design(table: pd.DataFrame) -> str:
    """The injection set in words, e.g. ``"6 tasks; per task, 4 sequences at 0, 1, 4, 16 and 64 copies
    and 1 at 256 copies"`` (one row per sequence with ``task`` and ``copies``); a level whose tasks differ
    gives the range."""
    require(table, ("task", "copies"), "the injection table")
    if table.empty:
        raise PredictingError("the injection table is empty")
    tasks = pd.unique(table["task"])
    per = table.groupby(["copies", "task"]).size().unstack("task").reindex(columns=tasks).fillna(0)
    groups: dict[tuple[int, int], list[int]] = {}
    for level, row in per.iterrows():
        groups.setdefault((int(row.min()), int(row.max())), []).append(int(level))
    return S.injection_design(n_tasks=len(tasks), groups=[(lo, hi, lv) for (lo, hi), lv in groups.items()])


def range_runs_sentence(run_table: pd.DataFrame, runs: Sequence[str]) -> str:
    """What the injection-range runs train, beside the perturbed runs: model, budget and counterfactual."""
    require(run_table, ("run", "family", "d_model", "tokens"), "the run table")
    t = run_table.set_index("run")
    if [r for r in runs if r not in t.index] or not len(runs):
        raise PredictingError(f"range_runs_sentence needs lab runs, got {list(runs)}")
    first, pert = t.loc[runs[0]], t[t["family"] == "perturbed"]
    if pert.empty:
        raise PredictingError("the run table has no perturbed runs to compare with")
    return S.range_runs(width=int(first["d_model"]), widest=pert["d_model"].max(),
                        narrowest=pert["d_model"].min(), tokens=int(first["tokens"]),
                        ratio=int(first["tokens"]) / int(pert["tokens"].max()),
                        twin=counterfactual(run_table, runs[0]))


def run_positives(scores: pd.DataFrame, runs: Sequence[str]) -> str:
    """Extracted sequences (label 1) under each run, as words: ``"0, 2 and 1"``."""
    require(scores, ("run", "extract"), "the scores")
    counts = scores.groupby("run")["extract"].sum()
    return and_list(int(counts.get(r, 0)) for r in runs)


def lowest_extracted_level(long: pd.DataFrame) -> str:
    """The lowest copy level at which any target extracts a sequence (``"16 copies"``), or says none is."""
    require(long, ("copies", "extract"), "the long frame")
    levels = sorted(long.loc[long["extract"] == 1, "copies"].unique())
    return S.lowest_level(level=levels[0] if levels else None)


def best_cell(summary: pd.DataFrame) -> str:
    """The (target, copies) cell with the highest share extracted, e.g. ``"pert-l2x at 64 copies (75%)"``."""
    require(summary, ("target", "copies", "extract"), "the summary")
    return S.best_cell(best=summary.loc[summary["extract"].idxmax()])


def bins_text(bins: Mapping[str, int], keys: Iterable[tuple[str, int]]) -> str:
    """Stratum widths of the targets that have cells: ``"2 steps (1b-100b), 1 step (8b-100b)"``, or "—"."""
    with_cells = {t for t, _ in keys}
    return S.bins(bins=[(t, b) for t, b in bins.items() if t in with_cells])


def cells_text(keys: Iterable[tuple[str, int]]) -> str:
    """(target, copies) cells in words: ``"1b-100b at 4 copies, 8b-500b at 1 copy"``, or ``"none"``."""
    return S.cells(keys=list(keys))


def notes_markdown(notes: Mapping[str, str], prefix: str = "") -> str:
    """The notes as a Markdown list, ``- *prefix name*: not computed: why`` (empty text for none)."""
    return S.notes(notes=list(notes.items()), prefix=prefix)


def exp2_notes_markdown(aucs: Mapping[str, Mapping[str, pd.DataFrame]]) -> str:
    """Experiment 2's notes as a Markdown list: per pool, the copy levels without pairs on one line,
    then every other column that could not be computed (empty text for none)."""
    rows = []
    for pool, cols in aucs.items():
        notes = auc_notes(cols)
        no_pairs = [n for n, why in notes.items()
                    if n.startswith("copies_") and "0 positives and 0 negatives" in why]
        rows += [(pool, [n.removeprefix("copies_") for n in no_pairs], None)] * bool(no_pairs)
        rows += [(pool, n, why) for n, why in notes.items() if n not in no_pairs]
    return S.exp2_notes(rows=rows)


def computed_sentence(table: pd.DataFrame | None, n_targets: int) -> str:
    """How many of the targets have AUCs, and that the notes say why the others have none."""
    return S.computed(k=len(computed_columns(table)), n=n_targets)


def window_gradient(rates: pd.DataFrame, runs: Sequence[str]) -> str:
    """Share extracted per run at each copy level where some run extracts, e.g.
    ``"at 64 copies 0%, 0%, 25%, 75%; at 256 copies ..."``, or ``"nothing at any copy level"``."""
    runs = [r for r in runs if r in rates.index]
    levels = [c for c in rates.columns if c >= 1 and runs and rates.loc[runs, c].max() > 0]
    return S.window_gradient(shares=[(c, [rates.loc[r, c] for r in runs]) for c in levels])


def pair_levels_sentence(dataset: pd.DataFrame, levels: Sequence[int]) -> str:
    """Which copy levels change label between runs (have pairs in some pool, seed 0) and which do not."""
    with_pairs = set() if dataset.empty else {int(c) for c in dataset["copies"] if c != "all"}
    return S.pair_levels(have=[c for c in levels if c in with_pairs],
                         lack=[c for c in levels if c not in with_pairs])


def pool_split_sentence(n_pairs: Mapping[str, int], k: int = PAPER_K) -> str:
    """Whether each pool has the ``k`` pairs that a ``k``-fold split grouped by sequence needs."""
    return S.pool_split(enough=[p for p, n in n_pairs.items() if n >= k], n=len(n_pairs), k=k)


def late_share_sentence(source: pd.Series) -> str:
    """Share of a source pool's positives (:func:`paper_pair_positives`, indexed by the lab's run
    names) in the runs whose window ends with training (window end 1.0)."""
    ends = window_end_baseline([r.removeprefix("range-") for r in source.index])
    return S.late_share(last=int(source[ends == 1.0].sum()), total=int(source.sum()),
                        runs=[r for r, e in zip(source.index, ends) if e == 1.0])


def bin_sentence(T: Mapping[str, int]) -> str:
    """The source's stratum width as a share of training, carried over to the lab's targets' steps."""
    return S.bin_share(lo=min(T.values()), hi=max(T.values()))


def source_headline(exp1_random: pd.DataFrame, exp3_group: pd.DataFrame) -> str:
    """The source's two findings in numbers: frequency and recency with nothing controlled
    (Experiment 1, random split), and what is left once both are fixed (Experiment 3, pooled, group
    split). ``exp1_random`` is indexed by ``features``, ``exp3_group`` by (features, hardness)."""
    sets = exp3_group[exp3_group.index.get_level_values("features").isin(list(FEATURE_SETS))]["pooled"]
    return S.source_headline(fr=exp1_random.loc["log_freq + recency"],
                             three=float(exp1_random.loc[THREE].median()), best=float(sets.max()),
                             sfx=float(exp3_group.loc[(THREE, "suffix"), "pooled"]),
                             full=float(exp3_group.loc[(THREE, "full sequence"), "pooled"]))


def labels_comparison(long: pd.DataFrame, paper1: pd.DataFrame, paper2: pd.DataFrame) -> str:
    """Extraction in the source and in the lab: controls, the lowest level extracted, positives in all.
    ``paper1`` is the source's ``exp1_dataset``, ``paper2`` its ``exp2_dataset`` (whose per-level rows
    give the lowest level with positives)."""
    require(long, ("copies", "extract"), "the long frame")
    levels = paper2[(paper2["copies"] != "all") & (paper2["n_pos"] > 0)]["copies"].astype(int)
    return S.labels_comparison(src_ctrl=int(paper1["controls_pos"].sum()), src_level=levels.min(),
                               n_pos=int(long["extract"].sum()), lowest=lowest_extracted_level(long),
                               ctrl=int(long.loc[long["copies"] == 0, "extract"].sum()))


def levels_sentence(levels: Iterable[int]) -> str:
    """The lab's copy levels beside the source's (:data:`PAPER_COPY_LEVELS`)."""
    lab = sorted({int(c) for c in levels})
    return S.levels(lab=lab, shared=[c for c in lab if c in params.PAPER_COPY_LEVELS],
                    own=[c for c in lab if c not in params.PAPER_COPY_LEVELS])


def empty_cells_sentence(n_cells: int, empty: Sequence[tuple[str, int]]) -> str:
    """Which of ``n_cells`` cells matching empties (:func:`analysis.predicting.steps.empty_cells`)."""
    return S.empty_cells(n_cells=n_cells, empty=list(empty))


def level_256_sentence(lab_profile: str, plan_levels: Sequence[int], profiles: Mapping[str, Sequence[int]],
                       rates: pd.DataFrame, paper2: pd.DataFrame, paper3: pd.DataFrame) -> str:
    """Whether the lab's plan (``plan_levels`` of ``lab_profile``; ``profiles``: every lab profile's)
    has the source's 256-copy level; ``rates`` is :func:`extraction_rates`, ``paper2`` and ``paper3``
    the source's Experiment 2 and 3 dataset tables."""
    top, levels = PAPER_TOP_LEVEL, sorted(int(c) for c in plan_levels)
    has = top in levels and top in rates.columns
    return S.level_256(profile=lab_profile, levels=levels,
                       shares=[(t, rates.loc[t, top]) for t in rates.index] if has else None,
                       pools=[p for p in pd.unique(paper2["pool"])
                              if str(top) in set(paper2.loc[paper2["pool"] == p, "copies"].astype(str))],
                       cells=paper3.loc[paper3["copies"] == top, "cell"].tolist(),
                       have=[p for p, lv in profiles.items() if top in lv])


# -- claims ---------------------------------------------------------------------------------------


def level_claims_text(claims: Iterable[Claim]) -> str:
    """The per-level claims of Experiment 2, rendered one after another (empty text for none)."""
    return " ".join(render(c) for c in claims if c.id.startswith(_LEVEL_PREFIX))


def exp3_outcome_sentence(outcome: str, claims: Iterable[Claim]) -> str:
    """The source's Experiment 3 finding on this run, said plainly (``outcome`` from
    :func:`analysis.predicting.claims_exp3.exp3_outcome`), with the number and status of each claim
    that carries it (``e3_three_suffix``, ``e3_suffix_gap``)."""
    return S.exp3_outcome(outcome=outcome, claims=[c for c in claims if c.value is not None
                                                   and c.id in ("e3_three_suffix", "e3_suffix_gap")])


def render(c: Claim) -> str:
    """One claim of the chapter as a Markdown sentence: this run's numbers beside the source's,
    and the status with its reason."""
    return S.claim(c=c, status=verdict(c))


def evidence_text(claims: Iterable[Claim]) -> str:
    """Experiment 3's AUCs against their permutation null: what chance is on the matched set,
    then each claim's rendering."""
    claims = list(claims)
    tested = [c for c in claims if c.status != NOT_TESTABLE and c.null_value is not None]
    return S.evidence(c=tested[0] if tested else None, rendered=[render(c) for c in claims] if tested else [])


def sweep_sentence(sweep: pd.DataFrame, frac: float, min_examples: int) -> str:
    """Which width of Experiment 3's strata sweep (:func:`analysis.predicting.tables.strata_sweep`)
    this run matches at (``frac`` of training), and the narrowest width of the sweep that keeps
    every cell and at least ``min_examples`` examples: the closest to the source's width the
    lab's steps allow."""
    shares = sweep["share of T"].to_numpy(float)
    full = (sweep["cells kept"] == sweep["cells"]) & (sweep["cells"] > 0)
    ok = sweep[full & (sweep["examples"] >= min_examples) & np.isfinite(shares)]
    here = sweep[np.isclose(shares, frac)]
    return S.sweep(narrowest=None if ok.empty else ok.loc[ok["share of T"].idxmin()], frac=frac,
                   here=here.iloc[0] if len(here) else None, min_examples=min_examples)

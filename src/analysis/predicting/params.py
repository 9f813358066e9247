"""The predicting chapter's profiles, parameters, the source's constants and its transcribed tables.

The source ("Predicting memorization", experiments on the Hubble models) gives
its numbers in tables, transcribed in ``data/predicting_*.csv`` (each file's
first line says which table; :func:`load_paper_table`), and a few in its text
(:data:`PAPER_N_SEQUENCES`, :data:`PAPER_EXCLUDED_POSITIVES`, ...). The lab's
runs take the source's roles through :data:`LAB_TARGETS` and :data:`LAB_POOLS`.
"""

from __future__ import annotations

import pandas as pd

from analysis.core.paths import DATA_DIR
from analysis.lab.profiles import check_runs, lab_profile_param
from analysis.params import Declaration, Param
from analysis.predicting.checks import PredictingError

#: table name -> file of :func:`load_paper_table`
PAPER_TABLES = {
    "exp1_dataset": "predicting_exp1_dataset.csv",
    "exp1_random": "predicting_exp1_random.csv",
    "exp1_task": "predicting_exp1_task.csv",
    "exp2_dataset": "predicting_exp2_dataset.csv",
    "exp2_auc": "predicting_exp2_auc.csv",
    "exp3_dataset": "predicting_exp3_dataset.csv",
    "exp3_group": "predicting_exp3_group.csv",
    "exp3_task": "predicting_exp3_task.csv",
}

#: the label's prefix and suffix caps (tokens)
MAX_PREFIX = 32
MAX_SUFFIX = 32
#: the three features, in the source's order
FEATURES = ("log_freq", "recency", "hardness")
#: the 7 non-empty feature subsets, labelled and ordered as in the source's tables
FEATURE_SETS: dict[str, tuple[str, ...]] = {
    "log_freq + recency + hardness": ("log_freq", "recency", "hardness"),
    "log_freq + recency": ("log_freq", "recency"),
    "log_freq + hardness": ("log_freq", "hardness"),
    "recency + hardness": ("recency", "hardness"),
    "log_freq": ("log_freq",),
    "recency": ("recency",),
    "hardness": ("hardness",),
}
#: the row of the three features together
THREE = "log_freq + recency + hardness"
#: baseline rows of the source's tables -> the single feature column fit (None: random scores)
BASELINES: dict[str, tuple[str, ...] | None] = {
    "cross-model baseline": ("cross_model",),
    "window-end baseline": ("window_end",),
    "random baseline": None,
}
#: Experiment 3's hardness measures -> the column that plays "hardness"
HARDNESS_MEASURES = {"full": "hardness", "suffix": "hardness_sfx"}
#: hardness measures as the source's Experiment 3 tables name them
MEASURE_LABELS = {"full": "full sequence", "suffix": "suffix"}
#: split kinds of :func:`analysis.predicting.method_eval.evaluate`
SPLITS = ("random", "task", "group")

#: the source's training steps T per target model
PAPER_STEPS = {
    "1b-100b": 48_000, "8b-100b": 48_000, "1b-500b": 238_500, "8b-500b": 238_500,
    "ir50_75": 48_000, "ir75_100": 48_000, "ir50_100": 48_000,
}
#: the source's injectrange runs (% range of training) -> the lab's window of the same range
INJECTRANGE_WINDOWS = {
    "0_25": "q1", "25_50": "q2", "50_75": "q3", "75_100": "q4", "0_50": "early", "50_100": "late",
}
PAPER_TEST_SIZE = 0.2
PAPER_K = 5
PAPER_SEEDS = range(5)
PAPER_STEP_BIN = 100
PAPER_CELL_RANGE = (0.2, 0.8)
#: the source's positives in total in the three injectrange models it leaves out of
#: Experiments 1 and 3 (its "Target models" paragraph)
PAPER_EXCLUDED_POSITIVES = {"0_25": 2, "25_50": 3, "0_50": 6}
#: the source's sequences, tasks and copy levels (its "Sequences" paragraph)
PAPER_N_SEQUENCES = 80_504
PAPER_N_TASKS = 16
PAPER_COPY_LEVELS = (0, 1, 4, 16, 64, 256)
#: where the source keeps its Experiment 1 tables restricted to inserted sequences (never-inserted
#: controls removed before balancing): its text prints no numbers for them, only "The same tables
#: restricted to inserted sequences (controls removed before balancing) are in
#: out/fit_balanced_report.txt (subset=inserted)."
PAPER_INSERTED_ONLY = "out/fit_balanced_report.txt (subset=inserted)"
#: the source's highest copy level (Hubble's 256 copies)
PAPER_TOP_LEVEL = 256
#: the AUC's two-sided level of :func:`analysis.predicting.method_eval.chance_band`
CHANCE_LEVEL = 0.95

#: the lab's perturbed and injection-range runs -> the source's target of the same role
#: (small / large model ~ 1b / 8b; 1x / 2x token budget ~ 100b / 500b tokens; the
#: injection-range runs by window: q3 ~ 50_75, q4 ~ 75_100, late ~ 50_100)
LAB_TARGETS = {
    "pert-s1x": "1b-100b", "pert-l1x": "8b-100b", "pert-s2x": "1b-500b", "pert-l2x": "8b-500b",
    "range-q3": "ir50_75", "range-q4": "ir75_100", "range-late": "ir50_100",
}
#: Experiment 2's pools of injection-range runs, as in the source
LAB_POOLS = {
    "quarters": ("range-q1", "range-q2", "range-q3", "range-q4"),
    "all6": ("range-q1", "range-q2", "range-q3", "range-q4", "range-early", "range-late"),
    "late": ("range-q4", "range-late"),
}
#: the lab's injection-range runs left out of Experiments 1 and 3, as the source leaves out
#: its injectrange_{0_25,25_50,0_50} models (Experiment 2 uses all six)
EXP2_ONLY = ("range-q1", "range-q2", "range-early")

#: the chapter's profiles: which lab, which targets and pools, how many seeds, the
#: Experiment 3 stratum width as a fraction of training (the source's 100 of 48,000
#: steps is under one lab step; on the default lab 1/32 is the narrowest width of the
#: chapter's sweep that keeps every cell and at least MIN_EXAMPLES examples, 1/64 drops
#: cells: see the chapter) and the cell range
PROFILES = {
    "smoke": dict(lab_profile="smoke", targets=list(LAB_TARGETS), pools=dict(LAB_POOLS), n_seeds=2,
                  step_bin_frac=0.125, cell_lo=PAPER_CELL_RANGE[0], cell_hi=PAPER_CELL_RANGE[1]),
    "default": dict(lab_profile="default", targets=list(LAB_TARGETS), pools=dict(LAB_POOLS),
                    n_seeds=len(PAPER_SEEDS), step_bin_frac=1 / 32, cell_lo=PAPER_CELL_RANGE[0],
                    cell_hi=PAPER_CELL_RANGE[1]),
    # the source's seeds and cells on the lab (its Hubble models cannot be had here), with
    # ten times the seeds of the default for steadier means
    "paper": dict(lab_profile="default", targets=list(LAB_TARGETS), pools=dict(LAB_POOLS), n_seeds=50,
                  step_bin_frac=1 / 32, cell_lo=PAPER_CELL_RANGE[0], cell_hi=PAPER_CELL_RANGE[1]),
}


def _check_targets(value, settings):
    check_runs("targets", value, settings["lab_profile"], inject=True)


PARAMS = Declaration(
    "predicting",
    PROFILES,
    (
        lab_profile_param(),
        Param("targets", "lab runs to predict for (perturbed or injection-range runs)", kind="names",
              check=_check_targets),
        Param("n_seeds", "sampling seeds every AUC is averaged over", kind="int", lo=1),
        Param("step_bin_frac", "Experiment 3: width of a last-step stratum, as a fraction of training",
              kind="float", lo=1e-6, hi=1.0),
    ),
    profile_help={"smoke": "the smoke lab, 2 seeds (CI)", "default": "the book's lab, the source's seeds",
                  "paper": "the book's lab, 50 seeds"},
)


def load_paper_table(name: str) -> pd.DataFrame:
    """One of the source's tables, transcribed in ``data/predicting_*.csv`` (see each file's note).

    Parameters
    ----------
    name : str
        A key of :data:`PAPER_TABLES`: ``exp1_dataset``, ``exp1_random``,
        ``exp1_task`` (Experiment 1: dataset, AUC random split, AUC
        leave-one-task-out; AUC tables wide, one column per target),
        ``exp2_dataset`` (``copies`` is text, ``"all"`` for a pool's total; the
        examples-per-run table sits in the ``pos_<run>``/``neg_<run>`` columns
        of each pool's ``"all"`` row), ``exp2_auc`` (the three pools' tables
        with a ``pool`` column), ``exp3_dataset``, ``exp3_group``,
        ``exp3_task`` (with the ``hardness`` column: "full sequence",
        "suffix" or "—").
    """
    if name not in PAPER_TABLES:
        raise PredictingError(f"name must be one of {sorted(PAPER_TABLES)}, got {name!r}")
    dtype = {"copies": str} if name == "exp2_dataset" else None
    return pd.read_csv(DATA_DIR / PAPER_TABLES[name], comment="#", dtype=dtype)


def paper_exp2_tables() -> dict[str, pd.DataFrame]:
    """The source's Experiment 2 AUC tables by pool, indexed by ``features``."""
    paper = load_paper_table("exp2_auc")
    return {p: g.drop(columns="pool").set_index("features") for p, g in paper.groupby("pool", sort=False)}


def paper_pair_positives(pool: str) -> pd.Series:
    """The source's seed-0 positives per run of a pool (its "Examples per run" table), indexed by the
    lab's run of the same window (``range-q1`` for ``0_25``, ...), in window order."""
    table = load_paper_table("exp2_dataset")
    row = table[(table["pool"] == pool) & (table["copies"] == "all")]
    if row.empty:
        raise PredictingError(f"the source has no pool {pool!r}; pools: {sorted(table['pool'].unique())}")
    row = row.iloc[0]
    out = {
        f"range-{w}": int(row[f"pos_{r}"])
        for r, w in INJECTRANGE_WINDOWS.items()
        if pd.notna(row[f"pos_{r}"])
    }
    return pd.Series(out, dtype=int)

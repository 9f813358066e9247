"""Predicting which injected sequences a model memorizes (the predicting chapter).

The source ("Predicting memorization", experiments on the Hubble models) asks
whether a simple model can tell, from properties of a sequence and of the data
order alone, which injected sequences a trained model ends up memorizing. This
module re-runs its three experiments on the lab's models (``analysis.lab``):

* **Label** (:func:`extract_label`, :func:`split_point`). A sequence of
  ``n`` tokens is cut into a prefix of ``P = min(32, n // 2)`` tokens and a
  suffix of ``L = min(32, n - P)``; ``extract = 1`` iff greedy decoding from the
  prefix reproduces the suffix, computed with teacher forcing: the target
  token is the argmax at every suffix position.
* **Features** (:func:`features`). ``log_freq = log(1 + copies)``,
  ``recency = (T - last_step) / T`` (1.0 for a sequence never inserted) and
  ``hardness``: the mean per-token NLL of the sequence averaged over the
  standard (non-injected) models other than the target's counterfactual
  (``hardness_sfx``: the same over the suffix tokens only).
* **Prediction model** (:func:`fit_score`). ``StandardScaler`` then ordinary
  least squares on the 0/1 label; the regression output is the ranking score.
  :data:`FEATURE_SETS` lists the 7 non-empty feature subsets in the source's
  table order.
* **Metric** (:func:`pooled_auc`, :func:`per_task_auc`). AUC-ROC of held-out
  predictions: pooled over all held-out examples under the random and group
  splits, and a mean of per-task AUCs (equal weight per task) under the
  leave-one-task-out split (:func:`evaluate`).
* **Baselines**: uniform random scores (:func:`random_scores`), the
  cross-model percentile rank of the suffix NLL (:func:`cross_model_scores`,
  Experiments 1 and 3) and the end of the insertion window
  (:func:`window_end_baseline`, Experiment 2).
* **Experiment 1** (:func:`balanced_subsample`): every positive and as many
  negatives; **Experiment 2** (:func:`injection_range_pairs`): one positive and
  one negative injection-range run per sequence; **Experiment 3**
  (:func:`matched_cells`, :func:`match_strata`, :func:`residual_recency_auc`):
  (target, copies) cells with 20–80% positives, matched 50/50 within
  (task, last-step bin) strata. :func:`exp1_stats`, :func:`exp2_stats` and
  :func:`exp3_stats` give the dataset tables in the source's layout, and the
  source's own tables are transcribed in ``data/predicting_*.csv``
  (:func:`load_paper_table`).

Where the source leaves a choice open, this module says what it does:

* **Copies.** The exposure count is the frame's ``copies`` column, or else
  ``copies_seen`` (the column of :func:`analysis.lab.train.exposure_table`):
  what the run actually inserted. A sequence is never inserted when it has 0
  copies or no last step (NaN or the lab's ``-1``).
* **Balancing** (Experiment 1). The source keeps every positive and draws as
  many negatives; when a target has more positives than negatives,
  :func:`balanced_subsample` keeps every negative and draws as many positives
  (the smaller class is always kept whole).
* **Per-task AUC.** A held-out task whose examples are all of one class has no
  AUC; it is skipped, and the mean is over the remaining tasks.
* **Percentile ranks** (cross-model baseline). Ranks are taken among the rows
  of the frame passed in, ties sharing their average rank, and divided by the
  number of ranked rows: the lowest suffix NLL scores 1, the highest ``1/n``.
* **Residual recency AUC** (Experiment 3). The size-weighted mean of the
  within-stratum AUCs of ``last_step``, over the strata that hold both classes
  (after :func:`match_strata` every stratum does).
* **Cells** keep positive rates in the closed interval ``[lo, hi]``.
* **Steps since the last copy** (dataset tables) is ``T - last_step``, so that
  ``recency = (T - last_step) / T`` is its fraction of training.
* **sd over seeds** (:func:`over_seeds`) is the sample standard deviation
  (``ddof=1``); the source does not say which.

All functions but :func:`sequence_scores` and :func:`score_runs` (which
query models through the shared interface) are pure computations over pandas
frames and arrays: no printing, plotting or model access
(:func:`injected_sequences` calls the lab's tokenizer). A later section maps
the lab's runs onto the source's models (:data:`LAB_TARGETS`,
:data:`LAB_POOLS`, :func:`counterfactual`) and builds each target's frame
(:func:`target_frame`, :func:`range_labels`).

The chapter's steps and sentences come last: one function per visible step
of the chapter (:func:`target_frames`, :func:`exp1_aucs`, :func:`pool_pairs`,
:func:`exp2_aucs`, :func:`match_cells`, :func:`exp3_aucs`, ...), the tables it
shows (:func:`wide_auc`, :func:`examples_per_run`, ...), and every verdict its
prose states, each a function of the numbers that returns the sentence
(:func:`exp1_verdict`, :func:`window_order_sentence`,
:func:`late_pool_sentence`, :func:`evidence_sentence`,
:func:`source_headline`, ...), so a re-run with other numbers says the other
thing. The source's own numbers come from its transcribed tables or from
named constants (:data:`PAPER_N_SEQUENCES`, :data:`PAPER_EXCLUDED_POSITIVES`, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.linear_model import LinearRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from analysis.lab.config import WINDOWS
from analysis.lab.ladder import lab_profile_param
from analysis.params import Declaration, Param

__all__ = [
    "BASELINES",
    "CHANCE_LEVEL",
    "DATA_DIR",
    "EXP2_ONLY",
    "FEATURE_SETS",
    "FEATURES",
    "HARDNESS_MEASURES",
    "INJECTRANGE_WINDOWS",
    "LAB_POOLS",
    "LAB_TARGETS",
    "MAX_PREFIX",
    "MAX_SUFFIX",
    "MEASURE_LABELS",
    "PAPER_CELL_RANGE",
    "PAPER_COPY_LEVELS",
    "PAPER_EXCLUDED_POSITIVES",
    "PAPER_K",
    "PAPER_N_SEQUENCES",
    "PAPER_N_TASKS",
    "PAPER_SEEDS",
    "PAPER_STEP_BIN",
    "PAPER_STEPS",
    "PAPER_TABLES",
    "PAPER_TEST_SIZE",
    "PARAMS",
    "PredictingError",
    "PROFILES",
    "SPLITS",
    "THREE",
    "and_list",
    "auc_cell",
    "auc_notes",
    "auc_panels",
    "auc_rows",
    "balanced_samples",
    "balanced_subsample",
    "best_cell",
    "bin_sentence",
    "bins_text",
    "cell_keys",
    "cells_text",
    "chance_band",
    "check_pool",
    "check_pools",
    "check_splittable",
    "check_targets",
    "computed_columns",
    "computed_sentence",
    "control_sentence",
    "counterfactual",
    "cross_model_scores",
    "empty_cells_sentence",
    "evaluate",
    "evidence_sentence",
    "examples_per_run",
    "exp13_targets",
    "exp1_aucs",
    "exp1_dataset",
    "exp1_stats",
    "exp1_verdict",
    "exp2_aucs",
    "exp2_dataset",
    "exp2_notes_markdown",
    "exp2_run_counts",
    "exp2_run_table",
    "exp2_stats",
    "exp3_aucs",
    "exp3_dataset",
    "exp3_power_sentence",
    "exp3_stats",
    "extract_label",
    "extracted_per_run",
    "extraction_rates",
    "extraction_summary",
    "feature_columns",
    "features",
    "fit_score",
    "flat_index",
    "group_kfold",
    "hardness",
    "injected_sequences",
    "injection_design",
    "injection_range_pairs",
    "inserted_levels",
    "labels_comparison",
    "late_pool_sentence",
    "late_share_sentence",
    "levels_sentence",
    "load_paper_table",
    "log_freq",
    "lowest_extracted_level",
    "main_target",
    "match_cells",
    "match_strata",
    "matched_cells",
    "never_inserted",
    "notes_markdown",
    "out_of_fold",
    "over_seeds",
    "pair_counts",
    "pair_levels_sentence",
    "paper_exp2_tables",
    "paper_pair_positives",
    "per_task_auc",
    "pool_pairs",
    "pool_split_sentence",
    "pooled_auc",
    "random_scores",
    "random_split",
    "range_labels",
    "range_runs",
    "range_runs_sentence",
    "recency",
    "residual_recency_auc",
    "run_extraction_rates",
    "run_positives",
    "score_runs",
    "seed_spread_sentence",
    "sequence_lengths",
    "setup_table",
    "source_headline",
    "split_point",
    "stack_frames",
    "step_bins",
    "suffix_sentence",
    "target_frame",
    "target_frames",
    "task_splits",
    "training_steps",
    "wide_auc",
    "window_end_baseline",
    "window_gradient",
    "window_order_sentence",
    "window_share",
]

#: folder of the transcribed source tables
from analysis.core.paths import DATA_DIR  # noqa: E402

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
#: baseline rows of the source's tables -> the single feature column fit (None: random scores)
BASELINES: dict[str, tuple[str, ...] | None] = {
    "cross-model baseline": ("cross_model",),
    "window-end baseline": ("window_end",),
    "random baseline": None,
}
#: Experiment 3's hardness measures -> the column that plays "hardness"
HARDNESS_MEASURES = {"full": "hardness", "suffix": "hardness_sfx"}
#: split kinds of :func:`evaluate`
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


class PredictingError(ValueError):
    """Bad input to the predicting chapter's computations, raised before any work."""


# ---------------------------------------------------------------------------
# Labels
# ---------------------------------------------------------------------------


def split_point(n_tokens: int) -> tuple[int, int]:
    """Prefix and suffix lengths of a sequence of ``n_tokens`` tokens.

    Returns
    -------
    (P, L) : tuple of int
        ``P = min(32, n // 2)`` prefix tokens and ``L = min(32, n - P)`` suffix
        tokens (positions ``P .. P + L - 1``).

    Raises
    ------
    PredictingError
        If ``n_tokens`` is not an integer >= 2 (no prefix and suffix to cut).
    """
    if not isinstance(n_tokens, (int, np.integer)) or isinstance(n_tokens, bool) or n_tokens < 2:
        raise PredictingError(f"n_tokens must be an integer >= 2, got {n_tokens!r}")
    p = min(MAX_PREFIX, int(n_tokens) // 2)
    return p, min(MAX_SUFFIX, int(n_tokens) - p)


def extract_label(argmax_match: Sequence[bool]) -> int:
    """The ``extract`` label from teacher-forced per-position results.

    Parameters
    ----------
    argmax_match : sequence of bool
        For each suffix position, whether the target token is the model's argmax.

    Returns
    -------
    int
        1 iff every suffix position matches (greedy decoding reproduces the
        suffix exactly), else 0.
    """
    arr = np.asarray(argmax_match)
    if arr.ndim != 1 or arr.size == 0:
        raise PredictingError(
            f"argmax_match must be a non-empty 1-d sequence of bool, got shape {arr.shape}"
        )
    if arr.dtype != bool and not np.isin(arr, (0, 1)).all():
        raise PredictingError(f"argmax_match must hold booleans (or 0/1), got {arr[:5]!r}")
    return int(arr.astype(bool).all())


def sequence_scores(model, sequences: Mapping[str, Sequence[int]],
                    progress: bool | str = False) -> pd.DataFrame:
    """Label and per-token results of every sequence under one model.

    The sequences are scored by teacher forcing in one batched, cached pass
    (:meth:`analysis.models.Model.score_ids`). The prefix and suffix are cut
    by :func:`split_point`.

    Parameters
    ----------
    model
        A model of the shared interface that can score token ids (a local one).
    sequences
        ``seq_id`` → token ids of the whole sequence, as the model was trained on it.

    Returns
    -------
    DataFrame
        One row per sequence: ``seq_id``, ``model`` (the model's name),
        ``n_tokens``, ``P``, ``L``, ``nll`` (mean per-token NLL of tokens 1..n-1,
        nats), ``nll_suffix`` (mean NLL of the suffix), ``suffix_acc`` (share of
        suffix positions where the target is the argmax) and ``extract``
        (:func:`extract_label`).
    """
    ids = list(sequences)
    short = [i for i in ids if len(sequences[i]) < 2]
    if short:
        raise PredictingError(f"sequences need at least 2 tokens; too short: {short[:5]}")
    scores = model.score_ids([list(sequences[i]) for i in ids], progress=progress)
    rows = []
    for seq_id, s in zip(ids, scores):
        n = len(sequences[seq_id])
        P, L = split_point(n)
        # score_ids position j scores token j + 1, so the suffix P .. P+L-1 is P-1 .. P+L-2
        top = s["argmax"][P - 1 : P - 1 + L]
        lp = s["logprobs"]
        rows.append({
            "seq_id": seq_id, "model": model.name, "n_tokens": n, "P": P, "L": L,
            "nll": float(-lp.mean()), "nll_suffix": float(-lp[P - 1 : P - 1 + L].mean()),
            "suffix_acc": float(top.mean()), "extract": extract_label(top),
        })
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------
# Features
# ---------------------------------------------------------------------------


def exposure_copies(frame: pd.DataFrame) -> pd.Series:
    """A sequence frame's exposure count: its ``copies`` column, or else ``copies_seen``."""
    for col in ("copies", "copies_seen"):
        if col in frame.columns:
            return frame[col]
    raise PredictingError(
        f"the exposure frame needs a 'copies' or 'copies_seen' column, got {list(frame.columns)}"
    )


def _require(frame: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise PredictingError(f"{what} lacks column(s) {missing}; it has {list(frame.columns)}")


def _check_T(T) -> int:
    if not isinstance(T, (int, np.integer)) or isinstance(T, bool) or T < 1:
        raise PredictingError(f"T (training steps) must be a positive integer, got {T!r}")
    return int(T)


def log_freq(copies) -> np.ndarray:
    """``log(1 + copies)`` (natural log); 0 for a sequence never inserted."""
    c = np.asarray(copies, dtype=float)
    if np.isnan(c).any() or (c < 0).any():
        raise PredictingError("copies must be non-negative numbers without NaN")
    return np.log1p(c)


def never_inserted(copies, last_step) -> np.ndarray:
    """Whether each sequence was never inserted: 0 copies, or no last step (NaN or negative)."""
    c = np.asarray(copies, dtype=float)
    s = np.asarray(last_step, dtype=float)
    return (c == 0) | np.isnan(s) | (s < 0)


def recency(last_step, T: int, copies=None) -> np.ndarray:
    """``(T - last_step) / T``: fraction of training after the last copy; 1.0 if never inserted.

    Parameters
    ----------
    last_step : array-like
        Step of the last inserted copy (0-based); NaN or negative for none.
    T : int
        Training steps of the target model.
    copies : array-like, optional
        Copies inserted; 0 also means never inserted.
    """
    T = _check_T(T)
    s = np.asarray(last_step, dtype=float)
    c = np.ones_like(s) if copies is None else np.asarray(copies, dtype=float)
    never = never_inserted(c, s)
    late = ~never & (s >= T)
    if late.any():
        raise PredictingError(f"last_step must be < T={T}; got {s[late][:5].tolist()}")
    return np.where(never, 1.0, (T - np.where(never, 0.0, s)) / T)


def hardness(nll_table: pd.DataFrame, target_standard: str | None) -> pd.DataFrame:
    """Intrinsic hardness: mean per-token NLL averaged over the reference standard models.

    Parameters
    ----------
    nll_table : DataFrame
        Long table ``seq_id, model, nll, nll_suffix``: per sequence and standard
        model, the mean per-token NLL of the whole sequence and of its suffix.
    target_standard : str or None
        The target's counterfactual standard model (same size and token count),
        left out of the average. ``None`` averages over every model.

    Returns
    -------
    DataFrame
        One row per ``seq_id`` with ``hardness`` (mean of ``nll``) and
        ``hardness_sfx`` (mean of ``nll_suffix``) over the remaining models,
        each sequence over the models that scored it.
    """
    _require(nll_table, ("seq_id", "model", "nll", "nll_suffix"), "nll_table")
    models = sorted(nll_table["model"].astype(str).unique())
    if target_standard is not None and target_standard not in models:
        raise PredictingError(
            f"target_standard {target_standard!r} is not a model of nll_table; models: {models}"
        )
    if nll_table.duplicated(["seq_id", "model"]).any():
        raise PredictingError("nll_table has more than one row for some (seq_id, model)")
    ref = nll_table[nll_table["model"] != target_standard]
    if ref.empty:
        raise PredictingError(
            f"no reference model is left once {target_standard!r} is excluded; models: {models}"
        )
    out = ref.groupby("seq_id", sort=True)[["nll", "nll_suffix"]].mean()
    return out.rename(columns={"nll": "hardness", "nll_suffix": "hardness_sfx"}).reset_index()


def features(exposure: pd.DataFrame, T: int, nll_table: pd.DataFrame,
             exclude_model: str | None) -> pd.DataFrame:
    """The three features of every sequence of one target model's exposure table.

    Parameters
    ----------
    exposure : DataFrame
        One row per sequence: ``seq_id, task, copies`` (or ``copies_seen``),
        ``last_step`` and any other columns, which are kept.
    T : int
        Training steps of the target.
    nll_table : DataFrame
        Input of :func:`hardness`.
    exclude_model : str or None
        The target's counterfactual standard model, left out of the hardness.

    Returns
    -------
    DataFrame
        ``exposure`` (same row order) with ``copies``, ``log_freq``,
        ``recency``, ``hardness`` and ``hardness_sfx``.
    """
    T = _check_T(T)
    _require(exposure, ("seq_id", "task", "last_step"), "the exposure frame")
    if exposure["seq_id"].duplicated().any():
        dup = exposure.loc[exposure["seq_id"].duplicated(), "seq_id"].iloc[0]
        raise PredictingError(f"the exposure frame lists seq_id {dup!r} twice")
    hard = hardness(nll_table, exclude_model)
    missing = sorted(set(exposure["seq_id"]) - set(hard["seq_id"]))
    if missing:
        raise PredictingError(f"{len(missing)} sequence(s) have no NLL in nll_table, e.g. {missing[:3]}")
    out = exposure.copy()
    copies = exposure_copies(out)
    out["copies"] = copies.to_numpy()
    out["log_freq"] = log_freq(copies)
    out["recency"] = recency(out["last_step"], T, copies)
    hard = hard.set_index("seq_id")
    out["hardness"] = out["seq_id"].map(hard["hardness"]).to_numpy(float)
    out["hardness_sfx"] = out["seq_id"].map(hard["hardness_sfx"]).to_numpy(float)
    return out


# ---------------------------------------------------------------------------
# Prediction model, AUC and baselines
# ---------------------------------------------------------------------------


def fit_score(train_X, train_y, test_X) -> np.ndarray:
    """Scores of ``test_X`` from ``StandardScaler`` → ``LinearRegression`` fit on the 0/1 label.

    A feature constant in the training set is scaled to 0 and gets no weight,
    so a set of such features scores every example alike (AUC 0.5).
    """
    Xtr = np.asarray(train_X, dtype=float)
    Xte = np.asarray(test_X, dtype=float)
    Xtr = Xtr[:, None] if Xtr.ndim == 1 else Xtr
    Xte = Xte[:, None] if Xte.ndim == 1 else Xte
    y = np.asarray(train_y, dtype=float)
    if Xtr.ndim != 2 or Xte.ndim != 2 or Xtr.shape[1] != Xte.shape[1] or len(Xtr) != len(y) or not len(y):
        raise PredictingError(
            f"fit_score needs train_X (n, k), train_y (n,) and test_X (m, k), got "
            f"{Xtr.shape}, {y.shape}, {Xte.shape}"
        )
    if not (np.isfinite(Xtr).all() and np.isfinite(Xte).all() and np.isfinite(y).all()):
        raise PredictingError("fit_score's inputs must be finite (no NaN)")
    model = make_pipeline(StandardScaler(), LinearRegression())
    model.fit(Xtr, y)
    return model.predict(Xte)


def _binary(y, what: str = "y") -> np.ndarray:
    arr = np.asarray(y)
    if arr.ndim != 1 or not np.isin(arr, (0, 1)).all():
        raise PredictingError(f"{what} must be a 1-d array of 0/1 labels")
    return arr.astype(int)


def pooled_auc(y, score) -> float:
    """AUC-ROC of ``score`` over all examples at once (``sklearn.metrics.roc_auc_score``)."""
    y = _binary(y)
    s = np.asarray(score, dtype=float)
    if s.shape != y.shape:
        raise PredictingError(f"y and score differ in shape: {y.shape} vs {s.shape}")
    if y.min() == y.max():
        raise PredictingError(f"the AUC needs both classes; all {len(y)} labels are the same")
    return float(roc_auc_score(y, s))


def per_task_auc(y, score, task) -> float:
    """Mean over tasks, with equal weight, of the AUC within each task.

    Each AUC compares only sequences of the same task. A task whose examples
    are all positive or all negative has no AUC and is skipped; the mean is
    over the tasks that hold both classes (an error if none does).
    """
    y = _binary(y)
    s = np.asarray(score, dtype=float)
    t = np.asarray(task)
    if not (s.shape == y.shape == t.shape):
        raise PredictingError(f"y, score and task differ in shape: {y.shape}, {s.shape}, {t.shape}")
    aucs = [roc_auc_score(y[t == k], s[t == k]) for k in pd.unique(t) if 0 < y[t == k].sum() < (t == k).sum()]
    if not aucs:
        raise PredictingError("no task holds both classes, so no per-task AUC is defined")
    return float(np.mean(aucs))


def _rng(rng) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def random_scores(n: int, rng) -> np.ndarray:
    """``n`` uniform random scores in [0, 1) (the random baseline); ``rng`` a Generator or seed."""
    if not isinstance(n, (int, np.integer)) or n < 0:
        raise PredictingError(f"n must be a non-negative integer, got {n!r}")
    return _rng(rng).random(int(n))


def cross_model_scores(suffix_nll_by_model: pd.DataFrame, exclude: str | Sequence[str]) -> pd.Series:
    """The cross-model baseline: mean percentile rank of the suffix NLL under the other models.

    Parameters
    ----------
    suffix_nll_by_model : DataFrame
        One row per sequence (any index, e.g. ``seq_id``), one column per
        perturbed model: the sequence's mean suffix NLL under that model.
    exclude : str or sequence of str
        The target model (and any other column to leave out).

    Returns
    -------
    Series ``cross_model``
        Per sequence, the mean over the remaining models of its percentile
        rank among the rows, lower NLL ranking higher: rank of ``-nll``
        (ties averaged) over the number of ranked rows, in ``(0, 1]``. NaN
        entries are not ranked and not averaged.
    """
    excl = [exclude] if isinstance(exclude, str) else list(exclude)
    unknown = [m for m in excl if m not in suffix_nll_by_model.columns]
    if unknown:
        raise PredictingError(
            f"exclude names model(s) {unknown} not among the columns {list(suffix_nll_by_model.columns)}"
        )
    others = suffix_nll_by_model.drop(columns=excl)
    if others.shape[1] == 0:
        raise PredictingError("no other model is left once the target is excluded")
    ranks = (-others.astype(float)).rank(axis=0, method="average", pct=True)
    return ranks.mean(axis=1).rename("cross_model")


def window_end_baseline(window):
    """End of the insertion window as a fraction of training (the window-end baseline).

    ``window`` is a lab window name (:data:`analysis.lab.config.WINDOWS`: q1
    0.25, q2 0.5, q3 0.75, q4 1.0, early 0.5, late 1.0, all 1.0) or an array /
    Series of them; returns a float or an array.
    """
    if isinstance(window, str):
        if window not in WINDOWS:
            raise PredictingError(f"window must be one of {sorted(WINDOWS)}, got {window!r}")
        return float(WINDOWS[window][1])
    vals = list(window)
    bad = sorted({str(w) for w in vals if w not in WINDOWS})
    if bad:
        raise PredictingError(f"window must be one of {sorted(WINDOWS)}, got {bad}")
    return np.array([WINDOWS[w][1] for w in vals], dtype=float)


# ---------------------------------------------------------------------------
# Splits and evaluation
# ---------------------------------------------------------------------------


def random_split(y, seed: int = 0, test_size: float = PAPER_TEST_SIZE) -> tuple[np.ndarray, np.ndarray]:
    """One stratified split: positions of the train (80%) and test (20%) examples.

    ``sklearn.model_selection.train_test_split(stratify=y, random_state=seed)``;
    the test set has ``ceil(test_size * n)`` examples and the class ratio of ``y``.
    """
    y = _binary(y)
    try:
        train, test = train_test_split(np.arange(len(y)), test_size=test_size, stratify=y,
                                       random_state=seed)
    except ValueError as err:
        raise PredictingError(
            f"too few positives to split: {int(y.sum())} positives and {int(len(y) - y.sum())} "
            f"negatives ({err})"
        ) from err
    return np.sort(train), np.sort(test)


def task_splits(task) -> list[tuple[np.ndarray, np.ndarray]]:
    """Leave-one-task-out folds: ``(train, test)`` positions, one fold per task in sorted order."""
    t = np.asarray(task)
    tasks = sorted(pd.unique(t), key=str)
    if len(tasks) < 2:
        raise PredictingError(f"leave-one-task-out needs at least 2 tasks, got {tasks}")
    idx = np.arange(len(t))
    return [(idx[t != k], idx[t == k]) for k in tasks]


def group_kfold(groups, k: int = PAPER_K) -> list[tuple[np.ndarray, np.ndarray]]:
    """``k`` folds of ``sklearn.model_selection.GroupKFold``: no group is on both sides of a fold.

    Every example is in exactly one test fold, so the folds' held-out
    predictions pool into one prediction per example (:func:`out_of_fold`).
    """
    g = np.asarray(groups)
    n_groups = len(pd.unique(g))
    if not isinstance(k, (int, np.integer)) or k < 2:
        raise PredictingError(f"k must be an integer >= 2, got {k!r}")
    if k > n_groups:
        raise PredictingError(
            f"too few groups to split: k={k} folds need at least {k} groups, got {n_groups}"
        )
    folds = GroupKFold(n_splits=int(k)).split(np.zeros((len(g), 1)), groups=g)
    return [(np.sort(tr), np.sort(te)) for tr, te in folds]


def out_of_fold(X, y, folds: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Held-out scores of :func:`fit_score` for every example, from folds that partition the rows."""
    X = np.asarray(X, dtype=float)
    X = X[:, None] if X.ndim == 1 else X
    y = np.asarray(y)
    scores = np.full(len(y), np.nan)
    for train, test in folds:
        scores[test] = fit_score(X[train], y[train], X[test])
    if np.isnan(scores).any():
        raise PredictingError("the folds leave some examples without a held-out score")
    return scores


def feature_columns(feature_set, hardness: str = "full") -> tuple[str, ...] | None:
    """Columns fit for a row of the source's tables.

    ``feature_set`` is a key of :data:`FEATURE_SETS` or :data:`BASELINES`
    (``None`` for the random baseline), or a sequence of column names.
    ``hardness="suffix"`` replaces ``hardness`` by ``hardness_sfx`` (Experiment 3).
    """
    if hardness not in HARDNESS_MEASURES:
        raise PredictingError(f"hardness must be one of {sorted(HARDNESS_MEASURES)}, got {hardness!r}")
    if isinstance(feature_set, str):
        if feature_set in FEATURE_SETS:
            cols = FEATURE_SETS[feature_set]
        elif feature_set in BASELINES:
            return BASELINES[feature_set]
        else:
            raise PredictingError(
                f"feature_set must be one of {list(FEATURE_SETS) + list(BASELINES)} or a list of "
                f"columns, got {feature_set!r}"
            )
    else:
        cols = tuple(feature_set)
        if not cols or not all(isinstance(c, str) for c in cols):
            raise PredictingError(f"feature_set must name at least one column, got {feature_set!r}")
    return tuple(HARDNESS_MEASURES[hardness] if c == "hardness" else c for c in cols)


def check_splittable(y, split: str, *, task=None, groups=None, k: int = PAPER_K, seed: int = 0,
                     name: str = "frame") -> None:
    """Raise :class:`PredictingError` ("too few ... to split") when ``split`` cannot be made on ``y``.

    Every split needs at least 2 positives and 2 negatives; the random split
    also needs a test set holding both classes; the task split at least 2
    tasks and one task holding both classes; the group split at least ``k``
    groups. ``name`` (the target or cell) is named in the message.
    """
    if split not in SPLITS:
        raise PredictingError(f"split must be one of {SPLITS}, got {split!r}")
    y = _binary(y, f"the labels of {name}")
    pos, neg = int(y.sum()), int(len(y) - y.sum())
    counts = f"{pos} positives and {neg} negatives"
    if pos < 2 or neg < 2:
        raise PredictingError(
            f"too few positives to split {name!r} ({split} split): {counts}, need at least 2 of each"
        )
    if split == "random":
        try:
            _, test = random_split(y, seed)
        except PredictingError as err:
            raise PredictingError(f"too few positives to split {name!r} (random split): {counts}") from err
        if y[test].min() == y[test].max():
            raise PredictingError(
                f"too few positives to split {name!r} (random split): {counts} leave a test set of one class"
            )
    elif split == "task":
        t = np.asarray(task)
        tasks = pd.unique(t)
        both = [k_ for k_ in tasks if 0 < y[t == k_].sum() < (t == k_).sum()]
        if len(tasks) < 2 or not both:
            raise PredictingError(
                f"too few positives to split {name!r} (task split): {counts} in {len(tasks)} task(s), "
                f"{len(both)} of them with both classes"
            )
    else:
        n_groups = len(pd.unique(np.asarray(groups)))
        if not isinstance(k, (int, np.integer)) or k < 2 or k > n_groups:
            raise PredictingError(
                f"too few groups to split {name!r} (group split): k={k} folds need at least {k} groups, "
                f"got {n_groups} ({counts})"
            )


def evaluate(frame: pd.DataFrame, feature_set, split: str, seed: int = 0, *, label: str = "extract",
             task: str = "task", group: str = "seq_id", hardness: str = "full", k: int = PAPER_K,
             name: str = "frame") -> float:
    """Held-out AUC-ROC of one row of the source's tables on one split.

    Parameters
    ----------
    frame : DataFrame
        One row per example: the label, the feature columns, ``task`` and ``group``.
    feature_set : str or sequence of str
        See :func:`feature_columns`; ``"random baseline"`` scores with
        :func:`random_scores` (seeded by ``seed``) instead of a fit.
    split : {"random", "task", "group"}
        ``"random"``: one stratified 80/20 split (:func:`random_split` with
        ``random_state=seed``; the source keeps 0 and varies the sampling
        seed), AUC on the 20% test set. ``"task"``: leave-one-task-out, mean of
        the per-task AUCs of the held-out predictions (:func:`per_task_auc`).
        ``"group"``: ``k``-fold grouped by ``group``, AUC of the pooled
        out-of-fold predictions.
    hardness : {"full", "suffix"}
        Which column plays ``hardness``.
    name : str
        The target or cell, named in errors.

    Raises
    ------
    PredictingError
        Unknown split or feature set, a missing or NaN column, or too few
        positives (or negatives, tasks, groups) to split, before any fit.
    """
    if split not in SPLITS:
        raise PredictingError(f"split must be one of {SPLITS}, got {split!r}")
    cols = feature_columns(feature_set, hardness)
    need = [label, *(cols or ()), *{"task": [task], "group": [group]}.get(split, [])]
    _require(frame, need, f"the frame of {name!r}")
    if frame[need].isna().any().any():
        bad = [c for c in need if frame[c].isna().any()]
        raise PredictingError(f"the frame of {name!r} has NaN in column(s) {bad}")
    y = _binary(frame[label].to_numpy(), f"{name!r} column {label!r}")
    tasks = frame[task].to_numpy() if split == "task" else None
    groups = frame[group].to_numpy() if split == "group" else None
    check_splittable(y, split, task=tasks, groups=groups, k=k, seed=seed, name=name)
    rng = np.random.default_rng(seed)
    X = None if cols is None else frame[list(cols)].to_numpy(float)

    if split == "random":
        train, test = random_split(y, seed)
        s = random_scores(len(test), rng) if X is None else fit_score(X[train], y[train], X[test])
        return pooled_auc(y[test], s)
    folds = task_splits(tasks) if split == "task" else group_kfold(groups, k)
    s = random_scores(len(y), rng) if X is None else out_of_fold(X, y, folds)
    return per_task_auc(y, s, tasks) if split == "task" else pooled_auc(y, s)


def over_seeds(fn: Callable[[int], float], seeds: Iterable[int] = PAPER_SEEDS, ddof: int = 1):
    """Mean and standard deviation over seeds of ``fn(seed)``.

    Returns ``(mean, sd)`` floats when ``fn`` returns a number; when it returns
    a mapping or Series, a DataFrame with columns ``mean`` and ``sd`` indexed
    by its keys. ``sd`` uses ``ddof`` (1: sample sd; NaN for a single seed).
    """
    seeds = list(seeds)
    if not seeds:
        raise PredictingError("over_seeds needs at least one seed")
    results = [fn(s) for s in seeds]
    if isinstance(results[0], (Mapping, pd.Series)):
        table = pd.DataFrame([pd.Series(r) for r in results])
        sd = table.std(ddof=ddof) if len(seeds) > ddof else table.mean() * np.nan
        return pd.DataFrame({"mean": table.mean(), "sd": sd})
    arr = np.asarray(results, dtype=float)
    sd = float(arr.std(ddof=ddof)) if len(arr) > ddof else float("nan")
    return float(arr.mean()), sd


THREE = "log_freq + recency + hardness"
#: hardness measures as the source's Experiment 3 tables name them
MEASURE_LABELS = {"full": "full sequence", "suffix": "suffix"}


def auc_rows(make_frame: Callable[[int], pd.DataFrame], split: str, baselines: Sequence[str],
             seeds: Iterable[int] = PAPER_SEEDS, *, hardness_rows: Sequence[str] = ("full",),
             name: str = "frame", random_state: int = 0, **kw) -> pd.DataFrame:
    """One column of the source's AUC tables: every feature set and baseline, mean over seeds.

    Parameters
    ----------
    make_frame : callable seed -> DataFrame
        The examples of one seed (a balanced subsample, the pairs of a pool,
        a matched set).
    split : {"random", "task", "group"}
        As in :func:`evaluate`. The random split keeps ``random_state`` for
        every seed, as the source does; the random baseline's scores follow the seed.
    baselines : sequence of str
        Keys of :data:`BASELINES` to add after the feature sets.
    hardness_rows : sequence of {"full", "suffix"}
        Each feature set holding hardness gets one row per measure (Experiment 3
        has both); feature sets without it get one row, measure ``"—"``.
    kw
        Passed to :func:`evaluate` (``k``, ``group``, ``task``, ``label``).

    Returns
    -------
    DataFrame
        ``features, hardness, auc, sd, note``: one row per feature set (and
        measure: "full sequence", "suffix" or "—") and baseline, then a row
        ``"sd (3 features)"`` per measure whose ``auc`` is the sd over seeds
        of that 3-feature row. When the
        examples cannot be split (too few positives, tasks or groups), every
        ``auc`` is NaN and ``note`` holds the reason, so a table shows "—"
        where the source does.
    """
    seeds = list(seeds)
    rows = []
    for label, cols in FEATURE_SETS.items():
        measures = hardness_rows if "hardness" in cols else ("—",)
        rows += [(label, m) for m in measures]
    rows += [(b, "—") for b in baselines]
    out = []
    try:
        frames = {s: make_frame(s) for s in seeds}
        for label, measure in rows:
            h = "full" if measure == "—" else measure

            def one(seed, label=label, h=h):
                if split != "random":
                    return evaluate(frames[seed], label, split, seed, hardness=h, name=name, **kw)
                if label == "random baseline":  # the fixed split, fresh random scores per seed
                    return _random_baseline_fixed_split(frames[seed], seed, random_state, name, kw)
                return evaluate(frames[seed], label, split, random_state, hardness=h, name=name, **kw)

            mean, sd = over_seeds(one, seeds)
            out.append({"features": label, "hardness": measure, "auc": mean, "sd": sd})
    except PredictingError as err:
        sd_rows = [("sd (3 features)", m) for lab, m in rows if lab == THREE]
        table = pd.DataFrame([{"features": lab, "hardness": m, "auc": np.nan, "sd": np.nan, "note": str(err)}
                              for lab, m in rows + sd_rows])
    else:
        out += [{"features": "sd (3 features)", "hardness": r["hardness"], "auc": r["sd"], "sd": np.nan}
                for r in out if r["features"] == THREE]
        table = pd.DataFrame(out).assign(note="")
    table["hardness"] = table["hardness"].replace(MEASURE_LABELS)
    return table


def _random_baseline_fixed_split(frame, seed, random_state, name, kw) -> float:
    label = kw.get("label", "extract")
    y = _binary(frame[label].to_numpy(), f"{name!r} column {label!r}")
    check_splittable(y, "random", seed=random_state, name=name)
    _, test = random_split(y, random_state)
    return pooled_auc(y[test], random_scores(len(test), np.random.default_rng(seed)))


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


def check_targets(targets: Iterable[str], exposures: Mapping[str, pd.DataFrame]) -> list[str]:
    """Check that every target model has an exposure table, before any work.

    Returns the targets as a list; raises :class:`PredictingError` naming the
    targets without a table (or with a table lacking ``seq_id``, ``last_step``
    or a copies column) and the targets that have one.
    """
    targets = list(targets)
    missing = [t for t in targets if t not in exposures or exposures[t] is None]
    if missing:
        raise PredictingError(
            f"target model(s) {missing} have no exposure table; tables exist for {sorted(exposures)}"
        )
    for t in targets:
        _require(exposures[t], ("seq_id", "last_step"), f"the exposure table of target {t!r}")
        exposure_copies(exposures[t])
    return targets


def check_pool(pool: Sequence[str], runs: Iterable[str]) -> list[str]:
    """Check that a pool names at least two distinct runs, all present in ``runs``."""
    pool = list(pool)
    runs = sorted({str(r) for r in runs})
    unknown = [r for r in pool if r not in runs]
    if unknown:
        raise PredictingError(f"the pool names run(s) {unknown} that do not exist; runs: {runs}")
    if len(set(pool)) < 2 or len(set(pool)) != len(pool):
        raise PredictingError(f"a pool must name at least two distinct runs, got {pool}")
    return pool


# ---------------------------------------------------------------------------
# Experiment 1: balanced subsample
# ---------------------------------------------------------------------------


def balanced_subsample(frame: pd.DataFrame, seed: int, label: str = "extract") -> pd.DataFrame:
    """Every example of the smaller class and as many drawn uniformly from the other.

    The source keeps every positive and draws the same number of negatives
    (its targets all have fewer positives than negatives). When positives
    outnumber negatives, every negative is kept and as many positives drawn.
    Rows keep their index and original order.
    """
    _require(frame, (label,), "the frame")
    y = _binary(frame[label].to_numpy(), f"column {label!r}")
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    if not len(pos) or not len(neg):
        raise PredictingError(
            f"balanced_subsample needs both classes, got {len(pos)} positives and {len(neg)} negatives"
        )
    rng = np.random.default_rng(seed)
    if len(pos) <= len(neg):
        keep = np.concatenate([pos, rng.choice(neg, size=len(pos), replace=False)])
    else:
        keep = np.concatenate([rng.choice(pos, size=len(neg), replace=False), neg])
    return frame.iloc[np.sort(keep)]


# ---------------------------------------------------------------------------
# Experiment 2: injection-range pairs
# ---------------------------------------------------------------------------


def injection_range_pairs(labels: pd.DataFrame, pool: Sequence[str], seed: int,
                          label: str = "extract") -> pd.DataFrame:
    """One positive and one negative run per sequence, drawn from the runs of a pool.

    Parameters
    ----------
    labels : DataFrame
        One row per (sequence, run): ``seq_id, run, copies, extract, window``
        and any other columns (features, task, ...), which are kept.
    pool : sequence of str
        The runs to draw from (at least two).
    seed : int
        Seed of the draws.

    Returns
    -------
    DataFrame
        For every inserted sequence (copies >= 1) that is positive under at
        least one run of the pool and negative under at least one other, two
        of its rows: a positive run drawn at random, then a negative run drawn
        at random. Sequences in sorted ``seq_id`` order; ``pair`` numbers them
        from 0. Both rows of a pair share the sequence, hence task and copies.

    Raises
    ------
    PredictingError
        A pool naming a run not in ``labels``, a duplicate (seq_id, run) row, or
        a sequence whose copies differ between the pool's runs.
    """
    _require(labels, ("seq_id", "run", "copies", label), "the labels frame")
    pool = check_pool(pool, labels["run"].unique())
    sub = labels[labels["run"].isin(pool)]
    if sub.duplicated(["seq_id", "run"]).any():
        raise PredictingError("the labels frame has more than one row for some (seq_id, run)")
    varying = sub.groupby("seq_id")["copies"].nunique()
    if (varying > 1).any():
        raise PredictingError(
            f"sequence(s) {list(varying[varying > 1].index[:3])} have different copies across the "
            f"runs {pool}; a pair must differ only in the insertion schedule"
        )
    sub = sub[sub["copies"] >= 1].reset_index(drop=True)
    _binary(sub[label].to_numpy(), f"column {label!r}")
    rng = np.random.default_rng(seed)
    rows, pair_ids = [], []
    for _, g in sub.groupby("seq_id", sort=True):
        order = g.sort_values("run", key=lambda r: r.map(pool.index))
        pos = order.index[order[label] == 1]
        neg = order.index[order[label] == 0]
        if len(pos) and len(neg):
            rows += [pos[rng.integers(len(pos))], neg[rng.integers(len(neg))]]
            pair_ids += [len(pair_ids) // 2] * 2
    out = sub.loc[rows].copy()
    out["pair"] = np.asarray(pair_ids, dtype=np.int64)
    return out.reset_index(drop=True)


# ---------------------------------------------------------------------------
# Experiment 3: matched cells and strata
# ---------------------------------------------------------------------------


def matched_cells(frame: pd.DataFrame, lo: float = PAPER_CELL_RANGE[0], hi: float = PAPER_CELL_RANGE[1],
                  label: str = "extract") -> pd.DataFrame:
    """Inserted sequences of the (target, copies) cells with ``lo <= positive rate <= hi``.

    ``frame`` has one row per (target, sequence) with ``target, copies`` and the
    label. Rows with 0 copies are dropped first; the kept rows get ``pos_rate``,
    their cell's positive rate.
    """
    _require(frame, ("target", "copies", label), "the frame")
    if not 0 <= lo <= hi <= 1:
        raise PredictingError(f"need 0 <= lo <= hi <= 1, got lo={lo}, hi={hi}")
    ins = frame[frame["copies"] >= 1].copy()
    _binary(ins[label].to_numpy(), f"column {label!r}")
    ins["pos_rate"] = ins.groupby(["target", "copies"])[label].transform("mean")
    return ins[(ins["pos_rate"] >= lo) & (ins["pos_rate"] <= hi)]


def _strata_keys(frame: pd.DataFrame) -> list[str]:
    return [c for c in ("target", "copies") if c in frame.columns] + ["task", "stratum"]


def match_strata(cell_frame: pd.DataFrame, step_bin: int = PAPER_STEP_BIN, seed: int = 0,
                 label: str = "extract") -> pd.DataFrame:
    """Match positives and negatives 1:1 within (task, last-step bin) strata of each cell.

    Strata are keyed by ``target`` and ``copies`` (when present: the cell),
    ``task`` and ``stratum = last_step // step_bin``. Each stratum keeps
    ``min(#pos, #neg)`` rows of each class, drawn at random without
    replacement (strata in sorted key order); the result is exactly 50/50
    within every stratum. Rows keep their index and order and gain ``stratum``.
    """
    _require(cell_frame, ("task", "last_step", label), "the cell frame")
    if not isinstance(step_bin, (int, np.integer)) or step_bin < 1:
        raise PredictingError(f"step_bin must be a positive integer, got {step_bin!r}")
    steps = cell_frame["last_step"].to_numpy(float)
    if np.isnan(steps).any() or (steps < 0).any():
        raise PredictingError("match_strata needs inserted sequences only (every last_step >= 0)")
    y = _binary(cell_frame[label].to_numpy(), f"column {label!r}")
    framed = cell_frame.assign(stratum=(steps // step_bin).astype(np.int64))
    rng = np.random.default_rng(seed)
    keep = []
    pos_in = np.arange(len(framed))
    strata = framed.groupby(_strata_keys(framed), sort=True).indices
    for _, idx in sorted(strata.items(), key=lambda kv: kv[0]):
        p, n = pos_in[idx][y[idx] == 1], pos_in[idx][y[idx] == 0]
        m = min(len(p), len(n))
        if m:
            keep += [rng.choice(p, m, replace=False), rng.choice(n, m, replace=False)]
    return framed.iloc[np.sort(np.concatenate(keep))] if keep else framed.iloc[:0]


def residual_recency_auc(matched: pd.DataFrame, label: str = "extract") -> float:
    """Size-weighted mean over strata of the within-stratum AUC of a later last copy.

    The score is ``last_step``; strata are those of :func:`match_strata` (its
    ``stratum`` column is required). Only strata holding both classes count
    (after matching, all do); 0.5 means no recency signal is left.
    """
    _require(matched, ("task", "last_step", "stratum", label), "the matched frame")
    total, weight = 0.0, 0
    for _, g in matched.groupby(_strata_keys(matched), sort=True):
        y = _binary(g[label].to_numpy(), f"column {label!r}")
        if 0 < y.sum() < len(y):
            total += len(g) * roc_auc_score(y, g["last_step"].to_numpy(float))
            weight += len(g)
    if not weight:
        raise PredictingError("no stratum holds both classes, so the residual recency AUC is undefined")
    return total / weight


# ---------------------------------------------------------------------------
# Dataset statistics in the source's layout
# ---------------------------------------------------------------------------


def _long(frames, key: str) -> pd.DataFrame:
    if isinstance(frames, pd.DataFrame):
        _require(frames, (key,), "the frame")
        return frames
    if not frames:
        raise PredictingError("no frames given")
    return pd.concat([f.assign(**{key: name}) for name, f in frames.items()], ignore_index=True)


def _steps_since(frame: pd.DataFrame, T) -> np.ndarray:
    if T is None:
        _require(frame, ("T",), "the frame (or pass T)")
        T = frame["T"].to_numpy(float)
    else:
        T = _check_T(T)
    return T - frame["last_step"].to_numpy(float)


def _quartiles(x: np.ndarray) -> tuple[float, float, float]:
    return tuple(float(v) for v in np.percentile(x, [50, 25, 75]))


def exp1_stats(samples, seed: int = 0, label: str = "extract") -> pd.DataFrame:
    """Experiment 1's dataset table from the balanced subsamples.

    Parameters
    ----------
    samples : mapping target -> DataFrame, or DataFrame with ``target``
        The balanced subsample of each target (``copies`` and the label).
    seed : int
        ``random_state`` of the random split whose test set is counted.

    Returns
    -------
    DataFrame
        ``target, n_examples, n_pos, n_neg, controls_pos, controls_neg, test_n,
        test_pos`` (controls: 0 copies), targets in order of appearance;
        ``test_n`` and ``test_pos`` are missing for a target too small to split.
    """
    frame = _long(samples, "target")
    _require(frame, ("copies", label), "the samples")
    rows = []
    for target, g in frame.groupby("target", sort=False):
        y = _binary(g[label].to_numpy(), f"column {label!r}")
        control = g["copies"].to_numpy() == 0
        try:
            _, test = random_split(y, seed)
            test_n, test_pos = len(test), int(y[test].sum())
        except PredictingError:  # too few of a class to split: no test set (the table's "—")
            test_n, test_pos = pd.NA, pd.NA
        rows.append(dict(target=target, n_examples=len(y), n_pos=int(y.sum()), n_neg=int((y == 0).sum()),
                         controls_pos=int((control & (y == 1)).sum()),
                         controls_neg=int((control & (y == 0)).sum()),
                         test_n=test_n, test_pos=test_pos))
    return pd.DataFrame(rows)


def exp2_stats(pairs, T: int | None = None, label: str = "extract") -> pd.DataFrame:
    """Experiment 2's dataset table from the pairs of each pool.

    Parameters
    ----------
    pairs : mapping pool -> DataFrame, or DataFrame with ``pool``
        Output of :func:`injection_range_pairs` with ``task``, ``last_step``
        and ``T`` (or pass ``T``).

    Returns
    -------
    DataFrame
        ``pool, copies, n_pairs, n_examples, n_pos, n_neg, n_tasks,
        steps_since_median, steps_since_q1, steps_since_q3``: one row per
        copies level and an ``"all"`` row per pool (``copies`` is text).
        Steps since the last copy (``T - last_step``) are over both examples
        of every pair.
    """
    frame = _long(pairs, "pool")
    _require(frame, ("pair", "copies", "task", "last_step", label), "the pairs")
    frame = frame.assign(_since=_steps_since(frame, T))
    rows = []
    for pool, g in frame.groupby("pool", sort=False):
        parts = [(str(c), gc) for c, gc in g.groupby("copies", sort=True)] + [("all", g)]
        for copies, gc in parts:
            med, q1, q3 = _quartiles(gc["_since"].to_numpy())
            y = gc[label].to_numpy()
            rows.append(dict(pool=pool, copies=copies, n_pairs=gc["pair"].nunique(), n_examples=len(gc),
                             n_pos=int((y == 1).sum()), n_neg=int((y == 0).sum()),
                             n_tasks=gc["task"].nunique(), steps_since_median=med, steps_since_q1=q1,
                             steps_since_q3=q3))
    return pd.DataFrame(rows)


def exp2_run_counts(pairs, label: str = "extract") -> pd.DataFrame:
    """Experiment 2's examples per run: ``pool, run, n_pos, n_neg`` (runs in order of appearance)."""
    frame = _long(pairs, "pool")
    _require(frame, ("run", label), "the pairs")
    out = frame.groupby(["pool", "run"], sort=False)[label].agg(
        n_pos=lambda y: int((y == 1).sum()), n_neg=lambda y: int((y == 0).sum()))
    return out.reset_index()


def exp3_stats(matched: pd.DataFrame, T: int | None = None, label: str = "extract") -> pd.DataFrame:
    """Experiment 3's dataset table from the matched set.

    Parameters
    ----------
    matched : DataFrame
        Output of :func:`match_strata` on :func:`matched_cells` (``target,
        copies, pos_rate, task, stratum, last_step, seq_id`` and ``T``, or pass ``T``).

    Returns
    -------
    DataFrame
        ``cell, copies, pos_rate_before, n_examples, n_pos, n_neg, n_tasks,
        n_strata, steps_since_median, steps_since_q1, steps_since_q3,
        residual_recency_auc, n_sequences``: one row per (target, copies) cell
        (targets in order of appearance, copies ascending) and a ``"pooled"``
        row (copies, positive rate and steps NaN, as the source's "—").
        ``n_sequences`` counts unique ``seq_id`` (the source gives it for the
        pooled set only).
    """
    _require(matched, ("target", "copies", "pos_rate", "task", "stratum", "last_step", "seq_id", label),
             "the matched frame")
    matched = matched.assign(_since=_steps_since(matched, T))
    rows = []

    def row(cell, g, copies, rate, s):
        y = g[label].to_numpy()
        med, q1, q3 = _quartiles(s) if s is not None else (np.nan,) * 3
        return dict(cell=cell, copies=copies, pos_rate_before=rate, n_examples=len(g),
                    n_pos=int((y == 1).sum()), n_neg=int((y == 0).sum()), n_tasks=g["task"].nunique(),
                    n_strata=len(g.groupby(_strata_keys(g)).size()), steps_since_median=med,
                    steps_since_q1=q1, steps_since_q3=q3, residual_recency_auc=residual_recency_auc(g, label),
                    n_sequences=g["seq_id"].nunique())

    for target in pd.unique(matched["target"]):
        for copies, g in matched[matched["target"] == target].groupby("copies", sort=True):
            rows.append(row(target, g, copies, float(g["pos_rate"].iloc[0]), g["_since"].to_numpy()))
    rows.append(row("pooled", matched, np.nan, np.nan, None))
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------
# The source's tables
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# The lab's runs in the source's roles
# ---------------------------------------------------------------------------

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

#: the chapter's profiles: which lab, which targets and pools, how many seeds, the
#: Experiment 3 stratum width as a fraction of training (the source's 100 of 48,000
#: steps is under one lab step; see the chapter) and the cell range
PROFILES = {
    "smoke": dict(lab_profile="smoke", targets=list(LAB_TARGETS), pools=dict(LAB_POOLS), n_seeds=2,
                  step_bin_frac=0.125, cell_lo=PAPER_CELL_RANGE[0], cell_hi=PAPER_CELL_RANGE[1]),
    "default": dict(lab_profile="default", targets=list(LAB_TARGETS), pools=dict(LAB_POOLS),
                    n_seeds=len(PAPER_SEEDS), step_bin_frac=0.125, cell_lo=PAPER_CELL_RANGE[0],
                    cell_hi=PAPER_CELL_RANGE[1]),
    # the source's seeds and cells on the lab (its Hubble models cannot be had here), with
    # ten times the seeds of the default for steadier means
    "paper": dict(lab_profile="default", targets=list(LAB_TARGETS), pools=dict(LAB_POOLS), n_seeds=50,
                  step_bin_frac=0.125, cell_lo=PAPER_CELL_RANGE[0], cell_hi=PAPER_CELL_RANGE[1]),
}


def counterfactual(runs: pd.DataFrame, target: str) -> str:
    """The target's counterfactual: the standard run with the same model shape and token budget.

    ``runs`` is the lab's run table (:meth:`analysis.lab.ladder.LabProfile.table`):
    ``run, family, n_layer, d_model, n_head, d_ff, context, tokens``. The
    perturbed runs and their standard twins share model, budget and seed, hence
    the base data order; an injection-range run's twin is the standard run of
    its size and budget.
    """
    _require(runs, ("run", "family", "n_layer", "d_model", "tokens"), "the run table")
    row = runs[runs["run"] == target]
    if row.empty:
        raise PredictingError(f"target {target!r} is not a lab run; runs: {sorted(runs['run'])}")
    key = ["n_layer", "d_model", "n_head", "d_ff", "context", "tokens"]
    key = [k for k in key if k in runs.columns]
    std = runs[runs["family"] == "standard"].merge(row[key], on=key)
    if std.empty:
        raise PredictingError(f"target {target!r} has no standard run of its size and token budget")
    return str(std["run"].iloc[0])


def score_runs(models: Mapping[str, object], sequences: Mapping[str, Sequence[int]],
               progress: bool = False) -> pd.DataFrame:
    """:func:`sequence_scores` of every sequence under every model, long, with a ``run`` column.

    ``models`` maps a run name to a model of the shared interface; each run's
    sequences go in one batched, cached pass.
    """
    frames = []
    for run, model in models.items():
        frames.append(sequence_scores(model, sequences, progress=f"{run}: {len(sequences)} sequences"
                                      if progress else False).assign(run=run))
    if not frames:
        raise PredictingError("score_runs needs at least one model")
    return pd.concat(frames, ignore_index=True)


def target_frame(target: str, scores: pd.DataFrame, exposures: Mapping[str, pd.DataFrame],
                 standard_runs: Sequence[str], counterfactual_run: str,
                 cross_runs: Sequence[str]) -> pd.DataFrame:
    """One target's examples: its exposure table with the label, the features and the baselines.

    Parameters
    ----------
    target : str
        The target run; it needs an exposure table in ``exposures``.
    scores : DataFrame
        :func:`score_runs` output covering the target, the standard runs and ``cross_runs``.
    exposures : mapping run -> DataFrame
        Exposure tables (:func:`analysis.lab.train.exposure_table`).
    standard_runs : sequence of str
        The standard runs whose NLL gives the hardness features.
    counterfactual_run : str
        The target's standard twin, left out of the hardness.
    cross_runs : sequence of str
        The other injected runs of the cross-model baseline (the target is left out).

    Returns
    -------
    DataFrame
        One row per sequence of the target's table: ``seq_id, task, copies,
        window, last_step, T``, the label and suffix results (``extract, nll,
        nll_suffix, suffix_acc``), the features (:func:`features`),
        ``cross_model`` (:func:`cross_model_scores`) and ``window_end``.
    """
    check_targets([target], exposures)
    _require(scores, ("run", "seq_id", "nll", "nll_suffix", "extract", "suffix_acc"), "the scores")
    exposure = exposures[target]
    std = scores[scores["run"].isin(standard_runs)].drop(columns="model", errors="ignore") \
        .rename(columns={"run": "model"})
    missing = sorted(set(standard_runs) - set(std["model"]))
    if missing:
        raise PredictingError(f"no scores for the standard run(s) {missing}")
    T = int(exposure["T"].iloc[0])
    frame = features(exposure, T, std[["seq_id", "model", "nll", "nll_suffix"]], counterfactual_run)
    own = scores[scores["run"] == target].set_index("seq_id")
    if own.empty:
        raise PredictingError(f"no scores for the target {target!r}")
    for col in ("extract", "nll", "nll_suffix", "suffix_acc"):
        frame[col] = frame["seq_id"].map(own[col]).to_numpy()
    others = [r for r in cross_runs if r != target]
    pivot = scores[scores["run"].isin(others)].pivot(index="seq_id", columns="run", values="nll_suffix")
    pivot = pivot.reindex(frame["seq_id"])
    frame["cross_model"] = cross_model_scores(pivot, []).to_numpy() if len(others) else np.nan
    frame["window_end"] = window_end_baseline(frame["window"])
    frame["extract"] = frame["extract"].astype(np.int64)
    return frame


def range_labels(runs: Sequence[str], scores: pd.DataFrame, exposures: Mapping[str, pd.DataFrame],
                 standard_runs: Sequence[str], counterfactual_run: str) -> pd.DataFrame:
    """Experiment 2's input: one row per (sequence, injection-range run), with ``run``.

    Each run's rows are its :func:`target_frame` (the cross-model column is not
    used there); the frame goes to :func:`injection_range_pairs`.
    """
    frames = [target_frame(r, scores, exposures, standard_runs, counterfactual_run, []).assign(run=r)
              for r in runs]
    return pd.concat(frames, ignore_index=True)


# ---------------------------------------------------------------------------
# The chapter's steps: what the notebook's visible cells call
# ---------------------------------------------------------------------------

#: the lab's injection-range runs left out of Experiments 1 and 3, as the source leaves out
#: its injectrange_{0_25,25_50,0_50} models (Experiment 2 uses all six)
EXP2_ONLY = ("range-q1", "range-q2", "range-early")
#: the source's positives in total in those three models (its "Target models" paragraph)
PAPER_EXCLUDED_POSITIVES = {"0_25": 2, "25_50": 3, "0_50": 6}
#: the source's sequences, tasks and copy levels (its "Sequences" paragraph)
PAPER_N_SEQUENCES = 80_504
PAPER_N_TASKS = 16
PAPER_COPY_LEVELS = (0, 1, 4, 16, 64, 256)
#: the AUC's two-sided level of :func:`chance_band`
CHANCE_LEVEL = 0.95


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


def bins_text(bins: Mapping[str, int], keys: Iterable[tuple[str, int]]) -> str:
    """Stratum widths of the targets that have cells: ``"2 steps (1b-100b), 1 step (8b-100b)"``, or "—"."""
    with_cells = {t for t, _ in keys}
    parts = [f"{b} step{'' if b == 1 else 's'} ({t})" for t, b in bins.items() if t in with_cells]
    return ", ".join(parts) or "—"


def cells_text(keys: Iterable[tuple[str, int]]) -> str:
    """(target, copies) cells in words: ``"1b-100b at 4 copies, 8b-500b at 1 copy"``, or ``"none"``."""
    return ", ".join(f"{t} at {_copies_text(c)}" for t, c in keys) or "none"


def check_pools(pools: Mapping[str, Sequence[str]], runs: Iterable[str]) -> dict[str, list[str]]:
    """:func:`check_pool` on every pool of Experiment 2, before any work; returns the pools as lists."""
    runs = list(runs)
    return {name: check_pool(pool, runs) for name, pool in pools.items()}


def injected_sequences(injection_table: pd.DataFrame, tokenizer) -> dict[str, list[int]]:
    """``seq_id`` → token ids of every injected sequence of the lab's corpus, as the runs were trained on it.

    ``injection_table`` is :meth:`analysis.lab.corpus.Corpus.injection_table`
    (``seq_id, text``); ``tokenizer`` the lab's tokenizer (called without special tokens).
    """
    _require(injection_table, ("seq_id", "text"), "the injection table")
    ids = tokenizer(list(injection_table["text"]), add_special_tokens=False)["input_ids"]
    return dict(zip(injection_table["seq_id"], ids))


def sequence_lengths(sequences: Mapping[str, Sequence[int]]) -> pd.DataFrame:
    """Length ``n_tokens`` and the label's cut ``P``, ``L`` (:func:`split_point`) of every sequence."""
    rows = [
        dict(seq_id=k, n_tokens=len(v), **dict(zip(("P", "L"), split_point(len(v)))))
        for k, v in sequences.items()
    ]
    return pd.DataFrame(rows, columns=["seq_id", "n_tokens", "P", "L"])


def injection_design(table: pd.DataFrame) -> str:
    """The injection set in words: tasks and sequences per task at each copy level.

    ``table`` has one row per sequence with ``task`` and ``copies`` (the corpus's
    injection table). Levels with the same number of sequences per task are
    named together, e.g. ``"6 tasks; per task, 4 sequences at 0, 1, 4, 16 and
    64 copies and 1 at 256 copies"``; a level whose tasks differ gives the range.
    """
    _require(table, ("task", "copies"), "the injection table")
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


def setup_table(
    targets: Sequence[str],
    run_table: pd.DataFrame,
    exposures: Mapping[str, pd.DataFrame],
    n_params: Mapping[str, int],
    names: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """The chapter's Setup table: one row per target run.

    Columns ``target, source's role`` (``names``, default :data:`LAB_TARGETS`),
    ``counterfactual`` (:func:`counterfactual`), ``steps T`` (from its exposure
    table), ``params``, ``tokens``, ``window`` ("all" when none) and ``sequences``.
    """
    names = dict(LAB_TARGETS if names is None else names)
    check_targets(targets, exposures)
    runs = run_table.set_index("run")
    return pd.DataFrame(
        [
            {
                "target": t,
                "source's role": names.get(t, t),
                "counterfactual": counterfactual(run_table, t),
                "steps T": int(exposures[t]["T"].iloc[0]),
                "params": int(n_params[t]),
                "tokens": int(runs.loc[t, "tokens"]),
                "window": runs.loc[t, "window"] or "all",
                "sequences": len(exposures[t]),
            }
            for t in targets
        ]
    )


def range_runs_sentence(run_table: pd.DataFrame, runs: Sequence[str]) -> str:
    """What the injection-range runs train, beside the perturbed runs: model, budget and counterfactual.

    The model is "the large" / "the small" model when its width is the
    perturbed runs' largest / smallest; the budget is given in tokens and as a
    multiple of the perturbed runs' largest budget.
    """
    _require(run_table, ("run", "family", "d_model", "tokens"), "the run table")
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
    _require(scores, ("run", "extract"), "the scores")
    counts = scores.groupby("run")["extract"].sum()
    return and_list(int(counts.get(r, 0)) for r in runs)


def target_frames(
    targets: Sequence[str],
    scores: pd.DataFrame,
    exposures: Mapping[str, pd.DataFrame],
    run_table: pd.DataFrame,
) -> dict[str, pd.DataFrame]:
    """:func:`target_frame` of every target: label, features and baselines of each sequence.

    The hardness averages over the lab's standard runs other than the target's
    :func:`counterfactual`; the cross-model baseline over the other injected runs.
    """
    check_targets(targets, exposures)
    _require(run_table, ("run", "family", "inject"), "the run table")
    injected = run_table.loc[run_table["inject"].astype(bool), "run"].tolist()
    standard = run_table.loc[run_table["family"] == "standard", "run"].tolist()
    return {
        t: target_frame(t, scores, exposures, standard, counterfactual(run_table, t), injected)
        for t in targets
    }


def stack_frames(frames: Mapping[str, pd.DataFrame], names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The targets' frames in one long frame with a ``target`` column (renamed by ``names``)."""
    if not frames:
        raise PredictingError("no frames given")
    names = dict(names or {})
    return pd.concat([f.assign(target=names.get(t, t)) for t, f in frames.items()], ignore_index=True)


def extraction_summary(long: pd.DataFrame) -> pd.DataFrame:
    """Share extracted and mean suffix accuracy per target and copy level.

    Targets in order of appearance, copies ascending.
    """
    _require(long, ("target", "copies", "extract", "suffix_acc"), "the long frame")
    out = long.groupby(["target", "copies"], sort=False)[["extract", "suffix_acc"]].mean().reset_index()
    order = {t: i for i, t in enumerate(pd.unique(long["target"]))}
    return out.sort_values(
        ["target", "copies"], key=lambda s: s.map(order) if s.name == "target" else s, kind="stable"
    ).reset_index(drop=True)


def extraction_rates(long: pd.DataFrame) -> pd.DataFrame:
    """Share extracted per target (rows) and copy level (columns), after a ``positives`` column "k / n"."""
    _require(long, ("target", "copies", "extract"), "the long frame")
    rates = long.pivot_table(index="target", columns="copies", values="extract", aggfunc="mean", sort=False)
    counts = long.groupby("target", sort=False)["extract"].agg(["sum", "size"])
    rates.insert(0, "positives", counts["sum"].astype(int).astype(str) + " / " + counts["size"].astype(str))
    return rates


def lowest_extracted_level(long: pd.DataFrame) -> str:
    """The lowest copy level at which any target extracts a sequence (``"16 copies"``), or says none is."""
    _require(long, ("copies", "extract"), "the long frame")
    levels = sorted(long.loc[long["extract"] == 1, "copies"].unique())
    return _copies_text(levels[0]) if levels else "none (no sequence is extracted)"


def best_cell(summary: pd.DataFrame) -> str:
    """The (target, copies) cell with the highest share extracted, e.g. ``"pert-l2x at 64 copies (75%)"``."""
    _require(summary, ("target", "copies", "extract"), "the summary")
    best = summary.loc[summary["extract"].idxmax()]
    if best["extract"] == 0:
        return "none (no cell extracts anything)"
    return f"{best['target']} at {_copies_text(best['copies'])} ({best['extract']:.0%})"


def control_sentence(long: pd.DataFrame, paper_dataset: pd.DataFrame) -> str:
    """Whether the lab's targets extract never-inserted controls, beside the source's Experiment 1 counts.

    ``paper_dataset`` is the source's ``exp1_dataset`` table (``controls_pos``).
    """
    _require(long, ("copies", "extract"), "the long frame")
    _require(paper_dataset, ("target", "controls_pos"), "the source's dataset table")
    lab = int(long.loc[long["copies"] == 0, "extract"].sum())
    src = paper_dataset["controls_pos"]
    n_src = int((src > 0).sum())
    source = (
        f"the source's targets extract controls in {n_src} of its {len(src)} Experiment 1 sets "
        f"({int(src.min()):,} to {int(src.max()):,} each)"
    )
    if lab == 0:
        return f"No lab model reproduces a sequence it never saw, whereas {source}."
    return (
        f"{lab} never-inserted controls are extracted: text the models could predict without "
        f"seeing it, as {source}."
    )


def suffix_sentence(long: pd.DataFrame, alpha: float = 0.05) -> str:
    """Whether the models learned part of the suffixes they do not extract.

    Compares the per-sequence suffix accuracy in the inserted (target, copies)
    cells where nothing is extracted with that of the never-inserted controls
    (copies 0), by a one-sided Mann–Whitney test (``scipy.stats.mannwhitneyu``,
    ``alternative="greater"``) at level ``alpha``.
    """
    from scipy.stats import mannwhitneyu

    _require(long, ("target", "copies", "extract", "suffix_acc"), "the long frame")
    rate = long.groupby(["target", "copies"])["extract"].transform("mean")
    cells = long[(long["copies"] >= 1) & (rate == 0)]
    ctrl = long.loc[long["copies"] == 0, "suffix_acc"]
    if cells.empty:
        return (
            "Every inserted (target, copies) cell extracts some sequence, so partial learning below "
            "the label's all-tokens threshold cannot be seen apart from it."
        )
    n_cells = cells.groupby(["target", "copies"]).ngroups
    acc = float(cells["suffix_acc"].mean())
    head = (
        f"In the {n_cells} inserted (target, copies) cells where nothing is extracted, the mean suffix "
        f"accuracy is {acc:.3f}"
    )
    if ctrl.empty:
        return head + "; with no never-inserted controls, there is nothing to compare it with."
    p = float(mannwhitneyu(cells["suffix_acc"], ctrl, alternative="greater").pvalue)
    head += (
        f", against {float(ctrl.mean()):.3f} for the never-inserted controls (one-sided Mann–Whitney "
        f"p = {p:.2g})"
    )
    if p < alpha:
        return head + ": below the label's all-tokens threshold, the models have learned part of each suffix."
    return head + ": no sign that the models learned part of the suffixes they do not extract."


# -- Experiment 1 --------------------------------------------------------------------------------


def main_target(names: Mapping[str, str], preferred: str = "pert-l2x") -> str:
    """The source's name of the target the prose reports on: ``preferred`` when run, else the first."""
    if not names:
        raise PredictingError("no targets")
    return names.get(preferred, next(iter(names.values())))


def balanced_samples(
    frames: Mapping[str, pd.DataFrame], seed: int = 0, names: Mapping[str, str] | None = None
) -> dict[str, pd.DataFrame]:
    """:func:`balanced_subsample` of every target that holds both classes (others are left out), by name."""
    names = dict(names or {})
    return {
        names.get(t, t): balanced_subsample(f, seed) for t, f in frames.items() if f["extract"].nunique() == 2
    }


def exp1_aucs(
    frames: Mapping[str, pd.DataFrame],
    split: str,
    seeds: Iterable[int] = PAPER_SEEDS,
    names: Mapping[str, str] | None = None,
) -> dict[str, pd.DataFrame]:
    """Experiment 1 under one split: :func:`auc_rows` of each target's balanced subsamples, by name.

    Each seed draws its own balanced subsample; the baselines are the
    cross-model and the random baseline, as in the source's tables.
    """
    names = dict(names or {})
    seeds = list(seeds)
    return {
        names.get(t, t): auc_rows(
            lambda s, f=f: balanced_subsample(f, s),
            split,
            ["cross-model baseline", "random baseline"],
            seeds,
            name=t,
        )
        for t, f in frames.items()
    }


def exp1_dataset(samples: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """:func:`exp1_stats` of the seed's samples; an empty frame when no target has both classes."""
    return exp1_stats(samples) if samples else pd.DataFrame()


def wide_auc(
    columns: Mapping[str, pd.DataFrame], key_cols: Sequence[str] = ("features",)
) -> pd.DataFrame | None:
    """:func:`auc_rows` outputs (name → table) as one wide table, one ``auc`` column per name.

    Rows are keyed by ``key_cols`` (``("features", "hardness")`` for
    Experiment 3); ``None`` when there is no column.
    """
    if not columns:
        return None
    cols = [tab.set_index(list(key_cols))["auc"].rename(name) for name, tab in columns.items()]
    return pd.concat(cols, axis=1)


def auc_notes(columns: Mapping[str, pd.DataFrame]) -> dict[str, str]:
    """Name → why, for the :func:`auc_rows` columns that could not be computed."""
    return {name: tab["note"].iloc[0] for name, tab in columns.items() if tab["note"].iloc[0]}


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


def auc_cell(table: pd.DataFrame | None, row, col) -> str:
    """One AUC of a wide table to three decimals, or "—" when the table, row or column is missing or NaN."""
    if table is None or row not in table.index or col not in table.columns:
        return "—"
    v = table.loc[row, col]
    return f"{float(v):.3f}" if np.isfinite(v) else "—"


def computed_columns(table: pd.DataFrame | None) -> list[str]:
    """The columns of a wide AUC table with at least one number."""
    return [] if table is None else [c for c in table.columns if table[c].notna().any()]


def computed_sentence(table: pd.DataFrame | None, n_targets: int) -> str:
    """How many of the targets have AUCs, and that the notes say why the others have none."""
    k = len(computed_columns(table))
    if n_targets and k == n_targets:
        return "The AUC could be computed for every target."
    return (
        f"The AUC could be computed for {k} of {n_targets} targets; the others cannot be split "
        "(their notes above say why)."
    )


def auc_panels(pairs: Mapping[str, tuple]) -> dict[str, pd.DataFrame | None]:
    """Heatmap panels, the source's table beside the lab's: ``{"source, name": s, "lab, name": l, ...}``."""
    out = {}
    for name, (source, lab) in pairs.items():
        out[f"source, {name}"] = source
        out[f"lab, {name}"] = lab
    return out


def _majority(wins: int, n: int) -> str:
    return "most" if 2 * wins > n else "few" if 2 * wins < n else "half"


def exp1_verdict(lab: pd.DataFrame | None, paper: pd.DataFrame) -> str:
    """Does log_freq alone rank better than hardness alone, in the lab and in the source?

    Counts the targets where the ``log_freq`` row beats the ``hardness`` row in
    each wide table (the lab's over the columns with numbers). The lab agrees
    with the source ("as in the source") when it has the same majority (most,
    half or few of its targets).
    """
    src_wins = int((paper.loc["log_freq"] > paper.loc["hardness"]).sum())
    n_src = paper.shape[1]
    lo, hi = float(paper.loc["hardness"].min()), float(paper.loc["hardness"].max())
    source = (
        f"where it does for {src_wins} of {n_src} targets and hardness alone reaches {lo:.3f} to {hi:.3f}"
    )
    cols = computed_columns(lab)
    if not cols:
        return (
            "No target has enough positives for this experiment on this lab, so it cannot compare "
            f"frequency with hardness; in the source, log_freq alone ranks better than hardness alone "
            f"for {src_wins} of {n_src} targets, with hardness alone at {lo:.3f} to {hi:.3f}."
        )
    wins = int(sum(lab.loc["log_freq", c] > lab.loc["hardness", c] for c in cols))
    agree = (
        "as in the source"
        if _majority(wins, len(cols)) == _majority(src_wins, n_src)
        else "unlike the source"
    )
    return (
        f"log_freq alone ranks better than hardness alone for {wins} of the {len(cols)} targets with "
        f"numbers, {agree}, {source}."
    )


def seed_spread_sentence(
    lab: pd.DataFrame | None, paper: pd.DataFrame, lab_dataset: pd.DataFrame, paper_dataset: pd.DataFrame
) -> str:
    """How much the 3-feature AUC moves between seeds in the lab and in the source, and the set sizes.

    Compares the medians of the ``"sd (3 features)"`` rows (the lab's over its
    columns with numbers) and of the sets' sizes (``n_examples`` of the
    dataset tables): "far more" when the lab's sd is over twice the source's.
    """
    cols = computed_columns(lab)
    lab_sizes = lab_dataset["n_examples"] if "n_examples" in lab_dataset else []
    paper_sizes = paper_dataset["n_examples"]
    sizes = (
        (
            f"The lab's sets hold a median of {float(np.median(lab_sizes)):,.0f} examples per target, "
            f"the source's {float(np.median(paper_sizes)):,.0f}"
        )
        if len(lab_sizes)
        else "The lab has no target with both classes"
    )
    src_sd = float(paper.loc["sd (3 features)"].median())
    lab_sd = float(lab.loc["sd (3 features)", cols].median()) if cols else float("nan")
    if not np.isfinite(lab_sd):
        return f"{sizes}, so no sd over seeds to compare with the source's median {src_sd:.3f}."
    how = (
        "far more than" if lab_sd > 2 * src_sd else "less than" if lab_sd < src_sd / 2 else "about as much as"
    )
    return (
        f"{sizes}, so the lab's 3-feature AUC moves between seeds {how} the source's "
        f"(median sd {lab_sd:.3f} against {src_sd:.3f}; the sd row)."
    )


# -- Experiment 2 --------------------------------------------------------------------------------


def range_runs(pools: Mapping[str, Sequence[str]]) -> list[str]:
    """Every run of the pools, once each, in order of first appearance."""
    return list(dict.fromkeys(r for pool in pools.values() for r in pool))


def run_extraction_rates(labels: pd.DataFrame, runs: Sequence[str]) -> pd.DataFrame:
    """Share extracted per injection-range run (rows, in ``runs`` order) and copy level (columns)."""
    _require(labels, ("run", "copies", "extract"), "the labels frame")
    return labels.pivot_table(index="run", columns="copies", values="extract", aggfunc="mean").loc[list(runs)]


def inserted_levels(labels: pd.DataFrame) -> list[int]:
    """The copy levels (at least 1 copy) of a labels frame, ascending."""
    return [int(c) for c in sorted(labels.loc[labels["copies"] >= 1, "copies"].unique())]


def pool_pairs(
    labels: pd.DataFrame, pools: Mapping[str, Sequence[str]], seeds: Iterable[int] = PAPER_SEEDS
) -> dict[str, dict[int, pd.DataFrame]]:
    """:func:`injection_range_pairs` of every pool and seed: ``{pool: {seed: pairs}}``."""
    seeds = list(seeds)
    return {p: {s: injection_range_pairs(labels, pool, s) for s in seeds} for p, pool in pools.items()}


def exp2_aucs(
    pairs: Mapping[str, Mapping[int, pd.DataFrame]], levels: Sequence[int], seeds: Iterable[int] = PAPER_SEEDS
) -> dict[str, dict[str, pd.DataFrame]]:
    """Experiment 2: :func:`auc_rows` under the group split per pool, per copy level and pooled.

    Returns ``{pool: {"copies_<c>": table, ..., "pooled": table}}`` with a
    column for every level of ``levels`` (a level without pairs gets the note
    "0 positives and 0 negatives"), and the window-end and random baselines.
    """
    seeds = list(seeds)
    base = ["window-end baseline", "random baseline"]
    out = {}
    for p, by_seed in pairs.items():
        cols = {
            f"copies_{c}": auc_rows(
                lambda s, c=c, b=by_seed: b[s][b[s]["copies"] == c],
                "group",
                base,
                seeds,
                name=f"{p}/{c} copies",
            )
            for c in levels
        }
        cols["pooled"] = auc_rows(lambda s, b=by_seed: b[s], "group", base, seeds, name=f"{p}/pooled")
        out[p] = cols
    return out


def exp2_dataset(pairs: Mapping[str, Mapping[int, pd.DataFrame]], seed: int = 0) -> pd.DataFrame:
    """:func:`exp2_stats` of the seed's pairs of every pool that has some (empty frame when none has)."""
    some = {p: by_seed[seed] for p, by_seed in pairs.items() if len(by_seed[seed])}
    return exp2_stats(some) if some else pd.DataFrame()


def exp2_run_table(pairs: Mapping[str, Mapping[int, pd.DataFrame]], seed: int = 0) -> pd.DataFrame:
    """:func:`exp2_run_counts` of the seed's pairs (``pool, run, n_pos, n_neg``; empty when no pairs)."""
    some = {p: by_seed[seed] for p, by_seed in pairs.items() if len(by_seed[seed])}
    return exp2_run_counts(some) if some else pd.DataFrame(columns=["pool", "run", "n_pos", "n_neg"])


def examples_per_run(counts: pd.DataFrame, pools: Sequence[str], runs: Sequence[str]) -> pd.DataFrame:
    """The source's "Examples per run" layout: ``"pos / neg"`` per pool (rows) and run (columns).

    "—" where a run has no example in a pool.
    """
    _require(counts, ("pool", "run", "n_pos", "n_neg"), "the run counts")
    cells = counts.assign(cell=[f"{p:,} / {n:,}" for p, n in zip(counts["n_pos"], counts["n_neg"])])
    wide = cells.pivot(index="pool", columns="run", values="cell") if len(cells) else pd.DataFrame()
    out = wide.reindex(index=list(pools), columns=list(runs)).astype(object)
    return out.where(out.notna(), "—")


def pair_counts(dataset: pd.DataFrame, pools: Sequence[str]) -> dict[str, int]:
    """Pairs per pool from :func:`exp2_dataset` (its ``"all"`` rows); 0 for a pool without pairs."""
    if dataset.empty:
        return {p: 0 for p in pools}
    total = dataset[dataset["copies"] == "all"].set_index("pool")["n_pairs"]
    return {p: int(total.get(p, 0)) for p in pools}


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


def extracted_per_run(labels: pd.DataFrame, runs: Sequence[str]) -> pd.Series:
    """Inserted sequences (at least 1 copy) each run extracts, in ``runs`` order."""
    _require(labels, ("run", "copies", "extract"), "the labels frame")
    ins = labels[labels["copies"] >= 1]
    return ins.groupby("run")["extract"].sum().reindex(list(runs)).fillna(0).astype(int)


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


def _rises(counts: pd.Series) -> bool:
    v = counts.to_numpy()
    return len(v) > 1 and bool((np.diff(v) >= 0).all()) and v[-1] > v[0]


def window_order_sentence(lab: pd.Series, source: pd.Series) -> str:
    """Does the extraction grow with the insertion window's end, in the lab and in the source?

    ``lab`` is :func:`extracted_per_run` over the quarters in window order,
    ``source`` :func:`paper_pair_positives` of the quarters pool. A series
    "rises" when it never falls and ends above where it starts.
    """
    src = (
        f"the source, whose first quarter's run is the positive of {int(source.iloc[0]):,} of its seed-0 "
        f"pairs and the last quarter's of {int(source.iloc[-1]):,}"
    )
    counts = and_list(f"{int(v)}" for v in lab)
    if lab.sum() == 0:
        return f"No quarter extracts anything, so the order by window cannot be seen, unlike in {src}."
    if _rises(lab):
        how = "as in" if _rises(source) else "unlike"
        return f"The later the window, the more is extracted ({counts} sequences), {how} {src}."
    how = "unlike" if _rises(source) else "as in"
    return f"The extraction does not grow with the window's end ({counts} sequences), {how} {src}."


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


def _winner(a: int, b: int, alpha: float) -> tuple[str, float]:
    """Which of two counts is larger by a two-sided binomial test at ``alpha`` ("a", "b" or "even"), and p."""
    from scipy.stats import binomtest

    if a + b == 0:
        return "even", 1.0
    p = float(binomtest(a, a + b, 0.5).pvalue)
    return ("a" if a > b else "b") if p < alpha else "even", p


def late_pool_sentence(
    counts: pd.DataFrame,
    source: pd.Series,
    q4: str = "range-q4",
    wide: str = "range-late",
    alpha: float = 0.05,
) -> str:
    """Which of the late pool's two runs wins more pairs (is their positive), in the lab and in the source.

    ``counts`` is :func:`exp2_run_table` (its ``late`` rows), ``source``
    :func:`paper_pair_positives` of the source's late pool. A run wins when a
    two-sided binomial test of its share of the pairs against one half has
    ``p < alpha``; otherwise the split is even. Recency predicts that the run
    whose copies come in the last quarter (``q4``) wins.
    """
    late = counts[counts["pool"] == "late"].set_index("run") if len(counts) else pd.DataFrame()
    s_q4, s_wide = int(source[q4]), int(source[wide])
    src_way, src_p = _winner(s_q4, s_wide, alpha)
    src = (
        f"the source's two runs are the positive of {s_q4:,} and {s_wide:,} of its {s_q4 + s_wide:,} pairs "
        f"(binomial p = {src_p:.2g})"
    )
    if late.empty or int(late["n_pos"].sum()) == 0:
        return f"The lab has no late pairs to compare, where {src}."
    a, b = int(late["n_pos"].get(q4, 0)), int(late["n_pos"].get(wide, 0))
    lab_way, lab_p = _winner(a, b, alpha)
    head = (
        f"Of the lab's {a + b} late pairs, {q4} is the positive of {a} and {wide} of {b} (binomial "
        f"p = {lab_p:.2g}), where {src}."
    )
    same = "as in the source" if lab_way == src_way else "unlike the source"
    verdict = {
        "a": (
            "In the lab, the run whose copies come in the last quarter wins more pairs, as recency "
            f"predicts, {same}."
        ),
        "b": (
            "In the lab, copies spread over the second half of training are extracted more often than the "
            f"same copies crowded into its last quarter, {same}."
        ),
        "even": f"The lab's split is too close to call either way, {same}.",
    }[lab_way]
    return f"{head} {verdict}"


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


def window_share(run, exposure: pd.DataFrame) -> float:
    """Share of the room in a run's insertion window that its injected copies fill:
    the window's rows times the copies a row can hold (``run.copies_per_row``).

    ``run`` is the run's :class:`analysis.lab.config.RunConfig` (``window``,
    ``steps``, ``batch_size``, ``copies_per_row``), ``exposure`` its exposure table
    (``copies_seen``).
    """
    from analysis.lab.ladder import window_share as share

    _require(exposure, ("copies_seen",), "the exposure table")
    return float(share(run, int(exposure["copies_seen"].sum())))


# -- Experiment 3 --------------------------------------------------------------------------------


def exp13_targets(targets: Iterable[str]) -> list[str]:
    """The targets of Experiments 1 and 3: all but the injection-range runs of :data:`EXP2_ONLY`."""
    return [t for t in targets if t not in EXP2_ONLY]


def training_steps(exposures: Mapping[str, pd.DataFrame]) -> dict[str, int]:
    """Training steps ``T`` of every run with an exposure table (its ``T`` column)."""
    return {r: int(e["T"].iloc[0]) for r, e in exposures.items()}


def step_bins(T: Mapping[str, int], frac: float) -> dict[str, int]:
    """Width of a last-step stratum per target: ``max(1, round(frac * T))`` steps."""
    if not 0 < frac <= 1:
        raise PredictingError(f"frac must be in (0, 1], got {frac!r}")
    return {t: max(1, round(frac * _check_T(n))) for t, n in T.items()}


def cell_keys(cells: pd.DataFrame) -> list[tuple[str, int]]:
    """The (target, copies) cells of :func:`matched_cells`, in order of appearance."""
    return list(cells.groupby(["target", "copies"], sort=False).groups)


def match_cells(
    cells: pd.DataFrame, bins: Mapping[str, int], seed: int = 0, keys: Sequence[tuple[str, int]] | None = None
) -> pd.DataFrame:
    """Experiment 3's matched set: :func:`match_strata` of each cell (all, or ``keys``) with its
    target's bin, stacked."""
    keys = cell_keys(cells) if keys is None else list(keys)
    parts = [
        match_strata(cells[(cells["target"] == t) & (cells["copies"] == c)], bins[t], seed) for t, c in keys
    ]
    return pd.concat(parts) if parts else cells.iloc[:0]


def exp3_aucs(
    cells: pd.DataFrame,
    bins: Mapping[str, int],
    seeds: Iterable[int] = PAPER_SEEDS,
    splits: Sequence[str] = ("group", "task"),
) -> dict[str, dict[str, pd.DataFrame]]:
    """Experiment 3: :func:`auc_rows` per split, per cell (``"<target> (<copies>)"``) and pooled,
    with both hardness measures and the cross-model and random baselines.

    Each seed re-draws the matched set (:func:`match_cells`). ``{split: {}}``
    when there is no cell.
    """
    seeds = list(seeds)
    base = ["cross-model baseline", "random baseline"]
    keys = cell_keys(cells)
    out = {}
    for split in splits:
        cols = {
            f"{t} ({c})": auc_rows(
                lambda s, k=(t, c): match_cells(cells, bins, s, [k]),
                split,
                base,
                seeds,
                hardness_rows=("full", "suffix"),
                name=f"{t}/{c} copies",
            )
            for t, c in keys
        }
        if keys:
            cols["pooled"] = auc_rows(
                lambda s: match_cells(cells, bins, s),
                split,
                base,
                seeds,
                hardness_rows=("full", "suffix"),
                name="pooled",
            )
        out[split] = cols
    return out


def exp3_dataset(cells: pd.DataFrame, bins: Mapping[str, int], seed: int = 0) -> pd.DataFrame:
    """:func:`exp3_stats` of the seed's matched set (empty frame when nothing is matched)."""
    matched = match_cells(cells, bins, seed)
    return exp3_stats(matched) if len(matched) else pd.DataFrame()


def flat_index(table: pd.DataFrame | None) -> pd.DataFrame | None:
    """A (features, hardness) table with one-level row labels ``"features [hardness]"`` (for heatmaps)."""
    if table is None:
        return None
    out = table.copy()
    out.index = [f"{f} [{h}]" if h != "—" else f for f, h in out.index]
    return out


def empty_cells_sentence(cells: pd.DataFrame, bins: Mapping[str, int], seed: int = 0) -> str:
    """Which cells matching empties (no stratum of task and last-step bin holds both classes)."""
    if cells.empty:
        return "No cell is left to match."
    empty = [
        f"{t} at {_copies_text(c)}"
        for t, c in cell_keys(cells)
        if not len(match_cells(cells, bins, seed, [(t, c)]))
    ]
    if not empty:
        return "Every cell keeps some examples after matching."
    return (
        f"Matching leaves nothing of {and_list(empty)}: no stratum of task and last-step bin holds both "
        "classes there."
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


def chance_band(n_pos: int, n_neg: int, level: float = CHANCE_LEVEL) -> float:
    """Half-width of the interval around 0.5 inside which an AUC is not told from chance.

    Under the null (scores independent of the label) the AUC, a Mann–Whitney
    statistic over ``n_pos * n_neg`` pairs, has variance
    ``(n_pos + n_neg + 1) / (12 n_pos n_neg)``; the half-width is ``z`` times its
    square root, ``z`` the normal quantile of the two-sided ``level``.
    """
    from scipy.stats import norm

    if n_pos < 1 or n_neg < 1:
        raise PredictingError(
            f"the chance band needs both classes, got {n_pos} positives and {n_neg} negatives"
        )
    z = float(norm.ppf(0.5 + level / 2))
    return z * float(np.sqrt((n_pos + n_neg + 1) / (12 * n_pos * n_neg)))


def evidence_sentence(
    table: pd.DataFrame | None,
    rows: Mapping[str, object],
    col: str,
    n_pos: int,
    n_neg: int,
    level: float = CHANCE_LEVEL,
) -> str:
    """Whether AUCs on ``n_pos`` positives and ``n_neg`` negatives are told from chance (:func:`chance_band`).

    ``rows`` maps a label (named in the sentence) to a row key of the wide AUC
    ``table``; its values are read in column ``col``, and missing or NaN ones
    are left out.
    """
    if n_pos < 1 or n_neg < 1:
        return "The matched set does not hold both classes, so these AUCs are not computed."
    h = chance_band(n_pos, n_neg, level)
    vals = {k: float(auc_cell(table, r, col).replace("—", "nan")) for k, r in rows.items()}
    vals = {k: v for k, v in vals.items() if np.isfinite(v)}
    outside = [k for k, v in vals.items() if abs(v - 0.5) > h]
    band = (
        f"With {n_pos} positives and {n_neg} negatives, an AUC is told from chance (at the {level:.0%} "
        f"level, normal approximation) only outside {0.5 - h:.3f} to {0.5 + h:.3f}"
    )
    if not vals:
        return band + "; none of these AUCs could be computed."
    if not outside:
        return band + ": none of these AUCs is, so on this set they carry no evidence either way."
    if len(outside) == len(vals):
        return band + ": all of these AUCs are."
    verb = "is" if len(outside) == 1 else "are"
    return band + f": only {and_list(outside)} {verb}; the others carry no evidence."


def exp3_power_sentence(n_pos: int, n_neg: int, paper: pd.DataFrame, level: float = CHANCE_LEVEL) -> str:
    """The source's Experiment 3 findings, and whether the lab's matched set could show its suffix gap.

    ``paper`` is the source's ``exp3_group`` table indexed by (features,
    hardness). Its feature-set AUCs span a range; its gap is the pooled
    3-feature AUC with the suffix hardness minus that with the whole-sequence
    one. The lab could show the gap when its :func:`chance_band` is narrower.
    """
    sets = paper[paper.index.get_level_values("features").isin(list(FEATURE_SETS))]
    lo, hi = float(sets.to_numpy().min()), float(sets.to_numpy().max())
    sfx, full = paper.loc[(THREE, "suffix"), "pooled"], paper.loc[(THREE, "full sequence"), "pooled"]
    gap = float(sfx - full)
    ahead = "ahead of" if gap > 0 else "behind"
    src = (
        f"Once frequency and recency are fixed, the source's feature sets reach AUC {lo:.2f} to {hi:.2f}, "
        f"with the suffix hardness {ahead} the whole-sequence one ({sfx:.3f} against {full:.3f} pooled)."
    )
    if n_pos < 1 or n_neg < 1:
        return src + " The lab's matched set does not hold both classes, so it cannot test this."
    h = chance_band(n_pos, n_neg, level)
    if h > abs(gap):
        return (
            src + f" The lab's matched set of {n_pos + n_neg} examples tells an AUC from chance only beyond "
            f"±{h:.3f}, wider than that gap of {abs(gap):.3f}: its numbers check that the pipeline runs end "
            "to end, not the claim."
        )
    return (
        src + f" The lab's matched set of {n_pos + n_neg} examples tells an AUC from chance beyond ±{h:.3f}, "
        f"narrower than that gap of {abs(gap):.3f}, so it could show a gap of that size."
    )


# -- the source beside the lab -------------------------------------------------------------------


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
    closer = "closer to" if abs(best - 0.5) < abs(float(three.median()) - 0.5) else "further from"
    better = "better" if sfx > full else "no better"
    return (
        f"With nothing controlled, log_freq and recency together rank its memorized sequences at AUC "
        f"{fr.min():.3f} to {fr.max():.3f} over its {len(fr)} targets (median {fr.median():.3f}), and adding "
        f"hardness moves the median by {delta:+.3f}. Once both are held fixed, the best feature set reaches "
        f"{best:.3f} on all cells pooled, {closer} chance than with nothing controlled, and a hardness "
        f"measured on the suffix alone does {better} than the whole-sequence one ({sfx:.3f} against "
        f"{full:.3f})."
    )


def labels_comparison(long: pd.DataFrame, paper1: pd.DataFrame, paper2: pd.DataFrame) -> str:
    """Extraction in the source and in the lab: controls, the lowest level extracted, positives in all.

    ``paper1`` is the source's ``exp1_dataset``, ``paper2`` its ``exp2_dataset``
    (whose per-level rows give the lowest level with positives).
    """
    _require(long, ("copies", "extract"), "the long frame")
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

def _check_targets(value, settings):
    from analysis.lab.ladder import check_runs

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


def largest_target(frames: Mapping[str, pd.DataFrame], n_params: Mapping[str, int],
                   tokens: Mapping[str, int]) -> str:
    """The target with the most parameters (the most training tokens among equals)."""
    if not frames:
        raise PredictingError("no targets: the largest target is undefined")
    return max(frames, key=lambda t: (n_params[t], tokens[t], t))


def exp2_level_count(dataset: pd.DataFrame, pools: Sequence[str]) -> int:
    """Copy levels at which every pool of ``pools`` has at least one pair (0 without pairs)."""
    if dataset.empty:
        return 0
    per_level = dataset[dataset["copies"] != "all"]
    levels = None
    for pool in pools:
        got = set(per_level.loc[(per_level["pool"] == pool) & (per_level["n_pairs"] > 0), "copies"])
        levels = got if levels is None else levels & got
    return len(levels or ())

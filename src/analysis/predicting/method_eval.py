"""The source's prediction model, splits and metric: held-out AUC-ROC of a linear fit.

* **Prediction model** (:func:`fit_score`). ``StandardScaler`` then ordinary
  least squares on the 0/1 label; the regression output is the ranking score.
  :data:`analysis.predicting.params.FEATURE_SETS` lists the 7 non-empty feature
  subsets in the source's table order.
* **Metric** (:func:`evaluate`). AUC-ROC of held-out predictions
  (:func:`analysis.stats.auc.auc`): pooled over all held-out examples under the
  random and group splits, and a mean of per-task AUCs (equal weight per task,
  :func:`per_task_auc`) under the leave-one-task-out split.
* **Tables** (:func:`auc_rows`): one column of the source's AUC tables, every
  feature set and baseline, mean and sd over sampling seeds.
* **Chance** (:func:`chance_band`, :func:`chance_p`): the normal approximation
  of an AUC's null distribution, the chapter's test of an AUC against 0.5 when
  only the AUC and the class sizes are kept.

Where the source leaves a choice open:

* **Per-task AUC.** A held-out task whose examples are all of one class has no
  AUC; it is skipped, and the mean is over the remaining tasks.
* **sd over seeds** (:func:`over_seeds`) is the sample standard deviation
  (``ddof=1``); the source does not say which.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import norm
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GroupKFold, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from analysis.predicting.checks import PredictingError, binary, require
from analysis.predicting.method_features import random_scores
from analysis.predicting.params import (
    BASELINES,
    CHANCE_LEVEL,
    FEATURE_SETS,
    HARDNESS_MEASURES,
    MEASURE_LABELS,
    PAPER_K,
    PAPER_SEEDS,
    PAPER_TEST_SIZE,
    SPLITS,
    THREE,
)
from analysis.stats.auc import auc
from analysis.stats.result import StatsError


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


def per_task_auc(y, score, task) -> float:
    """Mean over tasks, with equal weight, of the AUC within each task.

    Each AUC compares only sequences of the same task. A task whose examples
    are all positive or all negative has no AUC and is skipped; the mean is
    over the tasks that hold both classes (an error if none does).
    """
    y = binary(y)
    s = np.asarray(score, dtype=float)
    t = np.asarray(task)
    if not (s.shape == y.shape == t.shape):
        raise PredictingError(f"y, score and task differ in shape: {y.shape}, {s.shape}, {t.shape}")
    aucs = [auc(y[t == k], s[t == k]) for k in pd.unique(t) if 0 < y[t == k].sum() < (t == k).sum()]
    if not aucs:
        raise PredictingError("no task holds both classes, so no per-task AUC is defined")
    return float(np.mean(aucs))


def random_split(y, seed: int = 0, test_size: float = PAPER_TEST_SIZE) -> tuple[np.ndarray, np.ndarray]:
    """One stratified split: positions of the train (80%) and test (20%) examples.

    ``sklearn.model_selection.train_test_split(stratify=y, random_state=seed)``;
    the test set has ``ceil(test_size * n)`` examples and the class ratio of ``y``.
    """
    y = binary(y)
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
    y = binary(y, f"the labels of {name}")
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
    require(frame, need, f"the frame of {name!r}")
    if frame[need].isna().any().any():
        bad = [c for c in need if frame[c].isna().any()]
        raise PredictingError(f"the frame of {name!r} has NaN in column(s) {bad}")
    y = binary(frame[label].to_numpy(), f"{name!r} column {label!r}")
    tasks = frame[task].to_numpy() if split == "task" else None
    groups = frame[group].to_numpy() if split == "group" else None
    check_splittable(y, split, task=tasks, groups=groups, k=k, seed=seed, name=name)
    y, s, tasks = _held_out(frame, cols, y, split, seed, tasks, groups, k)
    return per_task_auc(y, s, tasks) if split == "task" else auc(y, s)


def _held_out(frame, cols, y, split, seed, tasks, groups, k):
    rng = np.random.default_rng(seed)
    X = None if cols is None else frame[list(cols)].to_numpy(float)
    if split == "random":
        train, test = random_split(y, seed)
        s = random_scores(len(test), rng) if X is None else fit_score(X[train], y[train], X[test])
        return y[test], s, None
    folds = task_splits(tasks) if split == "task" else group_kfold(groups, k)
    s = random_scores(len(y), rng) if X is None else out_of_fold(X, y, folds)
    return y, s, tasks


def held_out_scores(frame: pd.DataFrame, feature_set, seed: int = 0, *, label: str = "extract",
                    group: str = "seq_id", hardness: str = "full", k: int = PAPER_K,
                    name: str = "frame") -> tuple[np.ndarray, np.ndarray]:
    """The labels and pooled out-of-fold scores behind :func:`evaluate`'s group split:
    ``auc(*held_out_scores(...))`` is ``evaluate(..., "group", ...)``. Two feature sets scored
    this way rank the same examples, so their AUCs can be compared paired
    (:func:`analysis.stats.auc.auc_diff_test`)."""
    cols = feature_columns(feature_set, hardness)
    need = [label, *(cols or ()), group]
    require(frame, need, f"the frame of {name!r}")
    if frame[need].isna().any().any():
        raise PredictingError(f"the frame of {name!r} has NaN in column(s) "
                              f"{[c for c in need if frame[c].isna().any()]}")
    y = binary(frame[label].to_numpy(), f"{name!r} column {label!r}")
    groups = frame[group].to_numpy()
    check_splittable(y, "group", groups=groups, k=k, seed=seed, name=name)
    y, s, _ = _held_out(frame, cols, y, "group", seed, None, groups, k)
    return y, s


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
    except (PredictingError, StatsError) as err:
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
    y = binary(frame[label].to_numpy(), f"{name!r} column {label!r}")
    check_splittable(y, "random", seed=random_state, name=name)
    _, test = random_split(y, random_state)
    return auc(y[test], random_scores(len(test), np.random.default_rng(seed)))


def _null_sd(n_pos: int, n_neg: int) -> float:
    """The AUC's standard deviation under the null (scores independent of the label)."""
    if n_pos < 1 or n_neg < 1:
        raise PredictingError(
            f"the chance band needs both classes, got {n_pos} positives and {n_neg} negatives"
        )
    return float(np.sqrt((n_pos + n_neg + 1) / (12 * n_pos * n_neg)))


def chance_band(n_pos: int, n_neg: int, level: float = CHANCE_LEVEL) -> float:
    """Half-width of the interval around 0.5 inside which an AUC is not told from chance.

    Under the null (scores independent of the label) the AUC, a Mann–Whitney
    statistic over ``n_pos * n_neg`` pairs, has variance
    ``(n_pos + n_neg + 1) / (12 n_pos n_neg)``; the half-width is ``z`` times its
    square root, ``z`` the normal quantile of the two-sided ``level``.
    """
    sd = _null_sd(n_pos, n_neg)
    z = float(norm.ppf(0.5 + level / 2))
    return z * sd


def chance_p(value: float, n_pos: int, n_neg: int) -> float:
    """Two-sided p-value of an AUC of ``value`` against 0.5 on ``n_pos`` positives and
    ``n_neg`` negatives, by the normal approximation of :func:`chance_band` (the AUC's
    null standard deviation ``sqrt((n_pos + n_neg + 1) / (12 n_pos n_neg))``): below
    ``1 - level`` exactly when the AUC lies outside the chance band of that level. The p-value
    says nothing of the side: an AUC below 0.5 with a small p is evidence against a source that
    found it above, which :func:`analysis.core.claims.directional` decides."""
    return float(2 * norm.sf(abs(float(value) - 0.5) / _null_sd(n_pos, n_neg)))


def exp1_columns(frames, split: str, seeds, cell, subsample, names=None) -> dict:
    """Experiment 1's table per target, by name (``names`` maps a target to its label):
    ``cell(make_frame, split, baselines, seeds, name=target)`` (:func:`auc_rows`, or its
    interval counterpart) on ``subsample(frame, seed)`` of each target, with the
    cross-model and the random baseline, as in the source's tables."""
    names = dict(names or {})
    seeds = list(seeds)
    return {names.get(t, t): cell(lambda s, f=f: subsample(f, s), split,
                                  ["cross-model baseline", "random baseline"], seeds, name=t)
            for t, f in frames.items()}


def exp2_columns(pairs, levels, seeds, cell) -> dict:
    """Experiment 2's columns per pool, ``{pool: {"copies_<c>": table, ..., "pooled": table}}``:
    ``cell(make_frame, "group", baselines, seeds, name=...)`` (:func:`auc_rows`, or its
    interval counterpart) on every copy level of ``levels`` and on the pool's pairs pooled,
    with the window-end and random baselines."""
    seeds = list(seeds)
    base = ["window-end baseline", "random baseline"]
    out = {}
    for p, by_seed in pairs.items():
        cols = {f"copies_{c}": cell(lambda s, c=c, b=by_seed: b[s][b[s]["copies"] == c], "group", base, seeds,
                                    name=f"{p}/{c} copies")
                for c in levels}
        cols["pooled"] = cell(lambda s, b=by_seed: b[s], "group", base, seeds, name=f"{p}/pooled")
        out[p] = cols
    return out

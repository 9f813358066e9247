"""The source's dataset-inference baseline (its Appendix E.2, Table 7): Maini et al.
(2024), "LLM Dataset Inference: Did you train on my dataset?".

Their procedure, as their reference implementation runs it (its default options):
each membership attack's values are clipped within each set (the lowest and highest
``MAINI_CLIP / 2`` of them set to the last value kept) and standardized with the
training data's mean and standard deviation; a linear model (logistic regression)
learns weights that aggregate the attacks into one score, from data whose
membership is known; then a one-sided t-test asks whether the suspect set's
aggregated scores are higher (more member-like) than those of held-out validation
data, known non-members, and the suspect set is called training data at
``p < MAINI_ALPHA``.

Here, per model, the known training data are the reference set's pairs (the same
set that fixes the intercept rule's τ) and the validation data a known non-member
set (:func:`validation_set`), split in halves: one half to fit the weights, the
other for the t-test. Every other candidate set is a suspect, tested on all its
scored pairs, the same pairs the intercept rule uses. The features are the
chapter's four attacks (:data:`~analysis.entropy.mia.ATTACKS`); Maini et al. use
up to 52 (perturbation-based among them), the source 16.

How this differs from the chapter's mean-loss rule
(:func:`~analysis.entropy.method_di.loss_rule`): that rule uses one attack, needs
no non-member data and calls a set a member when its mean loss is below a
threshold from the reference set's bootstrap; this one learns weights for several
attacks and needs known non-members from the suspects' distribution, and its call
is a significance test against them, not a threshold. Pure functions: no model,
no English.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import ttest_ind
from sklearn.linear_model import LogisticRegression

from analysis.entropy.method_sets import Inference
from analysis.entropy.mia import ATTACKS
from analysis.entropy.params import MAINI_ALPHA, MAINI_CLIP, MAINI_MIN_PAIRS, EntropyError


def clip_outliers(values, frac: float = MAINI_CLIP) -> np.ndarray:
    """Maini et al.'s "clip": the ``int(n · frac / 2)`` lowest values set to the
    highest of them and the as many highest to the lowest of those, so the ends no
    longer pull the mean (unchanged when that count is 0)."""
    if not 0 <= frac < 1:
        raise EntropyError(f"frac must be in [0, 1), got {frac!r}")
    x = np.asarray(values, dtype=float).copy()
    k = int(len(x) * frac / 2)
    if k == 0:
        return x
    order = np.argsort(x, kind="stable")
    low, high = order[:k], order[-k:]
    x[low], x[high] = x[low[-1]], x[high[0]]
    return x


def _features(frame: pd.DataFrame, features: Sequence[str], what: str) -> np.ndarray:
    missing = [f for f in features if f not in frame]
    if missing:
        raise EntropyError(f"the {what} set lacks the attack columns {missing}")
    x = frame[list(features)].to_numpy(float)
    if not np.isfinite(x).all():
        raise EntropyError(f"the {what} set has a missing or infinite attack value")
    return x


def _clipped(x: np.ndarray, frac: float) -> np.ndarray:
    return np.column_stack([clip_outliers(x[:, j], frac) for j in range(x.shape[1])])


def maini_test(train: pd.DataFrame, validation: pd.DataFrame, suspect: pd.DataFrame,
               features: Sequence[str] = ATTACKS, alpha: float = MAINI_ALPHA, clip: float = MAINI_CLIP,
               seed: int = 0) -> dict:
    """Maini et al.'s dataset inference of one suspect set.

    ``train`` (known members) and ``validation`` (known non-members) hold one row
    per pair with the attack columns ``features``; the validation rows are split at
    random (``seed``) into halves, the first fitting the weights with ``train``, the
    second being the t-test's comparison. Returns ``t``, ``p`` (one-sided Student's
    t-test: the suspect's aggregated scores higher than the validation half's),
    ``prediction`` (1 when ``p < alpha``), ``weights`` (per feature, on the
    standardized scale) and the pairs each part holds. :class:`EntropyError` for a
    set with fewer than ``MAINI_MIN_PAIRS`` pairs, a missing attack column or a
    non-finite value, or ``alpha`` outside (0, 1).
    """
    if not 0 < alpha < 1:
        raise EntropyError(f"alpha must be in (0, 1), got {alpha!r}")
    if not features:
        raise EntropyError("features must name at least one attack")
    for what, frame in (("train", train), ("validation", validation), ("suspect", suspect)):
        if len(frame) < MAINI_MIN_PAIRS:
            raise EntropyError(f"the {what} set has {len(frame)} pairs; the test needs at least "
                               f"{MAINI_MIN_PAIRS}")
    t_x = _clipped(_features(train, features, "train"), clip)
    v_x = _clipped(_features(validation, features, "validation"), clip)
    s_x = _clipped(_features(suspect, features, "suspect"), clip)
    mean, std = t_x.mean(axis=0), t_x.std(axis=0)
    std = np.where(std > 0, std, 1.0)  # a constant attack: centred, not scaled

    def scale(x):
        return (x - mean) / std

    order = np.random.default_rng(seed).permutation(len(v_x))
    fit_idx, test_idx = order[: len(v_x) // 2], order[len(v_x) // 2:]
    x = np.vstack([scale(t_x), scale(v_x[fit_idx])])
    y = np.r_[np.ones(len(t_x)), np.zeros(len(fit_idx))]
    model = LogisticRegression(max_iter=1000).fit(x, y)
    s_scores = model.decision_function(scale(s_x))
    v_scores = model.decision_function(scale(v_x[test_idx]))
    res = ttest_ind(s_scores, v_scores, alternative="greater")
    t, p = float(res.statistic), float(res.pvalue)
    if not np.isfinite(p):  # every aggregated score equal: no evidence either way
        t, p = 0.0, 1.0
    return {"t": t, "p": p, "prediction": int(p < alpha),
            "weights": dict(zip(features, map(float, model.coef_[0]))), "train pairs": len(t_x),
            "fit pairs": len(fit_idx), "validation pairs": len(test_idx), "suspect pairs": len(s_x)}


def validation_set(inf: Inference) -> str:
    """The known non-member set Maini et al.'s rule takes as its validation data: the
    first candidate set of the model whose truth is 0 (the lab's first held-out
    popular-text windows; the real models' 2024–26 stories)."""
    t = inf.table
    rows = t[(t["role"] == "candidate") & (t["truth"] == 0) & t["set"].isin(list(inf.attacks))]
    if rows.empty:
        raise EntropyError(f"model {inf.model!r}: no scored non-member set to serve as validation data")
    return str(rows["set"].iloc[0])


def maini_rule(inferences: Sequence[Inference], features: Sequence[str] = ATTACKS,
               alpha: float = MAINI_ALPHA, seed: int = 0) -> pd.DataFrame:
    """:func:`maini_test` on every candidate set of every model, with the reference
    set as the known training data and :func:`validation_set` as the validation
    data. One row per set: ``model, kind, set, role`` (``reference``,
    ``validation`` or ``candidate``), ``truth, pairs, t, p, prediction, correct``; the
    reference and the validation set are not decided (NaN), nor is a set where one of
    the three holds fewer than ``MAINI_MIN_PAIRS`` pairs."""
    rows = []
    for inf in inferences:
        if not inf.attacks:
            raise EntropyError(f"model {inf.model!r}: no pair of its sets was scored by the attacks")
        table = inf.table.set_index("set")
        ref = table.index[table["role"] == "reference"][0]
        val = validation_set(inf)
        for label in table.index:
            role = "validation" if label == val else table.loc[label, "role"]
            row = {"model": inf.model, "kind": table.loc[label, "kind"], "set": label, "role": role,
                   "truth": int(table.loc[label, "truth"]),
                   "pairs": len(inf.attacks[label]) if label in inf.attacks else 0,
                   "t": np.nan, "p": np.nan, "prediction": np.nan, "correct": np.nan}
            if role == "candidate" and label in inf.attacks:
                try:
                    out = maini_test(inf.attacks[ref], inf.attacks[val], inf.attacks[label], features, alpha,
                                     seed=seed)
                except EntropyError:  # too few pairs in one of the sets: no call, counted as a miss
                    rows.append(row)
                    continue
                row.update(t=out["t"], p=out["p"], prediction=float(out["prediction"]),
                           correct=float(out["prediction"] == row["truth"]))
            rows.append(row)
    return pd.DataFrame(rows)


def three_rules(di: pd.DataFrame, losses: pd.DataFrame, maini: pd.DataFrame) -> pd.DataFrame:
    """The intercept rule, the mean-loss rule and Maini et al.'s on the candidate sets
    Maini et al.'s rule decides (every candidate but the validation set): ``model,
    kind, set, truth`` and each rule's call and whether it is right (an undecided
    intercept call is a miss), with Maini's p."""
    m = maini[maini["role"] == "candidate"][["model", "kind", "set", "truth", "p", "prediction", "correct"]]
    m = m.rename(columns={"prediction": "Maini call", "correct": "Maini right", "p": "Maini p"})
    d = di[["model", "set", "prediction", "correct"]].rename(
        columns={"prediction": "intercept call", "correct": "intercept right"})
    lo = losses[["model", "set", "prediction", "correct"]].rename(
        columns={"prediction": "mean-loss call", "correct": "mean-loss right"})
    out = m.merge(d, on=["model", "set"], how="left").merge(lo, on=["model", "set"], how="left")
    out["intercept right"] = out["intercept right"].fillna(0.0)
    return out[["model", "kind", "set", "truth", "intercept call", "mean-loss call", "Maini call", "Maini p",
                "intercept right", "mean-loss right", "Maini right"]]


def rule_tally(rules: pd.DataFrame, kind: str | None = None) -> dict[str, tuple[int, int]]:
    """Each rule's right calls of the sets of :func:`three_rules` (of ``kind``, or
    all): ``{"intercept": (k, n), "mean loss": (k, n), "Maini": (k, n)}``."""
    r = rules if kind is None else rules[rules["kind"] == kind]
    n = len(r)
    return {"intercept": (int(r["intercept right"].sum()), n),
            "mean loss": (int(r["mean-loss right"].sum()), n), "Maini": (int(r["Maini right"].sum()), n)}

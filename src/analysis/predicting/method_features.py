"""The source's label, features and baselines: pure functions of token results and exposure tables.

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
* **Baselines**: uniform random scores (:func:`random_scores`), the
  cross-model percentile rank of the suffix NLL (:func:`cross_model_scores`,
  Experiments 1 and 3) and the end of the insertion window
  (:func:`window_end_baseline`, Experiment 2).

Where the source leaves a choice open:

* **Copies.** The exposure count is the frame's ``copies`` column, or else
  ``copies_seen`` (:func:`analysis.predicting.checks.exposure_copies`). A
  sequence is never inserted when it has 0 copies or no last step (NaN or the
  lab's ``-1``).
* **Percentile ranks** (cross-model baseline). Ranks are taken among the rows
  of the frame passed in, ties sharing their average rank, and divided by the
  number of ranked rows: the lowest suffix NLL scores 1, the highest ``1/n``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analysis.lab.config import WINDOWS
from analysis.predicting.checks import PredictingError, check_T, exposure_copies, require
from analysis.predicting.params import MAX_PREFIX, MAX_SUFFIX


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
    T = check_T(T)
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
    require(nll_table, ("seq_id", "model", "nll", "nll_suffix"), "nll_table")
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
    T = check_T(T)
    require(exposure, ("seq_id", "task", "last_step"), "the exposure frame")
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


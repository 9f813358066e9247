"""Scoring the injected sequences under the lab's runs, and each target's frame of examples.

:func:`sequence_scores` and :func:`score_runs` query models through the book's
model interface (:meth:`analysis.models.Model.score_ids`, batched and cached);
the rest joins their scores with the lab's exposure tables: the label, the
features and the baselines of every sequence under each target
(:func:`target_frame`, :func:`target_frames`, :func:`range_labels`). The lab's
runs play the source's models; :func:`counterfactual` finds a target's standard
twin, left out of its hardness.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.predicting.checks import PredictingError, check_targets, require
from analysis.predicting.method_features import (
    cross_model_scores,
    extract_label,
    features,
    split_point,
    window_end_baseline,
)


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


def counterfactual(runs: pd.DataFrame, target: str) -> str:
    """The target's counterfactual: the standard run with the same model shape and token budget.

    ``runs`` is the lab's run table (:meth:`analysis.lab.ladder.LabProfile.table`):
    ``run, family, n_layer, d_model, n_head, d_ff, context, tokens``. The
    perturbed runs and their standard twins share model, budget and seed, hence
    the base data order; an injection-range run's twin is the standard run of
    its size and budget.
    """
    require(runs, ("run", "family", "n_layer", "d_model", "tokens"), "the run table")
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
    require(scores, ("run", "seq_id", "nll", "nll_suffix", "extract", "suffix_acc"), "the scores")
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


def injected_sequences(injection_table: pd.DataFrame, tokenizer) -> dict[str, list[int]]:
    """``seq_id`` → token ids of every injected sequence of the lab's corpus, as the runs were trained on it.

    ``injection_table`` is :meth:`analysis.lab.corpus.Corpus.injection_table`
    (``seq_id, text``); ``tokenizer`` the lab's tokenizer (called without special tokens).
    """
    require(injection_table, ("seq_id", "text"), "the injection table")
    ids = tokenizer(list(injection_table["text"]), add_special_tokens=False)["input_ids"]
    return dict(zip(injection_table["seq_id"], ids))


def sequence_lengths(sequences: Mapping[str, Sequence[int]]) -> pd.DataFrame:
    """Length ``n_tokens`` and the label's cut ``P``, ``L`` (:func:`split_point`) of every sequence."""
    rows = [
        dict(seq_id=k, n_tokens=len(v), **dict(zip(("P", "L"), split_point(len(v)))))
        for k, v in sequences.items()
    ]
    return pd.DataFrame(rows, columns=["seq_id", "n_tokens", "P", "L"])


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
    require(run_table, ("run", "family", "inject"), "the run table")
    injected = run_table.loc[run_table["inject"].astype(bool), "run"].tolist()
    standard = run_table.loc[run_table["family"] == "standard", "run"].tolist()
    return {
        t: target_frame(t, scores, exposures, standard, counterfactual(run_table, t), injected)
        for t in targets
    }


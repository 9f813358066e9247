"""Membership inference beside the source's intercept rule: the standard attacks, as
pure functions of a sequence's token scores (beyond the source).

Each attack maps a candidate sequence to a *membership score*, higher meaning "more
likely trained on" (:data:`ATTACKS` names them):

* ``loss``: minus the mean token negative log-likelihood (Yeom et al. 2018);
* ``zlib``: minus the ratio of that loss to the zlib-compressed length of the
  text in bytes (Carlini et al. 2021);
* ``mink``: Min-K% Prob, the mean of the k% lowest token log-probabilities
  (Shi et al. 2024);
* ``minkpp``: Min-K%++, the same mean over the per-token scores
  ``(log p(x_t) − μ_t) / σ_t``, with ``μ_t`` and ``σ_t`` the mean and standard
  deviation of log p(z) under the model's next-token distribution p(· | x_<t)
  (Zhang et al. 2024; the model layer's ``score_ids_stats`` gives both).

"The k% lowest" keeps ``int(k · n)`` of ``n`` tokens, as the authors' code does,
but never fewer than one. ``text_zlib`` is a control that never sees the model:
minus the zlib ratio of the text itself. Where membership is randomized it
cannot tell members apart; where it does, the two groups differ as texts.

The intercept rule is per set, so it has no per-sequence score:
:func:`set_panel` ranks the sets of each model by it, beside the sets' mean
attack scores. :func:`panel_table` gives each attack's AUC and TPR at a
false-positive rate of at most 1% (with under 100 non-members, the TPR at zero
false positives), overall and per copy level (or per set). Nothing here touches a model or prints.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.entropy.method import bootstrap_p
from analysis.entropy.params import EntropyError
from analysis.stats.lines import percentile_interval
from analysis.stats.mia import LOW_FPR, attack_metrics, grouped_auc
from analysis.stats.result import StatsError

#: the share of tokens Min-K% and Min-K%++ average (the 20% of the brief and Min-K%++'s default)
MINK_SHARE = 0.2
#: the attacks, in the order the chapter shows them
ATTACKS = ("loss", "zlib", "mink", "minkpp")
#: the model-free control: minus the zlib ratio of the text alone
BLIND = "text_zlib"


def _lowest_mean(values, k: float) -> float:
    values = np.sort(np.asarray(values, dtype=float))
    if values.size == 0:
        raise EntropyError("a sequence needs at least one scored token")
    if not 0 < k <= 1:
        raise EntropyError(f"k must be in (0, 1], got {k!r}")
    return float(values[: max(1, int(k * values.size))].mean())


def loss(logprobs) -> float:
    """Mean token negative log-likelihood (nats)."""
    lp = np.asarray(logprobs, dtype=float)
    if lp.size == 0:
        raise EntropyError("a sequence needs at least one scored token")
    return float(-lp.mean())


def zlib_bytes(text: str) -> int:
    """Length of the zlib-compressed UTF-8 text in bytes (default level)."""
    raw = text.encode("utf-8")
    if not raw:
        raise EntropyError("cannot compress an empty text")
    return len(zlib.compress(raw))


def zlib_ratio(logprobs, text: str) -> float:
    """The loss over the zlib-compressed length of the text."""
    return loss(logprobs) / zlib_bytes(text)


def min_k(logprobs, k: float = MINK_SHARE) -> float:
    """Min-K% Prob: the mean of the k% lowest token log-probabilities."""
    return _lowest_mean(logprobs, k)


def min_k_plus_plus(logprobs, mu, sigma, k: float = MINK_SHARE) -> float:
    """Min-K%++: the mean of the k% lowest ``(log p(x_t) − μ_t) / σ_t``. A token whose
    next-token distribution has σ_t = 0 (all its mass on one token) scores 0."""
    lp, mu, sigma = (np.asarray(a, dtype=float) for a in (logprobs, mu, sigma))
    if not lp.shape == mu.shape == sigma.shape:
        raise EntropyError(f"logprobs, mu and sigma differ in length: {lp.size}, {mu.size}, {sigma.size}")
    z = np.divide(lp - mu, sigma, out=np.zeros_like(lp), where=sigma > 0)
    return _lowest_mean(z, k)


def membership_scores(scores: Mapping, text: str, k: float = MINK_SHARE) -> dict[str, float]:
    """Every attack's membership score (higher = member) of one sequence, from its
    ``score_ids_stats`` answer (``logprobs``, ``mu``, ``sigma``) and its text."""
    lp = scores["logprobs"]
    return {"loss": -loss(lp), "zlib": -zlib_ratio(lp, text), "mink": min_k(lp, k),
            "minkpp": min_k_plus_plus(lp, scores["mu"], scores["sigma"], k)}


def attack_table(scores: Sequence[Mapping], texts: Sequence[str], k: float = MINK_SHARE) -> pd.DataFrame:
    """One row per sequence, one column per attack (:data:`ATTACKS`), plus its mean
    token loss in nats (``nll``)."""
    if len(scores) != len(texts):
        raise EntropyError(f"scores and texts differ in length: {len(scores)} and {len(texts)}")
    rows = [{**membership_scores(s, t, k), BLIND: -zlib_bytes(t) / len(t.encode("utf-8")),
             "nll": loss(s["logprobs"])} for s, t in zip(scores, texts)]
    return pd.DataFrame(rows, columns=[*ATTACKS, BLIND, "nll"])


def _metrics_row(sub: pd.DataFrame, attack: str, n_boot: int, seed: int, fpr: float) -> dict:
    y = sub["member"].to_numpy(int)
    row = {"members": int(y.sum()), "non-members": int(len(y) - y.sum())}
    try:
        m = attack_metrics(y, sub[attack].to_numpy(float), n_boot=n_boot, seed=seed, fpr=fpr)
    except StatsError:  # one class only: no AUC
        return {**row, "auc": np.nan, "auc lo": np.nan, "auc hi": np.nan, "p": np.nan, "tpr": np.nan,
                "tpr lo": np.nan, "tpr hi": np.nan}
    a, t = m["auc"], m["tpr"]
    return {**row, "auc": a.value, "auc lo": a.lo, "auc hi": a.hi, "p": a.p, "tpr": t.value, "tpr lo": t.lo,
            "tpr hi": t.hi}


def panel_table(frame: pd.DataFrame, by: str, attacks: Sequence[str] = ATTACKS, n_boot: int = 1000,
                seed: int = 0, fpr: float = LOW_FPR) -> pd.DataFrame:
    """Each attack's AUC and TPR at ``fpr`` with stratified bootstrap intervals
    (:func:`analysis.stats.mia.attack_metrics`): over every candidate (scope
    ``"all"``), then for the members of each value of ``by`` (a copy level, a set)
    against every non-member. ``frame`` has ``member`` (0/1), ``by`` and the attack
    columns. A scope with one class only has NaN metrics."""
    members = frame[frame["member"] == 1]
    scopes = [("all", frame)] + [(v, pd.concat([members[members[by] == v], frame[frame["member"] == 0]]))
                                 for v in sorted(members[by].unique(), key=lambda v: (str(type(v)), v))]
    rows = [{"scope": str(scope), "attack": attack, **_metrics_row(sub, attack, n_boot, seed, fpr)}
            for scope, sub in scopes for attack in attacks]
    return pd.DataFrame(rows)


def _set_draws(inferences, attack: str, n_boot: int, seed: int) -> list[tuple]:
    """(group, truth, point, draws) of every set with a value: the intercept with
    its re-centred bootstrap, or the mean of an attack's score over the set's pairs
    with a bootstrap of that mean."""
    rng = np.random.default_rng(seed)
    out = []
    for inf in inferences:
        truth = inf.table.set_index("set")["truth"]
        for label, res in inf.results.items():
            if attack == "intercept":
                boot = res.centred("intercept")
                if res.fit is None or not len(boot):
                    continue
                draws = boot[np.arange(n_boot) % len(boot)]
                out.append((inf.model, int(truth[label]), res.fit.intercept, draws))
            elif label in inf.attacks:
                v = inf.attacks[label][attack].to_numpy(float)
                out.append((inf.model, int(truth[label]), float(v.mean()),
                            v[rng.integers(0, len(v), (n_boot, len(v)))].mean(axis=1)))
    return out


def set_panel(inferences, attacks: Sequence[str] = ("intercept", *ATTACKS), n_boot: int = 1000,
              seed: int = 0) -> pd.DataFrame:
    """Each statistic's AUC over sets: how often a member set of a model outranks a
    non-member set of the same model (:func:`analysis.stats.mia.grouped_auc`: the
    intercept, higher meaning member, or a set's mean attack score), with the 95%
    percentile interval of the same AUC over ``n_boot`` draws of every set's value
    from its bootstrap, and ``p``, the two-sided percentile-bootstrap p of 0.5 over
    those draws. One row per statistic: ``sets``, ``pairs`` of sets compared,
    ``auc``, ``auc lo``, ``auc hi``, ``p``; NaN where no model has both kinds of set."""
    rows = []
    for attack in attacks:
        draws = _set_draws(inferences, attack, n_boot, seed)
        groups = [d[0] for d in draws]
        y = [d[1] for d in draws]
        try:
            est = grouped_auc(y, [d[2] for d in draws], groups)
        except StatsError:
            rows.append({"attack": attack, "sets": len(draws), "pairs": 0, "auc": np.nan, "auc lo": np.nan,
                         "auc hi": np.nan, "p": np.nan})
            continue
        boot = [grouped_auc(y, [d[3][b] for d in draws], groups).value for b in range(n_boot)]
        lo, hi = percentile_interval(boot)
        rows.append({"attack": attack, "sets": len(draws), "pairs": est.n, "auc": est.value, "auc lo": lo,
                     "auc hi": hi, "p": bootstrap_p(boot, 0.5)})
    return pd.DataFrame(rows)


def inference_panel(inferences, attacks: Sequence[str] = (*ATTACKS, BLIND), n_boot: int = 1000,
                    seed: int = 0) -> pd.DataFrame:
    """:func:`panel_table` of each model's dataset-inference pairs scored by the
    attacks (``Inference.attacks``; members are the pairs of its member sets), by
    set, with a ``model`` column; empty without scored pairs."""
    frames = [panel_table(pd.concat(list(i.attacks.values()), ignore_index=True), "set", attacks, n_boot,
                          seed).assign(model=i.model) for i in inferences if i.attacks]
    if not frames:
        return pd.DataFrame(columns=["model", "scope", "attack", "auc"])
    return pd.concat(frames, ignore_index=True)

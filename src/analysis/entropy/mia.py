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
but never fewer than one. The intercept rule is per set, so it has no
per-sequence score: :mod:`analysis.stats.mia` ranks sets by it. Nothing here
touches a model or prints.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.entropy.params import EntropyError

#: the share of tokens Min-K% and Min-K%++ average (the 20% of the brief and Min-K%++'s default)
MINK_SHARE = 0.2
#: the attacks, in the order the chapter shows them
ATTACKS = ("loss", "zlib", "mink", "minkpp")


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
    rows = [{**membership_scores(s, t, k), "nll": loss(s["logprobs"])} for s, t in zip(scores, texts)]
    return pd.DataFrame(rows, columns=[*ATTACKS, "nll"])

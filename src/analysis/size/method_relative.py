"""Relative size inference (Section 3.4 of the source) and its evaluation
(Sections 4.2.2 and 4.3).

Block scores :math:`s_j` per text of one model against another, the one-sided
blocked sign-permutation test of :math:`H_0: E[s_j]\\le 0`
(:func:`analysis.stats.permutation.sign_permutation_test`) for every ordered
pair, precision and recall of its decisions against the truth
:math:`|f| > (1+\\tau)|g|`, and the relative and best lower bounds.

Where the source leaves a choice open:

* **Block score.** Section 3.4 summarizes "the entries of D(f, g) within each
  block", D being the difference of the 2KL profiles, while its formula
  averages one unsuperscripted :math:`\\hat\\alpha` over the L lengths.
  ``kind="all"`` averages every entry of the block (raw and lifted, 2L
  values); ``"raw"`` and ``"lifted"`` take one half. Since
  :math:`\\hat\\alpha^{\\ell}=\\hat\\alpha^{r}-\\hat\\beta`, the three differ only by
  a shift common to every :math:`s_j`: 0, one half or all of the mean
  baseline gap :math:`L^{-1}\\sum_k(\\hat\\beta(f,l_k)-\\hat\\beta(g,l_k))`.
* **τ.** The test has no τ (Section 3.4); τ enters only the ground truth of the
  evaluation: *f is truly larger than g* iff :math:`|f| > (1+\\tau)|g|`
  (Section 4.2.2). A pair is *decided* "f larger" when the test's p-value is at
  most :math:`\\alpha_{sig}` (0.05).
* **Exactness.** The source enumerates all :math:`2^K` sign flips; the test
  counts them exactly up to ``exact_max_k`` (default 40, so the source's K = 37
  is exact), above it by a seeded Monte Carlo.

Pure functions: no printing, plotting or network access.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.core.cache import memoized
from analysis.size.params import KINDS, PAPER_ALPHA, SizeError
from analysis.stats.permutation import sign_permutation_test


def block_scores(profiles: pd.DataFrame, f: str, g: str, kind: str = "all") -> pd.Series:
    """Block scores :math:`s_j` of model ``f`` against model ``g``, one per text (Section 3.4).

    :math:`D(f,g) = A_{\\mathcal T,\\mathcal L}(f) - A_{\\mathcal T,\\mathcal L}(g)`;
    each source text :math:`T_j` is a block, and its entries are averaged:
    :math:`s_j = \\frac1L\\sum_{k=1}^{L}(\\hat\\alpha(f,T_j,l_k)-\\hat\\alpha(g,T_j,l_k))`.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Models x features (:func:`accuracy_profile`).
    f, g : str
        The compared model and the reference.
    kind : {"all", "raw", "lifted"}, default "all"
        Which accuracies :math:`\\hat\\alpha` of the block are averaged: every
        entry of :math:`D` in the block (raw and lifted, the block of the 2KL
        difference vector), or only the raw or only the lifted ones. The paper's
        formula writes :math:`\\hat\\alpha` without a superscript.

    Returns
    -------
    pandas.Series
        :math:`s_j` indexed by ``text_id``.
    """
    if kind not in KINDS:
        raise SizeError(f"kind must be one of {KINDS}, got {kind!r}")
    for name, m in (("f", f), ("g", g)):
        if m not in profiles.index:
            raise SizeError(f"{name}={m!r} is not a model of the profiles; models: {list(profiles.index)}")
    d = profiles.loc[f] - profiles.loc[g]
    if kind != "all":
        kinds = d.index.get_level_values("kind")
        if kind not in set(kinds):
            raise SizeError(f"kind={kind!r}: the profiles have no {kind!r} features")
        d = d[kinds == kind]
    if d.isna().any():
        raise SizeError(f"missing measurements in the profiles of {f!r} or {g!r}")
    s = d.groupby(level="text_id", sort=True).mean()
    s.name = "s"
    return s


# computed once per profiles and settings, then read from the artifact cache
@memoized("size-pairwise", code=("analysis.size.params", "analysis.stats.permutation"))
def pairwise_tests(
    profiles: pd.DataFrame,
    targets: Sequence[str] | None = None,
    references: Sequence[str] | None = None,
    kind: str = "all",
    alpha: float = PAPER_ALPHA,
    alternative: str = "greater",
    exact_max_k: int = 40,
    n_mc: int = 100_000,
    seed: int = 0,
) -> pd.DataFrame:
    """The relative size test for every ordered pair (target f, reference g), f != g.

    With all 19 dense models as both targets and references this is the
    paper's 342 ordered pairs (Section 4.2.2). ``significant`` is the decision
    "f is larger than g": p-value :math:`\\le\\alpha_{sig}`.

    Returns
    -------
    pandas.DataFrame
        ``f``, ``g``, ``k``, ``mean_s``, ``pvalue``, ``exact``, ``significant``.
    """
    targets = list(profiles.index) if targets is None else list(targets)
    references = list(profiles.index) if references is None else list(references)
    unknown = sorted((set(targets) | set(references)) - set(profiles.index))
    if unknown:
        raise SizeError(
            f"targets/references {unknown} are not models of the profiles: {list(profiles.index)}"
        )
    if not 0 < alpha < 1:
        raise SizeError(f"alpha must be in (0, 1), got {alpha!r}")
    rows = []
    for f in targets:
        for g in references:
            if f == g:
                continue
            s = block_scores(profiles, f, g, kind)
            res = sign_permutation_test(s.to_numpy(), alternative, exact_max_k, n_mc, seed)
            rows.append(dict(f=f, g=g, k=res.k, mean_s=res.statistic, pvalue=res.pvalue, exact=res.exact,
                             significant=res.pvalue <= alpha))
    return pd.DataFrame(rows, columns=["f", "g", "k", "mean_s", "pvalue", "exact", "significant"])


def truly_larger(theta_f, theta_g, tau: float):
    """Ground truth of the relative evaluation: :math:`|f| > (1+\\tau)|g|` (Section 4.2.2)."""
    if tau < 0:
        raise SizeError(f"tau must be non-negative, got {tau!r}")
    out = np.asarray(theta_f, dtype=float) > (1 + tau) * np.asarray(theta_g, dtype=float)
    return bool(out) if out.ndim == 0 else out


def decision_metrics(decisions, truth) -> dict:
    """Precision, recall and accuracy of binary decisions against the truth.

    precision = TP / (TP + FP) (NaN when nothing is decided positive),
    recall = TP / (TP + FN) (NaN when nothing is truly positive),
    accuracy = (TP + TN) / N.

    Returns
    -------
    dict
        ``precision``, ``recall``, ``accuracy``, ``tp``, ``fp``, ``fn``, ``tn``, ``n``.
    """
    d = np.asarray(decisions, dtype=bool).ravel()
    t = np.asarray(truth, dtype=bool).ravel()
    if d.shape != t.shape:
        raise SizeError(f"decisions and truth must have the same length, got {d.size} and {t.size}")
    if d.size == 0:
        raise SizeError("decisions must not be empty")
    tp = int(np.sum(d & t))
    fp = int(np.sum(d & ~t))
    fn = int(np.sum(~d & t))
    tn = int(np.sum(~d & ~t))
    return dict(
        precision=tp / (tp + fp) if tp + fp else float("nan"),
        recall=tp / (tp + fn) if tp + fn else float("nan"),
        accuracy=(tp + tn) / d.size,
        tp=tp, fp=fp, fn=fn, tn=tn, n=int(d.size),
    )


def tau_sweep(pair_tests: pd.DataFrame, theta, taus=None, alpha: float = PAPER_ALPHA) -> pd.DataFrame:
    """Precision, recall and accuracy of the relative test as functions of τ (Figure 3).

    The decision does not depend on τ (p-value :math:`\\le\\alpha`); the truth
    does: f is truly larger iff :math:`|f| > (1+\\tau)|g|`.

    Parameters
    ----------
    pair_tests : pandas.DataFrame
        From :func:`pairwise_tests` (columns ``f``, ``g``, ``pvalue``).
    theta : mapping or pandas.Series
        Known sizes of every model in the pairs.
    taus : array-like, optional
        Default 0.01, 0.02, ..., 0.70 (the paper's range).
    alpha : float, default 0.05

    Returns
    -------
    pandas.DataFrame
        ``tau``, ``precision``, ``recall``, ``accuracy``, ``tp``, ``fp``, ``fn``, ``tn``, ``n``.
    """
    taus = np.round(np.arange(1, 71) / 100, 2) if taus is None else np.asarray(taus, dtype=float)
    theta = pd.Series(theta, dtype=float) if not isinstance(theta, pd.Series) else theta.astype(float)
    missing = sorted((set(pair_tests["f"]) | set(pair_tests["g"])) - set(theta.index))
    if missing:
        raise SizeError(f"theta lacks the sizes of {missing}")
    decided = pair_tests["pvalue"].to_numpy() <= alpha
    tf = theta.reindex(pair_tests["f"]).to_numpy()
    tg = theta.reindex(pair_tests["g"]).to_numpy()
    rows = [dict(tau=float(tau), **decision_metrics(decided, truly_larger(tf, tg, float(tau))))
            for tau in taus]
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class RelativeBound:
    """The relative lower bound of a target: ``bound`` (size of the largest
    reference it beats significantly, NaN if none: the paper's "—"),
    ``reference`` (that model, or None) and ``n_beaten`` (references beaten)."""

    bound: float
    reference: str | None
    n_beaten: int


def relative_lower_bound(
    pair_tests: pd.DataFrame, f: str, theta, alpha: float = PAPER_ALPHA
) -> RelativeBound:
    """Rel. LB of model ``f`` (Section 4.3): the parameter count of the largest
    reference model over which ``f`` shows a significant advantage
    (:math:`p\\le\\alpha`). Under the lower-bound reading of Section 3.5,
    :math:`\\theta_{total}(f)\\ge|g|` for every such reference g.

    Parameters
    ----------
    pair_tests : pandas.DataFrame
        From :func:`pairwise_tests` with ``f`` among the targets.
    f : str
    theta : mapping or pandas.Series
        Sizes of the references.
    alpha : float, default 0.05
    """
    rows = pair_tests.loc[pair_tests["f"] == f]
    if rows.empty:
        raise SizeError(f"f={f!r} is not a target of pair_tests; targets: {sorted(set(pair_tests['f']))}")
    theta = pd.Series(theta, dtype=float) if not isinstance(theta, pd.Series) else theta.astype(float)
    missing = sorted(set(rows["g"]) - set(theta.index))
    if missing:
        raise SizeError(f"theta lacks the sizes of references {missing}")
    beaten = rows.loc[rows["pvalue"] <= alpha, "g"]
    if beaten.empty:
        return RelativeBound(bound=float("nan"), reference=None, n_beaten=0)
    sizes = theta.reindex(beaten).sort_values(ascending=False, kind="stable")
    best = sorted(m for m in sizes.index if sizes[m] == sizes.iloc[0])[0]
    return RelativeBound(bound=float(sizes.iloc[0]), reference=best, n_beaten=int(len(beaten)))


def best_bound(absolute: float, relative: float) -> tuple[float, str]:
    """Best LB = max(Abs. LB, Rel. LB) and its source ``"Abs"`` or ``"Rel"`` (Tables II, III).

    A missing bound (NaN/None, e.g. no reference beaten) is ignored; a tie goes
    to ``"Rel"`` (a size actually beaten). Both missing give ``(nan, "")``.
    """
    a = float("nan") if absolute is None else float(absolute)
    r = float("nan") if relative is None else float(relative)
    if np.isnan(a) and np.isnan(r):
        return float("nan"), ""
    if np.isnan(r) or (not np.isnan(a) and a > r):
        return a, "Abs"
    return r, "Rel"


def sweep_at(sweep: pd.DataFrame, tau: float) -> pd.Series:
    """The row of :func:`tau_sweep` whose τ is nearest ``tau`` (the first of a tie)."""
    if sweep.empty:
        raise SizeError("sweep has no rows")
    return sweep.iloc[(sweep["tau"] - tau).abs().argmin()]



def kind_sweep(pairs_by_kind: Mapping[str, pd.DataFrame], theta, tau: float,
               alpha: float = PAPER_ALPHA) -> pd.DataFrame:
    """The pairwise test's decisions against the truth at one τ for each block-score
    kind (``pairs_by_kind``: kind -> :func:`pairwise_tests` with that kind), by
    :func:`tau_sweep`: the source's formula on raw or on lifted accuracies, and the
    book's reading that averages both.

    Returns
    -------
    pandas.DataFrame
        ``kind`` and the columns of :func:`tau_sweep`, one row per kind.
    """
    rows = [{"kind": kind, **tau_sweep(pairs, theta, taus=[tau], alpha=alpha).iloc[0].to_dict()}
            for kind, pairs in pairs_by_kind.items()]
    return pd.DataFrame(rows)
